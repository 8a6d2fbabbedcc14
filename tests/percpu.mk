# SPDX-License-Identifier: MIT
# ThreadStatic's per-CPU mode (Criterion).  The test re-runs itself with
# rseq turned off, so that both per-CPU paths are tested.

if ENABLE_TESTS
check_PROGRAMS += tests/test_percpu
TESTS += tests/test_percpu
tests_test_percpu_SOURCES = tests/test_percpu.c $(LFPOOL_TS_UTIL)
tests_test_percpu_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_percpu_LDADD = $(LFPOOL_TEST_LDADD)
LEAK_GATE_CRITERION_LOGS += tests/test_percpu.log
endif ENABLE_TESTS
