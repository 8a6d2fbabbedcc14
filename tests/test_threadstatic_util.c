/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_util.c - see test_threadstatic_util.h.
 */
#include <stdlib.h>
#include <string.h>

#include "test_threadstatic_util.h"

lfpool_config ts_config(size_t obj_size, unsigned magazine_size, unsigned depot_max)
{
	lfpool_config c;
	memset(&c, 0, sizeof(c));
	c.obj_size = obj_size;
	c.magazine_size = magazine_size;
	c.depot_max = depot_max;
	return c;
}

lfpool_stats stats_of(lfpool_ts *p)
{
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	return st;
}

void run_on_thread(void *(*fn)(void *), void *arg)
{
	run_threads(1, fn, arg, 0);
}

void run_threads(unsigned n, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t tid[64];
	if (n > 64)
		abort();
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&tid[i], NULL, fn, (char *)args + i * size) != 0)
			abort();
	for (unsigned i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

static void *peak_alloc_fn(size_t size, size_t align, void *ctx)
{
	struct peak_alloc *p = ctx;
	void *mem = p->inner.a.alloc(size, align, p->inner.a.ctx);
	pthread_mutex_lock(&p->inner.lock);
	if (p->inner.live_bytes > p->peak_bytes)
		p->peak_bytes = p->inner.live_bytes;
	pthread_mutex_unlock(&p->inner.lock);
	return mem;
}

static void peak_free_fn(void *ptr, size_t size, void *ctx)
{
	struct peak_alloc *p = ctx;
	p->inner.a.free(ptr, size, p->inner.a.ctx);
}

void peak_alloc_init(struct peak_alloc *p)
{
	test_alloc_init(&p->inner);
	p->peak_bytes = 0;
	p->a = (lfpool_allocator){ peak_alloc_fn, peak_free_fn, p };
}

void peak_alloc_fini(struct peak_alloc *p)
{
	test_alloc_fini(&p->inner);
}

size_t peak_alloc_live(struct peak_alloc *p)
{
	pthread_mutex_lock(&p->inner.lock);
	size_t n = p->inner.live_bytes;
	pthread_mutex_unlock(&p->inner.lock);
	return n;
}

size_t peak_alloc_peak(struct peak_alloc *p)
{
	pthread_mutex_lock(&p->inner.lock);
	size_t n = p->peak_bytes;
	pthread_mutex_unlock(&p->inner.lock);
	return n;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return x < y ? -1 : x > y;
}

bool all_distinct(void *const *objs, size_t n)
{
	void **copy = malloc(n * sizeof(*copy) + 1);
	memcpy(copy, objs, n * sizeof(*copy));
	qsort(copy, n, sizeof(*copy), cmp_ptr);
	bool ok = n == 0 || copy[0] != NULL;
	for (size_t i = 1; ok && i < n; i++)
		ok = copy[i] != copy[i - 1];
	free(copy);
	return ok;
}
