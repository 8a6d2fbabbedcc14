/* SPDX-License-Identifier: MIT */
/*
 * deque.h - a bounded Chase-Lev work-stealing deque of pointers
 * (Chase & Lev 2005; the C11 version of Lê, Pop, Cohen & Zappa Nardelli,
 * PPoPP 2013), with sequentially consistent accesses to top and bottom in
 * place of its standalone fences, so that ThreadSanitizer can check it.
 *
 * Synchronization: push and take only by the owner worker; steal by any
 * thread, concurrently with the owner and with other thieves.
 */
#ifndef JOBS_DEQUE_H
#define JOBS_DEQUE_H

#include <stdbool.h>
#include <stdint.h>

#define DEQUE_SIZE 4096	/* power of two */

struct deque {
	int64_t top __attribute__((aligned(64)));
	int64_t bottom __attribute__((aligned(64)));
	void *slot[DEQUE_SIZE] __attribute__((aligned(64)));
};

static inline void deque_init(struct deque *d)
{
	d->top = d->bottom = 0;
}

/* Owner: push x at the bottom; false when the deque is full. */
static inline bool deque_push(struct deque *d, void *x)
{
	int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_RELAXED);
	int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
	if (b - t >= DEQUE_SIZE)
		return false;
	__atomic_store_n(&d->slot[b & (DEQUE_SIZE - 1)], x, __ATOMIC_RELAXED);
	/* release: a thief that sees the new bottom sees the slot */
	__atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELEASE);
	return true;
}

/* Owner: take from the bottom (LIFO); NULL when empty. */
static inline void *deque_take(struct deque *d)
{
	int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_RELAXED) - 1;
	/* seq_cst store then seq_cst load: the owner's claim on bottom and a
	 * thief's claim on top cannot both miss each other */
	__atomic_store_n(&d->bottom, b, __ATOMIC_SEQ_CST);
	int64_t t = __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
	if (t > b) {
		__atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELAXED);
		return NULL;
	}
	void *x = __atomic_load_n(&d->slot[b & (DEQUE_SIZE - 1)], __ATOMIC_RELAXED);
	if (t == b) {
		/* the last element: race the thieves for it */
		if (!__atomic_compare_exchange_n(&d->top, &t, t + 1, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			x = NULL;
		__atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELAXED);
	}
	return x;
}

/* Any thread: steal from the top (FIFO); NULL when empty or lost a race. */
static inline void *deque_steal(struct deque *d)
{
	int64_t t = __atomic_load_n(&d->top, __ATOMIC_SEQ_CST);
	int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_SEQ_CST);
	if (t >= b)
		return NULL;
	void *x = __atomic_load_n(&d->slot[t & (DEQUE_SIZE - 1)], __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&d->top, &t, t + 1, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return NULL;
	return x;
}

#endif
