# SPDX-License-Identifier: MIT
# tests: the Criterion unit tests (one file per module, all linked with
# tests/support.[ch]), a C++ check of the public header, a check that a
# constant size picks its array class at compile time, the README example,
# the layering of lib/, the licence lines, and in ASan builds a gate on leak
# reports.

# The Criterion tests are built only when configure found Criterion (or was
# not given --disable-tests); the C++ check, the README, layering and licence
# checks need nothing but the compiler.
if ENABLE_TESTS
# The unit tests read pooled objects on purpose (what a pool keeps of an
# object, the debug pattern): in ASan builds they go without the headers'
# poisoning (lfpool/common.h), which tests/asan-user.sh checks.
LFPOOL_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(CRITERION_CFLAGS) -DLFPOOL_NO_ASAN_ANNOTATIONS
# What every unit test shares (tests/support.h).
check_LTLIBRARIES = tests/libtestsupport.la
tests_libtestsupport_la_SOURCES = tests/support.c tests/support.h tests/build.h
tests_libtestsupport_la_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
LFPOOL_TEST_LDADD = tests/libtestsupport.la liblfpool.la $(CRITERION_LIBS) $(PTHREAD_LIBS)

# Pool, Concurrent and the common parts; ThreadStatic (its per-CPU test
# re-runs itself with rseq turned off, so that both per-CPU paths are
# tested); the layers over every flavour.
LFPOOL_UNIT_TESTS = \
	tests/test_api \
	tests/test_config \
	tests/test_debug \
	tests/test_errors \
	tests/test_hooks \
	tests/test_nodeadlock \
	tests/test_hostile \
	tests/test_layout \
	tests/test_model \
	tests/test_threads \
	tests/test_trim \
	tests/test_small \
	tests/test_release \
	tests/test_threadstatic \
	tests/test_threadstatic_destroy \
	tests/test_threadstatic_home \
	tests/test_threadstatic_first \
	tests/test_threadstatic_threads \
	tests/test_threadstatic_capacity \
	tests/test_percpu \
	tests/test_array \
	tests/test_layers \
	tests/test_destroy \
	tests/test_env
check_PROGRAMS += $(LFPOOL_UNIT_TESTS)
TESTS += $(LFPOOL_UNIT_TESTS)

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
tests_test_nodeadlock_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_nodeadlock_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_layout_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_layout_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_model_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_model_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_release_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_release_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threads_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threads_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_trim_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_trim_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_small_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_small_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_destroy_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_destroy_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_home_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_home_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_first_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_first_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_threads_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_threads_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_threadstatic_capacity_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_threadstatic_capacity_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_percpu_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_percpu_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_array_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_array_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_layers_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_layers_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_destroy_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_destroy_LDADD = $(LFPOOL_TEST_LDADD)
tests_test_env_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_env_LDADD = $(LFPOOL_TEST_LDADD)
endif ENABLE_TESTS
# make check-unit: the Criterion suites alone, with only what they link.
# ./run.sh test runs them in an --enable-debug build too, where every pool
# is a debug pool (tests/build.h); the rest of make check does not depend
# on that flag.
check-unit:
if ENABLE_TESTS
	@$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(LFPOOL_UNIT_TESTS:=$(EXEEXT))' \
		check_PROGRAMS='$(LFPOOL_UNIT_TESTS:=$(EXEEXT))'
else !ENABLE_TESTS
	@echo "make check-unit: configure found no Criterion (--disable-tests?)" >&2; exit 1
endif !ENABLE_TESTS
PHONY += check-unit

check_PROGRAMS += tests/test_cxx
TESTS += tests/test_cxx

# The public header from C++, warnings as errors.
tests_test_cxx_SOURCES = tests/test_cxx.cc tests/cxx_inline.cc tests/cxx_inline.hpp
tests_test_cxx_CXXFLAGS = -Wall -Wextra -Wpedantic -Werror $(PTHREAD_CFLAGS) $(SAN_CFLAGS)
tests_test_cxx_LDADD = liblfpool.la

# A LeakSanitizer report does not fail a Criterion test: in ASan builds this
# gate runs after the tests and fails on any report in their logs.  Other
# fragments add their logs as prerequisites of $(LEAK_GATE_LOG) (through the
# variable: a rule naming the log itself would replace automake's rule).
EXTRA_DIST += tests/leak-gate.sh
LEAK_GATE_LOG = tests/leak-gate.sh.log
# Criterion's logs join only where Criterion tests are built.
LEAK_GATE_CRITERION_LOGS =
if ENABLE_TESTS
LEAK_GATE_CRITERION_LOGS += $(LFPOOL_UNIT_TESTS:=.log)
endif ENABLE_TESTS
if ASAN
TESTS += tests/leak-gate.sh
$(LEAK_GATE_LOG): tests/test_cxx.log $(LEAK_GATE_CRITERION_LOGS)
endif

# The assembly of tests/array_const_class.c, at -O2 and without the build's
# sanitizer flags: what a release build of a caller compiles to; the script
# checks that a constant size picked its class at compile time.
TESTS += tests/array_const_class.sh
EXTRA_DIST += tests/array_const_class.sh tests/array_const_class.c
check_DATA = tests/array_const_class.s
CLEANFILES += tests/array_const_class.s
tests/array_const_class.s: $(srcdir)/tests/array_const_class.c $(lfpoolinclude_HEADERS)
	$(AM_V_CC)$(MKDIR_P) tests && $(CC) -I$(srcdir)/include -O2 -S -o $@ $(srcdir)/tests/array_const_class.c

# The README's programs are examples/use_*.c, as they are (readme-example.sh).
TESTS += tests/readme-example.sh
EXTRA_DIST += tests/readme-example.sh
CLEANFILES += readme-example.c basic-body.c

# lfpool.hpp, the C++17 header: its test and examples/cxx.cc with g++ and
# clang++, warnings as errors, plain and under ASan.
TESTS += tests/cxx-header.sh
EXTRA_DIST += tests/cxx-header.sh tests/test_hpp.cc examples/cxx.cc

# The benchmark's plots draw from the committed results, a colour each.
TESTS += tests/plot-check.sh
EXTRA_DIST += tests/plot-check.sh

# Every public header alone, C99 and C++11, -Wall -Wextra -pedantic -Werror,
# and the inline fast paths compiled to code.
TESTS += tests/headers-alone.sh
EXTRA_DIST += tests/headers-alone.sh

# The layering rule of lib/ (HACKING.md), on the built objects' symbols:
# no circle of calls among files, no call from a lower floor to a higher.
TESTS += tests/layers.sh
EXTRA_DIST += tests/layers.sh

# Every file carries its licence line.
TESTS += tests/spdx.sh tests/words.sh
EXTRA_DIST += tests/spdx.sh tests/words.sh

# aarch64: the single-threaded unit tests cross-built and run under
# qemu-aarch64; ./run.sh test runs it (not make check: it configures a
# build of its own).
EXTRA_DIST += tests/aarch64.sh tests/qemu_exec.c

# Hostile input and faults on every flavour.
tests_test_hostile_CPPFLAGS = $(LFPOOL_TEST_CPPFLAGS)
tests_test_hostile_LDADD = $(LFPOOL_TEST_LDADD)

# What a user of lfpool sees, checked by make check: the README's
# programs, the installed library with pkg-config and CMake, the man
# pages, TSan and ASan programs against the normal build.  None needs
# Criterion.

# The README's install-and-use programs, one per flavour.
LFPOOL_USE_EXAMPLES = examples/use_pool examples/use_concurrent examples/use_threadstatic
check_PROGRAMS += $(LFPOOL_USE_EXAMPLES)
TESTS += $(LFPOOL_USE_EXAMPLES)
examples_use_pool_LDADD = liblfpool.la
examples_use_concurrent_LDADD = liblfpool.la $(PTHREAD_LIBS)
examples_use_threadstatic_LDADD = liblfpool.la $(PTHREAD_LIBS)
if ASAN
$(LEAK_GATE_LOG): $(LFPOOL_USE_EXAMPLES:=.log)
endif

LFPOOL_USER_CHECKS = tests/man-check.sh tests/tsan-handover.sh tests/asan-user.sh \
	tests/install-check.sh tests/memcheck.sh
TESTS += $(LFPOOL_USER_CHECKS)
EXTRA_DIST += $(LFPOOL_USER_CHECKS) tests/san-setup.sh tests/tsan_handover.c \
	tests/tsan_put_race.c tests/asan_user.c tests/dlopen_host.c tests/dlopen_plugin.c \
	tests/memcheck_prog.c
AM_TESTS_ENVIRONMENT = \
	MAKE='$(MAKE)' CC='$(CC)' CXX='$(CXX)' PKG_CONFIG='$(PKG_CONFIG)' CMAKE='$(CMAKE)' \
	SAN_CFLAGS='$(SAN_CFLAGS)' SAN_LDFLAGS='$(SAN_LDFLAGS)' SHELL='$(SHELL)' \
	prefix='$(prefix)' libdir='$(libdir)' includedir='$(includedir)' mandir='$(mandir)' \
	docdir='$(docdir)'; \
	export MAKE CC CXX PKG_CONFIG CMAKE SAN_CFLAGS SAN_LDFLAGS SHELL prefix libdir includedir mandir \
	docdir;

# make install && make installcheck: the same against the prefix.
installcheck-local:
	$(AM_TESTS_ENVIRONMENT) srcdir='$(srcdir)'; export srcdir; \
		$(SHELL) $(srcdir)/tests/install-check.sh installed
