/* SPDX-License-Identifier: MIT */
/* A Concurrent pool shared by four threads: get and put on any thread,
 * bulk calls, trim while idle, destroy once every thread has joined. */
#include <errno.h>
#include <lfpool.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *work(void *arg)
{
	lfpool_concurrent *pool = arg;
	void *batch[8];
	for (int i = 0; i < 10000; i++) {
		char *buf = lfpool_concurrent_get(pool);
		if (buf == NULL)
			return (void *)1;
		memset(buf, i, 128);
		lfpool_concurrent_put(pool, buf);
	}
	if (lfpool_concurrent_get_bulk(pool, batch, 8) != 0)	/* all or none */
		return (void *)1;
	lfpool_concurrent_put_bulk(pool, batch, 8);
	return NULL;
}

int main(void)
{
	lfpool_config cfg = { .obj_size = 128, .capacity = 64 };
	lfpool_concurrent *pool = lfpool_concurrent_create(&cfg);
	if (pool == NULL) {
		fprintf(stderr, "lfpool_concurrent_create: %s\n", strerror(errno));
		return 1;
	}
	pthread_t t[4];
	void *failed = NULL, *rc;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, pool);
	for (int i = 0; i < 4; i++)
		if (pthread_join(t[i], &rc) == 0 && rc != NULL)
			failed = rc;
	printf("trim destroyed %zu objects\n", lfpool_concurrent_trim(pool, 0));
	if (lfpool_concurrent_destroy(pool) != 0 || failed)
		return 1;
	return 0;
}
