/* SPDX-License-Identifier: MIT */
/*
 * test_percpu.c - ThreadStatic's per-CPU mode (LFPOOL_F_PERCPU): the mode
 * reported, exact statistics, objects staying with the CPU they were put
 * on while a thread is moved between CPUs, conservation under threads, the
 * capacity bound, bulk calls, flush, trim, destroy, explicit caches and
 * debug checks alongside.
 *
 * Suite `percpu` runs on whichever path this process has; suite `fallback`
 * runs the `percpu` suite again in a child forced onto the sched_getcpu
 * path (GLIBC_TUNABLES=glibc.pthread.rseq=0), so that both are tested.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(LFPOOL_HAVE_RSEQ) && !defined(LFPOOL_TSAN)
# include <sys/rseq.h>
#endif

#include <criterion/criterion.h>

#include "support.h"

/* Set in the environment of the child of the fallback suite. */
#define FALLBACK_ENV "LFPOOL_TEST_FALLBACK"

/* ---- this file's own support ---- */

/* The CPUs this process may run on, in order; how many. */
static unsigned allowed_cpus(int *cpus, unsigned max)
{
	cpu_set_t set;
	unsigned n = 0;
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/* Move the calling thread to cpu, and check that it runs there. */
static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof(set), &set), 0, "pin to CPU %d", cpu);
	cr_assert_eq(sched_getcpu(), cpu);
}

/* The path this process should be on: rseq where the library was built
 * with it and glibc registered rseq (with rseq_cs in the registered part). */
static const char *expected_mode(void)
{
#if defined(LFPOOL_HAVE_RSEQ) && !defined(LFPOOL_TSAN)
	if (__rseq_size >= 16)
		return "rseq";
#endif
	return "sched_getcpu";
}

static lfpool_config percpu_config(size_t obj_size, unsigned magazine_size, unsigned depot_max)
{
	lfpool_config c = ts_config(obj_size, magazine_size, depot_max);
	c.flags = LFPOOL_F_PERCPU;
	return c;
}

/* Objects with an id from init; fini records every id it sees. */
enum { IDS = 4096 };
struct ids {
	long next;		/* ids handed out by init */
	unsigned char seen[IDS];	/* fini calls per id */
	long finis;
};

static void id_init(void *obj, void *ctx)
{
	struct ids *ids = ctx;
	*(long *)obj = __atomic_fetch_add(&ids->next, 1, __ATOMIC_RELAXED);
}

static void id_fini(void *obj, void *ctx)
{
	struct ids *ids = ctx;
	long id = *(long *)obj;
	if (id >= 0 && id < IDS)
		__atomic_fetch_add(&ids->seen[id], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ids->finis, 1, __ATOMIC_RELAXED);
}

static lfpool_config id_config(struct ids *ids, unsigned magazine_size)
{
	lfpool_config c = percpu_config(64, magazine_size, 4);
	c.init = id_init;
	c.fini = id_fini;
	c.hook_ctx = ids;
	return c;
}

/* After destroy: every object made was finalized exactly once. */
static void assert_all_finalized_once(const struct ids *ids)
{
	cr_assert_lt(ids->next, IDS);
	cr_assert_eq(ids->finis, ids->next, "%ld objects made, %ld finalized", ids->next,
		     ids->finis);
	for (long i = 0; i < ids->next; i++)
		cr_assert_eq(ids->seen[i], 1, "object %ld finalized %d times", i, ids->seen[i]);
}

static void assert_accounts(lfpool_ts *p, uint64_t out)
{
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.live, out, "live %llu, %llu out", (unsigned long long)st.live,
		     (unsigned long long)out);
	cr_assert_eq(st.created, st.retained + st.live);
	cr_assert_eq(st.gets - st.puts, out);
}

/* ---- the mode ---- */

Test(percpu, reports_the_path_in_use)
{
	lfpool_config c = percpu_config(64, 8, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	lfpool_ts_put(p, lfpool_ts_get(p));
	lfpool_stats st = stats_of(p);
	cr_assert_not_null(st.percpu_mode);
	cr_assert_str_eq(st.percpu_mode, expected_mode());
	if (getenv(FALLBACK_ENV))
		cr_assert_str_eq(st.percpu_mode, "sched_getcpu", "the tunable must force the fallback");
	cr_assert_eq(lfpool_ts_destroy(p), 0);

	lfpool_config t = ts_config(64, 8, 4);
	p = lfpool_ts_create(&t);
	cr_assert_null(stats_of(p).percpu_mode, "per-thread pools report no per-CPU path");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(percpu, other_flavours_refuse_the_flag)
{
	lfpool_config c = percpu_config(64, 0, 0);
	errno = 0;
	cr_assert_null(lfpool_pool_create(&c));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(lfpool_concurrent_create(&c));
	cr_assert_eq(errno, EINVAL);
}

/* ---- one thread, pinned ---- */

Test(percpu, statistics_count_every_path_exactly)
{
	int cpus[1];
	allowed_cpus(cpus, 1);
	pin(cpus[0]);
	lfpool_config c = percpu_config(64, 4, 2);	/* 8 slots per CPU */
	lfpool_ts *p = lfpool_ts_create(&c);
	void *objs[12];
	for (int i = 0; i < 12; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_get(p));
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.misses, 12, "an empty pool: every get misses and creates");
	cr_assert_eq(st.created, 12);
	/* 8 fill the area; the 9th overflows: it and 3 off the area leave as
	 * a full magazine; 3 more fill the area again. */
	for (int i = 0; i < 12; i++)
		lfpool_ts_put(p, objs[i]);
	st = stats_of(p);
	cr_assert_eq(st.gets, 12);
	cr_assert_eq(st.puts, 12);
	cr_assert_eq(st.hits, 0);
	cr_assert_eq(st.mag_exchanges, 1);
	cr_assert_eq(st.retained, 12);
	cr_assert_eq(st.live, 0);
	/* 8 hits off the area, then the full magazine comes back: its top
	 * object is handed out, 3 go to the area. */
	for (int i = 0; i < 9; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_get(p));
	st = stats_of(p);
	cr_assert_eq(st.gets, 21);
	cr_assert_eq(st.hits, 8);
	cr_assert_eq(st.misses, 13);
	cr_assert_eq(st.mag_exchanges, 2);
	cr_assert_eq(st.created, 12, "nothing created while the pool had objects");
	cr_assert_eq(st.live, 9);
	cr_assert(all_distinct(objs, 9));
	lfpool_ts_put_bulk(p, objs, 9);
	assert_accounts(p, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(percpu, objects_stay_with_the_cpu_they_were_put_on)
{
	int cpus[2];
	cr_assert_eq(allowed_cpus(cpus, 2), 2, "this test needs two CPUs");
	struct ids ids = { 0 };
	lfpool_config c = id_config(&ids, 8);
	lfpool_ts *p = lfpool_ts_create(&c);
	pin(cpus[0]);
	void *a = lfpool_ts_get(p), *b = lfpool_ts_get(p);
	lfpool_ts_put(p, a);
	pin(cpus[1]);
	lfpool_ts_put(p, b);
	cr_assert_eq(lfpool_ts_get(p), b, "CPU %d's area gives back what was put there", cpus[1]);
	lfpool_ts_put(p, b);
	pin(cpus[0]);
	cr_assert_eq(lfpool_ts_get(p), a, "CPU %d's area kept its object", cpus[0]);
	lfpool_ts_put(p, a);
	cr_assert_eq(stats_of(p).created, 2);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	assert_all_finalized_once(&ids);
}

/* A thread moved to a random CPU between operations, holding up to HOLD. */
Test(percpu, a_migrating_thread_loses_nothing)
{
	enum { HOLD = 40, STEPS = 4000 };
	int cpus[64];
	unsigned ncpu = allowed_cpus(cpus, 64);
	struct ids ids = { 0 };
	lfpool_config c = id_config(&ids, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	void *held[HOLD];
	unsigned n = 0, seed = 7;
	for (int step = 0; step < STEPS; step++) {
		if (step % 16 == 0)
			pin(cpus[rand_r(&seed) % ncpu]);
		unsigned r = rand_r(&seed) % 8;
		if (r < 4 && n < HOLD) {
			cr_assert_not_null(held[n] = lfpool_ts_get(p));
			n++;
		} else if (r < 7 && n > 0) {
			lfpool_ts_put(p, held[--n]);
		} else if (n >= 4) {
			n -= 4;
			lfpool_ts_put_bulk(p, held + n, 4);
		} else if (lfpool_ts_get_bulk(p, held + n, 4) == 0) {
			n += 4;
		}
		if (step % 64 == 0)
			assert_accounts(p, n);
	}
	cr_assert(all_distinct(held, n));
	lfpool_ts_put_bulk(p, held, n);
	assert_accounts(p, 0);
	/* A get creates only when nothing is within reach: the depot and this
	 * CPU's area are empty, the other areas hold 2 x 4 each at most. */
	cr_assert_leq(stats_of(p).created, HOLD + (ncpu - 1) * 2 * 4);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	assert_all_finalized_once(&ids);
}

/* ---- threads ---- */

struct worker {
	lfpool_ts *pool;
	unsigned seed;
	long gets, puts, errors;
};

/* Random bursts; each object carries an owner word that must be free
 * when it is got: one object handed to two threads is caught. */
static void *burst_worker(void *arg)
{
	struct worker *w = arg;
	void *held[32];
	for (int round = 0; round < 2000; round++) {
		unsigned n = 1 + rand_r(&w->seed) % 32;
		unsigned got = 0;
		for (; got < n; got++) {
			long *obj = lfpool_ts_get(w->pool);
			if (!obj)
				break;
			if (__atomic_exchange_n(obj, (long)w, __ATOMIC_ACQ_REL) != 0)
				w->errors++;
			held[got] = obj;
			w->gets++;
		}
		while (got > 0) {
			long *obj = held[--got];
			if (__atomic_exchange_n(obj, 0, __ATOMIC_ACQ_REL) != (long)w)
				w->errors++;
			lfpool_ts_put(w->pool, obj);
			w->puts++;
		}
	}
	return NULL;
}

/* A new object has no owner; counted in the struct hooks at ctx. */
static void owner_init(void *obj, void *ctx)
{
	struct hooks *h = ctx;
	*(long *)obj = 0;
	__atomic_fetch_add(&h->init, 1, __ATOMIC_RELAXED);
}

Test(percpu, threads_conserve_objects)
{
	struct hooks h = { .obj_size = 64 };
	lfpool_config c = percpu_config(64, 8, 4);
	c.init = owner_init;
	c.fini = hook_fini;
	c.hook_ctx = &h;
	lfpool_ts *p = lfpool_ts_create(&c);
	struct worker w[4];
	for (int i = 0; i < 4; i++)
		w[i] = (struct worker){ .pool = p, .seed = (unsigned)i + 1 };
	run_threads(4, burst_worker, w, sizeof(w[0]));
	long gets = 0;
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(w[i].errors, 0, "thread %d got an object someone else held", i);
		cr_assert_eq(w[i].gets, w[i].puts);
		gets += w[i].gets;
	}
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, (uint64_t)gets);
	cr_assert_eq(st.puts, (uint64_t)gets);
	assert_accounts(p, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	/* (--enable-debug builds make objects anew on get: more of both.) */
	cr_assert_geq(hook_count(&h.init), (long)st.created);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init), "destroy finalized every object");
}

static void *capacity_worker(void *arg)
{
	struct worker *w = arg;
	void *held[8];
	for (int round = 0; round < 1000; round++) {
		unsigned got = 0;
		for (; got < 8; got++) {
			if (!(held[got] = lfpool_ts_get(w->pool))) {
				w->errors += errno != ENOBUFS;
				break;
			}
			w->gets++;
		}
		if (stats_of(w->pool).created > 24)
			w->errors++;
		lfpool_ts_put_bulk(w->pool, held, got);
	}
	return NULL;
}

Test(percpu, capacity_is_never_exceeded)
{
	int cpus[2];
	unsigned ncpu = allowed_cpus(cpus, 2);
	lfpool_config c = percpu_config(64, 4, 2);
	c.capacity = 10;
	lfpool_ts *p = lfpool_ts_create(&c);
	pin(cpus[0]);
	void *objs[11];
	for (int i = 0; i < 10; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_get(p));
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOBUFS);
	cr_assert_eq(lfpool_ts_get_bulk(p, objs + 10, 1), -1);
	cr_assert_eq(stats_of(p).created, 10);
	/* 8 go to this CPU's area, 4 of them on to the depot as a magazine. */
	lfpool_ts_put_bulk(p, objs, 10);
	if (ncpu == 2) {
		/* Another CPU gets all ten: the depot's four, then (at capacity)
		 * the six it steals from CPU 0's area, and none is made. */
		pin(cpus[1]);
		for (int i = 0; i < 10; i++)
			cr_assert_not_null(objs[i] = lfpool_ts_get(p), "get %d on CPU %d", i, cpus[1]);
		cr_assert_eq(stats_of(p).created, 10);
		errno = 0;
		cr_assert_null(lfpool_ts_get(p), "every object is out");
		cr_assert_eq(errno, ENOBUFS);
		lfpool_ts_put_bulk(p, objs, 10);
		pin(cpus[0]);
	}
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 10), 0, "all ten are back within reach");
	lfpool_ts_put_bulk(p, objs, 10);
	cr_assert_eq(lfpool_ts_destroy(p), 0);

	/* Under threads: gets fail (ENOBUFS) but the bound holds. */
	c.capacity = 24;
	p = lfpool_ts_create(&c);
	struct worker w[4];
	for (int i = 0; i < 4; i++)
		w[i] = (struct worker){ .pool = p };
	run_threads(4, capacity_worker, w, sizeof(w[0]));
	for (int i = 0; i < 4; i++)
		cr_assert_eq(w[i].errors, 0, "thread %d saw created > capacity or a bad errno", i);
	cr_assert_leq(stats_of(p).created, 24);
	assert_accounts(p, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(percpu, bulk_get_is_all_or_none)
{
	int cpus[1];
	allowed_cpus(cpus, 1);
	pin(cpus[0]);
	struct ids ids = { 0 };
	lfpool_config c = id_config(&ids, 4);
	c.capacity = 20;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *objs[21];
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 6), 0);
	lfpool_ts_put_bulk(p, objs, 6);	/* 6 in the area */
	errno = 0;
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 21), -1);
	cr_assert_eq(errno, ENOBUFS);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 6, "the objects a failed get made are gone again");
	cr_assert_eq(st.gets, 6, "a failed get counts no get");
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 20), 0);
	cr_assert(all_distinct(objs, 20));
	objs[20] = NULL;	/* NULL entries are skipped */
	lfpool_ts_put_bulk(p, objs, 21);
	assert_accounts(p, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	assert_all_finalized_once(&ids);
}

/* ---- flush, trim, destroy ---- */

Test(percpu, flush_hands_this_cpus_objects_to_the_depot)
{
	int cpus[2];
	unsigned ncpu = allowed_cpus(cpus, 2);
	lfpool_config c = percpu_config(64, 8, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	pin(cpus[0]);
	void *objs[10];
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 10), 0);
	lfpool_ts_put_bulk(p, objs, 10);
	lfpool_ts_flush(p);
	pin(cpus[ncpu - 1]);
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 10), 0);
	cr_assert_eq(stats_of(p).created, 10, "every object was within reach on CPU %d",
		     cpus[ncpu - 1]);
	lfpool_ts_put_bulk(p, objs, 10);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* A pool pinned to one CPU with 20 objects pooled: 8 in the area (of 8),
 * 12 in the depot's three full magazines (of 4), no get from the depot. */
static lfpool_ts *twenty_pooled_in_area_and_depot(void **objs)
{
	int cpus[1];
	allowed_cpus(cpus, 1);
	pin(cpus[0]);
	lfpool_config c = percpu_config(64, 4, 8);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 20), 0);
	for (int i = 0; i < 20; i++)
		lfpool_ts_put(p, objs[i]);
	return p;
}

Test(percpu, trim_empties_the_depot_and_the_areas)
{
	void *objs[20];
	lfpool_ts *p = twenty_pooled_in_area_and_depot(objs);
	cr_assert_eq(lfpool_ts_trim(p, 0), 20, "no get took a full magazine: none is kept, "
		     "and the area's 8 are taken too");
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 0);
	cr_assert_eq(st.trims, 1);
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 8), 0);
	cr_assert_eq(stats_of(p).created, 8, "made anew");
	lfpool_ts_put_bulk(p, objs, 8);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* lfpool/ts.h: keep counts the depot's objects "with every CPU area's
 * objects taken into it first". */
Test(percpu, trim_keeps_keep_counting_the_areas)
{
	void *objs[20];
	lfpool_ts *p = twenty_pooled_in_area_and_depot(objs);
	cr_assert_eq(lfpool_ts_trim(p, 10), 10, "the area's 8 count: 20 pooled, 10 kept");
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 10);
	cr_assert_eq(st.retained, 10);
	cr_assert_eq(lfpool_ts_trim(p, 100), 0, "keep above the 10 pooled");
	cr_assert_eq(lfpool_ts_trim(p, 0), 10, "no get took a magazine: no working set");
	cr_assert_eq(stats_of(p).created, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(percpu, destroy_finalizes_the_objects_of_every_area)
{
	int cpus[64];
	unsigned ncpu = allowed_cpus(cpus, 64);
	struct ids ids = { 0 };
	struct test_alloc ta;
	test_alloc_init(&ta);
	lfpool_config c = id_config(&ids, 8);
	c.allocator = &ta.a;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *objs[24];
	for (unsigned k = 0; k < ncpu; k++) {
		pin(cpus[k]);
		cr_assert_eq(lfpool_ts_get_bulk(p, objs, 24), 0);
		lfpool_ts_put_bulk(p, objs, 24);	/* 16 in this area, 8 in the depot */
	}
	cr_assert_geq(stats_of(p).bytes_held, 1, "the areas come from the backing allocator");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	assert_all_finalized_once(&ids);
	cr_assert_eq(test_alloc_live(&ta), 0, "every block given back");
	cr_assert_eq(ta.bad_frees, 0);
	test_alloc_fini(&ta);
}

/* ---- alongside ---- */

/* Use the pool, then stay alive until the test has looked. */
struct alive {
	lfpool_ts *pool;
	pthread_barrier_t used, looked;
};

static void *use_and_wait(void *arg)
{
	struct alive *a = arg;
	lfpool_ts_put(a->pool, lfpool_ts_get(a->pool));
	pthread_barrier_wait(&a->used);
	pthread_barrier_wait(&a->looked);
	return NULL;
}

Test(percpu, threads_keep_nothing_and_explicit_caches_work_alongside)
{
	lfpool_config c = percpu_config(64, 8, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_eq(lfpool_ts_attach(p), 0);
	lfpool_ts_put(p, lfpool_ts_get(p));
	uint64_t held = stats_of(p).bytes_held;
	struct alive a = { .pool = p };
	pthread_t t;
	pthread_barrier_init(&a.used, NULL, 2);
	pthread_barrier_init(&a.looked, NULL, 2);
	cr_assert_eq(pthread_create(&t, NULL, use_and_wait, &a), 0);
	pthread_barrier_wait(&a.used);
	/* A per-thread pool would hold the thread's two magazines now. */
	cr_assert_eq(stats_of(p).bytes_held, held, "a thread gets no cache of its own");
	pthread_barrier_wait(&a.looked);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&a.used);
	pthread_barrier_destroy(&a.looked);
	cr_assert_eq(stats_of(p).bytes_held, held);
	assert_accounts(p, 0);

	lfpool_ts_cache *cache = lfpool_ts_cache_create(p);
	cr_assert_not_null(cache);
	void *x = lfpool_ts_cache_get(cache), *y = lfpool_ts_get(p);
	cr_assert_neq(x, y);
	lfpool_ts_put(p, x);
	lfpool_ts_cache_put(cache, y);
	assert_accounts(p, 0);
	cr_assert_eq(lfpool_ts_destroy(p), -1);
	cr_assert_eq(errno, EBUSY);
	lfpool_ts_cache_destroy(cache);
	lfpool_ts_detach(p);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(percpu, debug_checks_and_reset_hook_run_on_every_put)
{
	struct error_log log;
	record_errors(&log);
	struct hooks h = { .obj_size = 64 };
	lfpool_config c = hooked_config(&h, 64, 16);
	c.flags = LFPOOL_F_PERCPU | LFPOOL_F_DEBUG;
	c.magazine_size = 4;
	lfpool_ts *p = lfpool_ts_create(&c);
	void *objs[12];
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, 12), 0);
	lfpool_ts_put_bulk(p, objs, 12);
	cr_assert_eq(hook_count(&h.reset), 12);
	lfpool_ts_put(p, objs[0]);
	cr_assert_eq(log.calls, 1);
	cr_assert(strstr(log.problem, "double put"), "%s", log.problem);
	long local;
	lfpool_ts_put(p, &local);
	cr_assert_eq(log.calls, 2);
	cr_assert(strstr(log.problem, "not from this pool"), "%s", log.problem);
	void *o = lfpool_ts_get(p);
	lfpool_ts_put(p, o);
	cr_assert_eq(hook_count(&h.reset), 13, "reset ran once per accepted put");
	assert_accounts(p, 0);
	o = lfpool_ts_get(p);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(log.calls, 3);
	cr_assert(strstr(log.problem, "destroyed with 1 object still out"), "%s", log.problem);
	lfpool_ts_put(p, o);	/* debug pools stay readable after destroy */
	cr_assert_eq(log.calls, 4);
	cr_assert(strstr(log.problem, "after destroy"), "%s", log.problem);
	lfpool_set_error_hook(NULL, NULL);
}

/* The page block (128 bytes of 4 KiB) of address a. */
static unsigned page_block(const void *a)
{
	return (unsigned)(((uintptr_t)a >> 7) & 31);
}

/* percpu.h: no area's counters share a page offset (128-byte block) with
 * the hot table's fields, which every inline get and put reads (4K
 * aliasing made a CPU's pairs up to 5x slower); the pool head is kept off
 * them where a layout allows (counted, not required).  Many pools, so
 * that every start of the areas is checked. */
Test(percpu, areas_keep_off_the_page_offset_of_the_hot_table)
{
	enum { POOLS = 64 };
	lfpool_ts *p[POOLS];
	unsigned checked = 0, head_apart = 0;
	for (int i = 0; i < POOLS; i++) {
		lfpool_config c = ts_config(64, (unsigned)(4 + i % 40), 4);
		c.flags = LFPOOL_F_PERCPU;
		p[i] = lfpool_ts_create(&c);
		cr_assert_not_null(p[i]);
		const struct lfpool_ts_fast *f = (const struct lfpool_ts_fast *)p[i];
		const struct lfpool_percpu_hot_ *h = f->rseq_get;
		if (!h->areas)
			continue;	/* no rseq here: the shut table, no areas */
		cr_assert_eq((uintptr_t)h % 32, 0, "the hot table lies in one block");
		cr_assert_eq((uintptr_t)h->areas % 128, 0);
		cr_assert_eq(h->stride % 256, 0);
		cr_assert_geq(h->stride, 24 + 8 * (uint64_t)h->max);
		bool apart = true;
		for (uint32_t k = 0; k < h->gate; k++) {
			unsigned b = page_block(h->areas + k * h->stride);
			cr_assert_neq(b, page_block(h), "pool %d, CPU %u's area at page block %u", i, k, b);
			apart = apart && b != page_block(f) && b != page_block((const char *)f + 15);
		}
		head_apart += apart;
		checked++;
	}
	/* every pool still works: a get and a put on each */
	for (int i = 0; i < POOLS; i++) {
		void *o = lfpool_ts_get(p[i]);
		cr_assert_not_null(o);
		lfpool_ts_put(p[i], o);
		cr_assert_eq(lfpool_ts_destroy(p[i]), 0);
	}
	cr_log_info("%u of %d pools run rseq inline; %u with the pool head apart too",
		    checked, POOLS, head_apart);
}

/* lfpool/impl/lookup.h, LFPOOL_TS_PERCPU_TAG_: the inline get and put tell a
 * per-CPU pool by bit 6 of its head's address, tested before the thread's
 * home and most recently used pools; a per-thread pool's head has the bit
 * clear (else each of its calls would first load the pool's rseq_get),
 * a per-CPU one's set (else each call would compare the thread's pools
 * first).  Pools of many sizes (object, magazine, the per-CPU state), each
 * size created again after a destroy (the freed blocks are reused) and
 * with debug checks.  A debug pool's per-CPU calls are never inline: its
 * head is placed as a per-thread pool's (every pool of an --enable-debug
 * build is one). */
Test(percpu, a_pools_head_tells_its_kind_by_its_address)
{
	enum { POOLS = 48 };
	for (int round = 0; round < 2; round++) {
		lfpool_ts *p[POOLS];
		for (int i = 0; i < POOLS; i++) {
			lfpool_config c = ts_config((size_t)(8 << (i % 8)), (unsigned)(1 + i % 37),
						    (unsigned)(1 + i % 5));
			c.capacity = i % 3 ? 0 : 1000;
			int kind = i % 3;	/* per-thread, per-CPU, per-thread debug */
			c.flags = kind == 1 ? LFPOOL_F_PERCPU : kind == 2 ? LFPOOL_F_DEBUG : 0;
			p[i] = lfpool_ts_create(&c);
			cr_assert_not_null(p[i], "pool %d", i);
			bool tagged = (uintptr_t)p[i] & LFPOOL_TS_PERCPU_TAG_;
			cr_assert_eq(tagged, kind == 1 && !DEBUG_BUILD, "round %d, pool %d (%s): head at %p", round,
				     i, kind == 1 ? "per-CPU" : "per-thread", (void *)p[i]);
			void *o = lfpool_ts_get(p[i]);
			cr_assert_not_null(o);
			lfpool_ts_put(p[i], o);
		}
		for (int i = 0; i < POOLS; i++)
			cr_assert_eq(lfpool_ts_destroy(p[i]), 0);
	}
}

/* lfpool/impl/lookup.h, LFPOOL_TS_PERCPU_TAG_: the inline get and put test the
 * per-CPU bit before the thread's home and most recently used pools, so
 * those entries must never name a per-CPU pool, whose calls would
 * otherwise skip a cache they hold: a per-CPU pool keeps no cache per
 * thread.  Its calls (get, put, bulk, attach), the first of the thread
 * and after a per-thread pool made the home, the fallback path and the
 * reset hook's included, leave both entries as they were. */
Test(percpu, a_percpu_pool_is_never_a_threads_home_or_last_used_pool)
{
	lfpool_config c = percpu_config(64, 4, 2);
	struct hooks h = { .obj_size = 64 };
	lfpool_config hooked = c;
	hooked.reset = hook_reset;
	hooked.hook_ctx = &h;
	lfpool_ts *pc[] = { lfpool_ts_create(&c), lfpool_ts_create(&hooked) };
	lfpool_config t = ts_config(64, 4, 2);
	lfpool_ts *pt = lfpool_ts_create(&t);
	cr_assert_not_null(pc[0]);
	cr_assert_not_null(pc[1]);
	cr_assert_not_null(pt);
	for (int round = 0; round < 2; round++) {
		/* Round 0: the thread's first calls; round 1: after pt's. */
		const lfpool_ts *home = lfpool_ts_tls_.home_pool, *mru = lfpool_ts_tls_.pool;
		for (int k = 0; k < 2; k++) {
			cr_assert_eq(lfpool_ts_attach(pc[k]), 0);
			void *objs[3];
			objs[0] = lfpool_ts_get(pc[k]);
			cr_assert_not_null(objs[0]);
			lfpool_ts_put(pc[k], objs[0]);
			cr_assert_eq(lfpool_ts_get_bulk(pc[k], objs, 3), 0);
			lfpool_ts_put_bulk(pc[k], objs, 3);
			cr_assert_eq(lfpool_ts_tls_.home_pool, home, "round %d, pool %d: home %p", round, k,
				     (const void *)lfpool_ts_tls_.home_pool);
			cr_assert_eq(lfpool_ts_tls_.pool, mru, "round %d, pool %d: last used %p", round, k,
				     (const void *)lfpool_ts_tls_.pool);
		}
		lfpool_ts_put(pt, lfpool_ts_get(pt));
		cr_assert_eq(lfpool_ts_tls_.home_pool, pt, "the per-thread pool did not become the home");
	}
	lfpool_ts_detach(pt);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(lfpool_ts_destroy(pc[k]), 0);
	cr_assert_eq(lfpool_ts_destroy(pt), 0);
}

/* lfpool/impl/lookup.h, struct lfpool_ts_fast: a pool's rseq_get and rseq_put are
 * never NULL (the inline get and put load them without a test).  Where no
 * sequence may run inline (a per-thread pool, a debug one, a per-CPU pool
 * with a reset hook, which checks every put) they name a table whose gate
 * is shut, on which the header's own sequences miss: a get returns NULL,
 * a put goes to its miss label, and nothing is stored; so a per-thread
 * pool whose head had the per-CPU bit would take its slow path, not fault.
 * The per-CPU pool with a reset hook has the per-CPU bit and a shut put
 * table: its inline put runs the sequence on it, misses, and its slow path
 * runs the hook.  (With the NULL tables of before the test fails at its
 * first cr_assert_not_null.) */

Test(percpu, pools_without_inline_sequences_have_a_shut_table)
{
	for (int kind = 0; kind < 4; kind++) {
		lfpool_config c = ts_config(64, 8, 4);
		c.flags = kind == 1 ? LFPOOL_F_DEBUG : kind >= 2 ? LFPOOL_F_PERCPU : 0;
		struct hooks h = { .obj_size = 64 };
		if (kind == 3) {
			c.reset = hook_reset;
			c.hook_ctx = &h;
		}
		lfpool_ts *p = lfpool_ts_create(&c);
		cr_assert_not_null(p);
		const struct lfpool_ts_fast *f = (const struct lfpool_ts_fast *)p;
		cr_assert_not_null(f->rseq_get, "kind %d", kind);
		cr_assert_not_null(f->rseq_put, "kind %d", kind);
#ifdef LFPOOL_RSEQ_INLINE_
		/* the inline sequences' offset is glibc's */
		ptrdiff_t toff;
		LFPOOL_RSEQ_OFFSET_(toff);
		cr_assert_eq(toff, __rseq_offset, "kind %d", kind);
#endif
		/* per-thread and debug pools: both shut; a reset hook: the put's */
		bool get_shut = !f->rseq_get->areas, put_shut = !f->rseq_put->areas;
		cr_assert(kind == 2 || put_shut, "kind %d: a put runs inline", kind);
		cr_assert(kind >= 2 || get_shut, "kind %d: a get runs inline", kind);
		if (get_shut) {
			cr_assert_eq(f->rseq_get->gate, 0, "kind %d", kind);
#ifdef LFPOOL_RSEQ_INLINE_
			cr_assert_null(lfpool_rseq_get_(f->rseq_get), "kind %d", kind);
#endif
		}
		if (put_shut) {
			cr_assert_eq(f->rseq_put->gate, 0, "kind %d", kind);
#ifdef LFPOOL_RSEQ_INLINE_
			const struct lfpool_percpu_hot_ *h = f->rseq_put;
			void *obj = &c;
			int missed = 0;
			LFPOOL_RSEQ_PUT_(h, obj, shut);
			goto done;
shut:
			missed = 1;
done:
			cr_assert(missed, "kind %d: a put on the shut table did not miss", kind);
#endif
		}
		void *o = lfpool_ts_get(p);
		cr_assert_not_null(o);
		lfpool_ts_put(p, o);
		cr_assert_eq(hook_count(&h.reset), kind == 3, "kind %d: %ld resets for one put", kind,
			     hook_count(&h.reset));
		if (kind == 3 && !DEBUG_BUILD)
			cr_assert((uintptr_t)p & LFPOOL_TS_PERCPU_TAG_, "the reset pool's head has no tag");
		cr_assert_eq(lfpool_ts_destroy(p), 0);
	}
}

/* lfpool/ts.h, fork(): a slow path that another thread was running at the
 * fork (here a get making an object, parked in the init hook) never ends
 * in the child; what it held counts as out, and the child's gets at
 * capacity fail with ENOBUFS instead of waiting for it (a thief sweeps
 * again while a slow path is in flight: steal.c, step 7). */
static void *ts_get_of(void *pool)
{
	return lfpool_ts_get(pool);
}

/* A per-CPU pool of capacity 4 with init on ctx, 3 of its objects got
 * into held[0 .. 3). */
static lfpool_ts *three_out_of_four(lfpool_hook_fn init, void *ctx, void **held)
{
	lfpool_config c = { .obj_size = 64, .capacity = 4, .flags = LFPOOL_F_PERCPU,
			    .init = init, .hook_ctx = ctx };
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	for (int i = 0; i < 3; i++)
		cr_assert_not_null(held[i] = lfpool_ts_get(p));
	return p;
}

Test(percpu, a_fork_during_a_slow_path_leaves_the_child_s_gets_at_capacity_failing)
{
	TEST_DEADLINE(60);
	struct parked_hook h;
	parked_hook_init(&h);
	void *held[4];
	lfpool_ts *p = three_out_of_four(parked_hook, &h, held);
	struct gets_to_capacity g = { ts_get_of, p, 16 };
	held[3] = fork_while_parked(&h, ts_get_of, p, &g);
	cr_assert_not_null(held[3]);
	for (int i = 0; i < 4; i++)
		lfpool_ts_put(p, held[i]);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	parked_hook_fini(&h);
	TEST_DEADLINE(0);
}

/* The same when the forking thread is the one in the slow path: its init
 * hook forks, and in the child that get goes on and ends; the child's gets
 * at capacity then fail with ENOBUFS (the reset keeps the forking thread's
 * own transit: one reset to 0 was left at -1 when it ended, and they hung). */
Test(percpu, a_fork_from_a_hook_inside_a_slow_path_leaves_the_child_s_gets_working)
{
	TEST_DEADLINE(60);
	struct forking_hook f = { false, false, 0 };
	void *held[4];
	lfpool_ts *p = three_out_of_four(forking_hook, &f, held);
	f.armed = true;
	held[3] = lfpool_ts_get(p);	/* makes the 4th object: the hook forks */
	struct gets_to_capacity g = { ts_get_of, p, 16 };
	forked_in_hook_finish(&f, &g);
	cr_assert_not_null(held[3]);
	for (int i = 0; i < 4; i++)
		lfpool_ts_put(p, held[i]);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	TEST_DEADLINE(0);
}

/* ---- hooks and allocators that block or call pools ---- */

/* A thief at capacity sweeps again while a slow path holds objects in
 * transit (steal.c, step 7); an init hook and the backing allocator run in
 * no transit, so a get at capacity fails at once with ENOBUFS while another
 * thread's hook or allocator blocks, and drain and trim go on. */
static void assert_at_capacity_fails_at_once(lfpool_ts *p, bool trim)
{
	void *obj;
	errno = 0;
	cr_assert_null(lfpool_ts_get(p), "every object is out or being made");
	cr_assert_eq(errno, ENOBUFS);
	errno = 0;
	cr_assert_eq(lfpool_ts_get_bulk(p, &obj, 1), -1);
	cr_assert_eq(errno, ENOBUFS);
	cr_assert_eq(lfpool_ts_drain(p), 0);
	if (trim)	/* not while a slab grows: trim waits for the grow lock */
		cr_assert_eq(lfpool_ts_trim(p, 0), 0);
}

Test(percpu, a_get_at_capacity_fails_at_once_while_another_threads_init_hook_blocks)
{
	TEST_DEADLINE(20);
	struct parked_hook h;
	parked_hook_init(&h);
	void *held[4];
	lfpool_ts *p = three_out_of_four(parked_hook, &h, held);
	parked_hook_arm(&h);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, ts_get_of, p), 0);
	parked_hook_wait(&h);	/* t makes the 4th object, in its init hook */
	assert_at_capacity_fails_at_once(p, true);
	parked_hook_release(&h);
	cr_assert_eq(pthread_join(t, &held[3]), 0);
	cr_assert_not_null(held[3]);
	lfpool_ts_put_bulk(p, held, 4);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	parked_hook_fini(&h);
	TEST_DEADLINE(0);
}

/* A backing allocator that parks its caller (struct parked_hook) once
 * armed. */
static void *parking_alloc(size_t size, size_t align, void *ctx)
{
	parked_hook(NULL, ctx);
	void *mem = NULL;
	return posix_memalign(&mem, align < sizeof(void *) ? sizeof(void *) : align, size) ? NULL
											  : mem;
}

static void parking_free(void *mem, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	free(mem);
}

Test(percpu, a_get_at_capacity_fails_at_once_while_another_threads_allocator_blocks)
{
	TEST_DEADLINE(20);
	struct parked_hook h;
	parked_hook_init(&h);
	lfpool_allocator a = { parking_alloc, parking_free, &h };
	lfpool_config c = { .obj_size = 64, .capacity = 1, .flags = LFPOOL_F_PERCPU,
			    .allocator = &a };
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	parked_hook_arm(&h);
	pthread_t t;
	void *obj;
	cr_assert_eq(pthread_create(&t, NULL, ts_get_of, p), 0);
	parked_hook_wait(&h);	/* t's get grows the first slab */
	assert_at_capacity_fails_at_once(p, false);
	parked_hook_release(&h);
	cr_assert_eq(pthread_join(t, &obj), 0);
	cr_assert_not_null(obj);
	lfpool_ts_put(p, obj);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	parked_hook_fini(&h);
	TEST_DEADLINE(0);
}

/* Two pools of capacity 1 whose init hooks get from each other: each
 * thread makes one pool's only object, and its hook, once both are in
 * their hooks, gets from the other pool, at capacity.  Both gets fail with
 * ENOBUFS (each pool's object is being made); before, each thief waited for
 * the other thread's transit, which waited for it. */
struct crossed {
	lfpool_ts *pool[2];
	pthread_barrier_t both_in_hooks;
	void *got[2];
	int err[2];
};

static void crossed_init(void *obj, void *ctx, int me)
{
	(void)obj;
	struct crossed *x = ctx;
	pthread_barrier_wait(&x->both_in_hooks);
	errno = 0;
	x->got[me] = lfpool_ts_get(x->pool[!me]);
	x->err[me] = errno;
}

static void crossed_init0(void *obj, void *ctx) { crossed_init(obj, ctx, 0); }
static void crossed_init1(void *obj, void *ctx) { crossed_init(obj, ctx, 1); }

Test(percpu, init_hooks_that_get_from_each_others_pools_at_capacity_fail_at_once)
{
	TEST_DEADLINE(20);
	struct crossed x = { 0 };
	pthread_barrier_init(&x.both_in_hooks, NULL, 2);
	lfpool_hook_fn init[2] = { crossed_init0, crossed_init1 };
	for (int i = 0; i < 2; i++) {
		lfpool_config c = { .obj_size = 64, .capacity = 1, .flags = LFPOOL_F_PERCPU,
				    .init = init[i], .hook_ctx = &x };
		cr_assert_not_null(x.pool[i] = lfpool_ts_create(&c));
	}
	pthread_t t;
	void *mine[2];
	cr_assert_eq(pthread_create(&t, NULL, ts_get_of, x.pool[1]), 0);
	mine[0] = lfpool_ts_get(x.pool[0]);
	cr_assert_eq(pthread_join(t, &mine[1]), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_not_null(mine[i]);
		cr_assert_null(x.got[i], "pool %d's only object was being made", !i);
		cr_assert_eq(x.err[i], ENOBUFS);
		lfpool_ts_put(x.pool[i], mine[i]);
		cr_assert_eq(lfpool_ts_destroy(x.pool[i]), 0);
	}
	pthread_barrier_destroy(&x.both_in_hooks);
	TEST_DEADLINE(0);
}

/*
 * The fallback path's area spinlock: a waiter spins a while, then yields
 * its CPU (a holder preempted on the waiter's CPU runs again only then;
 * with SCHED_FIFO at one priority, never if the waiter only spins).  The
 * library's fork handler holds every area's lock from its prepare handler
 * to its parent handler; one registered before it (so run after it, in
 * prepare) waits there until a thread that gets and puts on the pool has
 * called sched_yield, which this program defines over libc's to count the
 * calls of that thread.
 */
static __thread bool count_yields;
static long yields;

int sched_yield(void)
{
	if (count_yields)
		__atomic_fetch_add(&yields, 1, __ATOMIC_RELAXED);
	return (int)syscall(SYS_sched_yield);
}

static bool waiting_for_a_yield;

static void wait_for_a_yield(void)
{
	while (__atomic_load_n(&waiting_for_a_yield, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&yields, __ATOMIC_RELAXED) == 0)
		syscall(SYS_sched_yield);
}

struct churn_area {
	lfpool_ts *pool;
	int cpu;
	bool stop, warm;
};

static void *get_and_put_on_one_cpu(void *arg)
{
	struct churn_area *w = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		return NULL;
	lfpool_ts_put(w->pool, lfpool_ts_get(w->pool));	/* the area holds one now */
	__atomic_store_n(&w->warm, true, __ATOMIC_RELEASE);
	count_yields = true;
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		lfpool_ts_put(w->pool, lfpool_ts_get(w->pool));
	return w;
}

Test(percpu, a_waiter_for_a_fallback_area_lock_yields_its_cpu)
{
	if (strcmp(expected_mode(), "sched_getcpu") != 0)
		return;		/* rseq: no area lock (the fallback suite runs this) */
	TEST_DEADLINE(20);
	/* Before the library's: a handler registered first runs last. */
	cr_assert_eq(pthread_atfork(wait_for_a_yield, NULL, NULL), 0);
	int cpus[1];
	allowed_cpus(cpus, 1);
	lfpool_config c = percpu_config(64, 8, 4);
	struct churn_area w = { .pool = lfpool_ts_create(&c), .cpu = cpus[0] };
	cr_assert_not_null(w.pool);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, get_and_put_on_one_cpu, &w), 0);
	while (!__atomic_load_n(&w.warm, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	__atomic_store_n(&yields, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&waiting_for_a_yield, true, __ATOMIC_RELEASE);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	__atomic_store_n(&waiting_for_a_yield, false, __ATOMIC_RELEASE);
	cr_assert_gt(__atomic_load_n(&yields, __ATOMIC_RELAXED), 0);
	__atomic_store_n(&w.stop, true, __ATOMIC_RELEASE);
	void *ret;
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_eq(ret, &w, "the thread ran on CPU %d", w.cpu);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_eq(lfpool_ts_destroy(w.pool), 0);
	TEST_DEADLINE(0);
}

Test(percpu, max_bytes_counts_the_areas)
{
	lfpool_config c = ts_config(64, 8, 4);
	c.capacity = 100;
	lfpool_ts *t = lfpool_ts_create(&c);
	c.flags = LFPOOL_F_PERCPU;
	lfpool_ts *p = lfpool_ts_create(&c);
	size_t areas = stats_of(p).bytes_held - stats_of(t).bytes_held;
	cr_assert_gt(areas, 0);
	cr_assert_eq(lfpool_ts_max_bytes(p, 0), lfpool_ts_max_bytes(t, 0) + areas);
	cr_assert_eq(lfpool_ts_destroy(t), 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* ---- the fallback path: this program again, with rseq turned off ---- */

/* The environment for the child: ours less Criterion's worker map, with
 * glibc's rseq registration turned off. */
static char **child_env(void)
{
	extern char **environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof(*env));
	size_t k = 0;
	const char *tunables = getenv("GLIBC_TUNABLES");
	static char t[512];
	snprintf(t, sizeof(t), "GLIBC_TUNABLES=%s%sglibc.pthread.rseq=0", tunables ? tunables : "",
		 tunables ? ":" : "");
	env[k++] = t;
	env[k++] = FALLBACK_ENV "=1";
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "BXFI_", 5) != 0 &&
		    strncmp(environ[i], "GLIBC_TUNABLES=", 15) != 0)
			env[k++] = environ[i];
	return env;
}

Test(fallback, the_percpu_suite_passes_on_the_sched_getcpu_path, .timeout = 120)
{
	int out[2];
	cr_assert_eq(pipe(out), 0);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		dup2(out[1], 2);
		dup2(out[1], 1);
		close(out[0]);
		char *argv[] = { "test_percpu", "--filter=percpu/*", "-j1", NULL };
		execve("/proc/self/exe", argv, child_env());
		_exit(127);
	}
	close(out[1]);
	static char log[1 << 16];
	size_t len = 0;
	ssize_t r;
	while ((r = read(out[0], log + len, sizeof(log) - 1 - len)) > 0)
		len += (size_t)r;
	log[len] = '\0';
	close(out[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed:\n%s", log);
	cr_assert_null(strstr(log, "LeakSanitizer"), "the child leaked:\n%s", log);
	const char *syn = strstr(log, "Synthesis: Tested: ");
	cr_assert_not_null(syn, "no summary:\n%s", log);
	int tested, passing, failing, crashing;
	cr_assert_eq(sscanf(syn, "Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d",
			    &tested, &passing, &failing, &crashing), 4, "%s", syn);
	cr_assert_geq(tested, 14, "the whole percpu suite ran:\n%s", log);
	cr_assert_eq(passing, tested, "%s", log);
}
