/* SPDX-License-Identifier: MIT */
/*
 * closure.c - closure pools: closures are plain objects of a flavour pool,
 * so every get and release is that flavour's (debug checks included).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "flavour_internal.h"
#include "census.h"
#include "lfpool/closure.h"

struct lfpool_closure_pool {
	struct lfpool_closure_pool_fast fast;	/* first: read by the inline calls */
	struct lfp_flavour pool;
	bool debug;
	uint32_t magic;
	char name[LFP_NAME_MAX];
};
/* The inline calls of lfpool/closure.h read the pool as its fast view. */
_Static_assert(offsetof(struct lfpool_closure_pool, fast) == 0, "fast view first");

LFPOOL_API lfpool_closure_pool *lfpool_closure_pool_create(lfpool_flavour flavour,
							   const lfpool_config *cfg)
{
	/* align: a power of two, as every pool's (0: 16); the closures are
	 * aligned to 16 whatever it is. */
	const char *name = cfg && cfg->name ? cfg->name : "closure";
	int err = 0;
	if (!cfg)
		err = lfp_debug_refuse(name, "no configuration (NULL)");
	else if (cfg->align & (cfg->align - 1))
		err = lfp_debug_refuse(name, "align %zu is not a power of two", cfg->align);
	else if (cfg->align > 16)
		err = lfp_debug_refuse(name, "align %zu is more than 16", cfg->align);
	else if (cfg->init || cfg->reset || cfg->fini)
		err = lfp_debug_refuse(name, "a closure pool takes no %s hook (its closures' own "
				       "functions clean up)", cfg->init ? "init" : cfg->reset ? "reset"
				       : "fini");
	else if (cfg->obj_size > SIZE_MAX - sizeof(lfpool_closure))
		err = lfp_debug_refuse(name, "obj_size %zu is more than %zu", cfg->obj_size,
				       SIZE_MAX - sizeof(lfpool_closure));
	if (err) {
		errno = err;
		return NULL;
	}
	lfpool_closure_pool *cp = calloc(1, sizeof(*cp));
	if (!cp) {
		errno = ENOMEM;
		return NULL;
	}
	cp->fast.capture_size = cfg->obj_size;
	cp->debug = lfp_debug_wanted(cfg->flags);
	cp->magic = LFP_MAGIC_LIVE;
	lfpool_config pc = *cfg;
	pc.obj_size = sizeof(lfpool_closure) + cfg->obj_size;
	pc.align = 16;
	snprintf(cp->name, sizeof(cp->name), "%s", cfg->name ? cfg->name : "closure");
	pc.name = cp->name;
	err = lfp_flavour_create(&cp->pool, flavour, &pc);
	if (err) {
		free(cp);
		errno = err;
		return NULL;
	}
	return cp;
}

LFPOOL_API int lfpool_closure_pool_destroy(lfpool_closure_pool *cp)
{
	if (!cp)
		return 0;
	if (lfp_dead(cp->name, &cp->magic, cp, "destroy of a closure pool already destroyed"))
		return -1;
	/* A debug pool stays readable, so its flavour reports a later release. */
	return lfp_flavour_destroy_layer(&cp->pool, cp, &cp->magic, cp->debug, cp->name);
}

LFPOOL_API lfpool_closure *lfpool_closure_get(lfpool_closure_pool *cp, lfpool_closure_fn fn,
					      const void *capture, size_t size)
{
	if (!lfpool_closure_fits(cp, fn, size))
		return NULL;
	lfpool_closure *c = lfp_flavour_get(&cp->pool);
	if (c)	/* arm's memcpy is ASan's in a user's ASan process (asan.h) */
		lfp_asan_unpoison(c, sizeof(*c) + cp->fast.capture_size);
	return lfpool_closure_arm(c, fn, capture, size);
}

LFPOOL_API void lfpool_closure_release(lfpool_closure_pool *cp, lfpool_closure *c)
{
	lfp_flavour_put(&cp->pool, c);
}

LFPOOL_API lfpool_ts *lfpool_closure_pool_ts(const lfpool_closure_pool *cp)
{
	if (lfp_dead(cp->name, &cp->magic, cp, "ThreadStatic pool of a closure pool after destroy"))
		return NULL;
	if (cp->pool.kind != LFPOOL_FLAVOUR_TS) {
		errno = EINVAL;
		return NULL;
	}
	return (lfpool_ts *)cp->pool.pool;
}

LFPOOL_API void lfpool_closure_pool_stats(const lfpool_closure_pool *cp, lfpool_stats *st)
{
	lfp_flavour_stats(&cp->pool, st);
}

#ifdef LFPOOL_DEBUG
int lfp_closure_validate(const lfpool_closure_pool *cp, char *why, size_t why_size)
{
	return lfp_flavour_validate(&cp->pool, why, why_size);
}
#endif
