#!/bin/sh
# SPDX-License-Identifier: MIT
# Every public header compiles alone, warning-free, in users' code: C99 and
# C++11 under -Wall -Wextra -pedantic -Werror.  The inline fast paths
# (lfpool_ts_get/put with their restartable sequences, the cache and array
# paths, lfpool_concurrent_get/put with their cmpxchg16b) are compiled to
# code as well, at -O2 and under ThreadSanitizer's and AddressSanitizer's
# flags (their annotations), since an asm operand error appears only then;
# the Concurrent paths' __atomic twin too (TSan without the user-side
# annotations, as the library's TSan build), and with -masm=intel and
# LFPOOL_NO_INLINE_ASM.
cc=${CC:-cc}
cxx=${CXX:-c++}
inc=${srcdir:-.}/include
flags="-Wall -Wextra -pedantic -Werror"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

check() {	# what, compiler and flags..., file
	what=$1
	shift
	if "$@" > "$tmp/log" 2>&1; then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		cat "$tmp/log"
		status=1
	fi
}

for h in "$inc"/lfpool.h "$inc"/lfpool/*.h "$inc"/lfpool/impl/*.h; do
	name=${h#"$inc"/}
	printf '#include "%s"\n' "$name" > "$tmp/one.c"
	cp "$tmp/one.c" "$tmp/one.cc"
	check "$name alone, C99" $cc -std=c99 $flags -I"$inc" -fsyntax-only "$tmp/one.c"
	check "$name alone, C++11" $cxx -std=c++11 $flags -I"$inc" -fsyntax-only "$tmp/one.cc"
done

cat > "$tmp/use.c" <<'EOC'
#include "lfpool.h"
void *use_ts(lfpool_ts *p);
void *use_ts(lfpool_ts *p)
{
	void *o = lfpool_ts_get(p);
	lfpool_ts_put(p, o);
	return lfpool_ts_get(p);
}
void *use_conc(lfpool_concurrent *c);
void *use_conc(lfpool_concurrent *c)
{
	void *o = lfpool_concurrent_get(c);
	lfpool_concurrent_put(c, o);
	return lfpool_concurrent_get(c);
}
void *use_array(lfpool_array *a);
void *use_array(lfpool_array *a)
{
	void *b = lfpool_array_get(a, 64, 0);
	lfpool_array_put(a, b);
	return b;
}
void *use_layers(lfpool_pool *p, lfpool_rc *rc, lfpool_closure_pool *cp, lfpool_ts_cache *c);
void *use_layers(lfpool_pool *p, lfpool_rc *rc, lfpool_closure_pool *cp, lfpool_ts_cache *c)
{
	void *objs[2];
	lfpool_pool_put(p, lfpool_pool_get(p));
	lfpool_rc_release(lfpool_rc_get(rc));
	lfpool_closure_release(cp, lfpool_closure_get(cp, 0, 0, 0));
	if (lfpool_ts_cache_get_bulk(c, objs, 2) == 0)
		lfpool_ts_cache_put_bulk(c, objs, 2);
	return lfpool_ts_cache_get(c);
}
EOC
cp "$tmp/use.c" "$tmp/use.cc"
check "inline paths, C99 -O2" $cc -std=c99 $flags -O2 -I"$inc" -c -o "$tmp/a.o" "$tmp/use.c"
check "inline paths, C++11 -O2" $cxx -std=c++11 $flags -O2 -I"$inc" -c -o "$tmp/b.o" "$tmp/use.cc"
check "inline paths, C99 -O0" $cc -std=c99 $flags -O0 -I"$inc" -c -o "$tmp/c.o" "$tmp/use.c"
check "inline paths, C99 -fsanitize=thread" $cc -std=c99 $flags -O1 -fsanitize=thread \
	-I"$inc" -c -o "$tmp/d.o" "$tmp/use.c"
check "inline paths, C99 -fsanitize=thread, no annotations" $cc -std=c99 $flags -O1 \
	-fsanitize=thread -DLFPOOL_NO_TSAN_ANNOTATIONS -I"$inc" -c -o "$tmp/e.o" "$tmp/use.c"
check "inline paths, C++11 -fsanitize=thread, no annotations" $cxx -std=c++11 $flags -O1 \
	-fsanitize=thread -DLFPOOL_NO_TSAN_ANNOTATIONS -I"$inc" -c -o "$tmp/f.o" "$tmp/use.cc"
check "inline paths, C++11 -fsanitize=thread" $cxx -std=c++11 $flags -O1 -fsanitize=thread \
	-I"$inc" -c -o "$tmp/k.o" "$tmp/use.cc"
# And under AddressSanitizer, whose annotations poison objects (lfpool/common.h).
check "inline paths, C99 -fsanitize=address" $cc -std=c99 $flags -O1 -fsanitize=address \
	-I"$inc" -c -o "$tmp/l.o" "$tmp/use.c"
check "inline paths, C++11 -fsanitize=address" $cxx -std=c++11 $flags -O1 -fsanitize=address \
	-I"$inc" -c -o "$tmp/n.o" "$tmp/use.cc"
# Code compiled with -masm=intel reads every asm statement as Intel
# syntax: with LFPOOL_NO_INLINE_ASM (lfpool/ts.h) the inline paths compile
# there (x86 only).
if printf 'int x;\n' | $cc -masm=intel -x c -c -o "$tmp/probe.o" - 2>/dev/null; then
	check "inline paths, C99 -O2 -masm=intel -DLFPOOL_NO_INLINE_ASM" $cc -std=c99 $flags -O2 \
		-masm=intel -DLFPOOL_NO_INLINE_ASM -I"$inc" -c -o "$tmp/i.o" "$tmp/use.c"
	check "inline paths, C++11 -O2 -masm=intel -DLFPOOL_NO_INLINE_ASM" $cxx -std=c++11 $flags \
		-O2 -masm=intel -DLFPOOL_NO_INLINE_ASM -I"$inc" -c -o "$tmp/j.o" "$tmp/use.cc"
	check "inline paths, C99 -O1 -fsanitize=address -masm=intel -DLFPOOL_NO_INLINE_ASM" $cc \
		-std=c99 $flags -O1 -fsanitize=address -masm=intel -DLFPOOL_NO_INLINE_ASM -I"$inc" \
		-c -o "$tmp/m.o" "$tmp/use.c"
fi
# The inline rseq path names glibc's __rseq_offset: it must not clash with
# <sys/rseq.h>'s own declaration (C++ linkage in C++ with glibc 2.36),
# whichever header comes first.
if printf '#include <sys/rseq.h>\n' | $cc -std=c99 -x c -fsyntax-only - 2>/dev/null; then
	for first in rseq lfpool; do
		if [ $first = rseq ]; then
			printf '#include <sys/rseq.h>\n#include "lfpool.h"\n' > "$tmp/rseq.cc"
		else
			printf '#include "lfpool.h"\n#include <sys/rseq.h>\n' > "$tmp/rseq.cc"
		fi
		sed -n '/^void \*use_ts/,/^}/p' "$tmp/use.c" >> "$tmp/rseq.cc"
		cp "$tmp/rseq.cc" "$tmp/rseq.c"
		check "inline paths with <sys/rseq.h> ($first first), C99 -O2" $cc -std=c99 $flags -O2 \
			-I"$inc" -c -o "$tmp/g.o" "$tmp/rseq.c"
		check "inline paths with <sys/rseq.h> ($first first), C++11 -O2" $cxx -std=c++11 $flags \
			-O2 -I"$inc" -c -o "$tmp/h.o" "$tmp/rseq.cc"
	done
fi
exit $status
