/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what the parts of the libFuzzer target share (stress/fuzz/).
 *
 * An input is a mode byte, then configuration bytes, then operations; each
 * mode (fuzz_ops.c picks it) checks every answer of the library against a
 * reference model and aborts, with a sentence naming the problem, at the
 * first wrong one.  Bytes read past the end of the input read as 0.
 */
#ifndef STRESS_FUZZ_H
#define STRESS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stress.h"

/* The input as a cursor. */
struct fz {
	const uint8_t *p;
	size_t n, i;
};

static inline unsigned fz_byte(struct fz *f) { return f->i < f->n ? f->p[f->i++] : 0; }
static inline unsigned fz_u16(struct fz *f) { return fz_byte(f) | fz_byte(f) << 8; }
static inline bool fz_more(const struct fz *f) { return f->i < f->n; }

/* A wrong answer: print what went wrong and abort (libFuzzer keeps the input). */
__attribute__((noreturn, format(printf, 1, 2))) void fz_fail(const char *fmt, ...);
#define FZ_CHECK(cond, ...) do { if (!(cond)) fz_fail(__VA_ARGS__); } while (0)

/*
 * The error hook's catch: fz_expect_report runs call with the hook set and
 * checks that the debug checks reported exactly once, with a problem
 * containing `words`.  Outside it the default hook runs, which aborts: a
 * report nobody expected is a finding.
 */
struct fz_reports {
	unsigned n;
	char problem[160];
};
void fz_expect_report(const char *what, const char *words, void (*call)(void *ctx), void *ctx);

/* The counting allocator of stress/alloc.c, failing one call in `one_in`
 * (0: never). */
void fz_alloc_init(struct stress_alloc *sa, unsigned one_in);
/* Whether errno after a failed call is allowed: ENOMEM only where the
 * allocator may fail. */
bool fz_enomem_ok(const struct stress_alloc *sa, int err);
/* Every allocation given back. */
void fz_alloc_check(const struct stress_alloc *sa, const char *what);

/* The modes. */
void fz_handles(struct fz *f);	/* one pool, many caches (fuzz_handles.c) */
void fz_array(struct fz *f);	/* array pools (fuzz_layers.c) */
void fz_rc(struct fz *f);	/* reference-counted pools */
void fz_closure(struct fz *f);	/* closure pools */
void fz_threads(struct fz *f);	/* two threads on one pool (fuzz_threads.c) */

#endif
