/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - the backing allocator the stress pools get: it counts every
 * allocation and free (and their bytes, and the most held at once), and
 * fails on demand, from a given
 * call on or one call in k, to inject out-of-memory.
 */
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

/* posix_memalign, counted; NULL when this call must fail. */
static void *counting_alloc(size_t size, size_t align, void *ctx)
{
	struct stress_alloc *sa = ctx;
	uint64_t n = __atomic_fetch_add(&sa->calls, 1, __ATOMIC_RELAXED);
	void *p;
	if (must_fail(sa, n) || posix_memalign(&p, align, size) != 0) {
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
