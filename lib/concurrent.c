/* SPDX-License-Identifier: MIT */
/*
 * concurrent.c - Concurrent: every object on one lock-free index stack.
 *
 * get pops the free stack; when it is empty it reserves one object of
 * capacity (a CAS on `created`), takes raw slab memory (lock-free, a lock
 * only to add a slab) and constructs it.  put pushes.  Trim pops the whole
 * free stack, keeps `keep` objects, finalizes the rest and frees wholly raw
 * slabs; slab.h explains why that needs no grace period.
 *
 * Trim and a get at capacity.  While a trim holds the popped stack, the
 * objects on it are pooled but not on the stack: a get at capacity would
 * find the stack empty and `created` at the capacity, and say ENOBUFS
 * with every object free.  So trims count themselves in and out
 * (trims_begun before the pop, trims_ended after `created` dropped), and
 * a get at capacity says ENOBUFS only when no trim overlapped its look
 * (ended, read before it reserved, equals begun, read after its pop);
 * otherwise it waits and looks again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "lfpool/concurrent.h"
#include "validate.h"

struct lfpool_concurrent {
	struct lfp_stack free;		/* constructed objects; its own cache line */
	uint64_t created __attribute__((aligned(64)));
	uint64_t misses;
	uint64_t trims_begun, trims_ended;	/* see "Trim and a get at capacity" */
	uint32_t magic;
	bool fast_put;			/* no reset hook, no debug checks */
	struct lfp_core core;
};

LFPOOL_API lfpool_concurrent *lfpool_concurrent_create(const lfpool_config *cfg)
{
	lfpool_concurrent *c = lfp_core_owner_alloc(cfg, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	int err = lfp_core_init(&c->core, cfg, LFP_KIND_CONCURRENT);
	if (err) {
		lfp_core_owner_free(c, sizeof(*c), lfp_debug_wanted(cfg ? cfg->flags : 0));
		errno = err;
		return NULL;
	}
	lfp_stack_init(&c->free);
	c->magic = LFP_MAGIC_LIVE;
	c->fast_put = !c->core.debug && !c->core.reset;
	if (cfg->prewarm && lfpool_concurrent_prewarm(c, cfg->prewarm) != 0) {
		err = errno;
		lfpool_concurrent_destroy(c);
		errno = err;
		return NULL;
	}
	return c;
}

LFPOOL_API int lfpool_concurrent_destroy(lfpool_concurrent *c)
{
	if (!c)
		return 0;
	if (lfp_dead(c->core.name, &c->magic, c, "destroy of a pool already destroyed"))
		return -1;
	/* Until the stack stays empty: a fini hook may put objects back. */
	size_t n = 0;
	uint32_t chain;
	while ((chain = lfp_stack_pop_all_mpmc(&c->free)) != LFP_NIL) {
		for (uint32_t i = chain, next; i != LFP_NIL; i = next, n++) {
			next = lfp_load_u32_rlx(lfp_slabs_link(&c->core.slabs, i));
			lfp_core_fini_obj(&c->core, lfp_slabs_ptr(&c->core.slabs, i));
		}
	}
	lfp_core_retire(&c->core, c, sizeof(*c), &c->magic, c->created - n);
	return 0;
}

/* The stack's top object for a get, marked out; NULL when empty. */
static void *pop_out(lfpool_concurrent *c)
{
	uint32_t idx = lfp_stack_pop_mpmc(&c->free, &c->core.slabs);
	if (idx == LFP_NIL)
		return NULL;
	if (c->core.debug)
		lfp_core_mark_out(&c->core, idx);
	return lfp_slabs_ptr(&c->core.slabs, idx);
}

/*
 * The stack was empty: create an object, or at capacity look again.  The
 * ENOBUFS is honest only if no trim held pooled objects between reading
 * `created` and finding the stack empty.  ended is read (acquire: a trim
 * that ended had lowered `created` first, which the reserve then sees)
 * before the reserve; begun after the pop, whose acquire read of the head
 * saw every trim whose pop emptied the stack, and so that trim's begin.
 */
__attribute__((noinline)) static void *get_slow(lfpool_concurrent *c)
{
	if (lfp_core_dead(&c->core, &c->magic, NULL, "get after destroy"))
		return NULL;
	lfp_faa_u64_rlx(&c->misses, 1);
	lfp_backoff b = LFP_BACKOFF_INIT;
	for (;;) {
		uint64_t ended = lfp_load_u64_acq(&c->trims_ended);
		uint32_t idx;
		int err = lfp_core_create(&c->core, &c->created, true, 1, LFP_OBJ_OUT, &idx);
		if (!err)
			return lfp_slabs_ptr(&c->core.slabs, idx);
		void *obj = err == ENOBUFS ? pop_out(c) : NULL;
		if (obj)
			return obj;
		if (err != ENOBUFS || lfp_load_u64_acq(&c->trims_begun) == ended) {
			errno = err;
			return NULL;
		}
		lfp_backoff_wait(&b);	/* a trim holds objects: it gives them back soon */
	}
}

/* The object of an index a pop took (slot: its slab's, from the pop), or
 * when the stack was empty (LFP_NIL) a new one. */
static void *popped(lfpool_concurrent *c, uint32_t idx, struct lfp_slab_slot *slot)
{
	if (idx == LFP_NIL)
		return get_slow(c);
	if (c->core.debug)
		lfp_core_mark_out(&c->core, idx);
	return lfp_slot_obj(slot, lfp_slabs_off(idx, c->core.slabs.off_bits), c->core.slabs.first_off,
			    c->core.slabs.stride);
}

/* A get with debug checks, or on an empty stack. */
__attribute__((noinline)) static void *get_rare(lfpool_concurrent *c)
{
	struct lfp_slab_slot *slot;
	uint32_t idx = lfp_stack_pop_at_mpmc(&c->free, &c->core.slabs, &slot);
	return popped(c, idx, slot);
}

/* A get whose first CAS failed on old: it backs off before it tries again
 * (stack.c), as a put's retry does, rather than start over at once. */
__attribute__((noinline)) static void *get_contended(lfpool_concurrent *c, lfp_pair old)
{
	struct lfp_slab_slot *slot;
	uint32_t idx = lfp_stack_pop_contended_mpmc(&c->free, &c->core.slabs, old, &slot);
	return popped(c, idx, slot);
}

/*
 * The common case (no debug checks, a non-empty stack, no contention) is
 * one attempt to pop, then the object from the slot the pop looked up for
 * the link: one directory walk.  The geometry is read before the pop's
 * loads, which are compiler barriers.  A failed CAS goes on in
 * get_contended; anything else starts over in get_rare.
 */
LFPOOL_API void *lfpool_concurrent_get(lfpool_concurrent *c)
{
	const struct lfp_slabs *s = &c->core.slabs;
	uint32_t ob = s->off_bits, first_off = s->first_off;
	size_t stride = s->stride;
	if (LFPOOL_LIKELY(!c->core.debug)) {
		struct lfp_slab_slot *slot;
		/* acquire, paired with the release CAS of a push */
		lfp_pair old = lfp_stack_load(&c->free);
		uint32_t idx = lfp_stack_top(old);
		if (LFPOOL_LIKELY(idx != LFP_NIL)) {
			/* not empty: true is the CAS that took idx */
			if (LFPOOL_LIKELY(lfp_stack_pop_step_mpmc(&c->free, s, ob, &old, &slot)))
				return lfp_slot_obj(slot, lfp_slabs_off(idx, ob), first_off, stride);
			return get_contended(c, old);
		}
	}
	return get_rare(c);
}

/* Checks and reset hook of a put; LFP_NIL when obj must not be pooled. */
static uint32_t prepare_put(lfpool_concurrent *c, void *obj)
{
	if (lfp_core_dead(&c->core, &c->magic, obj, "put after destroy"))
		return LFP_NIL;
	return lfp_core_accept_put(&c->core, obj);
}

/* Every put but the common case's: NULL, the checks, the reset hook. */
__attribute__((noinline)) static void put_rare(lfpool_concurrent *c, void *obj)
{
	uint32_t idx;
	if (obj && (idx = prepare_put(c, obj)) != LFP_NIL)
		lfp_stack_push_mpmc(&c->free, &c->core.slabs, idx);
}

/*
 * The common case (no reset hook, no debug checks) finds the link word
 * from the slab number and offset that the index is made of (from the
 * object's slab header): one directory step, and no register kept for a
 * call.
 */
LFPOOL_API void lfpool_concurrent_put(lfpool_concurrent *c, void *obj)
{
	if (LFPOOL_UNLIKELY(!c->fast_put) || LFPOOL_UNLIKELY(!obj)) {
		put_rare(c, obj);
		return;
	}
	const struct lfp_slabs *s = &c->core.slabs;
	uint32_t ob = s->off_bits, off, slab_no = lfp_slabs_locate(s, obj, &off);
	lfp_stack_push_link_mpmc(&c->free, lfp_slot_link(lfp_slabs_slot(s, slab_no), off),
				 (slab_no << ob) | off);
}

LFPOOL_API int lfpool_concurrent_get_bulk(lfpool_concurrent *c, void **objs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		objs[i] = lfpool_concurrent_get(c);
		if (!objs[i]) {
			int err = errno;
			lfpool_concurrent_put_bulk(c, objs, i);
			errno = err;
			return -1;
		}
	}
	return 0;
}

LFPOOL_API void lfpool_concurrent_put_bulk(lfpool_concurrent *c, void *const *objs, size_t n)
{
	/* Link the objects privately, then publish them with one CAS. */
	uint32_t first = LFP_NIL, last = LFP_NIL;
	for (size_t i = 0; i < n; i++) {
		if (!objs[i])
			continue;
		uint32_t idx = prepare_put(c, objs[i]);
		if (idx == LFP_NIL)
			continue;
		lfp_store_u32_rlx(lfp_slabs_link(&c->core.slabs, idx), first);
		if (first == LFP_NIL)
			last = idx;
		first = idx;
	}
	if (first != LFP_NIL)
		lfp_stack_push_chain_mpmc(&c->free, &c->core.slabs, first, last);
}

LFPOOL_API int lfpool_concurrent_prewarm(lfpool_concurrent *c, size_t n)
{
	if (lfp_core_dead(&c->core, &c->magic, NULL, "prewarm after destroy"))
		return -1;
	if (n == 0)
		return 0;
	uint32_t chain;
	int err = lfp_core_create(&c->core, &c->created, true, n, LFP_OBJ_POOLED, &chain);
	if (err) {
		errno = err;
		return -1;
	}
	lfp_stack_push_chain_mpmc(&c->free, &c->core.slabs, chain,
				  lfp_chain_last(&c->core.slabs, chain, NULL));
	return 0;
}

LFPOOL_API size_t lfpool_concurrent_trim(lfpool_concurrent *c, size_t keep)
{
	if (lfp_core_dead(&c->core, &c->magic, NULL, "trim after destroy"))
		return 0;
	const struct lfp_slabs *s = &c->core.slabs;
	/* Counted in before the pop (its CAS releases the count), out after
	 * `created` dropped (release): see the top of this file. */
	lfp_faa_u64_rlx(&c->trims_begun, 1);
	uint32_t chain = lfp_stack_pop_all_mpmc(&c->free);
	/* Keep the top `keep` (the hottest), destroy the rest, and give back
	 * every wholly raw slab, even when nothing was pooled. */
	uint32_t kept_last = LFP_NIL, drop = chain;
	for (size_t k = 0; k < keep && drop != LFP_NIL; k++) {
		kept_last = drop;
		drop = lfp_load_u32_rlx(lfp_slabs_link(s, drop));
	}
	if (kept_last != LFP_NIL)
		lfp_stack_push_chain_mpmc(&c->free, s, chain, kept_last);
	size_t n = 0;
	lfp_chain_last(s, drop, &n);
	lfp_core_destroy_chain(&c->core, true, drop);
	lfp_core_count_trim(&c->core, &c->created, n);
	lfp_faa_u64_acqrel(&c->trims_ended, 1);
	return n;
}

LFPOOL_API int lfpool_concurrent_owns(const lfpool_concurrent *c, const void *ptr)
{
	return lfp_core_owns(&c->core, ptr);
}

LFPOOL_API void lfpool_concurrent_stats(const lfpool_concurrent *c, lfpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (lfp_core_dead(&c->core, &c->magic, NULL, "stats after destroy"))
		return;
	lfp_core_stats(&c->core, st);
	st->misses = lfp_load_u64_rlx(&c->misses);
	st->created = lfp_load_u64_rlx(&c->created);
	/* Bounded by created: the stack may change under the count (the
	 * count's acquire loads pair with the release CAS of
	 * lfp_stack_push_chain_mpmc). */
	uint64_t n = lfp_stack_count_mpmc(&c->free, &c->core.slabs, st->created);
	st->retained = n;
	st->live = st->created - n;
}

#ifdef LFPOOL_DEBUG
int lfp_concurrent_validate(const lfpool_concurrent *c, char *why, size_t why_size)
{
	struct lfp_census cs;
	if (lfp_census_begin(&cs, &c->core, why, why_size))
		lfp_census_chain(&cs, lfp_stack_top(lfp_stack_load(&c->free)), "the free stack");
	return lfp_census_end(&cs, lfp_load_u64_rlx(&c->created));
}
#endif
