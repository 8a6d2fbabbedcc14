/* SPDX-License-Identifier: MIT */
/*
 * sc_badinput.c - scenario 9: misuse caught by the debug checks.  Each
 * case runs in a forked child on an LFPOOL_F_DEBUG pool; the parent reads
 * the child's stderr and its exit status: the default error hook must name
 * the pool and the problem and abort.  A control case (correct use) must
 * exit cleanly and print nothing, or the death tests could not fail.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stress.h"

#define POOL_NAME "stress-bad"

/* ptr, or end the child: its set-up failed, which is not the misuse. */
static void *need(void *ptr, const char *what)
{
	if (!ptr) {
		fprintf(stderr, "%s: %s\n", what, strerror(errno));
		_exit(3);
	}
	return ptr;
}

/* A pool of fl with the debug checks on, named POOL_NAME. */
static void *debug_pool(const struct flavour *fl)
{
	lfpool_config cfg = { .obj_size = 64, .flags = LFPOOL_F_DEBUG, .name = POOL_NAME };
	return need(fl->create(&cfg), "create");
}

/* The calling thread's handle on pool. */
static void *handle(const struct flavour *fl, void *pool) { return need(fl->enter(pool), "enter"); }
static void *get_one(const struct flavour *fl, void *h) { return need(fl->get(h), "get"); }

/* The control: get, put, destroy, all correct. */
static void correct_use(const struct flavour *fl)
{
	void *pool = debug_pool(fl), *h = handle(fl, pool);
	fl->put(h, get_one(fl, h));
	fl->leave(pool, h);
	fl->destroy(pool);
}

/* Put the same object twice. */
static void double_put(const struct flavour *fl)
{
	void *pool = debug_pool(fl), *h = handle(fl, pool);
	void *obj = get_one(fl, h);
	fl->put(h, obj);
	fl->put(h, obj);
	fl->flush(h);	/* caches may check on the way to the depot */
}

/* Put an object of another pool. */
static void foreign_pointer(const struct flavour *fl)
{
	void *pool = debug_pool(fl), *other = debug_pool(fl);
	void *h = handle(fl, pool), *oh = handle(fl, other);
	fl->put(h, get_one(fl, oh));
	fl->flush(h);
}

/* Put a pointer into the middle of an object. */
static void interior_pointer(const struct flavour *fl)
{
	void *pool = debug_pool(fl), *h = handle(fl, pool);
	fl->put(h, (char *)get_one(fl, h) + 8);
	fl->flush(h);
}

/* For flavours whose handle is the pool: the pool is gone, its user puts. */
static void put_after_destroy(const struct flavour *fl)
{
	void *pool = debug_pool(fl), *h = handle(fl, pool);
	void *obj = get_one(fl, h);
	fl->leave(pool, h);
	fl->destroy(pool);
	fl->put(pool, obj);
}

/* For explicit caches: destroy must refuse while a cache is attached
 * (EBUSY, nothing done), and work once it is gone. */
static void destroy_with_cache(const struct flavour *fl)
{
	void *pool = debug_pool(fl), *h = handle(fl, pool);
	fl->put(h, get_one(fl, h));
	if (fl->destroy(pool) != -1 || errno != EBUSY) {
		fprintf(stderr, "destroy with a cache attached: not EBUSY\n");
		return;
	}
	fl->leave(pool, h);
	if (fl->destroy(pool) != 0)
		fprintf(stderr, "destroy after the cache went: %s\n", strerror(errno));
}

enum needs { ANY_HANDLE, POOL_HANDLE, CACHE_HANDLE };

struct misuse {
	const char *name;
	void (*act)(const struct flavour *fl);
	const char *message;	/* expected in stderr; NULL: clean exit, no output */
	bool names_pool;	/* the message names the pool (it still exists) */
	enum needs needs;
};

static const struct misuse cases[] = {
	{ "correct use", correct_use, NULL, false, ANY_HANDLE },
	{ "double put", double_put, "double put", true, ANY_HANDLE },
	{ "foreign pointer", foreign_pointer, "pointer not from this pool", true, ANY_HANDLE },
	{ "interior pointer", interior_pointer, "interior pointer", true, ANY_HANDLE },
	{ "put after destroy", put_after_destroy, "put after destroy", false, POOL_HANDLE },
	{ "destroy with a cache", destroy_with_cache, NULL, false, CACHE_HANDLE },
};

/* Run act in a child; its stderr (up to len - 1 bytes) and wait status. */
static int in_child(const struct flavour *fl, void (*act)(const struct flavour *),
		    char *out, size_t len)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDERR_FILENO);
		act(fl);
		_exit(0);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t got;
	while (n + 1 < len && (got = read(fds[0], out + n, len - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	close(fds[0]);
	int status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	return status;
}

/* Run case c in a child and check its stderr and exit status. */
static void check_case(struct run *r, const struct misuse *c)
{
	char out[2048];
	int status = in_child(r->fl, c->act, out, sizeof(out));
	r->t.rounds++;
	if (!c->message) {
		if (status != 0 || out[0])
			run_fail(r, "%s: status %#x, stderr: %s", c->name, status, out);
		return;
	}
	bool aborted = status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
	if (!aborted || !strstr(out, c->message) ||
	    (c->names_pool && !strstr(out, "'" POOL_NAME "'")))
		run_fail(r, "%s: want abort and \"%s\"%s; status %#x, stderr: %s", c->name,
			 c->message, c->names_pool ? " naming pool '" POOL_NAME "'" : "", status,
			 out[0] ? out : "(none)");
}

/* Every case that applies to the run's flavour. */
static void bad_input(struct run *r)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct misuse *c = &cases[i];
		if ((c->needs == POOL_HANDLE && !r->fl->handle_is_pool) ||
		    (c->needs == CACHE_HANDLE && r->fl->handle_is_pool))
			continue;	/* a case for the other kind of handle */
		check_case(r, c);
	}
}

const struct scenario sc_badinput = { "badinput", false, true, 1, bad_input };
