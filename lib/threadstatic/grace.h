/* SPDX-License-Identifier: MIT */
/*
 * grace.h - grace periods for the side data of ThreadStatic slabs.
 *
 * A slab's side data (link words, state bytes) may be read by a thread
 * that holds a stale stack head naming one of its objects (its tagged CAS
 * then fails, but the read happens).  Every ThreadStatic slow path that
 * pops a stack runs inside lfp_grace_enter/leave (liburcu's bulletproof
 * flavour: no registration, a thread-local counter, no fence), and trim
 * frees the side data of slabs it gave back only after lfp_grace_wait()
 * (synchronize_rcu: every section that began before has ended).  The get
 * and put fast paths never enter one.  A thread inside a section must not
 * wait for a lock that a trim holds while it waits: trim waits holding
 * none.
 *
 * A thread's first sections are counted in a shared word instead, with
 * no registration (grace.c says why: liburcu-bp's registration makes two
 * system calls); from then on it registers with liburcu-bp, under its
 * registry lock, which fork's prepare handler holds while it waits for the
 * library's locks (threadstatic.c, "fork"): a thread must not register
 * while it holds any of them.  The paths that enter a section holding a
 * lock hold lfp_ts_lock or a steal_lock (no section is entered under a
 * cache, area, grow or block lock); each first calls lfp_grace_register(),
 * holding nothing, and enters with lfp_grace_enter_locked(), which never
 * registers (a thread not yet registered counts that section).  Paths
 * that enter a section holding no lock may register there.
 *
 * No user code runs inside a section: the init and fini hooks run
 * outside them (ts_internal.h: lfp_ts_create_objects pops raw objects in a section
 * of its own and runs the hooks after it; a trim finalizes the objects it
 * took out after it left its section), so that a hook may block, or call
 * any pool, trims of others included, and no trim waits for it.  The
 * backing allocator does run inside one (a slab grown while raw objects
 * are popped): a trim called there, that would wait for its own thread,
 * does not wait (lfp_grace_wait returns false: the side data stays for
 * a later trim, or destroy).
 *
 * lfp_busy counts, per thread, the library steps in progress that a get
 * or put from a signal handler interrupting them must not enter (a grace
 * section, a cache's lock, a steal_lock, a trim's wait): the ThreadStatic
 * slow paths fail at once with EAGAIN (or put to the loose stack) while it
 * is not 0 (lfpool/ts.h, "Signal handlers").  Steps raise it before they
 * take what they mark and lower it after they let go; a signal fence
 * keeps the compiler from moving the lock past it.
 *
 * The TSan build keeps side data until destroy (TSan cannot see liburcu's
 * ordering, so it would report the free): lfp_grace_reclaims() is false.
 */
#ifndef LFP_GRACE_H
#define LFP_GRACE_H

#include <stdbool.h>

extern __thread unsigned lfp_busy;
static inline void lfp_busy_enter(void)
{
	lfp_busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* before what it marks */
}
static inline void lfp_busy_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* after what it marked */
	lfp_busy--;
}

void lfp_grace_enter(void);
/* Register the calling thread with liburcu-bp now if it is due (it has
 * run its counted sections) and is not registered (again: at thread exit
 * liburcu's key destructor may have run before tls.c's).  Caller holds no
 * library lock. */
void lfp_grace_register(void);
/* lfp_grace_enter for a caller holding lfp_ts_lock or a steal_lock: it
 * called lfp_grace_register() before it took them; never registers. */
void lfp_grace_enter_locked(void);
void lfp_grace_leave(void);
/* Wait until every section that began before has ended; false (no wait)
 * when the calling thread is inside a section itself. */
bool lfp_grace_wait(void);
/* Whether the calling thread is inside a section. */
bool lfp_grace_inside(void);
/* Whether side data may be freed after lfp_grace_wait(). */
bool lfp_grace_reclaims(void);
/* fork: liburcu-bp's own handlers (its grace-period and registry locks),
 * which it leaves to the application; threadstatic.c's fork handlers call
 * them first in prepare and last in the parent and the child (why: there). */
void lfp_grace_fork_prepare(void);
void lfp_grace_fork_parent(void);
void lfp_grace_fork_child(void);

#endif
