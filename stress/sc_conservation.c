/* SPDX-License-Identifier: MIT */
/*
 * sc_conservation.c - scenario 1 (libatomic_ops test_stack): thread i
 * holds i objects at a time, over and over.  The pool's capacity is exactly
 * what the threads can hold (plus what caches may keep idle), so a get must
 * never fail; the census then finds every object exactly once.
 */
#include "stress.h"

/* Thread tid holds tid objects at once, again and again; a get never fails. */
static void take_and_return(struct worker *w)
{
	void *held[STRESS_MAX_THREADS];
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		unsigned n = 0;
		for (; n < w->tid; n++) {
			held[n] = worker_get(w, false, false);
			if (!held[n])
				return;
		}
		while (n > 0)
			worker_put(w, held[--n]);
	}
}

/* Rounds with capacity = what the threads hold + what caches may keep. */
static void conservation(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct round rd;
		lfpool_config cfg = round_config(&rd, 0, 0);
		cfg.capacity = cfg.prewarm = n * (n + 1) / 2 + n * r->fl->cache_slack(&cfg);
		if (!round_open(&rd, r, &cfg))
			return;
		round_workers(&rd, n, take_and_return, NULL);
		round_close(&rd);
	} while (!run_over(r));
}

const struct scenario sc_conservation = { "conservation", true, true, 1, conservation };
