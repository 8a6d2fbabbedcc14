#!/bin/sh
# SPDX-License-Identifier: MIT
# The tree speaks of the project only: measurements are named by date,
# commit and CPU, never by the working period they came from.  A file
# that names one fails make check (the word is assembled here so that
# this file does not name it).
srcdir=${srcdir:-.}
word='sess''ions\{0,1\}'
found=$(cd "$srcdir" && grep -r -n -i -w -e "$word" \
	--exclude-dir=.git --exclude-dir='_build*' --exclude-dir=autom4te.cache \
	--exclude='*.jsonl' --exclude='*.png' \
	include lib tests stress bench examples cmake man README.md NEWS HACKING.md \
	run.sh configure.ac Makefile.am 2>/dev/null)
if [ -n "$found" ]; then
	echo "lines that name a working period instead of a date, commit and CPU:"
	echo "$found"
	exit 1
fi
exit 0
