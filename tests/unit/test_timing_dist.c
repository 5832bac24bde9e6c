/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Think/cycle time distributions and operation mixes (lib/timing): over
 * many draws they deliver the mean, bounds and shares a user configured.
 */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_timing.h"

#define DRAWS 400000

struct sample {
	double mean;     /* of the draws */
	uint64_t min;    /* smallest draw */
	uint64_t max;    /* largest draw */
	uint64_t at_max; /* draws equal to the distribution's max */
};

static struct sample
draw_many(const struct th_timing_dist *d, uint64_t seed)
{
	struct sample s = {.min = UINT64_MAX};
	struct th_rng r;
	long double sum = 0;
	int i;

	th_rng_seed(&r, seed);
	for (i = 0; i < DRAWS; i++) {
		uint64_t x = th_timing_dist_draw(d, &r);

		sum += x;
		if (x < s.min)
			s.min = x;
		if (x > s.max)
			s.max = x;
		s.at_max += x == d->max_ns;
	}
	s.mean = (double)(sum / DRAWS);
	return s;
}

static void
test_fixed(void **state)
{
	struct th_timing_dist d;
	struct sample s;

	(void)state;
	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_FIXED, 5000, 1, 2), 0);
	s = draw_many(&d, 1);
	assert_int_equal(s.min, 5000);
	assert_int_equal(s.max, 5000);
}

static void
test_uniform(void **state)
{
	struct th_timing_dist d;
	struct sample s;

	(void)state;
	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_UNIFORM, 0, 1000, 3000), 0);
	assert_int_equal(d.mean_ns, 2000);
	s = draw_many(&d, 2);
	assert_int_equal(s.min, 1000);
	assert_int_equal(s.max, 3000);
	assert_true(fabs(s.mean - 2000.0) < 0.005 * 2000.0);
	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_UNIFORM, 0, 3000, 1000), -EINVAL);
}

static void
test_negexp_default_clamp(void **state)
{
	struct th_timing_dist d;
	struct sample s;

	(void)state;
	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_NEGEXP, 1000000, 0, 0), 0);
	assert_int_equal(d.max_ns, 5 * 1000000);
	s = draw_many(&d, 3);
	assert_int_equal(s.max, 5000000);
	/* About e^-5 = 0.67% of draws hit the clamp. */
	assert_true(s.at_max > DRAWS / 200 && s.at_max < DRAWS / 100);
	assert_true(fabs(s.mean - 1e6) < 0.01 * 1e6);
}

static void
test_negexp_min_and_tight_max(void **state)
{
	struct th_timing_dist d;
	struct sample s;

	(void)state;
	/* A tight clamp (2x mean) would cut the mean by 13% without compensation. */
	assert_int_equal(
		th_timing_dist_set(&d, TH_TIMING_DIST_NEGEXP, 1000000, 200000, 2000000), 0);
	s = draw_many(&d, 4);
	assert_true(s.min >= 200000 && s.min < 210000);
	assert_int_equal(s.max, 2000000);
	assert_true(s.at_max > 0);
	assert_true(fabs(s.mean - 1e6) < 0.01 * 1e6);

	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_NEGEXP, 100, 100, 0), -EINVAL);
	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_NEGEXP, 100, 0, 100), -EINVAL);
	assert_int_equal(th_timing_dist_set(&d, TH_TIMING_DIST_NEGEXP, 0, 0, 0), -EINVAL);
}

static void
test_rng_is_seeded(void **state)
{
	struct th_rng a, b, c;
	int i, same = 0;

	(void)state;
	th_rng_seed(&a, 42);
	th_rng_seed(&b, 42);
	th_rng_seed(&c, 43);
	for (i = 0; i < 1000; i++) {
		uint64_t x = th_rng_u64(&a);
		double u = th_rng_unit(&c);

		assert_int_equal(x, th_rng_u64(&b));
		assert_true(u >= 0.0 && u < 1.0);
		same += x == th_rng_u64(&c);
	}
	assert_int_equal(same, 0);
}

/* Run a closed-loop driver for @n operations and count what the mix chose. */
static void
run_mix(const struct th_timing_config *cfg, uint64_t n, uint64_t counts[TH_TIMING_MAX_OPS],
	uint64_t follows[TH_TIMING_MAX_OPS][TH_TIMING_MAX_OPS])
{
	struct th_timing_clock clk;
	struct th_timing_driver *d;
	int prev = -1;
	uint64_t i;

	th_timing_clock_init_fake(&clk, 1);
	d = th_timing_driver_create(cfg, &clk, 0);
	assert_non_null(d);
	assert_int_equal(th_timing_driver_start(d, 1), 0);
	memset(counts, 0, sizeof(uint64_t) * TH_TIMING_MAX_OPS);
	for (i = 0; i < n; i++) {
		int op = th_timing_op_begin(d);

		assert_true(op >= 0 && op < (int)cfg->op_count);
		counts[op]++;
		if (follows != NULL && prev >= 0)
			follows[prev][op]++;
		prev = op;
		th_timing_record_time(d);
		th_timing_clock_advance(&clk, 10);
		th_timing_record_time(d);
		th_timing_op_end(d, true, NULL);
	}
	th_timing_driver_free(d);
}

static void
test_flat_mix_converges(void **state)
{
	struct th_timing_config cfg;
	uint64_t counts[TH_TIMING_MAX_OPS];
	double shares[TH_TIMING_MAX_OPS];
	int i;

	(void)state;
	th_timing_config_init(&cfg);
	cfg.steady_count = 1;
	th_timing_config_add_op(&cfg, "a", TH_TIMING_MANUAL, 1);
	th_timing_config_add_op(&cfg, "b", TH_TIMING_MANUAL, 2);
	th_timing_config_add_op(&cfg, "c", TH_TIMING_MANUAL, 7);
	th_timing_config_add_op(&cfg, "never", TH_TIMING_MANUAL, 0);
	assert_int_equal(th_timing_mix_shares(&cfg, shares), 0);
	assert_true(fabs(shares[2] - 0.7) < 1e-12);
	run_mix(&cfg, 200000, counts, NULL);
	for (i = 0; i < 4; i++)
		assert_true(fabs((double)counts[i] / 200000 - shares[i]) < 0.005);
	assert_int_equal(counts[3], 0);
}

static void
test_markov_mix_converges(void **state)
{
	static uint64_t follows[TH_TIMING_MAX_OPS][TH_TIMING_MAX_OPS];
	struct th_timing_config cfg;
	uint64_t counts[TH_TIMING_MAX_OPS];
	double shares[TH_TIMING_MAX_OPS];
	char err[128] = "";
	int i;

	(void)state;
	th_timing_config_init(&cfg);
	cfg.steady_count = 1;
	cfg.mix = TH_TIMING_MIX_MARKOV;
	th_timing_config_add_op(&cfg, "open", TH_TIMING_MANUAL, 0);
	th_timing_config_add_op(&cfg, "read", TH_TIMING_MANUAL, 0);
	th_timing_config_add_op(&cfg, "close", TH_TIMING_MANUAL, 0);
	/* open -> read; read -> open or close; close -> open: stationary 0.4/0.4/0.2. */
	cfg.matrix[0][1] = 1;
	cfg.matrix[1][0] = 1;
	cfg.matrix[1][2] = 1;
	cfg.matrix[2][0] = 3; /* rows need not be normalised */
	assert_int_equal(th_timing_mix_shares(&cfg, shares), 0);
	assert_true(fabs(shares[0] - 0.4) < 1e-9);
	assert_true(fabs(shares[1] - 0.4) < 1e-9);
	assert_true(fabs(shares[2] - 0.2) < 1e-9);
	run_mix(&cfg, 200000, counts, follows);
	for (i = 0; i < 3; i++)
		assert_true(fabs((double)counts[i] / 200000 - shares[i]) < 0.005);
	/* Transitions follow the rows: nothing but read after open. */
	assert_int_equal(follows[0][0] + follows[0][2], 0);
	assert_int_equal(follows[2][1] + follows[2][2], 0);

	/* A strictly periodic chain still has shares (lazy power iteration). */
	memset(cfg.matrix, 0, sizeof(cfg.matrix));
	cfg.matrix[0][1] = cfg.matrix[1][0] = 1;
	cfg.matrix[2][2] = 1;
	assert_int_equal(th_timing_mix_shares(&cfg, shares), 0);
	assert_true(fabs(shares[0] - 0.5) < 1e-9 && fabs(shares[1] - 0.5) < 1e-9);
	assert_true(shares[2] < 1e-12);

	/* A reachable row with no way out is a configuration error. */
	cfg.matrix[1][0] = 0;
	assert_int_equal(th_timing_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "read"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_uniform),
		cmocka_unit_test(test_negexp_default_clamp),
		cmocka_unit_test(test_negexp_min_and_tight_max),
		cmocka_unit_test(test_rng_is_seeded),
		cmocka_unit_test(test_flat_mix_converges),
		cmocka_unit_test(test_markov_mix_converges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
