/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The whole decode pipeline from hostile TCP/UDP payloads: record marking,
 * gaps, retransmissions and hunting (lib/flow), RPC headers (lib/rpc),
 * procedure decoders (lib/nfs), call/reply matching (lib/xid) and the text
 * form of every op (lib/op).
 *
 * Input: a sequence of chunks, each
 *     u8 control   bit 0: server-to-client; bit 1: UDP; bit 2: SYN;
 *                  bits 3-4: connection (4 client ports); bits 5-7: the
 *                  acknowledgement, that many 512-byte steps past the other
 *                  direction's next byte (0: nothing unseen; else bytes the
 *                  capture has not shown, as on a mirror port)
 *     u8 skip      bytes to jump the sequence number ahead (a gap) or,
 *                  with bit 7 set, back (a retransmission)
 *     u16 length   bit 15: FIN; payload bytes that follow (big endian; cut
 *                  to what is left)
 * wrapped in Ethernet/IPv4/TCP or UDP frames with consistent sequence numbers.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "th_decode.h"

static char line[8192];

static void
on_op(void *ctx, const struct th_op *op)
{
	(void)ctx;
	th_op_format(op, line, sizeof(line));
}

/* READDIRPLUS entries: the op is the listing's, whole; the entry within bounds. */
static void
on_dirent(void *ctx, const struct th_op *op, const struct th_nfs_dirent *e)
{
	(void)ctx;
	if (op->proc != TH_NFS3_READDIRPLUS || op->call.fh.len == 0 || e->fh_len == 0 ||
		e->fh_len > TH_NFS_FH_MAX || e->name_len == 0)
		abort();
	line[0] = (char)(e->name[0] ^ e->name[e->name_len - 1] ^ e->fh[e->fh_len - 1]);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static size_t
frame(uint8_t *f, bool is_udp, bool to_client, uint16_t cport, uint32_t seq, uint32_t ack,
	uint8_t flags, const uint8_t *payload, uint16_t len)
{
	size_t l4 = is_udp ? 8 : 20, off = 14 + 20 + l4;
	uint8_t client[4] = {10, 0, 0, 2}, server[4] = {10, 0, 0, 1};

	memset(f, 0, off);
	put16(f + 12, 0x0800);
	f[14] = 0x45;
	put16(f + 16, (uint16_t)(20 + l4 + len));
	f[22] = 64;
	f[23] = is_udp ? 17 : 6;
	memcpy(f + 26, to_client ? server : client, 4);
	memcpy(f + 30, to_client ? client : server, 4);
	put16(f + 34, to_client ? 2049 : cport);
	put16(f + 36, to_client ? cport : 2049);
	if (is_udp) {
		put16(f + 38, (uint16_t)(8 + len));
	} else {
		put32(f + 38, seq);
		put32(f + 42, ack);
		f[46] = 5 << 4;
		f[47] = flags;
	}
	memcpy(f + off, payload, len);
	return off + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct th_decode *d;
	static uint8_t f[65536 + 64];
	struct th_decode_config cfg;
	struct th_decode_stats st;
	uint32_t seq[2][4] = {{1000, 2000, 3000, 4000}, {9000, 8000, 7000, 6000}};
	uint64_t ts = 1000000000ull;

	if (d == NULL) {
		th_decode_config_defaults(&cfg);
		cfg.flows = 64;
		cfg.calls = 64;
		cfg.call_timeout_ns = 5000000;
		d = th_decode_create(&cfg, on_op, NULL);
		if (d == NULL)
			abort();
		th_decode_set_dirent_cb(d, on_dirent);
	}
	while (size >= 4) {
		uint8_t ctl = data[0], skip = data[1];
		/* The length's top bit: a FIN with the segment. */
		uint16_t len = (uint16_t)((data[2] & 0x7f) << 8 | data[3]);
		bool is_fin = (data[2] & 0x80) != 0;
		int dir = ctl & 1, conn = (ctl >> 3) & 3;
		bool is_udp = (ctl & 2) != 0, is_syn = (ctl & 4) != 0;
		uint32_t *s = &seq[dir][conn], ack;
		size_t n;

		data += 4;
		size -= 4;
		if (len > size)
			len = (uint16_t)size;
		if (skip & 0x80)
			*s -= skip & 0x7f;
		else
			*s += skip;
		/* The other direction's next byte, or up to 3 KiB past it (bytes not seen yet). */
		ack = seq[dir ^ 1][conn] + (uint32_t)(ctl >> 5) * 512u;
		n = frame(f, is_udp, dir, (uint16_t)(800 + conn), *s, ack,
			is_syn ? 0x02 : 0x18 | (is_fin ? 0x01 : 0), data, len);
		th_decode_frame(d, f, (uint32_t)n, (uint32_t)n, TH_PKT_LINK_ETHERNET, ts);
		if (!is_udp)
			*s += len + (is_syn || is_fin ? 1 : 0);
		ts += 1000;
		th_decode_housekeep(d, ts);
		data += len;
		size -= len;
	}
	/* Leave no state behind for the next input: flush and age everything. */
	th_decode_flush(d);
	th_decode_housekeep(d, ts + 3600ull * 1000000000ull);
	/* A held segment is let in after what it waited for at most once. */
	th_decode_get_stats(d, &st);
	if (st.flow.segments_reordered > st.flow.segments_held ||
		st.flow.segments_ack_reordered > st.flow.segments_held_ack)
		abort();
	return 0;
}
