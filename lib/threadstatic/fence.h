/* SPDX-License-Identifier: MIT */
/*
 * fence.h - the heavy side of ThreadStatic's asymmetric fences (steal.c):
 * one call that puts a full memory barrier into every running thread of the
 * process and aborts every restartable sequence in flight, so that the
 * owners' fast paths need none (liburcu's urcu-memb and tcmalloc's per-CPU
 * drain pay the same way).
 */
#ifndef LFP_FENCE_H
#define LFP_FENCE_H

#include <stdbool.h>

/* Register this process for membarrier once (any thread, any time; later
 * calls return at once).  Whether restartable sequences can be fenced:
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ registered.  A per-CPU pool runs its
 * rseq fast path only when this is true, else its fallback. */
bool lfp_fence_init(void);

/*
 * Return only when every thread of the process that was running when the
 * call began has executed a full memory barrier (or was not running, a
 * context switch being one), and, when lfp_fence_init() said true, every
 * rseq critical section in flight has been aborted.  Order: membarrier
 * PRIVATE_EXPEDITED_RSEQ, else PRIVATE_EXPEDITED, else an mprotect() that
 * makes the kernel send a TLB shootdown to every CPU running the process
 * (folly's asymmetricHeavyBarrier fallback).  Slow: microseconds.
 */
void lfp_fence_heavy(void);

/* Which of the three lfp_fence_heavy uses: "membarrier-rseq",
 * "membarrier" or "mprotect". */
const char *lfp_fence_kind(void);

#endif
