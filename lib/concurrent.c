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
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "lfpool/concurrent.h"
#include "census.h"

struct lfpool_concurrent {
	/* First, the public view that the inline get and put read
	 * (lfpool/impl/tagged_stack.h); its first member, the head, is the free
	 * stack's: the two are one line seen by the inline code and by the
	 * library's stack calls (stack.h). */
	union {
		struct lfpool_concurrent_fast fast;
		struct lfp_stack free;		/* constructed objects */
	};
	uint64_t created __attribute__((aligned(64)));
	uint64_t misses;
	uint64_t trims_begun, trims_ended;	/* see "Trim and a get at capacity" */
	uint32_t magic;
	uint32_t hot_trims;		/* trims running (grow lock): see "The inline paths" */
	uint64_t hot_allocs;		/* the slabs' slab_allocs the view was last set at */
	struct lfp_core core;
	/* The free stack's elimination array and the counters of its calls
	 * (stack.h): a line of its own, which only contended calls visit. */
	struct lfp_elim elim;
	/* After the struct in its block, core.tail bytes: slab 0's side data
	 * (core.h, lfp_core_inline; one block per small pool). */
};
_Static_assert(offsetof(struct lfpool_concurrent, fast) == 0, "the public view first");
_Static_assert(offsetof(struct lfpool_concurrent, fast.head) ==
	       offsetof(struct lfpool_concurrent, free.head), "one head");
_Static_assert(offsetof(struct lfpool_concurrent_fast, small) == sizeof(struct lfp_stack),
	       "the public view's first line is the stack's cache line");
_Static_assert(LFPOOL_CONC_SMALL_ == LFP_SMALL_MAX, "the view has a place for each small slab");
/* The public view's two lines, then one of the pool's own fields, then
 * the core. */
_Static_assert(offsetof(struct lfpool_concurrent, core) == 192,
	       "the core's lines follow the pool's own");

/*
 * The inline paths (lfpool/concurrent.h) serve slab 0 through the fast
 * view's bounds, base and links, which only hot_set_locked writes, under
 * the grow lock, and each small slab n through the second line's the same
 * way (gets and span[n - 1] its bounds, base[n - 1] and links[n - 1]):
 * what follows holds for each small slab as for slab 0, word for word.
 * It is not enough that an index popped was pushed after its slab grew:
 * a prewarm pushes a new slab's objects before the view names it, and a
 * slab trimmed away may grow again elsewhere; the bounds say which slabs
 * the view names now.  Why a stale view never misleads them:
 *  - links: slab 0's side data, set once its first growth succeeded and
 *    readable until destroy (Concurrent pools never free side data; a
 *    failed growth frees only the side data of slot numbers it added
 *    itself, above slot 0 once slab 0 exists).  A release of slab 0 may
 *    give the pages back (slab.c, side_give_back): a get that read a
 *    stale bound then reads a zero link, and its CAS fails on the tag.
 *  - The bounds are 0 (nothing inline) from before any release of slab 0
 *    until after it: a trim clears them and counts itself in hot_trims
 *    under the grow lock before it gives anything back, and they are set
 *    again only with hot_trims 0, under the lock, from slab 0's memory as
 *    it is then (none: they stay 0).  The only other release of slab 0,
 *    a failed growth's, gives back only slabs grown in the same locked
 *    section (core.c grow_private: the raw objects it took from the stack
 *    go back onto it, their slabs stay), so slab 0 only when it was grown
 *    there, while the bounds were 0 (slab 0 had no memory).
 *  - A put owns its object, which a get (or a create) handed out after
 *    the growth of its slab, after every release before it, hence after
 *    the clear that preceded that release: the put reads that clear or a
 *    later value, so a bound it reads nonzero, and the base it reads after
 *    it (acquire), were set while the slab 0 they describe had memory, at
 *    a time its own slab also had: two live slabs never overlap, so its
 *    address is in [base, base + put_span) only if it is in slab 0.
 *  - A get reads base after its CAS took the index: while it holds it,
 *    slab 0 stays, and the push it popped happened after that slab 0's
 *    growth, so it reads that slab 0's address (the same chain as a put's).
 */
/* The view's second line (as slab 0's, below): each small slab with
 * memory, when open; gets the small slabs 1 .. gets, all with memory. */
static void small_set_locked(lfpool_concurrent *c, bool open)
{
	const struct lfp_slabs *s = &c->core.slabs;
	struct lfpool_concurrent_small_ *v = &c->fast.small;
	uint8_t gets = 0;
	for (uint32_t n = 1; n <= s->small; n++) {
		const struct lfp_slab_slot *slot = n < s->high_water ? lfp_slabs_slot(s, n) : NULL;
		char *mem = open && slot ? slot->mem : NULL;
		if (!mem) {
			lfp_store_u32_rel(&v->span[n - 1], 0);
			continue;
		}
		lfp_store_ptr_rel((void **)&v->base[n - 1], mem + s->first_off);
		lfp_store_ptr_rel((void **)&v->links[n - 1], slot->links);
		/* release: base and links before the bounds that let them be used */
		lfp_store_u32_rel(&v->span[n - 1], lfp_core_puts_lean(&c->core) ?
				  (uint32_t)(lfp_slabs_per(s, n) * s->stride) : 0);
		if (gets == n - 1)
			gets = (uint8_t)n;
	}
	lfp_store_u8_rel(&v->gets, gets);
}

static void hot_set_locked(lfpool_concurrent *c)
{
	const struct lfp_slabs *s = &c->core.slabs;
	bool open = !lfp_core_slow(&c->core) && c->hot_trims == 0;
	char *mem = NULL;
	lfp_store_u64_rlx(&c->hot_allocs, lfp_load_u64_rlx(&s->slab_allocs));
	small_set_locked(c, open);
	if (open && s->high_water > 0)
		mem = lfp_slabs_slot(s, 0)->mem;
	if (!mem) {
		lfp_store_u64_rel(&c->fast.get_n, 0);
		lfp_store_u64_rel(&c->fast.put_span, 0);
		return;
	}
	lfp_store_ptr_rel((void **)&c->fast.base, mem + s->first_off);
	lfp_store_ptr_rel((void **)&c->fast.links, lfp_slabs_slot(s, 0)->links);
	/* release: base and links before the bounds that let them be used */
	lfp_store_u64_rel(&c->fast.put_span,
			  lfp_core_puts_lean(&c->core) ? (uint64_t)s->per_slab * s->stride : 0);
	lfp_store_u64_rel(&c->fast.get_n, s->per_slab);
}

/* After objects were created: set the view again if a slab grew since it
 * was set (not in slow pools, whose stays closed): the lock once per slab
 * grown.  A growth counts itself in slab_allocs under the lock, before
 * this thread's call; hot_set_locked reads it under the lock, so the view
 * a thread finds counted covers its growth. */
static void hot_open(lfpool_concurrent *c)
{
	if (lfp_core_slow(&c->core) ||
	    lfp_load_u64_rlx(&c->core.slabs.slab_allocs) == lfp_load_u64_rlx(&c->hot_allocs))
		return;
	pthread_mutex_lock(&c->core.grow_lock);
	hot_set_locked(c);
	pthread_mutex_unlock(&c->core.grow_lock);
}

/* fork()'s child resets every Concurrent core (fork_child, below), but
 * for the trims the forking thread has open (pushed after hot_trims and
 * trims_begun count them in, popped before they count them out: a fini
 * hook, the only code a trim runs between, sees both counted).  The
 * handler is installed after fork.c's (fork.c says why), holding no
 * lock. */
static __thread struct lfp_open open_trims;
static void fork_child_all(void);
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void set_fork_child(void)
{
	lfp_fork_init();
	pthread_atfork(NULL, NULL, fork_child_all);
}

/* LFPOOL_SHOW_STATS (debug.h, lfp_debug_watch). */
static void show(const void *c, FILE *out)
{
	lfpool_concurrent_dump(c, out);
}
LFP_DEBUG_WATCHER(LFP_WATCH_CONCURRENT)

LFPOOL_API lfpool_concurrent *lfpool_concurrent_create(const lfpool_config *cfg)
{
	size_t side = lfp_core_inline_bytes(cfg);
	pthread_once(&fork_once, set_fork_child);	/* before any core of ours registers */
	lfpool_concurrent *c = lfp_core_owner_new(cfg, LFP_KIND_CONCURRENT, sizeof(*c),
						  offsetof(struct lfpool_concurrent, core), 0, side);
	if (!c)
		return NULL;
	lfp_core_inline(&c->core, c + 1, side);
	lfp_stack_init(&c->free);
	c->fast.stride = c->core.slabs.stride;
	c->fast.magic = c->core.slabs.stride_magic;
	c->fast.small.off_bits = (uint8_t)c->core.slabs.off_bits;
	c->magic = LFP_MAGIC_LIVE;
	watch(c);
	if (cfg->prewarm && lfpool_concurrent_prewarm(c, cfg->prewarm) != 0) {
		int err = errno;
		lfpool_concurrent_destroy(c);
		errno = err;
		return NULL;
	}
	return c;
}

LFPOOL_API int lfpool_concurrent_dump(const lfpool_concurrent *c, FILE *out)
{
	if (lfp_core_dead(&c->core, &c->magic, NULL, "dump after destroy"))
		return -1;
	lfpool_stats st;
	lfpool_concurrent_stats(c, &st);
	return lfp_core_dump(&c->core, &st, out);
}

const char *lfp_concurrent_name_of(const void *ptr)
{
	const lfpool_concurrent *p = ptr;
	return lfp_core_name_if(&p->magic, &p->core, LFP_KIND_CONCURRENT);
}

LFPOOL_API int lfpool_concurrent_destroy(lfpool_concurrent *c)
{
	if (!c)
		return 0;
	lfp_prefetch_lines(c, LFP_HOT_BYTES(struct lfpool_concurrent, core));
	if (lfp_dead(c->core.name, &c->magic, c, "destroy of a pool already destroyed"))
		return -1;
	lfp_debug_unwatch(c, show);
	/* Until the stack stays empty: a fini hook may put objects back.
	 * With nothing to run on them and nothing to report, the stack's
	 * link words are not read (a cache miss per destroy with 10^5 pools
	 * alive; a Pool's destroy skips its array the same way). */
	size_t n = 0;
	uint32_t chain;
	while ((c->core.fini || lfp_core_slow(&c->core)) &&
	       (chain = lfp_stack_pop_all_mpmc(&c->free)) != LFP_NIL) {
		for (uint32_t i = chain, next; i != LFP_NIL; i = next, n++) {
			next = lfp_load_u32_rlx(lfp_slabs_link(&c->core.slabs, i));
			lfp_core_fini_obj(&c->core, lfp_slabs_ptr(&c->core.slabs, i));
		}
	}
	lfp_core_retire(&c->core, c, lfp_core_block_bytes(&c->core, sizeof(*c)),
			&c->magic, c->created - n);
	return 0;
}

/* The stack's top object for a get, marked out; NULL when empty. */
static void *pop_out(lfpool_concurrent *c)
{
	struct lfp_slab_slot *slot;
	uint32_t idx = lfp_stack_pop_at_elim_mpmc(&c->free, &c->elim, &c->core.slabs, &slot);
	if (idx == LFP_NIL)
		return NULL;
	if (lfp_core_slow(&c->core))
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
static int get_or_make(lfpool_concurrent *c, void **objs, size_t n);

/* A get that found the stack empty: one object as a bulk get of one. */
__attribute__((noinline)) static void *get_create(lfpool_concurrent *c)
{
	lfp_core_prefetch_block(&c->core, c, LFP_HOT_BYTES(struct lfpool_concurrent, core),
				sizeof(*c));
	void *obj;
	int err = get_or_make(c, &obj, 1);
	if (err) {
		errno = err;
		return NULL;
	}
	return obj;
}

/* The object of an index a pop took (slot: its slab's, from the pop), or
 * when the stack was empty (LFP_NIL) a new one. */
static void *popped(lfpool_concurrent *c, uint32_t idx, struct lfp_slab_slot *slot)
{
	if (idx == LFP_NIL)
		return get_create(c);
	if (lfp_core_slow(&c->core))
		lfp_core_mark_out(&c->core, idx);
	return lfp_slot_obj(slot, lfp_slabs_off(idx, c->core.slabs.off_bits), c->core.slabs.first_off,
			    c->core.slabs.stride);
}

/* A get with debug checks, or on an empty stack. */
__attribute__((noinline)) static void *get_rare(lfpool_concurrent *c)
{
	struct lfp_slab_slot *slot;
	uint32_t idx = lfp_stack_pop_at_elim_mpmc(&c->free, &c->elim, &c->core.slabs, &slot);
	return popped(c, idx, slot);
}

/* A get whose first CAS failed on old: it waits in the elimination array
 * before it tries again (stack.c), as a put's retry does, rather than
 * start over at once; a put it meets there gives it its object. */
static void *get_contended(lfpool_concurrent *c, lfp_head old)
{
	struct lfp_slab_slot *slot;
	uint32_t idx = lfp_stack_pop_elim_mpmc(&c->free, &c->elim, &c->core.slabs, old, &slot);
	return popped(c, idx, slot);
}

/* The inline get's failed CAS (lfpool/concurrent.h): the retries. */
LFPOOL_API void *lfpool_concurrent_get_retry(lfpool_concurrent *c, uint64_t top, uint64_t tag)
{
	lfp_head old = { .top = top, .tag = tag };
	return get_contended(c, old);
}

/*
 * Every get the inline path leaves (an index beyond slab 0, an empty
 * stack, debug checks, a trim running).  A lean one is one attempt to pop,
 * then the object from the slot the pop looked up for the link: one
 * directory walk.  The geometry is read before the pop's loads, which are
 * compiler barriers.  A failed CAS goes on in get_contended; anything
 * else starts over in get_rare.
 */
LFPOOL_API void *lfpool_concurrent_get_slow(lfpool_concurrent *c)
{
	const struct lfp_slabs *s = &c->core.slabs;
	uint32_t ob = s->off_bits, first_off = s->first_off;
	size_t stride = s->stride;
	if (LFPOOL_LIKELY(!lfp_core_slow(&c->core))) {
		struct lfp_slab_slot *slot;
		/* acquire, paired with the release CAS of a push */
		lfp_head old = lfp_stack_load(&c->free);
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
		lfp_stack_push_link_elim_mpmc(&c->free, &c->elim, lfp_slabs_link(&c->core.slabs, idx), idx, true);
}

/* The inline put's failed CAS (lfpool/concurrent.h): the retries, for obj,
 * of slab 0 or a small slab. */
LFPOOL_API void lfpool_concurrent_put_retry(lfpool_concurrent *c, void *obj, uint64_t top,
					    uint64_t tag)
{
	lfp_head old = { .top = top, .tag = tag };
	const struct lfp_slabs *s = &c->core.slabs;
	uint32_t ob = s->off_bits, off, slab_no = lfp_slabs_locate(s, obj, &off);
	LFP_ASSERT(slab_no == 0 || lfp_slabs_small(s, slab_no));
	lfp_stack_push_elim_mpmc(&c->free, &c->elim, lfp_slot_link(lfp_slabs_slot(s, slab_no), off),
				 (slab_no << ob) | off, true, old);
}

/*
 * Every put the inline path leaves (an object beyond slab 0, NULL, the
 * checks, the reset hook, a trim running).  A lean one finds the link word
 * from the slab number and offset that the index is made of (from the
 * object's slab header): one directory step, and no register kept for a
 * call.
 */
LFPOOL_API void lfpool_concurrent_put_slow(lfpool_concurrent *c, void *obj)
{
	if (LFPOOL_UNLIKELY(!lfp_core_puts_lean(&c->core)) || LFPOOL_UNLIKELY(!obj)) {
		put_rare(c, obj);
		return;
	}
	const struct lfp_slabs *s = &c->core.slabs;
	uint32_t ob = s->off_bits, off, slab_no = lfp_slabs_locate(s, obj, &off);
	lfp_stack_push_link_elim_mpmc(&c->free, &c->elim, lfp_slot_link(lfp_slabs_slot(s, slab_no), off),
				      (slab_no << ob) | off, true);
}

LFPOOL_API struct lfpool_span_ lfpool_concurrent_span_(const lfpool_concurrent *c)
{
	return lfp_core_span(&c->core);
}

/* n new objects, marked out, into objs: 0, or errno with nothing created
 * and no memory kept (lfp_core_create). */
static int create_out(lfpool_concurrent *c, void **objs, size_t n)
{
	if (lfp_core_dead(&c->core, &c->magic, NULL, "get after destroy"))
		return EINVAL;
	uint32_t chain;
	int err = lfp_core_create(&c->core, &c->created, true, n, LFP_OBJ_OUT, &chain);
	if (err)
		return err;
	lfp_faa_u64_rlx(&c->misses, n);
	hot_open(c);
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(&c->core.slabs, i)))
		*objs++ = lfp_slabs_ptr(&c->core.slabs, i);
	return 0;
}

/*
 * Pooled objects while the stack has some, then the rest made in one
 * lfp_core_create, which grows every slab they need or none: all or none,
 * and a failure keeps no memory (common.h).  Got one by one, a bulk get
 * that failed on its k-th new slab kept the slabs grown before it, with
 * their objects as pooled ones.  At capacity, as get_create: ENOBUFS only
 * when no trim held objects meanwhile.
 */
static int get_or_make(lfpool_concurrent *c, void **objs, size_t n)
{
	size_t i = 0;
	int err = 0;
	lfp_backoff b = LFP_BACKOFF_INIT;
	while (i < n) {
		void *obj = pop_out(c);
		if (obj) {
			objs[i++] = obj;
			continue;
		}
		uint64_t ended = lfp_load_u64_acq(&c->trims_ended);
		err = create_out(c, objs + i, n - i);
		if (!err)
			return 0;
		if (err != ENOBUFS || lfp_fini_running == &c->core)
			break;
		if ((obj = pop_out(c)) != NULL) {
			objs[i++] = obj;	/* put back meanwhile */
			continue;
		}
		if (lfp_load_u64_acq(&c->trims_begun) == ended)
			break;
		lfp_backoff_wait(&b);	/* a trim holds objects: it gives them back soon */
	}
	if (i == n)
		return 0;
	lfpool_concurrent_put_bulk(c, objs, i);
	return err;
}

LFPOOL_API int lfpool_concurrent_get_bulk(lfpool_concurrent *c, void **objs, size_t n)
{
	int err = get_or_make(c, objs, n);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

LFPOOL_API void lfpool_concurrent_put_bulk(lfpool_concurrent *c, void *const *objs, size_t n)
{
	/* Link the objects privately, then publish them with one CAS. */
	uint32_t first = LFP_NIL, last = LFP_NIL;
	bool lean = lfp_core_puts_lean(&c->core);
	/* Slab 0's objects by the inline put's view, read as it reads it
	 * (see "The inline paths": the caller owns every object); the others
	 * from their slab's header (or range, a small slab's). */
	uint64_t span = lfp_load_u64_acq(&c->fast.put_span);
	uintptr_t base = (uintptr_t)lfp_load_ptr_rlx((void *const *)&c->fast.base);
	uint64_t magic = c->fast.magic;
	for (size_t i = 0; i < n; i++) {
		if (!objs[i])
			continue;
		uint64_t delta = (uint64_t)((uintptr_t)objs[i] - base);
		/* lean pools: no checks, no hook (as put_slow's common case) */
		uint32_t idx = !lean ? prepare_put(c, objs[i])
			: delta < span ? (uint32_t)(((unsigned __int128)delta * magic) >> 64)
			: lfp_slabs_index(&c->core.slabs, objs[i]);
		if (idx == LFP_NIL)
			continue;
		lfp_store_u32_rlx(lfp_slabs_link(&c->core.slabs, idx), first);
		if (first == LFP_NIL)
			last = idx;
		first = idx;
	}
	if (first != LFP_NIL)
		lfp_stack_push_link_elim_mpmc(&c->free, &c->elim, lfp_slabs_link(&c->core.slabs, last), first,
					      first == last);
}

/* A private chain in the opposite order, slab 0's objects first: what
 * prewarm pushes, so that those the inline paths serve are on top.
 * lfp_core_create chains the newest slab's objects first, and slab 0, a
 * pool's first full slab, comes after its small ones (lib/slab.h).  The
 * last object in *last. */
static uint32_t slab0_on_top(const struct lfp_slabs *s, uint32_t chain, uint32_t *last)
{
	uint32_t head = LFP_NIL, rest = LFP_NIL, rest_last = LFP_NIL, ob = s->off_bits;
	*last = LFP_NIL;
	for (uint32_t i = chain, next; i != LFP_NIL; i = next) {
		uint32_t *link = lfp_slabs_link(s, i);
		next = lfp_load_u32_rlx(link);
		bool hot = (i >> ob) == 0;
		lfp_store_u32_rlx(link, hot ? head : rest);
		if (hot && head == LFP_NIL)
			*last = i;
		if (!hot && rest == LFP_NIL)
			rest_last = i;
		if (hot)
			head = i;
		else
			rest = i;
	}
	if (head == LFP_NIL) {
		*last = rest_last;
		return rest;
	}
	lfp_store_u32_rlx(lfp_slabs_link(s, *last), rest);
	if (rest != LFP_NIL)
		*last = rest_last;
	return head;
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
	uint32_t last;
	chain = slab0_on_top(&c->core.slabs, chain, &last);
	lfp_stack_push_chain_mpmc(&c->free, &c->core.slabs, chain, last);
	hot_open(c);
	return 0;
}

LFPOOL_API size_t lfpool_concurrent_trim(lfpool_concurrent *c, size_t keep)
{
	if (lfp_core_dead(&c->core, &c->magic, NULL, "trim after destroy"))
		return 0;
	const struct lfp_slabs *s = &c->core.slabs;
	/* The inline paths close before anything is given back and reopen
	 * once no trim runs: see "The inline paths". */
	pthread_mutex_lock(&c->core.grow_lock);
	c->hot_trims++;
	hot_set_locked(c);
	pthread_mutex_unlock(&c->core.grow_lock);
	/* Counted in before the pop (its CAS releases the count), out after
	 * `created` dropped (release): see the top of this file. */
	lfp_faa_u64_rlx(&c->trims_begun, 1);
	lfp_open_push(&open_trims, c);
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
	lfp_open_pop(&open_trims);
	lfp_faa_u64_acqrel(&c->trims_ended, 1);
	pthread_mutex_lock(&c->core.grow_lock);
	c->hot_trims--;
	hot_set_locked(c);
	pthread_mutex_unlock(&c->core.grow_lock);
	return n;
}

/*
 * fork()'s child, c's grow lock held: a trim that another thread
 * was running never ends here.  What it had popped stays counted in
 * created, as out (lfpool/common.h, "fork()"); its count in trims_begun
 * is ended, so that a get at capacity fails with ENOBUFS instead of
 * waiting for those objects forever, and hot_trims drops, so that the
 * inline paths open again.  The forking thread's own open trims (a fini
 * hook of one forked) go on in the child and stay counted.  A get or put
 * of another thread parked in the elimination array never withdraws
 * here: its slot is freed (stack.h, lfp_elim_reset; the forking thread's
 * own is kept), so that no put gives its object to a get that is gone;
 * the parked objects stay out, as the rest of that thread's.
 */
static void fork_child(struct lfp_core *core)
{
	lfpool_concurrent *c = (lfpool_concurrent *)((char *)core - offsetof(lfpool_concurrent, core));
	uint32_t mine;
	lfp_elim_reset(&c->elim);
	if (!lfp_open_count(&open_trims, c, &mine))
		return;
	uint64_t begun = lfp_load_u64_acq(&c->trims_begun);
	lfp_faa_u64_acqrel(&c->trims_ended, begun - mine - lfp_load_u64_acq(&c->trims_ended));
	c->hot_trims = mine;
	hot_set_locked(c);
}

/* After fork.c's child handler: every Concurrent core of the registry
 * (only this thread runs, and nothing else changes it). */
static void fork_child_all(void)
{
	for (struct lfp_core *k = lfp_fork_next_child(NULL); k; k = lfp_fork_next_child(k)) {
		if (k->kind != LFP_KIND_CONCURRENT)
			continue;
		pthread_mutex_lock(&k->grow_lock);
		fork_child(k);
		pthread_mutex_unlock(&k->grow_lock);
	}
}

LFPOOL_API int lfpool_concurrent_owns(const lfpool_concurrent *c, const void *ptr)
{
	if (lfp_core_dead(&c->core, &c->magic, ptr, "owns after destroy"))
		return 0;
	return lfp_core_owns(&c->core, ptr);
}

LFPOOL_API void lfpool_concurrent_stats(const lfpool_concurrent *c, lfpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (lfp_core_dead(&c->core, &c->magic, NULL, "stats after destroy"))
		return;
	lfp_core_stats(&c->core, st);
	st->misses = lfp_load_u64_rlx(&c->misses);
	st->cas_retries = lfp_load_u64_rlx(&c->elim.cas_failed);
	st->eliminated = lfp_load_u64_rlx(&c->elim.eliminated);
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
