/* SPDX-License-Identifier: MIT */
/*
 * fuzz_threads.c - mode 5: two threads on one shared pool (Concurrent,
 * ThreadStatic through implicit or explicit caches, per-CPU), each running
 * its half of the input's operations, handing objects to each other
 * through mailboxes, so that objects are put on another thread than the
 * one that got them.  Both also release one worker slot that holds
 * objects (worker_release with itself) and trim while the other gets.
 *
 * Checked while they run: no object is out with both threads at once (a
 * marker the getter swaps into the object), the capacity (init hook), the
 * errno of failed calls, owns.  Checked at the end (conservation): with
 * every object back, the statistics agree with the hooks (created = init -
 * fini, nothing live), destroy finalizes every object and the allocator
 * got all its memory back.
 *
 * With implicit caches, thread A may also exit without detaching (its
 * cache goes back through the thread-exit destructor), after using two
 * other pools that the main thread destroys while A still runs: destroy
 * reclaims A's caches of them, A's next new cache drops the dead entry,
 * and its exit skips the other.
 *
 * Input: mode byte, 5 configuration bytes, then operations of 2 bytes; the
 * first half of them is thread A's, the rest thread B's.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define HELD_MAX 256
#define MAILBOXES 4
#define SHARED_WORKER 9u
#define MARK_OUT 0x4f55540000000000ull	/* "OUT" | thread */
#define MARK_POOLED 0x504f4f4cull	/* "POOL" */

struct two {
	const struct flavour *fl;
	void *pool;
	bool exit_test;		/* thread A: the exit and dead-pool steps above */
	lfpool_ts *other[2];
	int step;		/* atomic: where the exit test is */
	size_t cap;
	bool faults, ts;
	int64_t alive;		/* init - fini, atomic */
	void *mail[MAILBOXES];	/* atomic */
	struct stress_alloc sa;
};

struct tt {
	struct two *m;
	const uint8_t *ops;
	size_t n;
	unsigned id;
	void *h;
	void *held[HELD_MAX];
	size_t nheld;
};

static void t_init(void *obj, void *ctx)
{
	struct two *m = ctx;
	__atomic_store_n((uint64_t *)obj, MARK_POOLED, __ATOMIC_RELAXED);
	int64_t alive = __atomic_add_fetch(&m->alive, 1, __ATOMIC_RELAXED);
	FZ_CHECK(!m->cap || alive <= (int64_t)m->cap, "threads %s: %lld alive, capacity %zu",
		 m->fl->name, (long long)alive, m->cap);
}

static void t_fini(void *obj, void *ctx)
{
	struct two *m = ctx;
	uint64_t mark = __atomic_load_n((uint64_t *)obj, __ATOMIC_RELAXED);
	FZ_CHECK((mark & ~0xffull) != MARK_OUT, "threads %s: fini of an object out with thread %u",
		 m->fl->name, (unsigned)(mark & 0xff));
	__atomic_sub_fetch(&m->alive, 1, __ATOMIC_RELAXED);
}

/* p is now this thread's: nobody else may hold it. */
static void hold(struct tt *t, void *p)
{
	uint64_t was = __atomic_exchange_n((uint64_t *)p, MARK_OUT | t->id, __ATOMIC_ACQ_REL);
	FZ_CHECK((was & ~0xffull) != MARK_OUT, "threads %s: thread %u got %p, held by thread %u",
		 t->m->fl->name, t->id, p, (unsigned)(was & 0xff));
	FZ_CHECK(t->m->fl->owns(t->m->pool, p), "threads %s: owns false for %p", t->m->fl->name, p);
	if (t->nheld == HELD_MAX) {
		__atomic_store_n((uint64_t *)p, MARK_POOLED, __ATOMIC_RELEASE);
		t->m->fl->put(t->h, p);
		return;
	}
	t->held[t->nheld++] = p;
}

/* The k-th held object, no longer held (marked pooled for its put). */
static void *unhold(struct tt *t, size_t k)
{
	void *p = t->held[k];
	t->held[k] = t->held[--t->nheld];
	__atomic_store_n((uint64_t *)p, MARK_POOLED, __ATOMIC_RELEASE);
	return p;
}

static void check_errno(struct tt *t, const char *call)
{
	int err = errno;
	FZ_CHECK((err == ENOBUFS && t->m->cap) || fz_enomem_ok(&t->m->sa, err),
		 "threads %s: %s failed with %s", t->m->fl->name, call, strerror(err));
}

static void t_op(struct tt *t, unsigned op, unsigned arg)
{
	struct two *m = t->m;
	void *objs[8];
	switch (op % 12) {
	case 0:
	case 1:
	case 2: {
		void *p = m->fl->get(t->h);
		if (p)
			hold(t, p);
		else
			check_errno(t, "get");
		break;
	}
	case 3:
	case 4:
	case 5:
		m->fl->put(t->h, t->nheld ? unhold(t, arg % t->nheld) : NULL);
		break;
	case 6: {
		size_t k = arg % 9;
		if (m->fl->get_bulk(t->h, objs, k) != 0) {
			check_errno(t, "bulk get");
			break;
		}
		for (size_t i = 0; i < k; i++)
			hold(t, objs[i]);
		break;
	}
	case 7: {
		size_t k = 0;
		while (k < arg % 9 && t->nheld)
			objs[k++] = unhold(t, 0);
		m->fl->put_bulk(t->h, objs, k);
		break;
	}
	case 8: {	/* swap with a mailbox: objects change threads */
		void *mine = t->nheld && (arg & 0x80) ? unhold(t, 0) : NULL;
		if (mine)
			__atomic_store_n((uint64_t *)mine, MARK_OUT | 0xff, __ATOMIC_RELAXED);
		void *theirs = __atomic_exchange_n(&m->mail[arg % MAILBOXES], mine, __ATOMIC_ACQ_REL);
		if (theirs) {
			__atomic_store_n((uint64_t *)theirs, MARK_POOLED, __ATOMIC_RELAXED);
			hold(t, theirs);
		}
		break;
	}
	case 9:
		if (arg & 1)
			m->fl->trim(m->pool, arg >> 1);
		else
			m->fl->flush(t->h);
		break;
	case 10:
		if (m->ts && (arg & 1)) {
			lfpool_ts_worker_release(m->pool, SHARED_WORKER);
		} else {
			lfpool_stats st;
			m->fl->stats(m->pool, &st);
		}
		break;
	default:
		if (m->fl->prewarm(m->pool, arg % 5) != 0)
			check_errno(t, "prewarm");
	}
}

/* Wait until the exit test reached step. */
static void wait_step(struct two *m, int step)
{
	while (__atomic_load_n(&m->step, __ATOMIC_ACQUIRE) < step)
		sched_yield();
}

static void next_step(struct two *m, int step)
{
	__atomic_store_n(&m->step, step, __ATOMIC_RELEASE);
}

/* Thread A, exit test: caches of the two other pools (step 1), which the
 * main thread destroys (one by step 2, the other by step 4). */
static void use_others(struct two *m)
{
	for (int i = 0; i < 2; i++)
		lfpool_ts_put(m->other[i], lfpool_ts_get(m->other[i]));
	next_step(m, 1);
	wait_step(m, 2);
}

static void *t_run(void *arg)
{
	struct tt *t = arg;
	struct two *m = t->m;
	bool exit_test = m->exit_test && t->id == 1;
	if (exit_test)
		use_others(m);
	t->h = m->fl->enter(m->pool);
	if (!t->h) {
		check_errno(t, "enter");
		if (exit_test)
			next_step(m, 3);	/* nothing to hand back */
		return NULL;
	}
	for (size_t i = 0; i + 1 < t->n; i += 2)
		t_op(t, t->ops[i], t->ops[i + 1]);
	while (t->nheld)
		m->fl->put(t->h, unhold(t, 0));
	if (exit_test) {
		next_step(m, 3);
		wait_step(m, 4);
		return NULL;	/* the thread-exit destructor hands the cache back */
	}
	m->fl->leave(m->pool, t->h);
	return NULL;
}

/* Main thread, exit test: destroy the other pools while A runs. */
static void destroy_others(struct two *m)
{
	wait_step(m, 1);
	FZ_CHECK(lfpool_ts_destroy(m->other[0]) == 0, "destroy of a pool A uses: %s",
		 strerror(errno));
	next_step(m, 2);
	wait_step(m, 3);
	FZ_CHECK(lfpool_ts_destroy(m->other[1]) == 0, "destroy of a pool A uses: %s",
		 strerror(errno));
	next_step(m, 4);
}

/* Leave objects in the shared worker slot, for the threads to release. */
static void fill_worker(struct two *m, unsigned k)
{
	void *objs[8];
	lfpool_ts_cache *c = lfpool_ts_worker_cache(m->pool, SHARED_WORKER);
	if (!c || lfpool_ts_cache_get_bulk(c, objs, k) != 0)
		return;
	lfpool_ts_cache_put_bulk(c, objs, k);
}

void fz_threads(struct fz *f)
{
	static const struct flavour *const fls[] = {
		&flavour_concurrent, &flavour_ts, &flavour_ts_cache, &flavour_percpu,
	};
	static struct two m;
	unsigned b0 = fz_byte(f), b1 = fz_u16(f), b3 = fz_byte(f), b4 = fz_byte(f);
	memset(&m, 0, sizeof(m));
	m.fl = fls[b0 % 4];
	m.ts = m.fl != &flavour_concurrent;
	m.cap = (b1 & 1) ? 0 : (b1 >> 1) % 512 + 1;
	fz_alloc_init(&m.sa, (b4 & 0xf) ? 0 : 8 + (b4 >> 4));
	lfpool_config cfg = {
		.obj_size = 8 + (b3 % 4) * 24, .capacity = m.cap,
		.prewarm = m.cap ? b3 % (m.cap + 1) : b3 % 32,
		.init = t_init, .fini = t_fini, .hook_ctx = &m, .allocator = &m.sa.a,
		.flags = (b0 & 0x10) ? LFPOOL_F_DEBUG : 0,
		.magazine_size = (b0 >> 5) + 1, .depot_max = b4 % 4,
	};
	m.pool = m.fl->create(&cfg);
	if (!m.pool) {
		FZ_CHECK(fz_enomem_ok(&m.sa, errno), "threads %s create: %s", m.fl->name,
			 strerror(errno));
		fz_alloc_check(&m.sa, "threads: failed create");
		return;
	}
	if (m.ts)
		fill_worker(&m, b3 % 8);
	m.exit_test = m.fl == &flavour_ts && (b0 & 0x80);
	for (int i = 0; m.exit_test && i < 2; i++) {
		lfpool_config oc = { .obj_size = 16 };
		m.other[i] = lfpool_ts_create(&oc);
		FZ_CHECK(m.other[i], "threads: create: %s", strerror(errno));
	}
	size_t ops = (f->n - f->i) / 2 * 2, half = ops / 4 * 2;
	static struct tt t[2];
	memset(t, 0, sizeof(t));
	t[0] = (struct tt){ .m = &m, .ops = f->p + f->i, .n = half, .id = 1 };
	t[1] = (struct tt){ .m = &m, .ops = f->p + f->i + half, .n = ops - half, .id = 2 };
	pthread_t tid[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&tid[i], NULL, t_run, &t[i]) != 0)
			fz_fail("pthread_create failed");
	if (m.exit_test)
		destroy_others(&m);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);

	/* Conservation: every object back, the figures agree with the hooks. */
	m.sa.fail_one_in = 0;
	void *h = m.fl->enter(m.pool);
	FZ_CHECK(h, "threads %s: enter at the end: %s", m.fl->name, strerror(errno));
	for (int i = 0; i < MAILBOXES; i++) {
		if (m.mail[i]) {
			__atomic_store_n((uint64_t *)m.mail[i], MARK_POOLED, __ATOMIC_RELAXED);
			m.fl->put(h, m.mail[i]);
		}
	}
	m.fl->leave(m.pool, h);
	if (m.ts)
		lfpool_ts_worker_release(m.pool, SHARED_WORKER);
	lfpool_stats st;
	m.fl->stats(m.pool, &st);
	FZ_CHECK(st.created == (uint64_t)m.alive && st.live == 0 && st.retained == st.created,
		 "threads %s: created %llu live %llu retained %llu, %lld alive by the hooks",
		 m.fl->name, (unsigned long long)st.created, (unsigned long long)st.live,
		 (unsigned long long)st.retained, (long long)m.alive);
	FZ_CHECK(m.fl->destroy(m.pool) == 0, "threads %s destroy: %s", m.fl->name, strerror(errno));
	FZ_CHECK(m.alive == 0, "threads %s: destroy left %lld objects", m.fl->name,
		 (long long)m.alive);
	fz_alloc_check(&m.sa, "threads");
}
