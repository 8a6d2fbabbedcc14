/* SPDX-License-Identifier: MIT */
/*
 * test_small.c - a small pool costs little (lib/slab.h, LFP_SMALL_MAX): an
 * unbounded pool's first slabs are small and grow fourfold up to the full
 * slab size, and every object of every size of slab is found (owns, the
 * index of a put, the debug checks) and given back by trim.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"
#include "threadstatic/ts_internal.h"	/* a pool's block: lfp_core_block_bytes */

#define OBJ 64
/* Past the small slabs of 64 B objects (15 + 63 + 255 objects), slab 0
 * (1,023) and two more full slabs. */
#define MANY 3000
#define SMALL_HELD 8192	/* bytes_held of a pool with one object got and put */

static lfpool_stats flavour_stats(const struct flavour_ops *ops, void *pool)
{
	lfpool_stats st;
	ops->stats(pool, &st);
	return st;
}

FLAVOUR_TEST(small, one_object_holds_at_most_8_KiB)
{
	lfpool_config c = { .obj_size = OBJ };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool);
	ops->put(pool, ops->get(pool));
	lfpool_stats st = flavour_stats(ops, pool);
	cr_assert_eq(st.slab_allocs, 1);
	cr_assert_leq(st.bytes_held, SMALL_HELD, "%s: %llu bytes held for one object", ops->name,
		      (unsigned long long)st.bytes_held);
	ops->destroy(pool);
}

/* A ThreadStatic pool of OBJ-byte objects with one object got and put,
 * and its stats after that in *st. */
static lfpool_ts *ts_with_one_object(lfpool_stats *st)
{
	lfpool_config c = { .obj_size = OBJ };
	lfpool_ts *pool = lfpool_ts_create(&c);
	cr_assert_not_null(pool);
	lfpool_ts_put(pool, lfpool_ts_get(pool));
	lfpool_ts_stats(pool, st);
	return pool;
}

/* A thread's first two magazines (64 pointers each, the default) take a
 * slab of 1 KiB and its side data (lib/slab.h, headless): the pool holds
 * at most that beyond what a Pool of its objects holds.  With a slab
 * header in front of them they took a 2 KiB slab. */
Test(small, a_thread_s_first_two_magazines_take_one_KiB)
{
	lfpool_config c = { .obj_size = OBJ };
	lfpool_stats st, pst;
	lfpool_ts *pool = ts_with_one_object(&st);
	lfpool_pool *plain = lfpool_pool_create(&c);
	cr_assert_not_null(plain);
	lfpool_pool_put(plain, lfpool_pool_get(plain));
	lfpool_pool_stats(plain, &pst);
	cr_assert_leq(st.bytes_held, pst.bytes_held + 1024 + 64,
		      "%llu bytes held, a Pool of the same objects %llu",
		      (unsigned long long)st.bytes_held, (unsigned long long)pst.bytes_held);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
	lfpool_pool_destroy(plain);
}

Test(small, one_object_of_a_threadstatic_pool_holds_at_most_8_KiB)
{
	lfpool_stats st;
	lfpool_ts *pool = ts_with_one_object(&st);
	cr_assert_leq(st.bytes_held, SMALL_HELD, "%llu bytes held for one object (and the "
		      "thread's magazines)", (unsigned long long)st.bytes_held);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
}

/*
 * What a small ThreadStatic pool costs (bench row "manypools memory"): its
 * own block (struct, then its objects' first side data) and what one
 * object got and put holds (a 1 KiB slab of objects, one of the thread's
 * first two magazines), at most 4 KiB together.  The block was 3 KiB
 * while each of its two index spaces carried the 512 bytes of a
 * directory that only a space of more than 1,024 slabs uses (lib/slab.h,
 * the directory).  The side data of both first slabs lies in the block
 * (but for debug pools): the magazines' was a 64-byte block of its own.
 * Sizes of x86-64 with glibc (elsewhere a mutex, of which the struct
 * holds three, is another size).
 */
Test(small, a_threadstatic_pool_and_one_object_take_at_most_4_KiB)
{
#if !defined(__x86_64__) || !defined(__GLIBC__)
	cr_skip_test("sizes of x86-64 with glibc");
#endif
	lfpool_stats st;
	lfpool_ts *pool = ts_with_one_object(&st);
	size_t block = lfp_core_block_bytes(&pool->core, sizeof(*pool));
	cr_assert_leq(block, 1920, "the pool's block takes %zu bytes", block);
	cr_assert_leq(block + st.bytes_held, 4096, "block %zu bytes, held %llu", block,
		      (unsigned long long)st.bytes_held);
	if (!pool->core.debug)
		cr_assert_eq(st.bytes_held, 2048, "%llu bytes held: two slabs of 1 KiB and no side "
			     "data", (unsigned long long)st.bytes_held);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
}

/*
 * Past 1,024 slabs a space's directory gets a table of its own (lib/slab.h,
 * the directory): every object stays found (owns, a put's index) and
 * comes back once, in the slabs of leaf 0 and of leaf 1 alike.  Objects
 * of 8,000 bytes: 8 to a 64 KiB slab, the fewest; each marked with its
 * number while out, so that no two overlap.
 */
#define PAST_OBJ 8000
#define PAST_MANY (8u * 1032)

struct past {
	bool (*get_all)(void *pool, void **objs, size_t n);
	void (*put)(void *pool, void *obj);
	int (*owns)(const void *pool, const void *obj);
	uint64_t (*slabs)(void *pool);
};

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return (x > y) - (x < y);
}

static void past_1024_slabs(const struct past *ops, void *pool, const char *name)
{
	void **objs = calloc(PAST_MANY, sizeof(void *));
	cr_assert_not_null(objs);
	cr_assert(ops->get_all(pool, objs, PAST_MANY), "%s: a get failed", name);
	uint64_t slabs = ops->slabs(pool);
	cr_assert_gt(slabs, 1024, "%s: %llu slabs, none in leaf 1", name,
		     (unsigned long long)slabs);
	for (size_t i = 0; i < PAST_MANY; i++) {
		cr_assert(ops->owns(pool, objs[i]), "%s: object %zu not found", name, i);
		memcpy(objs[i], &i, sizeof(i));
	}
	for (size_t i = 0, k; i < PAST_MANY; i++) {
		memcpy(&k, objs[i], sizeof(k));
		cr_assert_eq(k, i, "%s: objects %zu and %zu overlap", name, i, k);
	}
	for (size_t i = PAST_MANY; i-- > 0;)
		ops->put(pool, objs[i]);	/* each index found from its address */
	cr_assert(ops->get_all(pool, objs, PAST_MANY), "%s: a get failed", name);
	cr_assert_eq(ops->slabs(pool), slabs, "%s: nothing lost, nothing grown", name);
	qsort(objs, PAST_MANY, sizeof(void *), by_address);
	for (size_t i = 1; i < PAST_MANY; i++)
		cr_assert_neq(objs[i - 1], objs[i], "%s: %p came back twice", name, objs[i]);
	for (size_t i = 0; i < PAST_MANY; i++)
		ops->put(pool, objs[i]);
	free(objs);
}

static const struct flavour_ops *flavour_of;	/* the test's flavour */

static bool flavour_get_all(void *pool, void **objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(objs[i] = flavour_of->get(pool)))
			return false;
	return true;
}

static void flavour_put(void *pool, void *obj) { flavour_of->put(pool, obj); }
static int flavour_owns(const void *pool, const void *obj) { return flavour_of->owns(pool, obj); }
static uint64_t flavour_slabs(void *pool) { return flavour_stats(flavour_of, pool).slab_allocs; }

FLAVOUR_TEST(small, past_1024_slabs_every_object_is_found)
{
	static const struct past past = { flavour_get_all, flavour_put, flavour_owns, flavour_slabs };
	lfpool_config c = { .obj_size = PAST_OBJ };
	flavour_of = ops;
	void *pool = ops->create(&c);
	cr_assert_not_null(pool);
	past_1024_slabs(&past, pool, ops->name);
	ops->destroy(pool);
}

static bool ts_get_all(void *pool, void **objs, size_t n)
{
	return lfpool_ts_get_bulk(pool, objs, n) == 0;
}

static void ts_put(void *pool, void *obj) { lfpool_ts_put(pool, obj); }
static int ts_owns(const void *pool, const void *obj) { return lfpool_ts_owns(pool, obj); }

static uint64_t ts_slabs(void *pool)
{
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	return st.slab_allocs;
}

/* The same for a ThreadStatic pool, bounded, whose bound counts the
 * table (lfpool_ts_max_bytes). */
Test(small, a_threadstatic_pool_past_1024_slabs_finds_every_object)
{
	static const struct past past = { ts_get_all, ts_put, ts_owns, ts_slabs };
	lfpool_config c = { .obj_size = PAST_OBJ, .capacity = PAST_MANY };
	lfpool_ts *pool = lfpool_ts_create(&c);
	cr_assert_not_null(pool);
	past_1024_slabs(&past, pool, "threadstatic");
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	size_t bound = lfpool_ts_max_bytes(pool, 1);
	cr_assert_leq(st.bytes_held, bound, "%llu bytes held, the bound says %zu",
		      (unsigned long long)st.bytes_held, bound);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
}

/* Get MANY objects of pool: each new, each the pool's, no interior
 * pointer the pool's; the slabs' count in *slabs. */
static void **get_many(const struct flavour_ops *ops, void *pool, uint64_t *slabs)
{
	void **objs = calloc(MANY, sizeof(void *));
	cr_assert_not_null(objs);
	for (size_t i = 0; i < MANY; i++) {
		objs[i] = ops->get(pool);
		cr_assert_not_null(objs[i]);
		cr_assert(ops->owns(pool, objs[i]), "%s: object %zu not found", ops->name, i);
		cr_assert_not(ops->owns(pool, (char *)objs[i] + 8), "%s: interior of %zu", ops->name,
			      i);
		memset(objs[i], (int)i, OBJ);	/* no object overlaps another */
	}
	for (size_t i = 0; i < MANY; i++)
		cr_assert_eq(*(unsigned char *)objs[i], (unsigned char)i, "%s: %zu overlaps",
			     ops->name, i);
	*slabs = flavour_stats(ops, pool).slab_allocs;
	return objs;
}

/* A pool that grew all its small slabs first: with the default
 * allocator, the next pool's small slabs then lie after its own in the
 * mappings they are cut from, not at an address a mapping's size divides
 * (where rounding an object's address down would find them by luck). */
static void *neighbour(const struct flavour_ops *ops)
{
	lfpool_config c = { .obj_size = OBJ };
	void *pool = ops->create(&c);
	cr_assert_eq(ops->prewarm(pool, 300), 0);
	return pool;
}

FLAVOUR_TEST(small, grows_to_full_slabs_finds_every_object_and_trims_them_back)
{
	lfpool_config c = { .obj_size = OBJ };
	void *before = neighbour(ops);
	void *pool = ops->create(&c);
	ops->put(pool, ops->get(pool));
	uint64_t small = flavour_stats(ops, pool).bytes_held, slabs;
	void **objs = get_many(ops, pool, &slabs);
	cr_assert_eq(slabs, 6, "%s: 1, 4, 16 KiB, then three of 64 KiB: %llu slabs", ops->name,
		     (unsigned long long)slabs);
	cr_assert_gt(flavour_stats(ops, pool).bytes_held, 3 * 65536);
	for (size_t i = MANY; i-- > 0;)
		ops->put(pool, objs[i]);	/* each index found from its address */
	cr_assert_eq(flavour_stats(ops, pool).retained, MANY);
	/* Every object comes back, once. */
	free(get_many(ops, pool, &slabs));
	cr_assert_eq(slabs, 6, "%s: nothing lost, nothing grown", ops->name);
	for (size_t i = 0; i < MANY; i++)
		ops->put(pool, objs[i]);
	cr_assert_eq(ops->trim(pool, 0), MANY);
	lfpool_stats st = flavour_stats(ops, pool);
	cr_assert_eq(st.slab_frees, st.slab_allocs, "%s: every slab given back", ops->name);
	/* And it starts small again. */
	ops->put(pool, ops->get(pool));
	st = flavour_stats(ops, pool);
	cr_assert_eq(st.slab_allocs - st.slab_frees, 1);
	if (ops == &flavours[FL_POOL])
		cr_assert_eq(st.bytes_held, small, "a Pool holds its first small slab again");
	free(objs);
	ops->destroy(pool);
	ops->destroy(before);
}

/* What the recording hook saw. */
static struct error_log reports;

FLAVOUR_TEST(small, debug_checks_find_objects_of_every_size_of_slab)
{
	lfpool_config c = { .obj_size = OBJ, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	void *pool = ops->create(&c);
	uint64_t slabs;
	void **objs = get_many(ops, pool, &slabs);
	/* The first object of each slab: 1, 4 and 16 KiB, then 64 KiB ones. */
	static const size_t firsts[] = { 0, 15, 78, 333, 1356, 2379 };
	for (size_t k = 0; k < sizeof(firsts) / sizeof(firsts[0]); k++) {
		void *o = objs[firsts[k]];
		ops->put(pool, o);
		record_errors(&reports);
		ops->put(pool, o);
		cr_assert_eq(reports.calls, 1, "%s: object %zu's second put", ops->name, firsts[k]);
		cr_assert(strstr(reports.problem, "double put"), "%s: '%s'", ops->name,
			  reports.problem);
		record_errors(&reports);
		ops->put(pool, (char *)o + 8);
		cr_assert_eq(reports.calls, 1, "%s: an interior pointer of %zu", ops->name,
			     firsts[k]);
		objs[firsts[k]] = NULL;
	}
	for (size_t i = 0; i < MANY; i++)
		ops->put(pool, objs[i]);	/* NULL: none */
	lfpool_stats st = flavour_stats(ops, pool);
	cr_assert_eq(st.live, 0);
	free(objs);
	ops->destroy(pool);
}

Test(small, a_threadstatic_pool_grows_and_trims_back)
{
	lfpool_config c = { .obj_size = OBJ };
	lfpool_ts *pool = lfpool_ts_create(&c);
	void **objs = calloc(MANY, sizeof(void *));
	for (size_t i = 0; i < MANY; i++) {
		objs[i] = lfpool_ts_get(pool);
		cr_assert(lfpool_ts_owns(pool, objs[i]), "object %zu not found", i);
	}
	for (size_t i = 0; i < MANY; i++)
		lfpool_ts_put(pool, objs[i]);
	lfpool_ts_drain(pool);
	lfpool_ts_trim(pool, 0);
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	cr_assert_eq(st.slab_frees, st.slab_allocs, "every slab given back");
	free(objs);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
}

/* lfpool_ts_max_bytes counts the small slabs: a pool at its capacity of
 * three full slabs' objects holds the small slabs too (1, 4 and 16 KiB). */
Test(small, a_threadstatic_pool_s_bound_counts_its_small_slabs)
{
	lfpool_config c = { .obj_size = OBJ, .capacity = 3069 };
	lfpool_ts *pool = lfpool_ts_create(&c);
	void **objs = calloc(c.capacity, sizeof(void *));
	for (size_t i = 0; i < c.capacity; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_get(pool));
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	size_t bound = lfpool_ts_max_bytes(pool, 1);
	cr_assert_leq(st.bytes_held, bound, "%llu bytes held, the bound says %zu",
		      (unsigned long long)st.bytes_held, bound);
	for (size_t i = 0; i < c.capacity; i++)
		lfpool_ts_put(pool, objs[i]);
	free(objs);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
}
