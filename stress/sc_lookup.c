/* SPDX-License-Identifier: MIT */
/*
 * sc_lookup.c - owns() walking the slabs' directory while another thread
 * grows the pool: every other slab allocation failing (lookup-grow), or
 * past 1,024 slabs, which makes the directory's table (lookup-leaves,
 * below).
 *
 * A growth that fails on the slab's memory, after its slot was cleared and
 * counted (high_water raised with a release store), lowers high_water
 * again (lfp_slabs_shrink), and the next growth clears the same slot
 * again.  A lookup of a foreign pointer (lfp_slabs_lookup, under owns)
 * walks every slot below the high_water it loaded, so one that loaded the
 * raised value reads that slot's mem, with nothing ordering its read
 * before the second clear.  The clear must therefore be atomic stores:
 * TSan flagged the memset it was (lib/slab.c, prepare_slot).  The failing
 * allocation yields first, to let the lookups in while high_water is up.
 * Every owns of the foreign pointer must say no; every round ends with the
 * census and the allocator's balance.
 */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "stress.h"

#define LOOKUP_OBJ 2048		/* a few dozen objects per slab */
#define LOOKUP_HOLD 160		/* what the grower gets: several slabs */

struct lookup_grow {
	lfpool_allocator a;		/* the pool's: fails slab blocks by turns */
	const lfpool_allocator *inner;	/* the round's counting allocator */
	unsigned threads, entered;	/* atomic: workers that have their handle */
	int armed, done;		/* atomic */
	uint64_t slab_calls, failed;	/* atomic */
};

/* Slabs are the only blocks aligned to their size: fail every other one
 * while armed, after a yield. */
static void *flaky_alloc(size_t size, size_t align, void *ctx)
{
	struct lookup_grow *g = ctx;
	if (align == size && __atomic_load_n(&g->armed, __ATOMIC_RELAXED) &&
	    (__atomic_fetch_add(&g->slab_calls, 1, __ATOMIC_RELAXED) & 1)) {
		sched_yield();
		__atomic_fetch_add(&g->failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return g->inner->alloc(size, align, g->inner->ctx);
}

static void flaky_free(void *p, size_t size, void *ctx)
{
	struct lookup_grow *g = ctx;
	g->inner->free(p, size, g->inner->ctx);
}

/* Worker 0 grows: gets until it holds LOOKUP_HOLD (ENOMEM expected), then
 * puts them back; the others ask owns about a foreign pointer meanwhile. */
static void lookup_grow_worker(struct worker *w)
{
	struct lookup_grow *g = w->arg;
	const struct flavour *fl = w->rd->run->fl;
	__atomic_fetch_add(&g->entered, 1, __ATOMIC_RELAXED);
	if (w->index != 0) {
		struct sobj foreign = { 0 };
		while (!__atomic_load_n(&g->done, __ATOMIC_RELAXED))
			if (fl->owns(w->rd->pool, &foreign))
				run_fail(w->rd->run, "owns says yes for an object on a thread's stack");
		return;
	}
	while (__atomic_load_n(&g->entered, __ATOMIC_RELAXED) < g->threads)
		sched_yield();	/* no injected failure in an enter */
	__atomic_store_n(&g->armed, 1, __ATOMIC_RELAXED);
	void *held[LOOKUP_HOLD];
	unsigned n = 0;
	while (n < LOOKUP_HOLD && !run_over(w->rd->run))
		if ((held[n] = worker_get(w, false, true)) != NULL)
			n++;
	__atomic_store_n(&g->armed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n; i++)
		worker_put(w, held[i]);
}

static void lookup_grow(struct run *r)
{
	uint64_t failed = 0;
	do {
		struct round rd;
		lfpool_config cfg = round_config(&rd, 0, 0);
		struct lookup_grow g = { .a = { flaky_alloc, flaky_free, &g },
					 .inner = cfg.allocator, .threads = r->threads };
		cfg.obj_size = LOOKUP_OBJ;
		cfg.allocator = &g.a;
		if (!round_open(&rd, r, &cfg))
			return;
		round_workers(&rd, r->threads, lookup_grow_worker, &g);
		round_close(&rd);
		failed += g.failed;
		r->t.injected += g.failed;
	} while (!run_over(r));
	if (failed == 0)
		run_fail(r, "no slab allocation failed: the shrink went untested");
}

const struct scenario sc_lookup_grow = { "lookup-grow", true, true, 2, lookup_grow };

/*
 * lookup-leaves: the directory's table of leaves made while other threads
 * look objects up (lib/slab.h, the directory).  Worker 0 grows the pool
 * past leaf 0's LFP_LEAF_SLOTS slab numbers, which makes the table and
 * publishes it over leaf0 (slab.c, prepare_dir), then puts everything
 * back; the others meanwhile get an object, ask owns about it and about
 * a foreign pointer (lfp_slabs_lookup: every slot, through the
 * directory) and put it back (its link word: lfp_slabs_slot).  Every
 * object must be found wherever the lookup read leaf 0 from.
 */
#define LEAVES_OBJ 8000			/* 8 objects per 64 KiB slab, the fewest */
#define LEAVES_HOLD (8u * 1032)		/* past 1,024 slabs */

struct lookup_leaves {
	int done;			/* atomic */
	bool reached;			/* a slab number reached leaf 1 */
};

static void lookup_leaves_worker(struct worker *w)
{
	struct lookup_leaves *g = w->arg;
	struct run *r = w->rd->run;
	const void *pool = w->rd->pool;
	if (w->index != 0) {
		struct sobj foreign = { 0 };
		while (!__atomic_load_n(&g->done, __ATOMIC_RELAXED) &&
		       !__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
			void *o = worker_get(w, false, false);
			if (o && !r->fl->owns(pool, o))
				run_fail(r, "owns says no for an object the pool handed out");
			if (r->fl->owns(pool, &foreign))
				run_fail(r, "owns says yes for an object on a thread's stack");
			if (o)
				worker_put(w, o);
			usleep(100);	/* the grower's turn: it has far more to do */
		}
		return;
	}
	/* The whole growth, however long --seconds is (under TSan it takes
	 * seconds): a round cut short would test nothing. */
	void **held = malloc(LEAVES_HOLD * sizeof(void *));
	unsigned n = 0;
	while (held && n < LEAVES_HOLD && !__atomic_load_n(&r->stop, __ATOMIC_RELAXED) &&
	       (held[n] = worker_get(w, false, false)))
		n++;
	lfpool_stats st;
	r->fl->stats(pool, &st);
	g->reached = st.slab_allocs > 1024;
	__atomic_store_n(&g->done, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n; i++) {
		if (!r->fl->owns(pool, held[i]))
			run_fail(r, "object %u of %u not found after the growth", i, n);
		worker_put(w, held[i]);
	}
	free(held);
}

static void lookup_leaves(struct run *r)
{
	unsigned reached = 0;
	do {
		struct round rd;
		lfpool_config cfg = round_config(&rd, 0, 0);
		struct lookup_leaves g = { 0 };
		cfg.obj_size = LEAVES_OBJ;
		if (!round_open(&rd, r, &cfg))
			return;
		round_workers(&rd, r->threads, lookup_leaves_worker, &g);
		round_close(&rd);
		reached += g.reached;
	} while (!run_over(r));
	if (!reached)
		run_fail(r, "no round grew past 1,024 slabs: the directory's table went "
			 "untested");
}

const struct scenario sc_lookup_leaves = { "lookup-leaves", true, true, 2, lookup_leaves };
