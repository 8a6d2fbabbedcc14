#!/bin/sh
# SPDX-License-Identifier: MIT
# autogen.sh - make ./configure in a fresh clone (a release tarball has it
# already).  Needs autoconf, automake, libtool and pkg-config (Debian:
# autoconf automake libtool pkg-config).  Then:
#   ./configure --prefix=/opt/lfpool && make && make install
set -e
cd "$(dirname "$0")"
for tool in autoreconf aclocal automake libtoolize pkg-config; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "autogen.sh: $tool not found (Debian: apt-get install autoconf automake libtool pkg-config)" >&2
		exit 1
	}
done
# pkg.m4 (PKG_CHECK_MODULES) comes with pkg-config; without it configure
# would fail much later with a puzzling message.
[ -f "$(aclocal --print-ac-dir)/pkg.m4" ] || {
	echo "autogen.sh: pkg.m4 not found in $(aclocal --print-ac-dir) (Debian: pkg-config)" >&2
	exit 1
}
autoreconf -fi
echo "autogen.sh: now ./configure [--prefix=DIR] && make && make install"
