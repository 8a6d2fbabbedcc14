/* SPDX-License-Identifier: MIT */
/*
 * lfpool/flavour.h - names the flavour under a layer that is built on pools
 * (array pools, reference-counted objects, closures), and calls the get and
 * put of a pool of a flavour named at run time.  Include <lfpool.h>.
 */
#ifndef LFPOOL_FLAVOUR_H
#define LFPOOL_FLAVOUR_H

#include "lfpool/concurrent.h"
#include "lfpool/pool.h"
#include "lfpool/ts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which pool a layer keeps its objects in: the first argument of every
 * layer's create (lfpool_array_create, lfpool_rc_create,
 * lfpool_closure_pool_create); 0 or any other value is no flavour (EINVAL). */
typedef enum lfpool_flavour {
	LFPOOL_FLAVOUR_POOL = 1,	/* lfpool_pool: one thread, no atomics */
	LFPOOL_FLAVOUR_CONCURRENT,	/* lfpool_concurrent: one lock-free stack */
	LFPOOL_FLAVOUR_TS		/* lfpool_ts: per-thread magazines */
} lfpool_flavour;

/* The get of pool, a pool of flavour fl: that flavour's own (inline for
 * Pool and ThreadStatic), for the inline paths of the layers.  A Concurrent
 * pool's is called out of line (its _slow form, which serves every case):
 * inline, its CAS path would make the layers' own inline paths too big for
 * the compiler to inline them (tests/array_const_class.sh). */
static inline void *lfpool_flavour_get(lfpool_flavour fl, void *pool)
{
	if (fl == LFPOOL_FLAVOUR_POOL)
		return lfpool_pool_get((lfpool_pool *)pool);
	if (fl == LFPOOL_FLAVOUR_TS)
		return lfpool_ts_get((lfpool_ts *)pool);
	return lfpool_concurrent_get_slow((lfpool_concurrent *)pool);
}

/* The put of pool, a pool of flavour fl: that flavour's own. */
static inline void lfpool_flavour_put(lfpool_flavour fl, void *pool, void *obj)
{
	if (fl == LFPOOL_FLAVOUR_POOL)
		lfpool_pool_put((lfpool_pool *)pool, obj);
	else if (fl == LFPOOL_FLAVOUR_TS)
		lfpool_ts_put((lfpool_ts *)pool, obj);
	else
		lfpool_concurrent_put_slow((lfpool_concurrent *)pool, obj);
}

#ifdef __cplusplus
}
#endif
#endif
