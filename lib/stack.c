/* SPDX-License-Identifier: MIT */
/*
 * stack.c - the retries of the index stack's push and pop, its walks and
 * the elimination array.
 *
 * Why the stack is correct: lfpool/impl/tagged_stack.h, where its head and its
 * one-element steps are.  The reasons behind two of its choices (the
 * figures are in NEWS):
 *  - The tag is 64 bits wide, beside the index in a double-width CAS.
 *    (ponyc#1319 was a tag too narrow; a 32-bit tag wraps after 2^32
 *    changes, about 40 s of churn on one core.
 *    iceoryx#2351 was a tag not refreshed after a failed CAS: here a failed
 *    CAS returns the current head, tag included, and the next attempt
 *    builds on that.)
 *  - Why a push's CAS is the double-width one too, though a push needs no
 *    tag (ck_stack's push_mpmc is an 8-byte CAS of the pointer alone): a
 *    pop's CAS fails whenever a pop intervened, and also whenever a push
 *    did (its index is not on the stack, so after pushes alone the top is
 *    not the index the pop read); so a push that kept the tag and changed
 *    the index half with an 8-byte CAS would be as safe.  It is not
 *    cheaper where it matters: on AMD Zen 5 a pop's cmpxchg16b and a
 *    push's 8-byte lock cmpxchg on the same line back to back cost as
 *    much as two cmpxchg16b, and with the inline put changed so,
 *    Concurrent on one thread ran slower against ck_stack, not faster.
 *    Under TSan it would also need the 16-byte CAS in its place, as TSan
 *    emulates 16-byte atomics apart from 8-byte ones.  (A spinlock's pair,
 *    two xchg and two stores, costs a little less than two cmpxchg16b:
 *    why a get+put stays about 1.1x a spinlock pool's time on one thread,
 *    and no ABA-safe pair with a 64-bit tag found here does better.)
 */
#include "stack.h"

/* Retries after a failed first attempt (stack.h), with lfp_backoff_cas:
 * waits first, then attempts at once (atomic.h says why). */
void lfp_stack_push_contended_mpmc(struct lfp_stack *st, uint32_t *last_link, uint32_t first,
				   lfp_head old)
{
	lfp_backoff b = LFP_BACKOFF_INIT;
	do
		lfp_backoff_cas(&b);
	while (!lfpool_stack_push_step_(&st->head, last_link, first, &old));
}

uint32_t lfp_stack_pop_contended_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, lfp_head old,
				      struct lfp_slab_slot **slotp)
{
	const uint32_t ob = s->off_bits;
	lfp_backoff b = LFP_BACKOFF_INIT;
	do
		lfp_backoff_cas(&b);
	while (!lfp_stack_pop_step_mpmc(st, s, ob, &old, slotp));
	return lfp_stack_top(old);
}

/*
 * Elimination (stack.h).  A contended push or pop visits the array where
 * lfp_backoff_cas would only wait: the wait is the same (*b pauses, doubled
 * after each visit, so sized by the failures so far), spent parked in a
 * slot where a partner can find it.  After LFP_BACKOFF_CAS_LAST, as there,
 * attempts follow at once and the array is not visited.  A visit looks at
 * the first `range` slots (one after the first failure, one more after
 * each: more failures, more threads to meet), from a place of the thread's
 * own:
 *  - a partner waiting there (a pop meets PUT|i, a push meets GET): one
 *    CAS of that slot exchanges: the pop's makes it FREE and takes i, the
 *    push's makes it GIVEN|i;
 *  - else it parks in a FREE slot (CAS to PUT|i or GET), polls the slot
 *    for up to the wait, then withdraws with a CAS back to FREE.  The
 *    withdrawal fails only if a partner came: a push is then done (a pop
 *    took i), a pop finds GIVEN|j, which only it may change, takes j and
 *    frees the slot;
 *  - no slot free: it waits, as without the array.
 * Every change of a slot is a CAS on the pair, acq_rel: a push's parking
 * or giving releases its writes to the object (and the index's link) to
 * the pop whose taking CAS (or whose failed withdrawal, acquire) reads it.
 * An index is in one place at a time: the pusher's hands, a PUT or GIVEN
 * slot, or the popper's; each move is one CAS that checks it is there.
 *
 * Why the tag: a push parked PUT|i, a pop took i and pushed it again,
 * parked in the same slot: the slot reads PUT|i again.  Without the tag
 * the first push would take that for its own parking, withdraw it and push
 * i onto the stack, while the second push finds its parking gone and
 * returns, counted as eliminated, with i in no one's hands that returned:
 * a get at capacity then says ENOBUFS with i free.  With it, the first
 * push's withdrawal fails (it was taken: true) and the second finds its
 * own.  stress/model/elim.pml's negative control is this case.
 *
 * Bounded: a visit waits at most *b pauses (512 at most), withdrawal is
 * one CAS, and a pop that was given an index frees its slot with one CAS
 * that cannot fail; so a get or put is still lock-free (the head's CAS
 * loop), and no call waits on another that may not run.
 */
static __thread uint32_t elim_rng;
/* The slot this thread parks in (or is about to), for fork()'s child:
 * lfp_elim_reset keeps it, since the forking thread (from a signal
 * handler that interrupted its wait) goes on with its call there. */
static __thread lfp_pair *elim_mine;

/* A slot for a CAS: its tag, then what waits there, acquire (a torn read
 * only fails the CAS, which returns the slot whole). */
static inline lfp_pair elim_load(const lfp_pair *p)
{
	lfp_pair v;
	v.hi = lfp_load_u64_acq(&p->hi);
	v.lo = lfp_load_u64_acq(&p->lo);
	return v;
}

/* The slot after a change to lo. */
static inline lfp_pair elim_next(lfp_pair v, uint64_t lo)
{
	lfp_pair n;
	n.lo = lo;
	n.hi = v.hi + LFP_ELIM_TAG_STEP;
	return n;
}

static void elim_stall(unsigned wait)
{
	for (unsigned i = 0; i < wait; i++)
		lfp_stall();
}

/* Park `mine` in sl (last read as v) and wait up to `wait` pauses for a
 * partner; true when one came (a pop's index then in *got).  A slot taken
 * meanwhile: only the wait. */
static bool elim_park(lfp_pair *sl, lfp_pair v, uint64_t mine, unsigned wait, uint32_t *got)
{
	lfp_pair me = elim_next(v, mine);
	elim_mine = sl;
	bool met = false;
	if (!lfp_cas_pair_acqrel(sl, &v, me)) {
		elim_mine = NULL;
		elim_stall(wait);
		return false;
	}
	for (unsigned i = 0; i < wait; i++) {
		lfp_pair now = elim_load(sl);
		if (now.hi != me.hi || now.lo != me.lo)
			break;
		lfp_stall();
	}
	LFPOOL_STACK_WINDOW_();
	lfp_pair cur = me;
	if (lfp_cas_pair_acqrel(sl, &cur, elim_next(me, LFP_ELIM_FREE)))
		goto out;		/* withdrawn: nobody came */
	met = true;
	if (mine == LFP_ELIM_GET) {
		/* acquire (the failed CAS): the giver's writes to the object */
		LFP_ASSERT(LFP_ELIM_KIND(cur.lo) == LFP_ELIM_GIVEN);
		*got = (uint32_t)cur.lo;
		lfp_pair given = cur;
		bool freed = lfp_cas_pair_acqrel(sl, &given, elim_next(cur, LFP_ELIM_FREE));
		LFP_ASSERT(freed);	/* a GIVEN slot is its pop's alone */
		(void)freed;
	}
out:
	elim_mine = NULL;
	return met;
}

/* One visit (see above) of a push (mine PUT|i) or a pop (mine GET) to the
 * first `range` slots of e; true when it met a partner. */
static bool elim_visit(struct lfp_elim *e, unsigned range, uint64_t mine, unsigned wait, uint32_t *got)
{
	const uint64_t partner = mine == LFP_ELIM_GET ? LFP_ELIM_PUT : LFP_ELIM_GET;
	if (LFPOOL_UNLIKELY(elim_rng == 0))	/* a sequence per thread: its TLS address */
		elim_rng = (uint32_t)((uintptr_t)&elim_rng >> 6) | 1;
	const uint32_t start = (elim_rng = elim_rng * 1664525u + 1013904223u) >> 16;
	lfp_pair *park = NULL, park_v = { { 0, 0 } };
	for (unsigned k = 0; k < range; k++) {
		lfp_pair *sl = &e->slot[(start + k) % range];
		lfp_pair v = elim_load(sl);
		if (LFP_ELIM_KIND(v.lo) == partner) {
			LFPOOL_STACK_WINDOW_();
			uint64_t lo = mine == LFP_ELIM_GET ? LFP_ELIM_FREE : (LFP_ELIM_GIVEN | (uint32_t)mine);
			lfp_pair was = v;
			if (lfp_cas_pair_acqrel(sl, &v, elim_next(was, lo))) {
				if (mine == LFP_ELIM_GET)
					*got = (uint32_t)was.lo;
				lfp_faa_u64_rlx(&e->eliminated, 2);
				return true;
			}
		} else if (v.lo == LFP_ELIM_FREE && !park) {
			park = sl;
			park_v = v;
		}
	}
	if (park)
		return elim_park(park, park_v, mine, wait, got);
	elim_stall(wait);
	return false;
}

/* In place of lfp_backoff_cas(b) after the failed-th failed CAS: a visit
 * to e for mine (0: none, only the wait).  True when it met a partner. */
static bool elim_wait(struct lfp_elim *e, lfp_backoff *b, uint64_t failed, uint64_t mine, uint32_t *got)
{
	if (!mine || *b > LFP_BACKOFF_CAS_LAST) {
		lfp_backoff_cas(b);
		return false;
	}
	unsigned range = failed < LFP_ELIM_SLOTS ? (unsigned)failed : LFP_ELIM_SLOTS;
	bool met = elim_visit(e, range, mine, *b, got);
	*b <<= 1;
	return met;
}

void lfp_elim_reset(struct lfp_elim *e)
{
	for (unsigned k = 0; k < LFP_ELIM_SLOTS; k++) {
		if (&e->slot[k] == elim_mine)
			continue;
		lfp_pair v = elim_load(&e->slot[k]);
		lfp_store_u64_rlx(&e->slot[k].lo, LFP_ELIM_FREE);
		lfp_store_u64_rlx(&e->slot[k].hi, v.hi + 1);
	}
}

void lfp_stack_push_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, uint32_t *last_link, uint32_t first,
			      bool single, lfp_head old)
{
	lfp_backoff b = LFP_BACKOFF_INIT;
	uint64_t failed = 1;
	while (!elim_wait(e, &b, failed, single ? LFP_ELIM_PUT | first : 0, NULL) &&
	       !lfpool_stack_push_step_(&st->head, last_link, first, &old))
		failed++;
	lfp_faa_u64_rlx(&e->cas_failed, failed);
}

uint32_t lfp_stack_pop_elim_mpmc(struct lfp_stack *st, struct lfp_elim *e, const struct lfp_slabs *s,
				 lfp_head old, struct lfp_slab_slot **slotp)
{
	const uint32_t ob = s->off_bits;
	lfp_backoff b = LFP_BACKOFF_INIT;
	uint64_t failed = 1;
	uint32_t idx;
	for (;; failed++) {
		if (elim_wait(e, &b, failed, LFP_ELIM_GET, &idx)) {
			LFP_ASSERT(lfp_slabs_index_ok(s, idx));
			*slotp = lfp_slabs_slot(s, idx >> ob);
			break;
		}
		if (lfp_stack_pop_step_mpmc(st, s, ob, &old, slotp)) {
			idx = lfp_stack_top(old);
			break;
		}
	}
	lfp_faa_u64_rlx(&e->cas_failed, failed);
	return idx;
}

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
 * is not ours to follow).  A successful CAS on the tagged head proves that
 * no push or pop took effect since the head was read: the nodes walked were
 * on the stack the whole time, and a stacked node's link is never written.
 *
 * Following a link is where weak memory bites.  The head's acquire load
 * synchronizes with every push before it (each CAS on the head continues
 * the release sequence of the ones before), so the links of nodes that are
 * still stacked, and the side data of the slabs they name, are visible.
 * But a node popped and pushed again meanwhile may have a link written by
 * another thread with no order to ours: on ARMv8 or POWER the index read
 * from it may name a slab whose side-data pointers we do not see yet.  So
 * each link is read with acquire (later loads stay after it) and, before
 * the index it gave is followed, the head's tag is read again: unchanged,
 * the node was still stacked and the index is one its push published;
 * changed, the walk stops there, the CAS fails, and the next attempt
 * starts from the head the CAS returned.  (x86-64: both are plain loads.)
 *
 * Progress for this caller, not only for the stack: the walk and the CAS
 * after it succeed only if no other push or pop takes effect in between, a
 * window as long as the walk.  Under a steady stream of single pushes and
 * pops (one CAS each, a window of one link) a walk of many links fails
 * again and again while they all succeed: lock-free, but this call
 * starved (without what follows, a call for 4096 failed 5173..46059
 * CASes while four threads popped and pushed one index each).  So
 * each failed CAS halves max, down to 1: after at most log2(max) failed
 * attempts wider than a pop, each attempt is a pop's (one link, then the
 * CAS), and the call fares as a single pop does under the same load
 * (stress/sc_upto.c checks this).  It returns fewer entries when contended;
 * every caller takes what it gets and comes back for more.
 */
uint32_t lfp_stack_pop_upto_mpmc(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t max,
				  uint32_t *first)
{
	/* acquire (load and CAS), paired with the release CAS of
	 * lfp_stack_push_chain_mpmc: the links walked below */
	lfp_head old = lfp_stack_load(st);
	lfp_backoff b = LFP_BACKOFF_INIT;
	for (;;) {
		uint32_t top = lfp_stack_top(old), n = 0, next = top;
		if (top == LFP_NIL)
			return 0;
		while (n < max && next != LFP_NIL) {
			next = lfp_load_u32_acq(lfp_slabs_link(s, next));
			n++;
			if (n < max && next != LFP_NIL && lfp_load_u64_acq(&st->head.tag) != old.tag)
				break;
		}
		/* A walk cut short above fails here (the tag moved) and retries. */
		if (lfpool_stack_attempt_cas_(&st->head, &old, next)) {
			*first = top;
			return n;
		}
		/* Halve the walk, down to one entry: an ordinary pop's window. */
		if (max > 1)
			max /= 2;
		lfp_backoff_cas(&b);
	}
}

/*
 * Count the entries of a stack that others may change, at most max; exact
 * when it holds still.  The same care as in the walk above: a link is
 * followed only while the head's tag shows the stack unchanged; when it
 * moves, the count starts over from the new head, a few times, and then
 * settles for the count of the stack as it was (stats are approximate
 * while the pool is busy).
 */
uint64_t lfp_stack_count_mpmc(const struct lfp_stack *st, const struct lfp_slabs *s, uint64_t max)
{
	uint64_t n = 0;
	for (unsigned tries = 0; tries < 4; tries++) {
		lfp_head head = lfp_stack_load(st);
		n = 0;
		uint32_t i = lfp_stack_top(head);
		while (i != LFP_NIL && n < max) {
			n++;
			i = lfp_load_u32_acq(lfp_slabs_link(s, i));
			if (lfp_load_u64_acq(&st->head.tag) != head.tag)
				break;
		}
		if (lfp_load_u64_acq(&st->head.tag) == head.tag)
			return n;
	}
	return n;
}
