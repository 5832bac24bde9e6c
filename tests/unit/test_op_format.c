/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The text form of an op (lib/op): exact lines for the cases th_op.h
 * documents, since this line is what users grep, diff and parse.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "addr_build.h"

#include "th_op.h"

#define T0 1700000000123456789ull /* the call's first segment */

/* "123456789" hashes to cbf43926 (the CRC-32 check value), "abc" to 352441c2. */
static void
set_fh(struct th_nfs_fh *fh, const char *bytes)
{
	fh->len = (uint8_t)strlen(bytes);
	memcpy(fh->data, bytes, fh->len);
}

static void
set_name(struct th_nfs_name *n, const char *s)
{
	n->len = (uint16_t)strlen(s);
	memcpy(n->s, s, n->len);
	n->s[n->len] = '\0';
}

/*
 * A matched NFSv3 call over TCP from 10.0.0.1:789 to 10.0.0.2:2049,
 * AUTH_SYS 1000/100 "client1", 250.500 us from the first segment,
 * 250.000 us from the last.
 */
static struct th_op *
op_new(uint32_t proc)
{
	struct th_op *op = calloc(1, sizeof(*op));

	assert_non_null(op);
	op->kind = TH_OP_MATCHED;
	op->transport = TH_PKT_L4_TCP;
	set_v4(&op->client, 10, 0, 0, 1);
	set_v4(&op->server, 10, 0, 0, 2);
	op->client_port = 789;
	op->server_port = 2049;
	op->xid = 0x1234abcd;
	op->prog = TH_PROG_NFS;
	op->vers = 3;
	op->proc = proc;
	op->auth = TH_AUTH_SYS;
	op->uid = 1000;
	op->gid = 100;
	strcpy(op->machine, "client1");
	op->call_first_ns = T0;
	op->call_last_ns = T0 + 500;
	op->reply_first_ns = T0 + 250500;
	op->reply_last_ns = T0 + 260000;
	return op;
}

static void
set_attr(struct th_nfs_attr *a)
{
	a->is_present = true;
	a->type = TH_NFS_REG;
	a->mode = 0644;
	a->nlink = 1;
	a->uid = 1000;
	a->gid = 100;
	a->size = 1048576;
	a->fileid = 12345;
	a->mtime_ns = 1690000000000000001ull;
}

#define HEAD "1700000000.123456789 RPC tcp 10.0.0.1:789 10.0.0.2:2049 0x1234abcd "
#define AUTH " uid=1000 gid=100 machine=client1"
#define ATTR                                                                                       \
	" type=1 mode=0644 size=1048576 fileid=12345 uid_f=1000 gid_f=100"                         \
	" mtime=1690000000.000000001"

static void
expect_line(const struct th_op *op, const char *want)
{
	char buf[4096];
	int n;

	memset(buf, 0x7f, sizeof(buf));
	n = th_op_format(op, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void
test_read_tcp_v4(void **state)
{
	struct th_op *op = op_new(TH_NFS3_READ);

	(void)state;
	set_fh(&op->call.fh, "123456789");
	op->call.offset = 4096;
	op->call.count = 32768;
	op->reply.count = 32768;
	op->reply.eof = true;
	set_attr(&op->reply.attr);
	expect_line(op, HEAD "NFS3 READ OK 250.500 250.000" AUTH " fh=cbf43926 off=4096 count=32768"
			     " done=32768 eof=1" ATTR "\n");
	free(op);
}

static void
test_write(void **state)
{
	struct th_op *op = op_new(TH_NFS3_WRITE);

	(void)state;
	set_fh(&op->call.fh, "123456789");
	op->call.offset = 1ull << 32;
	op->call.count = 4096;
	op->call.stable = 2;
	op->reply.count = 4096;
	op->reply.committed = 1;
	op->reply.pre.is_present = true;
	op->reply.pre.size = 100;
	op->reply.pre.mtime_ns = 1690000000500000000ull;
	set_attr(&op->reply.attr);
	expect_line(op,
		HEAD "NFS3 WRITE OK 250.500 250.000" AUTH
		     " fh=cbf43926 off=4294967296 count=4096 stable=file_sync done=4096"
		     " committed=data_sync pre_size=100 pre_mtime=1690000000.500000000" ATTR "\n");

	op->call.stable = 0;
	op->reply.committed = 2;
	op->reply.pre.is_present = false;
	op->reply.attr.is_present = false;
	expect_line(op, HEAD "NFS3 WRITE OK 250.500 250.000" AUTH
			     " fh=cbf43926 off=4294967296 count=4096 stable=unstable done=4096"
			     " committed=file_sync\n");
	free(op);
}

static void
test_lookup_name_escaping(void **state)
{
	struct th_op *op = op_new(TH_NFS3_LOOKUP);

	(void)state;
	set_fh(&op->call.fh, "123456789");
	set_name(&op->call.name, "a b=c\\d\x01\xc3\xa9.txt");
	set_fh(&op->reply.fh, "abc");
	set_attr(&op->reply.attr);
	expect_line(op,
		HEAD "NFS3 LOOKUP OK 250.500 250.000" AUTH
		     " fh=cbf43926 name=a\\x20b\\x3dc\\x5cd\\x01\\xc3\\xa9.txt newfh=352441c2" ATTR
		     "\n");
	free(op);
}

static void
test_lookup_cut_name(void **state)
{
	struct th_op *op = op_new(TH_NFS3_LOOKUP);
	char want[1024], *p;
	int i;

	(void)state;
	set_fh(&op->call.fh, "123456789");
	op->call.name.len = TH_NFS_NAME_MAX;
	memset(op->call.name.s, 'x', TH_NFS_NAME_MAX);
	op->call.name.s[TH_NFS_NAME_MAX] = '\0';
	op->call.name.is_cut = true;
	op->reply.status = 63; /* NAMETOOLONG */
	p = want +
	    sprintf(want, HEAD "NFS3 LOOKUP NAMETOOLONG 250.500 250.000" AUTH " fh=cbf43926 name=");
	for (i = 0; i < TH_NFS_NAME_MAX; i++)
		*p++ = 'x';
	strcpy(p, "\\...\n");
	expect_line(op, want);
	free(op);
}

static void
test_machine_escaped(void **state)
{
	struct th_op *op = op_new(TH_NFS3_GETATTR);

	(void)state;
	strcpy(op->machine, "my host");
	set_fh(&op->call.fh, "123456789");
	set_attr(&op->reply.attr);
	expect_line(op, HEAD "NFS3 GETATTR OK 250.500 250.000 uid=1000 gid=100 machine=my\\x20host"
			     " fh=cbf43926" ATTR "\n");
	free(op);
}

static void
test_ipv6_endpoints(void **state)
{
	static const uint8_t c6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	static const uint8_t s6[16] = {0x20, 0x01, 0x0d, 0xb8, [14] = 0xab, [15] = 0xcd};
	struct th_op *op = op_new(TH_NFS3_GETATTR);

	(void)state;
	memcpy(op->client.b, c6, 16);
	memcpy(op->server.b, s6, 16);
	op->client_port = 1023;
	op->transport = TH_PKT_L4_UDP;
	op->auth = TH_AUTH_NONE;
	set_fh(&op->call.fh, "123456789");
	expect_line(op, "1700000000.123456789 RPC udp [2001:db8::1]:1023 [2001:db8::abcd]:2049"
			" 0x1234abcd NFS3 GETATTR OK 250.500 250.000 auth=none fh=cbf43926\n");
	free(op);
}

static void
test_call_only(void **state)
{
	struct th_op *op = op_new(TH_NFS3_GETATTR);

	(void)state;
	op->kind = TH_OP_CALL_ONLY;
	op->reply_first_ns = 0;
	op->reply_last_ns = 0;
	set_fh(&op->call.fh, "123456789");
	expect_line(op, "1700000000.123456789 CALL tcp 10.0.0.1:789 10.0.0.2:2049 0x1234abcd"
			" NFS3 GETATTR - - -" AUTH " fh=cbf43926\n");

	/* Leftovers in the reply half are never shown for a call alone. */
	op->reply_first_ns = T0 + 5;
	op->reply.status = 2;
	set_attr(&op->reply.attr);
	op->reply_decode = TH_NFS_SHORT;
	expect_line(op, "1700000000.123456789 CALL tcp 10.0.0.1:789 10.0.0.2:2049 0x1234abcd"
			" NFS3 GETATTR - - -" AUTH " fh=cbf43926\n");
	free(op);
}

static void
test_reply_only(void **state)
{
	struct th_op *op = calloc(1, sizeof(*op));

	(void)state;
	assert_non_null(op);
	/* What the pipeline knows of a reply without its call. */
	op->kind = TH_OP_REPLY_ONLY;
	op->transport = TH_PKT_L4_UDP;
	set_v4(&op->client, 192, 168, 1, 10);
	set_v4(&op->server, 192, 168, 1, 1);
	op->client_port = 1000;
	op->server_port = 2049;
	op->xid = 0x42;
	op->reply_first_ns = 1700000001000000000ull;
	op->reply_last_ns = 1700000001000000000ull;
	expect_line(op, "1700000001.000000000 REPLY udp 192.168.1.10:1000 192.168.1.1:2049"
			" 0x00000042 ? ? OK - -\n");

	op->reply_stat = 1;
	op->reject_stat = 1;
	expect_line(op, "1700000001.000000000 REPLY udp 192.168.1.10:1000 192.168.1.1:2049"
			" 0x00000042 ? ? AUTH_ERROR - -\n");
	free(op);
}

static void
test_rpc_failures(void **state)
{
	struct th_op *op = op_new(TH_NFS3_READ);

	(void)state;
	set_fh(&op->call.fh, "123456789");
	op->call.offset = 0;
	op->call.count = 512;
	/* Results left in the struct must not show: the reply carried none. */
	op->reply.count = 512;
	set_attr(&op->reply.attr);

	op->accept_stat = 1;
	expect_line(op, HEAD "NFS3 READ PROG_UNAVAIL 250.500 250.000" AUTH
			     " fh=cbf43926 off=0 count=512\n");
	op->accept_stat = 2;
	expect_line(op, HEAD "NFS3 READ PROG_MISMATCH 250.500 250.000" AUTH
			     " fh=cbf43926 off=0 count=512\n");
	op->accept_stat = 3;
	expect_line(op, HEAD "NFS3 READ PROC_UNAVAIL 250.500 250.000" AUTH
			     " fh=cbf43926 off=0 count=512\n");
	op->accept_stat = 4;
	expect_line(op, HEAD "NFS3 READ GARBAGE_ARGS 250.500 250.000" AUTH
			     " fh=cbf43926 off=0 count=512\n");
	op->accept_stat = 5;
	expect_line(op,
		HEAD "NFS3 READ SYSTEM_ERR 250.500 250.000" AUTH " fh=cbf43926 off=0 count=512\n");
	op->accept_stat = 0;
	op->reply_stat = 1;
	op->reject_stat = 1;
	expect_line(op,
		HEAD "NFS3 READ AUTH_ERROR 250.500 250.000" AUTH " fh=cbf43926 off=0 count=512\n");
	op->reject_stat = 0;
	expect_line(op, HEAD "NFS3 READ RPC_MISMATCH 250.500 250.000" AUTH
			     " fh=cbf43926 off=0 count=512\n");
	free(op);
}

/* The op as the RPC trace record a capture keeps (trace.rpcs), RPC-level failures coded. */
static void
test_rpc_record(void **state)
{
	struct th_op *op = op_new(TH_NFS3_READ);
	struct th_trace_rpc r;
	char buf[16], line[1024];

	(void)state;
	/* Stale bytes past the handle (ops are reused) must not reach the record. */
	memset(op->call.fh.data, 0xee, sizeof(op->call.fh.data));
	set_fh(&op->call.fh, "123456789");
	op->call.offset = 4096;
	op->call.count = 32768;
	op->reply.count = 16384;
	set_attr(&op->reply.attr);
	memset(&r, 0x5a, sizeof(r));
	th_op_rpc_record(op, &r);
	assert_int_equal(r.call_ns, T0);
	assert_int_equal(r.reply_ns, T0 + 250500);
	assert_memory_equal(&r.client, &op->client, sizeof(r.client));
	assert_memory_equal(&r.server, &op->server, sizeof(r.server));
	assert_int_equal(r.client_port, 789);
	assert_int_equal(r.server_port, 2049);
	assert_int_equal(r.xid, 0x1234abcd);
	assert_int_equal(r.prog, TH_PROG_NFS);
	assert_int_equal(r.vers, 3);
	assert_int_equal(r.proc, TH_NFS3_READ);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.uid, 1000);
	assert_int_equal(r.gid, 100);
	assert_int_equal(r.flags, TH_TRACE_RPC_TCP | TH_TRACE_RPC_HAS_SIZE);
	assert_int_equal(r.fh_len, 9);
	assert_memory_equal(r.fh, "123456789", 9);
	for (unsigned int i = 9; i < sizeof(r.fh); i++)
		assert_int_equal(r.fh[i], 0);
	assert_int_equal(r.offset, 4096);
	assert_int_equal(r.count, 32768);
	assert_int_equal(r.done, 16384);
	assert_int_equal(r.size, 1048576);
	assert_string_equal(th_op_rpc_status_name(&r, buf, sizeof(buf)), "OK");

	/* A reply cut before its status word, or with wrapped results: '?' as in the log,
	 * not the OK a status of 0 would read as. */
	for (int k = 0; k < 2; k++) {
		op->reply.is_status_missing = k == 0;
		op->is_opaque = k == 1;
		th_op_rpc_record(op, &r);
		assert_true(r.flags & TH_TRACE_RPC_STATUS_UNSEEN);
		assert_string_equal(th_op_rpc_status_name(&r, buf, sizeof(buf)), "?");
		assert_string_equal(th_op_status_str(op, buf, sizeof(buf)), "?");
		/* Nor a count or eof the results would hold: the log leaves them out, as
		 * export does (the 0s of an undecoded reply are no answer). */
		assert_true(th_op_format(op, line, sizeof(line)) > 0);
		assert_null(strstr(line, " done="));
		assert_null(strstr(line, " eof="));
	}
	op->reply.is_status_missing = false;
	op->is_opaque = false;

	/* RPC-level failures: the accept_stat, or 100 + the reject_stat. */
	op->accept_stat = 3;
	th_op_rpc_record(op, &r);
	assert_int_equal(r.flags & TH_TRACE_RPC_RPC_ERROR, TH_TRACE_RPC_RPC_ERROR);
	assert_int_equal(r.status, 3);
	assert_string_equal(th_op_rpc_status_name(&r, buf, sizeof(buf)), "PROC_UNAVAIL");
	op->accept_stat = 0;
	op->reply_stat = 1;
	op->reject_stat = 1;
	th_op_rpc_record(op, &r);
	assert_int_equal(r.status, 101);
	assert_string_equal(th_op_rpc_status_name(&r, buf, sizeof(buf)), "AUTH_ERROR");

	/* A call without a reply, a reply without a call, over UDP, no attributes. */
	op->reply_stat = 0;
	op->kind = TH_OP_CALL_ONLY;
	op->transport = TH_PKT_L4_UDP;
	op->reply.attr.is_present = false;
	th_op_rpc_record(op, &r);
	assert_int_equal(r.reply_ns, 0);
	assert_int_equal(r.flags, 0);
	assert_string_equal(th_op_rpc_status_name(&r, buf, sizeof(buf)), "-");
	op->kind = TH_OP_REPLY_ONLY;
	th_op_rpc_record(op, &r);
	assert_int_equal(r.call_ns, 0);
	assert_int_equal(r.reply_ns, T0 + 250500);
	free(op);
}

static void
test_nfs_status(void **state)
{
	struct th_op *op = op_new(TH_NFS3_LOOKUP);

	(void)state;
	set_fh(&op->call.fh, "123456789");
	set_name(&op->call.name, "missing");
	op->reply.status = 2;
	expect_line(
		op, HEAD "NFS3 LOOKUP NOENT 250.500 250.000" AUTH " fh=cbf43926 name=missing\n");
	op->reply.status = 70;
	expect_line(
		op, HEAD "NFS3 LOOKUP STALE 250.500 250.000" AUTH " fh=cbf43926 name=missing\n");
	op->reply.status = 12345;
	expect_line(
		op, HEAD "NFS3 LOOKUP 12345 250.500 250.000" AUTH " fh=cbf43926 name=missing\n");
	op->reply.status = 4000000000u;
	expect_line(op,
		HEAD "NFS3 LOOKUP 4000000000 250.500 250.000" AUTH " fh=cbf43926 name=missing\n");
	free(op);
}

static void
test_latency(void **state)
{
	struct th_op *op = op_new(TH_NFS3_NULL);

	(void)state;
	op->auth = TH_AUTH_NONE;
	op->call_last_ns = T0;
	op->reply_first_ns = T0 + 1;
	expect_line(op, HEAD "NFS3 NULL OK 0.001 0.001 auth=none\n");
	op->reply_first_ns = T0 + 999;
	expect_line(op, HEAD "NFS3 NULL OK 0.999 0.999 auth=none\n");
	op->reply_first_ns = T0;
	expect_line(op, HEAD "NFS3 NULL OK 0.000 0.000 auth=none\n");
	op->reply_first_ns = T0 + 12000000050ull;
	expect_line(op, HEAD "NFS3 NULL OK 12000000.050 12000000.050 auth=none\n");

	/* A reply stamped before its call (clock step): negative, not huge. */
	op->call_last_ns = T0 + 3000;
	op->reply_first_ns = T0 + 1000;
	expect_line(op, HEAD "NFS3 NULL OK 1.000 -2.000 auth=none\n");
	op->reply_first_ns = T0 - 5250;
	expect_line(op, HEAD "NFS3 NULL OK -5.250 -8.250 auth=none\n");
	free(op);
}

static void
test_portmap_getport(void **state)
{
	struct th_op *op = op_new(TH_PMAP_GETPORT);

	(void)state;
	op->transport = TH_PKT_L4_UDP;
	op->server_port = 111;
	op->prog = TH_PROG_PORTMAP;
	op->vers = 2;
	op->auth = TH_AUTH_NONE;
	op->call.pmap_prog = TH_PROG_MOUNT;
	op->call.pmap_vers = 3;
	op->call.pmap_prot = 6;
	op->reply.port = 20048;
	expect_line(op, "1700000000.123456789 RPC udp 10.0.0.1:789 10.0.0.2:111 0x1234abcd"
			" PORTMAP2 GETPORT OK 250.500 250.000 auth=none prog=100005 vers=3"
			" port=20048\n");
	free(op);
}

static void
test_nfs4_compound(void **state)
{
	struct th_op *op = op_new(1);

	(void)state;
	op->vers = 4;
	op->auth = TH_AUTH_GSS;
	op->call.v4_ops = 3;
	op->reply.v4_ops = 3;
	expect_line(op, HEAD "NFS4 COMPOUND OK 250.500 250.000 auth=gss ops=3\n");
	free(op);
	/* NULL has no results: no ops= (it printed ops=0, a COMPOUND's field). */
	op = op_new(0);
	op->vers = 4;
	op->auth = TH_AUTH_NONE;
	expect_line(op, HEAD "NFS4 NULL OK 250.500 250.000 auth=none\n");
	free(op);
}

static void
test_unknown_program(void **state)
{
	struct th_op *op = op_new(7);

	(void)state;
	op->prog = 400123;
	op->vers = 2;
	op->auth = TH_AUTH_NONE;
	expect_line(op, HEAD "400123.2 7 OK 250.500 250.000 auth=none\n");
	free(op);
}

static void
test_dup_and_cut(void **state)
{
	struct th_op *op = op_new(TH_NFS3_GETATTR);

	(void)state;
	op->auth = TH_AUTH_NONE;
	set_fh(&op->call.fh, "123456789");
	op->dup_calls = 3;
	expect_line(op, HEAD "NFS3 GETATTR OK 250.500 250.000 auth=none fh=cbf43926 dup=3\n");
	op->call_decode = TH_NFS_SHORT;
	expect_line(op, HEAD "NFS3 GETATTR OK 250.500 250.000 auth=none fh=cbf43926 dup=3"
			     " cut=call\n");
	op->dup_calls = 0;
	op->reply_decode = TH_NFS_SHORT;
	expect_line(op, HEAD "NFS3 GETATTR OK 250.500 250.000 auth=none fh=cbf43926 cut=both\n");
	op->call_decode = TH_NFS_OK;
	expect_line(op, HEAD "NFS3 GETATTR OK 250.500 250.000 auth=none fh=cbf43926 cut=reply\n");

	/* Without a reply, only the call can be cut. */
	op->kind = TH_OP_CALL_ONLY;
	op->call_decode = TH_NFS_SHORT;
	expect_line(op, "1700000000.123456789 CALL tcp 10.0.0.1:789 10.0.0.2:2049 0x1234abcd"
			" NFS3 GETATTR - - - auth=none fh=cbf43926 cut=call\n");
	free(op);
}

static void
test_readdirplus_cut_has_no_eof(void **state)
{
	struct th_op *op = op_new(TH_NFS3_READDIRPLUS);
	struct th_trace_rpc r;

	(void)state;
	op->auth = TH_AUTH_NONE;
	set_fh(&op->call.fh, "123456789");
	op->call.count = 8192;
	op->reply.count = 6;
	op->reply.eof = true;
	set_attr(&op->reply.attr);
	op->reply.attr.type = TH_NFS_DIR;
	op->reply.attr.mode = 0755;
	expect_line(op, HEAD
		"NFS3 READDIRPLUS OK 250.500 250.000 auth=none fh=cbf43926 off=0"
		" count=8192 done=6 eof=1 type=2 mode=0755 size=1048576 fileid=12345 uid_f=1000"
		" gid_f=100 mtime=1690000000.000000001\n");

	/* Its trace record: the entries listed as done. */
	th_op_rpc_record(op, &r);
	assert_int_equal(r.done, 6);
	assert_int_equal(r.flags, TH_TRACE_RPC_TCP | TH_TRACE_RPC_HAS_SIZE);

	/* Only some entries seen: at least that many listed, done_min=, flagged. */
	op->reply.is_count_partial = true;
	expect_line(op,
		HEAD "NFS3 READDIRPLUS OK 250.500 250.000 auth=none fh=cbf43926 off=0"
		     " count=8192 done_min=6 eof=1 type=2 mode=0755 size=1048576 fileid=12345"
		     " uid_f=1000 gid_f=100 mtime=1690000000.000000001\n");
	th_op_rpc_record(op, &r);
	assert_int_equal(r.done, 6);
	assert_int_equal(
		r.flags, TH_TRACE_RPC_TCP | TH_TRACE_RPC_HAS_SIZE | TH_TRACE_RPC_DONE_PARTIAL);

	/* Cut before its end marker: no eof, and the count is of the entries before the cut. */
	op->reply.is_count_partial = false;
	op->reply_decode = TH_NFS_SHORT;
	expect_line(op, HEAD "NFS3 READDIRPLUS OK 250.500 250.000 auth=none fh=cbf43926 off=0"
			     " count=8192 done_min=6 type=2 mode=0755 size=1048576 fileid=12345"
			     " uid_f=1000 gid_f=100 mtime=1690000000.000000001 cut=reply\n");
	th_op_rpc_record(op, &r);
	assert_int_equal(
		r.flags, TH_TRACE_RPC_TCP | TH_TRACE_RPC_HAS_SIZE | TH_TRACE_RPC_DONE_PARTIAL);

	/* A plain READDIR (v3 and v2) prints its count the same way; a failed one none. */
	op->reply_decode = TH_NFS_OK;
	op->proc = TH_NFS3_READDIR;
	expect_line(op, HEAD
		"NFS3 READDIR OK 250.500 250.000 auth=none fh=cbf43926 off=0"
		" count=8192 done=6 eof=1 type=2 mode=0755 size=1048576 fileid=12345 uid_f=1000"
		" gid_f=100 mtime=1690000000.000000001\n");
	op->reply.attr.is_present = false;
	op->vers = 2;
	op->proc = TH_NFS2_READDIR;
	expect_line(op, HEAD "NFS2 READDIR OK 250.500 250.000 auth=none fh=cbf43926 off=0"
			     " count=8192 done=6 eof=1\n");
	op->reply.status = 2; /* NFSERR_NOENT */
	expect_line(op, HEAD "NFS2 READDIR NOENT 250.500 250.000 auth=none fh=cbf43926 off=0"
			     " count=8192\n");
	free(op);
}

static void
test_small_buffer(void **state)
{
	struct th_op *op = op_new(TH_NFS3_READ);
	char full[4096], small[64];
	int n, len;

	(void)state;
	set_fh(&op->call.fh, "123456789");
	set_attr(&op->reply.attr);
	len = th_op_format(op, full, sizeof(full));
	assert_true(len > 100);
	assert_int_equal(strlen(full), len);
	assert_int_equal(full[len - 1], '\n');

	memset(small, '#', sizeof(small));
	n = th_op_format(op, small, 10);
	assert_int_equal(n, len);
	assert_int_equal(small[9], '\0');
	assert_memory_equal(small, full, 9);
	assert_int_equal(small[10], '#');

	/* size 0 writes nothing at all */
	memset(small, '#', sizeof(small));
	n = th_op_format(op, small, 0);
	assert_int_equal(n, len);
	assert_int_equal(small[0], '#');

	/* exactly len bytes: the newline does not fit, the NUL does */
	{
		char *b = malloc((size_t)len);

		assert_non_null(b);
		n = th_op_format(op, b, (size_t)len);
		assert_int_equal(n, len);
		assert_int_equal(b[len - 1], '\0');
		assert_memory_equal(b, full, (size_t)len - 1);
		free(b);
		b = malloc((size_t)len + 1);
		assert_non_null(b);
		n = th_op_format(op, b, (size_t)len + 1);
		assert_int_equal(n, len);
		assert_string_equal(b, full);
		free(b);
	}
	free(op);
}

/* The longest line: two escaped 255-byte names and every field must fit, never overrun. */
static void
test_longest_line(void **state)
{
	struct th_op *op = op_new(TH_NFS3_RENAME);
	char buf[4096];
	int n;

	(void)state;
	set_v4(&op->client, 0, 0, 0, 0);
	memset(op->client.b, 0xff, 16);
	memset(op->server.b, 0xfe, 16);
	memset(op->machine, 0xff, TH_OP_MACHINE_MAX);
	op->machine[TH_OP_MACHINE_MAX] = '\0';
	op->call.fh.len = TH_NFS_FH_MAX;
	op->call.fh2.len = TH_NFS_FH_MAX;
	op->call.name.len = TH_NFS_NAME_MAX;
	memset(op->call.name.s, 0x80, TH_NFS_NAME_MAX);
	op->call.name.is_cut = true;
	op->call.name2 = op->call.name;
	op->uid = op->gid = UINT32_MAX;
	op->xid = UINT32_MAX;
	op->dup_calls = UINT32_MAX;
	op->call_first_ns = UINT64_MAX;
	op->reply_first_ns = 1;
	op->call_decode = TH_NFS_SHORT;
	op->reply_decode = TH_NFS_SHORT;
	set_attr(&op->reply.attr);
	op->reply.attr.size = UINT64_MAX;
	op->reply.attr.fileid = UINT64_MAX;
	n = th_op_format(op, buf, sizeof(buf));
	assert_true(n > 2000);
	assert_true((size_t)n < sizeof(buf));
	assert_int_equal(strlen(buf), n);
	assert_non_null(strstr(buf, " dup=4294967295 cut=both\n"));
	free(op);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_tcp_v4),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_lookup_name_escaping),
		cmocka_unit_test(test_lookup_cut_name),
		cmocka_unit_test(test_machine_escaped),
		cmocka_unit_test(test_ipv6_endpoints),
		cmocka_unit_test(test_call_only),
		cmocka_unit_test(test_reply_only),
		cmocka_unit_test(test_rpc_failures),
		cmocka_unit_test(test_rpc_record),
		cmocka_unit_test(test_nfs_status),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_portmap_getport),
		cmocka_unit_test(test_nfs4_compound),
		cmocka_unit_test(test_unknown_program),
		cmocka_unit_test(test_dup_and_cut),
		cmocka_unit_test(test_readdirplus_cut_has_no_eof),
		cmocka_unit_test(test_small_buffer),
		cmocka_unit_test(test_longest_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
