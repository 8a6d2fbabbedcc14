/* SPDX-License-Identifier: MIT */
/*
 * measure.c - one measurement: pinned threads run a calibration phase, a
 * warm-up and the repetitions, each phase started together at a barrier and
 * timed from the first thread's start to the last thread's end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define MAX_THREADS 256
/* Operations per thread of the calibration phase: short even for a slow
 * implementation on all threads. */
#define CALIBRATION_OPS (OPS_QUANTUM * 64)
#define PHASE_CALIBRATE (-2)
#define PHASE_WARMUP (-1)

static int cpu_list[CPU_SETSIZE];
static unsigned ncpus;

unsigned cpus_available(void)
{
	if (ncpus)
		return ncpus;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		bench_die("sched_getaffinity failed");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpu_list[ncpus++] = c;
	if (ncpus > MAX_THREADS)
		ncpus = MAX_THREADS;
	return ncpus;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct run {
	const struct impl *im;
	void *shared;
	enum pattern pattern;
	unsigned threads;
	const struct plan *plan;
	pthread_barrier_t barrier;
	struct xring *ring;		/* xthread only */
	uint64_t ops;			/* per thread in the coming phase */
	uint64_t all_ops;		/* per thread in the phases done */
	uint64_t start[MAX_THREADS], end[MAX_THREADS];
	double *samples;		/* ns per operation, one per repetition */
};

struct worker {
	struct run *s;
	unsigned id;
	pthread_t tid;
};

/* This thread's share of one phase: xthread's thread 0 gets, 1 puts. */
static void run_phase(struct run *s, unsigned id, void *h, uint64_t ops)
{
	if (s->pattern != PAT_XTHREAD)
		run_pattern(s->im, h, s->pattern, ops);
	else if (id == 0)
		s->im->loops->xget(h, s->ring, ops);
	else
		s->im->loops->xput(h, s->ring, ops);
}

/* Thread 0, once a phase is over: scale ops to the planned repetition
 * time after calibrating, record a sample after each repetition. */
static void account(struct run *s, int phase)
{
	uint64_t start = UINT64_MAX, end = 0;
	for (unsigned i = 0; i < s->threads; i++) {
		if (s->start[i] < start)
			start = s->start[i];
		if (s->end[i] > end)
			end = s->end[i];
	}
	double wall = (double)(end - start);
	s->all_ops += s->ops;
	if (phase == PHASE_CALIBRATE) {
		double ops = (double)s->ops * s->plan->rep_ns / (wall > 1 ? wall : 1);
		uint64_t q = (uint64_t)ops / OPS_QUANTUM;
		s->ops = (q ? q : 1) * OPS_QUANTUM;
	} else if (phase >= 0) {
		s->samples[phase] = wall / (double)s->ops;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *s = w->s;
	void *h = s->im->attach(s->shared);
	for (int phase = PHASE_CALIBRATE; phase < (int)s->plan->reps; phase++) {
		pthread_barrier_wait(&s->barrier);
		uint64_t ops = s->ops;
		s->start[w->id] = now_ns();
		run_phase(s, w->id, h, ops);
		s->end[w->id] = now_ns();
		pthread_barrier_wait(&s->barrier);
		if (w->id == 0)
			account(s, phase);
	}
	s->im->detach(s->shared, h);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_sort_median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Start the workers, each pinned to its CPU (round-robin), and join them. */
static void run_workers(struct run *s)
{
	struct worker w[MAX_THREADS];
	unsigned n = cpus_available();
	for (unsigned i = 0; i < s->threads; i++) {
		pthread_attr_t attr;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu_list[i % n], &set);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		w[i] = (struct worker){ .s = s, .id = i };
		if (pthread_create(&w[i].tid, &attr, worker_main, &w[i]) != 0)
			bench_die("pthread_create failed");
		pthread_attr_destroy(&attr);
	}
	for (unsigned i = 0; i < s->threads; i++)
		pthread_join(w[i].tid, NULL);
}

void measure(const struct impl *im, void *shared, enum pattern p, unsigned threads,
	     size_t obj_size, const struct plan *plan, struct result *out)
{
	if (threads == 0 || threads > MAX_THREADS || (p == PAT_XTHREAD && threads != 2))
		bench_die("%s: %u threads is not a valid count", pattern_names[p], threads);
	struct run *s = calloc(1, sizeof(*s));
	double *samples = calloc(plan->reps, sizeof(double));
	if (!s || !samples)
		bench_die("out of memory");
	*s = (struct run){ .im = im, .shared = shared, .pattern = p, .threads = threads,
			       .plan = plan, .ops = CALIBRATION_OPS, .samples = samples };
	if (p == PAT_XTHREAD) {
		s->ring = aligned_alloc(64, sizeof(*s->ring));
		if (!s->ring)
			bench_die("out of memory");
		memset(s->ring, 0, sizeof(*s->ring));
	}
	uint64_t e0 = 0, f0 = 0, e1 = 0, f1 = 0;
	if (im->contention)
		im->contention(shared, &e0, &f0);
	pthread_barrier_init(&s->barrier, NULL, threads);
	run_workers(s);
	pthread_barrier_destroy(&s->barrier);
	if (im->contention)
		im->contention(shared, &e1, &f1);
	double all = (double)s->all_ops * threads;

	unsigned r = plan->reps;
	double med = bench_sort_median(samples, r);
	*out = (struct result){
		.impl = im, .pattern = p, .threads = threads, .obj_size = obj_size,
		.ns = med,
		.min = samples[0], .max = samples[r - 1], .reps = r, .ops = s->ops,
		.eliminated = im->contention ? (double)(e1 - e0) / all : -1,
		.cas_failed = im->contention ? (double)(f1 - f0) / all : -1,
	};
	free(s->ring);
	free(samples);
	free(s);
}
