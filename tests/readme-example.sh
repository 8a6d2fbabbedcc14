#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's example must be examples/basic.c, which make check builds
# and runs: a README that drifts from it fails here.
srcdir=${srcdir:-.}
awk '/^## Example/ { on = 1; next } on && /^```c$/ { code = 1; next }
     code && /^```$/ { exit } code { print }' "$srcdir/README.md" > readme-example.c
# basic.c's SPDX line is the file's, not the example's.
grep -v '^/\* SPDX-License-Identifier' "$srcdir/examples/basic.c" > basic-body.c
if cmp -s readme-example.c basic-body.c; then
	rm -f readme-example.c basic-body.c
	exit 0
fi
echo "README.md's example differs from examples/basic.c:"
diff -u basic-body.c readme-example.c
exit 1
