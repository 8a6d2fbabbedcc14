#!/bin/sh
# SPDX-License-Identifier: MIT
# memcheck.sh - a user's program under Valgrind's memcheck against the
# normal library build (tests/memcheck_prog.c): for every flavour, a write
# and a read after put must be reported as an access to a freed block, a
# read of a pooled object no get handed out as an invalid read, and an
# object still out at destroy as definitely lost; the negative control,
# the same program without the bug, must run clean.
#   make check: against this build directory's library
#   LFPOOL_CFLAGS, LFPOOL_LIBS: against another
srcdir=${srcdir:-.}
CC=${CC:-cc}
case " ${SAN_CFLAGS:-} " in
*-fsanitize=*)
	echo "SKIP: this library is built with a sanitizer, which Valgrind cannot run"
	exit 77 ;;
esac
if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind is not installed (Debian: valgrind; ./run.sh installs it)"
	exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
if [ -z "${LFPOOL_LIBS:-}" ]; then
	LFPOOL_CFLAGS="-I$srcdir/include"
	LFPOOL_LIBS="-L$PWD/.libs -Wl,-rpath,$PWD/.libs -llfpool"
fi
# shellcheck disable=SC2086 # flag lists
if ! $CC -g -O1 -Wall -Wextra $LFPOOL_CFLAGS "$srcdir/tests/memcheck_prog.c" -o "$tmp/prog" \
	$LFPOOL_LIBS -lpthread; then
	echo "FAIL: tests/memcheck_prog.c does not build"
	exit 1
fi

fail=0
# run FLAVOUR BUG STATUS PATTERN...: memcheck_prog under memcheck must exit
# with STATUS (0 clean, 9 memcheck's errors) and print every PATTERN.
run() {
	flavour=$1 bug=$2 want=$3
	shift 3
	log=$tmp/$flavour-$bug.log
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
		"$tmp/prog" "$flavour" "$bug" >"$log" 2>&1
	rc=$?
	ok=1
	[ "$rc" = "$want" ] || ok=0
	for pattern in "$@"; do
		grep -q -- "$pattern" "$log" || ok=0
	done
	if [ $ok = 0 ]; then
		echo "FAIL: $flavour $bug: exit $rc (want $want), expected: $*"
		cat "$log"
		fail=1
	else
		echo "ok: $flavour $bug"
	fi
}

for f in pool concurrent ts ts-cache percpu array-pool array-concurrent array-ts; do
	run "$f" none 0
	run "$f" write-after-put 9 "Invalid write of size 1" "inside a block of size .* free'd" \
		"Block was alloc'd at"
	run "$f" read-after-put 9 "Invalid read of size 1" "inside a block of size .* free'd"
	run "$f" leak 9 "are definitely lost"
	case $f in
	array-*) ;;	# an array pool has no owns, which finds the neighbour
	*) run "$f" never-got 9 "Invalid read of size 1" ;;
	esac
done
exit $fail
