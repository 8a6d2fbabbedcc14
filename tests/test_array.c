/* SPDX-License-Identifier: MIT */
/*
 * test_array.c - array pools, for every flavour: classes and real sizes,
 * unsized and sized puts, the oversize path, clear-on-return, statistics,
 * configuration errors, threads, a thread's array home, and each debug
 * report.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "support.h"

#define MIN 16
#define MAX 4096

static const lfpool_flavour flavours_all[] = {
	LFPOOL_FLAVOUR_POOL, LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_FLAVOUR_TS,
};
#define NFLAVOURS (sizeof(flavours_all) / sizeof(flavours_all[0]))
static const char *const flavour_names[] = { "?", "pool", "concurrent", "ts" };

static lfpool_array *make(lfpool_flavour f, unsigned flags, const lfpool_allocator *a)
{
	lfpool_array_config c = {
		.min_size = MIN, .max_size = MAX, .flags = flags, .allocator = a, .name = "bufs",
	};
	lfpool_array *ap = lfpool_array_create(f, &c);
	cr_assert_not_null(ap, "%s: create: errno %d", flavour_names[f], errno);
	return ap;
}

/* The class that serves n: the smallest power of two >= n, at least MIN. */
static size_t class_of(size_t n)
{
	size_t c = MIN;
	while (c < n)
		c <<= 1;
	return c;
}

static lfpool_stats class_stats_of(const lfpool_array *ap, size_t size)
{
	lfpool_stats st;
	cr_assert_eq(lfpool_array_stats(ap, size, &st), 0);
	return st;
}

Test(array, slot_of_is_ceil_log2)
{
	for (size_t n = 1; n <= 70000; n++) {
		unsigned k = 1;
		while (((size_t)1 << k) < n)
			k++;
		cr_assert_eq(lfpool_array_slot_of(n), k, "n %zu", n);
	}
	for (unsigned k = 2; k < 64; k++) {
		size_t p = (size_t)1 << k;
		cr_assert_eq(lfpool_array_slot_of(p), k);
		cr_assert_eq(lfpool_array_slot_of(p - 1), k);
		cr_assert_eq(lfpool_array_slot_of(p + 1), k + 1);
	}
	cr_assert_eq(lfpool_array_slot_of(0), 64, "n 0 has no class");
	cr_assert_eq(lfpool_array_slot_of(SIZE_MAX), 64);
}

/* The table index of a runtime size (the inline paths' lzcnt form on
 * x86-64, which must agree with slot_of whether or not the CPU has LZCNT):
 * volatile keeps n from folding to a constant. */
Test(array, index_of_a_runtime_size_is_slot_of_minus_one)
{
	volatile size_t v;
	for (size_t n = 0; n <= 70000; n++) {
		v = n;
		cr_assert_eq(lfpool_array_index_of_(v), lfpool_array_slot_of(n) - 1, "n %zu", n);
	}
	for (unsigned k = 1; k < 64; k++) {
		size_t p = (size_t)1 << k;
		for (size_t n = p - 1; n <= p + 1; n++) {
			v = n;
			cr_assert_eq(lfpool_array_index_of_(v), lfpool_array_slot_of(n) - 1, "n %zu", n);
		}
	}
	v = SIZE_MAX;
	cr_assert_eq(lfpool_array_index_of_(v), 63);
}

Test(array, get_returns_the_class_size)
{
	static const size_t sizes[] = { 1, 15, 16, 17, 100, 128, 129, 1000, 2049, MAX };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	for (size_t f = 0; f < NFLAVOURS; f++) {
		lfpool_array *ap = make(flavours_all[f], 0, NULL);
		void *bufs[N];
		for (size_t i = 0; i < N; i++) {
			size_t real = 0;
			bufs[i] = lfpool_array_get(ap, sizes[i], &real);
			cr_assert_not_null(bufs[i]);
			cr_assert_eq(real, class_of(sizes[i]), "%s: %zu bytes asked, %zu real",
				     flavour_names[flavours_all[f]], sizes[i], real);
			cr_assert_eq((uintptr_t)bufs[i] % 16, 0);
			fill_pattern(bufs[i], real, (unsigned)i);
		}
		/* No two buffers overlap: each still holds its own pattern. */
		for (size_t i = 0; i < N; i++) {
			cr_assert(check_pattern(bufs[i], class_of(sizes[i]), (unsigned)i));
			lfpool_array_put(ap, bufs[i]);
		}
		lfpool_array_destroy(ap);
	}
}

Test(array, buffers_have_the_configured_alignment)
{
	static const size_t aligns[] = { 64, 4096 };
	for (size_t a = 0; a < 2; a++) {
		lfpool_array_config c = { .align = aligns[a] };
		lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_POOL, &c);
		cr_assert_not_null(ap);
		void *x = lfpool_array_get(ap, 16, NULL), *y = lfpool_array_get(ap, 3000, NULL);
		void *z = lfpool_array_get(ap, 2 << 20, NULL);	/* oversize */
		cr_assert(x && y && z);
		cr_assert_eq((uintptr_t)x % aligns[a], 0);
		cr_assert_eq((uintptr_t)y % aligns[a], 0);
		cr_assert_eq((uintptr_t)z % aligns[a], 0);
		lfpool_array_put(ap, x);
		lfpool_array_put(ap, y);
		lfpool_array_put(ap, z);
		lfpool_array_destroy(ap);
	}
}

Test(array, puts_with_and_without_size_reuse_the_buffer)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		lfpool_array *ap = make(flavours_all[f], 0, NULL);
		size_t real;
		char *a = lfpool_array_get(ap, 100, &real);
		lfpool_array_put(ap, a);
		cr_assert_eq(lfpool_array_get(ap, 120, NULL), a, "same class, same buffer");
		lfpool_array_put_sized(ap, a, 100);
		cr_assert_eq(lfpool_array_get(ap, 128, NULL), a);
		lfpool_array_put_sized(ap, a, real);
		lfpool_stats st = class_stats_of(ap, 128);
		cr_assert_eq(st.created, 1, "%s: %llu created", flavour_names[flavours_all[f]],
			     (unsigned long long)st.created);
		cr_assert_eq(st.retained, 1);
		cr_assert_eq(st.live, 0);
		/* The smallest class serves every size up to MIN. */
		char *s = lfpool_array_get(ap, 1, &real);
		cr_assert_eq(real, MIN);
		lfpool_array_put_sized(ap, s, 1);
		cr_assert_eq(lfpool_array_get(ap, MIN, NULL), s);
		lfpool_array_put(ap, s);
		lfpool_array_put(ap, NULL);
		lfpool_array_put_sized(ap, NULL, 64);
		lfpool_array_destroy(ap);
	}
}

Test(array, zero_bytes_is_einval)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		lfpool_array *ap = make(flavours_all[f], 0, NULL);
		errno = 0;
		cr_assert_null(lfpool_array_get(ap, 0, NULL));
		cr_assert_eq(errno, EINVAL);
		lfpool_array_destroy(ap);
	}
}

Test(array, bad_configurations_are_einval)
{
	static const lfpool_allocator half = { .alloc = NULL };
	static const lfpool_array_config bad[] = {
		{ .min_size = 8 },
		{ .min_size = 48 },
		{ .min_size = 64, .max_size = 32 },
		{ .max_size = 1000 },
		{ .max_size = LFPOOL_ARRAY_MAX_CLASS * 2 },
		{ .min_size = (size_t)2 << 20 },
		{ .align = 24 },
		{ .align = 8192 },
		{ .flags = 0x2 },
		{ .allocator = &half },
	};
	errno = 0;
	cr_assert_null(lfpool_array_create(LFPOOL_FLAVOUR_POOL, NULL));
	cr_assert_eq(errno, EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_assert_null(lfpool_array_create(LFPOOL_FLAVOUR_POOL, &bad[i]),
			       "config %zu accepted", i);
		cr_assert_eq(errno, EINVAL, "config %zu: errno %d", i, errno);
	}
	/* The limits themselves are fine. */
	lfpool_array_config edge = { .min_size = 16, .max_size = LFPOOL_ARRAY_MAX_CLASS,
				     .align = 4096 };
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &edge);
	cr_assert_not_null(ap);
	lfpool_array_destroy(ap);
}

Test(array, oversize_buffers_come_from_the_allocator_and_go_back)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct test_alloc t;
		test_alloc_init(&t);
		lfpool_array *ap = make(flavours_all[f], 0, &t.a);
		long allocs = t.allocs, frees = t.frees;
		size_t bytes = t.live_bytes, real = 0;

		char *big = lfpool_array_get(ap, MAX + 1, &real);
		cr_assert_not_null(big);
		cr_assert_eq(real, MAX + 1, "an oversize buffer is as large as asked");
		memset(big, 0x5c, real);
		cr_assert_eq(t.allocs, allocs + 1);
		cr_assert_eq(t.live_bytes, bytes + 16 + MAX + 1, "prefix + the bytes asked");
		uint64_t gets, out;
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert(gets == 1 && out == 1);
		cr_assert_eq(class_stats_of(ap, 0).created, 0, "never pooled");

		lfpool_array_put(ap, big);
		cr_assert_eq(t.frees, frees + 1);
		cr_assert_eq(t.live_bytes, bytes);
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert(gets == 1 && out == 0);

		/* The sized put frees with the size it is given. */
		big = lfpool_array_get(ap, 3 * MAX, NULL);
		lfpool_array_put_sized(ap, big, 3 * MAX);
		cr_assert_eq(t.frees, frees + 2);
		cr_assert_eq(t.bad_frees, 0);

		test_alloc_fail_after(&t, 0);
		errno = 0;
		cr_assert_null(lfpool_array_get(ap, MAX * 2, NULL));
		cr_assert_eq(errno, ENOMEM);
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert(gets == 2 && out == 0, "a failed get counts nothing");
		test_alloc_fail_after(&t, -1);
		lfpool_array_destroy(ap);
		cr_assert_eq(t.live, 0);
		test_alloc_fini(&t);
	}
}

/* An oversize request whose prefix would not fit a size_t is ENOMEM
 * without a call to the allocator (prefix + n must not wrap to a small
 * block that the caller would then write n bytes into); the largest that
 * fits reaches the allocator. */
Test(array, oversize_sizes_near_size_max_are_enomem)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct test_alloc t;
		test_alloc_init(&t);
		lfpool_array *ap = make(flavours_all[f], 0, &t.a);
		long allocs = t.allocs;
		static const size_t wrap[] = { SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 15 };
		for (size_t i = 0; i < sizeof(wrap) / sizeof(wrap[0]); i++) {
			size_t real = 0;
			errno = 0;
			cr_assert_null(lfpool_array_get(ap, wrap[i], &real), "%s: n = SIZE_MAX - %zu",
				       flavour_names[flavours_all[f]], SIZE_MAX - wrap[i]);
			cr_assert_eq(errno, ENOMEM);
			cr_assert_eq(real, 0, "*real is left alone");
		}
		cr_assert(t.allocs == allocs && t.failed == 0,
			  "prefix + n wrapped: the allocator was asked");
		/* (The allocator fails it: ASan aborts a real posix_memalign
		 * of SIZE_MAX bytes.) */
		test_alloc_fail_after(&t, 0);
		errno = 0;
		cr_assert_null(lfpool_array_get(ap, SIZE_MAX - 16, NULL));
		cr_assert_eq(errno, ENOMEM);
		cr_assert_eq(t.failed, 1, "SIZE_MAX - 16 + 16 fits: the allocator is asked");
		test_alloc_fail_after(&t, -1);
		uint64_t gets, out;
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert(gets == 0 && out == 0, "a failed get counts nothing");
		lfpool_array_destroy(ap);
		cr_assert_eq(t.live, 0);
		test_alloc_fini(&t);
	}
}

/* With LFPOOL_ARRAY_F_CLEAR, a buffer comes back zeroed; in debug pools too. */
Test(array, clear_on_return_zeroes_the_class_size)
{
	static const unsigned modes[] = { 0, LFPOOL_F_DEBUG };
	for (size_t m = 0; m < 2; m++) {
		for (size_t f = 0; f < NFLAVOURS; f++) {
			lfpool_array *ap = make(flavours_all[f], LFPOOL_ARRAY_F_CLEAR | modes[m], NULL);
			size_t real;
			unsigned char *a = lfpool_array_get(ap, 200, &real);
			memset(a, 0xab, real);
			lfpool_array_put(ap, a);
			unsigned char *b = lfpool_array_get(ap, 256, NULL);
			cr_assert_eq(b, a);
			for (size_t i = 0; i < real; i++)
				cr_assert_eq(b[i], 0, "%s/%u: byte %zu is %#x",
					     flavour_names[flavours_all[f]], modes[m], i, b[i]);
			memset(b, 0xcd, real);
			lfpool_array_put_sized(ap, b, 256);
			b = lfpool_array_get(ap, 129, NULL);
			for (size_t i = 0; i < real; i++)
				cr_assert_eq(b[i], 0);
			lfpool_array_put(ap, b);
			lfpool_array_destroy(ap);
		}
	}
}

Test(array, stats_sum_the_classes)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		lfpool_array *ap = make(flavours_all[f], 0, NULL);
		void *small[3], *mid[2];
		for (int i = 0; i < 3; i++)
			small[i] = lfpool_array_get(ap, 10, NULL);
		for (int i = 0; i < 2; i++)
			mid[i] = lfpool_array_get(ap, 256, NULL);
		lfpool_array_put(ap, small[0]);
		lfpool_array_put(ap, mid[0]);
		lfpool_stats all = class_stats_of(ap, 0), s16 = class_stats_of(ap, 16), s256 = class_stats_of(ap, 256);
		cr_assert_eq(s16.created, 3);
		cr_assert_eq(s16.live, 2);
		cr_assert_eq(s256.created, 2);
		cr_assert_eq(s256.live, 1);
		cr_assert_eq(all.created, 5);
		cr_assert_eq(all.live, 3);
		cr_assert_eq(all.retained, 2);
		cr_assert_eq(class_stats_of(ap, 1024).created, 0);
		uint64_t held = 0;
		for (size_t c = MIN; c <= MAX; c <<= 1)
			held += class_stats_of(ap, c).bytes_held;
		cr_assert_eq(all.bytes_held, held);
		cr_assert_geq(all.bytes_held, 5 * 16);
		lfpool_stats st;
		errno = 0;
		cr_assert_eq(lfpool_array_stats(ap, MAX + 1, &st), -1, "no class serves it");
		cr_assert_eq(errno, EINVAL);
		for (int i = 1; i < 3; i++)
			lfpool_array_put(ap, small[i]);
		lfpool_array_put(ap, mid[1]);
		cr_assert_eq(class_stats_of(ap, 0).live, 0);
		lfpool_array_destroy(ap);
	}
}

/* Gets and puts small and large buffers on a thread of its own, which
 * then exits: a ThreadStatic class's buffers are in its depot then. */
enum { SMALL_N = 5, LARGE_N = 3 };
static void *use_and_exit(void *arg)
{
	lfpool_array *ap = arg;
	void *small[SMALL_N], *large[LARGE_N];
	for (int i = 0; i < SMALL_N; i++)
		small[i] = lfpool_array_get(ap, 32, NULL);
	for (int i = 0; i < LARGE_N; i++)
		large[i] = lfpool_array_get(ap, 2000, NULL);
	for (int i = 0; i < SMALL_N; i++)
		lfpool_array_put(ap, small[i]);
	for (int i = 0; i < LARGE_N; i++)
		lfpool_array_put(ap, large[i]);
	return NULL;
}

/* array.h: "each keeps min(keep, pooled) of its pooled buffers". */
Test(array, trim_keeps_keep_buffers_in_every_class)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		const char *fl = flavour_names[flavours_all[f]];
		lfpool_array *ap = make(flavours_all[f], 0, NULL);
		run_on_thread(use_and_exit, ap);
		cr_assert_eq(lfpool_array_trim(ap, SMALL_N + LARGE_N), 0,
			     "%s: keep above every class's pooled", fl);
		cr_assert_eq(lfpool_array_trim(ap, 2), (SMALL_N - 2) + (LARGE_N - 2), "%s", fl);
		lfpool_stats st = class_stats_of(ap, 32);
		cr_assert_eq(st.retained, 2, "%s: 32 B class keeps %llu", fl,
			     (unsigned long long)st.retained);
		cr_assert_eq(class_stats_of(ap, 2048).retained, 2, "%s", fl);
		cr_assert_eq(class_stats_of(ap, 0).created, 4, "%s: other classes made none", fl);
		cr_assert_eq(lfpool_array_trim(ap, 2), 0, "%s: nothing beyond keep", fl);
		cr_assert_eq(lfpool_array_trim(ap, 0), 4, "%s", fl);
		cr_assert_eq(class_stats_of(ap, 0).created, 0, "%s", fl);
		cr_assert_eq(lfpool_array_destroy(ap), 0);
	}
}

Test(array, trim_gives_pooled_buffers_back)
{
	static const lfpool_flavour trimmed[] = { LFPOOL_FLAVOUR_POOL, LFPOOL_FLAVOUR_CONCURRENT };
	for (size_t f = 0; f < 2; f++) {
		struct test_alloc t;
		test_alloc_init(&t);
		lfpool_array *ap = make(trimmed[f], 0, &t.a);
		void *a = lfpool_array_get(ap, 32, NULL), *b = lfpool_array_get(ap, 2000, NULL);
		void *kept = lfpool_array_get(ap, 32, NULL);
		lfpool_array_put(ap, a);
		lfpool_array_put(ap, b);
		cr_assert_eq(lfpool_array_trim(ap, 0), 2);
		lfpool_stats st = class_stats_of(ap, 0);
		cr_assert_eq(st.created, 1);
		cr_assert_eq(st.retained, 0);
		cr_assert_eq(class_stats_of(ap, 2048).slab_frees, 1, "the 2 KiB class's slab went back");
		lfpool_array_put(ap, kept);
		lfpool_array_destroy(ap);
		cr_assert_eq(t.live, 0);
		test_alloc_fini(&t);
	}
}

/* Threads get buffers of random sizes (some oversize) and leave each in a
 * shared slot, putting the one another thread left there: most puts are of
 * buffers got on another thread.  A buffer carries its size and a pattern. */
struct share_ctx {
	lfpool_array *ap;
	unsigned char *slot;
	unsigned seed;
	long bad;
};

#define SHARE_ITERS 4000

static void *share_thread(void *arg)
{
	struct share_ctx *c = arg;
	unsigned seed = __atomic_fetch_add(&c->seed, 7919, __ATOMIC_RELAXED);
	for (int i = 0; i < SHARE_ITERS; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t n = sizeof(size_t) + 1 + (seed >> 8) % (2 * MAX), real, on;
		unsigned char *b = lfpool_array_get(c->ap, n, &real);
		if (!b || real < n) {
			__atomic_fetch_add(&c->bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		memcpy(b, &n, sizeof(n));
		memset(b + sizeof(n), (int)(n & 0xff), n - sizeof(n));
		unsigned char *old = __atomic_exchange_n(&c->slot, b, __ATOMIC_ACQ_REL);
		if (!old)
			continue;
		memcpy(&on, old, sizeof(on));
		if (on <= sizeof(on) || on > 2 * MAX + sizeof(on) || old[on - 1] != (on & 0xff))
			__atomic_fetch_add(&c->bad, 1, __ATOMIC_RELAXED);
		else if (seed & 2)
			lfpool_array_put_sized(c->ap, old, on);
		else
			lfpool_array_put(c->ap, old);
	}
	return NULL;
}

Test(array, threads_get_and_put_across_threads)
{
	static const lfpool_flavour shared[] = { LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_FLAVOUR_TS };
	for (size_t f = 0; f < 2; f++) {
		struct share_ctx c = { .ap = make(shared[f], 0, NULL), .seed = 1 };
		pthread_t th[4];
		for (int i = 0; i < 4; i++)
			cr_assert_eq(pthread_create(&th[i], NULL, share_thread, &c), 0);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		lfpool_array_put(c.ap, c.slot);
		cr_assert_eq(c.bad, 0, "%s: %ld bad buffers", flavour_names[shared[f]], c.bad);
		cr_assert_eq(class_stats_of(c.ap, 0).live, 0);
		uint64_t gets, out;
		lfpool_array_oversize_stats(c.ap, &gets, &out);
		cr_assert_gt(gets, 0);
		cr_assert_eq(out, 0);
		lfpool_array_destroy(c.ap);
	}
}

/* array.h, the thread table: "One entry per slot, whichever pool used it
 * last".  Two ThreadStatic array pools that take turns on one slot each
 * hand out and take back their own buffers only (a put goes to the cache
 * of the pool it names, and the next get of that pool returns it). */
Test(array, ts_pools_taking_turns_on_a_slot_keep_their_own_buffers)
{
	lfpool_array *a = make(LFPOOL_FLAVOUR_TS, 0, NULL), *b = make(LFPOOL_FLAVOUR_TS, 0, NULL);
	enum { ROUNDS = 100 };
	for (int i = 0; i < ROUNDS; i++) {
		void *x = lfpool_array_get(a, 64, NULL), *y = lfpool_array_get(b, 50, NULL);
		cr_assert(x && y && x != y);
		lfpool_array_put_sized(a, x, 64);
		lfpool_array_put(b, y);
		cr_assert_eq(lfpool_array_get(a, 60, NULL), x, "round %d: a's own buffer back", i);
		cr_assert_eq(lfpool_array_get(b, 64, NULL), y, "round %d: b's own buffer back", i);
		lfpool_array_put(a, x);
		lfpool_array_put_sized(b, y, 64);
	}
	lfpool_stats sa = class_stats_of(a, 64), sb = class_stats_of(b, 64);
	cr_assert_eq(sa.gets, 2 * ROUNDS, "a served %llu gets", (unsigned long long)sa.gets);
	cr_assert_eq(sb.gets, 2 * ROUNDS, "b served %llu gets", (unsigned long long)sb.gets);
	cr_assert_eq(sa.puts, 2 * ROUNDS);
	cr_assert_eq(sb.puts, 2 * ROUNDS);
	cr_assert_eq(sa.created, 1, "a made %llu buffers", (unsigned long long)sa.created);
	cr_assert_eq(sb.created, 1);
	lfpool_array_destroy(a);
	lfpool_array_destroy(b);
}

/* array.h: "Ids are never reused, so an entry of a destroyed pool matches
 * no pool again", and the entries of the array home, which name the pool
 * by address, go with it.  A new pool made where a destroyed one was
 * (malloc gives the address back) serves its first get from a class of
 * its own; with the home's entries kept, it would take the destroyed
 * pool's freed cache. */
Test(array, a_new_pool_at_a_destroyed_pools_address_uses_its_own_classes)
{
	void *last = NULL;
	int reused = 0;
	for (int i = 0; i < 50; i++) {
		lfpool_array *ap = make(LFPOOL_FLAVOUR_TS, 0, NULL);
		reused += (void *)ap == last;
		last = ap;
		void *x = lfpool_array_get(ap, 64, NULL);
		cr_assert_not_null(x);
		lfpool_array_put_sized(ap, x, 64);
		lfpool_stats st = class_stats_of(ap, 64);
		cr_assert_eq(st.gets, 1, "pool %d: %llu gets", i, (unsigned long long)st.gets);
		cr_assert_eq(st.created, 1, "pool %d", i);
		cr_assert_eq(lfpool_array_destroy(ap), 0);
	}
	cr_log_info("%d of 50 pools had the address of the one before", reused);
}

/* array.h: "the thread's exit clears the table before its caches go".  A
 * pthread key destructor that runs after the library's exit handler (its
 * key is made later, and glibc runs destructors in key order) still gets
 * and puts: with no cache of its own (tls.c: a thread past the library's
 * destructor keeps none), not the freed one (ASan finds a use after free
 * otherwise), nor the array home. */
struct late_ctx {
	lfpool_array *ap;
	void *got;
	int done;
	bool home;	/* the late get went through the array home */
};
static pthread_key_t late_key;

static void late_destructor(void *arg)
{
	struct late_ctx *c = arg;
	c->got = lfpool_array_get(c->ap, 64, NULL);
	if (c->got)
		lfpool_array_put_sized(c->ap, c->got, 64);
	c->home = lfpool_array_tls_.key[lfpool_array_index_of_(64)] == (uintptr_t)c->ap;
	c->done = 1;
}

static void *use_then_exit_late(void *arg)
{
	struct late_ctx *c = arg;
	void *x = lfpool_array_get(c->ap, 64, NULL);
	lfpool_array_put_sized(c->ap, x, 64);
	pthread_setspecific(late_key, c);
	return NULL;
}

Test(array, a_destructor_after_thread_exit_gets_and_puts)
{
	struct late_ctx c = { .ap = make(LFPOOL_FLAVOUR_TS, 0, NULL) };
	/* The library's key exists once this thread has used a class. */
	lfpool_array_put(c.ap, lfpool_array_get(c.ap, 64, NULL));
	cr_assert_eq(pthread_key_create(&late_key, late_destructor), 0);
	run_on_thread(use_then_exit_late, &c);
	cr_assert_eq(c.done, 1);
	cr_assert_not_null(c.got);
	/* Not through the array home, whose TLS glibc may free with no round
	 * left for the library's destructor to unlink its cache (tls.c). */
	cr_assert(!c.home, "the late cache is not the array home");
	lfpool_stats st = class_stats_of(c.ap, 64);
	cr_assert_eq(st.gets, 3, "%llu gets", (unsigned long long)st.gets);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_array_destroy(c.ap), 0);
	pthread_key_delete(late_key);
}

/* ---- The array home (array.h, "The array home") ---- */

/* --enable-debug makes every array pool a debug pool, whose calls all take
 * the checked slow paths: no thread table, no array home to test. */
#define SKIP_IN_DEBUG_BUILDS() do { \
		if (DEBUG_BUILD) \
			cr_skip_test("--enable-debug: debug array pools use no array home"); \
	} while (0)

/* The calling thread's array home as the inline paths read it. */
static uint64_t array_home_gets(void)
{
	return lfpool_array_tls_.home.fast.gets;
}

/* Entry i of the calling thread's table names ap's array home. */
static bool names_home(size_t i, const lfpool_array *ap)
{
	return __atomic_load_n(&lfpool_array_tls_.key[i], __ATOMIC_RELAXED) == (uintptr_t)ap;
}

struct home_use {
	lfpool_ts *obj;			/* used first, if not NULL */
	lfpool_array *ap;
	const lfpool_ts *ts_home;	/* the thread's home after both */
	uint64_t small_home_gets, large_home_gets;
	bool small_named, large_named;
	int failed;
};

/* Optionally an object pool first; then 100 pairs of 64 B (the first
 * class: the array home) and 100 of 1024 B (a second class: not). */
static void *use_home(void *arg)
{
	struct home_use *u = arg;
	if (u->obj)
		lfpool_ts_put(u->obj, lfpool_ts_get(u->obj));
	lfpool_array_put_sized(u->ap, lfpool_array_get(u->ap, 64, NULL), 64);
	uint64_t g = array_home_gets();
	for (int i = 0; i < 100; i++) {
		size_t real = 0;
		char *b = lfpool_array_get(u->ap, 64, &real);
		u->failed |= !b || real != 64 || (uintptr_t)b % 16;
		lfpool_array_put_sized(u->ap, b, 64);
	}
	u->small_home_gets = array_home_gets() - g;
	u->small_named = names_home(lfpool_array_index_of_(64), u->ap) &&
			 names_home(lfpool_array_index_of_(33), u->ap);
	g = array_home_gets();
	for (int i = 0; i < 100; i++)
		lfpool_array_put(u->ap, lfpool_array_get(u->ap, 1024, NULL));
	u->large_home_gets = array_home_gets() - g;
	u->large_named = names_home(lfpool_array_index_of_(1024), u->ap);
	u->ts_home = __atomic_load_n(&lfpool_ts_tls_.home_pool, __ATOMIC_RELAXED);
	return NULL;
}

/* A thread's first class cache is its array home whether or not the
 * thread used an object pool first, and array classes never take the
 * object pools' home; a second class is served through its own cache.
 * Exit hands the home back (its buffers to the depot). */
Test(array_home, the_first_class_is_the_array_home_with_or_without_an_object_pool_first)
{
	SKIP_IN_DEBUG_BUILDS();
	lfpool_config oc = ts_config(64, 8, 4);
	lfpool_ts *obj = lfpool_ts_create(&oc);
	for (int first = 0; first < 2; first++) {
		struct home_use u = { .obj = first ? obj : NULL, .ap = make(LFPOOL_FLAVOUR_TS, 0, NULL) };
		run_on_thread(use_home, &u);
		cr_assert_eq(u.failed, 0);
		cr_assert_eq(u.small_home_gets, 100, "object pool first: %d", first);
		cr_assert(u.small_named, "the table names the home by the pool's address");
		cr_assert_eq(u.large_home_gets, 0, "a second class has a cache of its own");
		cr_assert(!u.large_named);
		cr_assert_eq(u.ts_home, first ? obj : NULL, "the object pools' home is not taken");
		lfpool_stats st = class_stats_of(u.ap, 64);
		cr_assert_eq(st.gets, 101);
		cr_assert_eq(st.live, 0);
		cr_assert_eq(st.retained, st.created, "exit gave the home's buffers back");
		cr_assert_eq(lfpool_array_trim(u.ap, 0), 2, "both classes' buffers in their depots");
		cr_assert_eq(lfpool_array_destroy(u.ap), 0);
	}
	cr_assert_eq(lfpool_ts_destroy(obj), 0);
}

struct home_wait {
	lfpool_array *a, *b;
	sem_t go, done;
	bool named_a, named_after, named_b;
	uint64_t b_home_gets;
	int failed;
};

/* Use a (the home), wait for its destroy; look at the table; use b. */
static void *home_then_next_pool(void *arg)
{
	struct home_wait *w = arg;
	size_t i = lfpool_array_index_of_(64);
	lfpool_array_put_sized(w->a, lfpool_array_get(w->a, 64, NULL), 64);
	w->named_a = names_home(i, w->a);
	sem_post(&w->done);
	sem_wait(&w->go);
	w->named_after = false;
	for (size_t k = 0; k < 64; k++)
		w->named_after |= names_home(k, w->a) ||
				  lfpool_array_tls_.key[k] == (uint64_t)(uintptr_t)w->a;
	lfpool_array_put_sized(w->b, lfpool_array_get(w->b, 64, NULL), 64);	/* a miss */
	uint64_t g = array_home_gets();
	for (int n = 0; n < 20; n++) {
		void *x = lfpool_array_get(w->b, 64, NULL);
		w->failed |= !x;
		lfpool_array_put_sized(w->b, x, 64);
	}
	w->b_home_gets = array_home_gets() - g;
	w->named_b = names_home(i, w->b);
	return NULL;
}

/* array.h: the destroy of the home's pool clears its entries in the
 * thread's table (they name a pool address, which a new pool may reuse)
 * and frees the home for the thread's next pool. */
Test(array_home, destroy_clears_a_live_threads_entries_and_frees_its_home)
{
	SKIP_IN_DEBUG_BUILDS();
	struct home_wait w = { .a = make(LFPOOL_FLAVOUR_TS, 0, NULL) };
	sem_init(&w.go, 0, 0);
	sem_init(&w.done, 0, 0);
	pthread_t tid;
	cr_assert_eq(pthread_create(&tid, NULL, home_then_next_pool, &w), 0);
	sem_wait(&w.done);
	cr_assert(w.named_a);
	lfpool_array *dead = w.a;
	cr_assert_eq(lfpool_array_destroy(w.a), 0);
	w.b = make(LFPOOL_FLAVOUR_TS, 0, NULL);
	w.a = dead;	/* compared by address only */
	sem_post(&w.go);
	pthread_join(tid, NULL);
	cr_assert(!w.named_after, "no entry names the destroyed pool's address");
	cr_assert_eq(w.failed, 0);
	cr_assert_eq(w.b_home_gets, 20, "the next pool took the home: %llu gets there",
		     (unsigned long long)w.b_home_gets);
	cr_assert(w.named_b);
	lfpool_stats st = class_stats_of(w.b, 64);
	cr_assert_eq(st.gets, 21);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_array_destroy(w.b), 0);
	sem_destroy(&w.go);
	sem_destroy(&w.done);
}

static void *use_wide(void *arg)
{
	struct home_use *u = arg;
	uint64_t g = array_home_gets();
	for (int i = 0; i < 50; i++) {
		char *b = lfpool_array_get(u->ap, 64, NULL);
		u->failed |= !b || (uintptr_t)b % 64;
		memset(b, 0xa5, 64);
		lfpool_array_put(u->ap, b);
	}
	u->small_home_gets = array_home_gets() - g;
	u->small_named = names_home(lfpool_array_index_of_(64), u->ap);
	return NULL;
}

/* array.h: only pools with the default prefix take the array home (its
 * inline paths add LFPOOL_ARRAY_HOME_PREFIX_): a pool aligned to 64 is
 * served through its class's own cache, its buffers aligned. */
Test(array_home, a_pool_with_a_larger_prefix_does_not_take_the_home)
{
	lfpool_array_config c = { .min_size = MIN, .max_size = MAX, .align = 64, .name = "wide" };
	struct home_use u = { .ap = lfpool_array_create(LFPOOL_FLAVOUR_TS, &c) };
	cr_assert_not_null(u.ap);
	run_on_thread(use_wide, &u);
	cr_assert_eq(u.failed, 0, "aligned buffers of the right class");
	cr_assert_eq(u.small_home_gets, 0);
	cr_assert(!u.small_named);
	lfpool_stats st = class_stats_of(u.ap, 64);
	cr_assert_eq(st.gets, 50);
	cr_assert_eq(st.created, 1);
	cr_assert_eq(lfpool_array_destroy(u.ap), 0);
}

struct home_hold {
	lfpool_array *ap;
	sem_t go, done;
};

/* Get and put back 4 buffers of 64 B (they stay in the array home), wait. */
static void *fill_home_and_wait(void *arg)
{
	struct home_hold *h = arg;
	void *b[4];
	for (int i = 0; i < 4; i++)
		b[i] = lfpool_array_get(h->ap, 64, NULL);
	for (int i = 0; i < 4; i++)
		lfpool_array_put_sized(h->ap, b[i], 64);
	sem_post(&h->done);
	sem_wait(&h->go);
	return NULL;
}

/* ts.h, "Sizing a bounded pool": a get at capacity steals from every
 * cache, the array home of a live thread included. */
Test(array_home, a_get_at_capacity_steals_from_another_threads_array_home)
{
	lfpool_array_config c = { .min_size = MIN, .max_size = MAX, .capacity = 4, .name = "cap" };
	struct home_hold h = { .ap = lfpool_array_create(LFPOOL_FLAVOUR_TS, &c) };
	cr_assert_not_null(h.ap);
	sem_init(&h.go, 0, 0);
	sem_init(&h.done, 0, 0);
	pthread_t tid;
	cr_assert_eq(pthread_create(&tid, NULL, fill_home_and_wait, &h), 0);
	sem_wait(&h.done);
	void *b[4];
	for (int i = 0; i < 4; i++)
		cr_assert_not_null(b[i] = lfpool_array_get(h.ap, 64, NULL), "get %d stole", i);
	cr_assert_null(lfpool_array_get(h.ap, 64, NULL));
	cr_assert_eq(errno, ENOBUFS);
	for (int i = 0; i < 4; i++)
		lfpool_array_put_sized(h.ap, b[i], 64);
	sem_post(&h.go);
	pthread_join(tid, NULL);
	lfpool_stats st = class_stats_of(h.ap, 64);
	cr_assert_eq(st.created, 4);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_array_destroy(h.ap), 0);
	sem_destroy(&h.go);
	sem_destroy(&h.done);
}

enum { FORK_CAP = 8 };

struct home_fork {
	lfpool_array *ap;
	sem_t filled, go;
	int status;
};

/* Hold FORK_CAP / 2 buffers of 64 B in this thread's array home, wait. */
static void *hold_in_home(void *arg)
{
	struct home_fork *h = arg;
	void *b[FORK_CAP / 2];
	for (int i = 0; i < FORK_CAP / 2; i++)
		b[i] = lfpool_array_get(h->ap, 64, NULL);
	for (int i = 0; i < FORK_CAP / 2; i++)
		lfpool_array_put_sized(h->ap, b[i], 64);
	sem_post(&h->filled);
	sem_wait(&h->go);
	return NULL;
}

/* On a thread whose array home is ap's class: fork; the child's home
 * serves on, the other thread's is forgotten with what it held. */
static void *fork_with_an_array_home(void *arg)
{
	struct home_fork *h = arg;
	size_t i = lfpool_array_index_of_(64);
	lfpool_array_put_sized(h->ap, lfpool_array_get(h->ap, 64, NULL), 64);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = !names_home(i, h->ap);
		void *b[FORK_CAP];
		int n = 0;
		while (n < FORK_CAP && (b[n] = lfpool_array_get(h->ap, 64, NULL)))
			n++;
		bad |= (n != FORK_CAP / 2) << 1;	/* the other home's are gone */
		while (n > 0)
			lfpool_array_put_sized(h->ap, b[--n], 64);
		uint64_t g = array_home_gets();
		for (int k = 0; k < 100; k++)
			lfpool_array_put_sized(h->ap, lfpool_array_get(h->ap, 64, NULL), 64);
		bad |= (array_home_gets() - g != 100) << 2;
		bad |= (lfpool_array_destroy(h->ap) != 0) << 3;
		bad |= (lfpool_array_tls_.key[i] != 0) << 4;
		_exit(bad);
	}
	h->status = -1;
	if (pid > 0 && waitpid(pid, &h->status, 0) != pid)
		h->status = -1;
	return NULL;
}

/* ts.h, fork(): the child keeps the forking thread's caches and forgets
 * the other threads', the array home included. */
Test(array_home, fork_keeps_the_forking_threads_array_home_and_forgets_the_others)
{
	SKIP_IN_DEBUG_BUILDS();
	lfpool_array_config c = { .min_size = MIN, .max_size = MAX, .capacity = FORK_CAP,
				  .name = "fork" };
	struct home_fork h = { .ap = lfpool_array_create(LFPOOL_FLAVOUR_TS, &c) };
	cr_assert_not_null(h.ap);
	sem_init(&h.filled, 0, 0);
	sem_init(&h.go, 0, 0);
	pthread_t other;
	cr_assert_eq(pthread_create(&other, NULL, hold_in_home, &h), 0);
	sem_wait(&h.filled);
	run_on_thread(fork_with_an_array_home, &h);
	cr_assert(WIFEXITED(h.status) && WEXITSTATUS(h.status) == 0, "child status %#x", h.status);
	sem_post(&h.go);
	pthread_join(other, NULL);
	lfpool_stats st = class_stats_of(h.ap, 64);
	cr_assert_eq(st.live, 0, "the parent's homes are untouched");
	cr_assert_eq(lfpool_array_destroy(h.ap), 0);
	sem_destroy(&h.filled);
	sem_destroy(&h.go);
}

/* One report (since log was last cleared) from pool, naming the problem. */
static void expect_report(struct error_log *log, const char *pool, const void *ptr,
			  const char *words)
{
	cr_assert_eq(log->calls, 1, "%d reports; last: %s", log->calls, log->problem);
	cr_assert(strstr(log->problem, words), "'%s' does not say '%s'", log->problem, words);
	cr_assert_str_eq(log->pool, pool);
	cr_assert_eq(log->ptr, ptr);
	record_errors(log);
}

/* A debug array pool whose reports go to log. */
static lfpool_array *debug_array(lfpool_flavour f, struct error_log *log)
{
	record_errors(log);
	return make(f, LFPOOL_F_DEBUG, NULL);
}

Test(array_debug, double_put_is_reported_by_its_class)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		lfpool_array *ap = debug_array(flavours_all[f], &log);
		char *a = lfpool_array_get(ap, 100, NULL), *b = lfpool_array_get(ap, 100, NULL);
		lfpool_array_put(ap, a);
		cr_assert_eq(log.calls, 0, "a good put was reported: %s", log.problem);
		/* The class reports its pool object: the buffer's prefix. */
		lfpool_array_put(ap, a);
		expect_report(&log, "bufs[128]", a - 16, "double put");
		lfpool_array_put_sized(ap, a, 100);
		expect_report(&log, "bufs[128]", a - 16, "double put");
		lfpool_stats st = class_stats_of(ap, 128);
		cr_assert(st.retained == 1 && st.live == 1, "%s: the bad puts changed nothing",
			  flavour_names[flavours_all[f]]);
		lfpool_array_put(ap, b);
		cr_assert_eq(log.calls, 0);
		lfpool_array_destroy(ap);
	}
}

Test(array_debug, foreign_and_interior_pointers_are_reported)
{
	static char other[256] __attribute__((aligned(16)));
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		lfpool_array *ap = debug_array(flavours_all[f], &log);
		char *heap = malloc(64);
		/* Hide heap's origin: gcc would warn that the inline put reads its
		 * prefix, which only release pools do (debug pools check first). */
		__asm__("" : "+r"(heap));
		lfpool_array_put(ap, other + 64);
		expect_report(&log, "bufs", other + 64, "not from this array pool");
		lfpool_array_put_sized(ap, other + 64, 100);
		expect_report(&log, "bufs", other + 64, "not from this array pool");
		lfpool_array_put(ap, heap);
		expect_report(&log, "bufs", heap, "not from this array pool");
		char *a = lfpool_array_get(ap, 100, NULL);
		lfpool_array_put(ap, a + 16);
		expect_report(&log, "bufs", a + 16, "not from this array pool");
		lfpool_array_put(ap, a);
		cr_assert_eq(log.calls, 0);
		cr_assert_eq(class_stats_of(ap, 0).live, 0);
		free(heap);
		lfpool_array_destroy(ap);
	}
}

Test(array_debug, sized_put_with_a_wrong_size_is_reported)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		lfpool_array *ap = debug_array(flavours_all[f], &log);
		char *a = lfpool_array_get(ap, 100, NULL);
		lfpool_array_put_sized(ap, a, 1000);
		expect_report(&log, "bufs", a, "another class");
		lfpool_array_put_sized(ap, a, 16);
		expect_report(&log, "bufs", a, "another class");
		cr_assert_eq(class_stats_of(ap, 128).live, 1, "the bad puts pooled nothing");
		lfpool_array_put_sized(ap, a, 65);	/* the same class: fine */
		char *big = lfpool_array_get(ap, 3 * MAX, NULL);
		lfpool_array_put_sized(ap, big, 2 * MAX);
		expect_report(&log, "bufs", big, "oversize buffer with another size");
		lfpool_array_put_sized(ap, big, 3 * MAX);
		cr_assert_eq(log.calls, 0);
		uint64_t gets, out;
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert_eq(out, 0);
		lfpool_array_destroy(ap);
	}
}

/* array.h: an oversize buffer put to another array pool is reported by
 * that pool, debug or release (its prefix names its pool: the put would
 * free it with the other pool's alignment and allocator), and freed by
 * neither; it then goes back to its own pool. */
Test(array_debug, an_oversize_buffer_put_to_another_pool_is_reported)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		for (int debug = 0; debug < 2; debug++) {
			struct error_log log;
			record_errors(&log);
			unsigned flags = debug ? LFPOOL_F_DEBUG : 0;
			lfpool_array *one = make(flavours_all[f], flags, NULL);
			lfpool_array *two = make(flavours_all[f], flags, NULL);
			char *big = lfpool_array_get(one, 3 * MAX, NULL);
			cr_assert_not_null(big);
			lfpool_array_put(two, big);
			expect_report(&log, "bufs", big, "another array pool");
			lfpool_array_put_sized(two, big, 3 * MAX);
			expect_report(&log, "bufs", big, "another array pool");
			uint64_t gets, out;
			lfpool_array_oversize_stats(two, &gets, &out);
			cr_assert_eq(out, 0, "%s, debug %d: the other pool counted it",
				     flavour_names[flavours_all[f]], debug);
			lfpool_array_oversize_stats(one, &gets, &out);
			cr_assert_eq(out, 1);
			lfpool_array_put(one, big);
			cr_assert_eq(log.calls, 0, "its own pool took it back: %s", log.problem);
			lfpool_array_oversize_stats(one, &gets, &out);
			cr_assert_eq(out, 0);
			lfpool_array_destroy(two);
			lfpool_array_destroy(one);
		}
	}
}

/* array.h: a debug pool reports an oversize buffer already put.  Its
 * memory went back to the allocator, which must not be the slabs' cache of
 * small blocks: 16 + 8176 bytes is one of its sizes, where a second put
 * found the prefix intact and freed the block twice (two later gets then
 * shared it).  The malloc'd guard keeps the block off glibc's top chunk,
 * so that its free lists write over the prefix. */
Test(array_debug, oversize_buffer_put_twice_is_reported)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		lfpool_array *ap = debug_array(flavours_all[f], &log);
		char *big = lfpool_array_get(ap, 8192 - 16, NULL);
		cr_assert_not_null(big);
		void *guard = malloc(64);
		lfpool_array_put(ap, big);
		cr_assert_eq(log.calls, 0);
		lfpool_array_put(ap, big);
		expect_report(&log, "bufs", big, "already put");
		uint64_t gets, out;
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert_eq(out, 0, "the second put freed nothing");
		char *x = lfpool_array_get(ap, 8192 - 16, NULL), *y = lfpool_array_get(ap, 8192 - 16, NULL);
		cr_assert(x && y && x != y, "two buffers out are two buffers");
		lfpool_array_put(ap, x);
		lfpool_array_put(ap, y);
		cr_assert_eq(log.calls, 0);
		free(guard);
		lfpool_array_destroy(ap);
	}
}

Test(array_debug, put_after_destroy_is_reported)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		lfpool_array *ap = debug_array(flavours_all[f], &log);
		char *a = lfpool_array_get(ap, 100, NULL);
		lfpool_array_destroy(ap);
		cr_assert_eq(log.calls, 1);
		cr_assert_str_eq(log.pool, "bufs[128]");
		cr_assert(strstr(log.problem, "destroyed with 1 object still out"), "%s", log.problem);
		record_errors(&log);
		lfpool_array_put(ap, a);
		expect_report(&log, "bufs", a, "after destroy");
		lfpool_array_put_sized(ap, a, 100);
		expect_report(&log, "bufs", a, "after destroy");
		errno = 0;
		cr_assert_eq(lfpool_array_trim(ap, 0), 0);
		cr_assert_eq(errno, EINVAL);
		expect_report(&log, "bufs", ap, "trim of an array pool after destroy");
		lfpool_stats st;
		errno = 0;
		cr_assert_eq(lfpool_array_stats(ap, 0, &st), -1);
		cr_assert_eq(errno, EINVAL);
		cr_assert_eq(st.created, 0);
		expect_report(&log, "bufs", ap, "stats of an array pool after destroy");
		errno = 0;
		cr_assert_null(lfpool_array_get(ap, 100, NULL));
		cr_assert_eq(errno, EINVAL);
		expect_report(&log, "bufs", ap, "get from an array pool after destroy");
		cr_assert_null(lfpool_array_get(ap, 2 * MAX, NULL), "oversize: no allocation");
		expect_report(&log, "bufs", ap, "get from an array pool after destroy");
		uint64_t gets = 7, out = 7;
		errno = 0;
		lfpool_array_oversize_stats(ap, &gets, &out);
		cr_assert(gets == 0 && out == 0 && errno == EINVAL, "%llu %llu, errno %d",
			  (unsigned long long)gets, (unsigned long long)out, errno);
		expect_report(&log, "bufs", ap, "oversize stats of an array pool after destroy");
		lfpool_array_destroy(ap);
		expect_report(&log, "bufs", ap, "already destroyed");
	}
}

/* Buffers still out at destroy are reported through the error hook, each
 * class pool and the oversize ones with their own names. */
Test(array_debug, destroy_reports_buffers_still_out)
{
	struct test_alloc t;
	test_alloc_init(&t);
	struct error_log log;
	record_errors(&log);
	lfpool_array *ap = make(LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_F_DEBUG, &t.a);
	cr_assert_not_null(lfpool_array_get(ap, 100, NULL));
	cr_assert_not_null(lfpool_array_get(ap, 2 * MAX, NULL));
	lfpool_array_destroy(ap);
	cr_assert_eq(log.calls, 2, "%d reports; last: %s", log.calls, log.problem);
	cr_assert_str_eq(log.pool, "bufs");
	cr_assert_eq(log.ptr, ap);
	cr_assert(strstr(log.problem, "destroyed with 1 oversize buffers still out"), "%s",
		  log.problem);
	lfpool_set_error_hook(NULL, NULL);
	test_alloc_fini(&t);
}

#ifdef TEST_ASAN	/* build.h */
/* Under ASan a pooled buffer is poisoned, prefix included: the write
 * itself is the error (ASan exits with 1). */
Test(array_debug, write_after_put_is_caught, .exit_code = 1)
{
	lfpool_array *ap = make(LFPOOL_FLAVOUR_POOL, LFPOOL_F_DEBUG, NULL);
	char *a = lfpool_array_get(ap, 100, NULL);
	lfpool_array_put(ap, a);
	a[5] = 1;
	lfpool_array_destroy(ap);
}
#else
/* Without ASan a pooled buffer holds the debug pattern, checked on get. */
Test(array_debug, write_after_put_is_caught)
{
	struct error_log log;
	record_errors(&log);
	lfpool_array *ap = make(LFPOOL_FLAVOUR_POOL, LFPOOL_F_DEBUG, NULL);
	char *a = lfpool_array_get(ap, 100, NULL);
	lfpool_array_put(ap, a);
	a[5] = 1;
	cr_assert_eq(lfpool_array_get(ap, 100, NULL), a);
	expect_report(&log, "bufs[128]", a - 16, "write after put");
	lfpool_array_put(ap, a);
	lfpool_array_destroy(ap);
}
#endif

/* The default error hook aborts, for each report of the array layer. */
Test(array_debug, default_hook_aborts_on_double_put, .signal = SIGABRT)
{
	lfpool_array *ap = make(LFPOOL_FLAVOUR_POOL, LFPOOL_F_DEBUG, NULL);
	void *a = lfpool_array_get(ap, 100, NULL);
	lfpool_array_put(ap, a);
	lfpool_array_put(ap, a);
}

Test(array_debug, default_hook_aborts_on_foreign_pointer, .signal = SIGABRT)
{
	static char other[256] __attribute__((aligned(16)));
	lfpool_array_put(make(LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_F_DEBUG, NULL), other + 64);
}

Test(array_debug, default_hook_aborts_on_sized_put_of_another_class, .signal = SIGABRT)
{
	lfpool_array *ap = make(LFPOOL_FLAVOUR_POOL, LFPOOL_F_DEBUG, NULL);
	lfpool_array_put_sized(ap, lfpool_array_get(ap, 100, NULL), 1000);
}

Test(array_debug, default_hook_aborts_on_put_after_destroy, .signal = SIGABRT)
{
	lfpool_array *ap = make(LFPOOL_FLAVOUR_POOL, LFPOOL_F_DEBUG, NULL);
	void *a = lfpool_array_get(ap, 100, NULL);
	lfpool_array_destroy(ap);
	lfpool_array_put(ap, a);
}
