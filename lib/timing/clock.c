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

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
th_timing_rng_seed(struct th_timing_rng *r, uint64_t seed)
{
	int i;

	/* splitmix64 spreads even seeds 0, 1, 2 over the whole state, never all zero. */
	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
th_timing_rng_next(struct th_timing_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double
th_timing_rng_unit(struct th_timing_rng *r)
{
	/* The top 53 bits fill a double's mantissa exactly. */
	return (double)(th_timing_rng_next(r) >> 11) * 0x1.0p-53;
}
