/* SPDX-License-Identifier: MIT */
/*
 * test_trim.c - trim(keep) destroys exactly pooled - keep objects, gives
 * wholly free slabs back to the backing allocator, leaves objects that are
 * out alone, and the pool keeps working afterwards.
 */
#include <criterion/criterion.h>

#include "support.h"

#define OBJ 1024

FLAVOUR_TEST(trim, destroys_exactly_pooled_minus_keep)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, OBJ, 16);
	c.prewarm = 100;
	void *pool = ops->create(&c);
	void *out[5];
	for (int i = 0; i < 5; i++)
		out[i] = ops->get(pool);
	lfpool_stats st;

	/* The 5 gets of pooled objects remade them in debug builds. */
	cr_assert_eq(ops->trim(pool, 30), 65, "%s", ops->name);
	cr_assert_eq(hook_count(&h.fini), 65 + 5 * REMAKES);
	ops->stats(pool, &st);
	cr_assert_eq(st.created, 35);
	cr_assert_eq(st.retained, 30);
	cr_assert_eq(st.live, 5);
	cr_assert_eq(st.trims, 1);

	cr_assert_eq(ops->trim(pool, 30), 0, "%s: nothing beyond keep", ops->name);
	cr_assert_eq(ops->trim(pool, 1000), 0);
	cr_assert_eq(hook_count(&h.fini), 65 + 5 * REMAKES);

	cr_assert_eq(ops->trim(pool, 0), 30);
	ops->stats(pool, &st);
	cr_assert_eq(st.created, 5);
	cr_assert_eq(st.retained, 0);
	cr_assert_eq(ops->trim(pool, 0), 0, "%s: trim of an empty pool", ops->name);

	for (int i = 0; i < 5; i++)
		ops->put(pool, out[i]);
	ops->destroy(pool);
	cr_assert_eq(hook_count(&h.init), hook_count(&h.fini));
}

FLAVOUR_TEST(trim, gives_slabs_back_to_the_allocator)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = OBJ, .prewarm = 500, .allocator = &t.a };
	void *pool = ops->create(&c);
	lfpool_stats before, after;
	ops->stats(pool, &before);
	cr_assert_geq(before.slab_allocs, 3, "%s: want several slabs", ops->name);
	long blocks = t.live;
	size_t bytes = t.live_bytes;

	cr_assert_eq(ops->trim(pool, 0), 500);
	ops->stats(pool, &after);
	cr_assert_eq(after.slab_frees, before.slab_allocs, "%s: %llu of %llu slabs freed",
		     ops->name, (unsigned long long)after.slab_frees,
		     (unsigned long long)before.slab_allocs);
	cr_assert_eq(t.live, blocks - (long)after.slab_frees, "%s: allocator holds %ld blocks",
		     ops->name, t.live);
	cr_assert_lt(t.live_bytes, bytes);
	cr_assert_eq(t.live_bytes, after.bytes_held, "%s: bytes_held %llu, allocator %zu",
		     ops->name, (unsigned long long)after.bytes_held, t.live_bytes);

	/* The pool works afterwards, growing again. */
	void *objs[300];
	for (int i = 0; i < 300; i++) {
		objs[i] = ops->get(pool);
		cr_assert_not_null(objs[i]);
		fill_pattern(objs[i], OBJ, i);
	}
	for (int i = 0; i < 300; i++) {
		cr_assert(check_pattern(objs[i], OBJ, i));
		cr_assert(ops->owns(pool, objs[i]));
		ops->put(pool, objs[i]);
	}
	ops->stats(pool, &after);
	cr_assert_eq(after.created, 300);
	cr_assert_gt(after.slab_allocs, before.slab_allocs);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

/* A slab with an object out stays; the object's bytes stay the user's. */
FLAVOUR_TEST(trim, keeps_slabs_that_hold_objects_out)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = OBJ, .allocator = &t.a };
	void *pool = ops->create(&c);
	void *out = ops->get(pool);	/* the first object of the first slab */
	fill_pattern(out, OBJ, 99);
	cr_assert_eq(ops->prewarm(pool, 400), 0);
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_geq(st.slab_allocs, 3);

	cr_assert_eq(ops->trim(pool, 0), 400);
	ops->stats(pool, &st);
	cr_assert_eq(st.slab_allocs - st.slab_frees, 1, "%s: %llu slabs held for one object",
		     ops->name, (unsigned long long)(st.slab_allocs - st.slab_frees));
	cr_assert(check_pattern(out, OBJ, 99), "%s: trim touched an object out", ops->name);
	cr_assert(ops->owns(pool, out));
	ops->put(pool, out);
	cr_assert_eq(ops->get(pool), out);
	ops->put(pool, out);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

/* lfpool/common.h, fork(): a Concurrent trim that another thread was
 * running at the fork (parked in the fini hook, the objects it popped in
 * its hands) never ends in the child; those objects count as out, and the
 * child's gets at capacity fail with ENOBUFS instead of waiting for the
 * trim to give them back (concurrent.c, "Trim and a get at capacity"). */
static void *conc_get_of(void *pool)
{
	return lfpool_concurrent_get(pool);
}

static void *trim_all(void *pool)
{
	lfpool_concurrent_trim(pool, 0);
	return NULL;
}

/* A Concurrent pool of capacity 4 with fini on ctx, its 4 objects made
 * and pooled. */
static lfpool_concurrent *full_pool(lfpool_hook_fn fini, void *ctx)
{
	lfpool_config c = { .obj_size = 64, .capacity = 4, .fini = fini, .hook_ctx = ctx };
	lfpool_concurrent *p = lfpool_concurrent_create(&c);
	cr_assert_not_null(p);
	void *objs[4];
	for (int i = 0; i < 4; i++)
		cr_assert_not_null(objs[i] = lfpool_concurrent_get(p));
	for (int i = 0; i < 4; i++)
		lfpool_concurrent_put(p, objs[i]);
	return p;
}

Test(trim, a_fork_during_a_concurrent_trim_leaves_the_child_s_gets_at_capacity_failing)
{
	TEST_DEADLINE(60);
	struct parked_hook h;
	parked_hook_init(&h);
	lfpool_concurrent *p = full_pool(parked_hook, &h);
	void *objs[4];
	struct gets_to_capacity g = { conc_get_of, p, 16 };
	fork_while_parked(&h, trim_all, p, &g);
	for (int i = 0; i < 4; i++)
		cr_assert_not_null(objs[i] = lfpool_concurrent_get(p), "the parent's pool, get %d", i);
	for (int i = 0; i < 4; i++)
		lfpool_concurrent_put(p, objs[i]);
	cr_assert_eq(lfpool_concurrent_destroy(p), 0);
	parked_hook_fini(&h);
	TEST_DEADLINE(0);
}

/* The same when the forking thread is the one trimming: its fini hook
 * forks, and in the child that trim goes on and ends; the child's gets at
 * capacity then fail with ENOBUFS (the reset keeps the forking thread's
 * own trim: one that counted it out too made it end twice, and they hung). */
Test(trim, a_fork_from_a_hook_inside_a_concurrent_trim_leaves_the_child_s_gets_working)
{
	TEST_DEADLINE(60);
	struct forking_hook f = { false, false, 0 };
	lfpool_concurrent *p = full_pool(forking_hook, &f);
	f.armed = true;
	cr_assert_eq(lfpool_concurrent_trim(p, 0), 4);	/* the first fini forks */
	struct gets_to_capacity g = { conc_get_of, p, 16 };
	forked_in_hook_finish(&f, &g);
	cr_assert_eq(lfpool_concurrent_destroy(p), 0);
	TEST_DEADLINE(0);
}
