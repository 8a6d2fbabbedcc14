/* SPDX-License-Identifier: MIT */
/*
 * lfpool/ts.h - ThreadStatic: per-thread magazines over a
 * lock-free depot (Bonwick & Adams 2001), and explicit cache handles.
 *
 * Synchronization:
 *
 *   call                          may run concurrently with
 *   ---------------------------   ---------------------------------------
 *   ts_get, ts_put, ts_get_bulk,  each other and themselves on any threads
 *   ts_put_bulk, ts_flush,        (each thread uses its own implicit cache)
 *   ts_attach, ts_detach,
 *   ts_prewarm, ts_trim, ts_drain,
 *   ts_owns, ts_stats,
 *   ts_max_bytes, cache_create,
 *   worker_cache, worker_release
 *   cache_get, cache_put,         any call above on other threads, but not
 *   cache_get_bulk, cache_put_    with another call on the SAME cache: a
 *   bulk, cache_flush,            cache has one user at a time (it may move
 *   cache_destroy                 between threads, e.g. with a fiber)
 *   ts_create                     nothing on the same pool
 *   ts_destroy                    nothing on the same pool
 *   init, fini and reset hooks,   may block (the application's locks, I/O,
 *   the backing allocator         a lock that a thread trimming any pool
 *   (hooks)                       holds) and may call any pool on any
 *                                 thread, the trims and drains of other
 *                                 pools included: no hook runs inside a
 *                                 grace section, and the pool holds none of
 *                                 its locks across them (see "Hooks"), but:
 *                                 a slab growth's allocator call holds its
 *                                 grow lock, which a trim waits for (a
 *                                 per-thread cache's put that makes a
 *                                 magazine lets the cache's lock go
 *                                 first), and a trim of a pool with no
 *                                 fini hook gives slabs back holding the
 *                                 pool's steal lock
 *                                 (see "Sizing"): another thread's get at
 *                                 capacity, drain or trim waits for those.
 *                                 Meanwhile a get at capacity of the pool
 *                                 fails with ENOBUFS at once (the object
 *                                 being made or finalized is neither pooled
 *                                 nor free), and drains and other trims go on
 *   a hook's calls on its own     as any call, but: a get from the init hook
 *   pool                          that would create fails with EDEADLK; from
 *                                 the fini hook a get at capacity fails with
 *                                 ENOBUFS, trim and drain with EDEADLK
 *   pthread_cancel of a thread    every call: none is a cancellation point;
 *   (cancellation)                the calls that may block or run hooks run
 *                                 with cancellation off (see "Cancellation")
 *   a signal handler on the       ts_get_signal, ts_put_signal: always;
 *   thread (signals)              ts_get, ts_put, ts_get_bulk, ts_put_bulk
 *                                 (per-CPU: always; per-thread: unless it
 *                                 interrupted a hit on the same pool); when
 *                                 it interrupted a step holding a lock, a
 *                                 get that needs a slow path fails at once
 *                                 with EAGAIN and a put goes to the depot's
 *                                 loose stack (see "Signal handlers"); no
 *                                 other call
 *
 * A get or put that hits the caller's magazines runs no atomic
 * read-modify-write and takes no lock.  An object may be put on any
 * thread: it goes into that thread's magazine, and full magazines flow
 * through the depot to whoever gets.  How it works, the memory bound of
 * each part and the reasons behind the inline paths: HACKING.md,
 * "ThreadStatic's design"; each call's page: man lfpool_ts_get.
 *
 * Bounds.  created never exceeds the capacity; the depot holds at most
 * depot_max magazines; lfpool_ts_max_bytes says the most memory a pool
 * holds while at most `caches` caches exist (a per-CPU pool: its CPU
 * areas too, ncpu x 2 x magazine_size objects at most).
 *
 * Sizing a bounded pool.  The capacity is exact: a get fails with
 * ENOBUFS only when the pool has created capacity objects and every other
 * object is out with a user, with another get that is taking or making
 * it, or with a trim that is finalizing it.  Before it fails, a get at
 * capacity steals from every cache and CPU area of the pool (stop and
 * take: lib/threadstatic/steal.c), so a capacity of L is enough for gets
 * never to fail while at most L objects are out.  Such a get costs
 * microseconds and waits for other thieves, drains and trims of the pool.
 *
 * Implicit caches.  A thread's first call on a pool gives it a cache in
 * the library's TLS; the first pool a thread uses (its home) is the
 * fastest, so make the first call, or lfpool_ts_attach, on the pool used
 * most.  A thread's exit hands its cache back.  A thread whose key
 * destructors use a pool must call the library once before it exits
 * (lfpool_ts_attach): one whose first call comes from glibc's last round
 * of key destructors leaves a cache that a later destroy reads after
 * glibc freed it.  Implicit caches are NOT fiber-safe: code that may
 * resume on another thread must use an explicit lfpool_ts_cache (the
 * inline calls keep the home cache's address in a register across a
 * function's calls).  A shared object that is dlopen()ed reads the TLS
 * through __tls_get_addr (LFPOOL_TLS_MODEL_, lfpool/impl/lookup.h); its
 * threads' first call must then not come from a signal handler.
 *
 * Per-CPU mode.  A pool created with LFPOOL_F_PERCPU keeps no cache per
 * thread: get, put, their bulk forms and flush use an area of 2 x
 * magazine_size objects of the CPU the caller runs on, as restartable
 * sequences on Linux x86-64 with glibc's rseq (inline: lfpool/impl/
 * rseq.h; define LFPOOL_NO_INLINE_RSEQ in code that is dlclose()d while
 * its threads run), else under a spinlock per area picked by
 * sched_getcpu().  lfpool_ts_stats says which in percpu_mode.  Memory
 * grows with CPUs, not threads; ts_attach and ts_detach do nothing.
 *
 * Destroy.  ts_destroy fails with EBUSY while explicit caches exist; it
 * reclaims the implicit and worker caches (their threads may go on and
 * exit later).  Any other call on a destroyed pool is an error.
 *
 * fork().  The child may use every pool it inherited.  Objects in other
 * threads' implicit caches (or in their slow paths) stay counted as out
 * and are never handed out again; an explicit cache or worker slot that
 * another thread was using at the fork must not be used in the child.
 *
 * Hooks.  The init, fini and reset hooks run inside no grace section and
 * hold no lock of the library but those the table above names, so they
 * may block and call any pool (HACKING.md has the details).  From a
 * pool's own init hook a get that must create fails with EDEADLK; from
 * its own fini hook a trim or drain of it fails with EDEADLK.  The
 * backing allocator runs inside a grace section: it must not wait for a
 * thread that trims a ThreadStatic pool, and its ThreadStatic gets and
 * puts behave as a signal handler's.
 *
 * Cancellation.  No call is a cancellation point.  The calls that may
 * block or run hooks (a get or put off the fast path, bulk calls,
 * prewarm, trim, drain, destroy, create with prewarm) run with
 * cancellation off and restore the caller's state on return.
 *
 * Signal handlers.  A handler may call lfpool_ts_get_signal and
 * lfpool_ts_put_signal on any ThreadStatic pool, whatever it interrupted:
 * they use only the depot's lock-free loose stack (a get there fails at
 * once with EAGAIN when it is empty; prewarm fills it).  The hooks they
 * run must be async-signal-safe: put's reset hook, and on a debug pool
 * the fini, init and error hooks (its checks remake and report).  Of the other
 * calls a handler may call only lfpool_ts_get, lfpool_ts_put,
 * lfpool_ts_get_bulk and lfpool_ts_put_bulk (and the cache calls, on a
 * cache no other code uses meanwhile):
 *
 *   pool and call from a handler   what it does
 *   ----------------------------   ----------------------------------------
 *   per-CPU pool, any of them      works; when it interrupted a step of
 *                                  the same thread that holds a lock or a
 *                                  grace section, a get that the area
 *                                  cannot serve fails at once (NULL or -1,
 *                                  errno EAGAIN) and a put that would
 *                                  overflow goes onto the loose stack
 *   per-thread pool that the       as per-CPU (EAGAIN, the loose stack)
 *   interrupted code is not
 *   inside a get or put hit of
 *   per-thread pool whose hit      undefined: a hit is not reentrant; use
 *   (inline get or put) it         the _signal calls, block the signal
 *   interrupted                    around the thread's own gets and puts of
 *                                  that pool, or give handlers pools of
 *                                  their own (or per-CPU ones)
 *   any other call                 not async-signal-safe
 *
 * A call that interrupted no such step runs as the thread would, and may
 * create objects or make the thread's cache: the allocator and init hook
 * must then be async-signal-safe, or avoided (attach the thread first,
 * keep objects pooled).  A handler saves and restores errno.
 *
 * Misuse in release builds: a put stores any pointer in the caller's
 * magazine unchecked, so a double put hands the object out twice and a
 * foreign pointer corrupts the depot when its magazine is unloaded; two
 * threads on one explicit cache at once lose or duplicate objects.
 *
 * Trim gives back the depot's objects beyond keep and its working set,
 * then every empty slab; objects in threads' caches stay until
 * lfpool_ts_drain moves them to the depot.
 */
#ifndef LFPOOL_TS_H
#define LFPOOL_TS_H

#include "lfpool/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_ts lfpool_ts;
typedef struct lfpool_ts_cache lfpool_ts_cache;

/* Defaults for lfpool_config.magazine_size and depot_max (0 picks them). */
#define LFPOOL_TS_MAGAZINE_SIZE 64
#define LFPOOL_TS_DEPOT_MAX 8
/* Largest values accepted; larger ones are EINVAL. */
#define LFPOOL_TS_MAGAZINE_SIZE_MAX 65536
#define LFPOOL_TS_DEPOT_MAX_MAX 65536
/* Worker indices are 0 .. LFPOOL_TS_WORKERS_MAX - 1. */
#define LFPOOL_TS_WORKERS_MAX 4096

/* A new pool per cfg (magazine_size, depot_max used here); prewarmed objects
 * go to the shared depot, not the creating thread's magazines.
 * NULL with errno EINVAL (prewarm > capacity too, as for every pool) or
 * ENOMEM. */
LFPOOL_API lfpool_ts *lfpool_ts_create(const lfpool_config *cfg);
/* Destroy the pool: reclaim implicit and worker caches, fini every pooled
 * object, free all memory.  NULL: no-op, 0.  0, or -1 with errno EBUSY
 * (nothing done) while explicit cache handles still exist. */
LFPOOL_API int lfpool_ts_destroy(lfpool_ts *pool);

/* Through the calling thread's implicit cache: lfpool_ts_get and
 * lfpool_ts_put are inline, below. */
/* n objects into objs, all or none: 0, or -1 with errno as get. */
LFPOOL_API int lfpool_ts_get_bulk(lfpool_ts *pool, void **objs, size_t n);
/* Put n objects (NULL entries are skipped). */
LFPOOL_API void lfpool_ts_put_bulk(lfpool_ts *pool, void *const *objs, size_t n);
/* Give the calling thread's cached objects back to the depot (per-CPU
 * pools: those of the area of the CPU it runs on). */
LFPOOL_API void lfpool_ts_flush(lfpool_ts *pool);
/* Worker start/stop hooks: attach creates the calling thread's cache now
 * (0, or -1 + ENOMEM); detach flushes and frees it (thread exit does too). */
LFPOOL_API int lfpool_ts_attach(lfpool_ts *pool);
LFPOOL_API void lfpool_ts_detach(lfpool_ts *pool);

/* Create n more objects into the depot: 0, or -1 + errno (ENOBUFS,
 * ENOMEM), nothing created.  Every thread can get them. */
LFPOOL_API int lfpool_ts_prewarm(lfpool_ts *pool, size_t n);
/*
 * Give idle memory back, keeping keep of the depot's objects.  It leaves
 * at least min(keep, D) of the D objects the depot holds when trim begins
 * (a per-CPU pool's with every CPU area's objects taken into it first).
 * Beyond keep it leaves only the working set's full magazines (W: as many
 * as caches took from the depot since the previous trim, at most
 * depot_max) and as many empty ones; every other object and magazine goes,
 * then every slab with no object (HACKING.md, "ThreadStatic's design").  Objects in threads' caches are neither
 * counted nor touched (lfpool_ts_drain moves them to the depot first).
 * With no get or put meanwhile the depot keeps exactly
 * max(min(keep, D), min(W, F) * magazine_size) objects, F being its full
 * magazines: keep 0 leaves only the working set, keep >= D destroys
 * nothing.  Safe while other threads get and put.  Returns the number of
 * objects destroyed; from the pool's own fini hook 0 with errno EDEADLK
 * (a trim of the pool may be running the hook).  The fini hooks run
 * outside grace sections and the trim's locks ("Hooks"), with
 * cancellation off ("Cancellation").  The side data of slabs given back
 * goes after a grace period; a trim that would wait for its own thread
 * (from the backing allocator) does not wait, and that side data stays
 * until a later trim or destroy.
 */
LFPOOL_API size_t lfpool_ts_trim(lfpool_ts *pool, size_t keep);
/* Move every object held in any cache (implicit caches of every thread,
 * explicit caches, worker slots) and any CPU area onto the depot, from any
 * thread, e.g. before a job system idles; a trim then can give them back.
 * Safe while other threads get and put (they go on; their next gets refill
 * from the depot).  Returns the number of objects moved; from the pool's
 * own fini hook 0 with errno EDEADLK, as lfpool_ts_trim. */
LFPOOL_API size_t lfpool_ts_drain(lfpool_ts *pool);
/* Whether ptr is the start of one of this pool's objects. */
LFPOOL_API int lfpool_ts_owns(const lfpool_ts *pool, const void *ptr);
/* Fill *st, summing every cache's counters (exact only when quiet: a hit
 * counts only its get, and a cache's puts are derived from its gets, the
 * objects it holds and those that moved in or out of it otherwise, so
 * while a cache is in use they may be off by what its current call
 * moves: a bulk call's n, two magazines for a flush).  hits = gets served by the
 * caller's own two magazines (per-CPU pools: by the area of its CPU);
 * misses = gets that found them empty; mag_exchanges = magazines taken
 * from or given to the depot; live = gets - puts; retained = created -
 * live; percpu_mode: see "Per-CPU mode" above. */
LFPOOL_API void lfpool_ts_stats(const lfpool_ts *pool, lfpool_stats *st);
/* Print the pool's state readably to out (as lfpool_pool_dump; statistics
 * as lfpool_ts_stats: any thread, approximate while in use). */
LFPOOL_API int lfpool_ts_dump(const lfpool_ts *pool, FILE *out);
/* The most bytes this pool can hold from its backing allocator while at
 * most `caches` caches exist at once (see "Bounds"); SIZE_MAX for a
 * pool without a capacity.  On a destroyed debug pool: reported, 0 with
 * errno EINVAL. */
LFPOOL_API size_t lfpool_ts_max_bytes(const lfpool_ts *pool, size_t caches);

/* Explicit cache handles: owned by one worker or fiber at a time. */
/* A new explicit cache of pool (one user at a time): NULL with errno
 * ENOMEM, or EINVAL, reported through the error hook, when pool is
 * destroyed or is a Pool or Concurrent pool (the report names it). */
LFPOOL_API lfpool_ts_cache *lfpool_ts_cache_create(lfpool_ts *pool);
/* Flush and free the cache; NULL: no-op.  Not for worker slot caches. */
LFPOOL_API void lfpool_ts_cache_destroy(lfpool_ts_cache *cache);
/* Give the cache's objects back to the depot; it stays usable. */
LFPOOL_API void lfpool_ts_cache_flush(lfpool_ts_cache *cache);
/* As lfpool_ts_get_bulk and lfpool_ts_put_bulk, through the cache. */
LFPOOL_API int lfpool_ts_cache_get_bulk(lfpool_ts_cache *cache, void **objs, size_t n);
LFPOOL_API void lfpool_ts_cache_put_bulk(lfpool_ts_cache *cache, void *const *objs, size_t n);
/* Async-signal-safe get and put (see "Signal handlers"), for any pool of
 * this header: they touch no cache nor CPU area and take no lock.  get
 * pops one of the depot's loose objects: NULL with errno EAGAIN when it
 * has none or the handler interrupted a step of the library holding a
 * lock or inside a grace section, EINVAL on a destroyed pool; it never
 * creates an object.  put pushes obj onto the loose stack (NULL: no-op),
 * running the reset hook: 0, or -1 with EINVAL on a destroyed pool. */
LFPOOL_API void *lfpool_ts_get_signal(lfpool_ts *pool);
LFPOOL_API int lfpool_ts_put_signal(lfpool_ts *pool, void *obj);
/* Rare paths of lfpool_ts_get and lfpool_ts_put; call those. */
LFPOOL_API void *lfpool_ts_get_slow(lfpool_ts *pool);
LFPOOL_API void lfpool_ts_put_slow(lfpool_ts *pool, void *obj);
/* Rare paths of lfpool_ts_cache_get and lfpool_ts_cache_put; call those (the get's
 * is entered with the cache's top already decremented). */
LFPOOL_API void *lfpool_ts_cache_get_slow(lfpool_ts_cache *cache);
LFPOOL_API void lfpool_ts_cache_put_slow(lfpool_ts_cache *cache, void *obj);

/* Worker-index mode: the cache in slot `worker` (created on first use; NULL
 * with errno EINVAL beyond LFPOOL_TS_WORKERS_MAX, or ENOMEM).  The pool owns
 * it: destroy frees it, and it does not make destroy fail.  release flushes
 * the slot for the next worker that gets the index; releases of one slot
 * take turns (one waits while another flushes), so each returns with the
 * slot flushed. */
LFPOOL_API lfpool_ts_cache *lfpool_ts_worker_cache(lfpool_ts *pool, unsigned worker);
LFPOOL_API void lfpool_ts_worker_release(lfpool_ts *pool, unsigned worker);

/* The size and stride of an object of the pool, or of the cache's pool,
 * for the sanitizer annotations. */
LFPOOL_API struct lfpool_span_ lfpool_ts_span_(const lfpool_ts *pool);
LFPOOL_API struct lfpool_span_ lfpool_ts_cache_span_(const lfpool_ts_cache *cache);

/* Under TSan and ASan, the out-of-line gets and puts annotate each
 * object's hand-over (see "ThreadSanitizer" and "AddressSanitizer" in
 * lfpool/common.h).  A call that becomes inline drops its wrapper here and
 * annotates itself (LFPOOL_SAN_GOT_, LFPOOL_SAN_PUT_, LFPOOL_TSAN_ACQUIRE,
 * LFPOOL_TSAN_RELEASE, LFPOOL_SLOT_LOAD_/STORE_), as lfpool_ts_cache_get
 * and lfpool_ts_cache_put (lfpool/impl/cache.h; and lfpool_ts_get and lfpool_ts_put
 * through them, their per-CPU sequences, or their wrapped slow paths; the
 * sequences are not inline under TSan). */
#ifdef LFPOOL_SAN_ANNOTATE_
LFPOOL_SAN_WRAP_GET_(lfpool_ts_get_slow, void *, lfpool_ts *, lfpool_ts_span_)
LFPOOL_SAN_WRAP_PUT_(lfpool_ts_put_slow, lfpool_ts *, void *, lfpool_ts_span_)
LFPOOL_SAN_WRAP_GET_(lfpool_ts_get_signal, void *, lfpool_ts *, lfpool_ts_span_)
static inline int lfpool_ts_put_signal_san_(lfpool_ts *pool, void *obj)
{
	LFPOOL_SAN_PUT_(obj, lfpool_ts_span_(pool));
	LFPOOL_TSAN_RELEASE(obj);
	LFPOOL_TSAN_QUIET_BEGIN_();
	int r = lfpool_ts_put_signal(pool, obj);
	LFPOOL_TSAN_QUIET_END_();
	return r;
}
LFPOOL_SAN_WRAP_BULK_(lfpool_ts_get_bulk, lfpool_ts_put_bulk, lfpool_ts *, lfpool_ts_span_)
LFPOOL_SAN_WRAP_BULK_(lfpool_ts_cache_get_bulk, lfpool_ts_cache_put_bulk, lfpool_ts_cache *,
		      lfpool_ts_cache_span_)
LFPOOL_SAN_WRAP_GET_(lfpool_ts_cache_get_slow, void *, lfpool_ts_cache *,
		     lfpool_ts_cache_span_)
LFPOOL_SAN_WRAP_PUT_(lfpool_ts_cache_put_slow, lfpool_ts_cache *, void *,
		     lfpool_ts_cache_span_)
LFPOOL_SAN_WRAP_CALL_(lfpool_ts_prewarm, int, lfpool_ts *, size_t)
LFPOOL_SAN_WRAP_CALL_(lfpool_ts_trim, size_t, lfpool_ts *, size_t)
static inline size_t lfpool_ts_drain_san_(lfpool_ts *pool)
{
	LFPOOL_TSAN_QUIET_BEGIN_();
	size_t n = lfpool_ts_drain(pool);
	LFPOOL_TSAN_QUIET_END_();
	return n;
}
# define lfpool_ts_get_slow lfpool_ts_get_slow_san_
# define lfpool_ts_put_slow lfpool_ts_put_slow_san_
# define lfpool_ts_get_signal lfpool_ts_get_signal_san_
# define lfpool_ts_put_signal lfpool_ts_put_signal_san_
# define lfpool_ts_get_bulk lfpool_ts_get_bulk_san_
# define lfpool_ts_put_bulk lfpool_ts_put_bulk_san_
# define lfpool_ts_cache_get_bulk lfpool_ts_cache_get_bulk_san_
# define lfpool_ts_cache_put_bulk lfpool_ts_cache_put_bulk_san_
# define lfpool_ts_cache_get_slow lfpool_ts_cache_get_slow_san_
# define lfpool_ts_cache_put_slow lfpool_ts_cache_put_slow_san_
# define lfpool_ts_prewarm lfpool_ts_prewarm_san_
# define lfpool_ts_trim lfpool_ts_trim_san_
# define lfpool_ts_drain lfpool_ts_drain_san_
#endif

/* The inline calls: the cache's (lfpool/impl/cache.h) and the implicit
 * ones below, over lfpool/impl/lookup.h and lfpool/impl/rseq.h.  An
 * object, or NULL with errno ENOBUFS (at capacity) or ENOMEM (EAGAIN from
 * a signal handler: see "Signal handlers"); a put of NULL is a no-op. */
static inline void *lfpool_ts_cache_get(lfpool_ts_cache *cache);
static inline void lfpool_ts_cache_put(lfpool_ts_cache *cache, void *obj);
static inline void *lfpool_ts_get(lfpool_ts *pool);
static inline void lfpool_ts_put(lfpool_ts *pool, void *obj);

#include "lfpool/impl/cache.h"
#include "lfpool/impl/lookup.h"

/* lfpool_ts_get and lfpool_ts_put inline whole: GCC's size estimate of
 * their miss paths (the directory, the rseq sequences) would otherwise
 * make it call them, a call per operation on the hit path too. */
#if defined(__GNUC__)
__attribute__((always_inline)) static inline void *lfpool_ts_get(lfpool_ts *pool);
__attribute__((always_inline)) static inline void lfpool_ts_put(lfpool_ts *pool, void *obj);
#endif

/* An object through the calling thread's implicit cache (per-CPU pools:
 * the area of its CPU).  The home cache's address is made before the
 * per-CPU test, on every path, so that the compiler computes it once per
 * loop whichever path the loop takes. */
static inline void *lfpool_ts_get(lfpool_ts *pool)
{
	lfpool_ts_cache *c;
	LFPOOL_TS_HOME_AT_(c);
#ifdef LFPOOL_RSEQ_INLINE_
	if (LFPOOL_UNLIKELY(LFPOOL_TS_IS_PERCPU_(pool))) {
		void *obj;
		LFPOOL_RSEQ_GET_OR_(((const struct lfpool_ts_fast *)pool)->rseq_get, obj,
				    return lfpool_ts_get_slow(pool));
		LFPOOL_SAN_GOT_(obj, lfpool_ts_span_(pool));
		return obj;
	}
#endif
	if (LFPOOL_LIKELY(lfpool_ts_home_pool_(c) == pool))
		return lfpool_ts_cache_get(c);
	if (LFPOOL_UNLIKELY(!(c = lfpool_ts_mru_find_(pool))) && !(c = lfpool_ts_dir_find_(pool)))
		return lfpool_ts_get_slow(pool);
	return lfpool_ts_cache_get(c);
}

/* Give obj back through the calling thread's implicit cache (it may come
 * from any thread).  NULL: no-op. */
static inline void lfpool_ts_put(lfpool_ts *pool, void *obj)
{
	lfpool_ts_cache *c;
	LFPOOL_TS_HOME_AT_(c);
#ifdef LFPOOL_RSEQ_INLINE_
	if (LFPOOL_UNLIKELY(LFPOOL_TS_IS_PERCPU_(pool))) {
		const struct lfpool_percpu_hot_ *h = ((const struct lfpool_ts_fast *)pool)->rseq_put;
		if (obj) {
			LFPOOL_SAN_PUT_(obj, lfpool_ts_span_(pool));
			if (lfpool_rseq_put_(h, obj))
				return;
		}
		lfpool_ts_put_slow(pool, obj);
		return;
	}
#endif
	if (LFPOOL_LIKELY(lfpool_ts_home_pool_(c) == pool)) {
		lfpool_ts_cache_put(c, obj);
		return;
	}
	if (LFPOOL_UNLIKELY(!(c = lfpool_ts_mru_find_(pool))) && !(c = lfpool_ts_dir_find_(pool))) {
		lfpool_ts_put_slow(pool, obj);
		return;
	}
	lfpool_ts_cache_put(c, obj);
}

#ifdef __cplusplus
}
#endif
#endif
