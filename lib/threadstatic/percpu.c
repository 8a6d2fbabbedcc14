/* SPDX-License-Identifier: MIT */
/*
 * percpu.c - per-CPU tables: sizing, mode choice and the fallback path.
 * The rseq fast path is lfpool/impl/rseq.h's, with its correctness
 * argument (percpu.h runs it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "fence.h"
#include "grace.h"
#include "percpu.h"
#include "slab.h"

#ifdef LFP_PERCPU_RSEQ
# include <sys/rseq.h>
/* The kernel's struct rseq, as lfpool/impl/rseq.h's sequences read it. */
_Static_assert(offsetof(struct rseq, cpu_id) == offsetof(struct lfpool_rseq_abi_, cpu_id) &&
	       sizeof(((struct rseq *)0)->cpu_id) == sizeof(((struct lfpool_rseq_abi_ *)0)->cpu_id),
	       "rseq: cpu_id");
_Static_assert(offsetof(struct rseq, rseq_cs) == offsetof(struct lfpool_rseq_abi_, rseq_cs) &&
	       sizeof(((struct rseq *)0)->rseq_cs) == sizeof(((struct lfpool_rseq_abi_ *)0)->rseq_cs),
	       "rseq: rseq_cs");
#endif

static uint32_t possible_cpus;
static pthread_once_t possible_once = PTHREAD_ONCE_INIT;

static void read_possible_cpus(void)
{
	/* e.g. "0-3,8-11": the highest number + 1 sizes the table. */
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned hi = 0, a, b;
	bool any = false;
	if (f) {
		int n;
		while ((n = fscanf(f, "%u-%u", &a, &b)) >= 1) {
			unsigned top = n == 2 ? b : a;
			if (top > hi)
				hi = top;
			any = true;
			if (fgetc(f) != ',')
				break;
		}
		fclose(f);
	}
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	uint32_t count = any ? hi + 1 : 1;
	if (conf > (long)count)
		count = (uint32_t)conf;
	possible_cpus = count;
}

/* Read once per process: a pool's create must not open a file (with 10^5
 * per-CPU pools, that was most of their create time). */
uint32_t lfp_percpu_possible_cpus(void)
{
	pthread_once(&possible_once, read_possible_cpus);
	return possible_cpus;
}

bool lfp_percpu_rseq_available(void)
{
#ifdef LFP_PERCPU_RSEQ
	/* The fast path reads cpu_id and writes rseq_cs: both must be in the
	 * area glibc registered. */
	if (__rseq_size < offsetof(struct rseq, rseq_cs) + sizeof(((struct rseq *)0)->rseq_cs))
		return false;
	const struct rseq *r = (const struct rseq *)
		((char *)__builtin_thread_pointer() + __rseq_offset);
	return (int32_t)r->cpu_id >= 0;
#else
	return false;
#endif
}

/* The 128-byte blocks of a page that [p, p + n) touches, as bits of a
 * 32-bit mask (bit b: page offsets b * 128 .. b * 128 + 127). */
static uint32_t page_blocks(const void *p, size_t n)
{
	uint32_t mask = 0;
	uintptr_t first = (uintptr_t)p >> 7, last = ((uintptr_t)p + n - 1) >> 7;
	for (uintptr_t b = first; b <= last && b - first < 32; b++)
		mask |= (uint32_t)1 << (b & 31);
	return mask;
}

/* Whether ncpu areas stride blocks apart from block `first` all begin in a
 * page block outside avoid. */
static bool areas_avoid(uintptr_t first, uint64_t stride, uint32_t ncpu, uint32_t avoid)
{
	for (uint32_t k = 0; k < ncpu && k < 32; k++)
		if (avoid & ((uint32_t)1 << ((first + k * stride) & 31)))
			return false;
	return true;
}

/*
 * Allocate the areas so that no area's first 128 bytes (its counters,
 * written by every get and put) lie at the page offset of what every get
 * and put reads or writes before them: the hot table always, where it
 * can head (the pool's rseq_get and rseq_put), the creating thread's rseq
 * area (glibc's threads' lie at one page offset) and its 16 bytes at hint
 * (lfpool_ts_tls_).  4K aliasing: on AMD Zen (family 26 here) a load whose
 * address equals a buffered store's in bits 11..0 only waits as if it
 * depended on it, and a get+put pair slows by a third to fivefold.
 *
 * One allocation, of 3 blocks more than the areas (the number of
 * allocator calls must not depend on addresses: stress/sc_faults.c), with
 * an even stride in blocks, so that every area begins in a block of one
 * parity, chosen by the start (0 to 3 blocks in): the other parity than
 * the hot table's one block (it is 32-byte aligned) always avoids it; of
 * the starts that do, the first that avoids the rest too, else head.
 * 0, ENOMEM or LFP_EMISALIGNED.
 */
static int alloc_areas(struct lfp_percpu *pc, size_t area_bytes, const void *head,
		       const void *const *thread, size_t nthread)
{
	uint32_t must = page_blocks(&pc->hot, sizeof(pc->hot.view));
	uint32_t more = head ? page_blocks(head, 2 * sizeof(void *)) : 0, want = more;
	for (size_t i = 0; i < nthread; i++)
		want |= page_blocks(thread[i], 16);
	uint64_t stride = ((area_bytes + 127) / 128 + 1) & ~(uint64_t)1;
	size_t bytes = (stride * pc->ncpu + 3) * 128;
	bool misaligned = false;
	char *block = lfp_alloc_aligned(&pc->alloc, bytes, 128, &misaligned);
	if (!block)
		return misaligned ? LFP_EMISALIGNED : ENOMEM;
	const uint32_t tiers[3] = { must | want, must | more, must };
	unsigned skew = 0;
	for (int t = 0; t < 3; t++) {
		for (skew = 0; skew < 4; skew++)
			if (areas_avoid(((uintptr_t)block >> 7) + skew, stride, pc->ncpu, tiers[t]))
				break;
		if (skew < 4)
			break;
	}
	pc->block = block;
	pc->bytes = bytes;
	pc->hot.view.stride = stride * 128;
	pc->hot.view.areas = block + (skew < 4 ? skew : 0) * 128;
	return 0;
}

static struct lfp_percpu_area *area(const struct lfp_percpu *pc, uint32_t cpu);

int lfp_percpu_init(struct lfp_percpu *pc, uint32_t max, const lfpool_allocator *a,
		    const void *head, const void *hint)
{
	memset(pc, 0, sizeof(*pc));
	if (max == 0)
		return EINVAL;
	/* 10^5 per-CPU pools' areas from malloc were given back by its
	 * trimming and faulted in again by the next creates */
	pc->alloc = a ? *a : lfp_area_allocator;
	pc->ncpu = pc->hot.view.gate = lfp_percpu_possible_cpus();
	pc->hot.view.max = max;
	const void *thread[2] = { hint, NULL };
	size_t nthread = hint ? 1 : 0;
#ifdef LFP_PERCPU_RSEQ
	thread[nthread++] = (const char *)__builtin_thread_pointer() + __rseq_offset;
#endif
	int err = alloc_areas(pc, sizeof(struct lfp_percpu_area) + (size_t)max * sizeof(void *), head,
			      thread, nthread);
	if (err)
		return err;
	/* Each area's counters (and lock): its slots are read only below
	 * pushes - pops, so clearing them too wrote every line of the block
	 * (twice, with as many lines as CPUs times the area's). */
	for (uint32_t cpu = 0; cpu < pc->ncpu; cpu++)
		memset(area(pc, cpu), 0, offsetof(struct lfp_percpu_area, slot));
	/* rseq only where a thief can fence it (membarrier-rseq). */
	pc->rseq = lfp_percpu_rseq_available() && lfp_fence_init();
	return 0;
}

void lfp_percpu_fini(struct lfp_percpu *pc)
{
	if (pc->block)
		pc->alloc.free(pc->block, pc->bytes, pc->alloc.ctx);
	pc->block = pc->hot.view.areas = NULL;
}

static struct lfp_percpu_area *area(const struct lfp_percpu *pc, uint32_t cpu)
{
	return (struct lfp_percpu_area *)(pc->hot.view.areas + (uint64_t)cpu * pc->hot.view.stride);
}

/* Spins before a waiter yields its CPU, and yields before it sleeps. */
#define LFP_AREA_SPINS 128u
#define LFP_AREA_YIELDS 64u

/*
 * Wait a while for an area's holder, the wait'th time.  Its holders run a
 * few loads and stores, but threads that share a CPU meet here: a holder
 * preempted by the waiter on its CPU runs again only once the waiter
 * yields (with SCHED_FIFO at one priority, never if the waiter only
 * spins), or sleeps (a holder of lower priority).
 */
static void wait_area(uint32_t wait)
{
	if (wait < LFP_AREA_SPINS) {
		lfp_stall();
	} else if (wait < LFP_AREA_SPINS + LFP_AREA_YIELDS) {
		sched_yield();
	} else {
		/* nanosleep is a cancellation point: none in a get or put
		 * (lfpool/ts.h, "Cancellation") */
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 50000 };
		int old;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		nanosleep(&ts, NULL);
		pthread_setcancelstate(old, &old);
	}
}

/* Fallback: area ar, locked; the thread busy meanwhile (grace.h: a signal
 * handler's get or put must not spin on it). */
static void lock_this(struct lfp_percpu_area *ar)
{
	lfp_busy_enter();
	/* acquire, paired with unlock_area's release: the last holder's area */
	uint32_t wait = 0;
	while (lfp_xchg_u8_acqrel(&ar->view.lock, 1))
		while (lfp_load_u8_rlx(&ar->view.lock))
			wait_area(wait < UINT32_MAX ? wait++ : wait);
}

/* Fallback: the caller's CPU area, locked.  The lock is almost never
 * contended: only threads that share a CPU (and thieves) meet on it. */
static struct lfp_percpu_area *lock_area(struct lfp_percpu *pc)
{
	int cpu = sched_getcpu();
	struct lfp_percpu_area *ar = area(pc, cpu < 0 ? 0 : (uint32_t)cpu % pc->ncpu);
	lock_this(ar);
	return ar;
}

static void unlock_area(struct lfp_percpu_area *ar)
{
	lfp_xchg_u8_acqrel(&ar->view.lock, 0);	/* release, for lock_area's acquire */
	lfp_busy_leave();
}

/* The counters change under the lock, but statistics read them without it:
 * relaxed atomics (plain moves on x86-64) keep that defined. */
size_t lfp_percpu_pop_locked(struct lfp_percpu *pc, void **objs, size_t n)
{
	struct lfp_percpu_area *ar = lock_area(pc);
	uint64_t pops = lfp_load_u64_rlx(&ar->view.pops);
	uint64_t count = lfp_load_u64_rlx(&ar->view.pushes) - pops;
	size_t k = count < n ? (size_t)count : n;
	memcpy(objs, &ar->slot[count - k], k * sizeof(void *));
	lfp_store_u64_rlx(&ar->view.pops, pops + k);
	unlock_area(ar);
	return k;
}

size_t lfp_percpu_push_locked(struct lfp_percpu *pc, void *const *objs, size_t n)
{
	struct lfp_percpu_area *ar = lock_area(pc);
	uint64_t pushes = lfp_load_u64_rlx(&ar->view.pushes);
	uint64_t count = pushes - lfp_load_u64_rlx(&ar->view.pops), room = pc->hot.view.max - count;
	size_t k = room < n ? (size_t)room : n;
	memcpy(&ar->slot[count], objs, k * sizeof(void *));
	lfp_store_u64_rlx(&ar->view.pushes, pushes + k);
	unlock_area(ar);
	return k;
}

void *lfp_percpu_get_locked(struct lfp_percpu *pc)
{
	void *obj;
	return lfp_percpu_pop_locked(pc, &obj, 1) ? obj : NULL;
}

bool lfp_percpu_put_locked(struct lfp_percpu *pc, void *obj)
{
	return lfp_percpu_push_locked(pc, &obj, 1) != 0;
}

bool lfp_percpu_stop(struct lfp_percpu *pc)
{
	if (pc->rseq)
		lfp_store_u32_rlx(&pc->hot.view.gate, 0);
	return pc->rseq;
}

/* Up to want objects off the top of area ar to give; the caller is its only
 * writer (gate closed and fenced, or its lock held). */
static size_t take_area(struct lfp_percpu_area *ar, size_t want,
			void (*give)(void *ctx, void *const *objs, size_t n), void *ctx)
{
	uint64_t pops = lfp_load_u64_rlx(&ar->view.pops);
	uint64_t held = lfp_load_u64_rlx(&ar->view.pushes) - pops;
	size_t k = held < want ? (size_t)held : want;
	if (k) {
		give(ctx, &ar->slot[held - k], k);
		lfp_store_u64_rlx(&ar->view.pops, pops + k);
	}
	return k;
}

size_t lfp_percpu_take(struct lfp_percpu *pc, size_t want,
		       void (*give)(void *ctx, void *const *objs, size_t n), void *ctx)
{
	size_t got = 0;
	for (uint32_t cpu = 0; cpu < pc->ncpu && got < want; cpu++) {
		struct lfp_percpu_area *ar = area(pc, cpu);
		if (pc->rseq) {
			got += take_area(ar, want - got, give, ctx);
			continue;
		}
		lock_this(ar);
		got += take_area(ar, want - got, give, ctx);
		unlock_area(ar);
	}
	return got;
}

void lfp_percpu_restart(struct lfp_percpu *pc)
{
	/* Release: a sequence that reads the open gate sees our pops. */
	if (pc->rseq)
		lfp_store_u32_rel(&pc->hot.view.gate, pc->ncpu);
}

void lfp_percpu_each(const struct lfp_percpu *pc, void (*fn)(void *obj, void *ctx), void *ctx)
{
	for (uint32_t cpu = 0; cpu < pc->ncpu; cpu++) {
		const struct lfp_percpu_area *ar = area(pc, cpu);
		uint64_t pops = lfp_load_u64_rlx(&ar->view.pops);
		uint64_t held = lfp_load_u64_rlx(&ar->view.pushes) - pops;
		LFP_ASSERT(held <= pc->hot.view.max);
		for (uint64_t n = held; n > 0; n--)
			fn(ar->slot[n - 1], ctx);
	}
}

void lfp_percpu_lock_all(struct lfp_percpu *pc, bool lock)
{
	for (uint32_t cpu = 0; !pc->rseq && cpu < pc->ncpu; cpu++) {
		struct lfp_percpu_area *ar = area(pc, cpu);
		if (lock)
			lock_this(ar);
		else
			unlock_area(ar);
	}
}

void lfp_percpu_drain(struct lfp_percpu *pc, void (*fn)(void *obj, void *ctx), void *ctx)
{
	lfp_percpu_each(pc, fn, ctx);
	for (uint32_t cpu = 0; cpu < pc->ncpu; cpu++) {
		struct lfp_percpu_area *ar = area(pc, cpu);
		lfp_store_u64_rlx(&ar->view.pops, lfp_load_u64_rlx(&ar->view.pushes));
	}
}

void lfp_percpu_ops(const struct lfp_percpu *pc, uint64_t *pushes, uint64_t *pops)
{
	for (uint32_t cpu = 0; cpu < pc->ncpu; cpu++) {
		const struct lfp_percpu_area *ar = area(pc, cpu);
		/* pops first: an area never shows more pops than pushes. */
		*pops += lfp_load_u64_rlx(&ar->view.pops);
		*pushes += lfp_load_u64_rlx(&ar->view.pushes);
	}
}

uint64_t lfp_percpu_count(const struct lfp_percpu *pc)
{
	uint64_t pushes = 0, pops = 0;
	lfp_percpu_ops(pc, &pushes, &pops);
	return pushes - pops;
}

const char *lfp_percpu_mode(const struct lfp_percpu *pc)
{
	return pc->rseq ? "rseq" : "sched_getcpu";
}
