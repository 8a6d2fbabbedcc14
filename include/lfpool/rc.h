/* SPDX-License-Identifier: MIT */
/*
 * lfpool/rc.h - reference-counted pooled objects.
 *
 * An rc pool keeps its objects in a pool of the chosen flavour.  Each object
 * has a prefix outside the caller's bytes that holds its owner and an
 * atomic 32-bit count, so retain and release need only the object.  get
 * returns an object with a count of 1; the release that takes the count to
 * zero puts the object back into its pool (reset hook, debug checks: as any
 * put of that flavour).
 *
 * Synchronization: with a Concurrent or ThreadStatic pool, every call may
 * run on any threads at once, retain and release on the same object too:
 * the count is changed with atomic read-modify-writes (retain relaxed,
 * release acquire-release, so the last releaser sees every holder's writes
 * before the object is pooled again).  A Pool-flavoured rc pool and its
 * objects belong to one thread, and change counts with plain instructions
 * (no atomics, as the Pool itself).  create and destroy run alone.
 *
 * Debug pools (LFPOOL_F_DEBUG) report a retain or a release of an object
 * whose count already reached zero, and a pointer that is not a counted
 * object.  Release pools pay one compare for that: a magic word next to the
 * count routes debug objects (and strangers) to the checked path.  The
 * count is 32 bits wide and is not checked for overflow.  A retain or
 * release of an object of a destroyed debug pool is reported ("release
 * after destroy") under the pool's name, as long as the pool's slabs are
 * kept (lfpool/common.h: the system allocator, up to 64 MiB); with an
 * allocator of your own the memory went back at destroy, and such a call
 * reads freed memory.  In release pools it is undefined.
 */
#ifndef LFPOOL_RC_H
#define LFPOOL_RC_H

#include "lfpool/common.h"
#include "lfpool/flavour.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_rc lfpool_rc;

/* A pool of counted objects in a pool of flavour, per cfg (obj_size and
 * hooks are the caller's objects'; align at most 4096); NULL with errno
 * EINVAL (no such flavour, cfg NULL or a bad config) or ENOMEM. */
LFPOOL_API lfpool_rc *lfpool_rc_create(lfpool_flavour flavour, const lfpool_config *cfg);
/* Destroy the pool (objects still out are reported by debug pools).  0;
 * NULL: no-op, 0; -1 with errno EINVAL for a pool already destroyed (as
 * lfpool_pool_destroy). */
LFPOOL_API int lfpool_rc_destroy(lfpool_rc *rc);
/* An object with a count of 1, or NULL with errno as the flavour's get. */
LFPOOL_API void *lfpool_rc_get(lfpool_rc *rc);
/* Add a reference to obj, which the caller holds one to.  NULL: no-op. */
LFPOOL_API void lfpool_rc_retain(void *obj);
/* Drop a reference: 1 when it was the last and obj went back to its pool,
 * else 0.  NULL: no-op (0). */
LFPOOL_API int lfpool_rc_release(void *obj);
/* The count now (for assertions; it may change at once). */
LFPOOL_API uint32_t lfpool_rc_count(const void *obj);
/* The flavour's figures for the pool. */
LFPOOL_API void lfpool_rc_stats(const lfpool_rc *rc, lfpool_stats *st);

/* As lfpool_rc_release; the last release, the one that puts obj back,
 * first calls last(obj, span): how the headers' sanitizer annotations see
 * that put.  span: the caller's bytes of obj, and those up to the next
 * object's prefix. */
LFPOOL_API int lfpool_rc_release_with_(void *obj,
					void (*last)(void *obj, struct lfpool_span_ span));

/* See "ThreadSanitizer" and "AddressSanitizer" in lfpool/common.h.  Every
 * release releases, so the last releaser, acquiring them all, carries
 * every holder's writes to its put (a write of the whole object under
 * TSan, the poison under ASan) and on to the next get; the library
 * unpoisons what it hands out. */
#ifdef LFPOOL_SAN_ANNOTATE_
static inline void *lfpool_rc_get_san_(lfpool_rc *rc)
{
	LFPOOL_TSAN_QUIET_BEGIN_();
	void *obj = lfpool_rc_get(rc);
	LFPOOL_TSAN_QUIET_END_();
	LFPOOL_TSAN_ACQUIRE(obj);
	return obj;
}
/* Run by the library, inside lfpool_rc_release_san_'s quiet section. */
static inline void lfpool_rc_last_san_(void *obj, struct lfpool_span_ span)
{
	LFPOOL_TSAN_QUIET_END_();
	LFPOOL_TSAN_ACQUIRE(obj);
	LFPOOL_SAN_PUT_(obj, span);
	LFPOOL_TSAN_RELEASE(obj);
	LFPOOL_TSAN_QUIET_BEGIN_();
}
static inline int lfpool_rc_release_san_(void *obj)
{
	LFPOOL_TSAN_RELEASE(obj);
	LFPOOL_TSAN_QUIET_BEGIN_();
	int last = lfpool_rc_release_with_(obj, lfpool_rc_last_san_);
	LFPOOL_TSAN_QUIET_END_();
	return last;
}
# define lfpool_rc_get lfpool_rc_get_san_
# define lfpool_rc_release lfpool_rc_release_san_
#endif

#ifdef __cplusplus
}
#endif
#endif
