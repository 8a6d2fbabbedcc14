# SPDX-License-Identifier: MIT
# Unit tests of Pool, Concurrent and the common parts (Criterion), a C++
# check of the public header, and in ASan builds a gate on leak reports.

# Shared test helpers; the ThreadStatic tests may link them too.
check_LTLIBRARIES = tests/libtesthelpers.la
tests_libtesthelpers_la_SOURCES = tests/helpers.c tests/helpers.h
LFPOOL_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(CRITERION_CFLAGS)
LFPOOL_TEST_LDADD = tests/libtesthelpers.la liblfpool.la $(CRITERION_LIBS) $(PTHREAD_LIBS)

LFPOOL_UNIT_TESTS = \
	tests/test_api \
	tests/test_config \
	tests/test_debug \
	tests/test_errors \
	tests/test_hooks \
	tests/test_layout \
	tests/test_model \
	tests/test_threads \
	tests/test_trim
check_PROGRAMS += $(LFPOOL_UNIT_TESTS) tests/test_cxx
TESTS += $(LFPOOL_UNIT_TESTS) tests/test_cxx

# A LeakSanitizer report does not fail a Criterion test: in ASan builds this
# gate runs after the tests and fails on any report in their logs.  Other
# fragments add their logs as prerequisites of $(LEAK_GATE_LOG) (through the
# variable: a rule naming the log itself would replace automake's rule).
EXTRA_DIST += tests/leak-gate.sh
LEAK_GATE_LOG = tests/leak-gate.sh.log
if ASAN
TESTS += tests/leak-gate.sh
$(LEAK_GATE_LOG): $(LFPOOL_UNIT_TESTS:=.log) tests/test_cxx.log
endif

# The public header from C++, warnings as errors.
tests_test_cxx_SOURCES = tests/test_cxx.cc
tests_test_cxx_CXXFLAGS = -Wall -Wextra -Wpedantic -Werror $(PTHREAD_CFLAGS) $(SAN_CFLAGS)
tests_test_cxx_LDADD = liblfpool.la

# Every Criterion test: its flags and libraries.
tests_test_api_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_api_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_config_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_config_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_debug_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_debug_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_errors_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_errors_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_hooks_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_hooks_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_layout_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_layout_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_model_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_model_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threads_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threads_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_trim_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_trim_LDADD = $(LFPOOL_TEST_LDADD)

# The README's example is examples/basic.c.
TESTS += tests/readme-example.sh
EXTRA_DIST += tests/readme-example.sh
CLEANFILES += readme-example.c basic-body.c

# Every public header alone, C99 and C++11, -Wall -Wextra -pedantic -Werror,
# and the inline fast paths compiled to code.
TESTS += tests/headers-alone.sh
EXTRA_DIST += tests/headers-alone.sh

# Every file carries its licence line.
TESTS += tests/spdx.sh
EXTRA_DIST += tests/spdx.sh
