/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/session around inference: the handle-to-name map and its validity
 * intervals, the record's text form (the seed's layout, exactly), and the
 * path from a decoded RPC (struct th_op) to an open record.
 */

#include "test_session_common.h"

#include "th_op.h"

static const struct th_sess_name *
find_name(const struct out *o, const char *name, uint64_t to_ns)
{
	for (unsigned int i = 0; i < o->n_names && i < MAX_OUT; i++)
		if (strcmp(o->names[i].name, name) == 0 && o->names[i].to_ns == to_ns)
			return &o->names[i];
	return NULL;
}

/*
 * A LOOKUP of "." answers with the directory itself and one of ".." with its parent: neither
 * is a name of that handle in the directory looked in (as names, the root of a mount looked
 * up as "." became its own child, and every path under it "./././..." 64 deep).
 */
static void
test_name_dot_lookups(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op op;

	(void)state;
	small_config(&c);
	t = table_new(&c, &o);
	op = mk_name(TH_SESS_LOOKUP, 1, ".", -1, T0);
	op.fh2_len = (uint8_t)snprintf((char *)op.fh2, sizeof(op.fh2), "D1");
	input(t, op);
	op = mk_name(TH_SESS_LOOKUP, 2, "..", -1, T0 + 1 * SEC);
	op.fh2_len = (uint8_t)snprintf((char *)op.fh2, sizeof(op.fh2), "D1");
	input(t, op);
	/* Nor is a name with a '/': no component has one (a damaged or made-up reply). */
	input(t, mk_name(TH_SESS_LOOKUP, 1, "a/b", 6, T0 + 2 * SEC));
	input(t, mk_name(TH_SESS_LOOKUP, 1, "..a", 5, T0 + 2 * SEC));
	th_sess_flush(t);
	assert_int_equal(o.n_names, 1);
	assert_string_equal(o.names[0].name, "..a");
	assert_int_equal(th_sess_counters(t)->names, 1);
	th_sess_free(t);
}

/* LOOKUP/CREATE add names, REMOVE and RENAME end them, hard links keep every name. */
static void
test_name_validity(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op op;
	const struct th_sess_name *n;

	(void)state;
	small_config(&c);
	t = table_new(&c, &o);
	input(t, mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0));
	input(t, mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 1 * SEC)); /* nothing new */
	input(t, mk_name(TH_SESS_CREATE, 1, "b.txt", 6, T0 + 2 * SEC));
	/* A hard link: F5 is also D2/link.txt. */
	op = mk_name(TH_SESS_LINK, 1, "link.txt", -1, T0 + 3 * SEC);
	op.fh_len = (uint8_t)snprintf((char *)op.fh, sizeof(op.fh), "F5");
	op.fh2_len = (uint8_t)snprintf((char *)op.fh2, sizeof(op.fh2), "D2");
	input(t, op);
	assert_int_equal(o.n_names, 0);

	input(t, mk_name(TH_SESS_REMOVE, 1, "a.txt", -1, T0 + 4 * SEC));
	assert_int_equal(o.n_names, 1);
	assert_string_equal(o.names[0].name, "a.txt");
	assert_int_equal(o.names[0].from_ns, T0);
	assert_int_equal(o.names[0].to_ns, T0 + 4 * SEC + 1 * MS);
	assert_memory_equal(o.names[0].fh, "F5", 2);
	assert_memory_equal(o.names[0].dir_fh, "D1", 2);

	/* RENAME D1/b.txt -> D2/c.txt. */
	op = mk_name(TH_SESS_RENAME, 1, "b.txt", -1, T0 + 5 * SEC);
	op.fh2_len = (uint8_t)snprintf((char *)op.fh2, sizeof(op.fh2), "D2");
	op.name2_len = 5;
	memcpy(op.name2, "c.txt", 6);
	input(t, op);
	assert_int_equal(o.n_names, 2);
	assert_string_equal(o.names[1].name, "b.txt");
	assert_int_equal(o.names[1].to_ns, T0 + 5 * SEC + 1 * MS);

	/* LOOKUP NOENT on a known name ends it too. */
	op = mk_name(TH_SESS_LOOKUP, 2, "link.txt", -1, T0 + 6 * SEC);
	op.flags = 0;
	input(t, op);
	assert_int_equal(o.n_names, 3);
	assert_int_equal(o.names[2].to_ns, T0 + 6 * SEC);

	th_sess_flush(t);
	assert_int_equal(o.n_names, 4);
	n = find_name(&o, "c.txt", 0);
	assert_non_null(n);
	assert_memory_equal(n->fh, "F6", 2);
	assert_memory_equal(n->dir_fh, "D2", 2);
	assert_int_equal(n->from_ns, T0 + 5 * SEC + 1 * MS);
	assert_int_equal(th_sess_counters(t)->names, 4);
	th_sess_free(t);
}

/* The map is bounded: the oldest name goes out (still valid) and is counted. Names off:
 * none at all. */
static void
test_name_bounds_and_privacy(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	char name[16];

	(void)state;
	small_config(&c);
	c.names = 4;
	t = table_new(&c, &o);
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		input(t, mk_name(TH_SESS_LOOKUP, 1, name, i + 1, T0 + (uint64_t)i * SEC));
	}
	assert_int_equal(th_sess_counters(t)->names_evicted, 2);
	assert_int_equal(o.n_names, 2);
	assert_string_equal(o.names[0].name, "n0");
	assert_int_equal(o.names[0].to_ns, 0);
	th_sess_flush(t);
	assert_int_equal(o.n_names, 6);
	th_sess_free(t);

	small_config(&c);
	c.is_names_on = false;
	t = table_new(&c, &o);
	input(t, mk_name(TH_SESS_LOOKUP, 1, "secret", 1, T0));
	input(t, mk_name(TH_SESS_REMOVE, 1, "secret", -1, T0 + 1 * SEC));
	th_sess_flush(t);
	assert_int_equal(o.n_names, 0);
	th_sess_free(t);
}

/* The seed's example record, byte for byte. */
static void
test_record_format(void **state)
{
	static const uint8_t fh[] = {0x7b, 0x1f, 0, 0, 0, 0, 0x40, 0x0f};
	struct th_sess_record r;
	char buf[256];
	const char *want =
		"690691919.593442 | 17734 | read | 10.0.0.1:7b1f00000000400f | 10.1.0.3.321 | 0 | "
		"24576\n";
	int n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.open_ns = 690691919593442000ull;
	r.close_ns = r.open_ns + 17734000ull + 999; /* µs are truncated */
	set_v4(&r.server, 10, 0, 0, 1);
	r.fh_len = sizeof(fh);
	memcpy(r.fh, fh, sizeof(fh));
	set_v4(&r.client, 10, 1, 0, 3);
	r.uid = 321;
	r.dir = TH_SESS_DIR_READ;
	r.is_cache_hit = true;
	r.size = 24576;
	n = th_sess_record_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));

	r.dir = TH_SESS_DIR_WRITE;
	r.open_ns = 1700000000000001000ull;
	r.close_ns = r.open_ns;
	r.transferred = 8192;
	r.size = 8192;
	memset(r.client.b, 0, sizeof(r.client.b));
	r.client.b[15] = 1; /* ::1 */
	th_sess_record_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "1700000000.000001 | 0 | write | 10.0.0.1:7b1f00000000400f | "
				 "::1.321 | 8192 | 8192\n");
	/* Too small a buffer: the size needed, as snprintf. */
	assert_int_equal(th_sess_record_format(&r, buf, 10), (int)strlen(buf));
}

static struct th_op *
op_new(uint32_t proc, uint64_t at)
{
	struct th_op *op = calloc(1, sizeof(*op));

	assert_non_null(op);
	op->call_first_ns = op->call_last_ns = at;
	op->reply_first_ns = op->reply_last_ns = at + 2 * MS;
	set_v4(&op->client, 10, 1, 0, 3);
	set_v4(&op->server, 10, 0, 0, 1);
	op->client_port = 789;
	op->server_port = 2049;
	op->kind = TH_OP_MATCHED;
	op->transport = TH_PKT_L4_TCP;
	op->prog = TH_PROG_NFS;
	op->vers = 3;
	op->proc = proc;
	op->auth = TH_AUTH_SYS;
	op->uid = 1000;
	op->gid = 100;
	op->call.fh.len = 8;
	memcpy(op->call.fh.data, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	op->reply.attr.is_present = true;
	op->reply.attr.type = TH_NFS_REG;
	op->reply.attr.size = 70000;
	op->reply.attr.fileid = 42;
	return op;
}

/* From decoded RPCs to a record: two READs of a file are one open of 70000 bytes. */
static void
test_from_op_to_record(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op *sop = calloc(1, sizeof(*sop));
	struct th_op *op = op_new(TH_NFS3_READ, T0);
	char buf[256];

	(void)state;
	assert_non_null(sop);
	small_config(&c);
	t = table_new(&c, &o);
	op->call.offset = 0;
	op->call.count = 65536;
	op->reply.count = 65536;
	assert_true(th_sess_op_from_op(op, sop));
	assert_int_equal(sop->kind, TH_SESS_READ);
	assert_int_equal(sop->count, 65536);
	assert_int_equal(sop->flags, TH_SESS_F_OK | TH_SESS_F_HAS_SIZE);
	assert_int_equal(sop->size, 70000);
	assert_int_equal(sop->fileid, 42);
	assert_int_equal(sop->fh_len, 8);
	assert_int_equal(sop->uid, 1000);
	assert_int_equal(sop->reply_ns, T0 + 2 * MS);
	th_sess_input(t, sop);
	op->call_first_ns = T0 + 5 * MS;
	op->reply_first_ns = T0 + 7 * MS;
	op->call.offset = 65536;
	op->reply.count = 70000 - 65536;
	op->reply.eof = true;
	assert_true(th_sess_op_from_op(op, sop));
	assert_true(sop->flags & TH_SESS_F_EOF);
	th_sess_input(t, sop);
	th_sess_flush(t);
	assert_int_equal(o.n_records, 1);
	assert_int_equal(o.records[0].transferred, 70000);
	assert_int_equal(o.records[0].size, 70000);
	th_sess_record_format(&o.records[0], buf, sizeof(buf));
	assert_string_equal(buf,
		"1700000000.000000 | 7000 | read | 10.0.0.1:0102030405060708 | 10.1.0.3.1000 | "
		"70000 | 70000\n");

	/* A failed READ is reduced (the status matters) and opens nothing. */
	op->reply.status = 13; /* ACCES */
	assert_true(th_sess_op_from_op(op, sop));
	assert_false(sop->flags & TH_SESS_F_OK);
	free(op);
	th_sess_free(t);
	free(sop);
}

static bool
from_dirent(const struct th_op *op, const char *name, const char *fh, struct th_sess_op *sop)
{
	struct th_nfs_dirent e = {
		.fileid = 9,
		.name = (const uint8_t *)name,
		.name_len = (uint32_t)strlen(name),
		.fh = (const uint8_t *)fh,
		.fh_len = (uint8_t)strlen(fh),
	};

	return th_sess_op_from_dirent(op, &e, sop);
}

/*
 * ls -l: READDIRPLUS lists F9 as "report.txt" and the client opens it with no
 * LOOKUP. The listing's binding names the open's handle from the listing on,
 * under the rules a LOOKUP's binding follows.
 */
static void
test_dirent_names_open(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op *sop = calloc(1, sizeof(*sop));
	struct th_op *op = op_new(TH_NFS3_READDIRPLUS, T0);
	struct th_op *rd = op_new(TH_NFS3_READ, T0 + 1 * SEC);
	const struct th_sess_name *n;
	unsigned int i;

	(void)state;
	assert_non_null(sop);
	small_config(&c);
	c.detail = TH_SESS_OPENS_DIRS;
	t = table_new(&c, &o);
	op->reply.attr.type = TH_NFS_DIR;
	op->reply.eof = true;
	op->reply.count = 3;

	/* Not bindings: the directory itself, its parent, a path, an empty handle. */
	assert_false(from_dirent(op, ".", "F1", sop));
	assert_false(from_dirent(op, "..", "F2", sop));
	assert_false(from_dirent(op, "a/b", "F3", sop));
	assert_false(from_dirent(op, "x", "", sop));
	assert_true(from_dirent(op, "..x", "F4", sop));

	assert_true(from_dirent(op, "report.txt", "F9", sop));
	assert_int_equal(sop->kind, TH_SESS_DIRENT);
	assert_int_equal(sop->call_ns, T0);
	assert_int_equal(sop->fh_len, 8);
	assert_memory_equal(sop->fh, op->call.fh.data, 8);
	assert_int_equal(sop->fh2_len, 2);
	assert_string_equal(sop->name, "report.txt");
	/* It goes where the directory's LOOKUPs go. */
	for (i = 2; i < 6; i++)
		assert_int_equal(th_sess_op_owner(sop, i),
			th_sess_fh_owner(&op->server, op->call.fh.data, 8, i));
	th_sess_input(t, sop);
	/* The same binding again (a second ls -l): nothing new. */
	th_sess_input(t, sop);
	assert_int_equal(th_sess_counters(t)->dirents, 2);
	assert_int_equal(th_sess_counters(t)->ops, 0);
	assert_true(th_sess_op_from_op(op, sop));
	th_sess_input(t, sop);

	/* cat report.txt: READs of F9, no LOOKUP. */
	rd->call.fh.len = 2;
	memcpy(rd->call.fh.data, "F9", 2);
	rd->call.count = 4096;
	rd->reply.count = 100;
	rd->reply.eof = true;
	rd->reply.attr.size = 100;
	assert_true(th_sess_op_from_op(rd, sop));
	th_sess_input(t, sop);
	th_sess_flush(t);

	n = NULL;
	for (i = 0; i < o.n_records; i++)
		if (o.records[i].fh_len == 2 && memcmp(o.records[i].fh, "F9", 2) == 0)
			break;
	assert_true(i < o.n_records);
	n = find_name(&o, "report.txt", 0);
	assert_non_null(n);
	assert_int_equal(n->fh_len, 2);
	assert_memory_equal(n->fh, "F9", 2);
	assert_int_equal(n->dir_fh_len, 8);
	assert_memory_equal(n->dir_fh, op->call.fh.data, 8);
	assert_int_equal(n->from_ns, T0);
	assert_true(n->from_ns <= o.records[i].open_ns);
	assert_int_equal(o.n_names, 1);

	/* A later listing that shows another file under the name ends the old meaning. */
	th_sess_free(t);
	t = table_new(&c, &o);
	assert_true(from_dirent(op, "report.txt", "F9", sop));
	th_sess_input(t, sop);
	op->call_first_ns = T0 + 10 * SEC;
	op->reply_first_ns = T0 + 10 * SEC + 2 * MS;
	assert_true(from_dirent(op, "report.txt", "F10", sop));
	th_sess_input(t, sop);
	assert_int_equal(o.n_names, 1);
	assert_memory_equal(o.names[0].fh, "F9", 2);
	assert_int_equal(o.names[0].to_ns, T0 + 10 * SEC);

	/* A failed listing, or one whose reply was not seen, binds nothing. */
	op->reply.status = 2;
	assert_false(from_dirent(op, "report.txt", "F9", sop));
	op->reply.status = 0;
	op->kind = TH_OP_CALL_ONLY;
	assert_false(from_dirent(op, "report.txt", "F9", sop));
	op->kind = TH_OP_MATCHED;
	op->proc = TH_NFS3_READDIR;
	assert_false(from_dirent(op, "report.txt", "F9", sop));
	th_sess_free(t);

	/* Names off (privacy): bindings are taken and dropped. */
	c.is_names_on = false;
	t = table_new(&c, &o);
	op->proc = TH_NFS3_READDIRPLUS;
	assert_true(from_dirent(op, "report.txt", "F9", sop));
	th_sess_input(t, sop);
	th_sess_flush(t);
	assert_int_equal(o.n_names, 0);
	th_sess_free(t);
	free(rd);
	free(op);
	free(sop);
}

/* th_sess_op_from_op(), checked against th_sess_op_is_used(). */
static bool
reduce(const struct th_op *op, struct th_sess_op *sop)
{
	bool is_used = th_sess_op_is_used(op);

	assert_int_equal(th_sess_op_from_op(op, sop), is_used);
	return is_used;
}

/* What th_sess_op_from_op maps, and what it refuses. */
static void
test_from_op_mapping(void **state)
{
	struct th_sess_op *sop = calloc(1, sizeof(*sop));
	struct th_op *op;

	(void)state;
	assert_non_null(sop);
	/* LOOKUP: name from the call, the new handle from the reply. */
	op = op_new(TH_NFS3_LOOKUP, T0);
	op->call.name.len = 3;
	memcpy(op->call.name.s, "foo", 4);
	op->reply.fh.len = 4;
	memcpy(op->reply.fh.data, "\xaa\xbb\xcc\xdd", 4);
	op->reply.attr.type = TH_NFS_DIR;
	assert_true(reduce(op, sop));
	assert_int_equal(sop->kind, TH_SESS_LOOKUP);
	assert_int_equal(sop->fh2_len, 4);
	assert_memory_equal(sop->fh2, "\xaa\xbb\xcc\xdd", 4);
	assert_string_equal(sop->name, "foo");
	assert_true(sop->flags & TH_SESS_F_IS_DIR);
	free(op);

	/* RENAME: the target directory from the call, both names. */
	op = op_new(TH_NFS3_RENAME, T0);
	op->call.name.len = 1;
	memcpy(op->call.name.s, "a", 2);
	op->call.name2.len = 1;
	memcpy(op->call.name2.s, "b", 2);
	op->call.fh2.len = 2;
	memcpy(op->call.fh2.data, "\x09\x09", 2);
	assert_true(reduce(op, sop));
	assert_int_equal(sop->kind, TH_SESS_RENAME);
	assert_int_equal(sop->fh2_len, 2);
	assert_string_equal(sop->name2, "b");

	/* SETATTR size 0: truncate. */
	op->proc = TH_NFS3_SETATTR;
	op->call.has_set_size = true;
	op->call.set_size = 0;
	assert_true(reduce(op, sop));
	assert_int_equal(sop->kind, TH_SESS_SETATTR);
	assert_true(sop->flags & TH_SESS_F_TRUNCATE);

	/* NFSv2 WRITE is procedure 8. */
	op->vers = 2;
	op->proc = TH_NFS2_WRITE;
	op->reply.count = 512;
	assert_true(reduce(op, sop));
	assert_int_equal(sop->kind, TH_SESS_WRITE);
	assert_int_equal(sop->vers, 2);

	/* A call whose reply never came: flagged, a WRITE still counts the bytes it sent. */
	op->kind = TH_OP_CALL_ONLY;
	op->reply_first_ns = 0;
	op->call.count = 4096;
	assert_true(reduce(op, sop));
	assert_true(sop->flags & TH_SESS_F_NO_REPLY);
	assert_int_equal(sop->count, 4096);
	assert_int_equal(sop->reply_ns, 0);

	/* MOUNT MNT. */
	op->kind = TH_OP_MATCHED;
	op->reply_first_ns = T0 + 1;
	op->prog = TH_PROG_MOUNT;
	op->vers = 3;
	op->proc = TH_MOUNT_MNT;
	assert_true(reduce(op, sop));
	assert_int_equal(sop->kind, TH_SESS_MNT);

	/* Refused: a reply without its call, an RPC-level failure, NFSv4, NULL, portmap,
	 * encrypted arguments. */
	op->prog = TH_PROG_NFS;
	op->proc = TH_NFS3_READ;
	op->kind = TH_OP_REPLY_ONLY;
	assert_false(reduce(op, sop));
	op->kind = TH_OP_MATCHED;
	op->accept_stat = 1;
	assert_false(reduce(op, sop));
	op->accept_stat = 0;
	op->vers = 4;
	assert_false(reduce(op, sop));
	op->vers = 3;
	op->proc = TH_NFS3_NULL;
	assert_false(reduce(op, sop));
	op->prog = TH_PROG_PORTMAP;
	op->vers = 2;
	op->proc = 3;
	assert_false(reduce(op, sop));
	/* Arguments under RPCSEC_GSS privacy: nothing to read. */
	op->prog = TH_PROG_NFS;
	op->vers = 3;
	op->proc = TH_NFS3_READ;
	assert_true(reduce(op, sop));
	op->is_opaque = true;
	assert_false(reduce(op, sop));
	free(op);
	free(sop);
}

static void
test_name_format(void **state)
{
	struct th_sess_name n;
	char buf[512];

	(void)state;
	memset(&n, 0, sizeof(n));
	set_v4(&n.server, 10, 0, 0, 1);
	n.dir_fh_len = 2;
	memcpy(n.dir_fh, "\xd1\x01", 2);
	n.fh_len = 2;
	memcpy(n.fh, "\xf5\x05", 2);
	n.from_ns = T0 + 1000;
	n.to_ns = 0;
	n.name_len = 6;
	memcpy(n.name, "a b|c\\", 7);
	th_sess_name_format(&n, buf, sizeof(buf));
	assert_string_equal(
		buf, "10.0.0.1 | d101 | a\\x20b\\x7cc\\x5c | f505 | 1700000000.000001 | - | -\n");
}

/*
 * The map keeps each name's mode, as the seed's map does: from a LOOKUP's or
 * a listing's attributes, carried over a RENAME; a reply with another mode
 * (a chmod) starts a new interval; the text form writes it as ls does.
 */
static void
test_name_modes(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op *sop = calloc(1, sizeof(*sop));
	struct th_op *op = op_new(TH_NFS3_LOOKUP, T0);
	struct th_nfs_dirent e = {
		.name = (const uint8_t *)"sub",
		.name_len = 3,
		.fh = (const uint8_t *)"F7",
		.fh_len = 2,
		.attr = {.is_present = true, .type = TH_NFS_DIR, .mode = 01777},
	};
	struct th_sess_op lk;
	struct th_sess_name n;
	char buf[512];

	(void)state;
	assert_non_null(sop);
	/* From the decoded reply: the looked-up object's type and permission bits. */
	op->call.name.len = 5;
	memcpy(op->call.name.s, "a.txt", 6);
	op->reply.fh.len = 2;
	memcpy(op->reply.fh.data, "F5", 2);
	op->reply.attr.type = TH_NFS_REG;
	op->reply.attr.mode = 0104755;
	assert_true(th_sess_op_from_op(op, sop));
	assert_int_equal(sop->mode, 0104755);
	op->reply.attr.is_present = false;
	assert_true(th_sess_op_from_op(op, sop));
	assert_int_equal(sop->mode, 0);
	op->proc = TH_NFS3_READDIRPLUS;
	assert_true(th_sess_op_from_dirent(op, &e, sop));
	assert_int_equal(sop->mode, 041777);
	e.attr.is_present = false;
	assert_true(th_sess_op_from_dirent(op, &e, sop));
	assert_int_equal(sop->mode, 0);

	small_config(&c);
	t = table_new(&c, &o);
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0);
	input(t, lk); /* no attributes: mode unknown */
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 1 * SEC);
	lk.mode = 0100644;
	input(t, lk); /* the same file, its mode now known: filled in */
	assert_int_equal(o.n_names, 0);
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 2 * SEC);
	lk.mode = 0100600;
	input(t, lk); /* chmod 600 seen: the 644 interval ends */
	assert_int_equal(o.n_names, 1);
	assert_int_equal(o.names[0].mode, 0100644);
	assert_int_equal(o.names[0].from_ns, T0);
	assert_int_equal(o.names[0].to_ns, T0 + 2 * SEC);
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 3 * SEC);
	lk.mode = 0;
	input(t, lk); /* a reply without attributes changes nothing */
	assert_int_equal(o.n_names, 1);
	/* RENAME D1/a.txt -> D1/b.txt: the file keeps its mode under the new name. */
	lk = mk_name(TH_SESS_RENAME, 1, "a.txt", -1, T0 + 4 * SEC);
	lk.fh2_len = 2;
	memcpy(lk.fh2, "D1", 2);
	lk.name2_len = 5;
	memcpy(lk.name2, "b.txt", 6);
	input(t, lk);
	assert_int_equal(o.n_names, 2);
	assert_int_equal(o.names[1].mode, 0100600);
	th_sess_flush(t);
	assert_int_equal(o.n_names, 3);
	assert_string_equal(o.names[2].name, "b.txt");
	assert_int_equal(o.names[2].mode, 0100600);
	th_sess_free(t);

	memset(&n, 0, sizeof(n));
	set_v4(&n.server, 10, 0, 0, 1);
	n.fh_len = 1;
	n.fh[0] = 0xf5;
	n.name_len = 1;
	n.name[0] = 'x';
	n.from_ns = T0;
	static const struct {
		uint32_t mode;
		const char *text;
	} modes[] = {
		{0100644, "-rw-r--r--"}, {0104755, "-rwsr-xr-x"}, {0102644, "-rw-r-Sr--"},
		{041777, "drwxrwxrwt"}, {041776, "drwxrwxrwT"}, {0120777, "lrwxrwxrwx"},
		{0060660, "brw-rw----"}, {0020620, "crw--w----"}, {0140755, "srwxr-xr-x"},
		{0010644, "prw-r--r--"}, {0, "-"},
		{0644, "-"}, /* no type: not a mode the trace saw */
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char want[128];

		n.mode = modes[i].mode;
		th_sess_name_format(&n, buf, sizeof(buf));
		snprintf(want, sizeof(want), "10.0.0.1 | - | x | f5 | 1700000000.000000 | - | %s\n",
			modes[i].text);
		assert_string_equal(buf, want);
	}
	free(op);
	free(sop);
}

/*
 * The capture's clock goes back (captures end to end, a clock step): a name
 * learned before the step stays valid after it. Left at its old from time,
 * ahead of the clock, a file named before the step had no name at any time
 * after it (export looks a name up at the open's time), a repeated LOOKUP did
 * not rebind it, and a REMOVE after the step ended it before it began.
 */
static void
test_name_clock_back(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op op;

	(void)state;
	small_config(&c);
	t = table_new(&c, &o);
	input(t, mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 100 * SEC));
	input(t, mk_name(TH_SESS_LOOKUP, 1, "b.txt", 6, T0 + 100 * SEC));
	memset(&op, 0, sizeof(op));
	op.kind = TH_SESS_CLOCK_BACK;
	op.call_ns = T0 + 10 * SEC;
	input(t, op);
	/* The same binding seen again after the step: nothing new. */
	input(t, mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 20 * SEC));
	input(t, mk_name(TH_SESS_REMOVE, 1, "b.txt", -1, T0 + 30 * SEC));
	assert_int_equal(o.n_names, 1);
	assert_string_equal(o.names[0].name, "b.txt");
	assert_int_equal(o.names[0].to_ns, T0 + 30 * SEC + 1 * MS);
	assert_true(o.names[0].from_ns < o.names[0].to_ns);
	th_sess_flush(t);
	assert_int_equal(o.n_names, 2);
	assert_string_equal(o.names[1].name, "a.txt");
	/* Valid at the LOOKUP after the step, as at the one before it. */
	assert_true(o.names[1].from_ns <= T0 + 20 * SEC);
	th_sess_free(t);
}

/*
 * Ops come in reply order: a listing called before a LOOKUP may be answered
 * after it. The mode it shows is older than the LOOKUP's (a chmod between
 * them): it must neither end the name before it began nor replace the newer
 * mode.
 */
static void
test_name_mode_older_reply(void **state)
{
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
	struct th_sess_op lk;

	(void)state;
	small_config(&c);
	t = table_new(&c, &o);
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 10 * SEC);
	lk.mode = 0100600;
	input(t, lk);
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 5 * SEC);
	lk.mode = 0100644;
	input(t, lk);
	for (unsigned int i = 0; i < o.n_names; i++)
		assert_true(o.names[i].to_ns == 0 || o.names[i].from_ns < o.names[i].to_ns);
	th_sess_flush(t);
	assert_int_equal(o.n_names, 1);
	assert_int_equal(o.names[0].mode, 0100600);
	assert_int_equal(o.names[0].from_ns, T0 + 10 * SEC);
	th_sess_free(t);

	/* An older call's reply naming another file: that meaning, up to the newer one. */
	t = table_new(&c, &o);
	input(t, mk_name(TH_SESS_LOOKUP, 1, "a.txt", 5, T0 + 10 * SEC));
	lk = mk_name(TH_SESS_LOOKUP, 1, "a.txt", 6, T0 + 5 * SEC);
	lk.mode = 0100644;
	input(t, lk);
	assert_int_equal(o.n_names, 1);
	assert_memory_equal(o.names[0].fh, "F6", 2);
	assert_int_equal(o.names[0].from_ns, T0 + 5 * SEC);
	assert_int_equal(o.names[0].to_ns, T0 + 10 * SEC);
	assert_int_equal(o.names[0].mode, 0100644);
	th_sess_flush(t);
	assert_int_equal(o.n_names, 2);
	assert_memory_equal(o.names[1].fh, "F5", 2);
	assert_int_equal(o.names[1].from_ns, T0 + 10 * SEC);
	assert_int_equal(o.names[1].to_ns, 0);
	th_sess_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_validity),
		cmocka_unit_test(test_name_dot_lookups),
		cmocka_unit_test(test_name_bounds_and_privacy),
		cmocka_unit_test(test_record_format),
		cmocka_unit_test(test_from_op_to_record),
		cmocka_unit_test(test_dirent_names_open),
		cmocka_unit_test(test_from_op_mapping),
		cmocka_unit_test(test_name_format),
		cmocka_unit_test(test_name_modes),
		cmocka_unit_test(test_name_clock_back),
		cmocka_unit_test(test_name_mode_older_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
