/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Export throughput on one core (target: 3 million records/s).
 *
 *   bench_export [-n RECORDS] [-s STREAMS] [-d DIR] [-r RUNS] [-f FORMAT]
 *                [-F FILES [-N]] [-a | -p] [-E portable|sha-ni] [-R]
 *
 * Writes STREAMS segment streams of RECORDS opens in all (with the real
 * writer, into DIR, default a fresh directory under /tmp), then exports them
 * to /dev/null RUNS times: reading and decompressing the segments, decoding,
 * the k-way merge and the lines (FORMAT text, csv or json; default text), all
 * on this thread. It also runs the merge and formatting alone, from records in
 * memory, to show what the segment reader costs. It prints numbers; it does
 * not judge them.
 *
 * By default every open has a handle of its own. With -F, opens share FILES
 * handles (a trace opens the same files again and again), and a name stream
 * names each file in one of FILES / 64 directories under a mount path, so csv
 * and json have paths to join. -a anonymises everything (a fixed key), -p with
 * prefix-preserving addresses; -E picks the SHA-256 block function (default:
 * SHA-NI where the CPU has it). -R writes RPC records instead (a decode
 * lcore's, with trace.rpcs = 1: written as their replies come, so out of
 * call order within a few records) and exports them as export --rpcs does;
 * the from-memory pass is for opens only. -N lists the -F names instead, as
 * export --names does: every name held, sorted by its start (the files' starts
 * spread over 1000 s, written out of order) and given its path.
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "th_export.h"
#include "th_segment.h"

#define S 1000000000ull
#define FILES_PER_DIR 64

struct seg_src {
	char path[512];
	struct th_segment_reader *r;
};

struct mem_src {
	const struct th_trace_open *v;
	size_t count;
	size_t i;
	const struct th_trace_name *names;
	size_t names_count;
	size_t names_i;
};

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Handle number f: 8-32 bytes. */
static void
file_fh(uint64_t f, uint8_t *fh, uint8_t *fh_len)
{
	uint64_t h = f * 0xbf58476d1ce4e5b9ull;

	*fh_len = (uint8_t)(8 + (f % 4) * 8);
	for (unsigned int k = 0; k < *fh_len; k++)
		fh[k] = (uint8_t)(h >> (k % 8 * 8)) ^ (uint8_t)k;
}

static void
server_of(uint64_t v, struct th_addr *a)
{
	th_addr_set_v4(a, (const uint8_t[4]){10, 0, 0, (uint8_t)(1 + v % 4)});
}

/* Open i of stream s: an hour of trace in all, a few hundred clients, 8-32-byte handles;
 * with files > 0, the handle of one of that many files. */
static void
make(unsigned int s, uint64_t i, uint64_t per_stream, uint64_t files, struct th_trace_open *o)
{
	uint64_t h = (i * 0x9e3779b97f4a7c15ull) ^ s;

	memset(o, 0, sizeof(*o));
	o->open_ns = 1700000000ull * S + i * (3600 * S / per_stream) + s * 1000;
	o->close_ns = o->open_ns + (h % 5000) * 1000;
	o->client.b[10] = o->client.b[11] = 0xff;
	o->client.b[12] = 192, o->client.b[13] = 168, o->client.b[14] = (uint8_t)(h >> 8);
	o->client.b[15] = (uint8_t)(h >> 16);
	o->uid = 1000 + (uint32_t)(h % 500);
	o->gid = 100;
	o->dir = (uint8_t)(h % 3 == 0);
	o->vers = 3;
	if (files > 0) {
		uint64_t f = (h >> 24) % files;

		server_of(f / FILES_PER_DIR, &o->server);
		file_fh(f, o->fh, &o->fh_len);
	} else {
		server_of(h, &o->server);
		o->fh_len = (uint8_t)(8 + (h % 4) * 8);
		for (unsigned int k = 0; k < o->fh_len; k++)
			o->fh[k] = (uint8_t)(h >> (k % 8 * 8)) ^ (uint8_t)k;
	}
	o->ops = 1 + (uint32_t)(h % 16);
	o->transferred = (h % 64) * 4096;
	o->seq_bytes = o->transferred;
	o->size = o->transferred + 4096;
}

/* RPC i of stream s, on the same files and clients as make()'s opens; replies 0-20 ms later. */
static void
make_rpc(unsigned int s, uint64_t i, uint64_t per_stream, uint64_t files, struct th_trace_rpc *r)
{
	static const uint16_t procs[4] = {1, 3, 6, 7}; /* GETATTR, LOOKUP, READ, WRITE */
	struct th_trace_open o;
	uint64_t h = (i * 0x9e3779b97f4a7c15ull) ^ s;

	make(s, i, per_stream, files, &o);
	memset(r, 0, sizeof(*r));
	r->call_ns = 1700000000ull * S + i * (60 * S / per_stream) + s * 1000;
	r->reply_ns = r->call_ns + (h % 20000) * 1000;
	r->client = o.client;
	r->server = o.server;
	r->client_port = (uint16_t)(700 + h % 300);
	r->server_port = 2049;
	r->xid = (uint32_t)(h >> 16);
	r->prog = 100003;
	r->vers = 3;
	r->proc = procs[(h >> 40) % 4];
	r->uid = o.uid;
	r->gid = o.gid;
	r->flags = TH_TRACE_RPC_TCP | TH_TRACE_RPC_HAS_SIZE;
	r->fh_len = o.fh_len;
	memcpy(r->fh, o.fh, sizeof(r->fh));
	r->offset = r->proc >= 6 ? (h % 256) * 32768 : 0;
	r->count = r->proc >= 6 ? 32768 : 0;
	r->done = r->count;
	r->size = o.size;
}

static int
by_reply(const void *a, const void *b)
{
	const struct th_trace_rpc *x = a, *y = b;

	return (x->reply_ns > y->reply_ns) - (x->reply_ns < y->reply_ns);
}

/* Name record i of a -F set: a mount path per server (i < 4), a directory per FILES_PER_DIR
 * files (i < 4 + dirs), then the files. Directory d, handle number files + d, is on server
 * d % 4 with its files; the mount path of server v has handle number files + dirs + v. */
static void
make_name(uint64_t i, uint64_t files, struct th_trace_name *n)
{
	uint64_t dirs = (files + FILES_PER_DIR - 1) / FILES_PER_DIR;

	memset(n, 0, sizeof(*n));
	n->from_ns = 1690000000ull * S;
	if (i >= 4 + dirs) /* within 1000 s of their directories, in no order */
		n->from_ns += (i * 0x9e3779b97f4a7c15ull) % (1000 * S);
	if (i < 4) {
		server_of(i, &n->server);
		file_fh(files + dirs + i, n->fh, &n->fh_len);
		n->name_len = (uint16_t)snprintf(
			n->name, sizeof(n->name), "/export/home%u", (unsigned int)i);
		return;
	}
	i -= 4;
	if (i < dirs) {
		server_of(i, &n->server);
		file_fh(files + i, n->fh, &n->fh_len);
		file_fh(files + dirs + i % 4, n->dir_fh, &n->dir_fh_len);
		n->name_len = (uint16_t)snprintf(
			n->name, sizeof(n->name), "project-%llu", (unsigned long long)i);
		return;
	}
	i -= dirs;
	server_of(i / FILES_PER_DIR, &n->server);
	file_fh(i, n->fh, &n->fh_len);
	file_fh(files + i / FILES_PER_DIR, n->dir_fh, &n->dir_fh_len);
	n->name_len = (uint16_t)snprintf(
		n->name, sizeof(n->name), "results-%llu.dat", (unsigned long long)i);
}

static int
seg_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct seg_src *s = ctx;
	int rc;

	if (s->r == NULL)
		return 0;
	rc = th_segment_reader_next(s->r, open, name, rpc);
	if (rc > 0) {
		*type = rc;
		return 1;
	}
	return rc;
}

static int
seg_rewind(void *ctx)
{
	struct seg_src *s = ctx;

	th_segment_reader_close(s->r);
	s->r = th_segment_reader_open(s->path);
	return s->r != NULL ? 0 : -errno;
}

static int
mem_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct mem_src *m = ctx;

	(void)rpc;
	if (m->names_i < m->names_count) {
		*name = m->names[m->names_i++];
		*type = TH_TRACE_NAME;
		return 1;
	}
	if (m->i == m->count)
		return 0;
	*open = m->v[m->i++];
	*type = TH_TRACE_OPEN;
	return 1;
}

static int
mem_rewind(void *ctx)
{
	struct mem_src *m = ctx;

	m->i = 0;
	m->names_i = 0;
	return 0;
}

/* A fresh pseudonym table in @p c (every export starts with an empty one); exits when none. */
static void
fresh_anon(struct th_export_config *c, const char *key, size_t key_size, bool is_prefix)
{
	th_export_anon_free(c->anon);
	c->anon = th_export_anon_create(key, key_size, is_prefix);
	if (c->anon == NULL) {
		fprintf(stderr, "bench_export: cannot create the pseudonym table\n");
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	static const char key[] = "bench_export's fixed key, 32 B.";
	uint64_t records = 4000000, files = 0, names_count = 0;
	unsigned int streams = 4, runs = 3, nseg = 0;
	char dir[512] = "", tmpl[] = "/tmp/bench_export_XXXXXX";
	struct seg_src *segs = NULL;
	struct th_export_source *src;
	struct th_export_config c;
	struct th_export_counters ctr;
	FILE *null_out = fopen("/dev/null", "w");
	bool is_own_dir = false, is_anon = false, is_prefix = false, is_rpcs = false;
	bool is_names = false;
	const char *mode = "plain";
	int opt, format = TH_EXPORT_FORMAT_TEXT;
	double t0, best = 0;

	while ((opt = getopt(argc, argv, "n:s:d:r:f:F:NapE:R")) != -1) {
		switch (opt) {
		case 'N':
			is_names = true;
			break;
		case 'R':
			is_rpcs = true;
			break;
		case 'n':
			records = strtoull(optarg, NULL, 10);
			break;
		case 's':
			streams = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			snprintf(dir, sizeof(dir), "%s", optarg);
			break;
		case 'r':
			runs = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			format = th_export_format_parse(optarg);
			break;
		case 'F':
			files = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			is_prefix = true;
			/* fall through */
		case 'a':
			is_anon = true;
			break;
		case 'E':
			if (th_export_sha256_set_engine(optarg) != 0) {
				fprintf(stderr, "bench_export: no SHA-256 engine %s here\n",
					optarg);
				return 2;
			}
			break;
		default:
			format = -1;
			break;
		}
	}
	if (format < 0 || optind != argc || (is_names && (files == 0 || is_rpcs))) {
		fprintf(stderr, "usage: bench_export [-n RECORDS] [-s STREAMS] [-d DIR] [-r RUNS] "
				"[-f text|csv|json] [-F FILES [-N]] [-a | -p] [-E portable|sha-ni] "
				"[-R]\n");
		return 2;
	}
	if (streams == 0 || streams > 64 || records < streams) {
		fprintf(stderr,
			"bench_export: -s takes 1 to 64 streams, -n at least one record each\n");
		return 2;
	}
	if (null_out == NULL) {
		perror("bench_export: /dev/null");
		return 1;
	}
	if (files > 0)
		names_count = 4 + (files + FILES_PER_DIR - 1) / FILES_PER_DIR + files;
	if (dir[0] == '\0') {
		if (mkdtemp(tmpl) == NULL)
			return 1;
		snprintf(dir, sizeof(dir), "%s", tmpl);
		is_own_dir = true;
	}

	/* Write the input. */
	{
		uint64_t per = records / streams;
		struct th_trace_open o;
		struct th_trace_name n;

		t0 = now();
		for (unsigned int s = 0; s <= streams; s++) {
			struct th_segment_config sc;
			struct th_segment_writer *w;

			if (s == streams && names_count == 0)
				break;
			memset(&sc, 0, sizeof(sc));
			sc.dir = dir;
			sc.box_id = 1;
			sc.stream_id = (uint16_t)s;
			sc.kind = s == streams ? TH_SEGMENT_KIND_NAMES
				  : is_rpcs    ? TH_SEGMENT_KIND_RPCS
					       : TH_SEGMENT_KIND_OPENS;
			w = th_segment_writer_create(&sc);
			if (w == NULL)
				return 1;
			for (uint64_t i = 0; s < streams && !is_rpcs && i < per; i++) {
				make(s, i, per, files, &o);
				th_segment_write_open(w, &o);
			}
			/* RPCs in blocks of 64, each written in reply order. */
			for (uint64_t i = 0; s < streams && is_rpcs && i < per; i += 64) {
				struct th_trace_rpc b[64];
				unsigned int k = 0;

				for (; k < 64 && i + k < per; k++)
					make_rpc(s, i + k, per, files, &b[k]);
				qsort(b, k, sizeof(b[0]), by_reply);
				for (unsigned int j = 0; j < k; j++)
					th_segment_write_rpc(w, &b[j]);
			}
			for (uint64_t i = 0; s == streams && i < names_count; i++) {
				make_name(i, files, &n);
				th_segment_write_name(w, &n);
			}
			if (th_segment_writer_close(w, NULL) != 0) {
				fprintf(stderr, "bench_export: writing %s failed\n", dir);
				return 1;
			}
		}
		records = per * streams;
		printf("input: %llu %s in %u streams, %llu files, %llu names, written in %.2f s "
		       "(%s)\n",
			(unsigned long long)records, is_rpcs ? "RPCs" : "opens", streams,
			(unsigned long long)files, (unsigned long long)names_count, now() - t0,
			dir);
	}
	{
		DIR *d = opendir(dir);
		struct dirent *e;

		segs = calloc(1024, sizeof(*segs));
		while (d != NULL && (e = readdir(d)) != NULL && nseg < 1024)
			if (strstr(e->d_name, TH_SEGMENT_SUFFIX) != NULL)
				snprintf(segs[nseg++].path, sizeof(segs[0].path), "%s/%s", dir,
					e->d_name);
		if (d != NULL)
			closedir(d);
	}
	src = calloc(nseg + streams + 1, sizeof(*src));
	th_export_config_defaults(&c);
	c.format = (enum th_export_format)format;
	c.is_rpcs = is_rpcs;
	c.is_names = is_names;
	if (is_anon) {
		mode = is_prefix ? "anonymised, prefix-preserving" : "anonymised";
		printf("SHA-256: %s\n", th_export_sha256_engine());
	}
	for (unsigned int r = 0; r < runs; r++) {
		double dt;

		if (is_anon)
			fresh_anon(&c, key, sizeof(key) - 1, is_prefix);
		for (unsigned int i = 0; i < nseg; i++) {
			unsigned int kind;

			segs[i].r = th_segment_reader_open(segs[i].path);
			src[i].label = segs[i].path;
			src[i].next = seg_next;
			src[i].ctx = &segs[i];
			src[i].rewind = seg_rewind;
			kind = segs[i].r != NULL ? th_segment_reader_header(segs[i].r)->kind : 0;
			src[i].is_nameless =
				kind == TH_SEGMENT_KIND_OPENS || kind == TH_SEGMENT_KIND_RPCS;
			src[i].is_names_only = kind == TH_SEGMENT_KIND_NAMES;
		}
		t0 = now();
		th_export_run(&c, src, nseg, null_out, stderr, &ctr);
		dt = now() - t0;
		for (unsigned int i = 0; i < nseg; i++)
			th_segment_reader_close(segs[i].r);
		printf("export to %s (%s), from %u segments: %llu records in %.3f s = %.2f M "
		       "records/s\n",
			th_export_format_name((enum th_export_format)format), mode, nseg,
			(unsigned long long)ctr.records_out, dt,
			(double)ctr.records_out / dt / 1e6);
		if ((double)ctr.records_out / dt > best)
			best = (double)ctr.records_out / dt;
	}
	printf("best: %.2f M records/s (target 3)\n", best / 1e6);
	if (is_anon) {
		struct th_export_anon_counters ac;

		th_export_anon_counters(c.anon, &ac);
		printf("pseudonyms computed in the last run: %llu addresses, %llu uids/gids, %llu "
		       "handles; %llu replaced\n",
			(unsigned long long)ac.addrs, (unsigned long long)ac.ids,
			(unsigned long long)ac.fhs, (unsigned long long)ac.replaced);
	}

	/* The same records from memory: merge + filters + formatting only (opens). */
	if (!is_rpcs) {
		uint64_t per = records / streams;
		struct th_trace_open *v = malloc(records * sizeof(*v));
		struct th_trace_name *names = calloc(names_count + 1, sizeof(*names));
		struct mem_src ms[65];

		memset(ms, 0, sizeof(ms));
		for (unsigned int s = 0; s < streams; s++) {
			for (uint64_t i = 0; i < per; i++)
				make(s, i, per, files, &v[s * per + i]);
			ms[s].v = v + s * per;
			ms[s].count = per;
		}
		for (uint64_t i = 0; i < names_count; i++)
			make_name(i, files, &names[i]);
		ms[streams].names = names;
		ms[streams].names_count = names_count;
		for (unsigned int s = 0; s <= streams; s++) {
			src[s].label = "memory";
			src[s].next = mem_next;
			src[s].ctx = &ms[s];
			src[s].rewind = mem_rewind;
			src[s].is_nameless = s < streams;
			src[s].is_names_only = s == streams;
		}
		if (is_anon)
			fresh_anon(&c, key, sizeof(key) - 1, is_prefix);
		t0 = now();
		th_export_run(&c, src, streams + 1, null_out, stderr, &ctr);
		printf("%s + %s only, from memory: %.2f M records/s\n",
			is_names ? "listing" : "merge",
			th_export_format_name((enum th_export_format)format),
			(double)ctr.records_out / (now() - t0) / 1e6);
		free(names);
		free(v);
	}
	if (is_own_dir) {
		for (unsigned int i = 0; i < nseg; i++)
			unlink(segs[i].path);
		rmdir(dir);
	}
	th_export_anon_free(c.anon);
	free(src);
	free(segs);
	fclose(null_out);
	return 0;
}
