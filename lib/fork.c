/* SPDX-License-Identifier: MIT */
/*
 * fork.c - fork safety: one pthread_atfork registration that takes every
 * lock of the library before fork() and releases it after, in the parent
 * and in the child, so that the child never inherits a lock held by a
 * thread that does not exist in it.
 *
 * The order is the library's lock order, fixed:
 *   1. the upper layer's (ThreadStatic, threadstatic.c "fork"): first
 *      liburcu-bp's rcu_gp_lock and rcu_registry_lock, then lfp_ts_lock
 *      with every live pool's steal_lock (tried: other paths take it
 *      before lfp_ts_lock) and every cache's lock, then the spinlock of
 *      every CPU area of every per-CPU pool in the fallback mode,
 *   2. the registry of cores below, then each registered core's grow lock,
 *      in registry order (no code holds two grow locks at once),
 *   3. debug.c's error-hook, graveyard and watched-pools locks,
 *   4. slab.c's cache of small blocks (a leaf: taken under grow locks and
 *      the graveyard's, nothing taken under it).
 * Every other path takes a subset of these in the same order (lfp_ts_lock
 * before a grow lock, nothing while holding an area lock), so the prepare
 * handler cannot deadlock.  liburcu-bp's locks come first because a thread
 * may wait for any lock below while inside a grace section, which a trim
 * holding rcu_gp_lock waits for; and none of ours is held where liburcu
 * takes its own (a thread registers before it takes lfp_ts_lock or a
 * steal_lock, grace.h; a trim waits for a grace period holding nothing).
 * The child then lets the upper layer reset what belonged to threads that
 * do not exist in it (threadstatic.c), and each layer above that asked
 * (lfp_fork_set_kind_child) reset its cores: every Concurrent pool forgets
 * the trims those threads were running (concurrent.c).
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
/*
 * The upper layer's handlers: set once, by the process's first
 * ThreadStatic create, which another thread's fork() may overlap.  upper
 * is written whole before armed points to it (release); each fork reads
 * armed once, in prepare (acquire), and its parent and child handlers run
 * the upper layer's only if its prepare did (upper_ran, written and read
 * under cores_lock, which a fork holds from prepare to them).  Read in
 * each handler, a create between them made a parent release the upper
 * layer's locks that its prepare never took, lfp_ts_lock perhaps while
 * the creating thread held it (TSan: stress/lffork's first phase).
 */
static struct lfp_fork_hooks upper;
static void *armed;
static bool upper_ran;
/* lfp_fork_set_kind_child's, under cores_lock (which a fork holds from
 * prepare to the child handler). */
static void (*kind_child[LFP_KIND_MAGAZINES + 1])(struct lfp_core *c);

static void prepare(void)
{
	const struct lfp_fork_hooks *up = lfp_load_ptr_acq(&armed);
	if (up && up->prepare)
		up->prepare();
	pthread_mutex_lock(&cores_lock);
	upper_ran = up != NULL;
	for (struct lfp_core *c = cores; c; c = c->fork_next)
		pthread_mutex_lock(&c->grow_lock);
	lfp_debug_fork_lock();
	lfp_blocks_fork_lock();
}

/* Release what prepare took, in the reverse order. */
static void release(void)
{
	lfp_blocks_fork_unlock();
	lfp_debug_fork_unlock();
	for (struct lfp_core *c = cores; c; c = c->fork_next)
		pthread_mutex_unlock(&c->grow_lock);
	pthread_mutex_unlock(&cores_lock);
}

static void parent(void)
{
	bool ran = upper_ran;	/* before release: under cores_lock */
	release();
	if (ran && upper.parent)
		upper.parent();
}

static void child(void)
{
	bool ran = upper_ran;
	/* The grow locks still held: what other threads were doing to a
	 * pool's core ends here (a Concurrent get at capacity no longer waits
	 * for their trims). */
	for (struct lfp_core *c = cores; c; c = c->fork_next)
		if (kind_child[c->kind])
			kind_child[c->kind](c);
	release();
	if (ran && upper.child)
		upper.child();
}

static void register_handlers(void)
{
	pthread_atfork(prepare, parent, child);
}

void lfp_fork_init(void)
{
	pthread_once(&fork_once, register_handlers);
}

void lfp_fork_set_upper(const struct lfp_fork_hooks *h)
{
	lfp_fork_init();
	pthread_mutex_lock(&cores_lock);
	LFP_ASSERT(!armed);	/* once: a fork's parent or child reads upper unlocked */
	upper = *h;
	lfp_store_ptr_rel(&armed, &upper);	/* release: upper whole, for prepare */
	pthread_mutex_unlock(&cores_lock);
}

void lfp_fork_set_kind_child(enum lfp_kind k, void (*fn)(struct lfp_core *c))
{
	lfp_fork_init();
	pthread_mutex_lock(&cores_lock);
	kind_child[k] = fn;
	pthread_mutex_unlock(&cores_lock);
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
