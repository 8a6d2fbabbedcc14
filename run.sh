#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The project's two commands:
#   ./run.sh test    install what is missing, build, unit tests (normal and
#                    ASan, leak-checked), stress suite under TSan and ASan
#   ./run.sh bench   install what is missing, build, benchmark
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
jobs=$(nproc 2>/dev/null || echo 2)

packages=(build-essential autoconf automake libtool pkg-config
	libck-dev liburcu-dev libcriterion-dev
	clang libclang-rt-14-dev llvm valgrind
	gnuplot-nox libmimalloc-dev libjemalloc-dev libgoogle-perftools-dev
	spin libtbb-dev)

install_missing() {
	local missing=()
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	echo "run.sh: installing ${missing[*]}"
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# configure_build DIR [configure args...]: configure (once) and build in DIR.
configure_build() {
	local dir=$1; shift
	[ -x configure ] || autoreconf -fi
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ]; then
		(cd "$dir" && "$top/configure" -q "$@")
	fi
	make -C "$dir" -j"$jobs" >/dev/null
}

# Sum Criterion's "Synthesis" lines of the test logs in DIR.
criterion_counts() {
	cat "$1"/tests/*.log 2>/dev/null | sed -n 's/.*Synthesis: Tested: \([0-9]*\) | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\2 \3 \4/p' |
		awk '{p += $1; f += $2 + $3} END {print p + 0, f + 0}'
}

passed=0
failed=0
tally() { passed=$((passed + $1)); failed=$((failed + $2)); }

# unit_tests DIR LABEL: make check in DIR, print its figures, fail on leaks.
unit_tests() {
	local dir=$1 label=$2 rc=0
	make -C "$dir" -j"$jobs" check >/dev/null 2>&1 || rc=$?
	grep -h 'Synthesis:' "$dir"/tests/*.log 2>/dev/null | sed "s/^/[$label] /" || true
	read -r p f < <(criterion_counts "$dir")
	if [ $rc -ne 0 ]; then
		echo "[$label] make check failed:"
		sed -n '/^FAIL\|^ERROR/p' "$dir"/test-suite.log || true
		cat "$dir"/test-suite.log | tail -40
		f=$((f + 1))
	fi
	if grep -l 'LeakSanitizer' "$dir"/tests/*.log "$dir"/examples/*.log 2>/dev/null; then
		echo "[$label] LeakSanitizer reported leaks in the logs above"
		f=$((f + 1))
	fi
	echo "[$label] $p passed, $f failed"
	tally "$p" "$f"
}

cmd_test() {
	SECONDS=0
	install_missing
	configure_build _build
	unit_tests _build unit
	configure_build _build-asan --enable-asan
	ASAN_OPTIONS=detect_leaks=1 unit_tests _build-asan unit-asan
	if grep -q '^stress-quick:' _build/Makefile 2>/dev/null; then
		local out rc=0
		out=$(make -C _build -s stress-quick 2>&1) || rc=$?
		echo "$out" | grep -Ev '^  (CC|CCLD|CPPAS|CXX|CXXLD) ' || true
		read -r p f < <(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
		[ $rc -eq 0 ] || f=$((f + 1))
		tally "$p" "$f"
	fi
	# --- Spin models of the ThreadStatic protocols (stress/model/, make model) ---
	if grep -q '^model:' _build/Makefile 2>/dev/null; then
		local mout mp mf mrc=0
		mout=$(make -C _build -s model 2>&1) || mrc=$?
		echo "$mout" | sed 's/^/[model] /'
		read -r mp mf < <(echo "$mout" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' | awk '{p = $1; f = $2} END {print p + 0, f + 0}')
		[ $mrc -eq 0 ] || [ "$mf" -gt 0 ] || mf=1
		tally "$mp" "$mf"
	fi
	# --- end of the Spin models ---
	# The job-system example under ThreadSanitizer (ASan ran it in make check).
	local tsan=_build/_build-stress-tsan
	if [ -f "$tsan/Makefile" ]; then
		local rc=0
		make -C "$tsan" -s examples/jobs/jobs >/dev/null 2>&1 &&
			(cd "$tsan" && TSAN_OPTIONS=halt_on_error=1 ./examples/jobs/jobs --items 100000 --depth 12) || rc=$?
		if [ $rc -eq 0 ]; then
			echo "[jobs-tsan] 1 passed, 0 failed"
			tally 1 0
		else
			echo "[jobs-tsan] 0 passed, 1 failed"
			tally 0 1
		fi
	fi
	echo "run.sh test: ${SECONDS} s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

cmd_bench() {
	install_missing
	configure_build _build
	make -C _build bench
	# The job system, lfpool closures against malloc: pattern "jobs".
	local out=bench/results
	[ "${BENCH_QUICK:-0}" = 0 ] || out=_build/bench/results-quick
	make -C _build -s examples/jobs/jobs >/dev/null
	./_build/examples/jobs/jobs --jsonl "$out/latest.jsonl"
}

case "${1:-}" in
test) cmd_test ;;
bench) cmd_bench ;;
*) echo "usage: $0 test|bench" >&2; exit 2 ;;
esac
