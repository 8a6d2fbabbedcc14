/* SPDX-License-Identifier: MIT */
/*
 * round.c - one pool instance of a scenario: create it, run worker
 * threads, then take a census of every object and destroy it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stress_hooks.h"	/* lfp_stress_cas_retries, lfp_yield_one_in */
#include "stress.h"

/* Short rounds: a new pool and new threads often give TSan and the census
 * more interleavings to look at than one long round would. */
#define ROUND_SECONDS 0.25
#define ENTER_TRIES 100		/* with one allocator call in k failing */

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));	/* splitmix64 */
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

lfpool_config round_config(struct round *rd, size_t capacity, size_t prewarm)
{
	memset(rd, 0, sizeof(*rd));
	stress_alloc_init(&rd->alloc);
	return (lfpool_config){
		.obj_size = sizeof(struct sobj), .capacity = capacity, .prewarm = prewarm,
		.init = obj_init_hook, .fini = obj_fini_hook, .hook_ctx = rd,
		.allocator = &rd->alloc.a, .name = "stress", .magazine_size = 8,
	};
}

unsigned round_slack(const struct round *rd)
{
	return rd->run->fl->cache_slack(&rd->cfg);
}

/* Yield injection for this round: as LFPOOL_YIELD says when set, else as
 * run->yield says (by default every other round). */
static void round_yield(const struct run *run)
{
	static int from_env = -1;
	if (from_env < 0)
		from_env = getenv("LFPOOL_YIELD") != NULL;
	if (from_env)
		return;
	bool on = run->yield > 0 || (run->yield == 0 && (run->t.rounds & 1));
	__atomic_store_n(&lfp_yield_one_in, on ? STRESS_YIELD_ONE_IN : 0, __ATOMIC_RELAXED);
}

bool round_open(struct round *rd, struct run *run, const lfpool_config *cfg)
{
	round_yield(run);
	rd->run = run;
	rd->cfg = *cfg;
	rd->until = now_seconds() + ROUND_SECONDS;
	if (rd->until > run->deadline)
		rd->until = run->deadline;
	run_progress(run);
	rd->pool = run->fl->create(cfg);
	if (!rd->pool)
		run_fail(run, "create failed: %s", strerror(errno));
	return rd->pool != NULL;
}

bool worker_over(struct worker *w, uint64_t iteration)
{
	if (__atomic_load_n(&w->rd->run->stop, __ATOMIC_RELAXED))
		return true;
	return (iteration & 63) == 0 && now_seconds() > w->rd->until;
}

/* A worker thread: its handle, the scenario's work, its counts. */
static void *thread_main(void *arg)
{
	struct worker *w = arg;
	struct round *rd = w->rd;
	const struct flavour *fl = rd->run->fl;
	/* A handle may need memory: with failures injected, ENOMEM is an
	 * answer, and trying again must succeed soon. */
	for (unsigned tries = 0; !(w->h = fl->enter(rd->pool)); tries++) {
		if (errno != ENOMEM || !rd->alloc.fail_one_in || tries == ENTER_TRIES) {
			run_fail(rd->run, "thread %u: no handle: %s", w->tid, strerror(errno));
			return NULL;
		}
		w->t.failed_gets++;
	}
	w->fn(w);
	if (!w->skip_leave)
		fl->leave(rd->pool, w->h);
	w->t.cas_retries += lfp_stress_cas_retries;
	return NULL;
}

void round_run_workers(struct round *rd, struct worker *ws, unsigned n,
		       void (*fn)(struct worker *))
{
	for (unsigned i = 0; i < n; i++) {
		ws[i].rd = rd;
		ws[i].fn = fn;
		if (pthread_create(&ws[i].thread, NULL, thread_main, &ws[i]) != 0) {
			run_fail(rd->run, "pthread_create failed");
			n = i;
			break;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(ws[i].thread, NULL);
		run_add(rd->run, &ws[i].t);
	}
}

void round_workers(struct round *rd, unsigned n, void (*fn)(struct worker *), void *arg)
{
	struct worker ws[STRESS_MAX_THREADS];
	for (unsigned i = 0; i < n; i++)
		ws[i] = (struct worker){ .tid = i + 1, .index = i, .arg = arg,
					 .rng = rng_next(&rd->run->rng) };
	round_run_workers(rd, ws, n, fn);
}

bool round_enter_main(struct round *rd, struct worker *w)
{
	*w = (struct worker){ .rd = rd, .tid = STRESS_MAIN_TID, .rng = rng_next(&rd->run->rng) };
	w->h = rd->run->fl->enter(rd->pool);
	if (!w->h)
		run_fail(rd->run, "main thread: no handle: %s", strerror(errno));
	return w->h != NULL;
}

void round_leave_main(struct round *rd, struct worker *w)
{
	rd->run->fl->leave(rd->pool, w->h);
	run_add(rd->run, &w->t);
}

/* Objects alive per the hooks.  Debug pools remake an object (fini, then
 * init) at every get, which leaves this count, not the ids, as it was. */
static uint64_t hooks_alive(const struct round *rd)
{
	return __atomic_load_n(&rd->objs.inits, __ATOMIC_RELAXED) -
	       __atomic_load_n(&rd->objs.finis, __ATOMIC_RELAXED);
}

bool round_check_counts(struct round *rd, uint64_t outstanding)
{
	lfpool_stats st;
	rd->run->fl->stats(rd->pool, &st);
	uint64_t alive = hooks_alive(rd);
	if (st.created != alive)
		run_fail(rd->run, "stats say %llu objects created (alive), the hooks %llu",
			 (unsigned long long)st.created, (unsigned long long)alive);
	else if (st.retained + outstanding != st.created || st.live != outstanding)
		run_fail(rd->run, "pooled %llu + out %llu (stats: live %llu) != created %llu",
			 (unsigned long long)st.retained, (unsigned long long)outstanding,
			 (unsigned long long)st.live, (unsigned long long)st.created);
	else
		return true;
	return false;
}

/* qsort order: by address. */
static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return (x > y) - (x < y);
}

/* Objects in objs[0..n) more than once (sorts objs). */
static uint64_t count_repeats(void **objs, uint64_t n)
{
	uint64_t repeats = 0;
	qsort(objs, n, sizeof(*objs), by_address);
	for (uint64_t i = 1; i < n; i++)
		repeats += objs[i] == objs[i - 1];
	return repeats;
}

/*
 * Get `alive` objects back (into objs): each must be pooled (owner 0), and
 * every one must be an object that existed, none twice: a new object made
 * meanwhile stands for one the pool lost.  The number got.
 */
static uint64_t census_drain(struct round *rd, void *h, void **objs, uint64_t alive,
			     struct tally *t)
{
	const struct flavour *fl = rd->run->fl;
	uint64_t before = hooks_alive(rd), n = 0;
	for (; n < alive && hooks_alive(rd) == before; n++) {
		objs[n] = fl->get(h);
		if (!objs[n]) {
			t->lost += alive - n;
			run_fail(rd->run, "census: %llu of %llu objects lost (get: %s)",
				 (unsigned long long)(alive - n), (unsigned long long)alive,
				 strerror(errno));
			break;
		}
		const struct sobj *o = objs[n];
		uint64_t owner = __atomic_load_n(&o->owner, __ATOMIC_RELAXED);
		if (owner != 0) {
			t->duplicated++;
			run_fail(rd->run, "census: object %llu handed out while %s (owner %llu)",
				 (unsigned long long)o->id, owner == OBJ_DEAD ? "finalized" : "held",
				 (unsigned long long)owner);
		}
	}
	if (hooks_alive(rd) != before) {
		t->lost += hooks_alive(rd) - before;
		run_fail(rd->run, "census: the pool made a new object after %llu of its %llu; "
			 "at least %llu lost", (unsigned long long)n, (unsigned long long)alive,
			 (unsigned long long)(hooks_alive(rd) - before));
	}
	uint64_t repeats = count_repeats(objs, n);
	if (repeats) {
		t->duplicated += repeats;
		run_fail(rd->run, "census: %llu objects handed out twice", (unsigned long long)repeats);
	}
	return n;
}

/* With every object drained, one more get must make a new object: or fail
 * with ENOBUFS when the pool is at its capacity. */
static void census_probe(struct round *rd, void *h, uint64_t alive)
{
	const struct flavour *fl = rd->run->fl;
	uint64_t before = hooks_alive(rd);
	struct sobj *o = fl->get(h);
	if (rd->cfg.capacity && alive == rd->cfg.capacity) {
		if (o)
			run_fail(rd->run, "census: a get beyond capacity gave object %llu",
				 (unsigned long long)o->id);
		else if (errno != ENOBUFS)
			run_fail(rd->run, "census: get at capacity: %s, not ENOBUFS", strerror(errno));
	} else if (!o) {
		run_fail(rd->run, "census: get of a new object failed: %s", strerror(errno));
	} else if (hooks_alive(rd) == before) {
		run_fail(rd->run, "census: a drained pool gave object %llu without making one",
			 (unsigned long long)o->id);
	}
	if (o)
		fl->put(h, o);
}

/* Backing memory must never have exceeded the documented bound, with the
 * round's threads and the main thread's census as the caches. */
static void check_memory_bound(struct round *rd)
{
	struct run *r = rd->run;
	if (!r->fl->max_bytes || !rd->cfg.capacity)
		return;
	uint64_t bound = r->fl->max_bytes(rd->pool, r->threads + 1);
	if ((uint64_t)rd->alloc.peak > bound)
		run_fail(r, "backing memory peaked at %lld bytes, above the documented bound of "
			 "%llu bytes for %u caches", (long long)rd->alloc.peak,
			 (unsigned long long)bound, r->threads + 1);
}

/* --enable-debug builds: every object in exactly one place, the pool quiet
 * (no worker runs, the census handle is given back). */
static bool round_validate(struct round *rd, const char *when)
{
	char why[256];
	const struct flavour *fl = rd->run->fl;
	if (!fl->validate || fl->validate(rd->pool, why, sizeof(why)) == 0)
		return true;
	run_fail(rd->run, "validate %s: %s", when, why);
	return false;
}


/*
 * Per-CPU pools: a get that refills the area of the CPU it runs on from the
 * depot leaves the rest of the magazine there; should the census thread
 * then move to another CPU, those objects are out of its reach (the
 * documented price) and the census would count them lost.  So it runs
 * pinned to one CPU; false when it could not be pinned (then *saved is
 * unused).
 */
static bool census_pin(const struct flavour *fl, cpu_set_t *saved)
{
	cpu_set_t one;
	int cpu = sched_getcpu();
	if (fl != &flavour_percpu || cpu < 0 || sched_getaffinity(0, sizeof(*saved), saved) != 0)
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) == 0;
}

static void census(struct round *rd, struct tally *t);

void round_close(struct round *rd)
{
	struct run *r = rd->run;
	struct tally t = { .rounds = 1 };
	/* A pool found corrupt may hold a cycle: leave it alone. */
	if (__atomic_load_n(&r->failures, __ATOMIC_RELAXED) || !round_check_counts(rd, 0) ||
	    !round_validate(rd, "after the round"))
		return;
	cpu_set_t saved;
	bool pinned = census_pin(r->fl, &saved);
	census(rd, &t);
	if (pinned)
		sched_setaffinity(0, sizeof(saved), &saved);
}

/* The census of round_close, and destroy. */
static void census(struct round *rd, struct tally *t0)
{
	struct run *r = rd->run;
	const struct flavour *fl = r->fl;
	struct tally t = *t0;
	uint64_t retries = lfp_stress_cas_retries;
	lfpool_stats st;
	fl->stats(rd->pool, &st);
	t.mag_exchanges = st.mag_exchanges;
	t.eliminated = st.eliminated;
	void *h = fl->enter(rd->pool);
	if (!h) {
		run_fail(r, "census: no handle: %s", strerror(errno));
		return;
	}
	uint64_t alive = st.created;
	void **objs = malloc((alive ? alive : 1) * sizeof(*objs));
	uint64_t n = census_drain(rd, h, objs, alive, &t);
	if (n == alive)
		census_probe(rd, h, alive);
	fl->put_bulk(h, objs, n);
	free(objs);
	fl->leave(rd->pool, h);
	round_validate(rd, "after the census");
	check_memory_bound(rd);
	t.cas_retries = lfp_stress_cas_retries - retries;
	if (__atomic_load_n(&r->failures, __ATOMIC_RELAXED) == 0) {
		if (fl->destroy(rd->pool) != 0)
			run_fail(r, "destroy failed: %s", strerror(errno));
		t.created = rd->objs.inits;
		if (rd->objs.finis != rd->objs.inits) {
			t.lost += rd->objs.inits - rd->objs.finis;
			run_fail(r, "%llu objects made, %llu finalized by destroy",
				 (unsigned long long)rd->objs.inits, (unsigned long long)rd->objs.finis);
		}
		if (!stress_alloc_balanced(&rd->alloc))
			run_fail(r, "allocator: %llu allocations, %llu frees, %lld bytes not given back",
				 (unsigned long long)rd->alloc.allocs, (unsigned long long)rd->alloc.frees,
				 (long long)rd->alloc.bytes);
	}
	run_add(r, &t);
}
