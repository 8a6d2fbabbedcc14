/* SPDX-License-Identifier: MIT */
/*
 * mem64.c - memory a ThreadStatic pool holds with many threads on few CPUs
 * (issue 8), per-thread against per-CPU mode: MEM_THREADS threads each get
 * a burst of objects, put them all back and stay alive; then the pool's
 * statistics are read, and again after the pool has been trimmed twice (the
 * second trim finds no working set, so it gives back the whole depot; what
 * the caches hold stays).  Per-thread caches keep up to two magazines per
 * thread; per-CPU areas two magazines' worth per CPU.
 */
#include <pthread.h>
#include <stdio.h>

#include "bench.h"
#include "lfpool/threadstatic.h"

#define MEM_THREADS 64
#define MEM_BURST 256		/* objects per thread: four default magazines */
#define MEM_OBJ_SIZE 64

struct mem_run {
	lfpool_ts *pool;
	pthread_barrier_t done, measured;
};

struct mem_held {
	const char *impl, *path;
	lfpool_stats before, after;	/* after the bursts; after two trims */
};

/* One thread: a burst through the pool, then alive until measured. */
static void *burst(void *arg)
{
	struct mem_run *m = arg;
	void *objs[MEM_BURST];
	for (unsigned i = 0; i < MEM_BURST; i++)
		objs[i] = bench_got(lfpool_ts_get(m->pool));
	for (unsigned i = 0; i < MEM_BURST; i++)
		lfpool_ts_put(m->pool, objs[i]);
	pthread_barrier_wait(&m->done);
	pthread_barrier_wait(&m->measured);
	return NULL;
}

static void measure_held(const char *impl, unsigned flags, struct mem_held *h)
{
	lfpool_config cfg = { .obj_size = MEM_OBJ_SIZE, .flags = flags, .name = "mem64" };
	struct mem_run m = { .pool = lfpool_ts_create(&cfg) };
	if (!m.pool)
		bench_die("mem64: lfpool_ts_create failed");
	pthread_barrier_init(&m.done, NULL, MEM_THREADS + 1);
	pthread_barrier_init(&m.measured, NULL, MEM_THREADS + 1);
	pthread_t t[MEM_THREADS];
	for (unsigned i = 0; i < MEM_THREADS; i++)
		if (pthread_create(&t[i], NULL, burst, &m) != 0)
			bench_die("mem64: pthread_create failed");
	pthread_barrier_wait(&m.done);
	h->impl = impl;
	lfpool_ts_stats(m.pool, &h->before);
	lfpool_ts_trim(m.pool);
	lfpool_ts_trim(m.pool);
	lfpool_ts_stats(m.pool, &h->after);
	h->path = h->after.percpu_mode;
	pthread_barrier_wait(&m.measured);
	for (unsigned i = 0; i < MEM_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&m.done);
	pthread_barrier_destroy(&m.measured);
	if (lfpool_ts_destroy(m.pool) != 0)
		bench_die("mem64: lfpool_ts_destroy failed");
}

void report_mem64(const char *jsonl)
{
	struct mem_held h[2];
	measure_held("lfpool-threadstatic", 0, &h[0]);
	measure_held("lfpool-percpu", LFPOOL_F_PERCPU, &h[1]);
	printf("\n== memory held: %u threads on %u CPUs, each got and put %u objects of %d B"
	       " and stays alive\n", MEM_THREADS, cpus_available(), MEM_BURST, MEM_OBJ_SIZE);
	printf("  %-20s %-13s %8s %9s %11s | trimmed: %9s %11s\n", "implementation", "path",
	       "created", "retained", "bytes_held", "retained", "bytes_held");
	FILE *f = jsonl ? fopen(jsonl, "a") : NULL;
	if (jsonl && !f)
		bench_die("cannot append to %s", jsonl);
	for (int i = 0; i < 2; i++) {
		const lfpool_stats *b = &h[i].before, *a = &h[i].after;
		const char *path = h[i].path ? h[i].path : "per-thread";
		printf("  %-20s %-13s %8llu %9llu %11llu | %18llu %11llu\n", h[i].impl, path,
		       (unsigned long long)b->created, (unsigned long long)b->retained,
		       (unsigned long long)b->bytes_held, (unsigned long long)a->retained,
		       (unsigned long long)a->bytes_held);
		if (f)
			fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"mem64\",\"threads\":%u,\"cpus\":%u,"
				"\"obj_size\":%d,\"burst\":%u,\"path\":\"%s\",\"created\":%llu,"
				"\"retained\":%llu,\"bytes_held\":%llu,\"retained_after_trim\":%llu,"
				"\"bytes_held_after_trim\":%llu}\n",
				h[i].impl, MEM_THREADS, cpus_available(), MEM_OBJ_SIZE, MEM_BURST, path,
				(unsigned long long)b->created, (unsigned long long)b->retained,
				(unsigned long long)b->bytes_held, (unsigned long long)a->retained,
				(unsigned long long)a->bytes_held);
	}
	if (f && fclose(f) != 0)
		bench_die("cannot write %s", jsonl);
}
