/* SPDX-License-Identifier: MIT */
/*
 * rseq_x86_64.S - per-CPU get, put and bulk pop and push as restartable
 * sequences.
 *
 * Each CPU owns one area: { uint64 pushes; uint64 pops; uint64 lock;
 * void *slot[max] }, holding pushes - pops objects in slot[0 ..).  The
 * functions read the CPU number from glibc's own rseq registration (the
 * struct rseq at %fs:__rseq_offset; glibc >= 2.35 registers it, and we
 * never register a second one, cf. tcmalloc#144) and change that CPU's area
 * with no atomic instruction and no lock.  get and put, the fast paths of
 * a pool, tail-call the table's on_empty or on_full when the area cannot
 * serve, so that a hit runs in this file alone.
 *
 * Why this is correct:
 *  - Each function stores the address of its rseq_cs descriptor in
 *    rseq->rseq_cs, then runs the critical section [start, commit).  If the
 *    thread is preempted, migrated or signalled while its instruction
 *    pointer is in that range, the kernel moves it to the abort label (whose
 *    preceding 4 bytes are RSEQ_SIG, as the kernel checks), which starts
 *    over and re-reads the CPU number.  The registers a restart needs (the
 *    arguments) are never written inside the section.
 *  - The only store that others can observe is the last instruction of the
 *    section, the store of pushes or pops (the commit; in get and put an
 *    incq of the counter in memory: one instruction, which an interrupt
 *    never splits, so its load and store both fall inside the section or
 *    both after it, and no other CPU writes the area while the gate is
 *    open).  A push writes its
 *    slots before it, at and beyond pushes - pops, which no one reads until
 *    the commit makes them part of the area: an aborted push leaves the area
 *    as it was.  A pop only loads before its commit (the bulk pop also
 *    stores into the caller's array, which is private to the caller and
 *    rewritten by the restart).
 *  - Hence every commit to a CPU's area is made by a thread running on
 *    that CPU that was not interrupted since it read the counters: the
 *    sections of one area are serialized, exactly as if each held that
 *    CPU's lock.
 *  - A thread that migrates passes through the kernel's scheduler, which
 *    orders all its earlier accesses before it runs on the new CPU, so an
 *    object pushed on one CPU and popped on the same CPU by another thread
 *    is seen with all of its writes.
 *  - The empty and full exits are jumps out of the section before any
 *    store; the rseq_cs pointer may stay set: the kernel ignores it once the
 *    instruction pointer is outside [start, commit), and clears it.  The
 *    descriptors live as long as the library is mapped, which is as long
 *    as any thread may run (the library is linked with -z nodelete: a
 *    dlclose() never unmaps it).
 *  - A CPU number >= the table's CPU count (or a failed registration,
 *    cpu_id < 0 read as unsigned) is treated as empty and full: the owner's
 *    slow paths serve instead.
 *
 * Argument layout (struct lfp_percpu_hot in percpu.h; the offsets are in
 * rseq_offsets.h, which percpu.h checks against the struct):
 *   0: areas (char *)   8: stride (uint64)   16: ncpu (uint32)   20: max (uint32)
 *   24: rseq_offset (int64)   32: on_empty (fn)   40: on_full (fn)
 */
#define RSEQ_SIG 0x53053053
#include "rseq_offsets.h"	/* checked against the C structs by percpu.[ch] */
#define RSEQ_CPU_ID LFP_RSEQ_CPU_ID
#define RSEQ_CS LFP_RSEQ_CS
#define PUSHES LFP_AREA_PUSHES	/* offsets in an area */
#define POPS LFP_AREA_POPS
#define SLOT LFP_AREA_SLOT
#define HOT_AREAS LFP_HOT_AREAS	/* offsets in struct lfp_percpu_hot */
#define HOT_STRIDE LFP_HOT_STRIDE
#define HOT_NCPU LFP_HOT_NCPU
#define HOT_MAX LFP_HOT_MAX
#define HOT_OFFSET LFP_HOT_RSEQ_OFFSET
#define HOT_EMPTY LFP_HOT_ON_EMPTY
#define HOT_FULL LFP_HOT_ON_FULL

/* Arm the descriptor cs: %rax = __rseq_offset (kept in the table: one
 * load instead of two through the GOT), rseq->rseq_cs = &cs. */
.macro ARM cs
	movq HOT_OFFSET(%rdi), %rax
	leaq \cs(%rip), %r8
	movq %r8, %fs:RSEQ_CS(%rax)
.endm

/* %r9 = the area of the CPU this runs on (%rdi: the hot table), or jump to
 * miss when the CPU is not in the table. */
.macro AREA miss
	movl %fs:RSEQ_CPU_ID(%rax), %r9d
	cmpl HOT_NCPU(%rdi), %r9d
	jae \miss
	imulq HOT_STRIDE(%rdi), %r9
	addq HOT_AREAS(%rdi), %r9
.endm

/* Begin the function name: its descriptor (name_start .. name_commit,
 * abort at name_abort), the entry, which arms it, and the section up to
 * the area of this CPU; miss is where a CPU not in the table goes. */
.macro BEGIN name, miss
	.pushsection .data.rel.ro, "aw"
	.balign 32
\name\()_cs:
	.long 0, 0
	.quad \name\()_start, \name\()_commit - \name\()_start, \name\()_abort
	.popsection
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	.cfi_startproc
\name\()_retry:
	ARM \name\()_cs
\name\()_start:
	AREA \miss
.endm

/* End the function name: the abort handler, after the signature the
 * kernel checks, starts over. */
.macro END name
	.long RSEQ_SIG
\name\()_abort:
	jmp \name\()_retry
	.cfi_endproc
	.size \name, . - \name
.endm

/* Copy %rax pointers from \from[0 ..) to \to[0 ..), with %rcx and %r11. */
.macro COPY from, to
	xorl %ecx, %ecx
1:	cmpq %rax, %rcx
	jae 2f
	movq (\from,%rcx,8), %r11
	movq %r11, (\to,%rcx,8)
	incq %rcx
	jmp 1b
2:
.endm

	.text

/* void *lfp_rseq_get(struct lfp_percpu_hot *h): the top object, or
 * h->on_empty(h) when the area is empty. */
BEGIN lfp_rseq_get, lfp_rseq_get_empty
	movq PUSHES(%r9), %rcx
	subq POPS(%r9), %rcx		/* objects held */
	jz lfp_rseq_get_empty
	movq SLOT-8(%r9,%rcx,8), %rax	/* the top one */
	incq POPS(%r9)			/* commit */
lfp_rseq_get_commit:
	ret
lfp_rseq_get_empty:
	jmp *HOT_EMPTY(%rdi)
END lfp_rseq_get

/* void lfp_rseq_put(struct lfp_percpu_hot *h, void *obj): push obj, or
 * h->on_full(h, obj) when the area is full. */
BEGIN lfp_rseq_put, lfp_rseq_put_full
	movq PUSHES(%r9), %rcx
	subq POPS(%r9), %rcx		/* objects held */
	movl HOT_MAX(%rdi), %edx
	cmpq %rdx, %rcx
	jae lfp_rseq_put_full
	movq %rsi, SLOT(%r9,%rcx,8)
	incq PUSHES(%r9)		/* commit */
lfp_rseq_put_commit:
	ret
lfp_rseq_put_full:
	jmp *HOT_FULL(%rdi)
END lfp_rseq_put

/* size_t lfp_rseq_pop_bulk(const struct lfp_percpu_hot *h, void **objs,
 * size_t n): pops k = min(n, held) objects into objs[0 .. k), the top one
 * last; returns k. */
BEGIN lfp_rseq_pop_bulk, lfp_rseq_pop_bulk_none
	movq POPS(%r9), %r8
	movq PUSHES(%r9), %r10
	subq %r8, %r10			/* objects held */
	movq %rdx, %rax
	cmpq %r10, %rax
	cmova %r10, %rax		/* k */
	subq %rax, %r10
	leaq SLOT(%r9,%r10,8), %r10	/* the first slot to take */
	COPY %r10, %rsi
	addq %rax, %r8
	movq %r8, POPS(%r9)		/* commit */
lfp_rseq_pop_bulk_commit:
	ret
lfp_rseq_pop_bulk_none:
	xorl %eax, %eax
	ret
END lfp_rseq_pop_bulk

/* size_t lfp_rseq_push_bulk(const struct lfp_percpu_hot *h, void *const *objs,
 * size_t n): pushes objs[0 .. k), k = min(n, room); returns k. */
BEGIN lfp_rseq_push_bulk, lfp_rseq_push_bulk_none
	movq PUSHES(%r9), %r8
	movq %r8, %r10
	subq POPS(%r9), %r10		/* objects held */
	movl HOT_MAX(%rdi), %eax
	subq %r10, %rax			/* room */
	cmpq %rdx, %rax
	cmova %rdx, %rax		/* k */
	leaq SLOT(%r9,%r10,8), %r10	/* the first free slot */
	COPY %rsi, %r10
	addq %rax, %r8
	movq %r8, PUSHES(%r9)		/* commit */
lfp_rseq_push_bulk_commit:
	ret
lfp_rseq_push_bulk_none:
	xorl %eax, %eax
	ret
END lfp_rseq_push_bulk

	.section .note.GNU-stack, "", @progbits
