/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "th_bytes.h"
#include "th_nfs.h"
#include "th_rpc.h"

#define FRAG_SLOTS 1024 /* fragmented UDP datagrams followed at once ... */
#define FRAG_WAYS 4     /* ... in sets of this many: two in flight never push each other out */
#define FRAG_LATE_NS 1000000000ull /* a datagram's fragments cross the wire microseconds apart */

/* What a way of the fragment table holds. */
enum frag_state {
	FRAG_FREE,     /* nothing */
	FRAG_EARLY,    /* later fragments of a datagram whose first has not come yet */
	FRAG_PASSED,   /* a datagram whose first fragment came and ends no call */
	FRAG_FOLLOWED, /* a UDP call whose datagram continues in later fragments */
};

/* A UDP datagram split in IP fragments, some of them still to come. */
struct frag_slot {
	struct th_addr src;    /* sender */
	struct th_addr dst;    /* receiver */
	uint32_t id;           /* IP identification */
	uint8_t state;         /* enum frag_state */
	bool is_last_seen;     /* FRAG_EARLY: the last fragment is among those seen */
	uint64_t since_ns;     /* its first fragment's time (FRAG_EARLY: its earliest seen's) */
	uint64_t last_ns;      /* FRAG_EARLY: the latest fragment's time */
	struct th_xid_key key; /* FRAG_FOLLOWED: the call it belongs to */
};

#define COPY_SET_BITS 10 /* 1024 sets of ... */
#define COPY_WAYS 4      /* ... 4 frames remembered to find their copies */
#define COPY_WORDS 8     /* 8-byte words of a frame compared (is_copy() names each) */

/* Frames seen lately, by a hash of what a copy of each would have to match (is_copy()). */
struct copy_set {
	_Alignas(64) uint64_t hash[COPY_WAYS]; /* 0: a free way; a set is one cache line */
	uint64_t ts_ns[COPY_WAYS];             /* when each was seen */
};

struct th_decode {
	struct th_decode_stats s;           /* counters (flow/xid parts filled on read) */
	const struct th_pkt_meta *frag;     /* the first fragment being decoded, or NULL */
	struct frag_slot *frag_early;       /* the way holding its earlier later fragments */
	struct frag_slot frags[FRAG_SLOTS]; /* fragmented datagrams, by frag_set_of() */
	struct th_flow_table *flows;        /* TCP streams */
	struct th_xid_table *xids;          /* calls waiting for replies */
	th_decode_op_cb emit;               /* op consumer */
	th_decode_dirent_cb dirent;         /* READDIRPLUS entry consumer, or NULL */
	const struct th_op *dirent_op;      /* the op whose reply is being walked */
	void *ctx;                          /* for emit */
	uint64_t now_ns;                    /* time of the frame being decoded */
	uint64_t rpc_ports[65536 / 64];     /* ports known to serve RPC, one bit each */
	uint64_t copy_window_ns;            /* see th_decode_config; 0: no copies looked for */
	struct copy_set copies[1u << COPY_SET_BITS]; /* frames seen lately, for their copies */
	struct th_srt srt;                  /* response times of matched RPCs (last: 1 MB) */
};

void
th_decode_config_defaults(struct th_decode_config *cfg)
{
	cfg->flows = 16384;
	cfg->calls = 65536;
	cfg->flow_idle_ns = 300ull * 1000000000ull;
	cfg->call_timeout_ns = 60ull * 1000000000ull;
	cfg->gap_call_timeout_ns = 2ull * 1000000000ull;
	cfg->listings = 32;
	cfg->copy_window_ns = 1000000; /* 1 ms */
}

static inline bool
is_rpc_port(const struct th_decode *d, uint16_t port)
{
	return (d->rpc_ports[port >> 6] >> (port & 63)) & 1;
}

static void
learn_port(struct th_decode *d, uint16_t port)
{
	if (port == 0 || is_rpc_port(d, port))
		return;
	d->rpc_ports[port >> 6] |= 1ull << (port & 63);
	d->s.ports_learned++;
}

static enum th_decode_prog
prog_slot(uint32_t prog, uint32_t vers)
{
#define TH_DECODE_PX(name, p, v)                                                                   \
	if (prog == (p) && vers == (v))                                                            \
		return TH_DECODE_PROG_##name;
	TH_DECODE_PROG_LIST(TH_DECODE_PX)
#undef TH_DECODE_PX
	return TH_DECODE_PROG_OTHER;
}

static inline uint32_t
proc_slot(uint32_t proc)
{
	return proc < TH_DECODE_PROCS ? proc : TH_DECODE_PROCS - 1;
}

static void
emit_op(struct th_decode *d, const struct th_op *op)
{
	if (op->kind == TH_OP_MATCHED) {
		d->s.ops_matched++;
		struct th_srt_proc p = {op->prog, op->vers, op->proc};

		th_srt_record(&d->srt, &p, op->call_last_ns, op->reply_first_ns);
	} else if (op->kind == TH_OP_CALL_ONLY)
		d->s.ops_call_only++;
	else
		d->s.ops_reply_only++;
	d->emit(d->ctx, op);
}

static void
on_xid_leave(void *ctx, struct th_op *op)
{
	emit_op(ctx, op);
}

/* Endpoints of one record, in the direction it travelled. */
struct endpoints {
	const struct th_addr *src;
	const struct th_addr *dst;
	uint16_t sport;
	uint16_t dport;
	uint8_t transport;
};

static void
count_args(struct th_decode *d, enum th_nfs_status st)
{
	switch (st) {
	case TH_NFS_SHORT:
		d->s.args_short++;
		break;
	case TH_NFS_MALFORMED:
		d->s.args_malformed++;
		break;
	case TH_NFS_UNKNOWN_PROC:
		d->s.unknown_proc++;
		break;
	case TH_NFS_UNKNOWN_PROG:
		d->s.unknown_prog++;
		break;
	case TH_NFS_V4_COMPOUND:
		d->s.nfs4_compounds++;
		break;
	default:
		break;
	}
}

/* The first way of the set a datagram's fragments are followed in. */
static inline uint32_t
frag_set_of(const struct th_addr *src, uint32_t id)
{
	uint32_t h = id * 0x9e3779b1u;

	h ^= (uint32_t)src->b[15] << 8 | src->b[14];
	return ((h ^ (h >> 16)) & (FRAG_SLOTS / FRAG_WAYS - 1)) * FRAG_WAYS;
}

/* The way of @p set that holds @p m's datagram, or NULL. */
static struct frag_slot *
frag_find(struct frag_slot *set, const struct th_pkt_meta *m)
{
	for (unsigned int w = 0; w < FRAG_WAYS; w++)
		if (set[w].state != FRAG_FREE && set[w].id == m->frag_id &&
			memcmp(&set[w].src, &m->src, sizeof(m->src)) == 0 &&
			memcmp(&set[w].dst, &m->dst, sizeof(m->dst)) == 0)
			return &set[w];
	return NULL;
}

/* Whether @p fs began over a second before @p now_ns: IP IDs wrap, so it is another datagram. */
static inline bool
frag_is_stale(const struct frag_slot *fs, uint64_t now_ns)
{
	return (int64_t)(now_ns - fs->since_ns) > (int64_t)FRAG_LATE_NS;
}

/* Give up what way @p fs held (if anything) before it takes another datagram; count the loss. */
static void
frag_evict(struct th_decode *d, struct frag_slot *fs)
{
	bool is_stale = frag_is_stale(fs, d->now_ns);

	if (fs->state == FRAG_FOLLOWED) {
		if (is_stale)
			d->s.frags_unfinished++;
		else
			d->s.frags_displaced++;
	} else if (fs->state == FRAG_EARLY && !is_stale) {
		d->s.frags_early_lost++;
	}
	fs->state = FRAG_FREE;
}

/*
 * A way of @p set for a datagram that ends no call: a free one, else the oldest that follows
 * no call either; NULL if all four follow calls, which are never pushed out for it.
 */
static struct frag_slot *
frag_way_unfollowed(struct frag_slot *set)
{
	struct frag_slot *fs = NULL;

	for (unsigned int w = 0; w < FRAG_WAYS; w++) {
		if (set[w].state == FRAG_FREE)
			return &set[w];
		if (set[w].state != FRAG_FOLLOWED && (fs == NULL || set[w].since_ns < fs->since_ns))
			fs = &set[w];
	}
	return fs;
}

/*
 * Remember the datagram whose first fragment @p m is, in its set, until its last fragment:
 * with @p key, a call, whose later fragments move its end time; without, a datagram that ends
 * no call (a reply, a call sent again, not RPC), so that its later fragments, in order, find
 * it and are not taken for fragments come before their first. It takes the way that holds it
 * already (its earlier later fragments, or the datagram sent again), else a free one, else
 * the oldest that follows no call; only a call takes the one followed longest, whose last
 * fragment, a second late, never comes (its call ended where it was: counted as unfinished)
 * or, sooner, is still in flight and will not end its call (counted as pushed out). A
 * datagram whose last fragment came before its first is whole: nothing is kept.
 */
static void
frag_hold(struct th_decode *d, const struct th_pkt_meta *m, const struct th_xid_key *key)
{
	struct frag_slot *set = &d->frags[frag_set_of(&m->src, m->frag_id)];
	struct frag_slot *fs = d->frag_early;

	if (fs != NULL && fs->is_last_seen) {
		fs->state = FRAG_FREE;
		return;
	}
	if (fs == NULL)
		fs = frag_find(set, m);
	if (fs != NULL && fs->state == FRAG_FOLLOWED && key == NULL)
		return; /* the first fragment of a followed call once more */
	if (fs == NULL) {
		fs = frag_way_unfollowed(set);
		if (fs == NULL) {
			if (key == NULL)
				return;
			fs = &set[0];
			for (unsigned int w = 1; w < FRAG_WAYS; w++)
				if (set[w].since_ns < fs->since_ns)
					fs = &set[w];
		}
		frag_evict(d, fs);
	}
	fs->src = m->src;
	fs->dst = m->dst;
	fs->id = m->frag_id;
	fs->since_ns = d->now_ns;
	if (key != NULL)
		fs->key = *key;
	fs->state = key != NULL ? FRAG_FOLLOWED : FRAG_PASSED;
}

/*
 * The first fragment of a UDP datagram, decoded as @p rec: if later fragments of it came
 * first, within a second, the datagram spans from the earliest of them to the latest. The
 * way that held them, or NULL.
 */
static struct frag_slot *
frag_first(struct th_decode *d, const struct th_pkt_meta *m, struct th_flow_record *rec)
{
	struct frag_slot *fs = frag_find(&d->frags[frag_set_of(&m->src, m->frag_id)], m);

	if (fs == NULL || fs->state != FRAG_EARLY || frag_is_stale(fs, d->now_ns))
		return NULL;
	d->s.frags_early++;
	if (fs->since_ns < rec->first_ns)
		rec->first_ns = fs->since_ns;
	if (fs->last_ns > rec->last_ns)
		rec->last_ns = fs->last_ns;
	return fs;
}

/*
 * A later fragment of a UDP datagram: the call it belongs to lasts until its last fragment.
 * One whose first fragment has not come (some senders, bonded links and mirror ports send the
 * last first) is remembered in a way that follows no call, so that its first can take the
 * times of the datagram's fragments.
 */
static void
on_later_fragment(struct th_decode *d, const struct th_pkt_meta *m, uint64_t ts_ns)
{
	struct frag_slot *set = &d->frags[frag_set_of(&m->src, m->frag_id)];
	struct frag_slot *fs = frag_find(set, m);
	struct th_op *op;

	if (fs != NULL && frag_is_stale(fs, ts_ns)) {
		frag_evict(d, fs); /* another datagram under a wrapped IP ID */
		fs = NULL;
	}
	if (fs == NULL) {
		fs = frag_way_unfollowed(set);
		if (fs == NULL)
			return; /* every way follows a call, left as it is */
		frag_evict(d, fs);
		fs->src = m->src;
		fs->dst = m->dst;
		fs->id = m->frag_id;
		fs->since_ns = ts_ns;
		fs->last_ns = ts_ns;
		fs->is_last_seen = m->is_last_frag;
		fs->state = FRAG_EARLY;
		return;
	}
	if (fs->state == FRAG_EARLY) {
		if (ts_ns < fs->since_ns)
			fs->since_ns = ts_ns;
		if (ts_ns > fs->last_ns)
			fs->last_ns = ts_ns;
		fs->is_last_seen |= m->is_last_frag;
		return;
	}
	if (fs->state == FRAG_FOLLOWED) {
		op = th_xid_find(d->xids, &fs->key);
		if (op != NULL && ts_ns > op->call_last_ns)
			op->call_last_ns = ts_ns;
	}
	if (m->is_last_frag)
		fs->state = FRAG_FREE;
}

/*
 * The key of a call: its sender is the client. For a reply (@p is_reply) travelling
 * @p ep, the key of the call it answers: the reply's receiver is the client.
 */
static inline void
call_key(const struct endpoints *ep, uint32_t xid, bool is_reply, struct th_xid_key *key)
{
	memset(key, 0, sizeof(*key));
	key->client = is_reply ? *ep->dst : *ep->src;
	key->server = is_reply ? *ep->src : *ep->dst;
	key->client_port = is_reply ? ep->dport : ep->sport;
	key->server_port = is_reply ? ep->sport : ep->dport;
	key->xid = xid;
	key->transport = ep->transport;
}

static void
on_call(struct th_decode *d, const struct endpoints *ep, const struct th_rpc_msg *msg,
	const struct th_flow_record *rec)
{
	struct th_xid_key key;
	struct th_op *op;
	enum th_decode_prog slot;

	d->s.rpc_calls++;
	learn_port(d, ep->dport);
	slot = prog_slot(msg->prog, msg->vers);
	d->s.calls[slot][proc_slot(msg->proc)]++;
	if (msg->flavor == TH_AUTH_GSS)
		d->s.rpc_gss++;

	call_key(ep, msg->xid, false, &key);
	op = th_xid_call(d->xids, &key, msg->prog, msg->vers, msg->proc, rec->first_ns);
	if (op == NULL)
		return; /* a retransmission, counted on the waiting call */
	if (d->frag != NULL) {
		frag_hold(d, d->frag, &key);
		d->frag = NULL; /* held as a call: th_decode_frame() holds no other */
	}

	op->call_first_ns = rec->first_ns;
	op->call_last_ns = rec->last_ns;
	op->client = *ep->src;
	op->server = *ep->dst;
	op->client_port = ep->sport;
	op->server_port = ep->dport;
	op->transport = ep->transport;
	op->xid = msg->xid;
	op->auth = msg->flavor;
	op->uid = msg->uid;
	op->gid = msg->gid;
	memcpy(op->machine, msg->machine, sizeof(op->machine));
	op->machine[sizeof(op->machine) - 1] = '\0';

	/* Only RPCSEC_GSS DATA with service "none" carries plain arguments and results. */
	if (msg->flavor == TH_AUTH_GSS && (msg->gss_proc != 0 || msg->gss_service != 1)) {
		op->is_opaque = true;
		op->call_decode = TH_NFS_OK;
		return;
	}
	op->call_decode = th_nfs_decode_call(msg->prog, msg->vers, msg->proc,
		rec->data + msg->body_offset, rec->size - msg->body_offset, &op->call);
	count_args(d, op->call_decode);
}

/* An NFSv3 READDIRPLUS: its reply lists entries, each with a name and, usually, a handle. */
static inline bool
is_plus_listing(const struct th_op *op)
{
	return op->prog == TH_PROG_NFS && op->vers == 3 && op->proc == TH_NFS3_READDIRPLUS;
}

/*
 * A directory listing (th_op_is_listing()): its reply's entry count is reported, so
 * it is kept whole whichever procedure the client used.
 */
static inline bool
is_listing(const struct th_op *op)
{
	return th_op_is_listing(op->prog, op->vers, op->proc);
}

/*
 * A directory listing longer than the kept prefix still ends with
 * "no more entries, eof": read eof from the record's last 8 bytes. Every
 * field the op reports is then known but its entry count (flagged partial).
 */
static bool
eof_from_tail(struct th_op *op, const uint8_t *tail)
{
	uint32_t follows, eof;

	if (!is_listing(op))
		return false;
	follows = th_be_get32(tail);
	eof = th_be_get32(tail + 4);
	if (follows != 0 || eof > 1)
		return false;
	op->reply.eof = eof != 0;
	return true;
}

static void
on_dirent(void *ctx, const struct th_nfs_dirent *e)
{
	struct th_decode *d = ctx;

	d->s.dirents++;
	d->dirent(d->ctx, d->dirent_op, e);
}

/* A READDIRPLUS whose directory is known: its entries name files (the name map). */
static bool
wants_entries(const struct th_decode *d, const struct th_op *op)
{
	return d->dirent != NULL && is_plus_listing(op) && op->call.fh.len != 0;
}

static void
on_reply(struct th_decode *d, const struct endpoints *ep, const struct th_rpc_msg *msg,
	const struct th_flow_record *rec, struct th_op *op)
{
	enum th_nfs_status st;

	d->s.rpc_replies++;
	op->reply_first_ns = rec->first_ns;
	op->reply_last_ns = rec->last_ns;
	/*
	 * A server answers a call it has whole: fragments before the reply's first that came
	 * before the call ended were another datagram's under the same IP ID (its first lost,
	 * then the ID used again within the second). The reply starts at its own first.
	 */
	if (d->frag_early != NULL && op->reply_first_ns < op->call_last_ns)
		op->reply_first_ns = d->now_ns;
	op->reply_stat = msg->reply_stat;
	op->accept_stat = msg->accept_stat;
	op->reject_stat = msg->reject_stat;
	op->kind = TH_OP_MATCHED;
	if (msg->reply_stat != 0) {
		d->s.rpc_denied++;
	} else if (msg->accept_stat != 0) {
		d->s.rpc_not_success++;
	} else if (!op->is_opaque) {
		bool is_plus = wants_entries(d, op);

		d->dirent_op = op;
		st = th_nfs_decode_reply_entries(op->prog, op->vers, op->proc,
			rec->data + msg->body_offset, rec->size - msg->body_offset, &op->reply,
			is_plus ? on_dirent : NULL, d);
		if (st == TH_NFS_SHORT && op->reply.status == 0 && rec->tail != NULL &&
			eof_from_tail(op, rec->tail))
			st = TH_NFS_OK;
		op->reply_decode = (uint8_t)st;
		if (st == TH_NFS_SHORT)
			d->s.results_short++;
		else if (st == TH_NFS_MALFORMED)
			d->s.results_malformed++;
		/* The program first: th_op_returns_port() is a call, and most replies are NFS. */
		if (op->prog == TH_PROG_PORTMAP &&
			th_op_returns_port(op->prog, op->vers, op->proc) && op->reply.port > 0 &&
			op->reply.port < 65536)
			learn_port(d, (uint16_t)op->reply.port);
	}
	(void)ep;
	emit_op(d, op);
	th_xid_remove(d->xids, op);
}

static void
on_orphan_reply(struct th_decode *d, const struct endpoints *ep, const struct th_rpc_msg *msg,
	const struct th_flow_record *rec)
{
	struct th_op op;

	d->s.rpc_replies++;
	th_xid_count_unmatched_reply(d->xids);
	memset(&op, 0, sizeof(op));
	op.kind = TH_OP_REPLY_ONLY;
	op.reply_first_ns = rec->first_ns;
	op.reply_last_ns = rec->last_ns;
	op.client = *ep->dst;
	op.server = *ep->src;
	op.client_port = ep->dport;
	op.server_port = ep->sport;
	op.transport = ep->transport;
	op.xid = msg->xid;
	op.reply_stat = msg->reply_stat;
	op.accept_stat = msg->accept_stat;
	op.reject_stat = msg->reject_stat;
	emit_op(d, &op);
}

static struct th_op *
find_call(struct th_decode *d, const struct endpoints *ep, uint32_t xid)
{
	struct th_xid_key key;

	call_key(ep, xid, true, &key);
	return th_xid_find(d->xids, &key);
}

/*
 * One RPC record. @p is_rpc_flow says the bytes come from a stream or
 * port already known to carry RPC; otherwise a record that does not look
 * like RPC is simply not RPC, and is counted as such.
 */
static void
on_record(struct th_decode *d, const struct endpoints *ep, const struct th_flow_record *rec,
	bool is_rpc_flow)
{
	struct th_rpc_msg msg;
	enum th_rpc_status st;
	struct th_op *op;

	if (!is_rpc_flow && !th_rpc_looks_like_call(rec->data, rec->size) &&
		!th_rpc_looks_like_reply(rec->data, rec->size)) {
		d->s.not_rpc++;
		return;
	}
	st = th_rpc_decode(rec->data, rec->size, &msg);
	if (st == TH_RPC_SHORT && is_rpc_flow && msg.is_call_known && msg.type == TH_RPC_CALL &&
		th_rpc_is_followed(msg.prog, msg.vers)) {
		/*
		 * A call cut inside its header (a short capture length) still
		 * names its procedure: enter it so the reply finds it, marked cut.
		 */
		d->s.calls_header_cut++;
		msg.body_offset = rec->size;
		on_call(d, ep, &msg, rec);
		return;
	}
	if (st != TH_RPC_OK) {
		if (!is_rpc_flow)
			d->s.not_rpc++;
		else if (st == TH_RPC_SHORT)
			d->s.rpc_short++;
		else
			d->s.rpc_malformed++;
		return;
	}
	if (msg.type == TH_RPC_CALL) {
		if (!is_rpc_flow && !th_rpc_looks_like_call(rec->data, rec->size)) {
			d->s.not_rpc++;
			return;
		}
		on_call(d, ep, &msg, rec);
		return;
	}
	op = find_call(d, ep, msg.xid);
	if (op != NULL)
		on_reply(d, ep, &msg, rec, op);
	else if (is_rpc_flow)
		on_orphan_reply(d, ep, &msg, rec);
	else
		d->s.not_rpc++;
}

/* The endpoints of a TCP record, in the direction it travelled. */
static struct endpoints
tcp_endpoints(const struct th_flow_key *key, int dir)
{
	struct endpoints ep = {
		.src = dir == 0 ? &key->a : &key->b,
		.dst = dir == 0 ? &key->b : &key->a,
		.sport = dir == 0 ? key->pa : key->pb,
		.dport = dir == 0 ? key->pb : key->pa,
		.transport = TH_PKT_L4_TCP,
	};

	return ep;
}

static void
on_tcp_record(void *ctx, const struct th_flow_key *key, int dir, const struct th_flow_record *rec)
{
	struct endpoints ep = tcp_endpoints(key, dir);

	on_record(ctx, &ep, rec, true);
}

/*
 * A record longer than the stream's prefix: keep it whole when it is the reply
 * to a listing, READDIR or READDIRPLUS (the call waits), so that its entry count
 * is the listing's, names on or off and whichever procedure listed, and with
 * names on a READDIRPLUS's entries past the prefix are named too. Asked once a
 * record.
 */
static bool
on_tcp_whole(void *ctx, const struct th_flow_key *key, int dir, const uint8_t *rec, uint32_t size)
{
	struct th_decode *d = ctx;
	struct endpoints ep;
	const struct th_op *op;

	if (size < 8 || th_be_get32(rec + 4) != TH_RPC_REPLY)
		return false;
	ep = tcp_endpoints(key, dir);
	op = find_call(d, &ep, th_be_get32(rec));
	return op != NULL && !op->is_opaque && is_listing(op);
}

/* A record start found while hunting must be a call, or a reply to a waiting call. */
static bool
on_tcp_hunt(void *ctx, const struct th_flow_key *key, int dir, const uint8_t *rec, uint32_t size)
{
	struct endpoints ep = tcp_endpoints(key, dir);
	uint32_t xid;

	if (th_rpc_looks_like_call(rec, size))
		return true;
	if (!th_rpc_looks_like_reply(rec, size))
		return false;
	xid = th_be_get32(rec);
	return find_call(ctx, &ep, xid) != NULL;
}

/*
 * Direction @p dir lost bytes that held a record boundary: whole records
 * went missing. Seen as the reply direction, the calls travelling the other
 * way and still waiting have likely lost their replies; they leave after
 * the short gap timeout rather than the full one. A gap in the call
 * direction names calls that do not exist and changes nothing. Marking the
 * same connection again at the same time changes nothing either.
 */
static void
on_tcp_gap(void *ctx, const struct th_flow_key *key, int dir, uint64_t now_ns)
{
	struct th_decode *d = ctx;
	struct endpoints ep = tcp_endpoints(key, dir);
	struct th_xid_key flow;

	call_key(&ep, 0, true, &flow);
	th_xid_reply_gap(d->xids, &flow, now_ns);
}

struct th_decode *
th_decode_create(const struct th_decode_config *cfg, th_decode_op_cb emit, void *ctx)
{
	struct th_decode *d;

	if (cfg == NULL || emit == NULL || cfg->listings > TH_FLOW_WHOLE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	d = aligned_alloc(_Alignof(struct th_decode), sizeof(*d)); /* copy sets on cache lines */
	if (d == NULL)
		goto fail;
	memset(d, 0, sizeof(*d));
	d->emit = emit;
	d->ctx = ctx;
	d->copy_window_ns = cfg->copy_window_ns;
	th_srt_init(&d->srt);
	d->flows = th_flow_table_create(
		cfg->flows, cfg->flow_idle_ns, on_tcp_record, on_tcp_hunt, on_tcp_gap, d);
	if (d->flows == NULL)
		goto free_decode;
	d->xids = th_xid_table_create(cfg->calls, cfg->call_timeout_ns, on_xid_leave, d);
	if (d->xids == NULL)
		goto free_flows;
	th_xid_table_set_gap_timeout(d->xids, cfg->gap_call_timeout_ns);
	/*
	 * Listings are kept whole whether or not their names are wanted: an entry
	 * count that changed with the outputs asked for would not be one.
	 */
	if (cfg->listings > 0 && th_flow_table_set_whole(d->flows, cfg->listings,
					 TH_DECODE_LISTING_SIZE, on_tcp_whole) != 0) {
		errno = ENOMEM; /* the count is in range: the buffers did not fit */
		goto free_xids;
	}
	/* portmap/rpcbind and NFS are where they always are; the rest is learned. */
	learn_port(d, 111);
	learn_port(d, 2049);
	d->s.ports_learned = 0;
	return d;

free_xids:
	th_xid_table_free(d->xids);
free_flows:
	th_flow_table_free(d->flows);
free_decode:
	free(d);
fail:
	if (errno != EINVAL)
		errno = ENOMEM;
	return NULL;
}

void
th_decode_set_dirent_cb(struct th_decode *d, th_decode_dirent_cb cb)
{
	d->dirent = cb;
}

void
th_decode_free(struct th_decode *d)
{
	if (d == NULL)
		return;
	th_xid_table_free(d->xids);
	th_flow_table_free(d->flows);
	free(d);
}

/* Into @p w: the fixed IP header, @p ip bytes, then the frame's bytes from m->l4_offset on. */
static inline void
copy_gather(uint64_t *w, const uint8_t *frame, uint32_t caplen, const struct th_pkt_meta *m,
	uint32_t ip)
{
	uint8_t *b = (uint8_t *)w;
	uint32_t rest = COPY_WORDS * 8 - ip, have = caplen - m->l4_offset;

	memcpy(b, frame + m->l3_offset, ip);
	if (have >= rest) {
		memcpy(b + ip, frame + m->l4_offset, rest);
	} else {
		memset(b + ip, 0, rest);
		memcpy(b + ip, frame + m->l4_offset, have);
	}
}

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* One lane's step over a word (xxHash64's round, whose constants these are). */
static inline uint64_t
copy_round(uint64_t acc, uint64_t word)
{
	return rotl64(acc + word * 0xc2b2ae3d27d4eb4full, 31) * 0x9e3779b185ebca87ull;
}

/*
 * Whether the frame is a copy of one seen within the copy window. A mirror port shows some
 * frames twice (a session of both the client's and the server's switch port, or of a port's
 * receive and transmit side) microseconds apart: taken as traffic, a copy would read as a TCP
 * retransmission, a UDP call sent again or a reply without its call. What a copy must match:
 * the length captured and 64 bytes, the fixed IP header (addresses, length, IPv4
 * identification and fragment offset) and those from the TCP or UDP header on (a later
 * fragment's data, and its offset), which hold the TCP or UDP checksum that covers the rest.
 * TTL and the IPv4 header checksum are left out, since a router between two mirrored ports
 * lowers them. A host's own resend is a new IP packet (another identification, TCP
 * timestamp or XID, a timeout later), so it is not taken for a copy.
 *
 * Each frame is kept as a 64-bit hash of those in a 4-way set, the oldest way replaced, so
 * that a copy is found behind thousands of other frames; two different frames are taken for
 * each other only if their hashes collide within the window, about once in 2^62.
 */
static bool
is_copy(struct th_decode *d, const uint8_t *frame, uint32_t caplen, const struct th_pkt_meta *m,
	bool is_later_frag, uint64_t ts_ns)
{
	uint64_t w[COPY_WORDS], a, b, c, e, h, id = 0x27d4eb2fu;
	struct copy_set *set;
	unsigned int oldest = 0;

	if (m->ip_version == 4) {
		copy_gather(w, frame, caplen, m, 20);
		((uint8_t *)w)[8] = 0;                       /* TTL */
		((uint8_t *)w)[10] = ((uint8_t *)w)[11] = 0; /* header checksum */
	} else {
		copy_gather(w, frame, caplen, m, 40);
		((uint8_t *)w)[7] = 0; /* hop limit */
		/* The identification is in the fragment header, past the fixed one: without it,
		 * the later fragments of two datagrams of the same bytes would be one frame. */
		if (is_later_frag || m->is_fragment)
			id ^= (uint64_t)m->frag_id << 32;
	}
	/* Four lanes of two rounds, written out: short chains, no loop. */
	a = copy_round(copy_round((uint64_t)(caplen - m->l3_offset), w[0]), w[4]);
	b = copy_round(copy_round(is_later_frag ? m->frag_offset : 0x5bd1e995u, w[1]), w[5]);
	c = copy_round(copy_round(id, w[2]), w[6]);
	e = copy_round(copy_round(0x165667b1u, w[3]), w[7]);
	h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(e, 18);
	h = (h ^ (h >> 33)) * 0xc2b2ae3d27d4eb4full;
	h = (h ^ (h >> 29)) * 0x165667b19e3779f9ull;
	h = (h ^ (h >> 32)) | 1; /* 0 marks a free way */
	set = &d->copies[h >> (64 - COPY_SET_BITS)];
	for (unsigned int i = 0; i < COPY_WAYS; i++) {
		if (set->hash[i] == h) { /* the same frame, or one sent again later */
			uint64_t t = set->ts_ns[i];

			if ((ts_ns >= t ? ts_ns - t : t - ts_ns) <= d->copy_window_ns)
				return true;
		}
	}
	for (unsigned int i = 1; i < COPY_WAYS; i++)
		if (set->ts_ns[i] < set->ts_ns[oldest])
			oldest = i;
	set->hash[oldest] = h;
	set->ts_ns[oldest] = ts_ns;
	return false;
}

void
th_decode_frame(struct th_decode *d, const uint8_t *frame, uint32_t caplen, uint32_t wirelen,
	enum th_pkt_link link, uint64_t ts_ns)
{
	struct th_pkt_meta m;
	enum th_pkt_status st;
	const uint8_t *payload;
	struct endpoints ep;

	d->s.frames++;
	d->s.bytes += wirelen;
	d->now_ns = ts_ns;
	st = th_pkt_parse(frame, caplen, link, &m);
	/*
	 * Frames that carry bytes: a copy of a bare TCP acknowledgement changes nothing. A copy
	 * is counted as that alone, so frames = frames_copied + the pkt[] outcomes.
	 */
	if (d->copy_window_ns != 0 &&
		((st == TH_PKT_OK && (m.l4 == TH_PKT_L4_UDP || m.payload_wire_len > 0)) ||
			(st == TH_PKT_FRAG_LATER && m.l4 == TH_PKT_L4_UDP)) &&
		is_copy(d, frame, caplen, &m, st == TH_PKT_FRAG_LATER, ts_ns)) {
		d->s.frames_copied++;
		return;
	}
	d->s.pkt[st]++;
	if (st != TH_PKT_OK) {
		if (st == TH_PKT_FRAG_LATER && m.l4 == TH_PKT_L4_UDP)
			on_later_fragment(d, &m, ts_ns);
		return;
	}
	payload = frame + m.payload_offset;
	if (m.is_cut)
		d->s.frames_cut++;

	if (m.l4 == TH_PKT_L4_TCP) {
		d->s.tcp_segments++;
		if (!th_flow_tcp_input(d->flows, &m, payload, m.payload_len, m.payload_wire_len,
			    ts_ns, is_rpc_port(d, m.sport) || is_rpc_port(d, m.dport)) &&
			m.payload_len > 0)
			d->s.not_rpc++;
		return;
	}

	d->s.udp_datagrams++;
	if (m.is_fragment)
		d->s.udp_first_frags++;
	ep.src = &m.src;
	ep.dst = &m.dst;
	ep.sport = m.sport;
	ep.dport = m.dport;
	ep.transport = TH_PKT_L4_UDP;
	{
		struct th_flow_record rec = {
			.data = payload,
			.size = m.payload_len,
			.wire_size = m.payload_wire_len,
			.tail = m.payload_len == m.payload_wire_len && m.payload_len >= 8
					? payload + m.payload_len - 8
					: NULL,
			.first_ns = ts_ns,
			.last_ns = ts_ns,
		};

		d->frag = NULL;
		d->frag_early = NULL;
		if (m.is_fragment) {
			d->frag = &m;
			d->frag_early = frag_first(d, &m, &rec);
		}
		on_record(d, &ep, &rec, is_rpc_port(d, m.sport) || is_rpc_port(d, m.dport));
		if (d->frag != NULL)
			frag_hold(d, &m, NULL);
		d->frag = NULL;
		d->frag_early = NULL;
	}
}

void
th_decode_housekeep(struct th_decode *d, uint64_t now_ns)
{
	th_flow_table_age(d->flows, now_ns);
	th_xid_table_age(d->xids, now_ns);
}

void
th_decode_flush(struct th_decode *d)
{
	for (unsigned int i = 0; i < FRAG_SLOTS; i++) {
		if (d->frags[i].state == FRAG_FOLLOWED)
			d->s.frags_unfinished++;
		d->frags[i].state = FRAG_FREE;
	}
	th_flow_table_finish(d->flows);
	th_xid_table_flush(d->xids);
	memset(d->copies, 0, sizeof(d->copies)); /* the next frame is no copy of these */
}

void
th_decode_get_stats(const struct th_decode *d, struct th_decode_stats *out)
{
	*out = d->s;
	out->flow = *th_flow_table_counters(d->flows);
	out->xid = *th_xid_table_counters(d->xids);
}

const struct th_srt *
th_decode_get_srt(const struct th_decode *d)
{
	return &d->srt;
}

size_t
th_decode_memory(const struct th_decode *d)
{
	return sizeof(*d) + th_flow_table_memory(d->flows) + th_xid_table_memory(d->xids);
}

void
th_decode_stats_add(struct th_decode_stats *sum, const struct th_decode_stats *s)
{
	/* Every member is a uint64_t counter: add them as an array. */
	uint64_t *a = (uint64_t *)(void *)sum;
	const uint64_t *b = (const uint64_t *)(const void *)s;
	size_t i;

	_Static_assert(sizeof(struct th_decode_stats) % sizeof(uint64_t) == 0,
		"th_decode_stats holds only uint64_t counters");
	for (i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
		a[i] += b[i];
}

static const struct {
	const char *name;
	uint32_t prog;
	uint32_t vers;
} prog_names[] = {
#define TH_DECODE_PX(name, p, v) {#name, p, v},
	TH_DECODE_PROG_LIST(TH_DECODE_PX)
#undef TH_DECODE_PX
};

#define ROW(out, value, text) fprintf(out, "  %-14" PRIu64 " %s\n", (uint64_t)(value), text)

/*
 * "NFS3 GETATTR" (as the RPC log names it), "NFS3 proc 30", "other programs, proc 3":
 * program slot @p, procedure @q; the last slot holds every procedure from its number up
 * ("NFS3 procs 31 and above").
 */
#define PAIR_LABEL_MAX 64
_Static_assert(PAIR_LABEL_MAX >= TH_NFS_LABEL_MAX, "a procedure's name fits a pair's label");

static void
pair_label(char label[PAIR_LABEL_MAX], size_t size, size_t p, size_t q)
{
	const char *prog = "other programs,";
	bool is_last = q == TH_DECODE_PROCS - 1, is_named = false;

	if (p < sizeof(prog_names) / sizeof(prog_names[0])) {
		prog = prog_names[p].name;
		is_named = th_nfs_proc_name(prog_names[p].prog, prog_names[p].vers, (uint32_t)q) !=
			   NULL;
	}
	if (is_named && !is_last)
		*th_nfs_label(label, prog_names[p].prog, prog_names[p].vers, (uint32_t)q) = '\0';
	else
		snprintf(label, size, is_last ? "%s procs %zu and above" : "%s proc %zu", prog, q);
}

void
th_decode_stats_print(FILE *out, const struct th_decode_stats *s)
{
	size_t p, q;
	int i;

	fprintf(out, "traffic\n");
	ROW(out, s->frames, "frames received");
	ROW(out, s->bytes, "bytes received");
	ROW(out, s->tcp_segments, "TCP segments");
	ROW(out, s->udp_datagrams, "UDP datagrams");
	ROW(out, s->rpc_calls, "RPC calls");
	ROW(out, s->rpc_replies, "RPC replies");
	ROW(out, s->ops_matched, "RPCs matched (call and reply)");
	ROW(out, s->flow.records, "RPC records reassembled from TCP");
	ROW(out, s->flow.whole_records,
		"listings (READDIR, READDIRPLUS) kept whole past the TCP prefix");

	fprintf(out, "calls by program and procedure\n");
	for (p = 0; p < TH_DECODE__PROG_COUNT; p++) {
		for (q = 0; q < TH_DECODE_PROCS; q++) {
			char label[PAIR_LABEL_MAX];

			if (s->calls[p][q] == 0)
				continue;
			pair_label(label, sizeof(label), p, q);
			ROW(out, s->calls[p][q], label);
		}
	}

	fprintf(out, "losses and skips by reason\n");
	for (i = 1; i < TH_PKT__STATUS_COUNT; i++)
		ROW(out, s->pkt[i], th_pkt_status_str((enum th_pkt_status)i));
	ROW(out, s->frames_copied,
		"frames seen again within decode.copy_window (a mirror port's copies, not "
		"decoded)");
	ROW(out, s->frames_cut, "frames cut by the capture length");
	ROW(out, s->not_rpc, "TCP/UDP payloads that are not RPC");
	ROW(out, s->rpc_short, "RPC messages too short for their header (dropped)");
	ROW(out, s->calls_header_cut, "RPC calls cut inside their header (kept: cut=call)");
	ROW(out, s->rpc_malformed, "RPC messages with a malformed header");
	ROW(out, s->args_short, "call arguments cut");
	ROW(out, s->args_malformed, "call arguments malformed");
	ROW(out, s->results_short, "reply results cut");
	ROW(out, s->results_malformed, "reply results malformed");
	ROW(out, s->unknown_proc, "unknown procedures");
	ROW(out, s->unknown_prog, "programs not decoded (NLM, NFSACL, ...)");
	ROW(out, s->nfs4_compounds, "NFSv4 COMPOUNDs (counted, not decoded)");
	ROW(out, s->rpc_gss, "RPCSEC_GSS calls");
	ROW(out, s->rpc_denied, "RPC replies denied");
	ROW(out, s->rpc_not_success, "RPC replies accepted with an error");
	ROW(out, s->flow.gaps_lost, "TCP gaps that lost a record boundary (or came while hunting)");
	ROW(out, s->flow.gaps_payload, "TCP gaps inside record data (stepped over)");
	ROW(out, s->flow.records_lost_gap, "RPC records lost to TCP gaps or evictions");
	ROW(out, s->flow.records_lost_idle, "RPC records cut by a connection's idle aging");
	ROW(out, s->flow.records_unfinished, "RPC records unfinished when the capture ended");
	ROW(out, s->flow.segments_retrans, "TCP segments retransmitted");
	ROW(out, s->flow.syn_copies, "TCP SYNs seen again in their connection (not a new one)");
	ROW(out, s->flow.segments_held, "TCP segments held for a late earlier segment");
	ROW(out, s->flow.segments_reordered,
		"TCP segments put back in order (reordering repaired)");
	ROW(out, s->flow.segments_held_ack,
		"TCP segments held for the other direction's late bytes they acknowledge");
	ROW(out, s->flow.segments_ack_reordered,
		"TCP segments let in after the bytes they acknowledge (reordering across "
		"directions repaired)");
	ROW(out, s->flow.hunt_segments, "TCP segments skipped hunting for a record start");
	ROW(out, s->flow.resyncs, "TCP record boundary found by hunting");
	ROW(out, s->flow.bad_markers, "TCP record markers with impossible lengths");
	ROW(out, s->flow.flows_evicted, "TCP flows evicted (flow table full)");
	ROW(out, s->flow.flows_aged, "TCP flows forgotten, idle (decode.flow_idle)");
	ROW(out, s->xid.calls_dup, "calls retransmitted (duplicates)");
	ROW(out, s->xid.calls_reused,
		"calls left unmatched: their client sent another procedure under their XID");
	ROW(out, s->ops_call_only, "unmatched calls (no reply)");
	ROW(out, s->ops_reply_only, "unmatched replies (no call)");
	ROW(out, s->xid.table_full, "calls pushed out early (XID table full)");
	ROW(out, s->xid.gap_expired, "calls expired after a reply-direction gap");
	ROW(out, s->frags_displaced, "fragmented UDP calls no longer followed (slot reused)");
	ROW(out, s->frags_unfinished,
		"fragmented UDP calls whose last fragment did not come (call ends at the last "
		"seen)");
	ROW(out, s->frags_early,
		"UDP datagrams whose later IP fragments came before their first (timed from the "
		"earliest)");
	ROW(out, s->frags_early_lost,
		"UDP datagrams whose fragments before their first were forgotten (4-way set full; "
		"timed from the first)");
	ROW(out, s->flow.whole_cut_size, "listings cut at 64 KiB (later entries not read)");
	ROW(out, s->flow.whole_cut_busy,
		"listings cut at 1 KiB: every listing buffer in use (decode.listings)");
	ROW(out, s->flow.whole_cut_gap, "listings cut by a TCP gap (later entries not read)");
}
