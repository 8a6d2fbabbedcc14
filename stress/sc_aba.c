/*
 * sc_aba.c - scenario 6: ABA provocation.  Three objects (plus what the
 * caches may keep idle), many threads, magazines of one object so that
 * ThreadStatic's depot is hit too, and the stress-build hook that yields
 * between reading a stack head and the CAS on it.  A stack without its ABA
 * tag hands one object to two threads here within moments (see the
 * negative control); a correct one never does.
 */
#include <sched.h>

#include "stack.h"	/* lfp_stress_yield */
#include "stress.h"

#define ABA_OBJECTS 3

static __thread uint64_t yield_rng;

/* Yield in about half of the CAS windows: a varied schedule. */
static void aba_yield(void)
{
	if (rng_next(&yield_rng) & 1)
		sched_yield();
}

/* Get one or two objects and put them back, as fast as possible. */
static void get_put_tight(struct worker *w)
{
	yield_rng = w->rng;
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		void *a = worker_get(w, true, false);
		void *b = rng_below(&w->rng, 2) ? worker_get(w, true, false) : NULL;
		if (a)
			worker_put(w, a);
		if (b)
			worker_put(w, b);
	}
}

void aba_provoke(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct round rd;
		lfpool_config cfg = round_config(&rd, 0, 0);
		cfg.magazine_size = 1;
		cfg.capacity = cfg.prewarm = ABA_OBJECTS + n * r->fl->cache_slack(&cfg);
		if (!round_open(&rd, r, &cfg))
			return;
		lfp_stress_yield = aba_yield;
		round_workers(&rd, n, get_put_tight, NULL);
		lfp_stress_yield = NULL;
		round_close(&rd);
	} while (!run_over(r));
}

const struct scenario sc_aba = { "aba", true, true, 3, aba_provoke };
