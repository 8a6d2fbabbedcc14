#!/bin/sh
# SPDX-License-Identifier: MIT
# A constant size picks its array class at compile time: the -O2 assembly of
# const_get and const_put (tests/array_const_class.c) has no bit scan, while
# var_get, whose size is known only at run time, has one.
asm=tests/array_const_class.s
[ -f "$asm" ] || { echo "$asm missing (built by make check)"; exit 1; }

# The instructions of function $1.
body() {
	sed -n "/^$1:/,/\.cfi_endproc/p" "$asm"
}

status=0
for f in const_get const_put var_get; do
	lines=$(body $f | wc -l)
	if [ "$lines" -lt 3 ]; then
		echo "FAIL: no code for $f in $asm"
		status=1
		continue
	fi
	scans=$(body $f | grep -cE '^[[:space:]]+(bsr|lzcnt|tzcnt)')
	case $f in
	var_get) want="at least one" ok=$([ "$scans" -ge 1 ] && echo y) ;;
	*) want="none" ok=$([ "$scans" -eq 0 ] && echo y) ;;
	esac
	if [ "$ok" = y ]; then
		echo "ok: $f: $scans bit scans ($want wanted)"
	else
		echo "FAIL: $f: $scans bit scans, $want wanted:"
		body $f
		status=1
	fi
done
exit $status
