# SPDX-License-Identifier: MIT
# stress: the pthread stress suite (stress/, stress/fuzz/); see stress/stress.h.
#
# The programs compile the library's own sources with lib/stress_hooks.h
# forced in (yield injection, the stack's CAS-window hook and retry
# counter; stress/yield.c defines them), so they are built on demand only,
# never by `make all`:
#   make stress        normal + TSan + ASan builds, every scenario, the
#                      negative control, and the fuzz target
#   make stress-quick  what CI runs: TSan and ASan briefly, the negative
#                      control, fuzzing for 30 s
#   make stress-long   minutes, at least 10^8 operations
#   make stress-debug  the --enable-debug variant alone: every stress
#                      program with LFP_ASSERT and the pools' validate on
#   make fuzz          the libFuzzer target alone: the seed corpus
#                      (stress/fuzz/corpus/), FUZZ_SECONDS (30) of random
#                      inputs, then the line coverage of lib/ it reached
# STRESS_SECONDS, STRESS_THREADS, STRESS_SEED and FUZZ_SECONDS override the
# defaults, e.g. `make stress STRESS_SECONDS=5`.  The sanitizer builds are
# configured under this build directory (_build-stress-tsan, -asan) with
# this build's configure arguments.

STRESS_COMMON = \
	stress/stress.h stress/ops.h \
	stress/aba_replay.c stress/alloc.c stress/elim_replay.c stress/flavour_percpu.c stress/flavour_ts.c \
	stress/flavours.c \
	stress/obj.c stress/ops.c stress/options.c stress/round.c stress/run.c \
	stress/sc_aba.c stress/sc_badinput.c stress/sc_churn.c \
	stress/sc_conservation.c stress/sc_faults.c stress/sc_lookup.c stress/sc_ownership.c \
	stress/sc_hooks.c stress/sc_prodcons.c stress/sc_random.c stress/sc_signals.c \
	stress/sc_transfer.c stress/sc_trim.c \
	stress/sc_upto.c stress/sc_validate.c \
	stress/slots.c stress/yield.c

# Built on demand only: EXTRA_PROGRAMS gives them rules but no place in
# `all` (they compile the library with its stress hooks).
EXTRA_PROGRAMS += stress/lfstress stress/lfstress-noaba stress/lfmatrix stress/rc_array_stress
stress_lfstress_SOURCES = stress/driver.c $(STRESS_COMMON) $(liblfpool_la_SOURCES)
# The only place that includes lib/stress_hooks.h: before any header, so
# that the public headers' inline paths take its hooks too.
STRESS_HOOKS_CFLAGS = -include $(top_srcdir)/lib/stress_hooks.h
EXTRA_DIST += lib/stress_hooks.h
stress_lfstress_CFLAGS = $(LFPOOL_LIB_CFLAGS) $(STRESS_HOOKS_CFLAGS)
# Per-target flags give the library's objects (assembly too) names of their
# own here, apart from the shared library's.
stress_lfstress_LDADD = $(liblfpool_la_LIBADD)
# The negative control: the same stack without its ABA tag.
stress_lfstress_noaba_SOURCES = stress/negative.c $(STRESS_COMMON) $(liblfpool_la_SOURCES)
stress_lfstress_noaba_CFLAGS = $(stress_lfstress_CFLAGS) -DLFPOOL_STRESS_NO_ABA_TAG
stress_lfstress_noaba_LDADD = $(liblfpool_la_LIBADD)
# The synchronization-table matrix (stress/matrix.c).
stress_lfmatrix_SOURCES = stress/matrix.c $(STRESS_COMMON) $(liblfpool_la_SOURCES)
stress_lfmatrix_CFLAGS = $(stress_lfstress_CFLAGS)
stress_lfmatrix_LDADD = $(liblfpool_la_LIBADD)
CLEANFILES += stress/lfstress$(EXEEXT) stress/lfstress-noaba$(EXEEXT) stress/lfmatrix$(EXEEXT)
# The matrix's negative control: over the library built without stealing
# (-DLFPOOL_STRESS_NO_STEAL, as stress/capacity-nosteal), its strand rows
# must fail (matrix.c counts them caught).  Built by stress/variants.sh in
# the normal build only.
EXTRA_PROGRAMS += stress/lfmatrix-nosteal
stress_lfmatrix_nosteal_SOURCES = $(stress_lfmatrix_SOURCES)
stress_lfmatrix_nosteal_CFLAGS = $(stress_lfstress_CFLAGS) -DLFPOOL_STRESS_NO_STEAL
stress_lfmatrix_nosteal_LDADD = $(liblfpool_la_LIBADD)
CLEANFILES += stress/lfmatrix-nosteal$(EXEEXT)
# The hooks rows' negative control: over the library whose trim runs the
# fini hooks under steal_lock (-DLFPOOL_STRESS_FINI_LOCKED), the
# ts_trim||ts_hooks rows must fail (a hook sees its thread busy).  Built
# by stress/variants.sh in the normal build only.
EXTRA_PROGRAMS += stress/lfmatrix-hooklock
stress_lfmatrix_hooklock_SOURCES = $(stress_lfmatrix_SOURCES)
stress_lfmatrix_hooklock_CFLAGS = $(stress_lfstress_CFLAGS) -DLFPOOL_STRESS_FINI_LOCKED
stress_lfmatrix_hooklock_LDADD = $(liblfpool_la_LIBADD)
CLEANFILES += stress/lfmatrix-hooklock$(EXEEXT)

# The fuzz target is built by stress/variants.sh with clang, from these and
# the library's sources.
FUZZ_FILES = stress/fuzz/fuzz.h stress/fuzz/fuzz_ops.c stress/fuzz/fuzz_handles.c \
	stress/fuzz/fuzz_layers.c stress/fuzz/fuzz_threads.c \
	stress/ops.c stress/alloc.c stress/flavours.c \
	stress/flavour_ts.c stress/flavour_percpu.c
EXTRA_DIST += stress/variants.sh $(FUZZ_FILES) stress/fuzz/corpus stress/fuzz/seeds.py
# The rseq fast path, where configure found it (DEFS is not passed on).
if RSEQ
FUZZ_RSEQ = -DLFPOOL_HAVE_RSEQ=1
endif

STRESS_VARIANTS = abs_top_srcdir='$(abs_top_srcdir)' MAKE='$(MAKE)' \
	FUZZ_SOURCES='$(FUZZ_FILES) $(liblfpool_la_SOURCES)' \
	FUZZ_CFLAGS='$(PTHREAD_CFLAGS) $(CK_CFLAGS) $(URCU_CFLAGS) -DLFPOOL_BUILDING $(FUZZ_RSEQ)' \
	FUZZ_LIBS='$(liblfpool_la_LIBADD)' \
	bash $(srcdir)/stress/variants.sh

# The stress program for reference counts, array pools and closures handed
# between threads (see stress/rc_array_stress.c), with the library's
# sources compiled in as for lfstress (so that --enable-debug builds can
# call every pool's validate):
#   make stress-array   build and run it in this build directory (a TSan or
#                       ASan one when configured so); STRESS_SECONDS and
#                       STRESS_THREADS as for make stress
stress_rc_array_stress_SOURCES = stress/rc_array_stress.c stress/alloc.c stress/stress.h stress/yield.c \
	$(liblfpool_la_SOURCES)
stress_rc_array_stress_CFLAGS = $(stress_lfstress_CFLAGS)
stress_rc_array_stress_LDADD = $(liblfpool_la_LIBADD) $(PTHREAD_LIBS)
CLEANFILES += stress/rc_array_stress$(EXEEXT)
stress-array: stress/rc_array_stress$(EXEEXT)
	TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" \
	ASAN_OPTIONS="detect_leaks=1 $${ASAN_OPTIONS:-}" \
	UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 $${UBSAN_OPTIONS:-}" \
		./stress/rc_array_stress --seconds $${STRESS_SECONDS:-1} --threads $${STRESS_THREADS:-4}

# What every variant builds; the negative control, stress/lfstress-noaba,
# is built in the normal one only.
stress-programs: stress/lfstress$(EXEEXT) stress/lfmatrix$(EXEEXT) stress/rc_array_stress$(EXEEXT) \
	stress/lffork$(EXEEXT)
stress:
	@$(STRESS_VARIANTS) full
stress-quick:
	@$(STRESS_VARIANTS) quick
stress-long:
	@$(STRESS_VARIANTS) long
stress-debug:
	@$(STRESS_VARIANTS) debug
fuzz:
	@$(STRESS_VARIANTS) fuzz
PHONY += stress-programs stress-array stress stress-quick stress-long stress-debug fuzz

# fork() while threads use every flavour and mode: each child must finish,
# and so must every fork().  Part of `make check` (about a
# minute on a loaded machine); `make stress-fork` runs it alone.  The
# stress variants (variants.sh) run it in their TSan and ASan builds.
check_PROGRAMS += stress/lffork
TESTS += stress/lffork
stress-fork: stress/lffork$(EXEEXT)
	./stress/lffork
PHONY += stress-fork
# Built with the library's sources, so that an --enable-debug build can
# call the pools' validate (hidden in the shared library) after the forks.
stress_lffork_SOURCES = stress/fork_test.c $(liblfpool_la_SOURCES)
stress_lffork_CFLAGS = $(LFPOOL_LIB_CFLAGS)
stress_lffork_LDADD = $(liblfpool_la_LIBADD) $(PTHREAD_LIBS)
