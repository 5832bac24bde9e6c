/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SEG_RECORDS_H
#define SEG_RECORDS_H

/*
 * Deterministic, realistic-looking trace records for the segment tests and
 * the benchmark: record i is a pure function of (seed, i), so a reader can
 * check every recovered record against what was written without keeping a
 * copy. Open records look like a department's: 2 servers, 200 clients, 500
 * users, 32-byte knfsd-like handles over 100k files with a hot set,
 * increasing timestamps (about 5k opens per second), sizes spread over
 * decades. The RPC record carries the sequence number in its xid.
 */

#include <stdint.h>
#include <string.h>

#include "th_trace.h"

static inline uint64_t
seg_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline void
seg_v4(struct th_addr *a, uint32_t ip)
{
	memset(a->b, 0, 10);
	a->b[10] = 0xff;
	a->b[11] = 0xff;
	a->b[12] = (uint8_t)(ip >> 24);
	a->b[13] = (uint8_t)(ip >> 16);
	a->b[14] = (uint8_t)(ip >> 8);
	a->b[15] = (uint8_t)ip;
}

#define SEG_T0 1700000000000000000ull

static inline void
seg_make_open(uint64_t seed, uint64_t i, struct th_trace_open *r)
{
	uint64_t h = seg_mix(seed ^ i), h2 = seg_mix(h);
	/* 80% of opens go to a hot set of 2000 files, the rest anywhere in 100k. */
	uint32_t file = (h & 0xff) < 205 ? (uint32_t)(h2 % 2000) : (uint32_t)(h2 % 100000);
	uint32_t client = (uint32_t)((h >> 8) % 200);

	memset(r, 0, sizeof(*r));
	r->open_ns = SEG_T0 + i * 200000 + (h >> 40) % 100000;
	r->close_ns = r->open_ns + (h >> 20) % 50000000;
	seg_v4(&r->server, 0x0a000001 + file % 2);
	seg_v4(&r->client, 0x0a010000 + client);
	r->uid = 1000 + (uint32_t)((h >> 16) % 500);
	r->gid = 100 + r->uid % 7;
	r->dir = (h >> 33) % 5 == 0;
	r->vers = 3;
	r->flags = (h >> 34) % 3 == 0 ? TH_TRACE_OPEN_CACHE_HIT : 0;
	r->fh_len = 32;
	/* knfsd handles: a constant fsid part, then inode and generation. */
	static const uint8_t prefix[12] = {1, 0, 7, 1, 0x8c, 0x11, 0, 0, 0, 0, 0, 0};
	memcpy(r->fh, prefix, sizeof(prefix));
	for (int k = 0; k < 4; k++)
		r->fh[12 + k] = (uint8_t)(file >> (8 * k));
	uint64_t gen = seg_mix(file);
	for (int k = 0; k < 8; k++)
		r->fh[16 + k] = (uint8_t)(gen >> (8 * k));
	r->ops = 1 + (uint32_t)((h >> 24) % 40);
	r->size = (seg_mix(file + 7) % 1000000) << ((file % 5) * 2);
	r->transferred = r->flags & TH_TRACE_OPEN_CACHE_HIT ? 0 : r->size;
	r->seq_bytes = r->transferred;
}

static inline void
seg_make_rpc(uint64_t seed, uint64_t i, struct th_trace_rpc *r)
{
	uint64_t h = seg_mix(seed ^ (i * 3 + 1));

	memset(r, 0, sizeof(*r));
	r->call_ns = SEG_T0 + i * 1000;
	r->reply_ns = r->call_ns + 100000 + h % 1000000;
	seg_v4(&r->client, 0x0a010000 + (uint32_t)(h % 200));
	seg_v4(&r->server, 0x0a000001 + (uint32_t)((h >> 8) & 1));
	r->client_port = (uint16_t)(700 + (h >> 16) % 300);
	r->server_port = 2049;
	r->xid = (uint32_t)i; /* the sequence number a crash test checks */
	r->prog = 100003;
	r->vers = 3;
	r->proc = (uint16_t)((h >> 24) % 22);
	r->uid = 1000 + (uint32_t)((h >> 32) % 500);
	r->gid = 100;
	r->flags = TH_TRACE_RPC_TCP | TH_TRACE_RPC_HAS_SIZE;
	r->fh_len = 28;
	for (int k = 0; k < 28; k++)
		r->fh[k] = (uint8_t)(seg_mix(h % 5000 + (uint64_t)k) >> 7);
	r->offset = (h >> 40) << 12;
	r->count = 65536;
	r->done = 65536;
	r->size = r->offset + r->done;
}

static inline void
seg_make_name(uint64_t seed, uint64_t i, struct th_trace_name *r)
{
	uint64_t h = seg_mix(seed ^ (i * 5 + 2));

	memset(r, 0, sizeof(*r));
	r->from_ns = SEG_T0 + i * 3000;
	r->to_ns = h & 1 ? r->from_ns + h % 1000000000 : 0;
	seg_v4(&r->server, 0x0a000001);
	r->fh_len = (uint8_t)(h % 65);
	for (int k = 0; k < r->fh_len; k++)
		r->fh[k] = (uint8_t)(h >> (k % 56));
	r->dir_fh_len = 32;
	memset(r->dir_fh, 0x5a, 32);
	r->name_len = (uint16_t)(1 + (h >> 8) % 255);
	for (int k = 0; k < r->name_len; k++)
		r->name[k] = (char)('a' + (h >> (k % 50)) % 26);
	r->name[r->name_len] = '\0';
	/* Half with a mode (type and permission bits), half unknown. */
	r->mode = h & 2 ? 0100000 | (uint32_t)((h >> 20) & 07777) : 0;
}

#endif /* SEG_RECORDS_H */
