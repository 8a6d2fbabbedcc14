/* SPDX-License-Identifier: MIT */
/*
 * lfpool.h - lock-free object pools.  The one header to include.
 *
 * Flavours (each in its own header, all included here):
 *   Pool          lfpool/pool.h          one thread, no atomics, inline get/put
 *   Concurrent    lfpool/concurrent.h    one lock-free stack shared by all threads
 *   ThreadStatic  lfpool/ts.h            per-thread magazines over a lock-free depot
 * Built on a flavour of the caller's choice (lfpool/flavour.h):
 *   Array         lfpool/array.h         byte buffers in power-of-two size classes
 *   Refcount      lfpool/rc.h            objects with an atomic reference count
 *   Closure       lfpool/closure.h       a function and its captured bytes
 * Conveniences:   lfpool/typed.h (a pool per type), lfpool/scoped.h (put back
 *                 at the end of a scope)
 *
 * Every flavour shares lfpool_config (lfpool/common.h): object size and
 * alignment, a capacity bound, prewarm, init/reset/fini hooks and a backing
 * allocator.  The pool keeps its links outside the objects: an object's bytes
 * are the user's, and what init set up survives every put and get.
 *
 * Errors: functions that return a pointer return NULL and set errno
 * (EINVAL bad argument, ENOMEM backing allocator failed, ENOBUFS at
 * capacity); destroy(NULL) and put(pool, NULL) do nothing.  Misuse found by
 * the debug checks goes to the error hook (lfpool_set_error_hook).
 *
 * Platforms: x86-64 Linux with glibc is supported and tested.  aarch64
 * Linux with glibc builds and runs single-threaded programs under
 * qemu-aarch64, but is not tested with threads (qemu-user livelocks on
 * the 128-bit LDXP/STXP loops of the shared stacks' CAS from two threads):
 * tests/aarch64.sh, which ./run.sh test runs, cross-builds the library
 * and the unit tests whose pool calls run on one thread at a time and
 * runs them there.  The 16-byte CAS is a lock-free ldaxp/stlxp loop
 * (lfpool/impl/tagged_stack.h); Concurrent's get and put call the library and
 * per-CPU mode uses sched_getcpu() and a per-CPU lock.  Nothing else: the shared stacks
 * need a 64-bit double-width CAS.  The README's "Platforms" says what
 * each flavour uses on each.
 *
 * Environment.  Read once, at the first create (or the first use of a
 * pool's memory), never on a get or put; a value other than 0 or 1 (or
 * empty) gets a one-line warning on stderr and counts as 0.
 *   LFPOOL_DEBUG=1       every pool (every flavour, array pools, layers)
 *                        created after it is a debug pool, as with
 *                        LFPOOL_F_DEBUG, with the release library; a
 *                        refused create prints its reason.
 *   LFPOOL_SHOW_STATS=1  each pool's dump (lfpool_pool_dump and the
 *                        other flavours') goes to stderr at its destroy,
 *                        and from atexit for the pools still alive, as
 *                        MIMALLOC_SHOW_STATS; an array pool's classes
 *                        show in its own dump.  Pools are listed under a
 *                        lock while it is set (create and destroy cost
 *                        a list walk).
 *
 * Valgrind.  A pool created while the process runs under memcheck takes
 * the library's slow path for every get and put (its inline paths are shut,
 * as in debug pools) and tells memcheck what malloc and free would: a read
 * or write after put is an invalid access naming the put's stack, a read
 * of an object no get handed out an invalid read, a second put an invalid
 * free, and an object still out at destroy a block definitely lost at exit,
 * with the get's stack (its slab is then kept).  Other Valgrind tools, as
 * callgrind, and runs without Valgrind see no change.
 *
 * Sanitizers, against the normal library (lfpool/common.h): in a program
 * built with -fsanitize=address a put poisons the object and a get
 * unpoisons it, so ASan reports a read or write after put (and past the n
 * bytes an array get asked for, or into an object's padding) as a
 * use-after-poison; under -fsanitize=thread the headers tell TSan of each
 * object's hand-over between threads, and a put is a write of the whole
 * object, as free() is, so a race with a put is reported.  Build every
 * file that gets or puts with the same flags.  LFPOOL_NO_ASAN_ANNOTATIONS
 * and LFPOOL_NO_TSAN_ANNOTATIONS turn them off.
 */
#ifndef LFPOOL_H
#define LFPOOL_H

#include "lfpool/common.h"
#include "lfpool/pool.h"
#include "lfpool/concurrent.h"
#include "lfpool/ts.h"
#include "lfpool/array.h"
#include "lfpool/rc.h"
#include "lfpool/closure.h"
#include "lfpool/typed.h"

#endif
