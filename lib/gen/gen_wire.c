/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * From RPC records to frames: Ethernet with 0, 1 or 2 VLAN tags, IPv4 or
 * IPv6, TCP (handshake, record marking, MSS segmentation, pure ACKs during
 * long transfers, FIN) or UDP (IPv4 fragments, IPv6 fragment headers).
 *
 * Frames are generated per RPC, out of global time order, and wait in a
 * heap. A TCP frame's acknowledgement number is set when it leaves the heap,
 * in timestamp order: it then acknowledges exactly what the peer has put on
 * the wire so far, as a real stack would, and never data not yet seen.
 */

#include "gen_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "th_bytes.h"

#define ETH_MIN 60 /* Ethernet minimum frame without FCS */
#define TCP_HDR 20
#define TCP_SYN_OPTS 8 /* MSS, NOP, window scale */
#define UDP_HDR 8
#define RTT_NS 50000u       /* LAN round trip */
#define STREAM_RECS_MAX 16  /* records in one gen_wire_send */
#define ACK_EVERY 8         /* receiver ACKs every this many segments of a long record */
#define WSCALE 7            /* window 65535 << 7: 8 MB, more than any burst in flight */
#define FRAG_HEAD_MIN 160   /* a record's first record-marking fragment holds this much */
#define RTO_NS 200000000ull /* Linux's minimum TCP retransmission timeout */
#define LATE_MAX 64         /* frames the mirror holds back at once (--tap-reorder) */

struct gen_wire {
	struct gen_world *w;     /**< addresses, configuration, PRNG */
	struct gen_frame **heap; /**< frames waiting, min-heap on (ts, order) */
	uint32_t n;              /**< frames in heap */
	uint32_t cap;            /**< heap capacity */
	uint64_t order;          /**< generation counter */
	uint8_t *stream;         /**< TCP stream or UDP datagram being cut */
	size_t stream_cap;       /**< bytes allocated in stream */
	uint64_t lost;           /**< frames lost before the tap (--loss) */
	bool is_last_lost;       /**< the last UDP datagram sent was lost */
	struct th_rng tap_rng;   /**< --tap-loss draws: their own stream, so the traffic the
				    hosts exchange is the same with or without tap loss */
	uint64_t tap_lost;       /**< frames left out of the capture (--tap-loss) */
	uint32_t tap_mask;       /**< records of the last send with a frame left out */
	bool is_frame_tap_lost;  /**< the last frame queued is left out of the capture */
	struct th_rng reorder_rng; /**< --tap-reorder draws, a stream of their own as well */
	uint64_t tap_reordered;    /**< frames written after the other direction's next one */
	struct gen_frame *ready;   /**< the frame gen_wire_pop() returns next, before the heap */
	struct gen_frame *late[LATE_MAX]; /**< frames held back (each also its flow's tap_late) */
	uint32_t n_late;                  /**< frames in late */
	struct th_rng dup_rng;            /**< --tap-dup draws, a stream of their own too */
	uint64_t tap_copies;              /**< second copies queued (--tap-dup) */
};

/*
 * Loss happens before the tap: a lost frame is not in the capture. TCP sends
 * the segment again after the retransmission timeout (doubling), and what
 * follows it in the stream waits for it (the sender's window is shut), so the
 * tap sees every byte once, in order, late. UDP loses whole datagrams; the
 * caller resends the RPC.
 */
static bool
is_lost(struct gen_wire *wi)
{
	if (wi->w->cfg->loss <= 0 || !gen_rng_chance(&wi->w->rng, wi->w->cfg->loss))
		return false;
	wi->lost++;
	return true;
}

/*
 * Loss at the tap: the hosts exchange the frame (nothing is resent), only
 * the capture misses it, as a SPAN port does when the mirror is
 * oversubscribed or the capture ring overruns.
 */
static bool
is_tap_lost(struct gen_wire *wi)
{
	return wi->w->cfg->tap_loss > 0 && gen_rng_chance(&wi->tap_rng, wi->w->cfg->tap_loss);
}

uint32_t
gen_wire_tap_lost_mask(const struct gen_wire *wi)
{
	return wi->tap_mask;
}

void
gen_wire_counts(const struct gen_wire *wi, struct th_gen_stats *st)
{
	st->lost_frames = wi->lost;
	st->tap_lost = wi->tap_lost;
	st->tap_reordered = wi->tap_reordered;
	st->tap_copies = wi->tap_copies;
}

bool
gen_wire_last_lost(const struct gen_wire *wi)
{
	return wi->is_last_lost;
}

/* ---- checksums ---- */

uint32_t
gen_csum_add(uint32_t sum, const void *data, size_t size)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < size; i += 2)
		sum += th_be_get16(p + i);
	if (size & 1)
		sum += (uint32_t)p[size - 1] << 8;
	return sum;
}

uint16_t
gen_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* ---- heap ---- */

static bool
earlier(const struct gen_frame *a, const struct gen_frame *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->order < b->order);
}

static int
heap_push(struct gen_wire *wi, struct gen_frame *fr)
{
	uint32_t i;

	if (wi->n == wi->cap) {
		uint32_t n = wi->cap ? wi->cap * 2 : 1024;
		struct gen_frame **p = realloc(wi->heap, (size_t)n * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		wi->heap = p;
		wi->cap = n;
	}
	fr->order = wi->order++;
	i = wi->n++;
	while (i > 0) {
		uint32_t up = (i - 1) / 2;

		if (!earlier(fr, wi->heap[up]))
			break;
		wi->heap[i] = wi->heap[up];
		i = up;
	}
	wi->heap[i] = fr;
	return 0;
}

static struct gen_frame *
heap_pop(struct gen_wire *wi)
{
	struct gen_frame *top = wi->heap[0], *last = wi->heap[--wi->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;

		if (l < wi->n && earlier(wi->heap[l], last))
			m = l;
		if (l + 1 < wi->n && earlier(wi->heap[l + 1], m == i ? last : wi->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		wi->heap[i] = wi->heap[m];
		i = m;
	}
	if (wi->n > 0)
		wi->heap[i] = last;
	return top;
}

struct gen_wire *
gen_wire_new(struct gen_world *w)
{
	struct gen_wire *wi = calloc(1, sizeof(*wi));

	if (wi == NULL)
		return NULL;
	wi->w = w;
	th_rng_seed(&wi->tap_rng, w->cfg->seed ^ 0x7461702d6c6f7373ull /* "tap-loss" */);
	th_rng_seed(&wi->reorder_rng, w->cfg->seed ^ 0x7461702d72656f72ull /* "tap-reor" */);
	th_rng_seed(&wi->dup_rng, w->cfg->seed ^ 0x7461702d64757020ull /* "tap-dup " */);
	return wi;
}

void
gen_wire_free(struct gen_wire *wi)
{
	if (wi == NULL)
		return;
	while (wi->n > 0)
		free(heap_pop(wi));
	while (wi->n_late > 0)
		free(wi->late[--wi->n_late]);
	free(wi->ready);
	free(wi->heap);
	free(wi->stream);
	free(wi);
}

static int
stream_reserve(struct gen_wire *wi, size_t size)
{
	size_t n;
	uint8_t *p;

	if (size <= wi->stream_cap)
		return 0;
	n = wi->stream_cap ? wi->stream_cap : 65536;
	while (n < size)
		n *= 2;
	p = realloc(wi->stream, n);
	if (p == NULL)
		return -ENOMEM;
	wi->stream = p;
	wi->stream_cap = n;
	return 0;
}

/* ---- headers ---- */

static const struct gen_client *
flow_client(const struct gen_wire *wi, const struct gen_flow *f)
{
	return &wi->w->clients[f->client_idx];
}

static const struct th_addr *
flow_server_addr(const struct gen_wire *wi, const struct gen_flow *f)
{
	const struct gen_server *s = &wi->w->servers[f->server_idx];

	return flow_client(wi, f)->is_v6 ? &s->addr6 : &s->addr4;
}

static size_t
l2_size(const struct gen_wire *wi)
{
	return 14 + 4 * wi->w->cfg->vlan_tags;
}

static size_t
l3_hdr_size(const struct gen_wire *wi, const struct gen_flow *f)
{
	return flow_client(wi, f)->is_v6 ? 40 : 20;
}

/* Ethernet header with the flow's VLAN tags. @return its size. */
static size_t
put_l2(const struct gen_wire *wi, uint8_t *p, const struct gen_flow *f, int dir)
{
	const struct gen_client *c = flow_client(wi, f);
	const struct gen_server *s = &wi->w->servers[f->server_idx];
	size_t at = 12;

	memcpy(p, dir == 0 ? s->mac : c->mac, 6);
	memcpy(p + 6, dir == 0 ? c->mac : s->mac, 6);
	if (wi->w->cfg->vlan_tags == 2) {
		th_be_put16(p + at, 0x88a8); /* 802.1ad service tag, then the customer tag */
		th_be_put16(p + at + 2, c->vlan[0]);
		th_be_put16(p + at + 4, 0x8100);
		th_be_put16(p + at + 6, c->vlan[1]);
		at += 8;
	} else if (wi->w->cfg->vlan_tags == 1) {
		th_be_put16(p + at, 0x8100);
		th_be_put16(p + at + 2, c->vlan[0]);
		at += 4;
	}
	th_be_put16(p + at, c->is_v6 ? 0x86dd : 0x0800);
	return at + 2;
}

static void
flow_addrs(const struct gen_wire *wi, const struct gen_flow *f, int dir, const uint8_t **src,
	const uint8_t **dst)
{
	const uint8_t *ca = flow_client(wi, f)->addr.b, *sa = flow_server_addr(wi, f)->b;

	*src = dir == 0 ? ca : sa;
	*dst = dir == 0 ? sa : ca;
}

/* IP header without checksum (IPv4: filled at the end). @return its size. */
static size_t
put_l3(const struct gen_wire *wi, uint8_t *p, const struct gen_flow *f, int dir, uint8_t proto,
	uint32_t payload_size, uint16_t frag_field)
{
	const uint8_t *src, *dst;

	flow_addrs(wi, f, dir, &src, &dst);
	if (flow_client(wi, f)->is_v6) {
		th_be_put32(p, 0x60000000);
		th_be_put16(p + 4, (uint16_t)payload_size);
		p[6] = proto;
		p[7] = 64;
		memcpy(p + 8, src, 16);
		memcpy(p + 24, dst, 16);
		return 40;
	}
	p[0] = 0x45;
	p[1] = 0;
	th_be_put16(p + 2, (uint16_t)(20 + payload_size));
	th_be_put16(p + 4, 0); /* id: set by the caller */
	th_be_put16(p + 6, frag_field);
	p[8] = 64;
	p[9] = proto;
	th_be_put16(p + 10, 0);
	memcpy(p + 12, src + 12, 4);
	memcpy(p + 16, dst + 12, 4);
	return 20;
}

static void
ipv4_finish(uint8_t *ip, uint16_t id)
{
	th_be_put16(ip + 4, id);
	th_be_put16(ip + 10, 0);
	th_be_put16(ip + 10, gen_csum_fold(gen_csum_add(0, ip, 20)));
}

/* Sum of the pseudo header for TCP/UDP over IPv4 or IPv6. */
static uint32_t
pseudo_sum(const uint8_t *ip, bool is_v6, uint8_t proto, uint32_t l4_size)
{
	uint32_t sum;

	if (is_v6)
		sum = gen_csum_add(0, ip + 8, 32);
	else
		sum = gen_csum_add(0, ip + 12, 8);
	return sum + proto + (l4_size >> 16) + (l4_size & 0xffff);
}

static struct gen_frame *
frame_alloc(size_t size)
{
	size_t padded = size < ETH_MIN ? ETH_MIN : size;
	struct gen_frame *fr = malloc(sizeof(*fr) + padded);

	if (fr == NULL)
		return NULL;
	memset(fr, 0, sizeof(*fr));
	fr->size = (uint32_t)padded;
	if (padded > size)
		memset(fr->data + size, 0, padded - size);
	return fr;
}

static uint64_t
gap_ns(uint32_t frame_size)
{
	/* 10 Gb/s: 0.8 ns per byte, with preamble, FCS and inter-frame gap. */
	return ((uint64_t)frame_size + 24) * 8 / 10;
}

/* ---- TCP ---- */

/* Queue one TCP segment; seq/ack/ip id/checksums are finished at pop. */
static int
tcp_frame(struct gen_wire *wi, struct gen_flow *f, int dir, uint64_t ts, uint8_t flags,
	bool has_seq, uint32_t seq, const uint8_t *payload, uint32_t size, uint64_t *gap)
{
	bool is_syn = flags & TH_TCP_SYN;
	uint32_t tcp_size = TCP_HDR + (is_syn ? TCP_SYN_OPTS : 0) + size;
	size_t l2 = l2_size(wi), l3 = l3_hdr_size(wi, f);
	struct gen_frame *fr = frame_alloc(l2 + l3 + tcp_size);
	uint8_t *t;

	if (fr == NULL)
		return -ENOMEM;
	fr->ts_ns = ts;
	fr->flow = f;
	fr->dir = (uint8_t)dir;
	fr->tcp_flags = flags;
	fr->has_seq = has_seq;
	fr->seq = seq;
	fr->l3_offset = (uint16_t)l2;
	fr->l4_offset = (uint16_t)(l2 + l3);
	fr->l3_size = (uint32_t)(l3 + tcp_size);
	put_l2(wi, fr->data, f, dir);
	put_l3(wi, fr->data + l2, f, dir, TH_PKT_L4_TCP, tcp_size, 0x4000 /* DF */);
	t = fr->data + fr->l4_offset;
	th_be_put16(t, dir == 0 ? f->client_port : f->server_port);
	th_be_put16(t + 2, dir == 0 ? f->server_port : f->client_port);
	th_be_put32(t + 4, seq);
	th_be_put32(t + 8, 0);
	t[12] = (uint8_t)(((TCP_HDR + (is_syn ? TCP_SYN_OPTS : 0)) / 4) << 4);
	t[13] = flags;
	/* SYNs carry an unscaled window; later segments the scaled 8 MB one. */
	th_be_put16(t + 14, 0xffff);
	th_be_put16(t + 16, 0);
	th_be_put16(t + 18, 0);
	if (is_syn) {
		uint16_t mss = (uint16_t)(wi->w->cfg->mtu - l3 - TCP_HDR);

		t[20] = 2; /* MSS */
		t[21] = 4;
		th_be_put16(t + 22, mss);
		t[24] = 1; /* NOP */
		t[25] = 3; /* window scale */
		t[26] = 3;
		t[27] = WSCALE;
	}
	if (size > 0)
		memcpy(t + TCP_HDR + (is_syn ? TCP_SYN_OPTS : 0), payload, size);
	if (gap != NULL)
		*gap = gap_ns(fr->size);
	fr->is_tap_lost = wi->is_frame_tap_lost = is_tap_lost(wi);
	if (heap_push(wi, fr) != 0) {
		free(fr);
		return -ENOMEM;
	}
	return 0;
}

static int
tcp_open(struct gen_wire *wi, struct gen_flow *f, uint64_t *t)
{
	struct gen_half *c = &f->half[0], *s = &f->half[1];
	int rc;

	f->is_open = true;
	if (!wi->w->cfg->handshake)
		return 0; /* mid-stream: the first segment is the first data */
	rc = tcp_frame(wi, f, 0, *t, TH_TCP_SYN, true, c->snd_next, NULL, 0, NULL);
	if (rc == 0)
		rc = tcp_frame(wi, f, 1, *t + RTT_NS / 2, TH_TCP_SYN | TH_TCP_ACK, true,
			s->snd_next, NULL, 0, NULL);
	if (rc == 0)
		rc = tcp_frame(wi, f, 0, *t + RTT_NS, TH_TCP_ACK, false, 0, NULL, 0, NULL);
	c->snd_next++;
	s->snd_next++;
	*t += RTT_NS + 1000;
	s->busy_until_ns = *t;
	return rc;
}

/* Append one record with record marking, split in fragments now and then. */
static int
put_record(struct gen_wire *wi, size_t *len, const uint8_t *rec, uint32_t size)
{
	struct th_rng *rng = &wi->w->rng;
	uint32_t n_frags = 1, done = 0, i;

	/* The first fragment keeps the whole RPC header (credentials included): a
	 * receiver, tshark's heuristics among them, recognises a record by it. */
	if (size >= 2 * FRAG_HEAD_MIN && wi->w->cfg->rm_frag_share > 0 &&
		gen_rng_chance(rng, wi->w->cfg->rm_frag_share))
		n_frags = 2 + th_rng_below(rng, 2);
	if (stream_reserve(wi, *len + size + 4 * n_frags) != 0)
		return -ENOMEM;
	for (i = 0; i < n_frags; i++) {
		uint32_t part;

		if (i + 1 == n_frags)
			part = size - done;
		else if (i == 0)
			part = FRAG_HEAD_MIN + th_rng_below(rng, (size - FRAG_HEAD_MIN) / 2);
		else
			part = 1 + th_rng_below(rng, (size - done) / 2);

		th_be_put32(wi->stream + *len, part | (i + 1 == n_frags ? 0x80000000u : 0));
		memcpy(wi->stream + *len + 4, rec + done, part);
		*len += 4 + part;
		done += part;
	}
	return 0;
}

static int
tcp_send(struct gen_wire *wi, struct gen_flow *f, int dir, uint64_t t, const uint8_t *const *recs,
	const uint32_t *sizes, uint32_t n, uint64_t *first_ns, uint64_t *last_ns)
{
	struct gen_half *h = &f->half[dir];
	size_t starts[STREAM_RECS_MAX], ends[STREAM_RECS_MAX];
	size_t len = 0, off = 0;
	uint32_t mss = (uint32_t)(wi->w->cfg->mtu - l3_hdr_size(wi, f) - TCP_HDR), i, seg_no = 0;
	int rc;

	if (n > STREAM_RECS_MAX)
		return -EINVAL;
	if (!f->is_open) {
		rc = tcp_open(wi, f, &t);
		if (rc != 0)
			return rc;
	}
	for (i = 0; i < n; i++) {
		starts[i] = len;
		rc = put_record(wi, &len, recs[i], sizes[i]);
		if (rc != 0)
			return rc;
		ends[i] = len;
	}
	while (off < len) {
		uint32_t seg = len - off < mss ? (uint32_t)(len - off) : mss;
		uint8_t flags = TH_TCP_ACK | (off + seg == len ? TH_TCP_PSH : 0);
		uint64_t gap, rto = RTO_NS;

		while (is_lost(wi)) {
			t += rto;
			rto *= 2;
		}
		rc = tcp_frame(
			wi, f, dir, t, flags, true, h->snd_next, wi->stream + off, seg, &gap);
		if (rc != 0)
			return rc;
		for (i = 0; i < n; i++) {
			if (starts[i] >= off && starts[i] < off + seg)
				first_ns[i] = t;
			if (ends[i] - 1 >= off && ends[i] - 1 < off + seg)
				last_ns[i] = t;
			if (wi->is_frame_tap_lost && starts[i] < off + seg && ends[i] > off)
				wi->tap_mask |= 1u << i;
		}
		h->snd_next += seg;
		off += seg;
		t += gap;
		/* The receiver acknowledges long transfers as they arrive (delayed ACK). */
		if (++seg_no % ACK_EVERY == 0 && off < len && !is_lost(wi)) {
			rc = tcp_frame(wi, f, !dir, t + 2000, TH_TCP_ACK, false, 0, NULL, 0, NULL);
			if (rc != 0)
				return rc;
		}
	}
	h->busy_until_ns = t;
	return 0;
}

int
gen_wire_close(struct gen_wire *wi, struct gen_flow *f, uint64_t t0)
{
	struct gen_half *c = &f->half[0], *s = &f->half[1];
	uint64_t t = t0;
	int rc;

	if (f->l4 != TH_PKT_L4_TCP || !f->is_open || f->is_closed)
		return 0;
	if (t < c->busy_until_ns)
		t = c->busy_until_ns;
	if (t < s->busy_until_ns)
		t = s->busy_until_ns;
	f->is_closed = true;
	rc = tcp_frame(wi, f, 0, t, TH_TCP_FIN | TH_TCP_ACK, true, c->snd_next, NULL, 0, NULL);
	if (rc == 0)
		rc = tcp_frame(wi, f, 1, t + RTT_NS / 2, TH_TCP_FIN | TH_TCP_ACK, true, s->snd_next,
			NULL, 0, NULL);
	if (rc == 0)
		rc = tcp_frame(wi, f, 0, t + RTT_NS, TH_TCP_ACK, false, 0, NULL, 0, NULL);
	c->snd_next++;
	s->snd_next++;
	c->busy_until_ns = t + RTT_NS + 1000;
	s->busy_until_ns = t + RTT_NS;
	return rc;
}

/* ---- UDP ---- */

static int
udp_frame(struct gen_wire *wi, struct gen_flow *f, int dir, uint64_t ts, const uint8_t *part,
	uint32_t size, uint32_t frag_off, bool has_more, bool is_frag, uint32_t ident,
	uint64_t *gap)
{
	bool is_v6 = flow_client(wi, f)->is_v6;
	size_t l2 = l2_size(wi), l3 = l3_hdr_size(wi, f) + (is_v6 && is_frag ? 8 : 0);
	struct gen_frame *fr = frame_alloc(l2 + l3 + size);
	uint8_t *ip;

	if (fr == NULL)
		return -ENOMEM;
	fr->ts_ns = ts;
	fr->dir = (uint8_t)dir;
	fr->l3_offset = (uint16_t)l2;
	fr->l4_offset = (uint16_t)(l2 + l3);
	fr->l3_size = (uint32_t)(l3 + size);
	put_l2(wi, fr->data, f, dir);
	ip = fr->data + l2;
	if (is_v6) {
		put_l3(wi, ip, f, dir, is_frag ? 44 : TH_PKT_L4_UDP,
			(uint32_t)(size + (is_frag ? 8 : 0)), 0);
		if (is_frag) {
			ip[40] = TH_PKT_L4_UDP;
			ip[41] = 0;
			th_be_put16(ip + 42, (uint16_t)(frag_off | (has_more ? 1 : 0)));
			th_be_put32(ip + 44, ident);
		}
	} else {
		put_l3(wi, ip, f, dir, TH_PKT_L4_UDP, size,
			(uint16_t)((has_more ? 0x2000 : 0) | (frag_off >> 3)));
		ipv4_finish(ip, (uint16_t)ident);
	}
	memcpy(fr->data + fr->l4_offset, part, size);
	*gap = gap_ns(fr->size);
	fr->is_tap_lost = wi->is_frame_tap_lost = is_tap_lost(wi);
	if (heap_push(wi, fr) != 0) {
		free(fr);
		return -ENOMEM;
	}
	return 0;
}

static int
udp_send(struct gen_wire *wi, struct gen_flow *f, int dir, uint64_t t, const uint8_t *rec,
	uint32_t size, uint64_t *first_ns, uint64_t *last_ns, bool *is_tap_damaged)
{
	struct gen_half *h = &f->half[dir];
	bool is_v6 = flow_client(wi, f)->is_v6;
	uint32_t dlen = UDP_HDR + size, mtu = wi->w->cfg->mtu, off, unit, ident;
	uint8_t pseudo[40];
	uint8_t *u;
	uint32_t sum;
	uint64_t gap;
	int rc;

	if (dlen > 65535 - 48 || stream_reserve(wi, dlen) != 0)
		return -EINVAL;
	u = wi->stream;
	th_be_put16(u, dir == 0 ? f->client_port : f->server_port);
	th_be_put16(u + 2, dir == 0 ? f->server_port : f->client_port);
	th_be_put16(u + 4, (uint16_t)dlen);
	th_be_put16(u + 6, 0);
	memcpy(u + UDP_HDR, rec, size);
	/* The checksum covers the whole datagram, so it is computed before cutting. */
	put_l3(wi, pseudo, f, dir, TH_PKT_L4_UDP, dlen, 0);
	sum = pseudo_sum(pseudo, is_v6, TH_PKT_L4_UDP, dlen);
	sum = gen_csum_fold(gen_csum_add(sum, u, dlen));
	th_be_put16(u + 6, sum == 0 ? 0xffff : (uint16_t)sum);
	ident = is_v6 ? (uint32_t)f->client_idx << 16 | h->ip_id : h->ip_id;
	h->ip_id++;
	*first_ns = t;
	wi->is_last_lost = is_lost(wi);
	if (wi->is_last_lost) {
		/* Gone before the tap: nothing is queued, the link time is still spent. */
		*last_ns = t;
		h->busy_until_ns = t + gap_ns((uint32_t)(dlen + 64));
		return 0;
	}
	if (dlen <= mtu - l3_hdr_size(wi, f)) {
		rc = udp_frame(wi, f, dir, t, u, dlen, 0, false, false, ident, &gap);
		*last_ns = t;
		*is_tap_damaged = wi->is_frame_tap_lost;
		h->busy_until_ns = t + gap;
		return rc;
	}
	unit = (is_v6 ? mtu - 48 : mtu - 20) & ~7u;
	for (off = 0; off < dlen; off += unit) {
		uint32_t part = dlen - off < unit ? dlen - off : unit;

		rc = udp_frame(
			wi, f, dir, t, u + off, part, off, off + part < dlen, true, ident, &gap);
		if (rc != 0)
			return rc;
		*is_tap_damaged |= wi->is_frame_tap_lost;
		*last_ns = t;
		t += gap;
	}
	h->busy_until_ns = t;
	return 0;
}

int
gen_wire_send(struct gen_wire *wi, struct gen_flow *f, int dir, uint64_t t0,
	const uint8_t *const *recs, const uint32_t *sizes, uint32_t n, uint64_t *first_ns,
	uint64_t *last_ns)
{
	uint64_t t = t0 > f->half[dir].busy_until_ns ? t0 : f->half[dir].busy_until_ns;
	uint32_t i;
	int rc;

	wi->tap_mask = 0;
	if (f->l4 == TH_PKT_L4_TCP)
		return tcp_send(wi, f, dir, t, recs, sizes, n, first_ns, last_ns);
	for (i = 0; i < n; i++) {
		bool is_damaged = false;

		rc = udp_send(wi, f, dir, t, recs[i], sizes[i], &first_ns[i], &last_ns[i],
			&is_damaged);
		if (rc != 0)
			return rc;
		if (is_damaged)
			wi->tap_mask |= 1u << i;
		t = f->half[dir].busy_until_ns;
	}
	return 0;
}

/* ---- output ---- */

/* Fill in what depends on the order frames reach the wire. @return false to drop it. */
static bool
tcp_finish(struct gen_wire *wi, struct gen_frame *fr)
{
	struct gen_flow *f = fr->flow;
	struct gen_half *h = &f->half[fr->dir], *peer = &f->half[!fr->dir];
	uint8_t *ip = fr->data + fr->l3_offset, *t = fr->data + fr->l4_offset;
	bool is_v6 = flow_client(wi, f)->is_v6;
	uint32_t l4_size = fr->l3_size - (fr->l4_offset - fr->l3_offset);
	uint32_t payload = l4_size - (uint32_t)(t[12] >> 4) * 4;
	uint32_t ack = fr->tcp_flags & TH_TCP_ACK ? peer->emitted_end : 0;
	uint32_t sum;

	if (!fr->has_seq) {
		/* A pure ACK that acknowledges nothing new would read as a duplicate ACK. */
		if (h->has_sent_ack && ack == h->last_ack)
			return false;
		fr->seq = h->emitted_end;
	} else {
		h->emitted_end =
			fr->seq + payload + (fr->tcp_flags & (TH_TCP_SYN | TH_TCP_FIN) ? 1 : 0);
	}
	if (fr->tcp_flags & TH_TCP_ACK) {
		h->last_ack = ack;
		h->has_sent_ack = true;
	}
	th_be_put32(t + 4, fr->seq);
	th_be_put32(t + 8, ack);
	if (!is_v6)
		ipv4_finish(ip, h->ip_id++);
	th_be_put16(t + 16, 0);
	sum = pseudo_sum(ip, is_v6, TH_PKT_L4_TCP, l4_size);
	th_be_put16(t + 16, gen_csum_fold(gen_csum_add(sum, t, l4_size)));
	return true;
}

/*
 * Reordering at the tap: a SPAN port merges the two directions of a connection and can
 * let a frame of one direction through after the next frame of the other (a reply before
 * the end of the call it answers). The frame keeps the time it crossed the wire, as a
 * switch that stamps frames at ingress gives it, so the truth holds as it is: only the
 * order of the capture changes. Each TCP frame is held back with chance --tap-reorder
 * when the next frame of its connection already waiting is of the other direction; it is
 * written right after that frame, or before a frame of its own direction should one come
 * first.
 */
static bool
is_tap_late(struct gen_wire *wi, const struct gen_frame *fr)
{
	const struct gen_frame *next = NULL;

	if (wi->w->cfg->tap_reorder <= 0 || fr->flow == NULL ||
		!gen_rng_chance(&wi->reorder_rng, wi->w->cfg->tap_reorder) ||
		wi->n_late == LATE_MAX)
		return false;
	for (uint32_t i = 0; i < wi->n; i++)
		if (wi->heap[i]->flow == fr->flow && (next == NULL || earlier(wi->heap[i], next)))
			next = wi->heap[i];
	return next != NULL && next->dir != fr->dir;
}

/* Take frame @p fr, its flow's held-back one, off the late list. */
static void
late_remove(struct gen_wire *wi, struct gen_frame *fr)
{
	for (uint32_t i = 0; i < wi->n_late; i++) {
		if (wi->late[i] == fr) {
			wi->late[i] = wi->late[--wi->n_late];
			break;
		}
	}
	fr->flow->tap_late = NULL;
}

struct gen_frame *
gen_wire_pop(struct gen_wire *wi, uint64_t until)
{
	struct gen_frame *fr, *late;
	bool is_sent;

	if (wi->ready != NULL) {
		fr = wi->ready;
		wi->ready = NULL;
		return fr;
	}
	while (wi->n > 0 && wi->heap[0]->ts_ns <= until) {
		fr = heap_pop(wi);
		/* A frame the tap misses still moves the hosts' seq/ack state: finish it first. */
		is_sent = fr->flow == NULL || tcp_finish(wi, fr);
		late = fr->flow != NULL ? fr->flow->tap_late : NULL;
		if (is_sent && fr->is_tap_lost)
			wi->tap_lost++;
		if (!is_sent || fr->is_tap_lost) {
			free(fr);
			fr = NULL;
		}
		if (late != NULL) {
			/* The connection's next frame: the held-back one goes after it if it is
			 * of the other direction, else (or with none written) first. */
			late_remove(wi, late);
			if (fr != NULL && fr->dir != late->dir) {
				wi->tap_reordered++;
				wi->ready = late;
				return fr;
			}
			wi->ready = fr;
			return late;
		}
		if (fr == NULL)
			continue;
		if (is_tap_late(wi, fr)) {
			fr->flow->tap_late = fr;
			wi->late[wi->n_late++] = fr;
			continue;
		}
		return fr;
	}
	return NULL;
}

/*
 * Copies at the tap: a mirror port that sees a frame twice (a SPAN session of both the
 * client's and the server's switch ports, or of one port's rx and tx) delivers the second
 * copy byte for byte the same, a few microseconds after the first. The copy goes back in
 * the heap as a finished frame without a flow: its headers are not filled in again, tap
 * reordering neither holds it back nor takes it for its connection's next frame, and it is
 * written in time order, after whatever else was stamped in between. The draws come from a
 * stream of their own and nothing the hosts do depends on them, so a seed's traffic and
 * its truth are the same with or without copies.
 */
int
gen_wire_tap_copy(struct gen_wire *wi, const struct gen_frame *fr)
{
	const uint32_t span = TH_GEN_TAP_DUP_DELAY_MAX_NS - TH_GEN_TAP_DUP_DELAY_MIN_NS + 1;
	struct gen_frame *copy;
	uint64_t delay;

	if (wi->w->cfg->tap_dup <= 0 || fr->is_tap_copy ||
		!gen_rng_chance(&wi->dup_rng, wi->w->cfg->tap_dup))
		return 0;
	delay = TH_GEN_TAP_DUP_DELAY_MIN_NS + th_rng_below(&wi->dup_rng, span);
	copy = malloc(sizeof(*copy) + fr->size);
	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, fr, sizeof(*copy) + fr->size);
	copy->ts_ns = fr->ts_ns + delay;
	copy->flow = NULL;
	copy->is_tap_copy = true;
	if (heap_push(wi, copy) != 0) {
		free(copy);
		return -ENOMEM;
	}
	wi->tap_copies++;
	return 0;
}

void
gen_wire_release(struct gen_wire *wi, struct gen_frame *fr)
{
	(void)wi;
	free(fr);
}
