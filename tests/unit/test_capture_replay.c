/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A replay's clock (app/capture_replay.h): stray stamps told from steps, alone and
 * in runs, and steps back of the trusted clock. Frames are plain tokens here.
 */
#include "capture_replay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define MS 1000000ull
#define SEC (1000 * MS)
#define T0 (1700000000ull * SEC)

static int frames[16]; /* tokens standing for mbufs */

/*
 * A clock that trusts its stamps: a first frame (a leap from nothing) and REPLAY_SETTLE
 * more in line, 1 ms apart, up to T0.
 */
static void
settle(struct replay_clock *c)
{
	*c = (struct replay_clock){0};
	for (unsigned int i = REPLAY_SETTLE + 1; i > 0; i--)
		assert_false(replay_clock_take(c, T0 - (i - 1) * MS));
	assert_true(c->clock_ns == T0);
}

/*
 * A frame as a decode lcore takes it: frames held before it go first (taken at the time
 * stamp_release() gives), then it is held or taken at its own stamp. @p got records what
 * was taken, as (token index, time) pairs; @return the count taken.
 */
struct taken {
	int idx[16];
	uint64_t ns[16];
	unsigned int n;
	uint64_t strays;
};

static void
offer(struct replay_clock *c, struct taken *t, int idx, uint64_t ts_ns)
{
	uint64_t ns;
	void *m;

	while ((m = stamp_release(c, ts_ns, &ns, &t->strays)) != NULL) {
		t->idx[t->n] = (int)((int *)m - frames);
		t->ns[t->n++] = ns;
		replay_clock_take(c, ns);
	}
	if (ts_ns == UINT64_MAX || stamp_hold(c, &frames[idx], ts_ns))
		return;
	t->idx[t->n] = idx;
	t->ns[t->n++] = ts_ns;
	replay_clock_take(c, ts_ns);
}

/* Before the clock is trusted nothing waits: a file's first frames set it. */
static void
test_untrusted_clock_holds_nothing(void **state)
{
	struct replay_clock c = {0};
	struct taken t = {.n = 0};

	(void)state;
	offer(&c, &t, 0, T0);
	offer(&c, &t, 1, T0 + 3600 * SEC);
	assert_int_equal(t.n, 2);
	assert_int_equal(c.n_held, 0);
}

/* One frame an hour ahead, then the clock's next frame: the stamp was a stray. */
static void
test_lone_stray(void **state)
{
	struct replay_clock c;
	struct taken t = {.n = 0};

	(void)state;
	settle(&c);
	offer(&c, &t, 0, T0 + 3600 * SEC);
	assert_int_equal(t.n, 0);
	offer(&c, &t, 1, T0 + MS);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.idx[0], 0);
	assert_true(t.ns[0] == T0); /* at the clock's time */
	assert_int_equal(t.idx[1], 1);
	assert_true(t.ns[1] == T0 + MS);
	assert_int_equal(t.strays, 1);
}

/* A run of frames with one stray stamp (frames of another capture), up to STAMP_HOLD_MAX. */
static void
test_run_of_strays(void **state)
{
	struct replay_clock c;
	struct taken t = {.n = 0};

	(void)state;
	settle(&c);
	for (int i = 0; i < STAMP_HOLD_MAX; i++)
		offer(&c, &t, i, T0 + 1800 * SEC);
	assert_int_equal(t.n, 0);
	offer(&c, &t, STAMP_HOLD_MAX, T0 + 2 * MS);
	assert_int_equal(t.n, STAMP_HOLD_MAX + 1);
	for (int i = 0; i < STAMP_HOLD_MAX; i++) {
		assert_int_equal(t.idx[i], i); /* in their order */
		assert_true(t.ns[i] == T0);
	}
	assert_int_equal(t.strays, STAMP_HOLD_MAX);
	assert_false(replay_clock_take(&c, T0 + 3 * MS)); /* no step was taken */
}

/*
 * A pause in the traffic: frames a few seconds on, one after another. Once more of them
 * agree than can wait, the clock moved: each is taken as stamped, in order, none a stray.
 */
static void
test_pause_is_no_stray(void **state)
{
	struct replay_clock c;
	struct taken t = {.n = 0};

	(void)state;
	settle(&c);
	for (int i = 0; i <= STAMP_HOLD_MAX; i++)
		offer(&c, &t, i, T0 + 5 * SEC + (uint64_t)i * MS);
	assert_int_equal(t.n, STAMP_HOLD_MAX + 1);
	for (int i = 0; i <= STAMP_HOLD_MAX; i++) {
		assert_int_equal(t.idx[i], i);
		assert_true(t.ns[i] == T0 + 5 * SEC + (uint64_t)i * MS);
	}
	assert_int_equal(t.strays, 0);
	assert_true(c.clock_ns == T0 + 5 * SEC + STAMP_HOLD_MAX * MS);
}

/*
 * The frame after a held one is far from both: the held stamp is taken as it is (the
 * clock moved), and the new frame is judged on its own. At the end of the input there is
 * no next frame: a held frame is taken as stamped.
 */
static void
test_far_from_both_and_the_end(void **state)
{
	struct replay_clock c;
	struct taken t = {.n = 0};

	(void)state;
	settle(&c);
	offer(&c, &t, 0, T0 + 7200 * SEC);
	offer(&c, &t, 1, T0 + 3600 * SEC);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.idx[0], 0);
	assert_true(t.ns[0] == T0 + 7200 * SEC);
	assert_int_equal(c.n_held, 1); /* the second waits in its turn */
	offer(&c, &t, 2, UINT64_MAX);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.idx[1], 1);
	assert_true(t.ns[1] == T0 + 3600 * SEC);
	assert_int_equal(t.strays, 0);
	assert_int_equal(c.n_held, 0);
}

/* The trusted clock going back a second or more is a step; less is jitter. */
static void
test_step_back(void **state)
{
	struct replay_clock c;

	(void)state;
	settle(&c);
	assert_false(replay_clock_take(&c, T0 - 999 * MS));
	assert_true(replay_clock_take(&c, T0 - 2 * SEC));
	assert_true(c.clock_ns == T0 - 2 * SEC);
	/* A leap of a day is not trusted until REPLAY_SETTLE frames agree with it. */
	assert_false(replay_clock_take(&c, T0 - 2 * 86400 * SEC));
	assert_true(c.clock_ns == T0 - 2 * SEC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untrusted_clock_holds_nothing),
		cmocka_unit_test(test_lone_stray),
		cmocka_unit_test(test_run_of_strays),
		cmocka_unit_test(test_pause_is_no_stray),
		cmocka_unit_test(test_far_from_both_and_the_end),
		cmocka_unit_test(test_step_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
