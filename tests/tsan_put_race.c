/* SPDX-License-Identifier: MIT */
/*
 * tests/tsan_put_race.c - a user's race with a put, under ThreadSanitizer
 * against the normal library: one thread writes an object, another puts
 * it.  `tsan_put_race NAME race` orders nothing between the two (the
 * pointer goes over with relaxed atomics), which TSan must report, as it
 * reports a write racing with free(); `tsan_put_race NAME synced` hands
 * the pointer over with release and acquire, which must be clean (the
 * negative control).  Built with -fsanitize=thread by tests/tsan-handover.sh.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lfpool.h>

#define OBJ 64

enum kind { POOL, CONCURRENT, TS, TS_CACHE, PERCPU, ARRAY, RC, CLOSURE, KINDS };

static const char *const names[KINDS] = {
	"pool", "concurrent", "ts", "ts-cache", "percpu", "array", "rc", "closure"
};

struct pools {
	lfpool_pool *pool;
	lfpool_concurrent *conc;
	lfpool_ts *ts, *percpu;
	lfpool_ts_cache *cache;
	lfpool_array *array;
	lfpool_rc *rc;
	lfpool_closure_pool *closures;
};

static struct pools p;
static enum kind kind;
static int order;		/* __ATOMIC_RELAXED (the race) or release/acquire */
static void *handed;		/* the object, from the writer to the putter */

static void nothing(void *capture, void *arg)
{
	(void)capture;
	(void)arg;
}

static void *get(void)
{
	switch (kind) {
	case POOL: return lfpool_pool_get(p.pool);
	case CONCURRENT: return lfpool_concurrent_get(p.conc);
	case TS: return lfpool_ts_get(p.ts);
	case TS_CACHE: return lfpool_ts_cache_get(p.cache);
	case PERCPU: return lfpool_ts_get(p.percpu);
	case ARRAY: return lfpool_array_get(p.array, OBJ, NULL);
	case RC: return lfpool_rc_get(p.rc);
	case CLOSURE: return lfpool_closure_get(p.closures, nothing, NULL, 0);
	case KINDS: break;
	}
	abort();
}

static void put(void *obj)
{
	switch (kind) {
	case POOL: lfpool_pool_put(p.pool, obj); return;
	case CONCURRENT: lfpool_concurrent_put(p.conc, obj); return;
	case TS: lfpool_ts_put(p.ts, obj); return;
	case TS_CACHE: lfpool_ts_cache_put(p.cache, obj); return;
	case PERCPU: lfpool_ts_put(p.percpu, obj); return;
	case ARRAY: lfpool_array_put(p.array, obj); return;
	case RC: lfpool_rc_release(obj); return;
	case CLOSURE: lfpool_closure_release(p.closures, obj); return;
	case KINDS: break;
	}
	abort();
}

/* The putter: waits for the object, then puts it. */
static void *putter(void *arg)
{
	void *obj;
	(void)arg;
	while (!(obj = __atomic_load_n(&handed, order == __ATOMIC_RELAXED ? __ATOMIC_RELAXED
									: __ATOMIC_ACQUIRE)))
		;
	put(obj);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	for (kind = 0; kind < KINDS && strcmp(argv[1], names[kind]) != 0; kind++)
		;
	if (kind == KINDS)
		return 2;
	order = strcmp(argv[2], "race") == 0 ? __ATOMIC_RELAXED : __ATOMIC_RELEASE;
	lfpool_config cfg = { .obj_size = OBJ, .magazine_size = 4 };
	lfpool_config pccfg = cfg;
	pccfg.flags = LFPOOL_F_PERCPU;
	lfpool_array_config acfg = { .min_size = OBJ, .max_size = OBJ, .magazine_size = 4 };
	p.pool = lfpool_pool_create(&cfg);
	p.conc = lfpool_concurrent_create(&cfg);
	p.ts = lfpool_ts_create(&cfg);
	p.percpu = lfpool_ts_create(&pccfg);
	p.cache = lfpool_ts_cache_create(p.ts);
	p.array = lfpool_array_create(LFPOOL_FLAVOUR_TS, &acfg);
	p.rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg);
	p.closures = lfpool_closure_pool_create(LFPOOL_FLAVOUR_TS, &cfg);
	if (!p.pool || !p.conc || !p.ts || !p.percpu || !p.cache || !p.array || !p.rc ||
	    !p.closures)
		return 1;
	/* The get before the putter starts (its creation orders the pool's
	 * use), the write after it (nothing orders the write and the put). */
	char *obj = get();
	pthread_t t;
	if (!obj || pthread_create(&t, NULL, putter, NULL) != 0)
		return 1;
	/* Byte by byte: GCC expands a memset of a constant size into stores
	 * that ThreadSanitizer does not see. */
	size_t skip = kind == CLOSURE ? sizeof(lfpool_closure) : 0;	/* its capture */
	for (size_t i = skip; i < OBJ; i++)
		((volatile char *)obj)[i] = 0x5a;
	__atomic_store_n(&handed, obj, order);
	pthread_join(t, NULL);
	lfpool_closure_pool_destroy(p.closures);
	lfpool_rc_destroy(p.rc);
	lfpool_array_destroy(p.array);
	lfpool_ts_cache_destroy(p.cache);
	if (lfpool_ts_destroy(p.percpu) != 0 || lfpool_ts_destroy(p.ts) != 0)
		return 1;
	lfpool_concurrent_destroy(p.conc);
	lfpool_pool_destroy(p.pool);
	printf("tsan_put_race: %s %s\n", names[kind], argv[2]);
	return 0;
}
