/* SPDX-License-Identifier: MIT */
/*
 * fork.c - fork safety: pthread_atfork handlers that take every lock of the
 * library before fork() and release them after, in the parent and in the
 * child, so that the child never inherits a lock held by a thread that
 * does not exist in it.
 *
 * The order is the library's lock order, fixed:
 *   1. ThreadStatic's (threadstatic.c "fork"): first liburcu-bp's
 *      rcu_gp_lock and rcu_registry_lock, then lfp_ts_lock with every live
 *      pool's steal_lock (tried: other paths take it before lfp_ts_lock)
 *      and every cache's lock, then the spinlock of every CPU area of every
 *      per-CPU pool in the fallback mode,
 *   2. the registry of cores below, then each registered core's grow lock,
 *      in registry order (no code holds two grow locks at once),
 *   3. debug.c's error-hook, graveyard and watched-pools locks,
 *   4. slab.c's cache of small blocks (a leaf: taken under grow locks and
 *      the graveyard's, nothing taken under it).
 * Every other path takes a subset of these in the same order (lfp_ts_lock
 * before a grow lock, nothing while holding an area lock), so the prepare
 * handlers cannot deadlock.  liburcu-bp's locks come first because a thread
 * may wait for any lock below while inside a grace section, which a trim
 * holding rcu_gp_lock waits for; and none of ours is held where liburcu
 * takes its own (a thread registers before it takes lfp_ts_lock or a
 * steal_lock, grace.h; a trim waits for a grace period holding nothing).
 *
 * This file takes 2 to 4.  The layers above install their own handlers,
 * each after calling lfp_fork_init (so after these), and nothing here
 * calls up to them: libc runs prepare handlers in the reverse order of
 * their installation and parent and child handlers in that order (POSIX),
 * so ThreadStatic's prepare (1) runs before this file's and its parent and
 * child after, and Concurrent's child (concurrent.c: every Concurrent pool
 * forgets the trims that vanished threads were running) after this file's
 * child let the grow locks go.  glibc and musl take their own lock from
 * the prepare handlers to the parent's, so an installation never falls
 * between a fork's prepare and parent.
 *
 * Cores register when they may take their grow lock (Concurrent,
 * ThreadStatic and magazine cores); a Pool takes no grow lock and does
 * not, but its creation installs the handlers (lfp_fork_init), since it
 * takes the locks of 3 and 4: a process that only ever made Pools had no
 * handler, and a child forked while a thread held the small blocks' lock
 * hung in its first Pool get (lffork, Pool mode, first in its run).
 */
#include <pthread.h>

#include "core.h"

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t cores_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lfp_core *cores;		/* under cores_lock */

static void prepare(void)
{
	pthread_mutex_lock(&cores_lock);
	for (struct lfp_core *c = cores; c; c = c->fork_next)
		pthread_mutex_lock(&c->grow_lock);
	lfp_debug_fork_lock();
	lfp_blocks_fork_lock();
}

/* Release what prepare took, in the reverse order: the parent's and the
 * child's handler. */
static void release(void)
{
	lfp_blocks_fork_unlock();
	lfp_debug_fork_unlock();
	for (struct lfp_core *c = cores; c; c = c->fork_next)
		pthread_mutex_unlock(&c->grow_lock);
	pthread_mutex_unlock(&cores_lock);
}

static void register_handlers(void)
{
	pthread_atfork(prepare, release, release);
}

void lfp_fork_init(void)
{
	pthread_once(&fork_once, register_handlers);
}

struct lfp_core *lfp_fork_next_child(const struct lfp_core *c)
{
	return c ? c->fork_next : cores;
}

void lfp_fork_register(struct lfp_core *c)
{
	lfp_fork_init();
	pthread_mutex_lock(&cores_lock);
	c->forked_list = true;
	c->fork_next = cores;
	c->fork_pprev = &cores;
	if (cores)
		cores->fork_pprev = &c->fork_next;
	cores = c;
	pthread_mutex_unlock(&cores_lock);
}

/* A core never registered (a Pool's) returns at once, on forked_list,
 * which only its own create and destroy write.  Not on fork_pprev, which
 * the unregister of a neighbour on another thread rewrites under the lock
 * (a destroy of one pool racing with a destroy of another: TSan reported
 * the unlocked read, stress/rc_array_stress.c's handoff scenario). */
void lfp_fork_unregister(struct lfp_core *c)
{
	if (!c->forked_list)
		return;
	pthread_mutex_lock(&cores_lock);
	*c->fork_pprev = c->fork_next;
	if (c->fork_next)
		c->fork_next->fork_pprev = c->fork_pprev;
	c->fork_pprev = NULL;
	pthread_mutex_unlock(&cores_lock);
	c->forked_list = false;
}
