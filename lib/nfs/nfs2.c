/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NFS version 2 (RFC 1094): all 18 procedures. Handles are 32 fixed bytes,
 * sizes and offsets 32 bits, times seconds + microseconds. Results fill
 * struct th_nfs_reply the way nfs3.c does, so the trace reads the same for
 * both versions.
 */

#include "th_nfs.h"

#include "nfs_private.h"

/* v2 ftype values past NFLNK, as implementations use them. */
enum { NF2SOCK = 6, NF2BAD = 7, NF2FIFO = 8 };

/* The file type bits of a v2 mode, which some servers use to say FIFO. */
#define MODE_FMT 0170000u
#define MODE_FIFO 0010000u

/* sattr fields set to all ones are "do not change". */
#define SATTR_UNSET UINT32_MAX

static inline uint64_t
timeval_ns(const uint8_t *p)
{
	return (uint64_t)th_be_get32(p) * 1000000000u + (uint64_t)th_be_get32(p + 4) * 1000u;
}

static void
fattr(struct nfs_dec *d, struct th_nfs_attr *a)
{
	const uint8_t *p = nfs_take(d, NFS2_FATTR_SIZE);
	uint32_t type, mode;

	if (p == NULL)
		return;
	type = th_be_get32(p);
	mode = th_be_get32(p + 4);
	if (type > NF2FIFO) {
		nfs_bad(d);
		return;
	}
	if (type == NF2FIFO || (type == TH_NFS_CHR && (mode & MODE_FMT) == MODE_FIFO))
		type = TH_NFS_FIFO;
	else if (type == NF2SOCK)
		type = TH_NFS_SOCK;
	else if (type == NF2BAD)
		type = TH_NFS_NON;
	a->type = type; /* NFNON..NFLNK have the ftype3 numbers */
	a->mode = mode & 07777;
	nfs_attr_ids(a, p);
	a->size = th_be_get32(p + 20);
	/* blocksize (24), rdev (28), blocks (32), fsid (36) are not traced */
	a->fileid = th_be_get32(p + 40);
	/* atime (44) */
	a->mtime_ns = timeval_ns(p + 52);
	a->ctime_ns = timeval_ns(p + 60);
	a->is_present = true;
}

static void
sattr(struct nfs_dec *d, struct th_nfs_call *out)
{
	const uint8_t *p = nfs_take(d, 4 * 4 + 2 * 8);
	uint32_t mode, size;

	if (p == NULL)
		return;
	mode = th_be_get32(p);
	size = th_be_get32(p + 12);
	if (mode != SATTR_UNSET) {
		out->has_set_mode = true;
		out->set_mode = mode;
	}
	if (size != SATTR_UNSET) {
		out->has_set_size = true;
		out->set_size = size;
	}
}

static void
diropargs(struct nfs_dec *d, struct th_nfs_fh *fh, struct th_nfs_name *name)
{
	nfs_fh2(d, fh);
	nfs_name(d, name);
}

enum th_nfs_status
th_nfs__v2_call(uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out)
{
	switch (proc) {
	case TH_NFS2_NULL:
	case TH_NFS2_ROOT:
	case TH_NFS2_WRITECACHE:
		break;
	case TH_NFS2_GETATTR:
	case TH_NFS2_READLINK:
	case TH_NFS2_STATFS:
		nfs_fh2(d, &out->fh);
		break;
	case TH_NFS2_SETATTR:
		nfs_fh2(d, &out->fh);
		sattr(d, out);
		break;
	case TH_NFS2_LOOKUP:
	case TH_NFS2_REMOVE:
	case TH_NFS2_RMDIR:
		diropargs(d, &out->fh, &out->name);
		break;
	case TH_NFS2_READ:
		nfs_fh2(d, &out->fh);
		out->offset = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET);
		out->count = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		nfs_u32(d); /* totalcount: unused */
		break;
	case TH_NFS2_WRITE:
		nfs_fh2(d, &out->fh);
		nfs_u32(d); /* beginoffset: unused */
		out->offset = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET);
		nfs_u32(d); /* totalcount: unused */
		/* v2 has no count: the data length is what is written; data not kept. */
		out->count = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		break;
	case TH_NFS2_CREATE:
	case TH_NFS2_MKDIR:
		diropargs(d, &out->fh, &out->name);
		sattr(d, out);
		break;
	case TH_NFS2_RENAME:
		diropargs(d, &out->fh, &out->name);
		diropargs(d, &out->fh2, &out->name2);
		break;
	case TH_NFS2_LINK:
		nfs_fh2(d, &out->fh);
		diropargs(d, &out->fh2, &out->name);
		break;
	case TH_NFS2_SYMLINK:
		diropargs(d, &out->fh, &out->name);
		nfs_name(d, &out->name2);
		sattr(d, out);
		break;
	case TH_NFS2_READDIR:
		nfs_fh2(d, &out->fh);
		out->offset = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET); /* nfscookie: 4 opaque bytes */
		out->count = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}

/* entry lists: count whole entries; until the list's end is read, the count is partial. */
static void
dirlist(struct nfs_dec *d, struct th_nfs_reply *out)
{
	out->is_count_partial = true;
	while (nfs_bool(d)) {
		nfs_skip(d, 4); /* fileid */
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		nfs_skip(d, 4); /* cookie */
		if (!nfs_ok(d))
			return;
		out->count++;
	}
	if (nfs_ok(d))
		out->is_count_partial = false;
	out->eof = nfs_bool(d);
}

enum th_nfs_status
th_nfs__v2_reply(uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out)
{
	uint32_t len;

	switch (proc) {
	case TH_NFS2_NULL:
	case TH_NFS2_ROOT:
	case TH_NFS2_WRITECACHE:
		return TH_NFS_OK;
	default:
		if (proc >= TH_NFS2__PROC_COUNT)
			return TH_NFS_UNKNOWN_PROC;
		break;
	}
	out->status = nfs_u32(d);
	if (!nfs_ok(d))
		return TH_NFS_SHORT;
	/* Every v2 failure arm is void. */
	if (out->status != 0)
		return TH_NFS_OK;

	switch (proc) {
	case TH_NFS2_GETATTR:
	case TH_NFS2_SETATTR:
	case TH_NFS2_WRITE:
		fattr(d, &out->attr);
		break;
	case TH_NFS2_LOOKUP:
	case TH_NFS2_CREATE:
	case TH_NFS2_MKDIR:
		nfs_fh2(d, &out->fh);
		fattr(d, &out->attr);
		break;
	case TH_NFS2_READLINK:
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		break;
	case TH_NFS2_READ:
		fattr(d, &out->attr);
		/* The data length is the count read; the data is not kept. */
		len = nfs_u32(d);
		if (nfs_ok(d))
			out->count = len;
		break;
	case TH_NFS2_REMOVE:
	case TH_NFS2_RENAME:
	case TH_NFS2_LINK:
	case TH_NFS2_SYMLINK:
	case TH_NFS2_RMDIR:
		break;
	case TH_NFS2_READDIR:
		dirlist(d, out);
		break;
	case TH_NFS2_STATFS:
		nfs_skip(d, 5 * 4); /* tsize, bsize, blocks, bfree, bavail */
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}
