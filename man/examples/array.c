/* SPDX-License-Identifier: MIT */
/* An array pool of byte buffers: get by size, put with or without it,
 * statistics of one class, trim, destroy. */
#include <errno.h>
#include <lfpool.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	lfpool_array_config cfg = { .min_size = 64, .max_size = 64 * 1024 };
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_TS, &cfg);
	if (ap == NULL) {
		fprintf(stderr, "lfpool_array_create: %s\n", strerror(errno));
		return 1;
	}
	size_t real;
	char *line = lfpool_array_get(ap, 100, &real);	/* the 128-byte class */
	if (line == NULL)
		return 1;
	snprintf(line, real, "%zu usable bytes", real);
	puts(line);
	lfpool_array_put(ap, line);			/* the prefix names the class */
	char *msg = lfpool_array_get(ap, 512, NULL);
	if (msg == NULL)
		return 1;
	lfpool_array_put_sized(ap, msg, 512);		/* no prefix read */
	char *big = lfpool_array_get(ap, 1 << 20, NULL);	/* above max_size */
	lfpool_array_put(ap, big);			/* freed, never pooled */
	lfpool_stats st;
	if (lfpool_array_stats(ap, 128, &st) == 0)
		printf("128-byte class: %llu created\n", (unsigned long long)st.created);
	lfpool_array_trim(ap, 0);
	return lfpool_array_destroy(ap) == 0 ? 0 : 1;
}
