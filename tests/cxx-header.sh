#!/bin/sh
# SPDX-License-Identifier: MIT
# cxx-header.sh - lfpool.hpp, the C++17 header, with g++ and clang++ under
# -std=c++17 -Wall -Wextra -Wpedantic -Werror: tests/test_hpp.cc and
# examples/cxx.cc built and run against this build's library, each plain
# and under AddressSanitizer.  When the library itself is built with ASan
# (--enable-asan) a plain program cannot link it, and only the build's own
# C++ compiler ($CXX) shares its ASan runtime (clang's static one and
# gcc's shared one refuse each other): then the ASan programs are built
# with $CXX alone; the normal build covers both compilers.  A compiler
# that is missing is a failure, not a skip: make check promises both.
srcdir=${srcdir:-.}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
flags="-std=c++17 -Wall -Wextra -Wpedantic -Werror -g -I$srcdir/include"
libs="-L$PWD/.libs -Wl,-rpath,$PWD/.libs -llfpool -pthread"
asan="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
compilers="g++ clang++"
modes="plain asan"
case " ${SAN_CFLAGS:-} " in
*-fsanitize=address*) modes=asan compilers=${CXX:-g++} ;;
esac
fail=0
for cxx in $compilers; do
	command -v $cxx >/dev/null 2>&1 || { echo "FAIL: $cxx not found"; fail=1; continue; }
	for mode in $modes; do
		extra=
		[ $mode = asan ] && extra=$asan
		for src in tests/test_hpp.cc examples/cxx.cc; do
			name=$(basename "$src" .cc)
			bin=$tmp/$name-$cxx-$mode
			# shellcheck disable=SC2086 # flag lists
			if ! $cxx $flags $extra "$srcdir/$src" -o "$bin" $libs >"$tmp/log" 2>&1; then
				cat "$tmp/log"
				echo "FAIL: $src does not build with $cxx ($mode)"
				fail=1
			elif ! ASAN_OPTIONS=detect_leaks=1 "$bin" >"$tmp/log" 2>&1; then
				cat "$tmp/log"
				echo "FAIL: $src with $cxx ($mode)"
				fail=1
			else
				echo "PASS: $src with $cxx ($mode)"
			fi
		done
	done
done
exit $fail
