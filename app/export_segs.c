/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound export's segments: the files given and found under directories,
 * their headers, which are copies and which no segments at all, the chains of
 * each writer stream in order (split into runs where captures overlap), and
 * what went wrong in reading them.
 */

#include "export_segs.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "th_export.h"
#include "th_segment.h"

/* One segment file and how reading it last ended. */
struct seg {
	char *path; /* as given or found */
	dev_t dev;  /* the file, however it was reached (links, twice given) */
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
	uint64_t trailer_lost;        /* records its writer had lost when it closed it; else 0 */
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

/* ---- finding segments ---- */

static int
seg_add(struct th_segs *l, const char *path, const struct stat *st)
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

/*
 * A reader of segment @p s (NULL with errno set). A capture still running closes
 * its segment NAME.tmp by renaming it NAME, perhaps after export found it: a
 * stream's last segment is opened only when the stream gets to it, minutes later
 * on a large trace. The closed file, the same segment whole, is read in its
 * place (and named from then on) rather than reported unreadable with nothing
 * recovered.
 */
static struct th_segment_reader *
seg_open(struct seg *s)
{
	struct th_segment_reader *r = th_segment_reader_open(s->path);
	const struct th_segment_header *h;
	struct stat st;
	size_t n;

	if (r != NULL || errno != ENOENT || !has_suffix(s->path, TH_SEGMENT_TMP_SUFFIX))
		return r;
	/* Only a name that is gone: a link whose file is gone is that link's segment. */
	if (lstat(s->path, &st) == 0) {
		errno = ENOENT;
		return NULL;
	}
	n = strlen(s->path) - strlen(TH_SEGMENT_TMP_SUFFIX);
	s->path[n] = '\0';
	r = th_segment_reader_open(s->path);
	h = r != NULL ? th_segment_reader_header(r) : NULL;
	/* Another file of that name (not the segment's, by its header) is not read for it. */
	if (h != NULL && s->is_header_ok &&
		(h->box_id != s->hdr.box_id || h->kind != s->hdr.kind ||
			h->stream_id != s->hdr.stream_id || h->created_ns != s->hdr.created_ns ||
			h->seq != s->hdr.seq)) {
		th_segment_reader_close(r);
		r = NULL;
	}
	if (r == NULL) {
		s->path[n] = TH_SEGMENT_TMP_SUFFIX[0];
		errno = ENOENT;
	}
	return r;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* How far below a directory given the search goes (a link to its own directory would go on). */
#define WALK_DEPTH_MAX 16

/* One search of a directory given: the directories it is in, what it could not look at. */
struct walk {
	struct th_segs *l;                /* the segments found */
	char *failed;                     /* the directory that could not be read */
	size_t failed_size;               /* its size */
	dev_t up_dev[WALK_DEPTH_MAX + 1]; /* the directories being searched, the given one first */
	ino_t up_ino[WALK_DEPTH_MAX + 1]; /* (a link back to one of them holds nothing new) */
	unsigned int too_deep;            /* directories below WALK_DEPTH_MAX not searched */
	unsigned int too_long;            /* entries whose path does not fit PATH_MAX */
	char deep_first[PATH_MAX];        /* the first directory too deep */
	char long_first[PATH_MAX];        /* the directory of the first path too long */
};

/* Segments under a directory, depth first, names sorted so runs are reproducible. */
/*
 * Whether the segment NAME.tmp at @p path, listed but gone, was closed since: a capture
 * renames it NAME between the listing and its stat(). Then @p path becomes NAME and @p st
 * its stat, unless the listing (@p names, @p count, sorted) has NAME too, found in its turn.
 */
static bool
is_closed_since(char **names, size_t count, char *path, struct stat *st)
{
	size_t n = strlen(path), m = strlen(TH_SEGMENT_TMP_SUFFIX);
	const char *base;

	if (!has_suffix(path, TH_SEGMENT_SUFFIX TH_SEGMENT_TMP_SUFFIX))
		return false;
	path[n - m] = '\0';
	base = strrchr(path, '/') + 1;
	if (bsearch(&base, names, count, sizeof(*names), cmp_str) == NULL && stat(path, st) == 0 &&
		S_ISREG(st->st_mode))
		return true;
	path[n - m] = TH_SEGMENT_TMP_SUFFIX[0];
	return false;
}

static int
walk(struct walk *w, const char *dir, unsigned int depth)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t count = 0, cap = 0, i;
	int rc = 0;

	d = opendir(dir);
	if (d == NULL) {
		int e = errno;

		/* the directory itself, not its top */
		snprintf(w->failed, w->failed_size, "%s", dir);
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
		char path[PATH_MAX];
		bool is_seg = has_suffix(names[i], TH_SEGMENT_SUFFIX) ||
			      has_suffix(names[i], TH_SEGMENT_SUFFIX TH_SEGMENT_TMP_SUFFIX);
		bool is_up = false;
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path)) {
			if (w->too_long++ == 0)
				snprintf(w->long_first, sizeof(w->long_first), "%s", dir);
			continue;
		}
		/* A link named as a segment whose file is not there (a disk not mounted, segments
		 * moved) is a segment that cannot be read: named when read, not passed over. Kept
		 * by the link's own inode, so that two such links are two segments. */
		if (stat(path, &st) != 0) {
			if (is_seg && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
				rc = seg_add(w->l, path, &st);
			else if (errno == ENOENT && is_closed_since(names, count, path, &st))
				rc = seg_add(w->l, path, &st);
			continue;
		}
		if (S_ISREG(st.st_mode) && is_seg)
			rc = seg_add(w->l, path, &st);
		if (!S_ISDIR(st.st_mode))
			continue;
		/* A link to a directory being searched (its own, one above) leads to nothing
		 * that search does not find. */
		for (unsigned int k = 0; k <= depth && !is_up; k++)
			is_up = w->up_dev[k] == st.st_dev && w->up_ino[k] == st.st_ino;
		if (is_up)
			continue;
		if (depth + 1 > WALK_DEPTH_MAX) {
			if (w->too_deep++ == 0)
				snprintf(w->deep_first, sizeof(w->deep_first), "%s", path);
			continue;
		}
		w->up_dev[depth + 1] = st.st_dev;
		w->up_ino[depth + 1] = st.st_ino;
		rc = walk(w, path, depth + 1);
	}
	for (i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

/*
 * Search directory @p top (@p st its stat) for segments, and say what the
 * search could not look at: directories too deep, paths too long (their
 * segments, if any, are not exported; counted in segs->dmg.unsearched).
 */
static int
walk_top(
	struct th_segs *l, const char *top, const struct stat *st, char *failed, size_t failed_size)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t n;
	int rc;

	if (w == NULL)
		return -ENOMEM;
	w->l = l;
	w->failed = failed;
	w->failed_size = failed_size;
	w->up_dev[0] = st->st_dev;
	w->up_ino[0] = st->st_ino;
	rc = walk(w, top, 0);
	if (rc == 0 && w->too_deep > 0)
		fprintf(stderr,
			"tracehound export: %s: %u director%s more than %d levels down not "
			"searched (the first: %s): segments there are not exported\n",
			top, w->too_deep, w->too_deep == 1 ? "y" : "ies", WALK_DEPTH_MAX,
			w->deep_first);
	/* That directory's path is some 4 KB: its end says where it is. */
	n = strlen(w->long_first);
	if (rc == 0 && w->too_long > 0)
		fprintf(stderr,
			"tracehound export: %s: %u name%s whose path is longer than %d bytes not "
			"looked at (the first in %s%s): segments there are not exported\n",
			top, w->too_long, w->too_long == 1 ? "" : "s", PATH_MAX - 1,
			n > 160 ? "..." : "", w->long_first + (n > 160 ? n - 160 : 0));
	l->dmg.unsearched += w->too_deep + w->too_long;
	free(w);
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
seg_dedup(struct th_segs *l)
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
	s->trailer_lost = t != NULL ? t->lost : 0;
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
 * The kind, box, stream and creation time a writer puts in a segment's name
 * (KIND-BOX-STREAM-CREATED.lz4[.tmp]), for a file whose header could not be
 * read. @return whether the name is one a writer makes.
 */
static bool
name_ids(
	const char *path, unsigned int kind, uint64_t *box, unsigned int *stream, uint64_t *created)
{
	const char *prefix = th_segment_kind_name(kind);
	const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	const char *dash[3] = {NULL, NULL, NULL};
	char tail[16];
	int end = 0;

	for (const char *p = base; *p != '\0'; p++) {
		if (*p == '-') {
			dash[0] = dash[1];
			dash[1] = dash[2];
			dash[2] = p;
		}
	}
	return dash[0] != NULL && (size_t)(dash[0] - base) == strlen(prefix) &&
	       strncmp(base, prefix, strlen(prefix)) == 0 &&
	       sscanf(dash[0], "-%" SCNu64 "-%u-%" SCNu64 "%15s%n", box, stream, created, tail,
		       &end) == 4 &&
	       dash[0][end] == '\0' &&
	       (strcmp(tail, TH_SEGMENT_SUFFIX) == 0 ||
		       strcmp(tail, TH_SEGMENT_SUFFIX TH_SEGMENT_TMP_SUFFIX) == 0);
}

/* Whether @p path is named as a writer names a segment of any kind. */
static bool
is_writer_name(const char *path)
{
	static const unsigned int kinds[] = {
#define TH_SEGMENT_X(name, num, text) TH_SEGMENT_KIND_##name,
		TH_SEGMENT_KIND_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
	};
	uint64_t box, created;
	unsigned int stream;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (name_ids(path, kinds[i], &box, &stream, &created))
			return true;
	return false;
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
	unsigned int v, tv;
	char to[256];
	ssize_t n;

	s->end_rc = -err;
	s->recovered = 0;
	/* An empty file named as a writer names a closed segment is one lost (a copy cut
	 * short, a file system that lost its data): damage, not some other program's file. */
	s->is_foreign = err == ENOEXEC || (err == ENODATA && is_empty &&
						  !has_suffix(s->path, TH_SEGMENT_TMP_SUFFIX) &&
						  !is_writer_name(s->path));
	if (s->is_foreign)
		snprintf(s->why, sizeof(s->why), "not a tracehound trace segment (%s)",
			is_empty ? "empty" : "no segment header");
	else if (err == ENODATA && is_empty && !has_suffix(s->path, TH_SEGMENT_TMP_SUFFIX))
		snprintf(s->why, sizeof(s->why),
			"empty, though named as a closed segment (a copy cut short, or its file "
			"system lost it): nothing recovered");
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
	else if (err == EPROTONOSUPPORT && th_segment_versions(s->path, &v, &tv) == 0)
		/* Which way it is tells the user which tracehound reads it. */
		snprintf(s->why, sizeof(s->why),
			"segment format %u, records version %u: %s (this tracehound reads format "
			"%u, records %u to %u): nothing read",
			v, tv,
			v > TH_SEGMENT_VERSION || tv > TH_TRACE_VERSION
				? "written by a later tracehound: export it with that one"
				: "older than this tracehound reads: export it with an earlier one",
			TH_SEGMENT_VERSION, TH_TRACE_VERSION_MIN, TH_TRACE_VERSION);
	else if (err == EPROTONOSUPPORT)
		snprintf(s->why, sizeof(s->why),
			"another segment or record format version than this tracehound's (%u, "
			"%u-%u): nothing read",
			TH_SEGMENT_VERSION, TH_TRACE_VERSION_MIN, TH_TRACE_VERSION);
	else if ((n = readlink(s->path, to, sizeof(to) - 1)) > 0) /* see walk() */
		snprintf(s->why, sizeof(s->why), "a link to %.*s, which cannot be read: %s", (int)n,
			to, strerror(err));
	else
		snprintf(s->why, sizeof(s->why), "cannot be read: %s: nothing recovered",
			strerror(err));
}

/*
 * Name a file whose reading did not complete, and count it; @p is_more: other
 * segments are read. A limit of this run (open files, memory) is not the
 * segment's fault: exit 1, not 3.
 */
static void
report(const struct seg *s, bool is_more, struct th_segs_damage *d)
{
	const char *why = s->why[0] != '\0' ? s->why : strerror(-s->end_rc);
	char lost[96] = "";

	if (s->end_rc == 0 || s->end_rc == 1)
		return;
	if (s->end_rc == -EMFILE || s->end_rc == -ENFILE || s->end_rc == -ENOMEM) {
		fprintf(stderr, "tracehound export: %s: %s%s; its records were not all read\n",
			s->path, strerror(-s->end_rc),
			s->end_rc == -ENOMEM ? "" : " (raise ulimit -n: one per stream)");
		d->is_limited = true;
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

const char *
th_segs_note(const struct th_segs *segs, char *buf, size_t size)
{
	const struct th_segs_damage *d = &segs->dmg;
	size_t copies = segs->copies;
	int n = 0;

	buf[0] = '\0';
	if (d->foreign > 0)
		n = snprintf(buf, size, ", %u %s", d->foreign,
			d->foreign == 1 ? "file not a trace segment" : "files not trace segments");
	if (d->missing > 0 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " missing", d->missing);
	if (d->lost > 0 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n,
			", %" PRIu64 " record%s lost by the capture", d->lost,
			d->lost == 1 ? "" : "s");
	if (d->unsearched > 0 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %u not searched", d->unsearched);
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
			c->r = seg_open(s);
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
	struct th_segment_reader *r = seg_open(s);
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

/* ---- segments missing from a stream ---- */

/* Files whose header could not be read (named already) that are of @p a's stream, between
 * @p a and @p b by the creation time in their names (as a writer names them by default). */
static uint64_t
unread_between(const struct th_segs *segs, const struct seg *a, const struct seg *b)
{
	uint64_t n = 0;

	for (size_t i = 0; i < segs->count; i++) {
		const struct seg *s = &segs->v[i];
		uint64_t box, created;
		unsigned int stream;

		n += !s->is_header_ok && name_ids(s->path, a->hdr.kind, &box, &stream, &created) &&
		     box == a->hdr.box_id && stream == a->hdr.stream_id &&
		     created > a->hdr.created_ns && created < b->hdr.created_ns;
	}
	return n;
}

/*
 * Name the segments missing from the @p count of one stream (@p g, in order
 * of creation): a writer numbers its segments on one from the next, so one
 * whose number comes after no segment numbered one less, created earlier, but
 * whose predecessor in the stream has a lower number, comes after segments
 * that are gone (deleted, or left out of a copy). A stream's first segments
 * (gone to a retention policy) are not missed: nothing comes before them.
 * Two captures of one stream each number from 0, so their segments never
 * seem missing. @return segments missing.
 */
static uint64_t
say_missing(const struct th_segs *segs, struct seg *const *g, size_t count)
{
	uint64_t missing = 0;

	for (size_t m = 1; m < count; m++) {
		uint64_t seq = g[m]->hdr.seq, prev = g[m - 1]->hdr.seq, gone, unread;
		bool is_continued = seq == 0 || prev + 1 == seq || prev >= seq;
		char range[128];

		for (size_t p = m - 1; !is_continued && p-- > 0;)
			is_continued = g[p]->hdr.seq + 1 == seq;
		if (is_continued)
			continue;
		/* Those there but unreadable have been named as such. */
		gone = seq - prev - 1;
		unread = unread_between(segs, g[m - 1], g[m]);
		gone -= unread < gone ? unread : gone;
		if (gone == 0)
			continue;
		if (gone < seq - prev - 1)
			snprintf(range, sizeof(range),
				"%" PRIu64 " of segments %" PRIu64 " to %" PRIu64
				" (the others unreadable) %s",
				gone, prev + 1, seq - 1, gone == 1 ? "is" : "are");
		else if (prev + 2 == seq)
			snprintf(range, sizeof(range), "segment %" PRIu64 " is", prev + 1);
		else
			snprintf(range, sizeof(range), "segments %" PRIu64 " to %" PRIu64 " are",
				prev + 1, seq - 1);
		fprintf(stderr,
			"tracehound export: box %" PRIu64 ", %s stream %u: %s missing, between %s "
			"and %s: deleted, or not copied? Their records are not exported\n",
			g[m]->hdr.box_id, th_segment_kind_name(g[m]->hdr.kind), g[m]->hdr.stream_id,
			range, g[m - 1]->path, g[m]->path);
		missing += gone;
	}
	return missing;
}

/* ---- the segments of one export ---- */

/*
 * Whether the export reads the streams of @p kind at all (those it does not are
 * not counted, and the progress bar does not wait for them). RPC records (a
 * decode lcore's) are written with --rpcs only; with --rpcs, the other
 * segments only lend their names to the join, when it needs them. --names
 * reads the segments that hold names, and nothing else.
 */
static bool
is_read(const struct th_export_config *c, int kind)
{
	if (c->is_names)
		return kind != TH_SEGMENT_KIND_OPENS && kind != TH_SEGMENT_KIND_RPCS;
	if (c->is_rpcs)
		return kind == TH_SEGMENT_KIND_RPCS ||
		       (kind != TH_SEGMENT_KIND_OPENS && th_export_needs_names(c));
	return kind != TH_SEGMENT_KIND_RPCS;
}

int
th_segs_find(struct th_segs *segs, char *const *paths, int count)
{
	for (int i = 0; i < count; i++) {
		char failed[4096];
		struct stat st;
		int rc;

		if (stat(paths[i], &st) != 0) {
			rc = -errno;
			fprintf(stderr, "tracehound export: %s: %s\n", paths[i], strerror(-rc));
			return rc;
		}
		/* A segment is read more than once (its header, then its records; a stream
		 * written by two captures once more for its times): a pipe would be empty by
		 * then, and read as a file that is no segment or one cut in its header. */
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			fprintf(stderr,
				"tracehound export: %s: not a regular file (a pipe, a process "
				"substitution <(...), a device): export reads a segment more than "
				"once; save it to a file first\n",
				paths[i]);
			return -EINVAL;
		}
		snprintf(failed, sizeof(failed), "%s", paths[i]);
		rc = S_ISDIR(st.st_mode) ? walk_top(segs, paths[i], &st, failed, sizeof(failed))
					 : seg_add(segs, paths[i], &st);
		if (rc < 0) {
			fprintf(stderr, "tracehound export: %s: %s\n", failed, strerror(-rc));
			return rc;
		}
	}
	seg_dedup(segs);
	return 0;
}

bool
th_segs_holds(const struct th_segs *segs, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return false;
	for (size_t i = 0; i < segs->count; i++)
		if (segs->v[i].dev == st.st_dev && segs->v[i].ino == st.st_ino)
			return true;
	return false;
}

bool
th_segs_would_find(char *const *paths, int count, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash != NULL ? slash + 1 : path;
	char up[PATH_MAX];
	struct stat dir, in;
	int n;

	/* walk() passes over dot files, and takes only these names. */
	if (base[0] == '.' || !(has_suffix(base, TH_SEGMENT_SUFFIX) ||
				      has_suffix(base, TH_SEGMENT_SUFFIX TH_SEGMENT_TMP_SUFFIX)))
		return false;
	if (slash == NULL)
		n = snprintf(up, sizeof(up), ".");
	else if (slash == path)
		n = snprintf(up, sizeof(up), "/");
	else
		n = snprintf(up, sizeof(up), "%.*s", (int)(slash - path), path);
	/* The output's directory and those above it, as far down as walk() goes: by ".."
	 * (the directory a link to it leads to is the one written), compared by inode. */
	for (int depth = 0; depth <= 16 && n > 0 && (size_t)n < sizeof(up) - 3; depth++) {
		if (stat(up, &dir) != 0 || !S_ISDIR(dir.st_mode))
			return false;
		for (int i = 0; i < count; i++)
			if (stat(paths[i], &in) == 0 && S_ISDIR(in.st_mode) &&
				in.st_dev == dir.st_dev && in.st_ino == dir.st_ino)
				return true;
		memcpy(up + n, "/..", 4);
		n += 3;
	}
	return false;
}

int
th_segs_group(struct th_segs *segs, const struct th_export_config *c)
{
	struct overlap_note split = {0};
	struct seg **order;
	struct chain *chains;
	struct th_export_source *sources;
	size_t readable = 0, *run_len = NULL;
	unsigned int nchains = 0;
	int rc = -1;

	/* Group the segments of each writer stream (box, kind, lcore) into one chain, read in
	 * sequence: a stream's records continue from one segment into the next, and only one
	 * file per stream is open at a time. */
	order = segs->order = calloc(segs->count, sizeof(*order));
	chains = segs->chains = calloc(segs->count, sizeof(*chains));
	sources = segs->sources = calloc(segs->count, sizeof(*sources));
	if (order == NULL || chains == NULL || sources == NULL)
		return -1;
	/* Each file's header says whether it is a segment and which stream it continues. A file
	 * whose header cannot be read is named now, and not read again. */
	for (size_t i = 0; i < segs->count; i++) {
		struct seg *s = &segs->v[i];
		struct th_segment_reader *r = seg_open(s);

		if (r == NULL) {
			seg_refused(s, errno);
			continue;
		}
		s->hdr = *th_segment_reader_header(r);
		s->is_header_ok = true;
		th_segment_reader_close(r);
		order[readable++] = s;
	}
	for (size_t i = 0; i < segs->count; i++)
		if (!segs->v[i].is_header_ok)
			report(&segs->v[i], readable > 0, &segs->dmg);
	if (readable == 0) {
		fprintf(stderr, "tracehound export: no trace segment could be read\n");
		return -1;
	}
	qsort(order, readable, sizeof(*order), cmp_seg);
	segs->copies = skip_copies(order, &readable);
	segs->readable = readable;
	run_len = calloc(readable, sizeof(*run_len));
	if (run_len == NULL)
		return -1;
	for (size_t i = 0; i < readable;) {
		size_t j = i + 1, k = i;
		int kind = order[i]->hdr.kind;
		long nruns = 1;
		bool is_merged;

		while (j < readable && continues(order[j - 1], order[j]))
			j++;
		if (!is_read(c, kind)) {
			i = j;
			continue;
		}
		segs->dmg.missing += say_missing(segs, &order[i], j - i);
		/* A listing of names sorts them all: none is merged, so none need be split. */
		is_merged = !c->is_names && (c->is_rpcs ? kind == TH_SEGMENT_KIND_RPCS
							: kind == TH_SEGMENT_KIND_OPENS ||
								    kind == TH_SEGMENT_KIND_MIXED);
		run_len[0] = j - i;
		/* A stream whose segments do not number on one from the next was written by
		 * more than one capture: read through (only then) for their times, they are
		 * split where one capture's records would come late after another's. Order does
		 * not matter to a --srt table. */
		if (is_merged && c->srt == NULL && !is_one_writer(&order[i], j - i)) {
			nruns = split_runs(&order[i], j - i, c->is_rpcs, c->window_ns, run_len);
			if (nruns < 0) {
				fprintf(stderr, "tracehound export: %s\n", strerror(-(int)nruns));
				goto free_run_len;
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
				((c->is_rpcs || c->is_names) && kind == TH_SEGMENT_KIND_MIXED);
			nchains++;
		}
		segs->chained += j - i;
		i = j;
	}
	overlap_say(&split);
	segs->sources_count = nchains;
	if (c->is_names && nchains == 0) {
		fprintf(stderr,
			"tracehound export: no name records in the %zu segment%s read (a "
			"capture's session lcores write them, with [trace] dir)\n",
			readable, readable == 1 ? "" : "s");
		goto free_run_len;
	}
	if (c->is_rpcs) {
		bool has_rpcs = false;

		for (size_t i = 0; i < readable; i++)
			has_rpcs |= order[i]->hdr.kind == TH_SEGMENT_KIND_RPCS;
		if (!has_rpcs) {
			fprintf(stderr,
				"tracehound export: no RPC records in the %zu segment%s read (a "
				"capture writes them with [trace] rpcs = 1)\n",
				readable, readable == 1 ? "" : "s");
			goto free_run_len;
		}
	} else if (!c->is_names) {
		bool has_opens = false, has_rpcs = false;

		/* Segments of RPCs or names alone are not read for opens: an empty output with
		 * "0 segments" would look like a capture that saw no opens. */
		for (size_t i = 0; i < readable; i++) {
			has_opens |= order[i]->hdr.kind == TH_SEGMENT_KIND_OPENS ||
				     order[i]->hdr.kind == TH_SEGMENT_KIND_MIXED;
			has_rpcs |= order[i]->hdr.kind == TH_SEGMENT_KIND_RPCS;
		}
		if (!has_opens) {
			fprintf(stderr,
				"tracehound export: no open records in the %zu segment%s read: %s "
				"(export %s lists them)\n",
				readable, readable == 1 ? "" : "s",
				has_rpcs ? "RPC records" : "names only",
				has_rpcs ? "--rpcs" : "--names");
			goto free_run_len;
		}
	}
	rc = 0;
free_run_len:
	free(run_len);
	return rc;
}

void
th_segs_progress(const struct th_segs *segs, unsigned int *done, unsigned int *count)
{
	*done = 0;
	*count = 0;
	/* Segments finished: those before each chain's cur (the merge pass's rewind starts a
	 * chain from its first again). */
	for (unsigned int i = 0; i < segs->sources_count; i++) {
		*done += segs->chains[i].cur;
		*count += segs->chains[i].count;
	}
}

void
th_segs_report(struct th_segs *segs)
{
	for (size_t i = 0; i < segs->readable; i++)
		report(segs->order[i], true, &segs->dmg);
	/* Records the capture lost (a full disk, a permission or I/O error) are in no segment:
	 * only the trailers of the segments its writer closed afterwards count them, from the
	 * writer's start, so a writer's largest count is its loss. A writer numbers its
	 * segments on from 0: a number that does not go up starts another's. */
	for (unsigned int i = 0; i < segs->sources_count; i++) {
		const struct chain *c = &segs->chains[i];
		const struct seg *most = NULL;
		uint64_t lost = 0, writer = 0;

		for (unsigned int k = 0; k < c->count; k++) {
			const struct seg *s = c->segs[k];

			if (k > 0 && s->hdr.seq <= c->segs[k - 1]->hdr.seq) {
				lost += writer;
				writer = 0;
			}
			if (s->trailer_lost > writer)
				writer = s->trailer_lost;
			if (s->trailer_lost > 0 &&
				(most == NULL || s->trailer_lost > most->trailer_lost))
				most = s;
		}
		lost += writer;
		if (lost == 0)
			continue;
		fprintf(stderr,
			"tracehound export: box %" PRIu64
			", %s stream %u: its capture lost %" PRIu64
			" record%s, in no segment (its statistics say why: a full disk, a "
			"permission or I/O error); counted by segment trailers (%s)\n",
			most->hdr.box_id, th_segment_kind_name(most->hdr.kind), most->hdr.stream_id,
			lost, lost == 1 ? "" : "s", most->path);
		segs->dmg.lost += lost;
	}
}

void
th_segs_free(struct th_segs *segs)
{
	for (unsigned int i = 0; i < segs->sources_count; i++)
		th_segment_reader_close(segs->chains[i].r);
	for (size_t i = 0; i < segs->count; i++)
		free(segs->v[i].path);
	free(segs->v);
	free(segs->order);
	free(segs->chains);
	free(segs->sources);
}
