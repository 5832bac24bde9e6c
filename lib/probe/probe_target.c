/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The probe's target: a block device, a regular file, or a directory in
 * which a temporary file is made. Everything that can refuse the probe
 * (missing path, empty target, O_DIRECT not supported, a device in use)
 * happens here, before any timing starts.
 */

#include "probe_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define FILL_CHUNK (1u << 20) /* bytes written per call when filling a temporary file */
#define MAX_FAMILY 64         /* a device and the partitions checked with it */

int
probe__fail(struct th_probe_result *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return -err;
}

/* The direct-I/O alignment the kernel reports (statx, Linux 6.1+), else a safe guess. */
static void
find_alignment(struct probe_target *t)
{
	struct statx sx;
	int ssz;

	t->dio_align = 512;
	t->mem_align = 512;
	if (t->kind == TH_PROBE_KIND_BLOCK && ioctl(t->fd, BLKSSZGET, &ssz) == 0 && ssz > 0) {
		t->dio_align = (uint32_t)ssz;
		t->mem_align = (uint32_t)ssz;
	}
#ifdef STATX_DIOALIGN
	if (statx(t->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
		(sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align != 0) {
		t->dio_align = sx.stx_dio_offset_align;
		t->mem_align = sx.stx_dio_mem_align ? sx.stx_dio_mem_align : t->mem_align;
	}
#else
	(void)sx;
#endif
}

/*
 * A filesystem whose blocks are memory (tmpfs, ramfs: /dev/shm, and /tmp on
 * many distributions): there is no disk under it, so the probe would time
 * memory copies. Its name, or NULL.
 */
static const char *
memory_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) != 0)
		return NULL;
	if (sf.f_type == TMPFS_MAGIC)
		return "tmpfs";
	if (sf.f_type == RAMFS_MAGIC)
		return "ramfs";
	return NULL;
}

/* Read a small sysfs file holding "MAJ:MIN". */
static int
read_devno(const char *path, dev_t *dev)
{
	unsigned int maj, min;
	FILE *f = fopen(path, "re");
	int n;

	if (f == NULL)
		return -errno;
	n = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	*dev = makedev(maj, min);
	return 0;
}

/* Does the directory hold anything besides . and ..? */
static bool
has_entries(const char *path)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(path);

	if (d == NULL)
		return false;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			found = true;
			break;
		}
	closedir(d);
	return found;
}

/* Is @p dev in @p family? */
static bool
in_family(const dev_t *family, unsigned int n, dev_t dev)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (family[i] == dev)
			return true;
	return false;
}

/*
 * Check a table of "SOURCE ..." lines (/proc/mounts, /proc/swaps): does any
 * source name a block device of the family? The mount point (or swap type)
 * is reported.
 */
static bool
is_listed(const char *table, const dev_t *family, unsigned int n, char *where, size_t size)
{
	char line[4096], src[2048], dst[2048];
	struct stat st;
	bool found = false;
	FILE *f = fopen(table, "re");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%2047s %2047s", src, dst) != 2 || src[0] != '/')
			continue;
		if (stat(src, &st) == 0 && S_ISBLK(st.st_mode) &&
			in_family(family, n, st.st_rdev)) {
			snprintf(where, size, "%s (%s)", dst, src);
			found = true;
		}
	}
	fclose(f);
	return found;
}

int
probe__check_device_free(uint64_t rdev, const char *path, char *why, size_t why_size)
{
	char dir[128], sub[512], where[4200];
	dev_t family[MAX_FAMILY];
	unsigned int n = 0, i;
	struct dirent *de;
	DIR *d;

	/* The device itself and its partitions: a mounted partition makes the disk busy. */
	family[n++] = (dev_t)rdev;
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	d = opendir(dir);
	if (d != NULL) {
		while ((de = readdir(d)) != NULL && n < MAX_FAMILY) {
			dev_t part = 0;

			if (de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s/partition", dir, de->d_name);
			if (access(sub, F_OK) != 0)
				continue;
			snprintf(sub, sizeof(sub), "%s/%s/dev", dir, de->d_name);
			if (read_devno(sub, &part) == 0)
				family[n++] = part;
		}
		closedir(d);
	}
	if (is_listed("/proc/mounts", family, n, where, sizeof(where))) {
		snprintf(why, why_size, "%s is mounted on %s (/proc/mounts); unmount it first",
			path, where);
		return -EBUSY;
	}
	if (is_listed("/proc/swaps", family, n, where, sizeof(where))) {
		snprintf(why, why_size, "%s is in use as swap (/proc/swaps); swapoff it first",
			path);
		return -EBUSY;
	}
	for (i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "/sys/dev/block/%u:%u/holders", major(family[i]),
			minor(family[i]));
		if (has_entries(sub)) {
			snprintf(why, why_size,
				"%s (or a partition, %u:%u) is held by another device (%s: "
				"device-mapper, md, ...)",
				path, major(family[i]), minor(family[i]), sub);
			return -EBUSY;
		}
	}
	return 0;
}

/* Pseudo-random bytes, so a temporary file is real data (no holes, not compressible). */
static void
fill_random(uint8_t *buf, size_t size, uint64_t *state)
{
	size_t i;

	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t x = *state;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		*state = x;
		memcpy(buf + i, &x, 8);
	}
}

/*
 * A temporary file in directory @p dir: unnamed (O_TMPFILE) where the
 * filesystem allows, else created and unlinked at once, so it disappears
 * when the probe ends, however it ends. Filled with real data and synced,
 * so reads hit the disk's blocks rather than holes.
 */
static int
make_temp(const struct th_probe_config *c, struct probe_target *t, struct th_probe_result *r)
{
	char path[4096];
	struct statvfs sv;
	uint64_t state = c->seed | 1, done = 0;
	uint8_t *buf;
	int fd, err;

	if (c->temp_size == 0)
		return probe__fail(r, EINVAL,
			"%s is a directory: give the size of the temporary file to probe in it "
			"(--size)",
			c->target);
	fd = open(c->target, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (snprintf(path, sizeof(path), "%s/.tracehound-probe.XXXXXX", c->target) >=
			(int)sizeof(path))
			return probe__fail(r, ENAMETOOLONG, "%s: path too long", c->target);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd < 0)
			return probe__fail(r, errno, "cannot create a temporary file in %s: %s",
				c->target, strerror(errno));
		unlink(path);
	}
	/* A file that cannot fit would fill the filesystem for everyone before failing. */
	if (fstatvfs(fd, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < c->temp_size) {
		close(fd);
		return probe__fail(r, ENOSPC,
			"the %" PRIu64 "-byte temporary file does not fit in %s (%" PRIu64
			" bytes free): give a smaller --size",
			c->temp_size, c->target, (uint64_t)sv.f_bavail * sv.f_frsize);
	}
	buf = malloc(FILL_CHUNK);
	if (buf == NULL) {
		close(fd);
		return probe__fail(r, ENOMEM, "out of memory");
	}
	while (done < c->temp_size) {
		size_t n = c->temp_size - done < FILL_CHUNK ? c->temp_size - done : FILL_CHUNK;
		ssize_t w;

		/* A large file takes minutes to write: a stop request ends that too. */
		if (c->stop != NULL && *c->stop) {
			free(buf);
			close(fd);
			return probe__fail(r, EINTR,
				"stopped while filling the temporary file in %s (%" PRIu64
				" of %" PRIu64 " bytes written): nothing was measured",
				c->target, done, c->temp_size);
		}
		fill_random(buf, n, &state);
		w = pwrite(fd, buf, n, (off_t)done);
		if (w <= 0) {
			err = w < 0 ? errno : ENOSPC;
			free(buf);
			close(fd);
			return probe__fail(r, err,
				"cannot fill a %" PRIu64 "-byte temporary file in %s: %s",
				c->temp_size, c->target, strerror(err));
		}
		done += (uint64_t)w;
	}
	free(buf);
	/* On disk, and out of the page cache, before the first timed read. */
	if (fdatasync(fd) != 0) {
		err = errno;
		close(fd);
		return probe__fail(r, err, "fdatasync of the temporary file in %s: %s", c->target,
			strerror(err));
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (!c->is_buffered && fcntl(fd, F_SETFL, O_DIRECT) != 0) {
		err = errno;
		close(fd);
		if (err == EINVAL)
			return probe__fail(r, EINVAL,
				"the filesystem of %s refuses O_DIRECT (EINVAL), so reads would "
				"come from the page cache; rerun with --buffered to read through "
				"the cache, dropping the range before each read",
				c->target);
		return probe__fail(
			r, err, "cannot set O_DIRECT in %s: %s", c->target, strerror(err));
	}
	t->fd = fd;
	t->size = c->temp_size;
	t->is_direct = !c->is_buffered;
	return 0;
}

/* What a probe makes of a file of mode @p st: none when it cannot probe it. */
static enum th_probe_kind
kind_of(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return TH_PROBE_KIND_TEMP;
	if (S_ISBLK(st->st_mode))
		return TH_PROBE_KIND_BLOCK;
	if (S_ISREG(st->st_mode))
		return TH_PROBE_KIND_FILE;
	return TH_PROBE_KIND_NONE;
}

int
th_probe_check_target(
	const char *target, bool is_write, enum th_probe_kind *kind, char *why, size_t why_size)
{
	struct stat st;
	int mode, err;

	*kind = TH_PROBE_KIND_NONE;
	if (target == NULL || target[0] == '\0') {
		snprintf(why, why_size, "no target: give a block device, file or directory");
		return -EINVAL;
	}
	if (stat(target, &st) != 0) {
		err = errno;
		if (err == ENOENT)
			snprintf(why, why_size, "%s: no such file, device or directory", target);
		else
			snprintf(why, why_size, "%s: %s", target, strerror(err));
		return -err;
	}
	*kind = kind_of(&st);
	if (*kind == TH_PROBE_KIND_NONE) {
		snprintf(why, why_size, "%s is not a block device, regular file or directory",
			target);
		return -EINVAL;
	}
	if (*kind == TH_PROBE_KIND_FILE && st.st_size == 0) {
		snprintf(why, why_size,
			"%s is empty (0 bytes): nothing to probe; give a file with data, or a "
			"directory",
			target);
		return -EINVAL;
	}
	/* A directory gets a temporary file; a file or device is read (or written). */
	if (*kind == TH_PROBE_KIND_TEMP)
		mode = W_OK | X_OK;
	else
		mode = is_write ? R_OK | W_OK : R_OK;
	if (access(target, mode) != 0) {
		err = errno;
		snprintf(why, why_size, "%s: %s (the probe %s)", target, strerror(err),
			*kind == TH_PROBE_KIND_TEMP ? "makes a temporary file in it"
			: is_write                  ? "reads and writes it"
						    : "reads it");
		return -err;
	}
	return 0;
}

int
probe__open_target(
	const struct th_probe_config *c, struct probe_target *t, struct th_probe_result *r)
{
	int flags = (c->is_write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
	struct stat st;
	int err;

	t->fd = -1;
	t->kind = TH_PROBE_KIND_NONE;
	t->size = 0;
	t->is_direct = false;
	t->memory_fs = NULL;
	if (c->target == NULL || c->target[0] == '\0')
		return probe__fail(r, EINVAL, "no target: give a block device, file or directory");
	if (stat(c->target, &st) != 0) {
		err = errno;
		if (err == ENOENT)
			return probe__fail(
				r, ENOENT, "%s: no such file, device or directory", c->target);
		return probe__fail(r, err, "%s: %s", c->target, strerror(err));
	}
	t->kind = kind_of(&st);
	if (t->kind == TH_PROBE_KIND_TEMP) {
		err = make_temp(c, t, r);
		if (err != 0)
			return err;
		find_alignment(t);
		t->memory_fs = memory_fs(t->fd);
		return 0;
	}
	if (t->kind == TH_PROBE_KIND_BLOCK) {
		if (c->is_write) {
			char why[280];

			/* Refuse before opening; O_EXCL below catches what the tables miss. */
			err = probe__check_device_free(st.st_rdev, c->target, why, sizeof(why));
			if (err != 0)
				return probe__fail(r, -err, "refusing to write: %s", why);
			flags |= O_EXCL;
		}
	} else if (t->kind == TH_PROBE_KIND_NONE) {
		return probe__fail(r, EINVAL, "%s is not a block device, regular file or directory",
			c->target);
	}
	if (!c->is_buffered)
		flags |= O_DIRECT;
	t->fd = open(c->target, flags);
	if (t->fd < 0) {
		err = errno;
		if (err == EINVAL && !c->is_buffered)
			return probe__fail(r, EINVAL,
				"%s: the filesystem refuses O_DIRECT (open: EINVAL); rerun with "
				"--buffered to read through the page cache, dropping the range "
				"before each read",
				c->target);
		if (err == EBUSY && c->is_write)
			return probe__fail(r, EBUSY,
				"refusing to write: %s is in use (exclusive open: EBUSY; mounted "
				"or claimed by another driver)",
				c->target);
		return probe__fail(r, err, "cannot open %s: %s", c->target, strerror(err));
	}
	t->is_direct = !c->is_buffered;
	/*
	 * posix_fadvise(DONTNEED) drops clean pages only: a file written moments
	 * ago would be read from the cache. Written back once, here, before the
	 * first read, every drop takes.
	 */
	if (c->is_buffered && !c->is_write)
		fdatasync(t->fd);
	if (t->kind == TH_PROBE_KIND_BLOCK) {
		uint64_t size;
		int ro;

		if (ioctl(t->fd, BLKGETSIZE64, &size) != 0) {
			err = errno;
			probe__close_target(t);
			return probe__fail(r, err, "%s: cannot read the device size: %s", c->target,
				strerror(err));
		}
		t->size = size;
		/* A read-only device (losetup -r, a write-protected disk) opens for writing
		 * and fails the first write with EPERM: refuse before one is tried. */
		if (c->is_write && ioctl(t->fd, BLKROGET, &ro) == 0 && ro != 0) {
			probe__close_target(t);
			return probe__fail(r, EROFS,
				"refusing to write: %s is a read-only device (BLKROGET: set so "
				"by losetup -r, blockdev --setro or the hardware); probe it "
				"without --write",
				c->target);
		}
	} else {
		t->size = (uint64_t)st.st_size;
		t->memory_fs = memory_fs(t->fd);
	}
	find_alignment(t);
	return 0;
}

void
probe__close_target(struct probe_target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}
