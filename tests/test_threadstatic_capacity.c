/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_capacity.c - the exact capacity of ThreadStatic pools
 * (lfpool/ts.h, "Sizing a bounded pool"): steal before ENOBUFS, adaptive
 * refills, lfpool_ts_drain.  The threaded matrix (T up to 64, 1,000 rounds,
 * per-CPU, TSan) is stress/capacity.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "lfpool.h"
#include "support.h"

/* The first failing case, on one thread: four caches take 32 each, one at a
 * time and interleaved, from a pool of exactly 128 prewarmed objects.  A
 * refill at capacity takes only what its get needs, and whatever a cache
 * took too much is stolen back. */
Test(ts_capacity, four_caches_share_an_exact_capacity)
{
	lfpool_config c = ts_config(32, 64, 8);
	c.capacity = 128;
	c.prewarm = 128;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *k[4];
	void *objs[128];
	for (int i = 0; i < 4; i++)
		cr_assert_not_null(k[i] = lfpool_ts_cache_create(p));
	for (int round = 0; round < 3; round++) {
		for (int n = 0; n < 32; n++)
			for (int i = 0; i < 4; i++)
				cr_assert_not_null(objs[i * 32 + n] = lfpool_ts_cache_get(k[i]),
						   "round %d: get %d of cache %d", round, n, i);
		cr_assert(all_distinct(objs, 128));
		cr_assert_eq(stats_of(p).created, 128);
		errno = 0;
		cr_assert_null(lfpool_ts_cache_get(k[0]), "all 128 are out");
		cr_assert_eq(errno, ENOBUFS);
		/* Back in a skewed way: cache 3 gets everything. */
		lfpool_ts_cache_put_bulk(k[round == 1 ? 3 : 0], objs, 128);
	}
	for (int i = 0; i < 4; i++)
		lfpool_ts_cache_destroy(k[i]);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Refills from loose objects start at 4 and double while the cache keeps
 * missing: 4 + 8 + 16 + 32 + 64 = 124 objects in 5 misses (a whole
 * magazine each time would be 2, one object each 124); drain makes them
 * start small again. */
Test(ts_capacity, refills_start_small_and_grow)
{
	lfpool_config c = ts_config(32, 64, 8);
	c.prewarm = 256;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *k = lfpool_ts_cache_create(p);
	void *objs[124];
	for (int i = 0; i < 124; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_cache_get(k));
	cr_assert_eq(stats_of(p).misses, 5);
	cr_assert_eq(stats_of(p).created, 256, "none made: all came from the depot");
	lfpool_ts_cache_put_bulk(k, objs, 124);
	lfpool_ts_cache_flush(k);
	cr_assert_eq(lfpool_ts_drain(p), 0, "the flush left nothing to drain");
	for (int i = 0; i < 12; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_cache_get(k));
	cr_assert_eq(stats_of(p).misses, 7, "after the drain: 4, then 8");
	lfpool_ts_cache_put_bulk(k, objs, 12);
	lfpool_ts_cache_destroy(k);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

struct holder {
	lfpool_ts *pool;
	unsigned n;
	pthread_barrier_t *held, *done;
	bool ok;
};

/* Get n and put them back (they stay in this thread's cache), then stay
 * alive until the test is done with them. */
static void *hold_and_wait(void *arg)
{
	struct holder *h = arg;
	void *o[16];
	h->ok = true;
	for (unsigned i = 0; i < h->n; i++)
		h->ok &= (o[i] = lfpool_ts_get(h->pool)) != NULL;
	for (unsigned i = 0; i < h->n; i++)
		lfpool_ts_put(h->pool, o[i]);
	pthread_barrier_wait(h->held);
	pthread_barrier_wait(h->done);
	return NULL;
}

/* Objects in a live thread's implicit cache, an explicit cache and a
 * worker slot: a get at capacity takes them (no new object), drain moves
 * them all to the depot from a third thread, and trim gives them back. */
Test(ts_capacity, steal_and_drain_reach_every_cache)
{
	lfpool_config c = ts_config(32, 8, 2);
	c.capacity = 30;
	lfpool_ts *p = lfpool_ts_create(&c);
	pthread_barrier_t held, done;
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	struct holder h = { .pool = p, .n = 10, .held = &held, .done = &done };
	pthread_t th;
	pthread_create(&th, NULL, hold_and_wait, &h);
	pthread_barrier_wait(&held);
	cr_assert(h.ok);

	lfpool_ts_cache *k = lfpool_ts_cache_create(p), *w = lfpool_ts_worker_cache(p, 5);
	void *objs[30];
	cr_assert_eq(lfpool_ts_cache_get_bulk(k, objs, 10), 0);
	lfpool_ts_cache_put_bulk(k, objs, 10);
	cr_assert_eq(lfpool_ts_cache_get_bulk(w, objs, 10), 0);
	lfpool_ts_cache_put_bulk(w, objs, 10);
	cr_assert_eq(stats_of(p).created, 30);

	/* This thread's cache has none: every get steals. */
	for (int i = 0; i < 30; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_get(p), "get %d", i);
	cr_assert(all_distinct(objs, 30));
	cr_assert_eq(stats_of(p).created, 30, "all 30 stolen, none made");
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOBUFS, "every object is out");

	/* Back into the three caches, then drained from this thread. */
	lfpool_ts_cache_put_bulk(k, objs, 10);
	lfpool_ts_cache_put_bulk(w, objs + 10, 10);
	lfpool_ts_put_bulk(p, objs + 20, 10);
	cr_assert_eq(lfpool_ts_drain(p), 30);
	cr_assert_eq(lfpool_ts_trim(p, 0), 30, "all in the depot, no working set");
	cr_assert_eq(stats_of(p).created, 0);

	pthread_barrier_wait(&done);
	pthread_join(th, NULL);
	lfpool_ts_cache_destroy(k);
	pthread_barrier_destroy(&held);
	pthread_barrier_destroy(&done);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Debug pools keep the loaded magazine under the cache's lock (every call
 * is checked): thieves take it there, and the checks still see each object
 * change hands once. */
Test(ts_capacity, debug_pools_steal_too)
{
	lfpool_config c = ts_config(32, 8, 2);
	c.capacity = 12;
	c.flags = LFPOOL_F_DEBUG;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *a = lfpool_ts_cache_create(p), *b = lfpool_ts_cache_create(p);
	void *objs[12];
	cr_assert_eq(lfpool_ts_cache_get_bulk(a, objs, 12), 0);
	lfpool_ts_cache_put_bulk(a, objs, 12);
	for (int i = 0; i < 12; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_cache_get(b));
	cr_assert(all_distinct(objs, 12));
	cr_assert_eq(stats_of(p).created, 12);
	lfpool_ts_cache_put_bulk(b, objs, 12);
	lfpool_ts_cache_destroy(a);
	lfpool_ts_cache_destroy(b);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Memory comes back: after a burst of 100,000 objects, put back, a drain
 * and two trims (the second finds no working set), the pool holds no
 * object and at most 64 KiB of its backing allocator (the slab directory,
 * magazines): the side data of the slabs given back is freed after a
 * grace period.  Before, 5 bytes per object stayed until destroy. */
Test(ts_capacity, trim_gives_side_data_back)
{
	struct peak_alloc pa;
	peak_alloc_init(&pa);
	lfpool_config c = ts_config(64, 64, 8);
	c.allocator = &pa.a;
	lfpool_ts *p = lfpool_ts_create(&c);
	enum { N = 100000 };
	void **objs = malloc(N * sizeof(void *));
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, N), 0);
	cr_assert_gt(peak_alloc_live(&pa), (size_t)N * 64);
	lfpool_ts_put_bulk(p, objs, N);
	lfpool_ts_drain(p);
	lfpool_ts_trim(p, 0);
	lfpool_ts_trim(p, 0);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 0);
	cr_assert_leq(st.bytes_held, 64 * 1024, "held %llu bytes after trim",
		      (unsigned long long)st.bytes_held);
	cr_assert_leq(peak_alloc_live(&pa), 64 * 1024, "the allocator has %zu bytes out",
		      peak_alloc_live(&pa));
	/* The pool works on: side data is made anew with the slabs. */
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 1000), 0);
	cr_assert(all_distinct(objs, 1000));
	lfpool_ts_put_bulk(p, objs, 1000);
	free(objs);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	peak_alloc_fini(&pa);
}

/* ---- trims whose fini hooks block or call pools ---- */

/* A pool of capacity 2 with fini on ctx: one object out in *held, the
 * other in the depot, for a trim to destroy. */
static lfpool_ts *one_out_one_loose(lfpool_hook_fn fini, void *ctx, void **held)
{
	lfpool_config c = ts_config(64, 8, 4);
	c.capacity = 2;
	c.fini = fini;
	c.hook_ctx = ctx;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *objs[2];
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 2), 0);
	lfpool_ts_put(p, objs[1]);
	cr_assert_eq(lfpool_ts_drain(p), 1);
	*held = objs[0];
	return p;
}

static void *trim_all(void *pool)
{
	return (void *)lfpool_ts_trim(pool, 0);
}

/* A trim runs the fini hooks holding no lock: while one blocks, a get at
 * capacity fails with ENOBUFS at once (the object being finalized is
 * neither pooled nor uncounted yet), and drain and trim go on.  Before,
 * the trim held the pool's steal_lock across the hook and they waited. */
Test(ts_capacity, a_get_at_capacity_fails_at_once_while_a_trims_fini_hook_blocks)
{
	TEST_DEADLINE(20);
	struct parked_hook h;
	parked_hook_init(&h);
	void *held;
	lfpool_ts *p = one_out_one_loose(parked_hook, &h, &held);
	parked_hook_arm(&h);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, trim_all, p), 0);
	parked_hook_wait(&h);
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOBUFS);
	cr_assert_eq(lfpool_ts_drain(p), 0);
	cr_assert_eq(lfpool_ts_trim(p, 0), 0);
	parked_hook_release(&h);
	void *trimmed;
	cr_assert_eq(pthread_join(t, &trimmed), 0);
	cr_assert_eq((size_t)trimmed, 1);
	lfpool_ts_put(p, held);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	parked_hook_fini(&h);
	TEST_DEADLINE(0);
}

/* Two pools whose fini hooks get from each other, each at capacity while
 * the other's trim finalizes its loose object: both gets fail with ENOBUFS.
 * Before, each trim held its pool's steal_lock across its hook, and each
 * hook's get waited for the other's: a lock-order cycle. */
struct crossed_fini {
	lfpool_ts *pool[2];
	pthread_barrier_t both_in_hooks;
	bool armed[2];
	void *got[2];
	int err[2];
};

static void crossed_fini(void *obj, void *ctx, int me)
{
	(void)obj;
	struct crossed_fini *x = ctx;
	if (!x->armed[me])
		return;
	x->armed[me] = false;
	pthread_barrier_wait(&x->both_in_hooks);
	errno = 0;
	x->got[me] = lfpool_ts_get(x->pool[!me]);
	x->err[me] = errno;
	/* Neither trim ends (and makes room) before both gets did. */
	pthread_barrier_wait(&x->both_in_hooks);
}

static void crossed_fini0(void *obj, void *ctx) { crossed_fini(obj, ctx, 0); }
static void crossed_fini1(void *obj, void *ctx) { crossed_fini(obj, ctx, 1); }

Test(ts_capacity, trims_whose_fini_hooks_get_from_each_others_pools_end)
{
	TEST_DEADLINE(20);
	struct crossed_fini x = { .armed = { true, true } };
	pthread_barrier_init(&x.both_in_hooks, NULL, 2);
	lfpool_hook_fn fini[2] = { crossed_fini0, crossed_fini1 };
	void *held[2], *trimmed[2];
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		x.pool[i] = one_out_one_loose(fini[i], &x, &held[i]);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, trim_all, x.pool[i]), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(pthread_join(t[i], &trimmed[i]), 0);
		cr_assert_eq((size_t)trimmed[i], 1);
		cr_assert_null(x.got[i], "pool %d: one out, one being finalized", !i);
		cr_assert_eq(x.err[i], ENOBUFS);
	}
	for (int i = 0; i < 2; i++) {
		lfpool_ts_put(x.pool[i], held[i]);
		cr_assert_eq(lfpool_ts_destroy(x.pool[i]), 0);
	}
	pthread_barrier_destroy(&x.both_in_hooks);
	TEST_DEADLINE(0);
}
