/* SPDX-License-Identifier: MIT */
/* use_concurrent.c - Concurrent: one lock-free stack, any threads. */
#include <pthread.h>
#include <lfpool.h>

static void *worker(void *pool)
{
	for (int i = 0; i < 100000; i++) {
		int *obj = lfpool_concurrent_get(pool);	/* from any thread */
		if (!obj)
			return NULL;	/* ENOBUFS at capacity, ENOMEM */
		*obj = i;
		lfpool_concurrent_put(pool, obj);	/* from any thread */
	}
	return NULL;
}

int main(void)
{
	lfpool_config cfg = { .obj_size = 64, .capacity = 1024 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&cfg);
	if (!pool)
		return 1;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, pool);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	lfpool_concurrent_destroy(pool);
	return 0;
}
