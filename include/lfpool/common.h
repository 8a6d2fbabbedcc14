/* SPDX-License-Identifier: MIT */
/*
 * lfpool/common.h - configuration, hooks, errors and statistics shared by
 * every lfpool flavour.  Include <lfpool.h> rather than this file.
 */
#ifndef LFPOOL_COMMON_H
#define LFPOOL_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LFPOOL_VERSION_MAJOR 0
#define LFPOOL_VERSION_MINOR 1
#define LFPOOL_VERSION_PATCH 0
#define LFPOOL_VERSION_STRING "0.1.0"
/* One integer that grows with every release: 0x00MMmmpp. */
#define LFPOOL_VERSION_NUMBER \
	((LFPOOL_VERSION_MAJOR << 16) | (LFPOOL_VERSION_MINOR << 8) | LFPOOL_VERSION_PATCH)

#if defined(LFPOOL_BUILDING) && defined(__GNUC__)
# define LFPOOL_API __attribute__((visibility("default")))
#else
# define LFPOOL_API
#endif

#if defined(__GNUC__)
# define LFPOOL_LIKELY(x)   __builtin_expect(!!(x), 1)
# define LFPOOL_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* What an inline hit takes from a pool's stack or magazine is an object,
 * never NULL (puts of NULL are no-ops): telling the compiler so removes
 * the caller's NULL test of the result from the hit path. */
# define LFPOOL_HIT_NONNULL_(obj) do { \
		if ((obj) == NULL) \
			__builtin_unreachable(); \
	} while (0)
#else
# define LFPOOL_LIKELY(x)   (x)
# define LFPOOL_UNLIKELY(x) (x)
# define LFPOOL_HIT_NONNULL_(obj) ((void)0)
#endif

/*
 * ThreadSanitizer.  LFPOOL_TSAN_ is defined when this translation unit is
 * built with -fsanitize=thread (gcc: __SANITIZE_THREAD__, clang:
 * __has_feature(thread_sanitizer)).
 *
 * The library's own atomics are invisible to TSan unless the library itself
 * was built with --enable-tsan, so in a user's TSan program linked against
 * the normal library an object put on one thread and got on another would
 * look like a race on the object.  The headers therefore annotate each
 * hand-over in the user's code: a put releases the object
 * (LFPOOL_TSAN_RELEASE, before the object leaves the caller), a get
 * acquires it (LFPOOL_TSAN_ACQUIRE, before the caller touches it) -- the
 * edge the library's own release and acquire make -- and the inline paths
 * read and write magazine slots as relaxed atomics, since the magazines
 * travel between threads through the library too.  A put is also a write
 * of the whole object (__tsan_write_range, before its release), as free
 * is to TSan: an access on another thread that nothing orders before the
 * put is reported as a race with it, as with malloc and free (without
 * it the library's accesses were all TSan saw of a put, and it sees none).
 * Every inline get/put does so, and under TSan the headers replace the
 * out-of-line get, put, bulk, refcount and closure calls by inline
 * wrappers that do the same (the normal library build needs nothing).
 * LFPOOL_NO_TSAN_ANNOTATIONS turns it all off; the library's own sources
 * (LFPOOL_BUILDING) never use it, so its --enable-tsan build checks the
 * real synchronization.  The price: TSan checks no access made by a hook
 * (init, reset, fini) the library runs.
 */
#if defined(__SANITIZE_THREAD__)
# define LFPOOL_TSAN_ 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define LFPOOL_TSAN_ 1
# endif
#endif
#if defined(LFPOOL_TSAN_) && !defined(LFPOOL_BUILDING) && !defined(LFPOOL_NO_TSAN_ANNOTATIONS)
# define LFPOOL_TSAN_ANNOTATE_ 1
#endif

/*
 * AddressSanitizer.  LFPOOL_ASAN_ is defined when this translation unit is
 * built with -fsanitize=address (gcc: __SANITIZE_ADDRESS__, clang:
 * __has_feature(address_sanitizer)).
 *
 * To ASan a pooled object is memory the program still holds, so a read or
 * write after put would go unseen.  The headers therefore poison an
 * object's bytes when the caller puts it, before it enters the pool, and
 * unpoison them when a get hands it out (__asan_poison_memory_region,
 * __asan_unpoison_memory_region), in the caller's code, as the TSan
 * annotations are: every inline get and put, and inline wrappers of the
 * out-of-line calls.  A read or write of a pooled object is then reported
 * as a "use-after-poison", with the stack of the access; ASan keeps no
 * stack for poisoned memory, so the report cannot name the put as a heap
 * use-after-free names the free.  While an object is out, its padding
 * (the bytes from obj_size up to the next object) stays poisoned, and so
 * does an array buffer's slack: a get of n bytes with real NULL leaves the
 * bytes from n up to the class size poisoned (a caller told the real size
 * may use it all); an overflow into either is reported.  An oversize
 * array buffer goes back to the allocator, which ASan watches itself.
 * Counted objects (lfpool/rc.h): the caller's bytes, poisoned by the
 * release that puts the object back.
 *
 * The normal library needs no ASan build for this.  Its links and states
 * lie in side data, never in objects, and its code is not instrumented;
 * where it hands an object to instrumented code -- the user's hooks, and
 * libc's memset and memcpy, which ASan intercepts (debug patterns,
 * LFPOOL_ARRAY_F_CLEAR, a closure's capture) -- it unpoisons the object
 * first, and the memory it gives back (trim, destroy) carries no poison.
 * It finds ASan's runtime through weak references (lib/asan.h).
 * Every translation unit that gets from or puts to a pool should be built
 * alike: an object put by annotated code and got by an inline get in code
 * built without ASan stays poisoned, and that code's libc calls on it are
 * reported.  A put that a debug pool refuses (double put, foreign pointer)
 * leaves the bytes it was given poisoned.  LFPOOL_NO_ASAN_ANNOTATIONS
 * turns it all off; the library's own sources (LFPOOL_BUILDING) never use
 * it (its --enable-asan build poisons debug pools' objects itself).
 */
#if defined(__SANITIZE_ADDRESS__)
# define LFPOOL_ASAN_ 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define LFPOOL_ASAN_ 1
# endif
#endif
#if defined(LFPOOL_ASAN_) && !defined(LFPOOL_BUILDING) && !defined(LFPOOL_NO_ASAN_ANNOTATIONS)
# define LFPOOL_ASAN_ANNOTATE_ 1
#endif
#if defined(LFPOOL_TSAN_ANNOTATE_) || defined(LFPOOL_ASAN_ANNOTATE_)
# define LFPOOL_SAN_ANNOTATE_ 1
#endif

/* The bytes of an object and those from it to the next (size, then the
 * padding up to the alignment), as each pool's lfpool_*_span_ says: for
 * the sanitizer annotations, which the library tells each pool's. */
struct lfpool_span_ {
	size_t size;
	size_t stride;
};

/*
 * What a put and a get are to the sanitizer: obj (a pointer expression,
 * evaluated twice; NULL: nothing), whose span (struct lfpool_span_,
 * evaluated only for an object, and only under a sanitizer: a call into
 * the library) is span, is put (ASan: poisoned, the padding too, which
 * ASan can poison only with the object's last bytes; TSan: written) or
 * got (ASan: unpoisoned, the padding poisoned, so that an overflow into it
 * is reported).  LFPOOL_SAN_SLACK_: a get of n bytes of a buffer of size
 * leaves [n, size) past buf poisoned (ASan).  Not sanitizing, all three
 * are nothing, their arguments unevaluated.
 */
#ifdef LFPOOL_ASAN_ANNOTATE_
/* The AddressSanitizer runtime's (sanitizer/asan_interface.h). */
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
static inline void lfpool_asan_put_(const void *obj, struct lfpool_span_ s)
{
	__asan_poison_memory_region(obj, s.stride);
}
static inline void lfpool_asan_got_(const void *obj, struct lfpool_span_ s)
{
	__asan_unpoison_memory_region(obj, s.size);
	if (s.stride > s.size)
		__asan_poison_memory_region((const char *)obj + s.size, s.stride - s.size);
}
# define LFPOOL_SAN_PUT_(obj, span) ((obj) ? lfpool_asan_put_((obj), (span)) : (void)0)
# define LFPOOL_SAN_GOT_(obj, span) ((obj) ? lfpool_asan_got_((obj), (span)) : (void)0)
# define LFPOOL_SAN_SLACK_(buf, n, size) ((n) < (size) ? \
	__asan_poison_memory_region((const char *)(buf) + (n), (size) - (n)) : (void)0)
#elif defined(LFPOOL_TSAN_ANNOTATE_)
/* The ThreadSanitizer runtime's (a built-in function of GCC's, whose
 * size is a signed integer of a pointer's width). */
void __tsan_write_range(void *addr, ptrdiff_t size);
# define LFPOOL_SAN_PUT_(obj, span) \
	((obj) ? __tsan_write_range((void *)(obj), (ptrdiff_t)(span).size) : (void)0)
# define LFPOOL_SAN_GOT_(obj, span) ((void)0)
# define LFPOOL_SAN_SLACK_(buf, n, size) ((void)0)
#else
# define LFPOOL_SAN_PUT_(obj, span) ((void)0)
# define LFPOOL_SAN_GOT_(obj, span) ((void)0)
# define LFPOOL_SAN_SLACK_(buf, n, size) ((void)0)
#endif

#ifdef LFPOOL_TSAN_ANNOTATE_
/* The ThreadSanitizer runtime's (sanitizer/tsan_interface.h). */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
/* obj (a pointer expression, evaluated twice; NULL: nothing) changes hands. */
# define LFPOOL_TSAN_ACQUIRE(obj) ((obj) ? __tsan_acquire((void *)(obj)) : (void)0)
# define LFPOOL_TSAN_RELEASE(obj) ((obj) ? __tsan_release((void *)(obj)) : (void)0)
/* A magazine slot (an lvalue, evaluated once) read and written by inline code. */
# define LFPOOL_SLOT_LOAD_(slot) __atomic_load_n(&(slot), __ATOMIC_RELAXED)
# define LFPOOL_SLOT_STORE_(slot, v) __atomic_store_n(&(slot), (v), __ATOMIC_RELAXED)
/* Around a call into the library: TSan ignores the memory accesses it makes
 * (libc's memcpy/memset there are intercepted, and the hooks it runs are
 * the user's): the objects are the caller's then, and the magazines move
 * between threads through atomics TSan cannot see. */
# define LFPOOL_TSAN_QUIET_BEGIN_() __tsan_ignore_thread_begin()
# define LFPOOL_TSAN_QUIET_END_() __tsan_ignore_thread_end()
#else
# define LFPOOL_TSAN_ACQUIRE(obj) ((void)0)
# define LFPOOL_TSAN_RELEASE(obj) ((void)0)
# define LFPOOL_SLOT_LOAD_(slot) (slot)
# define LFPOOL_SLOT_STORE_(slot, v) ((slot) = (v))
# define LFPOOL_TSAN_QUIET_BEGIN_() ((void)0)
# define LFPOOL_TSAN_QUIET_END_() ((void)0)
#endif

#ifdef LFPOOL_SAN_ANNOTATE_
/* n objects of one span got (bulk), or put. */
static inline void lfpool_san_got_n_(void *const *objs, size_t n, struct lfpool_span_ span)
{
	(void)span;	/* ASan's */
	for (size_t i = 0; i < n; i++) {
		LFPOOL_SAN_GOT_(objs[i], span);
		LFPOOL_TSAN_ACQUIRE(objs[i]);
	}
}

static inline void lfpool_san_put_n_(void *const *objs, size_t n, struct lfpool_span_ span)
{
	for (size_t i = 0; i < n; i++) {
		LFPOOL_SAN_PUT_(objs[i], span);
		LFPOOL_TSAN_RELEASE(objs[i]);
	}
}

/* Wrappers, named fn_san_, of out-of-line calls, quiet under TSan as
 * above: a get of one object (returning R), a put of one (of type T), the
 * bulk forms, with span(pool) the span of an object, and a call of one
 * argument A returning R (prewarm, trim).  A header defines them and then
 * `#define fn fn_san_`. */
# define LFPOOL_SAN_WRAP_GET_(fn, R, P, span)						\
	static inline R fn##_san_(P pool)						\
	{										\
		LFPOOL_TSAN_QUIET_BEGIN_();						\
		R obj = fn(pool);							\
		LFPOOL_TSAN_QUIET_END_();						\
		LFPOOL_SAN_GOT_(obj, span(pool));					\
		LFPOOL_TSAN_ACQUIRE(obj);						\
		return obj;								\
	}
# define LFPOOL_SAN_WRAP_PUT_(fn, P, T, span)						\
	static inline void fn##_san_(P pool, T obj)					\
	{										\
		LFPOOL_SAN_PUT_(obj, span(pool));					\
		LFPOOL_TSAN_RELEASE(obj);						\
		LFPOOL_TSAN_QUIET_BEGIN_();						\
		fn(pool, obj);								\
		LFPOOL_TSAN_QUIET_END_();						\
	}
# define LFPOOL_SAN_WRAP_BULK_(get, put, P, span)					\
	static inline int get##_san_(P pool, void **objs, size_t n)			\
	{										\
		LFPOOL_TSAN_QUIET_BEGIN_();						\
		int rc = get(pool, objs, n);						\
		LFPOOL_TSAN_QUIET_END_();						\
		if (rc == 0 && n)							\
			lfpool_san_got_n_(objs, n, span(pool));				\
		return rc;								\
	}										\
	static inline void put##_san_(P pool, void *const *objs, size_t n)		\
	{										\
		if (n)									\
			lfpool_san_put_n_(objs, n, span(pool));				\
		LFPOOL_TSAN_QUIET_BEGIN_();						\
		put(pool, objs, n);							\
		LFPOOL_TSAN_QUIET_END_();						\
	}
# define LFPOOL_SAN_WRAP_CALL_(fn, R, P, A)						\
	static inline R fn##_san_(P pool, A a)						\
	{										\
		LFPOOL_TSAN_QUIET_BEGIN_();						\
		R r = fn(pool, a);							\
		LFPOOL_TSAN_QUIET_END_();						\
		return r;								\
	}
#endif

/* The library's version string, e.g. "0.1.0"; may differ from the header's. */
LFPOOL_API const char *lfpool_version(void);

/*
 * Backing allocator for slabs.  alloc returns size bytes aligned to align
 * (a power of two, at least sizeof(void *)) or NULL; free gets the same size.
 * Both may be called from any thread that uses a concurrent pool.
 */
typedef struct lfpool_allocator {
	void *(*alloc)(size_t size, size_t align, void *ctx);
	void (*free)(void *ptr, size_t size, void *ctx);
	void *ctx;
} lfpool_allocator;

/*
 * Object hooks.  init runs once when the pool creates an object, fini once
 * when the pool destroys it (trim, destroy); reset runs on every put, before
 * the object is pooled again.  The pool itself never writes into an object,
 * so what init set up survives every put and get.  What a hook may do
 * (block, call other pools) and how cancellation and signal handlers meet
 * the calls: lfpool/ts.h, "Hooks", "Cancellation", "Signal handlers".
 */
typedef void (*lfpool_hook_fn)(void *obj, void *ctx);

/* Flags for lfpool_config.flags. */
#define LFPOOL_F_DEBUG 0x1u	/* check every put; see lfpool_set_error_hook */
/* ThreadStatic only: cache per CPU, not per thread (lfpool/ts.h,
 * "Per-CPU mode"); the other flavours refuse it (EINVAL). */
#define LFPOOL_F_PERCPU 0x2u

typedef struct lfpool_config {
	size_t obj_size;	/* bytes per object; required, > 0, at most
				 * 512 MiB, and a slab of min(capacity, 8)
				 * of them (8 when unbounded), rounded up
				 * to align, must fit in 2 GiB with its
				 * header: unbounded, at most 256 MiB - align
				 * for align >= 8, 256 MiB - 3 or - 4 below
				 * (else EINVAL) */
	size_t align;		/* power of two; 0 means 16 */
	size_t capacity;	/* most objects ever alive at once; 0 = unbounded */
	size_t prewarm;		/* objects created by create(); <= capacity */
	lfpool_hook_fn init, reset, fini;
	void *hook_ctx;
	const lfpool_allocator *allocator;	/* NULL: the system's */
	unsigned flags;		/* LFPOOL_F_* */
	const char *name;	/* shown in error messages; copied */
	/* ThreadStatic only; 0 picks the default. */
	unsigned magazine_size;	/* object pointers per magazine */
	unsigned depot_max;	/* most full magazines kept in the depot */
} lfpool_config;

/*
 * errno values that lfpool sets:
 *   EINVAL   bad configuration or argument; a call on a destroyed debug pool;
 *            a Pool or Concurrent pool given to lfpool_ts_cache_create
 *   ENOMEM   the backing allocator failed, or returned memory not aligned
 *            as asked (given back at once), or more objects were asked for
 *            than the pool can ever hold (2^32 at most)
 *   ENOBUFS  the pool is at its capacity: every object it may create is out
 *            (ThreadStatic: or being made by another get, or finalized by a
 *            trim; a get never waits for another thread's hook)
 *   EBUSY    (ThreadStatic destroy) caches are still attached
 *   EAGAIN   (ThreadStatic) a get from a signal handler that interrupted a
 *            step of the same thread and would need a slow path
 *            (lfpool/ts.h, "Signal handlers"); try again outside it
 *   EDEADLK  a get from the pool's own init hook that would have to create
 *            an object (each new object would want another); a
 *            ThreadStatic trim or drain from the pool's own fini hook
 *            (a trim of that pool may be running the hook).  Other hooks
 *            may get from and put to their own pool; a get from a fini
 *            hook at capacity fails with ENOBUFS at once (the trim
 *            running the hook holds the objects it finalizes)
 * Every size sum is checked (a count never wraps), and a call that fails
 * hands out nothing, creates no object and keeps no slab of objects it
 * grew.  What it set up for later calls may stay until destroy: in pools
 * that threads share (Concurrent, ThreadStatic), a slab directory leaf
 * (32 KiB of slab addresses; past 1024 slabs, the 512 bytes of the table
 * of leaves too), which other threads may read at any time, and a
 * ThreadStatic thread's cache.
 *
 * Hooks and destroy.  A fini hook may put objects back while destroy runs:
 * destroy finalizes those too.
 *
 * fork().  The child may use every pool it inherited, whatever the other
 * threads were doing: pthread_atfork handlers take every lock of the
 * library before fork() in a fixed order and release them on both sides.
 * What a vanished thread held (objects out with it, a ThreadStatic
 * thread's cache, the objects a trim or a slow path of it had in hand)
 * stays counted as out, and a get at capacity fails with ENOBUFS rather
 * than wait for them; see lfpool/ts.h.  A program's own pthread_atfork
 * handler that calls a pool must be installed after the first create of
 * a pool of that flavour: prepare handlers run in the reverse order of
 * installation, so it then runs before the library takes its locks (and
 * its parent and child handlers after the library lets them go).
 */

/*
 * The debug checks (LFPOOL_F_DEBUG) report through this hook: pool is the
 * pool's name, ptr the offending pointer, problem a sentence naming it
 * ("double put", "pointer not from this pool", "get after destroy", ...).
 * The default prints one line to stderr and aborts.  A hook that returns
 * makes the call a no-op.  Destroy of a debug pool with objects still out
 * reports "destroyed with N objects still out" (ptr: the pool) here too;
 * for that one the default prints the line and returns.  A debug pool is
 * kept after destroy (with the system allocator, up to 64 MiB of its slabs
 * too, poisoned under ASan) until exit, so that every later call on it or
 * on one of its objects is reported under its name, not undefined.
 *
 * The hook may run while the reporting pool holds one of its locks (a
 * misaligned block is reported while the pool grows): it must not call
 * that pool, nor destroy it.
 *
 * What misuse costs without the checks (release pools): the fast paths test
 * nothing, so a double put hands one object out twice, a foreign or interior
 * pointer corrupts the pool, and a call on a destroyed pool is undefined.
 * Every hook (init, reset, fini, the error hook) must return to its caller:
 * a longjmp or a C++ exception out of one leaves the pool (and the
 * thread's later calls) undefined.  During destroy a fini hook may put objects
 * back (destroy finalizes them too), but a get is a call on a pool being
 * destroyed: undefined (ThreadStatic pools report it as a get after
 * destroy).
 */
typedef void (*lfpool_error_fn)(const char *pool, const void *ptr,
				const char *problem, void *ctx);
/*
 * Replace the error hook for the process (NULL restores the default).
 * A create refused with EINVAL (every flavour's, an array pool's, a
 * layer's; debug or not) tells the installed hook which field and why:
 * pool is the configured name (or the flavour's: "pool", "concurrent",
 * "threadstatic", "array", "rc", "closure"), ptr NULL, problem e.g. "align
 * 48 is not a power of two"; the create then returns NULL with errno
 * EINVAL whatever the hook does.  With no hook installed nothing is
 * printed, unless LFPOOL_DEBUG=1 (lfpool.h, "Environment"): then one line on
 * stderr.
 */
LFPOOL_API void lfpool_set_error_hook(lfpool_error_fn fn, void *ctx);

/*
 * Give the memory that the process's pools no longer use back to the
 * system, as malloc_trim does for malloc; returns the bytes given back.
 * With the default allocator, slabs under 64 KiB, their side data and
 * directory leaves, and pools' own structs (up to 16 KiB) come from 64 KiB
 * and 256 KiB mappings shared by every pool, and a block freed (by trim
 * or destroy) is kept for the next pool: O(1) without a system call, but
 * the process keeps that memory at its peak (say after 10^5 pools were
 * created and destroyed) until this call.  It unmaps every such mapping
 * none of whose blocks is in use, and gives back (MADV_DONTNEED) the pages
 * of the other kept blocks of a page or more; smaller kept blocks in a
 * mapping still in use stay.  The blocks stay usable: the next pools
 * take them (their pages fault in again, zeroed), or new mappings, as
 * before.  Each byte is counted once: a second call with nothing freed in
 * between returns 0.  Call it when a burst of pools is over, not on a hot
 * path: it sorts each size's kept blocks and holds the lock their
 * allocations share meanwhile (a get or put that a cache, stack or area
 * serves goes on; one that grows a pool, and a trim, create or destroy,
 * waits).  Slabs of 64 KiB and more are unmapped when freed and need no
 * call.  Builds with AddressSanitizer (--enable-asan) keep no such blocks
 * (malloc's): the call returns 0 there.  Any thread, any time.
 * A pool destroyed before the call may have its struct unmapped by it:
 * any later call on that pool faults (a second destroy, which a release
 * build otherwise reports with EINVAL while no new pool took its memory,
 * included); debug pools are kept (buried) and still report it.
 */
LFPOOL_API size_t lfpool_release_memory(void);

/*
 * A snapshot of a pool's counters, filled on request.  Not for the data
 * path: concurrent flavours sum per-thread counters, so the figures of a pool
 * in use are approximate and consistent only once it is quiet.
 */
typedef struct lfpool_stats {
	uint64_t gets, puts;		/* successful calls */
	uint64_t hits, misses;		/* gets served from cache / slow path */
	uint64_t mag_exchanges;		/* ThreadStatic: magazine swaps with the depot */
	uint64_t cas_retries;		/* failed CAS on the shared stacks.
					 * Concurrent: its gets' and puts' on
					 * the free stack, counted once a call
					 * is done, on the line its retries use
					 * (lfpool/concurrent.h).  Others: not
					 * counted, always 0 (a counter would be
					 * one more atomic on a contended line) */
	uint64_t slab_allocs, slab_frees;
	uint64_t trims;
	uint64_t created;		/* objects alive: out with users or pooled */
	uint64_t retained;		/* of those, pooled (free lists, caches, depot) */
	uint64_t live;			/* of those, out with users */
	/* Bytes held now of the pool's backing allocator: slabs, their side
	 * data and directory, ThreadStatic's magazines and CPU areas, Pool's
	 * item array.  Not the pool's own struct, nor what a small pool keeps
	 * in the same block (Pool's item array, the first slab's side data). */
	uint64_t bytes_held;
	/* ThreadStatic per-CPU pools: which fast path this process runs,
	 * "rseq" (restartable sequences) or "sched_getcpu" (a per-CPU lock);
	 * NULL for every other pool. */
	const char *percpu_mode;
	/* Concurrent: gets and puts that failed a CAS on the free stack and
	 * then met each other in its elimination array, which exchanged the
	 * object without the stack (two per exchange); 0 in other pools. */
	uint64_t eliminated;
} lfpool_stats;

#ifdef __cplusplus
}
#endif
#endif
