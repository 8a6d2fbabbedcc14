/* SPDX-License-Identifier: MIT */
/*
 * tls.c - implicit per-thread caches: which cache the calling thread uses
 * for a pool, and handing it back when the thread exits.
 *
 * Each thread has a table from pool generation to cache, and a copy of its
 * most recently used entry that the fast path compares with the pool's
 * generation (one load and one compare).  Generations are never reused, so
 * the entry of a destroyed pool matches no pool again and its cache pointer
 * is never followed: destroy frees the caches of threads still alive, and
 * their entries simply go stale.  Only the thread itself reads or writes
 * its table.  At thread exit a pthread key destructor walks the table under
 * lfp_ts_lock and frees the caches of the pools still alive; destroy holds
 * the same lock, so an exit racing with destroy sees the pool either whole
 * or gone.
 *
 * The variables use the initial-exec TLS model: an access is one %fs-relative
 * load, with no call to __tls_get_addr.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ts.h"

struct lfp_tls_table {
	uint32_t n, cap;
	struct lfp_tls_entry e[];
};

__thread struct lfp_tls_entry lfp_tls_mru __attribute__((tls_model("initial-exec")));
static __thread struct lfp_tls_table *tls_table __attribute__((tls_model("initial-exec")));

/* The live pools, under lfp_ts_lock (ts.h): a thread's entry for a pool
 * no longer here is stale. */
static lfpool_ts *live_pools;

/* Whether the pool of generation gen is alive; caller holds lfp_ts_lock. */
static bool live(uint64_t gen)
{
	for (lfpool_ts *p = live_pools; p; p = p->next_live)
		if (p->gen == gen)
			return true;
	return false;
}

void lfp_tls_register(lfpool_ts *p)
{
	p->next_live = live_pools;
	live_pools = p;
}

lfpool_ts *lfp_tls_live_pools(void)
{
	return live_pools;
}

void lfp_tls_unregister(lfpool_ts *p)
{
	lfpool_ts **pp = &live_pools;
	while (*pp != p)
		pp = &(*pp)->next_live;
	*pp = p->next_live;
}

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_err;

/* Thread exit: give back the caches of the pools still alive. */
/* Model: stress/model/exit.pml, steps E1-E4. */
static void release_thread(void *arg)
{
	struct lfp_tls_table *t = arg;
	pthread_mutex_lock(&lfp_ts_lock);
	for (uint32_t i = 0; i < t->n; i++)
		if (live(t->e[i].gen))
			lfp_cache_free(t->e[i].cache);
	pthread_mutex_unlock(&lfp_ts_lock);
	free(t);
	tls_table = NULL;
	lfp_tls_mru = (struct lfp_tls_entry){ 0, NULL };
}

static void make_key(void)
{
	tls_key_err = pthread_key_create(&tls_key, release_thread);
}

lfpool_ts_cache *lfp_tls_find(const lfpool_ts *p)
{
	struct lfp_tls_table *t = tls_table;
	for (uint32_t i = 0; t && i < t->n; i++) {
		if (t->e[i].gen == p->gen) {
			lfp_tls_mru = t->e[i];
			return t->e[i].cache;
		}
	}
	return NULL;
}

/* Remove entry i of the table; free the table once empty (lock held). */
static void drop_entry(uint32_t i)
{
	struct lfp_tls_table *t = tls_table;
	if (lfp_tls_mru.gen == t->e[i].gen)
		lfp_tls_mru = (struct lfp_tls_entry){ 0, NULL };
	t->e[i] = t->e[--t->n];
	if (t->n)
		return;
	pthread_setspecific(tls_key, NULL);
	free(t);
	tls_table = NULL;
}

/* Make room for one more entry: drop entries of destroyed pools, then grow
 * (lock held).  0 or ENOMEM. */
static int table_room(void)
{
	struct lfp_tls_table *t = tls_table;
	for (uint32_t i = 0; t && i < t->n;) {
		if (live(t->e[i].gen)) {
			i++;
			continue;
		}
		drop_entry(i);
		t = tls_table;
	}
	if (t && t->n < t->cap)
		return 0;
	uint32_t cap = t ? 2 * t->cap : 4;
	struct lfp_tls_table *nt = malloc(sizeof(*nt) + cap * sizeof(nt->e[0]));
	if (!nt)
		return ENOMEM;
	nt->n = t ? t->n : 0;
	nt->cap = cap;
	if (t)
		memcpy(nt->e, t->e, t->n * sizeof(t->e[0]));
	/* The key must never name a freed table: switch it first. */
	if (pthread_setspecific(tls_key, nt) != 0) {
		free(nt);
		return ENOMEM;
	}
	free(t);
	tls_table = nt;
	return 0;
}

lfpool_ts_cache *lfp_tls_cache(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (c)
		return c;
	pthread_once(&tls_once, make_key);
	int err = tls_key_err ? ENOMEM : 0;
	pthread_mutex_lock(&lfp_ts_lock);
	if (!err)
		err = table_room();
	if (!err) {
		c = lfp_cache_new(p, LFP_CACHE_IMPLICIT);
		err = c ? 0 : ENOMEM;
	}
	if (!err) {
		struct lfp_tls_table *t = tls_table;
		t->e[t->n++] = (struct lfp_tls_entry){ p->gen, c };
		lfp_tls_mru = t->e[t->n - 1];
	}
	pthread_mutex_unlock(&lfp_ts_lock);
	if (err)
		errno = err;
	return c;
}

bool lfp_tls_holds(uint64_t gen, const lfpool_ts_cache *c)
{
	struct lfp_tls_table *t = tls_table;
	for (uint32_t i = 0; t && i < t->n; i++)
		if (t->e[i].gen == gen)
			return t->e[i].cache == c;
	return false;
}

void lfp_tls_forget(uint64_t gen)
{
	struct lfp_tls_table *t = tls_table;
	for (uint32_t i = 0; t && i < t->n; i++) {
		if (t->e[i].gen == gen) {
			drop_entry(i);
			return;
		}
	}
}

void lfp_tls_detach(lfpool_ts *p)
{
	lfpool_ts_cache *c = lfp_tls_find(p);
	if (!c)
		return;
	pthread_mutex_lock(&lfp_ts_lock);
	lfp_cache_free(c);
	lfp_tls_forget(p->gen);
	pthread_mutex_unlock(&lfp_ts_lock);
}
