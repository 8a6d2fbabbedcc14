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
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   E1  take lfp_ts_lock            lib/threadstatic/tls.c release_thread()
 *   E2  the pool still alive        lib/threadstatic/tls.c release_thread(): a slot of
 *                                   the thread's directory that still holds the cache
 *                                   (destroy clears it, D3, under the same lock)
 *   E3  lfp_cache_free              lib/threadstatic/tls.c release_thread() ->
 *                                   lib/threadstatic/cache.c lfp_cache_free()
 *       CF1 flush to the depot      lib/threadstatic/cache.c lfpool_ts_cache_flush()
 *       CF2 leave the census        lib/threadstatic/depot.c lfp_depot_leave()
 *       CF3 off the pool's list, freed
 *                                   lib/threadstatic/cache.c unlink_free()
 *   E4  release the lock, free the table
 *                                   lib/threadstatic/tls.c release_thread()
 *   D1  take lfp_ts_lock            lib/threadstatic/threadstatic.c lfpool_ts_destroy()
 *   D2  no explicit caches (else EBUSY)
 *                                   lib/threadstatic/threadstatic.c lfpool_ts_destroy()
 *   D3  off the live list and out of every thread's directory
 *                                   lib/threadstatic/threadstatic.c retire():
 *                                   lib/threadstatic/tls.c lfp_tls_unregister(),
 *                                   lib/threadstatic/tls.c lfp_tls_forget()
 *   D4  free every cache (CF1-CF3)  lib/threadstatic/threadstatic.c retire()
 *   D5  release the lock            lib/threadstatic/threadstatic.c lfpool_ts_destroy()
 *   D6  drain the depot             lib/threadstatic/threadstatic.c close_pool()
 *                                   (lib/threadstatic/depot.c lfp_depot_drain())
 *   D7  fini every drained object   lib/threadstatic/threadstatic.c close_pool()
 *   D8  free the pool               lib/threadstatic/threadstatic.c close_pool()
 *                                   (lib/core.c lfp_core_retire())
 *   N1  a new pool, same memory     lib/threadstatic/threadstatic.c lfpool_ts_create()
 *                                   (a new generation:
 *                                   lib/threadstatic/tls.c lfp_tls_register())
 * D3 and D4 run in the other order in retire (unregister, free the
 * caches, forget); both are under the lock, which every exit step but the
 * negative control's early E2 waits for, so no step tells them apart.
 * Not modelled: the per-CPU areas and worker slots that close_pool also
 * finishes.
 *
 * Properties:
 *   - no cache is freed twice (assertion in CF1);
 *   - no step touches the pool's memory after D8, nor takes a new pool at
 *     the same address for the old one (assertions in CF1-CF3);
 *   - at the end every object is finalized by destroy: none was flushed
 *     into a depot already drained (the checker process);
 *   - no invalid end state (the lock is always released: no deadlock).
 *
 * Negative control (-DNEGATIVE): the exit tests whether the pool is alive
 * before it takes the lock (E2 before E1), a plausible "fast check":
 * destroy can run whole in between, and the exit frees a cache destroy
 * already freed.  A second control (-DNEGATIVE_ADDR) recognises the pool
 * by something a new pool reuses (its address; or a directory slot, by
 * its id, that destroy did not clear) instead of the slot destroy clears:
 * a pool created at the same address after the destroy (the creator
 * process) makes the exit free a stale cache.
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

/* Thread t's exit: its key destructor, lib/threadstatic/tls.c release_thread()
 * (E1-E4). */
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

/* lib/threadstatic/threadstatic.c lfpool_ts_destroy() (D1-D8). */
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
 * never reused (lib/threadstatic/tls.c lfp_tls_register()), addresses are. */
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
