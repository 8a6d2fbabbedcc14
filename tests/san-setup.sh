# SPDX-License-Identifier: MIT
# san-setup.sh - what tests/tsan-handover.sh and tests/asan-user.sh do
# first, sourced with san (thread or address: the user program's
# sanitizer) and other (the one that cannot be linked with it) set: skip
# (77) when this build's library is built with other's flags or $CC
# cannot build with san's; a temporary directory
# $tmp, removed at exit; LFPOOL_CFLAGS and LFPOOL_LIBS for this build
# directory's library unless the caller gave them (tests/install-check.sh
# passes what pkg-config says of the installed one).
srcdir=${srcdir:-.}
CC=${CC:-cc}
case " ${SAN_CFLAGS:-} " in
*-fsanitize=$other*)
	echo "SKIP: this library is built with -fsanitize=$other, which cannot be linked" \
		"into a program built with -fsanitize=$san"
	exit 77 ;;
esac
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if ! $CC -fsanitize="$san" "$tmp/probe.c" -o "$tmp/probe" 2>"$tmp/probe.err"; then
	cat "$tmp/probe.err"
	echo "SKIP: $CC cannot build with -fsanitize=$san (Debian: gcc's runtimes are in libgcc-12-dev)"
	exit 77
fi
if [ -z "${LFPOOL_LIBS:-}" ]; then
	LFPOOL_CFLAGS="-I$srcdir/include"
	LFPOOL_LIBS="-L$PWD/.libs -Wl,-rpath,$PWD/.libs -llfpool"
fi
