/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * From a decoded RPC (struct th_op) to what inference needs, which table
 * owns it, and the text forms of records and names.
 */

#include "th_session.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "session_private.h"

static const char *const kind_names[] = {
	[TH_SESS_OTHER] = "OTHER",
	[TH_SESS_READ] = "READ",
	[TH_SESS_WRITE] = "WRITE",
	[TH_SESS_COMMIT] = "COMMIT",
	[TH_SESS_GETATTR] = "GETATTR",
	[TH_SESS_SETATTR] = "SETATTR",
	[TH_SESS_ACCESS] = "ACCESS",
	[TH_SESS_LOOKUP] = "LOOKUP",
	[TH_SESS_CREATE] = "CREATE",
	[TH_SESS_MKDIR] = "MKDIR",
	[TH_SESS_SYMLINK] = "SYMLINK",
	[TH_SESS_MKNOD] = "MKNOD",
	[TH_SESS_REMOVE] = "REMOVE",
	[TH_SESS_RMDIR] = "RMDIR",
	[TH_SESS_RENAME] = "RENAME",
	[TH_SESS_LINK] = "LINK",
	[TH_SESS_READDIR] = "READDIR",
	[TH_SESS_READDIRPLUS] = "READDIRPLUS",
	[TH_SESS_MNT] = "MNT",
	[TH_SESS_DIRENT] = "DIRENT",
	[TH_SESS_CLOCK_BACK] = "CLOCK_BACK",
};

const char *
th_sess_kind_name(unsigned int kind)
{
	if (kind >= sizeof(kind_names) / sizeof(kind_names[0]) || kind_names[kind] == NULL)
		return "?";
	return kind_names[kind];
}

static uint8_t
kind_v3(uint32_t proc)
{
	switch (proc) {
	case TH_NFS3_GETATTR:
		return TH_SESS_GETATTR;
	case TH_NFS3_SETATTR:
		return TH_SESS_SETATTR;
	case TH_NFS3_LOOKUP:
		return TH_SESS_LOOKUP;
	case TH_NFS3_ACCESS:
		return TH_SESS_ACCESS;
	case TH_NFS3_READ:
		return TH_SESS_READ;
	case TH_NFS3_WRITE:
		return TH_SESS_WRITE;
	case TH_NFS3_CREATE:
		return TH_SESS_CREATE;
	case TH_NFS3_MKDIR:
		return TH_SESS_MKDIR;
	case TH_NFS3_SYMLINK:
		return TH_SESS_SYMLINK;
	case TH_NFS3_MKNOD:
		return TH_SESS_MKNOD;
	case TH_NFS3_REMOVE:
		return TH_SESS_REMOVE;
	case TH_NFS3_RMDIR:
		return TH_SESS_RMDIR;
	case TH_NFS3_RENAME:
		return TH_SESS_RENAME;
	case TH_NFS3_LINK:
		return TH_SESS_LINK;
	case TH_NFS3_READDIR:
		return TH_SESS_READDIR;
	case TH_NFS3_READDIRPLUS:
		return TH_SESS_READDIRPLUS;
	case TH_NFS3_COMMIT:
		return TH_SESS_COMMIT;
	default:
		return TH_SESS_OTHER;
	}
}

static uint8_t
kind_v2(uint32_t proc)
{
	switch (proc) {
	case TH_NFS2_GETATTR:
		return TH_SESS_GETATTR;
	case TH_NFS2_SETATTR:
		return TH_SESS_SETATTR;
	case TH_NFS2_LOOKUP:
		return TH_SESS_LOOKUP;
	case TH_NFS2_READ:
		return TH_SESS_READ;
	case TH_NFS2_WRITE:
		return TH_SESS_WRITE;
	case TH_NFS2_CREATE:
		return TH_SESS_CREATE;
	case TH_NFS2_REMOVE:
		return TH_SESS_REMOVE;
	case TH_NFS2_RENAME:
		return TH_SESS_RENAME;
	case TH_NFS2_LINK:
		return TH_SESS_LINK;
	case TH_NFS2_SYMLINK:
		return TH_SESS_SYMLINK;
	case TH_NFS2_MKDIR:
		return TH_SESS_MKDIR;
	case TH_NFS2_RMDIR:
		return TH_SESS_RMDIR;
	case TH_NFS2_READDIR:
		return TH_SESS_READDIR;
	default:
		return TH_SESS_OTHER;
	}
}

static void
copy_fh(uint8_t *dst, uint8_t *dst_len, const struct th_nfs_fh *src)
{
	/* th_nfs_fh.len is at most TH_NFS_FH_MAX == TH_SESS_FH_MAX by construction; a longer
	 * one would be a decoder bug, and is passed on so th_sess_input counts it. */
	unsigned int n = src->len <= TH_SESS_FH_MAX ? src->len : TH_SESS_FH_MAX;

	memcpy(dst, src->data, n);
	*dst_len = src->len;
}

static uint16_t
copy_name(char *dst, const struct th_nfs_name *src)
{
	unsigned int n = src->len <= TH_SESS_NAME_MAX ? src->len : TH_SESS_NAME_MAX;

	memcpy(dst, src->s, n);
	dst[n] = '\0';
	return (uint16_t)n;
}

/*
 * What inference makes of a decoded op: its kind, or TH_SESS_OTHER for an op
 * it does not use (not NFS v2/v3 or MOUNT, no call seen, encrypted arguments,
 * an RPC-level failure: the procedure never ran).
 */
static uint8_t
op_kind(const struct th_op *op)
{
	uint8_t kind;

	if (op->kind == TH_OP_REPLY_ONLY || op->call_first_ns == 0 || op->is_opaque)
		return TH_SESS_OTHER;
	if (op->prog == TH_PROG_NFS && op->vers == 3)
		kind = kind_v3(op->proc);
	else if (op->prog == TH_PROG_NFS && op->vers == 2)
		kind = kind_v2(op->proc);
	else if (op->prog == TH_PROG_MOUNT && (op->vers == 1 || op->vers == 3))
		kind = op->proc == TH_MOUNT_MNT ? TH_SESS_MNT : TH_SESS_OTHER;
	else
		return TH_SESS_OTHER;
	if (op->kind == TH_OP_MATCHED && op->reply_first_ns != 0 &&
		(op->reply_stat != 0 || op->accept_stat != 0))
		return TH_SESS_OTHER;
	return kind;
}

bool
th_sess_op_is_used(const struct th_op *op)
{
	return op_kind(op) != TH_SESS_OTHER;
}

/* What every event takes from its op: times, endpoints, credential, kind and version. */
static void
fill_head(const struct th_op *op, uint8_t kind, bool has_reply, struct th_sess_op *out)
{
	out->call_ns = op->call_first_ns;
	out->reply_ns = has_reply ? op->reply_first_ns : 0;
	out->client = op->client;
	out->server = op->server;
	out->uid = op->auth == TH_AUTH_SYS ? op->uid : 0;
	out->gid = op->auth == TH_AUTH_SYS ? op->gid : 0;
	out->kind = kind;
	out->vers = (uint8_t)op->vers;
	out->count = 0;
}

bool
th_sess_op_from_op(const struct th_op *op, struct th_sess_op *out)
{
	uint8_t kind = op_kind(op);
	bool has_reply = op->kind == TH_OP_MATCHED && op->reply_first_ns != 0;

	if (kind == TH_SESS_OTHER)
		return false;
	fill_head(op, kind, has_reply, out);
	out->flags = 0;
	out->offset = op->call.offset;
	out->size = 0;
	out->set_size = 0;
	out->fileid = 0;
	out->mtime_ns = 0;
	out->mode = 0;
	out->fh2_len = 0;
	out->name_len = 0;
	out->name2_len = 0;
	out->name[0] = '\0';
	out->name2[0] = '\0';
	copy_fh(out->fh, &out->fh_len, &op->call.fh);

	if (!has_reply)
		out->flags |= TH_SESS_F_NO_REPLY;
	else if (op->reply.status == 0 && !op->reply.is_status_missing)
		out->flags |= TH_SESS_F_OK;
	if (has_reply && op->reply.eof)
		out->flags |= TH_SESS_F_EOF;
	if (has_reply && op->reply.attr.is_present) {
		out->flags |= TH_SESS_F_HAS_SIZE;
		out->size = op->reply.attr.size;
		out->fileid = op->reply.attr.fileid;
		out->mtime_ns = op->reply.attr.mtime_ns;
		if (op->reply.attr.type == TH_NFS_DIR)
			out->flags |= TH_SESS_F_IS_DIR;
	}
	if (op->call.has_set_mode)
		out->flags |= TH_SESS_F_SET_MODE;
	if (op->call.has_set_size) {
		out->flags |= TH_SESS_F_TRUNCATE;
		out->set_size = op->call.set_size;
	}
	if (kind == TH_SESS_READ || kind == TH_SESS_WRITE) {
		/* Bytes moved: the reply's count. A WRITE whose reply was lost still moved
		 * what the call carried; a lost READ reply moved nothing we can see. */
		if (has_reply)
			out->count = op->reply.count;
		else if (kind == TH_SESS_WRITE)
			out->count = op->call.count;
	} else if (kind == TH_SESS_READDIR || kind == TH_SESS_READDIRPLUS) {
		out->count = has_reply ? op->reply.count : 0;
	}
	if (kind == TH_SESS_MKDIR)
		out->flags |= TH_SESS_F_IS_DIR;

	switch (kind) {
	case TH_SESS_LOOKUP:
	case TH_SESS_CREATE:
	case TH_SESS_MKDIR:
	case TH_SESS_SYMLINK:
	case TH_SESS_MKNOD:
	case TH_SESS_MNT:
		if (has_reply) {
			copy_fh(out->fh2, &out->fh2_len, &op->reply.fh);
			out->mode = th_nfs_st_mode(&op->reply.attr);
		}
		break;
	case TH_SESS_RENAME:
		copy_fh(out->fh2, &out->fh2_len, &op->call.fh2);
		break;
	case TH_SESS_LINK:
		copy_fh(out->fh2, &out->fh2_len, &op->call.fh2);
		if (has_reply)
			out->mode = th_nfs_st_mode(&op->reply.attr); /* the linked file's */
		break;
	default:
		break;
	}
	switch (kind) {
	case TH_SESS_LOOKUP:
	case TH_SESS_CREATE:
	case TH_SESS_MKDIR:
	case TH_SESS_SYMLINK:
	case TH_SESS_MKNOD:
	case TH_SESS_REMOVE:
	case TH_SESS_RMDIR:
	case TH_SESS_LINK:
	case TH_SESS_MNT:
		out->name_len = copy_name(out->name, &op->call.name);
		break;
	case TH_SESS_RENAME:
		out->name_len = copy_name(out->name, &op->call.name);
		out->name2_len = copy_name(out->name2, &op->call.name2);
		break;
	default:
		break;
	}
	return true;
}

bool
th_sess_op_from_dirent(
	const struct th_op *op, const struct th_nfs_dirent *e, struct th_sess_op *out)
{
	unsigned int n = e->name_len <= TH_SESS_NAME_MAX ? e->name_len : TH_SESS_NAME_MAX;

	if (op_kind(op) != TH_SESS_READDIRPLUS || op->kind != TH_OP_MATCHED ||
		op->reply.status != 0 || op->reply.is_status_missing)
		return false;
	if (op->call.fh.len == 0 || op->call.fh.len > TH_SESS_FH_MAX || e->fh_len == 0 ||
		e->fh_len > TH_SESS_FH_MAX || !is_component(e->name, e->name_len))
		return false;
	fill_head(op, TH_SESS_DIRENT, true, out);
	out->flags = TH_SESS_F_OK;
	out->fh_len = op->call.fh.len;
	memcpy(out->fh, op->call.fh.data, out->fh_len);
	out->fh2_len = e->fh_len;
	memcpy(out->fh2, e->fh, e->fh_len);
	out->name_len = (uint16_t)n;
	memcpy(out->name, e->name, n);
	out->name[n] = '\0';
	out->name2_len = 0;
	out->mode = th_nfs_st_mode(&e->attr);
	return true;
}

unsigned int
th_sess_fh_owner(
	const struct th_addr *server, const uint8_t *fh, unsigned int fh_len, unsigned int n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (n <= 1)
		return 0;
	if (fh_len > TH_SESS_FH_MAX)
		fh_len = TH_SESS_FH_MAX;
	/* In memory only, like every session hash: the lcores of one process agree, which is
	 * all owner choice needs. */
	h = th_sat_hash_step(h, server->b, sizeof(server->b));
	h = th_sat_hash_step(h, fh, fh_len);
	h ^= h >> 29;
	return (unsigned int)(h % n);
}

unsigned int
th_sess_op_owner(const struct th_sess_op *op, unsigned int n)
{
	return th_sess_fh_owner(&op->server, op->fh, op->fh_len, n);
}

bool
th_sess_op_is_broadcast(const struct th_sess_op *op)
{
	switch (op->kind) {
	case TH_SESS_READDIR:
	case TH_SESS_READDIRPLUS:
	case TH_SESS_LOOKUP:
	case TH_SESS_CREATE:
	case TH_SESS_MKDIR:
		return true;
	default:
		return false;
	}
}

static int
hex(char *buf, size_t size, const uint8_t *b, unsigned int n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (n > TH_SESS_FH_MAX)
		n = TH_SESS_FH_MAX;
	for (i = 0; i < n && 2 * i + 2 < size; i++) {
		buf[2 * i] = digits[b[i] >> 4];
		buf[2 * i + 1] = digits[b[i] & 15];
	}
	if (size > 0)
		buf[2 * i < size ? 2 * i : size - 1] = '\0';
	return (int)(2 * n);
}

int
th_sess_record_format(const struct th_sess_record *r, char *buf, size_t size)
{
	char server[64], client[64], fh[2 * TH_SESS_FH_MAX + 1];
	uint64_t cmd_ns = r->close_ns > r->open_ns ? r->close_ns - r->open_ns : 0;

	/* An IPv6 server goes in brackets: its colons would run into the handle's. */
	if (th_addr_is_v4(&r->server)) {
		th_addr_format(&r->server, server, sizeof(server));
	} else {
		server[0] = '[';
		th_addr_format(&r->server, server + 1, sizeof(server) - 2);
		strcat(server, "]");
	}
	th_addr_format(&r->client, client, sizeof(client));
	hex(fh, sizeof(fh), r->fh, r->fh_len);
	return snprintf(buf, size,
		"%" PRIu64 ".%06" PRIu64 " | %" PRIu64 " | %s | %s:%s | %s.%" PRIu32 " | %" PRIu64
		" | %" PRIu64 "\n",
		r->open_ns / 1000000000u, r->open_ns % 1000000000u / 1000u, cmd_ns / 1000u,
		r->dir == TH_SESS_DIR_WRITE ? "write" : "read", server, fh, client, r->uid,
		r->transferred, r->size);
}

int
th_sess_name_format(const struct th_sess_name *n, char *buf, size_t size)
{
	char server[64], dir[2 * TH_SESS_FH_MAX + 1], fh[2 * TH_SESS_FH_MAX + 1];
	char name[TH_NFS_NAME_TEXT(TH_SESS_NAME_MAX)], to[32], mode[TH_NFS_MODE_TEXT];

	th_addr_format(&n->server, server, sizeof(server));
	hex(dir, sizeof(dir), n->dir_fh, n->dir_fh_len);
	hex(fh, sizeof(fh), n->fh, n->fh_len);
	th_nfs_name_text(
		n->name, n->name_len <= TH_SESS_NAME_MAX ? n->name_len : 0, name, sizeof(name));
	if (n->to_ns != 0)
		snprintf(to, sizeof(to), "%" PRIu64 ".%06" PRIu64, n->to_ns / 1000000000u,
			n->to_ns % 1000000000u / 1000u);
	else
		snprintf(to, sizeof(to), "-");
	th_nfs_mode_text(n->mode, mode);
	return snprintf(buf, size, "%s | %s | %s | %s | %" PRIu64 ".%06" PRIu64 " | %s | %s\n",
		server, dir[0] ? dir : "-", name, fh, n->from_ns / 1000000000u,
		n->from_ns % 1000000000u / 1000u, to, mode);
}
