/* SPDX-License-Identifier: MIT */
/*
 * lfpool/typed.h - typed pools: one macro declares a pool of a type with
 * typed calls, so callers never cast.
 *
 *     LFPOOL_TYPED(msg_pool, struct msg, concurrent);
 *
 *     msg_pool *mp = msg_pool_create(NULL);   // or a config: obj_size 0
 *     struct msg *m = msg_pool_get(mp);
 *     msg_pool_put(mp, m);
 *     LFPOOL_SCOPED(msg_pool, struct msg, s, mp);   // scoped gets work too
 *     msg_pool_destroy(mp);
 *
 * LFPOOL_TYPED(name, T, flavour) declares, for flavour pool, concurrent or
 * ts (the lfpool_<flavour>_* calls it wraps):
 *   name                      an opaque pool type
 *   name *name_create(const lfpool_config *cfg)
 *                             cfg may be NULL; obj_size must be 0 or
 *                             sizeof(T) (else NULL, errno EINVAL); align 0
 *                             means __alignof__(T)
 *   T *name_get(name *p)      void name_put(name *p, T *obj)
 *   int name_destroy(name *p)   0, or -1 with errno as the flavour's
 *   lfpool_<flavour> *name_pool(name *p)   the untyped pool, for the rest
 *                             of the flavour's API (stats, trim, caches,
 *                             and lfpool_ts_destroy's EBUSY)
 */
#ifndef LFPOOL_TYPED_H
#define LFPOOL_TYPED_H

#include <errno.h>
#include <string.h>

#include "lfpool/scoped.h"

#define LFPOOL_TYPED(name, T, flavour)							\
	typedef struct name name;							\
	LFPOOL_MACRO_FN_ lfpool_##flavour *name##_pool(name *p)				\
	{										\
		return (lfpool_##flavour *)p;						\
	}										\
	LFPOOL_MACRO_FN_ name *name##_create(const lfpool_config *cfg)			\
	{										\
		lfpool_config c;							\
		if (cfg)								\
			c = *cfg;							\
		else									\
			memset(&c, 0, sizeof(c));					\
		if (c.obj_size != 0 && c.obj_size != sizeof(T)) {			\
			errno = EINVAL;							\
			return NULL;							\
		}									\
		c.obj_size = sizeof(T);							\
		if (c.align == 0)							\
			c.align = __alignof__(T);						\
		return (name *)lfpool_##flavour##_create(&c);				\
	}										\
	LFPOOL_MACRO_FN_ T *name##_get(name *p)						\
	{										\
		return (T *)lfpool_##flavour##_get(name##_pool(p));			\
	}										\
	LFPOOL_MACRO_FN_ void name##_put(name *p, T *obj)					\
	{										\
		lfpool_##flavour##_put(name##_pool(p), obj);				\
	}										\
	LFPOOL_MACRO_FN_ int name##_destroy(name *p)					\
	{										\
		return lfpool_##flavour##_destroy(name##_pool(p));			\
	}										\
	LFPOOL_DEFINE_SCOPE(name, name, T)

#endif
