/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The export pipeline: (names pass) -> per-stream reorder -> k-way merge ->
 * filters -> join, host names, pseudonyms -> one of three formats.
 *
 * Streams are meant to be in time order already, but a session lcore writes an
 * open when it closes, so its records can be up to an open's duration (plus the
 * idle timeout) out of open-time order. Each stream keeps the records it has
 * read in a FIFO while they arrive in order and in a small heap when they do
 * not, and hands a record to the merge only once it has read a record later by
 * the merge window (or reached its end). In-order input costs O(1) per record.
 */

#include "th_export.h"
#include "export_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Records a stream decodes in one go once it has to read (see fill()). */
#define FILL_BATCH 64
#define OUT_BUF_SIZE (256 * 1024)
#define LINE_MAX_SIZE 2048 /* one record in any format, path included */
#define PATH_MAX_SIZE 1024
/* Records of a stream ahead of its head whose pseudonyms are prefetched (see prefetch_ahead()). */
#define PREFETCH_AHEAD 8
/* Calls to prefetch_ahead() between loading a table set and loading its entry. */
#define PREFETCH_LAG 4

/* The table hashes of a record whose entries are to be loaded. */
struct lookahead {
	uint32_t anon[3]; /* client, server, handle pseudonyms */
	uint32_t name;    /* the handle's name */
};

struct stream {
	struct th_export_source *src; /**< where records come from */
	struct th_trace_open *ring;   /**< records in non-decreasing open time */
	size_t ring_cap;              /**< slots */
	size_t ring_head;             /**< first record */
	size_t ring_count;            /**< records */
	struct th_trace_open *late;   /**< min-heap: records that came out of order */
	size_t late_count;            /**< records in the heap */
	size_t late_cap;              /**< heap slots */
	uint64_t max_seen_ns;         /**< latest open time read */
	bool is_done;                 /**< end of stream (or damage) reached */
};

/* Fewest records a stream may hold back whatever the memory budget. */
#define HELD_MIN 1024

struct exporter {
	const struct th_export_config *c;  /**< options */
	struct th_export_counters *ctr;    /**< counters */
	struct th_export_names *names;     /**< join table, or NULL */
	struct stream *streams;            /**< one per source */
	unsigned int count;                /**< sources */
	unsigned int *heap;                /**< k-way heap of stream indices */
	unsigned int heap_count;           /**< streams in the heap */
	size_t held_max;                   /**< records one stream may hold back (its share) */
	bool has_name_lookups;             /**< records' paths are looked up (csv, json) */
	struct lookahead ahead[PREFETCH_LAG]; /**< hashed, sets loading, entries not yet */
	unsigned int ahead_count;             /**< of ahead[] */
	unsigned int ahead_next;              /**< next ahead[] slot */
	struct th_trace_name name_scratch; /**< where name records land in the merge pass */
	struct th_trace_rpc rpc_scratch;   /**< where rpc records land */
	char *buf;                         /**< output buffer */
	size_t buf_used;                   /**< bytes in buf */
	FILE *out;                         /**< output */
	bool is_write_failed;              /**< an fwrite came up short */
};

void
th_export_config_defaults(struct th_export_config *c)
{
	memset(c, 0, sizeof(*c));
	c->format = TH_EXPORT_FORMAT_TEXT;
	c->direction = -1;
	c->is_names_on = true;
	/* Opens close 30 s (session.idle) after their last operation: a minute covers opens of
	 * up to ~30 s; longer ones are written late and counted. */
	c->window_ns = 60ull * 1000000000u;
	c->window_bytes = 1024ull << 20;
	c->names_bytes = 2048ull << 20;
}

/* ---- small, fast formatting (snprintf costs more than the rest of a record) ---- */

static inline char *
put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* Exactly @p width digits, zero-padded (v < 10^width). */
static inline char *
put_fixed(char *p, uint64_t v, int width)
{
	for (int i = width - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + width;
}

static inline char *
put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static inline char *
put_hex(char *p, const uint8_t *b, unsigned int n)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned int i = 0; i < n; i++) {
		*p++ = digits[b[i] >> 4];
		*p++ = digits[b[i] & 15];
	}
	return p;
}

static char *
put_addr(char *p, const struct th_addr *a)
{
	if (th_addr_is_v4(a))
		return th_addr_put_v4(p, a);
	return p + th_addr_format(a, p, 48);
}

/* ---- per-stream reorder ---- */

static inline uint64_t
t_of(const struct th_trace_open *r)
{
	return r->open_ns;
}

static inline size_t
grown(size_t cap, size_t first, size_t max)
{
	cap = cap != 0 ? cap * 2 : first;
	return cap < max ? cap : max;
}

static inline struct th_trace_open *
ring_at(const struct stream *s, size_t i)
{
	size_t j = s->ring_head + i;

	return &s->ring[j < s->ring_cap ? j : j - s->ring_cap];
}

/* Room for one more record in the ring, which grows up to @p max slots. */
static int
ring_reserve(struct stream *s, size_t max)
{
	struct th_trace_open *r;
	size_t cap;

	if (s->ring_count < s->ring_cap)
		return 0;
	cap = grown(s->ring_cap, 256, max);
	r = malloc(cap * sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < s->ring_count; i++)
		r[i] = *ring_at(s, i);
	free(s->ring);
	s->ring = r;
	s->ring_cap = cap;
	s->ring_head = 0;
	return 0;
}

static int
late_push(struct stream *s, const struct th_trace_open *r, size_t max)
{
	size_t i;

	if (s->late_count == s->late_cap) {
		size_t cap = grown(s->late_cap, 64, max);
		struct th_trace_open *l = realloc(s->late, cap * sizeof(*l));

		if (l == NULL)
			return -ENOMEM;
		s->late = l;
		s->late_cap = cap;
	}
	for (i = s->late_count++; i > 0 && t_of(&s->late[(i - 1) / 2]) > t_of(r); i = (i - 1) / 2)
		s->late[i] = s->late[(i - 1) / 2];
	s->late[i] = *r;
	return 0;
}

static void
late_pop(struct stream *s)
{
	struct th_trace_open last = s->late[--s->late_count];
	size_t i = 0, n = s->late_count;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && t_of(&s->late[c + 1]) < t_of(&s->late[c]))
			c++;
		if (t_of(&s->late[c]) >= t_of(&last))
			break;
		s->late[i] = s->late[c];
		i = c;
	}
	if (n > 0)
		s->late[i] = last;
}

/* The stream's earliest buffered record, or NULL. */
static const struct th_trace_open *
head(const struct stream *s)
{
	const struct th_trace_open *a = s->ring_count > 0 ? ring_at(s, 0) : NULL;
	const struct th_trace_open *b = s->late_count > 0 ? &s->late[0] : NULL;

	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	return t_of(b) < t_of(a) ? b : a;
}

static void
drop_head(struct stream *s)
{
	const struct th_trace_open *h = head(s);

	if (s->ring_count > 0 && h == ring_at(s, 0)) {
		s->ring_head = s->ring_head + 1 < s->ring_cap ? s->ring_head + 1 : 0;
		s->ring_count--;
	} else {
		late_pop(s);
	}
}

/*
 * Records one of @p count streams may hold back within @p bytes: its ring
 * and its heap each grow up to that many, so half its share.
 */
static size_t
held_max(uint64_t bytes, unsigned int count)
{
	uint64_t n = bytes / (count != 0 ? count : 1) / (2 * sizeof(struct th_trace_open));

	return n > HELD_MIN ? (size_t)n : HELD_MIN;
}

/*
 * Read until the head may leave: nothing earlier can still come within the
 * window, or the stream holds its share of the memory budget, in which case
 * the head leaves early and is counted (a record older than it that comes
 * later is written late, and counted as such).
 */
static int
fill(struct exporter *x, struct stream *s)
{
	unsigned int got = 0;

	for (;;) {
		const struct th_trace_open *h = head(s);
		struct th_trace_open *slot;
		int type = 0, rc;

		if (h != NULL && !s->is_done && s->ring_count + s->late_count >= x->held_max) {
			if (s->max_seen_ns - t_of(h) < x->c->window_ns)
				x->ctr->released_early++;
			return 0;
		}
		/* Once it has to read, a stream reads a batch: decoding one record per stream in
		 * turn across many streams keeps every stream's chunk tables cold. */
		if (h != NULL && (s->is_done || (s->max_seen_ns - t_of(h) >= x->c->window_ns &&
						    (got == 0 || got >= FILL_BATCH))))
			return 0;
		if (s->is_done)
			return 0;
		if (ring_reserve(s, x->held_max) < 0)
			return -ENOMEM;
		slot = ring_at(s, s->ring_count);
		rc = s->src->next(s->src->ctx, &type, slot, &x->name_scratch, &x->rpc_scratch);
		if (rc <= 0) {
			s->is_done = true;
			continue;
		}
		if (type == TH_TRACE_NAME) {
			/* Counted in the names pass when there is one. */
			if (x->names == NULL)
				x->ctr->names_in++;
			continue;
		}
		if (type != TH_TRACE_OPEN)
			continue; /* RPC records: export writes opens */
		x->ctr->records_in++;
		got++;
		if (x->c->progress != NULL && (x->ctr->records_in & 0xffff) == 0)
			x->c->progress(x->c->progress_ctx, x->ctr->records_in);
		if (s->ring_count == 0 || t_of(slot) >= t_of(ring_at(s, s->ring_count - 1))) {
			s->ring_count++;
		} else if (late_push(s, slot, x->held_max) < 0) {
			return -ENOMEM;
		}
		if (t_of(slot) > s->max_seen_ns)
			s->max_seen_ns = t_of(slot);
	}
	return 0;
}

/*
 * A stream's records wait in its ring for the merge window (a minute of
 * trace: thousands of records), so the ones about to be written are no longer
 * in cache; nor are their pseudonyms, in tables larger than the caches. Both
 * are loaded a few records ahead of the stream's head, so that writing them
 * does not wait for memory.
 */
/* Start loading the pseudonym and name table lines of the lookups @p l stands for. */
static void
prefetch_tables(const struct exporter *x, const struct lookahead *l, bool is_entries)
{
	if (x->c->anon != NULL)
		th_export__anon_prefetch(x->c->anon, l->anon, is_entries);
	if (x->has_name_lookups)
		th_export__names_prefetch(x->names, l->name, is_entries);
}

static void
prefetch_ahead(struct exporter *x, const struct stream *s)
{
	if (s->ring_count > 2 * PREFETCH_AHEAD) {
		const char *r = (const char *)ring_at(s, 2 * PREFETCH_AHEAD);

		for (size_t off = 0; off < sizeof(struct th_trace_open); off += 64)
			__builtin_prefetch(r + off);
		__builtin_prefetch(r + sizeof(struct th_trace_open) - 1);
	}
	/* The tables: sets and buckets eight records ahead, their entries four calls later
	 * (hashed once, kept in x->ahead meanwhile). */
	if ((x->c->anon != NULL || x->has_name_lookups) && s->ring_count > PREFETCH_AHEAD) {
		const struct th_trace_open *r = ring_at(s, PREFETCH_AHEAD);
		struct lookahead *l = &x->ahead[x->ahead_next];

		if (x->ahead_count == PREFETCH_LAG)
			prefetch_tables(x, l, true);
		else
			x->ahead_count++;
		if (x->c->anon != NULL)
			th_export__anon_hashes(r, l->anon);
		if (x->has_name_lookups)
			l->name = th_export__names_hash(&r->server, r->fh,
				r->fh_len <= TH_TRACE_FH_MAX ? r->fh_len : TH_TRACE_FH_MAX);
		prefetch_tables(x, l, false);
		x->ahead_next = (x->ahead_next + 1) % PREFETCH_LAG;
	}
}

/* ---- k-way merge over the streams' heads ---- */

static inline bool
before(const struct exporter *x, unsigned int a, unsigned int b)
{
	uint64_t ta = t_of(head(&x->streams[a])), tb = t_of(head(&x->streams[b]));

	/* Equal times keep the order the sources were given in: the output is reproducible. */
	return ta < tb || (ta == tb && a < b);
}

static void
heap_down(struct exporter *x, unsigned int i)
{
	unsigned int v = x->heap[i], n = x->heap_count;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(x, x->heap[c + 1], x->heap[c]))
			c++;
		if (!before(x, x->heap[c], v))
			break;
		x->heap[i] = x->heap[c];
		i = c;
	}
	x->heap[i] = v;
}

/* ---- output ---- */

static void
flush_out(struct exporter *x)
{
	if (x->buf_used > 0 && fwrite(x->buf, 1, x->buf_used, x->out) != x->buf_used)
		x->is_write_failed = true;
	x->buf_used = 0;
}

static bool
net_match(const struct th_export_net *n, const struct th_addr *a)
{
	unsigned int full = n->prefix_len / 8, rest = n->prefix_len % 8;

	if (memcmp(n->addr.b, a->b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((n->addr.b[full] ^ a->b[full]) & (0xff00 >> rest)) == 0;
}

static bool
any_net(const struct th_export_net *nets, unsigned int count, const struct th_addr *a)
{
	if (count == 0)
		return true;
	for (unsigned int i = 0; i < count; i++)
		if (net_match(&nets[i], a))
			return true;
	return false;
}

/* A host field: pseudonym, name from the table, or the number. */
static char *
put_host(struct exporter *x, char *p, const struct th_addr *a, bool is_bracketed)
{
	struct th_addr pseudo;
	const char *name;

	if (x->c->anon != NULL) {
		th_export_anon_addr(x->c->anon, a, &pseudo);
		a = &pseudo;
	} else if (x->c->hosts != NULL && (name = th_export_hosts_lookup(x->c->hosts, a)) != NULL) {
		size_t n = strnlen(name, 255);

		memcpy(p, name, n);
		return p + n;
	}
	if (is_bracketed && !th_addr_is_v4(a)) {
		*p++ = '[';
		p = put_addr(p, a);
		*p++ = ']';
		return p;
	}
	return put_addr(p, a);
}

static char *
put_time9(char *p, uint64_t ns)
{
	p = put_u64(p, ns / 1000000000u);
	*p++ = '.';
	return put_fixed(p, ns % 1000000000u, 9);
}

/*
 * CSV field (RFC 4180): quoted when it holds a comma, quote, or line break.
 * @p s is NUL-terminated at @p n (strcspn() reads to the NUL).
 */
static char *
put_csv(char *p, const char *s, size_t n)
{
	if (strcspn(s, ",\"\r\n") >= n) {
		memcpy(p, s, n);
		return p + n;
	}
	*p++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			*p++ = '"';
		*p++ = s[i];
	}
	*p++ = '"';
	return p;
}

/* Length of a valid UTF-8 sequence at s (at most n bytes), 0 when it is not one. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (len > n)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		(cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* JSON string. Names are bytes, not text: bytes that are not UTF-8 become the six characters
 * \u00HH would mislabel, so they are written as the text "\xHH" (an escaped backslash). */
static char *
put_json_str(char *p, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;

	*p++ = '"';
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t len;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			p = put_str(p, "\\u00");
			*p++ = digits[c >> 4];
			*p++ = digits[c & 15];
			i++;
		} else if (c < 0x80) {
			*p++ = (char)c;
			i++;
		} else if ((len = utf8_len(u + i, n - i)) > 0) {
			memcpy(p, u + i, len);
			p += len;
			i += len;
		} else {
			p = put_str(p, "\\\\x");
			*p++ = digits[c >> 4];
			*p++ = digits[c & 15];
			i++;
		}
	}
	*p++ = '"';
	return p;
}

static const char csv_header[] = "open_time,close_time,command_us,direction,server,handle,client,"
				 "uid,gid,nfs_version,cache_hit,directory,ops,transferred,"
				 "seq_bytes,size,path\n";

static void
write_record(struct exporter *x, const struct th_trace_open *r)
{
	const struct th_export_config *c = x->c;
	char fh_hex[2 * TH_TRACE_FH_MAX + 1], path[PATH_MAX_SIZE], apath[PATH_MAX_SIZE * 2];
	char *p, *fh_end, *fh_str = fh_hex;
	const char *path_str = path;
	uint8_t pfh[TH_EXPORT_ANON_FH_SIZE];
	unsigned int fh_len = r->fh_len <= TH_TRACE_FH_MAX ? r->fh_len : TH_TRACE_FH_MAX;
	size_t path_len = 0, apath_len = 0;
	uint64_t cmd_ns = r->close_ns > r->open_ns ? r->close_ns - r->open_ns : 0;
	uint32_t uid = r->uid, gid = r->gid;
	bool is_path = x->names != NULL;

	path[0] = apath[0] = '\0';
	/* Filters see the original values. */
	if (t_of(r) < c->from_ns || (c->to_ns != 0 && t_of(r) >= c->to_ns) ||
		(c->direction >= 0 && r->dir != c->direction) ||
		!any_net(c->servers, c->servers_count, &r->server) ||
		!any_net(c->clients, c->clients_count, &r->client))
		goto filtered;
	if (c->uids_count > 0) {
		unsigned int i;

		for (i = 0; i < c->uids_count && c->uids[i] != r->uid; i++)
			;
		if (i == c->uids_count)
			goto filtered;
	}
	if (c->anon == NULL || c->files_count > 0) {
		fh_end = put_hex(fh_hex, r->fh, fh_len);
		*fh_end = '\0';
	}
	/* With pseudonyms, the path's pseudonym is made along with the path (only CSV and JSON
	 * have a path column); --file looks at the original path. */
	if (is_path && c->anon != NULL && c->format != TH_EXPORT_FORMAT_TEXT)
		path_len = th_export__names_path_anon(x->names, c->anon, &r->server, r->fh, fh_len,
			t_of(r), path, sizeof(path), apath, sizeof(apath), &apath_len);
	else if (is_path)
		path_len = th_export_names_path(
			x->names, &r->server, r->fh, fh_len, t_of(r), path, sizeof(path));
	if (c->files_count > 0) {
		unsigned int i;

		for (i = 0; i < c->files_count; i++) {
			if (strcasecmp(c->files[i], fh_hex) == 0)
				break;
			if (path_len > 0 && c->files[i][0] != '\0' &&
				strstr(path, c->files[i]) != NULL)
				break;
		}
		if (i == c->files_count)
			goto filtered;
	}
	if (c->anon != NULL) {
		th_export_anon_fh(c->anon, r->fh, fh_len, pfh);
		fh_end = put_hex(fh_hex, pfh, sizeof(pfh));
		*fh_end = '\0';
		uid = th_export_anon_uid(c->anon, uid);
		gid = th_export_anon_gid(c->anon, gid);
		path_len = apath_len;
		path_str = apath;
	}
	if (x->buf_used + LINE_MAX_SIZE * 4 > OUT_BUF_SIZE)
		flush_out(x);
	p = x->buf + x->buf_used;
	switch (c->format) {
	case TH_EXPORT_FORMAT_TEXT:
		p = put_u64(p, r->open_ns / 1000000000u);
		*p++ = '.';
		p = put_fixed(p, r->open_ns % 1000000000u / 1000u, 6);
		p = put_str(p, " | ");
		p = put_u64(p, cmd_ns / 1000u);
		p = put_str(p, r->dir == 1 ? " | write | " : " | read | ");
		p = put_host(x, p, &r->server, true);
		*p++ = ':';
		p = put_str(p, fh_str);
		p = put_str(p, " | ");
		p = put_host(x, p, &r->client, false);
		*p++ = '.';
		p = put_u64(p, uid);
		p = put_str(p, " | ");
		p = put_u64(p, r->transferred);
		p = put_str(p, " | ");
		p = put_u64(p, r->size);
		*p++ = '\n';
		break;
	case TH_EXPORT_FORMAT_CSV:
		p = put_time9(p, r->open_ns);
		*p++ = ',';
		p = put_time9(p, r->close_ns);
		*p++ = ',';
		p = put_u64(p, cmd_ns / 1000u);
		p = put_str(p, r->dir == 1 ? ",write," : ",read,");
		{
			char host[300], *e = put_host(x, host, &r->server, false);

			*e = '\0';
			p = put_csv(p, host, (size_t)(e - host));
			*p++ = ',';
			p = put_str(p, fh_str);
			*p++ = ',';
			e = put_host(x, host, &r->client, false);
			*e = '\0';
			p = put_csv(p, host, (size_t)(e - host));
		}
		*p++ = ',';
		p = put_u64(p, uid);
		*p++ = ',';
		p = put_u64(p, gid);
		*p++ = ',';
		p = put_u64(p, r->vers);
		p = put_str(p, r->flags & TH_TRACE_OPEN_CACHE_HIT ? ",1" : ",0");
		p = put_str(p, r->flags & TH_TRACE_OPEN_DIRECTORY ? ",1," : ",0,");
		p = put_u64(p, r->ops);
		*p++ = ',';
		p = put_u64(p, r->transferred);
		*p++ = ',';
		p = put_u64(p, r->seq_bytes);
		*p++ = ',';
		p = put_u64(p, r->size);
		*p++ = ',';
		p = put_csv(p, path_str, path_len);
		*p++ = '\n';
		break;
	default:
		p = put_str(p, "{\"open_time\":");
		p = put_time9(p, r->open_ns);
		p = put_str(p, ",\"close_time\":");
		p = put_time9(p, r->close_ns);
		p = put_str(p, ",\"command_us\":");
		p = put_u64(p, cmd_ns / 1000u);
		p = put_str(
			p, r->dir == 1 ? ",\"direction\":\"write\"" : ",\"direction\":\"read\"");
		{
			char host[300], *e = put_host(x, host, &r->server, false);

			p = put_str(p, ",\"server\":");
			p = put_json_str(p, host, (size_t)(e - host));
			p = put_str(p, ",\"handle\":\"");
			p = put_str(p, fh_str);
			p = put_str(p, "\",\"client\":");
			e = put_host(x, host, &r->client, false);
			p = put_json_str(p, host, (size_t)(e - host));
		}
		p = put_str(p, ",\"uid\":");
		p = put_u64(p, uid);
		p = put_str(p, ",\"gid\":");
		p = put_u64(p, gid);
		p = put_str(p, ",\"nfs_version\":");
		p = put_u64(p, r->vers);
		p = put_str(p, r->flags & TH_TRACE_OPEN_CACHE_HIT ? ",\"cache_hit\":true"
								  : ",\"cache_hit\":false");
		p = put_str(p, r->flags & TH_TRACE_OPEN_DIRECTORY ? ",\"directory\":true"
								  : ",\"directory\":false");
		p = put_str(p, ",\"ops\":");
		p = put_u64(p, r->ops);
		p = put_str(p, ",\"transferred\":");
		p = put_u64(p, r->transferred);
		p = put_str(p, ",\"seq_bytes\":");
		p = put_u64(p, r->seq_bytes);
		p = put_str(p, ",\"size\":");
		p = put_u64(p, r->size);
		p = put_str(p, ",\"path\":");
		if (path_len > 0)
			p = put_json_str(p, path_str, path_len);
		else
			p = put_str(p, "null");
		p = put_str(p, "}\n");
		break;
	}
	x->buf_used = (size_t)(p - x->buf);
	x->ctr->records_out++;
	return;
filtered:
	x->ctr->filtered++;
}

/* ---- the run ---- */

static int
names_pass(struct exporter *x, FILE *err)
{
	struct th_trace_open open;
	struct th_trace_rpc rpc;

	for (unsigned int i = 0; i < x->count; i++) {
		struct th_export_source *src = x->streams[i].src;
		int type = 0, rc, added;

		if (src->is_opens_only)
			continue;
		while ((rc = src->next(src->ctx, &type, &open, &x->name_scratch, &rpc)) > 0) {
			if (type != TH_TRACE_NAME)
				continue;
			x->ctr->names_in++;
			added = th_export_names_add(x->names, &x->name_scratch);
			if (added == -ENOMEM)
				return -ENOMEM;
			if (added == -ENOSPC)
				x->ctr->names_dropped++;
		}
		/* The merge pass has nothing to take from names alone: it stays at its end. */
		if (src->is_names_only) {
			x->streams[i].is_done = true;
			continue;
		}
		if (src->rewind != NULL && (rc = src->rewind(src->ctx)) < 0) {
			fprintf(err, "export: %s: cannot read it again: %s\n", src->label,
				strerror(-rc));
			x->streams[i].is_done = true;
		}
	}
	return 0;
}

int
th_export_run(const struct th_export_config *c, struct th_export_source *sources,
	unsigned int count, FILE *out, FILE *err, struct th_export_counters *ctr)
{
	struct exporter x;
	int rc = 0;

	memset(ctr, 0, sizeof(*ctr));
	memset(&x, 0, sizeof(x));
	x.c = c;
	x.ctr = ctr;
	x.count = count;
	x.out = out;
	x.streams = calloc(count > 0 ? count : 1, sizeof(*x.streams));
	x.heap = calloc(count > 0 ? count : 1, sizeof(*x.heap));
	x.buf = malloc(OUT_BUF_SIZE);
	if (x.streams == NULL || x.heap == NULL || x.buf == NULL) {
		rc = -ENOMEM;
		goto free_all;
	}
	for (unsigned int i = 0; i < count; i++)
		x.streams[i].src = &sources[i];
	x.held_max = held_max(c->window_bytes, count);
	/* Names are needed for the path column and for --file substrings; they arrive when
	 * they stop being valid, so they are all read first. */
	if ((c->is_names_on && c->format != TH_EXPORT_FORMAT_TEXT) || c->files_count > 0) {
		x.names = th_export_names_create(c->names_bytes);
		if (x.names == NULL) {
			rc = -ENOMEM;
			goto free_all;
		}
		rc = names_pass(&x, err);
		if (rc < 0)
			goto free_all;
		x.has_name_lookups = c->format != TH_EXPORT_FORMAT_TEXT;
	}
	if (c->format == TH_EXPORT_FORMAT_CSV)
		x.buf_used = (size_t)(put_str(x.buf, csv_header) - x.buf);
	for (unsigned int i = 0; i < count; i++) {
		rc = fill(&x, &x.streams[i]);
		if (rc < 0)
			goto free_all;
		if (head(&x.streams[i]) != NULL)
			x.heap[x.heap_count++] = i;
	}
	for (unsigned int i = x.heap_count; i-- > 0;)
		heap_down(&x, i);
	{
		uint64_t last_ns = 0;

		while (x.heap_count > 0) {
			unsigned int si = x.heap[0];
			struct stream *s = &x.streams[si];
			const struct th_trace_open *h = head(s);

			if (t_of(h) < last_ns)
				ctr->out_of_order++;
			else
				last_ns = t_of(h);
			write_record(&x, h);
			drop_head(s);
			rc = fill(&x, s);
			if (rc < 0)
				goto free_all;
			prefetch_ahead(&x, s);
			if (head(s) == NULL)
				x.heap[0] = x.heap[--x.heap_count];
			if (x.heap_count > 0)
				heap_down(&x, 0);
		}
	}
	flush_out(&x);
	if (fflush(out) != 0)
		x.is_write_failed = true;
	if (c->progress != NULL)
		c->progress(c->progress_ctx, ctr->records_in);
	rc = x.is_write_failed ? -EIO : 0;
free_all:
	for (unsigned int i = 0; x.streams != NULL && i < count; i++) {
		free(x.streams[i].ring);
		free(x.streams[i].late);
	}
	th_export_names_free(x.names);
	free(x.buf);
	free(x.heap);
	free(x.streams);
	return rc;
}
