/* SPDX-License-Identifier: MIT */
/*
 * elim.pml - the elimination array beside a Concurrent pool's free stack
 * (lib/stack.c, "Elimination"): a get and a put whose CAS on the head
 * failed meet in a slot and exchange the object without the stack.  The
 * stack itself is taken as atomic here (aba.pml checks it step by step);
 * every load and CAS of a slot is a step of its own.  A slot is a pair,
 * what waits (kind and index) and a tag that every change increments,
 * read with two loads, tag first, and compared-and-swapped whole.
 *
 * Threads: a put of node 1 (P); a user (U) that gets a node, then puts it
 * back; with -DTRIM a trim (T) that pops the whole stack, keeps KEEP
 * nodes and destroys the rest.  Node 2 starts on the stack.  Each call
 * either wins its CAS on the head at once or, after a failure, visits the
 * array (at most VISITS times; then its CAS wins).  A visit picks a slot
 * (any: the C code's start and range) and:
 *   V1  loads the slot's tag, then its kind and index
 *   V2  meets a partner: one CAS (a get's: PUT|i -> FREE, taking i; a
 *       put's: GET -> GIVEN|i)
 *   V3  or parks (CAS FREE -> PUT|i or GET), waits, and withdraws with a
 *       CAS back to FREE; the withdrawal fails only if a partner came: a
 *       put is then done, a get takes GIVEN|j and frees the slot (a CAS
 *       that must succeed)
 * The wait is any number of steps of the others (the timeout races the
 * match); the poll of the C code only shortens it and is left out.
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   put, get   the head's CAS, atomic here: lib/stack.h lfp_stack_push_link_elim_mpmc(),
 *              lib/stack.h lfp_stack_pop_at_elim_mpmc(), called by
 *              lib/concurrent.c lfpool_concurrent_put_slow() and the other calls
 *              of lib/concurrent.c; after a failed CAS a visit per retry:
 *              lib/stack.c lfp_stack_push_elim_mpmc(),
 *              lib/stack.c lfp_stack_pop_elim_mpmc(), through
 *              lib/stack.c elim_wait()
 *   V1, V2     lib/stack.c elim_visit(): the slot's load (elim_load), the CAS
 *              that meets a partner
 *   V3         lib/stack.c elim_park(): the CAS that parks, the withdrawing CAS, and
 *              a get's CAS that frees a GIVEN slot
 *   trim       lib/concurrent.c lfpool_concurrent_trim(): pop the whole stack
 *              (lib/stack.h lfp_stack_pop_all_mpmc()), push the kept ones back,
 *              destroy the rest
 *
 * Properties:
 *   - each node is in exactly one place in every state (the monitor): on
 *     the stack, in one thread's hands, offered in one slot (PUT or
 *     GIVEN), or destroyed by the trim;
 *   - every move checks the node is where the mover thinks (assertions:
 *     a put pushes or parks a node it holds, a get takes a node offered
 *     in that slot);
 *   - a put that returns has given its node away: it is on the stack, with
 *     a get, or given to a waiting get, not in the hands of a put that
 *     began before it and still runs (a get at capacity would say ENOBUFS
 *     with the node free);
 *   - when all are done, no node is held or parked (none lost);
 *   - no invalid end state (waits are bounded: nobody waits for another).
 *
 * Negative controls:
 *   -DNEGATIVE: the slot's tag is not incremented (a slot reused without
 *     its tag; LFPOOL_STRESS_NO_ELIM_TAG in C).  P parks node 1, U takes
 *     it and, its put contended too, parks it in the same slot: the slot
 *     reads PUT|1 as P left it, P's withdrawal succeeds on U's parking,
 *     and U returns as if a get had taken it, while P pushes it.
 *   -DNEGATIVE_STORE: a withdrawal stores FREE instead of a CAS: a
 *     timeout that races a match keeps the node the matcher took.
 */

#ifndef NS
#define NS	1		/* slots */
#endif
#ifndef VISITS
#define VISITS	2		/* visits to the array per call, at most */
#endif
#ifndef KEEP
#define KEEP	0		/* nodes the trim keeps */
#endif
#define NN	2		/* nodes */
#define TAGMOD	64

#ifdef NEGATIVE
#define TAG_STEP 0
#else
#define TAG_STEP 1
#endif

/* slot kinds (lib/stack.h LFP_ELIM_*) */
#define FREE	0
#define PUT	1
#define GET	2
#define GIVEN	3

/* where a node is */
#define L_STACK	0
#define L_SLOT	1
#define L_GONE	2
#define L_HELD	3		/* + the thread */

#define P_ID	0
#define U_ID	1
#define T_ID	2
#ifdef TRIM
#define NTH	3
#else
#define NTH	2
#endif

byte skind[NS], sidx[NS], stag[NS], sparker[NS];	/* sparker: ghost */
byte putting[NTH];		/* ghost: the node a thread's put has not finished */
byte putsince[NTH], clock;	/* ghost: when each put began */
bit onstack[NN + 1];
byte loc[NN + 1];
byte finished;
bit started;			/* init has placed the nodes */

/* The stack's push and pop, atomic (aba.pml). */
inline push(n)
{
	atomic {
		assert(loc[n] == L_HELD + me);
		onstack[n] = 1;
		loc[n] = L_STACK
	}
}

inline pop(got)
{
	atomic {
		if
		:: onstack[1] -> got = 1
		:: onstack[2] -> got = 2
		:: else -> got = 0
		fi;
		if
		:: got != 0 -> onstack[got] = 0; loc[got] = L_HELD + me
		:: else -> skip
		fi
	}
}

/* V1: which slot, its tag, then its kind and index. */
inline load_slot()
{
	if
	:: s = 0
#if NS > 1
	:: s = 1
#endif
	fi;
	ot = stag[s];
	ok = skind[s];
	oi = sidx[s]
}

/* V3's withdrawal: CAS (mine) -> FREE; won is 1 when it withdrew. */
inline withdraw(mk, mi)
{
#ifdef NEGATIVE_STORE
	atomic {					/* as if withdrawn, always */
		if
		:: mk == PUT && skind[s] == PUT && sidx[s] == mi -> loc[mi] = L_HELD + me
		:: else -> skip
		fi;
		skind[s] = FREE; sidx[s] = 0; stag[s] = (stag[s] + TAG_STEP) % TAGMOD;
		won = 1
	}
#else
	atomic {
		if
		:: stag[s] == mt && skind[s] == mk && sidx[s] == mi ->
			skind[s] = FREE; sidx[s] = 0; stag[s] = (mt + TAG_STEP) % TAGMOD;
			if
			:: mk == PUT -> assert(loc[mi] == L_SLOT); loc[mi] = L_HELD + me
			:: else -> skip
			fi;
			won = 1
		:: else -> won = 0
		fi
	}
#endif
}

/* A put of node n: done is 1 when a get took it. */
inline visit_put(n)
{
	load_slot();
	if
	:: ok == GET ->					/* V2 */
		atomic {
			if
			:: stag[s] == ot && skind[s] == ok && sidx[s] == oi ->
				assert(loc[n] == L_HELD + me);
				skind[s] = GIVEN; sidx[s] = n; stag[s] = (ot + TAG_STEP) % TAGMOD;
				loc[n] = L_SLOT;
				done = 1
			:: else -> skip
			fi
		}
	:: ok == FREE ->				/* V3: park */
		atomic {
			if
			:: stag[s] == ot && skind[s] == ok && sidx[s] == oi ->
				assert(loc[n] == L_HELD + me);
				skind[s] = PUT; sidx[s] = n; mt = (ot + TAG_STEP) % TAGMOD; stag[s] = mt;
				sparker[s] = me; loc[n] = L_SLOT;
				parked = 1
			:: else -> skip
			fi
		};
		if
		:: parked ->
			withdraw(PUT, n);		/* after any wait */
			done = !won;
			parked = 0
		:: else -> skip
		fi
	:: else -> skip					/* only wait */
	fi
}

/* A get: got is the node an exchange gave it (0: none). */
inline visit_get()
{
	load_slot();
	if
	:: ok == PUT ->					/* V2 */
		atomic {
			if
			:: stag[s] == ot && skind[s] == ok && sidx[s] == oi ->
				assert(loc[oi] == L_SLOT);
				skind[s] = FREE; sidx[s] = 0; stag[s] = (ot + TAG_STEP) % TAGMOD;
				loc[oi] = L_HELD + me;
				got = oi
			:: else -> skip
			fi
		}
	:: ok == FREE ->				/* V3: park */
		atomic {
			if
			:: stag[s] == ot && skind[s] == ok && sidx[s] == oi ->
				skind[s] = GET; sidx[s] = 0; mt = (ot + TAG_STEP) % TAGMOD; stag[s] = mt;
				sparker[s] = me;
				parked = 1
			:: else -> skip
			fi
		};
		if
		:: parked ->
			withdraw(GET, 0);
			if
			:: !won ->			/* given: take it, free the slot */
				atomic {
					assert(skind[s] == GIVEN && sparker[s] == me);
					got = sidx[s];
					assert(loc[got] == L_SLOT);
					loc[got] = L_HELD + me;
					skind[s] = FREE; sidx[s] = 0; stag[s] = (stag[s] + TAG_STEP) % TAGMOD
				}
			:: else -> skip
			fi;
			parked = 0
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* A whole put: the head's CAS wins, or it fails and the array is visited. */
inline put(n)
{
	v = 0; done = 0;
	atomic { putting[me] = n; clock++; putsince[me] = clock };
	do
	:: done -> break
	:: !done -> push(n); break			/* the CAS won */
	:: !done && v < VISITS -> v++; visit_put(n)	/* it failed */
	od;
	/* Returns: n is pooled or with a get, not with a put that began
	 * before this one and is still running. */
	atomic {
		assert(loc[n] < L_HELD || putting[loc[n] - L_HELD] != n ||
		       putsince[loc[n] - L_HELD] > putsince[me]);
		putting[me] = 0
	}
}

inline get()
{
	v = 0; got = 0;
	do
	:: got != 0 -> break
	:: got == 0 -> pop(got); break			/* the CAS won, or empty */
	:: got == 0 && v < VISITS -> v++; visit_get()
	od
}

/* P: a put of node 1 (lib/concurrent.c lfpool_concurrent_put_slow()). */
proctype putter()
{
	byte me = P_ID, s, ot, ok, oi, mt, v, got;
	bit done, won, parked;
	put(1);
	finished++
}

/* U: a get (lib/concurrent.c lfpool_concurrent_get_slow()), then a put of
 * what it got. */
proctype user()
{
	byte me = U_ID, s, ot, ok, oi, mt, v, got;
	bit done, won, parked;
	get();
	if
	:: got != 0 -> put(got)
	:: else -> skip
	fi;
	finished++
}

/* T: lib/concurrent.c lfpool_concurrent_trim(), keeping KEEP nodes. */
proctype trimmer()
{
	byte me = T_ID, n, kept;
	atomic {					/* pop the whole stack */
		for (n : 1 .. NN) {
			if
			:: onstack[n] -> onstack[n] = 0; loc[n] = L_HELD + me
			:: else -> skip
			fi
		}
	};
	kept = 0;
	for (n : 1 .. NN) {				/* keep some, destroy the rest */
		if
		:: loc[n] == L_HELD + me && kept < KEEP -> push(n); kept++
		:: loc[n] == L_HELD + me && kept >= KEEP -> loc[n] = L_GONE
		:: else -> skip
		fi
	}
	finished++
}

active proctype monitor()
{
	byte i, j, c;
	d_step {
		started;
		for (i : 1 .. NN) {
			c = onstack[i];
			for (j : 0 .. NS - 1) {
				c = c + ((skind[j] == PUT || skind[j] == GIVEN) && sidx[j] == i)
			}
			c = c + (loc[i] >= L_HELD) + (loc[i] == L_GONE);
			assert(c == 1);
			assert(onstack[i] == (loc[i] == L_STACK));
			if
			:: finished == NTH -> assert(loc[i] == L_STACK || loc[i] == L_GONE)
			:: else -> skip
			fi
		}
	}
}

init
{
	atomic {
		loc[1] = L_HELD + P_ID;
		onstack[2] = 1;
		loc[2] = L_STACK;
		started = 1;
		run putter();
		run user();
#ifdef TRIM
		run trimmer();
#endif
	}
}
