# SPDX-License-Identifier: MIT
# What a user of lfpool sees, checked by make check.  None needs Criterion.

LFPOOL_USER_CHECKS = tests/tsan-handover.sh
TESTS += $(LFPOOL_USER_CHECKS)
EXTRA_DIST += $(LFPOOL_USER_CHECKS) tests/tsan_handover.c
AM_TESTS_ENVIRONMENT = \
	CC='$(CC)' SAN_CFLAGS='$(SAN_CFLAGS)' SAN_LDFLAGS='$(SAN_LDFLAGS)'; \
	export CC SAN_CFLAGS SAN_LDFLAGS;
