/* SPDX-License-Identifier: MIT */
/*
 * loops.h - the pattern loops, compiled once per implementation.
 *
 * Before each inclusion define IMPL (the implementation's C prefix) and
 * IMPL_get(h) and IMPL_put(h, obj), as static inline functions or as macros
 * naming the API's own (h is a void *); where the API has bulk calls, also
 * IMPL_get_bulk(h, objs, n) (0 on success) and
 * IMPL_put_bulk(h, objs, n), and define IMPL_HAS_BULK.  Define IMPL_PER_THREAD
 * for an implementation whose instances belong to one thread: it gets no
 * xthread loops.  The inclusion defines `static const struct loops
 * IMPL_loops` and undefines those macros, so several implementations can
 * share one file.
 *
 * get and put are inlined into every loop; bench_escape and bench_barrier
 * between operations keep the compiler from merging a get with the put that
 * follows, or one iteration with the next.
 *
 * The placement study (placement.c) also defines LOOPS_FN_ATTR (attributes
 * of every loop function) and LOOPS_ENTRY() (a statement each runs first);
 * both are empty otherwise.
 */
#ifndef LOOPS_CAT
# define LOOPS_CAT2(a, b) a##_##b
# define LOOPS_CAT(a, b) LOOPS_CAT2(a, b)
#endif
#define L(x) LOOPS_CAT(IMPL, x)
#ifndef LOOPS_FN_ATTR
# define LOOPS_FN_ATTR
#endif
#ifndef LOOPS_ENTRY
# define LOOPS_ENTRY() ((void)0)
#endif

LOOPS_FN_ATTR static void L(pair)(void *h, uint64_t ops)
{
	LOOPS_ENTRY();
	for (uint64_t i = 0; i < ops / 2; i++) {
		void *obj = bench_got(L(get)(h));
		L(put)(h, obj);
		bench_barrier();
	}
}

LOOPS_FN_ATTR static void L(batch64)(void *h, uint64_t ops)
{
	LOOPS_ENTRY();
	void *objs[64];
	for (uint64_t i = 0; i < ops / 128; i++) {
		for (unsigned k = 0; k < 64; k++)
			objs[k] = bench_got(L(get)(h));
		for (unsigned k = 0; k < 64; k++) {
			L(put)(h, objs[k]);
			bench_barrier();
		}
	}
}

#ifdef IMPL_HAS_BULK
LOOPS_FN_ATTR static void L(bulk32)(void *h, uint64_t ops)
{
	LOOPS_ENTRY();
	void *objs[32];
	for (uint64_t i = 0; i < ops / 64; i++) {
		if (L(get_bulk)(h, objs, 32) != 0)
			bench_die("bulk get failed");
		bench_escape(objs);
		L(put_bulk)(h, objs, 32);
		bench_barrier();
	}
}
#endif

#ifndef IMPL_PER_THREAD
LOOPS_FN_ATTR static void L(xget)(void *h, struct xring *r, uint64_t ops)
{
	LOOPS_ENTRY();
	uint64_t tail = lfp_load_u64_rlx(&r->tail);
	for (uint64_t b = 0; b < ops / XBATCH; b++, tail++) {
		void **slot = xring_wait_free(r, tail);
		for (unsigned k = 0; k < XBATCH; k++)
			slot[k] = bench_got(L(get)(h));
		lfp_store_u64_rel(&r->tail, tail + 1);
	}
}

LOOPS_FN_ATTR static void L(xput)(void *h, struct xring *r, uint64_t ops)
{
	LOOPS_ENTRY();
	uint64_t head = lfp_load_u64_rlx(&r->head);
	for (uint64_t b = 0; b < ops / XBATCH; b++, head++) {
		void **slot = xring_wait_full(r, head);
		for (unsigned k = 0; k < XBATCH; k++) {
			L(put)(h, slot[k]);
			bench_barrier();
		}
		lfp_store_u64_rel(&r->head, head + 1);
	}
}
#endif

static const struct loops L(loops) = {
	.pair = L(pair),
	.batch64 = L(batch64),
#ifdef IMPL_HAS_BULK
	.bulk32 = L(bulk32),
#endif
#ifndef IMPL_PER_THREAD
	.xget = L(xget),
	.xput = L(xput),
#endif
};

#undef L
#undef IMPL
#undef IMPL_HAS_BULK
#undef IMPL_PER_THREAD
