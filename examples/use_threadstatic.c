/* SPDX-License-Identifier: MIT */
/* use_threadstatic.c - ThreadStatic: per-thread magazines; an object got
 * on one thread may be put on another. */
#include <pthread.h>
#include <lfpool.h>

static void *consumer(void *arg)
{
	void **msg = arg;
	lfpool_ts_put(msg[0], msg[1]);	/* into this thread's own cache */
	return NULL;
}

int main(void)
{
	lfpool_config cfg = { .obj_size = 256 };
	lfpool_ts *pool = lfpool_ts_create(&cfg);
	if (!pool)
		return 1;
	void *msg[2] = { pool, lfpool_ts_get(pool) };	/* this thread's cache */
	if (!msg[1])
		return 1;	/* ENOMEM */
	pthread_t t;
	pthread_create(&t, NULL, consumer, msg);
	pthread_join(t, NULL);
	return lfpool_ts_destroy(pool) == 0 ? 0 : 1;	/* -1 + EBUSY while explicit caches exist */
}
