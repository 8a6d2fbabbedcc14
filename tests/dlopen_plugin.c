/* SPDX-License-Identifier: MIT */
/*
 * dlopen_plugin.c - a plugin as a host loads it late: a shared object that
 * includes lfpool.h and runs its inline paths (the implicit caches, the
 * per-CPU sequences, the array pool's table), linked to liblfpool, which
 * the host's dlopen() of it loads.  tests/dlopen_host.c drives it.
 */
#include <stdint.h>
#include <string.h>
#include "lfpool.h"

#define PLUGIN_BATCH 16

/* One thread's work: rounds of PLUGIN_BATCH gets and puts on each pool,
 * each object written with a tag and read back before its put.  0, or the
 * number of the first check that failed. */
__attribute__((visibility("default")))
int plugin_run(lfpool_ts *ts, lfpool_ts *percpu, lfpool_array *arr, unsigned tag, int rounds)
{
	void *o[PLUGIN_BATCH];
	for (int r = 0; r < rounds; r++) {
		lfpool_ts *pools[2] = { ts, percpu };
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < PLUGIN_BATCH; i++) {
				if (!(o[i] = lfpool_ts_get(pools[k])))
					return 1 + k;
				memset(o[i], (int)(tag & 0xff), 64);
			}
			for (int i = 0; i < PLUGIN_BATCH; i++) {
				if (((unsigned char *)o[i])[63] != (tag & 0xff))
					return 3;
				lfpool_ts_put(pools[k], o[i]);
			}
		}
		for (int i = 0; i < PLUGIN_BATCH; i++) {
			size_t n = (size_t)16 << (i % 6), real = 0;
			if (!(o[i] = lfpool_array_get(arr, n, &real)) || real < n)
				return 4;
			memset(o[i], (int)(tag & 0xff), n);
		}
		for (int i = 0; i < PLUGIN_BATCH; i++)
			lfpool_array_put(arr, o[i]);
	}
	return 0;
}
