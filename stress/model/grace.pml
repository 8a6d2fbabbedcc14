/* SPDX-License-Identifier: MIT */
/*
 * grace.pml - the counted read-side sections of lib/threadstatic/grace.c
 * (a thread's first sections, before it registers with liburcu-bp) and a
 * trim's lfp_grace_wait over them.
 *
 * NR readers run counted sections back to back, forever, overlapping one
 * another: each enters (reads phase, adds 1 to that phase's counter), may
 * reach the side data while it is still linked, reads it, and leaves.  One
 * trim unlinks the side data, waits (moves phase on, then waits for the
 * counter of the phase it left to read 0), and frees it.
 *
 * Correspondence (step: lib/threadstatic/grace.c):
 *   R1  ph = phase                        enter(): lfp_load_u64_sc(&phase)
 *   R2  counted_readers[ph & 1] += 1      enter(): lfp_faa_u64_sc
 *   R4  the section: reach, then read     the slow path's stack pops (threadstatic/*)
 *   R5  counted_readers[in] -= 1          lfp_grace_leave()
 *   W1  unlink                            threadstatic.c reclaim_side (slabs given back)
 *   W2  left = phase++ & 1                lfp_grace_wait(): lfp_faa_u64_sc(&phase, 1)
 *   W3  wait counted_readers[left] == 0   lfp_grace_wait()
 *   W4  free                              lfp_slabs_drop_side
 *
 * Properties:
 *   - safety: no section reads the side data after it is freed, if it
 *     reached it (assertion in R4);
 *   - ltl done (weak fairness): the wait ends although sections keep
 *     coming.
 * Negative controls: -DONE_COUNTER (the code before the phases: one
 * counter, W2 moves nothing) fails ltl done: two readers taking turns keep
 * the counter above 0 forever; -DNO_RECHECK (no R3) fails safety: a
 * section that read phase before W2 and adds after W3 read 0 reads freed
 * data.
 */

#define NR 2

byte phase;
byte counted[2];
bit unlinked, freed, done;

proctype reader()
{
	byte in;
	bit reached;
	do
	:: true ->
#ifdef REACH_FIRST
		reached = !unlinked;
#endif
#ifdef ONE_COUNTER
		in = 0;
#else
		in = phase & 1;					/* R1 */
#endif
		counted[in]++;					/* R2 */
#ifndef REACH_FIRST
		reached = !unlinked;				/* R4 */
#endif
		assert(!(reached && freed));
		reached = 0;
		counted[in]--					/* R5 */
	od
}

proctype trim()
{
	byte left;
	unlinked = 1;						/* W1 */
#ifdef ONE_COUNTER
	left = 0;
#else
	atomic { left = phase & 1; phase++ };			/* W2 */
#endif
	counted[left] == 0;					/* W3 */
	freed = 1;						/* W4 */
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
		run trim()
	}
}
