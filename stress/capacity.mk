# SPDX-License-Identifier: MIT
# The exact-capacity program of ThreadStatic (stress/capacity.c):
# a plain C program, so that the TSan build runs it too.
#   make check            runs it, every case 1,000 rounds (normal and ASan
#                         builds: stress/capacity-check.sh)
#   make stress-capacity  runs it in this build directory (the TSan one when
#                         configured so; stress/variants.sh does that) with
#                         $CAPACITY_ARGS (e.g. --rounds-64 N)
# Built with the library's sources, not against liblfpool.la, so that an
# --enable-debug build can call lfp_ts_validate (hidden in the shared
# library) at its quiet points.
check_PROGRAMS += stress/capacity
TESTS += stress/capacity-check.sh
EXTRA_DIST += stress/capacity-check.sh
stress_capacity_SOURCES = stress/capacity.c $(liblfpool_la_SOURCES)
stress_capacity_CFLAGS = $(LFPOOL_LIB_CFLAGS)
stress_capacity_LDADD = $(liblfpool_la_LIBADD) $(PTHREAD_LIBS)

stress-programs: stress/capacity$(EXEEXT)
stress-capacity: stress/capacity$(EXEEXT)
	TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" \
	ASAN_OPTIONS="detect_leaks=1 $${ASAN_OPTIONS:-}" \
		./stress/capacity $${CAPACITY_ARGS:-}
PHONY += stress-capacity

# The negative control: the same program over the library's sources
# compiled with -DLFPOOL_STRESS_NO_STEAL (steal.c then takes from the depot
# only, never from other caches, worker slots or CPU areas: the stranding),
# which must catch that.  Built on demand only (stress/variants.sh, in the
# normal build), never by `make all`.
EXTRA_PROGRAMS += stress/capacity-nosteal
stress_capacity_nosteal_SOURCES = stress/capacity.c $(liblfpool_la_SOURCES)
stress_capacity_nosteal_CFLAGS = $(LFPOOL_LIB_CFLAGS) -DLFPOOL_STRESS_NO_STEAL
stress_capacity_nosteal_LDADD = $(liblfpool_la_LIBADD) $(PTHREAD_LIBS)
CLEANFILES += stress/capacity-nosteal$(EXEEXT)
