/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The per-lcore decode pipeline (lib/decode), end to end: hand-built
 * Ethernet/IPv4/UDP and TCP frames in, ops and counters out.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xdr_build.h"

#include "th_decode.h"

#define SEC 1000000000ull
#define T0 1700000000000000000ull
#define MAX_OPS 64

/* ---- Collecting ops ---- */

struct sink {
	unsigned count;
	struct th_op ops[MAX_OPS];
	char lines[MAX_OPS][512];
};

static void
on_op(void *ctx, const struct th_op *op)
{
	struct sink *s = ctx;

	assert_true(s->count < MAX_OPS);
	s->ops[s->count] = *op;
	th_op_format(op, s->lines[s->count], sizeof(s->lines[0]));
	s->count++;
}

struct fixture {
	struct th_decode *d;
	struct sink *s;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct th_decode_config cfg;

	if (f == NULL)
		return -1;
	f->s = calloc(1, sizeof(*f->s));
	th_decode_config_defaults(&cfg);
	cfg.flows = 64;
	cfg.calls = 256;
	cfg.call_timeout_ns = 10 * SEC;
	f->d = th_decode_create(&cfg, on_op, f->s);
	if (f->s == NULL || f->d == NULL)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	th_decode_free(f->d);
	free(f->s);
	free(f);
	return 0;
}

/* ---- Messages ---- */

/* With TCP, an RPC record: last-fragment marker in front. */
static void
put_marker(struct xb *x, uint32_t size)
{
	put32(x, 0x80000000u | size);
}

static const uint8_t FH[8] = {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1};

static void
rpc_call(struct xb *x, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct xb cred = {.n = 0};

	put32(&cred, 0);
	put_opaque(&cred, "client1", 7);
	put32(&cred, 1000);
	put32(&cred, 100);
	put32(&cred, 0);
	put32(x, xid);
	put32(x, 0);
	put32(x, 2);
	put32(x, prog);
	put32(x, vers);
	put32(x, proc);
	put32(x, 1); /* AUTH_SYS */
	put_opaque(x, cred.b, (uint32_t)cred.n);
	put32(x, 0);
	put32(x, 0);
}

static void
rpc_reply(struct xb *x, uint32_t xid)
{
	put32(x, xid);
	put32(x, 1);
	put32(x, 0);
	put32(x, 0);
	put32(x, 0);
	put32(x, 0); /* SUCCESS */
}

static void
getattr_call(struct xb *x, uint32_t xid)
{
	rpc_call(x, xid, TH_PROG_NFS, 3, TH_NFS3_GETATTR);
	put_opaque(x, FH, sizeof(FH));
}

static void
getattr_reply(struct xb *x, uint32_t xid, uint64_t size)
{
	rpc_reply(x, xid);
	put32(x, 0);    /* NFS3_OK */
	put32(x, 1);    /* NF3REG */
	put32(x, 0644); /* mode */
	put32(x, 1);    /* nlink */
	put32(x, 1000); /* uid */
	put32(x, 100);  /* gid */
	put32(x, (uint32_t)(size >> 32));
	put32(x, (uint32_t)size);
	put32(x, 0); /* used */
	put32(x, 0);
	put32(x, 0); /* rdev */
	put32(x, 0);
	put32(x, 0); /* fsid */
	put32(x, 1);
	put32(x, 0); /* fileid */
	put32(x, 4242);
	put32(x, 1690000000); /* atime */
	put32(x, 0);
	put32(x, 1690000001); /* mtime */
	put32(x, 5);
	put32(x, 1690000002); /* ctime */
	put32(x, 0);
}

/* ---- Frame builder: Ethernet II, IPv4 (no options), UDP or TCP ---- */

struct ep {
	uint8_t ip[4];
	uint16_t port;
};

static const struct ep CLIENT = {{10, 0, 0, 1}, 800};
static const struct ep SERVER = {{10, 0, 0, 2}, 2049};

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

/* Returns the frame length; l4 is the UDP or TCP header already filled. */
static size_t
ipv4_frame(uint8_t *f, const struct ep *src, const struct ep *dst, uint8_t proto, const uint8_t *l4,
	size_t l4_size, const void *payload, size_t size)
{
	uint8_t *ip = f + 14;
	uint32_t sum = 0;
	size_t i;

	memset(f, 0, 14);
	f[0] = 0x02;
	f[5] = 0x02;
	f[6] = 0x02;
	f[11] = 0x01;
	wr16(f + 12, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	wr16(ip + 2, (uint16_t)(20 + l4_size + size));
	wr16(ip + 4, 0x1234);
	wr16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, src->ip, 4);
	memcpy(ip + 16, dst->ip, 4);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	wr16(ip + 10, (uint16_t)~sum);
	memcpy(ip + 20, l4, l4_size);
	if (size > 0)
		memcpy(ip + 20 + l4_size, payload, size);
	return 14 + 20 + l4_size + size;
}

static size_t
udp_frame(uint8_t *f, const struct ep *src, const struct ep *dst, const void *payload, size_t size)
{
	uint8_t h[8] = {0};

	wr16(h, src->port);
	wr16(h + 2, dst->port);
	wr16(h + 4, (uint16_t)(8 + size));
	return ipv4_frame(f, src, dst, 17, h, sizeof(h), payload, size);
}

static size_t
tcp_frame(uint8_t *f, const struct ep *src, const struct ep *dst, uint32_t seq, uint32_t ack,
	uint8_t flags, const void *payload, size_t size)
{
	uint8_t h[20] = {0};

	wr16(h, src->port);
	wr16(h + 2, dst->port);
	wr32(h + 4, seq);
	wr32(h + 8, ack);
	h[12] = 5 << 4;
	h[13] = flags;
	wr16(h + 14, 65535);
	return ipv4_frame(f, src, dst, 6, h, sizeof(h), payload, size);
}

static void
send_udp(struct th_decode *d, const struct ep *src, const struct ep *dst, const struct xb *x,
	uint64_t ts)
{
	uint8_t f[2048];
	size_t n = udp_frame(f, src, dst, x->b, x->n);

	th_decode_frame(d, f, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, ts);
}

static void
send_tcp(struct th_decode *d, const struct ep *src, const struct ep *dst, uint32_t seq,
	uint32_t ack, uint8_t flags, const void *payload, size_t size, uint64_t ts)
{
	uint8_t f[2048];
	size_t n = tcp_frame(f, src, dst, seq, ack, flags, payload, size);

	th_decode_frame(d, f, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, ts);
}

static bool
addr_is(const struct th_addr *a, const struct ep *e)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	return memcmp(a->b, mapped, 12) == 0 && memcmp(a->b + 12, e->ip, 4) == 0;
}

/* ---- A TCP connection: records each way, with sequence numbers kept ---- */

enum tcp_dir {
	TO_SERVER, /* calls */
	TO_CLIENT, /* replies */
};

struct tcp_conn {
	struct th_decode *d;
	const struct ep *client;
	const struct ep *server;
	uint32_t seq[2]; /* next byte each way, by enum tcp_dir */
};

/* Frame @p msg as a TCP record: last-fragment marker, then the message. */
static void
tcp_record(struct xb *rec, const struct xb *msg)
{
	memset(rec, 0, sizeof(*rec));
	put_marker(rec, (uint32_t)msg->n);
	memcpy(rec->b + rec->n, msg->b, msg->n);
	rec->n += msg->n;
}

/* One GETATTR call or reply as a TCP record. */
static void
tcp_getattr(struct xb *rec, uint32_t xid, bool is_reply)
{
	struct xb m = {.n = 0};

	if (is_reply)
		getattr_reply(&m, xid, 1);
	else
		getattr_call(&m, xid);
	tcp_record(rec, &m);
}

/* The handshake, at @p ts, ts + 10 and ts + 20; the SYNs carry @p cisn and @p sisn. */
static void
tcp_open(struct tcp_conn *c, struct th_decode *d, const struct ep *client, const struct ep *server,
	uint32_t cisn, uint32_t sisn, uint64_t ts)
{
	c->d = d;
	c->client = client;
	c->server = server;
	c->seq[TO_SERVER] = cisn + 1;
	c->seq[TO_CLIENT] = sisn + 1;
	send_tcp(d, client, server, cisn, 0, TH_TCP_SYN, NULL, 0, ts);
	send_tcp(d, server, client, sisn, cisn + 1, TH_TCP_SYN | TH_TCP_ACK, NULL, 0, ts + 10);
	send_tcp(d, client, server, cisn + 1, sisn + 1, TH_TCP_ACK, NULL, 0, ts + 20);
}

/* The next @p size bytes of @p dir in one segment, acknowledging all the other way. */
static void
tcp_segment(struct tcp_conn *c, enum tcp_dir dir, const void *p, size_t size, uint64_t ts)
{
	const struct ep *src = dir == TO_SERVER ? c->client : c->server;
	const struct ep *dst = dir == TO_SERVER ? c->server : c->client;

	send_tcp(c->d, src, dst, c->seq[dir], c->seq[!dir], TH_TCP_ACK, p, size, ts);
	c->seq[dir] += (uint32_t)size;
}

/* A GETATTR call (to the server) or reply (to the client), whole in one segment. */
static void
tcp_send(struct tcp_conn *c, uint32_t xid, bool is_reply, uint64_t ts)
{
	struct xb rec;

	tcp_getattr(&rec, xid, is_reply);
	tcp_segment(c, is_reply ? TO_CLIENT : TO_SERVER, rec.b, rec.n, ts);
}

/* The segment that would have carried this call or reply is not in the capture. */
static void
tcp_skip(struct tcp_conn *c, uint32_t xid, bool is_reply)
{
	struct xb rec;

	tcp_getattr(&rec, xid, is_reply);
	c->seq[is_reply ? TO_CLIENT : TO_SERVER] += (uint32_t)rec.n;
}

/* ---- Tests ---- */

static void
test_udp_getattr_matched(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0};
	const struct th_op *op;

	getattr_call(&call, 0x11111111);
	getattr_reply(&reply, 0x11111111, 8192);
	send_udp(f->d, &CLIENT, &SERVER, &call, T0);
	assert_int_equal(f->s->count, 0);
	send_udp(f->d, &SERVER, &CLIENT, &reply, T0 + 123456);

	assert_int_equal(f->s->count, 1);
	op = &f->s->ops[0];
	assert_int_equal(op->kind, TH_OP_MATCHED);
	assert_int_equal(op->transport, TH_PKT_L4_UDP);
	assert_int_equal(op->xid, 0x11111111);
	assert_int_equal(op->prog, TH_PROG_NFS);
	assert_int_equal(op->vers, 3);
	assert_int_equal(op->proc, TH_NFS3_GETATTR);
	assert_true(addr_is(&op->client, &CLIENT));
	assert_true(addr_is(&op->server, &SERVER));
	assert_int_equal(op->client_port, 800);
	assert_int_equal(op->server_port, 2049);
	assert_int_equal(op->uid, 1000);
	assert_string_equal(op->machine, "client1");
	assert_int_equal(op->call.fh.len, sizeof(FH));
	assert_true(op->reply.attr.is_present);
	assert_int_equal(op->reply.attr.size, 8192);
	assert_int_equal(op->reply.attr.fileid, 4242);
	assert_true(op->call_first_ns == T0);
	assert_true(op->reply_first_ns == T0 + 123456);
	assert_non_null(strstr(f->s->lines[0], " RPC udp 10.0.0.1:800 10.0.0.2:2049 0x11111111"
					       " NFS3 GETATTR OK 123.456 123.456 uid=1000"));

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.udp_datagrams, 2);
	assert_int_equal(st.rpc_calls, 1);
	assert_int_equal(st.rpc_replies, 1);
	assert_int_equal(st.ops_matched, 1);
	assert_int_equal(st.ops_call_only, 0);
	assert_int_equal(st.ops_reply_only, 0);
	assert_int_equal(st.not_rpc, 0);
	assert_int_equal(st.xid.matched, 1);
	assert_int_equal(st.calls[TH_DECODE_PROG_NFS3][TH_NFS3_GETATTR], 1);

	/* Matched calls leave the table: flushing finds nothing more. */
	th_decode_flush(f->d);
	assert_int_equal(f->s->count, 1);
}

/* One IPv4 fragment of the UDP datagram @p dgram (UDP header included) from @p off. */
static void
send_ipv4_fragment(struct th_decode *d, const struct ep *src, const struct ep *dst, uint16_t id,
	const uint8_t *dgram, size_t off, size_t size, bool is_last, uint64_t ts)
{
	uint8_t f[2048];
	size_t n = ipv4_frame(f, src, dst, 17, dgram + off, size, NULL, 0);

	wr16(f + 14 + 4, id);
	wr16(f + 14 + 6, (uint16_t)((is_last ? 0 : 0x2000) | off / 8));
	wr16(f + 14 + 10, 0); /* the checksum is not checked */
	th_decode_frame(d, f, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, ts);
}

/*
 * Two 2000-byte UDP WRITEs from two clients, their IP fragments interleaved (as a switch
 * merges two ports): each call lasts until its own last fragment, so LAT_LAST is exact. Their
 * IP ids (0x1234 from 10.0.0.1, 0x85 from 10.0.0.3) once fell in one direct-mapped slot, and
 * the second call pushed the first out: its LAT_LAST was taken from its first fragment.
 */
static void
test_udp_fragmented_calls_interleaved(void **state)
{
	static const struct ep client2 = {{10, 0, 0, 3}, 801};
	static const uint16_t ids[2] = {0x1234, 0x85};
	const struct ep *clients[2] = {&CLIENT, &client2};
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[2][2100];
	struct xb call, reply;
	size_t size = 0;

	for (int i = 0; i < 2; i++) {
		call.n = 0;
		rpc_call(&call, 0x5000 + (uint32_t)i, TH_PROG_NFS, 3, TH_NFS3_WRITE);
		put_opaque(&call, FH, sizeof(FH));
		put64(&call, 0);    /* offset */
		put32(&call, 1800); /* count */
		put32(&call, 0);    /* UNSTABLE */
		put32(&call, 1800);
		memset(call.b + call.n, 0x5a, 1800);
		call.n += 1800;
		size = 8 + call.n;
		assert_true(size <= sizeof(dgram[i]) && size > 1480);
		wr16(dgram[i], clients[i]->port);
		wr16(dgram[i] + 2, SERVER.port);
		wr16(dgram[i] + 4, (uint16_t)size);
		wr16(dgram[i] + 6, 0);
		memcpy(dgram[i] + 8, call.b, call.n);
	}
	for (int i = 0; i < 2; i++)
		send_ipv4_fragment(f->d, clients[i], &SERVER, ids[i], dgram[i], 0, 1480, false,
			T0 + (uint64_t)i * 1000);
	for (int i = 0; i < 2; i++)
		send_ipv4_fragment(f->d, clients[i], &SERVER, ids[i], dgram[i], 1480, size - 1480,
			true, T0 + 2000 + (uint64_t)i * 1000);
	for (int i = 0; i < 2; i++) {
		reply.n = 0;
		rpc_reply(&reply, 0x5000 + (uint32_t)i);
		put32(&reply, 28); /* NFS3ERR_NOSPC */
		put32(&reply, 0);  /* no wcc before */
		put32(&reply, 0);  /* nor after */
		send_udp(f->d, &SERVER, clients[i], &reply, T0 + 100000 + (uint64_t)i * 10000);
	}
	assert_int_equal(f->s->count, 2);
	for (int i = 0; i < 2; i++) {
		const struct th_op *op = &f->s->ops[i];

		assert_int_equal(op->xid, 0x5000 + (uint32_t)i);
		assert_int_equal(op->kind, TH_OP_MATCHED);
		assert_true(op->call_first_ns == T0 + (uint64_t)i * 1000);
		assert_true(op->call_last_ns == T0 + 2000 + (uint64_t)i * 1000);
	}
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_displaced, 0);
}

/*
 * One IPv6 fragment (fragment header, then the datagram's bytes from @p off) of a UDP
 * datagram from fd00::1 to fd00::2.
 */
static void
send_ipv6_fragment(struct th_decode *d, uint32_t id, const uint8_t *dgram, size_t off, size_t size,
	bool is_last, uint64_t ts)
{
	uint8_t f[2048], *ip = f + 14, *fh = ip + 40;
	size_t n = 14 + 40 + 8 + size;

	memset(f, 0, 14 + 40 + 8);
	f[0] = 0x02;
	f[5] = 0x02;
	f[6] = 0x02;
	f[11] = 0x01;
	wr16(f + 12, 0x86dd);
	ip[0] = 0x60;
	wr16(ip + 4, (uint16_t)(8 + size));
	ip[6] = 44; /* a fragment header follows */
	ip[7] = 64;
	ip[8] = 0xfd;
	ip[23] = 1;
	ip[24] = 0xfd;
	ip[39] = 2;
	fh[0] = 17;
	wr16(fh + 2, (uint16_t)(off | (is_last ? 0 : 1))); /* off is a multiple of 8 */
	wr32(fh + 4, id);
	memcpy(fh + 8, dgram + off, size);
	th_decode_frame(d, f, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, ts);
}

/*
 * Two UDP WRITEs of the same bytes at the same offset over IPv6, back to back: their later
 * fragments differ only in the fragment header's identification. The copy filter hashed
 * IPv6's fixed header and the data after the fragment header, not the identification, so
 * the second datagram's last fragment was taken for a copy of the first's and dropped: its
 * call ended at its first fragment (gen --ipv6-share 1 --udp-share 1 -m data: 17 of 200
 * RPCs with a server time 27 us too long, "last fragment did not come").
 */
static void
test_udp_ipv6_fragments_same_data(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[2][2100];
	struct xb call;
	size_t size = 0;

	for (int i = 0; i < 2; i++) {
		call.n = 0;
		rpc_call(&call, 0x6000 + (uint32_t)i, TH_PROG_NFS, 3, TH_NFS3_WRITE);
		put_opaque(&call, FH, sizeof(FH));
		put64(&call, 0);    /* offset */
		put32(&call, 1800); /* count */
		put32(&call, 0);    /* UNSTABLE */
		put32(&call, 1800);
		memset(call.b + call.n, 0, 1800);
		call.n += 1800;
		size = 8 + call.n;
		assert_true(size <= sizeof(dgram[i]) && size > 1448);
		wr16(dgram[i], CLIENT.port);
		wr16(dgram[i] + 2, SERVER.port);
		wr16(dgram[i] + 4, (uint16_t)size);
		wr16(dgram[i] + 6, 0);
		memcpy(dgram[i] + 8, call.b, call.n);
	}
	for (int i = 0; i < 2; i++) {
		uint64_t t = T0 + (uint64_t)i * 200000;

		send_ipv6_fragment(f->d, 0xd0ef + (uint32_t)i, dgram[i], 0, 1448, false, t);
		send_ipv6_fragment(
			f->d, 0xd0ef + (uint32_t)i, dgram[i], 1448, size - 1448, true, t + 100000);
	}
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frames_copied, 0);
	th_decode_flush(f->d);
	assert_int_equal(f->s->count, 2);
	for (int i = 0; i < 2; i++) {
		const struct th_op *op = &f->s->ops[i];

		assert_int_equal(op->xid, 0x6000 + (uint32_t)i);
		assert_true(op->call_first_ns == T0 + (uint64_t)i * 200000);
		assert_true(op->call_last_ns == T0 + (uint64_t)i * 200000 + 100000);
	}
}

/* The set decode.c's frag_set_of() follows a client's datagram @p id in. */
static uint32_t
frag_set(const struct ep *src, uint16_t id)
{
	uint32_t h = id * 0x9e3779b1u;

	h ^= (uint32_t)src->ip[3] << 8 | src->ip[2];
	return (h ^ (h >> 16)) & 255;
}

/*
 * A fragmented call whose last fragment never comes is counted when its way is taken a second
 * later, or when the capture ends; only one still in flight counts as pushed out.
 */
static void
test_udp_fragment_never_finished(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[6][2000];
	uint16_t ids[6];
	unsigned int n = 0;

	/* Six datagrams of one set of four ways, each a call of its own. */
	for (uint32_t id = 1; n < 6; id++)
		if (frag_set(&CLIENT, (uint16_t)id) == frag_set(&CLIENT, 1))
			ids[n++] = (uint16_t)id;
	for (unsigned int i = 0; i < 6; i++) {
		struct xb call = {.n = 0};

		rpc_call(&call, 0x6000 + i, TH_PROG_NFS, 3, TH_NFS3_WRITE);
		memset(dgram[i], 0, sizeof(dgram[i]));
		wr16(dgram[i], CLIENT.port);
		wr16(dgram[i] + 2, SERVER.port);
		wr16(dgram[i] + 4, 1900);
		memcpy(dgram[i] + 8, call.b, call.n);
	}
	for (unsigned int i = 0; i < 4; i++)
		send_ipv4_fragment(
			f->d, &CLIENT, &SERVER, ids[i], dgram[i], 0, 1480, false, T0 + i * 1000);
	/* A fifth in flight pushes the oldest out; a second later, one takes a late way. */
	send_ipv4_fragment(f->d, &CLIENT, &SERVER, ids[4], dgram[4], 0, 1480, false, T0 + 5000);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_displaced, 1);
	assert_int_equal(st.frags_unfinished, 0);
	send_ipv4_fragment(f->d, &CLIENT, &SERVER, ids[5], dgram[5], 0, 1480, false, T0 + 2 * SEC);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_displaced, 1);
	assert_int_equal(st.frags_unfinished, 1);
	/* The end of the capture: the four still followed never finished. */
	th_decode_flush(f->d);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_unfinished, 5);
}

/* ---- IP fragments that come before their first ---- */

#define DGRAM_SIZE 3200 /* three IPv4 fragments: 1480 + 1480 + 240 bytes */

/* A fragmented UDP datagram from @p src to @p dst: its UDP header, @p msg, zeros to the end. */
static void
frag_dgram(
	uint8_t dgram[DGRAM_SIZE], const struct ep *src, const struct ep *dst, const struct xb *msg)
{
	assert_true(8 + msg->n <= DGRAM_SIZE);
	memset(dgram, 0, DGRAM_SIZE);
	wr16(dgram, src->port);
	wr16(dgram + 2, dst->port);
	wr16(dgram + 4, DGRAM_SIZE);
	memcpy(dgram + 8, msg->b, msg->n);
}

/* Fragment @p i (0, 1 or 2, the last) of a DGRAM_SIZE datagram, at @p ts. */
static void
send_frag_of3(struct th_decode *d, const struct ep *src, const struct ep *dst, uint16_t id,
	const uint8_t *dgram, int i, uint64_t ts)
{
	size_t off = (size_t)i * 1480;

	send_ipv4_fragment(
		d, src, dst, id, dgram, off, i == 2 ? DGRAM_SIZE - off : 1480, i == 2, ts);
}

/* A WRITE call of @p xid in a fragmented datagram. */
static void
write_call_dgram(uint8_t dgram[DGRAM_SIZE], uint32_t xid)
{
	struct xb call = {.n = 0};

	rpc_call(&call, xid, TH_PROG_NFS, 3, TH_NFS3_WRITE);
	put_opaque(&call, FH, sizeof(FH));
	put64(&call, 0);  /* offset */
	put32(&call, 16); /* count */
	put32(&call, 0);  /* UNSTABLE */
	put32(&call, 16);
	memset(call.b + call.n, 0x5a, 16);
	call.n += 16;
	frag_dgram(dgram, &CLIENT, &SERVER, &call);
}

/* Its reply, NFS3ERR_NOSPC, alone in a frame. */
static void
send_write_reply(struct th_decode *d, uint32_t xid, uint64_t ts)
{
	struct xb reply = {.n = 0};

	rpc_reply(&reply, xid);
	put32(&reply, 28); /* NFS3ERR_NOSPC */
	put32(&reply, 0);  /* no wcc before */
	put32(&reply, 0);  /* nor after */
	send_udp(d, &SERVER, &CLIENT, &reply, ts);
}

/*
 * A UDP WRITE whose fragments came last first, then one whose middle came first: each call
 * starts at its earliest fragment and ends at its latest, and neither waits for a last
 * fragment that passed. The call was timed from its header fragment (TIME and LAT_FIRST
 * 200 us late), its end missed the fragments before, and after a second it was counted as
 * "last fragment did not come".
 */
static void
test_udp_call_fragments_before_first(void **state)
{
	static const int order[2][3] = {{2, 1, 0}, {1, 0, 2}};
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[DGRAM_SIZE];

	for (int c = 0; c < 2; c++) {
		uint64_t t = T0 + (uint64_t)c * SEC / 10;

		write_call_dgram(dgram, 0x7000 + (uint32_t)c);
		for (int k = 0; k < 3; k++)
			send_frag_of3(f->d, &CLIENT, &SERVER, (uint16_t)(0x300 + c), dgram,
				order[c][k], t + (uint64_t)k * 100000);
		send_write_reply(f->d, 0x7000 + (uint32_t)c, t + 1000000);
	}
	assert_int_equal(f->s->count, 2);
	/* Last first: the header fragment is the latest. */
	assert_true(f->s->ops[0].call_first_ns == T0);
	assert_true(f->s->ops[0].call_last_ns == T0 + 200000);
	assert_non_null(strstr(f->s->lines[0], " NFS3 WRITE NOSPC 1000.000 800.000"));
	/* Middle first: the last fragment, after the header, still ends the call. */
	assert_true(f->s->ops[1].call_first_ns == T0 + SEC / 10);
	assert_true(f->s->ops[1].call_last_ns == T0 + SEC / 10 + 200000);
	th_decode_flush(f->d);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_early, 2);
	assert_int_equal(st.frags_early_lost, 0);
	assert_int_equal(st.frags_unfinished, 0);
	assert_int_equal(st.frags_displaced, 0);
}

/*
 * A fragmented reply whose header fragment came last, then one whose middle came first: the
 * reply starts at its earliest fragment. It was timed from its header fragment, overstating
 * the server's latency (300 us where tshark reads 100 us).
 */
static void
test_udp_reply_fragments_before_first(void **state)
{
	static const int order[2][3] = {{2, 1, 0}, {1, 0, 2}};
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[DGRAM_SIZE];

	for (int c = 0; c < 2; c++) {
		uint64_t t = T0 + (uint64_t)c * SEC / 10;
		struct xb call = {.n = 0}, reply = {.n = 0};

		rpc_call(&call, 0x7100 + (uint32_t)c, TH_PROG_NFS, 3, TH_NFS3_GETATTR);
		put_opaque(&call, FH, sizeof(FH));
		send_udp(f->d, &CLIENT, &SERVER, &call, t);
		rpc_reply(&reply, 0x7100 + (uint32_t)c);
		put32(&reply, 5); /* NFS3ERR_IO, then zeros */
		frag_dgram(dgram, &SERVER, &CLIENT, &reply);
		for (int k = 0; k < 3; k++)
			send_frag_of3(f->d, &SERVER, &CLIENT, (uint16_t)(0x400 + c), dgram,
				order[c][k], t + 100000 + (uint64_t)k * 100000);
	}
	assert_int_equal(f->s->count, 2);
	for (int c = 0; c < 2; c++) {
		const struct th_op *op = &f->s->ops[c];
		uint64_t t = T0 + (uint64_t)c * SEC / 10;

		assert_int_equal(op->kind, TH_OP_MATCHED);
		assert_true(op->reply_first_ns == t + 100000);
		assert_non_null(strstr(f->s->lines[c], " NFS3 GETATTR IO 100.000 100.000"));
	}
	/* Last first: the reply ends at its header fragment. */
	assert_true(f->s->ops[0].reply_last_ns == T0 + 300000);
	th_decode_flush(f->d);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_early, 2);
	assert_int_equal(st.frags_unfinished, 0);
}

/* @p n IP ids from @p src after @p from whose datagrams fall in the set of @p from's. */
static void
ids_in_set(const struct ep *src, uint16_t from, uint16_t *ids, unsigned int n)
{
	unsigned int k = 0;

	for (uint32_t id = from + 1u; k < n; id++)
		if (frag_set(src, (uint16_t)id) == frag_set(src, from))
			ids[k++] = (uint16_t)id;
}

/*
 * Fragments before their first take a free way or the oldest such, never one that follows a
 * call: four calls in flight in one set still end at their last fragments, and a sixth
 * datagram come before its first pushes out the fifth's (counted as forgotten).
 */
static void
test_udp_early_fragments_never_push_out_calls(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[DGRAM_SIZE];
	uint16_t ids[7];

	ids[0] = 1;
	ids_in_set(&CLIENT, 1, ids + 1, 6);
	for (unsigned int i = 0; i < 4; i++) {
		write_call_dgram(dgram, 0x7200 + i);
		send_frag_of3(f->d, &CLIENT, &SERVER, ids[i], dgram, 0, T0 + i * 1000);
	}
	/* Three datagrams whose last fragments come first; no way is free. */
	write_call_dgram(dgram, 0x7300);
	for (unsigned int i = 4; i < 7; i++)
		send_frag_of3(f->d, &CLIENT, &SERVER, ids[i], dgram, 2, T0 + 10000 + i * 1000);
	for (unsigned int i = 0; i < 4; i++) {
		write_call_dgram(dgram, 0x7200 + i);
		send_frag_of3(f->d, &CLIENT, &SERVER, ids[i], dgram, 1, T0 + 20000 + i * 1000);
		send_frag_of3(f->d, &CLIENT, &SERVER, ids[i], dgram, 2, T0 + 30000 + i * 1000);
		send_write_reply(f->d, 0x7200 + i, T0 + 100000 + i * 1000);
	}
	assert_int_equal(f->s->count, 4);
	for (unsigned int i = 0; i < 4; i++)
		assert_true(f->s->ops[i].call_last_ns == T0 + 30000 + i * 1000);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_displaced, 0);
	assert_int_equal(st.frags_early_lost, 0);

	/*
	 * The ways are free again (10 ms later: not copies of the frames before): the three
	 * take three, a fourth the last, a fifth pushes out the oldest.
	 */
	for (unsigned int i = 4; i < 7; i++)
		send_frag_of3(f->d, &CLIENT, &SERVER, ids[i], dgram, 2, T0 + 10000000 + i * 1000);
	send_frag_of3(f->d, &CLIENT, &SERVER, ids[0], dgram, 2, T0 + 10010000);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x9999, dgram, 2, T0 + 10010000); /* elsewhere */
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_early_lost, 0);
	ids_in_set(&CLIENT, ids[6], ids, 1);
	send_frag_of3(f->d, &CLIENT, &SERVER, ids[0], dgram, 2, T0 + 10020000);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_early_lost, 1);
	assert_int_equal(st.frags_displaced, 0);
	th_decode_flush(f->d);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_unfinished, 0);
}

/*
 * A fragment seen over a second before a first fragment of its IP id is another datagram's
 * (IP ids wrap): the call is timed from its own first fragment, and nothing is counted.
 */
static void
test_udp_early_fragment_stale(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[DGRAM_SIZE];

	write_call_dgram(dgram, 0x7400);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x500, dgram, 1, T0);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x500, dgram, 0, T0 + 2 * SEC);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x500, dgram, 2, T0 + 2 * SEC + 100000);
	send_write_reply(f->d, 0x7400, T0 + 2 * SEC + 200000);
	assert_int_equal(f->s->count, 1);
	assert_true(f->s->ops[0].call_first_ns == T0 + 2 * SEC);
	assert_true(f->s->ops[0].call_last_ns == T0 + 2 * SEC + 100000);
	th_decode_flush(f->d);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_early, 0);
	assert_int_equal(st.frags_early_lost, 0);
	assert_int_equal(st.frags_unfinished, 0);
}

/*
 * Replies fragmented in order (READs) hold a way only until their last fragment: twenty of
 * them in one set, between a call's last fragment and its first, do not push out what came
 * early, nor count anything.
 */
static void
test_udp_in_order_replies_keep_early(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	uint8_t dgram[DGRAM_SIZE];
	struct xb reply = {.n = 0};
	uint16_t ids[20];

	write_call_dgram(dgram, 0x7500);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x600, dgram, 2, T0);
	ids_in_set(&SERVER, 0x600, ids, 20);
	rpc_reply(&reply, 0x7501); /* answers nothing: an orphan reply */
	put32(&reply, 5);
	frag_dgram(dgram, &SERVER, &CLIENT, &reply);
	for (unsigned int i = 0; i < 20; i++)
		for (int k = 0; k < 3; k++)
			send_frag_of3(f->d, &SERVER, &CLIENT, ids[i], dgram, k,
				T0 + 1000 + i * 1000 + (uint64_t)k * 100);
	write_call_dgram(dgram, 0x7500);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x600, dgram, 1, T0 + 50000);
	send_frag_of3(f->d, &CLIENT, &SERVER, 0x600, dgram, 0, T0 + 60000);
	send_write_reply(f->d, 0x7500, T0 + 100000);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frags_early, 1);
	assert_int_equal(st.frags_early_lost, 0);
	assert_int_equal(f->s->count, 21);
	assert_true(f->s->ops[20].call_first_ns == T0);
	assert_true(f->s->ops[20].call_last_ns == T0 + 60000);
}

/* READDIRPLUS entries handed on while the reply is decoded, before its op. */
struct dirents {
	struct sink *s;         /* ops emitted so far */
	unsigned int n;         /* entries seen */
	unsigned int ops_at[4]; /* ops emitted when each entry came */
	char names[4][16];      /* their names */
	uint8_t fh_last[4];     /* their handles' last byte */
};

static void
on_dirent(void *ctx, const struct th_op *op, const struct th_nfs_dirent *e)
{
	struct sink *s = ctx;
	struct dirents *de = (struct dirents *)(s + 1);

	assert_int_equal(op->proc, TH_NFS3_READDIRPLUS);
	assert_int_equal(op->call.fh.len, sizeof(FH));
	assert_memory_equal(op->call.fh.data, FH, sizeof(FH));
	assert_true(de->n < 4 && e->name_len < sizeof(de->names[0]));
	de->ops_at[de->n] = s->count;
	memcpy(de->names[de->n], e->name, e->name_len);
	de->names[de->n][e->name_len] = '\0';
	de->fh_last[de->n] = e->fh[e->fh_len - 1];
	de->n++;
}

static void
put_dirent(struct xb *x, uint64_t fileid, const char *name, bool has_fh)
{
	uint8_t fh[sizeof(FH)];

	memcpy(fh, FH, sizeof(FH));
	fh[sizeof(FH) - 1] = (uint8_t)fileid;
	put32(x, 1);
	put64(x, fileid);
	put_opaque(x, name, (uint32_t)strlen(name));
	put64(x, fileid);
	put32(x, 0); /* no attributes */
	put32(x, has_fh);
	if (has_fh)
		put_opaque(x, fh, sizeof(fh));
}

/* ls -l's listing: entries with handles go to the dirent callback, once each. */
static void
test_readdirplus_entries(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0};
	struct sink *s = calloc(1, sizeof(*s) + sizeof(struct dirents));
	struct dirents *de = (struct dirents *)(s + 1);
	struct th_decode_config cfg;
	struct th_decode *d;

	assert_non_null(s);
	th_decode_config_defaults(&cfg);
	cfg.flows = 64;
	cfg.calls = 64;
	d = th_decode_create(&cfg, on_op, s);
	assert_non_null(d);
	th_decode_set_dirent_cb(d, on_dirent);
	rpc_call(&call, 0x2222, TH_PROG_NFS, 3, TH_NFS3_READDIRPLUS);
	put_opaque(&call, FH, sizeof(FH));
	put64(&call, 0);
	put64(&call, 0);
	put32(&call, 4096);
	put32(&call, 32768);
	rpc_reply(&reply, 0x2222);
	put32(&reply, 0);
	put32(&reply, 0);
	put64(&reply, 7);
	put_dirent(&reply, 3, "a.txt", true);
	put_dirent(&reply, 4, "nofh", false);
	put_dirent(&reply, 5, "b.txt", true);
	put32(&reply, 0);
	put32(&reply, 1);
	send_udp(d, &CLIENT, &SERVER, &call, T0);
	send_udp(d, &SERVER, &CLIENT, &reply, T0 + 1000);

	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].reply.count, 3);
	assert_true(s->ops[0].reply.eof);
	assert_int_equal(de->n, 2);
	assert_string_equal(de->names[0], "a.txt");
	assert_int_equal(de->fh_last[0], 3);
	assert_string_equal(de->names[1], "b.txt");
	assert_int_equal(de->fh_last[1], 5);
	assert_int_equal(de->ops_at[0], 0);
	assert_int_equal(de->ops_at[1], 0);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.dirents, 2);
	assert_int_equal(st.results_malformed, 0);
	th_decode_free(d);

	/* Without a callback (the fixture's decoder) the listing is counted, not walked. */
	send_udp(f->d, &CLIENT, &SERVER, &call, T0);
	send_udp(f->d, &SERVER, &CLIENT, &reply, T0 + 1000);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].reply.count, 3);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.dirents, 0);
	free(s);
}

static void
test_tcp_getattr_with_syn(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0}, rec;
	struct tcp_conn c;
	const struct th_op *op;

	tcp_open(&c, f->d, &CLIENT, &SERVER, 1000, 5000, T0);
	tcp_send(&c, 0x2222, false, T0 + 1000);
	tcp_send(&c, 0x2222, true, T0 + 1000 + 75000);

	assert_int_equal(f->s->count, 1);
	op = &f->s->ops[0];
	assert_int_equal(op->kind, TH_OP_MATCHED);
	assert_int_equal(op->transport, TH_PKT_L4_TCP);
	assert_int_equal(op->xid, 0x2222);
	assert_int_equal(op->proc, TH_NFS3_GETATTR);
	assert_int_equal(op->reply.attr.size, 1);
	assert_non_null(strstr(f->s->lines[0], " RPC tcp 10.0.0.1:800 10.0.0.2:2049 0x00002222"
					       " NFS3 GETATTR OK 75.000 75.000 "));

	/* A second call cut across two segments: latency from its first and its last. */
	getattr_call(&call, 0x2223);
	tcp_record(&rec, &call);
	tcp_segment(&c, TO_SERVER, rec.b, 20, T0 + 2 * SEC);
	tcp_segment(&c, TO_SERVER, rec.b + 20, rec.n - 20, T0 + 2 * SEC + 3000);
	getattr_reply(&reply, 0x2223, 2);
	tcp_record(&rec, &reply);
	tcp_segment(&c, TO_CLIENT, rec.b, rec.n, T0 + 2 * SEC + 10000);

	assert_int_equal(f->s->count, 2);
	op = &f->s->ops[1];
	assert_int_equal(op->xid, 0x2223);
	assert_true(op->call_first_ns == T0 + 2 * SEC);
	assert_true(op->call_last_ns == T0 + 2 * SEC + 3000);
	assert_non_null(strstr(f->s->lines[1], " NFS3 GETATTR OK 10.000 7.000 "));

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.tcp_segments, 8);
	assert_int_equal(st.flow.flows_created, 1);
	assert_int_equal(st.flow.records, 4);
	assert_int_equal(st.flow.resyncs, 0);
	assert_int_equal(st.flow.hunt_segments, 0);
	assert_int_equal(st.ops_matched, 2);
	assert_int_equal(st.not_rpc, 0);
}

/*
 * A GETATTR of @p xid whose first 20 bytes cross at @p t_head and whose reply, at
 * @p t_reply, reaches the capture before the call's tail (on the wire, acknowledged by the
 * server, but not yet in the capture), stamped @p t_tail. @return the ops out before the tail.
 */
static unsigned int
reply_before_tail(struct fixture *f, struct tcp_conn *c, uint32_t xid, uint64_t t_head,
	uint64_t t_reply, uint64_t t_tail)
{
	struct xb call = {.n = 0}, reply = {.n = 0}, rec, rrec;
	uint32_t tail_seq, tail_ack;
	unsigned int before;

	getattr_call(&call, xid);
	tcp_record(&rec, &call);
	tcp_segment(c, TO_SERVER, rec.b, 20, t_head);
	tail_seq = c->seq[TO_SERVER];
	tail_ack = c->seq[TO_CLIENT];
	c->seq[TO_SERVER] += (uint32_t)rec.n - 20;
	getattr_reply(&reply, xid, 2);
	tcp_record(&rrec, &reply);
	tcp_segment(c, TO_CLIENT, rrec.b, rrec.n, t_reply);
	before = (unsigned int)f->s->count;
	send_tcp(f->d, &CLIENT, &SERVER, tail_seq, tail_ack, TH_TCP_ACK, rec.b + 20, rec.n - 20,
		t_tail);
	return before;
}

/*
 * A mirror port swapped a call's last segment and the reply that answers it: the reply
 * (whose acknowledgement covers the tail) waits for the tail, and the call comes out whole,
 * at the tail's own time, then matches its reply. Nothing is cut, stepped over or taken for
 * a retransmission.
 */
static void
test_tcp_reply_before_call_tail(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct tcp_conn c;
	const struct th_op *op;

	tcp_open(&c, f->d, &CLIENT, &SERVER, 1000, 5000, T0);
	/* The tail stamped when it crossed the wire: nothing comes out before it. */
	assert_int_equal(reply_before_tail(f, &c, 0x2231, T0 + 1000, T0 + 51000, T0 + 4000), 0);
	assert_int_equal(f->s->count, 1);
	op = &f->s->ops[0];
	assert_int_equal(op->kind, TH_OP_MATCHED);
	assert_int_equal(op->xid, 0x2231);
	assert_true(op->call_last_ns == T0 + 4000);
	assert_true(op->reply_first_ns == T0 + 51000);
	assert_non_null(strstr(f->s->lines[0], " NFS3 GETATTR OK 50.000 47.000 "));
	assert_null(strstr(f->s->lines[0], "cut="));

	/* The next call and reply, in order: nothing waits. */
	tcp_send(&c, 0x2232, false, T0 + 2 * SEC);
	tcp_send(&c, 0x2232, true, T0 + 2 * SEC + 30000);
	assert_int_equal(f->s->count, 2);
	assert_int_equal(f->s->ops[1].kind, TH_OP_MATCHED);

	/*
	 * A port that stamps frames on arrival: the reply is stamped before the tail it waited
	 * for. Its own bytes were whole at its own stamp, which it keeps: the log shows the
	 * reply before the call's end, signed, not a latency of 0 the capture never saw.
	 */
	assert_int_equal(reply_before_tail(f, &c, 0x2233, T0 + 3 * SEC + 1000, T0 + 3 * SEC + 51000,
				 T0 + 3 * SEC + 60000),
		2);
	assert_int_equal(f->s->count, 3);
	op = &f->s->ops[2];
	assert_int_equal(op->kind, TH_OP_MATCHED);
	assert_true(op->reply_first_ns == T0 + 3 * SEC + 51000);
	assert_non_null(strstr(f->s->lines[2], " NFS3 GETATTR OK 50.000 -9.000 "));

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.flow.segments_held_ack, 2);
	assert_int_equal(st.flow.segments_ack_reordered, 2);
	assert_int_equal(st.flow.segments_retrans, 0);
	assert_int_equal(st.flow.gaps_payload, 0);
	assert_int_equal(st.flow.gaps_lost, 0);
	assert_int_equal(st.calls_header_cut, 0);
	assert_int_equal(st.ops_matched, 3);
}

/*
 * The reply came but the call's tail never does: after the wait (the capture's clock passing
 * TH_FLOW_HOLD_NS, or the client's next call) the tail is a loss, as without the wait: the
 * call comes out cut, ending at its last byte seen, and matches its reply; a copy of the tail
 * seen after that is a retransmission.
 */
static void
test_tcp_reply_before_lost_call_tail(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, rec;
	struct tcp_conn c;
	uint32_t tail_seq, tail_ack;

	tcp_open(&c, f->d, &CLIENT, &SERVER, 1000, 5000, T0);
	getattr_call(&call, 0x2241);
	tcp_record(&rec, &call);
	/* The call's header is whole: the cut takes 4 bytes of its handle. */
	tcp_segment(&c, TO_SERVER, rec.b, rec.n - 4, T0 + 1000);
	tail_seq = c.seq[TO_SERVER];
	tail_ack = c.seq[TO_CLIENT];
	c.seq[TO_SERVER] += 4u;
	tcp_send(&c, 0x2241, true, T0 + 51000);
	assert_int_equal(f->s->count, 0);
	th_decode_housekeep(f->d, T0 + 51000 + TH_FLOW_HOLD_NS - 1);
	assert_int_equal(f->s->count, 0);
	th_decode_housekeep(f->d, T0 + 51000 + TH_FLOW_HOLD_NS);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].kind, TH_OP_MATCHED);
	assert_true(f->s->ops[0].call_last_ns == T0 + 1000);
	assert_non_null(strstr(f->s->lines[0], "cut=call"));
	send_tcp(f->d, &CLIENT, &SERVER, tail_seq, tail_ack, TH_TCP_ACK, rec.b + rec.n - 4, 4,
		T0 + 4000);

	/* Again, given up at the client's next call, which comes after the lost tail. */
	tcp_segment(&c, TO_SERVER, rec.b, rec.n - 4, T0 + SEC);
	c.seq[TO_SERVER] += 4u;
	tcp_send(&c, 0x2241, true, T0 + SEC + 51000);
	assert_int_equal(f->s->count, 1);
	tcp_send(&c, 0x2242, false, T0 + SEC + 90000);
	assert_int_equal(f->s->count, 2);
	assert_non_null(strstr(f->s->lines[1], "cut=call"));
	tcp_send(&c, 0x2242, true, T0 + SEC + 120000);
	assert_int_equal(f->s->count, 3);
	assert_int_equal(f->s->ops[2].kind, TH_OP_MATCHED);
	assert_null(strstr(f->s->lines[2], "cut="));

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.flow.segments_held_ack, 2);
	assert_int_equal(st.flow.segments_ack_reordered, 0);
	assert_int_equal(st.flow.segments_retrans, 1);
	assert_int_equal(st.flow.gaps_payload, 2);
	assert_int_equal(st.flow.gaps_lost, 0);
	assert_int_equal(st.ops_matched, 3);
}

/* The segments of @p rec to @p dir, cut after @p first bytes, with a copy of the SYN-ACK and
 * one of the SYN (@p cisn, @p sisn: the handshake's) between them. */
static void
tcp_split_around_syn_copies(struct tcp_conn *c, enum tcp_dir dir, const struct xb *rec,
	size_t first, uint32_t cisn, uint32_t sisn, uint64_t ts)
{
	tcp_segment(c, dir, rec->b, first, ts);
	send_tcp(c->d, c->server, c->client, sisn, cisn + 1, TH_TCP_SYN | TH_TCP_ACK, NULL, 0,
		ts + 1);
	send_tcp(c->d, c->client, c->server, cisn, 0, TH_TCP_SYN, NULL, 0, ts + 2);
	tcp_segment(c, dir, rec->b + first, rec->n - first, ts + 3);
}

/*
 * A copy of the handshake's SYN-ACK or SYN in the middle of the connection (sent again, or
 * twice by a mirror port) is not a new connection: the records before and after it, and one
 * it falls inside of, come out whole and match, with no gap, hunt or retransmission.
 */
static void
test_tcp_syn_copies_mid_connection(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0}, rec;
	struct tcp_conn c;
	uint64_t ts = T0 + 1000;
	uint32_t xid;
	unsigned int i;

	tcp_open(&c, f->d, &CLIENT, &SERVER, 1000, 5000, T0);
	for (xid = 0x3001; xid <= 0x3003; xid++, ts += 100000) {
		tcp_send(&c, xid, false, ts);
		tcp_send(&c, xid, true, ts + 50000);
	}
	send_tcp(f->d, &SERVER, &CLIENT, 5000, 1001, TH_TCP_SYN | TH_TCP_ACK, NULL, 0, ts);
	tcp_send(&c, 0x3004, false, ts + 1000);
	tcp_send(&c, 0x3004, true, ts + 50000);
	ts += 100000;
	send_tcp(f->d, &CLIENT, &SERVER, 1000, 0, TH_TCP_SYN, NULL, 0, ts);
	tcp_send(&c, 0x3005, false, ts + 1000);
	tcp_send(&c, 0x3005, true, ts + 50000);
	ts += 100000;
	/* Inside a call and inside its reply. */
	getattr_call(&call, 0x3006);
	tcp_record(&rec, &call);
	tcp_split_around_syn_copies(&c, TO_SERVER, &rec, 20, 1000, 5000, ts);
	getattr_reply(&reply, 0x3006, 2);
	tcp_record(&rec, &reply);
	tcp_split_around_syn_copies(&c, TO_CLIENT, &rec, 30, 1000, 5000, ts + 50000);
	tcp_send(&c, 0x3007, false, ts + 100000);
	tcp_send(&c, 0x3007, true, ts + 150000);

	assert_int_equal(f->s->count, 7);
	for (i = 0; i < 7; i++) {
		assert_int_equal(f->s->ops[i].kind, TH_OP_MATCHED);
		assert_int_equal(f->s->ops[i].xid, 0x3001 + i);
		assert_null(strstr(f->s->lines[i], "cut="));
	}
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.flow.syn_copies, 6);
	assert_int_equal(st.flow.flows_created, 1);
	assert_int_equal(st.flow.gaps_lost, 0);
	assert_int_equal(st.flow.gaps_payload, 0);
	assert_int_equal(st.flow.segments_held, 0);
	assert_int_equal(st.flow.segments_retrans, 0);
	assert_int_equal(st.flow.hunt_segments, 0);
	assert_int_equal(st.flow.resyncs, 0);
	assert_int_equal(st.ops_matched, 7);
}

/*
 * A new connection on the same ports, with other first sequence numbers (behind the old
 * connection's bytes, then far ahead of them), starts its streams again: its records come
 * out and match, and its SYNs are not taken for copies.
 */
static void
test_tcp_new_connection_same_ports(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	static const uint32_t isn[3][2] = {{1000, 5000}, {500, 4000}, {900000, 70000000}};
	struct tcp_conn c;
	uint64_t ts = T0;
	uint32_t xid = 0x4001;
	unsigned int i, k;

	for (k = 0; k < 3; k++, ts += SEC) {
		tcp_open(&c, f->d, &CLIENT, &SERVER, isn[k][0], isn[k][1], ts);
		for (i = 0; i < 3; i++, xid++) {
			tcp_send(&c, xid, false, ts + 1000 + i * 100000);
			tcp_send(&c, xid, true, ts + 50000 + i * 100000);
		}
	}
	assert_int_equal(f->s->count, 9);
	for (i = 0; i < 9; i++) {
		assert_int_equal(f->s->ops[i].kind, TH_OP_MATCHED);
		assert_int_equal(f->s->ops[i].xid, 0x4001 + i);
	}
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.flow.syn_copies, 0);
	assert_int_equal(st.flow.flows_created, 1);
	assert_int_equal(st.flow.gaps_lost, 0);
	assert_int_equal(st.flow.hunt_segments, 0);
	assert_int_equal(st.flow.segments_retrans, 0);
	assert_int_equal(st.ops_matched, 9);
}

/* ---- Listings longer than the TCP prefix ---- */

#define LIST_MAX 2048 /* entries a test listing may have */

/* A READDIRPLUS reply as a TCP record, and where each of its entries ends. */
struct listing {
	uint8_t *b;                 /* marker(s) and message */
	size_t n;                   /* bytes at b */
	unsigned int entries;       /* entries in it */
	size_t entry_end[LIST_MAX]; /* record bytes (markers not counted) up to each entry's end */
};

/* Entries named per listing: which ones came, in order. */
struct named {
	struct sink *s;           /* ops emitted so far */
	unsigned int n;           /* entries handed on */
	bool is_in_order;         /* each was the next one, with its own handle */
	unsigned int ops_at_last; /* ops emitted when the last came */
};

static void
on_listed(void *ctx, const struct th_op *op, const struct th_nfs_dirent *e)
{
	struct sink *s = ctx;
	struct named *nm = (struct named *)(s + 1);
	char want[16];

	assert_int_equal(op->proc, TH_NFS3_READDIRPLUS);
	snprintf(want, sizeof(want), "f%04u", nm->n);
	if (e->name_len != strlen(want) || memcmp(e->name, want, e->name_len) != 0 ||
		e->fh_len != sizeof(FH) || e->fh[6] != (uint8_t)(nm->n >> 8) ||
		e->fh[7] != (uint8_t)nm->n)
		nm->is_in_order = false;
	nm->n++;
	nm->ops_at_last = s->count;
}

static void
put_be32(struct listing *l, uint32_t v)
{
	th_be_put32(l->b + l->n, v);
	l->n += 4;
}

/*
 * A reply to READDIRPLUS call @p xid listing @p entries files f0000, f0001, ...
 * (handle FH ending in the entry's number), with eof; TCP fragments of at most
 * @p frag_size bytes (0: one).
 */
static void
listing_make(struct listing *l, uint32_t xid, unsigned int entries, size_t frag_size)
{
	struct xb head = {.n = 0};
	uint8_t *msg;
	size_t size, off;

	assert_true(entries <= LIST_MAX);
	memset(l, 0, sizeof(*l));
	l->b = calloc(1, 64 + entries * 64 + (entries * 64 / 512 + 2) * 4);
	assert_non_null(l->b);
	rpc_reply(&head, xid);
	put32(&head, 0); /* NFS3_OK */
	put32(&head, 0); /* no directory attributes */
	put64(&head, 7); /* cookieverf */
	/* The message first, at b + 4; markers are put in front of each fragment below. */
	l->n = 4;
	memcpy(l->b + l->n, head.b, head.n);
	l->n += head.n;
	for (unsigned int i = 0; i < entries; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%04u", i);
		put_be32(l, 1);
		put_be32(l, 0);
		put_be32(l, 100 + i); /* fileid */
		put_be32(l, 5);
		memcpy(l->b + l->n, name, 8); /* 5 bytes and 3 of padding (zeros) */
		memset(l->b + l->n + 5, 0, 3);
		l->n += 8;
		put_be32(l, 0);
		put_be32(l, i + 1); /* cookie */
		put_be32(l, 0);     /* no attributes */
		put_be32(l, 1);     /* handle follows */
		put_be32(l, sizeof(FH));
		memcpy(l->b + l->n, FH, sizeof(FH));
		l->b[l->n + 6] = (uint8_t)(i >> 8);
		l->b[l->n + 7] = (uint8_t)i;
		l->n += sizeof(FH);
		l->entry_end[i] = l->n - 4;
	}
	put_be32(l, 0); /* no more entries */
	put_be32(l, 1); /* eof */
	l->entries = entries;
	size = l->n - 4;
	if (frag_size == 0 || frag_size >= size) {
		th_be_put32(l->b, 0x80000000u | (uint32_t)size);
		return;
	}
	/* Several fragments: move the message apart to make room for their markers. */
	msg = malloc(size);
	assert_non_null(msg);
	memcpy(msg, l->b + 4, size);
	l->n = 0;
	for (off = 0; off < size; off += frag_size) {
		size_t n = size - off < frag_size ? size - off : frag_size;

		put_be32(l, (off + n == size ? 0x80000000u : 0) | (uint32_t)n);
		memcpy(l->b + l->n, msg + off, n);
		l->n += n;
	}
	free(msg);
}

/* A decoder whose READDIRPLUS entries go to on_listed(), with @p listings buffers. */
/* A listing test's listing, pipeline and sink go. */
static void
listing_test_end(struct listing *l, struct th_decode *d, struct sink *s)
{
	free(l->b);
	free(l);
	th_decode_free(d);
	free(s);
}

static struct th_decode *
listing_decoder(struct sink **s, uint32_t listings, bool has_names)
{
	struct th_decode_config cfg;
	struct th_decode *d;

	*s = calloc(1, sizeof(**s) + sizeof(struct named));
	assert_non_null(*s);
	((struct named *)(*s + 1))->is_in_order = true;
	th_decode_config_defaults(&cfg);
	cfg.flows = 64;
	cfg.calls = 64;
	cfg.listings = listings;
	d = th_decode_create(&cfg, on_op, *s);
	assert_non_null(d);
	if (has_names)
		th_decode_set_dirent_cb(d, on_listed);
	return d;
}

static void
readdirplus_call(struct tcp_conn *c, uint32_t xid, uint64_t ts)
{
	struct xb m = {.n = 0}, rec;

	rpc_call(&m, xid, TH_PROG_NFS, 3, TH_NFS3_READDIRPLUS);
	put_opaque(&m, FH, sizeof(FH));
	put64(&m, 0);
	put64(&m, 0);
	put32(&m, 8192);
	put32(&m, 131072);
	tcp_record(&rec, &m);
	tcp_segment(c, TO_SERVER, rec.b, rec.n, ts);
}

/* Bytes [from, to) of @p l to the client in segments of @p mss; the last at @p ts. */
static void
send_part(struct tcp_conn *c, const struct listing *l, size_t from, size_t to, size_t mss,
	uint64_t ts)
{
	for (size_t off = from; off < to; off += mss) {
		size_t n = to - off < mss ? to - off : mss;

		tcp_segment(c, TO_CLIENT, l->b + off, n, ts - (to - off - n));
	}
}

/* Entries whose bytes all lie before record byte @p end. */
static unsigned int
entries_before(const struct listing *l, size_t end)
{
	unsigned int i = 0;

	while (i < l->entries && l->entry_end[i] <= end)
		i++;
	return i;
}

/* ls -l of a large directory: every entry of a listing split over many segments is named. */
static void
test_listing_across_segments_names_every_entry(void **state)
{
	struct sink *s;
	struct th_decode *d = listing_decoder(&s, 4, true);
	struct named *nm = (struct named *)(s + 1);
	struct listing *l = malloc(sizeof(*l));
	struct th_decode_stats st;
	struct tcp_conn c;

	(void)state;
	assert_non_null(l);
	tcp_open(&c, d, &CLIENT, &SERVER, 1000, 5000, T0);
	readdirplus_call(&c, 0x3001, T0 + 1000);
	listing_make(l, 0x3001, 200, 0); /* 10 KiB: 18 entries in the prefix */
	send_part(&c, l, 0, l->n, 1448, T0 + 2000);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].reply_decode, TH_NFS_OK);
	assert_int_equal(s->ops[0].reply.count, 200);
	assert_false(s->ops[0].reply.is_count_partial);
	assert_true(s->ops[0].reply.eof);
	assert_int_equal(nm->n, 200);
	assert_true(nm->is_in_order);
	assert_int_equal(nm->ops_at_last, 0); /* before the listing's op */
	free(l->b);

	/* In fragments of 1000 bytes, segments of 7 then 1448 bytes: the same. */
	nm->n = 0;
	readdirplus_call(&c, 0x3002, T0 + SEC);
	listing_make(l, 0x3002, 200, 1000);
	send_part(&c, l, 0, 7, 7, T0 + SEC + 100);
	send_part(&c, l, 7, l->n, 1448, T0 + SEC + 2000);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->ops[1].reply.count, 200);
	assert_int_equal(nm->n, 200);
	assert_true(nm->is_in_order);

	th_decode_get_stats(d, &st);
	assert_int_equal(st.dirents, 400);
	assert_int_equal(st.flow.whole_records, 2);
	assert_int_equal(
		st.flow.whole_cut_size + st.flow.whole_cut_busy + st.flow.whole_cut_gap, 0);
	assert_int_equal(st.results_short, 0);
	listing_test_end(l, d, s);
}

/* Bytes lost inside a listing: the entries before the gap are named, the cut counted. */
static void
test_listing_gap_binds_entries_before_it(void **state)
{
	struct sink *s;
	struct th_decode *d = listing_decoder(&s, 4, true);
	struct named *nm = (struct named *)(s + 1);
	struct listing *l = malloc(sizeof(*l));
	struct th_decode_stats st;
	struct tcp_conn c;
	const size_t lost = 4 + 3 * 1448; /* record byte where the lost segment began */

	(void)state;
	assert_non_null(l);
	tcp_open(&c, d, &CLIENT, &SERVER, 1000, 5000, T0);
	readdirplus_call(&c, 0x3101, T0 + 1000);
	listing_make(l, 0x3101, 200, 0);
	send_part(&c, l, 0, lost, 1448, T0 + 2000);
	c.seq[TO_CLIENT] += 1448; /* not in the capture */
	send_part(&c, l, lost + 1448, l->n, 1448, T0 + 3000);

	assert_int_equal(s->count, 1);
	assert_int_equal(nm->n, entries_before(l, lost - 4));
	assert_true(nm->n > 18 && nm->n < 200);
	assert_true(nm->is_in_order);
	assert_true(s->ops[0].reply.eof); /* the record's end was seen */
	/* Its count is of the entries before the gap, and says so: done_min=, no done=. */
	assert_int_equal(s->ops[0].reply.count, nm->n);
	assert_true(s->ops[0].reply.is_count_partial);
	{
		char want[32];

		snprintf(want, sizeof(want), " done_min=%u eof=1", nm->n);
		assert_non_null(strstr(s->lines[0], want));
		assert_null(strstr(s->lines[0], " done="));
	}
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.gaps_payload, 1);
	assert_int_equal(st.flow.whole_cut_gap, 1);
	assert_int_equal(st.flow.whole_records, 0); /* cut, not whole */
	assert_int_equal(st.dirents, nm->n);
	free(l->b);

	/* A gap just as the prefix filled: that listing is cut there, and counted too. */
	nm->n = 0;
	readdirplus_call(&c, 0x3102, T0 + SEC);
	listing_make(l, 0x3102, 200, 0);
	send_part(&c, l, 0, 4 + TH_FLOW_PREFIX, 4 + TH_FLOW_PREFIX, T0 + SEC + 1000);
	c.seq[TO_CLIENT] += 1000;
	send_part(&c, l, 4 + TH_FLOW_PREFIX + 1000, l->n, 1448, T0 + SEC + 2000);
	assert_int_equal(s->count, 2);
	assert_int_equal(nm->n, entries_before(l, TH_FLOW_PREFIX));
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.whole_cut_gap, 2);
	assert_int_equal(st.flow.whole_records, 0);
	free(l->b);

	/* A gap inside its first kilobyte: a listing cut there, not only a TCP gap. */
	nm->n = 0;
	readdirplus_call(&c, 0x3103, T0 + 2 * SEC);
	listing_make(l, 0x3103, 200, 0);
	send_part(&c, l, 0, 600, 600, T0 + 2 * SEC + 1000);
	c.seq[TO_CLIENT] += 1000;
	send_part(&c, l, 1600, l->n, 1448, T0 + 2 * SEC + 2000);
	assert_int_equal(s->count, 3);
	assert_int_equal(nm->n, entries_before(l, 600 - 4));
	assert_true(s->ops[2].reply.eof);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.gaps_payload, 3);
	assert_int_equal(st.flow.whole_cut_gap, 3);
	assert_int_equal(st.flow.whole_records, 0);
	listing_test_end(l, d, s);
}

/* A listing larger than a buffer is cut at its size; with no buffer free, at the prefix. */
static void
test_listing_cut_at_buffer_size_or_none_free(void **state)
{
	struct sink *s;
	struct th_decode *d = listing_decoder(&s, 1, true);
	struct named *nm = (struct named *)(s + 1);
	struct listing *l = malloc(sizeof(*l)), *l2 = malloc(sizeof(*l2));
	struct th_decode_stats st;
	struct tcp_conn c, c2;
	static const struct ep CLIENT2 = {{10, 0, 0, 3}, 801};

	(void)state;
	assert_non_null(l);
	assert_non_null(l2);
	tcp_open(&c, d, &CLIENT, &SERVER, 1000, 5000, T0);
	readdirplus_call(&c, 0x3201, T0 + 1000);
	listing_make(l, 0x3201, 1500, 0); /* 78 KiB */
	assert_true(l->n > TH_DECODE_LISTING_SIZE + 4);
	send_part(&c, l, 0, l->n, 1448, T0 + 2000);
	assert_int_equal(s->count, 1);
	assert_int_equal(nm->n, entries_before(l, TH_DECODE_LISTING_SIZE));
	assert_true(nm->n > 1000);
	assert_true(nm->is_in_order);
	assert_true(s->ops[0].reply.eof);
	assert_int_equal(s->ops[0].reply.count, nm->n);
	assert_true(s->ops[0].reply.is_count_partial);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.whole_cut_size, 1);
	assert_int_equal(st.flow.whole_records, 0); /* cut, not whole */
	free(l->b);

	/* Two listings at once with one buffer: the second keeps its prefix only. */
	nm->n = 0;
	tcp_open(&c2, d, &CLIENT2, &SERVER, 7000, 9000, T0 + SEC);
	readdirplus_call(&c, 0x3202, T0 + SEC + 1000);
	readdirplus_call(&c2, 0x3203, T0 + SEC + 1000);
	listing_make(l, 0x3202, 200, 0);
	listing_make(l2, 0x3203, 200, 0);
	send_part(&c, l, 0, 3000, 1448, T0 + SEC + 2000);
	send_part(&c2, l2, 0, l2->n, 1448, T0 + SEC + 3000);
	assert_int_equal(s->count, 2);
	assert_int_equal(nm->n, entries_before(l2, TH_FLOW_PREFIX));
	assert_int_equal(s->ops[1].reply.count, nm->n);
	assert_true(s->ops[1].reply.is_count_partial);
	send_part(&c, l, 3000, l->n, 1448, T0 + SEC + 4000);
	assert_int_equal(s->count, 3);
	assert_int_equal(s->ops[2].reply.count, 200);
	assert_false(s->ops[2].reply.is_count_partial);
	assert_int_equal(nm->n, entries_before(l2, TH_FLOW_PREFIX) + 200);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.whole_cut_busy, 1);
	assert_int_equal(st.flow.whole_records, 1);

	/* Given back: the next listing finds the buffer free. */
	nm->n = 0;
	free(l2->b);
	readdirplus_call(&c2, 0x3204, T0 + 2 * SEC);
	listing_make(l2, 0x3204, 200, 0);
	send_part(&c2, l2, 0, l2->n, 1448, T0 + 2 * SEC + 1000);
	assert_int_equal(nm->n, 200);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.whole_cut_busy, 1);
	assert_int_equal(st.flow.whole_records, 2);
	free(l2->b);
	free(l2);
	listing_test_end(l, d, s);
}

/* Large records that are not listings keep their prefix only, and take no buffer. */
static void
test_listing_buffer_only_for_listings(void **state)
{
	struct sink *s, *s2;
	struct th_decode *d = listing_decoder(&s, 1, true);
	struct th_decode *off = listing_decoder(&s2, 1, false);
	struct named *nm = (struct named *)(s + 1);
	struct listing *l = malloc(sizeof(*l));
	struct xb m = {.n = 0}, rec;
	struct th_decode_stats st;
	struct tcp_conn c;
	uint8_t *read_rec = calloc(1, 8192);
	size_t n;

	(void)state;
	assert_non_null(l);
	assert_non_null(read_rec);
	/* A pipeline that walks no entries holds the same listing buffer: it counts them. */
	assert_int_equal(th_decode_memory(d), th_decode_memory(off));
	tcp_open(&c, d, &CLIENT, &SERVER, 1000, 5000, T0);

	/* A READDIRPLUS reply whose call the capture did not see. */
	listing_make(l, 0x3301, 200, 0);
	send_part(&c, l, 0, l->n, 1448, T0 + 1000);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].kind, TH_OP_REPLY_ONLY);

	/* A READ reply of 6000 bytes of data. */
	rpc_call(&m, 0x3302, TH_PROG_NFS, 3, TH_NFS3_READ);
	put_opaque(&m, FH, sizeof(FH));
	put64(&m, 0);
	put32(&m, 6000);
	tcp_record(&rec, &m);
	tcp_segment(&c, TO_SERVER, rec.b, rec.n, T0 + 2000);
	m.n = 0;
	rpc_reply(&m, 0x3302);
	put32(&m, 0);
	put32(&m, 0);
	put32(&m, 6000);
	put32(&m, 1);
	put32(&m, 6000);
	memcpy(read_rec + 4, m.b, m.n);
	n = 4 + m.n + 6000;
	th_be_put32(read_rec, 0x80000000u | (uint32_t)(n - 4));
	for (size_t off_ = 0; off_ < n; off_ += 1448)
		tcp_segment(&c, TO_CLIENT, read_rec + off_, n - off_ < 1448 ? n - off_ : 1448,
			T0 + 3000);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->ops[1].proc, TH_NFS3_READ);
	assert_int_equal(s->ops[1].reply.count, 6000);
	assert_int_equal(nm->n, 0);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.whole_records, 0);
	assert_int_equal(
		st.flow.whole_cut_size + st.flow.whole_cut_busy + st.flow.whole_cut_gap, 0);
	free(l->b);

	/* The one buffer is still free for a listing. */
	readdirplus_call(&c, 0x3303, T0 + SEC);
	listing_make(l, 0x3303, 200, 0);
	send_part(&c, l, 0, l->n, 1448, T0 + SEC + 1000);
	assert_int_equal(nm->n, 200);
	th_decode_get_stats(d, &st);
	assert_int_equal(st.flow.whole_records, 1);
	assert_int_equal(st.flow.whole_cut_busy, 0);

	/* Names off: a listing is kept whole all the same, for its count; a reply without
	 * its call is not. */
	tcp_open(&c, off, &CLIENT, &SERVER, 1000, 5000, T0);
	readdirplus_call(&c, 0x3304, T0 + 1000);
	send_part(&c, l, 0, l->n, 1448, T0 + 2000); /* xid 0x3303: a reply without call */
	free(l->b);
	readdirplus_call(&c, 0x3305, T0 + 3000);
	listing_make(l, 0x3305, 200, 0);
	send_part(&c, l, 0, l->n, 1448, T0 + 4000);
	assert_int_equal(s2->count, 2);
	assert_int_equal(s2->ops[1].reply.count, 200);
	assert_false(s2->ops[1].reply.is_count_partial);
	th_decode_get_stats(off, &st);
	assert_int_equal(st.flow.whole_records, 1);
	assert_int_equal(st.flow.whole_cut_busy, 0);
	assert_int_equal(st.dirents, 0);
	free(l->b);
	free(l);
	free(read_rec);
	th_decode_free(d);
	th_decode_free(off);
	free(s);
	free(s2);
}

/*
 * A reply to plain READDIR call @p xid (NFS version @p vers, 2 or 3) listing
 * @p entries names f0000, f0001, ... with eof, as one TCP fragment: entries
 * with no attributes or handles, the shape a client without READDIRPLUS asks.
 */
static void
plain_listing_make(struct listing *l, uint32_t xid, unsigned int entries, uint32_t vers)
{
	struct xb head = {.n = 0};

	assert_true(entries <= LIST_MAX);
	memset(l, 0, sizeof(*l));
	l->b = calloc(1, 64 + entries * 32);
	assert_non_null(l->b);
	rpc_reply(&head, xid);
	put32(&head, 0); /* NFS3_OK, NFS_OK */
	if (vers == 3) {
		put32(&head, 0); /* no directory attributes */
		put64(&head, 7); /* cookieverf */
	}
	l->n = 4;
	memcpy(l->b + l->n, head.b, head.n);
	l->n += head.n;
	for (unsigned int i = 0; i < entries; i++) {
		char name[8];

		snprintf(name, sizeof(name), "f%04u", i);
		put_be32(l, 1);
		if (vers == 3)
			put_be32(l, 0);
		put_be32(l, 100 + i); /* fileid */
		put_be32(l, 5);
		memcpy(l->b + l->n, name, 8); /* 5 bytes and 3 of padding (zeros) */
		memset(l->b + l->n + 5, 0, 3);
		l->n += 8;
		if (vers == 3)
			put_be32(l, 0);
		put_be32(l, i + 1); /* cookie */
		l->entry_end[i] = l->n - 4;
	}
	put_be32(l, 0); /* no more entries */
	put_be32(l, 1); /* eof */
	l->entries = entries;
	th_be_put32(l->b, 0x80000000u | (uint32_t)(l->n - 4));
}

static void
readdir_call(struct tcp_conn *c, uint32_t xid, uint32_t vers, uint64_t ts)
{
	struct xb m = {.n = 0}, rec;

	if (vers == 3) {
		rpc_call(&m, xid, TH_PROG_NFS, 3, TH_NFS3_READDIR);
		put_opaque(&m, FH, sizeof(FH));
		put64(&m, 0);
		put64(&m, 0);
		put32(&m, 8192);
	} else {
		uint8_t fh2[32] = {0};

		rpc_call(&m, xid, TH_PROG_NFS, 2, TH_NFS2_READDIR);
		memcpy(fh2, FH, sizeof(FH));
		memcpy(m.b + m.n, fh2, sizeof(fh2)); /* fhandle: 32 bytes, no length */
		m.n += sizeof(fh2);
		put32(&m, 0);
		put32(&m, 8192);
	}
	tcp_record(&rec, &m);
	tcp_segment(c, TO_SERVER, rec.b, rec.n, ts);
}

/*
 * A plain READDIR (NFSv3, and NFSv2) over many segments is kept whole and counted
 * like a READDIRPLUS, so a listing's count does not depend on the procedure the
 * client chose; its entries carry no handle and are not handed on as names.
 */
static void
test_plain_readdir_counted_whole(void **state)
{
	struct sink *s;
	struct th_decode *d = listing_decoder(&s, 1, true);
	struct named *nm = (struct named *)(s + 1);
	struct listing *l = malloc(sizeof(*l));
	struct th_decode_stats st;
	struct tcp_conn c;

	(void)state;
	assert_non_null(l);
	tcp_open(&c, d, &CLIENT, &SERVER, 1000, 5000, T0);
	readdir_call(&c, 0x3a01, 3, T0 + 1000);
	plain_listing_make(l, 0x3a01, 200, 3); /* 6.4 KiB: 30 entries in the prefix */
	assert_true(l->n > 4 * 1024);
	send_part(&c, l, 0, l->n, 1448, T0 + 2000);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].proc, TH_NFS3_READDIR);
	assert_int_equal(s->ops[0].reply_decode, TH_NFS_OK);
	assert_int_equal(s->ops[0].reply.count, 200);
	assert_false(s->ops[0].reply.is_count_partial);
	assert_true(s->ops[0].reply.eof);
	/* The RPC log line carries the count as a READDIRPLUS's would. */
	assert_non_null(strstr(s->lines[0], " NFS3 READDIR OK "));
	assert_non_null(strstr(s->lines[0], " count=8192 done=200 eof=1"));
	free(l->b);

	/* NFSv2 READDIR over TCP: the same path, the same count. */
	readdir_call(&c, 0x3a02, 2, T0 + SEC);
	plain_listing_make(l, 0x3a02, 200, 2); /* 4.8 KiB */
	send_part(&c, l, 0, l->n, 1448, T0 + SEC + 2000);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->ops[1].vers, 2);
	assert_int_equal(s->ops[1].reply.count, 200);
	assert_false(s->ops[1].reply.is_count_partial);
	assert_true(s->ops[1].reply.eof);
	assert_non_null(strstr(s->lines[1], " NFS2 READDIR OK "));
	assert_non_null(strstr(s->lines[1], " done=200 eof=1"));

	th_decode_get_stats(d, &st);
	assert_int_equal(nm->n, 0); /* no handles: nothing for the name map */
	assert_int_equal(st.dirents, 0);
	assert_int_equal(st.flow.whole_records, 2);
	assert_int_equal(
		st.flow.whole_cut_size + st.flow.whole_cut_busy + st.flow.whole_cut_gap, 0);
	listing_test_end(l, d, s);
}

/*
 * Listings of each kind to @p d: one whole, one cut by a lost segment, one past
 * 64 KiB, then two at once (with one buffer, the second keeps its prefix).
 */
static void
play_listings(struct th_decode *d)
{
	struct listing *l = malloc(sizeof(*l)), *l2 = malloc(sizeof(*l2));
	struct tcp_conn c, c2;
	static const struct ep CLIENT2 = {{10, 0, 0, 3}, 801};

	assert_non_null(l);
	assert_non_null(l2);
	tcp_open(&c, d, &CLIENT, &SERVER, 1000, 5000, T0);
	tcp_open(&c2, d, &CLIENT2, &SERVER, 7000, 9000, T0);
	readdirplus_call(&c, 0x3401, T0 + 1000);
	listing_make(l, 0x3401, 200, 0);
	send_part(&c, l, 0, l->n, 1448, T0 + 2000);
	free(l->b);

	readdirplus_call(&c, 0x3402, T0 + SEC);
	listing_make(l, 0x3402, 200, 0);
	send_part(&c, l, 0, 4 + 3 * 1448, 1448, T0 + SEC + 1000);
	c.seq[TO_CLIENT] += 1448;
	send_part(&c, l, 4 + 4 * 1448, l->n, 1448, T0 + SEC + 2000);
	free(l->b);

	readdirplus_call(&c, 0x3403, T0 + 2 * SEC);
	listing_make(l, 0x3403, 1500, 0);
	send_part(&c, l, 0, l->n, 1448, T0 + 2 * SEC + 1000);
	free(l->b);

	readdirplus_call(&c, 0x3404, T0 + 3 * SEC);
	readdirplus_call(&c2, 0x3405, T0 + 3 * SEC);
	listing_make(l, 0x3404, 200, 0);
	listing_make(l2, 0x3405, 200, 0);
	send_part(&c, l, 0, 3000, 1448, T0 + 3 * SEC + 1000);
	send_part(&c2, l2, 0, l2->n, 1448, T0 + 3 * SEC + 2000);
	send_part(&c, l, 3000, l->n, 1448, T0 + 3 * SEC + 3000);
	free(l->b);
	free(l2->b);
	free(l);
	free(l2);
}

/*
 * The same listings make the same ops, entry counts included, with names on or
 * off: a count that moved with the outputs asked for would not be one. A
 * listing the capture kept only part of counts the entries it kept, flagged.
 */
static void
test_listing_count_same_names_on_or_off(void **state)
{
	struct sink *s_on, *s_off;
	struct th_decode *on = listing_decoder(&s_on, 1, true);
	struct th_decode *off = listing_decoder(&s_off, 1, false);
	struct th_decode_stats st_on, st_off;
	static const struct {
		uint32_t xid;
		bool is_partial;
	} want[] = {
		{0x3401, false}, {0x3402, true}, {0x3403, true}, {0x3405, true}, {0x3404, false}};

	(void)state;
	play_listings(on);
	play_listings(off);
	assert_int_equal(s_on->count, 5);
	assert_int_equal(s_off->count, 5);
	for (unsigned int i = 0; i < 5; i++) {
		const struct th_op *a = &s_on->ops[i], *b = &s_off->ops[i];

		assert_int_equal(a->xid, want[i].xid);
		assert_int_equal(a->reply.is_count_partial, want[i].is_partial);
		if (!want[i].is_partial)
			assert_int_equal(a->reply.count, 200);
		assert_true(a->reply.count > 0);
		assert_int_equal(b->xid, a->xid);
		assert_int_equal(b->reply.count, a->reply.count);
		assert_int_equal(b->reply.is_count_partial, a->reply.is_count_partial);
		assert_int_equal(b->reply.eof, a->reply.eof);
		assert_string_equal(s_off->lines[i], s_on->lines[i]);
	}
	th_decode_get_stats(on, &st_on);
	th_decode_get_stats(off, &st_off);
	assert_memory_equal(&st_off.flow, &st_on.flow, sizeof(st_on.flow));
	assert_int_equal(st_off.flow.whole_records, 2);
	assert_int_equal(st_off.flow.whole_cut_gap, 1);
	assert_int_equal(st_off.flow.whole_cut_size, 1);
	assert_int_equal(st_off.flow.whole_cut_busy, 1);
	assert_true(st_on.dirents > 600);
	assert_int_equal(st_off.dirents, 0);
	th_decode_free(on);
	th_decode_free(off);
	free(s_on);
	free(s_off);
}

static void
test_reply_without_call(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb reply = {.n = 0};
	const struct th_op *op;
	const struct ep other = {{10, 0, 0, 9}, 5555};

	getattr_reply(&reply, 0x3333, 1);
	send_udp(f->d, &SERVER, &CLIENT, &reply, T0 + 42);
	assert_int_equal(f->s->count, 1);
	op = &f->s->ops[0];
	assert_int_equal(op->kind, TH_OP_REPLY_ONLY);
	assert_int_equal(op->xid, 0x3333);
	assert_true(addr_is(&op->client, &CLIENT));
	assert_true(addr_is(&op->server, &SERVER));
	assert_int_equal(op->client_port, 800);
	assert_int_equal(op->server_port, 2049);
	assert_true(op->reply_first_ns == T0 + 42);
	assert_non_null(
		strstr(f->s->lines[0], " REPLY udp 10.0.0.1:800 10.0.0.2:2049 0x00003333 "));

	/* The same bytes between ports nobody serves RPC on: not an RPC, no op. */
	send_udp(f->d, &other, &CLIENT, &reply, T0 + 43);
	assert_int_equal(f->s->count, 1);

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.ops_reply_only, 1);
	assert_int_equal(st.rpc_replies, 1);
	assert_int_equal(st.xid.unmatched_replies, 1);
	assert_int_equal(st.not_rpc, 1);
}

static void
test_call_never_answered(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0};

	getattr_call(&call, 0x4444);
	send_udp(f->d, &CLIENT, &SERVER, &call, T0);
	/* A retransmission is counted on the waiting call. */
	send_udp(f->d, &CLIENT, &SERVER, &call, T0 + SEC);
	th_decode_housekeep(f->d, T0 + 5 * SEC);
	assert_int_equal(f->s->count, 0);

	th_decode_flush(f->d);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].kind, TH_OP_CALL_ONLY);
	assert_int_equal(f->s->ops[0].xid, 0x4444);
	assert_int_equal(f->s->ops[0].dup_calls, 1);
	assert_non_null(strstr(f->s->lines[0], " CALL udp 10.0.0.1:800 10.0.0.2:2049 0x00004444"
					       " NFS3 GETATTR - - - "));
	assert_non_null(strstr(f->s->lines[0], " dup=1\n"));

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.ops_call_only, 1);
	assert_int_equal(st.xid.unmatched_calls, 1);
	assert_int_equal(st.xid.calls_dup, 1);
	assert_int_equal(st.rpc_calls, 2);
}

/*
 * A client that gives up a call and sends another procedure under its XID (a process reusing
 * an XID counter, one that wrapped): the new call is no retransmission. The first leaves as a
 * CALL line, counted by that reason, and the reply is decoded as the new call's: an ACCESS
 * reply read as GETATTR results would have shown the attributes shifted by a word.
 */
static void
test_xid_reused_by_other_proc(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb first = {.n = 0}, second = {.n = 0}, reply = {.n = 0};
	const struct th_op *op;

	getattr_call(&first, 0x4545);
	rpc_call(&second, 0x4545, TH_PROG_NFS, 3, TH_NFS3_ACCESS);
	put_opaque(&second, FH, sizeof(FH));
	put32(&second, 0x1f);
	rpc_reply(&reply, 0x4545);
	put32(&reply, 0); /* NFS3_OK */
	put32(&reply, 0); /* no post-op attributes */
	put32(&reply, 0x1f);
	send_udp(f->d, &CLIENT, &SERVER, &first, T0);
	send_udp(f->d, &CLIENT, &SERVER, &second, T0 + 1000);
	send_udp(f->d, &SERVER, &CLIENT, &reply, T0 + 1500);
	assert_int_equal(f->s->count, 2);
	assert_non_null(strstr(f->s->lines[0], " CALL udp 10.0.0.1:800 10.0.0.2:2049 0x00004545"
					       " NFS3 GETATTR - - - "));
	assert_null(strstr(f->s->lines[0], "dup="));
	op = &f->s->ops[1];
	assert_int_equal(op->kind, TH_OP_MATCHED);
	assert_int_equal(op->proc, TH_NFS3_ACCESS);
	assert_int_equal(op->dup_calls, 0);
	assert_true(op->call_first_ns == T0 + 1000);
	assert_int_equal(op->reply_decode, TH_NFS_OK);
	assert_non_null(strstr(f->s->lines[1], " NFS3 ACCESS OK 0.500 0.500 "));

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.rpc_calls, 2);
	assert_int_equal(st.xid.calls_dup, 0);
	assert_int_equal(st.xid.calls_reused, 1);
	assert_int_equal(st.ops_call_only, 1);
	assert_int_equal(st.ops_matched, 1);
	assert_int_equal(st.results_malformed, 0);
}

/*
 * A LOOKUP of the empty name (valid XDR; a server answers NOENT or INVAL) shows name= empty:
 * left out, the name would read as one the record ended before.
 */
static void
test_lookup_empty_name(void **state)
{
	struct fixture *f = *state;
	struct xb call = {.n = 0}, reply = {.n = 0};

	rpc_call(&call, 0x4646, TH_PROG_NFS, 3, TH_NFS3_LOOKUP);
	put_opaque(&call, FH, sizeof(FH));
	put_opaque(&call, "", 0);
	rpc_reply(&reply, 0x4646);
	put32(&reply, 2); /* NFS3ERR_NOENT */
	put32(&reply, 0); /* no directory attributes */
	send_udp(f->d, &CLIENT, &SERVER, &call, T0);
	send_udp(f->d, &SERVER, &CLIENT, &reply, T0 + 100);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].call_decode, TH_NFS_OK);
	assert_non_null(strstr(f->s->lines[0], " NFS3 LOOKUP NOENT "));
	assert_non_null(strstr(f->s->lines[0], " fh="));
	assert_non_null(strstr(f->s->lines[0], " name=\n"));
}

/*
 * A mirror port shows some frames twice, microseconds apart, a router between two mirrored ports
 * lowering the TTL: copies are counted and not decoded, so no call reads as sent again, no reply
 * as without its call and no segment as retransmitted. A host's own resend, a timeout later, is
 * still one; with decode.copy_window = 0 a copy is taken as traffic.
 */
static void
test_mirror_copies(void **state)
{
	static const struct ep CLIENT2 = {{10, 0, 0, 3}, 801};
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct th_decode_config cfg;
	struct th_decode *d0;
	struct sink *s0;
	struct tcp_conn c;
	struct xb call = {.n = 0}, reply = {.n = 0}, rec;
	uint8_t fr[2048];
	size_t n;

	getattr_call(&call, 0x5151);
	getattr_reply(&reply, 0x5151, 100);
	send_udp(f->d, &CLIENT, &SERVER, &call, T0);
	send_udp(f->d, &CLIENT, &SERVER, &call, T0 + 2000);
	n = udp_frame(fr, &SERVER, &CLIENT, reply.b, reply.n);
	th_decode_frame(f->d, fr, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0 + 100000);
	fr[14 + 8]--;  /* TTL */
	fr[14 + 11]++; /* the IPv4 header checksum, as a router would change it */
	th_decode_frame(f->d, fr, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0 + 103000);

	tcp_open(&c, f->d, &CLIENT2, &SERVER, 1000, 5000, T0 + SEC);
	tcp_getattr(&rec, 0x6161, false);
	send_tcp(f->d, &CLIENT2, &SERVER, c.seq[TO_SERVER], c.seq[TO_CLIENT], TH_TCP_ACK, rec.b,
		rec.n, T0 + SEC + 100);
	tcp_segment(&c, TO_SERVER, rec.b, rec.n, T0 + SEC + 101); /* the copy */
	tcp_send(&c, 0x6161, true, T0 + SEC + 50000);

	/* The same call a second later: the client sent it again. */
	send_udp(f->d, &CLIENT, &SERVER, &call, T0 + 2 * SEC);

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frames_copied, 3);
	assert_int_equal(st.ops_matched, 2);
	assert_int_equal(st.ops_reply_only, 0);
	assert_int_equal(st.flow.segments_retrans, 0);
	assert_int_equal(st.xid.calls_dup, 0); /* the one a second later waits as a new call */
	assert_int_equal(st.rpc_calls, 3);
	assert_int_equal(st.frames, 11);
	th_decode_flush(f->d);
	assert_int_equal(f->s->count, 3);
	assert_int_equal(f->s->ops[2].kind, TH_OP_CALL_ONLY);
	/* The end of a capture forgets the frames seen: the next run's are no copies of them. */
	send_udp(f->d, &CLIENT, &SERVER, &call, T0 + 2 * SEC + 500);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frames_copied, 3);

	/* Off: the copy is a second call, the reply's copy one without its call. */
	s0 = calloc(1, sizeof(*s0));
	assert_non_null(s0);
	th_decode_config_defaults(&cfg);
	cfg.copy_window_ns = 0;
	d0 = th_decode_create(&cfg, on_op, s0);
	assert_non_null(d0);
	send_udp(d0, &CLIENT, &SERVER, &call, T0);
	send_udp(d0, &CLIENT, &SERVER, &call, T0 + 2000);
	send_udp(d0, &SERVER, &CLIENT, &reply, T0 + 100000);
	send_udp(d0, &SERVER, &CLIENT, &reply, T0 + 103000);
	th_decode_get_stats(d0, &st);
	assert_int_equal(st.frames_copied, 0);
	assert_int_equal(st.xid.calls_dup, 1);
	assert_int_equal(st.ops_reply_only, 1);
	th_decode_free(d0);
	free(s0);
}

static void
test_call_times_out(void **state)
{
	struct fixture *f = *state;
	struct xb call = {.n = 0};

	getattr_call(&call, 0x4445);
	send_udp(f->d, &CLIENT, &SERVER, &call, T0);
	th_decode_housekeep(f->d, T0 + 10 * SEC - 1);
	assert_int_equal(f->s->count, 0);
	th_decode_housekeep(f->d, T0 + 10 * SEC);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].kind, TH_OP_CALL_ONLY);
	th_decode_flush(f->d);
	assert_int_equal(f->s->count, 1);
}

/*
 * The capture lost the segment with one reply (a SPAN drop): its call,
 * sent before the gap, leaves as a call without reply after the 2 s gap
 * timeout instead of the 10 s call timeout; a call sent after the gap
 * waits as usual; the lost reply, should it come after all, is a reply
 * without call.
 */
static void
test_reply_gap_expires_call(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct tcp_conn c;

	tcp_open(&c, f->d, &CLIENT, &SERVER, 1000, 5000, T0);
	tcp_send(&c, 0x5001, false, T0 + 1000);
	tcp_send(&c, 0x5002, false, T0 + 2000);

	/*
	 * The reply to 0x5001 is not in the capture; the one to 0x5002 follows the gap and
	 * waits for it to be filled (a late segment) until the client sends again.
	 */
	tcp_skip(&c, 0x5001, true);
	tcp_send(&c, 0x5002, true, T0 + 3000);
	assert_int_equal(f->s->count, 0);
	tcp_send(&c, 0x5003, false, T0 + 4000);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].kind, TH_OP_MATCHED);
	assert_int_equal(f->s->ops[0].xid, 0x5002);
	assert_int_equal(f->s->ops[0].reply_first_ns, T0 + 3000);

	th_decode_housekeep(f->d, T0 + 1000 + 2 * SEC - 1);
	assert_int_equal(f->s->count, 1);
	th_decode_housekeep(f->d, T0 + 1000 + 2 * SEC);
	assert_int_equal(f->s->count, 2);
	assert_int_equal(f->s->ops[1].kind, TH_OP_CALL_ONLY);
	assert_int_equal(f->s->ops[1].xid, 0x5001);

	/* The call after the gap still waits, well past the gap timeout. */
	th_decode_housekeep(f->d, T0 + 9 * SEC);
	assert_int_equal(f->s->count, 2);

	/* A late reply to the expired call: counted as a reply without call. */
	tcp_send(&c, 0x5001, true, T0 + 9 * SEC + 1);
	assert_int_equal(f->s->count, 3);
	assert_int_equal(f->s->ops[2].kind, TH_OP_REPLY_ONLY);
	assert_int_equal(f->s->ops[2].xid, 0x5001);

	tcp_send(&c, 0x5003, true, T0 + 9 * SEC + 2);
	assert_int_equal(f->s->count, 4);
	assert_int_equal(f->s->ops[3].kind, TH_OP_MATCHED);
	assert_int_equal(f->s->ops[3].xid, 0x5003);

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.flow.gaps_lost, 1);
	assert_int_equal(st.flow.segments_held, 1);
	assert_int_equal(st.flow.segments_reordered, 0);
	assert_int_equal(st.xid.gap_expired, 1);
	assert_int_equal(st.xid.unmatched_calls, 1);
	assert_int_equal(st.xid.unmatched_replies, 1);
	assert_int_equal(st.ops_matched, 2);
	assert_int_equal(st.ops_call_only, 1);
	assert_int_equal(st.ops_reply_only, 1);
}

/* A gap in the call direction loses calls, not replies: waiting calls keep waiting. */
static void
test_call_gap_keeps_calls(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct tcp_conn c;

	tcp_open(&c, f->d, &CLIENT, &SERVER, 1000, 5000, T0);
	tcp_send(&c, 0x6001, false, T0 + 1000);
	tcp_skip(&c, 0x6002, false);
	tcp_send(&c, 0x6003, false, T0 + 3000);

	th_decode_housekeep(f->d, T0 + 5 * SEC);
	assert_int_equal(f->s->count, 0);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.flow.gaps_lost, 1);
	assert_int_equal(st.xid.gap_expired, 0);
	assert_int_equal(st.xid.calls, 2);
}

static void
test_dns_not_rpc(void **state)
{
	/* A DNS query for example.com A, and its answer. */
	/* clang-format off */
	static const uint8_t query[] = {
		0xab, 0xcd, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm',
		0, 0x00, 0x01, 0x00, 0x01,
	};
	static const uint8_t answer[] = {
		0xab, 0xcd, 0x81, 0x80, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm',
		0, 0x00, 0x01, 0x00, 0x01, 0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00,
		0x00, 0x0e, 0x10, 0x00, 0x04, 93, 184, 216, 34,
	};
	/* clang-format on */
	const struct ep client = {{10, 0, 0, 1}, 40000};
	const struct ep dns = {{10, 0, 0, 53}, 53};
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb x = {.n = 0};

	memcpy(x.b, query, sizeof(query));
	x.n = sizeof(query);
	send_udp(f->d, &client, &dns, &x, T0);
	memcpy(x.b, answer, sizeof(answer));
	x.n = sizeof(answer);
	send_udp(f->d, &dns, &client, &x, T0 + 1000);
	th_decode_flush(f->d);

	assert_int_equal(f->s->count, 0);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.not_rpc, 2);
	assert_int_equal(st.udp_datagrams, 2);
	assert_int_equal(st.rpc_calls, 0);
	assert_int_equal(st.rpc_replies, 0);
	assert_int_equal(st.rpc_short + st.rpc_malformed, 0);
	assert_int_equal(st.ports_learned, 0);
}

/*
 * A MOUNT v3 MNT over TCP to port 20048, its call's first segment too short
 * to be recognised on its own (marker and 6 bytes). Returns ops seen.
 */
static unsigned
mount_over_tcp(struct fixture *f, uint64_t t)
{
	const struct ep client = {{10, 0, 0, 1}, 901};
	const struct ep mountd = {{10, 0, 0, 2}, 20048};
	struct xb call = {.n = 0}, reply = {.n = 0}, rec;
	struct tcp_conn c;
	unsigned before = f->s->count;

	tcp_open(&c, f->d, &client, &mountd, 70000, 90000, t);
	rpc_call(&call, 0x5555, TH_PROG_MOUNT, 3, TH_MOUNT_MNT);
	put_opaque(&call, "/export", 7);
	tcp_record(&rec, &call);
	tcp_segment(&c, TO_SERVER, rec.b, 10, t + 100);
	tcp_segment(&c, TO_SERVER, rec.b + 10, rec.n - 10, t + 200);

	rpc_reply(&reply, 0x5555);
	put32(&reply, 0); /* MNT3_OK */
	put_opaque(&reply, FH, sizeof(FH));
	put32(&reply, 1); /* one flavour: AUTH_SYS */
	put32(&reply, 1);
	tcp_record(&rec, &reply);
	tcp_segment(&c, TO_CLIENT, rec.b, rec.n, t + 900);
	th_decode_flush(f->d);
	return f->s->count - before;
}

static void
test_mount_port_unknown(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;

	/* Without portmap having announced 20048, the connection is not followed. */
	assert_int_equal(mount_over_tcp(f, T0), 0);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.ports_learned, 0);
	assert_int_equal(st.rpc_calls, 0);
	assert_true(st.not_rpc > 0);
}

static void
test_portmap_getport_learns_port(void **state)
{
	const struct ep client = {{10, 0, 0, 1}, 900};
	const struct ep rpcbind = {{10, 0, 0, 2}, 111};
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0};
	const struct th_op *op;

	rpc_call(&call, 0x6666, TH_PROG_PORTMAP, 2, TH_PMAP_GETPORT);
	put32(&call, TH_PROG_MOUNT);
	put32(&call, 3);
	put32(&call, 6); /* TCP */
	put32(&call, 0);
	rpc_reply(&reply, 0x6666);
	put32(&reply, 20048);
	send_udp(f->d, &client, &rpcbind, &call, T0);
	send_udp(f->d, &rpcbind, &client, &reply, T0 + 500);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].reply.port, 20048);
	assert_non_null(strstr(f->s->lines[0], " PORTMAP2 GETPORT OK 0.500 0.500 uid=1000 gid=100"
					       " machine=client1 prog=100005 vers=3 port=20048\n"));
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.ports_learned, 1);

	assert_int_equal(mount_over_tcp(f, T0 + SEC), 1);
	op = &f->s->ops[1];
	assert_int_equal(op->kind, TH_OP_MATCHED);
	assert_int_equal(op->transport, TH_PKT_L4_TCP);
	assert_int_equal(op->prog, TH_PROG_MOUNT);
	assert_int_equal(op->proc, TH_MOUNT_MNT);
	assert_int_equal(op->server_port, 20048);
	assert_string_equal(op->call.name.s, "/export");
	assert_int_equal(op->reply.fh.len, sizeof(FH));
	assert_true(op->call_first_ns == T0 + SEC + 100);
	assert_true(op->call_last_ns == T0 + SEC + 200);

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.ports_learned, 1);
	assert_int_equal(st.flow.resyncs, 0);
	assert_int_equal(st.flow.hunt_segments, 0);
	assert_int_equal(st.not_rpc, 0);
	assert_int_equal(st.ops_matched, 2);
}

/*
 * rpcbind v4 GETVERSADDR (procedure 9), GETADDR for one version exactly, answers with a
 * universal address whose last two numbers are the port: the port is learned as a GETPORT's
 * or a GETADDR's is, and shown (port=).
 */
static void
test_rpcbind_getversaddr_learns_port(void **state)
{
	const struct ep client = {{10, 0, 0, 1}, 900};
	const struct ep rpcbind = {{10, 0, 0, 2}, 111};
	static const char uaddr[] = "10.0.0.2.78.80"; /* 78 * 256 + 80 = 20048 */
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0};

	rpc_call(&call, 0x6767, TH_PROG_PORTMAP, 4, 9);
	put32(&call, TH_PROG_MOUNT);
	put32(&call, 3);
	put_opaque(&call, "tcp", 3);
	put_opaque(&call, "", 0); /* r_addr */
	put_opaque(&call, "", 0); /* r_owner */
	rpc_reply(&reply, 0x6767);
	put_opaque(&reply, uaddr, sizeof(uaddr) - 1);
	send_udp(f->d, &client, &rpcbind, &call, T0);
	send_udp(f->d, &rpcbind, &client, &reply, T0 + 500);
	assert_int_equal(f->s->count, 1);
	assert_int_equal(f->s->ops[0].reply.port, 20048);
	assert_non_null(
		strstr(f->s->lines[0], " PORTMAP4 GETVERSADDR OK 0.500 0.500 uid=1000 gid=100"
				       " machine=client1 prog=100005 vers=3 port=20048\n"));
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.ports_learned, 1);

	/* The MNT whose first segment alone would not be taken for RPC is followed. */
	assert_int_equal(mount_over_tcp(f, T0 + SEC), 1);
	assert_int_equal(f->s->ops[1].kind, TH_OP_MATCHED);
	assert_int_equal(f->s->ops[1].server_port, 20048);
	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.not_rpc, 0);
	assert_int_equal(st.ops_matched, 2);
}

static void
test_counters_add_up(void **state)
{
	struct fixture *f = *state;
	struct th_decode_stats st;
	struct xb call = {.n = 0}, reply = {.n = 0};
	uint8_t fr[2048];
	uint64_t bytes = 0, sum = 0;
	size_t n;
	int i;

	getattr_call(&call, 0x7777);
	getattr_reply(&reply, 0x7777, 3);
	n = udp_frame(fr, &CLIENT, &SERVER, call.b, call.n);
	th_decode_frame(f->d, fr, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0);
	bytes += n;
	n = udp_frame(fr, &SERVER, &CLIENT, reply.b, reply.n);
	th_decode_frame(f->d, fr, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0 + 1);
	bytes += n;

	/* A reply cut by the capture: 60 bytes kept of a longer frame. */
	n = udp_frame(fr, &SERVER, &CLIENT, reply.b, reply.n);
	th_decode_frame(f->d, fr, 60, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0 + 2);
	bytes += n;

	/* ARP */
	memset(fr, 0, 60);
	fr[12] = 0x08;
	fr[13] = 0x06;
	th_decode_frame(f->d, fr, 60, 60, TH_PKT_LINK_ETHERNET, T0 + 3);
	bytes += 60;

	/* ICMP echo */
	{
		uint8_t icmp[8] = {8, 0, 0, 0, 0, 1, 0, 1};

		n = ipv4_frame(fr, &CLIENT, &SERVER, 1, icmp, sizeof(icmp), NULL, 0);
		th_decode_frame(f->d, fr, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0 + 4);
		bytes += n;
	}

	/* 10 bytes: not even an Ethernet header */
	th_decode_frame(f->d, fr, 10, 10, TH_PKT_LINK_ETHERNET, T0 + 5);
	bytes += 10;

	/* A TCP segment without payload */
	n = tcp_frame(fr, &CLIENT, &SERVER, 1, 1, TH_TCP_ACK, NULL, 0);
	th_decode_frame(f->d, fr, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, T0 + 6);
	bytes += n;

	th_decode_get_stats(f->d, &st);
	assert_int_equal(st.frames, 7);
	assert_true(st.bytes == bytes);
	for (i = 0; i < TH_PKT__STATUS_COUNT; i++)
		sum += st.pkt[i];
	assert_true(sum == st.frames);
	assert_int_equal(st.pkt[TH_PKT_OK], 4);
	assert_int_equal(st.pkt[TH_PKT_NOT_IP], 1);
	assert_int_equal(st.pkt[TH_PKT_NOT_TCP_UDP], 1);
	assert_int_equal(st.pkt[TH_PKT_TRUNC_L2], 1);
	assert_int_equal(st.pkt[TH_PKT_OK], st.udp_datagrams + st.tcp_segments);
	assert_int_equal(st.udp_datagrams, 3);
	assert_int_equal(st.tcp_segments, 1);
	assert_int_equal(st.frames_cut, 1);
	assert_int_equal(st.rpc_calls, 1);
	assert_int_equal(st.ops_matched, 1);
	/* The cut reply's call was already matched: a reply alone. */
	assert_int_equal(st.rpc_replies + st.rpc_short, 2);
	assert_int_equal(f->s->count, st.ops_matched + st.ops_call_only + st.ops_reply_only);
}

static void
test_stats_add(void **state)
{
	struct th_decode_stats *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	a->frames = 10;
	b->frames = 5;
	a->bytes = 1ull << 40;
	b->bytes = 1;
	b->frags_displaced = 3;
	a->pkt[TH_PKT_BAD_L3] = 2;
	b->pkt[TH_PKT_BAD_L3] = 2;
	a->calls[TH_DECODE_PROG_NFS3][TH_NFS3_READ] = 100;
	b->calls[TH_DECODE_PROG_NFS3][TH_NFS3_READ] = 23;
	b->calls[TH_DECODE_PROG_OTHER][TH_DECODE_PROCS - 1] = 9;
	a->flow.records = 7;
	b->flow.bytes_skipped = 8;
	a->xid.table_full = 1;
	b->xid.table_full = 1;
	b->xid.unmatched_replies = 6;

	th_decode_stats_add(a, b);
	assert_int_equal(a->frames, 15);
	assert_true(a->bytes == (1ull << 40) + 1);
	assert_int_equal(a->frags_displaced, 3);
	assert_int_equal(a->pkt[TH_PKT_BAD_L3], 4);
	assert_int_equal(a->calls[TH_DECODE_PROG_NFS3][TH_NFS3_READ], 123);
	assert_int_equal(a->calls[TH_DECODE_PROG_OTHER][TH_DECODE_PROCS - 1], 9);
	assert_int_equal(a->flow.records, 7);
	assert_int_equal(a->flow.bytes_skipped, 8);
	assert_int_equal(a->xid.table_full, 2);
	assert_int_equal(a->xid.unmatched_replies, 6);
	/* b is left alone */
	assert_int_equal(b->frames, 5);
	free(a);
	free(b);
}

static char *
print_stats(const struct th_decode_stats *s)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	th_decode_stats_print(out, s);
	fclose(out);
	assert_non_null(text);
	return text;
}

static void
test_stats_print_zeros(void **state)
{
	struct th_decode_stats *s = calloc(1, sizeof(*s));
	char *text, row[256];
	int i;

	(void)state;
	assert_non_null(s);
	text = print_stats(s);
	assert_non_null(strstr(text, "traffic\n"));
	assert_non_null(strstr(text, "losses and skips by reason\n"));
	/* Exact rows: the count left-aligned in 14 columns, then the reason. */
	assert_non_null(strstr(text, "\n  0              frames received\n"));
	assert_non_null(strstr(text, "\n  0              truncated IP header\n"));
	assert_non_null(strstr(text, "\n  0              TCP/UDP payloads that are not RPC\n"));
	assert_non_null(strstr(text, "\n  0              TCP gaps that lost a record boundary (or "
				     "came while hunting)\n"));
	assert_non_null(strstr(text, "\n  0              unmatched calls (no reply)\n"));
	assert_non_null(strstr(text, "\n  0              unmatched replies (no call)\n"));
	assert_non_null(
		strstr(text, "\n  0              calls pushed out early (XID table full)\n"));
	/* Every frame outcome but OK is a loss reason with its own row. */
	for (i = 1; i < TH_PKT__STATUS_COUNT; i++) {
		snprintf(row, sizeof(row), "\n  0              %s\n",
			th_pkt_status_str((enum th_pkt_status)i));
		if (strstr(text, row) == NULL)
			fail_msg("no row for '%s'", th_pkt_status_str((enum th_pkt_status)i));
	}
	/* No calls: no per-procedure rows. */
	assert_null(strstr(text, "NFS3 "));
	free(text);
	free(s);
}

/* Every loss or skip reason is printed with its own count. */
static void
test_stats_print_every_loss(void **state)
{
	struct th_decode_stats *s = calloc(1, sizeof(*s));
	struct {
		const char *name;
		uint64_t *field;
	} loss[] = {
		{"frames_cut", &s->frames_cut},
		{"frames_copied", &s->frames_copied},
		{"not_rpc", &s->not_rpc},
		{"rpc_short", &s->rpc_short},
		{"calls_header_cut", &s->calls_header_cut},
		{"flow.flows_aged", &s->flow.flows_aged},
		{"rpc_malformed", &s->rpc_malformed},
		{"args_short", &s->args_short},
		{"args_malformed", &s->args_malformed},
		{"results_short", &s->results_short},
		{"results_malformed", &s->results_malformed},
		{"unknown_proc", &s->unknown_proc},
		{"unknown_prog", &s->unknown_prog},
		{"nfs4_compounds", &s->nfs4_compounds},
		{"rpc_gss", &s->rpc_gss},
		{"rpc_denied", &s->rpc_denied},
		{"rpc_not_success", &s->rpc_not_success},
		{"ops_call_only", &s->ops_call_only},
		{"ops_reply_only", &s->ops_reply_only},
		{"frags_displaced", &s->frags_displaced},
		{"frags_unfinished", &s->frags_unfinished},
		{"frags_early", &s->frags_early},
		{"frags_early_lost", &s->frags_early_lost},
		{"flow.gaps_lost", &s->flow.gaps_lost},
		{"flow.gaps_payload", &s->flow.gaps_payload},
		{"flow.records_lost_gap", &s->flow.records_lost_gap},
		{"flow.records_lost_idle", &s->flow.records_lost_idle},
		{"flow.records_unfinished", &s->flow.records_unfinished},
		{"flow.segments_retrans", &s->flow.segments_retrans},
		{"flow.syn_copies", &s->flow.syn_copies},
		{"flow.segments_held", &s->flow.segments_held},
		{"flow.segments_reordered", &s->flow.segments_reordered},
		{"flow.segments_held_ack", &s->flow.segments_held_ack},
		{"flow.segments_ack_reordered", &s->flow.segments_ack_reordered},
		{"flow.hunt_segments", &s->flow.hunt_segments},
		{"flow.bad_markers", &s->flow.bad_markers},
		{"flow.flows_evicted", &s->flow.flows_evicted},
		{"xid.calls_dup", &s->xid.calls_dup},
		{"xid.calls_reused", &s->xid.calls_reused},
		{"xid.table_full", &s->xid.table_full},
		{"xid.gap_expired", &s->xid.gap_expired},
		{"flow.whole_cut_size", &s->flow.whole_cut_size},
		{"flow.whole_cut_busy", &s->flow.whole_cut_busy},
		{"flow.whole_cut_gap", &s->flow.whole_cut_gap},
	};
	const char *missing = NULL;
	char *text, num[32];
	bool has_rows;
	size_t i;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < sizeof(loss) / sizeof(loss[0]); i++)
		*loss[i].field = 900100 + i;
	for (i = 1; i < TH_PKT__STATUS_COUNT; i++)
		s->pkt[i] = 800100 + i;
	s->calls[TH_DECODE_PROG_NFS3][TH_NFS3_GETATTR] = 31;
	s->calls[TH_DECODE_PROG_OTHER][3] = 32;
	s->calls[TH_DECODE_PROG_NFS3][TH_DECODE_PROCS - 1] = 33; /* procedures 31 and above */
	text = print_stats(s);
	/* Collect what is missing first, so a failure leaks nothing under ASan. */
	for (i = 0; i < sizeof(loss) / sizeof(loss[0]); i++) {
		snprintf(num, sizeof(num), "\n  %zu ", (size_t)(900100 + i));
		if (strstr(text, num) == NULL && missing == NULL)
			missing = loss[i].name;
	}
	for (i = 1; i < TH_PKT__STATUS_COUNT; i++) {
		snprintf(num, sizeof(num), "\n  %zu ", (size_t)(800100 + i));
		if (strstr(text, num) == NULL && missing == NULL)
			missing = th_pkt_status_str((enum th_pkt_status)i);
	}
	has_rows = strstr(text, "\n  31             NFS3 GETATTR\n") != NULL &&
		   strstr(text, "\n  32             other programs, proc 3\n") != NULL &&
		   strstr(text, "\n  33             NFS3 procs 31 and above\n") != NULL;
	free(text);
	free(s);
	if (missing != NULL)
		fail_msg("%s is not in the statistics block", missing);
	assert_true(has_rows);
}

/* An RPCSEC_GSS call: DATA with the given service, or a control message. */
static void
gss_getattr_call(struct xb *x, uint32_t xid, uint32_t gss_proc, uint32_t service)
{
	struct xb cred = {.n = 0};
	static const uint8_t handle[4] = {1, 2, 3, 4}, checksum[8] = {9, 9, 9, 9, 9, 9, 9, 9};

	put32(&cred, 1); /* version */
	put32(&cred, gss_proc);
	put32(&cred, 7); /* sequence */
	put32(&cred, service);
	put_opaque(&cred, handle, sizeof(handle));
	put32(x, xid);
	put32(x, 0);
	put32(x, 2);
	put32(x, TH_PROG_NFS);
	put32(x, 3);
	put32(x, TH_NFS3_GETATTR);
	put32(x, 6); /* RPCSEC_GSS */
	put_opaque(x, cred.b, (uint32_t)cred.n);
	put32(x, 6);
	put_opaque(x, checksum, sizeof(checksum));
	if (service == 1) {
		put_opaque(x, FH, sizeof(FH));
	} else {
		/* rpc_gss_integ_data: the arguments, then their checksum */
		struct xb args = {.n = 0};

		put32(&args, 7);
		put_opaque(&args, FH, sizeof(FH));
		put_opaque(x, args.b, (uint32_t)args.n);
		put_opaque(x, checksum, sizeof(checksum));
	}
}

static void
test_rpcsec_gss(void **state)
{
	struct fixture *f = *state;
	struct xb c = {.n = 0}, r = {.n = 0};

	/* Integrity: arguments are wrapped; the line must not pretend to know them. */
	gss_getattr_call(&c, 0x601, 0, 2);
	send_udp(f->d, &CLIENT, &SERVER, &c, T0);
	getattr_reply(&r, 0x601, 4096);
	send_udp(f->d, &SERVER, &CLIENT, &r, T0 + 1000);
	assert_int_equal(f->s->count, 1);
	assert_true(f->s->ops[0].is_opaque);
	assert_non_null(strstr(f->s->lines[0], " auth=gss-wrapped"));
	assert_null(strstr(f->s->lines[0], " fh="));
	assert_null(strstr(f->s->lines[0], " size="));

	/* Service "none": the arguments are plain and decoded. */
	c.n = r.n = 0;
	gss_getattr_call(&c, 0x602, 0, 1);
	send_udp(f->d, &CLIENT, &SERVER, &c, T0 + 2000);
	getattr_reply(&r, 0x602, 4096);
	send_udp(f->d, &SERVER, &CLIENT, &r, T0 + 3000);
	assert_int_equal(f->s->count, 2);
	assert_false(f->s->ops[1].is_opaque);
	assert_non_null(strstr(f->s->lines[1], " auth=gss fh="));

	/* A control message (INIT) carries a token, not NFS arguments. */
	c.n = 0;
	gss_getattr_call(&c, 0x603, 1, 1);
	send_udp(f->d, &CLIENT, &SERVER, &c, T0 + 4000);
	th_decode_flush(f->d);
	assert_int_equal(f->s->count, 3);
	assert_true(f->s->ops[2].is_opaque);
}

static void
count_op(void *ctx, const struct th_op *op)
{
	(void)op;
	(*(unsigned *)ctx)++;
}

/* One UDP call and reply of @prog/@vers/@proc (no arguments or results), @lat ns apart. */
static void
udp_exchange(struct th_decode *d, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
	uint64_t t, int64_t lat)
{
	struct xb call = {.n = 0}, reply = {.n = 0};

	rpc_call(&call, xid, prog, vers, proc);
	rpc_reply(&reply, xid);
	send_udp(d, &CLIENT, &SERVER, &call, t);
	send_udp(d, &SERVER, &CLIENT, &reply, (uint64_t)((int64_t)t + lat));
}

/*
 * Response times by procedure: each matched RPC, from the call's last segment
 * to the reply's first, lands in its procedure's row (any program, named or
 * not), and a reply stamped before its call is counted, not timed.
 */
static void
test_response_times(void **state)
{
	struct th_decode_config cfg;
	const struct th_srt *srt;
	struct th_decode *d;
	unsigned ops = 0;

	(void)state;
	th_decode_config_defaults(&cfg);
	cfg.flows = 64;
	cfg.calls = 256;
	d = th_decode_create(&cfg, count_op, &ops);
	assert_non_null(d);
	udp_exchange(d, 1, TH_PROG_NFS, 3, TH_NFS3_GETATTR, T0, 123456);
	udp_exchange(d, 2, TH_PROG_NFS, 3, TH_NFS3_GETATTR, T0 + SEC, 200000);
	udp_exchange(d, 3, TH_PROG_NFS, 3, TH_NFS3_GETATTR, T0 + 2 * SEC, -5000);
	udp_exchange(d, 4, 400000, 1, 7, T0 + 3 * SEC, 1000);
	assert_int_equal(ops, 4);

	srt = th_decode_get_srt(d);
	assert_int_equal(atomic_load(&srt->rows), 2);
	assert_int_equal(srt->untimed_clock, 1);
	assert_int_equal(srt->untimed_rows, 0);
	assert_int_equal(srt->id[0].prog, TH_PROG_NFS);
	assert_int_equal(srt->id[0].proc, TH_NFS3_GETATTR);
	assert_int_equal(srt->row[0].count, 2);
	assert_int_equal(srt->row[0].min, 123456);
	assert_int_equal(srt->row[0].max, 200000);
	assert_int_equal(srt->id[1].prog, 400000);
	assert_int_equal(srt->id[1].proc, 7);
	assert_int_equal(srt->row[1].min, 1000);
	th_decode_free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_udp_getattr_matched, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_udp_fragmented_calls_interleaved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_fragment_never_finished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_ipv6_fragments_same_data, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_udp_call_fragments_before_first, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_udp_reply_fragments_before_first, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_udp_early_fragments_never_push_out_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_early_fragment_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_udp_in_order_replies_keep_early, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readdirplus_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rpcsec_gss, setup, teardown),
		cmocka_unit_test(test_listing_across_segments_names_every_entry),
		cmocka_unit_test(test_listing_gap_binds_entries_before_it),
		cmocka_unit_test(test_listing_cut_at_buffer_size_or_none_free),
		cmocka_unit_test(test_listing_buffer_only_for_listings),
		cmocka_unit_test(test_listing_count_same_names_on_or_off),
		cmocka_unit_test(test_plain_readdir_counted_whole),
		cmocka_unit_test_setup_teardown(test_tcp_getattr_with_syn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_reply_before_call_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_tcp_syn_copies_mid_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_tcp_new_connection_same_ports, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_tcp_reply_before_lost_call_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_without_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_never_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xid_reused_by_other_proc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_empty_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mirror_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_gap_expires_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_gap_keeps_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dns_not_rpc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mount_port_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_portmap_getport_learns_port, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_rpcbind_getversaddr_learns_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_add_up, setup, teardown),
		cmocka_unit_test(test_stats_add),
		cmocka_unit_test(test_stats_print_zeros),
		cmocka_unit_test(test_stats_print_every_loss),
		cmocka_unit_test(test_response_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
