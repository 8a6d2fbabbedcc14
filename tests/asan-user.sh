#!/bin/sh
# SPDX-License-Identifier: MIT
# asan-user.sh - a user's program under AddressSanitizer against the
# normal library build (tests/asan_user.c): used correctly, every kind of
# pool must give no ASan report; each mistake (a read after put, a write
# into an array buffer's slack or an object's padding) must give one, in
# the program's own code.  The negative control, the same program built
# with -DLFPOOL_NO_ASAN_ANNOTATIONS, must run every mistake clean, or the
# test would not show that the headers' annotations find them.
#   make check: against this build directory's library
#   LFPOOL_CFLAGS, LFPOOL_LIBS: against another (tests/install-check.sh
#   passes what pkg-config says of the installed one)
san=address other=thread
# shellcheck source=tests/san-setup.sh
. "${srcdir:-.}/tests/san-setup.sh"
# Leaks: the mistakes end their programs with pools alive (last: the
# later of two settings counts).
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
# The library's own ASan build poisons and checks objects itself (its debug
# checks, rc counts); this test is of a user's ASan program against the
# normal library, which the normal build's make check runs.
case " ${SAN_CFLAGS:-} " in
*-fsanitize=address*)
	echo "SKIP: the library is ASan-built; asan-user.sh runs in the normal build"
	exit 77 ;;
esac

# build NAME [CFLAGS...]: the program, as $tmp/NAME; a build that fails
# ends the test.
build() {
	name=$1
	shift
	# shellcheck disable=SC2086 # flag lists
	if ! $CC -fsanitize=address -g -O1 -Wall -Wextra -Werror "$@" $LFPOOL_CFLAGS \
		"$srcdir/tests/asan_user.c" -o "$tmp/$name" $LFPOOL_LIBS -pthread; then
		echo "FAIL: the $name program does not build"
		exit 1
	fi
}

# run NAME SCENARIO [ENV...]: run it; its output in $tmp/out, and whether
# ASan reported anything: 0 (clean run), 1 (a report in asan_user.c, the
# program's own code), 2 (anything else: a report elsewhere, a crash).
run() {
	name=$1
	scenario=$2
	shift 2
	env "$@" "$tmp/$name" "$scenario" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q 'AddressSanitizer' "$tmp/out"; then
		return 0
	fi
	if grep -q '^SUMMARY: AddressSanitizer: use-after-poison .*asan_user\.c' "$tmp/out"; then
		return 1
	fi
	return 2
}

status=0
build annotated
build control -DLFPOOL_NO_ASAN_ANNOTATIONS
scenarios=$("$tmp/annotated" --list)
# The per-CPU pool again on its fallback path (no rseq: sched_getcpu and a
# lock, through the library), as every scenario under TSan.
for scenario in $scenarios ts-percpu:norseq; do
	envs=
	case $scenario in
	*:norseq) scenario=${scenario%:norseq} envs=GLIBC_TUNABLES=glibc.pthread.rseq=0 ;;
	esac
	what="$scenario${envs:+ ($envs)}"
	# shellcheck disable=SC2086 # an optional assignment
	run annotated "$scenario" $envs
	got=$?
	want=1
	[ "$scenario" = clean ] && want=0
	if [ $got -ne $want ]; then
		sed -n '1,40p' "$tmp/out"
		echo "FAIL: $what: $([ $want -eq 0 ] && echo 'an ASan report in a correct program' ||
			echo 'the mistake is not reported as a use-after-poison in the program')"
		status=1
		continue
	fi
	# A library built with ASan poisons its debug pools' objects itself.
	case "$scenario: ${SAN_CFLAGS:-}" in
	*-debug:*-fsanitize=address*)
		echo "ok: $what: reported (the library's own poison: no negative control)"
		continue ;;
	esac
	# shellcheck disable=SC2086
	run control "$scenario" $envs
	got=$?
	if [ $got -ne 0 ]; then
		sed -n '1,40p' "$tmp/out"
		echo "FAIL: $what: without the annotations (the negative control) ASan reports it:" \
			"this test cannot tell that they find it"
		status=1
		continue
	fi
	echo "ok: $what: $([ $want -eq 0 ] && echo 'clean' || echo 'reported; unseen without the annotations')"
done
[ $status -eq 0 ] && echo "PASS: every mistake reported by ASan, a correct program clean"
exit $status
