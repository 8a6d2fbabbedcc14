/* SPDX-License-Identifier: MIT */
/*
 * flavour_percpu.c - the adapter for ThreadStatic's per-CPU mode
 * (LFPOOL_F_PERCPU): the handle is the pool, and the caches are the CPU
 * areas, which no thread owns.
 *
 * The census needs every object within the main thread's reach, but an
 * object put on one CPU stays in that CPU's area, and only a thread running
 * there can take it out.  So a thread that leaves moves itself onto each
 * CPU it may run on and flushes that CPU's area to the depot.  Every object
 * reaches an area through some thread's put or get, and that thread leaves
 * afterwards: once all have left, the areas are empty.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "stress.h"

/* Objects out of a thread's reach while none is out with it: the areas of
 * every CPU, 2 x magazine_size each (counted per thread, so generously). */
static unsigned percpu_slack(const lfpool_config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	return (unsigned)(ncpu > 0 ? ncpu : 1) * 2 * cfg->magazine_size;
}

static void *percpu_create(const lfpool_config *cfg)
{
	lfpool_config c = *cfg;
	c.flags |= LFPOOL_F_PERCPU;
	return lfpool_ts_create(&c);
}

static int percpu_destroy(void *pool) { return lfpool_ts_destroy(pool); }
static void *percpu_enter(void *pool) { return pool; }

/* Flush the area of every CPU this thread may run on, from that CPU, then
 * let the thread run where it could before (stress.h). */
void stress_flush_all_cpus(lfpool_ts *p)
{
	cpu_set_t allowed, one;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		lfpool_ts_flush(p);
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			lfpool_ts_flush(p);
	}
	sched_setaffinity(0, sizeof(allowed), &allowed);
}

static void percpu_leave(void *pool, void *h)
{
	(void)h;
	stress_flush_all_cpus(pool);
}

static void *percpu_get(void *h) { return lfpool_ts_get(h); }
static void percpu_put(void *h, void *obj) { lfpool_ts_put(h, obj); }

static int percpu_get_bulk(void *h, void **objs, size_t n)
{
	return lfpool_ts_get_bulk(h, objs, n);
}

static void percpu_put_bulk(void *h, void *const *objs, size_t n)
{
	lfpool_ts_put_bulk(h, objs, n);
}

static void percpu_flush(void *h) { lfpool_ts_flush(h); }
static int percpu_prewarm(void *pool, size_t n) { return lfpool_ts_prewarm(pool, n); }

/* As ThreadStatic's: keep counts the depot's objects, the areas' among
 * them, and the working set may stay beyond it. */
static size_t percpu_trim(void *pool, size_t keep) { return lfpool_ts_trim(pool, keep); }

/* The bound lfpool/ts.h documents, CPU areas included. */
static size_t percpu_max_bytes(const void *pool, size_t caches)
{
	return lfpool_ts_max_bytes(pool, caches);
}

static int percpu_owns(const void *pool, const void *p) { return lfpool_ts_owns(pool, p); }
static void percpu_stats(const void *pool, lfpool_stats *st) { lfpool_ts_stats(pool, st); }

const struct flavour flavour_percpu = {
	.name = "percpu", .shared = true, .exit_flushes = false, .trim_keeps = false,
	.handle_is_pool = true, .cache_slack = percpu_slack, .max_bytes = percpu_max_bytes,
	.create = percpu_create, .destroy = percpu_destroy, .enter = percpu_enter,
	.leave = percpu_leave, .get = percpu_get, .put = percpu_put,
	.get_bulk = percpu_get_bulk, .put_bulk = percpu_put_bulk, .flush = percpu_flush,
	.prewarm = percpu_prewarm, .trim = percpu_trim, .owns = percpu_owns,
	.stats = percpu_stats, .validate = STRESS_VALIDATE(validate_ts),
};
