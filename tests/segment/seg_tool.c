/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Crash, disk-full and permission tests for lib/segment.
 *
 *     seg_tool crash DIR [ROUNDS] [SLACK_MS]
 *         A clean run first (N records, every segment closed and complete),
 *         then ROUNDS (default 20) times: a forked writer writes RPC records
 *         (xid = sequence number) as fast as it can (even rounds) or at
 *         about 10k records/s (odd rounds: only flushes save them), flushing every 100 ms
 *         and rotating every 1 MiB and 300 ms, and is killed with SIGKILL
 *         after a random 30-900 ms. Every closed segment must verify; the
 *         records of all segments plus the killed .tmp, in name order, must
 *         be records 0..K-1 exactly (prefix-complete, equal to the clean
 *         run's); and K must cover every record the writer had written
 *         100 ms + SLACK_MS (default 100) before the kill. Prints the
 *         largest loss window seen.
 *     seg_tool diskfull DIR
 *         DIR is a small filesystem (2 MiB tmpfs): write until it is full.
 *         The stream stops with ENOSPC and counts every later record as lost
 *         (nospace); a second stream elsewhere keeps writing; every closed
 *         segment verifies; the records read back are exactly those counted
 *         as written; after space is freed the stream resumes.
 *     seg_tool readonly DIR
 *         DIR is read-only: the stream stops with EROFS/EACCES, counted as
 *         perm, nothing crashes.
 *
 * Exit 0 on success, 1 with a message on the first failed check.
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "th_segment.h"

#include "seg_records.h"

#define SEED 77
#define MS UINT64_C(1000000)
#define FLUSH_NS (100 * MS)
#define MAX_FILES 4096
#define PROGRESS 8192

/* The writer's progress, shared with the parent: at monotonic time t, next_seq records written. */
struct progress {
	atomic_uint_fast64_t n;
	struct {
		uint64_t t;
		uint64_t seq;
	} at[PROGRESS];
};

struct files {
	unsigned int n;
	char name[MAX_FILES][300];
};

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* Segment order is name order once .tmp is set aside: PREFIX-BOX-STREAM-CREATIONNS. */
static int
cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void
list(const char *dir, struct files *f)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		die("%s: %s", dir, strerror(errno));
	f->n = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (f->n == MAX_FILES)
			die("%s: too many files", dir);
		snprintf(f->name[f->n++], sizeof(f->name[0]), "%s", e->d_name);
	}
	closedir(d);
	qsort(f->name, f->n, sizeof(f->name[0]), cmp_name);
}

static bool
is_tmp(const char *name)
{
	size_t l = strlen(name);

	return l > 4 && strcmp(name + l - 4, TH_SEGMENT_TMP_SUFFIX) == 0;
}

/*
 * Read every segment of @p dir in order, checking record i against the
 * generator. @return records recovered; *n_tmp: .tmp files seen.
 */
static uint64_t
verify_dir(const char *dir, bool is_rpc, unsigned int *n_tmp, bool is_quiet)
{
	static struct files f;
	uint64_t next = 0;

	list(dir, &f);
	*n_tmp = 0;
	for (unsigned int i = 0; i < f.n; i++) {
		char path[700];
		struct th_segment_reader *r;
		struct th_trace_rpc rpc, want_rpc;
		struct th_trace_open op, want_op;
		enum th_segment_read_state st;
		int t;

		snprintf(path, sizeof(path), "%s/%s", dir, f.name[i]);
		/* Compared whole: padding must match too. */
		memset(&rpc, 0, sizeof(rpc));
		memset(&op, 0, sizeof(op));
		r = th_segment_reader_open(path);
		if (r == NULL) {
			/* A .tmp killed before its first write has nothing to give. */
			if (is_tmp(f.name[i]) && (errno == ENODATA || errno == EBADMSG)) {
				(*n_tmp)++;
				continue;
			}
			die("%s: cannot open: %s", path, strerror(errno));
		}
		while ((t = th_segment_reader_next(r, &op, NULL, &rpc)) > 0) {
			if (is_rpc) {
				seg_make_rpc(SEED, next, &want_rpc);
				if (t != TH_TRACE_RPC || memcmp(&rpc, &want_rpc, sizeof(rpc)) != 0)
					die("%s: record %" PRIu64
					    " (xid %u) is not the one written",
						path, next, rpc.xid);
			} else {
				seg_make_open(SEED, next, &want_op);
				if (t != TH_TRACE_OPEN || memcmp(&op, &want_op, sizeof(op)) != 0)
					die("%s: record %" PRIu64 " is not the one written", path,
						next);
			}
			next++;
		}
		st = th_segment_reader_state(r);
		if (is_tmp(f.name[i])) {
			(*n_tmp)++;
			if (st != TH_SEGMENT_READ_TRUNCATED && st != TH_SEGMENT_READ_COMPLETE)
				die("%s", th_segment_reader_describe(r));
			if (!is_quiet)
				printf("  %s\n", th_segment_reader_describe(r));
		} else if (st != TH_SEGMENT_READ_COMPLETE) {
			die("closed segment does not verify: %s", th_segment_reader_describe(r));
		}
		th_segment_reader_close(r);
	}
	return next;
}

static void
clear_dir(const char *dir)
{
	static struct files f;
	char path[700];

	list(dir, &f);
	for (unsigned int i = 0; i < f.n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, f.name[i]);
		unlink(path);
	}
}

/* The writer process: RPC records as fast as possible, until killed or @p limit. */
static int
writer(const char *dir, uint64_t limit, struct progress *p, bool is_slow)
{
	/* Slow: about 10k records/s, so the 256 KiB write buffer never fills and only flushes save.
	 */
	const uint64_t every = is_slow ? 8 : 256;
	const struct timespec pause = {0, 800000};
	struct th_segment_config c = {
		.dir = dir,
		.kind = TH_SEGMENT_KIND_RPCS,
		.box_id = 1,
		.stream_id = 0,
		.max_bytes = 1 << 20,
		.rotate_ns = 300 * MS,
		.flush_ns = FLUSH_NS,
	};
	struct th_segment_writer *w = th_segment_writer_create(&c);
	struct th_trace_rpc r;

	if (w == NULL || th_segment_writer_error(w) != 0)
		return 1;
	for (uint64_t i = 0; i < limit; i++) {
		if (i % every == 0) {
			uint64_t now;

			if (is_slow)
				nanosleep(&pause, NULL);
			now = th_segment_now_ns();

			if (p != NULL) {
				uint64_t k = atomic_load(&p->n);

				p->at[k % PROGRESS].t = now;
				p->at[k % PROGRESS].seq = i;
				atomic_store(&p->n, k + 1);
			}
			if (th_segment_writer_tick(w, now) != 0)
				return 1;
		}
		seg_make_rpc(SEED, i, &r);
		if (th_segment_write_rpc(w, &r) != 0)
			return 1;
	}
	return th_segment_writer_close(w, NULL) == 0 ? 0 : 1;
}

static int
crash(const char *dir, unsigned int rounds, uint64_t slack_ns)
{
	const uint64_t clean_n = 3000000;
	struct progress *p;
	unsigned int n_tmp;
	uint64_t got, worst_ns = 0, total = 0;
	pid_t pid;
	int status;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		die("%s: %s", dir, strerror(errno));
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	clear_dir(dir);
	if (writer(dir, clean_n, NULL, false) != 0)
		die("clean run failed");
	got = verify_dir(dir, true, &n_tmp, true);
	if (got != clean_n || n_tmp != 0)
		die("clean run: %" PRIu64 " records read back of %" PRIu64 ", %u .tmp", got,
			clean_n, n_tmp);
	printf("clean run: %" PRIu64 " records, all segments complete\n", got);

	srand((unsigned int)time(NULL));
	for (unsigned int round = 0; round < rounds; round++) {
		uint64_t kill_ns, need = 0, have_t = 0, delay_ms = 30 + (uint64_t)rand() % 870;
		struct timespec ts = {(time_t)(delay_ms / 1000), (long)(delay_ms % 1000) * 1000000};
		uint64_t k;

		clear_dir(dir);
		atomic_store(&p->n, 0);
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0)
			_exit(writer(dir, UINT64_MAX, p, round % 2 == 1));
		nanosleep(&ts, NULL);
		kill_ns = th_segment_now_ns();
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (!WIFSIGNALED(status))
			die("round %u: writer exited on its own (status %d)", round, status);
		got = verify_dir(dir, true, &n_tmp, true);
		if (n_tmp > 1)
			die("round %u: %u .tmp segments", round, n_tmp);
		/* Everything written FLUSH + slack before the kill must be there. */
		k = atomic_load(&p->n);
		for (uint64_t j = k > PROGRESS ? k - PROGRESS : 0; j < k; j++) {
			if (p->at[j % PROGRESS].t + FLUSH_NS + slack_ns <= kill_ns)
				need = p->at[j % PROGRESS].seq;
			/* The loss window: how long before the kill the first lost record was
			 * written. */
			if (p->at[j % PROGRESS].seq <= got)
				have_t = p->at[j % PROGRESS].t;
		}
		if (got < need)
			die("round %u: %" PRIu64 " records recovered, but %" PRIu64
			    " were written more than %" PRIu64 " ms before the kill",
				round, got, need, (uint64_t)((FLUSH_NS + slack_ns) / MS));
		if (have_t != 0 && kill_ns - have_t > worst_ns)
			worst_ns = kill_ns - have_t;
		total += got;
		printf("round %2u: %s writer killed after %3" PRIu64 " ms, %8" PRIu64
		       " records recovered (prefix-complete), loss window %3" PRIu64 " ms\n",
			round, round % 2 ? "slow" : "fast", delay_ms, got,
			have_t != 0 ? (kill_ns - have_t) / MS : 0);
		fflush(stdout);
	}
	clear_dir(dir);
	printf("crash: %u rounds, %" PRIu64 " records recovered, largest loss window %" PRIu64
	       " ms (flush interval 100 ms)\n",
		rounds, total, (uint64_t)(worst_ns / MS));
	return 0;
}

static void
print_counters(const char *what, const struct th_segment_counters *c)
{
	printf("%s: records %" PRIu64 ", segments %" PRIu64 ", errors %" PRIu64 ", lost", what,
		c->records, c->segments, c->errors);
	for (unsigned int i = 0; i < TH_SEGMENT_LOSS_MAX; i++)
		printf(" %s=%" PRIu64, th_segment_loss_name(i), c->lost[i]);
	printf("\n");
}

static int
diskfull(const char *dir)
{
	struct th_segment_config c = {
		.dir = dir,
		.kind = TH_SEGMENT_KIND_OPENS,
		.box_id = 1,
		.max_bytes = 256 * 1024,
		.flush_ns = FLUSH_NS,
	};
	char other[] = "/tmp/seg_other_XXXXXX";
	struct th_segment_writer *w, *w2;
	struct th_segment_counters ctr, ctr2;
	struct th_trace_open o;
	unsigned int n_tmp;
	uint64_t i, attempted = 0, got, now = 1;
	int ret = 0;

	clear_dir(dir);
	if (mkdtemp(other) == NULL)
		die("mkdtemp: %s", strerror(errno));
	w = th_segment_writer_create(&c);
	c.dir = other;
	c.stream_id = 1;
	w2 = th_segment_writer_create(&c);
	if (w == NULL || w2 == NULL)
		die("create: %s", strerror(errno));
	/* Write until the disk is full, then 100000 more: they must be counted, not crash. */
	for (i = 0; i < 20000000; i++) {
		seg_make_open(SEED, i, &o);
		ret = th_segment_write_open(w, &o);
		attempted++;
		if (th_segment_write_open(w2, &o) != 0)
			die("the healthy stream stopped: %s", th_segment_writer_describe(w2));
		if ((i & 1023) == 0) {
			now += 10 * MS;
			th_segment_writer_tick(w, now);
			th_segment_writer_tick(w2, now);
		}
		if (ret != 0 && attempted > 100000 && i > 0) {
			static uint64_t after;

			if (++after == 100000)
				break;
		}
	}
	if (ret != -ENOSPC || th_segment_writer_error(w) != -ENOSPC)
		die("stream did not stop with ENOSPC (write %d, error %d)", ret,
			th_segment_writer_error(w));
	printf("full disk: %s\n", th_segment_writer_describe(w));
	th_segment_writer_counters(w, &ctr);
	print_counters("full stream", &ctr);
	if (ctr.lost[TH_SEGMENT_LOSS_NOSPACE] < 100000 || ctr.errors != 1)
		die("losses not counted as nospace");
	if (ctr.records + ctr.lost[TH_SEGMENT_LOSS_NOSPACE] != attempted)
		die("written %" PRIu64 " + lost %" PRIu64 " != attempted %" PRIu64, ctr.records,
			ctr.lost[TH_SEGMENT_LOSS_NOSPACE], attempted);

	/* What it counts as written is exactly what reads back, every closed segment intact. */
	got = verify_dir(dir, false, &n_tmp, false);
	if (got != ctr.records)
		die("read back %" PRIu64 " records, the writer counted %" PRIu64, got, ctr.records);
	if (ctr.segments < 2)
		die("expected earlier closed segments before the disk filled");
	printf("read back: %" PRIu64 " records = counted as written; %" PRIu64
	       " closed segments complete, %u .tmp truncated\n",
		got, ctr.segments, n_tmp);

	/* The healthy stream wrote everything. */
	th_segment_writer_counters(w2, &ctr2);
	if (ctr2.records != attempted || th_segment_writer_close(w2, NULL) != 0)
		die("the healthy stream lost records");

	/* Free space (the operator deletes the oldest segment) and resume. */
	{
		static struct files f;
		char path[700];

		list(dir, &f);
		for (unsigned int k = 0; k < f.n && k < 3; k++) {
			snprintf(path, sizeof(path), "%s/%s", dir, f.name[k]);
			unlink(path);
		}
	}
	if (th_segment_writer_resume(w) != 0)
		die("resume: %s", th_segment_writer_describe(w));
	for (uint64_t k = 0; k < 1000; k++) {
		seg_make_open(SEED, k, &o);
		if (th_segment_write_open(w, &o) != 0)
			die("after resume: %s", th_segment_writer_describe(w));
	}
	if (th_segment_writer_close(w, NULL) != 0)
		die("close after resume failed");
	printf("resumed after freeing space: 1000 records written and closed\n");
	clear_dir(other);
	rmdir(other);
	return 0;
}

static int
readonly(const char *dir)
{
	struct th_segment_config c = {.dir = dir, .kind = TH_SEGMENT_KIND_NAMES};
	struct th_segment_writer *w = th_segment_writer_create(&c);
	struct th_segment_counters ctr;
	struct th_trace_name nm;

	if (w == NULL)
		die("create: %s", strerror(errno));
	for (uint64_t i = 0; i < 1000; i++) {
		seg_make_name(SEED, i, &nm);
		th_segment_write_name(w, &nm);
	}
	th_segment_writer_counters(w, &ctr);
	print_counters("read-only stream", &ctr);
	printf("state: %s\n", th_segment_writer_describe(w));
	if (th_segment_writer_error(w) == 0 || ctr.lost[TH_SEGMENT_LOSS_PERM] != 1000)
		die("a read-only directory was not reported as perm losses");
	th_segment_writer_close(w, NULL);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "crash") == 0)
		return crash(argv[2], argc > 3 ? (unsigned int)atoi(argv[3]) : 20,
			(argc > 4 ? strtoull(argv[4], NULL, 10) : 100) * MS);
	if (argc == 3 && strcmp(argv[1], "diskfull") == 0)
		return diskfull(argv[2]);
	if (argc == 3 && strcmp(argv[1], "readonly") == 0)
		return readonly(argv[2]);
	fprintf(stderr, "usage: %s crash DIR [ROUNDS] [SLACK_MS] | diskfull DIR | readonly DIR\n",
		argv[0]);
	return 2;
}
