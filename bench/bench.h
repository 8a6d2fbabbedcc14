/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the parts of the benchmark share: an implementation under
 * test, the patterns, the xthread handoff ring and one measured result.
 *
 * Every implementation compiles its own copy of each pattern loop (loops.h),
 * with its get and put inlined; the harness picks a loop once per run
 * through struct loops, never once per operation.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "lfpool/common.h"

enum pattern {
	PAT_PAIR,	/* get then put */
	PAT_BATCH64,	/* 64 gets then 64 puts */
	PAT_BULK32,	/* one bulk get of 32, one bulk put of 32 */
	PAT_XTHREAD,	/* gets on one thread, puts on another */
	PAT_SCALING,	/* pair on 1..N threads at once */
	PAT_COUNT
};

extern const char *const pattern_names[PAT_COUNT];

/*
 * xthread's handoff: a single-producer single-consumer ring of batches.  The
 * getting thread fills a slot with XBATCH objects and publishes it; the
 * putting thread puts them and frees the slot.  Batches keep the handoff
 * (two cache-line transfers per XBATCH objects) from dominating.
 */
#define XBATCH 64
#define XRING 16
struct xring {
	uint64_t tail __attribute__((aligned(64)));	/* batches published */
	uint64_t head __attribute__((aligned(64)));	/* batches put back */
	void *slot[XRING][XBATCH] __attribute__((aligned(64)));
};

/* Operations per thread are a multiple of this, so every loop divides evenly. */
#define OPS_QUANTUM (2 * XBATCH)

/* The loops of one implementation; ops counts gets and puts on this thread. */
struct loops {
	void (*pair)(void *h, uint64_t ops);
	void (*batch64)(void *h, uint64_t ops);
	void (*bulk32)(void *h, uint64_t ops);	/* NULL: no bulk API */
	/* NULL when an instance belongs to one thread (no xthread) */
	void (*xget)(void *h, struct xring *r, uint64_t ops);
	void (*xput)(void *h, struct xring *r, uint64_t ops);
};

struct impl {
	const char *name;
	bool lfpool;		/* one of ours: a row of the ratio tables */
	/* Set up for objects of obj_size with prewarm objects ready; NULL with
	 * a reason in *why when the implementation is not available. */
	void *(*open)(size_t obj_size, unsigned prewarm, const char **why);
	void (*close)(void *shared);
	/* The calling thread's handle, passed to the loops; and its release. */
	void *(*attach)(void *shared);
	void (*detach)(void *shared, void *h);
	const struct loops *loops;
	/* Optional (lfpool-concurrent): the shared instance's counts of
	 * calls an elimination exchange served and of failed CAS so far. */
	void (*contention)(void *shared, uint64_t *eliminated, uint64_t *cas_failed);
};

extern const struct impl impl_lfpool_pool, impl_lfpool_concurrent, impl_lfpool_concurrent_small,
	impl_lfpool_threadstatic, impl_lfpool_percpu, impl_lfpool_cache, impl_lfpool_array, impl_lfpool_array_const,
	impl_floor,
	impl_glibc, impl_mimalloc, impl_jemalloc, impl_tcmalloc,
	impl_mutex_pool, impl_spin_pool, impl_ck_stack, impl_urcu_lfs;

/* The path per-CPU ThreadStatic pools take here: "rseq" or "sched_getcpu"
 * (a static string of the library). */
const char *percpu_path(void);

/* attach and detach of an implementation whose threads all use the shared
 * instance itself. */
void *attach_shared(void *shared);
void detach_nothing(void *shared, void *h);

/* Run pattern p of im once, single-threaded on this thread (patterns with
 * one thread only). */
void run_pattern(const struct impl *im, void *h, enum pattern p, uint64_t ops);
/* Whether im can run pattern p. */
bool impl_runs(const struct impl *im, enum pattern p);

struct result {
	const struct impl *impl;
	enum pattern pattern;
	unsigned threads;
	size_t obj_size;
	double ns, min, max;	/* per operation per thread: median, extremes */
	unsigned reps;
	uint64_t ops;		/* gets and puts per thread per repetition */
	/* With impl->contention: of all gets and puts the measurement ran
	 * (calibration included), the share an exchange served, and failed
	 * CAS per get or put; negative without it. */
	double eliminated, cas_failed;
};

struct plan {
	unsigned reps;
	double rep_ns;		/* wall time one repetition should take */
};

/* Sort v[0 .. n) ascending and return its median (measure.c). */
double bench_sort_median(double *v, size_t n);

/* Measure im (opened as shared) in pattern p on threads pinned threads. */
void measure(const struct impl *im, void *shared, enum pattern p, unsigned threads,
	     size_t obj_size, const struct plan *plan, struct result *out);

/* The CPUs this process may run on; threads are pinned round-robin. */
unsigned cpus_available(void);

/* Tables, the targets and the JSON lines of a finished run. */
void report_tables(const struct result *res, size_t n);
void report_targets(const struct result *res, size_t n);
int report_jsonl(const char *path, const struct result *res, size_t n);
/* Memory held with 64 threads, per-thread against per-CPU ThreadStatic:
 * a table, and JSON lines (pattern "mem64") appended to jsonl if not NULL. */
void report_mem64(const char *jsonl);
/* Pattern "steal": gets that run a bounded pool to exhaustion and steal
 * (bench/steal.c), beside a hit; JSON lines appended to jsonl if not NULL. */
void report_steal(const char *jsonl);
/* Pattern "burst": RSS of 10^6 objects of 64 B at the peak and after a
 * drain and trims, each implementation in a child process (bench/mem64.c). */
void report_burst_rss(const char *jsonl);

/* The pair loop of the floor and of lfpool's inline ThreadStatic paths at
 * several code placements (placement.c): a table, and JSON lines (pattern
 * "placement") appended to jsonl if not NULL. */
void report_placement(const char *jsonl, bool quick);

/* Many pools alive at once (when many), round-robin over 1,000 pools, a
 * new thread's first get (manypools.c): tables and targets on stdout. */
void report_manypools(bool quick, bool many);

/* Each of 8 threads' share of the operations on one shared instance of
 * every selected implementation (contend.c). */
void report_contend(const struct impl *const *impls, size_t n, const char *filter, bool quick,
		    bool (*selected)(const char *list, const char *name));

/* Print a message and exit: a benchmark that lost an object measures nothing. */
__attribute__((noreturn, format(printf, 1, 2))) void bench_die(const char *fmt, ...);

/* Look up a peer's entry points with dlopen: 0, or -1 with *why set. */
int peer_load(const char *lib, const char *const *names, void **fns, size_t n,
	      const char **why);
/* Re-execute once with room for a dlopen'ed allocator's static TLS. */
void peer_tls_reexec(char **argv);

/* Make obj escape and forbid caching memory across it: each get and put
 * then stands alone, as with code between them. */
static inline void bench_escape(void *obj)
{
	__asm__ __volatile__("" : : "r"(obj) : "memory");
}

/* The same after a put, whose object may be gone. */
static inline void bench_barrier(void)
{
	__asm__ __volatile__("" : : : "memory");
}

/* Objects a get handed out must be real: check in every loop. */
static inline void *bench_got(void *obj)
{
	if (LFPOOL_UNLIKELY(obj == NULL))
		bench_die("get returned NULL");
	bench_escape(obj);
	return obj;
}

/* xthread ring: wait for a free slot / a published one; return its objects. */
static inline void **xring_wait_free(struct xring *r, uint64_t tail)
{
	while (tail - lfp_load_u64_acq(&r->head) >= XRING)
		lfp_stall();
	return r->slot[tail % XRING];
}

static inline void **xring_wait_full(struct xring *r, uint64_t head)
{
	while (lfp_load_u64_acq(&r->tail) == head)
		lfp_stall();
	return r->slot[head % XRING];
}

#endif
