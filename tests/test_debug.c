/*
 * test_debug.c - the debug checks (LFPOOL_F_DEBUG): each misuse reaches the
 * error hook with a message that names it, and the call that misused the
 * pool does nothing.  The default hook aborts.
 */
#include <signal.h>
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

#define OBJ 64

static void *debug_pool(const struct flavour_ops *ops)
{
	lfpool_config c = { .obj_size = OBJ, .align = OBJ, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool);
	return pool;
}

/* One report naming `words` for ptr, and the pool's figures as they were. */
static void expect_report(const struct error_log *log, const void *ptr, const char *words,
			  const char *flavour)
{
	cr_assert_eq(log->calls, 1, "%s: %d reports for '%s'", flavour, log->calls, words);
	cr_assert_eq(log->ptr, ptr, "%s: report names pointer %p", flavour, log->ptr);
	cr_assert(strstr(log->problem, words), "%s: '%s' does not say '%s'", flavour,
		  log->problem, words);
}

static void expect_pooled(const struct flavour_ops *ops, void *pool, uint64_t retained,
			  uint64_t live)
{
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.retained, retained, "%s: %llu pooled, want %llu", ops->name,
		     (unsigned long long)st.retained, (unsigned long long)retained);
	cr_assert_eq(st.live, live);
}

Test(debug, double_put)
{
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
		struct error_log log;
		record_errors(&log);
		void *pool = debug_pool(ops);
		void *a = ops->get(pool), *b = ops->get(pool);
		ops->put(pool, a);
		cr_assert_eq(log.calls, 0, "%s: a good put was reported: %s", ops->name, log.problem);
		ops->put(pool, a);
		expect_report(&log, a, "double put", ops->name);
		cr_assert_str_eq(log.pool, "dbg");
		expect_pooled(ops, pool, 1, 1);
		/* Had the second put counted, a would now be handed out twice. */
		void *x = ops->get(pool), *y = ops->get(pool);
		cr_assert_eq(x, a);
		cr_assert_neq(y, a, "%s: one object handed out twice", ops->name);
		ops->put(pool, x);
		ops->put(pool, y);
		ops->put(pool, b);
		cr_assert_eq(log.calls, 1);
		ops->destroy(pool);
	}
}

Test(debug, pointer_not_from_this_pool)
{
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
		struct error_log log;
		record_errors(&log);
		void *pool = debug_pool(ops), *other = debug_pool(ops);
		void *mine = ops->get(pool), *theirs = ops->get(other);
		long local[OBJ / sizeof(long)];

		ops->put(pool, local);
		expect_report(&log, local, "not from this pool", ops->name);
		record_errors(&log);
		ops->put(pool, theirs);
		expect_report(&log, theirs, "not from this pool", ops->name);
		expect_pooled(ops, pool, 0, 1);

		ops->put(other, theirs);
		ops->put(pool, mine);
		cr_assert_eq(log.calls, 1);
		ops->destroy(other);
		ops->destroy(pool);
	}
}

Test(debug, interior_pointer)
{
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
		struct error_log log;
		record_errors(&log);
		void *pool = debug_pool(ops);
		char *a = ops->get(pool);
		ops->put(pool, a + 1);
		expect_report(&log, a + 1, "interior pointer", ops->name);
		record_errors(&log);
		ops->put(pool, a + OBJ / 2);
		expect_report(&log, a + OBJ / 2, "interior pointer", ops->name);
		expect_pooled(ops, pool, 0, 1);
		ops->put(pool, a);
		expect_pooled(ops, pool, 1, 0);
		ops->destroy(pool);
	}
}

Test(debug, object_never_handed_out)
{
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
		struct error_log log;
		record_errors(&log);
		void *pool = debug_pool(ops);
		char *a = ops->get(pool);
		char *next = a + OBJ;	/* its slab neighbour, not yet made */
		cr_assert(ops->owns(pool, next));
		ops->put(pool, next);
		expect_report(&log, next, "not handed out", ops->name);
		expect_pooled(ops, pool, 0, 1);
		ops->put(pool, a);
		ops->destroy(pool);
	}
}

Test(debug, put_after_destroy)
{
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
		struct error_log log;
		record_errors(&log);
		void *pool = debug_pool(ops);
		void *a = ops->get(pool);
		ops->destroy(pool);	/* with a still out: a line on stderr */
		ops->put(pool, a);
		expect_report(&log, a, "put after destroy", ops->name);
	}
}

Test(debug, destroy_twice)
{
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
		struct error_log log;
		record_errors(&log);
		void *pool = debug_pool(ops);
		ops->destroy(pool);
		ops->destroy(pool);
		expect_report(&log, pool, "already destroyed", ops->name);
	}
}

/* The default hook prints and aborts, for either flavour. */
Test(debug, default_hook_aborts_pool, .signal = SIGABRT)
{
	void *pool = debug_pool(&flavours[FL_POOL]);
	void *a = lfpool_pool_get(pool);
	lfpool_pool_put(pool, a);
	lfpool_pool_put(pool, a);
}

Test(debug, default_hook_aborts_concurrent, .signal = SIGABRT)
{
	void *pool = debug_pool(&flavours[FL_CONCURRENT]);
	int local;
	lfpool_concurrent_put(pool, &local);
}

/* Setting the hook to NULL brings the default back. */
Test(debug, null_hook_restores_the_default, .signal = SIGABRT)
{
	struct error_log log;
	record_errors(&log);
	lfpool_set_error_hook(NULL, NULL);
	void *pool = debug_pool(&flavours[FL_POOL]);
	int local;
	lfpool_pool_put(pool, &local);
}

/* Without the flag, a good get/put cycle is never reported either. */
Test(debug, correct_use_is_never_reported)
{
	struct error_log log;
	record_errors(&log);
	for (int f = 0; f < FL_COUNT; f++) {
		const struct flavour_ops *ops = &flavours[f];
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
	}
	cr_assert_eq(log.calls, 0, "reported: %s", log.problem);
}
