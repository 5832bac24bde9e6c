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
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "th_probe.h"

/* What the wrapped calls refuse. */
static bool is_open_refused;      /* open with O_DIRECT fails with EINVAL */
static bool is_fcntl_refused;     /* F_SETFL with O_DIRECT fails with EINVAL */
static bool is_read_refused;      /* pread on an O_DIRECT descriptor fails with EINVAL */
static unsigned int direct_reads; /* preads on an O_DIRECT descriptor */
static unsigned int cached_writes; /* writes left in the page cache: no O_DIRECT, no sync */
static int watched_fd = -1;        /* the test file, to see what the cache holds of it */
static size_t watched_size;        /* its bytes */
static unsigned int cached_reads;  /* buffered preads whose block was in the page cache */

int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __real_fcntl64(int fd, int cmd, ...);
int __wrap_fcntl64(int fd, int cmd, ...);
ssize_t __real_pread64(int fd, void *buf, size_t size, off_t off);
ssize_t __wrap_pread64(int fd, void *buf, size_t size, off_t off);
ssize_t __real_pwrite64(int fd, const void *buf, size_t size, off_t off);
ssize_t __wrap_pwrite64(int fd, const void *buf, size_t size, off_t off);
ssize_t __real_pwritev64v2(int fd, const struct iovec *iov, int n, off_t off, int flags);
ssize_t __wrap_pwritev64v2(int fd, const struct iovec *iov, int n, off_t off, int flags);

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

	/* A buffered read the probe times must find its block out of the cache. */
	if (fl >= 0 && !(fl & O_DIRECT) && watched_fd >= 0 && (size_t)off + size <= watched_size) {
		long page = sysconf(_SC_PAGESIZE);
		size_t first = (size_t)off / (size_t)page * (size_t)page;
		size_t n = ((size_t)off + size - first + (size_t)page - 1) / (size_t)page;
		unsigned char vec[64];
		/* Mapped only to ask: a mapping kept open would pin the pages itself. */
		void *map = mmap(NULL, watched_size, PROT_READ, MAP_SHARED, watched_fd, 0);

		if (map != MAP_FAILED && n <= sizeof(vec) &&
			mincore((uint8_t *)map + first, n * (size_t)page, vec) == 0)
			for (size_t i = 0; i < n; i++)
				if (vec[i] & 1) {
					cached_reads++;
					break;
				}
		if (map != MAP_FAILED)
			munmap(map, watched_size);
	}
	if (fl >= 0 && (fl & O_DIRECT)) {
		direct_reads++;
		if (is_read_refused) {
			errno = EINVAL;
			return -1;
		}
	}
	return __real_pread64(fd, buf, size, off);
}

/* Whether a write with @p flags (RWF_*) on @p fd reaches the device before it returns. */
static bool
is_synced(int fd, int flags)
{
	int fl = __real_fcntl64(fd, F_GETFL, 0);

	return fl < 0 || (fl & (O_DIRECT | O_DSYNC)) != 0 || (flags & (RWF_DSYNC | RWF_SYNC)) != 0;
}

ssize_t
__wrap_pwrite64(int fd, const void *buf, size_t size, off_t off)
{
	cached_writes += !is_synced(fd, 0);
	return __real_pwrite64(fd, buf, size, off);
}

ssize_t
__wrap_pwritev64v2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	cached_writes += !is_synced(fd, flags);
	return __real_pwritev64v2(fd, iov, n, off, flags);
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
	cached_writes = 0;
	cached_reads = 0;
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

/* A buffered write probe times writes to the device, not copies into the page cache. */
static void
test_buffered_write_reaches_device(void **state)
{
	struct th_probe_config c;

	(void)state;
	reset();
	th_probe_config_init(&c);
	c.target = file_path;
	c.count = 10;
	c.is_buffered = true;
	c.is_write = true;
	assert_int_equal(th_probe_run(&c, &res), 0);
	assert_int_equal(res.samples, 10);
	assert_int_equal(cached_writes, 0);
}

/*
 * A file written moments ago, in one 64 KiB write: its pages are dirty, which
 * posix_fadvise(DONTNEED) leaves in the cache, and held in one large folio,
 * which a 4 KiB DONTNEED cannot drop. A buffered probe must still read
 * every block from the device, not time the cache.
 */
static void
test_buffered_read_of_fresh_data_misses_cache(void **state)
{
	static uint8_t block[1 << 16];
	struct th_probe_config c;
	int fd;

	(void)state;
	reset();
	memset(block, 0xa5, sizeof(block));
	fd = open(file_path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, block, sizeof(block), 0), (ssize_t)sizeof(block));
	close(fd);
	watched_fd = open(file_path, O_RDONLY);
	assert_true(watched_fd >= 0);
	watched_size = sizeof(block);
	th_probe_config_init(&c);
	c.target = file_path;
	c.count = 20;
	c.is_buffered = true;
	assert_int_equal(th_probe_run(&c, &res), 0);
	close(watched_fd);
	watched_fd = -1;
	assert_int_equal(res.samples, 20);
	assert_int_equal(cached_reads, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_refused_names_buffered),
		cmocka_unit_test(test_read_refused_names_buffered),
		cmocka_unit_test(test_temp_file_refused_names_buffered),
		cmocka_unit_test(test_buffered_write_reaches_device),
		cmocka_unit_test(test_buffered_read_of_fresh_data_misses_cache),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
