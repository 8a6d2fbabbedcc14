/* SPDX-License-Identifier: MIT */
/*
 * core.h - what every flavour shares: the validated configuration, slabs,
 * object construction and destruction, and the debug checks.
 *
 * Raw (unconstructed) objects sit on a stack of their own; a flavour takes
 * raw objects from there, constructs them (init hook) and keeps constructed
 * ones on its own free list.  Functions taking `mt` use the _mpmc stack
 * operations and the grow lock when it is true, plain operations otherwise,
 * so the single-threaded Pool runs no atomic instruction and takes no lock.
 *
 * Owners: core.c defines every function declared here; the inlines are
 * here.  The error hook's reports and the graveyard are debug.h's
 * (debug.c), the index space slab.h's (slab.c), the stack stack.h's
 * (stack.c), the flavours' validate census.h's; pool.c and
 * concurrent.c define lfp_pool_name_of and lfp_concurrent_name_of.
 */
#ifndef LFP_CORE_H
#define LFP_CORE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "asan.h"
#include "debug.h"
#include "memcheck.h"
#include "lfpool/common.h"
#include "slab.h"
#include "stack.h"


#define LFP_NAME_MAX 48

#define LFP_MAGIC_LIVE 0x4c495645u	/* "LIVE" */
#define LFP_MAGIC_DEAD 0x44454144u	/* "DEAD" */
#define LFP_MAGIC_CLOSING 0x434c4f53u	/* "CLOS": destroy runs fini hooks */

/* Which pool a core serves: what it may be configured with and its
 * default name (lfp_kind_name). */
enum lfp_kind { LFP_KIND_POOL, LFP_KIND_CONCURRENT, LFP_KIND_TS, LFP_KIND_MAGAZINES };

/*
 * What a pool's create, first get and destroy read come first, the slabs'
 * directory (of which they read leaf[0]) right after them, what they do
 * not read (the name) last: with 10^5 pools alive each
 * line of a pool's struct is a cache miss.
 */
struct lfp_core {
	struct lfp_stack raw;		/* slab memory not yet constructed */
	lfpool_hook_fn init, reset, fini;
	void *hook_ctx;
	size_t capacity;		/* 0: unbounded */
	unsigned flags;
	enum lfp_kind kind;
	bool debug;
	/* Created under Valgrind's memcheck (lfp_core_init): every get and
	 * put takes the slow path, which tells memcheck (core.c, "Memcheck").
	 * In the padding after debug: no field moves. */
	bool vg;
	bool forked_list;	/* on fork.c's registry: set at create, before any
				 * other thread sees the core, cleared by destroy */
	/* Bytes before the pool's struct in its block (0 or 64): a
	 * ThreadStatic pool's head tells its kind by its address (lfpool/ts.h,
	 * LFPOOL_TS_PERCPU_TAG_; lfp_core_owner_new). */
	uint8_t lead;
	/* Bytes after the pool's struct in its block (lfp_core_block_bytes):
	 * in the padding before fork_next, so no field after it moves. */
	uint32_t tail;
	struct lfp_core *fork_next, **fork_pprev;	/* fork.c's registry, under its lock */
	uint64_t trims;
	/* mt only (not a Pool's): slab growth and release.  Before the
	 * slabs: a first get takes it, and after the directory it was a line
	 * of its own, cold with 10^5 pools alive (one per core: a ThreadStatic
	 * pool's first touch takes its objects' and its magazines'). */
	pthread_mutex_t grow_lock;
	struct lfp_slabs slabs;
	char name[LFP_NAME_MAX];
};
/* tail took padding only: fork_next is where it would be without it. */
_Static_assert(offsetof(struct lfp_core, fork_next) ==
	       ((offsetof(struct lfp_core, forked_list) + sizeof(bool) + _Alignof(void *) - 1) &
		~(_Alignof(void *) - 1)), "the core's fields after tail stay where they were");

/* The bytes of the block of a pool whose struct (of size bytes) holds c:
 * c->lead bytes, the struct, then c->tail bytes (lfp_core_owner_new). */
static inline size_t lfp_core_block_bytes(const struct lfp_core *c, size_t size)
{
	return c->lead + size + c->tail;
}

/* The start of the block of the pool at owner whose struct holds c. */
static inline void *lfp_core_block_of(const struct lfp_core *c, void *owner)
{
	return (char *)owner - c->lead;
}

/*
 * Ask for the lines of bytes at p (for writing) before a rare step (a
 * create of objects, a destroy) reads and writes them.  With 10^5 pools
 * alive each line of a pool's struct is a cache miss, and the locks the
 * step takes (the small blocks', the grow lock, the registry's) are full
 * barriers on x86-64: misses on either side of one wait for each other;
 * asked for at once, they overlap.
 */
__attribute__((always_inline)) static inline void lfp_prefetch_lines(const void *p, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += 64)
		__builtin_prefetch((const char *)p + off, 1, 3);
}
/* The bytes of a pool of type t whose core is member m, from its start
 * up to and including its slabs' directory (leaf0, dir): what its first
 * get and its destroy read of it. */
#define LFP_HOT_BYTES(t, m) (offsetof(t, m.slabs.dir) + sizeof(void *))
/*
 * Before a pool's rare step that reads its block (a first get): ask for
 * its first hot bytes (LFP_HOT_BYTES) and for the tail after its struct
 * (of size bytes), c being its core.  Always inline: GCC takes a function
 * that only prefetches for one without effect (const) and, when it does
 * not inline it early, deletes the call with its prefetches.
 */
__attribute__((always_inline)) static inline void
lfp_core_prefetch_block(const struct lfp_core *c, const void *pool, size_t hot, size_t size)
{
	lfp_prefetch_lines(pool, hot);
	lfp_prefetch_lines((const char *)pool + size, c->tail);
}

/* Validate cfg and set up c; 0 or EINVAL (said why: lfp_debug_refuse). */
int lfp_core_init(struct lfp_core *c, const lfpool_config *cfg, enum lfp_kind kind);
/* Free all slabs; constructed objects must have been finalized first. */
void lfp_core_fini(struct lfp_core *c);

/*
 * Take n raw objects as a private chain, growing slabs as needed.  All or
 * nothing: on failure returns ENOMEM and the pool is as it was.
 */
int lfp_core_take_raw(struct lfp_core *c, bool mt, size_t n, uint32_t *chain);
/*
 * Create n objects as a private chain, in debug state `state`: reserve them
 * in *created (at most capacity), take raw memory, run init.  0, or ENOBUFS
 * (at capacity) / ENOMEM with *created and the pool as they were.
 */
/* lfp_core_create without the init hooks: the raw chain, to construct
 * with lfp_core_construct_chain (ThreadStatic: outside a grace section). */
int lfp_core_create_raw(struct lfp_core *c, uint64_t *created, bool mt, size_t n, uint32_t *chain);
int lfp_core_create(struct lfp_core *c, uint64_t *created, bool mt, size_t n, uint8_t state,
		    uint32_t *chain);
/* The most objects c's index space holds. */
uint64_t lfp_core_max_objects(const struct lfp_core *c);
/* The core whose init hook the calling thread runs, if any: a get that
 * would create an object of that same pool fails with EDEADLK instead of
 * recursing without end. */
extern __thread const struct lfp_core *lfp_init_running;
/* The core whose fini hook the calling thread runs, if any: a trim may be
 * running that hook, holding what it finalizes and (ThreadStatic) its
 * steal lock, so a get of that same pool at capacity must not wait for
 * trims to end (Concurrent) nor steal (ThreadStatic): it fails with
 * ENOBUFS; a ThreadStatic trim or drain from there does nothing. */
extern __thread const struct lfp_core *lfp_fini_running;
/* Run init on every object of a private chain (and mark them pooled). */
void lfp_core_construct_chain(struct lfp_core *c, uint32_t chain, uint8_t state);
/* Run fini on every object of a private chain (LFP_NIL: none), return them
 * to raw and give back every slab that is now wholly raw. */
void lfp_core_destroy_chain(struct lfp_core *c, bool mt, uint32_t chain);
/* The same, but the slabs stay, even one now wholly raw: the objects go
 * onto the raw stack for the next take_raw, and only a later
 * lfp_core_destroy_chain (a trim) or the pool's fini gives the slabs back.
 * For memory that comes and goes with threads (magazines), so that one
 * thread's exit and the next thread's first get do not free and map a
 * slab each. */
void lfp_core_keep_chain(struct lfp_core *c, bool mt, uint32_t chain);

/* Debug checks for a put of obj: 0 with *idx set, or -1 once reported. */
int lfp_core_check_put(struct lfp_core *c, const void *obj, uint32_t *idx);
/*
 * The one lifecycle step of every put that is not a plain push: the debug
 * checks (debug pools), the reset hook, poisoning.  Returns obj's index, or
 * LFP_NIL when obj must not be pooled (reported).
 */
uint32_t lfp_core_accept_put(struct lfp_core *c, void *obj);
/* The same for a caller that keeps pointers, not indices: whether obj may
 * be pooled; its index is not computed outside the debug checks (a
 * lookup per object of ThreadStatic's bulk puts). */
bool lfp_core_accept(struct lfp_core *c, void *obj);
/*
 * Accept each non-NULL object of objs[0 .. n) (lfp_core_accept) and
 * hand the accepted ones to push in blocks, in order: the bulk puts of the
 * caches and of the per-CPU areas.
 */
void lfp_core_accept_bulk(struct lfp_core *c, void *const *objs, size_t n,
			  void (*push)(void *ctx, void *const *objs, size_t n), void *ctx);
/*
 * The block of a pool of config cfg (may be NULL), for lfp_core_owner_new
 * (below): lead bytes (0 or 64), its own struct of size bytes, and tail
 * bytes after it (not cleared: the pool's inline side data and arrays,
 * below); the struct's address, NULL when out of memory.  A block of a
 * multiple of 128 bytes is aligned to 128, so that the struct's address
 * has bit 6 equal to lead's (the others: to 64).  lfp_owner_alloc's cache
 * (slab.h), but for debug pools, which the graveyard keeps and frees with
 * free() (posix_memalign).  The struct is zeroed.
 */
void *lfp_core_owner_alloc(const lfpool_config *cfg, size_t lead, size_t size, size_t tail);
/*
 * One block per small pool (one allocation, fewer cache misses with many
 * pools alive): the bytes a pool of config cfg
 * leaves after its struct for its core's first side data (slab.h,
 * lfp_slabs_inline_bytes), 0 when it takes none (lfp_core_block_inline,
 * below).  lfp_core_inline hands them to the core after
 * lfp_core_owner_new, and returns how many it took (lfp_slabs_inline).
 */
size_t lfp_core_inline_bytes(const lfpool_config *cfg);
size_t lfp_core_inline(struct lfp_core *c, void *mem, size_t bytes);
/* Free a pool's block (lfp_core_block_of) of size bytes
 * (lfp_core_block_bytes), given whether the pool is a debug one. */
void lfp_core_owner_free(void *owner, size_t size, bool debug);
/*
 * The end of every destroy: in debug pools report `out` objects still out
 * with users (the error hook), free c's slabs, mark the pool dead (*magic)
 * and free it, or bury it (debug pools stay readable, so that a call after
 * destroy is reported).  pool is the pool (from lfp_core_owner_new; its
 * block, lfp_core_block_of, of size bytes: lfp_core_block_bytes), c
 * inside it.
 */
void lfp_core_retire(struct lfp_core *c, void *pool, size_t size, uint32_t *magic, uint64_t out);
/* The same for a layer over a pool (array, rc, closure): what it calls
 * `out` is named by what (e.g. "oversize buffers"). */
void lfp_retire(void *owner, uint32_t *magic, bool debug, const char *name, uint64_t out,
		const char *what);
/* The same, burying c with owner (lfp_debug_bury); owner of size bytes,
 * from lfp_core_owner_new (lfp_core_block_bytes). */
void lfp_retire_core(void *owner, size_t size, uint32_t *magic, struct lfp_core *c, uint64_t out,
		     const char *what);
/*
 * Slow pools (lfp_core_slow): mark idx handed out.  Under memcheck the
 * object becomes a block as malloc's; else in debug pools, under ASan the
 * object is unpoisoned; without it, a pool with no init hook has its
 * pattern verified ("write after put") and a pool with one has the object
 * made anew (fini, then init).
 */
void lfp_core_mark_out(struct lfp_core *c, uint32_t idx);
/* Slow pools: poison an object that was out and is pooled now (after its
 * reset hook ran): memcheck frees its block; debug pools poison it. */
void lfp_core_poison(struct lfp_core *c, void *obj);
/* An object created out for a get that then failed, about to be
 * destroyed without a put: memcheck forgets its block. */
void lfp_core_unhand(struct lfp_core *c, void *obj);
/* Run fini on a pooled object (unpoisoning it first in slow pools). */
void lfp_core_fini_obj(struct lfp_core *c, void *obj);

/* Whether ptr is the start of one of c's objects. */
int lfp_core_owns(const struct lfp_core *c, const void *ptr);
/* Count a trim that destroyed n objects (n may be 0) out of *created. */
void lfp_core_count_trim(struct lfp_core *c, uint64_t *created, size_t n);

/* fork.c: the pthread_atfork handlers of the floors up to core.  Install
 * them (once per process): before any pool exists, since even a Pool
 * takes locks they cover (debug.c's, slab.c's small blocks); and before a
 * layer above installs its own (fork.c says why the order matters). */
void lfp_fork_init(void);
/* Take part in fork safety: c's grow lock is held across fork(). */
void lfp_fork_register(struct lfp_core *c);
void lfp_fork_unregister(struct lfp_core *c);
/*
 * The steps a thread has open on a pool (a Concurrent trim, a per-CPU
 * slow path), innermost last: a hook run inside one may open another.
 * fork()'s child resets what vanished threads left open but keeps the
 * forking thread's own, which a hook may have forked from and which go on
 * in the child (lfp_open_count).  Each user keeps one per thread.
 */
#define LFP_OPEN_MAX 8
struct lfp_open {
	const void *what[LFP_OPEN_MAX];
	unsigned depth;
};
static inline void lfp_open_push(struct lfp_open *o, const void *what)
{
	if (o->depth < LFP_OPEN_MAX)
		o->what[o->depth] = what;
	o->depth++;
}
static inline void lfp_open_pop(struct lfp_open *o)
{
	o->depth--;
}
/* How many of o's steps are on what: true, or false when they are too
 * deeply nested to tell (then *n is not set). */
static inline bool lfp_open_count(const struct lfp_open *o, const void *what, uint32_t *n)
{
	if (o->depth > LFP_OPEN_MAX)
		return false;
	*n = 0;
	for (unsigned i = 0; i < o->depth; i++)
		*n += o->what[i] == what;
	return true;
}

/* The registered core after c (NULL: the first), or NULL: for the child
 * handler of a layer above (concurrent.c), where only the forking thread
 * runs and nothing changes the list. */
struct lfp_core *lfp_fork_next_child(const struct lfp_core *c);

/* Fill the slab-level fields of st. */
void lfp_core_stats(const struct lfp_core *c, lfpool_stats *st);
/* Print the state of c's pool, whose statistics are st, to out (every
 * flavour's dump: lfpool/common.h); 0, or -1 with errno EIO. */
int lfp_core_dump(const struct lfp_core *c, const lfpool_stats *st, FILE *out);

/*
 * Whether the pool (or layer) whose magic is *magic is destroyed (or being
 * destroyed): then the call (problem, e.g. "get after destroy") is
 * reported under the pool's name, errno is EINVAL, and true.  Debug pools
 * stay readable after destroy; on others a call after destroy is
 * undefined.  Every flavour's and layer's destroy of a destroyed pool too.
 */
bool lfp_dead(const char *name, const uint32_t *magic, const void *ptr, const char *problem);
static inline bool lfp_core_dead(const struct lfp_core *c, const uint32_t *magic,
				 const void *ptr, const char *problem)
{
	return lfp_dead(c->name, magic, ptr, problem);
}

/* An object's size and stride (lfpool/common.h, struct lfpool_span_). */
static inline struct lfpool_span_ lfp_core_span(const struct lfp_core *c)
{
	struct lfpool_span_ s = { c->slabs.obj_size, c->slabs.stride };
	return s;
}

/* c's name when its owner's *magic and c say it is a live pool (or one
 * being destroyed) of kind k, else NULL. */
static inline const char *lfp_core_name_if(const uint32_t *magic, const struct lfp_core *c,
					   enum lfp_kind k)
{
	bool alive = *magic == LFP_MAGIC_LIVE || *magic == LFP_MAGIC_CLOSING;
	return alive && c->kind == k ? c->name : NULL;
}

/* The name of the Pool (Concurrent pool) at ptr, or NULL when ptr is no
 * such pool: what a call of another flavour given ptr reports (pool.c,
 * concurrent.c). */
const char *lfp_pool_name_of(const void *ptr);
const char *lfp_concurrent_name_of(const void *ptr);

/*
 * Whether n bytes at p may be read without an ASan report: false when they
 * are poisoned (a pooled object of a debug pool, a redzone).  Always true
 * without ASan, where it costs nothing: for checks that look before they
 * read on paths that release builds run too.
 */
static inline bool lfp_core_readable(const void *p, size_t n)
{
#ifdef LFP_ASAN
	return __asan_region_is_poisoned((void *)p, n) == NULL;
#else
	(void)p;
	(void)n;
	return true;
#endif
}

/* Whether every get and put of c takes the flavour's slow path, its inline
 * paths shut as in debug pools: the debug checks, or memcheck's client
 * requests (core.c, "Memcheck"), run there and nowhere else. */
static inline bool lfp_core_slow(const struct lfp_core *c)
{
	return c->debug || c->vg;
}

/* Whether c's puts need neither the debug checks, memcheck, nor the reset
 * hook: the lean put paths of Pool and Concurrent (their inline puts get
 * no room otherwise). */
static inline bool lfp_core_puts_lean(const struct lfp_core *c)
{
	return !lfp_core_slow(c) && !c->reset;
}

/* Whether a pool created with these flags runs the debug checks
 * (--enable-debug, and LFPOOL_DEBUG=1 in the environment, turn them on
 * for every pool). */
static inline bool lfp_debug_wanted(unsigned flags)
{
#ifdef LFPOOL_DEBUG
	(void)flags;
	return true;
#else
	return (flags & LFPOOL_F_DEBUG) || lfp_env()->debug;
#endif
}

/*
 * Whether a pool of config cfg keeps side data and arrays in its own
 * block, after its struct (lfp_core_inline_bytes): not debug pools, whose
 * struct the graveyard keeps, nor pools of a user's allocator, which gets
 * every block.  Inline: Pool's create asks it too, for its items array.
 */
static inline bool lfp_core_block_inline(const lfpool_config *cfg)
{
	return cfg && !cfg->allocator && !lfp_debug_wanted(cfg->flags);
}

/*
 * A new pool of config cfg (may be NULL: EINVAL): its block
 * (lfp_core_owner_alloc, lead bytes before the struct) with the core at
 * offset core_off set up (lfp_core_init, kind) and knowing the block's
 * start and size (lfp_core_block_of, lfp_core_block_bytes).  NULL with
 * errno (ENOMEM, or lfp_core_init's) and nothing kept.  Inline: each create calls it once, and a call of its
 * own cost a create 2 to 10 more instructions (callgrind).
 */
static inline void *lfp_core_owner_new(const lfpool_config *cfg, enum lfp_kind kind, size_t size,
				       size_t core_off, size_t lead, size_t tail)
{
	char *p = lfp_core_owner_alloc(cfg, lead, size, tail);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	struct lfp_core *c = (struct lfp_core *)(p + core_off);
	int err = lfp_core_init(c, cfg, kind);
	if (err) {
		lfp_core_owner_free(p - lead, lead + size + tail,
				    lfp_debug_wanted(cfg ? cfg->flags : 0));
		errno = err;
		return NULL;
	}
	c->tail = (uint32_t)tail;	/* after lfp_core_init, which clears them */
	c->lead = (uint8_t)lead;
	return p;
}

/*
 * Reserve n objects in *created, which may grow to capacity (0: unbounded)
 * and never past most (what the index space holds): 0, ENOBUFS (over the
 * capacity) or ENOMEM (more than the pool can ever hold).  The sums are
 * checked: a huge n never wraps.
 */
static inline int lfp_reserve(uint64_t *created, size_t capacity, uint64_t most, size_t n,
			      bool mt)
{
	uint64_t cur = mt ? lfp_load_u64_rlx(created) : *created;
	do {
		if (capacity && (n > capacity || cur > capacity - n))
			return ENOBUFS;
		if (n > most || cur > most - n)
			return ENOMEM;
		if (!mt) {
			*created = cur + n;
			return 0;
		}
	} while (!lfp_cas_u64_rlx(created, &cur, cur + n));
	return 0;
}

#endif
