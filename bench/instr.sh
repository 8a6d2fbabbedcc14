#!/bin/sh
# SPDX-License-Identifier: MIT
# instr.sh BENCH DIR - instructions and atomic instructions per operation of
# every implementation's single-thread patterns, counted by callgrind;
# writes DIR/instr.jsonl and prints a table and the instruction targets.
#
# Each pattern runs twice, with N1 and N2 operations (gets and puts):
# (I2 - I1) / (N2 - N1) is the cost of one operation, with start-up, setup
# and teardown cancelling.  Atomic read-modify-writes (lock-prefixed
# instructions and xchg with memory) are counted the same way: callgrind
# reports how often each instruction ran (--dump-instr), objdump says which
# instructions are atomic.
set -eu
bench=$1
dir=$2
case "${BENCH_QUICK:-0}" in
0) n1=65536 n2=327680 ;;
*) n1=16384 n2=65536 ;;
esac
command -v valgrind >/dev/null || { echo "instr.sh: valgrind not found" >&2; exit 1; }
command -v objdump >/dev/null || { echo "instr.sh: objdump not found (binutils)" >&2; exit 1; }
# The program re-executes itself to make room for jemalloc's TLS unless
# this is set; callgrind would not follow the re-execution.
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=16384"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$dir/instr.jsonl
: > "$out"
: > "$tmp/rows"

# atomics OBJECT: "address mnemonic" of each atomic instruction in OBJECT,
# addresses as callgrind writes them (0x, lowercase, no leading zeros);
# cached per object.
atomics() {
	key=$(printf '%s' "$1" | tr -c 'A-Za-z0-9' '_')
	if [ ! -f "$tmp/atomics.$key" ]; then
		objdump -d --no-show-raw-insn "$1" 2>/dev/null | awk '
			/^ *[0-9a-f]+:\t/ && ($0 ~ /\tlock / || $0 ~ /\txchg [^,]*\(|\txchg .*,.*\(/) {
				addr = $1; sub(/:$/, "", addr); sub(/^0+/, "", addr)
				split($0, f, "\t"); split(f[2], w, " ")
				m = w[1] == "lock" ? "lock " w[2] : w[1]
				print "0x" addr, m
			}' > "$tmp/atomics.$key"
	fi
	cat "$tmp/atomics.$key"
}

# run IMPL PATTERN N: "instructions atomics cas path" of one run of N
# operations; path is the per-CPU path the program reports, or "-".  (rseq
# does not run under valgrind: per-CPU pools take their fallback there.)
run() {
	valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
		--callgrind-out-file="$tmp/cg" "$bench" --instr "$3" --impl "$1" --pattern "$2" \
		2> "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
	total=$(sed -n 's/.*Collected : *//p' "$tmp/log")
	path=$(sed -n 's/.*runs the \([a-z_]*\) path.*/\1/p' "$tmp/log")
	# Executions of each (object, address); the line after calls= is the
	# inclusive cost of a call, not an execution of that address.
	awk '/^ob=/ { ob = substr($0, 4) }
	     /^calls=/ { skip = 1; next }
	     /^0x/ { if (!skip) n[ob " " $1] += $NF; skip = 0 }
	     END { for (k in n) print k, n[k] }' "$tmp/cg" > "$tmp/counts"
	: > "$tmp/atomic-list"
	for ob in $(cut -d' ' -f1 "$tmp/counts" | sort -u); do
		[ -f "$ob" ] && atomics "$ob" | sed "s|^|$ob |" >> "$tmp/atomic-list"
	done
	awk -v total="$total" -v path="${path:--}" 'NR == FNR { kind[$1 " " $2] = $3 " " $4; next }
		($1 " " $2) in kind { a += $3; if (kind[$1 " " $2] ~ /cmpxchg/) c += $3 }
		END { printf "%s %d %d %s\n", total, a, c, path }' "$tmp/atomic-list" "$tmp/counts"
}

"$bench" --list > "$tmp/list" 2> "$tmp/unavailable" || { cat "$tmp/unavailable" >&2; exit 1; }
sed 's/^/instr.sh: /' "$tmp/unavailable" >&2
printf '%-20s %-8s %14s %14s %14s %s\n' impl pattern instr/op atomics/op cmpxchg/op path
while read -r impl pattern; do
	set -- $(run "$impl" "$pattern" $n1) $(run "$impl" "$pattern" $n2)
	awk -v impl="$impl" -v pat="$pattern" -v d=$((n2 - n1)) -v out="$out" \
	    -v i1="$1" -v a1="$2" -v c1="$3" -v i2="$5" -v a2="$6" -v c2="$7" -v path="$4" \
	    -v rows="$tmp/rows" '
	function per_op(x1, x2,   v) {	# no "-0.000" from a count that moved by one
		v = (x2 - x1) / d
		return v < 0.0005 && v > -0.0005 ? 0 : v
	}
	BEGIN {
		i = per_op(i1, i2); a = per_op(a1, a2); c = per_op(c1, c2)
		extra = path == "-" ? "" : sprintf(",\"path\":\"%s\"", path)
		printf "{\"impl\":\"%s\",\"pattern\":\"%s\",\"instr_per_op\":%.2f,\"atomics_per_op\":%.3f,\"cas_per_op\":%.3f%s}\n", \
			impl, pat, i, a, c, extra >> out
		printf "%s %s %.2f %.3f\n", impl, pat, i, c >> rows
		printf "%-20s %-8s %14.2f %14.3f %14.3f %s\n", impl, pat, i, a, c, path == "-" ? "" : path
	}'
done < "$tmp/list"

# The per-CPU pool's inline restartable sequences do not run under
# valgrind (it cannot register rseq, so the rows above are the fallback).
# Their hit path is counted from the disassembly instead: in ts_pair, the
# loop the lfpool-percpu rows run, the shortest loop iteration through the
# first imul that runs exactly two (the get's and the put's sequence) and
# no call, i.e. the instructions of one hit get+put with the loop's own.
rseq_pair=$(objdump -d --no-show-raw-insn "$bench" | awk '/<ts_pair>:/,/^$/' | awk '
# Shortest loop iteration through the first imul of the function that
# runs exactly two imul (two per-CPU sequences: a get and a put) and no
# call; prints its instruction count.
/^ *[0-9a-f]+:\t/ {
	addr = $1; sub(/:$/, "", addr)
	split($0, f, "\t"); split(f[2], w, " ")
	n++; A[n] = addr; M[n] = w[1]; idx[addr] = n
	T[n] = ""
	if (w[1] ~ /^j/ && f[2] ~ /[0-9a-f]+ </) {
		t = f[2]; sub(/^[a-z]+ +/, "", t); sub(/ .*/, "", t); T[n] = t
	}
}
END {
	for (i = 1; i <= n; i++) if (M[i] == "imul") { s = i; break }
	if (!s) { print "none"; exit }
	head = 1; tail = 0
	tail++; QI[tail] = s; QC[tail] = 1; QL[tail] = 1
	while (head <= tail) {
		i = QI[head]; c = QC[head]; l = QL[head]; head++
		m = M[i]
		if (m ~ /^call/ || m ~ /^ret/) continue
		ns = 0
		if (m != "jmp" && i < n) succ[++ns] = i + 1
		if (T[i] != "" && (T[i] in idx)) succ[++ns] = idx[T[i]]
		for (k = 1; k <= ns; k++) {
			j = succ[k]
			if (j == s) { if (c == 2) { print l; exit } continue }
			cj = c + (M[j] == "imul")
			if (cj > 2 || seen[j, cj]++) continue
			tail++; QI[tail] = j; QC[tail] = cj; QL[tail] = l + 1
		}
	}
	print "none"
}
')
case "$rseq_pair" in
none|"") echo "instr.sh: no inline rseq sequence in ts_pair (not built for it)" >&2 ;;
*)	awk -v i="$rseq_pair" -v out="$out" -v rows="$tmp/rows" 'BEGIN {
		printf "{\"impl\":\"lfpool-percpu\",\"pattern\":\"pair\",\"instr_per_op\":%.2f,\"atomics_per_op\":0,\"cas_per_op\":0,\"path\":\"rseq-inline\",\"method\":\"disassembly\"}\n", i / 2 >> out
		printf "lfpool-percpu-rseq pair %.2f 0\n", i / 2 >> rows
		printf "%-20s %-8s %14.2f %14.3f %14.3f %s\n", "lfpool-percpu", "pair", i / 2, 0, 0, "rseq inline (disassembly)"
	}' ;;
esac

# The instruction targets (Pool, ThreadStatic, per-CPU, Concurrent, array
# pools against the floor or their peer), from the rows just measured.
awk '$2 == "pair" { ip[$1] = $3; cas[$1] = $4 }
function verdict(what, num, den, limit) {
	if (!(num in ip) || !(den in ip))
		printf "  %-58s    n/a  (not measured)\n", what
	else
		printf "  %-58s %6.2f  %s\n", what, ip[num] / ip[den], ip[num] / ip[den] <= limit ? "met" : "MISSED"
}
END {
	print "\n== targets (instructions per get or put, pair, 64 B)"
	verdict("lfpool-pool/floor instructions <= 1.1", "lfpool-pool", "floor", 1.1)
	verdict("lfpool-threadstatic/floor instructions <= 1.3", "lfpool-threadstatic", "floor", 1.3)
	verdict("lfpool-cache/floor instructions <= 1.3", "lfpool-cache", "floor", 1.3)
	verdict("lfpool-percpu/threadstatic <= 1.5 (valgrind: no rseq)", "lfpool-percpu", "lfpool-threadstatic", 1.5)
	verdict("lfpool-percpu rseq inline/floor (disassembly; info)", "lfpool-percpu-rseq", "floor", 1e9)
	verdict("lfpool-concurrent/ck_stack instructions <= 1.5", "lfpool-concurrent", "ck_stack", 1.5)
	verdict("lfpool-array/lfpool-cache instructions (info)", "lfpool-array", "lfpool-cache", 1e9)
	verdict("lfpool-array-const/lfpool-cache instructions (info)", "lfpool-array-const", "lfpool-cache", 1e9)
	if ("lfpool-concurrent" in cas)
		printf "  %-58s %6.2f  %s\n", "lfpool-concurrent CAS per uncontended get+put == 2", \
			2 * cas["lfpool-concurrent"], 2 * cas["lfpool-concurrent"] == 2 ? "met" : "MISSED"
}' "$tmp/rows"
echo "instr.sh: wrote $out"
