/* SPDX-License-Identifier: MIT */
/*
 * stack.h - the ABA-safe Treiber stack of object indices.
 *
 * The head is a 16-byte pair changed by one double-width CAS: the top index
 * (LFP_NIL when empty) and a 64-bit tag that every successful CAS
 * increments.  A pop that read head (i, t) and was delayed while i was
 * popped and pushed back finds (i, t+k) and fails: a stale CAS can succeed
 * only after exactly 2^64 changes of the head between one thread's load and
 * its CAS (centuries at a change per nanosecond; the 32-bit tag this
 * replaces wrapped in about 40 s of such churn).  Links live in the slabs'
 * side data (see slab.h), so a delayed pop reads valid memory.  The TSan
 * build runs the same CAS as a 128-bit __atomic (lib/atomic.h), so it
 * checks the shipped algorithm.
 *
 * Contract in the name: _mpmc calls may run concurrently with each other on
 * any number of threads; _st calls are for a stack one thread owns.
 *
 * A second copy of the one-element push and pop runs inline in users' code:
 * lfpool_concurrent_get and _put (include/lfpool/concurrent.h), on a
 * Concurrent pool's free stack, whose head they see as the first 16 bytes of
 * struct lfpool_concurrent_fast (lib/concurrent.c asserts it).  They take the
 * same steps with the same orders as lfp_stack_pop_step_mpmc and
 * lfp_stack_push_step_mpmc below, the same stress hooks (stress_hooks.h:
 * LFP_STRESS_WINDOW, LFP_STRESS_RETRY, LFP_YIELD, LFP_TAG_STEP, and their
 * twins LFPOOL_CONC_*_ there) and the same two builds of the
 * CAS (cmpxchg16b; __atomic under TSan): a change to either copy is a change
 * to both.
 */
#ifndef LFP_STACK_H
#define LFP_STACK_H

#include "atomic.h"
#include "slab.h"

struct lfp_stack {
	lfp_pair head;	/* .lo: top index (LFP_NIL: empty); .hi: tag */
} __attribute__((aligned(64)));

/* The stress programs' hooks (stress_hooks.h): the CAS window, the count
 * of failed CAS, and the tag step of the negative control. */
#ifndef LFP_TAG_STEP
# define LFP_TAG_STEP 1ull
#endif
#ifndef LFP_STRESS_WINDOW
# define LFP_STRESS_WINDOW() ((void)0)
# define LFP_STRESS_RETRY() ((void)0)
#endif

/* The head after a CAS from old that installs idx on top. */
static inline lfp_pair lfp_stack_next_head(lfp_pair old, uint32_t idx)
{
	lfp_pair h;
	h.lo = idx;
	h.hi = old.hi + LFP_TAG_STEP;
	return h;
}

/* The top index of a head. */
static inline uint32_t lfp_stack_top(lfp_pair head) { return (uint32_t)head.lo; }

/*
 * Read the head for a CAS loop, tag first, then index, both acquire: the
 * index's acquire makes the link of the node it names (written before the
 * push that published it) visible.  The two loads may see different heads;
 * the CAS then fails, since a tag names exactly one head.
 */
static inline lfp_pair lfp_pair_load(const lfp_pair *p)
{
	lfp_pair h;
	h.hi = lfp_load_u64_acq(&p->hi);
	h.lo = lfp_load_u64_acq(&p->lo);
	return h;
}

static inline lfp_pair lfp_stack_load(const struct lfp_stack *st)
{
	return lfp_pair_load(&st->head);
}

static inline void lfp_stack_init(struct lfp_stack *st)
{
	st->head.lo = LFP_NIL;
	st->head.hi = 0;
}

/*
 * The push and the pop below make one attempt inline and leave the retries
 * (backoff, CAS again) to a call: an uncontended operation then runs a
 * short path that needs few registers.  Both the first attempt and every
 * retry are the same _step function.
 */

/*
 * One attempt to push the chain that starts at first and whose last node's
 * link word is last_link, on the head *old; true when the CAS took it,
 * false when it failed (*old is then the current head).
 */
/* Model: stress/model/aba.pml, steps U2-U3. */
static inline bool lfp_stack_push_step_mpmc(struct lfp_stack *st, uint32_t *last_link, uint32_t first,
					    lfp_pair *old)
{
	lfp_store_u32_rlx(last_link, lfp_stack_top(*old));
	LFP_STRESS_WINDOW();
	/* release: the link and the pusher's writes to the objects, for the
	 * acquire of the pop that takes them (lfp_stack_pop_step_mpmc,
	 * lfp_stack_pop_all_mpmc, lfp_stack_pop_upto_mpmc) */
	if (lfp_cas_pair_acqrel(&st->head, old, lfp_stack_next_head(*old, first)))
		return true;
	LFP_STRESS_RETRY();
	return false;
}

/* The retries of a push whose first attempt failed on *old (stack.c). */
void lfp_stack_push_contended_mpmc(struct lfp_stack *st, uint32_t *last_link, uint32_t first,
				   lfp_pair old);

/*
 * Push the chain that starts at first and whose last node's link word is
 * last_link; any thread.  The link word's address does not change between
 * attempts, so the caller computes it once (a put knows it from the
 * object's slab).
 */
/* Model: stress/model/aba.pml, steps U1-U3. */
static inline void lfp_stack_push_link_mpmc(struct lfp_stack *st, uint32_t *last_link, uint32_t first)
{
	lfp_pair old = lfp_stack_load(st);
	if (LFPOOL_UNLIKELY(!lfp_stack_push_step_mpmc(st, last_link, first, &old)))
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
 * when the CAS failed (*old is then the current head).
 */
/* Model: stress/model/aba.pml, steps O2-O3 (its control drops the tag). */
static inline bool lfp_stack_pop_step_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t ob,
					   lfp_pair *old, struct lfp_slab_slot **slotp)
{
	uint32_t idx = lfp_stack_top(*old);
	if (idx == LFP_NIL)
		return true;
	LFP_ASSERT(lfp_slabs_index_ok(s, idx));
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, idx >> ob);
	/* relaxed: ordered by the acquire that read idx (the load, or the
	 * failed CAS); a stale value only makes the CAS below fail */
	uint32_t next = lfp_load_u32_rlx(lfp_slot_link(slot, lfp_slabs_off(idx, ob)));
	LFP_STRESS_WINDOW();
	/* acquire as the load (a failed CAS reloads old); release for the
	 * next pop, which must see our link read done */
	if (lfp_cas_pair_acqrel(&st->head, old, lfp_stack_next_head(*old, next))) {
		*slotp = slot;
		return true;
	}
	LFP_STRESS_RETRY();
	return false;
}

/* The retries of a pop whose first attempt failed on *old (stack.c). */
uint32_t lfp_stack_pop_contended_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, lfp_pair old,
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
	/* acquire, paired with the release CAS of lfp_stack_push_step_mpmc:
	 * the head node's link and the pusher's writes to the object */
	lfp_pair old = lfp_stack_load(st);
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
	 * lfp_stack_push_chain_mpmc: every link of the chain taken */
	lfp_pair old = lfp_stack_load(st);
	while (lfp_stack_top(old) != LFP_NIL &&
	       !lfp_cas_pair_acqrel(&st->head, &old, lfp_stack_next_head(old, LFP_NIL)))
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
			      bool single, lfp_pair old);

/* The retries of a pop whose first attempt failed on *old, visiting e
 * between attempts; the index taken from the stack or from a push in e
 * (LFP_NIL: the stack was empty), and its slab's slot in *slotp. */
uint32_t lfp_stack_pop_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, const struct lfp_slabs *s,
				 lfp_pair old, struct lfp_slab_slot **slotp);

/* lfp_stack_push_link_mpmc, whose retries go through e. */
static inline void lfp_stack_push_link_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, uint32_t *last_link,
						 uint32_t first, bool single)
{
	lfp_pair old = lfp_stack_load(st);
	if (LFPOOL_UNLIKELY(!lfp_stack_push_step_mpmc(st, last_link, first, &old)))
		lfp_stack_push_elim_mpmc(st, e, last_link, first, single, old);
}

/* lfp_stack_pop_at_mpmc, whose retries go through e. */
static inline uint32_t lfp_stack_pop_at_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e,
						  const struct lfp_slabs *s, struct lfp_slab_slot **slotp)
{
	const uint32_t ob = s->off_bits;
	/* acquire, paired with the release CAS of lfp_stack_push_step_mpmc */
	lfp_pair old = lfp_stack_load(st);
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
