/* SPDX-License-Identifier: MIT */
/*
 * debug.c - the library's version, the error hook, and the graveyard of
 * destroyed debug pools (debug.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "debug.h"

/* Which library this is, for reports (lfpool/common.h). */
LFPOOL_API const char *lfpool_version(void)
{
	return LFPOOL_VERSION_STRING;
}

static lfpool_error_fn error_hook;
static void *error_ctx;
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

LFPOOL_API void lfpool_set_error_hook(lfpool_error_fn fn, void *ctx)
{
	pthread_mutex_lock(&hook_lock);
	error_hook = fn;
	error_ctx = ctx;
	pthread_mutex_unlock(&hook_lock);
}

/* The hook, or the default: one line on stderr, then abort when fatal. */
static void report(const char *pool, const void *ptr, const char *problem, bool fatal)
{
	pthread_mutex_lock(&hook_lock);
	lfpool_error_fn fn = error_hook;
	void *ctx = error_ctx;
	pthread_mutex_unlock(&hook_lock);
	if (fn) {
		fn(pool, ptr, problem, ctx);
		return;
	}
	fprintf(stderr, "lfpool: pool '%s': %s (pointer %p)\n", pool, problem, ptr);
	if (fatal)
		abort();
}

void lfp_debug_report(const char *pool, const void *ptr, const char *problem)
{
	report(pool, ptr, problem, true);
}

void lfp_debug_report_leak(const char *pool, const void *ptr, const char *problem)
{
	report(pool, ptr, problem, false);
}

static struct lfp_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* Variable name's value: unset, empty or 0 is false, 1 true; anything else
 * is warned about and false. */
static bool env_flag(const char *name)
{
	const char *v = getenv(name);
	if (!v || !strcmp(v, "") || !strcmp(v, "0"))
		return false;
	if (!strcmp(v, "1"))
		return true;
	fprintf(stderr, "lfpool: %s='%s' is not 0 or 1: ignored\n", name, v);
	return false;
}

static void env_read(void)
{
	env.debug = env_flag("LFPOOL_DEBUG");
	env.show_stats = env_flag("LFPOOL_SHOW_STATS");
}

const struct lfp_env *lfp_env(void)
{
	pthread_once(&env_once, env_read);
	return &env;
}

int lfp_debug_refuse(const char *pool, const char *fmt, ...)
{
	char problem[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(problem, sizeof(problem), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&hook_lock);
	lfpool_error_fn fn = error_hook;
	void *ctx = error_ctx;
	pthread_mutex_unlock(&hook_lock);
	if (fn)
		fn(pool, NULL, problem, ctx);
	else if (lfp_env()->debug)
		fprintf(stderr, "lfpool: pool '%s': %s (create refused: EINVAL)\n", pool, problem);
	return EINVAL;
}

/* LFPOOL_SHOW_STATS's live pools, the latest listed first. */
struct watched {
	struct watched *next;
	const void *pool;
	enum lfp_watch_kind kind;
};
static struct watched *watched;
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;

bool lfp_debug_watch(const void *pool, enum lfp_watch_kind kind)
{
	if (!lfp_env()->show_stats)
		return false;
	struct watched *w = malloc(sizeof(*w));
	if (!w)
		return false;	/* its statistics only are not shown */
	*w = (struct watched){ NULL, pool, kind };
	pthread_mutex_lock(&watch_lock);
	w->next = watched;
	watched = w;
	pthread_mutex_unlock(&watch_lock);
	return true;
}

/* Take pool off the watched list; the entry, or NULL. */
static struct watched *unlist(const void *pool)
{
	struct watched *w = NULL;
	pthread_mutex_lock(&watch_lock);
	for (struct watched **pp = &watched; *pp; pp = &(*pp)->next) {
		if ((*pp)->pool == pool) {
			w = *pp;
			*pp = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&watch_lock);
	return w;
}

/* Take every pool of kind off the watched list; their entries, in the
 * list's order. */
static struct watched *unlist_kind(enum lfp_watch_kind kind)
{
	struct watched *mine = NULL, **tail = &mine;
	pthread_mutex_lock(&watch_lock);
	for (struct watched **pp = &watched; *pp;) {
		struct watched *w = *pp;
		if (w->kind != kind) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		w->next = NULL;
		*tail = w;
		tail = &w->next;
	}
	pthread_mutex_unlock(&watch_lock);
	return mine;
}

void lfp_debug_forget(const void *pool)
{
	if (lfp_env()->show_stats)
		free(unlist(pool));
}

void lfp_debug_unwatch(const void *pool, void (*dump)(const void *pool, FILE *out))
{
	struct watched *w = lfp_env()->show_stats ? unlist(pool) : NULL;
	if (!w)
		return;
	fputs("lfpool: at destroy, ", stderr);
	dump(pool, stderr);
	free(w);
}

/* Dumped without the lock, which a fork takes after the locks the dumps
 * may take. */
void lfp_debug_show_alive(enum lfp_watch_kind kind, void (*dump)(const void *pool, FILE *out))
{
	struct watched *w = unlist_kind(kind);
	while (w) {
		struct watched *next = w->next;
		fputs("lfpool: at exit, ", stderr);
		dump(w->pool, stderr);
		free(w);
		w = next;
	}
}


/* Dead debug pools, freed at exit (so LeakSanitizer sees no leak). */
struct grave {
	struct grave *next;
	void *pool;
	struct lfp_slabs *slabs;	/* kept, else NULL */
	const char *name;
};
static struct grave *graveyard;
static uint64_t grave_bytes;	/* slab bytes kept */
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;

/* Poison (or unpoison) every slab of s (ASan builds; nothing otherwise). */
static void poison_slabs(struct lfp_slabs *s, bool poison)
{
#ifdef LFP_ASAN
	for (uint32_t n = 0; n < s->high_water; n++) {
		if (!lfp_slabs_leaf(s, n >> LFP_LEAF_BITS))
			continue;
		char *mem = lfp_slabs_slot(s, n)->mem;
		if (!mem)
			continue;
		if (poison)
			ASAN_POISON_MEMORY_REGION(mem, lfp_slabs_size(s, n));
		else
			ASAN_UNPOISON_MEMORY_REGION(mem, lfp_slabs_size(s, n));
	}
#else
	(void)s;
	(void)poison;
#endif
}

/* Whether slabs s may be kept until exit (grave_lock held). */
static bool keep_slabs(const struct lfp_slabs *s)
{
	return s->alloc.alloc == lfp_system_allocator.alloc &&
	       grave_bytes + lfp_slabs_bytes(s) <= LFP_GRAVE_BYTES;
}

int lfp_debug_bury(void *pool, struct lfp_slabs *slabs, const char *name)
{
	struct grave *g = malloc(sizeof(*g));
	if (!g)
		return 0;	/* cannot keep it: lose only the after-destroy check */
	pthread_mutex_lock(&grave_lock);
	if (slabs && !keep_slabs(slabs))
		slabs = NULL;
	if (slabs) {
		grave_bytes += lfp_slabs_bytes(slabs);
		poison_slabs(slabs, true);
	}
	*g = (struct grave){ graveyard, pool, slabs, name };
	graveyard = g;
	pthread_mutex_unlock(&grave_lock);
	return slabs ? LFP_BURIED_WITH_SLABS : LFP_BURIED;
}

const char *lfp_debug_grave_name(const void *ptr)
{
	const char *name = NULL;
	uint32_t idx;
	pthread_mutex_lock(&grave_lock);
	for (struct grave *g = graveyard; g && !name; g = g->next)
		if (g->slabs && lfp_slabs_lookup(g->slabs, ptr, &idx) == LFP_LOOKUP_OK)
			name = g->name;
	pthread_mutex_unlock(&grave_lock);
	return name;
}

void lfp_debug_fork_lock(void)
{
	pthread_mutex_lock(&hook_lock);
	pthread_mutex_lock(&grave_lock);
	pthread_mutex_lock(&watch_lock);
}

void lfp_debug_fork_unlock(void)
{
	pthread_mutex_unlock(&watch_lock);
	pthread_mutex_unlock(&grave_lock);
	pthread_mutex_unlock(&hook_lock);
}

__attribute__((destructor)) static void empty_graveyard(void)
{
	pthread_mutex_lock(&grave_lock);
	while (graveyard) {
		struct grave *g = graveyard;
		graveyard = g->next;
		if (g->slabs) {
			poison_slabs(g->slabs, false);
			lfp_slabs_fini(g->slabs);
		}
		free(g->pool);
		free(g);
	}
	pthread_mutex_unlock(&grave_lock);
}
