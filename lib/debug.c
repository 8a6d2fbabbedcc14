/* SPDX-License-Identifier: MIT */
/*
 * debug.c - the error hook, the graveyard of destroyed debug pools, and
 * the failure of an internal assertion (debug.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "debug.h"

static lfpool_error_fn error_hook;
static void *error_ctx;
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

LFPOOL_API void lfpool_set_error_hook(lfpool_error_fn fn, void *ctx)
{
	pthread_mutex_lock(&hook_lock);
	error_hook = fn;
	error_ctx = ctx;
	pthread_mutex_unlock(&hook_lock);
}

/* The hook, or the default: one line on stderr, then abort when fatal. */
static void report(const char *pool, const void *ptr, const char *problem, bool fatal)
{
	pthread_mutex_lock(&hook_lock);
	lfpool_error_fn fn = error_hook;
	void *ctx = error_ctx;
	pthread_mutex_unlock(&hook_lock);
	if (fn) {
		fn(pool, ptr, problem, ctx);
		return;
	}
	fprintf(stderr, "lfpool: pool '%s': %s (pointer %p)\n", pool, problem, ptr);
	if (fatal)
		abort();
}

void lfp_debug_report(const char *pool, const void *ptr, const char *problem)
{
	report(pool, ptr, problem, true);
}

void lfp_debug_report_leak(const char *pool, const void *ptr, const char *problem)
{
	report(pool, ptr, problem, false);
}


/* Dead debug pools, freed at exit (so LeakSanitizer sees no leak). */
struct grave {
	struct grave *next;
	void *pool;
	struct lfp_slabs *slabs;	/* kept, else NULL */
	const char *name;
};
static struct grave *graveyard;
static uint64_t grave_bytes;	/* slab bytes kept */
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;

/* Poison (or unpoison) every slab of s (ASan builds; nothing otherwise). */
static void poison_slabs(struct lfp_slabs *s, bool poison)
{
#ifdef LFP_ASAN
	for (uint32_t n = 0; n < s->high_water; n++) {
		if (!s->leaf[n >> LFP_LEAF_BITS])
			continue;
		char *mem = lfp_slabs_slot(s, n)->mem;
		if (!mem)
			continue;
		if (poison)
			ASAN_POISON_MEMORY_REGION(mem, s->slab_bytes);
		else
			ASAN_UNPOISON_MEMORY_REGION(mem, s->slab_bytes);
	}
#else
	(void)s;
	(void)poison;
#endif
}

/* Whether slabs s may be kept until exit (grave_lock held). */
static bool keep_slabs(const struct lfp_slabs *s)
{
	return s->alloc.alloc == lfp_system_allocator.alloc &&
	       grave_bytes + lfp_slabs_bytes(s) <= LFP_GRAVE_BYTES;
}

int lfp_debug_bury(void *pool, struct lfp_slabs *slabs, const char *name)
{
	struct grave *g = malloc(sizeof(*g));
	if (!g)
		return 0;	/* cannot keep it: lose only the after-destroy check */
	pthread_mutex_lock(&grave_lock);
	if (slabs && !keep_slabs(slabs))
		slabs = NULL;
	if (slabs) {
		grave_bytes += lfp_slabs_bytes(slabs);
		poison_slabs(slabs, true);
	}
	*g = (struct grave){ graveyard, pool, slabs, name };
	graveyard = g;
	pthread_mutex_unlock(&grave_lock);
	return slabs ? LFP_BURIED_WITH_SLABS : LFP_BURIED;
}

const char *lfp_debug_grave_name(const void *ptr)
{
	const char *name = NULL;
	uint32_t idx;
	pthread_mutex_lock(&grave_lock);
	for (struct grave *g = graveyard; g && !name; g = g->next)
		if (g->slabs && lfp_slabs_lookup(g->slabs, ptr, &idx) == LFP_LOOKUP_OK)
			name = g->name;
	pthread_mutex_unlock(&grave_lock);
	return name;
}

void lfp_debug_fork_lock(void)
{
	pthread_mutex_lock(&hook_lock);
	pthread_mutex_lock(&grave_lock);
}

void lfp_debug_fork_unlock(void)
{
	pthread_mutex_unlock(&grave_lock);
	pthread_mutex_unlock(&hook_lock);
}

__attribute__((destructor)) static void empty_graveyard(void)
{
	pthread_mutex_lock(&grave_lock);
	while (graveyard) {
		struct grave *g = graveyard;
		graveyard = g->next;
		if (g->slabs) {
			poison_slabs(g->slabs, false);
			lfp_slabs_fini(g->slabs);
		}
		free(g->pool);
		free(g);
	}
	pthread_mutex_unlock(&grave_lock);
}
