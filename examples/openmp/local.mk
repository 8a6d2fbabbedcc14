# SPDX-License-Identifier: MIT
# examples/openmp: lfpool in OpenMP tasks.  Built and run briefly
# by make check where configure found OpenMP (HAVE_OPENMP); make bench
# runs it as the pattern jobs-omp (bench/sched.mk).
TESTS += examples/openmp/check.sh
EXTRA_DIST += examples/openmp/check.sh
if HAVE_OPENMP
check_PROGRAMS += examples/openmp/omp
examples_openmp_omp_SOURCES = examples/openmp/omp.c
examples_openmp_omp_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
examples_openmp_omp_LDADD = liblfpool.la
# A real executable, not a libtool wrapper: the bench runs it too.
examples_openmp_omp_LDFLAGS = $(AM_LDFLAGS) -no-install
endif
