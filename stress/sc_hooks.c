/* SPDX-License-Identifier: MIT */
/*
 * sc_hooks.c - hooks that block and call other pools (no deadlock): two
 * ThreadStatic pools P and Q of a small capacity, per thread and per CPU
 * (every other round), whose init and fini hooks take the application's
 * mutex m (a lock the hook's thread does not hold) or get from and put to
 * the other pool, while threads get and put, some of them holding m
 * (the hang: a get at capacity holding m while another thread's
 * hook waits for m), drain, and trim (running fini hooks that get from the
 * other pool while its own trim runs hooks that get from this one).
 *
 * lfpool/ts.h's table: hooks may block and call any pool; meanwhile a get
 * at capacity fails with ENOBUFS at once, and drains and trims go on.  So
 * nothing may hang (the run's watchdog), a get may fail only with
 * ENOBUFS, and afterwards every object is back: each pool made at most
 * its capacity, and fini ran once on each object init made.
 *
 * Not here: a hook that trims or drains a pool, or a trim while m is
 * held (a trim waits for a grace period, which hooks run inside:
 * lib/threadstatic/grace.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "lfpool.h"
#include "stress.h"

#define HK_CAP 4		/* each pool's capacity */
#define HK_HOLD 2		/* objects a thread holds of each pool, at most */
#define HK_THREADS_MIN 3
#define HK_STEPS 500		/* per thread and round */
#define HK_ROUNDS_MIN 2		/* per thread, then per CPU, however short the run */

struct hk {
	struct run *r;
	lfpool_ts *pool[2];
	uint64_t inits[2], finis[2];	/* atomic */
	uint64_t hook_waits, hook_gets, hook_enobufs;	/* atomic */
	uint64_t held_gets, held_enobufs, trims, drains;	/* atomic */
	bool closing;		/* destroy: the hooks call nothing */
	uint64_t seed[STRESS_MAX_THREADS];
	unsigned next;		/* atomic: the next thread's seed */
	pthread_mutex_t m;
};

/* The calling thread: in a hook (no nested calls), holding m. */
static __thread unsigned hk_depth;
static __thread bool hk_holds_m;
static __thread uint64_t hk_rng;

static void bump(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* A get that may fail only with ENOBUFS; the object or NULL. */
static void *hk_get(struct hk *h, unsigned i, uint64_t *enobufs)
{
	errno = 0;
	void *obj = lfpool_ts_get(h->pool[i]);
	if (!obj && errno == ENOBUFS)
		bump(enobufs);
	else if (!obj)
		run_fail(h->r, "a get of pool %u failed with errno %d, not ENOBUFS", i, errno);
	return obj;
}

/* What both hooks do, on pool i's object: block on m, or get from and put
 * to the other pool, or nothing. */
static void hk_hook(struct hk *h, unsigned i)
{
	if (hk_depth || h->closing)
		return;
	hk_depth++;
	switch (rng_below(&hk_rng, 4)) {
	case 0:
		if (hk_holds_m)
			break;
		pthread_mutex_lock(&h->m);
		bump(&h->hook_waits);
		sched_yield();
		pthread_mutex_unlock(&h->m);
		break;
	case 1: {
		bump(&h->hook_gets);
		void *obj = hk_get(h, !i, &h->hook_enobufs);
		if (obj)
			lfpool_ts_put(h->pool[!i], obj);
		break;
	}
	default:
		break;
	}
	hk_depth--;
}

static void hk_init(void *obj, void *ctx, unsigned i)
{
	(void)obj;
	struct hk *h = ctx;
	bump(&h->inits[i]);
	hk_hook(h, i);
}

static void hk_fini(void *obj, void *ctx, unsigned i)
{
	(void)obj;
	struct hk *h = ctx;
	bump(&h->finis[i]);
	hk_hook(h, i);
}

static void hk_init0(void *obj, void *ctx) { hk_init(obj, ctx, 0); }
static void hk_init1(void *obj, void *ctx) { hk_init(obj, ctx, 1); }
static void hk_fini0(void *obj, void *ctx) { hk_fini(obj, ctx, 0); }
static void hk_fini1(void *obj, void *ctx) { hk_fini(obj, ctx, 1); }

/* A get holding m (the hang's main thread), its object put back at once. */
static void get_holding_m(struct hk *h, unsigned i)
{
	pthread_mutex_lock(&h->m);
	hk_holds_m = true;
	bump(&h->held_gets);
	void *obj = hk_get(h, i, &h->held_enobufs);
	if (obj)
		lfpool_ts_put(h->pool[i], obj);
	hk_holds_m = false;
	pthread_mutex_unlock(&h->m);
}

/* One step: get or put one object, a get holding m, a drain or a trim. */
static void hk_step(struct hk *h, void *held[2][HK_HOLD], unsigned n[2], struct tally *t)
{
	unsigned i = rng_below(&hk_rng, 2);
	switch (rng_below(&hk_rng, 8)) {
	case 0: case 1: case 2:
		if (n[i] < HK_HOLD && (held[i][n[i]] = hk_get(h, i, &t->failed_gets)) != NULL) {
			n[i]++;
			t->gets++;
		}
		break;
	case 3: case 4:
		if (n[i]) {
			lfpool_ts_put(h->pool[i], held[i][--n[i]]);
			t->puts++;
		}
		break;
	case 5:
		get_holding_m(h, i);
		break;
	case 6:
		lfpool_ts_drain(h->pool[i]);
		bump(&h->drains);
		break;
	default:
		t->trimmed += lfpool_ts_trim(h->pool[i], 0);
		bump(&h->trims);
		break;
	}
}

static void *hk_thread(void *arg)
{
	struct hk *h = arg;
	struct tally t = { 0 };
	void *held[2][HK_HOLD];
	unsigned n[2] = { 0, 0 };
	hk_rng = h->seed[__atomic_fetch_add(&h->next, 1, __ATOMIC_RELAXED)];
	for (unsigned it = 0; it < HK_STEPS; it++)
		hk_step(h, held, n, &t);
	for (unsigned i = 0; i < 2; i++)
		while (n[i]) {
			lfpool_ts_put(h->pool[i], held[i][--n[i]]);
			t.puts++;
		}
	run_add(h->r, &t);
	return NULL;
}

static bool hk_open(struct hk *h, bool percpu)
{
	lfpool_hook_fn init[2] = { hk_init0, hk_init1 }, fini[2] = { hk_fini0, hk_fini1 };
	for (unsigned i = 0; i < 2; i++) {
		lfpool_config c = { .obj_size = 64, .capacity = HK_CAP, .magazine_size = 2,
				    .depot_max = 2, .init = init[i], .fini = fini[i],
				    .hook_ctx = h, .flags = percpu ? LFPOOL_F_PERCPU : 0,
				    .name = i ? "hooks-Q" : "hooks-P" };
		if (!(h->pool[i] = lfpool_ts_create(&c))) {
			run_fail(h->r, "create failed (errno %d)", errno);
			return false;
		}
	}
	return true;
}

/* Every object back: each pool made at most its capacity, and after its
 * destroy fini ran once for every init. */
static void hk_close(struct hk *h)
{
	for (unsigned i = 0; i < 2; i++) {
		lfpool_stats st;
		lfpool_ts_stats(h->pool[i], &st);
		if (st.created > HK_CAP || st.live != 0)
			run_fail(h->r, "pool %u: %llu objects made (capacity %u), %llu out at the end",
				 i, (unsigned long long)st.created, HK_CAP,
				 (unsigned long long)st.live);
	}
	h->closing = true;	/* a destroyed pool is no pool to get from */
	for (unsigned i = 0; i < 2; i++)
		if (lfpool_ts_destroy(h->pool[i]) != 0)
			run_fail(h->r, "destroy of pool %u failed (errno %d)", i, errno);
	for (unsigned i = 0; i < 2; i++)
		if (h->inits[i] != h->finis[i])
			run_fail(h->r, "pool %u: init ran %llu times, fini %llu", i,
				 (unsigned long long)h->inits[i], (unsigned long long)h->finis[i]);
}

static void hooks_block(struct run *r)
{
	unsigned k = r->opt->threads < HK_THREADS_MIN ? HK_THREADS_MIN : r->opt->threads;
	if (k > STRESS_MAX_THREADS)
		k = STRESS_MAX_THREADS;
	struct hk total = { 0 };
	for (uint64_t round = 0; round < HK_ROUNDS_MIN || !run_over(r); round++) {
		struct hk h = { .r = r };
		pthread_mutex_init(&h.m, NULL);
		hk_rng = rng_next(&r->rng);
		for (unsigned i = 0; i < k; i++)
			h.seed[i] = rng_next(&r->rng);
		if (!hk_open(&h, round & 1))
			return;
		pthread_t th[STRESS_MAX_THREADS];
		unsigned made = 0;
		while (made < k && pthread_create(&th[made], NULL, hk_thread, &h) == 0)
			made++;
		for (unsigned i = 0; i < made; i++)
			pthread_join(th[i], NULL);
		hk_close(&h);
		pthread_mutex_destroy(&h.m);
		total.hook_waits += h.hook_waits;
		total.hook_enobufs += h.hook_enobufs;
		total.held_enobufs += h.held_enobufs;
		total.trims += h.trims;
		struct tally t = { .rounds = 1 };
		run_add(r, &t);
		run_progress(r);
	}
	printf("    %s: hooks waited for m %llu times, hooks' gets at capacity %llu, gets at "
	       "capacity holding m %llu, trims %llu\n", r->scenario,
	       (unsigned long long)total.hook_waits, (unsigned long long)total.hook_enobufs,
	       (unsigned long long)total.held_enobufs, (unsigned long long)total.trims);
}

const struct scenario sc_hooks = { "hooks-block", false, false, 1, hooks_block };
