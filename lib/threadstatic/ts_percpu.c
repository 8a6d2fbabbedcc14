/* SPDX-License-Identifier: MIT */
/*
 * ts_percpu.c - ThreadStatic's per-CPU mode: gets and puts through the
 * caller's CPU area, and the slow paths that swap magazines with the depot.
 * ts_percpu.h says how objects move; ts_internal.h where they can be (here: also in
 * a CPU area, or in a magazine or buffer of a thread between two steps).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "grace.h"
#include "percpu.h"
#include "ts_percpu.h"

/* Objects moved at once through a buffer on the stack (loose objects). */
#define LFP_PCPU_BLOCK 64u

/* In the pool's block after its inline side data: 64-aligned there. */
_Static_assert(sizeof(struct lfp_ts_percpu) % 64 == 0, "a whole number of lines");

size_t lfp_ts_percpu_state_bytes(const lfpool_config *cfg)
{
	return cfg->flags & LFPOOL_F_PERCPU ? sizeof(struct lfp_ts_percpu) : 0;
}

/* What lfpool/ts.h's inline get and put read where no sequence may run
 * inline (per-thread pools, the fallback path, debug checks, a reset
 * hook, a pool being destroyed): a table whose gate is shut for good
 * (ncpu 0, below every CPU number), so that the sequence goes to the
 * pool's slow path at its first compare.  The inline calls then need no
 * test of the table's pointer, and a per-thread pool whose head had the
 * per-CPU bit (LFPOOL_TS_PERCPU_TAG_) would only take its slow path. */
static const struct lfpool_percpu_hot_ closed_table;

static void close_inline(lfpool_ts *p)
{
	p->fast.rseq_get = p->fast.rseq_put = &closed_table;
}

int lfp_ts_percpu_init(lfpool_ts *p, const lfpool_config *cfg, void *mem)
{
	close_inline(p);
	if (!(cfg->flags & LFPOOL_F_PERCPU))
		return 0;
	struct lfp_ts_percpu *t = memset(mem, 0, sizeof(struct lfp_ts_percpu));
	/* Two magazines' worth per CPU: Bonwick's loaded and previous. */
	int err = lfp_percpu_init(&t->pc, 2 * p->depot.mag_size, cfg->allocator, &p->fast,
				  &lfpool_ts_tls_);
	if (err == LFP_EMISALIGNED) {
		if (p->core.debug)
			lfp_debug_report(p->core.name, NULL, "the backing allocator returned memory "
				   "not aligned as asked (given back; ENOMEM)");
		err = ENOMEM;
	}
	if (err)
		return err;
	t->pool = p;
	t->check_gets = lfp_core_slow(&p->core);
	t->check_puts = lfp_core_slow(&p->core) || p->core.reset;
	t->fast_gets = t->pc.rseq && !t->check_gets;
	t->fast_puts = t->pc.rseq && !t->check_puts;
	p->percpu = t;
	/* lfpool/ts.h's inline sequences read the table's view. */
	if (t->fast_gets)
		p->fast.rseq_get = &t->pc.hot.view;
	if (t->fast_puts)
		p->fast.rseq_put = &t->pc.hot.view;
	return 0;
}

static void fini_obj(void *obj, void *core)
{
	lfp_core_fini_obj(core, obj);
}

uint64_t lfp_ts_percpu_fini(lfpool_ts *p)
{
	struct lfp_ts_percpu *t = p->percpu;
	if (!t)
		return 0;
	/* Puts from fini hooks go to the depot meanwhile, the inline ones
	 * (lfpool/ts.h) included. */
	p->percpu = NULL;
	close_inline(p);
	uint64_t n = lfp_percpu_count(&t->pc);
	lfp_percpu_drain(&t->pc, fini_obj, &p->core);
	lfp_percpu_fini(&t->pc);	/* t lies in p's block: freed with it */
	return n;
}

static void count(uint64_t *counter, uint64_t n)
{
	if (n)
		lfp_faa_u64_rlx(counter, n);
}

static size_t at_most(size_t n, size_t max) { return n < max ? n : max; }

/* A slow path begins or ends holding objects outside the pool's places:
 * the low half of transit counts those in flight, the high half those
 * ended.  A transit is also a grace section (grace.h): it pops stacks.
 * The thread's own open ones: see lfp_ts_percpu_fork_child. */
static __thread struct lfp_open open_transits;
static void transit_enter(struct lfp_ts_percpu *t)
{
	lfp_grace_enter();
	lfp_open_push(&open_transits, t);
	lfp_faa_u64_rlx(&t->transit, 1);
}
static void transit_leave(struct lfp_ts_percpu *t)
{
	lfp_faa_u64_rlx(&t->transit, (1ull << 32) - 1);
	lfp_open_pop(&open_transits);
	lfp_grace_leave();
}

/* objs[0 .. n) go into the caller's CPU area as far as it has room, the
 * rest onto the loose stack: no user's put. */
static void stow(lfpool_ts *p, void *const *objs, size_t n)
{
	struct lfp_ts_percpu *t = p->percpu;
	size_t k = lfp_percpu_push_bulk(&t->pc, objs, n);
	count(&t->n.moved_in, k);
	lfp_depot_put_objs(&p->depot, &p->core.slabs, objs + k, n - k);
}

/*
 * Up to want objects, straight from the depot, for a get that found the
 * area empty: the top ones of a full magazine, whose rest goes to the area
 * (and the magazine back to the depot, empty), or loose ones likewise.
 * Returns how many; 0 when the depot has none.
 */
static size_t refill(lfpool_ts *p, void **objs, size_t want)
{
	struct lfp_depot *d = &p->depot;
	void *block[LFP_PCPU_BLOCK], **src = block;
	size_t have;
	uint32_t mag = lfp_depot_pop(d, &d->full);
	if (mag != LFP_NIL) {
		src = lfp_mag_objs(d, mag);
		have = d->mag_size;
	} else {
		have = lfp_depot_get_objs(d, &p->core.slabs, block, at_most(d->mag_size, LFP_PCPU_BLOCK));
	}
	size_t k = at_most(have, want);
	memcpy(objs, src + have - k, k * sizeof(void *));
	stow(p, src, have - k);
	if (mag != LFP_NIL) {
		lfp_depot_push(d, &d->empty, mag);
		count(&p->percpu->n.full_pops, 1);
	}
	return k;
}

/* Up to want objects from the pool without creating any: the depot, else
 * the caller's area, which others (or this thread, now on another CPU) may
 * have filled meanwhile.  Adds the area's to *from_area. */
static size_t from_pool(lfpool_ts *p, void **objs, size_t want, size_t *from_area)
{
	size_t k = refill(p, objs, want);
	if (k == 0) {
		k = lfp_percpu_pop_bulk(&p->percpu->pc, objs, want);
		*from_area += k;
	}
	return k;
}

/* Give the objects of a failed get back: got from the pool (from_area of
 * them off the area: those pops were no gets after all) and made new. */
static void untake(lfpool_ts *p, void **objs, size_t got, size_t from_area, void **made,
		   size_t nmade)
{
	struct lfp_ts_percpu *t = p->percpu;
	count(&t->n.moved_out, from_area);
	transit_enter(t);
	stow(p, objs, got);
	transit_leave(t);
	/* All or none: the objects this get made are destroyed again (their
	 * fini hook runs in no transit and no grace section). */
	lfp_ts_unmake_objects(p, made, nmade);
}

/*
 * One new object, out, into objs[n - ++*made]: 0, or ENOBUFS or ENOMEM.
 * In no transit: the init hook and the backing allocator may block, or
 * get from other pools, for as long as they like, and a thief at capacity
 * (steal.c, step 7) waits for transits only.  In no grace
 * section either: lfp_ts_create_objects pops the raw stack in one of its
 * own and runs the init hook after it (grace.h).
 */
static int make_one(lfpool_ts *p, void **objs, size_t n, size_t *made)
{
	uint32_t idx;
	int err = lfp_ts_create_objects(p, 1, LFP_OBJ_OUT, &idx);
	if (!err)
		objs[n - ++*made] = lfp_slabs_ptr(&p->core.slabs, idx);
	return err;
}

/* At capacity: up to want objects from every other place into objs. */
static size_t steal(lfpool_ts *p, void **objs, size_t want)
{
	lfp_busy_enter();	/* the steal_lock */
	size_t k = lfp_steal(p, objs, want);
	lfp_busy_leave();
	return k;
}

/*
 * Complete a get of n objects into objs, all or none, of which the first
 * got came off the caller's area already: 0, or -1 with errno ENOBUFS or
 * ENOMEM.  Objects made new fill objs from the end (they are out already);
 * the pool's are marked out in debug pools once all n are there.  Only
 * the moves between the depot and the area are transits: the objects this
 * get holds between them are its own (out, for a thief), and no user code
 * runs inside one.
 */
static int take_in(lfpool_ts *p, void **objs, size_t n, size_t got)
{
	struct lfp_ts_percpu *t = p->percpu;
	size_t from_area = got, made = 0;
	while (got + made < n) {
		size_t want = n - made - got;
		count(&t->n.misses, 1);
		transit_enter(t);
		size_t k = from_pool(p, objs + got, want, &from_area);
		transit_leave(t);
		if (k == 0) {
			int err = make_one(p, objs, n, &made);
			if (!err)
				continue;
			if (err == ENOBUFS) {
				k = steal(p, objs + got, want);
				/* Nothing pooled: a trim may have made room meanwhile. */
				if (!k && !(err = make_one(p, objs, n, &made)))
					continue;
			}
			if (k == 0) {
				untake(p, objs, got, from_area, objs + n - made, made);
				errno = err;
				return -1;
			}
		}
		got += k;
	}
	for (size_t i = 0; t->check_gets && i < got; i++)
		lfp_core_mark_out(&p->core, lfp_slabs_index(&p->core.slabs, objs[i]));
	count(&t->n.gets, n - from_area);
	return 0;
}

/* To the loose stack, lock-free: the puts of a signal handler that
 * interrupted a step of this thread (lfp_busy), and the objects its get
 * took off the area before it failed. */
static void put_busy(lfpool_ts *p, void *const *objs, size_t n)
{
	lfp_depot_put_objs(&p->depot, &p->core.slabs, objs, n);
	count(&p->percpu->n.puts, n);
}

/* take_in, with cancellation off (the hooks, the allocator); from a signal
 * handler that interrupted a step of this thread -1 with EAGAIN at once
 * (lfpool/ts.h, "Signal handlers"), the got objects to the loose stack. */
static int take(lfpool_ts *p, void **objs, size_t n, size_t got)
{
	if (lfp_busy) {
		count(&p->percpu->n.moved_out, got);
		lfp_depot_put_objs(&p->depot, &p->core.slabs, objs, got);
		errno = EAGAIN;
		return -1;
	}
	int cancel = lfp_ts_nocancel();
	int r = take_in(p, objs, n, got);
	lfp_ts_cancel_restore(cancel);
	return r;
}

/* The area was empty: what the get returns.  Out of line: the sequences'
 * hits tail-call it on a miss. */
__attribute__((noinline)) static void *on_empty(struct lfp_ts_percpu *t)
{
	void *obj;
	return take(t->pool, &obj, 1, 0) == 0 ? obj : NULL;
}

/* A get off the fast path: the fallback path, or a debug pool (whose
 * area's object, if any, is checked too). */
__attribute__((noinline)) static void *get_slow(struct lfp_ts_percpu *t)
{
	if (lfp_busy) {		/* the fallback's lock may be this thread's */
		errno = EAGAIN;
		return NULL;
	}
	if (!t->check_gets) {
		void *obj = lfp_percpu_get(&t->pc);
		return obj ? obj : on_empty(t);
	}
	void *obj;
	size_t got = lfp_percpu_pop_bulk(&t->pc, &obj, 1);
	return take(t->pool, &obj, 1, got) == 0 ? obj : NULL;
}

void *lfp_ts_percpu_get(struct lfp_ts_percpu *t)
{
#ifdef LFP_PERCPU_RSEQ
	if (LFPOOL_LIKELY(t->fast_gets)) {
		void *obj;
		LFPOOL_RSEQ_GET_OR_(&t->pc.hot.view, obj, return on_empty(t));
		return obj;
	}
#endif
	return get_slow(t);
}

int lfp_ts_percpu_get_bulk(lfpool_ts *p, void **objs, size_t n)
{
	struct lfp_ts_percpu *t = p->percpu;
	if (lfp_busy)
		return take(p, objs, n, 0);	/* EAGAIN */
	size_t got = lfp_percpu_pop_bulk(&t->pc, objs, n);
	if (got == n && !t->check_gets)
		return 0;
	return take(p, objs, n, got);
}

/* An empty magazine for an overflow, or LFP_NIL: taking a spare one may
 * grow the magazines' slabs through the backing allocator, so it is done
 * before the transit begins (a thief waits for transits only).  In a
 * grace section (the empty stack's and the magazines' raw pops), as the
 * per-thread put's make_room: the allocator may run in one (grace.h). */
static uint32_t empty_mag(struct lfp_depot *d)
{
	lfp_grace_enter();
	uint32_t mag = lfp_depot_pop(d, &d->empty);
	if (mag == LFP_NIL)
		mag = lfp_depot_spare(d);
	lfp_grace_leave();
	return mag;
}

/*
 * A put (of accepted obj) that found the area full (in transit): obj and up to
 * magazine_size - 1 objects off the area leave for the depot, in mag (a full
 * magazine when it is one and the area still had enough: it may be another
 * CPU's by now), else onto the loose stack as one chain.
 */
static void overflow_in_transit(lfpool_ts *p, struct lfp_ts_percpu *t, void *obj, uint32_t mag)
{
	struct lfp_depot *d = &p->depot;
	void *block[LFP_PCPU_BLOCK], **objs = block;
	size_t want = at_most(d->mag_size, LFP_PCPU_BLOCK);
	if (mag != LFP_NIL) {
		objs = lfp_mag_objs(d, mag);
		want = d->mag_size;
	}
	objs[0] = obj;
	size_t k = 1 + lfp_percpu_pop_bulk(&t->pc, objs + 1, want - 1);
	count(&t->n.moved_out, k - 1);
	count(&t->n.puts, 1);
	if (mag != LFP_NIL && k == d->mag_size) {
		lfp_depot_push(d, &d->full, mag);
		count(&t->n.full_pushes, 1);
		return;
	}
	lfp_depot_put_objs(d, &p->core.slabs, objs, k);
	if (mag != LFP_NIL)
		lfp_depot_push(d, &d->empty, mag);
}

static void overflow(lfpool_ts *p, void *obj)
{
	struct lfp_ts_percpu *t = p->percpu;
	if (lfp_busy) {
		put_busy(p, &obj, 1);
		return;
	}
	uint32_t mag = empty_mag(&p->depot);
	transit_enter(t);
	overflow_in_transit(p, t, obj, mag);
	transit_leave(t);
}

/* The area was full: obj leaves, with a magazine's worth.  Out of line:
 * the sequences' hits tail-call it on a miss. */
__attribute__((noinline)) static void on_full(struct lfp_ts_percpu *t, void *obj)
{
	overflow(t->pool, obj);
}

/* A put off the fast path: the fallback path, NULL, or a pool that checks
 * puts. */
__attribute__((noinline)) static void put_slow(struct lfp_ts_percpu *t, void *obj)
{
	if (!obj || (t->check_puts && !lfp_core_accept(&t->pool->core, obj)))
		return;
	if (lfp_busy)		/* the fallback's lock may be this thread's */
		put_busy(t->pool, &obj, 1);
	else if (!lfp_percpu_put(&t->pc, obj))
		on_full(t, obj);
}

void lfp_ts_percpu_put(struct lfp_ts_percpu *t, void *obj)
{
#ifdef LFP_PERCPU_RSEQ
	if (LFPOOL_LIKELY(t->fast_puts && obj != NULL)) {
		LFPOOL_RSEQ_PUT_OR_(&t->pc.hot.view, obj, on_full(t, obj));
		return;
	}
#endif
	put_slow(t, obj);
}

/* Put n accepted objects: into the area, overflowing as often as needed. */
static void put_accepted(lfpool_ts *p, void *const *objs, size_t n)
{
	struct lfp_percpu *pc = &p->percpu->pc;
	if (lfp_busy) {
		put_busy(p, objs, n);
		return;
	}
	size_t k = lfp_percpu_push_bulk(pc, objs, n);
	while (k < n) {
		overflow(p, objs[k++]);
		k += lfp_percpu_push_bulk(pc, objs + k, n - k);
	}
}

/* lfp_core_accept_bulk's push. */
static void push_accepted(void *p, void *const *objs, size_t n)
{
	put_accepted(p, objs, n);
}

void lfp_ts_percpu_put_bulk(lfpool_ts *p, void *const *objs, size_t n)
{
	struct lfp_ts_percpu *t = p->percpu;
	if (!t->check_puts) {
		/* Runs of non-NULL objects go in as they are. */
		for (size_t i = 0, j; i < n; i = j + 1) {
			for (j = i; j < n && objs[j]; j++)
				;
			put_accepted(p, objs + i, j - i);
		}
		return;
	}
	lfp_core_accept_bulk(&p->core, objs, n, push_accepted, p);
}

void lfp_ts_percpu_flush(lfpool_ts *p)
{
	struct lfp_ts_percpu *t = p->percpu;
	void *block[LFP_PCPU_BLOCK];
	/* At most an area's worth: others may keep filling it. */
	size_t left = t->pc.hot.view.max, k;
	transit_enter(t);
	while (left && (k = lfp_percpu_pop_bulk(&t->pc, block, at_most(left, LFP_PCPU_BLOCK)))) {
		count(&t->n.moved_out, k);
		lfp_depot_put_objs(&p->depot, &p->core.slabs, block, k);
		left -= k;
	}
	transit_leave(t);
}

void lfp_ts_percpu_fork_lock(lfpool_ts *p, bool lock)
{
	if (p->percpu)
		lfp_percpu_lock_all(&p->percpu->pc, lock);
}

/* A thief at capacity sweeps again while a slow path is in flight (steal.c,
 * step 7): one that another thread was running at the fork would make the
 * child's gets at capacity wait forever instead of failing with ENOBUFS.
 * In flight in the child: the forking thread's own, if a hook it ran
 * inside one forked (they go on and end there). */
void lfp_ts_percpu_fork_child(lfpool_ts *p)
{
	struct lfp_ts_percpu *t = p->percpu;
	uint32_t mine;
	if (!t || !lfp_open_count(&open_transits, t, &mine))
		return;
	uint64_t v = lfp_load_u64_acq(&t->transit);
	lfp_faa_u64_rlx(&t->transit, (uint64_t)mine - (v & UINT32_MAX));
}

void lfp_ts_percpu_count(const lfpool_ts *p, struct lfp_cache_counts *sum)
{
	const struct lfp_ts_percpu *t = p->percpu;
	if (!t)
		return;
	/* The slow paths count an area operation after it happened: read
	 * their counters first, and the differences stay >= 0 (on x86-64;
	 * elsewhere the clamps keep a moment's skew from wrapping).  The
	 * acquires pair with no release: they keep the areas' loads below
	 * after these (load-load order); the counters' adds are relaxed. */
	uint64_t in = lfp_load_u64_acq(&t->n.moved_in), out = lfp_load_u64_acq(&t->n.moved_out);
	uint64_t gets = lfp_load_u64_acq(&t->n.gets), puts = lfp_load_u64_acq(&t->n.puts);
	uint64_t pushes = 0, pops = 0;
	lfp_percpu_ops(&t->pc, &pushes, &pops);
	sum->gets += pops + gets > out ? pops + gets - out : 0;
	sum->puts += pushes + puts > in ? pushes + puts - in : 0;
	sum->misses += lfp_load_u64_rlx(&t->n.misses);
	sum->full_pops += lfp_load_u64_rlx(&t->n.full_pops);
	sum->full_pushes += lfp_load_u64_rlx(&t->n.full_pushes);
}

void lfp_ts_percpu_stats(const lfpool_ts *p, lfpool_stats *st)
{
	if (!p->percpu)
		return;
	st->percpu_mode = lfp_percpu_mode(&p->percpu->pc);
	st->bytes_held += p->percpu->pc.bytes;
}

uint64_t lfp_ts_percpu_bytes(const lfpool_ts *p)
{
	return p->percpu ? p->percpu->pc.bytes : 0;
}

void lfp_ts_percpu_each(const lfpool_ts *p, void (*fn)(void *obj, void *ctx), void *ctx)
{
	if (p->percpu)
		lfp_percpu_each(&p->percpu->pc, fn, ctx);
}
