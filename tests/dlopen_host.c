/* SPDX-License-Identifier: MIT */
/*
 * dlopen_host.c - a plugin host: it starts its threads, then loads
 * liblfpool with dlopen() (no GLIBC_TUNABLES: tests/install-check.sh runs
 * it without), and with it a plugin that includes the headers' inline
 * paths (tests/dlopen_plugin.c).  The threads that were running before
 * the load, and new ones, use ThreadStatic pools (implicit caches,
 * per-CPU mode, an array pool) through the plugin and through the
 * library's own calls (dlsym).
 *   dlopen_host LIBRARY PLUGIN: the plugin stays loaded (the kernel may
 *   read its inline per-CPU sequences' descriptors as long as a thread
 *   that ran one lives: lfpool/ts.h).
 *   dlopen_host LIBRARY: the library's calls only; then the host closes
 *   the library, and the threads that used it exit after that (their key
 *   destructors run in the library, which must stay mapped).
 * Exit 0 when all of it works; otherwise a line on stderr says what failed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "lfpool.h"

#define THREADS 4
#define ROUNDS 2000

typedef int plugin_fn(lfpool_ts *, lfpool_ts *, lfpool_array *, unsigned, int);

static struct {
	void *lib, *plugin;
	plugin_fn *run;
	lfpool_ts *ts, *percpu;
	lfpool_array *arr;
} host;
/* The early threads wait for the load, then the host waits for their
 * work, then they wait for the close. */
static pthread_barrier_t loaded, worked, closed;

#define SYM(name) ((__typeof__(&name))dlsym(host.lib, #name))

static int fail(const char *what)
{
	fprintf(stderr, "dlopen_host: %s\n", what);
	return 1;
}

/* A thread's work once the pools exist: the plugin's inline paths, then
 * the library's bulk calls on the same pools. */
static int work(unsigned tag)
{
	int r = host.run ? host.run(host.ts, host.percpu, host.arr, tag, ROUNDS) : 0;
	if (r) {
		fprintf(stderr, "dlopen_host: thread %u: the plugin's check %d failed\n", tag, r);
		return 1;
	}
	void *objs[32];
	for (int i = 0; i < ROUNDS / 10; i++) {
		lfpool_ts *p = i & 1 ? host.percpu : host.ts;
		if (SYM(lfpool_ts_get_bulk)(p, objs, 32) != 0)
			return fail("lfpool_ts_get_bulk failed");
		SYM(lfpool_ts_put_bulk)(p, objs, 32);
		void *buf = SYM(lfpool_array_get_slow)(host.arr, lfpool_array_slot_of(100), 100, NULL);
		if (!buf)
			return fail("lfpool_array_get_slow failed");
		SYM(lfpool_array_put_slow)(host.arr, buf, 100);
	}
	return 0;
}

/* Started before the library is loaded; works after, and exits only
 * after the host closed the library and the plugin. */
static void *early(void *arg)
{
	pthread_barrier_wait(&loaded);
	intptr_t bad = work((unsigned)(uintptr_t)arg);
	pthread_barrier_wait(&worked);
	pthread_barrier_wait(&closed);
	return (void *)bad;
}

static void *late(void *arg)
{
	return (void *)(intptr_t)work((unsigned)(uintptr_t)arg);
}

static int load(const char *lib, const char *plugin)
{
	host.lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!host.lib) {
		fprintf(stderr, "dlopen_host: dlopen(%s): %s\n", lib, dlerror());
		return 1;
	}
	if (plugin) {
		host.plugin = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		if (!host.plugin) {
			fprintf(stderr, "dlopen_host: dlopen(%s): %s\n", plugin, dlerror());
			return 1;
		}
		host.run = (plugin_fn *)dlsym(host.plugin, "plugin_run");
		if (!host.run)
			return fail("the plugin has no plugin_run");
	}
	lfpool_config cfg = { .obj_size = 64 };
	host.ts = SYM(lfpool_ts_create)(&cfg);
	cfg.flags = LFPOOL_F_PERCPU;
	host.percpu = SYM(lfpool_ts_create)(&cfg);
	lfpool_array_config acfg = { .max_size = 1024 };
	host.arr = SYM(lfpool_array_create)(LFPOOL_FLAVOUR_TS, &acfg);
	if (!host.ts || !host.percpu || !host.arr)
		return fail("a create failed");
	return 0;
}

/* Every object back in its pool, the pools destroyed; without a plugin,
 * the library closed. */
static int unload(void)
{
	lfpool_stats st;
	SYM(lfpool_ts_stats)(host.ts, &st);
	if (st.live != 0)
		return fail("objects of the ThreadStatic pool are still out");
	SYM(lfpool_ts_stats)(host.percpu, &st);
	if (st.live != 0)
		return fail("objects of the per-CPU pool are still out");
	if (SYM(lfpool_array_destroy)(host.arr) || SYM(lfpool_ts_destroy)(host.percpu) ||
	    SYM(lfpool_ts_destroy)(host.ts))
		return fail("a destroy failed");
	if (!host.plugin && dlclose(host.lib))
		return fail("dlclose failed");
	return 0;
}

static int join(pthread_t *t, int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3)
		return fail("usage: dlopen_host LIBRARY [PLUGIN]");
	pthread_t early_t[THREADS], late_t[THREADS];
	pthread_barrier_init(&loaded, NULL, THREADS + 1);
	pthread_barrier_init(&worked, NULL, THREADS + 1);
	pthread_barrier_init(&closed, NULL, THREADS + 1);
	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&early_t[i], NULL, early, (void *)(i + 1)))
			return fail("pthread_create failed");
	if (load(argv[1], argc == 3 ? argv[2] : NULL))
		return 1;	/* the early threads still wait: the exit ends them */
	pthread_barrier_wait(&loaded);
	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&late_t[i], NULL, late, (void *)(THREADS + i + 1)))
			return fail("pthread_create failed");
	int bad = join(late_t, THREADS);
	pthread_barrier_wait(&worked);
	bad |= unload();
	pthread_barrier_wait(&closed);	/* the early threads exit after it */
	return join(early_t, THREADS) | bad;
}
