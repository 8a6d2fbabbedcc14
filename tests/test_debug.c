/* SPDX-License-Identifier: MIT */
/*
 * test_debug.c - the debug checks (LFPOOL_F_DEBUG): each misuse reaches the
 * error hook with a message that names it, and the call that misused the
 * pool does nothing.  The default hook aborts.
 */
#include <signal.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

#define OBJ 64

/* What the recording hook saw; each test runs in a process of its own. */
static struct error_log reports;

static void *debug_pool(const struct flavour_ops *ops)
{
	lfpool_config c = { .obj_size = OBJ, .align = OBJ, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool);
	return pool;
}

/* Since record_errors: exactly one report, for ptr, naming `words`. */
static void expect_report(const struct flavour_ops *ops, const void *ptr, const char *words)
{
	cr_assert_eq(reports.calls, 1, "%s: %d reports for '%s'", ops->name, reports.calls, words);
	cr_assert_eq(reports.ptr, ptr, "%s: report names pointer %p", ops->name, reports.ptr);
	cr_assert(strstr(reports.problem, words), "%s: '%s' does not say '%s'", ops->name,
		  reports.problem, words);
	cr_assert_str_eq(reports.pool, "dbg");
}

/* put(pool, ptr) is reported, naming `words`, and changes nothing. */
static void expect_rejected_put(const struct flavour_ops *ops, void *pool, void *ptr,
				const char *words)
{
	lfpool_stats was, now;
	ops->stats(pool, &was);
	record_errors(&reports);
	ops->put(pool, ptr);
	expect_report(ops, ptr, words);
	ops->stats(pool, &now);
	cr_assert_eq(now.retained, was.retained, "%s: a rejected put pooled %p", ops->name, ptr);
	cr_assert_eq(now.live, was.live);
}

FLAVOUR_TEST(debug, double_put)
{
	void *pool = debug_pool(ops);
	void *a = ops->get(pool), *b = ops->get(pool);
	ops->put(pool, a);
	expect_rejected_put(ops, pool, a, "double put");
	/* Had the second put counted, a would now be handed out twice. */
	void *x = ops->get(pool), *y = ops->get(pool);
	cr_assert_eq(x, a);
	cr_assert_neq(y, a, "%s: one object handed out twice", ops->name);
	ops->put(pool, x);
	ops->put(pool, y);
	ops->put(pool, b);
	cr_assert_eq(reports.calls, 1, "%s: a good put was reported: %s", ops->name, reports.problem);
	ops->destroy(pool);
}

FLAVOUR_TEST(debug, pointer_not_from_this_pool)
{
	void *pool = debug_pool(ops), *other = debug_pool(ops);
	void *mine = ops->get(pool), *theirs = ops->get(other);
	long local[OBJ / sizeof(long)];
	expect_rejected_put(ops, pool, local, "not from this pool");
	expect_rejected_put(ops, pool, theirs, "not from this pool");
	ops->put(other, theirs);
	ops->put(pool, mine);
	cr_assert_eq(reports.calls, 1);
	ops->destroy(other);
	ops->destroy(pool);
}

FLAVOUR_TEST(debug, interior_pointer)
{
	void *pool = debug_pool(ops);
	char *a = ops->get(pool);
	expect_rejected_put(ops, pool, a + 1, "interior pointer");
	expect_rejected_put(ops, pool, a + OBJ / 2, "interior pointer");
	ops->put(pool, a);
	cr_assert_eq(reports.calls, 1);
	ops->destroy(pool);
}

FLAVOUR_TEST(debug, object_never_handed_out)
{
	void *pool = debug_pool(ops);
	char *a = ops->get(pool);
	char *next = a + OBJ;	/* its slab neighbour, not yet made */
	cr_assert(ops->owns(pool, next));
	expect_rejected_put(ops, pool, next, "not handed out");
	ops->put(pool, a);
	ops->destroy(pool);
}

FLAVOUR_TEST(debug, put_after_destroy)
{
	record_errors(&reports);
	void *pool = debug_pool(ops);
	void *a = ops->get(pool);
	ops->destroy(pool);
	expect_report(ops, pool, "destroyed with 1 object still out");
	record_errors(&reports);
	ops->put(pool, a);
	/* The pool's own name, not a stand-in. */
	expect_report(ops, a, "put after destroy");
}

FLAVOUR_TEST(debug, destroy_twice)
{
	record_errors(&reports);
	void *pool = debug_pool(ops);
	ops->destroy(pool);
	ops->destroy(pool);
	expect_report(ops, pool, "already destroyed");
}

/* The default hook prints and aborts. */
FLAVOUR_TEST(debug, default_hook_aborts, .signal = SIGABRT)
{
	void *pool = debug_pool(ops);
	void *a = ops->get(pool);
	ops->put(pool, a);
	ops->put(pool, a);
}

/* Setting the hook to NULL brings the default back. */
FLAVOUR_TEST(debug, null_hook_restores_the_default, .signal = SIGABRT)
{
	record_errors(&reports);
	lfpool_set_error_hook(NULL, NULL);
	void *pool = debug_pool(ops);
	int local;
	ops->put(pool, &local);
}

/* Correct use is never reported, with the checks on or off. */
FLAVOUR_TEST(debug, correct_use_is_never_reported)
{
	record_errors(&reports);
	for (unsigned flags = 0; flags <= LFPOOL_F_DEBUG; flags++) {
		lfpool_config c = { .obj_size = OBJ, .prewarm = 5, .flags = flags };
		void *pool = ops->create(&c);
		void *objs[40];
		for (int round = 0; round < 3; round++) {
			for (int i = 0; i < 40; i++)
				objs[i] = ops->get(pool);
			for (int i = 0; i < 40; i++)
				ops->put(pool, objs[(i * 7) % 40]);
			ops->trim(pool, 10);
		}
		ops->destroy(pool);
	}
	cr_assert_eq(reports.calls, 0, "reported: %s", reports.problem);
}
