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
 * 3. The tag's width: a get stalled between its head load and its CAS
 *    while others change the head 2^k times, for k up to 56 (and 2^64 - 1):
 *    the head then holds the same index and the tag of 2^k changes later
 *    (set directly: 2^56 real changes would take years), and the stale CAS
 *    must fail.  The old 32-bit tag failed this at k = 32.
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
	lfp_head snap = lfp_stack_load(st);
	uint32_t next = lfp_load_u32_rlx(lfp_slabs_link(s, a));
	lfp_stack_push_mpmc(st, s, lfp_stack_pop_mpmc(st, s));
	if (!lfpool_stack_cas_(&st->head, &snap, next))
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

/* The head as `changes` successful CASes from h, all leaving idx on top,
 * would leave it. */
static lfp_head after_changes(lfp_head h, uint32_t idx, uint64_t changes)
{
	lfp_head to = lfp_stack_next_head(h, idx);
	to.tag = h.tag + changes * LFPOOL_STACK_TAG_STEP_;
	return to;
}

/* Step 3; 0 when every stale CAS failed. */
static int tag_width(struct lfp_stack *st, const struct lfp_slabs *s, uint32_t a,
		     char *msg, size_t len)
{
	static const unsigned bits[] = { 0, 16, 31, 32, 33, 40, 48, 55, 56, 63 };
	for (unsigned k = 0; k <= sizeof(bits) / sizeof(bits[0]); k++) {
		uint64_t changes = k < sizeof(bits) / sizeof(bits[0]) ? (uint64_t)1 << bits[k]
								     : UINT64_MAX;
		push_three(st, s, a);
		lfp_head snap = lfp_stack_load(st);
		uint32_t next = lfp_load_u32_rlx(lfp_slabs_link(s, a));
		st->head = after_changes(snap, a, changes);
		lfp_head stale = snap;
		if (lfpool_stack_cas_(&st->head, &stale, next)) {
			snprintf(msg, len, "a CAS stalled while the head changed %llu times "
				 "succeeded: the tag is narrower than 64 bits",
				 (unsigned long long)changes);
			return -1;
		}
	}
	return 0;
}

int aba_replay(char *msg, size_t len)
{
	struct lfp_slabs s;
	struct lfp_stack st;
	uint32_t first, last;
	char why[160];
	if (lfp_slabs_init(&s, 64, 0, 0, NULL, why, sizeof(why)) != 0 ||
	    lfp_slabs_grow(&s, &first, &last) != 0) {
		snprintf(msg, len, "no slab for the replay");
		return -1;
	}
	char second[256];
	int failed = 0;
	if (stale_snapshot(&st, &s, first, msg, len) != 0)
		failed |= ABA_REPLAY_STALE_CAS;
	if (delayed_pop(&st, &s, first, failed ? second : msg, failed ? sizeof(second) : len) != 0)
		failed |= ABA_REPLAY_DELAYED_POP;
	if (tag_width(&st, &s, first, failed ? second : msg, failed ? sizeof(second) : len) != 0)
		failed |= ABA_REPLAY_TAG_WIDTH;
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
