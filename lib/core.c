/* SPDX-License-Identifier: MIT */
/*
 * core.c - configuration, construction, destruction and the debug checks
 * that all flavours share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "threadstatic/grace.h"

/*
 * Memcheck.  A pool created while the process runs under Valgrind's
 * memcheck (lfp_memcheck_running) is a slow pool (core.h, lfp_core_slow):
 * its inline paths are shut by the state they test already (an empty
 * view, a zero bound), so every get and put reaches this file, which tells
 * memcheck what malloc and free would: an object handed out is a block of
 * obj_size bytes (VALGRIND_MALLOCLIKE_BLOCK, its bytes defined: they are
 * what init or the last user left), a put frees it (FREELIKE: a later
 * read or write is an invalid access naming the put's stack, a second put
 * an invalid free), and an object created pooled is made inaccessible
 * (never got).  The fini hook sees the bytes again.  A block outlives the
 * pool's destroy when it is still out (retire_slabs): memcheck reports it
 * as a leak, with the get's stack.  Blocks rather than a mempool:
 * memcheck's leak check skips mempool chunks in a process with no malloc
 * block alive.  Not under memcheck the client requests are never run: the
 * inline paths stay as they are, and the slow paths test c->vg, which
 * sits next to c->debug, which they test already.
 */
/* Without ASan, pooled objects of pools with no init hook hold this. */
#define LFP_POISON_BYTE 0xdb

/* Memcheck, what happens to obj of c: the user's now, a block as
 * malloc's (OUT), pooled again, its block freed (BACK), pooled without
 * ever being got (HIDE), or its bytes the fini hook's (SHOW). */
enum vg_step { VG_OUT, VG_BACK, VG_HIDE, VG_SHOW };
static void vg_tell(const struct lfp_core *c, void *obj, enum vg_step step)
{
#ifdef LFP_MEMCHECK
	size_t n = c->slabs.obj_size;
	switch (step) {
	case VG_OUT:
		VALGRIND_MALLOCLIKE_BLOCK(obj, n, 0, 1);
		break;
	case VG_BACK:
		VALGRIND_FREELIKE_BLOCK(obj, 0);
		break;
	case VG_HIDE:
		VALGRIND_MAKE_MEM_NOACCESS(obj, n);
		break;
	case VG_SHOW:
		VALGRIND_MAKE_MEM_DEFINED(obj, n);
		break;
	}
#else
	(void)c;
	(void)obj;
	(void)step;
#endif
}

static const char *const kind_names[] = {
	[LFP_KIND_POOL] = "pool",
	[LFP_KIND_CONCURRENT] = "concurrent",
	[LFP_KIND_TS] = "threadstatic",
	[LFP_KIND_MAGAZINES] = "magazines",
};

/* Why a pool of kind may not have config cfg (the sentence into why),
 * or NULL; the slabs check the object's size and alignment. */
static const char *refused(const lfpool_config *cfg, enum lfp_kind kind, char *why, size_t n)
{
	/* Only ThreadStatic has caches to put on CPUs. */
	unsigned flags = LFPOOL_F_DEBUG | (kind == LFP_KIND_TS ? LFPOOL_F_PERCPU : 0);
	if (!cfg)
		snprintf(why, n, "no configuration (NULL)");
	else if (cfg->capacity && cfg->prewarm > cfg->capacity)
		snprintf(why, n, "prewarm %zu is more than capacity %zu", cfg->prewarm,
			 cfg->capacity);
	else if (cfg->flags & LFPOOL_F_PERCPU & ~flags)
		snprintf(why, n, "flag LFPOOL_F_PERCPU is for ThreadStatic pools only");
	else if (cfg->flags & ~flags)
		snprintf(why, n, "flags 0x%x has bits that are no LFPOOL_F_* flag (0x%x)",
			 cfg->flags, cfg->flags & ~flags);
	else if (cfg->capacity > LFP_NIL - 1)
		snprintf(why, n, "capacity %zu is more than a pool can hold (%u)", cfg->capacity,
			 LFP_NIL - 1);
	else
		return NULL;
	return why;
}

int lfp_core_init(struct lfp_core *c, const lfpool_config *cfg, enum lfp_kind kind)
{
	/* All but the slabs, which lfp_slabs_init sets up. */
	memset(&c->raw, 0, sizeof(c->raw));
	memset(&c->init, 0, offsetof(struct lfp_core, slabs) - offsetof(struct lfp_core, init));
	memset(c->name, 0, sizeof(*c) - offsetof(struct lfp_core, name));
	char why[160];
	if (refused(cfg, kind, why, sizeof(why)))
		return lfp_debug_refuse(cfg && cfg->name ? cfg->name : kind_names[kind], "%s", why);
	int err = lfp_slabs_init(&c->slabs, cfg->obj_size, cfg->align, cfg->capacity,
				 cfg->allocator, why, sizeof(why));
	if (err)
		return lfp_debug_refuse(cfg->name ? cfg->name : kind_names[kind], "%s", why);
	c->slabs.rotate = kind == LFP_KIND_MAGAZINES;
	if (kind == LFP_KIND_MAGAZINES) {	/* a thread's first two: a small slab */
		lfp_slabs_headless(&c->slabs);
		lfp_slabs_small_first(&c->slabs);
	}
	lfp_stack_init(&c->raw);
	c->init = cfg->init;
	c->reset = cfg->reset;
	c->fini = cfg->fini;
	c->hook_ctx = cfg->hook_ctx;
	c->capacity = cfg->capacity;
	c->kind = kind;
	c->debug = lfp_debug_wanted(cfg->flags);
	/* Not the magazines: the library's own memory. */
	c->vg = kind != LFP_KIND_MAGAZINES && lfp_memcheck_running();
	c->flags = cfg->flags | (c->debug ? LFPOOL_F_DEBUG : 0);
	snprintf(c->name, sizeof(c->name), "%s", cfg->name ? cfg->name : kind_names[kind]);
	if (kind != LFP_KIND_POOL) {
		pthread_mutex_init(&c->grow_lock, NULL);
		lfp_fork_register(c);
	} else {
		lfp_fork_init();	/* a Pool takes the debug and block locks */
	}
	return 0;
}

void lfp_core_fini(struct lfp_core *c)
{
	lfp_fork_unregister(c);
	lfp_slabs_fini(&c->slabs);
	if (c->kind != LFP_KIND_POOL)
		pthread_mutex_destroy(&c->grow_lock);
}

static uint32_t pop_raw(struct lfp_core *c, bool mt)
{
	return mt ? lfp_stack_pop_mpmc(&c->raw, &c->slabs) : lfp_stack_pop_st(&c->raw, &c->slabs);
}

static void push_raw(struct lfp_core *c, bool mt, uint32_t first, uint32_t last)
{
	if (mt)
		lfp_stack_push_chain_mpmc(&c->raw, &c->slabs, first, last);
	else
		lfp_stack_push_chain_st(&c->raw, &c->slabs, first, last);
}

static void release_raw_locked(struct lfp_core *c, bool mt, uint32_t chain);

/* Memcheck: the objects of a new slab, chained from first to last, were
 * never got. */
static void hide_raw(struct lfp_core *c, uint32_t first, uint32_t last)
{
	for (uint32_t i = first; c->vg; i = lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, i))) {
		vg_tell(c, lfp_slabs_ptr(&c->slabs, i), VG_HIDE);
		if (i == last)
			break;
	}
}

/* Link idx in front of *head. */
static void push_private(struct lfp_core *c, uint32_t idx, uint32_t *head)
{
	lfp_store_u32_rlx(lfp_slabs_link(&c->slabs, idx), *head);
	*head = idx;
}

/*
 * Grow while fewer than n objects are in the private chain *head (*got of
 * them); grow lock held (mt).  A new slab's objects all go into a private
 * chain of their own, never onto the shared raw stack, so that if a later
 * slab cannot be had, every slab grown here, and the side data of slot
 * numbers never used before, can be given back without a grace period: no
 * other thread has seen one of their indices.  Only those: the raw objects
 * taken from the stack go back onto it and their slabs stay, even a slab
 * now wholly raw (Concurrent's inline paths may describe slab 0, and only
 * a trim, which closes them first, may give it back; lfpool/concurrent.h).
 */
static int grow_private(struct lfp_core *c, bool mt, size_t n, size_t *got, uint32_t *head)
{
	uint32_t high0 = c->slabs.high_water, grown = LFP_NIL;
	bool side0 = lfp_slabs_slot(&c->slabs, 0)->links != NULL;
	int err = 0;
	while (*got < n) {
		uint32_t idx = pop_raw(c, mt);	/* another thread may have given some back */
		if (idx != LFP_NIL) {
			push_private(c, idx, head);
			++*got;
			continue;
		}
		uint32_t first, last;
		err = lfp_slabs_grow(&c->slabs, &first, &last);
		if (err)
			break;
		hide_raw(c, first, last);
		/* The slab's first objects join the chain.  When it has more
		 * than are needed it is the last one grown (nothing can fail
		 * after it), and its surplus goes to raw now. */
		uint32_t cut = last;
		size_t need = n - *got, per = lfp_slabs_per(&c->slabs, first >> c->slabs.off_bits);
		if (need < per) {
			cut = first;
			for (size_t k = 1; k < need; k++)
				cut = lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, cut));
			push_raw(c, mt, lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, cut)), last);
			*got = n;
		} else {
			*got += per;
		}
		lfp_store_u32_rlx(lfp_slabs_link(&c->slabs, cut), grown);
		grown = first;
	}
	if (err) {
		if (err == LFP_EMISALIGNED) {
			if (c->debug)
				lfp_debug_report(c->name, NULL, "the backing allocator returned memory "
					   "not aligned as asked (given back; ENOMEM)");
			err = ENOMEM;
		}
		if (*head != LFP_NIL)
			push_raw(c, mt, *head, lfp_chain_last(&c->slabs, *head, NULL));
		*head = LFP_NIL;
		uint32_t rest = lfp_slabs_release(&c->slabs, grown);
		LFP_ASSERT(rest == LFP_NIL);	/* every object of a grown slab was here */
		(void)rest;
		lfp_slabs_shrink(&c->slabs, high0, side0, !mt);
		return err;
	}
	if (grown != LFP_NIL) {
		lfp_store_u32_rlx(lfp_slabs_link(&c->slabs, lfp_chain_last(&c->slabs, grown, NULL)),
				  *head);
		*head = grown;
	}
	return 0;
}

int lfp_core_take_raw(struct lfp_core *c, bool mt, size_t n, uint32_t *chain)
{
	uint32_t head = LFP_NIL, idx;
	size_t got = 0;
	while (got < n && (idx = pop_raw(c, mt)) != LFP_NIL) {
		push_private(c, idx, &head);
		got++;
	}
	if (got < n) {
		lfp_busy_enter();	/* as release_raw */
		if (mt)
			pthread_mutex_lock(&c->grow_lock);
		int err = grow_private(c, mt, n, &got, &head);
		if (mt)
			pthread_mutex_unlock(&c->grow_lock);
		lfp_busy_leave();
		if (err)
			return err;
	}
	*chain = head;
	return 0;
}

uint64_t lfp_core_max_objects(const struct lfp_core *c)
{
	return (uint64_t)c->slabs.max_slabs * c->slabs.per_slab;
}

int lfp_core_create_raw(struct lfp_core *c, uint64_t *created, bool mt, size_t n, uint32_t *chain)
{
	if (lfp_init_running == c) {
		/* From c's own init hook: each new object would want another. */
		if (c->debug)
			lfp_debug_report(c->name, NULL, "get from the pool's own init hook with no "
				   "object pooled (refused: EDEADLK)");
		return EDEADLK;
	}
	int err = lfp_reserve(created, c->capacity, lfp_core_max_objects(c), n, mt);
	if (err)
		return err;
	err = lfp_core_take_raw(c, mt, n, chain);
	if (err) {
		if (mt)
			lfp_faa_u64_rlx(created, (uint64_t)0 - n);
		else
			*created -= n;
		return err;
	}
	return 0;
}

int lfp_core_create(struct lfp_core *c, uint64_t *created, bool mt, size_t n, uint8_t state,
		    uint32_t *chain)
{
	int err = lfp_core_create_raw(c, created, mt, n, chain);
	if (!err)
		lfp_core_construct_chain(c, *chain, state);
	return err;
}

__thread const struct lfp_core *lfp_init_running;

/* c's init hook on obj, with lfp_init_running saying so (nested pools'
 * hooks restore it). */
static void run_init(struct lfp_core *c, void *obj)
{
	const struct lfp_core *was = lfp_init_running;
	lfp_init_running = c;
	c->init(obj, c->hook_ctx);
	lfp_init_running = was;
}

static void poison_bytes(struct lfp_core *c, void *obj);

void lfp_core_construct_chain(struct lfp_core *c, uint32_t chain, uint8_t state)
{
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, i))) {
		void *obj = lfp_slabs_ptr(&c->slabs, i);
		if (c->vg)
			vg_tell(c, obj, VG_SHOW);	/* raw memory: hidden (hide_raw) */
		if (c->init)
			run_init(c, obj);
		if (c->debug) {
			LFP_ASSERT(lfp_load_u8_rlx(lfp_slabs_state(&c->slabs, i)) == LFP_OBJ_RAW);
			lfp_store_u8_rlx(lfp_slabs_state(&c->slabs, i), state);
		}
		if (c->vg)
			vg_tell(c, obj, state == LFP_OBJ_OUT ? VG_OUT : VG_HIDE);
		else if (c->debug && state == LFP_OBJ_POOLED)
			poison_bytes(c, obj);
	}
}

void lfp_core_poison(struct lfp_core *c, void *obj)
{
	if (c->vg)
		vg_tell(c, obj, VG_BACK);
	else if (c->debug)
		poison_bytes(c, obj);
}

void lfp_core_unhand(struct lfp_core *c, void *obj)
{
	if (c->vg)
		vg_tell(c, obj, VG_BACK);
}

/* Debug pools: make a pooled object's bytes tell a later access. */
static void poison_bytes(struct lfp_core *c, void *obj)
{
#ifdef LFP_ASAN
	ASAN_POISON_MEMORY_REGION(obj, c->slabs.obj_size);
#else
	if (!c->init) {	/* memset: ASan's, in a user's ASan process (asan.h) */
		bool shut = lfp_asan_open(obj, c->slabs.obj_size);
		memset(obj, LFP_POISON_BYTE, c->slabs.obj_size);
		lfp_asan_close(obj, c->slabs.obj_size, shut);
	}
#endif
}

/* obj leaves the pooled state: neither this build's debug poison nor the
 * poison of a user's ASan headers stays (asan.h). */
static void unpoison(struct lfp_core *c, void *obj)
{
	if (c->vg)
		vg_tell(c, obj, VG_SHOW);
	lfp_asan_unpoison(obj, c->slabs.obj_size);
}

__thread const struct lfp_core *lfp_fini_running;

/* c's fini hook on obj, with lfp_fini_running saying so (nested pools'
 * hooks restore it). */
void lfp_core_fini_obj(struct lfp_core *c, void *obj)
{
	unpoison(c, obj);
	if (c->fini) {
		const struct lfp_core *was = lfp_fini_running;
		lfp_fini_running = c;
		c->fini(obj, c->hook_ctx);
		lfp_fini_running = was;
	}
}

/* Give back every slab that is wholly raw, counting the private raw chain
 * `chain` (LFP_NIL: none) in with the raw stack; grow lock held (mt). */
static void release_raw_locked(struct lfp_core *c, bool mt, uint32_t chain)
{
	uint32_t raw = mt ? lfp_stack_pop_all_mpmc(&c->raw) : lfp_stack_pop_all_st(&c->raw);
	if (chain == LFP_NIL)
		chain = raw;
	else
		lfp_store_u32_rlx(lfp_slabs_link(&c->slabs, lfp_chain_last(&c->slabs, chain, NULL)), raw);
	uint32_t rest = lfp_slabs_release(&c->slabs, chain);
	if (rest != LFP_NIL)
		push_raw(c, mt, rest, lfp_chain_last(&c->slabs, rest, NULL));
}

/* The grow lock marks the thread busy (threadstatic/grace.h): a
 * ThreadStatic get or put of a signal handler that interrupted this must
 * not grow or release slabs. */
static void release_raw(struct lfp_core *c, bool mt, uint32_t chain)
{
	lfp_busy_enter();
	if (mt)
		pthread_mutex_lock(&c->grow_lock);
	release_raw_locked(c, mt, chain);
	if (mt)
		pthread_mutex_unlock(&c->grow_lock);
	lfp_busy_leave();
}

/* Run fini on every object of chain and mark it raw; its last index. */
static uint32_t unmake_chain(struct lfp_core *c, uint32_t chain)
{
	uint32_t last = LFP_NIL;
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, i))) {
		void *obj = lfp_slabs_ptr(&c->slabs, i);
		lfp_core_fini_obj(c, obj);
		if (c->vg)
			vg_tell(c, obj, VG_HIDE);	/* raw again */
		lfp_store_u8_rlx(lfp_slabs_state(&c->slabs, i), LFP_OBJ_RAW);
		last = i;
	}
	return last;
}

void lfp_core_destroy_chain(struct lfp_core *c, bool mt, uint32_t chain)
{
	unmake_chain(c, chain);
	release_raw(c, mt, chain);
}

void lfp_core_keep_chain(struct lfp_core *c, bool mt, uint32_t chain)
{
	uint32_t last = unmake_chain(c, chain);
	if (last != LFP_NIL)
		push_raw(c, mt, chain, last);
}

int lfp_core_check_put(struct lfp_core *c, const void *obj, uint32_t *idx)
{
	switch (lfp_slabs_lookup(&c->slabs, obj, idx)) {
	case LFP_LOOKUP_FOREIGN:
		lfp_debug_report(c->name, obj, "pointer not from this pool");
		return -1;
	case LFP_LOOKUP_INTERIOR:
		lfp_debug_report(c->name, obj, "interior pointer, not the start of an object");
		return -1;
	case LFP_LOOKUP_OK:
		break;
	}
	uint8_t *state = lfp_slabs_state(&c->slabs, *idx);
	/* acq_rel, paired with the same exchange of a racing put of obj: of
	 * two puts of one object, exactly one sees it out */
	uint8_t was = lfp_xchg_u8_acqrel(state, LFP_OBJ_POOLED);
	if (was == LFP_OBJ_OUT)
		return 0;
	lfp_store_u8_rlx(state, was);
	lfp_debug_report(c->name, obj, was == LFP_OBJ_POOLED ? "double put (object is already in the pool)"
			       : "put of an object the pool has not handed out");
	return -1;
}

/* What every accepted put runs after the checks: the reset hook, poisoning. */
static void accepted(struct lfp_core *c, void *obj)
{
	if (c->reset) {	/* the user's code: a user's ASan header poisoned obj */
		bool shut = lfp_asan_open(obj, c->slabs.obj_size);
		c->reset(obj, c->hook_ctx);
		lfp_asan_close(obj, c->slabs.obj_size, shut);
	}
	lfp_core_poison(c, obj);
}

uint32_t lfp_core_accept_put(struct lfp_core *c, void *obj)
{
	uint32_t idx;
	if (c->debug) {
		if (lfp_core_check_put(c, obj, &idx) != 0)
			return LFP_NIL;
	} else {
		idx = lfp_slabs_index(&c->slabs, obj);
	}
	accepted(c, obj);
	return idx;
}

bool lfp_core_accept(struct lfp_core *c, void *obj)
{
	uint32_t idx;
	if (c->debug && lfp_core_check_put(c, obj, &idx) != 0)
		return false;
	accepted(c, obj);
	return true;
}

void lfp_core_accept_bulk(struct lfp_core *c, void *const *objs, size_t n,
			  void (*push)(void *ctx, void *const *objs, size_t n), void *ctx)
{
	void *block[64];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (objs[i] && lfp_core_accept(c, objs[i]))
			block[k++] = objs[i];
		if (k == sizeof(block) / sizeof(block[0]) || (i + 1 == n && k)) {
			push(ctx, block, k);
			k = 0;
		}
	}
}

/* Report what a destroy left out with users (debug pools). */
static void report_out(void *owner, bool debug, const char *name, uint64_t out, const char *what)
{
	if (!debug || !out)
		return;
	char msg[96];
	snprintf(msg, sizeof(msg), "destroyed with %llu %s still out", (unsigned long long)out,
		 what);
	lfp_debug_report_leak(name, owner, msg);
}

void lfp_retire(void *owner, uint32_t *magic, bool debug, const char *name, uint64_t out,
		const char *what)
{
	report_out(owner, debug, name, out, what);
	*magic = LFP_MAGIC_DEAD;
	if (!debug || !lfp_debug_bury(owner, NULL, name))
		free(owner);
}

size_t lfp_core_inline_bytes(const lfpool_config *cfg)
{
	if (!lfp_core_block_inline(cfg))
		return 0;
	return lfp_slabs_inline_bytes(cfg->obj_size, cfg->align, cfg->capacity);
}

size_t lfp_core_inline(struct lfp_core *c, void *mem, size_t bytes)
{
	/* none for debug pools (lfp_core_inline_bytes) */
	return bytes ? lfp_slabs_inline(&c->slabs, mem, bytes) : 0;
}

void *lfp_core_owner_alloc(const lfpool_config *cfg, size_t lead, size_t size, size_t tail)
{
	void *b;
	size_t bytes = lead + size + tail;
	lfp_fork_init();	/* before the first use of the small blocks' lock */
	if (!lfp_debug_wanted(cfg ? cfg->flags : 0))
		b = lfp_owner_take(bytes);
	else if (posix_memalign(&b, bytes % 128 ? 64 : 128, bytes) != 0)
		b = NULL;
	if (!b)
		return NULL;
	char *p = (char *)b + lead;
	memset(p, 0, size);
	return p;
}

void lfp_core_owner_free(void *owner, size_t size, bool debug)
{
	if (debug)
		free(owner);
	else
		lfp_owner_free(owner, size);
}

void lfp_retire_core(void *owner, size_t size, uint32_t *magic, struct lfp_core *c, uint64_t out,
		     const char *what)
{
	report_out(owner, c->debug, c->name, out, what);
	*magic = LFP_MAGIC_DEAD;
	lfp_fork_unregister(c);
	LFP_ASSERT(!c->debug || !c->lead);	/* the graveyard frees owner itself */
	int buried = c->debug ? lfp_debug_bury(owner, &c->slabs, c->name) : 0;
	/* Under memcheck an object still out is a block it reports as
	 * lost at exit; its slab stays, so that no later block overlaps it. */
	if (buried != LFP_BURIED_WITH_SLABS && !(c->vg && out))
		lfp_slabs_fini(&c->slabs);
	if (c->kind != LFP_KIND_POOL)
		pthread_mutex_destroy(&c->grow_lock);
	if (!buried)
		lfp_core_owner_free(lfp_core_block_of(c, owner), size, c->debug);
}

void lfp_core_retire(struct lfp_core *c, void *pool, size_t size, uint32_t *magic, uint64_t out)
{
	lfp_retire_core(pool, size, magic, c, out, out == 1 ? "object" : "objects");
}

bool lfp_dead(const char *name, const uint32_t *magic, const void *ptr, const char *problem)
{
	if (LFPOOL_LIKELY(*magic == LFP_MAGIC_LIVE))
		return false;
	lfp_debug_report(name, ptr, problem);
	errno = EINVAL;
	return true;
}

void lfp_core_mark_out(struct lfp_core *c, uint32_t idx)
{
	void *obj = lfp_slabs_ptr(&c->slabs, idx);
	if (c->debug) {
		LFP_ASSERT(lfp_load_u8_rlx(lfp_slabs_state(&c->slabs, idx)) == LFP_OBJ_POOLED);
		lfp_store_u8_rlx(lfp_slabs_state(&c->slabs, idx), LFP_OBJ_OUT);
	}
	if (c->vg) {
		vg_tell(c, obj, VG_OUT);	/* no pattern to check: memcheck watched */
		return;
	}
	if (!c->debug)
		return;
	unpoison(c, obj);
#ifndef LFP_ASAN
	if (c->init) {
		if (c->fini)
			c->fini(obj, c->hook_ctx);
		run_init(c, obj);
		return;
	}
	const unsigned char *b = obj;
	for (size_t i = 0; i < c->slabs.obj_size; i++) {
		if (b[i] != LFP_POISON_BYTE) {
			lfp_debug_report(c->name, obj, "write after put (the object changed while it was pooled)");
			return;
		}
	}
#endif
}

int lfp_core_owns(const struct lfp_core *c, const void *ptr)
{
	uint32_t idx;
	return ptr && lfp_slabs_lookup(&c->slabs, ptr, &idx) == LFP_LOOKUP_OK;
}

void lfp_core_count_trim(struct lfp_core *c, uint64_t *created, size_t n)
{
	if (n) {
		lfp_faa_u64_rlx(created, (uint64_t)0 - n);
		lfp_faa_u64_rlx(&c->trims, 1);
	}
}

int lfp_core_dump(const struct lfp_core *c, const lfpool_stats *st, FILE *out)
{
	typedef unsigned long long ull;
	fprintf(out, "pool '%s' (%s%s%s%s): obj_size %zu, align %zu, stride %zu, capacity %zu%s\n",
		c->name, kind_names[c->kind], c->flags & LFPOOL_F_PERCPU ? ", per-CPU" : "",
		c->debug ? ", debug" : "", c->vg ? ", memcheck" : "", c->slabs.obj_size,
		c->slabs.align, c->slabs.stride, c->capacity, c->capacity ? "" : " (unbounded)");
	fprintf(out, "  objects: %llu created, %llu pooled, %llu out\n", (ull)st->created,
		(ull)st->retained, (ull)st->live);
	fprintf(out, "  calls: %llu gets, %llu puts, %llu hits, %llu misses, %llu magazine exchanges, "
		"%llu trims\n", (ull)st->gets, (ull)st->puts, (ull)st->hits, (ull)st->misses,
		(ull)st->mag_exchanges, (ull)st->trims);
	fprintf(out, "  memory: %llu bytes held, %llu slabs made, %llu given back (%zu bytes, %u "
		"objects each)%s%s\n", (ull)st->bytes_held, (ull)st->slab_allocs,
		(ull)st->slab_frees, c->slabs.slab_bytes, c->slabs.per_slab,
		st->percpu_mode ? ", per-CPU mode " : "", st->percpu_mode ? st->percpu_mode : "");
	if (fflush(out) != 0 || ferror(out)) {
		errno = EIO;
		return -1;
	}
	return 0;
}

void lfp_core_stats(const struct lfp_core *c, lfpool_stats *st)
{
	st->slab_allocs = lfp_load_u64_rlx(&c->slabs.slab_allocs);
	st->slab_frees = lfp_load_u64_rlx(&c->slabs.slab_frees);
	st->trims = lfp_load_u64_rlx(&c->trims);
	st->bytes_held = lfp_slabs_bytes(&c->slabs);
}
