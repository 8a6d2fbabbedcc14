/* SPDX-License-Identifier: MIT */
/*
 * slab.h - the object index space every flavour stands on.
 *
 * Objects live in slabs: power-of-two sized, aligned blocks from the backing
 * allocator, each with a small header in front of its objects.  Every object
 * has a 32-bit index (slab number << off_bits | offset in the slab), which is
 * what the lock-free stacks store, and per-object side data kept outside the
 * slab: a link word for the free lists and a state byte for the debug checks.
 * The pool never writes into an object's own bytes.
 *
 * Side data and the directory that maps slab numbers to slabs stay readable
 * until the pool is destroyed, even when trim gives a slab's memory back:
 * a thread that read a stale stack head may therefore still read that
 * node's link word safely; its tagged CAS then fails.  Where side data is
 * a mapping of its own (the default allocator's large slabs), a release
 * gives its pages back (they read as zero) and keeps the mapping
 * (side_give_back in slab.c).  ThreadStatic pools, whose stacks are
 * popped only inside grace-period sections, free a released slab's side
 * data after a grace period (lfp_slabs_drop_side); a Pool, which no other
 * thread reads, at once (lfp_slabs_compact).  Nothing but
 * the owner of an object ever touches slab memory, and trim frees only slabs
 * whose every object is back in its hands, so freeing needs no grace period.
 *
 * Structural changes (grow, release) must be serialized by the caller;
 * index <-> pointer lookups may run at any time on any thread.
 */
#ifndef LFP_SLAB_H
#define LFP_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "debug.h"
#include "lfpool/common.h"

/*
 * The directory: slab number n's slot is leaf[n >> LFP_LEAF_BITS]'s slot
 * n & (LFP_LEAF_SLOTS - 1).  Leaf 0 starts as the LFP_INLINE_SLOTS slots
 * inside struct lfp_slabs (slot0): a pool with that few slabs, which is
 * every pool sized for few objects, has no leaf of its own to allocate,
 * clear, look up and free (with 10^5 pools alive, each leaf was a cache
 * miss at a pool's first touch and at its destroy, and a page of its
 * own).  Its first slab past them moves leaf 0 to a full leaf
 * (prepare_slot in slab.c); the inline slots then stay a copy of the
 * full leaf's first slots, written with them, for lookups that loaded
 * leaf[0] before the move; a lookup that loads the new leaf (acquire)
 * sees the copy.  A ThreadStatic pool's magazines move it once about 17
 * caches exist.  Pools sized for more full slabs than the inline slots
 * (wide) move it at their first growth; an unbounded pool, which starts
 * with small slabs (below), only when a slab number reaches them.
 *
 * The directory of leaves (dir) is leaf 0's pointer alone (leaf0, inside
 * struct lfp_slabs) until a slab number first reaches leaf 1, which only
 * a pool of more than LFP_LEAF_SLOTS slabs does: then a table of
 * LFP_MAX_LEAVES pointers of its own takes its place (slab.c,
 * prepare_dir), and leaf0 stays a copy of its entry 0, written with it,
 * for lookups that loaded dir before the move.  Inline, the table was
 * 512 bytes of every pool's struct (two in a ThreadStatic pool's: its
 * objects' and its magazines'), a sixth of a small pool's memory.
 */
#define LFP_NIL UINT32_MAX
#define LFP_LEAF_BITS 10
#define LFP_LEAF_SLOTS (1u << LFP_LEAF_BITS)
#define LFP_MAX_LEAVES 64u
#define LFP_MAX_SLABS (LFP_LEAF_SLOTS * LFP_MAX_LEAVES)
/* Slot 0 and the small slabs (below) are inline, and one more. */
#define LFP_INLINE_SLOTS 5u
/*
 * Small slabs: a pool's first slabs are small and grow geometrically up
 * to its full slab size, so that a pool that holds a few objects holds a
 * few KiB (slab 1 of 1 KiB for 64 B objects) and not a 64 KiB slab.  Slab
 * numbers 1 .. small are small ones, slab n of small_bytes << (2 (n - 1))
 * bytes, aligned to its size; slab 0 and every number above small are of
 * slab_bytes.  Growth takes them in the order 1, 2, .., small, 0, small +
 * 1, ..: slab 0, which Concurrent's inline paths serve (base + index x
 * stride), is the pool's first full-size slab, so a big pool's hottest
 * objects are there as before.  An object's index is still slab number <<
 * off_bits | offset, off_bits sized for a full slab.  A pointer's slab is
 * found by its address: a small slab's by comparing with the (at most
 * LFP_SMALL_MAX) small slabs' ranges, a full one's by rounding down to
 * slab_bytes (lfp_slabs_locate).
 */
#define LFP_SMALL_MAX 3u
#define LFP_SMALL_SHIFT 2u	/* each small slab 4 times the last */

/* Per-object state, kept in side data (debug checks only). */
enum { LFP_OBJ_RAW = 0, LFP_OBJ_POOLED = 1, LFP_OBJ_OUT = 2 };

struct lfp_slab_hdr {
	uint64_t magic;
	const struct lfp_slabs *owner;
	uint32_t slab_no;
};

struct lfp_slab_slot {
	char *mem;		/* slab memory, NULL when not allocated */
	uint32_t *links;	/* per object next index; kept once allocated */
	uint8_t *state;		/* per object LFP_OBJ_*; same allocation as links */
	uint32_t mark;		/* scratch for release(), under the caller's lock */
	/* The side data's pages were given back (its slab was released;
	 * slab.c, side_give_back): it stays mapped, reads as zero, and
	 * side_bytes no longer counts it.  Under the caller's lock. */
	bool side_out;
};

struct lfp_slab_leaf {
	struct lfp_slab_slot slot[LFP_LEAF_SLOTS];
};

struct lfp_slabs {
	/* Packed (no holes): two of these are in every ThreadStatic pool's
	 * struct, whose memory a small pool is mostly made of. */
	size_t obj_size, stride, align;
	size_t slab_bytes;	/* full slabs' bytes: a power of two, aligned to it */
	uint32_t first_off;	/* offset of object 0 from the slab start */
	uint32_t per_slab;	/* objects per full slab */
	uint32_t small_per[LFP_SMALL_MAX];	/* objects of small slab n at [n - 1] */
	uint32_t off_bits;	/* offset bits in an index */
	size_t small_bytes;	/* slab 1's bytes, when small */
	/* Every small slab ever grown lies in [small_lo, small_hi): each
	 * bound only ever widens (relaxed stores before the slab's release:
	 * a reader of a slab's object sees bounds at least that wide), so
	 * one compare tells most full slabs' objects from small ones'
	 * (lfp_slabs_locate).  Both 0 until the first small slab. */
	uint64_t small_lo, small_hi;
	uint32_t max_slabs;
	uint32_t high_water;	/* slab numbers with side data: [0, high_water) */
	uint64_t stride_magic;	/* divides by stride with one multiply */
	lfpool_allocator alloc;
	uint8_t small;		/* slab numbers 1 .. small are small (LFP_SMALL_MAX) */
	uint8_t leaves;		/* leaves ever set (leaf 0 from init): dir[l] is unset
				 * from here (at most LFP_MAX_LEAVES) */
	bool misaligned;	/* the last growth failed on a misaligned block */
	/* Sized for more full slabs than LFP_INLINE_SLOTS: leaf 0 is a full
	 * leaf from the first growth on, as every later leaf is from its
	 * first slab, so that a growth that fails past the inline slots has
	 * no leaf to keep (slab.c, prepare_slot).  Not an unbounded pool's:
	 * its first growth would make a 32 KiB leaf for a 1 KiB slab (a
	 * failed growth of a pool threads share may keep one:
	 * lfpool/common.h). */
	bool wide;
	/* Chain a new slab's objects from a slot that moves on with each slab
	 * grown in the process (magazines: slab.c, colour), not from slot 0. */
	bool rotate;
	/* Slabs carry no header: object 0 at the slab's start (first_off 0).
	 * Only for a space whose objects nothing locates by address
	 * (lfp_slabs_locate reads the header), which indices alone name:
	 * magazines (lfp_slabs_headless). */
	bool headless;
	/* Side data comes in mappings of its own, whole pages (the default
	 * allocator's large slabs: slab.c, side_new), whose pages a release
	 * gives back with the slab (side_give_back). */
	bool side_mapped;
	uint64_t slab_allocs, slab_frees;	/* read with relaxed loads */
	uint64_t slab_mem;	/* bytes of the slabs held now (relaxed) */
	uint64_t side_bytes;	/* directory and side data held of the allocator */
	/* The first slab's side data (slab 1 when small, else slab 0:
	 * lfp_slabs_first) inside the pool's own block (lfp_slabs_inline),
	 * or NULL: that slot takes it instead of a block of its own, and it
	 * is never freed with the slabs (the pool's block goes with it). */
	uint32_t *inline_side;
	/* Leaf 0 until a slab number reaches LFP_INLINE_SLOTS, a copy of
	 * its first slots after (see LFP_INLINE_SLOTS). */
	struct lfp_slab_slot slot0[LFP_INLINE_SLOTS];
	/* Leaf 0's first slot (slot0, or a struct lfp_slab_leaf's): the
	 * directory while dir points here, a copy of dir[0] after. */
	struct lfp_slab_slot *leaf0;
	/* Each leaf's first slot at dir[l]: &leaf0 (leaf 0 alone), or
	 * LFP_MAX_LEAVES pointers of their own once a slab number reaches
	 * leaf 1 (see the directory, above).  Published with a release
	 * store; lock-free readers load it with acquire (lfp_slabs_slot). */
	struct lfp_slab_slot **dir;
};

_Static_assert(LFP_MAX_LEAVES <= UINT8_MAX && LFP_SMALL_MAX <= UINT8_MAX,
	       "leaves and small fit their bytes");

/* Why lfp_slabs_lookup refused a pointer. */
enum lfp_lookup { LFP_LOOKUP_OK, LFP_LOOKUP_FOREIGN, LFP_LOOKUP_INTERIOR };

/* The backing allocator when the config names none (slab.c: mappings for
 * large blocks, a shared cache for small power-of-two ones, malloc else). */
extern const lfpool_allocator lfp_system_allocator;
/* The same without that cache (mappings, else malloc): for blocks that are
 * not slabs and that a user may put twice (array pools' oversize buffers,
 * where a debug pool relies on malloc's checks), or that live as long as
 * their pool (CPU areas). */
extern const lfpool_allocator lfp_plain_allocator;

/* A pool's own struct of size bytes, zeroed and aligned to 64 (to 128
 * when size is a multiple of 128: a class's blocks are cut from a mapping
 * aligned to its size, at multiples of their size), and its
 * free: small ones from a cache that keeps them for the next pool
 * (slab.c), else posix_memalign and free.  size must be the same. */
void *lfp_owner_alloc(size_t size);
void lfp_owner_free(void *p, size_t size);
/* The same block, not cleared (lfp_core_owner_new clears it). */
void *lfp_owner_take(size_t size);
/* Whether this process runs under Valgrind's memcheck (asked once): its
 * pools tell memcheck about their objects (core.c, "Memcheck"), and the
 * blocks kept for reuse here are inaccessible until taken again, so that
 * its leak check reads no stale pointer in them. */
bool lfp_memcheck_running(void);

/* For per-CPU areas (aligned to at most 128): small ones from that cache
 * (slab.c), else as lfp_plain_allocator. */
extern const lfpool_allocator lfp_area_allocator;

/* fork.c's prepare and release: the lock of that cache (and of the
 * owners' cache). */
void lfp_blocks_fork_lock(void);
void lfp_blocks_fork_unlock(void);

/* Set up an empty index space; returns 0 or EINVAL, with the sentence that
 * says why (naming the field and its value) in why[0 .. n).  capacity_hint
 * sizes slabs. */
int lfp_slabs_init(struct lfp_slabs *s, size_t obj_size, size_t align,
		   size_t capacity_hint, const lfpool_allocator *a, char *why, size_t n);
/*
 * Side data in the pool's own block (with 10^5 pools alive, a
 * pool's first get allocated its first slab's side data from the shared
 * cache of small blocks, a lock taken and a line of another page written,
 * and destroy gave it back under the lock again).  For a small first slab
 * (side data of at most LFP_INLINE_SIDE_MAX bytes) of the default
 * allocator: lfp_slabs_inline_bytes says how many bytes to leave for it
 * after the pool's struct, before the space is set up (0: none), and
 * lfp_slabs_inline hands them to the space after lfp_slabs_init (a space
 * whose first slab, lfp_slabs_first, needs more does not take them) and
 * returns how many it took (0: none; a multiple of 8), so that another
 * space may take what is left (ThreadStatic's magazines).
 */
/* Small slabs first (LFP_SMALL_MAX) for a space sized for one full slab
 * or less, which lfp_slabs_init gives none: ThreadStatic's magazines,
 * sized for 8 a slab, of which a thread's first use takes 2.  Before any
 * growth, without inline side data. */
void lfp_slabs_small_first(struct lfp_slabs *s);
/* No slab header (slab.h, headless) for a space whose objects are never
 * located by address: ThreadStatic's magazines, whose 64 B header made a
 * thread's first two magazines of 512 B a 2 KiB slab, not a 1 KiB one.
 * Before lfp_slabs_small_first and any growth. */
void lfp_slabs_headless(struct lfp_slabs *s);
#define LFP_INLINE_SIDE_MAX 512u
size_t lfp_slabs_inline_bytes(size_t obj_size, size_t align, size_t capacity_hint);
size_t lfp_slabs_inline(struct lfp_slabs *s, void *mem, size_t bytes);

/* Free every slab and all side data.  Objects must have been finalized. */
void lfp_slabs_fini(struct lfp_slabs *s);

/*
 * Allocate one slab and chain its objects first -> ... -> last through their
 * link words.  Caller serialized.  Returns 0, or ENOMEM with nothing changed
 * and no memory kept: the slab, its side data and its directory leaf are
 * all had before any is published (slab.c).
 */
int lfp_slabs_grow(struct lfp_slabs *s, uint32_t *first, uint32_t *last);
/* What lfp_slabs_grow returns when the allocator's block was not aligned as
 * asked (it was given back); callers report it and say ENOMEM. */
#define LFP_EMISALIGNED (-1)

/*
 * After a failed growth: free the side data of every slot from high0 up
 * (their slabs must be gone, and no other thread may ever have seen one of
 * their indices), and slot 0's unless side0 (whether it had side data
 * before the growth: slot 0 is grown after the small slabs, below high0),
 * and lower high_water to high0; with leaves, also the
 * directory leaves wholly above it (only when no other thread can be
 * looking objects up).  Caller serialized.
 */
void lfp_slabs_shrink(struct lfp_slabs *s, uint32_t high0, bool side0, bool leaves);

/*
 * A block from allocator a, checked: NULL when it failed, or when the block
 * is not aligned to align (then it is given back first and *misaligned, if
 * not NULL, is set).
 */
void *lfp_alloc_aligned(const lfpool_allocator *a, size_t size, size_t align, bool *misaligned);

/*
 * Given a private chain of raw (unconstructed) indices, free every slab all of
 * whose objects are in it and return the rest as a chain (LFP_NIL if none).
 * Caller serialized.
 */
uint32_t lfp_slabs_release(struct lfp_slabs *s, uint32_t chain);

/*
 * Free the side data of every slab number that holds no slab now (grow
 * makes it anew).  Only for a caller that knows no thread can still read
 * those link words: ThreadStatic's trim, after a grace period during which
 * no slab was grown or released (lib/threadstatic/grace.h).  Caller
 * serialized with grow and release.  Returns the bytes freed.
 */
uint64_t lfp_slabs_drop_side(struct lfp_slabs *s);

/*
 * Free the side data of every slab number that holds no slab now, lower
 * high_water to one past the last slab, and free the directory leaves
 * above it: what a pool gives back beyond its slabs when no other thread
 * can be reading its side data or directory (a Pool's trim).  Caller
 * serialized with every other call on the space.
 */
void lfp_slabs_compact(struct lfp_slabs *s);

/* Map any pointer to an index without touching the memory it points to. */
enum lfp_lookup lfp_slabs_lookup(const struct lfp_slabs *s, const void *p, uint32_t *idx);

/* The bytes held now of the backing allocator: slabs, their side data,
 * the directory's leaves and its table (not the first slab's side data in
 * the pool's own block). */
uint64_t lfp_slabs_bytes(const struct lfp_slabs *s);
/* The bytes of the directory's table of leaf pointers (slab.h), which a
 * space of more than LFP_LEAF_SLOTS slab numbers has of the allocator. */
#define LFP_DIR_BYTES (LFP_MAX_LEAVES * sizeof(struct lfp_slab_slot *))
/* The bytes of one full slab's side data, as allocated (slab.c). */
size_t lfp_slabs_side_bytes(const struct lfp_slabs *s);
/* The bytes of all the small slabs and their side data. */
uint64_t lfp_slabs_small_bytes(const struct lfp_slabs *s);

/* The directory's leaf pointers: leaf0 alone, or a table of its own. */
static inline struct lfp_slab_slot *const *lfp_slabs_dir(const struct lfp_slabs *s)
{
	/* Acquire: pairs with prepare_dir's release store (slab.c), so a
	 * reader that sees the table sees its entries. */
	return (struct lfp_slab_slot *const *)lfp_load_ptr_acq((void *const *)&s->dir);
}

/* Leaf l's first slot, NULL when leaf l is not set (lock-free). */
static inline struct lfp_slab_slot *lfp_slabs_leaf(const struct lfp_slabs *s, uint32_t l)
{
	struct lfp_slab_slot *const *dir = lfp_slabs_dir(s);
	if (l && dir == &s->leaf0)	/* leaf 0 alone */
		return NULL;
	return (struct lfp_slab_slot *)lfp_load_ptr_acq((void *const *)&dir[l]);
}

static inline struct lfp_slab_slot *lfp_slabs_slot(const struct lfp_slabs *s, uint32_t slab_no)
{
	LFP_ASSERT(slab_no < s->max_slabs);
	/* Acquire: pairs with the release store of a leaf made or moved
	 * (slab.c, prepare_leaf), so a lock-free reader that sees leaf 0's new
	 * address also sees the inline slots copied into it.  (A plain move on
	 * x86-64, as the relaxed load was.)  A slab number past leaf 0 was
	 * handed out after its leaf and the table were published: the
	 * table is the one loaded here. */
	struct lfp_slab_slot *const *dir = lfp_slabs_dir(s);
	/* Past leaf 0 only through the table: dir[1] of the inline leaf0
	 * would read the dir field itself. */
	LFP_ASSERT(slab_no < LFP_LEAF_SLOTS || dir != &s->leaf0);
	struct lfp_slab_slot *leaf = (struct lfp_slab_slot *)
		lfp_load_ptr_acq((void *const *)&dir[slab_no >> LFP_LEAF_BITS]);
	return &leaf[slab_no & (LFP_LEAF_SLOTS - 1)];
}

/* Whether slab number n is a small one (n - 1 wraps for slab 0). */
static inline bool lfp_slabs_small(const struct lfp_slabs *s, uint32_t n)
{
	return n - 1 < s->small;
}

/* The objects of slab number n. */
static inline uint32_t lfp_slabs_per(const struct lfp_slabs *s, uint32_t n)
{
	return lfp_slabs_small(s, n) ? s->small_per[n - 1] : s->per_slab;
}

/* The bytes of slab number n (and its alignment). */
static inline size_t lfp_slabs_size(const struct lfp_slabs *s, uint32_t n)
{
	return lfp_slabs_small(s, n) ? s->small_bytes << (LFP_SMALL_SHIFT * (n - 1)) : s->slab_bytes;
}

/* The slab number a space grows first: 1 when it has small slabs. */
static inline uint32_t lfp_slabs_first(const struct lfp_slabs *s)
{
	return s->small ? 1 : 0;
}

/* Whether idx names an object slot: its offset is below its slab's
 * objects (the slab number is checked by lfp_slabs_slot). */
static inline bool lfp_slabs_index_ok(const struct lfp_slabs *s, uint32_t idx)
{
	return idx != LFP_NIL &&
	       (idx & ((1u << s->off_bits) - 1)) < lfp_slabs_per(s, idx >> s->off_bits);
}

/*
 * The lookups below read the index geometry (off_bits, first_off, stride)
 * into locals before the slot's pointers: ck's loads are compiler
 * barriers, and a field read after one is read again from memory.
 */

/* The offset of index idx inside its slab. */
static inline uint32_t lfp_slabs_off(uint32_t idx, uint32_t off_bits)
{
	return idx & ((1u << off_bits) - 1);
}

/* The link word of index idx, given the slot of its slab. */
static inline uint32_t *lfp_slot_link(const struct lfp_slab_slot *slot, uint32_t off)
{
	uint32_t *links = (uint32_t *)lfp_load_ptr_rlx((void *const *)&slot->links);
	return &links[off];
}

/* The object at offset off of the slab in slot (the caller owns it: its
 * slab is allocated). */
static inline void *lfp_slot_obj(const struct lfp_slab_slot *slot, uint32_t off,
				 uint32_t first_off, size_t stride)
{
	char *mem = (char *)lfp_load_ptr_rlx((void *const *)&slot->mem);
	LFP_ASSERT(mem != NULL);
	return mem + first_off + (size_t)off * stride;
}

/* The link word of index idx.  Valid for every index ever handed out. */
static inline uint32_t *lfp_slabs_link(const struct lfp_slabs *s, uint32_t idx)
{
	LFP_ASSERT(lfp_slabs_index_ok(s, idx));
	uint32_t ob = s->off_bits;
	return lfp_slot_link(lfp_slabs_slot(s, idx >> ob), lfp_slabs_off(idx, ob));
}

/* The state byte of index idx. */
static inline uint8_t *lfp_slabs_state(const struct lfp_slabs *s, uint32_t idx)
{
	LFP_ASSERT(lfp_slabs_index_ok(s, idx));
	uint32_t ob = s->off_bits;
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, idx >> ob);
	uint8_t *state = (uint8_t *)lfp_load_ptr_rlx((void *const *)&slot->state);
	return &state[lfp_slabs_off(idx, ob)];
}

/* The object of an index the caller owns (its slab is allocated). */
static inline void *lfp_slabs_ptr(const struct lfp_slabs *s, uint32_t idx)
{
	LFP_ASSERT(lfp_slabs_index_ok(s, idx));
	uint32_t ob = s->off_bits, first_off = s->first_off;
	size_t stride = s->stride;
	return lfp_slot_obj(lfp_slabs_slot(s, idx >> ob), lfp_slabs_off(idx, ob), first_off, stride);
}

/* The start of the small slab that holds address a, or full when none
 * does (a is then in a full slab, which starts at full). */
uintptr_t lfp_slabs_small_base(const struct lfp_slabs *s, uintptr_t a, uintptr_t full);

/* The slab number and offset of an object the pool handed out (trusted:
 * no checks); returns the slab number, the offset in *off. */
static inline uint32_t lfp_slabs_locate(const struct lfp_slabs *s, const void *p, uint32_t *off)
{
	/* A headless space (magazines) has no header to read. */
	LFP_ASSERT(!s->headless);
	/* The geometry first, before the loads' compiler barriers (above). */
	uintptr_t base = (uintptr_t)p & ~(uintptr_t)(s->slab_bytes - 1);
	uint32_t first_off = s->first_off;
	uint64_t magic = s->stride_magic;
	/* A small slab is aligned to its own size only: found by its range
	 * (lfp_slabs_small_base) where p lies among the small slabs. */
	uint64_t lo = lfp_load_u64_rlx(&s->small_lo), hi = lfp_load_u64_rlx(&s->small_hi);
	if (__builtin_expect((uint64_t)(uintptr_t)p - lo < hi - lo, 0))
		base = lfp_slabs_small_base(s, (uintptr_t)p, base);
	const struct lfp_slab_hdr *h = (const struct lfp_slab_hdr *)base;
	uint32_t delta = (uint32_t)((uintptr_t)p - base - first_off);
	*off = (uint32_t)(((unsigned __int128)magic * delta) >> 64);
	LFP_ASSERT(*off < lfp_slabs_per(s, h->slab_no) &&
		   (uintptr_t)p == base + s->first_off + *off * s->stride);
	return h->slab_no;
}

/* The index of an object the pool handed out (trusted: no checks). */
static inline uint32_t lfp_slabs_index(const struct lfp_slabs *s, const void *p)
{
	uint32_t ob = s->off_bits, off, slab_no = lfp_slabs_locate(s, p, &off);
	return (slab_no << ob) | off;
}

#endif
