/* SPDX-License-Identifier: MIT */
/*
 * examples/array.c - byte buffers of any size from an array pool: the
 * README's example, run by make check.
 */
#include <stdio.h>
#include <string.h>

#include <lfpool.h>

int main(void)
{
	lfpool_array_config cfg = {
		.min_size = 64,				/* classes 64 B .. 64 KiB */
		.max_size = 64 * 1024,
		.flags = LFPOOL_ARRAY_F_CLEAR,		/* zeroed on put */
	};
	/* The flavour comes first, as for every layer: any thread gets and puts. */
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg);
	if (!ap)
		return 1;

	size_t real;
	char *line = lfpool_array_get(ap, 100, &real);	/* from the 128 B class */
	if (!line)
		return 1;
	snprintf(line, real, "asked for 100 bytes, got %zu", real);
	puts(line);
	lfpool_array_put(ap, line);		/* no size: the prefix names the class */

	/* A size known at compile time picks its class at compile time; the
	 * sized put skips reading the prefix. */
	char *msg = lfpool_array_get(ap, 512, NULL);
	if (!msg)
		return 1;
	memset(msg, 'x', 512);
	lfpool_array_put_sized(ap, msg, 512);

	/* Above the largest class: straight from the allocator, freed on put. */
	char *big = lfpool_array_get(ap, 1 << 20, &real);
	if (!big)
		return 1;
	lfpool_array_put(ap, big);

	lfpool_stats st;
	uint64_t over_gets, over_out;
	lfpool_array_stats(ap, 0, &st);
	lfpool_array_oversize_stats(ap, &over_gets, &over_out);
	printf("pooled buffers: %llu created, %llu in the pool; oversize: %llu got, %llu out\n",
	       (unsigned long long)st.created, (unsigned long long)st.retained,
	       (unsigned long long)over_gets, (unsigned long long)over_out);
	lfpool_array_destroy(ap);
	return st.created == 2 && st.retained == 2 && over_gets == 1 && over_out == 0 ? 0 : 1;
}
