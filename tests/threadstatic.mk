# SPDX-License-Identifier: MIT
# ThreadStatic unit tests (Criterion), linked against the shared test
# helpers of tests/local.mk.

LFPOOL_TS_TESTS = \
	tests/test_threadstatic \
	tests/test_threadstatic_destroy \
	tests/test_threadstatic_threads \
	tests/test_threadstatic_capacity
check_PROGRAMS += $(LFPOOL_TS_TESTS)
TESTS += $(LFPOOL_TS_TESTS)

LFPOOL_TS_UTIL = tests/test_threadstatic_util.c tests/test_threadstatic_util.h

tests_test_threadstatic_SOURCES = tests/test_threadstatic.c $(LFPOOL_TS_UTIL)
tests_test_threadstatic_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_destroy_SOURCES = tests/test_threadstatic_destroy.c $(LFPOOL_TS_UTIL)
tests_test_threadstatic_destroy_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_destroy_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_threads_SOURCES = tests/test_threadstatic_threads.c $(LFPOOL_TS_UTIL)
tests_test_threadstatic_threads_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_threads_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_capacity_SOURCES = tests/test_threadstatic_capacity.c $(LFPOOL_TS_UTIL)
tests_test_threadstatic_capacity_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_capacity_LDADD = $(LFPOOL_TEST_LDADD)
