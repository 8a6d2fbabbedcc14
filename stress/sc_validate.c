/* SPDX-License-Identifier: MIT */
/*
 * sc_validate.c - the negative control of validate (--enable-debug builds
 * only): a pool whose pooled place holds one object twice must fail
 * validate with "in two places", and pass again once repaired.  Without it
 * a validate that never fails would make every other scenario's call a
 * check that cannot fail.
 */
#ifdef LFPOOL_DEBUG

#include <string.h>

#include "stress.h"

/* validate must fail, naming a duplicate, while objs[1] == objs[0]; and pass
 * once objs[1] is back. */
static void expect_duplicate(struct run *r, const char *what, const void *pool,
			     int (*validate)(const void *, char *, size_t), void **objs)
{
	char why[256];
	if (validate(pool, why, sizeof(why)) != 0) {
		run_fail(r, "%s: validate fails on a sound pool: %s", what, why);
		return;
	}
	void *saved = objs[1];
	objs[1] = objs[0];
	int rc = validate(pool, why, sizeof(why));
	objs[1] = saved;
	if (rc == 0 || !strstr(why, "two places"))
		run_fail(r, "%s: validate missed an object pooled twice (%s)", what,
			 rc == 0 ? "it passed" : why);
	else if (validate(pool, why, sizeof(why)) != 0)
		run_fail(r, "%s: validate fails after the repair: %s", what, why);
}

/* Pool: two prewarmed objects in its array (the fast view's items). */
static void pool_duplicate(struct run *r)
{
	lfpool_config cfg = { .obj_size = 32, .prewarm = 2 };
	lfpool_pool *p = lfpool_pool_create(&cfg);
	if (!p) {
		run_fail(r, "pool create failed");
		return;
	}
	expect_duplicate(r, "pool", p, validate_pool, ((struct lfpool_pool_fast *)p)->low);
	lfpool_pool_destroy(p);
}

/* validate must fail with a problem naming needle while *field holds bad,
 * and pass again once its value is back. */
static void expect_bad_view(struct run *r, const char *what, const void *pool,
			    int (*validate)(const void *, char *, size_t), void ***field,
			    void **bad, const char *needle)
{
	char why[256];
	if (validate(pool, why, sizeof(why)) != 0) {
		run_fail(r, "%s: validate fails on a sound pool: %s", what, why);
		return;
	}
	void **saved = *field;
	*field = bad;
	int rc = validate(pool, why, sizeof(why));
	*field = saved;
	if (rc == 0 || !strstr(why, needle))
		run_fail(r, "%s: validate missed a broken fast view (%s)", what,
			 rc == 0 ? "it passed" : why);
	else if (validate(pool, why, sizeof(why)) != 0)
		run_fail(r, "%s: validate fails after the repair: %s", what, why);
}

/* Pool: a debug pool's fast view stays empty (top at low, end NULL), so
 * that the inline get and put take the checked slow path; validate fails
 * on a view that holds an object or has room. */
static void pool_fast_view(struct run *r)
{
	lfpool_config cfg = { .obj_size = 32, .prewarm = 2 };
	lfpool_pool *p = lfpool_pool_create(&cfg);
	if (!p) {
		run_fail(r, "pool create failed");
		return;
	}
	struct lfpool_pool_fast *f = (struct lfpool_pool_fast *)p;
	expect_bad_view(r, "pool, an object in the fast view", p, validate_pool, &f->top,
			f->low + 1, "fast view has top");
	expect_bad_view(r, "pool, room in the fast view", p, validate_pool, &f->end, f->low + 2,
			"fast view has end");
	lfpool_pool_destroy(p);
}

/* ThreadStatic: two objects put into an explicit cache's loaded magazine. */
static void cache_duplicate(struct run *r)
{
	lfpool_config cfg = { .obj_size = 32, .magazine_size = 8 };
	lfpool_ts *p = lfpool_ts_create(&cfg);
	lfpool_ts_cache *c = p ? lfpool_ts_cache_create(p) : NULL;
	void *a = c ? lfpool_ts_cache_get(c) : NULL, *b = c ? lfpool_ts_cache_get(c) : NULL;
	if (!a || !b) {
		run_fail(r, "threadstatic: create, cache or get failed");
	} else {
		lfpool_ts_cache_put(c, a);
		lfpool_ts_cache_put(c, b);
		expect_duplicate(r, "threadstatic", p, validate_ts,
				 ((struct lfpool_ts_cache_fast *)c)->objs);
	}
	lfpool_ts_cache_destroy(c);
	lfpool_ts_destroy(p);
}

static void validate_control(struct run *r)
{
	pool_duplicate(r);
	pool_fast_view(r);
	cache_duplicate(r);
	r->t.rounds++;
}

const struct scenario sc_validate = { "validate", false, false, 1, validate_control };

#endif
