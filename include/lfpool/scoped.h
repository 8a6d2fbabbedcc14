/* SPDX-License-Identifier: MIT */
/*
 * lfpool/scoped.h - scoped gets: an object that goes back to its pool when
 * the variable goes out of scope (C's form of C#'s `using`).
 *
 *     LFPOOL_SCOPED(lfpool_pool, struct msg, m, pool);
 *     if (!m)
 *             return -1;             // nothing to put back
 *     if (parse(m) != 0)
 *             return -1;             // m goes back to pool here
 *     return send(LFPOOL_DISOWN(m)); // kept: send owns it now
 *
 * The first argument names the kind of pool: lfpool_pool, lfpool_concurrent,
 * lfpool_ts, lfpool_array (then pass the size after the pool), lfpool_rc
 * (the scope holds one reference and releases it), or a typed pool declared
 * with LFPOOL_TYPED.  The object is put back (or released) at any exit from
 * the enclosing block: its end, return, break, continue, goto; not by
 * longjmp, nor by a thread that is cancelled.  The variable is a const
 * pointer (NULL when the get failed), so it cannot be pointed elsewhere by
 * mistake.  Uses GCC's cleanup attribute (GCC and Clang, C and C++).
 */
#ifndef LFPOOL_SCOPED_H
#define LFPOOL_SCOPED_H

#include "lfpool/array.h"
#include "lfpool/concurrent.h"
#include "lfpool/pool.h"
#include "lfpool/rc.h"
#include "lfpool/ts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a scope puts back when it ends: obj (NULL once disowned) to pool. */
struct lfpool_scope {
	void *pool;
	void *obj;
};

/* T *const var = an object from the pool; put back when the scope ends. */
#define LFPOOL_SCOPED(kind, T, var, ...)						\
	struct lfpool_scope var##_lfpool_scope						\
		__attribute__((cleanup(kind##_scope_end))) = kind##_scope_begin(__VA_ARGS__); \
	T *const var = (T *)var##_lfpool_scope.obj

/* Keep var's object past the scope: evaluates to the object, which the
 * scope will no longer put back. */
#define LFPOOL_DISOWN(var) (var##_lfpool_scope.obj = NULL, var)

/* The functions the macros define: a program uses only some of them. */
#define LFPOOL_MACRO_FN_ static inline __attribute__((unused))

/* Define kind_scope_begin(P *pool) and kind_scope_end for a pool type P
 * whose calls are kind_get(pool) and kind_put(pool, (T *)obj).  Ends with a
 * declaration, so a use takes a semicolon like any declaration: a typedef
 * (kind_lfpool_scope_), which names the global struct lfpool_scope also in
 * a C++ namespace (a bare "struct lfpool_scope;" there would declare a new,
 * incomplete app::lfpool_scope, and the next use would not compile). */
#define LFPOOL_DEFINE_SCOPE(kind, P, T)							\
	LFPOOL_MACRO_FN_ struct lfpool_scope kind##_scope_begin(P *pool)		\
	{										\
		struct lfpool_scope s = { pool, kind##_get(pool) };			\
		return s;								\
	}										\
	LFPOOL_MACRO_FN_ void kind##_scope_end(struct lfpool_scope *s)			\
	{										\
		kind##_put((P *)s->pool, (T *)s->obj);					\
	}										\
	typedef struct lfpool_scope kind##_lfpool_scope_

LFPOOL_DEFINE_SCOPE(lfpool_pool, lfpool_pool, void);
LFPOOL_DEFINE_SCOPE(lfpool_concurrent, lfpool_concurrent, void);
LFPOOL_DEFINE_SCOPE(lfpool_ts, lfpool_ts, void);

/* LFPOOL_SCOPED(lfpool_array, T, var, ap, n)'s get: a buffer of n bytes
 * from ap (NULL with errno as lfpool_array_get), put back by
 * lfpool_array_scope_end when the scope ends. */
static inline struct lfpool_scope lfpool_array_scope_begin(lfpool_array *ap, size_t n)
{
	struct lfpool_scope s = { ap, lfpool_array_get(ap, n, NULL) };
	return s;
}

/* Put the scope's buffer back, unless LFPOOL_DISOWN took it (NULL). */
static inline void lfpool_array_scope_end(struct lfpool_scope *s)
{
	lfpool_array_put((lfpool_array *)s->pool, s->obj);
}

/* LFPOOL_SCOPED(lfpool_rc, T, var, rc)'s get: a counted object with a
 * count of 1, released by lfpool_rc_scope_end when the scope ends. */
static inline struct lfpool_scope lfpool_rc_scope_begin(lfpool_rc *rc)
{
	struct lfpool_scope s = { rc, lfpool_rc_get(rc) };
	return s;
}

/* Release the scope's reference, unless LFPOOL_DISOWN took it (NULL). */
static inline void lfpool_rc_scope_end(struct lfpool_scope *s)
{
	lfpool_rc_release(s->obj);
}

#ifdef __cplusplus
}
#endif
#endif
