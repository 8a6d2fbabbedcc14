/* SPDX-License-Identifier: MIT */
/*
 * depot.c - the depot of ThreadStatic: magazine stacks, loose objects, the
 * magazine census and trim.  See depot.h for the layout and why freeing
 * magazines needs no grace period.
 */
#include <errno.h>
#include <string.h>

#include "depot.h"

/* Magazines per slab, roughly (a slab-size hint to lfp_core_init). */
#define LFP_MAGS_PER_SLAB_HINT 8

int lfp_depot_init(struct lfp_depot *d, uint32_t mag_size, uint32_t max_full,
		   const lfpool_allocator *a)
{
	/* Up to the magazines' core, which lfp_core_init sets up whole but for
	 * its slab directory (the pool's struct came cleared without it:
	 * clearing it here would write it again at every create). */
	memset(d, 0, offsetof(struct lfp_depot, mags));
	lfpool_config mc = {
		.obj_size = (size_t)mag_size * sizeof(void *),
		.align = 64,	/* a magazine starts a cache line */
		.capacity = LFP_MAGS_PER_SLAB_HINT,	/* sizes slabs; the census bounds */
		.allocator = a,
		.name = "magazines",
	};
	int err = lfp_core_init(&d->mags, &mc, LFP_KIND_MAGAZINES);
	if (err)
		return err;
	lfp_stack_init(&d->full);
	lfp_stack_init(&d->empty);
	lfp_stack_init(&d->objs);
	d->mag_size = mag_size;
	d->max_full = max_full;
	return 0;
}

void lfp_depot_fini(struct lfp_depot *d)
{
	lfp_core_fini(&d->mags);
}

/* Whether census word w keeps magazines <= 2 x caches + max_full (depot.h). */
static bool census_within(const struct lfp_depot *d, uint64_t w)
{
	return (uint32_t)w <= 2 * (w >> 32) + d->max_full;
}

/*
 * Give back a private chain of n magazines (raw: no hooks), and take them
 * off the census together with `leaving` (LFP_CENSUS_CACHE when a cache
 * leaves, else 0) in one FAA: two FAAs would let a spare pass the bound
 * between them, while the leaving cache still counts and its magazines no
 * longer do (stress/model/census.pml, census-neg).  A leaving cache's
 * magazines keep their slab for the next cache to join (a thread's exit
 * freed the slab of a lone thread's two magazines and the next thread's
 * first get mapped it again, much of that first get's time);
 * a trim's (leaving 0) give back every slab of magazines wholly unused.
 */
static void free_mags(struct lfp_depot *d, uint32_t chain, size_t n, uint64_t leaving)
{
	if (chain == LFP_NIL)
		n = 0;
	if (leaving)
		lfp_core_keep_chain(&d->mags, true, chain);
	else	/* with no chain too: it releases what leaving caches kept */
		lfp_core_destroy_chain(&d->mags, true, chain);
	uint64_t drop = n + leaving;
	if (!drop)
		return;
	uint64_t was = lfp_faa_u64_rlx(&d->census, (uint64_t)0 - drop);
	LFP_ASSERT((uint32_t)was >= n && was >= drop && census_within(d, was - drop));
}

/* Model: stress/model/census.pml, steps J1-J2. */
int lfp_depot_join(struct lfp_depot *d, uint32_t mags[2])
{
	uint32_t chain;
	uint64_t was = lfp_faa_u64_rlx(&d->census, LFP_CENSUS_CACHE + 2);
	LFP_ASSERT(census_within(d, was + LFP_CENSUS_CACHE + 2));
	if (lfp_core_take_raw(&d->mags, true, 2, &chain) != 0) {
		lfp_faa_u64_rlx(&d->census, (uint64_t)0 - (LFP_CENSUS_CACHE + 2));
		return ENOMEM;
	}
	mags[0] = chain;
	mags[1] = lfp_load_u32_rlx(lfp_slabs_link(&d->mags.slabs, chain));
	return 0;
}

/* Model: stress/model/census.pml, L1-L3: L2 and L3 are one FAA (free_mags). */
void lfp_depot_leave(struct lfp_depot *d, const uint32_t mags[2])
{
	lfp_store_u32_rlx(lfp_slabs_link(&d->mags.slabs, mags[0]), mags[1]);
	lfp_store_u32_rlx(lfp_slabs_link(&d->mags.slabs, mags[1]), LFP_NIL);
	free_mags(d, mags[0], 2, LFP_CENSUS_CACHE);
}

/* Model: stress/model/depot.pml, steps M2-M3; census.pml, S1-S2. */
uint32_t lfp_depot_spare(struct lfp_depot *d)
{
	uint64_t cur = lfp_load_u64_rlx(&d->census);
	do {
		uint64_t caches = cur >> 32, mags = (uint32_t)cur;
		if (mags + 1 > 2 * caches + d->max_full)
			return LFP_NIL;
	} while (!lfp_cas_u64_rlx(&d->census, &cur, cur + 1));
	LFP_ASSERT(census_within(d, cur + 1));
	uint32_t mag;
	if (lfp_core_take_raw(&d->mags, true, 1, &mag) != 0) {
		lfp_faa_u64_rlx(&d->census, (uint64_t)0 - 1);
		return LFP_NIL;
	}
	return mag;
}

/* Link objs[0..n) in order in front of rest; returns the first index. */
static uint32_t link_objs(const struct lfp_slabs *s, void *const *objs, size_t n, uint32_t rest)
{
	for (size_t i = n; i-- > 0;) {
		uint32_t idx = lfp_slabs_index(s, objs[i]);
		lfp_store_u32_rlx(lfp_slabs_link(s, idx), rest);
		rest = idx;
	}
	return rest;
}

void lfp_depot_put_objs(struct lfp_depot *d, const struct lfp_slabs *s,
			void *const *objs, size_t n)
{
	if (n == 0)
		return;
	uint32_t first = link_objs(s, objs, n, LFP_NIL);
	lfp_stack_push_chain_mpmc(&d->objs, s, first, lfp_slabs_index(s, objs[n - 1]));
}

uint32_t lfp_depot_get_objs(struct lfp_depot *d, const struct lfp_slabs *s,
			    void **objs, uint32_t max)
{
	uint32_t idx = LFP_NIL;
	uint32_t n = lfp_stack_pop_upto_mpmc(&d->objs, s, max, &idx);
	for (uint32_t i = 0; i < n; i++) {
		objs[i] = lfp_slabs_ptr(s, idx);
		idx = lfp_load_u32_rlx(lfp_slabs_link(s, idx));
	}
	return n;
}

/* Give the first keep entries of the private chain back to st with one CAS
 * (*kept: how many there were); returns the rest, LFP_NIL if none. */
static uint32_t keep_top(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t chain,
			 size_t keep, size_t *kept)
{
	*kept = 0;
	if (keep == 0 || chain == LFP_NIL)
		return chain;
	uint32_t last = chain, rest = lfp_load_u32_rlx(lfp_slabs_link(s, chain));
	for (*kept = 1; *kept < keep && rest != LFP_NIL; ++*kept) {
		last = rest;
		rest = lfp_load_u32_rlx(lfp_slabs_link(s, rest));
	}
	lfp_stack_push_chain_mpmc(st, s, chain, last);
	return rest;
}

/* Take all but the top keep entries of st as a private chain (LFP_NIL if
 * none); the top ones (*kept of them) go back with one CAS. */
static uint32_t pop_beyond(struct lfp_stack *st, const struct lfp_slabs *s, size_t keep,
			   size_t *kept)
{
	return keep_top(st, s, lfp_stack_pop_all_mpmc(st), keep, kept);
}

/* Put the objects of every magazine of a private chain of full magazines in
 * front of the object chain *objs; returns how many magazines. */
static size_t unload_mags(const struct lfp_depot *d, const struct lfp_slabs *s, uint32_t mags,
			  uint32_t *objs)
{
	size_t n = 0;
	for (uint32_t m = mags; m != LFP_NIL; m = lfp_load_u32_rlx(lfp_slabs_link(&d->mags.slabs, m))) {
		*objs = link_objs(s, lfp_mag_objs(d, m), d->mag_size, *objs);
		n++;
	}
	return n;
}

/* Model: stress/model/depot.pml, steps T1-T7 and K1 (the push back of the
 * loose objects kept for keep_objs: check depot-trim-keep). */
void lfp_depot_trim(struct lfp_depot *d, const struct lfp_core *c, uint32_t keep_full,
		    uint32_t keep_empty, size_t keep_objs, struct lfp_depot_trimmed *t)
{
	const struct lfp_slabs *ms = &d->mags.slabs;
	size_t want = keep_objs / d->mag_size, nkept, nspare;
	uint32_t full = pop_beyond(&d->full, ms, want > keep_full ? want : keep_full, &nkept);
	uint32_t empty = pop_beyond(&d->empty, ms, keep_empty, &nspare);
	uint32_t objs = lfp_stack_pop_all_mpmc(&d->objs);
	size_t nfull = unload_mags(d, &c->slabs, full, &objs);
	/* keep_objs counts the kept full magazines' objects too: the rest of
	 * it in loose objects (those of the magazines freed below among them). */
	size_t held = nkept * d->mag_size;
	objs = keep_top(&d->objs, &c->slabs, objs, keep_objs > held ? keep_objs - held : 0,
			&nspare);

	/* One chain of magazines, full ones first, for one release. */
	size_t nempty = 0;
	lfp_chain_last(ms, empty, &nempty);
	uint32_t mags = empty;
	if (full != LFP_NIL) {
		lfp_store_u32_rlx(lfp_slabs_link(ms, lfp_chain_last(ms, full, NULL)), empty);
		mags = full;
	}
	t->mags = mags;
	t->nmags = nfull + nempty;
	t->objs = objs;
}

size_t lfp_depot_trim_free(struct lfp_depot *d, struct lfp_core *c,
			   const struct lfp_depot_trimmed *t)
{
	free_mags(d, t->mags, t->nmags, 0);
	size_t n = 0;
	lfp_chain_last(&c->slabs, t->objs, &n);
	lfp_core_destroy_chain(c, true, t->objs);
	return n;
}

uint32_t lfp_depot_drain(struct lfp_depot *d, const struct lfp_slabs *s)
{
	uint32_t objs = lfp_stack_pop_all_mpmc(&d->objs);
	unload_mags(d, s, lfp_stack_pop_all_mpmc(&d->full), &objs);
	return objs;
}

/*
 * Slabs are added only when the raw stack is empty, i.e. when every object
 * of every slab held is reserved (counted in created, or in the census for
 * magazines) and the one being added for is too: so at most ceil(n / per
 * slab) full slabs and the small ones are ever held at once, and slab
 * numbers are reused in growth order, so side data exists for no more
 * slots than that.
 */
static uint64_t space_bound(const struct lfp_slabs *s, uint64_t n)
{
	uint64_t slabs = (n + s->per_slab - 1) / s->per_slab;
	/* the small slabs come first, all of them at most (slab.h) */
	uint64_t leaves = (slabs + s->small + LFP_LEAF_SLOTS - 1) / LFP_LEAF_SLOTS;
	/* side data per slab: a link word and a state byte per object,
	 * rounded up for small slabs of the default allocator (slab.c) */
	uint64_t side = lfp_slabs_side_bytes(s);
	/* past one leaf, the directory's table too (slab.h) */
	return slabs * (s->slab_bytes + side) + lfp_slabs_small_bytes(s) +
	       leaves * sizeof(struct lfp_slab_leaf) + (leaves > 1 ? LFP_DIR_BYTES : 0);
}

uint64_t lfp_depot_max_bytes(const struct lfp_depot *d, const struct lfp_core *c,
			     uint64_t caches)
{
	/* Past 2^32 caches the bound is no bound: say so, never wrap. */
	if (!c->capacity || caches > UINT32_MAX)
		return UINT64_MAX;
	return space_bound(&c->slabs, c->capacity) +
	       space_bound(&d->mags.slabs, 2 * caches + d->max_full);
}
