/* SPDX-License-Identifier: MIT */
/*
 * ts_percpu.h - ThreadStatic's per-CPU mode (LFPOOL_F_PERCPU): the calls
 * that go through the calling thread's implicit cache in a per-thread pool
 * go through the area of the CPU it runs on (percpu.h) instead.
 *
 * Each CPU area holds up to 2 x magazine_size objects, the loaded and the
 * previous magazine of Bonwick's design in one array.  Its slow paths swap
 * whole magazines with the pool's depot, as a cache's do (cache.c):
 *   get, area empty: take a full magazine from the depot, hand out its top
 *        object, move the rest into the area and give the empty magazine
 *        back; else up to a magazine's worth of loose objects; else create
 *        one object.
 *   put, area full: take an empty magazine (or a spare within the census),
 *        fill it with the object and magazine_size - 1 objects off the area,
 *        and give it to the depot; else the depot is at its bound: the same
 *        objects go onto the loose stack as one chain.
 * A thread may migrate between any two steps: objects that no longer fit
 * the area it now runs on go onto the loose stack, so none is ever lost.
 * The areas are not magazines and are not in the census: the depot holds at
 * most depot_max magazines, and the explicit caches that may exist
 * alongside two each.
 *
 * Statistics cost the fast path nothing: an area counts its pushes and
 * pops, and the slow paths count, with one atomic add per magazine moved,
 * the area operations that were not a user's get or put and the gets and
 * puts that bypassed the areas.  Nothing is kept per thread.
 */
#ifndef LFP_TS_PERCPU_H
#define LFP_TS_PERCPU_H

#include "percpu.h"
#include "ts_internal.h"

/* The fast paths read a flag and pc.hot: one cache line. */
struct lfp_ts_percpu {
	bool fast_gets;		/* rseq, and gets need no check */
	bool fast_puts;		/* rseq, and puts need no check */
	bool check_gets;	/* slow pool (core.h): every get marks its object out */
	bool check_puts;	/* slow pool or reset hook: every put is accepted */
	struct lfp_percpu pc;
	lfpool_ts *pool;	/* the slow paths' */
	/* Added to by the slow paths (atomically), read by the statistics. */
	struct {
		uint64_t moved_in;	/* area pushes that were no user's put */
		uint64_t moved_out;	/* area pops that were no user's get */
		uint64_t gets, puts;	/* user gets and puts that bypassed the areas */
		uint64_t misses, full_pops, full_pushes;
	} n __attribute__((aligned(64)));
	/* Slow paths that may hold objects between the depot and an area:
	 * ended << 32 | in flight.  A steal that found nothing while one ran
	 * sweeps again (steal.c). */
	uint64_t transit __attribute__((aligned(64)));
};

/* Set p up for per-CPU mode when cfg asks for it (LFPOOL_F_PERCPU): 0, or
 * ENOMEM.  Nothing to do, 0, for a per-thread pool.  mem: where its state
 * goes, lfp_ts_percpu_state_bytes(cfg) bytes aligned to 64 in the pool's own
 * block (one block per small pool: a create and a destroy take no block
 * of their own for it). */
int lfp_ts_percpu_init(lfpool_ts *p, const lfpool_config *cfg, void *mem);
/* The bytes of that state for a pool of config cfg (0: per-thread). */
size_t lfp_ts_percpu_state_bytes(const lfpool_config *cfg);
/* Destroy: fini every object of the CPU areas and free them; returns how
 * many objects (0 for a per-thread pool).  No other user may run. */
uint64_t lfp_ts_percpu_fini(lfpool_ts *p);

/* lfpool_ts_get and _put of a per-CPU pool, given p->percpu (one load
 * fewer on the fast path). */
void *lfp_ts_percpu_get(struct lfp_ts_percpu *t);
void lfp_ts_percpu_put(struct lfp_ts_percpu *t, void *obj);
/* lfpool_ts_get_bulk, _put_bulk and _flush of a per-CPU pool. */
int lfp_ts_percpu_get_bulk(lfpool_ts *p, void **objs, size_t n);
void lfp_ts_percpu_put_bulk(lfpool_ts *p, void *const *objs, size_t n);
void lfp_ts_percpu_flush(lfpool_ts *p);

/* fork: take (lock) or release the CPU areas' fallback locks (nothing for
 * a per-thread pool or in rseq mode). */
void lfp_ts_percpu_fork_lock(lfpool_ts *p, bool lock);
/* fork's child: no slow path is in flight but the forking thread's own
 * (those of other threads never end there; what they held stays counted
 * as out). */
void lfp_ts_percpu_fork_child(lfpool_ts *p);

/* Add the per-CPU mode's counters to *sum (nothing for a per-thread pool). */
void lfp_ts_percpu_count(const lfpool_ts *p, struct lfp_cache_counts *sum);
/* Fill st's per-CPU fields: percpu_mode, and the areas in bytes_held. */
void lfp_ts_percpu_stats(const lfpool_ts *p, lfpool_stats *st);
/* Show fn every object of the CPU areas (validate; no other user may
 * run).  Nothing for a per-thread pool. */
void lfp_ts_percpu_each(const lfpool_ts *p, void (*fn)(void *obj, void *ctx), void *ctx);
/* Bytes of the CPU areas (0 for a per-thread pool). */
uint64_t lfp_ts_percpu_bytes(const lfpool_ts *p);

#endif
