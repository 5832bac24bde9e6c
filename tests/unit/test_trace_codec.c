/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/trace: records survive encode/decode exactly, the bytes on disk are the
 * documented compact little-endian layout (a segment written on one machine
 * reads on another), every value has one spelling, and damaged input is
 * refused without reading past the buffer; the same for records coded in a
 * chunk (tables local to the chunk), which is what segments store.
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


/*
 * Chunk coding (what segments store). A mixed run of records: opens with
 * every address and handle shape, names, RPCs with and without call/reply.
 */
static int
chunk_record(uint64_t i, struct th_trace_open *o, struct th_trace_name *nm,
	struct th_trace_rpc *r)
{
	if (i % 7 == 0) {
		seg_make_name(2, i, nm);
		nm->server.b[0] = i % 14 == 0 ? 0x20 : 0;
		return TH_TRACE_NAME;
	}
	if (i % 3 == 0) {
		seg_make_rpc(3, i, r);
		if (i % 9 == 0)
			r->call_ns = 0;
		if (i % 5 == 0)
			r->done = 17;
		r->flags = (uint8_t)(i % 11 == 0 ? 0x80 : r->flags);
		return TH_TRACE_RPC;
	}
	seg_make_open(1, i, o);
	o->fh_len = (uint8_t)(i % (TH_TRACE_FH_MAX + 1));
	memset(o->fh + o->fh_len, 0, TH_TRACE_FH_MAX - o->fh_len);
	if (i % 4 == 1)
		o->client.b[0] = 0x20;
	if (i % 10 == 1)
		o->vers = 4;
	if (i % 13 == 1)
		o->flags = 9;
	if (i % 17 == 1)
		o->transferred = 1;
	if (i % 19 == 1)
		o->seq_bytes = 5;
	return TH_TRACE_OPEN;
}

/* Encode records first.. into @buf until @n records or the tables fill; @return the bytes. */
static size_t
chunk_fill(struct th_trace_chunk *c, uint64_t first, uint64_t n, uint8_t *buf, size_t size,
	uint64_t *done)
{
	struct th_trace_open o;
	struct th_trace_name nm;
	struct th_trace_rpc r;
	size_t at = 0, k = 0;

	th_trace_chunk_reset(c);
	for (*done = 0; *done < n && size - at >= TH_TRACE_RECORD_MAX; (*done)++) {
		int type = chunk_record(first + *done, &o, &nm, &r);

		if (type == TH_TRACE_OPEN)
			k = th_trace_chunk_encode_open(c, &o, buf + at, size - at);
		else if (type == TH_TRACE_NAME)
			k = th_trace_chunk_encode_name(c, &nm, buf + at, size - at);
		else
			k = th_trace_chunk_encode_rpc(c, &r, buf + at, size - at);
		assert_true(k > 0 && k <= TH_TRACE_RECORD_MAX);
		at += k;
	}
	return at;
}

/* Decode @size bytes of a chunk; @return records that matched first.., -1 on a mismatch. */
static int64_t
chunk_check(struct th_trace_chunk *c, uint64_t first, const uint8_t *buf, size_t size, int *ret)
{
	struct th_trace_open o, o2;
	struct th_trace_name nm, nm2;
	struct th_trace_rpc r, r2;
	size_t at = 0, used;
	int64_t n = 0;

	th_trace_chunk_reset(c);
	*ret = 0;
	while (at < size) {
		int type = chunk_record(first + (uint64_t)n, &o, &nm, &r);

		memset(&o2, 0, sizeof(o2));
		*ret = th_trace_chunk_decode(c, buf + at, size - at, &used, &o2, &nm2, &r2);
		if (*ret < 0)
			return n;
		if (*ret != type || used == 0 || used > size - at)
			return -1;
		if (type == TH_TRACE_OPEN && memcmp(&o, &o2, sizeof(o)) != 0)
			return -1;
		if (type == TH_TRACE_NAME && memcmp(&nm, &nm2, sizeof(nm)) != 0)
			return -1;
		if (type == TH_TRACE_RPC && memcmp(&r, &r2, sizeof(r)) != 0)
			return -1;
		at += used;
		n++;
	}
	return n;
}

static void
test_chunk_roundtrip(void **state)
{
	struct th_trace_chunk *enc = th_trace_chunk_create(), *dec = th_trace_chunk_create();
	size_t size = 1 << 20, n;
	uint8_t *buf = malloc(size);
	uint64_t done;
	int ret;

	(void)state;
	assert_non_null(enc);
	assert_non_null(dec);
	n = chunk_fill(enc, 0, 5000, buf, size, &done);
	assert_int_equal(done, 5000);
	assert_int_equal(chunk_check(dec, 0, buf, n, &ret), 5000);
	/* A chunk starts from nothing: the same coder decodes a second, different chunk. */
	n = chunk_fill(enc, 777, 300, buf, size, &done);
	assert_int_equal(chunk_check(dec, 777, buf, n, &ret), 300);
	th_trace_chunk_free(enc);
	th_trace_chunk_free(dec);
	free(buf);
}

/* What a chunk saves: an open of a file, client and user seen before in the chunk is small. */
static void
test_chunk_compact(void **state)
{
	struct th_trace_chunk *c = th_trace_chunk_create();
	uint8_t buf[TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	size_t first, again, total = 0;

	(void)state;
	seg_make_open(11, 5, &o);
	first = th_trace_chunk_encode_open(c, &o, buf, sizeof(buf));
	o.open_ns += 1000;
	again = th_trace_chunk_encode_open(c, &o, buf, sizeof(buf));
	/* tag, time, duration, three one-byte references, ops; the size is the file's. */
	assert_true(first > 40);
	assert_true(again <= 11);
	/* The benchmark's records in one 256 KiB chunk: under 28 bytes a record before LZ4. */
	th_trace_chunk_reset(c);
	for (uint64_t i = 0; i < 8000; i++) {
		seg_make_open(11, i, &o);
		total += th_trace_chunk_encode_open(c, &o, buf, sizeof(buf));
	}
	assert_true(total < 8000 * 28);
	th_trace_chunk_free(c);
}

/* A record that cannot be coded, a short buffer or full tables change nothing. */
static void
test_chunk_refuses(void **state)
{
	struct th_trace_chunk *a = th_trace_chunk_create(), *b = th_trace_chunk_create();
	uint8_t x[TH_TRACE_RECORD_MAX], y[TH_TRACE_RECORD_MAX];
	struct th_trace_open o, bad;
	struct th_trace_name nm;
	size_t n;
	int added = 0;

	(void)state;
	seg_make_open(1, 1, &o);
	bad = o;
	bad.fh_len = TH_TRACE_FH_MAX + 1;
	assert_int_equal(th_trace_chunk_encode_open(a, &bad, x, sizeof(x)), 0);
	bad = o;
	bad.dir = 2;
	assert_int_equal(th_trace_chunk_encode_open(a, &bad, x, sizeof(x)), 0);
	assert_int_equal(th_trace_chunk_encode_open(a, &o, x, TH_TRACE_RECORD_MAX - 1), 0);
	seg_make_name(1, 1, &nm);
	nm.name_len = TH_TRACE_NAME_MAX + 1;
	assert_int_equal(th_trace_chunk_encode_name(a, &nm, x, sizeof(x)), 0);
	/* a saw three refusals, b nothing: the next record codes the same in both. */
	n = th_trace_chunk_encode_open(a, &o, x, sizeof(x));
	assert_int_equal(th_trace_chunk_encode_open(b, &o, y, sizeof(y)), n);
	assert_memory_equal(x, y, n);

	/* New handles until the table is full: then refused, and a reset makes room again. */
	while (th_trace_chunk_has_room(a)) {
		o.fh[0] = (uint8_t)added;
		o.fh[1] = (uint8_t)(added >> 8);
		assert_true(th_trace_chunk_encode_open(a, &o, x, sizeof(x)) > 0);
		added++;
	}
	assert_true(added > 4000);
	assert_int_equal(th_trace_chunk_encode_open(a, &o, x, sizeof(x)), 0);
	th_trace_chunk_reset(a);
	assert_true(th_trace_chunk_encode_open(a, &o, x, sizeof(x)) > 0);
	th_trace_chunk_free(a);
	th_trace_chunk_free(b);
}

/* Every cut of a chunk decodes a prefix and then refuses; nothing reads past the buffer. */
static void
test_chunk_truncated(void **state)
{
	struct th_trace_chunk *c = th_trace_chunk_create();
	uint8_t full[64 * 1024];
	uint64_t done;
	size_t n;
	int ret;

	(void)state;
	n = chunk_fill(c, 100, 40, full, sizeof(full), &done);
	for (size_t cut = 0; cut < n; cut++) {
		/* An exact-size copy, so a read past it is caught by the sanitizer build. */
		uint8_t *p = malloc(cut + 1);
		int64_t got;

		memcpy(p, full, cut);
		got = chunk_check(c, 100, p, cut, &ret);
		/* A cut between records decodes those before it; inside one, it is refused. */
		assert_true(got >= 0 && got < 40);
		assert_true(ret == -EBADMSG || ret > 0 || cut == 0);
		free(p);
	}
	th_trace_chunk_free(c);
}

/* References to nothing, unknown types and second spellings are refused. */
static void
test_chunk_decode_bad(void **state)
{
	struct th_trace_chunk *c = th_trace_chunk_create();
	uint8_t buf[TH_TRACE_RECORD_MAX], two[2 * TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	size_t n, m, used;

	(void)state;
	seg_make_open(1, 3, &o);
	o.transferred = o.size;
	o.seq_bytes = o.size;
	o.vers = 3;
	o.flags = 0;
	n = th_trace_chunk_encode_open(c, &o, buf, sizeof(buf));
	th_trace_chunk_reset(c);
	assert_int_equal(th_trace_chunk_decode(c, buf, n, &used, NULL, NULL, NULL), TH_TRACE_OPEN);

	/* Type 0 in the tag. */
	buf[0] &= (uint8_t)~3u;
	th_trace_chunk_reset(c);
	assert_int_equal(th_trace_chunk_decode(c, buf, n, &used, NULL, NULL, NULL), -EBADMSG);
	assert_int_equal(used, 0);

	/* A second open of the same file refers to entry 0; in a fresh chunk entry 0 is nothing. */
	th_trace_chunk_reset(c);
	n = th_trace_chunk_encode_open(c, &o, two, sizeof(two));
	m = th_trace_chunk_encode_open(c, &o, two + n, sizeof(two) - n);
	th_trace_chunk_reset(c);
	assert_int_equal(th_trace_chunk_decode(c, two + n, m, &used, NULL, NULL, NULL), -EBADMSG);

	/* A version-4 open stores its version (after ops, before the size varint)... */
	th_trace_chunk_reset(c);
	o.vers = 4;
	assert_true(o.size != 0);
	n = th_trace_chunk_encode_open(c, &o, buf, sizeof(buf));
	assert_int_equal(buf[1], 1 << 2);
	m = 1;
	for (uint64_t v = o.size; v >= 0x80; v >>= 7)
		m++;
	assert_int_equal(buf[n - m - 1], 4);
	th_trace_chunk_reset(c);
	assert_int_equal(th_trace_chunk_decode(c, buf, n, &used, NULL, NULL, NULL), TH_TRACE_OPEN);
	/* ... and storing 3, which a chunk implies at its start, is a second spelling. */
	buf[n - m - 1] = 3;
	th_trace_chunk_reset(c);
	assert_int_equal(th_trace_chunk_decode(c, buf, n, &used, NULL, NULL, NULL), -EBADMSG);
	th_trace_chunk_free(c);
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
		cmocka_unit_test(test_chunk_roundtrip),
		cmocka_unit_test(test_chunk_compact),
		cmocka_unit_test(test_chunk_refuses),
		cmocka_unit_test(test_chunk_truncated),
		cmocka_unit_test(test_chunk_decode_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
