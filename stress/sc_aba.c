/* SPDX-License-Identifier: MIT */
/*
 * sc_aba.c - scenario 6: ABA provocation.  Three objects (plus what the
 * caches may keep idle), many threads, magazines of one object so that
 * ThreadStatic's depot is hit too, and the stress-build hook that yields
 * between reading a stack head and the CAS on it.  A stack without its ABA
 * tag hands one object to two threads here within moments (see the
 * negative control); a correct one never does.
 */
#include <sched.h>

#include "stress_hooks.h"	/* lfp_stress_yield */
#include "stress.h"

#define ABA_OBJECTS 3
#define ABA_HOLD_MAX 8	/* most objects a thread holds at once */

static __thread uint64_t yield_rng;

/* Yield in about half of the CAS windows: a varied schedule. */
static void aba_yield(void)
{
	if (rng_next(&yield_rng) & 1)
		sched_yield();
}

/* Get up to *hold_max objects and put them back, as fast as possible. */
static void get_put_tight(struct worker *w)
{
	const unsigned *hold_max = w->arg;
	yield_rng = w->rng;
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		void *held[ABA_HOLD_MAX];
		unsigned n = 0, m = 1 + rng_below(&w->rng, *hold_max);
		while (n < m && (held[n] = worker_get(w, true, false)) != NULL)
			n++;
		/* In the order got: put A back while B is still out, the state
		 * in which a stale pop of A installs B (reverse order would
		 * restore the stack as it was). */
		for (unsigned i = 0; i < n; i++)
			worker_put(w, held[i]);
	}
}

/* Rounds of tight get/put with the CAS-window hook yielding.  Threads hold
 * one or two objects; with caches, up to one more than a cache keeps
 * (magazines of one: three), so that round trips go through the depot. */
void aba_provoke(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct round rd;
		lfpool_config cfg = round_config(&rd, 0, 0);
		cfg.magazine_size = 1;
		unsigned slack = r->fl->cache_slack(&cfg), hold_max = 2;
		if (slack)
			hold_max = slack + 1 < ABA_HOLD_MAX ? slack + 1 : ABA_HOLD_MAX;
		cfg.capacity = cfg.prewarm = ABA_OBJECTS + n * slack;
		if (!round_open(&rd, r, &cfg))
			return;
		lfp_stress_yield = aba_yield;
		round_workers(&rd, n, get_put_tight, &hold_max);
		lfp_stress_yield = NULL;
		round_close(&rd);
	} while (!run_over(r));
}

const struct scenario sc_aba = { "aba", true, true, 3, aba_provoke };
