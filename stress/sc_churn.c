/* SPDX-License-Identifier: MIT */
/*
 * sc_churn.c - scenario 5 (mimalloc test-stress's thread turnover):
 * generations of short-lived threads.  Each thread puts back what its
 * predecessor left out (remote puts), works a little, then exits holding
 * objects out and, with per-thread caches, objects cached: half the
 * generations of a flavour whose caches go back at thread exit end by exit
 * alone.  After every generation the pool must account for everything:
 * pooled (depot, caches, free lists) + out = created = made - finalized.
 */
#include "stress.h"

#define GENERATIONS 4
#define HOLD_MAX 4
#define WORK_MAX 64

struct churn {
	void *held[STRESS_MAX_THREADS][HOLD_MAX];	/* out, between generations */
};

/* One thread's life: put back its predecessor's objects, work, leave some out. */
static void live_and_exit(struct worker *w)
{
	struct churn *c = w->arg;
	void **mine = c->held[w->index];
	for (unsigned k = 0; k < HOLD_MAX; k++) {
		if (mine[k] && obj_take(w, mine[k]))
			worker_put(w, mine[k]);
		mine[k] = NULL;
	}
	unsigned work = rng_below(&w->rng, WORK_MAX);
	for (unsigned it = 0; it < work && !worker_over(w, it); it++) {
		void *objs[HOLD_MAX];
		unsigned n = 0, m = 1 + rng_below(&w->rng, HOLD_MAX);
		while (n < m && (objs[n] = worker_get(w, false, false)) != NULL)
			n++;
		while (n > 0)
			worker_put(w, objs[--n]);
	}
	unsigned keep = rng_below(&w->rng, HOLD_MAX + 1);
	for (unsigned k = 0; k < keep; k++) {
		void *obj = worker_get(w, false, false);
		if (!obj || !obj_pass(w, obj))
			return;
		mine[k] = obj;
	}
}

/* Objects left out by the last generation. */
static uint64_t count_held(const struct churn *c, unsigned threads)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < threads; i++)
		for (unsigned k = 0; k < HOLD_MAX; k++)
			n += c->held[i][k] != NULL;
	return n;
}

/* One generation of threads; false once the counts disagree. */
static bool generation(struct round *rd, struct churn *c, unsigned threads, unsigned g)
{
	struct worker ws[STRESS_MAX_THREADS];
	for (unsigned i = 0; i < threads; i++)
		ws[i] = (struct worker){
			.tid = g * threads + i + 1, .index = i, .arg = c,
			.rng = rng_next(&rd->run->rng),
			.skip_leave = rd->run->fl->exit_flushes && (g & 1),
		};
	round_run_workers(rd, ws, threads, live_and_exit);
	return round_check_counts(rd, count_held(c, threads));
}

/* Rounds of GENERATIONS generations. */
static void churn(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct round rd;
		struct churn c = { 0 };
		lfpool_config cfg = round_config(&rd, 0, 0);
		if (!round_open(&rd, r, &cfg))
			return;
		for (unsigned g = 0; g < GENERATIONS && generation(&rd, &c, n, g); g++)
			;
		slots_drain(&rd, &c.held[0][0], n * HOLD_MAX);	/* the last generation's */
		round_close(&rd);
	} while (!run_over(r));
}

const struct scenario sc_churn = { "churn", true, true, 1, churn };
