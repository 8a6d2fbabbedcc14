/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - the backing allocator the stress pools get: it counts every
 * allocation and free (and their bytes, and the most held at once), and
 * fails on demand, from a given
 * call on or one call in k, to inject out-of-memory.
 */
#include <sched.h>
#include <stdlib.h>

#include "stress.h"

/* Whether call number n must fail: from fail_from on, or one in k by hash. */
static bool must_fail(const struct stress_alloc *sa, uint64_t n)
{
	int64_t from = __atomic_load_n(&sa->fail_from, __ATOMIC_RELAXED);
	if (from >= 0 && n >= (uint64_t)from)
		return true;
	unsigned k = __atomic_load_n(&sa->fail_one_in, __ATOMIC_RELAXED);
	return k && ((n * UINT64_C(0x9e3779b97f4a7c15)) >> 40) % k == 0;
}

/* A block of this size and alignment that rc keeps, or NULL. */
static void *recycled(struct stress_recycler *rc, size_t size, size_t align)
{
	void *p = NULL;
	pthread_mutex_lock(&rc->lock);
	for (unsigned i = rc->n; i-- > 0;) {
		if (rc->block[i].size == size && (uintptr_t)rc->block[i].p % align == 0) {
			p = rc->block[i].p;
			rc->block[i] = rc->block[--rc->n];
			rc->reused++;
			break;
		}
	}
	pthread_mutex_unlock(&rc->lock);
	return p;
}

/* Keep p for reuse; false when rc is full. */
static bool recycle(struct stress_recycler *rc, void *p, size_t size)
{
	bool kept = false;
	pthread_mutex_lock(&rc->lock);
	if (rc->n < STRESS_RECYCLE_MAX) {
		rc->block[rc->n++] = (typeof(rc->block[0])){ p, size };
		kept = true;
	}
	pthread_mutex_unlock(&rc->lock);
	return kept;
}

/* posix_memalign (or a recycled block), counted; NULL when this call must
 * fail. */
static void *counting_alloc(size_t size, size_t align, void *ctx)
{
	struct stress_alloc *sa = ctx;
	uint64_t n = __atomic_fetch_add(&sa->calls, 1, __ATOMIC_RELAXED);
	void *p;
	if (must_fail(sa, n) ||
	    (!(sa->recycler && (p = recycled(sa->recycler, size, align)) != NULL) &&
	     posix_memalign(&p, align, size) != 0)) {
		__atomic_fetch_add(&sa->failures, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	__atomic_fetch_add(&sa->allocs, 1, __ATOMIC_RELAXED);
	int64_t held = __atomic_add_fetch(&sa->bytes, (int64_t)size, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&sa->peak, __ATOMIC_RELAXED);
	while (held > peak && !__atomic_compare_exchange_n(&sa->peak, &peak, held, false,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return p;
}

/* free, counted with the size the pool says it allocated. */
static void counting_free(void *p, size_t size, void *ctx)
{
	struct stress_alloc *sa = ctx;
	__atomic_fetch_add(&sa->frees, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&sa->bytes, (int64_t)size, __ATOMIC_RELAXED);
	if (!sa->recycler)
		free(p);
	else if (recycle(sa->recycler, p, size))
		sched_yield();	/* the block may be someone else's now */
	else
		free(p);
}

void stress_alloc_init(struct stress_alloc *sa)
{
	*sa = (struct stress_alloc){
		.a = { counting_alloc, counting_free, sa },
		.fail_from = -1,
	};
}

bool stress_alloc_balanced(const struct stress_alloc *sa)
{
	return __atomic_load_n(&sa->allocs, __ATOMIC_RELAXED) ==
		       __atomic_load_n(&sa->frees, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&sa->bytes, __ATOMIC_RELAXED) == 0;
}

void stress_recycler_init(struct stress_recycler *rc)
{
	*rc = (struct stress_recycler){ .n = 0 };
	pthread_mutex_init(&rc->lock, NULL);
}

void stress_alloc_recycle(struct stress_alloc *sa, struct stress_recycler *rc)
{
	sa->recycler = rc;
}

void stress_recycler_fini(struct stress_recycler *rc)
{
	while (rc->n)
		free(rc->block[--rc->n].p);
	pthread_mutex_destroy(&rc->lock);
}
