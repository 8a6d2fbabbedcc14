/* SPDX-License-Identifier: MIT */
/*
 * run.c - one scenario on one flavour: failures, deadline, tallies, the
 * watchdog that turns a hang into a failure, the progress line (on stderr,
 * so that stdout can be piped and still show it) and the result line.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stress.h"

/* Beyond its time a run may take this long to finish (TSan is slow). */
#define WATCHDOG_GRACE 120

static char watchdog_msg[160];

/* SIGALRM: a run overran its time by WATCHDOG_GRACE: report and exit. */
static void watchdog_fired(int sig)
{
	(void)sig;
	ssize_t n = write(STDOUT_FILENO, watchdog_msg, strlen(watchdog_msg));
	(void)n;
	_exit(124);
}

const char *variant_name(void)
{
#if defined(LFPOOL_STRESS_NO_ABA_TAG)
# define VARIANT "noaba"
#elif defined(LFPOOL_STRESS_NO_STEAL)
# define VARIANT "nosteal"
#elif defined(LFPOOL_STRESS_FINI_LOCKED)
# define VARIANT "hooklock"
#elif defined(LFPOOL_TSAN)
# define VARIANT "tsan"
#elif defined(__SANITIZE_ADDRESS__)
# define VARIANT "asan"
#else
# define VARIANT "normal"
#endif
#ifdef LFPOOL_DEBUG
	return VARIANT "+debug";
#else
	return VARIANT;
#endif
}

void run_begin(struct run *r, const struct options *opt, const char *scenario,
	       const struct flavour *fl, unsigned threads)
{
	unsigned index = r->index, total = r->total;
	*r = (struct run){ .opt = opt, .fl = fl, .scenario = scenario, .threads = threads,
			   .index = index, .total = total, .rng = opt->seed };
	pthread_mutex_init(&r->lock, NULL);
	r->start = now_seconds();
	r->deadline = r->start + opt->seconds;
	snprintf(watchdog_msg, sizeof(watchdog_msg),
		 "\nFAIL %s %s: still running %d s past its time: a hang (deadlock or livelock)\n",
		 scenario, fl ? fl->name : "-", WATCHDOG_GRACE);
	signal(SIGALRM, watchdog_fired);
	alarm((unsigned)opt->seconds + WATCHDOG_GRACE);
	run_progress(r);
}

void run_progress(struct run *r)
{
	double now = now_seconds();
	if (!r->opt->progress || now - r->last_progress < 0.1)
		return;
	r->last_progress = now;
	fprintf(stderr, "\r\033[K[%u/%u] %s %s %s: round %llu, %.1f s", r->index, r->total,
		variant_name(), r->scenario, r->fl ? r->fl->name : "-",
		(unsigned long long)r->t.rounds + 1, now - r->start);
}

bool run_end(struct run *r)
{
	alarm(0);
	const struct tally *t = &r->t;
	bool ok = __atomic_load_n(&r->failures, __ATOMIC_RELAXED) == 0;
	if (r->opt->progress)
		fprintf(stderr, "\r\033[K");
	printf("%s %-12s %-6s %-12s threads=%u seconds=%.2f rounds=%llu seed=%llu gets=%llu "
	       "puts=%llu remote_puts=%llu mag_exchanges=%llu cas_retries=%llu eliminated=%llu created=%llu "
	       "lost=%llu duplicated=%llu cookie_errors=%llu failed_gets=%llu trimmed=%llu "
	       "injected=%llu\n",
	       ok ? "PASS" : "FAIL", r->scenario, variant_name(), r->fl ? r->fl->name : "-",
	       r->threads, now_seconds() - r->start, (unsigned long long)t->rounds,
	       (unsigned long long)r->opt->seed, (unsigned long long)t->gets,
	       (unsigned long long)t->puts, (unsigned long long)t->remote_puts,
	       (unsigned long long)t->mag_exchanges, (unsigned long long)t->cas_retries,
	       (unsigned long long)t->eliminated,
	       (unsigned long long)t->created, (unsigned long long)t->lost,
	       (unsigned long long)t->duplicated, (unsigned long long)t->cookie_errors,
	       (unsigned long long)t->failed_gets, (unsigned long long)t->trimmed,
	       (unsigned long long)t->injected);
	if (!ok)
		printf("    %d failure(s); the first: %s\n", r->failures, r->first_error);
	fflush(stdout);
	pthread_mutex_destroy(&r->lock);
	return ok;
}

void run_fail(struct run *r, const char *fmt, ...)
{
	pthread_mutex_lock(&r->lock);
	if (__atomic_fetch_add(&r->failures, 1, __ATOMIC_RELAXED) == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->first_error, sizeof(r->first_error), fmt, ap);
		va_end(ap);
		r->failed_at = now_seconds();
	}
	pthread_mutex_unlock(&r->lock);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
}

bool run_over(struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED) || now_seconds() > r->deadline;
}

void run_add(struct run *r, const struct tally *t)
{
	pthread_mutex_lock(&r->lock);
	struct tally *s = &r->t;
	s->gets += t->gets;
	s->puts += t->puts;
	s->remote_puts += t->remote_puts;
	s->failed_gets += t->failed_gets;
	s->mag_exchanges += t->mag_exchanges;
	s->eliminated += t->eliminated;
	s->cas_retries += t->cas_retries;
	s->created += t->created;
	s->lost += t->lost;
	s->duplicated += t->duplicated;
	s->cookie_errors += t->cookie_errors;
	s->trimmed += t->trimmed;
	s->injected += t->injected;
	s->rounds += t->rounds;
	pthread_mutex_unlock(&r->lock);
}
