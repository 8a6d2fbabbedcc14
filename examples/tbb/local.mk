# SPDX-License-Identifier: MIT
# examples/tbb: lfpool inside oneTBB, and the test that lfpool's
# headers work in a real C++ program (warnings are errors).  Built and run
# briefly by make check where configure found tbb.pc (HAVE_TBB); make bench
# runs it as the pattern jobs-tbb (bench/sched.mk).
TESTS += examples/tbb/check.sh
EXTRA_DIST += examples/tbb/check.sh
if HAVE_TBB
check_PROGRAMS += examples/tbb/tbb
examples_tbb_tbb_SOURCES = examples/tbb/tbb.cc
examples_tbb_tbb_CXXFLAGS = -Wall -Wextra -Wpedantic -Werror $(PTHREAD_CFLAGS) $(SAN_CFLAGS) \
	$(TBB_CFLAGS)
examples_tbb_tbb_LDADD = liblfpool.la $(TBB_LIBS) $(PTHREAD_LIBS)
# A real executable, not a libtool wrapper: the bench runs it too.
examples_tbb_tbb_LDFLAGS = $(AM_LDFLAGS) -no-install
endif
