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

/* validate must pass on the sound pool, fail with a problem that names
 * needle (about what: a broken ...) while the size bytes at field hold
 * those at bad, and pass again once they are back (memcpy: field may be
 * a pointer of any type). */
static void expect_caught(struct run *r, const char *what, const void *pool,
			  int (*validate)(const void *, char *, size_t), void *field,
			  const void *bad, size_t size, const char *needle, const char *about)
{
	char why[256];
	unsigned char saved[sizeof(void *)];
	if (validate(pool, why, sizeof(why)) != 0) {
		run_fail(r, "%s: validate fails on a sound pool: %s", what, why);
		return;
	}
	memcpy(saved, field, size);
	memcpy(field, bad, size);
	int rc = validate(pool, why, sizeof(why));
	memcpy(field, saved, size);
	if (rc == 0 || !strstr(why, needle))
		run_fail(r, "%s: validate missed %s (%s)", what, about, rc == 0 ? "it passed" : why);
	else if (validate(pool, why, sizeof(why)) != 0)
		run_fail(r, "%s: validate fails after the repair: %s", what, why);
}

/* An object pooled twice: objs[1] made objs[0]. */
static void expect_duplicate(struct run *r, const char *what, const void *pool,
			     int (*validate)(const void *, char *, size_t), void **objs)
{
	expect_caught(r, what, pool, validate, &objs[1], &objs[0], sizeof(void *), "two places",
		      "an object pooled twice");
}

/* A broken fast view: *field holds bad. */
static void expect_bad_view(struct run *r, const char *what, const void *pool,
			    int (*validate)(const void *, char *, size_t), void ***field,
			    void **bad, const char *needle)
{
	expect_caught(r, what, pool, validate, field, &bad, sizeof(bad), needle,
		      "a broken fast view");
}

/* Pool: two prewarmed objects in its array (the fast view's items), and
 * its fast view, which a debug pool keeps empty (top at low, end NULL) so
 * that the inline get and put take the checked slow path: validate fails
 * on a view that holds an object or has room. */
static void pool_controls(struct run *r)
{
	lfpool_config cfg = { .obj_size = 32, .prewarm = 2 };
	lfpool_pool *p = lfpool_pool_create(&cfg);
	if (!p) {
		run_fail(r, "pool create failed");
		return;
	}
	struct lfpool_pool_fast *f = (struct lfpool_pool_fast *)p;
	expect_duplicate(r, "pool", p, validate_pool, f->low);
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
	pool_controls(r);
	cache_duplicate(r);
	r->t.rounds++;
}

const struct scenario sc_validate = { "validate", false, false, 1, validate_control };

#endif
