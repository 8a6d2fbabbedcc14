/* SPDX-License-Identifier: MIT */
/*
 * test_api.c - the calls one flavour has and the other has not: Pool's
 * exported slow paths, Concurrent's bulk calls; and the statistics.
 */
#include <errno.h>
#include <string.h>

/* The CAS attempts of this file's inline Concurrent gets and puts
 * (lfpool/impl/tagged_stack.h's hook points): the library's own are not
 * counted, so a call that ran inline adds one (uncontended), a call
 * through the library none. */
static unsigned long inline_cas;
#define LFPOOL_STACK_YIELD_() ((void)0)
#define LFPOOL_STACK_WINDOW_() ((void)inline_cas++)
#define LFPOOL_STACK_RETRY_() ((void)0)

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
	/* Nor did it make the 2 that capacity allowed (common.h: a failed
	 * call changes nothing). */
	cr_assert(st.retained == 0 && st.created == 8, "retained %llu, created %llu",
		  (unsigned long long)st.retained, (unsigned long long)st.created);
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

/* bytes_held is what the pool holds from its backing allocator
 * (lfpool/common.h): a small pool's own block (its struct, Pool's item
 * array, slot 0's side data: lfp_core_inline) is not.  Pools of capacity 8
 * of the system allocator (a NULL t) keep both in that block, so with their
 * one slab trimmed they hold nothing; the same pools of a test allocator,
 * which gets every block, hold what it has out.  Debug pools keep no array
 * or side data in their block (--enable-debug: every pool). */
static void assert_held(const char *name, const lfpool_stats *st, const struct test_alloc *t)
{
	cr_assert(st->slab_allocs == 1 && st->slab_frees == 1, "%s: slabs %llu, %llu", name,
		  (unsigned long long)st->slab_allocs, (unsigned long long)st->slab_frees);
	if (t)
		cr_assert_eq(st->bytes_held, t->live_bytes,
			     "%s: %llu bytes held, the allocator has %zu out", name,
			     (unsigned long long)st->bytes_held, t->live_bytes);
	else if (!DEBUG_BUILD)
		cr_assert_eq(st->bytes_held, 0, "%s: %llu bytes held, none from the allocator",
			     name, (unsigned long long)st->bytes_held);
}

/* Make a pool of c, one object, trim it and assert_held(..., t) before
 * destroy. */
typedef void (*trimmed_fn)(const struct flavour_ops *ops, const lfpool_config *c,
			   const struct test_alloc *t);

/* Capacity 8, of the system allocator, then of a test allocator. */
static void assert_small_pools_hold(trimmed_fn trimmed, const struct flavour_ops *ops)
{
	struct test_alloc t;
	test_alloc_init(&t);
	for (int user = 0; user < 2; user++) {
		lfpool_config c = { .obj_size = 32, .capacity = 8, .allocator = user ? &t.a : NULL };
		trimmed(ops, &c, user ? &t : NULL);
	}
	test_alloc_finish(&t);
}

static void flavour_trimmed(const struct flavour_ops *ops, const lfpool_config *c,
			    const struct test_alloc *t)
{
	lfpool_stats st;
	void *pool = ops->create(c);
	cr_assert_not_null(pool);
	ops->put(pool, ops->get(pool));
	cr_assert_eq(ops->trim(pool, 0), 1);
	ops->stats(pool, &st);
	assert_held(ops->name, &st, t);
	ops->destroy(pool);
}

FLAVOUR_TEST(stats, bytes_held_is_only_what_the_backing_allocator_gave)
{
	assert_small_pools_hold(flavour_trimmed, ops);
}

/* ThreadStatic's too: its prewarmed object lies in the depot, no cache or
 * magazine made. */
static void ts_trimmed(const struct flavour_ops *ops, const lfpool_config *c,
		       const struct test_alloc *t)
{
	(void)ops;
	lfpool_stats st;
	lfpool_ts *pool = lfpool_ts_create(c);
	cr_assert_not_null(pool);
	cr_assert_eq(lfpool_ts_prewarm(pool, 1), 0);
	cr_assert_eq(lfpool_ts_trim(pool, 0), 1);
	lfpool_ts_stats(pool, &st);
	assert_held("ts", &st, t);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
}

Test(stats, ts_bytes_held_is_only_what_the_backing_allocator_gave)
{
	assert_small_pools_hold(ts_trimmed, NULL);
}

/* ---- Concurrent's inline paths (lfpool/concurrent.h) ---- */

/* The view the inline get and put read. */
static const struct lfpool_concurrent_fast *fast_view(const lfpool_concurrent *pool)
{
	return (const struct lfpool_concurrent_fast *)pool;
}

/* Whether obj lies in slab 0 as the view describes it. */
static bool in_slab_0(const struct lfpool_concurrent_fast *f, const void *obj)
{
	return (uintptr_t)obj - (uintptr_t)f->base < f->get_n * f->stride;
}

Test(concurrent, inline_bounds_open_for_slab_0_in_lean_pools_only)
{
	/* sized for one full slab: slab 0 is its first (lib/slab.h) */
	lfpool_config c = { .obj_size = 64, .capacity = 1000, .prewarm = 10 };
	lfpool_concurrent *plain = lfpool_concurrent_create(&c);
	const struct lfpool_concurrent_fast *f = fast_view(plain);
	if (DEBUG_BUILD) {
		cr_assert_eq(f->get_n, 0, "every pool of a debug build is checked");
		cr_assert_eq(f->put_span, 0);
	} else {
		cr_assert_gt(f->get_n, 0);
		cr_assert_eq(f->put_span, f->get_n * f->stride);
		void *o = lfpool_concurrent_get(plain);
		cr_assert(in_slab_0(f, o));
		cr_assert(lfpool_concurrent_owns(plain, o));
		lfpool_concurrent_put(plain, o);
		cr_assert_eq(lfpool_concurrent_get(plain), o, "the inline put pooled it on top");
		lfpool_concurrent_put(plain, o);
	}
	lfpool_concurrent_destroy(plain);

	c.flags = LFPOOL_F_DEBUG;
	lfpool_concurrent *checked = lfpool_concurrent_create(&c);
	cr_assert_eq(fast_view(checked)->get_n, 0, "a debug pool checks every get");
	cr_assert_eq(fast_view(checked)->put_span, 0, "and every put");
	lfpool_concurrent_destroy(checked);

	struct hooks h;
	lfpool_config r = hooked_config(&h, 64, 16);	/* with a reset hook */
	r.capacity = 1000;	/* one full slab */
	r.prewarm = 10;
	lfpool_concurrent *reset = lfpool_concurrent_create(&r);
	cr_assert_eq(fast_view(reset)->put_span, 0, "every put runs the reset hook");
	cr_assert_eq(fast_view(reset)->get_n > 0, !DEBUG_BUILD, "gets run inline");
	void *o = lfpool_concurrent_get(reset);
	lfpool_concurrent_put(reset, o);
	cr_assert_eq(hook_count(&h.reset), 1);
	lfpool_concurrent_destroy(reset);
}

/*
 * An unbounded pool's first slabs are small ones (lib/slab.h,
 * LFP_SMALL_MAX), served out of line; slab 0 is its first full slab, which
 * opens the inline paths, and every object stays the pool's.
 */
Test(concurrent, inline_bounds_open_at_the_first_full_slab)
{
	lfpool_config c = { .obj_size = 64, .prewarm = 10 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	const struct lfpool_concurrent_fast *f = fast_view(pool);
	cr_assert_eq(f->get_n, 0, "a small slab is not slab 0");
	void *o = lfpool_concurrent_get(pool);
	cr_assert(lfpool_concurrent_owns(pool, o));
	lfpool_concurrent_put(pool, o);
	cr_assert_eq(lfpool_concurrent_get(pool), o, "the slow put pooled it on top");
	lfpool_concurrent_put(pool, o);
	cr_assert_eq(lfpool_concurrent_prewarm(pool, 2000), 0);
	if (!DEBUG_BUILD) {
		cr_assert_gt(f->get_n, 0, "slab 0, full, opened them");
		void *a = lfpool_concurrent_get(pool);
		cr_assert(in_slab_0(f, a), "a prewarm pushes slab 0's objects last");
		lfpool_concurrent_put(pool, a);
	}
	lfpool_concurrent_destroy(pool);
}

/*
 * An unbounded pool that never grows past its small slabs (lib/slab.h: 15,
 * 63 and 255 objects of 64 B) gets and puts inline, objects of each small
 * slab: every get and put after the first gets is one inline CAS, and
 * each object comes back with what was written to it.
 */
/* n objects of pool, each filled with the pattern of its position. */
static void get_filled(lfpool_concurrent *pool, void **objs, int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		objs[i] = lfpool_concurrent_get(pool);
		cr_assert_not_null(objs[i]);
		fill_pattern(objs[i], size, (unsigned)i);
	}
}

/* Where lfpool/concurrent.h inlines Concurrent's get and put (x86-64;
 * aarch64 calls the library). */
#ifdef LFPOOL_CONC_INLINE_
# define CONC_INLINE 1
#else
# define CONC_INLINE 0
#endif

Test(concurrent, small_slabs_get_and_put_inline)
{
	lfpool_config c = { .obj_size = 64 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	enum { N = 300 };
	void *objs[N];
	get_filled(pool, objs, N, 64);	/* made: through the library */
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.slab_allocs, 3, "the three small slabs, not slab 0");
	for (int round = 0; round < 2; round++) {
		unsigned long cas0 = inline_cas;
		for (int i = 0; i < N; i++)
			lfpool_concurrent_put(pool, objs[i]);
		for (int i = N - 1; i >= 0; i--) {
			void *o = lfpool_concurrent_get(pool);
			cr_assert_eq(o, objs[i], "round %d: LIFO, object %d", round, i);
			/* A debug pool scribbles over what was put (use after put). */
			cr_assert(DEBUG_BUILD || check_pattern(o, 64, (unsigned)i), "object %d kept its bytes", i);
		}
		cr_assert_eq(inline_cas - cas0, CONC_INLINE && !DEBUG_BUILD ? 2 * N : 0,
			     "round %d: %lu of %d gets and puts inline", round, inline_cas - cas0, 2 * N);
	}
	for (int i = 0; i < N; i++)
		cr_assert(lfpool_concurrent_owns(pool, objs[i]));
	lfpool_concurrent_put_bulk(pool, objs, N);
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.retained, N);
	cr_assert_eq(lfpool_concurrent_destroy(pool), 0);
}

/* The rare paths the inline get and put call, called directly. */
Test(concurrent, slow_and_retry_paths_serve_and_take_objects)
{
	lfpool_config c = { .obj_size = 64, .capacity = 1000, .prewarm = 4 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&c);
	void *a = lfpool_concurrent_get_slow(pool);
	cr_assert_not_null(a);
	cr_assert(lfpool_concurrent_owns(pool, a));
	lfpool_concurrent_put_slow(pool, NULL);
	lfpool_concurrent_put_slow(pool, a);
	cr_assert_eq(lfpool_concurrent_get(pool), a, "the slow put pooled a on top");
	if (!DEBUG_BUILD) {	/* the retries skip the checks: lean pools only */
		const struct lfpool_concurrent_fast *f = fast_view(pool);
		/* from the current head, as after a CAS that failed on it */
		lfpool_concurrent_put_retry(pool, a, f->head.top, f->head.tag);
		cr_assert_eq(f->base + f->head.top * f->stride, (char *)a, "a is on top");
		cr_assert_eq(lfpool_concurrent_get_retry(pool, f->head.top, f->head.tag), a);
		lfpool_stats st;
		lfpool_concurrent_stats(pool, &st);
		cr_assert_eq(st.live, 1);
		cr_assert_eq(st.retained, 3);
	}
	lfpool_concurrent_put(pool, a);
	lfpool_concurrent_destroy(pool);
}

/* What a fini hook run by trim saw of its pool's inline bounds. */
static lfpool_concurrent *bounds_pool;
static uint64_t bounds_seen;

static void record_bounds(void *obj, void *ctx)
{
	(void)obj;
	(void)ctx;
	const struct lfpool_concurrent_fast *f = fast_view(bounds_pool);
	bounds_seen |= f->get_n | f->put_span;
}

/*
 * A trim closes the inline paths while it runs and leaves them closed when
 * it gave slab 0 back; objects of other slabs go on through the library,
 * and a new slab 0 opens them again.
 */
Test(concurrent, trim_closes_the_inline_paths_while_slab_0_may_go)
{
	if (DEBUG_BUILD)
		cr_skip_test("the inline paths are closed in debug builds");
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config c = { .obj_size = 1024, .fini = record_bounds, .allocator = &t.a };
	lfpool_concurrent *pool = bounds_pool = lfpool_concurrent_create(&c);
	const struct lfpool_concurrent_fast *f = fast_view(pool);
	enum { N = 200 };
	void *objs[N];
	get_filled(pool, objs, N, 1024);
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_geq(st.slab_allocs, 3, "want objects in several slabs");
	cr_assert_gt(f->get_n, 0);
	int in0 = 0;
	for (int i = 0; i < N; i++) {
		if (!in_slab_0(f, objs[i]))
			continue;
		lfpool_concurrent_put(pool, objs[i]);	/* inline */
		objs[i] = NULL;
		in0++;
	}
	cr_assert_eq((uint64_t)in0, f->get_n, "slab 0 is the first one filled");

	bounds_seen = 0;
	cr_assert_eq(lfpool_concurrent_trim(pool, 0), (size_t)in0);
	cr_assert_eq(bounds_seen, 0, "an inline path was open while trim gave objects back");
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.slab_frees, 1, "slab 0, and only it, was given back");
	cr_assert_eq(f->get_n, 0, "slab 0 is gone: nothing inline");
	cr_assert_eq(f->put_span, 0);

	/* The other slabs' objects, through the library, and back. */
	for (int i = 0; i < N; i++)
		lfpool_concurrent_put(pool, objs[i]);	/* NULL: no-op */
	for (int i = 0; i < N; i++) {
		if (!objs[i])
			continue;
		cr_assert(check_pattern(objs[i], 1024, (unsigned)i));
		cr_assert(lfpool_concurrent_owns(pool, objs[i]));
	}
	void *again[N];
	for (int i = 0; i < N; i++) {
		again[i] = lfpool_concurrent_get(pool);	/* the N - in0 pooled, then new ones */
		cr_assert_not_null(again[i]);
		cr_assert(lfpool_concurrent_owns(pool, again[i]));
		for (int j = 0; j < i; j++)
			cr_assert_neq(again[i], again[j]);
	}
	cr_assert_gt(f->get_n, 0, "a new slab 0 opens the inline paths again");
	int new0 = 0;
	for (int i = 0; i < N; i++)
		new0 += in_slab_0(f, again[i]);
	cr_assert_gt(new0, 0, "the last ones came from the new slab 0");
	for (int i = 0; i < N; i++)
		lfpool_concurrent_put(pool, again[i]);
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.retained, N);
	lfpool_concurrent_destroy(pool);
	test_alloc_finish(&t);
}
