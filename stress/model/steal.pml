/* SPDX-License-Identifier: MIT */
/*
 * steal.pml - stop and take from a per-thread cache (lib/threadstatic/steal.c,
 * steps 1-8 atop it): the cache's owner gets, puts and flushes through its
 * fast and slow paths while another thread, whose own get found nothing
 * and could create nothing, steals.
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
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation; count is the fast view's
 * top, as an index):
 *   G1  get: count - 1, stored      include/lfpool/impl/cache.h lfpool_ts_cache_get()
 *                                   (LFPOOL_CACHE_POPPED_)
 *   G2  get: load low, compare      include/lfpool/impl/cache.h lfpool_ts_cache_get() (the check)
 *   G3  get hit: objs[c]            include/lfpool/impl/cache.h lfpool_ts_cache_get() (the slot load)
 *   G4  get miss: restore count     lib/threadstatic/cache.c lfpool_ts_cache_get_slow()
 *   S1  slow path: cache lock       lib/threadstatic/cache.c own() (lfp_cache_lock: xchg,
 *       (body under the lock)       then settle), lib/threadstatic/cache.c take_owned()
 *                                   and refill, lib/threadstatic/cache.c push_objs()
 *                                   and make_room, lib/threadstatic/cache.c flush_owned();
 *                                   lib/threadstatic/cache.c disown() (lfp_cache_unlock)
 *   P1  put: slot, then count       include/lfpool/impl/cache.h lfpool_ts_cache_put() (the slot
 *                                   store, then LFPOOL_CACHE_PUSHED_, release)
 *   C2  thief: the depot            lib/threadstatic/steal.c take_depot() (first, and
 *                                   again once the caches are stopped, in
 *                                   lib/threadstatic/steal.c sweep_owned())
 *   C3  stop: lock, low = STOPPED   lib/threadstatic/steal.c stop_cache()
 *   C4  the heavy fence             lib/threadstatic/steal.c sweep_owned() ->
 *                                   lib/threadstatic/fence.c lfp_fence_heavy()
 *   C5  take from the bottom        lib/threadstatic/steal.c take_cache() (top load,
 *                                   objs[low ..))
 *   C6  restart: low, unlock        lib/threadstatic/steal.c restart_cache()
 *   C7  nothing: ENOBUFS            lib/threadstatic/steal.c lfp_steal(),
 *                                   lib/threadstatic/cache.c create_or_steal()
 * Simplified: NC caches (1; the row steal-2caches runs 2), whose previous
 * magazines stay empty (the thief takes those under the cache's lock,
 * where nothing races); one steal; objects are never created (the pool is
 * at capacity from the start); make_room sends the full loaded magazine's
 * objects to the depot.
 *
 * Properties:
 *   - no object is held by two threads (assertions at every take);
 *   - conservation: at the end each object is in exactly one place: a
 *     hand, the depot, or the cache's objs[low .. count);
 *   - a get fails with ENOBUFS only when, at some instant during it, every
 *     object was out with users: no more objects in the depot and in the
 *     caches' visible objs[low .. count) than owners' gets under way (each
 *     of those returns one, and may be linearized at that instant; a put
 *     whose count store is not yet visible still has its object in hand);
 *   - no invalid end state; and (ltl progress, weak fairness: a thread that
 *     can run does run eventually) the owner finishes every call: its fast
 *     path never waits, its slow path waits only for a thief's short
 *     section.
 *
 * The depot again, stopped.  A thief that takes from the depot only
 * before it stops the caches (-DDEPOT_FIRST, as the code did at 186c4e9;
 * lfp_steal takes it again inside the stopped window, as checked here):
 * an owner that flushes (or makes room) in between moves its objects into
 * the depot after the thief looked there and out of the cache before the thief looks there,
 * and the get fails with ENOBUFS while an object sat pooled all along (Spin
 * finds it: the row steal-depot-first).  Taken again after the fence, while
 * every cache is stopped (its lock held, so no slow path moves objects
 * between it and the depot), the depot and the caches are read as of one
 * instant, the fence: a get that finds nothing there found every object out.
 *
 * The progress property has a control too (-DNO_UNLOCK): a thief that
 * leaves the cache locked starves the owner's slow path, and Spin shows
 * the cycle in which the owner never finishes.
 *
 * Negative control (-DNEGATIVE): no heavy fence (C4 dropped): the owner's
 * count store sits in its store buffer while its load of low reads the old
 * one, the thief's load of count reads the old count, and both take the
 * same object.
 */

#ifndef NC
#define NC	1		/* caches, one owner thread each (1 or 2) */
#endif
#define MAG	2		/* slots of a loaded magazine */
#define NOBJ	(NC + 1)	/* capacity: object 1 in cache 0, object 2 + c in owner c's hand */
#ifndef OPS
#define OPS	5		/* each owner's calls */
#endif
#define STOPPED	100		/* LFP_CACHE_STOPPED */
#define SBN	2		/* store buffer entries */
#define T	NC		/* the thief's thread number; owners are 0 .. NC - 1 */
#define NTMAX	3		/* arrays are sized for NC <= 2 */

/* Addresses of cache c: count, low, then its MAG slots objs[i]. */
#define A_COUNT(c)	(1 + (c) * (MAG + 2))
#define A_LOW(c)	(2 + (c) * (MAG + 2))
#define A_SLOT(c)	(3 + (c) * (MAG + 2))
#define NADDR		(1 + NTMAX * (MAG + 2))

short mem[NADDR];		/* memory */
byte sba[NTMAX * SBN];		/* store buffers: address ... */
short sbv[NTMAX * SBN];		/* ... value, oldest first */
byte sbn[NTMAX];
#define ALL_DRAINED	(sbn[0] == 0 && sbn[1] == 0 && sbn[2] == 0)

bit lock[NC];			/* each cache's spinlock */
short tlo[NC];			/* the thief's saved low of each cache */
bit depot[NOBJ + 1];		/* loose objects */
byte hand[NOBJ + 1];		/* 1 + the thread holding the object, 0: none */

bit trying;			/* the thief's get is under way */
byte ingets;			/* owners inside a get (from G1 to its return) */
bit allout;			/* ... and every object was out at some instant of it */
byte finished;
byte ofinished;			/* owners done */
bit started;

byte ob_n, ob_i, ob_c;		/* observe()'s scratch, 0 between uses */
short ob_lo;

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

/* While the thief tries: whether every object is out now.  Pooled are the
 * depot's objects and those visible in a cache's objs[low .. count) (low
 * being the thief's saved one while the cache is stopped).  Each owner's
 * get under way returns one object, which may be linearized at this instant:
 * so every object is out when no more are pooled than gets are under way.
 * (A get that decremented its count, failed its check and restored the
 * count takes that same object in its slow path; until it does, the object
 * shows as pooled, then not, then pooled again.) */
inline observe() {
	if
	:: trying ->
		ob_n = 0;
		for (ob_i : 1 .. NOBJ) {
			ob_n = ob_n + depot[ob_i]
		}
		for (ob_c : 0 .. NC - 1) {
			ob_lo = (mem[A_LOW(ob_c)] == STOPPED -> tlo[ob_c] : mem[A_LOW(ob_c)]);
			if
			:: mem[A_COUNT(ob_c)] > ob_lo -> ob_n++
			:: else
			fi
		}
		if
		:: ob_n <= ingets -> allout = 1
		:: else
		fi;
		ob_n = 0; ob_i = 0; ob_c = 0; ob_lo = 0
	:: else
	fi
}

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

/* Thread t takes object o into its hand. */
inline take_hand(t, o) {
	assert(o >= 1 && o <= NOBJ);
	assert(hand[o] == 0);		/* no object held twice */
	hand[o] = t + 1
}

/* S1: the owner's slow-path lock: xchg, its store buffer drained. */
inline olock() { atomic { lock[me] == 0 && sbn[me] == 0 -> lock[me] = 1 } }
inline ounlock() { atomic { sbn[me] == 0 -> lock[me] = 0 } }

/* Under the lock: objs[low .. count) back to objs[0 ..), low = 0 (settle). */
inline settle() {
	if
	:: mem[A_LOW(me)] > 0 ->
		i = 0;
		do
		:: mem[A_LOW(me)] + i < mem[A_COUNT(me)] ->
			mem[A_SLOT(me) + i] = mem[A_SLOT(me) + mem[A_LOW(me)] + i]; i++
		:: else -> break
		od;
		mem[A_COUNT(me)] = i;
		do
		:: i < MAG -> mem[A_SLOT(me) + i] = 0; i++
		:: else -> break
		od;
		mem[A_LOW(me)] = 0;
		i = 0
	:: else
	fi
}

/* Under the lock: every object of the cache to the depot. */
inline to_depot() {
	i = 0;
	do
	:: i < mem[A_COUNT(me)] -> depot[mem[A_SLOT(me) + i]] = 1; mem[A_SLOT(me) + i] = 0; i++
	:: else -> break
	od;
	mem[A_COUNT(me)] = 0;
	i = 0
}

/* Owner me: OPS gets (include/lfpool/impl/cache.h lfpool_ts_cache_get(): G1-G4, S1),
 * puts (include/lfpool/impl/cache.h lfpool_ts_cache_put(): P1, S1) or flushes
 * (lib/threadstatic/cache.c lfpool_ts_cache_flush(): S1). */
proctype owner(byte me)
{
	short c, l;
	byte k, o, i;

	do
	:: k < OPS ->
		k++;
		if
		:: true ->					/* get */
			atomic { sbn[me] < SBN -> ingets++; ld(me, A_COUNT(me), c); c = c - 1; st(me, A_COUNT(me), c) };	/* G1 */
			atomic { ld(me, A_LOW(me), l) };					/* G2 */
			if
			:: c >= l -> atomic { ld(me, A_SLOT(me) + c, o); take_hand(me, o); o = 0; ingets--; observe() }	/* G3 */
			:: else ->
				atomic { sbn[me] < SBN -> ld(me, A_COUNT(me), c); st(me, A_COUNT(me), c + 1) };	/* G4 */
				olock();
				atomic {					/* S1: take */
					settle();
					if
					:: mem[A_COUNT(me)] == 0 ->		/* refill from the depot */
						i = 1;
						do
						:: i <= NOBJ && mem[A_COUNT(me)] < MAG ->
							if
							:: depot[i] -> depot[i] = 0;
								mem[A_SLOT(me) + mem[A_COUNT(me)]] = i;
								mem[A_COUNT(me)]++
							:: else
							fi;
							i++
						:: else -> break
						od;
						i = 0
					:: else
					fi;
					if
					:: mem[A_COUNT(me)] > 0 ->
						mem[A_COUNT(me)]--;
						o = mem[A_SLOT(me) + mem[A_COUNT(me)]];
						mem[A_SLOT(me) + mem[A_COUNT(me)]] = 0;
						take_hand(me, o); o = 0
					:: else -> skip	/* at capacity: the owner steals in turn (not modelled) */
					fi;
					ingets--;
					observe()
				};
				ounlock()
			fi;
			c = 0; l = 0
		:: atomic { hand[1] == me + 1 || hand[2] == me + 1 || (NC > 1 && hand[NOBJ] == me + 1) ->	/* put */
			o = 1;
			do
			:: hand[o] != me + 1 -> o++
			:: else -> break
			od };
			atomic { ld(me, A_COUNT(me), c) };
			if
			:: c < MAG ->				/* P1: slot, then count */
				atomic { sbn[me] < SBN -> st(me, A_SLOT(me) + c, o) };
				atomic { sbn[me] < SBN -> st(me, A_COUNT(me), c + 1); hand[o] = 0 }
			:: else ->
				olock();
				atomic {				/* S1: push_objs */
					settle();
					if
					:: mem[A_COUNT(me)] == MAG -> to_depot()	/* make_room */
					:: else
					fi;
					mem[A_SLOT(me) + mem[A_COUNT(me)]] = o;
					mem[A_COUNT(me)]++;
					hand[o] = 0;
					observe()
				};
				ounlock()
			fi;
			o = 0; c = 0
		:: true ->					/* flush */
			olock();
			atomic { settle(); to_depot(); observe() };	/* S1: flush_owned */
			ounlock()
		fi
	:: else -> break
	od;
	atomic { finished++; ofinished++ }
}

/* C2: a loose object from the depot, if the thief has none yet. */
inline depot_take() {
	atomic {
		o = 0;
		if
		:: !got ->
			for (i : 1 .. NOBJ) {
				if
				:: o == 0 && depot[i] -> depot[i] = 0; o = i
				:: else
				fi
			}
		:: else
		fi;
		if
		:: o != 0 -> take_hand(T, o); got = 1
		:: else
		fi;
		o = 0; i = 0;
		observe()
	}
}

/* A get at capacity that steals: lib/threadstatic/steal.c lfp_steal() (C2-C7). */
proctype thief()
{
	short top;
	byte o, i, c;
	bit got;

	atomic { trying = 1; allout = 0; observe() };
	depot_take();						/* C2 */
	if
	:: !got ->
		for (c : 0 .. NC - 1) {				/* C3: stop every cache */
			atomic { lock[c] == 0 && sbn[T] == 0 -> lock[c] = 1; ld(T, A_LOW(c), tlo[c]) };
			atomic { sbn[T] < SBN -> st(T, A_LOW(c), STOPPED) }
		}
#ifndef NEGATIVE
		atomic { ALL_DRAINED -> skip };			/* C4: membarrier */
#endif
#ifndef DEPOT_FIRST
		depot_take();					/* C2 again, stopped */
#endif
		for (c : 0 .. NC - 1) {				/* C5: take from the bottom */
			atomic {
				ld(T, A_COUNT(c), top);
				if
				:: !got && top > tlo[c] ->
					ld(T, A_SLOT(c) + tlo[c], o);
					take_hand(T, o);
					got = 1;
					tlo[c]++
				:: else
				fi;
				o = 0; top = 0;
				observe()
			}
		}
		for (c : 0 .. NC - 1) {				/* C6: restart, unlock */
			atomic { sbn[T] < SBN -> st(T, A_LOW(c), tlo[c]) };
#ifndef NO_UNLOCK
			atomic { lock[c] == 1 && sbn[T] == 0 -> lock[c] = 0 }
#else
			skip	/* the progress property's control: the caches stay locked */
#endif
		}
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
	byte o, n, i, c;

	atomic {
		started && finished == NC + 1 && ALL_DRAINED;
		for (o : 1 .. NOBJ) {
			n = (hand[o] != 0) + depot[o];
			for (c : 0 .. NC - 1) {
				for (i : 0 .. MAG - 1) {
					if
					:: i >= mem[A_LOW(c)] && i < mem[A_COUNT(c)] && mem[A_SLOT(c) + i] == o -> n++
					:: else
					fi
				}
			}
			assert(n == 1)
		}
	}
}

ltl progress { <> (ofinished == NC) }

init
{
	byte c;

	atomic {
		mem[A_SLOT(0)] = 1;	/* object 1 in cache 0 */
		mem[A_COUNT(0)] = 1;
		for (c : 0 .. NC - 1) {
			hand[2 + c] = c + 1	/* object 2 + c in owner c's hand */
		}
		for (c : 0 .. NC) {
			run flusher(c)
		}
		for (c : 0 .. NC - 1) {
			run owner(c)
		}
		run thief();
		started = 1
	}
}
