/* SPDX-License-Identifier: MIT */
/*
 * main.c - lfpool-bench: lfpool's flavours against the floor, the
 * allocators and the shared-structure pools, all in one process.
 *
 *   lfpool-bench [--quick] [--out FILE] [--impl A,B] [--pattern P,Q]
 *       times every implementation in every pattern it supports; tables
 *       and targets on stdout, JSON lines in FILE.  BENCH_QUICK=1 in the
 *       environment is --quick: shorter repetitions, 64 B objects only.
 *       Then the memory 64 threads leave in per-thread and per-CPU
 *       ThreadStatic pools (pattern mem64, with lfpool-percpu), the cost
 *       of a get that steals (pattern steal, with lfpool-threadstatic),
 *       many pools at once, round-robin over 1,000 pools and a new
 *       thread's first get (pattern manypools, with lfpool-threadstatic;
 *       pattern firstuse or roundrobin: the last two alone), the pair
 *       loop of the floor and of the ThreadStatic paths at 8 code
 *       placements (pattern placement, with lfpool-threadstatic),
 *       and each of 8 threads' share of the operations on one shared
 *       instance (pattern contend).
 *   lfpool-bench --list
 *       the implementations available here and their single-thread patterns.
 *   lfpool-bench --instr OPS --impl A --pattern P
 *       one untimed run of OPS operations, for bench/instr.sh to count
 *       instructions under callgrind.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <gnu/libc-version.h>

#include "bench.h"
#include "lfpool.h"

static const struct impl *const impls[] = {
	&impl_lfpool_pool, &impl_lfpool_concurrent, &impl_lfpool_concurrent_small, &impl_lfpool_threadstatic,
	&impl_lfpool_percpu, &impl_lfpool_cache, &impl_lfpool_array, &impl_lfpool_array_const, &impl_floor, &impl_glibc, &impl_mimalloc, &impl_jemalloc,
	&impl_tcmalloc, &impl_mutex_pool, &impl_spin_pool, &impl_ck_stack, &impl_urcu_lfs,
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

static const size_t sizes[] = { 64, 1024, 65536 };

struct options {
	bool quick, list;
	uint64_t instr_ops;
	const char *out;
	const char *impl_filter, *pattern_filter;
};

void bench_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("lfpool-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* Whether name is an item of the comma-separated list (NULL: everything). */
static bool selected(const char *list, const char *name)
{
	if (!list)
		return true;
	size_t len = strlen(name);
	for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
		if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static enum pattern pattern_named(const char *name)
{
	for (int p = 0; p < PAT_COUNT; p++)
		if (strcmp(pattern_names[p], name) == 0)
			return (enum pattern)p;
	bench_die("no pattern named %s", name);
}

/* Objects each pool starts with: enough for xthread's ring and the caches,
 * capped at 8 MiB of objects. */
static unsigned prewarm_for(size_t obj_size)
{
	size_t n = (8u << 20) / obj_size;
	return n < 128 ? 128 : n > 2048 ? 2048 : (unsigned)n;
}

static void parse(int argc, char **argv, struct options *o)
{
	const char *q = getenv("BENCH_QUICK");
	o->quick = q && *q && strcmp(q, "0") != 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--quick") == 0)
			o->quick = true;
		else if (strcmp(a, "--list") == 0)
			o->list = true;
		else if (strcmp(a, "--out") == 0 && v)
			o->out = argv[++i];
		else if (strcmp(a, "--impl") == 0 && v)
			o->impl_filter = argv[++i];
		else if (strcmp(a, "--pattern") == 0 && v)
			o->pattern_filter = argv[++i];
		else if (strcmp(a, "--instr") == 0 && v)
			o->instr_ops = strtoull(argv[++i], NULL, 10) / OPS_QUANTUM * OPS_QUANTUM;
		else
			bench_die("usage: lfpool-bench [--quick] [--out FILE] [--impl A,B] "
				  "[--pattern P,Q] | --list | --instr OPS --impl A --pattern P");
	}
}

static const struct impl *impl_named(const char *name)
{
	for (size_t i = 0; i < NIMPLS; i++)
		if (strcmp(impls[i]->name, name) == 0)
			return impls[i];
	bench_die("no implementation named %s", name);
}

static void *no_op(void *arg)
{
	return arg;
}

/* One untimed single-threaded run, on this thread. */
static int instr_run(const struct options *o)
{
	if (!o->impl_filter || !o->pattern_filter)
		bench_die("--instr needs --impl and --pattern");
	/* Once a process has had a second thread, glibc's locks and malloc
	 * take their multi-threaded paths for good: count those, as the timed
	 * runs (on worker threads) and any program with a shared pool run. */
	pthread_t t;
	if (pthread_create(&t, NULL, no_op, NULL) != 0 || pthread_join(t, NULL) != 0)
		bench_die("pthread_create failed");
	const struct impl *im = impl_named(o->impl_filter);
	enum pattern p = pattern_named(o->pattern_filter);
	const char *why = NULL;
	void *shared = im->open(sizes[0], prewarm_for(sizes[0]), &why);
	if (!shared)
		bench_die("%s: not available (%s)", im->name, why);
	if (!impl_runs(im, p))
		bench_die("%s does not run %s", im->name, pattern_names[p]);
	if (im == &impl_lfpool_percpu)
		fprintf(stderr, "lfpool-bench: lfpool-percpu runs the %s path\n", percpu_path());
	void *h = im->attach(shared);
	run_pattern(im, h, p, o->instr_ops);
	im->detach(shared, h);
	im->close(shared);
	return 0;
}

static int list(void)
{
	for (size_t i = 0; i < NIMPLS; i++) {
		const char *why = NULL;
		void *shared = impls[i]->open(sizes[0], prewarm_for(sizes[0]), &why);
		if (!shared) {
			fprintf(stderr, "%s: not available (%s)\n", impls[i]->name, why);
			continue;
		}
		for (int p = PAT_PAIR; p <= PAT_BULK32; p++)
			if (impl_runs(impls[i], (enum pattern)p))
				printf("%s %s\n", impls[i]->name, pattern_names[p]);
		impls[i]->close(shared);
	}
	return 0;
}

static void print_machine(const struct plan *plan, bool quick)
{
	char model[256] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	struct utsname u;
	uname(&u);
	printf("lfpool-bench: liblfpool %s; %s, %u CPUs; Linux %s; glibc %s\n",
	       lfpool_version(), model, cpus_available(), u.release, gnu_get_libc_version());
	printf("%u repetitions of about %.0f ms each, after a calibration and a warm-up%s;"
	       " lfpool-percpu runs the %s path\n", plan->reps, plan->rep_ns / 1e6,
	       quick ? " (BENCH_QUICK)" : "", percpu_path());
}

static struct result *grow(struct result *res, size_t n, size_t *cap)
{
	if (n < *cap)
		return res;
	*cap = *cap ? *cap * 2 : 64;
	res = realloc(res, *cap * sizeof(*res));
	if (!res)
		bench_die("out of memory");
	return res;
}

/* Whether pattern p runs at this object size: the rest at the first only. */
static bool runs_at(enum pattern p, size_t size_index)
{
	return size_index == 0 || p == PAT_PAIR || p == PAT_BATCH64;
}

/* Whether im runs pattern p at size index si in this run, and on how many
 * thread counts (*lo..*hi). */
static bool planned(const struct impl *im, int p, size_t si, const struct options *o,
		    unsigned *lo, unsigned *hi)
{
	if (!selected(o->pattern_filter, pattern_names[p]) || !impl_runs(im, p) ||
	    !runs_at(p, si))
		return false;
	*lo = p == PAT_XTHREAD ? 2 : 1;
	*hi = p == PAT_SCALING ? cpus_available() : *lo;
	return true;
}

/* The measurements of im at size index si. */
static size_t planned_count(const struct impl *im, size_t si, const struct options *o)
{
	size_t k = 0;
	unsigned lo, hi;
	for (int p = 0; p < PAT_COUNT; p++)
		if (planned(im, p, si, o, &lo, &hi))
			k += hi - lo + 1;
	return k;
}

/* Progress on a terminal (stderr): measurements done of all, elapsed
 * time, and the time left at the pace so far. */
static struct {
	bool on;
	size_t done, total;
	struct timespec t0;
} progress;

static double elapsed_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - progress.t0.tv_sec) + (t.tv_nsec - progress.t0.tv_nsec) / 1e9;
}

static void progress_show(void)
{
	if (!progress.on)
		return;
	double e = elapsed_s();
	double left = progress.done ? e / progress.done * (progress.total - progress.done) : 0;
	fprintf(stderr, "\r\033[K[%zu/%zu] %.0f s elapsed, about %.0f s left", progress.done,
		progress.total, e, left);
}

/* Every selected pattern of one opened implementation; returns the new n. */
static size_t measure_impl(const struct impl *im, void *shared, size_t si,
			   const struct options *o, const struct plan *plan,
			   struct result **res, size_t n, size_t *cap)
{
	unsigned lo, hi;
	for (int p = 0; p < PAT_COUNT; p++) {
		if (!planned(im, p, si, o, &lo, &hi))
			continue;
		for (unsigned t = lo; t <= hi; t++) {
			*res = grow(*res, n, cap);
			struct result *r = &(*res)[n++];
			measure(im, shared, p, t, sizes[si], plan, r);
			fprintf(stderr, "%s%-8s %6zu B %2u thr  %-20s %8.2f ns  (%.2f..%.2f)\n",
				progress.on ? "\r\033[K" : "", pattern_names[p], sizes[si], t,
				im->name, r->ns, r->min, r->max);
			progress.done++;
			progress_show();
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	parse(argc, argv, &o);
	if (!o.instr_ops)
		peer_tls_reexec(argv);
	if (o.instr_ops)
		return instr_run(&o);
	if (o.list)
		return list();

	struct plan plan = o.quick ? (struct plan){ 7, 1e6 } : (struct plan){ 11, 20e6 };
	size_t nsizes = o.quick ? 1 : sizeof(sizes) / sizeof(sizes[0]);
	print_machine(&plan, o.quick);
	progress.on = isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &progress.t0);
	for (size_t si = 0; si < nsizes; si++)
		for (size_t i = 0; i < NIMPLS; i++)
			if (selected(o.impl_filter, impls[i]->name))
				progress.total += planned_count(impls[i], si, &o);
	struct result *res = NULL;
	size_t n = 0, cap = 0;
	for (size_t si = 0; si < nsizes; si++)
		for (size_t i = 0; i < NIMPLS; i++) {
			if (!selected(o.impl_filter, impls[i]->name))
				continue;
			const char *why = NULL;
			void *shared = impls[i]->open(sizes[si], prewarm_for(sizes[si]), &why);
			if (!shared) {
				if (si == 0)
					printf("%s: not available (%s)\n", impls[i]->name, why);
				progress.total -= planned_count(impls[i], si, &o);
				continue;
			}
			n = measure_impl(impls[i], shared, si, &o, &plan, &res, n, &cap);
			impls[i]->close(shared);
		}
	if (progress.on)
		fputs("\r\033[K", stderr);
	report_tables(res, n);
	report_targets(res, n);
	if (o.out && report_jsonl(o.out, res, n) != 0)
		bench_die("cannot write %s", o.out);
	if (selected(o.impl_filter, "lfpool-percpu") && selected(o.pattern_filter, "mem64"))
		report_mem64(o.out);
	if (selected(o.impl_filter, "lfpool-threadstatic") && selected(o.pattern_filter, "steal"))
		report_steal(o.out);
	if (selected(o.impl_filter, "lfpool-threadstatic") && selected(o.pattern_filter, "burst"))
		report_burst_rss(o.out);
	if (selected(o.impl_filter, "lfpool-threadstatic") && selected(o.pattern_filter, "placement"))
		report_placement(o.out, o.quick);
	if (selected(o.pattern_filter, "contend"))
		report_contend(impls, NIMPLS, o.impl_filter, o.quick, selected);
	if (selected(o.impl_filter, "lfpool-threadstatic") &&
	    (selected(o.pattern_filter, "manypools") || selected(o.pattern_filter, "firstuse") ||
	     selected(o.pattern_filter, "roundrobin")))
		report_manypools(o.quick, selected(o.pattern_filter, "manypools"));
	free(res);
	return 0;
}
