# SPDX-License-Identifier: MIT
# ratios.gp - each lfpool flavour's time over each peer's, three panels.
# Set by plot.sh: datadir (ratio-pair.dat, ratio-xthread.dat,
# ratio-scaling.dat: a row per peer, a column per flavour measured in the
# panel), lt_pair, lt_xthread, lt_scaling (each column's flavour number,
# its colour), out, machine, maxthr.
set terminal pngcairo size 1100,1200 noenhanced font ",10"
set output out
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.001:100]
set grid ytics
set ylabel "lfpool time / peer time (log; below 1: lfpool faster)"
set key outside right top
set xtics nomirror rotate by -30
array colours[6] = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"]
do for [i = 1:6] { set linetype i linecolor rgb colours[i] }
set multiplot layout 3, 1 title "64 B objects, " . machine
set title "pair, 1 thread"
plot for [i = 1:words(lt_pair)] datadir . "/ratio-pair.dat" using i + 1:xtic(1) \
	title columnheader(i + 1) linetype word(lt_pair, i) + 0, \
	1 with lines linecolor "black" notitle
set title "xthread: gets on one thread, puts on another"
plot for [i = 1:words(lt_xthread)] datadir . "/ratio-xthread.dat" using i + 1:xtic(1) \
	title columnheader(i + 1) linetype word(lt_xthread, i) + 0, \
	1 with lines linecolor "black" notitle
set title sprintf("pair on %d threads at once", maxthr)
plot for [i = 1:words(lt_scaling)] datadir . "/ratio-scaling.dat" using i + 1:xtic(1) \
	title columnheader(i + 1) linetype word(lt_scaling, i) + 0, \
	1 with lines linecolor "black" notitle
unset multiplot
