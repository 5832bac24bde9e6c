/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_RPC_H
#define TH_RPC_H

/**
 * @file
 * ONC RPC (RFC 5531) message headers: call and reply, credentials
 * (AUTH_NONE, AUTH_SYS with uid, gid and machine name; RPCSEC_GSS
 * recognised), accepted and denied replies.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum th_rpc_msg_type {
	TH_RPC_CALL = 0,
	TH_RPC_REPLY = 1,
};

/** Outcome of decoding a message header. */
enum th_rpc_status {
	TH_RPC_OK = 0,    /**< header decoded; body_offset is valid */
	TH_RPC_SHORT,     /**< the buffer ends inside the header */
	TH_RPC_MALFORMED, /**< not an RPC message (bad type, version, lengths) */
};

#define TH_RPC_MACHINE_MAX 31 /**< AUTH_SYS machine names are cut to this */

/** th_rpc_msg.flavor when the record ended inside the credential. */
#define TH_RPC_AUTH_UNSEEN 0xffffffffu

/** A decoded message header. */
struct th_rpc_msg {
	uint32_t xid;  /**< transaction id */
	uint32_t type; /**< enum th_rpc_msg_type */
	/* Call. */
	uint32_t prog;        /**< program */
	uint32_t vers;        /**< program version */
	uint32_t proc;        /**< procedure */
	uint32_t flavor;      /**< credential flavour (enum th_op_auth values) */
	uint32_t uid;         /**< AUTH_SYS uid */
	uint32_t gid;         /**< AUTH_SYS gid */
	uint32_t gss_proc;    /**< RPCSEC_GSS gss_proc (DATA 0, INIT 1, ...) */
	uint32_t gss_service; /**< RPCSEC_GSS service (none 1, integrity 2, privacy 3) */
	char machine[TH_RPC_MACHINE_MAX + 1]; /**< AUTH_SYS machine name, cut and NUL-terminated */
	/* Reply. */
	uint32_t reply_stat;  /**< 0 MSG_ACCEPTED, 1 MSG_DENIED */
	uint32_t accept_stat; /**< SUCCESS 0, PROG_UNAVAIL 1, PROG_MISMATCH 2, PROC_UNAVAIL 3,
				 GARBAGE_ARGS 4, SYSTEM_ERR 5 */
	uint32_t reject_stat; /**< RPC_MISMATCH 0, AUTH_ERROR 1 */
	uint32_t body_offset; /**< where the arguments or results start */
	bool is_call_known;   /**< a call's prog, vers and proc were read */
};

/**
 * Decode the header of one RPC message at the start of @p buf.
 * For a call, fields up to the verifier are read; for a reply, up to
 * accept_stat (and the mismatch info when present).
 *
 * A call cut after its first 24 bytes returns TH_RPC_SHORT with xid, type,
 * prog, vers and proc valid (is_call_known set): enough to match its reply.
 * A credential the cut reached into reads as TH_RPC_AUTH_UNSEEN.
 */
enum th_rpc_status th_rpc_decode(const uint8_t *buf, size_t size, struct th_rpc_msg *m);

/**
 * Cheap check used to find a record boundary when picking up a TCP stream
 * mid-way: does @p buf (at least 24 bytes) look like the start of an RPC
 * call to a program we follow, or a reply? Replies are weak evidence on
 * their own; the caller confirms them against the calls it is waiting for.
 */
bool th_rpc_looks_like_call(const uint8_t *buf, size_t size);

/** True for the programs tracehound follows (NFS, MOUNT, portmap, NLM, NFSACL). */
bool th_rpc_is_followed(uint32_t prog, uint32_t vers);
bool th_rpc_looks_like_reply(const uint8_t *buf, size_t size);

#endif /* TH_RPC_H */
