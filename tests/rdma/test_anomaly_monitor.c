/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The anomaly monitor decides what the search reports: a pause ratio of
 * 0.1% or more, or a sending host 20% or more under both of its limits.
 * The boundaries are exact, samples are averaged, and a host that does not
 * send is never judged for throughput.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "th_anomaly.h"

#define BPS 100e9
#define PPS 50e6

static struct th_monitor_cfg cfg;
static struct th_expect one_way = {BPS, PPS, 1};

static int
setup(void **state)
{
	(void)state;
	th_monitor_cfg_default(&cfg);
	return 0;
}

/* @p n samples of host A sending at @p bps_frac / @p pps_frac of the limits, pausing @p us. */
static void
fill(struct th_sample *s, unsigned n, double bps_frac, double pps_frac, double pause_us)
{
	unsigned i;

	memset(s, 0, n * sizeof(*s));
	for (i = 0; i < n; i++) {
		s[i].v[0][TH_CTR_TX_BYTES] = bps_frac * BPS / 8;
		s[i].v[0][TH_CTR_TX_PKTS] = pps_frac * PPS;
		s[i].v[1][TH_CTR_PAUSE_US] = pause_us;
	}
}

static void
test_defaults_are_the_papers(void **state)
{
	(void)state;
	assert_true(cfg.pause_ratio == 0.001);
	assert_true(cfg.shortfall == 0.20);
	assert_int_equal(cfg.samples, 4);
	assert_string_equal(th_symptom_name(TH_SYM_PAUSE), "pause");
	assert_string_equal(th_symptom_name(TH_SYM_LOW_TPUT), "low_tput");
	assert_string_equal(th_symptom_name(TH_SYM__COUNT), "?");
}

static void
test_pause_boundary(void **state)
{
	struct th_sample s[4];
	struct th_verdict v;

	(void)state;
	/* 999 us of pause per second: 0.0999%, not an anomaly. */
	fill(s, 4, 1, 1, 999);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_false(v.pause);
	assert_false(th_verdict_has(&v, TH_SYM_PAUSE));
	assert_true(v.pause_ratio > 0.000998 && v.pause_ratio < 0.001);
	/* Exactly 0.1%: an anomaly (at or above the threshold). */
	fill(s, 4, 1, 1, 1000);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_true(v.pause);
	assert_true(th_verdict_has(&v, TH_SYM_PAUSE));
	assert_false(th_verdict_has(&v, TH_SYM_LOW_TPUT));
	/* A hair under it is not. */
	fill(s, 4, 1, 1, 999.999);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_false(v.pause);
}

static void
test_pause_takes_the_worse_host(void **state)
{
	struct th_sample s[2];
	struct th_verdict v;

	(void)state;
	fill(s, 2, 1, 1, 0);
	s[0].v[0][TH_CTR_PAUSE_US] = 500;
	s[1].v[0][TH_CTR_PAUSE_US] = 500;
	s[0].v[1][TH_CTR_PAUSE_US] = 3000;
	s[1].v[1][TH_CTR_PAUSE_US] = 0;
	th_monitor_judge(&cfg, &one_way, s, 2, &v);
	/* Host B averages 1500 us/s (0.15%), host A 0.05%. */
	assert_true(v.pause);
	assert_true(v.pause_ratio > 0.00149 && v.pause_ratio < 0.00151);
}

static void
test_pause_averages_samples(void **state)
{
	struct th_sample s[4];
	struct th_verdict v;

	(void)state;
	/* One bad second out of four: 3000 / 4 = 750 us/s, under 0.1%. */
	fill(s, 4, 1, 1, 0);
	s[2].v[1][TH_CTR_PAUSE_US] = 3000;
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_false(v.pause);
	/* The same second judged alone is one. */
	th_monitor_judge(&cfg, &one_way, s + 2, 1, &v);
	assert_true(v.pause);
	/* 4000 / 4 = 1000 us/s: exactly at the threshold. */
	s[2].v[1][TH_CTR_PAUSE_US] = 4000;
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_true(v.pause);
}

static void
test_low_tput_boundary(void **state)
{
	struct th_sample s[4];
	struct th_verdict v;

	(void)state;
	/* Exactly 80% of both limits: 20% short, an anomaly. */
	fill(s, 4, 0.8, 0.8, 0);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_true(v.low_tput);
	assert_true(th_verdict_has(&v, TH_SYM_LOW_TPUT));
	assert_false(v.pause);
	assert_true(v.bps_frac > 0.7999999 && v.bps_frac < 0.8000001);
	/* 80.0001% of bits/s: only 19.9999% short, not one. */
	fill(s, 4, 0.800001, 0.5, 0);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_false(v.low_tput);
	/* Short of bits/s but at the packet limit: small messages, no anomaly. */
	fill(s, 4, 0.3, 1.0, 0);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_false(v.low_tput);
	/* Short of packets/s but at line rate: large messages, no anomaly. */
	fill(s, 4, 1.0, 0.3, 0);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_false(v.low_tput);
	/* Short of both. */
	fill(s, 4, 0.5, 0.6, 0);
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_true(v.low_tput);
	assert_true(v.bps_frac > 0.49 && v.bps_frac < 0.51);
	assert_true(v.pps_frac > 0.59 && v.pps_frac < 0.61);
}

static void
test_low_tput_averages_samples(void **state)
{
	struct th_sample s[4];
	struct th_verdict v;

	(void)state;
	/* 1.0, 1.0, 0.6, 0.6 of line rate: mean 0.8, exactly the boundary. */
	fill(s, 4, 1.0, 1.0, 0);
	s[2].v[0][TH_CTR_TX_BYTES] = s[3].v[0][TH_CTR_TX_BYTES] = 0.6 * BPS / 8;
	s[2].v[0][TH_CTR_TX_PKTS] = s[3].v[0][TH_CTR_TX_PKTS] = 0.6 * PPS;
	th_monitor_judge(&cfg, &one_way, s, 4, &v);
	assert_true(v.low_tput);
	/* The first two seconds alone are at line rate. */
	th_monitor_judge(&cfg, &one_way, s, 2, &v);
	assert_false(v.low_tput);
}

static void
test_only_senders_are_judged(void **state)
{
	struct th_expect bidi = {BPS, PPS, 3}, b_only = {BPS, PPS, 2};
	struct th_sample s[2];
	struct th_verdict v;
	unsigned i;

	(void)state;
	/* Host A at line rate, host B (the receiver of one-way traffic) silent. */
	fill(s, 2, 1, 1, 0);
	th_monitor_judge(&cfg, &one_way, s, 2, &v);
	assert_false(v.low_tput);
	/* Bidirectional: host B must send too, and it does not. */
	th_monitor_judge(&cfg, &bidi, s, 2, &v);
	assert_true(v.low_tput);
	assert_true(v.bps_frac == 0);
	/* Host B at 90%: both fine. */
	for (i = 0; i < 2; i++) {
		s[i].v[1][TH_CTR_TX_BYTES] = 0.9 * BPS / 8;
		s[i].v[1][TH_CTR_TX_PKTS] = 0.9 * PPS;
	}
	th_monitor_judge(&cfg, &bidi, s, 2, &v);
	assert_false(v.low_tput);
	assert_true(v.bps_frac > 0.89 && v.bps_frac < 0.91);
	th_monitor_judge(&cfg, &b_only, s, 2, &v);
	assert_false(v.low_tput);
}

static void
test_configurable_and_degenerate(void **state)
{
	struct th_monitor_cfg c = cfg;
	struct th_expect none = {BPS, PPS, 0}, zero = {0, 0, 1};
	struct th_sample s[1];
	struct th_verdict v;

	(void)state;
	c.pause_ratio = 0.01;
	c.shortfall = 0.5;
	fill(s, 1, 0.6, 0.6, 5000);
	th_monitor_judge(&c, &one_way, s, 1, &v);
	assert_false(v.pause);
	assert_false(v.low_tput);
	fill(s, 1, 0.5, 0.5, 10000);
	th_monitor_judge(&c, &one_way, s, 1, &v);
	assert_true(v.pause);
	assert_true(v.low_tput);
	/* No samples, no senders, no limits: nothing to report, nothing divided by zero. */
	th_monitor_judge(&cfg, &one_way, s, 0, &v);
	assert_false(v.pause || v.low_tput);
	fill(s, 1, 0, 0, 0);
	th_monitor_judge(&cfg, &none, s, 1, &v);
	assert_false(v.low_tput);
	th_monitor_judge(&cfg, &zero, s, 1, &v);
	assert_false(v.low_tput);
	assert_false(th_verdict_has(&v, TH_SYM__COUNT));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_the_papers),
		cmocka_unit_test(test_pause_boundary),
		cmocka_unit_test(test_pause_takes_the_worse_host),
		cmocka_unit_test(test_pause_averages_samples),
		cmocka_unit_test(test_low_tput_boundary),
		cmocka_unit_test(test_low_tput_averages_samples),
		cmocka_unit_test(test_only_senders_are_judged),
		cmocka_unit_test(test_configurable_and_degenerate),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
