#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/aarch64.sh - the library and its single-threaded Criterion unit
# tests, cross-built for aarch64 Linux (gcc-aarch64-linux-gnu) and run
# under qemu-aarch64 in user mode.
#
#   tests/aarch64.sh [BUILD_DIR]   build in BUILD_DIR (default _build-aarch64
#                                  in the source tree), run the tests; exit 0
#                                  when they pass, 1 when one fails, 77
#                                  (automake's SKIP) with a message when
#                                  aarch64-linux-gnu-gcc, qemu-aarch64 or the
#                                  sysroot is missing
#   tests/aarch64.sh --sysroot     make the arm64 sysroot (root or sudo: it
#                                  adds dpkg's arm64 architecture, which
#                                  installs nothing); done once, cached
#
# ./run.sh test installs the cross tools, makes the sysroot and runs this.
#
# The sysroot ($LFPOOL_AARCH64_CACHE, default ~/.cache/lfpool-aarch64):
# Debian's libck-dev is not multi-arch, so `apt-get install libck-dev:arm64`
# would remove the amd64 package the host build needs.  Instead the arm64
# packages (libck, liburcu, Criterion and what Criterion links: libgit2,
# nanomsg, ...) are fetched with `apt-get download` and unpacked with
# `dpkg -x`; the C library comes with the cross compiler
# (/usr/aarch64-linux-gnu).
#
# What runs, and why only that: qemu-user 7.2 livelocks on the 128-bit
# LDXP/STXP loops of the shared stacks' CAS (lfpool/impl/tagged_stack.h; also
# ck's own ck_pr_cas_64_2) as soon as two threads run them at once, so only
# programs whose pool calls run on one thread at a time can run here.
# Criterion runs with --jobs 1, and only the suites below: none of them has
# two threads in a pool at once (hostile, threadstatic and trim start one
# more thread while the test's thread waits for it, in a join or a hook).
# The suites that run threads side by side (test_threads, nodeadlock,
# release, threadstatic_threads and the other threadstatic_* suites,
# percpu, array, layers) and the stress programs are not run here: aarch64
# is built and tested single-threaded only, not with threads.  Each
# program gets $LFPOOL_AARCH64_TIMEOUT seconds (default 600): a livelock
# fails instead of hanging.
#
# Criterion starts each test in a worker that re-executes the test
# program; the host kernel cannot execute an aarch64 program without
# binfmt_misc, so tests/qemu_exec.c, preloaded, runs it through qemu.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${LFPOOL_AARCH64_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lfpool-aarch64}
sysroot=$cache/sysroot
triplet=aarch64-linux-gnu
suites="api config debug destroy env errors hooks layout model hostile threadstatic trim"

say() { echo "[aarch64] $*"; }

# The -dev packages, and the run-time libraries under them and theirs
# (the C library and libgcc come with the cross compiler).
sysroot_packages() {
	local dev=(libck-dev:arm64 liburcu-dev:arm64 libcriterion-dev:arm64) libs
	local opts=(--no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances)
	libs=$(apt-cache depends "${opts[@]}" "${dev[@]}" |
		sed -n 's/^  Depends: \([^ <]*:arm64\)$/\1/p' | grep -v -e '-dev:' -e '^pkg-config:')
	printf '%s\n' "${dev[@]}"
	# shellcheck disable=SC2086
	apt-cache depends --recurse "${opts[@]}" $libs | grep -E '^[a-z0-9][^ ]*:arm64$' |
		grep -v -E '^(libc6|libgcc-s1|gcc-[0-9]+-base):arm64$'
}

make_sysroot() {
	[ ! -f "$sysroot/.done" ] || { say "sysroot: $sysroot (cached)"; return 0; }
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		say "dpkg --add-architecture arm64 (for apt-get download; installs nothing)"
		$sudo dpkg --add-architecture arm64
		$sudo apt-get update -qq
	fi
	rm -rf "$cache/debs" "$sysroot"
	mkdir -p "$cache/debs" "$sysroot"
	# shellcheck disable=SC2046
	(cd "$cache/debs" && apt-get download -qq $(sysroot_packages | sort -u)) 2>&1 |
		grep -v 'unsandboxed' || true
	for deb in "$cache/debs"/*.deb; do
		dpkg -x "$deb" "$sysroot"
	done
	touch "$sysroot/.done"
	say "sysroot: $sysroot ($(ls "$cache/debs" | wc -l) packages)"
}

if [ "${1:-}" = --sysroot ]; then
	make_sysroot
	exit 0
fi

build=${1:-$top/_build-aarch64}
for tool in $triplet-gcc qemu-aarch64; do
	command -v "$tool" >/dev/null || { say "SKIP: $tool not found (Debian: gcc-aarch64-linux-gnu, qemu-user)"; exit 77; }
done
[ -f "$sysroot/.done" ] || { say "SKIP: no arm64 sysroot in $sysroot (make it: tests/aarch64.sh --sysroot)"; exit 77; }
[ -x "$top/configure" ] || { say "no configure in $top: run autoreconf -fi there"; exit 1; }

lib=$sysroot/usr/lib/$triplet
log=$build/aarch64-build.log
mkdir -p "$build"
cd "$build"
: >"$log"
if ! grep -qF "$sysroot" Makefile 2>/dev/null; then
	say "configure --host=$triplet (sysroot $sysroot)"
	# Criterion's criterion.pc asks for boxfort, libgit2 and nanomsg .pc
	# files that only their -dev packages have: its flags are given.  All
	# as arguments, which config.status keeps for make's reconfigure.
	"$top/configure" -q --host=$triplet --disable-shared --disable-bench --disable-openmp \
		PKG_CONFIG_LIBDIR="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot" \
		CRITERION_CFLAGS="-I$sysroot/usr/include" CRITERION_LIBS="-L$lib -lcriterion" \
		CPPFLAGS="-I$sysroot/usr/include" \
		LDFLAGS="-L$lib -Wl,-rpath-link,$lib -Wl,-rpath-link,$sysroot/lib/$triplet" \
		>>"$log" 2>&1 || { tail -30 "$log"; say "configure failed (all of it: $log)"; exit 1; }
fi
programs=()
for s in $suites; do programs+=("tests/test_$s"); done
say "building the library and ${#programs[@]} unit test programs"
if ! make -j"${JOBS:-2}" "${programs[@]}" >>"$log" 2>&1 ||
	! $triplet-gcc -O2 -Wall -Werror -shared -fPIC -o tests/qemu_exec.so "$top/tests/qemu_exec.c" >>"$log" 2>&1; then
	tail -30 "$log"
	say "the build failed (all of it: $log)"
	exit 1
fi

# The promise of lfpool/impl/tagged_stack.h on aarch64: every 16-byte CAS of the
# library is inline (ldaxp/stlxp, or ck's ldxp/stxp), none a call to
# libatomic, whose 16-byte operations take a lock in GCC 12's.
calls=$($triplet-nm -A .libs/liblfpool.a | grep -E ' U __atomic_[a-z_]*_16$' || true)
if [ -n "$calls" ]; then
	echo "$calls"
	say "FAIL liblfpool.a calls libatomic's 16-byte atomics (a lock there, not lock-free)"
	echo "0 passed, 1 failed"
	exit 1
fi
say "PASS liblfpool.a: no call to libatomic's 16-byte atomics ($($triplet-objdump -d .libs/liblfpool.a | grep -cE 'ldaxp|ldxp') ldaxp/ldxp)"

export QEMU_LD_PREFIX=/usr/$triplet
export LD_LIBRARY_PATH=$lib:$sysroot/lib/$triplet
LFPOOL_QEMU=$(command -v qemu-aarch64)
export LFPOOL_QEMU
passed=0 failed=0 t0=$SECONDS
for prog in "${programs[@]}"; do
	out=$prog.aarch64.log rc=0
	timeout "${LFPOOL_AARCH64_TIMEOUT:-600}" qemu-aarch64 -E LD_PRELOAD="$build/tests/qemu_exec.so" \
		"$prog" --jobs 1 --color=never >"$out" 2>&1 || rc=$?
	synth=$(sed -n 's/.*\(Synthesis: .*\)/\1/p' "$out" | tail -1)
	read -r p f < <(echo "$synth" | sed -n 's/.*Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' |
		awk '{print $1 + 0, $2 + $3}END{if (NR == 0) print 0, 0}')
	if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ -n "$synth" ]; then
		say "PASS ${prog#tests/}: $synth"
	else
		[ "$rc" -ne 124 ] || say "${prog#tests/} ran past ${LFPOOL_AARCH64_TIMEOUT:-600} s (a livelock of qemu-user?)"
		grep -v '^\[----\]   ' "$out" | tail -20
		say "FAIL ${prog#tests/} (exit $rc)${synth:+: $synth}"
		f=$((f > 0 ? f : 1))
	fi
	passed=$((passed + p)) failed=$((failed + f))
done
say "$passed passed, $failed failed ($((SECONDS - t0)) s under qemu-aarch64)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
