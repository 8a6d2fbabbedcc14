/* SPDX-License-Identifier: MIT */
/*
 * threadstatic.c - the ThreadStatic pool: create, destroy, prewarm, trim,
 * statistics, and the calls that go through the calling thread's implicit
 * cache.  The magazines are in cache.c, the depot in depot.c, the
 * per-thread table in tls.c; ts_internal.h says where objects can be.
 *
 * Trim's working set: the full magazines gets took from the depot since
 * the previous trim were needed, and so were the empty ones puts took (one
 * per full magazine given); the depot keeps as many of each, the hottest,
 * and the rest go.  Loose objects are below the working set by definition.
 */
#include <errno.h>
#include <sched.h>
#ifdef __GLIBC__
# include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grace.h"
#include "ts_internal.h"
#include "ts_percpu.h"

/*
 * fork: the handlers of ThreadStatic's locks, installed after fork.c's, so
 * that libc runs this prepare before fork.c's and this parent and child
 * after fork.c's (fork.c has the lock order).  prepare takes, in this order:
 *   1. liburcu-bp's rcu_gp_lock and rcu_registry_lock (grace.c),
 *   2. lfp_ts_lock, every live pool's steal_lock and every cache's lock,
 *   3. the CPU areas' fallback locks.
 * Why liburcu's first: a trim waits for a grace period (synchronize_rcu)
 * holding rcu_gp_lock, and the readers it waits for may be waiting for a
 * library lock (a get in its slow path: a grace section, then its cache's
 * lock).  Taken after the library's locks, prepare would wait for the trim
 * that waits for the reader that waits for prepare: the parent hung so in
 * fork_test.  Taken first, when no grace period runs, nothing
 * prepare then waits for can wait for a grace period.  The cost: prepare
 * holds the registry lock while it waits for the library's locks, and
 * liburcu takes that lock when a thread first enters a section; so no
 * thread may register holding a library lock (grace.h: lfp_grace_register
 * before the lock, lfp_grace_enter_locked under it).  Thread exit
 * (liburcu's key destructor) takes it holding none of ours.  Not covered:
 * liburcu's init_lock, held for an instant when a thread registers or
 * exits, is not among the locks its fork handlers take (0.13); a child
 * forked in that instant would hang when one of its threads registers.
 *
 * A thief holds a steal_lock while it waits for lfp_ts_lock, and the live
 * pools are read under lfp_ts_lock, so the steal_locks and cache locks are
 * tried, not waited for: when one is busy, prepare lets the library's locks
 * go, yields and starts again.  The parent and the child let go in the
 * reverse order, liburcu's last.  In the child only the forking thread
 * exists: the implicit caches of every other thread are abandoned
 * (lfp_cache_abandon says what becomes of their objects), and liburcu
 * forgets their registrations.  Explicit caches and worker slots belong to
 * no thread and are kept as they are: one that another thread was using at
 * the moment of fork may be half-way through a step, and the child must
 * not use it (nor destroy the pool while it may be so: destroy flushes
 * every worker slot).
 */
static void fork_unlock_caches(lfpool_ts *upto_pool, lfpool_ts_cache *upto_cache)
{
	lfpool_ts *p;
	for (uint32_t it = 0; (p = lfp_tls_next_live(&it));) {
		for (lfpool_ts_cache *c = p->caches; c; c = c->next) {
			if (p == upto_pool && c == upto_cache)
				return;
			lfp_cache_unlock(c);
		}
	}
}

static void fork_unlock_steals(lfpool_ts *upto)
{
	lfpool_ts *p;
	for (uint32_t it = 0; (p = lfp_tls_next_live(&it)) && p != upto;)
		pthread_mutex_unlock(&p->steal_lock);
}

/* Whether every steal_lock and cache lock was taken (else none is held). */
static bool fork_try_all(void)
{
	lfpool_ts *p;
	uint32_t it;
	for (it = 0; (p = lfp_tls_next_live(&it));) {
		if (pthread_mutex_trylock(&p->steal_lock) != 0) {
			fork_unlock_steals(p);
			return false;
		}
	}
	for (it = 0; (p = lfp_tls_next_live(&it));) {
		for (lfpool_ts_cache *c = p->caches; c; c = c->next) {
			if (!lfp_cache_trylock(c)) {
				fork_unlock_caches(p, c);
				fork_unlock_steals(NULL);
				return false;
			}
		}
	}
	return true;
}

static void fork_prepare(void)
{
	lfp_grace_fork_prepare();
	for (;;) {
		pthread_mutex_lock(&lfp_ts_lock);
		if (fork_try_all())
			break;
		pthread_mutex_unlock(&lfp_ts_lock);
		sched_yield();
	}
	lfpool_ts *p;
	for (uint32_t it = 0; (p = lfp_tls_next_live(&it));)
		lfp_ts_percpu_fork_lock(p, true);
}

/* Let go of what prepare took, but lfp_ts_lock. */
static void fork_release(void)
{
	lfpool_ts *p;
	for (uint32_t it = 0; (p = lfp_tls_next_live(&it));)
		lfp_ts_percpu_fork_lock(p, false);
	fork_unlock_caches(NULL, NULL);
	fork_unlock_steals(NULL);
}

static void fork_parent(void)
{
	fork_release();
	pthread_mutex_unlock(&lfp_ts_lock);
	lfp_grace_fork_parent();
}

static void fork_child(void)
{
	fork_release();
	lfp_tls_fork_child();
	lfpool_ts *p;
	for (uint32_t it = 0; (p = lfp_tls_next_live(&it));) {
		lfp_ts_percpu_fork_child(p);
		for (lfpool_ts_cache *c = p->caches, *next; c; c = next) {
			next = c->next;
			if ((c->kind == LFP_CACHE_IMPLICIT || c->kind == LFP_CACHE_HOME) &&
			    !lfp_tls_holds(p->gen, c))
				lfp_cache_abandon(c);
		}
	}
	pthread_mutex_unlock(&lfp_ts_lock);
	lfp_grace_fork_child();
}

static void set_fork_hooks(void)
{
	lfp_fork_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/*
 * A pool's head tells the inline lfpool_ts_get and lfpool_ts_put its kind
 * by its address (LFPOOL_TS_PERCPU_TAG_ in lfpool/impl/lookup.h): bit 6 is set in
 * a per-CPU pool's, whose gets and puts may run the restartable sequences
 * inline, and clear in the others', so that a per-CPU one is told by one
 * bit of a register, tested before the thread's home pool, the most
 * recently used pool and the directory.  The block is a multiple
 * of 128 bytes, which the small blocks' cache aligns to 128
 * (lfp_core_owner_alloc), and the head starts 64 bytes into a per-CPU
 * pool's.  A head in a block aligned otherwise only takes the slower way:
 * no path's correctness depends on the bit (a pool that runs no sequence
 * inline has a shut table: lib/threadstatic/ts_percpu.c).  Debug pools (whose per-CPU
 * gets and puts are never inline, and whose graveyard frees the head
 * itself) lead with nothing.
 */
static size_t head_lead(const lfpool_config *cfg)
{
	return (cfg->flags & LFPOOL_F_PERCPU) && !lfp_debug_wanted(cfg->flags) ?
	       LFPOOL_TS_PERCPU_TAG_ : 0;
}

/* The tail after a struct of head bytes (with what follows it) that makes
 * its block, with lead bytes before it, a multiple of 128 bytes. */
static size_t head_tail(size_t lead, size_t bytes)
{
	return ((lead + bytes + 127) & ~(size_t)127) - lead - sizeof(struct lfpool_ts);
}

/* LFPOOL_SHOW_STATS (debug.h, lfp_debug_watch). */
static void show(const void *p, FILE *out)
{
	lfpool_ts_dump(p, out);
}
LFP_DEBUG_WATCHER(LFP_WATCH_TS)

LFPOOL_API lfpool_ts *lfpool_ts_create(const lfpool_config *cfg)
{
	const char *name = cfg && cfg->name ? cfg->name : "threadstatic";
	if (cfg && cfg->magazine_size > LFPOOL_TS_MAGAZINE_SIZE_MAX) {
		errno = lfp_debug_refuse(name, "magazine_size %u is more than %u", cfg->magazine_size,
					 LFPOOL_TS_MAGAZINE_SIZE_MAX);
		return NULL;
	}
	if (cfg && cfg->depot_max > LFPOOL_TS_DEPOT_MAX_MAX) {
		errno = lfp_debug_refuse(name, "depot_max %u is more than %u", cfg->depot_max,
					 LFPOOL_TS_DEPOT_MAX_MAX);
		return NULL;
	}
	if (!cfg) {
		errno = lfp_debug_refuse(name, "no configuration (NULL)");
		return NULL;
	}
	/* The objects' first side data (core.h) and the per-CPU state
	 * (ts_percpu.h) in the pool's block, in that order (each a multiple
	 * of 64 bytes). */
	size_t side = lfp_core_inline_bytes(cfg), cpus = lfp_ts_percpu_state_bytes(cfg);
	size_t lead = head_lead(cfg), tail = head_tail(lead, sizeof(lfpool_ts) + side + cpus);
	/* Before the core registers with fork.c (lfp_core_init), holding no
	 * lock: a fork's prepare may run meanwhile. */
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	pthread_once(&fork_once, set_fork_hooks);
	lfpool_ts *p = lfp_core_owner_new(cfg, LFP_KIND_TS, sizeof(*p),
					  offsetof(struct lfpool_ts, core), lead, tail);
	if (!p)
		return NULL;
	size_t used = lfp_core_inline(&p->core, p + 1, side);
	int err = lfp_depot_init(&p->depot,
				 cfg->magazine_size ? cfg->magazine_size : LFPOOL_TS_MAGAZINE_SIZE,
				 cfg->depot_max ? cfg->depot_max : LFPOOL_TS_DEPOT_MAX,
				 cfg->allocator);
	/* The magazines' first side data (a thread's first two: 10 bytes)
	 * in what the objects' left of those bytes, where it fits: not a
	 * block of its own (64 bytes, and a line of another page written at
	 * a thread's first get). */
	if (!err)
		lfp_core_inline(&p->depot.mags, (char *)(p + 1) + used, side - used);
	/* Magazine growth reports as the pool does, under its name. */
	p->depot.mags.debug = p->core.debug;
	memcpy(p->depot.mags.name, p->core.name, sizeof(p->core.name));
	if (!err && (err = lfp_ts_percpu_init(p, cfg, (char *)(p + 1) + side)) != 0)
		lfp_depot_fini(&p->depot);
	if (err)
		goto fail;
	pthread_mutex_init(&p->steal_lock, NULL);
	lfp_ts_lock_busy();
	err = lfp_tls_register(p);
	lfp_ts_unlock_busy();
	if (err) {
		pthread_mutex_destroy(&p->steal_lock);
		lfp_ts_percpu_fini(p);
		lfp_depot_fini(&p->depot);
		goto fail;
	}
	p->magic = LFP_MAGIC_LIVE;
	watch(p);
	if (cfg->prewarm && lfpool_ts_prewarm(p, cfg->prewarm) != 0) {
		err = errno;
		lfpool_ts_destroy(p);
		errno = err;
		return NULL;
	}
	return p;
fail:
	lfp_core_fini(&p->core);
	lfp_core_owner_free(lfp_core_block_of(&p->core, p), lfp_core_block_bytes(&p->core, sizeof(*p)),
			    p->core.debug);
	errno = err;
	return NULL;
}

/* Take p out of the registry and free all its caches (lock held). */
/* Model: stress/model/exit.pml, steps D3-D4. */
static void retire(lfpool_ts *p)
{
	lfp_tls_unregister(p);
	while (p->caches)
		lfp_cache_free(p->caches);
	lfp_tls_forget(p);
}

/* The rest of destroy, p retired: its workers, CPU areas and depot go,
 * every object finalized (fini hooks: no lock held, no section). */
static void close_pool(lfpool_ts *p)
{
	lfp_workers_fini(p);

	/* Closing: a put from a fini hook goes to the depot (put_uncached),
	 * which is drained until it stays empty, so it is finalized too. */
	p->magic = LFP_MAGIC_CLOSING;
	uint64_t n = lfp_ts_percpu_fini(p);
	uint32_t chain;
	while ((chain = lfp_depot_drain(&p->depot, &p->core.slabs)) != LFP_NIL) {
		for (uint32_t i = chain, next; i != LFP_NIL; i = next, n++) {
			next = lfp_load_u32_rlx(lfp_slabs_link(&p->core.slabs, i));
			lfp_core_fini_obj(&p->core, lfp_slabs_ptr(&p->core.slabs, i));
		}
	}
	lfp_depot_fini(&p->depot);
	pthread_mutex_destroy(&p->steal_lock);
	p->gen = LFP_TS_DEAD;
	lfp_core_retire(&p->core, p, lfp_core_block_bytes(&p->core, sizeof(*p)),
			&p->magic, p->created - n);
}

/* Model: stress/model/exit.pml, steps D1-D8. */
LFPOOL_API int lfpool_ts_destroy(lfpool_ts *p)
{
	if (!p)
		return 0;
	/* What destroy reads of the struct, at once (core.h): all of it but
	 * the magazines' name. */
	lfp_prefetch_lines(p, LFP_HOT_BYTES(struct lfpool_ts, depot.mags));
	lfp_prefetch_lines(&p->core, LFP_HOT_BYTES(struct lfpool_ts, core) -
			   offsetof(struct lfpool_ts, core));
	lfp_prefetch_lines(&p->steal_lock, sizeof(*p) - offsetof(struct lfpool_ts, steal_lock));
	if (lfp_dead(p->core.name, &p->magic, p, "destroy of a pool already destroyed"))
		return -1;
	lfp_grace_register();	/* retire frees caches under lfp_ts_lock (grace.h) */
	lfp_ts_lock_busy();
	if (p->explicit_caches) {
		lfp_ts_unlock_busy();
		errno = EBUSY;
		return -1;
	}
	retire(p);
	lfp_ts_unlock_busy();
	lfp_debug_unwatch(p, show);	/* once it cannot fail: the caches' counts are retired */
	int cancel = lfp_ts_nocancel();	/* the fini hooks */
	close_pool(p);
	lfp_ts_cancel_restore(cancel);
	return 0;
}

LFPOOL_API int lfpool_ts_prewarm(lfpool_ts *p, size_t n)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "prewarm after destroy"))
		return -1;
	if (n == 0)
		return 0;
	uint32_t chain;
	int cancel = lfp_ts_nocancel();	/* the init hooks, the allocator */
	int err = lfp_ts_create_objects(p, n, LFP_OBJ_POOLED, &chain);
	if (!err)
		lfp_stack_push_chain_mpmc(&p->depot.objs, &p->core.slabs, chain,
					  lfp_chain_last(&p->core.slabs, chain, NULL));
	lfp_ts_cancel_restore(cancel);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* The counters of every cache the pool has had (lock held). */
static void sum_caches(const lfpool_ts *p, struct lfp_cache_counts *sum)
{
	*sum = p->retired;
	for (const lfpool_ts_cache *c = p->caches; c; c = c->next)
		lfp_cache_count(c, sum);
	lfp_ts_percpu_count(p, sum);
}

static uint32_t at_most(uint64_t n, uint32_t max) { return n < max ? (uint32_t)n : max; }

/*
 * Free the side data of c's slabs that trim gave back, after a grace
 * period (grace.h): every stale reader of their link words then has left
 * its section, unless a slab was grown or released meanwhile (then the
 * next trim frees them).
 */
#ifdef __GLIBC__
static void trim_malloc_first(void)
{
	malloc_trim(0);
}

/*
 * glibc's malloc_trim, the first call alone: it initializes glibc's malloc
 * if nothing did (its flag is set before the arena is: glibc 2.36's
 * ptmalloc_init), so a second thread's first call could walk the arena's
 * bins half set up.  That happens where malloc is interposed and glibc's
 * own never ran (ASan, TSan, jemalloc or tcmalloc preloaded): the ASan
 * fork stress crashed once so, in mtrim at address 0x8, two threads
 * trimming (stress/fork_test.c rare_calls).  pthread_once orders the first
 * call's initialization before every later call.
 */
static void trim_malloc(void)
{
	static pthread_once_t first = PTHREAD_ONCE_INIT;
	lfp_busy_enter();	/* malloc's locks: no signal handler's get creates */
	pthread_once(&first, trim_malloc_first);
	malloc_trim(0);	/* the first call trims twice: once per process */
	lfp_busy_leave();
}
#endif

/* Busy (grace.h, lfp_busy) while it holds grow_lock or waits: a signal
 * handler's get must not create objects meanwhile.  A trim from inside a
 * grace section (the backing allocator's: grace.h) does not wait: the side
 * data stays for a later trim, or destroy. */
static void reclaim_side(struct lfp_core *c)
{
	if (!lfp_grace_reclaims())
		return;
	lfp_busy_enter();
	pthread_mutex_lock(&c->grow_lock);
	uint64_t allocs = lfp_load_u64_rlx(&c->slabs.slab_allocs);
	uint64_t frees = lfp_load_u64_rlx(&c->slabs.slab_frees);
	pthread_mutex_unlock(&c->grow_lock);
	/* frees == 0: no slab given back, no side data to free. */
	if (frees == 0 || !lfp_grace_wait()) {
		lfp_busy_leave();
		return;
	}
	pthread_mutex_lock(&c->grow_lock);
	uint64_t freed = 0;
	if (lfp_load_u64_rlx(&c->slabs.slab_allocs) == allocs &&
	    lfp_load_u64_rlx(&c->slabs.slab_frees) == frees)
		freed = lfp_slabs_drop_side(&c->slabs);
	pthread_mutex_unlock(&c->grow_lock);
	lfp_busy_leave();
#ifdef __GLIBC__
	/* Side data came from malloc (the default allocator): free pages in
	 * the middle of its heap go back to the system only when asked. */
	if (freed && c->slabs.alloc.alloc == lfp_system_allocator.alloc)
		trim_malloc();
#else
	(void)freed;
#endif
}

/* From p's own fini hook a trim or destroy of p is half done: a trim or
 * drain then refuses (EDEADLK) rather than run inside it. */
static bool refused_in_fini(lfpool_ts *p)
{
	if (lfp_fini_running != &p->core)
		return false;
	errno = EDEADLK;
	return true;
}

/* Destroy what a trim took out (lfp_depot_trim_free) and count it:
 * outside a grace section.  Returns the number of objects. */
static size_t trim_free(lfpool_ts *p, const struct lfp_depot_trimmed *t)
{
	size_t n = lfp_depot_trim_free(&p->depot, &p->core, t);
	lfp_core_count_trim(&p->core, &p->created, n);
	return n;
}

/* The negative control of the matrix's hooks rows (stress/lfmatrix-
 * hooklock): a trim runs the fini hooks still holding steal_lock, as
 * it once did. */
#ifdef LFPOOL_STRESS_FINI_LOCKED
# define LFP_FINI_UNLOCKED 0
#else
# define LFP_FINI_UNLOCKED 1
#endif

/*
 * Take what trim gives back out of the depot into *t: under steal_lock,
 * the pops in a grace section.  The thread is busy (grace.h, lfp_busy)
 * throughout: a signal handler's get or put must not wait for the locks.
 * A pool without a fini hook destroys them here, still under steal_lock,
 * into *n, so that a thief at capacity finds the room they leave
 * (lfpool/ts.h, "Sizing"; stress/capacity's churn: no get fails while a
 * trim runs alongside), and returns false.  One with a fini hook returns
 * true: its caller destroys them holding no lock: a hook may
 * block, or get from another pool Q at capacity while Q's trim runs a hook
 * that gets from this one; a thief, drain or trim of either pool then
 * waits for no hook, and a get at capacity meanwhile fails with ENOBUFS
 * (these objects are neither pooled nor yet uncounted).
 */
static bool trim_take(lfpool_ts *p, size_t keep, struct lfp_depot_trimmed *t, size_t *n)
{
	struct lfp_cache_counts now;
	bool hooked = LFP_FINI_UNLOCKED && p->core.fini != NULL;
	lfp_grace_register();	/* before steal_lock (grace.h) */
	lfp_busy_enter();
	pthread_mutex_lock(&p->steal_lock);
	/* Every CPU area's objects first (stop and take, steal.c): below the
	 * working set like loose objects. */
	if (p->percpu)
		lfp_steal_drain_areas(p);
	lfp_ts_lock_busy();
	sum_caches(p, &now);
	uint64_t full = now.full_pops - p->trimmed_pops;
	uint64_t empty = now.full_pushes - p->trimmed_pushes;
	p->trimmed_pops = now.full_pops;
	p->trimmed_pushes = now.full_pushes;
	for (lfpool_ts_cache *c = p->caches; c; c = c->next)
		lfp_cache_cool(c);
	lfp_ts_unlock_busy();

	lfp_grace_enter_locked();
	lfp_depot_trim(&p->depot, &p->core, at_most(full, p->depot.max_full),
		       at_most(empty, p->depot.max_full), keep, t);
	lfp_grace_leave();
	if (!hooked)
		*n = trim_free(p, t);
	pthread_mutex_unlock(&p->steal_lock);
	lfp_busy_leave();
	return hooked;
}

/* With cancellation off (lfpool/ts.h, "Cancellation"): the fini hooks, and
 * liburcu-bp's wait, which holds its lock across poll(). */
LFPOOL_API size_t lfpool_ts_trim(lfpool_ts *p, size_t keep)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "trim after destroy"))
		return 0;
	if (refused_in_fini(p))
		return 0;
	int cancel = lfp_ts_nocancel();
	struct lfp_depot_trimmed t;
	size_t n = 0;
	/* Holding no lock and in no section: the fini hooks may call any pool
	 * (trims of others too) or block, and gets and puts may wait in
	 * sections for the locks above. */
	if (trim_take(p, keep, &t, &n))
		n = trim_free(p, &t);
	reclaim_side(&p->core);
	reclaim_side(&p->depot.mags);
	lfp_ts_cancel_restore(cancel);
	return n;
}

LFPOOL_API size_t lfpool_ts_drain(lfpool_ts *p)
{
	/* From the pool's fini hook first: in destroy (closing) too, EDEADLK. */
	if (refused_in_fini(p) || lfp_core_dead(&p->core, &p->magic, NULL, "drain after destroy"))
		return 0;
	int cancel = lfp_ts_nocancel();
	lfp_busy_enter();	/* the steal_lock and the caches' locks */
	size_t n = lfp_steal_drain_all(p);
	lfp_busy_leave();
	lfp_ts_cancel_restore(cancel);
	return n;
}

LFPOOL_API int lfpool_ts_owns(const lfpool_ts *p, const void *ptr)
{
	/* Closing: a fini hook of destroy may still ask. */
	if (p->magic != LFP_MAGIC_CLOSING &&
	    lfp_core_dead(&p->core, &p->magic, ptr, "owns after destroy"))
		return 0;
	return lfp_core_owns(&p->core, ptr);
}

LFPOOL_API int lfpool_ts_dump(const lfpool_ts *p, FILE *out)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "dump after destroy"))
		return -1;
	lfpool_stats st;
	lfpool_ts_stats(p, &st);
	return lfp_core_dump(&p->core, &st, out);
}

LFPOOL_API void lfpool_ts_stats(const lfpool_ts *p, lfpool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (lfp_core_dead(&p->core, &p->magic, NULL, "stats after destroy"))
		return;
	struct lfp_cache_counts sum;
	lfp_ts_lock_busy();
	sum_caches(p, &sum);
	lfp_ts_unlock_busy();

	lfp_core_stats(&p->core, st);
	st->gets = sum.gets + lfp_load_u64_rlx(&p->signal_gets);
	st->puts = sum.puts + lfp_load_u64_rlx(&p->uncached_puts);
	/* In a pool in use the sums are of different moments: keep them sane. */
	st->misses = sum.misses;
	st->hits = sum.gets > sum.misses ? sum.gets - sum.misses : 0;
	st->mag_exchanges = sum.full_pops + sum.full_pushes;
	st->created = lfp_load_u64_rlx(&p->created);
	uint64_t live = st->gets > st->puts ? st->gets - st->puts : 0;
	st->live = live < st->created ? live : st->created;
	st->retained = st->created - st->live;
	st->bytes_held += lfp_slabs_bytes(&p->depot.mags.slabs);
	lfp_ts_percpu_stats(p, st);
}

LFPOOL_API size_t lfpool_ts_max_bytes(const lfpool_ts *p, size_t caches)
{
	/* Destroy freed the depot and the CPU areas that the bound counts. */
	if (lfp_core_dead(&p->core, &p->magic, NULL, "max_bytes after destroy"))
		return 0;
	uint64_t b = lfp_depot_max_bytes(&p->depot, &p->core, caches);
	uint64_t areas = lfp_ts_percpu_bytes(p);
	b = b > UINT64_MAX - areas ? UINT64_MAX : b + areas;
	return b < SIZE_MAX ? (size_t)b : SIZE_MAX;
}

/* Debug pools stay readable after destroy, so that a call on one is
 * reported here (on others it is undefined). */
static bool destroyed(lfpool_ts *p, const void *ptr, const char *problem)
{
	return lfp_core_dead(&p->core, &p->magic, ptr, problem);
}

/* lfp_tls_cache, or NULL with EAGAIN from a signal handler that
 * interrupted a step of this thread (lfp_busy): the thread's directory may
 * be half way through a change (lfpool/ts.h, "Signal handlers"). */
static lfpool_ts_cache *tls_cache(lfpool_ts *p)
{
	if (lfp_busy) {
		errno = EAGAIN;
		return NULL;
	}
	lfp_busy_enter();
	lfpool_ts_cache *c = lfp_tls_cache(p);
	lfp_busy_leave();
	return c;
}

/* The calling thread's cache for p, made on first use. */
static lfpool_ts_cache *thread_cache(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfpool_ts_mru_find_(p);	/* cache, then pool: signals */
	if (LFPOOL_LIKELY(c != NULL))
		return c;
	if (p->magic == LFP_MAGIC_CLOSING) {
		errno = EINVAL;	/* a fini hook's bulk call: puts go uncached */
		return NULL;
	}
	return destroyed(p, NULL, "call after destroy") ? NULL : tls_cache(p);
}

/* A put of a thread that can have no cache (out of memory, or past its
 * key destructor: lfp_tls_exiting): straight to the depot. */
static void put_uncached(lfpool_ts *p, void *obj)
{
	if ((p->magic != LFP_MAGIC_LIVE && p->magic != LFP_MAGIC_CLOSING) ||
	    !lfp_core_accept(&p->core, obj))
		return;
	lfp_depot_put_objs(&p->depot, &p->core.slabs, &obj, 1);
	lfp_faa_u64_rlx(&p->uncached_puts, 1);
}

/* A get of n objects (all or none) by a thread past its key destructor,
 * which may keep no cache (lfp_tls_exiting): through a cache made for the
 * call, whose other objects go back to the depot as it is freed.  Of the
 * implicit kind, in no thread's directory: not an explicit cache that
 * would make a destroy fail with EBUSY meanwhile, and a fork's child
 * abandons it as any other thread's.  0, or -1 with errno as get. */
static int get_uncached(lfpool_ts *p, void **objs, size_t n)
{
	if (p->magic != LFP_MAGIC_LIVE) {	/* a fini hook's get during destroy */
		errno = EINVAL;
		return -1;
	}
	lfp_grace_register();	/* before lfp_ts_lock (grace.h) */
	lfp_ts_lock_busy();
	lfpool_ts_cache *c = lfp_cache_new(p, LFP_CACHE_IMPLICIT);
	lfp_ts_unlock_busy();
	if (!c) {
		errno = ENOMEM;
		return -1;
	}
	int r = lfpool_ts_cache_get_bulk(c, objs, n);
	int err = errno;
	lfp_ts_lock_busy();
	lfp_cache_free(c);
	lfp_ts_unlock_busy();
	errno = err;
	return r;
}

/* The inline lfpool_ts_get and _put (lfpool/ts.h) call these
 * when the thread's last used cache is not p's: a per-CPU pool (which
 * gives no thread a cache), another pool, or the thread's first call. */
LFPOOL_API void *lfpool_ts_get_slow(lfpool_ts *p)
{
	if (p->percpu)
		return lfp_ts_percpu_get(p->percpu);
	if (destroyed(p, NULL, "get after destroy"))
		return NULL;
	lfpool_ts_cache *c = tls_cache(p);
	if (LFPOOL_LIKELY(c != NULL))
		return lfpool_ts_cache_get(c);
	void *obj = NULL;
	if (!lfp_busy && lfp_tls_exiting())
		get_uncached(p, &obj, 1);
	return obj;
}

LFPOOL_API void lfpool_ts_put_slow(lfpool_ts *p, void *obj)
{
	if (p->percpu) {
		lfp_ts_percpu_put(p->percpu, obj);
		return;
	}
	if (obj && p->magic == LFP_MAGIC_CLOSING) {
		put_uncached(p, obj);	/* from a fini hook during destroy */
		return;
	}
	if (!obj || destroyed(p, obj, "put after destroy"))
		return;
	/* From a signal handler that interrupted a step of this thread: to
	 * the loose stack, errno as it was. */
	lfpool_ts_cache *c = lfp_busy ? NULL : tls_cache(p);
	if (c)
		lfpool_ts_cache_put(c, obj);
	else
		put_uncached(p, obj);
}

/*
 * The async-signal-safe pair (lfpool/ts.h, "Signal handlers"): they never
 * touch the calling thread's caches or CPU area, whose hit (three moves on
 * a cache's top) a handler may have interrupted, and take no lock.  A get
 * pops one loose object of the depot (a tagged CAS, reentrant: the
 * interrupted thread's own CAS on that stack fails and retries) inside a
 * grace section, entered only when the thread is in none (not busy: its
 * counters then go 0 -> 1 -> 0 around the pop; the section never
 * registers with liburcu-bp, whose registration locks and maps); a put
 * pushes onto that stack as one chain.  Neither creates an object (the
 * backing allocator and the init hook are not async-signal-safe); the
 * hooks they do run (reset; on a debug pool the remaking fini and init,
 * and the error hook) are the user's to make async-signal-safe (ts.h).
 */
LFPOOL_API void *lfpool_ts_get_signal(lfpool_ts *p)
{
	if (p->magic != LFP_MAGIC_LIVE) {
		errno = EINVAL;
		return NULL;
	}
	if (lfp_busy) {		/* inside a grace section or holding a lock */
		errno = EAGAIN;
		return NULL;
	}
	void *obj;
	lfp_grace_enter_locked();
	uint32_t n = lfp_depot_get_objs(&p->depot, &p->core.slabs, &obj, 1);
	lfp_grace_leave();
	if (!n) {
		errno = EAGAIN;
		return NULL;
	}
	lfp_core_mark_out(&p->core, lfp_slabs_index(&p->core.slabs, obj));
	lfp_faa_u64_rlx(&p->signal_gets, 1);
	return obj;
}

LFPOOL_API int lfpool_ts_put_signal(lfpool_ts *p, void *obj)
{
	if (p->magic != LFP_MAGIC_LIVE) {
		errno = EINVAL;
		return -1;
	}
	if (obj)
		put_uncached(p, obj);
	return 0;
}

LFPOOL_API struct lfpool_span_ lfpool_ts_span_(const lfpool_ts *p)
{
	return lfp_core_span(&p->core);
}

LFPOOL_API int lfpool_ts_get_bulk(lfpool_ts *p, void **objs, size_t n)
{
	if (p->percpu)
		return lfp_ts_percpu_get_bulk(p, objs, n);
	lfpool_ts_cache *c = thread_cache(p);
	if (LFPOOL_LIKELY(c != NULL))
		return lfpool_ts_cache_get_bulk(c, objs, n);
	return !lfp_busy && lfp_tls_exiting() ? get_uncached(p, objs, n) : -1;
}

LFPOOL_API void lfpool_ts_put_bulk(lfpool_ts *p, void *const *objs, size_t n)
{
	if (p->percpu) {
		lfp_ts_percpu_put_bulk(p, objs, n);
		return;
	}
	lfpool_ts_cache *c = lfp_busy ? NULL : thread_cache(p);
	if (c) {
		lfpool_ts_cache_put_bulk(c, objs, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (objs[i])
			put_uncached(p, objs[i]);
}

LFPOOL_API void lfpool_ts_flush(lfpool_ts *p)
{
	if (destroyed(p, NULL, "flush after destroy"))
		return;
	if (p->percpu)
		lfp_ts_percpu_flush(p);
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (c)
		lfpool_ts_cache_flush(c);
}

LFPOOL_API int lfpool_ts_attach(lfpool_ts *p)
{
	/* Past the key destructor calls go uncached: nothing to make. */
	return p->percpu || thread_cache(p) || (lfp_tls_exiting() && p->magic == LFP_MAGIC_LIVE)
		? 0 : -1;
}

LFPOOL_API void lfpool_ts_detach(lfpool_ts *p)
{
	if (destroyed(p, NULL, "detach after destroy"))
		return;
	lfp_tls_detach(p);
}
