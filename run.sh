#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The project's two commands:
#   ./run.sh test    install what is missing, build, unit tests (normal and
#                    ASan, leak-checked), stress suite under TSan and ASan,
#                    the Criterion suites again in an --enable-debug build,
#                    the single-threaded unit tests cross-built for aarch64
#                    under qemu-aarch64 (tests/aarch64.sh)
#   ./run.sh bench [--update-results]
#                    install what is missing, build, benchmark; results in
#                    _build/bench/results, or with --update-results in the
#                    committed bench/results
# Both print each result as it comes and never stay silent for more than
# $heartbeat seconds (a "still running" line while a step says nothing).
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
jobs=$(nproc 2>/dev/null || echo 2)

packages=(build-essential autoconf automake libtool pkg-config
	libck-dev liburcu-dev libcriterion-dev
	clang libclang-rt-14-dev llvm valgrind
	gnuplot-nox libmimalloc-dev libjemalloc-dev libgoogle-perftools-dev
	spin libtbb-dev
	cmake man-db
	gcc-aarch64-linux-gnu qemu-user)

install_missing() {
	local missing=()
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	echo "run.sh: installing ${missing[*]}"
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	talk apt-get verbatim $sudo apt-get update -qq
	talk apt-get verbatim $sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq "${missing[@]}"
}

# ---- Output that keeps talking ---------------------------------------------
heartbeat=20

# talk LABEL FILTER CMD...: run CMD, its stdout and stderr through FILTER
# (a command that passes on, line by line, what is worth showing), and
# print "[LABEL] still running (N s)" whenever nothing was shown for
# $heartbeat seconds.  Returns CMD's status.
talk() {
	local label=$1 filter=$2 line rc=0 t0=$SECONDS
	shift 2
	while :; do
		if IFS= read -r -t "$heartbeat" line; then
			case $line in
			__talk_rc=*) rc=${line#__talk_rc=} ;;
			*) printf '%s\n' "$line" ;;
			esac
		elif [ $? -gt 128 ]; then
			echo "[$label] still running ($((SECONDS - t0)) s)"
		else
			[ -z "$line" ] || printf '%s\n' "$line"
			break
		fi
	done < <(set +e; "$@" 2>&1 | $filter; echo "__talk_rc=${PIPESTATUS[0]}")
	return "$rc"
}

# Filters for talk: nothing (a build's own lines are noise: kept in
# $quiet_log, shown when the step fails), everything, and the stress
# suite's lines less its compiler lines, kept in $stress_out.
quiet() { cat >"${quiet_log:-/dev/null}"; }
verbatim() { cat; }
stress_lines() { grep --line-buffered -Ev '^  (CC|CCLD|CPPAS|CXX|CXXLD) ' | tee "$stress_out"; }
# tests/aarch64.sh's lines, kept in $aarch64_out.
aarch64_lines() { tee "$aarch64_out"; }
# make model's lines, kept in $model_out, shown as "[model] ...".
model_lines() { tee "$model_out" | sed -u 's/^/[model] /'; }

# ---- Build directories ---------------------------------------------------------
# An in-tree ./configure leaves config.status here, and then configure
# refuses every build directory ("source directory already configured").
# make distclean undoes it (objects, Makefiles, config.status); say how to
# configure in place again.
unconfigure_in_tree() {
	[ -f config.status ] || return 0
	local args
	args=$(./config.status --config 2>/dev/null || true)
	echo "run.sh: the sources are configured in place (./configure $args), which stops the"
	echo "run.sh:   build directories' configure; running make distclean here (afterwards, to"
	echo "run.sh:   build in place again: ./configure $args && make)"
	[ ! -f Makefile ] || make -s distclean >/dev/null 2>&1 || true
	if [ -f config.status ]; then
		echo "run.sh: make distclean left config.status: remove config.status, config.log" \
		     "and Makefile here, then run me again" >&2
		exit 2
	fi
}

# configure_in DIR [args...]: the sources' configure, run in DIR.
configure_in() {
	local dir=$1
	shift
	cd "$dir" && "$top/configure" -q "$@"
}

# configure_build DIR [configure args...]: configure (once) and build in DIR.
configure_build() {
	local dir=$1; shift
	unconfigure_in_tree
	[ -x configure ] || talk autoreconf quiet autoreconf -fi
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ]; then
		echo "[$dir] configure $*"
		talk "$dir" verbatim configure_in "$dir" "$@"
	fi
	echo "[$dir] building"
	quiet_log=$dir/run-build.log
	if ! talk "$dir" quiet make -C "$dir" -j"$jobs"; then
		tail -40 "$quiet_log"
		echo "[$dir] the build failed (all of its output: $quiet_log)" >&2
		exit 1
	fi
}

# Sum Criterion's "Synthesis" lines of the test logs in DIR.
criterion_counts() {
	cat "$1"/tests/*.log 2>/dev/null | sed -n 's/.*Synthesis: Tested: \([0-9]*\) | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\2 \3 \4/p' |
		awk '{p += $1; f += $2 + $3} END {print p + 0, f + 0}'
}

passed=0
failed=0
tally() { passed=$((passed + $1)); failed=$((failed + $2)); }

# check_results: a filter for make check's output: each test's result line
# as it comes, with its Criterion suite's synthesis when it has one
# ($check_dir, $check_label: the build directory and its label).
check_results() {
	local line verdict name synth
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$check_dir/run-check.log"
		case $line in
		PASS:* | FAIL:* | ERROR:* | SKIP:* | XFAIL:* | XPASS:*)
			verdict=${line%%:*}
			name=${line#*: }
			synth=$(sed -n 's/.*\(Synthesis: .*\)/\1/p' "$check_dir/$name.log" 2>/dev/null | tail -1)
			echo "[$check_label] $verdict $name${synth:+: $synth}"
			;;
		esac
	done
}

# unit_tests DIR LABEL [TARGET]: make TARGET (check) in DIR, print its
# figures, fail on leaks.
unit_tests() {
	local dir=$1 label=$2 target=${3:-check} rc=0
	check_dir=$dir check_label=$label
	: >"$dir/run-check.log"
	echo "[$label] make $target in $dir"
	talk "$label" check_results make -C "$dir" -j"$jobs" "$target" || rc=$?
	read -r p f < <(criterion_counts "$dir")
	if [ $rc -ne 0 ]; then
		echo "[$label] make $target failed:"
		[ -f "$dir"/test-suite.log ] || tail -40 "$dir/run-check.log"
		if [ -f "$dir"/test-suite.log ]; then
			sed -n '/^FAIL\|^ERROR/p' "$dir"/test-suite.log
			tail -40 "$dir"/test-suite.log
		fi
		f=$((f + 1))
	fi
	if grep -l 'LeakSanitizer' "$dir"/tests/*.log "$dir"/examples/*.log 2>/dev/null; then
		echo "[$label] LeakSanitizer reported leaks in the logs above"
		f=$((f + 1))
	fi
	echo "[$label] $p passed, $f failed"
	tally "$p" "$f"
}

# debug_unit_tests: the Criterion suites (make check-unit) in an
# --enable-debug build, where every pool is a debug pool and the suites
# expect it (tests/build.h).  make stress-quick configured one for its
# validate run, _build/_build-stress-debug (it builds only the stress
# programs there, the library's sources compiled in): its library and
# tests are built here, else those of _build-debug.
debug_unit_tests() {
	local dir=_build/_build-stress-debug
	[ -f "$dir/config.status" ] &&
		grep -Eq "(^| )'?--enable-debug(=yes)?'?( |$)" <<<"$("$dir/config.status" --config)" ||
		dir=_build-debug
	configure_build "$dir" --enable-debug
	unit_tests "$dir" unit-debug check-unit
}

# aarch64: the library and its single-threaded unit tests, cross-built and
# run under qemu-aarch64 (tests/aarch64.sh says which and why); the arm64
# sysroot is made once and cached.  A skip (77) counts as a failure here:
# install_missing installed the tools.
aarch64_tests() {
	local rc=0 p f
	aarch64_out=_build/aarch64.out
	rm -f "$aarch64_out"
	echo "[aarch64] cross build, unit tests under qemu-aarch64 (single-threaded)"
	talk aarch64 verbatim tests/aarch64.sh --sysroot || rc=$?
	[ $rc -ne 0 ] || talk aarch64 aarch64_lines tests/aarch64.sh || rc=$?
	read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$aarch64_out" 2>/dev/null |
		awk '{p = $1; f = $2} END {print p + 0, f + 0}')
	[ $rc -eq 0 ] || [ "$f" -gt 0 ] || f=1
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
		local rc=0
		stress_out=_build/stress-quick.out
		echo "[stress] make stress-quick (TSan and ASan builds, then every program)"
		talk stress stress_lines make -C _build -s stress-quick || rc=$?
		read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$stress_out" | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
		[ $rc -eq 0 ] || f=$((f + 1))
		tally "$p" "$f"
	fi
	debug_unit_tests
	aarch64_tests
	# --- Spin models of the ThreadStatic protocols (stress/model/, make model) ---
	if grep -q '^model:' _build/Makefile 2>/dev/null; then
		local mp mf mrc=0
		model_out=_build/model.out
		talk model model_lines make -C _build -s model || mrc=$?
		read -r mp mf < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$model_out" | awk '{p = $1; f = $2} END {print p + 0, f + 0}')
		[ $mrc -eq 0 ] || [ "$mf" -gt 0 ] || mf=1
		tally "$mp" "$mf"
	fi
	# --- end of the Spin models ---
	# The job-system example under ThreadSanitizer (ASan ran it in make check).
	local tsan=_build/_build-stress-tsan
	if [ -f "$tsan/Makefile" ]; then
		local rc=0
		echo "[jobs-tsan] the job system under TSan"
		talk jobs-tsan quiet make -C "$tsan" -s examples/jobs/jobs &&
			(cd "$tsan" && TSAN_OPTIONS=halt_on_error=1 talk jobs-tsan verbatim \
				./examples/jobs/jobs --items 100000 --depth 12) || rc=$?
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

# cmd_bench [--update-results]: results in _build/bench/results (git
# status stays clean), or in the committed bench/results.
cmd_bench() {
	local out=_build/bench/results
	case "${1:-}" in
	--update-results) out=bench/results ;;
	"") ;;
	*) echo "usage: $0 bench [--update-results]" >&2; exit 2 ;;
	esac
	[ "${BENCH_QUICK:-0}" = 0 ] || out=_build/bench/results-quick
	install_missing
	configure_build _build
	echo "[bench] building the benchmark"
	talk bench quiet make -C _build bench/lfpool-bench examples/jobs/jobs
	# Not through talk: the benchmark's progress line needs the terminal.
	make -C _build -s bench BENCH_RESULTS="$top/$out"
	# The job system, lfpool closures against malloc: pattern "jobs".
	./_build/examples/jobs/jobs --jsonl "$out/latest.jsonl"
	echo "run.sh bench: results in $out"
}

case "${1:-}" in
test) cmd_test ;;
bench) shift; cmd_bench "$@" ;;
*) echo "usage: $0 test | bench [--update-results]" >&2; exit 2 ;;
esac
