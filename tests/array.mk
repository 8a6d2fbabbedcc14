# SPDX-License-Identifier: MIT
# Array pools, typed and scoped pools, reference counts and closures
# (Criterion), and a check that a constant size picks its class at compile
# time.  Uses the shared helpers of tests/local.mk.

TESTS += tests/array_const_class.sh
EXTRA_DIST += tests/array_const_class.sh tests/array_const_class.c

if ENABLE_TESTS
LFPOOL_ARRAY_TESTS = tests/test_array tests/test_helpers
check_PROGRAMS += $(LFPOOL_ARRAY_TESTS)
TESTS += $(LFPOOL_ARRAY_TESTS)
tests_test_array_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_array_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_helpers_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_helpers_LDADD = $(LFPOOL_TEST_LDADD)
LEAK_GATE_CRITERION_LOGS += $(LFPOOL_ARRAY_TESTS:=.log)
endif ENABLE_TESTS

# The assembly of tests/array_const_class.c, at -O2 and without the build's
# sanitizer flags: what a release build of a caller compiles to.
check_DATA = tests/array_const_class.s
CLEANFILES += tests/array_const_class.s
tests/array_const_class.s: $(srcdir)/tests/array_const_class.c $(lfpoolinclude_HEADERS)
	$(AM_V_CC)$(MKDIR_P) tests && $(CC) -I$(srcdir)/include -O2 -S -o $@ $(srcdir)/tests/array_const_class.c
