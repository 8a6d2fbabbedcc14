# SPDX-License-Identifier: MIT
# scaling.gp - total throughput of the pair pattern against thread count,
# with each point's min..max over the repetitions.
# Set by plot.sh: datadir (scaling.dat: one block per implementation, its
# name on the first line; threads, Mops/s, least, most), nimpl (the
# number of blocks), lts and dts (each block's linetype and dash type),
# style (style.gp), out, machine.
set terminal pngcairo size 1100,700 noenhanced font ",10"
set output out
load style
# A block's dash type (a parenthesis after dashtype would start a pattern).
dash(i) = word(dts, i) + 0
set title "pair (get then put), 64 B objects: every thread at once; bars: min..max\n" . machine
set xlabel "threads (each pinned to its own CPU)"
set ylabel "million gets and puts per second, all threads (log; higher is better)"
set logscale y
set xtics 1
set key outside right top
set grid ytics
plot for [i = 0:nimpl - 1] datadir . "/scaling.dat" index i using 1:2:3:4 \
	with yerrorlines linetype (word(lts, i + 1) + 0) dashtype dash(i + 1) \
	linewidth 2 title columnheader(1)
