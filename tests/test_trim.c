/* SPDX-License-Identifier: MIT */
/*
 * test_trim.c - trim(keep) destroys exactly pooled - keep objects, gives
 * wholly free slabs back to the backing allocator, leaves objects that are
 * out alone, and the pool keeps working afterwards.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	/* A Pool gives its side data, leaves and item array back too (pool.h). */
	long want = ops == &flavours[FL_POOL] ? 0 : blocks - (long)after.slab_frees;
	cr_assert_eq(t.live, want, "%s: allocator holds %ld blocks, not %ld", ops->name, t.live,
		     want);
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

/*
 * trim(0) gives the memory of a burst back, side data and
 * Pool's item array included.  A burst of BURST_OBJS small objects, each
 * written (its slab's pages resident), put back, trim(0) and
 * lfpool_release_memory: the resident set falls to within a tenth of the
 * burst above where it started (before, a Pool kept 93 % of it: its item
 * array and its slabs' side data, and a Concurrent pool 83 %: the side
 * data).  Compared to the burst, not to a fixed figure.
 */
#define BURST_OBJS 1000000u
#define BURST_SIZE 16

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	cr_assert_not_null(f);
	cr_assert_eq(fscanf(f, "%ld %ld", &pages, &resident), 2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Get BURST_OBJS objects through get, write each, put them back through
 * put, trim(0) through trim, give the library's kept blocks back: the
 * burst (KiB above the start), and after it all in *left. */
static long burst_and_trim(void *pool, void *(*get)(void *), void (*put)(void *, void *),
			   size_t (*trim)(void *, size_t), long *left)
{
	void **objs = malloc(BURST_OBJS * sizeof(*objs));
	cr_assert_not_null(objs);
	for (size_t i = 0; i < BURST_OBJS; i++)	/* resident before the start */
		objs[i] = (void *)(i + 1);
	long start = rss_kib();
	for (size_t i = 0; i < BURST_OBJS; i++) {
		objs[i] = get(pool);
		cr_assert_not_null(objs[i]);
		memset(objs[i], (int)i, BURST_SIZE);
	}
	for (size_t i = 0; i < BURST_OBJS; i++)
		put(pool, objs[i]);
	long burst = rss_kib() - start;
	cr_assert_eq(trim(pool, 0), BURST_OBJS);
	lfpool_release_memory();
	*left = rss_kib() - start;
	free(objs);
	return burst;
}

/* Under ASan the resident set says nothing of the library's: its
 * allocator keeps freed blocks in quarantine (the directory's leaves,
 * Pool's smaller item arrays), and lfpool_release_memory has nothing to
 * give back there (lfpool/common.h). */
static void skip_under_asan(void)
{
#ifdef TEST_ASAN
	cr_skip_test("AddressSanitizer's quarantine keeps freed blocks resident");
#endif
}

FLAVOUR_TEST(trim, to_zero_gives_the_burst_s_memory_back)
{
	skip_under_asan();
	lfpool_config c = { .obj_size = BURST_SIZE };
	void *pool = ops->create(&c);
	long left, burst = burst_and_trim(pool, ops->get, ops->put, ops->trim, &left);
	cr_assert_gt(burst, (long)(BURST_OBJS * BURST_SIZE / 1024), "%s: burst of %ld KiB",
		     ops->name, burst);
	cr_assert_leq(left, burst / 10, "%s: %ld KiB of a burst of %ld KiB left after trim(0)",
		      ops->name, left, burst);
	ops->destroy(pool);
}

static void *ts_get_of(void *pool) { return lfpool_ts_get(pool); }
static void ts_put_of(void *pool, void *obj) { lfpool_ts_put(pool, obj); }
/* The calling thread's cache is drained first: a trim leaves caches be. */
static size_t ts_trim_of(void *pool, size_t keep)
{
	lfpool_ts_drain(pool);
	return lfpool_ts_trim(pool, keep);
}

Test(trim, to_zero_gives_a_threadstatic_burst_s_memory_back)
{
	skip_under_asan();
	lfpool_config c = { .obj_size = BURST_SIZE };
	lfpool_ts *pool = lfpool_ts_create(&c);
	cr_assert_not_null(pool);
	long left, burst = burst_and_trim(pool, ts_get_of, ts_put_of, ts_trim_of, &left);
	cr_assert_leq(left, burst / 10, "%ld KiB of a burst of %ld KiB left after trim(0)", left,
		      burst);
	lfpool_ts_destroy(pool);
}

/*
 * What stays after trim(0) with no object out is what the headers say
 * (lfpool/pool.h, lfpool/concurrent.h, trim): nothing for a Pool; for a
 * Concurrent pool of 64 KiB slabs of the default allocator, its directory,
 * a 32 KiB leaf per 1,024 slab numbers it used (before, also the side
 * data of every slab: 5 bytes per object of its peak), and the side data
 * of its first, small slabs (lib/slab.h, LFP_SMALL_MAX).
 */
FLAVOUR_TEST(trim, to_zero_leaves_what_the_header_says)
{
	lfpool_config c = { .obj_size = BURST_SIZE };
	void *pool = ops->create(&c);
	lfpool_stats st;
	long left;
	burst_and_trim(pool, ops->get, ops->put, ops->trim, &left);
	ops->stats(pool, &st);
	cr_assert_eq(st.slab_frees, st.slab_allocs, "%s", ops->name);
	uint64_t want = 0, small = 0;
	if (ops == &flavours[FL_CONCURRENT]) {
		want = (uint64_t)32768 * ((st.slab_allocs + 1023) / 1024);
		/* and the side data of its small slabs (slab 1's is in the
		 * pool's own block, but for a debug pool's: 512 bytes): 5
		 * bytes per object of 4 and 16 KiB slabs, rounded up to
		 * blocks of 2 and 8 KiB */
		small = 10240 + (DEBUG_BUILD ? 512 : 0);
	}
	cr_assert_eq(st.bytes_held, want + small,
		     "%s: %llu bytes held after trim(0), the header says %llu", ops->name,
		     (unsigned long long)st.bytes_held, (unsigned long long)(want + small));
	ops->destroy(pool);
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
