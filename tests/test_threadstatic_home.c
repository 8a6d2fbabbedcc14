/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_home.c - a thread's home cache: its first implicit
 * cache lives in the library's TLS (lfpool_ts_tls_.home) and serves that
 * pool's inline get and put; destroy of its pool, detach and thread exit
 * free it for the thread's next pool; thieves (a get at capacity, drain,
 * trim) take from it as from any cache; after fork the forking thread's
 * home serves on and other threads' are forgotten.  Run under ASan, a
 * touch of a freed pool fails these tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

/* The calling thread's home cache as the inline path reads it. */
static const lfpool_ts *home_pool(void)
{
	return __atomic_load_n(&lfpool_ts_tls_.home_pool, __ATOMIC_RELAXED);
}

static uint64_t home_gets(void)
{
	return lfpool_ts_tls_.home.fast.gets;
}

struct serve {
	lfpool_ts *p, *q;
	const lfpool_ts *home_before, *home_after_p, *home_after_q;
	uint64_t p_hits, q_home_gets;
	int failed;
};

/* A new thread: p becomes its home at the first get; 100 pairs on p go
 * through the home's counter; q, used second, is not the home. */
static void *serve_home(void *arg)
{
	struct serve *s = arg;
	s->home_before = home_pool();
	lfpool_ts_put(s->p, lfpool_ts_get(s->p));
	s->home_after_p = home_pool();
	uint64_t g = home_gets();
	for (int i = 0; i < 100; i++) {
		void *o = lfpool_ts_get(s->p);
		s->failed |= !o;
		lfpool_ts_put(s->p, o);
	}
	s->p_hits = home_gets() - g;
	g = home_gets();
	for (int i = 0; i < 100; i++)
		lfpool_ts_put(s->q, lfpool_ts_get(s->q));
	s->q_home_gets = home_gets() - g;
	s->home_after_q = home_pool();
	return NULL;
}

Test(ts_home, the_first_pool_is_served_from_the_threads_tls)
{
	lfpool_config c = ts_config(32, 8, 4);
	lfpool_ts *p = lfpool_ts_create(&c), *q = lfpool_ts_create(&c);
	struct serve s = { .p = p, .q = q };
	run_on_thread(serve_home, &s);
	cr_assert_null(s.home_before, "a new thread has no home");
	cr_assert_eq(s.home_after_p, p, "the first pool became the home");
	cr_assert_eq(s.p_hits, 100, "every get on p went through the home cache");
	cr_assert_eq(s.q_home_gets, 0, "q's gets did not touch the home");
	cr_assert_eq(s.home_after_q, p, "the home stays with the first pool");
	cr_assert_eq(s.failed, 0);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 101);
	cr_assert_eq(st.puts, 101);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(stats_of(q).gets, 100);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(lfpool_ts_destroy(q), 0);
}

struct sleeper {
	lfpool_ts **pool;	/* read again after each wake-up */
	sem_t go, done;
	const lfpool_ts *home[3];
	int failed;
};

/* Use *pool (home), wait; use *pool again (a new pool), wait; exit. */
static void *home_wait_reuse(void *arg)
{
	struct sleeper *s = arg;
	void *o[6];
	s->failed |= lfpool_ts_get_bulk(*s->pool, o, 6) != 0;
	lfpool_ts_put_bulk(*s->pool, o, 6);	/* they stay in the home */
	s->home[0] = home_pool();
	sem_post(&s->done);
	sem_wait(&s->go);
	s->home[1] = home_pool();
	for (int i = 0; i < 50; i++) {
		void *x = lfpool_ts_get(*s->pool);
		s->failed |= !x;
		lfpool_ts_put(*s->pool, x);
	}
	s->home[2] = home_pool();
	sem_post(&s->done);
	sem_wait(&s->go);
	return NULL;	/* exits with a home cache of the second pool */
}

Test(ts_home, destroy_reclaims_a_live_threads_home_for_its_next_pool)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 16);
	c.magazine_size = 8;
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_ts *first = p;
	struct sleeper s = { .pool = &p };
	sem_init(&s.go, 0, 0);
	sem_init(&s.done, 0, 0);
	pthread_t tid;
	cr_assert_eq(pthread_create(&tid, NULL, home_wait_reuse, &s), 0);
	sem_wait(&s.done);
	cr_assert_eq(s.home[0], first);
	cr_assert_eq(stats_of(first).retained, 6);
	cr_assert_eq(lfpool_ts_destroy(first), 0);
	cr_assert_eq(hook_count(&h.fini), 6, "the home's objects were finalized");
	p = lfpool_ts_create(&c);
	sem_post(&s.go);
	sem_wait(&s.done);
	cr_assert_null(s.home[1], "destroy freed the home");
	cr_assert_eq(s.home[2], p, "the thread's next pool took the home");
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.gets, 50);
	cr_assert_eq(st.live, 0);
	sem_post(&s.go);
	pthread_join(tid, NULL);	/* exit hands the home cache back */
	st = stats_of(p);
	cr_assert_eq(st.retained, st.created);
	cr_assert_eq(lfpool_ts_drain(p), 0, "exit gave the home's objects to the depot");
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
	cr_assert_eq(s.failed, 0);
	sem_destroy(&s.go);
	sem_destroy(&s.done);
}

/* This thread: destroy of its home pool and detach each free the home,
 * and the next pool it uses takes it. */
static void *destroy_own_home(void *arg)
{
	int *bad = arg;
	lfpool_config c = ts_config(32, 8, 4);
	lfpool_ts *a = lfpool_ts_create(&c), *b = lfpool_ts_create(&c);
	lfpool_ts_put(a, lfpool_ts_get(a));
	lfpool_ts_put(b, lfpool_ts_get(b));
	*bad |= (home_pool() != a) << 0;
	*bad |= (lfpool_ts_destroy(a) != 0) << 1;
	*bad |= (home_pool() != NULL) << 2;
	lfpool_ts_put(b, lfpool_ts_get(b));	/* b keeps its heap cache */
	*bad |= (home_pool() != NULL) << 3;
	lfpool_ts *d = lfpool_ts_create(&c);
	void *x = lfpool_ts_get(d);
	*bad |= (home_pool() != d || !x) << 4;
	lfpool_ts_put(d, x);
	lfpool_ts_detach(d);
	*bad |= (home_pool() != NULL || stats_of(d).retained != 1 || lfpool_ts_drain(d) != 0) << 5;
	lfpool_ts_put(d, lfpool_ts_get(d));
	*bad |= (home_pool() != d || stats_of(d).gets != 2) << 6;
	*bad |= (lfpool_ts_destroy(b) != 0 || lfpool_ts_destroy(d) != 0) << 7;
	return NULL;
}

Test(ts_home, destroy_and_detach_free_the_home_for_the_next_pool)
{
	int bad = 0;
	run_on_thread(destroy_own_home, &bad);
	cr_assert_eq(bad, 0, "failed checks: %#x", bad);
}

struct quitter {
	lfpool_ts *pool;
	sem_t *done, *go;
};

static void *home_then_wait(void *arg)
{
	struct quitter *q = arg;
	void *o[20];
	if (lfpool_ts_get_bulk(q->pool, o, 20) == 0)
		lfpool_ts_put_bulk(q->pool, o, 20);
	sem_post(q->done);
	if (q->go)
		sem_wait(q->go);
	return NULL;	/* the key destructor: after destroy, or racing it */
}

Test(ts_home, thread_exit_after_destroy_of_its_home_pool)
{
	struct hooks h;
	lfpool_config c = hooked_config(&h, 32, 16);
	c.magazine_size = 8;
	lfpool_ts *p = lfpool_ts_create(&c);
	sem_t done, go;
	sem_init(&done, 0, 0);
	sem_init(&go, 0, 0);
	struct quitter q = { p, &done, &go };
	pthread_t tid[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&tid[i], NULL, home_then_wait, &q);
	for (int i = 0; i < 4; i++)
		sem_wait(&done);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(hook_count(&h.fini), hook_count(&h.init));
	/* A new pool, maybe at p's address: the exits must touch neither. */
	lfpool_ts *r = lfpool_ts_create(&c);
	lfpool_ts_put(r, lfpool_ts_get(r));
	for (int i = 0; i < 4; i++)
		sem_post(&go);
	for (int i = 0; i < 4; i++)
		pthread_join(tid[i], NULL);
	lfpool_stats st = stats_of(r);
	cr_assert_eq(st.gets, 1);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(r), 0);
	sem_destroy(&done);
	sem_destroy(&go);
}

enum { CAP = 24 };

struct holder {
	lfpool_ts *pool;
	sem_t filled, go;
	const lfpool_ts *home;
	int failed;
};

/* Take every object of the pool and put them back: they all sit in this
 * thread's home cache (magazine 16: its loaded and previous magazines). */
static void *fill_home(void *arg)
{
	struct holder *hd = arg;
	void *o[CAP];
	hd->failed |= lfpool_ts_get_bulk(hd->pool, o, CAP) != 0;
	for (int i = 0; i < CAP; i++)
		lfpool_ts_put(hd->pool, o[i]);
	hd->home = home_pool();
	sem_post(&hd->filled);
	sem_wait(&hd->go);
	return NULL;
}

static lfpool_ts *held_in_a_home(struct holder *hd, pthread_t *tid)
{
	lfpool_config c = ts_config(32, 16, 2);
	c.capacity = CAP;
	hd->pool = lfpool_ts_create(&c);
	hd->failed = 0;
	sem_init(&hd->filled, 0, 0);
	sem_init(&hd->go, 0, 0);
	pthread_create(tid, NULL, fill_home, hd);
	sem_wait(&hd->filled);
	cr_assert_eq(hd->home, hd->pool);
	cr_assert_eq(stats_of(hd->pool).created, CAP);
	return hd->pool;
}

static void release_holder(struct holder *hd, pthread_t tid)
{
	sem_post(&hd->go);
	pthread_join(tid, NULL);
	cr_assert_eq(hd->failed, 0);
	cr_assert_eq(lfpool_ts_destroy(hd->pool), 0);
	sem_destroy(&hd->filled);
	sem_destroy(&hd->go);
}

Test(ts_home, a_get_at_capacity_steals_from_another_threads_home)
{
	struct holder hd;
	pthread_t tid;
	lfpool_ts *p = held_in_a_home(&hd, &tid);
	void *o[CAP];
	for (int i = 0; i < CAP; i++) {
		o[i] = lfpool_ts_get(p);
		cr_assert_not_null(o[i], "get %d: the home's objects are within reach", i);
	}
	cr_assert(all_distinct(o, CAP));
	errno = 0;
	cr_assert_null(lfpool_ts_get(p));
	cr_assert_eq(errno, ENOBUFS);
	cr_assert_eq(stats_of(p).created, CAP);
	lfpool_ts_put_bulk(p, o, CAP);
	release_holder(&hd, tid);
}

Test(ts_home, drain_and_trim_empty_another_threads_home)
{
	struct holder hd;
	pthread_t tid;
	lfpool_ts *p = held_in_a_home(&hd, &tid);
	cr_assert_eq(lfpool_ts_drain(p), CAP, "drain moved the home's objects");
	cr_assert_eq(lfpool_ts_trim(p, 0), CAP, "trim gave them back");
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.created, 0);
	cr_assert_eq(st.retained, 0);
	/* The home serves on after its thief went. */
	sem_post(&hd.go);
	pthread_join(tid, NULL);
	cr_assert_eq(hd.failed, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	sem_destroy(&hd.filled);
	sem_destroy(&hd.go);
}

enum { FORK_CAP = 16 };

struct forker {
	lfpool_ts *pool;
	int status;
};

/* On a thread whose home is the pool: fork; the child uses its home, which
 * the fork kept, while the other thread's home is forgotten. */
static void *fork_with_a_home(void *arg)
{
	struct forker *f = arg;
	lfpool_ts_put(f->pool, lfpool_ts_get(f->pool));
	pid_t pid = fork();
	if (pid == 0) {
		int bad = home_pool() != f->pool;
		/* The other thread's home was forgotten with what it held
		 * (ts.h, fork()): those objects are never handed out again,
		 * so fewer than the capacity can be got, even by stealing. */
		void *o[FORK_CAP];
		int n = 0;
		while (n < FORK_CAP && (o[n] = lfpool_ts_get(f->pool)))
			n++;
		bad |= (n == FORK_CAP || n == 0) << 1;
		int got = n;
		while (n > 0)
			lfpool_ts_put(f->pool, o[--n]);
		/* ... and stats count them as out with users (ts.h, fork()). */
		bad |= (stats_of(f->pool).live != (uint64_t)(FORK_CAP - got)) << 2;
		uint64_t g = home_gets();
		for (int i = 0; i < 100; i++) {
			void *o = lfpool_ts_get(f->pool);
			bad |= !o;
			lfpool_ts_put(f->pool, o);
		}
		bad |= home_gets() - g != 100;
		bad |= lfpool_ts_destroy(f->pool) != 0;
		bad |= home_pool() != NULL;
		_exit(bad);
	}
	f->status = -1;
	if (pid > 0 && waitpid(pid, &f->status, 0) != pid)
		f->status = -1;
	return NULL;
}

static void *home_and_hold(void *arg)
{
	struct holder *hd = arg;
	lfpool_ts_put(hd->pool, lfpool_ts_get(hd->pool));
	hd->home = home_pool();
	sem_post(&hd->filled);
	sem_wait(&hd->go);
	return NULL;
}

Test(ts_home, fork_keeps_the_forking_threads_home_and_forgets_the_others)
{
	lfpool_config c = ts_config(32, 8, 4);
	c.capacity = FORK_CAP;
	struct holder hd = { .pool = lfpool_ts_create(&c) };
	sem_init(&hd.filled, 0, 0);
	sem_init(&hd.go, 0, 0);
	pthread_t other;
	pthread_create(&other, NULL, home_and_hold, &hd);
	sem_wait(&hd.filled);
	cr_assert_eq(hd.home, hd.pool);
	struct forker f = { .pool = hd.pool };
	run_on_thread(fork_with_a_home, &f);
	cr_assert(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0, "child status %#x", f.status);
	sem_post(&hd.go);
	pthread_join(other, NULL);
	lfpool_stats st = stats_of(hd.pool);
	cr_assert_eq(st.live, 0, "the parent's homes are untouched");
	cr_assert_eq(lfpool_ts_destroy(hd.pool), 0);
	sem_destroy(&hd.filled);
	sem_destroy(&hd.go);
}

/* Threads that hold every thread slot (lfpool_ts_tls_.tslot) of the
 * parent do not exist in a fork's child: their slots are free there, so a
 * thread the child starts gets one; and the entries their caches left in
 * the pools' heads are cleared, so that thread uses its own caches, not
 * theirs, on its second pool.  Returns the slot, 0 for none or when the
 * second pool's entry for it still named another thread's cache. */
struct slot_pools {
	lfpool_ts *a, *b;
	sem_t filled, go;
};

static void *slot_of_new_thread(void *arg)
{
	struct slot_pools *sp = arg;
	lfpool_ts_put(sp->a, lfpool_ts_get(sp->a));	/* takes a slot */
	uint32_t k = lfpool_ts_tls_.tslot;
	const struct lfpool_ts_fast *fb = (const struct lfpool_ts_fast *)sp->b;
	int stale = __atomic_load_n(&fb->by_thread[k], __ATOMIC_RELAXED) != NULL;
	lfpool_ts_put(sp->b, lfpool_ts_get(sp->b));
	return (void *)(uintptr_t)(stale || home_pool() != sp->a ? 0 : k);
}

static void *hold_a_slot(void *arg)
{
	struct slot_pools *sp = arg;
	lfpool_ts_put(sp->a, lfpool_ts_get(sp->a));
	lfpool_ts_put(sp->b, lfpool_ts_get(sp->b));
	sem_post(&sp->filled);
	sem_wait(&sp->go);
	return NULL;
}

Test(ts_home, a_fork_child_frees_the_thread_slots_of_threads_it_lacks)
{
	lfpool_config c = ts_config(32, 8, 4);
	struct slot_pools sp = { .a = lfpool_ts_create(&c), .b = lfpool_ts_create(&c) };
	sem_init(&sp.filled, 0, 0);
	sem_init(&sp.go, 0, 0);
	pthread_t t[LFPOOL_TS_THREAD_SLOTS_];
	for (int i = 0; i < LFPOOL_TS_THREAD_SLOTS_; i++) {
		pthread_create(&t[i], NULL, hold_a_slot, &sp);
		sem_wait(&sp.filled);
	}
	void *slot;
	pthread_t late;
	pthread_create(&late, NULL, slot_of_new_thread, &sp);
	pthread_join(late, &slot);
	cr_assert_eq((uintptr_t)slot, 0, "the holders took every slot");
	cr_assert_eq(lfpool_ts_tls_.tslot, 0);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_create(&late, NULL, slot_of_new_thread, &sp);
		pthread_join(late, &slot);
		_exit(slot == NULL);
	}
	int status = -1;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	for (int i = 0; i < LFPOOL_TS_THREAD_SLOTS_; i++)
		sem_post(&sp.go);
	for (int i = 0; i < LFPOOL_TS_THREAD_SLOTS_; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(lfpool_ts_destroy(sp.a), 0);
	cr_assert_eq(lfpool_ts_destroy(sp.b), 0);
	sem_destroy(&sp.filled);
	sem_destroy(&sp.go);
}

/* A pthread key destructor that runs after the library's (a key made
 * later) and uses a pool in every round glibc gives it, on a thread whose
 * stack (and so its static TLS, which glibc places at the stack's top) the
 * test provides.  After the library's destructor the thread must keep no
 * cache and register nothing: a home would put its TLS on the pool's list,
 * and a thread table registered in glibc's last round would stay on the
 * library's list of tables, naming that TLS, which every later destroy
 * reads.  The test takes the stack's memory away after the join, so such a
 * read faults. */
static pthread_key_t late_key;
static lfpool_ts *late_pool;
static int late_rounds, late_home_used, late_failed;

static void late_destructor(void *arg)
{
	void *objs[3];
	void *obj = lfpool_ts_get(late_pool);
	late_failed |= obj == NULL;
	lfpool_ts_put(late_pool, obj);
	if (lfpool_ts_get_bulk(late_pool, objs, 3) == 0)
		lfpool_ts_put_bulk(late_pool, objs, 3);
	else
		late_failed = 1;
	late_failed |= lfpool_ts_attach(late_pool) != 0;
	late_rounds++;
	late_home_used |= home_pool() == late_pool;
	pthread_setspecific(late_key, arg);	/* again next round, while glibc allows */
}

static void *use_then_exit(void *arg)
{
	lfpool_ts *p = arg;
	lfpool_ts_put(p, lfpool_ts_get(p));	/* the library's key exists now */
	pthread_setspecific(late_key, p);
	return NULL;
}

Test(ts_home, calls_after_the_threads_key_destructor_keep_no_cache)
{
	lfpool_config c = ts_config(32, 8, 4);
	lfpool_ts *p = lfpool_ts_create(&c);
	late_pool = lfpool_ts_create(&c);
	lfpool_ts *other = lfpool_ts_create(&c);
	lfpool_ts_put(p, lfpool_ts_get(p));	/* the library's key before ours */
	cr_assert_eq(pthread_key_create(&late_key, late_destructor), 0);

	size_t size = 1u << 20;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(stack, MAP_FAILED);
	pthread_attr_t attr;
	pthread_t tid;
	pthread_attr_init(&attr);
	cr_assert_eq(pthread_attr_setstack(&attr, stack, size), 0);
	cr_assert_eq(pthread_create(&tid, &attr, use_then_exit, p), 0);
	pthread_join(tid, NULL);
	pthread_attr_destroy(&attr);
	cr_assert_eq(mprotect(stack, size, PROT_NONE), 0);	/* its TLS is gone */

	cr_assert_geq(late_rounds, 2, "glibc ran the late destructor again");
	cr_assert_eq(late_failed, 0, "a call during exit failed");
	cr_assert_eq(late_home_used, 0, "a cache made during exit took the home");
	lfpool_stats st = stats_of(late_pool);
	cr_assert_eq(st.gets, (uint64_t)late_rounds * 4);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(other), 0);	/* reads every thread table */
	cr_assert_eq(lfpool_ts_destroy(late_pool), 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	pthread_key_delete(late_key);
	munmap(stack, size);
}

/* A pool's first cache other than a home lives in the pool's struct right
 * after its head (LFPOOL_TS_LOCAL_OFFSET_, lfpool/impl/lookup.h), which the next
 * first cache reuses once it is gone; a second cache comes from elsewhere. */
Test(ts_home, a_pools_first_cache_lives_in_its_struct)
{
	lfpool_config c = ts_config(32, 8, 4);
	lfpool_ts *home = lfpool_ts_create(&c), *p = lfpool_ts_create(&c);
	char *local = (char *)p + LFPOOL_TS_LOCAL_OFFSET_;
	lfpool_ts_put(home, lfpool_ts_get(home));	/* the thread's home: TLS */
	cr_assert_eq(home_pool(), home);
	lfpool_ts_cache *k1 = lfpool_ts_cache_create(p);
	lfpool_ts_cache *k2 = lfpool_ts_cache_create(p);
	cr_assert_eq((char *)k1, local);
	cr_assert_neq((char *)k2, local);
	lfpool_ts_cache_put(k1, lfpool_ts_cache_get(k1));
	lfpool_ts_cache_destroy(k1);
	/* Free again: the thread's implicit cache of p takes it. */
	void *o = lfpool_ts_get(p);
	cr_assert_not_null(o);
	cr_assert_eq((char *)lfpool_ts_tls_.cache, local);
	lfpool_ts_put(p, o);
	lfpool_ts_cache_destroy(k2);
	lfpool_stats st = stats_of(p);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(lfpool_ts_destroy(home), 0);
}

/*
 * A signal handler that interrupts this thread's lookup between its loads
 * of the directory and of a slot may make a cache and so grow the
 * directory (lfpool/impl/lookup.h): the lookup then reads the directory
 * it loaded.  That one must still hold its slots: here the test is the
 * interrupted lookup, holding the old directory while the thread's next
 * pools grow it twice (from the heap: the first growth only leaves the
 * inline slots).
 */
Test(ts_home, a_directory_that_grew_stays_readable_until_thread_exit)
{
	lfpool_config c = ts_config(32, 4, 2);
	enum { MAX_POOLS = 200 };
	lfpool_ts *pools[MAX_POOLS];
	lfpool_ts_cache **old = NULL, *saved[MAX_POOLS];
	uint32_t grown = 0, nold = 0;
	void *after = NULL;
	unsigned n = 0;
	while (n < MAX_POOLS && grown < 3) {
		uint32_t ndir = lfpool_ts_tls_.ndir;
		if (grown == 2) {	/* on the heap now: the lookup holds it */
			old = lfpool_ts_tls_.dir;
			nold = ndir;
			memcpy(saved, old, nold * sizeof(*old));
		}
		cr_assert_not_null(pools[n] = lfpool_ts_create(&c));
		lfpool_ts_put(pools[n], lfpool_ts_get(pools[n]));
		n++;
		if (lfpool_ts_tls_.ndir == ndir)
			continue;
		/* something after it, so that the heap cannot grow the next
		 * directory in place */
		if (++grown == 2)
			cr_assert_not_null(after = malloc(64));
	}
	cr_assert_eq(grown, 3, "the directory grew %u times", grown);
	for (uint32_t i = 0; i < nold; i++)
		cr_assert_eq(__atomic_load_n(&old[i], __ATOMIC_RELAXED), saved[i],
			     "slot %u of the replaced directory changed", i);
	free(after);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(lfpool_ts_destroy(pools[i]), 0);
}
