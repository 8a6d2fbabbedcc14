/* SPDX-License-Identifier: MIT */
/*
 * flavours.c - adapters for Pool and Concurrent, and the table of flavours.
 * Their handle is the pool itself: they have no per-thread caches.
 */
#include <errno.h>

#include "stress.h"
#include "census.h"

/* No per-thread caches: nothing held idle. */
static unsigned no_slack(const lfpool_config *cfg)
{
	(void)cfg;
	return 0;
}

static void *enter_pool(void *pool) { return pool; }

/* Nothing to give back: the handle is the pool. */
static void leave_pool(void *pool, void *h)
{
	(void)pool;
	(void)h;
}

static void flush_none(void *h) { (void)h; }

/* ---- Pool ---- */

static void *pool_create(const lfpool_config *cfg) { return lfpool_pool_create(cfg); }

/* Destroy; always 0 (only ThreadStatic can refuse). */
static int pool_destroy(void *pool)
{
	lfpool_pool_destroy(pool);
	return 0;
}

static void *pool_get(void *h) { return lfpool_pool_get(h); }
static void pool_put(void *h, void *obj) { lfpool_pool_put(h, obj); }

/* Pool has no bulk calls: all or none, as the others promise.  What the
 * pooled objects do not cover is made first by one prewarm, all or none:
 * gets that each made an object could fail at a later slab (a pool's
 * first slabs are small ones) with the first objects made. */
static int pool_get_bulk(void *h, void **objs, size_t n)
{
	lfpool_stats st;
	lfpool_pool_stats(h, &st);
	if (st.retained < n && lfpool_pool_prewarm(h, n - st.retained) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		objs[i] = lfpool_pool_get(h);
		if (!objs[i]) {
			int err = errno;
			while (i > 0)
				lfpool_pool_put(h, objs[--i]);
			errno = err;
			return -1;
		}
	}
	return 0;
}

static void pool_put_bulk(void *h, void *const *objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		lfpool_pool_put(h, objs[i]);
}

static int pool_prewarm(void *pool, size_t n) { return lfpool_pool_prewarm(pool, n); }
static size_t pool_trim(void *pool, size_t keep) { return lfpool_pool_trim(pool, keep); }
static int pool_owns(const void *pool, const void *p) { return lfpool_pool_owns(pool, p); }
static void pool_stats(const void *pool, lfpool_stats *st) { lfpool_pool_stats(pool, st); }

const struct flavour flavour_pool = {
	.name = "pool", .shared = false, .exit_flushes = false, .trim_keeps = true,
	.handle_is_pool = true, .cache_slack = no_slack,
	.create = pool_create, .destroy = pool_destroy, .enter = enter_pool, .leave = leave_pool,
	.get = pool_get, .put = pool_put, .get_bulk = pool_get_bulk, .put_bulk = pool_put_bulk,
	.flush = flush_none, .prewarm = pool_prewarm, .trim = pool_trim, .owns = pool_owns,
	.stats = pool_stats, .validate = STRESS_VALIDATE(validate_pool),
};

/* ---- Concurrent ---- */

static void *conc_create(const lfpool_config *cfg) { return lfpool_concurrent_create(cfg); }

/* Destroy; always 0 (only ThreadStatic can refuse). */
static int conc_destroy(void *pool)
{
	lfpool_concurrent_destroy(pool);
	return 0;
}

static void *conc_get(void *h) { return lfpool_concurrent_get(h); }
static void conc_put(void *h, void *obj) { lfpool_concurrent_put(h, obj); }

static int conc_get_bulk(void *h, void **objs, size_t n)
{
	return lfpool_concurrent_get_bulk(h, objs, n);
}

static void conc_put_bulk(void *h, void *const *objs, size_t n)
{
	lfpool_concurrent_put_bulk(h, objs, n);
}

static int conc_prewarm(void *pool, size_t n) { return lfpool_concurrent_prewarm(pool, n); }
static size_t conc_trim(void *pool, size_t keep) { return lfpool_concurrent_trim(pool, keep); }
static int conc_owns(const void *pool, const void *p) { return lfpool_concurrent_owns(pool, p); }
static void conc_stats(const void *pool, lfpool_stats *st) { lfpool_concurrent_stats(pool, st); }

const struct flavour flavour_concurrent = {
	.name = "concurrent", .shared = true, .exit_flushes = false, .trim_keeps = true,
	.handle_is_pool = true, .cache_slack = no_slack,
	.create = conc_create, .destroy = conc_destroy, .enter = enter_pool, .leave = leave_pool,
	.get = conc_get, .put = conc_put, .get_bulk = conc_get_bulk, .put_bulk = conc_put_bulk,
	.flush = flush_none, .prewarm = conc_prewarm, .trim = conc_trim, .owns = conc_owns,
	.stats = conc_stats, .validate = STRESS_VALIDATE(validate_concurrent),
};

const struct flavour *const all_flavours[] = {
	&flavour_pool, &flavour_concurrent, &flavour_ts, &flavour_ts_cache, &flavour_percpu,
	NULL,
};

#ifdef LFPOOL_DEBUG
int validate_pool(const void *pool, char *why, size_t n)
{
	return lfp_pool_validate(pool, why, n);
}

int validate_concurrent(const void *pool, char *why, size_t n)
{
	return lfp_concurrent_validate(pool, why, n);
}

int validate_ts(const void *pool, char *why, size_t n)
{
	return lfp_ts_validate(pool, why, n);
}
#endif
