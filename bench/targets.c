/* SPDX-License-Identifier: MIT */
/*
 * targets.c - the time targets (Pool, ThreadStatic and its per-CPU mode
 * against the floor, malloc and each other), checked against a run's
 * results.
 * A miss is reported, never hidden; the run does not fail on one.  The
 * instruction targets are checked by bench/instr.sh.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define TARGET_SIZE 64
/* A verdict's repetitions spread more than this (max - min over the
 * median): the machine was too noisy for it to be trusted. */
#define NOISY_SPREAD 0.25

static const char *const mallocs[] = { "glibc", "mimalloc", "jemalloc", "tcmalloc" };

static const struct result *find(const struct result *res, size_t n, const char *impl,
				 enum pattern p, unsigned threads)
{
	for (size_t i = 0; i < n; i++)
		if (res[i].pattern == p && res[i].threads == threads &&
		    res[i].obj_size == TARGET_SIZE && strcmp(res[i].impl->name, impl) == 0)
			return &res[i];
	return NULL;
}

static double spread(const struct result *r)
{
	return r->ns > 0 ? (r->max - r->min) / r->ns : 0;
}

/* The caveat under a MISSED verdict whose measurements were noisy. */
static void noise_caveat(const struct result *a, const struct result *b)
{
	const struct result *worst = spread(a) >= spread(b) ? a : b;
	if (spread(worst) <= NOISY_SPREAD)
		return;
	printf("    caveat: %s (%s, %u thr) spread %.2f..%.2f ns over its repetitions,"
	       " %.0f%% of its median (> %.0f%%): a noisy machine; rerun before trusting"
	       " this verdict\n", worst->impl->name, pattern_names[worst->pattern],
	       worst->threads, worst->min, worst->max, 100 * spread(worst), 100 * NOISY_SPREAD);
}

static void verdict(const char *what, const struct result *a, const struct result *b,
		    double value, bool met)
{
	if (!a || !b) {
		printf("  %-62s    n/a  (not measured)\n", what);
		return;
	}
	printf("  %-62s %6.2f  %s\n", what, value, met ? "met" : "MISSED");
	if (!met)
		noise_caveat(a, b);
}

/* The fastest malloc in pattern p, single-threaded (xthread: two threads). */
static const struct result *fastest_malloc(const struct result *res, size_t n,
					   enum pattern p, unsigned threads)
{
	const struct result *best = NULL;
	for (size_t i = 0; i < sizeof(mallocs) / sizeof(mallocs[0]); i++) {
		const struct result *r = find(res, n, mallocs[i], p, threads);
		if (r && (!best || r->ns < best->ns))
			best = r;
	}
	return best;
}

/* Throughput on 2 threads over 1 thread, in the scaling pattern. */
static void scaling_verdict(const struct result *res, size_t n, const char *impl,
			    const char *what)
{
	const struct result *one = find(res, n, impl, PAT_SCALING, 1);
	const struct result *two = find(res, n, impl, PAT_SCALING, 2);
	double speedup = one && two ? 2 * one->ns / two->ns : 0;
	verdict(what, one, two, speedup, speedup >= 1.9);
}

/* Concurrent against mutex-pool in every pattern and thread count measured. */
static void concurrent_vs_mutex(const struct result *res, size_t n)
{
	const struct result *worst = NULL, *worst_m = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(res[i].impl->name, "lfpool-concurrent") != 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (strcmp(res[j].impl->name, "mutex-pool") == 0 &&
			    res[j].pattern == res[i].pattern && res[j].threads == res[i].threads &&
			    res[j].obj_size == res[i].obj_size &&
			    (!worst || res[i].ns / res[j].ns > worst->ns / worst_m->ns)) {
				worst = &res[i];
				worst_m = &res[j];
			}
	}
	char what[128];
	snprintf(what, sizeof(what), "Concurrent/mutex-pool time, worst case (%s, %u thr) <= 1",
		 worst ? pattern_names[worst->pattern] : "-", worst ? worst->threads : 0);
	verdict(what, worst, worst_m, worst ? worst->ns / worst_m->ns : 0,
		worst && worst->ns <= worst_m->ns);
}

/* a/b <= limit, both at pattern p on threads threads; returns nothing. */
static void ratio_at_most(const struct result *res, size_t n, const char *a, const char *b,
			  enum pattern p, unsigned threads, double limit)
{
	const struct result *x = find(res, n, a, p, threads), *y = find(res, n, b, p, threads);
	char what[128];
	snprintf(what, sizeof(what), "%s/%s time, %s, %u thr <= %.1f", a, b, pattern_names[p],
		 threads, limit);
	verdict(what, x, y, x && y ? x->ns / y->ns : 0, x && y && x->ns <= limit * y->ns);
}

/* The fast paths: implicit and per-CPU against the floor, Concurrent
 * against ck_stack, array pools against an explicit cache. */
static void fast_path_targets(const struct result *res, size_t n, const struct result *floor,
			      const struct result *fm)
{
	ratio_at_most(res, n, "lfpool-threadstatic", "floor", PAT_SCALING, 2, 1.3);
	ratio_at_most(res, n, "lfpool-percpu", "floor", PAT_PAIR, 1, 2.0);
	const struct result *pc = find(res, n, "lfpool-percpu", PAT_PAIR, 1);
	verdict("fastest malloc/Per-CPU time, pair (info)", pc, fm, pc && fm ? fm->ns / pc->ns : 0,
		true);
	ratio_at_most(res, n, "lfpool-concurrent", "ck_stack", PAT_PAIR, 1, 1.2);
	for (unsigned t = 1; t <= cpus_available(); t++) {
		ratio_at_most(res, n, "lfpool-concurrent", "ck_stack", PAT_SCALING, t, 1.0);
		ratio_at_most(res, n, "lfpool-concurrent", "mutex-pool", PAT_SCALING, t, 1.0);
		ratio_at_most(res, n, "lfpool-concurrent", "spin-pool", PAT_SCALING, t, 1.0);
	}
	ratio_at_most(res, n, "lfpool-array", "lfpool-cache", PAT_PAIR, 1, 2.0);
	ratio_at_most(res, n, "lfpool-array-const", "lfpool-cache", PAT_PAIR, 1, 1.2);
	(void)floor;
}

void report_targets(const struct result *res, size_t n)
{
	const struct result *floor = find(res, n, "floor", PAT_PAIR, 1);
	const struct result *pool = find(res, n, "lfpool-pool", PAT_PAIR, 1);
	const struct result *ts = find(res, n, "lfpool-threadstatic", PAT_PAIR, 1);
	const struct result *fm = fastest_malloc(res, n, PAT_PAIR, 1);
	printf("\n== targets (time, %d B; instruction targets: make bench-instr)\n", TARGET_SIZE);
	verdict("Pool/floor time, pair (target is <= 1.1x in instructions)", pool, floor,
		pool && floor ? pool->ns / floor->ns : 0, pool && floor && pool->ns <= 1.1 * floor->ns);
	verdict("ThreadStatic/floor time, pair <= 1.3", ts, floor,
		ts && floor ? ts->ns / floor->ns : 0, ts && floor && ts->ns <= 1.3 * floor->ns);
	char what[128];
	snprintf(what, sizeof(what), "fastest malloc (%s)/ThreadStatic time, pair >= 2",
		 fm ? fm->impl->name : "-");
	verdict(what, ts, fm, ts && fm ? fm->ns / ts->ns : 0, ts && fm && fm->ns >= 2 * ts->ns);

	scaling_verdict(res, n, "lfpool-threadstatic",
			"ThreadStatic throughput, 2 threads / 1 thread >= 1.9");
	concurrent_vs_mutex(res, n);

	const struct result *tsx = find(res, n, "lfpool-threadstatic", PAT_XTHREAD, 2);
	const struct result *fx = fastest_malloc(res, n, PAT_XTHREAD, 2);
	snprintf(what, sizeof(what), "xthread: fastest malloc (%s)/ThreadStatic time > 1",
		 fx ? fx->impl->name : "-");
	verdict(what, tsx, fx, tsx && fx ? fx->ns / tsx->ns : 0, tsx && fx && tsx->ns < fx->ns);

	fast_path_targets(res, n, floor, fm);

	const struct result *pc = find(res, n, "lfpool-percpu", PAT_PAIR, 1);
	verdict("Per-CPU/ThreadStatic time, pair <= 1.5", pc, ts,
		pc && ts ? pc->ns / ts->ns : 0, pc && ts && pc->ns <= 1.5 * ts->ns);
	scaling_verdict(res, n, "lfpool-percpu",
			"Per-CPU throughput, 2 threads / 1 thread >= 1.9");
}
