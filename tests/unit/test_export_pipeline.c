/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Export pipeline on in-memory streams: merge order, reordering window,
 * damaged streams, filters, name join, the three formats, host names and
 * pseudonyms. Segment files are covered by the golden tests (tests/export).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "th_export.h"
#include "export_private.h"
#include "th_session.h"

#define S 1000000000ull

/* A stream of records held in memory; it can stop with an error after @fail_at records. */
struct mem {
	const char *label;
	struct th_trace_open opens[256];
	struct th_trace_name names[16];
	int types[272];
	unsigned int n;      /* records */
	unsigned int i;      /* next */
	unsigned int no, nn; /* opens, names stored */
	int fail_rc;         /* returned at fail_at; 0: none */
	unsigned int fail_at;
	bool is_names_only; /* passed on to the source */
	unsigned int reads; /* records returned, over all passes of one run() */
};

static int
mem_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct mem *m = ctx;
	unsigned int o = 0, k = 0;

	(void)rpc;
	if (m->fail_rc != 0 && m->i == m->fail_at)
		return m->fail_rc;
	if (m->i >= m->n)
		return 0;
	for (unsigned int j = 0; j < m->i; j++)
		m->types[j] == TH_TRACE_OPEN ? o++ : k++;
	*type = m->types[m->i++];
	m->reads++;
	if (*type == TH_TRACE_OPEN)
		*open = m->opens[o];
	else
		*name = m->names[k];
	return 1;
}

static int
mem_rewind(void *ctx)
{
	((struct mem *)ctx)->i = 0;
	return 0;
}

static void
addr4(struct th_addr *a, uint8_t x, uint8_t y, uint8_t z, uint8_t w)
{
	memset(a, 0, sizeof(*a));
	a->b[10] = a->b[11] = 0xff;
	a->b[12] = x, a->b[13] = y, a->b[14] = z, a->b[15] = w;
}

static struct th_trace_open *
add_open(struct mem *m, uint64_t t, uint8_t client_last, uint32_t uid, uint8_t fh0)
{
	struct th_trace_open *r = &m->opens[m->no++];

	memset(r, 0, sizeof(*r));
	r->open_ns = t;
	r->close_ns = t + 1500000;
	addr4(&r->server, 10, 0, 0, 1);
	addr4(&r->client, 10, 1, 0, client_last);
	r->uid = uid;
	r->gid = 100;
	r->vers = 3;
	r->fh_len = 4;
	r->fh[0] = fh0, r->fh[1] = 0xbe, r->fh[2] = 0xef, r->fh[3] = 0x01;
	r->ops = 3;
	r->transferred = 8192;
	r->seq_bytes = 8192;
	r->size = 8192;
	m->types[m->n++] = TH_TRACE_OPEN;
	return r;
}

static struct th_trace_name *
add_name(struct mem *m, uint64_t from, uint64_t to, const uint8_t *dir, unsigned int dir_len,
	uint8_t fh0, const char *name)
{
	struct th_trace_name *r = &m->names[m->nn++];

	memset(r, 0, sizeof(*r));
	r->from_ns = from;
	r->to_ns = to;
	addr4(&r->server, 10, 0, 0, 1);
	r->fh_len = 4;
	r->fh[0] = fh0, r->fh[1] = 0xbe, r->fh[2] = 0xef, r->fh[3] = 0x01;
	r->dir_fh_len = (uint8_t)dir_len;
	if (dir_len > 0)
		memcpy(r->dir_fh, dir, dir_len);
	r->name_len = (uint16_t)strlen(name);
	memcpy(r->name, name, r->name_len + 1);
	m->types[m->n++] = TH_TRACE_NAME;
	return r;
}

static struct th_export_source
src_of(struct mem *m)
{
	struct th_export_source s = {.label = m->label,
		.next = mem_next,
		.ctx = m,
		.rewind = mem_rewind,
		.is_names_only = m->is_names_only};

	return s;
}

/* Run an export and return what it wrote (caller frees). */
static char *
run(const struct th_export_config *c, struct mem **mems, unsigned int count,
	struct th_export_counters *ctr, char **err_text)
{
	struct th_export_source src[8];
	char *buf = NULL, *ebuf = NULL;
	size_t size = 0, esize = 0;
	FILE *out = open_memstream(&buf, &size), *err = open_memstream(&ebuf, &esize);

	for (unsigned int i = 0; i < count; i++) {
		mems[i]->i = 0;
		mems[i]->reads = 0;
		src[i] = src_of(mems[i]);
	}
	assert_int_equal(th_export_run(c, src, count, out, err, ctr), 0);
	fclose(out);
	fclose(err);
	if (err_text != NULL)
		*err_text = ebuf;
	else
		free(ebuf);
	return buf;
}

/* RPC records from one stream, in order. */
struct rpc_stream {
	struct th_trace_rpc r[3];
	unsigned int n, i;
};

static int
rpc_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct rpc_stream *m = ctx;

	(void)open, (void)name;
	if (m->i >= m->n)
		return 0;
	*type = TH_TRACE_RPC;
	*rpc = m->r[m->i++];
	return 1;
}

/* @p r: the @p i-th answered NFSv3 RPC over TCP of one client, a second apart, procedure @p proc.
 */
static void
nfs3_rpc(struct th_trace_rpc *r, unsigned int i, uint32_t xid, uint32_t proc)
{
	memset(r, 0, sizeof(*r));
	r->call_ns = 1000 * S + i * S;
	r->reply_ns = r->call_ns + 300000;
	addr4(&r->client, 10, 1, 0, 1);
	addr4(&r->server, 10, 0, 0, 1);
	r->client_port = 800;
	r->server_port = 2049;
	r->xid = xid;
	r->prog = 100003;
	r->vers = 3;
	r->proc = proc;
	r->flags = TH_TRACE_RPC_TCP;
	r->fh_len = 4;
	memcpy(r->fh, "\x01\x02\x03\x04", 4);
}

/*
 * READs the capture kept from replies cut short: one whose status word it never saw
 * reads '?', not the OK a status of 0 spells, and one cut after its status has no
 * done, as the capture's RPC log leaves them; a whole reply has both.
 */
static void
test_rpc_cut_replies(void **state)
{
	static const char *const want_text[] = {" OK ", " ? ", " OK "};
	static const char *const want_json[] = {"\"OK\"", "\"?\"", "\"OK\""};
	static const bool has_done[] = {true, false, false};
	struct rpc_stream m = {.n = 3};
	struct th_export_source src = {
		.label = "rpcs", .next = rpc_next, .ctx = &m, .is_nameless = true};
	struct th_export_config cfg;
	struct th_export_counters ctr;

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		struct th_trace_rpc *r = &m.r[i];

		nfs3_rpc(r, i, 0x100 + i, 6); /* READ */
		r->count = 8192;
		r->done = i == 0 ? 8192 : 0;
	}
	m.r[1].flags |= TH_TRACE_RPC_STATUS_UNSEEN;
	m.r[2].flags |= TH_TRACE_RPC_DONE_PARTIAL;
	th_export_config_defaults(&cfg);
	cfg.is_rpcs = true;
	for (int f = 0; f < 2; f++) {
		char *buf = NULL, *line;
		size_t size = 0;
		FILE *out = open_memstream(&buf, &size);

		cfg.format = f == 0 ? TH_EXPORT_FORMAT_TEXT : TH_EXPORT_FORMAT_JSON;
		m.i = 0;
		memset(&ctr, 0, sizeof(ctr));
		assert_int_equal(th_export_run(&cfg, &src, 1, out, stderr, &ctr), 0);
		fclose(out);
		line = buf;
		for (unsigned int i = 0; i < 3; i++) {
			char *end = strchr(line, '\n');

			assert_non_null(end);
			*end = '\0';
			assert_non_null(strstr(line, f == 0 ? want_text[i] : want_json[i]));
			if (f == 0)
				assert_true((strstr(line, "done=") != NULL) == has_done[i]);
			else
				assert_true((strstr(line, "\"done\":null") == NULL) == has_done[i]);
			line = end + 1;
		}
		free(buf);
	}
}

/*
 * Listings: a READDIRPLUS counted whole has done=, a READDIR the capture kept only
 * part of has done_min= (the entries before the cut) and no done=, as the capture's
 * RPC log writes them; a failed listing has neither.
 */
static void
test_rpc_listing_count(void **state)
{
	static const char *const want_text[] = {" done=40", " done_min=6", " 0x00000202 "};
	static const char *const want_csv[] = {",40,,", ",,6,", ",,,"};
	static const char *const want_json[] = {
		"\"done\":40,\"done_min\":null",
		"\"done\":null,\"done_min\":6",
		"\"done\":null,\"done_min\":null",
	};
	struct rpc_stream m = {.n = 3};
	struct th_export_source src = {
		.label = "rpcs", .next = rpc_next, .ctx = &m, .is_nameless = true};
	struct th_export_config cfg;
	struct th_export_counters ctr;

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		struct th_trace_rpc *r = &m.r[i];

		nfs3_rpc(r, i, 0x200 + i, i == 0 ? 17 : 16); /* READDIRPLUS, READDIR */
		r->count = 8192;
	}
	m.r[0].done = 40;
	m.r[1].done = 6;
	m.r[1].flags |= TH_TRACE_RPC_DONE_PARTIAL;
	m.r[2].status = 2; /* NOENT */
	th_export_config_defaults(&cfg);
	cfg.is_rpcs = true;
	for (int f = 0; f < 3; f++) {
		const char *const *want = f == 0 ? want_text : f == 1 ? want_csv : want_json;
		char *buf = NULL, *line;
		size_t size = 0;
		FILE *out = open_memstream(&buf, &size);

		cfg.format = f == 0   ? TH_EXPORT_FORMAT_TEXT
			     : f == 1 ? TH_EXPORT_FORMAT_CSV
				      : TH_EXPORT_FORMAT_JSON;
		m.i = 0;
		memset(&ctr, 0, sizeof(ctr));
		assert_int_equal(th_export_run(&cfg, &src, 1, out, stderr, &ctr), 0);
		fclose(out);
		line = buf;
		if (f == 1) {
			/* The header names the column, after done. */
			assert_non_null(strstr(line, ",count,done,done_min,size,"));
			line = strchr(line, '\n') + 1;
		}
		for (unsigned int i = 0; i < 3; i++) {
			char *end = strchr(line, '\n');

			assert_non_null(end);
			*end = '\0';
			assert_non_null(strstr(line, want[i]));
			if (f == 0 && i != 1)
				assert_null(strstr(line, "done_min"));
			if (f == 0 && i == 2)
				assert_null(strstr(line, "done"));
			line = end + 1;
		}
		free(buf);
	}
}

/* The export's text line is byte for byte the session log's (th_sess_record_format). */
static void
test_text_matches_session_format(void **state)
{
	struct th_trace_open o;
	struct th_sess_record r;
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char a[1024];

	(void)state;
	th_export_config_defaults(&cfg);
	for (int v6 = 0; v6 < 2; v6++) {
		struct mem m = {.label = "one"};
		struct mem *mems[] = {&m};
		char *out;

		memset(&o, 0, sizeof(o));
		o.open_ns = 690691919ull * S + 593442123;
		o.close_ns = o.open_ns + 17734567;
		addr4(&o.server, 192, 168, 200, 254);
		if (v6) {
			memset(&o.server, 0, sizeof(o.server));
			o.server.b[0] = 0x20, o.server.b[1] = 0x01, o.server.b[2] = 0x0d;
			o.server.b[3] = 0xb8, o.server.b[15] = 1;
		}
		addr4(&o.client, 10, 1, 0, 3);
		o.uid = 321;
		o.dir = (uint8_t)v6;
		o.fh_len = 64;
		for (int i = 0; i < 64; i++)
			o.fh[i] = (uint8_t)(i * 37);
		o.transferred = 18446744073709551615ull;
		o.size = 24576;
		memset(&r, 0, sizeof(r));
		r.open_ns = o.open_ns, r.close_ns = o.close_ns, r.server = o.server;
		r.client = o.client, r.uid = o.uid, r.dir = o.dir, r.fh_len = o.fh_len;
		memcpy(r.fh, o.fh, 64);
		r.transferred = o.transferred, r.size = o.size;
		th_sess_record_format(&r, a, sizeof(a));
		m.opens[m.no++] = o;
		m.types[m.n++] = TH_TRACE_OPEN;
		out = run(&cfg, mems, 1, &ctr, NULL);
		assert_int_equal(ctr.records_out, 1);
		assert_string_equal(out, a);
		free(out);
	}
}

/* Every octet value, in each position of both addresses, is written as the session log writes it.
 */
static void
test_every_octet_matches_session_format(void **state)
{
	struct th_export_config cfg;
	struct th_export_counters ctr;
	struct th_sess_record r;
	char a[1024];

	(void)state;
	th_export_config_defaults(&cfg);
	for (unsigned int v = 0; v < 256; v += 4) {
		struct mem m = {.label = "one"};
		struct mem *mems[] = {&m};
		struct th_trace_open *o;
		char *out;

		o = add_open(&m, 100 * S, 0, 1001, 1);
		addr4(&o->server, (uint8_t)v, (uint8_t)(v + 1), (uint8_t)(v + 2), (uint8_t)(v + 3));
		addr4(&o->client, (uint8_t)(v + 3), (uint8_t)(v + 2), (uint8_t)(v + 1), (uint8_t)v);
		memset(&r, 0, sizeof(r));
		r.open_ns = o->open_ns, r.close_ns = o->close_ns, r.server = o->server;
		r.client = o->client, r.uid = o->uid, r.fh_len = o->fh_len;
		memcpy(r.fh, o->fh, o->fh_len);
		r.transferred = o->transferred, r.size = o->size;
		th_sess_record_format(&r, a, sizeof(a));
		out = run(&cfg, mems, 1, &ctr, NULL);
		assert_string_equal(out, a);
		free(out);
	}
}

/* Three streams (lcores) interleaved in time come out as one sorted stream; equal times
 * keep the order the streams were given in. */
static void
test_merge_sorted(void **state)
{
	struct mem a = {.label = "a"}, b = {.label = "b"}, c = {.label = "c"};
	struct mem *mems[] = {&a, &b, &c};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char *out;

	(void)state;
	for (int i = 0; i < 5; i++) {
		add_open(&a, (uint64_t)(100 + 3 * i) * S, 1, 1001, 1);
		add_open(&b, (uint64_t)(101 + 3 * i) * S, 2, 1002, 2);
		add_open(&c, (uint64_t)(102 + 3 * i) * S, 3, 1003, 3);
	}
	add_open(&c, 200 * S, 3, 1003, 3);
	add_open(&a, 200 * S, 1, 1001, 1);
	th_export_config_defaults(&cfg);
	cfg.window_ns = 0;
	out = run(&cfg, mems, 3, &ctr, NULL);
	assert_int_equal(ctr.records_in, 17);
	assert_int_equal(ctr.records_out, 17);
	assert_int_equal(ctr.out_of_order, 0);
	{
		char *line = out;
		uint64_t prev = 0;

		for (int i = 0; i < 17; i++) {
			uint64_t t = strtoull(line, NULL, 10);

			assert_true(t >= prev);
			prev = t;
			line = strchr(line, '\n') + 1;
		}
	}
	/* The two records at 200 s: stream a (given first) before stream c. */
	assert_non_null(
		strstr(out, "200.000000 | 1500 | read | 10.0.0.1:01beef01 | 10.1.0.1.1001 | "
			    "8192 | 8192\n200.000000 | 1500 | read | 10.0.0.1:03beef01 | "
			    "10.1.0.3.1003"));
	free(out);
}

/* A stream of @p ctx's count opens, one a second, made as they are asked for. */
static int
many_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	unsigned int *left = ctx;
	struct mem one = {.label = "one"};

	(void)name, (void)rpc;
	if (*left == 0)
		return 0;
	(*left)--;
	*open = *add_open(&one, (uint64_t)(1000000 - *left) * S, 1, 1001, (uint8_t)*left);
	*type = TH_TRACE_OPEN;
	return 1;
}

/*
 * An output that fails (a full disk) ends the run with its errno, at the first write that
 * fails: a week's trace exported to a full disk used to be read and formatted to its end
 * first, and the summary called every record written.
 */
static void
test_output_failure_stops(void **state)
{
	unsigned int left = 200000;
	struct th_export_source src = {.label = "many", .next = many_next, .ctx = &left};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	FILE *out = fopen("/dev/full", "w");

	(void)state;
	if (out == NULL)
		skip();
	th_export_config_defaults(&cfg);
	cfg.window_ns = 0;
	assert_int_equal(th_export_run(&cfg, &src, 1, out, stderr, &ctr), -ENOSPC);
	assert_true(ctr.records_in < 20000);
	assert_true(left > 180000);
	fclose(out);
}

/* A stream whose opens arrive out of order (written at close) is sorted within the window;
 * what comes later than the window is still written, and counted. */
static void
test_merge_window(void **state)
{
	struct mem a = {.label = "a"};
	struct mem *mems[] = {&a};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char *out;

	(void)state;
	add_open(&a, 100 * S, 1, 1, 1);
	add_open(&a, 110 * S, 1, 1, 1);
	add_open(&a, 120 * S, 1, 1, 1);
	add_open(&a, 103 * S, 1, 1, 1);
	th_export_config_defaults(&cfg);
	cfg.window_ns = 60 * S;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.out_of_order, 0);
	assert_non_null(strstr(out, "100.000000"));
	assert_true(strstr(out, "100.000000") < strstr(out, "103.000000"));
	assert_true(strstr(out, "103.000000") < strstr(out, "110.000000"));
	assert_true(strstr(out, "110.000000") < strstr(out, "120.000000"));
	free(out);
	/* 103 arrives 200 records and 200 s after 110: with a 5 s window 110 has long gone
	 * out (a stream reads ahead in batches, never the whole stream). */
	{
		struct mem b = {.label = "b"};
		struct mem *mems_b[] = {&b};
		unsigned int i;

		add_open(&b, 100 * S, 1, 1, 1);
		for (i = 0; i < 200; i++)
			add_open(&b, (110 + i) * S, 1, 1, 1);
		add_open(&b, 103 * S, 1, 1, 1);
		cfg.window_ns = 5 * S;
		out = run(&cfg, mems_b, 1, &ctr, NULL);
		assert_int_equal(ctr.records_out, 202);
		assert_int_equal(ctr.out_of_order, 1);
		assert_true(strstr(out, "110.000000") < strstr(out, "103.000000"));
		free(out);
	}
}

/*
 * "late" counts records written after a later one: one the filters drop is not written, and
 * one written after only dropped ones is in order. The summary would otherwise send the user
 * to a larger --window for output that is in order.
 */
static void
test_merge_window_filtered(void **state)
{
	struct mem b = {.label = "b"};
	struct mem *mems[] = {&b};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	unsigned int i;
	char *out;

	(void)state;
	/* As in test_merge_window: 103 comes 200 s after 110, with a 5 s window. */
	add_open(&b, 100 * S, 1, 1, 1);
	for (i = 0; i < 200; i++)
		add_open(&b, (110 + i) * S, 1, 1, 1);
	add_open(&b, 103 * S, 1, 2, 1);
	th_export_config_defaults(&cfg);
	cfg.window_ns = 5 * S;
	/* The late record is filtered out: what is written is in order. */
	cfg.uids[cfg.uids_count++] = 1;
	free(run(&cfg, mems, 1, &ctr, NULL));
	assert_int_equal(ctr.records_out, 201);
	assert_int_equal(ctr.out_of_order, 0);
	cfg.uids_count = 0;
	cfg.from_ns = 105 * S;
	free(run(&cfg, mems, 1, &ctr, NULL));
	assert_int_equal(ctr.records_out, 200);
	assert_int_equal(ctr.out_of_order, 0);
	/* The records it comes after are filtered out: 100, then 103, in order. */
	cfg.from_ns = 0;
	cfg.to_ns = 105 * S;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 2);
	assert_int_equal(ctr.out_of_order, 0);
	assert_true(strstr(out, "100.000000") < strstr(out, "103.000000"));
	free(out);
	/* Written after a later record it is late, as without filters. */
	cfg.to_ns = 0;
	cfg.from_ns = 101 * S;
	free(run(&cfg, mems, 1, &ctr, NULL));
	assert_int_equal(ctr.records_out, 201);
	assert_int_equal(ctr.out_of_order, 1);
}

/* A bare open at @p t, for the sources below. @return 1 (a record). */
static int
bare_open(struct th_trace_open *open, int *type, uint64_t t)
{
	memset(open, 0, sizeof(*open));
	open->open_ns = t;
	open->close_ns = t + 1;
	addr4(&open->server, 10, 0, 0, 1);
	addr4(&open->client, 10, 1, 0, 1);
	*type = TH_TRACE_OPEN;
	return 1;
}

/* Opens whose times are given in the order a stream writes them. */
struct order_stream {
	uint64_t t[3000];
	unsigned int n, i;
};

static int
order_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct order_stream *m = ctx;

	(void)name, (void)rpc;
	if (m->i >= m->n)
		return 0;
	return bare_open(open, type, m->t[m->i++]);
}

/*
 * Records written some way after their place (as RPC records are, at the reply): near ones
 * move into place in the ring, far ones go through the heap, at the ring's start and
 * across its wrap; either way every record comes out once, in time order.
 */
static void
test_merge_displaced(void **state)
{
	static const unsigned int back[] = {1, 2, 7, 63, 64, 65, 100, 999, 2000};
	static struct order_stream m;
	struct th_export_source src = {.label = "displaced", .next = order_next, .ctx = &m};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char *buf = NULL;
	size_t size = 0;
	FILE *out;

	(void)state;
	m.n = 3000;
	for (unsigned int k = 0; k < m.n; k++)
		m.t[k] = 1000 * S + k * (S / 1000);
	/* Record p written d places late: the ones between move up. The first is late too. */
	for (unsigned int j = 0; j < sizeof(back) / sizeof(back[0]); j++) {
		unsigned int p = j == 0 ? 0 : 150 + 300 * j, d = back[j];
		uint64_t late = m.t[p];

		if (p + d >= m.n)
			d = m.n - 1 - p;
		memmove(&m.t[p], &m.t[p + 1], d * sizeof(m.t[0]));
		m.t[p + d] = late;
	}
	for (unsigned int mb = 0; mb < 2; mb++) {
		const char *line;
		uint64_t prev = 0;
		unsigned int lines = 0;

		th_export_config_defaults(&cfg);
		/* A budget of 1024 records a stream: the ring wraps while they pass. */
		cfg.window_bytes = mb == 0 ? cfg.window_bytes : 1;
		m.i = 0;
		out = open_memstream(&buf, &size);
		assert_int_equal(th_export_run(&cfg, &src, 1, out, stderr, &ctr), 0);
		fclose(out);
		assert_int_equal(ctr.records_out, 3000);
		assert_int_equal(ctr.out_of_order, 0);
		for (line = buf; *line != '\0'; line = strchr(line, '\n') + 1, lines++) {
			uint64_t t = strtoull(line, NULL, 10) * S +
				     strtoull(strchr(line, '.') + 1, NULL, 10) * 1000;

			assert_true(t > prev);
			prev = t;
		}
		assert_int_equal(lines, 3000);
		free(buf);
		buf = NULL;
	}
}

/* A stream of 3000 opens 1 ms apart, the one at @p late_at written last-but-500 (time order
 * broken by 2.5 s, well inside a minute's window). */
struct ms_stream {
	unsigned int i, late_at;
};

static int
ms_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct ms_stream *m = ctx;
	unsigned int k;

	(void)name, (void)rpc;
	if (m->i >= 3000)
		return 0;
	k = m->i++;
	/* Position 2500 carries the late record; the others shift down to make room. */
	if (k == 2500)
		k = m->late_at;
	else if (k >= m->late_at && k < 2500)
		k++;
	return bare_open(open, type, 1000 * S + k * (S / 1000));
}

/*
 * The window holds records back within a memory budget: a stream at its share lets its
 * earliest record go before the window has passed, and says so; one older than those
 * that comes later is written late and counted. Nothing is lost either way.
 */
static void
test_merge_window_memory(void **state)
{
	struct ms_stream m = {.late_at = 100};
	struct th_export_source src = {
		.label = "ms", .next = ms_next, .ctx = &m}; /* no names pass */
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char *buf = NULL, *late, *before;
	size_t size = 0;
	FILE *out;

	(void)state;
	th_export_config_defaults(&cfg);
	for (int small = 0; small < 2; small++) {
		/* Small: 1 byte, the least the pipeline allows (1024 records held). */
		cfg.window_bytes = small ? 1 : 64u << 20;
		m.i = 0;
		memset(&ctr, 0, sizeof(ctr));
		out = open_memstream(&buf, &size);
		assert_int_equal(th_export_run(&cfg, &src, 1, out, stderr, &ctr), 0);
		fclose(out);
		assert_int_equal(ctr.records_in, 3000);
		assert_int_equal(ctr.records_out, 3000);
		late = strstr(buf, "1000.100000 ");
		before = strstr(buf, "1000.099000 ");
		assert_non_null(late);
		assert_non_null(before);
		if (small) {
			/* 1024 held: all but the last 1023 left before the stream ended (it finds
			 * its end trying to read with room for one more). */
			assert_int_equal(ctr.released_early, 3000 - 1023);
			assert_int_equal(ctr.out_of_order, 1);
			assert_true(late > strstr(buf, "1001.400000 "));
		} else {
			assert_int_equal(ctr.released_early, 0);
			assert_int_equal(ctr.out_of_order, 0);
			assert_true(late > before && late < strstr(buf, "1000.101000 "));
		}
		free(buf);
		buf = NULL;
	}
}

/*
 * The name join keeps within its memory: past the budget a name is refused (-ENOSPC) and
 * the ones kept still resolve; without a budget worth speaking of all are kept.
 */
static void
test_names_budget(void **state)
{
	struct th_trace_name r;
	struct th_addr server;
	char path[64], want[16];
	unsigned int kept[2] = {0, 0};

	(void)state;
	addr4(&server, 10, 0, 0, 1);
	for (int big = 0; big < 2; big++) {
		struct th_export_names *n = th_export_names_create(big ? 1ull << 40 : 256u << 10);

		assert_non_null(n);
		for (unsigned int i = 0; i < 5000; i++) {
			int rc;

			memset(&r, 0, sizeof(r));
			r.server = server;
			r.from_ns = 1 * S;
			r.fh_len = 32;
			memcpy(r.fh, &i, sizeof(i));
			r.name_len = (uint16_t)snprintf(r.name, sizeof(r.name), "file-%u", i);
			rc = th_export_names_add(n, &r);
			if (rc == 0 && kept[big] == i)
				kept[big]++;
			else
				assert_int_equal(rc, -ENOSPC);
		}
		for (unsigned int i = 0; i < 5000; i += 7) {
			uint8_t fh[32] = {0};
			size_t len;

			memcpy(fh, &i, sizeof(i));
			len = th_export_names_path(
				n, &server, fh, sizeof(fh), 2 * S, path, sizeof(path), NULL);
			snprintf(want, sizeof(want), "file-%u", i);
			if (i < kept[big])
				assert_non_null(strstr(path, want));
			else
				assert_int_equal(len, 0);
		}
		th_export_names_free(n);
	}
	/* About 200 bytes a name: 256 KiB holds some hundreds to a thousand or so. */
	assert_in_range(kept[0], 300, 1300);
	assert_int_equal(kept[1], 5000);
}

static void
add_name_rec(struct th_export_names *n, uint8_t fh0, uint8_t dir0, uint64_t from, uint64_t to,
	const char *name)
{
	struct th_trace_name r;

	memset(&r, 0, sizeof(r));
	addr4(&r.server, 10, 0, 0, 1);
	r.from_ns = from;
	r.to_ns = to;
	r.fh_len = 4;
	r.fh[0] = fh0, r.fh[1] = 0xbe, r.fh[2] = 0xef, r.fh[3] = 0x01;
	if (dir0 != 0) {
		r.dir_fh_len = 4;
		r.dir_fh[0] = dir0, r.dir_fh[1] = 0xbe, r.dir_fh[2] = 0xef, r.dir_fh[3] = 0x01;
	}
	r.name_len = (uint16_t)strlen(name);
	memcpy(r.name, name, r.name_len + 1);
	assert_int_equal(th_export_names_add(n, &r), 0);
}

/* /export (0x0e) holds a directory (0x0d) named home, homes from 250 s, and also alt from
 * 400 s (the latest name to start wins); it holds x (0x01); /export is renamed at 600 s.
 * It also holds tmp (0x0c) until 300 s, when its name goes unseen; tmp holds y (0x02). */
static struct th_export_names *
renamed_tree(void)
{
	struct th_export_names *n = th_export_names_create(1ull << 30);

	assert_non_null(n);
	add_name_rec(n, 0x0e, 0, 10 * S, 600 * S, "/export");
	add_name_rec(n, 0x0e, 0, 600 * S, 0, "/export2");
	add_name_rec(n, 0x0d, 0x0e, 10 * S, 250 * S, "home");
	add_name_rec(n, 0x0d, 0x0e, 250 * S, 0, "homes");
	add_name_rec(n, 0x0d, 0x0e, 400 * S, 0, "alt");
	add_name_rec(n, 0x01, 0x0d, 10 * S, 0, "x");
	add_name_rec(n, 0x0c, 0x0e, 10 * S, 300 * S, "tmp");
	add_name_rec(n, 0x02, 0x0c, 10 * S, 0, "y");
	return n;
}

/*
 * The mode export prints beside a path is the file's own name record's, of the
 * name valid at the record's time; none where no name (or no mode) is known.
 */
static void
test_path_mode(void **state)
{
	struct th_export_names *n = renamed_tree();
	const uint8_t fh[4] = {0x01, 0xbe, 0xef, 0x01};
	static const uint8_t key[32] = "a key of thirty-two bytes here.";
	struct th_export_anon *an = th_export_anon_create(key, sizeof(key), false);
	struct th_trace_name r;
	struct th_addr server;
	char a[256], ap[1024];
	uint32_t mode = 1;
	size_t alen;

	(void)state;
	assert_non_null(an);
	addr4(&server, 10, 0, 0, 1);
	/* x's name records have no mode: none, though the path is known. */
	assert_true(
		th_export_names_path(n, &server, fh, sizeof(fh), 100 * S, a, sizeof(a), &mode) > 0);
	assert_int_equal(mode, 0);
	/* A second file, z in /export, chmod'ed at 200 s (a new name record). */
	memset(&r, 0, sizeof(r));
	r.server = server;
	r.fh_len = 4;
	r.fh[0] = 0x03, r.fh[1] = 0xbe, r.fh[2] = 0xef, r.fh[3] = 0x01;
	r.dir_fh_len = 4;
	r.dir_fh[0] = 0x0e, r.dir_fh[1] = 0xbe, r.dir_fh[2] = 0xef, r.dir_fh[3] = 0x01;
	r.name_len = 1;
	r.name[0] = 'z';
	r.from_ns = 10 * S;
	r.to_ns = 200 * S;
	r.mode = 0100644;
	assert_int_equal(th_export_names_add(n, &r), 0);
	r.from_ns = 200 * S;
	r.to_ns = 0;
	r.mode = 0100600;
	assert_int_equal(th_export_names_add(n, &r), 0);
	for (int pass = 0; pass < 2; pass++) { /* the second time from the kept path */
		th_export_names_path(n, &server, r.fh, 4, 150 * S, a, sizeof(a), &mode);
		assert_string_equal(a, "/export/z");
		assert_int_equal(mode, 0100644);
		th_export__names_path_anon(n, an, &server, r.fh, 4, 250 * S, a, sizeof(a), ap,
			sizeof(ap), &alen, &mode);
		assert_int_equal(mode, 0100600);
	}
	/* Before any name: no path, no mode. */
	mode = 1;
	assert_int_equal(th_export_names_path(n, &server, r.fh, 4, 5 * S, a, sizeof(a), &mode), 0);
	assert_int_equal(mode, 0);
	th_export_names_free(n);
	th_export_anon_free(an);
}

/*
 * A LOOKUP of "." names the directory inside itself, one of ".." names the parent inside
 * its child (captures wrote such names): a path never goes through them, so a file under a
 * mount root that was looked up as "." is still /export/home/x, not "./././..." 64 deep.
 * Names that go round for another reason (a rename the capture missed) end the path where
 * they come back.
 */
static void
test_path_dot_names(void **state)
{
	struct th_export_names *n = th_export_names_create(1ull << 30);
	const uint8_t fh[4] = {0x01, 0xbe, 0xef, 0x01}, fh_b[4] = {0x0b, 0xbe, 0xef, 0x01};
	struct th_addr server;
	char a[1024];

	(void)state;
	assert_non_null(n);
	addr4(&server, 10, 0, 0, 1);
	add_name_rec(n, 0x0e, 0, 10 * S, 0, "/export");
	add_name_rec(n, 0x0d, 0x0e, 10 * S, 0, "home");
	add_name_rec(n, 0x01, 0x0d, 10 * S, 0, "x");
	add_name_rec(n, 0x0e, 0x0e, 20 * S, 0, ".");
	add_name_rec(n, 0x0e, 0x0d, 30 * S, 0, "..");
	add_name_rec(n, 0x0d, 0x0d, 40 * S, 0, ".");
	for (int pass = 0; pass < 2; pass++) { /* the second time from the kept path */
		th_export_names_path(n, &server, fh, sizeof(fh), 50 * S, a, sizeof(a), NULL);
		assert_string_equal(a, "/export/home/x");
	}
	/* b in a, a in b (their old names gone unseen): a path of each once. */
	add_name_rec(n, 0x0a, 0x0b, 10 * S, 0, "a");
	add_name_rec(n, 0x0b, 0x0a, 10 * S, 0, "b");
	th_export_names_path(n, &server, fh_b, sizeof(fh_b), 50 * S, a, sizeof(a), NULL);
	assert_string_equal(a, "a/b");
	th_export_names_free(n);
}

/*
 * A file's path is kept for its next lookups, but never past a rename of any directory
 * above it or a name that starts later: asked in time order, out of order and again, the
 * table gives what a fresh table asked once gives.
 */
static void
test_path_cache_follows_renames(void **state)
{
	static const unsigned int at[] = {
		100, 120, 249, 250, 300, 399, 400, 500, 50, 510, 599, 600, 700, 20, 5, 650};
	struct th_export_names *kept = renamed_tree();
	const uint8_t fh[4] = {0x01, 0xbe, 0xef, 0x01}, fh_y[4] = {0x02, 0xbe, 0xef, 0x01};
	struct th_addr server;
	char a[256], b[256];

	(void)state;
	addr4(&server, 10, 0, 0, 1);
	for (unsigned int i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct th_export_names *fresh = renamed_tree();
		uint64_t t = at[i] * S;

		th_export_names_path(kept, &server, fh, sizeof(fh), t, a, sizeof(a), NULL);
		th_export_names_path(fresh, &server, fh, sizeof(fh), t, b, sizeof(b), NULL);
		assert_string_equal(a, b);
		th_export_names_path(kept, &server, fh_y, sizeof(fh_y), t, a, sizeof(a), NULL);
		th_export_names_path(fresh, &server, fh_y, sizeof(fh_y), t, b, sizeof(b), NULL);
		assert_string_equal(a, b);
		th_export_names_free(fresh);
	}
	/* With pseudonyms too: the path and its pseudonym, kept together. */
	{
		static const uint8_t key[32] = "a key of thirty-two bytes here.";
		struct th_export_anon *an = th_export_anon_create(key, sizeof(key), false);
		struct th_export_names *akept = renamed_tree();
		char ap[1024], bp[1024];
		size_t alen, blen;
		uint32_t amode, bmode;

		assert_non_null(an);
		for (unsigned int i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			struct th_export_names *fresh = renamed_tree();
			uint64_t t = at[i] * S;

			th_export__names_path_anon(akept, an, &server, fh, sizeof(fh), t, a,
				sizeof(a), ap, sizeof(ap), &alen, &amode);
			th_export__names_path_anon(fresh, an, &server, fh, sizeof(fh), t, b,
				sizeof(b), bp, sizeof(bp), &blen, &bmode);
			assert_string_equal(a, b);
			assert_string_equal(ap, bp);
			assert_int_equal(alen, blen);
			assert_int_equal(alen, strlen(ap));
			assert_int_equal(amode, bmode);
			th_export_names_free(fresh);
		}
		th_export_names_free(akept);
		th_export_anon_free(an);
	}
	{
		static const struct {
			bool is_y;
			unsigned int t;
			const char *want;
		} known[] = {{true, 299, "/export/tmp/y"}, {true, 300, "y"},
			{false, 300, "/export/homes/x"}, {false, 450, "/export/alt/x"},
			{false, 100, "/export/home/x"}, {false, 700, "/export2/alt/x"},
			{false, 5, ""}};

		for (unsigned int i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			th_export_names_path(kept, &server, known[i].is_y ? fh_y : fh, sizeof(fh),
				known[i].t * S, a, sizeof(a), NULL);
			assert_string_equal(a, known[i].want);
		}
	}
	th_export_names_free(kept);
}

/*
 * A damaged stream ends at the damage with the records before it kept; the others go on.
 * Saying which one and why is the caller's (tracehound export: tests/export).
 */
static void
test_damaged_stream(void **state)
{
	struct mem a = {.label = "box1/opens-0.lz4"}, b = {.label = "box2/opens-0.lz4"};
	struct mem *mems[] = {&a, &b};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char *out, *err;

	(void)state;
	for (int i = 0; i < 4; i++) {
		add_open(&a, (uint64_t)(10 + i) * S, 1, 1, 1);
		add_open(&b, (uint64_t)(10 + i) * S, 2, 2, 2);
	}
	a.fail_rc = -EBADMSG;
	a.fail_at = 2;
	th_export_config_defaults(&cfg);
	out = run(&cfg, mems, 2, &ctr, &err);
	assert_int_equal(ctr.records_in, 6);
	assert_int_equal(ctr.records_out, 6);
	assert_int_equal(a.reads, 2);
	assert_int_equal(b.reads, 4);
	assert_string_equal(err, "");
	free(out);
	free(err);
}

static void
test_filters(void **state)
{
	struct mem a = {.label = "a"};
	struct mem *mems[] = {&a};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	static const uint8_t root[4] = {9, 9, 9, 9};
	char *out;

	(void)state;
	add_open(&a, 100 * S, 1, 1001, 1);
	add_open(&a, 200 * S, 2, 1002, 2)->dir = 1;
	add_open(&a, 300 * S, 3, 1003, 3);
	addr4(&add_open(&a, 400 * S, 4, 1004, 4)->server, 10, 0, 1, 1);
	add_name(&a, 50 * S, 0, root, 4, 3, "report.pdf");

	th_export_config_defaults(&cfg);
	cfg.from_ns = 200 * S;
	cfg.to_ns = 400 * S;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 2);
	assert_int_equal(ctr.filtered, 2);
	assert_non_null(strstr(out, "200.000000"));
	assert_non_null(strstr(out, "300.000000"));
	free(out);

	th_export_config_defaults(&cfg);
	assert_int_equal(th_export_net_parse("10.0.1.0/24", &cfg.servers[0]), 0);
	cfg.servers_count = 1;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 1);
	assert_non_null(strstr(out, "400.000000 | 1500 | read | 10.0.1.1:04beef01"));
	free(out);

	th_export_config_defaults(&cfg);
	assert_int_equal(th_export_net_parse("10.1.0.2", &cfg.clients[0]), 0);
	assert_int_equal(th_export_net_parse("10.1.0.3", &cfg.clients[1]), 0);
	cfg.clients_count = 2;
	cfg.direction = 0;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 1);
	assert_non_null(strstr(out, "10.1.0.3.1003"));
	free(out);

	th_export_config_defaults(&cfg);
	cfg.uids[0] = 1004;
	cfg.uids[1] = 1001;
	cfg.uids_count = 2;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 2);
	assert_non_null(strstr(out, "10.1.0.1.1001"));
	assert_non_null(strstr(out, "10.1.0.4.1004"));
	free(out);

	/* --file: a handle in hex (any case), or part of the joined name. */
	th_export_config_defaults(&cfg);
	cfg.files[0] = "02BEEF01";
	cfg.files[1] = "port.p";
	cfg.files_count = 2;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 2);
	assert_non_null(strstr(out, ":02beef01"));
	assert_non_null(strstr(out, ":03beef01"));
	free(out);
}

/* Names come from the record valid at the open's time; directories build the path. */
static void
test_name_join(void **state)
{
	struct mem a = {.label = "opens"}, n = {.label = "names"};
	struct mem *mems[] = {&a, &n};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	static const uint8_t home[4] = {0x0d, 0xbe, 0xef, 0x01}, root[4] = {0x0e, 0xbe, 0xef, 0x01};
	char *out;

	(void)state;
	add_open(&a, 100 * S, 1, 1001, 1);
	add_open(&a, 300 * S, 1, 1001, 1);
	add_open(&a, 400 * S, 1, 1001, 2);
	add_name(&n, 10 * S, 0, NULL, 0, 0x0e, "/export");
	add_name(&n, 10 * S, 0, root, 4, 0x0d, "home");
	add_name(&n, 50 * S, 200 * S, home, 4, 1, "draft.txt");
	add_name(&n, 200 * S, 0, home, 4, 1, "final, \"v2\".txt");
	th_export_config_defaults(&cfg);
	cfg.format = TH_EXPORT_FORMAT_CSV;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_int_equal(ctr.names_in, 4);
	assert_string_equal(out,
		"open_time,close_time,command_us,direction,server,handle,client,uid,gid,"
		"nfs_version,cache_hit,directory,ops,transferred,seq_bytes,size,path,mode\n"
		"100.000000000,100.001500000,1500,read,10.0.0.1,01beef01,10.1.0.1,1001,100,3,0,0,3,"
		"8192,8192,8192,/export/home/draft.txt,\n"
		"300.000000000,300.001500000,1500,read,10.0.0.1,01beef01,10.1.0.1,1001,100,3,0,0,3,"
		"8192,8192,8192,\"/export/home/final, \"\"v2\"\".txt\",\n"
		"400.000000000,400.001500000,1500,read,10.0.0.1,02beef01,10.1.0.1,1001,100,3,0,0,3,"
		"8192,8192,8192,,\n");
	free(out);

	cfg.format = TH_EXPORT_FORMAT_JSON;
	cfg.from_ns = 300 * S;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_string_equal(out,
		"{\"open_time\":300.000000000,\"close_time\":300.001500000,\"command_us\":1500,"
		"\"direction\":\"read\",\"server\":\"10.0.0.1\",\"handle\":\"01beef01\","
		"\"client\":\"10.1.0.1\",\"uid\":1001,\"gid\":100,\"nfs_version\":3,"
		"\"cache_hit\":false,\"directory\":false,\"ops\":3,\"transferred\":8192,"
		"\"seq_bytes\":8192,\"size\":8192,\"path\":\"/export/home/final, "
		"\\\"v2\\\".txt\",\"mode\":null}\n"
		"{\"open_time\":400.000000000,\"close_time\":400.001500000,\"command_us\":1500,"
		"\"direction\":\"read\",\"server\":\"10.0.0.1\",\"handle\":\"02beef01\","
		"\"client\":\"10.1.0.1\",\"uid\":1001,\"gid\":100,\"nfs_version\":3,"
		"\"cache_hit\":false,\"directory\":false,\"ops\":3,\"transferred\":8192,"
		"\"seq_bytes\":8192,\"size\":8192,\"path\":null,\"mode\":null}\n");
	free(out);

	/* --no-names with --file: the join picks the opens, their path columns stay empty. */
	cfg.format = TH_EXPORT_FORMAT_CSV;
	cfg.from_ns = 0;
	cfg.files[0] = "final";
	cfg.files_count = 1;
	cfg.is_names_on = false;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_string_equal(out,
		"open_time,close_time,command_us,direction,server,handle,client,uid,gid,"
		"nfs_version,cache_hit,directory,ops,transferred,seq_bytes,size,path,mode\n"
		"300.000000000,300.001500000,1500,read,10.0.0.1,01beef01,10.1.0.1,1001,100,3,0,0,3,"
		"8192,8192,8192,,\n");
	free(out);
	cfg.files_count = 0;
	cfg.is_names_on = true;

	/* A NUL in a name (the wire allows one): the field is quoted, so a reader stopping at
	 * the NUL never meets the comma after it outside quotes. */
	memcpy(n.names[3].name, "v2\0,x", 6);
	n.names[3].name_len = 5;
	cfg.from_ns = 300 * S;
	cfg.to_ns = 301 * S;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_non_null(strstr(out, ",8192,\"/export/home/v2"));
	free(out);
	strcpy(n.names[3].name, "final, \"v2\".txt");
	n.names[3].name_len = (uint16_t)strlen(n.names[3].name);
	cfg.to_ns = 0;
	cfg.format = TH_EXPORT_FORMAT_JSON;

	/* No memory for names: none kept, each counted, every record still written. */
	cfg.names_bytes = 1;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_int_equal(ctr.names_in, 4);
	assert_int_equal(ctr.names_dropped, 4);
	assert_int_equal(ctr.records_out, 2);
	assert_null(strstr(out, "final"));
	free(out);
}

/* A names-only stream is read once, in the names pass, up to its damage; without a names pass
 * (text) the merge pass reads it to count the names. */
static void
test_names_only_stream(void **state)
{
	struct mem a = {.label = "opens"}, n = {.label = "names-1.lz4", .is_names_only = true};
	struct mem *mems[] = {&a, &n};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	static const uint8_t root[4] = {0x0e, 0xbe, 0xef, 0x01};
	char *out, *err;

	(void)state;
	add_open(&a, 100 * S, 1, 1001, 1);
	add_open(&a, 200 * S, 1, 1001, 2);
	add_name(&n, 10 * S, 0, NULL, 0, 0x0e, "/export");
	add_name(&n, 10 * S, 0, root, 4, 1, "one.txt");
	add_name(&n, 10 * S, 0, root, 4, 2, "two.txt");
	n.fail_rc = -EBADMSG;
	n.fail_at = 2;
	th_export_config_defaults(&cfg);
	cfg.format = TH_EXPORT_FORMAT_CSV;
	out = run(&cfg, mems, 2, &ctr, &err);
	assert_int_equal(n.reads, 2);
	assert_int_equal(ctr.names_in, 2);
	assert_int_equal(ctr.records_out, 2);
	assert_non_null(strstr(out, ",/export/one.txt,\n"));
	assert_non_null(strstr(out, ",8192,,\n")); /* two.txt was after the damage */
	assert_string_equal(err, "");
	free(out);
	free(err);

	cfg.format = TH_EXPORT_FORMAT_TEXT;
	out = run(&cfg, mems, 2, &ctr, &err);
	assert_int_equal(n.reads, 2);
	assert_int_equal(ctr.names_in, 2);
	assert_int_equal(ctr.records_out, 2);
	assert_string_equal(err, "");
	free(out);
	free(err);
}

/* A CSV field without a quote or comma, copied out of line number @p line (1: the first). */
static void
csv_field(const char *out, unsigned int line, unsigned int field, char *buf, size_t size)
{
	const char *p = out;
	size_t n;

	for (unsigned int i = 1; i < line; i++)
		p = strchr(p, '\n') + 1;
	for (unsigned int i = 0; i < field; i++)
		p = strchr(p, ',') + 1;
	n = strcspn(p, ",\n");
	assert_true(n < size);
	memcpy(buf, p, n);
	buf[n] = '\0';
}

/* A path's pseudonym, joined from its names' pseudonyms (each computed once), is what
 * th_export_anon_path() makes of the whole path: short paths, names with '/' in them, and a
 * path too long for the path column (cut, so done the long way). */
static void
test_anon_path_join(void **state)
{
	static const char key[] = "a key of at least sixteen bytes";
	static const uint8_t d[4][4] = {{0x0a, 0xbe, 0xef, 0x01}, {0x0b, 0xbe, 0xef, 0x01},
		{0x0c, 0xbe, 0xef, 0x01}, {0x0d, 0xbe, 0xef, 0x01}};
	struct mem a = {.label = "a"};
	struct mem *mems[] = {&a};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char long_name[TH_TRACE_NAME_MAX + 1], plain_path[1100], anon_path[2100], want[2100];
	char *plain, *anon;

	(void)state;
	memset(long_name, 'x', TH_TRACE_NAME_MAX);
	long_name[TH_TRACE_NAME_MAX] = '\0';
	/* /srv/ -> data/set (a '/' inside a name) -> file: short. */
	add_name(&a, 10 * S, 0, NULL, 0, 0x0a, "/srv/");
	add_name(&a, 10 * S, 0, d[0], 4, 0x0b, "data/set");
	add_name(&a, 10 * S, 0, d[1], 4, 1, "file.txt");
	/* Four directories of 255 bytes and a file: over the 1023 bytes of the path column, cut
	 * in the fourth directory's name. */
	add_name(&a, 10 * S, 0, d[1], 4, 0x0c, long_name);
	add_name(&a, 10 * S, 0, d[2], 4, 0x0d, long_name);
	add_name(&a, 10 * S, 0, d[3], 4, 0x10, long_name);
	add_name(&a, 10 * S, 0, (const uint8_t[4]){0x10, 0xbe, 0xef, 0x01}, 4, 0x11, long_name);
	add_name(&a, 10 * S, 0, (const uint8_t[4]){0x11, 0xbe, 0xef, 0x01}, 4, 2, "tail");
	add_open(&a, 100 * S, 1, 1001, 1);
	add_open(&a, 200 * S, 1, 1001, 2);
	add_open(&a, 300 * S, 1, 1001, 1);
	th_export_config_defaults(&cfg);
	cfg.format = TH_EXPORT_FORMAT_CSV;
	plain = run(&cfg, mems, 1, &ctr, NULL);
	cfg.anon = th_export_anon_create(key, sizeof(key) - 1, false);
	anon = run(&cfg, mems, 1, &ctr, NULL);
	assert_int_equal(ctr.records_out, 3);
	for (unsigned int line = 2; line <= 4; line++) {
		csv_field(plain, line, 16, plain_path, sizeof(plain_path));
		csv_field(anon, line, 16, anon_path, sizeof(anon_path));
		th_export_anon_path(cfg.anon, plain_path, strlen(plain_path), want, sizeof(want));
		assert_string_equal(anon_path, want);
		assert_null(strstr(anon_path, "xx"));
	}
	csv_field(plain, 2, 16, plain_path, sizeof(plain_path));
	assert_string_equal(plain_path, "/srv/data/set/file.txt");
	csv_field(plain, 3, 16, plain_path, sizeof(plain_path));
	assert_int_equal(strlen(plain_path), 1023);
	csv_field(anon, 2, 16, anon_path, sizeof(anon_path));
	assert_int_equal(strlen(anon_path), 4 + 4 * 16);
	th_export_anon_free(cfg.anon);
	free(plain);
	free(anon);
}

/* Cached pseudonyms are the computed ones, also after the tables filled up and gave way. */
static void
test_anon_cache(void **state)
{
	static const char key[] = "0123456789abcdef0123456789abcdef";
	struct th_export_anon *a = th_export_anon_create(key, 32, false), *b;
	struct th_export_anon_counters ac;
	uint32_t first[3];
	uint8_t fh[TH_EXPORT_ANON_FH_SIZE], fh2[TH_EXPORT_ANON_FH_SIZE];
	static const uint8_t handle[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	struct th_addr x, px, q;

	(void)state;
	first[0] = th_export_anon_uid(a, 1000);
	first[1] = th_export_anon_gid(a, 1000);
	th_export_anon_fh(a, handle, sizeof(handle), fh);
	addr4(&x, 192, 168, 7, 10);
	th_export_anon_addr(a, &x, &px);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(th_export_anon_uid(a, 1000), first[0]);
		assert_int_equal(th_export_anon_gid(a, 1000), first[1]);
		th_export_anon_fh(a, handle, sizeof(handle), fh2);
		assert_memory_equal(fh, fh2, sizeof(fh));
		th_export_anon_addr(a, &x, &q);
		assert_memory_equal(&px, &q, sizeof(q));
	}
	/* A handle is a prefix of another: both kept, apart. */
	th_export_anon_fh(a, handle, 8, fh2);
	assert_memory_not_equal(fh, fh2, sizeof(fh));
	th_export_anon_counters(a, &ac);
	assert_int_equal(ac.ids, 2);
	assert_int_equal(ac.fhs, 2);
	assert_int_equal(ac.addrs, 1);
	assert_int_equal(ac.replaced, 0);
	/* Far more users than the table holds: older ones give way and come back the same. */
	for (uint32_t uid = 0; uid < 20000; uid++)
		th_export_anon_uid(a, uid);
	th_export_anon_counters(a, &ac);
	assert_true(ac.replaced > 0);
	first[2] = th_export_anon_uid(a, 0);
	assert_int_equal(th_export_anon_uid(a, 1000), first[0]);
	assert_int_equal(th_export_anon_gid(a, 1000), first[1]);
	/*
	 * Against a new instance (nothing remembered), ids in an order that makes
	 * them share remembered slots: the same pseudonyms, uid and gid apart.
	 */
	b = th_export_anon_create(key, 32, false);
	assert_non_null(b);
	assert_int_equal(th_export_anon_uid(b, 0), first[2]);
	for (uint32_t v = 0; v < 5000; v += 3) {
		uint32_t u = th_export_anon_uid(a, v), g = th_export_anon_gid(a, v);

		assert_int_not_equal(u, g);
		assert_int_equal(th_export_anon_gid(b, v), g);
		assert_int_equal(th_export_anon_uid(b, v), u);
		assert_int_equal(th_export_anon_uid(a, 4999 - v), th_export_anon_uid(b, 4999 - v));
	}
	th_export_anon_free(b);
	th_export_anon_free(a);
}

/* Loading tables ahead (th_export__anon_prefetch()) computes nothing and changes no pseudonym. */
static void
test_anon_prefetch(void **state)
{
	static const char key[] = "0123456789abcdef0123456789abcdef";
	struct th_export_anon *a = th_export_anon_create(key, 32, false);
	struct th_export_anon *b = th_export_anon_create(key, 32, false);
	struct th_export_anon_counters ac;
	uint8_t fa[TH_EXPORT_ANON_FH_SIZE], fb[TH_EXPORT_ANON_FH_SIZE];
	struct th_trace_open r;
	struct th_addr pa, pb;
	uint32_t h[3];

	(void)state;
	memset(&r, 0, sizeof(r));
	addr4(&r.client, 10, 0, 0, 1);
	addr4(&r.server, 10, 0, 0, 2);
	/* The longest handle. */
	r.fh_len = TH_TRACE_FH_MAX;
	for (uint8_t i = 0; i < 10; i++) {
		r.fh[0] = i;
		th_export__anon_hashes(&r.client, &r.server, r.fh, r.fh_len, h);
		th_export__anon_prefetch(a, h, false);
		th_export__anon_prefetch(a, h, true);
	}
	th_export_anon_counters(a, &ac);
	assert_int_equal(ac.addrs + ac.ids + ac.fhs, 0);
	r.fh_len = 12;
	th_export__anon_hashes(&r.client, &r.server, r.fh, r.fh_len, h);
	th_export__anon_prefetch(a, h, false);
	th_export__anon_prefetch(a, h, true);
	th_export_anon_fh(a, r.fh, r.fh_len, fa);
	th_export_anon_fh(b, r.fh, r.fh_len, fb);
	assert_memory_equal(fa, fb, sizeof(fa));
	th_export_anon_addr(a, &r.client, &pa);
	th_export_anon_addr(b, &r.client, &pb);
	assert_memory_equal(&pa, &pb, sizeof(pa));
	th_export_anon_free(a);
	th_export_anon_free(b);
}

/* Name bytes that are not text stay valid JSON: control characters as \u00XX, valid UTF-8
 * kept, other bytes as the text \xHH. */
/* ---- the name map listed (is_names) ---- */

/* Names under /export (0x0e) as a session lcore writes them: each when it ends, the ones
 * still valid at the end last. */
static void
listed_tree(struct mem *a, struct mem *b)
{
	static const uint8_t root[4] = {0x0e, 0xbe, 0xef, 0x01}, docs[4] = {0x0d, 0xbe, 0xef, 0x01};

	add_name(a, 50 * S, 200 * S, docs, 4, 1, "draft.txt")->mode = 0100644;
	add_name(a, 10 * S, 0, NULL, 0, 0x0e, "/export");
	add_name(a, 20 * S, 0, root, 4, 0x0d, "my docs|old")->mode = 0040755;
	add_name(a, 200 * S, 0, docs, 4, 1, "final, \"v2\".txt")->mode = 0100600;
	/* Another lcore: a file of its own, and one named at the same time as draft.txt. */
	add_name(b, 50 * S, 0, docs, 4, 2, "notes")->mode = 0100640;
	add_name(b, 150 * S, 160 * S, root, 4, 3, "tmp")->mode = 0100600;
}

/*
 * One row per binding, by its start (two starting together in the order their streams were
 * given); text is the capture's names file line (th_sess_name_format) and the path, escaped
 * alike; CSV and JSON carry the same fields; no merge pass reads the streams again.
 */
static void
test_names_listing(void **state)
{
	struct mem a = {.label = "a"}, b = {.label = "b"};
	struct mem *mems[] = {&a, &b};
	static const unsigned int order[6][2] = {{0, 1}, {0, 2}, {0, 0}, {1, 0}, {1, 1}, {0, 3}};
	static const char *const paths[6] = {"/export", "/export/my\\x20docs\\x7cold",
		"/export/my\\x20docs\\x7cold/draft.txt", "/export/my\\x20docs\\x7cold/notes",
		"/export/tmp", "/export/my\\x20docs\\x7cold/final,\\x20\"v2\".txt"};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char want[4096], line[1024];
	size_t o = 0;
	char *out;

	(void)state;
	listed_tree(&a, &b);
	for (unsigned int i = 0; i < 6; i++) {
		const struct th_trace_name *r = &mems[order[i][0]]->names[order[i][1]];
		struct th_sess_name n;
		int len;

		memset(&n, 0, sizeof(n));
		n.server = r->server;
		n.dir_fh_len = r->dir_fh_len;
		memcpy(n.dir_fh, r->dir_fh, r->dir_fh_len);
		n.fh_len = r->fh_len;
		memcpy(n.fh, r->fh, r->fh_len);
		n.from_ns = r->from_ns;
		n.to_ns = r->to_ns;
		n.mode = r->mode;
		n.name_len = r->name_len;
		memcpy(n.name, r->name, r->name_len);
		len = th_sess_name_format(&n, line, sizeof(line));
		o += (size_t)snprintf(
			want + o, sizeof(want) - o, "%.*s | %s\n", len - 1, line, paths[i]);
	}
	th_export_config_defaults(&cfg);
	cfg.is_names = true;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_string_equal(out, want);
	assert_int_equal(ctr.names_in, 6);
	assert_int_equal(ctr.records_in, 6);
	assert_int_equal(ctr.records_out, 6);
	assert_int_equal(a.reads + b.reads, 6);
	free(out);

	cfg.format = TH_EXPORT_FORMAT_CSV;
	cfg.to_ns = 50 * S;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_string_equal(out, "valid_from,valid_to,server,dir_handle,name,handle,mode,path\n"
				 "10.000000000,,10.0.0.1,,/export,0ebeef01,,/export\n"
				 "20.000000000,,10.0.0.1,0ebeef01,my docs|old,0dbeef01,drwxr-xr-x,"
				 "/export/my docs|old\n");
	assert_int_equal(ctr.filtered, 4);
	free(out);

	cfg.format = TH_EXPORT_FORMAT_JSON;
	cfg.from_ns = 190 * S;
	cfg.to_ns = 0;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_string_equal(out,
		"{\"valid_from\":10.000000000,\"valid_to\":null,\"server\":\"10.0.0.1\","
		"\"dir_handle\":null,\"name\":\"/export\",\"handle\":\"0ebeef01\",\"mode\":null,"
		"\"path\":\"/export\"}\n"
		"{\"valid_from\":20.000000000,\"valid_to\":null,\"server\":\"10.0.0.1\","
		"\"dir_handle\":\"0ebeef01\",\"name\":\"my docs|old\",\"handle\":\"0dbeef01\","
		"\"mode\":\"drwxr-xr-x\",\"path\":\"/export/my docs|old\"}\n"
		"{\"valid_from\":50.000000000,\"valid_to\":200.000000000,\"server\":\"10.0.0.1\","
		"\"dir_handle\":\"0dbeef01\",\"name\":\"draft.txt\",\"handle\":\"01beef01\","
		"\"mode\":\"-rw-r--r--\",\"path\":\"/export/my docs|old/draft.txt\"}\n"
		"{\"valid_from\":50.000000000,\"valid_to\":null,\"server\":\"10.0.0.1\","
		"\"dir_handle\":\"0dbeef01\",\"name\":\"notes\",\"handle\":\"02beef01\","
		"\"mode\":\"-rw-r-----\",\"path\":\"/export/my docs|old/notes\"}\n"
		"{\"valid_from\":200.000000000,\"valid_to\":null,\"server\":\"10.0.0.1\","
		"\"dir_handle\":\"0dbeef01\",\"name\":\"final, \\\"v2\\\".txt\","
		"\"handle\":\"01beef01\",\"mode\":\"-rw-------\","
		"\"path\":\"/export/my docs|old/final, \\\"v2\\\".txt\"}\n");
	free(out);
}

/*
 * The filters a binding has: its validity overlapping [from, to) (one that ends where it
 * starts counts at that instant), its server (names of other servers not even kept), its
 * handle or path (--file); --no-names leaves the path out but --file still sees it.
 */
static void
test_names_listing_filters(void **state)
{
	struct mem a = {.label = "a"}, b = {.label = "b"};
	struct mem *mems[] = {&a, &b};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	struct th_trace_name *other;
	char *out;

	(void)state;
	listed_tree(&a, &b);
	add_name(&b, 160 * S, 160 * S, NULL, 0, 4, "/instant");
	other = add_name(&b, 10 * S, 0, NULL, 0, 5, "/elsewhere");
	addr4(&other->server, 10, 0, 0, 2);
	th_export_config_defaults(&cfg);
	cfg.is_names = true;
	cfg.format = TH_EXPORT_FORMAT_CSV;
	/* [160, 200): tmp ended at 160, draft.txt ends at 200, final starts at 200. */
	cfg.from_ns = 160 * S;
	cfg.to_ns = 200 * S;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_null(strstr(out, "tmp"));
	assert_null(strstr(out, "final"));
	assert_non_null(strstr(out, ",draft.txt,"));
	assert_non_null(strstr(out, ",/instant,"));
	assert_non_null(strstr(out, ",/elsewhere,"));
	assert_int_equal(ctr.records_out, 6);
	assert_int_equal(ctr.filtered, 2);
	free(out);

	cfg.from_ns = cfg.to_ns = 0;
	assert_int_equal(th_export_net_parse("10.0.0.2/32", &cfg.servers[0]), 0);
	cfg.servers_count = 1;
	cfg.names_bytes = 1; /* nothing fits: the other server's names were never offered */
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_int_equal(ctr.names_in, 8);
	assert_int_equal(ctr.filtered, 7);
	assert_int_equal(ctr.names_dropped, 1);
	assert_int_equal(ctr.records_out, 0);
	free(out);

	cfg.servers_count = 0;
	cfg.names_bytes = 1ull << 30;
	cfg.files[0] = "0DBEEF01"; /* my docs|old, by handle */
	cfg.files[1] = "l, \"v2";  /* final, by path */
	cfg.files_count = 2;
	cfg.is_names_on = false;
	out = run(&cfg, mems, 2, &ctr, NULL);
	assert_string_equal(out,
		"valid_from,valid_to,server,dir_handle,name,handle,mode,path\n"
		"20.000000000,,10.0.0.1,0ebeef01,my docs|old,0dbeef01,drwxr-xr-x,\n"
		"200.000000000,,10.0.0.1,0dbeef01,\"final, "
		"\"\"v2\"\".txt\",01beef01,-rw-------,\n");
	free(out);
}

/*
 * Pseudonyms: a listed path is the path an open of its handle shows then, pseudonym for
 * pseudonym, and its name the last component of it; handles as an open's.
 */
static void
test_names_listing_anon(void **state)
{
	static const char key[] = "a key of at least sixteen bytes";
	struct mem a = {.label = "a"}, b = {.label = "b"}, o = {.label = "opens"};
	struct mem *mems[] = {&a, &b, &o};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char open_path[256], open_fh[64], path[256], name[256], fh[64], want[256];
	char *opens, *names;

	(void)state;
	listed_tree(&a, &b);
	add_open(&o, 100 * S, 1, 1001, 1);
	th_export_config_defaults(&cfg);
	cfg.format = TH_EXPORT_FORMAT_CSV;
	cfg.anon = th_export_anon_create(key, sizeof(key) - 1, true);
	assert_non_null(cfg.anon);
	opens = run(&cfg, mems, 3, &ctr, NULL);
	cfg.is_names = true;
	names = run(&cfg, mems, 3, &ctr, NULL);
	assert_int_equal(ctr.records_out, 6);
	csv_field(opens, 2, 16, open_path, sizeof(open_path));
	csv_field(opens, 2, 5, open_fh, sizeof(open_fh));
	/* Line 4 is draft.txt, valid at the open's time. */
	csv_field(names, 4, 7, path, sizeof(path));
	csv_field(names, 4, 4, name, sizeof(name));
	csv_field(names, 4, 5, fh, sizeof(fh));
	assert_string_equal(path, open_path);
	assert_string_equal(fh, open_fh);
	assert_int_equal(strlen(fh), 2 * TH_EXPORT_ANON_FH_SIZE);
	th_export_anon_path(cfg.anon, "draft.txt", 9, want, sizeof(want));
	assert_string_equal(name, want);
	assert_string_equal(strrchr(path, '/') + 1, want);
	assert_null(strstr(names, "export"));
	assert_null(strstr(names, "draft"));
	assert_null(strstr(names, "beef01")); /* a pseudonym here has "beef" in it */
	assert_null(strstr(names, "10.0.0.1"));
	th_export_anon_free(cfg.anon);
	free(opens);
	free(names);
}

/*
 * A listing keeps every name before its first row, within --names-mb with a sort key for
 * each: past it, names are counted and not listed. Two names a handle got at once (links)
 * each list their own path.
 */
static void
test_names_listing_budget(void **state)
{
	struct th_export_names *join = th_export_names_create(512u << 10);
	struct th_export_names *list = th_export__names_create_listing(512u << 10);
	struct th_trace_name r, got;
	unsigned int kept[2] = {0, 0};
	struct mem a = {.label = "a"};
	struct mem *mems[] = {&a};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char path[64];
	char *out;

	(void)state;
	assert_non_null(join);
	assert_non_null(list);
	memset(&r, 0, sizeof(r));
	addr4(&r.server, 10, 0, 0, 1);
	r.fh_len = 32;
	for (unsigned int i = 0; i < 5000; i++) {
		r.from_ns = (5000 - i) * S; /* written backwards: the listing turns them round */
		memcpy(r.fh, &i, sizeof(i));
		r.name_len = (uint16_t)snprintf(r.name, sizeof(r.name), "file-%u", i);
		kept[0] += th_export_names_add(join, &r) == 0;
		kept[1] += th_export_names_add(list, &r) == 0;
	}
	assert_in_range(kept[1], 100, kept[0] - 1);
	assert_int_equal(th_export__names_sort(join), -EINVAL);
	assert_int_equal(th_export__names_sort(list), kept[1]);
	for (unsigned int i = 0; i < kept[1]; i++) {
		th_export__names_listed(list, i, &got);
		assert_int_equal(got.from_ns, (5000 - (kept[1] - 1 - i)) * S);
		assert_int_equal(th_export__names_listed_path(
					 list, NULL, i, path, sizeof(path), NULL, 0, NULL),
			got.name_len);
		assert_string_equal(path, got.name);
	}
	th_export_names_free(join);
	th_export_names_free(list);

	add_name(&a, 10 * S, 0, NULL, 0, 0x0e, "/export");
	add_name(&a, 20 * S, 0, (const uint8_t[4]){0x0e, 0xbe, 0xef, 0x01}, 4, 1, "one");
	add_name(&a, 20 * S, 0, (const uint8_t[4]){0x0e, 0xbe, 0xef, 0x01}, 4, 1, "two");
	th_export_config_defaults(&cfg);
	cfg.is_names = true;
	cfg.format = TH_EXPORT_FORMAT_CSV;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_non_null(strstr(out, ",one,01beef01,,/export/one\n"));
	assert_non_null(strstr(out, ",two,01beef01,,/export/two\n"));
	free(out);
	cfg.names_bytes = 1;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_string_equal(out, "valid_from,valid_to,server,dir_handle,name,handle,mode,path\n");
	assert_int_equal(ctr.names_dropped, 3);
	assert_int_equal(ctr.records_out, 0);
	free(out);
}

static void
test_json_escaping(void **state)
{
	struct mem a = {.label = "a"};
	struct mem *mems[] = {&a};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	char *out;

	(void)state;
	add_open(&a, 100 * S, 1, 1, 1);
	add_name(&a, 10 * S, 0, NULL, 0, 1, "a\tb\xc3\xa9\xff\\");
	th_export_config_defaults(&cfg);
	cfg.format = TH_EXPORT_FORMAT_JSON;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_non_null(strstr(out, "\"path\":\"a\\u0009b\xc3\xa9\\\\xff\\\\\",\"mode\":null}"));
	free(out);
}

static void
test_hosts_file(void **state)
{
	char path[] = "/tmp/test_export_hostsXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct th_export_hosts *h = th_export_hosts_create(false);
	struct th_addr a;
	unsigned int line = 0;

	(void)state;
	fprintf(f, "# comment\n\n10.0.0.1\tfiler1 filer1.lab # trailing\n"
		   "10.0.0.1 other\n2001:db8::1 filer6\n");
	fclose(f);
	assert_int_equal(th_export_hosts_load(h, path, &line), 0);
	addr4(&a, 10, 0, 0, 1);
	assert_string_equal(th_export_hosts_lookup(h, &a), "filer1");
	addr4(&a, 10, 0, 0, 2);
	assert_null(th_export_hosts_lookup(h, &a));
	memset(&a, 0, sizeof(a));
	a.b[0] = 0x20, a.b[1] = 0x01, a.b[2] = 0x0d, a.b[3] = 0xb8, a.b[15] = 1;
	assert_string_equal(th_export_hosts_lookup(h, &a), "filer6");

	/* A line longer than any buffer is one entry: its aliases are not lines of their own. */
	f = fopen(path, "w");
	fprintf(f, "10.0.0.3 long");
	for (int i = 0; i < 600; i++)
		fprintf(f, " alias%d", i);
	fprintf(f, " 10.0.0.4 not-an-entry\n10.0.0.5 after\n");
	fclose(f);
	line = 0;
	assert_int_equal(th_export_hosts_load(h, path, &line), 0);
	addr4(&a, 10, 0, 0, 3);
	assert_string_equal(th_export_hosts_lookup(h, &a), "long");
	addr4(&a, 10, 0, 0, 4);
	assert_null(th_export_hosts_lookup(h, &a));
	addr4(&a, 10, 0, 0, 5);
	assert_string_equal(th_export_hosts_lookup(h, &a), "after");

	/* A byte-order mark (a file saved by a Windows editor) is not part of line 1's address. */
	f = fopen(path, "w");
	fprintf(f, "\xef\xbb\xbf"
		   "10.0.0.7 bom\n10.0.0.8 \xef\xbb\xbf"
		   "not-at-the-start\n");
	fclose(f);
	line = 0;
	assert_int_equal(th_export_hosts_load(h, path, &line), 0);
	addr4(&a, 10, 0, 0, 7);
	assert_string_equal(th_export_hosts_lookup(h, &a), "bom");
	addr4(&a, 10, 0, 0, 8);
	assert_string_equal(th_export_hosts_lookup(h, &a), "\xef\xbb\xbf"
							   "not-at-the-start");

	f = fopen(path, "w");
	fprintf(f, "10.0.0.9 ok\n10.0.0.300 bad\n");
	fclose(f);
	assert_int_equal(th_export_hosts_load(h, path, &line), -EINVAL);
	assert_int_equal(line, 2);
	assert_int_equal(th_export_hosts_load(h, "/nonexistent/hosts", &line), -ENOENT);
	th_export_hosts_free(h);
	unlink(path);
}

/*
 * A host name is what the hosts file says, '|', control bytes and all: text, whose fields are
 * split at " | " and spaces, escapes it as a name is escaped there; CSV and JSON quote it.
 */
static void
test_host_names_escaped(void **state)
{
	char path[] = "/tmp/test_export_hostsXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct th_export_config cfg;
	struct th_export_counters ctr;
	struct mem m = {.label = "one"};
	struct mem *mems[] = {&m};
	unsigned int line = 0;
	char *out;

	(void)state;
	fprintf(f, "10.0.0.1 filer|a\\b\x01\n10.1.0.7 caf\xc3\xa9\n");
	fclose(f);
	th_export_config_defaults(&cfg);
	cfg.hosts = th_export_hosts_create(false);
	assert_int_equal(th_export_hosts_load(cfg.hosts, path, &line), 0);
	add_open(&m, 100 * S, 7, 1001, 1);
	add_name(&m, 10 * S, 0, NULL, 0, 1, "/export");
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_string_equal(out, "100.000000 | 1500 | read | filer\\x7ca\\x5cb\\x01:01beef01 | "
				 "caf\\xc3\\xa9.1001 | 8192 | 8192\n");
	free(out);
	cfg.is_names = true;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_non_null(strstr(out, "filer\\x7ca\\x5cb\\x01 | - | /export | 01beef01 | "));
	free(out);
	cfg.is_names = false;
	cfg.format = TH_EXPORT_FORMAT_CSV;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_non_null(strstr(out, ",read,filer|a\\b\x01,01beef01,caf\xc3\xa9,1001,"));
	free(out);
	cfg.format = TH_EXPORT_FORMAT_JSON;
	out = run(&cfg, mems, 1, &ctr, NULL);
	assert_non_null(strstr(out, "\"server\":\"filer|a\\\\b\\u0001\""));
	free(out);
	th_export_hosts_free(cfg.hosts);
	unlink(path);
}

static void
test_anon_properties(void **state)
{
	static const char key1[] = "0123456789abcdef0123456789abcdef";
	static const char key2[] = "0123456789abcdef0123456789abcdeF";
	struct th_export_anon *a1 = th_export_anon_create(key1, 32, false);
	struct th_export_anon *a1b = th_export_anon_create(key1, 32, false);
	struct th_export_anon *a2 = th_export_anon_create(key2, 32, false);
	struct th_export_anon *pp = th_export_anon_create(key1, 32, true);
	struct th_addr x, y, px, py, q;
	char p1[256], p2[256];

	(void)state;
	addr4(&x, 192, 168, 7, 10);
	addr4(&y, 192, 168, 7, 200);
	th_export_anon_addr(a1, &x, &px);
	th_export_anon_addr(a1b, &x, &q);
	assert_memory_equal(&px, &q, sizeof(q));
	th_export_anon_addr(a2, &x, &q);
	assert_memory_not_equal(&px, &q, sizeof(q));
	assert_memory_not_equal(&px, &x, sizeof(x));
	assert_true(th_addr_is_v4(&px));
	assert_int_not_equal(th_export_anon_uid(a1, 1000), 1000);
	assert_int_equal(th_export_anon_uid(a1, 1000), th_export_anon_uid(a1b, 1000));
	assert_int_not_equal(th_export_anon_uid(a1, 1000), th_export_anon_uid(a2, 1000));
	assert_int_not_equal(th_export_anon_uid(a1, 1000), th_export_anon_gid(a1, 1000));

	/* Prefix-preserving: a shared /24 stays shared, the host part differs; cached and
	 * computed pseudonyms agree. */
	th_export_anon_addr(pp, &x, &px);
	th_export_anon_addr(pp, &y, &py);
	assert_true(th_addr_is_v4(&px));
	assert_memory_equal(px.b, py.b, 15);
	assert_memory_not_equal(px.b + 12, x.b + 12, 3);
	assert_int_equal((px.b[15] ^ py.b[15]) >> 7, (x.b[15] ^ y.b[15]) >> 7);
	th_export_anon_addr(pp, &x, &q);
	assert_memory_equal(&px, &q, sizeof(q));
	memset(&x, 0, sizeof(x));
	memset(&y, 0, sizeof(y));
	x.b[0] = y.b[0] = 0x20, x.b[1] = y.b[1] = 0x01, x.b[15] = 1, y.b[14] = 1;
	th_export_anon_addr(pp, &x, &px);
	th_export_anon_addr(pp, &y, &py);
	assert_false(th_addr_is_v4(&px));
	assert_memory_equal(px.b, py.b, 13);

	/* Paths keep their shape; components are consistent. */
	th_export_anon_path(a1, "/export/home/alice", 18, p1, sizeof(p1));
	th_export_anon_path(a1, "/export/home/bob", 16, p2, sizeof(p2));
	assert_int_equal(strlen(p1), 3 * 17);
	assert_int_equal(p1[0], '/');
	assert_memory_equal(p1, p2, 34);
	assert_memory_not_equal(p1 + 34, p2 + 34, 16);
	assert_null(strstr(p1, "alice"));
	th_export_anon_free(a1);
	th_export_anon_free(a1b);
	th_export_anon_free(a2);
	th_export_anon_free(pp);
	assert_null(th_export_anon_create(key1, 0, false));
}

/* With pseudonyms on, no original address, uid, gid, handle or name is in any format. */
static void
test_anon_export(void **state)
{
	static const char key[] = "a key of at least sixteen bytes";
	struct mem a = {.label = "a"};
	struct mem *mems[] = {&a};
	struct th_export_config cfg;
	struct th_export_counters ctr;
	static const uint8_t dir[4] = {0x0d, 0xbe, 0xef, 0x01};

	(void)state;
	add_open(&a, 100 * S, 77, 54321, 1);
	add_name(&a, 10 * S, 0, NULL, 0, 0x0d, "/secretexport");
	add_name(&a, 10 * S, 0, dir, 4, 1, "salaries.xls");
	for (int f = 0; f < TH_EXPORT_FORMAT_COUNT; f++) {
		char *out;

		th_export_config_defaults(&cfg);
		cfg.format = (enum th_export_format)f;
		cfg.anon = th_export_anon_create(key, sizeof(key) - 1, f == 1);
		out = run(&cfg, mems, 1, &ctr, NULL);
		assert_int_equal(ctr.records_out, 1);
		assert_null(strstr(out, "10.0.0.1"));
		assert_null(strstr(out, "10.1.0.77"));
		assert_null(strstr(out, "54321"));
		assert_null(strstr(out, ",100,"));
		assert_null(strstr(out, "01beef01"));
		assert_null(strstr(out, "secret"));
		assert_null(strstr(out, "salaries"));
		if (f != TH_EXPORT_FORMAT_TEXT)
			assert_non_null(strchr(strstr(out, "/"), '/')); /* a path was written */
		th_export_anon_free(cfg.anon);
		free(out);
	}
}

static void
test_parse(void **state)
{
	uint64_t ns;
	struct th_export_net n;

	(void)state;
	assert_int_equal(th_export_time_parse("1700000000.25", &ns), 0);
	assert_int_equal(ns, 1700000000ull * S + 250000000);
	assert_int_equal(th_export_time_parse("2023-11-14T22:13:20Z", &ns), 0);
	assert_int_equal(ns, 1700000000ull * S);
	assert_int_equal(th_export_time_parse("2023-11-14 22:13:20.5", &ns), 0);
	assert_int_equal(ns, 1700000000ull * S + 500000000);
	assert_int_equal(th_export_time_parse("2023-11-14", &ns), 0);
	assert_int_equal(ns, 1699920000ull * S);
	assert_int_equal(th_export_time_parse("2023-02-30", &ns), -EINVAL);
	assert_int_equal(th_export_time_parse("yesterday", &ns), -EINVAL);
	assert_int_equal(th_export_time_parse("12.", &ns), -EINVAL);
	/* The last second 64-bit nanoseconds hold, and past it a refusal, not a wrap. */
	assert_int_equal(th_export_time_parse("2554-07-21T23:34:32.999999999", &ns), 0);
	assert_int_equal(ns, 18446744072ull * S + 999999999);
	assert_int_equal(th_export_time_parse("18446744072", &ns), 0);
	assert_int_equal(th_export_time_parse("2554-07-21T23:34:33", &ns), -EINVAL);
	assert_int_equal(th_export_time_parse("18446744074", &ns), -EINVAL);
	assert_int_equal(th_export_time_parse("2600-01-01", &ns), -EINVAL);
	assert_int_equal(th_export_time_parse("9999-12-31", &ns), -EINVAL);
	assert_int_equal(th_export_net_parse("10.0.0.0/8", &n), 0);
	assert_int_equal(n.prefix_len, 104);
	assert_int_equal(th_export_net_parse("2001:db8::/32", &n), 0);
	assert_int_equal(n.prefix_len, 32);
	assert_int_equal(th_export_net_parse("10.0.0.0/33", &n), -EINVAL);
	assert_int_equal(th_export_net_parse("10.0.0.0/", &n), -EINVAL);
	assert_int_equal(th_export_net_parse("filer1", &n), -EINVAL);
	assert_int_equal(th_export_format_parse("csv"), TH_EXPORT_FORMAT_CSV);
	assert_int_equal(th_export_format_parse("jsonl"), TH_EXPORT_FORMAT_JSON);
	assert_int_equal(th_export_format_parse("xml"), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_matches_session_format),
		cmocka_unit_test(test_every_octet_matches_session_format),
		cmocka_unit_test(test_merge_sorted),
		cmocka_unit_test(test_output_failure_stops),
		cmocka_unit_test(test_merge_window),
		cmocka_unit_test(test_merge_window_filtered),
		cmocka_unit_test(test_merge_displaced),
		cmocka_unit_test(test_merge_window_memory),
		cmocka_unit_test(test_names_budget),
		cmocka_unit_test(test_path_cache_follows_renames),
		cmocka_unit_test(test_path_mode),
		cmocka_unit_test(test_path_dot_names),
		cmocka_unit_test(test_damaged_stream),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_name_join),
		cmocka_unit_test(test_names_only_stream),
		cmocka_unit_test(test_anon_path_join),
		cmocka_unit_test(test_anon_cache),
		cmocka_unit_test(test_anon_prefetch),
		cmocka_unit_test(test_names_listing),
		cmocka_unit_test(test_names_listing_filters),
		cmocka_unit_test(test_names_listing_anon),
		cmocka_unit_test(test_names_listing_budget),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_hosts_file),
		cmocka_unit_test(test_host_names_escaped),
		cmocka_unit_test(test_anon_properties),
		cmocka_unit_test(test_anon_export),
		cmocka_unit_test(test_rpc_cut_replies),
		cmocka_unit_test(test_rpc_listing_count),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
