/* SPDX-License-Identifier: MIT */
/*
 * depot.pml - a cache's loaded and previous magazines exchanging with the
 * depot (full and empty magazine stacks, loose objects, the census), with
 * a trim running at the same time.  Spin checks every interleaving of NC
 * cache threads doing OPS gets, puts or flushes each and then exiting, and
 * one trimmer.
 *
 * Granularity.  A cache has one user at a time, so its fields (loaded,
 * prev, count, prev_full) and the user's hands are private: each atomic
 * step below is exactly one shared access (a CAS on a depot stack, the
 * census or the object count, or taking/giving magazine memory) together
 * with the private work next to it, which commutes with every other
 * thread's steps.  The Treiber stacks are atomic here: aba.pml checks that
 * the tagged CAS makes them so.
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation; the code names the steps
 * back in "Model:" comments):
 *   G1  fast get                    include/lfpool/impl/cache.h lfpool_ts_cache_get(); the slow
 *                                   one, lib/threadstatic/cache.c take_owned() (its copy
 *                                   out of the loaded magazine)
 *   P1  fast put (room = MAG)       include/lfpool/impl/cache.h lfpool_ts_cache_put(); the slow
 *                                   one, lib/threadstatic/cache.c push_objs()
 *   R1  refill: previous full, swap lib/threadstatic/cache.c refill()
 *                                   (lib/threadstatic/cache.c rotate())
 *   R2  refill: pop a full magazine lib/threadstatic/cache.c refill()
 *                                   (lib/threadstatic/depot.h lfp_depot_pop())
 *   R3  refill: push the empty prev lib/threadstatic/cache.c refill()
 *                                   (lib/threadstatic/depot.h lfp_depot_push())
 *   R4  refill: loose objects       lib/threadstatic/cache.c refill(),
 *                                   lib/threadstatic/depot.c lfp_depot_get_objs()
 *   C1  create one object           lib/threadstatic/cache.c create_or_steal(),
 *                                   lib/threadstatic/cache.c create_one()
 *                                   (lib/threadstatic/ts_internal.h lfp_ts_create_objects())
 *   C2  ENOBUFS, refill again       lib/threadstatic/cache.c create_or_steal(): the code
 *                                   steals instead (lib/threadstatic/steal.c lfp_steal():
 *                                   the depot first, lib/threadstatic/steal.c take_depot(),
 *                                   then the other caches, steal.pml) and creates once more
 *   M1  make_room: pop an empty     lib/threadstatic/cache.c make_room()
 *   M2  spare: the census CAS       lib/threadstatic/cache.c spare_unowned(),
 *                                   lib/threadstatic/depot.c lfp_depot_spare()
 *                                   (the code takes the spare before M1, the
 *                                   cache's lock let go, when the empty stack
 *                                   looks empty, and pushes it there if M1
 *                                   then finds one: not modelled)
 *   M3  spare: magazine memory      lib/threadstatic/depot.c lfp_depot_spare()
 *   M4  make_room: push full prev   lib/threadstatic/cache.c make_room()
 *   M5  depot at bound: loose       lib/threadstatic/cache.c make_room()
 *                                   (lib/threadstatic/depot.c lfp_depot_put_objs())
 *   M6  previous empty: swap        lib/threadstatic/cache.c make_room() (rotate)
 *   F1  flush the loaded magazine   lib/threadstatic/cache.c flush_owned()
 *   F2  flush the previous one      lib/threadstatic/cache.c flush_owned()
 *   L1  leave: free two magazines   lib/threadstatic/cache.c lfp_cache_free(),
 *                                   lib/threadstatic/depot.c lfp_depot_leave(),
 *                                   lib/threadstatic/depot.c free_mags() (keep_chain)
 *   L2  leave: census magazines -2  lib/threadstatic/depot.c free_mags(): one FAA for
 *   L3  leave: census caches -1     L2 and L3 together (census.pml: apart, they break
 *                                   the bound), after L1
 *   T1  trim: pop all full          lib/threadstatic/depot.c lfp_depot_trim(),
 *                                   lib/threadstatic/depot.c pop_beyond()
 *   T2  trim: push back keep        lib/threadstatic/depot.c pop_beyond(),
 *                                   lib/threadstatic/depot.c keep_top()
 *   T3  trim: same for empties      lib/threadstatic/depot.c lfp_depot_trim() (pop_beyond)
 *   T4  trim: pop all loose         lib/threadstatic/depot.c lfp_depot_trim()
 *   T5  trim: unload, free magazines
 *                                   lib/threadstatic/depot.c unload_mags(), then
 *                                   lib/threadstatic/depot.c lfp_depot_trim_free()
 *                                   (free_mags)
 *   K1  trim: push back the loose objects kept for keep (KEEPO of them)
 *                                   lib/threadstatic/depot.c lfp_depot_trim() (keep_top)
 *   T6  trim: census -= n           lib/threadstatic/depot.c free_mags() (its FAA)
 *   T7  trim: destroy objects, count
 *                                   lib/threadstatic/depot.c lfp_depot_trim_free(),
 *                                   lib/threadstatic/threadstatic.c trim_free()
 *                                   (lib/core.c lfp_core_count_trim())
 * The stacks' push and pop (lib/stack.h) are one step each: aba.pml.
 * The trim's take (T1-K1) and a get's steal hold the pool's steal_lock
 * in the code (lib/threadstatic/threadstatic.c trim_take()); the model
 * lets them interleave, which covers that.
 * Not modelled: a get at capacity takes only what it needs off a full
 * magazine, whose rest goes loose and which goes back empty
 * (lib/threadstatic/cache.c refill_tight()); thieves taking from a
 * cache (steal.pml); the fill size of R4 (here up to MAG).
 *
 * Properties, checked by the monitor in every reachable state:
 *   - every constructed object is in exactly one place (a user's hands, a
 *     cache's loaded magazine below count, a full previous magazine, a
 *     magazine a thread holds between two steps, a full magazine of the
 *     depot, the loose stack, the trimmer's hands); no object is in two;
 *   - every magazine is in exactly one place, and freed ones in none;
 *   - magazines in memory <= census magazines <= 2 x census caches + MAXF;
 *   - the depot holds at most MAXF magazines, full and empty together;
 *   - objects constructed <= created <= NOBJ (the capacity);
 * and no invalid end state (every thread finishes: no deadlock).
 *
 * Negative control (-DNEGATIVE): refill gives its empty previous magazine
 * to the depot before it has taken a full one (R3 before R2), a plausible
 * reordering: the cache goes on using a magazine the depot also holds.
 * -DNEGATIVE_KEEP (with KEEPO > 0): trim pushes a kept object back onto
 * the loose stack but leaves it in the chain it destroys.
 */

#define NC	2		/* caches, one user thread each */
#define MAG	2		/* magazine_size */
#define NOBJ	4		/* capacity */
#define MAXF	1		/* depot_max */
#define NMAGS	(2 * NC + MAXF + 1)	/* one more than the census allows */
#ifndef OPS
#define OPS	3		/* calls per thread before it exits */
#endif
#ifndef KEEPO
#define KEEPO	0		/* trim's keep: loose objects it pushes back (K1) */
#endif
#define NIL	0

byte created;			/* counted objects (capacity check) */
bit alive[NOBJ + 1];		/* object slot constructed */
byte owner[NOBJ + 1];		/* 1 + the thread holding it as a user */
byte nheld[NC];			/* objects in each user's hands */

bit mused[NMAGS + 1];		/* magazine memory taken */
byte mobj[(NMAGS + 1) * MAG];	/* magazine contents */

byte fullst[NMAGS + 1];		/* the depot: stacks as arrays, top last */
byte fulln;
byte emptyst[NMAGS + 1];
byte emptyn;
byte loose[NOBJ + 1];
byte nloose;
byte cen_caches, cen_mags;	/* the census word, two halves */

/* The caches (private to their thread; read by the monitor). */
byte loaded[NC], prev[NC], count[NC];
bit prev_full[NC];
byte xmag[NC];			/* a magazine taken off the depot, not yet installed */
bit xfull[NC];

/* The trimmer's private chains. */
byte tmags[NMAGS + 1];
byte ntmags;
byte tnfull;			/* the first tnfull of tmags are full */
byte tobjs[NOBJ + 1];
byte ntobjs;

byte finished;			/* threads finished */

/* Stack arrays are passed by name, so these are cpp macros, not inlines. */
#define push(st, n, x)	st[n] = x; n++
#define pop(st, n, x)	if :: n > 0 -> n--; x = st[n]; st[n] = 0 :: else -> x = NIL fi

/* The loaded magazine becomes the previous one; mg with n objects is loaded. */
inline rotate(mg, n) {
	t = mg;
	prev[c] = loaded[c];
	prev_full[c] = (count[c] != 0);
	loaded[c] = t;
	count[c] = n;
	t = 0
}

/* Push the n objects of magazine mg from slot 0 as one chain (slot 0 on
 * top), and clear the slots. */
inline put_objs(mg, n) {
	i = n;
	do
	:: i > 0 -> i--; push(loose, nloose, mobj[mg * MAG + i]); mobj[mg * MAG + i] = 0
	:: else -> break
	od
}

/* G1: take the top object of the loaded magazine into the user's hands. */
inline take_one() {
	atomic {
		count[c]--;
		o = mobj[loaded[c] * MAG + count[c]];
		mobj[loaded[c] * MAG + count[c]] = 0;
		assert(o != NIL && owner[o] == 0);
		owner[o] = c + 1;
		nheld[c]++;
		o = 0
	}
}

inline refill() {
	ok = 1;
	if
	:: prev_full[c] -> atomic { rotate(prev[c], MAG) }	/* R1 */
	:: else ->
#ifdef NEGATIVE
		atomic { push(emptyst, emptyn, prev[c]) };	/* R3 first: wrong */
		atomic { pop(fullst, fulln, m); xmag[c] = m; xfull[c] = 1 };
		if
		:: m != NIL -> atomic { xmag[c] = 0; rotate(m, MAG); m = NIL }
		:: else ->
#else
		atomic { pop(fullst, fulln, m); xmag[c] = m; xfull[c] = 1 };	/* R2 */
		if
		:: m != NIL ->						/* R3 */
			atomic { push(emptyst, emptyn, prev[c]); xmag[c] = 0; rotate(m, MAG); m = NIL }
		:: else ->
#endif
			atomic {					/* R4 */
				k = 0;
				do
				:: k < MAG && nloose > 0 ->
					nloose--;
					mobj[loaded[c] * MAG + k] = loose[nloose];
					loose[nloose] = 0;
					k++
				:: else -> break
				od;
				/* popped top first into objs[0..k): the order does not matter here */
				count[c] = k;
				ok = (k > 0);
				k = 0
			}
		fi
	fi
}

/* C1: one new object (lfp_ts_create_objects), straight into the user's hands. */
inline create_one() {
	atomic {
		if
		:: created < NOBJ ->
			created++;
			o = 1;
			do
			:: alive[o] -> o++
			:: else -> break
			od;
			assert(o <= NOBJ);
			alive[o] = 1;
			owner[o] = c + 1;
			nheld[c]++;
			o = 0;
			ok = 1
		:: else -> ok = 0	/* ENOBUFS */
		fi
	}
}

inline get() {
	if
	:: count[c] > 0 -> take_one()
	:: else ->
		refill();
		if
		:: ok -> take_one()
		:: else ->
			create_one();
			if
			:: !ok ->		/* C2: objects may have come back */
				refill();
				if
				:: ok -> take_one()
				:: else -> skip	/* get fails with ENOBUFS */
				fi
			:: else -> skip
			fi
		fi
	fi
}

inline make_room() {
	if
	:: prev_full[c] ->
		atomic { pop(emptyst, emptyn, m); xmag[c] = m; xfull[c] = 0 };	/* M1 */
		if
		:: m == NIL ->
			atomic {					/* M2 */
				if
				:: cen_mags + 1 <= 2 * cen_caches + MAXF -> cen_mags++; ok = 1
				:: else -> ok = 0
				fi
			};
			if
			:: ok ->					/* M3 */
				atomic {
					m = 1;
					do
					:: m <= NMAGS && mused[m] -> m++
					:: else -> break
					od;
					assert(m <= NMAGS);
					mused[m] = 1;
					xmag[c] = m;
					xfull[c] = 0
				}
			:: else -> skip
			fi
		:: else -> skip
		fi;
		if
		:: m != NIL ->						/* M4 */
			atomic { push(fullst, fulln, prev[c]); xmag[c] = 0; rotate(m, 0); m = NIL }
		:: else ->						/* M5 */
			atomic { put_objs(prev[c], MAG); prev_full[c] = 0; rotate(prev[c], 0) }
		fi
	:: else -> atomic { rotate(prev[c], 0) }			/* M6 */
	fi
}

inline put() {
	/* the lowest-numbered object in the user's hands (objects are
	 * interchangeable: no step looks at which one) */
	atomic {
		o = 1;
		do
		:: owner[o] != c + 1 -> o++
		:: else -> break
		od;
		nheld[c]--
	};
	if
	:: count[c] == MAG -> make_room()
	:: else -> skip
	fi;
	atomic {							/* P1 */
		owner[o] = 0;
		mobj[loaded[c] * MAG + count[c]] = o;
		count[c]++;
		o = 0
	}
}

inline flush() {
	atomic { put_objs(loaded[c], count[c]); count[c] = 0 };	/* F1 */
	if
	:: prev_full[c] -> atomic { put_objs(prev[c], MAG); prev_full[c] = 0 }	/* F2 */
	:: else -> skip
	fi
}

/* A cache's thread: OPS gets (lib/threadstatic/cache.c take_owned()), puts
 * (lib/threadstatic/cache.c push_objs()) or flushes
 * (lib/threadstatic/cache.c flush_owned()), then its exit
 * (lib/threadstatic/cache.c lfp_cache_free(): F1-F2, L1-L3). */
proctype user(byte c)
{
	byte o, m, k, i, t, ops;
	bit ok;

	do
	:: ops < OPS ->
		ops++;
		if
		:: get()
		:: nheld[c] > 0 -> put()
		:: flush()
		fi
	:: else -> break
	od;
	/* Thread exit: lfp_cache_free = flush, then leave; the objects still
	 * in the user's hands stay out. */
	flush();
	atomic { mused[loaded[c]] = 0; mused[prev[c]] = 0; loaded[c] = 0; prev[c] = 0 };	/* L1 */
	atomic { cen_mags = cen_mags - 2; cen_caches-- };			/* L2 + L3: one FAA */
	finished++
}

/* lib/threadstatic/threadstatic.c lfpool_ts_trim(): the take
 * (lib/threadstatic/depot.c lfp_depot_trim(): T1-T5, K1), then the free
 * (lib/threadstatic/depot.c lfp_depot_trim_free(): T5-T7). */
proctype trimmer()
{
	byte keepf, keepe, i, j, m, n, t;

	/* trim's working set, from counters: one kept full magazine exercises
	 * the push back (T2), none kept empty the release of all (T3) */
	keepf = 1;
	keepe = 0;
	/* T1, T2: the full magazines beyond the top keepf */
	atomic {
		do
		:: fulln > 0 -> pop(fullst, fulln, m); push(tmags, ntmags, m)
		:: else -> break
		od;
		tnfull = ntmags;
		m = 0
	};
	atomic {
		/* tmags holds them top first: give the top keepf back */
		n = (keepf < ntmags -> keepf : ntmags);
		i = n;
		do
		:: i > 0 -> i--; push(fullst, fulln, tmags[i])
		:: else -> break
		od;
		/* drop the first n from tmags */
		j = 0;
		do
		:: j + n < ntmags -> tmags[j] = tmags[j + n]; j++
		:: else -> break
		od;
		do
		:: j < ntmags -> tmags[j] = 0; j++
		:: else -> break
		od;
		ntmags = ntmags - n;
		tnfull = ntmags;
		i = 0; j = 0; n = 0
	};
	/* T3: the same for the empty ones, appended after the full ones */
	atomic {
		t = ntmags;
		do
		:: emptyn > 0 -> pop(emptyst, emptyn, m); push(tmags, ntmags, m)
		:: else -> break
		od;
		m = 0
	};
	atomic {
		n = (keepe < ntmags - t -> keepe : ntmags - t);
		i = n;
		do
		:: i > 0 -> i--; push(emptyst, emptyn, tmags[t + i])
		:: else -> break
		od;
		j = t;
		do
		:: j + n < ntmags -> tmags[j] = tmags[j + n]; j++
		:: else -> break
		od;
		do
		:: j < ntmags -> tmags[j] = 0; j++
		:: else -> break
		od;
		ntmags = ntmags - n;
		i = 0; j = 0; n = 0; t = 0
	};
	/* T4: every loose object */
	atomic {
		do
		:: nloose > 0 -> nloose--; push(tobjs, ntobjs, loose[nloose]); loose[nloose] = 0
		:: else -> break
		od
	};
	/* T5: unload the full ones (private), then K1: keep KEEPO of the
	 * objects, pushed back onto the loose stack as one chain (keep_top:
	 * the one shared access of this step) */
	atomic {
		j = 0;
		do
		:: j < tnfull ->
			m = tmags[j];
			i = 0;
			do
			:: i < MAG -> push(tobjs, ntobjs, mobj[m * MAG + i]); mobj[m * MAG + i] = 0; i++
			:: else -> break
			od;
			j++
		:: else -> break
		od;
		n = (KEEPO < ntobjs -> KEEPO : ntobjs);
		do
		:: n > 0 -> n--;
#ifdef NEGATIVE_KEEP
			m = tobjs[ntobjs - 1];	/* kept, and destroyed too */
#else
			pop(tobjs, ntobjs, m);
#endif
			push(loose, nloose, m)
		:: else -> break
		od;
		tnfull = 0; m = 0; i = 0; j = 0
	};
	/* T5: free every magazine taken */
	atomic {
		n = ntmags;
		do
		:: ntmags > 0 -> pop(tmags, ntmags, m); mused[m] = 0
		:: else -> break
		od;
		m = 0
	};
	atomic { cen_mags = cen_mags - n; n = 0 };			/* T6 */
	/* T7: destroy the objects (their slots become free), then count them */
	atomic {
		n = ntobjs;
		do
		:: ntobjs > 0 -> pop(tobjs, ntobjs, m); alive[m] = 0
		:: else -> break
		od;
		m = 0
	};
	atomic { created = created - n; n = 0 };
	finished++
}

/* Every reachable state: each object and magazine in exactly one place. */
active proctype monitor()
{
	byte seen[NOBJ + 1], mseen[NMAGS + 1];
	byte c, i, j, m, nm, na;

	d_step {
		/* objects */
		for (i : 1 .. NOBJ) {
			seen[i] = (owner[i] != 0)
		}
		for (c : 0 .. NC - 1) {
			for (i : 0 .. MAG - 1) {
				if
				:: i < count[c] -> seen[mobj[loaded[c] * MAG + i]]++
				:: else
				fi;
				if
				:: prev_full[c] -> seen[mobj[prev[c] * MAG + i]]++
				:: else
				fi;
				if
				:: xmag[c] != 0 && xfull[c] -> seen[mobj[xmag[c] * MAG + i]]++
				:: else
				fi
			}
		}
		j = 0;
		do
		:: j < fulln ->
			for (i : 0 .. MAG - 1) { seen[mobj[fullst[j] * MAG + i]]++ }
			j++
		:: else -> break
		od;
		j = 0;
		do
		:: j < ntmags && j < tnfull ->
			for (i : 0 .. MAG - 1) { seen[mobj[tmags[j] * MAG + i]]++ }
			j++
		:: else -> break
		od;
		j = 0;
		do
		:: j < nloose -> seen[loose[j]]++; j++
		:: else -> break
		od;
		j = 0;
		do
		:: j < ntobjs -> seen[tobjs[j]]++; j++
		:: else -> break
		od;
		na = 0;
		for (i : 1 .. NOBJ) {
			assert(seen[i] == alive[i]);	/* conservation, no object held twice */
			na = na + alive[i]
		}
		assert(na <= created && created <= NOBJ);

		/* magazines */
		for (c : 0 .. NC - 1) {
			mseen[loaded[c]]++;
			mseen[prev[c]]++;
			mseen[xmag[c]]++
		}
		j = 0;
		do
		:: j < fulln -> mseen[fullst[j]]++; j++
		:: else -> break
		od;
		j = 0;
		do
		:: j < emptyn -> mseen[emptyst[j]]++; j++
		:: else -> break
		od;
		j = 0;
		do
		:: j < ntmags -> mseen[tmags[j]]++; j++
		:: else -> break
		od;
		nm = 0;
		for (m : 1 .. NMAGS) {
			assert(mseen[m] == mused[m]);	/* each magazine in one place */
			nm = nm + mused[m]
		}
		assert(nm <= cen_mags);
		assert(cen_mags <= 2 * cen_caches + MAXF);
		assert(fulln + emptyn <= MAXF)
	}
}

init
{
	byte c;

	atomic {
		/* NC caches joined (lfp_depot_join), magazines 1..2*NC */
		for (c : 0 .. NC - 1) {
			loaded[c] = 2 * c + 1;
			prev[c] = 2 * c + 2;
			mused[2 * c + 1] = 1;
			mused[2 * c + 2] = 1
		}
		cen_caches = NC;
		cen_mags = 2 * NC;
		for (c : 0 .. NC - 1) {
			run user(c)
		}
#ifndef NOTRIM
		run trimmer()
#endif
	}
}
