/* SPDX-License-Identifier: MIT */
/*
 * examples/helpers.c - the everyday helpers: a typed pool, a scoped get, a
 * reference-counted object and pooled closures.  The README's examples, run
 * by make check.
 */
#include <stdio.h>

#include <lfpool.h>

struct msg {
	int id;
	char text[56];
};

/* msg_pool: a Pool of struct msg with typed calls (no casts). */
LFPOOL_TYPED(msg_pool, struct msg, pool);

/* A scoped get: m goes back to the pool on every way out of the block. */
static int fill(msg_pool *mp, int id, struct msg **kept)
{
	LFPOOL_SCOPED(msg_pool, struct msg, m, mp);
	if (!m)
		return -1;
	m->id = id;
	if (id < 0)
		return -1;		/* m is put back here */
	snprintf(m->text, sizeof(m->text), "message %d", id);
	*kept = LFPOOL_DISOWN(m);	/* kept: not put back */
	return 0;
}

/* A closure's function: its capture, and the argument of invoke. */
struct add_capture {
	int amount;
};

static void add(void *capture, void *arg)
{
	*(int *)arg += ((struct add_capture *)capture)->amount;
}

int main(void)
{
	/* Typed and scoped. */
	msg_pool *mp = msg_pool_create(NULL);
	struct msg *m = NULL;
	if (!mp || fill(mp, -1, &m) == 0 || fill(mp, 7, &m) != 0)
		return 1;
	puts(m->text);
	msg_pool_put(mp, m);
	msg_pool_destroy(mp);

	/* Reference counted: back in the pool when the last holder releases. */
	lfpool_config cfg = { .obj_size = sizeof(struct msg) };
	lfpool_rc *rc = lfpool_rc_create(LFPOOL_FLAVOUR_CONCURRENT, &cfg);
	if (!rc)
		return 1;
	struct msg *shared = lfpool_rc_get(rc);	/* count 1 */
	lfpool_rc_retain(shared);			/* count 2: a second holder */
	int last_1 = lfpool_rc_release(shared);	/* 0: still held */
	int last_2 = lfpool_rc_release(shared);	/* 1: back in the pool */
	printf("rc releases: %d then %d\n", last_1, last_2);
	lfpool_rc_destroy(rc);

	/* Closures: function + capture in one pooled object, no malloc. */
	lfpool_config ccfg = { .obj_size = 32, .prewarm = 4 };	/* 32 capture bytes */
	lfpool_closure_pool *cp = lfpool_closure_pool_create(LFPOOL_FLAVOUR_POOL, &ccfg);
	if (!cp)
		return 1;
	int total = 0;
	for (int i = 1; i <= 4; i++) {
		struct add_capture cap = { i };
		lfpool_closure *c = lfpool_closure_get(cp, add, &cap, sizeof(cap));
		if (!c)
			return 1;
		lfpool_closure_run(cp, c, &total);	/* invoke, then release */
	}
	printf("closures added up to %d\n", total);
	if (lfpool_closure_pool_destroy(cp) != 0)
		return 1;
	return last_1 == 0 && last_2 == 1 && total == 10 ? 0 : 1;
}
