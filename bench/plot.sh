#!/bin/sh
# SPDX-License-Identifier: MIT
# plot.sh DIR - draw DIR/scaling.png, DIR/ratios.png and DIR/memory.png
# from DIR/latest.jsonl (the output of lfpool-bench --out) with gnuplot.
set -eu
dir=$1
here=$(dirname "$0")
in=$dir/latest.jsonl
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (Debian: gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One awk program reads the JSON lines (ours: flat, one object per line)
# and writes gnuplot's data files.  Each implementation has a number, in
# the order it first appears, that picks its colour and marker in every
# plot (bench/style.gp); lfpool's are drawn solid, the peers' dashed.
#   scaling.dat  a block per implementation: threads, total Mops/s and its
#                min..max; scaling.lt its number and dash type per block
#   ratio-PANEL.dat  a row per peer, three columns per lfpool flavour
#                measured in that panel: lfpool's time over the peer's, and
#                its least and most over the repetitions (min over max,
#                max over min); for pair (1 thread), xthread and scaling at
#                the most threads; ratio-PANEL.lt the flavours' numbers
#   span         the ratios' range, 10^k..10^-k around 1, the same for
#                every panel
#   memory.dat   a block per implementation: step, phase, RSS (MiB above
#                the start) through the burst; memory.lt as scaling.lt
#   counts       the most threads, the blocks of scaling.dat and memory.dat
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
function number(impl) {
	if (!(impl in num))
		num[impl] = ++nnum
	return num[impl]
}
function dash(impl) { return impl ~ /^lfpool-/ ? 1 : 2 }
field("obj_size") == 64 { number(field("impl")) }
field("obj_size") == 64 && field("pattern") == "burst-rss" {
	impl = field("impl")
	nmem = remember(mem, nmem, impl)
	nrss++
	step[impl, field("step") + 0] = field("rss_mib")
	phase[field("step") + 0] = field("phase")
	if (field("step") + 0 > maxstep)
		maxstep = field("step") + 0
	next
}
# Results older than the burst-rss lines: start, peak and after trim only.
field("obj_size") == 64 && field("pattern") == "burst" {
	impl = field("impl")
	old[impl] = field("peak_mib") " " field("after_trim_mib")
	nold = remember(olds, nold, impl)
	next
}
field("obj_size") == 64 && field("threads") != "" {
	impl = field("impl"); pat = field("pattern"); thr = field("threads") + 0
	lfpool = impl ~ /^lfpool-/
	if (lfpool)
		nours = remember(ours, nours, impl)
	else
		npeers = remember(peers, npeers, impl)
	v = field("ns_per_op"); lo = field("min"); hi = field("max")
	if (lo == "" || hi == "")
		lo = hi = v
	if (pat == "scaling") {
		nscaled = remember(scaled, nscaled, impl)
		# Mops/s of all threads: threads x 1000 / ns, the fastest rep on top.
		mops[impl, thr] = field("mops_total") " " thr * 1000 / hi " " thr * 1000 / lo
		if (thr > maxthr)
			maxthr = thr
	}
	ns[pat, thr, impl] = v
	nsmin[pat, thr, impl] = lo
	nsmax[pat, thr, impl] = hi
}
function lg(x) { return log(x) / log(10) }
function widen(x) {
	if (x > 0 && (lg(x) > dev || -lg(x) > dev))
		dev = lg(x) > 0 ? lg(x) : -lg(x)
}
# A panel has three columns for each flavour measured in it, a row for each
# peer; ratio-NAME.lt lists the flavour number of each, for its colour.
function panel(name, pat, thr,   f, i, j, n, cols, lt, r, rlo, rhi) {
	f = tmp "/ratio-" name ".dat"
	printf "peer" > f
	for (j = 1; j <= nours; j++)
		if ((pat, thr, ours[j]) in ns) {
			cols[++n] = ours[j]
			printf " %s lo hi", ours[j] > f
			lt = lt (n > 1 ? " " : "") num[ours[j]]
		}
	printf "\n" > f
	print lt > (tmp "/ratio-" name ".lt")
	for (i = 1; i <= npeers; i++) {
		if (!((pat, thr, peers[i]) in ns))
			continue
		printf "%s", peers[i] > f
		for (j = 1; j <= n; j++) {
			r = ns[pat, thr, cols[j]] / ns[pat, thr, peers[i]]
			rlo = nsmin[pat, thr, cols[j]] / nsmax[pat, thr, peers[i]]
			rhi = nsmax[pat, thr, cols[j]] / nsmin[pat, thr, peers[i]]
			widen(rlo); widen(rhi)
			printf " %s %s %s", r, rlo, rhi > f
		}
		printf "\n" > f
	}
	close(f)
}
function memory(   f, i, impl, k, p, pv) {
	f = tmp "/memory.dat"
	if (nmem == 0) {
		split("start|all got|trimmed", p, "|")
		for (i = 1; i <= nold; i++) {
			mem[++nmem] = olds[i]
			split(old[olds[i]], pv, " ")
			step[olds[i], 0] = 0; step[olds[i], 4] = pv[1]; step[olds[i], 7] = pv[2]
		}
		phase[0] = p[1]; phase[4] = p[2]; phase[7] = p[3]; maxstep = 7
	}
	for (i = 1; i <= nmem; i++) {
		impl = mem[i]
		printf "%s\n", impl > f
		for (k = 0; k <= maxstep; k++)
			if ((impl, k) in step)
				printf "%d \"%s\" %s\n", k, phase[k], step[impl, k] > f
		printf "\n\n" > f
		printf "%d %d\n", num[impl], dash(impl) > (tmp "/memory.lt")
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
		printf "%d %d\n", num[scaled[i]], dash(scaled[i]) > (tmp "/scaling.lt")
	}
	close(f)
	dev = 0
	panel("pair", "pair", 1)
	panel("xthread", "xthread", 2)
	panel("scaling", "scaling", maxthr)
	k = int(dev) + (dev > int(dev))
	print (k < 1 ? 1 : k) > (tmp "/span")
	memory()
	print maxthr, nscaled, nmem, (nold && !nrss ? "old" : "new") > (tmp "/counts")
}' "$in"
read -r maxthr nscaled nmem kind < "$tmp/counts"
read -r span < "$tmp/span"
# Results from before the burst-rss lines read glibc after free() alone.
trimmed="lfpool: drain and trim; glibc: free, then malloc_trim(0)"
[ "$kind" = old ] && trimmed="lfpool: drain and trim; glibc: free"
# Each block's colour number and dash type, as gnuplot words.
lts() { awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }' "$1"; }
dts() { awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 }' "$1"; }

machine=$(sed -n '1s/^lfpool-bench: //p' "$dir/latest.txt" 2>/dev/null || true)
gnuplot -e "datadir='$tmp'; out='$dir/scaling.png'; machine='$machine'; nimpl=$nscaled; \
	lts='$(lts "$tmp/scaling.lt")'; dts='$(dts "$tmp/scaling.lt")'; style='$here/style.gp'" \
	"$here/scaling.gp"
gnuplot -e "datadir='$tmp'; out='$dir/ratios.png'; machine='$machine'; maxthr=$maxthr; \
	span=$span; style='$here/style.gp'; \
	lt_pair='$(cat "$tmp/ratio-pair.lt")'; lt_xthread='$(cat "$tmp/ratio-xthread.lt")'; \
	lt_scaling='$(cat "$tmp/ratio-scaling.lt")'" "$here/ratios.gp"
wrote="$dir/scaling.png and $dir/ratios.png"
if [ "$nmem" -gt 0 ]; then
	gnuplot -e "datadir='$tmp'; out='$dir/memory.png'; machine='$machine'; nimpl=$nmem; \
		lts='$(lts "$tmp/memory.lt")'; dts='$(dts "$tmp/memory.lt")'; \
		trimmed='$trimmed'; style='$here/style.gp'" "$here/memory.gp"
	wrote="$dir/scaling.png, $dir/ratios.png and $dir/memory.png"
fi
echo "plot.sh: wrote $wrote"
