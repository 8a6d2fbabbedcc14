/* SPDX-License-Identifier: MIT */
/*
 * steal.pml - stop and take from a per-thread cache (the capacity work's
 * protocol B and its verdict C, /work/coord/steal-protocol.md "Final
 * protocol"; branch capacity, lib/threadstatic/steal.c): the cache's owner
 * gets, puts and flushes through its fast and slow paths while another
 * thread, whose own get found nothing and could create nothing, steals.
 *
 * Memory model.  x86-64 (TSO): each thread's stores go through a FIFO store
 * buffer, drained to memory one at a time at any moment (the flusher
 * processes); a thread's loads read its own newest buffered store to the
 * address, else memory.  A locked instruction (the xchg of the cache's
 * spinlock) drains its thread's buffer first.  The heavy fence,
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED[_RSEQ]), puts a full barrier
 * into the owner's instruction stream (an IPI, or the context switch of an
 * owner that was not running) and one into the thief's: modelled as an
 * instant at which both store buffers are empty.  Every owner store before
 * that instant is visible to the thief's later loads, and every owner load
 * after it sees the thief's earlier stores.
 *
 * Correspondence (step: code of branch capacity, commit 186c4e9):
 *   G1  get: count - 1, stored      include/lfpool/threadstatic.h lfpool_cache_get (count store)
 *   G2  get: load low, compare      threadstatic.h lfpool_cache_get (low load, the check)
 *   G3  get hit: objs[c]            threadstatic.h lfpool_cache_get (obj = f->objs[c])
 *   G4  get miss: restore count     lib/threadstatic/cache.c lfpool_cache_get_slow
 *   S1  slow path: cache lock       cache.c lfp_cache_lock (xchg), settle, take/push_objs,
 *       (body under the lock)       refill from the depot, flush_locked; lfp_cache_unlock
 *   P1  put: slot, then count       threadstatic.h lfpool_cache_put (slot store, release count store)
 *   C2  thief: the depot            lib/threadstatic/steal.c take_depot (first, and
 *                                   again once the caches are stopped: see below)
 *   C3  stop: lock, low = STOPPED   cache.c lfp_cache_stop
 *   C4  the heavy fence             steal.c sweep_owned -> lib/threadstatic/fence.c lfp_fence_heavy
 *   C5  take from the bottom        cache.c lfp_cache_take (count load, objs[low ..))
 *   C6  restart: low, unlock        cache.c lfp_cache_restart
 *   C7  nothing: ENOBUFS            steal.c lfp_ts_steal, cache.c create_or_steal
 * Simplified: one cache, whose previous magazine stays empty (the thief
 * takes it under the lock, where nothing races); one steal; objects are
 * never created (the pool is at capacity from the start); make_room sends
 * the full loaded magazine's objects to the depot.
 *
 * Properties:
 *   - no object is held by two threads (assertions at every take);
 *   - conservation: at the end each object is in exactly one place: a
 *     hand, the depot, or the cache's objs[low .. count);
 *   - a get fails with ENOBUFS only when, at some instant during it, every
 *     object was out with users: none in the depot nor in the visible
 *     objs[low .. count) of the cache (a slot a get has claimed by its
 *     count store is out, and a put not yet visible is still in its hand);
 *   - no invalid end state; and (ltl progress, weak fairness: a thread that
 *     can run does run eventually) the owner finishes every call: its fast
 *     path never waits, its slow path waits only for a thief's short
 *     section.
 *
 * The depot again, stopped.  Branch capacity at 186c4e9 takes from the
 * depot only before it stops the caches (-DDEPOT_FIRST): an owner that
 * flushes (or makes room) in between moves its objects into the depot after
 * the thief looked there and out of the cache before the thief looks there,
 * and the get fails with ENOBUFS while an object sat pooled all along (Spin
 * finds it: the row steal-depot-first).  Taken again after the fence, while
 * every cache is stopped (its lock held, so no slow path moves objects
 * between it and the depot), the depot and the caches are read as of one
 * instant, the fence: a get that finds nothing there found every object out.
 *
 * Negative control (-DNEGATIVE): no heavy fence (C4 dropped): the owner's
 * count store sits in its store buffer while its load of low reads the old
 * one, the thief's load of count reads the old count, and both take the
 * same object.
 */

#define MAG	2		/* slots of the loaded magazine */
#define NOBJ	2		/* capacity: 1 in the cache, 1 in the owner's hand */
#define OPS	3		/* owner's calls */
#define STOPPED	100		/* LFP_CACHE_STOPPED */
#define SBN	2		/* store buffer entries */

#define O	0		/* owner */
#define T	1		/* thief */

#define A_COUNT	1		/* addresses */
#define A_LOW	2
#define A_SLOT	3		/* A_SLOT + i: objs[i] */
#define NADDR	(A_SLOT + MAG)

short mem[NADDR];		/* memory: count, low, slots */
byte sba[2 * SBN];		/* store buffers: address ... */
short sbv[2 * SBN];		/* ... value, oldest first */
byte sbn[2];

bit lock;			/* the cache's spinlock */
bit depot[NOBJ + 1];		/* loose objects */
bit ohand[NOBJ + 1], thand[NOBJ + 1];

bit trying;			/* the thief's get is under way */
bit allout;			/* ... and every object was out at some instant of it */
byte finished;
bit ofinished;
bit started;

/* Load of address a by thread t: its own newest buffered store, else memory. */
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

/* Store into thread t's buffer (the caller waits for room: sbn[t] < SBN). */
inline st(t, a, v) {
	sba[t * SBN + sbn[t]] = a;
	sbv[t * SBN + sbn[t]] = v;
	sbn[t]++
}

/* Whether every object is out: none in the depot nor visible in the cache. */
inline observe() {
	if
	:: trying && !depot[1] && !depot[2] &&
	   (mem[A_LOW] == STOPPED || mem[A_COUNT] <= mem[A_LOW]) &&
	   (mem[A_LOW] != STOPPED || mem[A_COUNT] <= tlo) -> allout = 1
	:: else
	fi
}

short tlo;			/* the thief's saved low (observe reads it while STOPPED) */

/* The buffer of thread t drains, one store at a time, whenever. */
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

inline take_hand(o) {
	assert(o >= 1 && o <= NOBJ);
	assert(!ohand[o] && !thand[o]);		/* no object held twice */
	ohand[o] = 1
}

/* S1: the owner's slow-path lock: xchg, its store buffer drained. */
inline olock() { atomic { lock == 0 && sbn[O] == 0 -> lock = 1 } }
inline ounlock() { atomic { sbn[O] == 0 -> lock = 0 } }

/* Under the lock: objs[low .. count) back to objs[0 ..), low = 0 (settle). */
inline settle() {
	if
	:: mem[A_LOW] > 0 ->
		i = 0;
		do
		:: mem[A_LOW] + i < mem[A_COUNT] ->
			mem[A_SLOT + i] = mem[A_SLOT + mem[A_LOW] + i]; i++
		:: else -> break
		od;
		mem[A_COUNT] = i;
		do
		:: i < MAG -> mem[A_SLOT + i] = 0; i++
		:: else -> break
		od;
		mem[A_LOW] = 0;
		i = 0
	:: else
	fi
}

/* Under the lock: every object of the cache to the depot. */
inline to_depot() {
	i = 0;
	do
	:: i < mem[A_COUNT] -> depot[mem[A_SLOT + i]] = 1; mem[A_SLOT + i] = 0; i++
	:: else -> break
	od;
	mem[A_COUNT] = 0;
	i = 0
}

proctype owner()
{
	short c, l;
	byte k, o, i;

	do
	:: k < OPS ->
		k++;
		if
		:: true ->					/* get */
			atomic { sbn[O] < SBN -> ld(O, A_COUNT, c); c = c - 1; st(O, A_COUNT, c) };	/* G1 */
			atomic { ld(O, A_LOW, l) };					/* G2 */
			if
			:: c >= l -> atomic { ld(O, A_SLOT + c, o); take_hand(o); o = 0 }	/* G3 */
			:: else ->
				atomic { sbn[O] < SBN -> ld(O, A_COUNT, c); st(O, A_COUNT, c + 1) };	/* G4 */
				olock();
				atomic {					/* S1: take */
					settle();
					if
					:: mem[A_COUNT] == 0 ->			/* refill from the depot */
						i = 1;
						do
						:: i <= NOBJ && mem[A_COUNT] < MAG ->
							if
							:: depot[i] -> depot[i] = 0;
								mem[A_SLOT + mem[A_COUNT]] = i;
								mem[A_COUNT]++
							:: else
							fi;
							i++
						:: else -> break
						od;
						i = 0
					:: else
					fi;
					if
					:: mem[A_COUNT] > 0 ->
						mem[A_COUNT]--;
						o = mem[A_SLOT + mem[A_COUNT]];
						mem[A_SLOT + mem[A_COUNT]] = 0;
						take_hand(o); o = 0
					:: else -> skip	/* at capacity: the owner steals in turn (not modelled) */
					fi;
					observe()
				};
				ounlock()
			fi;
			c = 0; l = 0
		:: ohand[1] || ohand[2] ->			/* put */
			o = (ohand[1] -> 1 : 2);
			atomic { ld(O, A_COUNT, c) };
			if
			:: c < MAG ->				/* P1: slot, then count */
				atomic { sbn[O] < SBN -> st(O, A_SLOT + c, o) };
				atomic { sbn[O] < SBN -> st(O, A_COUNT, c + 1); ohand[o] = 0 }
			:: else ->
				olock();
				atomic {				/* S1: push_objs */
					settle();
					if
					:: mem[A_COUNT] == MAG -> to_depot()	/* make_room */
					:: else
					fi;
					mem[A_SLOT + mem[A_COUNT]] = o;
					mem[A_COUNT]++;
					ohand[o] = 0;
					observe()
				};
				ounlock()
			fi;
			o = 0; c = 0
		:: true ->					/* flush */
			olock();
			atomic { settle(); to_depot(); observe() };	/* S1: flush_locked */
			ounlock()
		fi
	:: else -> break
	od;
	atomic { finished++; ofinished = 1 }
}

/* C2: a loose object from the depot, if any. */
inline depot_take() {
	atomic {
		if
		:: depot[1] -> depot[1] = 0; o = 1
		:: depot[2] -> depot[2] = 0; o = 2
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

proctype thief()
{
	short top;
	byte o;
	bit got;

	atomic { trying = 1; allout = 0; observe() };
	depot_take();						/* C2 */
	if
	:: !got ->
		atomic { lock == 0 && sbn[T] == 0 -> lock = 1; ld(T, A_LOW, tlo) };	/* C3 */
		atomic { sbn[T] < SBN -> st(T, A_LOW, STOPPED) };
#ifndef NEGATIVE
		atomic { sbn[O] == 0 && sbn[T] == 0 -> skip };	/* C4: membarrier */
#endif
#ifndef DEPOT_FIRST
		depot_take();					/* C2 again, stopped */
#endif
		atomic {						/* C5 */
			ld(T, A_COUNT, top);
			if
			:: !got && top > tlo ->
				ld(T, A_SLOT + tlo, o);
				assert(o >= 1 && o <= NOBJ);
				assert(!ohand[o] && !thand[o]);	/* no object held twice */
				thand[o] = 1;
				got = 1;
				tlo++
			:: else
			fi;
			o = 0; top = 0
		};
		atomic { sbn[T] < SBN -> st(T, A_LOW, tlo) };		/* C6 */
		atomic { lock == 1 && sbn[T] == 0 -> lock = 0 }
	:: else
	fi;
	atomic {
		/* C7: nothing taken and nothing to create: ENOBUFS */
		assert(got || allout);
		trying = 0;
		finished++
	}
}

/* At the end, each object in exactly one place. */
active proctype checker()
{
	byte o, n, i;

	atomic {
		started && finished == 2 && sbn[O] == 0 && sbn[T] == 0;
		for (o : 1 .. NOBJ) {
			n = ohand[o] + thand[o] + depot[o];
			for (i : 0 .. MAG - 1) {
				if
				:: i >= mem[A_LOW] && i < mem[A_COUNT] && mem[A_SLOT + i] == o -> n++
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
		mem[A_SLOT] = 1;	/* object 1 in the cache */
		mem[A_COUNT] = 1;
		ohand[2] = 1;		/* object 2 in the owner's hand */
		run flusher(O);
		run flusher(T);
		run owner();
		run thief();
		started = 1
	}
}
