/*
 * rseq_x86_64.S - per-CPU push and pop as restartable sequences.
 *
 * Each CPU owns one area: { uint64 count; uint64 lock; void *slot[max] }.
 * lfp_rseq_pop and lfp_rseq_push read the CPU number from glibc's own rseq
 * registration (the struct rseq at %fs:__rseq_offset; glibc >= 2.35
 * registers it, and we never register a second one, cf. tcmalloc#144) and
 * change that CPU's area with no atomic instruction and no lock.
 *
 * Why this is correct:
 *  - Each function stores the address of its rseq_cs descriptor in
 *    rseq->rseq_cs, then runs the critical section [start, commit).  If the
 *    thread is preempted, migrated or signalled while its instruction
 *    pointer is in that range, the kernel moves it to the abort label (whose
 *    preceding 4 bytes are RSEQ_SIG, as the kernel checks), which starts
 *    over and re-reads the CPU number.
 *  - The only store that others can observe is the last instruction of the
 *    section, the store of count (the commit).  push writes slot[count]
 *    before it, which is beyond count and so unobservable until committed:
 *    an aborted push leaves the area as it was.  pop only loads before its
 *    commit.
 *  - Hence every commit to a CPU's area is made by a thread running on
 *    that CPU that was not interrupted since it read count: the sections of
 *    one area are serialized, exactly as if each held that CPU's lock.
 *  - A thread that migrates passes through the kernel's scheduler, which
 *    orders all its earlier accesses before it runs on the new CPU, so an
 *    object pushed on one CPU and popped on the same CPU by another thread
 *    is seen with all of its writes.
 *  - The empty and full exits are jumps out of the section before any
 *    store; the rseq_cs pointer may stay set: the kernel ignores it once the
 *    instruction pointer is outside [start, commit).
 *  - A CPU number >= the table's CPU count is treated as a miss.
 *
 * Argument layout (struct lfp_percpu_hot in percpu.h):
 *   0: areas (char *)   8: stride (uint64)   16: ncpu (uint32)   20: max (uint32)
 */
#define RSEQ_SIG 0x53053053
#define RSEQ_CPU_ID 4	/* offsetof(struct rseq, cpu_id) */
#define RSEQ_CS 8	/* offsetof(struct rseq, rseq_cs) */

	.section .data.rel.ro, "aw"
	.balign 32
pop_cs:
	.long 0, 0
	.quad pop_start, pop_commit - pop_start, pop_abort
	.balign 32
push_cs:
	.long 0, 0
	.quad push_start, push_commit - push_start, push_abort

	.text

/* void *lfp_rseq_pop(const struct lfp_percpu_hot *h): NULL when empty. */
	.globl lfp_rseq_pop
	.hidden lfp_rseq_pop
	.type lfp_rseq_pop, @function
lfp_rseq_pop:
	.cfi_startproc
	movq __rseq_offset@GOTPCREL(%rip), %rax
	movq (%rax), %rax
	leaq pop_cs(%rip), %r8
pop_retry:
	movq %r8, %fs:RSEQ_CS(%rax)
pop_start:
	movl %fs:RSEQ_CPU_ID(%rax), %r9d
	cmpl 16(%rdi), %r9d
	jae pop_miss
	imulq 8(%rdi), %r9
	addq (%rdi), %r9
	movq (%r9), %r10
	testq %r10, %r10
	jz pop_miss
	movq 8(%r9,%r10,8), %r11
	decq %r10
	movq %r10, (%r9)
pop_commit:
	movq %r11, %rax
	ret
pop_miss:
	xorl %eax, %eax
	ret
	.long RSEQ_SIG
pop_abort:
	jmp pop_retry
	.cfi_endproc
	.size lfp_rseq_pop, . - lfp_rseq_pop

/* int lfp_rseq_push(const struct lfp_percpu_hot *h, void *obj): 0 when full. */
	.globl lfp_rseq_push
	.hidden lfp_rseq_push
	.type lfp_rseq_push, @function
lfp_rseq_push:
	.cfi_startproc
	movq __rseq_offset@GOTPCREL(%rip), %rax
	movq (%rax), %rax
	leaq push_cs(%rip), %r8
push_retry:
	movq %r8, %fs:RSEQ_CS(%rax)
push_start:
	movl %fs:RSEQ_CPU_ID(%rax), %r9d
	cmpl 16(%rdi), %r9d
	jae push_full
	imulq 8(%rdi), %r9
	addq (%rdi), %r9
	movq (%r9), %r10
	movl 20(%rdi), %edx
	cmpq %rdx, %r10
	jae push_full
	movq %rsi, 16(%r9,%r10,8)
	incq %r10
	movq %r10, (%r9)
push_commit:
	movl $1, %eax
	ret
push_full:
	xorl %eax, %eax
	ret
	.long RSEQ_SIG
push_abort:
	jmp push_retry
	.cfi_endproc
	.size lfp_rseq_push, . - lfp_rseq_push

	.section .note.GNU-stack, "", @progbits
