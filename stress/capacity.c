/* SPDX-License-Identifier: MIT */
/*
 * capacity.c - the exact-capacity guarantee of ThreadStatic (issue 13):
 * a get fails with ENOBUFS only when every object the pool may create is
 * out with a user, whatever caches, worker slots or CPU areas hold.
 *
 * Scenarios (each prints PASS/FAIL lines, the last line is
 * "N passed, N failed"; a plain C program, so that the TSan build runs it):
 *  exact    T threads (2, 4, 16, 64), capacity exactly T x M, prewarm 0 and
 *           T x M; every thread takes M objects one at a time, waits at a
 *           barrier, puts them back.  Variants: threads exit after each
 *           round (exit), stay alive (alive: no exit flush helps), put back
 *           the objects another thread got (cross: thread (i + r) % T puts
 *           thread i's, and every third round thread 0 puts them all).  For
 *           implicit caches, explicit caches, worker slots and per-CPU mode
 *           (rseq or fallback, as the process runs it).  No get may fail.
 *  pinned   per-CPU: a thread pinned to each CPU leaves K objects in its
 *           area and exits; one thread on one CPU gets all of them back
 *           before any new object is made (capacity = CPUs x K); trim from
 *           another thread returns them all.
 *  churn    threads get and put at random, each holding at most H, in a
 *           pool of capacity exactly T x H, while another thread drains and
 *           trims: no get may fail, and conservation holds (an owner stamp
 *           in every object; at the end one thread gets all of them back).
 * Every object carries an owner stamp: a get swaps in the taker's id and
 * must find 0, a put swaps 0 back and must find the taker's id, so an
 * object handed to two users at once is caught.
 *
 * Options: --rounds N (1000), --quick (fewer rounds where threads are
 * created every round, and for T = 64: what make check runs), --lite
 * (--quick without the 64 threads made anew each round: the sanitizer
 * builds, with --rounds 50),
 * --modes LIST (implicit,explicit,worker,percpu), --fallback-child (set by
 * the program itself: re-run per-CPU mode with GLIBC_TUNABLES=
 * glibc.pthread.rseq=0 so the sched_getcpu path is tested too).
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lfpool.h"

enum mode { M_IMPLICIT, M_EXPLICIT, M_WORKER, M_PERCPU, M_COUNT };
static const char *const mode_name[] = { "implicit", "explicit", "worker", "percpu" };

struct obj {
	_Atomic unsigned long owner;	/* 0 pooled, else the holder's id */
	char pad[56];
};

static int passed, failed;
static unsigned rounds = 1000;
static bool quick, lite;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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

/* ---------------------------------------------------------------- exact */

struct run {
	lfpool_ts *pool;
	enum mode mode;
	unsigned t, m;		/* threads, objects each */
	bool alive, cross;
	pthread_barrier_t bar;
	void **held;		/* t x m: what thread i got, for cross puts */
	atomic_uint failures, stamps;
	unsigned round;		/* set while no worker runs (exit) or at a barrier */
};

struct worker {
	struct run *r;
	unsigned id;
	lfpool_ts_cache *cache;	/* explicit or worker slot */
};

/* Take a stamp: the object must be pooled. */
static void stamp(struct run *r, void *o, unsigned long id)
{
	unsigned long prev = atomic_exchange(&((struct obj *)o)->owner, id);
	if (prev != 0) {
		atomic_fetch_add(&r->stamps, 1);
		if (getenv("CAPDBG")) fprintf(stderr, "get %p: held by %lu, taker %lu\n", o, prev, id);
	}
}

static void unstamp(struct run *r, void *o, unsigned long id)
{
	unsigned long prev = atomic_exchange(&((struct obj *)o)->owner, 0);
	if (prev != id) {
		atomic_fetch_add(&r->stamps, 1);
		if (getenv("CAPDBG")) fprintf(stderr, "put %p: held by %lu, putter thinks %lu\n", o, prev, id);
	}
}

static void *get_one(struct worker *w)
{
	if (w->cache)
		return lfpool_ts_cache_get(w->cache);
	return lfpool_ts_get(w->r->pool);
}

static void put_one(struct worker *w, void *o)
{
	if (w->cache)
		lfpool_ts_cache_put(w->cache, o);
	else
		lfpool_ts_put(w->r->pool, o);
}

/* A thread's cache handle for the mode, at thread start. */
static void open_cache(struct worker *w)
{
	if (w->r->mode == M_EXPLICIT)
		w->cache = lfpool_ts_cache_create(w->r->pool);
	else if (w->r->mode == M_WORKER)
		w->cache = lfpool_ts_worker_cache(w->r->pool, w->id);
}

static void close_cache(struct worker *w)
{
	if (w->r->mode == M_EXPLICIT)
		lfpool_ts_cache_destroy(w->cache);
	w->cache = NULL;	/* worker slots keep their objects */
}

/* One round's work of thread w: take m, barrier, put back. */
static void one_round(struct worker *w, unsigned round)
{
	struct run *r = w->r;
	void **mine = r->held + (size_t)w->id * r->m;
	for (unsigned k = 0; k < r->m; k++) {
		mine[k] = get_one(w);
		if (!mine[k]) {
			atomic_fetch_add(&r->failures, 1);
			continue;
		}
		stamp(r, mine[k], (unsigned long)w->id * r->m + k + 1);
	}
	pthread_barrier_wait(&r->bar);
	/* Whose objects this thread puts back. */
	unsigned from = r->cross ? (w->id + round) % r->t : w->id;
	if (r->cross && round % 3 == 2) {
		/* Thread 0 puts every object back; the others none. */
		if (w->id != 0) {
			pthread_barrier_wait(&r->bar);
			return;
		}
		for (size_t i = 0; i < (size_t)r->t * r->m; i++)
			if (r->held[i]) {
				unstamp(r, r->held[i], i + 1);
				put_one(w, r->held[i]);
			}
		pthread_barrier_wait(&r->bar);
		return;
	}
	void **theirs = r->held + (size_t)from * r->m;
	for (unsigned k = 0; k < r->m; k++)
		if (theirs[k]) {
			unstamp(r, theirs[k], (unsigned long)from * r->m + k + 1);
			put_one(w, theirs[k]);
		}
	pthread_barrier_wait(&r->bar);
}

static void *exit_thread(void *arg)
{
	struct worker *w = arg;
	open_cache(w);
	one_round(w, w->r->round);
	close_cache(w);
	return NULL;
}

static void *alive_thread(void *arg)
{
	struct worker *w = arg;
	open_cache(w);
	for (unsigned i = 0; i < rounds; i++)
		one_round(w, i);
	close_cache(w);
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
static bool all_back(lfpool_ts *p, size_t n, struct run *r)
{
	void **objs = calloc(n, sizeof(void *));
	bool ok = objs && lfpool_ts_get_bulk(p, objs, n) == 0;
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	ok = ok && st.created == n;
	for (size_t i = 0; ok && i < n; i++)
		stamp(r, objs[i], i + 1);
	for (size_t i = 0; ok && i < n; i++)
		unstamp(r, objs[i], i + 1);
	if (ok)
		lfpool_ts_put_bulk(p, objs, n);
	free(objs);
	return ok;
}

static void exact(enum mode mode, unsigned t, bool prewarm, bool alive, bool cross)
{
	const unsigned m = 6;
	/* --quick: threads that exit every round cost thread creation (about
	 * 1.5 ms per thread on a loaded 2-CPU machine), so fewer rounds there;
	 * living threads run every round up to 16 threads. */
	unsigned div = !quick ? 1 : alive ? (t >= 64 ? 5 : 1) : (t <= 4 ? 10 : t <= 16 ? 50 : 200);
	unsigned nrounds = rounds / div ? rounds / div : 1;
	struct run r = { .mode = mode, .t = t, .m = m, .alive = alive, .cross = cross };
	r.pool = make_pool(mode, (size_t)t * m, prewarm ? (size_t)t * m : 0, 4);
	r.held = calloc((size_t)t * m, sizeof(void *));
	struct worker *w = calloc(t, sizeof(*w));
	pthread_t *th = calloc(t, sizeof(*th));
	if (!r.pool || !r.held || !w || !th) {
		result(false, "exact %s: setup failed (%s)", mode_name[mode], strerror(errno));
		return;
	}
	pthread_barrier_init(&r.bar, NULL, t);
	for (unsigned i = 0; i < t; i++)
		w[i] = (struct worker){ .r = &r, .id = i };
	unsigned saved = rounds;
	rounds = nrounds;
	double t0 = now_s();
	if (alive) {
		for (unsigned i = 0; i < t; i++)
			pthread_create(&th[i], NULL, alive_thread, &w[i]);
		for (unsigned i = 0; i < t; i++)
			pthread_join(th[i], NULL);
	} else {
		for (r.round = 0; r.round < nrounds; r.round++) {
			for (unsigned i = 0; i < t; i++)
				pthread_create(&th[i], NULL, exit_thread, &w[i]);
			for (unsigned i = 0; i < t; i++)
				pthread_join(th[i], NULL);
		}
	}
	rounds = saved;
	lfpool_stats st;
	lfpool_ts_stats(r.pool, &st);
	bool back = all_back(r.pool, (size_t)t * m, &r);
	unsigned fails = atomic_load(&r.failures), bad = atomic_load(&r.stamps);
	result(fails == 0 && bad == 0 && st.created <= (size_t)t * m && back,
	       "exact    %-8s T=%-2u M=%u capacity=%-3u prewarm=%-3u %-5s %-5s rounds=%u: "
	       "%u failed gets, %u stamp errors, created %llu, all back: %s (%.2f s)",
	       mode_name[mode], t, m, t * m, prewarm ? t * m : 0, alive ? "alive" : "exit",
	       cross ? "cross" : "own", nrounds, fails, bad, (unsigned long long)st.created,
	       back ? "yes" : "no", now_s() - t0);
	pthread_barrier_destroy(&r.bar);
	lfpool_ts_destroy(r.pool);
	free(r.held);
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
	bool ok = p != NULL;
	for (int i = 0; ok && i < n; i++) {
		struct pin_arg a = { .pool = p, .cpu = cpus[i], .k = k };
		run_on(leave_objects, &a);
		ok = a.ok;
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
	result(ok && got && made == (uint64_t)n * k && t.k == n * k && st.created == 0,
	       "pinned   percpu(%s) %d CPUs x %u objects left in their areas: one thread got "
	       "them all back with none made: %s; trim from another thread returned %u, "
	       "%llu left", st.percpu_mode ? st.percpu_mode : "?", n, k, got ? "yes" : "no", t.k,
	       (unsigned long long)st.created);
	free(objs);
	lfpool_ts_destroy(p);
}

/* ---------------------------------------------------------------- churn */

struct churn {
	lfpool_ts *pool;
	enum mode mode;
	unsigned t, h;
	unsigned ops;
	atomic_bool stop;
	struct run r;		/* failures and stamps */
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
	struct worker w = { .r = &c->r, .id = me->id };
	open_cache(&w);
	void **held = calloc(c->h, sizeof(void *));
	unsigned n = 0;
	for (unsigned i = 0; i < c->ops; i++) {
		bool get = n == 0 || (n < c->h && rand_r(&me->seed) % 2);
		if (get) {
			void *o = get_one(&w);
			if (!o) {
				atomic_fetch_add(&c->r.failures, 1);
				continue;
			}
			stamp(&c->r, o, me->id + 1);
			held[n++] = o;
		} else {
			void *o = held[--n];
			unstamp(&c->r, o, me->id + 1);
			put_one(&w, o);
		}
	}
	while (n) {
		void *o = held[--n];
		unstamp(&c->r, o, me->id + 1);
		put_one(&w, o);
	}
	free(held);
	close_cache(&w);
	return NULL;
}

static void *drainer(void *arg)
{
	struct churn *c = arg;
	for (unsigned i = 0; !atomic_load(&c->stop); i++) {
		if (i % 4 == 3)
			lfpool_ts_trim(c->pool, 0);
		else
			lfpool_ts_drain(c->pool);
		sched_yield();
	}
	return NULL;
}

static void churn(enum mode mode, unsigned t)
{
	struct churn c = { .mode = mode, .t = t, .h = 5, .ops = quick ? 20000 : 100000 };
	c.pool = make_pool(mode, (size_t)t * c.h, 0, 4);
	c.r.pool = c.pool;
	c.r.mode = mode;
	struct churner *w = calloc(t, sizeof(*w));
	pthread_t *th = calloc(t + 1, sizeof(*th));
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
	lfpool_ts_stats(c.pool, &st);
	uint64_t made = st.created;
	/* Conservation: every object made is pooled, and one thread gets the
	 * whole capacity (worker slots still hold theirs: at capacity the get
	 * steals them) with every stamp taken once. */
	bool back = all_back(c.pool, (size_t)t * c.h, &c.r);
	unsigned fails = atomic_load(&c.r.failures), bad = atomic_load(&c.r.stamps);
	result(fails == 0 && bad == 0 && back && made <= (size_t)t * c.h,
	       "churn    %-8s T=%u H=%u capacity=%u, drain and trim alongside: %u failed gets, "
	       "%u stamp errors, created %llu, all back: %s", mode_name[mode], t, c.h, t * c.h,
	       fails, bad, (unsigned long long)made, back ? "yes" : "no");
	lfpool_ts_destroy(c.pool);
	free(w);
	free(th);
}

/* ----------------------------------------------------------------- main */

static void run_mode(enum mode mode)
{
	static const unsigned ts[] = { 2, 4, 16, 64 };
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		for (int pre = 0; pre < 2; pre++) {
			/* --lite (sanitizer builds): 64 threads made per round cost
			 * seconds each under TSan; the living 64 still run. */
			if (!lite || ts[i] < 64) {
				exact(mode, ts[i], pre, false, false);
				exact(mode, ts[i], pre, false, true);
			}
			exact(mode, ts[i], pre, true, false);
			exact(mode, ts[i], pre, true, true);
		}
	churn(mode, 4);
}

int main(int argc, char **argv)
{
	bool child = false, modes[M_COUNT] = { true, true, true, true };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--lite"))
			lite = quick = true;
		else if (!strcmp(argv[i], "--fallback-child"))
			child = true;
		else if (!strcmp(argv[i], "--modes") && i + 1 < argc) {
			const char *list = argv[++i];
			for (int m = 0; m < M_COUNT; m++)
				modes[m] = strstr(list, mode_name[m]) != NULL;
		} else {
			fprintf(stderr, "usage: %s [--rounds N] [--quick] [--modes LIST]\n", argv[0]);
			return 2;
		}
	}
	if (child)
		for (int m = 0; m < M_COUNT; m++)
			modes[m] = m == M_PERCPU;
	for (int m = 0; m < M_COUNT; m++)
		if (modes[m])
			run_mode((enum mode)m);
	if (modes[M_PERCPU])
		pinned();
	if (!child && modes[M_PERCPU] && !getenv("LFPOOL_CAPACITY_NO_FALLBACK")) {
		/* The per-CPU scenarios again on the sched_getcpu path. */
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			char rs[16];
			snprintf(rs, sizeof(rs), "%u", rounds);
			setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
			execl("/proc/self/exe", argv[0], "--fallback-child", "--rounds", rs,
			      lite ? "--lite" : quick ? "--quick" : NULL, (char *)NULL);
			_exit(127);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		/* The child's lines are its own; its exit status says whether all
		 * passed. */
		result(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "fallback the per-CPU scenarios on the sched_getcpu path (child above)");
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
