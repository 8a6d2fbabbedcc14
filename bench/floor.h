/* SPDX-License-Identifier: MIT */
/*
 * floor.h - the floor's array and its inline get and put, shared by its
 * implementation (impl_floor.c) and the placement study (placement.c).
 */
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H

#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define FLOOR_CAP 4096

/* One thread's array, in thread-local storage: objs[0 .. top). */
struct floor_stack {
	void **top;		/* one past the top object */
	unsigned prewarm;	/* the open configuration's: objects per thread */
	size_t obj_size;	/* for a miss */
	void *objs[FLOOR_CAP];
};

/*
 * Reached through a pointer taken once per thread (attach), not through
 * %fs on every access: measured here (AMD EPYC), the %fs-relative form ran
 * a pair at 2.2 ns per operation against 0.3 ns through the pointer, likely
 * because the core forwards a store to a later load at no cost only when
 * both use the same base register.  The floor must be the fastest form:
 * top is a pointer that get and put load once and store from the register
 * (measured on Intel Emerald Rapids, 2026-12-01: 0.45 ns per
 * operation against 0.87 for a 32-bit count kept as an index, the form
 * before, which lfpool's caches had come to beat).
 */

__attribute__((noinline)) static void *floor_miss(const struct floor_stack *s)
{
	return malloc(s->obj_size);
}

static inline void *floor_get(void *h)
{
	struct floor_stack *s = h;
	void **t = s->top;
	if (LFPOOL_LIKELY(t != s->objs)) {
		s->top = --t;
		return *t;
	}
	return floor_miss(s);
}

static inline void floor_put(void *h, void *obj)
{
	struct floor_stack *s = h;
	void **t = s->top;
	if (LFPOOL_LIKELY(t != s->objs + FLOOR_CAP)) {
		*t = obj;
		s->top = t + 1;
	} else {
		free(obj);
	}
}

/* Bulk calls: one copy of n pointers when the array allows it. */
static inline int floor_get_bulk(void *h, void **objs, size_t n)
{
	struct floor_stack *s = h;
	if (LFPOOL_LIKELY((size_t)(s->top - s->objs) >= n)) {
		s->top -= n;
		memcpy(objs, s->top, n * sizeof(void *));
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		objs[i] = bench_got(floor_get(h));
	return 0;
}

static inline void floor_put_bulk(void *h, void **objs, size_t n)
{
	struct floor_stack *s = h;
	if (LFPOOL_LIKELY((size_t)(s->objs + FLOOR_CAP - s->top) >= n)) {
		memcpy(s->top, objs, n * sizeof(void *));
		s->top += n;
		return;
	}
	for (size_t i = 0; i < n; i++)
		floor_put(h, objs[i]);
}

#endif
