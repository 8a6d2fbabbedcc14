/* SPDX-License-Identifier: MIT */
/*
 * steal.c - stop and take: a get that would fail with ENOBUFS takes objects
 * from every place the pool keeps them, and drain and trim reach every place
 * too.  /work/coord/steal-protocol.md has the design note; the Spin model of
 * it is stress/model/steal.pml.
 *
 * Places: the depot (full magazines, loose objects), every cache's loaded
 * and previous magazines (implicit, explicit, worker slots), every CPU area
 * of a per-CPU pool.  The depot is lock-free and anyone may pop it.  The
 * others belong to owners whose hit paths run no atomic read-modify-write
 * and no fence, so a thief stops them, fences, takes and restarts:
 *
 *   1. lock p->steal_lock, then lfp_ts_lock (thieves, drain and trim are
 *      serialized; the list of caches holds still)
 *   2. take from the depot (no fence: a get often ends here) (take_depot)
 *   3. stop every cache: lock it, raise fast.low to
 *      LFP_CACHE_STOPPED                                      (stop_cache)
 *      and, in rseq mode, close the CPU areas' gate              (stop_areas)
 *   4. one heavy fence, membarrier                       (lfp_fence_heavy)
 *   5. take from the depot again, each cache's loaded magazine (from the
 *      bottom, below the top it now reads) and previous one, and each
 *      CPU area                      (take_depot, take_cache, take_areas)
 *   6. restart: store each cache's new low (release) and unlock it, reopen
 *      the gate                               (restart_cache, restart_areas)
 *   7. nothing found while a per-CPU slow path held objects in transit
 *      (transits changed or was not idle): unlock, yield,
 *      lock, sweep again (a transit runs no user code: lfp_steal)
 *   8. unlock; a get that got nothing tries to create once more, and only
 *      then fails with ENOBUFS.
 *
 * Why an owner's get never returns an object a thief took (step 4): the
 * get stores its decremented top, then loads low.  membarrier orders
 * every running thread's earlier accesses before its later ones against
 * the thief: if the get's store came before that point, the thief's load
 * of the top (step 5) sees it and takes only objects below it; if after,
 * the get's load of low sees LFP_CACHE_STOPPED or the raised low, fails its
 * check and waits for the cache lock in its slow path.  An rseq sequence in
 * flight on a CPU whose area we take is aborted by the same membarrier, and
 * every later one reads the closed gate.  In the TSan build the per-CPU
 * areas take their locks (fallback) and the cache's Dekker accesses are
 * sequentially consistent on both sides.
 */
#include <errno.h>
#include <sched.h>

#include "fence.h"
#include "grace.h"
#include "ts_internal.h"
#include "ts_percpu.h"

/* ts_internal.h: the lock of every pool's list of caches, the live pools
 * and the retired counters.  Here, with its lowest user: a thief walks the
 * list of caches under it, and every file above creates and frees caches
 * under it. */
pthread_mutex_t lfp_ts_lock = PTHREAD_MUTEX_INITIALIZER;

void lfp_ts_lock_busy(void)
{
	lfp_busy_enter();
	pthread_mutex_lock(&lfp_ts_lock);
}

void lfp_ts_unlock_busy(void)
{
	pthread_mutex_unlock(&lfp_ts_lock);
	lfp_busy_leave();
}

/*
 * The thief's steps on cache c (caller holds lfp_ts_lock): stop (lock it
 * and raise its low to LFP_CACHE_STOPPED, keeping the old one in *low);
 * after the heavy fence take what the sink wants from the bottom of the
 * loaded magazine and from the previous one, advancing *low; then restart
 * (store *low, release) and unlock.
 */
static void stop_cache(lfpool_ts_cache *c, int32_t *low)
{
	lfp_cache_lock(c);
	*low = lfp_cache_index(c, lfp_load_slots_rlx(&c->fast.low));
	if (!c->checked)
		lfp_store_slots_dekker(&c->fast.low, LFP_CACHE_STOPPED);
}

static void take_cache(lfpool_ts_cache *c, int32_t *low, struct lfp_sink *sk)
{
	size_t before = sk->got;
	if (c->checked) {
		/* Debug pools: every get and put runs under the lock we hold. */
		size_t k = c->debug_count < lfp_sink_room(sk) ? c->debug_count : lfp_sink_room(sk);
		lfp_store_u32_rlx(&c->debug_count, c->debug_count - (uint32_t)k);
		lfp_sink_give(sk, c->fast.objs + c->debug_count, k);
	} else {
		/* After the fence: every get that passed its check with the old
		 * low stored its decremented top before it, and we see that store. */
		int32_t top = lfp_cache_index(c, lfp_load_slots_dekker(&c->fast.top));
		if (top > *low) {
			size_t held = (size_t)(top - *low), room = lfp_sink_room(sk);
			size_t k = held < room ? held : room;
			lfp_sink_give(sk, c->fast.objs + *low, k);
			*low += (int32_t)k;
		}
	}
	size_t k = c->prev_count < lfp_sink_room(sk) ? c->prev_count : lfp_sink_room(sk);
	lfp_store_u32_rlx(&c->prev_count, c->prev_count - (uint32_t)k);
	lfp_sink_give(sk, c->prev_objs + c->prev_count, k);
	/* What the cache holds went down without a get: see puts_base. */
	lfp_store_u64_rlx(&c->puts_base, c->puts_base + (sk->got - before));
}

static void restart_cache(lfpool_ts_cache *c, int32_t low)
{
	if (!c->checked)
		lfp_store_slots_rel(&c->fast.low, c->fast.objs + low);
	lfp_cache_unlock(c);
}

/*
 * The same steps on the CPU areas of a per-CPU pool (nothing for a
 * per-thread one): stop them (true: the caller must run lfp_fence_heavy()
 * before it takes), take what the sink wants, restart them.
 */
static bool stop_areas(lfpool_ts *p)
{
	return p->percpu && lfp_percpu_stop(&p->percpu->pc);
}

static void give_to_sink(void *sk, void *const *objs, size_t n)
{
	lfp_sink_give(sk, objs, n);
}

static void take_areas(lfpool_ts *p, struct lfp_sink *sk)
{
	struct lfp_ts_percpu *t = p->percpu;
	if (!t)
		return;
	/* Area pops that are no user's get (the objects leave for the sink). */
	size_t k = lfp_percpu_take(&t->pc, lfp_sink_room(sk), give_to_sink, sk);
	if (k)
		lfp_faa_u64_rlx(&t->n.moved_out, k);
}

static void restart_areas(lfpool_ts *p)
{
	if (p->percpu)
		lfp_percpu_restart(&p->percpu->pc);
}

/* Per-CPU slow paths that may hold objects between two places: ended << 32
 * | in flight now (0 for a per-thread pool). */
static uint64_t transits(const lfpool_ts *p)
{
	return p->percpu ? lfp_load_u64_acq(&p->percpu->transit) : 0;
}

/* Step 2: loose objects, then full magazines (the top ones to the sink, the
 * rest back as loose objects, the magazine to the empty stack). */
static void take_depot(lfpool_ts *p, struct lfp_sink *sk)
{
	struct lfp_depot *d = &p->depot;
	while (lfp_sink_room(sk)) {
		size_t room = lfp_sink_room(sk);
		uint32_t n = lfp_depot_get_objs(d, &p->core.slabs, sk->objs + sk->got,
						room < UINT32_MAX ? (uint32_t)room : UINT32_MAX);
		sk->got += n;
		if (n)
			continue;
		uint32_t mag = lfp_depot_pop(d, &d->full);
		if (mag == LFP_NIL)
			return;
		void **objs = lfp_mag_objs(d, mag);
		size_t k = room < d->mag_size ? room : d->mag_size;
		lfp_sink_give(sk, objs + d->mag_size - k, k);
		lfp_depot_put_objs(d, &p->core.slabs, objs, d->mag_size - k);
		lfp_depot_push(d, &d->empty, mag);
	}
}

/* Steps 3-6 over the caches (when caches), the CPU areas and (when depot)
 * the depot again: with every cache locked and every area stopped no owner
 * can move objects between places while we look, so a sweep that finds
 * nothing saw every pooled object (but those a per-CPU slow path holds:
 * step 7).  Caller holds both locks. */
static void sweep_owned(lfpool_ts *p, struct lfp_sink *sk, bool caches, bool depot)
{
	lfpool_ts_cache *list = caches ? p->caches : NULL;
	for (lfpool_ts_cache *c = list; c; c = c->next)
		stop_cache(c, &c->thief_low);
	bool fence = stop_areas(p);
	if (fence || list)
		lfp_fence_heavy();
	if (depot)
		take_depot(p, sk);
	for (lfpool_ts_cache *c = list; c; c = c->next)
		take_cache(c, &c->thief_low, sk);
	take_areas(p, sk);
	for (lfpool_ts_cache *c = list; c; c = c->next)
		restart_cache(c, c->thief_low);
	restart_areas(p);
}

/* The negative control of the capacity harness (stress/capacity.c, built
 * as stress/capacity-nosteal) and of the matrix's strand rows (stress/
 * lfmatrix-nosteal): a thief takes from the depot only, never from another
 * cache, worker slot or CPU area, as thieves once did. */
#ifdef LFPOOL_STRESS_NO_STEAL
# define LFP_STEAL_OWNED 0
#else
# define LFP_STEAL_OWNED 1
#endif

/* Steps 1 and 8: the locks, and the grace section take_depot pops in. */
static void lock_both(lfpool_ts *p)
{
	pthread_mutex_lock(&p->steal_lock);
	pthread_mutex_lock(&lfp_ts_lock);
	lfp_grace_enter_locked();
}

static void unlock_both(lfpool_ts *p)
{
	lfp_grace_leave();
	pthread_mutex_unlock(&lfp_ts_lock);
	pthread_mutex_unlock(&p->steal_lock);
}

/*
 * Step 7 waits for transits, which run library code only: no init or fini
 * hook and no backing allocator runs inside one (ts_percpu.c), so the wait
 * is as long as a few stack operations of another thread (never an init
 * hook that blocks, while it holds steal_lock).  Between two
 * sweeps the thief holds no lock and is in no grace section, so drains,
 * trims and other thieves of the pool never queue behind it.
 */
size_t lfp_steal(lfpool_ts *p, void **objs, size_t want)
{
	struct lfp_sink sk = { .pool = p, .objs = objs, .want = want };
	if (lfp_fini_running == &p->core)
		return 0;	/* core.h, lfp_fini_running: ENOBUFS, as documented */
	lfp_grace_register();	/* before the locks (grace.h) */
	lock_both(p);
	take_depot(p, &sk);	/* the cheap place first: no fence */
	while (LFP_STEAL_OWNED && !sk.got) {
		uint64_t before = transits(p);
		sweep_owned(p, &sk, true, true);
		/* Nothing, and no per-CPU slow path held objects meanwhile
		 * (none in flight before, none begun or ended since): every
		 * object is out with a user. */
		if (sk.got || (before == transits(p) && (uint32_t)before == 0))
			break;
		unlock_both(p);
		sched_yield();
		lock_both(p);
	}
	unlock_both(p);
	return sk.got;
}

/* Every object of the caches (when caches) and CPU areas onto the loose
 * stack; caller holds p->steal_lock.  Returns how many. */
static size_t drain_locked(lfpool_ts *p, bool caches)
{
	struct lfp_sink sk = { .pool = p, .objs = NULL, .want = SIZE_MAX };
	pthread_mutex_lock(&lfp_ts_lock);
	sweep_owned(p, &sk, caches, false);
	for (lfpool_ts_cache *c = p->caches; c; c = c->next)
		lfp_cache_cool(c);
	pthread_mutex_unlock(&lfp_ts_lock);
	return sk.got;
}

size_t lfp_steal_drain_all(lfpool_ts *p)
{
	pthread_mutex_lock(&p->steal_lock);
	size_t n = drain_locked(p, true);
	pthread_mutex_unlock(&p->steal_lock);
	return n;
}

size_t lfp_steal_drain_areas(lfpool_ts *p)
{
	return drain_locked(p, false);
}
