/* SPDX-License-Identifier: MIT */
/*
 * array_home.pml - a thread's array home (lfpool_array_tls_.home): the
 * storage in the array layer's TLS that serves the thread's first class
 * cache of an array pool with the default prefix, named in the thread's
 * table of class entries by the array pool's ADDRESS (not by its key,
 * id << 1 | 1, which is never reused), and cleared there by the pool's
 * destroy on whatever thread runs it, before the address can be reused.
 * home.pml models the object home (lfpool_ts_tls_.home) with a thief and
 * the late key destructor; this model adds what is the array home's own:
 * the entries, which the owner reads and writes without the lock while
 * another thread's destroy clears them under it, and address reuse.
 *
 * The owner thread T makes array pool A (address ADDR1) and uses its two
 * classes, A0 first (A0 takes the home, A1 a heap cache), then hands A to
 * D and goes on with the shared pool S (its 64-byte prefix keeps it out of
 * every array home: heap caches, keys only) at one of the same entries
 * while D destroys A: at A0's (its store races D's clear, and overwrites
 * the entry if D did not clear it) or at A1's (A0's entry is left as it
 * was).  T may wait until it learns that the destroy returned.
 * T then makes B, at ADDR1 again if A's memory is free (calloc reuses
 * it) or at ADDR2, uses B1 first (B1 takes the home if it is free again,
 * else a heap cache), then B0, hands B to D, and exits while D may be
 * destroying B; one more call after exit goes uncached, then glibc frees
 * T's TLS.  One entry per class: tls_enter's entries below min_slot
 * (several per class) behave as the class's own one.
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   U1  inline test: one load of entry i, compared with the pool's
 *       address (the home) and then with its key (a heap cache)
 *                     include/lfpool/array.h lfpool_array_get(),
 *                     include/lfpool/array.h lfpool_array_put_at_()
 *                     (include/lfpool/array.h LFPOOL_ARRAY_KEY_())
 *   U2  hit on the home: the cache at the constant TLS address
 *                     include/lfpool/impl/cache.h lfpool_ts_cache_get() of LFPOOL_ARRAY_HOME_
 *   U3  slow path: lock, the class's cache from T's directory, else
 *       cache_new: the array home when t->array_home_pool is NULL (the
 *       re-check under the lock), else the heap
 *                     lib/layers/array.c lfpool_array_get_slow(),
 *                     lib/layers/array.c tls_enter();
 *                     lib/threadstatic/tls.c lfp_tls_cache(),
 *                     lib/threadstatic/tls.c cache_new()
 *   U4  unlock, then entry i := the pool's address (home) or key (heap),
 *       the owner's store, outside the lock
 *                     lib/layers/array.c tls_enter()
 *   U5  past the key destructor: no cache, no entry (uncached)
 *                     lib/threadstatic/tls.c lfp_tls_cache() (tls_exiting)
 *   X1  exit: the layer's table, every entry cleared (owner, unlocked)
 *                     lib/threadstatic/tls.c release_thread() ->
 *                     lib/threadstatic/tls.c array_table_clear()
 *   X2  lock, every cache of T's directory unlinked (the array home's
 *       storage too), T's table off the list, unlock
 *                     lib/threadstatic/tls.c release_thread(),
 *                     lib/threadstatic/cache.c lfp_cache_free()
 *   X3  glibc frees T's TLS block
 *   D1  destroy of each class: lock; its caches unlinked (T's home among
 *       them)         lib/layers/array.c destroy_classes() ->
 *                     lib/threadstatic/threadstatic.c lfpool_ts_destroy(),
 *                     lib/threadstatic/threadstatic.c retire(),
 *                     lib/threadstatic/cache.c unlink_free()
 *   D2  through the list of tables: T's directory slot cleared, and if
 *       T's array_home_pool is this class: NULL, then every even nonzero
 *       entry of T's table cleared, one load and one store each
 *                     lib/threadstatic/tls.c lfp_tls_forget(),
 *                     lib/threadstatic/tls.c array_home_clear_if();
 *                     lib/threadstatic/tls.c array_home_lost(),
 *                     lib/threadstatic/tls.c array_key_clear()
 *   D3  unlock; the class's memory freed
 *                     lib/threadstatic/threadstatic.c lfpool_ts_destroy()
 *                     (lib/threadstatic/threadstatic.c close_pool())
 *   D4  both classes done: the array pool's memory freed (its address may
 *       come back from calloc)
 *                     lib/layers/array.c lfpool_array_destroy() (lfp_retire)
 *
 * Properties (assertions):
 *   - a hit on the home (U2) runs the cache of the class asked for, which
 *     is the home's pool, in the home's storage, on that class's list,
 *     with its memory alive and T's TLS alive: no use of a freed or
 *     cleared home, no hit of one pool on another's home (address reuse);
 *   - the home's storage is taken (U3) only while no pool's list holds it:
 *     no two pools in one home;
 *   - no leak of the slot: once T knows that A's destroy returned, B's
 *     first cache finds the home free (and takes it);
 *   - whoever reaches T's table or home (D1, D2) finds T's TLS alive and
 *     the home holding the class on whose list it is;
 *   - no invalid end state (the lock is always released).
 *
 * Negative controls (each must be rejected):
 *   -DNEGATIVE_NO_CLEAR: the destroy frees the home but leaves T's entries
 *    (array_home_lost does nothing): B at A's address hits the home with
 *    the stale entry of A0, which is B1's home or no one's.
 *   -DNEGATIVE_FREE_FIRST: the array pool's memory is freed before its
 *    classes' destroys clear the entries: B at A's address hits A's home.
 *   -DNEGATIVE_KEEP: the destroy clears the entries but not
 *    array_home_pool: the home is never free again (a leak).
 *   -DNEGATIVE_NO_RECHECK: cache_new takes the home without testing
 *    array_home_pool under the lock: two classes in one home.
 */

#define NONE	0
/* array pools */
#define A	1
#define B	2
#define S	3
/* class pools (lfpool_ts of array_class): A0 A1 B0 B1 S0 S1 = 1..6 */
#define CP(ap, i)	((ap) * 2 - 1 + (i))
#define NCP	7
/* entry values: 0 empty; odd: a key (id << 1 | 1); even: an address */
#define ADDR1	10
#define ADDR2	12
#define ADDRS	14

bit lock;
byte key[2];			/* T's table: entry of class i */
byte addr[4];			/* the array pool's address, by pool */
byte akey[4];			/* its key, by pool (ids never reused) */
byte home_pool;			/* t->array_home_pool: a class pool, or NONE */
byte storage;			/* the class whose cache the home's storage holds */
bit on_list[NCP];		/* the home's storage is on class X's list */
bit has_cache[NCP];		/* T's directory holds a cache of X */
bit mem_alive[NCP];		/* class X's memory */
bit ap_freed[4];		/* array pool X's memory went back to calloc */
bit handed[4];			/* T let go of array pool X (the user's sync) */
bit a_done;			/* A's destroy returned (the user's sync) */
bit table;			/* T's table is on the library's list */
bit exiting;			/* T's key destructor ran (tls_exiting) */
bit tls_alive = 1;		/* T's TLS block, X3 frees it */
bit knows_a_done;		/* T waited for a_done before making B */
bit b_first = 1;		/* B's first cache is yet to be made */

/* One get (or put) of T on class i of array pool ap. */
inline use(ap, i) {
	k = key[i];						/* U1 */
	if
	:: k == addr[ap] ->					/* U2 */
		assert(tls_alive && home_pool == CP(ap, i) && storage == CP(ap, i) &&
		       on_list[CP(ap, i)] && mem_alive[CP(ap, i)])
	:: k != addr[ap] && k == akey[ap] ->			/* a heap cache */
		assert(mem_alive[CP(ap, i)] && has_cache[CP(ap, i)])
	:: k != addr[ap] && k != akey[ap] && exiting ->		/* U5 */
		skip
	:: k != addr[ap] && k != akey[ap] && !exiting ->
		atomic { lock == 0 -> lock = 1 };		/* U3 */
		table = 1;
		inhome = 0;
		if
		:: has_cache[CP(ap, i)] -> inhome = (home_pool == CP(ap, i))
		:: else ->
			if
			:: ap == B && b_first ->
				b_first = 0;
				assert(!knows_a_done || home_pool == NONE)
			:: else
			fi;
			if
#ifdef NEGATIVE_NO_RECHECK
			:: ap != S ->
#else
			:: ap != S && home_pool == NONE ->
#endif
				assert(tls_alive && !on_list[A * 2 - 1] && !on_list[A * 2] &&
				       !on_list[B * 2 - 1] && !on_list[B * 2]);
				storage = CP(ap, i);
				on_list[CP(ap, i)] = 1;
				home_pool = CP(ap, i);
				inhome = 1
			:: else
			fi;
			has_cache[CP(ap, i)] = 1
		fi;
		lock = 0;
		if							/* U4 */
		:: inhome -> key[i] = addr[ap]
		:: else -> key[i] = akey[ap]
		fi
	fi
}

/* T: lfpool_array_get and _put of A, S and B (U1-U5), then its exit
 * (lib/threadstatic/tls.c release_thread(): X1-X3). */
proctype owner()
{
	byte k;
	bit inhome;

	use(A, 0);
	use(A, 1);
	use(A, 0);
	handed[A] = 1;			/* A is no longer T's to use */
	if				/* S at A0's entry (racing D2's clear) or not */
	:: use(S, 0)
	:: use(S, 1)
	fi;
	if
	:: a_done -> knows_a_done = 1	/* e.g. a join with D */
	:: skip
	fi;
	atomic {			/* lfpool_array_create: calloc */
		if
		:: ap_freed[A] -> addr[B] = ADDR1
		:: addr[B] = ADDR2
		fi;
		mem_alive[CP(B, 0)] = 1;
		mem_alive[CP(B, 1)] = 1
	};
	use(B, 1);
	use(B, 0);
	use(B, 1);
	use(B, 0);
	use(S, 1);
	handed[B] = 1;
	key[0] = 0;						/* X1 */
	key[1] = 0;
	atomic { lock == 0 -> lock = 1 };			/* X2 */
	if
	:: home_pool != NONE ->
		assert(storage == home_pool && on_list[home_pool]);
		on_list[home_pool] = 0
	:: else
	fi;
	home_pool = NONE;		/* the table is freed */
	for (k : 1 .. NCP - 1) {
		has_cache[k] = 0
	}
	table = 0;
	exiting = 1;
	lock = 0;
	use(S, 0);			/* a later key's destructor */
	tls_alive = 0						/* X3 */
}

/* lfpool_ts_destroy of class c, on D. */
inline destroy_class(c) {
	atomic { lock == 0 -> lock = 1 };			/* D1 */
	if
	:: on_list[c] -> assert(tls_alive && storage == c); on_list[c] = 0
	:: else
	fi;
	if							/* D2 */
	:: table ->
		assert(tls_alive);
		has_cache[c] = 0;
		if
		:: home_pool == c ->
#ifndef NEGATIVE_KEEP
			home_pool = NONE;
#endif
#ifndef NEGATIVE_NO_CLEAR
			for (j : 0 .. 1) {
				v = key[j];
				if
				:: v != 0 && v % 2 == 0 -> key[j] = 0
				:: else
				fi
			}
#endif
			skip
		:: else
		fi
	:: else
	fi;
	lock = 0;						/* D3 */
	mem_alive[c] = 0
}

inline destroy_array(ap) {
#ifdef NEGATIVE_FREE_FIRST
	ap_freed[ap] = 1;
#endif
	destroy_class(CP(ap, 0));
	destroy_class(CP(ap, 1));
	ap_freed[ap] = 1					/* D4 */
}

/* D: lib/layers/array.c lfpool_array_destroy() of A, then of B (D1-D4). */
proctype destroyer()
{
	byte j, v;

	handed[A];
	destroy_array(A);
	a_done = 1;
	handed[B];
	destroy_array(B)
}

init
{
	atomic {
		addr[A] = ADDR1;
		addr[S] = ADDRS;
		akey[A] = 3;
		akey[B] = 5;
		akey[S] = 7;
		mem_alive[CP(A, 0)] = 1;
		mem_alive[CP(A, 1)] = 1;
		mem_alive[CP(S, 0)] = 1;
		mem_alive[CP(S, 1)] = 1;
		run owner();
		run destroyer()
	}
}
