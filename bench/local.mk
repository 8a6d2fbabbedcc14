# SPDX-License-Identifier: MIT
# bench: lfpool against the floor, four allocators and three shared pools,
# in one process.
#
#   make bench        time every implementation and pattern, then plot;
#                     results go to bench-results/ in this build directory
#                     (BENCH_QUICK=1: bench/results-quick), never into the
#                     sources, even in an in-tree build: the committed
#                     results are updated only with
#                     BENCH_RESULTS=$(srcdir)/bench/results (what
#                     `./run.sh bench --update-results` passes; run.sh
#                     passes _build/bench/results otherwise)
#   make bench-instr  instructions per operation under callgrind (valgrind)
#
# The program is built by `make bench`, never by `make all`.  It needs
# liburcu (its urcu-lfs peer): configure turns the benchmark off without
# it, or with --disable-bench.  mimalloc, jemalloc and tcmalloc are opened
# with dlopen at run time, so a missing one is reported as "not available"
# and breaks no build; without gnuplot there are no plots.

if ENABLE_BENCH

EXTRA_PROGRAMS += bench/lfpool-bench
bench_lfpool_bench_SOURCES = \
	bench/bench.h bench/floor.h bench/loops.h bench/locked_pool.h \
	bench/placement_copy.h \
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
	bench/placement.c \
	bench/report.c \
	bench/steal.c \
	bench/targets.c
# Every measured loop starts on a 64-byte boundary (GCC and Clang): where a
# loop falls in the binary moved a pair's time by up to 1.4x (the floor
# 0.30 -> 0.43 ns, Pool 0.43 -> 0.57 on the 2-CPU EPYC) when an unrelated
# header change shifted the code, so ratios between two builds compared
# code placement, not code.  With this flag two such builds time alike.
bench_lfpool_bench_CFLAGS = $(AM_CFLAGS) $(URCU_CFLAGS) -falign-loops=64
bench_lfpool_bench_LDADD = liblfpool.la $(URCU_LIBS) $(CK_LIBS) $(PTHREAD_LIBS) -ldl
# A real executable with an rpath to the uninstalled library, not a libtool
# wrapper script: callgrind must see the program itself.
bench_lfpool_bench_LDFLAGS = -no-install

BENCH_PROGRAM = bench/lfpool-bench$(EXEEXT)
# Shell words that set $out, the results folder, and create it.
BENCH_RESULTS = bench-results
bench_results = out=$(BENCH_RESULTS); \
	case "$${BENCH_QUICK:-0}" in 0) ;; *) out=bench/results-quick ;; esac; \
	mkdir -p $$out

bench: $(BENCH_PROGRAM)
	@$(bench_results) && \
	$(BENCH_PROGRAM) --out $$out/latest.jsonl > $$out/latest.txt && \
	cat $$out/latest.txt && \
	if test -n "$(GNUPLOT)"; then $(SHELL) $(srcdir)/bench/plot.sh $$out; \
	else echo "bench: no plots: gnuplot not found (Debian: gnuplot-nox)"; fi && \
	$(MAKE) $(AM_MAKEFLAGS) bench-sched BENCH_RESULTS="$$out" && \
	echo "bench: results in $$out"

bench-instr: $(BENCH_PROGRAM)
	@$(bench_results) && \
	$(SHELL) $(srcdir)/bench/instr.sh $(BENCH_PROGRAM) $$out

else !ENABLE_BENCH
bench bench-instr:
	@echo "make $@: the benchmark is off: configure found no liburcu (Debian:" \
	      "liburcu-dev) or was given --disable-bench" >&2; exit 1
endif !ENABLE_BENCH

PHONY += bench bench-instr
CLEANFILES += bench/results-quick/* bench-results/*
EXTRA_DIST += bench/instr.sh bench/plot.sh bench/ratios.gp bench/scaling.gp \
	bench/memory.gp bench/style.gp \
	bench/results/README.md bench/results/latest.txt bench/results/device-16cpu.txt \
	bench/results/scaling.png bench/results/ratios.png bench/results/memory.png
