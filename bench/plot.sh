#!/bin/sh
# SPDX-License-Identifier: MIT
# plot.sh DIR - draw DIR/scaling.png and DIR/ratios.png from DIR/latest.jsonl
# (the output of lfpool-bench --out) with gnuplot.
set -eu
dir=$1
here=$(dirname "$0")
in=$dir/latest.jsonl
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (Debian: gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One awk program reads the JSON lines (ours: flat, one object per line)
# and writes gnuplot's data files:
#   scaling.dat  a block per implementation: threads, total Mops/s
#   ratio-PANEL.dat  a row per peer, a column per lfpool flavour measured
#                in that panel: lfpool's time over the peer's, for pair
#                (1 thread), xthread and scaling at the most threads;
#                ratio-PANEL.lt the flavours' numbers, for their colours
#   counts       the most threads, the implementations in scaling.dat
awk -v tmp="$tmp" '
function field(name,   re, s) {
	re = "\"" name "\":(\"[^\"]*\"|[^,}]*)"
	if (!match($0, re))
		return ""
	s = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
	gsub(/"/, "", s)
	return s
}
function remember(list, n, name,   i) {
	for (i = 1; i <= n; i++)
		if (list[i] == name)
			return n
	list[n + 1] = name
	return n + 1
}
field("obj_size") == 64 {
	impl = field("impl"); pat = field("pattern"); thr = field("threads") + 0
	lfpool = impl ~ /^lfpool-/
	if (lfpool)
		nours = remember(ours, nours, impl)
	else
		npeers = remember(peers, npeers, impl)
	if (pat == "scaling") {
		nscaled = remember(scaled, nscaled, impl)
		mops[impl, thr] = field("mops_total")
		if (thr > maxthr)
			maxthr = thr
	}
	ns[pat, thr, impl] = field("ns_per_op")
}
# A panel has a column for each flavour measured in it, a row for each peer;
# ratio-NAME.lt lists the flavour number of each column, so that a flavour has
# the same colour in every panel.
function panel(name, pat, thr,   f, i, j, v, n, cols, lt) {
	f = tmp "/ratio-" name ".dat"
	printf "peer" > f
	for (j = 1; j <= nours; j++)
		if ((pat, thr, ours[j]) in ns) {
			cols[++n] = ours[j]
			printf " %s", ours[j] > f
			lt = lt (n > 1 ? " " : "") j
		}
	printf "\n" > f
	print lt > (tmp "/ratio-" name ".lt")
	for (i = 1; i <= npeers; i++) {
		if (!((pat, thr, peers[i]) in ns))
			continue
		printf "%s", peers[i] > f
		for (j = 1; j <= n; j++)
			printf " %s", ns[pat, thr, cols[j]] / ns[pat, thr, peers[i]] > f
		printf "\n" > f
	}
	close(f)
}
END {
	f = tmp "/scaling.dat"
	for (i = 1; i <= nscaled; i++) {
		printf "%s\n", scaled[i] > f
		for (t = 1; t <= maxthr; t++)
			if ((scaled[i], t) in mops)
				printf "%d %s\n", t, mops[scaled[i], t] > f
		printf "\n\n" > f
	}
	close(f)
	panel("pair", "pair", 1)
	panel("xthread", "xthread", 2)
	panel("scaling", "scaling", maxthr)
	print maxthr, nscaled > (tmp "/counts")
}' "$in"
read maxthr nscaled < "$tmp/counts"

machine=$(sed -n '1s/^lfpool-bench: //p' "$dir/latest.txt" 2>/dev/null || true)
gnuplot -e "datadir='$tmp'; out='$dir/scaling.png'; machine='$machine'; nimpl=$nscaled" \
	"$here/scaling.gp"
gnuplot -e "datadir='$tmp'; out='$dir/ratios.png'; machine='$machine'; maxthr=$maxthr; \
	lt_pair='$(cat "$tmp/ratio-pair.lt")'; lt_xthread='$(cat "$tmp/ratio-xthread.lt")'; \
	lt_scaling='$(cat "$tmp/ratio-scaling.lt")'" "$here/ratios.gp"
echo "plot.sh: wrote $dir/scaling.png and $dir/ratios.png"
