/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A filesystem that refuses O_DIRECT (tmpfs before Linux 6.6, some FUSE and
 * network filesystems): simulated by wrapping open/fcntl/pread at link time
 * (-Wl,--wrap), since this machine's filesystems all accept O_DIRECT. The
 * probe must say what happened and name --buffered, and --buffered must work.
 */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "th_probe.h"

/* What the wrapped calls refuse. */
static bool is_open_refused;      /* open with O_DIRECT fails with EINVAL */
static bool is_fcntl_refused;     /* F_SETFL with O_DIRECT fails with EINVAL */
static bool is_read_refused;      /* pread on an O_DIRECT descriptor fails with EINVAL */
static unsigned int direct_reads; /* preads on an O_DIRECT descriptor */

int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __real_fcntl64(int fd, int cmd, ...);
int __wrap_fcntl64(int fd, int cmd, ...);
ssize_t __real_pread64(int fd, void *buf, size_t size, off_t off);
ssize_t __wrap_pread64(int fd, void *buf, size_t size, off_t off);

int
__wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
	va_end(ap);
	if (is_open_refused && (flags & O_DIRECT)) {
		errno = EINVAL;
		return -1;
	}
	return __real_open64(path, flags, mode);
}

int
__wrap_fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	if (is_fcntl_refused && cmd == F_SETFL && (arg & O_DIRECT)) {
		errno = EINVAL;
		return -1;
	}
	return __real_fcntl64(fd, cmd, arg);
}

ssize_t
__wrap_pread64(int fd, void *buf, size_t size, off_t off)
{
	int fl = __real_fcntl64(fd, F_GETFL, 0);

	if (fl >= 0 && (fl & O_DIRECT)) {
		direct_reads++;
		if (is_read_refused) {
			errno = EINVAL;
			return -1;
		}
	}
	return __real_pread64(fd, buf, size, off);
}

static char dir_path[] = "/var/tmp/th-probe-nodirect.XXXXXX";
static char file_path[4200];
static struct th_probe_result res;

static int
setup(void **state)
{
	static uint8_t block[1 << 16];
	int fd;

	(void)state;
	if (mkdtemp(dir_path) == NULL)
		return -1;
	snprintf(file_path, sizeof(file_path), "%s/data", dir_path);
	memset(block, 0x5a, sizeof(block));
	fd = open(file_path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0 || write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
		return -1;
	close(fd);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(file_path);
	rmdir(dir_path);
	return 0;
}

static void
reset(void)
{
	is_open_refused = is_fcntl_refused = is_read_refused = false;
	direct_reads = 0;
}

static void
test_open_refused_names_buffered(void **state)
{
	struct th_probe_config c;

	(void)state;
	reset();
	is_open_refused = true;
	th_probe_config_init(&c);
	c.target = file_path;
	c.count = 10;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "refuses O_DIRECT"));
	assert_non_null(strstr(res.error, "--buffered"));

	c.is_buffered = true;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_false(res.is_direct);
	assert_true(res.is_buffered);
	assert_int_equal(res.samples, 10);
	assert_int_equal(direct_reads, 0);
}

static void
test_read_refused_names_buffered(void **state)
{
	struct th_probe_config c;

	(void)state;
	reset();
	is_read_refused = true;
	th_probe_config_init(&c);
	c.target = file_path;
	c.count = 10;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "EINVAL"));
	assert_non_null(strstr(res.error, "--buffered"));
	assert_int_equal(direct_reads, 1);
}

static void
test_temp_file_refused_names_buffered(void **state)
{
	struct th_probe_config c;

	(void)state;
	reset();
	is_fcntl_refused = true;
	th_probe_config_init(&c);
	c.target = dir_path;
	c.temp_size = 1 << 20;
	c.count = 10;
	assert_int_equal(th_probe_run(&c, &res), -EINVAL);
	assert_non_null(strstr(res.error, "refuses O_DIRECT"));
	assert_non_null(strstr(res.error, "--buffered"));
	c.is_buffered = true;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_int_equal(res.kind, TH_PROBE_KIND_TEMP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_refused_names_buffered),
		cmocka_unit_test(test_read_refused_names_buffered),
		cmocka_unit_test(test_temp_file_refused_names_buffered),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
