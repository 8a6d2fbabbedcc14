#!/bin/sh
# SPDX-License-Identifier: MIT
# gen.sh OUTDIR VERSION HEADER... - section 3 man pages from the public
# headers' comments: one page per header (its leading comment: design,
# synchronization table, errors) and one per public function (its
# prototype and the comment right above it, or the comment of the group of
# declarations it belongs to, and a comment at the end of its line).
# Public functions: every LFPOOL_API declaration and every static inline
# lfpool_* definition whose name does not end in "_" (internal).  Writes
# OUTDIR/NAME.3 and OUTDIR/pages.list (every page, one a line).  A
# function without a comment gets a page without a description, which
# tests/man-check.sh refuses.
set -eu
out=$1 version=$2
shift 2
mkdir -p "$out"
: >"$out/pages.list.tmp"
# The header pages' names: include/lfpool/pool.h is lfpool_pool(3).
headers=$(for h in "$@"; do echo "$h"; done | sed 's|.*include/||; s|\.h$||; s|/|_|g' | tr '\n' ' ')
for h in "$@"; do
	awk -v out="$out" -v version="$version" -v list="$out/pages.list.tmp" -v headers="$headers" '
function esc(s) {
	gsub(/\\/, "\\e", s)
	if (s ~ /^[.'"'"']/)
		s = "\\&" s
	return s
}
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
# The text of a comment line: without the comment marks and the " * ".
function comment_text(s) {
	sub(/^[ \t]*\/\*+ ?/, "", s)
	sub(/[ \t]*\*+\/[ \t]*$/, "", s)
	sub(/^[ \t]*\* ?/, "", s)
	return s
}
function header_page(   f, i, n, hp) {
	f = out "/" page ".3"
	print ".TH " toupper(page) " 3 \"\" \"lfpool " version "\" \"lfpool Manual\"" > f
	print ".nh\n.ad l" > f
	print ".SH NAME" > f
	print page " \\- " esc(summary) > f
	print ".SH SYNOPSIS" > f
	print ".nf\n.B #include <lfpool.h>\n.fi" > f
	print ".SH DESCRIPTION" > f
	print ".nf" > f
	for (i = 1; i <= noverview; i++)
		print esc(overview[i]) > f
	print ".fi" > f
	if (nfn) {
		print ".SH FUNCTIONS" > f
		for (i = 1; i <= nfn; i++)
			print ".BR " fn[i] " (3)" (i < nfn ? "," : "") > f
	}
	print ".SH SEE ALSO" > f
	if (page == "lfpool") {
		n = split(headers, hp, " ")
		for (i = 1; i <= n; i++)
			if (hp[i] != "lfpool")
				print ".BR " hp[i] " (3)" (i < n ? "," : "") > f
	} else {
		print ".BR lfpool (3)" > f
	}
	close(f)
	print page >> list
}
function fn_page(name, proto, desc, group, inline,   f, first, n, paras, i, words) {
	f = out "/" name ".3"
	first = first_sentence(desc)
	if (substr(first, 2, 1) ~ /[a-z ]/)
		first = tolower(substr(first, 1, 1)) substr(first, 2)
	print ".TH " toupper(name) " 3 \"\" \"lfpool " version "\" \"lfpool Manual\"" > f
	print ".nh\n.ad l" > f
	print ".SH NAME" > f
	print name " \\- " esc(first) > f
	print ".SH SYNOPSIS" > f
	print ".nf\n.B #include <lfpool.h>\n.PP" > f
	print esc(proto) > f
	print ".fi" > f
	print ".SH DESCRIPTION" > f
	n = split(desc, paras, "\n")
	for (i = 1; i <= n; i++)
		if (paras[i] != "")
			print (i > 1 ? ".PP\n" : "") esc(paras[i]) > f
	if (inline)
		print ".PP\nInline: the header defines it, and it compiles into the caller." > f
	print ".PP\nHow the flavour works, its synchronization table and its errors: " > f
	print ".BR " page " (3)." > f
	print ".SH SEE ALSO" > f
	print ".BR " page " (3)" (group != "" ? "," : "") > f
	n = split(group, words, " ")
	for (i = 1; i <= n; i++)
		print ".BR " words[i] " (3)" (i < n ? "," : "") > f
	close(f)
	print name >> list
}
BEGIN { in_comment = 0; state = "top"; noverview = 0; nfn = 0 }
FNR == 1 {
	page = FILENAME
	sub(/.*include\//, "", page)
	sub(/\.h$/, "", page)
	gsub(/\//, "_", page)
}
# Skip the bodies of inline functions and macros.
state == "body" { if ($0 ~ /^}/) state = "code"; next }
/\\$/ { macro = 1; next }
macro { macro = 0; next }
in_comment {
	text = comment_text($0)
	if ($0 ~ /\*\//) {
		in_comment = 0
		if (text != "") cbuf = cbuf (cbuf != "" ? "\n" : "") text
		finish_comment()
	} else {
		cbuf = cbuf (cbuf != "" ? "\n" : "") text
	}
	next
}
/SPDX-License-Identifier/ { next }
/^[ \t]*\/\*/ {
	cbuf = comment_text($0)
	if ($0 ~ /\*\//)
		finish_comment()
	else
		in_comment = 1
	next
}
/^(LFPOOL_API |static inline )/ {
	start = FNR
	decl = $0
	while (decl !~ /[;{]/ && (getline line) > 0)
		decl = decl " " trim(line)
	tail = ""
	if (match(decl, /\/\*.*\*\//)) {
		tail = trim(substr(decl, RSTART + 2, RLENGTH - 4))
		decl = substr(decl, 1, RSTART - 1)
	}
	body = decl ~ /\{/
	sub(/[ \t]*\{.*$/, ";", decl)
	sub(/^LFPOOL_API /, "", decl)
	is_inline = sub(/^static inline /, "", decl)
	gsub(/[ \t]+/, " ", decl)
	decl = trim(decl)
	if (body) state = "body"
	if (!match(decl, /lfpool_[a-z0-9_]*\(/))
		next
	name = substr(decl, RSTART, RLENGTH - 1)
	if (name ~ /_$/) { prev_end = FNR; next }
	if (lastc_end == start - 1) {
		group_desc = lastc
		ngroup = 0
	} else if (prev_end != start - 1) {
		group_desc = ""
		ngroup = 0
	}
	desc = group_desc
	if (tail != "") desc = desc (desc != "" ? "\n" : "") tail
	# Comment lines joined into paragraphs (a blank line ends one).
	gsub(/\n\n+/, "\001", desc); gsub(/\n/, " ", desc); gsub(/\001/, "\n", desc)
	ngroup++
	gname[ngroup] = name
	nfn++
	fn[nfn] = name
	fproto[nfn] = decl
	fdesc[nfn] = desc
	finline[nfn] = is_inline
	fgroup_start[nfn] = nfn - ngroup + 1
	prev_end = FNR
	next
}
/[^ \t]/ { if (state == "top") state = "code" }
END {
	header_page()
	for (i = 1; i <= nfn; i++) {
		# The group: every function declared with this one under one comment.
		grp = ""
		for (j = fgroup_start[i]; j <= nfn && (j == fgroup_start[i] || fgroup_start[j] == fgroup_start[i]); j++)
			if (j != i) grp = grp " " fn[j]
		fn_page(fn[i], fproto[i], fdesc[i], trim(grp), finline[i])
	}
}
# Text up to its first full stop (not the one of "e.g." or "i.e."),
# without it.
function first_sentence(t) {
	gsub(/e\.g\./, "e\001g\001", t)
	gsub(/i\.e\./, "i\001e\001", t)
	if (match(t, /\. /))
		t = substr(t, 1, RSTART - 1)
	sub(/\.$/, "", t)
	gsub(/\001/, ".", t)
	return t
}
function finish_comment(   i, n, lines) {
	if (state == "top" && noverview == 0) {
		n = split(cbuf, lines, "\n")
		for (i = 1; i <= n; i++)
			overview[++noverview] = lines[i]
		# The first sentence of the first paragraph, over as many lines as it takes.
		summary = ""
		for (i = 1; i <= n && overview[i] != ""; i++)
			summary = summary (summary != "" ? " " : "") overview[i]
		sub(/^[^ ]+ - /, "", summary)
		summary = first_sentence(summary)
		state = "code"
	}
	lastc = cbuf
	lastc_end = FNR
}
' "$h"
done
sort -u "$out/pages.list.tmp" >"$out/pages.list"
rm -f "$out/pages.list.tmp"
