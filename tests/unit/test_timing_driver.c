/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Driver timing semantics (lib/timing) on a scripted fake clock: what is
 * timed, what is not, where an operation is due, and which ones count.
 * Time only moves when the test advances it or the driver sleeps.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_timing.h"

#define MS 1000000ull
#define T0 (1000 * MS)

struct fixture {
	struct th_timing_config cfg;
	struct th_timing_clock clk;
	struct th_timing_driver *d;
};

static struct fixture *
fixture_new(enum th_timing_delay_kind delay, uint64_t delay_ns)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	th_timing_config_init(&f->cfg);
	assert_int_equal(th_timing_config_add_op(&f->cfg, "read", TH_TIMING_MANUAL, 1), 0);
	assert_int_equal(th_timing_config_add_op(&f->cfg, "rpc", TH_TIMING_AUTO, 0), 1);
	f->cfg.delay = delay;
	if (delay != TH_TIMING_DELAY_NONE)
		assert_int_equal(th_timing_dist_set(
					 &f->cfg.delay_dist, TH_TIMING_DIST_FIXED, delay_ns, 0, 0),
			0);
	f->cfg.steady_count = 1000;
	th_timing_clock_init_fake(&f->clk, T0);
	return f;
}

static void
fixture_start(struct fixture *f)
{
	f->d = th_timing_driver_create(&f->cfg, &f->clk, 0);
	assert_non_null(f->d);
	assert_int_equal(th_timing_driver_start(f->d, T0), 0);
}

static void
fixture_free(struct fixture *f)
{
	th_timing_driver_free(f->d);
	free(f);
}

/* One MANUAL operation: prep, a single critical section of @work, validation. */
static void
run_op(struct fixture *f, uint64_t prep, uint64_t work, uint64_t validate,
	struct th_timing_op_info *info)
{
	assert_int_equal(th_timing_op_begin_as(f->d, 0, TH_TIMING_SCHEDULE), 0);
	th_timing_clock_advance(&f->clk, prep);
	assert_int_equal(th_timing_record_time(f->d), 0);
	th_timing_clock_advance(&f->clk, work);
	assert_int_equal(th_timing_record_time(f->d), 0);
	th_timing_clock_advance(&f->clk, validate);
	assert_int_equal(th_timing_op_end(f->d, true, info), 0);
}

static void
test_prep_and_validation_excluded(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_NONE, 0);
	struct th_timing_op_info info;
	const struct th_timing_stats *s;

	(void)state;
	fixture_start(f);
	run_op(f, 5 * MS, 2 * MS, 7 * MS, &info);
	assert_int_equal(info.service_ns, 2 * MS);
	assert_int_equal(info.response_ns, 2 * MS);
	assert_int_equal(info.start_ns, T0 + 5 * MS);
	assert_int_equal(info.end_ns, T0 + 7 * MS);
	assert_true(info.is_counted);
	s = th_timing_driver_stats(f->d);
	assert_int_equal(s->ops[0].count, 1);
	assert_int_equal(s->ops[0].service.max, 2 * MS);
	fixture_free(f);
}

static void
test_pauses_subtract(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_NONE, 0);
	struct th_timing_op_info info;

	(void)state;
	fixture_start(f);

	/* Two sections (1 + 2 ms) with 10 ms of client work paused between them. */
	assert_int_equal(th_timing_op_begin_as(f->d, 0, TH_TIMING_SCHEDULE), 0);
	assert_int_equal(th_timing_pause_time(f->d), -EINVAL); /* nothing to pause yet */
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 1 * MS);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 3 * MS); /* paused from the section's end */
	assert_int_equal(th_timing_pause_time(f->d), 0);
	th_timing_clock_advance(&f->clk, 7 * MS);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 2 * MS);
	th_timing_record_time(f->d);
	th_timing_op_end(f->d, true, &info);
	assert_int_equal(info.service_ns, 3 * MS);
	assert_int_equal(info.paused_ns, 10 * MS);

	/* pause_time() inside a section closes it and pauses at once. */
	assert_int_equal(th_timing_op_begin_as(f->d, 0, TH_TIMING_SCHEDULE), 0);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 1 * MS);
	th_timing_pause_time(f->d);
	th_timing_clock_advance(&f->clk, 5 * MS);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 1 * MS);
	th_timing_record_time(f->d);
	th_timing_op_end(f->d, true, &info);
	assert_int_equal(info.service_ns, 2 * MS);

	/* Without a pause the gap between sections counts. */
	assert_int_equal(th_timing_op_begin_as(f->d, 0, TH_TIMING_SCHEDULE), 0);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 1 * MS);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 4 * MS);
	th_timing_record_time(f->d);
	th_timing_clock_advance(&f->clk, 1 * MS);
	th_timing_record_time(f->d);
	th_timing_op_end(f->d, true, &info);
	assert_int_equal(info.service_ns, 6 * MS);
	fixture_free(f);
}

static void
test_cycle_starts_stay_on_schedule(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_CYCLE, 0);
	struct th_timing_op_info info;
	struct th_rng r;
	uint64_t want = T0;
	int k;

	(void)state;
	/* Random cycle delays: replay the driver's draws to know the exact plan. */
	assert_int_equal(
		th_timing_dist_set(&f->cfg.delay_dist, TH_TIMING_DIST_UNIFORM, 0, 5 * MS, 15 * MS),
		0);
	f->cfg.seed = 77;
	fixture_start(f);
	th_rng_seed(&r, 77);
	for (k = 0; k < 200; k++) {
		/* Every 10th operation runs 40 ms: the plan must not shift. */
		uint64_t work = k % 10 == 3 ? 40 * MS : 1 * MS;

		if (k > 0)
			want += th_timing_dist_draw(&f->cfg.delay_dist, &r);
		run_op(f, 0, work, 0, &info);
		assert_int_equal(info.intended_ns, want);
		assert_true(info.start_ns >= info.intended_ns);
	}
	fixture_free(f);
}

static void
test_late_start_in_response_not_service(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_CYCLE, 10 * MS);
	const struct th_timing_stats *s;
	struct th_timing_op_info info;

	(void)state;
	fixture_start(f);
	run_op(f, 0, 25 * MS, 0, &info); /* due T0, runs to T0+25 */
	assert_int_equal(info.response_ns, 25 * MS);
	run_op(f, 0, 1 * MS, 0, &info); /* due T0+10, starts T0+25 */
	assert_int_equal(info.intended_ns, T0 + 10 * MS);
	assert_int_equal(info.start_ns, T0 + 25 * MS);
	assert_int_equal(info.service_ns, 1 * MS);
	assert_int_equal(info.response_ns, 16 * MS);
	run_op(f, 0, 1 * MS, 0, &info); /* due T0+20, starts T0+26 */
	assert_int_equal(info.service_ns, 1 * MS);
	assert_int_equal(info.response_ns, 7 * MS);
	run_op(f, 0, 1 * MS, 0, &info); /* due T0+30: caught up, waits */
	assert_int_equal(info.start_ns, T0 + 30 * MS);
	assert_int_equal(info.response_ns, 1 * MS);

	s = th_timing_driver_stats(f->d);
	assert_int_equal(s->ops[0].count, 4);
	assert_int_equal(s->ops[0].late, 2);
	assert_int_equal(s->ops[0].response.max, 25 * MS);
	assert_true(s->ops[0].response.mean > s->ops[0].service.mean);
	assert_true(th_hist_percentile(&s->ops[0].service, 50) >= 1 * MS * 99 / 100);
	assert_true(th_hist_percentile(&s->ops[0].service, 50) <= 1 * MS * 101 / 100);
	/* p75 of responses {1, 7, 16, 25} ms is 16 ms, within the 1% bucket error. */
	assert_true(th_hist_percentile(&s->ops[0].response, 75) >= 16 * MS * 99 / 100);
	fixture_free(f);
}

static void
test_think_time_from_previous_end(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_THINK, 5 * MS);
	struct th_timing_op_info info;

	(void)state;
	fixture_start(f);
	run_op(f, 0, 2 * MS, 3 * MS, &info); /* ends T0+2, validation to T0+5 */
	assert_int_equal(info.start_ns, T0);
	/* Due 5 ms after the previous end (T0+2), not after validation or prep. */
	run_op(f, 1 * MS, 1 * MS, 0, &info);
	assert_int_equal(info.intended_ns, T0 + 7 * MS);
	assert_int_equal(info.start_ns, T0 + 7 * MS);
	assert_int_equal(info.response_ns, 1 * MS);
	assert_int_equal(f->clk.slept_ns, 1 * MS); /* 5 ms validation+prep ran in the think time */
	/* Preparation longer than the think time: the late start is measured. */
	run_op(f, 9 * MS, 1 * MS, 0, &info); /* due T0+13, starts T0+17 */
	assert_int_equal(info.intended_ns, T0 + 13 * MS);
	assert_int_equal(info.service_ns, 1 * MS);
	assert_int_equal(info.response_ns, 5 * MS);
	fixture_free(f);
}

static void
test_steady_state_boundaries_by_time(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_CYCLE, 4 * MS);
	const struct th_timing_stats *s;
	struct th_timing_op_info info;
	unsigned int ops = 0, steady = 0;

	(void)state;
	f->cfg.steady_count = 0;
	f->cfg.rampup_ns = 10 * MS;
	f->cfg.steady_ns = 20 * MS;
	f->cfg.rampdown_ns = 10 * MS;
	fixture_start(f);
	/* Due at T0 + 4k: k = 0..2 ramp-up, 3..7 steady (12..28 ms), 8..9 ramp-down. */
	while (th_timing_driver_is_running(f->d)) {
		assert_int_equal(th_timing_driver_phase(f->d), ops < 3 ? TH_TIMING_PHASE_RAMPUP
							       : ops < 8
								       ? TH_TIMING_PHASE_STEADY
								       : TH_TIMING_PHASE_RAMPDOWN);
		run_op(f, 0, 3 * MS, 0, &info);
		assert_int_equal(info.is_counted, ops >= 3 && ops < 8);
		steady += info.is_counted;
		ops++;
		assert_true(ops < 100);
	}
	assert_int_equal(ops, 10);
	assert_int_equal(steady, 5);
	s = th_timing_driver_stats(f->d);
	assert_int_equal(s->ops[0].count, 5);
	assert_int_equal(s->ops[0].outside, 5);
	assert_int_equal(s->steady_begin_ns, T0 + 10 * MS);
	assert_int_equal(s->steady_end_ns, T0 + 30 * MS);
	/* 5 operations in 20 ms. */
	assert_true(
		th_timing_stats_throughput(s) > 249.99 && th_timing_stats_throughput(s) < 250.01);
	assert_int_equal(th_timing_driver_phase(f->d), TH_TIMING_PHASE_DONE);
	fixture_free(f);
}

static void
test_steady_state_boundaries_by_count(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_NONE, 0);
	const struct th_timing_stats *s;
	struct th_timing_op_info info;
	unsigned int ops = 0;

	(void)state;
	f->cfg.rampup_count = 3;
	f->cfg.steady_count = 4;
	f->cfg.rampdown_count = 2;
	fixture_start(f);
	while (th_timing_driver_is_running(f->d)) {
		run_op(f, 1 * MS, (ops + 1) * MS, 0, &info);
		assert_int_equal(info.phase, ops < 3   ? TH_TIMING_PHASE_RAMPUP
					     : ops < 7 ? TH_TIMING_PHASE_STEADY
						       : TH_TIMING_PHASE_RAMPDOWN);
		ops++;
		assert_true(ops < 100);
	}
	assert_int_equal(ops, 9);
	s = th_timing_driver_stats(f->d);
	assert_int_equal(s->ops[0].count, 4);
	assert_int_equal(s->ops[0].outside, 5);
	/* Ramp-up ops took 1-3 ms, steady ones 4-7 ms: none of the former shows. */
	assert_int_equal(s->ops[0].service.min, 4 * MS);
	assert_int_equal(s->ops[0].service.max, 7 * MS);
	fixture_free(f);
}

struct work {
	struct th_timing_clock *clk; /* to advance */
	uint64_t ns;                 /* how long the section takes */
	int rc;                      /* what it returns */
	int calls;                   /* times it ran */
};

static int
section(void *arg)
{
	struct work *w = arg;

	th_timing_clock_advance(w->clk, w->ns);
	w->calls++;
	return w->rc;
}

static void
test_auto_timing(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_CYCLE, 20 * MS);
	struct work w = {.ns = 3 * MS};
	struct th_timing_op_info info;
	const struct th_timing_stats *s;

	(void)state;
	w.clk = &f->clk;
	fixture_start(f);
	run_op(f, 0, 1 * MS, 0, &info); /* a MANUAL op first: the AUTO one is due at T0+20 */

	assert_int_equal(th_timing_op_begin_as(f->d, 1, TH_TIMING_SCHEDULE), 1);
	assert_int_equal(th_timing_record_time(f->d), -EPERM);
	assert_int_equal(th_timing_pause_time(f->d), -EPERM);
	th_timing_clock_advance(&f->clk, 2 * MS); /* preparation, before the transport waits */
	assert_int_equal(th_timing_op_run(f->d, section, &w), 0);
	th_timing_clock_advance(&f->clk, 5 * MS); /* client work between requests: paused */
	assert_int_equal(th_timing_op_run(f->d, section, &w), 0);
	assert_int_equal(th_timing_op_end(f->d, true, &info), 0);
	assert_int_equal(w.calls, 2);
	assert_int_equal(info.start_ns, T0 + 20 * MS);
	assert_int_equal(info.service_ns, 6 * MS);
	assert_int_equal(info.paused_ns, 5 * MS);

	/* A failing section fails the operation even when the driver says ok. */
	w.rc = -EIO;
	assert_int_equal(th_timing_op_begin_as(f->d, 1, TH_TIMING_SCHEDULE), 1);
	assert_int_equal(th_timing_op_run(f->d, section, &w), -EIO);
	assert_int_equal(th_timing_op_end(f->d, true, &info), 0);
	assert_false(info.is_ok);
	s = th_timing_driver_stats(f->d);
	assert_int_equal(s->ops[1].count, 1);
	assert_int_equal(s->ops[1].errors, 1);

	/* And a MANUAL op refuses the AUTO call. */
	assert_int_equal(th_timing_op_begin_as(f->d, 0, TH_TIMING_SCHEDULE), 0);
	assert_int_equal(th_timing_op_run(f->d, section, &w), -EPERM);
	fixture_free(f);
}

static void
test_misuse_is_reported(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_NONE, 0);
	struct th_timing_config bad;
	const struct th_timing_stats *s;
	char err[128] = "";

	(void)state;
	th_timing_config_init(&bad);
	assert_null(th_timing_driver_create(&bad, &f->clk, 0));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(th_timing_config_check(&bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "operation"));

	f->d = th_timing_driver_create(&f->cfg, &f->clk, 0);
	assert_non_null(f->d);
	assert_false(th_timing_driver_is_running(f->d));
	assert_int_equal(th_timing_op_begin(f->d), -ENOTCONN);
	assert_int_equal(th_timing_driver_start(f->d, T0), 0);
	assert_int_equal(th_timing_driver_start(f->d, T0), -EALREADY);
	assert_int_equal(th_timing_record_time(f->d), -ENOENT);
	assert_int_equal(th_timing_pause_time(f->d), -ENOENT);
	assert_int_equal(th_timing_op_end(f->d, true, NULL), -ENOENT);
	assert_int_equal(th_timing_op_begin_as(f->d, 9, TH_TIMING_SCHEDULE), -EINVAL);
	assert_int_equal(th_timing_op_begin(f->d), 0);
	assert_int_equal(th_timing_op_begin(f->d), -EINPROGRESS);
	/* Ended without a section: counted, never timed. */
	assert_int_equal(th_timing_op_end(f->d, true, NULL), -EINVAL);
	s = th_timing_driver_stats(f->d);
	assert_int_equal(s->ops[0].errors, 1);
	assert_int_equal(s->ops[0].service.count, 0);
	fixture_free(f);
}

static void
test_threads_merge(void **state)
{
	struct fixture *f = fixture_new(TH_TIMING_DELAY_NONE, 0);
	struct th_timing_clock clk2;
	struct th_timing_driver *d2;
	struct th_timing_stats *total = th_timing_stats_create();
	struct th_timing_op_info info;
	int i;

	(void)state;
	assert_non_null(total);
	fixture_start(f);
	th_timing_clock_init_fake(&clk2, T0);
	d2 = th_timing_driver_create(&f->cfg, &clk2, 1);
	assert_non_null(d2);
	assert_int_equal(th_timing_driver_start(d2, T0), 0);
	for (i = 0; i < 5; i++) {
		run_op(f, 0, 1 * MS, 0, &info);
		assert_int_equal(th_timing_op_begin_as(d2, 0, TH_TIMING_SCHEDULE), 0);
		th_timing_record_time(d2);
		th_timing_clock_advance(&clk2, 9 * MS);
		th_timing_record_time(d2);
		th_timing_op_end(d2, true, NULL);
	}
	th_timing_stats_merge(total, th_timing_driver_stats(f->d));
	th_timing_stats_merge(total, th_timing_driver_stats(d2));
	assert_int_equal(total->threads, 2);
	assert_int_equal(total->ops[0].count, 10);
	assert_int_equal(total->ops[0].service.min, 1 * MS);
	assert_int_equal(total->ops[0].service.max, 9 * MS);
	assert_true(total->ops[0].service.mean == 5.0 * MS);
	th_timing_driver_free(d2);
	th_timing_stats_free(total);
	fixture_free(f);
}

static void
test_real_clock_sleeps_until(void **state)
{
	struct th_timing_clock clk;
	uint64_t t, deadline;

	(void)state;
	th_timing_clock_init_real(&clk);
	t = th_timing_clock_now(&clk);
	deadline = t + 2 * MS;
	th_timing_clock_sleep_until(&clk, deadline);
	assert_true(th_timing_clock_now(&clk) >= deadline);
	/* A past deadline returns at once. */
	th_timing_clock_sleep_until(&clk, t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prep_and_validation_excluded),
		cmocka_unit_test(test_pauses_subtract),
		cmocka_unit_test(test_cycle_starts_stay_on_schedule),
		cmocka_unit_test(test_late_start_in_response_not_service),
		cmocka_unit_test(test_think_time_from_previous_end),
		cmocka_unit_test(test_steady_state_boundaries_by_time),
		cmocka_unit_test(test_steady_state_boundaries_by_count),
		cmocka_unit_test(test_auto_timing),
		cmocka_unit_test(test_misuse_is_reported),
		cmocka_unit_test(test_threads_merge),
		cmocka_unit_test(test_real_clock_sleeps_until),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
