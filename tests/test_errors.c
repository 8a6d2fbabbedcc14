/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c - failures of the backing allocator (ENOMEM) at create,
 * prewarm and get, exhausted capacity (ENOBUFS), and the NULL no-ops.  A
 * failed call must leave the pool's objects exactly as they were and the
 * pool usable once the allocator recovers.
 */
#include <errno.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "support.h"

#define OBJ 4096	/* big objects: few per slab, so slab growth is frequent */

/* The object-level figures a failed call must not change. */
static void assert_same_objects(const lfpool_stats *was, const lfpool_stats *now,
				const char *what)
{
	cr_assert_eq(now->created, was->created, "%s: created %llu -> %llu", what,
		     (unsigned long long)was->created, (unsigned long long)now->created);
	cr_assert_eq(now->retained, was->retained, "%s: retained changed", what);
	cr_assert_eq(now->live, was->live, "%s: live changed", what);
	cr_assert_eq(now->gets, was->gets, "%s: gets changed", what);
	cr_assert_eq(now->puts, was->puts, "%s: puts changed", what);
	cr_assert_eq(now->hits, was->hits, "%s: hits changed", what);
}

/* With nothing out, trim(0) must give every slab back: a failure that lost
 * track of slab memory shows here. */
static void assert_trim_frees_all(const struct flavour_ops *ops, void *pool)
{
	ops->trim(pool, 0);
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.slab_frees, st.slab_allocs, "%s: %llu slabs still held", ops->name,
		     (unsigned long long)(st.slab_allocs - st.slab_frees));
}

FLAVOUR_TEST(enomem, create_fails_cleanly_at_every_allocation)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 64);
	c.prewarm = 40;
	void *pool;
	long k = 0;
	for (;; k++) {
		test_alloc_fail_after(&t, k);
		errno = 0;
		pool = ops->create(&c);
		if (pool)
			break;
		cr_assert_eq(errno, ENOMEM, "%s, failure %ld: errno %d", ops->name, k, errno);
		cr_assert_eq(t.live, 0, "%s, failure %ld: %ld blocks kept", ops->name, k, t.live);
		cr_assert_eq(hook_count(&h.init), hook_count(&h.fini));
	}
	cr_assert_geq(k, 3, "%s: only %ld allocations to fail", ops->name, k);
	test_alloc_fail_after(&t, -1);
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.created, 40);
	cr_assert_eq(hook_count(&h.init), 40);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

/* A failed call gives back the slabs it grew: as many held as before. */
static void assert_same_slabs(const lfpool_stats *was, const lfpool_stats *now, const char *name)
{
	cr_assert_eq(now->slab_allocs - now->slab_frees, was->slab_allocs - was->slab_frees,
		     "%s: a failed call kept %lld slabs", name,
		     (long long)((now->slab_allocs - now->slab_frees) -
				 (was->slab_allocs - was->slab_frees)));
}

/* ... and every byte it took: what the backing allocator has out, and what
 * the pool says it holds (a slab directory leaf is neither an object nor
 * a slab). */
static void assert_same_bytes(const struct test_alloc *t, size_t was_live, const lfpool_stats *was,
			      const lfpool_stats *now, const char *name)
{
	cr_assert_eq(t->live_bytes, was_live, "%s: a failed call kept %lld bytes of the allocator",
		     name, (long long)(t->live_bytes - was_live));
	cr_assert_eq(now->bytes_held, was->bytes_held, "%s: bytes_held %llu -> %llu", name,
		     (unsigned long long)was->bytes_held, (unsigned long long)now->bytes_held);
}

FLAVOUR_TEST(enomem, prewarm_fails_cleanly_and_works_after_recovery)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 64);
	void *pool = ops->create(&c);
	void *out[3];
	for (int i = 0; i < 3; i++) {
		out[i] = ops->get(pool);
		fill_pattern(out[i], OBJ, i);
	}
	lfpool_stats was, now;
	ops->stats(pool, &was);
	long k = 0;
	for (;; k++) {
		test_alloc_fail_after(&t, k);
		errno = 0;
		int r = ops->prewarm(pool, 40);
		test_alloc_fail_after(&t, -1);
		if (r == 0)
			break;
		cr_assert_eq(r, -1);
		cr_assert_eq(errno, ENOMEM, "%s: errno %d", ops->name, errno);
		ops->stats(pool, &now);
		assert_same_objects(&was, &now, ops->name);
		assert_same_slabs(&was, &now, ops->name);
		cr_assert_eq(hook_count(&h.init), 3, "%s: init ran for a failed prewarm",
			     ops->name);
	}
	cr_assert_geq(k, 2, "%s: only %ld allocations to fail", ops->name, k);
	ops->stats(pool, &now);
	cr_assert_eq(now.created, 43);
	cr_assert_eq(now.retained, 40);
	cr_assert_eq(hook_count(&h.init), 43);
	for (int i = 0; i < 3; i++) {
		cr_assert(check_pattern(out[i], OBJ, i), "%s: object out was touched", ops->name);
		ops->put(pool, out[i]);
	}
	assert_trim_frees_all(ops, pool);
	ops->destroy(pool);
	cr_assert_eq(hook_count(&h.fini), 43);
	test_alloc_finish(&t);
}

FLAVOUR_TEST(enomem, get_fails_cleanly_at_every_allocation)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 64);
	void *pool = ops->create(&c);
	void *objs[64];
	int n = 0, failures = 0;
	lfpool_stats was, now;
	/* Every get, made to fail at its 1st, 2nd, ... allocation until
	 * it needs no more: only gets that grow the pool can fail. */
	while (n < 64) {
		ops->stats(pool, &was);
		size_t was_live = t.live_bytes;
		for (long k = 0;; k++) {
			test_alloc_fail_after(&t, k);
			errno = 0;
			objs[n] = ops->get(pool);
			test_alloc_fail_after(&t, -1);
			if (objs[n])
				break;
			failures++;
			cr_assert_eq(errno, ENOMEM, "%s: errno %d", ops->name, errno);
			ops->stats(pool, &now);
			assert_same_objects(&was, &now, ops->name);
			assert_same_slabs(&was, &now, ops->name);
			assert_same_bytes(&t, was_live, &was, &now, ops->name);
			cr_assert_eq(hook_count(&h.init), n);
		}
		fill_pattern(objs[n], OBJ, n);
		n++;
	}
	cr_assert_geq(failures, 4, "%s: %d failures", ops->name, failures);
	for (int i = 0; i < n; i++) {
		cr_assert(check_pattern(objs[i], OBJ, i));
		ops->put(pool, objs[i]);
	}
	ops->stats(pool, &now);
	cr_assert_eq(now.created, 64);
	cr_assert_eq(now.retained, 64);
	assert_trim_frees_all(ops, pool);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

FLAVOUR_TEST(enobufs, get_at_capacity_is_enobufs_not_enomem)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = 24, .capacity = 5, .allocator = &t.a };
	void *pool = ops->create(&c);
	void *objs[5];
	for (int i = 0; i < 5; i++)
		cr_assert_not_null(objs[i] = ops->get(pool));
	lfpool_stats was, now;
	ops->stats(pool, &was);
	errno = 0;
	cr_assert_null(ops->get(pool));
	cr_assert_eq(errno, ENOBUFS, "%s: errno %d", ops->name, errno);
	/* Capacity is the reason even when memory is short as well. */
	test_alloc_fail_after(&t, 0);
	errno = 0;
	cr_assert_null(ops->get(pool));
	cr_assert_eq(errno, ENOBUFS, "%s: errno %d", ops->name, errno);
	ops->stats(pool, &now);
	assert_same_objects(&was, &now, ops->name);

	/* A returned object is served again, without the allocator. */
	ops->put(pool, objs[2]);
	cr_assert_eq(ops->get(pool), objs[2]);
	test_alloc_fail_after(&t, -1);
	for (int i = 0; i < 5; i++)
		ops->put(pool, objs[i]);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

FLAVOUR_TEST(enobufs, prewarm_beyond_capacity_creates_nothing)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 24, 8);
	c.capacity = 10;
	c.prewarm = 4;
	void *pool = ops->create(&c);
	void *out = ops->get(pool);	/* pooled: remade in debug builds */
	errno = 0;
	cr_assert_eq(ops->prewarm(pool, 7), -1);
	cr_assert_eq(errno, ENOBUFS, "%s: errno %d", ops->name, errno);
	cr_assert_eq(hook_count(&h.init), 4 + REMAKES);
	cr_assert_eq(ops->prewarm(pool, 6), 0, "%s: up to capacity is allowed", ops->name);
	cr_assert_eq(hook_count(&h.init), 10 + REMAKES);
	cr_assert_eq(ops->prewarm(pool, 0), 0, "%s: prewarm 0 at capacity", ops->name);
	errno = 0;
	cr_assert_eq(ops->prewarm(pool, 1), -1);
	cr_assert_eq(errno, ENOBUFS);
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.created, 10);
	cr_assert_eq(st.retained, 9);
	ops->put(pool, out);
	ops->destroy(pool);
}

FLAVOUR_TEST(enomem, get_below_capacity_is_enomem)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = 24, .capacity = 100, .allocator = &t.a };
	void *pool = ops->create(&c);
	test_alloc_fail_after(&t, 0);
	errno = 0;
	cr_assert_null(ops->get(pool));
	cr_assert_eq(errno, ENOMEM, "%s: errno %d", ops->name, errno);
	test_alloc_fail_after(&t, -1);
	void *obj = ops->get(pool);
	cr_assert_not_null(obj, "%s: no recovery", ops->name);
	ops->put(pool, obj);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

FLAVOUR_TEST(noop, destroy_null_and_put_null)
{
	ops->destroy(NULL);
	struct hooks h;
	lfpool_config c = hooked_config(&h, 24, 8);
	c.prewarm = 2;
	void *pool = ops->create(&c);
	void *obj = ops->get(pool);
	lfpool_stats was, now;
	ops->stats(pool, &was);
	ops->put(pool, NULL);
	ops->stats(pool, &now);
	assert_same_objects(&was, &now, ops->name);
	cr_assert_eq(hook_count(&h.reset), 0, "%s: reset ran for NULL", ops->name);
	/* The pool still hands out only what it holds. */
	void *a = ops->get(pool);
	cr_assert_not_null(a);
	cr_assert_neq(a, obj);
	ops->stats(pool, &now);
	cr_assert_eq(now.retained, 0);
	ops->put(pool, a);
	ops->put(pool, obj);
	ops->destroy(pool);
}

/* lfpool_concurrent_get_bulk is all or none (concurrent.h), and a call
 * that fails keeps nothing it took (common.h): a bulk get that needs three
 * new slabs, made to fail at its 1st, 2nd, ... allocation, leaves the
 * pool's objects and slabs as they were, and ran no init hook.  (It got
 * its objects one by one, and gave back on failure only the objects, as
 * pooled ones: the slabs grown before the failing one stayed, and so did
 * their objects, counted as created.) */
Test(enomem, concurrent_get_bulk_fails_cleanly_at_every_allocation)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 64);
	c.prewarm = 1;		/* slab 0 and the directory exist */
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	cr_assert_not_null(pool);
	enum { N = 40 };	/* 4 KiB objects: three slabs more */
	void *objs[N];
	int failures = 0;
	lfpool_stats was, now;
	lfpool_concurrent_stats(pool, &was);
	for (long k = 0;; k++) {
		test_alloc_fail_after(&t, k);
		errno = 0;
		int rc = lfpool_concurrent_get_bulk(pool, objs, N);
		test_alloc_fail_after(&t, -1);
		if (rc == 0)
			break;
		failures++;
		cr_assert_eq(errno, ENOMEM, "failing at allocation %ld: errno %d", k, errno);
		lfpool_concurrent_stats(pool, &now);
		assert_same_objects(&was, &now, "concurrent get_bulk");
		assert_same_slabs(&was, &now, "concurrent get_bulk");
		/* The prewarmed object, which each call took and gave back, is
		 * remade in debug builds (build.h): fini and init once more. */
		cr_assert_eq(hook_count(&h.fini), REMAKES * (k + 1), "failing at allocation %ld: "
			     "fini ran %ld times", k, hook_count(&h.fini));
		cr_assert_eq(hook_count(&h.init), 1 + REMAKES * (k + 1),
			     "failing at allocation %ld: init ran", k);
	}
	cr_assert_geq(failures, 3, "%d failures", failures);
	lfpool_concurrent_stats(pool, &now);
	cr_assert(now.created == N && now.live == N, "created %llu, live %llu",
		  (unsigned long long)now.created, (unsigned long long)now.live);
	for (int i = 0; i < N; i++)
		fill_pattern(objs[i], OBJ, (unsigned)i);
	for (int i = 0; i < N; i++)
		cr_assert(check_pattern(objs[i], OBJ, (unsigned)i), "object %d is shared", i);
	lfpool_concurrent_put_bulk(pool, objs, N);
	lfpool_concurrent_trim(pool, 0);
	lfpool_concurrent_stats(pool, &now);
	cr_assert_eq(now.slab_frees, now.slab_allocs, "%llu slabs still held",
		     (unsigned long long)(now.slab_allocs - now.slab_frees));
	lfpool_concurrent_destroy(pool);
	test_alloc_finish(&t);
}

/* A ThreadStatic get whose cache is empty makes its object in the depot:
 * made to fail at each allocation of the pool's first growth (the slab
 * directory's leaf, the side data, the slab), it keeps none of them, as
 * Pool's and Concurrent's gets (enomem/get_fails_cleanly_at_every_allocation). */
Test(enomem, ts_get_at_the_first_growth_keeps_no_memory)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 64);
	lfpool_ts *pool = lfpool_ts_create(&c);
	cr_assert_not_null(pool);
	cr_assert_eq(lfpool_ts_attach(pool), 0);	/* the cache's magazines first */
	lfpool_stats was = stats_of(pool), now;
	size_t was_live = t.live_bytes;
	void *o;
	long k = 0;
	for (;; k++) {
		test_alloc_fail_after(&t, k);
		errno = 0;
		o = lfpool_ts_get(pool);
		test_alloc_fail_after(&t, -1);
		if (o)
			break;
		cr_assert_eq(errno, ENOMEM, "failing at allocation %ld: errno %d", k, errno);
		now = stats_of(pool);
		assert_same_objects(&was, &now, "ts get");
		assert_same_slabs(&was, &now, "ts get");
		assert_same_bytes(&t, was_live, &was, &now, "ts get");
	}
	cr_assert_geq(k, 2, "only %ld allocations to fail", k);
	lfpool_ts_put(pool, o);
	lfpool_ts_detach(pool);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
	test_alloc_finish(&t);
}

/* A cache's magazines come from the pool's own slabs of magazines, whose
 * slab directory moves its leaf 0 out of the pool's struct when a third
 * slab is needed.  Explicit caches made one after another, each made to
 * fail at every allocation before it succeeds: a failed cache_create is
 * NULL with ENOMEM and keeps no byte of the allocator, also when the
 * allocation that fails is that leaf's (the fuzzer's crash: the failed
 * growth then read slot 2 past the two inline slots, and freed what lay
 * there as its side data). */
Test(enomem, cache_create_fails_cleanly_while_the_magazines_grow)
{
	enum { CACHES = 40 };
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, 16, 0);
	c.magazine_size = 2;	/* 16-byte magazines: a third slab of them soon */
	lfpool_ts *pool = lfpool_ts_create(&c);
	cr_assert_not_null(pool);
	lfpool_ts_cache *caches[CACHES];
	long failed = 0;
	for (int i = 0; i < CACHES; i++) {
		for (long k = 0;; k++) {
			size_t was_live = t.live_bytes;
			test_alloc_fail_after(&t, k);
			errno = 0;
			caches[i] = lfpool_ts_cache_create(pool);
			test_alloc_fail_after(&t, -1);
			if (caches[i])
				break;
			cr_assert_eq(errno, ENOMEM, "cache %d, failing at allocation %ld: errno %d", i, k,
				     errno);
			cr_assert_eq(t.live_bytes, was_live,
				     "cache %d, failing at allocation %ld: kept %lld bytes", i, k,
				     (long long)(t.live_bytes - was_live));
			failed++;
		}
		void *o = lfpool_ts_cache_get(caches[i]);
		cr_assert_not_null(o);
		lfpool_ts_cache_put(caches[i], o);
	}
	cr_assert_geq(failed, CACHES / 4, "only %ld allocations failed", failed);
	for (int i = 0; i < CACHES; i++)
		lfpool_ts_cache_destroy(caches[i]);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
	test_alloc_finish(&t);
}
