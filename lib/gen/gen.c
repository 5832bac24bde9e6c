/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The driver. Clients act in time order (a heap on their next action time).
 * One action is one RPC, or a pipelined burst of small ones: the calls go on
 * the wire, the server answers after its latency, and the client waits for
 * the last reply plus a think time. Frames and ground-truth ops wait in
 * heaps and leave once no later action can produce anything earlier: every
 * frame of an action is at or after the action's start time, and actions
 * start in time order.
 */

#include "th_gen.h"

#include "gen_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_pcap.h"
#include "th_session.h"

#define BURST_MAX 6
#define MSG_MAX (1200u * 1024u) /* a 1 MB WRITE with its headers */

static const char *const mix_names[] = {
#define TH_GEN_X(e, name, text) name,
	TH_GEN_MIX_LIST(TH_GEN_X)
#undef TH_GEN_X
};

static const char *const workload_names[] = {
#define TH_GEN_X(e, name, text) name,
	TH_GEN_WORKLOAD_LIST(TH_GEN_X)
#undef TH_GEN_X
};

static const char *const user_mix_names[] = {
#define TH_GEN_X(e, name, text) name,
	TH_GEN_USER_MIX_LIST(TH_GEN_X)
#undef TH_GEN_X
};

static const char *const open_class_names[] = {
#define TH_GEN_X(e, name, text) name,
	TH_GEN_OPEN_CLASS_LIST(TH_GEN_X)
#undef TH_GEN_X
};

const char *
th_gen_user_mix_name(enum th_gen_user_mix mix)
{
	return (unsigned int)mix < TH_GEN__USER_MIX_COUNT ? user_mix_names[mix] : NULL;
}

int
th_gen_user_mix_parse(const char *name, enum th_gen_user_mix *mix)
{
	unsigned int i;

	for (i = 0; i < TH_GEN__USER_MIX_COUNT; i++) {
		if (strcmp(name, user_mix_names[i]) == 0) {
			*mix = (enum th_gen_user_mix)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
th_gen_workload_name(enum th_gen_workload wl)
{
	return (unsigned int)wl < TH_GEN__WORKLOAD_COUNT ? workload_names[wl] : NULL;
}

int
th_gen_workload_parse(const char *name, enum th_gen_workload *wl)
{
	unsigned int i;

	for (i = 0; i < TH_GEN__WORKLOAD_COUNT; i++) {
		if (strcmp(name, workload_names[i]) == 0) {
			*wl = (enum th_gen_workload)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
th_gen_open_class_name(enum th_gen_open_class cls)
{
	return (unsigned int)cls < TH_GEN__OPEN_CLASS_COUNT ? open_class_names[cls] : NULL;
}

/* The seed's record, written by lib/session's formatter so both sides agree, then the class. */
int
th_gen_open_format(const struct th_gen_open *o, char *buf, size_t size)
{
	struct th_sess_record r;
	char line[512];
	int n;

	memset(&r, 0, sizeof(r));
	r.open_ns = o->open_ns;
	r.close_ns = o->close_ns;
	r.first_op_ns = o->open_ns;
	r.last_op_ns = o->close_ns;
	r.server = o->server;
	r.fh_len = o->fh_len <= TH_SESS_FH_MAX ? o->fh_len : TH_SESS_FH_MAX;
	memcpy(r.fh, o->fh, r.fh_len);
	r.client = o->client;
	r.uid = o->uid;
	r.gid = o->gid;
	r.dir = o->is_write ? TH_SESS_DIR_WRITE : TH_SESS_DIR_READ;
	r.vers = 3;
	r.is_cache_hit = o->cls == TH_GEN_OPEN_CACHED_READ;
	r.is_directory = o->is_directory;
	r.ops = o->ops;
	r.transferred = o->transferred;
	r.size = o->size;
	n = th_sess_record_format(&r, line, sizeof(line));
	if (n <= 0 || (size_t)n >= sizeof(line))
		return -EOVERFLOW;
	return snprintf(buf, size, "%.*s | %s\n", n - 1, line,
		th_gen_open_class_name((enum th_gen_open_class)o->cls));
}

const char *
th_gen_mix_name(enum th_gen_mix mix)
{
	return (unsigned int)mix < TH_GEN__MIX_COUNT ? mix_names[mix] : NULL;
}

int
th_gen_mix_parse(const char *name, enum th_gen_mix *mix)
{
	unsigned int i;

	for (i = 0; i < TH_GEN__MIX_COUNT; i++) {
		if (strcmp(name, mix_names[i]) == 0) {
			*mix = (enum th_gen_mix)i;
			return 0;
		}
	}
	return -EINVAL;
}

void
th_gen_config_init(struct th_gen_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->clients = 8;
	cfg->servers = 2;
	cfg->ops = 10000;
	cfg->mix = TH_GEN_MIX_MIXED;
	cfg->udp_share = 0.25;
	cfg->ipv6_share = 0.25;
	cfg->vlan_tags = 0;
	cfg->mtu = 1500;
	cfg->handshake = true;
	cfg->pipeline_share = 0.2;
	cfg->rm_frag_share = 0.0;
	cfg->start_ns = 1700000000ull * 1000000000ull;
	cfg->ts_resolution_ns = 1000;
	cfg->think_us = 200;
	cfg->workload = TH_GEN_WORKLOAD_OPS;
	cfg->hours = 1.0;
	cfg->users_per_client = 2;
	cfg->ls_share = 0.3;
	cfg->user_mix = TH_GEN_USER_MIX_SEED;
	cfg->cache_mb = 64;
	cfg->acregmin_s = 3;
	cfg->acregmax_s = 60;
	cfg->acdirmin_s = 30;
	cfg->acdirmax_s = 60;
	cfg->rsize = 1048576;
	cfg->wsize = 1048576;
	cfg->user_think_s = 10.0;
	cfg->loss = 0.0;
	cfg->tap_loss = 0.0;
	cfg->tap_reorder = 0.0;
	cfg->tap_dup = 0.0;
}

int
th_gen_config_check(const struct th_gen_config *cfg, char *err, size_t err_size)
{
	const char *what = NULL;

	if (cfg->clients < 1 || cfg->clients > 65535)
		what = "clients must be 1..65535";
	else if (cfg->servers < 1 || cfg->servers > 255)
		what = "servers must be 1..255";
	else if ((unsigned int)cfg->mix >= TH_GEN__MIX_COUNT)
		what = "unknown mix";
	else if (!(cfg->udp_share >= 0 && cfg->udp_share <= 1))
		what = "udp-share must be between 0 and 1";
	else if (!(cfg->ipv6_share >= 0 && cfg->ipv6_share <= 1))
		what = "ipv6-share must be between 0 and 1";
	else if (cfg->vlan_tags > 2)
		what = "vlan must be 0, 1 or 2 tags";
	else if (cfg->mtu < 576 || cfg->mtu > 9000)
		what = "mtu must be 576..9000";
	else if (!(cfg->pipeline_share >= 0 && cfg->pipeline_share <= 1))
		what = "pipeline share must be between 0 and 1";
	else if (!(cfg->rm_frag_share >= 0 && cfg->rm_frag_share <= 1))
		what = "record fragment share must be between 0 and 1";
	else if ((unsigned int)cfg->workload >= TH_GEN__WORKLOAD_COUNT)
		what = "unknown workload";
	else if (!(cfg->hours > 0 && cfg->hours <= 24 * 365))
		what = "hours must be more than 0 and at most a year";
	else if (cfg->start_ns / 1000000000u > TH_GEN_TIME_MAX_S)
		what = "start must be at most 2147483647 (2038-01-19 03:14:07 UTC): pcap readers "
		       "(libpcap, so capture's net_pcap and tcpdump) take later seconds as "
		       "before 1970";
	else if (cfg->workload == TH_GEN_WORKLOAD_USERS &&
		 cfg->start_ns / 1000000000u + (uint64_t)(cfg->hours * 3600.0) + 3600 >
			 TH_GEN_TIME_MAX_S)
		what = "start plus hours (and an hour for the last commands to end) passes "
		       "2038-01-19 03:14:07 UTC, where pcap readers' signed 32-bit seconds end: "
		       "give an earlier start or fewer hours";
	else if (cfg->users_per_client < 1 || cfg->users_per_client > 1000)
		what = "users per client must be 1..1000";
	else if (cfg->workload == TH_GEN_WORKLOAD_USERS &&
		 (uint64_t)cfg->clients * cfg->users_per_client > 200000)
		what = "clients x users per client must be at most 200000 (each user's state "
		       "takes a few KiB)";
	else if (!(cfg->ls_share >= 0 && cfg->ls_share <= 1))
		what = "ls share must be between 0 and 1";
	else if ((unsigned int)cfg->user_mix >= TH_GEN__USER_MIX_COUNT)
		what = "unknown user command mix";
	else if (cfg->cache_mb < 1 || cfg->cache_mb > 1048576)
		what = "cache must be 1..1048576 MB";
	else if (cfg->acregmin_s > cfg->acregmax_s || cfg->acdirmin_s > cfg->acdirmax_s ||
		 cfg->acregmax_s > 3600 || cfg->acdirmax_s > 3600)
		what = "attribute cache timeouts: min <= max <= 3600 s";
	else if (cfg->rsize < 4096 || cfg->rsize > 1048576 || cfg->rsize % 4096 != 0 ||
		 cfg->wsize < 4096 || cfg->wsize > 1048576 || cfg->wsize % 4096 != 0)
		what = "rsize and wsize must be multiples of 4096 from 4096 to 1048576";
	else if (!(cfg->user_think_s > 0 && cfg->user_think_s <= 86400))
		what = "user think time must be more than 0 and at most a day";
	else if (!(cfg->loss >= 0 && cfg->loss <= 0.5))
		what = "loss must be between 0 and 0.5";
	else if (cfg->loss > 0 && cfg->workload != TH_GEN_WORKLOAD_USERS)
		what = "loss needs the users workload (its clients resend)";
	else if (!(cfg->tap_loss >= 0 && cfg->tap_loss <= 0.5))
		what = "tap loss must be between 0 and 0.5";
	else if (!(cfg->tap_reorder >= 0 && cfg->tap_reorder <= 0.5))
		what = "tap reorder must be between 0 and 0.5";
	else if (!(cfg->tap_dup >= 0 && cfg->tap_dup <= 0.5))
		what = "tap dup must be between 0 and 0.5";
	if (what == NULL)
		return 0;
	if (err != NULL)
		snprintf(err, err_size, "%s", what);
	return -EINVAL;
}

/* ---- the run ---- */

struct op_entry {
	uint64_t order;    /**< tie-break */
	unsigned int tap;  /**< TH_GEN_TAP_*: what the capture misses of it */
	struct th_op op;   /**< ground truth */
};

struct run {
	const struct th_gen_config *cfg;
	const struct th_gen_sink *sink;
	struct th_gen_stats *stats;
	struct gen_world world;
	struct gen_wire *wire;
	struct gen_client **clients; /**< min-heap on next_ns */
	struct op_entry **ops;       /**< min-heap on (call_first_ns, order) */
	uint32_t n_ops, cap_ops;
	uint64_t op_order;
	uint8_t *call_buf;  /**< encoded calls of one action */
	uint8_t *reply_buf; /**< one encoded reply */
	struct gen_rpc rpcs[BURST_MAX];
};

static bool
client_before(const struct gen_client *a, const struct gen_client *b)
{
	return a->next_ns < b->next_ns || (a->next_ns == b->next_ns && a < b);
}

/* Restore the client heap after its top changed time. */
static void
clients_sift_down(struct gen_client **h, uint32_t n, uint32_t i)
{
	struct gen_client *x = h[i];

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		struct gen_client *best = x;

		if (l < n && client_before(h[l], best)) {
			m = l;
			best = h[l];
		}
		if (l + 1 < n && client_before(h[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

static bool
op_before(const struct op_entry *a, const struct op_entry *b)
{
	return a->op.call_first_ns < b->op.call_first_ns ||
	       (a->op.call_first_ns == b->op.call_first_ns && a->order < b->order);
}

static int
ops_push(struct run *r, const struct th_op *op, unsigned int tap)
{
	struct op_entry *e;
	uint32_t i;

	if (tap != 0)
		r->stats->tap_damaged_rpcs++;
	if (r->sink->op == NULL)
		return 0;
	if (r->n_ops == r->cap_ops) {
		uint32_t n = r->cap_ops ? r->cap_ops * 2 : 256;
		struct op_entry **p = realloc(r->ops, (size_t)n * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		r->ops = p;
		r->cap_ops = n;
	}
	e = malloc(sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->op = *op;
	e->tap = tap;
	e->order = r->op_order++;
	i = r->n_ops++;
	while (i > 0 && op_before(e, r->ops[(i - 1) / 2])) {
		r->ops[i] = r->ops[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->ops[i] = e;
	return 0;
}

static struct op_entry *
ops_pop(struct run *r)
{
	struct op_entry *top = r->ops[0], *last = r->ops[--r->n_ops];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		struct op_entry *best = last;

		if (l < r->n_ops && op_before(r->ops[l], best)) {
			m = l;
			best = r->ops[l];
		}
		if (l + 1 < r->n_ops && op_before(r->ops[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		r->ops[i] = r->ops[m];
		i = m;
	}
	if (r->n_ops > 0)
		r->ops[i] = last;
	return top;
}

/* Hand everything stamped at or before @p until to the sinks. */
static int
flush(struct run *r, uint64_t until)
{
	struct gen_frame *fr;
	int rc;

	while ((fr = gen_wire_pop(r->wire, until)) != NULL) {
		rc = r->sink->frame(r->sink->ctx, fr->ts_ns, fr->data, fr->size);
		if (r->stats->packets == 0 || fr->ts_ns < r->stats->first_ns)
			r->stats->first_ns = fr->ts_ns;
		r->stats->packets++;
		r->stats->bytes += fr->size;
		/* A frame the mirror held back (--tap-reorder) keeps its earlier time. */
		if (fr->ts_ns > r->stats->last_ns)
			r->stats->last_ns = fr->ts_ns;
		if (rc == 0)
			rc = gen_wire_tap_copy(r->wire, fr);
		gen_wire_release(r->wire, fr);
		if (rc != 0)
			return rc;
	}
	while (r->n_ops > 0 && r->ops[0]->op.call_first_ns <= until) {
		struct op_entry *e = ops_pop(r);

		rc = r->sink->op(r->sink->ctx, &e->op, e->tap);
		free(e);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* One client action: a call, or a burst of pipelined calls, and the replies. */
static int
act(struct run *r, struct gen_client *c, uint64_t now, uint64_t left)
{
	const uint8_t *recs[BURST_MAX];
	uint32_t sizes[BURST_MAX], n = 1, i, j, k;
	uint64_t first[BURST_MAX], last[BURST_MAX], done = now, t;
	size_t at = 0;
	int rc;

	if (!c->is_udp && gen_mix_is_ready(c) &&
		gen_rng_chance(&r->world.rng, r->cfg->pipeline_share))
		n = 2 + th_rng_below(&r->world.rng, BURST_MAX - 1);
	if (n > left)
		n = (uint32_t)left;
	for (i = 0; i < n; i++) {
		size_t size;

		gen_mix_next(&r->world, c, now, n > 1, &r->rpcs[i]);
		size = gen_rpc_encode_call(&r->rpcs[i], r->call_buf + at, 2 * MSG_MAX - at);
		if (size == 0)
			return -EINVAL; /* a model bug: no message should outgrow the buffer */
		recs[i] = r->call_buf + at;
		sizes[i] = (uint32_t)size;
		at += size;
	}
	/* Calls on the same connection go out as one stream; a burst has one flow. */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && r->rpcs[j].flow == r->rpcs[i].flow; j++)
			;
		rc = gen_wire_send(r->wire, r->rpcs[i].flow, 0, now, &recs[i], &sizes[i], j - i,
			&first[i], &last[i]);
		if (rc != 0)
			return rc;
		for (k = i; k < j; k++)
			r->rpcs[k].tap_lost =
				gen_wire_tap_lost_mask(r->wire) & (1u << (k - i)) ? TH_GEN_TAP_CALL : 0;
	}
	for (i = 0; i < n; i++) {
		struct gen_rpc *rpc = &r->rpcs[i];
		const uint8_t *rec = r->reply_buf;
		uint64_t rfirst, rlast;
		uint32_t size;

		size = (uint32_t)gen_rpc_encode_reply(rpc, r->reply_buf, MSG_MAX);
		if (size == 0)
			return -EINVAL;
		rc = gen_wire_send(r->wire, rpc->flow, 1, last[i] + rpc->latency_ns, &rec, &size, 1,
			&rfirst, &rlast);
		if (rc != 0)
			return rc;
		if (gen_wire_tap_lost_mask(r->wire) != 0)
			rpc->tap_lost |= TH_GEN_TAP_REPLY;
		rpc->op.call_first_ns = first[i];
		rpc->op.call_last_ns = last[i];
		rpc->op.reply_first_ns = rfirst;
		rpc->op.reply_last_ns = rlast;
		rc = ops_push(r, &rpc->op, rpc->tap_lost);
		if (rc != 0)
			return rc;
		if (rpc->is_close_after) {
			rc = gen_wire_close(r->wire, rpc->flow, rlast + 20000);
			if (rc != 0)
				return rc;
		}
		r->stats->rpcs++;
		r->stats->rpc_messages += 2;
		if (rlast > done)
			done = rlast;
	}
	t = done + (uint64_t)gen_rng_exp(&r->world.rng, r->cfg->think_us * 1000.0) + 1000;
	c->next_ns = t;
	return 0;
}

/*
 * Send one call and its reply. Over UDP a lost datagram is sent again after
 * the client's timeout (Linux: timeo 1.1 s, doubling); when the tap saw the
 * first call, a later copy is a duplicate the decoder counts (dup=).
 */
static int
exchange(struct run *r, struct gen_rpc *rpc, uint64_t now)
{
	uint64_t first, last, rfirst, rlast, t = now, timeo = 1100000000ull;
	bool has_call = false;
	const uint8_t *rec;
	uint32_t size, rsize;
	int rc;

	rpc->tap_lost = 0;
	size = (uint32_t)gen_rpc_encode_call(rpc, r->call_buf, 2 * MSG_MAX);
	rsize = (uint32_t)gen_rpc_encode_reply(rpc, r->reply_buf, MSG_MAX);
	if (size == 0 || rsize == 0)
		return -EINVAL;
	for (;;) {
		uint64_t f, l;

		rec = r->call_buf;
		rc = gen_wire_send(r->wire, rpc->flow, 0, t, &rec, &size, 1, &f, &l);
		if (rc != 0)
			return rc;
		if (rpc->flow->l4 != TH_PKT_L4_UDP || !gen_wire_last_lost(r->wire)) {
			if (!has_call) {
				first = f;
				last = l;
				has_call = true;
				if (gen_wire_tap_lost_mask(r->wire) != 0)
					rpc->tap_lost |= TH_GEN_TAP_CALL;
			} else {
				rpc->op.dup_calls++;
			}
			rec = r->reply_buf;
			rc = gen_wire_send(r->wire, rpc->flow, 1, l + rpc->latency_ns, &rec, &rsize,
				1, &rfirst, &rlast);
			if (rc != 0)
				return rc;
			if (rpc->flow->l4 != TH_PKT_L4_UDP || !gen_wire_last_lost(r->wire)) {
				if (gen_wire_tap_lost_mask(r->wire) != 0)
					rpc->tap_lost |= TH_GEN_TAP_REPLY;
				break;
			}
		}
		r->stats->udp_retrans++;
		t += timeo;
		timeo = timeo * 2 > 60000000000ull ? 60000000000ull : timeo * 2;
	}
	rpc->op.call_first_ns = first;
	rpc->op.call_last_ns = last;
	rpc->op.reply_first_ns = rfirst;
	rpc->op.reply_last_ns = rlast;
	return 0;
}

/* Users workload: the next RPC of a user at client @p c, if one is due now. */
static int
act_users(struct run *r, struct gen_client *c, uint64_t now)
{
	struct gen_rpc *rpc = &r->rpcs[0];
	int rc;

	rc = gen_users_next(&r->world, c, now, rpc);
	if (rc <= 0)
		return rc;
	rc = exchange(r, rpc, now);
	if (rc != 0)
		return rc;
	rc = ops_push(r, &rpc->op, rpc->tap_lost);
	if (rc != 0)
		return rc;
	if (rpc->is_close_after) {
		rc = gen_wire_close(r->wire, rpc->flow, rpc->op.reply_last_ns + 20000);
		if (rc != 0)
			return rc;
	}
	r->stats->rpcs++;
	r->stats->rpc_messages += 2 + rpc->op.dup_calls;
	return gen_users_done(&r->world, c, rpc);
}

int
th_gen_run(
	const struct th_gen_config *cfg, const struct th_gen_sink *sink, struct th_gen_stats *stats)
{
	struct th_gen_stats local;
	struct run r;
	uint32_t i;
	int rc;

	if (stats == NULL)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (th_gen_config_check(cfg, NULL, 0) != 0 || sink == NULL || sink->frame == NULL)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.sink = sink;
	r.stats = stats;
	rc = gen_world_init(&r.world, cfg);
	if (rc != 0)
		return rc;
	r.world.stats = stats;
	r.world.open_cb = sink->open;
	r.world.open_ctx = sink->ctx;
	rc = -ENOMEM;
	if (cfg->workload == TH_GEN_WORKLOAD_USERS && gen_users_init(&r.world) != 0)
		goto out;
	r.wire = gen_wire_new(&r.world);
	r.clients = calloc(cfg->clients, sizeof(*r.clients));
	r.call_buf = malloc(2 * MSG_MAX);
	r.reply_buf = malloc(MSG_MAX);
	if (r.wire == NULL || r.clients == NULL || r.call_buf == NULL || r.reply_buf == NULL)
		goto out;
	/* Clients wake up spread over the first 2 ms. */
	for (i = 0; i < cfg->clients; i++) {
		r.world.clients[i].next_ns = cfg->start_ns + th_rng_below(&r.world.rng, 2000000);
		r.clients[i] = &r.world.clients[i];
	}
	for (i = cfg->clients / 2; i-- > 0;)
		clients_sift_down(r.clients, cfg->clients, i);
	rc = 0;
	while (rc == 0 && cfg->workload == TH_GEN_WORKLOAD_USERS) {
		struct gen_client *c = r.clients[0];
		uint64_t now = c->next_ns;

		if (now == UINT64_MAX)
			break; /* every user is done */
		rc = flush(&r, now);
		if (rc == 0)
			rc = act_users(&r, c, now);
		clients_sift_down(r.clients, cfg->clients, 0);
	}
	while (rc == 0 && cfg->workload == TH_GEN_WORKLOAD_OPS && stats->rpcs < cfg->ops) {
		struct gen_client *c = r.clients[0];
		uint64_t now = c->next_ns;

		rc = flush(&r, now);
		if (rc == 0)
			rc = act(&r, c, now, cfg->ops - stats->rpcs);
		clients_sift_down(r.clients, cfg->clients, 0);
	}
	if (rc == 0)
		rc = flush(&r, UINT64_MAX);
	if (r.wire != NULL)
		gen_wire_counts(r.wire, stats);
out:
	while (r.n_ops > 0)
		free(ops_pop(&r));
	free(r.ops);
	free(r.call_buf);
	free(r.reply_buf);
	free(r.clients);
	gen_wire_free(r.wire);
	gen_users_free(&r.world);
	gen_world_free(&r.world);
	return rc;
}

/* ---- files ---- */

struct file_sink {
	struct th_pcap_writer *pcap;
	FILE *truth;
	FILE *opens;
	uint64_t res;    /* time resolution, ns */
	struct th_op op; /* truth op with its times rounded */
	char line[4096];
};

static inline uint64_t
round_down(uint64_t ns, uint64_t res)
{
	return ns - ns % res;
}

static int
write_frame(void *ctx, uint64_t ts_ns, const uint8_t *frame, uint32_t size)
{
	struct file_sink *fs = ctx;

	if (ts_ns / 1000000000u > TH_GEN_TIME_MAX_S)
		return -ERANGE;
	return th_pcap_write(fs->pcap, round_down(ts_ns, fs->res), frame, size, size);
}

static const char *const tap_marks[] = {"", " tap=call", " tap=reply", " tap=both"};

/*
 * One truth line. An RPC the capture cannot see whole (--tap-loss) keeps its
 * line, marked the way a damaged robustness variant keeps its truth: whoever
 * scores a decode against it knows which RPCs may be missing or half.
 */
static int
write_op(void *ctx, const struct th_op *op, unsigned int tap)
{
	struct file_sink *fs = ctx;
	int n;

	/* Round the way the frames were rounded, so latencies match what a reader computes. */
	fs->op = *op;
	fs->op.call_first_ns = round_down(op->call_first_ns, fs->res);
	fs->op.call_last_ns = round_down(op->call_last_ns, fs->res);
	fs->op.reply_first_ns = round_down(op->reply_first_ns, fs->res);
	fs->op.reply_last_ns = round_down(op->reply_last_ns, fs->res);
	n = th_op_format(&fs->op, fs->line, sizeof(fs->line));
	if (n < 0 || (size_t)n >= sizeof(fs->line))
		return -EOVERFLOW;
	if (tap & 3) {
		/* th_op_format() ends the line with a newline: the mark goes before it. */
		int m = snprintf(fs->line + n - 1, sizeof(fs->line) - (size_t)n + 1, "%s\n",
			tap_marks[tap & 3]);

		if (m < 0 || (size_t)(n - 1 + m) >= sizeof(fs->line))
			return -EOVERFLOW;
		n += m - 1;
	}
	if (fwrite(fs->line, 1, (size_t)n, fs->truth) != (size_t)n)
		return errno ? -errno : -EIO;
	return 0;
}

static int
write_open(void *ctx, const struct th_gen_open *o)
{
	struct file_sink *fs = ctx;
	struct th_gen_open r = *o;
	int n;

	r.open_ns = round_down(o->open_ns, fs->res);
	r.close_ns = round_down(o->close_ns, fs->res);
	n = th_gen_open_format(&r, fs->line, sizeof(fs->line));
	if (n < 0 || (size_t)n >= sizeof(fs->line))
		return -EOVERFLOW;
	if (fwrite(fs->line, 1, (size_t)n, fs->opens) != (size_t)n)
		return errno ? -errno : -EIO;
	return 0;
}

int
th_gen_write(const struct th_gen_config *cfg, const char *pcap_path, const char *truth_path,
	struct th_gen_stats *stats, char *err, size_t err_size)
{
	struct th_gen_files files = {pcap_path, truth_path, NULL};

	return th_gen_write_files(cfg, &files, stats, err, err_size);
}

int
th_gen_write_files(const struct th_gen_config *cfg, const struct th_gen_files *files,
	struct th_gen_stats *stats, char *err, size_t err_size)
{
	static struct file_sink fs;
	struct th_gen_sink sink = {write_frame, NULL, &fs, NULL};
	const char *pcap_path = files->pcap, *truth_path = files->truth;
	int rc, rc2;

	rc = th_gen_config_check(cfg, err, err_size);
	if (rc != 0)
		return rc;
	memset(&fs, 0, sizeof(fs));
	fs.res = cfg->ts_resolution_ns ? cfg->ts_resolution_ns : 1;
	fs.pcap = th_pcap_writer_open(pcap_path, TH_PKT_LINK_ETHERNET, 65535);
	if (fs.pcap == NULL) {
		rc = -errno;
		snprintf(err, err_size, "cannot create %s: %s", pcap_path, strerror(errno));
		return rc;
	}
	if (truth_path != NULL) {
		fs.truth = fopen(truth_path, "w");
		if (fs.truth == NULL) {
			rc = -errno;
			snprintf(
				err, err_size, "cannot create %s: %s", truth_path, strerror(errno));
			th_pcap_writer_close(fs.pcap);
			return rc;
		}
		sink.op = write_op;
	}
	if (files->opens != NULL) {
		fs.opens = fopen(files->opens, "w");
		if (fs.opens == NULL) {
			rc = -errno;
			snprintf(err, err_size, "cannot create %s: %s", files->opens,
				strerror(errno));
			if (fs.truth != NULL)
				fclose(fs.truth);
			th_pcap_writer_close(fs.pcap);
			return rc;
		}
		sink.open = write_open;
	}
	rc = th_gen_run(cfg, &sink, stats);
	if (rc == -ERANGE)
		snprintf(err, err_size,
			"the traffic runs past 2038-01-19 03:14:07 UTC (2147483647 s), where pcap "
			"readers' signed 32-bit seconds end; %s holds the frames before: give an "
			"earlier --start, or fewer RPCs or less think time",
			pcap_path);
	else if (rc != 0)
		snprintf(err, err_size, "generation failed: %s", strerror(-rc));
	rc2 = th_pcap_writer_close(fs.pcap);
	if (rc == 0 && rc2 != 0) {
		rc = rc2;
		snprintf(err, err_size, "writing %s: %s", pcap_path, strerror(-rc2));
	}
	if (fs.truth != NULL && fclose(fs.truth) != 0 && rc == 0) {
		rc = errno ? -errno : -EIO;
		snprintf(err, err_size, "writing %s: %s", truth_path, strerror(-rc));
	}
	if (fs.opens != NULL && fclose(fs.opens) != 0 && rc == 0) {
		rc = errno ? -errno : -EIO;
		snprintf(err, err_size, "writing %s: %s", files->opens, strerror(-rc));
	}
	return rc;
}
