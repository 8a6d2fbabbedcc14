/* SPDX-License-Identifier: MIT */
/*
 * lfpool/closure.h - pooled closures: a function and its captured bytes in
 * one pooled object, taken, invoked and released without any allocation.
 *
 * A closure pool fixes the capture size of its closures.  get copies the
 * caller's capture (any struct up to that size) into the closure; invoke
 * calls fn(capture, arg); release puts the closure back.  With a
 * ThreadStatic pool, a worker may take closures from its own lfpool_ts_cache
 * (lfpool_closure_get_cache: inline, no atomic on a cache hit) and any
 * worker may release them, into its own cache or through lfpool_closure_
 * release.
 *
 * Synchronization: that of the flavour; a closure has one user at a time
 * (whoever got it, then whoever it was handed to).
 */
#ifndef LFPOOL_CLOSURE_H
#define LFPOOL_CLOSURE_H

#include <errno.h>
#include <string.h>

#include "lfpool/common.h"
#include "lfpool/flavour.h"
#include "lfpool/ts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a closure runs: its own capture, and the argument of invoke. */
typedef void (*lfpool_closure_fn)(void *capture, void *arg);

/* A closure: fn, then (at the next 16-byte boundary) the capture bytes. */
typedef struct lfpool_closure {
	lfpool_closure_fn fn;
} __attribute__((aligned(16))) lfpool_closure;

/* c's capture: 16-byte aligned, the pool's capture size long. */
static inline void *lfpool_closure_capture(lfpool_closure *c)
{
	return c + 1;
}

typedef struct lfpool_closure_pool lfpool_closure_pool;

/* The part of a closure pool that the inline calls read; it leads the struct. */
struct lfpool_closure_pool_fast {
	size_t capture_size;
};

/*
 * A pool of closures in a pool of flavour, per cfg: obj_size is the capture
 * size (0: closures capture nothing), align a power of two of at most 16
 * (closures are aligned to 16 whatever it is), no hooks; capacity,
 * prewarm, allocator, flags and name as for any pool.  NULL with errno
 * EINVAL (no such flavour, cfg NULL or a bad config) or ENOMEM.
 */
LFPOOL_API lfpool_closure_pool *lfpool_closure_pool_create(lfpool_flavour flavour,
							   const lfpool_config *cfg);
/* Destroy the pool: 0, or -1 with errno EBUSY (ThreadStatic: cache handles
 * still exist; nothing done).  NULL: no-op. */
LFPOOL_API int lfpool_closure_pool_destroy(lfpool_closure_pool *cp);
/* A closure running fn with a copy of size bytes at capture; NULL with errno
 * EINVAL (fn NULL, size above the pool's capture size) or as the flavour's
 * get. */
LFPOOL_API lfpool_closure *lfpool_closure_get(lfpool_closure_pool *cp, lfpool_closure_fn fn,
					      const void *capture, size_t size);
/* Give c back to cp.  NULL: no-op. */
LFPOOL_API void lfpool_closure_release(lfpool_closure_pool *cp, lfpool_closure *c);
/* The ThreadStatic pool under cp, for lfpool_ts_cache_create and worker
 * caches; NULL with errno EINVAL when cp is of another flavour (or, reported,
 * a destroyed debug pool). */
LFPOOL_API lfpool_ts *lfpool_closure_pool_ts(const lfpool_closure_pool *cp);
/* The flavour's figures for the pool. */
LFPOOL_API void lfpool_closure_pool_stats(const lfpool_closure_pool *cp, lfpool_stats *st);

/* See "ThreadSanitizer" and "AddressSanitizer" in lfpool/common.h: a
 * release is a put of the whole closure; the library unpoisons the
 * closures it hands out before it writes them. */
#ifdef LFPOOL_SAN_ANNOTATE_
/* A closure's span: fn and the capture, in 16-byte steps. */
static inline struct lfpool_span_ lfpool_closure_span_(const lfpool_closure_pool *cp)
{
	const struct lfpool_closure_pool_fast *f = (const struct lfpool_closure_pool_fast *)cp;
	size_t size = sizeof(lfpool_closure) + f->capture_size;
	struct lfpool_span_ s = { size, (size + 15) & ~(size_t)15 };
	return s;
}
static inline lfpool_closure *lfpool_closure_get_san_(lfpool_closure_pool *cp,
						       lfpool_closure_fn fn,
						       const void *capture, size_t size)
{
	LFPOOL_TSAN_QUIET_BEGIN_();
	lfpool_closure *c = lfpool_closure_get(cp, fn, capture, size);
	LFPOOL_TSAN_QUIET_END_();
	LFPOOL_TSAN_ACQUIRE(c);
	return c;
}
LFPOOL_SAN_WRAP_PUT_(lfpool_closure_release, lfpool_closure_pool *, lfpool_closure *,
		     lfpool_closure_span_)
# define lfpool_closure_get lfpool_closure_get_san_
# define lfpool_closure_release lfpool_closure_release_san_
#endif

/* Whether a closure of fn with size capture bytes may come from cp; if not,
 * errno is EINVAL. */
static inline int lfpool_closure_fits(const lfpool_closure_pool *cp, lfpool_closure_fn fn,
				      size_t size)
{
	if (LFPOOL_LIKELY(fn != NULL &&
			  size <= ((const struct lfpool_closure_pool_fast *)cp)->capture_size))
		return 1;
	errno = EINVAL;
	return 0;
}

/* Set c (if not NULL) to run fn with a copy of size bytes at capture. */
static inline lfpool_closure *lfpool_closure_arm(lfpool_closure *c, lfpool_closure_fn fn,
						 const void *capture, size_t size)
{
	if (LFPOOL_LIKELY(c != NULL)) {
		c->fn = fn;
		if (size)
			memcpy(lfpool_closure_capture(c), capture, size);
	}
	return c;
}

/* Run c: fn(capture, arg).  c stays the caller's. */
static inline void lfpool_closure_invoke(lfpool_closure *c, void *arg)
{
	c->fn(lfpool_closure_capture(c), arg);
}

/* Run c, then give it back to cp. */
static inline void lfpool_closure_run(lfpool_closure_pool *cp, lfpool_closure *c, void *arg)
{
	lfpool_closure_invoke(c, arg);
	lfpool_closure_release(cp, c);
}

/* As lfpool_closure_get, from an explicit cache of cp's ThreadStatic pool. */
static inline lfpool_closure *lfpool_closure_get_cache(const lfpool_closure_pool *cp,
						       lfpool_ts_cache *cache, lfpool_closure_fn fn,
						       const void *capture, size_t size)
{
	if (!lfpool_closure_fits(cp, fn, size))
		return NULL;
	return lfpool_closure_arm((lfpool_closure *)lfpool_ts_cache_get(cache), fn, capture, size);
}

/* Give c back into an explicit cache of its pool's ThreadStatic pool (any
 * worker's: it need not be the cache c came from).  NULL: no-op. */
static inline void lfpool_closure_release_cache(lfpool_ts_cache *cache, lfpool_closure *c)
{
	lfpool_ts_cache_put(cache, c);
}

#ifdef __cplusplus
}
#endif
#endif
