/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic.c - ThreadStatic on one thread (and a second one where
 * a test needs another cache): the hit path, magazine exchanges with the
 * depot, bulk calls, prewarm, capacity, trim's working set, hooks, the
 * debug checks and the configuration.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

Test(ts_hit, get_put_pairs_stay_in_the_magazine)
{
	lfpool_config c = ts_config(32, 8, 2);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	void *first = lfpool_ts_get(p);
	cr_assert_not_null(first);
	lfpool_ts_put(p, first);
	for (int i = 0; i < 100; i++) {
		void *o = lfpool_ts_get(p);
		cr_assert_eq(o, first, "round %d: the put object comes back first (LIFO)", i);
		lfpool_ts_put(p, o);
	}
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 101);
	cr_assert_eq(st.puts, 101);
	cr_assert_eq(st.misses, 1, "only the very first get missed");
	cr_assert_eq(st.hits, 100);
	cr_assert_eq(st.created, 1);
	cr_assert_eq(st.mag_exchanges, 0);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.retained, 1);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_hit, the_inline_cache_path_counts_too)
{
	lfpool_config c = ts_config(16, 4, 2);
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *k = lfpool_ts_cache_create(p);
	cr_assert_not_null(k);
	void *o[4];
	for (int i = 0; i < 4; i++)
		o[i] = lfpool_ts_cache_get(k);
	for (int i = 0; i < 4; i++)
		lfpool_ts_cache_put(k, o[i]);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(lfpool_ts_cache_get(k), o[3 - i]);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 8);
	cr_assert_eq(st.puts, 4);
	cr_assert_eq(st.created, 4);
	cr_assert_eq(st.live, 4);
	lfpool_ts_cache_put_bulk(k, o, 4);
	lfpool_ts_cache_destroy(k);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

struct getter {
	lfpool_ts *pool;
	size_t n;
	void *objs[64];
	int failed;
};

static void *get_n(void *arg)
{
	struct getter *g = arg;
	g->failed = lfpool_ts_get_bulk(g->pool, g->objs, g->n) != 0;
	lfpool_ts_put_bulk(g->pool, g->objs, g->n);
	return NULL;
}

static bool in_set(void *const *set, size_t n, const void *p)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == p)
			return true;
	return false;
}

/*
 * Hits count no put (lfpool/ts.h): stats derives puts from gets and what
 * each cache holds, and every step that moves objects in or out of a
 * cache other than a get or put (refills, magazines to the depot, flush,
 * drain, another cache stealing at capacity) keeps the figure exact.
 */
static void puts_stay_exact(unsigned flags)
{
	lfpool_config c = ts_config(16, 4, 1);
	c.capacity = 24;
	c.flags = flags;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *a = lfpool_ts_cache_create(p), *b = lfpool_ts_cache_create(p);
	cr_assert(p && a && b);
	void *o[24];
	uint64_t gets = 0, puts = 0;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 20; i++, gets++)
			cr_assert_not_null(o[i] = lfpool_ts_cache_get(a));
		for (int i = 0; i < 20; i++, puts++)
			lfpool_ts_cache_put(a, o[i]);	/* through the depot: depot_max 1 */
		lfpool_ts_cache_put(a, NULL);	/* no put */
		lfpool_stats st = stats_of(p);
		cr_assert_eq(st.gets, gets, "round %d", round);
		cr_assert_eq(st.puts, puts, "round %d", round);
		/* b takes all 24: what a holds, by stealing at capacity. */
		cr_assert_eq(lfpool_ts_cache_get_bulk(b, o, 24), 0, "round %d", round);
		gets += 24;
		cr_assert_eq(stats_of(p).puts, puts, "round %d: a thief is no put", round);
		lfpool_ts_cache_put_bulk(b, o, 12);
		for (int i = 12; i < 24; i++, puts++)
			lfpool_ts_cache_put(a, o[i]);
		puts += 12;
		cr_assert(lfpool_ts_drain(p) > 0);
		lfpool_ts_cache_flush(a);
		st = stats_of(p);
		cr_assert_eq(st.gets, gets, "round %d", round);
		cr_assert_eq(st.puts, puts, "round %d", round);
		cr_assert_eq(st.live, 0, "round %d", round);
	}
	lfpool_ts_cache_destroy(a);
	cr_assert_eq(stats_of(p).puts, puts, "a destroyed cache's counts are kept");
	lfpool_ts_cache_destroy(b);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_hit, puts_are_exact_though_hits_do_not_count_them)
{
	puts_stay_exact(0);
}

Test(ts_hit, puts_are_exact_in_debug_pools)
{
	puts_stay_exact(LFPOOL_F_DEBUG);
}

Test(ts_exchange, a_full_magazine_moves_through_the_depot)
{
	enum { M = 4 };
	lfpool_config c = ts_config(16, M, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[3 * M];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 3 * M), 0);
	/* loaded fills, swaps with the empty previous, fills again; the next
	 * put gives the full previous magazine to the depot. */
	for (int i = 0; i < 2 * M; i++)
		lfpool_ts_put(p, o[i]);
	cr_assert_eq(stats_of(p).mag_exchanges, 0);
	lfpool_ts_put(p, o[2 * M]);
	cr_assert_eq(stats_of(p).mag_exchanges, 1);
	for (int i = 2 * M + 1; i < 3 * M; i++)
		lfpool_ts_put(p, o[i]);

	/* Another thread's first get takes that magazine whole: the first M
	 * objects put here. */
	struct getter g = { .pool = p, .n = M };
	run_on_thread(get_n, &g);
	cr_assert_eq(g.failed, 0);
	for (int i = 0; i < M; i++)
		cr_assert(in_set(o, M, g.objs[i]), "object %d came from the depot's magazine", i);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.mag_exchanges, 2);
	cr_assert_eq(st.created, 3 * M, "nothing created for the other thread");
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_exchange, the_depot_keeps_at_most_depot_max_magazines)
{
	enum { M = 4, D = 2, K = 10 };
	lfpool_config c = ts_config(16, M, D);
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[K * M];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, K * M), 0);
	lfpool_ts_put_bulk(p, o, K * M);
	/* Two magazines stay here, D full ones go to the depot, and the rest
	 * go below it as loose objects. */
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.mag_exchanges, D);
	cr_assert_eq(st.created, K * M);
	cr_assert_eq(st.retained, K * M);
	/* All of them are still reachable from another thread's cache. */
	lfpool_ts_cache *k = lfpool_ts_cache_create(p);
	cr_assert_eq(lfpool_ts_cache_get_bulk(k, o, K * M - 2 * M), 0);
	cr_assert_eq(stats_of(p).created, K * M);
	cr_assert_eq(stats_of(p).mag_exchanges, 2 * D, "the depot's D full magazines went whole");
	lfpool_ts_cache_put_bulk(k, o, K * M - 2 * M);
	lfpool_ts_cache_destroy(k);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_bulk, get_bulk_and_put_bulk)
{
	lfpool_config c = ts_config(24, 16, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[300];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 300), 0);
	cr_assert(all_distinct(o, 300));
	for (int i = 0; i < 300; i++)
		cr_assert(lfpool_ts_owns(p, o[i]));
	/* NULL entries are skipped. */
	void *back[302];
	memcpy(back + 1, o, 150 * sizeof(void *));
	back[0] = NULL;
	back[151] = NULL;
	memcpy(back + 152, o + 150, 150 * sizeof(void *));
	lfpool_ts_put_bulk(p, back, 302);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 300);
	cr_assert_eq(st.puts, 300);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.created, 300);

	/* They all come back without creating anything. */
	void *again[300];
	cr_assert_eq(lfpool_ts_get_bulk(p, again, 300), 0);
	cr_assert(all_distinct(again, 300));
	cr_assert_eq(stats_of(p).created, 300);
	for (int i = 0; i < 300; i++)
		cr_assert(in_set(o, 300, again[i]));
	lfpool_ts_put_bulk(p, again, 300);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_bulk, get_bulk_is_all_or_none)
{
	lfpool_config c = ts_config(24, 8, 2);
	c.capacity = 50;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *keep[10];
	cr_assert_eq(lfpool_ts_get_bulk(p, keep, 10), 0);
	void *o[60];
	errno = 0;
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 41), -1);
	cr_assert_eq(errno, ENOBUFS);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.live, 10, "the failed bulk get holds nothing");
	cr_assert_eq(st.gets, 10);
	cr_assert_leq(st.created, 50);
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 40), 0, "the rest of the capacity is there");
	cr_assert(all_distinct(o, 40));
	lfpool_ts_put_bulk(p, o, 40);
	lfpool_ts_put_bulk(p, keep, 10);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_bulk, cache_bulk_with_reset_hook_and_debug)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 64, 16);
	c.magazine_size = 8;
	c.flags = LFPOOL_F_DEBUG;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *k = lfpool_ts_cache_create(p);
	void *o[50];
	cr_assert_eq(lfpool_ts_cache_get_bulk(k, o, 50), 0);
	cr_assert(all_distinct(o, 50));
	lfpool_ts_cache_put_bulk(k, o, 50);
	cr_assert_eq(hook_count(&h.reset), 50);
	cr_assert_eq(lfpool_ts_cache_get_bulk(k, o, 50), 0);
	cr_assert_eq(stats_of(p).created, 50, "the second round created nothing");
	lfpool_ts_cache_put_bulk(k, o, 50);
	lfpool_ts_cache_destroy(k);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
}

static void *get_all_prewarmed(void *arg)
{
	struct getter *g = arg;
	g->failed = lfpool_ts_get_bulk(g->pool, g->objs, g->n) != 0;
	if (!g->failed)
		g->failed = lfpool_ts_get(g->pool) != NULL ? 2 : 0;	/* one more: at capacity */
	lfpool_ts_put_bulk(g->pool, g->objs, g->n);
	return NULL;
}

Test(ts_prewarm, exact_count_reachable_from_another_thread)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 40, 8);
	c.magazine_size = 16;
	c.prewarm = 37;
	c.capacity = 37;
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 37);
	cr_assert_eq(st.retained, 37);
	cr_assert_eq(hook_count(&h.init), 37);
	/* At capacity, so another thread can only have them from the depot. */
	struct getter g = { .pool = p, .n = 37 };
	run_on_thread(get_all_prewarmed, &g);
	cr_assert_eq(g.failed, 0, "all 37 reachable, and not one more");
	cr_assert(all_distinct(g.objs, 37));
	lfpool_stats st2 = stats_of(p);
	cr_assert_eq(st2.created, 37);
	/* Taken 16 at a time (one CAS each): 3 misses, and the failed get. */
	cr_assert_eq(st2.misses, 4);
	/* Constructed and not finalized (--enable-debug makes pooled objects
	 * anew on get, so count both hooks). */
	cr_assert_eq(hook_count(&h.init) - hook_count(&h.fini), 37);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_prewarm, prewarm_call_adds_exactly_n)
{
	lfpool_config c = ts_config(8, 4, 2);
	c.capacity = 100;
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_eq(lfpool_ts_prewarm(p, 60), 0);
	cr_assert_eq(stats_of(p).created, 60);
	errno = 0;
	cr_assert_eq(lfpool_ts_prewarm(p, 41), -1);
	cr_assert_eq(errno, ENOBUFS);
	cr_assert_eq(stats_of(p).created, 60, "a failed prewarm creates nothing");
	cr_assert_eq(lfpool_ts_prewarm(p, 40), 0);
	cr_assert_eq(stats_of(p).created, 100);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_capacity, never_more_than_capacity_on_one_thread)
{
	lfpool_config c = ts_config(16, 8, 2);
	c.capacity = 100;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[100];
	for (int i = 0; i < 100; i++) {
		o[i] = lfpool_ts_get(p);
		cr_assert_not_null(o[i]);
	}
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOBUFS);
	for (int i = 0; i < 100; i++)
		lfpool_ts_put(p, o[i]);
	for (int i = 0; i < 100; i++)
		cr_assert_not_null(o[i] = lfpool_ts_get(p), "get %d after all came back", i);
	cr_assert_eq(stats_of(p).created, 100);
	lfpool_ts_put_bulk(p, o, 100);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

struct taker {
	lfpool_ts *pool;
	size_t n;
	int failed;
};

static void *take_from_depot(void *arg)
{
	struct taker *t = arg;
	void *o[8];
	t->failed = lfpool_ts_get_bulk(t->pool, o, t->n) != 0;
	lfpool_ts_put_bulk(t->pool, o, t->n);
	lfpool_ts_flush(t->pool);
	return NULL;
}

Test(ts_trim, keeps_the_working_set_and_drops_the_rest)
{
	enum { M = 4, D = 2 };
	lfpool_config c = ts_config(16, M, D);
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[4 * M];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 4 * M), 0);
	/* 16 puts: two magazines here, two full ones in the depot. */
	lfpool_ts_put_bulk(p, o, 4 * M);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.mag_exchanges, 2);
	cr_assert_eq(st.created, 16);

	/* Another thread takes one full magazine: it is the working set. */
	struct taker t = { .pool = p, .n = M };
	run_on_thread(take_from_depot, &t);
	cr_assert_eq(t.failed, 0);
	/* That thread flushed its M objects to the loose stack: trim takes
	 * those, and keeps the one full magazine left (one was taken). */
	cr_assert_eq(lfpool_ts_trim(p, 0), M);
	cr_assert_eq(stats_of(p).created, 3 * M);
	/* Nothing taken since: the full magazine goes too. */
	cr_assert_eq(lfpool_ts_trim(p, 0), M);
	cr_assert_eq(lfpool_ts_trim(p, 0), 0);
	st = stats_of(p);
	cr_assert_eq(st.created, 2 * M, "this thread's two magazines stay");
	cr_assert_eq(st.trims, 2);
	/* and serve 2M gets without a miss. */
	uint64_t misses = st.misses;
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 2 * M), 0);
	cr_assert_eq(stats_of(p).misses, misses);
	lfpool_ts_put_bulk(p, o, 2 * M);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* lfpool/ts.h: trim leaves min(keep, D) of the depot's D objects;
 * keep 0 leaves only the working set (none here), keep >= D destroys
 * nothing. */
Test(ts_trim, keep_leaves_min_of_keep_and_the_depot)
{
	enum { M = 16, D = 100 };
	lfpool_config c = ts_config(32, M, 8);
	c.prewarm = D;	/* into the depot; no cache takes a magazine */
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_eq(lfpool_ts_trim(p, 1000), 0, "keep above the depot's objects");
	cr_assert_eq(lfpool_ts_trim(p, D), 0, "keep == the depot's objects");
	cr_assert_eq(lfpool_ts_trim(p, 37), D - 37, "keep not a multiple of the magazine");
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 37);
	cr_assert_eq(st.retained, 37);
	cr_assert_eq(st.trims, 1, "trims that destroyed nothing count none");
	cr_assert_eq(lfpool_ts_trim(p, 37), 0);
	cr_assert_eq(lfpool_ts_trim(p, 0), 37);
	cr_assert_eq(stats_of(p).created, 0);
	cr_assert_eq(lfpool_ts_trim(p, 0), 0, "trim of an empty depot");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

struct holder {
	lfpool_ts *pool;
	void **objs;
	size_t n;
};

/* n gets one at a time, on a thread of its own, held past its exit. */
static void *get_and_hold(void *arg)
{
	struct holder *h = arg;
	for (size_t i = 0; i < h->n; i++)
		h->objs[i] = lfpool_ts_get(h->pool);
	return NULL;
}

/* lfpool/ts.h: with no get or put meanwhile the depot keeps
 * max(min(keep, D), min(W, F) * magazine_size) objects. */
Test(ts_trim, keep_below_the_working_set_keeps_the_working_set)
{
	enum { M = 8 };
	lfpool_config c = ts_config(32, M, 8);
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[8 * M], *held[2 * M];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 8 * M), 0);
	/* Two magazines stay here, six full ones go to the depot. */
	lfpool_ts_put_bulk(p, o, 8 * M);
	cr_assert_eq(stats_of(p).mag_exchanges, 6);
	cr_assert_eq(lfpool_ts_trim(p, SIZE_MAX), 0, "keeps all; the working set starts anew");

	/* Another thread takes two full magazines: W = 2, F = 4, D = 4M. */
	struct holder h = { .pool = p, .objs = held, .n = 2 * M };
	run_on_thread(get_and_hold, &h);
	cr_assert_eq(stats_of(p).mag_exchanges, 6 + 2);
	cr_assert_eq(lfpool_ts_trim(p, 3), 2 * M, "keep 3 < W * M: the working set's 2M stay");
	cr_assert_eq(stats_of(p).created, 8 * M - 2 * M);
	/* No magazine taken since: W = 0. */
	cr_assert_eq(lfpool_ts_trim(p, 3 * M), 0, "keep above the depot's 2M");
	cr_assert_eq(lfpool_ts_trim(p, M + 4), M - 4, "one magazine and 4 loose objects stay");
	cr_assert_eq(lfpool_ts_trim(p, 0), M + 4);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 4 * M, "2M held, 2M in this thread's magazines");
	cr_assert_eq(st.live, 2 * M);
	for (size_t i = 0; i < 2 * M; i++)
		lfpool_ts_put(p, held[i]);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_trim, gives_slabs_back_to_the_allocator)
{
	struct test_alloc a;
	test_alloc_init(&a);
	lfpool_config c = ts_config(256, 16, 4);
	c.allocator = &a.a;
	lfpool_ts *p = lfpool_ts_create(&c);
	enum { N = 4000 };
	static void *o[N];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, N), 0);
	lfpool_ts_put_bulk(p, o, N);
	lfpool_ts_flush(p);
	size_t before = a.live_bytes;
	cr_assert_eq(lfpool_ts_trim(p, 0), N);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 0);
	cr_assert_gt(st.slab_frees, 0);
	cr_assert_lt(a.live_bytes, before / 10, "%zu bytes left of %zu", a.live_bytes, before);
	cr_assert_eq(st.bytes_held, a.live_bytes, "bytes_held is what the allocator has out");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(a.live, 0);
	cr_assert_eq(a.bad_frees, 0);
	test_alloc_fini(&a);
}

Test(ts_hooks, init_reset_fini_counts)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 48, 16);
	c.magazine_size = 8;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o[20];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 20), 0);
	cr_assert_eq(hook_count(&h.init), 20);
	unsigned char *b = o[3];
	cr_assert_eq(b[0], HOOK_INIT_BYTE);
	for (int i = 0; i < 20; i++)
		lfpool_ts_put(p, o[i]);
	cr_assert_eq(hook_count(&h.reset), 20);
	cr_assert_eq(hook_count(&h.fini), 0);
	lfpool_ts_flush(p);
	cr_assert_eq(lfpool_ts_trim(p, 0), 20);
	cr_assert_eq(hook_count(&h.fini), 20);
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 5), 0);
	lfpool_ts_put_bulk(p, o, 5);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.init), 25);
	cr_assert_eq(hook_count(&h.fini), 25);
}

Test(ts_debug, double_put_and_foreign_pointer_are_reported)
{
	struct error_log log;
	record_errors(&log);
	lfpool_config c = ts_config(32, 4, 2);
	c.flags = LFPOOL_F_DEBUG;
	c.name = "dbg";
	lfpool_ts *p = lfpool_ts_create(&c);
	void *o = lfpool_ts_get(p);
	lfpool_ts_put(p, o);
	lfpool_ts_put(p, o);
	cr_assert_eq(log.calls, 1);
	cr_assert_str_eq(log.pool, "dbg");
	cr_assert(strstr(log.problem, "double put"), "%s", log.problem);
	long foreign[8];
	lfpool_ts_put(p, foreign);
	cr_assert_eq(log.calls, 2);
	cr_assert(strstr(log.problem, "not from this pool"), "%s", log.problem);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.puts, 1, "rejected puts are not counted");
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_get(p), o);
	lfpool_ts_put(p, o);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	lfpool_ts_put(p, o);
	cr_assert_eq(log.calls, 3);
	cr_assert(strstr(log.problem, "after destroy"), "%s", log.problem);
	lfpool_set_error_hook(NULL, NULL);
}

/* create(c) fails with EINVAL, in both modes (errno cleared first). */
static void ts_expect_einval(lfpool_config c, const char *what)
{
	for (int percpu = 0; percpu < 2; percpu++) {
		c.flags = percpu ? LFPOOL_F_PERCPU : 0;
		errno = 0;
		lfpool_ts *p = lfpool_ts_create(&c);
		cr_assert_null(p, "%s (per-CPU %d) was accepted", what, percpu);
		cr_assert_eq(errno, EINVAL, "%s (per-CPU %d): errno %d", what, percpu, errno);
	}
}

Test(ts_config, bad_configurations)
{
	ts_expect_einval(ts_config(16, LFPOOL_TS_MAGAZINE_SIZE_MAX + 1, 0), "magazine_size above its max");
	ts_expect_einval(ts_config(16, 0, LFPOOL_TS_DEPOT_MAX_MAX + 1), "depot_max above its max");
	ts_expect_einval(ts_config(0, 0, 0), "obj_size 0");
	/* lfpool/common.h's bound on obj_size. */
	ts_expect_einval(ts_config(((size_t)256 << 20) - 16 + 1, 0, 0),
			 "an object above 256 MiB - align, unbounded");
	lfpool_config c = ts_config(((size_t)512 << 20) + 1, 0, 0);
	c.capacity = 1;
	ts_expect_einval(c, "an object above 512 MiB");
	c = ts_config(16, 0, 0);
	c.align = 24;
	ts_expect_einval(c, "an alignment that is not a power of two");
	c = ts_config(16, 0, 0);
	c.capacity = 4;
	c.prewarm = 5;
	ts_expect_einval(c, "prewarm > capacity");
	c = ts_config(16, 0, 0);
	c.capacity = SIZE_MAX;
	ts_expect_einval(c, "a capacity beyond the index space");
	errno = 0;
	cr_assert_null(lfpool_ts_create(NULL));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(lfpool_ts_destroy(NULL), 0);
}

/* The largest values the headers accept (lfpool/ts.h, lfpool/common.h), in
 * both modes: created, used once, destroyed. */
Test(ts_config, the_largest_values_are_accepted)
{
	lfpool_config cs[4];
	cs[0] = ts_config(16, LFPOOL_TS_MAGAZINE_SIZE_MAX, 0);
	cs[1] = ts_config(16, 0, LFPOOL_TS_DEPOT_MAX_MAX);
	cs[2] = ts_config(((size_t)256 << 20) - 16, 0, 0);
	cs[3] = ts_config((size_t)512 << 20, 0, 0);
	cs[3].capacity = 1;
	for (int i = 0; i < 4; i++) {
		for (int percpu = 0; percpu < 2; percpu++) {
			cs[i].flags = percpu ? LFPOOL_F_PERCPU : 0;
			lfpool_ts *p = lfpool_ts_create(&cs[i]);
			cr_assert_not_null(p, "config %d (per-CPU %d): errno %d", i, percpu, errno);
			if (i < 2) {	/* the big objects are not made: 256 MiB and more */
				void *o = lfpool_ts_get(p);
				cr_assert_not_null(o, "config %d (per-CPU %d)", i, percpu);
				lfpool_ts_put(p, o);
			}
			cr_assert_eq(lfpool_ts_destroy(p), 0);
		}
	}
}

Test(ts_config, defaults_and_null_puts)
{
	lfpool_config c = ts_config(16, 0, 0);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	lfpool_ts_put(p, NULL);
	void *none[2] = { NULL, NULL };
	lfpool_ts_put_bulk(p, none, 2);
	cr_assert_eq(stats_of(p).puts, 0);
	/* LFPOOL_TS_MAGAZINE_SIZE objects go out and back without a miss. */
	void *o[LFPOOL_TS_MAGAZINE_SIZE];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, LFPOOL_TS_MAGAZINE_SIZE), 0);
	lfpool_ts_put_bulk(p, o, LFPOOL_TS_MAGAZINE_SIZE);
	uint64_t misses = stats_of(p).misses;
	cr_assert_eq(lfpool_ts_get_bulk(p, o, LFPOOL_TS_MAGAZINE_SIZE), 0);
	cr_assert_eq(stats_of(p).misses, misses);
	lfpool_ts_put_bulk(p, o, LFPOOL_TS_MAGAZINE_SIZE);
	cr_assert_eq(lfpool_ts_max_bytes(p, 4), SIZE_MAX, "no capacity, no bound");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Enough caches that the pool's magazines need a third slab: their core is
 * sized by a hint and unbounded, so its slab directory's leaf 0 moves out
 * of the inline slots (lib/slab.c, prepare_leaf) while the magazines of
 * the first two slabs are in use (an audit counted 15 caches with
 * these sizes).  Every magazine must stay reachable through the moved leaf
 * and its inline copy: every object comes back, and destroy finds them. */
Test(ts_exchange, magazines_beyond_the_inline_directory_stay_reachable)
{
	enum { CACHES = 24, N = 129 };
	lfpool_config c = { .obj_size = 32 };
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	lfpool_ts_cache *k[CACHES];
	static void *o[N];
	for (int i = 0; i < CACHES; i++) {
		k[i] = lfpool_ts_cache_create(p);
		cr_assert_not_null(k[i]);
		for (int j = 0; j < N; j++)
			cr_assert_not_null(o[j] = lfpool_ts_cache_get(k[i]));
		for (int j = 0; j < N; j++)
			lfpool_ts_cache_put(k[i], o[j]);
	}
	/* Magazines go back and forth through the depot between caches. */
	for (int i = 0; i < CACHES; i++) {
		for (int j = 0; j < N; j++)
			cr_assert_not_null(o[j] = lfpool_ts_cache_get(k[i]));
		for (int j = 0; j < N; j++)
			lfpool_ts_cache_put(k[(i + 1) % CACHES], o[j]);
	}
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.live, 0);
	for (int i = 0; i < CACHES; i++)
		lfpool_ts_cache_destroy(k[i]);
	lfpool_ts_drain(p);
	size_t trimmed = lfpool_ts_trim(p, 0);
	lfpool_stats after = stats_of(p);
	cr_assert_eq(after.live, 0);
	cr_assert_eq(trimmed + after.created, st.created, "trimmed %zu, %llu left of %llu",
		     trimmed, (unsigned long long)after.created, (unsigned long long)st.created);
	cr_assert_eq(after.retained, after.created, "every object left is pooled");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Every call that makes a cache takes its two magazines from the backing
 * allocator (the pool's first ones: no magazine slab yet).  When it fails,
 * lfpool_ts_attach is -1 (lfpool/ts.h: "0, or -1 + ENOMEM"),
 * lfpool_ts_cache_create and lfpool_ts_worker_cache NULL, and the thread's
 * get and bulk get too, each with errno ENOMEM; nothing is kept (no block,
 * no object, no explicit cache that would make destroy fail with EBUSY),
 * and each works once the allocator does. */
Test(ts_config, a_cache_without_magazines_is_enomem)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, 32, 16);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	long live = test_alloc_live(&t);
	test_alloc_fail_after(&t, 0);
	errno = 0;
	cr_assert_eq(lfpool_ts_attach(p), -1);
	cr_assert_eq(errno, ENOMEM, "attach: errno %d", errno);
	errno = 0;
	cr_assert_null(lfpool_ts_cache_create(p));
	cr_assert_eq(errno, ENOMEM, "cache_create: errno %d", errno);
	errno = 0;
	cr_assert_null(lfpool_ts_worker_cache(p, 1));
	cr_assert_eq(errno, ENOMEM, "worker_cache: errno %d", errno);
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOMEM, "get: errno %d", errno);
	void *o[2];
	errno = 0;
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 2), -1);
	cr_assert_eq(errno, ENOMEM, "get_bulk: errno %d", errno);
	cr_assert_eq(test_alloc_live(&t), live, "nothing kept");
	cr_assert_eq(stats_of(p).created, 0);
	test_alloc_fail_after(&t, -1);
	cr_assert_eq(lfpool_ts_attach(p), 0);
	lfpool_ts_cache *k = lfpool_ts_cache_create(p), *w = lfpool_ts_worker_cache(p, 1);
	cr_assert(k && w);
	void *x = lfpool_ts_get(p);
	cr_assert_not_null(x);
	lfpool_ts_cache_put(k, x);
	cr_assert_eq(lfpool_ts_cache_get_bulk(w, o, 2), 0);
	lfpool_ts_put_bulk(p, o, 2);
	lfpool_ts_cache_destroy(k);
	cr_assert_eq(lfpool_ts_destroy(p), 0, "no explicit cache left: errno %d", errno);
	cr_assert_eq(hook_count(&h.init), hook_count(&h.fini));
	test_alloc_finish(&t);
}
