/* SPDX-License-Identifier: MIT */
/*
 * placement.c - what code placement alone does to a pair's time (pattern
 * "placement"; an information line, no target).
 *
 * The bench's pair loop (loops.h) of the floor, the implicit ThreadStatic
 * calls (a per-thread and a per-CPU pool, as lfpool-threadstatic and
 * lfpool-percpu run them) and the explicit cache, compiled PLACEMENTS
 * times, each copy at another offset in the 64-byte lines the CPU fetches
 * (placement_copy.h).  The instructions are the same in every copy; only
 * their addresses differ.  On a 2-CPU AMD EPYC (Zen 5), 2026-12-02, the
 * floor's pair took 0.30 to 0.58 ns per operation
 * over 16 placements in a scratch program, and a change to the per-CPU
 * path of lfpool_ts_get/put moved the bench's home loop, the same
 * instructions at another address, from 0.45 to 0.60: a single
 * placement's ratio says as much about where the loops fell as about the
 * code.  Printed per implementation: the least, median and greatest over
 * placements of each placement's time (the median of ROUNDS measurements
 * of 5 repetitions of 10 ms, taken in rotating order), each over the
 * floor's same statistic, and the widest spread of one placement's
 * rounds (noise, to weigh the rest by).  The main tables' loops, aligned
 * to 64 bytes, are at yet another placement.
 */
#include <stdio.h>

#include "floor.h"
#include "lfpool.h"

#define PLACEMENTS 8
#define ROUNDS 3

#define PL_K 0
#include "placement_copy.h"
#undef PL_K
#define PL_K 1
#include "placement_copy.h"
#undef PL_K
#define PL_K 2
#include "placement_copy.h"
#undef PL_K
#define PL_K 3
#include "placement_copy.h"
#undef PL_K
#define PL_K 4
#include "placement_copy.h"
#undef PL_K
#define PL_K 5
#include "placement_copy.h"
#undef PL_K
#define PL_K 6
#include "placement_copy.h"
#undef PL_K
#define PL_K 7
#include "placement_copy.h"
#undef PL_K

#define PL_ALL(base) { &base##_0_loops, &base##_1_loops, &base##_2_loops, &base##_3_loops, \
		       &base##_4_loops, &base##_5_loops, &base##_6_loops, &base##_7_loops }

struct studied {
	const struct impl *im;		/* open, attach, detach, name */
	const struct loops *at[PLACEMENTS];
};

static const struct studied studied[] = {
	{ &impl_floor, PL_ALL(plfloor) },
	{ &impl_lfpool_threadstatic, PL_ALL(plts) },
	{ &impl_lfpool_percpu, PL_ALL(plts) },
	{ &impl_lfpool_cache, PL_ALL(plcache) },
};
#define NSTUDIED (sizeof(studied) / sizeof(studied[0]))

struct spread {
	double least, median, most;
	double noise;	/* the widest spread of one placement's rounds, over their median */
};

/* ns[i][k][r]: implementation i at placement k in round r. */
static double ns[NSTUDIED][PLACEMENTS][ROUNDS];

static void measure_round(unsigned r, const struct plan *plan)
{
	for (size_t j = 0; j < NSTUDIED * PLACEMENTS; j++) {
		size_t at = (j + r * 5) % (NSTUDIED * PLACEMENTS);	/* rotate the order */
		size_t i = at / PLACEMENTS, k = at % PLACEMENTS;
		struct impl im = *studied[i].im;
		im.loops = studied[i].at[k];
		const char *why = NULL;
		void *shared = im.open(64, 2048, &why);
		if (!shared)
			bench_die("placement: %s not available (%s)", im.name, why);
		struct result res;
		measure(&im, shared, PAT_PAIR, 1, 64, plan, &res);
		im.close(shared);
		ns[i][k][r] = res.ns;
	}
}

/* Over the first rounds rounds of ns[i]. */
static struct spread spread_of(size_t i, unsigned rounds)
{
	double per[PLACEMENTS], noise = 0;
	for (unsigned k = 0; k < PLACEMENTS; k++) {
		per[k] = bench_sort_median(ns[i][k], rounds);	/* sorts the rounds */
		double wide = (ns[i][k][rounds - 1] - ns[i][k][0]) / per[k];
		if (wide > noise)
			noise = wide;
	}
	double med = bench_sort_median(per, PLACEMENTS);
	return (struct spread){ per[0], med, per[PLACEMENTS - 1], noise };
}

void report_placement(const char *jsonl, bool quick)
{
	struct plan plan = quick ? (struct plan){ 3, 1e6 } : (struct plan){ 5, 10e6 };
	unsigned rounds = quick ? 1 : ROUNDS;
	for (unsigned r = 0; r < rounds; r++)
		measure_round(r, &plan);

	printf("\n== placement: pair, 64 B, 1 thread, the same loop at %d code placements "
	       "(ns per get or put; information, no target)\n", PLACEMENTS);
#ifdef __clang__
	printf("  (built with Clang: its loops stay where -falign-loops=64 puts them, so the "
	       "placements differ only around them)\n");
#endif
	printf("  %-20s %7s %7s %7s   over the floor: %6s %6s %6s   rounds' spread\n", "",
	       "least", "median", "most", "least", "median", "most");
	struct spread floor = spread_of(0, rounds);
	FILE *out = jsonl ? fopen(jsonl, "a") : NULL;
	if (jsonl && !out)
		bench_die("cannot append to %s", jsonl);
	for (size_t i = 0; i < NSTUDIED; i++) {
		struct spread s = spread_of(i, rounds);
		printf("  %-20s %7.2f %7.2f %7.2f   %22.2f %6.2f %6.2f   ", studied[i].im->name,
		       s.least, s.median, s.most, s.least / floor.least, s.median / floor.median,
		       s.most / floor.most);
		if (rounds > 1)
			printf("%5.0f %%\n", 100 * s.noise);
		else
			printf("  n/a (one round)\n");
		if (out)
			fprintf(out, "{\"impl\":\"%s\",\"pattern\":\"placement\",\"threads\":1,"
				"\"obj_size\":64,\"placements\":%d,\"least\":%.3f,\"median\":%.3f,"
				"\"most\":%.3f,\"rounds_spread\":%.3f}\n", studied[i].im->name,
				PLACEMENTS, s.least, s.median, s.most, s.noise);
	}
	if (out)
		fclose(out);
}
