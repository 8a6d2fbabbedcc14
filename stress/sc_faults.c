/* SPDX-License-Identifier: MIT */
/*
 * sc_faults.c - scenario 8: fault injection.  The backing allocator fails
 * from its N-th call on, for every N a fixed script of calls reaches; each
 * call that fails must fail with ENOMEM and change nothing, and once the
 * allocator works again the same call must succeed.  Then an allocator
 * that always fails, and (faults-mt) one that fails one call in three
 * while threads get, put and trim.  Every round ends with the census and
 * the allocator's balance: nothing half-done leaks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "stress.h"

#define BIG_OBJ 2048	/* a few dozen objects per slab: the script crosses slabs */
#define HELD_MAX 64
#define MT_HOLD_MAX 48	/* per thread in faults-mt: the pool keeps growing slabs */

struct sweep {
	struct round rd;
	struct worker m;
	void *held[HELD_MAX];
	unsigned n;
};

/* Get one object into held; -1 on failure. */
static int op_get(struct sweep *f, unsigned arg)
{
	(void)arg;
	void *obj = f->rd.run->fl->get(f->m.h);
	if (!obj)
		return -1;
	obj_claim(&f->m, obj);
	f->held[f->n++] = obj;
	return 0;
}

/* Get count objects with one bulk call; -1 on failure. */
static int op_get_bulk(struct sweep *f, unsigned count)
{
	if (f->rd.run->fl->get_bulk(f->m.h, f->held + f->n, count) != 0)
		return -1;
	for (unsigned i = 0; i < count; i++)
		obj_claim(&f->m, f->held[f->n++]);
	return 0;
}

/* Put the last object held (if any). */
static int op_put(struct sweep *f, unsigned arg)
{
	(void)arg;
	if (f->n > 0)
		worker_put(&f->m, f->held[--f->n]);
	return 0;
}

/* Prewarm count objects; -1 on failure. */
static int op_prewarm(struct sweep *f, unsigned count)
{
	return f->rd.run->fl->prewarm(f->rd.pool, count);
}

/* Trim to keep; never fails. */
static int op_trim(struct sweep *f, unsigned keep)
{
	f->rd.run->fl->trim(f->rd.pool, keep);
	return 0;
}

struct step {
	const char *name;
	int (*op)(struct sweep *f, unsigned arg);
	unsigned arg, times;	/* op(arg), `times` times, each checked */
};

/* Gets one at a time (each may add a slab), bulk, prewarm, trim. */
static const struct step script[] = {
	{ "get", op_get, 0, 40 }, { "prewarm", op_prewarm, 40, 1 }, { "put", op_put, 0, 20 },
	{ "trim", op_trim, 5, 1 }, { "get", op_get, 0, 20 }, { "put", op_put, 0, HELD_MAX },
	{ "trim", op_trim, 0, 1 }, { "get_bulk", op_get_bulk, 10, 1 }, { "put", op_put, 0, HELD_MAX },
};

static uint64_t alive(const struct round *rd) { return rd->objs.inits - rd->objs.finis; }

/*
 * Run one step.  If the allocator failed during it: a failed step must
 * report ENOMEM and leave the object count as it was; then the allocator
 * is healed and a failed step must succeed when repeated.
 */
static void run_step(struct sweep *f, const struct step *s, int64_t fail_from)
{
	struct run *r = f->rd.run;
	uint64_t before = alive(&f->rd), failures = f->rd.alloc.failures;
	unsigned n = f->n;
	int rc = s->op(f, s->arg), err = errno;
	if (f->rd.alloc.failures == failures) {
		if (rc != 0)
			run_fail(r, "%s failed (%s) with the allocator working", s->name, strerror(err));
		return;
	}
	if (rc != 0 && (err != ENOMEM || alive(&f->rd) != before || f->n != n))
		run_fail(r, "%s, allocator failing from call %lld: %s, objects %llu -> %llu, held %u -> %u",
			 s->name, (long long)fail_from, strerror(err), (unsigned long long)before,
			 (unsigned long long)alive(&f->rd), n, f->n);
	round_check_counts(&f->rd, f->n);
	f->rd.alloc.fail_from = -1;
	if (rc != 0 && s->op(f, s->arg) != 0)
		run_fail(r, "%s still fails (%s) once the allocator works again (failing from %lld)",
			 s->name, strerror(errno), (long long)fail_from);
}

/* Create the pool and the main thread's handle, healing and retrying once
 * after an injected failure; false if the run failed. */
static bool sweep_open(struct sweep *f, const lfpool_config *cfg)
{
	struct run *r = f->rd.run;
	const struct flavour *fl = r->fl;
	for (int attempt = 0; attempt < 2; attempt++) {
		f->rd.pool = fl->create(cfg);
		if (f->rd.pool && (f->m.h = fl->enter(f->rd.pool)) != NULL)
			return true;
		int err = errno;
		if (f->rd.pool && fl->destroy(f->rd.pool) != 0)
			run_fail(r, "destroy after a failed enter: %s", strerror(errno));
		if (attempt || err != ENOMEM || !stress_alloc_balanced(&f->rd.alloc) ||
		    f->rd.objs.inits != f->rd.objs.finis) {
			run_fail(r, "create/enter: %s (attempt %d), allocator balanced %d, "
				 "%llu objects made, %llu finalized",
				 strerror(err), attempt + 1, stress_alloc_balanced(&f->rd.alloc),
				 (unsigned long long)f->rd.objs.inits, (unsigned long long)f->rd.objs.finis);
			return false;
		}
		f->rd.alloc.fail_from = -1;
	}
	return false;
}

/* The script with the allocator failing from call fail_from (-1: never);
 * the number of allocator calls it made. */
static uint64_t sweep_run(struct run *r, int64_t fail_from)
{
	struct sweep f = { .n = 0 };
	lfpool_config cfg = round_config(&f.rd, 0, 3);
	cfg.obj_size = BIG_OBJ;
	f.rd.run = r;
	f.rd.cfg = cfg;
	f.rd.until = r->deadline;
	f.rd.alloc.fail_from = fail_from;
	f.m = (struct worker){ .rd = &f.rd, .tid = STRESS_MAIN_TID, .rng = rng_next(&r->rng) };
	if (!sweep_open(&f, &cfg))
		return 0;
	for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++)
		for (unsigned k = 0; k < script[i].times && !r->failures; k++)
			run_step(&f, &script[i], fail_from);
	uint64_t calls = f.rd.alloc.calls;
	if (fail_from >= 0 && f.rd.alloc.failures == 0)
		run_fail(r, "no allocator call failed from call %lld on: the script made %llu",
			 (long long)fail_from, (unsigned long long)calls);
	f.m.t.injected = f.rd.alloc.failures;
	r->fl->leave(f.rd.pool, f.m.h);
	run_add(r, &f.m.t);
	f.rd.alloc.fail_from = -1;
	round_close(&f.rd);
	return calls;
}

/* An allocator that never works: every call that needs memory fails with
 * ENOMEM, nothing is created, nothing leaks. */
static void always_failing(struct run *r)
{
	const struct flavour *fl = r->fl;
	struct round rd;
	lfpool_config cfg = round_config(&rd, 0, 3);
	rd.run = r;
	rd.alloc.fail_from = 0;
	void *pool = fl->create(&cfg);
	if (pool || errno != ENOMEM)
		run_fail(r, "create with prewarm and no memory: %p, %s", pool, strerror(errno));
	cfg.prewarm = 0;
	pool = fl->create(&cfg);
	void *h = pool ? fl->enter(pool) : NULL;
	if (h) {
		void *objs[4];
		if (fl->get(h) || errno != ENOMEM)
			run_fail(r, "get with no memory: %s, not ENOMEM", strerror(errno));
		if (fl->get_bulk(h, objs, 4) == 0 || errno != ENOMEM)
			run_fail(r, "bulk get with no memory: %s, not ENOMEM", strerror(errno));
		if (fl->prewarm(pool, 1) == 0 || errno != ENOMEM)
			run_fail(r, "prewarm with no memory: %s, not ENOMEM", strerror(errno));
		fl->trim(pool, 0);
		fl->leave(pool, h);
	} else if (errno != ENOMEM) {
		run_fail(r, "create/enter with no memory: %s, not ENOMEM", strerror(errno));
	}
	if (pool && fl->destroy(pool) != 0)
		run_fail(r, "destroy: %s", strerror(errno));
	r->t.injected += rd.alloc.failures;
	if (rd.objs.inits != 0 || !stress_alloc_balanced(&rd.alloc))
		run_fail(r, "no memory, yet %llu objects made, %llu allocations, %llu frees",
			 (unsigned long long)rd.objs.inits, (unsigned long long)rd.alloc.allocs,
			 (unsigned long long)rd.alloc.frees);
}

/* The script once cleanly (counting allocator calls), then failing from
 * each call.  On one CPU throughout: a per-CPU pool's calls depend on the
 * CPUs the thread ran on (a migration between the counting run and a
 * later one changed how many slabs the script grew, and a run failing
 * from call 12 made only 12: a fresh clone's TSan run, fallback path). */
static void faults(struct run *r)
{
	cpu_set_t allowed, one;
	bool pinned = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;
	if (pinned) {
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
	}
	uint64_t calls = sweep_run(r, -1);
	for (uint64_t n = 0; n < calls && !r->failures; n++)
		sweep_run(r, (int64_t)n);
	always_failing(r);
	if (pinned)
		sched_setaffinity(0, sizeof(allowed), &allowed);
}

/* Trim under load, threads holding many objects (so that every round
 * grows slabs), with one allocator call in three failing. */
static void faults_mt(struct run *r)
{
	while (trim_round(r, BIG_OBJ, MT_HOLD_MAX, 3) && !run_over(r))
		;
	if (r->t.injected == 0)
		run_fail(r, "the allocator never failed: the injection went untested");
}

const struct scenario sc_faults = { "faults", false, true, 1, faults };
const struct scenario sc_faults_mt = { "faults-mt", true, true, 2, faults_mt };
