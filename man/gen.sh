#!/bin/sh
# SPDX-License-Identifier: MIT
# gen.sh OUTDIR VERSION PAGESDIR HEADER... - section 3 man pages from the
# page sources in PAGESDIR (*.man) and the public headers' prototypes.
#
# A page source is roff, split into pages by two tags in roff comments:
#   .\" @page NAME...   a page for the functions NAME... (the first names
#                       the page; each other gets a page that sources it,
#                       .so); its SYNOPSIS is made here, from the headers:
#                       #include <lfpool.h> and each function's prototype
#   .\" @topic NAME     a page about a type or a header: its SYNOPSIS is the
#                       source's own
# followed by `.\" @brief TEXT` (the NAME line's text) and the page's
# sections.  `.\" @example FILE` inserts FILE (a path in the source tree,
# PAGESDIR/../..) as an example: make check compiles and runs every one
# (man/local.mk, tests/cxx-header.sh).  A name
# that no header declares stops the build.  Writes OUTDIR/NAME.3 and
# OUTDIR/pages.list (every page, one a line).  tests/man-check.sh checks
# the pages' sections.  What the pages say is for users: how the library
# works inside stays in the headers' comments.
set -eu
out=$1 version=$2 pages=$3
shift 3
mkdir -p "$out"
awk -v out="$out" -v version="$version" -v top="$pages/../.." '
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function esc(s) {
	gsub(/\\/, "\\e", s)
	if (s ~ /^[.'"'"']/)
		s = "\\&" s
	return s
}
# Headers: every LFPOOL_API or static inline lfpool_* prototype, joined.
FILENAME ~ /\.h$/ && /^(LFPOOL_API |static inline )/ {
	decl = $0
	while (decl !~ /[;{]/ && (getline line) > 0)
		decl = decl " " trim(line)
	sub(/[ \t]*\{.*$/, ";", decl)
	sub(/[ \t]*\/\*.*\*\/[ \t]*;?$/, "", decl)
	sub(/;?$/, ";", decl)
	sub(/^LFPOOL_API /, "", decl)
	sub(/^static inline /, "", decl)
	gsub(/[ \t]+/, " ", decl)
	if (match(decl, /lfpool_[a-z0-9_]*\(/))
		proto[substr(decl, RSTART, RLENGTH - 1)] = trim(decl)
	next
}
FILENAME ~ /\.h$/ { next }
function finish() {
	if (page == "")
		return
	close(f)
	page = ""
}
function open_page(kind, line,   n, i, names) {
	finish()
	n = split(line, names, " ")
	page = names[1]
	f = out "/" page ".3"
	print page > (out "/pages.list")
	nnames = n
	for (i = 1; i <= n; i++) {
		pname[i] = names[i]
		if (kind == "page" && !(names[i] in proto)) {
			print "gen.sh: " FILENAME ": " names[i] " is declared in no header" > "/dev/stderr"
			failed = 1
		}
		if (i > 1) {
			print ".so man3/" page ".3" > (out "/" names[i] ".3")
			close(out "/" names[i] ".3")
			print names[i] > (out "/pages.list")
		}
	}
	pkind = kind
	need_head = 1
}
function head(brief,   i, list) {
	print ".TH " toupper(page) " 3 \"\" \"lfpool " version "\" \"lfpool Manual\"" > f
	print ".nh\n.ad l" > f
	print ".SH NAME" > f
	for (i = 1; i <= nnames; i++)
		list = list (i > 1 ? ", " : "") pname[i]
	print list " \\- " brief > f
	if (pkind != "page")
		return
	print ".SH SYNOPSIS" > f
	print ".nf\n.B #include <lfpool.h>\n.PP" > f
	for (i = 1; i <= nnames; i++)
		print esc(proto[pname[i]]) > f
	print ".fi" > f
}
/^\.\\" @page / { line = $0; sub(/^\.\\" @page /, "", line); open_page("page", line); next }
/^\.\\" @topic / { line = $0; sub(/^\.\\" @topic /, "", line); open_page("topic", line); next }
/^\.\\" @brief / { sub(/^\.\\" @brief /, ""); head($0); need_head = 0; next }
/^\.\\" @example / {
	ex = $0
	sub(/^\.\\" @example /, "", ex)
	print ".PP\nThis program is\n.I " ex "\nin the source tree (it runs in\n.BR \"make check\" ):" > f
	print ".PP\n.in +4n\n.EX" > f
	if ((getline l < (top "/" ex)) <= 0) {
		print "gen.sh: " FILENAME ": no example " top "/" ex > "/dev/stderr"
		failed = 1
	}
	close(top "/" ex)
	while ((getline l < (top "/" ex)) > 0)
		if (l !~ /SPDX-License-Identifier/) {
			gsub(/\t/, "    ", l)	# tab stops differ between pagers
			print esc(l) > f
		}
	close(top "/" ex)
	print ".EE\n.in" > f
	next
}
/^\.\\"/ { next }
page != "" {
	if (need_head) {
		print "gen.sh: " FILENAME ": page " page " has no @brief line" > "/dev/stderr"
		failed = 1
	}
	print > f
}
END { finish(); exit failed }
' "$@" "$pages"/*.man
sort -u "$out/pages.list" >"$out/pages.list.tmp"
mv "$out/pages.list.tmp" "$out/pages.list"
