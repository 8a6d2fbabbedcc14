/* SPDX-License-Identifier: MIT */
/* A ThreadStatic pool: each thread gets and puts through its own cache;
 * objects got on one thread are put on another; drain and trim give the
 * memory back when the program idles. */
#include <errno.h>
#include <lfpool.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { N = 1000 };
static void *handed[N];

static void *consumer(void *arg)
{
	lfpool_ts *pool = arg;
	for (int i = 0; i < N; i++)
		lfpool_ts_put(pool, handed[i]);	/* into this thread's cache */
	return NULL;
}

int main(void)
{
	lfpool_config cfg = { .obj_size = 256, .name = "messages" };
	lfpool_ts *pool = lfpool_ts_create(&cfg);
	if (pool == NULL) {
		fprintf(stderr, "lfpool_ts_create: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < N; i++)
		if ((handed[i] = lfpool_ts_get(pool)) == NULL)
			return 1;
	pthread_t t;
	pthread_create(&t, NULL, consumer, pool);
	pthread_join(t, NULL);
	/* Idle: move what the caches hold to the depot, then give it back. */
	size_t moved = lfpool_ts_drain(pool);
	size_t freed = lfpool_ts_trim(pool, 0);
	printf("drained %zu, trim destroyed %zu\n", moved, freed);
	lfpool_stats st;
	lfpool_ts_stats(pool, &st);
	printf("%llu objects alive, %llu bytes held\n", (unsigned long long)st.created,
	       (unsigned long long)st.bytes_held);
	return lfpool_ts_destroy(pool) == 0 ? 0 : 1;
}
