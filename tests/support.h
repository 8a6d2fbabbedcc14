/* SPDX-License-Identifier: MIT */
/*
 * support.h - what every unit test shares: a counting, fault-injecting
 * backing allocator (and one that records its peak), hook counters, a
 * recording error hook, one table that drives Pool and Concurrent through
 * the same calls, and for the ThreadStatic tests a config maker and thread
 * runners.
 *
 * Criterion's assertions must run on the test's own thread, so threads
 * started here record what they saw and the test asserts after joining.
 */
#ifndef LFPOOL_TEST_SUPPORT_H
#define LFPOOL_TEST_SUPPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <lfpool.h>

#include "build.h"

/*
 * A backing allocator that counts what it hands out and checks what comes
 * back (the same pointer, the same size, alignment as asked).  fail_after
 * lets that many more allocations succeed, then fails every one until it is
 * set back to -1.  Safe to share between threads.
 */
struct test_alloc {
	lfpool_allocator a;	/* pass &t->a as lfpool_config.allocator */
	pthread_mutex_t lock;
	long fail_after;	/* -1: never fail */
	long allocs, frees, failed;
	long live;		/* blocks out now */
	size_t live_bytes;
	long bad_frees;		/* unknown pointer or wrong size */
	long misaligned;	/* blocks not aligned as asked */
	struct test_block *blocks;
	size_t nblocks, cap;
};

/* Set t up; every allocation succeeds until fail_after is set. */
void test_alloc_init(struct test_alloc *t);
/* Free what t still tracks (blocks a pool leaked) and its own table. */
void test_alloc_fini(struct test_alloc *t);
/* Assert that every block came back, with its size, and was aligned as
 * asked; then test_alloc_fini. */
void test_alloc_finish(struct test_alloc *t);
/* Let n more allocations succeed, then fail all (-1: never fail). */
void test_alloc_fail_after(struct test_alloc *t, long n);
/* Blocks out now (taken under the lock, for threaded tests). */
long test_alloc_live(struct test_alloc *t);

/*
 * Hook counters: pass a struct hooks as hook_ctx with the hook_* functions.
 * init writes HOOK_INIT_BYTE over the whole object, so that a test can see
 * the state init set up; reset and fini only count.  Counts are atomic.
 */
#define HOOK_INIT_BYTE 0x5a
struct hooks {
	size_t obj_size;
	long init, reset, fini;
};
void hook_init(void *obj, void *ctx);
void hook_reset(void *obj, void *ctx);
void hook_fini(void *obj, void *ctx);
/* A config with obj_size and align set, the counting hooks on h. */
lfpool_config hooked_config(struct hooks *h, size_t obj_size, size_t align);
/* hooked_config, with t set up as the backing allocator. */
lfpool_config counted_config(struct test_alloc *t, struct hooks *h, size_t obj_size, size_t align);
/* Read a counter of h (atomically). */
long hook_count(const long *counter);

/* What the recording error hook saw. */
struct error_log {
	int calls;
	char pool[64];
	const void *ptr;
	char problem[160];
};
/* Install a hook that records into log instead of aborting. */
void record_errors(struct error_log *log);

/* Pool and Concurrent behind one set of calls. */
enum flavour { FL_POOL, FL_CONCURRENT, FL_COUNT };
struct flavour_ops {
	const char *name;
	void *(*create)(const lfpool_config *cfg);
	void (*destroy)(void *pool);
	void *(*get)(void *pool);
	void (*put)(void *pool, void *obj);
	int (*prewarm)(void *pool, size_t n);
	size_t (*trim)(void *pool, size_t keep);
	int (*owns)(const void *pool, const void *ptr);
	void (*stats)(const void *pool, lfpool_stats *st);
};
extern const struct flavour_ops flavours[FL_COUNT];

/*
 * A Criterion test run once per flavour (each reported on its own), with
 * `ops` pointing at that flavour's calls; Criterion's test options may follow:
 *	FLAVOUR_TEST(suite, name) { void *pool = ops->create(&cfg); ... }
 */
#define FLAVOUR_TEST(suite, name, ...) \
	ParameterizedTestParameters(suite, name) \
	{ \
		static enum flavour fl[] = { FL_POOL, FL_CONCURRENT }; \
		return cr_make_param_array(enum flavour, fl, FL_COUNT); \
	} \
	static void suite##_##name##_body(const struct flavour_ops *ops); \
	ParameterizedTest(enum flavour *fl, suite, name, ##__VA_ARGS__) \
	{ \
		suite##_##name##_body(&flavours[*fl]); \
	} \
	static void suite##_##name##_body(const struct flavour_ops *ops)

/* Fill buf with a pattern that depends on seed; check it. */
void fill_pattern(void *buf, size_t n, unsigned seed);
bool check_pattern(const void *buf, size_t n, unsigned seed);

/* ---- ThreadStatic ---- */

/* A config for obj_size-byte objects with the given magazine size and
 * depot bound, everything else 0. */
lfpool_config ts_config(size_t obj_size, unsigned magazine_size, unsigned depot_max);

/* The pool's statistics, by value. */
lfpool_stats stats_of(lfpool_ts *p);

/* Run fn(arg) on a new thread and wait for it. */
void run_on_thread(void *(*fn)(void *), void *arg);
/* Run fn(&args[i * size]) on n threads at once and wait for all. */
void run_threads(unsigned n, void *(*fn)(void *), void *args, size_t size);

/* A test_alloc that also keeps the most bytes it ever had out at once. */
struct peak_alloc {
	lfpool_allocator a;	/* pass &p->a as lfpool_config.allocator */
	struct test_alloc inner;
	size_t peak_bytes;	/* under inner.lock */
};
void peak_alloc_init(struct peak_alloc *p);
void peak_alloc_fini(struct peak_alloc *p);
size_t peak_alloc_live(struct peak_alloc *p);
size_t peak_alloc_peak(struct peak_alloc *p);

/* All n pointers distinct and non-NULL. */
bool all_distinct(void *const *objs, size_t n);

/*
 * A hook that parks its caller: passed as a pool's init or fini hook with a
 * struct parked_hook as hook_ctx, it holds the first thread that calls it
 * while armed until parked_hook_release, so that another thread may fork()
 * while the pool is half-way through a slow path (init) or a trim (fini).
 * Calls while not armed, or after the first, return at once.
 */
struct parked_hook {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed, parked, released;
};
void parked_hook_init(struct parked_hook *h);
void parked_hook_arm(struct parked_hook *h);
void parked_hook(void *obj, void *ctx);
/* Wait until a thread is parked in the hook. */
void parked_hook_wait(struct parked_hook *h);
void parked_hook_release(struct parked_hook *h);
void parked_hook_fini(struct parked_hook *h);

/* What a forked child does in the fork tests below: get(pool) until it
 * returns NULL, at most `most` times, and exit 0 when that NULL came with
 * ENOBUFS (1: another errno; 2: `most` gets all succeeded). */
struct gets_to_capacity {
	void *(*get)(void *pool);
	void *pool;
	int most;
};
/* Arm h, run fn(arg) on a new thread until it parks in h, fork() with the
 * child running gets_to_capacity(g) (under alarm(10)), then release and
 * join the thread: asserts that the child's gets ended with ENOBUFS (did
 * not hang); the thread's result. */
void *fork_while_parked(struct parked_hook *h, void *(*fn)(void *), void *arg,
			struct gets_to_capacity *g);

/*
 * A hook that forks (as init or fini, a struct forking_hook as hook_ctx):
 * the first call while armed forks, and both processes return from it and
 * go on with the step that ran the hook.  After that step,
 * forked_in_hook_finish: the child runs gets_to_capacity(g) under
 * alarm(10) and exits with its result; the parent asserts that the
 * child's gets ended with ENOBUFS (did not hang).
 */
struct forking_hook {
	bool armed, in_child;
	pid_t child;
};
void forking_hook(void *obj, void *ctx);
void forked_in_hook_finish(struct forking_hook *f, struct gets_to_capacity *g);

/* The fork tests' deadline: SIGALRM ends the test's process after seconds
 * (0: none), which Criterion reports as a crash.  Not Criterion's
 * .timeout: with two such tests in one run its runner leaks a timer's
 * block under ASan, and the leak gate fails the run. */
#define TEST_DEADLINE(seconds) alarm(seconds)

#endif
