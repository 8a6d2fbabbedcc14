/* SPDX-License-Identifier: MIT */
/*
 * array.c - array pools: one pool of the chosen flavour per size class, a
 * prefix in front of every buffer, and the oversize path.
 *
 * A class's objects are prefix + class size bytes; the caller's buffer
 * starts after the prefix, whose last 16 bytes are the lfpool_array_hdr.
 * Release pools write that header once, in the class's init hook, so a get
 * writes nothing.  Debug pools have no init hook (their pooled objects then
 * carry the flavour's write-after-put pattern, or ASan poison, prefix
 * included) and write the header on every get instead.
 *
 * ThreadStatic classes are served inline through the calling thread's
 * table of class caches (lfpool_array_tls_, lfpool/array.h, defined in
 * threadstatic/tls.c): the slow paths here enter the thread's implicit
 * cache of a class (tls.c's, the one lfpool_ts_get uses) under the pool's
 * key, and tls.c's thread exit clears the table before it frees those
 * caches.  Keys hold an id from a process-wide counter, never reused, so
 * a destroy need not visit other threads' tables: their entries of the
 * destroyed pool name a key that no pool has any more.  The exception is a
 * thread's array home (lfpool/array.h): a class's cache there is named by
 * the array pool's address, and tls.c clears those entries of that
 * thread when the class's destroy frees the home.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "flavour_internal.h"
#include "census.h"
#include "threadstatic/ts_internal.h"
#include "lfpool/array.h"

#define LFP_ARRAY_MAGIC 0x41525259u	/* "ARRY" */
#define LFP_ARRAY_OVERSIZE 64u		/* hdr.slot of an oversize buffer */
#define LFP_ARRAY_MAX_ALIGN 4096u
#define LFP_ARRAY_MIN_CLASS 16u		/* smaller classes cost as much memory */
#define LFP_ARRAY_DEFAULT_MAX ((size_t)1 << 20)

/* One size class: its pool and what its hooks need. */
struct lfp_array_class {
	struct lfp_flavour pool;
	size_t size;
	size_t prefix;
	uint8_t slot;
};

struct lfpool_array {
	struct lfpool_array_fast fast;	/* first: read by the inline paths */
	uint32_t magic;
	bool debug, clear;
	unsigned min_slot, max_slot;
	size_t align;			/* of the objects: the prefix size */
	lfpool_allocator alloc;		/* for oversize buffers */
	uint64_t oversize_gets, oversize_out;
	uint32_t oversize_tag;		/* see tag_of */
	char name[LFP_NAME_MAX];
	struct lfp_array_class cls[LFP_ARRAY_OVERSIZE];	/* by slot */
};
/* The inline calls of lfpool/array.h read the array pool as its fast view. */
_Static_assert(offsetof(struct lfpool_array, fast) == 0, "fast view first");

/* The last id given to a pool; ids start at 1 (key 0: an empty entry).
 * Keys are id << 1 | 1, and a destroyed pool's key 1 (id 0) is in no
 * table; the entries of a thread's array home hold its pool's address
 * instead, even (calloc's alignment), so no key is an address. */
static uint64_t last_id;
#define ARRAY_KEY_DEAD 1u

/* Whether n is a power of two (0 is not). */
static bool is_pow2(size_t n) { return n && !(n & (n - 1)); }

/* The header in the last 16 bytes of buf's prefix. */
static struct lfpool_array_hdr *hdr_of(void *buf)
{
	return (struct lfpool_array_hdr *)buf - 1;
}

/* Name buf's class (or LFP_ARRAY_OVERSIZE) and usable size in its header. */
static void write_hdr(void *buf, unsigned slot, size_t size)
{
	struct lfpool_array_hdr *h = hdr_of(buf);
	h->size = size;
	h->magic = LFP_ARRAY_MAGIC;
	h->slot = (uint8_t)slot;
}

/* An oversize buffer's prefix names its pool in its 24 pad bits: the low
 * bits of the pool's id, so that a put to another array pool (debug
 * pools, and release pools where the put reads the prefix) is reported
 * instead of freeing the buffer with that pool's alignment and allocator. */
#define ARRAY_TAG_MASK 0xffffffu
static uint32_t tag_of(const struct lfpool_array_hdr *h)
{
	return (uint32_t)h->pad[0] | (uint32_t)h->pad[1] << 8 | (uint32_t)h->pad[2] << 16;
}

static void set_tag(struct lfpool_array_hdr *h, uint32_t tag)
{
	h->pad[0] = (uint8_t)tag;
	h->pad[1] = (uint8_t)(tag >> 8);
	h->pad[2] = (uint8_t)(tag >> 16);
}

/* Class init hook (release pools): the header, once per object. */
static void class_init(void *obj, void *ctx)
{
	const struct lfp_array_class *c = ctx;
	write_hdr((char *)obj + c->prefix, c->slot, c->size);
}

/* Class reset hook (LFPOOL_ARRAY_F_CLEAR): clear the caller's bytes. */
static void class_clear(void *obj, void *ctx)
{
	const struct lfp_array_class *c = ctx;
	memset((char *)obj + c->prefix, 0, c->size);
}

/* Add d to an oversize counter: atomically when threads share the pool. */
static void count(const lfpool_array *ap, uint64_t *counter, int64_t d)
{
	if (lfp_flavour_mt(&ap->cls[ap->min_slot].pool))
		lfp_faa_u64_rlx(counter, (uint64_t)d);
	else
		*counter += (uint64_t)d;
}

/* Why cfg's sizes and align are refused (the sentence into why), or NULL. */
static const char *refused_sizes(size_t min, size_t max, size_t align, char *why, size_t n)
{
	if (!is_pow2(min) || !is_pow2(max))
		snprintf(why, n, "%s %zu is not a power of two", is_pow2(min) ? "max_size" : "min_size",
			 is_pow2(min) ? max : min);
	else if (min < LFP_ARRAY_MIN_CLASS)
		snprintf(why, n, "min_size %zu is less than %u", min, LFP_ARRAY_MIN_CLASS);
	else if (min > max)
		snprintf(why, n, "min_size %zu is more than max_size %zu", min, max);
	else if (max > LFPOOL_ARRAY_MAX_CLASS)
		snprintf(why, n, "max_size %zu is more than %zu", max, (size_t)LFPOOL_ARRAY_MAX_CLASS);
	else if (!is_pow2(align))
		snprintf(why, n, "align %zu is not a power of two", align);
	else if (align > LFP_ARRAY_MAX_ALIGN)
		snprintf(why, n, "align %zu is more than %u", align, LFP_ARRAY_MAX_ALIGN);
	else
		return NULL;
	return why;
}

/* Validate flavour and cfg and resolve cfg's defaults; 0 or EINVAL (said
 * why: lfp_debug_refuse). */
static int check_config(lfpool_flavour flavour, const lfpool_array_config *cfg, size_t *min,
			size_t *max, size_t *align)
{
	const char *name = cfg && cfg->name ? cfg->name : "array";
	char why[128];
	if (flavour < LFPOOL_FLAVOUR_POOL || flavour > LFPOOL_FLAVOUR_TS)
		return lfp_debug_refuse(name, "flavour %d is no lfpool_flavour", (int)flavour);
	if (!cfg)
		return lfp_debug_refuse(name, "no configuration (NULL)");
	*min = cfg->min_size ? cfg->min_size : LFP_ARRAY_MIN_CLASS;
	*max = cfg->max_size ? cfg->max_size : LFP_ARRAY_DEFAULT_MAX;
	*align = cfg->align ? cfg->align : 16;
	if (refused_sizes(*min, *max, *align, why, sizeof(why)))
		return lfp_debug_refuse(name, "%s", why);
	unsigned flags = LFPOOL_F_DEBUG | LFPOOL_ARRAY_F_CLEAR;
	if (cfg->flags & ~flags)
		return lfp_debug_refuse(name, "flags 0x%x has bits that are no array pool flag (0x%x)",
					cfg->flags, cfg->flags & ~flags);
	if (cfg->allocator && (!cfg->allocator->alloc || !cfg->allocator->free))
		return lfp_debug_refuse(name, "allocator has no %s function",
					cfg->allocator->alloc ? "free" : "alloc");
	return 0;
}

/* Create the pool of the class of 2^slot bytes; 0 or errno. */
static int create_class(lfpool_array *ap, lfpool_flavour flavour, const lfpool_array_config *cfg,
			unsigned slot)
{
	struct lfp_array_class *c = &ap->cls[slot];
	c->size = (size_t)1 << slot;
	c->prefix = ap->align;
	c->slot = (uint8_t)slot;
	char name[LFP_NAME_MAX + 24];	/* the pool keeps LFP_NAME_MAX - 1 */
	snprintf(name, sizeof(name), "%s[%zu]", ap->name, c->size);
	lfpool_config pc = {
		.obj_size = ap->align + c->size,
		.align = ap->align,
		.capacity = cfg->capacity,
		.init = ap->debug ? NULL : class_init,
		.reset = ap->clear ? class_clear : NULL,
		.hook_ctx = c,
		.allocator = cfg->allocator,
		.flags = ap->debug ? LFPOOL_F_DEBUG : 0,
		.name = name,
		.magazine_size = cfg->magazine_size,
		.depot_max = cfg->depot_max,
	};
	int err = lfp_flavour_create(&c->pool, flavour, &pc);
	if (!err)
		lfp_debug_forget(c->pool.pool);	/* the array pool's dump shows it */
	/* Release ThreadStatic classes with the home's prefix: a thread's
	 * first cache of one takes its array home (tls.c), which the inline
	 * paths run at a constant address (tls_enter names the pool there by
	 * address).  Debug pools never read the table. */
	if (!err && flavour == LFPOOL_FLAVOUR_TS && !ap->debug &&
	    ap->align == LFPOOL_ARRAY_HOME_PREFIX_)
		((lfpool_ts *)c->pool.pool)->array_class = true;
	return err;
}

/* The slot table of the inline paths.  ThreadStatic classes get no pool
 * there (the thread tables serve them), nor do debug pools, so that every
 * call of theirs takes the checked slow path. */
static void fill_slots(lfpool_array *ap, lfpool_flavour flavour)
{
	bool direct = !ap->debug && flavour != LFPOOL_FLAVOUR_TS;
	for (unsigned k = 1; k <= ap->max_slot; k++) {
		unsigned slot = k < ap->min_slot ? ap->min_slot : k;
		ap->fast.slot[k].size = ap->cls[slot].size;
		ap->fast.slot[k].pool = direct ? ap->cls[slot].pool.pool : NULL;
	}
	uint64_t id = lfp_faa_u64_rlx(&last_id, 1) + 1;
	ap->fast.key = id << 1 | 1;
	ap->oversize_tag = (uint32_t)id & ARRAY_TAG_MASK;
	ap->fast.prefix = ap->align;
	ap->fast.flavour = flavour;
	ap->fast.inline_put = !ap->debug;
}

/* Destroy the class pools created so far. */
static void destroy_classes(lfpool_array *ap)
{
	for (unsigned k = ap->min_slot; k <= ap->max_slot; k++)
		if (ap->cls[k].pool.pool)
			lfp_flavour_destroy(&ap->cls[k].pool);
}

/* LFPOOL_SHOW_STATS (debug.h, lfp_debug_watch). */
static void show(const void *ap, FILE *out);
LFP_DEBUG_WATCHER(LFP_WATCH_ARRAY)

LFPOOL_API lfpool_array *lfpool_array_create(lfpool_flavour flavour,
					     const lfpool_array_config *cfg)
{
	size_t min = 0, max = 0, align = 0;	/* set unless refused */
	int err = check_config(flavour, cfg, &min, &max, &align);
	if (err) {
		errno = err;
		return NULL;
	}
	lfpool_array *ap = calloc(1, sizeof(*ap));
	if (!ap) {
		errno = ENOMEM;
		return NULL;
	}
	ap->debug = lfp_debug_wanted(cfg->flags);
	ap->clear = cfg->flags & LFPOOL_ARRAY_F_CLEAR;
	ap->min_slot = lfpool_array_slot_of(min);
	ap->max_slot = lfpool_array_slot_of(max);
	ap->align = align < 16 ? 16 : align;
	ap->alloc = cfg->allocator ? *cfg->allocator : lfp_plain_allocator;
	snprintf(ap->name, sizeof(ap->name), "%s", cfg->name ? cfg->name : "array");
	for (unsigned k = ap->min_slot; k <= ap->max_slot && !err; k++)
		err = create_class(ap, flavour, cfg, k);
	if (err) {
		destroy_classes(ap);
		free(ap);
		errno = err;
		return NULL;
	}
	fill_slots(ap, flavour);
	ap->magic = LFP_MAGIC_LIVE;
	watch(ap);
	return ap;
}

LFPOOL_API int lfpool_array_destroy(lfpool_array *ap)
{
	if (!ap)
		return 0;
	if (lfp_dead(ap->name, &ap->magic, ap, "destroy of an array pool already destroyed"))
		return -1;
	lfp_debug_unwatch(ap, show);
	destroy_classes(ap);
	memset(&ap->fast, 0, sizeof(ap->fast));
	/* A debug pool stays readable, and its later calls must miss every
	 * thread table, whose empty entries hold key 0: id 0, in no table. */
	ap->fast.key = ARRAY_KEY_DEAD;
	lfp_retire(ap, &ap->magic, ap->debug, ap->name, ap->oversize_out, "oversize buffers");
	return 0;
}

/*
 * Enter the calling thread's implicit cache of the class of slot in its
 * table, at every index whose sizes that class serves (below min_slot, the
 * smallest class serves them all), so that the thread's next gets and puts
 * of them are inline.  Release ThreadStatic pools only; nothing on ENOMEM
 * (the call goes on through the flavour, which reports it).
 */
static void tls_enter(const lfpool_array *ap, unsigned slot)
{
	if (ap->fast.flavour != LFPOOL_FLAVOUR_TS || ap->debug || slot < ap->min_slot)
		return;
	lfpool_ts_cache *c = lfp_tls_cache(ap->cls[slot].pool.pool);
	if (!c)
		return;
	uint64_t key = c == LFPOOL_ARRAY_HOME_ ? (uint64_t)(uintptr_t)ap : ap->fast.key;
	for (unsigned k = slot == ap->min_slot ? 1 : slot; k <= slot; k++) {
		lfpool_array_tls_.cache[k - 1] = c;
		lfp_store_u64_rlx(&lfpool_array_tls_.key[k - 1], key);
	}
}

/* A buffer of n bytes above the largest class, from the backing allocator,
 * whose block is checked for alignment as the classes' slabs are (given
 * back, ENOMEM: lfpool/common.h). */
static void *oversize_get(lfpool_array *ap, size_t n, size_t *real)
{
	if (n > SIZE_MAX - ap->align) {
		errno = ENOMEM;
		return NULL;
	}
	bool misaligned = false;
	char *mem = lfp_alloc_aligned(&ap->alloc, ap->align + n, ap->align, &misaligned);
	if (!mem) {
		if (misaligned && ap->debug)
			lfp_debug_report(ap->name, NULL, "the backing allocator returned memory "
					 "not aligned as asked for an oversize buffer (given back; ENOMEM)");
		errno = ENOMEM;
		return NULL;
	}
	count(ap, &ap->oversize_gets, 1);
	count(ap, &ap->oversize_out, 1);
	write_hdr(mem + ap->align, LFP_ARRAY_OVERSIZE, n);
	set_tag(hdr_of(mem + ap->align), ap->oversize_tag);
	if (real)
		*real = n;
	return mem + ap->align;
}

/* Free an oversize buffer of n bytes. */
/* The prefix's magic is cleared first: the allocator need not write over
 * a freed block, and a second put of it must see a stranger (debug pools
 * report it; release pools read the prefix on this path too). */
static void oversize_put(lfpool_array *ap, void *buf, size_t n)
{
	count(ap, &ap->oversize_out, -1);
	hdr_of(buf)->magic = 0;
	ap->alloc.free((char *)buf - ap->align, ap->align + n, ap->alloc.ctx);
}

LFPOOL_API void *lfpool_array_get_slow(lfpool_array *ap, unsigned slot, size_t n, size_t *real)
{
	if (lfp_dead(ap->name, &ap->magic, ap, "get from an array pool after destroy"))
		return NULL;
	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (slot > ap->max_slot)
		return oversize_get(ap, n, real);
	if (slot < ap->min_slot)
		slot = ap->min_slot;
	tls_enter(ap, slot);
	struct lfp_array_class *c = &ap->cls[slot];
	char *obj = lfp_flavour_get(&c->pool);
	if (!obj)
		return NULL;
	char *buf = obj + ap->align;
	if (ap->debug) {
		write_hdr(buf, slot, c->size);
		/* Without ASan a pooled buffer holds the debug pattern. */
		if (ap->clear)
			memset(buf, 0, c->size);
	}
	if (real)
		*real = c->size;
	return buf;
}

/* The class slot a size is put with. */
static unsigned class_slot(const lfpool_array *ap, size_t n)
{
	unsigned k = lfpool_array_slot_of(n);
	return k < ap->min_slot ? ap->min_slot : k;
}

/* Put buf into the pool of its class (the flavour checks debug puts). */
static void class_put(lfpool_array *ap, unsigned slot, void *buf)
{
	lfp_flavour_put(&ap->cls[slot].pool, (char *)buf - ap->align);
}

/* The class whose pool holds buf's object, or LFP_ARRAY_OVERSIZE: asks the
 * pools, reading nothing of buf (it may be poisoned or foreign). */
static unsigned owner_slot(const lfpool_array *ap, const void *buf)
{
	for (unsigned k = ap->min_slot; k <= ap->max_slot; k++)
		if (lfp_flavour_owns(&ap->cls[k].pool, (const char *)buf - ap->align))
			return k;
	return LFP_ARRAY_OVERSIZE;
}

/*
 * A put that would free buf as an oversize buffer of n bytes (n == 0: as
 * its header says), in release pools and in debug ones (put_checked).  The
 * header is read first, which costs nothing here (the slow path), so that
 * a pooled buffer put with an oversize n, an oversize buffer of another
 * array pool, or one put with another size, is reported instead of
 * reaching the allocator's free.
 */
static void oversize_put_checked(lfpool_array *ap, void *buf, size_t n)
{
	const struct lfpool_array_hdr *h = hdr_of(buf);
	if (h->magic != LFP_ARRAY_MAGIC || h->slot != LFP_ARRAY_OVERSIZE) {
		lfp_debug_report(ap->name, buf, "sized put with an oversize size of a buffer that "
			   "is not oversize (a pooled buffer, or a stranger)");
		return;
	}
	if (tag_of(h) != ap->oversize_tag) {
		lfp_debug_report(ap->name, buf, "put of an oversize buffer of another array pool");
		return;
	}
	if (n && n != h->size) {
		lfp_debug_report(ap->name, buf, "sized put of an oversize buffer with another size");
		return;
	}
	oversize_put(ap, buf, h->size);
}

/* Debug put: check the prefix (and n, when given) before the flavour's
 * checked put, which finds double puts, foreign and interior pointers. */
static void put_checked(lfpool_array *ap, void *buf, size_t n)
{
	const struct lfpool_array_hdr *h = hdr_of(buf);
	if (!lfp_core_readable(h, sizeof(*h)) || h->magic != LFP_ARRAY_MAGIC) {
		/* A pooled buffer (poisoned, or the pattern) or a stranger. */
		unsigned slot = owner_slot(ap, buf);
		if (slot == LFP_ARRAY_OVERSIZE)
			lfp_debug_report(ap->name, buf, "pointer not from this array pool "
				   "(foreign, interior, or an oversize buffer already put)");
		else
			class_put(ap, slot, buf);
		return;
	}
	unsigned slot = h->slot;
	if (slot == LFP_ARRAY_OVERSIZE) {
		oversize_put_checked(ap, buf, n);
		return;
	}
	if (slot < ap->min_slot || slot > ap->max_slot) {
		lfp_debug_report(ap->name, buf, "pointer not from this array pool (bad prefix)");
		return;
	}
	if (n && class_slot(ap, n) != slot) {
		lfp_debug_report(ap->name, buf, "sized put with a size of another class than the buffer's");
		return;
	}
	class_put(ap, slot, buf);
}

LFPOOL_API void lfpool_array_put_slow(lfpool_array *ap, void *buf, size_t n)
{
	if (!buf)
		return;
	if (ap->magic != LFP_MAGIC_LIVE) {
		lfp_debug_report(ap->name, buf, "put to an array pool after destroy");
		return;
	}
	if (ap->debug) {
		put_checked(ap, buf, n);
		return;
	}
	unsigned slot = n ? class_slot(ap, n) : hdr_of(buf)->slot;
	if (slot > ap->max_slot) {
		oversize_put_checked(ap, buf, n);
		return;
	}
	tls_enter(ap, slot);
	class_put(ap, slot, buf);
}

/* The class slot of a pooled buffer whose prefix a debug pool must not
 * trust (put_checked reads it so), or LFP_ARRAY_OVERSIZE. */
static unsigned checked_slot(const lfpool_array *ap, const void *buf)
{
	const struct lfpool_array_hdr *h = hdr_of((void *)buf);
	if (!lfp_core_readable(h, sizeof(*h)) || h->magic != LFP_ARRAY_MAGIC)
		return owner_slot(ap, buf);
	return h->slot;
}

LFPOOL_API size_t lfpool_array_class_size_(const lfpool_array *ap, const void *buf, size_t n)
{
	if (ap->magic != LFP_MAGIC_LIVE)
		return 0;
	unsigned slot = n ? class_slot(ap, n)
		      : ap->debug ? checked_slot(ap, buf) : hdr_of((void *)buf)->slot;
	return slot >= ap->min_slot && slot <= ap->max_slot ? ap->cls[slot].size : 0;
}

LFPOOL_API size_t lfpool_array_trim(lfpool_array *ap, size_t keep)
{
	if (lfp_dead(ap->name, &ap->magic, ap, "trim of an array pool after destroy"))
		return 0;
	size_t n = 0;
	for (unsigned k = ap->min_slot; k <= ap->max_slot; k++)
		n += lfp_flavour_trim(&ap->cls[k].pool, keep);
	return n;
}

LFPOOL_API int lfpool_array_dump(const lfpool_array *ap, FILE *out)
{
	static const char *const flavours[] = { "?", "pool", "concurrent", "threadstatic" };
	if (lfp_dead(ap->name, &ap->magic, ap, "dump of an array pool after destroy"))
		return -1;
	fprintf(out, "array pool '%s' (%s%s%s): classes of %zu to %zu bytes, prefix %zu; oversize: "
		"%llu gets, %llu out\n", ap->name, flavours[ap->fast.flavour],
		ap->debug ? ", debug" : "", ap->clear ? ", clear" : "", ap->cls[ap->min_slot].size,
		ap->cls[ap->max_slot].size, ap->align,
		(unsigned long long)lfp_load_u64_rlx(&ap->oversize_gets),
		(unsigned long long)lfp_load_u64_rlx(&ap->oversize_out));
	int rc = 0;
	for (unsigned k = ap->min_slot; k <= ap->max_slot; k++) {
		fputs("  class: ", out);
		if (lfp_flavour_dump(&ap->cls[k].pool, out) != 0)
			rc = -1;
	}
	return rc;
}

static void show(const void *ap, FILE *out)
{
	lfpool_array_dump(ap, out);
}

LFPOOL_API int lfpool_array_stats(const lfpool_array *ap, size_t size, lfpool_stats *st)
{
	if (lfp_dead(ap->name, &ap->magic, ap, "stats of an array pool after destroy")) {
		memset(st, 0, sizeof(*st));
		return -1;
	}
	if (size == 0) {
		memset(st, 0, sizeof(*st));
		for (unsigned k = ap->min_slot; k <= ap->max_slot; k++) {
			lfpool_stats one;
			lfp_flavour_stats(&ap->cls[k].pool, &one);
			lfp_flavour_stats_add(st, &one);
		}
		return 0;
	}
	unsigned slot = class_slot(ap, size);
	if (slot > ap->max_slot) {
		errno = EINVAL;
		return -1;
	}
	lfp_flavour_stats(&ap->cls[slot].pool, st);
	return 0;
}

LFPOOL_API void lfpool_array_oversize_stats(const lfpool_array *ap, uint64_t *gets, uint64_t *out)
{
	if (lfp_dead(ap->name, &ap->magic, ap, "oversize stats of an array pool after destroy")) {
		*gets = *out = 0;
		return;
	}
	*gets = lfp_load_u64_rlx(&ap->oversize_gets);
	*out = lfp_load_u64_rlx(&ap->oversize_out);
}

#ifdef LFPOOL_DEBUG
int lfp_array_validate(const lfpool_array *ap, char *why, size_t why_size)
{
	for (unsigned k = ap->min_slot; k <= ap->max_slot; k++) {
		const struct lfp_array_class *cl = &ap->cls[k];
		if (!cl->pool.pool || lfp_flavour_validate(&cl->pool, why, why_size) == 0)
			continue;
		char inner[200];
		snprintf(inner, sizeof(inner), "%s", why);
		snprintf(why, why_size, "class of %zu bytes: %s", cl->size, inner);
		return -1;
	}
	return 0;
}
#endif
