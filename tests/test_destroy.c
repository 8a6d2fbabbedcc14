/* SPDX-License-Identifier: MIT */
/*
 * test_destroy.c - every pool's destroy returns int:
 * 0 when it destroyed the pool or was given NULL; -1 with errno EINVAL for
 * a pool already destroyed (a debug pool stays readable, and the recording
 * error hook returns instead of aborting); ThreadStatic and closure pools
 * -1 with errno EBUSY while explicit caches exist, nothing done.
 */
#include <errno.h>

#include "support.h"

static const lfpool_config cfg = { .obj_size = 32, .prewarm = 4 };
static const lfpool_config dbg = { .obj_size = 32, .prewarm = 4, .flags = LFPOOL_F_DEBUG,
				   .name = "twice" };
static const lfpool_array_config acfg = { .name = NULL };
static const lfpool_array_config adbg = { .flags = LFPOOL_F_DEBUG, .name = "twice" };

Test(destroy, returns_0_for_every_pool_and_for_null)
{
	cr_expect_eq(lfpool_pool_destroy(lfpool_pool_create(&cfg)), 0);
	cr_expect_eq(lfpool_concurrent_destroy(lfpool_concurrent_create(&cfg)), 0);
	cr_expect_eq(lfpool_ts_destroy(lfpool_ts_create(&cfg)), 0);
	cr_expect_eq(lfpool_array_destroy(lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &acfg)), 0);
	cr_expect_eq(lfpool_rc_destroy(lfpool_rc_create(LFPOOL_FLAVOUR_TS, &cfg)), 0);
	cr_expect_eq(lfpool_closure_pool_destroy(
			     lfpool_closure_pool_create(LFPOOL_FLAVOUR_POOL, &cfg)), 0);
	cr_expect_eq(lfpool_pool_destroy(NULL), 0);
	cr_expect_eq(lfpool_concurrent_destroy(NULL), 0);
	cr_expect_eq(lfpool_ts_destroy(NULL), 0);
	cr_expect_eq(lfpool_array_destroy(NULL), 0);
	cr_expect_eq(lfpool_rc_destroy(NULL), 0);
	cr_expect_eq(lfpool_closure_pool_destroy(NULL), 0);
}

/* The second destroy of a debug pool: -1, EINVAL, one report. */
#define EXPECT_DESTROYED_TWICE(destroy, pool)						\
	do {										\
		struct error_log log = { 0 };						\
		cr_assert_not_null(pool);						\
		cr_assert_eq(destroy(pool), 0);						\
		record_errors(&log);							\
		errno = 0;								\
		cr_expect_eq(destroy(pool), -1, #destroy " twice");			\
		cr_expect_eq(errno, EINVAL, #destroy " twice: errno %d", errno);	\
		cr_expect_eq(log.calls, 1, #destroy " twice: %d reports", log.calls);	\
		lfpool_set_error_hook(NULL, NULL);					\
	} while (0)

Test(destroy, twice_is_einval_for_every_debug_pool)
{
	lfpool_pool *p = lfpool_pool_create(&dbg);
	EXPECT_DESTROYED_TWICE(lfpool_pool_destroy, p);
	lfpool_concurrent *c = lfpool_concurrent_create(&dbg);
	EXPECT_DESTROYED_TWICE(lfpool_concurrent_destroy, c);
	lfpool_ts *t = lfpool_ts_create(&dbg);
	EXPECT_DESTROYED_TWICE(lfpool_ts_destroy, t);
	lfpool_array *a = lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &adbg);
	EXPECT_DESTROYED_TWICE(lfpool_array_destroy, a);
	lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &dbg);
	EXPECT_DESTROYED_TWICE(lfpool_rc_destroy, rc);
}

static void count_run(void *capture, void *arg)
{
	(void)capture;
	++*(int *)arg;
}

Test(destroy, ebusy_while_explicit_caches_exist)
{
	lfpool_closure_pool *cp = lfpool_closure_pool_create(LFPOOL_FLAVOUR_TS, &cfg);
	cr_assert_not_null(cp);
	lfpool_ts_cache *cache = lfpool_ts_cache_create(lfpool_closure_pool_ts(cp));
	cr_assert_not_null(cache);
	errno = 0;
	cr_expect_eq(lfpool_closure_pool_destroy(cp), -1);
	cr_expect_eq(errno, EBUSY);
	/* Nothing was done: the pool still serves, then destroys. */
	int runs = 0;
	lfpool_closure *c = lfpool_closure_get(cp, count_run, NULL, 0);
	cr_assert_not_null(c);
	lfpool_closure_run(cp, c, &runs);
	cr_expect_eq(runs, 1);
	lfpool_ts_cache_destroy(cache);
	cr_expect_eq(lfpool_closure_pool_destroy(cp), 0);
}
