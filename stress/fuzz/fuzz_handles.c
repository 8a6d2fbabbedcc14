/* SPDX-License-Identifier: MIT */
/*
 * fuzz_handles.c - mode 1: one pool of any flavour (Pool, Concurrent,
 * ThreadStatic per thread or per CPU), used through every handle it has at
 * once: its own calls (the implicit cache), two explicit caches and three
 * worker slots, with capacities up to 1023, optional reset hook, debug
 * checks and allocator faults.  The model knows every object the pool made
 * (init and fini hooks) and which are out; each answer is checked:
 * capacity, ENOBUFS only once `created` reached the capacity, ENOMEM only
 * when the allocator may fail, objects untouched while pooled, all-or-none
 * bulk calls, prewarm and trim counts, exact statistics, owns, EBUSY and
 * EINVAL, the bound of lfpool_ts_max_bytes, and in debug pools that each
 * misuse (double put, foreign and interior pointers, any call after
 * destroy) reaches the error hook once and changes nothing.
 *
 * Input: mode byte, 7 configuration bytes, then operations of 3 bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

enum { F_POOL, F_CONC, F_TS, F_PERCPU, F_COUNT };
static const char *const fl_names[] = { "pool", "concurrent", "threadstatic", "percpu" };

/* Handle 0: the flavour's own calls; 1-2: explicit caches; 3-5: worker
 * slots of these indices. */
#define HANDLES 6
static const unsigned worker_ids[3] = { 0, 1, LFPOOL_TS_WORKERS_MAX - 1 };
#define BULK 32

struct obj {
	unsigned char *p;
	bool out;
	uint64_t stamp;
};

struct hm {
	int fl;
	bool debug, reset_hook, destroyed;
	bool system_alloc;	/* no allocator given: slab.c's default */
	bool quiet_leak;	/* destroy with an object out under the default hook */
	size_t cap, size, align;
	void *pool;
	lfpool_ts_cache *cache[2];
	bool worker_made[3];
	uint64_t far_made;	/* worker slots 64 + i made by op_worker_far */
	unsigned caches_now, caches_max;
	struct obj *o;
	size_t n, max, out;
	size_t hw;		/* the most objects made at once during a call */
	uint64_t stamps, resets, puts, finis;
	struct stress_alloc sa;
	size_t op;
};

#define HM_FAIL(m, ...) fz_fail_op(m, __VA_ARGS__)

__attribute__((noreturn, format(printf, 2, 3))) static void fz_fail_op(struct hm *m,
								      const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fz_fail("handles %s (cap %zu, size %zu, debug %d), op %zu: %s", fl_names[m->fl], m->cap,
		m->size, m->debug, m->op, msg);
}
#define HM_CHECK(m, c, ...) do { if (!(c)) HM_FAIL(m, __VA_ARGS__); } while (0)

static bool is_ts(const struct hm *m) { return m->fl >= F_TS; }
static size_t stamp_bytes(const struct hm *m) { return m->size < 8 ? m->size : 8; }

static struct obj *find(struct hm *m, const void *p)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->o[i].p == p)
			return &m->o[i];
	return NULL;
}

/* The k-th object out (k < out), or the k-th pooled one. */
static struct obj *nth(struct hm *m, size_t k, bool out)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->o[i].out == out && k-- == 0)
			return &m->o[i];
	return NULL;
}

static void stamp(struct hm *m, struct obj *o)
{
	o->stamp = ++m->stamps;
	if (!m->debug)
		memcpy(o->p, &o->stamp, stamp_bytes(m));
}

static void init_hook(void *obj, void *ctx)
{
	struct hm *m = ctx;
	if (find(m, obj))
		HM_FAIL(m, "init on %p, an object that exists", obj);
	if (m->n == m->max) {
		m->max = m->max ? 2 * m->max : 64;
		m->o = realloc(m->o, m->max * sizeof(*m->o));
		if (!m->o)
			abort();
	}
	m->o[m->n] = (struct obj){ .p = obj };
	stamp(m, &m->o[m->n++]);
	if (m->cap && m->n > m->cap)
		HM_FAIL(m, "%zu objects made, capacity %zu", m->n, m->cap);
	if (m->n > m->hw)
		m->hw = m->n;
}

static void fini_hook(void *obj, void *ctx)
{
	struct hm *m = ctx;
	struct obj *o = find(m, obj);
	if (!o || o->out)
		HM_FAIL(m, "fini on %p, %s", obj, o ? "an object out with the user" : "never made");
	*o = m->o[--m->n];
	m->finis++;
}

static void reset_hook(void *obj, void *ctx)
{
	struct hm *m = ctx;
	(void)obj;
	m->resets++;
}

/* A get returned p. */
static void take(struct hm *m, void *p)
{
	struct obj *o = find(m, p);
	HM_CHECK(m, o && !o->out, "get returned %p, %s", p, o ? "already out" : "not an object");
	HM_CHECK(m, m->debug || memcmp(o->p, &o->stamp, stamp_bytes(m)) == 0,
		 "object %p changed while pooled", p);
	HM_CHECK(m, (uintptr_t)p % (m->align ? m->align : 16) == 0, "object %p misaligned", p);
	HM_CHECK(m, !m->cap || m->out < m->cap, "get beyond capacity %zu succeeded", m->cap);
	o->out = true;
	m->out++;
}

/* The user gives o back. */
static void give(struct hm *m, struct obj *o)
{
	stamp(m, o);
	o->out = false;
	m->out--;
	m->puts++;
}

/* The cache of handle h, or NULL for the flavour's own calls; a worker
 * slot is made on first use (NULL + errno when that fails). */
static lfpool_ts_cache *handle(struct hm *m, unsigned h, bool *failed)
{
	*failed = false;
	if (!is_ts(m) || h == 0)
		return NULL;
	if (h <= 2)
		return m->cache[h - 1];
	unsigned w = h - 3;
	lfpool_ts_cache *c = lfpool_ts_worker_cache(m->pool, worker_ids[w]);
	if (!c) {
		*failed = true;
		return NULL;
	}
	if (!m->worker_made[w]) {
		m->worker_made[w] = true;
		if (++m->caches_now > m->caches_max)
			m->caches_max = m->caches_now;
	}
	return c;
}

static void *raw_get(struct hm *m, unsigned h)
{
	bool failed;
	lfpool_ts_cache *c = handle(m, h, &failed);
	if (failed)
		return NULL;
	if (c)
		return lfpool_ts_cache_get(c);
	switch (m->fl) {
	case F_POOL:
		return lfpool_pool_get(m->pool);
	case F_CONC:
		return lfpool_concurrent_get(m->pool);
	default:
		return lfpool_ts_get(m->pool);
	}
}

static int raw_get_bulk(struct hm *m, unsigned h, void **objs, size_t k)
{
	bool failed;
	lfpool_ts_cache *c = handle(m, h, &failed);
	if (failed)
		return -1;
	if (c)
		return lfpool_ts_cache_get_bulk(c, objs, k);
	switch (m->fl) {
	case F_POOL:
		for (size_t i = 0; i < k; i++) {
			if (!(objs[i] = lfpool_pool_get(m->pool))) {
				int err = errno;
				while (i)
					lfpool_pool_put(m->pool, objs[--i]);
				errno = err;
				return -1;
			}
		}
		return 0;
	case F_CONC:
		return lfpool_concurrent_get_bulk(m->pool, objs, k);
	default:
		return lfpool_ts_get_bulk(m->pool, objs, k);
	}
}

static void raw_put(struct hm *m, unsigned h, void *p)
{
	bool failed;
	lfpool_ts_cache *c = handle(m, h, &failed);
	if (c) {
		lfpool_ts_cache_put(c, p);
		return;
	}
	switch (m->fl) {
	case F_POOL:
		lfpool_pool_put(m->pool, p);
		break;
	case F_CONC:
		lfpool_concurrent_put(m->pool, p);
		break;
	default:
		lfpool_ts_put(m->pool, p);
	}
}

static void raw_put_bulk(struct hm *m, unsigned h, void **objs, size_t k)
{
	bool failed;
	lfpool_ts_cache *c = handle(m, h, &failed);
	if (c) {
		lfpool_ts_cache_put_bulk(c, objs, k);
		return;
	}
	switch (m->fl) {
	case F_POOL:
		for (size_t i = 0; i < k; i++)
			lfpool_pool_put(m->pool, objs[i]);
		break;
	case F_CONC:
		lfpool_concurrent_put_bulk(m->pool, objs, k);
		break;
	default:
		lfpool_ts_put_bulk(m->pool, objs, k);
	}
}

/* A failed get of k objects: errno must be allowed, nothing taken.
 * ENOBUFS: ThreadStatic's once every object it may make is made; the
 * others' when k more than are out would pass capacity (Concurrent's bulk
 * get makes none of them then, concurrent.h). */
static void check_failure(struct hm *m, const char *call, size_t k, size_t out_before)
{
	int err = errno;
	bool ok = fz_enomem_ok(&m->sa, err) ||
		  (err == ENOBUFS && m->cap &&
		   (is_ts(m) ? m->hw == m->cap : m->out + k > m->cap));
	HM_CHECK(m, ok, "%s of %zu failed with %s: %zu out, %zu made (at most %zu), capacity %zu",
		 call, k, strerror(err), m->out, m->n, m->hw, m->cap);
	HM_CHECK(m, m->out == out_before, "a failed %s changed the objects out", call);
}

static void op_get(struct hm *m, unsigned a, unsigned b)
{
	(void)b;
	m->hw = m->n;
	void *p = raw_get(m, a % HANDLES);
	if (p)
		take(m, p);
	else
		check_failure(m, "get", 1, m->out);
}

static void op_put(struct hm *m, unsigned a, unsigned b)
{
	if (m->out == 0) {
		raw_put(m, a % HANDLES, NULL);
		return;
	}
	struct obj *o = nth(m, b % m->out, true);
	void *p = o->p;
	give(m, o);
	raw_put(m, a % HANDLES, p);
}

static void op_get_bulk(struct hm *m, unsigned a, unsigned b)
{
	size_t k = b % (BULK + 1);
	void *objs[BULK];
	m->hw = m->n;
	if (raw_get_bulk(m, a % HANDLES, objs, k) != 0) {
		check_failure(m, "bulk get", k, m->out);
		/* Concurrent's (and Pool's, emulated here) give what they took
		 * back with a put, which runs the reset hook; ThreadStatic's do
		 * not (cache.c, unmark). */
		if (!is_ts(m))
			m->puts = m->resets;
		return;
	}
	for (size_t i = 0; i < k; i++)
		take(m, objs[i]);
}

/* Up to b % 33 objects out, with a NULL after every third when b & 0x80. */
static void op_put_bulk(struct hm *m, unsigned a, unsigned b)
{
	void *objs[2 * BULK];
	size_t k = 0, want = (b & 0x7f) % (BULK + 1);
	for (size_t i = 0; i < m->n && want; i++) {
		if (!m->o[i].out)
			continue;
		objs[k++] = m->o[i].p;
		give(m, &m->o[i]);
		want--;
		if ((b & 0x80) && k % 3 == 0)
			objs[k++] = NULL;
	}
	raw_put_bulk(m, a % HANDLES, objs, k);
}

/* Flush a handle: the thread's cache (per-CPU: this CPU's area), an
 * explicit cache, or release a worker slot. */
static void op_flush(struct hm *m, unsigned a, unsigned b)
{
	unsigned h = a % HANDLES;
	(void)b;
	if (!is_ts(m))
		return;
	if (h == 0)
		lfpool_ts_flush(m->pool);
	else if (h <= 2 && m->cache[h - 1])
		lfpool_ts_cache_flush(m->cache[h - 1]);
	else if (h >= 3)
		lfpool_ts_worker_release(m->pool, worker_ids[h - 3]);
	else
		lfpool_ts_worker_release(m->pool, LFPOOL_TS_WORKERS_MAX);	/* no slot: no-op */
}

/* Create explicit cache a % 2, or destroy it. */
static void op_cache(struct hm *m, unsigned a, unsigned b)
{
	(void)b;
	if (!is_ts(m))
		return;
	lfpool_ts_cache **c = &m->cache[a % 2];
	if (*c) {
		lfpool_ts_cache_destroy(*c);
		*c = NULL;
		m->caches_now--;
		return;
	}
	*c = lfpool_ts_cache_create(m->pool);
	if (!*c) {
		HM_CHECK(m, fz_enomem_ok(&m->sa, errno), "cache_create: %s", strerror(errno));
		return;
	}
	if (++m->caches_now > m->caches_max)
		m->caches_max = m->caches_now;
}

static void op_prewarm(struct hm *m, unsigned a, unsigned b)
{
	size_t k = (a << 8 | b) % 97, made = m->n;
	bool room = !m->cap || m->n + k <= m->cap;
	int rc;
	switch (m->fl) {
	case F_POOL:
		rc = lfpool_pool_prewarm(m->pool, k);
		break;
	case F_CONC:
		rc = lfpool_concurrent_prewarm(m->pool, k);
		break;
	default:
		rc = lfpool_ts_prewarm(m->pool, k);
	}
	if (rc != 0) {
		int err = errno;
		HM_CHECK(m, (!room && err == ENOBUFS) || fz_enomem_ok(&m->sa, err),
			 "prewarm(%zu) with %zu made failed: %s", k, made, strerror(err));
		HM_CHECK(m, m->n == made, "a failed prewarm made %zu objects", m->n - made);
		return;
	}
	HM_CHECK(m, room, "prewarm(%zu) beyond capacity %zu succeeded", k, m->cap);
	HM_CHECK(m, m->n == made + k, "prewarm(%zu) made %zu", k, m->n - made);
}

static void op_trim(struct hm *m, unsigned a, unsigned b)
{
	size_t keep = (a << 8 | b) % 300, pooled = m->n - m->out;
	uint64_t finis = m->finis;
	size_t ret;
	switch (m->fl) {
	case F_POOL:
		ret = lfpool_pool_trim(m->pool, keep);
		break;
	case F_CONC:
		ret = lfpool_concurrent_trim(m->pool, keep);
		break;
	default:
		ret = lfpool_ts_trim(m->pool, keep);
	}
	HM_CHECK(m, ret == m->finis - finis, "trim returned %zu, fini ran %llu times", ret,
		 (unsigned long long)(m->finis - finis));
	/* ThreadStatic keeps min(keep, its depot's) at the least: at most
	 * pooled - keep go there too; Pool and Concurrent destroy exactly that. */
	size_t beyond = pooled > keep ? pooled - keep : 0;
	HM_CHECK(m, is_ts(m) ? ret <= beyond : ret == beyond,
		 "trim(%zu) with %zu pooled destroyed %zu", keep, pooled, ret);
}

static void stats_of(struct hm *m, lfpool_stats *st)
{
	switch (m->fl) {
	case F_POOL:
		lfpool_pool_stats(m->pool, st);
		break;
	case F_CONC:
		lfpool_concurrent_stats(m->pool, st);
		break;
	default:
		lfpool_ts_stats(m->pool, st);
	}
}

static void op_stats(struct hm *m, unsigned a, unsigned b)
{
	(void)a;
	(void)b;
	lfpool_stats st;
	stats_of(m, &st);
	HM_CHECK(m, st.created == m->n && st.live == m->out && st.retained == m->n - m->out,
		 "stats: created %llu live %llu retained %llu; model %zu made, %zu out",
		 (unsigned long long)st.created, (unsigned long long)st.live,
		 (unsigned long long)st.retained, m->n, m->out);
	HM_CHECK(m, (st.percpu_mode != NULL) == (m->fl == F_PERCPU), "stats: percpu_mode %s",
		 st.percpu_mode ? st.percpu_mode : "NULL");
	HM_CHECK(m, !m->n || st.bytes_held, "stats: no bytes held with %zu objects", m->n);
	HM_CHECK(m, !m->reset_hook || m->resets == m->puts, "reset ran %llu times for %llu puts",
		 (unsigned long long)m->resets, (unsigned long long)m->puts);
}

static int owns(struct hm *m, const void *p)
{
	switch (m->fl) {
	case F_POOL:
		return lfpool_pool_owns(m->pool, p);
	case F_CONC:
		return lfpool_concurrent_owns(m->pool, p);
	default:
		return lfpool_ts_owns(m->pool, p);
	}
}

static void op_owns(struct hm *m, unsigned a, unsigned b)
{
	int local;
	if (m->n) {
		unsigned char *p = m->o[(a << 8 | b) % m->n].p;
		HM_CHECK(m, owns(m, p), "owns(%p) false for an object of the pool", (void *)p);
		HM_CHECK(m, !owns(m, p + 1), "owns true for an interior pointer");
	}
	HM_CHECK(m, !owns(m, &local) && !owns(m, NULL), "owns true for a stranger");
}

/* Detach (hand the thread's cache back) or attach again. */
static void op_attach(struct hm *m, unsigned a, unsigned b)
{
	(void)b;
	if (!is_ts(m))
		return;
	if (a & 1) {
		lfpool_ts_detach(m->pool);
		/* A put now makes a new cache, or (allocator failing) goes
		 * straight to the depot. */
		if ((a & 2) && m->out && (a & 4))
			op_put_bulk(m, 0, 3);
		else if ((a & 2) && m->out)
			op_put(m, 0, b);
		else if (a & 2)
			op_get(m, 0, 0);
		return;
	}
	if (lfpool_ts_attach(m->pool) != 0)
		HM_CHECK(m, fz_enomem_ok(&m->sa, errno), "attach: %s", strerror(errno));
}

/* EBUSY while explicit caches exist, EINVAL beyond the worker indices,
 * and the memory bound of bounded ThreadStatic pools. */
static void op_refusals(struct hm *m, unsigned a, unsigned b)
{
	(void)a;
	(void)b;
	if (!is_ts(m))
		return;
	errno = 0;
	HM_CHECK(m, !lfpool_ts_worker_cache(m->pool, LFPOOL_TS_WORKERS_MAX) && errno == EINVAL,
		 "worker_cache beyond the indices: %s", strerror(errno));
	if (m->cache[0] || m->cache[1]) {
		lfpool_stats before, after;
		stats_of(m, &before);
		HM_CHECK(m, lfpool_ts_destroy(m->pool) == -1 && errno == EBUSY,
			 "destroy with explicit caches: %s", strerror(errno));
		stats_of(m, &after);
		HM_CHECK(m, before.created == after.created, "a refused destroy changed the pool");
	}
	size_t bound = lfpool_ts_max_bytes(m->pool, m->caches_max + 1);
	HM_CHECK(m, m->cap ? (uint64_t)m->sa.peak <= bound : bound == SIZE_MAX,
		 "backing memory peaked at %lld bytes, bound %zu with %u caches",
		 (long long)m->sa.peak, bound, m->caches_max + 1);
}

/* ---- misuse of debug pools: each reaches the error hook once ---------- */

struct misuse {
	struct hm *m;
	unsigned h;
	void *p;
	bool bulk;
};

static void misuse_put(void *ctx)
{
	struct misuse *u = ctx;
	if (u->bulk)
		raw_put_bulk(u->m, u->h, &u->p, 1);
	else
		raw_put(u->m, u->h, u->p);
}

static void misuse_destroy_worker(void *ctx)
{
	struct misuse *u = ctx;
	lfpool_ts_cache_destroy(u->p);
}

static void op_misuse(struct hm *m, unsigned a, unsigned b)
{
	lfpool_stats before, after;
	char local[64];
	struct misuse u = { m, a % HANDLES, NULL, a & 0x80 };
	bool failed;
	if (is_ts(m) && (a & 0x40)) {
		/* Not a debug-only check: worker slots belong to the pool. */
		u.p = handle(m, 3 + b % 3, &failed);
		if (u.p)
			fz_expect_report("cache_destroy of a worker slot", "worker slot",
					 misuse_destroy_worker, &u);
		return;
	}
	if (!m->debug)
		return;
	stats_of(m, &before);
	switch ((a >> 3) % 3) {
	case 0:	/* a pooled object put again */
		if (m->n == m->out)
			return;
		u.p = nth(m, b % (m->n - m->out), false)->p;
		fz_expect_report("double put", "double put|more puts", misuse_put, &u);
		break;
	case 1:	/* a pointer from no pool */
		u.p = local + 16;
		fz_expect_report("foreign put", "not from|more puts", misuse_put, &u);
		break;
	default:	/* inside an object that is out */
		if (!m->out)
			return;
		u.p = nth(m, b % m->out, true)->p + 1;
		fz_expect_report("interior put", "interior|more puts", misuse_put, &u);
	}
	stats_of(m, &after);
	HM_CHECK(m, before.created == after.created && before.live == after.live,
		 "a refused put changed the pool");
}

/* Get and put one object through worker slot 64 + a % 64 (a new chunk of
 * slots, a new cache: each may fail with ENOMEM), then release it. */
static void op_worker_far(struct hm *m, unsigned a, unsigned b)
{
	(void)b;
	if (!is_ts(m))
		return;
	unsigned w = 64 + a % 64;
	lfpool_ts_cache *c = lfpool_ts_worker_cache(m->pool, w);
	if (!c) {
		HM_CHECK(m, fz_enomem_ok(&m->sa, errno), "worker_cache(%u): %s", w, strerror(errno));
		return;
	}
	if (!(m->far_made & (UINT64_C(1) << (a % 64)))) {
		m->far_made |= UINT64_C(1) << (a % 64);
		if (++m->caches_now > m->caches_max)
			m->caches_max = m->caches_now;
	}
	m->hw = m->n;
	void *p = lfpool_ts_cache_get(c);
	if (!p) {
		check_failure(m, "worker get", 1, m->out);
		return;
	}
	take(m, p);
	give(m, find(m, p));
	lfpool_ts_cache_put(c, p);
	lfpool_ts_worker_release(m->pool, w);
}

static void (*const ops[])(struct hm *m, unsigned a, unsigned b) = {
	op_get, op_get, op_get, op_put, op_put, op_put, op_get_bulk, op_put_bulk,
	op_flush, op_cache, op_prewarm, op_trim, op_stats, op_owns, op_attach, op_refusals,
	op_misuse, op_worker_far,
};

/* ---- set-up and the end ------------------------------------------------ */

static void *create(struct hm *m, const lfpool_config *cfg)
{
	switch (m->fl) {
	case F_POOL:
		return lfpool_pool_create(cfg);
	case F_CONC:
		return lfpool_concurrent_create(cfg);
	default:
		return lfpool_ts_create(cfg);
	}
}

/* Configurations every flavour must refuse with EINVAL. */
static void bad_configs(struct hm *m, const lfpool_config *good, bool b_huge)
{
	lfpool_config bad[6];
	for (int i = 0; i < 6; i++)
		bad[i] = *good;
	bad[0].obj_size = 0;
	bad[1].align = 24;
	bad[2].capacity = 4, bad[2].prewarm = 5;
	bad[3].flags = 0x80;
	bad[4].allocator = &(lfpool_allocator){ NULL, NULL, NULL };
	/* Too large for any object, or for a slab (over 2 GiB for 8). */
	bad[5].obj_size = b_huge ? (size_t)300 << 20 : SIZE_MAX / 2;
	bad[5].capacity = bad[5].prewarm = 0;
	for (int i = 0; i < 6; i++) {
		errno = 0;
		void *p = create(m, &bad[i]);
		HM_CHECK(m, !p && errno == EINVAL, "bad config %d: %p, %s", i, p, strerror(errno));
	}
	if (m->fl == F_TS) {
		lfpool_config c = *good;
		c.magazine_size = LFPOOL_TS_MAGAZINE_SIZE_MAX + 1;
		HM_CHECK(m, !create(m, &c) && errno == EINVAL, "magazine_size too large accepted");
	} else if (m->fl != F_PERCPU) {
		lfpool_config c = *good;
		c.flags |= LFPOOL_F_PERCPU;
		HM_CHECK(m, !create(m, &c) && errno == EINVAL, "LFPOOL_F_PERCPU accepted");
	}
	HM_CHECK(m, m->n == 0, "a refused create made objects");
	lfpool_pool_destroy(NULL);
	lfpool_concurrent_destroy(NULL);
	HM_CHECK(m, lfpool_ts_destroy(NULL) == 0, "ts_destroy(NULL) != 0");
	lfpool_ts_cache_destroy(NULL);
}

static void destroy(void *ctx)
{
	struct hm *m = ctx;
	switch (m->fl) {
	case F_POOL:
		lfpool_pool_destroy(m->pool);
		break;
	case F_CONC:
		lfpool_concurrent_destroy(m->pool);
		break;
	default:
		/* Destroyed already: -1, EINVAL (and the report). */
		if (lfpool_ts_destroy(m->pool) != (m->destroyed ? -1 : 0))
			HM_FAIL(m, "destroy: %s", strerror(errno));
	}
	m->destroyed = true;
}

static void get_after_destroy(void *ctx)
{
	struct hm *m = ctx;
	HM_CHECK(m, !lfpool_ts_get(m->pool), "get after destroy succeeded");
}

static void bulk_after_destroy(void *ctx)
{
	struct hm *m = ctx;
	void *objs[2];
	HM_CHECK(m, lfpool_ts_get_bulk(m->pool, objs, 2) == -1, "bulk get after destroy succeeded");
}

/* Debug pools stay readable after destroy: every call is reported. */
static void after_destroy(struct hm *m, void *stale)
{
	struct misuse u = { m, 0, stale, false };
	fz_expect_report("put after destroy", "after destroy", misuse_put, &u);
	fz_expect_report("destroy twice", "already destroyed", destroy, m);
	if (is_ts(m)) {
		fz_expect_report("ts get after destroy", "after destroy", get_after_destroy, m);
		fz_expect_report("ts bulk get after destroy", "after destroy", bulk_after_destroy, m);
	}
}

static void finish(struct hm *m, bool leak_one)
{
	void *stale = m->n ? (void *)m->o[0].p : (void *)&m->n;
	while (m->out > (leak_one ? 1u : 0u))
		op_put(m, m->op, 0);
	for (int i = 0; i < 2; i++)
		if (m->cache[i])
			lfpool_ts_cache_destroy(m->cache[i]);
	if (m->fl == F_PERCPU && (m->op & 1))
		stress_flush_all_cpus(m->pool);	/* else destroy drains the areas */
	if (!leak_one)
		op_stats(m, 0, 0);
	if (leak_one) {
		/* Destroy reports what is still out (no fini: it is the user's)
		 * and goes on. */
		stale = nth(m, 0, true)->p;
		if (m->quiet_leak)
			destroy(m);	/* the default hook prints one line and goes on */
		else
			fz_expect_report("destroy with an object out", "still out", destroy, m);
	} else {
		destroy(m);
	}
	HM_CHECK(m, m->n == m->out, "destroy left %zu pooled objects without fini", m->n - m->out);
	if (!m->system_alloc)
		fz_alloc_check(&m->sa, "handles");
	if (m->debug)
		after_destroy(m, stale);
}

void fz_handles(struct fz *f)
{
	static const size_t sizes[] = { 1, 8, 24, 64, 100, 256, 4000, 40 };
	static const size_t aligns[] = { 0, 8, 16, 64, 128, 1, 2, 4 };
	struct hm m = { 0 };
	unsigned b0 = fz_byte(f), b1 = fz_u16(f), b3 = fz_byte(f), b4 = fz_byte(f);
	unsigned b5 = fz_byte(f), b6 = fz_byte(f);
	m.fl = b0 % F_COUNT;
	m.debug = b0 & 0x10;
	m.reset_hook = b0 & 0x20;
	m.cap = (b1 & 1) ? 0 : (b1 >> 1) % 1023 + 1;
	m.size = sizes[b3 % 8];
	m.align = aligns[(b3 >> 3) % 8];
	fz_alloc_init(&m.sa, (b5 & 0xf) ? 0 : 4 + (b5 >> 4) % 16);
	lfpool_config cfg = {
		.obj_size = m.size, .align = m.align, .capacity = m.cap,
		.prewarm = m.cap ? b6 % (m.cap + 1) : b6 % 64,
		.init = init_hook, .fini = fini_hook, .reset = m.reset_hook ? reset_hook : NULL,
		.hook_ctx = &m, .allocator = &m.sa.a,
		.flags = (m.debug ? LFPOOL_F_DEBUG : 0) | (m.fl == F_PERCPU ? LFPOOL_F_PERCPU : 0),
		.name = (b0 & 0x40) ? "a pool name longer than the forty-seven bytes kept of it"
				    : NULL,
		.magazine_size = b4 % 17, .depot_max = (b4 >> 5) % 5,
	};
	if (b0 & 0x80)
		bad_configs(&m, &cfg, b4 & 0x10);
	/* The system's allocator (slab.c's default) where no fault is wanted:
	 * the balance of allocations is then not checked. */
	bool system_alloc = !m.sa.fail_one_in && (b5 & 0x40);
	if (system_alloc)
		cfg.allocator = NULL;
	/* b5 & 0x10: the allocator starts failing once the pool exists. */
	unsigned one_in = m.sa.fail_one_in;
	if (b5 & 0x10)
		m.sa.fail_one_in = 0;
	m.pool = create(&m, &cfg);
	m.sa.fail_one_in = one_in;
	if (!m.pool) {
		HM_CHECK(&m, fz_enomem_ok(&m.sa, errno), "create: %s", strerror(errno));
		HM_CHECK(&m, m.n == 0, "a failed create left %zu objects", m.n);
		fz_alloc_check(&m.sa, "handles: failed create");
		free(m.o);
		return;
	}
	HM_CHECK(&m, m.n == cfg.prewarm, "create with prewarm %zu made %zu", cfg.prewarm, m.n);
	m.caches_now = m.caches_max = 1;	/* the thread's implicit cache */
	while (fz_more(f)) {
		unsigned op = fz_byte(f), a = fz_byte(f), b = fz_byte(f);
		if (getenv("LFPOOL_FUZZ_TRACE"))	/* replaying a crash: which op */
			fprintf(stderr, "op %zu: %u %u %u, %zu out, %zu made\n", m.op,
				op % (unsigned)(sizeof(ops) / sizeof(ops[0])), a, b, m.out, m.n);
		ops[op % (sizeof(ops) / sizeof(ops[0]))](&m, a, b);
		m.op++;
	}
	/* The allocator fails no more: the end must succeed. */
	m.sa.fail_one_in = 0;
	m.system_alloc = system_alloc;
	m.quiet_leak = b5 & 0x80;
	finish(&m, m.debug && m.out && (b5 & 0x20));
	free(m.o);
}
