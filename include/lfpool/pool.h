/* SPDX-License-Identifier: MIT */
/*
 * lfpool/pool.h - Pool: the single-threaded flavour.
 *
 * Synchronization: none.  A Pool belongs to one thread at a time; every call
 * on one Pool must be serialized by the caller.  Distinct Pools are
 * independent.  A get or put that hits runs no atomic instruction and
 * takes no lock.  Memory is shared with other pools, though: a get that
 * grows the Pool, prewarm, trim, create and destroy take the lock of the
 * library's cache of small blocks (lfpool/common.h,
 * lfpool_release_memory) and count the slabs' bytes with relaxed atomic
 * adds, as every flavour does.
 *
 * get and put are inline: a hit is a bounds test and an array access.  The
 * rare cases (empty pool, reset hook, debug checks) go to exported
 * functions.
 *
 * Misuse in release builds: the inline put stores any pointer, so a double
 * put hands the object out twice and a foreign pointer is handed out as an
 * object; more puts than gets are refused (error hook) only once the item
 * array is full.  A call after destroy is undefined (reported, with the
 * Pool's name, in debug pools).
 */
#ifndef LFPOOL_POOL_H
#define LFPOOL_POOL_H

#include "lfpool/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_pool lfpool_pool;

/* The part of a Pool that the inline fast path reads; it leads the struct.
 * Pointers that a get and a put load once and store from the register:
 * a 32-bit count used as an index made a pair over twice as slow (NEWS).
 * Debug pools keep top at
 * low and end NULL (every call is checked), as do pools with a reset hook
 * for their puts (end NULL: every put runs it). */
struct lfpool_pool_fast {
	void **top;		/* one past the top pooled object */
	void **low;		/* the items array: objects in [low, top) */
	void **end;		/* a fast put may store at top while top < end */
};

/* A new Pool per cfg, prewarmed; NULL with errno EINVAL or ENOMEM. */
LFPOOL_API lfpool_pool *lfpool_pool_create(const lfpool_config *cfg);
/* Destroy the Pool: fini every pooled object, free every slab.  0; NULL:
 * no-op, 0; -1 with errno EINVAL for a pool already destroyed (reported
 * to the error hook, which aborts by default).  As every destroy. */
LFPOOL_API int lfpool_pool_destroy(lfpool_pool *pool);
/* Rare paths of get and put; call lfpool_pool_get/put instead. */
LFPOOL_API void *lfpool_pool_get_slow(lfpool_pool *pool);
LFPOOL_API void lfpool_pool_put_slow(lfpool_pool *pool, void *obj);
/* Create n more objects and pool them; 0, or -1 with errno (ENOBUFS,
 * ENOMEM) with nothing created and no memory kept (the item array too). */
LFPOOL_API int lfpool_pool_prewarm(lfpool_pool *pool, size_t n);
/* Destroy pooled objects beyond keep and give wholly free slabs back;
 * returns the number of objects destroyed.  With the slabs go their side
 * data, the directory leaves no slab needs and the item array's room
 * beyond the objects left (a power of two of at least 16 pointers, none
 * when no object is left): after a trim keeping 0 with no object out a
 * Pool holds 0 bytes (bytes_held). */
LFPOOL_API size_t lfpool_pool_trim(lfpool_pool *pool, size_t keep);
/* Whether ptr is the start of one of this Pool's objects. */
LFPOOL_API int lfpool_pool_owns(const lfpool_pool *pool, const void *ptr);
/* Fill *st.  The fast path keeps no counter: gets, puts and hits stay 0. */
LFPOOL_API void lfpool_pool_stats(const lfpool_pool *pool, lfpool_stats *st);
/* Print the pool's state readably to out: its name, configuration and
 * statistics (as lfpool_pool_stats), as LFPOOL_SHOW_STATS does
 * (lfpool/common.h, "Environment").  0, or -1 with errno EINVAL (a pool
 * already destroyed) or EIO (out failed).  As every flavour's dump. */
LFPOOL_API int lfpool_pool_dump(const lfpool_pool *pool, FILE *out);
/* An object's size and stride, for the sanitizer annotations. */
LFPOOL_API struct lfpool_span_ lfpool_pool_span_(const lfpool_pool *pool);

/* See "ThreadSanitizer" and "AddressSanitizer" in lfpool/common.h. */
#ifdef LFPOOL_SAN_ANNOTATE_
LFPOOL_SAN_WRAP_GET_(lfpool_pool_get_slow, void *, lfpool_pool *, lfpool_pool_span_)
LFPOOL_SAN_WRAP_PUT_(lfpool_pool_put_slow, lfpool_pool *, void *, lfpool_pool_span_)
# define lfpool_pool_get_slow lfpool_pool_get_slow_san_
# define lfpool_pool_put_slow lfpool_pool_put_slow_san_
#endif

/* An object, or NULL with errno ENOBUFS (at capacity) or ENOMEM. */
static inline void *lfpool_pool_get(lfpool_pool *pool)
{
	struct lfpool_pool_fast *f = (struct lfpool_pool_fast *)pool;
	void *obj;
	void **t = f->top;
	if (LFPOOL_LIKELY(t != f->low)) {
		f->top = --t;
		obj = *t;
		LFPOOL_HIT_NONNULL_(obj);
	} else {
		obj = lfpool_pool_get_slow(pool);
	}
	LFPOOL_SAN_GOT_(obj, lfpool_pool_span_(pool));
	LFPOOL_TSAN_ACQUIRE(obj);
	return obj;
}

/* Give obj back to the pool it came from.  NULL: no-op. */
static inline void lfpool_pool_put(lfpool_pool *pool, void *obj)
{
	struct lfpool_pool_fast *f = (struct lfpool_pool_fast *)pool;
	LFPOOL_SAN_PUT_(obj, lfpool_pool_span_(pool));
	LFPOOL_TSAN_RELEASE(obj);
	void **t = f->top;
	if (LFPOOL_LIKELY((uintptr_t)t < (uintptr_t)f->end && obj != NULL)) {
		*t = obj;
		f->top = t + 1;
		return;
	}
	lfpool_pool_put_slow(pool, obj);
}

#ifdef __cplusplus
}
#endif
#endif
