/* SPDX-License-Identifier: MIT */
/*
 * sc_ownership.c - scenario 2: threads hold one to four objects at a time,
 * through single and bulk calls, from a pool that is often at its capacity.
 * Every get swaps the owner word (it must find 0) and checks the body
 * pattern; every put checks the pattern and swaps the owner back.
 */
#include <sched.h>

#include "stress.h"

#define HOLD_MAX 4

/* Hold one to HOLD_MAX objects (single or bulk calls), sometimes across a yield. */
static void hold_and_check(struct worker *w)
{
	void *held[HOLD_MAX];
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		unsigned m = 1 + rng_below(&w->rng, HOLD_MAX), n = 0;
		bool bulk = it & 1;
		if (bulk) {
			if (!worker_get_bulk(w, held, m, true))
				continue;
			n = m;
		} else {
			while (n < m && (held[n] = worker_get(w, true, false)) != NULL)
				n++;
		}
		if (rng_below(&w->rng, 8) == 0)
			sched_yield();	/* hold across a reschedule */
		if (bulk) {
			worker_put_bulk(w, held, n);
		} else {
			while (n > 0)
				worker_put(w, held[--n]);
		}
	}
}

/* Rounds on a pool with fewer objects than the threads want. */
static void ownership(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct round rd;
		lfpool_config cfg = round_config(&rd, 0, 0);
		/* Fewer objects than the threads may want: gets meet ENOBUFS. */
		cfg.capacity = 2 * n + n * r->fl->cache_slack(&cfg);
		cfg.prewarm = cfg.capacity / 2;
		if (!round_open(&rd, r, &cfg))
			return;
		round_workers(&rd, n, hold_and_check, NULL);
		round_close(&rd);
	} while (!run_over(r));
}

const struct scenario sc_ownership = { "ownership", true, true, 1, ownership };
