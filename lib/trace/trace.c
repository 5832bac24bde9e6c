/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trace record encoding. Every field is written byte by byte in little-endian
 * order at a fixed offset, so the layout is the same on every machine and a
 * record never depends on struct padding. Layouts (offsets after the 4-byte
 * header: u16 type, u16 length of what follows):
 *
 * OPEN (1), length 88 + fh_len:
 *   0 open_ns u64, 8 close_ns u64, 16 server[16], 32 client[16], 48 uid u32,
 *   52 gid u32, 56 dir u8, 57 vers u8, 58 flags u8, 59 fh_len u8, 60 ops u32,
 *   64 transferred u64, 72 seq_bytes u64, 80 size u64, 88 fh[fh_len]
 *
 * NAME (2), length 36 + fh_len + dir_fh_len + name_len:
 *   0 from_ns u64, 8 to_ns u64, 16 server[16], 32 fh_len u8, 33 dir_fh_len u8,
 *   34 name_len u16, 36 fh[fh_len], dir_fh[dir_fh_len], name[name_len]
 *
 * RPC (3), length 102 + fh_len:
 *   0 call_ns u64, 8 reply_ns u64, 16 client[16], 32 server[16],
 *   48 client_port u16, 50 server_port u16, 52 xid u32, 56 prog u32,
 *   60 vers u16, 62 proc u16, 64 status u32, 68 uid u32, 72 gid u32,
 *   76 flags u8, 77 fh_len u8, 78 offset u64, 86 count u32, 90 done u32,
 *   94 size u64, 102 fh[fh_len]
 *
 * Addresses are the 16 bytes of struct th_addr (IPv4 as IPv4-mapped IPv6).
 * Only the handle and name bytes in use are stored: a fixed 64-byte handle
 * slot would double an open record for the common 28-32 byte handles.
 */

#include "th_trace.h"

#include <errno.h>
#include <string.h>

#define HDR_SIZE 4
#define OPEN_FIXED 88
#define NAME_FIXED 36
#define RPC_FIXED 102

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

size_t
th_trace_encode_open(const struct th_trace_open *r, uint8_t *buf, size_t size)
{
	size_t len = OPEN_FIXED + (size_t)r->fh_len;
	uint8_t *p = buf + HDR_SIZE;

	/* A handle longer than the slot cannot be stored faithfully: refuse it. */
	if (r->fh_len > TH_TRACE_FH_MAX || size < HDR_SIZE + len)
		return 0;
	put16(buf, TH_TRACE_OPEN);
	put16(buf + 2, (uint16_t)len);
	put64(p + 0, r->open_ns);
	put64(p + 8, r->close_ns);
	memcpy(p + 16, r->server.b, 16);
	memcpy(p + 32, r->client.b, 16);
	put32(p + 48, r->uid);
	put32(p + 52, r->gid);
	p[56] = r->dir;
	p[57] = r->vers;
	p[58] = r->flags;
	p[59] = r->fh_len;
	put32(p + 60, r->ops);
	put64(p + 64, r->transferred);
	put64(p + 72, r->seq_bytes);
	put64(p + 80, r->size);
	memcpy(p + OPEN_FIXED, r->fh, r->fh_len);
	return HDR_SIZE + len;
}

size_t
th_trace_encode_name(const struct th_trace_name *r, uint8_t *buf, size_t size)
{
	size_t len = NAME_FIXED + (size_t)r->fh_len + r->dir_fh_len + r->name_len;
	uint8_t *p = buf + HDR_SIZE;

	if (r->fh_len > TH_TRACE_FH_MAX || r->dir_fh_len > TH_TRACE_FH_MAX ||
		r->name_len > TH_TRACE_NAME_MAX || size < HDR_SIZE + len)
		return 0;
	put16(buf, TH_TRACE_NAME);
	put16(buf + 2, (uint16_t)len);
	put64(p + 0, r->from_ns);
	put64(p + 8, r->to_ns);
	memcpy(p + 16, r->server.b, 16);
	p[32] = r->fh_len;
	p[33] = r->dir_fh_len;
	put16(p + 34, r->name_len);
	p += NAME_FIXED;
	memcpy(p, r->fh, r->fh_len);
	p += r->fh_len;
	memcpy(p, r->dir_fh, r->dir_fh_len);
	p += r->dir_fh_len;
	memcpy(p, r->name, r->name_len);
	return HDR_SIZE + len;
}

size_t
th_trace_encode_rpc(const struct th_trace_rpc *r, uint8_t *buf, size_t size)
{
	size_t len = RPC_FIXED + (size_t)r->fh_len;
	uint8_t *p = buf + HDR_SIZE;

	if (r->fh_len > TH_TRACE_FH_MAX || size < HDR_SIZE + len)
		return 0;
	put16(buf, TH_TRACE_RPC);
	put16(buf + 2, (uint16_t)len);
	put64(p + 0, r->call_ns);
	put64(p + 8, r->reply_ns);
	memcpy(p + 16, r->client.b, 16);
	memcpy(p + 32, r->server.b, 16);
	put16(p + 48, r->client_port);
	put16(p + 50, r->server_port);
	put32(p + 52, r->xid);
	put32(p + 56, r->prog);
	put16(p + 60, r->vers);
	put16(p + 62, r->proc);
	put32(p + 64, r->status);
	put32(p + 68, r->uid);
	put32(p + 72, r->gid);
	p[76] = r->flags;
	p[77] = r->fh_len;
	put64(p + 78, r->offset);
	put32(p + 86, r->count);
	put32(p + 90, r->done);
	put64(p + 94, r->size);
	memcpy(p + RPC_FIXED, r->fh, r->fh_len);
	return HDR_SIZE + len;
}

static int
decode_open(const uint8_t *p, size_t len, struct th_trace_open *r)
{
	if (len < OPEN_FIXED || p[59] > TH_TRACE_FH_MAX || len != OPEN_FIXED + (size_t)p[59])
		return -EBADMSG;
	/* dir is a two-valued field: anything else is damage, not a new direction. */
	if (p[56] > 1)
		return -EBADMSG;
	if (r == NULL)
		return TH_TRACE_OPEN;
	r->open_ns = get64(p + 0);
	r->close_ns = get64(p + 8);
	memcpy(r->server.b, p + 16, 16);
	memcpy(r->client.b, p + 32, 16);
	r->uid = get32(p + 48);
	r->gid = get32(p + 52);
	r->dir = p[56];
	r->vers = p[57];
	r->flags = p[58];
	r->fh_len = p[59];
	r->ops = get32(p + 60);
	r->transferred = get64(p + 64);
	r->seq_bytes = get64(p + 72);
	r->size = get64(p + 80);
	memcpy(r->fh, p + OPEN_FIXED, r->fh_len);
	memset(r->fh + r->fh_len, 0, TH_TRACE_FH_MAX - r->fh_len);
	return TH_TRACE_OPEN;
}

static int
decode_name(const uint8_t *p, size_t len, struct th_trace_name *r)
{
	size_t fh_len, dir_len, name_len;

	if (len < NAME_FIXED)
		return -EBADMSG;
	fh_len = p[32];
	dir_len = p[33];
	name_len = get16(p + 34);
	if (fh_len > TH_TRACE_FH_MAX || dir_len > TH_TRACE_FH_MAX || name_len > TH_TRACE_NAME_MAX ||
		len != NAME_FIXED + fh_len + dir_len + name_len)
		return -EBADMSG;
	if (r == NULL)
		return TH_TRACE_NAME;
	r->from_ns = get64(p + 0);
	r->to_ns = get64(p + 8);
	memcpy(r->server.b, p + 16, 16);
	r->fh_len = (uint8_t)fh_len;
	r->dir_fh_len = (uint8_t)dir_len;
	r->name_len = (uint16_t)name_len;
	p += NAME_FIXED;
	memcpy(r->fh, p, fh_len);
	memset(r->fh + fh_len, 0, TH_TRACE_FH_MAX - fh_len);
	p += fh_len;
	memcpy(r->dir_fh, p, dir_len);
	memset(r->dir_fh + dir_len, 0, TH_TRACE_FH_MAX - dir_len);
	p += dir_len;
	memcpy(r->name, p, name_len);
	r->name[name_len] = '\0';
	return TH_TRACE_NAME;
}

static int
decode_rpc(const uint8_t *p, size_t len, struct th_trace_rpc *r)
{
	if (len < RPC_FIXED || p[77] > TH_TRACE_FH_MAX || len != RPC_FIXED + (size_t)p[77])
		return -EBADMSG;
	if (r == NULL)
		return TH_TRACE_RPC;
	r->call_ns = get64(p + 0);
	r->reply_ns = get64(p + 8);
	memcpy(r->client.b, p + 16, 16);
	memcpy(r->server.b, p + 32, 16);
	r->client_port = get16(p + 48);
	r->server_port = get16(p + 50);
	r->xid = get32(p + 52);
	r->prog = get32(p + 56);
	r->vers = get16(p + 60);
	r->proc = get16(p + 62);
	r->status = get32(p + 64);
	r->uid = get32(p + 68);
	r->gid = get32(p + 72);
	r->flags = p[76];
	r->fh_len = p[77];
	r->offset = get64(p + 78);
	r->count = get32(p + 86);
	r->done = get32(p + 90);
	r->size = get64(p + 94);
	memcpy(r->fh, p + RPC_FIXED, r->fh_len);
	memset(r->fh + r->fh_len, 0, TH_TRACE_FH_MAX - r->fh_len);
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
