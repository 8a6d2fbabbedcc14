#!/bin/sh
# SPDX-License-Identifier: MIT
# install-check.sh - what a user of the installed library does: build the
# README's programs (examples/use_*.c) with `pkg-config --cflags --libs
# lfpool` and with CMake's find_package(lfpool) and lfpool::lfpool, run
# them, read `man lfpool_ts_get`, find the LICENSE.
#   make check:        installs this build with DESTDIR into a temporary
#                      directory first (the paths inside are the prefix's)
#   make installcheck: checks the installation at the configured prefix,
#                      and runs tests/tsan-handover.sh and
#                      tests/asan-user.sh against it
# Environment (set by tests/local.mk): MAKE, prefix, libdir, includedir,
# mandir, docdir, CC, CXX, PKG_CONFIG, CMAKE, SAN_CFLAGS, SAN_LDFLAGS, srcdir.
srcdir=${srcdir:-.}
mode=${1:-destdir}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
root=
if [ "$mode" = destdir ]; then
	root=$tmp/root
	if ! $MAKE install DESTDIR="$root" >"$tmp/install.log" 2>&1; then
		cat "$tmp/install.log"
		echo "FAIL: make install DESTDIR=$root"
		exit 1
	fi
fi
export LD_LIBRARY_PATH="$root$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
programs="use_pool use_concurrent use_threadstatic"

# pkg-config: the sysroot prefixes the .pc's -I and -L with the DESTDIR.
export PKG_CONFIG_PATH="$root$libdir/pkgconfig"
[ -n "$root" ] && export PKG_CONFIG_SYSROOT_DIR="$root"
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
cflags=$($PKG_CONFIG --cflags lfpool) && libs=$($PKG_CONFIG --libs lfpool) || {
	echo "FAIL: pkg-config does not find lfpool in $PKG_CONFIG_PATH"
	exit 1
}
# The .pc requires nothing the headers do not need (no ck).
static=$($PKG_CONFIG --static --libs lfpool)
case " $cflags $static " in
*" -D"* | *"-lck"*)
	echo "FAIL: pkg-config leaks a dependency: cflags '$cflags', static libs '$static'"
	fail=1 ;;
esac
for p in $programs; do
	# shellcheck disable=SC2086 # flag lists
	if $CC $SAN_CFLAGS $cflags "$srcdir/examples/$p.c" -o "$tmp/$p-pc" $libs -pthread $SAN_LDFLAGS &&
		"$tmp/$p-pc"; then
		echo "PASS: $p built with pkg-config ($cflags $libs) and ran"
	else
		echo "FAIL: $p with pkg-config ($cflags $libs)"
		fail=1
	fi
done

# The C++ header is installed beside lfpool.h: examples/cxx.cc with it.
# shellcheck disable=SC2086 # flag lists
if [ -f "$root$includedir/lfpool.hpp" ] &&
	${CXX:-c++} -std=c++17 $SAN_CFLAGS $cflags "$srcdir/examples/cxx.cc" -o "$tmp/cxx-pc" \
		$libs -pthread $SAN_LDFLAGS && "$tmp/cxx-pc" >/dev/null; then
	echo "PASS: examples/cxx.cc built with the installed lfpool.hpp and pkg-config, and ran"
else
	echo "FAIL: examples/cxx.cc with the installed lfpool.hpp ($root$includedir)"
	fail=1
fi

# CMake: find_package(lfpool) from the prefix, lfpool::lfpool; again with
# the static library (CMAKE_FIND_LIBRARY_SUFFIXES .a) where it is
# installed, which must bring liburcu-bp along.
cmake_done=no
cmake_kinds=default
[ -f "$root$libdir/liblfpool.a" ] && cmake_kinds="default static"
for kind in $cmake_kinds; do
	[ -n "${CMAKE:-}" ] || break
	dir=$tmp/cmake-$kind
	mkdir -p "$dir"
	{
		echo 'cmake_minimum_required(VERSION 3.10)'
		echo 'project(use_lfpool C)'
		echo '# A version this lfpool does not satisfy is refused.'
		echo 'find_package(lfpool 99 QUIET)'
		echo 'if(lfpool_FOUND)'
		echo '  message(FATAL_ERROR "find_package(lfpool 99) accepted lfpool ${lfpool_VERSION}")'
		echo 'endif()'
		[ $kind = static ] && echo 'set(CMAKE_FIND_LIBRARY_SUFFIXES .a)'
		echo 'find_package(lfpool 0.1 REQUIRED)'
		for p in $programs; do
			echo "add_executable($p $srcdir/examples/$p.c)"
			echo "target_link_libraries($p PRIVATE lfpool::lfpool)"
		done
	} >"$dir/CMakeLists.txt"
	case $srcdir in /*) ;; *) sed -i "s|$srcdir/examples|$PWD/$srcdir/examples|" "$dir/CMakeLists.txt" ;; esac
	if $CMAKE -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$root$prefix" \
		-DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$SAN_CFLAGS" \
		-DCMAKE_EXE_LINKER_FLAGS="$SAN_LDFLAGS" >"$dir.log" 2>&1 &&
		$CMAKE --build "$dir/build" >>"$dir.log" 2>&1; then
		for p in $programs; do
			if "$dir/build/$p"; then
				echo "PASS: $p built with CMake find_package(lfpool), lfpool::lfpool ($kind library), and ran"
			else
				echo "FAIL: $p built with CMake ($kind library) does not run"
				fail=1
			fi
		done
		cmake_done=yes
	else
		cat "$dir.log"
		echo "FAIL: the CMake build with find_package(lfpool) ($kind library, CMAKE_PREFIX_PATH=$root$prefix)"
		fail=1
	fi
done

# dlopen() late with no tunable, as a plugin host does (README.md): a
# host that started its threads first loads the library, and a plugin
# built on the headers' inline paths, and uses ThreadStatic pools
# (implicit caches, per-CPU, array) from those threads and new ones
# (tests/dlopen_host.c); then, without the plugin, it closes the library
# before threads that used it exit.  GLIBC_TUNABLES is unset: a tunable
# that enlarges glibc's static TLS block would hide a library that needs it.
if [ -f "$root$libdir/liblfpool.so" ]; then
	dl="dlopen of liblfpool.so with no GLIBC_TUNABLES, after threads started,"
	# shellcheck disable=SC2086 # flag lists
	if ! $CC $SAN_CFLAGS -I"$root$includedir" "$srcdir/tests/dlopen_host.c" -o "$tmp/dlhost" \
		-ldl -pthread $SAN_LDFLAGS ||
		! $CC $SAN_CFLAGS -fPIC -shared -I"$root$includedir" "$srcdir/tests/dlopen_plugin.c" \
			-o "$tmp/plugin.so" -L"$root$libdir" -llfpool $SAN_LDFLAGS; then
		echo "FAIL: tests/dlopen_host.c or tests/dlopen_plugin.c does not build"
		fail=1
	else
		if env -u GLIBC_TUNABLES "$tmp/dlhost" "$root$libdir/liblfpool.so" "$tmp/plugin.so"; then
			echo "PASS: $dl a plugin's inline paths and the library's calls from 8 threads"
		else
			echo "FAIL: $dl a plugin's inline paths and the library's calls (README.md, Install and use)"
			fail=1
		fi
		if env -u GLIBC_TUNABLES "$tmp/dlhost" "$root$libdir/liblfpool.so"; then
			echo "PASS: $dl the library's calls from 8 threads, dlclose before 4 of them exit"
		else
			echo "FAIL: $dl the library's calls, dlclose before 4 of them exit"
			fail=1
		fi
	fi
	# The plugin reads the library's TLS through __tls_get_addr; with
	# LFPOOL_TLS_INITIAL_EXEC (lfpool/ts.h) as initial-exec (TPOFF).
	# shellcheck disable=SC2086 # flag lists
	if command -v readelf >/dev/null 2>&1 &&
		$CC $SAN_CFLAGS -fPIC -shared -DLFPOOL_TLS_INITIAL_EXEC -I"$root$includedir" \
			"$srcdir/tests/dlopen_plugin.c" -o "$tmp/plugin-ie.so" -L"$root$libdir" -llfpool $SAN_LDFLAGS; then
		ie=$(readelf -rW "$tmp/plugin-ie.so" | grep -c 'R_X86_64_TPOFF64.*lfpool_')
		gd=$(readelf -rW "$tmp/plugin.so" | grep -c 'R_X86_64_TPOFF64.*lfpool_')
		case $(uname -m):$ie:$gd in
		x86_64:0:* | x86_64:*:[1-9]*)
			echo "FAIL: TLS relocations of the plugin: $gd initial-exec, $ie with LFPOOL_TLS_INITIAL_EXEC"
			fail=1 ;;
		x86_64:*) echo "PASS: the plugin reads the library's TLS as initial-exec only with LFPOOL_TLS_INITIAL_EXEC" ;;
		esac
	fi
fi

# The licence goes with the installed library.
if [ -n "${docdir:-}" ]; then
	if cmp -s "$root$docdir/LICENSE" "$srcdir/LICENSE"; then
		echo "PASS: LICENSE installed in $root$docdir"
	else
		echo "FAIL: LICENSE is not installed in $root$docdir"
		fail=1
	fi
fi

# The man pages.
page=$root$mandir/man3/lfpool_ts_get.3
if [ ! -f "$page" ]; then
	echo "FAIL: $page is not installed"
	fail=1
elif command -v man >/dev/null 2>&1; then
	# lfpool_ts_put's page sources lfpool_ts_get's (.so): man must follow it.
	for p in lfpool_ts_get lfpool_ts_put; do
		if MANPATH="$root$mandir" MANWIDTH=80 man -P cat $p 2>/dev/null |
			grep -q "$p(lfpool_ts \\*pool"; then
			echo "PASS: MANPATH=$root$mandir man $p shows its page"
		else
			echo "FAIL: MANPATH=$root$mandir man $p does not show the page"
			fail=1
		fi
	done
fi

# A user's TSan program and ASan program against the installed library.
if [ "$mode" = installed ]; then
	for check in tsan-handover asan-user; do
		LFPOOL_CFLAGS=$cflags LFPOOL_LIBS="$libs -Wl,-rpath,$libdir" \
			$SHELL "$srcdir/tests/$check.sh"
		case $? in 0 | 77) ;; *) fail=1 ;; esac
	done
fi

[ $fail -eq 0 ] || exit 1
if [ $cmake_done = no ]; then
	echo "SKIP: cmake not found (configure looks for it): the CMake package was not tried"
	exit 77
fi
exit 0
