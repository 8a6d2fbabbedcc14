/* SPDX-License-Identifier: MIT */
/*
 * sc_transfer.c - scenario 3 (mimalloc test-stress): a shared array of
 * slots, swapped with atomic exchange, so that most objects are put by a
 * thread other than the one that got them.  At the end gets - puts equals
 * the objects left in the slots, the pool has created no more than can be
 * in flight (remote puts must not make memory grow), and the census and
 * the counting allocator find everything back.
 */
#include "stress.h"

struct slots {
	unsigned n;
	void *slot[4 * STRESS_MAX_THREADS];
};

/* Get an object, swap it into a random slot, put what came out. */
static void swap_through_slots(struct worker *w)
{
	struct slots *s = w->arg;
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		void *obj = worker_get(w, false, false);
		if (!obj || !obj_pass(w, obj))
			return;
		void *old = __atomic_exchange_n(&s->slot[rng_below(&w->rng, s->n)], obj,
						__ATOMIC_ACQ_REL);
		if (old && obj_take(w, old))
			worker_put(w, old);
	}
}

/* Rounds of slot swapping. */
static void transfer(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct slots s = { .n = 4 * n };
		if (!slots_round(r, n, s.slot, s.n, swap_through_slots, &s))
			return;
	} while (!run_over(r));
}

const struct scenario sc_transfer = { "transfer", true, true, 1, transfer };
