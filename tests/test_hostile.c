/* SPDX-License-Identifier: MIT */
/*
 * test_hostile.c - hostile input and faults on every flavour (Pool,
 * Concurrent, ThreadStatic per thread and per CPU): sizes that would wrap,
 * prewarms that fail half-way, allocators that misalign, hooks that call
 * their own pool, and debug pools used after destroy.  Each case gets a
 * clear error with nothing changed and nothing held, or works.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "support.h"

#define OBJ 64

/* ---- every flavour behind one set of calls ------------------------------- */

enum kind { K_POOL, K_CONCURRENT, K_TS, K_PERCPU, K_COUNT };
#define LEAF_BYTES ((size_t)32768)	/* a slab directory leaf (lib/slab.h) */

static const char *const kind_name[K_COUNT] = { "pool", "concurrent", "ts", "ts-percpu" };

static void *create(enum kind k, lfpool_config c)
{
	switch (k) {
	case K_POOL:
		return lfpool_pool_create(&c);
	case K_CONCURRENT:
		return lfpool_concurrent_create(&c);
	case K_PERCPU:
		c.flags |= LFPOOL_F_PERCPU;
		/* fall through */
	default:
		return lfpool_ts_create(&c);
	}
}

static void destroy(enum kind k, void *p)
{
	if (k == K_POOL)
		lfpool_pool_destroy(p);
	else if (k == K_CONCURRENT)
		lfpool_concurrent_destroy(p);
	else
		cr_assert_eq(lfpool_ts_destroy(p), 0);
}

static void *get(enum kind k, void *p)
{
	return k == K_POOL ? lfpool_pool_get(p) : k == K_CONCURRENT ? lfpool_concurrent_get(p)
								    : lfpool_ts_get(p);
}

static void put(enum kind k, void *p, void *obj)
{
	if (k == K_POOL)
		lfpool_pool_put(p, obj);
	else if (k == K_CONCURRENT)
		lfpool_concurrent_put(p, obj);
	else
		lfpool_ts_put(p, obj);
}

static int prewarm(enum kind k, void *p, size_t n)
{
	return k == K_POOL ? lfpool_pool_prewarm(p, n)
	     : k == K_CONCURRENT ? lfpool_concurrent_prewarm(p, n) : lfpool_ts_prewarm(p, n);
}

static size_t trim(enum kind k, void *p)
{
	return k == K_POOL ? lfpool_pool_trim(p, 0)
	     : k == K_CONCURRENT ? lfpool_concurrent_trim(p, 0) : lfpool_ts_trim(p, 0);
}

static int owns(enum kind k, void *p, const void *obj)
{
	return k == K_POOL ? lfpool_pool_owns(p, obj)
	     : k == K_CONCURRENT ? lfpool_concurrent_owns(p, obj) : lfpool_ts_owns(p, obj);
}

static lfpool_stats stats(enum kind k, void *p)
{
	lfpool_stats st;
	if (k == K_POOL)
		lfpool_pool_stats(p, &st);
	else if (k == K_CONCURRENT)
		lfpool_concurrent_stats(p, &st);
	else
		lfpool_ts_stats(p, &st);
	return st;
}

#define EVERY_KIND(suite, name, ...) \
	ParameterizedTestParameters(suite, name) \
	{ \
		static enum kind ks[] = { K_POOL, K_CONCURRENT, K_TS, K_PERCPU }; \
		return cr_make_param_array(enum kind, ks, K_COUNT); \
	} \
	static void suite##_##name##_body(enum kind k, const char *kn); \
	ParameterizedTest(enum kind *k, suite, name, ##__VA_ARGS__) \
	{ \
		suite##_##name##_body(*k, kind_name[*k]); \
	} \
	static void suite##_##name##_body(enum kind k, const char *kn)

static long allocs_of(struct test_alloc *t)
{
	pthread_mutex_lock(&t->lock);
	long n = t->allocs + t->failed;
	pthread_mutex_unlock(&t->lock);
	return n;
}

static size_t bytes_of(struct test_alloc *t)
{
	pthread_mutex_lock(&t->lock);
	size_t n = t->live_bytes;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* ---- sizes: counts never wrap -------------------------------------------- */

/* prewarm(SIZE_MAX) with capacity 10 and one object out: ENOBUFS at once,
 * nothing allocated, and the capacity still holds afterwards.  Today's
 * code wraps created + n, allocates for seconds and lets a get exceed the
 * capacity: the timeout fails it. */
EVERY_KIND(sizes, prewarm_size_max_on_a_bounded_pool_changes_nothing, .timeout = 20)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 16);
	c.capacity = 10;
	void *p = create(k, c);
	cr_assert_not_null(p, "%s", kn);
	void *objs[16];
	objs[0] = get(k, p);
	cr_assert_not_null(objs[0]);
	long allocs = allocs_of(&t);
	lfpool_stats was = stats(k, p);
	errno = 0;
	cr_assert_eq(prewarm(k, p, SIZE_MAX), -1, "%s", kn);
	cr_assert_eq(errno, ENOBUFS, "%s: errno %d", kn, errno);
	cr_assert_eq(prewarm(k, p, SIZE_MAX - 5), -1, "%s", kn);
	cr_assert_eq(allocs_of(&t), allocs, "%s: a refused prewarm allocated", kn);
	lfpool_stats now = stats(k, p);
	cr_assert_eq(now.created, was.created, "%s: created %llu -> %llu", kn,
		     (unsigned long long)was.created, (unsigned long long)now.created);
	size_t n = 1;
	while (n < 16 && (objs[n] = get(k, p)) != NULL)
		n++;
	cr_assert_eq(n, 10, "%s: %zu objects alive with capacity 10", kn, n);
	cr_assert_eq(errno, ENOBUFS);
	while (n)
		put(k, p, objs[--n]);
	destroy(k, p);
	test_alloc_finish(&t);
}

/* On an unbounded pool a prewarm larger than the pool can ever hold fails
 * at once with ENOMEM, allocating nothing (today: half a minute, 337 MB
 * held afterwards). */
EVERY_KIND(sizes, prewarm_size_max_on_an_unbounded_pool_allocates_nothing, .timeout = 20)
{
	struct test_alloc t;
	struct hooks h;
	lfpool_config c = counted_config(&t, &h, OBJ, 16);
	void *p = create(k, c);
	cr_assert_not_null(p, "%s", kn);
	long allocs = allocs_of(&t);
	size_t bytes = bytes_of(&t);
	errno = 0;
	cr_assert_eq(prewarm(k, p, SIZE_MAX), -1, "%s", kn);
	cr_assert_eq(errno, ENOMEM, "%s: errno %d", kn, errno);
	cr_assert_eq(prewarm(k, p, (size_t)UINT32_MAX + 2), -1, "%s", kn);
	cr_assert_eq(allocs_of(&t), allocs, "%s: %ld allocations", kn, allocs_of(&t) - allocs);
	cr_assert_eq(bytes_of(&t), bytes);
	cr_assert_eq(stats(k, p).created, 0);
	cr_assert_eq(prewarm(k, p, 3), 0, "%s: the pool still works", kn);
	destroy(k, p);
	test_alloc_finish(&t);
}

/* ThreadStatic's memory bound with a huge cache count saturates instead of
 * wrapping to a small number. */
Test(sizes, ts_max_bytes_saturates)
{
	lfpool_config c = { .obj_size = OBJ, .capacity = 100 };
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	size_t one = lfpool_ts_max_bytes(p, 1);
	cr_assert_geq(lfpool_ts_max_bytes(p, SIZE_MAX), one);
	cr_assert_eq(lfpool_ts_max_bytes(p, SIZE_MAX), SIZE_MAX);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* ---- a failing prewarm gives back all it took ---------------------------- */

/* For each point at which the allocator can fail, a prewarm of many slabs
 * fails with ENOMEM and the backing allocator holds exactly what it held
 * before (today: a Pool keeps an item array sized for the request, and side
 * data of slabs grown for it stays), but, in pools that threads share, a
 * directory leaf made for it (lfpool/common.h: lookups on other threads may
 * be reading it; the pool's first slabs, small ones, need none). */
EVERY_KIND(prewarm, failing_prewarm_gives_back_all_memory)
{
	for (long fail = 0; fail < 12; fail++) {
		struct test_alloc t;
		struct hooks h;
		lfpool_config c = counted_config(&t, &h, 4096, 16);
		void *p = create(k, c);
		cr_assert_not_null(p, "%s", kn);
		void *o = get(k, p);
		cr_assert_not_null(o);
		size_t bytes = bytes_of(&t);
		lfpool_stats was = stats(k, p);
		test_alloc_fail_after(&t, fail);
		errno = 0;
		cr_assert_eq(prewarm(k, p, 4000), -1, "%s: fail after %ld", kn, fail);
		cr_assert_eq(errno, ENOMEM);
		test_alloc_fail_after(&t, -1);
		lfpool_stats now = stats(k, p);
		size_t leaf = k != K_POOL && now.bytes_held == was.bytes_held + LEAF_BYTES
			? LEAF_BYTES : 0;
		cr_assert_eq(bytes_of(&t), bytes + leaf,
			     "%s: fail after %ld: %zu bytes held, %zu before", kn, fail, bytes_of(&t),
			     bytes);
		cr_assert_eq(now.created, was.created);
		cr_assert_eq(now.bytes_held, was.bytes_held + leaf, "%s: fail after %ld", kn, fail);
		cr_assert_eq(hook_count(&h.init), 1, "%s: init ran for nothing", kn);
		cr_assert_eq(prewarm(k, p, 40), 0, "%s: the pool still works", kn);
		put(k, p, o);
		destroy(k, p);
		test_alloc_finish(&t);
	}
}

/* ---- the allocator's result is checked ----------------------------------- */

/* Hands out blocks 8 bytes off every alignment above 8 it is asked for
 * (or only the one numbered skew_at among those: 0 the first), and takes
 * them back by the pointer it handed out. */
#define SKEW_MAX 64
struct skew_alloc {
	struct test_alloc inner;
	lfpool_allocator a;
	long skew_at;		/* -1: every one */
	long seq;		/* allocations asked above 8 so far */
	long skewed, wrong_size;
	struct { char *ret; size_t size, inner_size; } out[SKEW_MAX];
};

static void *skew_alloc(size_t size, size_t align, void *ctx)
{
	struct skew_alloc *s = ctx;
	if (align <= 8)
		return s->inner.a.alloc(size, align, &s->inner);
	long n = s->seq++;
	int i = 0;
	while (i < SKEW_MAX && s->out[i].ret)
		i++;
	if (i == SKEW_MAX || (s->skew_at >= 0 && n != s->skew_at))
		return s->inner.a.alloc(size, align, &s->inner);
	char *p = s->inner.a.alloc(size + align, align, &s->inner);
	if (!p)
		return NULL;
	s->out[i].ret = p + 8;
	s->out[i].size = size;
	s->out[i].inner_size = size + align;
	s->skewed++;
	return p + 8;
}

static void skew_free(void *ptr, size_t size, void *ctx)
{
	struct skew_alloc *s = ctx;
	for (int i = 0; i < SKEW_MAX; i++) {
		if (ptr && s->out[i].ret == ptr) {
			if (s->out[i].size != size)
				s->wrong_size++;
			s->out[i].ret = NULL;
			ptr = (char *)ptr - 8;
			size = s->out[i].inner_size;
			break;
		}
	}
	s->inner.a.free(ptr, size, &s->inner);
}

static void skew_init(struct skew_alloc *s)
{
	test_alloc_init(&s->inner);
	s->a = (lfpool_allocator){ skew_alloc, skew_free, s };
	s->skew_at = -1;
}

EVERY_KIND(alloc, misaligned_blocks_are_refused_and_given_back)
{
	struct skew_alloc *s = calloc(1, sizeof(*s));
	skew_init(s);
	struct error_log log;
	record_errors(&log);
	lfpool_config c = { .obj_size = OBJ, .align = 64, .allocator = &s->a,
			    .flags = LFPOOL_F_DEBUG, .name = "skewed" };
	void *p = create(k, c);
	if (p) {
		errno = 0;
		void *o = get(k, p);
		cr_assert_null(o, "%s: a get handed out %p from a misaligned slab", kn, o);
		cr_assert_eq(errno, ENOMEM, "%s: errno %d", kn, errno);
		destroy(k, p);
	} else {
		/* The per-CPU areas come from the allocator at create. */
		cr_assert_eq(errno, ENOMEM, "%s: create errno %d", kn, errno);
	}
	cr_assert_gt(s->skewed, 0);
	cr_assert_geq(log.calls, 1, "%s: no report", kn);
	cr_assert(strstr(log.problem, "not aligned"), "%s: '%s'", kn, log.problem);
	cr_assert_str_eq(log.pool, "skewed");
	lfpool_set_error_hook(NULL, NULL);
	cr_assert_eq(s->wrong_size, 0);
	test_alloc_finish(&s->inner);	/* every block back, skewed ones too */
	free(s);
}

/* lfpool/common.h: a call that fails keeps no object it made.  A bulk get
 * of a ThreadStatic pool (per thread and per CPU) whose backing allocator
 * fails part-way makes objects one slab at a time before it fails: -1 with
 * ENOMEM, and none of them stays (created back at 0); the pool then works. */
Test(alloc, a_failed_ts_bulk_get_keeps_no_object_it_made)
{
	unsigned modes[] = { 0, LFPOOL_F_PERCPU };
	for (int m = 0; m < 2; m++) {
		struct test_alloc t;
		test_alloc_init(&t);
		lfpool_config c = { .obj_size = 3000, .allocator = &t.a, .flags = modes[m] };
		lfpool_ts *p = lfpool_ts_create(&c);
		cr_assert_not_null(p);
		test_alloc_fail_after(&t, 6);
		void *objs[500];
		errno = 0;
		cr_assert_eq(lfpool_ts_get_bulk(p, objs, 500), -1, "mode %u", modes[m]);
		cr_assert_eq(errno, ENOMEM, "mode %u: errno %d", modes[m], errno);
		lfpool_stats st = stats_of(p);
		cr_assert_eq(st.created, 0, "mode %u: the failed get kept %llu objects", modes[m],
			     (unsigned long long)st.created);
		cr_assert_eq(st.live, 0);
		test_alloc_fail_after(&t, -1);
		cr_assert_eq(lfpool_ts_get_bulk(p, objs, 20), 0);
		cr_assert(all_distinct(objs, 20));
		lfpool_ts_put_bulk(p, objs, 20);
		st = stats_of(p);
		cr_assert_eq(st.live, 0);
		cr_assert_eq(st.gets, st.puts, "mode %u: gets %llu, puts %llu", modes[m],
			     (unsigned long long)st.gets, (unsigned long long)st.puts);
		cr_assert_eq(lfpool_ts_destroy(p), 0);
		test_alloc_finish(&t);
	}
}

/* An array pool's buffers above its largest class come from the allocator
 * one by one (lib/layers/array.c, oversize_get): a misaligned block is
 * refused and given back there too, NULL with ENOMEM, reported in a debug
 * pool, and the next aligned block serves. */
Test(alloc, array_oversize_refuses_a_misaligned_block)
{
	for (int debug = 0; debug < 2; debug++) {
		struct skew_alloc *s = calloc(1, sizeof(*s));
		skew_init(s);
		s->skew_at = LONG_MAX;	/* none while the pool is made */
		struct error_log log;
		record_errors(&log);
		lfpool_array_config c = { .max_size = 1024, .align = 64, .allocator = &s->a,
					  .flags = debug ? LFPOOL_F_DEBUG : 0, .name = "skewed" };
		lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_POOL, &c);
		cr_assert_not_null(ap);
		s->skew_at = -1;
		errno = 0;
		void *b = lfpool_array_get(ap, 4096, NULL);
		cr_assert_null(b, "debug %d: an oversize get handed out %p, misaligned", debug, b);
		cr_assert_eq(errno, ENOMEM, "debug %d: errno %d", debug, errno);
		cr_assert_eq(s->skewed, 1, "debug %d: %ld blocks skewed", debug, s->skewed);
		/* --enable-debug makes the release pool a debug pool too (build.h). */
		if (debug || DEBUG_BUILD) {
			cr_assert_eq(log.calls, 1, "no report");
			cr_assert(strstr(log.problem, "not aligned"), "'%s'", log.problem);
			cr_assert_str_eq(log.pool, "skewed");
		} else {
			cr_assert_eq(log.calls, 0, "a release pool reported '%s'", log.problem);
		}
		s->skew_at = LONG_MAX;
		b = lfpool_array_get(ap, 4096, NULL);
		cr_assert_not_null(b);
		cr_assert_eq((uintptr_t)b % 64, 0, "%p", b);
		lfpool_array_put(ap, b);
		cr_assert_eq(lfpool_array_destroy(ap), 0);
		lfpool_set_error_hook(NULL, NULL);
		cr_assert_eq(s->wrong_size, 0);
		test_alloc_finish(&s->inner);	/* every block back, the skewed one too */
		free(s);
	}
}

/* A cache's magazines come from the pool's slabs of magazines, whose growth
 * takes a slab, its side data and, at the third slab, a directory leaf
 * (lib/slab.c, lfp_slabs_grow).  Explicit caches made one after another,
 * each with its k-th aligned allocation misaligned for k = 0, 1, ... until
 * one succeeds: each failed create is NULL with ENOMEM, reported, and
 * keeps no byte, whichever block came back misaligned (the leaf's too). */
Test(alloc, cache_create_refuses_a_misaligned_block_at_every_step_of_a_growth)
{
	/* Two magazines each, 16 a 1 KiB slab: slab number 5, which moves
	 * leaf 0 out (lib/slab.h, LFP_INLINE_SLOTS), from the 41st cache. */
	enum { CACHES = 48 };
	struct skew_alloc *s = calloc(1, sizeof(*s));
	skew_init(s);
	struct error_log log;
	record_errors(&log);
	lfpool_config c = { .obj_size = 16, .magazine_size = 2, .allocator = &s->a,
			    .flags = LFPOOL_F_DEBUG, .name = "skewed" };
	lfpool_ts *pool = lfpool_ts_create(&c);
	cr_assert_not_null(pool);
	lfpool_ts_cache *caches[CACHES];
	long refused = 0, third_refused = 0;
	for (int i = 0; i < CACHES; i++) {
		for (long k = 0;; k++) {
			size_t was_live = s->inner.live_bytes;
			int was_calls = log.calls;
			s->seq = 0;
			s->skew_at = k;
			errno = 0;
			caches[i] = lfpool_ts_cache_create(pool);
			s->skew_at = LONG_MAX;	/* none while the test checks */
			if (caches[i])
				break;
			cr_assert_eq(errno, ENOMEM, "cache %d, block %ld misaligned: errno %d", i, k,
				     errno);
			cr_assert_eq(s->inner.live_bytes, was_live,
				     "cache %d, block %ld misaligned: kept %lld bytes", i, k,
				     (long long)(s->inner.live_bytes - was_live));
			cr_assert_gt(log.calls, was_calls, "cache %d, block %ld misaligned: no report",
				     i, k);
			cr_assert(strstr(log.problem, "not aligned"), "'%s'", log.problem);
			refused++;
			third_refused += k == 2;
		}
	}
	cr_assert_geq(refused, CACHES / 4, "only %ld creates refused", refused);
	/* slab, side data, leaf: the growth that moves leaf 0 out had its
	 * leaf's block refused */
	cr_assert_geq(third_refused, 1, "no growth had its third block refused");
	for (int i = 0; i < CACHES; i++)
		lfpool_ts_cache_destroy(caches[i]);
	cr_assert_eq(lfpool_ts_destroy(pool), 0);
	lfpool_set_error_hook(NULL, NULL);
	cr_assert_eq(s->wrong_size, 0);
	test_alloc_finish(&s->inner);
	free(s);
}

/* ---- hooks that call their own pool --------------------------------------- */

struct reenter {
	enum kind k;
	void *pool;
	int depth, max_depth;
	int inner_errno;
	void *inner;
	long inits;
};

/* An init hook that gets from its own pool (today: endless recursion). */
static void init_gets(void *obj, void *ctx)
{
	struct reenter *r = ctx;
	(void)obj;
	r->inits++;
	if (++r->depth > r->max_depth)
		r->max_depth = r->depth;
	if (r->depth < 50 && r->pool) {
		errno = 0;
		void *o = get(r->k, r->pool);
		if (!o)
			r->inner_errno = errno;
		else
			r->inner = o;
	}
	r->depth--;
}

EVERY_KIND(hooks, init_hook_that_gets_from_its_own_pool_is_refused, .timeout = 20)
{
	struct reenter r = { .k = k };
	lfpool_config c = { .obj_size = OBJ, .init = init_gets, .hook_ctx = &r };
	struct error_log log;
	record_errors(&log);
	void *p = create(k, c);
	cr_assert_not_null(p, "%s", kn);
	r.pool = p;
	void *o = get(k, p);
	cr_assert_not_null(o, "%s", kn);
	cr_assert_eq(r.max_depth, 1, "%s: init re-entered %d deep", kn, r.max_depth);
	cr_assert_null(r.inner, "%s", kn);
	cr_assert_eq(r.inner_errno, EDEADLK, "%s: inner get errno %d", kn, r.inner_errno);
	/* Debug pools (every pool in debug builds) report the refusal too. */
	cr_assert_eq(log.calls, DEBUG_BUILD, "%s: %d reports", kn, log.calls);
	cr_assert(!DEBUG_BUILD || strstr(log.problem, "own init hook"), "%s: %s", kn, log.problem);
	put(k, p, o);
	r.pool = NULL;
	destroy(k, p);
	lfpool_set_error_hook(NULL, NULL);
}

struct putback {
	enum kind k;
	void *pool;
	void *held[16];
	int nheld;
	long fini;
};

/* A fini hook that puts one more object back on each call. */
static void fini_puts(void *obj, void *ctx)
{
	struct putback *b = ctx;
	(void)obj;
	b->fini++;
	if (b->nheld)
		put(b->k, b->pool, b->held[--b->nheld]);
}

/* Destroy finalizes every object, those a fini hook puts back during the
 * destroy too (today: 16 of 32 never finalized; ThreadStatic also leaks a
 * cache). */
EVERY_KIND(hooks, destroy_finalizes_objects_a_fini_hook_puts_back)
{
	struct putback b = { .k = k };
	struct hooks h;
	lfpool_config c = hooked_config(&h, OBJ, 16);
	c.fini = fini_puts;
	c.hook_ctx = &b;
	c.init = NULL;
	c.reset = NULL;
	void *p = create(k, c);
	cr_assert_not_null(p, "%s", kn);
	b.pool = p;
	void *objs[32];
	for (int i = 0; i < 32; i++)
		cr_assert_not_null(objs[i] = get(k, p));
	for (int i = 0; i < 16; i++)
		put(k, p, objs[i]);
	for (int i = 16; i < 32; i++)
		b.held[b.nheld++] = objs[i];
	destroy(k, p);
	cr_assert_eq(b.nheld, 0);
	cr_assert_eq(b.fini, 32, "%s: %ld of 32 objects finalized", kn, b.fini);
}

/* A fini hook that gets from its own pool, and puts what it got back. */
struct fini_getter {
	enum kind k;
	void *pool;
	long fini, got, refused;
	int refused_errno;
	long nested;			/* ThreadStatic: trims and drains refused */
};

static void fini_gets(void *obj, void *ctx)
{
	struct fini_getter *g = ctx;
	(void)obj;
	g->fini++;
	if (!g->pool)
		return;
	errno = 0;
	void *o = get(g->k, g->pool);
	if (o) {
		g->got++;
		put(g->k, g->pool, o);
	} else {
		g->refused++;
		g->refused_errno = errno;
	}
	if (g->k == K_TS || g->k == K_PERCPU) {
		errno = 0;
		g->nested += lfpool_ts_trim(g->pool, 0) == 0 && errno == EDEADLK;
		errno = 0;
		g->nested += lfpool_ts_drain(g->pool) == 0 && errno == EDEADLK;
	}
}

struct puts_then_exits {
	enum kind k;
	void *pool;
	void **objs;
	int n;
};

/* Puts every object and exits: a ThreadStatic thread's cache goes to the
 * depot, where a trim finalizes. */
static void *put_all_and_exit(void *arg)
{
	struct puts_then_exits *a = arg;
	for (int i = 0; i < a->n; i++)
		put(a->k, a->pool, a->objs[i]);
	return NULL;
}

/*
 * A trim at capacity whose fini hook gets from the pool it trims: the trim
 * holds what it finalizes, so the hook may find nothing, and must then be
 * told ENOBUFS at once, not wait for the trim it runs in (Concurrent: a
 * get at capacity waits out overlapping trims) or take the lock that trim
 * holds (ThreadStatic: a get at capacity steals under the steal lock).
 * A ThreadStatic trim or drain from the hook is refused with EDEADLK.
 * Before: Concurrent and ThreadStatic hung (the timeout).
 */
EVERY_KIND(hooks, fini_hook_that_gets_during_a_trim_at_capacity_is_answered, .timeout = 20)
{
	enum { CAP = 8 };
	struct fini_getter g = { .k = k };
	lfpool_config c = { .obj_size = OBJ, .capacity = CAP, .fini = fini_gets, .hook_ctx = &g,
			    .magazine_size = 2 };
	void *p = create(k, c);
	cr_assert_not_null(p, "%s", kn);
	void *objs[CAP];
	for (int i = 0; i < CAP; i++)
		cr_assert_not_null(objs[i] = get(k, p), "%s", kn);
	struct puts_then_exits a = { k, p, objs, CAP };
	if (k == K_POOL)
		put_all_and_exit(&a);	/* a Pool has one thread */
	else
		run_on_thread(put_all_and_exit, &a);
	g.pool = p;
	size_t n = trim(k, p);
	g.pool = NULL;
	cr_assert_gt(n, 0, "%s: the trim finalized nothing: the hook never ran", kn);
	cr_assert_eq(g.refused + g.got, g.fini, "%s", kn);
	cr_assert(g.refused == 0 || g.refused_errno == ENOBUFS, "%s: errno %d", kn,
		  g.refused_errno);
	/* ThreadStatic: a trim or drain from the hook is refused (EDEADLK). */
	cr_assert_eq(g.nested, k == K_TS || k == K_PERCPU ? 2 * g.fini : 0, "%s: %ld of %ld", kn,
		     g.nested, g.fini);
	lfpool_stats st = stats(k, p);
	cr_assert_leq(st.created, CAP, "%s", kn);
	/* Every object left is still there to get, and no more. */
	void *back[CAP];
	size_t have = 0;
	while (have < CAP && (back[have] = get(k, p)) != NULL)
		have++;
	cr_assert_eq(have, CAP, "%s: %zu of %d after the trim", kn, have, CAP);
	cr_assert(all_distinct(back, have), "%s", kn);
	for (size_t i = 0; i < have; i++)
		put(k, p, back[i]);
	destroy(k, p);
}

/* ---- debug pools: every use after destroy is reported --------------------- */

static void *debug_pool(enum kind k, struct error_log *log)
{
	lfpool_config c = { .obj_size = OBJ, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	void *p = create(k, c);
	cr_assert_not_null(p);
	record_errors(log);
	return p;
}

static void expect(struct error_log *log, const char *kn, const char *words)
{
	cr_assert_eq(log->calls, 1, "%s: %d reports for '%s' (last '%s')", kn, log->calls, words,
		     log->problem);
	cr_assert_str_eq(log->pool, "dbg", "%s: named '%s'", kn, log->pool);
	cr_assert(strstr(log->problem, words), "%s: '%s' does not say '%s'", kn, log->problem,
		  words);
	record_errors(log);
}

EVERY_KIND(after_destroy, every_call_is_reported_with_the_pools_name, .timeout = 20)
{
	struct error_log log;
	void *p = debug_pool(k, &log);
	void *o = get(k, p);
	cr_assert_not_null(o);
	destroy(k, p);
	expect(&log, kn, "destroyed with 1 object still out");
	errno = 0;
	cr_assert_null(get(k, p), "%s", kn);
	cr_assert_eq(errno, EINVAL, "%s: errno %d", kn, errno);
	expect(&log, kn, "get after destroy");
	put(k, p, o);
	expect(&log, kn, "put after destroy");
	cr_assert_eq(trim(k, p), 0);
	expect(&log, kn, "trim after destroy");
	errno = 0;
	lfpool_stats st = stats(k, p);
	cr_assert_eq(st.created, 0);
	cr_assert_eq(st.bytes_held, 0, "%s: stats of a destroyed pool are zeroed", kn);
	cr_assert_eq(errno, EINVAL, "%s: errno %d", kn, errno);
	expect(&log, kn, "stats after destroy");
	errno = 0;
	cr_assert_eq(prewarm(k, p, 4), -1);
	cr_assert_eq(errno, EINVAL, "%s: errno %d", kn, errno);
	expect(&log, kn, "prewarm after destroy");
	/* The pool keeps its slabs for these reports: owns must not say yes
	 * for an object of a pool that has none. */
	errno = 0;
	cr_assert_eq(owns(k, p, o), 0, "%s: a destroyed pool owns nothing", kn);
	cr_assert_eq(errno, EINVAL, "%s: errno %d", kn, errno);
	expect(&log, kn, "owns after destroy");
	if (k == K_TS || k == K_PERCPU) {
		errno = 0;
		cr_assert_eq(lfpool_ts_drain(p), 0, "%s", kn);
		cr_assert_eq(errno, EINVAL, "%s: errno %d", kn, errno);
		expect(&log, kn, "drain after destroy");
	}
	lfpool_set_error_hook(NULL, NULL);
}

/* A counted object released after its debug pool was destroyed: a report
 * naming the pool (today: SEGV). */
ParameterizedTestParameters(after_destroy, rc_release_is_reported)
{
	static lfpool_flavour fl[] = { LFPOOL_FLAVOUR_POOL, LFPOOL_FLAVOUR_CONCURRENT,
				       LFPOOL_FLAVOUR_TS };
	return cr_make_param_array(lfpool_flavour, fl, 3);
}

ParameterizedTest(lfpool_flavour *fl, after_destroy, rc_release_is_reported)
{
	struct error_log log;
	lfpool_config c = { .obj_size = OBJ, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	lfpool_rc *rc = lfpool_rc_create(*fl, &c);
	cr_assert_not_null(rc);
	void *o = lfpool_rc_get(rc);
	cr_assert_not_null(o);
	/* Grow past one slab, so that memory is really given back. */
	void *more[300];
	for (int i = 0; i < 300; i++)
		more[i] = lfpool_rc_get(rc);
	for (int i = 0; i < 300; i++)
		lfpool_rc_release(more[i]);
	record_errors(&log);
	lfpool_rc_destroy(rc);
	expect(&log, "rc", "destroyed with 1 object still out");
	cr_assert_eq(lfpool_rc_release(o), 0);
	expect(&log, "rc", "release after destroy");
	lfpool_rc_retain(o);
	expect(&log, "rc", "retain after destroy");
	errno = 0;
	cr_assert_null(lfpool_rc_get(rc));
	cr_assert_eq(errno, EINVAL);
	expect(&log, "rc", "get after destroy");
	lfpool_stats st;
	lfpool_rc_stats(rc, &st);
	cr_assert_eq(st.created, 0);
	expect(&log, "rc", "stats after destroy");
	lfpool_set_error_hook(NULL, NULL);
}

/* ---- array pools: puts with the wrong size ------------------------------- */

/* Release array pools: a pooled buffer put with an oversize size, and an
 * oversize buffer put with another size, take the slow path, which reads
 * the header and reports them (today: the allocator's free gets a pooled
 * buffer, or the wrong size). */
Test(array, wrong_oversize_sizes_are_reported_in_release_pools)
{
	struct test_alloc t;
	test_alloc_init(&t);
	struct error_log log;
	record_errors(&log);
	lfpool_array_config c = { .max_size = 1024, .allocator = &t.a, .name = "bufs" };
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &c);
	cr_assert_not_null(ap);
	char *small = lfpool_array_get(ap, 64, NULL);
	char *big = lfpool_array_get(ap, 5000, NULL);
	cr_assert(small && big);
	lfpool_array_put_sized(ap, small, 4096);
	cr_assert_eq(log.calls, 1);
	/* In debug builds every pool is a debug pool, which checks the class
	 * of every sized put first (test_array.c tests that too). */
	cr_assert(strstr(log.problem, DEBUG_BUILD ? "another class" : "not oversize"), "%s",
		  log.problem);
	cr_assert_eq(log.ptr, small);
	lfpool_array_put_sized(ap, big, 6000);
	cr_assert_eq(log.calls, 2);
	cr_assert(strstr(log.problem, "oversize buffer with another size"), "%s", log.problem);
	cr_assert_eq(t.bad_frees, 0, "the allocator got a block it never gave, or a wrong size");
	/* Both are still the caller's: the right puts work. */
	lfpool_array_put_sized(ap, small, 64);
	lfpool_array_put_sized(ap, big, 5000);
	cr_assert_eq(log.calls, 2);
	uint64_t gets, out;
	lfpool_array_oversize_stats(ap, &gets, &out);
	cr_assert_eq(out, 0);
	lfpool_array_destroy(ap);
	lfpool_set_error_hook(NULL, NULL);
	test_alloc_finish(&t);
}

/* ---- a call of another flavour ------------------------------------------- */

/* lfpool_ts_cache_create given a Pool or a Concurrent pool (a cast away
 * from the types) names the pool and the flavour, with EINVAL.  Before, a
 * Concurrent pool's fields were read as a ThreadStatic pool's: "pool '':
 * cache_create after destroy (pointer (nil))". */
Test(flavours, cache_create_of_another_flavours_pool_names_it)
{
	static const char *const flavour[2] = { "Pool", "Concurrent" };
	for (enum kind k = K_POOL; k <= K_CONCURRENT; k++) {
		struct error_log log;
		record_errors(&log);
		lfpool_config c = { .obj_size = OBJ, .name = "mine" };
		void *p = create(k, c);
		cr_assert_not_null(p);
		errno = 0;
		cr_assert_null(lfpool_ts_cache_create(p));
		cr_assert_eq(errno, EINVAL);
		cr_assert_eq(log.calls, 1);
		cr_assert_str_eq(log.pool, "mine");
		cr_assert_eq(log.ptr, p);
		char want[96];
		snprintf(want, sizeof(want), "cache_create of a %s pool (it takes a ThreadStatic pool)",
			 flavour[k]);
		cr_assert_str_eq(log.problem, want);
		lfpool_set_error_hook(NULL, NULL);
		if (k == K_POOL)
			lfpool_pool_destroy(p);
		else
			lfpool_concurrent_destroy(p);
	}
}
