/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Writes the golden tests' input with the real segment writer: two boxes,
 * three session lcores (one stream rotated into two segments), a name-map
 * stream, records written at close (so out of open-time order), IPv4 and
 * IPv6. Deterministic records; file names carry the creation time, which
 * export output does not show.
 *
 *   mkseg DIR            the normal set (with two streams of RPC records)
 *   mkseg DIR crash      one more stream (box 3), flushed and never closed:
 *                        the .tmp a crash leaves
 *   mkseg DIR crash-names  box 1's name map alone, flushed after its first three
 *                        names and never closed (the fourth is lost)
 *   mkseg DIR blocks     one closed segment (box 4) of 8 opens, flushed after each:
 *                        a block each, the header in the first and the trailer in
 *                        the last, so damage can be partway through
 *   mkseg DIR samebox    two writers of one stream (box 7, lcore 0) at once, as two
 *                        boxes left at one trace.box write: their opens interleave in
 *                        time, their segments (two each) in creation
 *   mkseg DIR backwards  two writers of one stream (box 8, lcore 0) one after the
 *                        other, the later with the earlier opens (two segments each)
 *   mkseg DIR disorder   one stream (box 9): opens a second apart, one written 100.5 s
 *                        after a later one
 *   mkseg DIR rotated    one stream (box 10) of six segments (0 to 5), an open in each
 *   mkseg DIR lossy      one stream (box 11) of two segments, two opens written and one
 *                        lost (a handle too long to encode), counted in both trailers
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "th_segment.h"

#define S 1000000000ull
#define BASE (1700000000ull * S)

static void
v4(struct th_addr *a, unsigned int x, unsigned int y, unsigned int z, unsigned int w)
{
	memset(a, 0, sizeof(*a));
	a->b[10] = a->b[11] = 0xff;
	a->b[12] = (uint8_t)x, a->b[13] = (uint8_t)y, a->b[14] = (uint8_t)z, a->b[15] = (uint8_t)w;
}

static void
v6(struct th_addr *a, uint16_t g0, uint16_t g1, uint16_t g2, uint16_t last)
{
	memset(a, 0, sizeof(*a));
	a->b[0] = (uint8_t)(g0 >> 8), a->b[1] = (uint8_t)g0;
	a->b[2] = (uint8_t)(g1 >> 8), a->b[3] = (uint8_t)g1;
	a->b[4] = (uint8_t)(g2 >> 8), a->b[5] = (uint8_t)g2;
	a->b[14] = (uint8_t)(last >> 8), a->b[15] = (uint8_t)last;
}

/* Files: server 0 (10.20.30.40) handles 0xa1.., server 1 (fd00:1234::5) handles 0xb1.. */
static void
fh_of(unsigned int file, uint8_t *fh, uint8_t *len)
{
	*len = 8;
	for (unsigned int i = 0; i < 8; i++)
		fh[i] = (uint8_t)((file < 4 ? 0xa1 : 0xb1) + file * 16 + i * 3);
}

static void
server_of(unsigned int file, struct th_addr *a)
{
	if (file < 4)
		v4(a, 10, 20, 30, 40);
	else
		v6(a, 0xfd00, 0x1234, 0, 5);
}

static struct th_segment_writer *
writer(const char *dir, uint64_t box, uint16_t lcore, enum th_segment_kind kind)
{
	struct th_segment_config c;
	struct th_segment_writer *w;

	memset(&c, 0, sizeof(c));
	c.dir = dir;
	c.box_id = box;
	c.stream_id = lcore;
	c.kind = kind;
	w = th_segment_writer_create(&c);
	if (w == NULL || th_segment_writer_error(w) != 0) {
		fprintf(stderr, "mkseg: cannot write segments in %s\n", dir);
		exit(1);
	}
	return w;
}

/* Open number i of a stream: client, uid and file chosen so every filter has work to do. */
static void
open_rec(unsigned int stream, unsigned int i, struct th_trace_open *o)
{
	static const uint32_t uids[3] = {40001, 40002, 40003};
	unsigned int file = (stream * 3 + i) % 6;

	memset(o, 0, sizeof(*o));
	/* Streams interleave: stream s opens at s + 3 i seconds (ms offsets keep them apart),
	 * written in pairs swapped (a session lcore writes at close, not at open). */
	o->open_ns = BASE + (uint64_t)(stream + 3 * i) * S + (uint64_t)stream * 1000000 +
		     (i % 2 == 0 ? 7 * S : 0);
	o->close_ns = o->open_ns + (uint64_t)(1 + i % 4) * 250000 + 123;
	server_of(file, &o->server);
	if (stream == 2 && i % 2 == 1)
		v6(&o->client, 0x2001, 0x0db8, 0x77, 0x13);
	else
		v4(&o->client, 192, 168, 77, 11 + (i + stream) % 2);
	o->uid = uids[(i + stream) % 3];
	o->gid = 50001;
	o->dir = (uint8_t)(i % 3 == 0);
	o->vers = 3;
	o->flags = i % 5 == 4 ? TH_TRACE_OPEN_CACHE_HIT : 0;
	fh_of(file, o->fh, &o->fh_len);
	o->ops = 1 + i % 7;
	o->transferred = o->flags ? 0 : 4096u * (1 + i % 5);
	o->seq_bytes = o->transferred / 2;
	o->size = 65536 + 4096u * file;
}

/* The name map of box 1: a mount path, a directory, files, and a rename half-way. */
static const struct {
	unsigned int file, dir_file; /* dir_file ~0u: a mount path */
	int from_s, to_s;            /* seconds from BASE; to_s 0: still valid */
	const char *name;
	uint32_t mode; /* 0: the binding's reply had no attributes (a mount root) */
} names[] = {
	{3, ~0u, -100, 0, "/srv/projects", 0},
	{2, 3, -50, 0, "alice", 0040750},
	{0, 2, -50, 10, "alice-thesis-draft.tex", 0100644},
	{0, 2, 10, 0, "alice-thesis, final.tex", 0100600},
	{1, 3, -50, 0, "budget-2024.xls", 0100664},
	{4, ~0u, -10, 0, "salaries \"Q3\".ods", 0},
};

/* Write names[i] to @p w. */
static int
write_name(struct th_segment_writer *w, unsigned int i)
{
	struct th_trace_name n;

	memset(&n, 0, sizeof(n));
	n.from_ns = BASE + (uint64_t)((int64_t)names[i].from_s * (int64_t)S);
	n.to_ns = names[i].to_s != 0 ? BASE + (uint64_t)names[i].to_s * S : 0;
	server_of(names[i].file, &n.server);
	fh_of(names[i].file, n.fh, &n.fh_len);
	if (names[i].dir_file != ~0u)
		fh_of(names[i].dir_file, n.dir_fh, &n.dir_fh_len);
	n.name_len = (uint16_t)strlen(names[i].name);
	memcpy(n.name, names[i].name, n.name_len + 1);
	n.mode = names[i].mode;
	return th_segment_write_name(w, &n);
}

/*
 * RPC records of two decode lcores (boxes 1 and 2), written in reply order:
 * READ and WRITE with offsets, an error status, a call without a reply, a
 * reply without a call, RPC-level failures, MOUNT, an unknown program, UDP
 * and IPv6. file ~0u: no handle.
 */
static const struct {
	unsigned int box;
	int call_ms, reply_us; /* from BASE; call_ms < 0: no call, reply_us < 0: no reply */
	unsigned int client;   /* 0, 1: 192.168.77.11, .12; 2: 2001:db8:77::13 */
	uint32_t prog, vers, proc, status;
	bool is_rpc_error, is_udp;
	unsigned int file, uid;
	uint64_t offset;
	uint32_t count, done;
	int64_t size;    /* < 0: none */
	bool is_partial; /* done counts only the entries the capture kept of a listing */
} rpcs[] = {
	{1, 1000, 350, 0, 100003, 3, 6, 0, false, false, 0, 40001, 8192, 4096, 4096, 73728},
	{1, 1500, 100, 1, 100003, 3, 3, 2, false, false, 2, 40002, 0, 0, 0, -1},
	{1, 2000, 2000, 2, 100003, 3, 7, 0, false, true, 4, 40003, 0, 32768, 32768, 32768},
	{1, -1, 2500000, 1, 0, 0, 0, 0, false, false, ~0u, 0, 0, 0, 0, -1},
	{1, 3000, -1, 0, 100003, 3, 1, 0, false, false, 1, 40001, 0, 0, 0, -1},
	{1, 3500, 40, 0, 100003, 3, 22, 3, true, false, ~0u, 40001, 0, 0, 0, -1},
	{2, 4000, 10, 1, 400000, 1, 5, 0, false, true, ~0u, 40002, 0, 0, 0, -1},
	{2, 500, 900, 1, 100005, 3, 1, 0, false, false, ~0u, 0, 0, 0, 0, -1},
	{2, 1001, 1200, 0, 100003, 3, 6, 0, false, false, 0, 40001, 0, 65536, 4096, 73728},
	{2, 4500, 30, 0, 100003, 3, 4, 101, true, false, 0, 40002, 0, 0, 0, -1},
	/* Listings of alice/: a READDIRPLUS counted whole, a READDIR cut after 30 entries. */
	{2, 4200, 800, 0, 100003, 3, 17, 0, false, false, 2, 40001, 0, 131072, 120, -1},
	{2, 4300, 500, 1, 100003, 3, 16, 0, false, false, 2, 40002, 0, 8192, 30, -1, true},
};

static int
write_rpcs(const char *dir, unsigned int box)
{
	struct th_segment_writer *w = writer(dir, box, 256, TH_SEGMENT_KIND_RPCS);

	for (unsigned int i = 0; i < sizeof(rpcs) / sizeof(rpcs[0]); i++) {
		struct th_trace_rpc r;

		if (rpcs[i].box != box)
			continue;
		memset(&r, 0, sizeof(r));
		r.call_ns = rpcs[i].call_ms >= 0 ? BASE + (uint64_t)rpcs[i].call_ms * 1000000 : 0;
		r.reply_ns = rpcs[i].reply_us < 0   ? 0
			     : rpcs[i].call_ms >= 0 ? r.call_ns + (uint64_t)rpcs[i].reply_us * 1000
						    : BASE + (uint64_t)rpcs[i].reply_us * 1000;
		if (rpcs[i].client == 2)
			v6(&r.client, 0x2001, 0x0db8, 0x77, 0x13);
		else
			v4(&r.client, 192, 168, 77, 11 + rpcs[i].client);
		r.client_port = (uint16_t)(800 + i);
		server_of(rpcs[i].file != ~0u ? rpcs[i].file : 0, &r.server);
		r.server_port = rpcs[i].prog == 100005 ? 20048 : 2049;
		r.xid = 0x1000 + i;
		r.prog = rpcs[i].prog;
		r.vers = (uint16_t)rpcs[i].vers;
		r.proc = (uint16_t)rpcs[i].proc;
		r.status = rpcs[i].status;
		r.uid = rpcs[i].uid;
		r.gid = rpcs[i].uid != 0 ? 50001 : 0;
		r.flags = (uint8_t)((rpcs[i].is_udp ? 0 : TH_TRACE_RPC_TCP) |
				    (rpcs[i].is_rpc_error ? TH_TRACE_RPC_RPC_ERROR : 0) |
				    (rpcs[i].size >= 0 ? TH_TRACE_RPC_HAS_SIZE : 0) |
				    (rpcs[i].is_partial ? TH_TRACE_RPC_DONE_PARTIAL : 0));
		if (rpcs[i].file != ~0u)
			fh_of(rpcs[i].file, r.fh, &r.fh_len);
		r.offset = rpcs[i].offset;
		r.count = rpcs[i].count;
		r.done = rpcs[i].done;
		r.size = rpcs[i].size >= 0 ? (uint64_t)rpcs[i].size : 0;
		if (th_segment_write_rpc(w, &r) != 0)
			return 1;
	}
	return th_segment_writer_close(w, NULL) != 0;
}

int
main(int argc, char **argv)
{
	struct th_segment_writer *w[3], *nw;
	struct th_trace_open o;

	if (argc < 2) {
		fprintf(stderr, "usage: mkseg DIR "
				"[crash|crash-names|blocks|samebox|backwards|disorder|rotated|"
				"lossy|many-names]\n");
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "crash") == 0) {
		struct th_segment_writer *cw = writer(argv[1], 3, 0, TH_SEGMENT_KIND_OPENS);

		for (unsigned int i = 0; i < 4; i++) {
			open_rec(0, i, &o);
			o.open_ns += 500000000;
			th_segment_write_open(cw, &o);
		}
		th_segment_writer_flush(cw);
		open_rec(0, 9, &o);
		th_segment_write_open(cw, &o);
		/* Exit without closing: the segment stays a .tmp with 4 flushed records. */
		_exit(0);
	}
	if (argc > 2 && strcmp(argv[2], "crash-names") == 0) {
		struct th_segment_writer *cw = writer(argv[1], 1, 0, TH_SEGMENT_KIND_NAMES);

		/* File 0's path is flushed whole; file 1's name is not. */
		write_name(cw, 0);
		write_name(cw, 1);
		write_name(cw, 2);
		th_segment_writer_flush(cw);
		write_name(cw, 4);
		_exit(0);
	}
	if (argc > 2 && strcmp(argv[2], "blocks") == 0) {
		struct th_segment_writer *bw = writer(argv[1], 4, 0, TH_SEGMENT_KIND_OPENS);

		for (unsigned int i = 0; i < 8; i++) {
			open_rec(0, i, &o);
			if (th_segment_write_open(bw, &o) != 0 || th_segment_writer_flush(bw) != 0)
				return 1;
		}
		return th_segment_writer_close(bw, NULL) != 0;
	}
	if (argc > 2 && (strcmp(argv[2], "samebox") == 0 || strcmp(argv[2], "backwards") == 0)) {
		bool is_same = strcmp(argv[2], "samebox") == 0;
		uint64_t box = is_same ? 7 : 8;

		/* 100 opens each, more than a stream reads ahead. Together: a at 100, 120, ... s
		 * and b at 110, 130, ...; one after the other: a at 4000, 4030, ... s, then b at
		 * 500, 530, ... s. */
		w[0] = writer(argv[1], box, 0, TH_SEGMENT_KIND_OPENS);
		w[1] = is_same ? writer(argv[1], box, 0, TH_SEGMENT_KIND_OPENS) : NULL;
		for (unsigned int k = 0; k < 200; k++) {
			unsigned int b = is_same ? k % 2 : k / 100, i = is_same ? k / 2 : k % 100;

			if (!is_same && k == 100) {
				if (th_segment_writer_close(w[0], NULL) != 0)
					return 1;
				w[1] = writer(argv[1], box, 0, TH_SEGMENT_KIND_OPENS);
			}
			open_rec(b, i % 8, &o);
			o.open_ns = BASE + (is_same ? (100 + 10 * k) * S
						    : ((b ? 500 : 4000) + 30 * i) * S);
			o.close_ns = o.open_ns + 250000;
			if (th_segment_write_open(w[b], &o) != 0)
				return 1;
			if (i == 49 && th_segment_writer_rotate(w[b]) != 0)
				return 1;
		}
		return (is_same && th_segment_writer_close(w[0], NULL) != 0) ||
		       th_segment_writer_close(w[1], NULL) != 0;
	}
	if (argc > 2 && strcmp(argv[2], "rotated") == 0) {
		struct th_segment_writer *rw = writer(argv[1], 10, 0, TH_SEGMENT_KIND_OPENS);

		/* Six opens a second apart, each closing its segment: segments 0 to 5. */
		for (unsigned int k = 0; k < 6; k++) {
			open_rec(0, k, &o);
			o.open_ns = BASE + (100 + k) * S;
			o.close_ns = o.open_ns + 250000;
			if (th_segment_write_open(rw, &o) != 0 || th_segment_writer_rotate(rw) != 0)
				return 1;
		}
		return th_segment_writer_close(rw, NULL) != 0;
	}
	if (argc > 2 && strcmp(argv[2], "lossy") == 0) {
		struct th_segment_writer *lw = writer(argv[1], 11, 0, TH_SEGMENT_KIND_OPENS);

		/* Three opens, the second with a handle no record can hold: the writer counts it
		 * lost, and both segments' trailers say so. */
		for (unsigned int k = 0; k < 3; k++) {
			open_rec(0, k, &o);
			o.open_ns = BASE + (100 + k) * S;
			o.close_ns = o.open_ns + 250000;
			if (k == 1)
				o.fh_len = TH_TRACE_FH_MAX + 1;
			if (th_segment_write_open(lw, &o) != (k == 1 ? -EINVAL : 0))
				return 1;
			if (k == 1 && th_segment_writer_rotate(lw) != 0)
				return 1;
		}
		return th_segment_writer_close(lw, NULL) != 0;
	}
	if (argc > 2 && strcmp(argv[2], "many-names") == 0) {
		struct th_segment_writer *mw = writer(argv[1], 12, 0, TH_SEGMENT_KIND_NAMES);
		struct th_trace_name n;

		/* 5000 names of one directory, more than --names-mb 1 holds (about 3800). */
		for (unsigned int k = 0; k < 5000; k++) {
			memset(&n, 0, sizeof(n));
			n.from_ns = BASE + (uint64_t)k * S;
			server_of(0, &n.server);
			fh_of(0, n.dir_fh, &n.dir_fh_len);
			n.fh_len = 8;
			memcpy(n.fh, &k, sizeof(k));
			n.fh[7] = 0xee;
			n.name_len = (uint16_t)snprintf(n.name, sizeof(n.name), "file-%05u", k);
			n.mode = 0100644;
			if (th_segment_write_name(mw, &n) != 0)
				return 1;
		}
		return th_segment_writer_close(mw, NULL) != 0;
	}
	if (argc > 2 && strcmp(argv[2], "disorder") == 0) {
		struct th_segment_writer *dw = writer(argv[1], 9, 0, TH_SEGMENT_KIND_OPENS);

		/* 100 to 399 s, then one at 298.5 s (100.5 s after 399's), then 400 to 419 s. */
		for (unsigned int k = 0; k < 321; k++) {
			open_rec(0, k % 8, &o);
			o.open_ns = BASE +
				    (k < 300           ? 100 + k
					    : k == 300 ? 298
						       : 99 + k) *
					    S +
				    (k == 300 ? S / 2 : 0);
			o.close_ns = o.open_ns + 250000;
			if (th_segment_write_open(dw, &o) != 0)
				return 1;
		}
		return th_segment_writer_close(dw, NULL) != 0;
	}
	/* Box 1 runs lcores 0 and 1, box 2 runs lcore 0. */
	w[0] = writer(argv[1], 1, 0, TH_SEGMENT_KIND_OPENS);
	w[1] = writer(argv[1], 1, 1, TH_SEGMENT_KIND_OPENS);
	w[2] = writer(argv[1], 2, 0, TH_SEGMENT_KIND_OPENS);
	for (unsigned int s = 0; s < 3; s++) {
		for (unsigned int i = 0; i < 8; i++) {
			/* Written in close order: the even opens (7 s later) after the odd ones. */
			open_rec(s, i % 2 == 0 ? i + 1 : i - 1, &o);
			if (th_segment_write_open(w[s], &o) != 0)
				return 1;
			if (s == 0 && i == 3 && th_segment_writer_rotate(w[s]) != 0)
				return 1;
		}
	}
	for (unsigned int s = 0; s < 3; s++)
		if (th_segment_writer_close(w[s], NULL) != 0)
			return 1;
	nw = writer(argv[1], 1, 0, TH_SEGMENT_KIND_NAMES);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (write_name(nw, i) != 0)
			return 1;
	if (th_segment_writer_close(nw, NULL) != 0)
		return 1;
	return write_rpcs(argv[1], 1) || write_rpcs(argv[1], 2);
}
