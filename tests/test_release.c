/* SPDX-License-Identifier: MIT */
/*
 * test_release.c - lfpool_release_memory (lfpool/common.h) gives back what
 * a burst of small pools left in the cache of small blocks: after 10^4
 * pools are destroyed and it runs, mincore(2) finds none of their slabs'
 * pages resident, it counted at least their bytes, and no more than the
 * blocks kept (not whole mappings), a second call gives nothing, blocks still in use keep their bytes (also while other
 * threads create and destroy pools), and new pools work on memory that
 * reads as zero.  Debug builds keep destroyed debug pools'
 * slabs (lfpool_set_error_hook), ASan builds have no cache (the call
 * returns 0): there the tests check only that pools keep working.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "build.h"
#include "support.h"

#ifdef TEST_ASAN
# define CACHED 0
#else
# define CACHED (!DEBUG_BUILD)
#endif

#define POOLS 10000
#define OBJS_MAX 100

/* One pool of the burst, and two of its objects: its slab's first and
 * last page (an 8 KiB slab) or its only one (a 128-byte slab). */
static struct member {
	lfpool_pool *pool;
	char *first, *last;
	size_t held;
} burst[POOLS];

/* 100 objects of 64 bytes: an 8 KiB slab (a block of two pages). */
static const lfpool_config big = { .obj_size = 64, .capacity = 100 };
/* 4 objects of 16 bytes: a 128-byte slab (many to a page). */
static const lfpool_config tiny = { .obj_size = 16, .capacity = 4 };

/* The bytes of a pool's one slab (above): what lfpool_release_memory
 * gives back of a destroyed pool, but for its struct's share of a mapping.
 * Not bytes_held, which counts an item array that malloc gives (and the
 * struct, whose blocks made up for it, is smaller than that array). */
static size_t slab_bytes(const lfpool_config *cfg)
{
	return cfg == &big ? 8192 : 128;
}

static bool resident(const void *p)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned char v = 0;
	if (mincore((void *)((uintptr_t)p & ~(pg - 1)), pg, &v) != 0) {
		cr_assert_eq(errno, ENOMEM, "mincore: %s", strerror(errno));
		return false;	/* unmapped */
	}
	return v & 1;
}

/* Pools [from, POOLS) by step: each gets every object it may hold, checks
 * that they read as zero (want_zero), writes its pattern over them and
 * puts them back. */
static void create(const lfpool_config *cfg, size_t from, size_t step, bool want_zero)
{
	void *objs[OBJS_MAX];
	for (size_t i = from; i < POOLS; i += step) {
		struct member *m = &burst[i];
		m->pool = lfpool_pool_create(cfg);
		cr_assert_not_null(m->pool, "pool %zu: %s", i, strerror(errno));
		for (size_t k = 0; k < cfg->capacity; k++) {
			objs[k] = lfpool_pool_get(m->pool);
			cr_assert_not_null(objs[k], "pool %zu object %zu", i, k);
			if (want_zero) {
				static const char zeros[64];
				cr_assert(!memcmp(objs[k], zeros, cfg->obj_size),
					  "pool %zu object %zu: memory given back reads as zero", i, k);
			}
			fill_pattern(objs[k], cfg->obj_size, (unsigned)i);
		}
		m->first = objs[0];
		m->last = objs[cfg->capacity - 1];
		lfpool_stats st;
		lfpool_pool_stats(m->pool, &st);
		m->held = (size_t)(st.slab_allocs - st.slab_frees) * slab_bytes(cfg);
		cr_assert_eq(lfpool_pool_get(m->pool), NULL, "pool %zu is at its capacity", i);
		for (size_t k = cfg->capacity; k-- > 0;)
			lfpool_pool_put(m->pool, objs[k]);
	}
}

/* Destroy pools [from, POOLS) by step; returns the bytes their slabs held. */
static size_t destroy(size_t from, size_t step)
{
	size_t held = 0;
	for (size_t i = from; i < POOLS; i += step) {
		cr_assert_eq(lfpool_pool_destroy(burst[i].pool), 0);
		held += burst[i].held;
	}
	return held;
}

/* How many of pools [from, POOLS) by step have a page of first or last
 * resident. */
static size_t resident_pools(size_t from, size_t step)
{
	size_t n = 0;
	for (size_t i = from; i < POOLS; i += step)
		n += resident(burst[i].first) || resident(burst[i].last);
	return n;
}

/* Pools [from, POOLS) by step still hold their objects' bytes and work. */
static void check_alive(const lfpool_config *cfg, size_t from, size_t step)
{
	for (size_t i = from; i < POOLS; i += step) {
		lfpool_pool *p = burst[i].pool;
		void *o = lfpool_pool_get(p);
		cr_assert_not_null(o);
		cr_assert(lfpool_pool_owns(p, o));
		if (!REMAKES)
			cr_assert(check_pattern(o, cfg->obj_size, (unsigned)i),
				  "pool %zu: an object in use kept its bytes", i);
		lfpool_pool_put(p, o);
	}
}

static void gives_back_a_burst(const lfpool_config *cfg)
{
	create(cfg, 0, 1, false);
	cr_assert_eq(resident_pools(0, 1), POOLS, "every pool wrote its objects");
	size_t held = destroy(0, 1);
	if (CACHED)
		cr_assert_eq(resident_pools(0, 1), POOLS, "the cache keeps destroyed pools' slabs");

	size_t given = lfpool_release_memory();
	if (CACHED) {
		cr_assert_eq(resident_pools(0, 1), 0, "no destroyed pool's slab is resident");
		cr_assert_geq(given, held, "given back %zu bytes, slabs held %zu", given, held);
	}
#ifdef TEST_ASAN
	cr_assert_eq(given, 0, "ASan builds keep no blocks");
#endif
	cr_assert_eq(lfpool_release_memory(), 0, "a second call has nothing to give");

	/* The next burst works, on memory that reads as zero. */
	create(cfg, 0, 1, CACHED);
	check_alive(cfg, 0, 1);
	destroy(0, 1);
}

Test(release, gives_back_a_burst_of_pools)
{
	gives_back_a_burst(&big);
}

Test(release, gives_back_a_burst_of_tiny_pools)
{
	gives_back_a_burst(&tiny);
}

/* Half the pools destroyed: their slabs' pages (blocks of a page or
 * more) go back, the others' bytes stay (their side data, blocks under a
 * page in mappings still in use, too). */
Test(release, keeps_blocks_in_use)
{
	create(&big, 0, 1, false);
	for (size_t i = 0; i < POOLS; i++)
		cr_assert_eq((uintptr_t)burst[i].first / 8192, (uintptr_t)burst[i].last / 8192,
			     "pool %zu: one slab of 8 KiB", i);
	size_t held = destroy(0, 2);
	size_t given = lfpool_release_memory();
	if (CACHED) {
		cr_assert_geq(given, POOLS / 2 * 8192, "given back %zu bytes, slabs held %zu",
			      given, held);
		cr_assert_eq(resident_pools(0, 2), 0, "no destroyed pool's slab is resident");
		cr_assert_eq(resident_pools(1, 2), POOLS / 2, "the pools alive keep theirs");
	}
	check_alive(&big, 1, 2);

	create(&big, 0, 2, CACHED);	/* on the blocks given back */
	check_alive(&big, 0, 1);
	held = destroy(0, 1);
	given = lfpool_release_memory();
	if (CACHED) {
		cr_assert_geq(given, held, "given back %zu bytes, slabs held %zu", given, held);
		cr_assert_eq(resident_pools(0, 1), 0);
	}
}

/* Blocks under a page go back only with their whole mapping: one tiny
 * pool alive keeps its mapping, and its bytes. */
Test(release, tiny_blocks_go_back_with_their_mapping)
{
	create(&tiny, 0, 1, false);
	destroy(1, 1);
	lfpool_release_memory();
	if (CACHED)
		cr_assert(resident(burst[0].first), "the mapping of a block in use stays");
	check_alive(&tiny, 0, POOLS);
	if (CACHED)
		cr_assert_lt(resident_pools(1, 1), POOLS / 10,
			     "all but the mappings of blocks in use went back");
	destroy(0, POOLS);
	cr_assert(lfpool_release_memory() > 0 || !CACHED);
	if (CACHED)
		cr_assert_eq(resident_pools(0, 1), 0);
}

/* The count is the bytes kept, not the bytes mapped: k pools created,
 * used and destroyed, then one call, for k = 1 .. 4 (each call unmaps
 * every mapping, so each k starts on new ones).  Each pool kept the same
 * blocks (its slab, its own struct), so the counts grow by one pool's
 * bytes per pool (the stacks' pages, the same each time, aside): at least
 * its slab, at most that and a struct of up to 16 KiB (common.h).  A
 * count of whole mappings (the untouched rest of the last one, cut into
 * no block, counted too) is the same for every k: 64 KiB of slabs and
 * 256 KiB of structs. */
static void counts_what_was_kept(const lfpool_config *cfg, size_t slab)
{
	void *objs[OBJS_MAX];
	size_t given[5];
	lfpool_release_memory();
	for (size_t k = 1; k <= 4; k++) {
		for (size_t i = 0; i < k; i++) {
			burst[i].pool = lfpool_pool_create(cfg);
			cr_assert_not_null(burst[i].pool);
			for (size_t n = 0; n < cfg->capacity; n++) {
				objs[n] = lfpool_pool_get(burst[i].pool);
				cr_assert_not_null(objs[n]);
				fill_pattern(objs[n], cfg->obj_size, (unsigned)n);
			}
			for (size_t n = 0; n < cfg->capacity; n++)
				lfpool_pool_put(burst[i].pool, objs[n]);
		}
		for (size_t i = 0; i < k; i++)
			cr_assert_eq(lfpool_pool_destroy(burst[i].pool), 0);
		given[k] = lfpool_release_memory();
		if (!CACHED)
			continue;
		cr_assert_eq(lfpool_release_memory(), 0);
		if (k < 2)
			continue;
		size_t pool = given[k] - given[k - 1];
		cr_assert(given[k] > given[k - 1] && pool >= slab && pool <= slab + 16 * 1024,
			  "%zu pools: %zu bytes given back, %zu for %zu: one pool's are %zu "
			  "(its %zu-byte slab and a struct of at most 16 KiB)",
			  k, given[k], given[k - 1], k - 1, pool, slab);
		cr_assert_eq(pool, given[2] - given[1],
			     "%zu pools: %zu bytes given back, %zu for %zu: every pool counts "
			     "the same (%zu)", k, given[k], given[k - 1], k - 1, given[2] - given[1]);
	}
}

Test(release, counts_the_blocks_kept)
{
	counts_what_was_kept(&big, 8192);
}

Test(release, counts_the_tiny_blocks_kept)
{
	counts_what_was_kept(&tiny, 128);
}

/* Threads that create pools, write their objects, check them and destroy
 * the pools, while another calls lfpool_release_memory until they are
 * done: a call that gave back a block in use, or lost one, shows as an
 * object that lost its bytes (or a crash). */
#define CHURNERS 2
#define ROUNDS 100
#define BATCH 32

struct churn {
	int releaser;
	atomic_int *done;	/* churners finished */
	atomic_int *called;	/* the releaser's calls so far */
	long bad, calls;
};

static void *churn_or_release(void *arg)
{
	struct churn *c = arg;
	if (c->releaser) {
		while (atomic_load(c->done) < CHURNERS) {
			lfpool_release_memory();
			c->calls++;
			atomic_fetch_add(c->called, 1);
		}
		return NULL;
	}
	/* Start once the releaser runs: on a loaded machine the churners
	 * could otherwise finish before it is first scheduled. */
	while (atomic_load(c->called) == 0)
		sched_yield();
	for (unsigned r = 0; r < ROUNDS; r++) {
		lfpool_pool *p[BATCH];
		char *o[BATCH];
		for (unsigned k = 0; k < BATCH; k++) {
			const lfpool_config *cfg = k % 2 ? &tiny : &big;
			p[k] = lfpool_pool_create(cfg);
			o[k] = p[k] ? lfpool_pool_get(p[k]) : NULL;
			if (!o[k]) {
				c->bad++;
				continue;
			}
			fill_pattern(o[k], cfg->obj_size, r * BATCH + k);
		}
		for (unsigned k = 0; k < BATCH; k++) {
			if (!o[k])
				continue;
			c->bad += !check_pattern(o[k], (k % 2 ? &tiny : &big)->obj_size, r * BATCH + k);
			lfpool_pool_put(p[k], o[k]);
			lfpool_pool_destroy(p[k]);
		}
	}
	atomic_fetch_add(c->done, 1);
	return NULL;
}

Test(release, runs_while_other_threads_create_and_destroy)
{
	atomic_int done = 0, called = 0;
	struct churn c[CHURNERS + 1];
	for (int i = 0; i <= CHURNERS; i++)
		c[i] = (struct churn){ .releaser = i == CHURNERS, .done = &done, .called = &called };
	run_threads(CHURNERS + 1, churn_or_release, c, sizeof(c[0]));
	for (int i = 0; i < CHURNERS; i++)
		cr_assert_eq(c[i].bad, 0, "churner %d: %ld objects lost their bytes", i, c[i].bad);
	cr_assert_gt(c[CHURNERS].calls, 0);
}
