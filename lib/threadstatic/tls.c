/* SPDX-License-Identifier: MIT */
/*
 * tls.c - implicit per-thread caches: which cache the calling thread uses
 * for a pool, and handing it back when the thread exits; and the registry
 * of live pools, whose slots are the pools' ids in the threads'
 * directories (and which tells fork's handlers which pools to visit).
 *
 * Each thread has a directory of its caches indexed by the pools' dense
 * ids (a pool's registry slot, read by the inline path from the pool's
 * head, struct lfpool_ts_fast), and the entry the inline fast path
 * (lfpool/impl/lookup.h) reads: lfpool_ts_tls_, the pool and cache it used last,
 * and the directory.  A call on another pool than the last one's is then
 * one bounds test and one load, inline, with no call.  Every step of a
 * thread is O(1) amortised, whatever the number of pools (the registry's
 * create and destroy, below, are O(log) of its free slots):
 *  - a lookup is dir[id] (id < the directory's length);
 *  - an insert past the end doubles the directory (to the next power of
 *    two above id), so it takes 8 bytes per slot up to the highest id the
 *    thread used; the lowest free registry slot is reused first, so a
 *    pool's id is at most the number of other pools alive when it was
 *    made;
 *  - destroy clears, in every thread's directory and fast-path entry, the
 *    pool it destroys (O(threads)), before its slot can be reused, so an
 *    entry never names a dead pool and its id's next pool finds NULL.
 *
 * The fast-path entry names the pool by address, which a new pool may
 * reuse once the old one is freed: destroy therefore clears every thread's
 * entry naming it, under lfp_ts_lock, before it frees anything.  Only the
 * owner thread writes its entry otherwise, cache first, then the pool
 * (release), and the destroyer only ever writes NULL over the pool it
 * destroys, which no thread may be using then.  So the owner reads either
 * a live pool with its own cache or NULL; both fields are atomics of
 * lib/atomic.h here, relaxed loads in the inline path (plain moves on
 * x86-64; __atomic loads under ThreadSanitizer, so that the TSan build
 * checks the same protocol).  Directory slots follow the same rule: the
 * owner writes its caches, a destroyer NULL over its pool's; only the
 * owner moves the directory (growing it), under lfp_ts_lock, which every
 * destroyer holds.
 *
 * At thread exit a pthread key destructor frees, under lfp_ts_lock, the
 * caches its directory holds; destroy holds the same lock, so an exit
 * racing with destroy sees the pool either whole or gone.
 *
 * The home cache: a thread's first implicit cache is made in its
 * lfpool_ts_tls_.home (kind LFP_CACHE_HOME), so that the inline path's
 * hit on that pool loads no cache pointer (lfpool/ts.h says why that
 * matters).  The first cache, rather than the most used: a cache cannot
 * move while thieves may hold it, and a thread's first pool is most often
 * the one it uses most.  Apart from its storage it is a cache like any:
 * in the thread's directory and its pool's head, on its pool's list of
 * caches, where thieves, stats, trim and fork's handlers reach it.  The
 * home is taken when home_pool is NULL: the owner sets home_pool last,
 * under lfp_ts_lock, after the cache is linked; whoever unlinks the cache
 * (lfp_cache_free, which for a home frees nothing) clears home_pool under
 * the same lock: its owner at detach and exit, a destroyer of its pool
 * (which, as for the fast-path entry, writes only NULL over the pool it
 * destroys, before the pool can be freed and its address reused).  So the
 * owner's inline path sees its home pool alive or NULL, and reuses the
 * storage only after every other thread let go of it.  Exit clears it
 * before glibc frees the TLS block.  A fork's child keeps the forking
 * thread's home; the other threads' homes are abandoned with their caches
 * (unlinked, never freed: their TLS is not ours).  Spin model:
 * stress/model/home.pml (reuse, detach, destroy, exit, thieves).
 *
 * The array home: a second home, by the same rules, for pools of
 * array_class (the classes of array pools), in the array layer's TLS
 * (LFPOOL_ARRAY_HOME_; lfpool/array.h runs it at its constant address):
 * their first cache in a thread takes it, and they never take the home,
 * which stays for the thread's first object pool.  Its pool is the
 * thread table's array_home_pool, under lfp_ts_lock (no inline path reads
 * it): set when the cache is made, cleared where home_pool is (destroy,
 * detach), and then the layer clears its entries for it
 * (array_home_lost: they name the array pool by address, which
 * may be reused); exit clears the layer's whole table first anyway.
 * Spin model: stress/model/array_home.pml (the owner's hit, another
 * thread's destroy and its clear, address reuse, exit).
 *
 * Thread slots: the first LFPOOL_TS_THREAD_SLOTS_ threads to take a cache
 * (at a time) also get a slot, tslot in their fast-path entry, and each
 * pool keeps such a thread's cache in its head, by_thread[tslot], which
 * the inline path reads before the directory: the pool's head is read for
 * its id anyway, so the cache's address comes one dependent load sooner.
 * by_thread[tslot] only ever holds a cache that the thread's directory
 * holds too.  Only the slot's thread writes its entries (as it inserts
 * into or clears its directory, and at exit, which clears the entries of
 * every pool its directory names before its slot is free for another
 * thread, under lfp_ts_lock); register zeroes every entry of a new pool
 * and unregister of a destroyed one (so that a debug pool's later call
 * goes out of line, as for its id).  A fork's child frees the other
 * threads' slots and clears their entries, which name abandoned caches.
 *
 * The variables' TLS model is the build's (Makefile.am): in the shared
 * library TLS descriptors, which glibc resolves at load to an offset in
 * its static TLS block (the library is linked, or there is room left) or
 * to the thread's dynamic block (dlopen()ed late), so that dlopen works
 * with no tunable; in the static library initial-exec.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grace.h"
#include "lfpool/array.h"
#include "ts_internal.h"

/* The first directory's slots, in the thread's table: a thread's first
 * cache is made with no malloc (below). */
#define LFP_TLS_DIR_INLINE 8

/* One thread's directory, in the list of every thread's under
 * lfp_ts_lock; the directory itself is tls->dir, tls->ndir slots, first
 * dir_inline and, once a pool id reaches past it, from the heap. */
struct lfp_tls_table {
	struct lfpool_ts_tls *tls;	/* the thread's fast-path entry */
	const lfpool_ts *array_home_pool;	/* NULL: the array home is free */
	lfpool_ts_cache *array_home;		/* its storage, once taken */
	struct lfp_tls_table *next, **pprev;
	lfpool_ts_cache *dir_inline[LFP_TLS_DIR_INLINE];
};

LFPOOL_API __thread struct lfpool_ts_tls lfpool_ts_tls_;
static __thread struct lfp_tls_table *tls_table;
/*
 * The table's storage: in the thread's TLS, not from malloc.  A new
 * thread's first malloc attaches it to an arena and makes its tcache, work
 * that slowed its first lfpool_ts_get and
 * that the thread's own first malloc pays anyway.  (In a library loaded
 * late, glibc mallocs the thread's whole block of the library's TLS at its
 * first access instead.)  The table is unlinked
 * at exit (release_thread) before glibc frees the TLS, and a fork's child
 * drops the other threads' tables without touching them.
 */
static __thread struct lfp_tls_table tls_table_mem;
/* Set once the thread's key destructor ran.  A later key's destructor
 * may still call us, but glibc may then free the TLS block with no round
 * left to run ours again (PTHREAD_DESTRUCTOR_ITERATIONS): a table
 * registered then would stay on all_tables, naming freed TLS that every
 * later destroy reads and writes, and a home would put freed TLS on a
 * pool's list of caches.  So the thread gets no implicit cache any more
 * (lfp_tls_cache) and registers nothing; its calls go uncached.  (A
 * thread whose first call comes in glibc's last round registers a table
 * that nothing unlinks: no hook runs after that round; lfpool/ts.h tells
 * users to avoid it.) */
static __thread bool tls_exiting;
static struct lfp_tls_table *all_tables;	/* under lfp_ts_lock */
/* Bit i: thread slot i is taken (1 .. LFPOOL_TS_THREAD_SLOTS_), under lfp_ts_lock. */
static uint32_t tslots_taken;
_Static_assert(LFPOOL_TS_THREAD_SLOTS_ < 32, "tslots_taken holds a bit per slot");
_Static_assert(sizeof(struct lfpool_ts_fast) == 64, "the pool's head is one cache line");
/* Both homes (lfpool_ts_tls_.home, lfpool_array_tls_.home) are this union. */
_Static_assert(sizeof(struct lfpool_ts_cache) <= sizeof(union lfpool_ts_home_) &&
	       _Alignof(struct lfpool_ts_cache) <= _Alignof(struct lfpool_ts_cache_fast),
	       "a cache fits a home's storage (LFPOOL_TS_HOME_BYTES_)");

/*
 * The registry of live pools, under lfp_ts_lock: slot i holds the pool that
 * has it and its generation (0 while free), and how often it was taken.  A
 * pool's generation is that count << 32 | i: unique until one slot is
 * reused 2^32 times, and alive exactly when its slot still holds it.
 *
 * A new pool takes the lowest free slot (free_ids, a binary min-heap), so
 * its id is at most the number of other pools alive when it is made,
 * whatever came and went before.  Every thread's first use of the pool
 * then needs a directory only that long: with the most recently freed
 * slot taken instead (a stack), a pool made
 * after 10^4 others were destroyed oldest first got id 9999, and each new
 * thread's first get grew its directory to 16384 slots (128 KiB, a fresh
 * mapping it then cleared; NEWS has the times).  Create and destroy are
 * O(log free slots) (amortised: the arrays double); fork's walk is
 * O(slots).
 */
struct lfp_tls_slot {
	uint64_t gen;
	lfpool_ts *pool;
	uint32_t uses;
};
static struct lfp_tls_slot *slots;
static uint32_t nslots, slot_cap;
/* The free slots, a min-heap: free_ids[0] is the lowest.  It has room
 * for slot_cap entries, so a destroy's push never allocates. */
static uint32_t *free_ids, nfree;

static void free_ids_push(uint32_t i)
{
	LFP_ASSERT(nfree < slot_cap);	/* a slot is either live or here */
	uint32_t k = nfree++;
	for (uint32_t up; k > 0 && free_ids[up = (k - 1) / 2] > i; k = up)
		free_ids[k] = free_ids[up];
	free_ids[k] = i;
}

static uint32_t free_ids_pop_lowest(void)
{
	uint32_t lowest = free_ids[0], last = free_ids[--nfree], k = 0;
	for (uint32_t c; (c = 2 * k + 1) < nfree; k = c) {
		if (c + 1 < nfree && free_ids[c + 1] < free_ids[c])
			c++;
		if (free_ids[c] >= last)
			break;
		free_ids[k] = free_ids[c];
	}
	free_ids[k] = last;
	return lowest;
}

/* Double the registry and the heap's room: 0 or ENOMEM (nothing lost:
 * a registry that grew while the heap could not stays usable at the old
 * slot_cap). */
static int slots_grow(void)
{
	uint32_t cap = slot_cap ? 2 * slot_cap : 64;
	if (cap <= slot_cap)
		return ENOMEM;
	struct lfp_tls_slot *s = realloc(slots, cap * sizeof(*s));
	if (!s)
		return ENOMEM;
	slots = s;
	uint32_t *h = realloc(free_ids, cap * sizeof(*h));
	if (!h)
		return ENOMEM;
	free_ids = h;
	slot_cap = cap;
	return 0;
}

int lfp_tls_register(lfpool_ts *p)
{
	uint32_t i;
	if (nfree) {
		i = free_ids_pop_lowest();
	} else {
		if (nslots == slot_cap && slots_grow() != 0)
			return ENOMEM;
		i = nslots++;
		slots[i].uses = 0;
	}
	if (++slots[i].uses == 0)	/* generation 0 means none */
		slots[i].uses = 1;
	slots[i].gen = p->gen = (uint64_t)slots[i].uses << 32 | i;
	slots[i].pool = p;
	p->fast.id = i;
	for (uint32_t k = 0; k <= LFPOOL_TS_THREAD_SLOTS_; k++)
		lfp_store_ptr_rel((void **)&p->fast.by_thread[k], NULL);
	return 0;
}

void lfp_tls_unregister(lfpool_ts *p)
{
	uint32_t i = (uint32_t)p->gen;
	/* A second destroy (undefined) would push the slot twice. */
	LFP_ASSERT(i < nslots && slots[i].pool == p);
	slots[i].gen = 0;
	slots[i].pool = NULL;
	free_ids_push(i);
	p->fast.id = LFP_TS_NO_ID;	/* debug pools: a later call goes out of line */
	for (uint32_t k = 0; k <= LFPOOL_TS_THREAD_SLOTS_; k++)
		lfp_store_ptr_rel((void **)&p->fast.by_thread[k], NULL);
}

lfpool_ts *lfp_tls_next_live(uint32_t *it)
{
	while (*it < nslots) {
		uint32_t i = (*it)++;
		if (slots[i].gen)
			return slots[i].pool;
	}
	return NULL;
}

/*
 * The array layer's table of the thread's class caches and its array home
 * (lfpool/array.h; lib/layers/array.c fills it), defined here with the
 * rest of the thread's state, since this file's thread exit, destroys and
 * detaches are what must clear it: the layer sits floors above and is
 * never called from here.
 */
LFPOOL_API __thread struct lfpool_array_tls lfpool_array_tls_;

/* Clear entry k of table t: its owner, or a destroyer under lfp_ts_lock
 * (lfpool/array.h: relaxed atomics under ThreadSanitizer). */
static void array_key_clear(struct lfpool_array_tls *t, unsigned k)
{
	lfp_store_u64_rlx(&t->key[k], 0);
}

/* Thread exit, before release_thread frees the thread's caches: the
 * table forgets them. */
static void array_table_clear(void)
{
	for (unsigned k = 0; k < 64; k++)
		array_key_clear(&lfpool_array_tls_, k);
}

/* Lock held: the array home `home` of some live thread lost its cache
 * (its pool's destroy; detach).  Its entries name the array pool by
 * address, which a new pool may reuse: they go, before the pool is freed.
 * Only they are even and nonzero.  That thread may be reading its table
 * meanwhile (never these entries: their pool is being destroyed), so the
 * loads and stores are atomics of lib/atomic.h. */
static void array_home_lost(lfpool_ts_cache *home)
{
	struct lfpool_array_tls *t = (struct lfpool_array_tls *)((char *)home -
					offsetof(struct lfpool_array_tls, home));
	for (unsigned k = 0; k < 64; k++) {
		uint64_t key = lfp_load_u64_rlx(&t->key[k]);
		if (key && !(key & 1))
			array_key_clear(t, k);
	}
}

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_err;

/* The fast-path entry: its thread sets it as the inline lookup does
 * (lfpool_ts_mru_set_ says how a signal handler's lookup never pairs one
 * pool with another's cache); anyone holding lfp_ts_lock may clear the
 * pool of a pool it destroys. */
static void mru_set(struct lfpool_ts_tls *m, const lfpool_ts *p, lfpool_ts_cache *c)
{
	LFP_ASSERT(m == &lfpool_ts_tls_);
	lfpool_ts_mru_set_(p, c);
}

static void mru_clear_if(struct lfpool_ts_tls *m, const lfpool_ts *p)
{
	if (lfp_load_ptr_rlx((void *const *)&m->pool) == p)
		lfp_store_ptr_rel((void **)&m->pool, NULL);
}

/* The home cache of m is free again once its cache of p is unlinked
 * (lfp_cache_free; lock held): by its owner (detach, exit) or a destroyer
 * of p, which writes only NULL over the pool it destroys. */
static void home_clear_if(struct lfpool_ts_tls *m, const lfpool_ts *p)
{
	if (lfp_load_ptr_rlx((void *const *)&m->home_pool) == p)
		lfp_store_ptr_rel((void **)&m->home_pool, NULL);
}

/* The same for the array home of t's thread, whose layer forgets it. */
static void array_home_clear_if(struct lfp_tls_table *t, const lfpool_ts *p)
{
	if (!t || t->array_home_pool != p)
		return;
	t->array_home_pool = NULL;
	array_home_lost(t->array_home);
}

/* A new implicit cache of p for the calling thread, whose table is t (lock
 * held): in its home (p of array_class: its array home) when that is free,
 * else from the heap; NULL on ENOMEM. */
static lfpool_ts_cache *cache_new(struct lfp_tls_table *t, lfpool_ts *p)
{
	struct lfpool_ts_tls *m = &lfpool_ts_tls_;
	if (p->array_class && !t->array_home_pool) {
		lfpool_ts_cache *c = lfp_cache_init(LFPOOL_ARRAY_HOME_, p, LFP_CACHE_HOME);
		if (c) {
			t->array_home_pool = p;
			t->array_home = c;
		}
		return c;
	}
	if (p->array_class || lfp_load_ptr_rlx((void *const *)&m->home_pool))
		return lfp_cache_new(p, LFP_CACHE_IMPLICIT);
	return lfp_cache_init(LFPOOL_TS_HOME_, p, LFP_CACHE_HOME);
}

/* Clear the directory slot of pool id (destroy, detach; lock held). */
static void dir_clear(struct lfpool_ts_tls *m, uint32_t id)
{
	if (id < m->ndir)
		lfp_store_ptr_rel((void **)&m->dir[id], NULL);
}

/* The calling thread's entry in p's head, if it has a slot (lock held). */
static void by_thread_set(struct lfpool_ts_tls *m, lfpool_ts *p, lfpool_ts_cache *c)
{
	if (m->tslot)
		lfp_store_ptr_rel((void **)&p->fast.by_thread[m->tslot], c);
}

/* Thread exit: give back the caches of its directory (every pool named
 * there is alive: destroy clears its slots). */
/* Model: stress/model/exit.pml, steps E1-E4; home.pml, H5. */
/*
 * A directory from the heap is one block: a word that keeps the heap
 * directory it replaced (NULL after the inline one), then the slots.  The
 * replaced one stays until the thread exits: a signal handler that
 * interrupted this thread's lookup between its loads of dir and dir[id]
 * (lfpool/impl/lookup.h) may make a cache and so grow the directory, and
 * the lookup then reads the old one.  Directories double, so the old ones
 * together are smaller than the live one.
 */
static void **dir_block(lfpool_ts_cache **dir)
{
	return (void **)dir - 1;
}

static void dir_free(lfpool_ts_cache **dir, lfpool_ts_cache **dir_inline)
{
	void **b = dir && dir != dir_inline ? dir_block(dir) : NULL;
	while (b) {
		void **replaced = b[0];
		free(b);
		b = replaced;
	}
}

static void release_thread(void *arg)
{
	struct lfp_tls_table *t = arg;
	struct lfpool_ts_tls *m = t->tls;
	tls_exiting = true;
	array_table_clear();
	/* liburcu-bp's key destructor may have run first: register again
	 * now, holding no lock (grace.h). */
	lfp_grace_register();
	lfp_ts_lock_busy();
	lfpool_ts_cache **dir = m->dir;
	for (uint32_t i = 0; i < m->ndir; i++)
		if (dir[i]) {
			by_thread_set(m, dir[i]->pool, NULL);
			lfp_cache_free(dir[i]);
		}
	/* The home cache was in dir too: its storage is free before glibc
	 * frees the TLS block. */
	lfp_store_ptr_rel((void **)&m->home_pool, NULL);
	mru_set(m, NULL, NULL);
	m->ndir = 0;
	m->dir = NULL;
	tslots_taken &= ~(1u << m->tslot);
	m->tslot = 0;
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	lfp_ts_unlock_busy();
	dir_free(dir, t->dir_inline);
	tls_table = NULL;
}

/* fork's child, lfp_ts_lock held: only the forking thread is left.  The
 * other threads' tables lie in their static TLS, which the child may
 * unmap (glibc's cache of stacks), so they leave the list; their memory
 * stays, abandoned with their caches, and a destroy in the child no longer
 * clears their directories.  Their thread slots are free again, and every
 * pool's entries for them, which name abandoned caches, are cleared, so
 * the child's new threads get slots. */
void lfp_tls_fork_child(void)
{
	all_tables = tls_table;
	if (tls_table) {
		tls_table->next = NULL;
		tls_table->pprev = &all_tables;
	}
	uint32_t own = lfpool_ts_tls_.tslot;
	tslots_taken &= 1u << own;	/* own == 0 (no slot): none taken */
	lfpool_ts *p;
	for (uint32_t it = 0; (p = lfp_tls_next_live(&it));)
		for (uint32_t k = 1; k <= LFPOOL_TS_THREAD_SLOTS_; k++)
			if (k != own)
				lfp_store_ptr_rel((void **)&p->fast.by_thread[k], NULL);
}

static void make_key(void)
{
	tls_key_err = pthread_key_create(&tls_key, release_thread);
}

lfpool_ts_cache *lfp_tls_find(const lfpool_ts *p)
{
	uint32_t id = (uint32_t)p->gen;
	lfpool_ts_cache *c = id < lfpool_ts_tls_.ndir ? lfpool_ts_tls_.dir[id] : NULL;
	if (c)
		mru_set(&lfpool_ts_tls_, p, c);
	return c;
}

/* The calling thread's table, registered (lock held); NULL on ENOMEM. */
static struct lfp_tls_table *own_table(void)
{
	struct lfp_tls_table *t = tls_table;
	if (t)
		return t;
	t = &tls_table_mem;
	if (pthread_setspecific(tls_key, t) != 0)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->tls = &lfpool_ts_tls_;
	lfpool_ts_tls_.dir = t->dir_inline;
	lfpool_ts_tls_.ndir = LFP_TLS_DIR_INLINE;
	for (uint32_t k = 1; k <= LFPOOL_TS_THREAD_SLOTS_; k++)
		if (!(tslots_taken & (1u << k))) {
			tslots_taken |= 1u << k;
			lfpool_ts_tls_.tslot = k;
			break;
		}
	t->next = all_tables;
	t->pprev = &all_tables;
	if (all_tables)
		all_tables->pprev = &t->next;
	all_tables = t;
	tls_table = t;
	return t;
}

/* Make the calling thread's directory reach slot id (lock held): 0 or
 * ENOMEM.  It doubles, so growing costs O(1) per slot amortised. */
static int dir_room(uint32_t id)
{
	struct lfpool_ts_tls *m = &lfpool_ts_tls_;
	if (id < m->ndir)
		return 0;
	uint32_t n = 8;
	while (n <= id)
		n *= 2;
	void **b = malloc((n + 1) * sizeof(void *));
	if (!b)
		return ENOMEM;
	b[0] = m->dir == tls_table->dir_inline ? NULL : dir_block(m->dir);
	lfpool_ts_cache **dir = (lfpool_ts_cache **)(b + 1);
	memcpy(dir, m->dir, m->ndir * sizeof(*dir));
	memset(dir + m->ndir, 0, (n - m->ndir) * sizeof(*dir));
	/* A handler reads the slots once it finds the new dir. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m->dir = dir;
	m->ndir = n;
	return 0;
}

bool lfp_tls_exiting(void)
{
	return tls_exiting;
}

lfpool_ts_cache *lfp_tls_cache(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (c || tls_exiting)	/* exit released the directory: c is NULL */
		return c;
	pthread_once(&tls_once, make_key);
	int err = tls_key_err ? ENOMEM : 0;
	lfp_grace_register();	/* before lfp_ts_lock (grace.h) */
	lfp_ts_lock_busy();
	uint32_t id = (uint32_t)p->gen;
	struct lfp_tls_table *t = err ? NULL : own_table();
	if (!err && (!t || dir_room(id) != 0))
		err = ENOMEM;
	if (!err) {
		c = cache_new(t, p);
		err = c ? 0 : ENOMEM;
	}
	if (!err) {
		lfp_store_ptr_rel((void **)&lfpool_ts_tls_.dir[id], c);
		by_thread_set(&lfpool_ts_tls_, p, c);
		mru_set(&lfpool_ts_tls_, p, c);
		if (c == LFPOOL_TS_HOME_)	/* last: the inline path's per-thread test */
			lfp_store_ptr_rel((void **)&lfpool_ts_tls_.home_pool, p);
	}
	lfp_ts_unlock_busy();
	if (err)
		errno = err;
	return c;
}

bool lfp_tls_holds(uint64_t gen, const lfpool_ts_cache *c)
{
	uint32_t id = (uint32_t)gen;
	return id < lfpool_ts_tls_.ndir && lfpool_ts_tls_.dir[id] == c;
}

void lfp_tls_forget(const lfpool_ts *p)
{
	for (struct lfp_tls_table *t = all_tables; t; t = t->next) {
		dir_clear(t->tls, (uint32_t)p->gen);
		mru_clear_if(t->tls, p);
		home_clear_if(t->tls, p);
		array_home_clear_if(t, p);
	}
}

void lfp_tls_detach(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (!c)
		return;
	lfp_grace_register();
	lfp_ts_lock_busy();
	by_thread_set(&lfpool_ts_tls_, p, NULL);
	lfp_cache_free(c);
	dir_clear(&lfpool_ts_tls_, (uint32_t)p->gen);
	mru_clear_if(&lfpool_ts_tls_, p);
	home_clear_if(&lfpool_ts_tls_, p);
	array_home_clear_if(tls_table, p);
	lfp_ts_unlock_busy();
}
