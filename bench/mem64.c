/* SPDX-License-Identifier: MIT */
/*
 * mem64.c - memory a ThreadStatic pool holds with many threads on few CPUs
 * per-thread against per-CPU mode: MEM_THREADS threads each get
 * a burst of objects, put them all back and stay alive; then the pool's
 * statistics are read, and again after the pool has been trimmed twice (the
 * second trim finds no working set, so it gives back the whole depot; what
 * the caches hold stays).  Per-thread caches keep up to two magazines per
 * thread; per-CPU areas two magazines' worth per CPU.
 */
#include <pthread.h>
#include <stdio.h>

#include "bench.h"
#include "lfpool/ts.h"

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
	lfpool_ts_trim(m.pool, 0);
	lfpool_ts_trim(m.pool, 0);
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

/*
 * The burst (exact capacity): in a fresh process (a child), one thread gets
 * BURST_N objects of MEM_OBJ_SIZE bytes, writes each, puts them all back,
 * and the pool is drained and trimmed twice.  RSS (/proc/self/statm) is
 * read at the start, after each quarter of the gets (the last: the peak),
 * after the puts, the drain and the trims (glibc: malloc_trim, after the
 * after_trim_mib reading, which is free()'s alone); the pointer array is
 * allocated and touched before the start reading.
 */
#define BURST_N 1000000u

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static double rss_mib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

/* RSS through the burst, for the memory plot (bench/memory.gp): the
 * readings after each quarter of the gets, after the puts, after the
 * drain (lfpool) and after the trims (lfpool; glibc: malloc_trim). */
enum { BURST_STEPS = 8 };
static const char *const burst_phase[BURST_STEPS] = {
	"start", "1/4 got", "1/2 got", "3/4 got", "all got", "all put back", "drained", "trimmed",
};

struct burst_rss {
	double start, peak, after;
	uint64_t side_after;	/* bytes_held after the trims (lfpool) */
	double step[BURST_STEPS];	/* RSS in MiB at each burst_phase */
};

static void burst_child(unsigned flags, bool use_malloc, int fd)
{
	void **objs = malloc(BURST_N * sizeof(void *));
	if (!objs)
		_exit(1);
	/* Touched now (non-zero: a malloc + memset 0 may become calloc). */
	memset(objs, 0xff, BURST_N * sizeof(void *));
	lfpool_config cfg = { .obj_size = MEM_OBJ_SIZE, .flags = flags, .name = "burst" };
	lfpool_ts *p = use_malloc ? NULL : lfpool_ts_create(&cfg);
	struct burst_rss r = { .start = rss_mib() };
	r.step[0] = r.start;
	for (unsigned i = 0; i < BURST_N; i++) {
		objs[i] = use_malloc ? malloc(MEM_OBJ_SIZE) : lfpool_ts_get(p);
		if (!objs[i])
			_exit(1);
		memset(objs[i], 1, MEM_OBJ_SIZE);
		if ((i + 1) % (BURST_N / 4) == 0)
			r.step[(i + 1) / (BURST_N / 4)] = rss_mib();
	}
	r.peak = r.step[4];
	for (unsigned i = 0; i < BURST_N; i++) {
		if (use_malloc)
			free(objs[i]);
		else
			lfpool_ts_put(p, objs[i]);
	}
	r.step[5] = r.step[6] = rss_mib();
	if (!use_malloc) {
		lfpool_ts_drain(p);
		r.step[6] = rss_mib();
		lfpool_ts_trim(p, 0);
		lfpool_ts_trim(p, 0);
		lfpool_stats st;
		lfpool_ts_stats(p, &st);
		r.side_after = st.bytes_held;
	}
	/* after_trim_mib stays what it was for glibc: free() alone. */
	r.after = r.step[7] = rss_mib();
	if (use_malloc) {
		malloc_trim(0);
		r.step[7] = rss_mib();
	}
	if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(1);
	_exit(0);
}

static bool burst_measure(unsigned flags, bool use_malloc, struct burst_rss *r)
{
	int fds[2];
	if (pipe(fds) != 0)
		return false;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		burst_child(flags, use_malloc, fds[1]);
	}
	close(fds[1]);
	bool ok = pid > 0 && read(fds[0], r, sizeof(*r)) == (ssize_t)sizeof(*r);
	close(fds[0]);
	int status;
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ok;
}

void report_burst_rss(const char *jsonl)
{
	static const struct { const char *impl; unsigned flags; bool malloc; } rows[] = {
		{ "lfpool-threadstatic", 0, false },
		{ "lfpool-percpu", LFPOOL_F_PERCPU, false },
		{ "glibc", 0, true },
	};
	printf("\n== burst: %u objects of %d B got, written, put back, then drain + trim x 2;"
	       " RSS in MiB above the start\n", BURST_N, MEM_OBJ_SIZE);
	printf("  %-20s %10s %14s %12s %14s\n", "implementation", "peak", "B/obj at peak",
	       "after trim", "held (stats)");
	FILE *f = jsonl ? fopen(jsonl, "a") : NULL;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct burst_rss r;
		if (!burst_measure(rows[i].flags, rows[i].malloc, &r)) {
			printf("  %-20s failed\n", rows[i].impl);
			continue;
		}
		double peak = r.peak - r.start, after = r.after - r.start;
		double per_obj = (peak * 1024 * 1024 - (double)BURST_N * MEM_OBJ_SIZE) / BURST_N;
		printf("  %-20s %10.1f %14.1f %12.1f %14llu\n", rows[i].impl, peak, per_obj, after,
		       (unsigned long long)r.side_after);
		if (f)
			fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"burst\",\"objs\":%u,\"obj_size\":%d,"
				"\"peak_mib\":%.2f,\"per_obj_bytes\":%.2f,\"after_trim_mib\":%.2f,"
				"\"bytes_held_after_trim\":%llu}\n", rows[i].impl, BURST_N,
				MEM_OBJ_SIZE, peak, per_obj, after, (unsigned long long)r.side_after);
		for (unsigned k = 0; f && k < BURST_STEPS; k++)
			fprintf(f, "{\"impl\":\"%s\",\"pattern\":\"burst-rss\",\"objs\":%u,"
				"\"obj_size\":%d,\"step\":%u,\"phase\":\"%s\",\"rss_mib\":%.2f}\n",
				rows[i].impl, BURST_N, MEM_OBJ_SIZE, k, burst_phase[k],
				r.step[k] - r.start);
	}
	if (f)
		fclose(f);
}
