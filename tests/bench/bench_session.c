/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Session-lcore cost and memory.
 *
 *     bench_session [-n MILLION_OPS] [-f FILES] [-s SESSIONS] [-c CLIENTS]
 *
 * Feeds synthetic operations through one session table: many clients (8
 * users each) opening random files among FILES, each open a close-to-open
 * GETATTR and a run of sequential READs, a GETATTR alone (cache read), a
 * run of WRITEs and a COMMIT, or a READDIRPLUS and a burst of GETATTRs
 * (ls -l). Simulated time advances 20 µs per op and th_sess_tick() runs
 * every 1024 ops. Ops are generated in batches outside the clock; only
 * th_sess_input/th_sess_tick are timed. Prints ops/s, ns/op, records out,
 * evictions, and the memory: bytes per session and per file, the table's
 * total, and what 10 million sessions would take. It never fails on a time.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "th_session.h"

#define BATCH 4096

struct gen {
	uint64_t s;
	uint64_t now;
	uint32_t files;
	uint32_t clients;
};

static uint64_t
rnd(struct gen *g)
{
	/* xorshift64*: a fixed stream, so runs compare. */
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return g->s * 0x2545f4914f6cdd1dull;
}

static void
base(struct gen *g, struct th_sess_op *op, enum th_sess_kind kind, uint32_t file, uint32_t client,
	uint32_t uid)
{
	g->now += 20000;
	op->call_ns = g->now;
	op->reply_ns = g->now + 300000;
	memset(&op->client, 0, sizeof(op->client));
	op->client.b[10] = 0xff;
	op->client.b[11] = 0xff;
	memcpy(&op->client.b[12], &client, 4);
	memset(&op->server, 0, sizeof(op->server));
	op->server.b[10] = 0xff;
	op->server.b[11] = 0xff;
	op->server.b[15] = (uint8_t)(file & 3);
	op->uid = uid;
	op->gid = 100;
	op->kind = (uint8_t)kind;
	op->vers = 3;
	op->flags = TH_SESS_F_OK | TH_SESS_F_HAS_SIZE;
	op->count = 0;
	op->offset = 0;
	op->size = 1u << 20;
	op->fh_len = 28; /* a Linux knfsd NFSv3 handle */
	memset(op->fh, 0x11, op->fh_len);
	memcpy(op->fh + 8, &file, 4);
	op->fh2_len = 0;
	op->name_len = 0;
	op->name2_len = 0;
}

/* Fill @p ops with about @p n ops (whole opens). @return how many. */
static unsigned int
fill(struct gen *g, struct th_sess_op *ops, unsigned int n)
{
	unsigned int i = 0;

	while (i + 16 < n) {
		uint32_t file = (uint32_t)(rnd(g) % g->files);
		uint32_t client = (uint32_t)(rnd(g) % g->clients) + 1;
		uint32_t uid = 1000 + (uint32_t)(rnd(g) % 8);
		unsigned int what = (unsigned int)(rnd(g) % 10), k = 1 + (unsigned int)(rnd(g) % 8);

		if (what < 5) {
			base(g, &ops[i++], TH_SESS_GETATTR, file, client, uid);
			for (unsigned int j = 0; j < k; j++) {
				base(g, &ops[i], TH_SESS_READ, file, client, uid);
				ops[i].offset = (uint64_t)j * 131072;
				ops[i++].count = 131072;
			}
		} else if (what < 7) {
			base(g, &ops[i++], TH_SESS_GETATTR, file, client, uid);
		} else if (what < 9) {
			for (unsigned int j = 0; j < k; j++) {
				base(g, &ops[i], TH_SESS_WRITE, file, client, uid);
				ops[i].offset = (uint64_t)j * 65536;
				ops[i++].count = 65536;
			}
			base(g, &ops[i++], TH_SESS_COMMIT, file, client, uid);
		} else {
			base(g, &ops[i], TH_SESS_READDIRPLUS, file / 64, client, uid);
			ops[i++].flags |= TH_SESS_F_IS_DIR;
			for (unsigned int j = 0; j < k; j++)
				base(g, &ops[i++], TH_SESS_GETATTR, (file & ~63u) + j, client, uid);
		}
	}
	return i;
}

static uint64_t records;

static void
on_record(void *ctx, const struct th_sess_record *r)
{
	(void)ctx;
	(void)r;
	records++;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct th_sess_config cfg;
	struct gen g = {.s = 0x9e3779b97f4a7c15ull, .now = 1700000000ull * 1000000000ull};
	double million = 5, t_in = 0;
	uint64_t ops = 0, target;
	const struct th_sess_counters *ctr;
	struct th_sess_table *t;
	struct th_sess_op *batch;
	int opt;

	th_sess_config_defaults(&cfg);
	g.files = 4u << 20;
	g.clients = 2000;
	while ((opt = getopt(argc, argv, "n:f:s:c:")) != -1) {
		switch (opt) {
		case 'n':
			million = atof(optarg);
			break;
		case 'f':
			g.files = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			cfg.sessions = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			g.clients = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n MILLION_OPS] [-f FILES] [-s SESSIONS] "
				"[-c CLIENTS]\n",
				argv[0]);
			return 2;
		}
	}
	if (g.files == 0 || g.clients == 0 || million <= 0) {
		fprintf(stderr, "bench_session: -n, -f and -c must be positive\n");
		return 2;
	}
	cfg.files = cfg.sessions;
	batch = calloc(BATCH, sizeof(*batch));
	t = th_sess_create(&cfg, on_record, NULL, NULL);
	if (batch == NULL || t == NULL) {
		perror("bench_session");
		return 1;
	}
	target = (uint64_t)(million * 1e6);
	while (ops < target) {
		unsigned int n = fill(&g, batch, BATCH);
		double t0 = now_s();

		for (unsigned int i = 0; i < n; i++) {
			th_sess_input(t, &batch[i]);
			if ((i & 1023) == 1023)
				th_sess_tick(t, batch[i].reply_ns);
		}
		t_in += now_s() - t0;
		ops += n;
	}
	th_sess_flush(t);
	ctr = th_sess_counters(t);
	printf("ops                 %" PRIu64 " (%u files, %u clients x 8 users)\n", ops, g.files,
		g.clients);
	printf("ops/s               %.2f M\n", (double)ops / t_in / 1e6);
	printf("ns/op               %.1f\n", t_in * 1e9 / (double)ops);
	printf("records             %" PRIu64 " (cache reads %" PRIu64 ", listing phantoms %" PRIu64
	       ")\n",
		records, ctr->records_cache_hit, ctr->phantoms_listing);
	printf("evicted             sessions %" PRIu64 ", files %" PRIu64 ", histories %" PRIu64
	       "\n",
		ctr->sessions_evicted, ctr->files_evicted, ctr->history_evicted);
	printf("bytes/session       %zu\n", th_sess_session_size());
	printf("bytes/file          %zu\n", th_sess_file_size());
	printf("table memory        %.1f MiB (%u sessions, %u files, %u clients, %u names)\n",
		(double)th_sess_memory(t) / 1048576.0, cfg.sessions, cfg.files, cfg.clients,
		cfg.names);
	printf("10M sessions        %.0f MB sessions alone; %.0f MB with 10M files; %.0f MB with "
	       "5M files\n",
		10e6 * (double)th_sess_session_size() / 1e6,
		10e6 * (double)(th_sess_session_size() + th_sess_file_size()) / 1e6,
		(10e6 * (double)th_sess_session_size() + 5e6 * (double)th_sess_file_size()) / 1e6);
	th_sess_free(t);
	free(batch);
	return 0;
}
