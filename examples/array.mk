# SPDX-License-Identifier: MIT
# The README's examples of array pools and the everyday helpers, compiled
# and run by make check.
LFPOOL_ARRAY_EXAMPLES = examples/array examples/helpers
check_PROGRAMS += $(LFPOOL_ARRAY_EXAMPLES)
TESTS += $(LFPOOL_ARRAY_EXAMPLES)
examples_array_LDADD = liblfpool.la
examples_helpers_LDADD = liblfpool.la
if ASAN
$(LEAK_GATE_LOG): $(LFPOOL_ARRAY_EXAMPLES:=.log)
endif
