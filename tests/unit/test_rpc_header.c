/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * ONC RPC message headers (lib/rpc): calls with each credential flavour,
 * accepted and denied replies, malformed and truncated headers, and the
 * plausibility checks used to find a record start in a TCP stream.
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
#include "th_rpc.h"

enum { AUTH_NONE = 0, AUTH_SYS = 1, RPCSEC_GSS = 6 };

#define ARGS_MARK 0xa5a5f00du /* first argument word: where body_offset must point */

static void
call_head(struct xb *x, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	put32(x, xid);
	put32(x, 0); /* CALL */
	put32(x, 2); /* rpcvers */
	put32(x, prog);
	put32(x, vers);
	put32(x, proc);
}

/* AUTH_SYS credential body: stamp, machine name, uid, gid, two gids. */
static void
put_auth_sys(struct xb *x, const char *machine, uint32_t uid, uint32_t gid)
{
	struct xb body = {.n = 0};

	put32(&body, 0x5eed);
	put_str(&body, machine);
	put32(&body, uid);
	put32(&body, gid);
	put32(&body, 2);
	put32(&body, gid);
	put32(&body, 10);
	put32(x, AUTH_SYS);
	put_opaque(x, body.b, (uint32_t)body.n);
}

/* NFSv3 GETATTR call, AUTH_NONE, empty verifier; body_offset 40. */
static void
build_call_none(struct xb *x)
{
	call_head(x, 0x01020304, TH_PROG_NFS, 3, TH_NFS3_GETATTR);
	put32(x, AUTH_NONE);
	put32(x, 0);
	put32(x, AUTH_NONE);
	put32(x, 0);
}

static void
build_call_sys(struct xb *x, const char *machine)
{
	call_head(x, 0xcafe0001, TH_PROG_NFS, 3, TH_NFS3_LOOKUP);
	put_auth_sys(x, machine, 1000, 100);
	put32(x, AUTH_NONE);
	put32(x, 0);
}

/* RPCSEC_GSS DATA call with integrity and a 16-byte MIC verifier. */
static void
build_call_gss(struct xb *x)
{
	static const uint8_t handle[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	static const uint8_t mic[16] = {0xee};
	struct xb cred = {.n = 0};

	call_head(x, 0x6550, TH_PROG_NFS, 3, TH_NFS3_READ);
	put32(&cred, 1);  /* version */
	put32(&cred, 0);  /* gss_proc DATA */
	put32(&cred, 77); /* seq_num */
	put32(&cred, 2);  /* service integrity */
	put_opaque(&cred, handle, sizeof(handle));
	put32(x, RPCSEC_GSS);
	put_opaque(x, cred.b, (uint32_t)cred.n);
	put32(x, RPCSEC_GSS);
	put_opaque(x, mic, sizeof(mic));
}

static void
reply_accepted(struct xb *x, uint32_t xid, uint32_t accept_stat)
{
	put32(x, xid);
	put32(x, 1); /* REPLY */
	put32(x, 0); /* MSG_ACCEPTED */
	put32(x, AUTH_NONE);
	put32(x, 0);
	put32(x, accept_stat);
}

static void
test_call_auth_none(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};

	(void)state;
	build_call_none(&x);
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.xid, 0x01020304);
	assert_int_equal(m.type, TH_RPC_CALL);
	assert_int_equal(m.prog, TH_PROG_NFS);
	assert_int_equal(m.vers, 3);
	assert_int_equal(m.proc, TH_NFS3_GETATTR);
	assert_int_equal(m.flavor, AUTH_NONE);
	assert_int_equal(m.uid, 0);
	assert_int_equal(m.gid, 0);
	assert_string_equal(m.machine, "");
	assert_int_equal(m.body_offset, 40);

	/* A header with no arguments after it is still a whole header. */
	assert_int_equal(th_rpc_decode(x.b, 40, &m), TH_RPC_OK);
	assert_int_equal(m.body_offset, 40);
}

static void
test_call_auth_sys(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};
	uint32_t off;

	(void)state;
	build_call_sys(&x, "client7");
	off = (uint32_t)x.n;
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.xid, 0xcafe0001);
	assert_int_equal(m.proc, TH_NFS3_LOOKUP);
	assert_int_equal(m.flavor, AUTH_SYS);
	assert_int_equal(m.uid, 1000);
	assert_int_equal(m.gid, 100);
	assert_string_equal(m.machine, "client7");
	assert_int_equal(m.body_offset, off);
	assert_memory_equal(x.b + m.body_offset, "\xa5\xa5\xf0\x0d", 4);
}

static void
test_call_auth_sys_long_machine(void **state)
{
	static const char name[] = "a-very-long-client-hostname-0123456789.storage.example.com";
	struct th_rpc_msg m;
	struct xb x = {.n = 0};
	uint32_t off;

	(void)state;
	build_call_sys(&x, name);
	off = (uint32_t)x.n;
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(strlen(m.machine), TH_RPC_MACHINE_MAX);
	assert_memory_equal(m.machine, name, TH_RPC_MACHINE_MAX);
	/* Cutting the name must not move the uid/gid or the arguments. */
	assert_int_equal(m.uid, 1000);
	assert_int_equal(m.gid, 100);
	assert_int_equal(m.body_offset, off);

	/* Exactly 31 characters is kept whole. */
	memset(&x, 0, sizeof(x));
	build_call_sys(&x, "0123456789012345678901234567890");
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_string_equal(m.machine, "0123456789012345678901234567890");
}

static void
test_call_verifier_skipped(void **state)
{
	static const uint8_t verf[10] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
	struct th_rpc_msg m;
	struct xb x = {.n = 0};
	uint32_t off;

	(void)state;
	call_head(&x, 7, TH_PROG_MOUNT, 3, TH_MOUNT_MNT);
	put_auth_sys(&x, "h", 0, 0);
	put32(&x, 3); /* AUTH_DH verifier, 10 bytes + 2 padding */
	put_opaque(&x, verf, sizeof(verf));
	off = (uint32_t)x.n;
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.body_offset, off);
	assert_string_equal(m.machine, "h");
}

static void
test_call_gss(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};
	uint32_t off;

	(void)state;
	build_call_gss(&x);
	off = (uint32_t)x.n;
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.flavor, RPCSEC_GSS);
	assert_int_equal(m.gss_proc, 0);
	assert_int_equal(m.gss_service, 2);
	assert_int_equal(m.proc, TH_NFS3_READ);
	assert_int_equal(m.body_offset, off);
	assert_string_equal(m.machine, "");
}

/*
 * A message decodes on its own: nothing of the previous message decoded into
 * the same struct survives. A GSS credential too short for its service word
 * must not report the previous call's service (the pipeline decides from it
 * whether the arguments are readable).
 */
static void
test_call_gss_short_cred_no_stale_fields(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};

	(void)state;
	build_call_gss(&x);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.gss_service, 2);

	memset(&x, 0, sizeof(x));
	call_head(&x, 0x6551, TH_PROG_NFS, 3, TH_NFS3_READ);
	put32(&x, RPCSEC_GSS);
	put32(&x, 8); /* cred body: version, gss_proc INIT; no seq, no service */
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, AUTH_NONE);
	put32(&x, 0);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.flavor, RPCSEC_GSS);
	assert_int_equal(m.gss_proc, 1);
	assert_int_equal(m.gss_service, 0);
}

static void
test_reply_accepted(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};

	(void)state;
	reply_accepted(&x, 0x01020304, 0);
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.xid, 0x01020304);
	assert_int_equal(m.type, TH_RPC_REPLY);
	assert_int_equal(m.reply_stat, 0);
	assert_int_equal(m.accept_stat, 0);
	assert_int_equal(m.body_offset, 24);

	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 5, 1); /* PROG_UNAVAIL */
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.reply_stat, 0);
	assert_int_equal(m.accept_stat, 1);
	assert_int_equal(m.body_offset, 24);

	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 6, 2); /* PROG_MISMATCH low 2 high 3 */
	put32(&x, 2);
	put32(&x, 3);
	put32(&x, ARGS_MARK);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.accept_stat, 2);
	assert_int_equal(m.body_offset, 32);
	/* The mismatch info is part of the header: without it the header is cut. */
	assert_int_equal(th_rpc_decode(x.b, 28, &m), TH_RPC_SHORT);
}

static void
test_reply_accepted_gss_verifier(void **state)
{
	static const uint8_t mic[20] = {1};
	struct th_rpc_msg m;
	struct xb x = {.n = 0};

	(void)state;
	put32(&x, 0x6550);
	put32(&x, 1);
	put32(&x, 0);
	put32(&x, RPCSEC_GSS);
	put_opaque(&x, mic, sizeof(mic));
	put32(&x, 0);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.accept_stat, 0);
	assert_int_equal(m.body_offset, 4 * 5 + 20 + 4);
}

static void
test_reply_denied(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};

	(void)state;
	put32(&x, 0x77);
	put32(&x, 1);
	put32(&x, 1); /* MSG_DENIED */
	put32(&x, 0); /* RPC_MISMATCH */
	put32(&x, 2);
	put32(&x, 2);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.xid, 0x77);
	assert_int_equal(m.reply_stat, 1);
	assert_int_equal(m.reject_stat, 0);
	assert_int_equal(m.body_offset, 24);

	memset(&x, 0, sizeof(x));
	put32(&x, 0x78);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1); /* AUTH_ERROR */
	put32(&x, 5); /* AUTH_REJECTEDVERF */
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.reply_stat, 1);
	assert_int_equal(m.reject_stat, 1);
	assert_int_equal(m.body_offset, 20);
}

static void
test_malformed(void **state)
{
	struct th_rpc_msg m;
	struct xb x = {.n = 0};
	uint8_t big[420] = {0};

	(void)state;
	/* RPC version 3 */
	build_call_none(&x);
	x.b[11] = 3;
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);

	/* Message type 7 */
	memset(&x, 0, sizeof(x));
	build_call_none(&x);
	x.b[7] = 7;
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);

	/* accept_stat 9 */
	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 1, 9);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);

	/* reply_stat 2, reject_stat 2 */
	memset(&x, 0, sizeof(x));
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 2);
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 0);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);
	x.b[11] = 1;
	x.b[15] = 2;
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);

	/* Credential body of 401 bytes, whole in the buffer */
	memset(&x, 0, sizeof(x));
	call_head(&x, 1, TH_PROG_NFS, 3, 0);
	put32(&x, AUTH_SYS);
	put_opaque(&x, big, 401);
	put32(&x, AUTH_NONE);
	put32(&x, 0);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);
	/* ... and announced but cut: the length alone is already wrong. */
	assert_int_equal(th_rpc_decode(x.b, 32, &m), TH_RPC_MALFORMED);

	/* 400 bytes is the limit, and allowed. */
	memset(&x, 0, sizeof(x));
	call_head(&x, 1, TH_PROG_NFS, 3, 0);
	put32(&x, 7);
	put_opaque(&x, big, 400);
	put32(&x, AUTH_NONE);
	put32(&x, 0);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_OK);
	assert_int_equal(m.body_offset, x.n);

	/* Verifier of 0xffffffff bytes */
	memset(&x, 0, sizeof(x));
	call_head(&x, 1, TH_PROG_NFS, 3, 0);
	put32(&x, AUTH_NONE);
	put32(&x, 0);
	put32(&x, AUTH_NONE);
	put32(&x, 0xffffffffu);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);

	/* Reply verifier of 401 bytes */
	memset(&x, 0, sizeof(x));
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 0);
	put32(&x, AUTH_NONE);
	put32(&x, 401);
	assert_int_equal(th_rpc_decode(x.b, x.n, &m), TH_RPC_MALFORMED);
}

/* Every proper prefix of a valid header is SHORT, read from its own exact-size copy. */
static void
check_prefixes(const struct xb *x, size_t header_size)
{
	struct th_rpc_msg m;
	size_t len;

	for (len = 0; len < header_size; len++) {
		uint8_t *copy = malloc(len);

		assert_true(len == 0 || copy != NULL);
		if (len > 0)
			memcpy(copy, x->b, len);
		memset(&m, 0x5a, sizeof(m));
		if (th_rpc_decode(copy, len, &m) != TH_RPC_SHORT) {
			free(copy);
			fail_msg("prefix of %zu bytes (of %zu) not SHORT", len, header_size);
		}
		free(copy);
	}
	{
		uint8_t *copy = malloc(header_size);

		assert_non_null(copy);
		memcpy(copy, x->b, header_size);
		assert_int_equal(th_rpc_decode(copy, header_size, &m), TH_RPC_OK);
		assert_int_equal(m.body_offset, header_size);
		free(copy);
	}
}

static void
test_truncations(void **state)
{
	struct xb x;

	(void)state;
	memset(&x, 0, sizeof(x));
	build_call_none(&x);
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	build_call_sys(&x, "client7"); /* name padded: cuts inside padding too */
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	build_call_sys(&x, "a-very-long-client-hostname-0123456789.storage.example.com");
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	build_call_gss(&x);
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 1, 0);
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 1, 2);
	put32(&x, 2);
	put32(&x, 4);
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 0);
	put32(&x, 2);
	put32(&x, 2);
	check_prefixes(&x, x.n);

	memset(&x, 0, sizeof(x));
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1);
	check_prefixes(&x, x.n);
}

static void
test_looks_like_call(void **state)
{
	struct xb x;

	(void)state;
	memset(&x, 0, sizeof(x));
	build_call_none(&x);
	assert_true(th_rpc_looks_like_call(x.b, x.n));
	assert_false(th_rpc_looks_like_reply(x.b, x.n));
	assert_false(th_rpc_looks_like_call(x.b, 31));

	memset(&x, 0, sizeof(x));
	build_call_sys(&x, "client7");
	assert_true(th_rpc_looks_like_call(x.b, x.n));

	memset(&x, 0, sizeof(x));
	build_call_gss(&x);
	assert_true(th_rpc_looks_like_call(x.b, x.n));

	/* Followed programs: NFS v2-v4, MOUNT v1-v3, portmap/rpcbind v2-v4, NLM, NFSACL. */
	{
		static const uint32_t ok[][2] = {
			{TH_PROG_NFS, 2},
			{TH_PROG_NFS, 4},
			{TH_PROG_MOUNT, 1},
			{TH_PROG_MOUNT, 3},
			{TH_PROG_PORTMAP, 2},
			{TH_PROG_PORTMAP, 4},
			{TH_PROG_NLM, 4},
			{TH_PROG_NLM, 1},
			{TH_PROG_NFSACL, 3},
		};
		static const uint32_t bad[][2] = {
			{TH_PROG_NFS, 5},
			{TH_PROG_NFS, 1},
			{TH_PROG_MOUNT, 4},
			{TH_PROG_PORTMAP, 1},
			{400000, 1},
			{100024, 1}, /* status (NSM) */
			{0, 0},
		};
		size_t i;

		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			memset(&x, 0, sizeof(x));
			call_head(&x, 1, ok[i][0], ok[i][1], 1);
			put32(&x, AUTH_NONE);
			put32(&x, 0);
			put32(&x, AUTH_NONE);
			put32(&x, 0);
			if (!th_rpc_looks_like_call(x.b, x.n))
				fail_msg("program %u v%u not followed", ok[i][0], ok[i][1]);
		}
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memset(&x, 0, sizeof(x));
			call_head(&x, 1, bad[i][0], bad[i][1], 1);
			put32(&x, AUTH_NONE);
			put32(&x, 0);
			put32(&x, AUTH_NONE);
			put32(&x, 0);
			if (th_rpc_looks_like_call(x.b, x.n))
				fail_msg("program %u v%u taken as a call", bad[i][0], bad[i][1]);
		}
	}

	/* rpcvers 3, flavour 7, credential of 401 bytes: not calls. */
	memset(&x, 0, sizeof(x));
	build_call_none(&x);
	x.b[11] = 3;
	assert_false(th_rpc_looks_like_call(x.b, x.n));
	x.b[11] = 2;
	x.b[27] = 7;
	assert_false(th_rpc_looks_like_call(x.b, x.n));
	x.b[27] = 0;
	x.b[30] = 0x01;
	x.b[31] = 0x91; /* 401 */
	assert_false(th_rpc_looks_like_call(x.b, x.n));
}

static void
test_looks_like_reply(void **state)
{
	static const uint8_t mic[16] = {3};
	struct xb x;

	(void)state;
	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 9, 0);
	assert_true(th_rpc_looks_like_reply(x.b, x.n));
	assert_false(th_rpc_looks_like_call(x.b, x.n));
	assert_false(th_rpc_looks_like_reply(x.b, 11));

	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 9, 5);
	assert_true(th_rpc_looks_like_reply(x.b, x.n));

	memset(&x, 0, sizeof(x));
	reply_accepted(&x, 9, 9); /* accept_stat out of range */
	assert_false(th_rpc_looks_like_reply(x.b, x.n));

	memset(&x, 0, sizeof(x));
	put32(&x, 9);
	put32(&x, 1);
	put32(&x, 0);
	put32(&x, RPCSEC_GSS);
	put_opaque(&x, mic, sizeof(mic));
	put32(&x, 0);
	assert_true(th_rpc_looks_like_reply(x.b, x.n));
	x.b[15] = 9; /* verifier flavour 9 */
	assert_false(th_rpc_looks_like_reply(x.b, x.n));

	memset(&x, 0, sizeof(x));
	put32(&x, 9);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1);
	put32(&x, 1);
	assert_true(th_rpc_looks_like_reply(x.b, x.n));
	x.b[15] = 2; /* reject_stat 2 */
	assert_false(th_rpc_looks_like_reply(x.b, x.n));
	x.b[15] = 1;
	x.b[11] = 2; /* reply_stat 2 */
	assert_false(th_rpc_looks_like_reply(x.b, x.n));
}

static void
test_looks_like_garbage(void **state)
{
	static const char http[] = "GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n";
	uint8_t buf[64];
	uint32_t seed = 12345;
	int i, calls = 0, replies = 0;
	size_t j;

	(void)state;
	assert_false(th_rpc_looks_like_call((const uint8_t *)http, sizeof(http) - 1));
	assert_false(th_rpc_looks_like_reply((const uint8_t *)http, sizeof(http) - 1));
	memset(buf, 0, sizeof(buf));
	assert_false(th_rpc_looks_like_call(buf, sizeof(buf)));
	assert_false(th_rpc_looks_like_reply(buf, 3));
	memset(buf, 0xff, sizeof(buf));
	assert_false(th_rpc_looks_like_call(buf, sizeof(buf)));
	assert_false(th_rpc_looks_like_reply(buf, sizeof(buf)));

	for (i = 0; i < 100000; i++) {
		for (j = 0; j < sizeof(buf); j++) {
			seed = seed * 1103515245u + 12345u;
			buf[j] = (uint8_t)(seed >> 16);
		}
		calls += th_rpc_looks_like_call(buf, sizeof(buf));
		replies += th_rpc_looks_like_reply(buf, sizeof(buf));
	}
	assert_int_equal(calls, 0);
	assert_int_equal(replies, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_auth_none),
		cmocka_unit_test(test_call_auth_sys),
		cmocka_unit_test(test_call_auth_sys_long_machine),
		cmocka_unit_test(test_call_verifier_skipped),
		cmocka_unit_test(test_call_gss),
		cmocka_unit_test(test_call_gss_short_cred_no_stale_fields),
		cmocka_unit_test(test_reply_accepted),
		cmocka_unit_test(test_reply_accepted_gss_verifier),
		cmocka_unit_test(test_reply_denied),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_looks_like_call),
		cmocka_unit_test(test_looks_like_reply),
		cmocka_unit_test(test_looks_like_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
