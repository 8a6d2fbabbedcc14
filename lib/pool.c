/* SPDX-License-Identifier: MIT */
/*
 * pool.c - Pool, the single-threaded flavour: the rare paths behind the
 * inline get and put of lfpool/pool.h.
 *
 * The free list is an array of object pointers (outside the objects), sized
 * to hold every object the pool has created, so a put never allocates and
 * never fails.  The items array is fast.low; a pool's pooled objects are
 * [low, top).  In slow pools (debug, memcheck: core.h) the fast view
 * stays empty (top at low, end NULL) and the real count lives here, so
 * that every get and put is checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "lfpool/pool.h"
#include "census.h"

struct lfpool_pool {
	struct lfpool_pool_fast fast;	/* first: read by the inline fast path */
	uint32_t magic;
	uint32_t debug_count;		/* slow pools: pooled objects */
	uint32_t items_cap;
	/* One block per small pool (fewer allocations and cache misses with
	 * many pools alive): after the struct, the core's
	 * tail bytes (lfp_core_block_bytes) hold the items array of a pool of
	 * capacity up to LFP_POOL_INLINE_ITEMS (inline_cap pointers, 0: none),
	 * then slab 0's side data (core.h, lfp_core_inline). */
	uint32_t inline_cap;
	uint64_t created, misses;
	struct lfp_core core;
};

/* The most pointers of an items array in the pool's own block: what
 * new_items would give a pool of that capacity first, its whole
 * capacity, so that the array never grows past it. */
#define LFP_POOL_INLINE_ITEMS 16u

/* The items array in p's own block. */
static void **inline_items(lfpool_pool *p)
{
	return (void **)(p + 1);
}

/* LFPOOL_SHOW_STATS (debug.h, lfp_debug_watch). */
static void show(const void *p, FILE *out);
LFP_DEBUG_WATCHER(LFP_WATCH_POOL)

/* The bytes the items array of a pool of config cfg takes in its block. */

static size_t inline_items_bytes(const lfpool_config *cfg)
{
	if (!lfp_core_block_inline(cfg) || !cfg->capacity || cfg->capacity > LFP_POOL_INLINE_ITEMS)
		return 0;
	return (cfg->capacity * sizeof(void *) + 63) & ~(size_t)63;
}
/* lfpool_pool_get and _put (pool.h) read the pool as its fast view. */
_Static_assert(offsetof(struct lfpool_pool, fast) == 0, "fast view first");
/* The pool's own fields fill its first line; its core starts the next. */
_Static_assert(offsetof(struct lfpool_pool, core) == 64, "the core's lines stay where they were");

/* The pooled objects, [low, low + count).  A pool without an items array
 * yet has none (low NULL: no pointer arithmetic on it, which C leaves
 * undefined and clang's UBSan reports). */
static uint32_t count_of(const lfpool_pool *p)
{
	if (lfp_core_slow(&p->core))
		return p->debug_count;
	return p->fast.low ? (uint32_t)(p->fast.top - p->fast.low) : 0;
}

static void set_count(lfpool_pool *p, uint32_t n)
{
	if (lfp_core_slow(&p->core))
		p->debug_count = n;
	else if (p->fast.low)
		p->fast.top = p->fast.low + n;
	LFP_ASSERT(p->fast.low || n == 0);
}

/* An items array for need pointers, not yet installed: *items stays the
 * pool's own when it is big enough.  0 or ENOMEM. */
static int new_items(lfpool_pool *p, uint64_t need, void ***items, uint32_t *cap_out)
{
	*items = p->fast.low;
	*cap_out = p->items_cap;
	if (need <= p->items_cap)
		return 0;
	if (!p->fast.low && need <= p->inline_cap) {
		*items = inline_items(p);
		*cap_out = p->inline_cap;
		return 0;
	}
	uint64_t cap = p->items_cap ? (uint64_t)p->items_cap * 2 : 16;
	if (cap < need)
		cap = need;
	if (p->core.capacity && cap > p->core.capacity)
		cap = p->core.capacity;
	if (cap > UINT32_MAX)
		return ENOMEM;
	bool misaligned = false;
	*items = lfp_alloc_aligned(&p->core.slabs.alloc, cap * sizeof(void *), sizeof(void *),
				   &misaligned);
	if (!*items) {
		if (misaligned && p->core.debug)
			lfp_debug_report(p->core.name, NULL, "the backing allocator returned memory "
				   "not aligned as asked (given back; ENOMEM)");
		return ENOMEM;
	}
	*cap_out = (uint32_t)cap;
	return 0;
}

/* Free the items array, unless it is the one in the pool's block. */
static void free_items(lfpool_pool *p)
{
	const lfpool_allocator *a = &p->core.slabs.alloc;
	if (p->fast.low && p->fast.low != inline_items(p))
		a->free(p->fast.low, p->items_cap * sizeof(void *), a->ctx);
}

/* Switch to items (of cap pointers), freeing the old array. */
static void install_items(lfpool_pool *p, void **items, uint32_t cap)
{
	if (items == p->fast.low)
		return;
	uint32_t n = count_of(p);
	if (p->fast.low) {
		memcpy(items, p->fast.low, n * sizeof(void *));
		free_items(p);
	}
	p->fast.low = p->fast.top = items;
	p->items_cap = cap;
	set_count(p, n);	/* a debug pool's top stays at low */
	p->fast.end = lfp_core_puts_lean(&p->core) ? items + cap : NULL;
}

/* Create n objects as a chain, in the given debug state; 0 or errno, with
 * nothing changed.  The items array grows too, so that a put never has to;
 * it is switched to only once the objects are there. */
static int create_objects(lfpool_pool *p, size_t n, uint8_t state, uint32_t *chain)
{
	lfp_core_prefetch_block(&p->core, p, LFP_HOT_BYTES(struct lfpool_pool, core), sizeof(*p));
	uint64_t most = lfp_core_max_objects(&p->core);
	if (p->core.capacity && (n > p->core.capacity || p->created > p->core.capacity - n))
		return ENOBUFS;
	if (n > most || p->created > most - n)
		return ENOMEM;
	void **items;
	uint32_t cap;
	int err = new_items(p, p->created + n, &items, &cap);
	if (!err)
		err = lfp_core_create(&p->core, &p->created, false, n, state, chain);
	if (err) {
		if (items && items != p->fast.low && items != inline_items(p))
			p->core.slabs.alloc.free(items, cap * sizeof(void *), p->core.slabs.alloc.ctx);
		return err;
	}
	install_items(p, items, cap);
	return 0;
}

LFPOOL_API lfpool_pool *lfpool_pool_create(const lfpool_config *cfg)
{
	size_t items = inline_items_bytes(cfg), side = lfp_core_inline_bytes(cfg);
	lfpool_pool *p = lfp_core_owner_new(cfg, LFP_KIND_POOL, sizeof(*p),
					     offsetof(struct lfpool_pool, core), 0, items + side);
	if (!p)
		return NULL;
	p->inline_cap = items ? (uint32_t)cfg->capacity : 0;
	lfp_core_inline(&p->core, (char *)(p + 1) + items, side);
	p->magic = LFP_MAGIC_LIVE;
	watch(p);
	if (cfg->prewarm && lfpool_pool_prewarm(p, cfg->prewarm) != 0) {
		int err = errno;
		lfpool_pool_destroy(p);
		errno = err;
		return NULL;
	}
	return p;
}

const char *lfp_pool_name_of(const void *ptr)
{
	const lfpool_pool *p = ptr;
	return lfp_core_name_if(&p->magic, &p->core, LFP_KIND_POOL);
}

LFPOOL_API int lfpool_pool_destroy(lfpool_pool *p)
{
	if (!p)
		return 0;
	lfp_prefetch_lines(p, LFP_HOT_BYTES(struct lfpool_pool, core));
	if (lfp_dead(p->core.name, &p->magic, p, "destroy of a pool already destroyed"))
		return -1;
	lfp_debug_unwatch(p, show);
	/* One at a time off the top: an object a fini hook puts back is
	 * finalized too. */
	uint64_t finalized = 0;
	if (!p->core.fini && !lfp_core_slow(&p->core)) {
		/* Nothing to run on them: the array is not read (a cache miss
		 * per destroy with 10^5 pools alive). */
		finalized = count_of(p);
		set_count(p, 0);
	}
	for (uint32_t n; (n = count_of(p)) != 0; finalized++) {
		set_count(p, n - 1);
		lfp_core_fini_obj(&p->core, p->fast.low[n - 1]);
	}
	uint64_t out = p->created - finalized;
	free_items(p);
	memset(&p->fast, 0, sizeof(p->fast));
	p->debug_count = 0;
	lfp_core_retire(&p->core, p, lfp_core_block_bytes(&p->core, sizeof(*p)),
			&p->magic, out);
	return 0;
}

LFPOOL_API void *lfpool_pool_get_slow(lfpool_pool *p)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "get after destroy"))
		return NULL;
	uint32_t n = count_of(p);
	if (n) {
		set_count(p, n - 1);
		void *obj = p->fast.low[n - 1];
		if (lfp_core_slow(&p->core))
			lfp_core_mark_out(&p->core, lfp_slabs_index(&p->core.slabs, obj));
		return obj;
	}
	p->misses++;
	uint32_t idx;
	int err = create_objects(p, 1, LFP_OBJ_OUT, &idx);
	if (err) {
		errno = err;
		return NULL;
	}
	return lfp_slabs_ptr(&p->core.slabs, idx);
}

/* Whether the items array is full, which only more puts than gets can
 * make it (reported).  Debug pools need no bound here: their checks
 * accept only objects out with users, for which the array has room. */
static bool array_full(lfpool_pool *p, const void *obj)
{
	if (p->core.debug || count_of(p) < p->items_cap)
		return false;
	lfp_debug_report(p->core.name, obj, "more puts than gets (double put or foreign pointer)");
	return true;
}

LFPOOL_API void lfpool_pool_put_slow(lfpool_pool *p, void *obj)
{
	if (!obj)
		return;
	if (lfp_core_dead(&p->core, &p->magic, obj, "put after destroy"))
		return;
	if (array_full(p, obj) || !lfp_core_accept(&p->core, obj))
		return;
	/* The count (and the array) after the reset hook, which may get from
	 * and put to its own pool (common.h): read again, bound again. */
	if (array_full(p, obj))
		return;
	uint32_t n = count_of(p);
	p->fast.low[n] = obj;
	set_count(p, n + 1);
}

LFPOOL_API struct lfpool_span_ lfpool_pool_span_(const lfpool_pool *p)
{
	return lfp_core_span(&p->core);
}

LFPOOL_API int lfpool_pool_prewarm(lfpool_pool *p, size_t n)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "prewarm after destroy"))
		return -1;
	if (n == 0)
		return 0;
	uint32_t chain;
	int err = create_objects(p, n, LFP_OBJ_POOLED, &chain);
	if (err) {
		errno = err;
		return -1;
	}
	uint32_t count = count_of(p);
	for (uint32_t i = chain; i != LFP_NIL; i = *lfp_slabs_link(&p->core.slabs, i))
		p->fast.low[count++] = lfp_slabs_ptr(&p->core.slabs, i);
	set_count(p, count);
	return 0;
}

/*
 * After a trim: an items array of a power of two of at least 16 pointers
 * that holds every object created (so that a put still never allocates),
 * none when no object is left; the array shrinks only (else, after a
 * trim to 0 of 10^7 objects, the array of 10^7 pointers would stay).  On
 * no memory the old array stays.
 */
static void shrink_items(lfpool_pool *p)
{
	if (!p->fast.low || p->fast.low == inline_items(p))
		return;
	if (p->created == 0) {
		free_items(p);
		memset(&p->fast, 0, sizeof(p->fast));
		p->items_cap = 0;
		return;
	}
	uint64_t cap = 16;
	while (cap < p->created)
		cap *= 2;
	if (p->core.capacity && cap > p->core.capacity)
		cap = p->core.capacity;
	if (cap >= p->items_cap)
		return;
	void **items = lfp_alloc_aligned(&p->core.slabs.alloc, cap * sizeof(void *), sizeof(void *),
					 NULL);
	if (items)
		install_items(p, items, (uint32_t)cap);
}

/* What a trim gives back besides the objects: wholly raw slabs, the side
 * data and directory leaves of slab numbers with no slab left (no other
 * thread reads a Pool's), and the items array's room beyond created. */
static void give_back(lfpool_pool *p, uint32_t chain, uint32_t drop)
{
	lfp_core_destroy_chain(&p->core, false, chain);
	p->created -= drop;
	lfp_slabs_compact(&p->core.slabs);
	shrink_items(p);
}

LFPOOL_API size_t lfpool_pool_trim(lfpool_pool *p, size_t keep)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "trim after destroy"))
		return 0;
	uint32_t n = count_of(p);
	if (n <= keep) {
		give_back(p, LFP_NIL, 0);	/* wholly raw slabs */
		return 0;
	}
	/* The bottom of the stack is the coldest: destroy from there. */
	uint32_t drop = n - (uint32_t)keep, chain = LFP_NIL;
	for (uint32_t i = 0; i < drop; i++) {
		uint32_t idx = lfp_slabs_index(&p->core.slabs, p->fast.low[i]);
		*lfp_slabs_link(&p->core.slabs, idx) = chain;
		chain = idx;
	}
	memmove(p->fast.low, p->fast.low + drop, keep * sizeof(void *));
	set_count(p, (uint32_t)keep);
	give_back(p, chain, drop);
	p->core.trims++;
	return drop;
}

LFPOOL_API int lfpool_pool_owns(const lfpool_pool *p, const void *ptr)
{
	/* A destroyed debug pool keeps its slabs (for these reports): it
	 * owns nothing, whatever they hold. */
	if (lfp_core_dead(&p->core, &p->magic, ptr, "owns after destroy"))
		return 0;
	return lfp_core_owns(&p->core, ptr);
}

LFPOOL_API int lfpool_pool_dump(const lfpool_pool *p, FILE *out)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "dump after destroy"))
		return -1;
	lfpool_stats st;
	lfpool_pool_stats(p, &st);
	return lfp_core_dump(&p->core, &st, out);
}

static void show(const void *p, FILE *out)
{
	lfpool_pool_dump(p, out);
}

LFPOOL_API void lfpool_pool_stats(const lfpool_pool *p, lfpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (lfp_core_dead(&p->core, &p->magic, NULL, "stats after destroy"))
		return;
	lfp_core_stats(&p->core, st);
	st->misses = p->misses;
	st->created = p->created;
	st->retained = count_of(p);
	st->live = st->created - st->retained;
	/* The item array counts only when the allocator gave it (common.h). */
	if (p->fast.low != inline_items((lfpool_pool *)p))
		st->bytes_held += (uint64_t)p->items_cap * sizeof(void *);
}

#ifdef LFPOOL_DEBUG
/* Every pool of a debug build is a debug pool (core.h, lfp_debug_wanted),
 * whose fast view stays empty, top at low and end NULL, so that every get
 * and put takes the checked slow path: an inline path that found an
 * object or room in the view would skip the checks. */
static void census_fast_view(struct lfp_census *cs, const lfpool_pool *p)
{
	const struct lfpool_pool_fast *f = &p->fast;
	if (f->top != f->low)	/* through uintptr_t: low may be NULL */
		lfp_census_fail(cs, "a debug pool's fast view has top %lld slots above low, not 0",
				(long long)((intptr_t)((uintptr_t)f->top - (uintptr_t)f->low) /
					    (intptr_t)sizeof(void *)));
	else if (f->end)
		lfp_census_fail(cs, "a debug pool's fast view has end %p, not NULL", (void *)f->end);
}

int lfp_pool_validate(const lfpool_pool *p, char *why, size_t why_size)
{
	struct lfp_census cs;
	if (lfp_census_begin(&cs, &p->core, why, why_size)) {
		census_fast_view(&cs, p);
		uint32_t n = cs.bad ? 0 : count_of(p);
		if (n > p->items_cap)
			lfp_census_fail(&cs, "%u pooled objects in an array of %u", n, p->items_cap);
		for (uint32_t i = 0; i < n && !cs.bad; i++)
			lfp_census_obj(&cs, p->fast.low[i], "the pool's array");
	}
	return lfp_census_end(&cs, p->created);
}
#endif
