/* SPDX-License-Identifier: MIT */
/*
 * stack.h - the ABA-safe Treiber stack of object indices: every free list
 * of the library (the Concurrent pool's free stack, a core's raw stack,
 * the depot's magazines and loose objects).
 *
 * The head and the one-element push and pop steps are those of
 * lfpool/impl/tagged_stack.h, which says why the stack is correct; the inline
 * lfpool_concurrent_get and _put run the same steps on a Concurrent
 * pool's free stack, whose head is the first member of the pool's public
 * view.  Here: the retries (stack.c), chains, taking the whole stack or
 * part of it, counting, single-owner versions, and the elimination array.
 *
 * Contract in the name: _mpmc calls may run concurrently with each other on
 * any number of threads; _st calls are for a stack one thread owns.
 */
#ifndef LFP_STACK_H
#define LFP_STACK_H

#include "atomic.h"
#include "lfpool/impl/tagged_stack.h"
#include "slab.h"

/* A head read or to be written (top, tag). */
typedef struct lfpool_stack_head_ lfp_head;

/* A stack on a cache line of its own; its head is the public one. */
struct lfp_stack {
	lfp_head head;
} __attribute__((aligned(64)));

_Static_assert(LFPOOL_STACK_NIL_ == LFP_NIL, "one empty index");

/* The head after a CAS from old that installs idx on top. */
static inline lfp_head lfp_stack_next_head(lfp_head old, uint32_t idx)
{
	lfp_head h;
	h.top = idx;
	h.tag = old.tag + LFPOOL_STACK_TAG_STEP_;
	return h;
}

/* The top index of a head. */
static inline uint32_t lfp_stack_top(lfp_head head) { return (uint32_t)head.top; }

/* The head for a CAS loop: lfpool_stack_load_ (tag, then top, acquire). */
static inline lfp_head lfp_stack_load(const struct lfp_stack *st)
{
	return lfpool_stack_load_(&st->head);
}

static inline void lfp_stack_init(struct lfp_stack *st)
{
	st->head.top = LFP_NIL;
	st->head.tag = 0;
}

/*
 * The push and the pop below make one attempt inline and leave the retries
 * (backoff, CAS again) to a call: an uncontended operation then runs a
 * short path that needs few registers.  The first attempt and every retry
 * are the same step of lfpool/impl/tagged_stack.h.
 */

/* The retries of a push whose first attempt failed on old (stack.c). */
void lfp_stack_push_contended_mpmc(struct lfp_stack *st, uint32_t *last_link, uint32_t first,
				   lfp_head old);

/*
 * Push the chain that starts at first and whose last node's link word is
 * last_link; any thread.  The link word's address does not change between
 * attempts, so the caller computes it once (a put knows it from the
 * object's slab).
 */
/* Model: stress/model/aba.pml, steps U1-U3. */
static inline void lfp_stack_push_link_mpmc(struct lfp_stack *st, uint32_t *last_link, uint32_t first)
{
	lfp_head old = lfp_stack_load(st);
	if (LFPOOL_UNLIKELY(!lfpool_stack_push_step_(&st->head, last_link, first, &old)))
		lfp_stack_push_contended_mpmc(st, last_link, first, old);
}

/* Push the chain first..last (linked through their link words); any thread. */
static inline void lfp_stack_push_chain_mpmc(struct lfp_stack *st, const struct lfp_slabs *s,
					     uint32_t first, uint32_t last)
{
	lfp_stack_push_link_mpmc(st, lfp_slabs_link(s, last), first);
}

/* Push one index; any thread. */
static inline void lfp_stack_push_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t idx)
{
	lfp_stack_push_chain_mpmc(st, s, idx, idx);
}

/*
 * One attempt to pop on the head *old (s->off_bits in ob); true when done:
 * the stack was empty, or the CAS took the top index (*slotp then its
 * slab's slot) -- either way the result is lfp_stack_top(*old).  False
 * when the CAS failed (*old is then the current head).  The top's link
 * word is found through the slab directory: the slot looked up for it is
 * the caller's way to the object too.
 */
/* Model: stress/model/aba.pml, steps O2-O3 (its control drops the tag). */
static inline bool lfp_stack_pop_step_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t ob,
					   lfp_head *old, struct lfp_slab_slot **slotp)
{
	uint32_t idx = lfp_stack_top(*old);
	if (idx == LFP_NIL)
		return true;
	LFP_ASSERT(lfp_slabs_index_ok(s, idx));
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, idx >> ob);
	if (!lfpool_stack_pop_step_(&st->head, lfp_slot_link(slot, lfp_slabs_off(idx, ob)), old))
		return false;
	*slotp = slot;
	return true;
}

/* The retries of a pop whose first attempt failed on old (stack.c). */
uint32_t lfp_stack_pop_contended_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, lfp_head old,
				      struct lfp_slab_slot **slotp);

/*
 * Pop one index, LFP_NIL when empty; any thread.  *slotp receives the slot
 * of the popped index's slab (looked up anyway for its link), so that the
 * caller finds the object without a second directory walk.
 */
/* Model: stress/model/aba.pml, steps O1-O3. */
static inline uint32_t lfp_stack_pop_at_mpmc(struct lfp_stack *st, const struct lfp_slabs *s,
					     struct lfp_slab_slot **slotp)
{
	const uint32_t ob = s->off_bits;	/* before the barriers of the loads */
	lfp_head old = lfp_stack_load(st);
	if (LFPOOL_LIKELY(lfp_stack_pop_step_mpmc(st, s, ob, &old, slotp)))
		return lfp_stack_top(old);
	return lfp_stack_pop_contended_mpmc(st, s, old, slotp);
}

/* Pop one index, LFP_NIL when empty; any thread. */
static inline uint32_t lfp_stack_pop_mpmc(struct lfp_stack *st, const struct lfp_slabs *s)
{
	struct lfp_slab_slot *slot;
	return lfp_stack_pop_at_mpmc(st, s, &slot);
}

/* Take the whole stack as a private chain (LFP_NIL when empty); any thread. */
static inline uint32_t lfp_stack_pop_all_mpmc(struct lfp_stack *st)
{
	/* acquire (load and CAS), paired with the release CAS of
	 * lfpool_stack_push_step_: every link of the chain taken */
	lfp_head old = lfp_stack_load(st);
	while (lfp_stack_top(old) != LFP_NIL && !lfpool_stack_cas_(&st->head, &old, LFP_NIL))
		;
	return lfp_stack_top(old);
}

/* Single-owner versions: the same stack, plain accesses. */
static inline void lfp_stack_push_chain_st(struct lfp_stack *st, const struct lfp_slabs *s,
					   uint32_t first, uint32_t last)
{
	*lfp_slabs_link(s, last) = lfp_stack_top(st->head);
	st->head = lfp_stack_next_head(st->head, first);
}

static inline uint32_t lfp_stack_pop_st(struct lfp_stack *st, const struct lfp_slabs *s)
{
	uint32_t idx = lfp_stack_top(st->head);
	if (idx != LFP_NIL)
		st->head = lfp_stack_next_head(st->head, *lfp_slabs_link(s, idx));
	return idx;
}

static inline uint32_t lfp_stack_pop_all_st(struct lfp_stack *st)
{
	uint32_t idx = lfp_stack_top(st->head);
	st->head = lfp_stack_next_head(st->head, LFP_NIL);
	return idx;
}


/*
 * Elimination (Hendler, Shavit and Yerushalmi, "A Scalable Lock-free Stack
 * Algorithm", SPAA 2004): a push and a pop whose CAS on the head failed
 * meet in a slot of a small array beside the stack, and the pop takes the
 * push's index without touching the head.  A push and a pop that cancel
 * each other leave the stack as it was, so the pair is linearized at the
 * exchange, the push just before the pop.  stack.c has the protocol and
 * why it is correct; stress/model/elim.pml checks it.
 *
 * A slot is a pair as the head is: .lo what waits there, .hi a tag that
 * every change of the slot increments (the parker recognizes its own
 * parking by it: see stack.c, "Why the tag").  Kinds of .lo:
 */
#define LFP_ELIM_FREE	0ull		/* nobody */
#define LFP_ELIM_PUT	(1ull << 32)	/* | idx: a push offers idx */
#define LFP_ELIM_GET	(2ull << 32)	/* a pop waits for an index */
#define LFP_ELIM_GIVEN	(3ull << 32)	/* | idx: a push gave idx to the pop that waits */
#define LFP_ELIM_KIND(lo) ((lo) & (3ull << 32))
#define LFP_ELIM_SLOTS	3

#ifdef LFPOOL_STRESS_NO_ELIM_TAG
# define LFP_ELIM_TAG_STEP 0ull	/* negative control only: elim.pml -DNEGATIVE */
#else
# define LFP_ELIM_TAG_STEP 1ull
#endif

/*
 * The array and the counters of the calls that use it: one cache line,
 * which the contended calls visit anyway (a failed CAS on the head is
 * what sends them here), all-zero when free.
 */
struct lfp_elim {
	lfp_pair slot[LFP_ELIM_SLOTS];
	uint64_t eliminated;	/* operations done by an exchange, two per exchange */
	uint64_t cas_failed;	/* failed CAS on the head by the calls below */
} __attribute__((aligned(64)));

/* fork()'s child: every slot free but the one the forking thread is
 * parked in (a fork from a signal handler: its call goes on).  A parked
 * call of another thread is gone; its index stays out, as its other
 * objects do. */
void lfp_elim_reset(struct lfp_elim *e);

/* The retries of a push whose first attempt failed on *old, visiting e
 * between attempts when single (one index, first) instead of only waiting;
 * every failed CAS is counted in e->cas_failed. */
void lfp_stack_push_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, uint32_t *last_link, uint32_t first,
			      bool single, lfp_head old);

/* The retries of a pop whose first attempt failed on *old, visiting e
 * between attempts; the index taken from the stack or from a push in e
 * (LFP_NIL: the stack was empty), and its slab's slot in *slotp. */
uint32_t lfp_stack_pop_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, const struct lfp_slabs *s,
				 lfp_head old, struct lfp_slab_slot **slotp);

/* lfp_stack_push_link_mpmc, whose retries go through e. */
static inline void lfp_stack_push_link_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, uint32_t *last_link,
						 uint32_t first, bool single)
{
	lfp_head old = lfp_stack_load(st);
	if (LFPOOL_UNLIKELY(!lfpool_stack_push_step_(&st->head, last_link, first, &old)))
		lfp_stack_push_elim_mpmc(st, e, last_link, first, single, old);
}

/* lfp_stack_pop_at_mpmc, whose retries go through e. */
static inline uint32_t lfp_stack_pop_at_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e,
						  const struct lfp_slabs *s, struct lfp_slab_slot **slotp)
{
	const uint32_t ob = s->off_bits;
	lfp_head old = lfp_stack_load(st);
	if (LFPOOL_LIKELY(lfp_stack_pop_step_mpmc(st, s, ob, &old, slotp)))
		return lfp_stack_top(old);
	return lfp_stack_pop_elim_mpmc(st, e, s, old, slotp);
}

/* Pop up to max indices with one CAS; returns how many, the first in
 * *first, the rest linked after it (the last one's link is not ours).
 * Each failed CAS halves max (down to 1): a contended call returns
 * fewer, and after floor(log2(max)) failures it makes a single pop's
 * attempts (stack.c says why). */
uint32_t lfp_stack_pop_upto_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t max,
				 uint32_t *first);

/* How many entries st holds, at most max; exact when it holds still.  Any
 * thread, alongside the other _mpmc calls. */
uint64_t lfp_stack_count_mpmc(const struct lfp_stack *st, const struct lfp_slabs *s, uint64_t max);

/* Last index of a private chain, and its length. */
uint32_t lfp_chain_last(const struct lfp_slabs *s, uint32_t first, size_t *len);

#endif
