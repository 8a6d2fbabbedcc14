// SPDX-License-Identifier: MIT
// test_cxx.cc - the public header from C++: it must compile warning-free
// (extern "C", no C-only constructs) and Pool's inline get/put must work.
#include <lfpool.h>

#include "build.h"	/* REMAKES: debug builds poison pooled objects */

#include <cstdio>
#include <cstring>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			return 1; \
		} \
	} while (0)

struct Job {
	int id;
	char note[28];
};

int main()
{
	CHECK(std::strcmp(lfpool_version(), LFPOOL_VERSION_STRING) == 0);

	lfpool_config cfg = lfpool_config();
	cfg.obj_size = sizeof(Job);
	cfg.align = alignof(Job);
	cfg.prewarm = 2;
	lfpool_pool *pool = lfpool_pool_create(&cfg);
	CHECK(pool != nullptr);
	Job *a = static_cast<Job *>(lfpool_pool_get(pool));
	Job *b = static_cast<Job *>(lfpool_pool_get(pool));
	CHECK(a && b && a != b);
	a->id = 7;
	lfpool_pool_put(pool, a);
	CHECK(lfpool_pool_get(pool) == a);
	/* The pool never writes into an object; but in debug builds without
	 * ASan it writes a pattern over pooled ones (README, "Debug checks"). */
	CHECK(REMAKES ? a->id != 7 : a->id == 7);
	lfpool_pool_put(pool, a);
	lfpool_pool_put(pool, b);
	lfpool_stats st;
	lfpool_pool_stats(pool, &st);
	CHECK(st.created == 2 && st.retained == 2);
	lfpool_pool_destroy(pool);

	lfpool_concurrent *shared = lfpool_concurrent_create(&cfg);
	CHECK(shared != nullptr);
	void *objs[3];
	CHECK(lfpool_concurrent_get_bulk(shared, objs, 3) == 0);
	lfpool_concurrent_put_bulk(shared, objs, 3);
	lfpool_concurrent_destroy(shared);
	return 0;
}
