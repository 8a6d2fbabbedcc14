/* SPDX-License-Identifier: MIT */
/*
 * census.c - the census behind every flavour's validate (census.h);
 * debug builds only.
 */
#ifdef LFPOOL_DEBUG

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "census.h"

void lfp_census_fail(struct lfp_census *cs, const char *fmt, ...)
{
	if (cs->bad)
		return;	/* keep the first problem */
	cs->bad = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cs->why, cs->why_size, fmt, ap);
	va_end(ap);
}

/* The directory (slab.h): leaf 0 is the inline slots or a full leaf whose
 * first slots they copy; slots below high_water have side data.  A quiet
 * pool only: a growth or release writes the full leaf before the copy. */
void lfp_census_directory(struct lfp_census *cs, const struct lfp_slabs *s)
{
	const struct lfp_slab_slot *l0 = lfp_slabs_leaf(s, 0);
	uint32_t hw = lfp_load_u32_rlx(&s->high_water);
	if (!l0 || s->leaves == 0) {
		lfp_census_fail(cs, "the slabs' directory has no leaf 0");
		return;
	}
	struct lfp_slab_slot *const *dir = lfp_slabs_dir(s);
	if (dir != &s->leaf0 && dir[0] != l0)
		lfp_census_fail(cs, "the directory's leaf 0 differs from its copy");
	for (uint32_t n = 0; n < hw && n < LFP_INLINE_SLOTS; n++)
		if (l0 != s->slot0 && (l0[n].mem != s->slot0[n].mem ||
				       l0[n].links != s->slot0[n].links ||
				       l0[n].state != s->slot0[n].state))
			lfp_census_fail(cs, "inline slot %u differs from leaf 0's", n);
	for (uint32_t n = 0; n < hw && !cs->bad; n++)
		if (lfp_slabs_leaf(s, n >> LFP_LEAF_BITS) && lfp_slabs_slot(s, n)->mem &&
		    !lfp_slabs_slot(s, n)->links)
			lfp_census_fail(cs, "slab %u has memory but no side data", n);
}

bool lfp_census_begin(struct lfp_census *cs, const struct lfp_core *c, char *why,
		      size_t why_size)
{
	const struct lfp_slabs *s = &c->slabs;
	*cs = (struct lfp_census){ .core = c, .why = why, .why_size = why_size };
	lfp_census_directory(cs, s);
	cs->nidx = (size_t)lfp_load_u32_rlx(&s->high_water) << s->off_bits;
	cs->seen = calloc(cs->nidx ? cs->nidx : 1, 1);
	if (!cs->seen)
		lfp_census_fail(cs, "validate: no memory for the census");
	return cs->seen != NULL;
}

void lfp_census_obj(struct lfp_census *cs, const void *obj, const char *place)
{
	const struct lfp_slabs *s = &cs->core->slabs;
	uint32_t idx;
	if (lfp_slabs_lookup(s, obj, &idx) != LFP_LOOKUP_OK) {
		lfp_census_fail(cs, "%s holds %p, not an object of the pool", place, obj);
		return;
	}
	cs->pooled++;
	if (cs->seen[idx]++) {
		lfp_census_fail(cs, "object %p is in two places (again in %s)", obj, place);
		return;
	}
	uint8_t state = lfp_load_u8_rlx(lfp_slabs_state(s, idx));
	if (cs->core->debug && state != LFP_OBJ_POOLED)
		lfp_census_fail(cs, "object %p in %s is %s, not pooled", obj, place,
				state == LFP_OBJ_OUT ? "out" : "raw");
}

void lfp_census_chain(struct lfp_census *cs, uint32_t chain, const char *place)
{
	const struct lfp_slabs *s = &cs->core->slabs;
	size_t steps = 0;
	for (uint32_t i = chain; i != LFP_NIL && !cs->bad;
	     i = lfp_load_u32_rlx(lfp_slabs_link(s, i))) {
		if (++steps > cs->nidx) {
			lfp_census_fail(cs, "%s is a chain with a cycle", place);
			return;
		}
		lfp_census_obj(cs, lfp_slabs_ptr(s, i), place);
	}
}

/* Objects on the raw stack must be raw and found in no pooled place. */
static void check_raw(struct lfp_census *cs)
{
	const struct lfp_slabs *s = &cs->core->slabs;
	size_t steps = 0;
	for (uint32_t i = lfp_stack_top(lfp_stack_load(&cs->core->raw)); i != LFP_NIL && !cs->bad;
	     i = lfp_load_u32_rlx(lfp_slabs_link(s, i))) {
		if (++steps > cs->nidx)
			lfp_census_fail(cs, "the raw stack is a chain with a cycle");
		else if (cs->seen[i])
			lfp_census_fail(cs, "raw index %u is also pooled", i);
		else if (cs->core->debug && lfp_load_u8_rlx(lfp_slabs_state(s, i)) != LFP_OBJ_RAW)
			lfp_census_fail(cs, "index %u on the raw stack is not raw", i);
	}
}

/* Debug pools: every pooled object was found; count those out. */
static uint64_t count_out(struct lfp_census *cs)
{
	const struct lfp_slabs *s = &cs->core->slabs;
	uint64_t out = 0;
	for (size_t i = 0; i < cs->nidx && !cs->bad; i++) {
		uint32_t idx = (uint32_t)i, slab = idx >> s->off_bits;
		if (!lfp_slabs_index_ok(s, idx) || !lfp_slabs_slot(s, slab)->mem)
			continue;
		uint8_t state = lfp_load_u8_rlx(lfp_slabs_state(s, idx));
		if (state == LFP_OBJ_OUT)
			out++;
		else if (state == LFP_OBJ_POOLED && !cs->seen[idx])
			lfp_census_fail(cs, "pooled object %p is in no place (lost)",
					lfp_slabs_ptr(s, idx));
	}
	return out;
}

int lfp_census_end(struct lfp_census *cs, uint64_t created)
{
	if (cs->seen && !cs->bad)
		check_raw(cs);
	if (cs->seen && !cs->bad && cs->core->debug) {
		uint64_t out = count_out(cs);
		if (!cs->bad && cs->pooled + out != created)
			lfp_census_fail(cs, "%llu pooled + %llu out != %llu created",
					(unsigned long long)cs->pooled, (unsigned long long)out,
					(unsigned long long)created);
	} else if (!cs->bad && cs->pooled > created) {
		lfp_census_fail(cs, "%llu pooled > %llu created", (unsigned long long)cs->pooled,
				(unsigned long long)created);
	}
	free(cs->seen);
	cs->seen = NULL;
	return cs->bad ? -1 : 0;
}

#endif
