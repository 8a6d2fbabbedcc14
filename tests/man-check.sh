#!/bin/sh
# SPDX-License-Identifier: MIT
# man-check.sh - the man pages a C programmer expects (man/gen.sh makes
# them from man/pages/*.man and the headers).  Fails when:
#   - a public function has no page: every lfpool_* function the built
#     library exports and every public function the headers declare or
#     define inline; internal ones (names ending in "_", "_slow" or
#     "_retry", the TSan wrappers "_tsan_") are not API and must have none;
#     a symbol exported but declared in no header fails too;
#   - a function's page (or the page its .so names) lacks a section, or
#     has one empty: NAME, SYNOPSIS (with the function's prototype),
#     DESCRIPTION, RETURN VALUE, ERRORS, THREAD SAFETY, SEE ALSO; and
#     EXAMPLE for the main calls (create, get, put, destroy, trim of
#     each flavour and layer);
#   - a page about a type or header is missing (lfpool, lfpool_config,
#     lfpool_stats, one per flavour and layer, lfpool.hpp), or
#     lfpool_config(3) or lfpool_stats(3) leaves out a field of its struct;
#   - a page speaks of the project's history (issue numbers).
# Run by make check in the build directory (man/ made by make).
srcdir=${srcdir:-.}
fail=0
[ -f man/pages.list ] || { echo "FAIL: man/pages.list not made (make all first)"; exit 1; }
headers="$srcdir/include/lfpool.h $srcdir/include/lfpool/*.h $srcdir/include/lfpool/impl/*.h"
# shellcheck disable=SC2086 # a list of files
all=$(cat $headers | grep -E '^(LFPOOL_API|static inline) ' |
	grep -oE "lfpool_[a-z0-9_]*\\(" | tr -d "(" | sort -u)
internal='(_|_slow|_retry|_tsan_)$'
declared=$(echo "$all" | grep -Ev "$internal")
lib=.libs/liblfpool.so
[ -f "$lib" ] || lib=.libs/liblfpool.a
exported=$(nm -g --defined-only "$lib" 2>/dev/null | awk '$2 == "T" && $3 ~ /^lfpool_/ { print $3 }' | sort -u)
if [ -z "$exported" ]; then
	echo "FAIL: no lfpool_* symbol found in $lib (nm)"
	exit 1
fi
for f in $exported; do
	echo "$all" | grep -qx "$f" || {
		echo "FAIL: $f is exported by $lib but declared in no header of include/"
		fail=1
	}
done
for f in $(echo "$all" | grep -E "$internal"); do
	[ ! -f "man/$f.3" ] || { echo "FAIL: $f is internal but has a page, man/$f.3"; fail=1; }
done

# The page that holds NAME's text: NAME's own, or the one its .so names.
page_of() {
	p=man/$1.3
	[ -f "$p" ] || return 1
	so=$(sed -n 's|^\.so man3/||p' "$p")
	[ -z "$so" ] || p=man/$so
	[ -f "$p" ] && echo "$p"
}
# has_section PAGE TITLE: the section exists and has a line of text or a
# macro other than the next .SH before it.
has_section() {
	awk -v t="$2" '$0 == ".SH " t || $0 == ".SH \"" t "\"" { s = 1; next }
		s && /^\.SH/ { exit } s && NF { ok = 1; exit } END { exit !ok }' "$1"
}
main='^lfpool_(pool|concurrent|ts|array|rc)_(create|destroy|get|put|trim)$|^lfpool_closure_(pool_create|pool_destroy|get|release)$'
n=0
for f in $declared; do
	n=$((n + 1))
	if ! p=$(page_of "$f"); then
		echo "FAIL: $f has no man page (man/$f.3)"
		fail=1
		continue
	fi
	for s in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "THREAD SAFETY" "SEE ALSO"; do
		has_section "$p" "$s" || { echo "FAIL: $f's page ($p) has no $s section"; fail=1; }
	done
	if echo "$f" | grep -Eq "$main"; then
		has_section "$p" EXAMPLE && grep -q '^\.EX' "$p" ||
			{ echo "FAIL: $f's page ($p) has no EXAMPLE"; fail=1; }
	fi
	awk '/^\.SH SYNOPSIS/ { s = 1; next } /^\.SH/ { s = 0 } s' "$p" | grep -q "[ *]$f(" ||
		{ echo "FAIL: $f's page ($p) does not show its prototype in SYNOPSIS"; fail=1; }
done
for t in lfpool lfpool_config lfpool_stats lfpool_pool lfpool_concurrent lfpool_ts lfpool_array \
	lfpool_rc lfpool_closure lfpool_typed lfpool_scoped lfpool_flavour lfpool.hpp; do
	for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		[ -f "man/$t.3" ] && has_section "man/$t.3" "$s" ||
			{ echo "FAIL: man/$t.3 has no $s section"; fail=1; }
	done
done
# Every field of lfpool_config and lfpool_stats, named on its page.
fields() {	# STRUCT: the field names of the typedef struct STRUCT in common.h
	awk -v s="$1" '$0 ~ "^typedef struct " s " \\{" { in_s = 1; next } in_s && /^\}/ { exit }
		in_s && !/^[ \t]*\*/ { sub(/\/\*.*/, ""); print }' "$srcdir/include/lfpool/common.h" |
		grep -oE '[a-z_]+(, [a-z_]+)*;|\(\*[a-z]+\)' | grep -oE '[a-z_]+' | grep -Ev '^(size_t|unsigned|void)$'
}
for st in lfpool_config lfpool_stats; do
	for fld in $(fields $st); do
		grep -Eq "^\.(B|BR|TP) .*\<$fld\>|^\.B $fld$" "man/$st.3" ||
			{ echo "FAIL: man/$st.3 does not describe the field $fld"; fail=1; }
	done
done
if grep -l -iE 'issue [0-9]' man/*.3 2>/dev/null; then
	echo "FAIL: the pages above speak of the project's history"
	fail=1
fi
[ $fail -eq 0 ] && echo "PASS: $n public functions, each with its page and sections ($(echo "$exported" | wc -l) exported)"
exit $fail
