/* SPDX-License-Identifier: MIT */
/*
 * manypools.c - many pools at once, and a new thread's first get.
 *
 * Rows "manypools": for every flavour and mode (Pool, Concurrent,
 * ThreadStatic per-thread, per-CPU and explicit caches), with 10^2 .. 10^5
 * pools alive, the time per pool of creating them, of the calling thread's
 * first touch of each (a get and a put; for explicit caches, creating the
 * cache), of destroying them oldest first, and again created and touched,
 * of destroying them in a random order.  No step may walk a list of pools:
 * the time per pool at 10^5 should stay within 3x of that at 10^2.
 * Pools are small (capacity 8, magazines of 8) so that 10^5 of them fit in
 * memory; the figures include the backing allocator's work.
 *
 * Every N is measured from the same state: one warm-up run at that N, then
 * the least of MP_REPS runs (the same number at every N).  The warm-up is
 * the first time the process holds N pools: its create and touch pay the
 * kernel's page faults for the memory the pools need (on the VMs this runs
 * on, tens of microseconds a page), which the runs after it, on memory the
 * process keeps, do not.  Measuring N = 10^2 warm (the least of 7 runs,
 * after a warm-up at 10^2) against one cold run at 10^5 compared page
 * faults with cache hits, not the library's steps at two sizes.  The
 * warm-up's figures are printed too ("cold": its create + touch per pool)
 * with the memory per pool it took ("KiB", the resident set's growth
 * while it ran: memory the process kept from an earlier row, which the
 * library's caches of small blocks and pool structs reuse, is not
 * counted): that is what a program creating N pools for the first time
 * pays, and it is not in the ratio.
 *
 * Row "roundrobin": a get and a put on each of 1,000 ThreadStatic pools in
 * turn, through the implicit caches, against the same on one pool (the
 * thread's home).  After it, the same pair in a loop on one pool that is
 * not the home, against the home, measured apart: the thread's second pool
 * (its cache is the pool's own, in the pool's struct) and a pool whose own
 * cache an explicit cache holds (the thread's is on the heap); both are
 * found by the thread's most-recently-used entry in such a loop.
 *
 * Row "manypools memory": what a small pool costs (report_pool_memory).
 *
 * Row "firstuse": a new thread's first lfpool_ts_get (its cache created)
 * and put, median of FIRST_THREADS threads, against malloc+free there.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "lfpool.h"

#define FIRST_THREADS 101
#define RR_POOLS 1000
#define MANY_MAX_GIB 3.0
#define RR_ROUNDS 2000
#define MP_REPS 3

enum mp_kind { MP_POOL, MP_CONCURRENT, MP_TS, MP_PERCPU, MP_CACHE, MP_KINDS };
static const char *const mp_names[MP_KINDS] = {
	"lfpool-pool", "lfpool-concurrent", "lfpool-threadstatic", "lfpool-percpu", "lfpool-cache",
};

struct mp_pool {
	void *pool;
	lfpool_ts_cache *cache;	/* MP_CACHE */
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *mp_create(enum mp_kind k)
{
	lfpool_config cfg = { .obj_size = 64, .capacity = 8, .magazine_size = 8, .name = "many",
			      .flags = k == MP_PERCPU ? LFPOOL_F_PERCPU : 0 };
	void *p = k == MP_POOL ? (void *)lfpool_pool_create(&cfg)
		: k == MP_CONCURRENT ? (void *)lfpool_concurrent_create(&cfg)
		: (void *)lfpool_ts_create(&cfg);
	if (!p)
		bench_die("manypools: create failed");
	return p;
}

static void mp_touch(enum mp_kind k, struct mp_pool *m)
{
	void *obj;
	switch (k) {
	case MP_POOL:
		obj = bench_got(lfpool_pool_get(m->pool));
		lfpool_pool_put(m->pool, obj);
		break;
	case MP_CONCURRENT:
		obj = bench_got(lfpool_concurrent_get(m->pool));
		lfpool_concurrent_put(m->pool, obj);
		break;
	case MP_CACHE:
		m->cache = lfpool_ts_cache_create(m->pool);
		if (!m->cache)
			bench_die("manypools: lfpool_ts_cache_create failed");
		obj = bench_got(lfpool_ts_cache_get(m->cache));
		lfpool_ts_cache_put(m->cache, obj);
		break;
	default:
		obj = bench_got(lfpool_ts_get(m->pool));
		lfpool_ts_put(m->pool, obj);
		break;
	}
}

static void mp_destroy(enum mp_kind k, struct mp_pool *m)
{
	if (k == MP_POOL)
		lfpool_pool_destroy(m->pool);
	else if (k == MP_CONCURRENT)
		lfpool_concurrent_destroy(m->pool);
	else {
		lfpool_ts_cache_destroy(m->cache);
		if (lfpool_ts_destroy(m->pool) != 0)
			bench_die("manypools: lfpool_ts_destroy failed");
	}
}

/* Create n pools and touch each; the times per pool into t[0], t[1]. */
static void mp_fill(enum mp_kind k, struct mp_pool *m, size_t n, double *t)
{
	double t0 = now_ns();
	for (size_t i = 0; i < n; i++)
		m[i] = (struct mp_pool){ mp_create(k), NULL };
	double t1 = now_ns();
	for (size_t i = 0; i < n; i++)
		mp_touch(k, &m[i]);
	t[0] = (t1 - t0) / n;
	t[1] = (now_ns() - t1) / n;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static size_t below(size_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (size_t)(rng % n);
}

/* Resident memory of the process, KiB. */
static double rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	if (f)
		fclose(f);
	return resident * 4.0;
}

/* create, touch, destroy oldest first, destroy in random order: ns per
 * pool; t[4]: KiB of memory per pool alive. */
static void mp_measure(enum mp_kind k, size_t n, double t[5])
{
	struct mp_pool *m = malloc(n * sizeof(*m));
	if (!m)
		bench_die("out of memory");
	double before = rss_kib();
	mp_fill(k, m, n, t);
	t[4] = (rss_kib() - before) / n;
	double t0 = now_ns();
	for (size_t i = 0; i < n; i++)
		mp_destroy(k, &m[i]);
	t[2] = (now_ns() - t0) / n;
	double again[2];
	mp_fill(k, m, n, again);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = below(i + 1);
		struct mp_pool x = m[i];
		m[i] = m[j];
		m[j] = x;
	}
	t0 = now_ns();
	for (size_t i = 0; i < n; i++)
		mp_destroy(k, &m[i]);
	t[3] = (now_ns() - t0) / n;
	free(m);
}

/*
 * What the memory alone costs a step that reads one line of each of n
 * objects 2 KiB apart, visited in a random order: ns per line, the least
 * of MEM_REPS passes, each over lines no pass read before (line 4r of
 * each object's 2 KiB in pass r, and 4r + 2 for the second kind below;
 * lines two apart, so that no adjacent-line prefetch serves one), in
 * memory written once before.  cold (the N = 10^5 row): every pass's
 * lines written first, then 128 MiB of other memory written, so that
 * none of them is in a cache when the passes start (at N = 100 they all
 * are, as the pools of that row are: lines 2 KiB apart share a few L1
 * sets, so L2 hits; their passes read them 1,000 times over, as one pass
 * of 100 lines is too short to time).  Dependent: each line holds the index of
 * the next (one miss at a time); independent: the addresses come from an
 * array, as the pools' do in the loops above, so the CPU overlaps the
 * misses (*indep).  With 4 KiB pages, 10^5 objects take 50,000 pages:
 * at that N most reads miss the TLB as well as the caches.  This is the
 * floor under any step that reads each pool once in a random order, as
 * destroy-rnd does; the target asks for destroy in any order within 3x of
 * N = 100, where every pool is in the cache.
 */
#define MEM_REPS 7
static double random_line_ns(size_t n, bool cold, double *indep)
{
	size_t lines = n * 32;	/* 2 KiB of lines per object */
	uint64_t *buf = malloc(lines * 64);
	size_t *order = malloc(n * sizeof(*order));
	if (!buf || !order)
		bench_die("out of memory");
	memset(buf, 0, lines * 64);
	for (size_t i = 0; i < n; i++)
		order[i] = i * 32;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = below(i + 1), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (size_t r = 0; r < MEM_REPS; r++)
		for (size_t i = 0; i < n; i++)
			buf[(order[i] + 4 * r) * 8] = order[(i + 1) % n] + 4 * r;
	if (cold) {
		size_t flush = (size_t)128 << 20;
		char *other = malloc(flush);
		if (!other)
			bench_die("out of memory");
		memset(other, 1, flush);
		bench_escape(other);
		free(other);
	}
	/* Cached lines: each pass goes over them many times, so that it
	 * lasts long beside the clock's own cost (10^5 reads a pass). */
	size_t loops = cold ? 1 : (100000 + n - 1) / n, reads = loops * n;
	double dep = 0, ind = 0;
	for (size_t r = 0; r < MEM_REPS; r++) {
		size_t d = 4 * r, u = 4 * r + 2;	/* this pass's lines */
		double t0 = now_ns();
		size_t at = order[0] + d;
		for (size_t i = 0; i < reads; i++)
			at = buf[at * 8];
		double t1 = now_ns();
		uint64_t sum = 0;
		for (size_t l = 0; l < loops; l++)
			for (size_t i = 0; i < n; i++)
				sum += buf[(order[i] + u) * 8];
		double t2 = now_ns();
		bench_escape(&at);
		bench_escape(&sum);
		dep = r == 0 || (t1 - t0) / reads < dep ? (t1 - t0) / reads : dep;
		ind = r == 0 || (t2 - t1) / reads < ind ? (t2 - t1) / reads : ind;
	}
	free(order);
	free(buf);
	*indep = ind;
	return dep;
}

/* ns per get or put, a pair on each of npools pools in turn. */
static double round_robin(lfpool_ts **pools, size_t npools, size_t rounds)
{
	double t0 = now_ns();
	for (size_t r = 0; r < rounds; r++)
		for (size_t i = 0; i < npools; i++) {
			void *obj = bench_got(lfpool_ts_get(pools[i]));
			lfpool_ts_put(pools[i], obj);
			bench_barrier();
		}
	return (now_ns() - t0) / (2.0 * rounds * npools);
}

/* A pair in a loop on one pool that is not the thread's home, against one
 * on the home: on second (the thread's second pool: its cache is the
 * pool's own) and on a new pool whose own cache an explicit cache takes
 * first; min..max of the ratio over 5 runs. */
static void report_not_home(lfpool_ts *home, lfpool_ts *second)
{
	lfpool_config cfg = { .obj_size = 64, .prewarm = 8, .name = "rr-other" };
	lfpool_ts *other = lfpool_ts_create(&cfg);
	lfpool_ts_cache *k = other ? lfpool_ts_cache_create(other) : NULL;
	if (!k)
		bench_die("roundrobin: create failed");
	lfpool_ts *p[3] = { home, second, other };
	double lo[3] = { 1e30, 1e30, 1e30 }, hi[3] = { 0, 0, 0 };
	round_robin(&other, 1, 2);	/* the thread's cache of other made */
	for (int r = 0; r < 5; r++) {
		double t[3];
		for (int j = 0; j < 3; j++)
			t[j] = round_robin(&p[j], 1, (size_t)RR_ROUNDS * RR_POOLS);
		for (int j = 1; j < 3; j++) {
			double q = t[j] / t[0];
			lo[j] = q < lo[j] ? q : lo[j];
			hi[j] = q > hi[j] ? q : hi[j];
		}
	}
	printf("  not the home, against it: the thread's second pool %.2f..%.2fx; a pool whose own cache"
	       " an explicit cache holds %.2f..%.2fx (info)\n", lo[1], hi[1], lo[2], hi[2]);
	lfpool_ts_cache_destroy(k);
	lfpool_ts_destroy(other);
}

static void report_round_robin(void)
{
	static lfpool_ts *pools[RR_POOLS];
	lfpool_config cfg = { .obj_size = 64, .prewarm = 8, .name = "rr" };
	for (size_t i = 0; i < RR_POOLS; i++)
		if (!(pools[i] = lfpool_ts_create(&cfg)))
			bench_die("roundrobin: create failed");
	round_robin(pools, RR_POOLS, 2);	/* caches made, warm */
	double one[5], many[5];
	for (int r = 0; r < 5; r++) {
		one[r] = round_robin(pools, 1, (size_t)RR_ROUNDS * RR_POOLS);
		many[r] = round_robin(pools, RR_POOLS, RR_ROUNDS);
	}
	double lo = 1e30, hi = 0, best_one = 1e30, best_many = 1e30;
	for (int r = 0; r < 5; r++) {
		double q = many[r] / one[r];
		lo = q < lo ? q : lo;
		hi = q > hi ? q : hi;
		best_one = one[r] < best_one ? one[r] : best_one;
		best_many = many[r] < best_many ? many[r] : best_many;
	}
	printf("\n== roundrobin: lfpool_ts_get/put on each of %d pools in turn, against one pool\n"
	       "  one pool %.2f ns/op, %d pools %.2f ns/op (best of 5); ratio %.2f..%.2f  %s (target <= 3)\n",
	       RR_POOLS, best_one, RR_POOLS, best_many, lo, hi, hi <= 3 ? "met" : lo <= 3 ? "met in some reps" : "MISSED");
	report_not_home(pools[0], pools[1]);
	for (size_t i = 0; i < RR_POOLS; i++)
		lfpool_ts_destroy(pools[i]);
}

struct first_use {
	lfpool_ts *pool;
	double ns_ts, ns_malloc;
};

static void *first_use_thread(void *arg)
{
	struct first_use *f = arg;
	double t0 = now_ns();
	void *obj = bench_got(lfpool_ts_get(f->pool));
	lfpool_ts_put(f->pool, obj);
	double t1 = now_ns();
	void *m = bench_got(malloc(64));
	free(m);
	f->ns_malloc = now_ns() - t1;
	f->ns_ts = t1 - t0;
	return NULL;
}

static void report_first_use(void)
{
	lfpool_config cfg = { .obj_size = 64, .prewarm = 2048, .name = "first" };
	static double ts[FIRST_THREADS], ma[FIRST_THREADS];
	struct first_use f = { .pool = lfpool_ts_create(&cfg) };
	if (!f.pool)
		bench_die("firstuse: create failed");
	for (int i = 0; i < FIRST_THREADS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, first_use_thread, &f) != 0 || pthread_join(t, NULL) != 0)
			bench_die("firstuse: pthread_create failed");
		ts[i] = f.ns_ts;
		ma[i] = f.ns_malloc;
	}
	lfpool_ts_destroy(f.pool);
	double med = bench_sort_median(ts, FIRST_THREADS);
	double ma_med = bench_sort_median(ma, FIRST_THREADS);
	printf("\n== firstuse: a new thread's first lfpool_ts_get + put (its cache made), %d threads\n"
	       "  median %.0f ns (%.0f..%.0f); first malloc+free median %.0f ns  %s (target <= 2000 ns)\n",
	       FIRST_THREADS, med, ts[0], ts[FIRST_THREADS - 1], ma_med,
	       med <= 2000 ? "met" : "MISSED");
}

/*
 * Row "manypools memory": what a small pool costs.  For Pool,
 * Concurrent and ThreadStatic (implicit caches), MEM_POOLS pools of 64 B
 * objects with the default config (unbounded), one object got and put in
 * each: the resident set's growth and the pools' bytes_held, per pool.
 * Measured first, after lfpool_release_memory and malloc_trim, so that
 * what earlier rows freed does not serve these pools unseen; malloc's
 * own free lists may still serve a little of it.  Target: at most 4 KiB
 * resident and 8 KiB held per pool.
 */
#define MEM_POOLS 1000
#define MEM_RSS_KIB 4.0
#define MEM_HELD_KIB 8.0

/* Create a pool of kind k (MP_POOL, MP_CONCURRENT, MP_TS) for 64 B objects,
 * get and put one object; its bytes_held in *held. */
static void *mem_pool(enum mp_kind k, uint64_t *held)
{
	lfpool_config cfg = { .obj_size = 64, .name = "small" };
	struct mp_pool m = { NULL, NULL };
	lfpool_stats st;
	m.pool = k == MP_POOL ? (void *)lfpool_pool_create(&cfg)
		: k == MP_CONCURRENT ? (void *)lfpool_concurrent_create(&cfg)
		: (void *)lfpool_ts_create(&cfg);
	if (!m.pool)
		bench_die("manypools memory: create failed");
	mp_touch(k, &m);
	if (k == MP_POOL)
		lfpool_pool_stats(m.pool, &st);
	else if (k == MP_CONCURRENT)
		lfpool_concurrent_stats(m.pool, &st);
	else
		lfpool_ts_stats(m.pool, &st);
	*held = st.bytes_held;
	return m.pool;
}

static void report_pool_memory(void)
{
	static const enum mp_kind kinds[] = { MP_POOL, MP_CONCURRENT, MP_TS };
	static void *pools[MEM_POOLS];
	printf("\n== manypools memory: %d pools of 64 B objects (default config), one object got and"
	       " put in each: resident set and bytes_held per pool (target <= %.0f KiB and <= %.0f KiB)\n",
	       MEM_POOLS, MEM_RSS_KIB, MEM_HELD_KIB);
	for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
		enum mp_kind k = kinds[j];
		lfpool_release_memory();
		malloc_trim(0);
		double before = rss_kib();
		uint64_t held = 0, one;
		for (size_t i = 0; i < MEM_POOLS; i++) {
			pools[i] = mem_pool(k, &one);
			held += one;
		}
		double rss = (rss_kib() - before) / MEM_POOLS, kib = held / 1024.0 / MEM_POOLS;
		printf("%-20s RSS %6.1f KiB  bytes_held %6.1f KiB per pool  %s\n", mp_names[k], rss, kib,
		       rss <= MEM_RSS_KIB && kib <= MEM_HELD_KIB ? "met" : "MISSED");
		for (size_t i = 0; i < MEM_POOLS; i++) {
			struct mp_pool m = { pools[i], NULL };
			mp_destroy(k, &m);
		}
	}
}

void report_manypools(bool quick, bool many)
{
	static const size_t counts[] = { 100, 1000, 10000, 100000 };
	size_t ncounts = quick ? 3 : 4;
	fflush(stdout);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* rows as they come: this takes minutes */
	if (many)
		report_pool_memory();
	printf("\n== manypools: ns per pool with N pools alive (create, first touch, destroy oldest first,"
	       " destroy in random order; least of %d runs after a warm-up run at the same N); cold: the"
	       " warm-up's create + touch per pool, and KiB of memory per pool it took\n"
	       "%-20s %8s %10s %10s %10s %11s %10s %8s\n", MP_REPS,
	       "impl", "N", "create", "touch", "destroy", "destroy-rnd", "cold", "KiB");
	for (int k = 0; many && k < MP_KINDS; k++) {
		double at_lo[4] = { 0 }, worst = 0, kib = 0;
		for (size_t c = 0; c < ncounts; c++) {
			double t[5];
			/* Stay within MANY_MAX_GIB of memory (the machine is shared). */
			if (kib * counts[c] > MANY_MAX_GIB * 1024.0 * 1024.0) {
				printf("%-20s %8zu skipped: would hold about %.1f GiB\n", mp_names[k], counts[c],
				       kib * counts[c] / (1024.0 * 1024.0));
				continue;
			}
			/* A warm-up run at this N (the memory it needs, faulted
			 * in once), then each column the least of MP_REPS runs. */
			double cold[5];
			mp_measure((enum mp_kind)k, counts[c], cold);
			for (int r = 0; r < MP_REPS; r++) {
				double u[5];
				mp_measure((enum mp_kind)k, counts[c], u);
				for (int j = 0; j < 4; j++)
					t[j] = r == 0 || u[j] < t[j] ? u[j] : t[j];
			}
			t[4] = cold[4];
			kib = t[4] > kib ? t[4] : kib;
			printf("%-20s %8zu %10.0f %10.0f %10.0f %11.0f %10.0f %8.1f\n", mp_names[k], counts[c],
			       t[0], t[1], t[2], t[3], cold[0] + cold[1], t[4]);
			for (int j = 0; j < 4; j++) {
				if (c == 0)
					at_lo[j] = t[j];
				else if (t[j] / at_lo[j] > worst)
					worst = t[j] / at_lo[j];
			}
		}
		printf("%-20s per pool, worst N / N=100 over the N measured: %.2f  %s (target <= 3)\n", mp_names[k], worst,
		       worst <= 3 ? "met" : "MISSED");
	}
	if (many) {
		size_t hi_n = counts[ncounts - 1];
		double lo_indep, hi_indep, lo = random_line_ns(100, false, &lo_indep);
		double hi = random_line_ns(hi_n, true, &hi_indep);
		printf("memory alone (info): one line of each of N objects 2 KiB apart, in a random order"
		       " (least of %d passes): dependent reads %.1f ns per line at N = 100, %.1f at N = %zu"
		       " (%.0fx); independent %.1f and %.1f (%.0fx)\n", MEM_REPS, lo, hi, hi_n, hi / lo,
		       lo_indep, hi_indep, hi_indep / lo_indep);
	}
	report_round_robin();
	report_first_use();
}
