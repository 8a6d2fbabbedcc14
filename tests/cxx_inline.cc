// SPDX-License-Identifier: MIT
// cxx_inline.cc - the second file that uses cxx_inline.hpp's wrappers.
#include "cxx_inline.hpp"

long cxx_inline_rounds(lfpool_ts *pool, long rounds)
{
	long failed = 0;
	for (long i = 0; i < rounds; i++) {
		void *a = cxx_get(pool);
		long *b = cxx_typed<long>::get(pool);
		failed += (a == nullptr) + (b == nullptr);
		cxx_put(pool, a);
		cxx_typed<long>::put(pool, b);
	}
	return failed;
}
