/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * th_probe_run on real files: sample counts and warm-up, offsets inside the
 * range and aligned, writes only with is_write and only inside the range,
 * the temporary file of a directory target, and the errors a user meets.
 * The schedule and cycle-time tests use a stepping fake clock.
 */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "th_probe.h"

#define FILE_SIZE (4u << 20)

struct seen {
	uint64_t count;        /* samples seen */
	uint64_t warmup;       /* of which warm-up */
	uint64_t last_index;   /* index of the last one */
	bool is_warmup_after;  /* a warm-up sample came after a measured one */
	uint64_t lo, hi;       /* allowed offsets [lo, hi] */
	uint32_t bs;           /* block size */
	uint64_t bad_offsets;  /* outside [lo, hi] or unaligned */
	uint64_t starts[64];   /* start_ns of the first samples */
	uint64_t service[64];  /* service_ns of the first samples */
	uint64_t response[64]; /* response_ns of the first samples */
};

static void
on_sample(void *arg, const struct th_probe_sample *s)
{
	struct seen *v = arg;

	if (v->count < 64) {
		v->starts[v->count] = s->start_ns;
		v->service[v->count] = s->service_ns;
		v->response[v->count] = s->response_ns;
	}
	if (s->is_warmup && v->count > v->warmup)
		v->is_warmup_after = true;
	v->count++;
	v->warmup += s->is_warmup;
	v->last_index = s->index;
	if (s->offset < v->lo || s->offset > v->hi || (s->offset - v->lo) % v->bs != 0)
		v->bad_offsets++;
}

static char dir_path[] = "/var/tmp/th-probe-test.XXXXXX";
static char file_path[4096];
static struct th_probe_result res;

/* A file of FILE_SIZE bytes of a known pattern. */
static void
make_file(const char *path, size_t size)
{
	uint8_t *buf = malloc(size);
	int fd;

	assert_non_null(buf);
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
}

static uint8_t *
slurp(const char *path, size_t size)
{
	uint8_t *buf = malloc(size);
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, size), (ssize_t)size);
	close(fd);
	return buf;
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir_path) == NULL)
		return -1;
	snprintf(file_path, sizeof(file_path), "%s/data", dir_path);
	make_file(file_path, FILE_SIZE);
	return 0;
}

static int
teardown(void **state)
{
	char p[4200];

	(void)state;
	unlink(file_path);
	snprintf(p, sizeof(p), "%s/empty", dir_path);
	unlink(p);
	rmdir(dir_path);
	return 0;
}

static void
base_config(struct th_probe_config *c, struct seen *v)
{
	th_probe_config_init(c);
	c->target = file_path;
	memset(v, 0, sizeof(*v));
	v->lo = 0;
	v->hi = FILE_SIZE - 4096;
	v->bs = 4096;
	c->on_sample = on_sample;
	c->sample_arg = v;
}

static void
test_count_and_warmup(void **state)
{
	struct th_probe_config c;
	struct seen v;

	(void)state;
	base_config(&c, &v);
	c.count = 50;
	c.warmup = 7;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_int_equal(v.count, 57);
	assert_int_equal(v.warmup, 7);
	assert_false(v.is_warmup_after);
	assert_int_equal(res.samples, 50);
	assert_int_equal(res.warmup, 7);
	assert_int_equal(res.service.count, 50);
	assert_int_equal(v.bad_offsets, 0);
	assert_true(res.is_direct);
	assert_int_equal(res.kind, TH_PROBE_KIND_FILE);
	assert_true(res.service.min > 0);
	assert_true(th_probe_iops_latency(&res) > 0);
}

static void
test_range_respected(void **state)
{
	struct th_probe_config c;
	struct seen v;

	(void)state;
	base_config(&c, &v);
	c.offset = 1u << 20;
	c.length = 64 * 1024;
	c.count = 400;
	v.lo = c.offset;
	v.hi = c.offset + c.length - 4096;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_int_equal(v.count, 400);
	assert_int_equal(v.bad_offsets, 0);
	assert_int_equal(res.range_offset, 1u << 20);
	assert_int_equal(res.range_length, 64 * 1024);
}

/* Without is_write nothing changes; with it, only blocks inside the range change. */
static void
test_write_only_when_asked_and_in_range(void **state)
{
	struct th_probe_config c;
	struct seen v;
	uint8_t *before, *after;
	size_t i, changed_in = 0, changed_out = 0;

	(void)state;
	before = slurp(file_path, FILE_SIZE);
	base_config(&c, &v);
	c.count = 200;
	assert_int_equal(th_probe_run(&c, &res), 0);
	after = slurp(file_path, FILE_SIZE);
	assert_memory_equal(before, after, FILE_SIZE);
	free(after);

	base_config(&c, &v);
	c.is_write = true;
	c.offset = 2u << 20;
	c.length = 32 * 1024;
	c.count = 100;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_true(res.is_write);
	after = slurp(file_path, FILE_SIZE);
	for (i = 0; i < FILE_SIZE; i++) {
		bool inside = i >= c.offset && i < c.offset + c.length;

		if (before[i] != after[i]) {
			changed_in += inside;
			changed_out += !inside;
		}
	}
	assert_int_equal(changed_out, 0);
	assert_true(changed_in > 0);
	free(after);
	free(before);
	make_file(file_path, FILE_SIZE);
}

static void
test_errors(void **state)
{
	struct th_probe_config c;
	struct seen v;
	char p[4200];
	int fd;

	(void)state;
	base_config(&c, &v);
	c.target = "/nonexistent/th-probe";
	assert_int_equal(th_probe_run(&c, &res), -ENOENT);
	assert_non_null(strstr(res.error, "/nonexistent/th-probe"));
	assert_non_null(strstr(res.error, "no such"));

	snprintf(p, sizeof(p), "%s/empty", dir_path);
	fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	base_config(&c, &v);
	c.target = p;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "empty (0 bytes)"));

	base_config(&c, &v);
	c.block_size = 1000;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "block size 1000 is not a multiple of"));

	base_config(&c, &v);
	c.block_size = 8u << 20;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "larger than the probed range"));

	base_config(&c, &v);
	c.offset = 1u << 20;
	c.length = FILE_SIZE;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "runs past the end"));

	base_config(&c, &v);
	c.iodepth = 4;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "io_uring"));
}

static unsigned int
count_entries(const char *path)
{
	unsigned int n = 0;
	struct dirent *de;
	DIR *d = opendir(path);

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.' || strncmp(de->d_name, ".tracehound", 11) == 0;
	closedir(d);
	return n;
}

static void
test_directory_temp_file(void **state)
{
	struct th_probe_config c;
	struct seen v;
	unsigned int before = count_entries(dir_path);

	(void)state;
	base_config(&c, &v);
	c.target = dir_path;
	c.temp_size = 0;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "--size"));

	c.temp_size = 2u << 20;
	c.count = 100;
	v.hi = c.temp_size - 4096;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_int_equal(res.kind, TH_PROBE_KIND_TEMP);
	assert_int_equal(res.target_size, 2u << 20);
	assert_int_equal(v.bad_offsets, 0);
	assert_int_equal(count_entries(dir_path), before);
}

static void
test_uring_depth(void **state)
{
	struct th_probe_config c;
	struct seen v;
	int err;

	(void)state;
	base_config(&c, &v);
	c.engine = TH_PROBE_ENGINE_URING;
	c.iodepth = 4;
	c.count = 200;
	c.warmup = 3;
	err = th_probe_run(&c, &res);
	if (err == -ENOSYS || err == -EPERM) {
		assert_non_null(strstr(res.error, "io_uring"));
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(v.count, 203);
	assert_int_equal(res.samples, 200);
	assert_int_equal(res.warmup, 3);
	assert_int_equal(v.bad_offsets, 0);
}

/* A fake clock that moves by step_ns at every read, so each I/O "takes" time. */
struct step_clock {
	struct th_timing_clock c; /* first: the callbacks get a pointer to it */
	uint64_t step_ns;         /* advance per read */
};

static uint64_t
step_now(struct th_timing_clock *c)
{
	struct step_clock *s = (struct step_clock *)c;

	s->c.fake_ns += s->step_ns;
	return s->c.fake_ns;
}

static void
step_sleep(struct th_timing_clock *c, uint64_t deadline)
{
	if (deadline > c->fake_ns)
		c->fake_ns = deadline;
}

static void
step_clock_init(struct step_clock *s, uint64_t step_ns)
{
	th_timing_clock_init_fake(&s->c, 1000000000u);
	s->c.now = step_now;
	s->c.sleep_until = step_sleep;
	s->step_ns = step_ns;
}

/* Cycle time: starts stay on the schedule; when I/O outlasts the cycle, response shows it. */
static void
test_cycle_time_fake_clock(void **state)
{
	struct th_probe_config c;
	struct step_clock clk;
	struct seen v;
	uint64_t i;

	(void)state;
	step_clock_init(&clk, 1000);
	base_config(&c, &v);
	c.clock = &clk.c;
	c.cycle_ns = 1000000;
	c.count = 20;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_int_equal(v.count, 20);
	for (i = 0; i < 20; i++) {
		assert_true(v.starts[i] >= i * 1000000);
		assert_true(v.starts[i] < i * 1000000 + 100000);
		assert_true(v.service[i] > 0);
	}
	assert_int_equal(res.late, 0);
	assert_true(th_hist_percentile(&res.response, 99) < 200000);

	/* Each clock read now moves 1.5 ms, a read takes longer than the 1 ms cycle: the probe
	 * falls further behind. */
	step_clock_init(&clk, 1500000);
	base_config(&c, &v);
	c.clock = &clk.c;
	c.cycle_ns = 1000000;
	c.count = 20;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_true(res.late >= 18);
	assert_true(v.response[19] > v.service[19] + 10000000);
	assert_true(
		th_hist_percentile(&res.response, 50) > 2 * th_hist_percentile(&res.service, 50));
}

/* The stop flag that stop_sleep() raises, and the clock time it raises it at. */
static volatile int stop_flag;
static uint64_t stop_at_ns;

/* A sleep of the stepping clock that asks the probe to stop once it sleeps past stop_at_ns. */
static void
stop_sleep(struct th_timing_clock *c, uint64_t deadline)
{
	step_sleep(c, deadline);
	if (c->fake_ns >= stop_at_ns)
		stop_flag = 1;
}

/*
 * Stopped while it waits for its next paced start, a probe's wall time ends at its last I/O
 * with either engine: the wait did no I/O, and IOPS by wall time would otherwise depend on
 * when the user pressed Ctrl-C (io_uring's ran to the stop).
 */
static void
test_stopped_wall_time(void **state)
{
	static const enum th_probe_engine engines[] = {
		TH_PROBE_ENGINE_PSYNC, TH_PROBE_ENGINE_URING};
	const uint64_t sec = 1000000000u;

	(void)state;
	for (unsigned int i = 0; i < 2; i++) {
		struct th_probe_config c;
		struct step_clock clk;
		struct seen v;
		int err;

		step_clock_init(&clk, 1000);
		clk.c.sleep_until = stop_sleep;
		base_config(&c, &v);
		c.clock = &clk.c;
		c.engine = engines[i];
		c.cycle_ns = sec; /* starts at 0, 1, 2, 3 s; stopped in the wait for 4 s */
		c.count = 10;
		c.stop = &stop_flag;
		stop_flag = 0;
		stop_at_ns = clk.c.fake_ns + 3 * sec + sec / 2;
		err = th_probe_run(&c, &res);
		if (err == -ENOSYS || err == -EPERM)
			continue; /* no io_uring here: test_uring_depth says so */
		assert_int_equal(err, 0);
		assert_true(res.is_stopped);
		assert_int_equal(res.samples, 4);
		assert_true(res.wall_ns >= 3 * sec);
		assert_true(res.wall_ns < 3 * sec + sec / 10);
	}
}

static void
test_schedule_alarm(void **state)
{
	struct th_probe_schedule s;
	struct th_probe_config c;
	struct step_clock clk;
	struct seen v;
	bool is_alarm;
	const uint64_t sec = 1000000000u;

	(void)state;
	step_clock_init(&clk, 100000); /* every clock read: 100 µs */
	base_config(&c, &v);
	c.clock = &clk.c;
	c.count = 30;
	c.cycle_ns = 20000000; /* 50 IOPS */
	assert_int_equal(th_probe_schedule_init(&s, &c, 600 * sec, 99.0, 50000, 0), -0);
	assert_int_equal(th_probe_schedule_init(&s, &c, 0, 99.0, 50000, 0), -EINVAL);
	assert_int_equal(th_probe_schedule_init(&s, &c, 600 * sec, 101.0, 50000, 0), -EINVAL);
	assert_int_equal(th_probe_schedule_init(&s, &c, 600 * sec, 99.0, 50000, 0), 0);

	assert_int_equal(th_probe_schedule_poll(&s, 0, &res, &is_alarm), 1);
	assert_true(is_alarm); /* p99 >= 100 µs > 50 µs */
	assert_true(s.last_value_ns >= 100000);
	assert_int_equal(res.samples, 30);
	assert_int_equal(th_probe_schedule_poll(&s, 300 * sec, &res, &is_alarm), 0);
	assert_false(is_alarm);
	assert_int_equal(th_probe_schedule_poll(&s, 600 * sec, &res, &is_alarm), 1);
	/* A poll that comes 2.5 intervals late runs once and skips the slot it missed. */
	assert_int_equal(th_probe_schedule_poll(&s, 2100 * sec, &res, &is_alarm), 1);
	assert_int_equal(s.skipped, 1);
	assert_int_equal(s.next_ns, 2400 * sec);
	assert_int_equal(s.runs, 3);
	assert_int_equal(s.alarms, 3);

	/* A threshold above what the disk does: no alarm. */
	assert_int_equal(th_probe_schedule_init(&s, &c, 600 * sec, 99.0, sec, 0), 0);
	assert_int_equal(th_probe_schedule_poll(&s, 0, &res, &is_alarm), 1);
	assert_false(is_alarm);
	assert_int_equal(s.alarms, 0);

	/* A probe that cannot run is counted and the schedule moves on. */
	c.target = "/nonexistent/th-probe";
	assert_int_equal(th_probe_schedule_init(&s, &c, 600 * sec, 99.0, sec, 0), 0);
	assert_int_equal(th_probe_schedule_poll(&s, 0, &res, &is_alarm), -ENOENT);
	assert_int_equal(s.failures, 1);
	assert_int_equal(s.next_ns, 600 * sec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_and_warmup),
		cmocka_unit_test(test_range_respected),
		cmocka_unit_test(test_write_only_when_asked_and_in_range),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_directory_temp_file),
		cmocka_unit_test(test_uring_depth),
		cmocka_unit_test(test_cycle_time_fake_clock),
		cmocka_unit_test(test_stopped_wall_time),
		cmocka_unit_test(test_schedule_alarm),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
