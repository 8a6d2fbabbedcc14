/* SPDX-License-Identifier: MIT */
/*
 * grace.c - grace periods (grace.h) over liburcu-bp.
 */
#include "grace.h"

#ifdef LFPOOL_TSAN

void lfp_grace_enter(void) {}
void lfp_grace_register(void) {}
void lfp_grace_enter_locked(void) {}
void lfp_grace_leave(void) {}
void lfp_grace_wait(void) {}
bool lfp_grace_reclaims(void) { return false; }
void lfp_grace_fork_prepare(void) {}
void lfp_grace_fork_parent(void) {}
void lfp_grace_fork_child(void) {}

#else

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
 * sections instead add 1 to counted_readers while they run (a
 * sequentially consistent add, before the section reads anything; a
 * slow path's cost, never a fast path's), and lfp_grace_wait waits for
 * both liburcu-bp's readers and counted_readers to reach 0 (loaded after
 * synchronize_rcu's full barriers: a plain Dekker with the readers' add).
 * Only threads young in this library count, so the word is rarely
 * contended.  Unlike liburcu-bp's phased counters it has no phase: a wait
 * lasts until it sees no counted section at all, so new threads whose
 * first sections overlap back to back (hundreds of ns each) could hold a
 * trim's wait for as long as they keep coming.  After that many sections a
 * thread registers at its next point that holds no lock (lfp_grace_register
 * or an unlocked lfp_grace_enter) and uses liburcu-bp from then on.
 * A thread that exits before registering makes no registration call.
 */
#define LFP_GRACE_COUNTED 8u

static uint64_t counted_readers;	/* threads inside a counted section */
/* Whether the thread uses liburcu-bp (it is, or was until liburcu's key
 * destructor ran at thread exit, registered); its counted sections so far
 * (saturating at LFP_GRACE_COUNTED), and how deep it is in one. */
static __thread bool registered __attribute__((tls_model("initial-exec")));
static __thread uint8_t counted __attribute__((tls_model("initial-exec")));
static __thread uint32_t counted_depth __attribute__((tls_model("initial-exec")));

void lfp_grace_leave(void)
{
	if (counted_depth) {
		counted_depth--;
		lfp_faa_u64_sc(&counted_readers, (uint64_t)-1);
	} else {
		urcu_bp_read_unlock();
	}
}

void lfp_grace_wait(void)
{
	urcu_bp_synchronize_rcu();
	while (lfp_load_u64_sc(&counted_readers) != 0)
		sched_yield();
}

bool lfp_grace_reclaims(void) { return true; }
void lfp_grace_fork_prepare(void) { urcu_bp_before_fork(); }
void lfp_grace_fork_parent(void) { urcu_bp_after_fork_parent(); }

/* In the child only the forking thread is left: the counted sections of
 * the others ended with them. */
void lfp_grace_fork_child(void)
{
	urcu_bp_after_fork_child();
	lfp_faa_u64_sc(&counted_readers, (uint64_t)counted_depth - lfp_load_u64_sc(&counted_readers));
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
	if (may_register)
		lfp_grace_register();
	if (registered && !counted_depth) {
		urcu_bp_read_lock();
		return;
	}
	if (counted < LFP_GRACE_COUNTED)
		counted++;
	counted_depth++;
	lfp_faa_u64_sc(&counted_readers, 1);
}

void lfp_grace_enter(void) { enter(true); }
void lfp_grace_enter_locked(void) { enter(false); }

#endif
