/* SPDX-License-Identifier: MIT */
/* use_pool.c - Pool: one thread, no atomics; get and put are inline. */
#include <stdio.h>
#include <lfpool.h>

struct node { struct node *next; int key; };

int main(void)
{
	lfpool_config cfg = { .obj_size = sizeof(struct node), .prewarm = 64 };
	lfpool_pool *pool = lfpool_pool_create(&cfg);
	if (!pool) {
		perror("lfpool_pool_create");	/* EINVAL, ENOMEM */
		return 1;
	}
	struct node *n = lfpool_pool_get(pool);	/* NULL + errno when it fails */
	n->key = 42;
	lfpool_pool_put(pool, n);
	lfpool_pool_destroy(pool);
	return 0;
}
