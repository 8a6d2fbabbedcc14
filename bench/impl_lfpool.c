/* SPDX-License-Identifier: MIT */
/*
 * impl_lfpool.c - the lfpool flavours under test, and an array pool.
 *
 * lfpool-pool is single-threaded: each thread gets a Pool of its own, as a
 * program would use it.  lfpool-concurrent and lfpool-threadstatic share one
 * pool among all threads (ThreadStatic through each thread's implicit
 * cache); lfpool-percpu is a ThreadStatic pool with caches per CPU;
 * lfpool-cache shares a ThreadStatic pool and gives each thread an explicit
 * cache handle, whose get and put are inline.
 */
#include <stdlib.h>

#include "bench.h"
#include "lfpool.h"
#include "lfpool/ts.h"

/* The configuration every flavour is measured with: no hooks, no bound. */
static lfpool_config config(size_t obj_size, unsigned prewarm)
{
	return (lfpool_config){ .obj_size = obj_size, .prewarm = prewarm, .name = "bench" };
}

/* lfpool-pool: open keeps the configuration, attach makes the thread's Pool. */
static void *pool_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	lfpool_config *cfg = malloc(sizeof(*cfg));
	if (!cfg)
		bench_die("out of memory");
	*cfg = config(obj_size, prewarm);
	return cfg;
}

static void *pool_attach(void *cfg)
{
	lfpool_pool *p = lfpool_pool_create(cfg);
	if (!p)
		bench_die("lfpool_pool_create failed");
	return p;
}

static void pool_detach(void *cfg, void *p)
{
	(void)cfg;
	lfpool_pool_destroy(p);
}

#define pool_get lfpool_pool_get
#define pool_put lfpool_pool_put

#define IMPL pool
#define IMPL_PER_THREAD
#include "loops.h"

const struct impl impl_lfpool_pool = {
	.name = "lfpool-pool", .lfpool = true,
	.open = pool_open, .close = free,
	.attach = pool_attach, .detach = pool_detach,
	.loops = &pool_loops,
};

/* lfpool-concurrent: one pool, every thread on it. */
static void *conc_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	lfpool_config cfg = config(obj_size, prewarm);
	lfpool_concurrent *c = lfpool_concurrent_create(&cfg);
	if (!c)
		bench_die("lfpool_concurrent_create failed");
	return c;
}

static void conc_close(void *c) { lfpool_concurrent_destroy(c); }

static void conc_contention(void *c, uint64_t *eliminated, uint64_t *cas_failed)
{
	lfpool_stats st;
	lfpool_concurrent_stats(c, &st);
	*eliminated = st.eliminated;
	*cas_failed = st.cas_retries;
}

#define conc_get lfpool_concurrent_get
#define conc_put lfpool_concurrent_put
#define conc_get_bulk lfpool_concurrent_get_bulk
#define conc_put_bulk lfpool_concurrent_put_bulk

#define IMPL conc
#define IMPL_HAS_BULK
#include "loops.h"

const struct impl impl_lfpool_concurrent = {
	.name = "lfpool-concurrent", .lfpool = true,
	.open = conc_open, .close = conc_close,
	.attach = attach_shared, .detach = detach_nothing,
	.loops = &conc_loops, .contention = conc_contention,
};

/*
 * lfpool-concurrent-small: one unbounded pool that never grows past its
 * small slabs (lib/slab.h: fewer than 334 objects of 64 B), as a pool per
 * connection or per type holds: prewarmed with 10, whatever the size, so
 * that its steady state stays in slab 1 (its second slab in batch64).
 */
static void *conc_small_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)prewarm;
	return conc_open(obj_size, 10, why);
}

const struct impl impl_lfpool_concurrent_small = {
	.name = "lfpool-concurrent-small", .lfpool = true,
	.open = conc_small_open, .close = conc_close,
	.attach = attach_shared, .detach = detach_nothing,
	.loops = &conc_loops, .contention = conc_contention,
};

/* lfpool-threadstatic and lfpool-cache: one ThreadStatic pool. */
static lfpool_ts *ts_create(size_t obj_size, unsigned prewarm, unsigned flags)
{
	lfpool_config cfg = config(obj_size, prewarm);
	cfg.flags = flags;
	lfpool_ts *ts = lfpool_ts_create(&cfg);
	if (!ts)
		bench_die("lfpool_ts_create failed");
	return ts;
}

static void *ts_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	return ts_create(obj_size, prewarm, 0);
}

static void ts_close(void *ts)
{
	if (lfpool_ts_destroy(ts) != 0)
		bench_die("lfpool_ts_destroy failed: a cache is still attached");
}

static void *ts_attach(void *ts)
{
	if (lfpool_ts_attach(ts) != 0)
		bench_die("lfpool_ts_attach failed");
	return ts;
}

static void ts_detach(void *ts, void *h)
{
	(void)h;
	lfpool_ts_detach(ts);
}

#define ts_get lfpool_ts_get
#define ts_put lfpool_ts_put
#define ts_get_bulk lfpool_ts_get_bulk
#define ts_put_bulk lfpool_ts_put_bulk

#define IMPL ts
#define IMPL_HAS_BULK
#include "loops.h"

const struct impl impl_lfpool_threadstatic = {
	.name = "lfpool-threadstatic", .lfpool = true,
	.open = ts_open, .close = ts_close,
	.attach = ts_attach, .detach = ts_detach,
	.loops = &ts_loops,
};

/* lfpool-percpu: a ThreadStatic pool in per-CPU mode, through ts_get and
 * ts_put as lfpool-threadstatic. */
static void *percpu_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	return ts_create(obj_size, prewarm, LFPOOL_F_PERCPU);
}

const char *percpu_path(void)
{
	lfpool_ts *ts = ts_create(64, 0, LFPOOL_F_PERCPU);
	lfpool_stats st;
	lfpool_ts_stats(ts, &st);
	const char *path = st.percpu_mode ? st.percpu_mode : "none";
	ts_close(ts);
	return path;
}

const struct impl impl_lfpool_percpu = {
	.name = "lfpool-percpu", .lfpool = true,
	.open = percpu_open, .close = ts_close,
	.attach = ts_attach, .detach = ts_detach,
	.loops = &ts_loops,
};

static void *cache_attach(void *ts)
{
	lfpool_ts_cache *c = lfpool_ts_cache_create(ts);
	if (!c)
		bench_die("lfpool_ts_cache_create failed");
	return c;
}

static void cache_detach(void *ts, void *c)
{
	(void)ts;
	lfpool_ts_cache_destroy(c);
}

#define cache_get lfpool_ts_cache_get
#define cache_put lfpool_ts_cache_put
#define cache_get_bulk lfpool_ts_cache_get_bulk
#define cache_put_bulk lfpool_ts_cache_put_bulk

#define IMPL cache
#define IMPL_HAS_BULK
#include "loops.h"

const struct impl impl_lfpool_cache = {
	.name = "lfpool-cache", .lfpool = true,
	.open = ts_open, .close = ts_close,
	.attach = cache_attach, .detach = cache_detach,
	.loops = &cache_loops,
};

/* lfpool-array: an array pool of ThreadStatic classes shared by all
 * threads; gets ask for the object size, puts give it back sized.  The
 * handle is the array pool itself, as every other row's is what its calls
 * take (lfpool-cache's the cache, lfpool-threadstatic's the pool), and the
 * size a variable that the compiler cannot see through, read on each call
 * (a handle pointing to both the pool and the size made each call load the
 * pool before its key: a chain of loads no other row has). */
static size_t array_size;	/* set by open, before the threads run */

static void *array_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	(void)prewarm;	/* array pools warm up on first use */
	lfpool_array_config cfg = { .min_size = 64, .max_size = 65536, .name = "bench" };
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_TS, &cfg);
	if (!ap)
		bench_die("lfpool_array_create failed");
	array_size = obj_size;
	return ap;
}

static void array_close(void *ap)
{
	lfpool_array_destroy(ap);
}

#define array_get(h) lfpool_array_get((lfpool_array *)(h), array_size, NULL)
#define array_put(h, obj) lfpool_array_put_sized((lfpool_array *)(h), (obj), array_size)

#define IMPL array
#include "loops.h"

const struct impl impl_lfpool_array = {
	.name = "lfpool-array", .lfpool = true,
	.open = array_open, .close = array_close,
	.attach = attach_shared, .detach = detach_nothing,
	.loops = &array_loops,
};

/* lfpool-array-const: the same array pool, with the size a compile-time
 * constant (64 B only), so that the class is picked at compile time. */
static void *array_const_open(size_t obj_size, unsigned prewarm, const char **why)
{
	if (obj_size != 64) {
		*why = "the constant size is 64 B";
		return NULL;
	}
	return array_open(obj_size, prewarm, why);
}

#define array_const_get(h) lfpool_array_get((lfpool_array *)(h), 64, NULL)
#define array_const_put(h, obj) lfpool_array_put_sized((lfpool_array *)(h), (obj), 64)

#define IMPL array_const
#include "loops.h"

const struct impl impl_lfpool_array_const = {
	.name = "lfpool-array-const", .lfpool = true,
	.open = array_const_open, .close = array_close,
	.attach = attach_shared, .detach = detach_nothing,
	.loops = &array_const_loops,
};
