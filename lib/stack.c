/* SPDX-License-Identifier: MIT */
/*
 * stack.c - chain helpers and the stress-build hooks of the index stack.
 *
 * Why the stack in stack.h is correct:
 *  - Linearizability: push and pop each take effect at their successful CAS
 *    on the head word; a CAS that succeeds saw the head exactly as it was
 *    when the link (push) or next (pop) was read.
 *  - ABA: the head carries a tag that every successful CAS increments, so a
 *    CAS based on a stale read fails even when the same index is back on
 *    top.  The tag is 32 bits wide: wrap-around needs 2^32 head changes
 *    inside one thread's load-to-CAS window.  (ponyc#1319 was a tag too
 *    narrow; iceoryx#2351 a tag not refreshed after a failed CAS: here a
 *    failed CAS returns the current head, tag included, and the next attempt
 *    builds on that.)
 *  - Memory safety: a pop may read the link of a node that another thread
 *    popped meanwhile.  Links live in side data that is never freed before
 *    the pool, so that read is of valid memory; its value is discarded when
 *    the CAS fails.
 *  - Visibility: a push's CAS is a release of the link word and of the
 *    pusher's writes to the object; a pop's acquire load of the head (and
 *    its acquire CAS) makes both visible to the popper.
 */
#include "stack.h"

#ifdef LFPOOL_STRESS
void (*lfp_stress_yield)(void);
__thread uint64_t lfp_stress_cas_retries;
#endif

uint32_t lfp_chain_last(const struct lfp_slabs *s, uint32_t first, size_t *len)
{
	size_t n = 0;
	uint32_t last = LFP_NIL;
	for (uint32_t i = first; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(s, i))) {
		last = i;
		n++;
	}
	if (len)
		*len = n;
	return last;
}

/*
 * Pop up to max entries of st with one CAS; returns how many, the first in
 * *first (the rest follow through their links, and the link of the last one
 * is not ours to follow).  The walk may read links that change under it,
 * but a successful CAS on the tagged head proves that no push or pop took
 * effect since the head was read: the nodes walked were on the stack the
 * whole time, and a stacked node's link is never written.  A walk that read
 * a changing link is bounded by max and ends in a failed CAS; every link
 * word lives in side data, so each read is of valid memory.
 */
uint32_t lfp_stack_pop_upto_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t max,
				  uint32_t *first)
{
	/* acquire (load and CAS), paired with the release CAS of
	 * lfp_stack_push_chain_mpmc: the links walked below */
	uint64_t old = lfp_load_u64_acq(&st->head);
	lfp_backoff b = LFP_BACKOFF_INIT;
	for (;;) {
		uint32_t top = (uint32_t)old, n = 0, next = top;
		if (top == LFP_NIL)
			return 0;
		while (n < max && next != LFP_NIL) {
			next = lfp_load_u32_rlx(lfp_slabs_link(s, next));
			n++;
		}
		LFP_STRESS_WINDOW();
		if (lfp_cas_u64_acqrel(&st->head, &old, lfp_stack_next_head(old, next))) {
			*first = top;
			return n;
		}
		LFP_STRESS_RETRY();
		lfp_backoff_wait(&b);
	}
}
