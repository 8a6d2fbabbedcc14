/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ops.c - the libFuzzer target (scenario 10): every input is an
 * operation sequence for ops_run (stress/ops.h), which checks each result
 * against the reference model; a mismatch aborts with the model's message.
 * Built with clang -fsanitize=fuzzer,address,undefined by `make fuzz`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ops_result res;
	if (ops_run(data, size, &res) != 0) {
		fprintf(stderr, "lfpool-fuzz: %s\n", res.msg);
		abort();
	}
	return 0;
}
