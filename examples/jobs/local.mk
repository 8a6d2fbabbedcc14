# SPDX-License-Identifier: MIT
# The job-system example: built and run briefly by make check (its full
# size, 10^7 jobs, runs with `examples/jobs/jobs`).
check_PROGRAMS += examples/jobs/jobs
examples_jobs_jobs_SOURCES = examples/jobs/jobs.c examples/jobs/deque.h
examples_jobs_jobs_LDADD = liblfpool.la $(PTHREAD_LIBS)
TESTS += examples/jobs/check.sh
EXTRA_DIST += examples/jobs/check.sh examples/jobs/README.md
