/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NFS version 3 (RFC 1813): arguments and results of all 22 procedures, the
 * fields a tracer keeps.
 *
 * Where results go in struct th_nfs_reply:
 * - attr: attributes of the object the reply is about: the looked-up or
 *   created object, otherwise the call's file handle (for REMOVE, RMDIR,
 *   RENAME this is the (from-)directory's wcc "after");
 * - pre: the "before" half of the first wcc_data in the reply;
 * - dir_attr: the directory's attributes when attr is taken by the object
 *   (LOOKUP dir_attributes, CREATE/MKDIR/SYMLINK/MKNOD dir wcc after, LINK
 *   link-directory wcc after) and the to-directory's wcc after for RENAME.
 */

#include "th_nfs.h"

#include "nfs_private.h"

/* createmode3 */
enum { CREATE_UNCHECKED = 0, CREATE_GUARDED = 1, CREATE_EXCLUSIVE = 2 };

/* time_how */
enum { SET_TO_CLIENT_TIME = 2 };

static inline uint64_t
time_ns(const uint8_t *p)
{
	return (uint64_t)th_be_get32(p) * 1000000000u + th_be_get32(p + 4);
}

/*
 * fattr3 is fixed size: check the length once and load fields without
 * per-field checks. Partial attributes are not kept (is_present stays false).
 */
static bool
fattr3_load(const uint8_t *p, struct th_nfs_attr *a)
{
	uint32_t type = th_be_get32(p);

	if (type < TH_NFS_REG || type > TH_NFS_FIFO)
		return false;
	a->type = type;
	a->mode = th_be_get32(p + 4);
	nfs_attr_ids(a, p);
	a->size = th_be_get64(p + 20);
	/* used (28), rdev (36), fsid (44) are not traced */
	a->fileid = th_be_get64(p + 52);
	/* atime (60) */
	a->mtime_ns = time_ns(p + 68);
	a->ctime_ns = time_ns(p + 76);
	a->is_present = true;
	return true;
}

static void
fattr3(struct nfs_dec *d, struct th_nfs_attr *a)
{
	const uint8_t *p = nfs_take(d, NFS3_FATTR_SIZE);

	if (p != NULL && !fattr3_load(p, a))
		nfs_bad(d);
}

static void
post_op_attr(struct nfs_dec *d, struct th_nfs_attr *a)
{
	if (nfs_bool(d))
		fattr3(d, a);
}

static void
pre_op_attr(struct nfs_dec *d, struct th_nfs_pre_attr *pre)
{
	const uint8_t *p;

	if (!nfs_bool(d))
		return;
	p = nfs_take(d, NFS3_WCC_ATTR_SIZE);
	if (p == NULL)
		return;
	pre->size = th_be_get64(p);
	pre->mtime_ns = time_ns(p + 8);
	pre->ctime_ns = time_ns(p + 16);
	pre->is_present = true;
}

static void
wcc_data(struct nfs_dec *d, struct th_nfs_pre_attr *pre, struct th_nfs_attr *after)
{
	pre_op_attr(d, pre);
	post_op_attr(d, after);
}

/* A wcc_data whose "before" half is not kept (RENAME's to-directory). */
static void
wcc_after(struct nfs_dec *d, struct th_nfs_attr *after)
{
	if (nfs_bool(d))
		nfs_skip(d, NFS3_WCC_ATTR_SIZE);
	post_op_attr(d, after);
}

static void
post_op_fh3(struct nfs_dec *d, struct th_nfs_fh *fh)
{
	if (nfs_bool(d))
		nfs_fh3(d, fh);
}

static void
set_time(struct nfs_dec *d)
{
	if (nfs_enum(d, SET_TO_CLIENT_TIME) == SET_TO_CLIENT_TIME)
		nfs_skip(d, 8);
}

static void
sattr3(struct nfs_dec *d, struct th_nfs_call *out)
{
	if (nfs_bool(d)) {
		out->set_mode = nfs_u32(d);
		out->has_set_mode = nfs_ok(d);
	}
	if (nfs_bool(d)) /* uid */
		nfs_skip(d, 4);
	if (nfs_bool(d)) /* gid */
		nfs_skip(d, 4);
	if (nfs_bool(d)) {
		out->set_size = nfs_u64(d);
		out->has_set_size = nfs_ok(d);
	}
	set_time(d); /* atime */
	set_time(d); /* mtime */
}

static void
diropargs3(struct nfs_dec *d, struct th_nfs_fh *fh, struct th_nfs_name *name)
{
	nfs_fh3(d, fh);
	nfs_name(d, name);
}

static void
mknoddata3(struct nfs_dec *d, struct th_nfs_call *out)
{
	uint32_t type = nfs_u32(d);

	if (!nfs_ok(d))
		return;
	switch (type) {
	case TH_NFS_CHR:
	case TH_NFS_BLK:
		sattr3(d, out);
		nfs_skip(d, 8); /* specdata3 */
		break;
	case TH_NFS_SOCK:
	case TH_NFS_FIFO:
		sattr3(d, out);
		break;
	case TH_NFS_REG:
	case TH_NFS_DIR:
	case TH_NFS_LNK:
		break;
	default:
		nfs_bad(d);
		break;
	}
}

enum th_nfs_status
th_nfs__v3_call(uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out)
{
	switch (proc) {
	case TH_NFS3_NULL:
		break;
	case TH_NFS3_GETATTR:
	case TH_NFS3_READLINK:
	case TH_NFS3_FSSTAT:
	case TH_NFS3_FSINFO:
	case TH_NFS3_PATHCONF:
		nfs_fh3(d, &out->fh);
		break;
	case TH_NFS3_SETATTR:
		nfs_fh3(d, &out->fh);
		sattr3(d, out);
		if (nfs_bool(d)) /* sattrguard3: obj_ctime */
			nfs_skip(d, 8);
		break;
	case TH_NFS3_LOOKUP:
	case TH_NFS3_REMOVE:
	case TH_NFS3_RMDIR:
		diropargs3(d, &out->fh, &out->name);
		break;
	case TH_NFS3_ACCESS:
		nfs_fh3(d, &out->fh);
		out->access = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_ACCESS);
		break;
	case TH_NFS3_READ:
	case TH_NFS3_COMMIT:
		nfs_fh3(d, &out->fh);
		out->offset = nfs_u64(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET);
		out->count = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		break;
	case TH_NFS3_WRITE:
		nfs_fh3(d, &out->fh);
		out->offset = nfs_u64(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET);
		out->count = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		out->stable = nfs_enum(d, 2);
		nfs_got(d, out, TH_NFS_MISSING_STABLE);
		/* The data length word ends what we need; the data is not kept. */
		nfs_u32(d);
		break;
	case TH_NFS3_CREATE:
		diropargs3(d, &out->fh, &out->name);
		out->stable = nfs_enum(d, CREATE_EXCLUSIVE);
		if (out->stable == CREATE_EXCLUSIVE)
			nfs_skip(d, 8); /* createverf3 */
		else
			sattr3(d, out);
		break;
	case TH_NFS3_MKDIR:
		diropargs3(d, &out->fh, &out->name);
		sattr3(d, out);
		break;
	case TH_NFS3_SYMLINK:
		diropargs3(d, &out->fh, &out->name);
		sattr3(d, out);
		nfs_name(d, &out->name2);
		break;
	case TH_NFS3_MKNOD:
		diropargs3(d, &out->fh, &out->name);
		mknoddata3(d, out);
		break;
	case TH_NFS3_RENAME:
		diropargs3(d, &out->fh, &out->name);
		diropargs3(d, &out->fh2, &out->name2);
		break;
	case TH_NFS3_LINK:
		nfs_fh3(d, &out->fh);
		diropargs3(d, &out->fh2, &out->name);
		break;
	case TH_NFS3_READDIR:
		nfs_fh3(d, &out->fh);
		out->offset = nfs_u64(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET);
		nfs_skip(d, 8); /* cookieverf3 */
		out->count = nfs_u32(d);
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		break;
	case TH_NFS3_READDIRPLUS:
		nfs_fh3(d, &out->fh);
		out->offset = nfs_u64(d);
		nfs_got(d, out, TH_NFS_MISSING_OFFSET);
		nfs_skip(d, 8);          /* cookieverf3 */
		nfs_u32(d);              /* dircount: directory information only */
		out->count = nfs_u32(d); /* maxcount: the reply size bound */
		nfs_got(d, out, TH_NFS_MISSING_COUNT);
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}

/*
 * One entryplus3 after its "value follows" word, read whole: true when it
 * was, with the name and, when name_handle is present, the handle.
 */
static bool
entryplus3(struct nfs_dec *d, struct th_nfs_dirent *e)
{
	uint32_t fh_len = 0;

	e->fileid = nfs_u64(d);
	e->name = nfs_opaque(d, NFS_WIRE_NAME_MAX, &e->name_len);
	nfs_skip(d, 8); /* cookie */
	/* Attributes with an unknown type are left out, not fatal: the walk that skips
	 * them must count the same entries. */
	e->attr.is_present = false;
	if (nfs_bool(d)) {
		const uint8_t *p = nfs_take(d, NFS3_FATTR_SIZE);

		if (p != NULL)
			(void)fattr3_load(p, &e->attr);
	}
	e->fh = NULL;
	if (nfs_bool(d))
		e->fh = nfs_opaque(d, TH_NFS_FH_MAX, &fh_len);
	e->fh_len = (uint8_t)fh_len;
	return nfs_ok(d);
}

/*
 * entry3 / entryplus3 lists: count whole entries, stop where the buffer ends
 * (the count is then partial). READDIRPLUS entries that carry a handle go to
 * the dirent callback as they are read, so a listing is walked once whoever
 * wants its names.
 */
static void
dirlist3(struct nfs_dec *d, struct th_nfs_reply *out, bool is_plus)
{
	struct th_nfs_dirent e;

	while (nfs_bool(d)) {
		if (is_plus && d->dirent != NULL) {
			if (!entryplus3(d, &e))
				return;
			out->count++;
			/* A zero-length handle is no handle; a zero-length name names nothing. */
			if (e.fh != NULL && e.fh_len != 0 && e.name != NULL && e.name_len != 0)
				d->dirent(d->dirent_ctx, &e);
			continue;
		}
		nfs_skip(d, 8); /* fileid */
		nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		nfs_skip(d, 8); /* cookie */
		if (is_plus) {
			if (nfs_bool(d))
				nfs_skip(d, NFS3_FATTR_SIZE);
			if (nfs_bool(d))
				nfs_skip_opaque(d, TH_NFS_FH_MAX);
		}
		if (!nfs_ok(d))
			return;
		out->count++;
	}
	/* The list's end marker read: every entry was counted. */
	if (nfs_ok(d))
		out->is_count_partial = false;
	out->eof = nfs_bool(d);
}

enum th_nfs_status
th_nfs__v3_reply(uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out)
{
	bool is_ok;

	if (proc == TH_NFS3_NULL)
		return TH_NFS_OK;
	if (proc >= TH_NFS3__PROC_COUNT)
		return TH_NFS_UNKNOWN_PROC;
	out->status = nfs_u32(d);
	if (!nfs_ok(d))
		return TH_NFS_SHORT;
	is_ok = out->status == 0;

	switch (proc) {
	case TH_NFS3_GETATTR:
		if (is_ok)
			fattr3(d, &out->attr);
		break;
	case TH_NFS3_SETATTR:
		wcc_data(d, &out->pre, &out->attr);
		break;
	case TH_NFS3_LOOKUP:
		if (is_ok) {
			nfs_fh3(d, &out->fh);
			post_op_attr(d, &out->attr);
		}
		post_op_attr(d, &out->dir_attr);
		break;
	case TH_NFS3_ACCESS:
		post_op_attr(d, &out->attr);
		if (is_ok)
			nfs_u32(d); /* access granted */
		break;
	case TH_NFS3_READLINK:
		post_op_attr(d, &out->attr);
		if (is_ok)
			nfs_skip_opaque(d, NFS_WIRE_NAME_MAX);
		break;
	case TH_NFS3_READ:
		post_op_attr(d, &out->attr);
		if (is_ok) {
			out->count = nfs_u32(d);
			out->eof = nfs_bool(d);
			/* The data length word ends what we need; the data is not kept. */
			nfs_u32(d);
		}
		break;
	case TH_NFS3_WRITE:
		wcc_data(d, &out->pre, &out->attr);
		if (is_ok) {
			out->count = nfs_u32(d);
			out->committed = nfs_enum(d, 2);
			nfs_skip(d, 8); /* writeverf3 */
		}
		break;
	case TH_NFS3_CREATE:
	case TH_NFS3_MKDIR:
	case TH_NFS3_SYMLINK:
	case TH_NFS3_MKNOD:
		if (is_ok) {
			post_op_fh3(d, &out->fh);
			post_op_attr(d, &out->attr);
		}
		wcc_data(d, &out->pre, &out->dir_attr);
		break;
	case TH_NFS3_REMOVE:
	case TH_NFS3_RMDIR:
		wcc_data(d, &out->pre, &out->attr);
		break;
	case TH_NFS3_RENAME:
		wcc_data(d, &out->pre, &out->attr);
		wcc_after(d, &out->dir_attr);
		break;
	case TH_NFS3_LINK:
		post_op_attr(d, &out->attr);
		wcc_data(d, &out->pre, &out->dir_attr);
		break;
	case TH_NFS3_READDIR:
	case TH_NFS3_READDIRPLUS:
		post_op_attr(d, &out->attr);
		if (is_ok) {
			/* Until the list's end is read, the entries counted are only some. */
			out->is_count_partial = true;
			nfs_skip(d, 8); /* cookieverf3 */
			if (nfs_ok(d))
				dirlist3(d, out, proc == TH_NFS3_READDIRPLUS);
		}
		break;
	case TH_NFS3_FSSTAT:
		post_op_attr(d, &out->attr);
		if (is_ok)
			nfs_skip(d, 6 * 8 + 4); /* bytes and files: total, free, avail; invarsec */
		break;
	case TH_NFS3_FSINFO:
		post_op_attr(d, &out->attr);
		if (is_ok)
			nfs_skip(d,
				7 * 4 + 8 + 8 + 4); /* rt/wt/dt sizes, maxfilesize, delta, props */
		break;
	case TH_NFS3_PATHCONF:
		post_op_attr(d, &out->attr);
		if (is_ok)
			nfs_skip(d, 6 * 4); /* linkmax, name_max, four bools */
		break;
	case TH_NFS3_COMMIT:
		wcc_data(d, &out->pre, &out->attr);
		if (is_ok)
			nfs_skip(d, 8); /* writeverf3 */
		break;
	default:
		return TH_NFS_UNKNOWN_PROC;
	}
	return nfs_result(d);
}
