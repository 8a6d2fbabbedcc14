/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c - Concurrent under real threads.  Every object carries an
 * owner stamp: a thread that gets an object swaps its id in with an atomic
 * exchange, which must find 0 (no one else holds it), and clears it before
 * the put.  At the end every object must be back: created == retained.
 * (ThreadSanitizer runs of the same ideas live in stress/.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "support.h"

#define THREADS 4
#define ROUNDS 50000
#define HOLD 8		/* most objects a thread holds at once */

struct mt_obj {
	uint64_t owner;		/* 0 while pooled */
	uint64_t payload;	/* written by the owner, checked before the put */
	char pad[48];
};

struct shared {
	lfpool_concurrent *pool;
	long inits, finis;
	long conflicts;		/* objects found with another owner */
	long torn;		/* payloads changed while owned */
	long bad_errno;		/* NULL gets with errno other than ENOBUFS */
	long enobufs;
	long over_capacity;	/* stats seen with created > capacity */
	size_t capacity;
	int trimmer;		/* thread 0 trims instead of getting */
	pthread_barrier_t start;
};

struct worker {
	struct shared *sh;
	uint64_t id;
	uint64_t seed;
};

static void mt_init(void *obj, void *ctx)
{
	struct mt_obj *o = obj;
	o->owner = 0;
	o->payload = 0;
	__atomic_fetch_add(&((struct shared *)ctx)->inits, 1, __ATOMIC_RELAXED);
}

static void mt_fini(void *obj, void *ctx)
{
	struct mt_obj *o = obj;
	if (__atomic_load_n(&o->owner, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&((struct shared *)ctx)->conflicts, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&((struct shared *)ctx)->finis, 1, __ATOMIC_RELAXED);
}

static void bump(long *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

static unsigned rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(*s >> 33);
}

/* Take ownership of a fresh object: its stamp must have been 0. */
static void own(struct shared *sh, struct mt_obj *o, uint64_t me, uint64_t n)
{
	if (__atomic_exchange_n(&o->owner, me, __ATOMIC_ACQ_REL) != 0)
		bump(&sh->conflicts);
	o->payload = me << 32 | n;
}

/* Check the object is still ours and unchanged, then clear the stamp. */
static void disown(struct shared *sh, struct mt_obj *o, uint64_t me, uint64_t n)
{
	if (o->payload != (me << 32 | n))
		bump(&sh->torn);
	if (__atomic_exchange_n(&o->owner, 0, __ATOMIC_ACQ_REL) != me)
		bump(&sh->conflicts);
}

static void check_capacity(struct shared *sh)
{
	lfpool_stats st;
	lfpool_concurrent_stats(sh->pool, &st);
	if (sh->capacity && st.created > sh->capacity)
		bump(&sh->over_capacity);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	struct mt_obj *held[HOLD];
	pthread_barrier_wait(&sh->start);
	for (int r = 0; r < ROUNDS; r++) {
		if (sh->trimmer && w->id == 1) {
			lfpool_concurrent_trim(sh->pool, rnd(&w->seed) % 4);
			continue;
		}
		size_t n = 1 + rnd(&w->seed) % HOLD;
		bool bulk = rnd(&w->seed) % 4 == 0;
		size_t got = 0;
		if (bulk) {
			if (lfpool_concurrent_get_bulk(sh->pool, (void **)held, n) == 0)
				got = n;
			else if (errno == ENOBUFS)
				bump(&sh->enobufs);
			else
				bump(&sh->bad_errno);
		} else {
			while (got < n) {
				held[got] = lfpool_concurrent_get(sh->pool);
				if (!held[got]) {
					bump(errno == ENOBUFS ? &sh->enobufs : &sh->bad_errno);
					break;
				}
				got++;
			}
		}
		for (size_t i = 0; i < got; i++)
			own(sh, held[i], w->id, (uint64_t)r * HOLD + i);
		if (r % 64 == 0)
			check_capacity(sh);
		for (size_t i = 0; i < got; i++)
			disown(sh, held[i], w->id, (uint64_t)r * HOLD + i);
		if (bulk)
			lfpool_concurrent_put_bulk(sh->pool, (void *const *)held, got);
		else
			for (size_t i = 0; i < got; i++)
				lfpool_concurrent_put(sh->pool, held[i]);
	}
	return NULL;
}

/* Run the workers on a pool made from cfg; check what every run must hold. */
static void run_workers(struct shared *sh, lfpool_config *cfg)
{
	cfg->obj_size = sizeof(struct mt_obj);
	cfg->align = 64;
	cfg->init = mt_init;
	cfg->fini = mt_fini;
	cfg->hook_ctx = sh;
	sh->capacity = cfg->capacity;
	sh->pool = lfpool_concurrent_create(cfg);
	cr_assert_not_null(sh->pool);
	pthread_barrier_init(&sh->start, NULL, THREADS);
	pthread_t tid[THREADS];
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ sh, (uint64_t)i + 1, 0x1234567ull * (i + 1) };
		cr_assert_eq(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&sh->start);

	cr_assert_eq(sh->conflicts, 0, "%ld objects had two owners", sh->conflicts);
	cr_assert_eq(sh->torn, 0, "%ld objects changed while owned", sh->torn);
	cr_assert_eq(sh->bad_errno, 0, "%ld failed gets not ENOBUFS", sh->bad_errno);
	cr_assert_eq(sh->over_capacity, 0, "capacity exceeded %ld times", sh->over_capacity);
	lfpool_stats st;
	lfpool_concurrent_stats(sh->pool, &st);
	cr_assert_eq(st.created, st.retained, "objects lost: created %llu, retained %llu",
		     (unsigned long long)st.created, (unsigned long long)st.retained);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(sh->inits - sh->finis, (long)st.created);
	/* Every pooled object is distinct: take them all, stamping each. */
	struct mt_obj **all = calloc(st.created + 1, sizeof(*all));
	for (uint64_t i = 0; i < st.created; i++) {
		all[i] = lfpool_concurrent_get(sh->pool);
		own(sh, all[i], 99, i);
	}
	cr_assert_eq(sh->inits - sh->finis, (long)st.created, "a get made an object: one was lost");
	cr_assert_eq(sh->conflicts, 0, "an object was pooled twice");
	for (uint64_t i = 0; i < st.created; i++) {
		disown(sh, all[i], 99, i);
		lfpool_concurrent_put(sh->pool, all[i]);
	}
	free(all);
	lfpool_concurrent_destroy(sh->pool);
	cr_assert_eq(sh->inits, sh->finis);
}

Test(threads, get_put_with_owner_stamps)
{
	static struct shared sh;
	lfpool_config cfg = { .prewarm = 8 };
	run_workers(&sh, &cfg);
}

/* At capacity, failed gets say ENOBUFS and nothing exceeds the bound. */
Test(threads, bounded_pool_under_contention)
{
	static struct shared sh;
	lfpool_config cfg = { .capacity = THREADS * HOLD / 2 };
	run_workers(&sh, &cfg);
}

/* Trim while other threads get and put. */
Test(threads, trim_while_in_use)
{
	static struct shared sh;
	struct test_alloc t;
	test_alloc_init(&t);
	sh.trimmer = 1;
	lfpool_config cfg = { .allocator = &t.a };
	run_workers(&sh, &cfg);
	test_alloc_finish(&t);
}

/* Debug checks see no misuse in correct concurrent use. */
Test(threads, debug_checks_have_no_false_alarms)
{
	static struct shared sh;
	struct error_log log;
	record_errors(&log);
	lfpool_config cfg = { .flags = LFPOOL_F_DEBUG };
	run_workers(&sh, &cfg);
	cr_assert_eq(log.calls, 0, "reported: %s", log.problem);
}

struct grab {
	lfpool_concurrent *pool;
	pthread_barrier_t *done;
	int failed, bad_errno;
	void *objs[5];
};

static void *grab_five(void *arg)
{
	struct grab *g = arg;
	for (int i = 0; i < 5; i++) {
		g->objs[i] = lfpool_concurrent_get(g->pool);
		if (!g->objs[i]) {
			g->failed++;
			g->bad_errno += errno != ENOBUFS;
		}
	}
	pthread_barrier_wait(g->done);	/* hold until every thread has tried */
	return NULL;
}

/* 4 threads each take 5 of 16: exactly 4 gets must fail, with ENOBUFS. */
Test(threads, capacity_is_exact_across_threads)
{
	lfpool_config cfg = { .obj_size = 32, .capacity = 16 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&cfg);
	pthread_barrier_t done;
	pthread_barrier_init(&done, NULL, THREADS);
	struct grab g[THREADS];
	pthread_t tid[THREADS];
	for (int i = 0; i < THREADS; i++) {
		g[i] = (struct grab){ .pool = pool, .done = &done };
		pthread_create(&tid[i], NULL, grab_five, &g[i]);
	}
	int failed = 0, bad = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(tid[i], NULL);
		failed += g[i].failed;
		bad += g[i].bad_errno;
	}
	cr_assert_eq(failed, THREADS * 5 - 16, "%d gets failed", failed);
	cr_assert_eq(bad, 0);
	for (int i = 0; i < THREADS; i++)
		for (int k = 0; k < 5; k++)
			lfpool_concurrent_put(pool, g[i].objs[k]);
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.created, 16);
	cr_assert_eq(st.retained, 16);
	pthread_barrier_destroy(&done);
	lfpool_concurrent_destroy(pool);
}

/* ---- counters of contention ---- */

struct contend {
	lfpool_concurrent *pool;
	int *stop;
	unsigned id;
};

/* Get 1..4 objects and put them back, until thread 0 sees a failed CAS
 * counted (or a bound of rounds, so that a run always ends). */
static void *contend_main(void *arg)
{
	struct contend *c = arg;
	void *held[4];
	for (unsigned r = 0; r < (1u << 24) && !__atomic_load_n(c->stop, __ATOMIC_RELAXED); r++) {
		unsigned n = 1 + (r + c->id) % 4;
		for (unsigned i = 0; i < n; i++)
			held[i] = lfpool_concurrent_get(c->pool);
		for (unsigned i = 0; i < n; i++)
			lfpool_concurrent_put(c->pool, held[i]);
		if (c->id == 0 && r % 1024 == 0) {
			lfpool_stats st;
			lfpool_concurrent_stats(c->pool, &st);
			if (st.cas_retries > 0)
				__atomic_store_n(c->stop, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* cas_retries counts the failed CAS of contended gets and puts (it was
 * always 0 before); eliminated counts two per exchange; a quiet pool
 * counts neither (lfpool/common.h, lfpool_stats). */
Test(threads, contention_is_counted)
{
	lfpool_config cfg = { .obj_size = 64, .prewarm = 64 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&cfg);
	cr_assert_not_null(pool);
	for (int i = 0; i < 1000; i++)
		lfpool_concurrent_put(pool, lfpool_concurrent_get(pool));
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	cr_assert_eq(st.cas_retries, 0, "one thread alone never fails a CAS");
	cr_assert_eq(st.eliminated, 0);
	int stop = 0;
	struct contend c[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		c[i] = (struct contend){ pool, &stop, i };
	run_threads(THREADS, contend_main, c, sizeof(c[0]));
	lfpool_concurrent_stats(pool, &st);
	cr_assert_gt(st.cas_retries, 0, "%u threads never failed a CAS in 2^24 rounds each", THREADS);
	cr_assert_eq(st.created, st.retained);
	cr_assert_eq(lfpool_concurrent_destroy(pool), 0);
}
