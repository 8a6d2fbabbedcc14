/*
 * percpu.h - per-CPU arrays of object pointers: the caches of ThreadStatic's
 * per-CPU mode.
 *
 * Each possible CPU owns one area of `max` slots.  push and pop act on the
 * area of the CPU the caller runs on:
 *  - rseq mode (Linux x86-64, glibc registered rseq): restartable sequences
 *    in rseq_x86_64.S, no atomic read-modify-write, no lock;
 *  - fallback mode (no rseq registration, GLIBC_TUNABLES=
 *    glibc.pthread.rseq=0, another architecture, the TSan build):
 *    sched_getcpu() picks the area and an uncontended spinlock guards it.
 * The mode is chosen once at init and reported by lfp_percpu_mode().
 * Tables are sized from the possible-CPU count, so CPUs that come online
 * later and CPU numbers with holes are covered (tcmalloc#188).
 *
 * push and pop may run on any thread at any time; drain only when no other
 * thread uses the table.
 */
#ifndef LFP_PERCPU_H
#define LFP_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "lfpool/common.h"

/* Read by the assembly: keep the layout in step with rseq_x86_64.S. */
struct lfp_percpu_hot {
	char *areas;
	uint64_t stride;	/* bytes per area */
	uint32_t ncpu;		/* possible CPUs */
	uint32_t max;		/* slots per area */
};

struct lfp_percpu_area {
	uint64_t count;
	uint8_t lock;		/* fallback mode only */
	uint8_t pad[7];
	void *slot[];
};

struct lfp_percpu {
	struct lfp_percpu_hot hot;
	bool rseq;
	size_t bytes;
	lfpool_allocator alloc;
};

/* The number of possible CPUs (highest possible CPU number + 1). */
uint32_t lfp_possible_cpus(void);
/* Whether this process can use the rseq fast path. */
bool lfp_rseq_available(void);

/* Set up a table of max slots per CPU; 0, EINVAL or ENOMEM. */
int lfp_percpu_init(struct lfp_percpu *pc, uint32_t max, const lfpool_allocator *a);
void lfp_percpu_fini(struct lfp_percpu *pc);
/* Pop from the caller's CPU area: an object, or NULL when it is empty. */
void *lfp_percpu_pop(struct lfp_percpu *pc);
/* Push onto the caller's CPU area: false when it is full. */
bool lfp_percpu_push(struct lfp_percpu *pc, void *obj);
/* Move every cached object to fn (no other user of the table may run). */
void lfp_percpu_drain(struct lfp_percpu *pc, void (*fn)(void *obj, void *ctx), void *ctx);
/* Objects cached now (exact only when quiet). */
uint64_t lfp_percpu_count(const struct lfp_percpu *pc);
/* "rseq" or "sched_getcpu". */
const char *lfp_percpu_mode(const struct lfp_percpu *pc);

#endif
