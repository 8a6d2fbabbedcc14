/* SPDX-License-Identifier: MIT */
/* A Pool of points on one thread: create, get, put, trim, destroy. */
#include <errno.h>
#include <lfpool.h>
#include <stdio.h>
#include <string.h>

struct point {
	double x, y;
};

int main(void)
{
	lfpool_config cfg = { .obj_size = sizeof(struct point), .capacity = 1000,
			      .prewarm = 16, .name = "points" };
	lfpool_pool *pool = lfpool_pool_create(&cfg);
	if (pool == NULL) {
		fprintf(stderr, "lfpool_pool_create: %s\n", strerror(errno));
		return 1;
	}
	struct point *p[100];
	for (int i = 0; i < 100; i++) {
		p[i] = lfpool_pool_get(pool);
		if (p[i] == NULL) {	/* ENOBUFS at capacity, or ENOMEM */
			fprintf(stderr, "lfpool_pool_get: %s\n", strerror(errno));
			return 1;
		}
		p[i]->x = i;
		p[i]->y = -i;
	}
	for (int i = 0; i < 100; i++)
		lfpool_pool_put(pool, p[i]);
	/* Idle now: keep 10 objects, give the rest and their memory back. */
	size_t freed = lfpool_pool_trim(pool, 10);
	printf("trim destroyed %zu objects\n", freed);
	return lfpool_pool_destroy(pool) == 0 ? 0 : 1;
}
