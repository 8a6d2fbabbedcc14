/* SPDX-License-Identifier: MIT */
/*
 * tests/tsan_handover.c - a user's program under ThreadSanitizer, linked
 * against the normal (uninstrumented) library: threads take objects from
 * every kind of shared pool, write every byte, check them and give them
 * back, with no synchronization of their own, so objects go from thread to
 * thread only through the pools; the pools' reset and fini hooks write the
 * objects, and trims run among the gets and puts.  Built with -fsanitize=thread by
 * tests/tsan-handover.sh, which requires no TSan report -- and, built with
 * -DLFPOOL_NO_TSAN_ANNOTATIONS (the negative control), at least one: the
 * headers' annotations are what keeps a user's TSan run clean.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lfpool.h>

#define THREADS 4
#define ROUNDS 200
#define BATCH 24		/* > 2 magazines of 4: objects go through the depot */
#define OBJ 64

struct pools {
	lfpool_concurrent *conc;
	lfpool_ts *ts;		/* implicit per-thread caches */
	lfpool_ts *percpu;	/* per-CPU areas */
	lfpool_ts *ts_explicit;	/* explicit caches, one per thread */
	lfpool_array *array;	/* ThreadStatic classes, inline get/put */
	lfpool_rc *rc;		/* counted objects on a Concurrent pool */
	lfpool_closure_pool *closures;
};

static int failures;

/* Write the thread's mark into every byte of obj, then check it. */
static void use(void *obj, size_t size, unsigned char mark)
{
	memset(obj, mark, size);
	for (size_t i = 0; i < size; i++)
		if (((unsigned char *)obj)[i] != mark)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

/* Hooks that write the whole object, on whichever thread the library runs
 * them: reset on the putting thread, fini on the trimming one. */
static void scrub(void *obj, void *ctx)
{
	memset(obj, 0, *(size_t *)ctx);
}

static void add_mark(void *capture, void *arg)
{
	*(int *)arg += *(int *)capture;
}

static void *worker(void *arg)
{
	const struct pools *p = arg;
	unsigned char mark = (unsigned char)(uintptr_t)pthread_self();
	lfpool_ts_cache *cache = lfpool_ts_cache_create(p->ts_explicit);
	void *objs[BATCH];
	int sum = 0;
	if (!cache)
		abort();
	for (int r = 0; r < ROUNDS; r++) {
		/* One at a time: Concurrent, implicit, explicit caches, arrays. */
		for (int i = 0; i < BATCH; i++) {
			void *c = lfpool_concurrent_get(p->conc);
			void *t = lfpool_ts_get(p->ts);
			void *pc = lfpool_ts_get(p->percpu);
			void *e = lfpool_ts_cache_get(cache);
			void *a = lfpool_array_get(p->array, OBJ, NULL);
			void *rc = lfpool_rc_get(p->rc);
			if (!c || !t || !pc || !e || !a || !rc)
				abort();
			use(pc, OBJ, mark);
			lfpool_ts_put(p->percpu, pc);
			use(c, OBJ, mark);
			use(t, OBJ, mark);
			use(e, OBJ, mark);
			use(a, OBJ, mark);
			use(rc, OBJ, mark);
			objs[i] = c;
			lfpool_ts_put(p->ts, t);
			lfpool_ts_cache_put(cache, e);
			lfpool_array_put(p->array, a);
			lfpool_rc_release(rc);
		}
		for (int i = 0; i < BATCH; i++)
			lfpool_concurrent_put(p->conc, objs[i]);
		/* Bulk. */
		if (lfpool_ts_get_bulk(p->ts, objs, BATCH) != 0)
			abort();
		for (int i = 0; i < BATCH; i++)
			use(objs[i], OBJ, mark);
		lfpool_ts_put_bulk(p->ts, objs, BATCH);
		if (lfpool_concurrent_get_bulk(p->conc, objs, BATCH) != 0)
			abort();
		for (int i = 0; i < BATCH; i++)
			use(objs[i], OBJ, mark);
		lfpool_concurrent_put_bulk(p->conc, objs, BATCH);
		/* Closures: armed by the library, run and released here. */
		int capture = r;
		lfpool_closure *cl = lfpool_closure_get(p->closures, add_mark, &capture,
						       sizeof(capture));
		if (!cl)
			abort();
		lfpool_closure_run(p->closures, cl, &sum);
		if (r % 16 == 0) {	/* fini runs here, on objects others wrote */
			lfpool_concurrent_trim(p->conc, 0);
			lfpool_ts_trim(p->ts, 0);
			lfpool_array_trim(p->array, 0);
		}
	}
	lfpool_ts_cache_destroy(cache);
	return NULL;
}

int main(void)
{
	static size_t obj_size = OBJ;
	lfpool_config cfg = { .obj_size = OBJ, .magazine_size = 4, .depot_max = 2,
			      .prewarm = 64, .reset = scrub, .fini = scrub,
			      .hook_ctx = &obj_size };
	lfpool_config pccfg = cfg;
	pccfg.flags = LFPOOL_F_PERCPU;
	lfpool_array_config acfg = { .min_size = OBJ, .max_size = 4 * OBJ, .magazine_size = 4,
				     .depot_max = 2 };
	lfpool_config ccfg = { .obj_size = sizeof(int), .magazine_size = 4, .depot_max = 2 };
	struct pools p = {
		.conc = lfpool_concurrent_create(&cfg),
		.ts = lfpool_ts_create(&cfg),
		.percpu = lfpool_ts_create(&pccfg),
		.ts_explicit = lfpool_ts_create(&cfg),
		.array = lfpool_array_create(LFPOOL_FLAVOUR_TS, &acfg),
		.rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg),
		.closures = lfpool_closure_pool_create(LFPOOL_FLAVOUR_TS, &ccfg),
	};
	if (!p.conc || !p.ts || !p.percpu || !p.ts_explicit || !p.array || !p.rc || !p.closures) {
		perror("tsan_handover: create");
		return 1;
	}
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, &p) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	lfpool_closure_pool_destroy(p.closures);
	lfpool_rc_destroy(p.rc);
	lfpool_array_destroy(p.array);
	if (lfpool_ts_destroy(p.ts_explicit) != 0 || lfpool_ts_destroy(p.percpu) != 0 ||
	    lfpool_ts_destroy(p.ts) != 0)
		return 1;
	lfpool_concurrent_destroy(p.conc);
	printf("tsan_handover: %d threads x %d rounds, %d bad bytes\n", THREADS, ROUNDS, failures);
	return failures != 0;
}
