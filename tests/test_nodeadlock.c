/* SPDX-License-Identifier: MIT */
/*
 * test_nodeadlock.c - ThreadStatic calls that must not deadlock:
 * hooks that trim other pools or block while another thread trims (no hook
 * runs inside a grace section), a thread cancelled inside a trim (the trim
 * runs with cancellation off), and gets and puts of a signal handler that
 * interrupted the same thread's slow path (EAGAIN, or the loose stack).
 * Each test runs under a deadline: a hang ends the process (SIGALRM), which
 * Criterion reports as a crash.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

#define DEADLINE 20

/* A pool whose every later trim waits for a grace period: it gave a slab
 * back once (its trims then free side data after a wait). */
static lfpool_ts *waiting_pool(void)
{
	lfpool_config cfg = { .obj_size = 64, .name = "R" };
	lfpool_ts *r = lfpool_ts_create(&cfg);
	cr_assert_not_null(r);
	cr_assert_eq(lfpool_ts_prewarm(r, 64), 0);
	cr_assert_gt(lfpool_ts_trim(r, 0), 0, "R gave nothing back");
	return r;
}

static lfpool_ts *other;	/* the pool a hook trims */

static void trim_other(void *obj, void *ctx)
{
	(void)obj;
	(void)ctx;
	cr_assert_eq(lfpool_ts_prewarm(other, 8), 0);
	lfpool_ts_trim(other, 0);
}

static lfpool_ts *hooked_pool(lfpool_hook_fn init, lfpool_hook_fn fini, void *ctx, unsigned flags)
{
	lfpool_config cfg = { .obj_size = 32, .init = init, .fini = fini, .hook_ctx = ctx,
			      .flags = flags, .name = "P" };
	lfpool_ts *p = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	return p;
}

/* P's fini hook trims R, from a trim of P. */
static void fini_trims_other(unsigned flags)
{
	TEST_DEADLINE(DEADLINE);
	other = waiting_pool();
	lfpool_ts *p = hooked_pool(NULL, trim_other, NULL, flags);
	cr_assert_eq(lfpool_ts_prewarm(p, 4), 0);
	cr_assert_eq(lfpool_ts_trim(p, 0), 4);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(lfpool_ts_destroy(other), 0);
	TEST_DEADLINE(0);
}

Test(nodeadlock, fini_hook_trims_another_pool)
{
	fini_trims_other(0);
}

Test(nodeadlock, fini_hook_trims_another_pool_percpu)
{
	fini_trims_other(LFPOOL_F_PERCPU);
}

/* P's init hook trims R, from a get of P that creates. */
static void init_trims_other(unsigned flags)
{
	TEST_DEADLINE(DEADLINE);
	other = waiting_pool();
	lfpool_ts *p = hooked_pool(trim_other, NULL, NULL, flags);
	void *obj = lfpool_ts_get(p);
	cr_assert_not_null(obj);
	lfpool_ts_put(p, obj);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(lfpool_ts_destroy(other), 0);
	TEST_DEADLINE(0);
}

Test(nodeadlock, init_hook_trims_another_pool)
{
	init_trims_other(0);
}

Test(nodeadlock, init_hook_trims_another_pool_percpu)
{
	init_trims_other(LFPOOL_F_PERCPU);
}

/* An init hook that takes the application's mutex m. */
struct gate {
	pthread_mutex_t m;
	sem_t in_hook;
};

static void lock_m(void *obj, void *ctx)
{
	(void)obj;
	struct gate *g = ctx;
	sem_post(&g->in_hook);
	pthread_mutex_lock(&g->m);
	pthread_mutex_unlock(&g->m);
}

static void *get_one(void *p)
{
	void *obj = lfpool_ts_get(p);
	cr_assert_not_null(obj);
	lfpool_ts_put(p, obj);
	lfpool_ts_flush(p);
	return NULL;
}

/* Thread A's get of P runs P's init hook, which waits for m; the main
 * thread holds m and trims R, an unrelated pool: the trim must not wait
 * for A. */
static void hook_waits_for_trimmer(unsigned flags)
{
	TEST_DEADLINE(DEADLINE);
	struct gate g;
	pthread_mutex_init(&g.m, NULL);
	sem_init(&g.in_hook, 0, 0);
	lfpool_ts *r = waiting_pool();
	lfpool_ts *p = hooked_pool(lock_m, NULL, &g, flags);
	pthread_mutex_lock(&g.m);
	pthread_t a;
	cr_assert_eq(pthread_create(&a, NULL, get_one, p), 0);
	sem_wait(&g.in_hook);
	cr_assert_eq(lfpool_ts_prewarm(r, 8), 0);
	lfpool_ts_trim(r, 0);
	pthread_mutex_unlock(&g.m);
	cr_assert_eq(pthread_join(a, NULL), 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	cr_assert_eq(lfpool_ts_destroy(r), 0);
	sem_destroy(&g.in_hook);
	pthread_mutex_destroy(&g.m);
	TEST_DEADLINE(0);
}

Test(nodeadlock, init_hook_waits_for_a_trimming_thread)
{
	hook_waits_for_trimmer(0);
}

Test(nodeadlock, init_hook_waits_for_a_trimming_thread_percpu)
{
	hook_waits_for_trimmer(LFPOOL_F_PERCPU);
}

/*
 * Cancellation.  A backing allocator that blocks while armed holds its
 * thread inside a grace section (the allocator runs in one: grace.h), so a
 * trim of R on thread B waits in liburcu-bp's synchronize_rcu, whose
 * poll() is a cancellation point.  B is cancelled there; then every trim
 * and fork() must still work.
 */
static struct {
	atomic_bool armed;
	sem_t entered, go;
} blocking;

static void *blocking_alloc(size_t size, size_t align, void *ctx)
{
	(void)ctx;
	if (atomic_exchange(&blocking.armed, false)) {
		sem_post(&blocking.entered);
		sem_wait(&blocking.go);
	}
	void *p = NULL;
	return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) ? NULL : p;
}

static void blocking_free(void *ptr, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	free(ptr);
}

static const lfpool_allocator blocking_allocator = { blocking_alloc, blocking_free, NULL };

/* Thread A: enough sections to use liburcu-bp (grace.c counts its first
 * ones), then a prewarm that grows a slab through the blocking allocator. */
static void *hold_section(void *q)
{
	for (int i = 0; i < 16; i++)
		cr_assert_eq(lfpool_ts_prewarm(q, 1), 0);
	atomic_store(&blocking.armed, true);
	cr_assert_eq(lfpool_ts_prewarm(q, 4096), 0);
	return NULL;
}

static atomic_bool trimming;

static void *trim_r(void *r)
{
	atomic_store(&trimming, true);
	lfpool_ts_trim(r, 0);
	pthread_testcancel();
	return NULL;
}

static int fork_and_exit(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? 0 : -1;
}

/* A deadline that a hang with every signal blocked meets too (fork's
 * prepare handler blocks them in liburcu-bp before it waits for its lock,
 * and SIGALRM then waits forever): a thread of its own aborts the test. */
static atomic_bool finished;

static void *watchdog(void *arg)
{
	(void)arg;
	for (int i = 0; i < DEADLINE * 10 && !atomic_load(&finished); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	if (!atomic_load(&finished))
		abort();
	return NULL;
}

Test(nodeadlock, thread_cancelled_in_trim)
{
	pthread_t dog;
	cr_assert_eq(pthread_create(&dog, NULL, watchdog, NULL), 0);
	sem_init(&blocking.entered, 0, 0);
	sem_init(&blocking.go, 0, 0);
	lfpool_config qc = { .obj_size = 64, .allocator = &blocking_allocator, .name = "Q" };
	lfpool_ts *q = lfpool_ts_create(&qc);
	lfpool_ts *r = waiting_pool();
	cr_assert_not_null(q);
	pthread_t a, b;
	cr_assert_eq(pthread_create(&a, NULL, hold_section, q), 0);
	sem_wait(&blocking.entered);
	cr_assert_eq(lfpool_ts_prewarm(r, 8), 0);
	cr_assert_eq(pthread_create(&b, NULL, trim_r, r), 0);
	while (!atomic_load(&trimming))
		sched_yield();
	/* Let B reach the wait (a test that passes either way if not). */
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	cr_assert_eq(pthread_cancel(b), 0);
	sem_post(&blocking.go);
	void *ret;
	cr_assert_eq(pthread_join(b, &ret), 0);
	cr_assert_eq(ret, PTHREAD_CANCELED);
	cr_assert_eq(pthread_join(a, NULL), 0);
	cr_assert_eq(lfpool_ts_prewarm(r, 8), 0);
	cr_assert_eq(lfpool_ts_trim(r, 0), 8);	/* hung here when B left the lock held */
	cr_assert_eq(fork_and_exit(), 0);
	cr_assert_eq(lfpool_ts_destroy(q), 0);
	cr_assert_eq(lfpool_ts_destroy(r), 0);
	atomic_store(&finished, true);
	cr_assert_eq(pthread_join(dog, NULL), 0);
}

/*
 * Signal handlers.  An allocator that raises SIGUSR1 while armed: it runs
 * when a put's slow path grows the magazines (a cache's put holds its
 * cache's lock there; a per-CPU put is in transit, holding the
 * magazines' grow lock), so the handler interrupts that step of its own
 * thread.  The handler gets and puts on the same pool.
 */
#define MAG 4
#define OBJS 256

static struct {
	lfpool_ts *pool;
	atomic_bool armed, ran;
	void *mine[8];		/* what the handler puts */
	int bulk_rc, bulk_errno;
	void *one;
	int one_errno;
} sig;

static void *raising_alloc(size_t size, size_t align, void *ctx)
{
	if (atomic_exchange(&sig.armed, false))
		raise(SIGUSR1);
	return blocking_alloc(size, align, ctx);
}

static const lfpool_allocator raising_allocator = { raising_alloc, blocking_free, NULL };

static void on_usr1(int signo)
{
	(void)signo;
	int saved = errno;
	void *objs[8];
	errno = 0;
	sig.bulk_rc = lfpool_ts_get_bulk(sig.pool, objs, 8);
	sig.bulk_errno = errno;
	if (sig.bulk_rc == 0)
		lfpool_ts_put_bulk(sig.pool, objs, 8);
	errno = 0;
	sig.one = lfpool_ts_get(sig.pool);
	sig.one_errno = errno;
	if (sig.one)
		lfpool_ts_put(sig.pool, sig.one);
	lfpool_ts_put_bulk(sig.pool, sig.mine, 8);
	atomic_store(&sig.ran, true);
	errno = saved;
}

/* Every object the pool made, each once: a get of all of them works and
 * hands out no pointer twice. */
static void assert_all_distinct(lfpool_ts *p)
{
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	lfpool_ts_drain(p);
	size_t n = (size_t)st.created;
	void **objs = calloc(n, sizeof(void *));
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, n), 0);
	cr_assert(all_distinct(objs, n), "an object handed out twice");
	lfpool_ts_put_bulk(p, objs, n);
	free(objs);
}

/* The handler runs inside a put's slow path of the same thread. */
static void handler_in_put(unsigned flags)
{
	TEST_DEADLINE(DEADLINE);
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	cr_assert_eq(sigaction(SIGUSR1, &sa, &old), 0);
	lfpool_config cfg = { .obj_size = 32, .allocator = &raising_allocator, .flags = flags,
			      .magazine_size = MAG, .depot_max = OBJS / MAG, .prewarm = OBJS + 8,
			      .name = "S" };
	lfpool_ts *p = sig.pool = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	static void *objs[OBJS];
	cr_assert_eq(lfpool_ts_get_bulk(p, sig.mine, 8), 0);
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, OBJS), 0);
	atomic_store(&sig.armed, true);
	for (size_t i = 0; i < OBJS; i++)
		lfpool_ts_put(p, objs[i]);
	cr_assert(atomic_load(&sig.ran), "no magazine grew while the puts ran");
	/* The bulk get needs the slow path; the single one hits the full
	 * magazine that the put left open while its allocator runs (the
	 * cache's lock let go), or fails. */
	if (!(flags & LFPOOL_F_PERCPU)) {
		cr_assert_eq(sig.bulk_rc, -1);
		cr_assert_eq(sig.bulk_errno, EAGAIN);
		cr_assert(sig.one || sig.one_errno == EAGAIN);
	} else {
		cr_assert(sig.bulk_rc == 0 || sig.bulk_errno == EAGAIN);
	}
	assert_all_distinct(p);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	sigaction(SIGUSR1, &old, NULL);
	TEST_DEADLINE(0);
}

Test(nodeadlock, signal_handler_in_own_slow_path)
{
	handler_in_put(0);
}

Test(nodeadlock, signal_handler_in_own_slow_path_percpu)
{
	handler_in_put(LFPOOL_F_PERCPU);
}

/*
 * The async-signal-safe pair: only the depot's loose objects, never a
 * cache or a CPU area, never a new object.  EAGAIN when there is nothing
 * loose, or (get) when the handler interrupted a step holding a lock.
 */
static void signal_calls_errors(unsigned flags)
{
	lfpool_config cfg = { .obj_size = 32, .flags = flags, .name = "S" };
	lfpool_ts *p = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	errno = 0;
	cr_assert_null(lfpool_ts_get_signal(p));
	cr_assert_eq(errno, EAGAIN, "nothing loose: EAGAIN, not a new object");
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	cr_assert_eq(st.created, 0);
	cr_assert_eq(lfpool_ts_prewarm(p, 4), 0);
	void *objs[5];
	for (int i = 0; i < 4; i++)
		cr_assert_not_null(objs[i] = lfpool_ts_get_signal(p));
	cr_assert(all_distinct(objs, 4));
	errno = 0;
	cr_assert_null(lfpool_ts_get_signal(p));
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(lfpool_ts_put_signal(p, NULL), 0);
	cr_assert_eq(lfpool_ts_put_signal(p, objs[2]), 0);
	cr_assert_eq(lfpool_ts_get_signal(p), objs[2], "the put went to the loose stack");
	/* A plain get and put of the same thread see the same objects. */
	cr_assert_eq(lfpool_ts_put_signal(p, objs[3]), 0);
	cr_assert_eq(lfpool_ts_get(p), objs[3]);
	lfpool_ts_stats(p, &st);
	cr_assert_eq(st.live, 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(lfpool_ts_put_signal(p, objs[i]), 0);
	lfpool_ts_stats(p, &st);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}

Test(nodeadlock, signal_calls_errors)
{
	signal_calls_errors(0);
}

Test(nodeadlock, signal_calls_errors_percpu)
{
	signal_calls_errors(LFPOOL_F_PERCPU);
}

Test(nodeadlock, signal_calls_errors_debug)
{
	signal_calls_errors(LFPOOL_F_DEBUG);
}

/* From a fini hook during destroy the pool is closing: EINVAL. */
static lfpool_ts *closing;
static int closing_get_errno, closing_put_rc, closing_put_errno;

static void fini_calls_signal(void *obj, void *ctx)
{
	(void)obj;
	(void)ctx;
	errno = 0;
	if (!lfpool_ts_get_signal(closing))
		closing_get_errno = errno;
	errno = 0;
	closing_put_rc = lfpool_ts_put_signal(closing, obj);
	closing_put_errno = errno;
}

Test(nodeadlock, signal_calls_on_a_closing_pool)
{
	lfpool_config cfg = { .obj_size = 32, .fini = fini_calls_signal, .name = "S" };
	closing = lfpool_ts_create(&cfg);
	cr_assert_not_null(closing);
	cr_assert_eq(lfpool_ts_prewarm(closing, 2), 0);
	cr_assert_eq(lfpool_ts_destroy(closing), 0);
	cr_assert_eq(closing_get_errno, EINVAL);
	cr_assert_eq(closing_put_rc, -1);
	cr_assert_eq(closing_put_errno, EINVAL);
}

/* A handler that interrupts its own thread's put slow path (raising_alloc,
 * above) with the signal calls: the get fails with EAGAIN (the thread is
 * inside a grace section), the put goes loose. */
static struct {
	void *got, *mine;
	int got_errno, put_rc;
} sigsafe;

static void on_usr1_signal_calls(int signo)
{
	(void)signo;
	int saved = errno;
	errno = 0;
	sigsafe.got = lfpool_ts_get_signal(sig.pool);
	sigsafe.got_errno = errno;
	sigsafe.put_rc = lfpool_ts_put_signal(sig.pool, sigsafe.mine);
	atomic_store(&sig.ran, true);
	errno = saved;
}

static void signal_calls_in_slow_path(unsigned flags)
{
	TEST_DEADLINE(DEADLINE);
	struct sigaction sa = { .sa_handler = on_usr1_signal_calls }, old;
	cr_assert_eq(sigaction(SIGUSR1, &sa, &old), 0);
	atomic_store(&sig.ran, false);
	lfpool_config cfg = { .obj_size = 32, .allocator = &raising_allocator, .flags = flags,
			      .magazine_size = MAG, .depot_max = OBJS / MAG, .prewarm = OBJS + 8,
			      .name = "S" };
	lfpool_ts *p = sig.pool = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	static void *objs[OBJS];
	cr_assert_not_null(sigsafe.mine = lfpool_ts_get(p));
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, OBJS), 0);
	atomic_store(&sig.armed, true);
	for (size_t i = 0; i < OBJS; i++)
		lfpool_ts_put(p, objs[i]);
	cr_assert(atomic_load(&sig.ran), "no magazine grew while the puts ran");
	cr_assert_eq(sigsafe.put_rc, 0);
	if (sigsafe.got)
		lfpool_ts_put(p, sigsafe.got);
	else
		cr_assert_eq(sigsafe.got_errno, EAGAIN);
	assert_all_distinct(p);
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	sigaction(SIGUSR1, &old, NULL);
	TEST_DEADLINE(0);
}

Test(nodeadlock, signal_calls_in_own_slow_path)
{
	signal_calls_in_slow_path(0);
}

Test(nodeadlock, signal_calls_in_own_slow_path_percpu)
{
	signal_calls_in_slow_path(LFPOOL_F_PERCPU);
}

/*
 * A per-thread put that needs a new magazine may grow the magazines' slabs
 * through the backing allocator: it does so with its cache's lock let go,
 * so a drain (a thief of that cache) from another thread waits for no
 * allocator.  Thread A puts 32 magazines' worth (each needs a spare empty
 * magazine: the depot's go full; more than the first slab of magazines
 * holds, 16 of 4 pointers) while the allocator, armed after the
 * objects were made, blocks in the first growth of the magazines' slabs;
 * the main thread then drains, and must return before A is let go.
 */
#define PUT_MAG 4
#define PUT_OBJS (32 * PUT_MAG)

static void *put_all(void *p)
{
	void *objs[PUT_OBJS];
	cr_assert_eq(lfpool_ts_get_bulk(p, objs, PUT_OBJS), 0);
	atomic_store(&blocking.armed, true);
	for (size_t i = 0; i < PUT_OBJS; i++)
		lfpool_ts_put(p, objs[i]);
	return NULL;
}

static void *drain_it(void *p)
{
	lfpool_ts_drain(p);
	atomic_store(&finished, true);
	return NULL;
}

Test(nodeadlock, drain_waits_for_no_allocator_of_a_put)
{
	TEST_DEADLINE(DEADLINE);
	sem_init(&blocking.entered, 0, 0);
	sem_init(&blocking.go, 0, 0);
	atomic_store(&blocking.armed, false);
	atomic_store(&finished, false);
	lfpool_config cfg = { .obj_size = 32, .allocator = &blocking_allocator,
			      .magazine_size = PUT_MAG, .depot_max = 64, .name = "A" };
	lfpool_ts *p = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	pthread_t a, d;
	cr_assert_eq(pthread_create(&a, NULL, put_all, p), 0);
	sem_wait(&blocking.entered);	/* A is in the allocator */
	cr_assert_eq(pthread_create(&d, NULL, drain_it, p), 0);
	/* A drain that waits for A's cache lock never finishes: the deadline
	 * (SIGALRM) ends the test. */
	while (!atomic_load(&finished))
		nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
	sem_post(&blocking.go);
	cr_assert_eq(pthread_join(a, NULL), 0);
	cr_assert_eq(pthread_join(d, NULL), 0);
	assert_all_distinct(p);
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	TEST_DEADLINE(0);
}

/*
 * A trim of a pool with no fini hook gives its objects' slabs back holding
 * the pool's steal lock (lfpool/ts.h, "Sizing"), so that a get at capacity
 * meanwhile never fails with ENOBUFS: it waits, in its steal, for that
 * trim's frees (the backing allocator's free, here one that blocks), then
 * finds their room.  Negative control: the same pool with a fini hook,
 * whose trim finalizes holding no lock, fails that get with ENOBUFS at
 * once (the hooks' case in the table).
 */
#define TRIM_CAP 16

static struct {
	atomic_bool armed, got_done;
	sem_t entered, go;
	void *got;
	int got_errno;
} slowfree;

static void blocking_free_once(void *ptr, size_t size, void *ctx)
{
	if (atomic_exchange(&slowfree.armed, false)) {
		sem_post(&slowfree.entered);
		sem_wait(&slowfree.go);
	}
	blocking_free(ptr, size, ctx);
}

static const lfpool_allocator slow_free_allocator = { blocking_alloc, blocking_free_once, NULL };

static void *trim_all(void *p)
{
	lfpool_ts_trim(p, 0);
	return NULL;
}

static void *get_at_capacity(void *p)
{
	errno = 0;
	slowfree.got = lfpool_ts_get(p);
	slowfree.got_errno = errno;
	atomic_store(&slowfree.got_done, true);
	return NULL;
}

static void nothing(void *obj, void *ctx)
{
	(void)obj;
	(void)ctx;
}

/* A trim of a full depot whose free blocks, and a get at capacity then. */
static void get_during_trim_free(lfpool_hook_fn fini, bool *waited)
{
	TEST_DEADLINE(DEADLINE);
	sem_init(&slowfree.entered, 0, 0);
	sem_init(&slowfree.go, 0, 0);
	atomic_store(&slowfree.got_done, false);
	lfpool_config cfg = { .obj_size = 64, .capacity = TRIM_CAP, .prewarm = TRIM_CAP,
			      .fini = fini, .allocator = &slow_free_allocator, .name = "T" };
	lfpool_ts *p = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	atomic_store(&slowfree.armed, true);
	pthread_t t, g;
	cr_assert_eq(pthread_create(&t, NULL, trim_all, p), 0);
	sem_wait(&slowfree.entered);	/* the trim frees a slab */
	cr_assert_eq(pthread_create(&g, NULL, get_at_capacity, p), 0);
	/* Give the get time to finish if it does not wait (it passes either
	 * way when it has not reached its steal yet). */
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	*waited = !atomic_load(&slowfree.got_done);
	sem_post(&slowfree.go);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(pthread_join(g, NULL), 0);
	lfpool_ts_put(p, slowfree.got);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	TEST_DEADLINE(0);
}

Test(nodeadlock, get_at_capacity_waits_for_a_trims_frees)
{
	bool waited;
	get_during_trim_free(NULL, &waited);
	cr_assert_not_null(slowfree.got, "a get at capacity failed (errno %d) while a trim freed",
			   slowfree.got_errno);
	cr_assert(waited, "the get returned while the trim's free blocked");
}

Test(nodeadlock, get_at_capacity_fails_while_a_trim_finalizes)
{
	bool waited;
	get_during_trim_free(nothing, &waited);
	cr_assert_null(slowfree.got);
	cr_assert_eq(slowfree.got_errno, ENOBUFS);
	cr_assert_not(waited);
}
