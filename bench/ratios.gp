# SPDX-License-Identifier: MIT
# ratios.gp - each lfpool flavour's time over each peer's, three panels,
# on a log scale centred on 1 (the same span in every panel), with each
# ratio's min..max over the repetitions.
# Set by plot.sh: datadir (ratio-pair.dat, ratio-xthread.dat,
# ratio-scaling.dat: a row per peer, three columns per flavour measured in
# the panel: ratio, least, most), lt_pair, lt_xthread, lt_scaling (each
# flavour's linetype), span (the range is 10^-span..10^span), style
# (style.gp), out, machine, maxthr.
set terminal pngcairo size 1100,1300 noenhanced font ",10"
set output out
load style
set datafile missing "?"
set style data histograms
set style histogram errorbars gap 1 linewidth 1
set style fill solid 0.85 border -1
set logscale y
set yrange [10 ** -span : 10 ** span]
set grid ytics
set ylabel "lfpool time / peer time (log)"
set key outside right top
set xtics nomirror rotate by -30
# The half where lfpool wins is shaded, and each half says what it means.
set object 1 rectangle from graph 0, first 10 ** -span to graph 1, first 1 \
	fillcolor rgb "#e8f4e8" fillstyle solid 1.0 noborder behind
# The labels sit in the right margin on either side of 1, below the key.
set label 1 "^ lfpool slower" at graph 1.02, first 10 ** (span / 8.0) left font ",11" \
	textcolor rgb "#8b0000"
set label 2 "v lfpool faster" at graph 1.02, first 10 ** (-span / 8.0) left font ",11" \
	textcolor rgb "#006400"
set multiplot layout 3, 1 title "64 B objects, " . machine . "; bars: min..max over the repetitions"
set title "pair, 1 thread"
plot for [i = 1:words(lt_pair)] datadir . "/ratio-pair.dat" \
	using 3 * i - 1:3 * i:3 * i + 1:xtic(1) \
	title columnheader(3 * i - 1) linetype (word(lt_pair, i) + 0), \
	1 with lines linecolor "black" linewidth 2 notitle
set title "xthread: gets on one thread, puts on another"
plot for [i = 1:words(lt_xthread)] datadir . "/ratio-xthread.dat" \
	using 3 * i - 1:3 * i:3 * i + 1:xtic(1) \
	title columnheader(3 * i - 1) linetype (word(lt_xthread, i) + 0), \
	1 with lines linecolor "black" linewidth 2 notitle
set title sprintf("pair on %d threads at once", maxthr)
plot for [i = 1:words(lt_scaling)] datadir . "/ratio-scaling.dat" \
	using 3 * i - 1:3 * i:3 * i + 1:xtic(1) \
	title columnheader(3 * i - 1) linetype (word(lt_scaling, i) + 0), \
	1 with lines linecolor "black" linewidth 2 notitle
unset multiplot
