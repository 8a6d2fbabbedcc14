/* SPDX-License-Identifier: MIT */
/*
 * placement_copy.h - one placement's copies of the pair loops of the
 * placement study (placement.c, which includes this file once per
 * placement with PL_K set to its number and undefines it after).
 *
 * Each copy's functions start on a 64-byte boundary and run PL_K * 8
 * bytes of nops first; with GCC's alignment of loops, jumps and labels
 * off for them, each placement puts the same loop at another offset in
 * the 64-byte lines the CPU fetches.  (Clang has no per-function loop alignment: under it the
 * loops stay where -falign-loops=64 puts them and only the code around
 * them moves.)
 */
#ifndef LOOPS_CAT	/* as loops.h defines it */
# define LOOPS_CAT2(a, b) a##_##b
# define LOOPS_CAT(a, b) LOOPS_CAT2(a, b)
#endif
#undef LOOPS_FN_ATTR
#undef LOOPS_ENTRY
#if defined(__GNUC__) && !defined(__clang__)
# define LOOPS_FN_ATTR __attribute__((aligned(64), noinline, \
	optimize("align-loops=1", "align-jumps=1", "align-labels=1")))
#else
# define LOOPS_FN_ATTR __attribute__((aligned(64), noinline))
#endif
#if defined(__x86_64__) || defined(__i386__)
# define PL_NOP_BYTES 1
#else	/* AArch64, RISC-V, ... */
# define PL_NOP_BYTES 4
#endif
/* (.rept, not .skip: a .skip of 0 bytes draws an assembler warning) */
#define LOOPS_ENTRY() \
	__asm__ __volatile__(".rept %c0\n\tnop\n\t.endr" : : "i"(PL_K * 8 / PL_NOP_BYTES))

#define PL_NAME(base) LOOPS_CAT(base, PL_K)
#define PL_WRAP(base, get_fn, put_fn) \
	static inline void *LOOPS_CAT(PL_NAME(base), get)(void *h) { return get_fn(h); } \
	static inline void LOOPS_CAT(PL_NAME(base), put)(void *h, void *obj) { put_fn(h, obj); }

PL_WRAP(plfloor, floor_get, floor_put)
#define IMPL PL_NAME(plfloor)
#define IMPL_PER_THREAD
#include "loops.h"

PL_WRAP(plts, lfpool_ts_get, lfpool_ts_put)
#define IMPL PL_NAME(plts)
#define IMPL_PER_THREAD
#include "loops.h"

PL_WRAP(plcache, lfpool_ts_cache_get, lfpool_ts_cache_put)
#define IMPL PL_NAME(plcache)
#define IMPL_PER_THREAD
#include "loops.h"

#undef LOOPS_FN_ATTR
#undef LOOPS_ENTRY
#undef PL_NAME
#undef PL_WRAP
#undef PL_NOP_BYTES
