/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_XID_H
#define TH_XID_H

/**
 * @file
 * Calls waiting for their replies, per lcore.
 *
 * A call is keyed by transport, both endpoints and its XID, so two clients
 * (or two processes on one client) using the same XID never meet. The table
 * is preallocated and 8-way set associative; a call that waits longer than
 * the timeout leaves as an unmatched call, and when a set is full its oldest
 * call leaves early, counted as table full. Both go to the emit callback
 * as TH_OP_CALL_ONLY ops, so nothing disappears without a line and a count.
 *
 * A capture that lost bytes of a connection's reply direction (a SPAN drop)
 * has likely lost replies with them: the calls of that connection sent
 * before the gap and still waiting leave after the shorter gap timeout,
 * counted by that reason, instead of waiting the full timeout. A reply that
 * still comes for one of them is a reply without call, like any other.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_op.h"

/** Identity of an RPC exchange. */
struct th_xid_key {
	struct th_addr client; /**< caller's address */
	struct th_addr server; /**< server's address */
	uint16_t client_port;  /**< caller's port */
	uint16_t server_port;  /**< server's port */
	uint32_t xid;          /**< transaction id */
	uint32_t transport;    /**< enum th_pkt_l4 */
};

#define TH_XID_COUNTER_LIST(X)                                                                     \
	X(calls, "calls entered")                                                                  \
	X(calls_dup, "calls retransmitted while waiting (counted on the call)")                    \
	X(calls_reused, "calls left unmatched: their client sent another procedure under their "   \
			"XID (in unmatched calls)")                                                \
	X(matched, "calls matched with a reply")                                                   \
	X(unmatched_calls, "calls without a reply (timed out or left at stop)")                    \
	X(table_full, "calls pushed out early: set full")                                          \
	X(unmatched_replies, "replies without a waiting call")                                     \
	X(gap_expired, "calls expired early after a reply-direction gap (in unmatched calls)")

struct th_xid_counters {
#define TH_XID_X(name, text) uint64_t name;
	TH_XID_COUNTER_LIST(TH_XID_X)
#undef TH_XID_X
};

struct th_xid_table;

/** Receives calls that leave unmatched (aged, pushed out, flushed). */
typedef void (*th_xid_emit_cb)(void *ctx, struct th_op *op);

/**
 * Create a table for @p calls waiting calls (rounded up to a power of two).
 * @return NULL with errno EINVAL or ENOMEM.
 */
struct th_xid_table *th_xid_table_create(
	uint32_t calls, uint64_t timeout_ns, th_xid_emit_cb emit, void *ctx);

void th_xid_table_free(struct th_xid_table *t);

/**
 * Enter a call to procedure @p proc of program @p prog, version @p vers.
 * Returns the op to fill, cleared with th_op_clear() and its prog, vers and
 * proc set, or NULL when the same call is already waiting (a retransmission:
 * its key and procedure): then its dup_calls count went up and nothing else
 * changes. A call waiting under the key for another procedure is not one the
 * client sent again but one it gave up on (its XID reused): it leaves as
 * unmatched, counted as calls_reused, and the new call takes its place.
 */
struct th_op *th_xid_call(struct th_xid_table *t, const struct th_xid_key *key, uint32_t prog,
	uint32_t vers, uint32_t proc, uint64_t now_ns);

/** The waiting call for a reply, or NULL. The op stays in the table. */
struct th_op *th_xid_find(struct th_xid_table *t, const struct th_xid_key *key);

/** Remove a matched call (an op returned by th_xid_find). */
void th_xid_remove(struct th_xid_table *t, struct th_op *op);

/** Count a reply that found no call. */
void th_xid_count_unmatched_reply(struct th_xid_table *t);

/**
 * Emit calls older than the timeout as unmatched. Looks at a slice of the
 * table per call, larger when the clock moved far since the last call (a
 * file replayed fast), so no call leaves more than a quarter of its timeout
 * late; call it every millisecond or so.
 */
uint32_t th_xid_table_age(struct th_xid_table *t, uint64_t now_ns);

/**
 * Let calls that wait behind a lost reply leave after @p gap_timeout_ns
 * instead of the full timeout (see th_xid_reply_gap()); 0 turns this off
 * (the default).
 */
void th_xid_table_set_gap_timeout(struct th_xid_table *t, uint64_t gap_timeout_ns);

/**
 * Bytes of a connection's reply direction were lost, seen at @p now_ns.
 * @p flow names the calls of that connection (client, server, ports,
 * transport; its xid is ignored). Those entered at or before @p now_ns and
 * still waiting leave once they have waited the gap timeout. Remembered
 * per connection in a small direct-mapped table: a connection whose slot
 * another one took falls back to the full timeout.
 */
void th_xid_reply_gap(struct th_xid_table *t, const struct th_xid_key *flow, uint64_t now_ns);

/** Emit every waiting call as unmatched (at stop). */
uint32_t th_xid_table_flush(struct th_xid_table *t);

uint32_t th_xid_table_count(const struct th_xid_table *t);
size_t th_xid_table_memory(const struct th_xid_table *t);
const struct th_xid_counters *th_xid_table_counters(const struct th_xid_table *t);

#endif /* TH_XID_H */
