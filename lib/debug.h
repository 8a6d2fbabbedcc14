/* SPDX-License-Identifier: MIT */
/*
 * debug.h - internal assertions (debug.c owns lfp_assert_fail).
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

/* Print "lfpool: internal error: FILE:LINE: FUNC: COND" and abort. */
void lfp_assert_fail(const char *cond, const char *file, int line, const char *func)
	__attribute__((noreturn, cold));

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
