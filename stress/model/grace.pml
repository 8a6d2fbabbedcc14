/* SPDX-License-Identifier: MIT */
/*
 * grace.pml - the counted read-side sections of lib/threadstatic/grace.c
 * (a thread's first sections, before it registers with liburcu-bp) and
 * trims' lfp_grace_wait over them.
 *
 * NR readers run counted sections back to back, forever, overlapping one
 * another: each enters (reads phase, adds 1 to that phase's counter, reads
 * phase again, and takes its add back and starts over if it moved), may
 * reach the side data while it is still linked, reads it, and leaves.
 * Trims run NW waits one after the other (wait_lock makes them take
 * turns): each unlinks its own side data, moves phase on, waits for the
 * counter of the phase it left to read 0, and frees its data.
 *
 * Correspondence (step: what it does, then the function it is in;
 * stress/model/cites.sh checks every citation):
 *   R1  ph = phase                        lib/threadstatic/grace.c enter() (lfp_load_u64_sc)
 *   R2  counted_readers[ph & 1] += 1      lib/threadstatic/grace.c enter() (lfp_faa_u64_sc)
 *   R3  phase == ph, else undo and R1     lib/threadstatic/grace.c enter() (the second load,
 *                                         the undo)
 *   R4  the section: reach, then read     the slow paths' stack pops, between
 *                                         lib/threadstatic/grace.c lfp_grace_enter() and
 *                                         lib/threadstatic/grace.c lfp_grace_leave()
 *   R5  counted_readers[in] -= 1          lib/threadstatic/grace.c lfp_grace_leave()
 *   W1  unlink data w                     a trim gives wholly free slabs back
 *                                         (lib/core.c lfp_core_destroy_chain());
 *                                         W2-W4 run in the trim's
 *                                         lib/threadstatic/threadstatic.c reclaim_side()
 *   W2  left = phase++ & 1                lib/threadstatic/grace.c lfp_grace_wait()
 *                                         (lfp_faa_u64_sc(&phase, 1))
 *   W3  wait counted_readers[left] == 0   lib/threadstatic/grace.c lfp_grace_wait()
 *   W4  free data w                       lib/slab.c lfp_slabs_drop_side()
 *
 * Properties:
 *   - safety: no section reads side data after it is freed, if it reached
 *     it before its unlink (assertion in R4);
 *   - ltl done (weak fairness): the waits end although sections keep
 *     coming.
 * Negative controls: -DONE_COUNTER (the code before the phases: one
 * counter, W2 moves nothing) fails ltl done: two readers taking turns keep
 * the counter above 0 forever; -DNO_RECHECK (no R3) fails safety: a
 * section that read phase before the first wait and adds after it counts
 * on the counter of the second wait's new phase, which that wait does not
 * wait for; -DREACH_FIRST (a section that reaches the data before it
 * counts itself) fails safety.
 */

#define NR 2
#define NW 2

byte phase;
byte counted[2];
bit unlinked[NW], freed[NW];
bit done;

/* Sections back to back: lib/threadstatic/grace.c enter() (R1-R3), the
 * section (R4), lib/threadstatic/grace.c lfp_grace_leave() (R5). */
proctype reader()
{
	byte ph, in, w;
	bit reached[NW];
	do
	:: true ->
#ifdef REACH_FIRST
		for (w : 0 .. NW - 1) { reached[w] = !unlinked[w] };
#endif
again:
#ifdef ONE_COUNTER
		ph = 0;
#else
		ph = phase;					/* R1 */
#endif
		in = ph & 1;
		counted[in]++;					/* R2 */
#if !defined(ONE_COUNTER) && !defined(NO_RECHECK)
		if						/* R3 */
		:: phase != ph -> counted[in]--; goto again
		:: else
		fi;
#endif
#ifndef REACH_FIRST
		for (w : 0 .. NW - 1) { reached[w] = !unlinked[w] };	/* R4 */
#endif
		for (w : 0 .. NW - 1) { assert(!(reached[w] && freed[w])) };
		for (w : 0 .. NW - 1) { reached[w] = 0 };
		w = 0;
		counted[in]--					/* R5 */
	od
}

/* NW trims' waits in turn: lib/threadstatic/grace.c lfp_grace_wait() (W1-W4). */
proctype trims()
{
	byte left, w;
	for (w : 0 .. NW - 1) {
		unlinked[w] = 1;				/* W1 */
#ifdef ONE_COUNTER
		left = 0;
#else
		atomic { left = phase & 1; phase++ };		/* W2 */
#endif
		counted[left] == 0;				/* W3 */
		freed[w] = 1					/* W4 */
	};
	done = 1
}

ltl done { <> done }

init
{
	byte i;
	atomic {
		for (i : 1 .. NR) {
			run reader()
		}
		run trims()
	}
}
