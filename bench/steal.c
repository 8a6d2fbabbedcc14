/* SPDX-License-Identifier: MIT */
/*
 * steal.c - pattern "steal": what a get costs that runs the pool to
 * exhaustion and must steal.  Two threads share a ThreadStatic
 * pool of capacity STEAL_CAP; in turn each gets all STEAL_CAP objects one at
 * a time and puts them back into its own cache.  The other thread's cache
 * (per-CPU pools: the other CPU's area) then holds every object, so every
 * get of the next turn finds nothing at home, may create nothing, and
 * steals one object (at capacity a steal takes only what the get needs):
 * one stop, one membarrier and one restart per get.  Printed beside the
 * cost of a hit (pair on a pool with room), measured in the same run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "lfpool/ts.h"

#define STEAL_CAP 128
#define STEAL_TURNS 40		/* per repetition, both threads together */
#define STEAL_REPS 5

struct steal_run {
	lfpool_ts *pool;
	pthread_barrier_t turn;
	int cpu[2];
	double ns[2];		/* time in this repetition's stealing gets */
};

struct steal_arg {
	struct steal_run *r;
	int me;
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pin_self(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *stealer(void *arg)
{
	struct steal_arg *a = arg;
	struct steal_run *r = a->r;
	void *objs[STEAL_CAP];
	pin_self(r->cpu[a->me]);
	r->ns[a->me] = 0;
	for (unsigned t = 0; t < STEAL_TURNS; t++) {
		if (t % 2 == (unsigned)a->me) {
			double t0 = now_ns();
			for (unsigned i = 0; i < STEAL_CAP; i++)
				objs[i] = bench_got(lfpool_ts_get(r->pool));
			r->ns[a->me] += now_ns() - t0;
			for (unsigned i = 0; i < STEAL_CAP; i++)
				lfpool_ts_put(r->pool, objs[i]);
		}
		pthread_barrier_wait(&r->turn);
	}
	return NULL;
}

/* ns per stealing get, one repetition. */
static double steal_once(unsigned flags, const int cpu[2])
{
	lfpool_config cfg = { .obj_size = 64, .capacity = STEAL_CAP, .flags = flags,
			      .name = "steal" };
	struct steal_run r = { .pool = lfpool_ts_create(&cfg), .cpu = { cpu[0], cpu[1] } };
	if (!r.pool)
		bench_die("steal: lfpool_ts_create failed");
	pthread_barrier_init(&r.turn, NULL, 2);
	pthread_t th[2];
	struct steal_arg a[2] = { { &r, 0 }, { &r, 1 } };
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, stealer, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&r.turn);
	lfpool_ts_destroy(r.pool);
	/* The first turn creates the objects: not a steal. */
	return (r.ns[0] + r.ns[1]) / ((STEAL_TURNS - 1) * (double)STEAL_CAP);
}

/* ns per get or put of a hit (pair), one repetition. */
static double hit_once(unsigned flags)
{
	lfpool_config cfg = { .obj_size = 64, .flags = flags, .name = "hit" };
	lfpool_ts *p = lfpool_ts_create(&cfg);
	if (!p)
		bench_die("steal: lfpool_ts_create failed");
	const unsigned n = 1u << 20;
	lfpool_ts_put(p, bench_got(lfpool_ts_get(p)));
	double t0 = now_ns();
	for (unsigned i = 0; i < n; i++) {
		void *o = bench_got(lfpool_ts_get(p));
		lfpool_ts_put(p, o);
		bench_barrier();
	}
	double ns = (now_ns() - t0) / (2.0 * n);
	lfpool_ts_destroy(p);
	return ns;
}

void report_steal(const char *jsonl)
{
	cpu_set_t allowed;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	int cpu[2] = { -1, -1 }, n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpu[n++] = c;
	if (n < 2)
		cpu[1] = cpu[0];
	static const struct { const char *impl; unsigned flags; } modes[] = {
		{ "lfpool-threadstatic", 0 }, { "lfpool-percpu", LFPOOL_F_PERCPU },
	};
	printf("\n== steal: two threads on CPUs %d and %d take turns getting all %d objects"
	       " of a pool of capacity %d one at a time (every get steals one from the other's"
	       " cache or CPU area); %d reps\n", cpu[0], cpu[1], STEAL_CAP, STEAL_CAP, STEAL_REPS);
	printf("  %-20s %14s %20s %12s %10s\n", "implementation", "ns/steal get", "min..max",
	       "ns/hit op", "steal/hit");
	FILE *f = jsonl ? fopen(jsonl, "a") : NULL;
	if (jsonl && !f)
		bench_die("cannot append to %s", jsonl);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		double s[STEAL_REPS], h[STEAL_REPS];
		for (int i = 0; i < STEAL_REPS; i++) {
			s[i] = steal_once(modes[m].flags, cpu);
			h[i] = hit_once(modes[m].flags);
		}
		double med = bench_sort_median(s, STEAL_REPS);
		double hit = bench_sort_median(h, STEAL_REPS);
		printf("  %-20s %14.0f %9.0f..%-9.0f %12.2f %10.0f\n", modes[m].impl, med, s[0],
		       s[STEAL_REPS - 1], hit, med / hit);
		if (f)
			fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"steal\",\"threads\":2,\"obj_size\":64,"
				"\"ns\":%.1f,\"min\":%.1f,\"max\":%.1f,\"hit_ns\":%.2f,\"reps\":%d}\n",
				modes[m].impl, med, s[0], s[STEAL_REPS - 1], hit, STEAL_REPS);
	}
	if (f && fclose(f) != 0)
		bench_die("cannot write %s", jsonl);
}
