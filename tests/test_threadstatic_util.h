/* SPDX-License-Identifier: MIT */
/*
 * test_threadstatic_util.h - what the ThreadStatic tests share: a config
 * maker, a thread runner, and a backing allocator that records its peak.
 *
 * Criterion's assertions must run on the test's own thread, so threads
 * started here record what they saw and the test asserts after joining.
 */
#ifndef TEST_THREADSTATIC_UTIL_H
#define TEST_THREADSTATIC_UTIL_H

#include <pthread.h>
#include <stddef.h>

#include "helpers.h"

/* A config for obj_size-byte objects with the given magazine size and
 * depot bound, everything else 0. */
lfpool_config ts_config(size_t obj_size, unsigned magazine_size, unsigned depot_max);

/* The pool's statistics, by value. */
lfpool_stats stats_of(lfpool_ts *p);

/* Run fn(arg) on a new thread and wait for it. */
void run_on_thread(void *(*fn)(void *), void *arg);
/* Run fn(&args[i * size]) on n threads at once and wait for all. */
void run_threads(unsigned n, void *(*fn)(void *), void *args, size_t size);

/* A test_alloc that also keeps the most bytes it ever had out at once. */
struct peak_alloc {
	lfpool_allocator a;	/* pass &p->a as lfpool_config.allocator */
	struct test_alloc inner;
	size_t peak_bytes;	/* under inner.lock */
};
void peak_alloc_init(struct peak_alloc *p);
void peak_alloc_fini(struct peak_alloc *p);
size_t peak_alloc_live(struct peak_alloc *p);
size_t peak_alloc_peak(struct peak_alloc *p);

/* All n pointers distinct and non-NULL. */
bool all_distinct(void *const *objs, size_t n);

#endif
