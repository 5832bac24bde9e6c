/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Chunk coding (record format version 3). Version 2 coded every record on
 * its own, so each record repeated its 32-byte handle, both addresses, uid,
 * gid and an absolute time, and LZ4 had to find those again in its 64 KiB
 * window at about three bytes a match between random fields. Within a chunk,
 * a value that repeats is written once and referred to by index, and a time
 * is a small difference, so what is left for LZ4 is mostly the few bytes a
 * record really carries (bench_segment, 32-byte handles: 35.9 bytes a record
 * on disk in version 2, see the README for version 3).
 *
 * Tables (all empty at the start of a chunk, entries appended in order of
 * first use, never removed):
 *   ADDR  an address (16 bytes)                       at most 4096 entries
 *   USER  uid and gid                                 at most 4096
 *   FILE  server address and file handle               at most 8192
 *   FLOW  client, server, ports, program, version      at most 4096
 *
 * A reference to a table holding n entries is a value v in [0, n], one byte
 * while n < 256 and two (little-endian) after: v < n is entry v, v == n
 * means a new entry follows inline and becomes entry n. Inline entries:
 *   ADDR  u8 0 and 4 bytes (IPv4-mapped), or u8 1 and 16 bytes (anything else)
 *   USER  uid varint, gid varint
 *   FILE  server ADDR ref, fh_len u8, fh_tail u8 (trailing zero bytes not
 *         stored), fh[fh_len - fh_tail] (ending in a non-zero byte)
 *   FLOW  client ADDR ref, server ADDR ref, client_port u16, server_port
 *         u16, prog varint, vers varint
 * Each FILE entry remembers the size of the last OPEN that used it and each
 * FLOW entry the xid of its last RPC (both 0 when added).
 *
 * Every record starts with a tag byte: bits 0-1 the type (1 OPEN, 2 NAME,
 * 3 RPC), bits 2-7 form bits of the type. Its time is a zigzag varint of
 * the (signed, mod 2^64) difference from the time of the chunk's previous
 * record (0 at the start of a chunk). Varints are unsigned LEB128 (7 bits
 * a byte, low group first, at most 10 bytes); an overlong spelling, with a
 * superfluous high zero group, is refused.
 *
 * OPEN: tag (bit 2 dir, bits 3-4 flags 0-3, bit 5 size equals the FILE
 *   entry's, bit 6 transferred is 0 (and size is not), bit 7 a second form
 *   byte follows: bit 0 transferred stored, bit 1 seq_bytes stored, bit 2
 *   version stored, bit 3 flags stored); time (open_ns); close_ns - open_ns
 *   varint; FILE ref; client ADDR ref; USER ref; ops varint; then when the
 *   form says so: vers u8 (else the chunk's previous OPEN version, 3 at the
 *   start), flags u8 (above 3), transferred varint (neither size nor 0),
 *   seq_bytes varint (not transferred), size varint (not the entry's).
 * NAME: tag (bit 2 open-ended: to_ns 0, bit 3 mode stored: version 4 on,
 *   refused in a version 3 chunk);
 *   time (from_ns); to_ns - from_ns varint unless open-ended; FILE ref
 *   (server, fh); FILE ref (server, dir_fh); name_len u8; name bytes; mode
 *   varint (not 0) when bit 3 says so.
 * RPC: tag (bit 2 call_ns present, bit 3 reply_ns present, bit 4 done
 *   equals count, bits 5-7 flags 0-6, or 7: a flags byte above 6 follows);
 *   with a call, time (call_ns) and with a reply too, reply_ns - call_ns
 *   varint; with only a reply, time (reply_ns); FLOW ref; xid as a zigzag
 *   varint of its difference from the flow's last xid (mod 2^32); proc
 *   varint; status varint; USER ref; flags u8 (when bits 5-7 are 7); FILE
 *   ref (the handle on the flow's server); offset varint; count varint; done
 *   varint (unless equal to count); size varint.
 *
 * Every form bit that says a value is implied is required when it is: a
 * stored value equal to what the form would imply is refused.
 * A table entry that repeats an earlier one is not refused (the decoder
 * keeps no index), so a chunk has one spelling per record only as written
 * by this encoder; the fuzzer checks that what decodes encodes back to the
 * same records.
 */

#include "th_trace.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "th_sat.h"
#include "trace_private.h"

enum { T_ADDR, T_USER, T_FILE, T_FLOW, T_COUNT };

/*
 * Sized for a 256 KiB chunk (about 10000 records of the benchmark, a third
 * of them with a handle new to the chunk); a full table ends the chunk early.
 */
#define TBL_FILES 8192
#define TBL_SMALL 4096

#define FILE_KEY_MAX (16 + 1 + TH_TRACE_FH_MAX)
#define USER_KEY_SIZE (4 + 4)
#define FLOW_KEY_SIZE (16 + 16 + 2 + 2 + 4 + 2)

/* A key slot: the key's bytes rounded up to 8. */
#define KEY_CAP(n) (((n) + 7u) & ~7u)

/* Entries, bytes a key may take, and hash slots (a power of two, twice the entries). */
static const struct {
	uint32_t max;
	uint32_t key_cap;
} tbl_shape[T_COUNT] = {
	[T_ADDR] = {TBL_SMALL, KEY_CAP(sizeof(struct th_addr))},
	[T_USER] = {TBL_SMALL, KEY_CAP(USER_KEY_SIZE)},
	[T_FILE] = {TBL_FILES, KEY_CAP(FILE_KEY_MAX)},
	[T_FLOW] = {TBL_SMALL, KEY_CAP(FLOW_KEY_SIZE)},
};

/*
 * Keys lie in one block of bytes. An encoder's tables are allocated whole
 * at creation (no allocation while a capture writes), their keys key_cap
 * bytes apart, and indexed by hash; its FLOW keys are in the memos, and
 * only its FILE table keeps a value. A reader's grow with the chunks it
 * reads, to what the largest held, lie end to end and are never indexed: a
 * reader of a stream holds a few hundred KiB instead of the 1.2 MiB a
 * chunk's worst case takes.
 */
struct tbl {
	uint32_t count;    /* entries */
	uint32_t max;      /* entries it may hold */
	uint32_t cap;      /* entries allocated */
	uint32_t key_cap;  /* bytes one key may take */
	uint32_t mask;     /* hash slots - 1 */
	uint16_t *slot;    /* entry index + 1 by hash, 0: empty; NULL in a reader */
	bool is_indexed;   /* slots filled since the last reset */
	uint8_t *key;      /* the keys' bytes; NULL in an encoder's FLOW table */
	size_t key_used;   /* bytes of them in use (a reader's) */
	size_t key_size;   /* bytes allocated */
	uint32_t *key_off; /* a reader's: where each entry's key starts */
	uint64_t *val;     /* per entry: last size (FILE), a reader's last xid (FLOW) */
};

/*
 * An encoder's FLOW entry, in one cache line: its key, the xid of its last
 * RPC, and what lets most RPCs of a flow skip two lookups (a client sends its
 * calls as one user, and a new FILE of the flow's server refers to the ADDR
 * entry the flow refers to). The FLOW table keeps no key or value of its own.
 */
struct flow_memo {
	alignas(64) uint8_t key[FLOW_KEY_SIZE]; /* flow_key() */
	uint16_t user;   /* the USER entry of the flow's last RPC (has_user) ... */
	uint32_t uid;    /* ... its uid ... */
	uint32_t gid;    /* ... and gid */
	uint32_t xid;    /* xid of the flow's last RPC */
	uint16_t server; /* the ADDR entry of the flow's server */
	bool has_user;   /* user, uid and gid are set */
};

struct th_trace_chunk {
	struct tbl t[T_COUNT];
	struct flow_memo *memo; /* encoder: one per FLOW entry; NULL in a reader */
	uint64_t prev_ns;       /* time of the chunk's previous record */
	uint8_t prev_vers;      /* NFS version of the chunk's previous OPEN */
	uint16_t version;       /* record format version a reader decodes */
	bool is_oom;            /* a reader's table could not grow */
	bool has_room;          /* th_trace_chunk_has_room(), kept as tables grow */
};

/* A reader's tables start this large (entries, and key bytes an entry) and double. */
#define READER_ENTRIES 256
#define KEY_BYTES_START 32

/* Tag bits. */
#define TAG_TYPE_MASK 3u

enum {
	OT_DIR = 1 << 2,
	OT_FLAGS_SHIFT = 3,
	OT_FLAGS_MASK = 3 << OT_FLAGS_SHIFT,
	OT_SIZE_SAME = 1 << 5,
	OT_XFER_ZERO = 1 << 6,
	OT_EXT = 1 << 7,
};

enum {
	OX_XFER = 1 << 0,
	OX_SEQ = 1 << 1,
	OX_VERS = 1 << 2,
	OX_FLAGS = 1 << 3,
	OX_ALL = (1 << 4) - 1,
};

enum {
	NT_OPEN_ENDED = 1 << 2,
	NT_MODE = 1 << 3,
	NT_ALL = (1 << 4) - 1,
};

enum {
	RT_CALL = 1 << 2,
	RT_REPLY = 1 << 3,
	RT_DONE_IS_COUNT = 1 << 4,
	RT_FLAGS_SHIFT = 5,
	RT_FLAGS_BYTE = 7,
};

#define VERS_START 3

/* The first record format version whose NAME records may store a mode (NT_MODE). */
#define VERSION_NAME_MODE 4

/* No table entry (one a caller does not know). */
#define NO_ENTRY UINT32_MAX

/* Room in a reader's table for @p entries entries and @p bytes of keys; 0 or -ENOMEM. */
static int
tbl_reserve(struct tbl *t, uint32_t entries, size_t bytes)
{
	uint32_t *off;
	uint8_t *key;
	uint64_t *val;

	if (entries > t->cap) {
		off = realloc(t->key_off, entries * sizeof(*off));
		if (off == NULL)
			return -ENOMEM;
		t->key_off = off;
		val = realloc(t->val, entries * sizeof(*val));
		if (val == NULL)
			return -ENOMEM;
		t->val = val;
		t->cap = entries;
	}
	if (bytes > t->key_size) {
		key = realloc(t->key, bytes);
		if (key == NULL)
			return -ENOMEM;
		t->key = key;
		t->key_size = bytes;
	}
	return 0;
}

/* An encoder's table @p type, whole: 0 or -ENOMEM. */
static int
tbl_alloc(struct tbl *t, int type)
{
	t->cap = t->max;
	t->slot = calloc(2 * t->max, sizeof(*t->slot));
	if (type != T_FLOW) {
		t->key_size = (size_t)t->max * t->key_cap;
		t->key = malloc(t->key_size);
	}
	if (type == T_FILE)
		t->val = malloc(t->max * sizeof(*t->val));
	return t->slot == NULL || (type != T_FLOW && t->key == NULL) ||
			       (type == T_FILE && t->val == NULL)
		       ? -ENOMEM
		       : 0;
}

static struct th_trace_chunk *
create(bool is_reader)
{
	struct th_trace_chunk *c = calloc(1, sizeof(*c));

	if (c == NULL)
		goto fail;
	for (int i = 0; i < T_COUNT; i++) {
		struct tbl *t = &c->t[i];

		t->max = tbl_shape[i].max;
		t->key_cap = tbl_shape[i].key_cap;
		t->mask = 2 * t->max - 1;
		if (is_reader ? tbl_reserve(t, READER_ENTRIES, READER_ENTRIES * KEY_BYTES_START)
			      : tbl_alloc(t, i))
			goto fail_tables;
	}
	if (!is_reader && (c->memo = aligned_alloc(64, TBL_SMALL * sizeof(*c->memo))) == NULL)
		goto fail_tables;
	c->version = TH_TRACE_VERSION;
	th_trace_chunk_reset(c);
	return c;

fail_tables:
	th_trace_chunk_free(c);
fail:
	errno = ENOMEM;
	return NULL;
}

struct th_trace_chunk *
th_trace_chunk_create(void)
{
	return create(false);
}

struct th_trace_chunk *
th_trace_chunk_create_reader(void)
{
	return create(true);
}

int
th_trace_chunk_set_version(struct th_trace_chunk *c, unsigned int version)
{
	/* An encoder writes the latest version only: it has no older layout to choose. */
	if (c->memo != NULL || version < TH_TRACE_VERSION_MIN || version > TH_TRACE_VERSION)
		return -EINVAL;
	c->version = (uint16_t)version;
	return 0;
}

void
th_trace_chunk_free(struct th_trace_chunk *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < T_COUNT; i++) {
		free(c->t[i].slot);
		free(c->t[i].key);
		free(c->t[i].key_off);
		free(c->t[i].val);
	}
	free(c->memo);
	free(c);
}

/*
 * Whether the tables can take one more record of any type: an RPC adds two addresses and a
 * flow, a NAME two files, an OPEN two addresses. A reader's chunk does not encode. Only adding
 * an entry changes it, so the encoder works it out then, not once or twice a record.
 */
static bool
room(const struct th_trace_chunk *c)
{
	return c->t[T_ADDR].slot != NULL && c->t[T_ADDR].count + 3 <= c->t[T_ADDR].max &&
	       c->t[T_FILE].count + 2 <= c->t[T_FILE].max &&
	       c->t[T_USER].count + 1 <= c->t[T_USER].max &&
	       c->t[T_FLOW].count + 1 <= c->t[T_FLOW].max;
}

void
th_trace_chunk_reset(struct th_trace_chunk *c)
{
	for (int i = 0; i < T_COUNT; i++) {
		struct tbl *t = &c->t[i];

		/* Only a table the encoder used has slots to clear: a decoder's reset, once a
		 * chunk, would otherwise zero up to 80 KiB of slots it never reads. */
		if (t->is_indexed)
			memset(t->slot, 0, (size_t)(t->mask + 1) * sizeof(*t->slot));
		t->is_indexed = false;
		t->count = 0;
		t->key_used = 0;
	}
	c->prev_ns = 0;
	c->prev_vers = VERS_START;
	c->has_room = room(c);
}

bool
th_trace_chunk_has_room(const struct th_trace_chunk *c)
{
	return c->has_room;
}

/*
 * Append an entry (the caller has checked count < max). An encoder's table
 * always has room; a reader's grows, and when it cannot the chunk says so
 * (is_oom) and @return false.
 */
static inline bool
tbl_add(struct th_trace_chunk *c, struct tbl *t, const uint8_t *key, size_t len)
{
	uint32_t e = t->count;

	if (e == t->cap || t->key_used + len > t->key_size) {
		uint32_t entries = e == t->cap ? 2 * t->cap : t->cap;
		size_t bytes = t->key_used + len > t->key_size ? 2 * t->key_size : t->key_size;

		/* Never past what max entries of the longest key take: a chunk fits. */
		if (tbl_reserve(t, entries < t->max ? entries : t->max,
			    bytes < (size_t)t->max * t->key_cap
				    ? bytes
				    : (size_t)t->max * t->key_cap) < 0) {
			c->is_oom = true;
			return false;
		}
	}
	t->count++;
	t->key_off[e] = (uint32_t)t->key_used;
	memcpy(t->key + t->key_used, key, len);
	t->key_used += len;
	t->val[e] = 0;
	return true;
}

static inline const uint8_t *
tbl_key(const struct tbl *t, uint32_t e)
{
	return t->key + t->key_off[e];
}

static inline uint8_t *
put_ref(const struct tbl *t, uint8_t *p, uint32_t v)
{
	if (t->count < 256) {
		*p = (uint8_t)v;
		return p + 1;
	}
	th_le_put16(p, (uint16_t)v);
	return p + 2;
}

/*
 * Table keys, built the same way by the encoder (to add an entry) and the
 * decoder. FILE: server, fh_len, fh; @return its bytes.
 */
static inline size_t
file_key(uint8_t *key, const struct th_addr *server, const uint8_t *fh, uint8_t fh_len)
{
	memcpy(key, server->b, 16);
	key[16] = fh_len;
	memcpy(key + 17, fh, fh_len);
	return 17 + (size_t)fh_len;
}

/* USER: uid, gid. */
static inline void
user_key(uint8_t *key, uint32_t uid, uint32_t gid)
{
	th_le_put32(key, uid);
	th_le_put32(key + 4, gid);
}

/* FLOW: client, server, client_port, server_port, prog, vers. */
static inline void
flow_key(uint8_t *key, const struct th_trace_rpc *r)
{
	memcpy(key, r->client.b, 16);
	memcpy(key + 16, r->server.b, 16);
	th_le_put16(key + 32, r->client_port);
	th_le_put16(key + 34, r->server_port);
	th_le_put32(key + 36, r->prog);
	th_le_put16(key + 40, r->vers);
}

/*
 * The encoder's index: open addressing over slots holding entry + 1, 0 for
 * none. Its hashes never leave memory (a decoder keeps no index), so each
 * table hashes its key's fields as words straight from the record: a multiply
 * a word by a constant of its own, the products summed and then mixed. The
 * multiplies do not wait on each other, and no key is copied or hashed byte
 * by byte. Keys are compared straight from the record too: only a new entry
 * has its key built.
 */
static const uint64_t hash_k[] = {
	0x9e3779b97f4a7c15ull,
	0xc2b2ae3d27d4eb4full,
	0x165667b19e3779f9ull,
	0xd6e8feb86659fd93ull,
	0x94d049bb133111ebull,
	0xbf58476d1ce4e5b9ull,
	0x87c37b91114253d5ull,
	0x4cf5ad432745937full,
	0x2127599bf4325c37ull,
	0x880355f21e6d1965ull,
	0xa0761d6478bd642full,
};

/* An address's share of a hash, weighted by constants k and k + 1. */
static inline uint64_t
hash_addr(const struct th_addr *a, unsigned int k)
{
	return th_le_get64(a->b) * hash_k[k] + th_le_get64(a->b + 8) * hash_k[k + 1];
}

/* A FLOW key's bytes 32-39: client_port, server_port, prog. */
static inline uint64_t
flow_word(const struct th_trace_rpc *r)
{
	return (uint64_t)r->client_port | (uint64_t)r->server_port << 16 | (uint64_t)r->prog << 32;
}

/* Bytes of a handle a FILE hash takes: fh_mask + TH_TRACE_FH_MAX - fh_len, read as words. */
#define FF8 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
static const uint8_t fh_mask[2 * TH_TRACE_FH_MAX] = {FF8, FF8, FF8, FF8, FF8, FF8, FF8, FF8};
#undef FF8

/*
 * A FILE's hash. @p fh is TH_TRACE_FH_MAX bytes (a record's): all eight of
 * its words are hashed, masked to fh_len, so the handle's length costs no
 * loop and no branch (a loop's exit, at 28 to 40 bytes, was mispredicted).
 */
static inline uint32_t
file_hash(const struct th_addr *server, const uint8_t *fh, uint8_t fh_len)
{
	const uint8_t *mask = fh_mask + TH_TRACE_FH_MAX - fh_len;
	uint64_t h = hash_addr(server, 0) + fh_len * hash_k[2];

	for (unsigned int i = 0; i < TH_TRACE_FH_MAX / 8; i++)
		h += (th_le_get64(fh + 8 * i) & th_le_get64(mask + 8 * i)) * hash_k[3 + i];
	return th_sat_fmix64(h);
}

/*
 * Find a key of @size bytes in a table whose keys all have @size bytes;
 * @return its entry, or t->count when absent with *slot the empty slot it
 * would take.
 */
static inline uint32_t
find_fixed(const struct tbl *t, uint32_t h, const uint8_t *key, size_t size, uint32_t *slot)
{
	for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
		uint32_t e = t->slot[i];

		if (e == 0) {
			*slot = i;
			return t->count;
		}
		if (memcmp(t->key + (size_t)(e - 1) * t->key_cap, key, size) == 0)
			return e - 1;
	}
}

/* The same for a FLOW, its key in its memo, compared with the record's fields. */
static inline uint32_t
find_flow(const struct tbl *t, const struct flow_memo *memo, const struct th_trace_rpc *r,
	uint64_t word, uint32_t *slot)
{
	uint32_t h = th_sat_fmix64(hash_addr(&r->client, 0) + hash_addr(&r->server, 2) +
				   word * hash_k[4] + r->vers * hash_k[5]);

	for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
		uint32_t e = t->slot[i];
		const uint8_t *k;

		if (e == 0) {
			*slot = i;
			return t->count;
		}
		k = memo[e - 1].key;
		if (memcmp(k, r->client.b, 16) == 0 && memcmp(k + 16, r->server.b, 16) == 0 &&
			th_le_get64(k + 32) == word && th_le_get16(k + 40) == r->vers)
			return e - 1;
	}
}

/* The same for a FILE (server, fh_len, fh), its length read from its key. */
static inline uint32_t
find_file(const struct tbl *t, const struct th_addr *server, const uint8_t *fh, uint8_t fh_len,
	uint32_t *slot)
{
	for (uint32_t i = file_hash(server, fh, fh_len) & t->mask;; i = (i + 1) & t->mask) {
		uint32_t e = t->slot[i];
		const uint8_t *k;

		if (e == 0) {
			*slot = i;
			return t->count;
		}
		k = t->key + (size_t)(e - 1) * KEY_CAP(FILE_KEY_MAX);
		if (k[16] == fh_len && memcmp(k, server->b, 16) == 0 &&
			memcmp(k + 17, fh, fh_len) == 0)
			return e - 1;
	}
}

/*
 * Add @key as the table's next entry, in the empty hash @slot a find
 * returned (a FLOW's key is in its memo: NULL). An encoder's keys lie
 * key_cap bytes apart (its tables are allocated whole), so a find computes
 * where a key is instead of loading it.
 */
static inline void
index_add(struct th_trace_chunk *c, struct tbl *t, const uint8_t *key, size_t len, uint32_t slot)
{
	uint32_t e = t->count++;

	t->slot[slot] = (uint16_t)(e + 1);
	if (key != NULL)
		memcpy(t->key + (size_t)e * t->key_cap, key, len);
	if (t->val != NULL)
		t->val[e] = 0;
	t->is_indexed = true;
	c->has_room = room(c);
}

/* Write the reference to @a at *pp (and @a inline when new); @return its ADDR entry. */
static inline uint32_t
put_addr_ref(struct th_trace_chunk *c, uint8_t **pp, const struct th_addr *a)
{
	struct tbl *t = &c->t[T_ADDR];
	uint32_t slot = 0, e = find_fixed(t, th_sat_fmix64(hash_addr(a, 0)), a->b, 16, &slot);
	uint8_t *p = put_ref(t, *pp, e);

	if (e == t->count) {
		index_add(c, t, a->b, 16, slot);
		if (th_addr_is_v4(a)) {
			*p = 0;
			memcpy(p + 1, a->b + 12, 4);
			p += 5;
		} else {
			*p = 1;
			memcpy(p + 1, a->b, 16);
			p += 17;
		}
	}
	*pp = p;
	return e;
}

/*
 * Write the FILE reference at *pp (and the entry inline when new); @return
 * the entry. @server_addr is the server's ADDR entry when the caller knows
 * it, NO_ENTRY when not.
 */
static inline uint32_t
put_file_ref(struct th_trace_chunk *c, uint8_t **pp, const struct th_addr *server,
	uint32_t server_addr, const uint8_t *fh, uint8_t fh_len)
{
	struct tbl *t = &c->t[T_FILE];
	uint8_t key[FILE_KEY_MAX];
	size_t kept = fh_len;
	uint32_t slot = 0, e = find_file(t, server, fh, fh_len, &slot);
	uint8_t *p = put_ref(t, *pp, e);

	if (e == t->count) {
		index_add(c, t, key, file_key(key, server, fh, fh_len), slot);
		while (kept > 0 && fh[kept - 1] == 0)
			kept--;
		if (server_addr != NO_ENTRY)
			p = put_ref(&c->t[T_ADDR], p, server_addr);
		else
			put_addr_ref(c, &p, server);
		p[0] = fh_len;
		p[1] = (uint8_t)(fh_len - kept);
		memcpy(p + 2, fh, kept);
		p += 2 + kept;
	}
	*pp = p;
	return e;
}

/*
 * Write the USER reference (and the entry inline when new). @m, when not
 * NULL, is the memo of the RPC's flow: the same user as its last RPC needs
 * no lookup.
 */
static inline uint8_t *
put_user_ref(struct th_trace_chunk *c, uint8_t *p, uint32_t uid, uint32_t gid, struct flow_memo *m)
{
	struct tbl *t = &c->t[T_USER];
	uint8_t key[USER_KEY_SIZE];
	uint32_t slot = 0, e;

	if (m != NULL && m->has_user && m->uid == uid && m->gid == gid)
		return put_ref(t, p, m->user);
	user_key(key, uid, gid);
	e = find_fixed(t, th_sat_fmix64((uint64_t)gid << 32 | uid), key, sizeof(key), &slot);
	p = put_ref(t, p, e);
	if (e == t->count) {
		index_add(c, t, key, sizeof(key), slot);
		p = put_var(put_var(p, uid), gid);
	}
	if (m != NULL) {
		m->uid = uid;
		m->gid = gid;
		m->user = (uint16_t)e;
		m->has_user = true;
	}
	return p;
}

static inline uint64_t
zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

static inline uint64_t
unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
}

static inline uint8_t *
put_time(struct th_trace_chunk *c, uint8_t *p, uint64_t t)
{
	p = put_var(p, zigzag(t - c->prev_ns));
	c->prev_ns = t;
	return p;
}

size_t
th_trace_chunk_encode_open(
	struct th_trace_chunk *c, const struct th_trace_open *r, uint8_t *buf, size_t size)
{
	uint8_t *p = buf + 1, *ext = NULL, tag = TH_TRACE_OPEN, form = 0;
	uint32_t f;

	if (size < TH_TRACE_RECORD_MAX || r->fh_len > TH_TRACE_FH_MAX || r->dir > 1 ||
		!th_trace_chunk_has_room(c))
		return 0;
	tag |= r->dir ? OT_DIR : 0;
	if (r->flags <= 3)
		tag |= (uint8_t)(r->flags << OT_FLAGS_SHIFT);
	else
		form |= OX_FLAGS;
	if (r->transferred != r->size) {
		if (r->transferred == 0)
			tag |= OT_XFER_ZERO;
		else
			form |= OX_XFER;
	}
	form |= r->seq_bytes != r->transferred ? OX_SEQ : 0;
	form |= r->vers != c->prev_vers ? OX_VERS : 0;
	if (form != 0) {
		tag |= OT_EXT;
		ext = p++;
	}
	p = put_time(c, p, r->open_ns);
	p = put_var(p, r->close_ns - r->open_ns);
	f = put_file_ref(c, &p, &r->server, NO_ENTRY, r->fh, r->fh_len);
	put_addr_ref(c, &p, &r->client);
	p = put_user_ref(c, p, r->uid, r->gid, NULL);
	p = put_var(p, r->ops);
	if (form & OX_VERS)
		*p++ = r->vers;
	if (form & OX_FLAGS)
		*p++ = r->flags;
	if (form & OX_XFER)
		p = put_var(p, r->transferred);
	if (form & OX_SEQ)
		p = put_var(p, r->seq_bytes);
	if (c->t[T_FILE].val[f] == r->size)
		tag |= OT_SIZE_SAME;
	else
		p = put_var(p, r->size);
	c->t[T_FILE].val[f] = r->size;
	c->prev_vers = r->vers;
	buf[0] = tag;
	if (ext != NULL)
		*ext = form;
	return (size_t)(p - buf);
}

size_t
th_trace_chunk_encode_name(
	struct th_trace_chunk *c, const struct th_trace_name *r, uint8_t *buf, size_t size)
{
	uint8_t *p = buf + 1, tag = TH_TRACE_NAME;

	if (size < TH_TRACE_RECORD_MAX || r->fh_len > TH_TRACE_FH_MAX ||
		r->dir_fh_len > TH_TRACE_FH_MAX || r->name_len > TH_TRACE_NAME_MAX ||
		!th_trace_chunk_has_room(c))
		return 0;
	tag |= r->to_ns == 0 ? NT_OPEN_ENDED : 0;
	p = put_time(c, p, r->from_ns);
	if (r->to_ns != 0)
		p = put_var(p, r->to_ns - r->from_ns);
	put_file_ref(c, &p, &r->server, NO_ENTRY, r->fh, r->fh_len);
	put_file_ref(c, &p, &r->server, NO_ENTRY, r->dir_fh, r->dir_fh_len);
	*p++ = (uint8_t)r->name_len;
	memcpy(p, r->name, r->name_len);
	p += r->name_len;
	if (r->mode != 0) {
		tag |= NT_MODE;
		p = put_var(p, r->mode);
	}
	buf[0] = tag;
	return (size_t)(p - buf);
}

size_t
th_trace_chunk_encode_rpc(
	struct th_trace_chunk *c, const struct th_trace_rpc *r, uint8_t *buf, size_t size)
{
	uint8_t *p = buf + 1, tag = TH_TRACE_RPC;
	struct tbl *flows = &c->t[T_FLOW];
	struct flow_memo *m;
	uint32_t e, slot = 0;
	uint64_t word = flow_word(r);

	if (size < TH_TRACE_RECORD_MAX || r->fh_len > TH_TRACE_FH_MAX || !c->has_room)
		return 0;
	tag |= r->call_ns != 0 ? RT_CALL : 0;
	tag |= r->reply_ns != 0 ? RT_REPLY : 0;
	tag |= r->done == r->count ? RT_DONE_IS_COUNT : 0;
	tag |= (uint8_t)((r->flags < RT_FLAGS_BYTE ? r->flags : RT_FLAGS_BYTE) << RT_FLAGS_SHIFT);
	if (r->call_ns != 0) {
		p = put_time(c, p, r->call_ns);
		if (r->reply_ns != 0)
			p = put_var(p, r->reply_ns - r->call_ns);
	} else if (r->reply_ns != 0) {
		p = put_time(c, p, r->reply_ns);
	}
	e = find_flow(flows, c->memo, r, word, &slot);
	p = put_ref(flows, p, e);
	m = &c->memo[e];
	if (e == flows->count) {
		flow_key(m->key, r);
		m->xid = 0;
		index_add(c, flows, NULL, 0, slot);
		put_addr_ref(c, &p, &r->client);
		m->server = (uint16_t)put_addr_ref(c, &p, &r->server);
		m->has_user = false;
		th_le_put16(p, r->client_port);
		th_le_put16(p + 2, r->server_port);
		p = put_var(put_var(p + 4, r->prog), r->vers);
	}
	p = put_var(p, zigzag((uint64_t)(int64_t)(int32_t)(r->xid - m->xid)));
	m->xid = r->xid;
	p = put_var(p, r->proc);
	p = put_var(p, r->status);
	p = put_user_ref(c, p, r->uid, r->gid, m);
	if (r->flags >= RT_FLAGS_BYTE)
		*p++ = r->flags;
	put_file_ref(c, &p, &r->server, m->server, r->fh, r->fh_len);
	p = put_var(p, r->offset);
	p = put_var(p, r->count);
	if (r->done != r->count)
		p = put_var(p, r->done);
	p = put_var(p, r->size);
	buf[0] = tag;
	return (size_t)(p - buf);
}

/* Decoding. */

static inline int
get_ref(const struct tbl *t, struct cur *cu, uint32_t *e)
{
	uint32_t v;

	if (t->count < 256) {
		if (!has(cu, 1))
			return -EBADMSG;
		v = *cu->p++;
	} else {
		if (!has(cu, 2))
			return -EBADMSG;
		v = th_le_get16(cu->p);
		cu->p += 2;
	}
	/* A new entry needs room; past the count is a reference to nothing. */
	if (v > t->count || (v == t->count && t->count == t->max))
		return -EBADMSG;
	*e = v;
	return 0;
}

static inline int
get_u8(struct cur *cu, uint8_t *v)
{
	if (!has(cu, 1))
		return -EBADMSG;
	*v = *cu->p++;
	return 0;
}

static int
get_addr_ref(struct th_trace_chunk *c, struct cur *cu, struct th_addr *a)
{
	struct tbl *t = &c->t[T_ADDR];
	uint8_t kind;
	uint32_t e;

	if (get_ref(t, cu, &e) < 0)
		return -EBADMSG;
	if (e < t->count) {
		memcpy(a->b, tbl_key(t, e), 16);
		return 0;
	}
	if (get_u8(cu, &kind) < 0 || kind > 1 || get_addr(cu, kind == 0, a) < 0)
		return -EBADMSG;
	if (!tbl_add(c, t, a->b, 16))
		return -ENOMEM;
	return 0;
}

/* The FILE entry @e's server, handle bytes and length. */
static inline void
file_of(const struct tbl *t, uint32_t e, struct th_addr *server, uint8_t *fh, uint8_t *fh_len)
{
	const uint8_t *k = tbl_key(t, e);

	if (server != NULL)
		memcpy(server->b, k, 16);
	*fh_len = k[16];
	memcpy(fh, k + 17, k[16]);
	memset(fh + k[16], 0, TH_TRACE_FH_MAX - k[16]);
}

static int
get_file_ref(struct th_trace_chunk *c, struct cur *cu, uint32_t *e)
{
	struct tbl *t = &c->t[T_FILE];
	uint8_t key[FILE_KEY_MAX], fh[TH_TRACE_FH_MAX], fh_len, tail;
	struct th_addr server;
	size_t kept;

	if (get_ref(t, cu, e) < 0)
		return -EBADMSG;
	if (*e < t->count)
		return 0;
	if (get_addr_ref(c, cu, &server) < 0 || get_u8(cu, &fh_len) < 0 || get_u8(cu, &tail) < 0 ||
		fh_len > TH_TRACE_FH_MAX || tail > fh_len)
		return -EBADMSG;
	kept = (size_t)fh_len - tail;
	if (!has(cu, kept) || (kept > 0 && cu->p[kept - 1] == 0))
		return -EBADMSG;
	memcpy(fh, cu->p, kept);
	memset(fh + kept, 0, tail);
	cu->p += kept;
	if (!tbl_add(c, t, key, file_key(key, &server, fh, fh_len)))
		return -ENOMEM;
	return 0;
}

static int
get_user_ref(struct th_trace_chunk *c, struct cur *cu, uint32_t *uid, uint32_t *gid)
{
	struct tbl *t = &c->t[T_USER];
	uint8_t key[USER_KEY_SIZE];
	uint32_t e;

	if (get_ref(t, cu, &e) < 0)
		return -EBADMSG;
	if (e == t->count) {
		if (get_var32(cu, uid) < 0 || get_var32(cu, gid) < 0)
			return -EBADMSG;
		user_key(key, *uid, *gid);
		return tbl_add(c, t, key, sizeof(key)) ? 0 : -ENOMEM;
	}
	*uid = th_le_get32(tbl_key(t, e));
	*gid = th_le_get32(tbl_key(t, e) + 4);
	return 0;
}

static inline int
get_time(struct th_trace_chunk *c, struct cur *cu, uint64_t *t)
{
	uint64_t z;

	if (get_var(cu, UINT64_MAX, &z) < 0)
		return -EBADMSG;
	*t = c->prev_ns + unzigzag(z);
	c->prev_ns = *t;
	return 0;
}

static int
decode_open(struct th_trace_chunk *c, struct cur *cu, uint8_t tag, struct th_trace_open *out)
{
	struct th_trace_open r;
	uint8_t form = 0;
	uint32_t f;
	uint64_t d;

	if ((tag & OT_EXT) && (get_u8(cu, &form) < 0 || form == 0 || (form & ~OX_ALL)))
		return -EBADMSG;
	/* Flags above 3 have a byte of their own, and flags 0-3 only the tag's spelling. */
	if ((form & OX_FLAGS) && (tag & OT_FLAGS_MASK))
		return -EBADMSG;
	if ((form & OX_XFER) && (tag & OT_XFER_ZERO))
		return -EBADMSG;
	r.dir = tag & OT_DIR ? 1 : 0;
	r.flags = (uint8_t)((tag & OT_FLAGS_MASK) >> OT_FLAGS_SHIFT);
	if (get_time(c, cu, &r.open_ns) < 0 || get_var(cu, UINT64_MAX, &d) < 0)
		return -EBADMSG;
	r.close_ns = r.open_ns + d;
	if (get_file_ref(c, cu, &f) < 0)
		return -EBADMSG;
	file_of(&c->t[T_FILE], f, &r.server, r.fh, &r.fh_len);
	if (get_addr_ref(c, cu, &r.client) < 0 || get_user_ref(c, cu, &r.uid, &r.gid) < 0 ||
		get_var32(cu, &r.ops) < 0)
		return -EBADMSG;
	r.vers = c->prev_vers;
	if (form & OX_VERS) {
		if (get_u8(cu, &r.vers) < 0 || r.vers == c->prev_vers)
			return -EBADMSG;
	}
	if (form & OX_FLAGS) {
		if (get_u8(cu, &r.flags) < 0 || r.flags <= 3)
			return -EBADMSG;
	}
	if ((form & OX_XFER) && get_var(cu, UINT64_MAX, &r.transferred) < 0)
		return -EBADMSG;
	if ((form & OX_SEQ) && get_var(cu, UINT64_MAX, &r.seq_bytes) < 0)
		return -EBADMSG;
	if (tag & OT_SIZE_SAME)
		r.size = c->t[T_FILE].val[f];
	else if (get_var(cu, UINT64_MAX, &r.size) < 0 || r.size == c->t[T_FILE].val[f])
		return -EBADMSG;
	/* Implied values: a stored one that equals what the form implies is a second spelling. */
	if (tag & OT_XFER_ZERO) {
		if (r.size == 0)
			return -EBADMSG;
		r.transferred = 0;
	} else if (!(form & OX_XFER)) {
		r.transferred = r.size;
	} else if (r.transferred == r.size || r.transferred == 0) {
		return -EBADMSG;
	}
	if (!(form & OX_SEQ))
		r.seq_bytes = r.transferred;
	else if (r.seq_bytes == r.transferred)
		return -EBADMSG;
	c->t[T_FILE].val[f] = r.size;
	c->prev_vers = r.vers;
	if (out != NULL)
		*out = r;
	return TH_TRACE_OPEN;
}

static int
decode_name(struct th_trace_chunk *c, struct cur *cu, uint8_t tag, struct th_trace_name *out)
{
	struct th_trace_name r;
	uint32_t f, d;
	uint8_t len;
	uint64_t v;

	/* Zeroed for the struct's padding: the caller gets no stack bytes. */
	memset(&r, 0, sizeof(r));
	/* Before version 4 no writer set the mode bit: in an older segment it is damage, and
	 * taking it would read the bytes after the name as a mode that was never written. */
	if ((tag & ~NT_ALL) || ((tag & NT_MODE) && c->version < VERSION_NAME_MODE))
		return -EBADMSG;
	if (get_time(c, cu, &r.from_ns) < 0)
		return -EBADMSG;
	if (!(tag & NT_OPEN_ENDED)) {
		/* A difference that lands on 0 would be the open-ended record spelled twice. */
		if (get_var(cu, UINT64_MAX, &v) < 0 || r.from_ns + v == 0)
			return -EBADMSG;
		r.to_ns = r.from_ns + v;
	}
	if (get_file_ref(c, cu, &f) < 0 || get_file_ref(c, cu, &d) < 0 || get_u8(cu, &len) < 0 ||
		!has(cu, len))
		return -EBADMSG;
	file_of(&c->t[T_FILE], f, &r.server, r.fh, &r.fh_len);
	file_of(&c->t[T_FILE], d, NULL, r.dir_fh, &r.dir_fh_len);
	/* The directory's entry was added with the same server (written that way). */
	if (memcmp(tbl_key(&c->t[T_FILE], d), r.server.b, 16) != 0)
		return -EBADMSG;
	r.name_len = len;
	memcpy(r.name, cu->p, len);
	cu->p += len;
	/* A stored mode of 0 would be the record without one spelled twice. */
	if (tag & NT_MODE) {
		if (get_var(cu, UINT32_MAX, &v) < 0 || v == 0)
			return -EBADMSG;
		r.mode = (uint32_t)v;
	}
	if (out != NULL)
		*out = r;
	return TH_TRACE_NAME;
}

static int
decode_rpc(struct th_trace_chunk *c, struct cur *cu, uint8_t tag, struct th_trace_rpc *out)
{
	struct tbl *flows = &c->t[T_FLOW];
	struct th_trace_rpc r;
	uint8_t key[FLOW_KEY_SIZE];
	struct th_addr server;
	uint32_t e, f, vers;
	uint64_t v;

	memset(&r, 0, sizeof(r));
	if (tag & RT_CALL) {
		if (get_time(c, cu, &r.call_ns) < 0 || r.call_ns == 0)
			return -EBADMSG;
		if (tag & RT_REPLY) {
			if (get_var(cu, UINT64_MAX, &v) < 0 || r.call_ns + v == 0)
				return -EBADMSG;
			r.reply_ns = r.call_ns + v;
		}
	} else if (tag & RT_REPLY) {
		if (get_time(c, cu, &r.reply_ns) < 0 || r.reply_ns == 0)
			return -EBADMSG;
	}
	if (get_ref(flows, cu, &e) < 0)
		return -EBADMSG;
	if (e == flows->count) {
		if (get_addr_ref(c, cu, &r.client) < 0 || get_addr_ref(c, cu, &r.server) < 0 ||
			!has(cu, 4))
			return -EBADMSG;
		r.client_port = th_le_get16(cu->p);
		r.server_port = th_le_get16(cu->p + 2);
		cu->p += 4;
		if (get_var32(cu, &r.prog) < 0 || get_var16(cu, &r.vers) < 0)
			return -EBADMSG;
		flow_key(key, &r);
		if (!tbl_add(c, flows, key, sizeof(key)))
			return -ENOMEM;
	} else {
		const uint8_t *k = tbl_key(flows, e);

		memcpy(r.client.b, k, 16);
		memcpy(r.server.b, k + 16, 16);
		r.client_port = th_le_get16(k + 32);
		r.server_port = th_le_get16(k + 34);
		r.prog = th_le_get32(k + 36);
		vers = th_le_get16(k + 40);
		r.vers = (uint16_t)vers;
	}
	if (get_var(cu, UINT32_MAX, &v) < 0)
		return -EBADMSG;
	r.xid = (uint32_t)flows->val[e] + (uint32_t)unzigzag(v);
	flows->val[e] = r.xid;
	if (get_var16(cu, &r.proc) < 0 || get_var32(cu, &r.status) < 0 ||
		get_user_ref(c, cu, &r.uid, &r.gid) < 0)
		return -EBADMSG;
	r.flags = (uint8_t)(tag >> RT_FLAGS_SHIFT);
	if (r.flags == RT_FLAGS_BYTE) {
		if (get_u8(cu, &r.flags) < 0 || r.flags < RT_FLAGS_BYTE)
			return -EBADMSG;
	}
	if (get_file_ref(c, cu, &f) < 0)
		return -EBADMSG;
	file_of(&c->t[T_FILE], f, &server, r.fh, &r.fh_len);
	if (memcmp(server.b, r.server.b, 16) != 0)
		return -EBADMSG;
	if (get_var(cu, UINT64_MAX, &r.offset) < 0 || get_var32(cu, &r.count) < 0)
		return -EBADMSG;
	if (tag & RT_DONE_IS_COUNT)
		r.done = r.count;
	else if (get_var32(cu, &r.done) < 0 || r.done == r.count)
		return -EBADMSG;
	if (get_var(cu, UINT64_MAX, &r.size) < 0)
		return -EBADMSG;
	if (out != NULL)
		*out = r;
	return TH_TRACE_RPC;
}

int
th_trace_chunk_decode(struct th_trace_chunk *c, const uint8_t *buf, size_t size, size_t *used,
	struct th_trace_open *open, struct th_trace_name *name, struct th_trace_rpc *rpc)
{
	struct cur cu = {buf, buf + size};
	uint8_t tag;
	int ret;

	if (used != NULL)
		*used = 0;
	if (c->memo != NULL)
		return -EINVAL; /* an encoder's tables are shaped for finding, not reading */
	if (buf == NULL || size == 0)
		return -EBADMSG;
	tag = *cu.p++;
	switch (tag & TAG_TYPE_MASK) {
	case TH_TRACE_OPEN:
		ret = decode_open(c, &cu, tag, open);
		break;
	case TH_TRACE_NAME:
		ret = decode_name(c, &cu, tag, name);
		break;
	case TH_TRACE_RPC:
		ret = decode_rpc(c, &cu, tag, rpc);
		break;
	default:
		ret = -EBADMSG;
		break;
	}
	if (ret > 0 && used != NULL)
		*used = (size_t)(cu.p - buf);
	if (ret < 0 && c->is_oom) {
		c->is_oom = false;
		return -ENOMEM;
	}
	return ret;
}
