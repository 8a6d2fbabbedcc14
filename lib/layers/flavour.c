/* SPDX-License-Identifier: MIT */
/*
 * flavour.c - the rare calls of the flavour handle (see flavour_internal.h).
 */
#include <errno.h>

#include "flavour_internal.h"
#include "census.h"

int lfp_flavour_create(struct lfp_flavour *a, lfpool_flavour kind, const lfpool_config *cfg)
{
	a->kind = kind;
	switch (kind) {
	case LFPOOL_FLAVOUR_POOL:
		a->pool = lfpool_pool_create(cfg);
		break;
	case LFPOOL_FLAVOUR_CONCURRENT:
		a->pool = lfpool_concurrent_create(cfg);
		break;
	case LFPOOL_FLAVOUR_TS:
		a->pool = lfpool_ts_create(cfg);
		break;
	default:
		a->pool = NULL;
		return lfp_debug_refuse(cfg && cfg->name ? cfg->name : "(no flavour)",
					"flavour %d is no lfpool_flavour", (int)kind);
	}
	return a->pool ? 0 : errno;
}

int lfp_flavour_destroy(struct lfp_flavour *a)
{
	switch (a->kind) {
	case LFPOOL_FLAVOUR_POOL:
		lfpool_pool_destroy((lfpool_pool *)a->pool);
		break;
	case LFPOOL_FLAVOUR_CONCURRENT:
		lfpool_concurrent_destroy((lfpool_concurrent *)a->pool);
		break;
	case LFPOOL_FLAVOUR_TS:
		if (lfpool_ts_destroy((lfpool_ts *)a->pool) != 0)
			return errno;
		break;
	}
	return 0;
}

int lfp_flavour_destroy_layer(struct lfp_flavour *a, void *owner, uint32_t *magic, bool debug,
			      const char *name)
{
	int err = lfp_flavour_destroy(a);
	if (err) {
		errno = err;
		return -1;
	}
	lfp_retire(owner, magic, debug, name, 0, NULL);
	return 0;
}

size_t lfp_flavour_trim(struct lfp_flavour *a, size_t keep)
{
	switch (a->kind) {
	case LFPOOL_FLAVOUR_POOL:
		return lfpool_pool_trim((lfpool_pool *)a->pool, keep);
	case LFPOOL_FLAVOUR_CONCURRENT:
		return lfpool_concurrent_trim((lfpool_concurrent *)a->pool, keep);
	default:	/* LFPOOL_FLAVOUR_TS */
		return lfpool_ts_trim((lfpool_ts *)a->pool, keep);
	}
}

int lfp_flavour_owns(const struct lfp_flavour *a, const void *ptr)
{
	switch (a->kind) {
	case LFPOOL_FLAVOUR_POOL:
		return lfpool_pool_owns((const lfpool_pool *)a->pool, ptr);
	case LFPOOL_FLAVOUR_CONCURRENT:
		return lfpool_concurrent_owns((const lfpool_concurrent *)a->pool, ptr);
	default:	/* LFPOOL_FLAVOUR_TS */
		return lfpool_ts_owns((const lfpool_ts *)a->pool, ptr);
	}
}

int lfp_flavour_dump(const struct lfp_flavour *a, FILE *out)
{
	if (a->kind == LFPOOL_FLAVOUR_POOL)
		return lfpool_pool_dump(a->pool, out);
	if (a->kind == LFPOOL_FLAVOUR_CONCURRENT)
		return lfpool_concurrent_dump(a->pool, out);
	return lfpool_ts_dump(a->pool, out);
}

void lfp_flavour_stats(const struct lfp_flavour *a, lfpool_stats *st)
{
	switch (a->kind) {
	case LFPOOL_FLAVOUR_POOL:
		lfpool_pool_stats((const lfpool_pool *)a->pool, st);
		return;
	case LFPOOL_FLAVOUR_CONCURRENT:
		lfpool_concurrent_stats((const lfpool_concurrent *)a->pool, st);
		return;
	default:	/* LFPOOL_FLAVOUR_TS */
		lfpool_ts_stats((const lfpool_ts *)a->pool, st);
	}
}

void lfp_flavour_stats_add(lfpool_stats *sum, const lfpool_stats *st)
{
	sum->gets += st->gets;
	sum->puts += st->puts;
	sum->hits += st->hits;
	sum->misses += st->misses;
	sum->mag_exchanges += st->mag_exchanges;
	sum->cas_retries += st->cas_retries;
	sum->eliminated += st->eliminated;
	sum->slab_allocs += st->slab_allocs;
	sum->slab_frees += st->slab_frees;
	sum->trims += st->trims;
	sum->created += st->created;
	sum->retained += st->retained;
	sum->live += st->live;
	sum->bytes_held += st->bytes_held;
}

#ifdef LFPOOL_DEBUG
int lfp_flavour_validate(const struct lfp_flavour *a, char *why, size_t why_size)
{
	switch (a->kind) {
	case LFPOOL_FLAVOUR_POOL:
		return lfp_pool_validate(a->pool, why, why_size);
	case LFPOOL_FLAVOUR_CONCURRENT:
		return lfp_concurrent_validate(a->pool, why, why_size);
	default:	/* LFPOOL_FLAVOUR_TS */
		return lfp_ts_validate(a->pool, why, why_size);
	}
}
#endif
