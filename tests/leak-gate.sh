#!/bin/sh
# SPDX-License-Identifier: MIT
# leak-gate.sh - ASan builds: fail if any test log holds a LeakSanitizer
# report.  Criterion counts a test as passed before its process exits, so a
# leak reported at that exit does not fail the test itself.  Makefile rules
# run this after the tests whose logs it reads.
status=0
for log in tests/*.log examples/*.log; do
	case $log in
	tests/leak-gate.sh.log) continue ;;
	esac
	[ -f "$log" ] || continue
	if grep -q 'LeakSanitizer' "$log"; then
		echo "LeakSanitizer report in $log:"
		grep -A12 'LeakSanitizer' "$log" | head -40
		status=1
	fi
done
exit $status
