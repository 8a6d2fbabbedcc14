#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# variants.sh MODE - build the stress programs in each variant and run them
# (called by the make targets in stress/local.mk, from the build directory).
#
#   full   normal, TSan and ASan builds; STRESS_SECONDS (2) per scenario
#   quick  TSan and ASan, 1 s per scenario (what CI runs); once all is
#          built the programs run side by side, and each one's output is
#          shown as soon as it ends
#   long   normal (10 s per scenario, >= 10^8 operations), TSan and ASan
#          (5 s per scenario), and --enable-debug (5 s per scenario: the
#          internal asserts and every pool's validate on; a debug parent
#          build makes every variant a debug one already)
#   debug  --enable-debug only (the internal asserts and every pool's
#          validate on), STRESS_SECONDS (1) per scenario; no fuzzing
#   fuzz   the libFuzzer target only
# Each variant also runs lfmatrix, every row of the synchronization-table
# matrix without and with yield injection: MATRIX_SECONDS per row (quick
# 0.1, full 0.2, long 0.5).
# Every mode but fuzz and debug also runs the negative controls (no ABA
# tag, no stealing, and validate's own in an --enable-debug build); every
# mode fuzzes:
# the seed corpus (stress/fuzz/corpus/), then random inputs for
# FUZZ_SECONDS (quick 20, else 30), then the corpus again with rseq off
# (the per-CPU fallback path), and prints the line coverage of lib/ that
# this reached (clang's -fprofile-instr-generate, llvm-cov); `make fuzz`
# fails below FUZZ_MIN_COVERAGE percent (85).  Each program's "N passed, N failed" line is shown
# as "[variant] N passed, N failed"; the last line is the plain total.
set -u
mode=${1:?usage: variants.sh full|quick|long|debug|fuzz}
top=${abs_top_srcdir:?}
build=$PWD
threads=${STRESS_THREADS:-4}
seed=${STRESS_SEED:-1}
fuzz_seconds=${FUZZ_SECONDS:-30}
[ "$mode" = quick ] && fuzz_seconds=${FUZZ_SECONDS:-20}
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
start=$SECONDS
# TSan stops at its first report; no suppressions for lfpool code.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
	ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" \
	UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
# The stress drivers' progress line (on stderr) when run one at a time on
# a terminal.
progress=()
[ -t 1 ] && [ -t 2 ] && [ "$mode" != quick ] && progress=(--progress)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

if [ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ]; then
	echo "make $mode: configure in a build directory apart from the sources (the" \
	     "sanitizer builds go below it)" >&2
	exit 2
fi

# This build's configure arguments less the sanitizer switches.
eval "parent=($(./config.status --config))"
plain=()
sanitized=no
debug=no
for a in "${parent[@]}"; do
	case $a in
	--enable-tsan* | --enable-asan*) sanitized=yes ;;
	--disable-tsan | --disable-asan) ;;
	--enable-debug*) debug=yes plain+=("$a") ;;
	*) plain+=("$a") ;;
	esac
done

# build_dir VARIANT: the directory whose stress programs are VARIANT's.
build_dir() {
	if [ "$1" = normal ] && [ $sanitized = no ]; then
		echo "$build"
	else
		echo "$build/_build-stress-$1"
	fi
}

# configure_variant VARIANT DIR: configure DIR when its arguments changed.
# The variants share one configure cache: they differ only in flags that
# configure substitutes after its checks.
configure_variant() {
	local dir=$2 flag=() args cache=$build/_build-stress-config.cache
	[ "$1" = normal ] || flag=(--enable-$1)
	args="${plain[*]} ${flag[*]}"
	[ "$(cat "$cache.args" 2>/dev/null)" = "${plain[*]}" ] || rm -f "$cache"
	echo "${plain[*]}" >"$cache.args"
	mkdir -p "$dir"
	[ -f "$dir/Makefile" ] && [ "$(cat "$dir/.stress-args" 2>/dev/null)" = "$args" ] && return 0
	local t0=$SECONDS
	(cd "$dir" && "$top/configure" -q --cache-file="$cache" "${plain[@]}" "${flag[@]}") || return 1
	echo "$args" >"$dir/.stress-args"
	echo "stress: configured the $1 build in $dir ($((SECONDS - t0)) s)"
}

# prepare VARIANT PROGRAM...: configure if needed and build the programs.
prepare() {
	local v=$1 dir
	shift
	dir=$(build_dir "$v")
	if [ "$dir" != "$build" ]; then
		configure_variant "$v" "$dir" || return 1
	fi
	local t0=$SECONDS
	$MAKE -C "$dir" -s -j"$jobs" "$@" >/dev/null || return 1
	echo "stress: built $* ($v, $((SECONDS - t0)) s)"
}

# tally LABEL RC LOG: add a program's counts; one that died without its
# count line (a sanitizer report, a crash) counts as one failure.
tally() {
	local label=$1 rc=$2 log=$3 line p f
	line=$(grep -E "^\[$label\] [0-9]+ passed, [0-9]+ failed$" "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "FAIL [$label] the program died (exit $rc) before its last line; see the report above"
		failed=$((failed + 1))
		return
	fi
	read -r p f < <(echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed/\1 \2/')
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL [$label] exit $rc after all passed (a sanitizer report?)"
		failed=$((failed + 1))
	fi
}

# Jobs run once everything is built, so that no build shares the CPUs
# with a time-bound run.  A program's stdout goes to $logs/LABEL.log, its
# exit status to $logs/LABEL.rc.  One at a time, stdout and stderr
# (sanitizer reports, the progress line) are shown as they come; side by
# side (quick mode), both are kept and shown in order when all are done.
queue=()

# job LABEL PROGRAM ARGS...: queue a run.
job() {
	queue+=("$(printf '%q ' "$@")")
}

# run_job LABEL PROGRAM ARGS...
run_job() {
	local label=$1
	shift
	{ "$@"; echo $? >"$logs/$label.rc.tmp"; } |
		sed -u -E "s/^([0-9]+ passed, [0-9]+ failed)$/[$label] \1/" | tee "$logs/$label.log"
	# Only now is the log complete: run_queue waits for the rc file.
	mv "$logs/$label.rc.tmp" "$logs/$label.rc"
}

# progress DONE TOTAL T0: jobs done of all, the time since T0 and the time
# left at the pace so far; on a terminal one line redrawn in place (and
# $1 = "clear" wipes it), elsewhere a plain line.
progress_line() {
	local done=$1 total=$2 t0=$3 e left=?
	e=$((SECONDS - t0))
	[ "$done" -gt 0 ] && left=$((e * (total - done) / done))
	if [ -t 1 ]; then
		printf '\r\033[K[stress] %d/%d jobs done, %d s elapsed, about %s s left' \
			"$done" "$total" "$e" "$left"
	else
		echo "[stress] $done/$total jobs done, $e s elapsed, about $left s left"
	fi
}

# Run the queue and tally every job: one at a time, or (quick mode) side
# by side, each shown and tallied as soon as it ends, with a progress line
# (each second on a terminal, every 20 s elsewhere).
run_queue() {
	local entry labels=() label total=${#queue[@]} done=0 t0=$SECONDS last=$SECONDS
	for entry in "${queue[@]}"; do
		eval "set -- $entry"
		labels+=("$1")
		if [ "$mode" = quick ]; then
			run_job "$@" >/dev/null 2>"$logs/$1.err" &
		else
			progress_line "$done" "$total" "$t0"
			[ -t 1 ] && echo
			run_job "$@"
			tally "$1" "$(cat "$logs/$1.rc" 2>/dev/null || echo 255)" "$logs/$1.log"
			done=$((done + 1))
		fi
	done
	[ "$mode" = quick ] || return 0
	local shown=()
	while [ "$done" -lt "$total" ]; do
		sleep 1
		for label in "${labels[@]}"; do
			[ -f "$logs/$label.rc" ] || continue
			case " ${shown[*]} " in *" $label "*) continue ;; esac
			# The rc file is written once the job's output is complete.
			shown+=("$label")
			done=$((done + 1))
			[ -t 1 ] && printf '\r\033[K'
			cat "$logs/$label.log" "$logs/$label.err"
			tally "$label" "$(cat "$logs/$label.rc")" "$logs/$label.log"
			last=$SECONDS
		done
		if [ -t 1 ] || [ $((SECONDS - last)) -ge 20 ]; then
			progress_line "$done" "$total" "$t0"
			last=$SECONDS
		fi
	done
	[ -t 1 ] && printf '\r\033[K'
	wait
}

# stress VARIANT SECONDS [ARGS...]: build VARIANT's stress programs and
# queue the runs of lfstress and, where the build has it, of the array
# stress program (make stress-array).
stress() {
	local v=$1 s=$2 dir
	shift 2
	dir=$(build_dir "$v")
	if ! prepare "$v" stress-programs; then
		echo "FAIL [$v] the build failed"
		failed=$((failed + 1))
		return
	fi
	job "$v" "$dir/stress/lfstress" --seconds "$s" --threads "$threads" --seed "$seed" \
		"${progress[@]}" "$@"
	job "$v-matrix" "$dir/stress/lfmatrix" --seconds "$matrix_seconds" --seed "$seed" \
		"${progress[@]}"
	# fork() while threads use every flavour: every child and
	# every fork() must finish; 100 forks per mode and pass (quick: 30,
	# make check runs 100 in the release and ASan builds).
	job "$v-fork" "$dir/stress/lffork" "$fork_count"
	if grep -q '^stress-array:' "$dir/Makefile"; then
		job "$v-array" env STRESS_SECONDS="$s" STRESS_THREADS="$threads" \
			$MAKE -C "$dir" -s --no-print-directory stress-array
	fi
	# ThreadStatic's exact capacity and steals (stress/capacity.mk; the
	# table of what runs where is atop stress/capacity.c): every case
	# 1,000 rounds; in quick mode (./run.sh test) TSan's T = 64 groups run
	# $CAPACITY_ROUNDS_64 (100: TSan makes a thread in milliseconds, and
	# 1,000 rounds of them take some 360 s of CPU), and only TSan runs,
	# make check ran the normal and ASan builds.  make stress runs all.
	local cap=(--rounds "${CAPACITY_ROUNDS:-1000}")
	[ "$v" != tsan ] || [ "$mode" != quick ] || cap+=(--rounds-64 "${CAPACITY_ROUNDS_64:-100}")
	if grep -q '^stress-capacity:' "$dir/Makefile" && { [ "$mode" != quick ] || [ "$v" = tsan ]; }; then
		job "$v-capacity" env CAPACITY_ARGS="${cap[*]}" \
			$MAKE -C "$dir" -s --no-print-directory stress-capacity
	fi
}

negative_control() {
	if ! prepare normal stress/lfstress-noaba stress/capacity-nosteal stress/lfmatrix-nosteal \
		stress/lfmatrix-hooklock; then
		echo "FAIL [noaba] the build failed"
		failed=$((failed + 1))
		return
	fi
	job noaba "$(build_dir normal)/stress/lfstress-noaba" --seconds 20 --threads "$threads" \
		--seed "$seed" "${progress[@]}"
	# ThreadStatic without stealing: stress/capacity must see the stranding.
	job capacity-nosteal "$(build_dir normal)/stress/capacity-nosteal" --rounds 30 \
		--churn-ops 20000
	# and lfmatrix's strand rows must fail with ENOBUFS (each such run
	# counts as passed when it does; stress/matrix.c).
	job matrix-nosteal "$(build_dir normal)/stress/lfmatrix-nosteal" --only strand \
		--seconds "$matrix_seconds" --seed "$seed"
	# and, with the fini hooks of a trim run under steal_lock, its
	# ts_trim||ts_hooks rows must fail (a hook finds its thread busy).
	job matrix-hooklock "$(build_dir normal)/stress/lfmatrix-hooklock" --only 'ts_trim||ts_hooks' \
		--seconds "$matrix_seconds" --seed "$seed"
	# validate's own negative control (stress/sc_validate.c: broken
	# pools must fail it), which only an --enable-debug build has; the
	# other scenarios of that build run in modes long and debug.
	if ! prepare debug stress/lfstress; then
		echo "FAIL [debug-validate] the build failed"
		failed=$((failed + 1))
		return
	fi
	job debug-validate "$(build_dir debug)/stress/lfstress" --only validate --seconds 1 \
		--seed "$seed"
}

# The libFuzzer target: clang, ASan + UBSan, the sources compiled in
# (in parallel, and again only when a source or header changed).
build_fuzz() {
	local dir=$1 srcs=() f
	for f in ${FUZZ_SOURCES:?}; do
		case $f in *.c | *.S) srcs+=("$top/$f") ;; esac
	done
	if [ -x "$dir/lfpool-fuzz" ] && [ -z "$(find "$top/include" "$top/lib" "$top/stress" \
		-newer "$dir/lfpool-fuzz" -print -quit)" ]; then
		return 0
	fi
	local t0=$SECONDS
	mkdir -p "$dir/obj"
	rm -f "$dir"/obj/*.o
	export FUZZ_CC=${FUZZ_CC:-clang} FUZZ_FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined
		-fno-sanitize-recover=undefined -fprofile-instr-generate -fcoverage-mapping
		-I$top/include -I$top/lib -I$top/stress ${FUZZ_CFLAGS:-}"
	# shellcheck disable=SC2016,SC2086 # expanded by the inner shell; word lists
	printf '%s\n' "${srcs[@]}" | xargs -P "$jobs" -I{} sh -c \
		'$FUZZ_CC $FUZZ_FLAGS -c "$1" -o "$2/obj/$(echo "$1" | tr / _).o"' sh {} "$dir" &&
		$FUZZ_CC $FUZZ_FLAGS "$dir"/obj/*.o ${FUZZ_LIBS:-} -o "$dir/lfpool-fuzz" &&
		echo "stress: built the fuzz target ($((SECONDS - t0)) s)"
}

# llvm_tool NAME: the LLVM tool that matches clang 14, or the plain one.
llvm_tool() {
	command -v "$1-14" || command -v "$1"
}

# coverage DIR: the line coverage of lib/ in DIR/cov/*.profraw, per file
# and in total ("fuzz coverage: TOTAL ..." last).
coverage() {
	local dir=$1 profdata cov files=()
	profdata=$(llvm_tool llvm-profdata) && cov=$(llvm_tool llvm-cov) || {
		echo "fuzz: no llvm-profdata/llvm-cov: no coverage figure"
		return 1
	}
	"$profdata" merge -sparse "$dir"/cov/*.profraw -o "$dir/cov/fuzz.profdata" || return 1
	mapfile -t files < <(find "$top/lib" -name '*.[ch]' | sort)
	"$cov" report "$dir/lfpool-fuzz" -instr-profile="$dir/cov/fuzz.profdata" "${files[@]}" |
		awk '
		# Columns: file (below lib/), regions (3), functions (3), lines
		# (3), branches (3).
		NF >= 13 && $1 != "Filename" {
			name = $1 == "TOTAL" ? "TOTAL" : "lib/" $1
			printf "fuzz coverage: %-34s %5s lines %5s missed %8s\n", name, $8, $9, $10
		}'
}

# run_fuzz DIR: the seed corpus, FUZZ_SECONDS of random inputs, the corpus
# again with rseq off, then the coverage; prints a result line like the
# others.
run_fuzz() {
	local dir=$1 log=$logs/fuzz.out rc runs t0=$SECONDS pct
	rm -rf "$dir/corpus" "$dir/cov"
	mkdir -p "$dir/corpus" "$dir/cov"
	(cd "$dir" && LLVM_PROFILE_FILE="$dir/cov/fuzz-%p.profraw" ./lfpool-fuzz \
		-max_total_time="$fuzz_seconds" -max_len=2048 -print_final_stats=1 \
		-seed="$seed" corpus "$top/stress/fuzz/corpus") >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ $rc -eq 0 ]; then
		# The per-CPU fallback path: glibc registers no rseq area.
		(cd "$dir" && GLIBC_TUNABLES=glibc.pthread.rseq=0 \
			LLVM_PROFILE_FILE="$dir/cov/fallback-%p.profraw" ./lfpool-fuzz -runs=0 \
			corpus "$top/stress/fuzz/corpus") >>"$log" 2>&1
		rc=$?
	fi
	if [ $rc -eq 0 ]; then
		coverage "$dir" | tee "$dir/cov/report.txt"
		pct=$(sed -n 's/^fuzz coverage: TOTAL .* \([0-9.]*\)%$/\1/p' "$dir/cov/report.txt")
		echo "PASS fuzz         asan+fuzzer  seconds=$fuzz_seconds runs=${runs:-?}" \
		     "corpus=$(find "$dir/corpus" -type f | wc -l)+$(find "$top/stress/fuzz/corpus" \
			-type f | wc -l) lib-lines=${pct:-?}% ($((SECONDS - t0)) s)"
		if [ "$mode" = fuzz ] && ! awk -v p="${pct:-0}" -v min="${FUZZ_MIN_COVERAGE:-85}" \
			'BEGIN { exit !(p >= min) }'; then
			echo "FAIL fuzz: line coverage of lib/ ${pct:-?}% is below" \
			     "FUZZ_MIN_COVERAGE=${FUZZ_MIN_COVERAGE:-85}%"
			echo "[fuzz] 0 passed, 1 failed"
		else
			echo "[fuzz] 1 passed, 0 failed"
		fi
	else
		tail -40 "$log"
		echo "FAIL fuzz         asan+fuzzer  exit $rc after ${runs:-?} runs; the input is" \
		     "saved in $dir (crash-*): replay it with $dir/lfpool-fuzz FILE"
		echo "[fuzz] 0 passed, 1 failed"
	fi
}

fuzz() {
	local dir=$build/_build-stress-fuzz
	mkdir -p "$dir/corpus"
	if ! build_fuzz "$dir"; then
		echo "FAIL fuzz: the build failed"
		failed=$((failed + 1))
		return
	fi
	job fuzz run_fuzz "$dir"
}

fork_count=100
[ "$mode" = quick ] && fork_count=30
case $mode in
quick) matrix_seconds=${MATRIX_SECONDS:-0.1} ;;
long) matrix_seconds=${MATRIX_SECONDS:-0.5} ;;
*) matrix_seconds=${MATRIX_SECONDS:-0.2} ;;
esac

case $mode in
full)
	stress normal "${STRESS_SECONDS:-2}"
	stress tsan "${STRESS_SECONDS:-2}"
	stress asan "${STRESS_SECONDS:-2}"
	negative_control
	;;
quick)
	stress tsan "${STRESS_SECONDS:-1}"
	stress asan "${STRESS_SECONDS:-1}"
	negative_control
	;;
long)
	stress normal "${STRESS_SECONDS:-10}" --min-ops 100000000
	stress tsan "${STRESS_SECONDS:-5}"
	stress asan "${STRESS_SECONDS:-5}"
	[ "$debug" = yes ] || stress debug "${STRESS_SECONDS:-5}"
	negative_control
	;;
debug)
	# A debug parent build is the debug variant already.
	if [ "$debug" = yes ] && [ $sanitized = no ]; then
		stress normal "${STRESS_SECONDS:-1}"
	else
		stress debug "${STRESS_SECONDS:-1}"
	fi
	;;
fuzz) ;;
*)
	echo "variants.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
[ "$mode" = debug ] || fuzz
run_queue
echo "stress $mode: $((SECONDS - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
