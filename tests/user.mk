# SPDX-License-Identifier: MIT
# What a user of lfpool sees, checked by make check: the README's
# programs, the installed library with pkg-config and CMake, the man
# pages, a TSan program against the normal build.  None needs Criterion.

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

LFPOOL_USER_CHECKS = tests/man-check.sh tests/tsan-handover.sh tests/install-check.sh
TESTS += $(LFPOOL_USER_CHECKS)
EXTRA_DIST += $(LFPOOL_USER_CHECKS) tests/tsan_handover.c
AM_TESTS_ENVIRONMENT = \
	MAKE='$(MAKE)' CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' CMAKE='$(CMAKE)' \
	SAN_CFLAGS='$(SAN_CFLAGS)' SAN_LDFLAGS='$(SAN_LDFLAGS)' SHELL='$(SHELL)' \
	prefix='$(prefix)' libdir='$(libdir)' includedir='$(includedir)' mandir='$(mandir)'; \
	export MAKE CC PKG_CONFIG CMAKE SAN_CFLAGS SAN_LDFLAGS SHELL prefix libdir includedir mandir;

# make install && make installcheck: the same against the prefix.
installcheck-local:
	$(AM_TESTS_ENVIRONMENT) srcdir='$(srcdir)'; export srcdir; \
		$(SHELL) $(srcdir)/tests/install-check.sh installed
