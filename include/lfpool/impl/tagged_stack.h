/* SPDX-License-Identifier: MIT */
/*
 * lfpool/impl/tagged_stack.h - the tagged-index Treiber stack: its head,
 * and one attempt to push or to pop, written once.  The inline
 * lfpool_concurrent_get and _put (lfpool/concurrent.h) and every stack of
 * the library (lib/stack.h: the Concurrent pool's free stack, the raw
 * stacks of the slabs, ThreadStatic's depot) run these very functions.
 * Not API: what this file names ends in "_" and may change in any release.
 *
 * Terms of the impl/ headers (each lists those it uses beyond these):
 *  - index: an object's number in its pool (32 bits); slab: a block of
 *    objects the pool got from its allocator, with its side data (the
 *    objects' link words and states, kept apart from the objects).
 *  - link: an index's word in the side data, naming the index below it
 *    on a stack.
 *  - head: the stack's (top, tag) pair; top: the index on top; tag: the
 *    head's change count (a per-CPU "tag" in lookup.h is another thing:
 *    a bit of a pool's address).
 *  - attempt (step): one read of the head and one CAS; it fails when the
 *    head changed meanwhile, and the caller tries again.
 *  - view: the leading part of a library struct that inline code reads.
 *
 * The stack.  Objects are named by 32-bit indices.  Each has a link word,
 * in the pool's side data, which holds the index below it while it is on
 * the stack.  The head is a pair changed as one by a double-width CAS
 * (lock cmpxchg16b; ldaxp/stlxp on aarch64): the top index
 * (LFPOOL_STACK_NIL_ when empty) and a 64-bit tag that every change of
 * the head increments.
 *
 * Why it is correct (stress/model/aba.pml checks the interleavings; its
 * steps U1-U3 and O1-O3 are marked below):
 *  - Linearizable: a push and a pop each take effect at their CAS.  A CAS
 *    succeeds only on the head the attempt read (top and tag), and every
 *    change of the head changes the tag, so nothing happened to the stack
 *    between the read and the CAS: the link a push wrote names the top it
 *    replaces, and the link a pop read names the index below the one it
 *    takes.
 *  - ABA: a pop that read head (i, t) and the link of i, and was delayed
 *    while others popped i (and what was below it) and pushed i back,
 *    finds (i, t + k) with k >= 2: its CAS fails, where one on the index
 *    alone would install a stale link (an object in use, as the free
 *    stack's top).  A stale CAS succeeds only after exactly 2^64 changes
 *    of the head inside one attempt (centuries at one per nanosecond).  A
 *    failed CAS returns the current head, tag included, and the next
 *    attempt builds on it (never on an older tag).  A push needs no tag
 *    (a pop's CAS fails whenever any push or pop came between) but takes
 *    the same CAS: no cheaper on x86-64 (lib/stack.c has the figures),
 *    and ThreadSanitizer sees an 8-byte CAS apart from a 16-byte one.
 *  - Memory safety: a delayed pop may read the link of an index that
 *    another thread took meanwhile.  Link words live in side data kept
 *    until the pool is destroyed (or reading zero where a trim gave its
 *    pages back), so the read is of valid memory; its value is used only
 *    when the CAS succeeds, that is, when it was current.
 *  - Visibility: a push's CAS releases its link and the pusher's writes
 *    to the object; a pop's acquire of the head (the loads, or a failed
 *    CAS) makes both visible before it reads the link and the object.  A
 *    pop's CAS releases too: the next pusher of that index writes its link
 *    after our read of it.
 *  - The head is read with two 8-byte loads, tag first, then top: the two
 *    may come from different heads, and then the CAS fails, since a tag
 *    names one head.  A 16-byte atomic load would cost a CAS.
 *
 * The CAS is lock cmpxchg16b on x86-64, a loop of ldaxp/stlxp on aarch64
 * (both lock-free; lfpool_cas16_acqrel_ argues the aarch64 orders), and a
 * 16-byte __atomic under ThreadSanitizer (which sees no asm; its
 * --enable-tsan build of the library checks this very code).  A program
 * under TSan that uses a library built without it must not run this
 * code: lfpool/concurrent.h says why.
 */
#ifndef LFPOOL_IMPL_TAGGED_STACK_H
#define LFPOOL_IMPL_TAGGED_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "lfpool/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LFPOOL_STACK_NIL_ 0xffffffffu	/* the top of an empty stack */

/* The head's 16 bytes are also one unsigned __int128 (the CAS under
 * ThreadSanitizer below, lib/atomic.h's lfp_pair), whose low half must be
 * top, the word at the lower address: true on little-endian targets only.
 * On a big-endian one the halves would swap, and a CAS would compare top
 * with the expected tag. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
# error "lfpool/impl/tagged_stack.h: the stack head's (top, tag) layout needs a little-endian target"
#endif

/* The head: what one double-width CAS changes. */
struct lfpool_stack_head_ {
	uint64_t top;	/* the top index, LFPOOL_STACK_NIL_ when empty */
	uint64_t tag;	/* every change of the head adds LFPOOL_STACK_TAG_STEP_ */
} __attribute__((aligned(16)));

/*
 * Hook points: a step's yield, the window between reading the head and
 * the CAS, the count of failed CAS, and the tag step.  Empty here (and
 * the tag step 1); the library's test programs define them before this
 * header, to widen the windows and to drop the tag in a negative control.
 */
#ifndef LFPOOL_STACK_YIELD_
# define LFPOOL_STACK_YIELD_() ((void)0)
# define LFPOOL_STACK_WINDOW_() ((void)0)
# define LFPOOL_STACK_RETRY_() ((void)0)
#endif
#ifndef LFPOOL_STACK_TAG_STEP_
# define LFPOOL_STACK_TAG_STEP_ 1u
#endif

#if defined(__GNUC__) && defined(__SIZEOF_INT128__)
# define LFPOOL_STACK_STEPS_ 1

/*
 * The plain accesses of the steps: __atomic, so that ThreadSanitizer sees
 * them, with the orders lib/atomic.h gives the same accesses (on x86-64
 * each is one mov), each between two LFPOOL_STACK_YIELD_ points.
 */
static inline uint64_t lfpool_stack_load_u64_acq_(const uint64_t *p)
{
	LFPOOL_STACK_YIELD_();
	uint64_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	LFPOOL_STACK_YIELD_();
	return v;
}

static inline void *lfpool_stack_load_ptr_rlx_(void *const *p)
{
	LFPOOL_STACK_YIELD_();
	void *v = __atomic_load_n(p, __ATOMIC_RELAXED);
	LFPOOL_STACK_YIELD_();
	return v;
}

static inline uint32_t lfpool_stack_load_u32_acq_(const uint32_t *p)
{
	LFPOOL_STACK_YIELD_();
	uint32_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	LFPOOL_STACK_YIELD_();
	return v;
}

static inline uint8_t lfpool_stack_load_u8_acq_(const uint8_t *p)
{
	LFPOOL_STACK_YIELD_();
	uint8_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	LFPOOL_STACK_YIELD_();
	return v;
}

static inline uint32_t lfpool_stack_load_u32_rlx_(const uint32_t *p)
{
	LFPOOL_STACK_YIELD_();
	uint32_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
	LFPOOL_STACK_YIELD_();
	return v;
}

static inline void lfpool_stack_store_u32_rlx_(uint32_t *p, uint32_t v)
{
	LFPOOL_STACK_YIELD_();
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
	LFPOOL_STACK_YIELD_();
}

/*
 * The 16-byte CAS, written once: the stack's head and lib/atomic.h's
 * lfp_cas_pair_acqrel (the elimination slots of lib/stack.c) both run it.
 * The pair m->top and m->tag (the lo and hi of lib/atomic.h's lfp_pair)
 * becomes nlo and nhi if it is *lo and *hi: true; else false, with the
 * pair read in *lo and *hi, whole (the next attempt builds on it, and
 * lib/stack.c's elimination array frees a slot with a CAS on the pair a
 * failed one returned).  acq_rel, and acquire when it fails.
 *
 * x86-64: lock cmpxchg16b, rdx:rax the expected pair, rcx:rbx the new
 * one; on failure rdx:rax receive the current pair.  A locked
 * instruction is a full barrier on x86-64.
 *
 * aarch64: ARMv8.0 has no 16-byte CAS instruction (CASP is ARMv8.1's),
 * and a 16-byte __atomic here is a call to libatomic, which in GCC 12's
 * takes a pthread mutex: neither lock-free nor address-free (a head in
 * memory shared between processes), nor safe in a signal handler.  So a
 * loop of exclusives.  The memory orders, for ARMv8's weak model:
 *  - ldaxp, a load-acquire: a success takes an object and a failure
 *    returns the head that the next attempt reads through (the top's
 *    link, the object), so both need the acquire; on the success path
 *    it is the acquire half of acq_rel (the mapping GCC uses for an
 *    acq_rel CAS on ARMv8.0).
 *  - stlxp, a store-release: the release half, which makes the
 *    pusher's link and its writes to the objects visible before the
 *    new head.  It succeeds only if no other store reached the head
 *    since the ldaxp, so the pair is read and written as one.
 *  - A mismatch stores the value read back (stxp, relaxed: it changes
 *    nothing and publishes nothing) and reads again if that fails:
 *    ARMv8.0 makes ldxp's 16 bytes one read only when the stxp after
 *    it succeeds, and a failed CAS must return a pair the memory held
 *    (a torn one would give the next pop a top and a tag of two heads;
 *    that CAS would fail, but the promise is the whole pair, as
 *    cmpxchg16b gives, and the elimination array relies on it).
 *    Success and failure each exit through a successful
 *    store-exclusive.
 * Between each load-exclusive and its store-exclusive are only
 * register instructions and a forward branch: the shape for which
 * ARMv8 promises that some core's store-exclusive succeeds (lock-free).
 * qemu-user 7.2 runs it correctly on one thread but livelocks with
 * two or more (tests/aarch64.sh runs single-threaded programs only).
 *
 * Elsewhere, and under ThreadSanitizer (which sees no asm): a 16-byte
 * __atomic, which TSan instruments as
 * __tsan_atomic128_compare_exchange_strong (its --enable-tsan build of
 * the library checks this very code); elsewhere it may be libatomic's
 * (a lock): lfpool.h's "Platforms" lists where lfpool runs.
 */
static inline bool lfpool_cas16_acqrel_(struct lfpool_stack_head_ *m, uint64_t *lo, uint64_t *hi,
					uint64_t nlo, uint64_t nhi)
{
	bool ok;
# if defined(__x86_64__) && !defined(LFPOOL_TSAN_)
#  ifdef __GCC_ASM_FLAG_OUTPUTS__
	__asm__ __volatile__("lock cmpxchg16b %[m]"
			     : "=@ccz"(ok), [m] "+m"(*m), "+a"(*lo), "+d"(*hi)
			     : "b"(nlo), "c"(nhi)
			     : "memory");
#  else
	__asm__ __volatile__("lock cmpxchg16b %[m]\n\tsetz %[ok]"
			     : [ok] "=q"(ok), [m] "+m"(*m), "+a"(*lo), "+d"(*hi)
			     : "b"(nlo), "c"(nhi)
			     : "memory", "cc");
#  endif
# elif defined(__aarch64__) && !defined(LFPOOL_TSAN_)
	uint64_t cur_lo, cur_hi;
	uint32_t st;
	__asm__ __volatile__("1:	ldaxp	%[lo], %[hi], %[m]\n\t"
			     "cmp	%[lo], %[elo]\n\t"
			     "ccmp	%[hi], %[ehi], #0, eq\n\t"
			     "b.ne	2f\n\t"
			     "stlxp	%w[st], %[nlo], %[nhi], %[m]\n\t"
			     "cbnz	%w[st], 1b\n\t"
			     "b	3f\n"
			     "2:	stxp	%w[st], %[lo], %[hi], %[m]\n\t"
			     "cbnz	%w[st], 1b\n"
			     "3:"
			     : [lo] "=&r"(cur_lo), [hi] "=&r"(cur_hi), [st] "=&r"(st), [m] "+Q"(*m)
			     : [elo] "r"(*lo), [ehi] "r"(*hi), [nlo] "r"(nlo), [nhi] "r"(nhi)
			     : "cc", "memory");
	ok = cur_lo == *lo && cur_hi == *hi;
	*lo = cur_lo;
	*hi = cur_hi;
# else
	__extension__ typedef unsigned __int128 lfpool_u128_ __attribute__((may_alias));
	lfpool_u128_ expect = ((lfpool_u128_)*hi << 64) | *lo;
#  ifdef __clang__	/* without -mcx16 it is a call to libatomic, as meant */
#   pragma clang diagnostic push
#   pragma clang diagnostic ignored "-Watomic-alignment"
#  endif
	ok = __atomic_compare_exchange_n((lfpool_u128_ *)(void *)m, &expect,
					 ((lfpool_u128_)nhi << 64) | nlo, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#  ifdef __clang__
#   pragma clang diagnostic pop
#  endif
	*lo = (uint64_t)expect;
	*hi = (uint64_t)(expect >> 64);
# endif
	return ok;
}

/*
 * Replace the head *old by (ntop, old->tag + LFPOOL_STACK_TAG_STEP_): true;
 * or false, with the current head in *old.  acq_rel, and acquire when it
 * fails: a success takes an object (acquire) and hands one over
 * (release), a failure returns the head that the next attempt reads
 * through.
 */
static inline bool lfpool_stack_cas_(struct lfpool_stack_head_ *head,
				     struct lfpool_stack_head_ *old, uint64_t ntop)
{
	uint64_t ntag = old->tag + LFPOOL_STACK_TAG_STEP_;
	LFPOOL_STACK_YIELD_();
	bool ok = lfpool_cas16_acqrel_(head, &old->top, &old->tag, ntop, ntag);
	LFPOOL_STACK_YIELD_();
	return ok;
}

/*
 * U1, O1: read the head for an attempt: the tag, then the top, both
 * acquire (they pair with the release CAS of the push that installed
 * the top: its link and the object's contents are then visible).
 */
/* Model: stress/model/aba.pml, steps U1 and O1. */
static inline struct lfpool_stack_head_ lfpool_stack_load_(const struct lfpool_stack_head_ *head)
{
	struct lfpool_stack_head_ h;
	h.tag = lfpool_stack_load_u64_acq_(&head->tag);
	h.top = lfpool_stack_load_u64_acq_(&head->top);
	return h;
}

/*
 * U3, O3: the CAS that ends an attempt: ntop becomes the top if the head
 * is still *old (else *old is the current head).  The hook points: the
 * window before it (LFPOOL_STACK_WINDOW_), a failure (LFPOOL_STACK_RETRY_).
 */
static inline bool lfpool_stack_attempt_cas_(struct lfpool_stack_head_ *head,
					     struct lfpool_stack_head_ *old, uint64_t ntop)
{
	LFPOOL_STACK_WINDOW_();
	if (LFPOOL_LIKELY(lfpool_stack_cas_(head, old, ntop)))
		return true;
	LFPOOL_STACK_RETRY_();
	return false;
}

/*
 * One attempt to push a chain of objects, private until now, onto the
 * head *old (from lfpool_stack_load_, or from the last failed attempt):
 * first is its first index, last_link the link word of its last (the
 * same object for one).  true: pushed.  false: the head had changed; *old
 * is the current one, for the next attempt.
 */
/* Model: stress/model/aba.pml, steps U2-U3. */
static inline bool lfpool_stack_push_step_(struct lfpool_stack_head_ *head, uint32_t *last_link,
					   uint32_t first, struct lfpool_stack_head_ *old)
{
	/* U2: the chain's last object lies on the top we read.  Relaxed:
	 * nobody reads it before the CAS publishes it. */
	lfpool_stack_store_u32_rlx_(last_link, (uint32_t)old->top);
	/* U3: release, the link and our writes to the objects, for the pop
	 * that takes them. */
	return lfpool_stack_attempt_cas_(head, old, first);
}

/*
 * One attempt to pop the top of *old, which is not empty; top_link is the
 * top's link word (the caller finds it from the index).  true: the index
 * old->top is the caller's.  false: the head had changed; *old is the
 * current one, which may be empty.
 */
/* Model: stress/model/aba.pml, steps O2-O3 (its control drops the tag). */
static inline bool lfpool_stack_pop_step_(struct lfpool_stack_head_ *head, const uint32_t *top_link,
					  struct lfpool_stack_head_ *old)
{
	/* O2: the index below the top.  Relaxed: after the acquire that read
	 * *old; if the top was taken meanwhile the value may be anything,
	 * and the CAS fails on the tag. */
	uint32_t next = lfpool_stack_load_u32_rlx_(top_link);
	/* O3: acquire, the object (as the loads); release, our read of the
	 * link done before the next pusher of this index writes it. */
	return lfpool_stack_attempt_cas_(head, old, next);
}

#endif /* LFPOOL_STACK_STEPS_ */

/*
 * The Concurrent pool's view: the part of a pool that the inline get and
 * put read.  It leads the pool's struct (lib/concurrent.c embeds it): its
 * first line, the one the head's CAS owns anyway, for slab 0, its second
 * for the small slabs.  head is the pool's free stack.
 *
 * The inline paths serve slab 0, the pool's first full-size slab (its
 * indices are 0 .. per_slab - 1 and its objects lie at base + index x
 * stride; the small slabs a pool grows first are numbered from 1), which
 * holds the hottest objects of most pools: a get whose top index is below
 * get_n pops inline, a put of an object at base + [0, put_span) pushes
 * inline.  Both bounds are 0 while
 * slab 0 has no memory, while a trim runs (it may give slab 0 back), and
 * for good in debug pools (get_n, put_span) and pools with a reset hook
 * (put_span): the one compare that picks the path is also the flag test.
 * The library sets them under its slab lock: base and links, then the
 * bounds (release); the inline code reads a bound (acquire), then base or
 * links.  A get reads base only once its CAS took the index (so slab 0
 * stays while it reads), a put owns its object (so the slab 0 it may be in
 * stays); lib/concurrent.c ("The inline paths") says why a stale bound or
 * base never maps an object of another slab.
 *
 * Where that compare fails, the second line serves the small slabs (slab
 * numbers 1 .. LFPOOL_CONC_SMALL_, lib/slab.h), which an unbounded pool
 * grows first and a pool of fewer than 334 objects of 64 B never grows
 * past: a get whose top index is of small slab n <= gets, a put of an
 * object at small_base[n - 1] + [0, small_span[n - 1]).  The same rules,
 * slab by slab: gets and the spans are the bounds (0: closed), the bases
 * and links are set before them and never cleared.  Every other call goes
 * out of line.
 */
#define LFPOOL_CONC_SMALL_ 3	/* small slab numbers: lib/slab.h, LFP_SMALL_MAX */

struct lfpool_concurrent_small_ {
	char *base[LFPOOL_CONC_SMALL_];		/* small slab n's object 0 at [n - 1] */
	uint32_t *links[LFPOOL_CONC_SMALL_];	/* its link words (side data, kept until destroy) */
	uint32_t span[LFPOOL_CONC_SMALL_];	/* a put pushes obj inline when obj - base < span */
	uint8_t gets;		/* a get pops top inline when its slab number is 1 .. gets */
	uint8_t off_bits;	/* an index is slab number << off_bits | offset in the slab */
} __attribute__((aligned(64)));

struct lfpool_concurrent_fast {
	struct lfpool_stack_head_ head;	/* the free stack */
	uint64_t get_n;		/* a get pops index top inline when top < get_n */
	uint64_t put_span;	/* a put pushes obj inline when obj - base < put_span */
	char *base;		/* slab 0's object 0 */
	uint32_t *links;	/* slab 0's link words (side data, kept until destroy) */
	uint64_t stride;	/* bytes from one object to the next */
	uint64_t magic;		/* ceil(2^64 / stride): x / stride == x * magic >> 64 */
	struct lfpool_concurrent_small_ small;	/* the second line */
} __attribute__((aligned(64)));

#ifdef LFPOOL_STACK_STEPS_
/*
 * The small slab number (1 .. gets) of index top when the view serves its
 * gets inline, else 0 (slab 0, a slab past the small ones, an empty
 * stack, or closed); *off its offset there.  off_bits is set at create,
 * and read before the acquire of gets, which would make it a load again.
 */
static inline uint64_t lfpool_conc_small_get_(const struct lfpool_concurrent_small_ *v, uint64_t top,
					      uint64_t *off)
{
	unsigned ob = v->off_bits;
	uint64_t n = top >> ob;
	*off = top - (n << ob);
	return n - 1 < lfpool_stack_load_u8_acq_(&v->gets) ? n : 0;
}

/* The link word at offset off of small slab n (from lfpool_conc_small_get_). */
static inline const uint32_t *lfpool_conc_small_link_(const struct lfpool_concurrent_small_ *v, uint64_t n,
						      uint64_t off)
{
	return (const uint32_t *)lfpool_stack_load_ptr_rlx_((void *const *)&v->links[n - 1]) + off;
}

/* The object at offset off of small slab n, once a pop took it. */
static inline void *lfpool_conc_small_obj_(const struct lfpool_concurrent_fast *f, uint64_t n, uint64_t off)
{
	return (char *)lfpool_stack_load_ptr_rlx_((void *const *)&f->small.base[n - 1]) + off * f->stride;
}

/*
 * Whether obj, an object the caller owns, lies in small slab k + 1 as the
 * view serves its puts: true with its index in *idx and its link word in
 * *link.
 */
static inline bool lfpool_conc_small_in_(const struct lfpool_concurrent_fast *f, const void *obj,
					 uint32_t k, uint32_t *idx, uint32_t **link)
{
	const struct lfpool_concurrent_small_ *v = &f->small;
	uint64_t span = lfpool_stack_load_u32_acq_(&v->span[k]);
	uint64_t delta = (uint64_t)((uintptr_t)obj -
				    (uintptr_t)lfpool_stack_load_ptr_rlx_((void *const *)&v->base[k]));
	if (LFPOOL_LIKELY(delta >= span))
		return false;
	__extension__ typedef unsigned __int128 lfpool_u128_;
	uint32_t off = (uint32_t)(((lfpool_u128_)delta * f->magic) >> 64);
	*idx = (k + 1) << v->off_bits | off;
	*link = (uint32_t *)lfpool_stack_load_ptr_rlx_((void *const *)&v->links[k]) + off;
	return true;
}

/* Whether the view serves a put of obj in any small slab (as above): one
 * probe per small slab, LFPOOL_CONC_SMALL_ of them. */
#if LFPOOL_CONC_SMALL_ != 3
# error "lfpool_conc_small_put_ probes three small slabs: one probe per LFPOOL_CONC_SMALL_"
#endif
static inline bool lfpool_conc_small_put_(const struct lfpool_concurrent_fast *f, const void *obj,
					  uint32_t *idx, uint32_t **link)
{
	return lfpool_conc_small_in_(f, obj, 0, idx, link) || lfpool_conc_small_in_(f, obj, 1, idx, link) ||
	       lfpool_conc_small_in_(f, obj, 2, idx, link);
}
#endif /* LFPOOL_STACK_STEPS_ */

#ifdef __cplusplus
}
#endif
#endif
