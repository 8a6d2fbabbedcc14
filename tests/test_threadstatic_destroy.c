/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_destroy.c - destroy ordering of ThreadStatic: implicit
 * caches of live threads are reclaimed (and those threads later exit or
 * use a new pool at the same address without touching the old one),
 * explicit caches make destroy fail with EBUSY (in a fork's child too),
 * thread exits race with destroy, and one thread uses many pools.  Run
 * under ASan, a touch of a freed pool or cache fails these tests.
 */
#include <errno.h>
#include <semaphore.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

enum { T = 4 };

struct sleeper {
	lfpool_ts **pool;	/* read again after each wake-up */
	sem_t go, done;
	void *kept[5];
	int failed;
};

/* Use the pool, leave objects in the cache and with the test, wait; then
 * use whatever pool *pool is now, and exit. */
static void *use_wait_reuse(void *arg)
{
	struct sleeper *s = arg;
	void *o[10];
	if (lfpool_ts_get_bulk(*s->pool, o, 10) != 0)
		s->failed = 1;
	lfpool_ts_put_bulk(*s->pool, o, 5);	/* 5 stay in this thread's cache */
	memcpy(s->kept, o + 5, sizeof(s->kept));
	sem_post(&s->done);
	sem_wait(&s->go);
	for (int i = 0; i < 100; i++) {
		void *x = lfpool_ts_get(*s->pool);
		if (!x)
			s->failed = 1;
		lfpool_ts_put(*s->pool, x);
	}
	sem_post(&s->done);
	return NULL;
}

Test(ts_destroy, implicit_caches_of_live_threads_are_reclaimed)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 16);
	c.magazine_size = 8;
	lfpool_ts *p = lfpool_ts_create(&c);
	static struct sleeper s[T];
	pthread_t tid[T];
	for (int i = 0; i < T; i++) {
		s[i].pool = &p;
		s[i].failed = 0;
		sem_init(&s[i].go, 0, 0);
		sem_init(&s[i].done, 0, 0);
		pthread_create(&tid[i], NULL, use_wait_reuse, &s[i]);
	}
	for (int i = 0; i < T; i++)
		sem_wait(&s[i].done);
	cr_assert_eq(stats_of(p).live, 5 * T);
	for (int i = 0; i < T; i++)
		lfpool_ts_put_bulk(p, s[i].kept, 5);
	/* Every thread still has a cache with objects in it. */
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init), "cached objects were finalized");

	/* A new pool, quite possibly at the same address: the threads' stale
	 * entries must not match it. */
	p = lfpool_ts_create(&c);
	for (int i = 0; i < T; i++)
		sem_post(&s[i].go);
	for (int i = 0; i < T; i++)
		sem_wait(&s[i].done);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 100 * T);
	cr_assert_eq(st.live, 0);
	for (int i = 0; i < T; i++) {
		pthread_join(tid[i], NULL);	/* exits after destroy of the first pool */
		cr_assert_eq(s[i].failed, 0);
		sem_destroy(&s[i].go);
		sem_destroy(&s[i].done);
	}
	st = stats_of(p);
	cr_assert_eq(st.created, st.retained, "exited threads handed their caches back");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
}

Test(ts_destroy, explicit_caches_make_it_fail_with_ebusy)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 16);
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts_cache *k1 = lfpool_ts_cache_create(p), *k2 = lfpool_ts_cache_create(p);
	void *o = lfpool_ts_cache_get(k1);
	lfpool_ts_cache_put(k2, o);
	errno = 0;
	cr_assert_eq(lfpool_ts_destroy(p), -1);
	cr_assert_eq(errno, EBUSY);
	/* Nothing was done: the pool and both caches still work. */
	cr_assert_eq(lfpool_ts_cache_get(k2), o);
	lfpool_ts_put(p, o);
	cr_assert_eq(hook_count(&h.init) - hook_count(&h.fini), 1, "nothing finalized");
	lfpool_ts_cache_destroy(k1);
	errno = 0;
	cr_assert_eq(lfpool_ts_destroy(p), -1);
	cr_assert_eq(errno, EBUSY);
	lfpool_ts_cache_destroy(k2);
	lfpool_ts_cache_destroy(NULL);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
}

/* A thread that makes an explicit cache, uses it and parks (outside any
 * call: its cache is in no step at the fork) until told to go. */
struct cache_maker {
	lfpool_ts *pool;
	lfpool_ts_cache *cache;
	sem_t made, go;
};

static void *make_cache_and_park(void *arg)
{
	struct cache_maker *m = arg;
	m->cache = lfpool_ts_cache_create(m->pool);
	if (m->cache)
		lfpool_ts_cache_put(m->cache, lfpool_ts_cache_get(m->cache));
	sem_post(&m->made);
	sem_wait(&m->go);
	return NULL;
}

/* Whether destroy fails with EBUSY and leaves the pool working. */
static bool destroy_is_ebusy(lfpool_ts *p)
{
	errno = 0;
	if (lfpool_ts_destroy(p) != -1 || errno != EBUSY)
		return false;
	void *o = lfpool_ts_get(p);
	lfpool_ts_put(p, o);
	return o != NULL;
}

/* The child's steps; it exits with the number of the first that failed. */
static const char *const fork_busy_steps[] = {
	NULL,
	"destroy with both pre-fork caches alive is not EBUSY (or the pool broke)",
	"destroy of the forking thread's pre-fork cache",
	"destroy with the other thread's pre-fork cache alive is not EBUSY",
	"destroy once both caches are gone is not 0",
	"objects not all finalized by that destroy",
};

static int fork_busy_child(lfpool_ts *p, lfpool_ts_cache *own, struct cache_maker *m,
			   struct hooks *h)
{
	if (!destroy_is_ebusy(p))
		return 1;
	lfpool_ts_cache_destroy(own);
	if (hook_count(&h->fini) != 0)
		return 2;
	if (!destroy_is_ebusy(p))
		return 3;
	/* Its thread does not exist here; it was parked, so its cache is in
	 * no step and the child may destroy it. */
	lfpool_ts_cache_destroy(m->cache);
	if (lfpool_ts_destroy(p) != 0)
		return 4;
	return hook_count(&h->fini) == hook_count(&h->init) ? 0 : 5;
}

/* lfpool/ts.h, fork(): explicit caches belong to no thread and are kept in
 * the child, where "destroy fails with EBUSY while an explicit cache made
 * before the fork exists": one the forking thread made and one another
 * thread (absent in the child) made; the child destroys them and then the
 * pool; the parent's pool and caches are untouched. */
Test(ts_destroy, a_fork_childs_destroy_is_ebusy_while_a_pre_fork_cache_exists)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 16);
	c.magazine_size = 4;
	struct cache_maker m = { .pool = lfpool_ts_create(&c) };
	cr_assert_not_null(m.pool);
	lfpool_ts_cache *own = lfpool_ts_cache_create(m.pool);
	cr_assert_not_null(own);
	lfpool_ts_cache_put(own, lfpool_ts_cache_get(own));
	sem_init(&m.made, 0, 0);
	sem_init(&m.go, 0, 0);
	pthread_t t;
	pthread_create(&t, NULL, make_cache_and_park, &m);
	sem_wait(&m.made);
	cr_assert_not_null(m.cache);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fork_busy_child(m.pool, own, &m, &h));
	int status = -1;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	int step = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	cr_assert(step == 0, "child status %#x: %s", status,
		  step > 0 && step < 6 ? fork_busy_steps[step] : "killed");
	sem_post(&m.go);
	pthread_join(t, NULL);
	cr_assert(destroy_is_ebusy(m.pool), "the parent's caches are its own");
	lfpool_ts_cache_destroy(m.cache);
	lfpool_ts_cache_destroy(own);
	cr_assert_eq(lfpool_ts_destroy(m.pool), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
	sem_destroy(&m.made);
	sem_destroy(&m.go);
}

struct quitter {
	lfpool_ts *pool;
	sem_t *done;
};

static void *use_and_quit(void *arg)
{
	struct quitter *q = arg;
	void *o[40];
	if (lfpool_ts_get_bulk(q->pool, o, 40) == 0)
		lfpool_ts_put_bulk(q->pool, o, 40);
	sem_post(q->done);
	return NULL;	/* the key destructor runs now, maybe during destroy */
}

/* Every thread's first cache is its home (in its TLS): this covers homes too. */
Test(ts_destroy, thread_exits_racing_with_destroy)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 16);
	c.magazine_size = 16;
	for (int round = 0; round < 20; round++) {
		lfpool_ts *p = lfpool_ts_create(&c);
		sem_t done;
		sem_init(&done, 0, 0);
		struct quitter q = { p, &done };
		pthread_t tid[T];
		for (int i = 0; i < T; i++)
			pthread_create(&tid[i], NULL, use_and_quit, &q);
		for (int i = 0; i < T; i++)
			sem_wait(&done);
		cr_assert_eq(lfpool_ts_destroy(p), 0);
		for (int i = 0; i < T; i++)
			pthread_join(tid[i], NULL);
		sem_destroy(&done);
		cr_assert_eq(hook_count(&h.fini), hook_count(&h.init), "round %d", round);
	}
}

enum { POOLS = 12 };

static void *many_pools(void *arg)
{
	lfpool_ts **pools = arg;
	/* Round-robin over more pools than the table first holds. */
	for (int r = 0; r < 50; r++) {
		for (int i = 0; i < POOLS; i++) {
			void *o = lfpool_ts_get(pools[i]);
			lfpool_ts_put(pools[i], o);
		}
	}
	return NULL;
}

Test(ts_destroy, one_thread_many_pools)
{
	lfpool_config c = ts_config(16, 4, 2);
	lfpool_ts *pools[POOLS];
	for (int i = 0; i < POOLS; i++)
		pools[i] = lfpool_ts_create(&c);
	run_on_thread(many_pools, pools);
	many_pools(pools);
	for (int i = 0; i < POOLS; i++) {
		lfpool_stats st = stats_of(pools[i]);
		cr_assert_eq(st.gets, 100, "pool %d", i);
		cr_assert_eq(st.created, 1, "pool %d: one object, cached", i);
	}
	/* Destroy every other pool; this thread's entries for them go, the
	 * others stay right. */
	for (int i = 0; i < POOLS; i += 2) {
		cr_assert_eq(lfpool_ts_destroy(pools[i]), 0);
		pools[i] = lfpool_ts_create(&c);
	}
	many_pools(pools);
	for (int i = 0; i < POOLS; i++) {
		lfpool_stats st = stats_of(pools[i]);
		cr_assert_eq(st.gets, i % 2 ? 150 : 50, "pool %d", i);
		cr_assert_eq(st.live, 0);
		cr_assert_eq(lfpool_ts_destroy(pools[i]), 0);
	}
}

/* A debug pool's calls after destroy are reported even when a new pool has
 * taken its registry slot, i.e. its id in the thread's directory of caches,
 * and this thread has a cache of the new pool there: the inline get and put
 * must not find that cache through the destroyed pool. */
Test(ts_destroy, a_destroyed_debug_pools_id_finds_no_cache)
{
	struct error_log log;
	lfpool_config c = { .obj_size = 32, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	lfpool_ts *a = lfpool_ts_create(&c);
	cr_assert_not_null(a);
	lfpool_ts_put(a, lfpool_ts_get(a));
	cr_assert_eq(lfpool_ts_destroy(a), 0);
	lfpool_ts *b = lfpool_ts_create(&c);	/* a's freed slot is reused first */
	cr_assert_not_null(b);
	void *x = lfpool_ts_get(b);
	cr_assert_not_null(x);
	lfpool_ts_put(b, x);
	lfpool_ts *other = lfpool_ts_create(&c);	/* the last pool used is neither */
	lfpool_ts_put(other, lfpool_ts_get(other));
	record_errors(&log);
	errno = 0;
	cr_assert_null(lfpool_ts_get(a));
	cr_assert_eq(log.calls, 1, "%d reports", log.calls);
	cr_assert(strstr(log.problem, "get after destroy"), "'%s'", log.problem);
	lfpool_ts_put(a, x);
	cr_assert_eq(log.calls, 2, "%d reports", log.calls);
	cr_assert(strstr(log.problem, "put after destroy"), "'%s'", log.problem);
	lfpool_set_error_hook(NULL, NULL);
	cr_assert_eq(stats_of(b).live, 0, "b's object stayed in b");
	cr_assert_eq(lfpool_ts_destroy(b), 0);
	cr_assert_eq(lfpool_ts_destroy(other), 0);
}

/* One call after destroy: reported once, naming the pool and the call. */
static void expect_dead(struct error_log *log, const char *call)
{
	cr_assert_eq(log->calls, 1, "%s: %d reports (last '%s')", call, log->calls, log->problem);
	cr_assert_str_eq(log->pool, "dbg", "%s: named '%s'", call, log->pool);
	cr_assert(strstr(log->problem, call) && strstr(log->problem, "after destroy"),
		  "'%s' does not say '%s after destroy'", log->problem, call);
	record_errors(log);
}

/* The calls of the ThreadStatic API that the hostile suite's every-flavour
 * test leaves out, after destroy of a debug pool (lfpool/ts.h: "Any other
 * call on a destroyed pool is an error (reported for LFPOOL_F_DEBUG
 * pools)"): each is reported, gives NULL (or 0) with errno EINVAL, and
 * touches neither the freed depot (a cache made on it) nor the freed
 * worker slot tables (a slot used before destroy: its chunk and cache
 * are freed; under ASan a read of them fails here). */
Test(ts_destroy, every_call_on_a_destroyed_debug_pool_is_reported)
{
	struct error_log log;
	lfpool_config c = { .obj_size = 32, .flags = LFPOOL_F_DEBUG, .name = "dbg" };
	lfpool_ts *p = lfpool_ts_create(&c);
	cr_assert_not_null(p);
	lfpool_ts_cache *w = lfpool_ts_worker_cache(p, 3);
	cr_assert_not_null(w);
	lfpool_ts_cache_put(w, lfpool_ts_cache_get(w));
	void *o = lfpool_ts_get(p);
	cr_assert_not_null(o);
	lfpool_ts_put(p, o);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	record_errors(&log);

	errno = 0;
	cr_assert_null(lfpool_ts_cache_create(p));
	cr_assert_eq(errno, EINVAL, "errno %d", errno);
	expect_dead(&log, "cache_create");
	errno = 0;
	cr_assert_null(lfpool_ts_worker_cache(p, 3), "the slot used before destroy");
	cr_assert_eq(errno, EINVAL, "errno %d", errno);
	expect_dead(&log, "worker_cache");
	cr_assert_null(lfpool_ts_worker_cache(p, 70), "a slot never used");
	expect_dead(&log, "worker_cache");
	lfpool_ts_worker_release(p, 3);
	expect_dead(&log, "worker_release");
	errno = 0;
	cr_assert_eq(lfpool_ts_drain(p), 0);
	cr_assert_eq(errno, EINVAL, "errno %d", errno);
	expect_dead(&log, "drain");
	lfpool_ts_flush(p);
	expect_dead(&log, "flush");
	lfpool_ts_detach(p);
	expect_dead(&log, "detach");
	/* The queries too: the graveyard keeps the slabs, which hold o. */
	errno = 0;
	cr_assert_eq(lfpool_ts_owns(p, o), 0, "a destroyed pool owns nothing");
	cr_assert_eq(errno, EINVAL, "errno %d", errno);
	expect_dead(&log, "owns");
	errno = 0;
	size_t max = lfpool_ts_max_bytes(p, 4);
	cr_assert_eq(max, 0, "a destroyed pool holds nothing: max_bytes %zu", max);
	cr_assert_eq(errno, EINVAL, "errno %d", errno);
	expect_dead(&log, "max_bytes");
	lfpool_set_error_hook(NULL, NULL);
}
