/* SPDX-License-Identifier: MIT */
/*
 * exit.pml - threads exiting while another thread destroys the pool.
 * Each of NT threads has an implicit cache of the pool holding one object;
 * one more object is loose in the depot.  At thread exit the pthread key
 * destructor hands the thread's caches back; destroy frees the caches of
 * threads still alive and then drains the depot and frees the pool.  The
 * table of include/lfpool/ts.h forbids calls on a pool during its
 * destroy, but a thread that used the pool may exit at any time: its exit
 * must see the pool whole or gone.
 *
 * Steps outside lfp_ts_lock interleave with everything; inside it they
 * interleave with whatever runs without the lock (destroy's drain, and in
 * the negative control the exit's own check), so they are steps too.
 *
 * Correspondence (step: lib/ code it abstracts; lines at the commit that
 * added this model):
 *   E1  take lfp_ts_lock            lib/threadstatic/tls.c release_thread() 43
 *   E2  lfp_ts_live(gen)            tls.c release_thread() 44-45, threadstatic.c lfp_ts_live() 25-31
 *   E3  lfp_cache_free              tls.c release_thread() 46 -> cache.c lfp_cache_free() 262-275
 *       CF1 flush to the depot      cache.c lfp_cache_free() 265 (lfpool_ts_cache_flush)
 *       CF2 leave the census        cache.c lfp_cache_free() 266-268 (lfp_depot_leave)
 *       CF3 off the pool's list, freed
 *                                   cache.c lfp_cache_free() 269-274
 *   E4  release the lock, free the table
 *                                   tls.c release_thread() 47-50
 *   D1  take lfp_ts_lock            lib/threadstatic/threadstatic.c lfpool_ts_destroy() 106
 *   D2  no explicit caches          threadstatic.c lfpool_ts_destroy() 107-111
 *   D3  off the live list           threadstatic.c retire() 87-90
 *   D4  free every cache (CF1-CF3)  threadstatic.c retire() 91-92
 *   D5  release the lock            threadstatic.c lfpool_ts_destroy() 113
 *   D6  drain the depot             threadstatic.c lfpool_ts_destroy() 117 (depot.c lfp_depot_drain)
 *   D7  fini every drained object   threadstatic.c lfpool_ts_destroy() 117-121
 *   D8  free the pool               threadstatic.c lfpool_ts_destroy() 122-125
 *   N1  a new pool, same memory     threadstatic.c lfpool_ts_create() 45-73 (gen 68)
 *
 * Properties:
 *   - no cache is freed twice (assertion in CF1);
 *   - no step touches the pool's memory after D8, nor takes a new pool at
 *     the same address for the old one (assertions in CF1-CF3);
 *   - at the end every object is finalized by destroy: none was flushed
 *     into a depot already drained (the checker process);
 *   - no invalid end state (the lock is always released: no deadlock).
 *
 * Negative control (-DNEGATIVE): the exit checks lfp_ts_live before it
 * takes the lock (E2 before E1), a plausible "fast check": destroy can run
 * whole in between, and the exit frees a cache destroy already freed.
 * A second control (-DNEGATIVE_ADDR) recognises the pool by its address
 * instead of its generation: a pool created at the same address after the
 * destroy (the creator process) makes the exit free a stale cache.
 */

#define NT	2		/* exiting threads, one implicit cache each */
#define NOBJ	(NT + 1)	/* object t+1 in thread t's cache, NOBJ in the depot */

#define IN_CACHE0	1	/* place of an object: IN_CACHE0 + t */
#define IN_DEPOT	10
#define DRAINED		11	/* on destroy's private chain */
#define FINAL		12	/* fini hook run by destroy */

bit lock;
byte live_gen;			/* generation on the list of live pools, 0: none */
byte mem_gen;			/* the pool in the memory the caches point to, 0: freed */
bit cache_alive[NT];
byte place[NOBJ + 1];
byte finished;

/* lfp_cache_free of thread t's cache, lock held */
inline cache_free(t) {
	atomic {						/* CF1 */
		assert(cache_alive[t]);		/* no cache freed twice */
		assert(mem_gen == 1);		/* the cache's pool, not freed or another */
		for (o : 1 .. NOBJ) {
			if
			:: place[o] == IN_CACHE0 + t -> place[o] = IN_DEPOT
			:: else
			fi
		}
		o = 0
	};
	atomic { assert(mem_gen == 1) };			/* CF2 */
	atomic { assert(mem_gen == 1); cache_alive[t] = 0 }	/* CF3 */
}

proctype exiter(byte t)
{
	byte o;
	bit live;

#ifdef NEGATIVE
	live = (live_gen == 1);					/* E2, too early */
	atomic { lock == 0 -> lock = 1 };			/* E1 */
#else
	atomic { lock == 0 -> lock = 1 };			/* E1 */
#ifdef NEGATIVE_ADDR
	live = (live_gen != 0);		/* E2 by address: any pool there matches */
#else
	live = (live_gen == 1);					/* E2 */
#endif
#endif
	if
	:: live -> cache_free(t)				/* E3 */
	:: else -> skip
	fi;
	atomic { lock = 0; finished++ }				/* E4 */
}

proctype destroyer()
{
	byte o, t;

	atomic { lock == 0 -> lock = 1 };			/* D1, D2 */
	live_gen = 0;						/* D3 */
	for (t : 0 .. NT - 1) {					/* D4 */
		if
		:: cache_alive[t] -> cache_free(t)
		:: else -> skip
		fi
	}
	lock = 0;						/* D5 */
	atomic {						/* D6 */
		for (o : 1 .. NOBJ) {
			if
			:: place[o] == IN_DEPOT -> place[o] = DRAINED
			:: else
			fi
		}
		o = 0
	};
	atomic {						/* D7 */
		for (o : 1 .. NOBJ) {
			if
			:: place[o] == DRAINED -> place[o] = FINAL
			:: else
			fi
		}
		o = 0
	};
	atomic { mem_gen = 0; finished++ }			/* D8 */
}

/* After the destroy a new pool may get the same memory: generations are
 * never reused (threadstatic.c lfpool_ts_create() 68-73), addresses are. */
proctype creator()
{
	atomic { lock == 0 && mem_gen == 0 && finished > 0 -> lock = 1; mem_gen = 2; live_gen = 2 };
	atomic { lock = 0; finished++ }
}

/* Once every thread is done: each object was finalized. */
active proctype checker()
{
	byte o;

	atomic {
		finished == NT + 2;
		for (o : 1 .. NOBJ) {
			assert(place[o] == FINAL)
		}
	}
}

init
{
	byte t;

	atomic {
		live_gen = 1;
		mem_gen = 1;
		for (t : 0 .. NT - 1) {
			cache_alive[t] = 1;
			place[t + 1] = IN_CACHE0 + t
		}
		place[NOBJ] = IN_DEPOT;
		for (t : 0 .. NT - 1) {
			run exiter(t)
		}
		run destroyer();
		run creator()
	}
}
