/* SPDX-License-Identifier: MIT */
/*
 * worker.c - worker-index mode: caches kept in slots numbered by worker,
 * for schedulers that hand out worker indices and reuse them.
 *
 * Slots sit in chunks of LFP_WORKER_CHUNK, listed in a table of
 * LFP_WORKER_CHUNKS chunks; the table and each chunk are made on first
 * use under lfp_ts_lock and published with a release store (a pool that
 * never uses worker slots holds neither); a lookup is three acquire loads
 * and takes no lock.  Table, chunks and caches live until the pool dies.
 */
#include <errno.h>
#include <stdlib.h>

#include "grace.h"
#include "ts_internal.h"

/* The cache in slot w, NULL if none yet.  The acquires pair with the
 * release stores of make_slot: the table and the chunk zeroed, the cache
 * made. */
static lfpool_ts_cache *slot(const lfpool_ts *p, unsigned w)
{
	lfpool_ts_cache ***table = lfp_load_ptr_acq((void *const *)&p->workers);
	if (!table)
		return NULL;
	lfpool_ts_cache **chunk = lfp_load_ptr_acq((void *const *)&table[w / LFP_WORKER_CHUNK]);
	if (!chunk)
		return NULL;
	return lfp_load_ptr_acq((void *const *)&chunk[w % LFP_WORKER_CHUNK]);
}

/* The table of chunks, made if none yet (lock held); NULL: no memory. */
static lfpool_ts_cache ***worker_table(lfpool_ts *p)
{
	if (!p->workers) {
		lfpool_ts_cache ***fresh = calloc(LFP_WORKER_CHUNKS, sizeof(*fresh));
		if (fresh)
			lfp_store_ptr_rel((void **)&p->workers, fresh);
	}
	return p->workers;
}

/* Make the cache of slot w (lock held): 0 or ENOMEM. */
static int make_slot(lfpool_ts *p, unsigned w)
{
	lfpool_ts_cache ***table = worker_table(p);
	if (!table)
		return ENOMEM;
	lfpool_ts_cache ***chunk = &table[w / LFP_WORKER_CHUNK];
	if (!*chunk) {
		lfpool_ts_cache **fresh = calloc(LFP_WORKER_CHUNK, sizeof(*fresh));
		if (!fresh)
			return ENOMEM;
		lfp_store_ptr_rel((void **)chunk, fresh);
		if (p->worker_chunks <= w / LFP_WORKER_CHUNK)
			p->worker_chunks = w / LFP_WORKER_CHUNK + 1;
	}
	lfpool_ts_cache **s = &(*chunk)[w % LFP_WORKER_CHUNK];
	if (*s)
		return 0;
	lfpool_ts_cache *c = lfp_cache_new(p, LFP_CACHE_WORKER);
	if (!c)
		return ENOMEM;
	lfp_store_ptr_rel((void **)s, c);
	return 0;
}

LFPOOL_API lfpool_ts_cache *lfpool_ts_worker_cache(lfpool_ts *p, unsigned worker)
{
	if (worker >= LFPOOL_TS_WORKERS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* Destroy freed the slot tables (debug pools: reported here). */
	if (lfp_core_dead(&p->core, &p->magic, NULL, "worker_cache after destroy"))
		return NULL;
	lfpool_ts_cache *c = slot(p, worker);
	if (LFPOOL_LIKELY(c != NULL))
		return c;
	lfp_grace_register();	/* make_slot makes a cache under lfp_ts_lock (grace.h) */
	lfp_ts_lock_busy();
	int err = make_slot(p, worker);
	lfp_ts_unlock_busy();
	if (err) {
		errno = err;
		return NULL;
	}
	return slot(p, worker);
}

/*
 * worker_release may run concurrently with itself (lfpool/ts.h), but a
 * flush changes the cache, which has one user at a time: two releasers
 * flushing one slot at once would push its objects twice.  So releasers of
 * a slot take turns through its `releasing` byte: the exchange that finds
 * it 0 makes its caller the one flusher (acquire: the previous flusher's
 * changes to the cache are seen); the others wait until it is cleared
 * (release: the flush is published), then flush what is left (nothing,
 * unless the slot was used meanwhile), so that every call returns with the
 * slot flushed.  A release is rare and short: a spin is cheaper here than
 * a mutex per slot.
 */
/* Model: stress/model/flush.pml, W0-W7 (two releases of one slot; without the turn: its control). */
LFPOOL_API void lfpool_ts_worker_release(lfpool_ts *p, unsigned worker)
{
	if (lfp_core_dead(&p->core, &p->magic, NULL, "worker_release after destroy"))
		return;
	lfpool_ts_cache *c = worker < LFPOOL_TS_WORKERS_MAX ? slot(p, worker) : NULL;
	if (!c)
		return;
	lfp_backoff b = LFP_BACKOFF_INIT;
	while (lfp_xchg_u8_acqrel(&c->releasing, 1) != 0)
		lfp_backoff_wait(&b);
	lfpool_ts_cache_flush(c);
	lfp_store_u8_rel(&c->releasing, 0);
}

void lfp_workers_fini(lfpool_ts *p)
{
	for (unsigned i = 0; i < p->worker_chunks; i++)
		free(p->workers[i]);
	free(p->workers);
}
