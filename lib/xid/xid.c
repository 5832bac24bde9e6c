/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_xid.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "th_sat.h"

struct entry {
	struct th_xid_key key; /* identity */
	uint64_t entered_ns;   /* when the call went in */
	struct th_op op;       /* the call, then the reply is written beside it */
};

struct th_xid_table {
	struct th_sat sat;        /* struct entry, keyed by th_xid_key */
	uint64_t timeout_ns;      /* a call waits this long at most */
	uint64_t now_ns;          /* the time th_xid_table_age() was called with */
	th_xid_emit_cb emit;      /* unmatched call consumer */
	void *ctx;                /* for emit */
	struct th_xid_counters c; /* counters */
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
	free(t);
}

/* A call leaves without its reply: it goes out as a CALL line, counted. */
static void
leave(struct th_xid_table *t, struct entry *e)
{
	e->op.kind = TH_OP_CALL_ONLY;
	t->c.unmatched_calls++;
	t->emit(t->ctx, &e->op);
}

struct th_op *
th_xid_call(struct th_xid_table *t, const struct th_xid_key *key, uint64_t now_ns)
{
	uint32_t hash = key_hash(key);
	struct entry *e;
	bool evicted;

	e = th_sat_find(&t->sat, hash, key, sizeof(*key));
	if (e != NULL) {
		e->op.dup_calls++;
		t->c.calls_dup++;
		return NULL;
	}
	e = th_sat_claim(&t->sat, hash, offsetof(struct entry, entered_ns), &evicted);
	if (evicted) {
		t->c.table_full++;
		leave(t, e);
	}
	t->c.calls++;
	e->key = *key;
	e->entered_ns = now_ns;
	th_op_clear(&e->op);
	return &e->op;
}

struct th_op *
th_xid_find(struct th_xid_table *t, const struct th_xid_key *key)
{
	struct entry *e = th_sat_find(&t->sat, key_hash(key), key, sizeof(*key));

	return e != NULL ? &e->op : NULL;
}

void
th_xid_remove(struct th_xid_table *t, struct th_op *op)
{
	th_sat_release(&t->sat, (uint8_t *)op - offsetof(struct entry, op));
	t->c.matched++;
}

void
th_xid_count_unmatched_reply(struct th_xid_table *t)
{
	t->c.unmatched_replies++;
}

static bool
is_overdue(void *ctx, void *entry)
{
	struct th_xid_table *t = ctx;
	struct entry *e = entry;

	if (t->now_ns < e->entered_ns || t->now_ns - e->entered_ns < t->timeout_ns)
		return false;
	leave(t, e);
	return true;
}

static bool
flush_one(void *ctx, void *entry)
{
	leave(ctx, entry);
	return true;
}

uint32_t
th_xid_table_age(struct th_xid_table *t, uint64_t now_ns)
{
	t->now_ns = now_ns;
	return th_sat_sweep(&t->sat, 256, is_overdue, t);
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
	return sizeof(*t) + th_sat_memory(&t->sat);
}

const struct th_xid_counters *
th_xid_table_counters(const struct th_xid_table *t)
{
	return &t->c;
}
