/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SAT_H
#define TH_SAT_H

/**
 * @file
 * A bounded, 8-way set-associative table of fixed-size entries: the shape
 * of every per-lcore table on the fast path (TCP flows, waiting calls).
 *
 * Memory is allocated once. A key hashes to one set of 8 ways; a lookup
 * compares 8 32-bit signatures, then the key of the matching way. When a
 * set is full, the way with the oldest timestamp gives way and the caller
 * is told, so it can count (and report) what was pushed out. Each entry
 * starts with its key; where its timestamp lives is the caller's choice.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TH_SAT_WAYS 8

struct th_sat {
	uint32_t *sig;       /**< TH_SAT_WAYS per set; 0 marks a free way */
	uint8_t *entries;    /**< way w of set s at (s * TH_SAT_WAYS + w) * entry_size */
	size_t entry_size;   /**< bytes per entry */
	uint32_t set_mask;   /**< sets - 1 (a power of two) */
	uint32_t used;       /**< entries in use */
	uint32_t sweep_next; /**< next set th_sat_sweep() visits */
	uint8_t *turn;       /**< per set, the way th_sat_claim_turn() takes next (lazy tables) */
};

/**
 * Allocate room for at least @p entries entries of @p entry_size bytes, every
 * page touched now (a capture box commits its memory at start, not in the
 * middle of a burst). @return 0, -EINVAL (0 or more than 2^26 entries),
 * -ENOMEM.
 */
int th_sat_init(struct th_sat *t, uint32_t entries, size_t entry_size);

/**
 * th_sat_init() with pages mapped only as entries fill them (batch tools),
 * and th_sat_claim_turn() available.
 */
int th_sat_init_lazy(struct th_sat *t, uint32_t entries, size_t entry_size);

/** Free what th_sat_init() allocated. */
void th_sat_fini(struct th_sat *t);

/** The entry with this key (its first @p key_size bytes), or NULL. */
void *th_sat_find(const struct th_sat *t, uint32_t hash, const void *key, size_t key_size);

/**
 * Take a way of @p hash's set for a new entry (the caller checked the key
 * is absent). A free way if there is one; otherwise the way whose uint64_t
 * at @p time_offset is smallest, with *evicted set and its old contents
 * still in place for the caller to account for before overwriting them.
 */
void *th_sat_claim(struct th_sat *t, uint32_t hash, size_t time_offset, bool *evicted);

/**
 * Start loading the signatures of @p hash's set, so that a th_sat_find() a
 * little later does not wait for memory: a lookup in a table larger than the
 * caches otherwise misses twice, on the signatures and on the entry.
 */
static inline void
th_sat_prefetch(const struct th_sat *t, uint32_t hash)
{
	__builtin_prefetch(&t->sig[(size_t)(hash & t->set_mask) * TH_SAT_WAYS]);
}

/** Then start loading the entries of that set whose signature matches (usually one). */
void th_sat_prefetch_entries(const struct th_sat *t, uint32_t hash);

/**
 * th_sat_claim() for a th_sat_init_lazy() table that only adds entries (no
 * th_sat_release()): a free way, else the set's ways in turn, which is the
 * way claimed longest ago. It reads no entry, where th_sat_claim() reads
 * every way's timestamp: eight cache misses in a table larger than the caches.
 */
void *th_sat_claim_turn(struct th_sat *t, uint32_t hash, bool *evicted);

/** Give an entry's way back. */
void th_sat_release(struct th_sat *t, void *entry);

/**
 * Visit the used entries of the next @p sets sets (wrapping around), so
 * periodic aging stays short and bounded. @p expire returns true to release
 * the entry it is shown. @return entries released.
 */
uint32_t th_sat_sweep(
	struct th_sat *t, uint32_t sets, bool (*expire)(void *ctx, void *entry), void *ctx);

/** Visit every used entry once (for a final flush). @return entries released. */
uint32_t th_sat_sweep_all(struct th_sat *t, bool (*expire)(void *ctx, void *entry), void *ctx);

/** Bytes allocated. */
size_t th_sat_memory(const struct th_sat *t);

/**
 * The mixing rounds of th_sat_hash(), eight bytes a round, from state @p h
 * and without the final avalanche: a key of several parts hashes part by
 * part, and a caller that mixes the result itself (lib/session) pays for no
 * mixing twice. In memory only, like th_sat_hash().
 */
static inline uint64_t
th_sat_hash_step(uint64_t h, const void *key, size_t n)
{
	const uint8_t *p = key;
	uint64_t v;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&v, p, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (n > 0) {
		/* The tail byte by byte: a memcpy() of a variable length is a library call. */
		v = 0;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)p[i] << (8 * i);
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	}
	return h;
}

/** The final avalanche of th_sat_hash() on state @p h from th_sat_hash_step(). */
static inline uint32_t
th_sat_hash_final(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

/**
 * MurmurHash3's 64-bit finaliser (fmix64), to 32 bits: every bit of @p h moves
 * every bit of the result. For callers that sum or xor their own words first.
 */
static inline uint32_t
th_sat_fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

/**
 * A hash of @p n bytes for in-memory tables (never stored: byte order does
 * not matter). Keys that differ only in their last bytes (addresses, the top
 * of a little-endian word) still spread over the low bits that pick a set.
 */
static inline uint32_t
th_sat_hash(const void *key, size_t n)
{
	return th_sat_hash_final(th_sat_hash_step((uint64_t)n * 0x9e3779b97f4a7c15ull, key, n));
}

/** Sets in the table. */
static inline uint32_t
th_sat_sets(const struct th_sat *t)
{
	return t->set_mask + 1;
}

#endif /* TH_SAT_H */
