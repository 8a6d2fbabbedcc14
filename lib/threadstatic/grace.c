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

#include <urcu/urcu-bp.h>

#include "debug.h"

/* Whether the thread called lfp_grace_register (for the debug check only:
 * liburcu's own flag is not public API, and it is cleared at thread exit,
 * where lfp_grace_register registers again). */
static __thread bool registered __attribute__((tls_model("initial-exec")));

void lfp_grace_enter(void) { urcu_bp_read_lock(); }
void lfp_grace_leave(void) { urcu_bp_read_unlock(); }
void lfp_grace_wait(void) { urcu_bp_synchronize_rcu(); }
bool lfp_grace_reclaims(void) { return true; }
void lfp_grace_fork_prepare(void) { urcu_bp_before_fork(); }
void lfp_grace_fork_parent(void) { urcu_bp_after_fork_parent(); }
void lfp_grace_fork_child(void) { urcu_bp_after_fork_child(); }

void lfp_grace_register(void)
{
	urcu_bp_register_thread();	/* a TLS test when registered */
	registered = true;
}

void lfp_grace_enter_locked(void)
{
	LFP_ASSERT(registered);
	urcu_bp_read_lock();
}

#endif
