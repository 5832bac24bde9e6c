/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Pass/fail criteria and run summaries (lib/timing): each criterion passes
 * on a run that meets it and fails on one that does not; the JSON summary
 * parses and carries the documented keys.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_timing.h"

#define MS 1000000ull

struct run {
	struct th_timing_config cfg;
	struct th_timing_clock clk;
	struct th_timing_driver *d;
	struct th_timing_verdict v;
};

static struct run *
run_new(enum th_timing_delay_kind delay, uint64_t delay_ns, unsigned int ops)
{
	struct run *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	th_timing_config_init(&r->cfg);
	th_timing_config_add_op(&r->cfg, "read", TH_TIMING_MANUAL, 1);
	if (ops > 1)
		th_timing_config_add_op(&r->cfg, "write \"sync\"", TH_TIMING_MANUAL, 1);
	r->cfg.delay = delay;
	if (delay != TH_TIMING_DELAY_NONE)
		th_timing_dist_set(&r->cfg.delay_dist, TH_TIMING_DIST_FIXED, delay_ns, 0, 0);
	r->cfg.steady_count = 1000000;
	th_timing_clock_init_fake(&r->clk, 5 * MS);
	return r;
}

static void
run_start(struct run *r)
{
	r->d = th_timing_driver_create(&r->cfg, &r->clk, 0);
	assert_non_null(r->d);
	assert_int_equal(th_timing_driver_start(r->d, 0), 0);
}

static void
run_op(struct run *r, uint32_t op, uint64_t work, uint64_t validate)
{
	assert_int_equal(th_timing_op_begin_as(r->d, op, TH_TIMING_SCHEDULE), (int)op);
	th_timing_record_time(r->d);
	th_timing_clock_advance(&r->clk, work);
	th_timing_record_time(r->d);
	th_timing_clock_advance(&r->clk, validate);
	assert_int_equal(th_timing_op_end(r->d, true, NULL), 0);
}

static const struct th_timing_check *
evaluate(struct run *r, enum th_timing_check_kind kind, int nth)
{
	uint32_t i;

	assert_int_equal(th_timing_evaluate(&r->cfg, th_timing_driver_stats(r->d), &r->v), 0);
	for (i = 0; i < r->v.count; i++)
		if (r->v.checks[i].kind == kind && nth-- == 0)
			return &r->v.checks[i];
	fail_msg("no %s check", th_timing_check_kind_name(kind));
	return NULL;
}

static void
run_free(struct run *r)
{
	th_timing_driver_free(r->d);
	free(r);
}

static void
test_percentile_limits(void **state)
{
	struct run *r = run_new(TH_TIMING_DELAY_NONE, 0, 2);
	const struct th_timing_check *c;
	int i;

	(void)state;
	assert_int_equal(
		th_timing_config_add_limit(&r->cfg, 0, 99, 100 * MS, TH_TIMING_HIST_RESPONSE), 0);
	assert_int_equal(
		th_timing_config_add_limit(&r->cfg, 0, 99, 50 * MS, TH_TIMING_HIST_SERVICE), 0);
	assert_int_equal(
		th_timing_config_add_limit(&r->cfg, -1, 50, 51 * MS, TH_TIMING_HIST_RESPONSE), 0);
	assert_int_equal(
		th_timing_config_add_limit(&r->cfg, 1, 50, 1000 * MS, TH_TIMING_HIST_RESPONSE), 0);
	assert_int_equal(
		th_timing_config_add_limit(&r->cfg, 2, 50, 1, TH_TIMING_HIST_RESPONSE), -EINVAL);
	assert_int_equal(
		th_timing_config_add_limit(&r->cfg, 0, 101, 1, TH_TIMING_HIST_RESPONSE), -EINVAL);
	run_start(r);
	for (i = 0; i < 1000; i++)
		run_op(r, 0, (uint64_t)(i % 100 + 1) * MS, 0); /* 1..100 ms */

	c = evaluate(r, TH_TIMING_CHECK_PERCENTILE, 0);
	assert_true(c->is_passed); /* p99 = 99 ms <= 100 ms */
	assert_true(fabs(c->measured - 99e6) < 0.01 * 99e6);
	c = evaluate(r, TH_TIMING_CHECK_PERCENTILE, 1);
	assert_false(c->is_passed); /* 99 ms > 50 ms */
	c = evaluate(r, TH_TIMING_CHECK_PERCENTILE, 2);
	assert_true(c->is_passed); /* all ops: p50 = 50 ms */
	c = evaluate(r, TH_TIMING_CHECK_PERCENTILE, 3);
	assert_false(c->is_passed); /* "write" never ran: nothing proves the limit */
	assert_false(r->v.is_passed);
	run_free(r);
}

static void
test_mix_deviation(void **state)
{
	struct run *r = run_new(TH_TIMING_DELAY_NONE, 0, 2);
	const struct th_timing_check *c;
	int i;

	(void)state;
	r->cfg.mix_tolerance_pct = 5;
	run_start(r);
	/* Configured 50/50, observed 60/40. */
	for (i = 0; i < 1000; i++)
		run_op(r, i % 5 < 3 ? 0 : 1, 1 * MS, 0);
	c = evaluate(r, TH_TIMING_CHECK_MIX, 0);
	assert_true(fabs(c->measured - 60.0) < 1e-9);
	assert_true(fabs(c->target - 50.0) < 1e-9);
	assert_false(c->is_passed);
	assert_false(r->v.is_passed);
	r->cfg.mix_tolerance_pct = 15;
	c = evaluate(r, TH_TIMING_CHECK_MIX, 1);
	assert_true(c->is_passed);
	assert_true(r->v.is_passed);
	run_free(r);
}

static void
test_cycle_deviation_and_little(void **state)
{
	struct run *r = run_new(TH_TIMING_DELAY_CYCLE, 10 * MS, 1);
	const struct th_timing_check *c;
	int i;

	(void)state;
	r->cfg.cycle_tolerance_pct = 1;
	r->cfg.little_tolerance_pct = 2;
	run_start(r);
	for (i = 0; i < 1000; i++)
		run_op(r, 0, 5 * MS, 2 * MS); /* keeps up with the 10 ms cycle */
	c = evaluate(r, TH_TIMING_CHECK_CYCLE, 0);
	assert_true(c->is_passed);
	assert_true(fabs(c->measured - 10e6) < 1.0);
	c = evaluate(r, TH_TIMING_CHECK_LITTLE, 0);
	assert_true(c->is_passed);
	assert_true(r->v.is_passed);
	run_free(r);

	r = run_new(TH_TIMING_DELAY_CYCLE, 10 * MS, 1);
	r->cfg.cycle_tolerance_pct = 1;
	r->cfg.little_tolerance_pct = 2;
	run_start(r);
	for (i = 0; i < 1000; i++)
		run_op(r, 0, 15 * MS, 0); /* cannot keep up: starts every 15 ms */
	c = evaluate(r, TH_TIMING_CHECK_CYCLE, 0);
	assert_false(c->is_passed);
	assert_true(fabs(c->measured - 15e6) < 1.0);
	c = evaluate(r, TH_TIMING_CHECK_LITTLE, 0);
	assert_false(c->is_passed); /* X * C = 10/15 of one thread */
	run_free(r);
}

static void
test_little_think_and_closed(void **state)
{
	struct run *r = run_new(TH_TIMING_DELAY_THINK, 10 * MS, 1);
	const struct th_timing_check *c;
	int i;

	(void)state;
	r->cfg.little_tolerance_pct = 1;
	run_start(r);
	/* Validation (3 ms) runs inside the think time: still one thread's worth. */
	for (i = 0; i < 1000; i++)
		run_op(r, 0, 5 * MS, 3 * MS);
	c = evaluate(r, TH_TIMING_CHECK_LITTLE, 0);
	assert_true(c->is_passed);
	assert_true(fabs(c->target - 1.0) < 1e-12);
	run_free(r);

	/* Closed loop where the client spends as long as the server: half unexplained. */
	r = run_new(TH_TIMING_DELAY_NONE, 0, 1);
	r->cfg.little_tolerance_pct = 10;
	run_start(r);
	for (i = 0; i < 1000; i++)
		run_op(r, 0, 5 * MS, 5 * MS);
	c = evaluate(r, TH_TIMING_CHECK_LITTLE, 0);
	assert_false(c->is_passed);
	assert_true(fabs(c->measured - 0.5) < 0.01);
	run_free(r);
}

/* A small JSON syntax checker: enough to prove the summary parses. */
static const char *json_value(const char *p);

static const char *
json_ws(const char *p)
{
	while (p != NULL && isspace((unsigned char)*p))
		p++;
	return p;
}

static const char *
json_str(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p != '"'; p++) {
		if (*p == '\0' || (unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && *++p == '\0')
			return NULL;
	}
	return p + 1;
}

static const char *
json_value(const char *p)
{
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_str(json_ws(p));
				if (p == NULL || *(p = json_ws(p)) != ':')
					return NULL;
				p++;
			}
			p = json_ws(json_value(p));
			if (p == NULL)
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return json_str(p);
	if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
		return p + 4;
	if (strncmp(p, "false", 5) == 0)
		return p + 5;
	if (*p == '-' || isdigit((unsigned char)*p)) {
		char *end;

		strtod(p, &end);
		return end;
	}
	return NULL;
}

static void
test_summaries(void **state)
{
	struct run *r = run_new(TH_TIMING_DELAY_THINK, 2 * MS, 2);
	struct th_timing_stats *total = th_timing_stats_create();
	char *text = NULL;
	size_t size = 0;
	const char *end;
	FILE *f;
	int i;

	(void)state;
	assert_non_null(total);
	th_timing_dist_set(&r->cfg.delay_dist, TH_TIMING_DIST_NEGEXP, 2 * MS, 0, 0);
	th_timing_config_add_limit(&r->cfg, 0, 99, 1 * MS, TH_TIMING_HIST_RESPONSE);
	r->cfg.mix_tolerance_pct = 50;
	r->cfg.cycle_tolerance_pct = 5;
	r->cfg.little_tolerance_pct = 5;
	run_start(r);
	for (i = 0; i < 500; i++)
		run_op(r, (uint32_t)(i & 1), 3 * MS, 0);
	th_timing_stats_merge(total, th_timing_driver_stats(r->d));
	assert_int_equal(th_timing_evaluate(&r->cfg, total, &r->v), 0);
	assert_false(r->v.is_passed); /* the p99 <= 1 ms limit fails */

	f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(th_timing_summary_json(f, &r->cfg, total, &r->v), 0);
	fclose(f);
	end = json_value(text);
	assert_non_null(end);
	assert_int_equal(*json_ws(end), '\0');
	assert_non_null(strstr(text, "\"passed\": false"));
	assert_non_null(strstr(text, "\"threads\": 1"));
	assert_non_null(strstr(text, "\"kind\": \"think\", \"dist\": \"negexp\""));
	assert_non_null(strstr(text, "\"name\": \"write \\\"sync\\\"\""));
	assert_non_null(strstr(text, "\"count\": 250"));
	assert_non_null(strstr(text, "\"p99_9\": "));
	assert_non_null(strstr(text, "\"kind\": \"little\", \"op\": null"));
	assert_non_null(strstr(text, "\"throughput_ops_s\": "));
	free(text);

	/* Without a verdict: still valid JSON. */
	text = NULL;
	f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(th_timing_summary_json(f, &r->cfg, total, NULL), 0);
	fclose(f);
	assert_non_null(json_value(text));
	assert_non_null(strstr(text, "\"passed\": null"));
	free(text);

	text = NULL;
	f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(th_timing_summary_text(f, &r->cfg, total, &r->v), 0);
	fclose(f);
	assert_non_null(strstr(text, "verdict: FAIL"));
	assert_non_null(strstr(text, "FAIL percentile"));
	assert_non_null(strstr(text, "read             response"));
	free(text);
	th_timing_stats_free(total);
	run_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_limits),
		cmocka_unit_test(test_mix_deviation),
		cmocka_unit_test(test_cycle_deviation_and_little),
		cmocka_unit_test(test_little_think_and_closed),
		cmocka_unit_test(test_summaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
