/* SPDX-License-Identifier: MIT */
/*
 * home.pml - a thread's home cache (lfpool_ts_tls_.home): storage in the
 * thread's TLS that serves one pool's implicit cache at a time, reused for
 * another pool once its cache is unlinked, and given up at thread exit
 * before glibc frees the TLS block.
 *
 * The owner thread T uses pool P (its first pool: the home becomes P's),
 * then, after the user's own synchronization, lets D destroy P, and uses Q
 * (the home, free again, becomes Q's, or Q gets a heap cache when D has
 * not yet cleared it); T may detach Q and use it again; then T exits, a
 * later pthread key destructor calls Q once more, and glibc frees T's TLS.
 * A thief S of Q (a get at capacity, drain or trim on another thread)
 * reaches T's cache of Q through Q's list of caches at any time; how its
 * stop and take interleave with T's hits is steal.pml's business, here it
 * is one step under lfp_ts_lock.  D's destroy reaches T through the
 * library's list of thread tables (lfp_tls_forget).
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   H1  inline hit: home_pool == X, then the cache at the TLS address
 *                                   include/lfpool/ts.h lfpool_ts_get(),
 *                                   include/lfpool/ts.h lfpool_ts_put()
 *                                   (LFPOOL_TS_HOME_POOL_, then
 *                                   include/lfpool/impl/cache.h lfpool_ts_cache_get())
 *   H2  slow path: lock, register the thread's table, a cache in the home
 *       when home_pool is NULL (else the heap), home_pool set last
 *                                   lib/threadstatic/tls.c lfp_tls_cache(),
 *                                   lib/threadstatic/tls.c own_table(),
 *                                   lib/threadstatic/tls.c cache_new()
 *   H3  past the key destructor: no table, no cache (uncached calls)
 *                                   lib/threadstatic/tls.c lfp_tls_cache() (tls_exiting),
 *                                   lib/threadstatic/threadstatic.c lfpool_ts_get_slow()
 *   H4  detach: lock, unlink (a home frees nothing), home_pool NULL
 *                                   lib/threadstatic/tls.c lfp_tls_detach(),
 *                                   lib/threadstatic/tls.c home_clear_if()
 *   H5  exit: lock, unlink every cache, home_pool NULL, table off the
 *       list, tls_exiting           lib/threadstatic/tls.c release_thread()
 *   H6  glibc frees the TLS block   (after the last destructor round)
 *   D2  P's caches unlinked         lib/threadstatic/threadstatic.c retire(),
 *                                   lib/threadstatic/cache.c lfp_cache_free(),
 *                                   lib/threadstatic/cache.c unlink_free()
 *   D1  then every table's entries of P cleared
 *                                   lib/threadstatic/tls.c lfp_tls_forget()
 *                                   (lib/threadstatic/tls.c home_clear_if())
 *   D3  unlock; P's memory freed    lib/threadstatic/threadstatic.c lfpool_ts_destroy()
 *                                   (lib/threadstatic/threadstatic.c close_pool())
 *   S1  thief of Q: lock, each cache on Q's list stopped, taken, restarted
 *                                   lib/threadstatic/steal.c lfp_steal(),
 *                                   lib/threadstatic/steal.c sweep_owned(),
 *                                   lib/threadstatic/steal.c take_cache()
 * D1 and D2 both run under lfp_ts_lock in lfpool_ts_destroy, which takes
 * it first (D2, then D1, as retire does).
 *
 * Properties (assertions):
 *   - no one reads or writes T's TLS after H6 (D1 through the table list,
 *     S1 through Q's list);
 *   - the home's storage is (re)initialised only while no pool's list
 *     holds it, and whoever finds it on pool X's list (S1, D2) finds X's
 *     cache there;
 *   - an inline hit on X runs on X's cache, while X's memory is alive;
 *   - no invalid end state (the lock is always released).
 *
 * Negative controls:
 *   -DNEGATIVE_LATE: the late destructor's call registers a table again and
 *    makes a cache, as before the fix: D's destroy after glibc freed the
 *    TLS reads it through the table list.
 *   -DNEGATIVE_FORGET: destroy clears T's home_pool before it takes the lock
 *    (D1 outside the lock): T reuses the storage for Q while P's list still
 *    holds it, and D then unlinks Q's cache from P's list.
 */

#define NONE	0
#define P	1
#define Q	2

bit lock;
byte home_pool;			/* the inline path's test, 0: the home is free */
byte storage;			/* the pool whose cache the home's storage holds */
bit on_list[3];			/* the home's storage is on pool X's list of caches */
bit heap_cache[3];		/* T has a heap cache of X (no storage to check) */
bit table;			/* T's table is on the library's list */
bit exiting;			/* T's key destructor ran (tls_exiting) */
bit tls_alive = 1;		/* T's TLS block, H6 frees it */
bit mem_alive[3];		/* pool X's memory */
bit p_done;			/* T's last call on P happened (the user's sync) */
byte finished;

/* H1 or H2/H3: one get or put of T on pool x. */
inline use(x) {
	if
	:: atomic { home_pool == x ->				/* H1 */
		assert(tls_alive && storage == x && on_list[x] && mem_alive[x]) }
	:: else ->
		atomic { lock == 0 -> lock = 1 };		/* H2 */
		if
		:: exiting && !table ->
#ifdef NEGATIVE_LATE
			table = 1;		/* own_table again: glibc runs no round */
			heap_cache[x] = 1
#else
			skip			/* H3: uncached, nothing kept */
#endif
		:: else ->
			table = 1;
			if
			:: home_pool == x || heap_cache[x] -> skip	/* found */
			:: home_pool == NONE && !heap_cache[x] ->
				assert(tls_alive && !on_list[P] && !on_list[Q]);
				storage = x;
				on_list[x] = 1;
				home_pool = x		/* last */
			:: home_pool != NONE && home_pool != x && !heap_cache[x] ->
				heap_cache[x] = 1
			fi
		fi;
		lock = 0
	fi
}

/* H4: T detaches from pool x. */
inline detach(x) {
	atomic { lock == 0 -> lock = 1 };
	if
	:: home_pool == x -> assert(storage == x && on_list[x]); on_list[x] = 0; home_pool = NONE
	:: else -> heap_cache[x] = 0
	fi;
	lock = 0
}

/* T: gets and puts of P, then Q (include/lfpool/ts.h lfpool_ts_get(): H1; its slow
 * path lib/threadstatic/tls.c lfp_tls_cache(): H2-H3),
 * maybe a detach (H4), its exit (lib/threadstatic/tls.c release_thread(): H5),
 * a late call, and glibc's free of its TLS (H6). */
proctype owner()
{
	use(P);
	use(P);
	p_done = 1;		/* e.g. a join: D's destroy comes after this */
	use(Q);
	use(Q);
	if
	:: detach(Q); use(Q)
	:: skip
	fi;
	atomic { lock == 0 -> lock = 1 };			/* H5 */
	if
	:: home_pool != NONE -> assert(on_list[home_pool]); on_list[home_pool] = 0
	:: else -> skip
	fi;
	home_pool = NONE;
	heap_cache[P] = 0;
	heap_cache[Q] = 0;
	table = 0;
	exiting = 1;
	lock = 0;
	use(Q);				/* a later key's destructor */
	tls_alive = 0;						/* H6 */
	finished++
}

/* D: lib/threadstatic/threadstatic.c lfpool_ts_destroy() of P (D1-D3). */
proctype destroyer()
{
	p_done;
#ifdef NEGATIVE_FORGET
	if							/* D1, unlocked */
	:: table -> assert(tls_alive); if :: home_pool == P -> home_pool = NONE :: else fi
	:: else
	fi;
	atomic { lock == 0 -> lock = 1 };
#else
	atomic { lock == 0 -> lock = 1 };
#endif
	if							/* D2 */
	:: on_list[P] -> assert(tls_alive && storage == P); on_list[P] = 0
	:: else
	fi;
	heap_cache[P] = 0;
#ifndef NEGATIVE_FORGET
	if							/* D1 */
	:: table -> assert(tls_alive); if :: home_pool == P -> home_pool = NONE :: else fi
	:: else
	fi;
#endif
	lock = 0;						/* D3 */
	mem_alive[P] = 0;
	finished++
}

/* Thieves of Q, any time Q is alive (it is never destroyed here). */
proctype thief()
{
	byte n;
	do
	:: n < 2 ->
		atomic { lock == 0 -> lock = 1 };		/* S1 */
		if
		:: on_list[Q] -> assert(tls_alive && storage == Q)
		:: else
		fi;
		lock = 0;
		n++
	:: else -> break
	od;
	finished++
}

init
{
	atomic {
		mem_alive[P] = 1;
		mem_alive[Q] = 1;
		run owner();
		run destroyer();
		run thief()
	}
}
