#!/bin/sh
# SPDX-License-Identifier: MIT
# tsan-handover.sh - a user's program under ThreadSanitizer against the
# normal library build (tests/tsan_handover.c): objects recycled between
# threads must give no TSan report.  The negative control, the same program
# built with -DLFPOOL_NO_TSAN_ANNOTATIONS, must give at least one, or the
# test could not fail.  Then a put is a write of the object, as free() is
# (tests/tsan_put_race.c): a write on one thread that nothing orders before
# a put on another must be reported, for every kind of pool, and the same
# with the pointer handed over by release and acquire must be clean.
#   make check: against this build directory's library
#   LFPOOL_CFLAGS, LFPOOL_LIBS: against another (tests/install-check.sh
#   passes what pkg-config says of the installed one)
san=thread other=address
# shellcheck source=tests/san-setup.sh
. "${srcdir:-.}/tests/san-setup.sh"

# build NAME SOURCE [CFLAGS...]: build tests/SOURCE.c as $tmp/NAME; a
# program that does not build ends the test.
build() {
	name=$1
	source=$2
	shift 2
	# shellcheck disable=SC2086 # flag lists
	if ! $CC -fsanitize=thread -g -O1 -Wall -Wextra "$@" $LFPOOL_CFLAGS \
		"$srcdir/tests/$source.c" -o "$tmp/$name" $LFPOOL_LIBS -pthread; then
		echo "FAIL: the $name program does not build"
		exit 1
	fi
}

# run NAME [ARGS...]: run $tmp/NAME; its output in $tmp/NAME.out, its exit
# status in $tmp/NAME.rc, the number of TSan reports in $tmp/NAME.reports.
# Run in this shell, not in a command substitution, so that a failure ends
# the test (a subshell's exit left the counts empty, and the test passed).
run() {
	name=$1
	shift
	TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}" "$tmp/$name" "$@" \
		>"$tmp/$name.out" 2>&1
	echo $? >"$tmp/$name.rc"
	grep -c 'WARNING: ThreadSanitizer' "$tmp/$name.out" >"$tmp/$name.reports"
}

build_run() {	# NAME [CFLAGS...]: tests/tsan_handover.c
	name=$1
	shift
	build "$name" tsan_handover "$@"
	run "$name"
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
echo "ok: no TSan report with the headers' annotations;" \
	"$control without them (the negative control)"

build put_race tsan_put_race
for kind in pool concurrent ts ts-cache percpu array rc closure; do
	for order in race synced; do
		run put_race $kind $order
		reports=$(cat "$tmp/put_race.reports")
		rc=$(cat "$tmp/put_race.rc")
		if [ $order = race ] && { [ "$reports" -eq 0 ] || [ "$rc" -ne 66 ]; }; then
			cat "$tmp/put_race.out"
			echo "FAIL: $kind: a write racing with a put on another thread" \
				"is not reported (exit $rc)"
			exit 1
		fi
		if [ $order = synced ] && { [ "$reports" -ne 0 ] || [ "$rc" -ne 0 ]; }; then
			sed -n '1,60p' "$tmp/put_race.out"
			echo "FAIL: $kind: $reports TSan reports (exit $rc)" \
				"with the put ordered after the write"
			exit 1
		fi
	done
	echo "ok: $kind: a write racing with a put is reported, an ordered one is not"
done
echo "PASS: the hand-over clean ($control reports without the annotations);" \
	"races with puts reported"
