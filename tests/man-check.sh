#!/bin/sh
# SPDX-License-Identifier: MIT
# man-check.sh - every public function has a man page with a description:
# every lfpool_* function the built library exports and every public
# function the headers in include/ declare or define inline (names ending
# in "_" are internal).  A symbol exported but declared in no header fails
# too.  Run by make check in the build directory (man/ made by make).
srcdir=${srcdir:-.}
fail=0
[ -f man/pages.list ] || { echo "FAIL: man/pages.list not made (make all first)"; exit 1; }
# Every function the headers declare; the public ones (not ending in "_").
declared_all=$(cat "$srcdir"/include/lfpool.h "$srcdir"/include/lfpool/*.h |
	grep -E '^(LFPOOL_API|static inline) ' |
	grep -oE "lfpool_[a-z0-9_]*\\(" | tr -d "(" | sort -u)
declared=$(echo "$declared_all" | grep -v "_$")
lib=.libs/liblfpool.so
[ -f "$lib" ] || lib=.libs/liblfpool.a
exported=$(nm -g --defined-only "$lib" 2>/dev/null | awk '$2 == "T" && $3 ~ /^lfpool_/ { print $3 }' | sort -u)
if [ -z "$exported" ]; then
	echo "FAIL: no lfpool_* symbol found in $lib (nm)"
	exit 1
fi
for f in $exported; do
	echo "$declared_all" | grep -qx "$f" || {
		echo "FAIL: $f is exported by $lib but declared in no header of include/"
		fail=1
	}
done
n=0
for f in $declared; do
	n=$((n + 1))
	page=man/$f.3
	if [ ! -f "$page" ]; then
		echo "FAIL: $f has no man page ($page)"
		fail=1
	elif ! awk '/^\.SH DESCRIPTION/ { d = 1; next } d == 1 && /^[^.]/ { ok = 1 } /^\.PP/ && d == 1 { d = 2 }
	            END { exit !ok }' "$page"; then
		echo "FAIL: $f's page has no description: write a comment above its declaration"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "PASS: $n public functions, each with its man page ($(echo "$exported" | wc -l) exported)"
exit $fail
