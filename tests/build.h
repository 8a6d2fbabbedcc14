/* SPDX-License-Identifier: MIT */
/*
 * build.h - what the build turned on, for the tests (C and C++) whose
 * promise depends on it.
 *
 * --enable-debug (LFPOOL_DEBUG) makes every pool a debug pool, and a debug
 * pool poisons what it pools (README, "Debug checks"): without ASan a get
 * of a pooled object runs fini and init on it again when the pool has an
 * init hook, and finds a pattern written over it when the pool has none.
 * Tests of release pools' promises that this changes ("init runs once per
 * object", "the bytes survive put and get") say what each build does:
 * DEBUG_BUILD is 1 in the first, REMAKES 1 where objects are remade or
 * patterned (the init and fini counts gain one each per get of a pooled
 * object), BUILD_DEBUG_TAG what a dump says of a pool made without the
 * debug flag, TEST_ASAN defined under AddressSanitizer.
 */
#ifndef LFPOOL_TEST_BUILD_H
#define LFPOOL_TEST_BUILD_H

#ifdef LFPOOL_DEBUG
# define DEBUG_BUILD 1
#else
# define DEBUG_BUILD 0
#endif
#if defined(__SANITIZE_ADDRESS__)
# define TEST_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define TEST_ASAN 1
# endif
#endif
/* What a dump writes after a pool's flavour when the pool was made
 * without LFPOOL_F_DEBUG and LFPOOL_DEBUG: ", debug" where the build
 * makes every pool a debug pool. */
#if DEBUG_BUILD
# define BUILD_DEBUG_TAG ", debug"
#else
# define BUILD_DEBUG_TAG ""
#endif
#if DEBUG_BUILD && !defined(TEST_ASAN)
# define REMAKES 1
#else
# define REMAKES 0
#endif

#endif
