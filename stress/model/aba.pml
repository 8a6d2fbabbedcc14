/* SPDX-License-Identifier: MIT */
/*
 * aba.pml - the tagged Treiber stack of lib/stack.h, under which every
 * free list of lfpool lies (the Concurrent pool's, the depot's magazine
 * and loose-object stacks).  The other models take its push and pop as
 * atomic; this one checks that they are: NTH threads each pop and push
 * nodes OPS times on a stack of NN nodes, every load, link store and CAS
 * a step of its own.  The head is a pair, index and a 64-bit tag, read
 * with two loads, tag first, then index (lfpool_stack_load_: the two may come
 * from different heads), and compared-and-swapped whole (double-width
 * CAS, which on failure returns the current pair at once); links live in
 * side data that outlives every node, so a stale read is of valid memory
 * (slab.h).
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation).  The steps are written
 * once, in include/lfpool/impl/tagged_stack.h:
 *   U1  push: load tag, then index   include/lfpool/impl/tagged_stack.h lfpool_stack_load_()
 *   U2  push: link the node to it    include/lfpool/impl/tagged_stack.h lfpool_stack_push_step_()
 *                                    (the link store)
 *   U3  push: CAS the head (tag+1)   include/lfpool/impl/tagged_stack.h lfpool_stack_push_step_()
 *                                    (the CAS: include/lfpool/impl/tagged_stack.h lfpool_stack_cas_())
 *   O1  pop: load tag, then index    include/lfpool/impl/tagged_stack.h lfpool_stack_load_()
 *   O2  pop: load the top's link     include/lfpool/impl/tagged_stack.h lfpool_stack_pop_step_()
 *                                    (the link load)
 *   O3  pop: CAS the head (tag+1)    include/lfpool/impl/tagged_stack.h lfpool_stack_pop_step_()
 *                                    (the CAS)
 * The library's stacks take them in
 * lib/stack.h lfp_stack_push_link_mpmc() (U1-U3) and
 * lib/stack.h lfp_stack_pop_at_mpmc() (O1-O3, through
 * lib/stack.h lfp_stack_pop_step_mpmc()), a Concurrent pool's inline
 * calls on its free stack in
 * include/lfpool/concurrent.h lfpool_concurrent_put() (U1-U3) and
 * include/lfpool/concurrent.h lfpool_concurrent_get() (O1-O3).
 * A failed CAS returns the current head, tag included, and the next try
 * builds on it (the _step functions' *old; their retries:
 * lib/stack.c lfp_stack_push_contended_mpmc(),
 * lib/stack.c lfp_stack_pop_contended_mpmc()).
 *
 * Properties:
 *   - no node is held by two threads (assertion in O3);
 *   - conservation, by the monitor in every state: each node is on the
 *     stack (walked from the head) or in one thread's hands, exactly once;
 *   - no invalid end state, and (ltl done, weak fairness) every thread
 *     finishes: no CAS loop spins forever.  Weak fairness is the scheduler's
 *     part: a thread that can run does run eventually.
 *
 * Negative control (-DNEGATIVE): the tag is not incremented (LFPOOL_STACK_TAG_STEP_ 0,
 * the stress suite's LFPOOL_STRESS_NO_ABA_TAG): a pop stalled between O2
 * and O3 while others pop its node and the next and push its node back
 * succeeds with a stale link, and a node is held twice.
 * With -DTAGMOD=n the tag wraps at n: the same happens after n changes of
 * the head within one pop's window (a narrow tag, in small: the 64-bit
 * tag of lib/stack.h needs 2^64 of them).
 */

#ifndef NTH
#define NTH	2		/* threads */
#endif
#ifndef NN
#define NN	2		/* nodes, all on the stack at first: 1 on top of 2 ... */
#endif
#ifndef OPS
#define OPS	3		/* pushes and pops per thread */
#endif
#ifndef TAGMOD
#define TAGMOD	256		/* the byte wraps only past 255 changes; a run makes < 20 */
#endif
#define NIL	0

#ifdef NEGATIVE
#define TAG_STEP 0
#else
#define TAG_STEP 1
#endif

byte head, tag;			/* the head word: index and tag */
byte link[NN + 1];		/* side data: each node's link */
byte owner[NN + 1];		/* 1 + the thread holding the node, 0 on the stack */
byte finished;
bit started;			/* init has built the stack */

/* A thread of pops (lib/stack.h lfp_stack_pop_at_mpmc(): O1-O3) and pushes
 * (lib/stack.h lfp_stack_push_link_mpmc(): U1-U3), OPS in all. */
proctype user(byte me)
{
	byte k, n, oh, ot, nx;

	do
	:: k < OPS ->
		k++;
		if
		:: true ->					/* pop */
			ot = tag;				/* O1: tag, */
			oh = head;				/* then index */
			do
			:: oh == NIL -> break
			:: else ->
				nx = link[oh];			/* O2 */
				atomic {			/* O3 */
					if
					:: head == oh && tag == ot ->
						head = nx; tag = (tag + TAG_STEP) % TAGMOD;
						assert(owner[oh] == 0);	/* not held by another */
						owner[oh] = me + 1;
						break
					:: else -> oh = head; ot = tag
					fi
				}
			od
		:: true ->					/* push a node it holds */
			atomic {
				n = 1;
				do
				:: n <= NN && owner[n] != me + 1 -> n++
				:: else -> break
				od
			};
			if
			:: n <= NN ->
				ot = tag;			/* U1: tag, */
				oh = head;			/* then index */
				do
				:: link[n] = oh;		/* U2 */
				   atomic {			/* U3 */
					if
					:: head == oh && tag == ot ->
						assert(owner[n] == me + 1);
						owner[n] = 0;
						head = n; tag = (tag + TAG_STEP) % TAGMOD;
						break
					:: else -> oh = head; ot = tag
					fi
				   }
				od
			:: else -> skip			/* holds nothing: no push */
			fi
		fi;
		oh = NIL; ot = 0; nx = NIL; n = 0
	:: else -> break
	od;
	finished++
}

active proctype monitor()
{
	byte seen[NN + 1];
	byte i, j, x;

	d_step {
		started;
		for (i : 1 .. NN) {
			seen[i] = (owner[i] != 0)
		}
		x = head;
		j = 0;
		do
		:: x != NIL && j <= NN -> seen[x]++; x = link[x]; j++
		:: else -> break
		od;
		for (i : 1 .. NN) {
			assert(seen[i] == 1)
		}
	}
}

ltl done { <> (finished == NTH) }

init
{
	byte i;

	atomic {
		for (i : 1 .. NN - 1) {
			link[i] = i + 1
		}
		head = 1;
		started = 1;
		for (i : 0 .. NTH - 1) {
			run user(i)
		}
	}
}
