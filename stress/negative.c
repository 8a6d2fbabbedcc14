/* SPDX-License-Identifier: MIT */
/*
 * negative.c - lfstress-noaba, the negative control.  It is built from the
 * same sources with LFPOOL_STRESS_NO_ABA_TAG, which takes the ABA tag out
 * of the index stack.  The harness must catch that broken stack: the
 * replay must fail (all three steps, every time), and ABA provocation (scenario
 * 6, then ownership, scenario 2) must catch it within --seconds.  Each
 * check PASSES only when the broken stack was caught; the time to catch is
 * reported.  A harness that cannot catch a known-broken stack proves
 * nothing.
 */
#include <stdio.h>
#include <unistd.h>

#include "stress.h"

#ifndef LFPOOL_STRESS_NO_ABA_TAG
# error "negative.c is the control for a stack built without its ABA tag"
#endif

#define REPLAYS 1000

/* Whether all three replay steps failed, every one of REPLAYS times. */
static bool replays_fail(const struct options *opt)
{
	struct run r = { .total = 2, .index = 1 };
	char msg[256];
	unsigned caught = 0;
	run_begin(&r, opt, "negative-replay", NULL, 1);
	for (unsigned i = 0; i < REPLAYS; i++)
		caught += aba_replay(msg, sizeof(msg)) ==
			  (ABA_REPLAY_STALE_CAS | ABA_REPLAY_DELAYED_POP | ABA_REPLAY_TAG_WIDTH);
	alarm(0);
	bool ok = caught == REPLAYS;
	printf("%s negative-replay %s: the replay failed %u of %u times (all three steps); first: %s\n",
	       ok ? "PASS" : "FAIL", variant_name(), caught, REPLAYS, msg);
	return ok;
}

/* Run sc on Concurrent until it fails or the limit; whether it failed.
 * Prints how long it took, or that it did not. */
static bool caught_by(const struct options *opt, const struct scenario *sc)
{
	struct run r = { .total = 2, .index = 2 };
	run_begin(&r, opt, sc->name, &flavour_concurrent, opt->threads < 3 ? 3 : opt->threads);
	sc->run(&r);
	alarm(0);
	if (opt->progress)
		fprintf(stderr, "\r\033[K");
	if (r.failures)
		printf("     %-9s caught the broken stack after %.3f s (%llu gets): %s\n", sc->name,
		       r.failed_at - r.start, (unsigned long long)r.t.gets, r.first_error);
	else
		printf("     %-9s did not catch it in %.1f s (%llu gets)\n", sc->name, opt->seconds,
		       (unsigned long long)r.t.gets);
	return r.failures != 0;
}

int main(int argc, char **argv)
{
	struct options opt;
	const char *only;
	parse_options(argc, argv, &opt, &only);
	(void)only;	/* the control always runs whole */
	unsigned passed = 0, failed = 0;
	replays_fail(&opt) ? passed++ : failed++;
	bool ok = caught_by(&opt, &sc_aba) || caught_by(&opt, &sc_ownership);
	printf("%s negative-control %s concurrent: the stack without its ABA tag was %s\n",
	       ok ? "PASS" : "FAIL", variant_name(),
	       ok ? "caught" : "caught by neither aba nor ownership");
	ok ? passed++ : failed++;
	printf("%u passed, %u failed\n", passed, failed);
	fflush(stdout);
	return failed ? 1 : 0;
}
