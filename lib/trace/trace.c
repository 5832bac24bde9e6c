/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trace record encoding, one record on its own (the layout of record format
 * version 2). Segments store records chunk-coded since version 3 (chunk.c,
 * a third fewer bytes on disk); this layout stays for a record that travels
 * alone and as the reference the chunk coding is measured against. Every field is written byte by byte in
 * little-endian order, so the layout is the same on every machine and never
 * depends on struct padding. Version 1 stored every field at a fixed offset
 * (124 bytes for a typical open); LZ4 then spent most of the writer's time
 * on those bytes and still left 50 bytes a record on disk. Version 2 stores
 * what a value needs:
 *
 * - an address is 4 bytes when it is IPv4-mapped (a shape or form bit
 *   says so), 16 otherwise;
 * - counts, sizes, ids and durations are unsigned LEB128 varints (7 bits a
 *   byte, low group first, at most 10 bytes for 64 bits);
 * - a record's own start time is an absolute u64, and its other times are
 *   varint deltas from it (mod 2^64, so any pair of values round-trips).
 *   Nothing refers to another record: each one decodes on its own, which the
 *   segment reader needs to recover a prefix after damage.
 *
 * Every value has exactly one spelling: a varint with a superfluous high
 * zero group, a 16-byte address that is IPv4-mapped, an unknown form bit or
 * a value a form bit says is implied all decode as -EBADMSG. The fuzzer
 * checks that decode then encode gives back the same bytes.
 *
 * Header (4 bytes): u16 type, u16 length of the body that follows.
 *
 * OPEN (1) body:
 *   vers u8, fh_len u8, fh_tail u8 (trailing zero bytes of the handle, not
 *   stored; the stored part ends in a non-zero byte), shape u8 (OS_*),
 *   server 4|16, client 4|16, form u8 (OF_*: dir, implied values, flags
 *   0-3), flags u8 (only with OF_FLAGS_BYTE), close_ns - open_ns varint,
 *   uid varint, gid varint, ops varint, transferred varint (absent with
 *   OF_XFER_IS_SIZE: equals size), seq_bytes varint (absent with
 *   OF_SEQ_IS_XFER: equals transferred), open_ns u64,
 *   fh[fh_len - fh_tail], size varint
 *
 *   The order is for LZ4: the fields that repeat from record to record
 *   (header, version, handle length, addresses) run together into one match,
 *   and the handle sits next to the size, which belongs to the same file, so
 *   a file seen recently in the window is one match too. Measured with
 *   bench_segment (32-byte handles, LZ4 level 0): 39.2 bytes a record on
 *   disk in struct order, 36.8 in this order, 35.9 with the zero tail of the
 *   handle elided and the changing form bits apart from the shape.
 *
 * NAME (2) body:
 *   form u8 (NF_*), fh_len u8, dir_fh_len u8, name_len u8, from_ns u64,
 *   server 4|16, to_ns - from_ns varint (absent with NF_OPEN_ENDED, which
 *   means to_ns 0), fh[fh_len], dir_fh[dir_fh_len], name[name_len]
 *
 * RPC (3) body:
 *   form u8 (RF_*), flags u8, fh_len u8, time: call_ns u64 then
 *   reply_ns - call_ns varint (RF_CALL and RF_REPLY), call_ns u64 (RF_CALL
 *   only), reply_ns u64 (RF_REPLY only), nothing (neither; both 0),
 *   client 4|16, server 4|16, client_port u16, server_port u16, xid u32,
 *   prog varint, vers varint, proc varint, status varint, uid varint,
 *   gid varint, offset varint, count varint, done varint, size varint,
 *   fh[fh_len]
 *
 * Typical size: the benchmark's IPv4 opens with 32-byte handles average 61
 * bytes with their header (124 in version 1).
 */

#include "th_trace.h"

#include <errno.h>
#include <string.h>

#include "trace_private.h"

#define HDR_SIZE 4

/*
 * OPEN shape bits: the address sizes, which hardly change from record to
 * record, kept apart from the form bits, which do, so that LZ4 sees the
 * header, shape and addresses as one repeated run.
 */
enum {
	OS_SERVER_V4 = 1 << 0, /* server stored as 4 bytes */
	OS_CLIENT_V4 = 1 << 1, /* client stored as 4 bytes */
	OS_ALL = (1 << 2) - 1,
};

/* OPEN form bits. */
enum {
	OF_DIR_WRITE = 1 << 0,    /* dir is 1 */
	OF_XFER_IS_SIZE = 1 << 1, /* transferred == size: not stored */
	OF_SEQ_IS_XFER = 1 << 2,  /* seq_bytes == transferred: not stored */
	OF_FLAGS_SHIFT = 3,       /* flags 0-3 (the defined ones) in bits 3-4 ... */
	OF_FLAGS_MASK = 3 << OF_FLAGS_SHIFT,
	OF_FLAGS_BYTE = 1 << 5, /* ... or, for flags above 3, a flags byte follows */
	OF_ALL = (1 << 6) - 1,
};

/* NAME form bits. */
enum {
	NF_SERVER_V4 = 1 << 0,
	NF_OPEN_ENDED = 1 << 1, /* to_ns is 0: not stored */
	NF_ALL = (1 << 2) - 1,
};

/* RPC form bits. */
enum {
	RF_CLIENT_V4 = 1 << 0,
	RF_SERVER_V4 = 1 << 1,
	RF_CALL = 1 << 2,  /* call_ns is not 0 */
	RF_REPLY = 1 << 3, /* reply_ns is not 0 */
	RF_ALL = (1 << 4) - 1,
};

/* Largest bodies, so that an encoder can skip bounds checks when they fit. */
#define OPEN_BODY_MAX (5 + 8 + 16 + 16 + 7 * VARINT_MAX + TH_TRACE_FH_MAX)
#define NAME_BODY_MAX (4 + 8 + 16 + VARINT_MAX + 2 * TH_TRACE_FH_MAX + TH_TRACE_NAME_MAX)
#define RPC_BODY_MAX (3 + 8 + VARINT_MAX + 16 + 16 + 8 + 10 * VARINT_MAX + TH_TRACE_FH_MAX)

_Static_assert(HDR_SIZE + NAME_BODY_MAX <= TH_TRACE_RECORD_MAX, "name record max");
_Static_assert(HDR_SIZE + RPC_BODY_MAX <= TH_TRACE_RECORD_MAX, "rpc record max");
_Static_assert(HDR_SIZE + OPEN_BODY_MAX <= TH_TRACE_RECORD_MAX, "open record max");

/* Store @a in 4 or 16 bytes; the caller has set the form bit from is_v4(). */
static inline uint8_t *
put_addr(uint8_t *p, const struct th_addr *a, bool v4)
{
	if (v4) {
		memcpy(p, a->b + 12, 4);
		return p + 4;
	}
	memcpy(p, a->b, 16);
	return p + 16;
}

/*
 * The encoders write straight into the caller's buffer when the largest body
 * of the type fits (always, in the segment writer), and otherwise through a
 * bounce buffer so that a short buffer is never written past.
 */
static size_t
finish(uint8_t *buf, size_t size, uint8_t *tmp, const uint8_t *end, int type)
{
	size_t n = (size_t)(end - tmp);

	put16(tmp, (uint16_t)type);
	put16(tmp + 2, (uint16_t)(n - HDR_SIZE));
	if (tmp != buf) {
		if (n > size)
			return 0;
		memcpy(buf, tmp, n);
	}
	return n;
}

size_t
th_trace_encode_open(const struct th_trace_open *r, uint8_t *buf, size_t size)
{
	uint8_t bounce[HDR_SIZE + OPEN_BODY_MAX];
	uint8_t *out = size >= sizeof(bounce) ? buf : bounce;
	uint8_t *p = out + HDR_SIZE;
	bool server_v4 = is_v4(&r->server), client_v4 = is_v4(&r->client);
	uint8_t form = 0, shape = 0;
	size_t fh_kept = r->fh_len;

	/* A handle longer than the slot or a third direction cannot round-trip: refuse. */
	if (r->fh_len > TH_TRACE_FH_MAX || r->dir > 1)
		return 0;
	/* Handles are often zero-padded: the zeros at the end are counted, not stored. */
	while (fh_kept > 0 && r->fh[fh_kept - 1] == 0)
		fh_kept--;
	shape |= server_v4 ? OS_SERVER_V4 : 0;
	shape |= client_v4 ? OS_CLIENT_V4 : 0;
	form |= r->dir != 0 ? OF_DIR_WRITE : 0;
	form |= r->transferred == r->size ? OF_XFER_IS_SIZE : 0;
	form |= r->seq_bytes == r->transferred ? OF_SEQ_IS_XFER : 0;
	form |= r->flags <= 3 ? (uint8_t)(r->flags << OF_FLAGS_SHIFT) : OF_FLAGS_BYTE;
	p[0] = r->vers;
	p[1] = r->fh_len;
	p[2] = (uint8_t)(r->fh_len - fh_kept);
	p[3] = shape;
	p = put_addr(p + 4, &r->server, server_v4);
	p = put_addr(p, &r->client, client_v4);
	*p++ = form;
	if (form & OF_FLAGS_BYTE)
		*p++ = r->flags;
	p = put_var(p, r->close_ns - r->open_ns);
	p = put_var(p, r->uid);
	p = put_var(p, r->gid);
	p = put_var(p, r->ops);
	if (!(form & OF_XFER_IS_SIZE))
		p = put_var(p, r->transferred);
	if (!(form & OF_SEQ_IS_XFER))
		p = put_var(p, r->seq_bytes);
	put64(p, r->open_ns);
	memcpy(p + 8, r->fh, fh_kept);
	p = put_var(p + 8 + fh_kept, r->size);
	return finish(buf, size, out, p, TH_TRACE_OPEN);
}

size_t
th_trace_encode_name(const struct th_trace_name *r, uint8_t *buf, size_t size)
{
	uint8_t bounce[HDR_SIZE + NAME_BODY_MAX];
	uint8_t *out = size >= sizeof(bounce) ? buf : bounce;
	uint8_t *p = out + HDR_SIZE;
	bool server_v4 = is_v4(&r->server);
	uint8_t form = 0;

	if (r->fh_len > TH_TRACE_FH_MAX || r->dir_fh_len > TH_TRACE_FH_MAX ||
		r->name_len > TH_TRACE_NAME_MAX)
		return 0;
	form |= server_v4 ? NF_SERVER_V4 : 0;
	form |= r->to_ns == 0 ? NF_OPEN_ENDED : 0;
	p[0] = form;
	p[1] = r->fh_len;
	p[2] = r->dir_fh_len;
	p[3] = (uint8_t)r->name_len;
	put64(p + 4, r->from_ns);
	p = put_addr(p + 12, &r->server, server_v4);
	if (!(form & NF_OPEN_ENDED))
		p = put_var(p, r->to_ns - r->from_ns);
	memcpy(p, r->fh, r->fh_len);
	p += r->fh_len;
	memcpy(p, r->dir_fh, r->dir_fh_len);
	p += r->dir_fh_len;
	memcpy(p, r->name, r->name_len);
	return finish(buf, size, out, p + r->name_len, TH_TRACE_NAME);
}

size_t
th_trace_encode_rpc(const struct th_trace_rpc *r, uint8_t *buf, size_t size)
{
	uint8_t bounce[HDR_SIZE + RPC_BODY_MAX];
	uint8_t *out = size >= sizeof(bounce) ? buf : bounce;
	uint8_t *p = out + HDR_SIZE;
	bool client_v4 = is_v4(&r->client), server_v4 = is_v4(&r->server);
	uint8_t form = 0;

	if (r->fh_len > TH_TRACE_FH_MAX)
		return 0;
	form |= client_v4 ? RF_CLIENT_V4 : 0;
	form |= server_v4 ? RF_SERVER_V4 : 0;
	form |= r->call_ns != 0 ? RF_CALL : 0;
	form |= r->reply_ns != 0 ? RF_REPLY : 0;
	p[0] = form;
	p[1] = r->flags;
	p[2] = r->fh_len;
	p += 3;
	if (form & RF_CALL) {
		put64(p, r->call_ns);
		p += 8;
		if (form & RF_REPLY)
			p = put_var(p, r->reply_ns - r->call_ns);
	} else if (form & RF_REPLY) {
		put64(p, r->reply_ns);
		p += 8;
	}
	p = put_addr(p, &r->client, client_v4);
	p = put_addr(p, &r->server, server_v4);
	put16(p, r->client_port);
	put16(p + 2, r->server_port);
	put32(p + 4, r->xid);
	p = put_var(p + 8, r->prog);
	p = put_var(p, r->vers);
	p = put_var(p, r->proc);
	p = put_var(p, r->status);
	p = put_var(p, r->uid);
	p = put_var(p, r->gid);
	p = put_var(p, r->offset);
	p = put_var(p, r->count);
	p = put_var(p, r->done);
	p = put_var(p, r->size);
	memcpy(p, r->fh, r->fh_len);
	return finish(buf, size, out, p + r->fh_len, TH_TRACE_RPC);
}

/* Copy @n bytes into a slot of @cap, zero the rest; the slot is fixed in size. */
static inline int
get_bytes(struct cur *c, size_t n, uint8_t *dst, size_t cap)
{
	if (n > cap || !has(c, n))
		return -EBADMSG;
	memcpy(dst, c->p, n);
	memset(dst + n, 0, cap - n);
	c->p += n;
	return 0;
}

/*
 * The decoders fill a local struct and copy it out only when the whole
 * record checked, so a refused record leaves the caller's struct alone and
 * a NULL destination still validates.
 */
static int
decode_open(const uint8_t *body, size_t len, struct th_trace_open *out)
{
	struct cur c = {body, body + len};
	struct th_trace_open r;
	size_t fh_kept;
	uint8_t form, shape;
	uint64_t v;

	if (!has(&c, 4))
		return -EBADMSG;
	r.vers = c.p[0];
	r.fh_len = c.p[1];
	shape = c.p[3];
	if (r.fh_len > TH_TRACE_FH_MAX || c.p[2] > r.fh_len || (shape & ~OS_ALL))
		return -EBADMSG;
	fh_kept = (size_t)r.fh_len - c.p[2];
	c.p += 4;
	if (get_addr(&c, shape & OS_SERVER_V4, &r.server) < 0 ||
		get_addr(&c, shape & OS_CLIENT_V4, &r.client) < 0 || !has(&c, 1))
		return -EBADMSG;
	form = *c.p++;
	if (form & ~OF_ALL)
		return -EBADMSG;
	r.dir = form & OF_DIR_WRITE ? 1 : 0;
	if (form & OF_FLAGS_BYTE) {
		/* Flags 0-3 have their spelling in the form byte: a flags byte must be above. */
		if ((form & OF_FLAGS_MASK) || !has(&c, 1) || *c.p <= 3)
			return -EBADMSG;
		r.flags = *c.p++;
	} else {
		r.flags = (uint8_t)((form & OF_FLAGS_MASK) >> OF_FLAGS_SHIFT);
	}
	if (get_var(&c, UINT64_MAX, &v) < 0 || get_var32(&c, &r.uid) < 0 ||
		get_var32(&c, &r.gid) < 0 || get_var32(&c, &r.ops) < 0)
		return -EBADMSG;
	/* transferred and seq_bytes come before size: the implied values are checked below. */
	if (!(form & OF_XFER_IS_SIZE) && get_var(&c, UINT64_MAX, &r.transferred) < 0)
		return -EBADMSG;
	if (!(form & OF_SEQ_IS_XFER) && get_var(&c, UINT64_MAX, &r.seq_bytes) < 0)
		return -EBADMSG;
	if (!has(&c, 8))
		return -EBADMSG;
	r.open_ns = get64(c.p);
	r.close_ns = r.open_ns + v;
	c.p += 8;
	/* The stored handle must end in a non-zero byte, or the zero tail was not maximal. */
	if (get_bytes(&c, fh_kept, r.fh, TH_TRACE_FH_MAX) < 0 ||
		(fh_kept > 0 && r.fh[fh_kept - 1] == 0))
		return -EBADMSG;
	if (get_var(&c, UINT64_MAX, &r.size) < 0 || c.p != c.end)
		return -EBADMSG;
	if (form & OF_XFER_IS_SIZE)
		r.transferred = r.size;
	else if (r.transferred == r.size)
		return -EBADMSG;
	if (form & OF_SEQ_IS_XFER)
		r.seq_bytes = r.transferred;
	else if (r.seq_bytes == r.transferred)
		return -EBADMSG;
	if (out != NULL)
		*out = r;
	return TH_TRACE_OPEN;
}

static int
decode_name(const uint8_t *body, size_t len, struct th_trace_name *out)
{
	struct cur c = {body, body + len};
	struct th_trace_name r;
	uint8_t form;
	uint64_t v;

	/* Zeroed for the struct's padding: the caller gets no stack bytes. */
	memset(&r, 0, sizeof(r));
	if (!has(&c, 12))
		return -EBADMSG;
	form = c.p[0];
	if (form & ~NF_ALL)
		return -EBADMSG;
	r.fh_len = c.p[1];
	r.dir_fh_len = c.p[2];
	r.name_len = c.p[3];
	r.from_ns = get64(c.p + 4);
	c.p += 12;
	if (get_addr(&c, form & NF_SERVER_V4, &r.server) < 0)
		return -EBADMSG;
	if (form & NF_OPEN_ENDED) {
		r.to_ns = 0;
	} else {
		/* A delta that lands on 0 would be the open-ended record spelled twice. */
		if (get_var(&c, UINT64_MAX, &v) < 0 || r.from_ns + v == 0)
			return -EBADMSG;
		r.to_ns = r.from_ns + v;
	}
	if (get_bytes(&c, r.fh_len, r.fh, TH_TRACE_FH_MAX) < 0 ||
		get_bytes(&c, r.dir_fh_len, r.dir_fh, TH_TRACE_FH_MAX) < 0 ||
		get_bytes(&c, r.name_len, (uint8_t *)r.name, sizeof(r.name)) < 0 || c.p != c.end)
		return -EBADMSG;
	if (out != NULL)
		*out = r;
	return TH_TRACE_NAME;
}

static int
decode_rpc(const uint8_t *body, size_t len, struct th_trace_rpc *out)
{
	struct cur c = {body, body + len};
	struct th_trace_rpc r;
	uint8_t form;
	uint64_t v;

	/* Zeroed for the struct's padding: the caller gets no stack bytes. */
	memset(&r, 0, sizeof(r));
	if (!has(&c, 3))
		return -EBADMSG;
	form = c.p[0];
	if (form & ~RF_ALL)
		return -EBADMSG;
	r.flags = c.p[1];
	r.fh_len = c.p[2];
	c.p += 3;
	r.call_ns = 0;
	r.reply_ns = 0;
	if (form & (RF_CALL | RF_REPLY)) {
		if (!has(&c, 8))
			return -EBADMSG;
		v = get64(c.p);
		c.p += 8;
		/* A time the form calls present must not be 0, or it has two spellings. */
		if (v == 0)
			return -EBADMSG;
		if (form & RF_CALL)
			r.call_ns = v;
		else
			r.reply_ns = v;
	}
	if ((form & RF_CALL) && (form & RF_REPLY)) {
		if (get_var(&c, UINT64_MAX, &v) < 0 || r.call_ns + v == 0)
			return -EBADMSG;
		r.reply_ns = r.call_ns + v;
	}
	if (get_addr(&c, form & RF_CLIENT_V4, &r.client) < 0 ||
		get_addr(&c, form & RF_SERVER_V4, &r.server) < 0 || !has(&c, 8))
		return -EBADMSG;
	r.client_port = get16(c.p);
	r.server_port = get16(c.p + 2);
	r.xid = get32(c.p + 4);
	c.p += 8;
	if (get_var32(&c, &r.prog) < 0 || get_var16(&c, &r.vers) < 0 ||
		get_var16(&c, &r.proc) < 0 || get_var32(&c, &r.status) < 0 ||
		get_var32(&c, &r.uid) < 0 || get_var32(&c, &r.gid) < 0 ||
		get_var(&c, UINT64_MAX, &r.offset) < 0 || get_var32(&c, &r.count) < 0 ||
		get_var32(&c, &r.done) < 0 || get_var(&c, UINT64_MAX, &r.size) < 0 ||
		get_bytes(&c, r.fh_len, r.fh, TH_TRACE_FH_MAX) < 0 || c.p != c.end)
		return -EBADMSG;
	if (out != NULL)
		*out = r;
	return TH_TRACE_RPC;
}

/*
 * On -EBADMSG *used still says how far the record reaches when its header was
 * readable and its length fits the buffer, so a reader may skip a record type
 * it does not know (written by a newer version) instead of giving up.
 */
int
th_trace_decode(const uint8_t *buf, size_t size, size_t *used, struct th_trace_open *open,
	struct th_trace_name *name, struct th_trace_rpc *rpc)
{
	size_t len;
	int type, ret;

	if (used != NULL)
		*used = 0;
	if (buf == NULL || size < HDR_SIZE)
		return -EMSGSIZE;
	type = get16(buf);
	len = get16(buf + 2);
	if (size - HDR_SIZE < len)
		return -EMSGSIZE;
	switch (type) {
	case TH_TRACE_OPEN:
		ret = decode_open(buf + HDR_SIZE, len, open);
		break;
	case TH_TRACE_NAME:
		ret = decode_name(buf + HDR_SIZE, len, name);
		break;
	case TH_TRACE_RPC:
		ret = decode_rpc(buf + HDR_SIZE, len, rpc);
		break;
	default:
		ret = -EBADMSG;
		break;
	}
	if (used != NULL && (ret >= 0 || type < TH_TRACE_OPEN || type > TH_TRACE_RPC))
		*used = HDR_SIZE + len;
	return ret;
}

uint64_t
th_trace_open_time(const struct th_trace_open *r)
{
	return r->open_ns;
}

uint64_t
th_trace_rpc_time(const struct th_trace_rpc *r)
{
	return r->call_ns != 0 ? r->call_ns : r->reply_ns;
}
