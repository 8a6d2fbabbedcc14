#!/bin/sh
# SPDX-License-Identifier: MIT
# Every source, header and script carries an SPDX licence line (LICENSE);
# a new file without one fails make check.
srcdir=${srcdir:-.}
missing=$(cd "$srcdir" && find include lib tests stress bench examples cmake man \
	\( -name '*.[chS]' -o -name '*.cc' -o -name '*.sh' -o -name '*.mk' \
	   -o -name '*.gp' -o -name '*.pml' -o -name '*.cmake.in' \) -print 2>/dev/null |
	while read -r f; do
		head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f"
	done)
for f in Makefile.am configure.ac run.sh autogen.sh lfpool.pc.in; do
	[ -f "$srcdir/$f" ] || continue
	head -n 3 "$srcdir/$f" | grep -q 'SPDX-License-Identifier: MIT' || missing="$missing $f"
done
if [ -n "$missing" ]; then
	echo "files without an SPDX-License-Identifier line:"
	for f in $missing; do echo "  $f"; done
	exit 1
fi
exit 0
