/* SPDX-License-Identifier: MIT */
/*
 * percpu.h - per-CPU arrays of object pointers: the caches of ThreadStatic's
 * per-CPU mode.
 *
 * Each possible CPU owns one area of `max` slots.  get and put (one
 * object, handing over to the owner's slow path when the area is empty or
 * full) and the bulk pop and push act on the area of the CPU the caller
 * runs on:
 *  - rseq mode (Linux x86-64, glibc registered rseq): the restartable
 *    sequences of lfpool/impl/rseq.h (the same that lfpool/ts.h inlines
 *    into users' code), no atomic read-modify-write, no lock;
 *  - fallback mode (no rseq registration, GLIBC_TUNABLES=
 *    glibc.pthread.rseq=0, another architecture, the TSan build):
 *    sched_getcpu() picks the area and an uncontended spinlock guards it.
 * The mode is chosen once at init and reported by lfp_percpu_mode().
 * Tables are sized from the possible-CPU count, so CPUs that come online
 * later and CPU numbers with holes are covered (tcmalloc#188).
 *
 * An area counts the objects ever pushed onto it and popped off it, not the
 * objects it holds (pushes - pops): each operation still commits with one
 * store, and the two counters are what the statistics need, for free.
 *
 * get, put, pop and push may run on any thread at any time; drain only
 * when no other thread uses the table.
 *
 * Stop and take (steal.c has the whole protocol): hot.view.gate is the
 * GATE, the number of areas a call may use, read inside every restartable
 * sequence (LFPOOL_RSEQ_ENTER_ in lfpool/impl/rseq.h) before any store.  A thief stores 0 there
 * (lfp_percpu_stop), fences with membarrier-rseq, which aborts every
 * sequence in flight, and is then the only writer of every area
 * (lfp_percpu_take) until it stores the real count back
 * (lfp_percpu_restart).  The fallback path has no gate: a thief takes each
 * area's lock in turn.  The real CPU count is pc->ncpu.
 */
#ifndef LFP_PERCPU_H
#define LFP_PERCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfpool/common.h"
#include "lfpool/impl/rseq.h"

#if defined(LFPOOL_HAVE_RSEQ) && defined(LFPOOL_RSEQ_ASM_) && !defined(LFPOOL_TSAN)
# define LFP_PERCPU_RSEQ 1
#endif

/* The table's head: the sequences' view (lfpool/ts.h's inline calls
 * read it too, through the pool's head).  No slow path of the owner's:
 * get and put report a miss, and the owner (a higher floor) takes its
 * own.  32-byte aligned: the view (what every call reads) lies in one
 * 128-byte block of a page (percpu.c alloc_areas). */
struct __attribute__((aligned(32))) lfp_percpu_hot {
	struct lfpool_percpu_hot_ view;	/* view.gate: possible CPUs, 0 while a thief works */
};

/* An area: the sequences' view of its counters first, then its slots. */
struct lfp_percpu_area {
	struct lfpool_percpu_area_ view;
	void *slot[];
};
_Static_assert(offsetof(struct lfp_percpu_area, slot) == sizeof(struct lfpool_percpu_area_),
	       "the sequences find the slots right after the counters");

struct lfp_percpu {
	struct lfp_percpu_hot hot;
	uint32_t ncpu;		/* possible CPUs */
	bool rseq;
	char *block;		/* the areas' allocation: hot.view.areas is 0 to 3 x 128 bytes in */
	size_t bytes;		/* its size */
	lfpool_allocator alloc;
};

/* The number of possible CPUs (highest possible CPU number + 1). */
uint32_t lfp_percpu_possible_cpus(void);
/* Whether this process can use the rseq fast path. */
bool lfp_percpu_rseq_available(void);

/* Set up a table of max slots per CPU; no area's counters share a page offset with the hot table's fields
 * (4K aliasing, percpu.c alloc_areas), nor where a layout allows with head
 * (16 bytes that every get and put reads too: the pool's rseq_get and
 * rseq_put) and hint (16 bytes of the calling thread's: lfpool_ts_tls_'s
 * home_pool and pool), either may be NULL.  0, EINVAL,
 * ENOMEM, or LFP_EMISALIGNED (the allocator's block was not aligned as
 * asked; given back).  pc must not move afterwards. */
int lfp_percpu_init(struct lfp_percpu *pc, uint32_t max, const lfpool_allocator *a,
		    const void *head, const void *hint);
void lfp_percpu_fini(struct lfp_percpu *pc);
/* Show fn every cached object, the table unchanged (no other user of the
 * table may run). */
void lfp_percpu_each(const struct lfp_percpu *pc, void (*fn)(void *obj, void *ctx), void *ctx);
/* fork (fork.c): take (lock) or release every area's fallback lock, in
 * CPU order; nothing in rseq mode, which takes no lock. */
void lfp_percpu_lock_all(struct lfp_percpu *pc, bool lock);
/* Move every cached object to fn (no other user of the table may run). */
void lfp_percpu_drain(struct lfp_percpu *pc, void (*fn)(void *obj, void *ctx), void *ctx);
/* A thief's steps (caller serializes thieves): stop every area (rseq:
 * close the gate; the caller then runs lfp_fence_heavy(); fallback:
 * nothing); take up to want objects, handing each area's to give(ctx, objs,
 * n), top first; reopen.  lfp_percpu_stop returns whether a fence is
 * needed.  take returns how many it took. */
bool lfp_percpu_stop(struct lfp_percpu *pc);
size_t lfp_percpu_take(struct lfp_percpu *pc, size_t want,
		       void (*give)(void *ctx, void *const *objs, size_t n), void *ctx);
void lfp_percpu_restart(struct lfp_percpu *pc);
/* Objects cached now (exact only when quiet). */
uint64_t lfp_percpu_count(const struct lfp_percpu *pc);
/* Pushes and pops of every area added to *pushes and *pops (relaxed loads). */
void lfp_percpu_ops(const struct lfp_percpu *pc, uint64_t *pushes, uint64_t *pops);
/* "rseq" or "sched_getcpu". */
const char *lfp_percpu_mode(const struct lfp_percpu *pc);

/* The fallback path of the calls below. */
void *lfp_percpu_get_locked(struct lfp_percpu *pc);
bool lfp_percpu_put_locked(struct lfp_percpu *pc, void *obj);
size_t lfp_percpu_pop_locked(struct lfp_percpu *pc, void **objs, size_t n);
size_t lfp_percpu_push_locked(struct lfp_percpu *pc, void *const *objs, size_t n);


/* Pop from the caller's CPU area; NULL when it is empty (or, rseq, its
 * gate closed): the caller takes its slow path. */
static inline void *lfp_percpu_get(struct lfp_percpu *pc)
{
#ifdef LFP_PERCPU_RSEQ
	if (LFPOOL_LIKELY(pc->rseq)) {
		void *obj;
		LFPOOL_RSEQ_GET_OR_(&pc->hot.view, obj, return NULL);
		return obj;
	}
#endif
	return lfp_percpu_get_locked(pc);
}

/* Push obj (not NULL) onto the caller's CPU area; false, obj not taken,
 * when it is full (or, rseq, its gate closed): the caller takes its slow
 * path. */
static inline bool lfp_percpu_put(struct lfp_percpu *pc, void *obj)
{
#ifdef LFP_PERCPU_RSEQ
	if (LFPOOL_LIKELY(pc->rseq)) {
		LFPOOL_RSEQ_PUT_OR_(&pc->hot.view, obj, return false);
		return true;
	}
#endif
	return lfp_percpu_put_locked(pc, obj);
}

/* Pop up to n objects from the caller's CPU area into objs[0 ..), the most
 * recently pushed last; returns how many. */
static inline size_t lfp_percpu_pop_bulk(struct lfp_percpu *pc, void **objs, size_t n)
{
#ifdef LFP_PERCPU_RSEQ
	if (LFPOOL_LIKELY(pc->rseq))
		return lfpool_rseq_pop_bulk_(&pc->hot.view, objs, n);
#endif
	return lfp_percpu_pop_locked(pc, objs, n);
}

/* Push objs[0 ..) onto the caller's CPU area while it has room; returns
 * how many, the first ones. */
static inline size_t lfp_percpu_push_bulk(struct lfp_percpu *pc, void *const *objs, size_t n)
{
#ifdef LFP_PERCPU_RSEQ
	if (LFPOOL_LIKELY(pc->rseq))
		return lfpool_rseq_push_bulk_(&pc->hot.view, objs, n);
#endif
	return lfp_percpu_push_locked(pc, objs, n);
}

#endif
