/* SPDX-License-Identifier: MIT */
/*
 * validate.c - ThreadStatic's validate (census.h), debug builds only:
 * every object of a quiet pool in exactly one place (ts_internal.h lists them), and
 * the depot's census word equal to the caches and magazines there are.
 */
#ifdef LFPOOL_DEBUG

#include "ts_internal.h"
#include "ts_percpu.h"
#include "census.h"

/* Magazines on a depot stack, each a chain of magazine indices. */
static uint64_t count_mags(struct lfp_census *cs, const struct lfp_depot *d, uint64_t head,
			   const char *place)
{
	const struct lfp_slabs *ms = &d->mags.slabs;
	uint64_t n = 0, bound = (uint64_t)lfp_load_u32_rlx(&ms->high_water) << ms->off_bits;
	for (uint32_t m = (uint32_t)head; m != LFP_NIL; m = lfp_load_u32_rlx(lfp_slabs_link(ms, m)))
		if (++n > bound) {
			lfp_census_fail(cs, "the depot's %s is a chain with a cycle", place);
			break;
		}
	return n;
}

static void walk_depot(struct lfp_census *cs, const lfpool_ts *p)
{
	const struct lfp_depot *d = &p->depot;
	for (uint32_t m = lfp_stack_top(lfp_stack_load(&d->full)); m != LFP_NIL && !cs->bad;
	     m = lfp_load_u32_rlx(lfp_slabs_link(&d->mags.slabs, m)))
		for (uint32_t i = 0; i < d->mag_size; i++)
			lfp_census_obj(cs, lfp_mag_objs(d, m)[i], "a full magazine of the depot");
	lfp_census_chain(cs, lfp_stack_top(lfp_stack_load(&d->objs)), "the depot's loose stack");
}

/* A cache's loaded magazine holds objs[low .. count) (thieves raise low;
 * debug pools keep low 0 and their count in debug_count), the previous one
 * prev_objs[0 .. prev_count) (cache.c). */
static void walk_cache(struct lfp_census *cs, const lfpool_ts_cache *c, uint32_t mag_size)
{
	uint32_t loaded = c->checked ? c->debug_count
				     : (uint32_t)lfp_cache_index(c, lfp_load_slots_rlx(&c->fast.top));
	int32_t low = c->checked ? 0 : lfp_cache_index(c, lfp_load_slots_rlx(&c->fast.low));
	if (loaded > mag_size || low < 0 || (uint32_t)low > loaded || c->prev_count > mag_size) {
		lfp_census_fail(cs, "a cache's magazines hold [%d, %u) and %u of %u", low, loaded,
				c->prev_count, mag_size);
		return;
	}
	for (uint32_t i = (uint32_t)low; i < loaded; i++)
		lfp_census_obj(cs, c->fast.objs[i], "a cache's loaded magazine");
	for (uint32_t i = 0; i < c->prev_count; i++)
		lfp_census_obj(cs, c->prev_objs[i], "a cache's previous magazine");
}

static void in_cpu_area(void *obj, void *cs)
{
	lfp_census_obj(cs, obj, "a CPU area");
}

/* The census word: one cache per cache on the list, and two magazines per
 * cache plus those on the depot's stacks. */
static void check_census(struct lfp_census *cs, const lfpool_ts *p, uint64_t caches)
{
	const struct lfp_depot *d = &p->depot;
	uint64_t word = lfp_load_u64_rlx(&d->census);
	uint64_t full = count_mags(cs, d, lfp_stack_top(lfp_stack_load(&d->full)), "full stack");
	uint64_t empty = count_mags(cs, d, lfp_stack_top(lfp_stack_load(&d->empty)), "empty stack");
	if (!cs->bad && (word >> 32 != caches || (uint32_t)word != 2 * caches + full + empty))
		lfp_census_fail(cs, "the depot's census says %llu caches and %u magazines; "
				"there are %llu caches and %llu magazines",
				(unsigned long long)(word >> 32),
				(uint32_t)word, (unsigned long long)caches,
				(unsigned long long)(2 * caches + full + empty));
	if (!cs->bad && full + empty > d->max_full)
		lfp_census_fail(cs, "the depot holds %llu magazines, above depot_max %u",
				(unsigned long long)(full + empty), d->max_full);
}

int lfp_ts_validate(const lfpool_ts *p, char *why, size_t why_size)
{
	struct lfp_census cs;
	if (lfp_census_begin(&cs, &p->core, why, why_size)) {
		/* The magazines' directory moves its leaf 0 in use (slab.c). */
		lfp_census_directory(&cs, &p->depot.mags.slabs);
		lfp_ts_lock_busy();
		uint64_t caches = 0;
		for (const lfpool_ts_cache *c = p->caches; c && !cs.bad; c = c->next, caches++)
			walk_cache(&cs, c, p->depot.mag_size);
		lfp_ts_unlock_busy();
		walk_depot(&cs, p);
		lfp_ts_percpu_each(p, in_cpu_area, &cs);
		if (!cs.bad)
			check_census(&cs, p, caches);
	}
	return lfp_census_end(&cs, lfp_load_u64_rlx(&p->created));
}

#endif
