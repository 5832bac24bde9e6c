/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/trace: records survive encode/decode exactly, the bytes on disk are the
 * documented little-endian layout (a segment written on one machine reads on
 * another), and damaged input is refused without reading past the buffer.
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
		n = th_trace_encode_open(&o, buf, sizeof(buf));
		assert_int_equal(n, 4 + 88 + o.fh_len);
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

/* The layout is explicit little-endian: check bytes, not a round trip. */
static void
test_layout_bytes(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_rpc r;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.open_ns = 0x0102030405060708ull;
	o.uid = 0xaabbccdd;
	o.dir = 1;
	o.fh_len = 2;
	o.fh[0] = 0xf1;
	o.fh[1] = 0xf2;
	o.size = 0x1122;
	assert_int_equal(th_trace_encode_open(&o, buf, sizeof(buf)), 94);
	static const uint8_t head[] = {1, 0, 90, 0, 8, 7, 6, 5, 4, 3, 2, 1};
	assert_memory_equal(buf, head, sizeof(head));
	assert_memory_equal(buf + 4 + 48, "\xdd\xcc\xbb\xaa", 4);
	assert_int_equal(buf[4 + 56], 1);
	assert_int_equal(buf[4 + 59], 2);
	assert_memory_equal(buf + 4 + 80, "\x22\x11\0\0\0\0\0\0", 8);
	assert_memory_equal(buf + 4 + 88, "\xf1\xf2", 2);

	memset(&r, 0, sizeof(r));
	r.xid = 0x12345678;
	r.server_port = 2049;
	assert_int_equal(th_trace_encode_rpc(&r, buf, sizeof(buf)), 106);
	assert_memory_equal(buf, "\3\0\x66\0", 4);
	assert_memory_equal(buf + 4 + 50, "\x01\x08\x78\x56\x34\x12", 6);
}

static void
test_encode_refuses(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_name nm;

	(void)state;
	seg_make_open(1, 1, &o);
	/* One byte short of the record: nothing written. */
	assert_int_equal(th_trace_encode_open(&o, buf, 4 + 88 + o.fh_len - 1), 0);
	o.fh_len = TH_TRACE_FH_MAX + 1;
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

static void
test_decode_bad(void **state)
{
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_rpc r;
	size_t n, used;

	(void)state;
	seg_make_open(1, 3, &o);
	n = th_trace_encode_open(&o, buf, sizeof(buf));
	/* A length that does not match fh_len. */
	buf[2]++;
	assert_int_equal(th_trace_decode(buf, sizeof(buf), &used, &o, NULL, NULL), -EBADMSG);
	buf[2]--;
	/* A handle longer than the slot. */
	buf[4 + 59] = 65;
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), -EBADMSG);
	buf[4 + 59] = 32;
	/* A direction that does not exist. */
	buf[4 + 56] = 7;
	assert_int_equal(th_trace_decode(buf, n, &used, &o, NULL, NULL), -EBADMSG);
	/* An RPC record too short for its fixed part. */
	memcpy(buf, "\3\0\x10\0", 4);
	assert_int_equal(th_trace_decode(buf, 20, &used, NULL, NULL, &r), -EBADMSG);
	/* An unknown type is refused, but its length says how far to skip. */
	memcpy(buf, "\x09\0\x05\0", 4);
	assert_int_equal(th_trace_decode(buf, 9, &used, &o, NULL, NULL), -EBADMSG);
	assert_int_equal(used, 9);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
