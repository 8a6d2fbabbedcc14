/* SPDX-License-Identifier: MIT */
/*
 * sc_trim.c - scenario 7: one thread trims while the others get and put.
 * Every object trim reports destroyed must be one fini saw (and fini must
 * never see an object that is out: obj_fini_hook checks), and once the
 * threads are gone a trim to zero gives every slab back where trim takes
 * a count to keep.
 */
#include <sched.h>

#include "stress.h"

#define HOLD_MAX 8
#define HOLD_LIMIT 64	/* the most any caller of trim_round may ask */
#define TRIM_KEEP_MAX 8

/* Trim, and check that the count trim returns is the number of objects
 * fini saw it destroy (on this thread: a debug pool's get remakes objects,
 * fini then init, on the getter's). */
static size_t checked_trim(struct run *r, void *pool, size_t keep)
{
	uint64_t before = obj_finis_here();
	size_t n = r->fl->trim(pool, keep);
	if (obj_finis_here() - before != n)
		run_fail(r, "trim(%zu) reported %zu objects destroyed, fini saw %llu", keep, n,
			 (unsigned long long)(obj_finis_here() - before));
	return n;
}

/* Worker 0 trims; the others get and put up to *hold_max objects. */
static void work_or_trim(struct worker *w)
{
	const unsigned *hold_max = w->arg;
	bool enomem_ok = w->rd->alloc.fail_one_in != 0;
	void *held[HOLD_LIMIT];
	for (uint64_t it = 0; !worker_over(w, it); it++) {
		if (w->index == 0) {
			w->t.trimmed += checked_trim(w->rd->run, w->rd->pool,
						     rng_below(&w->rng, TRIM_KEEP_MAX));
			sched_yield();
			continue;
		}
		unsigned n = 0, m = 1 + rng_below(&w->rng, *hold_max);
		while (n < m && (held[n] = worker_get(w, false, enomem_ok)) != NULL)
			n++;
		while (n > 0)
			worker_put(w, held[--n]);
	}
}

/* Quiet now: trim(0) must leave no object and no slab behind. */
static void trim_all(struct round *rd)
{
	const struct flavour *fl = rd->run->fl;
	lfpool_stats st;
	rd->run->t.trimmed += checked_trim(rd->run, rd->pool, 0);
	fl->stats(rd->pool, &st);
	if (st.created != 0 || st.slab_allocs != st.slab_frees)
		run_fail(rd->run, "trim(0) of a quiet pool left %llu objects, %llu of %llu slabs",
			 (unsigned long long)st.created,
			 (unsigned long long)(st.slab_allocs - st.slab_frees),
			 (unsigned long long)st.slab_allocs);
}

bool trim_round(struct run *r, size_t obj_size, unsigned hold_max, unsigned fail_one_in)
{
	unsigned n = r->threads;
	struct round rd;
	lfpool_config cfg = round_config(&rd, 0, 16);
	cfg.obj_size = obj_size;
	/* Every other round without faults on the default allocator, whose
	 * large slabs' side data a release gives back (MADV_DONTNEED) while
	 * stale readers may still read its link words (lib/slab.c,
	 * side_give_back). */
	if (!fail_one_in && (r->t.rounds & 1))
		cfg.allocator = NULL;
	if (!round_open(&rd, r, &cfg))
		return false;
	rd.alloc.fail_one_in = fail_one_in;
	if (hold_max > HOLD_LIMIT)
		hold_max = HOLD_LIMIT;
	round_workers(&rd, n, work_or_trim, &hold_max);
	rd.alloc.fail_one_in = 0;
	r->t.injected += rd.alloc.failures;
	if (r->fl->trim_keeps)
		trim_all(&rd);
	round_close(&rd);
	return true;
}

/* Rounds of trim under load. */
static void trim_under_load(struct run *r)
{
	while (trim_round(r, sizeof(struct sobj), HOLD_MAX, 0) && !run_over(r))
		;
}

const struct scenario sc_trim = { "trim", true, true, 2, trim_under_load };
