/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ops.c - the libFuzzer target (scenario 10).  Byte 0 of an input
 * picks the mode, the rest is that mode's configuration and operations:
 *   0  flavours: ops_run (stress/ops.h), the model shared with the stress
 *      driver (Pool, Concurrent, ThreadStatic, explicit caches, per-CPU)
 *   1  handles: one pool of any flavour, up to capacity 1023, through its
 *      own calls, explicit caches and worker slots at once, debug pools and
 *      their error hook (fuzz_handles.c)
 *   2  array pools, 3 refcount pools, 4 closure pools (fuzz_layers.c)
 *   5  two threads on one pool, conservation checked at the end
 *      (fuzz_threads.c)
 * Every mode checks each answer against a reference model and aborts with
 * a sentence naming the first wrong one.  Built with clang
 * -fsanitize=fuzzer,address,undefined by `make fuzz`, which also measures
 * the line coverage of lib/ (stress/variants.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

void fz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("lfpool-fuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static void catch_report(const char *pool, const void *ptr, const char *problem, void *ctx)
{
	struct fz_reports *r = ctx;
	(void)pool;
	(void)ptr;
	if (r->n++ == 0)
		snprintf(r->problem, sizeof(r->problem), "%s", problem);
}

/* Whether text contains one of the '|'-separated words. */
static bool any_word(const char *text, const char *words)
{
	char w[64];
	for (const char *s = words; *s;) {
		size_t k = strcspn(s, "|");
		snprintf(w, sizeof(w), "%.*s", (int)k, s);
		if (strstr(text, w))
			return true;
		s += k + (s[k] == '|');
	}
	return false;
}

void fz_expect_report(const char *what, const char *words, void (*call)(void *ctx), void *ctx)
{
	struct fz_reports r = { 0 };
	lfpool_set_error_hook(catch_report, &r);
	call(ctx);
	lfpool_set_error_hook(NULL, NULL);
	FZ_CHECK(r.n == 1, "%s: %u reports, expected one", what, r.n);
	FZ_CHECK(any_word(r.problem, words), "%s: reported \"%s\", expected \"%s\"", what,
		 r.problem, words);
}

void fz_alloc_init(struct stress_alloc *sa, unsigned one_in)
{
	stress_alloc_init(sa);
	sa->fail_one_in = one_in;
	/* Call 0 is one that fails for every one_in (alloc.c's hash): start
	 * past it, so that a pool with prewarm can be made now and then. */
	sa->calls = one_in;
}

bool fz_enomem_ok(const struct stress_alloc *sa, int err)
{
	return err == ENOMEM && sa->fail_one_in;
}

void fz_alloc_check(const struct stress_alloc *sa, const char *what)
{
	FZ_CHECK(stress_alloc_balanced(sa), "%s: %llu allocations, %llu frees, %lld bytes kept",
		 what, (unsigned long long)sa->allocs, (unsigned long long)sa->frees,
		 (long long)sa->bytes);
}

/* Mode 0: the flavour model of stress/ops.c. */
static void flavours(struct fz *f)
{
	struct ops_result res;
	if (ops_run(f->p + f->i, f->n - f->i, &res) != 0)
		fz_fail("%s", res.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const modes[])(struct fz *f) = {
		flavours, fz_handles, fz_array, fz_rc, fz_closure, fz_threads,
	};
	struct fz f = { data, size, 1 };
	FZ_CHECK(strcmp(lfpool_version(), LFPOOL_VERSION_STRING) == 0, "library %s, header %s",
		 lfpool_version(), LFPOOL_VERSION_STRING);
	if (size > 0)
		modes[data[0] % (sizeof(modes) / sizeof(modes[0]))](&f);
	return 0;
}
