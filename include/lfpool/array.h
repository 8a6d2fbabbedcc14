/* SPDX-License-Identifier: MIT */
/*
 * lfpool/array.h - Array pools: byte buffers in power-of-two size classes.
 *
 * Each class, from min_size to max_size, is a pool of the flavour given
 * to create (its first argument, as for every layer); get(n) hands out a
 * buffer of the smallest class that holds n bytes and says how many bytes
 * it really has.  A request above max_size is served by the backing
 * allocator and given back to it on put: such buffers are never pooled.
 *
 * Every buffer is preceded by a prefix outside the caller's bytes (16
 * bytes, or the alignment when that is larger) whose last 16 bytes, struct
 * lfpool_array_hdr, name the buffer's class, so put needs no size.
 * put_sized takes the size that was asked for (or the real size) instead
 * and does not read the prefix; debug pools check that the two agree.
 *
 * Memory: a class takes memory from the backing allocator in slabs of at
 * least 8 buffers (fewer when capacity is smaller), so the first buffer of
 * a 1 MiB class reserves 16 MiB of address space; pages are touched as
 * buffers are used.  lfpool_array_trim gives idle buffers and slabs back.
 *
 * Debug pools (LFPOOL_F_DEBUG) report, through the error hook: a double put
 * and a write after put (reported by the class, named "<name>[<class
 * size>]", with the address of the buffer's prefix), a pointer that is not
 * a buffer of this pool (foreign, interior, an oversize buffer already
 * put, or one of another array pool: its prefix names its pool), a sized
 * put with a size of another class, and any call after
 * destroy; destroy reports buffers still out.  An oversize buffer already
 * put is found by its cleared prefix while its memory is still mapped:
 * one of 64 KiB or more (with the prefix) was unmapped by its first put,
 * and a second put of it reads unmapped memory (SIGSEGV) in every build
 * but ASan's.
 *
 * What a wrong size costs in release pools.  put_sized trusts n on its
 * inline path (checking it would mean reading the prefix on every put,
 * which is what put_sized exists to avoid): a buffer put with a size of
 * another class goes into that class's pool, so a 64 B buffer put as 128 is
 * later handed out as 128 bytes and overwrites its neighbour, and an
 * oversize buffer put with a class size is pooled in a class it does not
 * fit.  Where n takes the slow path the header is read, which is cheap
 * there: a pooled buffer put with an oversize n, an oversize buffer put
 * with another oversize n, and an oversize buffer of another array pool
 * are reported through the error hook and not freed (the call does
 * nothing).  An unsized put reads the class from the
 * prefix: a pointer that is no buffer of this pool is undefined.
 *
 * The fast paths.  get, put and put_sized are inline.  A size's class is a
 * leading-zero count of n - 1 (lfpool_array_index_of_), and with a size
 * known at compile time, lfpool_array_get(ap, 64, &real) picks its class
 * at compile time (the index folds to a constant).  ThreadStatic classes
 * are then served from a per-thread table of the thread's class caches
 * (struct lfpool_array_tls, one entry per class slot): for the class of
 * the thread's array home (its first class cache, of a pool with the
 * default alignment) one compare of the entry with ap and the inline get
 * or put of lfpool_ts_cache_get/_put at a fixed TLS address (11
 * instructions per call with a constant size, 16 with a runtime one,
 * against 7 for an explicit cache's, in a loop of pairs compiled by GCC);
 * for another class a second compare, of the entry with the pool's key,
 * and the same on the cache it names, with no call.  A thread's first call
 * on a class, or one after another pool took the entry, fills it out of
 * line (the implicit cache of lfpool_ts_get, made on first use as there).
 * Pool classes are inline too (lfpool_pool_get/put), Concurrent ones call
 * lfpool_concurrent_get_slow/_put_slow; debug pools and oversize buffers
 * take the exported slow paths.
 *
 * Synchronization: that of the flavour.  An array pool of Pool flavour
 * belongs to one thread at a time; Concurrent and ThreadStatic ones may be
 * used from any threads at once (get, put, put_sized, stats, trim), and a
 * buffer may be put on another thread than the one that got it.  create and
 * destroy run alone.
 */
#ifndef LFPOOL_ARRAY_H
#define LFPOOL_ARRAY_H

#include "lfpool/common.h"
#include "lfpool/flavour.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lfpool_array lfpool_array;

/* lfpool_array_config.flags, with LFPOOL_F_DEBUG: */
#define LFPOOL_ARRAY_F_CLEAR 0x100u	/* zero a buffer's class size on put */

/* The largest class an array pool may have; larger requests go oversize. */
#define LFPOOL_ARRAY_MAX_CLASS ((size_t)64 << 20)

typedef struct lfpool_array_config {
	size_t min_size;	/* smallest class: power of two >= 16; 0 = 16 */
	size_t max_size;	/* largest: power of two <= LFPOOL_ARRAY_MAX_CLASS;
				 * 0 = 1 MiB */
	size_t align;		/* of every buffer: power of two <= 4096; 0 = 16 */
	size_t capacity;	/* per class, most buffers alive; 0 = unbounded */
	const lfpool_allocator *allocator;	/* slabs and oversize buffers */
	unsigned flags;		/* LFPOOL_F_DEBUG, LFPOOL_ARRAY_F_CLEAR */
	const char *name;	/* shown in error messages */
	unsigned magazine_size;	/* ThreadStatic classes; 0 picks the default */
	unsigned depot_max;
} lfpool_array_config;

/* The prefix right before every buffer. */
struct lfpool_array_hdr {
	uint64_t size;		/* usable bytes: the class size, or as asked */
	uint32_t magic;
	uint8_t slot;		/* the class's slot (log2 of its size), or 64 */
	uint8_t pad[3];
};

/* Slot k serves sizes in (2^(k-1), 2^k]: the class of at least 2^k bytes. */
struct lfpool_array_slot {
	void *pool;	/* the class's pool when the inline paths may call it
			 * (Pool and Concurrent; NULL for ThreadStatic, which
			 * the thread table below serves, and in debug pools) */
	size_t size;	/* usable bytes of the class; 0: no class (oversize) */
};

/* The prefix of the array pools whose classes may take a thread's array
 * home (the default: align 16); the inline paths add it as a constant. */
#define LFPOOL_ARRAY_HOME_PREFIX_ 16u

/* The part of an array pool that the inline paths read; it leads the struct. */
struct lfpool_array_fast {
	uint64_t key;		/* names the pool in thread tables: an id, never
				 * reused, << 1 | 1 (odd: no pool's address) */
	size_t prefix;		/* bytes from a pooled object to its buffer (a
				 * hit adds or subtracts it from memory: one
				 * instruction, where taking it from the key
				 * cost a mask and a copy) */
	lfpool_flavour flavour;
	int inline_put;		/* unsized puts may read the prefix inline */
	struct lfpool_array_slot slot[65];
};

/*
 * The calling thread's caches of the classes of ThreadStatic array pools,
 * by slot - 1 (so that the index of a size is one bit scan): entry i holds
 * the thread's implicit cache of the class that serves slot i + 1 of the
 * array pool whose key is key[i] (0: none).  One entry per slot, whichever
 * pool used it last; a miss fills it (lib/layers/array.c), and the
 * thread's exit clears the table before its caches go.  Ids are never
 * reused, so an entry of a destroyed pool matches no pool again.  Only the
 * owner thread reads or writes its table.  Owned by the library, not for
 * users; 1 KiB per thread, and the array home's 192 bytes, in TLS read as
 * lfpool/impl/lookup.h's LFPOOL_TLS_MODEL_ says (in a program an access is one
 * %fs-relative load).
 *
 * The array home.  A thread's first cache of a class of an array pool
 * with the default prefix (LFPOOL_ARRAY_HOME_PREFIX_) lives in this table
 * (home: 192 bytes, apart from the home of the thread's first object pool,
 * lfpool/ts.h, which array classes never take), and the entries of that
 * class hold the address of the array pool instead of its key: a hit there
 * compares the entry with the pool's address, which the caller holds in a
 * register, and runs lfpool_ts_cache_get or _put at a constant
 * %fs-relative address with a constant prefix, loading nothing of the
 * pool and no cache pointer.  (On AMD Zen 5, in a loop of pairs, a pair
 * through cache[i] and the pool's key and prefix took 1.9x the time of an
 * explicit cache's; at a constant address 1.5x; with the address and
 * prefix as constants 1.2x.)  Addresses are reused, so the home's entries go when it does:
 * the destroy of its pool clears them in the thread's table (under
 * lfp_ts_lock: relaxed atomic stores there and loads here under
 * ThreadSanitizer), as the thread's exit clears the whole table.  The
 * thread's next class cache then takes the home; so a thread's first
 * array get should be of its most used size.
 */
struct lfpool_array_tls {
	uint64_t key[64];
	lfpool_ts_cache *cache[64];
	union lfpool_ts_home_ home __attribute__((aligned(64)));	/* the array home */
} __attribute__((aligned(64)));
LFPOOL_API extern __thread struct lfpool_array_tls lfpool_array_tls_ LFPOOL_TLS_MODEL_;
/* The array home, at a constant offset from the thread pointer (the same
 * base as the table's entries). */
#define LFPOOL_ARRAY_HOME_ ((lfpool_ts_cache *)&lfpool_array_tls_.home)
/* Entry i's key: another thread's destroy may clear it (see above).  One
 * load for both tests: reading it again for the second (a volatile load)
 * made the home's test one compare with memory, 1 instruction less per
 * call, but another class's pair 12% slower, the home's no faster. */
#ifdef LFPOOL_TSAN_
# define LFPOOL_ARRAY_KEY_(i) __atomic_load_n(&lfpool_array_tls_.key[i], __ATOMIC_RELAXED)
#else
# define LFPOOL_ARRAY_KEY_(i) (lfpool_array_tls_.key[i])
#endif

/* A new array pool whose classes are pools of flavour, per cfg; NULL with
 * errno EINVAL (no such flavour, cfg NULL or a bad config) or ENOMEM. */
LFPOOL_API lfpool_array *lfpool_array_create(lfpool_flavour flavour,
					     const lfpool_array_config *cfg);
/* Destroy every class and its buffers.  Buffers still out must not be used
 * or put afterwards; oversize ones still out are not freed (the pool keeps
 * no list of them).  0; NULL: no-op, 0; -1 with errno EINVAL for a pool
 * already destroyed (as lfpool_pool_destroy). */
LFPOOL_API int lfpool_array_destroy(lfpool_array *ap);
/* Rare paths: call lfpool_array_get, _put and _put_sized instead. */
LFPOOL_API void *lfpool_array_get_slow(lfpool_array *ap, unsigned slot, size_t n, size_t *real);
LFPOOL_API void lfpool_array_put_slow(lfpool_array *ap, void *buf, size_t n);
/* Give pooled buffers back, keeping keep in each class.  Each class is
 * trimmed by its flavour's trim with this keep, so each keeps min(keep,
 * pooled) of its pooled buffers (ThreadStatic: of those in its depot, and
 * the working set beyond them, as lfpool_ts_trim); returns how many were
 * destroyed in all classes together.  On a destroyed debug array pool:
 * reported, 0 with errno EINVAL (as every call after destroy). */
LFPOOL_API size_t lfpool_array_trim(lfpool_array *ap, size_t keep);
/* Fill *st: size 0 sums every class; otherwise the class that serves size.
 * 0, or -1 with errno EINVAL when no class serves size (or, reported, on a
 * destroyed debug array pool: *st zeroed).  Oversize buffers
 * are not in these figures: see lfpool_array_oversize_stats. */
LFPOOL_API int lfpool_array_stats(const lfpool_array *ap, size_t size, lfpool_stats *st);
/* Buffers the backing allocator served above the largest class: how many
 * were got (*gets) and how many of those are out now (*out).  On a
 * destroyed debug array pool: reported, both 0, errno EINVAL. */
LFPOOL_API void lfpool_array_oversize_stats(const lfpool_array *ap, uint64_t *gets, uint64_t *out);
/* Print the array pool's state readably to out: its configuration, its
 * oversize counts, and each class's pool as that flavour's dump
 * (lfpool_pool_dump).  0, or -1 with errno EINVAL (destroyed) or EIO. */
LFPOOL_API int lfpool_array_dump(const lfpool_array *ap, FILE *out);

/* The usable bytes of the class that a put of buf (with n as put_sized's;
 * 0: as put's) would pool buf in, for the sanitizer annotations; 0 when
 * it would pool nothing (an oversize buffer, a stranger, a destroyed pool). */
LFPOOL_API size_t lfpool_array_class_size_(const lfpool_array *ap, const void *buf, size_t n);

/* Under TSan and ASan the inline paths below annotate through their
 * flavour's get and put, on the pooled object (buf - prefix, whose size is
 * the prefix and the class size); a get of n bytes with real NULL poisons
 * the slack (LFPOOL_SAN_SLACK_).  The slow paths annotate here: the
 * caller's bytes and, for a get, the prefix, which an inline put poisoned
 * with its object (see "ThreadSanitizer" and "AddressSanitizer" in
 * lfpool/common.h). */
#ifdef LFPOOL_SAN_ANNOTATE_
static inline void *lfpool_array_get_slow_san_(lfpool_array *ap, unsigned slot, size_t n,
					       size_t *real)
{
	size_t prefix = ((const struct lfpool_array_fast *)ap)->prefix, r = 0;
	LFPOOL_TSAN_QUIET_BEGIN_();
	char *buf = (char *)lfpool_array_get_slow(ap, slot, n, &r);
	LFPOOL_TSAN_QUIET_END_();
	if (!buf)
		return NULL;
	struct lfpool_span_ span = { prefix + (real ? r : n), prefix + r };	/* the slack */
	(void)span;	/* ASan's */
	LFPOOL_SAN_GOT_(buf - prefix, span);
	LFPOOL_TSAN_ACQUIRE(buf - prefix);
	if (real)
		*real = r;
	return buf;
}
static inline void lfpool_array_put_slow_san_(lfpool_array *ap, void *buf, size_t n)
{
	if (buf) {
		size_t size = lfpool_array_class_size_(ap, buf, n);
		struct lfpool_span_ span = { size, size };
		if (size)
			LFPOOL_SAN_PUT_(buf, span);
		LFPOOL_TSAN_RELEASE((char *)buf - ((const struct lfpool_array_fast *)ap)->prefix);
	}
	LFPOOL_TSAN_QUIET_BEGIN_();
	lfpool_array_put_slow(ap, buf, n);
	LFPOOL_TSAN_QUIET_END_();
}
LFPOOL_SAN_WRAP_CALL_(lfpool_array_trim, size_t, lfpool_array *, size_t)
# define lfpool_array_get_slow lfpool_array_get_slow_san_
# define lfpool_array_put_slow lfpool_array_put_slow_san_
# define lfpool_array_trim lfpool_array_trim_san_
#endif

/* The slot of a request of n bytes: ceil(log2(n)) for n >= 2, 1 for n == 1,
 * and 64 for n == 0 (no class: an error).  A constant for a constant n. */
static inline unsigned lfpool_array_slot_of(size_t n)
{
	return 64u - (unsigned)__builtin_clzll((unsigned long long)((n - 1) | 1));
}

/* slot_of(n) - 1, the thread table's index: floor(log2((n - 1) | 1))
 * (written as an xor, which GCC folds with the xor of its clz; "63 -" it
 * does not).
 *
 * On x86-64 with GCC or Clang a runtime n takes an lzcnt, xored with the
 * lzcnt of 1, which GCC hoists out of loops (the asm is not volatile;
 * clang 14 runs it on every call, one instruction more).  Any x86-64 runs
 * it: a CPU without LZCNT executes its encoding (rep bsr) as bsr, so both
 * are bsr's, floor(log2 x) and 0, and the xor gives floor(log2 x); a CPU
 * with it gives 63 - floor(log2 x) and 63, whose xor is floor(log2 x) too.
 * Not bsr alone, which baseline x86-64 would otherwise get: with a bsr
 * each, a get and put_sized of a runtime size took about twice as long
 * (NEWS).  Not the builtin either: its int
 * result costs GCC a sign extension (movslq), one instruction of every
 * call. */
static inline size_t lfpool_array_index_of_(size_t n)
{
#if defined(__x86_64__) && defined(__LP64__) && defined(__GNUC__)
	if (!__builtin_constant_p(n)) {
		uint64_t lz, lz_of_one;
		__asm__("{lzcntq %1, %0|lzcnt %0, %1}" : "=r"(lz) : "r"((uint64_t)((n - 1) | 1)) : "cc");
		__asm__("{lzcntq %1, %0|lzcnt %0, %1}" : "=r"(lz_of_one) : "r"((uint64_t)1) : "cc");
		return (size_t)(lz ^ lz_of_one);
	}
#endif
	return 63u ^ (unsigned)__builtin_clzll((unsigned long long)((n - 1) | 1));
}

/* The get of a class pool of the inline paths: Pool (inline) or
 * Concurrent (its exported call: its inline CAS path would make
 * lfpool_array_get too big for the compiler to inline, as flavour.h says). */
static inline void *lfpool_array_pool_get_(lfpool_flavour fl, void *pool)
{
	if (fl == LFPOOL_FLAVOUR_POOL)
		return lfpool_pool_get((lfpool_pool *)pool);
	return lfpool_concurrent_get_slow((lfpool_concurrent *)pool);
}

static inline void lfpool_array_pool_put_(lfpool_flavour fl, void *pool, void *obj)
{
	if (fl == LFPOOL_FLAVOUR_POOL)
		lfpool_pool_put((lfpool_pool *)pool, obj);
	else
		lfpool_concurrent_put_slow((lfpool_concurrent *)pool, obj);
}

/* What a get of n bytes of slot i + 1 returns for obj (NULL: the pool's
 * failure).  With real NULL the buffer is n bytes long, and the rest of
 * the class is slack (LFPOOL_SAN_SLACK_). */
static inline void *lfpool_array_got_(const struct lfpool_array_fast *f, size_t i, char *obj,
				      size_t prefix, size_t n, size_t *real)
{
	(void)n;	/* read under ASan only */
	if (LFPOOL_UNLIKELY(obj == NULL))
		return NULL;
	if (real)
		*real = f->slot[i + 1].size;
	else
		LFPOOL_SAN_SLACK_(obj + prefix, n, f->slot[i + 1].size);
	return obj + prefix;
}

/* Inline whole: GCC's size estimate of their miss paths (two cache hits,
 * the class pool's call, the slow path) would otherwise make it call a
 * copy of them (seen with a runtime size), a call per operation. */
#if defined(__GNUC__)
__attribute__((always_inline)) static inline void *lfpool_array_get(lfpool_array *ap, size_t n,
								    size_t *real);
__attribute__((always_inline)) static inline void lfpool_array_put_at_(lfpool_array *ap, size_t i,
								       void *buf, size_t n);
__attribute__((always_inline)) static inline void lfpool_array_put(lfpool_array *ap, void *buf);
__attribute__((always_inline)) static inline void lfpool_array_put_sized(lfpool_array *ap,
									 void *buf, size_t n);
#endif

/*
 * A buffer of at least n bytes, aligned as configured; *real (if not NULL)
 * gets its usable size.  NULL with errno EINVAL (n == 0), ENOBUFS (the
 * class is at capacity) or ENOMEM.  ThreadStatic: when the thread's table
 * names this pool at n's slot, one compare with ap and the inline get of
 * its array home (at a constant address), or a compare with its key and
 * that of its cache.
 */
static inline void *lfpool_array_get(lfpool_array *ap, size_t n, size_t *real)
{
	const struct lfpool_array_fast *f = (const struct lfpool_array_fast *)ap;
	size_t i = lfpool_array_index_of_(n);
	uint64_t k = LFPOOL_ARRAY_KEY_(i);
	char *obj;
	if (LFPOOL_LIKELY(k == (uint64_t)(uintptr_t)ap)) {
		obj = (char *)lfpool_ts_cache_get(LFPOOL_ARRAY_HOME_);
		return lfpool_array_got_(f, i, obj, LFPOOL_ARRAY_HOME_PREFIX_, n, real);
	}
	if (LFPOOL_LIKELY(k == f->key)) {
		obj = (char *)lfpool_ts_cache_get(lfpool_array_tls_.cache[i]);
		return lfpool_array_got_(f, i, obj, f->prefix, n, real);
	}
	if (f->slot[i + 1].pool != NULL) {
		obj = (char *)lfpool_array_pool_get_(f->flavour, f->slot[i + 1].pool);
		return lfpool_array_got_(f, i, obj, f->prefix, n, real);
	}
	return lfpool_array_get_slow(ap, (unsigned)i + 1, n, real);
}

/* Put buf, whose class is that of slot i + 1 (n: as put_sized's). */
static inline void lfpool_array_put_at_(lfpool_array *ap, size_t i, void *buf, size_t n)
{
	const struct lfpool_array_fast *f = (const struct lfpool_array_fast *)ap;
	uint64_t k = LFPOOL_ARRAY_KEY_(i);
	if (LFPOOL_LIKELY(k == (uint64_t)(uintptr_t)ap && buf != NULL)) {
		lfpool_ts_cache_put(LFPOOL_ARRAY_HOME_, (char *)buf - LFPOOL_ARRAY_HOME_PREFIX_);
		return;
	}
	if (LFPOOL_LIKELY(k == f->key && buf != NULL)) {
		lfpool_ts_cache_put(lfpool_array_tls_.cache[i], (char *)buf - f->prefix);
		return;
	}
	if (f->slot[i + 1].pool != NULL && buf != NULL) {
		lfpool_array_pool_put_(f->flavour, f->slot[i + 1].pool, (char *)buf - f->prefix);
		return;
	}
	lfpool_array_put_slow(ap, buf, n);
}

/* Give buf back to the array pool it came from.  NULL: no-op. */
static inline void lfpool_array_put(lfpool_array *ap, void *buf)
{
	const struct lfpool_array_fast *f = (const struct lfpool_array_fast *)ap;
	if (LFPOOL_LIKELY(f->inline_put && buf != NULL)) {
		const struct lfpool_array_hdr *h = (const struct lfpool_array_hdr *)buf - 1;
		lfpool_array_put_at_(ap, (size_t)h->slot - 1, buf, 0);
		return;
	}
	lfpool_array_put_slow(ap, buf, 0);
}

/* Give buf back, with the n it was got with (or its real size): the class
 * comes from n, not from the prefix, and an oversize buffer is freed with
 * n as its size.  n == 0: as lfpool_array_put.  NULL: no-op. */
static inline void lfpool_array_put_sized(lfpool_array *ap, void *buf, size_t n)
{
	lfpool_array_put_at_(ap, lfpool_array_index_of_(n), buf, n);
}

#ifdef __cplusplus
}
#endif
#endif
