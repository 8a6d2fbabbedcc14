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
 * the 128-bit LDXP/STXP loops of the shared stacks' CAS from two threads);
 * there Concurrent's get and put call the library and per-CPU mode uses
 * sched_getcpu() and a per-CPU lock.  Nothing else: the shared stacks
 * need a 64-bit double-width CAS.  The README's "Platforms" says what
 * each flavour uses on each.
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
