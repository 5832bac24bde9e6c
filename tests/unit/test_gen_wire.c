/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The generator's output checked by an independent reader written here:
 * same seed gives the same bytes; frames in time order; every IPv4, TCP and
 * UDP checksum right; TCP sequence numbers continuous per direction and no
 * ACK of data not yet sent; and every RPC message the ground truth lists is
 * on the wire (record marking over TCP, first fragments over UDP), with
 * the same xid, in the same number.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_gen.h"

#define FLOWS_MAX 512
#define XIDS_MAX 200000

static uint32_t
get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t
csum(uint32_t sum, const uint8_t *p, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size; i += 2)
		sum += get16(p + i);
	if (size & 1)
		sum += (uint32_t)p[size - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* One direction of a TCP conversation, as a record-marking parser sees it. */
struct dir_state {
	uint8_t key[36]; /**< src, dst addresses and ports */
	bool is_used;
	bool has_seq;
	uint32_t next_seq; /**< expected next sequence number */
	uint8_t hdr[4];    /**< record-marking header being collected */
	uint32_t hdr_have;
	uint32_t frag_left; /**< fragment bytes still to come */
	bool is_last_frag;
	bool is_record_start; /**< the next fragment begins a record */
	uint8_t xid[4];       /**< first bytes of the record */
	uint32_t xid_have;
};

struct checker {
	uint64_t hash; /**< FNV-1a over all frames and timestamps */
	uint64_t last_ts;
	uint64_t frames;
	uint64_t bad_csum;
	uint64_t bad_order;
	uint64_t seq_gaps;
	uint64_t acks_ahead;
	uint64_t messages; /**< RPC messages seen on the wire */
	uint32_t *wire_xids;
	uint32_t n_wire_xids;
	uint32_t *truth_xids;
	uint32_t n_truth;
	uint64_t last_op_ns;
	uint64_t ops_out_of_order;
	uint64_t ops_bad_times;
	struct dir_state dirs[FLOWS_MAX];
};

static struct dir_state *
dir_find(struct checker *k, const uint8_t *key)
{
	unsigned int i;

	for (i = 0; i < FLOWS_MAX; i++) {
		if (!k->dirs[i].is_used) {
			k->dirs[i].is_used = true;
			k->dirs[i].is_record_start = true;
			memcpy(k->dirs[i].key, key, 36);
			return &k->dirs[i];
		}
		if (memcmp(k->dirs[i].key, key, 36) == 0)
			return &k->dirs[i];
	}
	fail_msg("more than %d flow directions", FLOWS_MAX);
	return NULL;
}

static void
note_xid(struct checker *k, const uint8_t *p)
{
	assert_true(k->n_wire_xids < XIDS_MAX);
	k->wire_xids[k->n_wire_xids++] = get32(p);
	k->messages++;
}

/* Feed stream bytes through record marking; count records, keep their xids. */
static void
rm_feed(struct checker *k, struct dir_state *d, const uint8_t *p, uint32_t len)
{
	while (len > 0) {
		if (d->frag_left == 0 && d->hdr_have < 4) {
			d->hdr[d->hdr_have++] = *p++;
			len--;
			if (d->hdr_have == 4) {
				uint32_t h = get32(d->hdr);

				d->frag_left = h & 0x7fffffff;
				d->is_last_frag = h >> 31;
				d->hdr_have = 0;
				assert_true(d->frag_left > 0);
			}
			continue;
		}
		while (len > 0 && d->frag_left > 0) {
			if (d->is_record_start && d->xid_have < 4)
				d->xid[d->xid_have++] = *p;
			p++;
			len--;
			d->frag_left--;
		}
		if (d->frag_left == 0 && d->is_last_frag) {
			assert_int_equal(d->xid_have, 4);
			note_xid(k, d->xid);
			d->xid_have = 0;
			d->is_record_start = true;
			d->is_last_frag = false;
		} else if (d->frag_left == 0) {
			d->is_record_start = d->xid_have < 4;
		}
	}
}

static void
check_tcp(struct checker *k, const uint8_t *ip, bool is_v6, const uint8_t *t, uint32_t l4_size)
{
	uint8_t key[36], rkey[36];
	const uint8_t *src = is_v6 ? ip + 8 : ip + 12, *dst = is_v6 ? ip + 24 : ip + 16;
	size_t alen = is_v6 ? 16 : 4;
	uint32_t hlen = (uint32_t)(t[12] >> 4) * 4, payload = l4_size - hlen;
	uint32_t seq = get32(t + 4), ack = get32(t + 8);
	uint8_t flags = t[13];
	struct dir_state *d, *r;

	memset(key, 0, sizeof(key));
	memset(rkey, 0, sizeof(rkey));
	memcpy(key, src, alen);
	memcpy(key + 16, dst, alen);
	memcpy(key + 32, t, 4);
	memcpy(rkey, dst, alen);
	memcpy(rkey + 16, src, alen);
	memcpy(rkey + 32, t + 2, 2);
	memcpy(rkey + 34, t, 2);
	d = dir_find(k, key);
	r = dir_find(k, rkey);
	if (d->has_seq && seq != d->next_seq)
		k->seq_gaps++;
	d->has_seq = true;
	d->next_seq = seq + payload + ((flags & 0x03) ? 1 : 0);
	/* An ACK beyond what the peer sent acknowledges data never on the wire. */
	if ((flags & 0x10) && r->has_seq && (int32_t)(ack - r->next_seq) > 0)
		k->acks_ahead++;
	rm_feed(k, d, t + hlen, payload);
}

static int
on_frame(void *ctx, uint64_t ts_ns, const uint8_t *f, uint32_t size)
{
	struct checker *k = ctx;
	uint32_t i, off = 12, type, proto, l4_size, l3_len, sum;
	const uint8_t *ip, *l4;
	bool is_v6, is_first = true, is_frag = false;

	for (i = 0; i < size; i++)
		k->hash = (k->hash ^ f[i]) * 0x100000001b3ull;
	k->hash = (k->hash ^ ts_ns) * 0x100000001b3ull;
	if (ts_ns < k->last_ts)
		k->bad_order++;
	k->last_ts = ts_ns;
	k->frames++;
	assert_true(size >= 60);
	type = get16(f + off);
	while (type == 0x8100 || type == 0x88a8) {
		off += 4;
		type = get16(f + off);
	}
	ip = f + off + 2;
	is_v6 = type == 0x86dd;
	assert_true(type == 0x0800 || is_v6);
	if (is_v6) {
		proto = ip[6];
		l3_len = 40;
		l4_size = get16(ip + 4);
		if (proto == 44) {
			is_frag = true;
			is_first = (get16(ip + 42) & 0xfff8) == 0;
			proto = ip[40];
			l3_len = 48;
			l4_size -= 8;
		}
	} else {
		if (csum(0, ip, 20) != 0xffff)
			k->bad_csum++;
		proto = ip[9];
		l3_len = 20;
		l4_size = get16(ip + 2) - 20;
		is_frag = (get16(ip + 6) & 0x3fff) != 0;
		is_first = (get16(ip + 6) & 0x1fff) == 0;
	}
	l4 = ip + l3_len;
	assert_true(off + 2 + l3_len + l4_size <= size);
	if (proto == 6) {
		sum = is_v6 ? csum(0, ip + 8, 32) : csum(0, ip + 12, 8);
		if (csum(sum + 6 + l4_size, l4, l4_size) != 0xffff)
			k->bad_csum++;
		check_tcp(k, ip, is_v6, l4, l4_size);
		return 0;
	}
	assert_int_equal(proto, 17);
	if (!is_frag) {
		sum = is_v6 ? csum(0, ip + 8, 32) : csum(0, ip + 12, 8);
		if (csum(sum + 17 + l4_size, l4, l4_size) != 0xffff)
			k->bad_csum++;
	}
	if (is_first)
		note_xid(k, l4 + 8);
	return 0;
}

static int
on_op(void *ctx, const struct th_op *op, unsigned int tap_lost)
{
	struct checker *k = ctx;

	/* No tap loss here: the capture sees every RPC whole. */
	assert_int_equal(tap_lost, 0);
	if (op->call_first_ns < k->last_op_ns)
		k->ops_out_of_order++;
	k->last_op_ns = op->call_first_ns;
	if (op->call_last_ns < op->call_first_ns || op->reply_first_ns <= op->call_last_ns ||
		op->reply_last_ns < op->reply_first_ns)
		k->ops_bad_times++;
	assert_true(k->n_truth + 2 <= XIDS_MAX);
	/* Call and reply carry the same xid. */
	k->truth_xids[k->n_truth++] = op->xid;
	k->truth_xids[k->n_truth++] = op->xid;
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static struct checker *
run(const struct th_gen_config *cfg, struct th_gen_stats *st)
{
	struct checker *k = calloc(1, sizeof(*k));
	struct th_gen_sink sink = {on_frame, on_op, k};

	assert_non_null(k);
	k->hash = 0xcbf29ce484222325ull;
	k->wire_xids = malloc(XIDS_MAX * sizeof(uint32_t));
	k->truth_xids = malloc(XIDS_MAX * sizeof(uint32_t));
	assert_non_null(k->wire_xids);
	assert_non_null(k->truth_xids);
	assert_int_equal(th_gen_run(cfg, &sink, st), 0);
	return k;
}

static void
checker_free(struct checker *k)
{
	free(k->wire_xids);
	free(k->truth_xids);
	free(k);
}

/* Everything a decoder and tshark rely on, for one configuration. */
static void
check_config(const struct th_gen_config *cfg)
{
	struct th_gen_stats st;
	struct checker *k = run(cfg, &st);
	uint32_t i;

	assert_int_equal(st.rpcs, cfg->ops);
	assert_int_equal(st.packets, k->frames);
	assert_int_equal(k->bad_order, 0);
	assert_int_equal(k->bad_csum, 0);
	assert_int_equal(k->seq_gaps, 0);
	assert_int_equal(k->acks_ahead, 0);
	assert_int_equal(k->ops_out_of_order, 0);
	assert_int_equal(k->ops_bad_times, 0);
	assert_int_equal(k->messages, 2 * cfg->ops);
	assert_int_equal(k->n_wire_xids, k->n_truth);
	qsort(k->wire_xids, k->n_wire_xids, sizeof(uint32_t), cmp_u32);
	qsort(k->truth_xids, k->n_truth, sizeof(uint32_t), cmp_u32);
	for (i = 0; i < k->n_truth; i++)
		assert_int_equal(k->wire_xids[i], k->truth_xids[i]);
	checker_free(k);
}

static void
test_same_seed_same_bytes(void **state)
{
	struct th_gen_config cfg;
	struct th_gen_stats st;
	struct checker *a, *b, *c;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 3000;
	a = run(&cfg, &st);
	b = run(&cfg, &st);
	cfg.seed = 2;
	c = run(&cfg, &st);
	assert_true(a->frames > 3000);
	assert_int_equal(a->frames, b->frames);
	assert_true(a->hash == b->hash);
	assert_true(a->hash != c->hash);
	checker_free(a);
	checker_free(b);
	checker_free(c);
}

/* Frames and RPCs a tap-loss run produced; the stream checks above expect every frame. */
struct tap_count {
	uint64_t frames;
	uint64_t rpcs;
	uint64_t damaged;
};

static int
tap_frame(void *ctx, uint64_t ts_ns, const uint8_t *f, uint32_t size)
{
	(void)ts_ns;
	(void)f;
	(void)size;
	((struct tap_count *)ctx)->frames++;
	return 0;
}

static int
tap_op(void *ctx, const struct th_op *op, unsigned int tap_lost)
{
	struct tap_count *n = ctx;

	(void)op;
	n->rpcs++;
	n->damaged += tap_lost != 0;
	return 0;
}

static void
tap_run(const struct th_gen_config *cfg, struct th_gen_stats *st, struct tap_count *n)
{
	struct th_gen_sink sink = {.frame = tap_frame, .ctx = n, .op = tap_op};

	memset(n, 0, sizeof(*n));
	assert_int_equal(th_gen_run(cfg, &sink, st), 0);
}

/* Tap loss leaves frames out of the capture without changing what the hosts sent. */
static void
test_tap_loss_drops_frames_only(void **state)
{
	struct th_gen_config cfg;
	struct th_gen_stats st0, st;
	struct tap_count a, b;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 3000;
	tap_run(&cfg, &st0, &a);
	cfg.tap_loss = 0.02;
	tap_run(&cfg, &st, &b);
	assert_int_equal(st0.tap_lost, 0);
	assert_int_equal(a.damaged, 0);
	assert_int_equal(b.rpcs, a.rpcs);
	assert_true(st.tap_lost > 0);
	assert_int_equal(b.frames + st.tap_lost, a.frames);
	assert_int_equal(b.damaged, st.tap_damaged_rpcs);
	assert_true(b.damaged > 0 && b.damaged <= st.tap_lost * 2);
}

/* What a tap-reorder run wrote: frames with their times, in and out of order, and the truth. */
struct reorder_sum {
	uint64_t frames;
	uint64_t set;   /* sum of each frame's hash: the same whatever the order */
	uint64_t order; /* a hash of the sequence of frames */
	uint64_t truth; /* a hash of the sequence of truth RPCs with their times */
};

static uint64_t
fnv(uint64_t h, const void *p, size_t size)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < size; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int
reorder_frame(void *ctx, uint64_t ts_ns, const uint8_t *f, uint32_t size)
{
	struct reorder_sum *n = ctx;
	uint64_t h = fnv(fnv(0xcbf29ce484222325ull, &ts_ns, sizeof(ts_ns)), f, size);

	n->frames++;
	n->set += h;
	n->order = fnv(n->order, &h, sizeof(h));
	return 0;
}

static int
reorder_op(void *ctx, const struct th_op *op, unsigned int tap_lost)
{
	struct reorder_sum *n = ctx;
	uint64_t t[4] = {
		op->call_first_ns, op->call_last_ns, op->reply_first_ns, op->reply_last_ns};

	n->truth = fnv(fnv(n->truth, &op->xid, sizeof(op->xid)), t, sizeof(t));
	n->truth = fnv(n->truth, &tap_lost, sizeof(tap_lost));
	return 0;
}

/*
 * Tap reordering writes the same frames with the same times, some after the next frame of
 * the other direction; the truth (times included) is unchanged.
 */
static void
test_tap_reorder_moves_frames_only(void **state)
{
	struct th_gen_config cfg;
	struct th_gen_stats st0, st;
	struct reorder_sum a = {0}, b = {0};
	struct th_gen_sink sa = {.frame = reorder_frame, .ctx = &a, .op = reorder_op};
	struct th_gen_sink sb = {.frame = reorder_frame, .ctx = &b, .op = reorder_op};

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 3000;
	assert_int_equal(th_gen_run(&cfg, &sa, &st0), 0);
	cfg.tap_reorder = 0.05;
	assert_int_equal(th_gen_run(&cfg, &sb, &st), 0);
	assert_int_equal(st0.tap_reordered, 0);
	assert_true(st.tap_reordered > 0);
	assert_int_equal(b.frames, a.frames);
	assert_true(b.set == a.set);
	assert_true(b.order != a.order);
	assert_true(b.truth == a.truth);
	assert_true(st.first_ns == st0.first_ns && st.last_ns == st0.last_ns);
}

/* A frame a run wrote, with its time. */
struct dup_frame {
	uint64_t ts_ns;
	uint32_t size;
	uint8_t *data;
};

/* Every frame a run wrote, and hashes of its truth and of its opens. */
struct dup_run {
	struct dup_frame *frames;
	uint64_t n;
	uint64_t cap;
	struct reorder_sum sum; /* its truth: the RPCs with their times and tap marks */
	uint64_t opens;         /* a hash of the opens as --opens writes them */
};

static int
dup_frame(void *ctx, uint64_t ts_ns, const uint8_t *f, uint32_t size)
{
	struct dup_run *r = ctx;
	struct dup_frame *d;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4096;
		r->frames = realloc(r->frames, r->cap * sizeof(*r->frames));
		assert_non_null(r->frames);
	}
	d = &r->frames[r->n++];
	d->ts_ns = ts_ns;
	d->size = size;
	d->data = malloc(size);
	assert_non_null(d->data);
	memcpy(d->data, f, size);
	return 0;
}

static int
dup_op(void *ctx, const struct th_op *op, unsigned int tap_lost)
{
	return reorder_op(&((struct dup_run *)ctx)->sum, op, tap_lost);
}

static int
dup_open(void *ctx, const struct th_gen_open *o)
{
	struct dup_run *r = ctx;
	char line[1024];
	int n = th_gen_open_format(o, line, sizeof(line));

	assert_true(n > 0 && (size_t)n < sizeof(line));
	r->opens = fnv(r->opens, line, (size_t)n);
	return 0;
}

static void
dup_free(struct dup_run *r)
{
	for (uint64_t i = 0; i < r->n; i++)
		free(r->frames[i].data);
	free(r->frames);
}

/* What a frame is, for the copies' variety: TCP with data, TCP without, UDP, IP fragment. */
enum dup_kind { DUP_TCP_DATA, DUP_TCP_EMPTY, DUP_UDP, DUP_FRAG, DUP__KIND_COUNT };

static enum dup_kind
dup_kind(const struct dup_frame *d)
{
	const uint8_t *f = d->data;
	uint32_t off = 12, type = get16(f + off), l4_size;
	const uint8_t *ip;

	while (type == 0x8100 || type == 0x88a8) {
		off += 4;
		type = get16(f + off);
	}
	ip = f + off + 2;
	if (type == 0x86dd) {
		if (ip[6] == 44)
			return DUP_FRAG;
		if (ip[6] == 17)
			return DUP_UDP;
		l4_size = get16(ip + 4);
		return l4_size > (uint32_t)(ip[40 + 12] >> 4) * 4 ? DUP_TCP_DATA : DUP_TCP_EMPTY;
	}
	if ((get16(ip + 6) & 0x3fff) != 0)
		return DUP_FRAG;
	if (ip[9] == 17)
		return DUP_UDP;
	l4_size = get16(ip + 2) - 20;
	return l4_size > (uint32_t)(ip[20 + 12] >> 4) * 4 ? DUP_TCP_DATA : DUP_TCP_EMPTY;
}

/*
 * Run @p cfg without and with tap copies. With them, the pcap is the same frames at the
 * same times in the same order, plus st.tap_copies more, each byte for byte a frame written
 * before it and stamped 1 to 50 us later, of every kind; the truth and the opens are the
 * same. @return the copies.
 */
static uint64_t
check_tap_dup(struct th_gen_config *cfg, bool is_time_ordered)
{
	struct th_gen_stats st0, st;
	struct dup_run a = {0}, b = {0};
	struct th_gen_sink sa = {dup_frame, dup_op, &a, dup_open};
	struct th_gen_sink sb = {dup_frame, dup_op, &b, dup_open};
	uint64_t i, j = 0, copies = 0, kinds[DUP__KIND_COUNT] = {0};

	cfg->tap_dup = 0;
	assert_int_equal(th_gen_run(cfg, &sa, &st0), 0);
	cfg->tap_dup = 0.05;
	assert_int_equal(th_gen_run(cfg, &sb, &st), 0);
	assert_int_equal(st0.tap_copies, 0);
	assert_true(st.tap_copies > 0);
	assert_int_equal(b.n, a.n + st.tap_copies);
	assert_int_equal(st.packets, b.n);
	assert_int_equal(st.rpcs, st0.rpcs);
	assert_true(b.sum.truth == a.sum.truth);
	assert_true(b.opens == a.opens);
	assert_int_equal(st.tap_reordered, st0.tap_reordered);
	for (i = 0; i < b.n; i++) {
		const struct dup_frame *f = &b.frames[i], *g = j < a.n ? &a.frames[j] : NULL;
		uint64_t k;

		if (is_time_ordered && i > 0)
			assert_true(f->ts_ns >= b.frames[i - 1].ts_ns);
		if (g != NULL && g->ts_ns == f->ts_ns && g->size == f->size &&
			memcmp(g->data, f->data, f->size) == 0) {
			j++;
			continue;
		}
		/* Not the next frame of the run without copies: a copy of one written before. */
		for (k = i; k-- > 0;) {
			const struct dup_frame *e = &b.frames[k];

			if (e->size == f->size && memcmp(e->data, f->data, f->size) == 0 &&
				f->ts_ns >= e->ts_ns + TH_GEN_TAP_DUP_DELAY_MIN_NS &&
				f->ts_ns <= e->ts_ns + TH_GEN_TAP_DUP_DELAY_MAX_NS)
				break;
			if (is_time_ordered && e->ts_ns + TH_GEN_TAP_DUP_DELAY_MAX_NS < f->ts_ns) {
				k = 0;
				fail_msg("frame %llu is neither the next original nor a copy",
					(unsigned long long)i);
			}
		}
		assert_true(k < i);
		kinds[dup_kind(f)]++;
		copies++;
	}
	assert_int_equal(j, a.n);
	assert_int_equal(copies, st.tap_copies);
	for (i = 0; i < DUP__KIND_COUNT; i++)
		assert_true(cfg->udp_share == 0 && i >= DUP_UDP ? kinds[i] == 0 : kinds[i] > 0);
	dup_free(&a);
	dup_free(&b);
	return copies;
}

/* Tap copies add frames and change nothing else, on both workloads and with reordering. */
static void
test_tap_dup_adds_copies_only(void **state)
{
	struct th_gen_config cfg;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 3000;
	cfg.ipv6_share = 0.3;
	cfg.vlan_tags = 1;
	check_tap_dup(&cfg, true);
	/* A frame the mirror moved (--tap-reorder) is copied where it is written. */
	cfg.tap_reorder = 0.05;
	check_tap_dup(&cfg, false);
	th_gen_config_init(&cfg);
	cfg.workload = TH_GEN_WORKLOAD_USERS;
	cfg.hours = 0.02;
	cfg.udp_share = 0;
	cfg.ipv6_share = 0;
	check_tap_dup(&cfg, true);
}

static void
test_default_mix(void **state)
{
	struct th_gen_config cfg;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 4000;
	cfg.clients = 12;
	check_config(&cfg);
}

static void
test_meta_qinq_pipelined(void **state)
{
	struct th_gen_config cfg;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 5000;
	cfg.mix = TH_GEN_MIX_META;
	cfg.vlan_tags = 2;
	cfg.pipeline_share = 0.8;
	check_config(&cfg);
}

static void
test_data_udp_fragments(void **state)
{
	struct th_gen_config cfg;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 400;
	cfg.mix = TH_GEN_MIX_DATA;
	cfg.udp_share = 1.0;
	cfg.ipv6_share = 0.5;
	cfg.vlan_tags = 1;
	check_config(&cfg);
}

static void
test_data_tcp_midstream_rm_frags(void **state)
{
	struct th_gen_config cfg;

	(void)state;
	th_gen_config_init(&cfg);
	cfg.ops = 300;
	cfg.mix = TH_GEN_MIX_DATA;
	cfg.udp_share = 0;
	cfg.handshake = false;
	cfg.rm_frag_share = 0.5;
	cfg.mtu = 9000;
	check_config(&cfg);
}

/* Attribute times a reply carries: nfstime3 holds 32-bit seconds. */
static int
on_op_times(void *ctx, const struct th_op *op, unsigned int tap_lost)
{
	const uint64_t nfstime_end = (UINT64_C(1) << 32) * 1000000000u;
	unsigned int *bad = ctx;

	(void)tap_lost;
	*bad += op->reply.attr.mtime_ns >= nfstime_end || op->reply.attr.ctime_ns >= nfstime_end ||
		op->reply.pre.mtime_ns >= nfstime_end || op->reply.dir_attr.mtime_ns >= nfstime_end;
	return 0;
}

static int
on_frame_none(void *ctx, uint64_t ts_ns, const uint8_t *f, uint32_t size)
{
	(void)ctx, (void)ts_ns, (void)f, (void)size;
	return 0;
}

/*
 * --start 0 (or any time within a year of the epoch): the files the servers start with are
 * older than the start, but no older than the epoch. Their times used to wrap below it to
 * 2554, which nfstime3 cannot carry: the truth then said mtime=18415208074.7 where the wire
 * (and capture) said 1235338890.7. The users workload, with times held at 1 s, still ends.
 */
static void
test_start_at_epoch(void **state)
{
	static const uint64_t starts[] = {0, 1000000000ull, 86400ull * 1000000000u * 40};
	struct th_gen_config cfg;
	struct th_gen_stats st;
	struct th_gen_sink sink;
	unsigned int bad;

	(void)state;
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		for (int users = 0; users < 2; users++) {
			th_gen_config_init(&cfg);
			cfg.start_ns = starts[i];
			cfg.ops = 600;
			if (users) {
				cfg.workload = TH_GEN_WORKLOAD_USERS;
				cfg.hours = 0.02;
			}
			bad = 0;
			sink = (struct th_gen_sink){on_frame_none, on_op_times, &bad};
			assert_int_equal(th_gen_run(&cfg, &sink, &st), 0);
			assert_true(st.rpcs > 100);
			assert_true(st.rpcs < 100000);
			assert_int_equal(bad, 0);
		}
	}
}

static void
test_config_errors(void **state)
{
	struct th_gen_config cfg;
	enum th_gen_mix mix;
	char err[128];

	(void)state;
	th_gen_config_init(&cfg);
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), 0);
	cfg.vlan_tags = 3;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vlan"));
	th_gen_config_init(&cfg);
	cfg.mtu = 100;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	th_gen_config_init(&cfg);
	cfg.udp_share = 1.5;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	th_gen_config_init(&cfg);
	cfg.tap_dup = 0.6;
	assert_int_equal(th_gen_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "tap dup"));
	assert_int_equal(th_gen_mix_parse("meta", &mix), 0);
	assert_int_equal(mix, TH_GEN_MIX_META);
	assert_int_equal(th_gen_mix_parse("bogus", &mix), -EINVAL);
	assert_string_equal(th_gen_mix_name(TH_GEN_MIX_DATA), "data");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_bytes),
		cmocka_unit_test(test_start_at_epoch),
		cmocka_unit_test(test_default_mix),
		cmocka_unit_test(test_meta_qinq_pipelined),
		cmocka_unit_test(test_data_udp_fragments),
		cmocka_unit_test(test_data_tcp_midstream_rm_frags),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_tap_loss_drops_frames_only),
		cmocka_unit_test(test_tap_reorder_moves_frames_only),
		cmocka_unit_test(test_tap_dup_adds_copies_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
