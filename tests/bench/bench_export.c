/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Export throughput to text on one core (target: 3 million records/s).
 *
 *   bench_export [-n RECORDS] [-s STREAMS] [-d DIR] [-r RUNS]
 *
 * Writes STREAMS segment streams of RECORDS opens in all (with the real
 * writer, into DIR, default a fresh directory under /tmp), then exports them
 * to /dev/null as text RUNS times: reading and decompressing the segments,
 * decoding, the k-way merge and the text lines, all on this thread. It also
 * runs the merge and text formatting alone, from records in memory, to show
 * what the segment reader costs. It prints numbers; it does not judge them.
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

struct seg_src {
	char path[512];
	struct th_segment_reader *r;
};

struct mem_src {
	const struct th_trace_open *v;
	size_t count;
	size_t i;
};

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Open i of stream s: an hour of trace in all, a few hundred clients, 8-32-byte handles. */
static void
make(unsigned int s, uint64_t i, uint64_t per_stream, struct th_trace_open *o)
{
	uint64_t h = (i * 0x9e3779b97f4a7c15ull) ^ s;

	memset(o, 0, sizeof(*o));
	o->open_ns = 1700000000ull * S + i * (3600 * S / per_stream) + s * 1000;
	o->close_ns = o->open_ns + (h % 5000) * 1000;
	o->server.b[10] = o->server.b[11] = 0xff;
	o->server.b[12] = 10, o->server.b[15] = (uint8_t)(1 + h % 4);
	o->client.b[10] = o->client.b[11] = 0xff;
	o->client.b[12] = 192, o->client.b[13] = 168, o->client.b[14] = (uint8_t)(h >> 8);
	o->client.b[15] = (uint8_t)(h >> 16);
	o->uid = 1000 + (uint32_t)(h % 500);
	o->gid = 100;
	o->dir = (uint8_t)(h % 3 == 0);
	o->vers = 3;
	o->fh_len = (uint8_t)(8 + (h % 4) * 8);
	for (unsigned int k = 0; k < o->fh_len; k++)
		o->fh[k] = (uint8_t)(h >> (k % 8 * 8)) ^ (uint8_t)k;
	o->ops = 1 + (uint32_t)(h % 16);
	o->transferred = (h % 64) * 4096;
	o->seq_bytes = o->transferred;
	o->size = o->transferred + 4096;
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
mem_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct mem_src *m = ctx;

	(void)name;
	(void)rpc;
	if (m->i == m->count)
		return 0;
	*open = m->v[m->i++];
	*type = TH_TRACE_OPEN;
	return 1;
}

int
main(int argc, char **argv)
{
	uint64_t records = 4000000;
	unsigned int streams = 4, runs = 3, nseg = 0;
	char dir[512] = "", tmpl[] = "/tmp/bench_export_XXXXXX";
	struct seg_src *segs = NULL;
	struct th_export_source *src;
	struct th_export_config c;
	struct th_export_counters ctr;
	FILE *null_out = fopen("/dev/null", "w");
	bool is_own_dir = false;
	int opt;
	double t0, best = 0;

	while ((opt = getopt(argc, argv, "n:s:d:r:")) != -1) {
		switch (opt) {
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
		default:
			fprintf(stderr, "usage: bench_export [-n RECORDS] [-s STREAMS] [-d DIR] "
					"[-r RUNS]\n");
			return 2;
		}
	}
	if (streams == 0 || streams > 64 || records < streams || null_out == NULL)
		return 2;
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

		t0 = now();
		for (unsigned int s = 0; s < streams; s++) {
			struct th_segment_config sc;
			struct th_segment_writer *w;

			memset(&sc, 0, sizeof(sc));
			sc.dir = dir;
			sc.box_id = 1;
			sc.stream_id = (uint16_t)s;
			sc.kind = TH_SEGMENT_KIND_OPENS;
			w = th_segment_writer_create(&sc);
			if (w == NULL)
				return 1;
			for (uint64_t i = 0; i < per; i++) {
				make(s, i, per, &o);
				th_segment_write_open(w, &o);
			}
			if (th_segment_writer_close(w) != 0) {
				fprintf(stderr, "bench_export: writing %s failed\n", dir);
				return 1;
			}
		}
		records = per * streams;
		printf("input: %llu opens in %u streams written in %.2f s (%s)\n",
			(unsigned long long)records, streams, now() - t0, dir);
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
	src = calloc(nseg + 1, sizeof(*src));
	th_export_config_defaults(&c);
	for (unsigned int r = 0; r < runs; r++) {
		double dt;

		for (unsigned int i = 0; i < nseg; i++) {
			segs[i].r = th_segment_reader_open(segs[i].path);
			src[i].label = segs[i].path;
			src[i].next = seg_next;
			src[i].ctx = &segs[i];
		}
		t0 = now();
		th_export_run(&c, src, nseg, null_out, stderr, &ctr);
		dt = now() - t0;
		for (unsigned int i = 0; i < nseg; i++)
			th_segment_reader_close(segs[i].r);
		printf("export to text, from %u segments: %llu records in %.3f s = %.2f M "
		       "records/s\n",
			nseg, (unsigned long long)ctr.records_out, dt,
			(double)ctr.records_out / dt / 1e6);
		if ((double)ctr.records_out / dt > best)
			best = (double)ctr.records_out / dt;
	}
	printf("best: %.2f M records/s (target 3)\n", best / 1e6);

	/* The same records from memory: merge + filters + text only. */
	{
		uint64_t per = records / streams;
		struct th_trace_open *v = malloc(records * sizeof(*v));
		struct mem_src ms[64];

		for (unsigned int s = 0; s < streams; s++) {
			for (uint64_t i = 0; i < per; i++)
				make(s, i, per, &v[s * per + i]);
			ms[s].v = v + s * per;
			ms[s].count = per;
			ms[s].i = 0;
			src[s].label = "memory";
			src[s].next = mem_next;
			src[s].ctx = &ms[s];
		}
		t0 = now();
		th_export_run(&c, src, streams, null_out, stderr, &ctr);
		printf("merge + text only, from memory: %.2f M records/s\n",
			(double)ctr.records_out / (now() - t0) / 1e6);
		free(v);
	}
	if (is_own_dir) {
		for (unsigned int i = 0; i < nseg; i++)
			unlink(segs[i].path);
		rmdir(dir);
	}
	free(src);
	free(segs);
	fclose(null_out);
	return 0;
}
