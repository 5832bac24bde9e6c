/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_xid.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "th_sat.h"

/*
 * A waiting call's entry in the table holds its key and time only, 56 bytes;
 * the op itself (1.1 KB: names and handles) lives in ops[]. Ops are handed
 * out from a stack of free ones, the most recently freed first: with a few
 * thousand calls waiting, a new call writes an op that is still in the
 * caches, where an op inside a random way of a 70 MB table was a miss on
 * every line it touched.
 */
struct entry {
	struct th_xid_key key; /* identity */
	uint32_t slot;         /* its op: ops[slot] */
	uint64_t entered_ns;   /* when the call went in */
};

#define AGE_SETS 256   /* sets th_xid_table_age() visits at least */
#define GAP_SLOTS 4096 /* connections whose last reply-direction gap is remembered */

/* The latest reply-direction gap of one connection. */
struct gap_mark {
	struct th_xid_key flow; /* the connection's calls, xid 0 */
	uint64_t gap_ns;        /* when the gap was seen; 0: slot unused */
};

struct th_xid_table {
	struct th_sat sat;        /* struct entry, keyed by th_xid_key */
	struct th_op *ops;        /* one per way of the table: the calls, then their replies */
	struct entry **owner;     /* per op, the entry it belongs to while used */
	uint32_t *free;           /* unused ops, the most recently freed last */
	uint32_t free_count;      /* of free[] */
	uint64_t timeout_ns;      /* a call waits this long at most */
	uint64_t gap_timeout_ns;  /* ... or this long behind a reply-direction gap; 0: off */
	bool has_gaps;            /* a mark was set: without one no call needs the gap check */
	uint64_t now_ns;          /* the time th_xid_table_age() was called with */
	th_xid_emit_cb emit;      /* unmatched call consumer */
	void *ctx;                /* for emit */
	struct th_xid_counters c; /* counters */
	struct gap_mark *gaps;    /* GAP_SLOTS, direct-mapped by connection */
};

static uint32_t
key_hash(const struct th_xid_key *k)
{
	/* Mixes the XID (which varies most) with the endpoints. */
	uint64_t h = 0x9e3779b97f4a7c15ull ^ k->xid;
	size_t i;

	for (i = 0; i < sizeof(*k) / 4; i++) {
		uint32_t v;

		memcpy(&v, (const uint8_t *)k + i * 4, 4);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

struct th_xid_table *
th_xid_table_create(uint32_t calls, uint64_t timeout_ns, th_xid_emit_cb emit, void *ctx)
{
	struct th_xid_table *t;
	uint32_t ways, i;
	int rc;

	if (emit == NULL) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = th_sat_init(&t->sat, calls, sizeof(struct entry));
	if (rc != 0) {
		free(t);
		errno = -rc;
		return NULL;
	}
	ways = th_sat_sets(&t->sat) * TH_SAT_WAYS;
	t->ops = malloc((size_t)ways * sizeof(*t->ops));
	t->owner = calloc(ways, sizeof(*t->owner));
	t->free = malloc((size_t)ways * sizeof(*t->free));
	t->gaps = calloc(GAP_SLOTS, sizeof(*t->gaps));
	if (t->ops == NULL || t->owner == NULL || t->free == NULL || t->gaps == NULL) {
		th_xid_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* Commit the ops now, not by page faults in the middle of a burst. */
	memset(t->ops, 0, (size_t)ways * sizeof(*t->ops));
	for (i = 0; i < ways; i++)
		t->free[i] = ways - 1 - i;
	t->free_count = ways;
	t->timeout_ns = timeout_ns;
	t->emit = emit;
	t->ctx = ctx;
	return t;
}

void
th_xid_table_free(struct th_xid_table *t)
{
	if (t == NULL)
		return;
	th_sat_fini(&t->sat);
	free(t->ops);
	free(t->owner);
	free(t->free);
	free(t->gaps);
	free(t);
}

/* Its way is released (or taken over) by the caller; its op goes back on the stack. */
static void
put_op(struct th_xid_table *t, struct entry *e)
{
	t->owner[e->slot] = NULL;
	t->free[t->free_count++] = e->slot;
}

/*
 * A call leaves without its reply: it goes out as a CALL line, counted, and
 * its op is free again (the caller releases or reuses the way).
 */
static void
leave(struct th_xid_table *t, struct entry *e)
{
	struct th_op *op = &t->ops[e->slot];

	op->kind = TH_OP_CALL_ONLY;
	t->c.unmatched_calls++;
	t->emit(t->ctx, op);
	put_op(t, e);
}

struct th_op *
th_xid_call(struct th_xid_table *t, const struct th_xid_key *key, uint32_t prog, uint32_t vers,
	uint32_t proc, uint64_t now_ns)
{
	uint32_t hash = key_hash(key);
	struct th_op *op;
	struct entry *e;
	bool evicted;

	e = th_sat_find(&t->sat, hash, key, sizeof(*key));
	if (e != NULL) {
		op = &t->ops[e->slot];
		if (op->prog == prog && op->vers == vers && op->proc == proc) {
			op->dup_calls++;
			t->c.calls_dup++;
			return NULL;
		}
		/*
		 * Another procedure under a waiting call's XID: no retransmission (that
		 * is the same call again) but a new call, the old one given up by its
		 * client. Its reply, if one comes, answers the new call.
		 */
		t->c.calls_reused++;
		leave(t, e);
	} else {
		e = th_sat_claim(&t->sat, hash, offsetof(struct entry, entered_ns), &evicted);
		if (evicted) {
			t->c.table_full++;
			leave(t, e);
		}
	}
	/* A way was free or was just given up with its op: an op is free too. */
	assert(t->free_count > 0);
	e->slot = t->free[--t->free_count];
	t->owner[e->slot] = e;
	t->c.calls++;
	e->key = *key;
	e->entered_ns = now_ns;
	op = &t->ops[e->slot];
	th_op_clear(op);
	op->prog = prog;
	op->vers = vers;
	op->proc = proc;
	return op;
}

struct th_op *
th_xid_find(struct th_xid_table *t, const struct th_xid_key *key)
{
	struct entry *e = th_sat_find(&t->sat, key_hash(key), key, sizeof(*key));

	return e != NULL ? &t->ops[e->slot] : NULL;
}

void
th_xid_remove(struct th_xid_table *t, struct th_op *op)
{
	struct entry *e = t->owner[op - t->ops];

	put_op(t, e);
	th_sat_release(&t->sat, e);
	t->c.matched++;
}

void
th_xid_count_unmatched_reply(struct th_xid_table *t)
{
	t->c.unmatched_replies++;
}

void
th_xid_table_set_gap_timeout(struct th_xid_table *t, uint64_t gap_timeout_ns)
{
	t->gap_timeout_ns = gap_timeout_ns;
}

/* The connection part of a key: what every call of one connection shares. */
static inline void
flow_of(const struct th_xid_key *key, struct th_xid_key *flow)
{
	*flow = *key;
	flow->xid = 0;
}

static inline struct gap_mark *
gap_slot(struct th_xid_table *t, const struct th_xid_key *flow)
{
	return &t->gaps[key_hash(flow) & (GAP_SLOTS - 1)];
}

void
th_xid_reply_gap(struct th_xid_table *t, const struct th_xid_key *flow, uint64_t now_ns)
{
	struct th_xid_key f;
	struct gap_mark *g;

	if (t->gap_timeout_ns == 0)
		return;
	flow_of(flow, &f);
	g = gap_slot(t, &f);
	g->flow = f;
	/* 0 marks a free slot; a capture starting at the epoch still gets its mark. */
	g->gap_ns = now_ns != 0 ? now_ns : 1;
	t->has_gaps = true;
}

/* Whether gap expiry can apply: on, and some connection had a gap. */
static inline bool
gap_active(const struct th_xid_table *t)
{
	return t->has_gaps && t->gap_timeout_ns != 0;
}

/* Was this call sent before a reply-direction gap of its connection? */
static bool
is_behind_gap(struct th_xid_table *t, const struct entry *e)
{
	struct th_xid_key f;
	const struct gap_mark *g;

	flow_of(&e->key, &f);
	g = gap_slot(t, &f);
	return g->gap_ns != 0 && e->entered_ns <= g->gap_ns && memcmp(&g->flow, &f, sizeof(f)) == 0;
}

static bool
is_overdue(void *ctx, void *entry)
{
	struct th_xid_table *t = ctx;
	struct entry *e = entry;
	uint64_t waited;

	if (t->now_ns < e->entered_ns)
		return false;
	waited = t->now_ns - e->entered_ns;
	if (waited >= t->timeout_ns) {
		leave(t, e);
		return true;
	}
	/* Cheap tests first: most calls are young, most captures lose nothing. */
	if (!gap_active(t) || waited < t->gap_timeout_ns || !is_behind_gap(t, e))
		return false;
	t->c.gap_expired++;
	leave(t, e);
	return true;
}

static bool
flush_one(void *ctx, void *entry)
{
	leave(ctx, entry);
	return true;
}

/*
 * Sets to visit now. A slice of 256 per call suits a live port aged every
 * millisecond; a file replayed faster than it was captured moves its clock
 * by seconds between calls, so visit as many sets as that clock step asks
 * for: a call then leaves at most a quarter of its timeout late.
 */
static uint32_t
sets_to_age(const struct th_xid_table *t, uint64_t now_ns)
{
	uint64_t pass_ns = t->timeout_ns, step, want, sets = th_sat_sets(&t->sat);

	if (gap_active(t) && t->gap_timeout_ns < pass_ns)
		pass_ns = t->gap_timeout_ns;
	pass_ns /= 4;
	if (t->now_ns == 0 || now_ns <= t->now_ns || pass_ns == 0)
		return AGE_SETS;
	step = now_ns - t->now_ns;
	if (step >= pass_ns)
		return (uint32_t)sets;
	want = sets * step / pass_ns + 1; /* sets < 2^24, step < 2^40: no overflow */
	return want > AGE_SETS ? (uint32_t)want : AGE_SETS;
}

uint32_t
th_xid_table_age(struct th_xid_table *t, uint64_t now_ns)
{
	uint32_t sets = sets_to_age(t, now_ns);

	t->now_ns = now_ns;
	return th_sat_sweep(&t->sat, sets, is_overdue, t);
}

uint32_t
th_xid_table_flush(struct th_xid_table *t)
{
	return th_sat_sweep_all(&t->sat, flush_one, t);
}

uint32_t
th_xid_table_count(const struct th_xid_table *t)
{
	return t->sat.used;
}

size_t
th_xid_table_memory(const struct th_xid_table *t)
{
	size_t ways = (size_t)th_sat_sets(&t->sat) * TH_SAT_WAYS;

	return sizeof(*t) + th_sat_memory(&t->sat) +
	       ways * (sizeof(*t->ops) + sizeof(*t->owner) + sizeof(*t->free)) +
	       GAP_SLOTS * sizeof(*t->gaps);
}

const struct th_xid_counters *
th_xid_table_counters(const struct th_xid_table *t)
{
	return &t->c;
}
