# SPDX-License-Identifier: MIT
# make bench-sched (make bench ends with it): lfpool inside the schedulers
# users run, patterns jobs-omp (examples/openmp) and jobs-tbb
# (examples/tbb), at 1 and 2 threads and 8 (oversubscribed on small
# machines).  Rows are appended to latest.jsonl after the main bench's,
# the printed figures and ratios to latest.txt.  A pattern whose scheduler
# configure did not find is skipped with a message, not an error.
SCHED_BENCH_THREADS = 1 2 8
# Shell words: $args, the sizes of one run (smaller with BENCH_QUICK).
sched_bench_args = case "$${BENCH_QUICK:-0}" in \
	0) args="--reps 7" ;; *) args="--reps 3 --depth 12 --items 20000" ;; esac

if HAVE_OPENMP
sched_bench_omp = examples/openmp/omp$(EXEEXT)
sched_bench_omp_cmd = run $(sched_bench_omp)
else
sched_bench_omp_cmd = skip jobs-omp "OpenMP support in the C compiler"
endif
if HAVE_TBB
sched_bench_tbb = examples/tbb/tbb$(EXEEXT)
sched_bench_tbb_cmd = run $(sched_bench_tbb)
else
sched_bench_tbb_cmd = skip jobs-tbb "oneTBB (tbb.pc)"
endif

bench-sched: $(sched_bench_omp) $(sched_bench_tbb)
	@$(bench_results) && $(sched_bench_args) && log=$$(mktemp) && \
	run() { \
		for t in $(SCHED_BENCH_THREADS); do \
			./$$1 --threads $$t $$args --jsonl $$out/latest.jsonl > $$log 2>&1 || \
				{ cat $$log; return 1; }; \
			tee -a $$out/latest.txt < $$log; \
		done; \
	}; \
	skip() { echo "bench: $$1 skipped: configure found no $$2" | tee -a $$out/latest.txt; }; \
	$(sched_bench_omp_cmd) && $(sched_bench_tbb_cmd); rc=$$?; rm -f $$log; exit $$rc

PHONY += bench-sched
