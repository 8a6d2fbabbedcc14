/* SPDX-License-Identifier: MIT */
/*
 * grace.h - grace periods for the side data of ThreadStatic slabs.
 *
 * A slab's side data (link words, state bytes) may be read by a thread
 * that holds a stale stack head naming one of its objects (its tagged CAS
 * then fails, but the read happens).  Every ThreadStatic slow path that
 * pops a stack runs inside lfp_grace_enter/leave (liburcu's bulletproof
 * flavour: no registration, a thread-local counter, no fence), and trim
 * frees the side data of slabs it gave back only after lfp_grace_wait()
 * (synchronize_rcu: every section that began before has ended).  The get
 * and put fast paths never enter one.  A thread inside a section must not
 * wait for a lock that a trim holds while it waits: trim waits holding
 * none.
 *
 * The TSan build keeps side data until destroy (TSan cannot see liburcu's
 * ordering, so it would report the free): lfp_grace_reclaims() is false.
 */
#ifndef LFP_GRACE_H
#define LFP_GRACE_H

#include <stdbool.h>

void lfp_grace_enter(void);
void lfp_grace_leave(void);
void lfp_grace_wait(void);
/* Whether side data may be freed after lfp_grace_wait(). */
bool lfp_grace_reclaims(void);

#endif
