#!/bin/sh
# SPDX-License-Identifier: MIT
# The tree speaks of the project only: measurements are named by date,
# commit and CPU, never by the working period they came from, and a change
# is named by what it does, never by a number in an issue tracker ("fixes
# issue" and a number, also when the number starts the next line).  A file
# that does either fails make check.  The words are assembled here so that
# this file does not name them.  Negative controls: each check must find
# the lines written to break it in a scratch tree, and pass over the
# tracker's word used as a verb, or the check proves nothing.
srcdir=${srcdir:-.}
period='sess''ions\{0,1\}'
tree="include lib tests stress bench examples cmake man README.md NEWS HACKING.md
	run.sh configure.ac Makefile.am"

# files DIR: the tree's files under DIR that the checks read.
files() {
	(cd "$1" && find $tree -type f ! -name '*.jsonl' ! -name '*.png' \
		! -path '*/_build*' ! -path '*/autom4te.cache/*' 2>/dev/null)
}

# periods DIR: the lines under DIR that name a working period.
periods() {
	(cd "$1" && files . | xargs -r grep -n -i -w -e "$period" 2>/dev/null)
}

# trackers DIR: the lines under DIR that name a tracker's number, on one
# line or with the number at the start of the next (after a comment's
# leader).
trackers() {
	(cd "$1" && files . | xargs -r awk '
		FNR == 1 { prev = "" }
		{ l = tolower($0) }
		l ~ /(^|[^a-z])iss''ues? *#?[0-9]/ { print FILENAME ":" FNR ":" $0 }
		prev ~ /(^|[^a-z])iss''ues? *#?$/ && l ~ /^[ \t]*([*#;]|\/\/|--)?[ \t]*[0-9]/ {
			print FILENAME ":" FNR ":" $0
		}
		{ prev = l }' 2>/dev/null)
}

# The negative controls, in a scratch tree laid out like the real one.
scratch=$(mktemp -d) || exit 99
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/lib" "$scratch/bench"
printf '%s\n' "/* measured in this sess""ion */" >"$scratch/lib/period.c"
printf '%s\n' "fixed (Iss""ue 8)" "as iss""ues 5 and 8 ask" "see iss""ue #12" \
	>"$scratch/NEWS"
printf '%s\n' "/* the walks of the iss""ue" " * 14 are gone */" >"$scratch/bench/wrap.c"
printf '%s\n' "/* both loads iss""ue at once */" "/* iss""ues" "   at the same time */" \
	>"$scratch/lib/verb.c"
control_failed=
[ "$(periods "$scratch" | wc -l)" -eq 1 ] || control_failed="$control_failed period"
found=$(trackers "$scratch")
[ "$(printf '%s\n' "$found" | grep -c .)" -eq 4 ] || control_failed="$control_failed tracker"
case $found in *verb.c*) control_failed="$control_failed tracker-verb" ;; esac
if [ -n "$control_failed" ]; then
	echo "negative controls that found the wrong lines:$control_failed"
	printf '%s\n' "$found"
	exit 1
fi

status=0
found=$(periods "$srcdir")
if [ -n "$found" ]; then
	echo "lines that name a working period instead of a date, commit and CPU:"
	echo "$found"
	status=1
fi
found=$(trackers "$srcdir")
if [ -n "$found" ]; then
	echo "lines that name an issue tracker's number instead of what it was about:"
	echo "$found"
	status=1
fi
exit $status
