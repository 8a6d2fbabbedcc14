# ratios.gp - each lfpool flavour's time over each peer's, three panels.
# Set by plot.sh: datadir (ratio-pair.dat, ratio-xthread.dat,
# ratio-scaling.dat: a row per peer, a column per flavour measured in the
# panel), out, machine, maxthr.
set terminal pngcairo size 1100,1200 noenhanced font ",10"
set output out
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.01:100]
set grid ytics
set ylabel "lfpool time / peer time (log; below 1: lfpool faster)"
set key outside right top
set xtics nomirror rotate by -30
set multiplot layout 3, 1 title "64 B objects, " . machine
set title "pair, 1 thread"
plot for [c = 2:*] datadir . "/ratio-pair.dat" using c:xtic(1) title columnheader(c), \
	1 with lines linecolor "black" notitle
set title "xthread: gets on one thread, puts on another"
plot for [c = 2:*] datadir . "/ratio-xthread.dat" using c:xtic(1) title columnheader(c), \
	1 with lines linecolor "black" notitle
set title sprintf("pair on %d threads at once", maxthr)
plot for [c = 2:*] datadir . "/ratio-scaling.dat" using c:xtic(1) title columnheader(c), \
	1 with lines linecolor "black" notitle
unset multiplot
