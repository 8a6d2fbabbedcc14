/* SPDX-License-Identifier: MIT */
/*
 * memcheck_prog.c - a user's program for tests/memcheck.sh, which runs it
 * under Valgrind's memcheck against the normal library: memcheck_prog
 * FLAVOUR BUG makes one pool of FLAVOUR (pool, concurrent, ts, ts-cache,
 * percpu, array-pool, array-concurrent, array-ts) and commits BUG with
 * it: none (the negative control), write-after-put, read-after-put,
 * never-got (a read of a pooled object no get handed out) or leak (an
 * object still out at destroy, its pointer lost).  Each object is got,
 * written and put twice first, so that the inline paths would have served
 * the bug's object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lfpool.h>

#define OBJ 48

struct subject {
	void *pool;
	lfpool_ts_cache *cache;
	void *(*get)(struct subject *s);
	void (*put)(struct subject *s, void *obj);
	int (*owns)(struct subject *s, const void *p);
	void (*destroy)(struct subject *s);
};

static void *pool_get(struct subject *s) { return lfpool_pool_get(s->pool); }
static void pool_put(struct subject *s, void *o) { lfpool_pool_put(s->pool, o); }
static int pool_owns(struct subject *s, const void *p) { return lfpool_pool_owns(s->pool, p); }
static void pool_destroy(struct subject *s) { lfpool_pool_destroy(s->pool); }

static void *conc_get(struct subject *s) { return lfpool_concurrent_get(s->pool); }
static void conc_put(struct subject *s, void *o) { lfpool_concurrent_put(s->pool, o); }
static int conc_owns(struct subject *s, const void *p) { return lfpool_concurrent_owns(s->pool, p); }
static void conc_destroy(struct subject *s) { lfpool_concurrent_destroy(s->pool); }

static void *ts_get(struct subject *s) { return lfpool_ts_get(s->pool); }
static void ts_put(struct subject *s, void *o) { lfpool_ts_put(s->pool, o); }
static int ts_owns(struct subject *s, const void *p) { return lfpool_ts_owns(s->pool, p); }
static void ts_destroy(struct subject *s)
{
	if (s->cache)
		lfpool_ts_cache_destroy(s->cache);
	lfpool_ts_detach(s->pool);
	if (lfpool_ts_destroy(s->pool) != 0)
		perror("lfpool_ts_destroy");
}

static void *cache_get(struct subject *s) { return lfpool_ts_cache_get(s->cache); }
static void cache_put(struct subject *s, void *o) { lfpool_ts_cache_put(s->cache, o); }

static void *array_get(struct subject *s) { return lfpool_array_get(s->pool, OBJ, NULL); }
static void array_put(struct subject *s, void *o) { lfpool_array_put(s->pool, o); }
static void array_destroy(struct subject *s) { lfpool_array_destroy(s->pool); }

static int make(struct subject *s, const char *flavour)
{
	lfpool_config cfg = { .obj_size = OBJ, .prewarm = 8, .name = flavour };
	lfpool_array_config acfg = { .name = flavour };
	memset(s, 0, sizeof(*s));
	if (!strcmp(flavour, "pool")) {
		*s = (struct subject){ lfpool_pool_create(&cfg), NULL, pool_get, pool_put,
				       pool_owns, pool_destroy };
	} else if (!strcmp(flavour, "concurrent")) {
		*s = (struct subject){ lfpool_concurrent_create(&cfg), NULL, conc_get, conc_put,
				       conc_owns, conc_destroy };
	} else if (!strcmp(flavour, "ts") || !strcmp(flavour, "percpu")) {
		if (!strcmp(flavour, "percpu"))
			cfg.flags = LFPOOL_F_PERCPU;
		*s = (struct subject){ lfpool_ts_create(&cfg), NULL, ts_get, ts_put, ts_owns,
				       ts_destroy };
	} else if (!strcmp(flavour, "ts-cache")) {
		*s = (struct subject){ lfpool_ts_create(&cfg), NULL, cache_get, cache_put, ts_owns,
				       ts_destroy };
		if (s->pool && !(s->cache = lfpool_ts_cache_create(s->pool)))
			return -1;
	} else if (!strncmp(flavour, "array-", 6)) {
		const char *f = flavour + 6;
		lfpool_flavour fl = !strcmp(f, "pool") ? LFPOOL_FLAVOUR_POOL
				  : !strcmp(f, "concurrent") ? LFPOOL_FLAVOUR_CONCURRENT
				  : !strcmp(f, "ts") ? LFPOOL_FLAVOUR_TS : 0;
		*s = (struct subject){ lfpool_array_create(fl, &acfg), NULL, array_get, array_put,
				       NULL, array_destroy };
	} else {
		return -1;
	}
	return s->pool ? 0 : -1;
}

/* A pooled object next to obj that no get handed out (prewarm made it). */
static char *neighbour(struct subject *s, char *obj)
{
	for (size_t d = OBJ; d <= 4 * OBJ; d += 16) {
		if (s->owns(s, obj + d))
			return obj + d;
		if (s->owns(s, obj - d))
			return obj - d;
	}
	return NULL;
}

static volatile char sink;

int main(int argc, char **argv)
{
	struct subject s;
	if (argc != 3 || make(&s, argv[1]) != 0) {
		fprintf(stderr, "usage: memcheck_prog FLAVOUR BUG (or no pool: %s)\n",
			argc > 1 ? argv[1] : "");
		return 2;
	}
	const char *bug = argv[2];
	char *obj = NULL;
	for (int round = 0; round < 2; round++) {
		obj = s.get(&s);
		if (!obj)
			return 2;
		memset(obj, round, OBJ);
		s.put(&s, obj);
	}
	obj = s.get(&s);
	obj[0] = 1;
	if (!strcmp(bug, "never-got")) {
		char *other = s.owns ? neighbour(&s, obj) : NULL;
		if (!other)
			return 2;
		sink = other[0];	/* the bug */
	} else if (!strcmp(bug, "leak")) {
		obj = NULL;		/* the bug: still out at destroy */
	} else {
		s.put(&s, obj);
		if (!strcmp(bug, "write-after-put"))
			obj[1] = 2;	/* the bug */
		else if (!strcmp(bug, "read-after-put"))
			sink = obj[1];	/* the bug */
		else if (strcmp(bug, "none") != 0)
			return 2;
		obj = NULL;
	}
	if (obj)
		s.put(&s, obj);
	s.destroy(&s);
	return 0;
}
