/* SPDX-License-Identifier: MIT */
/*
 * grace.c - grace periods (grace.h) over liburcu-bp.
 */
#include "grace.h"

#ifdef LFPOOL_TSAN

void lfp_grace_enter(void) {}
void lfp_grace_leave(void) {}
void lfp_grace_wait(void) {}
bool lfp_grace_reclaims(void) { return false; }

#else

#include <urcu/urcu-bp.h>

void lfp_grace_enter(void) { urcu_bp_read_lock(); }
void lfp_grace_leave(void) { urcu_bp_read_unlock(); }
void lfp_grace_wait(void) { urcu_bp_synchronize_rcu(); }
bool lfp_grace_reclaims(void) { return true; }

#endif
