/* SPDX-License-Identifier: MIT */
/*
 * debug.c - the error hook, the graveyard of destroyed debug pools, and
 * the failure of an internal assertion (debug.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "debug.h"

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

void lfp_report(const char *pool, const void *ptr, const char *problem)
{
	report(pool, ptr, problem, true);
}

void lfp_report_leak(const char *pool, const void *ptr, const char *problem)
{
	report(pool, ptr, problem, false);
}

void lfp_assert_fail(const char *cond, const char *file, int line, const char *func)
{
	fprintf(stderr, "lfpool: internal error: %s:%d: %s: %s\n", file, line, func, cond);
	abort();
}

/* Dead debug pools, freed at exit (so LeakSanitizer sees no leak). */
struct grave {
	struct grave *next;
	void *pool;
};
static struct grave *graveyard;
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;

void lfp_debug_bury(void *pool)
{
	struct grave *g = malloc(sizeof(*g));
	if (!g) {
		free(pool);	/* cannot keep it: lose only the after-destroy check */
		return;
	}
	g->pool = pool;
	pthread_mutex_lock(&grave_lock);
	g->next = graveyard;
	graveyard = g;
	pthread_mutex_unlock(&grave_lock);
}

__attribute__((destructor)) static void empty_graveyard(void)
{
	pthread_mutex_lock(&grave_lock);
	while (graveyard) {
		struct grave *g = graveyard;
		graveyard = g->next;
		free(g->pool);
		free(g);
	}
	pthread_mutex_unlock(&grave_lock);
}
