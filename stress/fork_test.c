/* SPDX-License-Identifier: MIT */
/*
 * fork_test.c - fork() while other threads use the pool: the child may use
 * every pool it inherited.
 *
 * For each flavour and mode (Pool, Concurrent, ThreadStatic per thread,
 * with worker slots, per CPU), four threads get, put, trim and take stats
 * without pause (ThreadStatic threads also make and drop explicit caches,
 * which takes the library's lock) while the main thread forks FORKS times.
 * Each child gets and puts through the pool, checks that no object is
 * handed out twice, prewarms, trims, starts a thread of its own that does
 * the same (not under TSan: CHILD_THREAD), destroys the pool and exits.  A child that has not finished
 * within CHILD_SECONDS is killed and counted as hung: the test fails, it
 * does not hang.  Nor does the parent: a watchdog thread ends the process
 * with a message naming the step (a fork() that does not return: a
 * deadlock in the library's prepare handler) when the main thread makes no
 * step for WATCHDOG_SECONDS.  The whole run is then made again with
 * GLIBC_TUNABLES=glibc.pthread.rseq=0 (the program re-executes itself), so
 * that per-CPU pools take the sched_getcpu fallback with its spinlocks.
 *
 * Exit status 0 when every child of every pass finished cleanly; the last
 * line counts the (pass, mode) runs: "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lfpool.h"
#include "lfpool/ts.h"
#ifdef LFPOOL_DEBUG
# include "census.h"	/* built with the library's sources (local.mk) */
#endif

#define THREADS 4
/* ThreadSanitizer cannot follow a thread started in the child of a
 * multi-threaded fork (it reports "dup thread with used id": the new
 * thread reuses the descriptor of a parent's thread that it still counts
 * as alive), so in the TSan build the child uses the pool from its one
 * thread only; the parent's side is checked as everywhere. */
#if defined(__SANITIZE_THREAD__)
# define CHILD_THREAD 0
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define CHILD_THREAD 0
# endif
#endif
#ifndef CHILD_THREAD
# define CHILD_THREAD 1
#endif
/* AddressSanitizer's allocator (GCC 12's libasan) takes no lock across
 * fork: a child forked while a parent's thread was in malloc hangs in its
 * first malloc (seen: lfpool_pool_get -> posix_memalign -> asan's
 * SizeClassAllocator64::GetFromAllocator, in Pool mode too).  So in the
 * ASan build the threads park, outside any call, for each fork: there the
 * test checks what the child does with the state it inherits; the release
 * build checks forks that interrupt the library anywhere.  The TSan build
 * parks too: GCC 12's libtsan runs every 16-byte CAS under one spin lock
 * of its own (mutex128 in func_cas), not taken across fork, and a child
 * forked while a parent's thread held it spun forever in its first pop
 * (seen in Concurrent mode: 2 children in 2,000). */
#if defined(__SANITIZE_ADDRESS__) || !CHILD_THREAD
# define PARK_FOR_FORK 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define PARK_FOR_FORK 1
# endif
#endif
#ifndef PARK_FOR_FORK
# define PARK_FOR_FORK 0
#endif
#define CHILD_SECONDS 10
/* Far above any step's time on a loaded machine under a sanitizer (a
 * fork() takes milliseconds, a child at most CHILD_SECONDS): only a hang
 * trips it. */
#define WATCHDOG_SECONDS 120
#define OBJ 48
#define HELD 16
#define CHILD_OBJS 64

enum mode { M_POOL, M_CONCURRENT, M_TS, M_TS_WORKER, M_TS_PERCPU, M_COUNT };
static const char *const mode_name[M_COUNT] = { "pool", "concurrent", "ts", "ts-worker",
						"ts-percpu" };

static enum mode mode;
static void *shared;			/* the pool every thread uses (not for Pool) */
static lfpool_pool *own[THREADS + 1];	/* Pool: one per thread, [THREADS] main's */
static volatile int stop;
static int park_req, parked;	/* PARK_FOR_FORK's handshake */

/* A worker between two calls: park while a fork is asked for. */
static void park_point(void)
{
	if (!PARK_FOR_FORK || !__atomic_load_n(&park_req, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_add(&parked, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&park_req, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_fetch_sub(&parked, 1, __ATOMIC_ACQ_REL);
}

/* The main thread, before a fork: every worker parked (PARK_FOR_FORK). */
static void park_all(bool on)
{
	if (!PARK_FOR_FORK)
		return;
	__atomic_store_n(&park_req, on, __ATOMIC_RELEASE);
	while (on && __atomic_load_n(&parked, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
}

/* What the main thread is doing, for the watchdog: the step, its mode,
 * and how many steps it made (written by the main thread only). */
static const char *step = "starting";
static int step_mode;
static unsigned long steps;
static const char *pass_name = "default";
static const char waiting_pass[] = "waiting for the fallback pass";
#define WATCHDOG_EXIT 100	/* above any count of failed modes */

static void step_to(const char *what)
{
	__atomic_store_n(&step, what, __ATOMIC_RELAXED);
	__atomic_store_n(&step_mode, (int)mode, __ATOMIC_RELAXED);
	__atomic_fetch_add(&steps, 1, __ATOMIC_RELEASE);
}

/* Ends the process when the main thread has made no step for
 * WATCHDOG_SECONDS.  write(2) only: the hung thread may hold stdio locks. */
static void *watchdog(void *arg)
{
	(void)arg;
	unsigned long seen = (unsigned long)-1;
	for (int idle = 0;; idle++) {
		unsigned long now = __atomic_load_n(&steps, __ATOMIC_ACQUIRE);
		const char *what = __atomic_load_n(&step, __ATOMIC_RELAXED);
		/* The fallback pass has a watchdog of its own. */
		if (now != seen || what == waiting_pass) {
			seen = now;
			idle = 0;
		} else if (idle >= WATCHDOG_SECONDS) {
			char msg[256];
			int n = snprintf(msg, sizeof(msg),
					 "lffork: FAIL: %s pass, mode %s: no progress for %d s while "
					 "'%s' (a hang in the parent: the test stops here)\n",
					 pass_name, mode_name[__atomic_load_n(&step_mode, __ATOMIC_RELAXED)],
					 WATCHDOG_SECONDS, what);
			if (write(2, msg, n > 0 && n < (int)sizeof(msg) ? (size_t)n : 0) < 0)
				_exit(WATCHDOG_EXIT);
			_exit(WATCHDOG_EXIT);
		}
		sleep(1);
	}
	return NULL;
}

/* A Pool has one user at a time: the child's thread uses main's, which
 * waits for it. */
static lfpool_pool *pool_of(int who)
{
	return own[who > THREADS ? THREADS : who];
}

/* get and put through the pool as thread `who` uses it. */
static void *get_as(int who)
{
	switch (mode) {
	case M_POOL:
		return lfpool_pool_get(pool_of(who));
	case M_CONCURRENT:
		return lfpool_concurrent_get(shared);
	case M_TS_WORKER:
		return lfpool_ts_cache_get(lfpool_ts_worker_cache(shared, (unsigned)who));
	default:
		return lfpool_ts_get(shared);
	}
}

static void put_as(int who, void *obj)
{
	switch (mode) {
	case M_POOL:
		lfpool_pool_put(pool_of(who), obj);
		break;
	case M_CONCURRENT:
		lfpool_concurrent_put(shared, obj);
		break;
	case M_TS_WORKER:
		lfpool_ts_cache_put(lfpool_ts_worker_cache(shared, (unsigned)who), obj);
		break;
	default:
		lfpool_ts_put(shared, obj);
	}
}

static lfpool_config config(enum mode m)
{
	return (lfpool_config){ .obj_size = OBJ, .magazine_size = 8, .depot_max = 4,
				.flags = m == M_TS_PERCPU ? LFPOOL_F_PERCPU : 0, .name = "fork" };
}

/* The calls that take locks: trim, stats, and for ThreadStatic an explicit
 * cache made and dropped (lfp_ts_lock, grow locks). */
static void rare_calls(int who)
{
	lfpool_stats st;
	switch (mode) {
	case M_POOL:
		lfpool_pool_trim(pool_of(who), 4);
		lfpool_pool_stats(pool_of(who), &st);
		break;
	case M_CONCURRENT:
		lfpool_concurrent_trim(shared, 4);
		lfpool_concurrent_stats(shared, &st);
		break;
	default: {
		lfpool_ts_trim(shared, 0);
		lfpool_ts_stats(shared, &st);
		lfpool_ts_cache *c = lfpool_ts_cache_create(shared);
		if (c) {
			lfpool_ts_cache_put(c, lfpool_ts_cache_get(c));
			lfpool_ts_cache_destroy(c);
		}
	}
	}
}

static void *worker(void *arg)
{
	int who = (int)(intptr_t)arg;
	if (mode == M_POOL)
		own[who] = lfpool_pool_create(&(lfpool_config){ .obj_size = OBJ });
	void *held[HELD];
	unsigned n = 0;
	uint64_t seed = (uint64_t)who * 7919 + 1;
	for (uint64_t i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		park_point();
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if (n < HELD && (seed >> 40) % 2) {
			void *o = get_as(who);
			if (o) {
				memset(o, who, OBJ);
				held[n++] = o;
			}
		} else if (n) {
			put_as(who, held[--n]);
		}
		if (i % 256 == 0)
			rare_calls(who);
		if (i % 64 == 0)
			sched_yield();	/* let the children run on a small machine */
	}
	while (n)
		put_as(who, held[--n]);
	if (mode == M_TS)
		lfpool_ts_detach(shared);
	return NULL;
}

/* What a child does with the pool it inherited; 0 when all went well. */
static int use_in_child(int who)
{
	void *objs[CHILD_OBJS];
	int n = 0;
	for (; n < CHILD_OBJS; n++) {
		objs[n] = get_as(who);
		if (!objs[n])
			return 10;
		memset(objs[n], 0xc0 + n, OBJ);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < OBJ; j++)
			if (((unsigned char *)objs[i])[j] != (unsigned char)(0xc0 + i))
				return 11;	/* handed out twice */
	while (n)
		put_as(who, objs[--n]);
	rare_calls(who);
	return 0;
}

static void *child_thread(void *arg)
{
	/* A thread of the child: a new implicit cache, a free worker slot. */
	return (void *)(intptr_t)use_in_child((int)(intptr_t)arg);
}

static int child_main(void)
{
	int rc = use_in_child(THREADS);
	if (rc)
		return rc;
	pthread_t t;
	void *res;
	if (CHILD_THREAD &&
	    pthread_create(&t, NULL, child_thread, (void *)(intptr_t)(THREADS + 1)) != 0)
		return 20;
	if (CHILD_THREAD && pthread_join(t, &res) == 0 && res)
		return (int)(intptr_t)res;
	/* Destroy what it may: its own Pool, or the shared pool unless worker
	 * slots of the parent's threads may be half-way through a step. */
	switch (mode) {
	case M_POOL:
		lfpool_pool_destroy(own[THREADS]);
		break;
	case M_CONCURRENT:
		lfpool_concurrent_destroy(shared);
		break;
	case M_TS_WORKER:
		break;
	default:
		/* EBUSY: an explicit cache a parent thread held at the fork
		 * lives on in the child, where no one can destroy it
		 * (documented in lfpool/ts.h). */
		if (lfpool_ts_destroy(shared) != 0 && errno != EBUSY)
			return 30;
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Wait for pid up to CHILD_SECONDS: its exit status, or -1 once killed.
 * LFFORK_HANG_CMD, when set, is run with the hung child's pid appended
 * before it is killed (e.g. "gdb -batch -ex 'thread apply all bt' -p"). */
static int wait_child(pid_t pid)
{
	struct timespec nap = { 0, 1000000 };
	for (long waited = 0; waited < CHILD_SECONDS * 1000L; waited++) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		nanosleep(&nap, NULL);
	}
	const char *hang_cmd = getenv("LFFORK_HANG_CMD");
	if (hang_cmd) {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "%s %d >&2", hang_cmd, (int)pid);
		if (system(cmd) != 0)
			fprintf(stderr, "lffork: LFFORK_HANG_CMD failed\n");
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void create_shared(void)
{
	lfpool_config c = config(mode);
	if (mode == M_CONCURRENT)
		shared = lfpool_concurrent_create(&c);
	else if (mode != M_POOL)
		shared = lfpool_ts_create(&c);
	if (mode == M_POOL)
		own[THREADS] = lfpool_pool_create(&c);
	if (mode == M_POOL ? !own[THREADS] : !shared) {
		perror("create");
		exit(2);
	}
}

static void destroy_shared(void)
{
	if (mode == M_POOL) {
		for (int i = 0; i <= THREADS; i++)
			lfpool_pool_destroy(own[i]);
	} else if (mode == M_CONCURRENT) {
		lfpool_concurrent_destroy(shared);
	} else {
		for (unsigned w = 0; w < THREADS; w++)
			lfpool_ts_worker_release(shared, w);
		lfpool_ts_destroy(shared);
	}
}

/*
 * --enable-debug builds: after the threads joined, every object of the
 * parent's pools (each Pool, or the shared pool) is in exactly one place
 * (lib/census.h): forks and their handlers lost or doubled none.  1 when
 * validate found a problem (said), else 0; always 0 in other builds,
 * whose library hides validate.
 */
static int validate_parent(void)
{
#ifdef LFPOOL_DEBUG
	char why[256];
	int rc = 0;
	if (mode == M_POOL) {
		for (int i = 0; rc == 0 && i <= THREADS; i++)
			rc = own[i] ? lfp_pool_validate(own[i], why, sizeof(why)) : 0;
	} else if (mode == M_CONCURRENT) {
		rc = lfp_concurrent_validate(shared, why, sizeof(why));
	} else {
		rc = lfp_ts_validate(shared, why, sizeof(why));
	}
	if (rc != 0)
		printf("  %s: validate after the forks: %s\n", mode_name[mode], why);
	return rc != 0;
#else
	return 0;
#endif
}

/* One mode: forks children while the threads run; how many failed. */
static int run_mode(enum mode m, int forks, const char *pass)
{
	mode = m;
	stop = 0;
	memset(own, 0, sizeof(own));
	create_shared();
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	int hung = 0, failed = 0;
	double slowest = 0;	/* information only: how long prepare waited */
	for (int i = 0; i < forks; i++) {
		fflush(NULL);
		if (PARK_FOR_FORK)
			step_to("waiting for the threads to park");
		park_all(true);
		step_to("in fork(): prepare handler, or parent handler");
		double t0 = now_ms();
		pid_t pid = fork();
		if (pid == 0)
			_exit(child_main());
		double took = now_ms() - t0;
		park_all(false);
		slowest = took > slowest ? took : slowest;
		step_to("waiting for a child");
		if (pid < 0) {
			perror("fork");
			failed++;
			continue;
		}
		int rc = wait_child(pid);
		if (rc < 0)
			hung++;
		else if (rc)
			failed++;
		if (rc && failed + hung <= 3)
			printf("  %s %s: child %d %s %d\n", pass, mode_name[m], i,
			       rc < 0 ? "hung; killed after" : "exit status", rc < 0 ? CHILD_SECONDS : rc);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	step_to("joining the threads");
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	step_to("validating the pool");
	failed += validate_parent();
	step_to("destroying the pool");
	const char *pm = "";
	if (m == M_TS_PERCPU) {
		lfpool_stats st;
		lfpool_ts_stats(shared, &st);
		pm = st.percpu_mode;
		if (strcmp(pass, "fallback") == 0 && strcmp(pm, "sched_getcpu") != 0) {
			printf("  fallback pass runs per-CPU mode '%s'\n", pm);
			failed++;
		}
	}
	destroy_shared();
	printf("[%s %s%s%s] %d forks: %d finished, %d failed, %d hung (slowest fork() %.0f ms)\n",
	       pass, mode_name[m], *pm ? " " : "", pm, forks, forks - failed - hung, failed, hung,
	       slowest);
	return failed + hung;
}

/*
 * The process's first ThreadStatic pool, made on one thread while the
 * main thread forks (a Pool made first installed the fork handlers): its
 * create installs ThreadStatic's handlers into fork.c while a fork may be
 * between its prepare and its parent or child handler.  Each of those
 * must run the upper layer's handler only if that fork's prepare ran it
 * (else the parent releases ThreadStatic's locks that it never took,
 * perhaps while the creating thread holds one); ThreadSanitizer reports
 * the unordered reads of the handlers otherwise.  Returns 0, or 1 when a
 * child did not exit cleanly.
 */
static volatile int first_ts_done;

static void *first_ts(void *arg)
{
	(void)arg;
	lfpool_config c = config(M_TS);
	lfpool_ts *p = lfpool_ts_create(&c);
	if (p) {
		lfpool_ts_put(p, lfpool_ts_get(p));
		lfpool_ts_destroy(p);
	}
	__atomic_store_n(&first_ts_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int forks_during_first_ts_create(void)
{
	step_to("forks while the first ThreadStatic pool is made");
	lfpool_config c = config(M_POOL);
	lfpool_pool_destroy(lfpool_pool_create(&c));	/* installs fork.c's handlers */
	pthread_t th;
	if (pthread_create(&th, NULL, first_ts, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	int bad = 0;
	do {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		bad |= pid < 0 || wait_child(pid) != 0;
	} while (!__atomic_load_n(&first_ts_done, __ATOMIC_ACQUIRE));
	pthread_join(th, NULL);
	if (bad)
		printf("  %s: forks while the first ThreadStatic pool is made: a child failed\n",
		       pass_name);
	return bad;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 100;
	const char *pass = getenv("LFFORK_PASS") ? getenv("LFFORK_PASS") : "default";
	pass_name = pass;
	pthread_t wd;
	if (pthread_create(&wd, NULL, watchdog, NULL) != 0) {
		perror("pthread_create");
		return 2;
	}
	int bad = forks_during_first_ts_create(), runs = M_COUNT;
	for (enum mode m = 0; m < M_COUNT; m++)
		bad += run_mode(m, forks, pass) != 0;
	if (strcmp(pass, "default") == 0) {
		/* Again with glibc's rseq registration off: the fallback path. */
		fflush(NULL);
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		setenv("LFFORK_PASS", "fallback", 1);
		pid_t pid = fork();
		if (pid == 0) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		/* The pass has its own watchdog: wait as long as it runs. */
		step_to(waiting_pass);
		int st;
		runs += M_COUNT;
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			perror("fallback pass");
			bad += M_COUNT;
		} else if (WIFEXITED(st) && WEXITSTATUS(st) <= M_COUNT) {
			bad += WEXITSTATUS(st);
		} else {
			printf("  fallback pass: %s %d\n", WIFEXITED(st) ? "exit status" : "signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			bad += M_COUNT;
		}
		printf("%s\n%d passed, %d failed\n", bad ? "FAIL" : "PASS", runs - bad, bad);
	}
	/* The fallback pass tells how many modes failed. */
	return strcmp(pass, "default") != 0 ? bad : bad ? 1 : 0;
}
