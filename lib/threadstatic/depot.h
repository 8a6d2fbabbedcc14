/* SPDX-License-Identifier: MIT */
/*
 * depot.h - the shared layer under ThreadStatic's caches: full and empty
 * magazines, and loose objects below them.
 *
 * Magazines (arrays of mag_size object pointers) are objects of an index
 * space of their own (a struct lfp_core with no hooks), so the depot's full
 * and empty stacks are the same tagged-index Treiber stacks as every other
 * free list (stack.h): ABA-safe, links in side data.  A magazine's memory
 * is touched only by its owner: the cache holding it, or the thread whose
 * CAS took it off a depot stack.  Freeing magazine slabs therefore needs no
 * grace period, for the reason slab.h gives for objects.
 *
 * Loose objects sit on one more stack of object indices.  They are moved in
 * chains: a magazine's worth is pushed, or popped, with one CAS.
 *
 * The census word counts caches and magazines together, so that one CAS
 * can keep magazines <= 2 x caches + max_full.  Every cache holds two
 * magazines (three for a moment during an exchange), hence the depot never
 * holds more than max_full magazines, full and empty together.
 */
#ifndef LFP_DEPOT_H
#define LFP_DEPOT_H

#include "core.h"

#define LFP_CENSUS_CACHE (1ull << 32)	/* one cache in the census word */

struct lfp_depot {
	struct lfp_stack full;		/* magazines of mag_size objects */
	struct lfp_stack empty;		/* magazines of none */
	struct lfp_stack objs;		/* loose constructed objects */
	uint64_t census __attribute__((aligned(64)));	/* caches << 32 | magazines */
	uint32_t mag_size, max_full;
	struct lfp_core mags;		/* magazine memory */
};

/* Set d up; 0, or EINVAL/ENOMEM. */
int lfp_depot_init(struct lfp_depot *d, uint32_t mag_size, uint32_t max_full,
		   const lfpool_allocator *a);
/* Free every magazine and its slabs (objects must be gone). */
void lfp_depot_fini(struct lfp_depot *d);

/* The object pointers of magazine mag. */
static inline void **lfp_mag_objs(const struct lfp_depot *d, uint32_t mag)
{
	return (void **)lfp_slabs_ptr(&d->mags.slabs, mag);
}

/* A magazine off the full or empty stack, LFP_NIL if none; any thread. */
static inline uint32_t lfp_depot_pop(struct lfp_depot *d, struct lfp_stack *st)
{
	return lfp_stack_pop_mpmc(st, &d->mags.slabs);
}

/* Give magazine mag to the full or empty stack; any thread. */
static inline void lfp_depot_push(struct lfp_depot *d, struct lfp_stack *st, uint32_t mag)
{
	lfp_stack_push_mpmc(st, &d->mags.slabs, mag);
}

/* A new cache's two empty magazines: 0, or ENOMEM with nothing taken. */
int lfp_depot_join(struct lfp_depot *d, uint32_t mags[2]);
/* A leaving cache's two magazines, emptied: free them. */
void lfp_depot_leave(struct lfp_depot *d, const uint32_t mags[2]);
/* One more empty magazine if the census allows it, else LFP_NIL. */
uint32_t lfp_depot_spare(struct lfp_depot *d);

/* Push n objects of slab space s (n may be 0) as one chain; any thread. */
void lfp_depot_put_objs(struct lfp_depot *d, const struct lfp_slabs *s,
			void *const *objs, size_t n);
/* Pop up to max loose objects into objs with one CAS; returns how many. */
uint32_t lfp_depot_get_objs(struct lfp_depot *d, const struct lfp_slabs *s,
			    void **objs, uint32_t max);

/* What a trim took out of the depot: a private chain of magazines and one
 * of objects, which lfp_depot_trim_free destroys. */
struct lfp_depot_trimmed {
	uint32_t mags, objs;
	size_t nmags;
};
/*
 * Keep the top keep_empty empty magazines and the top full ones, as many as
 * keep_full or as hold keep_objs objects, whichever is more, and as many
 * loose objects as keep_objs wants beyond those; take the other magazines
 * and every other object out into *t.  Any thread, at any time, inside a
 * grace section (its pops).
 */
void lfp_depot_trim(struct lfp_depot *d, const struct lfp_core *c, uint32_t keep_full,
		    uint32_t keep_empty, size_t keep_objs, struct lfp_depot_trimmed *t);
/* Free t's magazines and destroy its objects through c (fini hooks, wholly
 * free slabs given back): outside a grace section (grace.h: no hook runs
 * inside one).  Returns the number of objects destroyed. */
size_t lfp_depot_trim_free(struct lfp_depot *d, struct lfp_core *c,
			   const struct lfp_depot_trimmed *t);
/* Every object in the depot as one private chain (destroy only). */
uint32_t lfp_depot_drain(struct lfp_depot *d, const struct lfp_slabs *s);

/* The most backing bytes the objects of c (at most its capacity) and the
 * magazines of d can hold while at most `caches` caches exist at once;
 * UINT64_MAX when c has no capacity. */
uint64_t lfp_depot_max_bytes(const struct lfp_depot *d, const struct lfp_core *c,
			     uint64_t caches);

#endif
