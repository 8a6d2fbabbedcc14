# SPDX-License-Identifier: MIT
# style.gp - one colour and one marker per implementation, the same in
# every plot: linetype N is the implementation numbered N by plot.sh (in
# the order of the results).  24 colours that differ on a white page, and
# 15 markers (after the 15th they repeat, with another colour); plot.sh
# dashes the peers' lines, lfpool's are solid.
array colours[24] = [ \
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", \
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#000080", \
	"#b8860b", "#006400", "#8b0000", "#ff00ff", "#4b0082", "#00ced1", \
	"#808000", "#ff1493", "#2f4f4f", "#a0522d", "#7cfc00", "#4682b4"]
do for [i = 1:24] {
	set linetype i linecolor rgb colours[i] pointtype (i - 1) % 15 + 1 pointsize 1.2
}
