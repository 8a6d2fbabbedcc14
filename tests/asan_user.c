/* SPDX-License-Identifier: MIT */
/*
 * tests/asan_user.c - a user's program under AddressSanitizer, linked
 * against the normal (uninstrumented) library: `asan_user clean` uses
 * every kind of pool correctly, its hooks writing whole objects, with
 * trims, debug pools and destroys among the gets and puts, and must give
 * no report; `asan_user NAME` makes one mistake, a read or write of an
 * object after its put (or of an array buffer's slack), which ASan must
 * report.  Built with -fsanitize=address by tests/asan-user.sh, which runs
 * every scenario -- and, built with -DLFPOOL_NO_ASAN_ANNOTATIONS (the
 * negative control), expects every mistake to go unseen, so that the
 * headers' annotations are what finds them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lfpool.h>

#define OBJ 40			/* not a multiple of the alignment: padding follows */

struct msg {
	char bytes[OBJ];
};

LFPOOL_TYPED(msg_pool, struct msg, concurrent);

static volatile char sink;

/* A hook that writes the whole object: ASan checks it (instrumented). */
static void scrub(void *obj, void *ctx)
{
	memset(obj, 0x5a, *(const size_t *)ctx);
}

static size_t obj_size = OBJ;

static lfpool_config config(unsigned flags)
{
	lfpool_config cfg = { .obj_size = OBJ, .magazine_size = 4, .depot_max = 2, .prewarm = 8,
			      .init = scrub, .reset = scrub, .fini = scrub,
			      .hook_ctx = &obj_size, .flags = flags };
	return cfg;
}

/* What every scenario does with an object it holds. */
static void use(void *obj, size_t n)
{
	memset(obj, 0xa5, n);
	sink = ((volatile char *)obj)[n - 1];
}

/* The mistake: a read of the first byte of obj, which was put. */
static void read_after_put(const void *obj)
{
	sink = *(const volatile char *)obj;
}

static void pool_after_put(void)
{
	lfpool_config cfg = config(0);
	cfg.reset = NULL;	/* the inline put */
	lfpool_pool *p = lfpool_pool_create(&cfg);
	char *o = lfpool_pool_get(p);
	use(o, OBJ);
	lfpool_pool_put(p, o);
	read_after_put(o + OBJ - 1);
}

/* The mistake: a write past the object, into its padding (obj_size 40,
 * aligned to 16), on a Pool and on a ThreadStatic cache. */
static void pool_padding(void)
{
	lfpool_config cfg = config(0);
	lfpool_pool *p = lfpool_pool_create(&cfg);
	char *o = lfpool_pool_get(p);
	use(o, OBJ);
	o[OBJ] = 1;
}

static void ts_padding(void)
{
	lfpool_config cfg = config(0);
	lfpool_ts *p = lfpool_ts_create(&cfg);
	char *o = lfpool_ts_get(p);
	use(o, OBJ);
	o[OBJ + 7] = 1;
}

static void pool_reset_after_put(void)
{
	lfpool_config cfg = config(0);	/* a reset hook: the out-of-line put */
	lfpool_pool *p = lfpool_pool_create(&cfg);
	char *o = lfpool_pool_get(p);
	use(o, OBJ);
	lfpool_pool_put(p, o);
	read_after_put(o);
}

/*
 * An unbounded pool's small slabs, which the inline get and put serve as
 * slab 0 (lib/slab.h: 20, 84 and 340 objects of 40 B): n objects got,
 * used and put back, twice, into objs; the last put's objects lie in all
 * three.
 */
enum { SMALL_OBJS = 200 };

static void concurrent_small_rounds(lfpool_concurrent *p, char **objs, int n)
{
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < n; i++) {
			objs[i] = lfpool_concurrent_get(p);
			use(objs[i], OBJ);
		}
		for (int i = 0; i < n; i++)
			lfpool_concurrent_put(p, objs[i]);
	}
}

/* The mistake: a read of an object of the third small slab after its put. */
static void concurrent_small_after_put(void)
{
	lfpool_config cfg = config(0);
	cfg.reset = NULL;
	cfg.prewarm = 0;
	lfpool_concurrent *p = lfpool_concurrent_create(&cfg);
	char *objs[SMALL_OBJS];
	concurrent_small_rounds(p, objs, SMALL_OBJS);
	read_after_put(objs[0]);	/* the first got of the second round: the top, of slab 3 */
}

static void concurrent_after_put(void)
{
	lfpool_config cfg = config(0);
	cfg.reset = NULL;	/* the inline put of a small slab */
	lfpool_concurrent *p = lfpool_concurrent_create(&cfg);
	char *o = lfpool_concurrent_get(p);
	use(o, OBJ);
	lfpool_concurrent_put(p, o);
	read_after_put(o);
}

static void ts_after_put(unsigned flags)
{
	lfpool_config cfg = config(flags);
	cfg.reset = NULL;
	lfpool_ts *p = lfpool_ts_create(&cfg);
	char *o = lfpool_ts_get(p);
	use(o, OBJ);
	lfpool_ts_put(p, o);
	read_after_put(o);
}

static void ts_implicit_after_put(void) { ts_after_put(0); }
static void ts_percpu_after_put(void) { ts_after_put(LFPOOL_F_PERCPU); }
static void ts_debug_after_put(void) { ts_after_put(LFPOOL_F_DEBUG); }

static void ts_cache_after_put(void)
{
	lfpool_config cfg = config(0);
	lfpool_ts *p = lfpool_ts_create(&cfg);
	lfpool_ts_cache *c = lfpool_ts_cache_create(p);
	char *o = lfpool_ts_cache_get(c);
	use(o, OBJ);
	lfpool_ts_cache_put(c, o);
	read_after_put(o + 8);
}

static void ts_bulk_after_put(void)
{
	lfpool_config cfg = config(0);
	lfpool_ts *p = lfpool_ts_create(&cfg);
	void *objs[6];
	if (lfpool_ts_get_bulk(p, objs, 6) != 0)
		abort();
	use(objs[5], OBJ);
	lfpool_ts_put_bulk(p, objs, 6);
	read_after_put(objs[5]);
}

static lfpool_array *array(lfpool_flavour fl)
{
	lfpool_array_config acfg = { .min_size = 16, .max_size = 256, .magazine_size = 4 };
	return lfpool_array_create(fl, &acfg);
}

static void array_after_put(lfpool_flavour fl)
{
	lfpool_array *ap = array(fl);
	char *b = lfpool_array_get(ap, OBJ, NULL);
	use(b, OBJ);
	lfpool_array_put(ap, b);
	b = lfpool_array_get(ap, OBJ, NULL);	/* the thread's class cache now */
	use(b, OBJ);
	lfpool_array_put_sized(ap, b, OBJ);
	read_after_put(b);
}

static void array_pool_after_put(void) { array_after_put(LFPOOL_FLAVOUR_POOL); }
static void array_concurrent_after_put(void) { array_after_put(LFPOOL_FLAVOUR_CONCURRENT); }
static void array_ts_after_put(void) { array_after_put(LFPOOL_FLAVOUR_TS); }

/* The mistake: a write one byte past the n bytes asked for, inside the class. */
static void array_slack(lfpool_flavour fl)
{
	lfpool_array *ap = array(fl);
	char *b = lfpool_array_get(ap, OBJ, NULL);
	use(b, OBJ);
	b[OBJ] = 1;
}

static void array_pool_slack(void) { array_slack(LFPOOL_FLAVOUR_POOL); }
static void array_concurrent_slack(void) { array_slack(LFPOOL_FLAVOUR_CONCURRENT); }
static void array_ts_slack(void) { array_slack(LFPOOL_FLAVOUR_TS); }

static void rc_after_release(void)
{
	lfpool_config cfg = config(0);
	lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_TS, &cfg);
	char *o = lfpool_rc_get(rc);
	use(o, OBJ);
	lfpool_rc_retain(o);
	lfpool_rc_release(o);
	use(o, OBJ);		/* still held */
	lfpool_rc_release(o);
	read_after_put(o);
}

static void add(void *capture, void *arg)
{
	*(int *)arg += *(int *)capture;
}

static void closure_after_release(void)
{
	lfpool_config cfg = { .obj_size = sizeof(int) };
	lfpool_closure_pool *cp = lfpool_closure_pool_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg);
	int one = 1, sum = 0;
	lfpool_closure *c = lfpool_closure_get(cp, add, &one, sizeof(one));
	lfpool_closure_run(cp, c, &sum);
	read_after_put(lfpool_closure_capture(c));
}

static void typed_after_put(void)
{
	msg_pool *mp = msg_pool_create(NULL);
	struct msg *m = msg_pool_get(mp);
	use(m, sizeof(*m));
	msg_pool_put(mp, m);
	read_after_put(m->bytes + 3);
}

static void scoped_after_put(void)
{
	lfpool_config cfg = config(0);
	lfpool_ts *p = lfpool_ts_create(&cfg);
	char *kept;
	{
		LFPOOL_SCOPED(lfpool_ts, char, o, p);
		use(o, OBJ);
		kept = o;
	}
	read_after_put(kept);
}

/* Every kind of pool, used correctly, with trims and destroys of pooled
 * objects that the hooks write (fini after the header's poison). */
static void clean(void)
{
	for (unsigned flags = 0; flags <= LFPOOL_F_DEBUG; flags++) {
		lfpool_config small = config(flags);
		small.reset = NULL;
		small.prewarm = 0;
		lfpool_concurrent *sp = lfpool_concurrent_create(&small);
		char *small_objs[SMALL_OBJS];
		if (!sp)
			abort();
		concurrent_small_rounds(sp, (char **)small_objs, SMALL_OBJS);
		if (lfpool_concurrent_destroy(sp))
			abort();
		lfpool_config cfg = config(flags);
		lfpool_pool *pp = lfpool_pool_create(&cfg);
		lfpool_concurrent *cp = lfpool_concurrent_create(&cfg);
		lfpool_ts *tp = lfpool_ts_create(&cfg);
		lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg);
		cfg.flags |= LFPOOL_F_PERCPU;
		lfpool_ts *pc = lfpool_ts_create(&cfg);
		lfpool_ts_cache *cache = lfpool_ts_cache_create(tp);
		if (!pp || !cp || !tp || !rc || !pc || !cache)
			abort();
		void *objs[24];
		for (int round = 0; round < 4; round++) {
			for (int i = 0; i < 24; i++) {
				objs[i] = lfpool_pool_get(pp);
				use(objs[i], OBJ);
			}
			for (int i = 0; i < 24; i++)
				lfpool_pool_put(pp, objs[i]);
			for (int i = 0; i < 24; i++) {
				objs[i] = i % 2 ? lfpool_concurrent_get(cp) : lfpool_ts_get(tp);
				use(objs[i], OBJ);
			}
			for (int i = 0; i < 24; i++) {
				if (i % 2)
					lfpool_concurrent_put(cp, objs[i]);
				else if (i % 4)
					lfpool_ts_put(tp, objs[i]);
				else
					lfpool_ts_cache_put(cache, objs[i]);
			}
			for (int i = 0; i < 24; i++) {
				objs[i] = i % 2 ? lfpool_ts_get(pc) : lfpool_rc_get(rc);
				use(objs[i], OBJ);
			}
			for (int i = 0; i < 24; i++) {
				if (i % 2)
					lfpool_ts_put(pc, objs[i]);
				else
					lfpool_rc_release(objs[i]);
			}
			if (lfpool_concurrent_get_bulk(cp, objs, 24) != 0)
				abort();
			for (int i = 0; i < 24; i++)
				use(objs[i], OBJ);
			lfpool_concurrent_put_bulk(cp, objs, 24);
			lfpool_pool_trim(pp, 2);
			lfpool_concurrent_trim(cp, 1);
			lfpool_ts_drain(tp);
			lfpool_ts_trim(tp, 0);
			lfpool_ts_trim(pc, 0);
		}
		lfpool_ts_cache_destroy(cache);
		lfpool_rc_destroy(rc);
		if (lfpool_ts_destroy(pc) || lfpool_ts_destroy(tp) || lfpool_concurrent_destroy(cp) ||
		    lfpool_pool_destroy(pp))
			abort();
	}
	for (lfpool_flavour fl = LFPOOL_FLAVOUR_POOL; fl <= LFPOOL_FLAVOUR_TS; fl++) {
		for (unsigned f = 0; f < 4; f++) {
			lfpool_array_config acfg = { .min_size = 16, .max_size = 256,
						     .magazine_size = 4 };
			acfg.flags = (f & 1 ? LFPOOL_F_DEBUG : 0) | (f & 2 ? LFPOOL_ARRAY_F_CLEAR : 0);
			lfpool_array *ap = lfpool_array_create(fl, &acfg);
			if (!ap)
				abort();
			for (size_t n = 1; n <= 600; n += 37) {
				size_t real = 0;
				char *a = lfpool_array_get(ap, n, NULL);
				char *b = lfpool_array_get(ap, n, &real);
				use(a, n);
				use(b, real);	/* told the real size: all of it */
				lfpool_array_put(ap, a);
				lfpool_array_put_sized(ap, b, n);
			}
			lfpool_array_trim(ap, 0);
			lfpool_array_destroy(ap);
		}
		lfpool_config ccfg = { .obj_size = 24 };
		lfpool_closure_pool *clp = lfpool_closure_pool_create(fl, &ccfg);
		int one = 1, sum = 0;
		for (int i = 0; i < 40; i++)
			lfpool_closure_run(clp, lfpool_closure_get(clp, add, &one, sizeof(one)), &sum);
		lfpool_closure_pool_destroy(clp);
	}
	msg_pool *mp = msg_pool_create(NULL);
	for (int i = 0; i < 10; i++) {
		LFPOOL_SCOPED(msg_pool, struct msg, m, mp);
		use(m, sizeof(*m));
	}
	msg_pool_destroy(mp);
	printf("asan_user: clean\n");
}

static const struct {
	const char *name;
	void (*run)(void);
} scenarios[] = {
	{ "clean", clean },
	{ "pool", pool_after_put },
	{ "pool-reset", pool_reset_after_put },
	{ "pool-padding", pool_padding },
	{ "ts-padding", ts_padding },
	{ "concurrent", concurrent_after_put },
	{ "concurrent-small", concurrent_small_after_put },
	{ "ts", ts_implicit_after_put },
	{ "ts-percpu", ts_percpu_after_put },
	{ "ts-debug", ts_debug_after_put },
	{ "ts-cache", ts_cache_after_put },
	{ "ts-bulk", ts_bulk_after_put },
	{ "array-pool", array_pool_after_put },
	{ "array-concurrent", array_concurrent_after_put },
	{ "array-ts", array_ts_after_put },
	{ "slack-pool", array_pool_slack },
	{ "slack-concurrent", array_concurrent_slack },
	{ "slack-ts", array_ts_slack },
	{ "rc", rc_after_release },
	{ "closure", closure_after_release },
	{ "typed", typed_after_put },
	{ "scoped", scoped_after_put },
};

int main(int argc, char **argv)
{
	size_t n = sizeof(scenarios) / sizeof(scenarios[0]);
	for (size_t i = 0; argc == 2 && i < n; i++) {
		if (strcmp(argv[1], scenarios[i].name) == 0) {
			scenarios[i].run();
			return 0;
		}
	}
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", scenarios[i].name);
		return 0;
	}
	fprintf(stderr, "usage: asan_user NAME | --list\n");
	return 2;
}
