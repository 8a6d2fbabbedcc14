/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_first.c - what a thread's first use of a ThreadStatic
 * pool costs in memory: no call to malloc (its table and first directory
 * lie in the library's TLS, its first cache in its home), and no slab of
 * magazines made or freed when threads come and go one after another
 * (a leaving cache's magazines stay for the next thread; a trim gives
 * them back).  lfpool/ts.h states both.
 *
 * The malloc family is interposed here, counting per thread, so this
 * program is apart from the others.  Not under AddressSanitizer, whose own
 * malloc the interposer would bypass.
 */
#include <malloc.h>
#include <pthread.h>

#include <criterion/criterion.h>

#include "support.h"

#ifndef TEST_ASAN
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

/* Calls of the malloc family by the calling thread while counting is on. */
static __thread unsigned mallocs;
static __thread bool counting;

static void count(void)
{
	if (counting)
		mallocs++;
}

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *ptr, size_t size) { count(); return __libc_realloc(ptr, size); }
void *memalign(size_t align, size_t size) { count(); return __libc_memalign(align, size); }
void *aligned_alloc(size_t align, size_t size) { count(); return __libc_memalign(align, size); }
int posix_memalign(void **out, size_t align, size_t size)
{
	count();
	void *p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

struct first_use {
	lfpool_ts *pool;
	unsigned mallocs;
	void *got;
};

/* A new thread's first get and put of f->pool, counting its mallocs. */
static void *first_use(void *arg)
{
	struct first_use *f = arg;
	counting = true;
	f->got = lfpool_ts_get(f->pool);
	lfpool_ts_put(f->pool, f->got);
	counting = false;
	f->mallocs = mallocs;
	return NULL;
}

Test(threadstatic_first, a_threads_first_get_calls_no_malloc)
{
	lfpool_config cfg = ts_config(64, 16, 4);
	cfg.prewarm = 64;
	struct first_use f = { .pool = lfpool_ts_create(&cfg) };
	cr_assert_not_null(f.pool);
	/* The first thread makes the library's thread key (once per process). */
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		cr_assert_eq(pthread_create(&t, NULL, first_use, &f), 0);
		cr_assert_eq(pthread_join(t, NULL), 0);
		cr_assert_not_null(f.got);
		if (i > 0)
			cr_expect_eq(f.mallocs, 0, "thread %d's first get+put called malloc %u times",
				     i, f.mallocs);
	}
	cr_assert_eq(lfpool_ts_destroy(f.pool), 0);
}
#endif

/* A new thread's first get and put, then its exit. */
static void *get_put(void *arg)
{
	lfpool_ts *p = arg;
	lfpool_ts_put(p, lfpool_ts_get(p));
	return NULL;
}

Test(threadstatic_first, threads_one_after_another_reuse_the_magazines_slab)
{
	struct test_alloc ta;
	test_alloc_init(&ta);
	lfpool_config cfg = ts_config(64, 16, 4);
	cfg.prewarm = 64;
	cfg.allocator = &ta.a;
	lfpool_ts *p = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	run_on_thread(get_put, p);
	lfpool_stats before, after;
	lfpool_ts_stats(p, &before);
	long allocs = ta.allocs;
	for (int i = 0; i < 5; i++)
		run_on_thread(get_put, p);
	lfpool_ts_stats(p, &after);
	cr_expect_eq(ta.allocs, allocs, "threads coming and going allocated %ld blocks",
		     ta.allocs - allocs);
	cr_expect_eq(after.slab_frees, before.slab_frees);
	cr_expect_eq(after.bytes_held, before.bytes_held);
	/* A trim gives the magazines' slab back. */
	lfpool_ts_trim(p, 0);
	lfpool_stats trimmed;
	lfpool_ts_stats(p, &trimmed);
	cr_expect_lt(trimmed.bytes_held, after.bytes_held);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	test_alloc_finish(&ta);
}
