/* SPDX-License-Identifier: MIT */
/*
 * stack.h - the ABA-safe Treiber stack of object indices.
 *
 * The head is one 64-bit word: a 32-bit index (LFP_NIL when empty) and a
 * 32-bit tag that every successful CAS increments.  A pop that read head
 * (i, t) and was delayed while i was popped and pushed back finds (i, t+k)
 * and fails: the ABA problem cannot arise until the tag wraps, i.e. after
 * 2^32 changes of the head between one thread's load and its CAS.  Links live
 * in the slabs' side data (see slab.h), so a delayed pop reads valid memory.
 * A plain 64-bit CAS suffices, which keeps the TSan build identical to the
 * shipped one (ck's double-width ck_stack_pop_mpmc has no builtin twin).
 *
 * Contract in the name: _mpmc calls may run concurrently with each other on
 * any number of threads; _st calls are for a stack one thread owns.
 */
#ifndef LFP_STACK_H
#define LFP_STACK_H

#include "atomic.h"
#include "slab.h"

struct lfp_stack {
	uint64_t head;	/* tag << 32 | index */
} __attribute__((aligned(64)));

#define LFP_STACK_EMPTY ((uint64_t)LFP_NIL)

#ifdef LFPOOL_STRESS_NO_ABA_TAG
# define LFP_TAG_STEP 0ull	/* negative control only: ABA-unsafe */
#else
# define LFP_TAG_STEP (1ull << 32)
#endif

#ifdef LFPOOL_STRESS
/* Stress builds only: called between reading the head and the CAS. */
extern void (*lfp_stress_yield)(void);
extern __thread uint64_t lfp_stress_cas_retries;
# define LFP_STRESS_WINDOW() do { if (lfp_stress_yield) lfp_stress_yield(); } while (0)
# define LFP_STRESS_RETRY() (lfp_stress_cas_retries++)
#else
# define LFP_STRESS_WINDOW() ((void)0)
# define LFP_STRESS_RETRY() ((void)0)
#endif

static inline uint64_t lfp_stack_next_head(uint64_t old, uint32_t idx)
{
	return ((old & ~(uint64_t)UINT32_MAX) + LFP_TAG_STEP) | idx;
}

static inline void lfp_stack_init(struct lfp_stack *st) { st->head = LFP_STACK_EMPTY; }

/* Push the chain first..last (linked through their link words); any thread. */
static inline void lfp_stack_push_chain_mpmc(struct lfp_stack *st, const struct lfp_slabs *s,
					     uint32_t first, uint32_t last)
{
	uint64_t old = lfp_load_u64_rlx(&st->head);
	lfp_backoff b = LFP_BACKOFF_INIT;
	for (;;) {
		lfp_store_u32_rlx(lfp_slabs_link(s, last), (uint32_t)old);
		LFP_STRESS_WINDOW();
		/* release: the link and the pusher's writes to the objects, for
		 * the acquire of the pop that takes them (lfp_stack_pop_mpmc,
		 * lfp_stack_pop_all_mpmc, lfp_stack_pop_upto_mpmc) */
		if (lfp_cas_u64_acqrel(&st->head, &old, lfp_stack_next_head(old, first)))
			return;
		LFP_STRESS_RETRY();
		lfp_backoff_wait(&b);
	}
}

/* Push one index; any thread. */
static inline void lfp_stack_push_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t idx)
{
	lfp_stack_push_chain_mpmc(st, s, idx, idx);
}

/* Pop one index, LFP_NIL when empty; any thread. */
static inline uint32_t lfp_stack_pop_mpmc(struct lfp_stack *st, const struct lfp_slabs *s)
{
	/* acquire, paired with the release CAS of lfp_stack_push_chain_mpmc:
	 * the head node's link and the pusher's writes to the object */
	uint64_t old = lfp_load_u64_acq(&st->head);
	lfp_backoff b = LFP_BACKOFF_INIT;
	for (;;) {
		uint32_t idx = (uint32_t)old;
		if (idx == LFP_NIL)
			return LFP_NIL;
		uint32_t next = lfp_load_u32_rlx(lfp_slabs_link(s, idx));
		LFP_STRESS_WINDOW();
		/* acquire as the load above (a failed CAS reloads old); release
		 * for the next pop, which must see our link read done */
		if (lfp_cas_u64_acqrel(&st->head, &old, lfp_stack_next_head(old, next)))
			return idx;
		LFP_STRESS_RETRY();
		lfp_backoff_wait(&b);
	}
}

/* Take the whole stack as a private chain (LFP_NIL when empty); any thread. */
static inline uint32_t lfp_stack_pop_all_mpmc(struct lfp_stack *st)
{
	/* acquire (load and CAS), paired with the release CAS of
	 * lfp_stack_push_chain_mpmc: every link of the chain taken */
	uint64_t old = lfp_load_u64_acq(&st->head);
	while ((uint32_t)old != LFP_NIL &&
	       !lfp_cas_u64_acqrel(&st->head, &old, lfp_stack_next_head(old, LFP_NIL)))
		;
	return (uint32_t)old;
}

/* Single-owner versions: the same stack, plain accesses. */
static inline void lfp_stack_push_chain_st(struct lfp_stack *st, const struct lfp_slabs *s,
					   uint32_t first, uint32_t last)
{
	*lfp_slabs_link(s, last) = (uint32_t)st->head;
	st->head = lfp_stack_next_head(st->head, first);
}

static inline uint32_t lfp_stack_pop_st(struct lfp_stack *st, const struct lfp_slabs *s)
{
	uint32_t idx = (uint32_t)st->head;
	if (idx != LFP_NIL)
		st->head = lfp_stack_next_head(st->head, *lfp_slabs_link(s, idx));
	return idx;
}

static inline uint32_t lfp_stack_pop_all_st(struct lfp_stack *st)
{
	uint32_t idx = (uint32_t)st->head;
	st->head = lfp_stack_next_head(st->head, LFP_NIL);
	return idx;
}

/* Pop up to max indices with one CAS; returns how many, the first in
 * *first, the rest linked after it (the last one's link is not ours). */
uint32_t lfp_stack_pop_upto_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t max,
				 uint32_t *first);

/* Last index of a private chain, and its length. */
uint32_t lfp_chain_last(const struct lfp_slabs *s, uint32_t first, size_t *len);

#endif
