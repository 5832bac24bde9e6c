/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_OP_H
#define TH_OP_H

/**
 * @file
 * One RPC as tracehound reports it: a call matched with its reply (or either
 * half alone), normalised into the fields tracing needs, and its text form.
 *
 * Text form, one line per op, fields separated by one space:
 *
 *     TIME KIND PROTO CLIENT SERVER XID PROGRAM PROC STATUS LAT_FIRST LAT_LAST [KEY=VALUE ...]
 *
 * TIME       call's first segment, seconds.nanoseconds since the epoch
 *            (the reply's first segment for a REPLY line)
 * KIND       RPC (call and reply), CALL (no reply seen), REPLY (no call seen)
 * PROTO      tcp or udp
 * CLIENT     address:port of the caller (IPv6 as [address]:port)
 * SERVER     address:port of the server
 * XID        0x and eight hex digits
 * PROGRAM    NFS2, NFS3, NFS4, MOUNT1, MOUNT3, PORTMAP2, ... or PROG.VERS numbers;
 *            ? on a REPLY line
 * PROC       procedure name (READ, LOOKUP, MNT, GETPORT, COMPOUND) or its number
 * STATUS     OK, an nfsstat/mountstat name (NOENT, ACCES, ...), an RPC-level
 *            failure (PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR,
 *            PROG_MISMATCH, RPC_MISMATCH, AUTH_ERROR), - without a reply, ? when
 *            the reply was accepted but its own status was not seen (record cut
 *            before it, RPCSEC_GSS-wrapped results)
 * LAT_FIRST  server latency in microseconds from the call's first segment to
 *            the reply's first segment, - when unmatched
 * LAT_LAST   the same from the call's last segment. (tshark's rpc.time runs from
 *            the call's last segment to the reply's last: equal when the reply
 *            fits in one segment.)
 *
 * KEY=VALUE pairs follow when the procedure has them:
 *   uid= gid= machine=   AUTH_SYS credential; otherwise auth=none, auth=? (cut
 *             inside the credential), auth=gss, or
 *             auth=gss-wrapped (GSS control or integrity/privacy: the body is
 *             not decoded and STATUS is the RPC-level one)
 *   fh=       CRC-32 of the argument handle, 8 hex digits (as tshark's nfs.fh.hash)
 *   name=     component name (LOOKUP, CREATE, REMOVE, RENAME from, MNT path ...),
 *             bytes outside printable ASCII, space, '=' and '\' escaped as \xHH
 *   fh2= name2=  second directory and name (RENAME to, LINK), SYMLINK target
 *   off= count=  READ/WRITE/COMMIT/READDIR offset and requested count (each left
 *             out when the record was cut before it)
 *   stable=   WRITE stable_how requested (unstable, data_sync, file_sync)
 *   done= eof= committed=   bytes read/written by the server, eof (READ,
 *             READDIR, READDIRPLUS), committed level; left out when the reply
 *             was cut before them. For a listing (READDIR, READDIRPLUS) done=
 *             is the number of entries the reply listed
 *   done_min= a listing the capture kept only part of (a TCP gap, a listing
 *             buffer's 64 KiB, none free, a frame cut short): the entries
 *             before the cut, at least that many listed; done= is then left
 *             out, as for a READ or WRITE reply cut before its count
 *   newfh=    CRC-32 of a handle the reply returns (LOOKUP, CREATE, MKDIR, MNT)
 *   type= mode= size= fileid= uid_f= gid_f= mtime=   object attributes after
 *   pre_size= pre_mtime=   the object's attributes before (SETATTR, WRITE, COMMIT)
 *   setsize= setmode=   SETATTR/CREATE attributes set
 *   port=     portmap GETPORT answer; prog= vers= for GETPORT arguments
 *   ops=      NFSv4 COMPOUND operation count
 *   dup=N     the call was seen N more times (retransmissions)
 *   cut=call|reply|both   the record ended before every field was decoded
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_nfs.h"
#include "th_trace.h"
#include "th_pkt.h"

enum th_op_kind {
	TH_OP_MATCHED = 0, /**< call and reply */
	TH_OP_CALL_ONLY,   /**< the reply never came (aged out, table full at stop) */
	TH_OP_REPLY_ONLY,  /**< the call was not seen (capture started late, lost) */
};

/** RPC credential flavours (RFC 5531). */
enum th_op_auth {
	TH_AUTH_NONE = 0,
	TH_AUTH_SYS = 1,
	TH_AUTH_SHORT = 2,
	TH_AUTH_DH = 3,
	TH_AUTH_GSS = 6,
	TH_AUTH_UNSEEN = 0xffffffffu, /**< the record ended inside the credential */
};

#define TH_OP_MACHINE_MAX 31 /**< AUTH_SYS machine names are cut to this */

/** A matched (or half) RPC. */
struct th_op {
	uint64_t call_first_ns;  /**< call's first segment, ns since the epoch; 0 if no call */
	uint64_t call_last_ns;   /**< call's last segment */
	uint64_t reply_first_ns; /**< reply's first segment; 0 if no reply */
	uint64_t reply_last_ns;  /**< reply's last segment */
	struct th_addr client;   /**< caller */
	struct th_addr server;   /**< server */
	uint16_t client_port;    /**< caller's port */
	uint16_t server_port;    /**< server's port */
	uint8_t kind;            /**< enum th_op_kind */
	uint8_t transport;       /**< enum th_pkt_l4 */
	uint8_t call_decode;     /**< enum th_nfs_status of the arguments */
	uint8_t reply_decode;    /**< enum th_nfs_status of the results */
	bool is_opaque;          /**< arguments and results are RPCSEC_GSS tokens or wrapped
				    (integrity, privacy): not decoded */
	uint32_t xid;            /**< transaction id */
	uint32_t prog;           /**< RPC program */
	uint32_t vers;           /**< program version */
	uint32_t proc;           /**< procedure */
	uint32_t auth;           /**< enum th_op_auth of the credential */
	uint32_t uid;            /**< AUTH_SYS uid */
	uint32_t gid;            /**< AUTH_SYS gid */
	char machine[TH_OP_MACHINE_MAX + 1]; /**< AUTH_SYS machine name */
	uint32_t reply_stat;                 /**< 0 accepted, 1 denied */
	uint32_t accept_stat;                /**< accepted: SUCCESS 0, PROG_UNAVAIL 1, ... */
	uint32_t reject_stat;                /**< denied: RPC_MISMATCH 0, AUTH_ERROR 1 */
	uint32_t dup_calls;        /**< retransmissions of the call seen while it waited */
	struct th_nfs_call call;   /**< decoded arguments */
	struct th_nfs_reply reply; /**< decoded results (valid when accept_stat is 0) */
};

/**
 * Make @p op empty: every field zero, names and handles of length 0.
 * Cheaper than zeroing the whole struct: name and handle bytes beyond their
 * lengths are never read, so they are left alone.
 */
void th_op_clear(struct th_op *op);

/**
 * Format @p op as one line of text (with the trailing newline).
 * @return bytes written without the NUL, or the size needed (as snprintf)
 *         when @p size is too small.
 */
int th_op_format(const struct th_op *op, char *buf, size_t size);

/** STATUS field text of an op (see the file comment). */
const char *th_op_status_str(const struct th_op *op, char *buf, size_t size);

/**
 * The op as a trace record (the per-call log a capture keeps with
 * trace.rpcs): times of the first segments, endpoints, credential, the
 * argument handle, offset and count, bytes done (a listing's entries, flagged
 * when the capture kept only some), size after, and the status (an RPC-level
 * failure flagged, as its accept_stat or 100 + reject_stat).
 */
void th_op_rpc_record(const struct th_op *op, struct th_trace_rpc *r);

/**
 * STATUS of such a record as th_op_status_str() names the op's: "-" without a
 * reply, the RPC-level failure, or the procedure's result (its number written
 * into @p buf, at least 12 bytes, where it has no name).
 */
const char *th_op_rpc_status_name(const struct th_trace_rpc *r, char *buf, size_t size);

/** Procedures whose arguments carry an offset (or cookie) and a count: off= count=. */
bool th_op_has_offset_count(uint32_t prog, uint32_t vers, uint32_t proc);

/** Procedures whose results say how many bytes the server moved: done=. */
bool th_op_has_done(uint32_t prog, uint32_t vers, uint32_t proc);

/**
 * Procedures whose results say where a program listens: portmap v2 GETPORT,
 * rpcbind v3/v4 GETADDR and v4 GETVERSADDR (port=).
 */
bool th_op_returns_port(uint32_t prog, uint32_t vers, uint32_t proc);

/**
 * Directory listings (NFSv3 READDIR and READDIRPLUS, NFSv2 READDIR): their
 * results' entry count is done=, or done_min= where the capture kept only part
 * of the listing.
 */
bool th_op_is_listing(uint32_t prog, uint32_t vers, uint32_t proc);

#endif /* TH_OP_H */
