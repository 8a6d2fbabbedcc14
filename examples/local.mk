# SPDX-License-Identifier: MIT
# Examples beyond the README's (a packet pool, array pools, the everyday helpers),
# compiled and run by make check.
LFPOOL_EXAMPLES = examples/basic examples/array examples/helpers
check_PROGRAMS += $(LFPOOL_EXAMPLES)
TESTS += $(LFPOOL_EXAMPLES)
examples_basic_LDADD = liblfpool.la
examples_array_LDADD = liblfpool.la
examples_helpers_LDADD = liblfpool.la
if ASAN
$(LEAK_GATE_LOG): $(LFPOOL_EXAMPLES:=.log)
endif
