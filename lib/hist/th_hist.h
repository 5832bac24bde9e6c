/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_HIST_H
#define TH_HIST_H

/**
 * @file
 * Log-linear latency histograms: fixed memory, nanoseconds to hours,
 * relative error at most 1/2^TH_HIST_SUB_BITS (0.78%), mergeable across
 * threads. Values below 2^TH_HIST_SUB_BITS ns are exact; above, each power
 * of two is split into 2^TH_HIST_SUB_BITS equal buckets.
 *
 * Besides the buckets, a histogram keeps the exact count, min, max, mean
 * and variance (Welford's running moments, merged with Chan's formula), so
 * only percentiles carry the bucket error.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TH_HIST_SUB_BITS 7
#define TH_HIST_SUB (1u << TH_HIST_SUB_BITS)
/** Buckets: exact values below TH_HIST_SUB, then TH_HIST_SUB per power of two up to 2^64. */
#define TH_HIST_BUCKETS ((64 - TH_HIST_SUB_BITS + 1) * TH_HIST_SUB)

struct th_hist {
	uint64_t count;                    /**< values recorded */
	uint64_t min;                      /**< smallest value (UINT64_MAX when empty) */
	uint64_t max;                      /**< largest value */
	double mean;                       /**< running mean */
	double m2;                         /**< running sum of squared deviations (Welford) */
	uint64_t buckets[TH_HIST_BUCKETS]; /**< counts per bucket */
};

/** Empty a histogram. */
void th_hist_init(struct th_hist *h);

/** Record one value (ns, or any unit the caller keeps consistent). */
void th_hist_record(struct th_hist *h, uint64_t value);

/** dst += src (counts, min, max, moments). */
void th_hist_merge(struct th_hist *dst, const struct th_hist *src);

/**
 * The value at percentile @p p (0 to 100): the smallest bucket value v such
 * that at least p% of values are <= v, reported as the bucket's midpoint
 * (clamped to [min, max]); the first and last ranks are the exact min and
 * max. 0 when empty.
 */
uint64_t th_hist_percentile(const struct th_hist *h, double p);

/** Population standard deviation; 0 with fewer than two values. */
double th_hist_stddev(const struct th_hist *h);

/**
 * The same log-linear buckets at any resolution, for callers that keep their
 * own counts (a hot path wanting fewer cache lines): @p bits sub-bucket bits
 * per power of two, TH_HIST_BUCKETS_AT(bits) buckets, relative error at most
 * 1/2^bits. th_hist is the case bits = TH_HIST_SUB_BITS.
 */
#define TH_HIST_BUCKETS_AT(bits) ((64u - (bits) + 1u) << (bits))

/** Index of the bucket holding @p value at resolution @p bits. */
static inline uint32_t
th_hist_bucket_at(uint64_t value, unsigned int bits)
{
	unsigned int shift;

	if (value < (UINT64_C(1) << bits))
		return (uint32_t)value;
	shift = 63u - (unsigned int)__builtin_clzll(value) - bits;
	/*
	 * (value >> shift) lies in [2^bits, 2^(bits+1)): the top bit is implied
	 * by the group, the next bits pick the sub-bucket. Group 1 (shift 0)
	 * continues the exact range without a gap.
	 */
	return ((shift + 1) << bits) + (uint32_t)((value >> shift) - (UINT64_C(1) << bits));
}

/** The range [lo, hi] of values bucket @p bucket holds at resolution @p bits. */
void th_hist_bucket_range_at(uint32_t bucket, unsigned int bits, uint64_t *lo, uint64_t *hi);

/**
 * Nearest-rank percentile @p p over @p buckets at resolution @p bits that hold
 * @p count values between @p min and @p max: the midpoint of the bucket
 * holding that rank, clamped to [min, max]; exactly min for the first rank
 * (and p <= 0) and max for the last (a p99 of fewer than 100 values), 0 when
 * empty.
 */
uint64_t th_hist_percentile_at(const uint64_t *buckets, unsigned int bits, uint64_t count,
	uint64_t min, uint64_t max, double p);

/** Index of the bucket holding @p value, and the range [lo, hi] of values it holds. */
static inline uint32_t
th_hist_bucket_of(uint64_t value)
{
	return th_hist_bucket_at(value, TH_HIST_SUB_BITS);
}

void th_hist_bucket_range(uint32_t bucket, uint64_t *lo, uint64_t *hi);

/**
 * Print a text histogram: one row per non-empty range, at most @p rows rows
 * (adjacent buckets merged to fit), with counts, cumulative percent and a
 * bar of '#'. Values are shown in microseconds.
 */
void th_hist_print(FILE *out, const struct th_hist *h, unsigned int rows);

#endif /* TH_HIST_H */
