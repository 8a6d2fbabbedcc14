/* SPDX-License-Identifier: MIT */
/*
 * matrix.c - lfmatrix: the headers' synchronization tables, run.
 *
 * `calls` below is THE table: one line per public call, with the name it
 * has in each flavour and mode, or NULL where the header's synchronization
 * table does not let it run concurrently with other calls (pool.h: a Pool
 * has one thread at a time, so its column is empty).  Every pair of calls
 * that share a mode, a call with itself included, is a row: two threads
 * run the two calls at once, in epochs that start together (a barrier),
 * on a pool prewarmed to its capacity.  A new call cannot be added without
 * its rows: they are generated from its line.
 *
 * What every row checks, during and after:
 *  - no object out twice (the owner word of every object got, obj.c);
 *  - capacity never exceeded (stats' created and the hooks' count);
 *  - no ENOBUFS while objects are pooled: the capacity leaves room for
 *    what the two threads hold and what every cache may keep, so a get may
 *    say ENOBUFS only where a header says it may (lfpool/ts.h: while a
 *    trim of a pool with a fini hook finalizes objects);
 *  - owns exact: yes for the pool's objects, no for interior pointers and
 *    for objects of a sibling pool that shares the backing allocator (which
 *    reuses freed blocks at once, stress.h);
 *  - afterwards the census (round.c): conservation of objects, none twice,
 *    stats exact, every byte back, backing memory within the bound.
 * ThreadStatic modes also get a strand row (below calls_epoch): one thread
 * parks every object in its caches, the other gets at capacity, which
 * only stealing lets it do; stress/lfmatrix-nosteal, built without
 * stealing, must fail it.
 * Each row runs once as is and once with yield injection: a random yield or
 * spin around every atomic step of the library (lib/atomic.h) and in the
 * stack's CAS windows (lfp_stress_yield).
 * The "signal" line (ThreadStatic modes) is a call of the other thread's
 * signal handler: its step sends SIGUSR2 to the other thread while that
 * thread runs its own call, and the handler gets an object with
 * lfpool_ts_get_signal (EAGAIN only) and claims it (owner word), or puts
 * the one it got in the thread's previous signal back with
 * lfpool_ts_put_signal (lfpool/ts.h, "Signal handlers"); its rows'
 * capacity leaves room for the handlers' objects.
 * The "cancel" line starts a thread that gets (its cache made), drains and
 * trims, cancels it at once and joins it, then trims, gets and puts: no
 * call may be cancelled inside, nor leave a lock behind (lfpool/ts.h,
 * "Cancellation").
 * The "hooks" line gets and puts on a pool whose init and fini hooks also
 * get from, put to and trim another pool and yield the CPU meanwhile, and
 * check that their thread holds no ThreadStatic lock and is in no grace
 * section (lfp_busy, lib/stress_hooks.h); stress/lfmatrix-hooklock, whose
 * trim runs fini hooks under steal_lock, must fail its ts_trim||ts_hooks
 * rows.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfpool.h"
#include "stress_hooks.h"	/* lfp_stress_yield */
#include "stress.h"

enum { M_POOL, M_CONC, M_TS, M_TSCACHE, M_PERCPU, M_MODES };

static const struct flavour *const mode_flavour[M_MODES] = {
	&flavour_pool, &flavour_concurrent, &flavour_ts, &flavour_ts_cache, &flavour_percpu,
};

#define MAG 4		/* magazine_size: small, so that the depot is busy */
#define HOLD 4		/* most objects a step holds */
#define STEPS 16	/* steps of each thread per epoch */
#define MIN_EPOCHS 8	/* per round, however slow the machine */
#define W_SHARED 7	/* the worker index both threads' worker_* calls use */
#define W_OWN 8		/* a thread's own worker slot: W_OWN + its index */
#define MAX_CACHES 8	/* caches alive at once, at most: 2 threads x (handle,
			 * own slot, explicit cache), the shared slot, the census */
#define CONC_CAP 64

struct mx;

struct call {
	/* One step of the call (and what it needs around it), on w's thread. */
	void (*step)(struct worker *w, struct mx *m);
	/* Before each epoch, on thread 0 alone, for the thread `who` that will
	 * run this call (NULL: nothing). */
	void (*prep)(struct worker *w0, struct mx *m, unsigned who);
	const char *name[M_MODES];
};

/* The state a row's two threads share. */
struct mx {
	void (*epoch)(struct worker *w, struct mx *m);	/* after the epoch's barrier */
	unsigned mode, call[2];
	size_t cap;
	bool enobufs_ok;		/* a header allows ENOBUFS in this row */
	lfpool_concurrent *sibling;	/* shares the recycler with the pool */
	struct stress_alloc sib_alloc;
	struct stress_recycler rec;
	pthread_barrier_t bar;
	int done;			/* atomic: the row's time is up */
	void *stash[2][HOLD];		/* got by thread 0, put by the other */
	unsigned stashed[2];
	lfpool_ts_cache *shared_slot;	/* atomic: what worker_cache(W_SHARED) gave */
	pthread_t thread[2];		/* the row's threads, for step_signal */
};

/* ---- steps ---------------------------------------------------------------- */

/* Get up to n objects one by one; how many. */
static unsigned get_some(struct worker *w, struct mx *m, void **objs, unsigned n)
{
	unsigned k = 0;
	while (k < n && (objs[k] = worker_get(w, m->enobufs_ok, false)) != NULL)
		k++;
	return k;
}

static void step_get(struct worker *w, struct mx *m)
{
	void *objs[HOLD];
	unsigned n = get_some(w, m, objs, 1 + rng_below(&w->rng, HOLD));
	for (unsigned i = 0; i < n; i++)
		worker_put(w, objs[i]);
}

/* Thread 0 gets objects that the other thread (or itself) will put. */
static void prep_put(struct worker *w0, struct mx *m, unsigned who)
{
	unsigned n = get_some(w0, m, m->stash[who], HOLD);
	for (unsigned i = 0; i < n; i++)
		obj_pass(w0, m->stash[who][i]);
	m->stashed[who] = n;
}

/* Put what thread 0 got for us (remote puts), then our own. */
static void step_put(struct worker *w, struct mx *m)
{
	unsigned *n = &m->stashed[w->index];
	while (*n) {
		void *o = m->stash[w->index][--*n];
		if (obj_take(w, o))
			worker_put(w, o);
	}
	void *objs[HOLD];
	unsigned k = get_some(w, m, objs, 1 + rng_below(&w->rng, HOLD));
	while (k)
		worker_put(w, objs[--k]);
}

static void step_get_bulk(struct worker *w, struct mx *m)
{
	void *objs[HOLD];
	unsigned n = 1 + rng_below(&w->rng, HOLD);
	if (!worker_get_bulk(w, objs, n, m->enobufs_ok))
		return;
	for (unsigned i = 0; i < n; i++)
		worker_put(w, objs[i]);
}

static void step_put_bulk(struct worker *w, struct mx *m)
{
	void *objs[HOLD];
	worker_put_bulk(w, objs, get_some(w, m, objs, 1 + rng_below(&w->rng, HOLD)));
}

static void step_flush(struct worker *w, struct mx *m)
{
	step_get(w, m);
	w->rd->run->fl->flush(w->h);
}

/* Give the thread's handle up and take a new one. */
static void step_reenter(struct worker *w, struct mx *m)
{
	const struct flavour *fl = w->rd->run->fl;
	fl->leave(w->rd->pool, w->h);
	w->h = fl->enter(w->rd->pool);
	if (!w->h) {
		run_fail(w->rd->run, "no handle after leave: %s", strerror(errno));
		w->skip_leave = true;
		return;
	}
	step_get(w, m);
}

static void step_prewarm(struct worker *w, struct mx *m)
{
	(void)m;
	if (w->rd->run->fl->prewarm(w->rd->pool, 1 + rng_below(&w->rng, HOLD)) != 0 &&
	    errno != ENOBUFS)
		run_fail(w->rd->run, "prewarm failed: %s", strerror(errno));
}

/* Trim, half the time keeping every object (it then destroys nothing, and
 * no get may fail meanwhile); its count must be what fini saw here. */
static void step_trim(struct worker *w, struct mx *m)
{
	uint64_t before = obj_finis_here();
	size_t keep = rng_below(&w->rng, 2) ? m->cap : rng_below(&w->rng, 2 * HOLD);
	size_t n = w->rd->run->fl->trim(w->rd->pool, keep);
	if (obj_finis_here() - before != n)
		run_fail(w->rd->run, "trim(%zu) said %zu destroyed, fini saw %llu", keep, n,
			 (unsigned long long)(obj_finis_here() - before));
	w->t.trimmed += n;
}

/* Drain every cache and CPU area (of both threads) onto the depot while
 * the other thread gets and puts (lfpool/ts.h: "Safe while other threads
 * get and put"); every object it moved is pooled, so no get may fail. */
static void step_drain(struct worker *w, struct mx *m)
{
	step_get(w, m);
	lfpool_ts_drain(w->rd->pool);
}

/* owns: no for an object of the sibling pool (trimmed to nothing after
 * every get, so that each get takes a slab, perhaps one the pool just gave
 * back), yes for our object, no for its interior or a local. */
static void step_owns(struct worker *w, struct mx *m)
{
	const struct flavour *fl = w->rd->run->fl;
	void *pool = w->rd->pool;
	int local;
	void *s = lfpool_concurrent_get(m->sibling);
	if (s) {
		if (fl->owns(pool, s) != 0)
			run_fail(w->rd->run, "owns is true for an object of another pool "
				 "(a slab the pool gave back and the other pool got)");
		lfpool_concurrent_put(m->sibling, s);
		lfpool_concurrent_trim(m->sibling, 0);
	}
	char *o = worker_get(w, m->enobufs_ok, false);
	if (o) {
		if (fl->owns(pool, o) != 1)
			run_fail(w->rd->run, "owns is %d for an object the pool handed out",
				 fl->owns(pool, o));
		if (fl->owns(pool, o + 1) != 0)
			run_fail(w->rd->run, "owns is true for an interior pointer");
		worker_put(w, o);
	}
	if (fl->owns(pool, &local) != 0)
		run_fail(w->rd->run, "owns is true for a local variable");
}

/* Objects alive per the hooks, never overestimated: inits before finis. */
static uint64_t hooks_alive_low(const struct round *rd)
{
	uint64_t inits = __atomic_load_n(&rd->objs.inits, __ATOMIC_ACQUIRE);
	return inits - __atomic_load_n(&rd->objs.finis, __ATOMIC_ACQUIRE);
}

static void step_stats(struct worker *w, struct mx *m)
{
	lfpool_stats st;
	w->rd->run->fl->stats(w->rd->pool, &st);
	if (st.created > m->cap)
		run_fail(w->rd->run, "stats: %llu created, capacity %zu",
			 (unsigned long long)st.created, m->cap);
	if (m->mode == M_CONC && st.retained > st.created)
		run_fail(w->rd->run, "stats: %llu retained of %llu created",
			 (unsigned long long)st.retained, (unsigned long long)st.created);
	uint64_t alive = hooks_alive_low(w->rd);
	if (alive > m->cap)
		run_fail(w->rd->run, "%llu objects alive, capacity %zu", (unsigned long long)alive,
			 m->cap);
}

/* The bound grows with caches, and the memory held now is within it. */
static void step_max_bytes(struct worker *w, struct mx *m)
{
	(void)m;
	size_t one = lfpool_ts_max_bytes(w->rd->pool, 1);
	size_t all = lfpool_ts_max_bytes(w->rd->pool, MAX_CACHES);
	int64_t held = __atomic_load_n(&w->rd->alloc.bytes, __ATOMIC_RELAXED);
	if (one > all || held > (int64_t)all)
		run_fail(w->rd->run, "max_bytes: %zu for one cache, %zu for %u; %lld held", one,
			 all, MAX_CACHES, (long long)held);
}

/* One get and put through cache c. */
static void cache_round_trip(struct worker *w, struct mx *m, lfpool_ts_cache *c)
{
	void *o = lfpool_ts_cache_get(c);
	if (!o) {
		if (errno == ENOBUFS && m->enobufs_ok)
			w->t.failed_gets++;
		else
			run_fail(w->rd->run, "cache get failed: %s", strerror(errno));
		return;
	}
	if (obj_claim(w, o) && obj_release(w, o))
		lfpool_ts_cache_put(c, o);
}

static void step_cache_create(struct worker *w, struct mx *m)
{
	lfpool_ts_cache *c = lfpool_ts_cache_create(w->rd->pool);
	if (!c) {
		run_fail(w->rd->run, "cache_create: %s", strerror(errno));
		return;
	}
	cache_round_trip(w, m, c);
	lfpool_ts_cache_destroy(c);
}

/* The shared slot's cache is one and the same for every caller; the
 * thread's own slot is used. */
static void step_worker_cache(struct worker *w, struct mx *m)
{
	lfpool_ts_cache *c = lfpool_ts_worker_cache(w->rd->pool, W_SHARED), *first = NULL;
	if (!c) {
		run_fail(w->rd->run, "worker_cache: %s", strerror(errno));
		return;
	}
	if (!__atomic_compare_exchange_n(&m->shared_slot, &first, c, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED) && first != c)
		run_fail(w->rd->run, "worker_cache(%u) gave two caches", W_SHARED);
	c = lfpool_ts_worker_cache(w->rd->pool, W_OWN + w->index);
	if (c)
		cache_round_trip(w, m, c);
	else
		run_fail(w->rd->run, "worker_cache: %s", strerror(errno));
}

/* Thread 0 fills the shared slot's cache before the releases race. */
static void prep_worker_release(struct worker *w0, struct mx *m, unsigned who)
{
	(void)who;
	lfpool_ts_cache *c = lfpool_ts_worker_cache(w0->rd->pool, W_SHARED);
	void *objs[HOLD];
	unsigned n = 0;
	if (!c) {
		run_fail(w0->rd->run, "worker_cache: %s", strerror(errno));
		return;
	}
	while (n < HOLD && (objs[n] = lfpool_ts_cache_get(c)) != NULL && obj_claim(w0, objs[n]))
		n++;
	while (n) {
		void *o = objs[--n];
		if (obj_release(w0, o))
			lfpool_ts_cache_put(c, o);
	}
	(void)m;
}

static void step_worker_release(struct worker *w, struct mx *m)
{
	(void)m;
	lfpool_ts_worker_release(w->rd->pool, W_SHARED);
}

/* The signal handler's pool (NULL between rows) and its thread's owner
 * word for what it holds (a worker of its own: the thread's tid + 1000). */
static lfpool_ts *signal_pool;		/* atomic */
static __thread struct worker handler_w;
static uint32_t signal_bad_errno;	/* atomic */
static uint64_t signal_gets;		/* atomic */

static __thread void *handler_held;	/* got in one signal, put in the next */

/* Put what the handler holds back (the last signal, or the row's end with
 * the signal blocked). */
static void handler_put(lfpool_ts *p)
{
	void *o = handler_held;
	handler_held = NULL;
	if (o && obj_release(&handler_w, o))
		lfpool_ts_put_signal(p, o);
}

static void on_usr2(int signo)
{
	(void)signo;
	int saved = errno;
	lfpool_ts *p = __atomic_load_n(&signal_pool, __ATOMIC_ACQUIRE);
	if (p && handler_w.rd && handler_held) {
		handler_put(p);
	} else if (p && handler_w.rd) {
		errno = 0;
		void *o = lfpool_ts_get_signal(p);
		if (!o && errno != EAGAIN)
			__atomic_store_n(&signal_bad_errno, (uint32_t)errno, __ATOMIC_RELAXED);
		if (o && obj_claim(&handler_w, o)) {
			handler_held = o;
			__atomic_fetch_add(&signal_gets, 1, __ATOMIC_RELAXED);
		}
	}
	errno = saved;
}

/* At the row's end: no more signals on this thread, the handler's object
 * back. */
static void handler_done(struct worker *w)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	lfpool_ts *p = __atomic_load_n(&signal_pool, __ATOMIC_ACQUIRE);
	if (handler_held && p)
		handler_put(p);
	w->t.gets += handler_w.t.gets;
	w->t.puts += handler_w.t.puts;
	handler_w.rd = NULL;
}

/* Signals to the other thread of the row, during its call's steps, and a
 * get and put of our own. */
static void step_signal(struct worker *w, struct mx *m)
{
	for (unsigned i = 0; i < 4; i++)
		pthread_kill(m->thread[1 - w->index], SIGUSR2);
	step_get(w, m);
}

/* A thread that runs slow paths (its first get makes its cache), a drain
 * and a trim, cancelled as it starts (lfpool/ts.h, "Cancellation": no
 * call is a cancellation point, those that may block run with it off),
 * with its object put back before the next cancellation point. */
static void *cancelled_calls(void *pool)
{
	void *o = lfpool_ts_get(pool);
	if (o)
		lfpool_ts_put(pool, o);
	lfpool_ts_drain(pool);
	lfpool_ts_trim(pool, 0);
	for (;;)
		pthread_testcancel();
	return NULL;
}

/* Such a thread, cancelled at once and joined; then this thread's own
 * trim and a get and put (a lock left held by the cancelled thread, as
 * liburcu-bp's once was, would hang them: the run's watchdog). */
static void step_cancel(struct worker *w, struct mx *m)
{
	pthread_t t;
	void *ret;
	if (pthread_create(&t, NULL, cancelled_calls, w->rd->pool) != 0) {
		run_fail(w->rd->run, "cancel: pthread_create failed");
		return;
	}
	pthread_cancel(t);
	if (pthread_join(t, &ret) != 0 || ret != PTHREAD_CANCELED)
		run_fail(w->rd->run, "cancel: the thread was not cancelled");
	step_trim(w, m);
	step_get(w, m);
}

/* The "hooks" line: a get and put, and the row's pool has init and fini
 * hooks that also get from and put to the sibling pool, trim it, and
 * yield the CPU between (lfpool/ts.h, "Hooks": a hook may block and call
 * any pool, trims of others included), on top of the stress hooks. */
static lfpool_concurrent *hook_sibling;	/* atomic */

/* lfpool/ts.h, "Hooks": no hook runs under a library lock or inside a
 * grace section (there, a hook that blocks or calls another pool could
 * wait for a thread that waits for this one). */
static void hook_outside_library(struct round *rd, const char *hook)
{
	unsigned busy = lfp_busy;
	if (busy)
		run_fail(rd->run, "%s hook ran inside %u library step(s) holding a lock "
			 "or a grace section", hook, busy);
}

static void hook_calls_pool(void)
{
	lfpool_concurrent *s = __atomic_load_n(&hook_sibling, __ATOMIC_ACQUIRE);
	void *o = lfpool_concurrent_get(s);
	sched_yield();
	lfpool_concurrent_put(s, o);
	lfpool_concurrent_trim(s, 0);
}

static void busy_init(void *obj, void *ctx)
{
	obj_init_hook(obj, ctx);
	hook_outside_library(ctx, "init");
	hook_calls_pool();
}

static void busy_fini(void *obj, void *ctx)
{
	hook_outside_library(ctx, "fini");
	hook_calls_pool();
	obj_fini_hook(obj, ctx);
}

static void step_hooks(struct worker *w, struct mx *m)
{
	step_get(w, m);
}

#define TS3(n) { NULL, NULL, "ts_" n, "ts_" n, "ts_" n }
#define HANDLE(n) { NULL, n, "ts_" n, "cache_" n, "ts_" n }

/*
 * THE table (see the top of this file).  Columns: pool, concurrent,
 * threadstatic (implicit caches), ts-cache (explicit caches), percpu.
 */
static const struct call calls[] = {
	{ step_get, NULL, HANDLE("get") },
	{ step_put, prep_put, HANDLE("put") },
	{ step_get_bulk, NULL, HANDLE("get_bulk") },
	{ step_put_bulk, NULL, HANDLE("put_bulk") },
	{ step_flush, NULL, { NULL, NULL, "ts_flush", "cache_flush", "ts_flush" } },
	{ step_reenter, NULL, { NULL, NULL, "ts_detach+attach", "cache_destroy+create",
				"ts_detach+attach" } },
	{ step_prewarm, NULL, { NULL, "prewarm", "ts_prewarm", "ts_prewarm", "ts_prewarm" } },
	{ step_trim, NULL, { NULL, "trim", "ts_trim", "ts_trim", "ts_trim" } },
	{ step_drain, NULL, TS3("drain") },
	{ step_owns, NULL, { NULL, "owns", "ts_owns", "ts_owns", "ts_owns" } },
	{ step_stats, NULL, { NULL, "stats", "ts_stats", "ts_stats", "ts_stats" } },
	{ step_max_bytes, NULL, TS3("max_bytes") },
	{ step_cache_create, NULL, { NULL, NULL, "cache_create+destroy", NULL,
				     "cache_create+destroy" } },
	{ step_worker_cache, NULL, TS3("worker_cache") },
	{ step_worker_release, prep_worker_release, TS3("worker_release") },
	{ step_signal, NULL, TS3("signal") },
	{ step_cancel, NULL, TS3("cancel") },
	{ step_hooks, NULL, TS3("hooks") },
};
static const size_t ncalls = sizeof(calls) / sizeof(calls[0]);

/* ---- a row ------------------------------------------------------------------ */

static __thread uint64_t yield_rng;

/* Yield injection for the "+yield" runs: yield in about a quarter of the
 * windows, spin briefly in another quarter. */
static void matrix_yield(void)
{
	uint64_t r = rng_next(&yield_rng);
	if ((r & 3) == 0)
		sched_yield();
	else if ((r & 3) == 1)
		for (unsigned i = (unsigned)(r >> 8) & 63; i; i--)
			__asm__ volatile("" ::: "memory");
}

/* Whether the round ends before epoch e: a failure, or its time is up
 * and it ran MIN_EPOCHS. */
static bool round_done(struct worker *w, unsigned e)
{
	return __atomic_load_n(&w->rd->run->stop, __ATOMIC_RELAXED) ||
	       (e >= MIN_EPOCHS && now_seconds() > w->rd->until);
}

/* A thread of the row: epochs of m->epoch, started together. */
static void row_worker(struct worker *w)
{
	struct mx *m = w->arg;
	yield_rng = w->rng;
	handler_w = *w;
	handler_w.tid = w->tid + 1000;
	handler_w.t = (struct tally){ 0 };
	m->thread[w->index] = pthread_self();	/* before the first barrier */
	for (unsigned e = 0;; e++) {
		if (w->index == 0)
			__atomic_store_n(&m->done, round_done(w, e), __ATOMIC_RELAXED);
		pthread_barrier_wait(&m->bar);
		if (__atomic_load_n(&m->done, __ATOMIC_RELAXED))
			break;
		m->epoch(w, m);
	}
	handler_done(w);
}

/* A table row's epoch: the calls' preparation on thread 0, then STEPS
 * steps of each thread's call at once. */
static void calls_epoch(struct worker *w, struct mx *m)
{
	if (w->index == 0)
		for (unsigned who = 0; who < 2; who++)
			if (calls[m->call[who]].prep)
				calls[m->call[who]].prep(w, m, who);
	pthread_barrier_wait(&m->bar);
	for (unsigned s = 0; s < STEPS; s++)
		calls[m->call[w->index]].step(w, m);
}

/*
 * The strand rows (ThreadStatic modes): the negative control of the exact
 * capacity.  In the table's rows the two threads seldom leave objects in
 * their caches while the other gets at capacity, so a build without
 * stealing passes most of them.  Here, one at a time (barriers):
 *   1. thread 1 gets all capacity objects through its handle, then parks
 *      half of them in its handle (an implicit or explicit cache's two
 *      magazines, or its CPU area: 2 x MAG each) and half in its worker
 *      slot, which no get but a steal reaches;
 *   2. thread 0 gets the capacity through its handle (one by one, then in
 *      bulk): every object is pooled, none in the depot or thread 0's
 *      cache, so each get past those thread 0 shares a CPU area with must
 *      steal; a get that fails with ENOBUFS fails the row;
 *   3. thread 0 puts them all back (in its cache and the depot: thread 1's
 *      next gets steal from it too).
 * Built without stealing (stress/lfmatrix-nosteal) the first epoch fails
 * at step 2; matrix.c counts a strand row that failed there as caught.
 */
#define STRAND_NAME "strand:park||get_capacity"

static void strand_park(struct worker *w, struct mx *m)
{
	void *objs[4 * HOLD];
	unsigned n = get_some(w, m, objs, (unsigned)m->cap), half = n / 2;
	lfpool_ts_cache *slot = lfpool_ts_worker_cache(w->rd->pool, W_OWN + w->index);
	if (!slot) {
		run_fail(w->rd->run, "worker_cache: %s", strerror(errno));
		half = 0;
	}
	while (n > half)
		worker_put(w, objs[--n]);
	while (n) {
		void *o = objs[--n];
		if (obj_release(w, o))
			lfpool_ts_cache_put(slot, o);
	}
}

static void strand_get_capacity(struct worker *w, struct mx *m)
{
	void *objs[4 * HOLD];
	unsigned n = get_some(w, m, objs, (unsigned)(m->cap / 2));
	if (n == m->cap / 2 && worker_get_bulk(w, objs + n, m->cap - n, false))
		n = (unsigned)m->cap;
	step_stats(w, m);
	worker_put_bulk(w, objs, n);
}

static void strand_epoch(struct worker *w, struct mx *m)
{
	if (w->index == 1)
		strand_park(w, m);
	pthread_barrier_wait(&m->bar);
	if (w->index == 0)
		strand_get_capacity(w, m);
}

/* ThreadStatic: exactly what the two threads may hold out at once (each
 * a stash of HOLD that thread 0 got for it and HOLD in a step), nothing
 * for what caches and CPU areas keep: lfpool/ts.h's capacity is exact (a
 * get steals from every cache and area before it fails), so every row
 * checks it (the strand rows fail without stealing, lfmatrix-nosteal;
 * the other rows seldom strand enough).  Concurrent: a margin. */
static size_t row_capacity(unsigned mode)
{
	return mode == M_CONC ? CONC_CAP : 4 * HOLD;
}

/* Whether call a or b of a row is step's. */
static bool row_has(const struct mx *m, void (*step)(struct worker *, struct mx *))
{
	for (unsigned i = 0; i < 2; i++)
		if (m->call[i] < ncalls && calls[m->call[i]].step == step)
			return true;
	return false;
}

/* One pool instance of the row, with its sibling. */
static void row_round(struct run *r, struct mx *m)
{
	struct round rd;
	lfpool_config cfg = round_config(&rd, m->cap, m->cap);
	cfg.magazine_size = MAG;
	cfg.depot_max = 2;
	if (row_has(m, step_hooks)) {
		cfg.init = busy_init;
		cfg.fini = busy_fini;
	}
	stress_recycler_init(&m->rec);
	stress_alloc_recycle(&rd.alloc, &m->rec);
	stress_alloc_init(&m->sib_alloc);
	stress_alloc_recycle(&m->sib_alloc, &m->rec);
	lfpool_config sc = { .obj_size = cfg.obj_size, .capacity = m->cap, .name = "sibling",
			     .allocator = &m->sib_alloc.a };
	m->sibling = lfpool_concurrent_create(&sc);
	__atomic_store_n(&hook_sibling, m->sibling, __ATOMIC_RELEASE);
	m->shared_slot = NULL;
	if (!m->sibling) {
		run_fail(r, "the sibling pool: %s", strerror(errno));
	} else if (round_open(&rd, r, &cfg)) {
		pthread_barrier_init(&m->bar, NULL, 2);
		if (row_has(m, step_signal))
			__atomic_store_n(&signal_pool, rd.pool, __ATOMIC_RELEASE);
		round_workers(&rd, 2, row_worker, m);
		__atomic_store_n(&signal_pool, NULL, __ATOMIC_RELEASE);
		pthread_barrier_destroy(&m->bar);
		if (m->mode != M_CONC)
			for (unsigned w = W_SHARED; w <= W_OWN + 1; w++)
				lfpool_ts_worker_release(rd.pool, w);
		r->threads = MAX_CACHES - 1;	/* the memory bound's caches */
		round_close(&rd);
		r->threads = 2;
	}
	lfpool_concurrent_destroy(m->sibling);
	if (!stress_alloc_balanced(&m->sib_alloc))
		run_fail(r, "the sibling pool did not give all memory back");
	stress_recycler_fini(&m->rec);
}

static char row_name[128];

/* Rows: a <= b < ncalls, the calls' row; a == b == ncalls, the strand row. */
static bool is_row(unsigned mode, unsigned a, unsigned b)
{
	if (a == ncalls)
		return b == ncalls && mode >= M_TS;
	return b < ncalls && calls[a].name[mode] && calls[b].name[mode];
}

/* The name of the row of calls a and b in mode. */
static const char *name_of(unsigned mode, unsigned a, unsigned b)
{
	static char name[96];
	if (a == ncalls)
		return STRAND_NAME;
	snprintf(name, sizeof(name), "%s||%s", calls[a].name[mode], calls[b].name[mode]);
	return name;
}

/* Run the row of calls a and b in mode, with or without yield injection. */
static bool run_row(const struct options *opt, struct run *r, unsigned mode, unsigned a,
		    unsigned b, bool yield)
{
	struct mx m = { .epoch = a == ncalls ? strand_epoch : calls_epoch, .mode = mode,
			.call = { a, b }, .cap = row_capacity(mode) };
	/* lfpool/ts.h, "Sizing a bounded pool": a get at capacity may fail
	 * with ENOBUFS while a trim of a pool with a fini hook (this suite's
	 * pools have one) finalizes objects, which it does holding no lock
	 * (hooks may block and call any pool).  Nothing else lets a get fail
	 * while objects are pooled. */
	m.enobufs_ok = (row_has(&m, step_trim) || row_has(&m, step_cancel)) && mode >= M_TS;
	/* A handler holds one object while its thread holds what it may; so
	 * does a cancelled thread. */
	if (row_has(&m, step_signal) || row_has(&m, step_cancel))
		m.cap += 2;
	snprintf(row_name, sizeof(row_name), "%s%s", name_of(mode, a, b), yield ? "+yield" : "");
	run_begin(r, opt, row_name, mode_flavour[mode], 2);
	r->yield = yield ? 1 : -1;	/* every atomic step (lib/atomic.h) */
	lfp_stress_yield = yield ? matrix_yield : NULL;	/* and the CAS windows */
	do
		row_round(r, &m);
	while (!run_over(r));
	lfp_stress_yield = NULL;
	uint32_t e = __atomic_exchange_n(&signal_bad_errno, 0, __ATOMIC_RELAXED);
	if (e)
		run_fail(r, "lfpool_ts_get_signal failed with %s, not EAGAIN", strerror((int)e));
	return run_end(r);
}

/* Whether the row's name or flavour is what --only asks for. */
static bool wanted(const char *only, unsigned mode, unsigned a, unsigned b)
{
	if (!only)
		return true;
	char name[128];
	snprintf(name, sizeof(name), "%s %s", mode_flavour[mode]->name, name_of(mode, a, b));
	return strstr(name, only) != NULL;
}

/* The negative controls: the rows (names that contain `row`) that a
 * library broken so must fail, with `error` in their first failure.
 * stress/lfmatrix-nosteal: without stealing (steal.c) a get at capacity
 * finds no object pooled within its reach.  stress/lfmatrix-hooklock: a
 * trim runs the fini hooks under steal_lock (threadstatic.c). */
struct negative {
	const char *row, *broken, *error, *caught;
};
#if defined(LFPOOL_STRESS_NO_STEAL)
static const struct negative negative_ = {
	STRAND_NAME, "stealing compiled out (LFPOOL_STRESS_NO_STEAL)", "No buffer space",
	"a get at capacity failed with ENOBUFS" };
static const struct negative *const negative = &negative_;
#elif defined(LFPOOL_STRESS_FINI_LOCKED)
static const struct negative negative_ = {
	"ts_trim||ts_hooks", "fini hooks under steal_lock (LFPOOL_STRESS_FINI_LOCKED)",
	"fini hook ran inside", "a fini hook ran holding a lock" };
static const struct negative *const negative = &negative_;
#else
static const struct negative *const negative = NULL;
#endif

/* Whether the run r of a row that the broken library must fail failed as
 * it must. */
static bool caught(const struct run *r)
{
	bool ok = r->failures && strstr(r->first_error, negative->error);
	printf("%s negative %s %s: %s, %s\n", ok ? "PASS" : "FAIL", r->fl->name, r->scenario,
	       negative->broken, ok ? negative->caught :
	       r->failures ? "failed otherwise" : "not caught");
	return ok;
}

int main(int argc, char **argv)
{
	struct options opt;
	const char *only;
	parse_options(argc, argv, &opt, &only);
	struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	struct run r = { .index = 0 };
	unsigned rows[M_MODES] = { 0 }, passed = 0, failed = 0;
	uint64_t ops[M_MODES] = { 0 };
	for (unsigned pass = 0; pass < 2; pass++) {
		for (unsigned mode = 0; mode < M_MODES; mode++) {
			for (unsigned a = 0; a <= ncalls; a++) {
				for (unsigned b = a; b <= ncalls; b++) {
					if (!is_row(mode, a, b) || !wanted(only, mode, a, b))
						continue;
					if (pass == 0) {
						rows[mode]++;
						r.total += 2;
						continue;
					}
					for (int y = 0; y < 2; y++) {
						r.index++;
						bool ok = run_row(&opt, &r, mode, a, b, y);
						if (negative &&
						    strstr(r.scenario, negative->row))
							ok = caught(&r);
						if (ok)
							passed++;
						else
							failed++;
						ops[mode] += r.t.gets + r.t.puts;
					}
				}
			}
		}
	}
	unsigned total = 0;
	for (unsigned mode = 0; mode < M_MODES; mode++) {
		printf("matrix %-12s %3u rows (each without and with yield injection), "
		       "%llu gets + puts%s\n", mode_flavour[mode]->name, rows[mode],
		       (unsigned long long)ops[mode],
		       mode == M_POOL ? "  (pool.h: one thread at a time, no concurrent calls)" : "");
		total += rows[mode];
	}
	printf("matrix: %u rows, %u runs; %llu objects got and put by signal handlers\n", total,
	       2 * total, (unsigned long long)__atomic_load_n(&signal_gets, __ATOMIC_RELAXED));
	printf("%u passed, %u failed\n", passed, failed);
	/* A filter that matched no row ran nothing: a negative control run
	 * that way (variants.sh, --only strand) would prove nothing. */
	if (total == 0)
		printf("FAIL: no row matches --only '%s'\n", only ? only : "");
	fflush(stdout);
	return failed || total == 0 ? 1 : 0;
}
