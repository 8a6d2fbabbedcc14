/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_threads.c - ThreadStatic across threads: cross-thread
 * returns, thread exit with cached objects, explicit caches that move
 * between threads, worker slots, capacity and memory bounds under several
 * threads, a put-only thread, and trim while other threads run.
 */
#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

enum { N = 1000 };

struct batch {
	lfpool_ts *pool;
	lfpool_ts_cache *cache;
	size_t n, put;		/* objects in objs; how many to put back */
	void *objs[N];
	int failed;
};

static void *get_batch(void *arg)
{
	struct batch *b = arg;
	for (size_t i = 0; i < b->n; i++)
		if (!(b->objs[i] = b->cache ? lfpool_ts_cache_get(b->cache) : lfpool_ts_get(b->pool)))
			b->failed++;
	return NULL;
}

static void *put_batch(void *arg)
{
	struct batch *b = arg;
	for (size_t i = 0; i < b->put; i++) {
		if (b->cache)
			lfpool_ts_cache_put(b->cache, b->objs[i]);
		else
			lfpool_ts_put(b->pool, b->objs[i]);
	}
	return NULL;
}

/* get then put back b->put of them, on one thread that then exits. */
static void *get_put_exit(void *arg)
{
	get_batch(arg);
	return put_batch(arg);
}

Test(ts_cross, got_on_one_thread_put_on_another)
{
	lfpool_config c = ts_config(64, 16, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	static struct batch b;
	b = (struct batch){ .pool = p, .n = N, .put = N };
	run_on_thread(get_batch, &b);
	cr_assert_eq(b.failed, 0);
	cr_assert(all_distinct(b.objs, N));
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.live, N);
	run_on_thread(put_batch, &b);
	st = stats_of(p);
	cr_assert_eq(st.gets, N);
	cr_assert_eq(st.puts, N);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.retained, N);
	cr_assert_eq(st.created, N);
	/* Both threads have exited: every object is reachable from here. */
	static void *again[N];
	cr_assert_eq(lfpool_ts_get_bulk(p, again, N), 0);
	cr_assert_eq(stats_of(p).created, N, "nothing created: all %d came back", N);
	lfpool_ts_put_bulk(p, again, N);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_exit, thread_exit_hands_its_cached_objects_back)
{
	enum { CAP = 200, OUT = 50, M = 16 };
	lfpool_config c = ts_config(32, M, 2);
	c.capacity = CAP;
	lfpool_ts *p = lfpool_ts_create(&c);
	static struct batch b;
	b = (struct batch){ .pool = p, .n = CAP, .put = CAP - OUT };
	run_on_thread(get_put_exit, &b);
	cr_assert_eq(b.failed, 0);
	/* depot + cached + outstanding = created, the cached part now in the
	 * depot because the thread has exited. */
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, CAP);
	cr_assert_eq(st.live, OUT);
	cr_assert_eq(st.retained, CAP - OUT);
	/* At capacity: the retained ones must really be reachable. */
	static void *o[CAP];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, CAP - OUT), 0);
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOBUFS);
	lfpool_ts_put_bulk(p, o, CAP - OUT);
	lfpool_ts_put_bulk(p, b.objs + CAP - OUT, OUT);
	st = stats_of(p);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.gets, st.puts);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(ts_exit, attach_and_detach)
{
	lfpool_config c = ts_config(32, 8, 2);
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_eq(lfpool_ts_attach(p), 0);
	cr_assert_eq(lfpool_ts_attach(p), 0, "attach twice is one cache");
	void *o[12];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 12), 0);
	lfpool_ts_put_bulk(p, o, 12);
	lfpool_ts_detach(p);
	lfpool_ts_detach(p);
	/* The objects went to the depot: another thread gets them all. */
	static struct batch b;
	b = (struct batch){ .pool = p, .n = 12, .put = 12 };
	run_on_thread(get_put_exit, &b);
	cr_assert_eq(b.failed, 0);
	for (int i = 0; i < 12; i++) {
		bool seen = false;
		for (int j = 0; j < 12; j++)
			seen |= o[j] == b.objs[i];
		cr_assert(seen, "object %d is one this thread cached", i);
	}
	cr_assert_eq(stats_of(p).created, 12);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Get every object one by one, then put them all back. */
static void *get_all_put_all(void *arg)
{
	get_batch(arg);
	struct batch *b = arg;
	if (!b->failed && !all_distinct(b->objs, b->n))
		b->failed = -1;
	return put_batch(arg);
}

/* get_all_put_all on a[0], then on a[1]. */
static void *both_pools(void *arg)
{
	struct batch *a = arg;
	get_all_put_all(&a[0]);
	return get_all_put_all(&a[1]);
}

/*
 * A pool keeps the caches of the first threads in its head, by thread slot
 * (include/lfpool/impl/lookup.h, struct lfpool_ts_fast): a thread that exits, or
 * detaches, must leave no cache there for the next user of its slot.  Each
 * thread of each round here takes the slot the previous one left (the
 * lowest free one); one that found its predecessor's freed cache would
 * take objects from a magazine given back to the depot (duplicates, or
 * more created than the capacity), or fail, and its calls would be counted
 * on a cache no longer in the pool's statistics.
 */
Test(ts_exit, a_thread_slot_is_left_empty_for_the_next_thread)
{
	enum { CAP = 100, ROUNDS = 20 };
	lfpool_config c = ts_config(32, 8, 2);
	c.capacity = CAP;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts *q = lfpool_ts_create(&c);
	static struct batch b, two[2];
	uint64_t gets_p = 0, gets_q = 0;
	for (int r = 0; r < ROUNDS; r++) {
		/* Both pools, in turns of order: the second one's entry for the
		 * slot is the previous thread's unless its exit cleared it. */
		two[0] = (struct batch){ .pool = r % 2 ? p : q, .n = CAP, .put = CAP };
		two[1] = (struct batch){ .pool = r % 2 ? q : p, .n = CAP, .put = CAP };
		run_on_thread(both_pools, two);
		cr_assert_eq(two[0].failed + two[1].failed, 0, "round %d: failed or duplicate gets", r);
		gets_p += CAP;
		gets_q += CAP;
		b = (struct batch){ .pool = p, .n = CAP, .put = CAP };
		run_on_thread(get_all_put_all, &b);
		cr_assert_eq(b.failed, 0, "round %d: %d failed or duplicate gets", r, b.failed);
		gets_p += CAP;
		cr_assert_eq(stats_of(p).gets, gets_p, "round %d: every get counted", r);
		cr_assert_eq(stats_of(q).gets, gets_q, "round %d: every get counted", r);
	}
	/* The same on this thread, across a detach. */
	for (int r = 0; r < ROUNDS; r++) {
		b = (struct batch){ .pool = p, .n = CAP, .put = CAP };
		get_all_put_all(&b);
		cr_assert_eq(b.failed, 0, "round %d: %d failed or duplicate gets", r, b.failed);
		lfpool_ts_detach(p);
		gets_p += CAP;
		cr_assert_eq(stats_of(p).gets, gets_p, "round %d: every get counted", r);
	}
	cr_assert_eq(stats_of(p).created, CAP);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(lfpool_ts_destroy(q), 0);
}

Test(ts_explicit, a_cache_used_on_several_threads)
{
	lfpool_config c = ts_config(48, 16, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *k = lfpool_ts_cache_create(p);
	cr_assert_not_null(k);
	/* Like a fiber: gets on one thread, puts on a second, gets on a third,
	 * always through its own handle. */
	static struct batch b;
	b = (struct batch){ .pool = p, .cache = k, .n = 20, .put = 20 };
	run_on_thread(get_batch, &b);
	cr_assert_eq(b.failed, 0);
	run_on_thread(put_batch, &b);
	void *first[20];
	memcpy(first, b.objs, sizeof(first));
	run_on_thread(get_batch, &b);
	cr_assert_eq(b.failed, 0);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 20, "the handle kept its objects across threads");
	cr_assert_eq(st.misses, 20, "every get of the first round created; none after the puts");
	for (int i = 0; i < 20; i++) {
		bool seen = false;
		for (int j = 0; j < 20; j++)
			seen |= first[j] == b.objs[i];
		cr_assert(seen);
	}
	run_on_thread(put_batch, &b);
	lfpool_ts_cache_flush(k);
	cr_assert_eq(stats_of(p).live, 0);
	lfpool_ts_cache_destroy(k);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* Threads that ask a fresh pool for worker slots at once: the first
 * makes the slot table (lib/threadstatic/worker.c), and every thread gets
 * one and the same cache for the slot they share. */
enum { RACERS = 8 };
struct racer {
	lfpool_ts *pool;
	sem_t *go;
	lfpool_ts_cache *shared, *own;
	unsigned index;
};

static void *race_for_slots(void *arg)
{
	struct racer *r = arg;
	sem_wait(r->go);
	r->shared = lfpool_ts_worker_cache(r->pool, LFPOOL_TS_WORKERS_MAX - 1);
	r->own = lfpool_ts_worker_cache(r->pool, r->index * 100);
	if (r->own)
		lfpool_ts_cache_put(r->own, lfpool_ts_cache_get(r->own));
	return NULL;
}

Test(ts_worker, first_slots_made_by_racing_threads_are_one_per_slot)
{
	for (int round = 0; round < 20; round++) {
		lfpool_config c = ts_config(32, 8, 2);
		lfpool_ts *p = lfpool_ts_create(&c);
		sem_t go;
		sem_init(&go, 0, 0);
		pthread_t t[RACERS];
		struct racer r[RACERS];
		for (unsigned i = 0; i < RACERS; i++) {
			r[i] = (struct racer){ .pool = p, .go = &go, .index = i };
			cr_assert_eq(pthread_create(&t[i], NULL, race_for_slots, &r[i]), 0);
		}
		for (unsigned i = 0; i < RACERS; i++)
			sem_post(&go);
		for (unsigned i = 0; i < RACERS; i++)
			pthread_join(t[i], NULL);
		for (unsigned i = 0; i < RACERS; i++) {
			cr_assert_not_null(r[i].shared);
			cr_assert_eq(r[i].shared, r[0].shared, "one cache for the shared slot");
			cr_assert_not_null(r[i].own);
			for (unsigned j = 0; j < i; j++)
				cr_assert_neq(r[i].own, r[j].own, "a cache per slot");
			cr_assert_eq(lfpool_ts_worker_cache(p, i * 100), r[i].own);
		}
		sem_destroy(&go);
		cr_assert_eq(lfpool_ts_destroy(p), 0);
	}
}

Test(ts_worker, slots_are_flushed_for_the_next_worker)
{
	lfpool_config c = ts_config(32, 8, 2);
	c.capacity = 10;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *w3 = lfpool_ts_worker_cache(p, 3);
	cr_assert_not_null(w3);
	cr_assert_eq(lfpool_ts_worker_cache(p, 3), w3, "one cache per slot");
	cr_assert_neq(lfpool_ts_worker_cache(p, 4), w3);
	cr_assert_not_null(lfpool_ts_worker_cache(p, LFPOOL_TS_WORKERS_MAX - 1));
	errno = 0;
	cr_assert_null(lfpool_ts_worker_cache(p, LFPOOL_TS_WORKERS_MAX));
	cr_assert_eq(errno, EINVAL);

	/* A worker on another thread fills slot 3 with all 10 objects. */
	static struct batch b;
	b = (struct batch){ .pool = p, .cache = w3, .n = 10, .put = 10 };
	run_on_thread(get_put_exit, &b);
	cr_assert_eq(b.failed, 0);
	/* The slot holds them; at capacity another cache steals them. */
	void *stolen = lfpool_ts_get(p);
	cr_assert_not_null(stolen, "a get at capacity takes from the slot's magazines");
	cr_assert_eq(stats_of(p).created, 10);
	lfpool_ts_put(p, stolen);
	lfpool_ts_flush(p);
	lfpool_ts_worker_release(p, 3);
	lfpool_ts_worker_release(p, 77);	/* never used: nothing to do */
	lfpool_ts_worker_release(p, LFPOOL_TS_WORKERS_MAX);
	void *o[10];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, 10), 0);
	lfpool_ts_put_bulk(p, o, 10);
	/* Worker caches belong to the pool: destroy succeeds and frees them. */
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* ---- many threads: capacity, memory bound ---- */

struct churn {
	lfpool_ts *pool;
	unsigned seed, rounds;
	size_t capacity;
	long *out;			/* objects out with all threads */
	long max_out;
	uint64_t max_created;
	int bad_errno, over;
	long gets, puts;
};

static void *churn_thread(void *arg)
{
	struct churn *t = arg;
	void *held[16];
	for (unsigned r = 0; r < t->rounds; r++) {
		unsigned want = 1 + rand_r(&t->seed) % 16, n = 0;
		for (; n < want; n++) {
			errno = 0;
			if (!(held[n] = lfpool_ts_get(t->pool))) {
				t->bad_errno |= errno != ENOBUFS;
				break;
			}
			long now = __atomic_add_fetch(t->out, 1, __ATOMIC_RELAXED);
			if (now > t->max_out)
				t->max_out = now;
			t->gets++;
		}
		if (r % 64 == 0) {
			lfpool_stats st;
			lfpool_ts_stats(t->pool, &st);
			if (st.created > t->max_created)
				t->max_created = st.created;
			t->over |= st.created > t->capacity;
		}
		__atomic_sub_fetch(t->out, (long)n, __ATOMIC_RELAXED);
		if (rand_r(&t->seed) % 2) {
			lfpool_ts_put_bulk(t->pool, held, n);
		} else {
			for (unsigned i = 0; i < n; i++)
				lfpool_ts_put(t->pool, held[i]);
		}
		t->puts += n;
		if (r % 500 == 499)
			lfpool_ts_flush(t->pool);
	}
	return NULL;
}

Test(ts_capacity, never_exceeded_with_many_threads)
{
	enum { T = 6, CAP = 64 };
	struct peak_alloc a;
	peak_alloc_init(&a);
	lfpool_config c = ts_config(128, 4, 2);
	c.capacity = CAP;
	c.allocator = &a.a;
	lfpool_ts *p = lfpool_ts_create(&c);
	long out = 0;
	struct churn t[T];
	for (unsigned i = 0; i < T; i++)
		t[i] = (struct churn){ .pool = p, .seed = i + 1, .rounds = 3000, .capacity = CAP,
				       .out = &out };
	run_threads(T, churn_thread, t, sizeof(t[0]));
	long gets = 0, puts = 0;
	for (unsigned i = 0; i < T; i++) {
		cr_assert_eq(t[i].bad_errno, 0, "thread %u: a get failed other than ENOBUFS", i);
		cr_assert_eq(t[i].over, 0, "thread %u saw created > capacity", i);
		cr_assert_leq(t[i].max_out, CAP);
		gets += t[i].gets;
		puts += t[i].puts;
	}
	lfpool_stats st = stats_of(p);
	cr_assert_leq(st.created, CAP);
	cr_assert_eq(st.gets, (uint64_t)gets);
	cr_assert_eq(st.puts, (uint64_t)puts);
	cr_assert_eq(st.live, 0);
	/* The documented bound on backing memory held: T threads and this one. */
	size_t bound = lfpool_ts_max_bytes(p, T + 1);
	cr_assert_leq(peak_alloc_peak(&a), bound, "peak %zu > bound %zu", peak_alloc_peak(&a), bound);
	cr_assert_eq(st.bytes_held, peak_alloc_live(&a));
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(peak_alloc_live(&a), 0);
	peak_alloc_fini(&a);
}

Test(ts_memory, bound_holds_and_is_not_vacuous)
{
	enum { T = 4, CAP = 2000, M = 32, D = 4, OBJ = 200 };
	struct peak_alloc a;
	peak_alloc_init(&a);
	lfpool_config c = ts_config(OBJ, M, D);
	c.capacity = CAP;
	c.allocator = &a.a;
	lfpool_ts *p = lfpool_ts_create(&c);
	/* Fill the capacity once, so that every slab is there. */
	static void *o[CAP];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, CAP), 0);
	lfpool_ts_put_bulk(p, o, CAP);
	long out = 0;
	struct churn t[T];
	for (unsigned i = 0; i < T; i++)
		t[i] = (struct churn){ .pool = p, .seed = 7 * i + 3, .rounds = 2000, .capacity = CAP,
				       .out = &out };
	run_threads(T, churn_thread, t, sizeof(t[0]));
	size_t bound = lfpool_ts_max_bytes(p, T + 1);
	size_t peak = peak_alloc_peak(&a);
	cr_assert_leq(peak, bound, "peak %zu > bound %zu", peak, bound);
	/* The bound is of the right size: objects plus (2 x caches + depot)
	 * magazines, with at most 2x for slab rounding and side data. */
	size_t floor = (size_t)CAP * OBJ + (2 * (T + 1) + D) * M * sizeof(void *);
	cr_assert_geq(bound, floor);
	cr_assert_leq(bound, 2 * floor + 64 * 1024, "bound %zu for %zu", bound, floor);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	peak_alloc_fini(&a);
}

/* ---- a thread that only puts ---- */

struct relay {
	lfpool_ts *pool;
	sem_t full, empty;	/* the batch is ready to put; ready to refill */
	void *objs[64];
	unsigned rounds;
	int failed;
	uint64_t created_at[2];	/* after the first tenth, at the end */
	size_t bytes_at[2];
};

static void *only_gets(void *arg)
{
	struct relay *r = arg;
	for (unsigned i = 0; i < r->rounds; i++) {
		sem_wait(&r->empty);
		if (lfpool_ts_get_bulk(r->pool, r->objs, 64) != 0)
			r->failed = 1;
		if (i == r->rounds / 10 || i == r->rounds - 1) {
			lfpool_stats st;
			lfpool_ts_stats(r->pool, &st);
			r->created_at[i != r->rounds / 10] = st.created;
			r->bytes_at[i != r->rounds / 10] = st.bytes_held;
		}
		sem_post(&r->full);
	}
	return NULL;
}

static void *only_puts(void *arg)
{
	struct relay *r = arg;
	for (unsigned i = 0; i < r->rounds; i++) {
		sem_wait(&r->full);
		for (int k = 0; k < 64; k++)
			lfpool_ts_put(r->pool, r->objs[k]);
		sem_post(&r->empty);
	}
	return NULL;
}

static void *relay_role(void *arg)
{
	struct relay **r = arg;
	return (r[1] ? only_puts : only_gets)(r[0]);
}

Test(ts_bounded, a_put_only_thread_does_not_grow_the_pool)
{
	enum { M = 16 };
	lfpool_config c = ts_config(64, M, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	static struct relay r;
	r = (struct relay){ .pool = p, .rounds = 3000 };
	sem_init(&r.full, 0, 0);
	sem_init(&r.empty, 0, 1);
	struct relay *roles[2][2] = { { &r, NULL }, { &r, &r } };
	run_threads(2, relay_role, roles, sizeof(roles[0]));
	cr_assert_eq(r.failed, 0);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 64ull * r.rounds);
	cr_assert_eq(st.puts, 64ull * r.rounds);
	/* Objects not out are in the putter's two magazines when the getter
	 * must create: 64 + 2M at most, whatever the number of rounds. */
	cr_assert_leq(st.created, 64 + 2 * M, "created %llu", (unsigned long long)st.created);
	cr_assert_eq(r.created_at[1], r.created_at[0], "no growth after warm-up");
	cr_assert_eq(r.bytes_at[1], r.bytes_at[0], "retained memory flat");
	cr_assert_gt(st.mag_exchanges, 0, "full magazines went through the depot");
	cr_assert_eq(st.cas_retries, 0, "ThreadStatic does not count them (lfpool/common.h)");
	sem_destroy(&r.full);
	sem_destroy(&r.empty);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

/* ---- trim while other threads get and put ---- */

struct worker {
	lfpool_ts *pool;
	int *stop;
	long rounds;
	int failed;
};

static void *pairs_until_stopped(void *arg)
{
	struct worker *w = arg;
	void *o[8];
	while (!__atomic_load_n(w->stop, __ATOMIC_ACQUIRE)) {
		if (lfpool_ts_get_bulk(w->pool, o, 8) != 0) {
			w->failed++;
			continue;
		}
		memset(o[w->rounds % 8], 0xab, 256);
		lfpool_ts_put_bulk(w->pool, o, 8);
		w->rounds++;
	}
	return NULL;
}

static void *trim_role(void *arg)
{
	struct worker *w = arg;
	return pairs_until_stopped(w);
}

Test(ts_trim, returns_memory_while_other_threads_run)
{
	struct test_alloc a;
	test_alloc_init(&a);
	lfpool_config c = ts_config(256, 16, 4);
	c.allocator = &a.a;
	lfpool_ts *p = lfpool_ts_create(&c);
	enum { BIG = 20000 };
	static void *o[BIG];
	cr_assert_eq(lfpool_ts_get_bulk(p, o, BIG), 0);
	lfpool_ts_put_bulk(p, o, BIG);
	lfpool_ts_flush(p);
	size_t before = a.live_bytes;	/* no other thread yet */

	int stop = 0;
	struct worker w[2] = { { p, &stop, 0, 0 }, { p, &stop, 0, 0 } };
	pthread_t tid[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&tid[i], NULL, trim_role, &w[i]);
	/* Let them run a little before trimming under them. */
	while (__atomic_load_n(&w[0].rounds, __ATOMIC_RELAXED) < 100 ||
	       __atomic_load_n(&w[1].rounds, __ATOMIC_RELAXED) < 100)
		sched_yield();
	size_t trimmed = 0;
	for (int i = 0; i < 5; i++)
		trimmed += lfpool_ts_trim(p, 0);
	pthread_mutex_lock(&a.lock);
	size_t after = a.live_bytes;
	pthread_mutex_unlock(&a.lock);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);

	cr_assert_eq(w[0].failed + w[1].failed, 0);
	cr_assert_geq(trimmed, BIG - 1000, "trimmed %zu", trimmed);
	cr_assert_lt(after, before / 4, "live bytes %zu -> %zu", before, after);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.gets, st.puts);
	cr_assert_lt(st.created, 1000, "only what the workers hold is left");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(a.live, 0);
	cr_assert_eq(a.bad_frees, 0);
	test_alloc_fini(&a);
}
