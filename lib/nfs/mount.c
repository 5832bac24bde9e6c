/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * MOUNT v1/v2 (RFC 1094 appendix A) and v3 (RFC 1813 appendix I): MNT gives
 * the root handle of an export, which is how a tracer learns the names of
 * handles it sees later. Versions 1 and 2 share procedures and the 32-byte
 * handle; v3 returns a variable handle and the accepted auth flavors.
 */

#include "th_nfs.h"

#include "nfs_private.h"

/* More auth flavors than any server offers: the list is garbage. */
#define MOUNT_FLAVORS_MAX 64

enum th_nfs_status
th_nfs__mount_call(uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out)
{
	(void)vers;
	switch (proc) {
	case TH_MOUNT_NULL:
	case TH_MOUNT_DUMP:
	case TH_MOUNT_UMNTALL:
	case TH_MOUNT_EXPORT:
		break;
	case TH_MOUNT_MNT:
	case TH_MOUNT_UMNT:
		nfs_name(d, &out->name); /* dirpath */
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}

/* mountlist: count the (hostname, directory) entries present. */
static void
mountlist(struct nfs_dec *d, struct th_nfs_reply *out)
{
	while (nfs_bool(d)) {
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		if (!nfs_ok(d))
			return;
		out->count++;
	}
}

/* exports: count the exported directories present (their group lists skipped). */
static void
exports(struct nfs_dec *d, struct th_nfs_reply *out)
{
	while (nfs_bool(d)) {
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		while (nfs_bool(d))
			nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		if (!nfs_ok(d))
			return;
		out->count++;
	}
}

enum th_nfs_status
th_nfs__mount_reply(uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out)
{
	uint32_t n;

	switch (proc) {
	case TH_MOUNT_NULL:
	case TH_MOUNT_UMNT:
	case TH_MOUNT_UMNTALL:
		return TH_NFS_OK;
	case TH_MOUNT_MNT:
		out->status = nfs_u32(d);
		if (!nfs_ok(d) || out->status != 0)
			break;
		if (vers != 3) {
			nfs_fh2(d, &out->fh);
			break;
		}
		nfs_fh3(d, &out->fh);
		n = nfs_u32(d);
		if (n > MOUNT_FLAVORS_MAX)
			nfs_bad(d);
		else
			nfs_skip(d, (size_t)n * 4);
		break;
	case TH_MOUNT_DUMP:
		mountlist(d, out);
		break;
	case TH_MOUNT_EXPORT:
		exports(d, out);
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}
