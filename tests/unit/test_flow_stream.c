/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * RPC record marking over TCP: what a capture of a real connection throws
 * at the stream reassembler, and what must come out (or be counted).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_bytes.h"
#include "th_flow.h"

#define MAX_RECS 64

struct seen {
	unsigned int n;
	uint32_t xid[MAX_RECS];
	uint32_t size[MAX_RECS];      /* bytes handed over */
	uint32_t wire_size[MAX_RECS]; /* record length */
	uint64_t first_ns[MAX_RECS];
	uint64_t last_ns[MAX_RECS];
	int dir[MAX_RECS];
	unsigned int gaps; /* lost boundaries reported */
	int gap_dir;       /* direction of the last one */
	uint64_t gap_ns;   /* and its time */
};

static void
on_record(void *ctx, const struct th_flow_key *key, int dir, const struct th_flow_record *rec)
{
	struct seen *s = ctx;

	(void)key;
	if (s->n >= MAX_RECS) {
		s->n++; /* only counted */
		return;
	}
	s->xid[s->n] = rec->size >= 4
			       ? (uint32_t)rec->data[0] << 24 | (uint32_t)rec->data[1] << 16 |
					 (uint32_t)rec->data[2] << 8 | rec->data[3]
			       : 0;
	s->size[s->n] = rec->size;
	s->wire_size[s->n] = rec->wire_size;
	s->first_ns[s->n] = rec->first_ns;
	s->last_ns[s->n] = rec->last_ns;
	s->dir[s->n] = dir;
	s->n++;
}

static void
on_gap(void *ctx, const struct th_flow_key *key, int dir, uint64_t now_ns)
{
	struct seen *s = ctx;

	(void)key;
	s->gaps++;
	s->gap_dir = dir;
	s->gap_ns = now_ns;
}

/* An NFSv3 call record: marker + header + @p body_size bytes of filler. Returns bytes written. */
static size_t
make_call(uint8_t *p, uint32_t xid, uint32_t body_size)
{
	uint32_t rec = 40 + body_size;
	size_t i;

	th_be_put32(p, 0x80000000u | rec);
	th_be_put32(p + 4, xid);
	th_be_put32(p + 8, 0);       /* CALL */
	th_be_put32(p + 12, 2);      /* rpcvers */
	th_be_put32(p + 16, 100003); /* NFS */
	th_be_put32(p + 20, 3);
	th_be_put32(p + 24, 6); /* READ */
	th_be_put32(p + 28, 0); /* AUTH_NONE */
	th_be_put32(p + 32, 0);
	th_be_put32(p + 36, 0); /* verifier */
	th_be_put32(p + 40, 0);
	for (i = 0; i < body_size; i++)
		p[44 + i] = (uint8_t)(i * 7 + 1);
	return 4 + rec;
}

struct conn {
	struct th_flow_table *t;
	struct seen seen;
	struct th_pkt_meta c2s;
	uint32_t seq;
};

static void
conn_init(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->t = th_flow_table_create(64, 1000000000ull, on_record, NULL, on_gap, &c->seen);
	assert_non_null(c->t);
	c->c2s.src.b[10] = c->c2s.src.b[11] = 0xff;
	c->c2s.dst = c->c2s.src;
	c->c2s.src.b[15] = 2;
	c->c2s.dst.b[15] = 1;
	c->c2s.sport = 801;
	c->c2s.dport = 2049;
	c->c2s.l4 = TH_PKT_L4_TCP;
	c->c2s.ip_version = 4;
	c->seq = 1000;
	c->c2s.tcp_flags = TH_TCP_SYN;
	c->c2s.tcp_seq = c->seq - 1;
	th_flow_tcp_input(c->t, &c->c2s, NULL, 0, 0, 1, true);
	c->c2s.tcp_flags = TH_TCP_ACK;
}

/* Send bytes [off, off+len) of @p stream as one segment at time @p ns. */
static void
seg(struct conn *c, const uint8_t *stream, size_t off, size_t len, uint64_t ns)
{
	c->c2s.tcp_seq = c->seq + (uint32_t)off;
	th_flow_tcp_input(c->t, &c->c2s, stream + off, (uint32_t)len, (uint32_t)len, ns, true);
}

static void
conn_fini(struct conn *c)
{
	th_flow_table_free(c->t);
}

/* The server's side of the connection, its bytes starting at sequence number @p seq. */
static struct th_pkt_meta
server_side(const struct conn *c, uint32_t seq)
{
	struct th_pkt_meta back = c->c2s;

	back.src = c->c2s.dst;
	back.dst = c->c2s.src;
	back.sport = c->c2s.dport;
	back.dport = c->c2s.sport;
	back.tcp_seq = seq;
	return back;
}

/* The server's reply to call @p xid at time @p ns: marker, xid, REPLY, MSG_ACCEPTED, a null
 * verifier, SUCCESS, as its first bytes. */
static void
send_reply(struct conn *c, uint32_t xid, uint64_t ns)
{
	uint8_t reply[4 + 24];
	struct th_pkt_meta back = server_side(c, 5000);

	memset(reply, 0, sizeof(reply));
	th_be_put32(reply, 0x80000000u | 24);
	th_be_put32(reply + 4, xid);
	th_be_put32(reply + 8, 1);
	th_flow_tcp_input(c->t, &back, reply, sizeof(reply), sizeof(reply), ns, true);
}

static void
test_many_records_in_one_segment(void **state)
{
	uint8_t buf[4096];
	size_t n = 0;
	struct conn c;
	uint32_t i;

	(void)state;
	conn_init(&c);
	for (i = 0; i < 10; i++)
		n += make_call(buf + n, 0x100 + i, 12);
	seg(&c, buf, 0, n, 5);
	assert_int_equal(c.seen.n, 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(c.seen.xid[i], 0x100 + i);
		assert_int_equal(c.seen.wire_size[i], 52);
	}
	assert_int_equal(th_flow_table_counters(c.t)->records_in_place, 10);
	conn_fini(&c);
}

static void
test_record_across_segments_keeps_times(void **state)
{
	static uint8_t buf[70000];
	size_t n, off;
	struct conn c;
	uint64_t t = 100;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0xabc, 65536);
	for (off = 0; off < n; off += 1448, t += 10)
		seg(&c, buf, off, n - off < 1448 ? n - off : 1448, t);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 0xabc);
	assert_int_equal(c.seen.wire_size[0], 40 + 65536);
	assert_int_equal(c.seen.size[0], TH_FLOW_PREFIX); /* payload is not kept */
	assert_int_equal(c.seen.first_ns[0], 100);
	assert_int_equal(c.seen.last_ns[0], t - 10);
	/* what was skipped, not copied */
	assert_int_equal(th_flow_table_counters(c.t)->bytes_skipped, 40 + 65536 - TH_FLOW_PREFIX);
	conn_fini(&c);
}

static void
test_split_marker_and_byte_by_byte(void **state)
{
	uint8_t buf[512];
	size_t n, i;
	struct conn c;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0x77, 20);
	n += make_call(buf + n, 0x78, 0);
	for (i = 0; i < n; i++)
		seg(&c, buf, i, 1, i);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 0x77);
	assert_int_equal(c.seen.xid[1], 0x78);
	assert_int_equal(c.seen.size[0], 60);
	assert_memory_equal(buf + 4 + 40, buf + 4 + 40, 20);
	conn_fini(&c);
}

static void
test_multi_fragment_record(void **state)
{
	uint8_t buf[256], wire[300];
	size_t n;
	struct conn c;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0x99, 40); /* 84 bytes: marker + 80 */
	/* Re-frame the 80 record bytes as fragments of 30, 30 and 20. */
	th_be_put32(wire, 30);
	memcpy(wire + 4, buf + 4, 30);
	th_be_put32(wire + 34, 30);
	memcpy(wire + 38, buf + 34, 30);
	th_be_put32(wire + 68, 0x80000000u | 20);
	memcpy(wire + 72, buf + 64, 20);
	seg(&c, wire, 0, 92, 1);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 0x99);
	assert_int_equal(c.seen.wire_size[0], 80);
	assert_int_equal(c.seen.size[0], 80);
	assert_int_equal(th_flow_table_counters(c.t)->records_multi_frag, 1);
	(void)n;
	conn_fini(&c);
}

static void
test_retransmission_is_trimmed(void **state)
{
	uint8_t buf[1024];
	size_t n = 0;
	struct conn c;

	(void)state;
	conn_init(&c);
	n += make_call(buf, 1, 100);
	n += make_call(buf + n, 2, 100);
	seg(&c, buf, 0, 100, 1);
	seg(&c, buf, 0, 100, 2);     /* full retransmission */
	seg(&c, buf, 50, n - 50, 3); /* overlaps the first 50 bytes */
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 1);
	assert_int_equal(c.seen.xid[1], 2);
	assert_int_equal(th_flow_table_counters(c.t)->segments_retrans, 1);
	assert_int_equal(th_flow_table_counters(c.t)->bytes_retrans, 150);
	conn_fini(&c);
}

static void
test_gap_in_payload_is_stepped_over(void **state)
{
	static uint8_t buf[20000];
	size_t n;
	struct conn c;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 5, 8000);
	n += make_call(buf + n, 6, 10);
	seg(&c, buf, 0, 1448, 1);
	/* bytes 1448..2896 lost, deep inside the first record's data: what follows waits for
	 * them (a late segment) until the hole has been open TH_FLOW_HOLD_NS */
	seg(&c, buf, 2896, n - 2896, 2);
	assert_int_equal(c.seen.n, 0);
	assert_int_equal(th_flow_table_counters(c.t)->segments_held, 1);
	th_flow_table_age(c.t, 2 + TH_FLOW_HOLD_NS - 1);
	assert_int_equal(c.seen.n, 0);
	th_flow_table_age(c.t, 2 + TH_FLOW_HOLD_NS);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.last_ns[1], 2); /* the held segment's own time */
	assert_int_equal(c.seen.xid[0], 5);
	assert_int_equal(c.seen.size[0], TH_FLOW_PREFIX);
	assert_int_equal(c.seen.xid[1], 6);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 1);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_lost, 0);
	assert_int_equal(c.seen.gaps, 0);
	conn_fini(&c);
}

static void
test_gap_across_boundary_resyncs_without_wrong_record(void **state)
{
	uint8_t buf[4096];
	size_t n = 0, b2, b3;
	struct conn c;

	(void)state;
	conn_init(&c);
	n += make_call(buf, 10, 100);
	b2 = n;
	n += make_call(buf + n, 11, 100);
	b3 = n;
	n += make_call(buf + n, 12, 100);
	seg(&c, buf, 0, 60, 1);
	/* lost: 60 .. b2 + 10 (end of record 10, marker and start of record 11) */
	seg(&c, buf, b2 + 10, b3 - b2 - 10, 2); /* rest of record 11: must not come out */
	seg(&c, buf, b3, n - b3, 3);            /* record 12 starts this segment */
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 12);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_lost, 1);
	assert_int_equal(th_flow_table_counters(c.t)->records_lost_gap, 1);
	assert_int_equal(th_flow_table_counters(c.t)->resyncs, 1);
	/* reported once, for the client's direction (its address is the higher), at the gap */
	assert_int_equal(c.seen.gaps, 1);
	assert_int_equal(c.seen.gap_dir, 1);
	assert_int_equal(c.seen.gap_ns, 2);
	conn_fini(&c);
}

static void
test_mid_stream_pickup(void **state)
{
	static uint8_t buf[8192];
	size_t n = 0, b2;
	struct conn c;
	struct th_pkt_meta m;

	(void)state;
	conn_init(&c);
	n += make_call(buf, 20, 3000);
	b2 = n;
	n += make_call(buf + n, 21, 8);
	/* A connection the capture never saw open, entered in the middle of record 20. */
	m = c.c2s;
	m.sport = 802;
	m.tcp_seq = 5000 + 1448;
	th_flow_tcp_input(
		c.t, &m, buf + 1448, (uint32_t)(b2 - 1448), (uint32_t)(b2 - 1448), 1, true);
	m.tcp_seq = 5000 + (uint32_t)b2;
	th_flow_tcp_input(c.t, &m, buf + b2, (uint32_t)(n - b2), (uint32_t)(n - b2), 2, true);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 21);
	assert_int_equal(th_flow_table_counters(c.t)->hunt_segments, 1);
	conn_fini(&c);
}

/*
 * TCP cuts a stream of pipelined calls at its MSS, not at records: a capture begun inside a
 * bulk write finds the next record start inside a segment, not only at one's first byte.
 */
static void
test_hunt_finds_record_inside_segment(void **state)
{
	static uint8_t buf[16384];
	size_t n = 0, off;
	struct conn c;
	struct th_pkt_meta m;

	(void)state;
	conn_init(&c);
	n += make_call(buf, 20, 3000);
	n += make_call(buf + n, 21, 3000); /* starts at 3044, inside the segment at 2896 */
	n += make_call(buf + n, 22, 8);
	n += make_call(buf + n, 23, 3000);
	m = c.c2s;
	m.sport = 802;
	for (off = 1448; off < n; off += 1448) {
		uint32_t len = (uint32_t)(n - off < 1448 ? n - off : 1448);

		m.tcp_seq = 5000 + (uint32_t)off;
		th_flow_tcp_input(c.t, &m, buf + off, len, len, off, true);
	}
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(c.seen.xid[0], 21);
	assert_int_equal(c.seen.xid[1], 22);
	assert_int_equal(c.seen.xid[2], 23);
	assert_int_equal(th_flow_table_counters(c.t)->hunt_segments, 1);
	assert_int_equal(th_flow_table_counters(c.t)->hunt_bytes, 3044 - 1448);
	assert_int_equal(th_flow_table_counters(c.t)->resyncs, 1);
	conn_fini(&c);
}

/*
 * Inside a segment, a call header whose record would end there without another marker after
 * it is data that looks like one; and the search inside segments ends after some MiB of a
 * hunt, a segment's first bytes still looked at.
 */
static void
test_hunt_inside_segment_is_careful_and_bounded(void **state)
{
	static uint8_t buf[4096], junk[1448];
	size_t n, i;
	struct conn c;
	struct th_pkt_meta m;

	(void)state;
	conn_init(&c);
	m = c.c2s;
	m.sport = 803;
	memset(junk, 'x', sizeof(junk));
	memcpy(buf, junk, 100);
	n = 100 + make_call(buf + 100, 30, 8);
	memcpy(buf + n, junk, 100); /* no marker after it */
	n += 100;
	m.tcp_seq = 1;
	th_flow_tcp_input(c.t, &m, buf, (uint32_t)n, (uint32_t)n, 1, true);
	assert_int_equal(c.seen.n, 0);

	/* Then a call after junk, followed by the next marker: found. */
	n = 100 + make_call(buf + 100, 31, 8);
	n += make_call(buf + n, 32, 8);
	m.tcp_seq += 200 + 52;
	th_flow_tcp_input(c.t, &m, buf, (uint32_t)n, (uint32_t)n, 2, true);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 31);
	m.tcp_seq += (uint32_t)n;

	/* A hunt through more than 2 MiB of junk stops searching inside segments. */
	th_be_put32(buf, 0xffffffffu); /* an impossible marker: hunt again */
	th_flow_tcp_input(c.t, &m, buf, 4, 4, 3, true);
	m.tcp_seq += 4;
	for (i = 0; i < (2u << 20) / (sizeof(junk) - 16) + 4; i++) {
		th_flow_tcp_input(c.t, &m, junk, sizeof(junk), sizeof(junk), 4, true);
		m.tcp_seq += sizeof(junk);
	}
	n = 100 + make_call(buf + 100, 33, 8);
	n += make_call(buf + n, 34, 8);
	th_flow_tcp_input(c.t, &m, buf, (uint32_t)n, (uint32_t)n, 5, true);
	assert_int_equal(c.seen.n, 2);
	m.tcp_seq += (uint32_t)n;
	n = make_call(buf, 35, 8);
	th_flow_tcp_input(c.t, &m, buf, (uint32_t)n, (uint32_t)n, 6, true);
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(c.seen.xid[2], 35);
	conn_fini(&c);
}

static void
test_untracked_port_needs_a_record_start(void **state)
{
	uint8_t buf[512], junk[100];
	uint32_t n;
	struct conn c;
	struct th_pkt_meta m;

	(void)state;
	conn_init(&c);
	memset(junk, 'x', sizeof(junk));
	m = c.c2s;
	m.sport = 40000;
	m.dport = 22;
	m.tcp_seq = 1;
	assert_false(th_flow_tcp_input(c.t, &m, junk, sizeof(junk), sizeof(junk), 1, false));
	m.tcp_seq = 101;
	n = (uint32_t)make_call(buf, 30, 4);
	assert_true(th_flow_tcp_input(c.t, &m, buf, n, n, 2, false));
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 30);
	conn_fini(&c);
}

static void
test_impossible_marker_hunts(void **state)
{
	uint8_t buf[512];
	size_t n;
	struct conn c;

	(void)state;
	conn_init(&c);
	th_be_put32(buf, 0xffffffffu); /* 2 GiB fragment: not RPC */
	memset(buf + 4, 0, 60);
	seg(&c, buf, 0, 64, 1);
	c.seq += 64;
	n = make_call(buf, 40, 8);
	seg(&c, buf, 0, n, 2);
	assert_int_equal(th_flow_table_counters(c.t)->bad_markers, 1);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 40);
	c.seq += (uint32_t)n;

	/* The rest of the segment an impossible marker came in is searched for a record. */
	th_be_put32(buf, 0xfffffff0u);
	memset(buf + 4, 'x', 20);
	n = 24 + make_call(buf + 24, 41, 8);
	n += make_call(buf + n, 42, 8);
	seg(&c, buf, 0, n, 3);
	assert_int_equal(th_flow_table_counters(c.t)->bad_markers, 2);
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(c.seen.xid[1], 41);
	assert_int_equal(c.seen.xid[2], 42);
	conn_fini(&c);
}

/* Capture cut (snap length): the record's end time is the cut segment's, not a later one's. */
static void
test_capture_cut_ends_record_in_time(void **state)
{
	static uint8_t buf[8192];
	size_t n, b2;
	struct conn c;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 70, 1000); /* 1044 bytes, one segment */
	b2 = n;
	n += make_call(buf + n, 71, 8);
	/* Only the first 200 bytes of the first segment were captured. */
	c.c2s.tcp_seq = c.seq;
	th_flow_tcp_input(c.t, &c.c2s, buf, 200, (uint32_t)b2, 10, true);
	c.c2s.tcp_seq = c.seq + (uint32_t)b2;
	th_flow_tcp_input(c.t, &c.c2s, buf + b2, (uint32_t)(n - b2), (uint32_t)(n - b2), 99, true);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 70);
	assert_int_equal(c.seen.size[0], 196);   /* what was seen (200 less the marker) */
	assert_int_equal(c.seen.last_ns[0], 10); /* not 99 */
	assert_int_equal(c.seen.xid[1], 71);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 1);
	conn_fini(&c);
}

static void
test_table_is_bounded_and_evicts(void **state)
{
	struct conn c;
	struct th_pkt_meta m;
	uint8_t buf[128];
	uint32_t i, n;

	(void)state;
	conn_init(&c);
	n = (uint32_t)make_call(buf, 50, 4);
	m = c.c2s;
	for (i = 0; i < 1000; i++) {
		m.sport = (uint16_t)(10000 + i);
		m.tcp_seq = i;
		th_flow_tcp_input(c.t, &m, buf, n, n, i, true);
	}
	assert_int_equal(c.seen.n, 1000);
	assert_true(th_flow_table_count(c.t) <= 64);
	assert_true(th_flow_table_counters(c.t)->flows_evicted >= 1000 - 64);
	/* idle flows age out */
	for (i = 0; i < 64; i++)
		th_flow_table_age(c.t, 10ull * 1000000000ull);
	assert_int_equal(th_flow_table_count(c.t), 0);
	conn_fini(&c);
}

/*
 * Neighbouring segments swapped (a mirror port, a link bundle): the later one
 * waits for the earlier, and the record is whole, nothing counted lost or
 * retransmitted. A segment of the other direction gives up on a hole.
 */
static void
test_swapped_segments_are_put_back_in_order(void **state)
{
	static uint8_t buf[8192];
	size_t n;
	struct conn c;
	struct th_pkt_meta back;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0x91, 3000);
	seg(&c, buf, 0, 1448, 10);
	seg(&c, buf, 2896, n - 2896, 20); /* the third segment before the second */
	assert_int_equal(c.seen.n, 0);
	seg(&c, buf, 1448, 1448, 30);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.xid[0], 0x91);
	assert_int_equal(c.seen.wire_size[0], n - 4);
	assert_int_equal(c.seen.first_ns[0], 10);
	assert_int_equal(c.seen.last_ns[0], 30); /* whole when the late one came */
	assert_int_equal(th_flow_table_counters(c.t)->segments_held, 1);
	assert_int_equal(th_flow_table_counters(c.t)->segments_reordered, 1);
	assert_int_equal(th_flow_table_counters(c.t)->segments_retrans, 0);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 0);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_lost, 0);

	/* Again, but the server answers before the hole is filled: it was a loss. */
	c.seq += (uint32_t)n;
	n = make_call(buf, 0x92, 3000);
	seg(&c, buf, 0, 1448, 40);
	seg(&c, buf, 2896, n - 2896, 50);
	assert_int_equal(c.seen.n, 1);
	back = server_side(&c, 77);
	th_flow_tcp_input(c.t, &back, NULL, 0, 0, 60, true); /* a bare ACK: no data, no verdict */
	assert_int_equal(c.seen.n, 1);
	back.tcp_seq = 78;
	th_flow_tcp_input(c.t, &back, buf, 8, 8, 60, true);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[1], 0x92);
	assert_int_equal(c.seen.last_ns[1], 50);
	assert_int_equal(th_flow_table_counters(c.t)->segments_reordered, 1);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 1);
	conn_fini(&c);
}

/*
 * The capture lost a call's last segment; its reply proves it was sent: the
 * call comes out (its tail stepped over, ending at the last segment seen)
 * before the reply, so the two can match, and the next call starts clean.
 */
static void
test_reply_finishes_a_call_missing_its_tail(void **state)
{
	static uint8_t buf[8192];
	size_t n, next;
	struct conn c;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0xa1, 3000);
	next = make_call(buf + n, 0xa2, 12);
	seg(&c, buf, 0, 1448, 10);
	seg(&c, buf, 1448, 1448, 20); /* the last n - 2896 bytes are not in the capture */
	assert_int_equal(c.seen.n, 0);

	send_reply(&c, 0xa1, 30);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 0xa1); /* the call first */
	assert_int_equal(c.seen.dir[0], c.seen.dir[1] ^ 1);
	assert_int_equal(c.seen.wire_size[0], n - 4);
	assert_int_equal(c.seen.last_ns[0], 20); /* its last byte the capture saw */
	assert_int_equal(c.seen.xid[1], 0xa1);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 1);

	/* The client's next call: in order, nothing lost or hunted. */
	seg(&c, buf, n, next, 40);
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(c.seen.xid[2], 0xa2);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_lost, 0);
	assert_int_equal(th_flow_table_counters(c.t)->segments_retrans, 0);
	conn_fini(&c);
}

/*
 * A mirror port put a reply before the call it answers (the call in one segment): the
 * reply acknowledges the call's bytes, so it waits for them; the call comes out first, at
 * its own time, whole, then the reply.
 */
static void
test_reply_before_its_call_waits(void **state)
{
	static uint8_t buf[512];
	uint8_t reply[4 + 24];
	size_t n;
	struct conn c;
	struct th_pkt_meta back;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0xc1, 100);
	memset(reply, 0, sizeof(reply));
	th_be_put32(reply, 0x80000000u | 24);
	th_be_put32(reply + 4, 0xc1);
	th_be_put32(reply + 8, 1);
	back = server_side(&c, 5000);
	back.tcp_ack = c.seq + (uint32_t)n;
	th_flow_tcp_input(c.t, &back, reply, sizeof(reply), sizeof(reply), 30, true);
	assert_int_equal(c.seen.n, 0);
	seg(&c, buf, 0, n, 20);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 0xc1);
	assert_int_equal(c.seen.wire_size[0], n - 4);
	assert_int_equal(c.seen.last_ns[0], 20);
	assert_int_equal(c.seen.xid[1], 0xc1);
	assert_int_equal(c.seen.dir[1], c.seen.dir[0] ^ 1);
	assert_int_equal(c.seen.first_ns[1], 30);
	assert_int_equal(th_flow_table_counters(c.t)->segments_held_ack, 1);
	assert_int_equal(th_flow_table_counters(c.t)->segments_ack_reordered, 1);
	assert_int_equal(th_flow_table_counters(c.t)->segments_retrans, 0);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 0);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_lost, 0);
	conn_fini(&c);
}

/* The server's reply to call @p xid as its bytes from @p seq, acknowledging the client's up to
 * @p ack, at time @p ns. */
static void
reply_acking(struct conn *c, uint32_t xid, uint32_t seq, uint32_t ack, uint64_t ns)
{
	uint8_t reply[4 + 24];
	struct th_pkt_meta back = server_side(c, seq);

	memset(reply, 0, sizeof(reply));
	th_be_put32(reply, 0x80000000u | 24);
	th_be_put32(reply + 4, xid);
	th_be_put32(reply + 8, 1);
	back.tcp_ack = ack;
	th_flow_tcp_input(c->t, &back, reply, sizeof(reply), sizeof(reply), ns, true);
}

/*
 * The server sends an earlier reply again (all of its bytes seen) after a call the capture
 * shows late: the copy has nothing to wait for, and the next reply, to that call, still
 * waits for it, as it would without the copy.
 */
static void
test_retransmission_does_not_spoil_a_wait(void **state)
{
	static uint8_t buf[512];
	size_t n1, n2;
	struct conn c;
	const struct th_flow_counters *k;

	(void)state;
	conn_init(&c);
	n1 = make_call(buf, 0xd1, 100);
	n2 = make_call(buf + n1, 0xd2, 100);
	seg(&c, buf, 0, n1, 10);
	reply_acking(&c, 0xd1, 5000, c.seq + (uint32_t)n1, 12);
	assert_int_equal(c.seen.n, 2);
	/* The client's second call is late on the mirror port. */
	reply_acking(&c, 0xd1, 5000, c.seq + (uint32_t)(n1 + n2), 15); /* sent again */
	reply_acking(&c, 0xd2, 5028, c.seq + (uint32_t)(n1 + n2), 16);
	assert_int_equal(c.seen.n, 2);
	seg(&c, buf, n1, n2, 14);
	assert_int_equal(c.seen.n, 4);
	assert_int_equal(c.seen.xid[2], 0xd2); /* the call first */
	assert_int_equal(c.seen.dir[2], c.seen.dir[0]);
	assert_int_equal(c.seen.xid[3], 0xd2);
	assert_int_equal(c.seen.first_ns[3], 16);
	k = th_flow_table_counters(c.t);
	assert_int_equal(k->segments_retrans, 1);
	assert_int_equal(k->segments_held_ack, 1);
	assert_int_equal(k->segments_ack_reordered, 1);

	/* A third call late too: an old reply sent again while its reply waits is counted, and
	 * the wait goes on. */
	n1 += n2;
	n2 = make_call(buf + n1, 0xd3, 100);
	reply_acking(&c, 0xd3, 5056, c.seq + (uint32_t)(n1 + n2), 30);
	reply_acking(&c, 0xd1, 5000, c.seq + (uint32_t)(n1 + n2), 31);
	assert_int_equal(c.seen.n, 4);
	seg(&c, buf, n1, n2, 29);
	assert_int_equal(c.seen.n, 6);
	assert_int_equal(c.seen.xid[4], 0xd3);
	assert_int_equal(c.seen.dir[4], c.seen.dir[0]);
	assert_int_equal(c.seen.xid[5], 0xd3);
	assert_int_equal(k->segments_retrans, 2);
	assert_int_equal(k->segments_held_ack, 2);
	assert_int_equal(k->segments_ack_reordered, 2);
	conn_fini(&c);
}

/*
 * A FIN takes a sequence number: a reply that acknowledges the FIN of a call (a client that
 * closed its side after its last call) acknowledges nothing unseen and goes in at once, and
 * one the mirror port put before the FIN waits for it.
 */
static void
test_reply_acknowledging_a_fin_does_not_wait(void **state)
{
	static uint8_t buf[512];
	size_t n1, n2;
	struct conn c;
	const struct th_flow_counters *k;

	(void)state;
	conn_init(&c);
	k = th_flow_table_counters(c.t);
	n1 = make_call(buf, 0xe1, 100);
	c.c2s.tcp_flags = TH_TCP_ACK | TH_TCP_FIN;
	seg(&c, buf, 0, n1, 10);
	c.c2s.tcp_flags = TH_TCP_ACK;
	reply_acking(&c, 0xe1, 5000, c.seq + (uint32_t)n1 + 1, 12);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(k->segments_held_ack, 0);
	conn_fini(&c);

	/* The call, then its reply before a bare FIN the reply acknowledges. */
	conn_init(&c);
	k = th_flow_table_counters(c.t);
	n2 = make_call(buf, 0xe2, 100);
	seg(&c, buf, 0, n2, 10);
	reply_acking(&c, 0xe2, 5000, c.seq + (uint32_t)n2 + 1, 12);
	assert_int_equal(c.seen.n, 1);
	c.c2s.tcp_flags = TH_TCP_ACK | TH_TCP_FIN;
	seg(&c, buf, n2, 0, 11);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[1], 0xe2);
	assert_int_equal(k->segments_held_ack, 1);
	assert_int_equal(k->segments_ack_reordered, 1);
	conn_fini(&c);
}

/*
 * The client opens a new connection on the ports of an old one, and the mirror port puts its
 * first call before the server's SYN-ACK: measured against the old connection's bytes the
 * call may seem to acknowledge server bytes not seen; the SYN-ACK starts the server's new
 * stream, and the call must come out before its reply.
 */
static void
test_new_connection_lets_old_waits_go(void **state)
{
	static uint8_t buf[512];
	size_t n1, n2;
	struct conn c;
	struct th_pkt_meta back;

	(void)state;
	conn_init(&c);
	n1 = make_call(buf, 0xf1, 100);
	seg(&c, buf, 0, n1, 10);
	reply_acking(&c, 0xf1, 5000, c.seq + (uint32_t)n1, 12);
	assert_int_equal(c.seen.n, 2);

	/* The same ports again: SYN, then the first call (acknowledging the server's SYN). */
	c.c2s.tcp_flags = TH_TCP_SYN;
	c.c2s.tcp_seq = 20000 - 1;
	th_flow_tcp_input(c.t, &c.c2s, NULL, 0, 0, 20, true);
	c.c2s.tcp_flags = TH_TCP_ACK;
	c.c2s.tcp_ack = 7001;
	c.seq = 20000;
	n2 = make_call(buf, 0xf2, 100);
	seg(&c, buf, 0, n2, 22);
	back = server_side(&c, 7000);
	back.tcp_flags = TH_TCP_SYN | TH_TCP_ACK;
	back.tcp_ack = 20000;
	th_flow_tcp_input(c.t, &back, NULL, 0, 0, 21, true);
	reply_acking(&c, 0xf2, 7001, c.seq + (uint32_t)n2, 23);
	assert_int_equal(c.seen.n, 4);
	assert_int_equal(c.seen.xid[2], 0xf2); /* the call first */
	assert_int_equal(c.seen.dir[2], c.seen.dir[0]);
	assert_int_equal(c.seen.xid[3], 0xf2);
	assert_int_equal(c.seen.dir[3], c.seen.dir[1]);
	conn_fini(&c);
}

/* The server's reply to call @p xid, @p size bytes after its marker, into @p p. */
static size_t
make_reply(uint8_t *p, uint32_t xid, uint32_t size)
{
	memset(p, 0, 4 + size);
	th_be_put32(p, 0x80000000u | size);
	th_be_put32(p + 4, xid);
	th_be_put32(p + 8, 1); /* REPLY */
	return 4 + size;
}

/*
 * Bytes [off, off + len) of @p reply, which starts at the server's sequence number @p seq,
 * acknowledging the client's bytes up to @p ack, at time @p ns.
 */
static void
reply_seg(struct conn *c, const uint8_t *reply, uint32_t seq, size_t off, size_t len, uint32_t ack,
	uint64_t ns)
{
	struct th_pkt_meta back = server_side(c, seq + (uint32_t)off);

	back.tcp_ack = ack;
	th_flow_tcp_input(c->t, &back, reply + off, (uint32_t)len, (uint32_t)len, ns, true);
}

/*
 * A mirror port put both segments of a reply before the last segment of its call: the second
 * waits behind the first, and the call comes out whole at its tail, then the reply, as with
 * a reply of one segment (before, the second gave the wait up: the reply went in, and took
 * the call, cut, with it). A copy of a waiting segment keeps them waiting. When the tail
 * never comes, the wait ends after TH_FLOW_HOLD_NS as a loss, the reply's segments (three
 * now) in order. A reply longer than TH_FLOW_HOLD_QUEUE segments gives the wait up.
 */
static void
test_reply_segments_before_call_tail_wait_together(void **state)
{
	static uint8_t call[4096], reply[8192];
	size_t n, r, r2, r3, off;
	struct conn c;
	const struct th_flow_counters *k;
	uint32_t end;

	(void)state;
	conn_init(&c);
	k = th_flow_table_counters(c.t);
	n = make_call(call, 0xa1, 2000);
	r = make_reply(reply, 0xa1, 2000);
	end = c.seq + (uint32_t)n;
	seg(&c, call, 0, 1448, 10);
	reply_seg(&c, reply, 5000, 0, 1448, end, 30);
	reply_seg(&c, reply, 5000, 1448, r - 1448, end, 31);
	reply_seg(&c, reply, 5000, 1448, r - 1448, end, 32); /* a copy */
	assert_int_equal(c.seen.n, 0);
	seg(&c, call, 1448, n - 1448, 20);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[0], 0xa1); /* the call first, whole */
	assert_int_equal(c.seen.wire_size[0], n - 4);
	assert_int_equal(c.seen.last_ns[0], 20);
	assert_int_equal(c.seen.xid[1], 0xa1);
	assert_int_equal(c.seen.dir[1], c.seen.dir[0] ^ 1);
	assert_int_equal(c.seen.wire_size[1], r - 4);
	assert_int_equal(c.seen.first_ns[1], 30);
	assert_int_equal(c.seen.last_ns[1], 31);
	assert_int_equal(k->segments_held_ack, 2);
	assert_int_equal(k->segments_ack_reordered, 2);
	assert_int_equal(k->segments_retrans, 1);
	assert_int_equal(k->gaps_payload, 0);
	assert_int_equal(k->gaps_lost, 0);

	/* The next call's tail is lost: the reply goes in at the wait's end, after the call. */
	make_call(call + n, 0xa2, 2000);
	r2 = make_reply(reply, 0xa2, 3000);
	seg(&c, call, n, 1448, 100);
	end += (uint32_t)n;
	for (off = 0; off < r2; off += 1448)
		reply_seg(&c, reply, 5000 + (uint32_t)r, off, r2 - off < 1448 ? r2 - off : 1448,
			end, 110 + off);
	assert_int_equal(c.seen.n, 2);
	th_flow_table_age(c.t, 110 + TH_FLOW_HOLD_NS);
	assert_int_equal(c.seen.n, 4);
	assert_int_equal(c.seen.xid[2], 0xa2); /* the call, its tail stepped over */
	assert_int_equal(c.seen.dir[2], c.seen.dir[0]);
	assert_int_equal(c.seen.wire_size[2], n - 4);
	assert_int_equal(c.seen.last_ns[2], 100);
	assert_int_equal(c.seen.xid[3], 0xa2);
	assert_int_equal(c.seen.wire_size[3], r2 - 4);
	assert_int_equal(c.seen.first_ns[3], 110);
	assert_int_equal(k->segments_held_ack, 5);
	assert_int_equal(k->segments_ack_reordered, 2);
	assert_int_equal(k->gaps_payload, 1);
	assert_int_equal(k->gaps_lost, 0);

	/* A longer reply: TH_FLOW_HOLD_QUEUE segments wait, the next one gives the wait up. */
	c.seq = end;
	n = make_call(call, 0xa3, 2000);
	r3 = make_reply(reply, 0xa3, TH_FLOW_HOLD_QUEUE * 1448 + 96);
	end = c.seq + (uint32_t)n;
	seg(&c, call, 0, 1448, 200);
	for (off = 0; off < r3; off += 1448)
		reply_seg(&c, reply, 5000 + (uint32_t)(r + r2), off,
			r3 - off < 1448 ? r3 - off : 1448, end, 210 + off);
	assert_int_equal(c.seen.n, 6);
	assert_int_equal(c.seen.xid[4], 0xa3); /* the call first, cut */
	assert_int_equal(c.seen.dir[4], c.seen.dir[0]);
	assert_int_equal(c.seen.last_ns[4], 200);
	assert_int_equal(c.seen.xid[5], 0xa3);
	assert_int_equal(c.seen.wire_size[5], r3 - 4);
	assert_int_equal(k->segments_held_ack, 5 + TH_FLOW_HOLD_QUEUE);
	assert_int_equal(k->segments_ack_reordered, 2);
	assert_int_equal(k->gaps_payload, 2);
	assert_int_equal(k->gaps_lost, 0);
	conn_fini(&c);
}

/* A copy of the held segment (mirror ports send some twice) does not give up its hole. */
static void
test_copy_of_held_segment_keeps_waiting(void **state)
{
	static uint8_t buf[8192];
	size_t n;
	struct conn c;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0x93, 3000);
	seg(&c, buf, 0, 1448, 10);
	seg(&c, buf, 2896, n - 2896, 20);
	seg(&c, buf, 2896, n - 2896, 21); /* the same segment again */
	assert_int_equal(c.seen.n, 0);
	seg(&c, buf, 1448, 1448, 30);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.wire_size[0], n - 4);
	assert_int_equal(th_flow_table_counters(c.t)->segments_reordered, 1);
	assert_int_equal(th_flow_table_counters(c.t)->segments_retrans, 1);
	assert_int_equal(th_flow_table_counters(c.t)->gaps_payload, 0);
	conn_fini(&c);
}

/*
 * Part of a hole filled late, the rest lost: the hole is a gap, not a repair, and a record
 * that the late segment begins and the held one ends does not end before it starts.
 */
static void
test_partly_filled_hole(void **state)
{
	static uint8_t buf[8192];
	size_t a, b;
	struct conn c;

	(void)state;
	conn_init(&c);
	a = make_call(buf, 0x94, 2000);
	b = make_call(buf + a, 0x95, 2000);
	seg(&c, buf, 0, 1000, 10);
	seg(&c, buf, a + 1000, b - 1000, 20); /* held: the second call's end */
	seg(&c, buf, a, 1000, 30);            /* the second call's start; a..1000 .. a lost */
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.xid[1], 0x95);
	assert_true(c.seen.last_ns[1] >= c.seen.first_ns[1]);
	assert_int_equal(th_flow_table_counters(c.t)->segments_reordered, 0);
	conn_fini(&c);
}

/*
 * A late segment begins a call (t=30) whose later bytes were held (t=20): the held bytes go in
 * at their own, earlier time, and the reply (t=40) finishes the call at a time the capture
 * saw (30), not at one before its start or seconds after it.
 */
static void
test_answered_call_after_older_held_bytes(void **state)
{
	static uint8_t buf[16384];
	size_t a;
	struct conn c;

	(void)state;
	conn_init(&c);
	a = make_call(buf, 0xa0, 12);
	(void)make_call(buf + a, 0xb1, 8000);
	seg(&c, buf, 0, a, 10);
	seg(&c, buf, a + 1000, 1000, 20); /* held */
	seg(&c, buf, a, 500, 30);         /* 0xb1 begins; a+500..a+1000 lost */
	assert_int_equal(c.seen.n, 1);
	send_reply(&c, 0xb1, 40);
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(c.seen.xid[1], 0xb1);
	assert_int_equal(c.seen.first_ns[1], 30);
	assert_int_equal(c.seen.last_ns[1], 30);
	conn_fini(&c);
}

/* A record whose last segments never come is counted where it was left: at the end, or aged. */
static unsigned int whole_asks; /* records offered to want_all() */

static bool
want_all(void *ctx, const struct th_flow_key *key, int dir, const uint8_t *rec, uint32_t size)
{
	(void)ctx;
	(void)key;
	(void)dir;
	(void)rec;
	assert_int_equal(size, TH_FLOW_PREFIX);
	whole_asks++;
	return true;
}

/* Send record @p rec (@p n bytes, at @p off in the stream) in segments of 1000 bytes. */
static void
seg_split(struct conn *c, const uint8_t *stream, size_t off, size_t n, uint64_t ns)
{
	for (size_t i = 0; i < n; i += 1000)
		seg(c, stream, off + i, n - i < 1000 ? n - i : 1000, ns);
}

/*
 * Records kept whole borrow the table's one buffer and give it back however
 * they end: delivered, cut by its size, cut by a gap, lost to a gap.
 */
static void
test_whole_records_give_their_buffer_back(void **state)
{
	struct conn c;
	uint8_t *s = calloc(1, 32768);
	size_t a, b, cc, dd, ee, ff, gg, at;
	const struct th_flow_counters *k;

	(void)state;
	assert_non_null(s);
	conn_init(&c);
	k = th_flow_table_counters(c.t);
	assert_int_equal(th_flow_table_set_whole(c.t, 0, 4096, want_all), -EINVAL);
	assert_int_equal(
		th_flow_table_set_whole(c.t, TH_FLOW_WHOLE_MAX + 1, 4096, want_all), -EINVAL);
	assert_int_equal(th_flow_table_set_whole(c.t, 1, TH_FLOW_PREFIX, want_all), -EINVAL);
	assert_int_equal(th_flow_table_set_whole(c.t, 1, 4096, NULL), -EINVAL);
	assert_int_equal(th_flow_table_set_whole(c.t, 1, 4096, want_all), 0);
	assert_int_equal(th_flow_table_set_whole(c.t, 1, 4096, want_all), -EINVAL);
	whole_asks = 0;
	a = make_call(s, 1, 3000);
	b = make_call(s + a, 2, 5000);
	cc = make_call(s + a + b, 3, 3000);
	dd = make_call(s + a + b + cc, 4, 3000);
	ee = make_call(s + a + b + cc + dd, 5, 3000);
	ff = make_call(s + a + b + cc + dd + ee, 6, 3000);
	gg = make_call(s + a + b + cc + dd + ee + ff, 7, 3000);

	seg_split(&c, s, 0, a, 10);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.size[0], a - 4); /* whole, not the prefix */
	seg_split(&c, s, a, b, 20);
	assert_int_equal(c.seen.size[1], 4096); /* cut at the buffer's size */
	assert_int_equal(c.seen.wire_size[1], b - 4);
	assert_int_equal(k->whole_cut_size, 1);

	/* C loses its end to a gap (stepped over: cut there); D comes whole. */
	at = a + b;
	seg(&c, s, at, 2000, 30);
	seg_split(&c, s, at + cc, dd, 40);
	assert_int_equal(c.seen.n, 4);
	assert_int_equal(c.seen.size[2], 2000 - 4);
	assert_int_equal(c.seen.size[3], dd - 4);
	assert_int_equal(k->whole_cut_gap, 1);

	/* E is lost to a gap that takes F's start; G is found by hunting, and kept whole. */
	at += cc + dd;
	seg(&c, s, at, 2000, 50);
	seg(&c, s, at + ee + 10, ff - 10, 60);
	seg_split(&c, s, at + ee + ff, gg, 70);
	assert_int_equal(k->records_lost_gap, 1);
	assert_int_equal(c.seen.n, 5);
	assert_int_equal(c.seen.xid[4], 7);
	assert_int_equal(c.seen.size[4], gg - 4);
	assert_int_equal(k->whole_cut_busy, 0);
	assert_int_equal(k->whole_records, 3); /* A D G: B and C were cut */
	assert_int_equal(whole_asks, 6); /* A B C D E G */

	/* A record in progress when its flow is forgotten gives the buffer back too. */
	seg(&c, s, at + ee + ff + gg, 2000, 80);
	th_flow_table_age(c.t, 10ull * 1000000000ull);
	assert_int_equal(th_flow_table_count(c.t), 0);
	c.seq = 100000;
	seg_split(&c, s, 0, a, 11ull * 1000000000ull);
	assert_int_equal(c.seen.size[5], a - 4);
	assert_int_equal(k->whole_cut_busy, 0);
	assert_true(th_flow_table_memory(c.t) > 4096);
	conn_fini(&c);
	free(s);
}

/*
 * "kept whole" counts the records that were: a record cut at the buffer's
 * size or by a gap is counted by its cut alone (the statistics print both,
 * and the README says the first counts the listings not cut).
 */
static void
test_whole_records_cut_are_not_whole(void **state)
{
	struct conn c;
	uint8_t *s = calloc(1, 32768);
	size_t a, b, cc;
	const struct th_flow_counters *k;

	(void)state;
	assert_non_null(s);
	conn_init(&c);
	k = th_flow_table_counters(c.t);
	assert_int_equal(th_flow_table_set_whole(c.t, 1, 4096, want_all), 0);
	a = make_call(s, 1, 5000);
	b = make_call(s + a, 2, 3000);
	cc = make_call(s + a + b, 3, 3000);
	seg_split(&c, s, 0, a, 10); /* cut at 4096 */
	seg(&c, s, a, 2000, 20);    /* cut by the gap after its first 2000 bytes */
	seg_split(&c, s, a + b, cc, 30);
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(k->whole_cut_size, 1);
	assert_int_equal(k->whole_cut_gap, 1);
	assert_int_equal(c.seen.size[2], cc - 4);
	assert_int_equal(k->whole_records, 1);
	conn_fini(&c);
	free(s);
}

static uint32_t asked_size; /* the bytes want_any() was last asked with */

/* Keep every record whole, however many of its bytes come before the question. */
static bool
want_any(void *ctx, const struct th_flow_key *key, int dir, const uint8_t *rec, uint32_t size)
{
	(void)ctx;
	(void)key;
	(void)dir;
	(void)rec;
	asked_size = size;
	whole_asks++;
	return true;
}

/*
 * A gap in the first TH_FLOW_PREFIX bytes of a record to keep whole cuts it
 * as one after them does: the record is counted as cut by a gap once its
 * bytes (seen or lost) pass the prefix, asked then with the bytes before the
 * gap. A record that ends within its prefix is never asked, gap or not.
 */
static void
test_whole_record_gap_in_prefix_is_a_cut(void **state)
{
	struct conn c;
	uint8_t *s = calloc(1, 32768);
	size_t a, b, cc, dd, at;
	const struct th_flow_counters *k;

	(void)state;
	assert_non_null(s);
	conn_init(&c);
	k = th_flow_table_counters(c.t);
	assert_int_equal(th_flow_table_set_whole(c.t, 1, 8192, want_any), 0);
	whole_asks = 0;
	a = make_call(s, 1, 3000);
	b = make_call(s + a, 2, 3000);
	cc = make_call(s + a + b, 3, 700);
	dd = make_call(s + a + b + cc, 4, 3000);

	/* A: bytes 500-699 lost; asked (with the 496 record bytes before them) at byte 1024. */
	seg(&c, s, 0, 500, 10);
	seg_split(&c, s, 700, a - 700, 20);
	assert_int_equal(c.seen.n, 1);
	assert_int_equal(c.seen.size[0], 500 - 4);
	assert_int_equal(c.seen.wire_size[0], a - 4);
	assert_int_equal(whole_asks, 1);
	assert_int_equal(asked_size, 500 - 4);
	assert_int_equal(k->whole_cut_gap, 1);

	/* B: the lost bytes themselves run past the prefix. */
	at = a;
	seg(&c, s, at, 300, 30);
	seg_split(&c, s, at + 2000, b - 2000, 40);
	assert_int_equal(c.seen.n, 2);
	assert_int_equal(c.seen.size[1], 300 - 4);
	assert_int_equal(asked_size, 300 - 4);
	assert_int_equal(k->whole_cut_gap, 2);

	/* C ends within its prefix: its gap is a TCP gap, no cut of a record to keep whole. */
	at += b;
	seg(&c, s, at, 300, 50);
	seg(&c, s, at + 400, 200, 60);
	seg(&c, s, at + 600, cc - 600, 70);
	assert_int_equal(c.seen.n, 3);
	assert_int_equal(whole_asks, 2);
	assert_int_equal(k->whole_cut_gap, 2);

	/* D: two gaps in its prefix; asked once. */
	at += cc;
	seg(&c, s, at, 200, 80);
	seg(&c, s, at + 300, 200, 90);
	seg(&c, s, at + 600, 200, 100);
	seg_split(&c, s, at + 800, dd - 800, 110);
	assert_int_equal(c.seen.n, 4);
	assert_int_equal(c.seen.size[3], 200 - 4);
	assert_int_equal(whole_asks, 3);
	assert_int_equal(k->whole_cut_gap, 3);

	assert_int_equal(k->gaps_payload, 5);
	assert_int_equal(k->whole_records, 0);
	assert_int_equal(k->whole_cut_size + k->whole_cut_busy, 0);
	conn_fini(&c);
	free(s);
}

static void
test_unfinished_records_are_counted(void **state)
{
	static uint8_t buf[8192];
	size_t n;
	struct conn c;
	uint32_t i;

	(void)state;
	conn_init(&c);
	n = make_call(buf, 0x77, 4000);
	seg(&c, buf, 0, 1448, 10); /* two of three segments */
	seg(&c, buf, 1448, 1448, 20);
	assert_int_equal(c.seen.n, 0);
	th_flow_table_finish(c.t);
	assert_int_equal(th_flow_table_counters(c.t)->records_unfinished, 1);
	assert_int_equal(th_flow_table_counters(c.t)->records_lost_idle, 0);
	/* Its connection idle past the table's second: aged, the record with it. */
	for (i = 0; i < 64; i++)
		th_flow_table_age(c.t, 5ull * 1000000000ull);
	assert_int_equal(th_flow_table_count(c.t), 0);
	assert_int_equal(th_flow_table_counters(c.t)->records_lost_idle, 1);
	/* A connection between records leaves nothing unfinished. */
	c.c2s.sport = 802;
	c.c2s.tcp_flags = TH_TCP_SYN;
	c.c2s.tcp_seq = c.seq - 1;
	th_flow_tcp_input(c.t, &c.c2s, NULL, 0, 0, 6000000000ull, true);
	c.c2s.tcp_flags = TH_TCP_ACK;
	seg(&c, buf, 0, n, 6000000001ull);
	assert_int_equal(c.seen.n, 1);
	th_flow_table_finish(c.t);
	assert_int_equal(th_flow_table_counters(c.t)->records_unfinished, 1);
	conn_fini(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_records_in_one_segment),
		cmocka_unit_test(test_record_across_segments_keeps_times),
		cmocka_unit_test(test_split_marker_and_byte_by_byte),
		cmocka_unit_test(test_multi_fragment_record),
		cmocka_unit_test(test_retransmission_is_trimmed),
		cmocka_unit_test(test_gap_in_payload_is_stepped_over),
		cmocka_unit_test(test_gap_across_boundary_resyncs_without_wrong_record),
		cmocka_unit_test(test_mid_stream_pickup),
		cmocka_unit_test(test_untracked_port_needs_a_record_start),
		cmocka_unit_test(test_impossible_marker_hunts),
		cmocka_unit_test(test_hunt_finds_record_inside_segment),
		cmocka_unit_test(test_hunt_inside_segment_is_careful_and_bounded),
		cmocka_unit_test(test_capture_cut_ends_record_in_time),
		cmocka_unit_test(test_table_is_bounded_and_evicts),
		cmocka_unit_test(test_unfinished_records_are_counted),
		cmocka_unit_test(test_swapped_segments_are_put_back_in_order),
		cmocka_unit_test(test_reply_finishes_a_call_missing_its_tail),
		cmocka_unit_test(test_reply_before_its_call_waits),
		cmocka_unit_test(test_retransmission_does_not_spoil_a_wait),
		cmocka_unit_test(test_reply_acknowledging_a_fin_does_not_wait),
		cmocka_unit_test(test_new_connection_lets_old_waits_go),
		cmocka_unit_test(test_reply_segments_before_call_tail_wait_together),
		cmocka_unit_test(test_copy_of_held_segment_keeps_waiting),
		cmocka_unit_test(test_partly_filled_hole),
		cmocka_unit_test(test_answered_call_after_older_held_bytes),
		cmocka_unit_test(test_whole_records_give_their_buffer_back),
		cmocka_unit_test(test_whole_records_cut_are_not_whole),
		cmocka_unit_test(test_whole_record_gap_in_prefix_is_a_cut),
	};

	return cmocka_run_group_tests_name("flow_stream", tests, NULL, NULL);
}
