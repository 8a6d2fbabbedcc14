/* SPDX-License-Identifier: MIT */
/*
 * obj.c - stress objects: an owner word and a patterned body that tell
 * whether an object is ever held by two threads at once, handed out after
 * fini, or written while pooled.
 *
 * The owner word is swapped with RELAXED atomics on purpose: the swap finds
 * two holders whatever the ordering, and it must add no happens-before edge
 * of its own, so that under TSan the body's plain reads and writes are
 * ordered by the pool's synchronization alone.
 */
#include <errno.h>
#include <string.h>

#include "stress.h"

/* Write the body pattern of o->cookie. */
static void fill(struct sobj *o)
{
	for (unsigned i = 0; i < OBJ_BODY; i++)
		o->body[i] = (unsigned char)((o->cookie >> (8 * (i % 8))) ^ i);
}

/* Whether the body holds the pattern of o->cookie. */
static bool body_ok(const struct sobj *o)
{
	for (unsigned i = 0; i < OBJ_BODY; i++)
		if (o->body[i] != (unsigned char)((o->cookie >> (8 * (i % 8))) ^ i))
			return false;
	return true;
}

/* Swap the owner word; the previous owner. */
static uint64_t swap_owner(struct sobj *o, uint64_t v)
{
	return __atomic_exchange_n(&o->owner, v, __ATOMIC_RELAXED);
}

void obj_init_hook(void *obj, void *ctx)
{
	struct round *rd = ctx;
	struct sobj *o = obj;
	o->id = __atomic_fetch_add(&rd->objs.next_id, 1, __ATOMIC_RELAXED);
	o->cookie = o->id * UINT64_C(0x9e3779b97f4a7c15);
	o->getter = 0;
	fill(o);
	swap_owner(o, 0);
	__atomic_fetch_add(&rd->objs.inits, 1, __ATOMIC_RELAXED);
}

/* fini calls on this thread: trim's count is checked against them. */
static __thread uint64_t finis_here;

uint64_t obj_finis_here(void)
{
	return finis_here;
}

void obj_fini_hook(void *obj, void *ctx)
{
	struct round *rd = ctx;
	struct sobj *o = obj;
	uint64_t was = swap_owner(o, OBJ_DEAD);
	if (was != 0)
		run_fail(rd->run, "fini ran on object %llu while %s", (unsigned long long)o->id,
			 was == OBJ_DEAD ? "already finalized" : "out with a user");
	__atomic_fetch_add(&rd->objs.finis, 1, __ATOMIC_RELAXED);
	finis_here++;
}

/* Swap the owner word from `expect` to `to`; false (counted) otherwise. */
static bool change_owner(struct worker *w, struct sobj *o, uint64_t expect, uint64_t to,
			 const char *when)
{
	uint64_t was = swap_owner(o, to);
	if (was == expect)
		return true;
	w->t.duplicated++;
	if (was == OBJ_DEAD)
		run_fail(w->rd->run, "%s: object %llu had been finalized", when,
			 (unsigned long long)o->id);
	else
		run_fail(w->rd->run, "%s: object %llu held by %llu, expected %llu (thread %u)",
			 when, (unsigned long long)o->id, (unsigned long long)was,
			 (unsigned long long)expect, w->tid);
	return false;
}

/* The body matches its cookie, or a cookie error is recorded. */
static bool check_body(struct worker *w, const struct sobj *o, const char *when)
{
	if (body_ok(o))
		return true;
	w->t.cookie_errors++;
	run_fail(w->rd->run, "%s: body of object %llu does not match its cookie (thread %u)",
		 when, (unsigned long long)o->id, w->tid);
	return false;
}

bool obj_claim(struct worker *w, void *obj)
{
	struct sobj *o = obj;
	if (!change_owner(w, o, 0, w->tid, "get") || !check_body(w, o, "get"))
		return false;
	o->getter = w->tid;
	o->cookie = rng_next(&w->rng);
	fill(o);
	w->t.gets++;
	return true;
}

bool obj_release(struct worker *w, void *obj)
{
	struct sobj *o = obj;
	if (!check_body(w, o, "put") || !change_owner(w, o, w->tid, 0, "put"))
		return false;
	if (o->getter != w->tid)
		w->t.remote_puts++;
	w->t.puts++;
	return true;
}

bool obj_pass(struct worker *w, void *obj)
{
	return change_owner(w, obj, w->tid, OBJ_IN_SLOT, "hand-over");
}

bool obj_take(struct worker *w, void *obj)
{
	return change_owner(w, obj, OBJ_IN_SLOT, w->tid, "take-over") &&
	       check_body(w, obj, "take-over");
}

void *worker_get(struct worker *w, bool enobufs_ok, bool enomem_ok)
{
	void *obj = w->rd->run->fl->get(w->h);
	if (!obj) {
		int err = errno;
		if ((err == ENOBUFS && enobufs_ok) || (err == ENOMEM && enomem_ok))
			w->t.failed_gets++;
		else
			run_fail(w->rd->run, "get failed unexpectedly: %s (thread %u)",
				 strerror(err), w->tid);
		return NULL;
	}
	return obj_claim(w, obj) ? obj : NULL;
}

void worker_put(struct worker *w, void *obj)
{
	if (obj_release(w, obj))
		w->rd->run->fl->put(w->h, obj);
}

bool worker_get_bulk(struct worker *w, void **objs, size_t n, bool enobufs_ok)
{
	if (w->rd->run->fl->get_bulk(w->h, objs, n) != 0) {
		int err = errno;
		if (err == ENOBUFS && enobufs_ok)
			w->t.failed_gets++;
		else
			run_fail(w->rd->run, "bulk get of %zu failed unexpectedly: %s (thread %u)", n,
				 strerror(err), w->tid);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (!obj_claim(w, objs[i]))
			return false;
	return true;
}

void worker_put_bulk(struct worker *w, void **objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!obj_release(w, objs[i]))
			return;
	w->rd->run->fl->put_bulk(w->h, objs, n);
}
