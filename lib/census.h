/* SPDX-License-Identifier: MIT */
/*
 * census.h - debug builds only (LFPOOL_DEBUG): check that every object of
 * a quiet pool is in exactly one place.
 *
 * An object is out with a user, pooled in exactly one of its flavour's
 * places (Pool: the array; Concurrent: the free stack; ThreadStatic: a
 * cache's loaded or previous magazine, a full magazine of the depot, the
 * loose stack, a CPU area), or raw (slab memory on the core's raw stack).
 * A census walks every place: each pooled object must be found once, in
 * the pooled state; each object found nowhere must be out; pooled + out
 * must be what the pool says it created.  The stress drivers call the
 * flavours' validate between rounds, when no other thread uses the pool.
 *
 * Owners: census.c (the census), pool.c (lfp_pool_validate),
 * concurrent.c (lfp_concurrent_validate), threadstatic/validate.c
 * (lfp_ts_validate), layers/array.c, layers/rc.c, layers/closure.c (the
 * layers' validate: each pool below them), layers/flavour_internal.h
 * (lfp_flavour_validate, the dispatch).
 */
#ifndef LFP_CENSUS_H
#define LFP_CENSUS_H

#ifdef LFPOOL_DEBUG

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "lfpool/array.h"
#include "lfpool/closure.h"
#include "lfpool/concurrent.h"
#include "lfpool/pool.h"
#include "lfpool/rc.h"
#include "lfpool/ts.h"

struct lfp_census {
	const struct lfp_core *core;
	uint8_t *seen;		/* per index: times found in a pooled place */
	size_t nidx;
	uint64_t pooled;	/* objects found in pooled places */
	char *why;		/* the first problem found */
	size_t why_size;
	bool bad;
};

/* Start a census of c's objects; false (ENOMEM, said in why) if it cannot. */
bool lfp_census_begin(struct lfp_census *cs, const struct lfp_core *c, char *why,
		      size_t why_size);
/* Check the slab directory s (c's, or another core's of the flavour such
 * as a ThreadStatic pool's magazines), as lfp_census_begin does c's. */
void lfp_census_directory(struct lfp_census *cs, const struct lfp_slabs *s);
/* obj was found pooled in `place` (a phrase: "the free stack"). */
void lfp_census_obj(struct lfp_census *cs, const void *obj, const char *place);
/* Every object of a chain of c's indices (LFP_NIL: none) found in place. */
void lfp_census_chain(struct lfp_census *cs, uint32_t chain, const char *place);
/* Record a problem found by the flavour ("printf" format). */
void lfp_census_fail(struct lfp_census *cs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Check what the walk found against the state bytes, the raw stack and
 * created; free the census.  0, or -1 with the first problem in why. */
int lfp_census_end(struct lfp_census *cs, uint64_t created);

/* Each flavour's check of a quiet pool: 0, or -1 with a sentence in why. */
int lfp_pool_validate(const lfpool_pool *p, char *why, size_t why_size);
int lfp_concurrent_validate(const lfpool_concurrent *c, char *why, size_t why_size);
int lfp_ts_validate(const lfpool_ts *p, char *why, size_t why_size);
/* The layers': every pool they stand on (each size class of an array). */
int lfp_array_validate(const lfpool_array *ap, char *why, size_t why_size);
int lfp_rc_validate(const lfpool_rc *rc, char *why, size_t why_size);
int lfp_closure_validate(const lfpool_closure_pool *cp, char *why, size_t why_size);

#endif
#endif
