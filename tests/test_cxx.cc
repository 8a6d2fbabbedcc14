// SPDX-License-Identifier: MIT
// test_cxx.cc - the public header from C++: it must compile warning-free
// (extern "C", no C-only constructs), Pool's inline get/put must work, and
// so must ThreadStatic's inline get/put in functions that two files of one
// program both compile (cxx_inline.hpp), per-thread and per-CPU pools, and
// typed pools and scoped gets declared inside a namespace.
#include <lfpool.h>

#include "cxx_inline.hpp"

#include "build.h"	/* REMAKES: debug builds poison pooled objects */

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			return 1; \
		} \
	} while (0)

enum { INLINE_THREADS = 4, INLINE_ROUNDS = 200000 };

// Threads run cxx_inline.cc's copy of the wrappers, this thread this
// file's; every object comes back.  0, or the line of the failed check.
static int inline_in_two_files(unsigned flags)
{
	lfpool_config cfg = lfpool_config();
	cfg.obj_size = 64;
	cfg.flags = flags;
	lfpool_ts *pool = lfpool_ts_create(&cfg);
	if (pool == nullptr)
		return __LINE__;
	std::vector<long> failed(INLINE_THREADS, -1);
	std::vector<std::thread> threads;
	for (int t = 0; t < INLINE_THREADS; t++)
		threads.emplace_back([pool, &failed, t] {
			failed[t] = cxx_inline_rounds(pool, INLINE_ROUNDS);
		});
	long mine = 0;
	for (long i = 0; i < INLINE_ROUNDS; i++) {
		long *a = cxx_typed<long>::get(pool);
		void *b = cxx_get(pool);
		mine += (a == nullptr) + (b == nullptr);
		cxx_typed<long>::put(pool, a);
		cxx_put(pool, b);
	}
	for (std::thread &th : threads)
		th.join();
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	int line = 0;
	for (long f : failed)
		if (f != 0 && !line)
			line = __LINE__;
	if (mine != 0 && !line)
		line = __LINE__;
	if (st.live != 0 && !line)
		line = __LINE__;
	if ((flags & LFPOOL_F_PERCPU) && st.percpu_mode == nullptr && !line)
		line = __LINE__;
	if (lfpool_ts_destroy(pool) != 0 && !line)
		line = __LINE__;
	return line;
}

// Typed pools and scoped gets inside a namespace: LFPOOL_TYPED's
// declarations must name the global struct lfpool_scope there, not
// declare an incomplete app::lfpool_scope (the second one did not compile).
namespace app {
struct msg {
	int a;
};
struct ack {
	long b;
};
LFPOOL_TYPED(msg_pool, msg, concurrent);
LFPOOL_TYPED(ack_pool, ack, pool);

// A scoped get from each pool; both objects go back at the block's end.
// 0, or the line of the failed check.
static int scoped_round_trip(msg_pool *mp, ack_pool *kp)
{
	{
		LFPOOL_SCOPED(msg_pool, msg, m, mp);
		LFPOOL_SCOPED(ack_pool, ack, k, kp);
		if (m == nullptr || k == nullptr)
			return __LINE__;
		m->a = 1;
		k->b = 2;
	}
	lfpool_stats st;
	lfpool_concurrent_stats(msg_pool_pool(mp), &st);
	if (st.created != 1 || st.live != 0)
		return __LINE__;
	lfpool_pool_stats(ack_pool_pool(kp), &st);
	if (st.created != 1 || st.live != 0)
		return __LINE__;
	return 0;
}
} // namespace app

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

	app::msg_pool *mp = app::msg_pool_create(nullptr);
	app::ack_pool *kp = app::ack_pool_create(nullptr);
	CHECK(mp != nullptr && kp != nullptr);
	int scoped_line = app::scoped_round_trip(mp, kp);
	if (scoped_line) {
		std::fprintf(stderr, "%s:%d: scoped gets in a namespace\n", __FILE__, scoped_line);
		return 1;
	}
	CHECK(app::msg_pool_destroy(mp) == 0 && app::ack_pool_destroy(kp) == 0);

	for (unsigned flags : { 0u, unsigned(LFPOOL_F_PERCPU) }) {
		int line = inline_in_two_files(flags);
		if (line) {
			std::fprintf(stderr, "%s:%d: inline get/put in two files, flags %u\n",
				     __FILE__, line, flags);
			return 1;
		}
	}
	return 0;
}
