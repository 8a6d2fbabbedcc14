/* SPDX-License-Identifier: MIT */
/*
 * threadstatic.c - the ThreadStatic pool: create, destroy, prewarm, trim,
 * statistics, and the calls that go through the calling thread's implicit
 * cache.  The magazines are in cache.c, the depot in depot.c, the
 * per-thread table in tls.c; ts.h says where objects can be.
 *
 * Trim's working set: the full magazines gets took from the depot since
 * the previous trim were needed, and so were the empty ones puts took (one
 * per full magazine given); the depot keeps as many of each, the hottest,
 * and the rest go.  Loose objects are below the working set by definition.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts.h"
#include "ts_percpu.h"

pthread_mutex_t lfp_ts_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The registry of live pools, under lfp_ts_lock: slot i holds the
 * generation of the pool that has it (0 while free) and how often it was
 * taken.  A pool's generation is that count << 32 | i: unique until one
 * slot is reused 2^32 times, and alive exactly when its slot still holds
 * it.  Free slots are a stack threaded through next_free.
 */
struct lfp_ts_slot {
	uint64_t gen;
	uint32_t uses;
	uint32_t next_free;
};
static struct lfp_ts_slot *slots;
static uint32_t nslots, slot_cap, free_slot = UINT32_MAX;

bool lfp_ts_live(uint64_t gen)
{
	uint32_t i = (uint32_t)gen;
	return i < nslots && slots[i].gen == gen;
}

/* Give p a slot and its generation (lock held): 0 or ENOMEM. */
static int register_pool(lfpool_ts *p)
{
	uint32_t i = free_slot;
	if (i != UINT32_MAX) {
		free_slot = slots[i].next_free;
	} else {
		if (nslots == slot_cap) {
			uint32_t cap = slot_cap ? 2 * slot_cap : 64;
			struct lfp_ts_slot *s = cap > slot_cap ? realloc(slots, cap * sizeof(*s)) : NULL;
			if (!s)
				return ENOMEM;
			slots = s;
			slot_cap = cap;
		}
		i = nslots++;
		slots[i].uses = 0;
	}
	if (++slots[i].uses == 0)	/* generation 0 means none */
		slots[i].uses = 1;
	slots[i].gen = p->gen = (uint64_t)slots[i].uses << 32 | i;
	return 0;
}

static void unregister_pool(const lfpool_ts *p)
{
	uint32_t i = (uint32_t)p->gen;
	slots[i].gen = 0;
	slots[i].next_free = free_slot;
	free_slot = i;
}

int lfp_ts_create_objects(lfpool_ts *p, size_t n, uint8_t state, uint32_t *chain)
{
	return lfp_core_create(&p->core, &p->created, true, n, state, chain);
}

LFPOOL_API lfpool_ts *lfpool_ts_create(const lfpool_config *cfg)
{
	if (!cfg || cfg->magazine_size > LFPOOL_TS_MAGAZINE_SIZE_MAX ||
	    cfg->depot_max > LFPOOL_TS_DEPOT_MAX_MAX) {
		errno = EINVAL;
		return NULL;
	}
	lfpool_ts *p;
	if (posix_memalign((void **)&p, 64, sizeof(*p)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	memset(p, 0, sizeof(*p));
	int err = lfp_core_init(&p->core, cfg, LFP_KIND_TS);
	if (err) {
		free(p);
		errno = err;
		return NULL;
	}
	err = lfp_depot_init(&p->depot,
			     cfg->magazine_size ? cfg->magazine_size : LFPOOL_TS_MAGAZINE_SIZE,
			     cfg->depot_max ? cfg->depot_max : LFPOOL_TS_DEPOT_MAX, cfg->allocator);
	if (!err && (err = lfp_pcpu_init(p, cfg)) != 0)
		lfp_depot_fini(&p->depot);
	if (err) {
		lfp_core_fini(&p->core);
		free(p);
		errno = err;
		return NULL;
	}
	pthread_mutex_lock(&lfp_ts_lock);
	err = register_pool(p);
	pthread_mutex_unlock(&lfp_ts_lock);
	if (err) {
		lfp_pcpu_fini(p);
		lfp_depot_fini(&p->depot);
		lfp_core_fini(&p->core);
		free(p);
		errno = err;
		return NULL;
	}
	p->magic = LFP_MAGIC_LIVE;
	if (cfg->prewarm && lfpool_ts_prewarm(p, cfg->prewarm) != 0) {
		err = errno;
		lfpool_ts_destroy(p);
		errno = err;
		return NULL;
	}
	return p;
}

/* Take p out of the registry and free all its caches (lock held). */
/* Model: stress/model/exit.pml, steps D3-D4. */
static void retire(lfpool_ts *p)
{
	unregister_pool(p);
	while (p->caches)
		lfp_cache_free(p->caches);
	lfp_tls_forget(p);
}

/* Model: stress/model/exit.pml, steps D1-D8. */
LFPOOL_API int lfpool_ts_destroy(lfpool_ts *p)
{
	if (!p)
		return 0;
	if (p->magic != LFP_MAGIC_LIVE) {
		lfp_report(p->core.name, p, "destroy of a pool already destroyed");
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&lfp_ts_lock);
	if (p->explicit_caches) {
		pthread_mutex_unlock(&lfp_ts_lock);
		errno = EBUSY;
		return -1;
	}
	retire(p);
	pthread_mutex_unlock(&lfp_ts_lock);
	lfp_workers_fini(p);

	uint64_t n = lfp_pcpu_fini(p);
	for (uint32_t i = lfp_depot_drain(&p->depot, &p->core.slabs); i != LFP_NIL;
	     i = lfp_load_u32_rlx(lfp_slabs_link(&p->core.slabs, i))) {
		lfp_core_fini_obj(&p->core, lfp_slabs_ptr(&p->core.slabs, i));
		n++;
	}
	lfp_depot_fini(&p->depot);
	p->gen = LFP_TS_DEAD;
	lfp_core_retire(&p->core, p, &p->magic, p->created - n);
	return 0;
}

LFPOOL_API int lfpool_ts_prewarm(lfpool_ts *p, size_t n)
{
	if (n == 0)
		return 0;
	uint32_t chain;
	int err = lfp_ts_create_objects(p, n, LFP_OBJ_POOLED, &chain);
	if (err) {
		errno = err;
		return -1;
	}
	lfp_stack_push_chain_mpmc(&p->depot.objs, &p->core.slabs, chain,
				  lfp_chain_last(&p->core.slabs, chain, NULL));
	return 0;
}

/* The counters of every cache the pool has had (lock held). */
static void sum_caches(const lfpool_ts *p, struct lfp_cache_counts *sum)
{
	*sum = p->retired;
	for (const lfpool_cache *c = p->caches; c; c = c->next)
		lfp_cache_count(c, sum);
	lfp_pcpu_count(p, sum);
}

static uint32_t at_most(uint64_t n, uint32_t max) { return n < max ? (uint32_t)n : max; }

LFPOOL_API size_t lfpool_ts_trim(lfpool_ts *p)
{
	struct lfp_cache_counts now;
	pthread_mutex_lock(&lfp_ts_lock);
	sum_caches(p, &now);
	uint64_t full = now.full_pops - p->trimmed_at.full_pops;
	uint64_t empty = now.full_pushes - p->trimmed_at.full_pushes;
	p->trimmed_at = now;
	pthread_mutex_unlock(&lfp_ts_lock);

	size_t n = lfp_depot_trim(&p->depot, &p->core, at_most(full, p->depot.max_full),
				  at_most(empty, p->depot.max_full));
	lfp_core_count_trim(&p->core, &p->created, n);
	return n;
}

LFPOOL_API int lfpool_ts_owns(const lfpool_ts *p, const void *ptr)
{
	return lfp_core_owns(&p->core, ptr);
}

LFPOOL_API void lfpool_ts_stats(const lfpool_ts *p, lfpool_stats *st)
{
	struct lfp_cache_counts sum;
	pthread_mutex_lock(&lfp_ts_lock);
	sum_caches(p, &sum);
	pthread_mutex_unlock(&lfp_ts_lock);

	memset(st, 0, sizeof(*st));
	lfp_core_stats(&p->core, st);
	st->gets = sum.gets;
	st->puts = sum.puts + lfp_load_u64_rlx(&p->uncached_puts);
	/* In a pool in use the sums are of different moments: keep them sane. */
	st->misses = sum.misses;
	st->hits = sum.gets > sum.misses ? sum.gets - sum.misses : 0;
	st->mag_exchanges = sum.full_pops + sum.full_pushes;
	st->created = lfp_load_u64_rlx(&p->created);
	uint64_t live = st->gets > st->puts ? st->gets - st->puts : 0;
	st->live = live < st->created ? live : st->created;
	st->retained = st->created - st->live;
	st->bytes_held += lfp_slabs_bytes(&p->depot.mags.slabs);
	lfp_pcpu_stats(p, st);
}

LFPOOL_API size_t lfpool_ts_max_bytes(const lfpool_ts *p, size_t caches)
{
	uint64_t b = lfp_depot_max_bytes(&p->depot, &p->core, caches);
	if (b != UINT64_MAX)
		b += lfp_pcpu_bytes(p);
	return b < SIZE_MAX ? (size_t)b : SIZE_MAX;
}

/* Debug pools stay readable after destroy, so that a call on one is
 * reported here (on others it is undefined). */
static bool destroyed(lfpool_ts *p, const void *ptr, const char *problem)
{
	if (LFPOOL_LIKELY(p->magic == LFP_MAGIC_LIVE))
		return false;
	lfp_report(p->core.name, ptr, problem);
	errno = EINVAL;
	return true;
}

/* The calling thread's cache for p, made on first use. */
static lfpool_cache *thread_cache(lfpool_ts *p)
{
	if (LFPOOL_LIKELY(lfp_load_ptr_rlx((void *const *)&lfpool_ts_tls_.pool) == p))
		return lfpool_ts_tls_.cache;
	return destroyed(p, NULL, "call after destroy") ? NULL : lfp_tls_cache(p);
}

/* A put of a thread that can have no cache (out of memory): straight to
 * the depot. */
static void put_uncached(lfpool_ts *p, void *obj)
{
	if (p->magic != LFP_MAGIC_LIVE || lfp_core_accept_put(&p->core, obj) == LFP_NIL)
		return;
	lfp_depot_put_objs(&p->depot, &p->core.slabs, &obj, 1);
	lfp_faa_u64_rlx(&p->uncached_puts, 1);
}

/* The inline lfpool_ts_get and _put (lfpool/threadstatic.h) call these
 * when the thread's last used cache is not p's: a per-CPU pool (which
 * gives no thread a cache), another pool, or the thread's first call. */
LFPOOL_API void *lfpool_ts_get_slow(lfpool_ts *p)
{
	if (p->percpu)
		return lfp_pcpu_get(p->percpu);
	if (destroyed(p, NULL, "get after destroy"))
		return NULL;
	lfpool_cache *c = lfp_tls_cache(p);
	return c ? lfpool_cache_get(c) : NULL;
}

LFPOOL_API void lfpool_ts_put_slow(lfpool_ts *p, void *obj)
{
	if (p->percpu) {
		lfp_pcpu_put(p->percpu, obj);
		return;
	}
	if (!obj || destroyed(p, obj, "put after destroy"))
		return;
	lfpool_cache *c = lfp_tls_cache(p);
	if (c)
		lfpool_cache_put(c, obj);
	else
		put_uncached(p, obj);
}

LFPOOL_API int lfpool_ts_get_bulk(lfpool_ts *p, void **objs, size_t n)
{
	if (p->percpu)
		return lfp_pcpu_get_bulk(p, objs, n);
	lfpool_cache *c = thread_cache(p);
	return c ? lfpool_cache_get_bulk(c, objs, n) : -1;
}

LFPOOL_API void lfpool_ts_put_bulk(lfpool_ts *p, void *const *objs, size_t n)
{
	if (p->percpu) {
		lfp_pcpu_put_bulk(p, objs, n);
		return;
	}
	lfpool_cache *c = thread_cache(p);
	if (c) {
		lfpool_cache_put_bulk(c, objs, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (objs[i])
			put_uncached(p, objs[i]);
}

LFPOOL_API void lfpool_ts_flush(lfpool_ts *p)
{
	if (p->percpu)
		lfp_pcpu_flush(p);
	lfpool_cache *c = lfp_tls_find(p);
	if (c)
		lfpool_cache_flush(c);
}

LFPOOL_API int lfpool_ts_attach(lfpool_ts *p)
{
	return p->percpu || thread_cache(p) ? 0 : -1;
}

LFPOOL_API void lfpool_ts_detach(lfpool_ts *p)
{
	lfp_tls_detach(p);
}
