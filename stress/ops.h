/* SPDX-License-Identifier: MIT */
/*
 * ops.h - random operation sequences checked against a reference model
 * (scenario 10): the libFuzzer target and the stress driver run the same
 * code, the one on inputs libFuzzer evolves, the other on seeded random
 * bytes.
 */
#ifndef STRESS_OPS_H
#define STRESS_OPS_H

#include <stddef.h>
#include <stdint.h>

struct flavour;

struct ops_result {
	uint64_t gets, puts, ops;
	char msg[512];		/* what went wrong, when ops_run returns -1 */
};

/*
 * Run the sequence in data[0..size) on a fresh pool and check every result
 * against the model: which objects are out, how many exist, capacity,
 * errno, trim counts, that pooled objects are never written, owns, stats,
 * and that destroy finalizes everything and frees all memory.  Bytes 0-5
 * pick the flavour, capacity, prewarm, object
 * size and alignment, magazine size and depot bound, and whether the
 * backing allocator fails now and then; the rest are operations.
 * 0 when the pool behaved, else -1 with res->msg.
 */
int ops_run(const uint8_t *data, size_t size, struct ops_result *res);
/* The byte 0 that picks fl, or -1 when fl is not in all_flavours. */
int ops_flavour_byte(const struct flavour *fl);

#endif
