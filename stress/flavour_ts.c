/* SPDX-License-Identifier: MIT */
/*
 * flavour_ts.c - adapters for ThreadStatic: through the implicit
 * per-thread caches (lfpool_ts_*), and through explicit cache handles
 * (lfpool_ts_cache_*), one per thread.
 */
#include <stddef.h>

#include "stress.h"

/* A thread holds at most its loaded and previous magazines while none of
 * their objects is out (Bonwick & Adams): 2 * magazine_size. */
static unsigned ts_slack(const lfpool_config *cfg) { return 2 * cfg->magazine_size; }

static void *ts_create(const lfpool_config *cfg) { return lfpool_ts_create(cfg); }
static int ts_destroy(void *pool) { return lfpool_ts_destroy(pool); }
static int ts_prewarm(void *pool, size_t n) { return lfpool_ts_prewarm(pool, n); }

/* keep counts the depot's objects only, and the working set may stay
 * beyond it: trim_keeps is false. */
static size_t ts_trim(void *pool, size_t keep) { return lfpool_ts_trim(pool, keep); }

/* The bound lfpool/ts.h documents (bounded pools). */
static size_t ts_max_bytes(const void *pool, size_t caches)
{
	return lfpool_ts_max_bytes(pool, caches);
}

static int ts_owns(const void *pool, const void *p) { return lfpool_ts_owns(pool, p); }
static void ts_stats(const void *pool, lfpool_stats *st) { lfpool_ts_stats(pool, st); }

/* ---- implicit caches: the handle is the pool ---- */

static void *ts_enter(void *pool) { return lfpool_ts_attach(pool) == 0 ? pool : NULL; }

/* Hand the thread's cache back now (thread exit would too). */
static void ts_leave(void *pool, void *h)
{
	(void)h;
	lfpool_ts_detach(pool);
}

static void *ts_get(void *h) { return lfpool_ts_get(h); }
static void ts_put(void *h, void *obj) { lfpool_ts_put(h, obj); }
static int ts_get_bulk(void *h, void **objs, size_t n) { return lfpool_ts_get_bulk(h, objs, n); }
static void ts_put_bulk(void *h, void *const *objs, size_t n) { lfpool_ts_put_bulk(h, objs, n); }
static void ts_flush(void *h) { lfpool_ts_flush(h); }

const struct flavour flavour_ts = {
	.name = "threadstatic", .shared = true, .exit_flushes = true, .trim_keeps = false,
	.handle_is_pool = true, .cache_slack = ts_slack, .max_bytes = ts_max_bytes,
	.create = ts_create, .destroy = ts_destroy, .enter = ts_enter, .leave = ts_leave,
	.get = ts_get, .put = ts_put, .get_bulk = ts_get_bulk, .put_bulk = ts_put_bulk,
	.flush = ts_flush, .prewarm = ts_prewarm, .trim = ts_trim, .owns = ts_owns,
	.stats = ts_stats, .validate = STRESS_VALIDATE(validate_ts),
};

/* ---- explicit caches: the handle is an lfpool_ts_cache ---- */

static void *cache_enter(void *pool) { return lfpool_ts_cache_create(pool); }

/* Flush and free the thread's explicit cache. */
static void cache_leave(void *pool, void *h)
{
	(void)pool;
	lfpool_ts_cache_destroy(h);
}

static void *cache_get(void *h) { return lfpool_ts_cache_get(h); }
static void cache_put(void *h, void *obj) { lfpool_ts_cache_put(h, obj); }

static int cache_get_bulk(void *h, void **objs, size_t n)
{
	return lfpool_ts_cache_get_bulk(h, objs, n);
}

static void cache_put_bulk(void *h, void *const *objs, size_t n)
{
	lfpool_ts_cache_put_bulk(h, objs, n);
}

static void cache_flush(void *h) { lfpool_ts_cache_flush(h); }

const struct flavour flavour_ts_cache = {
	.name = "ts-cache", .shared = true, .exit_flushes = false, .trim_keeps = false,
	.handle_is_pool = false, .cache_slack = ts_slack, .max_bytes = ts_max_bytes,
	.create = ts_create, .destroy = ts_destroy, .enter = cache_enter, .leave = cache_leave,
	.get = cache_get, .put = cache_put, .get_bulk = cache_get_bulk, .put_bulk = cache_put_bulk,
	.flush = cache_flush, .prewarm = ts_prewarm, .trim = ts_trim, .owns = ts_owns,
	.stats = ts_stats, .validate = STRESS_VALIDATE(validate_ts),
};
