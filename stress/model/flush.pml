/* SPDX-License-Identifier: MIT */
/*
 * flush.pml - lfpool_ts_worker_release racing with itself: two threads
 * release the same worker index, each flushing the slot's cache onto the
 * depot's loose stack, while a third thread gets objects off that stack.
 * The synchronization table of include/lfpool/ts.h lets
 * worker_release run concurrently with itself; an unlocked flush hands
 * one object out twice.
 *
 * Here the cache is shared by the two releasers, so nothing is merged:
 * every load and store of the cache's fields, every link word written and
 * every CAS on the stack's head is a step of its own.  The head is the
 * tagged pair of lib/stack.h (tag loaded before index, one double-width
 * CAS).
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   W0  take the slot's turn        lib/threadstatic/worker.c lfpool_ts_worker_release():
 *                                   the exchange on the slot's `releasing` byte
 *                                   (acquire), a wait while another holds it; W7 its
 *                                   release store.  Today the flush also runs under
 *                                   the cache's lock (lib/threadstatic/cache.c own(),
 *                                   from lib/threadstatic/cache.c lfpool_ts_cache_flush()),
 *                                   which would serve as well: the model has one lock
 *                                   for both, and its control drops it.
 *   F1  load count                  lib/threadstatic/cache.c flush_owned() (loaded_n)
 *   F2  link the objects            lib/threadstatic/depot.c lfp_depot_put_objs()
 *                                   (lib/threadstatic/depot.c link_objs())
 *   F3  push the chain: load head,  lib/stack.h lfp_stack_push_chain_mpmc() ->
 *       link the last, CAS the head lib/stack.h lfp_stack_push_link_mpmc()
 *   F4  store count = 0             lib/threadstatic/cache.c flush_owned() (set_loaded_n)
 *   F5  load prev_full; F2, F3 for the previous magazine
 *                                   lib/threadstatic/cache.c flush_owned() (prev_count)
 *   F6  store prev_full = false     lib/threadstatic/cache.c flush_owned() (set_prev_count)
 *   G1  pop: load head, load the    lib/stack.h lfp_stack_pop_at_mpmc() (a get's refill
 *       top's link, CAS the head    pops a chain the same way:
 *                                   lib/stack.c lfp_stack_pop_upto_mpmc())
 *
 * Properties:
 *   - no object is held by two owners: the getter never pops an object it
 *     already holds (assertion in G1);
 *   - conservation, by the monitor in every state: each object is in
 *     exactly one place: the getter's hands, the loose stack (walked from
 *     the head), the loaded magazine below count, or the full previous
 *     magazine; objects of a magazine a releaser has pushed but whose
 *     count (prev_full) it has not yet cleared count as the stack's;
 *   - no invalid end state.
 *
 * Negative control (-DNEGATIVE): no lock, as lib/threadstatic/worker.c
 * had before the turn was added.  Spin finds the double push (an object twice on the stack: a
 * cycle of links); with -DNOMONITOR as well, the getter's own assertion
 * shows where that leads: one object handed out twice.
 */

#define MAG	2
#define NOBJ	4		/* loaded {1,2} full, previous {3,4} full */
#define NIL	0
#define GETS	3		/* pops the getter tries */

byte mag[2 * MAG];		/* the slot cache's magazines: loaded at 0, previous at MAG */
byte count;
bit prev_full;

byte link[NOBJ + 1];		/* side data: link word of each object */
byte head;			/* the loose stack's head: index ... */
byte tag;			/* ... and tag, one word */

bit hand[NOBJ + 1];		/* the getter's hands */
bit lock;
bit started;			/* init has set the scene */

/* ghosts: releaser r has pushed the loaded (prev) objects but not yet
 * cleared count (prev_full) */
bit gl[2], gp[2];

/* F2 + F3: push the n objects of the magazine at mag[b] as one chain,
 * objs[0] on top; g is the ghost set at the successful CAS. */
inline put_objs(b, n, g) {
	i = n;
	rest = NIL;
	do						/* F2: link_objs */
	:: i > 0 -> i--; atomic { link[mag[b + i]] = rest; rest = mag[b + i] }
	:: else -> break
	od;
	ot = tag; oh = head;				/* F3: load the head, tag first */
	do
	:: atomic { link[mag[b + n - 1]] = oh };		/* link the last */
	   atomic {					/* CAS */
		if
		:: head == oh && tag == ot -> head = rest; tag++; g = 1; break
		:: else -> oh = head; ot = tag		/* failed: the current head */
		fi
	   }
	od;
	rest = NIL; oh = NIL; ot = 0
}

/* lib/threadstatic/worker.c lfpool_ts_worker_release() of the slot (W0-W7),
 * its flush lib/threadstatic/cache.c flush_owned() (F1-F6). */
proctype releaser(byte r)
{
	byte n, i, rest, oh, ot;

#ifndef NEGATIVE
	atomic { lock == 0 -> lock = 1 };		/* W0 */
#endif
	n = count;					/* F1 */
	if
	:: n > 0 -> put_objs(0, n, gl[r])
	:: else -> skip
	fi;
	atomic { count = 0; gl[r] = 0 };		/* F4 */
	if
	:: prev_full -> put_objs(MAG, MAG, gp[r])	/* F5 */
	:: else -> skip
	fi;
	atomic { prev_full = 0; gp[r] = 0 };		/* F6 */
#ifndef NEGATIVE
	lock = 0					/* W7 */
#endif
}

/* GETS pops off the loose stack (lib/stack.h lfp_stack_pop_at_mpmc(): G1). */
proctype getter()
{
	byte k, oh, ot, nx;

	do
	:: k < GETS ->
		k++;
		ot = tag; oh = head;			/* G1: load the head, tag first */
		do
		:: oh == NIL -> break			/* empty: the get goes elsewhere */
		:: else ->
			nx = link[oh];			/* the top's link */
			atomic {
				if
				:: head == oh && tag == ot ->
					head = nx; tag++;
					assert(!hand[oh]);	/* no object held twice */
					hand[oh] = 1;
					break
				:: else -> oh = head; ot = tag
				fi
			}
		od;
		oh = NIL; ot = 0; nx = NIL
	:: else -> break
	od
}

#ifndef NOMONITOR
active proctype monitor()
{
	byte seen[NOBJ + 1];
	byte i, j, x;

	d_step {
		started;
		for (i : 1 .. NOBJ) {
			seen[i] = hand[i]
		}
		/* the stack, walked for at most NOBJ + 1 links (a cycle shows as
		 * an object seen twice) */
		x = head;
		j = 0;
		do
		:: x != NIL && j <= NOBJ -> seen[x]++; x = link[x]; j++
		:: else -> break
		od;
		for (i : 0 .. MAG - 1) {
			if
			:: i < count && !gl[0] && !gl[1] -> seen[mag[i]]++
			:: else
			fi;
			if
			:: prev_full && !gp[0] && !gp[1] -> seen[mag[MAG + i]]++
			:: else
			fi
		}
		for (i : 1 .. NOBJ) {
			assert(seen[i] == 1)
		}
	}
}
#endif

init
{
	atomic {
		mag[0] = 1; mag[1] = 2; count = 2;
		mag[2] = 3; mag[3] = 4; prev_full = 1;
		run releaser(0);
		run releaser(1);
		run getter();
		started = 1
	}
}
