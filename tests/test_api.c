/* SPDX-License-Identifier: MIT */
/*
 * test_api.c - the calls one flavour has and the other has not: Pool's
 * exported slow paths, Concurrent's bulk calls; and the statistics.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

Test(pool, slow_paths_serve_and_take_objects)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 8);
	c.prewarm = 3;
	lfpool_pool *pool = lfpool_pool_create(&c);
	void *a = lfpool_pool_get_slow(pool);	/* pooled: no object made */
	cr_assert_not_null(a);
	cr_assert_eq(hook_count(&h.init), 3 + REMAKES);
	cr_assert_eq(hook_count(&h.fini), REMAKES);
	lfpool_pool_put_slow(pool, NULL);
	cr_assert_eq(hook_count(&h.reset), 0);
	lfpool_pool_put_slow(pool, a);
	cr_assert_eq(hook_count(&h.reset), 1);
	lfpool_stats st;
	lfpool_pool_stats(pool, &st);
	cr_assert_eq(st.retained, 3);
	cr_assert_eq(lfpool_pool_get(pool), a, "the slow put pooled a on top");
	lfpool_pool_put(pool, a);
	lfpool_pool_destroy(pool);
}

Test(concurrent, get_bulk_hands_out_distinct_objects)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 48, 16);
	c.prewarm = 10;
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	void *objs[25];
	cr_assert_eq(lfpool_concurrent_get_bulk(pool, objs, 0), 0);
	cr_assert_eq(lfpool_concurrent_get_bulk(pool, objs, 25), 0);
	for (int i = 0; i < 25; i++) {
		cr_assert(lfpool_concurrent_owns(pool, objs[i]));
		for (int j = 0; j < i; j++)
			cr_assert_neq(objs[i], objs[j]);
	}
	/* 10 pooled (remade in debug builds), 15 new. */
	cr_assert_eq(hook_count(&h.init), 25 + 10 * REMAKES);
	cr_assert_eq(hook_count(&h.fini), 10 * REMAKES);
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.live, 25);
	lfpool_concurrent_put_bulk(pool, objs, 25);
	cr_assert_eq(hook_count(&h.reset), 25);
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.retained, 25);
	cr_assert_eq(st.live, 0);
	lfpool_concurrent_destroy(pool);
}

Test(concurrent, get_bulk_is_all_or_none)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = 48, .capacity = 10, .prewarm = 3, .allocator = &t.a };
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	void *out[8], *objs[5] = { 0 };
	cr_assert_eq(lfpool_concurrent_get_bulk(pool, out, 8), 0);
	errno = 0;
	cr_assert_eq(lfpool_concurrent_get_bulk(pool, objs, 5), -1);
	cr_assert_eq(errno, ENOBUFS);
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.live, 8, "a failed bulk get kept %llu objects",
		     (unsigned long long)(st.live - 8));
	cr_assert_eq(st.retained, 2);
	cr_assert_eq(lfpool_concurrent_get_bulk(pool, objs, 2), 0, "the 2 left are still there");
	lfpool_concurrent_put_bulk(pool, objs, 2);
	lfpool_concurrent_put_bulk(pool, out, 8);

	/* Out of memory: the same. */
	lfpool_concurrent_trim(pool, 0);
	test_alloc_fail_after(&t, 0);
	errno = 0;
	cr_assert_eq(lfpool_concurrent_get_bulk(pool, objs, 3), -1);
	cr_assert_eq(errno, ENOMEM);
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.live, 0);
	test_alloc_fail_after(&t, -1);
	lfpool_concurrent_destroy(pool);
	test_alloc_finish(&t);
}

Test(concurrent, put_bulk_skips_null_and_bad_entries)
{
	struct error_log log;
	record_errors(&log);
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 32);
	c.flags = LFPOOL_F_DEBUG;
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	void *a = lfpool_concurrent_get(pool), *b = lfpool_concurrent_get(pool);
	int local;
	void *batch[] = { NULL, a, &local, NULL, b };
	lfpool_concurrent_put_bulk(pool, batch, 0);
	cr_assert_eq(hook_count(&h.reset), 0);
	lfpool_concurrent_put_bulk(pool, batch, 5);
	cr_assert_eq(log.calls, 1, "only &local is reported");
	cr_assert_eq(log.ptr, &local);
	cr_assert_eq(hook_count(&h.reset), 2);
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.retained, 2);
	cr_assert_eq(st.live, 0);
	lfpool_concurrent_destroy(pool);
}

/* misses counts the gets that had to make an object; the object counts add
 * up; bytes_held grows with slabs. */
FLAVOUR_TEST(stats, counts_add_up)
{
	lfpool_config c = { .obj_size = 100, .prewarm = 5 };
	void *pool = ops->create(&c);
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.misses, 0);
	cr_assert_gt(st.bytes_held, 5 * 100);
	uint64_t held = st.bytes_held;
	enum { N = 2000 };	/* more than one slab holds */
	static void *objs[N];
	for (int i = 0; i < N; i++)
		objs[i] = ops->get(pool);
	ops->stats(pool, &st);
	cr_assert_eq(st.misses, N - 5, "%s: misses %llu", ops->name, (unsigned long long)st.misses);
	cr_assert_eq(st.created, N);
	cr_assert_eq(st.live, N);
	cr_assert_eq(st.retained, 0);
	cr_assert_gt(st.bytes_held, held);
	cr_assert_eq(st.created, st.retained + st.live);
	for (int i = 0; i < 100; i++)
		ops->put(pool, objs[i]);
	ops->stats(pool, &st);
	cr_assert_eq(st.retained, 100);
	cr_assert_eq(st.live, N - 100);
	cr_assert_eq(st.misses, N - 5);
	for (int i = 100; i < N; i++)
		ops->put(pool, objs[i]);
	ops->destroy(pool);
}
