/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_hist.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Widest '#' bar in th_hist_print(). */
#define BAR_WIDTH 40

void
th_hist_init(struct th_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void
th_hist_bucket_range_at(uint32_t bucket, unsigned int bits, uint64_t *lo, uint64_t *hi)
{
	uint32_t sub_count = 1u << bits, group, sub;

	if (bucket >= TH_HIST_BUCKETS_AT(bits))
		bucket = TH_HIST_BUCKETS_AT(bits) - 1;
	if (bucket < sub_count) {
		*lo = *hi = bucket;
		return;
	}
	group = bucket >> bits;
	sub = bucket & (sub_count - 1);
	*lo = (uint64_t)(sub_count + sub) << (group - 1);
	*hi = *lo + ((UINT64_C(1) << (group - 1)) - 1);
}

void
th_hist_bucket_range(uint32_t bucket, uint64_t *lo, uint64_t *hi)
{
	th_hist_bucket_range_at(bucket, TH_HIST_SUB_BITS, lo, hi);
}

void
th_hist_record(struct th_hist *h, uint64_t value)
{
	double delta;

	h->count++;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	/* Welford: no catastrophic cancellation even for hour-long values in ns. */
	delta = (double)value - h->mean;
	h->mean += delta / (double)h->count;
	h->m2 += delta * ((double)value - h->mean);
	h->buckets[th_hist_bucket_of(value)]++;
}

void
th_hist_merge(struct th_hist *dst, const struct th_hist *src)
{
	double n, delta;
	uint32_t i;

	if (src->count == 0)
		return;
	if (dst->count == 0) {
		memcpy(dst, src, sizeof(*dst));
		return;
	}
	/* Chan et al.: combine two sets of moments without revisiting values. */
	n = (double)dst->count + (double)src->count;
	delta = src->mean - dst->mean;
	dst->m2 += src->m2 + delta * delta * (double)dst->count * (double)src->count / n;
	dst->mean += delta * (double)src->count / n;
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (i = 0; i < TH_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
}

uint64_t
th_hist_percentile_at(const uint64_t *buckets, unsigned int bits, uint64_t count, uint64_t min,
	uint64_t max, double p)
{
	uint32_t i, n = TH_HIST_BUCKETS_AT(bits);
	uint64_t rank, seen = 0, lo, hi, mid;

	if (count == 0)
		return 0;
	if (!(p > 0.0)) /* also catches NaN */
		return min;
	if (p >= 100.0)
		return max;
	/* Nearest rank: the smallest value with at least p% of values at or below it. */
	rank = (uint64_t)ceil(p / 100.0 * (double)count);
	/* The first and last ranks are the exact min and max (a small sample's p99 is its max). */
	if (rank <= 1)
		return min;
	if (rank >= count)
		return max;
	for (i = 0; i < n; i++) {
		seen += buckets[i];
		if (seen >= rank)
			break;
	}
	if (i == n)
		return max;
	th_hist_bucket_range_at(i, bits, &lo, &hi);
	mid = lo + (hi - lo) / 2;
	if (mid < min)
		mid = min;
	if (mid > max)
		mid = max;
	return mid;
}

uint64_t
th_hist_percentile(const struct th_hist *h, double p)
{
	return th_hist_percentile_at(h->buckets, TH_HIST_SUB_BITS, h->count, h->min, h->max, p);
}

double
th_hist_stddev(const struct th_hist *h)
{
	if (h->count < 2 || h->m2 <= 0.0)
		return 0.0;
	return sqrt(h->m2 / (double)h->count);
}

void
th_hist_print(FILE *out, const struct th_hist *h, unsigned int rows)
{
	uint32_t first = TH_HIST_BUCKETS, last = 0, nonempty = 0, per_row, i, in_row;
	uint64_t row_max = 0, acc = 0, cum = 0, lo, hi, row_lo = 0;
	int pass;

	if (h->count == 0) {
		fprintf(out, "(no samples)\n");
		return;
	}
	if (rows == 0)
		rows = 1;
	for (i = 0; i < TH_HIST_BUCKETS; i++) {
		if (h->buckets[i] == 0)
			continue;
		if (first == TH_HIST_BUCKETS)
			first = i;
		last = i;
		nonempty++;
	}
	/* Group consecutive non-empty buckets so at most @rows rows come out. */
	per_row = (nonempty + rows - 1) / rows;

	fprintf(out, "%14s %14s %12s %8s\n", "from_us", "to_us", "count", "cum_pct");
	/* Pass 0 finds the tallest row to scale the bars; pass 1 prints. */
	for (pass = 0; pass < 2; pass++) {
		in_row = 0;
		acc = 0;
		cum = 0;
		for (i = first; i <= last; i++) {
			if (h->buckets[i] == 0)
				continue;
			th_hist_bucket_range(i, &lo, &hi);
			if (in_row == 0)
				row_lo = lo;
			acc += h->buckets[i];
			if (++in_row < per_row && i != last)
				continue;
			cum += acc;
			if (pass == 0) {
				if (acc > row_max)
					row_max = acc;
			} else {
				unsigned int bar = (unsigned int)ceil(
					(double)acc * BAR_WIDTH / (double)row_max);

				fprintf(out, "%14.3f %14.3f %12" PRIu64 " %7.3f%% ",
					(double)row_lo / 1e3, (double)hi / 1e3, acc,
					100.0 * (double)cum / (double)h->count);
				while (bar-- > 0)
					fputc('#', out);
				fputc('\n', out);
			}
			in_row = 0;
			acc = 0;
		}
	}
}
