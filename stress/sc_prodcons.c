/* SPDX-License-Identifier: MIT */
/*
 * sc_prodcons.c - scenario 4: producers only get (and hand each object
 * over through a slot), consumers only take objects from the slots and
 * put them.  Every put is remote, and with ThreadStatic every object
 * crosses the depot.  At the end gets = puts + objects drained from the
 * slots, and the pool created no more than can be in flight.
 */
#include <sched.h>

#include "stress.h"

struct handoff {
	unsigned n, producers;
	void *slot[2 * STRESS_MAX_THREADS];
};

/* Place obj in an empty slot; false if the run ended first. */
static bool place(struct worker *w, struct handoff *s, void *obj)
{
	for (uint64_t it = 1; !worker_over(w, it); it++) {
		void *empty = NULL;
		if (__atomic_compare_exchange_n(&s->slot[rng_below(&w->rng, s->n)], &empty, obj, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return true;
		if (it % s->n == 0)
			sched_yield();
	}
	return false;
}

/* Get objects and hand each over through an empty slot. */
static void produce(struct worker *w)
{
	struct handoff *s = w->arg;
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		void *obj = worker_get(w, false, false);
		if (!obj || !obj_pass(w, obj))
			return;
		if (!place(w, s, obj)) {
			/* Over with nowhere to put it: give it back ourselves. */
			if (obj_take(w, obj))
				worker_put(w, obj);
			return;
		}
	}
}

/* Take objects from the slots and put them. */
static void consume(struct worker *w)
{
	struct handoff *s = w->arg;
	for (uint64_t it = 1; !worker_over(w, it); it++) {
		void *obj = __atomic_exchange_n(&s->slot[rng_below(&w->rng, s->n)], NULL,
						__ATOMIC_ACQUIRE);
		if (obj) {
			if (obj_take(w, obj))
				worker_put(w, obj);
		} else if (it % s->n == 0) {
			sched_yield();
		}
	}
}

/* The first `producers` threads produce, the others consume. */
static void produce_or_consume(struct worker *w)
{
	struct handoff *s = w->arg;
	if (w->tid <= s->producers)
		produce(w);
	else
		consume(w);
}

/* Rounds of half producers, half consumers. */
static void prodcons(struct run *r)
{
	unsigned n = r->threads;
	do {
		struct handoff s = { .n = 2 * n, .producers = n / 2 };
		if (!slots_round(r, n, s.slot, s.n, produce_or_consume, &s))
			return;
	} while (!run_over(r));
}

const struct scenario sc_prodcons = { "prodcons", true, true, 2, prodcons };
