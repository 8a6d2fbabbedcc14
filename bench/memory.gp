# SPDX-License-Identifier: MIT
# memory.gp - resident memory through the burst (bench/mem64.c): a
# million 64 B objects got and written, put back, drained and trimmed.
# Set by plot.sh: datadir (memory.dat: a block per implementation, its
# name on the first line; step, phase, MiB above the start), nimpl, lts
# and dts (each block's linetype and dash type), trimmed (what the last
# phase did), style, out, machine.
set terminal pngcairo size 1000,600 noenhanced font ",10"
set output out
load style
# A block's dash type (a parenthesis after dashtype would start a pattern).
dash(i) = word(dts, i) + 0
set title "RSS through a burst: 10^6 objects of 64 B got and written, put back, drained,\n" . \
	"trimmed (" . trimmed . ")\n" . machine
set ylabel "resident memory above the start (MiB)"
set xlabel "phase of the burst"
set yrange [0:*]
set grid ytics
set key outside right top
set xtics nomirror
plot for [i = 0:nimpl - 1] datadir . "/memory.dat" index i using 1:3:xtic(2) \
	with linespoints linetype (word(lts, i + 1) + 0) dashtype dash(i + 1) \
	linewidth 2 title columnheader(1)
