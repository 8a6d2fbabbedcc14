#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check.sh - run every Spin model of stress/model/ and its negative control.
#
#   check.sh SRCDIR OUTDIR [NAME...]
#
# Each row of CHECKS below is one verification: a model, the -D flags given
# to spin's preprocessor, what pan checks (safety: assertions and invalid end
# states; ltl:NAME: the never claim NAME with acceptance cycles under weak
# fairness), and what must come out (pass: no error; reject: an error and a
# counterexample trail).  One line per check (states stored, wall and CPU
# seconds; a rejection's first error), then "N passed, N failed"; exit
# status 1 if any check did not come out as expected.  Each check runs in
# OUTDIR/NAME; a rejected run's trail, replayed step by step, is left in
# OUTDIR/NAME/trail.txt.  MODEL_JOBS checks run at once (default: nproc).
# Installs nothing: spin and a C compiler must be there.
set -u

src=${1:?usage: check.sh SRCDIR OUTDIR [NAME...]}
out=${2:?usage: check.sh SRCDIR OUTDIR [NAME...]}
shift 2
CC=${CC:-cc}
SPIN=${SPIN:-spin}

# name             model        defines (comma-separated)    mode     expect
CHECKS='
depot              depot.pml    -DNOTRIM                safety          pass
depot-trim         depot.pml    -DOPS=2                 safety          pass
depot-trim-keep    depot.pml    -DOPS=2,-DKEEPO=1       safety          pass
depot-trim-keep-neg depot.pml   -DOPS=2,-DKEEPO=1,-DNEGATIVE_KEEP safety  reject
depot-neg          depot.pml    -DNOTRIM,-DNEGATIVE     safety          reject
census             census.pml   -                       safety          pass
census-neg         census.pml   -DNEGATIVE              safety          reject
exit               exit.pml     -                       safety          pass
exit-neg           exit.pml     -DNEGATIVE              safety          reject
exit-neg-addr      exit.pml     -DNEGATIVE_ADDR         safety          reject
home               home.pml     -                       safety          pass
home-neg-late      home.pml     -DNEGATIVE_LATE         safety          reject
home-neg-forget    home.pml     -DNEGATIVE_FORGET       safety          reject
array-home         array_home.pml -                     safety          pass
array-home-neg-clear array_home.pml -DNEGATIVE_NO_CLEAR  safety          reject
array-home-neg-free array_home.pml -DNEGATIVE_FREE_FIRST safety          reject
array-home-neg-keep array_home.pml -DNEGATIVE_KEEP       safety          reject
array-home-no-recheck array_home.pml -DNEGATIVE_NO_RECHECK safety       reject
grace              grace.pml    -                       safety          pass
grace-neg-reach    grace.pml    -DREACH_FIRST           safety          reject
grace-neg-recheck  grace.pml    -DNO_RECHECK            safety          reject
grace-done         grace.pml    -                       ltl:done        pass
grace-done-neg     grace.pml    -DONE_COUNTER           ltl:done        reject
flush              flush.pml    -                       safety          pass
flush-neg          flush.pml    -DNEGATIVE              safety          reject
flush-neg-held     flush.pml    -DNEGATIVE,-DNOMONITOR  safety          reject
aba                aba.pml      -                       safety          pass
aba-neg            aba.pml      -DNEGATIVE              safety          reject
aba-wrap           aba.pml      -DTAGMOD=4,-DOPS=4,-DNN=3 safety        reject
aba-done           aba.pml      -                       ltl:done        pass
elim               elim.pml     -                       safety          pass
elim-2slots        elim.pml     -DNS=2                  safety          pass
elim-trim          elim.pml     -DTRIM                  safety          pass
elim-trim-keep     elim.pml     -DTRIM,-DKEEP=1         safety          pass
elim-neg-tag       elim.pml     -DNEGATIVE              safety          reject
elim-neg-store     elim.pml     -DNEGATIVE_STORE        safety          reject
steal              steal.pml    -                       safety          pass
steal-neg          steal.pml    -DNEGATIVE              safety          reject
steal-depot-first  steal.pml    -DDEPOT_FIRST           safety          reject
steal-2caches      steal.pml    -DNC=2,-DOPS=2          safety          pass
steal-progress     steal.pml    -                       ltl:progress    pass
steal-progress-neg steal.pml    -DNO_UNLOCK             ltl:progress    reject
steal-cpu          steal_cpu.pml -                      safety          pass
steal-cpu-neg      steal_cpu.pml -DNEGATIVE             safety          reject
steal-cpu-depot-first steal_cpu.pml -DDEPOT_FIRST       safety          reject
steal-cpu-progress steal_cpu.pml -                      ltl:progress    pass
hooks              hooks.pml    -                       safety          pass
hooks-neg-init     hooks.pml    -DINIT_IN_SECTION       safety          reject
hooks-neg-fini     hooks.pml    -DFINI_IN_SECTION       safety          reject
hooks-neg-self     hooks.pml    -DWAIT_FOR_SELF         safety          reject
transit            transit.pml  -                       safety          pass
transit-neg-resweep transit.pml -DNO_RESWEEP            safety          reject
transit-done       transit.pml  -                       ltl:done        pass
transit-done-neg   transit.pml  -DHOOK_IN_TRANSIT       ltl:done        reject
'

if ! command -v "$SPIN" >/dev/null 2>&1; then
	echo "model: spin not found (Debian package spin; ./run.sh installs it)"
	echo "0 passed, 1 failed"
	exit 1
fi

mkdir -p "$out" || exit 1
passed=0
failed=0

# One check, in OUTDIR/NAME: writes its result line to OUTDIR/NAME/result.
run_check() {
	local name=$1 model=$2 defs=$3 mode=$4 expect=$5
	local dir="$out/$name" claim=""
	[ "$defs" = - ] && defs=""
	defs=${defs//,/ }
	rm -rf "$dir" && mkdir -p "$dir" && cp "$src/$model" "$dir/" || return 1
	# -O0: compiling pan.c costs more than the optimizer saves at these sizes
	local cflags="-O0 -w -DVECTORSZ=4096" panflags="-m200000 -n"
	case $mode in
	# a rejected model's shortest trail: breadth-first
	safety) cflags="$cflags -DSAFETY -DNOCLAIM"
		[ "$expect" = reject ] && cflags="$cflags -DBFS" ;;
	ltl:*) claim=${mode#ltl:}; cflags="$cflags -DNFAIR=3"; panflags="$panflags -a -f -N $claim" ;;
	esac
	local TIMEFORMAT='%R %U %S'
	# shellcheck disable=SC2086
	{ time (cd "$dir" && "$SPIN" -a $defs "$model" >spin.out 2>&1 &&
		$CC $cflags -o pan pan.c >cc.out 2>&1 &&
		./pan $panflags >pan.out 2>&1) ; } 2>"$dir/time" || true
	local wall cpu states errors outcome why=""
	read -r wall usr sys <"$dir/time"
	cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
	wall=$(awk -v w="$wall" 'BEGIN { printf "%.1f", w }')
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.out" 2>/dev/null | head -1)
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.out" 2>/dev/null | head -1)
	if [ -z "$errors" ]; then
		outcome="broken"
		why=$(cat "$dir/spin.out" "$dir/cc.out" "$dir/pan.out" 2>/dev/null | grep -v '^ *$' | head -3 | tr '\n' ' ')
	elif [ "$errors" -eq 0 ]; then
		outcome="pass"
		grep -q 'Search not completed' "$dir/pan.out" && outcome="incomplete"
	else
		outcome="reject"
		[ -f "$dir/$model.trail" ] || outcome="no-trail"
		why=$(grep -m1 -E '^pan:[0-9]+: |^pan: ' "$dir/pan.out" | sed 's/ (at depth [0-9]*)//')
		# the counterexample, step by step (the same -D flags as the check)
		# shellcheck disable=SC2086
		(cd "$dir" && "$SPIN" -t -p $defs "$model" >trail.txt 2>&1)
	fi
	local verdict=FAIL
	[ "$outcome" = "$expect" ] && verdict=ok
	printf '%-4s %-21s expect %-6s got %-8s states %8s  %5s s (cpu %4s s)  %s\n' \
		"$verdict" "$name" "$expect" "$outcome" "${states:-?}" "$wall" "$cpu" "$why" >"$dir/result"
}

# Run the checks MODEL_JOBS at a time (default: the CPUs), print in order.
njobs=${MODEL_JOBS:-$(nproc 2>/dev/null || echo 2)}
names=()
t0=$(date +%s)
while read -r name model defs mode expect; do
	[ -n "$name" ] || continue
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	names+=("$name")
	while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do
		wait -n
	done
	run_check "$name" "$model" "$defs" "$mode" "$expect" &
done <<<"$CHECKS"
wait
for name in "${names[@]}"; do
	if [ -f "$out/$name/result" ]; then
		cat "$out/$name/result"
	else
		printf '%-4s %-21s did not run\n' FAIL "$name"
	fi
	if grep -q '^ok ' "$out/$name/result" 2>/dev/null; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
cpu=$(for name in "${names[@]}"; do cat "$out/$name/result" 2>/dev/null; done |
	sed -n 's/.*(cpu *\([0-9.]*\) s).*/\1/p' | awk '{t += $1} END {printf "%.0f", t}')
echo "model: $(( $(date +%s) - t0 )) s wall with $njobs jobs, $cpu s of CPU"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
