/* SPDX-License-Identifier: MIT */
/*
 * census.pml - the magazine census of the depot: caches joining and
 * leaving, spare magazines, exchanges and a trim, counted rather than
 * named.  depot.pml follows every object through two caches; the bound
 * magazines <= 2 x caches + depot_max is only at stake when the depot is
 * at it, which with objects takes more of them than that model can hold
 * (five per cache and more), so this model drops the objects and keeps
 * the magazines' counts: each step of a cache below is possible in the
 * real code whenever the cache holds enough objects (a spare needs its
 * two magazines full and one more put), and each shared access is a step
 * of its own, so this model has every census behaviour of the real one
 * (trim keeps nothing here: keeping some only moves fewer magazines).
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   J1  join: census += cache + 2   lib/threadstatic/depot.c lfp_depot_join() (the FAA)
 *   J2  join: two magazines         lib/threadstatic/depot.c lfp_depot_join()
 *                                   (lib/core.c lfp_core_take_raw())
 *   X1  pop full / pop empty (or find none)
 *                                   lib/threadstatic/cache.c refill(),
 *                                   lib/threadstatic/cache.c make_room()
 *                                   (lib/threadstatic/depot.h lfp_depot_pop())
 *   X2  push the other kind back    lib/threadstatic/cache.c refill(),
 *                                   lib/threadstatic/cache.c make_room()
 *                                   (lib/threadstatic/depot.h lfp_depot_push())
 *   S1  spare: the census CAS       lib/threadstatic/depot.c lfp_depot_spare() (the CAS loop)
 *   S2  spare: magazine memory      lib/threadstatic/depot.c lfp_depot_spare() (lfp_core_take_raw)
 *   B1  depot at bound: objects go loose, no magazine moves
 *                                   lib/threadstatic/cache.c make_room()
 *                                   (lib/threadstatic/depot.c lfp_depot_put_objs())
 *   L1  leave: free two magazines   lib/threadstatic/depot.c lfp_depot_leave(), then
 *                                   lib/threadstatic/depot.c free_mags() (lfp_core_keep_chain)
 *   L2  leave: census -= 2          lib/threadstatic/depot.c free_mags(): its one FAA ...
 *   L3  leave: census -= cache      ... of n + LFP_CENSUS_CACHE (leaving)
 *   T1  trim: pop all, free, census -= n
 *                                   lib/threadstatic/depot.c lfp_depot_trim(), then
 *                                   lib/threadstatic/depot.c lfp_depot_trim_free()
 *                                   (free_mags: the magazines, then one FAA)
 *
 * The fix checked here, and what lib/threadstatic/depot.c does: L2 and L3
 * as ONE decrement of cache + 2, after L1.  The code before that fix did
 * them in two steps (L2 then L3); that is the negative control below, and
 * Spin shows how it breaks the bound:
 * between L2 and L3 the census counts the leaving cache but not its
 * magazines, so a spare at the bound is let through, and once L3 lands
 * there is one magazine too many for the caches left, and the depot holds
 * depot_max + 1.  Each such race adds one more: with caches coming and
 * going the magazines are not bounded by 2 x caches + depot_max at all.
 *
 * Properties, checked by the monitor in every reachable state:
 *   magazines in memory <= census magazines <= 2 x census caches + MAXF,
 *   the depot holds at most MAXF magazines (full and empty together),
 *   magazines held by caches and the depot add up to those in memory;
 * and no invalid end state.
 *
 * Negative control (-DNEGATIVE): the old lfp_depot_leave, L2 and L3 apart.
 */

#define NC	2		/* caches that come and go, one thread each */
#define MAXF	1		/* depot_max */
#define OPS	3		/* exchanges per cache life */
#define LIVES	2		/* each thread's cache joins and leaves this often */

byte cen_caches, cen_mags;	/* the census word's halves */
byte real;			/* magazines in memory */
byte nfullm, nemptym;		/* the depot's stacks, counted */
byte held[NC];			/* magazines each cache holds */
byte trim_held;			/* magazines the trimmer has popped */

/* A thread whose cache joins (lib/threadstatic/depot.c lfp_depot_join(): J1-J2),
 * exchanges magazines (lib/threadstatic/cache.c refill(), make_room: X1-B1) and
 * leaves (lib/threadstatic/depot.c lfp_depot_leave(): L1-L3), LIVES times. */
proctype cache(byte c)
{
	byte lives, ops;
	bit ok;

	do
	:: lives < LIVES ->
		lives++;
		atomic { cen_caches++; cen_mags = cen_mags + 2 };	/* J1 */
		atomic { real = real + 2; held[c] = 2 };		/* J2 */
		ops = 0;
		do
		:: ops < OPS ->
			ops++;
			if
			:: atomic { nfullm > 0 -> nfullm--; held[c]++ };	/* X1 get */
			   atomic { nemptym++; held[c]-- }		/* X2 */
			:: atomic { nemptym > 0 -> nemptym--; held[c]++ };	/* X1 put */
			   atomic { nfullm++; held[c]-- }			/* X2 */
			:: nemptym == 0;				/* put: no empty one */
			   atomic {					/* S1 */
				if
				:: cen_mags + 1 <= 2 * cen_caches + MAXF -> cen_mags++; ok = 1
				:: else -> ok = 0
				fi };
			   if
			   :: ok -> atomic { real++; held[c]++; ok = 0 };	/* S2 */
				    atomic { nfullm++; held[c]-- }		/* X2 */
			   :: else -> skip					/* B1 */
			   fi
			fi
		:: else -> break
		od;
		atomic { real = real - 2; held[c] = 0 };		/* L1 */
#ifdef NEGATIVE
		atomic { cen_mags = cen_mags - 2 };			/* L2 */
		atomic { cen_caches-- }					/* L3 */
#else
		atomic { cen_mags = cen_mags - 2; cen_caches-- }	/* L2 + L3 */
#endif
	:: else -> break
	od
}

/* lib/threadstatic/depot.c lfp_depot_trim(), keeping nothing, then its
 * lib/threadstatic/depot.c free_mags() (T1). */
proctype trimmer()
{
	byte n;

	atomic { trim_held = nfullm + nemptym; nfullm = 0; nemptym = 0 };	/* T1: pop all (keep 0) */
	atomic { real = real - trim_held; n = trim_held; trim_held = 0 };	/* free_mags: memory */
	atomic { cen_mags = cen_mags - n; n = 0 }			/* free_mags: census */
}

active proctype monitor()
{
	byte c, h;

	d_step {
		h = nfullm + nemptym + trim_held;
		for (c : 0 .. NC - 1) {
			h = h + held[c]
		}
		assert(h == real);
		assert(real <= cen_mags);
		assert(cen_mags <= 2 * cen_caches + MAXF);
		assert(nfullm + nemptym <= MAXF)
	}
}

init
{
	byte c;

	atomic {
		for (c : 0 .. NC - 1) {
			run cache(c)
		}
		run trimmer()
	}
}
