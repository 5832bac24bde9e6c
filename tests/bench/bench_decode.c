/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Decode-lcore cost, replayed from memory.
 *
 *     bench_decode [-r RUNS] [-w] PCAP
 *
 * Loads PCAP into memory, then RUNS times: creates a fresh pipeline (not
 * timed), feeds every frame through th_decode_frame() and formats every op
 * the way the capture lcore does (timed), and tears down (not timed). Only
 * the loop is inside the clock: no file reading, no allocation, no output.
 * Prints per run and the median: packets/s on one lcore, ns/packet, and
 * cycles and instructions per packet from the CPU counters when the kernel
 * allows them (otherwise: run it under valgrind --tool=callgrind and divide
 * Ir by the packet count; the program prints that count).
 *
 * -w also times the pipeline without formatting op lines, to split the cost;
 * -n times only that (for instruction counts under callgrind); -s runs
 * open/close inference on every op as well (inline, as with one worker lcore);
 * -S only reduces each op to its inference event, the decode lcore's share
 * when session lcores do the inference; -R writes every op as an RPC trace
 * record to a segment under /tmp, as a decode lcore does with trace.rpcs = 1
 * (the segment is closed, fsync'd and removed outside the clock). -D walks
 * READDIRPLUS entries for their names, as a decode lcore does when names are
 * on (capture -r, session.names, trace.dir), handing each to a counter. -C
 * looks for no mirror-port copies (decode.copy_window = 0).
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "th_decode.h"
#include "th_pcap.h"
#include "th_segment.h"
#include "th_session.h"

#define MAX_RUNS 31

static bool is_sessions;  /* -s: also run open/close inference on every op */
static bool is_reduce_only; /* -S: only reduce each op for inference (the decode lcore's share) */
static bool is_rpc_records; /* -R: write each op as an RPC trace record */
static bool is_names;       /* -D: walk READDIRPLUS entries (names on) */
static bool is_no_copies;   /* -C: decode.copy_window = 0, no mirror copies looked for */

struct sink {
	bool is_formatting;
	struct th_sess_table *sess; /* inference inline, or NULL */
	struct th_sess_op sop;	    /* the op being reduced */
	struct th_segment_writer *rpc_seg; /* -R: RPC records go here */
	struct th_trace_rpc rpc;           /* the op as one */
	uint64_t records;	    /* open records out */
	uint64_t ops;
	uint64_t bytes;
	uint64_t raw_bytes; /* -R: record bytes before LZ4 */
	uint64_t dirents;   /* -D: READDIRPLUS entries handed on */
	char line[8192];
};

static void
on_record(void *ctx, const struct th_sess_record *r)
{
	struct sink *s = ctx;

	(void)r;
	s->records++;
}

static void
on_op(void *ctx, const struct th_op *op)
{
	struct sink *s = ctx;

	s->ops++;
	if (s->sess != NULL && th_sess_op_from_op(op, &s->sop))
		th_sess_input(s->sess, &s->sop);
	else if (is_reduce_only)
		s->records += th_sess_op_from_op(op, &s->sop);
	if (s->rpc_seg != NULL) {
		th_op_rpc_record(op, &s->rpc);
		th_segment_write_rpc(s->rpc_seg, &s->rpc);
	}
	if (s->is_formatting)
		s->bytes += (uint64_t)th_op_format(op, s->line, sizeof(s->line));
}

/* -R: a segment writer in a fresh directory under /tmp. */
static struct th_segment_writer *
rpc_writer(char *dir)
{
	struct th_segment_config c;

	strcpy(dir, "/tmp/bench_decode-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return NULL;
	memset(&c, 0, sizeof(c));
	c.dir = dir;
	c.kind = TH_SEGMENT_KIND_RPCS;
	return th_segment_writer_create(&c);
}

/* Close the writer, report what it wrote, and remove its directory. */
static void
rpc_writer_done(struct sink *s, const char *dir)
{
	struct th_segment_counters c;
	char path[512];
	struct dirent *de;
	DIR *d;

	th_segment_writer_counters(s->rpc_seg, &c);
	th_segment_writer_close(s->rpc_seg, NULL);
	s->rpc_seg = NULL;
	s->bytes = c.file_bytes;
	s->raw_bytes = c.raw_bytes;
	s->records = c.records;
	d = opendir(dir);
	while (d != NULL && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
						    de->d_name) < sizeof(path))
			unlink(path);
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

static int
counter_open(uint64_t config)
{
	struct perf_event_attr pe;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_HARDWARE;
	pe.size = sizeof(pe);
	pe.config = config;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct result {
	double ns;
	double cycles;
	double instructions;
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
on_dirent(void *ctx, const struct th_op *op, const struct th_nfs_dirent *e)
{
	struct sink *s = ctx;

	(void)op;
	s->dirents += e->name_len != 0;
}

static int
run_once(const struct th_pcap_file *f, bool is_formatting, int fd_cyc, int fd_ins, struct result *r,
	struct sink *s)
{
	struct th_decode_config cfg;
	struct th_decode *d;
	uint64_t t0, t1, cyc = 0, ins = 0;
	char dir[64];
	size_t i;

	th_decode_config_defaults(&cfg);
	if (is_no_copies)
		cfg.copy_window_ns = 0;
	memset(s, 0, offsetof(struct sink, line));
	s->is_formatting = is_formatting;
	d = th_decode_create(&cfg, on_op, s);
	if (d == NULL)
		return -errno;
	if (is_names)
		th_decode_set_dirent_cb(d, on_dirent);
	/* Touch the tables once so page faults are not counted as decode work. */
	for (i = 0; i < f->count && i < 1000; i++)
		th_decode_frame(d, f->recs[i].data, f->recs[i].caplen, f->recs[i].wirelen,
			(enum th_pkt_link)f->linktype, f->recs[i].ts_ns);
	th_decode_free(d);
	d = th_decode_create(&cfg, on_op, s);
	if (d == NULL)
		return -errno;
	if (is_names)
		th_decode_set_dirent_cb(d, on_dirent);
	memset(s, 0, offsetof(struct sink, line));
	s->is_formatting = is_formatting;
	if (is_sessions) {
		struct th_sess_config sc;

		th_sess_config_defaults(&sc);
		s->sess = th_sess_create(&sc, on_record, NULL, s);
		if (s->sess == NULL)
			return -errno;
	}
	if (is_rpc_records && (s->rpc_seg = rpc_writer(dir)) == NULL)
		return -errno;

	if (fd_cyc >= 0) {
		ioctl(fd_cyc, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd_ins, PERF_EVENT_IOC_RESET, 0);
		ioctl(fd_cyc, PERF_EVENT_IOC_ENABLE, 0);
		ioctl(fd_ins, PERF_EVENT_IOC_ENABLE, 0);
	}
	t0 = now_ns();
	for (i = 0; i < f->count; i++)
		th_decode_frame(d, f->recs[i].data, f->recs[i].caplen, f->recs[i].wirelen,
			(enum th_pkt_link)f->linktype, f->recs[i].ts_ns);
	t1 = now_ns();
	if (fd_cyc >= 0) {
		ioctl(fd_cyc, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(fd_ins, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd_cyc, &cyc, sizeof(cyc)) != sizeof(cyc) ||
			read(fd_ins, &ins, sizeof(ins)) != sizeof(ins))
			cyc = ins = 0;
	}
	/* Flushing emits calls that never got a reply: not part of the per-packet cost. */
	th_decode_flush(d);
	th_decode_free(d);
	if (s->sess != NULL) {
		th_sess_free(s->sess);
		s->sess = NULL;
	}
	if (s->rpc_seg != NULL)
		rpc_writer_done(s, dir);
	r->ns = (double)(t1 - t0) / (double)f->count;
	r->cycles = (double)cyc / (double)f->count;
	r->instructions = (double)ins / (double)f->count;
	return 0;
}

static int
bench(const struct th_pcap_file *f, bool is_formatting, int runs, int fd_cyc, int fd_ins)
{
	static struct sink s;
	double ns[MAX_RUNS], cyc[MAX_RUNS], ins[MAX_RUNS];
	struct result r = {0, 0, 0};
	int i, rc;

	for (i = 0; i < runs; i++) {
		rc = run_once(f, is_formatting, fd_cyc, fd_ins, &r, &s);
		if (rc != 0)
			return rc;
		ns[i] = r.ns;
		cyc[i] = r.cycles;
		ins[i] = r.instructions;
		printf("  run %d: %.1f ns/pkt  %.2f Mpps", i + 1, r.ns, 1e3 / r.ns);
		if (fd_cyc >= 0)
			printf("  %.0f cycles/pkt  %.0f instr/pkt", r.cycles, r.instructions);
		printf("\n");
	}
	printf("%s: median of %d: %.1f ns/packet, %.2f Mpps per lcore",
		is_rpc_records   ? "decode + RPC records to a segment"
		: is_sessions    ? "decode + open/close inference"
		: is_reduce_only ? "decode + reduce ops for session lcores"
		: is_formatting  ? "decode + format op lines"
				 : "decode only",
		runs, median(ns, runs), 1e3 / median(ns, runs));
	if (fd_cyc >= 0)
		printf(", %.0f cycles/packet, %.0f instructions/packet", median(cyc, runs),
			median(ins, runs));
	else
		printf(" (CPU counters unavailable here)");
	printf("; %" PRIu64 " ops per run\n", s.ops);
	if (is_rpc_records)
		printf("  %" PRIu64 " RPC records, %.1f bytes each coded, %.1f on disk\n",
			s.records, s.records != 0 ? (double)s.raw_bytes / (double)s.records : 0.0,
			s.records != 0 ? (double)s.bytes / (double)s.records : 0.0);
	return 0;
}

int
main(int argc, char **argv)
{
	struct th_pcap_file *f;
	char err[256];
	int runs = 5, opt, fd_cyc, fd_ins, rc = 0;
	bool both = false, only_decode = false;

	while ((opt = getopt(argc, argv, "r:wnsSRDC")) != -1) {
		if (opt == 'C')
			is_no_copies = true;
		else if (opt == 'D')
			is_names = true;
		else if (opt == 'R')
			is_rpc_records = true;
		else if (opt == 's')
			is_sessions = true;
		else if (opt == 'S')
			is_reduce_only = true;
		else if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 'w')
			both = true;
		else if (opt == 'n')
			only_decode = true;
		else
			goto usage;
	}
	if (optind != argc - 1 || runs < 1 || runs > MAX_RUNS)
		goto usage;
	f = th_pcap_load(argv[optind], err, sizeof(err));
	if (f == NULL) {
		fprintf(stderr, "bench_decode: %s\n", err);
		return 1;
	}
	printf("%s: %zu packets, %" PRIu64 " bytes (%.0f bytes/packet)\n", argv[optind], f->count,
		f->frame_bytes, (double)f->frame_bytes / (double)f->count);
	fd_cyc = counter_open(PERF_COUNT_HW_CPU_CYCLES);
	fd_ins = fd_cyc >= 0 ? counter_open(PERF_COUNT_HW_INSTRUCTIONS) : -1;
	if (fd_ins < 0 && fd_cyc >= 0) {
		close(fd_cyc);
		fd_cyc = -1;
	}
	if (both || only_decode)
		rc = bench(f, false, runs, fd_cyc, fd_ins);
	if (rc == 0 && !only_decode)
		rc = bench(f, true, runs, fd_cyc, fd_ins);
	th_pcap_file_free(f);
	return rc == 0 ? 0 : 1;

usage:
	fprintf(stderr,
		"usage: bench_decode [-r RUNS (1-%d)] [-w | -n] [-s | -S | -R] [-D] [-C] PCAP\n",
		MAX_RUNS);
	return 2;
}
