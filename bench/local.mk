# SPDX-License-Identifier: MIT
# bench: lfpool against the floor, four allocators and three shared pools,
# in one process (issue 5).
#
#   make bench        time every implementation and pattern, then plot;
#                     results go to $(srcdir)/bench/results (with
#                     BENCH_QUICK=1: to bench/results-quick here, so a CI
#                     run never overwrites the committed results)
#   make bench-instr  instructions per operation under callgrind
#
# The program is built by `make bench`, never by `make all`.  It needs only
# what configure already requires (ck, liburcu): mimalloc, jemalloc and
# tcmalloc are opened with dlopen at run time, so a missing one is reported
# as "not available" and breaks no build.

EXTRA_PROGRAMS = bench/lfpool-bench
bench_lfpool_bench_SOURCES = \
	bench/bench.h bench/loops.h \
	bench/contend.c \
	bench/impl.c \
	bench/impl_floor.c \
	bench/impl_lfpool.c \
	bench/impl_malloc.c \
	bench/impl_shared.c \
	bench/main.c \
	bench/manypools.c \
	bench/measure.c \
	bench/mem64.c \
	bench/peer.c \
	bench/report.c \
	bench/targets.c
bench_lfpool_bench_CFLAGS = $(AM_CFLAGS) $(URCU_CFLAGS)
bench_lfpool_bench_LDADD = liblfpool.la $(URCU_LIBS) $(CK_LIBS) $(PTHREAD_LIBS) -ldl
# A real executable with an rpath to the uninstalled library, not a libtool
# wrapper script: callgrind must see the program itself.
bench_lfpool_bench_LDFLAGS = -no-install

BENCH_PROGRAM = bench/lfpool-bench$(EXEEXT)
# Shell words that set $out, the results folder, and create it.
bench_results = out=$(srcdir)/bench/results; \
	case "$${BENCH_QUICK:-0}" in 0) ;; *) out=bench/results-quick ;; esac; \
	mkdir -p $$out

bench: $(BENCH_PROGRAM)
	@$(bench_results) && \
	$(BENCH_PROGRAM) --out $$out/latest.jsonl > $$out/latest.txt && \
	cat $$out/latest.txt && \
	$(SHELL) $(srcdir)/bench/plot.sh $$out

bench-instr: $(BENCH_PROGRAM)
	@$(bench_results) && \
	$(SHELL) $(srcdir)/bench/instr.sh $(BENCH_PROGRAM) $$out

PHONY += bench bench-instr
CLEANFILES += bench/results-quick/*
EXTRA_DIST += bench/instr.sh bench/plot.sh bench/ratios.gp bench/scaling.gp \
	bench/results/README.md
