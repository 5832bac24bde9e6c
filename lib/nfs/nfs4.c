/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NFSv4 (RFC 7530, RFC 8881): only recognised for now. A COMPOUND's header
 * (tag, minor version, operation count) is read so that v4 traffic can be
 * counted; the operations themselves wait for their own decoder.
 */

#include "th_nfs.h"

#include "nfs_private.h"

enum { NFS4_PROC_NULL = 0, NFS4_PROC_COMPOUND = 1 };

/* An operation count no client sends: the header is garbage. */
#define NFS4_OPS_MAX 1024

static enum th_nfs_status
compound_result(const struct nfs_dec *d)
{
	enum th_nfs_status st = nfs_result(d);

	return st == TH_NFS_OK ? TH_NFS_V4_COMPOUND : st;
}

enum th_nfs_status
th_nfs__v4_call(uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out)
{
	uint32_t n;

	switch (proc) {
	case NFS4_PROC_NULL:
		return TH_NFS_OK;
	case NFS4_PROC_COMPOUND:
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX); /* tag */
		out->v4_minor = nfs_u32(d);
		n = nfs_u32(d);
		if (n > NFS4_OPS_MAX)
			nfs_bad(d);
		else
			out->v4_ops = n;
		return compound_result(d);
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
}

enum th_nfs_status
th_nfs__v4_reply(uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out)
{
	uint32_t n;

	switch (proc) {
	case NFS4_PROC_NULL:
		return TH_NFS_OK;
	case NFS4_PROC_COMPOUND:
		out->status = nfs_u32(d);
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX); /* tag */
		n = nfs_u32(d);
		if (n > NFS4_OPS_MAX)
			nfs_bad(d);
		else
			out->v4_ops = n;
		return compound_result(d);
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
}
