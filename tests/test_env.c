/* SPDX-License-Identifier: MIT */
/*
 * test_env.c - what a program gets without a rebuild: LFPOOL_DEBUG and
 * LFPOOL_SHOW_STATS (each run in a child process with the variable set,
 * since the library reads the environment once), malformed values, the
 * dump calls' output, and the reason every create refused with EINVAL
 * gives the error hook.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

/* The children end with pools alive on purpose (LFPOOL_SHOW_STATS prints
 * them at exit), and LeakSanitizer, which ./run.sh turns on in the ASan
 * build, writes its reports and warnings (a child forked from Criterion's
 * threads) into the stderr these tests compare and changes the children's
 * exit status.  So the suite runs in the normal build only; every other
 * test of the ASan build checks for leaks. */
#if defined(__SANITIZE_ADDRESS__)
# define ENV_SUITE_DISABLED 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define ENV_SUITE_DISABLED 1
# endif
#endif
#ifndef ENV_SUITE_DISABLED
# define ENV_SUITE_DISABLED 0
#endif
TestSuite(env, .disabled = ENV_SUITE_DISABLED);

/* Run body in a child process with LFPOOL_DEBUG=debug and
 * LFPOOL_SHOW_STATS=stats (NULL: unset); its stderr, and in *status how
 * it ended (waitpid's). */
static char *child_stderr(const char *debug, const char *stats, void (*body)(void), int *status)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 2);
		if (debug)
			setenv("LFPOOL_DEBUG", debug, 1);
		else
			unsetenv("LFPOOL_DEBUG");
		if (stats)
			setenv("LFPOOL_SHOW_STATS", stats, 1);
		else
			unsetenv("LFPOOL_SHOW_STATS");
		body();
		exit(0);	/* atexit handlers: LFPOOL_SHOW_STATS's pools alive */
	}
	close(fd[1]);
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	ssize_t n;
	while ((n = read(fd[0], out + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 256)
			out = realloc(out, cap *= 2);
	}
	out[len] = '\0';
	close(fd[0]);
	cr_assert_eq(waitpid(pid, status, 0), pid);
	return out;
}

static char *child_ok(const char *debug, const char *stats, void (*body)(void))
{
	int status;
	char *out = child_stderr(debug, stats, body, &status);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child ended %#x: %s", status,
		  out);
	return out;
}

/* --- Reasons for EINVAL --------------------------------------------- */

static void refused_align(void)
{
	lfpool_config cfg = { .obj_size = 64, .align = 48, .name = "packets" };
	if (lfpool_pool_create(&cfg) || errno != EINVAL)
		exit(3);
}

Test(env, refusal_is_silent_without_hook_or_debug)
{
	char *out = child_ok(NULL, NULL, refused_align);
	cr_assert_str_empty(out);
	free(out);
}

Test(env, refusal_printed_under_lfpool_debug)
{
	char *out = child_ok("1", NULL, refused_align);
	cr_assert_str_eq(out, "lfpool: pool 'packets': align 48 is not a power of two "
			      "(create refused: EINVAL)\n");
	free(out);
}

/* create with cfg must fail with EINVAL and tell the hook `problem` under
 * the name `pool`. */
static void expect_reason(void *(*create)(const lfpool_config *), const lfpool_config *cfg,
			  const char *pool, const char *problem)
{
	struct error_log log;
	record_errors(&log);
	errno = 0;
	cr_assert_null(create(cfg), "created despite: %s", problem);
	cr_assert_eq(errno, EINVAL, "%s: errno %d", problem, errno);
	cr_assert_eq(log.calls, 1, "%s: %d reports", problem, log.calls);
	cr_assert_str_eq(log.pool, pool);
	cr_assert_str_eq(log.problem, problem);
	cr_assert_null(log.ptr);
	lfpool_set_error_hook(NULL, NULL);
}

static void *ts_create(const lfpool_config *cfg)
{
	return lfpool_ts_create(cfg);
}

/* Every check of lfpool_config, on each flavour, in release and debug pools. */
Test(env, config_refusals_say_why)
{
	static const char *const kinds[] = { "pool", "concurrent", "threadstatic" };
	void *(*creates[])(const lfpool_config *) = { flavours[FL_POOL].create,
						       flavours[FL_CONCURRENT].create, ts_create };
	struct {
		lfpool_config cfg;
		const char *problem;
	} bad[] = {
		{ { .obj_size = 0 }, "obj_size is 0" },
		{ { .obj_size = 64, .align = 48 }, "align 48 is not a power of two" },
		{ { .obj_size = (size_t)1 << 30 }, "obj_size 1073741824 is more than 536870912" },
		{ { .obj_size = 64, .align = (size_t)1 << 30 },
		  "align 1073741824 is more than 536870912" },
		{ { .obj_size = (size_t)300 << 20 }, "obj_size 314572800 rounded up to align 16 "
		  "makes a slab of 8 objects over 2147483648 bytes" },
		{ { .obj_size = 64, .capacity = 4, .prewarm = 5 }, "prewarm 5 is more than capacity 4" },
		{ { .obj_size = 64, .flags = 0x100 },
		  "flags 0x100 has bits that are no LFPOOL_F_* flag (0x100)" },
		{ { .obj_size = 64, .capacity = (size_t)1 << 33 },
		  "capacity 8589934592 is more than a pool can hold (4294967294)" },
		{ { .obj_size = 64, .allocator = &(lfpool_allocator){ .alloc = NULL } },
		  "allocator has no alloc function" },
	};
	for (int debug = 0; debug < 2; debug++) {
		for (size_t k = 0; k < 3; k++) {
			expect_reason(creates[k], NULL, kinds[k], "no configuration (NULL)");
			for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
				if (!bad[i].cfg.flags)	/* the flags' own sentence names them */
					bad[i].cfg.flags = debug ? LFPOOL_F_DEBUG : 0;
				expect_reason(creates[k], &bad[i].cfg, kinds[k], bad[i].problem);
				bad[i].cfg.name = "named";
				expect_reason(creates[k], &bad[i].cfg, "named", bad[i].problem);
				bad[i].cfg.name = NULL;
			}
		}
	}
	lfpool_config percpu = { .obj_size = 64, .flags = LFPOOL_F_PERCPU };
	for (size_t k = 0; k < 2; k++)
		expect_reason(creates[k], &percpu, kinds[k],
			      "flag LFPOOL_F_PERCPU is for ThreadStatic pools only");
	lfpool_config ts = { .obj_size = 64, .magazine_size = 65537, .name = "t" };
	expect_reason(ts_create, &ts, "t", "magazine_size 65537 is more than 65536");
	ts = (lfpool_config){ .obj_size = 64, .depot_max = 65537 };
	expect_reason(ts_create, &ts, "threadstatic", "depot_max 65537 is more than 65536");
}

static const lfpool_array_config *array_cfg;
static lfpool_flavour array_flavour;
static void *array_create(const lfpool_config *unused)
{
	(void)unused;
	return lfpool_array_create(array_flavour, array_cfg);
}

static void expect_array_reason(lfpool_flavour fl, const lfpool_array_config *cfg,
				const char *pool, const char *problem)
{
	array_flavour = fl;
	array_cfg = cfg;
	expect_reason(array_create, NULL, pool, problem);
}

Test(env, array_refusals_say_why)
{
	lfpool_array_config c = { .name = "bufs" };
	expect_array_reason(0, &c, "bufs", "flavour 0 is no lfpool_flavour");
	expect_array_reason(LFPOOL_FLAVOUR_POOL, NULL, "array", "no configuration (NULL)");
	struct {
		lfpool_array_config cfg;
		const char *problem;
	} bad[] = {
		{ { .min_size = 24 }, "min_size 24 is not a power of two" },
		{ { .max_size = 100 }, "max_size 100 is not a power of two" },
		{ { .min_size = 8 }, "min_size 8 is less than 16" },
		{ { .min_size = 64, .max_size = 32 }, "min_size 64 is more than max_size 32" },
		{ { .max_size = (size_t)128 << 20 }, "max_size 134217728 is more than 67108864" },
		{ { .align = 24 }, "align 24 is not a power of two" },
		{ { .align = 8192 }, "align 8192 is more than 4096" },
		{ { .flags = 0x1000 }, "flags 0x1000 has bits that are no array pool flag (0x1000)" },
		{ { .allocator = &(lfpool_allocator){ .alloc = NULL } },
		  "allocator has no alloc function" },
	};
	for (lfpool_flavour fl = LFPOOL_FLAVOUR_POOL; fl <= LFPOOL_FLAVOUR_TS; fl++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			expect_array_reason(fl, &bad[i].cfg, "array", bad[i].problem);
}

static void *rc_create(const lfpool_config *cfg)
{
	return lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, cfg);
}

static void *closure_create(const lfpool_config *cfg)
{
	return lfpool_closure_pool_create(LFPOOL_FLAVOUR_POOL, cfg);
}

static void *bad_flavour_rc(const lfpool_config *cfg)
{
	return lfpool_rc_create(7, cfg);
}

Test(env, layer_refusals_say_why)
{
	lfpool_config c = { .obj_size = 0 };
	expect_reason(rc_create, NULL, "rc", "no configuration (NULL)");
	expect_reason(rc_create, &c, "rc", "obj_size is 0");
	c = (lfpool_config){ .obj_size = 8, .align = 24, .name = "counted" };
	expect_reason(rc_create, &c, "counted", "align 24 is not a power of two");
	c.align = 8192;
	expect_reason(rc_create, &c, "counted", "align 8192 is more than 4096");
	c = (lfpool_config){ .obj_size = 8, .name = "counted" };
	expect_reason(bad_flavour_rc, &c, "counted", "flavour 7 is no lfpool_flavour");
	expect_reason(closure_create, NULL, "closure", "no configuration (NULL)");
	c = (lfpool_config){ .obj_size = 8, .align = 3 };
	expect_reason(closure_create, &c, "closure", "align 3 is not a power of two");
	c.align = 32;
	expect_reason(closure_create, &c, "closure", "align 32 is more than 16");
	c = (lfpool_config){ .obj_size = 8, .reset = hook_reset };
	expect_reason(closure_create, &c, "closure",
		      "a closure pool takes no reset hook (its closures' own functions clean up)");
}

/* --- LFPOOL_DEBUG ----------------------------------------------------- */

/* A double put to a release Pool: silent, unless the pool is a debug one
 * (every pool is in the --enable-debug build: build.h). */
static void double_put(void)
{
	lfpool_config cfg = { .obj_size = 32, .name = "twice" };
	lfpool_pool *p = lfpool_pool_create(&cfg);
	void *o = lfpool_pool_get(p);
	lfpool_pool_put(p, o);
	lfpool_pool_put(p, o);
	lfpool_pool_destroy(p);
}

/* A child's double_put with LFPOOL_DEBUG=debug (NULL: unset) aborts with
 * the report where reported, else ends silent. */
static void expect_double_put(const char *debug, bool reported)
{
	int status;
	char *out = child_stderr(debug, NULL, double_put, &status);
	if (reported) {
		cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s: status %#x: %s",
			  debug, status, out);
		cr_assert_not_null(strstr(out, "lfpool: pool 'twice': double put"), "%s", out);
	} else {
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %#x: %s",
			  debug, status, out);
		cr_assert_str_empty(out);
	}
	free(out);
}

Test(env, lfpool_debug_turns_on_the_checks)
{
	expect_double_put("1", true);
	expect_double_put(NULL, DEBUG_BUILD);
	expect_double_put("0", DEBUG_BUILD);
}

/* Every flavour and array pools created after the variable is read are debug. */
static void dump_all(void)
{
	lfpool_config cfg = { .obj_size = 32 };
	lfpool_pool_dump(lfpool_pool_create(&cfg), stderr);
	lfpool_concurrent_dump(lfpool_concurrent_create(&cfg), stderr);
	lfpool_ts_dump(lfpool_ts_create(&cfg), stderr);
	cfg.flags = LFPOOL_F_PERCPU;
	lfpool_ts_dump(lfpool_ts_create(&cfg), stderr);
	lfpool_array_config acfg = { .max_size = 16 };
	lfpool_array_dump(lfpool_array_create(LFPOOL_FLAVOUR_CONCURRENT, &acfg), stderr);
}

/* The number of times needle is in haystack. */
static int count_of(const char *haystack, const char *needle)
{
	int n = 0;
	for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

Test(env, lfpool_debug_reaches_every_flavour)
{
	char *out = child_ok("1", NULL, dump_all);
	cr_assert_not_null(strstr(out, "pool 'pool' (pool, debug)"), "%s", out);
	cr_assert_not_null(strstr(out, "pool 'concurrent' (concurrent, debug)"), "%s", out);
	cr_assert_not_null(strstr(out, "pool 'threadstatic' (threadstatic, debug)"), "%s", out);
	cr_assert_not_null(strstr(out, "pool 'threadstatic' (threadstatic, per-CPU, debug)"), "%s",
			   out);
	cr_assert_not_null(strstr(out, "array pool 'array' (concurrent, debug)"), "%s", out);
	free(out);
	out = child_ok(NULL, NULL, dump_all);
	/* The --enable-debug build: five pools and the array pool's class. */
	cr_assert_eq(count_of(out, "debug"), DEBUG_BUILD ? 6 : 0, "%s", out);
	free(out);
}

/* --- LFPOOL_SHOW_STATS ------------------------------------------------ */

static void pools_for_stats(void)
{
	lfpool_config cfg = { .obj_size = 32, .prewarm = 2, .name = "alpha" };
	lfpool_concurrent *a = lfpool_concurrent_create(&cfg);
	lfpool_concurrent_put(a, lfpool_concurrent_get(a));
	lfpool_concurrent_destroy(a);
	cfg.name = "beta";
	lfpool_pool_get(lfpool_pool_create(&cfg));	/* alive at exit, one out */
	lfpool_array_config acfg = { .max_size = 32, .name = "gamma" };
	lfpool_array_create(LFPOOL_FLAVOUR_TS, &acfg);
	cfg.name = "delta";
	lfpool_ts_create(&cfg);		/* every flavour alive at exit */
	cfg.name = "epsilon";
	lfpool_concurrent_create(&cfg);
}

Test(env, show_stats_at_destroy_and_exit)
{
	char *out = child_ok(NULL, "1", pools_for_stats);
	cr_assert_not_null(strstr(out, "lfpool: at destroy, pool 'alpha' (concurrent" BUILD_DEBUG_TAG
				       "): obj_size 32"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "lfpool: at exit, pool 'beta' (pool" BUILD_DEBUG_TAG
				       "): obj_size 32, align 16, "
				       "stride 32, capacity 0 (unbounded)\n"
				       "  objects: 2 created, 1 pooled, 1 out\n"), "%s", out);
	cr_assert_not_null(strstr(out, "lfpool: at exit, array pool 'gamma' (threadstatic"
				       BUILD_DEBUG_TAG "): "
				       "classes of 16 to 32 bytes"), "%s", out);
	cr_assert_not_null(strstr(out, "lfpool: at exit, pool 'delta' (threadstatic" BUILD_DEBUG_TAG
				       "): obj_size 32"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "lfpool: at exit, pool 'epsilon' (concurrent" BUILD_DEBUG_TAG
				       "): obj_size 32"),
			   "%s", out);
	/* The classes once, in their array pool's lines. */
	cr_assert_eq(count_of(out, "pool 'gamma[16]'"), 1, "%s", out);
	cr_assert_eq(count_of(out, "lfpool: "), 5, "%s", out);
	free(out);
	out = child_ok(NULL, "0", pools_for_stats);
	cr_assert_str_empty(out);
	free(out);
}

/* --- Malformed values -------------------------------------------------- */

static void one_pool(void)
{
	lfpool_config cfg = { .obj_size = 32 };
	FILE *null = fopen("/dev/null", "w");
	lfpool_pool_dump(lfpool_pool_create(&cfg), null);
	lfpool_pool_dump(lfpool_pool_create(&cfg), null);	/* read once: one warning */
}

Test(env, malformed_values_warn_once)
{
	char *out = child_ok("yes", NULL, one_pool);
	cr_assert_str_eq(out, "lfpool: LFPOOL_DEBUG='yes' is not 0 or 1: ignored\n");
	free(out);
	out = child_ok(NULL, "2", one_pool);
	cr_assert_str_eq(out, "lfpool: LFPOOL_SHOW_STATS='2' is not 0 or 1: ignored\n");
	free(out);
}

/* --- The dump calls ---------------------------------------------------- */

/* What a dump of pool writes (by dump). */
static char *dumped(int (*dump)(const void *pool, FILE *out), const void *pool)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(dump(pool, f), 0);
	fclose(f);
	return buf;
}

static int dump_pool(const void *p, FILE *f) { return lfpool_pool_dump(p, f); }
static int dump_conc(const void *p, FILE *f) { return lfpool_concurrent_dump(p, f); }
static int dump_ts(const void *p, FILE *f) { return lfpool_ts_dump(p, f); }
static int dump_array(const void *p, FILE *f) { return lfpool_array_dump(p, f); }

Test(env, dump_says_configuration_and_counts)
{
	lfpool_config cfg = { .obj_size = 40, .capacity = 10, .prewarm = 3, .name = "d" };
	lfpool_pool *p = lfpool_pool_create(&cfg);
	void *o = lfpool_pool_get(p);
	char *out = dumped(dump_pool, p);
	const char *want = "pool 'd' (pool" BUILD_DEBUG_TAG "): obj_size 40, align 16, stride 48, "
			   "capacity 10\n  objects: 3 created, 2 pooled, 1 out\n"
			   "  calls: 0 gets, 0 puts, 0 hits, 0 misses, 0 magazine exchanges, "
			   "0 trims\n  memory: ";
	cr_assert_eq(strncmp(out, want, strlen(want)), 0, "%s", out);
	free(out);
	lfpool_pool_put(p, o);
	lfpool_pool_destroy(p);

	cfg = (lfpool_config){ .obj_size = 64, .name = "c" };
	lfpool_concurrent *c = lfpool_concurrent_create(&cfg);
	lfpool_concurrent_put(c, lfpool_concurrent_get(c));
	out = dumped(dump_conc, c);
	cr_assert_not_null(strstr(out, "pool 'c' (concurrent" BUILD_DEBUG_TAG "): obj_size 64, align 16, stride 64, "
				       "capacity 0 (unbounded)\n  objects: 1 created, 1 pooled, 0 out\n"
				       "  calls: 0 gets, 0 puts, 0 hits, 1 misses,"), "%s", out);
	cr_assert_not_null(strstr(out, "1 slabs made, 0 given back"), "%s", out);
	free(out);
	lfpool_concurrent_destroy(c);

	cfg = (lfpool_config){ .obj_size = 64, .flags = LFPOOL_F_PERCPU, .name = "t" };
	lfpool_ts *t = lfpool_ts_create(&cfg);
	lfpool_ts_put(t, lfpool_ts_get(t));
	out = dumped(dump_ts, t);
	cr_assert_not_null(strstr(out, "pool 't' (threadstatic, per-CPU" BUILD_DEBUG_TAG "): obj_size 64"), "%s", out);
	cr_assert_not_null(strstr(out, "  objects: 1 created, 1 pooled, 0 out\n  calls: 1 gets, 1 puts"),
			   "%s", out);
	cr_assert_not_null(strstr(out, ", per-CPU mode "), "%s", out);
	free(out);
	lfpool_ts_destroy(t);

	lfpool_array_config acfg = { .min_size = 32, .max_size = 64, .name = "a" };
	lfpool_array *ap = lfpool_array_create(LFPOOL_FLAVOUR_POOL, &acfg);
	void *buf = lfpool_array_get(ap, 100000, NULL);
	out = dumped(dump_array, ap);
	cr_assert_not_null(strstr(out, "array pool 'a' (pool" BUILD_DEBUG_TAG "): classes of 32 to 64 bytes, prefix 16; "
				       "oversize: 1 gets, 1 out\n"
				       "  class: pool 'a[32]' (pool" BUILD_DEBUG_TAG "): obj_size 48,"), "%s", out);
	cr_assert_not_null(strstr(out, "  class: pool 'a[64]' (pool" BUILD_DEBUG_TAG "): obj_size 80,"), "%s", out);
	free(out);
	lfpool_array_put(ap, buf);
	lfpool_array_destroy(ap);
}

Test(env, dump_of_a_destroyed_debug_pool_is_refused)
{
	struct error_log log;
	record_errors(&log);
	lfpool_config cfg = { .obj_size = 32, .flags = LFPOOL_F_DEBUG, .name = "gone" };
	lfpool_pool *p = lfpool_pool_create(&cfg);
	lfpool_pool_destroy(p);
	errno = 0;
	cr_assert_eq(lfpool_pool_dump(p, stdout), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_str_eq(log.problem, "dump after destroy");
}
