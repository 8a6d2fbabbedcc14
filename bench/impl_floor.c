/* SPDX-License-Identifier: MIT */
/*
 * impl_floor.c - the floor: a bare thread-local array of pointers.
 *
 * The least any pool can do: get pops the calling thread's array, put pushes
 * it, each with the one test a correct pool cannot skip (empty, full); bulk
 * calls copy the pointers in one block.
 * Misses fall back to malloc and free.  Every thread has its own array, so
 * the floor never shares anything; it has no xthread loops.
 */
#include <stdlib.h>

#include "floor.h"

static __thread struct floor_stack floor_tls;

static void *floor_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	struct floor_stack *cfg = malloc(sizeof(*cfg));
	if (!cfg)
		bench_die("out of memory");
	cfg->obj_size = obj_size;
	cfg->prewarm = prewarm < FLOOR_CAP ? prewarm : FLOOR_CAP;
	return cfg;
}

/* The thread's array, filled as the pools are prewarmed (the open
 * configuration's prewarm says how many). */
static void *floor_attach(void *shared)
{
	const struct floor_stack *cfg = shared;
	struct floor_stack *s = &floor_tls;
	s->top = s->objs;
	s->obj_size = cfg->obj_size;
	for (unsigned i = 0; i < cfg->prewarm; i++)
		floor_put(s, bench_got(malloc(cfg->obj_size)));
	return s;
}

static void floor_detach(void *shared, void *h)
{
	(void)shared;
	struct floor_stack *s = h;
	while (s->top != s->objs)
		free(*--s->top);
}

#define IMPL floor
#define IMPL_HAS_BULK
#define IMPL_PER_THREAD
#include "loops.h"

const struct impl impl_floor = {
	.name = "floor",
	.open = floor_open, .close = free,
	.attach = floor_attach, .detach = floor_detach,
	.loops = &floor_loops,
};
