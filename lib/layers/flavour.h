/* SPDX-License-Identifier: MIT */
/*
 * flavour.h - one handle over the three flavours, for the layers built on
 * them.  Every get and put is the flavour's own public call, so a layer's
 * objects go through the same fast paths and the same debug checks as any
 * other pool's.
 */
#ifndef LFP_FLAVOUR_H
#define LFP_FLAVOUR_H

#include <stdbool.h>
#include <stdlib.h>

#include "core.h"
#include "lfpool/flavour.h"

struct lfp_any {
	lfpool_flavour kind;
	void *pool;
};

/* Create a pool of flavour kind per cfg into *a; 0 or errno (EINVAL for an
 * unknown flavour, else what the flavour's create set). */
int lfp_any_create(struct lfp_any *a, lfpool_flavour kind, const lfpool_config *cfg);
/* Destroy the pool: 0, or EBUSY (ThreadStatic with cache handles left).
 * a->pool keeps its value: a debug pool stays readable after destroy and
 * reports a later put. */
int lfp_any_destroy(struct lfp_any *a);
/* Destroy pooled objects: all but none for Pool and Concurrent, ThreadStatic's
 * idle memory; returns the number destroyed. */
size_t lfp_any_trim(struct lfp_any *a);
int lfp_any_owns(const struct lfp_any *a, const void *ptr);
void lfp_any_stats(const struct lfp_any *a, lfpool_stats *st);
/* Add every counter of st to *sum. */
void lfp_stats_add(lfpool_stats *sum, const lfpool_stats *st);

/* Whether several threads may use the pool at once. */
static inline bool lfp_any_mt(const struct lfp_any *a)
{
	return a->kind != LFPOOL_FLAVOUR_POOL;
}

static inline void *lfp_any_get(const struct lfp_any *a)
{
	return lfpool_flavour_get(a->kind, a->pool);
}

static inline void lfp_any_put(const struct lfp_any *a, void *obj)
{
	lfpool_flavour_put(a->kind, a->pool, obj);
}

#endif
