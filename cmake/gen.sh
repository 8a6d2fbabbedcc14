#!/bin/sh
# SPDX-License-Identifier: MIT
# gen.sh IN OUT PREFIX LIBDIR INCLUDEDIR VERSION SIZEOF_VOID_P STATIC_LIBS -
# write the CMake package file OUT from IN (make calls it, once the
# installation directories are known).  STATIC_LIBS: the linker flags a
# static liblfpool needs besides the threads library (liburcu-bp's).  LIBDIR and INCLUDEDIR under PREFIX become paths
# relative to the installed file, so an installation may move (DESTDIR).
set -eu
in=$1 out=$2 prefix=$3 libdir=$4 includedir=$5 version=$6 sizeof_void_p=$7 static_libs=$8
# The installed file sits in LIBDIR/cmake/lfpool: from there to PREFIX.
case $libdir in
"$prefix"/*)
	up=../..
	rest=${libdir#"$prefix"/}
	while [ -n "$rest" ]; do
		up=$up/..
		case $rest in */*) rest=${rest#*/} ;; *) rest= ;; esac
	done
	;;
*) up= ;;
esac
# rel DIR: DIR as CMake sees it, relative to the prefix when it is below.
rel() {
	case $1 in
	"$prefix"/*) [ -n "$up" ] && { echo "\${_lfpool_prefix}/${1#"$prefix"/}"; return; } ;;
	esac
	echo "$1"
}
sed -e "s|@TO_PREFIX@|${up:-.}|" \
    -e "s|@LIBDIR@|$(rel "$libdir")|" \
    -e "s|@INCLUDEDIR@|$(rel "$includedir")|" \
    -e "s|@VERSION@|$version|" \
    -e "s|@SIZEOF_VOID_P@|$sizeof_void_p|" \
    -e "s|@STATIC_LIBS@|$static_libs|" \
    "$in" >"$out.tmp"
mv "$out.tmp" "$out"
