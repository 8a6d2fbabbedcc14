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
 * read-modify-write and takes no lock.  An object may be put on any thread:
 * it goes into that thread's magazine, and full magazines flow through the
 * depot to whoever gets.
 *
 * How it works.  Every cache (implicit per thread, explicit, or worker slot)
 * holds a loaded and a previous magazine of magazine_size object pointers.
 * When both are empty (get) or full (put), the cache swaps one whole
 * magazine with the depot: one CAS on a lock-free stack per magazine moved
 * (a full one one way, an empty one the other), never one per object, so
 * at most 2 / magazine_size atomic operations per get or put.  The depot
 * keeps full and empty magazines, and
 * below them a stack of loose objects that takes prewarmed objects, flushed
 * caches and, once the depot holds depot_max magazines, the overflow of
 * threads that only put (pushed as one chain with one CAS), so such a
 * thread never makes the pool grow (mimalloc#1364).  A get that finds
 * nothing anywhere creates one object.
 *
 * Bounds.  created (objects alive: out with users, in magazines, in the
 * depot) never exceeds the capacity, and every pooled object, in whatever
 * cache or CPU area, is within reach of every get (see Sizing).  The depot holds at most depot_max
 * magazines, full and empty together, so the magazines alive are at most
 * 2 x caches + depot_max.  Memory held from the backing allocator is at most
 *   object slabs:   ceil(capacity / objects per slab) slabs and their side
 *                   data (objects per slab: at least 8, or the
 *                   capacity if smaller), after the small slabs a pool
 *                   sized past one slab grows first (1, 4 and 16 KiB for
 *                   64 B objects; magazines' too: lib/slab.h),
 *   magazine slabs: ceil((2 x caches + depot_max) / magazines per slab)
 *                   slabs of magazine_size pointers each, and side data,
 * where caches is the most caches alive at once (threads that used the
 * pool, explicit caches, worker slots); lfpool_ts_max_bytes computes it.
 * The pool struct (with its first cache inside), each other cache (about
 * 150 bytes; a thread's home cache is in its TLS), each thread's table of
 * its caches and the worker slot tables come from malloc or the library's
 * cache of such blocks, not the allocator.
 * A per-CPU pool (below) caches at most ncpu x 2 x magazine_size objects
 * in its CPU areas, ncpu being the possible CPUs (/sys/devices/system/cpu/
 * possible), plus what its depot holds, as bounded above, with caches
 * counting its explicit caches and worker slots only.  The areas take
 * ncpu x (24 + 16 x magazine_size) bytes, each rounded up to 256, and 384
 * bytes more (to keep their counters off the page offsets of what every
 * get and put reads), from
 * the backing allocator (lfpool_ts_max_bytes adds them): 64 threads on 2
 * CPUs hold 2 x 2 magazines' worth, not 64 x 2.
 *
 * Sizing a bounded pool.  The capacity is exact: a get (or bulk get of n)
 * fails with ENOBUFS only when the pool holds fewer objects than it needs
 * and has created capacity objects, i.e. when every other object is out
 * with a user or with another get that is taking it (or making it: its
 * init hook and the backing allocator may take as long as they like), or
 * a trim of a pool with a fini hook is finalizing it (trim runs fini hooks
 * holding no lock; without one it gives objects back under the pool's
 * steal lock, and a get at capacity finds their room).  Before it fails, a
 * get at capacity steals from every place objects are pooled: the depot's
 * full magazines and loose objects, the loaded and previous magazines of
 * every other cache (implicit caches of live threads, explicit caches,
 * worker slots) and every CPU area of a per-CPU pool, by the stop-and-take
 * protocol of lib/threadstatic/steal.c (the thief locks the cache, stops
 * it, runs membarrier(), takes from the bottom of its magazine and
 * restarts it; CPU areas are closed by a gate word and fenced with
 * membarrier-rseq, or taken under their locks on the fallback path).  So
 * for gets never to fail while at most L objects are out, a capacity of L
 * is enough.  A get that steals waits for other thieves, drains and trims
 * of the same pool (one mutex, never held across a hook: a thief that
 * finds nothing while a per-CPU get or put moves objects between the depot
 * and a CPU area unlocks, yields and looks again, and such moves run no
 * hook and no allocator call) and costs microseconds (one membarrier for
 * all the places it stops, see bench pattern "steal"); the owners of the
 * caches it stops wait in their slow paths meanwhile, never in a hit.
 * Refills adapt: a cache that misses takes loose objects in batches that
 * start at 4 and double while it keeps missing (up to magazine_size),
 * halve when it gives surplus magazines back and start small again after
 * a trim or drain; at capacity a refill takes only what its get needs.
 *
 * Implicit caches.  The first ts_* call of a thread on a pool gives the
 * thread a cache, kept in __thread storage (in a program, initial-exec
 * TLS: no call to __tls_get_addr; in a shared object, one such call per
 * function, so that it and this library may be dlopen()ed late:
 * LFPOOL_TLS_MODEL_ below).
 * ts_get and ts_put are inline.  A thread's first cache (its home; again
 * its next one after that pool's destroy or its detach) lives in the
 * library's TLS block itself: on that pool they compare one pointer and
 * run lfpool_ts_cache_get or _put at a fixed TLS address (11 instructions
 * per call in a loop: `make bench-instr`, figures in bench/results), so
 * a thread should make its
 * first call, or lfpool_ts_attach, on the pool it uses most.  On another
 * pool, when it is the one the thread used last of those, they compare a
 * second pointer and run them on its cache; otherwise they read the
 * thread's cache of the pool from the pool's head (for the first 4
 * threads at a time) or from its directory,
 * indexed by the pool's dense id (a bounds test and a load, still inline),
 * and call out only when it has none.  The directory takes
 * 8 bytes per id up to the highest id the thread used (a new pool takes
 * the lowest free id, so its id is at most the number of other
 * ThreadStatic pools alive when it is created; each size class of an
 * array pool is one).  A thread's first use and lookups
 * cost O(1) however many pools are alive; create and destroy O(log) of
 * the free ids, in a heap of them (destroy: also O(threads)).
 * A thread's first use of a pool calls no malloc while the pool's id is
 * below 8 (fewer than 8 other ThreadStatic pools were alive when it was
 * created, whatever came and went before): its
 * table and its first 8 directory slots lie in the library's TLS, its
 * first cache in its home, the others in the pool's struct or the
 * library's reused blocks.
 * A thread that exits hands its cache back (a pthread key destructor): its
 * objects go to the depot, its two magazines stay with the pool for the
 * next cache to be made (threads that come and go one after another
 * reuse one slab of them; a trim gives unused magazines back).  A key destructor
 * that runs after the library's may still call the pool; those calls keep
 * no cache: a get or bulk get goes through a cache made and freed for the
 * call, a put straight to the depot (slow, but nothing is left behind in
 * the thread's TLS, which glibc then frees).  One case is not covered: a
 * thread whose first call on any ThreadStatic pool comes from a key
 * destructor in glibc's last round (PTHREAD_DESTRUCTOR_ITERATIONS) gets a
 * cache and a thread table that nothing unlinks, as glibc runs no hook
 * after that round; a later destroy of any pool then reads the freed TLS
 * (and may loop forever once a new thread's TLS takes its place).
 * A thread whose key destructors may use a pool should call the library
 * once before it exits (lfpool_ts_attach).  ts_attach and
 * ts_detach do the same at a time of the caller's choosing (worker
 * start/stop hooks).  A thread may use any number of pools.  Implicit
 * caches are NOT fiber-safe: a fiber that may resume on another thread
 * must use an explicit lfpool_ts_cache, which belongs to whoever holds it
 * (jemalloc#2890 is the trap).  The inline calls keep the address of the
 * thread's home cache in a register across the calls of a function
 * (LFPOOL_TS_HOME_AT_ below): code that resumes on another thread inside
 * such a function goes on using the first thread's home cache, with no
 * lock, while that thread uses it too, and loses or duplicates objects.
 *
 * Per-CPU mode.  A pool created with LFPOOL_F_PERCPU keeps no cache per
 * thread: ts_get, ts_put, their bulk forms and ts_flush use an area of
 * 2 x magazine_size object pointers that belongs to the CPU the caller
 * runs on (the loaded and previous magazines of Bonwick's design), and
 * swap whole magazines with the same depot when it runs empty or full.
 * Memory then grows with CPUs, not threads; thread exit has nothing to
 * hand back, and a thread may move between CPUs, or a job between
 * threads, at any time.  On Linux x86-64 with glibc's rseq registration a
 * get or put that stays within the area is a restartable sequence: no
 * atomic instruction, no lock; ts_get and ts_put run it inline (below).  Elsewhere (no registration, as with
 * GLIBC_TUNABLES=glibc.pthread.rseq=0, another architecture, the TSan
 * build) sched_getcpu() picks the area and a spinlock guards it (only
 * threads that share a CPU ever meet on it; a waiter spins a little, then
 * yields its CPU, then sleeps 50 us between tries, so that a holder it
 * preempted on their CPU runs again, SCHED_FIFO included).  lfpool_ts_stats reports
 * which path runs, in percpu_mode.  Capacity, statistics, hooks, debug
 * checks, prewarm and trim are as in per-thread pools; ts_attach and
 * ts_detach do nothing, and explicit caches and worker slots work
 * alongside.
 *
 * Destroy.  ts_destroy fails with EBUSY, doing nothing, while explicit
 * caches made by lfpool_ts_cache_create exist: destroy them first.  The
 * implicit caches of threads still alive and the worker slot caches are
 * reclaimed by destroy; such a thread may keep running and exit later
 * without touching the freed pool.  A thread exit racing with destroy is
 * safe.  Any other call on a destroyed pool is an error (reported for
 * LFPOOL_F_DEBUG pools, undefined otherwise).  Destroy of a per-CPU pool
 * takes the objects of every CPU's area: no thread may use the pool then,
 * as for any destroy.
 *
 * fork().  The child of a fork may use every pool it inherited.  Before
 * fork() the library takes its locks (its registry lock, every per-CPU
 * pool's area spinlocks in the fallback mode, every pool's slab lock) and
 * releases them after, on both sides.  In the child only the forking thread
 * exists: the implicit caches of every other thread are forgotten without
 * being read (a thread may have been half-way through a step): their
 * objects stay counted in created, as out with users, are never handed
 * out again and are not finalized; their memory goes back with the slabs
 * at destroy.  Objects out with those threads, or in flight in a slow path,
 * count as out likewise.  Explicit caches and worker slots belong to no
 * thread and are kept: one that another thread was using at the moment of
 * fork may be half-way through a step, and the child must not use it (nor
 * destroy the pool, which flushes every worker slot); destroy fails with
 * EBUSY while an explicit cache made before the fork exists.
 *
 * Hooks.  The init, fini and reset hooks and the backing allocator are the
 * application's code.  A hook runs holding no lock of the library and
 * inside no grace section (the read-side sections of liburcu-bp whose end
 * a trim that gives slabs back waits for; see "Trim"): init after the raw
 * memory was taken, fini after a trim took its objects out of the depot
 * and let go of its locks.  So a hook may call any pool (a trim or drain of
 * another pool too) and may block, even on a lock that a thread trimming
 * another pool holds.  Exceptions: from a pool's own init hook a get that
 * must create an object fails with EDEADLK, and from its own fini hook a
 * trim or drain of that pool fails with EDEADLK (the step that runs the
 * hook is half done).  The backing allocator does run inside a grace
 * section (a slab grows while raw objects are popped): it must not wait
 * for a thread that trims a ThreadStatic pool, and a ThreadStatic get or
 * put from it fails with EAGAIN or goes to the loose stack as from a signal
 * handler; a trim from it does not wait for itself: it gives back slabs,
 * and their side data stays until a later trim or destroy.
 *
 * Cancellation.  No ThreadStatic call is a cancellation point.  Those that
 * may block or run the application's code (a get or put off the fast
 * path, bulk calls, prewarm, trim, drain, destroy, create with prewarm)
 * run with cancellation off (pthread_setcancelstate) and restore the
 * caller's state on return: a cancel request sent meanwhile acts at the
 * thread's next cancellation point after the call.  So hooks and the
 * allocator cannot be cancelled inside a call, and a trim's grace period
 * (liburcu-bp holds its lock across poll(), a cancellation point) always
 * ends: a thread cancelled there used to leave that lock held, and every
 * later trim and fork() hung.  The rest of the library (Pool, Concurrent)
 * calls no cancellation point of its own; their hooks are run as called.
 *
 * Signal handlers.  A handler may call lfpool_ts_get_signal and
 * lfpool_ts_put_signal on any ThreadStatic pool, whatever it interrupted:
 * they use only the depot's lock-free loose stack (a get there fails at
 * once with EAGAIN when it is empty; prewarm fills it; stress/sc_signals.c
 * checks them against a handler firing inside every get and put).  Of the
 * other calls a handler may call only lfpool_ts_get, lfpool_ts_put,
 * lfpool_ts_get_bulk and lfpool_ts_put_bulk (and the cache calls, on a
 * cache no other code uses meanwhile):
 *
 *   pool and call from a handler   what it does
 *   ----------------------------   ----------------------------------------
 *   per-CPU pool, any of them      works; when it interrupted a step of
 *                                  the same thread that holds a lock or a
 *                                  grace section (a slow path, a trim, a
 *                                  drain, the fallback path's area lock), a
 *                                  get that the area cannot serve fails at
 *                                  once (NULL or -1, errno EAGAIN) and a
 *                                  put that would overflow goes onto the
 *                                  loose stack (lock-free)
 *   per-thread pool that the       as per-CPU (EAGAIN, the loose stack);
 *   interrupted code is not        the handler's hits run on the thread's
 *   inside a get or put hit of     cache, whose fast path the interrupted
 *                                  slow path closes while it holds the
 *                                  cache's lock
 *   per-thread pool whose hit      undefined: a hit is three moves on the
 *   (inline get or put) it         cache's top, not reentrant; use the
 *   interrupted                    _signal calls, block the signal around
 *                                  the thread's own gets and puts of that
 *                                  pool, or give the handlers pools of
 *                                  their own (or per-CPU ones, whose
 *                                  sequences restart on a signal)
 *   any other call                 not async-signal-safe
 *
 * A slow path marks its thread busy while it holds a lock or is inside a
 * grace section, so a handler's call never spins or blocks on its own
 * thread's lock.  A call that interrupted no such step runs as the thread
 * would, and so may create objects (the backing allocator, the init hook)
 * or make the thread's cache (a lock, malloc): for a handler these must
 * be async-signal-safe (an allocator over mmap, say), or avoided (attach
 * the thread with lfpool_ts_attach outside the handler, keep objects
 * pooled).  A handler saves and restores errno around the calls.
 *
 * Misuse in release builds: a put stores any pointer in the caller's
 * magazine unchecked, so a double put hands the object out twice and a
 * foreign pointer corrupts the depot when its magazine is unloaded; two
 * threads on one explicit cache at once lose or duplicate objects.
 *
 * Trim.  lfpool_ts_trim(pool, keep) leaves keep of the depot's objects
 * and its working set (as many full and empty magazines as caches took
 * from the depot since the previous trim), and gives back the other
 * magazines, every other object, and every slab that then holds no object.
 * In a per-CPU pool it first takes every CPU's area (stop and take, from
 * any thread: no flush on each CPU is needed), so those objects are given
 * back too.  Objects in per-thread caches stay (they are the threads'
 * working sets); lfpool_ts_drain moves them to the depot first when the
 * program idles, and a trim after it gives everything back.  Trim and
 * drain may run on any thread while others get and put.  A slab given
 * back takes its side data (a link word and a state byte per object) with
 * it once a grace period has passed (liburcu-bp's synchronize_rcu: the
 * slow paths that pop the pool's stacks read link words inside read-side
 * sections; the get and put fast paths never do), so after a drain and a
 * trim keeping 0 with nothing out a pool holds at most its kept objects
 * and of its backing allocator the kept magazines and the slab directory
 * (32 KiB for each 1,024 slab numbers used, none below 5: 64 KiB at most
 * below 1,024 slabs); with the default allocator slabs of 64 KiB and more (and their
 * side data when it takes 16 KiB or more) are mapped and unmapped directly, smaller ones and their
 * side data go back to a cache of blocks that every pool of the process
 * reuses (kept at the process's peak, as malloc's bins are, and so are
 * destroyed pools' structs, until lfpool_release_memory gives them back).
 * The TSan build keeps side data until destroy.  Magazines' memory needs
 * no grace period: like an object's, it is only ever touched by its owner
 * (the cache that holds it, or the thread whose CAS took it off a depot
 * stack).
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
 * then every slab with no object (see "Trim" in this header).  Objects in threads' caches are neither
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
 * most `caches` caches exist at once (see "Bounds" above); SIZE_MAX for a
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
 * and lfpool_ts_cache_put below (and lfpool_ts_get and lfpool_ts_put
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

/* The part of a cache the inline fast path reads; it leads the struct.
 * The loaded magazine objs[0 .. magazine_size) holds its objects in
 * [low, top): a get takes top[-1], a put stores at top; both read and
 * write only top, and compare it with low or end (pointers: no base to
 * load, no index to scale).  In pools with LFPOOL_F_DEBUG top and low stay
 * at objs and end is NULL (every call is checked), with a reset hook end
 * is NULL (every put runs it).
 *
 * Only the cache's user writes top (and objs, end); a thief (a get of
 * another thread that would otherwise fail, lfpool_ts_drain,
 * lfpool_ts_trim) raises low to take objects from the bottom, by the
 * stop-and-take protocol of lib/threadstatic/steal.c: it stops the cache
 * (low = LFPOOL_CACHE_STOPPED_, above every top), runs membarrier() so
 * that every thread's earlier stores are visible to it and its store is
 * visible to every thread's later loads, reads top and takes objects below
 * it.  That is why a get stores the decremented top BEFORE it reads low
 * (Chase-Lev's take with the fence moved to the thief): either the thief
 * sees the decrement and leaves top[0] alone, or the get sees the raised
 * low and goes to the slow path.  Both accesses are plain moves on
 * x86-64: no atomic read-modify-write, no fence on a hit. */
struct lfpool_ts_cache_fast {
	void **top;		/* one past the top object */
	void **end;		/* a put may store at top while top < end */
	void **low;		/* a get may take p[0] only for p >= low */
	void **objs;		/* the loaded magazine (slow paths) */
	uint64_t gets;		/* successful gets; only the cache's user writes */
};
/* low while a thief holds the cache: no top - 1 reaches it. */
#define LFPOOL_CACHE_STOPPED_ ((void **)~(uintptr_t)0)

/* Count a get.  Only the cache's user writes the counter, and
 * lfpool_ts_stats reads it from other threads: under ThreadSanitizer the
 * store is a relaxed atomic so that the tool sees no race; otherwise a plain
 * increment (one instruction), read by stats as an approximate figure.
 * Puts are not counted on a hit: a hit moves top by one either way, so
 * stats derives them from gets and the objects the cache holds (struct
 * lfpool_ts_cache in lib/threadstatic/ts_internal.h). */
#ifdef LFPOOL_TSAN_
# define LFPOOL_CACHE_COUNT_(n) __atomic_store_n(&(n), (n) + 1, __ATOMIC_RELAXED)
/* TSan does not know membarrier: the get's store and load are sequentially
 * consistent (a plain Dekker against the thief's), which it does see. */
# define LFPOOL_CACHE_DEKKER_ __ATOMIC_SEQ_CST
# define LFPOOL_CACHE_LOW_(f) __atomic_load_n(&(f)->low, __ATOMIC_SEQ_CST)
#else
# define LFPOOL_CACHE_COUNT_(n) ((n)++)
# define LFPOOL_CACHE_DEKKER_ __ATOMIC_RELAXED
/* A plain load after the compiler fence: the same move as a relaxed atomic
 * load on x86-64, but one the compiler folds into the compare (GCC keeps
 * an atomic load a separate instruction). */
# define LFPOOL_CACHE_LOW_(f) ((f)->low)
#endif

/* A get's store of top - 1 into top and t, and a put's store of t + 1
 * after its slot's (release: a plain move on x86-64).  On x86-64 with GCC
 * or Clang, outside ThreadSanitizer, the get is a load, a subtract in the
 * register and a store (one load of top, not the two of a subtract in
 * memory and a load after it: implicit and explicit pairs 1.66 -> 1.55x
 * and 1.38 -> 1.29x the floor's time on AMD Zen 5).  The put stores t + 1
 * from the register that holds the top it loaded, rather than adding 8 in
 * memory: the add in memory makes each pair wait on a second forwarding
 * of top through the store buffer; the store from the register was the
 * faster form on Intel Emerald Rapids, AMD Zen 3 and Zen 5 (up to 3.3x on
 * Emerald Rapids; figures by date and CPU in NEWS, 2026-12-01..02).
 * Pointer arithmetic through uintptr_t: top - 1 may lie before the
 * magazine (an empty one), which only the compare with low reads.
 *
 * The inline asm of this header (here and the per-CPU sequences below) is
 * AT&T syntax only.  Code compiled with -masm=intel defines
 * LFPOOL_NO_INLINE_ASM: the cache's get then takes the C form below and
 * per-CPU pools call the library, the same algorithms (tests/headers-
 * alone.sh builds the inline paths that way).  Both dialects in one
 * template ("{att|intel}") were tried and dropped: GCC counts both texts'
 * lines when it weighs inlining, and a caller that inlined lfpool_ts_get
 * before no longer did (the bench's placement table, medians in fresh
 * clones: the implicit pair 0.45 -> 0.93 ns per operation, per-CPU 1.03
 * -> 1.53; AMD Zen 5, 2026-12-02, commit ac426a0). */
#if defined(__x86_64__) && defined(__LP64__) && defined(__GNUC__) && !defined(LFPOOL_TSAN_) && \
	!defined(LFPOOL_NO_INLINE_ASM)
# define LFPOOL_CACHE_POPPED_(f, t) \
	__asm__("movq %0, %1\n\tsubq $8, %1\n\tmovq %1, %0" : "+m"((f)->top), "=&r"(t))
#else
# define LFPOOL_CACHE_POPPED_(f, t) do { \
		(t) = (void **)((uintptr_t)(f)->top - sizeof(void *)); \
		__atomic_store_n(&(f)->top, (t), LFPOOL_CACHE_DEKKER_); \
	} while (0)
#endif
#define LFPOOL_CACHE_PUSHED_(f, t) __atomic_store_n(&(f)->top, (t) + 1, __ATOMIC_RELEASE)

/* Inline whole wherever they are used: lfpool_ts_get and _put run them at
 * two places (the home cache, another), and GCC would otherwise call the
 * second copy, a call per operation on a pool that is not the home. */
#if defined(__GNUC__)
__attribute__((always_inline)) static inline void *lfpool_ts_cache_get(lfpool_ts_cache *cache);
__attribute__((always_inline)) static inline void lfpool_ts_cache_put(lfpool_ts_cache *cache, void *obj);
#endif

/* An object, or NULL with errno ENOBUFS (at capacity) or ENOMEM (EAGAIN:
 * "Signal handlers").  The
 * top goes down first and low is read after it (see struct
 * lfpool_ts_cache_fast); lfpool_ts_cache_get_slow is entered with top
 * decremented and restores it. */
static inline void *lfpool_ts_cache_get(lfpool_ts_cache *cache)
{
	struct lfpool_ts_cache_fast *f = (struct lfpool_ts_cache_fast *)cache;
	void *obj;
	void **t;
	LFPOOL_CACHE_POPPED_(f, t);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* compiler only: store, then load */
	if (LFPOOL_LIKELY((uintptr_t)t >= (uintptr_t)LFPOOL_CACHE_LOW_(f))) {
		obj = LFPOOL_SLOT_LOAD_(*t);
		LFPOOL_HIT_NONNULL_(obj);
		LFPOOL_CACHE_COUNT_(f->gets);
	} else {
		obj = lfpool_ts_cache_get_slow(cache);
	}
	LFPOOL_SAN_GOT_(obj, lfpool_ts_cache_span_(cache));
	LFPOOL_TSAN_ACQUIRE(obj);
	return obj;
}

/* Give obj back (it may come from any cache of the pool).  NULL: no-op.
 * The slot is written before top (release: a plain move on x86-64), so a
 * thief that reads top reads the slot's object too. */
static inline void lfpool_ts_cache_put(lfpool_ts_cache *cache, void *obj)
{
	struct lfpool_ts_cache_fast *f = (struct lfpool_ts_cache_fast *)cache;
	LFPOOL_SAN_PUT_(obj, lfpool_ts_cache_span_(cache));
	LFPOOL_TSAN_RELEASE(obj);
	void **t = f->top;
	if (LFPOOL_LIKELY((uintptr_t)t < (uintptr_t)f->end && obj != NULL)) {
		LFPOOL_SLOT_STORE_(*t, obj);
		LFPOOL_CACHE_PUSHED_(f, t);
		return;
	}
	lfpool_ts_cache_put_slow(cache, obj);
}

/* Bytes of a thread's home cache (a struct lfpool_ts_cache, whose fast
 * view leads it), checked by the library at compile time. */
#define LFPOOL_TS_HOME_BYTES_ 192

/* The storage of a cache in TLS, which only its thread writes: the home
 * below, and the array home of lfpool/array.h. */
union lfpool_ts_home_ {
	struct lfpool_ts_cache_fast fast;
	unsigned char bytes_[LFPOOL_TS_HOME_BYTES_];
};

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
 * cache pointer.  (Measured on
 * AMD Zen: a get's top - 1 stored in memory and the put's reload of it
 * are forwarded at no cost only when the address's base register holds
 * its value across operations; a cache pointer loaded on every operation,
 * even the same value, made a pair 1.5x slower.)  The most recently used
 * other pool and its cache come next, then the directory.
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
	union lfpool_ts_home_ home __attribute__((aligned(64)));	/* the home cache */
} __attribute__((aligned(64)));
LFPOOL_API extern __thread struct lfpool_ts_tls lfpool_ts_tls_ LFPOOL_TLS_MODEL_;
/* The home cache, at a constant offset from the thread pointer. */
#define LFPOOL_TS_HOME_ ((lfpool_ts_cache *)&lfpool_ts_tls_.home)
/* The calling thread's home cache as a plain pointer, which the compiler
 * computes once per loop (the thread pointer plus the block's offset; the
 * empty asm hides that it is TLS), and the home pool beside it: the home
 * pool's compare, the home cache's accesses and a miss's argument then
 * use one base register, not %fs-relative addresses (an implicit pair
 * 0.66 -> 0.59 ns per operation, Intel Emerald Rapids, 2026-12-01, commit 39429f5). */
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
 * ThreadSanitizer, otherwise plain loads (moves on x86-64 either way). */
#ifdef LFPOOL_TSAN_
# define LFPOOL_TS_HOME_POOL_(c) \
	((const lfpool_ts *)__atomic_load_n(LFPOOL_TS_HOME_POOL_AT_(c), __ATOMIC_RELAXED))
# define LFPOOL_TS_MRU_POOL_() \
	((const lfpool_ts *)__atomic_load_n(&lfpool_ts_tls_.pool, __ATOMIC_RELAXED))
# define LFPOOL_TS_DIR_(id) \
	((lfpool_ts_cache *)__atomic_load_n(&lfpool_ts_tls_.dir[id], __ATOMIC_RELAXED))
# define LFPOOL_TS_BY_THREAD_(f) \
	((lfpool_ts_cache *)__atomic_load_n(&(f)->by_thread[lfpool_ts_tls_.tslot], __ATOMIC_RELAXED))
#else
# define LFPOOL_TS_HOME_POOL_(c) (*LFPOOL_TS_HOME_POOL_AT_(c))
# define LFPOOL_TS_MRU_POOL_() (lfpool_ts_tls_.pool)
# define LFPOOL_TS_DIR_(id) (lfpool_ts_tls_.dir[id])
# define LFPOOL_TS_BY_THREAD_(f) ((f)->by_thread[lfpool_ts_tls_.tslot])
#endif

#include "lfpool/impl/rseq.h"


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
 * branch not taken (a per-CPU pair 1.29 -> 1.02 ns per operation, a home
 * pair unchanged within 2 %; AMD Zen 5, 2026-12-01, commit 631df8c).  No
 * path's correctness depends on the bit: a
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

/* The calling thread's cache of pool from the pool's head or else its
 * directory, made its most recently used entry (owner's stores: cache,
 * then pool, release); NULL when it has none. */
static inline lfpool_ts_cache *lfpool_ts_dir_find_(const lfpool_ts *pool)
{
	const struct lfpool_ts_fast *f = (const struct lfpool_ts_fast *)pool;
	lfpool_ts_cache *c = LFPOOL_TS_BY_THREAD_(f);
	uint32_t id;
	if (LFPOOL_LIKELY((uintptr_t)c == (uintptr_t)pool + LFPOOL_TS_LOCAL_OFFSET_))
		LFPOOL_TS_LOCAL_(pool, c);
	else if (!c && ((id = f->id) >= lfpool_ts_tls_.ndir || !(c = LFPOOL_TS_DIR_(id))))
		return NULL;
	__atomic_store_n(&lfpool_ts_tls_.cache, c, __ATOMIC_RELEASE);
	__atomic_store_n(&lfpool_ts_tls_.pool, pool, __ATOMIC_RELEASE);
	return c;
}


/* lfpool_ts_get and lfpool_ts_put inline whole: GCC's size estimate of
 * their miss paths (the directory, the rseq sequences) would otherwise
 * make it call them, a call per operation on the hit path too. */
#if defined(__GNUC__)
__attribute__((always_inline)) static inline void *lfpool_ts_get(lfpool_ts *pool);
__attribute__((always_inline)) static inline void lfpool_ts_put(lfpool_ts *pool, void *obj);
#endif

/* An object through the calling thread's implicit cache (per-CPU pools:
 * the area of its CPU), or NULL with errno ENOBUFS or ENOMEM (EAGAIN from
 * a signal handler: see "Signal handlers").  Inline for
 * a per-CPU pool whose area serves (told by its address first:
 * LFPOOL_TS_PERCPU_TAG_), the thread's home pool (one compare, then
 * lfpool_ts_cache_get on its cache in TLS), the pool the thread used last
 * of the others (a second compare), and a pool whose cache its head or
 * the thread's directory holds.  The home cache's address is made before
 * the per-CPU test, on every path, so that the compiler computes it once
 * per loop whichever path the loop takes. */
static inline void *lfpool_ts_get(lfpool_ts *pool)
{
	lfpool_ts_cache *c;
	LFPOOL_TS_HOME_AT_(c);
#ifdef LFPOOL_RSEQ_INLINE_
	if (LFPOOL_UNLIKELY((uintptr_t)pool & LFPOOL_TS_PERCPU_TAG_)) {
		void *obj = lfpool_rseq_get_(((const struct lfpool_ts_fast *)pool)->rseq_get);
		if (LFPOOL_LIKELY(obj != NULL)) {
			LFPOOL_SAN_GOT_(obj, lfpool_ts_span_(pool));
			return obj;
		}
		return lfpool_ts_get_slow(pool);
	}
#endif
	if (LFPOOL_LIKELY(LFPOOL_TS_HOME_POOL_(c) == pool))
		return lfpool_ts_cache_get(c);
	if (LFPOOL_LIKELY(LFPOOL_TS_MRU_POOL_() == pool))
		c = lfpool_ts_tls_.cache;
	else if (!(c = lfpool_ts_dir_find_(pool)))
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
	if (LFPOOL_UNLIKELY((uintptr_t)pool & LFPOOL_TS_PERCPU_TAG_)) {
		const struct lfpool_percpu_hot_ *h = ((const struct lfpool_ts_fast *)pool)->rseq_put;
		if (obj) {
			LFPOOL_SAN_PUT_(obj, lfpool_ts_span_(pool));
			if (LFPOOL_LIKELY(lfpool_rseq_put_(h, obj)))
				return;
		}
		lfpool_ts_put_slow(pool, obj);
		return;
	}
#endif
	if (LFPOOL_LIKELY(LFPOOL_TS_HOME_POOL_(c) == pool)) {
		lfpool_ts_cache_put(c, obj);
		return;
	}
	if (LFPOOL_LIKELY(LFPOOL_TS_MRU_POOL_() == pool))
		c = lfpool_ts_tls_.cache;
	else if (!(c = lfpool_ts_dir_find_(pool))) {
		lfpool_ts_put_slow(pool, obj);
		return;
	}
	lfpool_ts_cache_put(c, obj);
}

#ifdef __cplusplus
}
#endif
#endif
