/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Portmap v2 and rpcbind v3/v4 (RFC 1833): enough to follow services on
 * ports other than the well-known ones. GETPORT (v2) and GETADDR/GETVERSADDR
 * (v3/v4, what Linux clients ask first) say where a program/version/protocol
 * lives; SET/UNSET register and drop such mappings. The other procedures are
 * recognised and named, their bodies not decoded.
 */

#include "th_nfs.h"

#include "nfs_private.h"

/* rpcbind procedures that carry or return an address (RFC 1833 section 2.2). */
enum { RPCB_GETADDR = 3, RPCB_GETVERSADDR = 9, RPCB_PROC_MAX = 12, RPCB3_PROC_MAX = 8 };

/* Longest netid and universal address taken seriously ("tcp6", IPv6 + ".p1.p2"). */
#define RPCB_STR_MAX 128

enum { PROTO_TCP = 6, PROTO_UDP = 17 };

static void
mapping(struct nfs_dec *d, struct th_nfs_call *out)
{
	const uint8_t *p = nfs_take(d, 4 * 4);

	if (p == NULL)
		return;
	out->pmap_prog = th_be_get32(p);
	out->pmap_vers = th_be_get32(p + 4);
	out->pmap_prot = th_be_get32(p + 8);
	/* The port (p + 12) of SET/UNSET has no place in the call yet. */
}

static bool
str_is(const uint8_t *s, uint32_t len, const char *lit)
{
	return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* struct rpcb: program, version, netid ("tcp", "udp6", ...) as an IP protocol. */
static void
rpcb(struct nfs_dec *d, struct th_nfs_call *out)
{
	const uint8_t *netid;
	uint32_t len;

	out->pmap_prog = nfs_u32(d);
	out->pmap_vers = nfs_u32(d);
	netid = nfs_opaque(d, RPCB_STR_MAX, &len);
	if (netid != NULL) {
		if (str_is(netid, len, "tcp") || str_is(netid, len, "tcp6"))
			out->pmap_prot = PROTO_TCP;
		else if (str_is(netid, len, "udp") || str_is(netid, len, "udp6"))
			out->pmap_prot = PROTO_UDP;
	}
	nfs_skip_opaque(d, RPCB_STR_MAX); /* r_addr */
	nfs_skip_opaque(d, RPCB_STR_MAX); /* r_owner */
}

/*
 * The port of a universal address: its last two dot-separated numbers,
 * "h1.h2.h3.h4.p1.p2" or "x:...:x.p1.p2". An empty address means the
 * program is not registered (port 0). Returns false when it does not parse.
 */
static bool
uaddr_port(const uint8_t *s, uint32_t len, uint32_t *port)
{
	uint32_t part[2] = {0, 0}, digits = 0, dots = 0;
	uint32_t i = len;

	*port = 0;
	if (len == 0)
		return true;
	/* Walk back over "p1.p2". */
	while (i > 0 && dots < 2) {
		uint8_t c = s[--i];

		if (c == '.') {
			if (digits == 0)
				return false;
			dots++;
			digits = 0;
		} else if (c >= '0' && c <= '9' && digits < 3) {
			uint32_t scale = digits == 0 ? 1 : digits == 1 ? 10 : 100;

			part[dots] += (uint32_t)(c - '0') * scale;
			digits++;
		} else {
			return false;
		}
	}
	if (dots < 2 || part[0] > 255 || part[1] > 255)
		return false;
	*port = part[1] << 8 | part[0];
	return true;
}

enum th_nfs_status
th_nfs__pmap_call(uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out)
{
	if (vers != 2) {
		if (proc > (vers == 3 ? RPCB3_PROC_MAX : RPCB_PROC_MAX))
			return TH_NFS_UNKNOWN_PROC;
		switch (proc) {
		case TH_PMAP_SET:
		case TH_PMAP_UNSET:
		case RPCB_GETADDR:
		case RPCB_GETVERSADDR:
			rpcb(d, out);
			break;
		default:
			break;
		}
		return nfs_result(d);
	}

	switch (proc) {
	case TH_PMAP_NULL:
	case TH_PMAP_DUMP:
		break;
	case TH_PMAP_SET:
	case TH_PMAP_UNSET:
	case TH_PMAP_GETPORT:
		mapping(d, out);
		break;
	case TH_PMAP_CALLIT:
		out->pmap_prog = nfs_u32(d);
		out->pmap_vers = nfs_u32(d);
		nfs_u32(d); /* proc */
		nfs_u32(d); /* args length; the arguments are not kept */
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}

static enum th_nfs_status
rpcb_reply(uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out)
{
	const uint8_t *s;
	uint32_t len, port;

	if (proc > (vers == 3 ? RPCB3_PROC_MAX : RPCB_PROC_MAX))
		return TH_NFS_UNKNOWN_PROC;
	switch (proc) {
	case TH_PMAP_SET:
	case TH_PMAP_UNSET:
		out->status = nfs_bool(d) ? 0 : 1;
		break;
	case RPCB_GETADDR:
	case RPCB_GETVERSADDR:
		s = nfs_opaque(d, RPCB_STR_MAX, &len);
		if (s == NULL)
			break;
		if (uaddr_port(s, len, &port))
			out->port = port;
		else
			nfs_bad(d);
		break;
	default:
		break;
	}
	return nfs_result(d);
}

enum th_nfs_status
th_nfs__pmap_reply(uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out)
{
	if (vers != 2)
		return rpcb_reply(vers, proc, d, out);

	switch (proc) {
	case TH_PMAP_NULL:
		return TH_NFS_OK;
	case TH_PMAP_SET:
	case TH_PMAP_UNSET:
		/* A bool; reported as a status so that 0 means success, as for NFS. */
		out->status = nfs_bool(d) ? 0 : 1;
		break;
	case TH_PMAP_GETPORT:
	case TH_PMAP_CALLIT:
		out->port = nfs_u32(d);
		break;
	case TH_PMAP_DUMP:
		while (nfs_bool(d)) {
			nfs_skip(d, 4 * 4); /* prog, vers, prot, port */
			if (!nfs_ok(d))
				break;
			out->count++;
		}
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}
