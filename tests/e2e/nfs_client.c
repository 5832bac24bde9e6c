/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small NFSv3 client for the live end-to-end test. It drives a real server through
 * libnfs's synchronous API and prints one line per NFS-level operation, so that the test
 * can check that every operation a client performed shows up in what tracehound captured:
 *
 *     op=<name> path=<path> [bytes=<n>] rc=<return value>
 *
 * and one line per user-level operation (what a program calling open/close, stat or truncate
 * did), so that the test can score tracehound's open records against it:
 *
 *     OP write path=<path> bytes=<n> size=<n> uid=<n>     one open: create, writes, close
 *     OP read path=<path> bytes=<n> size=<n> uid=<n>      one open: open, reads, close
 *     OP truncate path=<path> size=<n> uid=<n>
 *     OP stat path=<path> uid=<n>
 *
 * bytes is what that open moved, size the file's size as this client left it. The last line
 * is "done write_bytes=<n> read_bytes=<n> ops=<n> failures=<n>". Byte totals are exact:
 * libnfs may split one call into several WRITE or READ RPCs, but the bytes they carry must
 * add up to these numbers. The exit status is 0 only when every operation returned what was
 * expected (a stat of a missing name must fail with ENOENT; everything else must succeed).
 *
 * The sequence is chosen so that each user-level open is one record under tracehound's
 * inference rules, without guessing at timeouts (the capture stops before any idle timeout
 * and flushes the opens in progress):
 * - each file is written in exactly one open (two write opens of one file in a row, with no
 *   read between, may legitimately merge into one record);
 * - a file read twice is read from offset 0 both times, which closes the first read open;
 *   the two reads move different byte counts, so the records cannot be confused;
 * - one file is read by another user (uid 1000), which must be a record of its own with
 *   that uid in its client field;
 * - libnfs keeps no data cache between opens (its page cache is off by default), so every
 *   read goes to the wire and must show its bytes; a stat may show up as a cache read
 *   (0 bytes), which the test reports but does not require.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h> /* NFS_V3 */

/*
 * Write sizes: tiny, odd, a page, an odd size over 64 KiB, and 1 MiB (one WRITE record of
 * ~725 segments at MTU 1500 when the server's wtmax allows it, as ganesha's does).
 */
static const size_t write_sizes[] = {1, 100, 4096, 65539, 1u << 20};

/* A second, small file written by a few odd-sized WRITEs in one open. */
static const size_t small_sizes[] = {10000, 7777, 12223};

/* The user who reads the small file back (AUTH_SYS, no account needed on the server). */
#define OTHER_UID 1000
#define OTHER_GID 1000

struct client {
	struct nfs_context *nfs; /* libnfs context, mounted */
	uint64_t write_bytes;    /* bytes accepted by nfs_pwrite */
	uint64_t read_bytes;     /* bytes returned by nfs_pread */
	unsigned int ops;        /* operations reported */
	unsigned int failures;   /* operations that did not return what was expected */
	int uid;                 /* AUTH_SYS uid the calls carry now */
};

/* Switch the AUTH_SYS credential of the following calls. */
static void
set_user(struct client *c, int uid, int gid)
{
	nfs_set_uid(c->nfs, uid);
	nfs_set_gid(c->nfs, gid);
	c->uid = uid;
}

/*
 * Print one operation and check its result. @p want is the return value expected (0, or a
 * negative errno); a positive @p rc counts as success when @p want is 0 (byte counts).
 */
static void
report(struct client *c, const char *op, const char *path, long long bytes, int rc, int want)
{
	bool ok = want == 0 ? rc >= 0 : rc == want;

	c->ops++;
	if (bytes >= 0)
		printf("op=%s path=%s bytes=%lld rc=%d\n", op, path, bytes, rc);
	else
		printf("op=%s path=%s rc=%d\n", op, path, rc);
	if (!ok) {
		c->failures++;
		fprintf(stderr, "nfs_client: %s %s returned %d, expected %d: %s\n", op, path, rc,
			want, nfs_get_error(c->nfs));
	}
	fflush(stdout);
}

static void
fill(uint8_t *buf, size_t size, unsigned int seed)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)(i * 131u + seed);
}

/*
 * Create @p path and write each of @p sizes at increasing offsets in one open; print the
 * user-level line with the bytes the server accepted.
 */
static uint64_t
write_file(struct client *c, const char *path, const size_t *sizes, size_t n, uint8_t *buf)
{
	struct nfsfh *fh = NULL;
	uint64_t off = 0;
	int rc;

	rc = nfs_creat(c->nfs, path, 0644, &fh);
	report(c, "creat", path, -1, rc, 0);
	if (rc < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t size = sizes[i];

		fill(buf, size, (unsigned int)i);
		rc = nfs_pwrite(c->nfs, fh, off, size, buf);
		report(c, "write", path, (long long)size, rc, 0);
		if (rc > 0) {
			c->write_bytes += (uint64_t)rc;
			off += (uint64_t)rc;
		}
	}
	rc = nfs_fsync(c->nfs, fh);
	report(c, "fsync", path, -1, rc, 0);
	rc = nfs_close(c->nfs, fh);
	report(c, "close", path, -1, rc, 0);
	printf("OP write path=%s bytes=%" PRIu64 " size=%" PRIu64 " uid=%d\n", path, off, off,
		c->uid);
	fflush(stdout);
	return off;
}

/*
 * Read @p path from offset 0 in @p step steps (libnfs splits them into READ RPCs), to its
 * end, or until @p limit bytes when @p limit is not 0; print the user-level line. @p size
 * is the file's size as this client wrote it.
 */
static void
read_file(struct client *c, const char *path, uint8_t *buf, size_t step, uint64_t limit,
	uint64_t size)
{
	struct nfsfh *fh = NULL;
	uint64_t off = 0;
	int rc;

	rc = nfs_open(c->nfs, path, O_RDONLY, &fh);
	report(c, "open", path, -1, rc, 0);
	if (rc < 0)
		return;
	while (limit == 0 || off < limit) {
		rc = nfs_pread(c->nfs, fh, off, step, buf);
		report(c, "read", path, rc > 0 ? rc : 0, rc, 0);
		if (rc <= 0)
			break;
		c->read_bytes += (uint64_t)rc;
		off += (uint64_t)rc;
	}
	rc = nfs_close(c->nfs, fh);
	report(c, "close", path, -1, rc, 0);
	printf("OP read path=%s bytes=%" PRIu64 " size=%" PRIu64 " uid=%d\n", path, off, size,
		c->uid);
	fflush(stdout);
}

static void
list_dir(struct client *c, const char *path)
{
	struct nfsdir *dir = NULL;
	struct nfsdirent *ent;
	long long count = 0;
	int rc;

	rc = nfs_opendir(c->nfs, path, &dir);
	if (rc == 0) {
		while ((ent = nfs_readdir(c->nfs, dir)) != NULL)
			count++;
		nfs_closedir(c->nfs, dir);
	}
	report(c, "readdir", path, count, rc, 0);
}

static int
usage(void)
{
	fprintf(stderr, "usage: nfs_client SERVER EXPORT\n"
			"  e.g. nfs_client 10.99.0.1 /export (NFSv3 over TCP)\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct client c = {0};
	struct nfs_stat_64 st;
	struct statvfs svfs;
	char link_buf[256];
	uint64_t data_size, small_size;
	size_t buf_size = 1u << 20;
	uint8_t *buf;
	int rc;

	if (argc != 3)
		return usage();
	buf = malloc(buf_size);
	c.nfs = nfs_init_context();
	if (buf == NULL || c.nfs == NULL) {
		fprintf(stderr, "nfs_client: out of memory\n");
		return 1;
	}
	nfs_set_version(c.nfs, NFS_V3);
	/* Root, stated rather than inherited, so that the OP lines name the uid on the wire. */
	set_user(&c, 0, 0);
	/* A hung server must fail the test, not hang it until meson's timeout. */
	nfs_set_timeout(c.nfs, 20000);

	rc = nfs_mount(c.nfs, argv[1], argv[2]);
	report(&c, "mount", argv[2], -1, rc, 0);
	if (rc < 0)
		goto out_destroy;

	rc = nfs_mkdir(c.nfs, "/th-dir");
	report(&c, "mkdir", "/th-dir", -1, rc, 0);
	rc = nfs_mkdir(c.nfs, "/th-dir/sub");
	report(&c, "mkdir", "/th-dir/sub", -1, rc, 0);

	data_size = write_file(&c, "/th-dir/data", write_sizes,
		sizeof(write_sizes) / sizeof(write_sizes[0]), buf);
	small_size = write_file(&c, "/th-dir/small", small_sizes,
		sizeof(small_sizes) / sizeof(small_sizes[0]), buf);
	read_file(&c, "/th-dir/data", buf, 256u * 1024u, 0, data_size);
	set_user(&c, OTHER_UID, OTHER_GID);
	read_file(&c, "/th-dir/small", buf, 256u * 1024u, 0, small_size);
	set_user(&c, 0, 0);
	/* From offset 0 again, and only its first 128 KiB: a second, shorter read open. */
	read_file(&c, "/th-dir/data", buf, 64u * 1024u, 128u * 1024u, data_size);

	rc = nfs_stat64(c.nfs, "/th-dir/data", &st);
	report(&c, "stat", "/th-dir/data", rc == 0 ? (long long)st.nfs_size : 0, rc, 0);
	printf("OP stat path=/th-dir/data uid=%d\n", c.uid);
	if (rc == 0 && st.nfs_size != data_size) {
		fprintf(stderr, "nfs_client: size %" PRIu64 " after writing %" PRIu64 " bytes\n",
			(uint64_t)st.nfs_size, data_size);
		c.failures++;
	}
	rc = nfs_stat64(c.nfs, "/th-dir/missing", &st);
	report(&c, "stat", "/th-dir/missing", -1, rc, -ENOENT);

	rc = nfs_truncate(c.nfs, "/th-dir/data", 1000);
	report(&c, "truncate", "/th-dir/data", 1000, rc, 0);
	printf("OP truncate path=/th-dir/data size=1000 uid=%d\n", c.uid);
	rc = nfs_link(c.nfs, "/th-dir/data", "/th-dir/hard");
	report(&c, "link", "/th-dir/hard", -1, rc, 0);
	rc = nfs_symlink(c.nfs, "data", "/th-dir/soft");
	report(&c, "symlink", "/th-dir/soft", -1, rc, 0);
	rc = nfs_readlink(c.nfs, "/th-dir/soft", link_buf, sizeof(link_buf));
	report(&c, "readlink", "/th-dir/soft", -1, rc, 0);
	rc = nfs_rename(c.nfs, "/th-dir/hard", "/th-dir/sub/moved");
	report(&c, "rename", "/th-dir/hard", -1, rc, 0);

	list_dir(&c, "/th-dir");
	rc = nfs_statvfs(c.nfs, "/th-dir", &svfs);
	report(&c, "statvfs", "/th-dir", -1, rc, 0);

	rc = nfs_unlink(c.nfs, "/th-dir/sub/moved");
	report(&c, "unlink", "/th-dir/sub/moved", -1, rc, 0);
	rc = nfs_unlink(c.nfs, "/th-dir/soft");
	report(&c, "unlink", "/th-dir/soft", -1, rc, 0);
	rc = nfs_unlink(c.nfs, "/th-dir/data");
	report(&c, "unlink", "/th-dir/data", -1, rc, 0);
	rc = nfs_unlink(c.nfs, "/th-dir/small");
	report(&c, "unlink", "/th-dir/small", -1, rc, 0);
	rc = nfs_rmdir(c.nfs, "/th-dir/sub");
	report(&c, "rmdir", "/th-dir/sub", -1, rc, 0);
	rc = nfs_rmdir(c.nfs, "/th-dir");
	report(&c, "rmdir", "/th-dir", -1, rc, 0);

	rc = nfs_umount(c.nfs);
	report(&c, "umount", argv[2], -1, rc, 0);

out_destroy:
	printf("done write_bytes=%" PRIu64 " read_bytes=%" PRIu64 " ops=%u failures=%u\n",
		c.write_bytes, c.read_bytes, c.ops, c.failures);
	nfs_destroy_context(c.nfs);
	free(buf);
	return c.failures == 0 ? 0 : 1;
}
