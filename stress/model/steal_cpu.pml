/* SPDX-License-Identifier: MIT */
/*
 * steal_cpu.pml - stop and take from a per-CPU area in rseq mode
 * (lib/threadstatic/steal.c, steps 1-8 atop it): a thread on the area's
 * CPU gets and puts through restartable sequences while another thread,
 * whose get found nothing and could create nothing, closes the gate,
 * fences with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ), takes and
 * reopens.
 *
 * Memory model: x86-64 TSO store buffers as in steal.pml.  Restartable
 * sequences: the owner's section [start, commit) is a series of steps, each
 * taken only while no abort is pending; the commit (the incq of pushes or
 * pops, the section's last instruction) leaves the section in the same step.
 * The heavy fence is an instant at which both store buffers are empty (a
 * full barrier on the owner's CPU by IPI, and on the thief's) and at which
 * a sequence in flight on the owner's CPU is made to abort: it can take no
 * further step of its section and starts over from its first load (the
 * kernel moves it to the abort handler, which starts it over).
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation).  The sequences are
 * written once, for users' inline calls and the library alike; both take
 * the steps R0-R4:
 *   get, put                        include/lfpool/impl/rseq.h lfpool_rseq_get_(),
 *                                   include/lfpool/impl/rseq.h LFPOOL_RSEQ_PUT_()
 *   R0  arm, start the section      include/lfpool/impl/rseq.h LFPOOL_RSEQ_ENTER_()
 *   R1  load the gate, compare      the cmpl of the CPU number with the table's
 *                                   gate, jae to the miss (LFPOOL_RSEQ_ENTER_)
 *   R2  load pushes and pops        the movq and subq of the get or put body
 *   R3  get: load the top slot; put: store the slot at held
 *   R4  commit: incq pops (get) or pushes (put) in memory, the last
 *       instruction (its load and store in one step: an interrupt falls
 *       before or after an instruction, never inside)
 *   R5  miss, empty or full: the owner's slow path: on_empty takes from the
 *       depot, on_full gives to the depot
 *                                   lib/threadstatic/ts_percpu.c on_empty(),
 *                                   lib/threadstatic/ts_percpu.c on_full()
 *   A0  thief: the depot            lib/threadstatic/steal.c take_depot()
 *   A1  stop: gate = 0              lib/threadstatic/percpu.c lfp_percpu_stop()
 *                                   (from lib/threadstatic/steal.c stop_areas())
 *   A2  fence                       lib/threadstatic/fence.c lfp_fence_heavy()
 *                                   (in lib/threadstatic/steal.c sweep_owned())
 *   A3  take from the top           lib/threadstatic/percpu.c take_area() (through
 *                                   lib/threadstatic/percpu.c lfp_percpu_take())
 *   A4  restart: gate = ncpu, release
 *                                   lib/threadstatic/percpu.c lfp_percpu_restart()
 * Simplified: one CPU and its area of two slots, one thread on it (another
 * thread on the same CPU interleaves with it only through preemption, which
 * aborts its section just as the fence does); objects never created; the
 * slow paths move one object straight between the depot and the hand (no
 * objects "in transit", which steal.c's retry covers); the depot is taken
 * from again after the fence, as steal.pml shows it must be.
 *
 * Properties: no object held by two threads (assertions at every take);
 * conservation at the end (each object in one hand, the depot or the
 * area's slot[0 .. pushes - pops)); a get fails with ENOBUFS only when at
 * some instant during it every object was out (none in the depot nor
 * committed to the area); no invalid end state; (ltl progress, weak
 * fairness) the owner finishes every call.
 *
 * -DDEPOT_FIRST takes from the depot only before the stop, as the code did
 * at 186c4e9 (lfp_steal takes it again after the fence, as checked here):
 * a put that misses on the closed gate sends its object to the depot
 * behind the thief's back (row steal-cpu-depot-first).
 *
 * Negative control (-DNEGATIVE): the fence drains the store buffers but
 * aborts nothing, as membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) without
 * _RSEQ would: a get that read the open gate and the counters before the
 * stop commits its pop after the thief took the same object.
 */

#define MAX	2		/* slots of the area */
#define NOBJ	2		/* capacity: 1 in the area, 1 in the owner's hand */
#ifndef OPS
#define OPS	5		/* owner's calls */
#endif
#define SBN	2		/* store buffer entries */

#define O	0		/* owner, on the area's CPU */
#define T	1		/* thief */

#define A_GATE	1		/* addresses */
#define A_PUSH	2
#define A_POP	3
#define A_SLOT	4		/* A_SLOT + i: slot[i] */
#define NADDR	(A_SLOT + MAX)

byte mem[NADDR];
byte sba[2 * SBN];
byte sbv[2 * SBN];
byte sbn[2];

bit in_cs;			/* the owner is in [start, commit) */
bit aborted;			/* ... and an abort is pending */
bit depot[NOBJ + 1];
bit ohand[NOBJ + 1], thand[NOBJ + 1];

bit trying, allout;
byte finished;
bit ofinished;
bit started;

inline ld(t, a, dst) {
	if
	:: sbn[t] == 2 && sba[t * SBN + 1] == a -> dst = sbv[t * SBN + 1]
	:: else ->
		if
		:: sbn[t] >= 1 && sba[t * SBN] == a -> dst = sbv[t * SBN]
		:: else -> dst = mem[a]
		fi
	fi
}

inline st(t, a, v) {
	sba[t * SBN + sbn[t]] = a;
	sbv[t * SBN + sbn[t]] = v;
	sbn[t]++
}

/* Whether every object is out: none in the depot nor committed to the area. */
inline observe() {
	if
	:: trying && !depot[1] && !depot[2] && mem[A_PUSH] == mem[A_POP] -> allout = 1
	:: else
	fi
}

proctype flusher(byte t)
{
end:	do
	:: atomic {
		sbn[t] > 0 ->
		mem[sba[t * SBN]] = sbv[t * SBN];
		sba[t * SBN] = sba[t * SBN + 1];
		sbv[t * SBN] = sbv[t * SBN + 1];
		sba[t * SBN + 1] = 0;
		sbv[t * SBN + 1] = 0;
		sbn[t]--;
		observe()
	   }
	od
}

/* The thread on the area's CPU: OPS gets and puts through the sequences
 * (lib/threadstatic/ts_percpu.c lfp_ts_percpu_get(),
 * lib/threadstatic/ts_percpu.c lfp_ts_percpu_put(): R0-R5). */
proctype owner()
{
	byte k, o, g, pu, po, x;

	do
	:: k < OPS ->
		k++;
		if
		:: true ->						/* get */
restart_get:
			atomic { in_cs = 1; aborted = 0 };		/* R0 */
			if
			:: atomic { !aborted -> ld(O, A_GATE, g) }	/* R1 */
			:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_get
			fi;
			if
			:: g != 0 ->
				if
				:: atomic { !aborted -> ld(O, A_PUSH, pu); ld(O, A_POP, po) }	/* R2 */
				:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_get
				fi
			:: else -> pu = 0; po = 0
			fi;
			if
			:: g != 0 && pu != po ->
				if
				:: atomic { !aborted -> ld(O, A_SLOT + pu - po - 1, o) }	/* R3 */
				:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_get
				fi;
				if
				:: atomic {					/* R4 */
					!aborted && sbn[O] < SBN ->
					ld(O, A_POP, po);	/* incq: reads the counter again */
					st(O, A_POP, po + 1);
					in_cs = 0;
					assert(o >= 1 && o <= NOBJ);
					assert(!ohand[o] && !thand[o]);	/* no object held twice */
					ohand[o] = 1
				   }
				:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_get
				fi
			:: else ->
				atomic {				/* R5: on_empty */
					in_cs = 0;
					aborted = 0;
					if
					:: depot[1] -> depot[1] = 0; o = 1
					:: depot[2] -> depot[2] = 0; o = 2
					:: else -> o = 0	/* the owner would steal in turn */
					fi;
					if
					:: o != 0 -> assert(!ohand[o] && !thand[o]); ohand[o] = 1
					:: else
					fi;
					observe()
				}
			fi
		:: ohand[1] || ohand[2] ->				/* put */
			x = (ohand[1] -> 1 : 2);
restart_put:
			atomic { in_cs = 1; aborted = 0 };		/* R0 */
			if
			:: atomic { !aborted -> ld(O, A_GATE, g) }	/* R1 */
			:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_put
			fi;
			if
			:: g != 0 ->
				if
				:: atomic { !aborted -> ld(O, A_PUSH, pu); ld(O, A_POP, po) }	/* R2 */
				:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_put
				fi
			:: else -> pu = 0; po = MAX
			fi;
			if
			:: g != 0 && pu - po < MAX ->
				if
				:: atomic { !aborted && sbn[O] < SBN -> st(O, A_SLOT + pu - po, x) }	/* R3 */
				:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_put
				fi;
				if
				:: atomic {					/* R4 */
					!aborted && sbn[O] < SBN ->
					ld(O, A_PUSH, pu);	/* incq: reads the counter again */
					st(O, A_PUSH, pu + 1);
					in_cs = 0;
					ohand[x] = 0
				   }
				:: atomic { aborted -> in_cs = 0; aborted = 0 }; goto restart_put
				fi
			:: else ->
				atomic {				/* R5: on_full */
					in_cs = 0;
					aborted = 0;
					ohand[x] = 0;
					depot[x] = 1;
					observe()
				}
			fi
		fi;
		o = 0; g = 0; pu = 0; po = 0; x = 0
	:: else -> break
	od;
	atomic { finished++; ofinished = 1 }
}

inline depot_take() {
	atomic {
		if
		:: !got && depot[1] -> depot[1] = 0; o = 1
		:: !got && depot[2] -> depot[2] = 0; o = 2
		:: else -> o = 0
		fi;
		if
		:: o != 0 -> assert(!ohand[o] && !thand[o]); thand[o] = 1; got = 1
		:: else
		fi;
		o = 0;
		observe()
	}
}

/* A get at capacity that steals: lib/threadstatic/steal.c lfp_steal() (A0-A4). */
proctype thief()
{
	byte o, pu, po;
	bit got;

	atomic { trying = 1; allout = 0; observe() };
	depot_take();						/* A0 */
	if
	:: !got ->
		atomic { sbn[T] < SBN -> st(T, A_GATE, 0) };	/* A1 */
		atomic {					/* A2 */
			sbn[O] == 0 && sbn[T] == 0 ->
#ifndef NEGATIVE
			if
			:: in_cs -> aborted = 1
			:: else
			fi
#else
			skip
#endif
		};
#ifndef DEPOT_FIRST
		depot_take();					/* A0 again, stopped */
#endif
		atomic {					/* A3 */
			sbn[T] < SBN ->
			ld(T, A_PUSH, pu);
			ld(T, A_POP, po);
			if
			:: !got && pu != po ->
				ld(T, A_SLOT + pu - po - 1, o);
				assert(o >= 1 && o <= NOBJ);
				assert(!ohand[o] && !thand[o]);	/* no object held twice */
				thand[o] = 1;
				got = 1;
				st(T, A_POP, po + 1)
			:: else
			fi;
			o = 0; pu = 0; po = 0
		};
		atomic { sbn[T] < SBN -> st(T, A_GATE, 1) }	/* A4 */
	:: else
	fi;
	atomic {
		assert(got || allout);		/* ENOBUFS only when every object was out */
		trying = 0;
		finished++
	}
}

active proctype checker()
{
	byte o, n, i;

	atomic {
		started && finished == 2 && sbn[O] == 0 && sbn[T] == 0;
		for (o : 1 .. NOBJ) {
			n = ohand[o] + thand[o] + depot[o];
			for (i : 0 .. MAX - 1) {
				if
				:: i < mem[A_PUSH] - mem[A_POP] && mem[A_SLOT + i] == o -> n++
				:: else
				fi
			}
			assert(n == 1)
		}
	}
}

ltl progress { <> ofinished }

init
{
	atomic {
		mem[A_GATE] = 1;	/* one CPU */
		mem[A_SLOT] = 1;	/* object 1 in the area */
		mem[A_PUSH] = 1;
		ohand[2] = 1;		/* object 2 in the owner's hand */
		run flusher(O);
		run flusher(T);
		run owner();
		run thief();
		started = 1
	}
}
