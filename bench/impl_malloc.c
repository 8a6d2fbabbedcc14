/* SPDX-License-Identifier: MIT */
/*
 * impl_malloc.c - the general-purpose allocators: glibc, mimalloc, jemalloc
 * and tcmalloc, each through its own API.
 *
 * The three peers are opened with dlopen (RTLD_LOCAL | RTLD_DEEPBIND), not
 * linked: each exports malloc too, and linking one would replace glibc's
 * malloc in the whole process.  Opened this way they all live in one process
 * with glibc's malloc untouched, and a missing peer makes that peer "not
 * available" instead of breaking the build.  A call through the looked-up
 * pointer costs what a call through the PLT costs.
 */
#include <stdlib.h>

#include "bench.h"

/* What a thread passes to get: the size to allocate. */
struct sized {
	size_t size;
};

#define SIZE(h) (((const struct sized *)(h))->size)

static void *sized_open(size_t obj_size)
{
	struct sized *s = malloc(sizeof(*s));
	if (!s)
		bench_die("out of memory");
	s->size = obj_size;
	return s;
}

/* A peer library and its allocate and free entry points. */
struct peer {
	const char *lib;
	const char *names[2];
	void *fns[2];		/* filled by peer_open */
};

static void *peer_open(struct peer *p, size_t obj_size, const char **why)
{
	if (peer_load(p->lib, p->names, p->fns, 2, why) != 0)
		return NULL;
	return sized_open(obj_size);
}

typedef void *(*alloc_fn)(size_t);
typedef void (*free_fn)(void *);

/* glibc: the process's own malloc. */
static void *glibc_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)prewarm;
	(void)why;
	return sized_open(obj_size);
}

static inline void *glibc_get(void *h) { return malloc(SIZE(h)); }
static inline void glibc_put(void *h, void *obj) { (void)h; free(obj); }

#define IMPL glibc
#include "loops.h"

static struct peer mi = { "libmimalloc.so.2", { "mi_malloc", "mi_free" }, { 0 } };

static void *mi_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)prewarm;
	return peer_open(&mi, obj_size, why);
}

static inline void *mi_get(void *h) { return ((alloc_fn)mi.fns[0])(SIZE(h)); }
static inline void mi_put(void *h, void *obj) { (void)h; ((free_fn)mi.fns[1])(obj); }

#define IMPL mi
#include "loops.h"

/* jemalloc's own API; flags 0: the default arena and the thread cache. */
static struct peer je = { "libjemalloc.so.2", { "mallocx", "dallocx" }, { 0 } };
typedef void *(*mallocx_fn)(size_t, int);
typedef void (*dallocx_fn)(void *, int);

static void *je_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)prewarm;
	return peer_open(&je, obj_size, why);
}

static inline void *je_get(void *h) { return ((mallocx_fn)je.fns[0])(SIZE(h), 0); }
static inline void je_put(void *h, void *obj) { (void)h; ((dallocx_fn)je.fns[1])(obj, 0); }

#define IMPL je
#include "loops.h"

/* gperftools' tcmalloc, the minimal build (no heap profiler). */
static struct peer tc = { "libtcmalloc_minimal.so.4", { "tc_malloc", "tc_free" }, { 0 } };

static void *tc_open(size_t obj_size, unsigned prewarm, const char **why)
{
	(void)prewarm;
	return peer_open(&tc, obj_size, why);
}

static inline void *tc_get(void *h) { return ((alloc_fn)tc.fns[0])(SIZE(h)); }
static inline void tc_put(void *h, void *obj) { (void)h; ((free_fn)tc.fns[1])(obj); }

#define IMPL tc
#include "loops.h"

#define MALLOC_IMPL(label, prefix) {					\
	.name = label,							\
	.open = prefix##_open, .close = free,				\
	.attach = attach_shared, .detach = detach_nothing,		\
	.loops = &prefix##_loops,					\
}

const struct impl impl_glibc = MALLOC_IMPL("glibc", glibc);
const struct impl impl_mimalloc = MALLOC_IMPL("mimalloc", mi);
const struct impl impl_jemalloc = MALLOC_IMPL("jemalloc", je);
const struct impl impl_tcmalloc = MALLOC_IMPL("tcmalloc", tc);
