#!/bin/sh
# SPDX-License-Identifier: MIT
# plot-check.sh - bench/plot.sh draws the three plots from the committed
# results (bench/results/latest.jsonl and the 16-CPU run's
# device-16cpu.jsonl), and bench/style.gp has a colour of its own for
# every implementation either of them names (a plot whose series share
# colours cannot be read).  Skipped without gnuplot.
srcdir=${srcdir:-.}
command -v gnuplot >/dev/null 2>&1 || { echo "SKIP: gnuplot not found"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
colours=$(sed -n '/^array colours/,/]/p' "$srcdir/bench/style.gp" | grep -o '"#[0-9a-fA-F]*"' | sort -u | wc -l)
for run in latest device-16cpu; do
	mkdir -p "$tmp/$run"
	cp "$srcdir/bench/results/$run.jsonl" "$tmp/$run/latest.jsonl"
	impls=$(grep -o '"impl":"[^"]*"' "$tmp/$run/latest.jsonl" | sort -u | wc -l)
	if [ "$impls" -gt "$colours" ]; then
		echo "FAIL: $run names $impls implementations, bench/style.gp has $colours colours"
		fail=1
	fi
	if ! sh "$srcdir/bench/plot.sh" "$tmp/$run" >"$tmp/log" 2>&1; then
		cat "$tmp/log"
		echo "FAIL: bench/plot.sh on $run.jsonl"
		fail=1
		continue
	fi
	for png in scaling ratios memory; do
		if head -c 8 "$tmp/$run/$png.png" 2>/dev/null | od -An -c | grep -q 'P   N   G'; then
			echo "PASS: $run: $png.png"
		else
			echo "FAIL: $run: no $png.png"
			fail=1
		fi
	done
done
exit $fail
