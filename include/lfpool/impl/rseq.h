/* SPDX-License-Identifier: MIT */
/*
 * lfpool/impl/rseq.h - per-CPU areas: their layout and the restartable
 * sequences (rseq) that pop and push them, on Linux x86-64 with glibc's
 * rseq registration.  The one copy: lfpool/ts.h inlines get and put into
 * users' code, and lib/threadstatic/percpu.[ch] runs the same sequences
 * (and the bulk ones) inside the library.  Not for users: include
 * lfpool/ts.h.
 *
 * Terms: area: one CPU's store of objects; table: a pool's areas and
 * their gate (struct lfpool_percpu_hot_); gate: the number of CPUs whose
 * areas a sequence may use (0: closed, while a thief takes them over);
 * section: a sequence's instructions from its start to its commit, the
 * one store others see; abort: the kernel's restart of an interrupted
 * section; miss: a sequence that stored nothing (area full or empty,
 * gate closed) and leaves the call to the slow path.
 *
 * Each CPU owns one area, { pushes, pops, lock, slot[max] }, holding
 * pushes - pops objects in slot[0 ..).  A sequence reads the CPU number
 * from glibc's own registration (the struct rseq at %fs:__rseq_offset;
 * the library never registers a second one, cf. tcmalloc#144) and changes
 * that CPU's area with no atomic instruction and no lock.  Why that is
 * correct:
 *  - A sequence stores its descriptor's address in rseq_cs, then runs its
 *    critical section [start, commit).  If the thread is preempted,
 *    migrated or signalled there, the kernel moves it to the abort label
 *    (after the 4-byte signature the kernel checks), which starts over
 *    and reads the CPU number again.  The registers a restart needs (the
 *    inputs) are never written inside the section.
 *  - The only store others can observe is the section's last instruction,
 *    the store of pushes or pops (the commit; in get and put an incq of
 *    the counter in memory, one instruction that no interrupt splits).  A
 *    push writes its slots before it, at and beyond pushes - pops, which
 *    no one reads until the commit makes them part of the area; a pop
 *    only loads before its commit (the bulk pop also stores into the
 *    caller's private array, which a restart rewrites).
 *  - Hence every commit to an area is made by a thread running on that
 *    CPU that was not interrupted since it read the counters: the
 *    sections of one area are serialized as if each held that CPU's lock.
 *    A thread that migrates passes through the scheduler, which orders
 *    its earlier accesses before it runs on the new CPU.
 *  - The gate: a section compares the CPU number with the table's gate
 *    before any store, and a CPU at or above it (a failed registration's
 *    cpu_id < 0 read as unsigned too) is a miss.  A thief closes the gate
 *    (0) and fences with membarrier-rseq, which aborts every section in
 *    flight; it is then the only writer of every area until it opens the
 *    gate again (lib/threadstatic/steal.c; stress/model/steal_cpu.pml).
 *  - A miss jumps out of the section before any store; rseq_cs may stay
 *    set: the kernel ignores it once the instruction pointer is outside
 *    [start, commit).  The descriptor lives in the code that inlined the
 *    sequence: that code must stay mapped while any thread that ran it
 *    lives (define LFPOOL_NO_INLINE_RSEQ in code that is dlclose()d; the
 *    library itself is linked -z nodelete).
 *
 * Each instruction is on a line of its own with what it does; the
 * offsets are the operands named after the fields (offsetof of the
 * structs below), so a change of layout changes the code with it.
 */
#ifndef LFPOOL_IMPL_RSEQ_H
#define LFPOOL_IMPL_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfpool/common.h"

/* The head of a per-CPU table, as the sequences read it (the library's
 * table, lib/threadstatic/percpu.h, begins with it). */
struct lfpool_percpu_hot_ {
	char *areas;		/* gate areas, stride bytes apart */
	uint64_t stride;	/* bytes per area */
	uint32_t gate;		/* a sequence may use areas [0, gate); 0: closed */
	uint32_t max;		/* slots per area */
};

/* One CPU's area: these counters, then max slots (the library's struct
 * lfp_percpu_area), holding pushes - pops objects from the first slot. */
struct lfpool_percpu_area_ {
	uint64_t pushes;
	uint64_t pops;
	uint8_t lock;		/* the library's fallback path only */
	uint8_t pad_[7];
};

/* The kernel's struct rseq (linux/rseq.h) as far as the sequences use it
 * (lib/threadstatic/percpu.c checks it against <sys/rseq.h>). */
struct lfpool_rseq_abi_ {
	uint32_t cpu_id_start;
	uint32_t cpu_id;	/* the CPU the thread runs on */
	uint64_t rseq_cs;	/* the descriptor of the section running */
};

/* The sequences exist on Linux x86-64 with GCC or Clang and glibc >= 2.35
 * (its __rseq_offset), in AT&T syntax (LFPOOL_NO_INLINE_ASM: none). */
#if defined(__x86_64__) && defined(__LP64__) && defined(__linux__) && defined(__GNUC__) && \
	!defined(LFPOOL_NO_INLINE_ASM) && defined(__GLIBC__) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
# define LFPOOL_RSEQ_ASM_ 1
#endif
/* Users' code inlines them unless it runs under ThreadSanitizer or
 * defines LFPOOL_NO_INLINE_RSEQ (then lfpool_ts_get and _put call the
 * library, which runs them itself). */
#if defined(LFPOOL_RSEQ_ASM_) && !defined(LFPOOL_TSAN_) && !defined(LFPOOL_NO_INLINE_RSEQ)
# define LFPOOL_RSEQ_INLINE_ 1
#endif

#ifdef LFPOOL_RSEQ_ASM_
/* glibc's __rseq_offset: where its struct rseq lies from the thread
 * pointer, a constant.  Named apart from <sys/rseq.h>'s declaration,
 * which has C++ linkage in C++ (glibc 2.36), so that either header may
 * come first. */
extern const ptrdiff_t lfpool_rseq_offset_ __asm__("__rseq_offset");

/* off = __rseq_offset, read by an asm without memory operands, which the
 * compiler treats as a function of the variable's address: it may load
 * the offset once per loop, where a plain load would follow every
 * sequence again (their memory clobber).  Safe to move anywhere: the
 * variable always exists and glibc sets it before main (figures in
 * NEWS, 2026-12-02).  The pool's table pointers keep plain loads: GCC
 * moved an asm read of them ahead of the per-CPU test. */
# define LFPOOL_RSEQ_OFFSET_(off) \
	__asm__("movq (%1), %0" : "=r"(off) : "r"(&lfpool_rseq_offset_))

/* The field offsets every sequence may name, as asm operands. */
# define LFPOOL_RSEQ_FIELDS_ \
	[rseq_cs] "i"(offsetof(struct lfpool_rseq_abi_, rseq_cs)), \
	[cpu_id] "i"(offsetof(struct lfpool_rseq_abi_, cpu_id)), \
	[areas] "i"(offsetof(struct lfpool_percpu_hot_, areas)), \
	[stride] "i"(offsetof(struct lfpool_percpu_hot_, stride)), \
	[gate] "i"(offsetof(struct lfpool_percpu_hot_, gate)), \
	[max] "i"(offsetof(struct lfpool_percpu_hot_, max)), \
	[pushes] "i"(offsetof(struct lfpool_percpu_area_, pushes)), \
	[pops] "i"(offsetof(struct lfpool_percpu_area_, pops)), \
	[slot] "i"(sizeof(struct lfpool_percpu_area_))	/* the slots follow */

/*
 * The start of every sequence: its descriptor, the arming, and inside the
 * section the address of the caller's CPU area into register a (a
 * 64-bit register's text, a32 its low half), or a jump to miss.  Operands:
 * [h] the table, [off] __rseq_offset.  Labels (%= numbers them per asm):
 * .Llfpool_rseq_{cs,retry,start}%= here, .Llfpool_rseq_{commit,abort}%=
 * in LFPOOL_RSEQ_END_.  Labels share the line of what follows them: GCC
 * weighs an asm by its lines (block placement, inlining), and these have
 * as many as the sequences had before they were written once.  The
 * sections' flag "?" puts them in the group of the code that inlined
 * them, if any: a C++ inline function's COMDAT group, which the linker
 * keeps one of; a descriptor or stub outside it would point into the
 * copy the linker dropped ("defined in discarded section").
 */
# define LFPOOL_RSEQ_ENTER_(a, a32, miss) \
	".pushsection __rseq_cs, \"aw?\"\n\t" \
	".balign 32\n" \
	".Llfpool_rseq_cs%=:\t.long 0, 0\n\t"	/* version, flags; */ \
	".quad .Llfpool_rseq_start%=, "		/* start_ip, */ \
	".Llfpool_rseq_commit%= - .Llfpool_rseq_start%=, " /* post_commit_offset, */ \
	".Llfpool_rseq_abort%=\n\t"		/* abort_ip */ \
	".popsection\n" \
	".Llfpool_rseq_retry%=:\t" \
	"leaq .Llfpool_rseq_cs%=(%%rip), " a "\n\t"	/* the descriptor */ \
	"movq " a ", %%fs:%c[rseq_cs](%[off])\n"	/* armed */ \
	".Llfpool_rseq_start%=:\t" \
	"movl %%fs:%c[cpu_id](%[off]), " a32 "\n\t"	/* the CPU number */ \
	"cmpl %c[gate](%[h]), " a32 "\n\t"		/* at or past the gate: */ \
	"jae " miss "\n\t"				/* a miss */ \
	"imulq %c[stride](%[h]), " a "\n\t"		/* its area's offset */ \
	"addq %c[areas](%[h]), " a "\n\t"		/* its area */

/* Right after the commit instruction: the section's end, then out of line
 * (a hit falls through) the abort handler, after the signature the kernel
 * checks, which starts over. */
# define LFPOOL_RSEQ_COLD_ "\t.pushsection .text.unlikely, \"ax?\"\n"
# define LFPOOL_RSEQ_END_ \
	".Llfpool_rseq_commit%=:" LFPOOL_RSEQ_COLD_ \
	"\t.long 0x53053053\n"			/* RSEQ_SIG */ \
	".Llfpool_rseq_abort%=:\t" \
	"jmp .Llfpool_rseq_retry%=\n\t"		/* start over */ \
	".popsection\n"

/* Pop the top object of the caller's CPU area; NULL when it is empty or
 * the gate is closed. */
static inline void *lfpool_rseq_get_(const struct lfpool_percpu_hot_ *h)
{
	void *obj;
	uint64_t a, n;
	ptrdiff_t off;
	LFPOOL_RSEQ_OFFSET_(off);
	__asm__ __volatile__(
		LFPOOL_RSEQ_ENTER_("%[a]", "%k[a]", ".Llfpool_rseq_miss%=")
		"movq %c[pushes](%[a]), %[n]\n\t"	/* objects held: pushes */
		"subq %c[pops](%[a]), %[n]\n\t"		/* minus pops */
		"jz .Llfpool_rseq_miss%=\n\t"		/* none: a miss */
		"movq %c[slot]-8(%[a],%[n],8), %[obj]\n\t" /* the top one */
		"incq %c[pops](%[a])\n"			/* commit: one more pop */
		LFPOOL_RSEQ_END_
		LFPOOL_RSEQ_COLD_
		".Llfpool_rseq_miss%=:\t"
		"xorl %k[obj], %k[obj]\n\t"		/* NULL */
		"jmp .Llfpool_rseq_done%=\n\t"
		".popsection\n"
		".Llfpool_rseq_done%=:\n"
		: [obj] "=&r"(obj), [a] "=&r"(a), [n] "=&r"(n)
		: [h] "r"(h), [off] "r"(off), LFPOOL_RSEQ_FIELDS_
		: "memory", "cc");
	return obj;
}

/* Push object onto the caller's CPU area of table; go to the caller's
 * label full (nothing stored) when it is full or the gate is closed.  A
 * macro with asm goto: the hit path runs no test after the sequence, and
 * GCC lays out the caller's code as around a plain branch (an inline
 * function returning whether it stored moved blocks of lfpool_ts_put's
 * callers).  The scratch registers are fixed, as asm goto has no outputs
 * before GCC 11. */
# define LFPOOL_RSEQ_PUT_(table, object, full) do { \
	ptrdiff_t off_; \
	LFPOOL_RSEQ_OFFSET_(off_); \
	__asm__ goto( \
		LFPOOL_RSEQ_ENTER_("%%rax", "%%eax", "%l[" #full "]") \
		"movq %c[pushes](%%rax), %%rdx\n\t"	/* objects held: pushes */ \
		"subq %c[pops](%%rax), %%rdx\n\t"	/* minus pops */ \
		"cmpl %c[max](%[h]), %%edx\n\t"	/* as many as slots: */ \
		"jae %l[" #full "]\n\t"		/* a miss */ \
		"movq %[o], %c[slot](%%rax,%%rdx,8)\n\t" /* obj above the top */ \
		"incq %c[pushes](%%rax)\n"		/* commit: one more push */ \
		LFPOOL_RSEQ_END_ \
		: : [h] "r"(table), [off] "r"(off_), [o] "r"(object), LFPOOL_RSEQ_FIELDS_ \
		: "rax", "rdx", "memory", "cc" : full); \
	} while (0)

/* LFPOOL_RSEQ_PUT_ as a test: true when it pushed object, false (nothing
 * stored) on a miss.  Inlined whole, the compiler joins the asm's jump
 * and the caller's test of the result: lfpool_ts_put's code is the
 * same as with the macro and a label of its own. */
#if defined(__GNUC__)
__attribute__((always_inline)) static inline bool lfpool_rseq_put_(
	const struct lfpool_percpu_hot_ *table, void *object);
#endif
static inline bool lfpool_rseq_put_(const struct lfpool_percpu_hot_ *table, void *object)
{
	LFPOOL_RSEQ_PUT_(table, object, lfpool_full_);
	return true;
lfpool_full_:
	return false;
}

/*
 * The per-CPU dispatch, written once for its callers (lfpool/ts.h's
 * inline get, lib/threadstatic/percpu.h, ts_percpu.c; ts.h's put tests
 * lfpool_rseq_put_ itself, its NULL object sharing the miss): run the
 * sequence on table h; a miss (the area empty or full, the gate closed)
 * runs the caller's statement miss instead, its slow path, which usually
 * leaves the function.  The hit path is the sequence alone.
 *
 * LFPOOL_RSEQ_GET_OR_: obj = the popped object, or miss.
 * LFPOOL_RSEQ_PUT_OR_: obj (not NULL) pushed, or miss (nothing stored).
 * The put tests lfpool_rseq_put_ (above), so it has no label of its own
 * and a function may use it twice.  miss runs inside the macro's own
 * do-while: it must leave by return or a call, never break or continue
 * (which would leave that loop, not the caller's).
 */
# define LFPOOL_RSEQ_GET_OR_(h, obj, miss) do { \
	(obj) = lfpool_rseq_get_(h); \
	if (LFPOOL_UNLIKELY((obj) == NULL)) { \
		miss; \
	} \
	} while (0)
# define LFPOOL_RSEQ_PUT_OR_(h, obj, miss) do { \
	if (!lfpool_rseq_put_(h, obj)) { \
		miss; \
	} \
	} while (0)

# ifdef LFPOOL_BUILDING
/* The library's bulk moves (lib/threadstatic/percpu.h), which users' code
 * never inlines. */

/* Pop k = min(n, held) objects of the caller's CPU area into objs[0 .. k),
 * the top one last; returns k (0 too when the gate is closed). */
static inline size_t lfpool_rseq_pop_bulk_(const struct lfpool_percpu_hot_ *h, void **objs,
					   size_t n)
{
	uint64_t a, popped, from, i, t;
	size_t k;
	ptrdiff_t off;
	LFPOOL_RSEQ_OFFSET_(off);
	__asm__ __volatile__(
		LFPOOL_RSEQ_ENTER_("%[a]", "%k[a]", ".Llfpool_rseq_none%=")
		"movq %c[pops](%[a]), %[popped]\n\t"	/* pops */
		"movq %c[pushes](%[a]), %[from]\n\t"	/* pushes */
		"subq %[popped], %[from]\n\t"		/* objects held */
		"movq %[n], %[k]\n\t"			/* k = n, */
		"cmpq %[from], %[k]\n\t"		/* more than held: */
		"cmova %[from], %[k]\n\t"		/* k = min(n, held) */
		"subq %[k], %[from]\n\t"		/* the first slot to take, */
		"leaq %c[slot](%[a],%[from],8), %[from]\n\t" /* its address */
		"xorl %k[i], %k[i]\n"			/* i = 0 */
		".Llfpool_rseq_copy%=:\t"
		"cmpq %[k], %[i]\n\t"			/* i against k: */
		"jae .Llfpool_rseq_copied%=\n\t"	/* while i < k: */
		"movq (%[from],%[i],8), %[t]\n\t"	/* t = slot */
		"movq %[t], (%[objs],%[i],8)\n\t"	/* objs[i] = slot */
		"incq %[i]\n\t"				/* i + 1, */
		"jmp .Llfpool_rseq_copy%=\n"		/* again */
		".Llfpool_rseq_copied%=:\t"
		"addq %[k], %[popped]\n\t"		/* pops + k */
		"movq %[popped], %c[pops](%[a])\n"	/* commit */
		LFPOOL_RSEQ_END_
		LFPOOL_RSEQ_COLD_
		".Llfpool_rseq_none%=:\t"
		"xorl %k[k], %k[k]\n\t"			/* none */
		"jmp .Llfpool_rseq_done%=\n\t"
		".popsection\n"
		".Llfpool_rseq_done%=:\n"
		: [k] "=&r"(k), [a] "=&r"(a), [popped] "=&r"(popped), [from] "=&r"(from),
		  [i] "=&r"(i), [t] "=&r"(t)
		: [h] "r"(h), [off] "r"(off), [objs] "r"(objs), [n] "r"(n), LFPOOL_RSEQ_FIELDS_
		: "memory", "cc");
	return k;
}

/* Push objs[0 .. k), k = min(n, room), onto the caller's CPU area;
 * returns k (0 too when the gate is closed). */
static inline size_t lfpool_rseq_push_bulk_(const struct lfpool_percpu_hot_ *h,
					    void *const *objs, size_t n)
{
	uint64_t a, pushed, to, i, t;
	size_t k;
	ptrdiff_t off;
	LFPOOL_RSEQ_OFFSET_(off);
	__asm__ __volatile__(
		LFPOOL_RSEQ_ENTER_("%[a]", "%k[a]", ".Llfpool_rseq_none%=")
		"movq %c[pushes](%[a]), %[pushed]\n\t"	/* pushes */
		"movq %[pushed], %[to]\n\t"		/* pushes, */
		"subq %c[pops](%[a]), %[to]\n\t"	/* objects held */
		"movl %c[max](%[h]), %k[k]\n\t"		/* slots */
		"subq %[to], %[k]\n\t"			/* room */
		"cmpq %[n], %[k]\n\t"			/* more room than n: */
		"cmova %[n], %[k]\n\t"			/* k = min(n, room) */
		"leaq %c[slot](%[a],%[to],8), %[to]\n\t" /* the first free slot */
		"xorl %k[i], %k[i]\n"			/* i = 0 */
		".Llfpool_rseq_copy%=:\t"
		"cmpq %[k], %[i]\n\t"			/* i against k: */
		"jae .Llfpool_rseq_copied%=\n\t"	/* while i < k: */
		"movq (%[objs],%[i],8), %[t]\n\t"	/* t = objs[i] */
		"movq %[t], (%[to],%[i],8)\n\t"		/* slot = objs[i] */
		"incq %[i]\n\t"				/* i + 1, */
		"jmp .Llfpool_rseq_copy%=\n"		/* again */
		".Llfpool_rseq_copied%=:\t"
		"addq %[k], %[pushed]\n\t"		/* pushes + k */
		"movq %[pushed], %c[pushes](%[a])\n"	/* commit */
		LFPOOL_RSEQ_END_
		LFPOOL_RSEQ_COLD_
		".Llfpool_rseq_none%=:\t"
		"xorl %k[k], %k[k]\n\t"			/* none */
		"jmp .Llfpool_rseq_done%=\n\t"
		".popsection\n"
		".Llfpool_rseq_done%=:\n"
		: [k] "=&r"(k), [a] "=&r"(a), [pushed] "=&r"(pushed), [to] "=&r"(to),
		  [i] "=&r"(i), [t] "=&r"(t)
		: [h] "r"(h), [off] "r"(off), [objs] "r"(objs), [n] "r"(n), LFPOOL_RSEQ_FIELDS_
		: "memory", "cc");
	return k;
}
# endif /* LFPOOL_BUILDING */
#endif /* LFPOOL_RSEQ_ASM_ */

#endif
