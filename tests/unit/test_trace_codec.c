/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/trace: records survive encode/decode exactly, the bytes on disk are the
 * documented compact little-endian layout (a segment written on one machine
 * reads on another), every value has one spelling, and damaged input is
 * refused without reading past the buffer.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_trace.h"

#include "../segment/seg_records.h"

static void
test_roundtrip(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o, o2;
	struct th_trace_name nm, nm2;
	struct th_trace_rpc r, r2;
	size_t n, used;

	(void)state;
	for (uint64_t i = 0; i < 2000; i++) {
		seg_make_open(1, i, &o);
		o.fh_len = (uint8_t)(i % (TH_TRACE_FH_MAX + 1));
		memset(o.fh + o.fh_len, 0, TH_TRACE_FH_MAX - o.fh_len);
		/* Every other record IPv6, so both address spellings round-trip. */
		if (i & 1)
			o.client.b[0] = 0x20;
		n = th_trace_encode_open(&o, buf, sizeof(buf));
		assert_true(n > 0 && n <= TH_TRACE_RECORD_MAX);
		memset(&o2, 0, sizeof(o2));
		assert_int_equal(th_trace_decode(buf, n, &used, &o2, NULL, NULL), TH_TRACE_OPEN);
		assert_int_equal(used, n);
		assert_memory_equal(&o, &o2, sizeof(o));

		seg_make_name(2, i, &nm);
		n = th_trace_encode_name(&nm, buf, sizeof(buf));
		assert_true(n > 0 && n <= TH_TRACE_RECORD_MAX);
		memset(&nm2, 0, sizeof(nm2));
		assert_int_equal(th_trace_decode(buf, n, &used, NULL, &nm2, NULL), TH_TRACE_NAME);
		assert_int_equal(used, n);
		assert_memory_equal(&nm, &nm2, sizeof(nm));

		seg_make_rpc(3, i, &r);
		n = th_trace_encode_rpc(&r, buf, sizeof(buf));
		memset(&r2, 0, sizeof(r2));
		assert_int_equal(th_trace_decode(buf, n, &used, NULL, NULL, &r2), TH_TRACE_RPC);
		assert_memory_equal(&r, &r2, sizeof(r));
		assert_int_equal(th_trace_rpc_time(&r2), r.call_ns);
	}
	/* The largest name record fits the documented maximum. */
	memset(&nm, 0, sizeof(nm));
	nm.fh_len = nm.dir_fh_len = TH_TRACE_FH_MAX;
	nm.name_len = TH_TRACE_NAME_MAX;
	n = th_trace_encode_name(&nm, buf, sizeof(buf));
	assert_true(n > 0 && n <= TH_TRACE_RECORD_MAX);
}

/* The layout is explicit little-endian and compact: check bytes, not a round trip. */
static void
test_layout_bytes(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_rpc r;

	(void)state;
	memset(&o, 0, sizeof(o));
	seg_v4(&o.server, 0x0a000001);
	seg_v4(&o.client, 0x0a010203);
	o.open_ns = 0x0102030405060708ull;
	o.close_ns = o.open_ns + 300;
	o.uid = 1000;
	o.gid = 100;
	o.dir = 1;
	o.vers = 3;
	o.ops = 2;
	o.fh_len = 4;
	o.fh[0] = 0xf1;
	o.fh[1] = 0xf2;
	o.size = 0x1122;
	o.transferred = 0x1122;
	o.seq_bytes = 5;
	/*
	 * vers, fh_len, 2 zero bytes elided, shape (both IPv4), server, client,
	 * form (write, transferred is size, flags 0), close delta 300, uid 1000,
	 * gid 100, ops 2, seq_bytes 5, open_ns, handle f1 f2, size 0x1122.
	 */
	static const uint8_t want[] = {1, 0, 32, 0, 3, 4, 2, 0x03, 10, 0, 0, 1, 10, 1, 2, 3, 0x03,
		0xac, 0x02, 0xe8, 0x07, 100, 2, 5, 8, 7, 6, 5, 4, 3, 2, 1, 0xf1, 0xf2, 0xa2, 0x22};
	assert_int_equal(th_trace_encode_open(&o, buf, sizeof(buf)), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));

	/* IPv6 takes 16 bytes and clears the form bit. */
	o.client.b[0] = 0x20;
	assert_int_equal(th_trace_encode_open(&o, buf, sizeof(buf)), sizeof(want) + 12);
	assert_int_equal(buf[7], 0x01);
	/* Flags beyond the defined two take a byte of their own after the form. */
	o.client.b[0] = 0;
	o.flags = 0x80;
	assert_int_equal(th_trace_encode_open(&o, buf, sizeof(buf)), sizeof(want) + 1);
	assert_memory_equal(buf + 4 + 12, "\x23\x80", 2);

	memset(&r, 0, sizeof(r));
	r.xid = 0x12345678;
	r.server_port = 2049;
	r.call_ns = 0x0102030405060708ull;
	r.reply_ns = r.call_ns + 1;
	/* form (call, reply), flags, fh_len, call_ns, delta 1, two IPv6 :: addresses. */
	assert_int_equal(th_trace_encode_rpc(&r, buf, sizeof(buf)), 4 + 3 + 8 + 1 + 32 + 8 + 10);
	assert_memory_equal(buf, "\3\0\x3e\0\x0c\0\0\x08\7\6\5\4\3\2\1\1", 16);
	assert_memory_equal(buf + 16 + 32, "\0\0\x01\x08\x78\x56\x34\x12", 8);
}

static void
test_encode_refuses(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_name nm;
	size_t n;

	(void)state;
	seg_make_open(1, 1, &o);
	n = th_trace_encode_open(&o, buf, sizeof(buf));
	/* One byte short of the record: nothing written past the buffer. */
	assert_int_equal(th_trace_encode_open(&o, buf, n - 1), 0);
	assert_int_equal(th_trace_encode_open(&o, buf, n), n);
	o.fh_len = TH_TRACE_FH_MAX + 1;
	assert_int_equal(th_trace_encode_open(&o, buf, sizeof(buf)), 0);
	/* A direction other than read or write has no spelling. */
	seg_make_open(1, 1, &o);
	o.dir = 2;
	assert_int_equal(th_trace_encode_open(&o, buf, sizeof(buf)), 0);
	seg_make_name(1, 1, &nm);
	nm.name_len = TH_TRACE_NAME_MAX + 1;
	assert_int_equal(th_trace_encode_name(&nm, buf, sizeof(buf)), 0);
}

/* Every cut of a valid record is refused, reading only the bytes given (ASan checks). */
static void
test_decode_truncated(void **state)
{
	uint8_t full[TH_TRACE_RECORD_MAX];
	struct th_trace_name nm;
	struct th_trace_open o;
	struct th_trace_name nm2;
	size_t n, used;

	(void)state;
	seg_make_name(4, 7, &nm);
	n = th_trace_encode_name(&nm, full, sizeof(full));
	for (size_t cut = 0; cut < n; cut++) {
		uint8_t *p = malloc(cut + 1);

		memcpy(p, full, cut);
		assert_int_equal(th_trace_decode(p, cut, &used, &o, &nm2, NULL), -EMSGSIZE);
		assert_int_equal(used, 0);
		free(p);
	}
	assert_int_equal(th_trace_decode(NULL, 0, &used, NULL, NULL, NULL), -EMSGSIZE);
}

/* Decode @buf with its header's length set to @len (body bytes). */
static int
decode_len(uint8_t *buf, size_t len)
{
	struct th_trace_open o;
	struct th_trace_name nm;
	struct th_trace_rpc r;
	size_t used;

	buf[2] = (uint8_t)len;
	buf[3] = (uint8_t)(len >> 8);
	return th_trace_decode(buf, 4 + len, &used, &o, &nm, &r);
}

static void
test_decode_bad(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_rpc r;
	struct th_trace_name nm;
	size_t n, used;

	(void)state;
	seg_make_open(1, 3, &o);
	n = th_trace_encode_open(&o, buf, sizeof(buf));
	/* A body cut anywhere, or with a byte too many, is refused (ASan checks the reads). */
	for (size_t len = 0; len < n - 4; len++)
		assert_int_equal(decode_len(buf, len), -EBADMSG);
	assert_int_equal(decode_len(buf, n - 4 + 1), -EBADMSG);
	assert_int_equal(decode_len(buf, n - 4), TH_TRACE_OPEN);
	/* A handle longer than the slot. */
	buf[4 + 1] = 65;
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), -EBADMSG);
	buf[4 + 1] = 32;
	/* More elided zeros than the handle has bytes. */
	buf[4 + 2] = 33;
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), -EBADMSG);
	buf[4 + 2] = 8;
	/* A form bit this version does not define. */
	buf[4 + 3] |= 0x80;
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), -EBADMSG);
	buf[4 + 3] &= 0x7f;
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), TH_TRACE_OPEN);

	seg_make_rpc(3, 5, &r);
	n = th_trace_encode_rpc(&r, buf, sizeof(buf));
	for (size_t len = 0; len < n - 4; len++)
		assert_int_equal(decode_len(buf, len), -EBADMSG);
	assert_int_equal(decode_len(buf, n - 4), TH_TRACE_RPC);
	seg_make_name(2, 5, &nm);
	n = th_trace_encode_name(&nm, buf, sizeof(buf));
	for (size_t len = 0; len < n - 4; len++)
		assert_int_equal(decode_len(buf, len), -EBADMSG);
	assert_int_equal(decode_len(buf, n - 4), TH_TRACE_NAME);

	/* An unknown type is refused, but its length says how far to skip. */
	memcpy(buf, "\x09\0\x05\0", 4);
	assert_int_equal(th_trace_decode(buf, 9, &used, &o, NULL, NULL), -EBADMSG);
	assert_int_equal(used, 9);
}

/*
 * Every value has one spelling: overlong varints, an IPv4-mapped address in
 * 16 bytes and a stored value the form says is implied are all damage.
 */
static void
test_decode_noncanonical(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX], bad[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	size_t n, used;

	(void)state;
	memset(&o, 0, sizeof(o));
	seg_v4(&o.server, 0x0a000001);
	seg_v4(&o.client, 0x0a010203);
	o.open_ns = 5;
	o.close_ns = 6;
	o.uid = 1;
	n = th_trace_encode_open(&o, buf, sizeof(buf));
	/* Body: vers fh_len tail shape server client form close(1) uid(1) gid(0) ops(0) ... */
	assert_int_equal(buf[4 + 12], 0x06);
	assert_int_equal(buf[4 + 13], 1);
	/* close delta 1 spelled 0x81 0x00. */
	memcpy(bad, buf, 4 + 13);
	bad[4 + 13] = 0x81;
	bad[4 + 14] = 0x00;
	memcpy(bad + 4 + 15, buf + 4 + 14, n - 4 - 14);
	assert_int_equal(decode_len(bad, n - 4 + 1), -EBADMSG);
	/* uid (a u32) given 33 bits. */
	memcpy(bad, buf, 4 + 14);
	memcpy(bad + 4 + 14, "\x80\x80\x80\x80\x10", 5);
	memcpy(bad + 4 + 19, buf + 4 + 15, n - 4 - 15);
	assert_int_equal(decode_len(bad, n - 4 + 4), -EBADMSG);
	/* Eleven continuation bytes: never a 64-bit value. */
	memcpy(bad, buf, 4 + 13);
	memset(bad + 4 + 13, 0xff, 11);
	assert_int_equal(decode_len(bad, 13 + 11), -EBADMSG);
	/* The server as 16 IPv4-mapped bytes with the form's IPv4 bit cleared. */
	memcpy(bad, buf, 4 + 4);
	bad[4 + 3] &= (uint8_t)~0x01;
	memcpy(bad + 4 + 4, o.server.b, 16);
	memcpy(bad + 4 + 20, buf + 4 + 8, n - 4 - 8);
	assert_int_equal(decode_len(bad, n - 4 + 12), -EBADMSG);
	/* transferred stored although it equals size (form bit cleared, value 0 added). */
	memcpy(bad, buf, n);
	bad[4 + 12] &= (uint8_t)~0x02;
	memmove(bad + 4 + 18, bad + 4 + 17, n - 4 - 17);
	bad[4 + 17] = 0;
	assert_int_equal(decode_len(bad, n - 4 + 1), -EBADMSG);
	/* The same spelling with a transferred that differs from size is a valid record. */
	bad[4 + 17] = 7;
	assert_int_equal(decode_len(bad, n - 4 + 1), TH_TRACE_OPEN);
	/* Flags 2 in a flags byte: the form byte already spells it. */
	memcpy(bad, buf, 4 + 12);
	bad[4 + 12] = 0x06 | 0x20;
	bad[4 + 13] = 2;
	memcpy(bad + 4 + 14, buf + 4 + 13, n - 4 - 13);
	assert_int_equal(decode_len(bad, n - 4 + 1), -EBADMSG);
	bad[4 + 13] = 4;
	assert_int_equal(decode_len(bad, n - 4 + 1), TH_TRACE_OPEN);
	/* The unchanged record still decodes. */
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), TH_TRACE_OPEN);
	assert_int_equal(used, n);
}

/* The segment bench's records shrink to under half of version 1's 124 bytes. */
static void
test_compact(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	size_t total = 0;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		seg_make_open(11, i, &o);
		total += th_trace_encode_open(&o, buf, sizeof(buf));
	}
	assert_true(total < 1000 * 62);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_layout_bytes),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_decode_bad),
		cmocka_unit_test(test_decode_noncanonical),
		cmocka_unit_test(test_compact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
