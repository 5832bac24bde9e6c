/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_DECODE_H
#define TH_DECODE_H

/**
 * @file
 * The decode pipeline of one lcore: frames in, RPC ops out, every frame
 * and every loss counted by reason.
 *
 * frame -> L2-L4 parse -> UDP datagram or TCP stream (record marking) ->
 * RPC header -> call: enter the XID table, decode arguments;
 * reply: find the call, decode results, emit the matched op.
 *
 * RPC is recognised on any port by header plausibility (a call to a
 * program we follow, with RPC version 2 and sane credential lengths; a
 * reply only when its call is waiting). Ports seen serving RPC, and ports
 * that portmap GETPORT (rpcbind GETADDR, GETVERSADDR) replies announce, are
 * remembered so connections to them are tracked from their first segment.
 *
 * One instance per lcore, no locks, no allocation after creation.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "th_flow.h"
#include "th_op.h"
#include "th_pkt.h"
#include "th_srt.h"
#include "th_xid.h"

/** Pipeline counters. X-macro: field, description. */
#define TH_DECODE_COUNTER_LIST(X)                                                                  \
	X(frames, "frames received")                                                               \
	X(bytes, "bytes received (frame length on the wire)")                                      \
	X(frames_cut, "frames cut by the capture length (payload partly missing)")                 \
	X(frames_copied, "frames seen again within decode.copy_window (a mirror port's copies, "   \
			 "not decoded)")                                                           \
	X(udp_datagrams, "UDP datagrams")                                                          \
	X(udp_first_frags, "UDP first IP fragments (headers decoded, data not reassembled)")       \
	X(tcp_segments, "TCP segments")                                                            \
	X(not_rpc, "TCP/UDP payloads that are not RPC")                                            \
	X(rpc_calls, "RPC calls")                                                                  \
	X(rpc_replies, "RPC replies")                                                              \
	X(rpc_short, "RPC messages too short for their header (dropped)")                          \
	X(calls_header_cut, "RPC calls cut inside their header, kept (procedure known: cut=call)") \
	X(rpc_malformed, "RPC messages with a malformed header")                                   \
	X(rpc_gss, "RPCSEC_GSS calls (credential recognised, arguments not decoded)")              \
	X(rpc_denied, "RPC replies denied (RPC_MISMATCH, AUTH_ERROR)")                             \
	X(rpc_not_success, "RPC replies accepted with an error (PROG_UNAVAIL, ...)")               \
	X(args_short, "call arguments cut before every field was read")                            \
	X(args_malformed, "call arguments malformed")                                              \
	X(results_short, "reply results cut before every field was read")                          \
	X(results_malformed, "reply results malformed")                                            \
	X(unknown_proc, "procedure numbers unknown to their program")                              \
	X(unknown_prog, "RPC programs not decoded (NLM, NFSACL, ...)")                             \
	X(nfs4_compounds, "NFSv4 COMPOUNDs (counted, not decoded)")                                \
	X(ops_matched, "ops emitted with call and reply")                                          \
	X(ops_call_only, "ops emitted as a call without reply")                                    \
	X(ops_reply_only, "ops emitted as a reply without call")                                   \
	X(ports_learned, "RPC server ports learned (portmap, traffic)")                            \
	X(frags_displaced, "fragmented UDP calls no longer followed (slot reused)")                \
	X(frags_unfinished, "fragmented UDP calls whose last fragment did not come within 1 s")    \
	X(frags_early, "UDP datagrams whose later IP fragments came before their first (timed "    \
		       "from the earliest)")                                                       \
	X(frags_early_lost, "UDP datagrams whose fragments before their first were forgotten "     \
			    "(4-way set full; timed from the first)")                              \
	X(dirents, "READDIRPLUS entries with a name and handle handed on (name map)")

/** Programs with per-procedure counts. */
#define TH_DECODE_PROG_LIST(X)                                                                     \
	X(NFS2, TH_PROG_NFS, 2)                                                                    \
	X(NFS3, TH_PROG_NFS, 3)                                                                    \
	X(NFS4, TH_PROG_NFS, 4)                                                                    \
	X(MOUNT1, TH_PROG_MOUNT, 1) X(MOUNT3, TH_PROG_MOUNT, 3) X(PORTMAP2, TH_PROG_PORTMAP, 2)    \
		X(PORTMAP3, TH_PROG_PORTMAP, 3) X(PORTMAP4, TH_PROG_PORTMAP, 4)                    \
			X(NLM4, TH_PROG_NLM, 4) X(NFSACL3, TH_PROG_NFSACL, 3)

enum th_decode_prog {
#define TH_DECODE_PX(name, prog, vers) TH_DECODE_PROG_##name,
	TH_DECODE_PROG_LIST(TH_DECODE_PX)
#undef TH_DECODE_PX
		TH_DECODE_PROG_OTHER,
	TH_DECODE__PROG_COUNT
};

#define TH_DECODE_PROCS 32 /**< procedures counted per program; higher ones share the last */

/** Everything one pipeline counted. Plain sums: add them up across lcores. */
struct th_decode_stats {
#define TH_DECODE_X(name, text) uint64_t name;
	TH_DECODE_COUNTER_LIST(TH_DECODE_X)
#undef TH_DECODE_X
	uint64_t pkt[TH_PKT__STATUS_COUNT];                     /**< frames by parse outcome */
	uint64_t calls[TH_DECODE__PROG_COUNT][TH_DECODE_PROCS]; /**< calls by procedure */
	struct th_flow_counters flow;                           /**< TCP stream counters */
	struct th_xid_counters xid;                             /**< matching counters */
};

/** Sizes and timeouts of one pipeline. */
struct th_decode_config {
	uint32_t flows;               /**< TCP connections tracked at once */
	uint32_t calls;               /**< calls waiting for replies at once */
	uint64_t flow_idle_ns;        /**< a connection idle this long is forgotten */
	uint64_t call_timeout_ns;     /**< a call waits this long for its reply */
	uint64_t gap_call_timeout_ns; /**< ... or this long when its TCP connection lost
					   reply bytes after it was sent; 0: no shortcut */
	uint32_t listings;            /**< listings (READDIR, READDIRPLUS replies) longer
					   than the TCP prefix
					   kept whole at once, for their entry count and
					   names (TH_DECODE_LISTING_SIZE bytes each, allocated
					   by th_decode_create()), 0 to TH_FLOW_WHOLE_MAX;
					   0: a listing's count and names end with the
					   prefix (the count flagged partial) */
	uint64_t copy_window_ns;      /**< a frame the same as one seen this long before or
					   after it is a mirror port's copy: counted, not
					   decoded; 0: every frame is decoded */
};

#define TH_DECODE_LISTING_SIZE (64u << 10) /**< a longer listing is cut there (counted) */

/**
 * Defaults: 16384 flows, 65536 calls, 300 s idle, 60 s call timeout, 2 s behind a gap,
 * 32 listings, copies within 1 ms.
 */
void th_decode_config_defaults(struct th_decode_config *cfg);

/** Receives every op: matched, call only, reply only. */
typedef void (*th_decode_op_cb)(void *ctx, const struct th_op *op);

/**
 * Receives each entry with a name and a handle of a successful NFSv3
 * READDIRPLUS reply whose call was seen (@p op, not yet emitted: the
 * directory is op->call.fh), while the reply is decoded; the entry's bytes
 * are valid during the call only.
 */
typedef void (*th_decode_dirent_cb)(
	void *ctx, const struct th_op *op, const struct th_nfs_dirent *e);

struct th_decode;

/** @return NULL with errno EINVAL or ENOMEM (tables or listing buffers). */
struct th_decode *th_decode_create(
	const struct th_decode_config *cfg, th_decode_op_cb emit, void *ctx);
void th_decode_free(struct th_decode *d);

/**
 * Hand READDIRPLUS entries to @p cb (with the ctx given to th_decode_create()),
 * or NULL (the default): listings are then counted, their entries not handed
 * on. Either way a listing (READDIR or READDIRPLUS reply) over TCP whose call
 * is waiting is kept
 * whole past the stream's prefix in one of the config's listing buffers, so
 * that its count (and, with a callback, its names) covers every entry, and
 * the same listing gets the same count with or without names. Call it before
 * the first frame.
 */
void th_decode_set_dirent_cb(struct th_decode *d, th_decode_dirent_cb cb);

/**
 * Decode one frame.
 * @param caplen  bytes at frame
 * @param wirelen the frame's length on the wire (>= caplen)
 */
void th_decode_frame(struct th_decode *d, const uint8_t *frame, uint32_t caplen, uint32_t wirelen,
	enum th_pkt_link link, uint64_t ts_ns);

/** Age flows and calls; call it every millisecond or so with the capture clock. */
void th_decode_housekeep(struct th_decode *d, uint64_t now_ns);

/** Emit every waiting call as unmatched, and forget the frames seen: the end of the capture. */
void th_decode_flush(struct th_decode *d);

/** Counters so far (flow and XID counters copied in). */
void th_decode_get_stats(const struct th_decode *d, struct th_decode_stats *out);

/** Bytes of memory the pipeline holds. */
size_t th_decode_memory(const struct th_decode *d);

/** sum += s, field by field. */
void th_decode_stats_add(struct th_decode_stats *sum, const struct th_decode_stats *s);

/**
 * The pipeline's response times so far: each matched RPC from the call's last
 * segment to the reply's first (LAT_LAST). Another thread may add them up
 * with th_srt_add() while the lcore runs.
 */
const struct th_srt *th_decode_get_srt(const struct th_decode *d);

/**
 * Print a statistics block: traffic, RPCs by program and procedure, and
 * every loss or skip by reason (zeros included, so a reader sees nothing
 * was lost rather than guessing).
 */
void th_decode_stats_print(FILE *out, const struct th_decode_stats *s);

#endif /* TH_DECODE_H */
