/* SPDX-License-Identifier: MIT */
/*
 * elim_replay.c - deterministic replays of a Concurrent pool's elimination
 * array (lib/stack.c, "Elimination"; stress/model/elim.pml), on one thread
 * through the public calls.  The stress hook (lfp_stress_yield) runs
 * inside the pool's CAS windows: there the replay does what another
 * thread would, a get and a put that move the head (so the CAS being
 * delayed fails), or, in the window before a parked call withdraws, the
 * partner's call:
 *  1. a put parks its object, a get whose CAS failed takes it;
 *  2. a get parks, a put whose CAS failed gives it its object;
 *  3. a put parks and nobody comes: it withdraws and pushes its object;
 *  4. a put parks while a trim empties the stack and destroys what it
 *     popped: the parked object survives and goes back on the stack;
 *  5. the thread forks while its put is parked (as from a signal
 *     handler): in the child the put goes on in its slot, which fork's
 *     reset of the array keeps, and its object ends on top.
 * Each checks the object that moved, the pool's counters (eliminated,
 * cas_retries: exact here) and that every object is back (created ==
 * retained).  Yield injection adds its random yields around each step.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lfpool.h"
#include "stress_hooks.h"	/* lfp_stress_yield */
#include "stress.h"

/* What the hook does at its next call; each step arms the next. */
enum act { A_NONE, A_MOVE_HEAD, A_THEN_GET, A_THEN_PUT, A_THEN_TRIM, A_FORK };

static struct {
	lfpool_concurrent *pool;
	enum act next[4];	/* the hook's acts, in order */
	unsigned at;		/* the next act's position */
	bool busy;		/* inside an act: the calls it makes run plainly */
	void *obj, *got;	/* the object a nested put gives, a nested get got */
	pid_t child;		/* A_FORK: the child's pid, or 0 in the child */
} rp;

/* Another thread's get and put: the head moves, a delayed CAS fails. */
static void move_head(void)
{
	lfpool_concurrent_put(rp.pool, lfpool_concurrent_get(rp.pool));
}

static void hook(void)
{
	if (rp.busy || rp.at >= 4 || rp.next[rp.at] == A_NONE)
		return;
	enum act a = rp.next[rp.at++];
	if (a == A_MOVE_HEAD) {
		rp.busy = true;
		move_head();
		rp.busy = false;
	} else if (a == A_THEN_GET) {
		rp.got = lfpool_concurrent_get(rp.pool);	/* its window moves the head */
	} else if (a == A_THEN_PUT) {
		lfpool_concurrent_put(rp.pool, rp.obj);
	} else if (a == A_FORK) {
		rp.child = fork();
	} else {
		rp.busy = true;
		lfpool_concurrent_trim(rp.pool, 0);
		rp.busy = false;
	}
}

/* The pool's counters and whether every object is back. */
static int counted(struct run *r, const char *what, uint64_t eliminated, uint64_t retries)
{
	lfpool_stats st;
	lfpool_concurrent_stats(rp.pool, &st);
	if (st.eliminated == eliminated && st.cas_retries == retries && st.created == st.retained)
		return 0;
	run_fail(r, "%s: eliminated %llu (want %llu), cas_retries %llu (want %llu), created %llu, "
		 "retained %llu", what, (unsigned long long)st.eliminated, (unsigned long long)eliminated,
		 (unsigned long long)st.cas_retries, (unsigned long long)retries,
		 (unsigned long long)st.created, (unsigned long long)st.retained);
	return -1;
}

/* Run `outer` (a put of x or a get) with the hook's acts a0..a3 armed. */
static void *replay_one(bool put, void *x, enum act a0, enum act a1, enum act a2, enum act a3)
{
	rp.next[0] = a0, rp.next[1] = a1, rp.next[2] = a2, rp.next[3] = a3;
	rp.at = 0;
	rp.got = NULL;
	lfp_stress_yield = hook;
	void *g = NULL;
	if (put)
		lfpool_concurrent_put(rp.pool, x);
	else
		g = lfpool_concurrent_get(rp.pool);
	lfp_stress_yield = NULL;
	return g;
}

/* A replay's verdict: the object that moved is want; it goes back, then
 * the counters must read eliminated and retries.  -1 on a failure. */
static int verdict(struct run *r, const char *what, void *want, void *got, uint64_t eliminated,
		   uint64_t retries)
{
	if (got != want)
		run_fail(r, "%s: the object that moved is %p, not %p", what, got, want);
	lfpool_concurrent_put(rp.pool, got);
	return counted(r, what, eliminated, retries) != 0 || got != want ? -1 : 0;
}

static void replays(struct run *r)
{
	lfpool_config cfg = { .obj_size = 64, .prewarm = 8 };
	if (!(rp.pool = lfpool_concurrent_create(&cfg))) {
		run_fail(r, "elim-replay: no pool");
		return;
	}
	/* 1: the put's CAS fails, it parks; before it withdraws, a get whose
	 * CAS failed takes its object.  Two failed CAS, one exchange. */
	void *x = lfpool_concurrent_get(rp.pool);
	replay_one(true, x, A_MOVE_HEAD, A_THEN_GET, A_MOVE_HEAD, A_NONE);
	if (verdict(r, "elim-replay 1 (a get takes a parked put's object)", x, rp.got, 2, 2))
		goto out;
	/* 2: the get's CAS fails, it parks; a put whose CAS failed gives it x. */
	x = rp.obj = lfpool_concurrent_get(rp.pool);
	void *g = replay_one(false, NULL, A_MOVE_HEAD, A_THEN_PUT, A_MOVE_HEAD, A_NONE);
	if (verdict(r, "elim-replay 2 (a put gives a parked get its object)", x, g, 4, 4))
		goto out;
	/* 3: the put parks, nobody comes: it withdraws and pushes x on top. */
	x = lfpool_concurrent_get(rp.pool);
	replay_one(true, x, A_MOVE_HEAD, A_NONE, A_NONE, A_NONE);
	if (verdict(r, "elim-replay 3 (a parked put withdraws; the top)", x, lfpool_concurrent_get(rp.pool),
		    4, 5))
		goto out;
	/* 4: a trim takes the stack while x is parked: x goes back alone.
	 * The put withdraws, and its next CAS, on the head from before the
	 * trim, fails once more: three failed CAS in all. */
	x = lfpool_concurrent_get(rp.pool);
	replay_one(true, x, A_MOVE_HEAD, A_THEN_TRIM, A_NONE, A_NONE);
	lfpool_stats st;
	lfpool_concurrent_stats(rp.pool, &st);
	if (st.created != 1)
		run_fail(r, "elim-replay 4: %llu objects after the trim (want the parked one)",
			 (unsigned long long)st.created);
	if (verdict(r, "elim-replay 4 (a trim races a parked put; the top)", x, lfpool_concurrent_get(rp.pool),
		    4, 7))
		goto out;
	/* 5: fork while the put is parked; the child's put withdraws. */
	x = lfpool_concurrent_get(rp.pool);
	rp.child = -1;
	replay_one(true, x, A_MOVE_HEAD, A_FORK, A_NONE, A_NONE);
	if (rp.child == 0)
		_exit(lfpool_concurrent_get(rp.pool) == x ? 0 : 1);
	int status = -1;
	if (rp.child < 0 || waitpid(rp.child, &status, 0) != rp.child || status != 0)
		run_fail(r, "elim-replay 5: after a fork during a parked put, the child's top is not "
			 "the parked object (fork %d, status %#x)", (int)rp.child, status);
	verdict(r, "elim-replay 5 (fork during a parked put; the parent's top)", x,
		lfpool_concurrent_get(rp.pool), 4, 8);
out:
	lfpool_concurrent_destroy(rp.pool);
	r->t.rounds++;
}

const struct scenario sc_elim_replay = { "elim-replay", false, false, 1, replays };
