/* SPDX-License-Identifier: MIT */
/*
 * slots.c - what the hand-over scenarios (transfer, producer/consumer)
 * share: draining the slots at the end, and the bound on how many objects
 * a pool may create while objects travel between threads.
 */
#include "stress.h"

uint64_t slots_drain(struct round *rd, void **slot, unsigned n)
{
	struct worker m;
	uint64_t left = 0;
	if (!round_enter_main(rd, &m))
		return 0;
	for (unsigned i = 0; i < n; i++) {
		void *obj = __atomic_exchange_n(&slot[i], NULL, __ATOMIC_ACQUIRE);
		if (obj && obj_take(&m, obj)) {
			worker_put(&m, obj);
			left++;
		}
	}
	round_leave_main(rd, &m);
	return left;
}

/* Objects that can be in flight: in the slots, held (one per thread, and
 * one being created), and idle in the threads' caches. */
static uint64_t in_flight_bound(const struct round *rd, unsigned slots, unsigned threads)
{
	return slots + (uint64_t)threads * (2 + 2 * round_slack(rd));
}

/* Created objects must stay within the in-flight bound. */
static void check_growth(struct round *rd, unsigned slots, unsigned threads)
{
	lfpool_stats st;
	rd->run->fl->stats(rd->pool, &st);
	uint64_t bound = in_flight_bound(rd, slots, threads);
	if (st.created > bound)
		run_fail(rd->run, "%llu objects created, more than the %llu that can be in flight",
			 (unsigned long long)st.created, (unsigned long long)bound);
}

bool slots_round(struct run *r, unsigned threads, void **slot, unsigned n,
		 void (*fn)(struct worker *), void *arg)
{
	struct round rd;
	lfpool_config cfg = round_config(&rd, 0, 0);
	if (!round_open(&rd, r, &cfg))
		return false;
	uint64_t gets = r->t.gets, puts = r->t.puts;
	round_workers(&rd, threads, fn, arg);
	check_growth(&rd, n, threads);
	gets = r->t.gets - gets;
	puts = r->t.puts - puts;
	uint64_t left = slots_drain(&rd, slot, n);
	if (gets != puts + left)
		run_fail(r, "%llu gets != %llu puts + %llu objects left in the slots",
			 (unsigned long long)gets, (unsigned long long)puts, (unsigned long long)left);
	round_close(&rd);
	return true;
}
