/* SPDX-License-Identifier: MIT */
/*
 * locked_pool.h - one lfpool Pool behind a lock around every get and put:
 * the peers mutex-pool and spin-pool (the target: Concurrent is never slower
 * than either), compiled once per lock.
 *
 * Before each inclusion define IMPL (the implementation's C prefix),
 * LOCKED_LABEL (its name in messages), LOCKED_T (the lock's type) and
 * LOCKED_INIT(l), LOCKED_DESTROY(l), LOCKED_LOCK(l), LOCKED_UNLOCK(l) (l a
 * pointer to the lock).  The inclusion defines IMPL_open, IMPL_close,
 * IMPL_get, IMPL_put and, through loops.h, IMPL_loops; it undefines those
 * macros, so the next lock can follow.
 */
#define LP(x) LOOPS_CAT(IMPL, x)

struct LP(locked) {
	LOCKED_T lock;
	lfpool_pool *pool;
};

static void *LP(open)(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)why;
	struct LP(locked) *m = malloc(sizeof(*m));
	lfpool_config cfg = { .obj_size = obj_size, .prewarm = prewarm, .name = "bench" };
	if (!m || !(m->pool = lfpool_pool_create(&cfg)))
		bench_die("%s: out of memory", LOCKED_LABEL);
	LOCKED_INIT(&m->lock);
	return m;
}

static void LP(close)(void *shared)
{
	struct LP(locked) *m = shared;
	lfpool_pool_destroy(m->pool);
	LOCKED_DESTROY(&m->lock);
	free(m);
}

static inline void *LP(get)(void *h)
{
	struct LP(locked) *m = h;
	LOCKED_LOCK(&m->lock);
	void *obj = lfpool_pool_get(m->pool);
	LOCKED_UNLOCK(&m->lock);
	return obj;
}

static inline void LP(put)(void *h, void *obj)
{
	struct LP(locked) *m = h;
	LOCKED_LOCK(&m->lock);
	lfpool_pool_put(m->pool, obj);
	LOCKED_UNLOCK(&m->lock);
}

#undef LP
#undef LOCKED_LABEL
#undef LOCKED_T
#undef LOCKED_INIT
#undef LOCKED_DESTROY
#undef LOCKED_LOCK
#undef LOCKED_UNLOCK
#include "loops.h"
