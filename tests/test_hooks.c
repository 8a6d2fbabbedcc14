/* SPDX-License-Identifier: MIT */
/*
 * test_hooks.c - object life cycle on every flavour: prewarm creates exactly
 * what it is asked for, init runs once and its state (and the user's bytes)
 * survive put and get, reset runs on every put, fini once per object, and
 * capacity is never exceeded.
 */
#include <errno.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "support.h"

FLAVOUR_TEST(prewarm, creates_exactly_the_number_asked_for)
{
	static const size_t counts[] = { 1, 2, 7, 100, 1000, 4097 };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		size_t n = counts[i];
		struct hooks h;
		lfpool_config c = hooked_config(&h, 40, 8);
		c.prewarm = n;
		void *pool = ops->create(&c);
		lfpool_stats st;
		ops->stats(pool, &st);
		cr_assert_eq(hook_count(&h.init), (long)n, "%s: prewarm %zu ran init %ld times",
			     ops->name, n, hook_count(&h.init));
		cr_assert_eq(st.created, n);
		cr_assert_eq(st.retained, n);

		cr_assert_eq(ops->prewarm(pool, n + 3), 0);
		cr_assert_eq(hook_count(&h.init), (long)(2 * n + 3), "%s: prewarm(%zu) after %zu",
			     ops->name, n + 3, n);
		ops->stats(pool, &st);
		cr_assert_eq(st.created, 2 * n + 3);
		cr_assert_eq(st.retained, 2 * n + 3);
		ops->destroy(pool);
		cr_assert_eq(hook_count(&h.fini), (long)(2 * n + 3));
	}
}

FLAVOUR_TEST(prewarm, pooled_objects_are_served_before_new_ones)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 40, 8);
	c.prewarm = 10;
	void *pool = ops->create(&c);
	void *objs[11];
	for (int i = 0; i < 10; i++) {
		objs[i] = ops->get(pool);
		for (int j = 0; j < i; j++)
			cr_assert_neq(objs[i], objs[j], "%s: handed out twice", ops->name);
	}
	/* Debug builds remake each pooled object on its get (fini, init). */
	cr_assert_eq(hook_count(&h.init) - hook_count(&h.fini), 10,
		     "%s: a get created while objects were pooled", ops->name);
	cr_assert_eq(hook_count(&h.init), 10 + 10 * REMAKES, "%s", ops->name);
	objs[10] = ops->get(pool);
	cr_assert_eq(hook_count(&h.init), 11 + 10 * REMAKES, "%s: an empty pool's get creates one",
		     ops->name);
	for (int i = 0; i < 11; i++)
		ops->put(pool, objs[i]);
	ops->destroy(pool);
}

/* Whether o, put with the pattern of seed and got again, holds what the
 * build promises: the pattern, or in debug builds (REMAKES) init's state. */
static bool kept(const unsigned char *o, size_t size, unsigned seed)
{
	if (!REMAKES)
		return check_pattern(o, size, seed);
	for (size_t i = 0; i < size; i++)
		if (o[i] != HOOK_INIT_BYTE)
			return false;
	return true;
}

/* The state init set up, and what the user wrote, survive put and get (in
 * debug builds the pool remakes a pooled object on get: init's state). */
FLAVOUR_TEST(hooks, object_bytes_survive_put_and_get)
{
	static const size_t sizes[] = { 1, 8, 24, 100, 4096 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t size = sizes[s];
		struct hooks h;
		lfpool_config c = hooked_config(&h, size, 8);
		c.prewarm = 1;
		void *pool = ops->create(&c);
		unsigned char *obj = ops->get(pool);
		for (size_t i = 0; i < size; i++)
			cr_assert_eq(obj[i], HOOK_INIT_BYTE, "%s: init state lost", ops->name);

		/* A lone pooled object must come back as it was put. */
		fill_pattern(obj, size, 7);
		ops->put(pool, obj);
		cr_assert_eq(ops->get(pool), obj, "%s: a different object", ops->name);
		cr_assert(kept(obj, size, 7), "%s size %zu: the pool wrote into a pooled object",
			  ops->name, size);

		/* Many: each keeps its own bytes, whatever order they return in. */
		enum { N = 50 };
		unsigned char *objs[N];
		objs[0] = obj;
		for (int i = 1; i < N; i++)
			objs[i] = ops->get(pool);
		for (int i = 0; i < N; i++)
			fill_pattern(objs[i], size, 100 + i);
		for (int i = 0; i < N; i++)
			ops->put(pool, objs[i]);
		for (int i = 0; i < N; i++) {
			unsigned char *o = ops->get(pool);
			int k = 0;
			while (k < N && objs[k] != o)
				k++;
			cr_assert_lt(k, N, "%s: an object not seen before", ops->name);
			cr_assert(kept(o, size, 100 + k), "%s size %zu: object %d changed",
				  ops->name, size, k);
		}
		/* N made; debug builds remade the N + 2 gets of pooled ones. */
		cr_assert_eq(hook_count(&h.init), N + (N + 2) * REMAKES,
			     "%s: init ran again on a reused object", ops->name);
		cr_assert_eq(hook_count(&h.fini), (N + 2) * REMAKES, "%s", ops->name);
		for (int i = 0; i < N; i++)
			ops->put(pool, objs[i]);
		ops->destroy(pool);
	}
}

/* Hooks that remember what they were called with. */
struct calls {
	void *last_reset;
	void *ctx_seen;
	long resets;
	void *finis[64];
	long nfini;
};

static void record_reset(void *obj, void *ctx)
{
	struct calls *k = ctx;
	k->last_reset = obj;
	k->ctx_seen = ctx;
	k->resets++;
}

static void record_fini(void *obj, void *ctx)
{
	struct calls *k = ctx;
	cr_assert_lt(k->nfini, 64);
	k->finis[k->nfini++] = obj;
}

FLAVOUR_TEST(hooks, reset_runs_on_every_put_with_the_object)
{
	struct calls k = { 0 };
	lfpool_config c = { .obj_size = 16, .prewarm = 4, .reset = record_reset, .hook_ctx = &k };
	void *pool = ops->create(&c);
	cr_assert_eq(k.resets, 0, "%s: reset ran at prewarm", ops->name);
	void *a = ops->get(pool), *b = ops->get(pool);
	cr_assert_eq(k.resets, 0, "%s: reset ran on get", ops->name);
	for (int round = 1; round <= 3; round++) {
		ops->put(pool, a);
		cr_assert_eq(k.last_reset, a);
		cr_assert_eq(k.ctx_seen, &k);
		ops->put(pool, b);
		cr_assert_eq(k.last_reset, b);
		cr_assert_eq(k.resets, 2 * round);
		a = ops->get(pool);
		b = ops->get(pool);
	}
	ops->put(pool, a);
	ops->put(pool, b);
	long before = k.resets;
	ops->trim(pool, 0);
	ops->destroy(pool);
	cr_assert_eq(k.resets, before, "%s: reset ran at trim or destroy", ops->name);
}

/* A reset hook may get from and put to its own pool (common.h): the put
 * that runs it stores its object where the pool is after the hook.  The
 * hook runs once, on the put of a: it gets one object and keeps it (mode
 * 0), or puts b (mode 1).  Every object then comes out of the pool once.
 * (Pool stored at the count it read before the hook: mode 0 retained 2
 * and handed the hook's object out again; mode 1 retained 2, b lost.) */
struct reenter {
	const struct flavour_ops *ops;
	void *pool, *kept, *other;
	int mode, armed;
};

static void reset_reenter(void *obj, void *ctx)
{
	struct reenter *r = ctx;
	(void)obj;
	if (!r->armed)
		return;
	r->armed = 0;
	if (r->mode == 0) {
		r->kept = r->ops->get(r->pool);
	} else {
		void *o = r->other;
		r->other = NULL;
		r->ops->put(r->pool, o);
	}
}

FLAVOUR_TEST(hooks, a_reset_hook_may_get_and_put_on_its_own_pool)
{
	for (int mode = 0; mode < 2; mode++) {
		struct reenter r = { .ops = ops, .mode = mode };
		lfpool_config c = { .obj_size = 32, .prewarm = 3, .reset = reset_reenter,
				    .hook_ctx = &r, .name = "reenter" };
		void *pool = r.pool = ops->create(&c);
		cr_assert_not_null(pool);
		void *a = ops->get(pool), *b = ops->get(pool);
		r.other = b;
		r.armed = 1;
		ops->put(pool, a);
		cr_assert_eq(r.armed, 0, "%s: the hook did not run", ops->name);
		lfpool_stats st;
		ops->stats(pool, &st);
		cr_assert_eq(st.retained, mode == 0 ? 1 : 3, "%s, mode %d: retained %llu", ops->name,
			     mode, (unsigned long long)st.retained);
		void *seen[3] = { 0 };
		for (uint64_t i = 0; i < st.retained; i++) {
			seen[i] = ops->get(pool);
			cr_assert_not_null(seen[i]);
			cr_assert_neq(seen[i], r.kept, "%s, mode %d: the hook's object handed out again",
				      ops->name, mode);
			for (uint64_t k = 0; k < i; k++)
				cr_assert_neq(seen[i], seen[k], "%s, mode %d: one object twice", ops->name, mode);
		}
		if (mode == 0) {
			cr_assert_eq(seen[0], a);
			ops->put(pool, r.kept);
			ops->put(pool, b);
		}
		for (uint64_t i = 0; i < st.retained; i++)
			ops->put(pool, seen[i]);
		ops->stats(pool, &st);
		cr_assert_eq(st.retained, 3, "%s, mode %d", ops->name, mode);
		cr_assert_eq(st.live, 0, "%s, mode %d", ops->name, mode);
		ops->destroy(pool);
	}
}

FLAVOUR_TEST(hooks, fini_runs_once_per_object_at_trim_and_destroy)
{
	struct calls k = { 0 };
	lfpool_config c = { .obj_size = 16, .fini = record_fini, .hook_ctx = &k };
	void *pool = ops->create(&c);
	void *objs[20];
	for (int i = 0; i < 20; i++)
		objs[i] = ops->get(pool);
	for (int i = 0; i < 20; i++)
		ops->put(pool, objs[i]);
	cr_assert_eq(ops->trim(pool, 12), 8);
	cr_assert_eq(k.nfini, 8, "%s: trim(12) of 20 ran fini %ld times", ops->name, k.nfini);
	ops->destroy(pool);
	cr_assert_eq(k.nfini, 20, "%s: fini ran %ld times for 20 objects", ops->name, k.nfini);
	for (int i = 0; i < 20; i++) {
		int seen = 0;
		for (int j = 0; j < 20; j++)
			seen += k.finis[j] == objs[i];
		cr_assert_eq(seen, 1, "%s: object %d finalized %d times", ops->name, i, seen);
	}
}

FLAVOUR_TEST(hooks, init_and_fini_balance)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 64, 64);
	c.prewarm = 30;
	void *pool = ops->create(&c);
	void *objs[50];
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 50; i++)
			objs[i] = ops->get(pool);
		for (int i = 0; i < 50; i++)
			ops->put(pool, objs[i]);
		ops->trim(pool, (size_t)round * 10);
	}
	cr_assert_gt(hook_count(&h.init), 50, "%s: trim must force re-creation", ops->name);
	ops->destroy(pool);
	cr_assert_eq(hook_count(&h.init), hook_count(&h.fini), "%s: %ld init, %ld fini",
		     ops->name, hook_count(&h.init), hook_count(&h.fini));
	cr_assert_eq(hook_count(&h.reset), 5 * 50);
}

FLAVOUR_TEST(capacity, is_never_exceeded)
{
	static const size_t caps[] = { 1, 2, 3, 8, 9, 100, 1000 };
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		size_t cap = caps[i];
		struct hooks h;
		lfpool_config c = hooked_config(&h, 24, 8);
		c.capacity = cap;
		c.prewarm = cap / 2;
		void *pool = ops->create(&c);
		void **objs = calloc(cap, sizeof(*objs));
		for (int round = 0; round < 3; round++) {
			for (size_t n = 0; n < cap; n++)
				cr_assert_not_null(objs[n] = ops->get(pool), "%s cap %zu: get %zu failed",
						   ops->name, cap, n);
			errno = 0;
			cr_assert_null(ops->get(pool), "%s: capacity %zu exceeded", ops->name, cap);
			cr_assert_eq(errno, ENOBUFS);
			lfpool_stats st;
			ops->stats(pool, &st);
			cr_assert_eq(st.created, cap);
			cr_assert_eq(st.live, cap);
			for (size_t n = 0; n < cap; n++)
				ops->put(pool, objs[n]);
			/* Trimmed objects give their capacity back. */
			ops->trim(pool, cap / 3);
		}
		cr_assert_leq(hook_count(&h.init) - hook_count(&h.fini), (long)cap);
		free(objs);
		ops->destroy(pool);
	}
}
