/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - the version, configuration checks, defaults and the
 * injected backing allocator, for every flavour.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

#ifndef PACKAGE_VERSION
# error "PACKAGE_VERSION must come from configure (DEFS)"
#endif

Test(version, library_header_and_configure_agree)
{
	cr_assert_str_eq(lfpool_version(), LFPOOL_VERSION_STRING);
	cr_assert_str_eq(LFPOOL_VERSION_STRING, PACKAGE_VERSION);
	char parts[32];
	snprintf(parts, sizeof(parts), "%d.%d.%d", LFPOOL_VERSION_MAJOR, LFPOOL_VERSION_MINOR,
		 LFPOOL_VERSION_PATCH);
	cr_assert_str_eq(parts, LFPOOL_VERSION_STRING);
	cr_assert_eq(LFPOOL_VERSION_NUMBER, LFPOOL_VERSION_MAJOR * 65536 +
		     LFPOOL_VERSION_MINOR * 256 + LFPOOL_VERSION_PATCH);
}

/* create(cfg) must fail with EINVAL and allocate nothing. */
static void expect_einval(const lfpool_config *cfg, const char *why)
{
	for (int f = 0; f < FL_COUNT; f++) {
		errno = 0;
		cr_assert_null(flavours[f].create(cfg), "%s: created despite %s", flavours[f].name, why);
		cr_assert_eq(errno, EINVAL, "%s, %s: errno %d", flavours[f].name, why, errno);
	}
}

Test(config, null_config_is_einval)
{
	expect_einval(NULL, "a NULL config");
}

Test(config, bad_fields_are_einval)
{
	struct test_alloc t;
	test_alloc_init(&t);
	const lfpool_config good = { .obj_size = 32, .allocator = &t.a };
	lfpool_config c;

	c = good, c.obj_size = 0;
	expect_einval(&c, "size 0");
	static const size_t bad_aligns[] = { 3, 6, 24, 48, 100, 4097, SIZE_MAX };
	for (size_t i = 0; i < sizeof(bad_aligns) / sizeof(bad_aligns[0]); i++) {
		c = good, c.align = bad_aligns[i];
		expect_einval(&c, "an alignment that is not a power of two");
	}
	c = good, c.capacity = 4, c.prewarm = 5;
	expect_einval(&c, "prewarm > capacity");
	c = good, c.flags = 0x80;
	expect_einval(&c, "an unknown flag");
	c = good, c.flags = LFPOOL_F_DEBUG | 0x100;
	expect_einval(&c, "a known and an unknown flag");
	lfpool_allocator half = t.a;
	half.free = NULL;
	c = good, c.allocator = &half;
	expect_einval(&c, "an allocator without free");
	half = t.a;
	half.alloc = NULL;
	expect_einval(&c, "an allocator without alloc");
	c = good, c.obj_size = SIZE_MAX;
	expect_einval(&c, "an object too big for any slab");
	c = good, c.obj_size = ((size_t)256 << 20) - 16 + 1;
	expect_einval(&c, "an object above 256 MiB - align in an unbounded pool");
	c = good, c.obj_size = ((size_t)512 << 20) + 1, c.capacity = 1;
	expect_einval(&c, "an object above 512 MiB");
	c = good, c.capacity = SIZE_MAX;
	expect_einval(&c, "a capacity beyond the index space");

	cr_assert_eq(t.allocs, 0, "a refused config allocated %ld blocks", t.allocs);
	test_alloc_finish(&t);
}

FLAVOUR_TEST(config, edge_values_are_accepted)
{
	/* Alignment 0 means 16; prewarm == capacity is allowed. */
	lfpool_config c = { .obj_size = 1, .align = 0, .capacity = 3, .prewarm = 3 };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool, "%s: errno %d", ops->name, errno);
	void *objs[3];
	for (int i = 0; i < 3; i++) {
		objs[i] = ops->get(pool);
		cr_assert_eq((uintptr_t)objs[i] % 16, 0, "align 0 must mean 16");
	}
	for (int i = 0; i < 3; i++)
		ops->put(pool, objs[i]);
	ops->destroy(pool);
}

/* The largest objects lfpool/common.h allows: 256 MiB - align in an
 * unbounded pool (a slab of 8 in 2 GiB), 512 MiB with a capacity of 1.
 * Create and destroy, no object made. */
FLAVOUR_TEST(config, the_largest_objects_are_accepted)
{
	lfpool_config c = { .obj_size = ((size_t)256 << 20) - 16 };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool, "%s, unbounded: errno %d", ops->name, errno);
	ops->destroy(pool);
	c = (lfpool_config){ .obj_size = (size_t)512 << 20, .capacity = 1 };
	pool = ops->create(&c);
	cr_assert_not_null(pool, "%s, capacity 1: errno %d", ops->name, errno);
	ops->destroy(pool);
}

/* Every byte the pool holds comes from the injected allocator, goes back to
 * it with the size it was asked for, and nothing is left at destroy. */
FLAVOUR_TEST(config, all_memory_goes_through_the_injected_allocator)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = 200, .align = 64, .prewarm = 500, .allocator = &t.a };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool);
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_gt(t.allocs, 0);
	cr_assert_eq(t.live_bytes, st.bytes_held, "%s: allocator holds %zu, pool says %llu",
		     ops->name, t.live_bytes, (unsigned long long)st.bytes_held);

	void *objs[600];
	for (int i = 0; i < 600; i++)
		objs[i] = ops->get(pool);
	ops->stats(pool, &st);
	cr_assert_eq(t.live_bytes, st.bytes_held);
	for (int i = 0; i < 600; i++)
		ops->put(pool, objs[i]);
	ops->destroy(pool);
	test_alloc_finish(&t);
}

FLAVOUR_TEST(config, name_is_copied)
{
	struct error_log log;
	record_errors(&log);
	char name[] = "packets";
	lfpool_config c = { .obj_size = 8, .name = name, .flags = LFPOOL_F_DEBUG };
	void *pool = ops->create(&c);
	strcpy(name, "XXXXXXX");
	int local;
	ops->put(pool, &local);
	cr_assert_str_eq(log.pool, "packets", "%s: error names pool '%s'", ops->name, log.pool);
	ops->destroy(pool);
}
