/* SPDX-License-Identifier: MIT */
/*
 * lfpool/impl/lookup.h - how lfpool_ts_get and lfpool_ts_put find the
 * calling thread's cache of a pool, in this order: the per-CPU tag of
 * the pool's address (a per-CPU pool runs lfpool/impl/rseq.h's
 * sequences on its CPU area instead), the thread's home cache (in the
 * library's TLS), the most recently used other pool, the pool's head
 * (its first threads' caches), the thread's directory (by the pool's id).
 * Also the views these read: the thread's TLS block (lib/threadstatic/
 * tls.c defines it) and the pool's head (the library's struct lfpool_ts
 * begins with it).  Included by lfpool/ts.h; not for users.
 *
 * Terms (see also lfpool/impl/tagged_stack.h's and cache.h's):
 *  - implicit cache: the cache lfpool_ts_get and _put use for the
 *    calling thread, made at its first call on a pool.
 *  - home: the thread's first implicit cache, kept in its TLS block.
 *  - most recently used (mru): the thread's last pool other than the
 *    home's, and its cache, remembered in the TLS block.
 *  - head (of a pool): struct lfpool_ts_fast, the pool's first cache
 *    line; id: the pool's number, its index in every directory.
 *  - directory: the thread's array of its caches, by pool id.
 *  - slot (tslot): a thread's entry in every head's by_thread.
 *  - per-CPU tag: bit 6 of a pool's head address, set for per-CPU pools
 *    (LFPOOL_TS_PERCPU_TAG_; not a stack head's tag).
 *  - table, gate: a per-CPU pool's areas and the bound on which of them
 *    a sequence may use (lfpool/impl/rseq.h).
 */
#ifndef LFPOOL_TS_H
/* Alone: lfpool/ts.h declares what this header uses, and includes it. */
# include "lfpool/ts.h"
#elif !defined(LFPOOL_IMPL_LOOKUP_H)
#define LFPOOL_IMPL_LOOKUP_H

#include "lfpool/impl/cache.h"
#include "lfpool/impl/rseq.h"

/*
 * The TLS model of the library's variables as the inline paths read them
 * (lfpool_ts_tls_ below, lfpool_array_tls_ in lfpool/array.h).  In an
 * executable (no __PIC__, or __PIE__): initial-exec, the thread pointer
 * plus an offset loaded once, no call; the library is then loaded at
 * start, so its TLS lies in glibc's static block.  In a shared object: the
 * compiler's default, general-dynamic (a call to __tls_get_addr, or with
 * -mtls-dialect=gnu2 a TLS descriptor's, hoisted out of loops), because
 * an initial-exec access from a shared object that is dlopen()ed late
 * needs the library's TLS in the static block, which a late load does
 * not find room for (dlopen fails: "cannot allocate memory in static TLS
 * block").  A shared object that is always loaded at start (linked by the
 * program) may define LFPOOL_TLS_INITIAL_EXEC to read it as an executable
 * does.  The library's own sources take their build's model (TLS
 * descriptors in the shared library: Makefile.am).  In a library loaded
 * late, glibc allocates (mallocs) a thread's block of it at the thread's
 * first access: a thread's first lfpool call must then not come from a
 * signal handler.
 */
#if defined(LFPOOL_BUILDING) || !defined(__GNUC__)
# define LFPOOL_TLS_MODEL_
#elif defined(LFPOOL_TLS_INITIAL_EXEC) || !defined(__PIC__) || defined(__PIE__)
# define LFPOOL_TLS_MODEL_ __attribute__((tls_model("initial-exec")))
#else
# define LFPOOL_TLS_MODEL_
#endif

/*
 * The calling thread's implicit caches as the inline lfpool_ts_get and
 * lfpool_ts_put reach them; owned by the library (lib/threadstatic/tls.c
 * says why it is safe), not for users.  Its TLS model: LFPOOL_TLS_MODEL_
 * above.
 *
 * The home cache is the thread's first implicit cache (the first it takes
 * while it has none here), and it lives in this TLS block itself: a hit
 * on its pool compares home_pool and runs lfpool_ts_cache_get or _put at
 * an address computed once per loop (LFPOOL_TS_HOME_AT_), loading no
 * cache pointer: a get's top - 1 stored in memory and the put's reload of
 * it are forwarded at no cost only when the address's base register holds
 * its value across operations.  The most recently used other pool and
 * its cache come next, then the pool's head, then the directory.
 */
struct lfpool_ts_tls {
	/* What every call on a per-thread pool reads first, together in the
	 * first line (and in the first 16 bytes, which per-CPU areas keep
	 * off, percpu.h): */
	const lfpool_ts *home_pool;	/* NULL: the home cache is free */
	const lfpool_ts *pool;	/* NULL: none */
	lfpool_ts_cache *cache;
	lfpool_ts_cache **dir;	/* by pool id: the thread's cache, or NULL */
	uint32_t ndir;		/* ids below it index dir */
	uint32_t tslot;		/* the thread's entry in every pool's by_thread; 0: none */
	uint32_t mru_writing;	/* pool and cache being rewritten: lfpool_ts_mru_set_ */
	union lfpool_ts_home_ home __attribute__((aligned(64)));	/* the home cache */
} __attribute__((aligned(64)));
LFPOOL_API extern __thread struct lfpool_ts_tls lfpool_ts_tls_ LFPOOL_TLS_MODEL_;
/* The home cache, at a constant offset from the thread pointer. */
#define LFPOOL_TS_HOME_ ((lfpool_ts_cache *)&lfpool_ts_tls_.home)
/* The calling thread's home cache as a plain pointer, which the compiler
 * computes once per loop (the thread pointer plus the block's offset; the
 * empty asm hides that it is TLS), and the home pool beside it: the home
 * pool's compare, the home cache's accesses and a miss's argument then
 * use one base register, not %fs-relative addresses (NEWS, 2026-12-01). */
#if defined(__GNUC__)
# define LFPOOL_TS_HOME_AT_(c) do { \
		uintptr_t c_ = (uintptr_t)&lfpool_ts_tls_.home; \
		__asm__("" : "+r"(c_)); \
		(c) = (lfpool_ts_cache *)c_; \
	} while (0)
#else
# define LFPOOL_TS_HOME_AT_(c) ((c) = LFPOOL_TS_HOME_)
#endif
#define LFPOOL_TS_HOME_POOL_AT_(c) ((const lfpool_ts **)((char *)(c) - \
	(offsetof(struct lfpool_ts_tls, home) - offsetof(struct lfpool_ts_tls, home_pool))))

/* The pools of those entries, and a slot of the directory.  A destroy on
 * another thread may clear them: relaxed atomic loads under
 * ThreadSanitizer, otherwise plain loads (moves on x86-64 either way; a
 * plain one the compiler may fold into the compare that uses it). */
#ifdef LFPOOL_TSAN_
# define LFPOOL_TS_PEEK_(lv) __atomic_load_n(&(lv), __ATOMIC_RELAXED)
#else
# define LFPOOL_TS_PEEK_(lv) (lv)
#endif

/* Threads whose implicit caches a pool keeps in its head, as by_thread[1 ..
 * LFPOOL_TS_THREAD_SLOTS_] (entry 0 stays NULL: threads without a slot). */
#define LFPOOL_TS_THREAD_SLOTS_ 4

/* The head of every ThreadStatic pool, one cache line: the per-CPU tables
 * whose gets and puts may run inline, or a table whose gate is always
 * shut (per-thread pools, the fallback path, debug checks, a reset hook:
 * lib/threadstatic/ts_percpu.c), never NULL; and the implicit caches of
 * the first threads to hold a slot (lfpool_ts_tls_.tslot), so that a
 * switch of pool reads the cache's address from this line, the one its id
 * is in, rather than from the thread's directory after it: one dependent
 * cache miss less per switch (round-robin over many pools).  Only the
 * slot's thread writes its entry (lib/threadstatic/tls.c). */
struct lfpool_ts_fast {
	const struct lfpool_percpu_hot_ *rseq_get;
	const struct lfpool_percpu_hot_ *rseq_put;
	uint32_t id;		/* index in the threads' directories */
	uint32_t pad_;
	lfpool_ts_cache *by_thread[LFPOOL_TS_THREAD_SLOTS_ + 1];
};

/* The home cache's pool, from its address c (LFPOOL_TS_HOME_AT_). */
static inline const lfpool_ts *lfpool_ts_home_pool_(lfpool_ts_cache *c)
{
	return LFPOOL_TS_PEEK_(*LFPOOL_TS_HOME_POOL_AT_(c));
}

/* The most recently used entry's pool and cache (see lfpool_ts_mru_set_). */
static inline const lfpool_ts *lfpool_ts_mru_pool_(void)
{
	return LFPOOL_TS_PEEK_(lfpool_ts_tls_.pool);
}

static inline lfpool_ts_cache *lfpool_ts_mru_cache_(void)
{
	return LFPOOL_TS_PEEK_(lfpool_ts_tls_.cache);
}

/* The thread's cache of the pool whose id is id (< ndir), or NULL. */
static inline lfpool_ts_cache *lfpool_ts_dir_(uint32_t id)
{
	return LFPOOL_TS_PEEK_(lfpool_ts_tls_.dir[id]);
}

/* The thread's cache in the head f's by_thread, or NULL. */
static inline lfpool_ts_cache *lfpool_ts_by_thread_(const struct lfpool_ts_fast *f)
{
	return LFPOOL_TS_PEEK_(f->by_thread[lfpool_ts_tls_.tslot]);
}

/* Where a pool's own cache lies from its head: the first cache made for
 * the pool takes that memory (lib/threadstatic/ts_internal.h, struct lfpool_ts). */
#define LFPOOL_TS_LOCAL_OFFSET_ 64

/* The bit of its head's address that tells a per-CPU pool, whose gets and
 * puts may run the restartable sequences inline (set), from the others
 * (clear; lib/threadstatic/threadstatic.c places the heads): a get or
 * put tests this bit of a register first, before the thread's home pool
 * and the most recently used one, whose compares are misses for a
 * per-CPU pool.  In a loop on one pool the compiler then moves the test
 * out of the loop (the pool is loop-invariant) and runs the per-CPU or
 * the per-thread path alone; elsewhere a home hit pays a test and a
 * branch not taken.  No path's correctness depends on the bit: a
 * per-thread pool whose head had it would run the sequence on a table
 * whose gate is shut, and go to its slow path; a per-CPU pool without it
 * finds no cache of its own and goes there too. */
#define LFPOOL_TS_PERCPU_TAG_ 64

/* The pool's own cache, its address made from the pool's alone: after the
 * compare that found by_thread naming it, the CPU loads the cache's fast
 * view without waiting for the load of by_thread (the empty asm hides the
 * equality from the compiler, which would otherwise use either value). */
#if defined(__GNUC__)
# define LFPOOL_TS_LOCAL_(pool, c) do { \
		uintptr_t b_ = (uintptr_t)(pool); \
		__asm__("" : "+r"(b_)); \
		(c) = (lfpool_ts_cache *)(b_ + LFPOOL_TS_LOCAL_OFFSET_); \
	} while (0)
#else
# define LFPOOL_TS_LOCAL_(pool, c) \
	((c) = (lfpool_ts_cache *)((uintptr_t)(pool) + LFPOOL_TS_LOCAL_OFFSET_))
#endif

/*
 * The most recently used entry, pool and cache, against signal handlers:
 * a handler may call lfpool_ts_get and _put on another per-thread pool
 * (lfpool/ts.h, "Signal handlers"), and it runs whole between two
 * instructions of its thread, reading and rewriting the entry there.  So:
 *  - a writer clears pool, stores cache, then pool: a handler between the
 *    stores finds no pool, never the old pool beside the new cache;
 *  - a handler does not write while its thread writes (mru_writing): its
 *    stores between the thread's last two would leave the thread's pool
 *    beside the handler's cache for good;
 *  - a reader loads cache, then pool: a handler between the loads leaves
 *    its own pool there, and the reader misses.
 * (lfstress signals-switch got objects of the wrong pool without them.)
 */
static inline void lfpool_ts_mru_set_(const lfpool_ts *pool, lfpool_ts_cache *c)
{
	if (lfpool_ts_tls_.mru_writing)
		return;		/* a handler that interrupted its thread's write */
	lfpool_ts_tls_.mru_writing = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&lfpool_ts_tls_.pool, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&lfpool_ts_tls_.cache, c, __ATOMIC_RELEASE);
	__atomic_store_n(&lfpool_ts_tls_.pool, pool, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	lfpool_ts_tls_.mru_writing = 0;
}

/* The entry's cache if its pool is pool, else NULL (see above). */
static inline lfpool_ts_cache *lfpool_ts_mru_find_(const lfpool_ts *pool)
{
	lfpool_ts_cache *c = lfpool_ts_mru_cache_();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* compiler only: cache, then pool */
	return lfpool_ts_mru_pool_() == pool ? c : NULL;
}

/* The calling thread's cache of pool from the pool's head or else its
 * directory, made its most recently used entry; NULL when it has none. */
static inline lfpool_ts_cache *lfpool_ts_dir_find_(const lfpool_ts *pool)
{
	const struct lfpool_ts_fast *f = (const struct lfpool_ts_fast *)pool;
	lfpool_ts_cache *c = lfpool_ts_by_thread_(f);
	uint32_t id;
	if (LFPOOL_LIKELY((uintptr_t)c == (uintptr_t)pool + LFPOOL_TS_LOCAL_OFFSET_))
		LFPOOL_TS_LOCAL_(pool, c);
	else if (!c && ((id = f->id) >= lfpool_ts_tls_.ndir || !(c = lfpool_ts_dir_(id))))
		return NULL;
	lfpool_ts_mru_set_(pool, c);
	return c;
}

/* Whether pool's head says it runs the rseq sequences inline. */
#define LFPOOL_TS_IS_PERCPU_(pool) ((uintptr_t)(pool) & LFPOOL_TS_PERCPU_TAG_)

#endif
