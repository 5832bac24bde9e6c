/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The export pipeline: (names pass) -> per-stream reorder -> k-way merge ->
 * filters -> join, host names, pseudonyms -> one of three formats. What is
 * merged is opens (by open time) or, with is_rpcs, RPC records (by call time).
 * With is_names there is no merge: the names pass keeps every name, and the
 * join table lists them by the start of their validity.
 *
 * Streams are meant to be in time order already, but a session lcore writes an
 * open when it closes, so its records can be up to an open's duration (plus the
 * idle timeout) out of open-time order, and a decode lcore writes an RPC at its
 * reply. Each stream keeps the records it has read in a ring in time order (one
 * a little out of order moves into its place) and in a small heap those
 * further out, and hands a record to the merge only once it has read a record
 * later by the merge window (or reached its end). In-order input costs O(1) per
 * record.
 */

#include "th_export.h"
#include "export_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "th_nfs.h"
#include "th_op.h"
#include "th_srt.h"

/* Records a stream decodes in one go once it has to read (see fill()). */
#define FILL_BATCH 64
#define OUT_BUF_SIZE (256 * 1024)
#define LINE_MAX_SIZE 2048 /* one record in any format, path included */
#define PATH_MAX_SIZE 1024
/*
 * One name row in any format: a name and a path of control bytes, six
 * characters each in JSON (1530 + 6138), a host name (255), two handles
 * (256), times, mode and keys; pseudonyms are shorter.
 */
#define NAME_ROW_MAX 16384
/* Records of a stream ahead of its head whose pseudonyms are prefetched (see prefetch_ahead()). */
#define PREFETCH_AHEAD 8
/* Calls to prefetch_ahead() between loading a table set and loading its entry. */
#define PREFETCH_LAG 4

/* The table hashes of a record whose entries are to be loaded. */
struct lookahead {
	uint32_t anon[3]; /* client, server, handle pseudonyms */
	uint32_t name;    /* the handle's name */
};

/* A record held for the merge. */
struct held {
	uint64_t t; /**< merge time: open time, or an RPC's call time (its reply's without one) */
	union {
		struct th_trace_open open;
		struct th_trace_rpc rpc;
	};
};

struct stream {
	struct th_export_source *src; /**< where records come from */
	struct held *ring;            /**< records in non-decreasing time */
	size_t ring_cap;              /**< slots */
	size_t ring_head;             /**< first record */
	size_t ring_count;            /**< records */
	struct held *late;            /**< min-heap: records that came out of order */
	size_t late_count;            /**< records in the heap */
	size_t late_cap;              /**< heap slots */
	uint64_t max_seen_ns;         /**< latest time read */
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
	struct th_trace_name name_scratch;    /**< where name records land in the merge pass */
	char *buf;                         /**< output buffer */
	size_t buf_used;                   /**< bytes in buf */
	FILE *out;                         /**< output */
	int write_errno;                   /**< errno of the first write that came up short, or 0 */
	bool is_header;                    /**< writing the CSV header: keys, no values */
};

void
th_export_config_defaults(struct th_export_config *c)
{
	memset(c, 0, sizeof(*c));
	c->format = TH_EXPORT_FORMAT_TEXT;
	c->direction = -1;
	c->is_names_on = true;
	/* An open is written when it closes, session.idle (30 s) after its last operation, so a
	 * stream is out of open-time order by up to an open's length plus session.idle: a
	 * minute covers opens of up to ~30 s at the default idle; longer ones are written late
	 * and counted. */
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

/* Eight lower-case hex digits. */
static inline char *
put_fixed_hex32(char *p, uint32_t v)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 7; i >= 0; i--)
		*p++ = digits[(v >> (4 * i)) & 15];
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
t_of(const struct held *h)
{
	return h->t;
}

static inline size_t
grown(size_t cap, size_t first, size_t max)
{
	cap = cap != 0 ? cap * 2 : first;
	return cap < max ? cap : max;
}

static inline struct held *
ring_at(const struct stream *s, size_t i)
{
	size_t j = s->ring_head + i;

	return &s->ring[j < s->ring_cap ? j : j - s->ring_cap];
}

/* Room for one more record in the ring, which grows up to @p max slots. */
static int
ring_reserve(struct stream *s, size_t max)
{
	struct held *r;
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
late_push(struct stream *s, const struct held *r, size_t max)
{
	size_t i;

	if (s->late_count == s->late_cap) {
		size_t cap = grown(s->late_cap, 64, max);
		struct held *l = realloc(s->late, cap * sizeof(*l));

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
	struct held last = s->late[--s->late_count];
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

/*
 * A record a little out of order moves into its place in the ring, the few
 * after it stepping up a slot, instead of joining the heap, which copies a
 * record at every level in and out. RPC records are written as replies come,
 * so 38% of them are earlier than the one before; in a dense stream (1 M
 * RPCs a minute, bench_export -R) the heap grew to most of the window and
 * export ran at 1.6 M records/s, 2.3 M with this; further back than
 * INSERT_MAX (opens that stayed open, long calls) it is the heap's, found
 * with one look.
 */
#define INSERT_MAX 64

/* Move the record just read (at the ring's end) into place. @return false: too far back. */
static bool
ring_insert(struct stream *s)
{
	size_t n = s->ring_count, i = n, lim = n > INSERT_MAX ? n - INSERT_MAX : 0;
	struct held r;

	if (lim > 0 && t_of(ring_at(s, lim)) > t_of(ring_at(s, n)))
		return false;
	r = *ring_at(s, n);
	while (i > lim && t_of(ring_at(s, i - 1)) > r.t)
		i--;
	for (size_t j = n; j > i; j--)
		*ring_at(s, j) = *ring_at(s, j - 1);
	*ring_at(s, i) = r;
	s->ring_count++;
	return true;
}

/* The stream's earliest buffered record, or NULL. */
static const struct held *
head(const struct stream *s)
{
	const struct held *a = s->ring_count > 0 ? ring_at(s, 0) : NULL;
	const struct held *b = s->late_count > 0 ? &s->late[0] : NULL;

	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	return t_of(b) < t_of(a) ? b : a;
}

static void
drop_head(struct stream *s)
{
	const struct held *h = head(s);

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
	uint64_t n = bytes / (count != 0 ? count : 1) / (2 * sizeof(struct held));

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
		const struct held *h = head(s);
		struct held *slot;
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
		/* An open or an RPC lands in the slot; the one not exported is read over. */
		rc = s->src->next(s->src->ctx, &type, &slot->open, &x->name_scratch, &slot->rpc);
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
		if (type != (x->c->is_rpcs ? TH_TRACE_RPC : TH_TRACE_OPEN))
			continue;
		slot->t = x->c->is_rpcs ? th_trace_rpc_time(&slot->rpc) : slot->open.open_ns;
		x->ctr->records_in++;
		got++;
		if (x->c->progress != NULL && (x->ctr->records_in & 0xffff) == 0)
			x->c->progress(x->c->progress_ctx, x->ctr->records_in);
		/* Before the record moves into its place (the slot then holds another). */
		if (t_of(slot) > s->max_seen_ns)
			s->max_seen_ns = t_of(slot);
		else if (s->max_seen_ns - t_of(slot) > x->ctr->max_disorder_ns)
			x->ctr->max_disorder_ns = s->max_seen_ns - t_of(slot);
		if (s->ring_count == 0 || t_of(slot) >= t_of(ring_at(s, s->ring_count - 1))) {
			s->ring_count++;
		} else if (!ring_insert(s) && late_push(s, slot, x->held_max) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* What filters, pseudonyms and the join see of a record, open or RPC. */
struct view {
	const struct th_addr *client;
	const struct th_addr *server;
	const uint8_t *fh;
	unsigned int fh_len;
	uint32_t uid;
	uint32_t gid;
	bool has_ids; /* uid and gid are the record's: an open, or an RPC whose call was seen */
};

static inline struct view
view_from(const struct th_addr *client, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len, uint32_t uid, uint32_t gid, bool has_ids)
{
	return (struct view){client, server, fh,
		fh_len < TH_TRACE_FH_MAX ? fh_len : TH_TRACE_FH_MAX, uid, gid, has_ids};
}

/*
 * The two record layouts keep the same six fields under the same names. The
 * credential is in the call: an RPC seen only by its reply has none (its
 * zeros are not root's).
 */
static inline void
view_of(const struct exporter *x, const struct held *h, struct view *v)
{
	const struct th_trace_rpc *r = &h->rpc;
	const struct th_trace_open *o = &h->open;

	*v = x->c->is_rpcs
		     ? view_from(&r->client, &r->server, r->fh, r->fh_len, r->uid, r->gid,
			       r->call_ns != 0)
		     : view_from(&o->client, &o->server, o->fh, o->fh_len, o->uid, o->gid, true);
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

		for (size_t off = 0; off < sizeof(struct held); off += 64)
			__builtin_prefetch(r + off);
		__builtin_prefetch(r + sizeof(struct held) - 1);
	}
	/* The tables: sets and buckets eight records ahead, their entries four calls later
	 * (hashed once, kept in x->ahead meanwhile). */
	if ((x->c->anon != NULL || x->has_name_lookups) && s->ring_count > PREFETCH_AHEAD) {
		struct lookahead *l = &x->ahead[x->ahead_next];
		struct view v;

		view_of(x, ring_at(s, PREFETCH_AHEAD), &v);
		if (x->ahead_count == PREFETCH_LAG)
			prefetch_tables(x, l, true);
		else
			x->ahead_count++;
		if (x->c->anon != NULL)
			th_export__anon_hashes(v.client, v.server, v.fh, v.fh_len, l->anon);
		if (x->has_name_lookups)
			l->name = th_export__names_hash(v.server, v.fh, v.fh_len);
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
	errno = 0;
	if (x->buf_used > 0 && fwrite(x->buf, 1, x->buf_used, x->out) != x->buf_used &&
		x->write_errno == 0)
		x->write_errno = errno != 0 ? errno : EIO; /* ENOSPC, EPIPE, EBADF: say which */
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

/*
 * A host field: pseudonym, name from the table, or the number. A name is
 * whatever a hosts file or DNS said: in text, whose fields are split at
 * '|' and spaces, it is escaped as the names file escapes a name (at most
 * 4 * 255 bytes); CSV and JSON quote it themselves.
 */
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

		if (x->c->format == TH_EXPORT_FORMAT_TEXT)
			return p + th_nfs_name_text(name, n, p, TH_NFS_NAME_TEXT(n));
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

/* Seconds and microseconds, as the capture's text outputs write times. */
static char *
put_time6(char *p, uint64_t ns)
{
	p = put_u64(p, ns / 1000000000u);
	*p++ = '.';
	return put_fixed(p, ns % 1000000000u / 1000u, 6);
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

/* A record's fields as written: after pseudonyms, if any. */
struct fields {
	const char *fh;   /**< handle, hex (or its pseudonym's) */
	const char *path; /**< path (or its pseudonym), path_len bytes */
	size_t path_len;
	uint32_t mode; /**< the file's st_mode from its name record, 0 unknown */
	uint32_t uid;
	uint32_t gid;
	bool has_ids;            /**< uid and gid are there (not for an RPC without its call) */
	const uint8_t *fh_bytes; /**< the handle (or its pseudonym), for the RPC log's fh= */
	unsigned int fh_len;     /**< 0: the record has no handle */
};

/*
 * CSV and JSON Lines from one list of fields: a CSV row, or a JSON object
 * with those keys; absent values are empty (CSV) or null (JSON). The CSV
 * header is the same list with keys in place of values (is_header), so it
 * cannot disagree with the rows.
 */
struct row {
	struct exporter *x;
	char *p;
	bool is_json;
	bool is_first;
	bool is_header; /**< keys in place of values */
};

/* Start a field. @return false: the header is being written, and the value is not. */
static inline bool
row_key(struct row *w, const char *key)
{
	if (w->is_header) {
		if (!w->is_first)
			*w->p++ = ',';
		w->p = put_str(w->p, key);
	} else if (w->is_json) {
		*w->p++ = w->is_first ? '{' : ',';
		*w->p++ = '"';
		w->p = put_str(w->p, key);
		*w->p++ = '"';
		*w->p++ = ':';
	} else if (!w->is_first) {
		*w->p++ = ',';
	}
	w->is_first = false;
	return !w->is_header;
}

static inline void
row_null(struct row *w, const char *key)
{
	if (row_key(w, key) && w->is_json)
		w->p = put_str(w->p, "null");
}

static inline void
row_u64(struct row *w, const char *key, uint64_t v)
{
	if (row_key(w, key))
		w->p = put_u64(w->p, v);
}

static inline void
row_time(struct row *w, const char *key, uint64_t ns)
{
	if (ns == 0)
		row_null(w, key);
	else if (row_key(w, key))
		w->p = put_time9(w->p, ns);
}

static inline void
row_bool(struct row *w, const char *key, bool v)
{
	if (row_key(w, key))
		w->p = put_str(w->p, w->is_json ? (v ? "true" : "false") : (v ? "1" : "0"));
}

/* A value that needs no quoting in CSV (a word, a hex string): quoted in JSON. */
static inline void
row_word(struct row *w, const char *key, const char *s)
{
	if (!row_key(w, key))
		return;
	if (w->is_json)
		*w->p++ = '"';
	w->p = put_str(w->p, s);
	if (w->is_json)
		*w->p++ = '"';
}

/* Bytes that may need quoting or escaping; @p s is NUL-terminated at @p n. */
static inline void
row_text(struct row *w, const char *key, const char *s, size_t n)
{
	if (row_key(w, key))
		w->p = w->is_json ? put_json_str(w->p, s, n) : put_csv(w->p, s, n);
}

static inline void
row_host(struct row *w, const char *key, const struct th_addr *a)
{
	char host[300], *e;

	if (w->is_header) /* no pseudonym made for the header's sake */
		return row_text(w, key, "", 0);
	e = put_host(w->x, host, a, false);
	*e = '\0';
	row_text(w, key, host, (size_t)(e - host));
}

/* A path, null in JSON when there is none. */
static inline void
row_path(struct row *w, const struct fields *f)
{
	if (f->path_len == 0 && w->is_json)
		return row_null(w, "path");
	row_text(w, "path", f->path, f->path_len);
}

/* The file's mode as ls -l writes it, null in JSON when no name record had it. */
static inline void
row_mode(struct row *w, const struct fields *f)
{
	char text[TH_NFS_MODE_TEXT];

	if (f->mode == 0) {
		if (w->is_json)
			return row_null(w, "mode");
		return row_text(w, "mode", "", 0);
	}
	th_nfs_mode_text(f->mode, text);
	row_word(w, "mode", text);
}

static inline char *
row_end(struct row *w)
{
	if (w->is_json)
		*w->p++ = '}';
	*w->p++ = '\n';
	return w->p;
}

static char *
put_open(struct exporter *x, char *p, const struct th_trace_open *r, const struct fields *f)
{
	uint64_t cmd_ns = r->close_ns > r->open_ns ? r->close_ns - r->open_ns : 0;
	struct row w = {x, p, x->c->format == TH_EXPORT_FORMAT_JSON, true, x->is_header};

	if (x->c->format == TH_EXPORT_FORMAT_TEXT) {
		p = put_time6(p, r->open_ns);
		p = put_str(p, " | ");
		p = put_u64(p, cmd_ns / 1000u);
		p = put_str(p, r->dir == 1 ? " | write | " : " | read | ");
		p = put_host(x, p, &r->server, true);
		*p++ = ':';
		p = put_str(p, f->fh);
		p = put_str(p, " | ");
		p = put_host(x, p, &r->client, false);
		*p++ = '.';
		p = put_u64(p, f->uid);
		p = put_str(p, " | ");
		p = put_u64(p, r->transferred);
		p = put_str(p, " | ");
		p = put_u64(p, r->size);
		*p++ = '\n';
		return p;
	}
	row_time(&w, "open_time", r->open_ns);
	row_time(&w, "close_time", r->close_ns);
	row_u64(&w, "command_us", cmd_ns / 1000u);
	row_word(&w, "direction", r->dir == 1 ? "write" : "read");
	row_host(&w, "server", &r->server);
	row_word(&w, "handle", f->fh);
	row_host(&w, "client", &r->client);
	row_u64(&w, "uid", f->uid);
	row_u64(&w, "gid", f->gid);
	row_u64(&w, "nfs_version", r->vers);
	row_bool(&w, "cache_hit", r->flags & TH_TRACE_OPEN_CACHE_HIT);
	row_bool(&w, "directory", r->flags & TH_TRACE_OPEN_DIRECTORY);
	row_u64(&w, "ops", r->ops);
	row_u64(&w, "transferred", r->transferred);
	row_u64(&w, "seq_bytes", r->seq_bytes);
	row_u64(&w, "size", r->size);
	row_path(&w, f);
	row_mode(&w, f);
	return row_end(&w);
}

/* "host:port", an IPv6 number in brackets. */
static char *
put_endpoint(struct exporter *x, char *p, const struct th_addr *a, uint16_t port)
{
	p = put_host(x, p, a, true);
	*p++ = ':';
	return put_u64(p, port);
}

/* Microseconds with three decimals, signed (a reply stamped before its call: a clock step). */
static char *
put_latency(char *p, uint64_t from, uint64_t to)
{
	uint64_t d = to >= from ? to - from : from - to;

	if (to < from)
		*p++ = '-';
	p = put_u64(p, d / 1000u);
	*p++ = '.';
	return put_fixed(p, d % 1000u, 3);
}

/*
 * The RPC's program, procedure and status as the capture's RPC log names
 * them (README, 'Output: RPC log'): names where known, else numbers.
 */
struct rpc_names {
	const char *prog; /* NULL: unknown, write the number */
	const char *proc; /* NULL: unknown, write the number */
	const char *status;
	char status_buf[16];
};

static void
rpc_names(const struct th_trace_rpc *r, struct rpc_names *n)
{
	n->prog = th_nfs_prog_name(r->prog);
	n->proc = th_nfs_proc_name(r->prog, r->vers, r->proc);
	n->status = th_op_rpc_status_name(r, n->status_buf, sizeof(n->status_buf));
}

/* A name where there is one, else the number. */
static inline void
row_name(struct row *w, const char *key, const char *name, uint32_t number)
{
	if (name != NULL)
		row_word(w, key, name);
	else
		row_u64(w, key, number);
}

/* off= count= as the capture's RPC log has them: a call of a procedure that carries them. */
static inline bool
rpc_has_offset_count(const struct th_trace_rpc *r)
{
	return r->call_ns != 0 && th_op_has_offset_count(r->prog, r->vers, r->proc);
}

/* How a record's done field reads, as in the capture's log. */
enum rpc_done {
	RPC_DONE_NONE,  /* left out */
	RPC_DONE_EXACT, /* done= */
	RPC_DONE_MIN,   /* done_min=: a listing's entries before the capture's cut */
};

/*
 * done=: the same, answered without an error, the reply seen to its end; a listing's
 * entry count, done_min= when the capture kept only part of it (as in the log).
 */
static inline enum rpc_done
rpc_done(const struct th_trace_rpc *r)
{
	bool is_partial = r->flags & TH_TRACE_RPC_DONE_PARTIAL;

	if (r->call_ns == 0 || r->reply_ns == 0 ||
		(r->flags & (TH_TRACE_RPC_RPC_ERROR | TH_TRACE_RPC_STATUS_UNSEEN)) ||
		r->status != 0)
		return RPC_DONE_NONE;
	if (th_op_has_done(r->prog, r->vers, r->proc))
		return is_partial ? RPC_DONE_NONE : RPC_DONE_EXACT;
	if (th_op_is_listing(r->prog, r->vers, r->proc))
		return is_partial ? RPC_DONE_MIN : RPC_DONE_EXACT;
	return RPC_DONE_NONE;
}

static char *
put_rpc_text(struct exporter *x, char *p, const struct th_trace_rpc *r, const struct fields *f,
	const struct rpc_names *n)
{
	bool is_call = r->call_ns != 0, is_reply = r->reply_ns != 0;

	p = put_time9(p, is_call ? r->call_ns : r->reply_ns);
	p = put_str(p, !is_call ? " REPLY " : !is_reply ? " CALL " : " RPC ");
	p = put_str(p, r->flags & TH_TRACE_RPC_TCP ? "tcp " : "udp ");
	p = put_endpoint(x, p, &r->client, r->client_port);
	*p++ = ' ';
	p = put_endpoint(x, p, &r->server, r->server_port);
	p = put_str(p, " 0x");
	p = put_fixed_hex32(p, r->xid);
	*p++ = ' ';
	if (!is_call)
		p = put_str(p, "? ?"); /* the program is in the call, which was not seen */
	else
		p = th_nfs_label(p, r->prog, r->vers, r->proc);
	*p++ = ' ';
	p = put_str(p, n->status);
	*p++ = ' ';
	if (is_call && is_reply)
		p = put_latency(p, r->call_ns, r->reply_ns);
	else
		*p++ = '-';
	p = put_str(p, " -"); /* LAT_LAST: the call's last segment is not recorded */
	/* The credential is the call's: a REPLY line has none, as in the capture's log. */
	if (f->has_ids) {
		p = put_str(p, " uid=");
		p = put_u64(p, f->uid);
		p = put_str(p, " gid=");
		p = put_u64(p, f->gid);
	}
	if (f->fh_len > 0) {
		p = put_str(p, " fh=");
		p = put_fixed_hex32(p, th_nfs_crc32(f->fh_bytes, f->fh_len));
	}
	/* As the capture's RPC log has them (a REPLY line has no procedure). */
	if (rpc_has_offset_count(r)) {
		p = put_str(p, " off=");
		p = put_u64(p, r->offset);
		p = put_str(p, " count=");
		p = put_u64(p, r->count);
	}
	switch (rpc_done(r)) {
	case RPC_DONE_EXACT:
		p = put_str(p, " done=");
		p = put_u64(p, r->done);
		break;
	case RPC_DONE_MIN:
		p = put_str(p, " done_min=");
		p = put_u64(p, r->done);
		break;
	default:
		break;
	}
	if (r->flags & TH_TRACE_RPC_HAS_SIZE) {
		p = put_str(p, " size=");
		p = put_u64(p, r->size);
	}
	*p++ = '\n';
	return p;
}

static char *
put_rpc(struct exporter *x, char *p, const struct th_trace_rpc *r, const struct fields *f)
{
	struct row w = {x, p, x->c->format == TH_EXPORT_FORMAT_JSON, true, x->is_header};
	char xid[11] = "0x";
	struct rpc_names n;
	enum rpc_done done;

	rpc_names(r, &n);
	if (x->c->format == TH_EXPORT_FORMAT_TEXT)
		return put_rpc_text(x, p, r, f, &n);
	row_time(&w, "call_time", r->call_ns);
	row_time(&w, "reply_time", r->reply_ns);
	if (r->call_ns == 0 || r->reply_ns == 0)
		row_null(&w, "latency_us");
	else if (row_key(&w, "latency_us"))
		w.p = put_latency(w.p, r->call_ns, r->reply_ns);
	row_word(&w, "proto", r->flags & TH_TRACE_RPC_TCP ? "tcp" : "udp");
	row_host(&w, "client", &r->client);
	row_u64(&w, "client_port", r->client_port);
	row_host(&w, "server", &r->server);
	row_u64(&w, "server_port", r->server_port);
	*put_fixed_hex32(xid + 2, r->xid) = '\0';
	row_word(&w, "xid", xid);
	/* Program and procedure are the call's. */
	if (r->call_ns != 0) {
		row_name(&w, "program", n.prog, r->prog);
		row_u64(&w, "version", r->vers);
		row_name(&w, "procedure", n.proc, r->proc);
	} else {
		row_null(&w, "program");
		row_null(&w, "version");
		row_null(&w, "procedure");
	}
	row_word(&w, "status", n.status);
	if (f->has_ids) {
		row_u64(&w, "uid", f->uid);
		row_u64(&w, "gid", f->gid);
	} else {
		row_null(&w, "uid");
		row_null(&w, "gid");
	}
	if (f->fh_len > 0)
		row_word(&w, "handle", f->fh);
	else
		row_null(&w, "handle");
	/* Where the text line (and the capture's log) has them, as put_rpc_text() decides. */
	if (rpc_has_offset_count(r)) {
		row_u64(&w, "offset", r->offset);
		row_u64(&w, "count", r->count);
	} else {
		row_null(&w, "offset");
		row_null(&w, "count");
	}
	done = rpc_done(r);
	if (done == RPC_DONE_EXACT)
		row_u64(&w, "done", r->done);
	else
		row_null(&w, "done");
	if (done == RPC_DONE_MIN)
		row_u64(&w, "done_min", r->done);
	else
		row_null(&w, "done_min");
	if (r->flags & TH_TRACE_RPC_HAS_SIZE)
		row_u64(&w, "size", r->size);
	else
		row_null(&w, "size");
	row_path(&w, f);
	row_mode(&w, f);
	return row_end(&w);
}

/* An RPC that passed the filters, into the response-time table (timed when it has both ends). */
static void
time_rpc(struct exporter *x, const struct th_trace_rpc *r)
{
	struct th_srt_proc p = {r->prog, r->vers, r->proc};

	if (r->call_ns != 0 && r->reply_ns != 0)
		th_srt_record(x->c->srt, &p, r->call_ns, r->reply_ns);
	x->ctr->records_out++;
}

/* Whether --file value @p v, "fh=" and 8 hex digits, is the CRC-32 of handle @p fh. */
static bool
is_fh_crc(const char *v, const uint8_t *fh, size_t fh_len)
{
	char crc[9];

	*put_fixed_hex32(crc, th_nfs_crc32(fh, fh_len)) = '\0';
	return strcasecmp(v + 3, crc) == 0;
}

/*
 * --file: the handle (hex, any case) is one of the values, or its path holds
 * one, or a value "fh=CRC" is its CRC-32 as the RPC text writes it: of the
 * handle, or with pseudonyms of the handle's pseudonym, as the output shows.
 */
static bool
is_file(const struct th_export_config *c, const char *fh_hex, const uint8_t *fh, size_t fh_len,
	const char *path, size_t path_len)
{
	uint8_t pfh[TH_EXPORT_ANON_FH_SIZE];

	for (unsigned int i = 0; i < c->files_count; i++) {
		const char *v = c->files[i];

		if (strncasecmp(v, "fh=", 3) == 0) {
			if (fh_len == 0)
				continue;
			if (is_fh_crc(v, fh, fh_len))
				return true;
			if (c->anon != NULL) {
				th_export_anon_fh(c->anon, fh, fh_len, pfh);
				if (is_fh_crc(v, pfh, sizeof(pfh)))
					return true;
			}
			continue;
		}
		if (strcasecmp(v, fh_hex) == 0)
			return true;
		if (path_len > 0 && v[0] != '\0' && strstr(path, v) != NULL)
			return true;
	}
	return false;
}

/* @return whether the record passed the filters (written, or into the table). */
static bool
write_record(struct exporter *x, const struct held *h)
{
	const struct th_export_config *c = x->c;
	char fh_hex[2 * TH_TRACE_FH_MAX + 1], path[PATH_MAX_SIZE], apath[PATH_MAX_SIZE * 2];
	char *p, *fh_end;
	uint8_t pfh[TH_EXPORT_ANON_FH_SIZE];
	size_t apath_len = 0;
	struct fields f;
	struct view v;

	view_of(x, h, &v);
	path[0] = apath[0] = fh_hex[0] = '\0';
	f.fh = fh_hex;
	f.path = path;
	f.path_len = 0;
	f.mode = 0;
	f.uid = v.uid;
	f.gid = v.gid;
	f.has_ids = v.has_ids;
	f.fh_bytes = v.fh;
	f.fh_len = v.fh_len;
	/* Filters see the original values. */
	if (t_of(h) < c->from_ns || (c->to_ns != 0 && t_of(h) >= c->to_ns) ||
		(c->direction >= 0 && !c->is_rpcs && h->open.dir != c->direction) ||
		!any_net(c->servers, c->servers_count, v.server) ||
		!any_net(c->clients, c->clients_count, v.client))
		goto filtered;
	if (c->uids_count > 0) {
		unsigned int i;

		/* A record without a uid is nobody's, not root's. */
		for (i = 0; v.has_ids && i < c->uids_count && c->uids[i] != v.uid; i++)
			;
		if (!v.has_ids || i == c->uids_count)
			goto filtered;
	}
	/* The handle in hex: a column, or what --file compares (a table needs it for that). */
	if ((c->anon == NULL && c->srt == NULL) || c->files_count > 0) {
		fh_end = put_hex(fh_hex, v.fh, v.fh_len);
		*fh_end = '\0';
	}
	/* With pseudonyms, the path's pseudonym is made along with the path (only CSV and JSON
	 * have a path column); --file looks at the original path. */
	if (x->names != NULL && c->anon != NULL && c->format != TH_EXPORT_FORMAT_TEXT)
		f.path_len = th_export__names_path_anon(x->names, c->anon, v.server, v.fh, v.fh_len,
			t_of(h), path, sizeof(path), apath, sizeof(apath), &apath_len, &f.mode);
	else if (x->names != NULL)
		f.path_len = th_export_names_path(
			x->names, v.server, v.fh, v.fh_len, t_of(h), path, sizeof(path), &f.mode);
	if (c->files_count > 0 && !is_file(c, fh_hex, v.fh, v.fh_len, path, f.path_len))
		goto filtered;
	/* --file needed the join; --no-names still leaves the path and mode columns empty. */
	if (!c->is_names_on) {
		f.path_len = apath_len = 0;
		f.mode = 0;
	}
	if (c->srt != NULL) {
		time_rpc(x, &h->rpc);
		return true;
	}
	/* Pseudonyms for the values the record has: no handle (PORTMAP, MOUNT MNT, a reply
	 * alone) or no credential stays absent, not the pseudonym of nothing. */
	if (c->anon != NULL) {
		if (v.fh_len > 0) {
			th_export_anon_fh(c->anon, v.fh, v.fh_len, pfh);
			fh_end = put_hex(fh_hex, pfh, sizeof(pfh));
			*fh_end = '\0';
			f.fh_bytes = pfh;
			f.fh_len = sizeof(pfh);
		}
		if (v.has_ids) {
			f.uid = th_export_anon_uid(c->anon, v.uid);
			f.gid = th_export_anon_gid(c->anon, v.gid);
		}
		f.path_len = apath_len;
		f.path = apath;
	}
	if (x->buf_used + LINE_MAX_SIZE * 4 > OUT_BUF_SIZE)
		flush_out(x);
	p = x->buf + x->buf_used;
	p = c->is_rpcs ? put_rpc(x, p, &h->rpc, &f) : put_open(x, p, &h->open, &f);
	x->buf_used = (size_t)(p - x->buf);
	x->ctr->records_out++;
	return true;
filtered:
	x->ctr->filtered++;
	return false;
}

/* ---- the name map (is_names) ---- */

/* A name row's fields as written: after pseudonyms, if any. */
struct name_fields {
	struct fields f;  /**< handle, path and mode */
	const char *dir;  /**< directory handle, hex (or its pseudonym's); "": a mount path */
	const char *name; /**< name_len bytes (or its pseudonym), NUL-terminated */
	size_t name_len;
};

/*
 * Text is the capture's names file line (session.names: server, directory,
 * name, handle, valid from, valid to, mode), then the path, escaped as the
 * names file escapes a name ('-' where there is none); CSV and JSON as the
 * other records, times first.
 */
static char *
put_name(struct exporter *x, char *p, const struct th_trace_name *r, const struct name_fields *n)
{
	struct row w = {x, p, x->c->format == TH_EXPORT_FORMAT_JSON, true, x->is_header};
	const struct fields *f = &n->f;
	char mode[TH_NFS_MODE_TEXT];

	if (x->c->format == TH_EXPORT_FORMAT_TEXT) {
		p = put_host(x, p, &r->server, false);
		p = put_str(p, " | ");
		p = put_str(p, n->dir[0] != '\0' ? n->dir : "-");
		p = put_str(p, " | ");
		p += th_nfs_name_text(n->name, n->name_len, p, TH_NFS_NAME_TEXT(n->name_len));
		p = put_str(p, " | ");
		p = put_str(p, f->fh);
		p = put_str(p, " | ");
		p = put_time6(p, r->from_ns);
		p = put_str(p, " | ");
		if (r->to_ns != 0)
			p = put_time6(p, r->to_ns);
		else
			*p++ = '-';
		th_nfs_mode_text(f->mode, mode);
		p = put_str(p, " | ");
		p = put_str(p, mode);
		p = put_str(p, " | ");
		if (f->path_len > 0)
			p += th_nfs_name_text(
				f->path, f->path_len, p, TH_NFS_NAME_TEXT(f->path_len));
		else
			*p++ = '-';
		*p++ = '\n';
		return p;
	}
	row_time(&w, "valid_from", r->from_ns);
	row_time(&w, "valid_to", r->to_ns);
	row_host(&w, "server", &r->server);
	if (n->dir[0] != '\0' || w.is_header)
		row_word(&w, "dir_handle", n->dir);
	else
		row_null(&w, "dir_handle");
	row_text(&w, "name", n->name, n->name_len);
	row_word(&w, "handle", f->fh);
	row_mode(&w, f);
	row_path(&w, f);
	return row_end(&w);
}

/*
 * A binding holds from its start until its end (0: still when the trace
 * ended): it passes --from/--to when that overlaps [from_ns, to_ns). One that
 * ends where it starts held at that instant.
 */
static bool
is_in_window(const struct th_export_config *c, const struct th_trace_name *r)
{
	return (c->to_ns == 0 || r->from_ns < c->to_ns) &&
	       (r->to_ns == 0 || r->to_ns > c->from_ns || r->from_ns >= c->from_ns);
}

/* The @p i-th name by start: filtered, given its path and pseudonyms, and written. */
static void
write_name(struct exporter *x, size_t i)
{
	const struct th_export_config *c = x->c;
	char fh_hex[2 * TH_TRACE_FH_MAX + 1], dir_hex[2 * TH_TRACE_FH_MAX + 1];
	char path[PATH_MAX_SIZE], apath[PATH_MAX_SIZE * 2];
	/* A component of one byte becomes 16 hex digits: at most 8.5 times the name. */
	char aname[17 * (TH_TRACE_NAME_MAX + 1) / 2 + 1];
	uint8_t pfh[TH_EXPORT_ANON_FH_SIZE];
	struct name_fields n = {.f = {.fh = fh_hex, .path = path}, .dir = dir_hex};
	struct th_trace_name *r = &x->name_scratch; /* the names pass is over */
	size_t apath_len = 0;
	char *p;

	th_export__names_listed(x->names, i, r);
	/* The names pass kept only the servers asked for. */
	if (!is_in_window(c, r))
		goto filtered;
	*put_hex(fh_hex, r->fh, r->fh_len) = '\0';
	*put_hex(dir_hex, r->dir_fh, r->dir_fh_len) = '\0';
	path[0] = '\0';
	/* The path, and with pseudonyms its pseudonym, made as for an open; --file looks at
	 * the original path, even where --no-names leaves its column empty. */
	if (c->is_names_on || c->files_count > 0)
		n.f.path_len = th_export__names_listed_path(
			x->names, c->anon, i, path, sizeof(path), apath, sizeof(apath), &apath_len);
	if (c->files_count > 0 && !is_file(c, fh_hex, r->fh, r->fh_len, path, n.f.path_len))
		goto filtered;
	if (!c->is_names_on)
		n.f.path_len = 0;
	n.f.mode = r->mode;
	n.name = r->name;
	n.name_len = r->name_len;
	if (c->anon != NULL) {
		th_export_anon_fh(c->anon, r->fh, r->fh_len, pfh);
		*put_hex(fh_hex, pfh, sizeof(pfh)) = '\0';
		/* A mount path has no directory: none to replace. */
		if (r->dir_fh_len > 0) {
			th_export_anon_fh(c->anon, r->dir_fh, r->dir_fh_len, pfh);
			*put_hex(dir_hex, pfh, sizeof(pfh)) = '\0';
		}
		/* As the join makes a name's pseudonym for a path's component. */
		n.name_len =
			th_export_anon_path(c->anon, r->name, r->name_len, aname, sizeof(aname));
		n.name = aname;
		if (n.f.path_len > 0)
			n.f.path_len = apath_len;
		n.f.path = apath;
	}
	if (x->buf_used + NAME_ROW_MAX > OUT_BUF_SIZE)
		flush_out(x);
	p = put_name(x, x->buf + x->buf_used, r, &n);
	x->buf_used = (size_t)(p - x->buf);
	x->ctr->records_out++;
	return;
filtered:
	x->ctr->filtered++;
}

/* Every name kept, by start, after a CSV header. @return 0 or -ENOMEM. */
static int
list_names(struct exporter *x)
{
	long count = th_export__names_sort(x->names);

	if (count < 0)
		return (int)count;
	if (x->c->format == TH_EXPORT_FORMAT_CSV) {
		static const struct th_trace_name none;
		struct name_fields n = {.f = {.fh = "", .path = ""}, .dir = "", .name = ""};

		x->is_header = true;
		x->buf_used = (size_t)(put_name(x, x->buf, &none, &n) - x->buf);
		x->is_header = false;
	}
	for (long i = 0; i < count && x->write_errno == 0; i++) {
		if (i + 2 * PREFETCH_AHEAD < count)
			th_export__names_listed_prefetch(
				x->names, (size_t)i + 2 * PREFETCH_AHEAD, false);
		if (i + PREFETCH_AHEAD < count)
			th_export__names_listed_prefetch(
				x->names, (size_t)i + PREFETCH_AHEAD, true);
		write_name(x, (size_t)i);
	}
	return 0;
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

		if (src->is_nameless)
			continue;
		while ((rc = src->next(src->ctx, &type, &open, &x->name_scratch, &rpc)) > 0) {
			if (type != TH_TRACE_NAME)
				continue;
			x->ctr->names_in++;
			if (x->c->is_names) {
				const struct th_export_config *c = x->c;

				if (c->progress != NULL && (x->ctr->names_in & 0xffff) == 0)
					c->progress(c->progress_ctx, x->ctr->names_in);
				/* A path never leaves its server: names of the others need not
				 * be kept for a listing of these. */
				if (!any_net(c->servers, c->servers_count,
					    &x->name_scratch.server)) {
					x->ctr->filtered++;
					continue;
				}
			}
			added = th_export_names_add(x->names, &x->name_scratch);
			if (added == -ENOMEM)
				return -ENOMEM;
			if (added == -ENOSPC)
				x->ctr->names_dropped++;
		}
		/* The merge pass has nothing to take from names alone: it stays at its end. A
		 * listing of names has no merge pass. */
		if (src->is_names_only || x->c->is_names) {
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

/*
 * The merge pass: each stream's earliest record, held back for the window,
 * to the writer in time order, after a CSV header. @return 0 or -ENOMEM.
 */
static int
merge(struct exporter *x)
{
	const struct th_export_config *c = x->c;
	uint64_t last_ns = 0;
	int rc;

	if (c->format == TH_EXPORT_FORMAT_CSV && c->srt == NULL) {
		/* The header: a record's fields with their keys for values. */
		static const struct held none;
		struct fields f = {"", "", 0, 0, 0, true, NULL, 0};

		x->is_header = true;
		x->buf_used = (size_t)((c->is_rpcs ? put_rpc(x, x->buf, &none.rpc, &f)
						   : put_open(x, x->buf, &none.open, &f)) -
				       x->buf);
		x->is_header = false;
	}
	for (unsigned int i = 0; i < x->count; i++) {
		rc = fill(x, &x->streams[i]);
		if (rc < 0)
			return rc;
		if (head(&x->streams[i]) != NULL)
			x->heap[x->heap_count++] = i;
	}
	for (unsigned int i = x->heap_count; i-- > 0;)
		heap_down(x, i);
	/* A failed write (a full disk) ends the run: the rest could not be written either. */
	while (x->heap_count > 0 && x->write_errno == 0) {
		struct stream *s = &x->streams[x->heap[0]];
		const struct held *h = head(s);

		/* Late is out of order in the output: a record the filters drop is neither
		 * late nor what a later one is late after. */
		if (write_record(x, h)) {
			if (t_of(h) < last_ns)
				x->ctr->out_of_order++;
			else
				last_ns = t_of(h);
		}
		drop_head(s);
		rc = fill(x, s);
		if (rc < 0)
			return rc;
		prefetch_ahead(x, s);
		if (head(s) == NULL)
			x->heap[0] = x->heap[--x->heap_count];
		if (x->heap_count > 0)
			heap_down(x, 0);
	}
	return 0;
}

bool
th_export_needs_names(const struct th_export_config *c)
{
	return (c->is_names_on && c->format != TH_EXPORT_FORMAT_TEXT && c->srt == NULL) ||
	       c->files_count > 0 || c->is_names;
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
	if (th_export_needs_names(c)) {
		x.names = c->is_names ? th_export__names_create_listing(c->names_bytes)
				      : th_export_names_create(c->names_bytes);
		if (x.names == NULL) {
			rc = -ENOMEM;
			goto free_all;
		}
		rc = names_pass(&x, err);
		if (rc < 0)
			goto free_all;
		x.has_name_lookups = c->format != TH_EXPORT_FORMAT_TEXT;
	}
	rc = c->is_names ? list_names(&x) : merge(&x);
	if (rc < 0)
		goto free_all;
	if (c->is_names)
		ctr->records_in = ctr->names_in;
	flush_out(&x);
	errno = 0;
	if (fflush(out) != 0 && x.write_errno == 0)
		x.write_errno = errno != 0 ? errno : EIO;
	if (c->progress != NULL)
		c->progress(c->progress_ctx, ctr->records_in);
	rc = -x.write_errno;
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
