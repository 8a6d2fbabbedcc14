/* SPDX-License-Identifier: MIT */
/*
 * hooks.pml - user hooks and ThreadStatic grace sections
 * (lib/threadstatic/grace.h): a trim never waits for a grace section that
 * cannot end before the trim does.
 *
 * A section that encloses a hook may never end: the hook may wait for a
 * lock that the trimming thread holds (the application's mutex m), or be
 * the trimming thread itself (a hook that trims another pool R).  So no
 * hook runs inside a section, and a wait from inside a section (the
 * backing allocator's trim) does not wait for its own thread.
 *
 * Threads (each a way a hook met a section, all at once):
 *   getter    a get of P that creates: the raw pops in a section (G1-G2),
 *             then P's init hook, which takes m (G3-G4);
 *   trimmer   holds m and trims R: waits for every section (T1-T3);
 *   finisher  a trim of P: takes objects out in a section (F1-F2), then
 *             P's fini hook, which trims R (F3) and takes m (F4-F5);
 *   allocator a slab grown inside a section (A1), whose allocator trims R
 *             (A2): lfp_grace_wait returns at once; then A3.
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   G1, F1, A1   lib/threadstatic/grace.c lfp_grace_enter(),
 *                lib/threadstatic/grace.c lfp_grace_enter_locked()
 *   G2, F2, A3   lib/threadstatic/grace.c lfp_grace_leave()
 *   G1-G4        lib/threadstatic/ts_internal.h lfp_ts_create_objects(): the raw pops in a
 *                section, then the init hooks after it
 *                (lib/core.c lfp_core_construct_chain())
 *   F1-F2        lib/threadstatic/threadstatic.c trim_take(): the depot's pops in a
 *                section (lib/threadstatic/depot.c lfp_depot_trim())
 *   F3-F5        lib/threadstatic/threadstatic.c lfpool_ts_trim(): the fini hooks
 *                after the section, holding no lock
 *                (lib/threadstatic/threadstatic.c trim_free())
 *   T2, F3, A2   a trim's wait: lib/threadstatic/threadstatic.c reclaim_side()
 *   W            lib/threadstatic/grace.c lfp_grace_wait(): false inside a section;
 *                else waits until every other thread was outside a section once
 *
 * Property: safety (no invalid end state: every thread finishes).
 * Negative controls (each a deadlock, which safety rejects):
 *   -DINIT_IN_SECTION   the init hook inside the get's section (the code
 *                       before: a get's slow path created in its section);
 *   -DFINI_IN_SECTION   the fini hook inside the trim's section (its trim
 *                       of R passes by the check of W; its m does not);
 *   -DWAIT_FOR_SELF     lfp_grace_wait without its check for the caller's
 *                       own section.
 */

#define NT 4
#define GETTER 0
#define TRIMMER 1
#define FINISHER 2
#define ALLOC 3

byte depth[NT];		/* sections each thread is inside */
bit m;			/* the application's mutex */

inline lock_m() { atomic { m == 0 -> m = 1 } }
inline unlock_m() { m = 0 }

/* W: lfp_grace_wait of thread t. */
inline grace_wait(t)
{
	byte u;
#ifndef WAIT_FOR_SELF
	if
	:: depth[t] > 0 -> skip		/* inside one: no wait, side data stays */
	:: else ->
#endif
		for (u : 0 .. NT - 1) {
			depth[u] == 0
		}
#ifndef WAIT_FOR_SELF
	fi
#endif
}

/* A get of P that creates: lib/threadstatic/ts_internal.h lfp_ts_create_objects(). */
proctype getter()
{
	depth[GETTER]++;		/* G1 */
#ifdef INIT_IN_SECTION
	lock_m();			/* G3 */
	unlock_m();			/* G4 */
	depth[GETTER]--;		/* G2 */
#else
	depth[GETTER]--;		/* G2 */
	lock_m();			/* G3 */
	unlock_m();			/* G4 */
#endif
}

/* A trim of R holding m: its wait, lib/threadstatic/threadstatic.c reclaim_side(). */
proctype trimmer()
{
	lock_m();			/* T1 */
	grace_wait(TRIMMER);		/* T2 */
	unlock_m()			/* T3 */
}

/* A trim of P whose fini hook trims R and takes m:
 * lib/threadstatic/threadstatic.c lfpool_ts_trim(). */
proctype finisher()
{
	depth[FINISHER]++;		/* F1 */
#ifdef FINI_IN_SECTION
	grace_wait(FINISHER);		/* F3 */
	lock_m();			/* F4 */
	unlock_m();			/* F5 */
	depth[FINISHER]--;		/* F2 */
#else
	depth[FINISHER]--;		/* F2 */
	grace_wait(FINISHER);		/* F3 */
	lock_m();			/* F4 */
	unlock_m();			/* F5 */
#endif
}

/* A slab grown inside a section, whose allocator trims R
 * (lib/threadstatic/grace.c lfp_grace_wait() returns false at once). */
proctype allocator()
{
	depth[ALLOC]++;			/* A1 */
	grace_wait(ALLOC);		/* A2 */
	depth[ALLOC]--			/* A3 */
}

init
{
	atomic {
		run getter();
		run trimmer();
		run finisher();
		run allocator()
	}
}
