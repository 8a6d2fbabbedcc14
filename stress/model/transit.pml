/* SPDX-License-Identifier: MIT */
/*
 * transit.pml - a per-CPU get at capacity racing a get whose init hook
 * never returns: the thief must end, with an object or with ENOBUFS, and
 * fail only when every object was out at some instant of its call.
 *
 * A thief that finds nothing sweeps again while a per-CPU slow path holds
 * objects between the depot and a CPU area (lib/threadstatic/steal.c,
 * step 7: the pool's transit word, in flight | ended << 32).  Such a
 * "transit" must end by itself: if one could enclose user code (an init
 * hook, the backing allocator) that blocks, the thief would sweep for as
 * long as the hook blocks.  Here one hook never returns.
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   M1  maker: transit_enter        lib/threadstatic/ts_percpu.c take_in()
 *                                   (lib/threadstatic/ts_percpu.c transit_enter())
 *   M2  from_pool: the depot        lib/threadstatic/ts_percpu.c from_pool()
 *   M3  transit_leave               lib/threadstatic/ts_percpu.c take_in(), after from_pool
 *                                   (lib/threadstatic/ts_percpu.c transit_leave())
 *   M4  make: reserve created, then the init hook, which never returns
 *                                   lib/threadstatic/ts_percpu.c make_one() (outside the
 *                                   transit), lib/threadstatic/ts_internal.h lfp_ts_create_objects()
 *   U*  user: gets and puts on the area (fast paths, atomic here: their
 *       protocol is steal_cpu.pml's), and the slow paths' moves between
 *       the depot and the area or the hand, inside a transit
 *                                   lib/threadstatic/ts_percpu.c refill(),
 *                                   lib/threadstatic/ts_percpu.c stow(),
 *                                   lib/threadstatic/ts_percpu.c overflow()
 *   T1  thief: its own create fails at capacity
 *                                   lib/threadstatic/ts_percpu.c take_in(), make_one()
 *   T2  read transit; sweep (the depot and the area, stopped: one step);
 *       read transit again          lib/threadstatic/steal.c lfp_steal(),
 *                                   lib/threadstatic/steal.c sweep_owned(),
 *                                   lib/threadstatic/steal.c transits()
 *   T3  nothing, and no transit in flight before nor begun or ended
 *       since: ENOBUFS; else unlock, yield, sweep again
 *                                   lib/threadstatic/steal.c lfp_steal()
 * Two objects (capacity 2): U, with the user at first, and M, the maker's,
 * counted in created from M4 on and out (being made) for good.
 *
 * Properties: (safety) a get fails only when at some instant of its call
 * every object was out: none in the depot, the area or a transit's hands;
 * no invalid end state (the hook's block is a valid end); (ltl done, weak
 * fairness) the thief's get ends.
 *
 * Negative controls: -DHOOK_IN_TRANSIT runs the hook inside the transit,
 * as the per-CPU get once did (M3 after M4): the thief sweeps forever
 * (ltl done rejected, row transit-done-neg).  -DNO_RESWEEP fails as soon as
 * a sweep finds nothing: a get fails while the user's object is between
 * the depot and the area (safety rejected, row transit-neg-resweep).
 */

#define CAP	2
#ifndef OPS
#define OPS	3		/* user's calls */
#endif

byte created = 1;		/* U */
byte depot, area;		/* pooled objects */
byte moving;			/* in a transit's hands */
bit uhand = 1;			/* the user holds U */
byte t_in, t_ended;		/* the transit word's two halves */
bit trying, allout, thief_done;

/* Every object out: none pooled, none in a transit's hands. */
inline observe() {
	if
	:: trying && depot == 0 && area == 0 && moving == 0 -> allout = 1
	:: else
	fi
}

inline enter() { t_in++ }
inline leave() { t_in--; t_ended++ }

/* A per-CPU get whose create blocks in the init hook:
 * lib/threadstatic/ts_percpu.c take_in() (M1-M4). */
proctype maker()
{
	bit got;
	atomic { enter() };					/* M1 */
	atomic {						/* M2 */
		if
		:: depot > 0 -> depot--; got = 1; observe()
		:: else
		fi
	};
#ifndef HOOK_IN_TRANSIT
	atomic { leave() };					/* M3 */
#endif
	if
	:: got ->
#ifdef HOOK_IN_TRANSIT
		atomic { leave() }
#else
		skip
#endif
	:: else ->
		atomic {					/* M4 */
			if
			:: created < CAP -> created++
			:: else
			fi
		};
end_hook:	false			/* the init hook never returns */
	fi
}

/* The area's user: fast gets and puts, and slow ones in transits
 * (lib/threadstatic/ts_percpu.c refill(), lib/threadstatic/ts_percpu.c overflow()). */
proctype user()
{
	byte k;
	do
	:: k < OPS ->
		k++;
		if
		:: atomic { uhand && area == 0 -> uhand = 0; area++ }	/* put, fast */
		:: uhand ->						/* put, overflow */
			atomic { enter(); uhand = 0; moving++ };
			atomic { moving--; depot++; leave() }
		:: atomic { !uhand && area > 0 -> area--; uhand = 1; observe() }	/* get, fast */
		:: !uhand && area == 0 ->				/* get, refill */
			atomic { enter(); if :: depot > 0 -> depot--; moving++ :: else fi };
			atomic {
				if
				:: moving > 0 -> moving--; area++	/* stowed in the area */
				:: moving > 0 -> moving--; uhand = 1	/* its own */
				:: else
				fi;
				leave();
				observe()
			}
		:: else -> skip
		fi
	:: else -> break
	od
}

/* A get at capacity: lib/threadstatic/ts_percpu.c take_in() (T1), then
 * lib/threadstatic/steal.c lfp_steal() (T2-T3). */
proctype thief()
{
	bit got;
	byte bin, bend;
	atomic { trying = 1; allout = 0; observe() };
	atomic {						/* T1 */
		if
		:: created < CAP -> created++; got = 1
		:: else
		fi
	};
	do
	:: got -> break
	:: !got ->
		atomic { bin = t_in; bend = t_ended };		/* T2 */
		atomic {
			if
			:: depot > 0 -> depot--; got = 1
			:: area > 0 -> area--; got = 1
			:: else
			fi
		};
		if						/* T3 */
		:: got -> break
#ifdef NO_RESWEEP
		:: else -> break
#else
		:: atomic { !got && bin == 0 && t_in == 0 && t_ended == bend } -> break
		:: else -> skip		/* unlock, yield, lock: sweep again */
#endif
		fi
	od;
	atomic {
		assert(got || allout);	/* ENOBUFS only when every object was out */
		trying = 0;
		thief_done = 1
	}
}

ltl done { <> thief_done }

init
{
	atomic {
		run user();
		run maker();
		run thief()
	}
}
