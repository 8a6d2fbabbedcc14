/* SPDX-License-Identifier: MIT */
/*
 * stress.h - the stress harness: plain pthread programs (Criterion cannot
 * run under ThreadSanitizer), built with the library's sources compiled
 * in and lib/stress_hooks.h forced into every file, so that each atomic
 * step may yield, the stack's CAS window can be widened (lfp_stress_yield)
 * and its failed CAS counted.
 *
 * A scenario runs one flavour through rounds: a fresh pool, threads that
 * hammer it, then a census in which the main thread takes every object back
 * and checks that each exists exactly once and that every byte the backing
 * allocator handed out came back.  Workers check ownership on every object
 * they hold (an owner word swapped atomically, and a body pattern), so an
 * object handed to two threads at once is caught where it happens.
 */
#ifndef STRESS_H
#define STRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfpool.h"
#include "lfpool/ts.h"

#define STRESS_MAX_THREADS 64
#define STRESS_MAIN_TID 0xfffffffeu	/* the main thread as a worker */

/* Command line options. */
struct options {
	double seconds;		/* per scenario and flavour */
	unsigned threads;
	uint64_t seed;
	uint64_t min_ops;	/* fail unless gets + puts reach this in total */
	bool progress;		/* one-line progress display, on stderr */
};

/* What a scenario counts, per thread, summed at the end. */
struct tally {
	uint64_t gets, puts, remote_puts;
	uint64_t failed_gets;		/* expected failures: ENOBUFS, injected ENOMEM */
	uint64_t mag_exchanges, cas_retries;
	uint64_t eliminated;		/* Concurrent: gets and puts an exchange served */
	uint64_t created;		/* init hook calls */
	uint64_t lost, duplicated, cookie_errors;
	uint64_t trimmed;		/* objects trim reported destroyed */
	uint64_t injected;		/* allocator calls made to fail */
	uint64_t rounds;
};

/* ---- flavours: one adapter per way of using a pool ---------------------- */

/*
 * A handle is what a thread gets and puts through: the pool itself, or a
 * cache.  enter makes the calling thread's handle; leave gives it up (for
 * implicit per-thread caches, thread exit does that too: exit_flushes).
 */
struct flavour {
	const char *name;
	bool shared;		/* safe to use from many threads at once */
	bool exit_flushes;	/* a thread's cache returns when the thread exits */
	bool trim_keeps;	/* trim(keep) keeps exactly keep pooled objects */
	bool handle_is_pool;	/* put through the pool works after destroy */
	/* objects one thread's cache may hold while none is out with it */
	unsigned (*cache_slack)(const lfpool_config *cfg);
	/* the documented bound on backing memory with `caches` caches alive
	 * (bounded pools); NULL where none is documented */
	size_t (*max_bytes)(const void *pool, size_t caches);
	void *(*create)(const lfpool_config *cfg);
	int (*destroy)(void *pool);
	void *(*enter)(void *pool);
	void (*leave)(void *pool, void *h);
	void *(*get)(void *h);
	void (*put)(void *h, void *obj);
	int (*get_bulk)(void *h, void **objs, size_t n);
	void (*put_bulk)(void *h, void *const *objs, size_t n);
	void (*flush)(void *h);
	int (*prewarm)(void *pool, size_t n);
	size_t (*trim)(void *pool, size_t keep);
	int (*owns)(const void *pool, const void *ptr);
	void (*stats)(const void *pool, lfpool_stats *st);
	/* --enable-debug builds: every object of the quiet pool in exactly
	 * one place (lib/census.h), 0 or -1 with why; NULL otherwise */
	int (*validate)(const void *pool, char *why, size_t n);
};

/* The flavours' validate (flavours.c), as the table wants them; NULL
 * where the library is built without LFPOOL_DEBUG. */
#ifdef LFPOOL_DEBUG
int validate_pool(const void *pool, char *why, size_t n);
int validate_concurrent(const void *pool, char *why, size_t n);
int validate_ts(const void *pool, char *why, size_t n);
# define STRESS_VALIDATE(fn) fn
#else
# define STRESS_VALIDATE(fn) NULL
#endif

extern const struct flavour flavour_pool, flavour_concurrent;
extern const struct flavour flavour_ts, flavour_ts_cache, flavour_percpu;
/* Per-CPU pools: flush the area of every CPU the calling thread may run
 * on, from that CPU (flavour_percpu.c). */
void stress_flush_all_cpus(lfpool_ts *p);
/* Every flavour, NULL-terminated. */
extern const struct flavour *const all_flavours[];

/* ---- the backing allocator: counts, and fails on demand ----------------- */

struct stress_alloc {
	lfpool_allocator a;	/* what the pool is given; ctx is this struct */
	uint64_t calls, allocs, frees, failures;
	int64_t bytes;		/* allocated minus freed */
	int64_t peak;		/* the most bytes ever held */
	int64_t fail_from;	/* calls numbered from 0 at or after this fail; -1: none */
	unsigned fail_one_in;	/* also fail one call in this many (0: none) */
	struct stress_recycler *recycler;	/* NULL: posix_memalign and free */
};

/*
 * Blocks freed by the pools that share a recycler go to the next allocation
 * of the same size and alignment by any of them, as malloc reuses a block
 * at once, and free yields the CPU after it has taken the block: a slow
 * allocator, legal for a user to give, that makes a pool's use of memory it
 * has already given back (or its lookups of it) meet another pool's.  Each
 * pool's stress_alloc still counts its own allocations and frees.
 */
#define STRESS_RECYCLE_MAX 16
struct stress_recycler {
	pthread_mutex_t lock;
	unsigned n;
	struct { void *p; size_t size; } block[STRESS_RECYCLE_MAX];
	uint64_t reused;	/* allocations served with a recycled block */
};

/* A counting allocator that never fails until told to. */
void stress_alloc_init(struct stress_alloc *sa);
/* Whether every allocation was freed (with its size). */
bool stress_alloc_balanced(const struct stress_alloc *sa);
void stress_recycler_init(struct stress_recycler *rc);
/* sa (initialized) recycles through rc from now on. */
void stress_alloc_recycle(struct stress_alloc *sa, struct stress_recycler *rc);
/* Free the blocks rc still keeps. */
void stress_recycler_fini(struct stress_recycler *rc);

/* ---- a run: one scenario on one flavour ---------------------------------- */

struct run {
	const struct options *opt;
	const struct flavour *fl;
	const char *scenario;
	unsigned threads;	/* workers per round */
	unsigned index, total;	/* for the progress display */
	uint64_t rng;		/* seeded from --seed; seeds the threads */
	double start, deadline, failed_at, last_progress;
	struct tally t;
	int yield;		/* yield injection: 0 every other round, 1 always,
				 * -1 never (LFPOOL_YIELD in the environment: always) */
	int stop;		/* atomic: a failure was found, or time is up */
	int failures;		/* atomic */
	pthread_mutex_t lock;	/* first_error, t */
	char first_error[512];
};

/* Set r up for scenario sc on fl (NULL: none) and start its watchdog. */
void run_begin(struct run *r, const struct options *opt, const char *scenario,
	       const struct flavour *fl, unsigned threads);
/* Stop the watchdog, print the run's result line; whether it passed. */
bool run_end(struct run *r);
/* Record a failure (the first message is kept) and stop the run. */
void run_fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the run should end: failed, or past its deadline. */
bool run_over(struct run *r);
/* Add a tally into the run's. */
void run_add(struct run *r, const struct tally *t);
/* Refresh the progress line (when there is one). */
void run_progress(struct run *r);
/* The build: normal, tsan, asan, noaba, nosteal or hooklock (+debug). */
const char *variant_name(void);
/* Parse the command line into opt; exits on --help or a bad option. */
void parse_options(int argc, char **argv, struct options *opt, const char **only);
double now_seconds(void);

/* ---- a round: one pool instance ----------------------------------------- */

/* Yield injection's rate (lib/atomic.h) when a driver turns it on. */
#define STRESS_YIELD_ONE_IN 16

/* Hook context: counts and numbers the objects the pool makes. */
struct objctx {
	uint64_t inits, finis, next_id;	/* atomic */
};

struct round {
	struct run *run;
	void *pool;
	lfpool_config cfg;
	struct objctx objs;
	struct stress_alloc alloc;
	double until;		/* workers stop at this time */
};

struct worker {
	struct round *rd;
	unsigned tid;		/* owner word while held: never 0 */
	unsigned index;		/* 0-based among the round's workers */
	uint64_t rng;
	void *h;
	bool skip_leave;	/* end by thread exit alone (exit_flushes) */
	struct tally t;
	void *arg;		/* the scenario's shared state */
	void (*fn)(struct worker *w);
	pthread_t thread;
};

/* A config for stress objects (size, hooks, counting allocator). */
lfpool_config round_config(struct round *rd, size_t capacity, size_t prewarm);
/* Create the round's pool from cfg; false (failure recorded) if it cannot. */
bool round_open(struct round *rd, struct run *run, const lfpool_config *cfg);
/* Run n workers of fn (tids 1..n) on arg and join them, summing tallies. */
void round_workers(struct round *rd, unsigned n, void (*fn)(struct worker *), void *arg);
/* Run ws[0..n) (already set up) as threads and join them. */
void round_run_workers(struct round *rd, struct worker *ws, unsigned n,
		       void (*fn)(struct worker *));
/* The main thread as a worker of the round, with its own handle; false
 * (recorded) without one.  leave gives the handle up and adds the tally. */
bool round_enter_main(struct round *rd, struct worker *w);
void round_leave_main(struct round *rd, struct worker *w);
/* Census, destroy, allocator balance; every object must be back. */
void round_close(struct round *rd);
/* Stats of the round's pool checked against the hooks' counts, with
 * `outstanding` objects out with the harness; false once reported. */
bool round_check_counts(struct round *rd, uint64_t outstanding);
/* Objects created per thread handle beyond those in use (cache slack). */
unsigned round_slack(const struct round *rd);
/* Whether a worker should stop (checks the clock every few calls). */
bool worker_over(struct worker *w, uint64_t iteration);
uint64_t rng_next(uint64_t *s);
/* A uniform value in [0, n). */
uint32_t rng_below(uint64_t *s, uint32_t n);

/* ---- stress objects ------------------------------------------------------ */

#define OBJ_BODY 40

struct sobj {
	uint64_t owner;		/* 0 pooled; a tid while held; OBJ_* markers */
	uint64_t id;		/* from init: unique in its pool */
	uint64_t cookie;	/* the body's pattern */
	uint64_t getter;	/* tid of the thread that got it from the pool */
	unsigned char body[OBJ_BODY];
};

#define OBJ_IN_SLOT UINT64_C(0x51075107)	/* handed over through a slot */
#define OBJ_DEAD UINT64_C(0xdead0bec7)		/* fini ran */

void obj_init_hook(void *obj, void *ctx);
void obj_fini_hook(void *obj, void *ctx);
/* How many times fini ran on the calling thread. */
uint64_t obj_finis_here(void);
/* After a successful get: take ownership, check the body, stamp ours. */
bool obj_claim(struct worker *w, void *obj);
/* Before a put: check our stamp, give ownership up (counts remote puts). */
bool obj_release(struct worker *w, void *obj);
/* Hand a held object over through a shared slot, and take one from it. */
bool obj_pass(struct worker *w, void *obj);
bool obj_take(struct worker *w, void *obj);
/* Get through the worker's handle and claim; NULL on a failure: expected
 * (ENOBUFS or ENOMEM, as allowed) ones are counted, others recorded. */
void *worker_get(struct worker *w, bool enobufs_ok, bool enomem_ok);
/* Release and put through the worker's handle. */
void worker_put(struct worker *w, void *obj);
/* The same, n objects with one bulk call; false on failure (recorded
 * unless ENOBUFS and enobufs_ok). */
bool worker_get_bulk(struct worker *w, void **objs, size_t n, bool enobufs_ok);
void worker_put_bulk(struct worker *w, void **objs, size_t n);

/* ---- hand-over through shared slots ------------------------------------ */

/*
 * One round: `threads` workers run fn(arg), handing objects over through
 * slot[0..n).  Then: the pool created no more objects than can be in
 * flight (remote puts must not grow memory), gets = puts + objects left in
 * the slots (drained and put back), and the census.  False if no pool.
 */
bool slots_round(struct run *r, unsigned threads, void **slot, unsigned n,
		 void (*fn)(struct worker *), void *arg);
/* Take every object left in slot[0..n) (handed over with obj_pass) and put
 * it from the main thread; how many there were. */
uint64_t slots_drain(struct round *rd, void **slot, unsigned n);

/* ---- scenarios ------------------------------------------------------------ */

struct scenario {
	const char *name;
	bool needs_shared;	/* only for flavours used by many threads */
	bool per_flavour;	/* false: runs once, flavour "-" */
	unsigned min_threads;	/* for shared ones: at least this many */
	void (*run)(struct run *r);
};

extern const struct scenario sc_conservation, sc_ownership, sc_transfer,
	sc_prodcons, sc_churn, sc_aba, sc_trim, sc_faults, sc_faults_mt,
	sc_badinput, sc_random, sc_aba_replay, sc_elim_replay, sc_upto, sc_lookup_grow,
	sc_lookup_leaves,
	sc_signals, sc_signals_control, sc_signals_switch, sc_signals_locks, sc_hooks;
#ifdef LFPOOL_DEBUG
extern const struct scenario sc_validate;	/* --enable-debug builds only */
#endif

/* One round of trim under load: workers hold up to hold_max (at most 64)
 * objects of obj_size; fail_one_in makes the backing allocator fail
 * meanwhile (gets may then fail with ENOMEM). */
bool trim_round(struct run *r, size_t obj_size, unsigned hold_max, unsigned fail_one_in);
/* The ABA provocation loop, shared with the negative control. */
void aba_provoke(struct run *r);
/* The deterministic ABA replay on the bare stack: 0 when it behaved, else
 * the ABA_REPLAY_* steps that went wrong, with msg saying how (the first). */
#define ABA_REPLAY_STALE_CAS 1		/* a CAS from a stale snapshot succeeded */
#define ABA_REPLAY_DELAYED_POP 2	/* a delayed pop installed an in-use head */
#define ABA_REPLAY_TAG_WIDTH 4		/* a CAS stalled for up to 2^64 - 1 head changes
					 * succeeded */
int aba_replay(char *msg, size_t len);

#endif
