/* SPDX-License-Identifier: MIT */
/*
 * rc.c - reference-counted objects over any flavour.
 *
 * The prefix before each object holds its owner, its count and a magic
 * word.  The magic routes each retain and release: LFP_RC_LIVE (objects of
 * release pools shared by threads) takes the atomic path, LFP_RC_LIVE_ST
 * (release Pool-flavoured pools: one thread) plain increments; anything
 * else (objects of debug pools, objects whose count reached zero,
 * strangers) the checked one.  The init hook writes owner and magic once per object, so get writes
 * only the count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "flavour_internal.h"
#include "census.h"
#include "lfpool/rc.h"

#define LFP_RC_LIVE 0x52434c56u		/* "RCLV": release pool, atomic path */
#define LFP_RC_LIVE_ST 0x52434c31u	/* "RCL1": release Pool, one thread */
#define LFP_RC_CHECKED 0x52434348u	/* "RCCH": debug pool, checked path */
#define LFP_RC_DEAD 0x52434444u		/* "RCDD": debug, count reached zero */

struct lfp_rc_hdr {
	lfpool_rc *owner;
	uint32_t count;
	uint32_t magic;
};

struct lfpool_rc {
	struct lfp_flavour pool;
	size_t prefix;		/* from an object of the pool to the caller's */
	size_t size;		/* the caller's bytes of an object */
	lfpool_hook_fn init, reset, fini;	/* the caller's hooks */
	void *hook_ctx;
	bool debug;
	uint32_t obj_magic;	/* what init writes into each object's prefix */
	uint32_t magic;
	char name[LFP_NAME_MAX];
};

/* The prefix header right before the caller's object. */
static struct lfp_rc_hdr *hdr_of(const void *obj)
{
	return (struct lfp_rc_hdr *)obj - 1;
}

/* Pool init hook: the prefix, then the caller's init on the caller's bytes. */
static void rc_init(void *raw, void *ctx)
{
	lfpool_rc *rc = ctx;
	char *obj = (char *)raw + rc->prefix;
	struct lfp_rc_hdr *h = hdr_of(obj);
	h->owner = rc;
	h->count = 0;
	h->magic = rc->obj_magic;
	if (rc->init)
		rc->init(obj, rc->hook_ctx);
}

/* Pool reset and fini hooks: the caller's, on the caller's bytes. */
static void rc_reset(void *raw, void *ctx)
{
	lfpool_rc *rc = ctx;
	rc->reset((char *)raw + rc->prefix, rc->hook_ctx);
}

static void rc_fini(void *raw, void *ctx)
{
	lfpool_rc *rc = ctx;
	rc->fini((char *)raw + rc->prefix, rc->hook_ctx);
}

LFPOOL_API lfpool_rc *lfpool_rc_create(lfpool_flavour flavour, const lfpool_config *cfg)
{
	size_t align = cfg && cfg->align ? cfg->align : 16;
	const char *name = cfg && cfg->name ? cfg->name : "rc";
	int err = 0;
	if (!cfg)
		err = lfp_debug_refuse(name, "no configuration (NULL)");
	else if (cfg->obj_size == 0)
		err = lfp_debug_refuse(name, "obj_size is 0");
	else if (align & (align - 1))
		err = lfp_debug_refuse(name, "align %zu is not a power of two", align);
	else if (align > 4096)
		err = lfp_debug_refuse(name, "align %zu is more than 4096", align);
	else if (cfg->obj_size > SIZE_MAX - 4096)
		err = lfp_debug_refuse(name, "obj_size %zu is more than %zu", cfg->obj_size,
				       (size_t)SIZE_MAX - 4096);
	if (err) {
		errno = err;
		return NULL;
	}
	lfpool_rc *rc = calloc(1, sizeof(*rc));
	if (!rc) {
		errno = ENOMEM;
		return NULL;
	}
	rc->prefix = align < sizeof(struct lfp_rc_hdr) ? sizeof(struct lfp_rc_hdr) : align;
	rc->size = cfg->obj_size;
	rc->init = cfg->init;
	rc->reset = cfg->reset;
	rc->fini = cfg->fini;
	rc->hook_ctx = cfg->hook_ctx;
	rc->debug = lfp_debug_wanted(cfg->flags);
	rc->obj_magic = rc->debug ? LFP_RC_CHECKED
		      : flavour == LFPOOL_FLAVOUR_POOL ? LFP_RC_LIVE_ST : LFP_RC_LIVE;
	snprintf(rc->name, sizeof(rc->name), "%s", cfg->name ? cfg->name : "rc");
	rc->magic = LFP_MAGIC_LIVE;
	lfpool_config pc = *cfg;
	pc.obj_size += rc->prefix;
	pc.align = rc->prefix;
	pc.init = rc_init;
	pc.reset = cfg->reset ? rc_reset : NULL;
	pc.fini = cfg->fini ? rc_fini : NULL;
	pc.hook_ctx = rc;
	pc.name = rc->name;
	err = lfp_flavour_create(&rc->pool, flavour, &pc);
	if (err) {
		free(rc);
		errno = err;
		return NULL;
	}
	return rc;
}

LFPOOL_API int lfpool_rc_destroy(lfpool_rc *rc)
{
	if (!rc)
		return 0;
	if (lfp_dead(rc->name, &rc->magic, rc, "destroy of an rc pool already destroyed"))
		return -1;
	return lfp_flavour_destroy_layer(&rc->pool, rc, &rc->magic, rc->debug, rc->name);
}

LFPOOL_API void *lfpool_rc_get(lfpool_rc *rc)
{
	char *raw = lfp_flavour_get(&rc->pool);
	if (!raw)
		return NULL;
	char *obj = raw + rc->prefix;
	struct lfp_rc_hdr *h = hdr_of(obj);
	lfp_asan_unpoison(obj, rc->size);	/* a user's ASan header's (rc.h) */
	lfp_store_u32_rlx(&h->count, 1);
	if (rc->debug)
		h->magic = LFP_RC_CHECKED;	/* it was DEAD while pooled */
	return obj;
}

/* The function of lfpool_rc_release_with_, or NULL. */
typedef void (*lfp_rc_last_fn)(void *obj, struct lfpool_span_ span);

/* The last reference is gone: obj goes back to its pool, after last. */
static void back_to_pool(struct lfp_rc_hdr *h, lfp_rc_last_fn last)
{
	lfpool_rc *rc = h->owner;
	if (last) {	/* the stride of the pool's objects: prefix + this */
		size_t stride = (rc->size + rc->prefix - 1) & ~(rc->prefix - 1);
		struct lfpool_span_ span = { rc->size, stride };
		last(h + 1, span);
	}
	lfp_flavour_put(&rc->pool, (char *)(h + 1) - rc->prefix);
}

/*
 * Debug: obj's header when obj is a live counted object, else NULL once
 * reported.  zero_msg names the call for an object whose count already
 * reached zero, after_msg for one whose pool was destroyed.  Looks before
 * it reads: a pooled object of a debug pool is poisoned under ASan, and so
 * are the slabs a destroyed debug pool keeps (lfp_debug_bury), which the
 * graveyard names.
 */
static struct lfp_rc_hdr *checked_hdr(const void *obj, const char *zero_msg,
				      const char *after_msg)
{
	struct lfp_rc_hdr *h = hdr_of(obj);
	if (!lfp_core_readable(h, sizeof(*h))) {
		const char *dead = lfp_debug_grave_name(h);
		lfp_debug_report(dead ? dead : "(rc)", obj, dead ? after_msg : zero_msg);
		return NULL;
	}
	if ((h->magic == LFP_RC_DEAD || h->magic == LFP_RC_CHECKED) &&
	    h->owner->magic != LFP_MAGIC_LIVE) {
		lfp_debug_report(h->owner->name, obj, after_msg);
		return NULL;
	}
	if (h->magic == LFP_RC_DEAD) {
		lfp_debug_report(h->owner->name, obj, zero_msg);
		return NULL;
	}
	if (h->magic != LFP_RC_CHECKED) {
		lfp_debug_report("(rc)", obj, "pointer is not a reference-counted pooled object");
		return NULL;
	}
	return h;
}

/* Debug retain: refuses an object whose count reached zero. */
static void retain_checked(void *obj)
{
	struct lfp_rc_hdr *h = checked_hdr(obj, "retain of an object whose count already reached zero",
					   "retain after destroy");
	if (!h)
		return;
	if (lfp_faa_u32_rlx(&h->count, 1) != 0)
		return;
	/* Taken to zero by another thread's release a moment ago. */
	lfp_faa_u32_rlx(&h->count, (uint32_t)-1);
	lfp_debug_report(h->owner->name, obj, "retain of an object whose count already reached zero");
}

/* Debug release: refuses a count of zero, marks the object DEAD (it is
 * pooled) when the count reaches zero; as lfpool_rc_release otherwise. */
static int release_checked(void *obj, lfp_rc_last_fn last)
{
	struct lfp_rc_hdr *h = checked_hdr(obj, "release of an object whose count already reached zero",
					   "release after destroy");
	if (!h)
		return 0;
	/* release for the last releaser; acquire, if last, of every
	 * other releaser's release (their writes to obj) */
	uint32_t was = lfp_faa_u32_acqrel(&h->count, (uint32_t)-1);
	if (was == 0) {
		lfp_faa_u32_rlx(&h->count, 1);
		lfp_debug_report(h->owner->name, obj, "release of an object whose count already reached zero");
		return 0;
	}
	if (was != 1)
		return 0;
	h->magic = LFP_RC_DEAD;
	back_to_pool(h, last);
	return 1;
}

/* obj's header and its magic; 0 for a prefix that must not be read. */
static struct lfp_rc_hdr *hdr_magic(void *obj, uint32_t *magic)
{
	struct lfp_rc_hdr *h = hdr_of(obj);
	*magic = lfp_core_readable(h, sizeof(*h)) ? h->magic : 0;
	return h;
}

LFPOOL_API void lfpool_rc_retain(void *obj)
{
	if (!obj)
		return;
	uint32_t magic;
	struct lfp_rc_hdr *h = hdr_magic(obj, &magic);
	if (LFPOOL_LIKELY(magic == LFP_RC_LIVE))
		lfp_faa_u32_rlx(&h->count, 1);
	else if (magic == LFP_RC_LIVE_ST)
		h->count++;
	else
		retain_checked(obj);
}

LFPOOL_API int lfpool_rc_release(void *obj)
{
	return lfpool_rc_release_with_(obj, NULL);
}

LFPOOL_API int lfpool_rc_release_with_(void *obj, lfp_rc_last_fn last)
{
	if (!obj)
		return 0;
	uint32_t magic, was;
	struct lfp_rc_hdr *h = hdr_magic(obj, &magic);
	if (LFPOOL_LIKELY(magic == LFP_RC_LIVE))	/* acq_rel: as release_checked */
		was = lfp_faa_u32_acqrel(&h->count, (uint32_t)-1);
	else if (magic == LFP_RC_LIVE_ST)
		was = h->count--;
	else
		return release_checked(obj, last);
	if (was != 1)
		return 0;
	back_to_pool(h, last);
	return 1;
}

LFPOOL_API uint32_t lfpool_rc_count(const void *obj)
{
	return lfp_load_u32_rlx(&hdr_of(obj)->count);
}

LFPOOL_API void lfpool_rc_stats(const lfpool_rc *rc, lfpool_stats *st)
{
	lfp_flavour_stats(&rc->pool, st);
}

#ifdef LFPOOL_DEBUG
int lfp_rc_validate(const lfpool_rc *rc, char *why, size_t why_size)
{
	return lfp_flavour_validate(&rc->pool, why, why_size);
}
#endif
