/* SPDX-License-Identifier: MIT */
/*
 * fuzz_layers.c - modes 2-4: the layers over a flavour (array pools,
 * reference-counted pools, closure pools), each on the flavour the input
 * picks, release or debug, with allocator faults, against a model of what
 * is out: sizes and classes, oversize buffers, counts, captures, errno,
 * statistics, and the error hook for each misuse of a debug pool.
 *
 * Input: mode byte, configuration bytes, then operations of 3 bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define OUT_MAX 256
#define LFP_ARRAY_MAGIC_ 0x41525259u	/* array.c's prefix magic, for forged prefixes */

static lfpool_flavour flavour_of(unsigned b) { return (lfpool_flavour)(b % 3 + 1); }

/* ==== array pools ======================================================= */

struct abuf {
	unsigned char *p;
	size_t asked, real;
};

struct pooled {
	unsigned char *p;
	uint64_t stamp;
};

struct am {
	lfpool_array *ap;
	bool debug, clear, ts;
	size_t min, max, align, cap;
	struct abuf out[OUT_MAX];
	size_t nout;
	struct pooled pooled[OUT_MAX];	/* buffers put, with their stamps */
	size_t npooled;
	uint64_t stamps, ov_gets, ov_out;
	struct stress_alloc sa;
};

static size_t class_size(const struct am *m, size_t n)
{
	size_t c = m->min;
	while (c < n)
		c <<= 1;
	return c;
}

static void array_stats_check(struct am *m)
{
	lfpool_stats st;
	uint64_t classed = 0, gets, out;
	for (size_t i = 0; i < m->nout; i++)
		classed += m->out[i].asked <= m->max;
	FZ_CHECK(lfpool_array_stats(m->ap, 0, &st) == 0, "array stats(0) failed");
	FZ_CHECK(st.live == classed && st.created >= st.live,
		 "array stats: live %llu created %llu, model %llu out in classes",
		 (unsigned long long)st.live, (unsigned long long)st.created,
		 (unsigned long long)classed);
	lfpool_array_oversize_stats(m->ap, &gets, &out);
	FZ_CHECK(gets == m->ov_gets && out == m->ov_out, "oversize stats %llu/%llu, model %llu/%llu",
		 (unsigned long long)gets, (unsigned long long)out,
		 (unsigned long long)m->ov_gets, (unsigned long long)m->ov_out);
	errno = 0;
	FZ_CHECK(lfpool_array_stats(m->ap, m->max + 1, &st) == -1 && errno == EINVAL,
		 "array stats of an oversize size: %s", strerror(errno));
	for (size_t i = 0; i < m->nout; i++) {
		if (m->out[i].asked > m->max)
			continue;
		uint64_t in_class = 0;
		for (size_t j = 0; j < m->nout; j++)
			in_class += m->out[j].asked <= m->max && m->out[j].real == m->out[i].real;
		FZ_CHECK(lfpool_array_stats(m->ap, m->out[i].asked, &st) == 0 && st.live == in_class,
			 "class %zu: live %llu, model %llu", m->out[i].real,
			 (unsigned long long)st.live, (unsigned long long)in_class);
		break;
	}
}

static void array_get(struct am *m, size_t n)
{
	size_t real = 0;
	unsigned char *p = lfpool_array_get(m->ap, n, &real);
	if (!p) {
		int err = errno;
		lfpool_stats st = { 0 };
		if (n && n <= m->max)
			lfpool_array_stats(m->ap, n, &st);
		FZ_CHECK((n == 0 && err == EINVAL) || fz_enomem_ok(&m->sa, err) ||
				 (n && n <= m->max && err == ENOBUFS && m->cap && st.created == m->cap),
			 "array get(%zu) failed: %s (class created %llu, capacity %zu)", n,
			 strerror(err), (unsigned long long)st.created, m->cap);
		return;
	}
	FZ_CHECK(n, "array get(0) succeeded");
	FZ_CHECK(real == (n > m->max ? n : class_size(m, n)), "get(%zu) has %zu bytes", n, real);
	FZ_CHECK((uintptr_t)p % m->align == 0, "array buffer %p misaligned (%zu)", (void *)p, m->align);
	for (size_t i = 0; i < m->npooled; i++) {
		if (m->pooled[i].p != p)
			continue;
		if (m->clear) {
			for (size_t k = 0; k < real; k++)
				FZ_CHECK(p[k] == 0, "cleared buffer %p has byte %zu = %u", (void *)p, k, p[k]);
		} else if (!m->debug) {
			FZ_CHECK(memcmp(p, &m->pooled[i].stamp, 8) == 0, "buffer %p changed while pooled",
				 (void *)p);
		}
		m->pooled[i] = m->pooled[--m->npooled];
		break;
	}
	memset(p, 0xa5, real);	/* all its bytes are the caller's */
	if (n > m->max) {
		m->ov_gets++;
		m->ov_out++;
	}
	if (m->nout == OUT_MAX) {
		lfpool_array_put(m->ap, p);
		m->ov_out -= n > m->max;
		return;
	}
	m->out[m->nout++] = (struct abuf){ p, n, real };
}

/* Put out[k] back: sized with what was asked, with its real size, or not. */
static void array_put(struct am *m, size_t k, unsigned how)
{
	struct abuf b = m->out[k];
	m->out[k] = m->out[--m->nout];
	if (b.asked > m->max) {
		m->ov_out--;
	} else if (m->npooled < OUT_MAX) {
		uint64_t s = ++m->stamps;
		memcpy(b.p, &s, 8);
		m->pooled[m->npooled++] = (struct pooled){ b.p, s };
	}
	if (how % 3 == 0)
		lfpool_array_put(m->ap, b.p);
	else
		lfpool_array_put_sized(m->ap, b.p, how % 3 == 1 ? b.asked : b.real);
}

struct amisuse {
	struct am *m;
	void *p;
	size_t n;
};

static void amisuse_put(void *ctx)
{
	struct amisuse *u = ctx;
	lfpool_array_put_sized(u->m->ap, u->p, u->n);
}

static void amisuse_get(void *ctx)
{
	struct amisuse *u = ctx;
	FZ_CHECK(!lfpool_array_get(u->m->ap, 16, NULL) && errno == EINVAL,
		 "array get after destroy succeeded");
}

static void amisuse_destroy(void *ctx)
{
	struct amisuse *u = ctx;
	lfpool_array_destroy(u->m->ap);
}

/* Debug array pools: each misuse reaches the hook once. */
static void array_misuse(struct am *m, unsigned a, unsigned b)
{
	_Alignas(16) unsigned char local[64] = { 0 };
	struct lfpool_array_hdr *h = (struct lfpool_array_hdr *)(local + 32) - 1;
	struct amisuse u = { m, NULL, 0 };
	switch (a % 6) {
	case 0:	/* put twice (an oversize one is freed by then) */
		if (!m->nout)
			return;
		u.p = m->out[b % m->nout].p;
		array_put(m, b % m->nout, a >> 3);
		if (m->npooled && m->pooled[m->npooled - 1].p == u.p)
			m->npooled--;	/* poisoned now: no stamp to check */
		fz_expect_report("array double put", "double put|not from this array",
				 amisuse_put, &u);
		break;
	case 1:	/* a stranger */
		u.p = local + 32;
		fz_expect_report("array foreign put", "not from this array", amisuse_put, &u);
		break;
	case 2:	/* a forged prefix naming no class */
		h->magic = LFP_ARRAY_MAGIC_;
		h->slot = 1;
		u.p = local + 32;
		fz_expect_report("array bad prefix", "bad prefix", amisuse_put, &u);
		break;
	case 3:	/* inside a buffer */
		if (!m->nout)
			return;
		u.p = m->out[b % m->nout].p + 16;
		fz_expect_report("array interior put", "not from this array", amisuse_put, &u);
		break;
	default:	/* sized with a size of another class, or another oversize size */
		if (!m->nout)
			return;
		u.p = m->out[b % m->nout].p;
		u.n = m->out[b % m->nout].real * 2 + 1;
		fz_expect_report("array sized put of another size", "another", amisuse_put, &u);
	}
}

static void array_bad_configs(lfpool_flavour fl, const lfpool_array_config *good)
{
	lfpool_array_config bad[8];
	for (int i = 0; i < 8; i++)
		bad[i] = *good;
	bad[0].min_size = 24;
	bad[1].min_size = 16, bad[1].max_size = 24;
	bad[2].min_size = 8;
	bad[3].min_size = 64, bad[3].max_size = 32;
	bad[4].max_size = LFPOOL_ARRAY_MAX_CLASS * 2;
	bad[5].align = 8192;
	bad[6].flags = 0x4;
	bad[7].allocator = &(lfpool_allocator){ NULL, NULL, NULL };
	for (int i = 0; i < 8; i++)
		FZ_CHECK(!lfpool_array_create(fl, &bad[i]) && errno == EINVAL, "array bad config %d", i);
	FZ_CHECK(!lfpool_array_create(fl, NULL) && errno == EINVAL, "array NULL config");
	FZ_CHECK(!lfpool_array_create(0, good) && errno == EINVAL, "array flavour 0");
	FZ_CHECK(!lfpool_array_create(LFPOOL_FLAVOUR_TS + 1, good) && errno == EINVAL,
		 "array flavour beyond the last");
	lfpool_array_destroy(NULL);
}

void fz_array(struct fz *f)
{
	static struct am m;	/* large: not on the stack */
	unsigned b0 = fz_byte(f), b1 = fz_byte(f), b2 = fz_byte(f), b3 = fz_byte(f);
	memset(&m, 0, sizeof(m));
	m.debug = b0 & 0x4;
	m.clear = b0 & 0x8;
	m.min = (size_t)16 << (b1 % 4);
	m.max = m.min << ((b1 >> 2) % 6);
	m.align = (b1 >> 5) == 7 ? 4096 : (size_t)16 << ((b1 >> 5) % 5);
	m.cap = (b2 & 1) ? 0 : (b2 >> 1) % 100 + 1;
	fz_alloc_init(&m.sa, (b3 & 0xf) ? 0 : 4 + (b3 >> 4));
	lfpool_flavour fl = flavour_of(b0 >> 4);
	lfpool_array_config cfg = {
		.min_size = (b1 % 4) ? m.min : 0,
		.max_size = m.max, .align = (b1 >> 5) ? m.align : 0, .capacity = m.cap,
		.allocator = &m.sa.a,
		.flags = (m.debug ? LFPOOL_F_DEBUG : 0) | (m.clear ? LFPOOL_ARRAY_F_CLEAR : 0),
		.name = (b0 & 0x2) ? "arr" : NULL, .magazine_size = b3 % 9, .depot_max = 2,
	};
	if (b0 & 0x1)
		array_bad_configs(fl, &cfg);
	m.ap = lfpool_array_create(fl, &cfg);
	if (!m.ap) {
		FZ_CHECK(fz_enomem_ok(&m.sa, errno), "array create: %s", strerror(errno));
		fz_alloc_check(&m.sa, "array: failed create");
		return;
	}
	while (fz_more(f)) {
		unsigned op = fz_byte(f), a = fz_byte(f), b = fz_byte(f);
		switch (op % 8) {
		case 0:
		case 1:
			array_get(&m, (a << 8 | b) % (2 * m.max + 2));
			break;
		case 2:	/* small sizes, and one no allocator can serve (ENOMEM) */
			if (a == 0xff) {
				FZ_CHECK(!lfpool_array_get(m.ap, SIZE_MAX - 8, NULL) && errno == ENOMEM,
					 "array get(SIZE_MAX - 8): %s", strerror(errno));
				break;
			}
			array_get(&m, b % (m.min + 1));
			break;
		case 3:
		case 4:
			if (m.nout)
				array_put(&m, b % m.nout, a);
			else
				lfpool_array_put(m.ap, NULL);
			break;
		case 5: {
			lfpool_stats before, after;
			lfpool_array_stats(m.ap, 0, &before);
			size_t n = lfpool_array_trim(m.ap, b % 4);
			lfpool_array_stats(m.ap, 0, &after);
			FZ_CHECK(before.created - after.created == n, "array trim said %zu, created %llu -> %llu",
				 n, (unsigned long long)before.created, (unsigned long long)after.created);
			m.npooled = 0;	/* trimmed memory may come back as new buffers */
			break;
		}
		case 6:
			array_stats_check(&m);
			break;
		default:
			if (m.debug)
				array_misuse(&m, a, b);
		}
	}
	m.sa.fail_one_in = 0;
	struct abuf leak = { 0 };
	if (m.debug && m.ov_out && (b3 & 0x10)) {
		/* Destroy reports oversize buffers still out (and cannot free them). */
		for (size_t i = 0; i < m.nout && !leak.p; i++)
			if (m.out[i].asked > m.max)
				leak = m.out[i], m.out[i] = m.out[--m.nout];
	}
	while (m.nout)
		array_put(&m, 0, m.nout);
	array_stats_check(&m);
	struct amisuse u = { &m, NULL, 0 };
	if (leak.p) {
		fz_expect_report("array destroy with oversize out", "still out", amisuse_destroy, &u);
		m.sa.a.free(leak.p - m.align, m.align + leak.asked, m.sa.a.ctx);
	} else {
		lfpool_array_destroy(m.ap);
	}
	fz_alloc_check(&m.sa, "array");
	if (m.debug) {
		u.p = &m;
		fz_expect_report("array get after destroy", "after destroy", amisuse_get, &u);
		fz_expect_report("array put after destroy", "after destroy", amisuse_put, &u);
		fz_expect_report("array destroyed twice", "already destroyed", amisuse_destroy, &u);
	}
}

/* ==== reference-counted pools =========================================== */

struct robj {
	unsigned char *p;
	uint32_t count;
};

struct rm {
	lfpool_rc *rc;
	bool debug;
	size_t size, cap;
	struct robj out[OUT_MAX];
	size_t nout;
	int64_t alive;		/* init - fini */
	uint64_t resets, puts;
	struct stress_alloc sa;
};

static void rc_init_hook(void *obj, void *ctx)
{
	struct rm *m = ctx;
	memset(obj, 0x5a, m->size);
	m->alive++;
	FZ_CHECK(!m->cap || m->alive <= (int64_t)m->cap, "rc: %lld alive, capacity %zu",
		 (long long)m->alive, m->cap);
}

static void rc_fini_hook(void *obj, void *ctx)
{
	struct rm *m = ctx;
	(void)obj;
	m->alive--;
}

static void rc_reset_hook(void *obj, void *ctx)
{
	struct rm *m = ctx;
	(void)obj;
	m->resets++;
}

static void rc_release_k(struct rm *m, size_t k)
{
	struct robj *o = &m->out[k];
	int last = lfpool_rc_release(o->p);
	FZ_CHECK(last == (o->count == 1), "release with count %u returned %d", o->count, last);
	m->puts += last;
	if (--o->count == 0)
		*o = m->out[--m->nout];
}

static void rmisuse_release(void *p) { lfpool_rc_release(p); }
static void rmisuse_retain(void *p) { lfpool_rc_retain(p); }
static void rmisuse_destroy(void *p) { lfpool_rc_destroy(p); }

static void rc_misuse(struct rm *m, unsigned a, unsigned b)
{
	_Alignas(16) unsigned char local[64] = { 0 };
	if (a & 1) {	/* not a counted object: any pool reports it */
		fz_expect_report(a & 2 ? "rc release of a stranger" : "rc retain of a stranger",
				 "not a reference-counted", a & 2 ? rmisuse_release : rmisuse_retain,
				 local + 32);
		return;
	}
	if (!m->debug || !m->nout)
		return;
	/* Released to zero, then used again. */
	struct robj *o = &m->out[b % m->nout];
	void *p = o->p;
	while (m->nout && m->out[b % m->nout].p == p)
		rc_release_k(m, b % m->nout);
	fz_expect_report("rc use after the count reached zero", "reached zero",
			 a & 2 ? rmisuse_release : rmisuse_retain, p);
}

void fz_rc(struct fz *f)
{
	static struct rm m;
	static const size_t aligns[] = { 0, 8, 16, 64, 4096 };
	unsigned b0 = fz_byte(f), b1 = fz_byte(f), b2 = fz_byte(f), b3 = fz_byte(f);
	memset(&m, 0, sizeof(m));
	m.debug = b0 & 0x4;
	m.size = b1 % 200 + 1;
	m.cap = (b2 & 1) ? 0 : (b2 >> 1) % 300 + 1;
	fz_alloc_init(&m.sa, (b3 & 0xf) ? 0 : 4 + (b3 >> 4));
	lfpool_config cfg = {
		.obj_size = m.size, .align = aligns[(b1 >> 5) % 5], .capacity = m.cap,
		.prewarm = m.cap ? b3 % (m.cap + 1) : b3 % 16,
		.init = rc_init_hook, .reset = (b0 & 0x8) ? rc_reset_hook : NULL,
		.fini = (b0 & 0x40) ? NULL : rc_fini_hook, .hook_ctx = &m, .allocator = &m.sa.a,
		.flags = m.debug ? LFPOOL_F_DEBUG : 0, .magazine_size = b3 % 9,
		.name = (b0 & 0x80) ? "counted" : NULL,
	};
	if (b0 & 0x2) {
		lfpool_config bad = cfg;
		FZ_CHECK(!lfpool_rc_create(LFPOOL_FLAVOUR_POOL, NULL) && errno == EINVAL, "rc NULL cfg");
		bad.obj_size = 0;
		FZ_CHECK(!lfpool_rc_create(LFPOOL_FLAVOUR_POOL, &bad) && errno == EINVAL, "rc size 0");
		bad = cfg, bad.align = 24;
		FZ_CHECK(!lfpool_rc_create(LFPOOL_FLAVOUR_POOL, &bad) && errno == EINVAL, "rc align 24");
		FZ_CHECK(!lfpool_rc_create(0, &cfg) && errno == EINVAL, "rc flavour 0");
		lfpool_rc_destroy(NULL);
	}
	m.rc = lfpool_rc_create(flavour_of(b0 >> 4), &cfg);
	if (!m.rc) {
		FZ_CHECK(fz_enomem_ok(&m.sa, errno), "rc create: %s", strerror(errno));
		fz_alloc_check(&m.sa, "rc: failed create");
		return;
	}
	while (fz_more(f)) {
		unsigned op = fz_byte(f), a = fz_byte(f), b = fz_byte(f);
		switch (op % 7) {
		case 0:
		case 1: {
			unsigned char *p = lfpool_rc_get(m.rc);
			if (!p) {
				FZ_CHECK(fz_enomem_ok(&m.sa, errno) ||
						 (errno == ENOBUFS && m.cap && m.alive == (int64_t)m.cap),
					 "rc get: %s with %lld alive", strerror(errno), (long long)m.alive);
				break;
			}
			FZ_CHECK(lfpool_rc_count(p) == 1, "rc get: count %u", lfpool_rc_count(p));
			for (size_t i = 0; i < m.nout; i++)
				FZ_CHECK(m.out[i].p != p, "rc get returned %p, which is out", (void *)p);
			memset(p, 0x77, m.size);
			if (m.nout == OUT_MAX) {
				lfpool_rc_release(p);
				m.puts++;
				break;
			}
			m.out[m.nout++] = (struct robj){ p, 1 };
			break;
		}
		case 2:
			if (m.nout) {
				struct robj *o = &m.out[b % m.nout];
				lfpool_rc_retain(o->p);
				o->count++;
			} else {
				lfpool_rc_retain(NULL);
			}
			break;
		case 3:
		case 4:
			if (m.nout) {
				rc_release_k(&m, b % m.nout);
			} else {
				FZ_CHECK(lfpool_rc_release(NULL) == 0, "release(NULL) != 0");
			}
			break;
		case 5: {
			lfpool_stats st;
			lfpool_rc_stats(m.rc, &st);
			FZ_CHECK(st.live == m.nout, "rc stats: live %llu, model %zu",
				 (unsigned long long)st.live, m.nout);
			for (size_t i = 0; i < m.nout; i++)
				FZ_CHECK(lfpool_rc_count(m.out[i].p) == m.out[i].count, "rc count %u, model %u",
					 lfpool_rc_count(m.out[i].p), m.out[i].count);
			FZ_CHECK(!(b0 & 0x8) || m.resets == m.puts, "rc reset ran %llu times for %llu puts",
				 (unsigned long long)m.resets, (unsigned long long)m.puts);
			break;
		}
		default:
			rc_misuse(&m, a, b);
		}
	}
	m.sa.fail_one_in = 0;
	while (m.nout)
		rc_release_k(&m, 0);
	lfpool_rc_destroy(m.rc);
	FZ_CHECK((b0 & 0x40) || m.alive == 0, "rc destroy: %lld objects without fini",
		 (long long)m.alive);
	fz_alloc_check(&m.sa, "rc");
	if (m.debug)
		fz_expect_report("rc destroyed twice", "already destroyed", rmisuse_destroy, m.rc);
}

/* ==== closure pools ===================================================== */

struct cm {
	lfpool_closure_pool *cp;
	lfpool_ts_cache *cache;
	bool debug, ts;
	size_t capture;
	struct cobj {
		lfpool_closure *c;
		unsigned char tag;
		size_t size;
	} out[OUT_MAX];
	size_t nout;
	unsigned ran;
	struct stress_alloc sa;
};

static struct cm *cm_now;	/* for the closures' functions */

/* A closure's function: its capture holds size bytes of tag (and arg is
 * the closure's own record). */
static void closure_fn(void *capture, void *arg)
{
	const struct cobj *o = arg;
	const unsigned char *b = capture;
	for (size_t i = 0; i < o->size; i++)
		FZ_CHECK(b[i] == o->tag, "closure capture byte %zu is %u, not %u", i, b[i], o->tag);
	cm_now->ran++;
}

static void closure_get(struct cm *m, unsigned a, unsigned b)
{
	unsigned char cap[128];
	size_t size = m->capture ? b % (m->capture + 1) : 0;
	lfpool_closure_fn fn = closure_fn;
	if ((a & 0xf) == 0)
		size = m->capture + 1 + b % 4;	/* too large: EINVAL */
	else if ((a & 0xf) == 1)
		fn = NULL;			/* EINVAL */
	memset(cap, a, sizeof(cap));
	bool from_cache = m->cache && (a & 0x10);
	lfpool_closure *c = from_cache ? lfpool_closure_get_cache(m->cp, m->cache, fn, cap, size)
				       : lfpool_closure_get(m->cp, fn, cap, size);
	if (!c) {
		FZ_CHECK(((a & 0xf) <= 1 && errno == EINVAL) || fz_enomem_ok(&m->sa, errno) ||
				 errno == ENOBUFS,
			 "closure get(%zu): %s", size, strerror(errno));
		return;
	}
	FZ_CHECK((a & 0xf) > 1, "closure get with a bad argument succeeded");
	FZ_CHECK((uintptr_t)lfpool_closure_capture(c) % 16 == 0, "capture misaligned");
	if (m->nout == OUT_MAX) {
		lfpool_closure_release(m->cp, c);
		return;
	}
	m->out[m->nout++] = (struct cobj){ c, (unsigned char)a, size };
}

static void closure_end(struct cm *m, size_t k, unsigned how)
{
	struct cobj o = m->out[k];
	m->out[k] = m->out[--m->nout];
	unsigned ran = m->ran;
	switch (how % 3) {
	case 0:
		lfpool_closure_run(m->cp, o.c, &o);
		FZ_CHECK(m->ran == ran + 1, "closure run did not call its function");
		break;
	case 1:
		lfpool_closure_invoke(o.c, &o);
		FZ_CHECK(m->ran == ran + 1, "closure invoke did not call its function");
		/* fall through */
	default:
		if (m->cache && (how & 4))
			lfpool_closure_release_cache(m->cache, o.c);
		else
			lfpool_closure_release(m->cp, o.c);
	}
}

static void cmisuse_release(void *ctx)
{
	struct cm *m = cm_now;
	lfpool_closure_release(m->cp, ctx);
}

static void cmisuse_destroy(void *ctx)
{
	FZ_CHECK(lfpool_closure_pool_destroy(ctx) == -1 && errno == EINVAL,
		 "closure pool destroyed twice without EINVAL");
}

void fz_closure(struct fz *f)
{
	static struct cm m;
	unsigned b0 = fz_byte(f), b1 = fz_byte(f), b2 = fz_byte(f), b3 = fz_byte(f);
	memset(&m, 0, sizeof(m));
	cm_now = &m;
	m.debug = b0 & 0x4;
	m.capture = b1 % 65;
	fz_alloc_init(&m.sa, (b3 & 0xf) ? 0 : 4 + (b3 >> 4));
	lfpool_flavour fl = flavour_of(b0 >> 4);
	m.ts = fl == LFPOOL_FLAVOUR_TS;
	lfpool_config cfg = {
		.obj_size = m.capture, .align = (b1 & 0x80) ? 16 : 0,
		.capacity = (b2 & 1) ? 0 : (b2 >> 1) % 200 + 1, .allocator = &m.sa.a,
		.flags = m.debug ? LFPOOL_F_DEBUG : 0, .magazine_size = b3 % 9,
	};
	cfg.prewarm = cfg.capacity ? b3 % (cfg.capacity + 1) : 0;
	if (b0 & 0x2) {
		lfpool_config bad = cfg;
		bad.align = 32;
		FZ_CHECK(!lfpool_closure_pool_create(fl, &bad) && errno == EINVAL, "closure align 32");
		bad = cfg, bad.init = closure_fn;
		FZ_CHECK(!lfpool_closure_pool_create(fl, &bad) && errno == EINVAL, "closure with hooks");
		FZ_CHECK(!lfpool_closure_pool_create(fl, NULL) && errno == EINVAL, "closure NULL cfg");
		FZ_CHECK(!lfpool_closure_pool_create(0, &cfg) && errno == EINVAL, "closure flavour 0");
		FZ_CHECK(lfpool_closure_pool_destroy(NULL) == 0, "closure destroy(NULL) != 0");
	}
	m.cp = lfpool_closure_pool_create(fl, &cfg);
	if (!m.cp) {
		FZ_CHECK(fz_enomem_ok(&m.sa, errno), "closure create: %s", strerror(errno));
		fz_alloc_check(&m.sa, "closure: failed create");
		return;
	}
	lfpool_ts *ts = lfpool_closure_pool_ts(m.cp);
	FZ_CHECK(m.ts ? ts != NULL : (!ts && errno == EINVAL), "closure_pool_ts of the wrong flavour");
	while (fz_more(f)) {
		unsigned op = fz_byte(f), a = fz_byte(f), b = fz_byte(f);
		switch (op % 6) {
		case 0:
		case 1:
			closure_get(&m, a, b);
			break;
		case 2:
		case 3:
			if (m.nout)
				closure_end(&m, b % m.nout, a);
			else
				lfpool_closure_release(m.cp, NULL);
			break;
		case 4: {
			lfpool_stats st;
			lfpool_closure_pool_stats(m.cp, &st);
			FZ_CHECK(st.live == m.nout, "closure stats: live %llu, model %zu",
				 (unsigned long long)st.live, m.nout);
			if (m.cache) {
				FZ_CHECK(lfpool_closure_pool_destroy(m.cp) == -1 && errno == EBUSY,
					 "closure destroy with a cache: %s", strerror(errno));
			}
			break;
		}
		default:
			if (ts && !m.cache) {
				m.cache = lfpool_ts_cache_create(ts);
				FZ_CHECK(m.cache || fz_enomem_ok(&m.sa, errno), "closure cache: %s",
					 strerror(errno));
			} else if (m.debug && m.nout) {
				lfpool_closure *c = m.out[b % m.nout].c;
				closure_end(&m, b % m.nout, 2);
				fz_expect_report("closure released twice", "double put|more puts",
						 cmisuse_release, c);
			}
		}
	}
	m.sa.fail_one_in = 0;
	while (m.nout)
		closure_end(&m, 0, m.nout);
	lfpool_ts_cache_destroy(m.cache);
	FZ_CHECK(lfpool_closure_pool_destroy(m.cp) == 0, "closure destroy: %s", strerror(errno));
	fz_alloc_check(&m.sa, "closure");
	if (m.debug)
		fz_expect_report("closure pool destroyed twice", "already destroyed", cmisuse_destroy,
				 m.cp);
}
