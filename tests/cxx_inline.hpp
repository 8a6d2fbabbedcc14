// SPDX-License-Identifier: MIT
// cxx_inline.hpp - lfpool_ts_get and lfpool_ts_put inside functions that C++
// compiles into a COMDAT group in every file that uses them (an inline
// function, a member of a class template), used from two files
// (test_cxx.cc, cxx_inline.cc).  The linker keeps one copy of each, and
// the inline restartable sequences' descriptors and out-of-line stubs must
// go with it: before they joined the group, this program did not link
// ("defined in discarded section").
#ifndef CXX_INLINE_HPP
#define CXX_INLINE_HPP

#include <lfpool.h>

inline void *cxx_get(lfpool_ts *pool)
{
	return lfpool_ts_get(pool);
}

inline void cxx_put(lfpool_ts *pool, void *obj)
{
	lfpool_ts_put(pool, obj);
}

template <typename T> struct cxx_typed {
	static T *get(lfpool_ts *pool) { return static_cast<T *>(lfpool_ts_get(pool)); }
	static void put(lfpool_ts *pool, T *obj) { lfpool_ts_put(pool, obj); }
};

// rounds times: a get through each wrapper, then both objects put back
// (cxx_inline.cc); the number of gets that returned NULL.
long cxx_inline_rounds(lfpool_ts *pool, long rounds);

#endif
