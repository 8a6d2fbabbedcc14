/*
 * lfpool/flavour.h - names the flavour under a layer that is built on pools
 * (array pools, reference-counted objects, closures).  Include <lfpool.h>.
 */
#ifndef LFPOOL_FLAVOUR_H
#define LFPOOL_FLAVOUR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Which pool a layer keeps its objects in; 0 is no flavour (EINVAL). */
typedef enum lfpool_flavour {
	LFPOOL_FLAVOUR_POOL = 1,	/* lfpool_pool: one thread, no atomics */
	LFPOOL_FLAVOUR_CONCURRENT,	/* lfpool_concurrent: one lock-free stack */
	LFPOOL_FLAVOUR_TS		/* lfpool_ts: per-thread magazines */
} lfpool_flavour;

#ifdef __cplusplus
}
#endif
#endif
