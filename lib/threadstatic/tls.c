/* SPDX-License-Identifier: MIT */
/*
 * tls.c - implicit per-thread caches: which cache the calling thread uses
 * for a pool, and handing it back when the thread exits; and the registry
 * of live pools that tells the thread tables which entries are stale (and
 * fork's handlers which pools to visit).
 *
 * Each thread has a hash table from pool generation to cache (open
 * addressing, linear probing, deletion by backward shift), and the entry
 * the inline fast path of lfpool/ts.h reads: lfpool_ts_tls_, the
 * pool and cache it used last.  Every step is O(1) amortised, whatever the
 * number of pools:
 *  - a lookup hashes the pool's generation;
 *  - an insert that would fill the table past 3/4 first rebuilds it with
 *    the entries of pools still alive (lfp_tls_live is one array read), at
 *    twice the live count or more, so a rebuild of cost O(cap) comes at
 *    most once per cap/4 inserts;
 *  - destroy removes the destroying thread's entry and clears, in every
 *    other thread's fast-path entry, the pool it destroys (O(threads)); the
 *    other threads' table entries go stale and are dropped by their next
 *    rebuild.
 * Generations are never reused (ts.h), so a stale entry matches no pool
 * again and its cache pointer, freed by destroy, is never followed.
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
 * checks the same protocol).
 *
 * At thread exit a pthread key destructor frees, under lfp_ts_lock, the
 * caches of the pools still alive; destroy holds the same lock, so an exit
 * racing with destroy sees the pool either whole or gone.
 *
 * The variables use the initial-exec TLS model: an access is one
 * %fs-relative load, with no call to __tls_get_addr.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grace.h"
#include "ts.h"

struct lfp_tls_entry {
	uint64_t gen;		/* 0: empty */
	lfpool_ts_cache *cache;
};

/* One thread's table, in the list of every thread's under lfp_ts_lock. */
struct lfp_tls_table {
	uint32_t n, cap;		/* entries used; slots (a power of two) */
	struct lfp_tls_entry *e;
	struct lfpool_ts_tls *mru;	/* the thread's fast-path entry */
	struct lfp_tls_table *next, **pprev;
};

LFPOOL_API __thread struct lfpool_ts_tls lfpool_ts_tls_ __attribute__((tls_model("initial-exec")));
static __thread struct lfp_tls_table *tls_table __attribute__((tls_model("initial-exec")));
static struct lfp_tls_table *all_tables;	/* under lfp_ts_lock */

/*
 * The registry of live pools, under lfp_ts_lock: slot i holds the pool that
 * has it and its generation (0 while free), and how often it was taken.  A
 * pool's generation is that count << 32 | i: unique until one slot is
 * reused 2^32 times, and alive exactly when its slot still holds it.  Free
 * slots are a stack threaded through next_free.  Create and destroy are
 * O(1) (amortised: the array doubles); fork's walk is O(slots).
 */
struct lfp_tls_slot {
	uint64_t gen;
	lfpool_ts *pool;
	uint32_t uses;
	uint32_t next_free;
};
static struct lfp_tls_slot *slots;
static uint32_t nslots, slot_cap, free_slot = UINT32_MAX;

bool lfp_tls_live(uint64_t gen)
{
	uint32_t i = (uint32_t)gen;
	return i < nslots && slots[i].gen == gen;
}

int lfp_tls_register(lfpool_ts *p)
{
	uint32_t i = free_slot;
	if (i != UINT32_MAX) {
		free_slot = slots[i].next_free;
	} else {
		if (nslots == slot_cap) {
			uint32_t cap = slot_cap ? 2 * slot_cap : 64;
			struct lfp_tls_slot *s = cap > slot_cap ? realloc(slots, cap * sizeof(*s)) : NULL;
			if (!s)
				return ENOMEM;
			slots = s;
			slot_cap = cap;
		}
		i = nslots++;
		slots[i].uses = 0;
	}
	if (++slots[i].uses == 0)	/* generation 0 means none */
		slots[i].uses = 1;
	slots[i].gen = p->gen = (uint64_t)slots[i].uses << 32 | i;
	slots[i].pool = p;
	return 0;
}

void lfp_tls_unregister(const lfpool_ts *p)
{
	uint32_t i = (uint32_t)p->gen;
	slots[i].gen = 0;
	slots[i].pool = NULL;
	slots[i].next_free = free_slot;
	free_slot = i;
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

/* A layer's own pointers to the thread's caches (array.c's table of class
 * caches) are forgotten by this, before release_thread frees the caches;
 * set by that layer's constructor, before any thread exits.  NULL: none. */
void (*lfp_tls_exit_hook)(void);

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_err;

/* The fast-path entry: the owner sets it (cache first, then pool, release),
 * anyone holding lfp_ts_lock may clear the pool of a pool it destroys. */
static void mru_set(struct lfpool_ts_tls *m, const lfpool_ts *p, lfpool_ts_cache *c)
{
	lfp_store_ptr_rel((void **)&m->cache, c);
	lfp_store_ptr_rel((void **)&m->pool, (void *)p);
}

static void mru_clear_if(struct lfpool_ts_tls *m, const lfpool_ts *p)
{
	if (lfp_load_ptr_rlx((void *const *)&m->pool) == p)
		lfp_store_ptr_rel((void **)&m->pool, NULL);
}

/* Slot of gen in a table of cap slots (Fibonacci hashing of both halves:
 * the slot number in the low half, its use count in the high one). */
static uint32_t home(uint64_t gen, uint32_t cap)
{
	return (uint32_t)(((gen ^ (gen >> 29)) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static struct lfp_tls_entry *lookup(const struct lfp_tls_table *t, uint64_t gen)
{
	for (uint32_t i = home(gen, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->e[i].gen == gen)
			return &t->e[i];
		if (t->e[i].gen == 0)
			return NULL;
	}
}

static void place(struct lfp_tls_entry *e, uint32_t cap, struct lfp_tls_entry x)
{
	uint32_t i = home(x.gen, cap);
	while (e[i].gen)
		i = (i + 1) & (cap - 1);
	e[i] = x;
}

/* Remove entry i, shifting back the entries of its probe run. */
static void remove_at(struct lfp_tls_table *t, uint32_t i)
{
	uint32_t mask = t->cap - 1;
	for (uint32_t j = (i + 1) & mask; t->e[j].gen; j = (j + 1) & mask) {
		uint32_t h = home(t->e[j].gen, t->cap);
		/* j may move to i when its home is not in (i, j] (cyclically). */
		if (((j - h) & mask) >= ((j - i) & mask)) {
			t->e[i] = t->e[j];
			i = j;
		}
	}
	t->e[i].gen = 0;
	t->n--;
}

/* Thread exit: give back the caches of the pools still alive. */
/* Model: stress/model/exit.pml, steps E1-E4. */
static void release_thread(void *arg)
{
	struct lfp_tls_table *t = arg;
	if (lfp_tls_exit_hook)
		lfp_tls_exit_hook();
	/* liburcu-bp's key destructor may have run first: register again
	 * now, holding no lock (grace.h). */
	lfp_grace_register();
	pthread_mutex_lock(&lfp_ts_lock);
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].gen && lfp_tls_live(t->e[i].gen))
			lfp_cache_free(t->e[i].cache);
	mru_set(t->mru, NULL, NULL);
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	pthread_mutex_unlock(&lfp_ts_lock);
	free(t->e);
	free(t);
	tls_table = NULL;
}

static void make_key(void)
{
	tls_key_err = pthread_key_create(&tls_key, release_thread);
}

lfpool_ts_cache *lfp_tls_find(const lfpool_ts *p)
{
	struct lfp_tls_table *t = tls_table;
	struct lfp_tls_entry *e = t ? lookup(t, p->gen) : NULL;
	if (!e)
		return NULL;
	mru_set(&lfpool_ts_tls_, p, e->cache);
	return e->cache;
}

/* The calling thread's table, registered (lock held); NULL on ENOMEM. */
static struct lfp_tls_table *own_table(void)
{
	struct lfp_tls_table *t = tls_table;
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (t)
		t->e = calloc(8, sizeof(t->e[0]));
	if (!t || !t->e || pthread_setspecific(tls_key, t) != 0) {
		if (t)
			free(t->e);
		free(t);
		return NULL;
	}
	t->cap = 8;
	t->mru = &lfpool_ts_tls_;
	t->next = all_tables;
	t->pprev = &all_tables;
	if (all_tables)
		all_tables->pprev = &t->next;
	all_tables = t;
	tls_table = t;
	return t;
}

/* Make room for one more entry (lock held): past 3/4 full, rebuild with
 * the entries of live pools only, at least twice as large as they need.
 * 0 or ENOMEM. */
static int table_room(struct lfp_tls_table *t)
{
	if ((t->n + 1) * 4 <= t->cap * 3)
		return 0;
	uint32_t live = 0;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].gen && lfp_tls_live(t->e[i].gen))
			live++;
	uint32_t cap = 8;
	while (cap < 4 * (live + 1))
		cap *= 2;
	struct lfp_tls_entry *e = calloc(cap, sizeof(*e));
	if (!e)
		return ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].gen && lfp_tls_live(t->e[i].gen))
			place(e, cap, t->e[i]);
	free(t->e);
	t->e = e;
	t->cap = cap;
	t->n = live;
	return 0;
}

lfpool_ts_cache *lfp_tls_cache(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (c)
		return c;
	pthread_once(&tls_once, make_key);
	int err = tls_key_err ? ENOMEM : 0;
	lfp_grace_register();	/* a thread's first call: before lfp_ts_lock */
	pthread_mutex_lock(&lfp_ts_lock);
	struct lfp_tls_table *t = err ? NULL : own_table();
	if (!err && (!t || table_room(t) != 0))
		err = ENOMEM;
	if (!err) {
		c = lfp_cache_new(p, LFP_CACHE_IMPLICIT);
		err = c ? 0 : ENOMEM;
	}
	if (!err) {
		place(t->e, t->cap, (struct lfp_tls_entry){ p->gen, c });
		t->n++;
		mru_set(&lfpool_ts_tls_, p, c);
	}
	pthread_mutex_unlock(&lfp_ts_lock);
	if (err)
		errno = err;
	return c;
}

bool lfp_tls_holds(uint64_t gen, const lfpool_ts_cache *c)
{
	struct lfp_tls_table *t = tls_table;
	struct lfp_tls_entry *e = t ? lookup(t, gen) : NULL;
	return e && e->cache == c;
}

/* Drop the calling thread's entry for p (lock held). */
static void drop(const lfpool_ts *p)
{
	struct lfp_tls_table *t = tls_table;
	struct lfp_tls_entry *e = t ? lookup(t, p->gen) : NULL;
	if (e)
		remove_at(t, (uint32_t)(e - t->e));
	mru_clear_if(&lfpool_ts_tls_, p);
}

void lfp_tls_forget(const lfpool_ts *p)
{
	drop(p);
	for (struct lfp_tls_table *t = all_tables; t; t = t->next)
		mru_clear_if(t->mru, p);
}

void lfp_tls_detach(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (!c)
		return;
	lfp_grace_register();
	pthread_mutex_lock(&lfp_ts_lock);
	lfp_cache_free(c);
	drop(p);
	pthread_mutex_unlock(&lfp_ts_lock);
}
