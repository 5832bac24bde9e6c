/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_FLOW_H
#define TH_FLOW_H

/**
 * @file
 * Per-lcore flow table and RPC-over-TCP record marking (RFC 5531 §11).
 *
 * A flow is a TCP connection seen in both directions; each direction is a
 * byte stream of records, each record one or more fragments, each fragment
 * preceded by a 4-byte marker (last-fragment bit, 31-bit length). The stream
 * keeps only the first TH_FLOW_PREFIX bytes of a record (RPC and procedure
 * headers); the rest (READ/WRITE data) is counted and skipped, never copied.
 * A record that lies whole in one segment is handed over in place. A record
 * the consumer wants whole (th_flow_table_set_whole()) goes on into one of a
 * few larger buffers borrowed from the table.
 *
 * Sequence handling: retransmitted bytes are trimmed; a gap inside the data
 * of a record whose header is already kept is stepped over (the marker says
 * where the record ends); any other gap drops the record in progress and
 * the stream hunts for the next record start, checked with the RPC header
 * plausibility tests, at segment starts and, for the first 2 MiB of a hunt,
 * inside segments. A stream picked up mid-way hunts the same way. No
 * record is ever delivered with bytes that were not seen. A segment after a
 * hole, or one that acknowledges bytes of the other direction not seen yet
 * (a mirror port put a reply before the end of its call), waits a while
 * (TH_FLOW_HOLD_NS, TH_FLOW_HOLD_SLOTS) for the late bytes.
 *
 * The table is preallocated, 8-way set associative, aged by idle time; a
 * full set evicts its least recently used flow. Every such event is counted.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_pkt.h"

#define TH_FLOW_PREFIX 1024          /**< record bytes kept for decoding */
#define TH_FLOW_FRAG_MAX (64u << 20) /**< larger fragments are not RPC: resync */
#define TH_FLOW_HOLD_SLOTS 64        /**< segments held for a late one at once, per table */
#define TH_FLOW_HOLD_BYTES 9000      /**< the largest segment held: a jumbo frame's */
#define TH_FLOW_HOLD_QUEUE 4         /**< segments of a direction waiting at once for acked bytes */
#define TH_FLOW_HOLD_NS 10000000ull  /**< a hole left this long (capture time) is a loss */
#define TH_FLOW_WHOLE_MAX 255        /**< whole-record buffers a table may have */

/** Counters of a flow table, per lcore. X-macro: field, description. */
#define TH_FLOW_COUNTER_LIST(X)                                                                    \
	X(flows_created, "TCP flows created")                                                      \
	X(flows_aged, "TCP flows aged out (idle)")                                                 \
	X(flows_evicted, "TCP flows evicted, table full")                                          \
	X(segments_retrans, "TCP segments retransmitted (all bytes seen before)")                  \
	X(syn_copies, "TCP SYNs seen again in their connection (sent again, or a mirror's copy)")  \
	X(segments_held, "TCP segments held after a hole, for a late earlier segment")             \
	X(segments_reordered, "held TCP segments whose hole was filled (reordering repaired)")     \
	X(segments_held_ack,                                                                       \
		"TCP segments held for the other direction's unseen bytes they acknowledge")       \
	X(segments_ack_reordered,                                                                  \
		"TCP segments held for acknowledged bytes that came (cross-direction reordering)") \
	X(bytes_retrans, "TCP bytes trimmed as already seen")                                      \
	X(gaps_payload, "TCP gaps inside record data, stepped over")                               \
	X(gaps_lost, "TCP gaps that lost a record boundary (or came while hunting)")               \
	X(records_lost_gap, "RPC records dropped by a TCP gap")                                    \
	X(records_lost_idle, "RPC records cut by a flow's idle aging")                             \
	X(records_unfinished, "RPC records unfinished when the capture ended")                     \
	X(hunt_segments, "TCP segments skipped while hunting for a record start")                  \
	X(hunt_bytes, "TCP bytes skipped while hunting for a record start")                        \
	X(resyncs, "record boundary found again after hunting")                                    \
	X(bad_markers, "record markers with impossible lengths")                                   \
	X(records, "RPC records reassembled")                                                      \
	X(records_in_place, "RPC records decoded in place (one segment)")                          \
	X(records_multi_frag, "RPC records of several fragments")                                  \
	X(bytes_skipped, "record bytes skipped (data past the kept prefix or whole buffer)")       \
	X(whole_records, "RPC records kept whole past the prefix, not cut (listings)")             \
	X(whole_cut_size, "records to keep whole cut at the buffer size (listing too long)")       \
	X(whole_cut_busy, "records to keep whole cut at the prefix: every buffer in use")          \
	X(whole_cut_gap, "records to keep whole cut by a TCP gap (entries after it not read)")

struct th_flow_counters {
#define TH_FLOW_X(name, text) uint64_t name;
	TH_FLOW_COUNTER_LIST(TH_FLOW_X)
#undef TH_FLOW_X
};

/** Canonical flow key: the lower endpoint first, so both directions match. */
struct th_flow_key {
	struct th_addr a; /**< lower address (then port) */
	struct th_addr b; /**< higher */
	uint16_t pa;      /**< port of a */
	uint16_t pb;      /**< port of b */
};

/** A record handed to the consumer. */
struct th_flow_record {
	const uint8_t *data; /**< first bytes of the record (kept prefix or in place) */
	uint32_t size;       /**< bytes at data */
	uint32_t wire_size;  /**< the record's full length (all fragments, no markers) */
	const uint8_t *tail; /**< the record's last 8 bytes (READDIR eof lies there), or NULL
				  when a gap or the capture hid them */
	uint64_t first_ns;   /**< time of the segment holding the record's first byte */
	uint64_t last_ns;    /**< time of the segment holding its last byte */
};

struct th_flow_table;

/**
 * Called for each complete record, in stream order.
 * @param dir 0 when the segment's source is key.a, 1 when it is key.b
 */
typedef void (*th_flow_record_cb)(
	void *ctx, const struct th_flow_key *key, int dir, const struct th_flow_record *rec);

/**
 * Called while hunting, with the bytes at a candidate record start (marker
 * skipped): return true to accept the position. NULL accepts anything that
 * th_rpc_looks_like_call() or th_rpc_looks_like_reply() accepts.
 */
typedef bool (*th_flow_hunt_cb)(
	void *ctx, const struct th_flow_key *key, int dir, const uint8_t *rec, uint32_t size);

/**
 * Called when bytes missing in direction @p dir took a record boundary with
 * them, or went missing while the direction was hunting: once for each
 * count of gaps_lost, at the time of the segment that showed the gap.
 * Whole records of that direction may be lost.
 */
typedef void (*th_flow_gap_cb)(void *ctx, const struct th_flow_key *key, int dir, uint64_t now_ns);

/**
 * Called once per record when its kept prefix fills and bytes remain, with
 * the prefix: return true to keep the record whole (the bytes after the
 * prefix too, up to the table's whole-record buffer size). Only records
 * worth the copy should say so (a listing whose names are wanted). A record
 * whose prefix a gap closed before it filled is asked when its bytes
 * (seen or lost) pass the prefix, with the bytes before the gap (@p size
 * below TH_FLOW_PREFIX): nothing is kept then, a true answer is counted as
 * whole_cut_gap.
 */
typedef bool (*th_flow_whole_cb)(
	void *ctx, const struct th_flow_key *key, int dir, const uint8_t *rec, uint32_t size);

/**
 * Create a table for @p flows connections (rounded up to a power of two).
 * @p on_hunt and @p on_gap may be NULL; @p ctx is passed to every callback.
 * @return NULL with errno ENOMEM or EINVAL.
 */
struct th_flow_table *th_flow_table_create(uint32_t flows, uint64_t idle_ns,
	th_flow_record_cb on_record, th_flow_hunt_cb on_hunt, th_flow_gap_cb on_gap, void *ctx);

void th_flow_table_free(struct th_flow_table *t);

/**
 * Keep records that @p on_whole asks for whole, in @p count buffers of
 * @p size bytes allocated now (a record borrows one when its prefix fills
 * and gives it back when it ends): a record larger than a buffer is cut at
 * its size, one that finds none free at the prefix, a gap at the gap; each
 * cut is counted by reason. A table is given buffers once, before its first
 * segment; without them it keeps only prefixes (and asks nothing).
 * @return 0; -EINVAL (count 0 or over TH_FLOW_WHOLE_MAX, size not above
 *         TH_FLOW_PREFIX, no callback, buffers already given), -ENOMEM.
 */
int th_flow_table_set_whole(
	struct th_flow_table *t, uint32_t count, uint32_t size, th_flow_whole_cb on_whole);

/**
 * Feed one TCP segment.
 * @param m    parsed frame (TCP)
 * @param payload, len  the segment's payload bytes present in the capture
 * @param wire_len the payload length the IP header claims: bytes the capture
 *             cut off are a gap, stepped over at once when they are record data
 * @param now_ns  capture time
 * @param is_rpc_port  one of the ports is known to serve RPC: track the
 *             connection from its first segment. Otherwise a connection is
 *             tracked only once a segment starts with a plausible record.
 * @return false when the segment belongs to no tracked connection and was
 *         not taken as the start of one (not RPC, as far as we can tell).
 */
bool th_flow_tcp_input(struct th_flow_table *t, const struct th_pkt_meta *m, const uint8_t *payload,
	uint32_t len, uint32_t wire_len, uint64_t now_ns, bool is_rpc_port);

/** Forget flows idle for longer than the table's idle time; returns how many. */
uint32_t th_flow_table_age(struct th_flow_table *t, uint64_t now_ns);

/**
 * The capture ended: count the records still being assembled (a call or reply
 * whose last segments never came) as records_unfinished. Flows stay.
 */
void th_flow_table_finish(struct th_flow_table *t);

/** Flows in use. */
uint32_t th_flow_table_count(const struct th_flow_table *t);

/** Bytes of memory the table holds. */
size_t th_flow_table_memory(const struct th_flow_table *t);

const struct th_flow_counters *th_flow_table_counters(const struct th_flow_table *t);

/** Build the canonical key of a frame; returns the direction (0 or 1). */
int th_flow_key_of(const struct th_pkt_meta *m, struct th_flow_key *key);

#endif /* TH_FLOW_H */
