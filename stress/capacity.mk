# SPDX-License-Identifier: MIT
# The exact-capacity program of ThreadStatic (stress/capacity.c, issue 13):
# a plain C program, so that the TSan build runs it too.
#   make check            runs it with --quick (normal and ASan builds)
#   make stress-capacity  runs it in this build directory (the TSan one when
#                         configured so; stress/variants.sh does that)
check_PROGRAMS += stress/capacity
TESTS += stress/capacity-quick.sh
EXTRA_DIST += stress/capacity-quick.sh
stress_capacity_SOURCES = stress/capacity.c
stress_capacity_LDADD = liblfpool.la $(PTHREAD_LIBS)

stress-programs: stress/capacity$(EXEEXT)
stress-capacity: stress/capacity$(EXEEXT)
	TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" \
	ASAN_OPTIONS="detect_leaks=1 $${ASAN_OPTIONS:-}" \
		./stress/capacity --quick $${CAPACITY_ARGS:-}
PHONY += stress-capacity
