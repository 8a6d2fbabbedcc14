#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's programs are files in examples/, which make check builds
# and runs: each ```c block right after a line "<!-- examples/NAME.c -->"
# must be that file (less its SPDX line), and the README must show every
# file named below.  A README that drifts from the examples fails here.
srcdir=${srcdir:-.}
shown="examples/use_pool.c examples/use_concurrent.c examples/use_threadstatic.c"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# Each marked block into $tmp/<file with / as _>.
awk -v tmp="$tmp" '
/^<!-- examples\/[A-Za-z0-9_]+\.c -->$/ { name = $2; gsub(/\//, "_", name); want = 1; next }
want && /^```c$/ { out = tmp "/" name; printf "" > out; code = 1; want = 0; next }
code && /^```$/ { code = 0; close(out); next }
code { print > out }
' "$srcdir/README.md"
fail=0
for f in $shown; do
	block=$tmp/$(echo "$f" | tr / _)
	if [ ! -f "$block" ]; then
		echo "README.md does not show $f (a \`\`\`c block after \"<!-- $f -->\")"
		fail=1
		continue
	fi
	# The file's SPDX line is the file's, not the example's.
	grep -v '^/\* SPDX-License-Identifier' "$srcdir/$f" >"$tmp/file"
	if ! cmp -s "$block" "$tmp/file"; then
		echo "README.md's copy of $f differs from the file:"
		diff -u "$tmp/file" "$block"
		fail=1
	fi
done
# A README for users: short enough to read through.
lines=$(wc -l <"$srcdir/README.md")
if [ "$lines" -gt 400 ]; then
	echo "README.md has $lines lines: at most 400 (details go to the man pages, HACKING.md, bench/results)"
	fail=1
fi
[ $fail -eq 0 ] && echo "PASS: README.md shows $shown as they are, in $lines lines"
exit $fail
