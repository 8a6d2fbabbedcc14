# SPDX-License-Identifier: MIT
# The stress program for reference counts, array pools and closures handed
# between threads (see stress/rc_array_stress.c).  Built on demand only, as
# the rest of stress/ (the TSAN-and-ASAN condition is never true: the
# program gets its rules but no place in `all`), and by stress-programs, so
# that each stress variant has it:
#   make stress-array   build and run it in this build directory (a TSan or
#                       ASan one when configured so); STRESS_SECONDS and
#                       STRESS_THREADS as for make stress
if TSAN
if ASAN
noinst_PROGRAMS += stress/rc_array_stress
endif
endif
stress_rc_array_stress_SOURCES = stress/rc_array_stress.c stress/alloc.c stress/stress.h
stress_rc_array_stress_LDADD = liblfpool.la $(PTHREAD_LIBS)
CLEANFILES += stress/rc_array_stress$(EXEEXT)

stress-programs: stress/rc_array_stress$(EXEEXT)
stress-array: stress/rc_array_stress$(EXEEXT)
	TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" \
	ASAN_OPTIONS="detect_leaks=1 $${ASAN_OPTIONS:-}" \
	UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 $${UBSAN_OPTIONS:-}" \
		./stress/rc_array_stress --seconds $${STRESS_SECONDS:-1} --threads $${STRESS_THREADS:-4}
PHONY += stress-array
