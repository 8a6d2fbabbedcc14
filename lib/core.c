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

/* Without ASan, pooled objects of pools with no init hook hold this. */
#define LFP_POISON_BYTE 0xdb

static const char *const kind_names[] = {
	[LFP_KIND_POOL] = "pool",
	[LFP_KIND_CONCURRENT] = "concurrent",
	[LFP_KIND_TS] = "threadstatic",
	[LFP_KIND_MAGAZINES] = "magazines",
};

int lfp_core_init(struct lfp_core *c, const lfpool_config *cfg, enum lfp_kind kind)
{
	memset(c, 0, sizeof(*c));
	/* Only ThreadStatic has caches to put on CPUs. */
	unsigned flags = LFPOOL_F_DEBUG | (kind == LFP_KIND_TS ? LFPOOL_F_PERCPU : 0);
	if (!cfg || (cfg->capacity && cfg->prewarm > cfg->capacity) ||
	    (cfg->flags & ~flags) || cfg->capacity > LFP_NIL - 1)
		return EINVAL;
	int err = lfp_slabs_init(&c->slabs, cfg->obj_size, cfg->align, cfg->capacity,
				 cfg->allocator);
	if (err)
		return err;
	lfp_stack_init(&c->raw);
	c->init = cfg->init;
	c->reset = cfg->reset;
	c->fini = cfg->fini;
	c->hook_ctx = cfg->hook_ctx;
	c->capacity = cfg->capacity;
	c->kind = kind;
	c->debug = lfp_debug_wanted(cfg->flags);
	c->flags = cfg->flags | (c->debug ? LFPOOL_F_DEBUG : 0);
	snprintf(c->name, sizeof(c->name), "%s", cfg->name ? cfg->name : kind_names[kind]);
	pthread_mutex_init(&c->grow_lock, NULL);
	return 0;
}

void lfp_core_fini(struct lfp_core *c)
{
	lfp_slabs_fini(&c->slabs);
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

static void release_raw(struct lfp_core *c, bool mt, uint32_t chain);

/* One raw object, growing by a slab when none is left. */
static int take_one_raw(struct lfp_core *c, bool mt, uint32_t *idx)
{
	*idx = pop_raw(c, mt);
	if (*idx != LFP_NIL)
		return 0;
	if (mt)
		pthread_mutex_lock(&c->grow_lock);
	int err = 0;
	*idx = pop_raw(c, mt);	/* another thread may have grown meanwhile */
	if (*idx == LFP_NIL) {
		uint32_t first, last;
		err = lfp_slabs_grow(&c->slabs, &first, &last);
		if (!err) {
			*idx = first;
			if (first != last)
				push_raw(c, mt, lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, first)), last);
		}
	}
	if (mt)
		pthread_mutex_unlock(&c->grow_lock);
	return err;
}

int lfp_core_take_raw(struct lfp_core *c, bool mt, size_t n, uint32_t *chain)
{
	uint32_t head = LFP_NIL;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx;
		int err = take_one_raw(c, mt, &idx);
		if (err) {
			/* Nothing half-done: slabs grown for this call go back too. */
			release_raw(c, mt, head);
			return err;
		}
		lfp_store_u32_rlx(lfp_slabs_link(&c->slabs, idx), head);
		head = idx;
	}
	*chain = head;
	return 0;
}

int lfp_core_create(struct lfp_core *c, uint64_t *created, bool mt, size_t n, uint8_t state,
		    uint32_t *chain)
{
	if (!lfp_reserve(created, c->capacity, n, mt))
		return ENOBUFS;
	int err = lfp_core_take_raw(c, mt, n, chain);
	if (err) {
		if (mt)
			lfp_faa_u64_rlx(created, (uint64_t)0 - n);
		else
			*created -= n;
		return err;
	}
	lfp_core_construct_chain(c, *chain, state);
	return 0;
}

void lfp_core_construct_chain(struct lfp_core *c, uint32_t chain, uint8_t state)
{
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, i))) {
		void *obj = lfp_slabs_ptr(&c->slabs, i);
		if (c->init)
			c->init(obj, c->hook_ctx);
		if (!c->debug)
			continue;
		LFP_ASSERT(lfp_load_u8_rlx(lfp_slabs_state(&c->slabs, i)) == LFP_OBJ_RAW);
		lfp_store_u8_rlx(lfp_slabs_state(&c->slabs, i), state);
		if (state == LFP_OBJ_POOLED)
			lfp_core_poison(c, obj);
	}
}

void lfp_core_poison(struct lfp_core *c, void *obj)
{
	if (!c->debug)
		return;
#ifdef LFP_ASAN
	ASAN_POISON_MEMORY_REGION(obj, c->slabs.obj_size);
#else
	if (!c->init)
		memset(obj, LFP_POISON_BYTE, c->slabs.obj_size);
#endif
}

static void unpoison(struct lfp_core *c, void *obj)
{
#ifdef LFP_ASAN
	if (c->debug)
		ASAN_UNPOISON_MEMORY_REGION(obj, c->slabs.obj_size);
#else
	(void)c;
	(void)obj;
#endif
}

void lfp_core_fini_obj(struct lfp_core *c, void *obj)
{
	unpoison(c, obj);
	if (c->fini)
		c->fini(obj, c->hook_ctx);
}

/* Give back every slab that is wholly raw, counting the private raw chain
 * `chain` (LFP_NIL: none) in with the raw stack. */
static void release_raw(struct lfp_core *c, bool mt, uint32_t chain)
{
	if (mt)
		pthread_mutex_lock(&c->grow_lock);
	uint32_t raw = mt ? lfp_stack_pop_all_mpmc(&c->raw) : lfp_stack_pop_all_st(&c->raw);
	if (chain == LFP_NIL)
		chain = raw;
	else
		lfp_store_u32_rlx(lfp_slabs_link(&c->slabs, lfp_chain_last(&c->slabs, chain, NULL)), raw);
	uint32_t rest = lfp_slabs_release(&c->slabs, chain);
	if (rest != LFP_NIL)
		push_raw(c, mt, rest, lfp_chain_last(&c->slabs, rest, NULL));
	if (mt)
		pthread_mutex_unlock(&c->grow_lock);
}

void lfp_core_destroy_chain(struct lfp_core *c, bool mt, uint32_t chain)
{
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(&c->slabs, i))) {
		lfp_core_fini_obj(c, lfp_slabs_ptr(&c->slabs, i));
		lfp_store_u8_rlx(lfp_slabs_state(&c->slabs, i), LFP_OBJ_RAW);
	}
	release_raw(c, mt, chain);
}

int lfp_core_check_put(struct lfp_core *c, const void *obj, uint32_t *idx)
{
	switch (lfp_slabs_lookup(&c->slabs, obj, idx)) {
	case LFP_LOOKUP_FOREIGN:
		lfp_report(c->name, obj, "pointer not from this pool");
		return -1;
	case LFP_LOOKUP_INTERIOR:
		lfp_report(c->name, obj, "interior pointer, not the start of an object");
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
	lfp_report(c->name, obj, was == LFP_OBJ_POOLED ? "double put (object is already in the pool)"
			       : "put of an object the pool has not handed out");
	return -1;
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
	if (c->reset)
		c->reset(obj, c->hook_ctx);
	lfp_core_poison(c, obj);
	return idx;
}

void lfp_core_accept_bulk(struct lfp_core *c, void *const *objs, size_t n,
			  void (*push)(void *ctx, void *const *objs, size_t n), void *ctx)
{
	void *block[64];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (objs[i] && lfp_core_accept_put(c, objs[i]) != LFP_NIL)
			block[k++] = objs[i];
		if (k == sizeof(block) / sizeof(block[0]) || (i + 1 == n && k)) {
			push(ctx, block, k);
			k = 0;
		}
	}
}

void lfp_retire(void *owner, uint32_t *magic, bool debug, const char *name, uint64_t out,
		const char *what)
{
	if (debug && out) {
		char msg[96];
		snprintf(msg, sizeof(msg), "destroyed with %llu %s still out",
			 (unsigned long long)out, what);
		lfp_report_leak(name, owner, msg);
	}
	*magic = LFP_MAGIC_DEAD;
	if (debug)
		lfp_debug_bury(owner);
	else
		free(owner);
}

void lfp_core_retire(struct lfp_core *c, void *pool, uint32_t *magic, uint64_t out)
{
	lfp_core_fini(c);
	lfp_retire(pool, magic, c->debug, c->name, out, out == 1 ? "object" : "objects");
}

void lfp_core_mark_out(struct lfp_core *c, uint32_t idx)
{
	void *obj = lfp_slabs_ptr(&c->slabs, idx);
	LFP_ASSERT(lfp_load_u8_rlx(lfp_slabs_state(&c->slabs, idx)) == LFP_OBJ_POOLED);
	lfp_store_u8_rlx(lfp_slabs_state(&c->slabs, idx), LFP_OBJ_OUT);
#ifdef LFP_ASAN
	unpoison(c, obj);
#else
	if (c->init) {
		if (c->fini)
			c->fini(obj, c->hook_ctx);
		c->init(obj, c->hook_ctx);
		return;
	}
	const unsigned char *b = obj;
	for (size_t i = 0; i < c->slabs.obj_size; i++) {
		if (b[i] != LFP_POISON_BYTE) {
			lfp_report(c->name, obj, "write after put (the object changed while it was pooled)");
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

void lfp_core_stats(const struct lfp_core *c, lfpool_stats *st)
{
	st->slab_allocs = lfp_load_u64_rlx(&c->slabs.slab_allocs);
	st->slab_frees = lfp_load_u64_rlx(&c->slabs.slab_frees);
	st->trims = lfp_load_u64_rlx(&c->trims);
	st->bytes_held = lfp_slabs_bytes(&c->slabs);
}
