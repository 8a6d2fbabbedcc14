/* SPDX-License-Identifier: MIT */
/*
 * capacity.c - the exact-capacity guarantee of ThreadStatic:
 * a get fails with ENOBUFS only when every object the pool may create is
 * out with a user, whatever caches, worker slots or CPU areas hold.
 *
 * Scenarios (each prints PASS/FAIL lines, the last line is
 * "N passed, N failed"; a plain C program, so that the TSan build runs it):
 *  path     per-CPU pools run the path their cases are named after:
 *           percpu-rseq = restartable sequences (glibc registered rseq,
 *           __rseq_size >= 16, and the pools report "rseq"), percpu-fallback
 *           = sched_getcpu + area locks, forced in a child process by
 *           GLIBC_TUNABLES=glibc.pthread.rseq=0 (__rseq_size must read 0
 *           there).  A case whose pool reports the other path fails.
 *  exact    T threads (2, 4, 16, 64), capacity exactly T x M (M = 6),
 *           prewarm 0 and T x M; every thread takes M objects one at a
 *           time, waits at a barrier, puts them back, waits again.  Groups:
 *           exit (threads made anew and exiting every round: the exit
 *           flush helps) and alive (the same threads all rounds: nothing
 *           helps); own puts, or cross (thread (i + r) % T puts thread i's
 *           objects back, and every third round thread 0 puts all of
 *           them).  For implicit caches, explicit caches, worker slots and
 *           per-CPU mode.  No get may fail, no object may be held twice
 *           (an owner stamp in each), none made past the capacity, and one
 *           thread gets the whole capacity back at the end.  One set of
 *           threads runs every pool of its group, pool after pool between
 *           barriers (struct group): each pool sees what it would alone.
 *  churn    threads get and put at random, each holding at most H, in a
 *           pool of capacity exactly T x H, while another thread drains and
 *           trims: no get may fail, and conservation holds.
 *  pinned   per-CPU: a thread pinned to each CPU leaves K objects in its
 *           area and exits; one thread on one CPU gets all of them back
 *           before any new object is made (capacity = CPUs x K); trim from
 *           another thread returns them all.
 *
 * Options: --rounds N (1000: every exact case), --rounds-64 N (the T = 64
 * groups; default --rounds), --churn-ops N (100000 per thread), --modes
 * LIST (implicit,explicit,worker,percpu), --fallback-child (set by the
 * program itself for its per-CPU fallback child).
 *
 * Negative control: built with -DLFPOOL_STRESS_NO_STEAL (stress/capacity-
 * nosteal, library sources compiled in), a get at capacity takes only
 * from the depot, never from other caches, worker slots or CPU areas: the
 * stranding.  The program then PASSES a mode only when the
 * scenarios that must see the stranding whatever the schedule (caches:
 * every alive cross case; per-CPU: pinned, and one more) saw it as failed
 * gets; a harness that cannot see stranded objects proves nothing.
 *
 * COVERAGE of the guarantee's tests (what `./run.sh test` runs; "rounds" =
 * rounds of every exact case, T = 2, 4, 16 / T = 64):
 *   stage          build   command                                rounds
 *   [unit]         normal  make check: stress/capacity-check.sh   1000 / 1000
 *                          (./stress/capacity --rounds 1000)
 *   [unit-asan]    ASan    the same, --rounds 100 (the script      100 / 100
 *                          sees -fsanitize=address in SAN_CFLAGS)
 *   [stress]       TSan    make stress-quick, job tsan-capacity:  1000 / 100
 *                          make stress-capacity CAPACITY_ARGS=
 *                          "--rounds 1000 --rounds-64 100"
 *   make stress    TSan    job tsan-capacity (full mode)          1000 / 1000
 *   [stress]       normal  make stress-quick, job capacity-nosteal: 30 / 30
 *                          (the negative control above)
 *   make stress-debug      --enable-debug: job debug-capacity;    1000 / 1000
 *                          LFP_ASSERT on, and every pool is
 *                          validated (lib/census.h) between the
 *                          rounds of exit groups and after each
 *                          group, churn and pinned case
 * In each build, per T: implicit, explicit and worker x prewarm 0 / T x M
 * x own / cross x exit / alive (24 cases), and per-CPU the same 8 cases
 * twice: percpu-rseq here and percpu-fallback in the child (normal, ASan;
 * the TSan build of the library has no rseq path, so there the 8 are
 * percpu-fallback, and no child runs).  Per build 128 cases in the
 * process and 32 in the child (TSan: 128).
 *   guarantee's case                                scenario
 *   exact capacity, threads exit every round       exact, exit groups
 *   threads alive between rounds; put back by      exact, alive groups;
 *   another thread                                 cross (both groups)
 *   per-CPU: pinned threads leave objects, one     pinned (and path)
 *   thread gets them all back, trim from any
 *   steal path vs concurrent gets and puts under   churn, every mode
 *   TSan, conservation
 * Why TSan runs 100 rounds at T = 64: a thread made under TSan costs about
 * 5 ms of CPU here (16 pools' caches made, used, flushed at exit), and the
 * exit group makes 64 per round; 1,000 rounds at T = 64 would take some
 * 360 s of CPU alone.  Measured on the 2-CPU machine shared with other
 * builds (load 20-45, so CPU seconds hold better than wall times; two
 * runs each, process and child): normal 49-58 s CPU (123-130 s wall),
 * ASan 258-277 s CPU (493-833 s wall: ASan makes a thread in about 1 ms
 * of CPU, and the run makes 172,000), TSan 100-111 s CPU (334-547 s
 * wall).  CAPACITY_ARGS (e.g. "--rounds 100") shortens a run by hand.
 * The negative control cannot fail the implicit and explicit exit cases:
 * their exit flush and fill to need leave nothing stranded, so stealing
 * is not what they test (fill to need is: the first failure found).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef LFPOOL_HAVE_RSEQ
# include <sys/rseq.h>
#endif

#include "lfpool.h"
#ifdef LFPOOL_DEBUG
# include "census.h"	/* built with the library's sources (capacity.mk) */
#endif

/* Per-CPU pools of this build run restartable sequences, but in the
 * forced-fallback child. */
#if defined(LFPOOL_HAVE_RSEQ) && !defined(LFPOOL_TSAN)
# define RSEQ_BUILD 1
#else
# define RSEQ_BUILD 0
#endif

#ifdef LFPOOL_STRESS_NO_STEAL
static const bool negative = true;
#else
static const bool negative = false;
#endif

enum mode { M_IMPLICIT, M_EXPLICIT, M_WORKER, M_PERCPU, M_COUNT };
static const char *const mode_name[] = { "implicit", "explicit", "worker", "percpu" };

struct obj {
	_Atomic unsigned long owner;	/* 0 pooled, else the holder's id */
	char pad[56];
};

static int passed, failed;
static unsigned rounds = 1000, rounds64, churn_ops = 100000;
static bool fallback_child;
/* Negative control: scenarios run and caught per mode, and of them those
 * that must catch the stranding whatever the schedule ("must"): alive
 * cross rounds of caches (thread 0 keeps two magazines of the objects it
 * put back, the others need them) and pinned per-CPU. */
static unsigned caught[M_COUNT], cases[M_COUNT], must[M_COUNT], must_caught[M_COUNT];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process so far, user and system: a figure that
 * holds on a machine shared with other work, where wall time does not. */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s ", ok ? "PASS" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	if (ok)
		passed++;
	else
		failed++;
}

/* The per-CPU path this process must run: "rseq" or "sched_getcpu". */
static const char *expected_percpu_mode(void)
{
	return RSEQ_BUILD && !fallback_child ? "rseq" : "sched_getcpu";
}

static const char *mode_label(enum mode m)
{
	if (m != M_PERCPU)
		return mode_name[m];
	return RSEQ_BUILD && !fallback_child ? "percpu-rseq" : "percpu-fallback";
}

/* The size of glibc's rseq registration in this process (0: none). */
static unsigned rseq_registered(void)
{
#ifdef LFPOOL_HAVE_RSEQ
	return __rseq_size;
#else
	return 0;
#endif
}

/* The path check: glibc registered rseq where the rseq cases need it and
 * not in the forced-fallback child, and a per-CPU pool reports the path
 * the cases' names say. */
static void check_percpu_path(void)
{
	lfpool_config c = { .obj_size = 64, .flags = LFPOOL_F_PERCPU, .name = "capacity-path" };
	lfpool_ts *p = lfpool_ts_create(&c);
	lfpool_stats st = { 0 };
	if (p)
		lfpool_ts_stats(p, &st);
	unsigned rs = rseq_registered();
	bool glibc = RSEQ_BUILD && !fallback_child ? rs >= 16 : !fallback_child || rs == 0;
	const char *mode = st.percpu_mode ? st.percpu_mode : "none";
	result(p && glibc && !strcmp(mode, expected_percpu_mode()),
	       "path     %-15s the pools run %s (%s expected); glibc's rseq registration: %u bytes"
	       "%s", mode_label(M_PERCPU), mode, expected_percpu_mode(), rs,
	       fallback_child ? " (GLIBC_TUNABLES=glibc.pthread.rseq=0: must be 0)" :
	       RSEQ_BUILD ? " (must be >= 16)" : "");
	if (p)
		lfpool_ts_destroy(p);
}

/* ---------------------------------------------------------------- exact */

enum { MAX_CASES = M_COUNT * 4 };	/* modes x prewarm 0, T x M x own, cross */

/* One pool of a group: T threads take M objects each from it every round. */
struct pcase {
	enum mode mode;
	bool prewarm, cross;
	lfpool_ts *pool;
	void **held;		/* t x m: what thread i got, for cross puts */
	atomic_uint failures, stamps;
	unsigned validated, invalid;	/* --enable-debug: validate's verdicts */
	char why[200];			/* the first problem validate found */
};

/*
 * --enable-debug builds: c's pool, quiet (no thread of the group runs),
 * has every object in exactly one place (lib/census.h: the census of
 * the depot, every cache, worker slot and CPU area).  Called between the
 * rounds of exit groups and after each group and churn; a no-op in other
 * builds, whose library hides lfp_ts_validate.
 */
static void validate_case(struct pcase *c)
{
#ifdef LFPOOL_DEBUG
	char why[sizeof(c->why)];
	if (!c->pool)
		return;
	c->validated++;
	if (lfp_ts_validate(c->pool, why, sizeof(why)) != 0 && c->invalid++ == 0)
		memcpy(c->why, why, sizeof(why));
#else
	(void)c;
#endif
}

/* ", validated N times" (debug builds), or the first problem it found. */
static const char *validate_verdict(const struct pcase *c, char *buf, size_t n)
{
	if (!c->validated)
		snprintf(buf, n, "%s", "");
	else if (!c->invalid)
		snprintf(buf, n, ", validated %u times", c->validated);
	else
		snprintf(buf, n, ", validate failed %u of %u times, first: %s", c->invalid,
			 c->validated, c->why);
	return buf;
}

/* The pools one set of T threads works on: in each round every thread
 * runs the round of case 0, then of case 1, ..., each between barriers,
 * so that each pool sees exactly what it would see alone (T threads take
 * M each, meet, put back, meet; no other call on it until the next round)
 * while the threads, made anew each round in exit groups, are made once
 * per round for all of them.  A thread's exit (its implicit caches'
 * flush, its explicit caches' destroy) comes after its last case. */
struct group {
	unsigned t, m, nrounds;
	bool alive;
	pthread_barrier_t bar;
	struct pcase cs[MAX_CASES];
	unsigned n;
	unsigned round;		/* exit groups: set while no thread runs */
};

struct worker {
	struct group *g;
	unsigned id;
	lfpool_ts_cache *cache[MAX_CASES];	/* explicit cache or worker slot */
};

/* Take a stamp: the object must be pooled. */
static void stamp(struct pcase *c, void *o, unsigned long id)
{
	unsigned long prev = atomic_exchange(&((struct obj *)o)->owner, id);
	if (prev != 0)
		atomic_fetch_add(&c->stamps, 1);
}

static void unstamp(struct pcase *c, void *o, unsigned long id)
{
	unsigned long prev = atomic_exchange(&((struct obj *)o)->owner, 0);
	if (prev != id)
		atomic_fetch_add(&c->stamps, 1);
}

static void *get_one(struct worker *w, unsigned i)
{
	if (w->cache[i])
		return lfpool_ts_cache_get(w->cache[i]);
	return lfpool_ts_get(w->g->cs[i].pool);
}

static void put_one(struct worker *w, unsigned i, void *o)
{
	if (w->cache[i])
		lfpool_ts_cache_put(w->cache[i], o);
	else
		lfpool_ts_put(w->g->cs[i].pool, o);
}

/* A thread's cache handles for its cases, at thread start. */
static void open_caches(struct worker *w)
{
	for (unsigned i = 0; i < w->g->n; i++) {
		const struct pcase *c = &w->g->cs[i];
		w->cache[i] = NULL;
		if (c->mode == M_EXPLICIT)
			w->cache[i] = lfpool_ts_cache_create(c->pool);
		else if (c->mode == M_WORKER)
			w->cache[i] = lfpool_ts_worker_cache(c->pool, w->id);
	}
}

static void close_caches(struct worker *w)
{
	for (unsigned i = 0; i < w->g->n; i++) {
		if (w->g->cs[i].mode == M_EXPLICIT)
			lfpool_ts_cache_destroy(w->cache[i]);
		w->cache[i] = NULL;	/* worker slots keep their objects */
	}
}

/* Thread w's part of one round of case i: take m, barrier, put back
 * (cross: thread (id + round) % t's objects, and every third round
 * thread 0 puts back all of them), barrier. */
static void one_round(struct worker *w, unsigned i, unsigned round)
{
	struct group *g = w->g;
	struct pcase *c = &g->cs[i];
	void **mine = c->held + (size_t)w->id * g->m;
	for (unsigned k = 0; k < g->m; k++) {
		mine[k] = get_one(w, i);
		if (!mine[k]) {
			atomic_fetch_add(&c->failures, 1);
			continue;
		}
		stamp(c, mine[k], (unsigned long)w->id * g->m + k + 1);
	}
	pthread_barrier_wait(&g->bar);
	if (c->cross && round % 3 == 2) {
		for (size_t j = 0; w->id == 0 && j < (size_t)g->t * g->m; j++)
			if (c->held[j]) {
				unstamp(c, c->held[j], j + 1);
				put_one(w, i, c->held[j]);
			}
	} else {
		unsigned from = c->cross ? (w->id + round) % g->t : w->id;
		void **theirs = c->held + (size_t)from * g->m;
		for (unsigned k = 0; k < g->m; k++)
			if (theirs[k]) {
				unstamp(c, theirs[k], (unsigned long)from * g->m + k + 1);
				put_one(w, i, theirs[k]);
			}
	}
	pthread_barrier_wait(&g->bar);
}

static void *exit_thread(void *arg)
{
	struct worker *w = arg;
	open_caches(w);
	for (unsigned i = 0; i < w->g->n; i++)
		one_round(w, i, w->g->round);
	close_caches(w);
	return NULL;
}

static void *alive_thread(void *arg)
{
	struct worker *w = arg;
	open_caches(w);
	for (unsigned r = 0; r < w->g->nrounds; r++)
		for (unsigned i = 0; i < w->g->n; i++)
			one_round(w, i, r);
	close_caches(w);
	return NULL;
}

/* A new object is pooled: stamp 0 (slab memory is not zeroed). */
static void init_obj(void *o, void *ctx)
{
	(void)ctx;
	atomic_store(&((struct obj *)o)->owner, 0);
}

static lfpool_ts *make_pool(enum mode mode, size_t capacity, size_t prewarm, uint32_t mag)
{
	lfpool_config c = {
		.obj_size = sizeof(struct obj),
		.capacity = capacity,
		.prewarm = prewarm,
		.magazine_size = mag,
		.depot_max = 2,
		.flags = mode == M_PERCPU ? LFPOOL_F_PERCPU : 0,
		.name = "capacity",
		.init = init_obj,
	};
	return lfpool_ts_create(&c);
}

/* Every object back to one thread at the end: n (the capacity) objects,
 * then exactly n made, each stamped once.  Returns whether it held. */
static bool all_back(lfpool_ts *p, size_t n, struct pcase *c)
{
	void **objs = calloc(n, sizeof(void *));
	bool ok = objs && lfpool_ts_get_bulk(p, objs, n) == 0;
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	ok = ok && st.created == n;
	for (size_t i = 0; ok && i < n; i++)
		stamp(c, objs[i], i + 1);
	for (size_t i = 0; ok && i < n; i++)
		unstamp(c, objs[i], i + 1);
	if (ok)
		lfpool_ts_put_bulk(p, objs, n);
	free(objs);
	return ok;
}

/* Run t threads of fn on w and join them, with small stacks: 64 threads
 * of 8 MiB overflow glibc's cache of stacks, and each round then maps and
 * unmaps them (ten times the cost of the thread).  A thread that cannot
 * be made ends the program: those made wait at a barrier for it. */
static void run_threads(pthread_t *th, unsigned t, void *(*fn)(void *), struct worker *w)
{
	pthread_attr_t a;
	int err = pthread_attr_init(&a);
	if (!err)
		err = pthread_attr_setstacksize(&a, 256 << 10);
	for (unsigned i = 0; !err && i < t; i++)
		err = pthread_create(&th[i], &a, fn, &w[i]);
	if (err) {
		result(false, "exact    could not make %u threads: %s", t, strerror(err));
		exit(1);
	}
	pthread_attr_destroy(&a);
	for (unsigned i = 0; i < t; i++)
		pthread_join(th[i], NULL);
}

/* The verdict of case c after its group ran: no failed get, no object held
 * twice, none made past the capacity, all back to one thread at the end,
 * and (per-CPU) the pool ran the path its name says. */
static void judge(struct group *g, struct pcase *c)
{
	size_t cap = (size_t)g->t * g->m;
	lfpool_stats st;
	lfpool_ts_stats(c->pool, &st);
	bool path = c->mode != M_PERCPU || !strcmp(st.percpu_mode, expected_percpu_mode());
	validate_case(c);
	bool back = all_back(c->pool, cap, c);
	validate_case(c);
	unsigned fails = atomic_load(&c->failures), bad = atomic_load(&c->stamps);
	char what[160], checked[300];
	validate_verdict(c, checked, sizeof(checked));
	snprintf(what, sizeof(what), "exact    %-15s T=%-2u M=%u capacity=%-3zu prewarm=%-3zu %-5s %-5s "
		 "rounds=%u", mode_label(c->mode), g->t, g->m, cap, c->prewarm ? cap : 0,
		 g->alive ? "alive" : "exit", c->cross ? "cross" : "own", g->nrounds);
	if (negative) {
		caught[c->mode] += fails != 0;
		cases[c->mode]++;
		if (g->alive && c->cross && c->mode != M_PERCPU) {
			must[c->mode]++;
			must_caught[c->mode] += fails != 0;
		}
		printf("     %s: %s (%u failed gets%s)\n", what,
		       fails ? "caught the stranded objects" : "not caught", fails, checked);
		/* Without steals objects still go to one user at a time, and
		 * each stays in one place. */
		if (bad || !path || c->invalid)
			result(false, "%s: %u stamp errors, path %s%s", what, bad,
			       st.percpu_mode ? st.percpu_mode : "-", checked);
	} else {
		result(fails == 0 && bad == 0 && st.created <= cap && back && path && !c->invalid,
		       "%s: %u failed gets, %u stamp errors, created %llu, all back: %s%s%s%s", what,
		       fails, bad, (unsigned long long)st.created, back ? "yes" : "no",
		       c->mode == M_PERCPU ? ", path " : "",
		       c->mode == M_PERCPU ? st.percpu_mode : "", checked);
	}
}

/* T threads, every selected mode x prewarm 0 and T x M x own and cross
 * puts, threads made each round (alive false) or once. */
static void group(const bool *modes, unsigned t, bool alive)
{
	struct group *g = calloc(1, sizeof(*g));
	struct worker *w = calloc(t, sizeof(*w));
	pthread_t *th = calloc(t, sizeof(*th));
	bool ok = g && w && th;
	if (ok) {
		g->t = t;
		g->m = 6;
		g->alive = alive;
		g->nrounds = t >= 64 ? rounds64 : rounds;
	}
	size_t cap = (size_t)t * 6;
	for (int m = 0; ok && m < M_COUNT; m++)
		for (int k = 0; ok && modes[m] && k < 4; k++) {
			struct pcase *c = &g->cs[g->n++];
			c->mode = (enum mode)m;
			c->prewarm = k & 1;
			c->cross = k & 2;
			c->pool = make_pool(c->mode, cap, c->prewarm ? cap : 0, 4);
			c->held = calloc(cap, sizeof(void *));
			ok = c->pool && c->held;
		}
	ok = ok && pthread_barrier_init(&g->bar, NULL, t) == 0;
	if (!ok) {
		result(false, "exact    T=%u %s: setup failed (%s)", t, alive ? "alive" : "exit",
		       strerror(errno));
		exit(1);
	}
	for (unsigned i = 0; i < t; i++)
		w[i] = (struct worker){ .g = g, .id = i };
	double t0 = now_s(), c0 = cpu_s();
	if (alive)
		run_threads(th, t, alive_thread, w);
	for (g->round = 0; !alive && g->round < g->nrounds; g->round++) {
		run_threads(th, t, exit_thread, w);
		for (unsigned i = 0; i < g->n; i++)
			validate_case(&g->cs[i]);
	}
	double secs = now_s() - t0, cpu = cpu_s() - c0;
	for (unsigned i = 0; i < g->n; i++)
		judge(g, &g->cs[i]);
	printf("     group T=%u %s: %u pools x %u rounds, %llu threads made, %.2f s (%.2f s CPU)\n",
	       t, alive ? "alive" : "exit", g->n, g->nrounds,
	       (unsigned long long)t * (alive ? 1 : g->nrounds), secs, cpu);
	fflush(stdout);
	pthread_barrier_destroy(&g->bar);
	for (unsigned i = 0; i < g->n; i++) {
		lfpool_ts_destroy(g->cs[i].pool);
		free(g->cs[i].held);
	}
	free(g);
	free(w);
	free(th);
}

/* --------------------------------------------------------------- pinned */

struct pin_arg {
	lfpool_ts *pool;
	int cpu;
	unsigned k;
	void **objs;
	bool ok;
};

static bool pin_to(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s) == 0;
}

static void *leave_objects(void *arg)
{
	struct pin_arg *a = arg;
	a->ok = pin_to(a->cpu);
	void **o = calloc(a->k, sizeof(void *));
	for (unsigned i = 0; a->ok && i < a->k; i++)
		a->ok = (o[i] = lfpool_ts_get(a->pool)) != NULL;
	for (unsigned i = 0; i < a->k; i++)
		lfpool_ts_put(a->pool, o[i]);
	free(o);
	return NULL;
}

static void *get_all(void *arg)
{
	struct pin_arg *a = arg;
	a->ok = pin_to(a->cpu);
	for (unsigned i = 0; a->ok && i < a->k; i++)
		a->ok = (a->objs[i] = lfpool_ts_get(a->pool)) != NULL;
	return NULL;
}

static void *trim_it(void *arg)
{
	struct pin_arg *a = arg;
	a->k = (unsigned)lfpool_ts_trim(a->pool, 0);
	return NULL;
}

static void run_on(void *(*fn)(void *), struct pin_arg *a)
{
	pthread_t th;
	pthread_create(&th, NULL, fn, a);
	pthread_join(th, NULL);
}

static void pinned(void)
{
	cpu_set_t allowed;
	int cpus[CPU_SETSIZE], n = 0;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	const unsigned k = 5;	/* fits an area (2 x magazine_size = 8) */
	lfpool_ts *p = make_pool(M_PERCPU, (size_t)n * k, 0, 4);
	struct pcase pc = { .mode = M_PERCPU, .pool = p };
	bool ok = p != NULL;
	for (int i = 0; ok && i < n; i++) {
		struct pin_arg a = { .pool = p, .cpu = cpus[i], .k = k };
		run_on(leave_objects, &a);
		ok = a.ok;
		validate_case(&pc);
	}
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	uint64_t made = st.created;
	/* One thread on the last CPU gets every one of them back. */
	void **objs = calloc((size_t)n * k, sizeof(void *));
	struct pin_arg g = { .pool = p, .cpu = cpus[n - 1], .k = (unsigned)n * k, .objs = objs };
	run_on(get_all, &g);
	lfpool_ts_stats(p, &st);
	bool got = g.ok && st.created == made;
	for (unsigned i = 0; g.ok && i < g.k; i++)
		lfpool_ts_put(p, objs[i]);
	/* Now the objects sit in the last CPU's area and the depot: a trim on
	 * a thread pinned elsewhere gives them all back. */
	struct pin_arg t = { .pool = p, .cpu = cpus[0] };
	run_on(trim_it, &t);
	lfpool_ts_stats(p, &st);
	validate_case(&pc);
	char checked[300];
	validate_verdict(&pc, checked, sizeof(checked));
	if (negative) {
		caught[M_PERCPU] += !got;
		cases[M_PERCPU]++;
		must[M_PERCPU]++;
		must_caught[M_PERCPU] += !got;
		printf("     pinned   %-15s %d CPUs x %u objects: %s%s\n", mode_label(M_PERCPU), n, k,
		       got ? "not caught" : "caught the stranded objects", checked);
		if (pc.invalid)
			result(false, "pinned   %-15s%s", mode_label(M_PERCPU), checked);
	} else {
		result(ok && got && made == (uint64_t)n * k && t.k == n * k && st.created == 0 &&
		       !strcmp(st.percpu_mode, expected_percpu_mode()) && !pc.invalid,
		       "pinned   %-15s %d CPUs x %u objects left in their areas: one thread got "
		       "them all back with none made: %s; trim from another thread returned %u, "
		       "%llu left, path %s%s", mode_label(M_PERCPU), n, k, got ? "yes" : "no", t.k,
		       (unsigned long long)st.created, st.percpu_mode, checked);
	}
	free(objs);
	lfpool_ts_destroy(p);
}

/* ---------------------------------------------------------------- churn */

struct churn {
	unsigned h, ops;
	atomic_bool stop;
	struct group g;		/* t threads, one case: the pool, its counts */
};

struct churner {
	struct churn *c;
	unsigned id;
	unsigned seed;
};

static void *churn_thread(void *arg)
{
	struct churner *me = arg;
	struct churn *c = me->c;
	struct pcase *pc = &c->g.cs[0];
	struct worker w = { .g = &c->g, .id = me->id };
	open_caches(&w);
	void **held = calloc(c->h, sizeof(void *));
	unsigned n = 0;
	for (unsigned i = 0; i < c->ops; i++) {
		bool get = n == 0 || (n < c->h && rand_r(&me->seed) % 2);
		if (get) {
			void *o = get_one(&w, 0);
			if (!o) {
				atomic_fetch_add(&pc->failures, 1);
				continue;
			}
			stamp(pc, o, me->id + 1);
			held[n++] = o;
		} else {
			void *o = held[--n];
			unstamp(pc, o, me->id + 1);
			put_one(&w, 0, o);
		}
	}
	while (n) {
		void *o = held[--n];
		unstamp(pc, o, me->id + 1);
		put_one(&w, 0, o);
	}
	free(held);
	close_caches(&w);
	return NULL;
}

static void *drainer(void *arg)
{
	struct churn *c = arg;
	for (unsigned i = 0; !atomic_load(&c->stop); i++) {
		if (i % 4 == 3)
			lfpool_ts_trim(c->g.cs[0].pool, 0);
		else
			lfpool_ts_drain(c->g.cs[0].pool);
		sched_yield();
	}
	return NULL;
}

static void churn(enum mode mode, unsigned t)
{
	struct churn c = { .h = 5, .ops = churn_ops, .g = { .t = t, .n = 1 } };
	struct pcase *pc = &c.g.cs[0];
	pc->mode = mode;
	pc->pool = make_pool(mode, (size_t)t * c.h, 0, 4);
	struct churner *w = calloc(t, sizeof(*w));
	pthread_t *th = calloc(t + 1, sizeof(*th));
	if (!pc->pool || !w || !th) {
		result(false, "churn    %s: setup failed (%s)", mode_label(mode), strerror(errno));
		exit(1);
	}
	for (unsigned i = 0; i < t; i++) {
		w[i] = (struct churner){ .c = &c, .id = i, .seed = i + 1 };
		pthread_create(&th[i], NULL, churn_thread, &w[i]);
	}
	pthread_create(&th[t], NULL, drainer, &c);
	for (unsigned i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	atomic_store(&c.stop, true);
	pthread_join(th[t], NULL);
	lfpool_stats st;
	lfpool_ts_stats(pc->pool, &st);
	uint64_t made = st.created;
	/* Conservation: every object made is pooled, and one thread gets the
	 * whole capacity (worker slots still hold theirs: at capacity the get
	 * steals them) with every stamp taken once. */
	validate_case(pc);
	bool back = all_back(pc->pool, (size_t)t * c.h, pc);
	validate_case(pc);
	unsigned fails = atomic_load(&pc->failures), bad = atomic_load(&pc->stamps);
	char checked[300];
	validate_verdict(pc, checked, sizeof(checked));
	if (negative) {
		caught[mode] += fails != 0;
		cases[mode]++;
		printf("     churn    %-15s T=%u H=%u: %s (%u failed gets%s)\n", mode_label(mode), t,
		       c.h, fails ? "caught the stranded objects" : "not caught", fails, checked);
		if (pc->invalid)
			result(false, "churn    %-15s T=%u%s", mode_label(mode), t, checked);
	} else {
		result(fails == 0 && bad == 0 && back && made <= (size_t)t * c.h && !pc->invalid,
		       "churn    %-15s T=%u H=%u capacity=%u, drain and trim alongside: %u failed "
		       "gets, %u stamp errors, created %llu, all back: %s%s", mode_label(mode), t, c.h,
		       t * c.h, fails, bad, (unsigned long long)made, back ? "yes" : "no", checked);
	}
	lfpool_ts_destroy(pc->pool);
	free(w);
	free(th);
}

/* ----------------------------------------------------------------- main */

/* The per-CPU scenarios again on the sched_getcpu path: this program with
 * glibc's rseq registration turned off.  Returns whether the child passed. */
static bool fallback(char **argv)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		const char *old = getenv("GLIBC_TUNABLES");
		char t[512], rs[16], r64[16], ops[16];
		snprintf(t, sizeof(t), "%s%sglibc.pthread.rseq=0", old ? old : "", old ? ":" : "");
		setenv("GLIBC_TUNABLES", t, 1);
		snprintf(rs, sizeof(rs), "%u", rounds);
		snprintf(r64, sizeof(r64), "%u", rounds64);
		snprintf(ops, sizeof(ops), "%u", churn_ops);
		execl("/proc/self/exe", argv[0], "--fallback-child", "--rounds", rs, "--rounds-64",
		      r64, "--churn-ops", ops, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	bool modes[M_COUNT] = { true, true, true, true };
	bool r64 = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--rounds-64") && i + 1 < argc)
			rounds64 = (unsigned)strtoul(argv[++i], NULL, 10), r64 = true;
		else if (!strcmp(argv[i], "--churn-ops") && i + 1 < argc)
			churn_ops = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--fallback-child"))
			fallback_child = true;
		else if (!strcmp(argv[i], "--modes") && i + 1 < argc) {
			const char *list = argv[++i];
			for (int m = 0; m < M_COUNT; m++)
				modes[m] = strstr(list, mode_name[m]) != NULL;
		} else {
			fprintf(stderr, "usage: %s [--rounds N] [--rounds-64 N] [--churn-ops N] "
				"[--modes LIST]\n", argv[0]);
			return 2;
		}
	}
	if (!r64)
		rounds64 = rounds;
	if (!rounds || !rounds64) {
		fprintf(stderr, "%s: --rounds and --rounds-64 must be at least 1\n", argv[0]);
		return 2;
	}
	if (fallback_child)
		for (int m = 0; m < M_COUNT; m++)
			modes[m] = m == M_PERCPU;
	double t0 = now_s(), c0 = cpu_s();
	if (modes[M_PERCPU])
		check_percpu_path();
	static const unsigned ts[] = { 2, 4, 16, 64 };
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		group(modes, ts[i], false);
		group(modes, ts[i], true);
	}
	for (int m = 0; m < M_COUNT; m++)
		if (modes[m])
			churn((enum mode)m, 4);
	if (modes[M_PERCPU])
		pinned();
	/* Negative control: every scenario that must catch the stranding did,
	 * and per-CPU some exact or churn scenario too. */
	for (int m = 0; negative && m < M_COUNT; m++)
		if (modes[m])
			result(must[m] && must_caught[m] == must[m] &&
			       (m != M_PERCPU || caught[m] > must_caught[m]),
			       "negative %-15s stealing compiled out (LFPOOL_STRESS_NO_STEAL): "
			       "%u of %u scenarios caught the stranded objects, %u of the %u that "
			       "must", mode_label((enum mode)m), caught[m], cases[m], must_caught[m],
			       must[m]);
	/* The forced fallback child; not in a build without rseq (or the TSan
	 * build), whose per-CPU pools above ran the fallback already. */
	if (RSEQ_BUILD && !fallback_child && modes[M_PERCPU])
		result(fallback(argv), "fallback the per-CPU scenarios on the sched_getcpu path "
		       "(child above)");
	printf("capacity: %.1f s, %.1f s CPU%s\n", now_s() - t0, cpu_s() - c0,
	       fallback_child ? " (the fallback child)" : "");
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
