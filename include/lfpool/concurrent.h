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
 * does not contend (an uncontended get+put pair is exactly two CAS).  When
 * it does, it waits between attempts, longer each time, for about 20 us
 * in all, and then retries at once until it wins, so that CPUs take turns
 * on the head in runs instead of one keeping it (lib/atomic.h,
 * lfp_backoff_cas, has the measurements).  It waits in an elimination
 * array (Hendler, Shavit and Yerushalmi, SPAA 2004; lib/stack.c): a get
 * and a put that both failed a CAS meet in one of its slots and the put
 * hands its object to the get without touching the head (each is then
 * done: the put just before the get).  A wait is bounded (it withdraws
 * from the slot when nobody came) and waits for no other call to run;
 * a parked put's object is still the put's (a trim meanwhile does not
 * see it; a get at capacity may say ENOBUFS until the put returns, as
 * before its push), and what a put writes to its object is seen by the
 * get that takes it, as through the stack.  stats counts both: failed CAS
 * (cas_retries) and calls an exchange served (eliminated).  The head is an object index and a
 * 64-bit tag changed by one double-width CAS, so the stack is ABA-safe (a
 * stale CAS would need 2^64 changes of the head).  A get that
 * must create an object takes a lock only to add a slab (once per slab).
 * A put never allocates.  get and put are inline (below) for the objects
 * of slab 0, the pool's first full-size slab, which hold the hottest
 * objects of most pools that grew past their small first slabs (about 16
 * instructions each on x86-64), and for those of the small slabs, which
 * an unbounded pool grows first and a pool of few objects never leaves
 * (333 objects of 64 B in three slabs: lib/slab.h, LFP_SMALL_MAX; a pool
 * per connection or per type): about 31 instructions each there (the
 * top's slab number to decode; a put compares its object with up to
 * three ranges, in a local call), where the library's path took 80;
 * prewarm past them, or a capacity of at most one full slab (no small
 * slabs), to get slab 0's.  They call the library for the objects of
 * other slabs, in debug pools, and for the puts of pools with a reset
 * hook.
 *
 * Misuse in release builds: put computes the object's index from its
 * address, unchecked, so a foreign or interior pointer corrupts the free
 * stack and a double put hands the object out twice; a call after destroy
 * is undefined (reported, with the pool's name, in debug pools).
 */
#ifndef LFPOOL_CONCURRENT_H
#define LFPOOL_CONCURRENT_H

#include "lfpool/common.h"
#include "lfpool/impl/tagged_stack.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_concurrent lfpool_concurrent;

/* A new pool per cfg, prewarmed; NULL with errno EINVAL or ENOMEM. */
LFPOOL_API lfpool_concurrent *lfpool_concurrent_create(const lfpool_config *cfg);
/* Fini every pooled object and free all memory.  0; NULL: no-op, 0; -1
 * with errno EINVAL for a pool already destroyed (as lfpool_pool_destroy). */
LFPOOL_API int lfpool_concurrent_destroy(lfpool_concurrent *pool);
/* Through the inline lfpool_concurrent_get and lfpool_concurrent_put,
 * below. */
/* n objects into objs, all or none: 0, or -1 with errno as get, with
 * nothing created and no slab kept (pooled objects it took go back; a
 * directory leaf may stay: lfpool/common.h). */
LFPOOL_API int lfpool_concurrent_get_bulk(lfpool_concurrent *pool, void **objs, size_t n);
/* Put n objects (NULL entries are skipped). */
LFPOOL_API void lfpool_concurrent_put_bulk(lfpool_concurrent *pool, void *const *objs, size_t n);
/* Create n more objects and pool them: 0, or -1 with errno (ENOBUFS,
 * ENOMEM) with nothing created and no slab kept (a directory leaf may
 * stay: lfpool/common.h). */
LFPOOL_API int lfpool_concurrent_prewarm(lfpool_concurrent *pool, size_t n);
/* Destroy pooled objects beyond keep and give wholly free slabs back;
 * returns the number destroyed.  Safe while other threads get and put.
 * A slab given back gives back its side data's pages too (a link word and
 * a state byte per object) where they are a mapping of their own: the
 * default allocator's slabs of 64 KiB and more with 16 KiB of side data
 * or more (objects of up to 20 bytes in an unbounded pool, or in one
 * sized past 64 KiB of them).  The mapping itself stays until destroy (a
 * get that read a stale stack head may still read a link word there; its
 * pages read as zero) and bytes_held no longer counts it.  What stays
 * counted: the slab directory, 32 KiB for each 1,024 slab numbers used
 * (none while the pool never used more than five: its first, small slabs,
 * slab 0 and one more), and all other side data (5 bytes per object of the
 * pool's peak, rounded up per slab), kept for the same stale readers.  So
 * after a trim keeping 0 with no object out, an unbounded pool of such
 * small objects of the default allocator holds its directory and its small
 * slabs' side data (10 KiB for 16 B objects)alone. */
LFPOOL_API size_t lfpool_concurrent_trim(lfpool_concurrent *pool, size_t keep);
/* Whether ptr is the start of one of this pool's objects. */
LFPOOL_API int lfpool_concurrent_owns(const lfpool_concurrent *pool, const void *ptr);
/* Fill *st (retained walks the free stack: exact only when quiet).  gets,
 * puts and hits stay 0: a Concurrent pool has no per-thread state, and a
 * shared counter would be an atomic on every get and put.  cas_retries:
 * the failed CAS on the free stack's head of gets, puts and their bulk
 * forms; eliminated: the gets and puts that met in the elimination array
 * (two per exchange).  Each contended call adds its own when it is done,
 * on the array's line (one atomic add, on contended calls only). */
LFPOOL_API void lfpool_concurrent_stats(const lfpool_concurrent *pool, lfpool_stats *st);
/* Print the pool's state readably to out (as lfpool_pool_dump). */
LFPOOL_API int lfpool_concurrent_dump(const lfpool_concurrent *pool, FILE *out);

/* Rare paths of lfpool_concurrent_get and lfpool_concurrent_put; call
 * those.  _slow: the whole call (any pool, any object, NULL); _retry: after
 * the inline CAS failed on the head (top, tag) it returned, for obj, of
 * slab 0 (a put), or the index top (a get); both back off first. */
LFPOOL_API void *lfpool_concurrent_get_slow(lfpool_concurrent *pool);
LFPOOL_API void lfpool_concurrent_put_slow(lfpool_concurrent *pool, void *obj);
LFPOOL_API void *lfpool_concurrent_get_retry(lfpool_concurrent *pool, uint64_t top, uint64_t tag);
LFPOOL_API void lfpool_concurrent_put_retry(lfpool_concurrent *pool, void *obj, uint64_t top,
					    uint64_t tag);

/* An object's size and stride, for the sanitizer annotations. */
LFPOOL_API struct lfpool_span_ lfpool_concurrent_span_(const lfpool_concurrent *pool);

/* See "ThreadSanitizer" and "AddressSanitizer" in lfpool/common.h.  The
 * retries need no wrapper: the inline get and put annotate around them. */
#ifdef LFPOOL_SAN_ANNOTATE_
LFPOOL_SAN_WRAP_GET_(lfpool_concurrent_get_slow, void *, lfpool_concurrent *,
		     lfpool_concurrent_span_)
LFPOOL_SAN_WRAP_PUT_(lfpool_concurrent_put_slow, lfpool_concurrent *, void *,
		     lfpool_concurrent_span_)
LFPOOL_SAN_WRAP_BULK_(lfpool_concurrent_get_bulk, lfpool_concurrent_put_bulk, lfpool_concurrent *,
		      lfpool_concurrent_span_)
LFPOOL_SAN_WRAP_CALL_(lfpool_concurrent_prewarm, int, lfpool_concurrent *, size_t)
LFPOOL_SAN_WRAP_CALL_(lfpool_concurrent_trim, size_t, lfpool_concurrent *, size_t)
# define lfpool_concurrent_get_slow lfpool_concurrent_get_slow_san_
# define lfpool_concurrent_put_slow lfpool_concurrent_put_slow_san_
# define lfpool_concurrent_get_bulk lfpool_concurrent_get_bulk_san_
# define lfpool_concurrent_put_bulk lfpool_concurrent_put_bulk_san_
# define lfpool_concurrent_prewarm lfpool_concurrent_prewarm_san_
# define lfpool_concurrent_trim lfpool_concurrent_trim_san_
#endif

/*
 * The inline paths run on x86-64 with GCC or Clang, and under
 * ThreadSanitizer in the library's own sources and the test programs
 * built from them (LFPOOL_BUILDING: its --enable-tsan build checks them
 * there, wherever TSan has a 16-byte __atomic); elsewhere get and put
 * call the library.
 * Never inline in a user's TSan program, annotated or not
 * (LFPOOL_NO_TSAN_ANNOTATIONS): TSan runs a 16-byte __atomic as a plain
 * read and write under a lock of its own, which is not atomic against the
 * lock cmpxchg16b of a library built without TSan -- the head would be
 * torn, and the free list could close into a cycle (tests/tsan-handover.sh
 * checks that such a program has no 16-byte TSan atomic).  The pool's view
 * and the stack's steps: lfpool/impl/tagged_stack.h.
 */
#if defined(LFPOOL_STACK_STEPS_) && \
	((defined(__x86_64__) && !defined(LFPOOL_TSAN_)) || \
	 (defined(LFPOOL_TSAN_) && defined(LFPOOL_BUILDING)))
# define LFPOOL_CONC_INLINE_ 1
#endif

/* Inline whole: GCC's size estimate of the small slabs' branch of get
 * would otherwise make it call them, a call per operation on slab 0's
 * path too (as lfpool_ts_get). */
#if defined(__GNUC__)
__attribute__((always_inline)) static inline void *lfpool_concurrent_get(lfpool_concurrent *pool);
__attribute__((always_inline)) static inline void lfpool_concurrent_put(lfpool_concurrent *pool, void *obj);
#endif

#ifdef LFPOOL_CONC_INLINE_
/* The end of an inline get: after its CAS failed on the head old, the
 * library's retries; else obj, the object its CAS took. */
static inline void *lfpool_concurrent_retried_(lfpool_concurrent *pool, struct lfpool_stack_head_ old)
{
	void *obj = lfpool_concurrent_get_retry(pool, old.top, old.tag);
	LFPOOL_SAN_GOT_(obj, lfpool_concurrent_span_(pool));
	return obj;
}

static inline void *lfpool_concurrent_got_(lfpool_concurrent *pool, void *obj)
{
	(void)pool;
	LFPOOL_HIT_NONNULL_(obj);
	LFPOOL_SAN_GOT_(obj, lfpool_concurrent_span_(pool));
	return obj;
}

/* The end of an inline put: one attempt of the stack's push of obj, index
 * idx, whose link word is link; after a failed CAS the library retries. */
static inline void lfpool_concurrent_push_(lfpool_concurrent *pool, void *obj, uint32_t *link,
					   uint32_t idx)
{
	struct lfpool_concurrent_fast *f = (struct lfpool_concurrent_fast *)pool;
	struct lfpool_stack_head_ old = lfpool_stack_load_(&f->head);
	if (LFPOOL_UNLIKELY(!lfpool_stack_push_step_(&f->head, link, idx, &old)))
		lfpool_concurrent_put_retry(pool, obj, old.top, old.tag);
}

/* A put of an object not of slab 0: one of a small slab (the probes of
 * lfpool_conc_small_put_, then as slab 0's), else the library.  Out of
 * line: inline, its probes took registers that the loops around an
 * inline put of slab 0 then missed (bench-instr's batch64 rows).  Static
 * inline all the same, so that a file that never puts emits no copy (even
 * at -O0: a program that includes this header only to dlopen the library
 * links without it); GCC warns about noinline on an inline function
 * (-Wattributes) and honours it. */
#if defined(__GNUC__) && !defined(__clang__)
# pragma GCC diagnostic push
# pragma GCC diagnostic ignored "-Wattributes"
#endif
__attribute__((noinline, unused)) static inline void lfpool_concurrent_put_small_(lfpool_concurrent *pool, void *obj)
{
	struct lfpool_concurrent_fast *f = (struct lfpool_concurrent_fast *)pool;
	uint32_t idx = 0, *link = NULL;	/* set by the probes; no -Wmaybe-uninitialized */
	if (!lfpool_conc_small_put_(f, obj, &idx, &link)) {
		lfpool_concurrent_put_slow(pool, obj);
		return;
	}
	LFPOOL_SAN_PUT_(obj, lfpool_concurrent_span_(pool));	/* before the CAS */
	lfpool_concurrent_push_(pool, obj, link, idx);
}
#if defined(__GNUC__) && !defined(__clang__)
# pragma GCC diagnostic pop
#endif
#endif

/*
 * An object, or NULL with errno ENOBUFS (at capacity) or ENOMEM.  Inline
 * when the top index is slab 0's: one attempt of the stack's pop
 * (lfpool/impl/tagged_stack.h: the head, the top's link, one CAS), then the
 * object's address; else when it is a small slab's, the same through the
 * view's second line (its slab number first); after a failed CAS the
 * library retries.
 */
static inline void *lfpool_concurrent_get(lfpool_concurrent *pool)
{
#ifdef LFPOOL_CONC_INLINE_
	struct lfpool_concurrent_fast *f = (struct lfpool_concurrent_fast *)pool;
	struct lfpool_stack_head_ old = lfpool_stack_load_(&f->head);
	if (LFPOOL_LIKELY(old.top < lfpool_stack_load_u64_acq_(&f->get_n))) {
		const uint32_t *links = (const uint32_t *)lfpool_stack_load_ptr_rlx_((void *const *)&f->links);
		if (LFPOOL_UNLIKELY(!lfpool_stack_pop_step_(&f->head, &links[old.top], &old)))
			return lfpool_concurrent_retried_(pool, old);
		/* old.top is ours: slab 0 stays while we read its address */
		return lfpool_concurrent_got_(pool, (char *)lfpool_stack_load_ptr_rlx_((void *const *)&f->base) +
							    old.top * f->stride);
	}
	uint64_t off, n = lfpool_conc_small_get_(&f->small, old.top, &off);
	if (n) {
		if (LFPOOL_UNLIKELY(!lfpool_stack_pop_step_(&f->head, lfpool_conc_small_link_(&f->small, n, off),
							    &old)))
			return lfpool_concurrent_retried_(pool, old);
		/* as slab 0's: its small slab stays while we read its address */
		return lfpool_concurrent_got_(pool, lfpool_conc_small_obj_(f, n, off));
	}
#endif
	return lfpool_concurrent_get_slow(pool);
}

/*
 * Give obj back.  NULL: no-op.  Never allocates.  Inline for an object of
 * slab 0: its index from its offset there (a multiply), then one attempt
 * of the stack's push (lfpool/impl/tagged_stack.h: its link set to the top, one
 * CAS); else for one of a small slab, found by comparing with each small
 * slab's range in the view's second line; after a failed CAS the library
 * retries.
 */
static inline void lfpool_concurrent_put(lfpool_concurrent *pool, void *obj)
{
#ifdef LFPOOL_CONC_INLINE_
	struct lfpool_concurrent_fast *f = (struct lfpool_concurrent_fast *)pool;
	uint64_t span = lfpool_stack_load_u64_acq_(&f->put_span);
	uint64_t delta = (uint64_t)((uintptr_t)obj -
				    (uintptr_t)lfpool_stack_load_ptr_rlx_((void *const *)&f->base));
	if (LFPOOL_LIKELY(delta < span)) {
		__extension__ typedef unsigned __int128 lfpool_u128_;
		LFPOOL_SAN_PUT_(obj, lfpool_concurrent_span_(pool));	/* before the CAS */
		uint32_t idx = (uint32_t)(((lfpool_u128_)delta * f->magic) >> 64);
		uint32_t *link = (uint32_t *)lfpool_stack_load_ptr_rlx_((void *const *)&f->links) + idx;
		lfpool_concurrent_push_(pool, obj, link, idx);
		return;
	}
	lfpool_concurrent_put_small_(pool, obj);
#else
	lfpool_concurrent_put_slow(pool, obj);
#endif
}

#ifdef __cplusplus
}
#endif
#endif
