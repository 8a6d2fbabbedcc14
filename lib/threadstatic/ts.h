/* SPDX-License-Identifier: MIT */
/*
 * ts.h - ThreadStatic internals shared by threadstatic.c (the pool),
 * cache.c (a cache's two magazines), tls.c (implicit per-thread caches) and
 * worker.c (worker-index slots).
 *
 * An object of the pool is in exactly one place: out with a user, in a
 * cache's loaded or previous magazine, in a full magazine of the depot, or
 * loose on the depot's object stack.  created counts them all.
 *
 * One process-wide mutex, lfp_ts_lock, guards the registry of live pools
 * (threadstatic.c: a slot per pool, so that whether a generation is alive
 * is one array read), every thread's table of caches (tls.c), each
 * pool's list of caches and its retired counters, and is held while a cache
 * is created or freed.  Only rare calls take it (cache creation and release,
 * thread exit, destroy, stats, trim); get and put never do.  It is taken
 * before any pool's slab lock, never after, and no user hook runs under it.
 */
#ifndef LFP_TS_H
#define LFP_TS_H

#include <pthread.h>

#include "core.h"
#include "depot.h"
#include "lfpool/threadstatic.h"

#define LFP_TS_DEAD UINT64_MAX		/* gen of a destroyed pool: matches nothing */
#define LFP_WORKER_CHUNK 64u		/* worker slots per chunk */
#define LFP_WORKER_CHUNKS (LFPOOL_TS_WORKERS_MAX / LFP_WORKER_CHUNK)

enum lfp_cache_kind { LFP_CACHE_IMPLICIT, LFP_CACHE_EXPLICIT, LFP_CACHE_WORKER };

/* What a cache counts; summed over caches by stats and trim. */
struct lfp_cache_counts {
	uint64_t gets, puts;
	uint64_t misses;		/* gets that found both magazines empty */
	uint64_t full_pops;		/* full magazines taken from the depot */
	uint64_t full_pushes;		/* full magazines given to the depot */
};

struct lfpool_cache {
	struct lfpool_cache_fast fast;	/* first: read by the inline fast path */
	uint32_t checked_count;		/* debug pools: objects in the loaded magazine */
	uint32_t loaded, prev;		/* magazine indices */
	void **prev_objs;
	bool prev_full;			/* the previous magazine is full, else empty */
	bool checked;			/* debug pool: every get and put is checked */
	uint8_t kind;			/* enum lfp_cache_kind */
	uint8_t releasing;		/* worker slots: a worker_release flushes it */
	/* Written by the cache's user with relaxed stores; stats reads them. */
	uint64_t misses, full_pops, full_pushes;
	lfpool_ts *pool;
	lfpool_cache *next, **pprev;	/* the pool's list, under lfp_ts_lock */
};
/* lfpool_cache_get and _put (threadstatic.h) read the cache as its fast
 * view. */
_Static_assert(offsetof(struct lfpool_cache, fast) == 0, "fast view first");

struct lfpool_ts {
	struct lfpool_ts_fast fast;	/* first: read by the inline fast paths */
	/* Unique in the process: the use count of the pool's registry slot
	 * << 32 | the slot; LFP_TS_DEAD once destroyed. */
	uint64_t gen;
	uint32_t magic;
	struct lfp_ts_percpu *percpu;	/* per-CPU mode (ts_percpu.h), else NULL */
	struct lfp_depot depot;
	uint64_t created __attribute__((aligned(64)));	/* objects alive */
	uint64_t uncached_puts;		/* puts of threads that could get no cache */
	struct lfp_core core;
	lfpool_cache **workers[LFP_WORKER_CHUNKS];	/* published with release */
	/* Under lfp_ts_lock: */
	lfpool_cache *caches;
	size_t explicit_caches;
	struct lfp_cache_counts retired;	/* of caches freed */
	struct lfp_cache_counts trimmed_at;	/* the sums at the previous trim */
};

extern pthread_mutex_t lfp_ts_lock;

/* Whether the pool of generation gen is alive, in O(1); caller holds
 * lfp_ts_lock. */
bool lfp_ts_live(uint64_t gen);
/* Create n objects as a chain in debug state `state`: 0 or ENOBUFS/ENOMEM. */
int lfp_ts_create_objects(lfpool_ts *p, size_t n, uint8_t state, uint32_t *chain);

/* A new cache of the pool with two empty magazines, or NULL; caller holds
 * lfp_ts_lock. */
lfpool_cache *lfp_cache_new(lfpool_ts *p, enum lfp_cache_kind kind);
/* Flush c, free it and its magazines; caller holds lfp_ts_lock. */
void lfp_cache_free(lfpool_cache *c);
/* Add c's counters to *sum (relaxed loads: c may be in use). */
void lfp_cache_count(const lfpool_cache *c, struct lfp_cache_counts *sum);

/* The calling thread's cache for p (alive), made on first use; NULL with
 * errno ENOMEM.  It becomes the thread's lfpool_ts_tls_ entry. */
lfpool_cache *lfp_tls_cache(lfpool_ts *p);
/* The calling thread's cache for p if it has one (made its lfpool_ts_tls_
 * entry), else NULL. */
lfpool_cache *lfp_tls_find(const lfpool_ts *p);
/* Free the calling thread's cache for p, if any. */
void lfp_tls_detach(lfpool_ts *p);
/* Destroy of p: drop the calling thread's entry for p, and clear every
 * thread's lfpool_ts_tls_ entry naming p; caller holds lfp_ts_lock. */
void lfp_tls_forget(const lfpool_ts *p);

/* Free the worker slot tables (destroy; the caches are freed with the
 * pool's list). */
void lfp_workers_fini(lfpool_ts *p);

#endif
