/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_RNG_H
#define TH_RNG_H

/**
 * @file
 * Seeded pseudo-random numbers for generators, drivers and probes:
 * xoshiro256** seeded through splitmix64. Equal seeds give equal sequences
 * on every machine; no global state, one generator per user (per thread).
 * Not for anything secret.
 */

#include <stdint.h>

struct th_rng {
	uint64_t s[4]; /**< generator state; never all zero */
};

static inline uint64_t
th_rng__splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t
th_rng__rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** Seed @p r; splitmix64 spreads even seeds 0, 1, 2 over the whole state. */
static inline void
th_rng_seed(struct th_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = th_rng__splitmix64(&seed);
}

/** Next 64 random bits. */
static inline uint64_t
th_rng_u64(struct th_rng *r)
{
	uint64_t *s = r->s, out = th_rng__rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = th_rng__rotl(s[3], 45);
	return out;
}

/** Uniform double in [0, 1): the top 53 bits fill the mantissa exactly. */
static inline double
th_rng_unit(struct th_rng *r)
{
	return (double)(th_rng_u64(r) >> 11) * 0x1.0p-53;
}

/** Uniform in [0, n) by multiply-shift (no modulo; bias below 2^-32). */
static inline uint32_t
th_rng_below(struct th_rng *r, uint32_t n)
{
	return (uint32_t)(((th_rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}

/** Uniform in [lo, hi]; lo when hi <= lo. */
static inline uint64_t
th_rng_range(struct th_rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	if (hi - lo == UINT64_MAX)
		return th_rng_u64(r);
	return lo + th_rng_u64(r) % (hi - lo + 1);
}

#endif /* TH_RNG_H */
