/* SPDX-License-Identifier: MIT */
/*
 * rseq_offsets.h - the byte offsets rseq_x86_64.S reads, in one place for
 * the assembly and the C: percpu.h ties each to its struct member with a
 * _Static_assert, percpu.c the kernel's struct rseq ones, so a layout
 * change that the assembly does not follow fails the build.
 */
#ifndef LFP_RSEQ_OFFSETS_H
#define LFP_RSEQ_OFFSETS_H

/* struct lfp_percpu_hot (percpu.h) */
#define LFP_HOT_AREAS 0
#define LFP_HOT_STRIDE 8
#define LFP_HOT_NCPU 16
#define LFP_HOT_MAX 20
#define LFP_HOT_RSEQ_OFFSET 24
#define LFP_HOT_ON_EMPTY 32
#define LFP_HOT_ON_FULL 40

/* struct lfp_percpu_area (percpu.h) */
#define LFP_AREA_PUSHES 0
#define LFP_AREA_POPS 8
#define LFP_AREA_SLOT 24

/* the kernel's struct rseq (linux/rseq.h) */
#define LFP_RSEQ_CPU_ID 4
#define LFP_RSEQ_CS 8

#endif
