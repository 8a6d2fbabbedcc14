/* SPDX-License-Identifier: MIT */
/*
 * rc_array_stress.c - reference-counted objects, array pools and closures
 * handed between threads, for ThreadSanitizer and AddressSanitizer builds.
 *
 *   rc_array_stress [--seconds S] [--threads N] [--seed X] [--progress]
 *
 * Every scenario runs for S seconds (default 1) with N threads (default 4)
 * on the Concurrent and ThreadStatic flavours, in release and debug pools;
 * X (default 1) seeds the threads' random choices.  --progress is accepted
 * for the stress drivers' calling convention (stress/variants.sh) and does
 * nothing: this program prints one line per run.
 * Threads leave what they hold in shared slots (one atomic exchange) and
 * deal with what they find there, so most objects end on another thread
 * than the one that got them:
 *
 *   rc       an object goes out with 1 to 3 references, each left in a
 *            slot; whoever takes a reference checks the body and releases
 *            it.  Exactly one release per object must be the last, and the
 *            body must never change while a reference is held (a count
 *            that dropped too early shows as a changed body, or under TSan
 *            as a race with the object's next owner).
 *   array    buffers of random sizes, some above the largest class, carry
 *            their size and a pattern; the taker checks and puts them, with
 *            or without the size.  Every byte the allocator gave must come
 *            back at destroy.
 *   closure  closures whose capture names a checksum are invoked and
 *            released by the taker (ThreadStatic: from and into each
 *            thread's own explicit cache).  Each runs exactly once.
 *   handoff  array pools made and used by one thread and destroyed by
 *            another while the maker goes on with a shared array pool at
 *            the same entries of its thread table (ThreadStatic: the
 *            destroy clears the maker's array-home entries).  Every
 *            buffer comes back and every byte the allocator gave is
 *            freed, and once the destroy of the pool in the maker's array
 *            home returned, no entry of the maker's table names that
 *            pool's address, which calloc may hand to the maker's next
 *            pool (ThreadStatic release runs check this at least once).
 *
 * Prints one PASS/FAIL line per run and "N passed, N failed"; exits 1 on a
 * failure.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lfpool.h>

#include "stress.h"	/* the counting allocator of stress/alloc.c */
#include "census.h"	/* --enable-debug builds: every pool's validate */

#define SLOTS 64
#define MAX_THREADS 64
#define BODY 48
#define ARRAY_MAX 1024		/* largest class; requests go up to twice that */

struct rs_options {
	double seconds;
	unsigned threads;
	uint64_t seed;
};

/* ---- one run: a scenario on a flavour ---- */

struct rs_run {
	lfpool_flavour flavour;
	unsigned flags;
	void *pool;			/* the scenario's pool */
	void *slot[SLOTS];		/* atomic exchange only */
	double deadline;
	/* atomic tallies */
	uint64_t gets, lasts, errors, next_id;
	uint64_t home_checks;		/* handoff: destroyed homes checked */
	char first_error[160];
	pthread_mutex_t lock;
};

struct rs_worker {
	struct rs_run *r;
	uint64_t rng;
	void *cache;			/* closure scenario, ThreadStatic */
	struct handed *home;		/* handoff: the pool in the array home */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rs_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Record an error; what and the number n (an id, a size, errno) describe it. */
static void fail(struct rs_run *r, const char *what, uint64_t n)
{
	pthread_mutex_lock(&r->lock);
	if (r->errors++ == 0)
		snprintf(r->first_error, sizeof(r->first_error), "%s (%llu)", what,
			 (unsigned long long)n);
	pthread_mutex_unlock(&r->lock);
}

/* Leave p in a random slot; returns what was there. */
static void *swap_slot(struct rs_worker *w, void *p)
{
	return __atomic_exchange_n(&w->r->slot[rs_rng(&w->rng) % SLOTS], p, __ATOMIC_ACQ_REL);
}

static uint64_t new_id(struct rs_run *r)
{
	return __atomic_add_fetch(&r->next_id, 1, __ATOMIC_RELAXED);
}

static unsigned char pattern(uint64_t id, size_t i)
{
	return (unsigned char)(id * 131 + i * 7);
}

/* ---- rc ---- */

struct counted {
	uint64_t id;
	unsigned char body[BODY];
};

/* Check a reference taken from a slot and drop it. */
static void rc_drop(struct rs_run *r, struct counted *o)
{
	for (size_t i = 0; i < BODY; i++) {
		if (o->body[i] != pattern(o->id, i)) {
			fail(r, "rc: the body changed while a reference was held", o->id);
			break;
		}
	}
	if (lfpool_rc_release(o))
		__atomic_fetch_add(&r->lasts, 1, __ATOMIC_RELAXED);
}

static void rc_step(struct rs_worker *w)
{
	struct rs_run *r = w->r;
	struct counted *o = lfpool_rc_get(r->pool);
	if (!o) {
		fail(r, "rc: get failed", (uint64_t)errno);
		return;
	}
	__atomic_fetch_add(&r->gets, 1, __ATOMIC_RELAXED);
	o->id = new_id(r);
	for (size_t i = 0; i < BODY; i++)
		o->body[i] = pattern(o->id, i);
	unsigned refs = 1 + (unsigned)(rs_rng(&w->rng) % 3);
	for (unsigned i = 1; i < refs; i++)
		lfpool_rc_retain(o);
	for (unsigned i = 0; i < refs; i++) {
		struct counted *old = swap_slot(w, o);
		if (old)
			rc_drop(r, old);
	}
}

static bool rc_open(struct rs_run *r)
{
	lfpool_config c = { .obj_size = sizeof(struct counted), .flags = r->flags, .name = "rc" };
	return (r->pool = lfpool_rc_create(r->flavour, &c)) != NULL;
}

static void rc_drain(struct rs_run *r, void *p)
{
	rc_drop(r, p);
}

static bool rc_close(struct rs_run *r, char *why, size_t len)
{
	lfpool_stats st;
	lfpool_rc_stats(r->pool, &st);
	lfpool_rc_destroy(r->pool);
	if (r->lasts != r->gets) {
		snprintf(why, len, "%llu objects got, %llu last releases",
			 (unsigned long long)r->gets, (unsigned long long)r->lasts);
		return false;
	}
	if (st.live != 0) {
		snprintf(why, len, "%llu objects still out", (unsigned long long)st.live);
		return false;
	}
	return true;
}

/* ---- array ---- */

struct array_run {
	lfpool_array *ap;
	struct stress_alloc alloc;
};

/* Check a buffer taken from a slot (its size first, then the pattern) and
 * put it, with or without its size. */
static void array_drop(struct rs_run *r, unsigned char *b, bool sized)
{
	struct array_run *ar = r->pool;
	size_t n;
	memcpy(&n, b, sizeof(n));
	if (n <= sizeof(n) || n > 2 * ARRAY_MAX) {
		fail(r, "array: a buffer's size word changed", n);
		return;
	}
	for (size_t i = sizeof(n); i < n; i++) {
		if (b[i] != pattern(n, i)) {
			fail(r, "array: a buffer's bytes changed while it was held", n);
			break;
		}
	}
	__atomic_fetch_add(&r->lasts, 1, __ATOMIC_RELAXED);
	if (sized)
		lfpool_array_put_sized(ar->ap, b, n);
	else
		lfpool_array_put(ar->ap, b);
}

static void array_step(struct rs_worker *w)
{
	struct rs_run *r = w->r;
	struct array_run *ar = r->pool;
	uint64_t x = rs_rng(&w->rng);
	size_t n = sizeof(size_t) + 1 + (size_t)(x % (2 * ARRAY_MAX - sizeof(size_t))), real;
	unsigned char *b = lfpool_array_get(ar->ap, n, &real);
	if (!b || real < n) {
		fail(r, "array: get failed or too small", n);
		return;
	}
	__atomic_fetch_add(&r->gets, 1, __ATOMIC_RELAXED);
	memcpy(b, &n, sizeof(n));
	for (size_t i = sizeof(n); i < n; i++)
		b[i] = pattern(n, i);
	unsigned char *old = swap_slot(w, b);
	if (old)
		array_drop(r, old, x & 1024);
}

/* r's pool: a struct array_run whose array pool is made per c, on the
 * run's counting allocator. */
static bool array_run_open(struct rs_run *r, lfpool_array_config c)
{
	struct array_run *ar = calloc(1, sizeof(*ar));
	if (!ar)
		return false;
	stress_alloc_init(&ar->alloc);
	c.allocator = &ar->alloc.a;
	ar->ap = lfpool_array_create(r->flavour, &c);
	if (!ar->ap) {
		free(ar);
		return false;
	}
	r->pool = ar;
	return true;
}

static bool array_open(struct rs_run *r)
{
	lfpool_array_config c = { .min_size = 16, .max_size = ARRAY_MAX,
				  .flags = r->flags | LFPOOL_ARRAY_F_CLEAR, .name = "bufs" };
	return array_run_open(r, c);
}

static void array_drain(struct rs_run *r, void *p)
{
	array_drop(r, p, false);
}

/* Destroy r's array pool and check that every buffer came back and every
 * byte its allocator gave was freed (and, with oversize, that some buffer
 * above the largest class was asked for). */
static bool array_run_close(struct rs_run *r, char *why, size_t len, bool oversize)
{
	struct array_run *ar = r->pool;
	lfpool_stats st;
	uint64_t over_gets, over_out;
	lfpool_array_stats(ar->ap, 0, &st);
	lfpool_array_oversize_stats(ar->ap, &over_gets, &over_out);
	lfpool_array_destroy(ar->ap);
	bool ok = false;
	if (r->lasts != r->gets)
		snprintf(why, len, "%llu buffers got, %llu put", (unsigned long long)r->gets,
			 (unsigned long long)r->lasts);
	else if (st.live != 0 || over_out != 0)
		snprintf(why, len, "%llu pooled and %llu oversize buffers still out",
			 (unsigned long long)st.live, (unsigned long long)over_out);
	else if (oversize && over_gets == 0)
		snprintf(why, len, "no oversize buffer was asked for");
	else if (!stress_alloc_balanced(&ar->alloc))
		snprintf(why, len, "allocator: %llu allocations, %llu frees, %lld bytes left",
			 (unsigned long long)ar->alloc.allocs, (unsigned long long)ar->alloc.frees,
			 (long long)ar->alloc.bytes);
	else
		ok = true;
	free(ar);
	return ok;
}

static bool array_close(struct rs_run *r, char *why, size_t len)
{
	return array_run_close(r, why, len, true);
}

/* ---- handoff ---- */

/* Array pools made, used and left in a slot by one thread, and destroyed by
 * whichever thread takes them out: a ThreadStatic pool's destroy clears
 * the maker's table entries for it (its array home's entries name the pool
 * by address: lib/layers/array.c) while the maker goes on with the shared
 * pool, whose gets and puts read the same entries (its 64-byte alignment
 * keeps it out of every array home, so each thread's home goes to the
 * pools it makes).  r's pool is a struct array_run: the shared pool and
 * the allocator of every pool.  A slot holds a struct handed. */
struct handed {
	lfpool_array *ap;
	int gone;		/* ap's destroy returned (release store) */
	int refs;		/* the slot's, and the maker's while ap is its home */
};

static void handed_drop(struct handed *h)
{
	if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(h);
}

static void handed_destroy(struct rs_run *r, struct handed *h)
{
	if (lfpool_array_destroy(h->ap) != 0)
		fail(r, "handoff: destroy failed", (uint64_t)errno);
	__atomic_store_n(&h->gone, 1, __ATOMIC_RELEASE);
	handed_drop(h);
}

/* The entry of the calling thread's table (lfpool/array.h, the library's:
 * read here as a white box) that names ap by address, i.e. as the pool of
 * the thread's array home; -1 if none.  Relaxed atomic loads, as the
 * inline paths' under ThreadSanitizer: a destroyer may clear entries. */
static int table_entry_of(const lfpool_array *ap)
{
	for (int k = 0; k < 64; k++)
		if (__atomic_load_n(&lfpool_array_tls_.key[k], __ATOMIC_RELAXED) ==
		    (uint64_t)(uintptr_t)ap)
			return k;
	return -1;
}

/* The pool in w's array home was destroyed: its destroy cleared w's
 * entries naming its address (array_home_lost, under lfp_ts_lock, before
 * the pool was freed), else a pool that calloc puts at that address would
 * hit a home that holds a dead pool's cache, or another class's.  w uses
 * no pool at that address between the destroy and this check. */
static void home_gone(struct rs_worker *w)
{
	struct handed *h = w->home;
	int k = table_entry_of(h->ap);
	if (k >= 0)
		fail(w->r, "handoff: the maker's table still names its destroyed array home's pool "
			   "(entry)", (uint64_t)k);
	__atomic_fetch_add(&w->r->home_checks, 1, __ATOMIC_RELAXED);
	w->home = NULL;
	handed_drop(h);
}

static void handoff_use(struct rs_run *r, lfpool_array *ap, size_t n)
{
	unsigned char *b = lfpool_array_get(ap, n, NULL);
	if (!b) {
		fail(r, "handoff: get failed", n);
		return;
	}
	__atomic_fetch_add(&r->gets, 1, __ATOMIC_RELAXED);
	memset(b, (int)n, n);
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)n) {
			fail(r, "handoff: a buffer's bytes changed while it was held", n);
			break;
		}
	lfpool_array_put_sized(ap, b, n);
	__atomic_fetch_add(&r->lasts, 1, __ATOMIC_RELAXED);
}

/*
 * One step: a new pool, used at n, handed off; the shared pool used after.
 * Where pools take array homes (ThreadStatic release), a maker whose home
 * may be free asks for n in the largest class (129..256 bytes: entry 7 of
 * its table), and one whose home is held by a pool it handed off asks for
 * 16..128 bytes (entries 0..6), so the home's entry is left as it was
 * until the check after its destroy, unless the shared pool took it over
 * meanwhile: in a quarter of the steps it is used at the same n as the new
 * pool (the same entries as the destroyer clears), else at 16..128.
 */
static void handoff_step(struct rs_worker *w)
{
	struct rs_run *r = w->r;
	struct array_run *ar = r->pool;
	uint64_t x = rs_rng(&w->rng);
	size_t n = 16 + (size_t)(x % 240), n_shared = n;
	if (r->flavour == LFPOOL_FLAVOUR_TS && !r->flags) {
		n = w->home ? 16 + (size_t)(x % 113) : 129 + (size_t)(x % 128);
		n_shared = (x >> 32) % 4 == 0 ? n : 16 + (size_t)((x >> 8) % 113);
	}
	lfpool_array_config c = { .min_size = 16, .max_size = 256, .flags = r->flags,
				  .allocator = &ar->alloc.a, .name = "handed" };
	struct handed *h = malloc(sizeof(*h));
	lfpool_array *mine = lfpool_array_create(r->flavour, &c);
	if (!h || !mine) {
		fail(r, "handoff: create failed", (uint64_t)errno);
		free(h);
		lfpool_array_destroy(mine);
		return;
	}
	/* Check the home's entries once its destroy returned, or as soon as
	 * calloc gave its address back (to mine, not used yet). */
	if (w->home && (__atomic_load_n(&w->home->gone, __ATOMIC_ACQUIRE) || w->home->ap == mine))
		home_gone(w);
	for (int k = 0; k < 4; k++)
		handoff_use(r, mine, n);
	*h = (struct handed){ .ap = mine, .refs = 1 };
	if (table_entry_of(mine) >= 0) {
		/* mine took the array home: the destroy of the one there
		 * before let it go (lfp_ts_lock orders that before here) */
		if (w->home)
			home_gone(w);
		h->refs = 2;
		w->home = h;
	}
	struct handed *old = swap_slot(w, h);	/* mine is no longer ours to use */
	if (old)
		handed_destroy(r, old);
	for (int k = 0; k < 8; k++)
		handoff_use(r, ar->ap, n_shared);
}

/* The worker's last step is done: its home's pool is destroyed here if it
 * is still in a slot, else by whoever took it out (at once, in the same
 * step), and then w's table is checked, so that every maker with a home
 * checks one. */
static void handoff_finish(struct rs_worker *w)
{
	struct handed *h = w->home;
	if (!h)
		return;
	for (unsigned i = 0; i < SLOTS; i++) {
		void *e = h;
		if (__atomic_compare_exchange_n(&w->r->slot[i], &e, NULL, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			handed_destroy(w->r, h);
			break;
		}
	}
	while (!__atomic_load_n(&h->gone, __ATOMIC_ACQUIRE))
		sched_yield();
	home_gone(w);
}

static bool handoff_open(struct rs_run *r)
{
	lfpool_array_config c = { .min_size = 16, .max_size = 256, .align = 64, .flags = r->flags,
				  .name = "shared" };
	return array_run_open(r, c);
}

static void handoff_drain(struct rs_run *r, void *p)
{
	handed_destroy(r, p);
}

/* Whether the pools of a release run (no LFPOOL_F_DEBUG) may take array
 * homes: not in an --enable-debug library, whose every pool is a debug
 * one (lib/core.h, lfp_debug_wanted) and takes the exported slow paths. */
#ifdef LFPOOL_DEBUG
# define RELEASE_POOLS_TAKE_HOMES false
#else
# define RELEASE_POOLS_TAKE_HOMES true
#endif

/* As array_close, and a ThreadStatic release run in which some step ran
 * must have checked some maker's table after its home's destroy (else the
 * check above proves nothing: no pool took an array home, or none was
 * seen destroyed); in a debug library, no pool may take one. */
static bool handoff_close(struct rs_run *r, char *why, size_t len)
{
	if (!array_run_close(r, why, len, false))
		return false;
	if (RELEASE_POOLS_TAKE_HOMES && r->flavour == LFPOOL_FLAVOUR_TS && !r->flags && r->gets &&
	    !r->home_checks) {
		snprintf(why, len, "no maker's table was checked after its array home's destroy");
		return false;
	}
	if (!RELEASE_POOLS_TAKE_HOMES && r->home_checks) {
		snprintf(why, len, "a pool of a debug library took an array home");
		return false;
	}
	return true;
}

/* ---- closure ---- */

struct job {
	uint64_t id;
	uint64_t check;		/* a function of id */
	struct rs_run *r;
};

static uint64_t job_check(uint64_t id)
{
	return id * 0x9e3779b97f4a7c15ull ^ 0x5bd1e995u;
}

static void job_fn(void *capture, void *arg)
{
	struct job *j = capture;
	(void)arg;
	if (j->check != job_check(j->id))
		fail(j->r, "closure: the capture changed", j->id);
	__atomic_fetch_add(&j->r->lasts, 1, __ATOMIC_RELAXED);
}

/* Run a closure taken from a slot and release it (into the worker's own
 * cache when it has one). */
static void closure_drop(struct rs_run *r, lfpool_closure *c, lfpool_ts_cache *cache)
{
	lfpool_closure_invoke(c, NULL);
	if (cache)
		lfpool_closure_release_cache(cache, c);
	else
		lfpool_closure_release(r->pool, c);
}

static void closure_step(struct rs_worker *w)
{
	struct rs_run *r = w->r;
	struct job j = { .id = new_id(r), .r = r };
	j.check = job_check(j.id);
	lfpool_closure *c = w->cache
		? lfpool_closure_get_cache(r->pool, w->cache, job_fn, &j, sizeof(j))
		: lfpool_closure_get(r->pool, job_fn, &j, sizeof(j));
	if (!c) {
		fail(r, "closure: get failed", (uint64_t)errno);
		return;
	}
	__atomic_fetch_add(&r->gets, 1, __ATOMIC_RELAXED);
	lfpool_closure *old = swap_slot(w, c);
	if (old)
		closure_drop(r, old, w->cache);
}

static bool closure_open(struct rs_run *r)
{
	lfpool_config c = { .obj_size = sizeof(struct job), .flags = r->flags, .name = "jobs" };
	return (r->pool = lfpool_closure_pool_create(r->flavour, &c)) != NULL;
}

static void closure_drain(struct rs_run *r, void *p)
{
	closure_drop(r, p, NULL);
}

static bool closure_close(struct rs_run *r, char *why, size_t len)
{
	lfpool_stats st;
	lfpool_closure_pool_stats(r->pool, &st);
	int destroyed = lfpool_closure_pool_destroy(r->pool);
	if (r->lasts != r->gets)
		snprintf(why, len, "%llu closures got, %llu ran", (unsigned long long)r->gets,
			 (unsigned long long)r->lasts);
	else if (st.live != 0)
		snprintf(why, len, "%llu closures still out", (unsigned long long)st.live);
	else if (destroyed != 0)
		snprintf(why, len, "destroy failed: errno %d", errno);
	else
		return true;
	return false;
}

/* ---- the driver ---- */

struct rs_scenario {
	const char *name;
	bool (*open)(struct rs_run *r);
	void (*step)(struct rs_worker *w);
	void (*drain)(struct rs_run *r, void *p);
	bool (*close)(struct rs_run *r, char *why, size_t len);
	bool explicit_caches;	/* ThreadStatic workers use their own cache */
	/* --enable-debug builds: every object of the quiet pools below in
	 * exactly one place (lib/census.h); 0 or -1 with why */
	int (*validate)(struct rs_run *r, char *why, size_t len);
	void (*finish)(struct rs_worker *w);	/* a worker's end, or NULL */
};

#ifdef LFPOOL_DEBUG
static int rc_validate(struct rs_run *r, char *why, size_t len)
{
	return lfp_rc_validate(r->pool, why, len);
}

static int array_validate(struct rs_run *r, char *why, size_t len)
{
	return lfp_array_validate(((struct array_run *)r->pool)->ap, why, len);
}

static int closure_validate(struct rs_run *r, char *why, size_t len)
{
	return lfp_closure_validate(r->pool, why, len);
}
# define RS_VALIDATE(fn) fn
#else
# define RS_VALIDATE(fn) NULL
#endif

static const struct rs_scenario scenarios[] = {
	{ "rc", rc_open, rc_step, rc_drain, rc_close, false, RS_VALIDATE(rc_validate), NULL },
	{ "array", array_open, array_step, array_drain, array_close, false,
	  RS_VALIDATE(array_validate), NULL },
	{ "closure", closure_open, closure_step, closure_drain, closure_close, true,
	  RS_VALIDATE(closure_validate), NULL },
	{ "handoff", handoff_open, handoff_step, handoff_drain, handoff_close, false, NULL,
	  handoff_finish },
};

struct thread_arg {
	const struct rs_scenario *sc;
	struct rs_worker w;
};

static void *worker_main(void *arg)
{
	struct thread_arg *t = arg;
	struct rs_run *r = t->w.r;
	if (t->sc->explicit_caches && r->flavour == LFPOOL_FLAVOUR_TS) {
		t->w.cache = lfpool_ts_cache_create(lfpool_closure_pool_ts(r->pool));
		if (!t->w.cache) {
			fail(r, "cache_create failed", 0);
			return NULL;
		}
	}
	for (uint64_t i = 0; (i & 15) || now() < r->deadline; i++)
		t->sc->step(&t->w);
	if (t->sc->finish)
		t->sc->finish(&t->w);
	lfpool_ts_cache_destroy(t->w.cache);
	return NULL;
}

/* One scenario on one flavour; whether it passed. */
static bool run_one(const struct rs_options *opt, const struct rs_scenario *sc, lfpool_flavour fl,
		    unsigned flags)
{
	static const char *const fl_names[] = { "?", "pool", "concurrent", "ts" };
	struct rs_run r = { .flavour = fl, .flags = flags };
	pthread_mutex_init(&r.lock, NULL);
	char why[224] = "";
	bool ok = sc->open(&r);
	if (!ok) {
		snprintf(why, sizeof(why), "create failed: errno %d", errno);
	} else {
		struct thread_arg args[MAX_THREADS];
		pthread_t th[MAX_THREADS];
		r.deadline = now() + opt->seconds;
		for (unsigned i = 0; i < opt->threads; i++) {
			uint64_t seed = (opt->seed + i + 1) * 0x9e3779b97f4a7c15ull;
			args[i] = (struct thread_arg){ sc, { &r, seed ? seed : 1, NULL, NULL } };
			if (pthread_create(&th[i], NULL, worker_main, &args[i]) != 0) {
				fprintf(stderr, "pthread_create failed\n");
				exit(2);
			}
		}
		for (unsigned i = 0; i < opt->threads; i++)
			pthread_join(th[i], NULL);
		for (unsigned i = 0; i < SLOTS; i++)
			if (r.slot[i])
				sc->drain(&r, r.slot[i]);
		char bad[200];
		bool sound = !sc->validate || sc->validate(&r, bad, sizeof(bad)) == 0;
		ok = sc->close(&r, why, sizeof(why));
		if (!sound) {
			ok = false;
			snprintf(why, sizeof(why), "validate: %s", bad);
		}
		if (r.errors) {
			ok = false;
			snprintf(why, sizeof(why), "%llu errors, the first: %s",
				 (unsigned long long)r.errors, r.first_error);
		}
	}
	printf("%s %-8s %-10s %-7s threads=%u ops=%llu%s%s\n", ok ? "PASS" : "FAIL", sc->name,
	       fl_names[fl], flags ? "debug" : "release", opt->threads,
	       (unsigned long long)r.gets, ok ? "" : ": ", ok ? "" : why);
	fflush(stdout);
	pthread_mutex_destroy(&r.lock);
	return ok;
}

static void parse(int argc, char **argv, struct rs_options *opt)
{
	*opt = (struct rs_options){ 1.0, 4, 1 };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			opt->seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			opt->threads = (unsigned)atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			opt->seed = strtoull(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--progress") != 0) {
			fprintf(stderr, "usage: %s [--seconds S] [--threads N (1..%d)] [--seed X]"
				" [--progress]\n", argv[0], MAX_THREADS);
			exit(2);
		}
	}
	if (opt->threads < 1 || opt->threads > MAX_THREADS || !(opt->seconds > 0)) {
		fprintf(stderr, "%s: bad --threads or --seconds\n", argv[0]);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct rs_options opt;
	parse(argc, argv, &opt);
	static const lfpool_flavour flavours[] = { LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_FLAVOUR_TS };
	static const unsigned modes[] = { 0, LFPOOL_F_DEBUG };
	unsigned passed = 0, failed = 0;
	for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++)
		for (size_t f = 0; f < 2; f++)
			for (size_t m = 0; m < 2; m++) {
				if (run_one(&opt, &scenarios[s], flavours[f], modes[m]))
					passed++;
				else
					failed++;
			}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
