/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_xid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WAYS 8

struct entry {
	struct th_xid_key key; /* identity */
	uint64_t entered_ns;   /* when the call went in */
	struct th_op op;       /* the call, then the reply is written beside it */
};

struct bucket {
	uint32_t sig[WAYS]; /* 0: free way */
};

struct th_xid_table {
	struct bucket *buckets;	   /* bucket_mask + 1 sets */
	struct entry *entries;	   /* way w of bucket b at b * WAYS + w */
	uint32_t bucket_mask;	   /* buckets - 1 */
	uint32_t used;		   /* calls waiting */
	uint32_t age_cursor;	   /* next bucket to age */
	uint64_t timeout_ns;	   /* a call waits this long at most */
	th_xid_emit_cb emit;	   /* unmatched call consumer */
	void *ctx;		   /* for emit */
	struct th_xid_counters c;  /* counters */
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
	uint32_t buckets = 1;

	if (calls == 0 || calls > (1u << 26) || emit == NULL) {
		errno = EINVAL;
		return NULL;
	}
	while (buckets * WAYS < calls)
		buckets <<= 1;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto fail;
	t->buckets = calloc(buckets, sizeof(*t->buckets));
	if (t->buckets == NULL)
		goto free_table;
	t->entries = calloc((size_t)buckets * WAYS, sizeof(*t->entries));
	if (t->entries == NULL)
		goto free_buckets;
	t->bucket_mask = buckets - 1;
	t->timeout_ns = timeout_ns;
	t->emit = emit;
	t->ctx = ctx;
	return t;

free_buckets:
	free(t->buckets);
free_table:
	free(t);
fail:
	errno = ENOMEM;
	return NULL;
}

void
th_xid_table_free(struct th_xid_table *t)
{
	if (t == NULL)
		return;
	free(t->entries);
	free(t->buckets);
	free(t);
}

static void
leave(struct th_xid_table *t, uint32_t b, int w)
{
	struct entry *e = &t->entries[(size_t)b * WAYS + w];

	t->buckets[b].sig[w] = 0;
	t->used--;
	e->op.kind = TH_OP_CALL_ONLY;
	t->c.unmatched_calls++;
	t->emit(t->ctx, &e->op);
}

struct th_op *
th_xid_call(struct th_xid_table *t, const struct th_xid_key *key, uint64_t now_ns)
{
	uint32_t hash = key_hash(key);
	uint32_t b = hash & t->bucket_mask, sig = hash | 1;
	struct bucket *bk = &t->buckets[b];
	struct entry *base = &t->entries[(size_t)b * WAYS];
	int w, free_way = -1, old_way = -1;

	for (w = 0; w < WAYS; w++) {
		if (bk->sig[w] == 0) {
			if (free_way < 0)
				free_way = w;
			continue;
		}
		if (bk->sig[w] == sig && memcmp(&base[w].key, key, sizeof(*key)) == 0) {
			base[w].op.dup_calls++;
			t->c.calls_dup++;
			return NULL;
		}
		if (old_way < 0 || base[w].entered_ns < base[old_way].entered_ns)
			old_way = w;
	}
	if (free_way < 0) {
		t->c.table_full++;
		leave(t, b, old_way);
		free_way = old_way;
	}
	bk->sig[free_way] = sig;
	t->used++;
	t->c.calls++;
	base[free_way].key = *key;
	base[free_way].entered_ns = now_ns;
	th_op_clear(&base[free_way].op);
	return &base[free_way].op;
}

struct th_op *
th_xid_find(struct th_xid_table *t, const struct th_xid_key *key)
{
	uint32_t hash = key_hash(key);
	uint32_t b = hash & t->bucket_mask, sig = hash | 1;
	struct entry *base = &t->entries[(size_t)b * WAYS];
	int w;

	for (w = 0; w < WAYS; w++)
		if (t->buckets[b].sig[w] == sig && memcmp(&base[w].key, key, sizeof(*key)) == 0)
			return &base[w].op;
	return NULL;
}

void
th_xid_remove(struct th_xid_table *t, struct th_op *op)
{
	struct entry *e = (struct entry *)(void *)((uint8_t *)op - offsetof(struct entry, op));
	size_t slot = (size_t)(e - t->entries);

	t->buckets[slot / WAYS].sig[slot % WAYS] = 0;
	t->used--;
	t->c.matched++;
}

void
th_xid_count_unmatched_reply(struct th_xid_table *t)
{
	t->c.unmatched_replies++;
}

uint32_t
th_xid_table_age(struct th_xid_table *t, uint64_t now_ns)
{
	uint32_t n = (t->bucket_mask + 1) < 256 ? t->bucket_mask + 1 : 256;
	uint32_t aged = 0, i;
	int w;

	for (i = 0; i < n; i++) {
		uint32_t b = t->age_cursor;
		struct entry *base = &t->entries[(size_t)b * WAYS];

		t->age_cursor = (t->age_cursor + 1) & t->bucket_mask;
		for (w = 0; w < WAYS; w++) {
			if (t->buckets[b].sig[w] == 0 || now_ns < base[w].entered_ns ||
			    now_ns - base[w].entered_ns < t->timeout_ns)
				continue;
			leave(t, b, w);
			aged++;
		}
	}
	return aged;
}

uint32_t
th_xid_table_flush(struct th_xid_table *t)
{
	uint32_t b, n = 0;
	int w;

	for (b = 0; b <= t->bucket_mask; b++)
		for (w = 0; w < WAYS; w++)
			if (t->buckets[b].sig[w] != 0) {
				leave(t, b, w);
				n++;
			}
	return n;
}

uint32_t
th_xid_table_count(const struct th_xid_table *t)
{
	return t->used;
}

size_t
th_xid_table_memory(const struct th_xid_table *t)
{
	size_t buckets = (size_t)t->bucket_mask + 1;

	return sizeof(*t) + buckets * (sizeof(struct bucket) + WAYS * sizeof(struct entry));
}

const struct th_xid_counters *
th_xid_table_counters(const struct th_xid_table *t)
{
	return &t->c;
}
