/* SPDX-License-Identifier: MIT */
/* Pooled closures: a function and its captured bytes, got, run and
 * released without any allocation. */
#include <errno.h>
#include <lfpool.h>
#include <stdio.h>
#include <string.h>

struct add {
	long amount;
};

static void add(void *capture, void *arg)
{
	*(long *)arg += ((struct add *)capture)->amount;
}

int main(void)
{
	lfpool_config cfg = { .obj_size = sizeof(struct add), .prewarm = 8 };
	lfpool_closure_pool *cp = lfpool_closure_pool_create(LFPOOL_FLAVOUR_TS, &cfg);
	if (cp == NULL) {
		fprintf(stderr, "lfpool_closure_pool_create: %s\n", strerror(errno));
		return 1;
	}
	long total = 0;
	for (long i = 1; i <= 10; i++) {
		struct add cap = { i };
		lfpool_closure *c = lfpool_closure_get(cp, add, &cap, sizeof(cap));
		if (c == NULL)
			return 1;
		lfpool_closure_run(cp, c, &total);	/* invoke, then release */
	}
	printf("total %ld\n", total);
	return total == 55 && lfpool_closure_pool_destroy(cp) == 0 ? 0 : 1;
}
