/* SPDX-License-Identifier: MIT */
/*
 * impl.c - what the harness asks of any implementation: which patterns it
 * runs and the single-threaded run of one of them.
 */
#include "bench.h"

const char *const pattern_names[PAT_COUNT] = {
	[PAT_PAIR] = "pair",
	[PAT_BATCH64] = "batch64",
	[PAT_BULK32] = "bulk32",
	[PAT_XTHREAD] = "xthread",
	[PAT_SCALING] = "scaling",
};

void *attach_shared(void *shared)
{
	return shared;
}

void detach_nothing(void *shared, void *h)
{
	(void)shared;
	(void)h;
}

bool impl_runs(const struct impl *im, enum pattern p)
{
	switch (p) {
	case PAT_BULK32:
		return im->loops->bulk32 != NULL;
	case PAT_XTHREAD:
		return im->loops->xget != NULL;
	default:
		return true;
	}
}

void run_pattern(const struct impl *im, void *h, enum pattern p, uint64_t ops)
{
	switch (p) {
	case PAT_PAIR:
	case PAT_SCALING:
		im->loops->pair(h, ops);
		break;
	case PAT_BATCH64:
		im->loops->batch64(h, ops);
		break;
	case PAT_BULK32:
		im->loops->bulk32(h, ops);
		break;
	default:
		bench_die("pattern %s needs two threads", pattern_names[p]);
	}
}
