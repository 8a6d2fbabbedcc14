/* SPDX-License-Identifier: MIT */
/*
 * atomic.h - the one atomics layer under lfpool's lock-free code.
 *
 * Normal builds use Concurrency Kit (ck_pr_*, ck_pr_stall).
 * ck's loads and stores are plain volatile accesses and its read-modify-
 * writes are inline assembly, which ThreadSanitizer cannot see.  The TSan
 * build (LFPOOL_TSAN, from --enable-tsan) maps the very same calls onto
 * __atomic builtins with the orders written here, so TSan checks the
 * algorithm that ships.  That build has no standalone fence: every order is
 * carried by the access that needs it (-Werror=tsan enforces this).
 *
 * The orders (why each is what it is):
 *  - *_acq loads / *_rel stores: a published pointer or stack head is read
 *    with acquire so that what its writer did before the release is seen.
 *  - lfp_cas_*_acqrel: a successful CAS on a stack head both takes ownership of
 *    an object (acquire: the previous owner's writes and the link word are
 *    visible) and hands one over (release: our writes become visible to the
 *    next popper).  A failed CAS returns the current head, which the caller
 *    dereferences next, so failure is acquire as well.
 *  - *_rlx loads and stores: link words and counters.  A link is read
 *    only after an acquire of the head that published it; a stale read of a
 *    link (the node was popped and pushed meanwhile) is harmless because the
 *    tagged CAS that follows fails.  Relaxed atomics keep that benign race
 *    defined and visible to TSan.
 *  - *_dekker: the two sides of an asymmetric Dekker (ThreadStatic's
 *    stop-and-take, lib/threadstatic/steal.c).  In normal builds they are
 *    relaxed (the load also acquire) and a heavy fence between them,
 *    membarrier(), orders them against the owner's plain accesses; TSan sees
 *    no membarrier, so there both sides are sequentially consistent.
 *  - lfp_faa_u64_rlx: statistics and capacity counters that order nothing.
 *  - lfp_faa_u32_rlx: reference count increments.  A thread retains only an
 *    object it already holds a reference to, so the increment publishes and
 *    acquires nothing (as std::shared_ptr's copy).
 *  - lfp_faa_u32_acqrel: reference count decrements.  Release: this holder's
 *    writes to the object happen before whatever the last holder does next;
 *    acquire: the thread that takes the count to zero sees every other
 *    holder's writes before it hands the object back to its pool.
 *  - lfp_cas_pair_acqrel: a slot of the elimination array (lib/stack.c),
 *    a 16-byte pair (what waits, 64-bit tag): as lfp_cas_u64_acqrel, one
 *    double-width CAS.  (The index stacks' heads change through
 *    lfpool/impl/tagged_stack.h's lfpool_stack_cas_, with the same orders.)
 * On x86-64 (TSO) all of these compile to plain moves and lock-prefixed
 * instructions in both builds.
 *
 * Weakly ordered CPUs (ARMv8, POWER), where the x86 argument does not
 * carry over, each order is needed as named and no weaker one would do:
 *  - acquire loads of a stack head, a published pointer, or a link being
 *    followed: the CPU may otherwise satisfy the loads that use the value
 *    (the node's link, the slab's side data, the object's bytes) before it,
 *    and read what was there before the publisher wrote it.  ARMv8: ldar
 *    (or ldr + dmb ishld); POWER: ld + lwsync (ck: the load, then
 *    ck_pr_fence_acquire).
 *  - release stores and the release half of a CAS: the link word and the
 *    object's contents must be visible before the head that publishes them
 *    (stlr / lwsync + st).
 *  - the acquire half of a CAS (success and failure): a won pop owns the
 *    node and next reads its link and the object; a failed CAS hands back
 *    the current head, whose node the next attempt reads.
 *  - relaxed link loads in a pop: ordered after the head's acquire (same
 *    thread, program order after an acquire); a stale one only makes the
 *    CAS fail, and the pop dereferences no index it read from a link.  A
 *    walk that does dereference such an index (lfp_stack_pop_upto_mpmc,
 *    lfp_stack_count_mpmc) reads the link with acquire and checks the head's
 *    tag first: see stack.c.
 *  - relaxed loads of slab directory and side-data pointers
 *    (lfp_slabs_link, _ptr, _state): a thread reaches an index only through
 *    an acquire chain back to the thread that published its slab (a pop's
 *    acquire of the head, whose release sequence holds every earlier push;
 *    a private chain; a validated walk), and those pointers, once set, stay
 *    until the pool is destroyed (mem is cleared and set again only while
 *    no index of the slab is reachable), so coherence gives the value.
 * ck's read-modify-writes carry no order of their own on such CPUs: the ck
 * versions of the _acqrel operations put ck_pr_fence_release before and
 * ck_pr_fence_acquire after them (the C11 fence mapping; ck's aarch64
 * port, as Debian builds it: CK_MD_RMO, LSE off, makes both dmb sy,
 * stronger than the dmb ish needed; lwsync on POWER).  ck defines both as
 * compiler barriers on TSO x86-64, so the shipped x86 code is unchanged.
 * The rest on aarch64:
 *  - lfp_cas_pair_acqrel: lfpool/impl/tagged_stack.h's ldaxp/stlxp loop, as the
 *    index stacks' heads (on every target: it is their CAS); it carries
 *    its orders itself (below, where it is defined, says why not ck's).
 *  - lfp_faa_u64_sc (ck: dmb st and dmb sy before the ldxr/stxr, dmb sy
 *    after) and lfp_load_u64_sc (dmb sy, then the load): grace.c's
 *    counted readers are a plain Dekker, each side a write then a read of
 *    the other's word; a full barrier between them is what forbids both
 *    reads missing both writes, and acquire/release would not.
 *  - the _dekker pairs: membarrier (threadstatic/fence.c) interrupts
 *    every CPU that runs a thread of the process and runs a full barrier
 *    there (dmb ish on arm64), so the thief's heavy side orders the
 *    owners' relaxed accesses as it does on x86-64.
 */
#ifndef LFP_ATOMIC_H
#define LFP_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfpool/impl/tagged_stack.h"	/* the 16-byte CAS */

/*
 * Yield injection: the stress programs bracket every atomic step below
 * with LFP_YIELD() (LFP_Y around an expression, LFP_YV around a
 * statement), defined in stress_hooks.h, which only their build includes.
 * Other builds compile them to nothing: the library pays nothing for it.
 */
#ifndef LFP_YIELD
# define LFP_YIELD() ((void)0)
# define LFP_Y(expr) (expr)
# define LFP_YV(stmt) stmt
#endif

/*
 * A 16-byte pair that a double-width CAS changes as one (cmpxchg16b on
 * x86-64, ldaxp/stlxp on aarch64).  Its halves are read with single-word loads:
 * a torn read is harmless to a CAS loop, whose CAS then fails and returns
 * the current pair whole.
 */
typedef union lfp_pair {
	struct { uint64_t lo, hi; };
	unsigned __int128 word;
} __attribute__((aligned(16))) lfp_pair;

/* A ThreadStatic cache's magazine pointers (top, low: lfpool/ts.h). */
typedef void **lfp_slots;

/*
 * Each operation is spelled out by width and order, so that a call site says
 * exactly what it relies on.  LFP_LD and LFP_ST declare the loads and stores.
 */
#ifdef LFPOOL_TSAN

#define LFP_LD(T, sfx, ord) \
	static inline T lfp_load_##sfx(const T *p) { return LFP_Y(__atomic_load_n(p, ord)); }
#define LFP_ST(T, sfx, ord) \
	static inline void lfp_store_##sfx(T *p, T v) { LFP_YV(__atomic_store_n(p, v, ord)); }

LFP_LD(uint8_t, u8_rlx, __ATOMIC_RELAXED)
LFP_LD(uint32_t, u32_rlx, __ATOMIC_RELAXED)
LFP_LD(uint32_t, u32_acq, __ATOMIC_ACQUIRE)
LFP_LD(uint64_t, u64_rlx, __ATOMIC_RELAXED)
LFP_LD(uint64_t, u64_acq, __ATOMIC_ACQUIRE)
LFP_ST(uint8_t, u8_rlx, __ATOMIC_RELAXED)
LFP_ST(uint8_t, u8_rel, __ATOMIC_RELEASE)
LFP_ST(uint32_t, u32_rlx, __ATOMIC_RELAXED)
LFP_ST(uint64_t, u64_rlx, __ATOMIC_RELAXED)
LFP_ST(uint64_t, u64_rel, __ATOMIC_RELEASE)
LFP_LD(int32_t, i32_rlx, __ATOMIC_RELAXED)
LFP_ST(uint32_t, u32_rel, __ATOMIC_RELEASE)
LFP_ST(int32_t, i32_rel, __ATOMIC_RELEASE)
LFP_LD(uint32_t, u32_dekker, __ATOMIC_SEQ_CST)
LFP_ST(int32_t, i32_dekker, __ATOMIC_SEQ_CST)
LFP_LD(lfp_slots, slots_rlx, __ATOMIC_RELAXED)
LFP_LD(lfp_slots, slots_dekker, __ATOMIC_SEQ_CST)
LFP_ST(lfp_slots, slots_rlx, __ATOMIC_RELAXED)
LFP_ST(lfp_slots, slots_rel, __ATOMIC_RELEASE)
LFP_ST(lfp_slots, slots_dekker, __ATOMIC_SEQ_CST)

static inline void *lfp_load_ptr_rlx(void *const *p)
{
	return LFP_Y(__atomic_load_n(p, __ATOMIC_RELAXED));
}
static inline void *lfp_load_ptr_acq(void *const *p)
{
	return LFP_Y(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}
static inline void lfp_store_ptr_rel(void **p, void *v)
{
	LFP_YV(__atomic_store_n(p, v, __ATOMIC_RELEASE));
}

static inline uint64_t lfp_faa_u64_rlx(uint64_t *p, uint64_t v)
{
	return LFP_Y(__atomic_fetch_add(p, v, __ATOMIC_RELAXED));
}

static inline uint64_t lfp_faa_u64_acqrel(uint64_t *p, uint64_t v)
{
	return LFP_Y(__atomic_fetch_add(p, v, __ATOMIC_ACQ_REL));
}

static inline uint64_t lfp_faa_u64_sc(uint64_t *p, uint64_t v)
{
	return LFP_Y(__atomic_fetch_add(p, v, __ATOMIC_SEQ_CST));
}
static inline uint64_t lfp_load_u64_sc(const uint64_t *p)
{
	return LFP_Y(__atomic_load_n(p, __ATOMIC_SEQ_CST));
}

static inline uint32_t lfp_faa_u32_rlx(uint32_t *p, uint32_t v)
{
	return LFP_Y(__atomic_fetch_add(p, v, __ATOMIC_RELAXED));
}

static inline uint32_t lfp_faa_u32_acqrel(uint32_t *p, uint32_t v)
{
	return LFP_Y(__atomic_fetch_add(p, v, __ATOMIC_ACQ_REL));
}

static inline uint8_t lfp_xchg_u8_acqrel(uint8_t *p, uint8_t v)
{
	return LFP_Y(__atomic_exchange_n(p, v, __ATOMIC_ACQ_REL));
}

/* On failure *expected receives the current value. */
static inline bool lfp_cas_u64_acqrel(uint64_t *p, uint64_t *expected, uint64_t desired)
{
	return LFP_Y(__atomic_compare_exchange_n(p, expected, desired, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

static inline bool lfp_cas_u64_rlx(uint64_t *p, uint64_t *expected, uint64_t desired)
{
	return LFP_Y(__atomic_compare_exchange_n(p, expected, desired, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static inline bool lfp_cas_ptr_acqrel(void **p, void **expected, void *desired)
{
	return LFP_Y(__atomic_compare_exchange_n(p, expected, desired, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

static inline void lfp_stall(void) { __builtin_ia32_pause(); }

#else /* Concurrency Kit */

#include <ck_pr.h>

/* x86-64 is TSO: ck's acquire and release fences are compiler barriers. */
#define LFP_LD(T, sfx, ckw, fence) \
	static inline T lfp_load_##sfx(const T *p) \
	{ LFP_YIELD(); T v = ck_pr_load_##ckw(p); fence; LFP_YIELD(); return v; }
#define LFP_ST(T, sfx, ckw, fence) \
	static inline void lfp_store_##sfx(T *p, T v) { LFP_YV((fence, ck_pr_store_##ckw(p, v))); }

LFP_LD(uint8_t, u8_rlx, 8, (void)0)
LFP_LD(uint32_t, u32_rlx, 32, (void)0)
LFP_LD(uint32_t, u32_acq, 32, ck_pr_fence_acquire())
LFP_LD(uint64_t, u64_rlx, 64, (void)0)
LFP_LD(uint64_t, u64_acq, 64, ck_pr_fence_acquire())
LFP_ST(uint8_t, u8_rlx, 8, (void)0)
LFP_ST(uint8_t, u8_rel, 8, ck_pr_fence_release())
LFP_ST(uint32_t, u32_rlx, 32, (void)0)
LFP_ST(uint64_t, u64_rlx, 64, (void)0)
LFP_ST(uint64_t, u64_rel, 64, ck_pr_fence_release())
LFP_ST(uint32_t, u32_rel, 32, ck_pr_fence_release())
LFP_LD(uint32_t, u32_dekker, 32, ck_pr_fence_acquire())
/* ck has no signed 32-bit word: the same accesses through uint32_t. */
static inline int32_t lfp_load_i32_rlx(const int32_t *p) { return (int32_t)ck_pr_load_32((const uint32_t *)p); }
static inline void lfp_store_i32_rel(int32_t *p, int32_t v)
{
	ck_pr_fence_release();
	ck_pr_store_32((uint32_t *)p, (uint32_t)v);
}
static inline void lfp_store_i32_dekker(int32_t *p, int32_t v) { ck_pr_store_32((uint32_t *)p, (uint32_t)v); }
LFP_LD(lfp_slots, slots_rlx, ptr, (void)0)
LFP_LD(lfp_slots, slots_dekker, ptr, ck_pr_fence_acquire())
LFP_ST(lfp_slots, slots_rlx, ptr, (void)0)
LFP_ST(lfp_slots, slots_rel, ptr, ck_pr_fence_release())
LFP_ST(lfp_slots, slots_dekker, ptr, (void)0)

static inline void *lfp_load_ptr_rlx(void *const *p) { return LFP_Y(ck_pr_load_ptr(p)); }
static inline void *lfp_load_ptr_acq(void *const *p)
{
	LFP_YIELD();
	void *v = ck_pr_load_ptr(p);
	ck_pr_fence_acquire();
	LFP_YIELD();
	return v;
}
static inline void lfp_store_ptr_rel(void **p, void *v)
{
	LFP_YIELD();
	ck_pr_fence_release();
	ck_pr_store_ptr(p, v);
	LFP_YIELD();
}

/*
 * An acquire-release read-modify-write from a ck one: fences around it (see
 * the top of this file).  On x86-64 both are compiler barriers: lock xadd,
 * xchg and lock cmpxchg(16b) are full barriers already.
 */
#define LFP_ACQREL(T, rmw) \
	({ LFP_YIELD(); ck_pr_fence_release(); T r_ = (rmw); ck_pr_fence_acquire(); LFP_YIELD(); r_; })

static inline uint64_t lfp_faa_u64_rlx(uint64_t *p, uint64_t v) { return LFP_Y(ck_pr_faa_64(p, v)); }
static inline uint64_t lfp_faa_u64_acqrel(uint64_t *p, uint64_t v)
{
	return LFP_ACQREL(uint64_t, ck_pr_faa_64(p, v));
}
/* Sequentially consistent add and load (a plain Dekker between them:
 * lib/threadstatic/grace.c's counted readers).  On x86-64 lock xadd is a
 * full barrier (the add's fences are compiler barriers); the load's fence
 * is an mfence. */
static inline uint64_t lfp_faa_u64_sc(uint64_t *p, uint64_t v)
{
	return LFP_Y(({ ck_pr_fence_store_atomic(); ck_pr_fence_load_atomic(); uint64_t r_ = ck_pr_faa_64(p, v);
			ck_pr_fence_atomic_load(); r_; }));
}
static inline uint64_t lfp_load_u64_sc(const uint64_t *p)
{
	return LFP_Y(({ ck_pr_fence_memory(); ck_pr_load_64(p); }));
}
static inline uint32_t lfp_faa_u32_rlx(uint32_t *p, uint32_t v) { return LFP_Y(ck_pr_faa_32(p, v)); }
static inline uint32_t lfp_faa_u32_acqrel(uint32_t *p, uint32_t v)
{
	return LFP_ACQREL(uint32_t, ck_pr_faa_32(p, v));
}
static inline uint8_t lfp_xchg_u8_acqrel(uint8_t *p, uint8_t v)
{
	return LFP_ACQREL(uint8_t, ck_pr_fas_8(p, v));
}

static inline bool lfp_cas_u64_acqrel(uint64_t *p, uint64_t *expected, uint64_t desired)
{
	return LFP_ACQREL(bool, ck_pr_cas_64_value(p, *expected, desired, expected));
}

static inline bool lfp_cas_u64_rlx(uint64_t *p, uint64_t *expected, uint64_t desired)
{
	return LFP_Y(ck_pr_cas_64_value(p, *expected, desired, expected));
}

static inline bool lfp_cas_ptr_acqrel(void **p, void **expected, void *desired)
{
	return LFP_ACQREL(bool, ck_pr_cas_ptr_value(p, *expected, desired, expected));
}

static inline void lfp_stall(void) { ck_pr_stall(); }

#endif

/*
 * The pair's CAS (on failure *expected receives the pair, whole):
 * lfpool/impl/tagged_stack.h's 16-byte CAS, the one the index stacks'
 * heads run, in every build.  It carries its orders itself (lock
 * cmpxchg16b; ldaxp and stlxp on aarch64, not ck's ldxp/stxp, whose
 * mismatch returns what ldxp read, which ARMv8.0 does not promise is one
 * pair), so no fences around it.  Under ThreadSanitizer (-fsanitize=thread, which
 * --enable-tsan passes) it is a 16-byte __atomic, which TSan instruments
 * as __tsan_atomic128_compare_exchange_strong.
 */
_Static_assert(sizeof(lfp_pair) == sizeof(struct lfpool_stack_head_) &&
	       offsetof(lfp_pair, lo) == offsetof(struct lfpool_stack_head_, top) &&
	       offsetof(lfp_pair, hi) == offsetof(struct lfpool_stack_head_, tag),
	       "lfp_pair is a stack head to the 16-byte CAS");
static inline bool lfp_cas_pair_acqrel(lfp_pair *p, lfp_pair *expected, lfp_pair desired)
{
	return LFP_Y(lfpool_cas16_acqrel_((struct lfpool_stack_head_ *)(void *)p, &expected->lo,
					  &expected->hi, desired.lo, desired.hi));
}

#undef LFP_LD
#undef LFP_ST
#undef LFP_ACQREL

/*
 * Exponential backoff while waiting for another thread to finish something
 * (a trim, a flush): ck_backoff_eb's shape, with a small start and a low
 * ceiling (a pool operation is short, so a long wait costs more than the
 * look it saves).
 */
typedef unsigned int lfp_backoff;
#define LFP_BACKOFF_INIT 8u
#define LFP_BACKOFF_MAX  1024u
static inline void lfp_backoff_wait(lfp_backoff *b)
{
	for (unsigned int i = 0; i < *b; i++)
		lfp_stall();
	if (*b < LFP_BACKOFF_MAX)
		*b <<= 1;
}

/*
 * Backoff between the attempts of a CAS loop on a contended word (the index
 * stacks' heads, lib/stack.c): from LFP_BACKOFF_INIT, waits of 8, 16, ...,
 * 512 pauses after the first failures (1016 in all, some tens of
 * microseconds), then none: every later attempt follows the failed CAS
 * at once (the figures are in NEWS).  Why both halves:
 *  - An attempt after a wait is made on the head that the failed CAS
 *    returned before it.  A thread on another CPU that gets and puts in a
 *    loop has changed the head many times meanwhile, so the attempt fails
 *    for certain, however long the wait.  With waits only (up to 1024
 *    pauses each, this loop's earlier shape), a loser got in only
 *    when the winner stopped: one CPU kept the stack until its thread was
 *    preempted: with more threads than CPUs, some contended gets and
 *    puts waited for whole scheduler quanta, and threads got very unequal
 *    shares of the operations.
 *  - Right after a failed CAS the head it returned is current, and the
 *    cache line is this CPU's (x86's failed lock cmpxchg writes the old
 *    value back: the line is taken exclusive either way), so an attempt at
 *    once usually wins.  Retrying at once from the first failure, as
 *    ck_stack does, is fair but makes two CPUs pass the line back and
 *    forth on every operation: at 2 threads it ran up to several times
 *    slower than with waits only.
 * The waits let the thread that holds the line run its operations
 * undisturbed for about 20 us, the retries then end the wait within a few
 * microseconds: CPUs take turns in runs, which keeps the speed of running
 * one after the other and gives each thread its share, as even as
 * ck_stack's.
 */
#define LFP_BACKOFF_CAS_LAST 512u
static inline void lfp_backoff_cas(lfp_backoff *b)
{
	if (*b > LFP_BACKOFF_CAS_LAST)
		return;
	for (unsigned int i = 0; i < *b; i++)
		lfp_stall();
	*b <<= 1;
}

#endif
