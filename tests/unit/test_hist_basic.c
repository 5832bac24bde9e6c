/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Log-linear histograms (lib/hist): percentiles a user reads off a latency
 * report are within 1% of the exact ones over ns-to-hours data, merging
 * per-thread histograms loses nothing, and the moments are exact.
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_hist.h"

#define N_VALUES 200000

/* The test's own generator, so the histogram library is tested alone. */
static uint64_t
rnd(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double
unit(uint64_t *s)
{
	return (double)(rnd(s) >> 11) * 0x1.0p-53;
}

static double
gauss(uint64_t *s)
{
	/* Box-Muller; 1 - u keeps the log finite. */
	return sqrt(-2.0 * log(1.0 - unit(s))) * cos(2.0 * M_PI * unit(s));
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum shape { UNIFORM, LOGNORMAL, LOG_UNIFORM };

static void
fill(uint64_t *v, size_t n, enum shape shape, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (shape) {
		case UNIFORM: /* 0 to 10 ms */
			v[i] = rnd(&seed) % 10000001u;
			break;
		case LOGNORMAL: /* median 1 ms, wide tails */
			v[i] = (uint64_t)exp(log(1e6) + 2.5 * gauss(&seed));
			break;
		case LOG_UNIFORM: /* 1 ns to 5 hours */
			v[i] = (uint64_t)exp(unit(&seed) * log(5.0 * 3600e9));
			break;
		}
	}
}

/* Nearest rank, the definition th_hist_percentile() documents. */
static uint64_t
exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);

	if (rank == 0)
		rank = 1;
	return sorted[rank - 1];
}

static void
check_percentiles(enum shape shape, uint64_t seed)
{
	static const double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
	uint64_t *v = malloc(N_VALUES * sizeof(*v));
	struct th_hist *h = malloc(sizeof(*h));
	size_t i;

	assert_non_null(v);
	assert_non_null(h);
	fill(v, N_VALUES, shape, seed);
	th_hist_init(h);
	for (i = 0; i < N_VALUES; i++)
		th_hist_record(h, v[i]);
	qsort(v, N_VALUES, sizeof(*v), cmp_u64);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = exact_percentile(v, N_VALUES, ps[i]);
		uint64_t got = th_hist_percentile(h, ps[i]);
		double err = fabs((double)got - (double)want);

		if (err > 0.01 * (double)want) {
			fail_msg("shape %d p%g: histogram %llu, exact %llu", shape, ps[i],
				(unsigned long long)got, (unsigned long long)want);
		}
	}
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[N_VALUES - 1]);
	free(v);
	free(h);
}

static void
test_percentiles_uniform(void **state)
{
	(void)state;
	check_percentiles(UNIFORM, 1);
}

static void
test_percentiles_lognormal(void **state)
{
	(void)state;
	check_percentiles(LOGNORMAL, 2);
}

static void
test_percentiles_ns_to_hours(void **state)
{
	(void)state;
	check_percentiles(LOG_UNIFORM, 3);
}

static void
test_moments_exact(void **state)
{
	uint64_t *v = malloc(N_VALUES * sizeof(*v));
	struct th_hist *h = malloc(sizeof(*h));
	long double sum = 0, sq = 0, mean;
	double sd;
	size_t i;

	(void)state;
	assert_non_null(v);
	assert_non_null(h);
	fill(v, N_VALUES, LOGNORMAL, 7);
	th_hist_init(h);
	for (i = 0; i < N_VALUES; i++) {
		th_hist_record(h, v[i]);
		sum += v[i];
	}
	mean = sum / N_VALUES;
	for (i = 0; i < N_VALUES; i++)
		sq += ((long double)v[i] - mean) * ((long double)v[i] - mean);
	assert_int_equal(h->count, N_VALUES);
	assert_true(fabs(h->mean - (double)mean) <= 1e-9 * (double)mean);
	sd = (double)sqrtl(sq / N_VALUES);
	assert_true(fabs(th_hist_stddev(h) - sd) <= 1e-9 * sd);

	/* A constant series has no spread, whatever its size. */
	th_hist_init(h);
	for (i = 0; i < 1000; i++)
		th_hist_record(h, 3600000000000ull);
	assert_true(th_hist_stddev(h) == 0.0);
	assert_true(h->mean == 3600000000000.0);
	free(v);
	free(h);
}

static void
test_merge_equals_single(void **state)
{
	struct th_hist *parts = malloc(3 * sizeof(*parts));
	struct th_hist *one = malloc(sizeof(*one)), *sum = malloc(sizeof(*sum));
	uint64_t *v = malloc(N_VALUES * sizeof(*v));
	size_t i;

	(void)state;
	assert_non_null(parts);
	assert_non_null(one);
	assert_non_null(sum);
	assert_non_null(v);
	fill(v, N_VALUES, LOG_UNIFORM, 11);
	th_hist_init(one);
	th_hist_init(sum);
	for (i = 0; i < 3; i++)
		th_hist_init(&parts[i]);
	/* Uneven split, as threads would have: 1/2, 1/3, 1/6. */
	for (i = 0; i < N_VALUES; i++) {
		th_hist_record(one, v[i]);
		th_hist_record(&parts[i % 6 < 3 ? 0 : i % 6 < 5 ? 1 : 2], v[i]);
	}
	th_hist_merge(sum, &parts[0]); /* into an empty one: a copy */
	th_hist_merge(sum, &parts[1]);
	th_hist_merge(sum, &parts[2]);
	assert_int_equal(sum->count, one->count);
	assert_int_equal(sum->min, one->min);
	assert_int_equal(sum->max, one->max);
	assert_memory_equal(sum->buckets, one->buckets, sizeof(one->buckets));
	assert_true(fabs(sum->mean - one->mean) <= 1e-9 * one->mean);
	assert_true(fabs(th_hist_stddev(sum) - th_hist_stddev(one)) <= 1e-9 * th_hist_stddev(one));
	assert_int_equal(th_hist_percentile(sum, 99), th_hist_percentile(one, 99));
	free(parts);
	free(one);
	free(sum);
	free(v);
}

static void
test_empty_is_sane(void **state)
{
	struct th_hist *h = malloc(sizeof(*h)), *g = malloc(sizeof(*g));
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	(void)state;
	assert_non_null(h);
	assert_non_null(g);
	th_hist_init(h);
	th_hist_init(g);
	assert_int_equal(h->count, 0);
	assert_int_equal(th_hist_percentile(h, 50), 0);
	assert_int_equal(th_hist_percentile(h, 100), 0);
	assert_true(th_hist_stddev(h) == 0.0);
	th_hist_merge(h, g);
	assert_int_equal(h->count, 0);
	assert_int_equal(h->min, UINT64_MAX);

	/* An empty source leaves a full destination alone. */
	th_hist_record(h, 42);
	th_hist_merge(h, g);
	assert_int_equal(h->count, 1);
	assert_int_equal(h->min, 42);
	assert_int_equal(th_hist_percentile(h, 50), 42);
	assert_true(th_hist_stddev(h) == 0.0);

	f = open_memstream(&text, &size);
	assert_non_null(f);
	th_hist_print(f, g, 10);
	fclose(f);
	assert_non_null(strstr(text, "no samples"));
	free(text);
	free(h);
	free(g);
}

static void
test_buckets_tile_the_range(void **state)
{
	uint64_t lo, hi, prev_hi = 0, seed = 5;
	uint32_t b;
	int i;

	(void)state;
	for (b = 0; b < TH_HIST_BUCKETS; b++) {
		th_hist_bucket_range(b, &lo, &hi);
		assert_true(lo <= hi);
		if (b > 0)
			assert_int_equal(lo, prev_hi + 1); /* no gap, no overlap */
		/* Width at most 1/128 of the bucket's low end: the advertised error. */
		assert_true(hi - lo <= lo / TH_HIST_SUB);
		prev_hi = hi;
	}
	assert_int_equal(prev_hi, UINT64_MAX);
	assert_int_equal(th_hist_bucket_of(UINT64_MAX), TH_HIST_BUCKETS - 1);
	for (b = 0; b < TH_HIST_SUB; b++)
		assert_int_equal(th_hist_bucket_of(b), b);
	for (i = 0; i < 100000; i++) {
		uint64_t v = rnd(&seed) >> (rnd(&seed) % 64);

		th_hist_bucket_range(th_hist_bucket_of(v), &lo, &hi);
		assert_true(lo <= v && v <= hi);
	}
}

/* The same at the coarser resolutions a caller may keep (decode's response times use 5). */
static void
test_buckets_at_other_resolutions(void **state)
{
	static const unsigned int bits[] = {1, 3, 5, 6};
	uint64_t lo, hi, prev_hi, seed = 11, counts[TH_HIST_BUCKETS_AT(5)] = {0};
	uint32_t b, k;
	int i;

	(void)state;
	for (k = 0; k < sizeof(bits) / sizeof(bits[0]); k++) {
		prev_hi = 0;
		for (b = 0; b < TH_HIST_BUCKETS_AT(bits[k]); b++) {
			th_hist_bucket_range_at(b, bits[k], &lo, &hi);
			if (b > 0)
				assert_int_equal(lo, prev_hi + 1);
			assert_true(hi - lo <= lo >> bits[k]);
			prev_hi = hi;
		}
		assert_int_equal(prev_hi, UINT64_MAX);
		for (i = 0; i < 20000; i++) {
			uint64_t v = rnd(&seed) >> (rnd(&seed) % 64);

			th_hist_bucket_range_at(th_hist_bucket_at(v, bits[k]), bits[k], &lo, &hi);
			assert_true(lo <= v && v <= hi);
		}
	}
	/* Percentiles over such buckets: 1000 values, 1 µs to 1 ms a microsecond apart. */
	for (i = 1; i <= 1000; i++)
		counts[th_hist_bucket_at((uint64_t)i * 1000, 5)]++;
	lo = th_hist_percentile_at(counts, 5, 1000, 1000, 1000000, 50);
	assert_true(lo >= 500000 - 500000 / 32 && lo <= 500000 + 500000 / 32);
	assert_int_equal(th_hist_percentile_at(counts, 5, 1000, 1000, 1000000, 0), 1000);
	assert_int_equal(th_hist_percentile_at(counts, 5, 1000, 1000, 1000000, 100), 1000000);
	assert_int_equal(th_hist_percentile_at(counts, 5, 0, UINT64_MAX, 0, 50), 0);
}

static void
test_print_rows(void **state)
{
	struct th_hist *h = malloc(sizeof(*h));
	uint64_t seed = 9, total = 0;
	char *text = NULL, *line, *save = NULL;
	size_t size = 0;
	unsigned int rows = 0;
	double last_cum = 0;
	FILE *f;
	int i;

	(void)state;
	assert_non_null(h);
	th_hist_init(h);
	for (i = 0; i < 10000; i++)
		th_hist_record(h, 1000 + rnd(&seed) % 10000000);
	f = open_memstream(&text, &size);
	assert_non_null(f);
	th_hist_print(f, h, 12);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		double from, to, cum;
		unsigned long long count;

		if (strstr(line, "from_us") != NULL)
			continue;
		assert_int_equal(sscanf(line, "%lf %lf %llu %lf%%", &from, &to, &count, &cum), 4);
		assert_true(from <= to);
		assert_true(cum >= last_cum);
		assert_non_null(strchr(line, '#'));
		last_cum = cum;
		total += count;
		rows++;
	}
	assert_true(rows >= 6 && rows <= 12);
	assert_int_equal(total, 10000);
	assert_true(fabs(last_cum - 100.0) < 1e-9);
	free(text);
	free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentiles_uniform),
		cmocka_unit_test(test_percentiles_lognormal),
		cmocka_unit_test(test_percentiles_ns_to_hours),
		cmocka_unit_test(test_moments_exact),
		cmocka_unit_test(test_merge_equals_single),
		cmocka_unit_test(test_empty_is_sane),
		cmocka_unit_test(test_buckets_tile_the_range),
		cmocka_unit_test(test_buckets_at_other_resolutions),
		cmocka_unit_test(test_print_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
