#!/bin/sh
# SPDX-License-Identifier: MIT
# layers.sh - the layering rule of lib/, checked on the built objects.
#
# For each object file of liblfpool (found through the lib/**/*.lo files of
# the build directory whose source is still in $srcdir/lib), nm says which
# global symbols it defines and which it uses undefined.  A use in file A of
# a symbol that file B defines is a call (or a data reference) from A to B.
# The check fails on
#   - a circle of calls among files (A -> B -> ... -> A), and
#   - a call from a file on a lower floor to one on a higher floor,
# and on a file of lib/ that has no floor below.  HACKING.md draws the same
# floors; keep the two in step.  A call through a function pointer is one
# nm cannot see: the check also fails on a function pointer that lib/'s
# sources keep (kept_pointers below).  It also fails when a public header
# (include/) names the stress suite's hooks or their switch, which live in
# lib/stress_hooks.h, beneath the public face (a comment may still cite a
# scenario or a Spin model of stress/ as evidence), and when two source
# files of lib/ and include/ share a file name.
#
#   tests/layers.sh              run by make check, from the build directory
#   tests/layers.sh --graph      print every file-to-file edge with its symbols
#   tests/layers.sh --self-test  feed a made-up table with a circle and an
#                                upward call, and made-up sources with kept
#                                function pointers, and made-up paths that
#                                share a name; succeeds only if all are
#                                caught
set -u
srcdir=${srcdir:-.}
NM=${LFPOOL_NM:-nm}

# The floors, lowest first: a file may call its own floor and those below.
# Names are paths below lib/ without the extension.  HACKING.md's table
# says what each floor is.
floors='
0 slab stack debug fork threadstatic/fence threadstatic/grace threadstatic/percpu
1 core census
2 pool concurrent threadstatic/depot
3 threadstatic/steal threadstatic/cache threadstatic/tls threadstatic/worker threadstatic/ts_percpu threadstatic/threadstatic threadstatic/validate
4 layers/flavour layers/array layers/closure layers/rc
'

# symbols: "FILE D|U SYMBOL" for every object of the library, and one
# "FILE O -" line per object.
symbols() {
	n=0
	for lo in $(find lib -name '*.lo' | LC_ALL=C sort); do
		dir=${lo%/*}
		base=${lo##*/}
		base=${base%.lo}
		name=${dir#lib}/${base#liblfpool_la-}
		name=${name#/}
		[ -f "$srcdir/lib/$name.c" ] || [ -f "$srcdir/lib/$name.S" ] || continue
		obj=$(sed -n "s/^pic_object='\(.*\)'$/\1/p" "$lo")
		[ -n "$obj" ] && [ "$obj" != none ] ||
			obj=$(sed -n "s/^non_pic_object='\(.*\)'$/\1/p" "$lo")
		if [ ! -f "$dir/$obj" ]; then
			echo "layers.sh: $lo names $dir/$obj, which is not there" >&2
			return 1
		fi
		echo "$name O -"	# the file, even with no global symbol
		$NM -P "$dir/$obj" | awk -v f="$name" '
			$2 == "U" || $2 == "w" { print f, "U", $1; next }
			$2 ~ /^[TDBRCVGSWui]$/ { print f, "D", $1 }'
		n=$((n + 1))
	done
	if [ "$n" -lt 10 ]; then
		echo "layers.sh: found $n objects of liblfpool under $(pwd)/lib; build first" >&2
		return 1
	fi
}

# check [--graph]: read the symbol table on stdin; print edges and verdict.
check() {
	awk -v mode="${1:-check}" -v floors="$floors" '
	BEGIN {
		nf = split(floors, fl, "\n")
		for (i = 1; i <= nf; i++) {
			k = split(fl[i], w, " ")
			for (j = 2; j <= k; j++)
				floor[w[j]] = w[1] + 0
		}
	}
	{ files[$1] = 1 }
	$2 == "D" { def[$3] = $1; next }
	$2 == "U" { use[++nu] = $1 " " $3 }
	END {
		bad = 0
		for (f in files)
			if (!(f in floor)) {
				printf "lib/%s has no floor in tests/layers.sh (and HACKING.md): add it\n", f
				bad = 1
			}
		for (i = 1; i <= nu; i++) {
			split(use[i], w, " ")
			from = w[1]; s = w[2]
			if (!(s in def) || def[s] == from)
				continue
			to = def[s]
			e = from " " to
			if (!(e in syms))
				edge[++ne] = e
			syms[e] = syms[e] " " s
			reach[from, to] = 1
		}
		if (mode == "graph") {
			for (i = 1; i <= ne; i++)
				print edge[i] ":" syms[edge[i]]
			exit 0
		}
		# Upward calls.
		for (i = 1; i <= ne; i++) {
			split(edge[i], w, " ")
			if ((w[1] in floor) && (w[2] in floor) && floor[w[1]] < floor[w[2]]) {
				printf "upward call: lib/%s (floor %d) uses%s of lib/%s (floor %d)\n",
					w[1], floor[w[1]], syms[edge[i]], w[2], floor[w[2]]
				bad = 1
			}
		}
		# Circles: the transitive closure, then files that reach each other.
		for (k in files)
			for (i in files)
				if ((i, k) in reach)
					for (j in files)
						if ((k, j) in reach)
							reach[i, j] = 1
		for (i in files) {
			if (!((i, i) in reach) || (i in circle))
				continue
			members = ""
			for (j in files)
				if ((i, j) in reach && (j, i) in reach) {
					members = members " lib/" j
					circle[j] = i
				}
			printf "circle of calls among%s:\n", members
			for (e = 1; e <= ne; e++) {
				split(edge[e], w, " ")
				if ((w[1] in circle) && (w[2] in circle) &&
				    circle[w[1]] == i && circle[w[2]] == i)
					printf "  lib/%s -> lib/%s:%s\n", w[1], w[2], syms[edge[e]]
			}
			bad = 1
		}
		n = 0
		for (f in files)
			n++
		if (bad)
			print "layers: FAIL (" n " files, " ne " edges)"
		else
			print "layers: no circle, no upward call (" n " files, " ne " edges)"
		exit bad
	}'
}

# kept_pointers: of the lines "FILE:LINE:TEXT" on stdin (lib/'s sources),
# those that declare a function pointer kept in memory: a struct member or
# a variable, spelled out ("void *(*on_empty)(struct x *);") or of a
# function-pointer type that these lines declare.  nm sees no call through
# one, so a lower floor that keeps a pointer filled by a higher one would
# call up unseen (HACKING.md, "Floors"): lib/ keeps none.  Not kept: a
# parameter (a callback for the length of one call), an extern declaration
# of another program's variable (the stress suite's hook), and the public
# types of include/ (the user's hooks and allocators).  One line at a time:
# a declaration split over lines escapes, as nested parentheses do.
kept_pointers() {
	awk '
	{
		line[NR] = $0
		text = $0
		sub(/^[^:]*:[0-9]*:/, "", text)
		code[NR] = text
		if (text ~ /^[ \t]*typedef[^;]*\(\*[ \t]*[A-Za-z_][A-Za-z_0-9]*\)/) {
			t = text
			sub(/^[^(]*\(\*[ \t]*/, "", t)
			sub(/\).*/, "", t)
			fntype[t] = 1
		}
	}
	END {
		for (i = 1; i <= NR; i++) {
			s = code[i]
			if (s ~ /^[ \t]*(extern|typedef)[ \t]/)
				continue
			if (s ~ /^[ \t]*(static[ \t]+)?(const[ \t]+)?[A-Za-z_][A-Za-z_0-9 \t*]*\(\*[ \t]*[A-Za-z_][A-Za-z_0-9]*\)[ \t]*\([^()]*\)[ \t]*(=[^;]*)?;/) {
				print line[i]
				continue
			}
			if (s ~ /\(/ || s !~ /;/)
				continue
			w = s
			sub(/^[ \t]*(static[ \t]+)?(const[ \t]+)?/, "", w)
			sub(/[ \t*].*/, "", w)
			if (w in fntype)
				print line[i]
		}
	}'
}

# lib_lines: every line of lib/'s C sources, as "FILE:LINE:TEXT".
lib_lines() {
	find "$srcdir/lib" -name '*.[ch]' | LC_ALL=C sort | xargs grep -n '' /dev/null
}

# public_face: the lines of include/ that name the stress suite's hooks
# or their switch.
public_face() {
	grep -rn -E 'lfp_stress|lfp_yield|LFPOOL_STRESS|stress_hooks|LFP_YIELD|LFP_Y\(|LFP_YV\(' \
		"$srcdir/include"
}

# same_names: of the paths on stdin (lib/'s and include/'s sources), those
# whose file name another path uses too, "NAME: PATH PATH...": two files
# of one name make a reader (and an #include "name") guess which.
same_names() {
	awk '{ n = $0; sub(/.*\//, "", n); paths[n] = paths[n] " " $0; count[n]++ }
	     END { for (n in count) if (count[n] > 1) print n ":" paths[n] }' | LC_ALL=C sort
}

# source_paths: lib/'s and include/'s sources, relative to $srcdir.
source_paths() {
	(cd "$srcdir" && find lib include -name '*.[chS]') | LC_ALL=C sort
}

# Made-up paths: stack.h twice (a private and a public one), core.c once.
self_test_names() {
	out=$(printf '%s\n' lib/stack.h include/lfpool/impl/stack.h lib/core.c lib/core.h | same_names)
	echo "$out" | sed 's/^/self-test: name: /'
	[ "$out" = "stack.h: lib/stack.h include/lfpool/impl/stack.h" ]
}

# Made-up sources: two kept pointers (a member of a typedef'd type, one
# spelled out) and four that are not (a parameter, a parameter split over
# lines, an extern, the typedef itself).
self_test_kept() {
	out=$(printf '%s\n' \
		'lib/a.h:1:typedef void *(*lfp_x_empty_fn)(struct lfp_x *x);' \
		'lib/a.h:2:	lfp_x_empty_fn on_empty;' \
		'lib/a.h:3:	void (*on_full)(struct lfp_x *x, void *obj);' \
		'lib/a.h:4:void lfp_x_drain(struct lfp_x *x, void (*fn)(void *obj, void *ctx), void *ctx);' \
		'lib/a.h:5:		  void (*give)(void *ctx, void *const *objs, size_t n), void *ctx);' \
		'lib/a.h:6:extern void (*lfp_stress_yield)(void);' | kept_pointers)
	echo "$out" | sed 's/^/self-test: kept: /'
	[ "$(echo "$out" | wc -l)" -eq 2 ] &&
		echo "$out" | grep -q '^lib/a.h:2:' && echo "$out" | grep -q '^lib/a.h:3:'
}

# A made-up library: slab -> core is an upward call and, with core -> slab,
# a circle; pool -> core is fine.  The check must fail and name both.
self_test() {
	self_test_kept || return 1
	self_test_names || return 1
	out=$(printf '%s\n' \
		'core D lfp_core_init' 'core U lfp_slabs_init' \
		'slab D lfp_slabs_init' 'slab U lfp_core_init' \
		'pool D lfpool_pool_get' 'pool U lfp_core_init' | check)
	rc=$?
	echo "$out" | sed 's/^/self-test: /'
	[ $rc -ne 0 ] &&
		echo "$out" | grep -q '^upward call: lib/slab (floor 0) uses lfp_core_init of lib/core' &&
		echo "$out" | grep -q '^circle of calls among' &&
		echo "$out" | grep -q 'lib/core -> lib/slab: lfp_slabs_init' &&
		! echo "$out" | grep -q 'lib/pool ->'
}

case ${1:-} in
--self-test)
	self_test
	;;
--graph)
	table=$(symbols) || exit 1
	echo "$table" | check graph
	;;
'')
	if ! self_test >/dev/null; then
		echo "layers.sh: the self-test did not catch a made-up circle, kept pointer or shared name; the check is broken"
		self_test
		exit 1
	fi
	table=$(symbols) || exit 1
	echo "$table" | check || exit 1
	kept=$(lib_lines | kept_pointers)
	if [ -n "$kept" ]; then
		echo "$kept"
		echo "layers: lib/ keeps a function pointer (above), an upward call nm cannot see:" \
		     "pass it down for one call or move the code (HACKING.md, \"Floors\")"
		exit 1
	fi
	same=$(source_paths | same_names)
	if [ -n "$same" ]; then
		echo "$same"
		echo "layers: two source files of lib/ and include/ share a name (above): name each for what it holds"
		exit 1
	fi
	if public_face; then
		echo "layers: a public header names the stress hooks (lib/stress_hooks.h is their place)"
		exit 1
	fi
	;;
*)
	echo "usage: layers.sh [--graph | --self-test]" >&2
	exit 2
	;;
esac
