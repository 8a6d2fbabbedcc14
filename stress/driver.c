/* SPDX-License-Identifier: MIT */
/*
 * driver.c - lfstress: every scenario on every flavour it applies to, one
 * result line each, then the total and the plain last line
 * "N passed, N failed".  Exits non-zero on any failure.
 */
#include <stdio.h>
#include <string.h>

#include "stress.h"

static const struct scenario *const scenarios[] = {
	&sc_aba_replay, &sc_elim_replay, &sc_upto, &sc_conservation, &sc_ownership, &sc_transfer, &sc_prodcons,
	&sc_churn, &sc_aba, &sc_trim, &sc_faults, &sc_faults_mt, &sc_lookup_grow, &sc_lookup_leaves,
	&sc_badinput,
	&sc_random, &sc_signals, &sc_signals_control, &sc_signals_switch, &sc_signals_locks, &sc_hooks,
#ifdef LFPOOL_DEBUG
	&sc_validate,
#endif
	NULL,
};

/* Whether sc runs on fl (NULL: the run of a scenario without flavours). */
static bool applies(const struct scenario *sc, const struct flavour *fl, const char *only)
{
	if (only && strcmp(only, sc->name) != 0)
		return false;
	if (!sc->per_flavour)
		return fl == NULL;
	return fl && (fl->shared || !sc->needs_shared);
}

/* Call fn on every (scenario, flavour) pair that applies. */
static void each_pair(const char *only, void (*fn)(const struct scenario *,
						   const struct flavour *, void *), void *arg)
{
	for (const struct scenario *const *sc = scenarios; *sc; sc++) {
		if (applies(*sc, NULL, only))
			fn(*sc, NULL, arg);
		for (const struct flavour *const *fl = all_flavours; *fl; fl++)
			if (applies(*sc, *fl, only))
				fn(*sc, *fl, arg);
	}
}

struct totals {
	const struct options *opt;
	struct run r;
	unsigned passed, failed;
	uint64_t ops;
};

/* Count the runs, for the progress line. */
static void count_pair(const struct scenario *sc, const struct flavour *fl, void *arg)
{
	(void)sc;
	(void)fl;
	((struct totals *)arg)->r.total++;
}

/* Run sc on fl, print its line, add it to the totals. */
static void run_pair(const struct scenario *sc, const struct flavour *fl, void *arg)
{
	struct totals *t = arg;
	unsigned threads = 1;
	if (sc->needs_shared)
		threads = t->opt->threads < sc->min_threads ? sc->min_threads : t->opt->threads;
	t->r.index++;
	run_begin(&t->r, t->opt, sc->name, fl, threads);
	sc->run(&t->r);
	if (run_end(&t->r))
		t->passed++;
	else
		t->failed++;
	t->ops += t->r.t.gets + t->r.t.puts;
}

int main(int argc, char **argv)
{
	struct options opt;
	const char *only;
	parse_options(argc, argv, &opt, &only);
	struct totals t = { .opt = &opt };
	each_pair(only, count_pair, &t);
	each_pair(only, run_pair, &t);
	printf("total operations (gets + puts): %llu\n", (unsigned long long)t.ops);
	if (t.ops < opt.min_ops) {
		printf("FAIL min-ops: %llu operations, fewer than the %llu asked for\n",
		       (unsigned long long)t.ops, (unsigned long long)opt.min_ops);
		t.failed++;
	}
	printf("%u passed, %u failed\n", t.passed, t.failed);
	fflush(stdout);	/* before LeakSanitizer's exit handler, which may _exit */
	return t.failed ? 1 : 0;
}
