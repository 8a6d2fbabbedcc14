/* SPDX-License-Identifier: MIT */
/*
 * memcheck.h - Valgrind's client requests (core.c, "Memcheck"; slab.c's
 * blocks), where its header is installed: BSD-licensed, used at build
 * time only.  Not in the library's ASan build, which memcheck cannot run.
 */
#ifndef LFP_MEMCHECK_H
#define LFP_MEMCHECK_H

#include "asan.h"	/* LFP_ASAN */

#if defined(__has_include) && !defined(LFP_ASAN)
# if __has_include(<valgrind/memcheck.h>)
#  include <valgrind/memcheck.h>
#  define LFP_MEMCHECK 1
# endif
#endif

#endif
