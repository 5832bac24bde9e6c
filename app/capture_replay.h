/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A replay's own clock, from the stamps of its frames: which stamps it
 * trusts, when the clock went back, which frames' stamps were strays, and
 * when the tables age. Plain logic over stamps, with the frames as opaque
 * pointers: the decode lcores and the dispatcher share it, and the unit test
 * runs it without DPDK.
 */
#ifndef TH_CAPTURE_REPLAY_H
#define TH_CAPTURE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLAY_AGE_NS (1000ull * 1000 * 1000)  /* capture time between a replay's agings */
#define REPLAY_LEAP_NS (86400ull * 1000000000) /* a step of the clock not to be trusted */
#define REPLAY_SETTLE 16                       /* frames in line that trust it again */
#define REPLAY_BACK_NS (1000ull * 1000 * 1000) /* frames this far back: the clock went back */

/* Stray stamps in a row a replay's clock tells from a step (stamp_release()). */
#define STAMP_HOLD_MAX 4

/* A replay's clock from its frames' stamps (replay_clock_take()). */
struct replay_clock {
	uint64_t prev_ns;     /* the last frame's stamp */
	uint64_t clock_ns;    /* the latest trusted stamp */
	unsigned int in_line; /* frames in a row without a leap, up to REPLAY_SETTLE */
	/* Frames in a row stamped a second or more off it, waiting (stamp_release()) */
	void *held[STAMP_HOLD_MAX];       /* the frames (mbufs) */
	uint64_t held_ns[STAMP_HOLD_MAX]; /* their stamps */
	unsigned int n_held;              /* frames held */
	unsigned int n_out;               /* of them, taken since the next frame judged them */
	bool is_stray;                    /* what it judged: strays, or the clock moved */
};

/* How far apart two stamps are, either way round. */
static inline uint64_t
replay_distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * Take a frame stamped @p ts_ns into the clock. A step of a day or more
 * either way (a bad stamp would empty every table) is not trusted until
 * REPLAY_SETTLE frames in a row agree with it. @return true when the trusted
 * clock went back (REPLAY_BACK_NS or more) to this frame.
 */
static inline bool
replay_clock_take(struct replay_clock *c, uint64_t ts_ns)
{
	uint64_t step = replay_distance(ts_ns, c->prev_ns);

	c->prev_ns = ts_ns;
	if (step >= REPLAY_LEAP_NS)
		c->in_line = 0;
	else if (c->in_line < REPLAY_SETTLE)
		c->in_line++;
	if (c->in_line < REPLAY_SETTLE)
		return false;
	if (ts_ns + REPLAY_BACK_NS < c->clock_ns) {
		c->clock_ns = ts_ns;
		return true;
	}
	if (ts_ns > c->clock_ns)
		c->clock_ns = ts_ns;
	return false;
}

/*
 * A replay's frame stamped a second or more off the trusted clock waits, with
 * up to STAMP_HOLD_MAX - 1 more in a row stamped near it, for the frame after
 * them, which tells what they were. If that frame is nearer the old clock than
 * the held ones, their stamps were strays (a glitch, frames from another
 * capture) and they are taken at the clock's time, counted; if it is off the
 * clock by as much, and no more frames can wait, or it is far from both, the
 * clock did move (a pause in the traffic, a step back) and they are taken as
 * stamped, a few frames late, in their order. A stray stamp used to read as a
 * step of the clock, closing every open, or age every table to its time.
 *
 * Before frame @p ts_ns (UINT64_MAX: the end): the next held frame to take
 * now, if any, with its time in *@p ns; call again until it gives NULL.
 */
static inline void *
stamp_release(struct replay_clock *c, uint64_t ts_ns, uint64_t *ns, uint64_t *strays)
{
	void *m;

	if (c->n_held == 0)
		return NULL;
	if (c->n_out == 0) {
		uint64_t last_ns = c->held_ns[c->n_held - 1];

		c->is_stray = ts_ns != UINT64_MAX &&
			      replay_distance(ts_ns, c->clock_ns) < replay_distance(ts_ns, last_ns);
		/* Stamped near the held ones: it waits with them (stamp_hold()). */
		if (!c->is_stray && ts_ns != UINT64_MAX && c->n_held < STAMP_HOLD_MAX &&
			replay_distance(ts_ns, last_ns) < REPLAY_BACK_NS)
			return NULL;
	}
	m = c->held[c->n_out];
	if (c->is_stray) {
		(*strays)++;
		*ns = c->clock_ns;
	} else {
		*ns = c->held_ns[c->n_out];
	}
	if (++c->n_out == c->n_held)
		c->n_held = c->n_out = 0;
	return m;
}

/* Whether frame @p m, stamped @p ts_ns, waits for a later one (stamp_release()). */
static inline bool
stamp_hold(struct replay_clock *c, void *m, uint64_t ts_ns)
{
	if (c->n_held == 0 && (c->in_line < REPLAY_SETTLE ||
				      replay_distance(ts_ns, c->clock_ns) < REPLAY_BACK_NS))
		return false;
	c->held[c->n_held] = m;
	c->held_ns[c->n_held++] = ts_ns;
	return true;
}

/*
 * A replay's tables age at fixed steps of its own clock, before the frame
 * that passes each: the same file, the same output. Untrusted stamps do not
 * age them; a clock that went back starts the steps again from its time.
 * @return whether they age before the frame at @p ts_ns (then *@p next_age_ns
 * moves on).
 */
static inline bool
replay_age_due(const struct replay_clock *c, uint64_t ts_ns, uint64_t *next_age_ns)
{
	if (c->in_line < REPLAY_SETTLE ||
		(ts_ns < *next_age_ns && *next_age_ns - ts_ns <= REPLAY_AGE_NS))
		return false;
	*next_age_ns = ts_ns + REPLAY_AGE_NS;
	return true;
}

#endif /* TH_CAPTURE_REPLAY_H */
