# SPDX-License-Identifier: MIT
# scaling.gp - total throughput of the pair pattern against thread count.
# Set by plot.sh: datadir (scaling.dat: one block per implementation, its
# name on the first line), nimpl (the number of blocks), out, machine.
set terminal pngcairo size 1000,640 noenhanced font ",10"
set output out
set title "pair (get then put), 64 B objects: every thread at once\n" . machine
set xlabel "threads (each pinned to its own CPU)"
set ylabel "million gets and puts per second, all threads (log)"
set logscale y
set xtics 1
set key outside right top
set grid ytics
# Distinguishable colours, one per implementation.
array colours[14] = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#000000", "#66a61e", \
	"#e6ab02", "#a6761d", "#1f78b4", "#b2182b", "#666666", "#01665e", "#8c510a", "#c51b7d"]
do for [i = 1:14] { set linetype i linecolor rgb colours[i] pointtype i }
plot for [i = 0:nimpl - 1] datadir . "/scaling.dat" index i \
	using 1:2 with linespoints linewidth 2 title columnheader(1)
