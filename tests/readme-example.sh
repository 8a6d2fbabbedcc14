#!/bin/sh
# The README's example must be examples/basic.c, which make check builds
# and runs: a README that drifts from it fails here.
srcdir=${srcdir:-.}
awk '/^## Example/ { on = 1; next } on && /^```c$/ { code = 1; next }
     code && /^```$/ { exit } code { print }' "$srcdir/README.md" > readme-example.c
if cmp -s readme-example.c "$srcdir/examples/basic.c"; then
	rm -f readme-example.c
	exit 0
fi
echo "README.md's example differs from examples/basic.c:"
diff -u "$srcdir/examples/basic.c" readme-example.c
exit 1
