/* SPDX-License-Identifier: MIT */
/*
 * asan.h - AddressSanitizer: the library's own build (--enable-asan,
 * LFP_ASAN), and its side of a user's.
 *
 * A program built with -fsanitize=address gets the headers' annotations
 * (lfpool/common.h, "AddressSanitizer"): in its own code a put poisons the
 * object and a get unpoisons it.  The library, built without ASan, never
 * trips on that poison with its own loads and stores, but three things it
 * does would: it runs the user's hooks (instrumented) on objects that may
 * be poisoned (reset on a put, after the header poisoned the object; fini
 * when a trim or destroy ends pooled objects; init and fini when a debug
 * pool remakes an object on a get); it calls libc's memset and memcpy on
 * objects (debug patterns, LFPOOL_ARRAY_F_CLEAR, a closure's capture),
 * which ASan intercepts in the whole process; and it gives memory back
 * (slabs, to its cache of blocks that later become other pools' slabs and
 * structs, or to the user's allocator, whose code is instrumented).  So it
 * opens an object around each such use, restoring the poison after
 * (lfp_asan_open, lfp_asan_close), unpoisons what it hands out itself (a
 * debug pool's get, a closure, a counted object) and unpoisons every block
 * it gives back (lfp_asan_unpoison).
 *
 * The runtime's interface is found at run time: weak references, NULL in a
 * process without ASan, where each of these costs one test, on slow paths
 * only.  In the library's own ASan build they are plain calls.
 */
#ifndef LFP_ASAN_H
#define LFP_ASAN_H

#include <stdbool.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
# define LFP_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define LFP_ASAN 1
# endif
#endif

#ifdef LFP_ASAN
# include <sanitizer/asan_interface.h>
# define LFP_ASAN_PRESENT_ 1
#else
/* ASan's runtime (sanitizer/asan_interface.h), if the process has one. */
__attribute__((weak)) void __asan_poison_memory_region(void const volatile *addr, size_t size);
__attribute__((weak)) void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
__attribute__((weak)) void *__asan_region_is_poisoned(void *beg, size_t size);
# define LFP_ASAN_PRESENT_ (__asan_region_is_poisoned != NULL)
#endif

/* n bytes at p leave the pool (handed out, ended, given back): no poison. */
static inline void lfp_asan_unpoison(const void *p, size_t n)
{
	if (LFP_ASAN_PRESENT_)
		__asan_unpoison_memory_region(p, n);
}

/* Open n bytes at p for the library's or a hook's use: true when some were
 * poisoned, which lfp_asan_close then restores (the whole n bytes). */
static inline bool lfp_asan_open(void *p, size_t n)
{
	if (!LFP_ASAN_PRESENT_ || !__asan_region_is_poisoned(p, n))
		return false;
	__asan_unpoison_memory_region(p, n);
	return true;
}

static inline void lfp_asan_close(const void *p, size_t n, bool was_poisoned)
{
	if (was_poisoned)
		__asan_poison_memory_region(p, n);
}

#endif
