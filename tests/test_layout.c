/* SPDX-License-Identifier: MIT */
/*
 * test_layout.c - where objects lie, for every size x alignment x flavour:
 * each object aligned, no two overlapping (by address and by a pattern
 * written into each), and owns() true for objects, false for anything else.
 */
#include <stdint.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "atomic.h"	/* lfp_cas_pair_acqrel */
#include "support.h"

struct layout_case {
	size_t size, align;
	enum flavour fl;
};

static const size_t sizes[] = { 1, 8, 24, 64, 100, 4096, 70000 };
static const size_t aligns[] = { 1, 8, 16, 64, 4096 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define NALIGNS (sizeof(aligns) / sizeof(aligns[0]))
#define NCASES (NSIZES * NALIGNS * FL_COUNT)

ParameterizedTestParameters(layout, objects)
{
	static struct layout_case cases[NCASES];
	size_t n = 0;
	for (size_t s = 0; s < NSIZES; s++)
		for (size_t a = 0; a < NALIGNS; a++)
			for (int f = 0; f < FL_COUNT; f++)
				cases[n++] = (struct layout_case){ sizes[s], aligns[a], f };
	return cr_make_param_array(struct layout_case, cases, n);
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return (x > y) - (x < y);
}

ParameterizedTest(struct layout_case *c, layout, objects)
{
	const struct flavour_ops *ops = &flavours[c->fl];
	lfpool_config cfg = { .obj_size = c->size, .align = c->align };
	void *pool = ops->create(&cfg);
	cr_assert_not_null(pool, "%s size %zu align %zu", ops->name, c->size, c->align);

	/* Enough objects to fill a slab and spill into a third one. */
	size_t cap = 4096, n = 0;
	void **objs = malloc(cap * sizeof(*objs));
	lfpool_stats st;
	do {
		if (n == cap)
			objs = realloc(objs, (cap *= 2) * sizeof(*objs));
		objs[n] = ops->get(pool);
		cr_assert_not_null(objs[n]);
		n++;
		ops->stats(pool, &st);
	} while (st.slab_allocs < 3);

	for (size_t i = 0; i < n; i++) {
		cr_assert_eq((uintptr_t)objs[i] % c->align, 0, "object %zu at %p not %zu-aligned",
			     i, objs[i], c->align);
		cr_assert(ops->owns(pool, objs[i]));
		cr_assert_not(ops->owns(pool, (char *)objs[i] + 1), "interior pointer owned");
		if (c->size > 2)
			cr_assert_not(ops->owns(pool, (char *)objs[i] + c->size - 1));
		fill_pattern(objs[i], c->size, (unsigned)i);
	}
	for (size_t i = 0; i < n; i++)
		cr_assert(check_pattern(objs[i], c->size, (unsigned)i), "object %zu overwritten", i);

	qsort(objs, n, sizeof(*objs), by_address);
	for (size_t i = 1; i < n; i++)
		cr_assert_geq((uintptr_t)objs[i], (uintptr_t)objs[i - 1] + c->size,
			      "objects %p and %p overlap", objs[i - 1], objs[i]);

	/* Foreign pointers: the stack, the heap, another pool's object, NULL. */
	int local;
	void *heap = malloc(c->size);
	void *other = ops->create(&cfg);
	void *theirs = ops->get(other);
	cr_assert_not(ops->owns(pool, &local));
	cr_assert_not(ops->owns(pool, heap));
	cr_assert_not(ops->owns(pool, theirs));
	cr_assert(ops->owns(other, theirs));
	cr_assert_not(ops->owns(other, objs[0]));
	cr_assert_not(ops->owns(pool, NULL));
	ops->put(other, theirs);
	ops->destroy(other);
	free(heap);

	for (size_t i = 0; i < n; i++)
		ops->put(pool, objs[i]);
	ops->stats(pool, &st);
	cr_assert_eq(st.created, n);
	cr_assert_eq(st.retained, n);
	cr_assert_eq(st.live, 0);
	free(objs);
	ops->destroy(pool);
}

/* Slab colouring (lib/slab.c): where a slab has room after its objects,
 * each new pool's objects start a cache line further in, round robin, so
 * that many pools' first objects do not share the cache sets of one offset
 * from a slab boundary.  300-byte objects leave 256 bytes in an 8 KiB
 * slab: five colours, so eight new pools' first objects cannot all lie at
 * one page offset. */
Test(layout, new_pools_colour_their_slabs)
{
	lfpool_config c = { .obj_size = 300, .prewarm = 1, .name = "colour" };
	lfpool_pool *p[8];
	void *o[8];
	int distinct = 0;
	for (int i = 0; i < 8; i++) {
		p[i] = lfpool_pool_create(&c);
		cr_assert_not_null(p[i]);
		o[i] = lfpool_pool_get(p[i]);
		cr_assert_not_null(o[i]);
		cr_assert(lfpool_pool_owns(p[i], o[i]));
		int seen = 0;
		for (int k = 0; k < i; k++)
			seen |= ((uintptr_t)o[k] & 4095) == ((uintptr_t)o[i] & 4095);
		distinct += !seen;
	}
	cr_assert_gt(distinct, 1, "every pool's first object at one page offset");
	for (int i = 0; i < 8; i++) {
		lfpool_pool_put(p[i], o[i]);
		cr_assert_eq(lfpool_pool_destroy(p[i]), 0);
	}
}

/*
 * One block per small pool: a release pool of the default
 * allocator sized for few objects keeps its first slab's side data (and a
 * Pool its items array) in its own block, right after its struct, so a
 * first get writes no block of another page and destroy frees none.  Seen
 * through the inline paths' views: a Pool's items and a Concurrent pool's
 * slab 0 links lie within a few KiB after the pool; from the shared cache
 * of small blocks (or malloc) they lay elsewhere.  Debug pools (every pool
 * of --enable-debug) keep them apart: their struct outlives them in the
 * graveyard.
 */
static bool within_block(const void *pool, const void *p)
{
	uintptr_t a = (uintptr_t)pool, b = (uintptr_t)p;
	return b > a && b - a < 4096;
}

Test(layout, small_pools_one_block)
{
	if (DEBUG_BUILD)
		return;
	lfpool_config c = { .obj_size = 64, .capacity = 8, .name = "one-block" };
	lfpool_pool *p = lfpool_pool_create(&c);
	lfpool_concurrent *q = lfpool_concurrent_create(&c);
	cr_assert(p && q);
	void *a = lfpool_pool_get(p), *b = lfpool_concurrent_get(q);
	cr_assert(a && b);
	const struct lfpool_pool_fast *pf = (const struct lfpool_pool_fast *)p;
	const struct lfpool_concurrent_fast *cf = (const struct lfpool_concurrent_fast *)q;
	cr_assert(within_block(p, pf->low), "a small Pool's items array outside its block");
	cr_assert(within_block(q, cf->links), "a small Concurrent pool's side data outside its block");
	lfpool_pool_put(p, a);
	lfpool_concurrent_put(q, b);
	/* Trim gives slab 0 back and keeps the block's side data and items;
	 * the next get grows slab 0 on them again. */
	cr_assert_eq(lfpool_pool_trim(p, 0), 1);
	cr_assert_eq(lfpool_concurrent_trim(q, 0), 1);
	a = lfpool_pool_get(p);
	b = lfpool_concurrent_get(q);
	cr_assert(a && b && lfpool_pool_owns(p, a) && lfpool_concurrent_owns(q, b));
	cr_assert(within_block(p, pf->low));
	cr_assert(within_block(q, cf->links));
	lfpool_pool_put(p, a);
	lfpool_concurrent_put(q, b);
	cr_assert_eq(lfpool_pool_destroy(p), 0);
	cr_assert_eq(lfpool_concurrent_destroy(q), 0);
}

/* A per-CPU pool's state (its CPU table, which the inline sequences read
 * through the pool's rseq_get) lies in the pool's own block too: a create
 * and a destroy take and free no block of their own for it.  Seen only
 * where the inline sequences run (rseq, a release pool). */
Test(layout, percpu_state_in_pool_block)
{
	lfpool_config c = { .obj_size = 64, .capacity = 8, .magazine_size = 8,
			    .flags = LFPOOL_F_PERCPU, .name = "one-block-cpu" };
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	const struct lfpool_ts_fast *f = (const struct lfpool_ts_fast *)p;
	if (f->rseq_get->areas)	/* else the shut table: no sequence inline */
		cr_assert(within_block(p, f->rseq_get), "the per-CPU state outside the pool's block");
	void *o = lfpool_ts_get(p);
	cr_assert_not_null(o);
	lfpool_ts_put(p, o);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* lfpool/pool.h, struct lfpool_pool_fast: the pooled objects are [low,
 * top) of the items array; a fast put may store while top < end.  A debug
 * pool keeps top at low and end NULL (its every call is checked, so the
 * inline get and put always miss), a pool with a reset hook end NULL (its
 * every put runs the hook), others end at the array's end. */
Test(layout, pool_fast_view_is_the_items_array)
{
	for (int kind = 0; kind < 3; kind++) {
		struct hooks h = { .obj_size = 32 };
		lfpool_config c = { .obj_size = 32, .prewarm = 5, .name = "fast-view" };
		if (kind == 1)
			c.flags = LFPOOL_F_DEBUG;
		if (kind == 2) {
			c.reset = hook_reset;
			c.hook_ctx = &h;
		}
		lfpool_pool *p = lfpool_pool_create(&c);
		cr_assert_not_null(p);
		const struct lfpool_pool_fast *f = (const struct lfpool_pool_fast *)p;
		bool debug = kind == 1 || DEBUG_BUILD;
		cr_assert_not_null(f->low, "kind %d", kind);
		cr_assert_eq(f->top - f->low, debug ? 0 : 5, "kind %d: %td objects in the fast view",
			     kind, f->top - f->low);
		if (debug || kind == 2)
			cr_assert_null(f->end, "kind %d: a fast put would skip the checks or the hook", kind);
		else
			cr_assert_geq(f->end - f->low, 5);
		void *o = lfpool_pool_get(p);
		cr_assert_not_null(o);
		cr_assert_eq(f->top - f->low, debug ? 0 : 4, "kind %d", kind);
		lfpool_pool_put(p, o);
		cr_assert_eq(f->top - f->low, debug ? 0 : 5, "kind %d", kind);
		cr_assert_eq(hook_count(&h.reset), kind == 2, "kind %d: %ld resets", kind,
			     hook_count(&h.reset));
		lfpool_stats st;
		lfpool_pool_stats(p, &st);
		cr_assert_eq(st.retained, 5, "kind %d", kind);
		cr_assert_eq(lfpool_pool_destroy(p), 0);
	}
}

#ifdef LFPOOL_STACK_STEPS_
/*
 * lfpool/impl/tagged_stack.h: the CAS that ends a push or a pop attempt.  A
 * success installs the new top with the next tag; a failure changes
 * nothing and returns the current head whole, also when only the tag
 * differs (ABA).  tests/aarch64.sh runs this on aarch64's ldaxp/stlxp
 * loop, whose mismatch path stores the pair back before returning it.
 */
Test(stack_step, cas_installs_or_returns_the_head)
{
	struct lfpool_stack_head_ head = { .top = 7, .tag = 41 };
	struct lfpool_stack_head_ old = head;
	cr_assert(lfpool_stack_cas_(&head, &old, 3));
	cr_assert(head.top == 3 && head.tag == 41 + LFPOOL_STACK_TAG_STEP_);

	struct lfpool_stack_head_ stale = { .top = 7, .tag = 41 };
	cr_assert_not(lfpool_stack_cas_(&head, &stale, 9));
	cr_assert(stale.top == head.top && stale.tag == head.tag, "a failure returns the head");
	cr_assert(head.top == 3 && head.tag == 41 + LFPOOL_STACK_TAG_STEP_, "and changes nothing");

	struct lfpool_stack_head_ aba = { .top = 3, .tag = 41 };
	cr_assert_not(lfpool_stack_cas_(&head, &aba, 9));
	cr_assert(aba.top == head.top && aba.tag == head.tag);
}

/*
 * lib/atomic.h's pair CAS runs the same 16-byte CAS for the elimination
 * slots (lib/stack.c), with the orders of its own build (ck's or, in the
 * TSan build, the __atomic one): a success installs both words; a failure,
 * on either word, changes nothing and returns the pair whole (a pop whose
 * withdrawal fails takes the index given to it from what it returned).
 */
Test(stack_step, pair_cas_installs_or_returns_the_pair)
{
	lfp_pair slot = { { 5, 9 } };
	lfp_pair seen = slot;
	cr_assert(lfp_cas_pair_acqrel(&slot, &seen, (lfp_pair){ { 6, 10 } }));
	cr_assert(slot.lo == 6 && slot.hi == 10);

	lfp_pair stale_lo = { { 5, 10 } }, stale_hi = { { 6, 9 } };
	cr_assert_not(lfp_cas_pair_acqrel(&slot, &stale_lo, (lfp_pair){ { 7, 11 } }));
	cr_assert(stale_lo.lo == 6 && stale_lo.hi == 10, "a failure returns the pair");
	cr_assert_not(lfp_cas_pair_acqrel(&slot, &stale_hi, (lfp_pair){ { 7, 11 } }));
	cr_assert(stale_hi.lo == 6 && stale_hi.hi == 10, "a failure returns the pair");
	cr_assert(slot.lo == 6 && slot.hi == 10, "and changes nothing");
}
#endif
