/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_TRACE_H
#define TH_TRACE_H

/**
 * @file
 * Trace records as they are stored: a versioned, little-endian, compact
 * layout. Records are coded in chunks (th_trace_chunk_*), against tables
 * local to the chunk; the segment container (th_segment.h) stores chunks.
 * Changing the layout means a new type or TH_TRACE_VERSION.
 *
 * Everything is encoded and decoded with explicit byte order (never a struct
 * copied to disk), so segments move between machines.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_pkt.h"

#define TH_TRACE_VERSION 4
#define TH_TRACE_VERSION_MIN 3 /**< the oldest record format readers still take */
#define TH_TRACE_FH_MAX 64
#define TH_TRACE_NAME_MAX 255

/** Record types. X-macro: enum name, number, text name. */
#define TH_TRACE_TYPE_LIST(X)                                                                      \
	X(OPEN, 1, "open")                                                                         \
	X(NAME, 2, "name")                                                                         \
	X(RPC, 3, "rpc")

enum th_trace_type {
#define TH_TRACE_X(name, num, text) TH_TRACE_##name = num,
	TH_TRACE_TYPE_LIST(TH_TRACE_X)
#undef TH_TRACE_X
};

/** One inferred open (see th_session.h struct th_sess_record). */
struct th_trace_open {
	uint64_t open_ns;      /**< open: first op's call, ns since the epoch */
	uint64_t close_ns;     /**< close: last op's reply */
	struct th_addr server; /**< file-id: server ... */
	struct th_addr client; /**< client ... */
	uint32_t uid;          /**< ... and user */
	uint32_t gid;          /**< group */
	uint8_t dir;           /**< 0 read, 1 write */
	uint8_t vers;          /**< NFS version */
	uint8_t flags;         /**< TH_TRACE_OPEN_* */
	uint8_t fh_len;        /**< handle bytes */
	uint8_t fh[TH_TRACE_FH_MAX];
	uint32_t ops;         /**< operations in the open */
	uint64_t transferred; /**< bytes moved (0 for a cache hit) */
	uint64_t seq_bytes;   /**< of which sequential */
	uint64_t size;        /**< file size at close */
};

enum {
	TH_TRACE_OPEN_CACHE_HIT = 1 << 0, /**< served by the client cache */
	TH_TRACE_OPEN_DIRECTORY = 1 << 1, /**< a directory read or write */
};

/** A name valid for a handle during [from_ns, to_ns); to_ns 0: still valid. */
struct th_trace_name {
	uint64_t from_ns;
	uint64_t to_ns;
	struct th_addr server;
	uint8_t fh_len;
	uint8_t fh[TH_TRACE_FH_MAX];
	uint8_t dir_fh_len;
	uint8_t dir_fh[TH_TRACE_FH_MAX];
	uint32_t mode; /**< the file's type and permissions, st_mode-style; 0 unknown */
	uint16_t name_len;
	char name[TH_TRACE_NAME_MAX + 1]; /**< NUL-terminated after decoding */
};

/** One RPC (the capture's per-call log, compact). */
struct th_trace_rpc {
	uint64_t call_ns;  /**< call's first segment (0: no call seen) */
	uint64_t reply_ns; /**< reply's first segment (0: no reply seen) */
	struct th_addr client;
	struct th_addr server;
	uint16_t client_port;
	uint16_t server_port;
	uint32_t xid;
	uint32_t prog;
	uint16_t vers;
	uint16_t proc;
	uint32_t status; /**< procedure status (nfsstat3...), or RPC-level (see flags) */
	uint32_t uid;
	uint32_t gid;
	uint8_t flags; /**< TH_TRACE_RPC_* */
	uint8_t fh_len;
	uint8_t fh[TH_TRACE_FH_MAX];
	uint64_t offset;
	uint32_t count; /**< requested */
	uint32_t done;  /**< bytes the server moved; READDIR(PLUS): entries listed
			     (TH_TRACE_RPC_DONE_PARTIAL: only those the capture kept) */
	uint64_t size;  /**< object size after (TH_TRACE_RPC_HAS_SIZE) */
};

enum {
	TH_TRACE_RPC_TCP = 1 << 0,
	TH_TRACE_RPC_HAS_SIZE = 1 << 1,
	TH_TRACE_RPC_RPC_ERROR = 1 << 2, /**< status is an RPC-level accept/reject code */
	/**
	 * done counts the entries of a listing before the point where the capture's
	 * bytes of it ended (a TCP gap, the record's first 1024 bytes or 64 KiB kept, a
	 * frame cut short): the reply listed more (the RPC log and export write it
	 * done_min=, not done=). Without it, done is every entry of a successful
	 * listing. On a READ or WRITE: the reply ended early, so done is not known (the
	 * RPC log leaves it out, and so does export).
	 */
	TH_TRACE_RPC_DONE_PARTIAL = 1 << 3,
	/**
	 * The procedure's status word was not seen (the reply ended before it, or its
	 * results were RPCSEC_GSS-wrapped): status is 0 but says nothing, and reads '?'
	 * as in the capture's RPC log.
	 */
	TH_TRACE_RPC_STATUS_UNSEEN = 1 << 4,
};

/** Largest chunk-coded record: the room an encoder needs. */
#define TH_TRACE_RECORD_MAX 1024

/** Record time used for ordering: open_ns, from_ns or call_ns (reply_ns without a call). */
uint64_t th_trace_open_time(const struct th_trace_open *r);
uint64_t th_trace_rpc_time(const struct th_trace_rpc *r);

/**
 * Chunk coding, what segments store since version 3. A chunk is a run of
 * records coded against tables that live only as long as the chunk:
 * addresses, users (uid and gid), file handles (with their server) and RPC
 * flows (client, server, ports, program, version) are written out once, at
 * their first use in the chunk, and referred to by index afterwards; times
 * are differences from the previous record of the chunk. Records are not
 * framed one by one: a chunk is read from its first record on. The segment
 * writer starts a chunk with every compressed block, so each block decodes
 * without any state from earlier ones. The layout is described in chunk.c.
 */
struct th_trace_chunk;

/**
 * @return an empty chunk encoder, its tables allocated whole (about 1.2 MiB:
 *   encoding never allocates), or NULL with errno ENOMEM. It cannot decode.
 */
struct th_trace_chunk *th_trace_chunk_create(void);

/**
 * @return an empty chunk decoder whose tables grow with the chunks it
 *   decodes (to the largest so far), or NULL with errno ENOMEM. It cannot
 *   encode: th_trace_chunk_has_room() is false and encoding returns 0.
 */
struct th_trace_chunk *th_trace_chunk_create_reader(void);

/**
 * Set the record format version a reader decodes: what the segment's header
 * says. A reader starts at TH_TRACE_VERSION. Records of an older version
 * that use what only a later version defines (a NAME record's mode, from
 * version 4) are refused as malformed.
 * @return 0, or -EINVAL: @p version outside TH_TRACE_VERSION_MIN..
 *   TH_TRACE_VERSION, or @p c is an encoder (it writes TH_TRACE_VERSION only).
 */
int th_trace_chunk_set_version(struct th_trace_chunk *c, unsigned int version);

void th_trace_chunk_free(struct th_trace_chunk *c);

/** Start a new chunk: forget every table entry and the previous record. */
void th_trace_chunk_reset(struct th_trace_chunk *c);

/** @return whether the tables can take the entries of one more record of any type. */
bool th_trace_chunk_has_room(const struct th_trace_chunk *c);

/**
 * Encode a record into the current chunk, adding its new table entries.
 * @p size must be at least TH_TRACE_RECORD_MAX.
 * @return bytes written, or 0 (nothing changed) when the record cannot be
 *   encoded (handle over 64 bytes, direction over 1, name over 255 bytes),
 *   @p size is short, or the tables are full (th_trace_chunk_has_room()).
 */
size_t th_trace_chunk_encode_open(
	struct th_trace_chunk *c, const struct th_trace_open *r, uint8_t *buf, size_t size);
size_t th_trace_chunk_encode_name(
	struct th_trace_chunk *c, const struct th_trace_name *r, uint8_t *buf, size_t size);
size_t th_trace_chunk_encode_rpc(
	struct th_trace_chunk *c, const struct th_trace_rpc *r, uint8_t *buf, size_t size);

/**
 * Decode the next record of the current chunk from @p buf (what is left of
 * the chunk) with a reader (th_trace_chunk_create_reader()). Never reads past
 * @p size. After a failure the chunk's tables
 * are in an undefined state: the rest of the chunk cannot be decoded.
 * @param used  bytes the record took, on success
 * @return the type (enum th_trace_type), -EBADMSG (malformed, a reference
 *   to a missing entry, a full table, a value with a second spelling, or a
 *   field the reader's version (th_trace_chunk_set_version()) lacks), or
 *   -ENOMEM (a reader's table could not grow), or -EINVAL (@p c is an encoder).
 */
int th_trace_chunk_decode(struct th_trace_chunk *c, const uint8_t *buf, size_t size, size_t *used,
	struct th_trace_open *open, struct th_trace_name *name, struct th_trace_rpc *rpc);

#endif /* TH_TRACE_H */
