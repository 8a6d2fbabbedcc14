/* SPDX-License-Identifier: MIT */
/*
 * yield.c - what lib/stress_hooks.h declares: the yield injection behind
 * LFP_YIELD, the CAS-window hook and the count of failed CAS, linked into
 * the stress programs only (the library's own builds have none of it).
 */
#include <sched.h>
#include <stdlib.h>

#include "atomic.h"

void (*lfp_stress_yield)(void);
__thread uint64_t lfp_stress_cas_retries;

/* N, from LFPOOL_YIELD=N or the drivers (stress/round.c). */
unsigned lfp_yield_one_in;
static __thread uint64_t yield_rng;

/* One atomic step's chance: yield one time in N, spin up to 255 pauses
 * another time in N, else go on. */
void lfp_yield_point(void)
{
	unsigned n = __atomic_load_n(&lfp_yield_one_in, __ATOMIC_RELAXED);
	if (yield_rng == 0)
		yield_rng = __builtin_ia32_rdtsc() | 1;	/* a sequence per thread */
	uint64_t z = (yield_rng += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z ^= z >> 31;
	if (n == 0)
		return;
	uint32_t r = (uint32_t)(z >> 32) % n;
	if (r == 0)
		sched_yield();
	else if (r == 1)
		for (unsigned i = (unsigned)z & 255; i; i--)
			lfp_stall();
}

__attribute__((constructor)) static void lfp_yield_from_env(void)
{
	const char *e = getenv("LFPOOL_YIELD");
	if (e && *e)
		__atomic_store_n(&lfp_yield_one_in, (unsigned)strtoul(e, NULL, 0), __ATOMIC_RELAXED);
}
