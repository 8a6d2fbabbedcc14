#!/bin/sh
# SPDX-License-Identifier: MIT
# tsan-handover.sh - a user's program under ThreadSanitizer against the
# normal library build (tests/tsan_handover.c): objects recycled between
# threads must give no TSan report.  The negative control, the same program
# built with -DLFPOOL_NO_TSAN_ANNOTATIONS, must give at least one, or the
# test could not fail.
#   make check: against this build directory's library
#   LFPOOL_CFLAGS, LFPOOL_LIBS: against another (tests/install-check.sh
#   passes what pkg-config says of the installed one)
srcdir=${srcdir:-.}
CC=${CC:-cc}
case " ${SAN_CFLAGS:-} " in
*-fsanitize=address*)
	echo "SKIP: this library is built with ASan, which cannot be linked into a TSan program"
	exit 77 ;;
esac
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if ! $CC -fsanitize=thread "$tmp/probe.c" -o "$tmp/probe" 2>"$tmp/probe.err"; then
	cat "$tmp/probe.err"
	echo "SKIP: $CC cannot build with -fsanitize=thread (Debian: gcc's libtsan is in libgcc-12-dev)"
	exit 77
fi
if [ -z "${LFPOOL_LIBS:-}" ]; then
	LFPOOL_CFLAGS="-I$srcdir/include"
	LFPOOL_LIBS="-L$PWD/.libs -Wl,-rpath,$PWD/.libs -llfpool"
fi

# build_run NAME [CFLAGS...]: build the program and run it; its output in
# $tmp/NAME.out, its exit status in $tmp/NAME.rc, the number of TSan
# reports in $tmp/NAME.reports.  Run in this shell, not in a command
# substitution, so that a program that does not build ends the test (a
# subshell's exit left the counts empty, and the test passed).
build_run() {
	name=$1
	shift
	# shellcheck disable=SC2086 # flag lists
	if ! $CC -fsanitize=thread -g -O1 -Wall -Wextra "$@" $LFPOOL_CFLAGS \
		"$srcdir/tests/tsan_handover.c" -o "$tmp/$name" $LFPOOL_LIBS -pthread; then
		echo "FAIL: the $name program does not build"
		exit 1
	fi
	TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}" "$tmp/$name" >"$tmp/$name.out" 2>&1
	echo $? >"$tmp/$name.rc"
	grep -c 'WARNING: ThreadSanitizer' "$tmp/$name.out" >"$tmp/$name.reports"
}

build_run annotated
clean=$(cat "$tmp/annotated.reports")
rc=$(cat "$tmp/annotated.rc")
if [ "$clean" -ne 0 ] || [ "$rc" -ne 0 ]; then
	sed -n '1,80p' "$tmp/annotated.out"
	echo "FAIL: $clean TSan reports (exit $rc) in a program that recycles objects between threads"
	exit 1
fi
grep '^tsan_handover:' "$tmp/annotated.out"
build_run control -DLFPOOL_NO_TSAN_ANNOTATIONS
control=$(cat "$tmp/control.reports")
# TSan runs a 16-byte atomic as a plain read and write under its own lock:
# inlined into a user's program it would tear the Concurrent head that the
# uninstrumented library changes with lock cmpxchg16b (lfpool/concurrent.h,
# LFPOOL_CONC_INLINE_).  Neither build may contain one.
for name in annotated control; do
	if nm "$tmp/$name" | grep -E '__tsan_atomic128|__atomic_[a-z_]*_16'; then
		echo "FAIL: the $name program has a 16-byte TSan atomic: an inline path of the headers is not atomic against the library"
		exit 1
	fi
done
if [ "$control" -eq 0 ]; then
	cat "$tmp/control.out"
	echo "FAIL: the negative control (no annotations) gave no TSan report: this test could not fail"
	exit 1
fi
echo "PASS: no TSan report with the headers' annotations; $control without them (the negative control)"
