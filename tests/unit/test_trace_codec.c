/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/trace: records coded in a chunk (tables local to the chunk, what
 * segments store) survive encode/decode exactly, the coding is compact,
 * every value has one spelling, and damaged input is refused without reading
 * past the buffer.
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

/* The time a segment orders a record by: an RPC without a call goes by its reply. */
static void
test_record_time(void **state)
{
	struct th_trace_open o;
	struct th_trace_rpc r;

	(void)state;
	seg_make_open(1, 7, &o);
	assert_int_equal(th_trace_open_time(&o), o.open_ns);
	seg_make_rpc(3, 1, &r);
	assert_true(r.call_ns != 0 && r.call_ns != r.reply_ns);
	assert_int_equal(th_trace_rpc_time(&r), r.call_ns);
	r.call_ns = 0;
	assert_int_equal(th_trace_rpc_time(&r), r.reply_ns);
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
	struct th_trace_chunk *enc = th_trace_chunk_create(), *dec = th_trace_chunk_create_reader();
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

	/* A reader's chunk decodes but does not encode. */
	a = th_trace_chunk_create_reader();
	assert_non_null(a);
	assert_false(th_trace_chunk_has_room(a));
	assert_int_equal(th_trace_chunk_encode_open(a, &o, x, sizeof(x)), 0);
	th_trace_chunk_free(a);
}

/*
 * A reader's tables grow from a few hundred entries to the most a chunk
 * holds: every table filled by an encoder, with the longest keys, decodes,
 * and a chunk after it decodes from a reset reader.
 */
static void
test_chunk_reader_grows(void **state)
{
	struct th_trace_chunk *enc = th_trace_chunk_create(), *dec = th_trace_chunk_create_reader();
	size_t size = 4 << 20, at = 0, k, used;
	uint8_t *buf = malloc(size);
	struct th_trace_open o, o2, last_o;
	struct th_trace_rpc r, r2, last_r;
	unsigned int added = 0;
	int ret;

	(void)state;
	assert_non_null(buf);
	seg_make_open(1, 1, &o);
	o.fh_len = TH_TRACE_FH_MAX;
	memset(o.fh, 0xa5, sizeof(o.fh));
	seg_make_rpc(1, 1, &r);
	/* Opens of new files by new clients and users, RPCs on new flows, until a table fills. */
	while (th_trace_chunk_has_room(enc)) {
		o.fh[0] = (uint8_t)added, o.fh[1] = (uint8_t)(added >> 8);
		o.client.b[0] = (uint8_t)added, o.client.b[1] = (uint8_t)(added >> 8);
		o.uid = added;
		k = th_trace_chunk_encode_open(enc, &o, buf + at, size - at);
		assert_true(k > 0);
		at += k;
		last_o = o;
		r.client_port = (uint16_t)added;
		r.fh[0] = (uint8_t)~added, r.fh[1] = (uint8_t)(added >> 8);
		k = th_trace_chunk_encode_rpc(enc, &r, buf + at, size - at);
		if (k == 0)
			break;
		at += k;
		last_r = r;
		added++;
	}
	assert_true(added > 2000);
	th_trace_chunk_reset(dec);
	for (size_t p = 0; p < at; p += used) {
		ret = th_trace_chunk_decode(dec, buf + p, at - p, &used, &o2, NULL, &r2);
		assert_true(ret == TH_TRACE_OPEN || ret == TH_TRACE_RPC);
	}
	/* The last of each, against what was encoded. */
	assert_memory_equal(&o2, &last_o, sizeof(o));
	assert_memory_equal(&r2, &last_r, sizeof(r));
	th_trace_chunk_free(enc);
	th_trace_chunk_free(dec);
	free(buf);
}

/* Every cut of a chunk decodes a prefix and then refuses; nothing reads past the buffer. */
static void
test_chunk_truncated(void **state)
{
	struct th_trace_chunk *c = th_trace_chunk_create(), *d = th_trace_chunk_create_reader();
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
		got = chunk_check(d, 100, p, cut, &ret);
		/* A cut between records decodes those before it; inside one, it is refused. */
		assert_true(got >= 0 && got < 40);
		assert_true(ret == -EBADMSG || ret > 0 || cut == 0);
		free(p);
	}
	th_trace_chunk_free(c);
	th_trace_chunk_free(d);
}

/* References to nothing, unknown types and second spellings are refused. */
static void
test_chunk_decode_bad(void **state)
{
	struct th_trace_chunk *c = th_trace_chunk_create(), *d = th_trace_chunk_create_reader();
	uint8_t buf[TH_TRACE_RECORD_MAX], two[2 * TH_TRACE_RECORD_MAX];
	struct th_trace_open o;
	struct th_trace_name nm, nm2;
	size_t n, m, used;

	(void)state;
	/* A name's mode, when stored, is a varint at its end: 0 there would be a second
	 * spelling of "no mode", and it must fit 32 bits. */
	seg_make_name(1, 1, &nm);
	nm.mode = 1;
	th_trace_chunk_reset(c);
	n = th_trace_chunk_encode_name(c, &nm, buf, sizeof(buf));
	assert_int_equal(buf[0] & 0x0b, 0x0a); /* NAME, mode stored */
	assert_int_equal(buf[n - 1], 1);
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, &nm2, NULL), TH_TRACE_NAME);
	assert_int_equal(nm2.mode, 1);
	buf[n - 1] = 0;
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, &nm2, NULL), -EBADMSG);
	nm.mode = UINT32_MAX;
	th_trace_chunk_reset(c);
	n = th_trace_chunk_encode_name(c, &nm, buf, sizeof(buf));
	buf[n - 1] = 0x1f; /* bit 32 */
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, &nm2, NULL), -EBADMSG);
	buf[n - 1] = 0x0f;
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, &nm2, NULL), TH_TRACE_NAME);
	assert_int_equal(nm2.mode, UINT32_MAX);
	/* Version 3 had no mode: its bit there is damage, the same name without it is not. */
	assert_int_equal(th_trace_chunk_set_version(d, 3), 0);
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, &nm2, NULL), -EBADMSG);
	nm.mode = 0;
	th_trace_chunk_reset(c);
	n = th_trace_chunk_encode_name(c, &nm, buf, sizeof(buf));
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, &nm2, NULL), TH_TRACE_NAME);
	assert_int_equal(nm2.mode, 0);
	/* Only versions a reader takes, and only on a reader. */
	assert_int_equal(th_trace_chunk_set_version(d, TH_TRACE_VERSION_MIN - 1), -EINVAL);
	assert_int_equal(th_trace_chunk_set_version(d, TH_TRACE_VERSION + 1), -EINVAL);
	assert_int_equal(th_trace_chunk_set_version(c, TH_TRACE_VERSION), -EINVAL);
	assert_int_equal(th_trace_chunk_set_version(d, TH_TRACE_VERSION), 0);

	th_trace_chunk_reset(c);
	seg_make_open(1, 3, &o);
	o.transferred = o.size;
	o.seq_bytes = o.size;
	o.vers = 3;
	o.flags = 0;
	n = th_trace_chunk_encode_open(c, &o, buf, sizeof(buf));
	/* An encoder's tables are not a reader's: it refuses to decode. */
	assert_int_equal(th_trace_chunk_decode(c, buf, n, &used, NULL, NULL, NULL), -EINVAL);
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, NULL, NULL), TH_TRACE_OPEN);

	/* Type 0 in the tag. */
	buf[0] &= (uint8_t)~3u;
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, NULL, NULL), -EBADMSG);
	assert_int_equal(used, 0);

	/* A second open of the same file refers to entry 0; in a fresh chunk entry 0 is nothing. */
	th_trace_chunk_reset(c);
	n = th_trace_chunk_encode_open(c, &o, two, sizeof(two));
	m = th_trace_chunk_encode_open(c, &o, two + n, sizeof(two) - n);
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, two + n, m, &used, NULL, NULL, NULL), -EBADMSG);

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
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, NULL, NULL), TH_TRACE_OPEN);
	/* ... and storing 3, which a chunk implies at its start, is a second spelling. */
	buf[n - m - 1] = 3;
	th_trace_chunk_reset(d);
	assert_int_equal(th_trace_chunk_decode(d, buf, n, &used, NULL, NULL, NULL), -EBADMSG);
	th_trace_chunk_free(c);
	th_trace_chunk_free(d);
}

/* An open's record in a fresh chunk; its length. */
static size_t
encode_fresh(struct th_trace_chunk *c, const struct th_trace_open *o, uint8_t *buf, size_t size)
{
	size_t n;

	th_trace_chunk_reset(c);
	n = th_trace_chunk_encode_open(c, o, buf, size);
	assert_true(n > 0);
	return n;
}

/* Where two encodings first differ. */
static size_t
first_diff(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	size_t i;

	for (i = 0; i < na && i < nb && a[i] == b[i]; i++)
		;
	return i;
}

/* Decode @p buf (@p n bytes) with bytes [at, at + cut) replaced by @p with. */
static int
decode_spliced(struct th_trace_chunk *c, const uint8_t *buf, size_t n, size_t at, size_t cut,
	const uint8_t *with, size_t with_len, struct th_trace_open *out)
{
	uint8_t t[2 * TH_TRACE_RECORD_MAX];
	size_t used;

	assert_true(at + cut <= n && n - cut + with_len <= sizeof(t));
	memcpy(t, buf, at);
	memcpy(t + at, with, with_len);
	memcpy(t + at + with_len, buf + at + cut, n - at - cut);
	th_trace_chunk_reset(c);
	return th_trace_chunk_decode(c, t, n - cut + with_len, &used, out, NULL, NULL);
}

/*
 * Every value has one spelling, and no value is wider than its field: a
 * varint spelled with a superfluous zero group, one past 32 bits in a 32-bit
 * field, one of eleven bytes, and an IPv4 address stored in 16 bytes are all
 * refused, while the same places take every legal spelling.
 */
static void
test_chunk_decode_one_spelling(void **state)
{
	static const uint8_t overlong_1[] = {0x81, 0x00};
	static const uint8_t max32[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
	static const uint8_t bit33[] = {0x80, 0x80, 0x80, 0x80, 0x10};
	static const uint8_t eleven[] = {
		0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
	struct th_trace_chunk *c = th_trace_chunk_create(), *d = th_trace_chunk_create_reader();
	uint8_t a[TH_TRACE_RECORD_MAX], b[TH_TRACE_RECORD_MAX], v6[17];
	struct th_trace_open o, p, out;
	size_t na, nb, at;

	(void)state;
	assert_non_null(c);
	seg_make_open(1, 3, &o);
	o.uid = 1;

	/* The uid: the only byte where uid 1 and uid 2 differ. */
	p = o;
	p.uid = 2;
	na = encode_fresh(c, &o, a, sizeof(a));
	nb = encode_fresh(c, &p, b, sizeof(b));
	assert_int_equal(na, nb);
	at = first_diff(a, na, b, nb);
	assert_true(at < na);
	assert_int_equal(a[at], 1);
	assert_int_equal(decode_spliced(d, a, na, at, 1, a + at, 1, &out), TH_TRACE_OPEN);
	assert_int_equal(out.uid, 1);
	assert_int_equal(decode_spliced(d, a, na, at, 1, overlong_1, 2, &out), -EBADMSG);
	assert_int_equal(decode_spliced(d, a, na, at, 1, max32, 5, &out), TH_TRACE_OPEN);
	assert_int_equal(out.uid, UINT32_MAX);
	assert_int_equal(decode_spliced(d, a, na, at, 1, bit33, 5, &out), -EBADMSG);
	assert_int_equal(decode_spliced(d, a, na, at, 1, eleven, 11, &out), -EBADMSG);

	/* The client address: four bytes after a kind byte 0. */
	p = o;
	p.client.b[15] ^= 1;
	nb = encode_fresh(c, &p, b, sizeof(b));
	at = first_diff(a, na, b, nb);
	assert_true(at >= 4 && at < na);
	assert_int_equal(a[at - 4], 0);
	assert_memory_equal(a + at - 3, o.client.b + 12, 4);
	/* The same address in 16 bytes is a second spelling... */
	v6[0] = 1;
	memcpy(v6 + 1, o.client.b, 16);
	assert_int_equal(decode_spliced(d, a, na, at - 4, 5, v6, 17, &out), -EBADMSG);
	/* ... a real IPv6 address there is not. */
	v6[1] = 0x20;
	v6[2] = 0x01;
	assert_int_equal(decode_spliced(d, a, na, at - 4, 5, v6, 17, &out), TH_TRACE_OPEN);
	assert_memory_equal(out.client.b, v6 + 1, 16);
	th_trace_chunk_free(c);
	th_trace_chunk_free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_time),
		cmocka_unit_test(test_chunk_roundtrip),
		cmocka_unit_test(test_chunk_compact),
		cmocka_unit_test(test_chunk_refuses),
		cmocka_unit_test(test_chunk_reader_grows),
		cmocka_unit_test(test_chunk_truncated),
		cmocka_unit_test(test_chunk_decode_bad),
		cmocka_unit_test(test_chunk_decode_one_spelling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
