/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NFS_PRIVATE_H
#define NFS_PRIVATE_H

/*
 * Shared pieces of the procedure decoders: a decoding cursor that remembers
 * "malformed" next to the XDR cursor's "short", and readers for the types
 * several programs use (handles, names, booleans).
 *
 * Decoders are written straight-line: every reader returns zero once the
 * cursor is short or malformed, and the outcome is checked once at the end
 * with nfs_result(). A malformed value moves the cursor to its end, so the
 * rest of a decoder runs through without touching the buffer again.
 */

#include <string.h>

#include "th_bytes.h"
#include "th_nfs.h"
#include "th_xdr.h"

/*
 * Bound on names and paths on the wire. Protocols allow 255 (component) to
 * 1024 (path); servers accept longer ones, so be lenient up to a page and
 * call anything beyond that garbage.
 */
#define NFS_WIRE_NAME_MAX 4096

/* Fixed XDR sizes of the attribute structures skipped or read in one go. */
#define NFS3_FATTR_SIZE 84
#define NFS3_WCC_ATTR_SIZE 24
#define NFS2_FH_SIZE 32
#define NFS2_FATTR_SIZE 68

struct nfs_dec {
	struct th_xdr x;         /**< the cursor over the procedure body */
	bool is_bad;             /**< a value was out of range: the body is malformed */
	th_nfs_dirent_cb dirent; /**< READDIRPLUS entries with a handle go here, or NULL */
	void *dirent_ctx;        /**< for dirent */
};

static inline void
nfs_dec_init(struct nfs_dec *d, const uint8_t *body, size_t size)
{
	static const uint8_t empty[1];

	/* An empty body may come as NULL; pointer arithmetic on NULL is undefined. */
	if (body == NULL) {
		body = empty;
		size = 0;
	}
	th_xdr_init(&d->x, body, size);
	d->is_bad = false;
	d->dirent = NULL;
	d->dirent_ctx = NULL;
}

/* Mark the body malformed and stop every later read. */
static inline void
nfs_bad(struct nfs_dec *d)
{
	d->is_bad = true;
	d->x.p = d->x.end;
}

static inline bool
nfs_ok(const struct nfs_dec *d)
{
	return !d->is_bad && !d->x.is_short;
}

static inline enum th_nfs_status
nfs_result(const struct nfs_dec *d)
{
	if (d->is_bad)
		return TH_NFS_MALFORMED;
	return d->x.is_short ? TH_NFS_SHORT : TH_NFS_OK;
}

/* nlink, uid and gid, which fattr (NFSv2) and fattr3 both hold at bytes 8, 12 and 16. */
static inline void
nfs_attr_ids(struct th_nfs_attr *a, const uint8_t *fattr)
{
	a->nlink = th_be_get32(fattr + 8);
	a->uid = th_be_get32(fattr + 12);
	a->gid = th_be_get32(fattr + 16);
}

/*
 * Reserve @p size bytes: returns where they start, or NULL (cursor short)
 * when the buffer does not hold them all.
 */
static inline const uint8_t *
nfs_take(struct nfs_dec *d, size_t size)
{
	const uint8_t *p = d->x.p;

	if (th_xdr_left(&d->x) < size) {
		d->x.is_short = true;
		d->x.p = d->x.end;
		return NULL;
	}
	d->x.p += size;
	return p;
}

/* The field just read arrived whole: it is no longer missing. */
static inline void
nfs_got(const struct nfs_dec *d, struct th_nfs_call *out, uint8_t bit)
{
	if (th_xdr_ok(&d->x))
		out->missing &= (uint8_t)~bit;
}

static inline uint32_t
nfs_u32(struct nfs_dec *d)
{
	uint32_t v = 0;

	th_xdr_u32(&d->x, &v);
	return v;
}

static inline uint64_t
nfs_u64(struct nfs_dec *d)
{
	uint64_t v = 0;

	th_xdr_u64(&d->x, &v);
	return v;
}

static inline void
nfs_skip(struct nfs_dec *d, size_t size)
{
	th_xdr_skip(&d->x, size);
}

/* An XDR bool (or a "value follows" marker): anything but 0 or 1 is malformed. */
static inline bool
nfs_bool(struct nfs_dec *d)
{
	uint32_t v = nfs_u32(d);

	if (v > 1) {
		nfs_bad(d);
		return false;
	}
	return v == 1;
}

/* An enum whose values run from 0 to @p max. */
static inline uint32_t
nfs_enum(struct nfs_dec *d, uint32_t max)
{
	uint32_t v = nfs_u32(d);

	if (v > max) {
		nfs_bad(d);
		return 0;
	}
	return v;
}

/*
 * Variable-length opaque or string: returns the bytes in the buffer (NULL
 * when short or longer than @p max, which is malformed) and the length.
 */
static inline const uint8_t *
nfs_opaque(struct nfs_dec *d, uint32_t max, uint32_t *len)
{
	const uint8_t *data = NULL;

	*len = 0;
	if (th_xdr_opaque(&d->x, max, &data, len))
		return data;
	if (*len == UINT32_MAX)
		nfs_bad(d);
	*len = 0;
	return NULL;
}

static inline void
nfs_skip_opaque(struct nfs_dec *d, uint32_t max)
{
	uint32_t len;

	nfs_opaque(d, max, &len);
}

/* A name or path, copied once, straight from the buffer, cut at TH_NFS_NAME_MAX. */
static inline void
nfs_name(struct nfs_dec *d, struct th_nfs_name *name)
{
	uint32_t len;
	const uint8_t *s = nfs_opaque(d, NFS_WIRE_NAME_MAX, &len);

	if (s == NULL)
		return;
	name->is_cut = len > TH_NFS_NAME_MAX;
	if (name->is_cut)
		len = TH_NFS_NAME_MAX;
	memcpy(name->s, s, len);
	name->s[len] = '\0';
	name->len = (uint16_t)len;
	name->is_present = true;
}

/* nfs_fh3 / fhandle3: opaque<64>. */
static inline void
nfs_fh3(struct nfs_dec *d, struct th_nfs_fh *fh)
{
	uint32_t len;
	const uint8_t *p = nfs_opaque(d, TH_NFS_FH_MAX, &len);

	if (p == NULL)
		return;
	memcpy(fh->data, p, len);
	fh->len = (uint8_t)len;
}

/* NFSv2 fhandle / MOUNT v1 fhandle: 32 opaque bytes, no length word. */
static inline void
nfs_fh2(struct nfs_dec *d, struct th_nfs_fh *fh)
{
	const uint8_t *p = nfs_take(d, NFS2_FH_SIZE);

	if (p == NULL)
		return;
	memcpy(fh->data, p, NFS2_FH_SIZE);
	fh->len = NFS2_FH_SIZE;
}

/* Per-program decoders; @p proc was checked against the version's table. */
enum th_nfs_status th_nfs__v3_call(uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out);
enum th_nfs_status th_nfs__v3_reply(uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out);
enum th_nfs_status th_nfs__v2_call(uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out);
enum th_nfs_status th_nfs__v2_reply(uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out);
enum th_nfs_status th_nfs__v4_call(uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out);
enum th_nfs_status th_nfs__v4_reply(uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out);
enum th_nfs_status th_nfs__mount_call(
	uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out);
enum th_nfs_status th_nfs__mount_reply(
	uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out);
enum th_nfs_status th_nfs__pmap_call(
	uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_call *out);
enum th_nfs_status th_nfs__pmap_reply(
	uint32_t vers, uint32_t proc, struct nfs_dec *d, struct th_nfs_reply *out);

#endif /* NFS_PRIVATE_H */
