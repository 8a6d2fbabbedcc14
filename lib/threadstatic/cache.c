/* SPDX-License-Identifier: MIT */
/*
 * cache.c - a cache's two magazines (Bonwick & Adams 2001, section 3): the
 * slow paths behind the inline get and put of lfpool/ts.h, bulk
 * calls, flush, and the explicit cache handles.
 *
 * A cache holds a loaded magazine, which the fast path empties and fills,
 * and a previous one that is full or empty (or part full, after a steal).  When the loaded
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
 *
 * The loaded magazine holds objs[low .. count), the fast view's pointers
 * low and top as indices (count: loaded_n): thieves (steal.c) take from
 * its bottom by raising low, so the inline get stores top - 1 before it
 * reads low (lfpool/ts.h).  Every slow path here runs under the cache's
 * lock, which thieves take too; it first settles the magazine back to
 * objs[0 .. count).  A refill from loose objects takes `fill` of them
 * (4, doubling while the cache keeps missing, halved when it gives a full
 * magazine back, 4 again after a trim or drain), and at capacity only what
 * the get needs; with nothing anywhere and nothing to create, a get steals
 * (lfp_steal, steal.c, a floor down) before it
 * fails with ENOBUFS.  The previous magazine may be part full after a
 * thief took from it (prev_count).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grace.h"
#include "ts_internal.h"

/* The count of the loaded magazine: the fast view's top, or in debug
 * pools (where the fast view stays empty) the real one next to it.  Lock
 * held, settled (low at objs) unless the caller says otherwise. */
static uint32_t loaded_n(const lfpool_ts_cache *c)
{
	if (c->checked)
		return c->debug_count;
	return (uint32_t)lfp_cache_index(c, lfp_load_slots_rlx(&c->fast.top));
}

static void set_loaded_n(lfpool_ts_cache *c, uint32_t n)
{
	if (c->checked)
		lfp_store_u32_rlx(&c->debug_count, n);
	else
		lfp_store_slots_rlx(&c->fast.top, c->fast.objs + n);
}

/* Lock held (by own), settled: objs, holding n objects, becomes the
 * loaded magazine; disown opens the fast view on it. */
static void load_mag(lfpool_ts_cache *c, void **objs, uint32_t n)
{
	c->fast.objs = objs;
	lfp_store_slots_rlx(&c->fast.top, objs);
	set_loaded_n(c, n);
}

/* Open the fast view on the loaded magazine (debug pools: of debug_count,
 * the view stays empty; a put may store inline only outside debug pools
 * and without a reset hook). */
static void open_view(lfpool_ts_cache *c)
{
	bool inline_puts = !c->checked && !c->pool->core.reset;
	c->fast.end = inline_puts ? c->fast.objs + c->pool->depot.mag_size : NULL;
	lfp_store_slots_rel(&c->fast.low, c->fast.objs);
}

/* Add n to a counter only the cache's user writes. */
static void bump(uint64_t *counter, uint64_t n)
{
	lfp_store_u64_rlx(counter, *counter + n);
}

/* The objects c holds: in its loaded magazine (top - low; debug pools:
 * debug_count) and its previous one.  Exact under the lock; from stats,
 * which reads without it, within what the user's current step moves; a
 * count outside [0, magazine_size] (a get on its way to the slow path, a
 * step half done) counts as 0. */
static uint64_t held_from(const lfpool_ts_cache *c, void **low_ptr)
{
	uintptr_t top = (uintptr_t)lfp_load_slots_rlx(&c->fast.top);
	uintptr_t low = (uintptr_t)low_ptr;
	uint64_t n = (top - low) / sizeof(void *);	/* below 0: huge */
	uint32_t m = c->pool->depot.mag_size;
	uint32_t prev = lfp_load_u32_rlx(&c->prev_count), dbg = lfp_load_u32_rlx(&c->debug_count);
	return (n <= m ? n : 0) + (prev <= m ? prev : 0) + (dbg <= m ? dbg : 0);
}

static uint64_t held(const lfpool_ts_cache *c)
{
	return held_from(c, lfp_load_slots_rlx(&c->fast.low));
}

/* Under own: settled, the view closed. */
static uint64_t held_owned(const lfpool_ts_cache *c)
{
	return held_from(c, c->fast.objs);
}

/* Lock held, settled, after a step that moved objects in or out of c
 * other than by its user's gets and puts (a refill, a magazine or objects
 * given to the depot, a flush), c holding held_before before it: keep
 * puts_base + gets + held, the user's puts (see puts_base). */
static void moved(lfpool_ts_cache *c, uint64_t held_before)
{
	lfp_store_u64_rlx(&c->puts_base, c->puts_base + held_before - held_owned(c));
}

/* Lock held: k objects went to the user's get without being held (made
 * or stolen for it); the get counts them in gets. */
static void handed(lfpool_ts_cache *c, uint64_t k)
{
	lfp_store_u64_rlx(&c->puts_base, c->puts_base - k);
}

/* prev_count and debug_count: stats reads them (held). */
static void set_prev_count(lfpool_ts_cache *c, uint32_t n)
{
	lfp_store_u32_rlx(&c->prev_count, n);
}

/*
 * Lock held: bring the loaded magazine back to objs[0 .. count) after
 * thieves raised low to `low` (they took from the bottom).  The owner is in
 * its slow path, so no get of its own runs; thieves wait for the lock.
 */
static void settle(lfpool_ts_cache *c, void **low)
{
	if (c->checked || low == c->fast.objs)
		return;
	uint32_t n = (uint32_t)(lfp_load_slots_rlx(&c->fast.top) - low);
	memmove(c->fast.objs, low, n * sizeof(void *));
	lfp_store_slots_rlx(&c->fast.top, c->fast.objs + n);
}

/*
 * Take c's lock for a step on its magazines, and close its fast view
 * meanwhile (low above every top, end NULL, as a thief's stop), so that a
 * get or put of a signal handler that interrupts the step takes the slow
 * path, which lfp_busy sends away (lfpool/ts.h, "Signal handlers"), and
 * never moves top under the step.  disown opens the view again, settled.
 */
static void own(lfpool_ts_cache *c)
{
	lfp_cache_lock(c);
	void **low = lfp_load_slots_rlx(&c->fast.low);
	lfp_store_slots_rlx(&c->fast.low, LFP_CACHE_STOPPED);
	c->fast.end = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* closed before the step */
	settle(c, low);
}

static void disown(lfpool_ts_cache *c)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* the step before the view */
	open_view(c);
	lfp_cache_unlock(c);
}

/* The loaded magazine becomes the previous one; mag, holding n objects,
 * is loaded. */
static void rotate(lfpool_ts_cache *c, uint32_t mag, void **objs, uint32_t n)
{
	uint32_t count = loaded_n(c), m = c->pool->depot.mag_size;
	/* Part full magazines too: a refill at capacity, a thief's leftovers. */
	LFP_ASSERT(count <= m);
	LFP_ASSERT(n <= m);
	LFP_ASSERT(mag != c->loaded && objs == lfp_mag_objs(&c->pool->depot, mag));
	c->prev = c->loaded;
	c->prev_objs = c->fast.objs;
	set_prev_count(c, count);
	c->loaded = mag;
	load_mag(c, objs, n);
}

/* The loaded magazine is empty and the depot has a full magazine, mag, but
 * the pool is at capacity: load only the need objects its get wants; the
 * rest stay reachable on the loose stack, the magazine goes back empty. */
static void refill_tight(lfpool_ts_cache *c, uint32_t mag, uint32_t need)
{
	struct lfp_depot *d = &c->pool->depot;
	void **objs = lfp_mag_objs(d, mag);
	uint32_t k = need < d->mag_size ? need : d->mag_size;
	memcpy(c->fast.objs, objs + d->mag_size - k, k * sizeof(void *));
	set_loaded_n(c, k);
	lfp_depot_put_objs(d, &c->pool->core.slabs, objs, d->mag_size - k);
	lfp_depot_push(d, &d->empty, mag);
}

/* Model: stress/model/depot.pml, steps R1-R4 (its control gives R3 before R2). */
/*
 * Lock held, the loaded magazine is empty: fill it without creating
 * objects, for a get that wants need more.  The previous magazine, else a
 * full one of the depot, else loose objects: fill of them, a number that
 * doubles while the cache keeps coming back (jemalloc's lg_fill_div, by
 * misses) and starts small again when the pool idles (trim, drain, a
 * magazine of surplus given away); at capacity only need.  false when the
 * depot has nothing.
 */
static bool refill(lfpool_ts_cache *c, uint32_t need)
{
	struct lfp_depot *d = &c->pool->depot;
	if (c->prev_count) {
		rotate(c, c->prev, c->prev_objs, c->prev_count);
		return true;
	}
	bool tight = lfp_ts_tight(c->pool);
	uint32_t full = lfp_depot_pop(d, &d->full);
	if (full != LFP_NIL) {
		bump(&c->full_pops, 1);
		if (tight) {
			refill_tight(c, full, need);
			return true;
		}
		lfp_depot_push(d, &d->empty, c->prev);
		rotate(c, full, lfp_mag_objs(d, full), d->mag_size);
		return true;
	}
	uint32_t fill = lfp_load_u32_rlx(&c->fill);
	uint32_t want = tight ? need : (need > fill ? need : fill);
	if (want > d->mag_size)
		want = d->mag_size;
	uint32_t n = lfp_depot_get_objs(d, &c->pool->core.slabs, c->fast.objs, want);
	set_loaded_n(c, n);
	if (n && !tight && fill < d->mag_size)
		lfp_store_u32_rlx(&c->fill, 2 * fill < d->mag_size ? 2 * fill : d->mag_size);
	return n != 0;
}

/* An empty magazine taken for make_room and not used goes to the depot. */
static void give_spare(struct lfp_depot *d, uint32_t spare)
{
	if (spare != LFP_NIL)
		lfp_depot_push(d, &d->empty, spare);
}

/* Lock held, the loaded magazine is full: make room in it; spare, an empty
 * magazine taken with the lock let go (spare_unowned), or LFP_NIL. */
/* Model: stress/model/depot.pml, steps M1, M4-M6; census.pml, B1. */
static void make_room(lfpool_ts_cache *c, uint32_t spare)
{
	struct lfp_depot *d = &c->pool->depot;
	const struct lfp_slabs *s = &c->pool->core.slabs;
	if (c->prev_count == d->mag_size) {
		uint32_t mag = lfp_depot_pop(d, &d->empty);
		if (mag == LFP_NIL) {
			mag = spare;
			spare = LFP_NIL;
		}
		give_spare(d, spare);
		if (mag != LFP_NIL) {
			lfp_depot_push(d, &d->full, c->prev);
			bump(&c->full_pushes, 1);
			/* Surplus: this cache gives more than it takes. */
			uint32_t fill = lfp_load_u32_rlx(&c->fill);
			if (fill > LFP_FILL_MIN)
				lfp_store_u32_rlx(&c->fill, fill / 2);
			rotate(c, mag, lfp_mag_objs(d, mag), 0);
			return;
		}
	}
	/* The depot is at its bound, or a thief left the previous magazine
	 * part full: its objects go below the depot (one CAS). */
	give_spare(d, spare);
	lfp_depot_put_objs(d, s, c->prev_objs, c->prev_count);
	set_prev_count(c, 0);
	rotate(c, c->prev, c->prev_objs, 0);
}

/*
 * Owned (own), both magazines full and the depot's empty stack empty: a
 * spare empty magazine, or LFP_NIL (the census allows none).  Taking one
 * may grow the magazines' slabs through the backing allocator, the
 * application's code, which may block: it runs with the lock let go, so
 * that a thief (a steal at capacity, a drain) of this cache waits for no
 * allocator (lfpool/ts.h, "Hooks"), inside the caller's grace section as
 * every allocator call (grace.h).  A thief may have taken from the
 * magazines meanwhile: the caller looks at them again.
 */
/* Model: stress/model/depot.pml, steps M2-M3; census.pml, S1-S2. */
static uint32_t spare_unowned(lfpool_ts_cache *c)
{
	disown(c);
	uint32_t mag = lfp_depot_spare(&c->pool->depot);
	own(c);
	return mag;
}

/* Owned: put n accepted objects into the magazines. */
static void push_objs(lfpool_ts_cache *c, void *const *objs, size_t n)
{
	struct lfp_depot *d = &c->pool->depot;
	uint32_t m = d->mag_size;
	while (n) {
		uint32_t count = loaded_n(c);
		LFP_ASSERT(count <= m);
		if (count == m) {
			uint32_t spare = LFP_NIL;
			if (c->prev_count == m &&
			    lfp_stack_top(lfp_stack_load(&d->empty)) == LFP_NIL) {
				spare = spare_unowned(c);
				if (loaded_n(c) < m) {	/* a thief made room */
					give_spare(d, spare);
					continue;
				}
			}
			uint64_t h = held_owned(c);
			make_room(c, spare);
			moved(c, h);
			count = loaded_n(c);
		}
		uint32_t k = m - count < n ? m - count : (uint32_t)n;
		memcpy(&c->fast.objs[count], objs, k * sizeof(void *));
		set_loaded_n(c, count + k);
		objs += k;
		n -= k;
	}
}

/* Debug pools: objects taken by a get that then failed go back to the
 * pooled state (they were never the user's: no reset hook). */
static void unmark(lfpool_ts_cache *c, void *const *objs, size_t n)
{
	struct lfp_core *core = &c->pool->core;
	for (size_t i = 0; c->checked && i < n; i++) {
		uint8_t *state = lfp_slabs_state(&core->slabs, lfp_slabs_index(&core->slabs, objs[i]));
		LFP_ASSERT(lfp_load_u8_rlx(state) == LFP_OBJ_OUT);
		lfp_store_u8_rlx(state, LFP_OBJ_POOLED);
		lfp_core_poison(core, objs[i]);
	}
}

/* Debug pools: objs[0 .. n) are the user's now. */
static void mark_out(lfpool_ts_cache *c, void *const *objs, size_t n)
{
	for (size_t i = 0; c->checked && i < n; i++)
		lfp_core_mark_out(&c->pool->core, lfp_slabs_index(&c->pool->core.slabs, objs[i]));
}

/* One new object into *obj: 0 or the errno (lfp_ts_create_objects). */
static int create_one(lfpool_ts *p, void **obj)
{
	uint32_t idx;
	int err = lfp_ts_create_objects(p, 1, LFP_OBJ_OUT, &idx);
	if (!err)
		*obj = lfp_slabs_ptr(&p->core.slabs, idx);
	return err;
}

/*
 * Owned (own), inside the section of take, nothing in the magazines or the
 * depot: one new object into *obj, else (at capacity) up to n objects
 * stolen from the pool's other places.  The lock and the section are let
 * go meanwhile: the init hook may call any pool, or block (no hook runs in
 * a section: grace.h); a thief never holds its own cache, and a steal may
 * wait for a trim, which waits for sections.  Returns how many, or 0 with
 * *err.
 */
static size_t create_or_steal(lfpool_ts_cache *c, void **objs, size_t n, bool *made, int *err)
{
	disown(c);
	lfp_grace_leave();
	size_t k = 0;
	*made = false;
	*err = create_one(c->pool, objs);
	if (!*err) {
		k = 1;
		*made = true;
	} else if (*err == ENOBUFS) {
		lfp_busy_enter();	/* the steal_lock */
		k = lfp_steal(c->pool, objs, n);
		lfp_busy_leave();
		mark_out(c, objs, k);
		/* Nothing pooled: a trim or an exit may have made room meanwhile. */
		if (!k && !(*err = create_one(c->pool, objs))) {
			k = 1;
			*made = true;
		}
	}
	lfp_grace_enter();
	own(c);
	return k;
}

/* Take n objects for the user, all or none: 0, or -1 with errno, the
 * objects taken back into the cache and those made for it destroyed again
 * (lfpool/common.h: a call that fails keeps no object it made).  Objects
 * made new fill objs from the end, the others from the start. */
/* Model: stress/model/depot.pml, steps G1, C1 and C2. */
static int take_owned(lfpool_ts_cache *c, void **objs, size_t n)
{
	size_t got = 0, made = 0;
	lfp_grace_enter();	/* the depot's and the raw stacks' pops */
	own(c);
	while (got + made < n) {
		size_t left = n - got - made;
		uint32_t count = loaded_n(c);
		if (count == 0) {
			if (!c->prev_count)
				bump(&c->misses, 1);
			uint32_t need = left < UINT32_MAX ? (uint32_t)left : UINT32_MAX;
			uint64_t h = held_owned(c);
			bool refilled = refill(c, need);
			moved(c, h);
			if (refilled)
				continue;
			int err;
			bool new_obj;
			size_t k = create_or_steal(c, objs + got, left, &new_obj, &err);
			handed(c, k);
			if (k == 0) {
				unmark(c, objs, got);
				push_objs(c, objs, got);
				/* Neither held nor handed out: see handed. */
				lfp_store_u64_rlx(&c->puts_base, c->puts_base + made);
				disown(c);
				for (size_t i = n - made; i < n; i++)
					lfp_core_unhand(&c->pool->core, objs[i]);
				lfp_grace_leave();
				/* Outside the section: the fini hooks run. */
				lfp_ts_unmake_objects(c->pool, objs + n - made, made);
				errno = err;
				return -1;
			}
			if (new_obj)
				objs[n - ++made] = objs[got];
			else
				got += k;
			continue;
		}
		uint32_t k = count < left ? count : (uint32_t)left;
		LFP_ASSERT(count <= c->pool->depot.mag_size);
		set_loaded_n(c, count - k);
		memcpy(&objs[got], &c->fast.objs[count - k], k * sizeof(void *));
		mark_out(c, objs + got, k);
		got += k;
	}
	bump(&c->fast.gets, n);
	disown(c);
	lfp_grace_leave();
	return 0;
}

/* take_owned, but from a signal handler that interrupted a step of this
 * thread (lfp_busy): -1 with EAGAIN at once; and with cancellation off
 * (lfpool/ts.h: the hooks it runs are no cancellation points). */
static int take(lfpool_ts_cache *c, void **objs, size_t n)
{
	if (lfp_busy) {
		errno = EAGAIN;
		return -1;
	}
	int cancel = lfp_ts_nocancel();
	int r = take_owned(c, objs, n);
	lfp_ts_cancel_restore(cancel);
	return r;
}

LFPOOL_API void *lfpool_ts_cache_get_slow(lfpool_ts_cache *c)
{
	/* The inline get stored top - 1 before it read low: undo that. */
	lfp_store_slots_rlx(&c->fast.top,
			    (void **)((uintptr_t)lfp_load_slots_rlx(&c->fast.top) + sizeof(void *)));
	void *obj;
	if (take(c, &obj, 1) != 0)
		return NULL;
	return obj;
}

/* Accepted objs[0 .. n) into c's magazines; from a signal handler that
 * interrupted a step of this thread (lfp_busy) onto the loose stack (a
 * lock-free push) instead. */
static void put_accepted(lfpool_ts_cache *c, void *const *objs, size_t n)
{
	if (lfp_busy) {
		lfp_depot_put_objs(&c->pool->depot, &c->pool->core.slabs, objs, n);
		lfp_faa_u64_rlx(&c->pool->uncached_puts, n);
		return;
	}
	lfp_grace_enter();
	own(c);
	push_objs(c, objs, n);
	disown(c);
	lfp_grace_leave();
}

LFPOOL_API void lfpool_ts_cache_put_slow(lfpool_ts_cache *c, void *obj)
{
	int cancel = lfp_ts_nocancel();	/* the reset hook */
	if (obj && lfp_core_accept(&c->pool->core, obj))
		put_accepted(c, &obj, 1);
	lfp_ts_cancel_restore(cancel);
}

LFPOOL_API struct lfpool_span_ lfpool_ts_cache_span_(const lfpool_ts_cache *c)
{
	return lfp_core_span(&c->pool->core);
}

LFPOOL_API int lfpool_ts_cache_get_bulk(lfpool_ts_cache *c, void **objs, size_t n)
{
	return take(c, objs, n);
}

/* lfp_core_accept_bulk's push: accepted objects into the magazines. */
static void push_accepted(void *c, void *const *objs, size_t n)
{
	put_accepted(c, objs, n);
}

LFPOOL_API void lfpool_ts_cache_put_bulk(lfpool_ts_cache *c, void *const *objs, size_t n)
{
	int cancel = lfp_ts_nocancel();
	lfp_core_accept_bulk(&c->pool->core, objs, n, push_accepted, c);
	lfp_ts_cancel_restore(cancel);
}

/* Owned (own): every object of c onto the loose stack. */
/* Model: stress/model/depot.pml, F1-F2; flush.pml, F1-F6 (two worker_release). */
static void flush_owned(lfpool_ts_cache *c)
{
	struct lfp_depot *d = &c->pool->depot;
	const struct lfp_slabs *s = &c->pool->core.slabs;
	uint64_t h = held_owned(c);
	lfp_depot_put_objs(d, s, c->fast.objs, loaded_n(c));
	set_loaded_n(c, 0);
	lfp_depot_put_objs(d, s, c->prev_objs, c->prev_count);
	set_prev_count(c, 0);
	moved(c, h);
}

LFPOOL_API void lfpool_ts_cache_flush(lfpool_ts_cache *c)
{
	own(c);
	flush_owned(c);
	disown(c);
}

/* Memory for a new cache of p (lfp_ts_lock held): the pool's own
 * (p->local, right after its head: ts_internal.h says why) while no cache has it,
 * else a block from the owners' cache (slab.h: 10^5 explicit caches made
 * and freed searched malloc's bins and faulted in trimmed pages). */
static lfpool_ts_cache *cache_mem(lfpool_ts *p)
{
	if (p->local_taken)
		return lfp_owner_take(sizeof(lfpool_ts_cache));	/* lfp_cache_init clears it */
	p->local_taken = true;
	return &p->local;
}

/* Give back cache_mem's memory (lfp_ts_lock held). */
static void cache_mem_free(lfpool_ts *p, lfpool_ts_cache *c)
{
	if (c == &p->local)
		p->local_taken = false;
	else
		lfp_owner_free(c, sizeof(*c));
}

lfpool_ts_cache *lfp_cache_init(lfpool_ts_cache *c, lfpool_ts *p, enum lfp_cache_kind kind)
{
	uint32_t mags[2];
	lfp_grace_enter_locked();
	int err = lfp_depot_join(&p->depot, mags);
	lfp_grace_leave();
	if (err)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->pool = p;
	c->kind = (uint8_t)kind;
	c->checked = lfp_core_slow(&p->core);
	c->loaded = mags[0];
	c->prev = mags[1];
	load_mag(c, lfp_mag_objs(&p->depot, mags[0]), 0);
	open_view(c);
	c->prev_objs = lfp_mag_objs(&p->depot, mags[1]);
	lfp_cache_cool(c);
	c->next = p->caches;
	c->pprev = &p->caches;
	if (p->caches)
		p->caches->pprev = &c->next;
	p->caches = c;
	if (kind == LFP_CACHE_EXPLICIT)
		p->explicit_caches++;
	return c;
}

lfpool_ts_cache *lfp_cache_new(lfpool_ts *p, enum lfp_cache_kind kind)
{
	lfpool_ts_cache *c = cache_mem(p);
	if (c && !lfp_cache_init(c, p, kind)) {
		cache_mem_free(p, c);
		return NULL;
	}
	return c;
}

void lfp_cache_count(const lfpool_ts_cache *c, struct lfp_cache_counts *sum)
{
	uint64_t gets = lfp_load_u64_rlx(&c->fast.gets);
	sum->gets += gets;
	sum->puts += lfp_load_u64_rlx(&c->puts_base) + gets + held(c);
	sum->misses += lfp_load_u64_rlx(&c->misses);
	sum->full_pops += lfp_load_u64_rlx(&c->full_pops);
	sum->full_pushes += lfp_load_u64_rlx(&c->full_pushes);
}


/* Take c off its pool's list, keeping its counts, and free it. */
static void unlink_free(lfpool_ts_cache *c)
{
	lfpool_ts *p = c->pool;
	lfp_cache_count(c, &p->retired);
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	if (c->kind == LFP_CACHE_EXPLICIT)
		p->explicit_caches--;
	if (c->kind != LFP_CACHE_HOME)	/* its thread's TLS: tls.c frees the slot */
		cache_mem_free(p, c);
}

/* Model: stress/model/depot.pml, steps L1-L3; exit.pml, CF1-CF3. */
void lfp_cache_free(lfpool_ts_cache *c)
{
	lfpool_ts_cache_flush(c);
	uint32_t mags[2] = { c->loaded, c->prev };
	lfp_grace_enter_locked();
	lfp_depot_leave(&c->pool->depot, mags);
	lfp_grace_leave();
	unlink_free(c);
}

void lfp_cache_abandon(lfpool_ts_cache *c)
{
	lfpool_ts *p = c->pool;
	uint64_t h = held(c);
	unlink_free(c);
	p->retired.puts -= h;	/* what it held counts as out, not put back */
}

/*
 * Whether p is no live ThreadStatic pool, reported (with EINVAL) as what it
 * is: a destroyed one, a pool of another flavour (a Concurrent pool's
 * fields read as a ThreadStatic pool's would report it as one destroyed,
 * with an empty name), or no pool known.
 */
static bool not_a_live_pool(const lfpool_ts *p, const char *call)
{
	char problem[96];
	const char *name;
	if (LFPOOL_LIKELY(p->magic == LFP_MAGIC_LIVE))
		return false;
	if (p->magic == LFP_MAGIC_DEAD || p->magic == LFP_MAGIC_CLOSING) {
		snprintf(problem, sizeof(problem), "%s after destroy", call);
		name = p->core.name;
	} else if ((name = lfp_concurrent_name_of(p)) || (name = lfp_pool_name_of(p))) {
		snprintf(problem, sizeof(problem), "%s of a %s pool (it takes a ThreadStatic pool)",
			 call, lfp_concurrent_name_of(p) ? "Concurrent" : "Pool");
	} else {
		snprintf(problem, sizeof(problem), "%s of no live pool (not a ThreadStatic pool)",
			 call);
		name = "";
	}
	lfp_debug_report(name, p, problem);
	errno = EINVAL;
	return true;
}

LFPOOL_API lfpool_ts_cache *lfpool_ts_cache_create(lfpool_ts *p)
{
	/* A cache made on a destroyed pool would join its freed depot. */
	if (not_a_live_pool(p, "cache_create"))
		return NULL;
	lfp_grace_register();	/* before lfp_ts_lock (grace.h) */
	lfp_ts_lock_busy();
	lfpool_ts_cache *c = lfp_cache_new(p, LFP_CACHE_EXPLICIT);
	lfp_ts_unlock_busy();
	if (!c)
		errno = ENOMEM;
	return c;
}

LFPOOL_API void lfpool_ts_cache_destroy(lfpool_ts_cache *c)
{
	if (!c)
		return;
	if (c->kind != LFP_CACHE_EXPLICIT) {
		lfp_debug_report(c->pool->core.name, c,
			   "cache_destroy of a worker slot cache (use lfpool_ts_worker_release)");
		return;
	}
	lfp_grace_register();
	lfp_ts_lock_busy();
	lfp_cache_free(c);
	lfp_ts_unlock_busy();
}
