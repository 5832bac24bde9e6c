/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_rpc.h"

#include <string.h>

#include "th_bytes.h"
#include "th_nfs.h"
#include "th_xdr.h"

/* RFC 5531 limits an opaque_auth body to 400 bytes. */
#define AUTH_BODY_MAX 400
#define AUTH_SYS_GIDS_MAX 16

enum { AUTH_NONE = 0, AUTH_SYS = 1, RPCSEC_GSS = 6 };

static enum th_rpc_status
status_of(const struct th_xdr *x)
{
	return th_xdr_ok(x) ? TH_RPC_MALFORMED : TH_RPC_SHORT;
}

/* The AUTH_SYS body: stamp, machine name, uid, gid, gids. */
static void
decode_auth_sys(const uint8_t *body, uint32_t size, struct th_rpc_msg *m)
{
	struct th_xdr x;
	const uint8_t *name;
	uint32_t stamp, len, n;

	th_xdr_init(&x, body, size);
	if (!th_xdr_u32(&x, &stamp) || !th_xdr_opaque(&x, 255, &name, &len))
		return;
	n = len < TH_RPC_MACHINE_MAX ? len : TH_RPC_MACHINE_MAX;
	memcpy(m->machine, name, n);
	m->machine[n] = '\0';
	th_xdr_u32(&x, &m->uid);
	th_xdr_u32(&x, &m->gid);
}

static void
decode_auth_gss(const uint8_t *body, uint32_t size, struct th_rpc_msg *m)
{
	struct th_xdr x;
	uint32_t version, seq;

	th_xdr_init(&x, body, size);
	if (th_xdr_u32(&x, &version) && th_xdr_u32(&x, &m->gss_proc) && th_xdr_u32(&x, &seq))
		th_xdr_u32(&x, &m->gss_service);
}

static enum th_rpc_status
decode_call(struct th_xdr *x, struct th_rpc_msg *m)
{
	uint32_t rpcvers, verf_flavor, flavor;
	const uint8_t *body;
	uint32_t len;

	if (!th_xdr_u32(x, &rpcvers))
		return TH_RPC_SHORT;
	if (rpcvers != 2)
		return TH_RPC_MALFORMED;
	if (!th_xdr_u32(x, &m->prog) || !th_xdr_u32(x, &m->vers) || !th_xdr_u32(x, &m->proc))
		return TH_RPC_SHORT;
	m->is_call_known = true;
	if (!th_xdr_u32(x, &flavor) || !th_xdr_opaque(x, AUTH_BODY_MAX, &body, &len)) {
		m->flavor = TH_RPC_AUTH_UNSEEN;
		return status_of(x);
	}
	m->flavor = flavor;
	if (m->flavor == AUTH_SYS)
		decode_auth_sys(body, len, m);
	else if (m->flavor == RPCSEC_GSS)
		decode_auth_gss(body, len, m);
	if (!th_xdr_u32(x, &verf_flavor) || !th_xdr_opaque(x, AUTH_BODY_MAX, &body, &len))
		return status_of(x);
	return TH_RPC_OK;
}

static enum th_rpc_status
decode_reply(struct th_xdr *x, struct th_rpc_msg *m)
{
	uint32_t verf_flavor, len, lo, hi;
	const uint8_t *body;

	if (!th_xdr_u32(x, &m->reply_stat))
		return TH_RPC_SHORT;
	if (m->reply_stat == 1) {
		if (!th_xdr_u32(x, &m->reject_stat))
			return TH_RPC_SHORT;
		if (m->reject_stat > 1)
			return TH_RPC_MALFORMED;
		/* RPC_MISMATCH carries low/high, AUTH_ERROR an auth_stat. */
		if (!th_xdr_u32(x, &lo) || (m->reject_stat == 0 && !th_xdr_u32(x, &hi)))
			return TH_RPC_SHORT;
		return TH_RPC_OK;
	}
	if (m->reply_stat != 0)
		return TH_RPC_MALFORMED;
	if (!th_xdr_u32(x, &verf_flavor) || !th_xdr_opaque(x, AUTH_BODY_MAX, &body, &len))
		return status_of(x);
	if (!th_xdr_u32(x, &m->accept_stat))
		return TH_RPC_SHORT;
	if (m->accept_stat > 5)
		return TH_RPC_MALFORMED;
	if (m->accept_stat == 2 && (!th_xdr_u32(x, &lo) || !th_xdr_u32(x, &hi)))
		return TH_RPC_SHORT;
	return TH_RPC_OK;
}

enum th_rpc_status
th_rpc_decode(const uint8_t *buf, size_t size, struct th_rpc_msg *m)
{
	struct th_xdr x;
	enum th_rpc_status st;

	th_xdr_init(&x, buf, size);
	m->flavor = AUTH_NONE;
	m->uid = m->gid = 0;
	m->gss_proc = m->gss_service = 0;
	m->is_call_known = false;
	m->machine[0] = '\0';
	if (!th_xdr_u32(&x, &m->xid) || !th_xdr_u32(&x, &m->type))
		return TH_RPC_SHORT;
	if (m->type == TH_RPC_CALL)
		st = decode_call(&x, m);
	else if (m->type == TH_RPC_REPLY)
		st = decode_reply(&x, m);
	else
		return TH_RPC_MALFORMED;
	m->body_offset = (uint32_t)(x.p - buf);
	return st;
}

bool
th_rpc_is_followed(uint32_t prog, uint32_t vers)
{
	return th_nfs_is_known(prog, vers) || prog == TH_PROG_NLM || prog == TH_PROG_NFSACL;
}

bool
th_rpc_looks_like_call(const uint8_t *buf, size_t size)
{
	uint32_t prog, vers, flavor;

	if (size < 32 || th_be_get32(buf + 4) != TH_RPC_CALL || th_be_get32(buf + 8) != 2)
		return false;
	prog = th_be_get32(buf + 12);
	vers = th_be_get32(buf + 16);
	flavor = th_be_get32(buf + 24);
	if (!th_rpc_is_followed(prog, vers))
		return false;
	return flavor <= RPCSEC_GSS && th_be_get32(buf + 28) <= AUTH_BODY_MAX;
}

bool
th_rpc_looks_like_reply(const uint8_t *buf, size_t size)
{
	uint32_t stat;

	if (size < 12 || th_be_get32(buf + 4) != TH_RPC_REPLY)
		return false;
	stat = th_be_get32(buf + 8);
	if (stat == 1)
		return size < 16 || th_be_get32(buf + 12) <= 1;
	if (stat != 0 || size < 24)
		return false;
	/* verifier flavor, length, then accept_stat when the verifier is empty */
	if (th_be_get32(buf + 12) > RPCSEC_GSS || th_be_get32(buf + 16) > AUTH_BODY_MAX)
		return false;
	return th_be_get32(buf + 16) != 0 || th_be_get32(buf + 20) <= 5;
}
