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
 * program is apart from the others.  Not under AddressSanitizer or
 * ThreadSanitizer, whose own malloc the interposer would bypass.
 */
#include <malloc.h>
#include <pthread.h>

#include <criterion/criterion.h>

#include "support.h"

/* Not under ThreadSanitizer either: its free would see pointers its
 * malloc never gave. */
#if defined(__SANITIZE_THREAD__)
# define TEST_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define TEST_TSAN 1
# endif
#endif

#if !defined(TEST_ASAN) && !defined(TEST_TSAN)
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

/* Run first_use on a new thread and wait for it; its get must succeed. */
static void first_use_in_new_thread(struct first_use *f)
{
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, first_use, f), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_not_null(f->got);
}

Test(threadstatic_first, a_threads_first_get_calls_no_malloc)
{
	lfpool_config cfg = ts_config(64, 16, 4);
	cfg.prewarm = 64;
	struct first_use f = { .pool = lfpool_ts_create(&cfg) };
	cr_assert_not_null(f.pool);
	/* The first thread makes the library's thread key (once per process). */
	for (int i = 0; i < 3; i++) {
		first_use_in_new_thread(&f);
		if (i > 0)
			cr_expect_eq(f.mallocs, 0, "thread %d's first get+put called malloc %u times",
				     i, f.mallocs);
	}
	cr_assert_eq(lfpool_ts_destroy(f.pool), 0);
}

/* lfpool/ts.h: no malloc while the pool's id is below 8, which it is when
 * fewer than 8 other pools are alive at its create, whatever came and
 * went before.  With the most recently freed id taken (a stack), the
 * pool made after these 64 got id 63, and a new thread's first get grew
 * its directory past its 8 slots in TLS: one realloc. */
Test(threadstatic_first, a_threads_first_get_calls_no_malloc_after_many_pools_came_and_went)
{
	enum { MANY = 64 };
	lfpool_config cfg = ts_config(64, 16, 4);
	cfg.prewarm = 64;
	lfpool_ts *many[MANY];
	for (int i = 0; i < MANY; i++)
		cr_assert_not_null(many[i] = lfpool_ts_create(&cfg));
	for (int i = 0; i < MANY; i++)
		cr_assert_eq(lfpool_ts_destroy(many[i]), 0);
	struct first_use f = { .pool = lfpool_ts_create(&cfg) };
	cr_assert_not_null(f.pool);
	/* The first thread makes the library's thread key (once per process). */
	for (int i = 0; i < 2; i++)
		first_use_in_new_thread(&f);
	cr_expect_eq(f.mallocs, 0, "a new thread's first get+put called malloc %u times "
		     "(the pool's id: %u)", f.mallocs, ((struct lfpool_ts_fast *)f.pool)->id);
	cr_assert_eq(lfpool_ts_destroy(f.pool), 0);
}
#endif

/* The id of a ThreadStatic pool (its slot in the threads' directories). */
static uint32_t id_of(lfpool_ts *p)
{
	return ((const struct lfpool_ts_fast *)p)->id;
}

/* lfpool/ts.h: a new pool takes the lowest free id, whatever the order
 * of the destroys that freed them: 20 of 24 pools destroyed in a shuffled
 * order, then 20 made again take the freed ids lowest first (a stack of
 * free ids would hand them out in the reverse order of the destroys). */
Test(threadstatic_first, a_new_pool_takes_the_lowest_free_id)
{
	enum { N = 24, FREED = 20 };
	lfpool_config cfg = ts_config(64, 16, 4);
	lfpool_ts *p[N];
	bool live[N];
	for (int i = 0; i < N; i++) {
		cr_assert_not_null(p[i] = lfpool_ts_create(&cfg));
		live[i] = true;
	}
	int order[N];
	for (int i = 0; i < N; i++)
		order[i] = i;
	uint32_t x = 12345;
	for (int i = N - 1; i > 0; i--) {
		x = x * 1103515245u + 12345u;
		int j = (int)((x >> 16) % (uint32_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	uint32_t freed[FREED];
	for (int k = 0; k < FREED; k++) {
		freed[k] = id_of(p[order[k]]);
		cr_assert_eq(lfpool_ts_destroy(p[order[k]]), 0);
		live[order[k]] = false;
	}
	/* The freed ids, ascending (insertion sort). */
	for (int i = 1; i < FREED; i++)
		for (int j = i; j > 0 && freed[j - 1] > freed[j]; j--) {
			uint32_t t = freed[j];
			freed[j] = freed[j - 1];
			freed[j - 1] = t;
		}
	lfpool_ts *again[FREED];
	for (int k = 0; k < FREED; k++) {
		cr_assert_not_null(again[k] = lfpool_ts_create(&cfg));
		cr_expect_eq(id_of(again[k]), freed[k], "new pool %d took id %u, not the lowest free %u", k,
			     id_of(again[k]), freed[k]);
	}
	/* Every pool, kept or new, still works. */
	for (int i = 0; i < N + FREED; i++) {
		lfpool_ts *q = i < N ? p[i] : again[i - N];
		if (i < N && !live[i])
			continue;
		void *obj = lfpool_ts_get(q);
		cr_assert_not_null(obj);
		lfpool_ts_put(q, obj);
		cr_assert_eq(lfpool_ts_destroy(q), 0);
	}
}

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
	cr_assert_eq(lfpool_ts_destroy(p), 0);
	test_alloc_finish(&ta);
}

static pthread_barrier_t all_have_caches;

/* get_put on the pool *arg names (run_threads passes each its entry), then
 * wait until every thread has its cache, so that they all exist at once. */
static void *get_put_of(void *arg)
{
	get_put(*(lfpool_ts **)arg);
	pthread_barrier_wait(&all_have_caches);
	return NULL;
}

/* lfpool/ts.h: after a drain and a trim keeping 0 with nothing out, a pool
 * holds at most its kept objects and 64 KiB of its backing allocator.  The
 * magazines that exited threads' caches left with the pool count in that:
 * here 64 threads leave 128 magazines of 2 KiB, and their objects went
 * back loose, so the depot holds no spare magazine for the trim to free,
 * only those kept ones. */
Test(threadstatic_first, a_trim_gives_back_the_magazines_exited_threads_left)
{
	lfpool_config cfg = ts_config(64, 256, 4);
	lfpool_ts *p = lfpool_ts_create(&cfg);
	cr_assert_not_null(p);
	lfpool_ts *args[64];
	for (int i = 0; i < 64; i++)
		args[i] = p;
	cr_assert_eq(pthread_barrier_init(&all_have_caches, NULL, 64), 0);
	run_threads(64, get_put_of, args, sizeof(args[0]));
	pthread_barrier_destroy(&all_have_caches);
	lfpool_ts_drain(p);
	lfpool_ts_trim(p, 0);
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	cr_expect_eq(st.retained, 0);
	cr_expect_leq(st.bytes_held, 64 * 1024, "%llu bytes held after drain and trim",
		      (unsigned long long)st.bytes_held);
	cr_assert_eq(lfpool_ts_destroy(p), 0);
}
