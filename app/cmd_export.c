/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound export: segments (files or directories, any lcores, any boxes)
 * merged into time order, filtered, and written as text, CSV or JSON Lines.
 * The merge, formats, join and pseudonyms live in lib/export; this file finds
 * the segments, chains the ones of one writer stream, and reports damage.
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "th_cmd.h"
#include "th_export.h"
#include "th_srt.h"
#include "th_segment.h"

#define KEY_MAX 4096

/* One segment file and how reading it last ended. */
struct seg {
	char *path;                   /* as given or found */
	dev_t dev;                    /* the file, however it was reached (links, twice given) */
	ino_t ino;
	off_t size;                   /* bytes: of two copies of a segment, the larger is read */
	size_t found;                 /* how many were found before it (arguments in order) */
	struct th_segment_header hdr; /* read when the segments were grouped */
	bool is_header_ok;            /* the header could be read */
	bool is_foreign;              /* not a trace segment at all (its header says so) */
	bool has_range;               /* lo_ns and hi_ns are known (the segment was scanned) */
	uint64_t lo_ns;               /* earliest time of the records the merge takes from it */
	uint64_t hi_ns;               /* latest such time */
	uint64_t recovered;           /* records read in the last pass */
	uint64_t trailer_records;     /* records its trailer counts, when it was read; else 0 */
	int end_rc;                   /* last th_segment_reader_next result (<= 0), 1: not ended */
	char why[512];                /* what went wrong, with the records recovered if any */
};

/* One writer stream: its segments one after another, in the order they were written. */
struct chain {
	struct seg **segs;           /* in sequence order */
	unsigned int count;          /* segments */
	unsigned int cur;            /* segment being read */
	struct th_segment_reader *r; /* open reader of segs[cur], or NULL */
};

struct progress {
	bool is_on;                 /* stderr is a terminal (or --progress) */
	const struct chain *chains; /* their chains: segments before cur are done */
	unsigned int chains_count;  /* chains */
	struct timespec start;      /* of the export */
	struct timespec last;       /* last redraw */
	bool is_drawn;              /* a bar is on the screen */
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tracehound export [options] SEGMENT|DIRECTORY...\n"
		"\n"
		"Merge trace segments (any number of lcores and boxes; directories are searched "
		"for\n"
		"*.lz4 segments and crashed *.lz4.tmp ones) into open-time order, filter them and\n"
		"write one line per inferred open; with --rpcs, one line per RPC of the segments\n"
		"a capture writes with trace.rpcs = 1, in call-time order.\n"
		"\n"
		"output:\n"
		"  -f, --format F         text (default: the 7-field '|' record of the session\n"
		"                         log), csv (with a header), or json (JSON Lines)\n"
		"  -o, --output FILE      write to FILE (default: stdout)\n"
		"      --rpcs             RPC records instead of opens: text as the capture's RPC\n"
		"                         log (LAT_LAST '-', fields the record keeps), csv, json\n"
		"      --srt              with --rpcs implied: instead of the records, a table of\n"
		"                         server response time by procedure over those the\n"
		"                         filters keep (count, min, percentiles, max, mean; -f\n"
		"                         csv or json: one row per procedure)\n"
		"      --no-names         no handle-to-name join (csv/json path column empty)\n"
		"      --hosts FILE       host names from an /etc/hosts-style file\n"
		"      --resolve          host names from reverse DNS (cached; off by default)\n"
		"      --anonymise KEY    keyed pseudonyms (HMAC-SHA-256 with the bytes of file "
		"KEY,\n"
		"                         at least 16) for addresses, uids, gids, handles and "
		"every\n"
		"                         path component; same key, same pseudonyms\n"
		"      --prefix-preserving  with --anonymise: addresses that share a prefix keep\n"
		"                         sharing it (IPv4 and IPv6)\n"
		"      --window S         how far out of time order one stream may be: at least\n"
		"                         session.idle + 30 (default 60 s); later records are\n"
		"                         written late, counted, and the summary says the window\n"
		"                         that would have held them\n"
		"      --window-mb MB     memory for the records the window holds back, all "
		"streams\n"
		"                         together (default 1024); a stream at its share lets its\n"
		"                         earliest go early, and the summary counts them\n"
		"      --names-mb MB      memory for the handle-to-name join (default 2048, about\n"
		"                         260 bytes a name); names past it are not kept, and the\n"
		"                         summary counts them (their files' paths stay empty)\n"
		"      --progress         force the progress bar (default: only on a terminal)\n"
		"  -q, --quiet            no progress bar, no summary line\n"
		"\n"
		"filters (a repeated option matches any of its values; different ones all apply):\n"
		"      --from T, --to T   records at or after T and before T: seconds since the "
		"epoch\n"
		"                         (with a fraction) or UTC YYYY-MM-DD[THH:MM[:SS[.frac]]]\n"
		"      --server A[/LEN]   server address or prefix\n"
		"      --client A[/LEN]   client address or prefix\n"
		"      --uid N            user id\n"
		"      --direction D      read or write (opens)\n"
		"      --file F           handle (hex) equal to F, or path containing F\n"
		"\n"
		"Exit status: 0; 1 runtime failure (no segment readable, output not writable);\n"
		"2 usage error; 3 some segments were truncated or corrupt (their records up to "
		"the\n"
		"damage were exported), or some files were not trace segments (skipped); each is\n"
		"named on stderr.\n");
}

/* A size in megabytes, 1 to 2^30. @return 0, or -1 having said why. */
static int
parse_mb(const char *opt, const char *s, uint64_t *mb)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0 || v < 1 || v > (1ull << 30) || s[0] == '-') {
		fprintf(stderr, "tracehound export: %s '%s': expected megabytes, 1 to 1073741824\n",
			opt, s);
		return -1;
	}
	*mb = v;
	return 0;
}

enum {
	OPT_FROM = 256,
	OPT_TO,
	OPT_SERVER,
	OPT_CLIENT,
	OPT_UID,
	OPT_DIRECTION,
	OPT_FILE,
	OPT_HOSTS,
	OPT_RESOLVE,
	OPT_ANON,
	OPT_PREFIX,
	OPT_WINDOW,
	OPT_WINDOW_MB,
	OPT_NAMES_MB,
	OPT_NO_NAMES,
	OPT_RPCS,
	OPT_SRT,
	OPT_PROGRESS,
};

static const struct option options[] = {
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_TO},
	{"server", required_argument, NULL, OPT_SERVER},
	{"client", required_argument, NULL, OPT_CLIENT},
	{"uid", required_argument, NULL, OPT_UID},
	{"direction", required_argument, NULL, OPT_DIRECTION},
	{"file", required_argument, NULL, OPT_FILE},
	{"hosts", required_argument, NULL, OPT_HOSTS},
	{"resolve", no_argument, NULL, OPT_RESOLVE},
	{"anonymise", required_argument, NULL, OPT_ANON},
	{"anonymize", required_argument, NULL, OPT_ANON},
	{"prefix-preserving", no_argument, NULL, OPT_PREFIX},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"window-mb", required_argument, NULL, OPT_WINDOW_MB},
	{"names-mb", required_argument, NULL, OPT_NAMES_MB},
	{"no-names", no_argument, NULL, OPT_NO_NAMES},
	{"rpcs", no_argument, NULL, OPT_RPCS},
	{"srt", no_argument, NULL, OPT_SRT},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{NULL, 0, NULL, 0},
};

/* ---- finding segments ---- */

struct seg_list {
	struct seg *v; /* segments */
	size_t count;  /* used */
	size_t cap;    /* allocated */
};

static int
seg_add(struct seg_list *l, const char *path, const struct stat *st)
{
	struct seg *s;

	if (l->count == l->cap) {
		size_t cap = l->cap != 0 ? l->cap * 2 : 64;
		struct seg *v = realloc(l->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	s = &l->v[l->count];
	memset(s, 0, sizeof(*s));
	s->path = strdup(path);
	if (s->path == NULL)
		return -ENOMEM;
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->size = st->st_size;
	s->found = l->count;
	s->end_rc = 1;
	l->count++;
	return 0;
}

static bool
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Segments under a directory, depth first, names sorted so runs are reproducible. */
static int
walk(struct seg_list *l, const char *dir, unsigned int depth, char *failed, size_t failed_size)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t count = 0, cap = 0, i;
	int rc = 0;

	if (depth > 16)
		return 0;
	d = opendir(dir);
	if (d == NULL) {
		int e = errno;

		snprintf(failed, failed_size, "%s", dir); /* the directory itself, not its top */
		return -e;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (count == cap) {
			char **n2 = realloc(names, (cap = cap != 0 ? cap * 2 : 64) * sizeof(*n2));

			if (n2 == NULL) {
				rc = -ENOMEM;
				break;
			}
			names = n2;
		}
		if ((names[count] = strdup(de->d_name)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		count++;
	}
	closedir(d);
	if (count > 0)
		qsort(names, count, sizeof(*names), cmp_str);
	for (i = 0; i < count && rc == 0; i++) {
		char path[4096];
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path) ||
			stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = walk(l, path, depth + 1, failed, failed_size);
		else if (S_ISREG(st.st_mode) &&
			 (has_suffix(names[i], TH_SEGMENT_SUFFIX) ||
				 has_suffix(names[i], TH_SEGMENT_SUFFIX TH_SEGMENT_TMP_SUFFIX)))
			rc = seg_add(l, path, &st);
	}
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int
cmp_file(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

/*
 * Read each file once: a segment given twice, or reached again through a link
 * (a link to its own directory reaches everything sixteen times), would merge
 * its records twice. @return segments dropped.
 */
static size_t
seg_dedup(struct seg_list *l)
{
	size_t i, kept = 0;

	if (l->count > 1)
		qsort(l->v, l->count, sizeof(*l->v), cmp_file);
	for (i = 0; i < l->count; i++) {
		if (kept > 0 && l->v[kept - 1].dev == l->v[i].dev &&
			l->v[kept - 1].ino == l->v[i].ino) {
			free(l->v[i].path);
			continue;
		}
		l->v[kept++] = l->v[i];
	}
	i = l->count - kept;
	l->count = kept;
	return i;
}

/* ---- a chain of segments as one export source ---- */

static void
seg_end(struct seg *s, struct th_segment_reader *r, int rc)
{
	const struct th_segment_trailer *t = th_segment_reader_trailer(r);
	const char *d;
	size_t n = strlen(s->path);

	s->end_rc = rc;
	s->recovered = th_segment_reader_count(r);
	/* A trailer read whole says what the segment held (its counts may be what failed). */
	s->trailer_records = t != NULL ? t->records : 0;
	if (rc == 0)
		return;
	/* The reader's line starts with the path and counts the records recovered; the
	 * report names the segment itself. */
	d = th_segment_reader_describe(r);
	if (strncmp(d, s->path, n) == 0 && d[n] == ':')
		d += n + 1 + (d[n + 1] == ' ');
	snprintf(s->why, sizeof(s->why), "%s", d);
}

/*
 * A file the segment reader would not open: what it is, in s->why, and
 * whether it is no trace segment at all (a pcap, or another program's .lz4
 * in a trace directory), named for what it is rather than as damage.
 */
static void
seg_refused(struct seg *s, int err)
{
	struct stat st;
	bool is_empty = stat(s->path, &st) == 0 && st.st_size == 0;

	s->end_rc = -err;
	s->recovered = 0;
	s->is_foreign = err == ENOEXEC ||
			(err == ENODATA && is_empty && !has_suffix(s->path, TH_SEGMENT_TMP_SUFFIX));
	if (s->is_foreign)
		snprintf(s->why, sizeof(s->why), "not a tracehound trace segment (%s)",
			is_empty ? "empty" : "no segment header");
	else if (err == ENODATA &&
		 is_empty) /* what a writer that died before its first flush leaves */
		snprintf(s->why, sizeof(s->why),
			"empty (its writer stopped before the first flush): nothing recovered");
	else if (err == ENODATA)
		snprintf(s->why, sizeof(s->why),
			"truncated inside its header (the file was cut, or its writer stopped "
			"during the first flush): nothing recovered");
	else if (err == EBADMSG)
		snprintf(s->why, sizeof(s->why), "header unreadable (corrupt): nothing recovered");
	else if (err == EPROTONOSUPPORT)
		snprintf(s->why, sizeof(s->why),
			"another segment or record format version than this tracehound's (%u, "
			"%u): nothing read",
			TH_SEGMENT_VERSION, TH_TRACE_VERSION);
	else
		snprintf(s->why, sizeof(s->why), "cannot be read: %s: nothing recovered",
			strerror(err));
}

/* What went wrong in reading, all segments together. */
struct damage {
	unsigned int damaged; /* segments truncated, corrupt, or unreadable from their header */
	unsigned int unread;  /* of those, the ones whose header could not be read */
	unsigned int foreign; /* files that are not trace segments at all */
};

/*
 * Name a file whose reading did not complete, and count it; @p is_more: other
 * segments are read. A limit of this run (open files, memory) is not the
 * segment's fault: exit 1, not 3.
 */
static void
report(const struct seg *s, bool is_more, struct damage *d, int *status)
{
	const char *why = s->why[0] != '\0' ? s->why : strerror(-s->end_rc);
	char lost[96] = "";

	if (s->end_rc == 0 || s->end_rc == 1)
		return;
	if (s->end_rc == -EMFILE || s->end_rc == -ENFILE || s->end_rc == -ENOMEM) {
		fprintf(stderr, "tracehound export: %s: %s%s; its records were not all read\n",
			s->path, strerror(-s->end_rc),
			s->end_rc == -ENOMEM ? "" : " (raise ulimit -n: one per stream)");
		*status = 1;
		return;
	}
	if (s->is_foreign) {
		d->foreign++;
		fprintf(stderr, "tracehound export: %s: %s; skipped\n", s->path, why);
		return;
	}
	d->damaged++;
	d->unread += !s->is_header_ok;
	if (s->trailer_records > s->recovered)
		snprintf(lost, sizeof(lost),
			"; its trailer counts %" PRIu64 " records: %" PRIu64 " lost",
			s->trailer_records, s->trailer_records - s->recovered);
	fprintf(stderr, "tracehound export: %s: %s%s%s\n", s->path, why, lost,
		is_more ? "; continuing with the rest" : "");
}

/* ", N files not trace segments, M copies skipped" for the summary, or "". */
static const char *
foreign_note(const struct damage *d, size_t copies, char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (d->foreign > 0)
		n = snprintf(buf, size, ", %u %s", d->foreign,
			d->foreign == 1 ? "file not a trace segment" : "files not trace segments");
	if (copies > 0 && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", %zu %s skipped", copies,
			copies == 1 ? "copy" : "copies");
	return buf;
}

static int
chain_next(void *ctx, int *type, struct th_trace_open *open, struct th_trace_name *name,
	struct th_trace_rpc *rpc)
{
	struct chain *c = ctx;

	while (c->cur < c->count) {
		struct seg *s = c->segs[c->cur];
		int rc;

		if (c->r == NULL && s->end_rc == 1) {
			c->r = th_segment_reader_open(s->path);
			if (c->r == NULL)
				seg_refused(s, errno);
		}
		if (c->r != NULL) {
			rc = th_segment_reader_next(c->r, open, name, rpc);
			if (rc > 0) {
				*type = rc;
				return 1;
			}
			seg_end(s, c->r, rc);
			th_segment_reader_close(c->r);
			c->r = NULL;
		}
		/* A damaged segment ends only itself: the stream goes on with the next one. */
		c->cur++;
	}
	return 0;
}

static int
chain_rewind(void *ctx)
{
	struct chain *c = ctx;

	th_segment_reader_close(c->r);
	c->r = NULL;
	c->cur = 0;
	for (unsigned int i = 0; i < c->count; i++) {
		c->segs[i]->end_rc = 1;
		c->segs[i]->why[0] = '\0';
	}
	return 0;
}

/* Writer stream identity, then position in the stream. */
static int
cmp_seg(const void *a, const void *b)
{
	const struct seg *x = *(struct seg *const *)a, *y = *(struct seg *const *)b;

#define CMP(f)                                                                                     \
	if (x->f != y->f)                                                                          \
		return x->f < y->f ? -1 : 1;
	CMP(hdr.box_id)
	CMP(hdr.kind)
	CMP(hdr.stream_id)
	CMP(hdr.created_ns)
	CMP(hdr.seq)
#undef CMP
	return strcmp(x->path, y->path);
}

/*
 * @p y follows @p x in one chain: the same stream (box, kind, stream). A stream's
 * segments chain in order of creation, so two captures into one directory, each
 * numbering its segments from 0, read one run after the other (ordered by number,
 * their segments interleaved and came out late). A chain per run would cost an
 * open file and a share of --window-mb per run for nothing.
 */
static bool
continues(const struct seg *x, const struct seg *y)
{
	return x->hdr.box_id == y->hdr.box_id && x->hdr.kind == y->hdr.kind &&
	       x->hdr.stream_id == y->hdr.stream_id;
}

/* ---- copies, and streams written by more than one capture ---- */

/* The same segment: one writer's one file (a copy of a trace directory read with it). */
static bool
same_segment(const struct seg *x, const struct seg *y)
{
	return continues(x, y) && x->hdr.created_ns == y->hdr.created_ns &&
	       x->hdr.seq == y->hdr.seq;
}

/*
 * Of two copies of a segment, the one to read: a closed one over a .tmp, then
 * the larger, then the one given (or found) first.
 */
static bool
is_better_copy(const struct seg *x, const struct seg *y)
{
	bool x_tmp = has_suffix(x->path, TH_SEGMENT_TMP_SUFFIX);
	bool y_tmp = has_suffix(y->path, TH_SEGMENT_TMP_SUFFIX);

	if (x_tmp != y_tmp)
		return !x_tmp;
	if (x->size != y->size)
		return x->size > y->size;
	return x->found < y->found;
}

/*
 * Drop the copies among @p order (sorted by cmp_seg(), so copies are
 * neighbours), each named once: read as well, a copy of a trace directory
 * exported with it would write every record twice. @return copies dropped.
 */
static size_t
skip_copies(struct seg **order, size_t *count)
{
	size_t i, j, kept = 0, dropped = 0;

	for (i = 0; i < *count; i = j) {
		size_t best = i;

		for (j = i + 1; j < *count && same_segment(order[i], order[j]); j++)
			if (is_better_copy(order[j], order[best]))
				best = j;
		for (size_t k = i; k < j; k++) {
			if (k == best)
				continue;
			fprintf(stderr,
				"tracehound export: %s is a copy of %s (box %" PRIu64
				", %s stream %u, segment %" PRIu64 ", created at the same ns); "
				"skipped\n",
				order[k]->path, order[best]->path, order[best]->hdr.box_id,
				th_segment_kind_name(order[best]->hdr.kind),
				order[best]->hdr.stream_id, order[best]->hdr.seq);
			dropped++;
		}
		order[kept++] = order[best];
	}
	*count = kept;
	return dropped;
}

/* The segments of a stream number on from one to the next, in order of creation: one writer. */
static bool
is_one_writer(struct seg *const *g, size_t count)
{
	for (size_t k = 1; k < count; k++)
		if (g[k]->hdr.seq != g[k - 1]->hdr.seq + 1)
			return false;
	return true;
}

/*
 * Read a segment through for the times of the records the merge takes from it
 * (opens, or with @p is_rpcs RPCs; its trailer's times count names too). Damage
 * is reported when the merge reads it; here what was read is what counts.
 */
static void
scan_range(struct seg *s, bool is_rpcs)
{
	struct th_segment_reader *r = th_segment_reader_open(s->path);
	struct th_trace_open open;
	struct th_trace_rpc rpc;
	int type;

	if (r == NULL)
		return;
	while ((type = th_segment_reader_next(
			r, is_rpcs ? NULL : &open, NULL, is_rpcs ? &rpc : NULL)) > 0) {
		uint64_t t;

		if (type != (is_rpcs ? TH_TRACE_RPC : TH_TRACE_OPEN))
			continue;
		t = is_rpcs ? th_trace_rpc_time(&rpc) : open.open_ns;
		if (!s->has_range || t < s->lo_ns)
			s->lo_ns = t;
		if (!s->has_range || t > s->hi_ns)
			s->hi_ns = t;
		s->has_range = true;
	}
	th_segment_reader_close(r);
}

/* Segments of one stream that the merge reads one after another (one export source). */
struct run {
	uint64_t last_seq; /* of its last segment so far */
	uint64_t hi_ns;    /* latest record time of its segments */
	bool has_range;    /* hi_ns is known */
};

/*
 * Which run segment @p s of a stream written by several captures joins, of
 * @p count: one it can follow without a record coming later than the window
 * allows (its earliest record no more than @p window_ns before the run's
 * latest), the writer's own (numbered on from it) first; else the only writer
 * numbered on from, whose own disorder it is; else a new run (@p count).
 */
static size_t
pick_run(const struct run *runs, size_t count, const struct seg *s, uint64_t window_ns)
{
	size_t fit = count, own = count, owns = 0;

	for (size_t r = 0; r < count; r++) {
		bool is_own = s->hdr.seq > 0 && runs[r].last_seq + 1 == s->hdr.seq;
		bool is_fit = !s->has_range || !runs[r].has_range ||
			      runs[r].hi_ns <= s->lo_ns + window_ns;

		if (is_own) {
			owns++;
			own = r;
		}
		if (is_fit && is_own)
			return r;
		if (is_fit && (fit == count || runs[r].hi_ns > runs[fit].hi_ns))
			fit = r;
	}
	if (owns == 1)
		return own;
	return fit;
}

/*
 * Split the @p count segments of one stream (@p g, in order of creation) into
 * runs whose records follow one another in time, each read as its own stream,
 * so that segments of two captures whose records overlap (two boxes with one
 * trace.box, or a later capture of an older trace into the same directory)
 * are merged rather than read one after the other and written late. @p g is
 * reordered run by run; @p run_len gets each run's segments.
 * @return runs (1: one after another in time, as one writer's), or -ENOMEM.
 */
static long
split_runs(struct seg **g, size_t count, bool is_rpcs, uint64_t window_ns, size_t *run_len)
{
	struct run *runs = calloc(count, sizeof(*runs));
	size_t *run_of = calloc(count, sizeof(*run_of));
	struct seg **tmp = calloc(count, sizeof(*tmp));
	size_t nruns = 0, k = 0;
	long rc = -ENOMEM;

	if (runs == NULL || run_of == NULL || tmp == NULL)
		goto free_all;
	for (size_t i = 0; i < count; i++) {
		struct seg *s = g[i];
		size_t r;

		scan_range(s, is_rpcs);
		r = pick_run(runs, nruns, s, window_ns);
		if (r == nruns) {
			nruns++;
			runs[r].has_range = false;
		}
		run_of[i] = r;
		runs[r].last_seq = s->hdr.seq;
		if (s->has_range && (!runs[r].has_range || s->hi_ns > runs[r].hi_ns))
			runs[r].hi_ns = s->hi_ns;
		runs[r].has_range |= s->has_range;
	}
	for (size_t r = 0; r < nruns; r++) {
		run_len[r] = 0;
		for (size_t i = 0; i < count; i++) {
			if (run_of[i] == r) {
				tmp[k++] = g[i];
				run_len[r]++;
			}
		}
	}
	memcpy(g, tmp, count * sizeof(*g));
	rc = (long)nruns;
free_all:
	free(tmp);
	free(run_of);
	free(runs);
	return rc;
}

/* Streams of one box that had to be split (said once per box, after the grouping). */
struct overlap_note {
	bool is_set;       /* a stream of this box was split */
	uint64_t box;      /* the box id */
	unsigned int more; /* streams split besides the first */
	bool is_backwards; /* the later capture's records come first (else they overlap) */
	uint8_t kind;      /* the first split stream */
	uint16_t stream;   /* its id */
	const char *a, *b; /* a segment of its first run and one of its second */
};

/* The records of a run of @p n segments from @p g: earliest and latest. @return any. */
static bool
run_range(struct seg *const *g, size_t n, uint64_t *lo, uint64_t *hi)
{
	bool has = false;

	for (size_t k = 0; k < n; k++) {
		if (!g[k]->has_range)
			continue;
		if (!has || g[k]->lo_ns < *lo)
			*lo = g[k]->lo_ns;
		if (!has || g[k]->hi_ns > *hi)
			*hi = g[k]->hi_ns;
		has = true;
	}
	return has;
}

/*
 * A stream split into runs (@p g, @p run_len): do its second run's records all
 * come before its first's (one capture after another, the later of an older
 * trace), rather than overlap them (two writing at once)?
 */
static bool
is_backwards(struct seg *const *g, const size_t *run_len)
{
	uint64_t lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;

	return run_range(g, run_len[0], &lo0, &hi0) &&
	       run_range(g + run_len[0], run_len[1], &lo1, &hi1) && hi1 <= lo0;
}

static void
overlap_say(struct overlap_note *n)
{
	char more[64] = "";

	if (!n->is_set)
		return;
	if (n->more > 0)
		snprintf(more, sizeof(more), " (and %u more stream%s)", n->more,
			n->more == 1 ? "" : "s");
	if (!n->is_backwards)
		fprintf(stderr,
			"tracehound export: box %" PRIu64 ", %s stream %u%s: segments of two "
			"captures whose records overlap in time (%s and %s): two boxes with one "
			"trace.box = %" PRIu64 ", or two captures of one time into one directory; "
			"merged as separate streams, in time order. Give each box its own "
			"trace.box and each capture its own directory\n",
			n->box, th_segment_kind_name(n->kind), n->stream, more, n->a, n->b, n->box);
	else
		fprintf(stderr,
			"tracehound export: box %" PRIu64 ", %s stream %u%s: a later capture's "
			"segments hold records earlier than an earlier capture's (%s, then %s): "
			"two capture runs into one directory, the later of an older trace (or the "
			"clock set back); merged as separate streams, in time order. Give "
			"each capture its own directory\n",
			n->box, th_segment_kind_name(n->kind), n->stream, more, n->a, n->b);
	n->is_set = false;
}

/*
 * What the summary says of records written late: the window that would have
 * held them (a stream's records came up to max_disorder_ns after a later one
 * of its own) when a larger one would have, else the memory that let them go.
 */
static const char *
late_note(const struct th_export_config *c, const struct th_export_counters *ctr, char *buf,
	size_t size)
{
	double d = (double)ctr->max_disorder_ns / 1e9;

	buf[0] = '\0';
	if (ctr->out_of_order == 0)
		return buf;
	if (ctr->max_disorder_ns > c->window_ns)
		snprintf(buf, size,
			" (a stream's records came up to %.1f s out of order: --window %.0f would "
			"have held them)",
			d, ceil(d));
	else
		snprintf(buf, size, " (let go early for memory: raise --window-mb)");
	return buf;
}

/* ---- progress bar ---- */

static double
since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void
on_progress(void *ctx, uint64_t records)
{
	struct progress *p = ctx;
	struct timespec now;
	unsigned int done = 0, segments = 0;
	double elapsed, frac;
	char bar[31];
	int fill;

	if (!p->is_on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->is_drawn && since(&p->last, &now) < 0.2)
		return;
	p->last = now;
	/* Segments finished: those before each chain's cur (the merge pass's rewind starts a
	 * chain from its first again). */
	for (unsigned int i = 0; i < p->chains_count; i++) {
		done += p->chains[i].cur;
		segments += p->chains[i].count;
	}
	elapsed = since(&p->start, &now);
	frac = segments > 0 ? (double)done / segments : 1.0;
	fill = (int)(frac * 30);
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '-', (size_t)(30 - fill));
	bar[30] = '\0';
	fprintf(stderr, "\rexport [%s] %u/%u segments, %" PRIu64 " records, %.1f M/s   ", bar, done,
		segments, records, elapsed > 0 ? (double)records / elapsed / 1e6 : 0.0);
	p->is_drawn = true;
}

/* ---- the command ---- */

static int
add_net(struct th_export_net *v, unsigned int *count, const char *arg, const char *opt)
{
	if (*count >= TH_EXPORT_FILTER_MAX) {
		fprintf(stderr, "tracehound export: at most %d %s values\n", TH_EXPORT_FILTER_MAX,
			opt);
		return -1;
	}
	if (th_export_net_parse(arg, &v[*count]) < 0) {
		fprintf(stderr,
			"tracehound export: %s '%s': expected an IPv4 or IPv6 address, "
			"optionally /prefix-length\n",
			opt, arg);
		return -1;
	}
	(*count)++;
	return 0;
}

int
th_cmd_export(int argc, char **argv)
{
	struct th_export_config c;
	struct th_export_counters ctr;
	struct seg_list segs = {0};
	struct seg **order = NULL;
	struct chain *chains = NULL;
	struct th_export_source *sources = NULL;
	struct progress prog = {0};
	struct damage dmg = {0};
	struct overlap_note split = {0};
	unsigned int nchains = 0;
	size_t readable = 0, nsegs = 0, copies = 0, *run_len = NULL;
	char note[128], late[160];
	const char *output = NULL, *hosts_path = NULL, *key_path = NULL;
	bool is_resolve = false, is_prefix = false, is_quiet = false, is_force_progress = false;
	bool is_srt = false;
	FILE *out = stdout;
	uint8_t key[KEY_MAX];
	size_t key_size = 0;
	int opt, rc, status = 0;

	th_export_config_defaults(&c);
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "f:o:qh", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			rc = th_export_format_parse(optarg);
			if (rc < 0) {
				fprintf(stderr,
					"tracehound export: --format '%s': expected text, csv "
					"or json\n",
					optarg);
				return 2;
			}
			c.format = (enum th_export_format)rc;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			is_quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_FROM:
		case OPT_TO:
			if (th_export_time_parse(optarg, opt == OPT_FROM ? &c.from_ns : &c.to_ns) <
				0) {
				fprintf(stderr,
					"tracehound export: %s '%s': expected seconds since the "
					"epoch or UTC YYYY-MM-DD[THH:MM[:SS]], up to "
					"2554-07-21\n",
					opt == OPT_FROM ? "--from" : "--to", optarg);
				return 2;
			}
			/* 0 is "no bound" inside: --to the epoch itself asks for nothing. */
			if (opt == OPT_TO && c.to_ns == 0)
				c.to_ns = 1;
			break;
		case OPT_SERVER:
			if (add_net(c.servers, &c.servers_count, optarg, "--server") < 0)
				return 2;
			break;
		case OPT_CLIENT:
			if (add_net(c.clients, &c.clients_count, optarg, "--client") < 0)
				return 2;
			break;
		case OPT_UID: {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' || errno != 0 ||
				v > UINT32_MAX || c.uids_count >= TH_EXPORT_FILTER_MAX) {
				fprintf(stderr,
					"tracehound export: --uid '%s': expected a number "
					"0-4294967295 (at most %d values)\n",
					optarg, TH_EXPORT_FILTER_MAX);
				return 2;
			}
			c.uids[c.uids_count++] = (uint32_t)v;
			break;
		}
		case OPT_DIRECTION:
			if (strcmp(optarg, "read") == 0) {
				c.direction = 0;
			} else if (strcmp(optarg, "write") == 0) {
				c.direction = 1;
			} else {
				fprintf(stderr,
					"tracehound export: --direction '%s': expected read or "
					"write\n",
					optarg);
				return 2;
			}
			break;
		case OPT_FILE:
			if (c.files_count >= TH_EXPORT_FILTER_MAX || optarg[0] == '\0') {
				fprintf(stderr,
					"tracehound export: --file: at most %d non-empty "
					"values\n",
					TH_EXPORT_FILTER_MAX);
				return 2;
			}
			c.files[c.files_count++] = optarg;
			break;
		case OPT_HOSTS:
			hosts_path = optarg;
			break;
		case OPT_RESOLVE:
			is_resolve = true;
			break;
		case OPT_ANON:
			key_path = optarg;
			break;
		case OPT_PREFIX:
			is_prefix = true;
			break;
		case OPT_WINDOW: {
			char *end;
			double s;

			errno = 0;
			s = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || errno != 0 || !(s >= 0 && s <= 1e7)) {
				fprintf(stderr,
					"tracehound export: --window '%s': expected seconds, "
					"0 to 10000000\n",
					optarg);
				return 2;
			}
			c.window_ns = (uint64_t)(s * 1e9);
			break;
		}
		case OPT_WINDOW_MB:
		case OPT_NAMES_MB: {
			uint64_t mb;

			if (parse_mb(opt == OPT_WINDOW_MB ? "--window-mb" : "--names-mb", optarg,
				    &mb) < 0)
				return 2;
			if (opt == OPT_WINDOW_MB)
				c.window_bytes = mb << 20;
			else
				c.names_bytes = mb << 20;
			break;
		}
		case OPT_NO_NAMES:
			c.is_names_on = false;
			break;
		case OPT_RPCS:
			c.is_rpcs = true;
			break;
		case OPT_SRT:
			is_srt = true;
			c.is_rpcs = true;
			break;
		case OPT_PROGRESS:
			is_force_progress = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "tracehound export: no segments given (files or directories)\n");
		usage(stderr);
		return 2;
	}
	if (is_prefix && key_path == NULL) {
		fprintf(stderr,
			"tracehound export: --prefix-preserving needs --anonymise KEYFILE\n");
		return 2;
	}
	if (key_path != NULL && (hosts_path != NULL || is_resolve)) {
		fprintf(stderr, "tracehound export: --anonymise cannot be combined with --hosts or "
				"--resolve (host names would give the addresses away)\n");
		return 2;
	}
	if (c.to_ns != 0 && c.to_ns <= c.from_ns) {
		fprintf(stderr, "tracehound export: --to must be later than --from\n");
		return 2;
	}
	if (is_srt && (key_path != NULL || hosts_path != NULL || is_resolve)) {
		fprintf(stderr, "tracehound export: --srt prints one table of procedures: no "
				"--anonymise, --hosts or --resolve\n");
		return 2;
	}
	if (c.is_rpcs && c.direction >= 0) {
		fprintf(stderr, "tracehound export: --direction goes with opens, not --rpcs\n");
		return 2;
	}
	if (key_path != NULL) {
		rc = th_export_anon_load_key(key_path, key, sizeof(key), &key_size);
		if (rc < 0) {
			fprintf(stderr, "tracehound export: --anonymise %s: %s\n", key_path,
				rc == -EINVAL  ? "a key needs at least 16 bytes (e.g. head -c 32 "
						 "/dev/urandom > KEYFILE)"
				: rc == -EFBIG ? "longer than 4096 bytes: not a key file?"
					       : strerror(-rc));
			return 2;
		}
		c.anon = th_export_anon_create(key, key_size, is_prefix);
		memset(key, 0, sizeof(key));
		if (c.anon == NULL) {
			fprintf(stderr, "tracehound export: %s\n", strerror(errno));
			return 1;
		}
	}
	if (hosts_path != NULL || is_resolve) {
		unsigned int line = 0;

		c.hosts = th_export_hosts_create(is_resolve);
		if (c.hosts == NULL) {
			status = 1;
			goto free_all;
		}
		if (hosts_path != NULL &&
			(rc = th_export_hosts_load(c.hosts, hosts_path, &line)) < 0) {
			if (rc == -EINVAL)
				fprintf(stderr,
					"tracehound export: %s:%u: expected an address and a "
					"name\n",
					hosts_path, line);
			else
				fprintf(stderr, "tracehound export: --hosts %s: %s\n", hosts_path,
					strerror(-rc));
			status = 2;
			goto free_all;
		}
	}

	for (int i = optind; i < argc; i++) {
		char failed[4096];
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "tracehound export: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			goto free_all;
		}
		snprintf(failed, sizeof(failed), "%s", argv[i]);
		rc = S_ISDIR(st.st_mode) ? walk(&segs, argv[i], 0, failed, sizeof(failed))
					 : seg_add(&segs, argv[i], &st);
		if (rc < 0) {
			fprintf(stderr, "tracehound export: %s: %s\n", failed, strerror(-rc));
			status = 1;
			goto free_all;
		}
	}
	seg_dedup(&segs);
	if (output != NULL && strcmp(output, "-") != 0) {
		const char *ins[] = {key_path, hosts_path}, *opts[] = {"--anonymise", "--hosts"};
		struct stat st;
		bool is_there = stat(output, &st) == 0;

		/* Opening the output truncates it: never a file the export reads. */
		for (size_t i = 0; is_there && i < segs.count; i++) {
			if (segs.v[i].dev == st.st_dev && segs.v[i].ino == st.st_ino) {
				fprintf(stderr,
					"tracehound export: -o %s is one of the segments to read\n",
					output);
				status = 2;
				goto free_all;
			}
		}
		for (size_t i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
			if (ins[i] != NULL && th_cmd_same_file(output, ins[i])) {
				fprintf(stderr, "tracehound export: -o %s is the file %s reads\n",
					output, opts[i]);
				status = 2;
				goto free_all;
			}
		}
	}
	if (is_srt) {
		c.srt = malloc(sizeof(*c.srt));
		if (c.srt == NULL) {
			fprintf(stderr, "tracehound export: no memory for the --srt table\n");
			status = 1;
			goto free_all;
		}
		th_srt_init(c.srt);
		c.window_ns = 0; /* a table does not care about order: hold nothing back */
	}
	if (segs.count == 0) {
		fprintf(stderr, "tracehound export: no segments (*%s) found\n", TH_SEGMENT_SUFFIX);
		status = 1;
		goto free_all;
	}

	/* Group the segments of each writer stream (box, kind, lcore) into one chain, read in
	 * sequence: a stream's records continue from one segment into the next, and only one
	 * file per stream is open at a time. */
	order = calloc(segs.count, sizeof(*order));
	chains = calloc(segs.count, sizeof(*chains));
	sources = calloc(segs.count, sizeof(*sources));
	if (order == NULL || chains == NULL || sources == NULL) {
		status = 1;
		goto free_all;
	}
	/* Each file's header says whether it is a segment and which stream it continues. A file
	 * whose header cannot be read is named now, and not read again. */
	for (size_t i = 0; i < segs.count; i++) {
		struct seg *s = &segs.v[i];
		struct th_segment_reader *r = th_segment_reader_open(s->path);

		if (r == NULL) {
			seg_refused(s, errno);
			continue;
		}
		s->hdr = *th_segment_reader_header(r);
		s->is_header_ok = true;
		th_segment_reader_close(r);
		order[readable++] = s;
	}
	for (size_t i = 0; i < segs.count; i++)
		if (!segs.v[i].is_header_ok)
			report(&segs.v[i], readable > 0, &dmg, &status);
	if (readable == 0) {
		fprintf(stderr, "tracehound export: no trace segment could be read\n");
		status = 1;
		goto free_all;
	}
	qsort(order, readable, sizeof(*order), cmp_seg);
	copies = skip_copies(order, &readable);
	run_len = calloc(readable, sizeof(*run_len));
	if (run_len == NULL) {
		status = 1;
		goto free_all;
	}
	for (size_t i = 0; i < readable;) {
		size_t j = i + 1, k = i;
		int kind = order[i]->hdr.kind;
		long nruns = 1;
		bool is_merged;

		while (j < readable && continues(order[j - 1], order[j]))
			j++;
		/* RPC records (a decode lcore's) are written with --rpcs only: otherwise their
		 * segments are not read at all (nor counted), and the progress bar does not
		 * wait for them. With --rpcs, the other segments only lend their names to the
		 * join, when it needs them. */
		if (c.is_rpcs ? kind == TH_SEGMENT_KIND_OPENS ||
					(kind != TH_SEGMENT_KIND_RPCS && !th_export_needs_names(&c))
			      : kind == TH_SEGMENT_KIND_RPCS) {
			i = j;
			continue;
		}
		is_merged =
			c.is_rpcs ? kind == TH_SEGMENT_KIND_RPCS
				  : kind == TH_SEGMENT_KIND_OPENS || kind == TH_SEGMENT_KIND_MIXED;
		run_len[0] = j - i;
		/* A stream whose segments do not number on one from the next was written by
		 * more than one capture: read through (only then) for their times, they are
		 * split where one capture's records would come late after another's. Order does
		 * not matter to a --srt table. */
		if (is_merged && c.srt == NULL && !is_one_writer(&order[i], j - i)) {
			nruns = split_runs(&order[i], j - i, c.is_rpcs, c.window_ns, run_len);
			if (nruns < 0) {
				fprintf(stderr, "tracehound export: %s\n", strerror(-(int)nruns));
				status = 1;
				goto free_all;
			}
		}
		if (nruns > 1 && split.is_set && split.box == order[i]->hdr.box_id) {
			split.more++;
		} else if (nruns > 1) {
			overlap_say(&split);
			split = (struct overlap_note){true, order[i]->hdr.box_id, 0,
				is_backwards(&order[i], run_len), order[i]->hdr.kind,
				order[i]->hdr.stream_id, order[i]->path,
				order[i + run_len[0]]->path};
		}
		for (long r = 0; r < nruns; k += run_len[r], r++) {
			chains[nchains].segs = &order[k];
			chains[nchains].count = (unsigned int)run_len[r];
			sources[nchains].label = order[k]->path;
			sources[nchains].next = chain_next;
			sources[nchains].ctx = &chains[nchains];
			sources[nchains].rewind = chain_rewind;
			sources[nchains].is_nameless =
				kind == TH_SEGMENT_KIND_OPENS || kind == TH_SEGMENT_KIND_RPCS;
			sources[nchains].is_names_only =
				kind == TH_SEGMENT_KIND_NAMES ||
				(c.is_rpcs && kind == TH_SEGMENT_KIND_MIXED);
			nchains++;
		}
		nsegs += j - i;
		i = j;
	}
	overlap_say(&split);
	if (c.is_rpcs) {
		bool has_rpcs = false;

		for (size_t i = 0; i < readable; i++)
			has_rpcs |= order[i]->hdr.kind == TH_SEGMENT_KIND_RPCS;
		if (!has_rpcs) {
			fprintf(stderr,
				"tracehound export: none of the %zu segments holds RPC records (a "
				"capture writes them with [trace] rpcs = 1)\n",
				readable);
			status = 1;
			goto free_all;
		}
	}

	if (output != NULL && strcmp(output, "-") != 0) {
		out = fopen(output, "w");
		if (out == NULL) {
			fprintf(stderr, "tracehound export: -o %s: %s\n", output, strerror(errno));
			status = 1;
			goto free_all;
		}
	}
	prog.is_on = !is_quiet && (is_force_progress || isatty(STDERR_FILENO));
	prog.chains = chains;
	prog.chains_count = nchains;
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	c.progress = on_progress;
	c.progress_ctx = &prog;
	rc = th_export_run(&c, sources, nchains, out, stderr, &ctr);
	if (prog.is_drawn)
		fputc('\n', stderr);
	if (rc >= 0 && c.srt != NULL) {
		uint64_t timed = 0, lone;

		for (uint32_t r = 0; r < atomic_load(&c.srt->rows); r++)
			timed += c.srt->row[r].count;
		lone = ctr.records_out - timed - c.srt->untimed_clock - c.srt->untimed_rows;
		if (c.format == TH_EXPORT_FORMAT_TEXT) {
			th_srt_print(out, c.srt,
				"RPC records that pass the filters, the call's first segment to "
				"the reply's first");
			fprintf(out,
				"  %-14" PRIu64
				" RPCs not timed: no reply or no call in the trace\n",
				lone);
		} else {
			/* Rows for a program; what was not timed goes with the summary. */
			th_srt_write_rows(out, c.srt, c.format == TH_EXPORT_FORMAT_JSON);
			if (!is_quiet)
				fprintf(stderr,
					"tracehound export: RPCs not timed: %" PRIu64
					" without a reply or a call, %" PRIu64
					" with a reply stamped first, %" PRIu64
					" past %d procedures\n",
					lone, c.srt->untimed_clock, c.srt->untimed_rows,
					TH_SRT_ROWS);
		}
		if (fflush(out) != 0)
			rc = -errno;
	}
	if (rc < 0) {
		fprintf(stderr, "tracehound export: %s: %s\n",
			output != NULL ? output : "standard output", strerror(-rc));
		status = 1;
	}
	for (size_t i = 0; i < readable; i++)
		report(order[i], true, &dmg, &status);
	if (!is_quiet && c.srt != NULL) /* a table does not care about order */
		fprintf(stderr,
			"tracehound export: %zu segments (%u damaged)%s, %" PRIu64
			" RPCs read, %" PRIu64 " in the table, %" PRIu64 " filtered out\n",
			nsegs + dmg.unread, dmg.damaged,
			foreign_note(&dmg, copies, note, sizeof(note)), ctr.records_in,
			ctr.records_out, ctr.filtered);
	else if (!is_quiet)
		fprintf(stderr,
			"tracehound export: %zu segments (%u damaged)%s, %" PRIu64
			" %s read, %" PRIu64 " written, %" PRIu64 " filtered out, %" PRIu64
			" names, %" PRIu64 " late%s\n",
			nsegs + dmg.unread, dmg.damaged,
			foreign_note(&dmg, copies, note, sizeof(note)), ctr.records_in,
			c.is_rpcs ? "RPCs" : "opens", ctr.records_out, ctr.filtered, ctr.names_in,
			ctr.out_of_order, late_note(&c, &ctr, late, sizeof(late)));
	if (!is_quiet && ctr.names_dropped > 0)
		fprintf(stderr,
			"tracehound export: %" PRIu64 " of %" PRIu64
			" names not kept, --names-mb %" PRIu64
			" reached: paths through them are empty (raise it)\n",
			ctr.names_dropped, ctr.names_in, c.names_bytes >> 20);
	if (!is_quiet && ctr.released_early > 0)
		fprintf(stderr,
			"tracehound export: %" PRIu64 " records left the reorder window before it "
			"had passed, their streams holding their share of --window-mb %" PRIu64
			" (raise it)\n",
			ctr.released_early, c.window_bytes >> 20);
	if (!is_quiet && c.anon != NULL) {
		struct th_export_anon_counters ac;

		th_export_anon_counters(c.anon, &ac);
		fprintf(stderr,
			"tracehound export: pseudonyms computed: %" PRIu64 " addresses, %" PRIu64
			" uids and gids, %" PRIu64 " handles; %" PRIu64
			" replaced in full tables (computed again when they return)\n",
			ac.addrs, ac.ids, ac.fhs, ac.replaced);
	}
	if (status == 0 && (dmg.damaged > 0 || dmg.foreign > 0))
		status = 3;
free_all:
	if (out != stdout && out != NULL && fclose(out) != 0 && status == 0) {
		fprintf(stderr, "tracehound export: %s: %s\n", output, strerror(errno));
		status = 1;
	}
	for (unsigned int i = 0; i < nchains; i++)
		th_segment_reader_close(chains[i].r);
	for (size_t i = 0; i < segs.count; i++)
		free(segs.v[i].path);
	free(segs.v);
	free(order);
	free(run_len);
	free(chains);
	free(sources);
	th_export_hosts_free(c.hosts);
	th_export_anon_free(c.anon);
	free(c.srt);
	return status;
}
