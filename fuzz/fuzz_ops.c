/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ops.c - the libFuzzer target (scenario 10): every input is an
 * operation sequence for ops_run (stress/ops.h), which checks each result
 * against the reference model; a mismatch aborts with the model's message.
 * The same bytes then drive the layers over every flavour (array pools,
 * counted objects, closures), checked here with smaller models.
 * Built with clang -fsanitize=fuzzer,address,undefined by `make fuzz`.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfpool.h"
#include "lfpool/array.h"
#include "lfpool/closure.h"
#include "lfpool/refcount.h"
#include "ops.h"

#define HELD 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lfpool-fuzz: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

static const lfpool_flavour flavours[] = {
	LFPOOL_FLAVOUR_POOL, LFPOOL_FLAVOUR_CONCURRENT, LFPOOL_FLAVOUR_TS,
};

/* A buffer got for n bytes: its usable size, all writable (ASan checks). */
struct held_buf {
	unsigned char *p;
	size_t n, real;
};

/* Array pools: get of sizes from the bytes, put (sized or not), trim,
 * stats; every byte of a buffer's usable size is written, and a buffer
 * keeps its contents until put. */
static void fuzz_array(lfpool_flavour fl, const uint8_t *d, size_t size, bool debug)
{
	lfpool_array_config cfg = { .flavour = fl, .max_size = 4096, .capacity = d[0] & 1 ? 8 : 0,
				    .flags = debug ? LFPOOL_F_DEBUG : 0,
				    .magazine_size = 4, .name = "fuzz-array" };
	lfpool_array *ap = lfpool_array_create(&cfg);
	if (!ap)
		die("array create: %s", strerror(errno));
	struct held_buf held[HELD];
	unsigned n = 0;
	for (size_t i = 1; i + 1 < size; i += 2) {
		unsigned op = d[i] % 5, arg = d[i + 1];
		if (op <= 1 && n < HELD) {
			size_t want = (size_t)arg * (op ? 37 : 1) + 1;	/* op 1: up to oversize */
			struct held_buf *b = &held[n];
			b->p = lfpool_array_get(ap, want, &b->real);
			if (!b->p) {
				if (errno != ENOBUFS || !cfg.capacity)
					die("array get(%zu): %s", want, strerror(errno));
				continue;
			}
			if (b->real < want)
				die("array get(%zu) gave %zu usable bytes", want, b->real);
			b->n = want;
			memset(b->p, (int)(want & 0xff), b->real);
			n++;
		} else if (op == 2 && n) {
			struct held_buf *b = &held[arg % n];
			for (size_t k = 0; k < b->real; k++)
				if (b->p[k] != (unsigned char)(b->n & 0xff))
					die("array buffer of %zu bytes changed while out", b->n);
			if (arg & 1)
				lfpool_array_put_sized(ap, b->p, arg & 2 ? b->real : b->n);
			else
				lfpool_array_put(ap, b->p);
			*b = held[--n];
		} else if (op == 3) {
			lfpool_array_trim(ap);
		} else {
			lfpool_stats st;
			uint64_t gets, out;
			if (lfpool_array_stats(ap, (size_t)arg + 1, &st) != 0 && errno != EINVAL)
				die("array stats: %s", strerror(errno));
			lfpool_array_stats(ap, 0, &st);
			lfpool_array_oversize_stats(ap, &gets, &out);
		}
	}
	while (n)
		lfpool_array_put(ap, held[--n].p);
	lfpool_array_destroy(ap);
}

/* Counted objects: the model keeps each held object's count. */
static void fuzz_rc(lfpool_flavour fl, const uint8_t *d, size_t size, bool debug)
{
	lfpool_config cfg = { .obj_size = 24, .capacity = d[0] & 1 ? 6 : 0, .magazine_size = 2,
			      .flags = debug ? LFPOOL_F_DEBUG : 0, .name = "fuzz-rc" };
	lfpool_rc *rc = lfpool_rc_create(fl, &cfg);
	if (!rc)
		die("rc create: %s", strerror(errno));
	void *obj[HELD];
	uint32_t count[HELD];
	unsigned n = 0;
	for (size_t i = 1; i + 1 < size; i += 2) {
		unsigned op = d[i] % 4, arg = d[i + 1];
		if (op == 0 && n < HELD) {
			obj[n] = lfpool_rc_get(rc);
			if (!obj[n]) {
				if (errno != ENOBUFS || !cfg.capacity)
					die("rc get: %s", strerror(errno));
				continue;
			}
			count[n++] = 1;
		} else if (op == 1 && n) {
			lfpool_rc_retain(obj[arg % n]);
			count[arg % n]++;
		} else if (op == 2 && n) {
			unsigned k = arg % n;
			int last = lfpool_rc_release(obj[k]);
			if (last != (count[k] == 1))
				die("rc release at count %u said %d", count[k], last);
			if (--count[k] == 0) {
				obj[k] = obj[--n];
				count[k] = count[n];
			}
		} else if (n) {
			unsigned k = arg % n;
			if (lfpool_rc_count(obj[k]) != count[k])
				die("rc count %u, the model %u", lfpool_rc_count(obj[k]), count[k]);
			lfpool_stats st;
			lfpool_rc_stats(rc, &st);
		}
	}
	while (n) {
		n--;
		while (count[n]--)
			lfpool_rc_release(obj[n]);
	}
	lfpool_rc_destroy(rc);
}

/* What a closure does when run: add its capture to *arg. */
static void add_capture(void *capture, void *arg)
{
	uint64_t v;
	memcpy(&v, capture, sizeof(v));
	*(uint64_t *)arg += v;
}

/* Closures: get with a capture, run (which releases), or release unrun. */
static void fuzz_closure(lfpool_flavour fl, const uint8_t *d, size_t size, bool debug)
{
	lfpool_config cfg = { .obj_size = 16, .capacity = d[0] & 1 ? 4 : 0, .magazine_size = 2,
			      .flags = debug ? LFPOOL_F_DEBUG : 0, .name = "fuzz-closure" };
	lfpool_closure_pool *cp = lfpool_closure_pool_create(fl, &cfg);
	if (!cp)
		die("closure pool create: %s", strerror(errno));
	lfpool_closure *c[HELD];
	uint64_t val[HELD];
	unsigned n = 0;
	for (size_t i = 1; i + 1 < size; i += 2) {
		unsigned op = d[i] % 4, arg = d[i + 1];
		if (op <= 1 && n < HELD) {
			uint64_t v = arg * 0x9e3779b97f4a7c15ull;
			c[n] = lfpool_closure_get(cp, add_capture, &v, sizeof(v));
			if (!c[n]) {
				if (errno != ENOBUFS || !cfg.capacity)
					die("closure get: %s", strerror(errno));
				continue;
			}
			val[n++] = v;
		} else if (op == 2 && n) {
			unsigned k = arg % n;
			uint64_t sum = 0;
			lfpool_closure_run(cp, c[k], &sum);
			if (sum != val[k])
				die("closure ran with capture %llx, made with %llx",
				    (unsigned long long)sum, (unsigned long long)val[k]);
			c[k] = c[--n];
			val[k] = val[n];
		} else if (op == 3 && n) {
			unsigned k = arg % n;
			lfpool_closure_release(cp, c[k]);
			c[k] = c[--n];
			val[k] = val[n];
		} else {
			lfpool_stats st;
			lfpool_closure_pool_stats(cp, &st);
			if (lfpool_closure_get(cp, NULL, NULL, 0) || errno != EINVAL)
				die("closure get with no function did not fail with EINVAL");
		}
	}
	while (n)
		lfpool_closure_release(cp, c[--n]);
	if (lfpool_closure_pool_destroy(cp) != 0)
		die("closure pool destroy: %s", strerror(errno));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ops_result res;
	if (ops_run(data, size, &res) != 0)
		die("%s", res.msg);
	if (size < 2)
		return 0;
	/* The layers: byte 0 picks the layer and flavour, bit 7 debug pools. */
	lfpool_flavour fl = flavours[(data[0] >> 2) % 3];
	bool debug = data[0] & 0x80;
	switch (data[0] % 3) {
	case 0: fuzz_array(fl, data, size, debug); break;
	case 1: fuzz_rc(fl, data, size, debug); break;
	default: fuzz_closure(fl, data, size, debug); break;
	}
	return 0;
}
