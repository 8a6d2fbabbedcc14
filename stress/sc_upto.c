/* SPDX-License-Identifier: MIT */
/*
 * sc_upto.c - the bulk pop must not starve: lfp_stack_pop_upto_mpmc (the
 * depot's refill and bulk gets of ThreadStatic, lib/threadstatic/depot.c)
 * on the bare index stack, while other threads pop one index and push it
 * back, without pause, all the run long.
 *
 * A bulk pop walks up to max links and then CASes the head; it succeeds
 * only if no single push or pop took effect meanwhile.  While it walked
 * all max links on every attempt, a call for 4096 here failed 5173 to
 * 46059 CASes in a row, while the most a single pop or push failed in
 * one call was 1 to 660 (9 of 16 runs on a loaded 2-CPU machine; in the
 * others the threads seem to have taken turns on the CPUs, and nothing
 * starves so).  It halves max on each failed CAS, so after at most
 * floor(log2(max)) failures its attempts are a single pop's.
 *
 * The check, per bulk call, in failed CASes (the stress build's counter
 * lfp_stress_cas_retries), not in time: at most floor(log2(max)) more than
 * the worst single pop or push of the same run failed in one call (and
 * UPTO_SLACK).  The single ops go on until UPTO_CALLS_MIN bulk pops are
 * done, the run's time is up and they have failed UPTO_CONTENDED CASes
 * (or the time is up UPTO_EXTRA times over), or until one bulk pop has
 * lasted UPTO_STARVED of them: then it ends, with its count of failures,
 * instead of hanging.
 */
#include <sched.h>
#include <stdio.h>

#include "stack.h"
#include "stress.h"

#define UPTO_NODES 8192		/* on the stack at the start */
#define UPTO_MAX 4096		/* what each bulk pop asks for */
#define UPTO_SINGLES_MIN 3	/* single-op threads: they contend among themselves too */
#define UPTO_CALLS_MIN 32	/* bulk pops while the single ops go on */
/* Failures a bulk pop may have beyond the halvings and the worst single op:
 * once it is a single pop, its own worst is a draw from the same
 * contention as theirs and may come out a little higher; a starving pop
 * fails thousands of times. */
#define UPTO_SLACK 16
/* Until the single ops have failed this many CASes in all (evidence that
 * the threads ran in parallel: on a loaded machine they may take turns on
 * one CPU, where nothing starves), the run goes on, up to UPTO_EXTRA times
 * its time more. */
#define UPTO_CONTENDED 1000
#define UPTO_EXTRA 4
/* Single ops (counted by 64) during one bulk pop after which it has
 * starved: the single ops stop, so that it ends and shows its count. */
#define UPTO_STARVED (UINT64_C(1) << 20)

struct upto {
	struct run *r;
	struct lfp_slabs s;
	unsigned started;	/* atomic: single-op threads running */
	int stop;		/* atomic: the single ops end */
	uint64_t worst;		/* atomic: the most failed CASes of one single op */
	uint64_t fails;		/* atomic: failed CASes of the single ops */
	uint64_t ops;		/* atomic: single ops done, counted by 64 */
	uint64_t call_ops;	/* atomic: ops when the current bulk pop began */
	uint64_t calls;		/* atomic: bulk pops done */
	struct lfp_stack st;	/* last: its line holds nothing else */
};

static void note_max(uint64_t *at, uint64_t v)
{
	uint64_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
	while (v > cur && !__atomic_compare_exchange_n(at, &cur, v, false, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* Whether the bulk pops are done after calls of them: UPTO_CALLS_MIN, the
 * run's time, and UPTO_CONTENDED (or UPTO_EXTRA times the time more). */
static bool bulk_done(struct upto *u, uint64_t calls)
{
	struct run *r = u->r;
	if (__atomic_load_n(&r->stop, __ATOMIC_RELAXED))
		return true;
	double over = now_seconds() - r->deadline;
	return calls >= UPTO_CALLS_MIN && over > 0 &&
	       (__atomic_load_n(&u->fails, __ATOMIC_RELAXED) >= UPTO_CONTENDED ||
		over > UPTO_EXTRA * r->opt->seconds);
}

/* Whether the single ops end: the bulk pops are done, or the current one
 * has starved. */
static bool singles_over(struct upto *u)
{
	uint64_t ops = __atomic_add_fetch(&u->ops, 64, __ATOMIC_RELAXED);
	if (ops - __atomic_load_n(&u->call_ops, __ATOMIC_RELAXED) > UPTO_STARVED ||
	    bulk_done(u, __atomic_load_n(&u->calls, __ATOMIC_RELAXED)))
		__atomic_store_n(&u->stop, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&u->stop, __ATOMIC_RELAXED);
}

/* A single op failed f CASes: the thread's worst, and the shared one. */
static void single_failed(struct upto *u, uint64_t *worst, uint64_t f)
{
	if (f)
		__atomic_fetch_add(&u->fails, f, __ATOMIC_RELAXED);
	if (f <= *worst)
		return;
	*worst = f;
	note_max(&u->worst, f);
}

/* Pop one index and push it back, until singles_over. */
static void *single_ops(void *arg)
{
	struct upto *u = arg;
	struct tally t = { 0 };
	uint64_t worst = 0;
	__atomic_fetch_add(&u->started, 1, __ATOMIC_RELAXED);
	for (uint64_t it = 0; (it & 63) || !singles_over(u); it++) {
		uint64_t f0 = lfp_stress_cas_retries;
		uint32_t idx = lfp_stack_pop_mpmc(&u->st, &u->s);
		uint64_t f1 = lfp_stress_cas_retries;
		single_failed(u, &worst, f1 - f0);
		if (idx == LFP_NIL)
			continue;	/* never: the bulk pops leave UPTO_NODES - UPTO_MAX */
		t.gets++;
		lfp_stack_push_mpmc(&u->st, &u->s, idx);
		t.puts++;
		single_failed(u, &worst, lfp_stress_cas_retries - f1);
	}
	t.cas_retries = lfp_stress_cas_retries;
	run_add(u->r, &t);
	return NULL;
}

/* Slabs holding at least UPTO_NODES indices, all pushed on u->st. */
static bool fill(struct upto *u)
{
	char why[160];
	if (lfp_slabs_init(&u->s, 64, 0, UPTO_NODES, NULL, why, sizeof(why)) != 0)
		return false;
	lfp_stack_init(&u->st);
	for (uint64_t n = 0; n < UPTO_NODES; n += u->s.per_slab) {
		uint32_t first, last;
		if (lfp_slabs_grow(&u->s, &first, &last) != 0)
			return false;
		lfp_stack_push_chain_mpmc(&u->st, &u->s, first, last);
	}
	return true;
}

static unsigned floor_log2(uint32_t v)
{
	return 31u - (unsigned)__builtin_clz(v);
}

static void upto_starve(struct run *r)
{
	struct upto u = { .r = r };
	if (!fill(&u)) {
		run_fail(r, "no slabs for %u indices", UPTO_NODES);
		lfp_slabs_fini(&u.s);
		return;
	}
	unsigned k = r->opt->threads < UPTO_SINGLES_MIN ? UPTO_SINGLES_MIN : r->opt->threads;
	if (k > STRESS_MAX_THREADS)
		k = STRESS_MAX_THREADS;
	pthread_t th[STRESS_MAX_THREADS];
	unsigned made = 0;
	while (made < k && pthread_create(&th[made], NULL, single_ops, &u) == 0)
		made++;
	while (__atomic_load_n(&u.started, __ATOMIC_RELAXED) < made)
		sched_yield();
	struct tally t = { .rounds = 1 };
	uint64_t retries0 = lfp_stress_cas_retries, calls = 0, worst = 0;
	do {
		uint32_t first = LFP_NIL;
		__atomic_store_n(&u.call_ops, __atomic_load_n(&u.ops, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		uint64_t f0 = lfp_stress_cas_retries;
		uint32_t n = lfp_stack_pop_upto_mpmc(&u.st, &u.s, UPTO_MAX, &first);
		uint64_t f = lfp_stress_cas_retries - f0;
		if (f > worst)
			worst = f;
		__atomic_store_n(&u.calls, ++calls, __ATOMIC_RELAXED);
		t.gets += n;
		if (n == 0) {
			run_fail(r, "a bulk pop got nothing from a stack of at least %u",
				 UPTO_NODES - UPTO_MAX);
			break;
		}
		uint32_t last = first;
		for (uint32_t i = 1; i < n; i++)
			last = lfp_load_u32_rlx(lfp_slabs_link(&u.s, last));
		lfp_stack_push_chain_mpmc(&u.st, &u.s, first, last);
		t.puts += n;
	} while (!bulk_done(&u, calls));
	__atomic_store_n(&u.stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	t.cas_retries = lfp_stress_cas_retries - retries0;
	run_add(r, &t);
	uint64_t single = __atomic_load_n(&u.worst, __ATOMIC_RELAXED);
	uint64_t bound = floor_log2(UPTO_MAX) + single + UPTO_SLACK;
	printf("    %s: %llu bulk pops of up to %u, the most failed CASes in one: %llu; "
	       "bound %llu (log2 %u + %llu, the most in one single pop or push of %u threads, "
	       "+ %u)\n",
	       r->scenario, (unsigned long long)calls, UPTO_MAX, (unsigned long long)worst,
	       (unsigned long long)bound, floor_log2(UPTO_MAX), (unsigned long long)single, made,
	       UPTO_SLACK);
	uint64_t fails = __atomic_load_n(&u.fails, __ATOMIC_RELAXED);
	if (fails < UPTO_CONTENDED)
		printf("    %s: the single ops failed only %llu CASes: these threads seem to have "
		       "run in parallel little (a loaded machine), and starving needs that\n",
		       r->scenario, (unsigned long long)fails);
	if (made < UPTO_SINGLES_MIN)
		run_fail(r, "only %u of %u single-op threads started", made, k);
	else if (worst > bound)
		run_fail(r, "a bulk pop of up to %u failed %llu CASes in one call, more than "
			 "floor(log2(%u)) + %llu (the most failed CASes of one single pop or push "
			 "in the same run) + %u: it starved while single operations went on",
			 UPTO_MAX, (unsigned long long)worst, UPTO_MAX, (unsigned long long)single,
			 UPTO_SLACK);
	lfp_slabs_fini(&u.s);
}

const struct scenario sc_upto = { "upto-starve", false, false, 1, upto_starve };
