/* SPDX-License-Identifier: MIT */
/*
 * debug.h - the error hook's reports, the graveyard of destroyed debug
 * pools, and internal assertions; debug.c owns every declaration here but
 * the assertions, which are inline, so that every file may assert, the
 * slabs below debug.c included.
 *
 * LFP_ASSERT(cond) states an invariant of the library's own code, not a
 * check of the caller's input (misuse goes to the error hook, core.h).  In
 * --enable-debug builds (LFPOOL_DEBUG) a false cond aborts with the file,
 * line and condition; otherwise it compiles to nothing and cond is not
 * evaluated, so it may be as costly as it likes, as mimalloc's
 * mi_assert_internal.
 */
#ifndef LFP_DEBUG_H
#define LFP_DEBUG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Report a misuse through the error hook (the default aborts). */
void lfp_debug_report(const char *pool, const void *ptr, const char *problem);
/* Report objects left out at destroy through the error hook; the default
 * prints the line and returns (no object has been misused yet). */
void lfp_debug_report_leak(const char *pool, const void *ptr, const char *problem);

/*
 * The environment (lfpool/common.h, "Environment"), read once, at the
 * first call: LFPOOL_DEBUG=1 makes every pool created after it a debug
 * pool (core.h, lfp_debug_wanted), LFPOOL_SHOW_STATS=1 prints each
 * watched pool's state at its destroy and at exit (lfp_debug_watch).  A
 * value other than 0 or 1 gets a one-line warning on stderr and counts as
 * 0.  Create paths only: never read on a get or put.
 */
struct lfp_env {
	bool debug, show_stats;
};
const struct lfp_env *lfp_env(void);

/*
 * A create refused with EINVAL: tell the error hook why (problem: printf's
 * fmt, naming the field and its value), or with no hook installed print
 * it on stderr under LFPOOL_DEBUG=1 only; returns EINVAL.
 */
int lfp_debug_refuse(const char *pool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), cold));

/*
 * LFPOOL_SHOW_STATS: the live pools whose state goes to stderr at their
 * destroy and at exit.  This file keeps the list, by kind of pool; the
 * files of the kinds print, and this one calls none of them (they lie
 * above it): each passes its dump down for the length of one call.
 *  - lfp_debug_watch at create: true when the pool is listed (the
 *    variable is set; else a no-op);
 *  - lfp_debug_unwatch at destroy: dump(pool) if it was listed;
 *  - lfp_debug_show_alive(kind, dump) at exit: dump every pool of kind
 *    still listed, from the handler that the kind's file installs with
 *    atexit itself (LFP_DEBUG_WATCHER), at its first listed pool.
 */
enum lfp_watch_kind { LFP_WATCH_POOL, LFP_WATCH_CONCURRENT, LFP_WATCH_TS, LFP_WATCH_ARRAY };
bool lfp_debug_watch(const void *pool, enum lfp_watch_kind kind);
void lfp_debug_unwatch(const void *pool, void (*dump)(const void *pool, FILE *out));
void lfp_debug_show_alive(enum lfp_watch_kind kind, void (*dump)(const void *pool, FILE *out));
/* Unwatch pool without printing (a layer's inner pool: the layer's dump
 * shows it). */
void lfp_debug_forget(const void *pool);

/*
 * A kind's side, once in its file after its static void show(const void
 * *pool, FILE *out): defines static void watch(const void *pool), which
 * lists pool and, at the file's first listed pool, installs the handler
 * that shows the kind's pools at exit.
 */
#define LFP_DEBUG_WATCHER(kind) \
	static void show_alive(void) \
	{ \
		lfp_debug_show_alive((kind), show); \
	} \
	static void show_at_exit(void) \
	{ \
		atexit(show_alive); \
	} \
	static void watch(const void *pool) \
	{ \
		static pthread_once_t once = PTHREAD_ONCE_INIT; \
		if (lfp_debug_watch(pool, (kind))) \
			pthread_once(&once, show_at_exit); \
	}

struct lfp_slabs;
/*
 * Debug pools are not freed at destroy but kept, marked dead, until exit,
 * so that a call after destroy is reported instead of touching freed
 * memory.  Given slabs (the pool's, else NULL), they may be kept too
 * (poisoned under ASan), so that an object used after destroy can still be
 * read and named: slabs of the system allocator, up to LFP_GRAVE_BYTES in
 * all; the caller frees any others (a custom allocator's context may not
 * live until exit).  Returns LFP_BURIED_WITH_SLABS, LFP_BURIED (pool kept,
 * slabs not), or 0 (out of memory: nothing kept, the caller frees pool).
 */
enum { LFP_BURIED = 1, LFP_BURIED_WITH_SLABS = 2 };
int lfp_debug_bury(void *pool, struct lfp_slabs *slabs, const char *name);
#define LFP_GRAVE_BYTES ((uint64_t)64 << 20)
/* The name of the destroyed debug pool whose kept slabs hold ptr, or NULL. */
const char *lfp_debug_grave_name(const void *ptr);
/* debug.c's locks, for fork.c. */
void lfp_debug_fork_lock(void);
void lfp_debug_fork_unlock(void);

/* Print "lfpool: internal error: FILE:LINE: FUNC: COND" and abort. */
__attribute__((noreturn, cold)) static inline void lfp_assert_fail(const char *cond,
								  const char *file, int line,
								  const char *func)
{
	fprintf(stderr, "lfpool: internal error: %s:%d: %s: %s\n", file, line, func, cond);
	abort();
}

#ifdef LFPOOL_DEBUG
# define LFP_ASSERT(cond) \
	(__builtin_expect(!!(cond), 1) ? (void)0 \
				       : lfp_assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
/* sizeof: cond is type-checked, never evaluated, and its variables count
 * as used. */
# define LFP_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif
