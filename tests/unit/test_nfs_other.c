/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The other programs: NFSv2, MOUNT v1/v3, portmap v2, NFSv4 COMPOUND
 * recognition; program, procedure and status names; the handle hash.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xdr_build.h"

#include "th_nfs.h"

static const uint8_t FH2[32] = {0x01, 0x00, 0x00, 0x07, 0xca, 0xfe, 0xba, 0xbe, [31] = 0x5a};

static void
put_fh2(struct xb *x)
{
	put_fixed(x, FH2, sizeof(FH2));
}

/* NFSv2 fattr */
static void
put_fattr2(struct xb *x, uint32_t type, uint32_t mode)
{
	put32(x, type);
	put32(x, mode);
	put32(x, 2);     /* nlink */
	put32(x, 500);   /* uid */
	put32(x, 600);   /* gid */
	put32(x, 12345); /* size */
	put32(x, 8192);  /* blocksize */
	put32(x, 0);     /* rdev */
	put32(x, 8);     /* blocks */
	put32(x, 3);     /* fsid */
	put32(x, 777);   /* fileid */
	put32(x, 1);     /* atime */
	put32(x, 2);
	put32(x, 1500000000); /* mtime */
	put32(x, 250000);
	put32(x, 1500000001); /* ctime */
	put32(x, 1);
}

static enum th_nfs_status
call(uint32_t prog, uint32_t vers, uint32_t proc, const struct xb *x, struct th_nfs_call *c)
{
	memset(c, 0, sizeof(*c));
	return th_nfs_decode_call(prog, vers, proc, x->b, x->n, c);
}

static enum th_nfs_status
reply(uint32_t prog, uint32_t vers, uint32_t proc, const struct xb *x, struct th_nfs_reply *r)
{
	memset(r, 0, sizeof(*r));
	return th_nfs_decode_reply(prog, vers, proc, x->b, x->n, r);
}

/* Every prefix from its own allocation: SHORT below @p ok_from, @p full from there on. */
static void
check_prefixes(uint32_t prog, uint32_t vers, uint32_t proc, bool is_reply, const struct xb *x,
	size_t ok_from, enum th_nfs_status full)
{
	size_t n;

	for (n = 0; n <= x->n; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		enum th_nfs_status st;
		struct th_nfs_call c = {0};
		struct th_nfs_reply r = {0};

		assert_non_null(copy);
		memcpy(copy, x->b, n);
		if (is_reply)
			st = th_nfs_decode_reply(prog, vers, proc, copy, n, &r);
		else
			st = th_nfs_decode_call(prog, vers, proc, copy, n, &c);
		free(copy);
		assert_int_equal(st, n >= ok_from ? full : TH_NFS_SHORT);
	}
}

/* ---- NFSv2 ---- */

static void
test_v2_getattr(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put_fh2(&x);
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_GETATTR, &x, &c), TH_NFS_OK);
	assert_int_equal(c.fh.len, 32);
	assert_memory_equal(c.fh.data, FH2, 32);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_GETATTR, false, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put32(&x, 0);
	put_fattr2(&x, 1, 0100644);
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_GETATTR, &x, &r), TH_NFS_OK);
	assert_true(r.attr.is_present);
	assert_int_equal(r.attr.type, TH_NFS_REG);
	assert_int_equal(r.attr.mode, 0644);
	assert_int_equal(r.attr.nlink, 2);
	assert_int_equal(r.attr.uid, 500);
	assert_int_equal(r.attr.gid, 600);
	assert_true(r.attr.size == 12345);
	assert_true(r.attr.fileid == 777);
	/* v2 times are microseconds */
	assert_true(r.attr.mtime_ns == 1500000000ull * 1000000000ull + 250000000ull);
	assert_true(r.attr.ctime_ns == 1500000001ull * 1000000000ull + 1000ull);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_GETATTR, true, &x, x.n, TH_NFS_OK);

	/* Failure arms are void. */
	x.n = 0;
	put32(&x, 70);
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_GETATTR, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 70);
	assert_false(r.attr.is_present);
}

static void
test_v2_types(void **state)
{
	static const struct {
		uint32_t wire, mode, type;
	} map[] = {
		{0, 0, TH_NFS_NON}, {2, 040755, TH_NFS_DIR}, {3, 060600, TH_NFS_BLK},
		{4, 020600, TH_NFS_CHR}, {5, 0120777, TH_NFS_LNK}, {6, 0140755, TH_NFS_SOCK},
		{7, 0, TH_NFS_NON}, {8, 010644, TH_NFS_FIFO},
		{4, 010644, TH_NFS_FIFO}, /* NFCHR with S_IFIFO mode bits: a FIFO */
	};
	struct th_nfs_reply r;
	struct xb x;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		x.n = 0;
		put32(&x, 0);
		put_fattr2(&x, map[i].wire, map[i].mode);
		assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_GETATTR, &x, &r), TH_NFS_OK);
		assert_int_equal(r.attr.type, map[i].type);
	}
	x.n = 0;
	put32(&x, 0);
	put_fattr2(&x, 9, 0);
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_GETATTR, &x, &r), TH_NFS_MALFORMED);
}

static void
test_v2_lookup_create(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put_fh2(&x);
	put_str(&x, "etc");
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_LOOKUP, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "etc");
	assert_int_equal(c.fh.len, 32);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_LOOKUP, false, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put32(&x, 0);
	put_fh2(&x);
	put_fattr2(&x, 2, 040755);
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_LOOKUP, &x, &r), TH_NFS_OK);
	assert_int_equal(r.fh.len, 32);
	assert_int_equal(r.attr.type, TH_NFS_DIR);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_LOOKUP, true, &x, x.n, TH_NFS_OK);

	/* CREATE with sattr: -1 leaves a field alone, size 0 truncates */
	x.n = 0;
	put_fh2(&x);
	put_str(&x, "f");
	put32(&x, 0600);
	put32(&x, UINT32_MAX);
	put32(&x, UINT32_MAX);
	put32(&x, 0);
	put64(&x, UINT64_MAX);
	put64(&x, UINT64_MAX);
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_CREATE, &x, &c), TH_NFS_OK);
	assert_true(c.has_set_mode);
	assert_int_equal(c.set_mode, 0600);
	assert_true(c.has_set_size);
	assert_true(c.set_size == 0);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_CREATE, false, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put_fh2(&x);
	put32(&x, UINT32_MAX);
	put32(&x, UINT32_MAX);
	put32(&x, UINT32_MAX);
	put32(&x, UINT32_MAX);
	put64(&x, UINT64_MAX);
	put64(&x, UINT64_MAX);
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_SETATTR, &x, &c), TH_NFS_OK);
	assert_false(c.has_set_mode);
	assert_false(c.has_set_size);
}

static void
test_v2_read_write(void **state)
{
	static const uint8_t data[10];
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};
	size_t head;

	(void)state;
	put_fh2(&x);
	put32(&x, 16384);
	put32(&x, 8192);
	put32(&x, 0);
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_READ, &x, &c), TH_NFS_OK);
	assert_true(c.offset == 16384);
	assert_int_equal(c.count, 8192);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_READ, false, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put32(&x, 0);
	put_fattr2(&x, 1, 0644);
	head = x.n + 4;
	put_opaque(&x, data, sizeof(data));
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_READ, &x, &r), TH_NFS_OK);
	assert_int_equal(r.count, sizeof(data));
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_READ, true, &x, head, TH_NFS_OK);

	x.n = 0;
	put_fh2(&x);
	put32(&x, 0);
	put32(&x, 4096);
	put32(&x, 0);
	head = x.n + 4;
	put_opaque(&x, data, sizeof(data));
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_WRITE, &x, &c), TH_NFS_OK);
	assert_true(c.offset == 4096);
	assert_int_equal(c.count, sizeof(data));
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_WRITE, false, &x, head, TH_NFS_OK);
}

static void
test_v2_names(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh2(&x);
	put_str(&x, "a");
	put_fh2(&x);
	put_str(&x, "b");
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_RENAME, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "a");
	assert_string_equal(c.name2.s, "b");
	assert_int_equal(c.fh2.len, 32);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_RENAME, false, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put_fh2(&x);
	put_str(&x, "sym");
	put_str(&x, "/target");
	put32(&x, 0777);
	put32(&x, UINT32_MAX);
	put32(&x, UINT32_MAX);
	put32(&x, UINT32_MAX);
	put64(&x, UINT64_MAX);
	put64(&x, UINT64_MAX);
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_SYMLINK, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "sym");
	assert_string_equal(c.name2.s, "/target");
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_SYMLINK, false, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put_fh2(&x);
	put_fh2(&x);
	put_str(&x, "hard");
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_LINK, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "hard");
	assert_int_equal(c.fh2.len, 32);
}

static void
test_v2_readdir_statfs(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};
	size_t cut;

	(void)state;
	put_fh2(&x);
	put32(&x, 42); /* cookie */
	put32(&x, 1024);
	assert_int_equal(call(TH_PROG_NFS, 2, TH_NFS2_READDIR, &x, &c), TH_NFS_OK);
	assert_true(c.offset == 42);
	assert_int_equal(c.count, 1024);

	x.n = 0;
	put32(&x, 0);
	put32(&x, 1);
	put32(&x, 11);
	put_str(&x, "one");
	put32(&x, 1);
	cut = x.n;
	put32(&x, 1);
	put32(&x, 12);
	put_str(&x, "two");
	put32(&x, 2);
	put32(&x, 0);
	put32(&x, 1);
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_READDIR, &x, &r), TH_NFS_OK);
	assert_int_equal(r.count, 2);
	assert_false(r.is_count_partial);
	assert_true(r.eof);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_READDIR, true, &x, x.n, TH_NFS_OK);
	x.n = cut + 8;
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_READDIR, &x, &r), TH_NFS_SHORT);
	assert_int_equal(r.count, 1);
	assert_true(r.is_count_partial); /* the second entry was cut */
	assert_false(r.eof);

	x.n = 0;
	put32(&x, 0);
	put32(&x, 8192);
	put32(&x, 4096);
	put32(&x, 1000);
	put32(&x, 500);
	put32(&x, 400);
	assert_int_equal(reply(TH_PROG_NFS, 2, TH_NFS2_STATFS, &x, &r), TH_NFS_OK);
	check_prefixes(TH_PROG_NFS, 2, TH_NFS2_STATFS, true, &x, x.n, TH_NFS_OK);
	assert_int_equal(call(TH_PROG_NFS, 2, 18, &x, &c), TH_NFS_UNKNOWN_PROC);
}

/* ---- MOUNT ---- */

static void
test_mount(void **state)
{
	static const uint8_t fh3[] = {1, 0, 7, 0, 2, 0, 0, 0, 0, 0, 0, 0};
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};
	uint32_t vers;

	(void)state;
	for (vers = 1; vers <= 3; vers += 2) {
		x.n = 0;
		put_str(&x, "/export/home");
		assert_int_equal(call(TH_PROG_MOUNT, vers, TH_MOUNT_MNT, &x, &c), TH_NFS_OK);
		assert_string_equal(c.name.s, "/export/home");
		check_prefixes(TH_PROG_MOUNT, vers, TH_MOUNT_MNT, false, &x, x.n, TH_NFS_OK);
		assert_int_equal(call(TH_PROG_MOUNT, vers, TH_MOUNT_UMNT, &x, &c), TH_NFS_OK);
		assert_string_equal(c.name.s, "/export/home");
	}

	/* v1 fhstatus: a 32-byte handle */
	x.n = 0;
	put32(&x, 0);
	put_fh2(&x);
	assert_int_equal(reply(TH_PROG_MOUNT, 1, TH_MOUNT_MNT, &x, &r), TH_NFS_OK);
	assert_int_equal(r.fh.len, 32);
	assert_memory_equal(r.fh.data, FH2, 32);
	check_prefixes(TH_PROG_MOUNT, 1, TH_MOUNT_MNT, true, &x, x.n, TH_NFS_OK);

	/* v3 mountres3: a variable handle and the auth flavors */
	x.n = 0;
	put32(&x, 0);
	put_opaque(&x, fh3, sizeof(fh3));
	put32(&x, 2);
	put32(&x, 1);
	put32(&x, 390003);
	assert_int_equal(reply(TH_PROG_MOUNT, 3, TH_MOUNT_MNT, &x, &r), TH_NFS_OK);
	assert_int_equal(r.fh.len, sizeof(fh3));
	assert_memory_equal(r.fh.data, fh3, sizeof(fh3));
	check_prefixes(TH_PROG_MOUNT, 3, TH_MOUNT_MNT, true, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put32(&x, 13); /* ACCES */
	assert_int_equal(reply(TH_PROG_MOUNT, 3, TH_MOUNT_MNT, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 13);
	assert_int_equal(r.fh.len, 0);

	x.n = 0;
	put32(&x, 0);
	put_opaque(&x, fh3, sizeof(fh3));
	put32(&x, 100000);
	assert_int_equal(reply(TH_PROG_MOUNT, 3, TH_MOUNT_MNT, &x, &r), TH_NFS_MALFORMED);

	/* EXPORT and DUMP: entries counted */
	x.n = 0;
	put32(&x, 1);
	put_str(&x, "/export");
	put32(&x, 1);
	put_str(&x, "*.lab");
	put32(&x, 0);
	put32(&x, 1);
	put_str(&x, "/scratch");
	put32(&x, 0);
	put32(&x, 0);
	assert_int_equal(reply(TH_PROG_MOUNT, 3, TH_MOUNT_EXPORT, &x, &r), TH_NFS_OK);
	assert_int_equal(r.count, 2);
	check_prefixes(TH_PROG_MOUNT, 3, TH_MOUNT_EXPORT, true, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put32(&x, 1);
	put_str(&x, "client1");
	put_str(&x, "/export");
	put32(&x, 0);
	assert_int_equal(reply(TH_PROG_MOUNT, 1, TH_MOUNT_DUMP, &x, &r), TH_NFS_OK);
	assert_int_equal(r.count, 1);
	x.n = 0;
	assert_int_equal(call(TH_PROG_MOUNT, 3, TH_MOUNT_EXPORT, &x, &c), TH_NFS_OK);
	assert_int_equal(reply(TH_PROG_MOUNT, 3, TH_MOUNT_UMNT, &x, &r), TH_NFS_OK);
	assert_int_equal(call(TH_PROG_MOUNT, 3, 6, &x, &c), TH_NFS_UNKNOWN_PROC);
}

/* ---- portmap ---- */

static void
test_portmap(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put32(&x, TH_PROG_MOUNT);
	put32(&x, 3);
	put32(&x, 6);
	put32(&x, 0);
	assert_int_equal(call(TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT, &x, &c), TH_NFS_OK);
	assert_int_equal(c.pmap_prog, TH_PROG_MOUNT);
	assert_int_equal(c.pmap_vers, 3);
	assert_int_equal(c.pmap_prot, 6);
	check_prefixes(TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT, false, &x, x.n, TH_NFS_OK);
	assert_int_equal(call(TH_PROG_PORTMAP, 2, TH_PMAP_SET, &x, &c), TH_NFS_OK);
	assert_int_equal(c.pmap_prog, TH_PROG_MOUNT);

	x.n = 0;
	put32(&x, 20048);
	assert_int_equal(reply(TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT, &x, &r), TH_NFS_OK);
	assert_int_equal(r.port, 20048);
	check_prefixes(TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT, true, &x, x.n, TH_NFS_OK);

	x.n = 0;
	put32(&x, 0); /* FALSE: not registered */
	assert_int_equal(reply(TH_PROG_PORTMAP, 2, TH_PMAP_SET, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 1);
	x.n = 0;
	put32(&x, 1);
	assert_int_equal(reply(TH_PROG_PORTMAP, 2, TH_PMAP_UNSET, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 0);
	assert_int_equal(call(TH_PROG_PORTMAP, 2, 6, &x, &c), TH_NFS_UNKNOWN_PROC);
}

/* rpcbind GETADDR reply with universal address @p uaddr */
static enum th_nfs_status
getaddr_reply(uint32_t vers, const char *uaddr, struct th_nfs_reply *r)
{
	struct xb x = {0};

	put_str(&x, uaddr);
	return reply(TH_PROG_PORTMAP, vers, 3, &x, r);
}

static void
test_rpcbind(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};
	uint32_t vers;

	(void)state;
	for (vers = 3; vers <= 4; vers++) {
		x.n = 0;
		put32(&x, TH_PROG_MOUNT);
		put32(&x, 3);
		put_str(&x, "udp6");
		put_str(&x, "");
		put_str(&x, "superuser");
		assert_int_equal(call(TH_PROG_PORTMAP, vers, 3, &x, &c), TH_NFS_OK);
		assert_int_equal(c.pmap_prog, TH_PROG_MOUNT);
		assert_int_equal(c.pmap_vers, 3);
		assert_int_equal(c.pmap_prot, 17);
		check_prefixes(TH_PROG_PORTMAP, vers, 3, false, &x, x.n, TH_NFS_OK);

		assert_int_equal(getaddr_reply(vers, "10.0.0.2.78.80", &r), TH_NFS_OK);
		assert_int_equal(r.port, 20048);
		assert_int_equal(getaddr_reply(vers, "fe80::1.8.1", &r), TH_NFS_OK);
		assert_int_equal(r.port, 2049);
		/* Not registered: an empty address. */
		assert_int_equal(getaddr_reply(vers, "", &r), TH_NFS_OK);
		assert_int_equal(r.port, 0);
		assert_int_equal(getaddr_reply(vers, "10.0.0.2.300.1", &r), TH_NFS_MALFORMED);
		assert_int_equal(getaddr_reply(vers, "2049", &r), TH_NFS_MALFORMED);
		assert_int_equal(getaddr_reply(vers, "1.2.3.4.5.x", &r), TH_NFS_MALFORMED);
	}

	x.n = 0;
	put32(&x, TH_PROG_NFS);
	put32(&x, 3);
	put_str(&x, "tcp");
	put_str(&x, "0.0.0.0.8.1");
	put_str(&x, "");
	assert_int_equal(call(TH_PROG_PORTMAP, 4, TH_PMAP_SET, &x, &c), TH_NFS_OK);
	assert_int_equal(c.pmap_prot, 6);
	x.n = 0;
	put32(&x, 1);
	assert_int_equal(reply(TH_PROG_PORTMAP, 4, TH_PMAP_SET, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 0);

	x.n = 0;
	put_str(&x, "udp");
	assert_int_equal(reply(TH_PROG_PORTMAP, 4, 9, &x, &r), TH_NFS_MALFORMED);
	assert_int_equal(call(TH_PROG_PORTMAP, 3, 9, &x, &c), TH_NFS_UNKNOWN_PROC);
	assert_int_equal(call(TH_PROG_PORTMAP, 4, 13, &x, &c), TH_NFS_UNKNOWN_PROC);
	assert_int_equal(call(TH_PROG_PORTMAP, 5, 3, &x, &c), TH_NFS_UNKNOWN_PROG);
}

/* ---- NFSv4 ---- */

static void
test_v4(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put_str(&x, "open");
	put32(&x, 2);
	put32(&x, 5);
	put32(&x, 53); /* SEQUENCE ... not decoded */
	assert_int_equal(call(TH_PROG_NFS, 4, 1, &x, &c), TH_NFS_V4_COMPOUND);
	assert_int_equal(c.v4_minor, 2);
	assert_int_equal(c.v4_ops, 5);
	check_prefixes(TH_PROG_NFS, 4, 1, false, &x, x.n - 4, TH_NFS_V4_COMPOUND);

	x.n = 0;
	put32(&x, 10008);
	put_str(&x, "");
	put32(&x, 1);
	assert_int_equal(reply(TH_PROG_NFS, 4, 1, &x, &r), TH_NFS_V4_COMPOUND);
	assert_int_equal(r.status, 10008);
	assert_int_equal(r.v4_ops, 1);
	check_prefixes(TH_PROG_NFS, 4, 1, true, &x, x.n, TH_NFS_V4_COMPOUND);

	x.n = 0;
	assert_int_equal(call(TH_PROG_NFS, 4, 0, &x, &c), TH_NFS_OK);
	assert_int_equal(reply(TH_PROG_NFS, 4, 0, &x, &r), TH_NFS_OK);
	assert_int_equal(call(TH_PROG_NFS, 4, 2, &x, &c), TH_NFS_UNKNOWN_PROC);

	put32(&x, 5000); /* a tag past the bound */
	assert_int_equal(call(TH_PROG_NFS, 4, 1, &x, &c), TH_NFS_MALFORMED);
}

/* ---- names and hash ---- */

static void
test_names(void **state)
{
	(void)state;
	assert_true(th_nfs_is_known(TH_PROG_NFS, 2));
	assert_true(th_nfs_is_known(TH_PROG_NFS, 3));
	assert_true(th_nfs_is_known(TH_PROG_NFS, 4));
	assert_true(th_nfs_is_known(TH_PROG_MOUNT, 1));
	assert_true(th_nfs_is_known(TH_PROG_MOUNT, 3));
	assert_true(th_nfs_is_known(TH_PROG_PORTMAP, 2));
	assert_true(th_nfs_is_known(TH_PROG_PORTMAP, 4));
	assert_false(th_nfs_is_known(TH_PROG_PORTMAP, 5));
	assert_false(th_nfs_is_known(TH_PROG_NFS, 1));
	assert_false(th_nfs_is_known(TH_PROG_NLM, 4));
	assert_false(th_nfs_is_known(TH_PROG_NFSACL, 3));
	assert_false(th_nfs_is_known(12345, 1));

	assert_string_equal(th_nfs_prog_name(TH_PROG_NFS), "NFS");
	assert_string_equal(th_nfs_prog_name(TH_PROG_MOUNT), "MOUNT");
	assert_string_equal(th_nfs_prog_name(TH_PROG_PORTMAP), "PORTMAP");
	assert_string_equal(th_nfs_prog_name(TH_PROG_NLM), "NLM");
	assert_string_equal(th_nfs_prog_name(TH_PROG_NFSACL), "NFSACL");
	assert_null(th_nfs_prog_name(1));

	assert_string_equal(th_nfs_proc_name(TH_PROG_NFS, 3, 6), "READ");
	assert_string_equal(th_nfs_proc_name(TH_PROG_NFS, 3, 17), "READDIRPLUS");
	assert_string_equal(th_nfs_proc_name(TH_PROG_NFS, 3, 21), "COMMIT");
	assert_null(th_nfs_proc_name(TH_PROG_NFS, 3, 22));
	assert_string_equal(th_nfs_proc_name(TH_PROG_NFS, 2, 8), "WRITE");
	assert_string_equal(th_nfs_proc_name(TH_PROG_NFS, 2, 17), "STATFS");
	assert_null(th_nfs_proc_name(TH_PROG_NFS, 2, 18));
	assert_string_equal(th_nfs_proc_name(TH_PROG_NFS, 4, 1), "COMPOUND");
	assert_string_equal(th_nfs_proc_name(TH_PROG_MOUNT, 3, 1), "MNT");
	assert_string_equal(th_nfs_proc_name(TH_PROG_MOUNT, 1, 5), "EXPORT");
	assert_string_equal(th_nfs_proc_name(TH_PROG_PORTMAP, 2, 3), "GETPORT");
	assert_string_equal(th_nfs_proc_name(TH_PROG_PORTMAP, 4, 3), "GETADDR");
	assert_string_equal(th_nfs_proc_name(TH_PROG_PORTMAP, 3, 5), "CALLIT");
	assert_string_equal(th_nfs_proc_name(TH_PROG_PORTMAP, 4, 5), "BCAST");
	assert_string_equal(th_nfs_proc_name(TH_PROG_PORTMAP, 4, 12), "GETSTAT");
	assert_null(th_nfs_proc_name(TH_PROG_PORTMAP, 3, 9));
	assert_null(th_nfs_proc_name(TH_PROG_PORTMAP, 2, 6));
	assert_null(th_nfs_proc_name(TH_PROG_NLM, 4, 1));
	assert_null(th_nfs_proc_name(TH_PROG_NFS, 3, UINT32_MAX));

	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 3, 0), "OK");
	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 3, 2), "NOENT");
	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 3, 70), "STALE");
	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 3, 10002), "NOT_SYNC");
	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 3, 10008), "JUKEBOX");
	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 2, 13), "ACCES");
	assert_string_equal(th_nfs_status_name(TH_PROG_NFS, 2, 99), "WFLUSH");
	assert_null(th_nfs_status_name(TH_PROG_NFS, 3, 99));
	assert_null(th_nfs_status_name(TH_PROG_NFS, 3, 3));
	assert_string_equal(th_nfs_status_name(TH_PROG_MOUNT, 3, 10004), "NOTSUPP");
	assert_null(th_nfs_status_name(TH_PROG_MOUNT, 3, 70));
	assert_null(th_nfs_status_name(TH_PROG_PORTMAP, 2, 0));
}

/* PROGRAM PROC, as the RPC log, export and the response-time table spell it. */
static void
test_labels(void **state)
{
	static const uint32_t progs[] = {TH_PROG_NFS, TH_PROG_MOUNT, TH_PROG_PORTMAP, TH_PROG_NLM,
		TH_PROG_NFSACL, 100024, UINT32_MAX};
	static const struct {
		uint32_t prog, vers, proc;
		const char *want;
	} cases[] = {
		{TH_PROG_NFS, 3, 17, "NFS3 READDIRPLUS"},
		{TH_PROG_NFS, 3, 22, "NFS3 22"},
		{TH_PROG_MOUNT, 3, 1, "MOUNT3 MNT"},
		{TH_PROG_PORTMAP, 4, 9, "PORTMAP4 GETVERSADDR"},
		{TH_PROG_NLM, 4, 2, "NLM4 2"},
		{100024, 1, 0, "100024.1 0"},
		{UINT32_MAX, UINT32_MAX, UINT32_MAX, "4294967295.4294967295 4294967295"},
	};
	char text[TH_NFS_LABEL_MAX + 16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		*th_nfs_label(text, cases[i].prog, cases[i].vers, cases[i].proc) = '\0';
		assert_string_equal(text, cases[i].want);
	}
	/* Every label fits: each program, versions 0-4 and the largest, every procedure named. */
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		for (uint32_t v = 0; v <= 5; v++) {
			uint32_t vers = v == 5 ? UINT32_MAX : v;

			for (uint32_t proc = 0; proc <= 32; proc++) {
				size_t n = (size_t)(th_nfs_label(text, progs[i], vers,
							    proc == 32 ? UINT32_MAX : proc) -
						    text);

				assert_true(n < TH_NFS_LABEL_MAX);
			}
		}
	}
}

static void
test_fh_hash(void **state)
{
	struct th_nfs_fh fh = {0};
	unsigned int i;

	(void)state;
	assert_int_equal(th_nfs_fh_hash(&fh), 0);
	fh.len = 9;
	memcpy(fh.data, "123456789", 9);
	assert_int_equal(th_nfs_fh_hash(&fh), 0xCBF43926u);
	memset(fh.data, 0, sizeof(fh.data));
	fh.len = 32;
	assert_int_equal(th_nfs_fh_hash(&fh), 0x190A55ADu);
	for (i = 0; i < 64; i++)
		fh.data[i] = (uint8_t)i;
	fh.len = 64;
	assert_int_equal(th_nfs_fh_hash(&fh), 0x100ECE8Cu);
}

/* CRC-32 a bit at a time, the definition the eight-byte steps must agree with. */
static uint32_t
crc32_bitwise(const uint8_t *p, unsigned int n)
{
	uint32_t crc = 0xffffffffu;
	unsigned int i, b;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return crc ^ 0xffffffffu;
}

/* Every length, every alignment of the 8-byte steps, odd bytes; lengths past the limit clamp. */
static void
test_fh_hash_every_length(void **state)
{
	struct th_nfs_fh fh = {0};
	uint32_t x = 1;
	unsigned int len, i;

	(void)state;
	for (len = 0; len <= TH_NFS_FH_MAX; len++) {
		for (i = 0; i < TH_NFS_FH_MAX; i++) {
			x = x * 1664525u + 1013904223u;
			fh.data[i] = (uint8_t)(x >> 24);
		}
		fh.len = len;
		assert_int_equal(th_nfs_fh_hash(&fh), crc32_bitwise(fh.data, len));
	}
	fh.len = 200;
	assert_int_equal(th_nfs_fh_hash(&fh), crc32_bitwise(fh.data, TH_NFS_FH_MAX));
}

/*
 * Names as the names file (and export's text) writes them: printable bytes as they are, the
 * blank, the separator, the backslash, control and high bytes as \xHH; a short buffer ends
 * before an escape that would not fit, never inside one.
 */
static void
test_name_text(void **state)
{
	static const char name[] = "a b|c\\d\x01\xe9/~!";
	char out[TH_NFS_NAME_TEXT(sizeof(name) - 1)];
	size_t len;

	(void)state;
	len = th_nfs_name_text(name, sizeof(name) - 1, out, sizeof(out));
	assert_string_equal(out, "a\\x20b\\x7cc\\x5cd\\x01\\xe9/~!");
	assert_int_equal(len, strlen(out));
	/* Room for "a" and three bytes: the escape of the blank does not fit whole. */
	len = th_nfs_name_text(name, sizeof(name) - 1, out, 5);
	assert_string_equal(out, "a");
	assert_int_equal(len, 1);
	len = th_nfs_name_text(name, sizeof(name) - 1, out, 6);
	assert_string_equal(out, "a\\x20");
	assert_int_equal(len, 5);
	assert_int_equal(th_nfs_name_text("", 0, out, 1), 0);
	assert_string_equal(out, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_getattr),
		cmocka_unit_test(test_v2_types),
		cmocka_unit_test(test_v2_lookup_create),
		cmocka_unit_test(test_v2_read_write),
		cmocka_unit_test(test_v2_names),
		cmocka_unit_test(test_v2_readdir_statfs),
		cmocka_unit_test(test_mount),
		cmocka_unit_test(test_portmap),
		cmocka_unit_test(test_rpcbind),
		cmocka_unit_test(test_v4),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_fh_hash),
		cmocka_unit_test(test_fh_hash_every_length),
		cmocka_unit_test(test_name_text),
	};

	return cmocka_run_group_tests_name("nfs_other", tests, NULL, NULL);
}
