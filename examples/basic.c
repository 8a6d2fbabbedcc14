/* SPDX-License-Identifier: MIT */
/* basic.c - a pool of packet buffers: init sets each one up once, get and
 * put recycle them, and the statistics show that nothing more was made. */
#include <stdio.h>
#include <lfpool.h>

struct packet {
	unsigned char *payload;	/* points into buf: set once, by init */
	size_t len;
	unsigned char buf[1514];
};

static void packet_init(void *obj, void *ctx)
{
	struct packet *p = obj;
	(void)ctx;
	p->payload = p->buf + 14;	/* past the Ethernet header */
	p->len = 0;
}

int main(void)
{
	lfpool_config cfg = { .obj_size = sizeof(struct packet), .align = 64,
			      .capacity = 4096, .prewarm = 256, .init = packet_init,
			      .name = "packets" };
	lfpool_concurrent *pool = lfpool_concurrent_create(&cfg);
	if (!pool) {
		perror("lfpool_concurrent_create");
		return 1;
	}
	for (int i = 0; i < 1000; i++) {
		struct packet *p = lfpool_concurrent_get(pool);	/* from any thread */
		if (!p)
			break;	/* errno: ENOBUFS at capacity, ENOMEM */
		p->len = (size_t)snprintf((char *)p->payload, 64, "packet %d", i);
		lfpool_concurrent_put(pool, p);	/* from any thread, not only p's */
	}
	lfpool_stats st;
	lfpool_concurrent_stats(pool, &st);
	printf("%llu packets made for 1000 uses\n", (unsigned long long)st.created);
	lfpool_concurrent_destroy(pool);
	return st.created == 256 ? 0 : 1;
}
