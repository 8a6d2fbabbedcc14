/* SPDX-License-Identifier: MIT */
/*
 * test_model.c - a property test: random sequences of get, put, prewarm,
 * trim and allocator failures (fixed seeds) on each flavour, checked after
 * every step against a reference model that knows every object, whether it
 * is pooled or out, and the bytes last written into it.
 *
 * The hooks keep the model honest: init adds an object (stamping it), fini
 * removes one and must only ever see a pooled object with its bytes intact.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "support.h"

#define OBJ 2000	/* about 32 per slab: growth and trim free slabs often */
#define STEPS 5000
#define MAX_OUT 200

enum { POOLED, OUT };

struct rec {
	unsigned char *p;
	int state;
	uint64_t stamp;	/* the first 8 bytes of the object */
};

struct model {
	struct rec recs[1024];
	size_t n;		/* objects alive */
	size_t capacity;
	uint64_t next_stamp;
	long inits, finis, resets;
};

static struct rec *find(struct model *m, const void *p)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->recs[i].p == p)
			return &m->recs[i];
	return NULL;
}

static size_t count(const struct model *m, int state)
{
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++)
		k += m->recs[i].state == state;
	return k;
}

static uint64_t read_stamp(const void *obj)
{
	uint64_t v;
	memcpy(&v, obj, sizeof(v));
	return v;
}

static void stamp(struct model *m, struct rec *r)
{
	r->stamp = ++m->next_stamp;
	memcpy(r->p, &r->stamp, sizeof(r->stamp));
}

static void model_init(void *obj, void *ctx)
{
	struct model *m = ctx;
	cr_assert_null(find(m, obj), "init of an object that is alive");
	cr_assert_lt(m->n, sizeof(m->recs) / sizeof(m->recs[0]));
	struct rec *r = &m->recs[m->n++];
	*r = (struct rec){ .p = obj, .state = POOLED };
	stamp(m, r);
	m->inits++;
}

static void model_reset(void *obj, void *ctx)
{
	struct model *m = ctx;
	struct rec *r = find(m, obj);
	cr_assert(r && r->state == OUT, "reset of an object that is not out");
	m->resets++;
}

static void model_fini(void *obj, void *ctx)
{
	struct model *m = ctx;
	struct rec *r = find(m, obj);
	cr_assert_not_null(r, "fini of an unknown object");
	cr_assert_eq(r->state, POOLED, "fini of an object that is out");
	cr_assert_eq(read_stamp(obj), r->stamp, "a pooled object's bytes changed");
	*r = m->recs[--m->n];
	m->finis++;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* The pool's figures agree with the model. */
static void check(const struct flavour_ops *ops, void *pool, const struct model *m, int step)
{
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.created, m->n, "step %d: created %llu, model %zu", step,
		     (unsigned long long)st.created, m->n);
	cr_assert_eq(st.retained, count(m, POOLED), "step %d: retained", step);
	cr_assert_eq(st.live, count(m, OUT), "step %d: live", step);
	cr_assert_eq(m->inits - m->finis, (long)m->n);
	if (m->capacity)
		cr_assert_leq(st.created, m->capacity);
}

static bool may_create(const struct model *m, size_t n)
{
	return !m->capacity || m->n + n <= m->capacity;
}

/* get: from the pooled objects if any, else a new one, else ENOBUFS. */
static void step_get(const struct flavour_ops *ops, void *pool, struct model *m, bool faulty,
		     int step)
{
	size_t pooled = count(m, POOLED);
	bool allowed = may_create(m, 1);
	long inits = m->inits, finis = m->finis;
	errno = 0;
	unsigned char *o = ops->get(pool);
	if (!o) {
		if (!pooled && !allowed) {
			cr_assert_eq(errno, ENOBUFS, "step %d: errno %d at capacity", step, errno);
			return;
		}
		cr_assert(faulty && !pooled, "step %d: get failed (errno %d), %zu pooled", step,
			  errno, pooled);
		cr_assert_eq(errno, ENOMEM, "step %d: errno %d", step, errno);
		cr_assert_eq(m->inits, inits);
		return;
	}
	cr_assert(pooled || allowed, "step %d: got an object beyond capacity", step);
	/* Debug builds remake a pooled object on get (fini, then init). */
	cr_assert_eq(m->inits, inits + (!pooled || REMAKES), "step %d: %ld objects made", step,
		     m->inits - inits);
	cr_assert_eq(m->finis, finis + (pooled && REMAKES), "step %d: %ld destroyed", step,
		     m->finis - finis);
	struct rec *r = find(m, o);
	cr_assert_not_null(r, "step %d: an object the pool never made", step);
	cr_assert_eq(r->state, POOLED, "step %d: an object that is out, handed out again", step);
	cr_assert_eq(read_stamp(o), r->stamp, "step %d: the object's bytes changed in the pool", step);
	cr_assert(ops->owns(pool, o));
	r->state = OUT;
	stamp(m, r);
}

static void step_put(const struct flavour_ops *ops, void *pool, struct model *m, uint64_t *seed)
{
	size_t out = count(m, OUT);
	if (!out)
		return;
	size_t k = rnd(seed) % out;
	for (size_t i = 0; i < m->n; i++) {
		struct rec *r = &m->recs[i];
		if (r->state == OUT && k-- == 0) {
			long resets = m->resets;
			ops->put(pool, r->p);
			cr_assert_eq(m->resets, resets + 1);
			r->state = POOLED;
			return;
		}
	}
}

static void step_prewarm(const struct flavour_ops *ops, void *pool, struct model *m, size_t n,
			 bool faulty, int step)
{
	bool allowed = may_create(m, n);
	long inits = m->inits;
	errno = 0;
	int r = ops->prewarm(pool, n);
	if (r == 0) {
		cr_assert(allowed, "step %d: prewarm(%zu) beyond capacity", step, n);
		cr_assert_eq(m->inits, inits + (long)n, "step %d: prewarm(%zu) made %ld", step, n,
			     m->inits - inits);
		return;
	}
	cr_assert_eq(r, -1);
	cr_assert_eq(m->inits, inits, "step %d: a failed prewarm made objects", step);
	if (!allowed)
		cr_assert_eq(errno, ENOBUFS, "step %d: errno %d", step, errno);
	else
		cr_assert(faulty && errno == ENOMEM, "step %d: prewarm(%zu) failed, errno %d", step,
			  n, errno);
}

static void step_trim(const struct flavour_ops *ops, void *pool, struct model *m, size_t keep,
		      int step)
{
	size_t pooled = count(m, POOLED);
	long finis = m->finis;
	size_t want = pooled > keep ? pooled - keep : 0;
	size_t got = ops->trim(pool, keep);
	cr_assert_eq(got, want, "step %d: trim(%zu) of %zu pooled destroyed %zu", step, keep,
		     pooled, got);
	cr_assert_eq(m->finis - finis, (long)want);
}

struct model_case {
	enum flavour fl;
	size_t capacity;
	uint64_t seed;
};

ParameterizedTestParameters(model, random_sequences)
{
	static const size_t caps[] = { 0, 40, 1 };
	static const uint64_t seeds[] = { 1, 0x9e3779b97f4a7c15ull, 12345, 271828 };
	static struct model_case cases[FL_COUNT * 3 * 4];
	size_t n = 0;
	for (int f = 0; f < FL_COUNT; f++)
		for (size_t c = 0; c < 3; c++)
			for (size_t s = 0; s < 4; s++)
				cases[n++] = (struct model_case){ f, caps[c], seeds[s] };
	return cr_make_param_array(struct model_case, cases, n);
}

ParameterizedTest(struct model_case *mc, model, random_sequences)
{
	const struct flavour_ops *ops = &flavours[mc->fl];
	static struct model m;
	struct test_alloc t;
	test_alloc_init(&t);
	m = (struct model){ .capacity = mc->capacity };
	lfpool_config c = { .obj_size = OBJ, .align = 64, .capacity = mc->capacity,
			    .prewarm = mc->capacity / 2, .allocator = &t.a,
			    .init = model_init, .reset = model_reset, .fini = model_fini,
			    .hook_ctx = &m };
	void *pool = ops->create(&c);
	cr_assert_not_null(pool);
	uint64_t seed = mc->seed;
	int gets = 0, enomem_seen = 0;

	for (int step = 0; step < STEPS; step++) {
		/* Phases of growth and shrinking, so that slabs come and go. */
		unsigned get_pct = (step / 500) % 2 ? 25 : 60;
		unsigned roll = rnd(&seed) % 100;
		bool faulty = rnd(&seed) % 10 == 0;
		if (faulty)
			test_alloc_fail_after(&t, 0);
		long failed = t.failed;
		if (roll < get_pct && count(&m, OUT) < MAX_OUT) {
			step_get(ops, pool, &m, faulty, step);
			gets++;
		} else if (roll < 85) {
			step_put(ops, pool, &m, &seed);
		} else if (roll < 95) {
			step_prewarm(ops, pool, &m, rnd(&seed) % 40, faulty, step);
		} else {
			step_trim(ops, pool, &m, rnd(&seed) % (count(&m, POOLED) + 3), step);
		}
		enomem_seen += t.failed > failed;
		test_alloc_fail_after(&t, -1);
		check(ops, pool, &m, step);
	}
	cr_assert_gt(gets, STEPS / 4);
	if (mc->capacity != 1)
		cr_assert_gt(enomem_seen, 0, "%s cap %zu seed %llu: no allocation ever failed", ops->name, mc->capacity, (unsigned long long)mc->seed);

	for (size_t i = 0; i < m.n; i++)
		if (m.recs[i].state == OUT) {
			ops->put(pool, m.recs[i].p);
			m.recs[i].state = POOLED;
		}
	lfpool_stats st;
	ops->stats(pool, &st);
	cr_assert_eq(st.created, st.retained, "all returned: created %llu, retained %llu",
		     (unsigned long long)st.created, (unsigned long long)st.retained);
	size_t alive = m.n;
	cr_assert_eq(ops->trim(pool, 0), alive);
	cr_assert_eq(m.n, 0);
	ops->stats(pool, &st);
	cr_assert_eq(st.slab_frees, st.slab_allocs, "%llu slabs held by an empty pool",
		     (unsigned long long)(st.slab_allocs - st.slab_frees));
	ops->destroy(pool);
	cr_assert_eq(m.inits, m.finis);
	test_alloc_finish(&t);
}
