/* SPDX-License-Identifier: MIT */
/*
 * lfpool/impl/cache.h - a ThreadStatic cache as the inline paths see it:
 * its public view (the loaded magazine's bounds) and the magazine get and
 * put hit, lfpool_ts_cache_get and lfpool_ts_cache_put.  The one copy:
 * lfpool/ts.h's implicit calls run them on the thread's cache, the array
 * layer on its classes' caches, and the library's struct lfpool_ts_cache
 * (lib/threadstatic/ts_internal.h) begins with this view.  Included by
 * lfpool/ts.h (which declares the slow paths they call); not for users.
 *
 * Terms (see also lfpool/impl/tagged_stack.h's):
 *  - magazine: an array of object pointers; a cache holds one loaded
 *    (the one get and put use) and the pool's depot holds the others,
 *    full or empty, on stacks shared by every thread.
 *  - top, low, end: the loaded magazine's bounds (struct
 *    lfpool_ts_cache_fast below); hit: a get or put that top, low and
 *    end allow inline; miss: any other, which calls the slow path (out
 *    of line, in the library).
 *  - thief: another thread taking objects from the bottom of this
 *    cache's magazine (stopped: low while it does).
 */
#ifndef LFPOOL_TS_H
/* Alone: lfpool/ts.h declares what this header uses, and includes it. */
# include "lfpool/ts.h"
#elif !defined(LFPOOL_IMPL_CACHE_H)
#define LFPOOL_IMPL_CACHE_H

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
 * register and a store: one load of top, not the two of a subtract in
 * memory and a load after it.  The put stores t + 1 from the register
 * that holds the top it loaded: an add in memory would make each pair
 * wait on a second forwarding of top through the store buffer (NEWS,
 * 2026-12-01..02).  Pointer arithmetic through uintptr_t: top - 1 may
 * lie before the magazine (an empty one), which only the compare with
 * low reads.  The inline asm is AT&T syntax only:
 * code compiled with -masm=intel defines LFPOOL_NO_INLINE_ASM and gets
 * the C form (HACKING.md, "ThreadStatic's design", says why not both). */
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

/* An object, or NULL with errno ENOBUFS (at capacity) or ENOMEM (EAGAIN
 * from a signal handler: lfpool/ts.h, "Signal handlers").  The top goes
 * down first and low is read after it (see struct lfpool_ts_cache_fast);
 * lfpool_ts_cache_get_slow is entered with top decremented and restores
 * it. */
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
		/* Annotated by its sanitizer wrapper (lfpool/ts.h), once. */
		return lfpool_ts_cache_get_slow(cache);
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
	void **t = f->top;
	if (LFPOOL_LIKELY((uintptr_t)t < (uintptr_t)f->end && obj != NULL)) {
		LFPOOL_SAN_PUT_(obj, lfpool_ts_cache_span_(cache));
		LFPOOL_TSAN_RELEASE(obj);
		LFPOOL_SLOT_STORE_(*t, obj);
		LFPOOL_CACHE_PUSHED_(f, t);
		return;
	}
	/* Annotated by its sanitizer wrapper (lfpool/ts.h), once. */
	lfpool_ts_cache_put_slow(cache, obj);
}

/* Bytes of a thread's home cache (a struct lfpool_ts_cache, whose fast
 * view leads it), checked by the library at compile time. */
#define LFPOOL_TS_HOME_BYTES_ 192

/* The storage of a cache in TLS, which only its thread writes: the home
 * of lfpool/impl/lookup.h, and the array home of lfpool/array.h. */
union lfpool_ts_home_ {
	struct lfpool_ts_cache_fast fast;
	unsigned char bytes_[LFPOOL_TS_HOME_BYTES_];
};

#endif
