/* SPDX-License-Identifier: MIT */
/*
 * support.c - see support.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

struct test_block {
	void *ptr;
	size_t size;
};

static void *counting_alloc(size_t size, size_t align, void *ctx)
{
	struct test_alloc *t = ctx;
	void *p = NULL;
	pthread_mutex_lock(&t->lock);
	if (t->fail_after == 0) {
		t->failed++;
		goto out;
	}
	if (t->fail_after > 0)
		t->fail_after--;
	if (t->nblocks == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct test_block *b = realloc(t->blocks, cap * sizeof(*b));
		if (!b)
			goto out;
		t->blocks = b;
		t->cap = cap;
	}
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) != 0) {
		p = NULL;
		goto out;
	}
	if ((uintptr_t)p % align)
		t->misaligned++;
	t->blocks[t->nblocks++] = (struct test_block){ p, size };
	t->allocs++;
	t->live++;
	t->live_bytes += size;
out:
	pthread_mutex_unlock(&t->lock);
	return p;
}

static void counting_free(void *ptr, size_t size, void *ctx)
{
	struct test_alloc *t = ctx;
	pthread_mutex_lock(&t->lock);
	size_t i = 0;
	while (i < t->nblocks && t->blocks[i].ptr != ptr)
		i++;
	if (i == t->nblocks || t->blocks[i].size != size) {
		/* Unknown or wrong size: count it and leave the block alone. */
		t->bad_frees++;
		pthread_mutex_unlock(&t->lock);
		return;
	}
	t->blocks[i] = t->blocks[--t->nblocks];
	t->frees++;
	t->live--;
	t->live_bytes -= size;
	pthread_mutex_unlock(&t->lock);
	free(ptr);
}

void test_alloc_init(struct test_alloc *t)
{
	memset(t, 0, sizeof(*t));
	t->a = (lfpool_allocator){ counting_alloc, counting_free, t };
	pthread_mutex_init(&t->lock, NULL);
	t->fail_after = -1;
}

void test_alloc_fini(struct test_alloc *t)
{
	for (size_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i].ptr);
	free(t->blocks);
	pthread_mutex_destroy(&t->lock);
}

void test_alloc_finish(struct test_alloc *t)
{
	cr_assert_eq(t->live, 0, "%ld blocks (%zu bytes) not given back", t->live, t->live_bytes);
	cr_assert_eq(t->bad_frees, 0, "%ld frees of an unknown block or with a wrong size",
		     t->bad_frees);
	cr_assert_eq(t->misaligned, 0, "%ld blocks misaligned", t->misaligned);
	test_alloc_fini(t);
}

void test_alloc_fail_after(struct test_alloc *t, long n)
{
	pthread_mutex_lock(&t->lock);
	t->fail_after = n;
	pthread_mutex_unlock(&t->lock);
}

long test_alloc_live(struct test_alloc *t)
{
	pthread_mutex_lock(&t->lock);
	long n = t->live;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void hook_init(void *obj, void *ctx)
{
	struct hooks *h = ctx;
	memset(obj, HOOK_INIT_BYTE, h->obj_size);
	__atomic_fetch_add(&h->init, 1, __ATOMIC_RELAXED);
}

void hook_reset(void *obj, void *ctx)
{
	(void)obj;
	__atomic_fetch_add(&((struct hooks *)ctx)->reset, 1, __ATOMIC_RELAXED);
}

void hook_fini(void *obj, void *ctx)
{
	(void)obj;
	__atomic_fetch_add(&((struct hooks *)ctx)->fini, 1, __ATOMIC_RELAXED);
}

lfpool_config hooked_config(struct hooks *h, size_t obj_size, size_t align)
{
	*h = (struct hooks){ .obj_size = obj_size };
	return (lfpool_config){
		.obj_size = obj_size, .align = align,
		.init = hook_init, .reset = hook_reset, .fini = hook_fini, .hook_ctx = h,
	};
}

lfpool_config counted_config(struct test_alloc *t, struct hooks *h, size_t obj_size, size_t align)
{
	test_alloc_init(t);
	lfpool_config c = hooked_config(h, obj_size, align);
	c.allocator = &t->a;
	return c;
}

long hook_count(const long *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static void recording_hook(const char *pool, const void *ptr, const char *problem, void *ctx)
{
	struct error_log *log = ctx;
	log->calls++;
	snprintf(log->pool, sizeof(log->pool), "%s", pool);
	log->ptr = ptr;
	snprintf(log->problem, sizeof(log->problem), "%s", problem);
}

void record_errors(struct error_log *log)
{
	memset(log, 0, sizeof(*log));
	lfpool_set_error_hook(recording_hook, log);
}

/* The flavour table: thin wrappers, so that every call has one type. */
static void *pool_create(const lfpool_config *cfg) { return lfpool_pool_create(cfg); }
static void pool_destroy(void *p) { lfpool_pool_destroy(p); }
static void *pool_get(void *p) { return lfpool_pool_get(p); }
static void pool_put(void *p, void *o) { lfpool_pool_put(p, o); }
static int pool_prewarm(void *p, size_t n) { return lfpool_pool_prewarm(p, n); }
static size_t pool_trim(void *p, size_t keep) { return lfpool_pool_trim(p, keep); }
static int pool_owns(const void *p, const void *o) { return lfpool_pool_owns(p, o); }
static void pool_stats(const void *p, lfpool_stats *st) { lfpool_pool_stats(p, st); }

static void *conc_create(const lfpool_config *cfg) { return lfpool_concurrent_create(cfg); }
static void conc_destroy(void *p) { lfpool_concurrent_destroy(p); }
static void *conc_get(void *p) { return lfpool_concurrent_get(p); }
static void conc_put(void *p, void *o) { lfpool_concurrent_put(p, o); }
static int conc_prewarm(void *p, size_t n) { return lfpool_concurrent_prewarm(p, n); }
static size_t conc_trim(void *p, size_t keep) { return lfpool_concurrent_trim(p, keep); }
static int conc_owns(const void *p, const void *o) { return lfpool_concurrent_owns(p, o); }
static void conc_stats(const void *p, lfpool_stats *st) { lfpool_concurrent_stats(p, st); }

const struct flavour_ops flavours[FL_COUNT] = {
	[FL_POOL] = { "pool", pool_create, pool_destroy, pool_get, pool_put,
		      pool_prewarm, pool_trim, pool_owns, pool_stats },
	[FL_CONCURRENT] = { "concurrent", conc_create, conc_destroy, conc_get, conc_put,
			    conc_prewarm, conc_trim, conc_owns, conc_stats },
};

void fill_pattern(void *buf, size_t n, unsigned seed)
{
	unsigned char *b = buf;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

bool check_pattern(const void *buf, size_t n, unsigned seed)
{
	const unsigned char *b = buf;
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8)))
			return false;
	return true;
}

/* ---- ThreadStatic ---- */

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

void parked_hook_init(struct parked_hook *h)
{
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->armed = h->parked = h->released = false;
}

void parked_hook_arm(struct parked_hook *h)
{
	pthread_mutex_lock(&h->lock);
	h->armed = true;
	pthread_mutex_unlock(&h->lock);
}

void parked_hook(void *obj, void *ctx)
{
	(void)obj;
	struct parked_hook *h = ctx;
	pthread_mutex_lock(&h->lock);
	if (h->armed && !h->parked) {
		h->parked = true;
		pthread_cond_broadcast(&h->cond);
		while (!h->released)
			pthread_cond_wait(&h->cond, &h->lock);
	}
	pthread_mutex_unlock(&h->lock);
}

void parked_hook_wait(struct parked_hook *h)
{
	pthread_mutex_lock(&h->lock);
	while (!h->parked)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

void parked_hook_release(struct parked_hook *h)
{
	pthread_mutex_lock(&h->lock);
	h->released = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

void parked_hook_fini(struct parked_hook *h)
{
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
}

/* Wait for the child pid: its exit status, or 128 + its signal. */
static int child_status(pid_t pid)
{
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* A gets_to_capacity child's status: 0, or what it means. */
static void assert_child_reached_capacity(int status)
{
	cr_assert_eq(status, 0, "the child's get at capacity: %s (status %d)",
		     status == 128 + SIGALRM ? "hung" : "did not fail with ENOBUFS", status);
}

/* fork(); the child runs fn(arg) under alarm(seconds) and _exits with its
 * result: the child's status (child_status). */
static int fork_child_status(int (*fn)(void *), void *arg, unsigned seconds)
{
	pid_t pid = fork();
	cr_assert_neq(pid, -1, "fork failed");
	if (pid == 0) {
		alarm(seconds);
		_exit(fn(arg));
	}
	return child_status(pid);
}

/* The child's step (struct gets_to_capacity in support.h). */
static int gets_to_capacity(void *arg)
{
	const struct gets_to_capacity *g = arg;
	for (int i = 0; i < g->most; i++) {
		errno = 0;
		if (!g->get(g->pool))
			return errno == ENOBUFS ? 0 : 1;
	}
	return 2;
}

void *fork_while_parked(struct parked_hook *h, void *(*fn)(void *), void *arg,
			struct gets_to_capacity *g)
{
	parked_hook_arm(h);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, fn, arg), 0);
	parked_hook_wait(h);
	int status = fork_child_status(gets_to_capacity, g, 10);
	parked_hook_release(h);
	void *ret;
	cr_assert_eq(pthread_join(t, &ret), 0);
	assert_child_reached_capacity(status);
	return ret;
}

void forking_hook(void *obj, void *ctx)
{
	(void)obj;
	struct forking_hook *f = ctx;
	if (!f->armed)
		return;
	f->armed = false;
	pid_t pid = fork();
	if (pid == 0) {
		f->in_child = true;
		alarm(10);
	} else {
		f->child = pid;
	}
}

void forked_in_hook_finish(struct forking_hook *f, struct gets_to_capacity *g)
{
	if (f->in_child)
		_exit(gets_to_capacity(g));
	cr_assert_gt(f->child, 0, "the hook did not fork");
	assert_child_reached_capacity(child_status(f->child));
}
