/* SPDX-License-Identifier: MIT */
/*
 * stress_hooks.h - the stress suite's hooks into the library, and nothing
 * else includes it: the stress programs' build (stress/local.mk) forces
 * it into every translation unit with -include, ahead of any header, so
 * that the library's sources and the public headers' inline paths, both
 * compiled into those programs, take their hooks from here.  Everywhere
 * else the hook points compile to nothing: lib/atomic.h, lib/stack.h and
 * the public headers define them empty when this file has not, and no
 * public header names the stress suite (tests/layers.sh checks it).
 * stress/yield.c defines what is declared here.
 *
 * The hooks:
 *  - Yield injection (liburcu's tests/common/debug-yield.h): every atomic
 *    step of lib/atomic.h and of the index stack's steps
 *    (include/lfpool/impl/tagged_stack.h) is bracketed by LFP_YIELD() (there
 *    LFPOOL_STACK_YIELD_()), which, when lfp_yield_one_in is N > 0, runs
 *    sched_yield() before or after about one step in N and a short spin
 *    on about one more, so that rare interleavings become common.
 *    LFPOOL_YIELD=N in the environment sets N at start-up; the stress
 *    drivers turn it on for part of their rounds (stress/round.c).
 *  - The CAS window: lfp_stress_yield, when set, runs between reading a
 *    stack head and the CAS on it (include/lfpool/impl/tagged_stack.h's steps,
 *    lib/stack.c's bulk pop and elimination array), so that a scenario
 *    can change the stack in that window (stress/sc_aba.c, aba_replay.c,
 *    elim_replay.c, matrix.c).
 *  - lfp_stress_cas_retries: the calling thread's failed CAS on a stack
 *    head, for the drivers' figures and sc_upto's bound.
 *  - LFPOOL_STRESS_NO_ABA_TAG (stress/lfstress-noaba, the negative
 *    control): the stacks' tag step is 0, so that ABA goes unseen.
 *  - lfp_busy (lib/threadstatic/grace.h): how many library steps the
 *    calling thread is inside that hold a ThreadStatic lock or a grace
 *    section; the matrix's init and fini hooks check that it is 0
 *    (stress/matrix.c, the "hooks" line).
 *  - LFPOOL_STRESS_FINI_LOCKED (stress/lfmatrix-hooklock, that check's
 *    negative control): a trim runs the fini hooks under steal_lock
 *    (lib/threadstatic/threadstatic.c, trim_take).
 */
#ifndef LFP_STRESS_HOOKS_H
#define LFP_STRESS_HOOKS_H

#ifndef LFPOOL_BUILDING
# error "stress_hooks.h is for the stress programs, which build the library's sources"
#endif

/* No system header here: a file forced in first would include it before
 * the _GNU_SOURCE of the file it comes before (__UINT64_TYPE__ is
 * uint64_t, from the compiler). */
/* The switch that the library's sources test (lib/slab.c). */
#define LFPOOL_STRESS 1

extern unsigned lfp_yield_one_in;	/* 0: off; relaxed atomic */
void lfp_yield_point(void);
extern void (*lfp_stress_yield)(void);
extern __thread __UINT64_TYPE__ lfp_stress_cas_retries;
extern __thread unsigned lfp_busy;

/* lib/atomic.h's hook points. */
#define LFP_YIELD() \
	do { if (__builtin_expect(__atomic_load_n(&lfp_yield_one_in, __ATOMIC_RELAXED) != 0, 0)) \
		lfp_yield_point(); } while (0)
#define LFP_Y(expr) ({ LFP_YIELD(); __typeof__(expr) y_ = (expr); LFP_YIELD(); y_; })
#define LFP_YV(stmt) do { LFP_YIELD(); stmt; LFP_YIELD(); } while (0)

/* The index stack's, in include/lfpool/impl/tagged_stack.h: its steps serve the
 * inline Concurrent paths and lib/stack.[ch] alike. */
#define LFPOOL_STACK_YIELD_() \
	(__builtin_expect(__atomic_load_n(&lfp_yield_one_in, __ATOMIC_RELAXED) != 0, 0) \
		? lfp_yield_point() : (void)0)
#define LFPOOL_STACK_WINDOW_() (lfp_stress_yield ? lfp_stress_yield() : (void)0)
#define LFPOOL_STACK_RETRY_() ((void)lfp_stress_cas_retries++)

#ifdef LFPOOL_STRESS_NO_ABA_TAG
# define LFPOOL_STACK_TAG_STEP_ 0u	/* negative control only: ABA-unsafe */
#endif

#endif
