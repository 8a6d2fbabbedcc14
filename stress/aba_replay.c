/* SPDX-License-Identifier: MIT */
/*
 * aba_replay.c - the deterministic ABA replay (ck's
 * regressions/ck_stack/validate/serial.c idea) on the bare index stack of
 * lib/stack.h, and the scenario that runs it.
 *
 * 1. Snapshot the head, pop, push the same index back: a CAS from the
 *    snapshot must fail, the tag having moved.
 * 2. The classic interleaving through the real pop: the stress hook runs
 *    inside the pop's CAS window (head A read, next B) and pops A and B and
 *    pushes A back.  The delayed CAS must fail and retry; a stack without
 *    the tag installs B, which is in use, as its head.
 */
#include <stdio.h>

#include "stack.h"
#include "stress.h"

static struct lfp_stack *replay_stack;
static const struct lfp_slabs *replay_slabs;
static bool replay_armed;
static uint32_t replay_taken;

/* Another thread's work, done inside the delayed pop's window (once). */
static void interfere(void)
{
	if (!replay_armed)
		return;
	replay_armed = false;
	uint32_t a = lfp_stack_pop_mpmc(replay_stack, replay_slabs);
	replay_taken = lfp_stack_pop_mpmc(replay_stack, replay_slabs);
	lfp_stack_push_mpmc(replay_stack, replay_slabs, a);
}

/* The stack a -> b -> c. */
static void push_three(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t a)
{
	lfp_stack_init(st);
	for (uint32_t i = 3; i-- > 0;)
		lfp_stack_push_mpmc(st, s, a + i);
}

/* Step 1; 0 when the stale CAS failed. */
static int stale_snapshot(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t a,
			  char *msg, size_t len)
{
	push_three(st, s, a);
	uint64_t snap = lfp_load_u64_acq(&st->head);
	uint32_t next = lfp_load_u32_rlx(lfp_slabs_link(s, a));
	lfp_stack_push_mpmc(st, s, lfp_stack_pop_mpmc(st, s));
	if (!lfp_cas_u64_acqrel(&st->head, &snap, lfp_stack_next_head(snap, next)))
		return 0;
	snprintf(msg, len, "a CAS from a stale head snapshot succeeded after pop and push "
		 "of the same index: the head has no working ABA tag");
	return -1;
}

/* The letter of index i: A, B, C, or - for none. */
static char letter(uint32_t i, uint32_t a)
{
	return i == LFP_NIL ? '-' : (char)('A' + (i - a));
}

/* Step 2; 0 when the delayed pop retried and the stack is right. */
static int delayed_pop(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t a,
		       char *msg, size_t len)
{
	push_three(st, s, a);
	replay_stack = st;
	replay_slabs = s;
	replay_armed = true;
	lfp_stress_yield = interfere;
	uint64_t retries = lfp_stress_cas_retries;
	uint32_t got = lfp_stack_pop_mpmc(st, s);
	lfp_stress_yield = NULL;
	retries = lfp_stress_cas_retries - retries;
	uint32_t head = lfp_stack_pop_all_mpmc(st);
	uint32_t after = head == LFP_NIL ? LFP_NIL : lfp_load_u32_rlx(lfp_slabs_link(s, head));
	if (got == a && replay_taken == a + 1 && head == a + 2 && after == LFP_NIL && retries == 1)
		return 0;
	snprintf(msg, len, "delayed pop got %c (want A) after %llu CAS retries (want 1); the "
		 "stack is now %c -> %c (want C alone) while %c is in use",
		 letter(got, a), (unsigned long long)retries, letter(head, a), letter(after, a),
		 letter(replay_taken, a));
	return -1;
}

int aba_replay(char *msg, size_t len)
{
	struct lfp_slabs s;
	struct lfp_stack st;
	uint32_t first, last;
	if (lfp_slabs_init(&s, 64, 0, 0, NULL) != 0 || lfp_slabs_grow(&s, &first, &last) != 0) {
		snprintf(msg, len, "no slab for the replay");
		return -1;
	}
	char second[256];
	int failed = 0;
	if (stale_snapshot(&st, &s, first, msg, len) != 0)
		failed |= ABA_REPLAY_STALE_CAS;
	if (delayed_pop(&st, &s, first, failed ? second : msg, failed ? sizeof(second) : len) != 0)
		failed |= ABA_REPLAY_DELAYED_POP;
	lfp_slabs_fini(&s);
	return failed;
}

/* The scenario: the replay must pass on the real stack. */
static void replay(struct run *r)
{
	char msg[256];
	if (aba_replay(msg, sizeof(msg)) != 0)
		run_fail(r, "%s", msg);
	r->t.rounds++;
}

const struct scenario sc_aba_replay = { "aba-replay", false, false, 1, replay };
