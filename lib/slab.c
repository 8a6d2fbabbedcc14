/* SPDX-License-Identifier: MIT */
/*
 * slab.c - slabs, the backing allocator, and the index <-> pointer maps.
 * See slab.h for why side data outlives the slabs it describes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slab.h"

#define LFP_SLAB_MAGIC 0x6c66706f6f6c5342ull	/* "lfpoolSB" */
#define LFP_SLAB_TARGET (64u * 1024)		/* slab size for unbounded pools */
#define LFP_SLAB_MIN_OBJS 8u
#define LFP_SLAB_MAX ((size_t)1 << 31)		/* offsets in a slab fit 32 bits */

static void *system_alloc(size_t size, size_t align, void *ctx)
{
	void *p;
	(void)ctx;
	return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

static void system_free(void *p, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	free(p);
}

const lfpool_allocator lfp_system_allocator = { system_alloc, system_free, NULL };

static size_t round_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

static size_t pow2_at_least(size_t n)
{
	size_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

static bool is_pow2(size_t n) { return n && !(n & (n - 1)); }

int lfp_slabs_init(struct lfp_slabs *s, size_t obj_size, size_t align,
		   size_t capacity_hint, const lfpool_allocator *a)
{
	memset(s, 0, sizeof(*s));
	if (align == 0)
		align = 16;
	if (obj_size == 0 || !is_pow2(align) || obj_size > LFP_SLAB_MAX / 4 ||
	    align > LFP_SLAB_MAX / 4 ||
	    (a && (!a->alloc || !a->free)))
		return EINVAL;
	s->obj_size = obj_size;
	s->align = align;
	s->stride = round_up(obj_size, align);
	if (s->stride < 2)
		s->stride = 2;	/* the divide-by-multiply below needs a divisor > 1 */
	s->first_off = (uint32_t)round_up(sizeof(struct lfp_slab_hdr), align);

	size_t want = s->first_off + (size_t)LFP_SLAB_MIN_OBJS * s->stride;
	if (want < LFP_SLAB_TARGET)
		want = LFP_SLAB_TARGET;
	if (capacity_hint && capacity_hint < LFP_SLAB_MIN_OBJS) {
		size_t small = s->first_off + capacity_hint * s->stride;
		if (small < want)
			want = small;
	} else if (capacity_hint && s->first_off + capacity_hint * s->stride < want) {
		want = s->first_off + capacity_hint * s->stride;
	}
	s->slab_bytes = pow2_at_least(want);
	if (s->slab_bytes > LFP_SLAB_MAX)
		return EINVAL;
	size_t per = (s->slab_bytes - s->first_off) / s->stride;
	if (per > 65535)
		per = 65535;
	s->per_slab = (uint32_t)per;
	while ((1u << s->off_bits) < s->per_slab)
		s->off_bits++;
	uint64_t max = ((uint64_t)1 << (32 - s->off_bits)) - 1;	/* keeps LFP_NIL unused */
	s->max_slabs = (uint32_t)(max < LFP_MAX_SLABS ? max : LFP_MAX_SLABS);
	s->stride_magic = UINT64_MAX / s->stride + 1;
	s->alloc = a ? *a : lfp_system_allocator;
	return 0;
}

static void *backing_alloc(struct lfp_slabs *s, size_t size, size_t align)
{
	return s->alloc.alloc(size, align, s->alloc.ctx);
}

static void backing_free(struct lfp_slabs *s, void *p, size_t size)
{
	s->alloc.free(p, size, s->alloc.ctx);
}

static size_t side_size(const struct lfp_slabs *s)
{
	return (size_t)s->per_slab * (sizeof(uint32_t) + sizeof(uint8_t));
}

void lfp_slabs_fini(struct lfp_slabs *s)
{
	for (uint32_t n = 0; n < s->high_water; n++) {
		struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
		if (slot->mem)
			backing_free(s, slot->mem, s->slab_bytes);
		if (slot->links)
			backing_free(s, slot->links, side_size(s));
	}
	for (uint32_t l = 0; l < LFP_MAX_LEAVES; l++)
		if (s->leaf[l])
			backing_free(s, s->leaf[l], sizeof(struct lfp_slab_leaf));
	memset(s->leaf, 0, sizeof(s->leaf));
	s->high_water = 0;
}

/* The slot for slab number n, allocating its leaf and side data if needed. */
static struct lfp_slab_slot *prepare_slot(struct lfp_slabs *s, uint32_t n)
{
	struct lfp_slab_leaf **lp = &s->leaf[n >> LFP_LEAF_BITS];
	if (!*lp) {
		struct lfp_slab_leaf *leaf = backing_alloc(s, sizeof(*leaf), 64);
		if (!leaf)
			return NULL;
		memset(leaf, 0, sizeof(*leaf));
		lfp_faa_u64_rlx(&s->side_bytes, sizeof(*leaf));
		lfp_store_ptr_rel((void **)lp, leaf);
	}
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
	if (!slot->links) {
		uint32_t *links = backing_alloc(s, side_size(s), 64);
		if (!links)
			return NULL;
		uint8_t *state = (uint8_t *)(links + s->per_slab);
		memset(state, LFP_OBJ_RAW, s->per_slab);
		lfp_faa_u64_rlx(&s->side_bytes, side_size(s));
		lfp_store_ptr_rel((void **)&slot->state, state);
		lfp_store_ptr_rel((void **)&slot->links, links);
	}
	return slot;
}

int lfp_slabs_grow(struct lfp_slabs *s, uint32_t *first, uint32_t *last)
{
	uint32_t n = 0;
	while (n < s->high_water && lfp_slabs_slot(s, n)->mem)
		n++;
	if (n == s->max_slabs)
		return ENOMEM;
	struct lfp_slab_slot *slot = prepare_slot(s, n);
	if (!slot)
		return ENOMEM;
	/* Count the slot now: its side data must be freed at fini even if the
	 * slab memory below cannot be had. */
	if (n == s->high_water)
		lfp_store_u32_rlx(&s->high_water, n + 1);
	char *mem = backing_alloc(s, s->slab_bytes, s->slab_bytes);
	if (!mem)
		return ENOMEM;
	struct lfp_slab_hdr *h = (struct lfp_slab_hdr *)mem;
	h->magic = LFP_SLAB_MAGIC;
	h->owner = s;
	h->slab_no = n;

	uint32_t base = n << s->off_bits;
	for (uint32_t i = 0; i + 1 < s->per_slab; i++)
		lfp_store_u32_rlx(&slot->links[i], base + i + 1);
	lfp_store_u32_rlx(&slot->links[s->per_slab - 1], LFP_NIL);
	lfp_store_ptr_rel((void **)&slot->mem, mem);
	lfp_faa_u64_rlx(&s->slab_allocs, 1);
	*first = base;
	*last = base + s->per_slab - 1;
	return 0;
}

uint32_t lfp_slabs_release(struct lfp_slabs *s, uint32_t chain)
{
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(s, i)))
		lfp_slabs_slot(s, i >> s->off_bits)->mark++;

	uint32_t head = LFP_NIL, prev = LFP_NIL;
	for (uint32_t i = chain, next; i != LFP_NIL; i = next) {
		next = lfp_load_u32_rlx(lfp_slabs_link(s, i));
		struct lfp_slab_slot *slot = lfp_slabs_slot(s, i >> s->off_bits);
		if (slot->mark == s->per_slab) {
			char *mem = slot->mem;
			if (mem) {
				/* Unpublish, then free: see lfp_slabs_lookup. */
				lfp_store_ptr_rel((void **)&slot->mem, NULL);
				backing_free(s, mem, s->slab_bytes);
				lfp_faa_u64_rlx(&s->slab_frees, 1);
			}
			continue;
		}
		if (prev == LFP_NIL)
			head = i;
		else
			lfp_store_u32_rlx(lfp_slabs_link(s, prev), i);
		prev = i;
	}
	if (prev != LFP_NIL)
		lfp_store_u32_rlx(lfp_slabs_link(s, prev), LFP_NIL);
	for (uint32_t n = 0; n < s->high_water; n++)
		if (s->leaf[n >> LFP_LEAF_BITS])
			lfp_slabs_slot(s, n)->mark = 0;
	return head;
}

/*
 * Lock-free, concurrently with grow and release.  A slab's pointer is
 * cleared (release) before its memory goes back to the allocator, which
 * may hand the block to another pool at once.  A pointer p the caller
 * holds into that block was made after the free, hence after the clear,
 * so the acquire load below reads NULL (or a later slab, which is not the
 * block): owns never says yes for another pool's object.  (Freeing first
 * left a window in which the stale pointer matched.)  Grow publishes a
 * slab only once its header and links are written.
 */
enum lfp_lookup lfp_slabs_lookup(const struct lfp_slabs *s, const void *p, uint32_t *idx)
{
	uintptr_t a = (uintptr_t)p;
	uint32_t hw = lfp_load_u32_rlx(&s->high_water);
	for (uint32_t n = 0; n < hw; n++) {
		/* acquire, paired with the release stores of prepare_slot (the
		 * leaf) and lfp_slabs_grow (mem, after the slab header) */
		if (!lfp_load_ptr_acq((void *const *)&s->leaf[n >> LFP_LEAF_BITS]))
			continue;
		uintptr_t mem = (uintptr_t)lfp_load_ptr_acq(
			(void *const *)&lfp_slabs_slot(s, n)->mem);
		if (!mem || a < mem || a >= mem + s->slab_bytes)
			continue;
		uintptr_t first = mem + s->first_off;
		if (a < first || (a - first) % s->stride ||
		    (a - first) / s->stride >= s->per_slab)
			return LFP_LOOKUP_INTERIOR;
		*idx = (n << s->off_bits) | (uint32_t)((a - first) / s->stride);
		return LFP_LOOKUP_OK;
	}
	return LFP_LOOKUP_FOREIGN;
}

uint64_t lfp_slabs_bytes(const struct lfp_slabs *s)
{
	uint64_t live = lfp_load_u64_rlx(&s->slab_allocs) - lfp_load_u64_rlx(&s->slab_frees);
	return live * s->slab_bytes + lfp_load_u64_rlx(&s->side_bytes);
}
