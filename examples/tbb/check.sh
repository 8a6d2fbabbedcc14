#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the oneTBB example briefly, on 2 threads; skipped (exit 77)
# when configure found no tbb.pc.
if ! test -x examples/tbb/tbb; then
	echo "examples/tbb: skipped: configure found no oneTBB (tbb.pc, libtbbmalloc; Debian: libtbb-dev)"
	exit 77
fi
exec ./examples/tbb/tbb --threads 2 --depth 12 --items 20000 --reps 1
