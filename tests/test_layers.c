/* SPDX-License-Identifier: MIT */
/*
 * test_layers.c - the layers over every flavour (lib/layers/ and the
 * header-only ones): typed pools, scoped gets, reference-counted objects
 * and pooled closures, with their debug reports.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

static const lfpool_flavour flavours_all[] = {
	LFPOOL_FLAVOUR_POOL, LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_FLAVOUR_TS,
};
#define NFLAVOURS (sizeof(flavours_all) / sizeof(flavours_all[0]))

/* One report (since log was last cleared) naming the problem; clears it. */
static void expect_report(struct error_log *log, const void *ptr, const char *words)
{
	cr_assert_eq(log->calls, 1, "%d reports; last: %s", log->calls, log->problem);
	cr_assert(strstr(log->problem, words), "'%s' does not say '%s'", log->problem, words);
	cr_assert_eq(log->ptr, ptr);
	record_errors(log);
}

/* ---- typed pools ---- */

struct vec {
	double x, y, z;
};

struct wide {
	_Alignas(64) char bytes[100];
};

LFPOOL_TYPED(vec_pool, struct vec, pool);
LFPOOL_TYPED(vec_conc, struct vec, concurrent);
LFPOOL_TYPED(vec_ts, struct vec, ts);
LFPOOL_TYPED(wide_pool, struct wide, pool);

Test(typed, calls_are_typed_and_sized_for_the_type)
{
	vec_pool *vp = vec_pool_create(NULL);
	cr_assert_not_null(vp);
	struct vec *v = vec_pool_get(vp);
	cr_assert_not_null(v);
	v->x = 1.5;
	vec_pool_put(vp, v);
	cr_assert_eq(vec_pool_get(vp), v);
	vec_pool_put(vp, v);
	lfpool_stats st;
	lfpool_pool_stats(vec_pool_pool(vp), &st);
	cr_assert_eq(st.created, 1);
	cr_assert_eq(st.retained, 1);
	vec_pool_destroy(vp);

	vec_conc *vc = vec_conc_create(NULL);
	vec_ts *vt = vec_ts_create(NULL);
	cr_assert(vc && vt);
	struct vec *a = vec_conc_get(vc), *b = vec_ts_get(vt);
	cr_assert(a && b);
	cr_assert_eq(lfpool_concurrent_owns(vec_conc_pool(vc), a), 1);
	cr_assert_eq(lfpool_ts_owns(vec_ts_pool(vt), b), 1);
	vec_conc_put(vc, a);
	vec_ts_put(vt, b);
	vec_conc_destroy(vc);
	vec_ts_destroy(vt);
}

Test(typed, alignment_defaults_to_the_types)
{
	wide_pool *wp = wide_pool_create(NULL);
	struct wide *w[3];
	for (int i = 0; i < 3; i++) {
		w[i] = wide_pool_get(wp);
		cr_assert_eq((uintptr_t)w[i] % 64, 0);
		memset(w[i]->bytes, i, sizeof(w[i]->bytes));
	}
	for (int i = 0; i < 3; i++)
		wide_pool_put(wp, w[i]);
	wide_pool_destroy(wp);
}

Test(typed, the_config_is_honoured_and_checked)
{
	lfpool_config cfg = { .capacity = 2, .prewarm = 1 };
	vec_pool *vp = vec_pool_create(&cfg);
	cr_assert_not_null(vp);
	struct vec *a = vec_pool_get(vp), *b = vec_pool_get(vp);
	cr_assert(a && b);
	errno = 0;
	cr_assert_null(vec_pool_get(vp), "capacity 2");
	cr_assert_eq(errno, ENOBUFS);
	vec_pool_put(vp, a);
	vec_pool_put(vp, b);
	vec_pool_destroy(vp);

	lfpool_config wrong = { .obj_size = sizeof(struct vec) + 1 };
	errno = 0;
	cr_assert_null(vec_pool_create(&wrong));
	cr_assert_eq(errno, EINVAL);
	lfpool_config right = { .obj_size = sizeof(struct vec) };
	vp = vec_pool_create(&right);
	cr_assert_not_null(vp);
	vec_pool_destroy(vp);
}

/* ---- scoped gets ---- */

/* Counts puts through the reset hook of the hooks helper. */
static lfpool_pool *counted_pool(struct hooks *h, size_t capacity)
{
	lfpool_config c = hooked_config(h, sizeof(struct vec), 0);
	c.capacity = capacity;
	lfpool_pool *p = lfpool_pool_create(&c);
	cr_assert_not_null(p);
	return p;
}

/* Takes an object for the scope; returns early when fail is set. */
static int scoped_work(lfpool_pool *p, int fail, struct vec **seen)
{
	LFPOOL_SCOPED(lfpool_pool, struct vec, v, p);
	cr_assert_not_null(v);
	*seen = v;
	if (fail)
		return -1;
	v->x = 2;
	return 0;
}

static struct vec *scoped_keep(lfpool_pool *p)
{
	LFPOOL_SCOPED(lfpool_pool, struct vec, v, p);
	return LFPOOL_DISOWN(v);
}

Test(scoped, every_exit_puts_the_object_back)
{
	struct hooks h;
	lfpool_pool *p = counted_pool(&h, 0);
	struct vec *seen = NULL, *again = NULL;
	cr_assert_eq(scoped_work(p, 1, &seen), -1);
	cr_assert_eq(hook_count(&h.reset), 1, "early return put it back");
	cr_assert_eq(scoped_work(p, 0, &again), 0);
	cr_assert_eq(hook_count(&h.reset), 2, "the end of the scope put it back");
	cr_assert_eq(again, seen, "the same object, so it was in the pool");

	for (int i = 0; i < 10; i++) {
		LFPOOL_SCOPED(lfpool_pool, struct vec, v, p);
		cr_assert_not_null(v);
		if (i == 3)
			break;
		if (i % 2)
			continue;
	}
	cr_assert_eq(hook_count(&h.reset), 6, "four iterations, four puts");

	struct vec *kept = scoped_keep(p);
	cr_assert_eq(hook_count(&h.reset), 6, "disowned: not put back");
	lfpool_pool_put(p, kept);
	lfpool_stats st;
	lfpool_pool_stats(p, &st);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.created, 1);
	lfpool_pool_destroy(p);
}

Test(scoped, a_failed_get_puts_nothing)
{
	struct hooks h;
	lfpool_pool *p = counted_pool(&h, 1);
	struct vec *held = lfpool_pool_get(p);
	{
		LFPOOL_SCOPED(lfpool_pool, struct vec, v, p);
		cr_assert_null(v, "capacity 1, and it is out");
	}
	cr_assert_eq(hook_count(&h.reset), 0);
	lfpool_pool_put(p, held);
	lfpool_pool_destroy(p);
}

Test(scoped, every_kind_of_pool)
{
	lfpool_config c = { .obj_size = sizeof(struct vec) };
	lfpool_concurrent *cp = lfpool_concurrent_create(&c);
	lfpool_ts *tp = lfpool_ts_create(&c);
	lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_POOL, &c);
	lfpool_array_config ac = { .name = NULL };
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &ac);
	vec_pool *vp = vec_pool_create(NULL);
	cr_assert(cp && tp && rc && ap && vp);
	{
		LFPOOL_SCOPED(lfpool_concurrent, struct vec, a, cp);
		LFPOOL_SCOPED(lfpool_ts, struct vec, b, tp);
		LFPOOL_SCOPED(lfpool_rc, struct vec, r, rc);
		LFPOOL_SCOPED(lfpool_array, char, buf, ap, 300);
		LFPOOL_SCOPED(vec_pool, struct vec, v, vp);
		cr_assert(a && b && r && buf && v);
		cr_assert_eq(lfpool_rc_count(r), 1);
		memset(buf, 1, 300);
	}
	lfpool_stats st;
	lfpool_concurrent_stats(cp, &st);
	cr_assert(st.created == 1 && st.live == 0);
	lfpool_ts_stats(tp, &st);
	cr_assert(st.created == 1 && st.live == 0);
	lfpool_rc_stats(rc, &st);
	cr_assert(st.created == 1 && st.live == 0, "the scope released its reference");
	cr_assert_eq(lfpool_array_stats(ap, 300, &st), 0);
	cr_assert(st.created == 1 && st.live == 0);
	lfpool_pool_stats(vec_pool_pool(vp), &st);
	cr_assert(st.created == 1 && st.live == 0);
	lfpool_concurrent_destroy(cp);
	cr_assert_eq(lfpool_ts_destroy(tp), 0);
	lfpool_rc_destroy(rc);
	lfpool_array_destroy(ap);
	vec_pool_destroy(vp);
}

/* ---- reference-counted objects ---- */

static lfpool_rc *make_rc(lfpool_flavour f, unsigned flags)
{
	lfpool_config c = { .obj_size = 48, .flags = flags, .name = "counted" };
	lfpool_rc *rc = lfpool_rc_create(f, &c);
	cr_assert_not_null(rc, "create: errno %d", errno);
	return rc;
}

static lfpool_stats rc_stats(const lfpool_rc *rc)
{
	lfpool_stats st;
	lfpool_rc_stats(rc, &st);
	return st;
}

Test(rc, the_last_release_puts_the_object_back)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		lfpool_rc *rc = make_rc(flavours_all[f], 0);
		char *o = lfpool_rc_get(rc);
		cr_assert_not_null(o);
		cr_assert_eq(lfpool_rc_count(o), 1);
		memset(o, 0x77, 48);
		lfpool_rc_retain(o);
		lfpool_rc_retain(o);
		cr_assert_eq(lfpool_rc_count(o), 3);
		cr_assert_eq(lfpool_rc_release(o), 0);
		cr_assert_eq(lfpool_rc_release(o), 0);
		lfpool_stats st = rc_stats(rc);
		cr_assert(st.live == 1 && st.retained == 0, "still held");
		cr_assert_eq(lfpool_rc_release(o), 1, "the last one");
		st = rc_stats(rc);
		cr_assert(st.live == 0 && st.retained == 1, "back in the pool");
		char *again = lfpool_rc_get(rc);
		cr_assert_eq(again, o, "the pooled object comes back");
		cr_assert_eq(lfpool_rc_count(again), 1, "with a fresh count");
		cr_assert_eq(lfpool_rc_release(again), 1);
		cr_assert_eq(lfpool_rc_release(NULL), 0);
		lfpool_rc_retain(NULL);
		lfpool_rc_destroy(rc);
	}
}

Test(rc, hooks_see_the_callers_bytes)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 40, 64);
	c.prewarm = 2;
	lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &c);
	cr_assert_not_null(rc);
	cr_assert_eq(hook_count(&h.init), 2);
	unsigned char *o = lfpool_rc_get(rc);
	cr_assert_eq((uintptr_t)o % 64, 0);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(o[i], HOOK_INIT_BYTE, "init wrote the caller's 40 bytes");
	cr_assert_eq(lfpool_rc_count(o), 1, "and left the count alone");
	lfpool_rc_retain(o);
	lfpool_rc_release(o);
	cr_assert_eq(hook_count(&h.reset), 0, "not yet");
	lfpool_rc_release(o);
	cr_assert_eq(hook_count(&h.reset), 1, "the last release put it");
	lfpool_rc_destroy(rc);
	/* Each object made was unmade (debug pools without ASan make an object
	 * anew, fini then init, on every get). */
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
}

Test(rc, bad_configurations_are_einval)
{
	lfpool_config zero = { .obj_size = 0 }, odd = { .obj_size = 8, .align = 24 };
	lfpool_config ok = { .obj_size = 8 };
	/* align at most 4096 (rc.h); an object whose prefix (16 bytes here)
	 * would not fit a size_t is refused, not wrapped to 15 or 7 bytes. */
	lfpool_config wide = { .obj_size = 8, .align = 8192 };
	lfpool_config huge = { .obj_size = SIZE_MAX }, wraps = { .obj_size = SIZE_MAX - 8 };
	const lfpool_config *bad[] = { NULL, &zero, &odd, &wide, &huge, &wraps };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_assert_null(lfpool_rc_create(LFPOOL_FLAVOUR_POOL, bad[i]), "config %zu", i);
		cr_assert_eq(errno, EINVAL, "config %zu: errno %d", i, errno);
	}
	errno = 0;
	cr_assert_null(lfpool_rc_create(0, &ok));
	cr_assert_eq(errno, EINVAL);
}

/* array.h, rc.h, closure.h: every layer's create takes the flavour first;
 * none, or one beyond the last, is NULL with errno EINVAL, holding nothing,
 * and each flavour with the same config is accepted. */
Test(layers, the_flavour_is_the_first_argument_and_checked)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_config cfg = { .obj_size = 16, .prewarm = 4, .allocator = &t.a };
	lfpool_array_config acfg = { .max_size = 1024, .allocator = &t.a };
	const lfpool_flavour wrong[] = { 0, (lfpool_flavour)(LFPOOL_FLAVOUR_TS + 1),
					 (lfpool_flavour)-1 };
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		int f = (int)wrong[i];
		errno = 0;
		cr_assert_null(lfpool_array_create(wrong[i], &acfg), "array, flavour %d", f);
		cr_assert_eq(errno, EINVAL, "array, flavour %d", f);
		errno = 0;
		cr_assert_null(lfpool_rc_create(wrong[i], &cfg), "rc, flavour %d", f);
		cr_assert_eq(errno, EINVAL, "rc, flavour %d", f);
		errno = 0;
		cr_assert_null(lfpool_closure_pool_create(wrong[i], &cfg), "closure, flavour %d", f);
		cr_assert_eq(errno, EINVAL, "closure, flavour %d", f);
		cr_assert_eq(t.live, 0, "flavour %d: a refused create holds no memory", f);
	}
	const lfpool_flavour right[] = { LFPOOL_FLAVOUR_POOL, LFPOOL_FLAVOUR_CONCURRENT,
					 LFPOOL_FLAVOUR_TS };
	for (size_t i = 0; i < 3; i++) {
		lfpool_array *ap = lfpool_array_create(right[i], &acfg);
		lfpool_rc *rc = lfpool_rc_create(right[i], &cfg);
		lfpool_closure_pool *cp = lfpool_closure_pool_create(right[i], &cfg);
		cr_assert(ap && rc && cp, "flavour %d", (int)right[i]);
		cr_assert_eq(lfpool_array_destroy(ap), 0);
		cr_assert_eq(lfpool_rc_destroy(rc), 0);
		cr_assert_eq(lfpool_closure_pool_destroy(cp), 0);
	}
	test_alloc_finish(&t);
}

/* Threads retain and release one object while the test holds a reference;
 * then each thread drops one reference it was given: exactly one release
 * is the last. */
struct rc_ctx {
	void *obj;
	int last;
};

#define RC_ITERS 20000

static void *rc_thread(void *arg)
{
	struct rc_ctx *c = arg;
	for (int i = 0; i < RC_ITERS; i++) {
		lfpool_rc_retain(c->obj);
		if (lfpool_rc_release(c->obj))
			__atomic_fetch_add(&c->last, 100, __ATOMIC_RELAXED);	/* never */
	}
	if (lfpool_rc_release(c->obj))
		__atomic_fetch_add(&c->last, 1, __ATOMIC_RELAXED);
	return NULL;
}

Test(rc, counts_are_atomic_across_threads)
{
	static const lfpool_flavour shared[] = { LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_FLAVOUR_TS };
	for (size_t f = 0; f < 2; f++) {
		lfpool_rc *rc = make_rc(shared[f], 0);
		struct rc_ctx c = { .obj = lfpool_rc_get(rc) };
		pthread_t th[4];
		for (int i = 0; i < 3; i++)
			lfpool_rc_retain(c.obj);	/* one reference per thread */
		for (int i = 0; i < 4; i++)
			cr_assert_eq(pthread_create(&th[i], NULL, rc_thread, &c), 0);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		cr_assert_eq(c.last, 1, "%d: one last release", c.last);
		lfpool_stats st = rc_stats(rc);
		cr_assert(st.live == 0 && st.retained == 1);
		lfpool_rc_destroy(rc);
	}
}

Test(rc_debug, zero_counts_strangers_and_double_destroy_are_reported)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		record_errors(&log);
		lfpool_rc *rc = make_rc(flavours_all[f], LFPOOL_F_DEBUG);
		char *o = lfpool_rc_get(rc), *held = lfpool_rc_get(rc);
		lfpool_rc_retain(o);
		lfpool_rc_release(o);
		cr_assert_eq(lfpool_rc_release(o), 1);
		cr_assert_eq(log.calls, 0, "good calls reported: %s", log.problem);
		cr_assert_eq(lfpool_rc_release(o), 0);
		expect_report(&log, o, "release of an object whose count already reached zero");
		lfpool_rc_retain(o);
		expect_report(&log, o, "retain of an object whose count already reached zero");
		lfpool_stats st = rc_stats(rc);
		cr_assert(st.live == 1 && st.retained == 1, "the bad calls changed nothing");

		static char other[64] __attribute__((aligned(16)));
		memset(other, 0, sizeof(other));
		lfpool_rc_release(other + 32);
		expect_report(&log, other + 32, "not a reference-counted");
		lfpool_rc_retain(other + 32);
		expect_report(&log, other + 32, "not a reference-counted");
		cr_assert_eq(lfpool_rc_release(held), 1);
		cr_assert_eq(log.calls, 0);
		lfpool_rc_destroy(rc);
		lfpool_rc_destroy(rc);
		expect_report(&log, rc, "already destroyed");
	}
}

Test(rc_debug, release_pools_report_strangers_too)
{
	struct error_log log;
	record_errors(&log);
	static char other[64] __attribute__((aligned(16)));
	memset(other, 0, sizeof(other));
	lfpool_rc_release(other + 32);
	expect_report(&log, other + 32, "not a reference-counted");
}

Test(rc_debug, default_hook_aborts_on_release_at_zero, .signal = SIGABRT)
{
	lfpool_rc *rc = make_rc(LFPOOL_FLAVOUR_POOL, LFPOOL_F_DEBUG);
	void *o = lfpool_rc_get(rc);
	lfpool_rc_release(o);
	lfpool_rc_release(o);
}

Test(rc_debug, default_hook_aborts_on_retain_at_zero, .signal = SIGABRT)
{
	lfpool_rc *rc = make_rc(LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_F_DEBUG);
	void *o = lfpool_rc_get(rc);
	lfpool_rc_release(o);
	lfpool_rc_retain(o);
}

Test(rc_debug, default_hook_aborts_on_a_stranger, .signal = SIGABRT)
{
	static char other[64] __attribute__((aligned(16)));
	lfpool_rc_retain(other + 32);
}

/* ---- pooled closures ---- */

struct sum_capture {
	long add;
	int *calls;
};

/* Adds its capture's amount to *arg and counts its calls. */
static void sum_fn(void *capture, void *arg)
{
	struct sum_capture *c = capture;
	*(long *)arg += c->add;
	(*c->calls)++;
}

static lfpool_closure_pool *make_closures(lfpool_flavour f, const lfpool_allocator *a,
					  unsigned flags)
{
	lfpool_config c = { .obj_size = 32, .prewarm = 8, .allocator = a, .flags = flags,
			    .name = "jobs" };
	lfpool_closure_pool *cp = lfpool_closure_pool_create(f, &c);
	cr_assert_not_null(cp, "create: errno %d", errno);
	return cp;
}

Test(closure, invoked_with_capture_and_released_without_allocation)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct test_alloc t;
		test_alloc_init(&t);
		lfpool_closure_pool *cp = make_closures(flavours_all[f], &t.a, 0);
		long total = 0;
		int calls = 0;
		/* Warm-up: every closure of the prewarm once through. */
		lfpool_closure *warm[8];
		for (int i = 0; i < 8; i++)
			warm[i] = lfpool_closure_get(cp, sum_fn, &(struct sum_capture){ 0, &calls },
						     sizeof(struct sum_capture));
		for (int i = 0; i < 8; i++)
			lfpool_closure_run(cp, warm[i], &total);
		long allocs = t.allocs;
		for (long i = 1; i <= 1000; i++) {
			struct sum_capture cap = { i, &calls };
			lfpool_closure *c = lfpool_closure_get(cp, sum_fn, &cap, sizeof(cap));
			cr_assert_not_null(c);
			cr_assert_eq((uintptr_t)lfpool_closure_capture(c) % 16, 0);
			if (i % 2) {
				lfpool_closure_run(cp, c, &total);
			} else {
				lfpool_closure_invoke(c, &total);
				lfpool_closure_release(cp, c);
			}
		}
		cr_assert_eq(calls, 1008);
		cr_assert_eq(total, 1000 * 1001 / 2);
		cr_assert_eq(t.allocs, allocs, "%ld allocations after warm-up", t.allocs - allocs);
		lfpool_stats st;
		lfpool_closure_pool_stats(cp, &st);
		cr_assert_eq(st.created, 8, "the prewarmed closures served every get");
		cr_assert_eq(st.live, 0);
		cr_assert_eq(lfpool_closure_pool_destroy(cp), 0);
		cr_assert_eq(t.live, 0);
		test_alloc_fini(&t);
	}
}

Test(closure, capture_size_and_function_are_checked)
{
	lfpool_closure_pool *cp = make_closures(LFPOOL_FLAVOUR_POOL, NULL, 0);
	char big[33] = { 0 };
	errno = 0;
	cr_assert_null(lfpool_closure_get(cp, sum_fn, big, sizeof(big)));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(lfpool_closure_get(cp, NULL, big, 0));
	cr_assert_eq(errno, EINVAL);
	lfpool_closure *c = lfpool_closure_get(cp, sum_fn, big, 32);
	cr_assert_not_null(c, "the full capture size fits");
	lfpool_closure_release(cp, c);
	lfpool_closure_release(cp, NULL);
	errno = 0;
	cr_assert_null(lfpool_closure_pool_ts(cp));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(lfpool_closure_pool_destroy(cp), 0);

	lfpool_config none = { .obj_size = 0 };
	cp = lfpool_closure_pool_create(LFPOOL_FLAVOUR_CONCURRENT, &none);
	cr_assert_not_null(cp, "closures without capture");
	c = lfpool_closure_get(cp, sum_fn, NULL, 0);
	cr_assert_not_null(c);
	lfpool_closure_release(cp, c);
	cr_assert_eq(lfpool_closure_pool_destroy(cp), 0);

	lfpool_config hooked = { .obj_size = 8, .reset = hook_reset };
	lfpool_config aligned = { .obj_size = 8, .align = 32 };
	/* align is a power of two (common.h), here too; a capture size whose
	 * closure (16 bytes more) would not fit a size_t is refused, not
	 * wrapped to a closure of 15 or 7 bytes. */
	lfpool_config odd = { .obj_size = 8, .align = 12 };
	lfpool_config huge = { .obj_size = SIZE_MAX };
	lfpool_config wraps = { .obj_size = SIZE_MAX - 8 };
	const lfpool_config *bad[] = { NULL, &hooked, &aligned, &odd, &huge, &wraps };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		cr_assert_null(lfpool_closure_pool_create(LFPOOL_FLAVOUR_POOL, bad[i]),
			       "config %zu accepted", i);
		cr_assert_eq(errno, EINVAL, "config %zu: errno %d", i, errno);
	}
	errno = 0;
	cr_assert_null(lfpool_closure_pool_create(0, &none));
	cr_assert_eq(errno, EINVAL);
}

/* The job-system pattern: worker A takes closures from its own cache,
 * worker B runs them and releases them into its cache. */
Test(closure, explicit_caches_take_and_release_without_allocation)
{
	struct test_alloc t;
	test_alloc_init(&t);
	lfpool_closure_pool *cp = make_closures(LFPOOL_FLAVOUR_TS, &t.a, 0);
	lfpool_ts *ts = lfpool_closure_pool_ts(cp);
	cr_assert_not_null(ts);
	lfpool_ts_cache *a = lfpool_ts_cache_create(ts), *b = lfpool_ts_cache_create(ts);
	cr_assert(a && b);
	long total = 0;
	int calls = 0;
	lfpool_closure *batch[16];
	long allocs = 0;
	for (int round = 0; round < 50; round++) {
		if (round == 2)
			allocs = t.allocs;	/* warmed up: caches and magazines exist */
		for (int i = 0; i < 16; i++) {
			struct sum_capture cap = { 1, &calls };
			batch[i] = lfpool_closure_get_cache(cp, round % 2 ? b : a, sum_fn, &cap,
							    sizeof(cap));
			cr_assert_not_null(batch[i]);
		}
		for (int i = 0; i < 16; i++) {
			lfpool_closure_invoke(batch[i], &total);
			lfpool_closure_release_cache(round % 2 ? a : b, batch[i]);
		}
	}
	cr_assert_eq(total, 50 * 16);
	cr_assert_eq(calls, 50 * 16);
	cr_assert_eq(t.allocs, allocs, "%ld allocations after warm-up", t.allocs - allocs);
	char big[33] = { 0 };
	errno = 0;
	cr_assert_null(lfpool_closure_get_cache(cp, a, sum_fn, big, sizeof(big)));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(lfpool_closure_pool_destroy(cp), -1, "caches are still alive");
	cr_assert_eq(errno, EBUSY);
	lfpool_ts_cache_destroy(a);
	lfpool_ts_cache_destroy(b);
	cr_assert_eq(lfpool_closure_pool_destroy(cp), 0);
	cr_assert_eq(t.live, 0);
	test_alloc_fini(&t);
}

Test(closure_debug, double_release_and_calls_after_destroy_are_reported)
{
	for (size_t f = 0; f < NFLAVOURS; f++) {
		struct error_log log;
		record_errors(&log);
		lfpool_closure_pool *cp = make_closures(flavours_all[f], NULL, LFPOOL_F_DEBUG);
		long total = 0;
		int calls = 0;
		struct sum_capture cap = { 3, &calls };
		lfpool_closure *c = lfpool_closure_get(cp, sum_fn, &cap, sizeof(cap));
		lfpool_closure *d = lfpool_closure_get(cp, sum_fn, &cap, sizeof(cap));
		lfpool_closure_run(cp, c, &total);
		cr_assert_eq(log.calls, 0);
		lfpool_closure_release(cp, c);
		cr_assert_str_eq(log.pool, "jobs");
		expect_report(&log, c, "double put");
		cr_assert_eq(lfpool_closure_pool_destroy(cp), 0);
		record_errors(&log);
		lfpool_closure_release(cp, d);
		expect_report(&log, d, "after destroy");
		errno = 0;
		cr_assert_null(lfpool_closure_get(cp, sum_fn, &cap, sizeof(cap)));
		cr_assert_eq(errno, EINVAL);
		expect_report(&log, NULL, "get after destroy");
		errno = 0;
		cr_assert_null(lfpool_closure_pool_ts(cp), "no pool of a destroyed pool");
		cr_assert_eq(errno, EINVAL);
		expect_report(&log, cp, "after destroy");
		errno = 0;
		cr_assert_eq(lfpool_closure_pool_destroy(cp), -1);
		cr_assert_eq(errno, EINVAL);
		expect_report(&log, cp, "already destroyed");
	}
}

Test(closure_debug, default_hook_aborts_on_double_release, .signal = SIGABRT)
{
	lfpool_closure_pool *cp = make_closures(LFPOOL_FLAVOUR_CONCURRENT, NULL, LFPOOL_F_DEBUG);
	int calls = 0;
	struct sum_capture cap = { 3, &calls };
	lfpool_closure *c = lfpool_closure_get(cp, sum_fn, &cap, sizeof(cap));
	lfpool_closure_release(cp, c);
	lfpool_closure_release(cp, c);
}
