# SPDX-License-Identifier: MIT
# The README's example, compiled and run by make check.
check_PROGRAMS += examples/basic
TESTS += examples/basic
examples_basic_LDADD = liblfpool.la
if ASAN
$(LEAK_GATE_LOG): examples/basic.log
endif
