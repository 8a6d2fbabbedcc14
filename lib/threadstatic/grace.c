/* SPDX-License-Identifier: MIT */
/*
 * grace.c - grace periods (grace.h) over liburcu-bp.
 */
#include "grace.h"

__thread unsigned lfp_busy;
/* Sections the calling thread is inside (lfp_grace_inside). */
static __thread unsigned sections;

static void inside(void)
{
	lfp_busy_enter();
	sections++;
}

static void outside(void)
{
	sections--;
	lfp_busy_leave();
}

bool lfp_grace_inside(void) { return sections != 0; }

#ifdef LFPOOL_TSAN

void lfp_grace_enter(void) { inside(); }
void lfp_grace_register(void) {}
void lfp_grace_enter_locked(void) { inside(); }
void lfp_grace_leave(void) { outside(); }
bool lfp_grace_wait(void) { return !sections; }
bool lfp_grace_reclaims(void) { return false; }
void lfp_grace_fork_prepare(void) {}
void lfp_grace_fork_parent(void) {}
void lfp_grace_fork_child(void) {}

#else

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <urcu/urcu-bp.h>

#include "atomic.h"

/*
 * A thread's first sections are counted, not registered.  liburcu-bp's
 * registration blocks and restores every signal around it (two
 * rt_sigprocmask calls), which was most of a new thread's first
 * lfpool_ts_get (some 2 us of 2.7 on the loaded 2-CPU machine of
 * bench pattern firstuse).  So a thread's first LFP_GRACE_COUNTED
 * sections instead add 1, while they run, to one of two shared counters,
 * counted_readers[phase & 1] (a sequentially consistent add, before the
 * section reads anything; a slow path's cost, never a fast path's), and
 * lfp_grace_wait waits for liburcu-bp's readers and for the counter of
 * the phase before its own.  Only threads young in this library count,
 * so the words are rarely contended.  After that many sections a thread
 * registers at its next point that holds no lock (lfp_grace_register or
 * an unlocked lfp_grace_enter) and uses liburcu-bp from then on.  A
 * thread that exits before registering makes no registration call.
 *
 * Why two counters (liburcu's phases, for a shared counter): with one, a
 * wait lasted until it saw no counted section at all, so new threads
 * whose first sections overlap back to back (hundreds of ns each; a
 * thread-per-connection server starts threads all the time) could hold a
 * trim's wait for as long as they kept coming.  A waiter instead moves
 * phase on (an SC add: phase only grows) and waits only for the counter
 * of the phase it left.  A section reads phase, adds 1 to that phase's
 * counter and reads phase again (all SC) before it reads anything; if
 * phase moved, it takes its add back and starts over.  Take a section
 * that enters on phase p and a waiter: either the waiter's move came
 * before the section's first read (which then reads the move, or a later
 * one, and so begins after the unlink that precedes the move: it cannot
 * reach what the waiter frees); or it came after the second read, so the
 * move is p -> p + 1 or later: the first move after the second read is
 * p -> p + 1, and the waiter making it reads counter p & 1 after the
 * section's add, and waits for the section to leave, as every later
 * waiter starts after that one ended.  No move comes between the two
 * reads (they read the same p).  Without the second read a section that
 * read p before a whole wait and added after it would count on p & 1,
 * the counter of the phase after the next move, which the next waiter
 * does not wait for.  Only sections that read phase before a move can
 * add to its old counter, so it drains within one section's time.  Waits
 * take turns (wait_lock).  stress/model/grace.pml checks it with two
 * waits in a row: safety, and that a wait ends while new sections keep
 * coming (negative controls: one counter may wait forever; no second
 * read lets a section read freed data).
 */
#define LFP_GRACE_COUNTED 8u

static uint64_t phase;			/* counted sections add to counter phase & 1 */
static uint64_t counted_readers[2];	/* threads inside a counted section, by phase */
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
/* Whether the thread uses liburcu-bp (it is, or was until liburcu's key
 * destructor ran at thread exit, registered); its counted sections so far
 * (saturating at LFP_GRACE_COUNTED), how deep it is in one, and the
 * counter its outermost one added to. */
static __thread bool registered;
static __thread uint8_t counted;
static __thread uint32_t counted_depth;
static __thread uint8_t counted_in;

void lfp_grace_leave(void)
{
	if (counted_depth) {
		if (--counted_depth == 0)
			lfp_faa_u64_sc(&counted_readers[counted_in], (uint64_t)-1);
	} else {
		urcu_bp_read_unlock();
	}
	outside();
}

/* A wait from inside a section would wait for itself: it does not.  The
 * wait runs with cancellation off: liburcu-bp holds its rcu_gp_lock across
 * poll(), a cancellation point, and a thread cancelled there left it held
 * for the process (every later wait and fork() hung). */
bool lfp_grace_wait(void)
{
	if (sections)
		return false;
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	lfp_busy_enter();
	urcu_bp_synchronize_rcu();
	pthread_mutex_lock(&wait_lock);
	uint64_t left = lfp_faa_u64_sc(&phase, 1) & 1;
	while (lfp_load_u64_sc(&counted_readers[left]) != 0)
		sched_yield();
	pthread_mutex_unlock(&wait_lock);
	lfp_busy_leave();
	pthread_setcancelstate(cancel, &cancel);
	return true;
}

bool lfp_grace_reclaims(void) { return true; }
void lfp_grace_fork_prepare(void) { urcu_bp_before_fork(); }
void lfp_grace_fork_parent(void) { urcu_bp_after_fork_parent(); }

/* In the child only the forking thread is left: the counted sections of
 * the others ended with them, and so did a wait that held wait_lock (not
 * the forking thread's: fork() is not called from inside a wait). */
void lfp_grace_fork_child(void)
{
	urcu_bp_after_fork_child();
	pthread_mutex_init(&wait_lock, NULL);
	counted_readers[0] = counted_readers[1] = 0;	/* one thread left */
	if (counted_depth)
		counted_readers[counted_in] = 1;
}

void lfp_grace_register(void)
{
	if (!registered && (counted < LFP_GRACE_COUNTED || counted_depth))
		return;
	urcu_bp_register_thread();	/* a TLS test when registered */
	registered = true;
}

/* Enter a section; may_register: the caller holds no library lock. */
static void enter(bool may_register)
{
	inside();
	if (may_register)
		lfp_grace_register();
	if (registered && !counted_depth) {
		urcu_bp_read_lock();
		return;
	}
	if (counted < LFP_GRACE_COUNTED)
		counted++;
	if (counted_depth++)
		return;		/* inside its outermost section's count */
	for (;;) {
		uint64_t ph = lfp_load_u64_sc(&phase);
		counted_in = (uint8_t)(ph & 1);
		lfp_faa_u64_sc(&counted_readers[counted_in], 1);
		if (lfp_load_u64_sc(&phase) == ph)
			return;
		lfp_faa_u64_sc(&counted_readers[counted_in], (uint64_t)-1);
	}
}

void lfp_grace_enter(void) { enter(true); }
void lfp_grace_enter_locked(void) { enter(false); }

#endif
