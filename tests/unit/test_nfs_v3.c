/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NFSv3 decoding: every procedure's arguments and results built by hand in
 * XDR, failure arms, every prefix of every message (SHORT or OK, never a
 * read past the end: each prefix is decoded from its own allocation so ASan
 * sees an overread), and malformed lengths and discriminants.
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

static const uint8_t FH_A[] = {0x01, 0x00, 0x07, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x11, 0x22, 0x33,
	0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc};
static const uint8_t FH_B[] = {0x01, 0x00, 0x01, 0x00, 0x0b, 0x0b, 0x0b, 0x0b};

static void
put_fh_a(struct xb *x)
{
	put_opaque(x, FH_A, sizeof(FH_A));
}

static void
put_fh_b(struct xb *x)
{
	put_opaque(x, FH_B, sizeof(FH_B));
}

/* fattr3 with recognisable values derived from @p seed. */
static void
put_fattr3(struct xb *x, uint32_t type, uint32_t seed)
{
	put32(x, type);
	put32(x, 0644);                  /* mode */
	put32(x, 1);                     /* nlink */
	put32(x, 1000 + seed);           /* uid */
	put32(x, 2000 + seed);           /* gid */
	put64(x, 0x100000000ull + seed); /* size */
	put64(x, 4096);                  /* used */
	put64(x, 0);                     /* rdev */
	put64(x, 7);                     /* fsid */
	put64(x, 0xabcdef00ull + seed);  /* fileid */
	put64(x, 0);                     /* atime */
	put32(x, 1700000000 + seed);     /* mtime */
	put32(x, 123);
	put32(x, 1700000100 + seed); /* ctime */
	put32(x, 456);
}

static void
put_post_op_attr(struct xb *x, uint32_t seed)
{
	put32(x, 1);
	put_fattr3(x, 1, seed);
}

static void
put_wcc(struct xb *x, uint32_t seed)
{
	put32(x, 1); /* pre_op_attr */
	put64(x, 10 + seed);
	put32(x, 1600000000);
	put32(x, 5);
	put32(x, 1600000001);
	put32(x, 6);
	put_post_op_attr(x, seed);
}

static void
check_attr(const struct th_nfs_attr *a, uint32_t seed)
{
	assert_true(a->is_present);
	assert_int_equal(a->type, TH_NFS_REG);
	assert_int_equal(a->mode, 0644);
	assert_int_equal(a->uid, 1000 + seed);
	assert_int_equal(a->gid, 2000 + seed);
	assert_true(a->size == 0x100000000ull + seed);
	assert_true(a->fileid == 0xabcdef00ull + seed);
	assert_true(a->mtime_ns == (1700000000ull + seed) * 1000000000ull + 123);
	assert_true(a->ctime_ns == (1700000100ull + seed) * 1000000000ull + 456);
}

static void
check_pre(const struct th_nfs_pre_attr *p, uint32_t seed)
{
	assert_true(p->is_present);
	assert_true(p->size == 10 + seed);
	assert_true(p->mtime_ns == 1600000000ull * 1000000000ull + 5);
	assert_true(p->ctime_ns == 1600000001ull * 1000000000ull + 6);
}

static void
check_fh(const struct th_nfs_fh *fh, const uint8_t *data, size_t size)
{
	assert_int_equal(fh->len, size);
	assert_memory_equal(fh->data, data, size);
}

static enum th_nfs_status
call3(uint32_t proc, const struct xb *x, struct th_nfs_call *c)
{
	memset(c, 0, sizeof(*c));
	return th_nfs_decode_call(TH_PROG_NFS, 3, proc, x->b, x->n, c);
}

static enum th_nfs_status
reply3(uint32_t proc, const struct xb *x, struct th_nfs_reply *r)
{
	memset(r, 0, sizeof(*r));
	return th_nfs_decode_reply(TH_PROG_NFS, 3, proc, x->b, x->n, r);
}

static bool
name_is_sane(const struct th_nfs_name *n)
{
	return n->len <= TH_NFS_NAME_MAX && n->s[n->len] == '\0';
}

/*
 * Decode every prefix of @p x from an exact-size allocation: prefixes from
 * @p ok_from on decode fully, shorter ones say SHORT.
 */
static void
check_prefixes(uint32_t proc, bool is_reply, const struct xb *x, size_t ok_from)
{
	size_t n;

	for (n = 0; n <= x->n; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		enum th_nfs_status st;

		assert_non_null(copy);
		memcpy(copy, x->b, n);
		if (is_reply) {
			struct th_nfs_reply r = {0};

			st = th_nfs_decode_reply(TH_PROG_NFS, 3, proc, copy, n, &r);
			assert_true(r.fh.len <= TH_NFS_FH_MAX);
		} else {
			struct th_nfs_call c = {0};

			st = th_nfs_decode_call(TH_PROG_NFS, 3, proc, copy, n, &c);
			assert_true(c.fh.len <= TH_NFS_FH_MAX && c.fh2.len <= TH_NFS_FH_MAX);
			assert_true(name_is_sane(&c.name) && name_is_sane(&c.name2));
		}
		free(copy);
		if (n >= ok_from)
			assert_int_equal(st, TH_NFS_OK);
		else
			assert_int_equal(st, TH_NFS_SHORT);
	}
}

/* ---- calls ---- */

static void
test_call_fh_only(void **state)
{
	static const uint32_t procs[] = {TH_NFS3_GETATTR, TH_NFS3_READLINK, TH_NFS3_FSSTAT,
		TH_NFS3_FSINFO, TH_NFS3_PATHCONF};
	struct th_nfs_call c;
	struct xb x = {0};
	size_t i;

	(void)state;
	put_fh_a(&x);
	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		assert_int_equal(call3(procs[i], &x, &c), TH_NFS_OK);
		check_fh(&c.fh, FH_A, sizeof(FH_A));
		check_prefixes(procs[i], false, &x, x.n);
	}
}

static void
test_call_null(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	assert_int_equal(call3(TH_NFS3_NULL, &x, &c), TH_NFS_OK);
	assert_int_equal(c.fh.len, 0);
}

static void
test_call_setattr(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put32(&x, 1); /* set mode */
	put32(&x, 0600);
	put32(&x, 1); /* set uid */
	put32(&x, 33);
	put32(&x, 0); /* gid */
	put32(&x, 1); /* set size */
	put64(&x, 0);
	put32(&x, 2); /* atime: client time */
	put64(&x, 0x1122334455667788ull);
	put32(&x, 1); /* mtime: server time */
	put32(&x, 1); /* guard */
	put64(&x, 99);
	assert_int_equal(call3(TH_NFS3_SETATTR, &x, &c), TH_NFS_OK);
	check_fh(&c.fh, FH_A, sizeof(FH_A));
	assert_true(c.has_set_mode);
	assert_int_equal(c.set_mode, 0600);
	assert_true(c.has_set_size); /* a truncate to zero */
	assert_true(c.set_size == 0);
	check_prefixes(TH_NFS3_SETATTR, false, &x, x.n);
}

static void
test_call_lookup_remove_rmdir(void **state)
{
	static const uint32_t procs[] = {TH_NFS3_LOOKUP, TH_NFS3_REMOVE, TH_NFS3_RMDIR};
	struct th_nfs_call c;
	struct xb x = {0};
	size_t i;

	(void)state;
	put_fh_a(&x);
	put_str(&x, "hello.txt");
	for (i = 0; i < 3; i++) {
		assert_int_equal(call3(procs[i], &x, &c), TH_NFS_OK);
		check_fh(&c.fh, FH_A, sizeof(FH_A));
		assert_int_equal(c.name.len, 9);
		assert_string_equal(c.name.s, "hello.txt");
		assert_false(c.name.is_cut);
		check_prefixes(procs[i], false, &x, x.n);
	}
}

static void
test_call_access(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put32(&x, 0x3f);
	assert_int_equal(call3(TH_NFS3_ACCESS, &x, &c), TH_NFS_OK);
	assert_int_equal(c.access, 0x3f);
	check_prefixes(TH_NFS3_ACCESS, false, &x, x.n);
}

static void
test_call_read_commit(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put64(&x, 0x123456789ull);
	put32(&x, 65536);
	assert_int_equal(call3(TH_NFS3_READ, &x, &c), TH_NFS_OK);
	check_fh(&c.fh, FH_A, sizeof(FH_A));
	assert_true(c.offset == 0x123456789ull);
	assert_int_equal(c.count, 65536);
	check_prefixes(TH_NFS3_READ, false, &x, x.n);
	assert_int_equal(call3(TH_NFS3_COMMIT, &x, &c), TH_NFS_OK);
	assert_true(c.offset == 0x123456789ull);
	assert_int_equal(c.count, 65536);
	check_prefixes(TH_NFS3_COMMIT, false, &x, x.n);
}

static void
test_call_write(void **state)
{
	static const char data[] = "0123456789abcdef0123456789";
	struct th_nfs_call c;
	struct xb x = {0};
	size_t head;

	(void)state;
	put_fh_a(&x);
	put64(&x, 8192);
	put32(&x, sizeof(data));
	put32(&x, 2); /* FILE_SYNC */
	head = x.n + 4;
	put_opaque(&x, data, sizeof(data));
	assert_int_equal(call3(TH_NFS3_WRITE, &x, &c), TH_NFS_OK);
	check_fh(&c.fh, FH_A, sizeof(FH_A));
	assert_true(c.offset == 8192);
	assert_int_equal(c.count, sizeof(data));
	assert_int_equal(c.stable, 2);
	/* Data not kept: once the data length word is there, the call is whole. */
	check_prefixes(TH_NFS3_WRITE, false, &x, head);
}

static void
test_call_create(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	/* UNCHECKED with mode and size 0 */
	put_fh_a(&x);
	put_str(&x, "new");
	put32(&x, 0);
	put32(&x, 1);
	put32(&x, 0640);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 1);
	put64(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	assert_int_equal(call3(TH_NFS3_CREATE, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "new");
	assert_int_equal(c.stable, 0);
	assert_true(c.has_set_mode);
	assert_int_equal(c.set_mode, 0640);
	assert_true(c.has_set_size);
	check_prefixes(TH_NFS3_CREATE, false, &x, x.n);

	/* GUARDED, nothing set */
	x.n = 0;
	put_fh_a(&x);
	put_str(&x, "g");
	put32(&x, 1);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	assert_int_equal(call3(TH_NFS3_CREATE, &x, &c), TH_NFS_OK);
	assert_int_equal(c.stable, 1);
	assert_false(c.has_set_mode);
	assert_false(c.has_set_size);

	/* EXCLUSIVE: an 8-byte verifier instead of attributes */
	x.n = 0;
	put_fh_a(&x);
	put_str(&x, "excl");
	put32(&x, 2);
	put64(&x, 0x0102030405060708ull);
	assert_int_equal(call3(TH_NFS3_CREATE, &x, &c), TH_NFS_OK);
	assert_int_equal(c.stable, 2);
	assert_string_equal(c.name.s, "excl");
	check_prefixes(TH_NFS3_CREATE, false, &x, x.n);

	/* createmode 3 does not exist */
	x.n = 0;
	put_fh_a(&x);
	put_str(&x, "bad");
	put32(&x, 3);
	put64(&x, 0);
	assert_int_equal(call3(TH_NFS3_CREATE, &x, &c), TH_NFS_MALFORMED);
}

static void
put_sattr_mode(struct xb *x, uint32_t mode)
{
	put32(x, 1);
	put32(x, mode);
	put32(x, 0);
	put32(x, 0);
	put32(x, 0);
	put32(x, 0);
	put32(x, 0);
}

static void
test_call_mkdir_symlink(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put_str(&x, "subdir");
	put_sattr_mode(&x, 0755);
	assert_int_equal(call3(TH_NFS3_MKDIR, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "subdir");
	assert_true(c.has_set_mode);
	assert_int_equal(c.set_mode, 0755);
	check_prefixes(TH_NFS3_MKDIR, false, &x, x.n);

	x.n = 0;
	put_fh_a(&x);
	put_str(&x, "link");
	put_sattr_mode(&x, 0777);
	put_str(&x, "../target/file");
	assert_int_equal(call3(TH_NFS3_SYMLINK, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "link");
	assert_string_equal(c.name2.s, "../target/file");
	assert_int_equal(c.name2.len, 14);
	check_prefixes(TH_NFS3_SYMLINK, false, &x, x.n);
}

static void
test_call_mknod(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put_str(&x, "tty9");
	put32(&x, TH_NFS_CHR);
	put_sattr_mode(&x, 0620);
	put32(&x, 4); /* specdata3 */
	put32(&x, 9);
	assert_int_equal(call3(TH_NFS3_MKNOD, &x, &c), TH_NFS_OK);
	assert_string_equal(c.name.s, "tty9");
	assert_int_equal(c.set_mode, 0620);
	check_prefixes(TH_NFS3_MKNOD, false, &x, x.n);

	x.n = 0;
	put_fh_a(&x);
	put_str(&x, "fifo");
	put32(&x, TH_NFS_FIFO);
	put_sattr_mode(&x, 0600);
	assert_int_equal(call3(TH_NFS3_MKNOD, &x, &c), TH_NFS_OK);
	assert_int_equal(c.set_mode, 0600);
	check_prefixes(TH_NFS3_MKNOD, false, &x, x.n);

	x.n = 0;
	put_fh_a(&x);
	put_str(&x, "what");
	put32(&x, 42);
	assert_int_equal(call3(TH_NFS3_MKNOD, &x, &c), TH_NFS_MALFORMED);
}

static void
test_call_rename_link(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put_str(&x, "old");
	put_fh_b(&x);
	put_str(&x, "new-name");
	assert_int_equal(call3(TH_NFS3_RENAME, &x, &c), TH_NFS_OK);
	check_fh(&c.fh, FH_A, sizeof(FH_A));
	check_fh(&c.fh2, FH_B, sizeof(FH_B));
	assert_string_equal(c.name.s, "old");
	assert_string_equal(c.name2.s, "new-name");
	check_prefixes(TH_NFS3_RENAME, false, &x, x.n);

	x.n = 0;
	put_fh_a(&x); /* file */
	put_fh_b(&x); /* link directory */
	put_str(&x, "hard");
	assert_int_equal(call3(TH_NFS3_LINK, &x, &c), TH_NFS_OK);
	check_fh(&c.fh, FH_A, sizeof(FH_A));
	check_fh(&c.fh2, FH_B, sizeof(FH_B));
	assert_string_equal(c.name.s, "hard");
	check_prefixes(TH_NFS3_LINK, false, &x, x.n);
}

static void
test_call_readdir(void **state)
{
	struct th_nfs_call c;
	struct xb x = {0};

	(void)state;
	put_fh_a(&x);
	put64(&x, 77);
	put64(&x, 0xfeed);
	put32(&x, 4096);
	assert_int_equal(call3(TH_NFS3_READDIR, &x, &c), TH_NFS_OK);
	assert_true(c.offset == 77);
	assert_int_equal(c.count, 4096);
	check_prefixes(TH_NFS3_READDIR, false, &x, x.n);

	x.n = 0;
	put_fh_a(&x);
	put64(&x, 78);
	put64(&x, 0xfeed);
	put32(&x, 1024);  /* dircount */
	put32(&x, 32768); /* maxcount */
	assert_int_equal(call3(TH_NFS3_READDIRPLUS, &x, &c), TH_NFS_OK);
	assert_true(c.offset == 78);
	assert_int_equal(c.count, 32768);
	check_prefixes(TH_NFS3_READDIRPLUS, false, &x, x.n);
}

/* ---- replies ---- */

static void
test_reply_getattr(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put32(&x, 0);
	put_fattr3(&x, 1, 3);
	assert_int_equal(reply3(TH_NFS3_GETATTR, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 0);
	check_attr(&r.attr, 3);
	check_prefixes(TH_NFS3_GETATTR, true, &x, x.n);

	/* A cut fattr3 is not reported as present. */
	x.n -= 4;
	assert_int_equal(reply3(TH_NFS3_GETATTR, &x, &r), TH_NFS_SHORT);
	assert_false(r.attr.is_present);

	x.n = 0;
	put32(&x, 70); /* STALE: void */
	assert_int_equal(reply3(TH_NFS3_GETATTR, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 70);
	assert_false(r.attr.is_present);
}

static void
test_reply_wcc_only(void **state)
{
	static const uint32_t procs[] = {TH_NFS3_SETATTR, TH_NFS3_REMOVE, TH_NFS3_RMDIR};
	struct th_nfs_reply r;
	struct xb x = {0};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		x.n = 0;
		put32(&x, i == 0 ? 0 : 13);
		put_wcc(&x, 4);
		assert_int_equal(reply3(procs[i], &x, &r), TH_NFS_OK);
		check_pre(&r.pre, 4);
		check_attr(&r.attr, 4);
		check_prefixes(procs[i], true, &x, x.n);
	}
}

static void
test_reply_lookup(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put32(&x, 0);
	put_fh_b(&x);
	put_post_op_attr(&x, 5);
	put_post_op_attr(&x, 6);
	assert_int_equal(reply3(TH_NFS3_LOOKUP, &x, &r), TH_NFS_OK);
	check_fh(&r.fh, FH_B, sizeof(FH_B));
	check_attr(&r.attr, 5);
	check_attr(&r.dir_attr, 6);
	check_prefixes(TH_NFS3_LOOKUP, true, &x, x.n);

	/* Failure: NOENT carries the directory's attributes only. */
	x.n = 0;
	put32(&x, 2);
	put_post_op_attr(&x, 6);
	assert_int_equal(reply3(TH_NFS3_LOOKUP, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 2);
	assert_int_equal(r.fh.len, 0);
	assert_false(r.attr.is_present);
	check_attr(&r.dir_attr, 6);
	check_prefixes(TH_NFS3_LOOKUP, true, &x, x.n);

	/* Failure without attributes. */
	x.n = 0;
	put32(&x, 70);
	put32(&x, 0);
	assert_int_equal(reply3(TH_NFS3_LOOKUP, &x, &r), TH_NFS_OK);
	assert_false(r.dir_attr.is_present);
}

static void
test_reply_access_readlink(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put32(&x, 0);
	put_post_op_attr(&x, 7);
	put32(&x, 0x1f);
	assert_int_equal(reply3(TH_NFS3_ACCESS, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 7);
	check_prefixes(TH_NFS3_ACCESS, true, &x, x.n);

	x.n = 0;
	put32(&x, 13);
	put_post_op_attr(&x, 7);
	assert_int_equal(reply3(TH_NFS3_ACCESS, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 13);
	check_attr(&r.attr, 7);

	x.n = 0;
	put32(&x, 0);
	put_post_op_attr(&x, 8);
	put_str(&x, "/some/where");
	assert_int_equal(reply3(TH_NFS3_READLINK, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 8);
	check_prefixes(TH_NFS3_READLINK, true, &x, x.n);
}

static void
test_reply_read(void **state)
{
	static const uint8_t data[100];
	struct th_nfs_reply r;
	struct xb x = {0};
	size_t head;

	(void)state;
	put32(&x, 0);
	put_post_op_attr(&x, 9);
	put32(&x, sizeof(data));
	put32(&x, 1);
	head = x.n + 4;
	put_opaque(&x, data, sizeof(data));
	assert_int_equal(reply3(TH_NFS3_READ, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 9);
	assert_int_equal(r.count, sizeof(data));
	assert_true(r.eof);
	check_prefixes(TH_NFS3_READ, true, &x, head);

	x.n = 0;
	put32(&x, 5); /* IO */
	put_post_op_attr(&x, 9);
	assert_int_equal(reply3(TH_NFS3_READ, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 5);
	check_attr(&r.attr, 9);
	assert_int_equal(r.count, 0);
}

static void
test_reply_write_commit(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put32(&x, 0);
	put_wcc(&x, 10);
	put32(&x, 4096);
	put32(&x, 1); /* DATA_SYNC */
	put64(&x, 0x5555);
	assert_int_equal(reply3(TH_NFS3_WRITE, &x, &r), TH_NFS_OK);
	check_pre(&r.pre, 10);
	check_attr(&r.attr, 10);
	assert_int_equal(r.count, 4096);
	assert_int_equal(r.committed, 1);
	check_prefixes(TH_NFS3_WRITE, true, &x, x.n);

	x.n = 0;
	put32(&x, 28); /* NOSPC */
	put32(&x, 0);
	put_post_op_attr(&x, 10);
	assert_int_equal(reply3(TH_NFS3_WRITE, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 28);
	assert_false(r.pre.is_present);
	check_attr(&r.attr, 10);
	check_prefixes(TH_NFS3_WRITE, true, &x, x.n);

	x.n = 0;
	put32(&x, 0);
	put_wcc(&x, 11);
	put64(&x, 0x5555);
	assert_int_equal(reply3(TH_NFS3_COMMIT, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 11);
	check_prefixes(TH_NFS3_COMMIT, true, &x, x.n);
}

static void
test_reply_create_family(void **state)
{
	static const uint32_t procs[] = {
		TH_NFS3_CREATE, TH_NFS3_MKDIR, TH_NFS3_SYMLINK, TH_NFS3_MKNOD};
	struct th_nfs_reply r;
	struct xb x = {0};
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		x.n = 0;
		put32(&x, 0);
		put32(&x, 1); /* post_op_fh3 */
		put_fh_b(&x);
		put_post_op_attr(&x, 12);
		put_wcc(&x, 13);
		assert_int_equal(reply3(procs[i], &x, &r), TH_NFS_OK);
		check_fh(&r.fh, FH_B, sizeof(FH_B));
		check_attr(&r.attr, 12);
		check_pre(&r.pre, 13);
		check_attr(&r.dir_attr, 13);
		check_prefixes(procs[i], true, &x, x.n);

		/* Failure: only the directory's wcc_data. */
		x.n = 0;
		put32(&x, 17); /* EXIST */
		put_wcc(&x, 14);
		assert_int_equal(reply3(procs[i], &x, &r), TH_NFS_OK);
		assert_int_equal(r.status, 17);
		assert_int_equal(r.fh.len, 0);
		assert_false(r.attr.is_present);
		check_pre(&r.pre, 14);
		check_attr(&r.dir_attr, 14);
		check_prefixes(procs[i], true, &x, x.n);
	}

	/* A success without the optional handle. */
	x.n = 0;
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	assert_int_equal(reply3(TH_NFS3_CREATE, &x, &r), TH_NFS_OK);
	assert_int_equal(r.fh.len, 0);
}

static void
test_reply_rename_link(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	put32(&x, 0);
	put_wcc(&x, 15);
	put_wcc(&x, 16);
	assert_int_equal(reply3(TH_NFS3_RENAME, &x, &r), TH_NFS_OK);
	check_pre(&r.pre, 15);
	check_attr(&r.attr, 15);
	check_attr(&r.dir_attr, 16);
	check_prefixes(TH_NFS3_RENAME, true, &x, x.n);

	x.n = 0;
	put32(&x, 18); /* XDEV */
	put_post_op_attr(&x, 17);
	put_wcc(&x, 18);
	assert_int_equal(reply3(TH_NFS3_LINK, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 18);
	check_attr(&r.attr, 17);
	check_pre(&r.pre, 18);
	check_attr(&r.dir_attr, 18);
	check_prefixes(TH_NFS3_LINK, true, &x, x.n);
}

static void
put_entry(struct xb *x, uint64_t fileid, const char *name, bool is_plus)
{
	put32(x, 1);
	put64(x, fileid);
	put_str(x, name);
	put64(x, fileid * 10);
	if (is_plus) {
		put_post_op_attr(x, (uint32_t)fileid);
		put32(x, 1);
		put_fh_b(x);
	}
}

static void
test_reply_readdir(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};
	size_t after_two;
	int plus;

	(void)state;
	for (plus = 0; plus <= 1; plus++) {
		uint32_t proc = plus ? TH_NFS3_READDIRPLUS : TH_NFS3_READDIR;

		x.n = 0;
		put32(&x, 0);
		put_post_op_attr(&x, 19);
		put64(&x, 0xc0ffee); /* cookieverf */
		put_entry(&x, 1, ".", plus);
		put_entry(&x, 2, "..", plus);
		after_two = x.n;
		put_entry(&x, 3, "a-longer-file-name.dat", plus);
		put32(&x, 0);
		put32(&x, 1); /* eof */
		assert_int_equal(reply3(proc, &x, &r), TH_NFS_OK);
		check_attr(&r.attr, 19);
		assert_int_equal(r.count, 3);
		assert_false(r.is_count_partial);
		assert_true(r.eof);
		check_prefixes(proc, true, &x, x.n);

		/* Cut before its eof word: every entry counted, eof unknown. */
		x.n -= 4;
		assert_int_equal(reply3(proc, &x, &r), TH_NFS_SHORT);
		assert_int_equal(r.count, 3);
		assert_false(r.is_count_partial);

		/* A listing cut inside the third entry: two entries seen, said to be some. */
		x.n = after_two + 10;
		assert_int_equal(reply3(proc, &x, &r), TH_NFS_SHORT);
		check_attr(&r.attr, 19);
		assert_int_equal(r.count, 2);
		assert_true(r.is_count_partial);
		assert_false(r.eof);

		/* ... or before its cookie verifier: none seen, not a listing of none. */
		x.n = 4 + 4 + 84 + 4;
		assert_int_equal(reply3(proc, &x, &r), TH_NFS_SHORT);
		assert_int_equal(r.count, 0);
		assert_true(r.is_count_partial);
	}

	x.n = 0;
	put32(&x, 10003); /* BAD_COOKIE */
	put_post_op_attr(&x, 20);
	assert_int_equal(reply3(TH_NFS3_READDIR, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 10003);
	check_attr(&r.attr, 20);
	assert_int_equal(r.count, 0);
	assert_false(r.is_count_partial); /* no listing */
}

/* What the READDIRPLUS entry walk handed on. */
struct seen {
	unsigned int n;     /* entries handed on */
	char names[8][32];  /* their names, NUL-terminated */
	uint8_t fh_len[8];  /* their handle lengths */
	uint64_t fileid[8]; /* their inode numbers */
	struct th_nfs_attr attr[8]; /* their attributes */
};

static void
on_entry(void *ctx, const struct th_nfs_dirent *e)
{
	struct seen *s = ctx;

	assert_true(e->name_len > 0 && e->name_len < sizeof(s->names[0]));
	assert_true(e->fh_len > 0 && e->fh_len <= TH_NFS_FH_MAX);
	assert_true(s->n < 8);
	memcpy(s->names[s->n], e->name, e->name_len);
	s->names[s->n][e->name_len] = '\0';
	s->fh_len[s->n] = e->fh_len;
	s->fileid[s->n] = e->fileid;
	s->attr[s->n] = e->attr;
	s->n++;
}

static enum th_nfs_status
walk3(uint32_t proc, const uint8_t *b, size_t n, struct th_nfs_reply *r, struct seen *s)
{
	memset(r, 0, sizeof(*r));
	memset(s, 0, sizeof(*s));
	return th_nfs_decode_reply_entries(TH_PROG_NFS, 3, proc, b, n, r, on_entry, s);
}

/* An entryplus3 without a handle (name_handle absent), attributes present. */
static void
put_entry_no_fh(struct xb *x, uint64_t fileid, const char *name)
{
	put32(x, 1);
	put64(x, fileid);
	put_str(x, name);
	put64(x, fileid * 10);
	put_post_op_attr(x, (uint32_t)fileid);
	put32(x, 0);
}

/* "." and ".." (handle B), "alpha" (B), "nofh" (no handle), "beta" (handle A). */
static void
put_listing(struct xb *x, size_t *entry_end)
{
	x->n = 0;
	put32(x, 0);
	put_post_op_attr(x, 19);
	put64(x, 0xc0ffee); /* cookieverf */
	put_entry(x, 1, ".", true);
	put_entry(x, 2, "..", true);
	put_entry(x, 3, "alpha", true);
	put_entry_no_fh(x, 4, "nofh");
	entry_end[0] = x->n;
	put32(x, 1);
	put64(x, 5);
	put_str(x, "beta");
	put64(x, 50);
	put32(x, 0); /* no attributes */
	put32(x, 1);
	put_fh_a(x);
	entry_end[1] = x->n;
	put32(x, 0);
	put32(x, 1); /* eof */
}

static void
test_reply_readdirplus_entries(void **state)
{
	struct th_nfs_reply r, plain;
	struct seen s;
	struct xb x = {0};
	size_t end[2], n;

	(void)state;
	put_listing(&x, end);
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_OK);
	assert_int_equal(r.count, 5);
	assert_true(r.eof);
	check_attr(&r.attr, 19);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.names[0], ".");
	assert_string_equal(s.names[1], "..");
	assert_string_equal(s.names[2], "alpha");
	assert_int_equal(s.fh_len[2], sizeof(FH_B));
	assert_true(s.fileid[2] == 3);
	assert_string_equal(s.names[3], "beta");
	assert_int_equal(s.fh_len[3], sizeof(FH_A));
	assert_true(s.fileid[3] == 5);
	/* Each entry's attributes (the name map's modes), where it carried them. */
	check_attr(&s.attr[2], 3);
	assert_false(s.attr[3].is_present);
	/* The walk changes nothing else the reply reports. */
	assert_int_equal(reply3(TH_NFS3_READDIRPLUS, &x, &plain), TH_NFS_OK);
	assert_memory_equal(&plain, &r, sizeof(r));

	/* Attributes of a type NFSv3 does not have: the entry stands without them, and is
	 * counted as the walk without a callback counts it. */
	put_listing(&x, end);
	/* alpha's type word lies 52 bytes before its attributes' fileid, 0xabcdef03. */
	for (n = 0; n + 8 <= x.n; n++)
		if (memcmp(x.b + n, "\x00\x00\x00\x00\xab\xcd\xef\x03", 8) == 0)
			break;
	assert_true(n >= 52 && n + 8 <= x.n);
	assert_int_equal(x.b[n - 52 + 3], TH_NFS_REG);
	x.b[n - 52 + 3] = 9;
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_OK);
	assert_int_equal(s.n, 4);
	assert_false(s.attr[2].is_present);
	assert_int_equal(r.count, 5);
	assert_int_equal(reply3(TH_NFS3_READDIRPLUS, &x, &plain), TH_NFS_OK);
	assert_memory_equal(&plain, &r, sizeof(r));

	/* Every prefix, from an exact-size copy: only whole entries, in order. */
	for (n = 0; n <= x.n; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		enum th_nfs_status st;

		assert_non_null(copy);
		memcpy(copy, x.b, n);
		st = walk3(TH_NFS3_READDIRPLUS, copy, n, &r, &s);
		free(copy);
		assert_int_equal(st, n == x.n ? TH_NFS_OK : TH_NFS_SHORT);
		assert_true(s.n <= 4);
		if (n < end[0])
			assert_true(s.n <= 3);
		else if (n < end[1])
			assert_int_equal(s.n, 3);
		else
			assert_int_equal(s.n, 4);
		if (s.n >= 3)
			assert_string_equal(s.names[2], "alpha");
	}

	/* Malformed: beta's handle longer than NFSv3 allows. Entries before it stand. */
	put_listing(&x, end);
	x.n = end[1] - sizeof(FH_A) - 4;
	put_opaque(&x, (const uint8_t[65]){0}, 65);
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_MALFORMED);
	assert_int_equal(s.n, 3);
	assert_int_equal(r.count, 4);

	/* Malformed: a name longer than any server sends. */
	put_listing(&x, end);
	x.n = end[0];
	put32(&x, 1);
	put64(&x, 6);
	put32(&x, 5000);
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_MALFORMED);
	assert_int_equal(s.n, 3);

	/* Malformed: a "handle follows" that is neither 0 nor 1. */
	put_listing(&x, end);
	x.n = end[1] - sizeof(FH_A) - 8;
	put32(&x, 2);
	put_fh_a(&x);
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_MALFORMED);
	assert_int_equal(s.n, 3);

	/* An empty handle is no handle: counted, not handed on. */
	put_listing(&x, end);
	x.n = end[1] - sizeof(FH_A) - 4;
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 1);
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_OK);
	assert_int_equal(r.count, 5);
	assert_int_equal(s.n, 3);

	/* A failed listing, and READDIR (no handles), hand nothing on. */
	x.n = 0;
	put32(&x, 2); /* NOENT */
	put32(&x, 0);
	assert_int_equal(walk3(TH_NFS3_READDIRPLUS, x.b, x.n, &r, &s), TH_NFS_OK);
	assert_int_equal(s.n, 0);
	x.n = 0;
	put32(&x, 0);
	put_post_op_attr(&x, 19);
	put64(&x, 0xc0ffee);
	put_entry(&x, 3, "alpha", false);
	put32(&x, 0);
	put32(&x, 1);
	assert_int_equal(walk3(TH_NFS3_READDIR, x.b, x.n, &r, &s), TH_NFS_OK);
	assert_int_equal(r.count, 1);
	assert_int_equal(s.n, 0);
}

static void
test_reply_fs_info(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};
	int i;

	(void)state;
	put32(&x, 0);
	put_post_op_attr(&x, 21);
	for (i = 0; i < 6; i++)
		put64(&x, 1000 * i);
	put32(&x, 0);
	assert_int_equal(reply3(TH_NFS3_FSSTAT, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 21);
	check_prefixes(TH_NFS3_FSSTAT, true, &x, x.n);

	x.n = 0;
	put32(&x, 0);
	put_post_op_attr(&x, 22);
	for (i = 0; i < 7; i++)
		put32(&x, 65536);
	put64(&x, ~0ull);
	put32(&x, 0);
	put32(&x, 1);
	put32(&x, 0x1b);
	assert_int_equal(reply3(TH_NFS3_FSINFO, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 22);
	check_prefixes(TH_NFS3_FSINFO, true, &x, x.n);

	x.n = 0;
	put32(&x, 0);
	put_post_op_attr(&x, 23);
	put32(&x, 32000);
	put32(&x, 255);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 0);
	put32(&x, 1);
	assert_int_equal(reply3(TH_NFS3_PATHCONF, &x, &r), TH_NFS_OK);
	check_attr(&r.attr, 23);
	check_prefixes(TH_NFS3_PATHCONF, true, &x, x.n);

	/* Failure arms of the three: post_op_attr only. */
	x.n = 0;
	put32(&x, 10001); /* BADHANDLE */
	put32(&x, 0);
	assert_int_equal(reply3(TH_NFS3_FSSTAT, &x, &r), TH_NFS_OK);
	assert_int_equal(reply3(TH_NFS3_FSINFO, &x, &r), TH_NFS_OK);
	assert_int_equal(reply3(TH_NFS3_PATHCONF, &x, &r), TH_NFS_OK);
	assert_int_equal(r.status, 10001);
}

static void
test_reply_null(void **state)
{
	struct th_nfs_reply r;
	struct xb x = {0};

	(void)state;
	assert_int_equal(reply3(TH_NFS3_NULL, &x, &r), TH_NFS_OK);
}

/* ---- bad input ---- */

static void
test_malformed(void **state)
{
	struct th_nfs_call c;
	struct th_nfs_reply r;
	uint8_t big[300];
	struct xb x = {0};

	(void)state;
	/* A handle longer than NFS3_FHSIZE */
	put32(&x, 65);
	memset(x.b + 4, 0, 68);
	x.n = 72;
	assert_int_equal(call3(TH_NFS3_GETATTR, &x, &c), TH_NFS_MALFORMED);
	assert_int_equal(c.fh.len, 0);

	/* A huge name length: garbage, not a short buffer. */
	x.n = 0;
	put_fh_a(&x);
	put32(&x, 0x7fffffff);
	put32(&x, 0);
	assert_int_equal(call3(TH_NFS3_LOOKUP, &x, &c), TH_NFS_MALFORMED);

	/* A name longer than the buffer but within bounds: the buffer is short. */
	x.n = 0;
	put_fh_a(&x);
	put32(&x, 200);
	put32(&x, 0x41414141);
	assert_int_equal(call3(TH_NFS3_LOOKUP, &x, &c), TH_NFS_SHORT);
	assert_int_equal(c.name.len, 0);

	/* A 300-byte name is kept cut and flagged. */
	x.n = 0;
	memset(big, 'n', sizeof(big));
	put_fh_a(&x);
	put_opaque(&x, big, sizeof(big));
	assert_int_equal(call3(TH_NFS3_LOOKUP, &x, &c), TH_NFS_OK);
	assert_true(c.name.is_cut);
	assert_int_equal(c.name.len, TH_NFS_NAME_MAX);
	assert_int_equal(strlen(c.name.s), TH_NFS_NAME_MAX);

	/* WRITE stable_how out of range */
	x.n = 0;
	put_fh_a(&x);
	put64(&x, 0);
	put32(&x, 1);
	put32(&x, 3);
	put32(&x, 1);
	assert_int_equal(call3(TH_NFS3_WRITE, &x, &c), TH_NFS_MALFORMED);

	/* attributes_follow that is neither TRUE nor FALSE */
	x.n = 0;
	put32(&x, 2);
	put32(&x, 2);
	assert_int_equal(reply3(TH_NFS3_LOOKUP, &x, &r), TH_NFS_MALFORMED);

	/* fattr3 with an unknown file type */
	x.n = 0;
	put32(&x, 0);
	put_fattr3(&x, 9, 0);
	assert_int_equal(reply3(TH_NFS3_GETATTR, &x, &r), TH_NFS_MALFORMED);
	assert_false(r.attr.is_present);

	/* post_op_fh3 with a handle over the limit */
	x.n = 0;
	put32(&x, 0);
	put32(&x, 1);
	put32(&x, 200);
	assert_int_equal(reply3(TH_NFS3_MKDIR, &x, &r), TH_NFS_MALFORMED);

	/* A directory entry name of absurd length */
	x.n = 0;
	put32(&x, 0);
	put32(&x, 0);
	put64(&x, 0);
	put32(&x, 1);
	put64(&x, 1);
	put32(&x, 0xfffffff0);
	assert_int_equal(reply3(TH_NFS3_READDIR, &x, &r), TH_NFS_MALFORMED);
}

static void
test_unknown(void **state)
{
	struct th_nfs_call c = {0};
	struct th_nfs_reply r = {0};
	uint8_t b[8] = {0};

	(void)state;
	assert_int_equal(
		th_nfs_decode_call(TH_PROG_NFS, 3, 22, b, sizeof(b), &c), TH_NFS_UNKNOWN_PROC);
	assert_int_equal(
		th_nfs_decode_reply(TH_PROG_NFS, 3, 1000, b, sizeof(b), &r), TH_NFS_UNKNOWN_PROC);
	assert_int_equal(
		th_nfs_decode_call(TH_PROG_NFS, 5, 1, b, sizeof(b), &c), TH_NFS_UNKNOWN_PROG);
	assert_int_equal(
		th_nfs_decode_call(TH_PROG_NLM, 4, 1, b, sizeof(b), &c), TH_NFS_UNKNOWN_PROG);
	assert_int_equal(
		th_nfs_decode_reply(TH_PROG_NFSACL, 3, 1, b, sizeof(b), &r), TH_NFS_UNKNOWN_PROG);
	/* Decoders never look at the buffer of an empty body. */
	assert_int_equal(
		th_nfs_decode_call(TH_PROG_NFS, 3, TH_NFS3_GETATTR, NULL, 0, &c), TH_NFS_SHORT);
	assert_int_equal(
		th_nfs_decode_reply(TH_PROG_NFS, 3, TH_NFS3_GETATTR, NULL, 0, &r), TH_NFS_SHORT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_null),
		cmocka_unit_test(test_call_fh_only),
		cmocka_unit_test(test_call_setattr),
		cmocka_unit_test(test_call_lookup_remove_rmdir),
		cmocka_unit_test(test_call_access),
		cmocka_unit_test(test_call_read_commit),
		cmocka_unit_test(test_call_write),
		cmocka_unit_test(test_call_create),
		cmocka_unit_test(test_call_mkdir_symlink),
		cmocka_unit_test(test_call_mknod),
		cmocka_unit_test(test_call_rename_link),
		cmocka_unit_test(test_call_readdir),
		cmocka_unit_test(test_reply_null),
		cmocka_unit_test(test_reply_getattr),
		cmocka_unit_test(test_reply_wcc_only),
		cmocka_unit_test(test_reply_lookup),
		cmocka_unit_test(test_reply_access_readlink),
		cmocka_unit_test(test_reply_read),
		cmocka_unit_test(test_reply_write_commit),
		cmocka_unit_test(test_reply_create_family),
		cmocka_unit_test(test_reply_rename_link),
		cmocka_unit_test(test_reply_readdir),
		cmocka_unit_test(test_reply_readdirplus_entries),
		cmocka_unit_test(test_reply_fs_info),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_unknown),
	};

	return cmocka_run_group_tests_name("nfs_v3", tests, NULL, NULL);
}
