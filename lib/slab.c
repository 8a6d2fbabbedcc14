/* SPDX-License-Identifier: MIT */
/*
 * slab.c - slabs, the backing allocator, and the index <-> pointer maps.
 * See slab.h for why side data outlives the slabs it describes.
 */
#define _GNU_SOURCE	/* mremap */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "asan.h"
#include "memcheck.h"
#include "slab.h"

#define LFP_SLAB_MAGIC 0x6c66706f6f6c5342ull	/* "lfpoolSB" */
#define LFP_SLAB_TARGET (64u * 1024)		/* slab size for unbounded pools */
#define LFP_SLAB_MIN_OBJS 8u
#define LFP_SLAB_MAX ((size_t)1 << 31)		/* offsets in a slab fit 32 bits */
/* Side data mapped from here (side_new); the stress programs map the side
 * data of their objects' 64 KiB slabs (4 KiB), so that their rounds on the
 * default allocator reach side_give_back under TSan (stress/sc_trim.c). */
#ifdef LFPOOL_STRESS
# define LFP_SIDE_MAP_MIN 1024u
#else
# define LFP_SIDE_MAP_MIN (16u * 1024)
#endif

/*
 * The default backing allocators.  Blocks of LFP_MMAP_MIN bytes and more
 * (large slabs) are mapped directly, aligned by trimming the mapping, and
 * unmapped when freed: no padding lost to posix_memalign at the peak, and
 * a trimmed pool's memory goes back to the system, not to malloc's free
 * lists.  Smaller blocks come from malloc (lfp_plain_allocator,
 * for what is not a slab: array pools' oversize buffers, CPU areas), or,
 * for the slabs (lfp_system_allocator), from the cache of small blocks
 * below.  alloc and free choose by size alone, so they always agree.
 */
#define LFP_MMAP_MIN (64u * 1024)

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (n + pg - 1) & ~(pg - 1);
}

static void *map_aligned(size_t size, size_t align)
{
	size_t len = page_round(size), pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t extra = align > pg ? align : 0;
	char *base = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (!extra)
		return base;
	char *p = (char *)(((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1));
	if (p > base)
		munmap(base, (size_t)(p - base));
	if (base + len + extra > p + len)
		munmap(p + len, (size_t)(base + len + extra - (p + len)));
	return p;
}

/*
 * Small slabs from a shared cache of aligned blocks.  A small pool's slab
 * (a power of two, aligned to its size) from posix_memalign left a
 * remainder in malloc's bins each time; with 10^4..10^5 pools alive every
 * memalign searched them, so that create and first touch slowed as pools
 * were added.  Blocks whose size is a power of two between
 * LFP_CACHE_MIN and LFP_MMAP_MIN (slabs; also the 8 KiB directory leaves
 * and small slabs' side data, rounded up: lfp_slabs_side_bytes)
 * come instead from 64 KiB mappings cut into blocks of one size, aligned
 * to it, and go back to a free list of their size: O(1) both ways, under
 * one lock (taken only where a pool grows or gives slabs back, never on a
 * get or put that its cache, stack or area serves; the lock is a leaf,
 * taken in fork.c's prepare after every other lock).  The blocks are kept
 * for reuse by any pool, not unmapped: the memory of small slabs (under
 * 64 KiB) stays with the process at its peak, as in malloc's bins, until
 * lfpool_release_memory gives it back (below); a pool's own figures
 * (bytes_held) still fall on trim.  ASan builds keep posix_memalign, so
 * that LeakSanitizer and the heap checks still see every slab.
 */
#define LFP_CACHE_MIN 64u
#define LFP_OWNER_MAX (16u * 1024)	/* lfp_owner_alloc, below */
#define LFP_CACHE_CLASSES 10	/* 64 B .. 32 KiB */

bool lfp_memcheck_running(void)
{
#ifdef LFP_MEMCHECK
	static uint32_t known;	/* 0: not asked yet; 1: no; 2: yes */
	uint32_t k = lfp_load_u32_rlx(&known);
	if (!k) {
		/* GET_VBITS answers 1 under memcheck only: other tools (as
		 * callgrind, which counts the benchmark's instructions) do not
		 * know it, and pools keep their inline paths there. */
		uint32_t probe = 0, vbits;
		k = VALGRIND_GET_VBITS(&probe, &vbits, sizeof(probe)) == 1 ? 2 : 1;
		lfp_store_u32_rlx(&known, k);
	}
	return k == 2;
#else
	return false;
#endif
}

#ifndef LFP_ASAN
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Under blocks_lock: per class, the blocks given back, as a stack of
 * pointers (kept[0 .. nkept), in a mapping of its own that grows by
 * doubling), and the untouched rest of its last mapping, handed out from
 * the bottom up (pages are touched only when a block is used, and are
 * still zero then).  The stack is outside the blocks: a free list linked
 * through their first words wrote into every block given back and read
 * every block taken, a cache miss each with 10^5 pools' blocks cold (one
 * per block a Pool's destroy frees).
 * Only when the stack cannot grow does a block go on the list linked
 * through it (free), so a give never fails.  kept[0 .. nclean) were given
 * back to the system by lfpool_release_memory (their whole pages read as
 * zero) and not taken since, so that the next call counts them given back
 * already; a give pushes above them, a take that pops
 * one of them lowers nclean.
 */
static struct block_class {
	void **kept;
	size_t nkept, room, nclean;
	void *free;
	char *next, *end;
} blocks[LFP_CACHE_CLASSES];

/* The cache's class of a block of size bytes, or -1 when it is not one. */
static int block_class(size_t size)
{
	if (size < LFP_CACHE_MIN || size >= LFP_MMAP_MIN || (size & (size - 1)))
		return -1;
	return __builtin_ctzl(size) - __builtin_ctz(LFP_CACHE_MIN);
}

/* Memcheck: the bytes of a block from from on are the library's again
 * (usable) or kept, inaccessible (blocks_lock held). */
static void memcheck_block(void *b, size_t from, size_t bytes, bool usable)
{
#ifdef LFP_MEMCHECK
	if (!lfp_memcheck_running())
		return;
	if (usable)
		VALGRIND_MAKE_MEM_DEFINED((char *)b + from, bytes - from);
	else
		VALGRIND_MAKE_MEM_NOACCESS((char *)b + from, bytes - from);
#else
	(void)b;
	(void)from;
	(void)bytes;
	(void)usable;
#endif
}

/* A block of bytes from class bc, whose mappings are chunk bytes aligned
 * to chunk; NULL if none can be mapped.  Not cleared: its callers clear
 * what they read.  Shared by the slabs' blocks and the pools' structs
 * below. */
static void *class_take(struct block_class *bc, size_t bytes, size_t chunk)
{
	pthread_mutex_lock(&blocks_lock);
	void *b = bc->nkept ? bc->kept[--bc->nkept] : bc->free;
	if (bc->nkept < bc->nclean)	/* it was below nclean */
		bc->nclean = bc->nkept;
	if (b) {
		if (b == bc->free)
			bc->free = *(void **)b;
		memcheck_block(b, 0, bytes, true);
	} else {
		if ((size_t)(bc->end - bc->next) < bytes) {
			char *mem = map_aligned(chunk, chunk);
			if (mem) {
				bc->next = mem;
				bc->end = mem + chunk;
			}
		}
		if ((size_t)(bc->end - bc->next) >= bytes) {
			b = bc->next;
			bc->next += bytes;
		}
	}
	pthread_mutex_unlock(&blocks_lock);
	return b;
}

/* Room for one more kept block of bc (blocks_lock held): false when the
 * stack's mapping cannot grow (or, without mremap, once it is full: the
 * blocks then go on the list). */
static bool class_room(struct block_class *bc)
{
	if (bc->nkept < bc->room)
		return true;
	size_t room = bc->room ? bc->room * 2 : 4096 / sizeof(void *);
	void *m = MAP_FAILED;
	if (!bc->kept)
		m = mmap(NULL, room * sizeof(void *), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#ifdef MREMAP_MAYMOVE
	else
		m = mremap(bc->kept, bc->room * sizeof(void *), room * sizeof(void *),
			   MREMAP_MAYMOVE);
#endif
	if (m == MAP_FAILED)
		return false;
	bc->kept = m;
	bc->room = room;
	return true;
}

/* Keep block b of bytes bytes of class bc for the next take. */
static void class_give(struct block_class *bc, void *b, size_t bytes)
{
	pthread_mutex_lock(&blocks_lock);
	if (class_room(bc)) {
		bc->kept[bc->nkept++] = b;
		memcheck_block(b, 0, bytes, false);
	} else {
		*(void **)b = bc->free;
		bc->free = b;
		memcheck_block(b, sizeof(void *), bytes, false);	/* but the link */
	}
	pthread_mutex_unlock(&blocks_lock);
}

/* A block of class cls (size bytes). */
static void *block_alloc(int cls, size_t size)
{
	return class_take(&blocks[cls], size, LFP_MMAP_MIN);
}

static void block_free(int cls, void *b)
{
	class_give(&blocks[cls], b, (size_t)LFP_CACHE_MIN << cls);
}

void lfp_blocks_fork_lock(void) { pthread_mutex_lock(&blocks_lock); }
void lfp_blocks_fork_unlock(void) { pthread_mutex_unlock(&blocks_lock); }

/*
 * Pools' own structs (lfp_owner_alloc): blocks of a multiple of 64 bytes
 * up to LFP_OWNER_MAX, cut from LFP_OWNER_CHUNK mappings (aligned to
 * their size, so that lfpool_release_memory finds a block's mapping from
 * its address; the blocks are aligned to 64), and kept on a free list of
 * their size when freed, under blocks_lock as the slabs' blocks are.
 * From malloc, 10^5 pools' structs (2.4 to 6 KiB each) were given back
 * to the system by free's trimming of the heap top when they were
 * destroyed, and faulted in again, page by page, by the
 * next creates (0.6 page faults per pool created, tens of microseconds
 * each on the VMs the bench runs on), and each create searched malloc's
 * bins.  Kept here, a program that had N pools creates N again
 * at the cost of a list pop; the memory stays with the process at its peak
 * number of pools, as the small slabs' does, until lfpool_release_memory.
 */
#define LFP_OWNERS 1
#define LFP_OWNER_CHUNK (256u * 1024)
static struct block_class owners[LFP_OWNER_MAX / 64];

static void *owner_alloc(size_t size)
{
	size_t cls = (size + 63) / 64 - 1;
	return class_take(&owners[cls], (cls + 1) * 64, LFP_OWNER_CHUNK);
}

static void owner_free(void *b, size_t size)
{
	class_give(&owners[(size + 63) / 64 - 1], b, (size + 63) & ~(size_t)63);
}

/*
 * lfpool_release_memory: what the classes keep goes back to the system.
 * Nothing on a take or a give counts the blocks out: under blocks_lock
 * the call sorts each class's kept blocks by address, and a mapping
 * (found by rounding a block's address down to the mapping's size, its
 * alignment) whose every block cut so far is kept has none out: its
 * blocks leave the stack and it goes on a list to unmap.  The other kept
 * blocks of whole pages get MADV_DONTNEED on those pages and stay kept,
 * below nclean (their pages read as zero when next touched; each is
 * given back once).  Smaller blocks go back only with a whole mapping.
 * Blocks on a class's list (its stack could not grow) are moved to the
 * stack first; if some stay, no mapping of that class is unmapped this
 * time (they are not counted).  The listed mappings are unmapped once the
 * lock is dropped (nothing refers to them any more), sorted over every
 * class, so that adjacent ones (mmap puts each new mapping next to the
 * last, whatever its class) go in one call and one TLB flush: unmapped
 * class by class, 10^5 pools' mappings took twice as long.
 */
static bool below(void *a, void *b) { return (uintptr_t)a < (uintptr_t)b; }

static void sift_down(void **a, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && below(a[c], a[c + 1]))
			c++;
		if (!below(a[i], a[c]))
			return;
		void *t = a[i];
		a[i] = a[c];
		a[c] = t;
	}
}

/* In place, no memory taken (heapsort): a stack is the only copy. */
static void sort_by_address(void **a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t k = n; k-- > 1;) {
		void *t = a[0];
		a[0] = a[k];
		a[k] = t;
		sift_down(a, 0, k);
	}
}

/* The whole pages of a block of bytes at b: [*from, *from + return). */
static size_t whole_pages(uintptr_t b, size_t bytes, uintptr_t *from)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), to = (b + bytes) & ~(pg - 1);
	*from = (b + pg - 1) & ~(pg - 1);
	return to > *from ? (size_t)(to - *from) : 0;
}

/*
 * Pages to give back, gathered while each range follows the last: one
 * system call for adjacent blocks or mappings.  A munmap that fails (a
 * hole in a mapping that would pass vm.max_map_count) gives the pages
 * back with MADV_DONTNEED instead: the memory goes back, only its
 * addresses stay taken.  failed says whether an MADV_DONTNEED failed.
 */
struct span {
	uintptr_t from, to;
	bool unmap, failed;
};

static size_t span_flush(struct span *sp)
{
	void *p = (void *)sp->from;
	size_t len = sp->to - sp->from;
	sp->from = sp->to = 0;
	if (!len || (sp->unmap && munmap(p, len) == 0) || madvise(p, len, MADV_DONTNEED) == 0)
		return len;
	sp->failed = true;
	return 0;
}

/* Add [from, from + len) to sp; returns the bytes of the range flushed. */
static size_t span_add(struct span *sp, uintptr_t from, size_t len)
{
	size_t done = 0;
	if (from != sp->to) {
		done = span_flush(sp);
		sp->from = from;
	}
	sp->to = from + len;
	return done;
}

/*
 * The mappings to unmap: listed as base | size >> 16 (bases are aligned
 * to 64 KiB), at most one per kept block; where the list could not be
 * mapped, unmapped at once (class by class).  before: the bytes in them
 * not to count, as no block kept them now: given back by an earlier
 * call, or never cut into a block (the untouched rest of a class's last
 * mapping, a tail too small for a block).
 */
struct unmaps {
	void **list;
	size_t n, room, done, before;
	struct span now;
};

static void unmap_later(struct unmaps *u, uintptr_t base, size_t chunk)
{
	if (u->list)
		u->list[u->n++] = (void *)(base | chunk >> 16);
	else
		u->done += span_add(&u->now, base, chunk);
}

/* Unmap the listed mappings; returns the bytes given back now. */
static size_t unmap_all(struct unmaps *u)
{
	sort_by_address(u->list, u->n);
	for (size_t i = 0; i < u->n; i++) {
		uintptr_t e = (uintptr_t)u->list[i];
		u->done += span_add(&u->now, e & ~(uintptr_t)0xffff, (e & 0xffff) << 16);
	}
	u->done += span_flush(&u->now);
	if (u->list)
		munmap(u->list, u->room * sizeof(void *));
	return u->done > u->before ? u->done - u->before : 0;
}

/* List bc's mappings with no block out, dropping their blocks from the
 * sorted stack (kept pointers tagged with bit 0 were given back before). */
static void release_mappings(struct block_class *bc, size_t bytes, size_t chunk,
			     struct unmaps *u)
{
	char *last = bc->end ? bc->end - chunk : NULL;	/* being cut: up to next */
	size_t n = 0;
	for (size_t i = 0, j; i < bc->nkept; i = j) {
		char *base = (char *)((uintptr_t)bc->kept[i] & ~(uintptr_t)(chunk - 1));
		size_t clean = 0;
		uintptr_t from;
		for (j = i; j < bc->nkept; j++) {
			uintptr_t b = (uintptr_t)bc->kept[j];
			if ((char *)(b & ~(uintptr_t)(chunk - 1)) != base)
				break;
			if (b & 1)
				clean += whole_pages(b & ~(uintptr_t)1, bytes, &from);
		}
		size_t cut = (base == last ? (size_t)(bc->next - base) : chunk) / bytes;
		LFP_ASSERT(j - i <= cut);
		if (j - i != cut) {
			memmove(&bc->kept[n], &bc->kept[i], (j - i) * sizeof(void *));
			n += j - i;
			continue;
		}
		unmap_later(u, (uintptr_t)base, chunk);
		u->before += clean + (chunk - cut * bytes);
		if (base == last)
			bc->next = bc->end = NULL;
	}
	bc->nkept = n;
}

/* MADV_DONTNEED the whole pages of bc's kept blocks not given back yet
 * (untagged), untagging the others; returns the bytes given back, and
 * sets nclean: every kept block when all were given back. */
static size_t release_pages(struct block_class *bc, size_t bytes)
{
	struct span sp = { .unmap = false };
	size_t done = 0;
	for (size_t i = 0; i < bc->nkept; i++) {
		uintptr_t b = (uintptr_t)bc->kept[i], from;
		bc->kept[i] = (void *)(b & ~(uintptr_t)1);
		size_t len = whole_pages(b & ~(uintptr_t)1, bytes, &from);
		if (!(b & 1) && len)
			done += span_add(&sp, from, len);
	}
	done += span_flush(&sp);
	bool all = bytes >= (size_t)sysconf(_SC_PAGESIZE) && !sp.failed;
	bc->nclean = all ? bc->nkept : 0;
	return done;
}

/* The stack's own pages above its blocks; returns the bytes unmapped. */
static size_t release_stack(struct block_class *bc)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t keep = (bc->nkept * sizeof(void *) + pg - 1) & ~(pg - 1);
	size_t had = bc->room * sizeof(void *);
	if (!bc->kept || keep >= had)
		return 0;
	munmap((char *)bc->kept + keep, had - keep);
	bc->room = keep / sizeof(void *);
	if (!keep)
		bc->kept = NULL;
	return had - keep;
}

#define LFP_ALL_CLASSES (LFP_CACHE_CLASSES + LFP_OWNER_MAX / 64)

/* Class k of both caches (the slabs' blocks, then the owners'), its
 * blocks' and its mappings' sizes. */
static struct block_class *class_at(size_t k, size_t *bytes, size_t *chunk)
{
	if (k < LFP_CACHE_CLASSES) {
		*bytes = (size_t)LFP_CACHE_MIN << k;
		*chunk = LFP_MMAP_MIN;
		return &blocks[k];
	}
	k -= LFP_CACHE_CLASSES;
	*bytes = (k + 1) * 64;
	*chunk = LFP_OWNER_CHUNK;
	return &owners[k];
}

/* Move bc's list to its stack where it can grow, and tag the blocks
 * given back before; returns the blocks on the stack. */
static size_t class_prepare(struct block_class *bc)
{
	while (bc->free && class_room(bc)) {
		void *b = bc->free;
		bc->free = *(void **)b;
		bc->kept[bc->nkept++] = b;
	}
	for (size_t i = 0; i < bc->nclean; i++)
		bc->kept[i] = (void *)((uintptr_t)bc->kept[i] | 1);
	return bc->nkept;
}

size_t lfpool_release_memory(void)
{
	struct unmaps u = { .now = { .unmap = true } };
	size_t done = 0, bytes, chunk;
	pthread_mutex_lock(&blocks_lock);
	for (size_t k = 0; k < LFP_ALL_CLASSES; k++)
		u.room += class_prepare(class_at(k, &bytes, &chunk));
	if (u.room) {
		u.list = mmap(NULL, u.room * sizeof(void *), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (u.list == MAP_FAILED)
			u.list = NULL;
	}
	for (size_t k = 0; k < LFP_ALL_CLASSES; k++) {
		struct block_class *bc = class_at(k, &bytes, &chunk);
		if (!bc->free) {
			sort_by_address(bc->kept, bc->nkept);
			release_mappings(bc, bytes, chunk, &u);
		}
		done += release_pages(bc, bytes);
		done += release_stack(bc);
	}
	pthread_mutex_unlock(&blocks_lock);
	return done + unmap_all(&u);
}
#else
static int block_class(size_t size) { (void)size; return -1; }
static void *block_alloc(int cls, size_t size) { (void)cls; (void)size; return NULL; }
static void block_free(int cls, void *b) { (void)cls; (void)b; }
void lfp_blocks_fork_lock(void) {}
void lfp_blocks_fork_unlock(void) {}
# define LFP_OWNERS 0
static void *owner_alloc(size_t size) { (void)size; return NULL; }
static void owner_free(void *b, size_t size) { (void)b; (void)size; }
size_t lfpool_release_memory(void) { return 0; }	/* no cache: malloc's */
#endif

void *lfp_owner_take(size_t size)
{
	void *p;
	if (LFP_OWNERS && size && size <= LFP_OWNER_MAX)
		p = owner_alloc(size);
	else if (posix_memalign(&p, size % 128 ? 64 : 128, size ? size : 1) != 0)
		p = NULL;
	return p;
}

void *lfp_owner_alloc(size_t size)
{
	void *p = lfp_owner_take(size);
	if (p)
		memset(p, 0, size);
	return p;
}

void lfp_owner_free(void *p, size_t size)
{
	if (!p)
		return;
	if (LFP_OWNERS && size && size <= LFP_OWNER_MAX)
		owner_free(p, size);
	else
		free(p);
}

/* lfp_plain_allocator: mapped from LFP_MMAP_MIN bytes, else malloc's. */
static void *plain_alloc(size_t size, size_t align, void *ctx)
{
	(void)ctx;
	void *p;
	if (size >= LFP_MMAP_MIN)
		return map_aligned(size, align);
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) != 0)
		return NULL;
	return p;
}

static void plain_free(void *p, size_t size, void *ctx)
{
	(void)ctx;
	if (size >= LFP_MMAP_MIN)
		munmap(p, page_round(size));
	else
		free(p);
}

const lfpool_allocator lfp_plain_allocator = { plain_alloc, plain_free, NULL };

/* lfp_area_allocator: a size of up to LFP_OWNER_MAX bytes, a multiple of
 * 128, from the owners' cache (its blocks of that size lie at multiples of
 * it from a page boundary: aligned to 128), else lfp_plain_allocator's.
 * Not cleared: percpu.c clears what it reads of its areas (their
 * counters), not their slots (clearing them wrote every CPU's area at each
 * create, twice). */
static bool area_cached(size_t size)
{
	return LFP_OWNERS && size && size <= LFP_OWNER_MAX && size % 128 == 0;
}

static void *area_alloc(size_t size, size_t align, void *ctx)
{
	return area_cached(size) ? lfp_owner_take(size) : plain_alloc(size, align, ctx);
}

static void area_free(void *p, size_t size, void *ctx)
{
	if (area_cached(size))
		lfp_owner_free(p, size);
	else
		plain_free(p, size, ctx);
}

const lfpool_allocator lfp_area_allocator = { area_alloc, area_free, NULL };

/* The slabs' default allocator's alloc.  A block of a cached size comes
 * aligned to its size; one that must be aligned more is refused here
 * (lfp_alloc_aligned would give it back). */
static void *system_alloc(size_t size, size_t align, void *ctx)
{
	(void)ctx;
	int cls = block_class(size);
	if (cls < 0)
		return plain_alloc(size, align, NULL);
	return align <= size ? block_alloc(cls, size) : NULL;
}

static void system_free(void *p, size_t size, void *ctx)
{
	int cls = block_class(size);
	if (cls >= 0)
		block_free(cls, p);
	else
		plain_free(p, size, ctx);
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

/*
 * Slab colouring (Bonwick 1994, section 4.1): where a slab has room left
 * over after its objects, its first object starts a number of cache lines
 * later, the next in a round robin over the offsets that room allows (one
 * counter, which magazine slabs' rotation advances too).  Slabs are aligned to their size, so without
 * it the first objects of every index space's first slab lie at the same
 * offset from such a boundary and share the few cache sets of that offset:
 * with 1,000 ThreadStatic pools used round robin every pool's loaded
 * magazine (its space's first object, 8 KiB slabs) fell in 8 of the 1,024
 * sets of a 1 MiB 16-way L2 and came from L3 each time.
 * Returns the offset to add to first_off, a multiple of the line and of
 * align: 0 when there is no room.
 */
static uint32_t colours_used;	/* the round robin of colour and grow */

static size_t colour(size_t room, size_t align)
{
	size_t step = align > 64 ? align : 64;
	size_t colours = room / step + 1;
	if (colours == 1)
		return 0;
	return (lfp_faa_u32_rlx(&colours_used, 1) % colours) * step;
}

/* The shape of a space's slabs: stride, offset of object 0 (before
 * colouring), slab bytes and objects per slab; 0 or EINVAL. */
struct geometry {
	size_t align, stride, first_off, slab_bytes;
	uint32_t per;
};

/* Why obj_size and align (0: 16) make no geometry, or NULL (the sentence
 * into why[0 .. n)). */
static const char *refused(char *why, size_t n, size_t obj_size, size_t align)
{
	if (obj_size == 0)
		snprintf(why, n, "obj_size is 0");
	else if (!is_pow2(align))
		snprintf(why, n, "align %zu is not a power of two", align);
	else if (obj_size > LFP_SLAB_MAX / 4)
		snprintf(why, n, "obj_size %zu is more than %zu", obj_size, LFP_SLAB_MAX / 4);
	else if (align > LFP_SLAB_MAX / 4)
		snprintf(why, n, "align %zu is more than %zu", align, LFP_SLAB_MAX / 4);
	else
		return NULL;
	return why;
}

static int geometry(struct geometry *g, size_t obj_size, size_t align, size_t capacity_hint,
		    char *why, size_t n)
{
	char scratch[96];
	if (!why) {
		why = scratch;
		n = sizeof(scratch);
	}
	if (align == 0)
		align = 16;
	if (refused(why, n, obj_size, align))
		return EINVAL;
	g->align = align;
	g->stride = round_up(obj_size, align);
	if (g->stride < 2)
		g->stride = 2;	/* the divide-by-multiply below needs a divisor > 1 */
	g->first_off = round_up(sizeof(struct lfp_slab_hdr), align);

	size_t want = g->first_off + (size_t)LFP_SLAB_MIN_OBJS * g->stride;
	if (want < LFP_SLAB_TARGET)
		want = LFP_SLAB_TARGET;
	if (capacity_hint && capacity_hint < LFP_SLAB_MIN_OBJS) {
		size_t small = g->first_off + capacity_hint * g->stride;
		if (small < want)
			want = small;
	} else if (capacity_hint && g->first_off + capacity_hint * g->stride < want) {
		want = g->first_off + capacity_hint * g->stride;
	}
	g->slab_bytes = pow2_at_least(want);
	if (g->slab_bytes > LFP_SLAB_MAX) {
		snprintf(why, n, "obj_size %zu rounded up to align %zu makes a slab of %zu objects "
			 "over %zu bytes", obj_size, align,
			 capacity_hint && capacity_hint < LFP_SLAB_MIN_OBJS ? capacity_hint
									   : (size_t)LFP_SLAB_MIN_OBJS,
			 (size_t)LFP_SLAB_MAX);
		return EINVAL;
	}
	size_t per = (g->slab_bytes - g->first_off) / g->stride;
	g->per = (uint32_t)(per > 65535 ? 65535 : per);
	return 0;
}

/* A slab's side data: a link word and a state byte per object. */
static size_t side_raw(uint32_t per)
{
	return (size_t)per * (sizeof(uint32_t) + sizeof(uint8_t));
}

/*
 * The small slabs of geometry g (slab.h, LFP_SMALL_MAX): the first of at
 * least 1 KiB and LFP_SMALL_MIN_OBJS objects (two: a ThreadStatic
 * thread's first magazines), each next one
 * 1 << LFP_SMALL_SHIFT times as big, while below the full slab; objects
 * at first_off (coloured) into per[0 .. return).  *first: slab 1's bytes.
 */
#define LFP_SMALL_MIN 1024u
#define LFP_SMALL_MIN_OBJS 2u
#define LFP_SMALL_FROM (8u * 1024)	/* full slabs with small ones first */
static uint32_t small_slabs(const struct geometry *g, size_t first_off, size_t *first,
			    uint32_t per[LFP_SMALL_MAX])
{
	size_t b = pow2_at_least(g->first_off + (size_t)LFP_SMALL_MIN_OBJS * g->stride);
	uint32_t n = 0;
	if (b < LFP_SMALL_MIN)
		b = LFP_SMALL_MIN;
	*first = b;
	if (g->slab_bytes < LFP_SMALL_FROM)	/* small already: a bounded pool */
		return 0;
	for (; n < LFP_SMALL_MAX && b < g->slab_bytes && b > first_off + g->stride;
	     n++, b <<= LFP_SMALL_SHIFT)
		per[n] = (uint32_t)((b - first_off) / g->stride);
	return n;
}

/* The objects of the first slab a space of geometry g, sized for
 * capacity_hint, grows (lfp_slabs_init). */
static uint32_t first_per(const struct geometry *g, size_t capacity_hint)
{
	uint32_t per[LFP_SMALL_MAX];
	size_t first;
	if (capacity_hint && capacity_hint <= g->per)
		return g->per;
	return small_slabs(g, g->first_off, &first, per) ? per[0] : g->per;
}

size_t lfp_slabs_inline_bytes(size_t obj_size, size_t align, size_t capacity_hint)
{
	struct geometry g;
	if (geometry(&g, obj_size, align, capacity_hint, NULL, 0) != 0 ||
	    side_raw(first_per(&g, capacity_hint)) > LFP_INLINE_SIDE_MAX)
		return 0;
	return round_up(side_raw(first_per(&g, capacity_hint)), 64);
}

size_t lfp_slabs_inline(struct lfp_slabs *s, void *mem, size_t bytes)
{
	LFP_ASSERT(s->high_water == 0);
	uint32_t per = lfp_slabs_per(s, lfp_slabs_first(s));
	size_t need = round_up(side_raw(per), 8);	/* the next taker's links aligned */
	if (!mem || !per || bytes < need)
		return 0;
	s->inline_side = mem;
	return need;
}

/* The offset bits of an index for per_slab objects a slab, and the slab
 * numbers the rest allows. */
static void index_bits(struct lfp_slabs *s)
{
	s->off_bits = 0;
	while ((1u << s->off_bits) < s->per_slab)
		s->off_bits++;
	uint64_t max = ((uint64_t)1 << (32 - s->off_bits)) - 1;	/* keeps LFP_NIL unused */
	s->max_slabs = (uint32_t)(max < LFP_MAX_SLABS ? max : LFP_MAX_SLABS);
}

int lfp_slabs_init(struct lfp_slabs *s, size_t obj_size, size_t align,
		   size_t capacity_hint, const lfpool_allocator *a, char *why, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->leaf0 = s->slot0;
	s->dir = &s->leaf0;
	s->leaves = 1;
	struct geometry g;
	if (a && (!a->alloc || !a->free)) {
		snprintf(why, n, "allocator has no %s function", a->alloc ? "free" : "alloc");
		return EINVAL;
	}
	if (geometry(&g, obj_size, align, capacity_hint, why, n) != 0)
		return EINVAL;
	align = g.align;
	s->obj_size = obj_size;
	s->align = align;
	s->stride = g.stride;
	s->first_off = (uint32_t)g.first_off;
	s->slab_bytes = g.slab_bytes;
	size_t per = g.per;
	s->per_slab = g.per;
	s->first_off += colour(s->slab_bytes - s->first_off - per * s->stride, align);
	index_bits(s);
	s->stride_magic = UINT64_MAX / s->stride + 1;
	/* A pool sized for one full slab keeps that one slab. */
	if (!capacity_hint || capacity_hint > g.per)
		s->small = small_slabs(&g, s->first_off, &s->small_bytes, s->small_per);
	/* An unbounded pool starts small: its leaf 0 moves out of the inline
	 * slots only when a slab number reaches them. */
	s->wide = capacity_hint > (size_t)LFP_INLINE_SLOTS * s->per_slab;
	s->alloc = a ? *a : lfp_system_allocator;
	s->side_mapped = s->alloc.alloc == system_alloc && s->slab_bytes >= LFP_MMAP_MIN &&
			 side_raw(s->per_slab) >= LFP_SIDE_MAP_MIN;
	return 0;
}

void lfp_slabs_headless(struct lfp_slabs *s)
{
	LFP_ASSERT(s->high_water == 0 && !s->inline_side && !s->small);
	s->headless = true;
	s->first_off = 0;	/* and no colour: the slab has no room left */
	size_t per = s->slab_bytes / s->stride;
	s->per_slab = (uint32_t)(per > 65535 ? 65535 : per);
	index_bits(s);
}

void lfp_slabs_small_first(struct lfp_slabs *s)
{
	LFP_ASSERT(s->high_water == 0 && !s->inline_side);
	struct geometry g = { .align = s->align, .stride = s->stride,
			      .first_off = s->headless ? 0 :
					   round_up(sizeof(struct lfp_slab_hdr), s->align),
			      .slab_bytes = s->slab_bytes, .per = s->per_slab };
	s->small = small_slabs(&g, s->first_off, &s->small_bytes, s->small_per);
}

void *lfp_alloc_aligned(const lfpool_allocator *a, size_t size, size_t align, bool *misaligned)
{
	void *p = a->alloc(size, align, a->ctx);
	if (p && ((uintptr_t)p & (align - 1))) {
		a->free(p, size, a->ctx);
		if (misaligned)
			*misaligned = true;
		return NULL;
	}
	return p;
}

/* A block of the backing allocator, checked (s->misaligned says why not). */
static void *backing_alloc(struct lfp_slabs *s, size_t size, size_t align)
{
	return lfp_alloc_aligned(&s->alloc, size, align, &s->misaligned);
}

/* Nothing goes back poisoned by a user's ASan headers (asan.h): a kept
 * block becomes another pool's memory, a user's allocator is checked code. */
static void backing_free(struct lfp_slabs *s, void *p, size_t size)
{
	lfp_asan_unpoison(p, size);
	s->alloc.free(p, size, s->alloc.ctx);
}

/*
 * The bytes of one slab's side data: a link word and a state byte per
 * object.  With the default allocator, a small slab's side data is rounded
 * up to a power of two of at least LFP_CACHE_MIN bytes, so that it comes
 * from the cache of small blocks as the slab does: O(1), where a small
 * posix_memalign searched malloc's bins, which with 10^5 pools alive held
 * 10^5 freed remainders.  Large slabs' side data keeps its size
 * (malloc, or a mapping, given back on trim).
 */
static size_t side_size(const struct lfp_slabs *s, uint32_t slab_no)
{
	size_t n = side_raw(lfp_slabs_per(s, slab_no));
	bool small = lfp_slabs_small(s, slab_no);
	if (s->side_mapped && !small)
		return page_round(n);
	if (s->alloc.alloc != system_alloc || lfp_slabs_size(s, slab_no) >= LFP_MMAP_MIN)
		return n;
	size_t p = pow2_at_least(n < LFP_CACHE_MIN ? LFP_CACHE_MIN : n);
	return p < LFP_MMAP_MIN ? p : n;
}

size_t lfp_slabs_side_bytes(const struct lfp_slabs *s)
{
	return side_size(s, 0);
}

uint64_t lfp_slabs_small_bytes(const struct lfp_slabs *s)
{
	uint64_t bytes = 0;
	for (uint32_t n = 1; n <= s->small; n++)
		bytes += lfp_slabs_size(s, n) + side_size(s, n);
	return bytes;
}

/* Whether slab n's side data is a mapping of its own (side_new). */
static bool side_mapped(const struct lfp_slabs *s, uint32_t n)
{
	return s->side_mapped && !lfp_slabs_small(s, n);
}

/*
 * A slab's side data.  With the default allocator a large slab's (of
 * LFP_MMAP_MIN bytes and more) of LFP_SIDE_MAP_MIN bytes or more (objects
 * of up to 20 bytes) is a mapping of its own (from malloc, a trimmed
 * pool's side data stayed in malloc's heap after every slab was
 * unmapped), so that its pages can go back with the slab
 * (side_give_back) while the mapping stays readable for the lock-free
 * readers slab.h speaks of.  Smaller side data stays with malloc, packed:
 * a mapping of its own took a system call more per slab and, rounded up
 * to whole pages, 3 KiB more resident per pool of 64 B objects with one
 * slab (5 KiB of side data in two pages).
 */
static uint32_t *side_new(struct lfp_slabs *s, uint32_t n)
{
	if (side_mapped(s, n))
		return map_aligned(side_size(s, n), 64);
	return backing_alloc(s, side_size(s, n), 64);
}

static void side_free(struct lfp_slabs *s, uint32_t n, void *side)
{
	if (side_mapped(s, n))
		munmap(side, side_size(s, n));
	else
		backing_free(s, side, side_size(s, n));
}

/* Leaf l's first slot, NULL when not set (the writer's read, caller
 * serialized with every change of the directory). */
static struct lfp_slab_slot *leaf_at(const struct lfp_slabs *s, uint32_t l)
{
	return l && s->dir == &s->leaf0 ? NULL : s->dir[l];
}

/* Set leaf l to v (release: lookups may read it at once), in the table
 * and, for leaf 0, in leaf0, which lookups that loaded dir before the
 * table was made still read. */
static void leaf_set(struct lfp_slabs *s, uint32_t l, struct lfp_slab_slot *v)
{
	if (l == 0)
		lfp_store_ptr_rel((void **)&s->leaf0, v);
	if (s->dir != &s->leaf0)
		lfp_store_ptr_rel((void **)&s->dir[l], v);
}

void lfp_slabs_fini(struct lfp_slabs *s)
{
	for (uint32_t n = 0; n < s->high_water; n++) {
		struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
		if (slot->mem)
			backing_free(s, slot->mem, lfp_slabs_size(s, n));
		if (slot->links && slot->links != s->inline_side)
			side_free(s, n, slot->links);
	}
	/* Only the leaves ever made: reading all LFP_MAX_LEAVES pointers
	 * (2 KiB) cost a pool's destroy 32 cache misses with 10^5 pools
	 * alive. */
	for (uint32_t l = 0; l < s->leaves; l++) {
		struct lfp_slab_slot *leaf = leaf_at(s, l);
		if (leaf && leaf != s->slot0)
			backing_free(s, leaf, sizeof(struct lfp_slab_leaf));
	}
	if (s->dir && s->dir != &s->leaf0)	/* NULL: never set up */
		backing_free(s, s->dir, LFP_DIR_BYTES);
	s->leaf0 = NULL;
	s->dir = &s->leaf0;
	s->leaves = 0;
	s->high_water = 0;
}

/* Slot n's inline copy, where a write to slot n must go too: when leaf 0
 * has moved to a full leaf and n is below LFP_INLINE_SLOTS (slab.h). */
static struct lfp_slab_slot *slot_copy(struct lfp_slabs *s, uint32_t n)
{
	return n < LFP_INLINE_SLOTS && s->leaf0 != s->slot0 ? &s->slot0[n] : NULL;
}

/* Store v (release) in the pointer field at offset field of slot n, and
 * of its inline copy. */
static void slot_set(struct lfp_slabs *s, uint32_t n, size_t field, void *v)
{
	struct lfp_slab_slot *copy = slot_copy(s, n);
	lfp_store_ptr_rel((void **)((char *)lfp_slabs_slot(s, n) + field), v);
	if (copy)
		lfp_store_ptr_rel((void **)((char *)copy + field), v);
}
#define SLOT_SET(s, n, f, v) slot_set(s, n, offsetof(struct lfp_slab_slot, f), v)

/* Set slot n's side_out, and its inline copy's: a shrink may make the
 * copies leaf 0 again (lfp_slabs_shrink). */
static void side_out_set(struct lfp_slabs *s, uint32_t n, bool v)
{
	struct lfp_slab_slot *copy = slot_copy(s, n);
	lfp_slabs_slot(s, n)->side_out = v;
	if (copy)
		copy->side_out = v;
}

/*
 * Slot n's slab was released: give its side data's pages back to the
 * system (MADV_DONTNEED) where it is a mapping of its own, and stop
 * counting it.  The mapping stays: a reader that loaded a stale stack
 * head may still read a link word there (zero now; its tagged CAS fails),
 * and a growth into slot n uses it again (lfp_slabs_grow counts it back).
 * Not for side data that other blocks share pages with (small slabs',
 * slot 0's in the pool's own block): that stays, counted, until the
 * slot's side data is dropped (lfp_slabs_shrink, lfp_slabs_drop_side,
 * lfp_slabs_compact) or the pool destroyed.
 */
static void side_give_back(struct lfp_slabs *s, uint32_t n)
{
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
	if (!side_mapped(s, n) || !slot->links || slot->side_out || slot->mem)
		return;
	if (madvise(slot->links, side_size(s, n), MADV_DONTNEED) != 0)
		return;	/* kept, still counted */
	side_out_set(s, n, true);
	lfp_faa_u64_rlx(&s->side_bytes, (uint64_t)0 - side_size(s, n));
}

/*
 * Give the directory a table of its own (slab.h) for leaf l if it has
 * none yet (l > 0): 0 or ENOMEM.  Its entry 0 is leaf0, which stays a
 * copy of it (leaf_set); a lookup that loaded dir before the release
 * store below reads leaf0, one that loaded the table reads entry 0, the
 * same leaf.  Cleared whole (512 bytes, once per pool that needs it).
 */
static int prepare_dir(struct lfp_slabs *s, uint32_t l)
{
	if (l == 0 || s->dir != &s->leaf0)
		return 0;
	struct lfp_slab_slot **dir = backing_alloc(s, LFP_DIR_BYTES, 64);
	if (!dir)
		return ENOMEM;
	memset(dir, 0, LFP_DIR_BYTES);
	dir[0] = s->leaf0;
	lfp_faa_u64_rlx(&s->side_bytes, LFP_DIR_BYTES);
	lfp_store_ptr_rel((void **)&s->dir, dir);
	return 0;
}

/* Make leaf l (of slab number n) a full one if it is not: a new leaf, or
 * leaf 0 moved out of the inline slots, and the directory's table when
 * l needs it.  0 or ENOMEM, nothing made. */
static int prepare_leaf(struct lfp_slabs *s, uint32_t l)
{
	struct lfp_slab_slot *cur = leaf_at(s, l);
	if (l < s->leaves && cur && cur != s->slot0)
		return 0;
	/* Not cleared: see prepare_slot. */
	struct lfp_slab_slot *leaf = backing_alloc(s, sizeof(struct lfp_slab_leaf), 64);
	if (!leaf)
		return ENOMEM;
	if (prepare_dir(s, l) != 0) {
		backing_free(s, leaf, sizeof(struct lfp_slab_leaf));
		return ENOMEM;
	}
	/* The inline slots are all below high_water here (n == high_water
	 * is past them), or all still zero (a wide pool's first growth):
	 * copied whole.  A lookup may be reading them; from
	 * the store below on, every write to them goes to both (slot_set). */
	if (l == 0 && cur == s->slot0)
		memcpy(leaf, s->slot0, sizeof(s->slot0));
	lfp_faa_u64_rlx(&s->side_bytes, sizeof(struct lfp_slab_leaf));
	leaf_set(s, l, leaf);
	if (s->leaves <= l)
		s->leaves = l + 1;
	return 0;
}

/* The leaf of slab number n, made (or leaf 0 moved out of the inline
 * slots) if needed: 0 or ENOMEM, nothing made.  A pool that is not wide
 * moves its leaf 0 when a slab number first reaches LFP_INLINE_SLOTS:
 * rarely for a bounded pool (only while a trim's objects are in flight),
 * routinely for a ThreadStatic pool's magazines (their core is sized by a
 * hint, unbounded: about 15 caches need a third slab of them), while other
 * threads read the directory lock-free.  Readers load leaf pointers with
 * acquire (lfp_slabs_slot), so the copy is visible through the new leaf. */
static int prepare_slot_leaf(struct lfp_slabs *s, uint32_t n)
{
	return n >= LFP_INLINE_SLOTS || s->wide ? prepare_leaf(s, n >> LFP_LEAF_BITS) : 0;
}

/* Clear slot n, which no index was ever out of (prepare_slot says who
 * may read it meanwhile). */
static void clear_slot(struct lfp_slabs *s, uint32_t n)
{
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, n), *copy = slot_copy(s, n);
	SLOT_SET(s, n, mem, NULL);
	SLOT_SET(s, n, links, NULL);
	SLOT_SET(s, n, state, NULL);
	slot->mark = 0;
	slot->side_out = false;
	if (copy) {
		copy->mark = 0;
		copy->side_out = false;
	}
}

/* Slot n of a leaf that exists (prepare_slot_leaf), given side data
 * (NULL: the slot keeps its own, as slots do after a trim). */
static struct lfp_slab_slot *prepare_slot(struct lfp_slabs *s, uint32_t n, uint32_t *side)
{
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
	/*
	 * A leaf's slots are cleared one by one as they come into use, here,
	 * when n >= high_water (with those it passed over: slot 0, grown
	 * after the small slabs): clearing the whole leaf when it is made
	 * wrote 8 KiB, and touched two pages, per pool with one slab (the
	 * target of one block per small pool).
	 *
	 * Who may read slot n (or its inline copy) meanwhile.  The lock-free
	 * readers of slots are lfp_slabs_lookup (owns, a checked put), which
	 * walks every slot below the high_water it loaded with acquire, and
	 * those that hold an index of the slab (pops, puts, the depot's walks,
	 * Concurrent's hot_open after a create; validate, trim and release
	 * run serialized with this or on a quiet pool, and stats read no
	 * slot).  No index of slot n was ever out: shrink lowers high_water
	 * only over slots whose indices no other thread saw.  A slot above
	 * every high_water ever stored is read by nobody: a lookup's acquire
	 * load of high_water pairs with grow's release store of n + 1, which
	 * comes after this clear.  But high_water also goes down:
	 * lfp_slabs_shrink lowers it to n again after a growth of several
	 * slabs that failed at a later one than n, and a lookup
	 * that loaded n + 1 before that may still be reading slot n's mem
	 * (NULL) when the next growth clears it again, with nothing ordering
	 * the two.  So the clear is made of the same
	 * release stores (slot_set) as every other write of a slot's
	 * pointers, which those atomic loads may meet (a memset here was a
	 * data race in C11 terms: TSan, stress scenario lookup-grow).  mark
	 * only lfp_slabs_release reads, serialized with this: a plain store.
	 */
	/* Slot 0, which growth takes after the small slabs, is passed
	 * over: cleared with the first slot above it (all inline slots). */
	for (uint32_t m = s->high_water; m <= n; m++)
		clear_slot(s, m);
	if (side) {
		uint32_t *links = side, per = lfp_slabs_per(s, n);
		uint8_t *state = (uint8_t *)(links + per);
		memset(state, LFP_OBJ_RAW, per);
		if (links != s->inline_side)	/* not the pool's own block */
			lfp_faa_u64_rlx(&s->side_bytes, side_size(s, n));
		SLOT_SET(s, n, state, state);
		SLOT_SET(s, n, links, links);
	}
	return slot;
}

/* Give slot n's side data back and clear the slot's pointers to it; slot
 * 0's in the pool's own block stays there (side_bytes never counted it:
 * bytes_held is what the backing allocator gave). */
static void drop_slot_side(struct lfp_slabs *s, uint32_t n)
{
	struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
	if (slot->links != s->inline_side) {
		side_free(s, n, slot->links);
		if (!slot->side_out)	/* else no longer counted */
			lfp_faa_u64_rlx(&s->side_bytes, (uint64_t)0 - side_size(s, n));
	}
	side_out_set(s, n, false);
	SLOT_SET(s, n, state, NULL);
	SLOT_SET(s, n, links, NULL);
}

/* Widen [small_lo, small_hi) over a small slab at mem of bytes bytes
 * (grow, caller serialized; before the slab is published). */
static void small_widen(struct lfp_slabs *s, uintptr_t mem, size_t bytes)
{
	uint64_t lo = s->small_lo, hi = s->small_hi;
	if (!hi || mem < lo)
		lfp_store_u64_rlx(&s->small_lo, mem);
	if (!hi || mem + bytes > hi)
		lfp_store_u64_rlx(&s->small_hi, mem + bytes);
}

/* The slab number growth takes r-th: the small ones, then 0, then the
 * rest (slab.h, LFP_SMALL_MAX). */
static uint32_t grow_order(const struct lfp_slabs *s, uint32_t r)
{
	return r < s->small ? r + 1 : r == s->small ? 0 : r;
}

int lfp_slabs_grow(struct lfp_slabs *s, uint32_t *first, uint32_t *last)
{
	uint32_t rank = 0, n;
	while ((n = grow_order(s, rank)) < s->high_water && lfp_slabs_slot(s, n)->mem)
		rank++;
	if (n >= s->max_slabs)
		return ENOMEM;
	size_t bytes = lfp_slabs_size(s, n);
	s->misaligned = false;
	/*
	 * A failed call keeps no memory (common.h), so everything a growth
	 * needs is had before anything is published: the slab, the slot's
	 * side data (unless it kept its own: had_side), then the directory
	 * leaf, whose making or move (leaf 0 out of the inline slots at slab
	 * LFP_INLINE_SLOTS) lookups on other threads may see at once, and
	 * which nothing after it can fail.  (Made in the other order, a failed
	 * growth could not give a moved leaf 0 back, which lookups of slots 0
	 * and 1 may be reading, and kept 32 KiB.)
	 */
	bool had_side = n < s->high_water && lfp_slabs_slot(s, n)->links;
	char *mem = backing_alloc(s, bytes, bytes);
	uint32_t *side = NULL;
	if (mem && !had_side)
		side = n == lfp_slabs_first(s) && s->inline_side ? s->inline_side : side_new(s, n);
	if (!mem || (!had_side && !side) || prepare_slot_leaf(s, n) != 0) {
		if (side && side != s->inline_side)
			side_free(s, n, side);
		if (mem)
			backing_free(s, mem, bytes);
		return s->misaligned ? LFP_EMISALIGNED : ENOMEM;
	}
	struct lfp_slab_slot *slot = prepare_slot(s, n, side);
	if (slot->side_out) {	/* its pages given back: counted again */
		side_out_set(s, n, false);
		lfp_faa_u64_rlx(&s->side_bytes, side_size(s, n));
	}
	if (lfp_slabs_small(s, n))
		small_widen(s, (uintptr_t)mem, bytes);
	if (!s->headless) {
		struct lfp_slab_hdr *h = (struct lfp_slab_hdr *)mem;
		h->magic = LFP_SLAB_MAGIC;
		h->owner = s;
		h->slab_no = n;
	}

	/* The chain runs from offset r round to r - 1.  r is 0 but for a
	 * rotating space (magazines), where it moves on with every slab grown
	 * in the process: a pool's first cache takes the first two magazines
	 * of the chain, and with 8 KiB slabs aligned to their size the loaded
	 * magazines of many pools would otherwise all lie at the slab's first
	 * colour offsets, in a few cache sets (see colour). */
	uint32_t base = n << s->off_bits, per = lfp_slabs_per(s, n);
	uint32_t r = s->rotate ? lfp_faa_u32_rlx(&colours_used, 1) % per : 0;
	for (uint32_t i = 0; i + 1 < per; i++)
		lfp_store_u32_rlx(&slot->links[(r + i) % per], base + (r + i + 1) % per);
	lfp_store_u32_rlx(&slot->links[(r + per - 1) % per], LFP_NIL);
	SLOT_SET(s, n, mem, mem);
	/* Release, after the slot's writes: lookups walk the slots below it
	 * (lfp_slabs_lookup's acquire). */
	if (n >= s->high_water)
		lfp_store_u32_rel(&s->high_water, n + 1);
	lfp_faa_u64_rlx(&s->slab_allocs, 1);
	lfp_faa_u64_rlx(&s->slab_mem, bytes);
	*first = base + r;
	*last = base + (r + per - 1) % per;
	return 0;
}

void lfp_slabs_shrink(struct lfp_slabs *s, uint32_t high0, bool side0, bool leaves)
{
	for (uint32_t n = s->high_water; n-- > high0;) {
		if (!leaf_at(s, n >> LFP_LEAF_BITS))
			continue;
		if (lfp_slabs_slot(s, n)->links)
			drop_slot_side(s, n);
	}
	/* Slot 0, grown after the small slabs below high0, got its side
	 * data in this growth: no index of it was ever out. */
	struct lfp_slab_slot *slot0 = lfp_slabs_slot(s, 0);
	if (high0 > 0 && !side0 && slot0->links && !slot0->mem)
		drop_slot_side(s, 0);
	lfp_store_u32_rlx(&s->high_water, high0);
	uint32_t first_free_leaf = (high0 + LFP_LEAF_SLOTS - 1) >> LFP_LEAF_BITS;
	/* The table, if any, stays (its bytes counted) until fini. */
	for (uint32_t l = first_free_leaf; leaves && l < s->leaves; l++) {
		struct lfp_slab_slot *leaf = leaf_at(s, l);
		if (!leaf || leaf == s->slot0)
			continue;
		/* Leaf 0 goes back to the inline slots (their copies are as
		 * current as it was), before the free. */
		leaf_set(s, l, l ? NULL : s->slot0);
		backing_free(s, leaf, sizeof(struct lfp_slab_leaf));
		lfp_faa_u64_rlx(&s->side_bytes, (uint64_t)0 - sizeof(struct lfp_slab_leaf));
	}
}

uint32_t lfp_slabs_release(struct lfp_slabs *s, uint32_t chain)
{
	for (uint32_t i = chain; i != LFP_NIL; i = lfp_load_u32_rlx(lfp_slabs_link(s, i)))
		lfp_slabs_slot(s, i >> s->off_bits)->mark++;

	uint32_t head = LFP_NIL, prev = LFP_NIL;
	for (uint32_t i = chain, next; i != LFP_NIL; i = next) {
		next = lfp_load_u32_rlx(lfp_slabs_link(s, i));
		uint32_t n = i >> s->off_bits;
		struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
		if (slot->mark == lfp_slabs_per(s, n)) {
			char *mem = slot->mem;
			if (mem) {
				/* Unpublish, then free: see lfp_slabs_lookup. */
				SLOT_SET(s, n, mem, NULL);
				backing_free(s, mem, lfp_slabs_size(s, n));
				lfp_faa_u64_rlx(&s->slab_frees, 1);
				lfp_faa_u64_rlx(&s->slab_mem, (uint64_t)0 - lfp_slabs_size(s, n));
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
	/* After the walk, which reads the link words of released slabs. */
	for (uint32_t n = 0; n < s->high_water; n++) {
		if (!leaf_at(s, n >> LFP_LEAF_BITS))
			continue;
		lfp_slabs_slot(s, n)->mark = 0;
		side_give_back(s, n);
	}
	return head;
}

uint64_t lfp_slabs_drop_side(struct lfp_slabs *s)
{
	uint64_t freed = 0;
	for (uint32_t n = 0; n < s->high_water; n++) {
		if (!leaf_at(s, n >> LFP_LEAF_BITS))
			continue;
		struct lfp_slab_slot *slot = lfp_slabs_slot(s, n);
		/* The pool's own block keeps the first slab's inline side data. */
		if (slot->mem || !slot->links || slot->links == s->inline_side)
			continue;
		drop_slot_side(s, n);
		freed += side_size(s, n);
	}
	return freed;
}

void lfp_slabs_compact(struct lfp_slabs *s)
{
	lfp_slabs_drop_side(s);
	uint32_t top = s->high_water;
	while (top > 0 && (!leaf_at(s, (top - 1) >> LFP_LEAF_BITS) ||
			   !lfp_slabs_slot(s, top - 1)->mem))
		top--;
	lfp_slabs_shrink(s, top, true, true);
}

/* The inline slots are current for every small slab (slab.h); the
 * caller owns the object at a, handed out after its slab's mem was
 * stored. */
uintptr_t lfp_slabs_small_base(const struct lfp_slabs *s, uintptr_t a, uintptr_t full)
{
	for (uint32_t n = 1; n <= s->small; n++) {
		uintptr_t mem = (uintptr_t)lfp_load_ptr_rlx((void *const *)&s->slot0[n].mem);
		if (a - mem < lfp_slabs_size(s, n))
			return mem;
	}
	return full;
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
	/* acquire, paired with grow's release store: slots below are cleared */
	uint32_t hw = lfp_load_u32_acq(&s->high_water);
	for (uint32_t n = 0; n < hw; n++) {
		/* acquire, paired with the release stores of prepare_slot (the
		 * leaf) and lfp_slabs_grow (mem, after the slab header) */
		if (!lfp_slabs_leaf(s, n >> LFP_LEAF_BITS))
			continue;
		uintptr_t mem = (uintptr_t)lfp_load_ptr_acq(
			(void *const *)&lfp_slabs_slot(s, n)->mem);
		if (!mem || a < mem || a >= mem + lfp_slabs_size(s, n))
			continue;
		uintptr_t first = mem + s->first_off;
		if (a < first || (a - first) % s->stride ||
		    (a - first) / s->stride >= lfp_slabs_per(s, n))
			return LFP_LOOKUP_INTERIOR;
		*idx = (n << s->off_bits) | (uint32_t)((a - first) / s->stride);
		return LFP_LOOKUP_OK;
	}
	return LFP_LOOKUP_FOREIGN;
}

uint64_t lfp_slabs_bytes(const struct lfp_slabs *s)
{
	return lfp_load_u64_rlx(&s->slab_mem) + lfp_load_u64_rlx(&s->side_bytes);
}
