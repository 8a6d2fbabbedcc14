/* SPDX-License-Identifier: MIT */
/*
 * ops.c - the reference model behind ops.h.  The model tracks every object
 * the pool made (through the init and fini hooks) and whether it is out
 * with the user, and stamps each object at put: the stamp must still be
 * there at the next get, since the pool never writes into an object.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "stress.h"

#define CONFIG_BYTES 6
#define BULK_MAX 8
#define CAP_MAX 48
#define FAIL_ONE_IN 4

enum { POOLED, OUT };

struct entry {
	unsigned char *p;
	int state;
	uint64_t stamp;
};

struct model {
	const struct flavour *fl;
	void *pool, *h;
	size_t cap, size, align;
	bool faults;
	struct entry *e;
	size_t n, max, out;
	uint64_t stamps;
	size_t op;		/* index of the operation running, for messages */
	struct stress_alloc alloc;
	struct ops_result *res;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void fail(struct model *m, const char *fmt, ...)
{
	if (m->failed)
		return;
	m->failed = true;
	int k = snprintf(m->res->msg, sizeof(m->res->msg), "%s, op %zu: ", m->fl->name, m->op);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->res->msg + k, sizeof(m->res->msg) - (size_t)k, fmt, ap);
	va_end(ap);
}

static size_t stamp_bytes(const struct model *m) { return m->size < 8 ? m->size : 8; }

/* Write a fresh stamp into the object (the model keeps a copy). */
static void stamp(struct model *m, struct entry *e)
{
	e->stamp = ++m->stamps;
	memcpy(e->p, &e->stamp, stamp_bytes(m));
}

/* The entry of object p, or NULL. */
static struct entry *find(struct model *m, const void *p)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].p == p)
			return &m->e[i];
	return NULL;
}

/* The k-th entry out with the user. */
static struct entry *nth_out(struct model *m, size_t k)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].state == OUT && k-- == 0)
			return &m->e[i];
	return NULL;
}

/* The pool made obj: a new entry, pooled, stamped. */
static void init_hook(void *obj, void *ctx)
{
	struct model *m = ctx;
	if (find(m, obj)) {
		fail(m, "init on %p, an object that exists", obj);
		return;
	}
	if (m->n == m->max) {
		m->max = m->max ? 2 * m->max : 64;
		m->e = realloc(m->e, m->max * sizeof(*m->e));
		if (!m->e)
			abort();
	}
	m->e[m->n] = (struct entry){ .p = obj, .state = POOLED };
	stamp(m, &m->e[m->n++]);
}

/* The pool destroyed obj: it must be pooled; its entry goes. */
static void fini_hook(void *obj, void *ctx)
{
	struct model *m = ctx;
	struct entry *e = find(m, obj);
	if (!e || e->state == OUT) {
		fail(m, "fini on %p, %s", obj, e ? "an object out with the user" : "never made");
		return;
	}
	*e = m->e[--m->n];
}

/* A get returned p: it must be a pooled object, untouched, aligned, owned. */
static void take(struct model *m, void *p)
{
	struct entry *e = find(m, p);
	if (!e || e->state == OUT) {
		fail(m, "get returned %p, %s", p, e ? "which is already out" : "not an object of the pool");
		return;
	}
	if (memcmp(e->p, &e->stamp, stamp_bytes(m)) != 0)
		fail(m, "object %p changed while pooled", p);
	if ((uintptr_t)p % (m->align ? m->align : 16) != 0)
		fail(m, "object %p not aligned to %zu", p, m->align ? m->align : 16);
	if (!m->fl->owns(m->pool, p))
		fail(m, "owns(%p) is false for an object the pool handed out", p);
	e->state = OUT;
	m->out++;
	m->res->gets++;
}

/* The user puts e: stamp it, mark it pooled. */
static void give(struct model *m, struct entry *e)
{
	stamp(m, e);
	e->state = POOLED;
	m->out--;
	m->res->puts++;
}

/*
 * Was the errno of a failed call right?  Beyond capacity: ENOBUFS, which a
 * single get or a prewarm finds before it allocates anything; a bulk get
 * finds it only at the object too many, so one that allocated on the way
 * may fail with ENOMEM first.  With room: only an injected ENOMEM.
 */
static void check_failure(struct model *m, const char *call, bool room, bool bulk, size_t k)
{
	int err = errno;
	bool injected = m->faults && err == ENOMEM;
	/* Per-CPU mode: objects this thread put on a CPU it has since left sit
	 * in that CPU's area, out of its reach (the documented price), so a get
	 * that needs more objects made than the capacity allows may say
	 * ENOBUFS even below capacity. */
	if (room && m->fl == &flavour_percpu && m->cap && m->n + k > m->cap && err == ENOBUFS)
		return;
	if (room ? !injected : !(err == ENOBUFS || (bulk && injected)))
		fail(m, "%s failed with %s; %zu out, %zu made, capacity %zu", call, strerror(err),
		     m->out, m->n, m->cap);
}

/* get: succeeds while below capacity, else ENOBUFS. */
static void op_get(struct model *m, unsigned arg)
{
	(void)arg;
	bool room = !m->cap || m->out < m->cap;
	size_t made = m->n;
	void *p = m->fl->get(m->h);
	if (p && !room)
		fail(m, "get beyond capacity %zu succeeded", m->cap);
	if (p) {
		take(m, p);
		return;
	}
	check_failure(m, "get", room, false, 1);
	if (m->n != made)
		fail(m, "a failed get changed the objects made: %zu -> %zu", made, m->n);
}

/* get_bulk of arg % 9: all or none. */
static void op_get_bulk(struct model *m, unsigned arg)
{
	size_t k = arg % (BULK_MAX + 1);
	bool room = !m->cap || m->out + k <= m->cap;
	void *objs[BULK_MAX];
	if (m->fl->get_bulk(m->h, objs, k) != 0) {
		check_failure(m, "bulk get", room, true, k);
		return;
	}
	if (!room)
		fail(m, "bulk get of %zu with %zu out beyond capacity %zu succeeded", k, m->out, m->cap);
	for (size_t i = 0; i < k; i++)
		take(m, objs[i]);
}

/* Put the arg-th object out (or NULL, a no-op, when none is). */
static void op_put(struct model *m, unsigned arg)
{
	if (m->out == 0) {
		size_t made = m->n;
		m->fl->put(m->h, NULL);
		if (m->n != made)
			fail(m, "put(NULL) changed the objects made");
		return;
	}
	struct entry *e = nth_out(m, arg % m->out);
	void *p = e->p;
	give(m, e);
	m->fl->put(m->h, p);
}

/* put_bulk of up to arg % 9 objects out. */
static void op_put_bulk(struct model *m, unsigned arg)
{
	void *objs[BULK_MAX];
	size_t k = 0, want = arg % (BULK_MAX + 1);
	for (size_t i = 0; i < m->n && k < want; i++) {
		if (m->e[i].state == OUT) {
			objs[k++] = m->e[i].p;
			give(m, &m->e[i]);
		}
	}
	m->fl->put_bulk(m->h, objs, k);
}

/* prewarm(arg % 9): makes exactly that many, or none. */
static void op_prewarm(struct model *m, unsigned arg)
{
	size_t k = arg % (BULK_MAX + 1), made = m->n;
	bool room = !m->cap || m->n + k <= m->cap;
	if (m->fl->prewarm(m->pool, k) != 0) {
		check_failure(m, "prewarm", room, false, 0);
		if (m->n != made)
			fail(m, "a failed prewarm(%zu) made %zu objects", k, m->n - made);
		return;
	}
	if (!room)
		fail(m, "prewarm(%zu) beyond capacity %zu (%zu made) succeeded", k, m->cap, made);
	if (m->n != made + k)
		fail(m, "prewarm(%zu) made %zu objects", k, m->n - made);
}

/* trim(arg % 9): its count is fini's; it leaves min(keep, pooled) pooled
 * at the least (ThreadStatic: of its depot's, which are some of pooled),
 * exactly that where trim keeps keep. */
static void op_trim(struct model *m, unsigned arg)
{
	size_t keep = arg % (BULK_MAX + 1), made = m->n, pooled = m->n - m->out;
	size_t ret = m->fl->trim(m->pool, keep), beyond = pooled > keep ? pooled - keep : 0;
	if (ret != made - m->n)
		fail(m, "trim returned %zu, fini ran %zu times", ret, made - m->n);
	if (m->fl->trim_keeps ? ret != beyond : ret > beyond)
		fail(m, "trim(%zu) with %zu pooled destroyed %zu", keep, pooled, ret);
}

/* flush the handle's cache (a no-op without caches). */
static void op_flush(struct model *m, unsigned arg)
{
	(void)arg;
	m->fl->flush(m->h);
}

/* stats agree with the model exactly (one thread: quiet). */
static void op_check_stats(struct model *m, unsigned arg)
{
	(void)arg;
	lfpool_stats st;
	m->fl->stats(m->pool, &st);
	if (st.created != m->n || st.live != m->out || st.retained != m->n - m->out)
		fail(m, "stats: created %llu live %llu retained %llu; model: %zu made, %zu out",
		     (unsigned long long)st.created, (unsigned long long)st.live,
		     (unsigned long long)st.retained, m->n, m->out);
	/* --enable-debug builds: one thread runs the sequence, so the pool is
	 * quiet here and every object must be in exactly one place. */
	char why[256];
	if (m->fl->validate && m->fl->validate(m->pool, why, sizeof(why)) != 0)
		fail(m, "validate: %s", why);
}

/* owns: true for every object made, false for interior and foreign ones. */
static void op_owns(struct model *m, unsigned arg)
{
	int local;
	if (m->n) {
		unsigned char *p = m->e[arg % m->n].p;
		if (!m->fl->owns(m->pool, p))
			fail(m, "owns(%p) is false for one of its objects", (void *)p);
		if (m->size > 1 && m->fl->owns(m->pool, p + 1))
			fail(m, "owns(%p) is true for an interior pointer", (void *)(p + 1));
	}
	if (m->fl->owns(m->pool, &local) || m->fl->owns(m->pool, NULL))
		fail(m, "owns is true for a pointer not from the pool");
}

/* Gets and puts come up most often, so that sequences reach deep states. */
static void (*const ops[])(struct model *m, unsigned arg) = {
	op_get, op_get, op_get, op_put, op_put, op_put, op_get_bulk, op_put_bulk,
	op_prewarm, op_trim, op_flush, op_check_stats, op_owns,
};

/* How many flavours all_flavours lists. */
static size_t count_flavours(void)
{
	size_t n = 0;
	while (all_flavours[n])
		n++;
	return n;
}

int ops_flavour_byte(const struct flavour *fl)
{
	for (size_t k = 0; all_flavours[k]; k++)
		if (all_flavours[k] == fl)
			return (int)k;
	return -1;
}

/* Decode the configuration bytes into m and cfg. */
static void configure(struct model *m, lfpool_config *cfg, const uint8_t *b)
{
	static const size_t sizes[] = { 1, 8, 24, 64, 200, 4096, 33, 72 };
	static const size_t aligns[] = { 0, 8, 16, 64, 256 };
	m->fl = all_flavours[b[0] % count_flavours()];
	m->cap = (b[1] & 1) ? 0 : (size_t)(b[1] >> 1) % CAP_MAX + 1;
	m->size = sizes[b[3] % 8];
	m->align = aligns[(b[3] >> 3) % 5];
	m->faults = b[5] & 1;
	stress_alloc_init(&m->alloc);
	*cfg = (lfpool_config){
		.obj_size = m->size, .align = m->align, .capacity = m->cap,
		.prewarm = m->cap ? b[2] % (m->cap + 1) : b[2] % 16,
		.init = init_hook, .fini = fini_hook, .hook_ctx = m, .allocator = &m->alloc.a,
		.name = "ops", .magazine_size = b[4] % 9, .depot_max = (b[4] >> 4) % 5,
	};
}

/* Put everything back, destroy, and check that nothing was left behind. */
static void finish(struct model *m)
{
	while (m->out && !m->failed)
		op_put_bulk(m, BULK_MAX);
	op_check_stats(m, 0);
	/* One cache: this thread's. */
	if (m->cap && m->fl->max_bytes && (uint64_t)m->alloc.peak > m->fl->max_bytes(m->pool, 1))
		fail(m, "backing memory peaked at %lld bytes, above the documented %zu",
		     (long long)m->alloc.peak, m->fl->max_bytes(m->pool, 1));
	m->fl->leave(m->pool, m->h);
	if (m->fl->destroy(m->pool) != 0)
		fail(m, "destroy: %s", strerror(errno));
	if (m->n)
		fail(m, "destroy left %zu objects without fini", m->n);
	if (!stress_alloc_balanced(&m->alloc))
		fail(m, "allocator: %llu allocations, %llu frees, %lld bytes not given back",
		     (unsigned long long)m->alloc.allocs, (unsigned long long)m->alloc.frees,
		     (long long)m->alloc.bytes);
}

/* Create the pool and a handle; false when there is nothing to run. */
static bool start(struct model *m, const lfpool_config *cfg)
{
	m->alloc.fail_one_in = m->faults ? FAIL_ONE_IN : 0;
	m->pool = m->fl->create(cfg);
	if (m->pool && (m->h = m->fl->enter(m->pool)) != NULL) {
		if (m->n != cfg->prewarm)
			fail(m, "create with prewarm %zu made %zu objects", cfg->prewarm, m->n);
		return true;
	}
	int err = errno;
	if (m->pool && m->fl->destroy(m->pool) != 0)
		fail(m, "destroy after a failed enter: %s", strerror(errno));
	if (!m->faults || err != ENOMEM)
		fail(m, "create/enter: %s", strerror(err));
	else if (m->n || !stress_alloc_balanced(&m->alloc))
		fail(m, "a failed create/enter left %zu objects, %lld bytes", m->n,
		     (long long)m->alloc.bytes);
	return false;
}

int ops_run(const uint8_t *data, size_t size, struct ops_result *res)
{
	*res = (struct ops_result){ .ops = 0 };
	if (size < CONFIG_BYTES)
		return 0;
	struct model m = { .res = res };
	lfpool_config cfg;
	configure(&m, &cfg, data);
	if (start(&m, &cfg)) {
		for (size_t i = CONFIG_BYTES; i < size && !m.failed; i += 2, m.op++) {
			unsigned arg = i + 1 < size ? data[i + 1] : 0;
			ops[data[i] % (sizeof(ops) / sizeof(ops[0]))](&m, arg);
			res->ops++;
		}
		if (!m.failed)
			finish(&m);
	}
	free(m.e);
	return m.failed ? -1 : 0;
}
