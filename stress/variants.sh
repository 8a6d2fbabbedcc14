#!/usr/bin/env bash
# variants.sh MODE - build the stress programs in each variant and run them
# (called by the make targets in stress/local.mk, from the build directory).
#
#   full   normal, TSan and ASan builds; STRESS_SECONDS (2) per scenario
#   quick  TSan and ASan; 1 s per scenario (what CI runs)
#   long   normal, TSan and ASan; 10 s per scenario, >= 10^8 operations
#   fuzz   the libFuzzer target only
# Every mode but fuzz also runs the negative control; every mode fuzzes
# for FUZZ_SECONDS (30).  Each driver's "N passed, N failed" line is shown
# as "[variant] N passed, N failed"; the last line is the plain total.
set -u
mode=${1:?usage: variants.sh full|quick|long|fuzz}
top=${abs_top_srcdir:?}
build=$PWD
threads=${STRESS_THREADS:-4}
seed=${STRESS_SEED:-1}
fuzz_seconds=${FUZZ_SECONDS:-30}
passed=0
failed=0
start=$SECONDS

if [ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ]; then
	echo "make $mode: configure in a build directory apart from the sources (the" \
	     "sanitizer builds go below it)" >&2
	exit 2
fi

# This build's configure arguments less the sanitizer switches.
eval "parent=($(./config.status --config))"
plain=()
sanitized=no
for a in "${parent[@]}"; do
	case $a in
	--enable-tsan* | --enable-asan*) sanitized=yes ;;
	--disable-tsan | --disable-asan) ;;
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

# prepare VARIANT: configure (when the arguments changed) and build.
prepare() {
	local dir flag
	dir=$(build_dir "$1")
	case $1 in normal) flag=() ;; *) flag=(--enable-$1) ;; esac
	if [ "$dir" != "$build" ]; then
		local args="${plain[*]} ${flag[*]}"
		mkdir -p "$dir"
		if [ ! -f "$dir/Makefile" ] || [ "$(cat "$dir/.stress-args" 2>/dev/null)" != "$args" ]; then
			echo "stress: configuring the $1 build in $dir"
			(cd "$dir" && "$top/configure" -q "${plain[@]}" "${flag[@]}") || return 1
			echo "$args" >"$dir/.stress-args"
		fi
	fi
	echo "stress: building the $1 stress programs"
	$MAKE -C "$dir" -s stress-programs >/dev/null
}

# tally LABEL RC LOG: add a driver's counts; a driver that died without
# its count line (a sanitizer report, a crash) counts as one failure.
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
		echo "FAIL [$label] exit $rc after all passed (a leak report?)"
		failed=$((failed + 1))
	fi
}

# drive LABEL PROGRAM ARGS...: run a stress program, prefixing its count line.
drive() {
	local label=$1 log rc progress=()
	shift
	log=$(mktemp)
	[ -t 1 ] && [ -t 2 ] && progress=(--progress)
	"$@" "${progress[@]}" | sed -u -E "s/^([0-9]+ passed, [0-9]+ failed)$/[$label] \1/" | tee "$log"
	rc=${PIPESTATUS[0]}
	tally "$label" "$rc" "$log"
	rm -f "$log"
}

# run_variant VARIANT SECONDS [ARGS...]: build and run lfstress.
run_variant() {
	local v=$1 s=$2
	shift 2
	if ! prepare "$v"; then
		echo "FAIL [$v] the build failed"
		failed=$((failed + 1))
		return
	fi
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
	ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" \
	UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}" \
		drive "$v" "$(build_dir "$v")/stress/lfstress" --seconds "$s" --threads "$threads" \
		--seed "$seed" "$@"
}

negative_control() {
	if prepare normal; then
		drive noaba "$(build_dir normal)/stress/lfstress-noaba" --seconds 20 \
			--threads "$threads" --seed "$seed"
	else
		echo "FAIL [noaba] the build failed"
		failed=$((failed + 1))
	fi
}

# The libFuzzer target: clang, ASan + UBSan, the sources straight in.
fuzz() {
	local dir=$build/_build-stress-fuzz srcs=() f log rc runs
	mkdir -p "$dir/corpus"
	for f in ${FUZZ_SOURCES:?}; do
		case $f in *.c | *.S) srcs+=("$top/$f") ;; esac
	done
	echo "stress: building the fuzz target"
	# shellcheck disable=SC2086 # the flags are word lists
	if ! ${FUZZ_CC:-clang} -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I"$top/include" -I"$top/lib" -I"$top/stress" \
		${FUZZ_CFLAGS:-} "${srcs[@]}" ${FUZZ_LIBS:-} -o "$dir/lfpool-fuzz"; then
		echo "FAIL fuzz: the build failed"
		failed=$((failed + 1))
		return
	fi
	log=$(mktemp)
	(cd "$dir" && ./lfpool-fuzz -max_total_time="$fuzz_seconds" -max_len=1024 \
		-print_final_stats=1 -seed="$seed" corpus) >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ $rc -eq 0 ]; then
		echo "PASS fuzz         asan+fuzzer  seconds=$fuzz_seconds runs=${runs:-?}" \
		     "corpus=$(ls "$dir/corpus" | wc -l)"
		passed=$((passed + 1))
	else
		tail -40 "$log"
		echo "FAIL fuzz         asan+fuzzer  exit $rc after ${runs:-?} runs; the input is" \
		     "saved in $dir (crash-*), replay with $dir/lfpool-fuzz FILE"
		failed=$((failed + 1))
	fi
	rm -f "$log"
}

case $mode in
full)
	for v in normal tsan asan; do
		run_variant $v "${STRESS_SECONDS:-2}"
	done
	negative_control
	;;
quick)
	for v in tsan asan; do
		run_variant $v "${STRESS_SECONDS:-1}"
	done
	negative_control
	;;
long)
	run_variant normal "${STRESS_SECONDS:-10}" --min-ops 100000000
	for v in tsan asan; do
		run_variant $v "${STRESS_SECONDS:-10}"
	done
	negative_control
	;;
fuzz) ;;
*)
	echo "variants.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
fuzz
echo "stress $mode: $((SECONDS - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
