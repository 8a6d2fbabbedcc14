/* SPDX-License-Identifier: MIT */
/*
 * jobs.c - a small work-stealing job system whose jobs are pooled closures.
 *
 * N workers, each with a Chase-Lev deque (deque.h).  Every job is a pooled
 * closure taken from the spawning worker's own cache handle (worker-index
 * mode of a ThreadStatic pool) and released into the cache of whichever
 * worker ran it - often another one.  Workers take their cache slot in a
 * start hook and release it in a stop hook.  The same scheduler runs with
 * malloc/free jobs, and both jobs-per-second figures are printed.
 *
 * Workloads: a fan-out/fan-in tree, a parallel-for (one job per index) and
 * a fiber-style job that suspends on one worker and resumes on another,
 * using its own explicit cache handle throughout.  Every job is counted;
 * the run fails if any ran twice or never, or if the pools lost or kept
 * more than they should.
 *
 * Usage: jobs [--workers N] [--items N] [--depth N] [--jsonl FILE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lfpool.h>

#include "deque.h"

#define CAPTURE_MAX 32

/* ---- jobs: the same closure layout with either allocator ---- */

enum job_alloc { JOBS_LFPOOL, JOBS_MALLOC };

struct worker;

struct sched {
	enum job_alloc alloc;
	unsigned nworkers;
	struct worker *workers;
	lfpool_closure_pool *closures;	/* JOBS_LFPOOL */
	lfpool_ts *joins;		/* join records, JOBS_LFPOOL */
	lfpool_closure *inbox;		/* a job from outside the workers */
	lfpool_closure *parked;		/* a suspended fiber's next step */
	unsigned parked_by;		/* the worker it suspended on */
	int done;			/* the root's join completed */
	int stop;			/* workers exit */
	pthread_barrier_t start;
};

struct worker {
	struct deque dq;
	struct sched *s;
	unsigned id;
	uint64_t rng;
	uint64_t spawned, ran;
	uint64_t tree_nodes;
	lfpool_ts_cache *closure_cache;	/* this worker's slot caches */
	lfpool_ts_cache *join_cache;
	pthread_t thread;
} __attribute__((aligned(64)));

/* A join: how many jobs still have to finish before its parent is told.
 * The root join belongs to the main thread and marks the run done. */
struct join {
	int64_t pending;
	struct join *parent;
	int root;
};

static void *job_new(struct worker *w, lfpool_closure_fn fn, const void *cap, size_t size)
{
	if (w->s->alloc == JOBS_LFPOOL)
		return lfpool_closure_get_cache(w->s->closures, w->closure_cache, fn, cap, size);
	return lfpool_closure_arm(malloc(sizeof(lfpool_closure) + CAPTURE_MAX), fn, cap, size);
}

static void job_done(struct worker *w, lfpool_closure *c)
{
	if (w->s->alloc == JOBS_LFPOOL)
		lfpool_closure_release_cache(w->closure_cache, c);
	else
		free(c);
}

static struct join *join_new(struct worker *w, struct join *parent, int64_t pending)
{
	struct join *j = w->s->alloc == JOBS_LFPOOL ? lfpool_ts_cache_get(w->join_cache)
						    : malloc(sizeof(*j));
	if (!j) {
		perror("jobs: join record");
		exit(1);
	}
	j->pending = pending;
	j->parent = parent;
	j->root = 0;
	return j;
}

/* One job of j has finished; complete j (and upwards) when it was the last. */
static void join_arrive(struct worker *w, struct join *j)
{
	while (__atomic_sub_fetch(&j->pending, 1, __ATOMIC_ACQ_REL) == 0) {
		struct join *parent = j->parent;
		if (j->root) {
			__atomic_store_n(&w->s->done, 1, __ATOMIC_RELEASE);
			return;
		}
		if (w->s->alloc == JOBS_LFPOOL)
			lfpool_ts_cache_put(w->join_cache, j);
		else
			free(j);
		j = parent;
	}
}

static void spawn(struct worker *w, lfpool_closure_fn fn, const void *cap, size_t size)
{
	lfpool_closure *c = job_new(w, fn, cap, size);
	if (!c) {
		perror("jobs: job");
		exit(1);
	}
	w->spawned++;
	if (!deque_push(&w->dq, c)) {	/* full: run it here */
		lfpool_closure_invoke(c, w);
		w->ran++;
		job_done(w, c);
	}
}

/* ---- the scheduler ---- */

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static lfpool_closure *find_job(struct worker *w)
{
	struct sched *s = w->s;
	lfpool_closure *c = deque_take(&w->dq);
	if (!c && __atomic_load_n(&s->inbox, __ATOMIC_RELAXED))
		c = __atomic_exchange_n(&s->inbox, NULL, __ATOMIC_ACQ_REL);
	/* A parked fiber resumes only on a worker other than its last one. */
	if (!c && __atomic_load_n(&s->parked, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&s->parked_by, __ATOMIC_RELAXED) != w->id)
		c = __atomic_exchange_n(&s->parked, NULL, __ATOMIC_ACQ_REL);
	for (unsigned i = 0; !c && i < 2 * w->s->nworkers; i++) {
		struct worker *v = &w->s->workers[xorshift(&w->rng) % w->s->nworkers];
		if (v != w)
			c = deque_steal(&v->dq);
	}
	return c;
}

/* Start hook: the worker takes its cache slots.  Stop hook: gives them back. */
static void worker_start(struct worker *w)
{
	if (w->s->alloc != JOBS_LFPOOL)
		return;
	w->closure_cache = lfpool_ts_worker_cache(lfpool_closure_pool_ts(w->s->closures), w->id);
	w->join_cache = lfpool_ts_worker_cache(w->s->joins, w->id);
	if (!w->closure_cache || !w->join_cache) {
		perror("jobs: worker cache");
		exit(1);
	}
}

static void worker_stop(struct worker *w)
{
	if (w->s->alloc != JOBS_LFPOOL)
		return;
	lfpool_ts_worker_release(lfpool_closure_pool_ts(w->s->closures), w->id);
	lfpool_ts_worker_release(w->s->joins, w->id);
	w->closure_cache = w->join_cache = NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->id % (unsigned)sysconf(_SC_NPROCESSORS_ONLN), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	worker_start(w);
	pthread_barrier_wait(&w->s->start);
	while (!__atomic_load_n(&w->s->stop, __ATOMIC_ACQUIRE)) {
		lfpool_closure *c = find_job(w);
		if (!c) {
			sched_yield();
			continue;
		}
		lfpool_closure_invoke(c, w);
		w->ran++;
		job_done(w, c);
	}
	worker_stop(w);
	return NULL;
}

/* ---- workloads ---- */

/* A fan-out/fan-in tree: each node of depth d > 0 spawns two children and
 * completes when both have; leaves complete at once. */
struct tree_cap {
	int depth;
	struct join *join;
};

static void tree_job(void *cap, void *arg)
{
	const struct tree_cap *t = cap;
	struct worker *w = arg;
	w->tree_nodes++;
	if (t->depth == 0) {
		join_arrive(w, t->join);
		return;
	}
	struct tree_cap child = { t->depth - 1, join_new(w, t->join, 2) };
	spawn(w, tree_job, &child, sizeof(child));
	spawn(w, tree_job, &child, sizeof(child));
}

/* A parallel-for: ranges split in halves down to GRAIN indices, then one
 * job per index, which marks its index in hits[]. */
#define GRAIN 64
static uint8_t *hits;

struct range_cap {
	uint64_t lo, hi;
	struct join *join;
};

struct item_cap {
	uint64_t i;
	struct join *join;
};

static void item_job(void *cap, void *arg)
{
	const struct item_cap *it = cap;
	__atomic_fetch_add(&hits[it->i], 1, __ATOMIC_RELAXED);
	join_arrive(arg, it->join);
}

static void range_job(void *cap, void *arg)
{
	const struct range_cap *r = cap;
	struct worker *w = arg;
	if (r->hi - r->lo > GRAIN) {
		uint64_t mid = r->lo + (r->hi - r->lo) / 2;
		struct join *j = join_new(w, r->join, 2);
		struct range_cap a = { r->lo, mid, j }, b = { mid, r->hi, j };
		spawn(w, range_job, &b, sizeof(b));
		spawn(w, range_job, &a, sizeof(a));
	} else {
		struct join *j = join_new(w, r->join, (int64_t)(r->hi - r->lo));
		for (uint64_t i = r->lo; i < r->hi; i++) {
			struct item_cap it = { i, j };
			spawn(w, item_job, &it, sizeof(it));
		}
	}
}

/* A fiber-style job: it suspends on one worker and resumes on another, and
 * carries its own explicit cache handle, never a thread's.  At each step it
 * checks and returns the objects it took at the previous step (on another
 * thread), then takes new ones. */
#define FIBER_HOLD 8
#define FIBER_STEPS 64

struct fiber {
	lfpool_ts_cache *cache;		/* explicit handle: moves with the fiber */
	void *held[FIBER_HOLD];
	unsigned step, migrations, last_worker;
	struct join *join;
};

struct fiber_cap {
	struct fiber *f;
};

static void fiber_job(void *cap, void *arg)
{
	struct fiber *f = ((struct fiber_cap *)cap)->f;
	struct worker *w = arg;
	if (f->step > 0 && f->last_worker != w->id)
		f->migrations++;
	for (unsigned i = 0; i < FIBER_HOLD && f->step > 0; i++) {
		if (*(uintptr_t *)f->held[i] != (uintptr_t)f + f->step - 1) {
			fprintf(stderr, "jobs: fiber object changed while held\n");
			exit(1);
		}
		lfpool_ts_cache_put(f->cache, f->held[i]);
	}
	if (f->step == FIBER_STEPS) {
		join_arrive(w, f->join);
		return;
	}
	if (lfpool_ts_cache_get_bulk(f->cache, f->held, FIBER_HOLD) != 0) {
		perror("jobs: fiber get");
		exit(1);
	}
	for (unsigned i = 0; i < FIBER_HOLD; i++)
		*(uintptr_t *)f->held[i] = (uintptr_t)f + f->step;
	f->last_worker = w->id;
	f->step++;
	/* Suspend: park the next step for another worker to resume. */
	lfpool_closure *next = job_new(w, fiber_job, cap, sizeof(struct fiber_cap));
	w->spawned++;
	lfpool_closure *expect = NULL;
	__atomic_store_n(&w->s->parked_by, w->id, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&w->s->parked, &expect, next, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		expect = NULL;
}

/* ---- driver ---- */

/* Hand root to the workers and wait for its join. */
static double run_root(struct sched *s, lfpool_closure_fn fn, void *cap, size_t size,
		       struct join *root)
{
	struct timespec a, b;
	root->pending = 1;
	root->parent = NULL;
	root->root = 1;
	__atomic_store_n(&s->done, 0, __ATOMIC_RELAXED);
	lfpool_closure *c = s->alloc == JOBS_LFPOOL ? lfpool_closure_get(s->closures, fn, cap, size)
		: lfpool_closure_arm(malloc(sizeof(lfpool_closure) + CAPTURE_MAX), fn, cap, size);
	if (!c) {
		perror("jobs: root job");
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	__atomic_store_n(&s->inbox, c, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE))
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

static uint64_t total(const struct sched *s, int ran)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < s->nworkers; i++)
		n += ran ? s->workers[i].ran : s->workers[i].spawned;
	return n;
}

struct options {
	unsigned workers;
	uint64_t items;
	int depth;
	const char *jsonl;
};

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "jobs: FAILED: %s\n", what);
		failures++;
	}
}

/* Run all three workloads with one allocator; returns jobs per second. */
static double run(enum job_alloc alloc, const struct options *o)
{
	struct sched s = { .alloc = alloc, .nworkers = o->workers };
	lfpool_ts *fiber_pool = NULL;
	if (alloc == JOBS_LFPOOL) {
		/* Jobs alive at most: full deques and a job running per worker;
		 * plus the magazines of every worker's cache and the main
		 * thread's, which a get at capacity could steal (lfpool/ts.h,
		 * "Sizing a bounded pool"), kept as headroom so that spawns never
		 * pay for a steal. */
		size_t jobs_max = o->workers * (DEQUE_SIZE + 1 + 2 * 64) + 2 * 64;
		lfpool_config cc = { .obj_size = CAPTURE_MAX, .capacity = jobs_max,
				     .magazine_size = 64, .name = "jobs" };
		lfpool_config jc = { .obj_size = sizeof(struct join), .name = "joins" };
		s.closures = lfpool_closure_pool_create(LFPOOL_FLAVOUR_TS, &cc);
		s.joins = lfpool_ts_create(&jc);
		if (!s.closures || !s.joins) {
			perror("jobs: pools");
			exit(1);
		}
	}
	s.workers = aligned_alloc(64, sizeof(struct worker) * o->workers);
	memset(s.workers, 0, sizeof(struct worker) * o->workers);
	pthread_barrier_init(&s.start, NULL, o->workers + 1);
	for (unsigned i = 0; i < o->workers; i++) {
		struct worker *w = &s.workers[i];
		deque_init(&w->dq);
		w->s = &s;
		w->id = i;
		w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
		pthread_create(&w->thread, NULL, worker_main, w);
	}
	pthread_barrier_wait(&s.start);

	struct join root;
	double secs = 0;

	struct tree_cap t = { o->depth, &root };
	secs += run_root(&s, tree_job, &t, sizeof(t), &root);
	uint64_t nodes = 0;
	for (unsigned i = 0; i < o->workers; i++)
		nodes += s.workers[i].tree_nodes;	/* written before the root's join completed */
	check(nodes == (2ull << o->depth) - 1, "tree: every node ran exactly once");

	hits = calloc(o->items, 1);
	struct range_cap r = { 0, o->items, &root };
	secs += run_root(&s, range_job, &r, sizeof(r), &root);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < o->items; i++)
		bad += hits[i] != 1;
	check(bad == 0, "parallel-for: every index ran exactly once");
	free(hits);

	if (alloc == JOBS_LFPOOL && o->workers >= 2) {
		lfpool_config fc = { .obj_size = sizeof(uintptr_t), .magazine_size = 4, .name = "fiber" };
		fiber_pool = lfpool_ts_create(&fc);
		struct fiber f = { .cache = lfpool_ts_cache_create(fiber_pool) };
		if (!fiber_pool || !f.cache) {
			perror("jobs: fiber pool");
			exit(1);
		}
		f.join = &root;
		struct fiber_cap fcap = { &f };
		run_root(&s, fiber_job, &fcap, sizeof(fcap), &root);
		check(f.step == FIBER_STEPS && f.migrations == FIBER_STEPS,
		      "fiber: resumed on another worker at every step");
		lfpool_ts_cache_destroy(f.cache);
		lfpool_stats st;
		lfpool_ts_stats(fiber_pool, &st);
		check(st.live == 0 && st.created == st.retained,
		      "fiber: every object it took came back");
		check(lfpool_ts_destroy(fiber_pool) == 0, "fiber: pool destroyed");
	}

	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < o->workers; i++)
		pthread_join(s.workers[i].thread, NULL);
	uint64_t ran = total(&s, 1);
	check(ran == total(&s, 0) + 3 - (alloc == JOBS_LFPOOL && o->workers >= 2 ? 0 : 1),
	      "every job spawned ran exactly once");

	if (alloc == JOBS_LFPOOL) {
		lfpool_stats st;
		lfpool_closure_pool_stats(s.closures, &st);
		lfpool_ts *cts = lfpool_closure_pool_ts(s.closures);
		/* Caches alive at most: one per worker and the main thread's. */
		size_t bound = lfpool_ts_max_bytes(cts, o->workers + 1);
		printf("jobs: closures created %llu, retained %llu, live %llu, bytes held %llu (bound %zu)\n",
		       (unsigned long long)st.created, (unsigned long long)st.retained,
		       (unsigned long long)st.live, (unsigned long long)st.bytes_held, bound);
		check(st.live == 0 && st.created == st.retained, "closures: nothing lost");
		check(st.bytes_held <= bound, "closures: memory within the documented bound");
		lfpool_ts_stats(s.joins, &st);
		check(st.live == 0 && st.created == st.retained, "joins: nothing lost");
		lfpool_ts_flush(cts);
		check(lfpool_closure_pool_destroy(s.closures) == 0, "closure pool destroyed");
		check(lfpool_ts_destroy(s.joins) == 0, "join pool destroyed");
	}
	pthread_barrier_destroy(&s.start);
	free(s.workers);
	return (double)ran / secs;
}

int main(int argc, char **argv)
{
	struct options o = { .workers = 2, .items = 10000000, .depth = 18 };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			o.workers = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--items") && i + 1 < argc)
			o.items = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
			o.depth = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--jsonl") && i + 1 < argc)
			o.jsonl = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--workers N] [--items N] [--depth N] [--jsonl FILE]\n", argv[0]);
			return 2;
		}
	}
	if (o.workers == 0 || o.items == 0 || o.depth < 0 || o.depth > 30) {
		fprintf(stderr, "jobs: bad option value\n");
		return 2;
	}
	double pooled = run(JOBS_LFPOOL, &o);
	double mallocd = run(JOBS_MALLOC, &o);
	printf("jobs: %u workers, tree depth %d, parallel-for of %llu jobs\n", o.workers, o.depth,
	       (unsigned long long)o.items);
	printf("jobs: lfpool %.2f M jobs/s, malloc %.2f M jobs/s, ratio %.2f\n", pooled / 1e6,
	       mallocd / 1e6, pooled / mallocd);
	if (o.jsonl) {
		FILE *f = fopen(o.jsonl, "a");
		if (!f) {
			perror(o.jsonl);
			return 1;
		}
		const char *names[2] = { "lfpool-cache", "glibc" };
		double rates[2] = { pooled, mallocd };
		for (int i = 0; i < 2; i++)
			fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"jobs\",\"threads\":%u,\"obj_size\":%d,"
				"\"ns_per_op\":%.3f,\"min\":%.3f,\"max\":%.3f,\"reps\":1,\"jobs_per_s\":%.0f}\n",
				names[i], o.workers, CAPTURE_MAX, 1e9 / rates[i], 1e9 / rates[i],
				1e9 / rates[i], rates[i]);
		fclose(f);
	}
	return failures ? 1 : 0;
}
