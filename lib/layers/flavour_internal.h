/* SPDX-License-Identifier: MIT */
/*
 * flavour_internal.h - one handle over the three flavours, for the layers built on
 * them.  Every get and put is the flavour's own public call, so a layer's
 * objects go through the same fast paths and the same debug checks as any
 * other pool's.
 *
 * Owners: flavour.c defines every function declared here; the inlines are
 * here.  Its users: array.c (array pools), rc.c (counted objects),
 * closure.c (closures).
 */
#ifndef LFP_FLAVOUR_INTERNAL_H
#define LFP_FLAVOUR_INTERNAL_H

#include <stdbool.h>
#include <stdlib.h>

#include "core.h"
#include "lfpool/flavour.h"

struct lfp_flavour {
	lfpool_flavour kind;
	void *pool;
};

/* Create a pool of flavour kind per cfg into *a; 0 or errno (EINVAL for an
 * unknown flavour, else what the flavour's create set). */
int lfp_flavour_create(struct lfp_flavour *a, lfpool_flavour kind, const lfpool_config *cfg);
/* Destroy the pool: 0, or EBUSY (ThreadStatic with cache handles left).
 * a->pool keeps its value: a debug pool stays readable after destroy and
 * reports a later put. */
int lfp_flavour_destroy(struct lfp_flavour *a);
/* A layer's destroy over one flavour pool (rc, closure): destroy a, then
 * retire the layer owner (lfp_retire); 0, or -1 with errno EBUSY and
 * nothing retired. */
int lfp_flavour_destroy_layer(struct lfp_flavour *a, void *owner, uint32_t *magic, bool debug,
			      const char *name);
/* The flavour's trim, keeping keep pooled objects; returns how many it
 * destroyed. */
size_t lfp_flavour_trim(struct lfp_flavour *a, size_t keep);
int lfp_flavour_owns(const struct lfp_flavour *a, const void *ptr);
void lfp_flavour_stats(const struct lfp_flavour *a, lfpool_stats *st);
/* The flavour's dump (lfpool_pool_dump). */
int lfp_flavour_dump(const struct lfp_flavour *a, FILE *out);
#ifdef LFPOOL_DEBUG
/* The validate of a's flavour (census.h): 0, or -1 with why. */
int lfp_flavour_validate(const struct lfp_flavour *a, char *why, size_t why_size);
#endif
/* Add every counter of st to *sum. */
void lfp_flavour_stats_add(lfpool_stats *sum, const lfpool_stats *st);

/* Whether several threads may use the pool at once. */
static inline bool lfp_flavour_mt(const struct lfp_flavour *a)
{
	return a->kind != LFPOOL_FLAVOUR_POOL;
}

static inline void *lfp_flavour_get(const struct lfp_flavour *a)
{
	return lfpool_flavour_get(a->kind, a->pool);
}

static inline void lfp_flavour_put(const struct lfp_flavour *a, void *obj)
{
	lfpool_flavour_put(a->kind, a->pool, obj);
}

#endif
