/* SPDX-License-Identifier: MIT */
/* Reference-counted frames shared by two owners: the last release puts
 * the frame back into its pool. */
#include <errno.h>
#include <lfpool.h>
#include <stdio.h>
#include <string.h>

struct frame {
	int id;
	char data[1024];
};

int main(void)
{
	lfpool_config cfg = { .obj_size = sizeof(struct frame) };
	lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg);
	if (rc == NULL) {
		fprintf(stderr, "lfpool_rc_create: %s\n", strerror(errno));
		return 1;
	}
	struct frame *f = lfpool_rc_get(rc);	/* count 1 */
	if (f == NULL)
		return 1;
	f->id = 7;
	lfpool_rc_retain(f);			/* a second owner: count 2 */
	printf("frame %d, count %u\n", f->id, (unsigned)lfpool_rc_count(f));
	int last = lfpool_rc_release(f);	/* 0: still held */
	last += lfpool_rc_release(f);		/* 1: back in the pool */
	return last == 1 && lfpool_rc_destroy(rc) == 0 ? 0 : 1;
}
