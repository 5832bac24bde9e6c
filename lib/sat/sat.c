/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_sat.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Signatures are never 0: 0 marks a free way. */
static inline uint32_t
sig_of(uint32_t hash)
{
	return hash | 1;
}

static inline uint8_t *
entry_at(const struct th_sat *t, size_t slot)
{
	return t->entries + slot * t->entry_size;
}

static int
init(struct th_sat *t, uint32_t entries, size_t entry_size, bool is_lazy)
{
	uint32_t sets = 1;
	size_t size;

	memset(t, 0, sizeof(*t));
	if (entries == 0 || entries > (1u << 26) || entry_size == 0)
		return -EINVAL;
	while (sets * TH_SAT_WAYS < entries)
		sets <<= 1;
	size = (size_t)sets * TH_SAT_WAYS * entry_size;
	t->sig = calloc((size_t)sets * TH_SAT_WAYS, sizeof(*t->sig));
	t->entries = is_lazy ? calloc(1, size) : malloc(size);
	t->turn = is_lazy ? calloc(sets, sizeof(*t->turn)) : NULL;
	if (t->sig == NULL || t->entries == NULL || (is_lazy && t->turn == NULL)) {
		free(t->sig);
		free(t->entries);
		free(t->turn);
		memset(t, 0, sizeof(*t));
		return -ENOMEM;
	}
	/*
	 * Touch every page now: a capture box wants its memory committed at
	 * start, not page faults in the middle of a burst.
	 */
	if (!is_lazy)
		memset(t->entries, 0, size);
	t->entry_size = entry_size;
	t->set_mask = sets - 1;
	return 0;
}

int
th_sat_init(struct th_sat *t, uint32_t entries, size_t entry_size)
{
	return init(t, entries, entry_size, false);
}

int
th_sat_init_lazy(struct th_sat *t, uint32_t entries, size_t entry_size)
{
	return init(t, entries, entry_size, true);
}

void
th_sat_fini(struct th_sat *t)
{
	free(t->entries);
	free(t->sig);
	free(t->turn);
	memset(t, 0, sizeof(*t));
}

void *
th_sat_find(const struct th_sat *t, uint32_t hash, const void *key, size_t key_size)
{
	size_t base = (size_t)(hash & t->set_mask) * TH_SAT_WAYS;
	uint32_t sig = sig_of(hash);
	int w;

	for (w = 0; w < TH_SAT_WAYS; w++)
		if (t->sig[base + w] == sig && memcmp(entry_at(t, base + w), key, key_size) == 0)
			return entry_at(t, base + w);
	return NULL;
}

void
th_sat_prefetch_entries(const struct th_sat *t, uint32_t hash)
{
	size_t base = (size_t)(hash & t->set_mask) * TH_SAT_WAYS, w;
	uint32_t sig = sig_of(hash);

	for (w = base; w < base + TH_SAT_WAYS; w++) {
		if (t->sig[w] == sig) {
			const uint8_t *e = entry_at(t, w);

			__builtin_prefetch(e);
			__builtin_prefetch(e + t->entry_size - 1);
		}
	}
}

static inline uint64_t
time_at(const struct th_sat *t, size_t slot, size_t time_offset)
{
	uint64_t v;

	memcpy(&v, entry_at(t, slot) + time_offset, sizeof(v));
	return v;
}

/* The first free way of the set at @p base, taken for @p hash; NULL when the set is full. */
static void *
claim_free(struct th_sat *t, size_t base, uint32_t hash, bool *evicted)
{
	size_t w;

	*evicted = false;
	for (w = base; w < base + TH_SAT_WAYS; w++) {
		if (t->sig[w] == 0) {
			t->sig[w] = sig_of(hash);
			t->used++;
			return entry_at(t, w);
		}
	}
	return NULL;
}

void *
th_sat_claim(struct th_sat *t, uint32_t hash, size_t time_offset, bool *evicted)
{
	size_t base = (size_t)(hash & t->set_mask) * TH_SAT_WAYS, oldest = base, w;
	void *e = claim_free(t, base, hash, evicted);

	if (e != NULL)
		return e;
	/* Only a full set reads its entries' times: each is a cache miss in a large table. */
	for (w = base + 1; w < base + TH_SAT_WAYS; w++)
		if (time_at(t, w, time_offset) < time_at(t, oldest, time_offset))
			oldest = w;
	*evicted = true;
	t->sig[oldest] = sig_of(hash);
	return entry_at(t, oldest);
}

void *
th_sat_claim_turn(struct th_sat *t, uint32_t hash, bool *evicted)
{
	size_t set = hash & t->set_mask, base = set * TH_SAT_WAYS, w;
	void *e = claim_free(t, base, hash, evicted);

	if (e != NULL)
		return e;
	/* Full: ways were filled in order and are replaced in order, oldest first. */
	assert(t->turn != NULL); /* th_sat_init_lazy() tables only */
	*evicted = true;
	w = base + t->turn[set];
	t->turn[set] = (uint8_t)((t->turn[set] + 1) % TH_SAT_WAYS);
	t->sig[w] = sig_of(hash);
	return entry_at(t, w);
}

void
th_sat_release(struct th_sat *t, void *entry)
{
	size_t slot = (size_t)((uint8_t *)entry - t->entries) / t->entry_size;

	t->sig[slot] = 0;
	t->used--;
}

static uint32_t
sweep_set(struct th_sat *t, uint32_t set, bool (*expire)(void *ctx, void *entry), void *ctx)
{
	size_t base = (size_t)set * TH_SAT_WAYS, w;
	uint32_t n = 0;

	for (w = base; w < base + TH_SAT_WAYS; w++) {
		if (t->sig[w] == 0 || !expire(ctx, entry_at(t, w)))
			continue;
		t->sig[w] = 0;
		t->used--;
		n++;
	}
	return n;
}

uint32_t
th_sat_sweep(struct th_sat *t, uint32_t sets, bool (*expire)(void *ctx, void *entry), void *ctx)
{
	uint32_t n = 0, i;

	if (sets > th_sat_sets(t))
		sets = th_sat_sets(t);
	for (i = 0; i < sets; i++) {
		n += sweep_set(t, t->sweep_next, expire, ctx);
		t->sweep_next = (t->sweep_next + 1) & t->set_mask;
	}
	return n;
}

uint32_t
th_sat_sweep_all(struct th_sat *t, bool (*expire)(void *ctx, void *entry), void *ctx)
{
	uint32_t n = 0, s;

	for (s = 0; s < th_sat_sets(t); s++)
		n += sweep_set(t, s, expire, ctx);
	return n;
}

size_t
th_sat_memory(const struct th_sat *t)
{
	size_t slots = (size_t)th_sat_sets(t) * TH_SAT_WAYS;

	return slots * (sizeof(*t->sig) + t->entry_size) +
	       (t->turn != NULL ? th_sat_sets(t) * sizeof(*t->turn) : 0);
}
