#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the OpenMP example briefly, on 2 threads; skipped (exit 77)
# when configure found no OpenMP support.
if ! test -x examples/openmp/omp; then
	echo "examples/openmp: skipped: configure found no OpenMP support in the C compiler"
	exit 77
fi
exec ./examples/openmp/omp --threads 2 --depth 12 --items 20000 --reps 1
