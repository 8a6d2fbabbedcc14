/* SPDX-License-Identifier: MIT */
/*
 * cache.c - a cache's two magazines (Bonwick & Adams 2001, section 3): the
 * slow paths behind the inline get and put of lfpool/threadstatic.h, bulk
 * calls, flush, and the explicit cache handles.
 *
 * A cache holds a loaded magazine, which the fast path empties and fills,
 * and a previous one that is always either full or empty.  When the loaded
 * magazine cannot serve:
 *   get: previous full -> swap them.  Else take a full magazine from the
 *        depot and give it the empty previous one; else take up to a
 *        magazine's worth of loose objects; else create one object.
 *   put: previous empty -> swap them.  Else give the full previous magazine
 *        to the depot for an empty one (or a spare, within the census);
 *        else the depot is at its bound: push the previous magazine's
 *        objects onto the loose stack as one chain, and swap.
 * Every step that touches the depot is one CAS per magazine moved, so a
 * thread pays at most two per magazine_size objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ts.h"

/* The count of the loaded magazine: the fast view's, or in debug pools
 * (where the fast view stays empty) the real one next to it. */
static uint32_t *loaded_count(lfpool_cache *c)
{
	return c->checked ? &c->checked_count : &c->fast.count;
}

/* Add n to a counter only the cache's user writes. */
static void bump(uint64_t *counter, uint64_t n)
{
	lfp_store_u64_rlx(counter, *counter + n);
}

/* The loaded magazine becomes the previous one; mag, holding n objects,
 * is loaded.  The loaded magazine must be full or empty. */
static void rotate(lfpool_cache *c, uint32_t mag, void **objs, uint32_t n)
{
	uint32_t *count = loaded_count(c), m = c->pool->depot.mag_size;
	LFP_ASSERT(*count == 0 || *count == m);
	LFP_ASSERT(n == 0 || n == m);
	LFP_ASSERT(mag != c->loaded && objs == lfp_mag_objs(&c->pool->depot, mag));
	c->prev = c->loaded;
	c->prev_objs = c->fast.objs;
	c->prev_full = *count != 0;
	c->loaded = mag;
	c->fast.objs = objs;
	*count = n;
}

/* The loaded magazine is empty: fill it without creating objects.
 * false when the depot has nothing. */
/* Model: stress/model/depot.pml, steps R1-R4 (its control gives R3 before R2). */
static bool refill(lfpool_cache *c)
{
	struct lfp_depot *d = &c->pool->depot;
	if (c->prev_full) {
		rotate(c, c->prev, c->prev_objs, d->mag_size);
		return true;
	}
	uint32_t full = lfp_depot_pop(d, &d->full);
	if (full != LFP_NIL) {
		lfp_depot_push(d, &d->empty, c->prev);
		bump(&c->full_pops, 1);
		rotate(c, full, lfp_mag_objs(d, full), d->mag_size);
		return true;
	}
	uint32_t n = lfp_depot_get_objs(d, &c->pool->core.slabs, c->fast.objs, d->mag_size);
	*loaded_count(c) = n;
	return n != 0;
}

/* The loaded magazine is full: make room in it. */
/* Model: stress/model/depot.pml, steps M1-M6; census.pml, S1-S2 and B1. */
static void make_room(lfpool_cache *c)
{
	struct lfp_depot *d = &c->pool->depot;
	if (c->prev_full) {
		uint32_t mag = lfp_depot_pop(d, &d->empty);
		if (mag == LFP_NIL)
			mag = lfp_depot_spare(d);
		if (mag != LFP_NIL) {
			lfp_depot_push(d, &d->full, c->prev);
			bump(&c->full_pushes, 1);
			rotate(c, mag, lfp_mag_objs(d, mag), 0);
			return;
		}
		/* The depot is at its bound: below it with them (one CAS). */
		lfp_depot_put_objs(d, &c->pool->core.slabs, c->prev_objs, d->mag_size);
		c->prev_full = false;
	}
	rotate(c, c->prev, c->prev_objs, 0);
}

/* Put n accepted objects into the magazines. */
static void push_objs(lfpool_cache *c, void *const *objs, size_t n)
{
	uint32_t *count = loaded_count(c), m = c->pool->depot.mag_size;
	while (n) {
		LFP_ASSERT(*count <= m);
		if (*count == m)
			make_room(c);
		uint32_t k = m - *count < n ? m - *count : (uint32_t)n;
		memcpy(&c->fast.objs[*count], objs, k * sizeof(void *));
		*count += k;
		objs += k;
		n -= k;
	}
}

/* Debug pools: objects taken by a get that then failed go back to the
 * pooled state (they were never the user's: no reset hook). */
static void unmark(lfpool_cache *c, void *const *objs, size_t n)
{
	struct lfp_core *core = &c->pool->core;
	for (size_t i = 0; c->checked && i < n; i++) {
		uint8_t *state = lfp_slabs_state(&core->slabs, lfp_slabs_index(&core->slabs, objs[i]));
		LFP_ASSERT(lfp_load_u8_rlx(state) == LFP_OBJ_OUT);
		lfp_store_u8_rlx(state, LFP_OBJ_POOLED);
		lfp_core_poison(core, objs[i]);
	}
}

/* One new object into *obj: 0 or errno. */
static int create_one(lfpool_cache *c, void **obj)
{
	uint32_t idx;
	int err = lfp_ts_create_objects(c->pool, 1, LFP_OBJ_OUT, &idx);
	if (!err)
		*obj = lfp_slabs_ptr(&c->pool->core.slabs, idx);
	return err;
}

/* Take n objects for the user, all or none: 0, or -1 with errno. */
/* Model: stress/model/depot.pml, steps G1, C1 and C2. */
static int take(lfpool_cache *c, void **objs, size_t n)
{
	uint32_t *count = loaded_count(c);
	size_t got = 0;
	while (got < n) {
		if (*count == 0) {
			if (!c->prev_full)
				bump(&c->misses, 1);
			if (!refill(c)) {
				int err = create_one(c, &objs[got]);
				if (err == ENOBUFS && refill(c))
					continue;	/* objects came back meanwhile */
				if (err) {
					unmark(c, objs, got);
					push_objs(c, objs, got);
					errno = err;
					return -1;
				}
				got++;
				continue;
			}
		}
		uint32_t k = *count < n - got ? *count : (uint32_t)(n - got);
		LFP_ASSERT(*count <= c->pool->depot.mag_size);
		*count -= k;
		memcpy(&objs[got], &c->fast.objs[*count], k * sizeof(void *));
		for (size_t i = got; c->checked && i < got + k; i++)
			lfp_core_mark_out(&c->pool->core, lfp_slabs_index(&c->pool->core.slabs, objs[i]));
		got += k;
	}
	return 0;
}

LFPOOL_API void *lfpool_cache_get_slow(lfpool_cache *c)
{
	void *obj;
	if (take(c, &obj, 1) != 0)
		return NULL;
	bump(&c->fast.gets, 1);
	return obj;
}

LFPOOL_API void lfpool_cache_put_slow(lfpool_cache *c, void *obj)
{
	if (!obj || lfp_core_accept_put(&c->pool->core, obj) == LFP_NIL)
		return;
	push_objs(c, &obj, 1);
	bump(&c->fast.puts, 1);
}

LFPOOL_API int lfpool_cache_get_bulk(lfpool_cache *c, void **objs, size_t n)
{
	if (take(c, objs, n) != 0)
		return -1;
	bump(&c->fast.gets, n);
	return 0;
}

/* lfp_core_accept_bulk's push: accepted objects into the magazines. */
static void push_accepted(void *c, void *const *objs, size_t n)
{
	push_objs(c, objs, n);
	bump(&((lfpool_cache *)c)->fast.puts, n);
}

LFPOOL_API void lfpool_cache_put_bulk(lfpool_cache *c, void *const *objs, size_t n)
{
	lfp_core_accept_bulk(&c->pool->core, objs, n, push_accepted, c);
}

/* Model: stress/model/depot.pml, F1-F2; flush.pml, F1-F6 (two worker_release). */
LFPOOL_API void lfpool_cache_flush(lfpool_cache *c)
{
	struct lfp_depot *d = &c->pool->depot;
	const struct lfp_slabs *s = &c->pool->core.slabs;
	uint32_t *count = loaded_count(c);
	lfp_depot_put_objs(d, s, c->fast.objs, *count);
	*count = 0;
	if (c->prev_full)
		lfp_depot_put_objs(d, s, c->prev_objs, d->mag_size);
	c->prev_full = false;
}

lfpool_cache *lfp_cache_new(lfpool_ts *p, enum lfp_cache_kind kind)
{
	lfpool_cache *c;
	uint32_t mags[2];
	if (posix_memalign((void **)&c, 64, sizeof(*c)) != 0)
		return NULL;
	if (lfp_depot_join(&p->depot, mags) != 0) {
		free(c);
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->pool = p;
	c->kind = (uint8_t)kind;
	c->checked = p->core.debug;
	c->loaded = mags[0];
	c->prev = mags[1];
	c->fast.objs = lfp_mag_objs(&p->depot, mags[0]);
	c->prev_objs = lfp_mag_objs(&p->depot, mags[1]);
	c->fast.room = c->checked || p->core.reset ? 0 : p->depot.mag_size;
	c->next = p->caches;
	c->pprev = &p->caches;
	if (p->caches)
		p->caches->pprev = &c->next;
	p->caches = c;
	if (kind == LFP_CACHE_EXPLICIT)
		p->explicit_caches++;
	return c;
}

void lfp_cache_count(const lfpool_cache *c, struct lfp_cache_counts *sum)
{
	sum->gets += lfp_load_u64_rlx(&c->fast.gets);
	sum->puts += lfp_load_u64_rlx(&c->fast.puts);
	sum->misses += lfp_load_u64_rlx(&c->misses);
	sum->full_pops += lfp_load_u64_rlx(&c->full_pops);
	sum->full_pushes += lfp_load_u64_rlx(&c->full_pushes);
}

/* Model: stress/model/depot.pml, steps L1-L3; exit.pml, CF1-CF3. */
void lfp_cache_free(lfpool_cache *c)
{
	lfpool_ts *p = c->pool;
	lfpool_cache_flush(c);
	uint32_t mags[2] = { c->loaded, c->prev };
	lfp_depot_leave(&p->depot, mags);
	lfp_cache_count(c, &p->retired);
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	if (c->kind == LFP_CACHE_EXPLICIT)
		p->explicit_caches--;
	free(c);
}

LFPOOL_API lfpool_cache *lfpool_cache_create(lfpool_ts *p)
{
	pthread_mutex_lock(&lfp_ts_lock);
	lfpool_cache *c = lfp_cache_new(p, LFP_CACHE_EXPLICIT);
	pthread_mutex_unlock(&lfp_ts_lock);
	if (!c)
		errno = ENOMEM;
	return c;
}

LFPOOL_API void lfpool_cache_destroy(lfpool_cache *c)
{
	if (!c)
		return;
	if (c->kind != LFP_CACHE_EXPLICIT) {
		lfp_report(c->pool->core.name, c,
			   "cache_destroy of a worker slot cache (use lfpool_ts_worker_release)");
		return;
	}
	pthread_mutex_lock(&lfp_ts_lock);
	lfp_cache_free(c);
	pthread_mutex_unlock(&lfp_ts_lock);
}
