/* SPDX-License-Identifier: MIT */
/*
 * impl_shared.c - the shared-structure peers: lfpool's Pool behind a mutex
 * or a spinlock, Concurrency Kit's ck_stack, and liburcu's cds_lfs with a
 * mutex on pop.
 *
 * ck_stack and cds_lfs are intrusive: a pooled object holds the link in its
 * first bytes.  Both are prewarmed with malloc'ed objects, grow with malloc
 * when empty, and free everything at close (every object is back by then).
 */
#include <pthread.h>
#include <stdlib.h>

#include <ck_stack.h>
#include <urcu/lfstack.h>

#include "bench.h"
#include "lfpool.h"

#if !defined(CK_F_STACK_POP_MPMC)
# error "ck_stack_pop_mpmc is not available on this platform"
#endif

/* An object for an intrusive stack: at least as big as its link. */
static void *node_new(size_t obj_size, size_t link_size)
{
	return bench_got(malloc(obj_size > link_size ? obj_size : link_size));
}

/* mutex-pool and spin-pool: one Pool behind a pthread mutex, or spinlock. */
#ifndef LOOPS_CAT
# define LOOPS_CAT2(a, b) a##_##b
# define LOOPS_CAT(a, b) LOOPS_CAT2(a, b)
#endif
#define IMPL mp
#define LOCKED_LABEL "mutex-pool"
#define LOCKED_T pthread_mutex_t
#define LOCKED_INIT(l) pthread_mutex_init(l, NULL)
#define LOCKED_DESTROY(l) pthread_mutex_destroy(l)
#define LOCKED_LOCK(l) pthread_mutex_lock(l)
#define LOCKED_UNLOCK(l) pthread_mutex_unlock(l)
#include "locked_pool.h"

#define IMPL sp
#define LOCKED_LABEL "spin-pool"
#define LOCKED_T pthread_spinlock_t
#define LOCKED_INIT(l) pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE)
#define LOCKED_DESTROY(l) pthread_spin_destroy(l)
#define LOCKED_LOCK(l) pthread_spin_lock(l)
#define LOCKED_UNLOCK(l) pthread_spin_unlock(l)
#include "locked_pool.h"

/* ck_stack: push_mpmc and pop_mpmc (a double-width CAS with a generation). */
struct ck_pool {
	ck_stack_t stack __attribute__((aligned(64)));
	size_t obj_size;
};

static void *ck_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	struct ck_pool *p = aligned_alloc(64, sizeof(*p));
	if (!p)
		bench_die("ck_stack: out of memory");
	ck_stack_init(&p->stack);
	p->obj_size = obj_size;
	for (unsigned i = 0; i < prewarm; i++)
		ck_stack_push_mpmc(&p->stack, node_new(obj_size, sizeof(ck_stack_entry_t)));
	return p;
}

static void ck_close(void *shared)
{
	struct ck_pool *p = shared;
	ck_stack_entry_t *e;
	while ((e = ck_stack_pop_mpmc(&p->stack)) != NULL)
		free(e);
	free(p);
}

static inline void *ck_get(void *h)
{
	struct ck_pool *p = h;
	ck_stack_entry_t *e = ck_stack_pop_mpmc(&p->stack);
	if (LFPOOL_LIKELY(e != NULL))
		return e;
	return node_new(p->obj_size, sizeof(ck_stack_entry_t));
}

static inline void ck_put(void *h, void *obj)
{
	ck_stack_push_mpmc(&((struct ck_pool *)h)->stack, obj);
}

#define IMPL ck
#include "loops.h"

/* urcu-lfs: lock-free push, pop under the stack's own mutex (the blocking
 * pop), because a lock-free single pop would need an RCU grace period
 * before a node may be pushed again. */
struct urcu_pool {
	struct cds_lfs_stack stack;
	size_t obj_size;
};

static void *urcu_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	struct urcu_pool *p = malloc(sizeof(*p));
	if (!p)
		bench_die("urcu-lfs: out of memory");
	cds_lfs_init(&p->stack);
	p->obj_size = obj_size;
	for (unsigned i = 0; i < prewarm; i++)
		cds_lfs_push(&p->stack, node_new(obj_size, sizeof(struct cds_lfs_node)));
	return p;
}

static void urcu_close(void *shared)
{
	struct urcu_pool *p = shared;
	struct cds_lfs_node *n;
	while ((n = cds_lfs_pop_blocking(&p->stack)) != NULL)
		free(n);
	cds_lfs_destroy(&p->stack);
	free(p);
}

static inline void *urcu_get(void *h)
{
	struct urcu_pool *p = h;
	struct cds_lfs_node *n = cds_lfs_pop_blocking(&p->stack);
	if (LFPOOL_LIKELY(n != NULL))
		return n;
	return node_new(p->obj_size, sizeof(struct cds_lfs_node));
}

static inline void urcu_put(void *h, void *obj)
{
	cds_lfs_push(&((struct urcu_pool *)h)->stack, obj);
}

#define IMPL urcu
#include "loops.h"

#define SHARED_IMPL(label, prefix) {					\
	.name = label,							\
	.open = prefix##_open, .close = prefix##_close,			\
	.attach = attach_shared, .detach = detach_nothing,		\
	.loops = &prefix##_loops,					\
}

const struct impl impl_mutex_pool = SHARED_IMPL("mutex-pool", mp);
const struct impl impl_spin_pool = SHARED_IMPL("spin-pool", sp);
const struct impl impl_ck_stack = SHARED_IMPL("ck_stack", ck);
const struct impl impl_urcu_lfs = SHARED_IMPL("urcu-lfs", urcu);
