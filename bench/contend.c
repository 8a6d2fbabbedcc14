/* SPDX-License-Identifier: MIT */
/*
 * contend.c - fairness under oversubscription: CONTEND_THREADS
 * threads, pinned round-robin to the CPUs there are (8 on 2 CPUs), run
 * get+put pairs on one shared instance for a fixed time; each thread's
 * share of all operations is printed.  Fair is 1/CONTEND_THREADS each; the
 * target for lfpool-concurrent is every share between 6 % and 20 %.  Each
 * row ends with the CPU time per operation (run time x CPUs / operations):
 * per-thread implementations (floor, caches, allocators) run there too, as
 * the throughput to compare with at 8 threads.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define CONTEND_THREADS 8
#define CONTEND_CHUNK OPS_QUANTUM

struct contend {
	const struct impl *im;
	void *shared;
	pthread_barrier_t start;
	int stop;
	uint64_t ops[CONTEND_THREADS];
	unsigned cpu[CONTEND_THREADS];
};

struct contend_arg {
	struct contend *c;
	unsigned id;
};

static void *contend_thread(void *arg)
{
	struct contend_arg *a = arg;
	struct contend *c = a->c;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(c->cpu[a->id], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	void *h = c->im->attach(c->shared);
	uint64_t n = 0;
	pthread_barrier_wait(&c->start);
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		c->im->loops->pair(h, CONTEND_CHUNK);
		n += CONTEND_CHUNK;
	}
	c->ops[a->id] = n;
	c->im->detach(c->shared, h);
	return NULL;
}

/* Run im contended for ms milliseconds; the shares into share[] (%), the
 * CPU time per operation (ms x CPUs / operations) into *ns. */
static int contend_run(const struct impl *im, unsigned ms, double share[CONTEND_THREADS], double *ns)
{
	const char *why = NULL;
	static struct contend c;
	memset(&c, 0, sizeof(c));
	c.im = im;
	c.shared = im->open(64, 2048, &why);
	if (!c.shared)
		return -1;
	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	unsigned k = 0;
	for (unsigned i = 0; i < CONTEND_THREADS; i++) {
		do
			k = (k + 1) % CPU_SETSIZE;
		while (!CPU_ISSET(k, &set));
		c.cpu[i] = k;
	}
	pthread_barrier_init(&c.start, NULL, CONTEND_THREADS + 1);
	pthread_t t[CONTEND_THREADS];
	struct contend_arg args[CONTEND_THREADS];
	for (unsigned i = 0; i < CONTEND_THREADS; i++) {
		args[i] = (struct contend_arg){ &c, i };
		if (pthread_create(&t[i], NULL, contend_thread, &args[i]) != 0)
			bench_die("contend: pthread_create failed");
	}
	pthread_barrier_wait(&c.start);
	struct timespec d = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&d, NULL);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	uint64_t total = 0;
	for (unsigned i = 0; i < CONTEND_THREADS; i++) {
		pthread_join(t[i], NULL);
		total += c.ops[i];
	}
	pthread_barrier_destroy(&c.start);
	im->close(c.shared);
	for (unsigned i = 0; i < CONTEND_THREADS; i++)
		share[i] = total ? 100.0 * c.ops[i] / total : 0;
	*ns = total ? ms * 1e6 * cpus_available() / total : 0;
	return 0;
}

void report_contend(const struct impl *const *impls, size_t n, const char *filter, bool quick,
		    bool (*selected)(const char *list, const char *name))
{
	printf("\n== contend: %d threads on %u CPUs, get+put pairs on one shared instance (or one each) for %s;"
	       " each thread's share of the operations (%%; fair: %.1f)\n",
	       CONTEND_THREADS, cpus_available(), quick ? "0.3 s" : "2 s", 100.0 / CONTEND_THREADS);
	for (size_t i = 0; i < n; i++) {
		const struct impl *im = impls[i];
		if (!selected(filter, im->name))
			continue;
		double share[CONTEND_THREADS], lo = 100, hi = 0, ns;
		if (contend_run(im, quick ? 300 : 2000, share, &ns) != 0)
			continue;
		printf("%-20s", im->name);
		for (unsigned t = 0; t < CONTEND_THREADS; t++) {
			printf(" %5.1f", share[t]);
			lo = share[t] < lo ? share[t] : lo;
			hi = share[t] > hi ? share[t] : hi;
		}
		printf("   min %4.1f max %4.1f  %6.2f ns/op", lo, hi, ns);
		if (strcmp(im->name, "lfpool-concurrent") == 0)
			printf("  %s (target: every share in 6..20)", lo >= 6 && hi <= 20 ? "met" : "MISSED");
		printf("\n");
	}
}
