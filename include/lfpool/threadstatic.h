/*
 * lfpool/threadstatic.h - ThreadStatic: per-thread magazines over a
 * lock-free depot (Bonwick & Adams 2001), and explicit cache handles.
 *
 * Synchronization:
 *
 *   call                          may run concurrently with
 *   ---------------------------   ---------------------------------------
 *   ts_get, ts_put, ts_get_bulk,  each other and themselves on any threads
 *   ts_put_bulk, ts_flush,        (each thread uses its own implicit cache)
 *   ts_attach, ts_detach,
 *   ts_prewarm, ts_trim, ts_owns,
 *   ts_stats, cache_create,
 *   worker_cache, worker_release
 *   cache_get, cache_put,         any call above on other threads, but not
 *   cache_get_bulk, cache_put_    with another call on the SAME cache: a
 *   bulk, cache_flush,            cache has one user at a time (it may move
 *   cache_destroy                 between threads, e.g. with a fiber)
 *   ts_create                     nothing on the same pool
 *   ts_destroy                    nothing on the same pool
 *
 * A get or put that hits the caller's magazines runs no atomic
 * read-modify-write.  An object may be put on any thread: it goes into that
 * thread's magazine, and full magazines flow through the depot to whoever
 * gets.  The implicit per-thread caches use __thread storage and are NOT
 * fiber-safe: a fiber that may resume on another thread must use an
 * explicit lfpool_cache (see lfpool_cache_create).
 */
#ifndef LFPOOL_THREADSTATIC_H
#define LFPOOL_THREADSTATIC_H

#include "lfpool/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_ts lfpool_ts;
typedef struct lfpool_cache lfpool_cache;

/* A new pool per cfg (magazine_size, depot_max used here); prewarmed objects
 * go to the shared depot, not the creating thread's magazines.
 * NULL with errno EINVAL or ENOMEM. */
LFPOOL_API lfpool_ts *lfpool_ts_create(const lfpool_config *cfg);
/* Destroy the pool; NULL: no-op.  0, or -1 with errno EBUSY (nothing done)
 * while explicit cache handles still exist. */
LFPOOL_API int lfpool_ts_destroy(lfpool_ts *pool);

/* Through the calling thread's implicit cache. */
LFPOOL_API void *lfpool_ts_get(lfpool_ts *pool);	/* NULL + errno ENOBUFS/ENOMEM */
LFPOOL_API void lfpool_ts_put(lfpool_ts *pool, void *obj);	/* NULL: no-op */
LFPOOL_API int lfpool_ts_get_bulk(lfpool_ts *pool, void **objs, size_t n);	/* all or none */
LFPOOL_API void lfpool_ts_put_bulk(lfpool_ts *pool, void *const *objs, size_t n);
/* Give the calling thread's cached objects back to the depot. */
LFPOOL_API void lfpool_ts_flush(lfpool_ts *pool);
/* Worker start/stop hooks: attach creates the calling thread's cache now
 * (0, or -1 + ENOMEM); detach flushes and frees it (thread exit does too). */
LFPOOL_API int lfpool_ts_attach(lfpool_ts *pool);
LFPOOL_API void lfpool_ts_detach(lfpool_ts *pool);

/* Create n more objects into the depot: 0, or -1 + errno, nothing created. */
LFPOOL_API int lfpool_ts_prewarm(lfpool_ts *pool, size_t n);
/* Give idle memory back: depot magazines beyond the recent working set,
 * then slabs with no live object.  Safe while other threads get and put.
 * Returns the number of objects destroyed. */
LFPOOL_API size_t lfpool_ts_trim(lfpool_ts *pool);
LFPOOL_API int lfpool_ts_owns(const lfpool_ts *pool, const void *ptr);
LFPOOL_API void lfpool_ts_stats(const lfpool_ts *pool, lfpool_stats *st);

/* Explicit cache handles: owned by one worker or fiber at a time. */
LFPOOL_API lfpool_cache *lfpool_cache_create(lfpool_ts *pool);	/* NULL + ENOMEM */
LFPOOL_API void lfpool_cache_destroy(lfpool_cache *cache);	/* flushes; NULL: no-op */
LFPOOL_API void lfpool_cache_flush(lfpool_cache *cache);
LFPOOL_API int lfpool_cache_get_bulk(lfpool_cache *cache, void **objs, size_t n);
LFPOOL_API void lfpool_cache_put_bulk(lfpool_cache *cache, void *const *objs, size_t n);
LFPOOL_API void *lfpool_cache_get_slow(lfpool_cache *cache);
LFPOOL_API void lfpool_cache_put_slow(lfpool_cache *cache, void *obj);

/* Worker-index mode: the cache in slot `worker` (created on first use);
 * release flushes the slot for the next worker that gets the index. */
LFPOOL_API lfpool_cache *lfpool_ts_worker_cache(lfpool_ts *pool, unsigned worker);
LFPOOL_API void lfpool_ts_worker_release(lfpool_ts *pool, unsigned worker);

/* The part of a cache the inline fast path reads; it leads the struct. */
struct lfpool_cache_fast {
	void **objs;		/* loaded magazine */
	uint32_t count;		/* objects a fast get may take */
	uint32_t room;		/* a fast put may push while count < room */
};

static inline void *lfpool_cache_get(lfpool_cache *cache)
{
	struct lfpool_cache_fast *f = (struct lfpool_cache_fast *)cache;
	if (LFPOOL_LIKELY(f->count != 0))
		return f->objs[--f->count];
	return lfpool_cache_get_slow(cache);
}

static inline void lfpool_cache_put(lfpool_cache *cache, void *obj)
{
	struct lfpool_cache_fast *f = (struct lfpool_cache_fast *)cache;
	if (LFPOOL_LIKELY(f->count < f->room && obj != NULL)) {
		f->objs[f->count++] = obj;
		return;
	}
	lfpool_cache_put_slow(cache, obj);
}

#ifdef __cplusplus
}
#endif
#endif
