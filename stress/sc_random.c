/* SPDX-License-Identifier: MIT */
/*
 * sc_random.c - scenario 10 in the stress driver: seeded random operation
 * sequences through the reference model of ops.c, the same code the
 * libFuzzer target (stress/fuzz/) runs.  A failing sequence is written to a file
 * that the fuzz target replays.
 */
#include <stdio.h>

#include "ops.h"
#include "stress.h"

#define SEQ_MAX 1024

/* Save a failing input for `lfpool-fuzz FILE`; the file's name. */
static const char *save_input(const struct run *r, const uint8_t *buf, size_t len)
{
	static char name[128];
	snprintf(name, sizeof(name), "stress-random-%s.crash", r->fl->name);
	FILE *f = fopen(name, "wb");
	if (!f)
		return "(not saved)";
	fwrite(buf, 1, len, f);
	fclose(f);
	return name;
}

/* Random sequences on the run's flavour until the time is up. */
static void random_sequences(struct run *r)
{
	int pick = ops_flavour_byte(r->fl);
	uint8_t buf[SEQ_MAX];
	do {
		size_t len = 6 + rng_below(&r->rng, SEQ_MAX - 6);
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rng_next(&r->rng);
		buf[0] = (uint8_t)pick;
		struct ops_result res;
		if (ops_run(buf, len, &res) != 0)
			run_fail(r, "%s (input saved as %s)", res.msg, save_input(r, buf, len));
		r->t.gets += res.gets;
		r->t.puts += res.puts;
		r->t.rounds++;
	} while (!run_over(r));
}

const struct scenario sc_random = { "random", false, true, 1, random_sequences };
