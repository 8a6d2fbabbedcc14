/* SPDX-License-Identifier: MIT */
/*
 * omp.c - lfpool inside OpenMP tasks (gcc's libgomp, clang's libomp).
 *
 * Each task gets a payload, made by whoever spawns it and put back by
 * whichever thread runs it, and a scratch object for its own work.  Both
 * come from ThreadStatic pools through worker-index caches: slot i of each
 * pool belongs to OpenMP thread i, so a get or put that hits the slot's
 * magazines is a few inline instructions, with no atomic and no lock.
 * Binding a thread to its cache takes one line per pool:
 *
 *	caches[i] = lfpool_ts_worker_cache(pool, i);	   i < omp_get_max_threads()
 *	obj = lfpool_cache_get(caches[omp_get_thread_num()]);
 *	lfpool_cache_put(caches[omp_get_thread_num()], obj);
 *
 * Look the slot up at each call, never keep it across a task scheduling
 * point (task creation, taskwait): a tied task (the default) resumes on its
 * thread, an untied one may not.  One level of parallelism only: in a
 * nested team omp_get_thread_num() is not unique in the process.
 *
 * Two workloads, a recursive task tree and a task per item of a loop, run
 * with the pools and with malloc/free of the same payloads, alternately, in
 * one process.  The run fails unless every task ran once and every object
 * came back (stats: live 0; malloc: as many frees as mallocs).
 *
 * Usage: omp [--threads N] [--depth N] [--items N] [--reps N] [--jsonl FILE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <lfpool.h>

#define THREADS_MAX 256

/* A task's payload: what the spawner hands it (64 bytes). */
struct payload {
	uint64_t index;		/* loop item, or tree depth */
	uint64_t *nodes;	/* tree: where the subtree's node count goes */
	uint64_t data[6];
};

/* A task's working memory, taken and returned by the task itself. */
struct scratch {
	uint64_t words[32];
};

enum alloc { ALLOC_LFPOOL, ALLOC_MALLOC };
static const char *const alloc_name[] = { "lfpool-worker", "glibc" };

/* Per OpenMP thread: its cache slots, and gets minus puts of either kind
 * (for malloc, the check that every object came back). */
struct worker {
	lfpool_cache *payloads, *scratches;
	int64_t out;
} __attribute__((aligned(64)));

static enum alloc alloc;
static lfpool_ts *payload_pool, *scratch_pool;
static struct worker workers[THREADS_MAX];

static struct worker *me(void)
{
	return &workers[omp_get_thread_num()];
}

static void *obj_get(lfpool_cache *cache, size_t size)
{
	void *obj = alloc == ALLOC_LFPOOL ? lfpool_cache_get(cache) : malloc(size);
	if (!obj) {
		perror("omp: get");
		exit(1);
	}
	me()->out++;
	return obj;
}

static void obj_put(lfpool_cache *cache, void *obj)
{
	me()->out--;
	if (alloc == ALLOC_LFPOOL)
		lfpool_cache_put(cache, obj);
	else
		free(obj);
}

static struct payload *payload_get(void)
{
	return obj_get(me()->payloads, sizeof(struct payload));
}

static void payload_put(struct payload *p)
{
	obj_put(me()->payloads, p);
}

static struct scratch *scratch_get(void)
{
	return obj_get(me()->scratches, sizeof(struct scratch));
}

static void scratch_put(struct scratch *s)
{
	obj_put(me()->scratches, s);
}

/* Some work on the scratch object, so that it is touched. */
static uint64_t mix(struct scratch *s, uint64_t seed)
{
	uint64_t h = seed;
	for (unsigned i = 0; i < 8; i++) {
		s->words[i] = h;
		h = h * 0x9e3779b97f4a7c15ull + i;
	}
	return s->words[7];
}

/* ---- a recursive task tree: a node of depth d > 0 spawns two ---- */

static void tree_node(struct payload *p);

static void tree_spawn(uint64_t depth, uint64_t *nodes)
{
	struct payload *child = payload_get();
	child->index = depth;
	child->nodes = nodes;
#pragma omp task firstprivate(child)
	tree_node(child);
}

/* Runs a payload, counts the subtree into *p->nodes, puts the payload. */
static void tree_node(struct payload *p)
{
	struct scratch *s = scratch_get();
	uint64_t depth = p->index, left = 0, right = 0;
	p->data[0] = mix(s, depth);
	if (depth > 0) {
		tree_spawn(depth - 1, &left);
		tree_spawn(depth - 1, &right);
#pragma omp taskwait
	}
	*p->nodes = 1 + left + right;
	scratch_put(s);
	payload_put(p);
}

/* ---- a task per item: one thread spawns, every thread runs ---- */

static uint8_t *hits;

static void item(struct payload *p)
{
	struct scratch *s = scratch_get();
	p->data[0] = mix(s, p->index);
	__atomic_fetch_add(&hits[p->index], 1, __ATOMIC_RELAXED);
	scratch_put(s);
	payload_put(p);
}

/* ---- driver ---- */

struct options {
	int threads, depth, reps;
	uint64_t items;
	const char *jsonl;
};

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "omp: FAILED (%s): %s\n", alloc_name[alloc], what);
		failures++;
	}
}

/* Both workloads once with allocator a; returns tasks per second. */
static double run_once(enum alloc a, const struct options *o)
{
	uint64_t nodes = 0;
	int team = 0;
	alloc = a;
	memset(hits, 0, o->items);
	double t0 = omp_get_wtime();
#pragma omp parallel num_threads(o->threads)
#pragma omp single
	{
		team = omp_get_num_threads();
		struct payload *root = payload_get();
		root->index = (uint64_t)o->depth;
		root->nodes = &nodes;
		tree_node(root);
		for (uint64_t i = 0; i < o->items; i++) {
			struct payload *p = payload_get();
			p->index = i;
#pragma omp task firstprivate(p)
			item(p);
		}
	}
	double secs = omp_get_wtime() - t0;
	check(team == o->threads, "the team has the threads asked for");
	check(nodes == (2ull << o->depth) - 1, "tree: every node ran exactly once");
	uint64_t bad = 0;
	for (uint64_t i = 0; i < o->items; i++)
		bad += hits[i] != 1;
	check(bad == 0, "loop: every item ran exactly once");
	/* The tree's tasks and the loop's; the root ran inside the single. */
	return (double)((2ull << o->depth) - 2 + o->items) / secs;
}

/* Every object came back: nothing live, nothing lost. */
static void check_pool(lfpool_ts *pool, const char *what)
{
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	printf("omp: %s: created %llu, retained %llu, live %llu\n", what,
	       (unsigned long long)st.created, (unsigned long long)st.retained,
	       (unsigned long long)st.live);
	check(st.live == 0 && st.created == st.retained, what);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *runtime(void)
{
#ifdef __clang__
	return "libomp";
#else
	return "libgomp";
#endif
}

/* One line per allocator: ns per task (median, min, max) and tasks/s. */
static int write_rows(const struct options *o, double rate[2][64])
{
	FILE *f = fopen(o->jsonl, "a");
	if (!f) {
		perror(o->jsonl);
		return -1;
	}
	for (int a = 0; a < 2; a++) {
		double v[64];
		memcpy(v, rate[a], sizeof(double) * (size_t)o->reps);
		double med = median(v, o->reps);
		fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"jobs-omp\",\"threads\":%d,\"obj_size\":%zu,"
			"\"ns_per_op\":%.3f,\"min\":%.3f,\"max\":%.3f,\"reps\":%d,\"jobs_per_s\":%.0f,"
			"\"runtime\":\"%s\"}\n",
			alloc_name[a], o->threads, sizeof(struct payload), 1e9 / med,
			1e9 / v[o->reps - 1], 1e9 / v[0], o->reps, med, runtime());
	}
	return fclose(f);
}

static int parse(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			o->threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
			o->depth = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--items") && i + 1 < argc)
			o->items = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			o->reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--jsonl") && i + 1 < argc)
			o->jsonl = argv[++i];
		else
			return -1;
	}
	if (o->threads < 1 || o->threads > THREADS_MAX || o->depth < 0 || o->depth > 24 ||
	    o->items == 0 || o->reps < 1 || o->reps > 64) {
		fprintf(stderr, "omp: bad option value\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .threads = 2, .depth = 16, .items = 200000, .reps = 5 };
	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: %s [--threads N] [--depth N] [--items N] [--reps N] "
			"[--jsonl FILE]\n", argv[0]);
		return 2;
	}
	omp_set_dynamic(0);	/* a team of exactly o.threads */
	lfpool_config pc = { .obj_size = sizeof(struct payload), .name = "payloads" };
	lfpool_config sc = { .obj_size = sizeof(struct scratch), .name = "scratch" };
	payload_pool = lfpool_ts_create(&pc);
	scratch_pool = lfpool_ts_create(&sc);
	if (!payload_pool || !scratch_pool) {
		perror("omp: pools");
		return 1;
	}
	/* Bind: slot i of each pool is OpenMP thread i's cache. */
	for (int i = 0; i < o.threads; i++) {
		workers[i].payloads = lfpool_ts_worker_cache(payload_pool, (unsigned)i);
		workers[i].scratches = lfpool_ts_worker_cache(scratch_pool, (unsigned)i);
		if (!workers[i].payloads || !workers[i].scratches) {
			perror("omp: worker caches");
			return 1;
		}
	}
	hits = malloc(o.items);
	if (!hits) {
		perror("omp: hits");
		return 1;
	}

	/* A warm-up run of each, then reps of both, alternating which goes
	 * first so that drift in the machine's load hits both alike. */
	double rate[2][64], ratio[64];
	run_once(ALLOC_LFPOOL, &o);
	run_once(ALLOC_MALLOC, &o);
	for (int r = 0; r < o.reps; r++) {
		enum alloc first = r % 2 ? ALLOC_MALLOC : ALLOC_LFPOOL;
		rate[first][r] = run_once(first, &o);
		rate[!first][r] = run_once(!first, &o);
		ratio[r] = rate[ALLOC_LFPOOL][r] / rate[ALLOC_MALLOC][r];
	}

	int64_t out = 0;
	for (int i = 0; i < THREADS_MAX; i++)
		out += workers[i].out;
	alloc = ALLOC_LFPOOL;
	check(out == 0, "every object got was put (lfpool and malloc together)");
	check_pool(payload_pool, "payloads: every one came back");
	check_pool(scratch_pool, "scratch: every one came back");
	check(lfpool_ts_destroy(payload_pool) == 0 && lfpool_ts_destroy(scratch_pool) == 0,
	      "pools destroyed");
	free(hits);

	double pooled[64], mallocd[64];
	memcpy(pooled, rate[ALLOC_LFPOOL], sizeof(double) * (size_t)o.reps);
	memcpy(mallocd, rate[ALLOC_MALLOC], sizeof(double) * (size_t)o.reps);
	double rmed = median(ratio, o.reps);
	printf("jobs-omp (%s): %d threads, tree depth %d, %llu item tasks, %d reps\n", runtime(),
	       o.threads, o.depth, (unsigned long long)o.items, o.reps);
	printf("jobs-omp: lfpool %.2f M tasks/s, malloc %.2f M tasks/s, ratio %.2f (%.2f..%.2f)\n",
	       median(pooled, o.reps) / 1e6, median(mallocd, o.reps) / 1e6, rmed, ratio[0],
	       ratio[o.reps - 1]);
	if (o.jsonl && write_rows(&o, rate))
		return 1;
	return failures ? 1 : 0;
}
