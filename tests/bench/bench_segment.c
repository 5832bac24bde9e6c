/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Segment write cost on one core, bytes per record on disk, and read-back
 * speed.
 *
 *     bench_segment [-n MILLION_RECORDS] [-d DIR] [-l LZ4_LEVEL] [-f FLUSH_MS]
 *
 * Realistic open records (tests/segment/seg_records.h: 2 servers, 200
 * clients, 500 users, 32-byte knfsd-like handles over 100k files with a hot
 * set, increasing times) are generated into memory first; only the writer is
 * timed: th_segment_write_open() per record, th_segment_writer_tick() every
 * 1024 records with the monotonic clock (flushes every FLUSH_MS, default
 * 1000, with fdatasync), and the final close (trailer, fsync, rename).
 * Segments rotate at 256 MiB. The same records formatted by the seed's text
 * layout (th_sess_record_format) give the text size to compare with. Then
 * the segments are read back with th_segment_reader. Prints numbers; it
 * never fails on a time. DIR defaults to /tmp; /dev/shm shows the CPU cost
 * alone.
 */

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "th_segment.h"
#include "th_session.h"

#include "../segment/seg_records.h"

#define POOL (1u << 20)

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
to_sess(const struct th_trace_open *o, struct th_sess_record *r)
{
	memset(r, 0, sizeof(*r));
	r->open_ns = o->open_ns;
	r->close_ns = o->close_ns;
	r->server = o->server;
	r->client = o->client;
	r->fh_len = o->fh_len;
	memcpy(r->fh, o->fh, o->fh_len);
	r->uid = o->uid;
	r->gid = o->gid;
	r->dir = o->dir;
	r->vers = o->vers;
	r->transferred = o->transferred;
	r->size = o->size;
}

int
main(int argc, char **argv)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct th_segment_counters ctr;
	struct th_trace_open *pool;
	struct th_sess_record sr;
	char dir[512], line[512], path[1024];
	const char *base = "/tmp";
	uint64_t n = 20000000, text_bytes = 0, file_bytes = 0, read_records = 0;
	uint64_t flush_ms = 1000;
	int level = 0, opt;
	double t0, t1;
	DIR *d;
	struct dirent *e;

	while ((opt = getopt(argc, argv, "n:d:l:f:")) != -1) {
		switch (opt) {
		case 'n':
			n = (uint64_t)(atof(optarg) * 1e6);
			break;
		case 'd':
			base = optarg;
			break;
		case 'l':
			level = atoi(optarg);
			break;
		case 'f':
			flush_ms = strtoull(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n MILLION_RECORDS] [-d DIR] [-l LEVEL] [-f "
				"FLUSH_MS]\n",
				argv[0]);
			return 2;
		}
	}
	snprintf(dir, sizeof(dir), "%s/bench_segment_XXXXXX", base);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return 1;
	}
	pool = malloc(sizeof(*pool) * POOL);
	if (pool == NULL)
		return 1;
	/* The pool repeats every 1M records; times keep increasing past it. */
	for (uint32_t i = 0; i < POOL; i++) {
		seg_make_open(11, i, &pool[i]);
		to_sess(&pool[i], &sr);
		text_bytes += (uint64_t)th_sess_record_format(&sr, line, sizeof(line));
	}

	memset(&c, 0, sizeof(c));
	c.dir = dir;
	c.kind = TH_SEGMENT_KIND_OPENS;
	c.box_id = 1;
	c.flush_ns = flush_ms * 1000000;
	c.level = level;
	w = th_segment_writer_create(&c);
	if (w == NULL || th_segment_writer_error(w) != 0) {
		fprintf(stderr, "%s: cannot write segments\n", dir);
		return 1;
	}
	t0 = now_s();
	for (uint64_t i = 0; i < n; i++) {
		struct th_trace_open *o = &pool[i & (POOL - 1)];

		th_segment_write_open(w, o);
		if ((i & 1023) == 0)
			th_segment_writer_tick(w, th_segment_now_ns());
	}
	th_segment_writer_counters(w, &ctr);
	if (th_segment_writer_close(w, NULL) != 0)
		fprintf(stderr, "writer stopped on an error\n");
	t1 = now_s();

	d = opendir(dir);
	ctr.segments = 0;
	{
		double wt = t1 - t0, r0, r1;

		r0 = now_s();
		while (d != NULL && (e = readdir(d)) != NULL) {
			struct th_segment_reader *rd;
			struct th_trace_open o;
			struct stat st;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (stat(path, &st) == 0)
				file_bytes += (uint64_t)st.st_size;
			ctr.segments++;
			rd = th_segment_reader_open(path);
			if (rd == NULL)
				continue;
			while (th_segment_reader_next(rd, &o, NULL, NULL) > 0)
				read_records++;
			if (th_segment_reader_state(rd) != TH_SEGMENT_READ_COMPLETE)
				fprintf(stderr, "%s\n", th_segment_reader_describe(rd));
			th_segment_reader_close(rd);
			unlink(path);
		}
		r1 = now_s();
		if (d != NULL)
			closedir(d);
		rmdir(dir);

		printf("segment write, one core, LZ4 level %d, flush every %" PRIu64
		       " ms, dir %s\n",
			level, flush_ms, base);
		printf("  records           %" PRIu64
		       " (realistic open records, 32-byte handles)\n",
			n);
		printf("  write             %.2f M records/s (%.1f ns/record, %.0f MB/s raw in)\n",
			(double)n / wt / 1e6, wt * 1e9 / (double)n,
			(double)ctr.raw_bytes / wt / 1e6);
		printf("  raw record        %.1f bytes/record (encoded, before LZ4)\n",
			(double)ctr.raw_bytes / (double)n);
		printf("  on disk           %.1f bytes/record (%" PRIu64 " bytes, %" PRIu64
		       " segment(s), %" PRIu64 " flushes)\n",
			(double)file_bytes / (double)n, file_bytes, ctr.segments, ctr.flushes);
		printf("  seed text line    %.1f bytes/record (th_sess_record_format)\n",
			(double)text_bytes / POOL);
		printf("  text / segment    %.1fx smaller on disk\n",
			(double)text_bytes / POOL / ((double)file_bytes / (double)n));
		printf("  read back         %.2f M records/s (%" PRIu64 " records, checksums on)\n",
			(double)read_records / (r1 - r0) / 1e6, read_records);
	}
	free(pool);
	return 0;
}
