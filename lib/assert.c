/* SPDX-License-Identifier: MIT */
/*
 * assert.c - what a failed LFP_ASSERT (debug.h) calls.  Alone on the lowest
 * floor, so that every file may assert, the slabs included, while debug.c
 * (the error hook, the graveyard of debug pools) sits above the slabs it
 * keeps.
 */
#include <stdio.h>
#include <stdlib.h>

#include "debug.h"

void lfp_assert_fail(const char *cond, const char *file, int line, const char *func)
{
	fprintf(stderr, "lfpool: internal error: %s:%d: %s: %s\n", file, line, func, cond);
	abort();
}
