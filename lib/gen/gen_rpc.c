/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * XDR writer and the encoders of calls and replies (RFC 5531 RPC, RFC 1813
 * NFSv3 and MOUNT v3, RFC 1833 portmap). Everything a decoder reports comes
 * from the th_op; what it does not keep (READDIR(PLUS) entries, the ACCESS
 * mask granted, verifiers, FSINFO limits) comes from the gen_rpc around it.
 */

#include "gen_private.h"

#include <string.h>

#include "th_bytes.h"

/* ---- XDR ---- */

void
gen_xdr_init(struct gen_xdr *x, uint8_t *buf, size_t size)
{
	x->start = buf;
	x->p = buf;
	x->end = buf + size;
	x->is_full = false;
}

static bool
room(struct gen_xdr *x, size_t size)
{
	if (x->is_full || (size_t)(x->end - x->p) < size) {
		x->is_full = true;
		return false;
	}
	return true;
}

void
gen_xdr_u32(struct gen_xdr *x, uint32_t v)
{
	if (!room(x, 4))
		return;
	th_be_put32(x->p, v);
	x->p += 4;
}

void
gen_xdr_u64(struct gen_xdr *x, uint64_t v)
{
	gen_xdr_u32(x, (uint32_t)(v >> 32));
	gen_xdr_u32(x, (uint32_t)v);
}

void
gen_xdr_bool(struct gen_xdr *x, bool v)
{
	gen_xdr_u32(x, v ? 1 : 0);
}

void
gen_xdr_fixed(struct gen_xdr *x, const void *data, size_t size)
{
	size_t pad = (4 - (size & 3)) & 3;

	if (!room(x, size + pad))
		return;
	memcpy(x->p, data, size);
	memset(x->p + size, 0, pad);
	x->p += size + pad;
}

void
gen_xdr_opaque(struct gen_xdr *x, const void *data, size_t size)
{
	gen_xdr_u32(x, (uint32_t)size);
	gen_xdr_fixed(x, data, size);
}

void
gen_xdr_filler(struct gen_xdr *x, size_t size)
{
	size_t pad = (4 - (size & 3)) & 3, i;

	gen_xdr_u32(x, (uint32_t)size);
	if (!room(x, size + pad))
		return;
	/* Not all zeros, so a decoder that wrongly parses payload as headers shows it. */
	for (i = 0; i < size; i++)
		x->p[i] = (uint8_t)(i * 7 + 0x41);
	memset(x->p + size, 0, pad);
	x->p += size + pad;
}

/* ---- NFSv3 pieces ---- */

static void
put_time(struct gen_xdr *x, uint64_t ns)
{
	gen_xdr_u32(x, (uint32_t)(ns / 1000000000u));
	gen_xdr_u32(x, (uint32_t)(ns % 1000000000u));
}

static void
put_fh(struct gen_xdr *x, const struct th_nfs_fh *fh)
{
	gen_xdr_opaque(x, fh->data, fh->len);
}

static void
put_name(struct gen_xdr *x, const struct th_nfs_name *n)
{
	gen_xdr_opaque(x, n->s, n->len);
}

static void
put_fattr(struct gen_xdr *x, const struct th_nfs_attr *a, uint64_t fsid)
{
	gen_xdr_u32(x, a->type);
	gen_xdr_u32(x, a->mode);
	gen_xdr_u32(x, a->nlink);
	gen_xdr_u32(x, a->uid);
	gen_xdr_u32(x, a->gid);
	gen_xdr_u64(x, a->size);
	gen_xdr_u64(x, (a->size + 4095) & ~(uint64_t)4095); /* used */
	gen_xdr_u32(x, 0);                                  /* rdev */
	gen_xdr_u32(x, 0);
	gen_xdr_u64(x, fsid);
	gen_xdr_u64(x, a->fileid);
	put_time(x, a->mtime_ns); /* atime: the model does not track reads */
	put_time(x, a->mtime_ns);
	put_time(x, a->ctime_ns);
}

static void
put_post_attr(struct gen_xdr *x, const struct th_nfs_attr *a, uint64_t fsid)
{
	gen_xdr_bool(x, a->is_present);
	if (a->is_present)
		put_fattr(x, a, fsid);
}

static void
put_pre_attr(struct gen_xdr *x, const struct th_nfs_pre_attr *p)
{
	gen_xdr_bool(x, p->is_present);
	if (p->is_present) {
		gen_xdr_u64(x, p->size);
		put_time(x, p->mtime_ns);
		put_time(x, p->ctime_ns);
	}
}

static void
put_wcc(struct gen_xdr *x, const struct th_nfs_pre_attr *pre, const struct th_nfs_attr *post,
	uint64_t fsid)
{
	put_pre_attr(x, pre);
	put_post_attr(x, post, fsid);
}

static void
put_sattr(struct gen_xdr *x, const struct gen_rpc *rpc)
{
	const struct th_nfs_call *c = &rpc->op.call;

	gen_xdr_bool(x, c->has_set_mode);
	if (c->has_set_mode)
		gen_xdr_u32(x, c->set_mode);
	gen_xdr_bool(x, false); /* uid */
	gen_xdr_bool(x, false); /* gid */
	gen_xdr_bool(x, c->has_set_size);
	if (c->has_set_size)
		gen_xdr_u64(x, c->set_size);
	/* touch: both times SET_TO_SERVER_TIME (1), as Linux sends for utimensat(NULL). */
	gen_xdr_u32(x, rpc->is_set_times ? 1 : 0); /* atime */
	gen_xdr_u32(x, rpc->is_set_times ? 1 : 0); /* mtime */
}

static uint64_t
rpc_fsid(const struct gen_rpc *rpc)
{
	return rpc->exp != NULL ? rpc->exp->fsid : 0;
}

static void
put_nfs3_args(struct gen_xdr *x, const struct gen_rpc *rpc)
{
	const struct th_nfs_call *c = &rpc->op.call;
	static const uint8_t zero8[8];

	switch (rpc->op.proc) {
	case TH_NFS3_NULL:
		break;
	case TH_NFS3_GETATTR:
	case TH_NFS3_FSINFO:
		put_fh(x, &c->fh);
		break;
	case TH_NFS3_SETATTR:
		put_fh(x, &c->fh);
		put_sattr(x, rpc);
		gen_xdr_bool(x, false); /* guard */
		break;
	case TH_NFS3_LOOKUP:
	case TH_NFS3_REMOVE:
		put_fh(x, &c->fh);
		put_name(x, &c->name);
		break;
	case TH_NFS3_ACCESS:
		put_fh(x, &c->fh);
		gen_xdr_u32(x, c->access);
		break;
	case TH_NFS3_READ:
		put_fh(x, &c->fh);
		gen_xdr_u64(x, c->offset);
		gen_xdr_u32(x, c->count);
		break;
	case TH_NFS3_WRITE:
		put_fh(x, &c->fh);
		gen_xdr_u64(x, c->offset);
		gen_xdr_u32(x, c->count);
		gen_xdr_u32(x, c->stable);
		gen_xdr_filler(x, c->count);
		break;
	case TH_NFS3_CREATE:
		put_fh(x, &c->fh);
		put_name(x, &c->name);
		gen_xdr_u32(x, c->stable); /* createmode: UNCHECKED or GUARDED */
		put_sattr(x, rpc);
		break;
	case TH_NFS3_MKDIR:
		put_fh(x, &c->fh);
		put_name(x, &c->name);
		put_sattr(x, rpc);
		break;
	case TH_NFS3_RENAME:
		put_fh(x, &c->fh);
		put_name(x, &c->name);
		put_fh(x, &c->fh2);
		put_name(x, &c->name2);
		break;
	case TH_NFS3_READDIR:
		put_fh(x, &c->fh);
		gen_xdr_u64(x, c->offset);
		gen_xdr_fixed(x, zero8, 8); /* cookieverf */
		gen_xdr_u32(x, c->count);
		break;
	case TH_NFS3_READDIRPLUS:
		put_fh(x, &c->fh);
		gen_xdr_u64(x, c->offset);
		gen_xdr_fixed(x, zero8, 8);   /* cookieverf */
		gen_xdr_u32(x, c->count / 4); /* dircount */
		gen_xdr_u32(x, c->count);     /* maxcount */
		break;
	case TH_NFS3_COMMIT:
		put_fh(x, &c->fh);
		gen_xdr_u64(x, c->offset);
		gen_xdr_u32(x, c->count);
		break;
	default:
		x->is_full = true; /* a procedure the model never makes */
		break;
	}
}

static void
put_nfs3_results(struct gen_xdr *x, const struct gen_rpc *rpc)
{
	const struct th_nfs_reply *r = &rpc->op.reply;
	const struct th_nfs_call *c = &rpc->op.call;
	uint64_t fsid = rpc_fsid(rpc);
	bool is_ok = r->status == 0;
	uint8_t verf[8];
	uint32_t i;

	memcpy(verf, &rpc->verf, sizeof(verf));
	if (rpc->op.proc == TH_NFS3_NULL)
		return;
	gen_xdr_u32(x, r->status);
	switch (rpc->op.proc) {
	case TH_NFS3_GETATTR:
		if (is_ok)
			put_fattr(x, &r->attr, fsid);
		break;
	case TH_NFS3_SETATTR:
	case TH_NFS3_REMOVE:
		put_wcc(x, &r->pre, &r->attr, fsid);
		break;
	case TH_NFS3_LOOKUP:
		if (is_ok) {
			put_fh(x, &r->fh);
			put_post_attr(x, &r->attr, fsid);
		}
		put_post_attr(x, &r->dir_attr, fsid);
		break;
	case TH_NFS3_ACCESS:
		put_post_attr(x, &r->attr, fsid);
		if (is_ok)
			gen_xdr_u32(x, rpc->access_granted);
		break;
	case TH_NFS3_READ:
		put_post_attr(x, &r->attr, fsid);
		if (is_ok) {
			gen_xdr_u32(x, r->count);
			gen_xdr_bool(x, r->eof);
			gen_xdr_filler(x, r->count);
		}
		break;
	case TH_NFS3_WRITE:
		put_wcc(x, &r->pre, &r->attr, fsid);
		if (is_ok) {
			gen_xdr_u32(x, r->count);
			gen_xdr_u32(x, r->committed);
			gen_xdr_fixed(x, verf, 8);
		}
		break;
	case TH_NFS3_CREATE:
	case TH_NFS3_MKDIR:
		/* The object's handle and attributes, then the directory's wcc. */
		if (is_ok) {
			gen_xdr_bool(x, true);
			put_fh(x, &r->fh);
			put_post_attr(x, &r->attr, fsid);
		}
		put_wcc(x, &r->pre, &r->dir_attr, fsid);
		break;
	case TH_NFS3_RENAME:
		put_wcc(x, &r->pre, &r->attr, fsid);
		/* To-directory: same directory in this model, or another one. */
		put_wcc(x, &(struct th_nfs_pre_attr){0}, &r->dir_attr, fsid);
		break;
	case TH_NFS3_READDIR:
		put_post_attr(x, &r->attr, fsid);
		if (!is_ok)
			break;
		gen_xdr_fixed(x, (const uint8_t[8]){0}, 8); /* cookieverf */
		for (i = 0; i < rpc->n_entries; i++) {
			const struct gen_node *d = &rpc->exp->nodes[rpc->dir];
			const struct gen_node *n =
				&rpc->exp->nodes[d->children[rpc->dir_cookie_base + i]];

			/* entry3: no attributes, no handle. */
			gen_xdr_bool(x, true);
			gen_xdr_u64(x, n->fileid);
			gen_xdr_opaque(x, n->name, n->name_len);
			gen_xdr_u64(x, (uint64_t)rpc->dir_cookie_base + i + 1);
		}
		gen_xdr_bool(x, false);
		gen_xdr_bool(x, r->eof);
		break;
	case TH_NFS3_READDIRPLUS:
		put_post_attr(x, &r->attr, fsid);
		if (!is_ok)
			break;
		gen_xdr_fixed(x, (const uint8_t[8]){0}, 8); /* cookieverf */
		for (i = 0; i < rpc->n_entries; i++) {
			const struct gen_node *n = &rpc->exp->nodes[rpc->entries[i]];
			struct th_nfs_attr a;
			struct th_nfs_fh fh;

			gen_model_attr(n, &a);
			gen_model_fh(rpc->exp, rpc->entries[i], &fh);
			gen_xdr_bool(x, true);
			gen_xdr_u64(x, n->fileid);
			gen_xdr_opaque(x, n->name, n->name_len);
			gen_xdr_u64(x, (uint64_t)rpc->dir_cookie_base + i + 1);
			put_post_attr(x, &a, fsid);
			gen_xdr_bool(x, true);
			put_fh(x, &fh);
		}
		gen_xdr_bool(x, false);
		gen_xdr_bool(x, r->eof);
		break;
	case TH_NFS3_COMMIT:
		put_wcc(x, &r->pre, &r->attr, fsid);
		if (is_ok)
			gen_xdr_fixed(x, verf, 8);
		break;
	case TH_NFS3_FSINFO:
		put_post_attr(x, &r->attr, fsid);
		if (is_ok) {
			gen_xdr_u32(x, 1048576); /* rtmax */
			gen_xdr_u32(x, 1048576); /* rtpref */
			gen_xdr_u32(x, 4096);    /* rtmult */
			gen_xdr_u32(x, 1048576); /* wtmax */
			gen_xdr_u32(x, 1048576); /* wtpref */
			gen_xdr_u32(x, 4096);    /* wtmult */
			gen_xdr_u32(x, 65536);   /* dtpref */
			gen_xdr_u64(x, UINT64_MAX >> 1);
			gen_xdr_u32(x, 0); /* time_delta */
			gen_xdr_u32(x, 1);
			gen_xdr_u32(x, 0x1b); /* LINK, SYMLINK, HOMOGENEOUS, CANSETTIME */
		}
		break;
	default:
		x->is_full = true;
		break;
	}
	(void)c;
}

static void
put_call_header(struct gen_xdr *x, const struct th_op *op)
{
	gen_xdr_u32(x, op->xid);
	gen_xdr_u32(x, 0); /* CALL */
	gen_xdr_u32(x, 2); /* RPC version */
	gen_xdr_u32(x, op->prog);
	gen_xdr_u32(x, op->vers);
	gen_xdr_u32(x, op->proc);
	gen_xdr_u32(x, op->auth);
	if (op->auth == TH_AUTH_SYS) {
		size_t mlen = strlen(op->machine);
		uint32_t body = (uint32_t)(4 + 4 + ((mlen + 3) & ~(size_t)3) + 4 + 4 + 4 + 4);

		gen_xdr_u32(x, body);
		gen_xdr_u32(x, 0x5e1f0000u ^ op->xid); /* stamp */
		gen_xdr_opaque(x, op->machine, mlen);
		gen_xdr_u32(x, op->uid);
		gen_xdr_u32(x, op->gid);
		gen_xdr_u32(x, 1); /* one supplementary gid: the primary */
		gen_xdr_u32(x, op->gid);
	} else {
		gen_xdr_u32(x, 0);
	}
	gen_xdr_u32(x, TH_AUTH_NONE); /* verifier */
	gen_xdr_u32(x, 0);
}

size_t
gen_rpc_encode_call(const struct gen_rpc *rpc, uint8_t *buf, size_t size)
{
	const struct th_op *op = &rpc->op;
	struct gen_xdr x;

	gen_xdr_init(&x, buf, size);
	put_call_header(&x, op);
	switch (op->prog) {
	case TH_PROG_NFS:
		put_nfs3_args(&x, rpc);
		break;
	case TH_PROG_MOUNT:
		if (op->proc == TH_MOUNT_MNT)
			put_name(&x, &op->call.name);
		break;
	case TH_PROG_PORTMAP:
		if (op->proc == TH_PMAP_GETPORT) {
			gen_xdr_u32(&x, op->call.pmap_prog);
			gen_xdr_u32(&x, op->call.pmap_vers);
			gen_xdr_u32(&x, op->call.pmap_prot);
			gen_xdr_u32(&x, 0);
		}
		break;
	default:
		x.is_full = true;
		break;
	}
	return x.is_full ? 0 : gen_xdr_size(&x);
}

size_t
gen_rpc_encode_reply(const struct gen_rpc *rpc, uint8_t *buf, size_t size)
{
	const struct th_op *op = &rpc->op;
	struct gen_xdr x;

	gen_xdr_init(&x, buf, size);
	gen_xdr_u32(&x, op->xid);
	gen_xdr_u32(&x, 1);              /* REPLY */
	gen_xdr_u32(&x, op->reply_stat); /* MSG_ACCEPTED */
	gen_xdr_u32(&x, TH_AUTH_NONE);   /* verifier */
	gen_xdr_u32(&x, 0);
	gen_xdr_u32(&x, op->accept_stat); /* SUCCESS */
	switch (op->prog) {
	case TH_PROG_NFS:
		put_nfs3_results(&x, rpc);
		break;
	case TH_PROG_MOUNT:
		if (op->proc == TH_MOUNT_MNT) {
			gen_xdr_u32(&x, op->reply.status);
			if (op->reply.status == 0) {
				put_fh(&x, &op->reply.fh);
				gen_xdr_u32(&x, 1); /* auth flavors: AUTH_SYS */
				gen_xdr_u32(&x, TH_AUTH_SYS);
			}
		}
		break;
	case TH_PROG_PORTMAP:
		if (op->proc == TH_PMAP_GETPORT)
			gen_xdr_u32(&x, op->reply.port);
		break;
	default:
		x.is_full = true;
		break;
	}
	return x.is_full ? 0 : gen_xdr_size(&x);
}
