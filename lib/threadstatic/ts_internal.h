/* SPDX-License-Identifier: MIT */
/*
 * ts_internal.h - ThreadStatic internals shared by threadstatic.c (the pool),
 * cache.c (a cache's two magazines), tls.c (implicit per-thread caches),
 * worker.c (worker-index slots), steal.c (stop and take) and ts_percpu.c
 * (the per-CPU mode).
 *
 * An object of the pool is in exactly one place: out with a user, in a
 * cache's loaded or previous magazine, in a full magazine of the depot, or
 * loose on the depot's object stack.  created counts them all.
 *
 * One process-wide mutex, lfp_ts_lock, guards the registry of live pools
 * (tls.c: a slot per pool, whose index is the pool's id in the threads'
 * directories), every thread's directory of caches (tls.c), each
 * pool's list of caches and its retired counters, and is held while a cache
 * is created or freed.  Only rare calls take it (cache creation and release,
 * thread exit, destroy, stats, trim); get and put never do.  It is taken
 * before any pool's slab lock, never after, and no user hook runs under it.
 *
 * Owners of what is declared here, lowest floor first (HACKING.md):
 *   steal.c         lfp_ts_lock, lfp_ts_lock_busy; lfp_steal, lfp_steal_drain_all,
 *                   lfp_steal_drain_areas (stop and take: the thief's
 *                   steps on caches and CPU areas are there too)
 *   cache.c         lfp_cache_*: a cache's new, free, count
 *   tls.c           lfpool_ts_tls_, lfpool_array_tls_ (the array layer's
 *                   table, cleared here), lfp_tls_cache, lfp_tls_find,
 *                   lfp_tls_exiting, lfp_tls_detach, lfp_tls_forget,
 *                   lfp_tls_holds, lfp_tls_fork_child, and the
 *                   registry of live pools: lfp_tls_register,
 *                   lfp_tls_unregister, lfp_tls_next_live
 *   worker.c        lfp_workers_fini
 *   here (inline)   lfp_ts_create_objects, lfp_ts_tight, lfp_sink_room,
 *                   lfp_sink_give, lfp_cache_lock, _trylock, _unlock,
 *                   lfp_cache_cool
 * Elsewhere in this folder: depot.h (depot.c), percpu.h (percpu.c; its
 * sequences are lfpool/impl/rseq.h's), ts_percpu.h (ts_percpu.c);
 * threadstatic.c defines the public calls only, validate.c lfp_ts_validate
 * (../census.h).
 */
#ifndef LFP_TS_INTERNAL_H
#define LFP_TS_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "core.h"
#include "depot.h"
#include "grace.h"
#include "lfpool/ts.h"

#define LFP_TS_DEAD UINT64_MAX		/* gen of a destroyed pool: matches nothing */
#define LFP_TS_NO_ID UINT32_MAX		/* fast.id of a destroyed pool: in no directory */
#define LFP_WORKER_CHUNK 64u		/* worker slots per chunk */
#define LFP_WORKER_CHUNKS (LFPOOL_TS_WORKERS_MAX / LFP_WORKER_CHUNK)

/* LFP_CACHE_HOME: an implicit cache that lives in its thread's
 * lfpool_ts_tls_.home (tls.c), never freed, only unlinked. */
enum lfp_cache_kind { LFP_CACHE_IMPLICIT, LFP_CACHE_EXPLICIT, LFP_CACHE_WORKER, LFP_CACHE_HOME };

/* What a cache counts; summed over caches by stats and trim. */
struct lfp_cache_counts {
	uint64_t gets, puts;
	uint64_t misses;		/* gets that found both magazines empty */
	uint64_t full_pops;		/* full magazines taken from the depot */
	uint64_t full_pushes;		/* full magazines given to the depot */
};

/* fast.low while a thief holds the cache: no get can pass its check. */
#define LFP_CACHE_STOPPED LFPOOL_CACHE_STOPPED_
/* The first refill from loose objects takes this many (fill adapts). */
#define LFP_FILL_MIN 4u

struct lfpool_ts_cache {
	struct lfpool_ts_cache_fast fast;	/* first: read by the inline fast path */
	uint32_t debug_count;		/* debug pools: objects in the loaded magazine */
	uint32_t loaded, prev;		/* magazine indices */
	void **prev_objs;
	uint32_t prev_count;		/* objects in the previous magazine */
	uint32_t fill;			/* loose objects a refill takes; adapts */
	uint8_t lock;			/* held by the slow paths and by thieves */
	int32_t thief_low;		/* a thief's copy of fast.low (index), under lock */
	bool checked;			/* slow pool (debug, memcheck): every get and put is checked */
	uint8_t kind;			/* enum lfp_cache_kind */
	uint8_t releasing;		/* worker slots: a worker_release flushes it */
	/* Written by the cache's user with relaxed stores; stats reads them. */
	uint64_t misses, full_pops, full_pushes;
	/* The puts of the cache's user are puts_base + fast.gets + the objects
	 * the cache holds (held() in cache.c): a hit get or put keeps the sum
	 * as it is (gets + 1 and one object fewer, or one more), so hits count
	 * no put; every other change of what the cache holds (refills,
	 * magazines given to the depot, flushes, thieves, objects made or
	 * stolen for a get) moves puts_base by as much, under the lock. */
	uint64_t puts_base;
	lfpool_ts *pool;
	lfpool_ts_cache *next, **pprev;	/* the pool's list, under lfp_ts_lock */
};
/* lfpool_ts_cache_get and _put (lfpool/ts.h) read the cache as its fast
 * view. */
_Static_assert(offsetof(struct lfpool_ts_cache, fast) == 0, "fast view first");

/* A pointer of the fast view (top, low) as an index into the loaded
 * magazine: top may be one below it while a get that missed is on its way
 * to the slow path.  Not for a stopped low. */
static inline int32_t lfp_cache_index(const lfpool_ts_cache *c, void **p)
{
	/* Unsigned: a shift; one below wraps to all ones, i.e. -1. */
	return (int32_t)(((uintptr_t)p - (uintptr_t)c->fast.objs) / sizeof(void *));
}

struct lfpool_ts {
	struct lfpool_ts_fast fast;	/* first: read by the inline fast paths */
	/* The memory of the pool's first cache (lfp_cache_new; in use while
	 * local_taken), right after the head, which names it in by_thread: a
	 * switch to the pool reads the head and the cache's fast view from two
	 * adjacent lines of one page, and the inline path computes the cache's
	 * address from the pool's, not from the load of by_thread
	 * (lfpool_ts_dir_find_), so both loads issue at once (round-robin over
	 * many pools).  A pool's first touch also writes no block of
	 * its own for the cache. */
	struct lfpool_ts_cache local;
	/* Unique in the process: the use count of the pool's registry slot
	 * << 32 | the slot; LFP_TS_DEAD once destroyed. */
	uint64_t gen;
	uint32_t magic;
	/* workers[i] is NULL from here: destroy reads no more of the table
	 * (all of it was 8 cache misses per destroy with 10^5 pools
	 * alive).  Under lfp_ts_lock. */
	unsigned worker_chunks;
	struct lfp_ts_percpu *percpu;	/* per-CPU mode (ts_percpu.h), else NULL */
	/* The counters that creates, puts without a cache and signal
	 * handlers' gets add to, in what the line before the depot left
	 * free (a line of their own made a small pool's block 128 bytes
	 * bigger: see test_small, block_bytes). */
	uint64_t created;		/* objects alive */
	uint64_t uncached_puts;		/* puts of threads that could get no cache */
	uint64_t signal_gets;		/* lfpool_ts_get_signal's objects */
	struct lfp_depot depot;
	struct lfp_core core;
	/* The worker slots' table of LFP_WORKER_CHUNKS chunk pointers, made
	 * at the first lfpool_ts_worker_cache (worker.c), NULL before: not in
	 * the struct, whose 512 bytes every small pool paid.  The table and
	 * its chunks are published with release stores. */
	lfpool_ts_cache ***workers;
	/* Serializes the calls that take from every place (steal, drain,
	 * trim); taken before lfp_ts_lock. */
	pthread_mutex_t steal_lock;
	/* Under lfp_ts_lock: */
	lfpool_ts_cache *caches;
	bool local_taken;		/* local is a cache of the pool's list */
	/* A class of an array pool: a thread's first implicit cache of it
	 * takes lfpool_ts_tls_.array_home, never the home (tls.c; set by
	 * lib/layers/array.c before any thread uses the pool). */
	bool array_class;
	size_t explicit_caches;
	struct lfp_cache_counts retired;	/* of caches freed */
	/* The caches' sums of full_pops and full_pushes at the previous
	 * trim (the depot's working set since: lfpool_ts_trim). */
	uint64_t trimmed_pops, trimmed_pushes;
	/* After the struct in its block, core.tail bytes: the objects' first
	 * side data (core.h, lfp_core_inline; one block per small pool) and,
	 * where it fits in the same bytes, the magazines', then the per-CPU
	 * state (ts_percpu.h). */
};

/* The inline path finds the pool's own cache right after its head. */
_Static_assert(offsetof(struct lfpool_ts, local) == LFPOOL_TS_LOCAL_OFFSET_,
	       "the pool's own cache follows its head");

extern pthread_mutex_t lfp_ts_lock;
/* Take and let go of lfp_ts_lock with the thread busy (grace.h, lfp_busy)
 * meanwhile, so that a signal handler's get that would take it (a steal
 * at capacity, a new cache) fails with EAGAIN rather than wait for its own
 * thread (lfpool/ts.h, "Signal handlers"; lfstress signals-locks hung in
 * lfpool_ts_stats so).  Every holder but steal.c's and fork's, whose
 * callers are busy already or hold every lock. */
void lfp_ts_lock_busy(void);
void lfp_ts_unlock_busy(void);

/* The ThreadStatic steps that may block or run user code (hooks, the
 * backing allocator, a grace period's wait) run with cancellation off: a
 * thread cancelled inside one would leave a lock held or objects lost
 * (lfpool/ts.h, "Cancellation").  The old state, to give back. */
static inline int lfp_ts_nocancel(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}
static inline void lfp_ts_cancel_restore(int old)
{
	pthread_setcancelstate(old, &old);
}

/* Create n objects of p as a chain in debug state `state`: 0 or
 * ENOBUFS/ENOMEM.  Inline: the caches below the pool create objects too.
 * The caller is in no grace section: the init hooks run outside one
 * (grace.h), the raw pops in a section of their own. */
static inline int lfp_ts_create_objects(lfpool_ts *p, size_t n, uint8_t state, uint32_t *chain)
{
	LFP_ASSERT(!lfp_grace_inside());
	lfp_grace_enter();	/* the raw stack's pops */
	int err = lfp_core_create_raw(&p->core, &p->created, true, n, chain);
	lfp_grace_leave();
	if (!err)
		lfp_core_construct_chain(&p->core, *chain, state);
	return err;
}

/* Destroy again the n objects objs[0 ..) that a get made for its caller
 * and then failed (all or none): finalized, raw, no longer in created.
 * Outside a grace section: the fini hooks run here. */
static inline void lfp_ts_unmake_objects(lfpool_ts *p, void *const *objs, size_t n)
{
	if (n == 0)
		return;
	LFP_ASSERT(!lfp_grace_inside());
	const struct lfp_slabs *s = &p->core.slabs;
	uint32_t chain = LFP_NIL;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx = lfp_slabs_index(s, objs[i]);
		lfp_store_u32_rlx(lfp_slabs_link(s, idx), chain);
		chain = idx;
	}
	lfp_core_destroy_chain(&p->core, true, chain);
	lfp_faa_u64_rlx(&p->created, (uint64_t)0 - n);
}

/*
 * Where a thief (steal.c) puts what it takes: into objs[got ..) up to want
 * (a get), or, when objs is NULL, onto the depot's loose stack (drain).
 */
struct lfp_sink {
	lfpool_ts *pool;
	void **objs;
	size_t want, got;
};
/* How many more objects the sink takes. */
static inline size_t lfp_sink_room(const struct lfp_sink *sk)
{
	return sk->want - sk->got;
}
/* Hand objs[0 .. n) (n <= lfp_sink_room) to the sink.  Inline: the
 * places a thief takes from (cache.c, ts_percpu.c) give to it. */
static inline void lfp_sink_give(struct lfp_sink *sk, void *const *objs, size_t n)
{
	if (!n)
		return;
	if (sk->objs)
		memcpy(sk->objs + sk->got, objs, n * sizeof(void *));
	else
		lfp_depot_put_objs(&sk->pool->depot, &sk->pool->core.slabs, objs, n);
	sk->got += n;
}

/* The cache's slow-path lock: owners in their slow paths, thieves
 * (steal.c), fork's prepare.  It marks the thread busy (grace.h,
 * lfp_busy) from before it is taken to after it is let go. */
static inline void lfp_cache_lock(lfpool_ts_cache *c)
{
	unsigned spins = 0;
	lfp_busy_enter();
	while (lfp_xchg_u8_acqrel(&c->lock, 1)) {
		while (lfp_load_u8_rlx(&c->lock)) {
			/* A holder that was preempted: let it run. */
			if (++spins % 256 == 0)
				sched_yield();
			else
				lfp_stall();
		}
	}
}

/* Take the lock if it is free (fork's prepare: no waiting in lock order). */
static inline bool lfp_cache_trylock(lfpool_ts_cache *c)
{
	lfp_busy_enter();
	if (!lfp_xchg_u8_acqrel(&c->lock, 1))	/* acquire when taken */
		return true;
	lfp_busy_leave();
	return false;
}

static inline void lfp_cache_unlock(lfpool_ts_cache *c)
{
	lfp_xchg_u8_acqrel(&c->lock, 0);	/* release */
	lfp_busy_leave();
}

/* Start c's refills small again (trim, drain: the pool idles). */
static inline void lfp_cache_cool(lfpool_ts_cache *c)
{
	lfp_store_u32_rlx(&c->fill, LFP_FILL_MIN < c->pool->depot.mag_size ?
					    LFP_FILL_MIN : c->pool->depot.mag_size);
}

/* Steal before failing (steal.c): up to want objects for a get that found
 * nothing and may create none, taken from every place the pool keeps them;
 * returns how many were put in objs (0: every object is out with a user).
 * The caches (cache.c) and CPU areas (ts_percpu.c) call it from the floor
 * above: steal.c holds the thief's steps on each of them. */
size_t lfp_steal(lfpool_ts *p, void **objs, size_t want);
/* Every pooled object of every cache and CPU area onto the loose stack;
 * returns how many moved. */
size_t lfp_steal_drain_all(lfpool_ts *p);
/* The same for the CPU areas only (trim); caller holds p->steal_lock. */
size_t lfp_steal_drain_areas(lfpool_ts *p);
/* Whether the pool is at its capacity: refills take only what they need. */
static inline bool lfp_ts_tight(lfpool_ts *p)
{
	return p->core.capacity && lfp_load_u64_rlx(&p->created) >= p->core.capacity;
}

/* A new cache of the pool with two empty magazines, or NULL; caller holds
 * lfp_ts_lock.  lfp_cache_init makes it in c's storage (a home cache,
 * whose kind is LFP_CACHE_HOME): c, or NULL with the storage unused. */
lfpool_ts_cache *lfp_cache_new(lfpool_ts *p, enum lfp_cache_kind kind);
lfpool_ts_cache *lfp_cache_init(lfpool_ts_cache *c, lfpool_ts *p, enum lfp_cache_kind kind);
/* Flush c, free it (a home cache: unlink it) and its magazines; caller
 * holds lfp_ts_lock. */
void lfp_cache_free(lfpool_ts_cache *c);
/*
 * fork child: forget c, the cache of a thread that does not exist in the
 * child (lock held).  Its state may be half-way through a step, so only
 * its counters are read: its objects stay counted in created, as out with
 * users (in live, not retained), and are never handed out again; its
 * magazines stay in the census.  Their
 * memory goes back with the slabs at destroy.
 */
void lfp_cache_abandon(lfpool_ts_cache *c);
/* Add c's counters to *sum (relaxed loads: c may be in use; its puts are
 * then within the objects its user's current step moves, see puts_base). */
void lfp_cache_count(const lfpool_ts_cache *c, struct lfp_cache_counts *sum);

/* The calling thread's cache for p (alive), made on first use; NULL with
 * errno ENOMEM, or once lfp_tls_exiting() (errno untouched): a thread
 * past its key destructor gets no implicit cache.  It becomes the
 * thread's lfpool_ts_tls_ entry. */
lfpool_ts_cache *lfp_tls_cache(lfpool_ts *p);
/* True once the calling thread's key destructor ran: its calls then keep
 * no cache of their own (threadstatic.c's get_uncached, put_uncached). */
bool lfp_tls_exiting(void);
/* The calling thread's cache for p if it has one (made its lfpool_ts_tls_
 * entry), else NULL. */
lfpool_ts_cache *lfp_tls_find(const lfpool_ts *p);
/* Free the calling thread's cache for p, if any. */
void lfp_tls_detach(lfpool_ts *p);
/* Whether c is the calling thread's cache for the (live) pool of
 * generation gen (fork's child: the caches of other threads are
 * abandoned). */
bool lfp_tls_holds(uint64_t gen, const lfpool_ts_cache *c);
/* fork's child, lfp_ts_lock held: forget every other thread's table. */
void lfp_tls_fork_child(void);
/* The registry of live pools, under lfp_ts_lock; fork's handlers read it.
 * Register gives p a slot (its fast.id, its index in the threads'
 * directories) and its generation (create): 0 or ENOMEM; unregister frees
 * the slot and sets fast.id to LFP_TS_NO_ID (destroy).  Register takes the
 * lowest free slot: both O(log) of the free slots (a heap of them). */
int lfp_tls_register(lfpool_ts *p);
void lfp_tls_unregister(lfpool_ts *p);
/* The live pools one by one: start with *it = 0; NULL after the last.
 * Caller holds lfp_ts_lock across the walk. */
lfpool_ts *lfp_tls_next_live(uint32_t *it);
/* Destroy of p: drop the calling thread's entry for p, and clear every
 * thread's lfpool_ts_tls_ entry naming p; caller holds lfp_ts_lock. */
void lfp_tls_forget(const lfpool_ts *p);

/* Free the worker slot tables (destroy; the caches are freed with the
 * pool's list). */
void lfp_workers_fini(lfpool_ts *p);

#endif
