/* SPDX-License-Identifier: MIT */
/*
 * lfpool/concurrent.h - Concurrent: one lock-free stack shared by all threads.
 *
 * Synchronization:
 *
 *   call                       may run concurrently with
 *   ------------------------   ------------------------------------------
 *   get, put, get_bulk,        each other and themselves, on any threads
 *   put_bulk, prewarm, trim,
 *   owns, stats
 *   create                     nothing on the same pool (it makes it)
 *   destroy                    nothing on the same pool: every other call
 *                              must have returned
 *
 * get and put are lock-free: each is one CAS on the shared head when it
 * does not contend (an uncontended get+put pair is exactly two CAS), with
 * exponential backoff when it does.  The head is an object index and a
 * 64-bit tag changed by one double-width CAS, so the stack is ABA-safe (a
 * stale CAS would need 2^64 changes of the head).  A get that
 * must create an object takes a lock only to add a slab (once per slab).
 * A put never allocates.
 */
#ifndef LFPOOL_CONCURRENT_H
#define LFPOOL_CONCURRENT_H

#include "lfpool/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_concurrent lfpool_concurrent;

/* A new pool per cfg, prewarmed; NULL with errno EINVAL or ENOMEM. */
LFPOOL_API lfpool_concurrent *lfpool_concurrent_create(const lfpool_config *cfg);
/* Fini every pooled object and free all memory.  NULL: no-op. */
LFPOOL_API void lfpool_concurrent_destroy(lfpool_concurrent *pool);
/* An object, or NULL with errno ENOBUFS (at capacity) or ENOMEM. */
LFPOOL_API void *lfpool_concurrent_get(lfpool_concurrent *pool);
/* Give obj back.  NULL: no-op.  Never allocates. */
LFPOOL_API void lfpool_concurrent_put(lfpool_concurrent *pool, void *obj);
/* n objects into objs, all or none: 0, or -1 with errno as get. */
LFPOOL_API int lfpool_concurrent_get_bulk(lfpool_concurrent *pool, void **objs, size_t n);
/* Put n objects (NULL entries are skipped). */
LFPOOL_API void lfpool_concurrent_put_bulk(lfpool_concurrent *pool, void *const *objs, size_t n);
/* Create n more objects and pool them: 0, or -1 with errno (ENOBUFS,
 * ENOMEM) and nothing created. */
LFPOOL_API int lfpool_concurrent_prewarm(lfpool_concurrent *pool, size_t n);
/* Destroy pooled objects beyond keep and give wholly free slabs back;
 * returns the number destroyed.  Safe while other threads get and put. */
LFPOOL_API size_t lfpool_concurrent_trim(lfpool_concurrent *pool, size_t keep);
/* Whether ptr is the start of one of this pool's objects. */
LFPOOL_API int lfpool_concurrent_owns(const lfpool_concurrent *pool, const void *ptr);
/* Fill *st (retained walks the free stack: exact only when quiet).  gets,
 * puts, hits and cas_retries stay 0: a Concurrent pool has no per-thread
 * state, and a shared counter would be an atomic on every get and put. */
LFPOOL_API void lfpool_concurrent_stats(const lfpool_concurrent *pool, lfpool_stats *st);

#ifdef LFPOOL_TSAN_ANNOTATE_	/* see "ThreadSanitizer" in lfpool/common.h */
LFPOOL_TSAN_WRAP_GET_(lfpool_concurrent_get, void *, lfpool_concurrent *)
LFPOOL_TSAN_WRAP_PUT_(lfpool_concurrent_put, lfpool_concurrent *, void *)
LFPOOL_TSAN_WRAP_BULK_(lfpool_concurrent_get_bulk, lfpool_concurrent_put_bulk, lfpool_concurrent *)
LFPOOL_TSAN_WRAP_CALL_(lfpool_concurrent_prewarm, int, lfpool_concurrent *, size_t)
LFPOOL_TSAN_WRAP_CALL_(lfpool_concurrent_trim, size_t, lfpool_concurrent *, size_t)
# define lfpool_concurrent_get lfpool_concurrent_get_tsan_
# define lfpool_concurrent_put lfpool_concurrent_put_tsan_
# define lfpool_concurrent_get_bulk lfpool_concurrent_get_bulk_tsan_
# define lfpool_concurrent_put_bulk lfpool_concurrent_put_bulk_tsan_
# define lfpool_concurrent_prewarm lfpool_concurrent_prewarm_tsan_
# define lfpool_concurrent_trim lfpool_concurrent_trim_tsan_
#endif

#ifdef __cplusplus
}
#endif
#endif
