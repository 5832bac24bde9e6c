/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Open/close inference (seed 000 §3) with the corrections modern clients
 * need. The rules, in the order an operation meets them:
 *
 * READ/WRITE on (file, client, uid): joins that user's open in progress in
 * the same direction, unless the open has been idle for idle_ns (the op
 * starts a new one), or the op is at offset 0 and the open already covered
 * offset 0 (the file is being read or written from its start again: a new
 * open). Offset 0 alone is not enough, because parallel READs (read-ahead)
 * come back out of order and a partially cached file is read mid-file first.
 * COMMIT joins the write open; a SETATTR that sets the size (truncate) joins
 * it when no data moved and no truncate or touch came yet, otherwise starts a
 * new write open (an editor's save, cp of an empty file again); CREATE starts
 * a write open on the new handle that the user's WRITEs then join (so `touch`
 * is a write open of 0 bytes).
 *
 * GETATTR (and ACCESS, is_access_open) on a regular file is a cache read
 * only when all of these hold:
 * - the client read or wrote the file within cache_window_ns (its history,
 *   kept per (file, client) after the open closes, or its open in progress);
 * - if the client's latest activity was a write, at least write_settle_ns
 *   passed since (a client revalidates attributes right after it writes);
 * - no READ by the same user follows within confirm_ns: close-to-open makes
 *   a Linux client GETATTR before every open, so a GETATTR followed by READs
 *   is the start of an uncached or partial read, and those READs' open
 *   begins at the GETATTR. Cache reads are therefore decided lazily, by
 *   th_sess_tick() once confirm_ns has passed. An open revalidates once, so
 *   a second GETATTR is the next open, except one right after the open's
 *   ACCESS that READs follow (libnfs: LOOKUP, ACCESS, GETATTR, READ);
 * - it is not a listing phantom: a GETATTR that falls in a window from a
 *   client's READDIR (or a burst of lookup_burst LOOKUPs, each within
 *   lookup_burst_ns of the previous one) to listing_ns after it, or after
 *   the last GETATTR in the window (the lstats follow one another), is
 *   what `ls -l` sends for each entry, unless an ACCESS from the user (open
 *   evidence: stat and ls do not check access) came with it.
 * A GETATTR with no history (`stat`, the first open of a file) is ignored;
 * READs that follow it start an open by themselves.
 *
 * Timing: ops arrive in about reply order; each table keeps the latest time
 * seen. An open closes at its last op's reply; th_sess_tick(now) closes the
 * opens with now >= last + idle_ns (an op arriving at exactly last + idle_ns
 * also starts a new open), decides pending GETATTRs with now >= reply +
 * confirm_ns, and forgets histories with now >= last + cache_window_ns. Each
 * op ticks to its call's time before it is taken, so that what it finds
 * depends on the ops before it alone, not on when the caller's ticks fell.
 */

#include "th_session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session_private.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define DAY_NS (86400 * SEC)

void
th_sess_config_defaults(struct th_sess_config *c)
{
	memset(c, 0, sizeof(*c));
	/* 1 M files and 1 M sessions: ~200 MB per table; size for the load. */
	c->files = 1u << 20;
	c->sessions = 1u << 20;
	/* A user reading a file rarely pauses 30 s between two reads of one open; a longer
	 * timeout merges separate opens of the same file. */
	c->idle_ns = 30 * SEC;
	/* The seed's "past few hours": a client's buffer cache keeps a file about that long. */
	c->cache_window_ns = 3 * 3600 * SEC;
	c->detail = TH_SESS_OPENS;
	c->is_names_on = true;
	c->clients = 1u << 16;
	c->names = 1u << 16;
	/* A close-to-open GETATTR is followed by its first READ within a round trip or two
	 * (ms); 500 ms leaves margin for a slow server and still decides quickly. */
	c->confirm_ns = 500 * MS;
	/* ls -l stats its entries right after the listing and one after another, a reply
	 * apart: each READDIR page, LOOKUP of the burst and GETATTR in the window extends
	 * it by as long as the LOOKUPs of a burst may be apart. A fixed second after the
	 * listing took the next command's opens, by that user or another, for lstats
	 * (nordirplus: 49 of 1282 cache reads of the users workload, seed 1). */
	c->listing_ns = 50 * MS;
	c->lookup_burst_ns = 50 * MS;
	c->lookup_burst = 4;
	/* Off: Linux takes the attributes that its WRITE, COMMIT and SETATTR replies carry
	 * (nfs_writeback_update_inode(), wcc data) and sends no GETATTR after its own write,
	 * so a GETATTR soon after one is the next open's close-to-open check (touch, then
	 * cat). Clients that revalidate after writing want a second or two here. */
	c->write_settle_ns = 0;
	c->is_access_open = true;
	c->core_index = 0;
	c->cores = 1;
	/* ls -l stats its entries back to back: one reply and a few tens of µs apart. Two
	 * GETATTRs in a row also come from cp (source, then target), so a burst is three. */
	c->getattr_burst_ns = 5 * MS;
	c->getattr_burst = 3;
	c->is_touch_open = true;
	c->is_access_mirror = true;
}

size_t
th_sess_session_size(void)
{
	/* The entry and its hash bucket. */
	return sizeof(struct sess) + sizeof(uint32_t);
}

size_t
th_sess_file_size(void)
{
	return sizeof(struct file) + sizeof(uint32_t);
}

size_t
th_sess_memory(const struct th_sess_table *t)
{
	return t->memory;
}

const struct th_sess_counters *
th_sess_counters(const struct th_sess_table *t)
{
	return &t->ctr;
}

/* ---- lists of sessions, linked by index ---- */

static void
list_push(struct sess *a, struct list *l, uint32_t i)
{
	a[i].prev = NIL;
	a[i].next = l->head;
	if (l->head != NIL)
		a[l->head].prev = i;
	else
		l->tail = i;
	l->head = i;
}

static void
list_del(struct sess *a, struct list *l, uint32_t i)
{
	if (a[i].prev != NIL)
		a[a[i].prev].next = a[i].next;
	else
		l->head = a[i].next;
	if (a[i].next != NIL)
		a[a[i].next].prev = a[i].prev;
	else
		l->tail = a[i].prev;
}

static struct list *
list_of(struct th_sess_table *t, const struct sess *s)
{
	switch (s->kind) {
	case SK_PENDING:
		return &t->pending;
	case SK_HIST:
		return &t->hist;
	default:
		return &t->active;
	}
}

/* The same list code for files and clients, which have prev/next too. */
#define LIST_PUSH(arr, l, i)                                                                       \
	do {                                                                                       \
		(arr)[i].prev = NIL;                                                               \
		(arr)[i].next = (l)->head;                                                         \
		if ((l)->head != NIL)                                                              \
			(arr)[(l)->head].prev = (i);                                               \
		else                                                                               \
			(l)->tail = (i);                                                           \
		(l)->head = (i);                                                                   \
	} while (0)
#define LIST_DEL(arr, l, i)                                                                        \
	do {                                                                                       \
		if ((arr)[i].prev != NIL)                                                          \
			(arr)[(arr)[i].prev].next = (arr)[i].next;                                 \
		else                                                                               \
			(l)->head = (arr)[i].next;                                                 \
		if ((arr)[i].next != NIL)                                                          \
			(arr)[(arr)[i].next].prev = (arr)[i].prev;                                 \
		else                                                                               \
			(l)->tail = (arr)[i].prev;                                                 \
	} while (0)

static inline uint32_t
fastrange(uint32_t h, uint32_t n)
{
	return (uint32_t)(((uint64_t)h * n) >> 32);
}

/* ---- create / free ---- */

struct th_sess_table *
th_sess_create(const struct th_sess_config *c, th_sess_record_cb record_cb, th_sess_name_cb name_cb,
	void *ctx)
{
	struct th_sess_table *t;

	/* Indexes are 32-bit with NIL reserved; 2^31 entries is far past any memory here. */
	if (c == NULL || record_cb == NULL || c->files == 0 || c->sessions == 0 ||
		c->clients == 0 || c->files >= (1u << 31) || c->sessions >= (1u << 31) ||
		c->clients >= (1u << 31) || c->names >= (1u << 31) || c->idle_ns == 0 ||
		c->cores == 0 || c->core_index >= c->cores ||
		(c->detail != TH_SESS_OPENS && c->detail != TH_SESS_OPENS_DIRS)) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto fail;
	t->cfg = *c;
	t->record_cb = record_cb;
	t->name_cb = name_cb;
	t->ctx = ctx;
	t->memory = sizeof(*t);
	t->pin_file = NIL;

	t->sess = malloc(sizeof(*t->sess) * (size_t)c->sessions);
	t->sess_bucket = malloc(sizeof(uint32_t) * (size_t)c->sessions);
	t->files = malloc(sizeof(*t->files) * (size_t)c->files);
	t->file_bucket = malloc(sizeof(uint32_t) * (size_t)c->files);
	t->clients = calloc(c->clients, sizeof(*t->clients));
	t->client_bucket = malloc(sizeof(uint32_t) * (size_t)c->clients);
	if (t->sess == NULL || t->sess_bucket == NULL || t->files == NULL ||
		t->file_bucket == NULL || t->clients == NULL || t->client_bucket == NULL)
		goto fail;
	t->memory += (sizeof(*t->sess) + sizeof(uint32_t)) * (size_t)c->sessions;
	t->memory += (sizeof(*t->files) + sizeof(uint32_t)) * (size_t)c->files;
	t->memory += (sizeof(*t->clients) + sizeof(uint32_t)) * (size_t)c->clients;

	/* Touch every page now, so the table's memory is committed at start, not on the
	 * fast path. */
	for (uint32_t i = 0; i < c->sessions; i++) {
		t->sess_bucket[i] = NIL;
		t->sess[i].is_used = 0;
		t->sess[i].next = i + 1 < c->sessions ? i + 1 : NIL;
	}
	t->sess_free = 0;
	t->active.head = t->active.tail = NIL;
	t->pending.head = t->pending.tail = NIL;
	t->hist.head = t->hist.tail = NIL;
	for (uint32_t i = 0; i < c->files; i++) {
		t->file_bucket[i] = NIL;
		t->files[i].fh_len = 0;
		t->files[i].next = i + 1 < c->files ? i + 1 : NIL;
	}
	t->file_free = 0;
	t->file_lru.head = t->file_lru.tail = NIL;
	for (uint32_t i = 0; i < c->clients; i++)
		t->client_bucket[i] = NIL;
	t->client_idle.head = t->client_idle.tail = NIL;

	if (c->is_names_on && c->names > 0) {
		t->names = names_create(c->names, &t->memory);
		if (t->names == NULL)
			goto fail;
	}
	return t;
fail:
	th_sess_free(t);
	errno = ENOMEM;
	return NULL;
}

void
th_sess_free(struct th_sess_table *t)
{
	if (t == NULL)
		return;
	names_free(t->names);
	free(t->sess);
	free(t->sess_bucket);
	free(t->files);
	free(t->file_bucket);
	free(t->clients);
	free(t->client_bucket);
	free(t);
}

/* ---- clients ---- */

static uint32_t
client_hash(const struct th_addr *a)
{
	uint64_t w[2];

	memcpy(w, a->b, sizeof(w));
	return th_sat_fmix64(w[0] * 0x9e3779b97f4a7c15ull ^ w[1]);
}

static uint32_t
client_find(const struct th_sess_table *t, const struct th_addr *a)
{
	uint32_t b = fastrange(client_hash(a), t->cfg.clients);

	for (uint32_t i = t->client_bucket[b]; i != NIL; i = t->clients[i].hnext)
		if (memcmp(&t->clients[i].addr, a, sizeof(*a)) == 0)
			return i;
	return NIL;
}

/* The client's index, added when new. NIL when every entry holds state. */
static uint32_t
client_get(struct th_sess_table *t, const struct th_addr *a)
{
	uint32_t i = client_find(t, a), b;
	struct client *c;

	if (i != NIL)
		return i;
	if (t->clients_used < t->cfg.clients) {
		i = t->clients_used++;
	} else {
		/* Reuse the client idle longest; it has no session or history left. */
		uint32_t *p;

		i = t->client_idle.tail;
		if (i == NIL) {
			t->ctr.clients_full++;
			return NIL;
		}
		LIST_DEL(t->clients, &t->client_idle, i);
		p = &t->client_bucket[fastrange(client_hash(&t->clients[i].addr), t->cfg.clients)];
		while (*p != i)
			p = &t->clients[*p].hnext;
		*p = t->clients[i].hnext;
	}
	c = &t->clients[i];
	memset(c, 0, sizeof(*c));
	c->addr = *a;
	c->is_used = 1;
	b = fastrange(client_hash(a), t->cfg.clients);
	c->hnext = t->client_bucket[b];
	t->client_bucket[b] = i;
	LIST_PUSH(t->clients, &t->client_idle, i);
	return i;
}

static void
client_ref(struct th_sess_table *t, uint32_t i)
{
	if (t->clients[i].refs++ == 0)
		LIST_DEL(t->clients, &t->client_idle, i);
}

static void
client_unref(struct th_sess_table *t, uint32_t i)
{
	if (--t->clients[i].refs == 0)
		LIST_PUSH(t->clients, &t->client_idle, i);
}

/* ---- files ---- */

static uint32_t
file_hash(const struct th_addr *server, const uint8_t *fh, unsigned int fh_len)
{
	uint64_t h = th_sat_hash_step(0xcbf29ce484222325ull, server->b, sizeof(server->b));

	return th_sat_fmix64(th_sat_hash_step(h, fh, fh_len));
}

static uint32_t
file_find(const struct th_sess_table *t, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len)
{
	uint32_t b = fastrange(file_hash(server, fh, fh_len), t->cfg.files);

	for (uint32_t i = t->file_bucket[b]; i != NIL; i = t->files[i].hnext) {
		const struct file *f = &t->files[i];

		if (f->fh_len == fh_len && memcmp(f->fh, fh, fh_len) == 0 &&
			memcmp(&f->server, server, sizeof(*server)) == 0)
			return i;
	}
	return NIL;
}

static void
file_release(struct th_sess_table *t, uint32_t i)
{
	struct file *f = &t->files[i];
	uint32_t *p =
		&t->file_bucket[fastrange(file_hash(&f->server, f->fh, f->fh_len), t->cfg.files)];

	while (*p != i)
		p = &t->files[*p].hnext;
	*p = f->hnext;
	LIST_DEL(t->files, &t->file_lru, i);
	f->fh_len = 0;
	f->next = t->file_free;
	t->file_free = i;
}

static void sess_release(struct th_sess_table *t, uint32_t i);
static void sess_emit(struct th_sess_table *t, const struct sess *s, bool is_cache_hit);

/* Forget a file and everything about it: its opens in progress are closed now. */
static void
file_evict(struct th_sess_table *t, uint32_t fi)
{
	uint32_t saved = t->pin_file;

	t->ctr.files_evicted++;
	t->pin_file = fi; /* keep it while its sessions go */
	while (t->files[fi].sess_head != NIL) {
		uint32_t si = t->files[fi].sess_head;
		struct sess *s = &t->sess[si];

		if (s->kind == SK_READ || s->kind == SK_WRITE) {
			sess_emit(t, s, false);
			t->ctr.sessions_evicted++;
		} else if (s->kind == SK_PENDING) {
			t->ctr.sessions_evicted++;
		} else {
			t->ctr.history_evicted++;
		}
		sess_release(t, si);
	}
	t->pin_file = saved;
	file_release(t, fi);
}

/* The file @p i is in use: the most recently used one. */
static void
file_use(struct th_sess_table *t, uint32_t i)
{
	LIST_DEL(t->files, &t->file_lru, i);
	LIST_PUSH(t->files, &t->file_lru, i);
}

/*
 * Add a file that file_find() did not find (pushing out the least recently used
 * one). NIL when the only one to push out is pinned.
 */
static uint32_t
file_add(struct th_sess_table *t, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len)
{
	uint32_t i, b;
	struct file *f;

	if (t->file_free == NIL) {
		uint32_t victim = t->file_lru.tail;

		if (victim == t->pin_file)
			victim = t->files[victim].prev;
		if (victim == NIL)
			return NIL; /* a table of one file, pinned: nothing to give */
		file_evict(t, victim);
	}
	i = t->file_free;
	f = &t->files[i];
	t->file_free = f->next;
	f->server = *server;
	memcpy(f->fh, fh, fh_len);
	f->fh_len = (uint8_t)fh_len;
	f->sess_head = NIL;
	f->sig = 0;
	f->size = 0;
	b = fastrange(file_hash(server, fh, fh_len), t->cfg.files);
	f->hnext = t->file_bucket[b];
	t->file_bucket[b] = i;
	LIST_PUSH(t->files, &t->file_lru, i);
	return i;
}

/* The file's index, added when new (pushing out the least recently used one). */
static uint32_t
file_get(struct th_sess_table *t, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len)
{
	uint32_t i = file_find(t, server, fh, fh_len);

	if (i == NIL)
		return file_add(t, server, fh, fh_len);
	file_use(t, i);
	return i;
}

/* ---- sessions ---- */

static inline uint32_t
sess_bucket(
	const struct th_sess_table *t, uint32_t file, uint32_t client, uint32_t uid, uint8_t kind)
{
	uint64_t h = ((uint64_t)file << 32 | client) * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)uid << 8 | kind) * 0xc2b2ae3d27d4eb4full;
	return fastrange(th_sat_fmix64(h), t->cfg.sessions);
}

static uint32_t
sess_find(const struct th_sess_table *t, uint32_t file, uint32_t client, uint32_t uid, uint8_t kind)
{
	for (uint32_t i = t->sess_bucket[sess_bucket(t, file, client, uid, kind)]; i != NIL;
		i = t->sess[i].hnext) {
		const struct sess *s = &t->sess[i];

		if (s->file == file && s->client == client && s->uid == uid && s->kind == kind)
			return i;
	}
	return NIL;
}

static void
hash_unlink(struct th_sess_table *t, uint32_t i)
{
	struct sess *s = &t->sess[i];
	uint32_t *p = &t->sess_bucket[sess_bucket(t, s->file, s->client, s->uid, s->kind)];

	while (*p != i)
		p = &t->sess[*p].hnext;
	*p = s->hnext;
}

static void
hash_link(struct th_sess_table *t, uint32_t i)
{
	struct sess *s = &t->sess[i];
	uint32_t b = sess_bucket(t, s->file, s->client, s->uid, s->kind);

	s->hnext = t->sess_bucket[b];
	t->sess_bucket[b] = i;
}

/*
 * A file's sessions keep its READ and WRITE ones first, so that a GETATTR looking for
 * opens in progress walks only those, not every client's pending and history entries.
 */
static bool
is_data(uint8_t kind)
{
	return kind == SK_READ || kind == SK_WRITE;
}

static void
flist_unlink(struct th_sess_table *t, uint32_t i)
{
	const struct sess *s = &t->sess[i];

	if (s->fprev != NIL)
		t->sess[s->fprev].fnext = s->fnext;
	else
		t->files[s->file].sess_head = s->fnext;
	if (s->fnext != NIL)
		t->sess[s->fnext].fprev = s->fprev;
}

static void
flist_insert(struct th_sess_table *t, uint32_t i)
{
	struct sess *s = &t->sess[i];
	uint32_t prev = NIL, cur = t->files[s->file].sess_head;

	if (!is_data(s->kind))
		while (cur != NIL && is_data(t->sess[cur].kind)) {
			prev = cur;
			cur = t->sess[cur].fnext;
		}
	s->fprev = prev;
	s->fnext = cur;
	if (prev != NIL)
		t->sess[prev].fnext = i;
	else
		t->files[s->file].sess_head = i;
	if (cur != NIL)
		t->sess[cur].fprev = i;
}

/* Give a session's entry back; its file goes too when nothing else refers to it. */
static void
sess_release(struct th_sess_table *t, uint32_t i)
{
	struct sess *s = &t->sess[i];
	struct file *f = &t->files[s->file];

	hash_unlink(t, i);
	list_del(t->sess, list_of(t, s), i);
	flist_unlink(t, i);
	client_unref(t, s->client);
	s->is_used = 0;
	s->next = t->sess_free;
	t->sess_free = i;
	if (f->sess_head == NIL && s->file != t->pin_file)
		file_release(t, s->file);
}

/* Change a session's key kind in place (PENDING -> READ, READ -> HIST). */
static void
sess_rekey(struct th_sess_table *t, uint32_t i, uint32_t uid, uint8_t kind)
{
	struct sess *s = &t->sess[i];

	bool moves = is_data(s->kind) != is_data(kind);

	hash_unlink(t, i);
	list_del(t->sess, list_of(t, s), i);
	if (moves)
		flist_unlink(t, i);
	s->uid = uid;
	s->kind = kind;
	if (moves)
		flist_insert(t, i);
	hash_link(t, i);
	list_push(t->sess, list_of(t, s), i);
}

static void
sess_touch(struct th_sess_table *t, uint32_t i)
{
	struct list *l = list_of(t, &t->sess[i]);

	if (l->head != i) {
		list_del(t->sess, l, i);
		list_push(t->sess, l, i);
	}
}

static void
sess_emit(struct th_sess_table *t, const struct sess *s, bool is_cache_hit)
{
	const struct file *f = &t->files[s->file];
	struct th_sess_record r;

	r.open_ns = s->open_ns;
	r.close_ns = s->last_ns;
	r.first_op_ns = s->open_ns;
	r.last_op_ns = s->last_ns;
	r.server = f->server;
	r.fh_len = f->fh_len;
	memcpy(r.fh, f->fh, f->fh_len);
	r.client = t->clients[s->client].addr;
	r.uid = s->uid;
	r.gid = s->gid;
	r.dir = s->kind == SK_WRITE ? TH_SESS_DIR_WRITE : TH_SESS_DIR_READ;
	r.vers = s->vers;
	r.is_cache_hit = is_cache_hit;
	r.is_directory = (s->flags & SF_IS_DIR) != 0;
	r.ops = s->ops;
	r.transferred = is_cache_hit ? 0 : s->transferred;
	r.seq_bytes = is_cache_hit ? 0 : s->seq_bytes;
	r.rand_bytes = r.transferred - r.seq_bytes;
	/* The size at this open's close, not a later op's (a truncate after it). */
	r.size = s->size;
	t->ctr.records++;
	if (is_cache_hit)
		t->ctr.records_cache_hit++;
	t->record_cb(t->ctx, &r);
}

/*
 * A free entry for a new session: a free one, else the oldest history (it
 * only costs a possible cache read later), else the least recently used open
 * (closed now, its record emitted), else the oldest pending GETATTR.
 */
static uint32_t
sess_take(struct th_sess_table *t)
{
	uint32_t i;

	if (t->sess_free == NIL) {
		if (t->hist.tail != NIL) {
			t->ctr.history_evicted++;
			sess_release(t, t->hist.tail);
		} else if (t->active.tail != NIL) {
			t->ctr.sessions_evicted++;
			sess_emit(t, &t->sess[t->active.tail], false);
			sess_release(t, t->active.tail);
		} else {
			t->ctr.sessions_evicted++;
			sess_release(t, t->pending.tail);
		}
	}
	i = t->sess_free;
	t->sess_free = t->sess[i].next;
	return i;
}

static uint32_t
sess_new(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op,
	uint8_t kind)
{
	uint32_t i = sess_take(t);
	struct sess *s = &t->sess[i];
	struct file *f = &t->files[file];

	s->file = file;
	s->client = client;
	s->uid = kind == SK_HIST ? 0 : op->uid;
	s->kind = kind;
	s->flags = 0;
	s->vers = op->vers;
	s->is_used = 1;
	s->gid = op->gid;
	s->ops = 0;
	s->open_ns = op->call_ns;
	s->last_ns = op->call_ns;
	s->transferred = 0;
	s->seq_bytes = 0;
	s->next_off = 0;
	s->size = op->flags & TH_SESS_F_HAS_SIZE ? op->size : f->size;
	flist_insert(t, i);
	client_ref(t, client);
	hash_link(t, i);
	list_push(t->sess, list_of(t, s), i);
	return i;
}

static void
acc_add(struct sess *h, uint32_t uid)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (h->acc_uid[i] == uid + 1)
			return;
	/* The oldest answer goes, as in the client. */
	memmove(&h->acc_uid[1], &h->acc_uid[0], 3 * sizeof(h->acc_uid[0]));
	h->acc_uid[0] = uid + 1;
}

static bool
acc_has(const struct sess *h, uint32_t uid)
{
	for (unsigned int i = 0; i < 4; i++)
		if (h->acc_uid[i] == uid + 1)
			return true;
	return false;
}

/* What identifies a version of the file's attributes for a client's caches. */
static uint32_t
attr_sig(const struct th_sess_op *op)
{
	uint32_t h = th_sat_fmix64(op->mtime_ns * 0x9e3779b97f4a7c15ull ^ op->size);

	return h != 0 ? h : 1;
}

/*
 * Remember that @p client read (or wrote) @p file until @p at; @p uid opened it
 * (so the client holds that user's access rights; UINT32_MAX: nobody).
 */
static void
hist_note(struct th_sess_table *t, uint32_t file, uint32_t client, bool is_write, uint64_t at,
	uint32_t reuse, uint32_t uid)
{
	uint32_t h = sess_find(t, file, client, 0, SK_HIST);
	struct sess *s;

	if (h == NIL) {
		if (reuse != NIL) {
			h = reuse;
			sess_rekey(t, h, 0, SK_HIST);
			t->sess[h].last_ns = 0;
			t->sess[h].next_off = 0;
			memset(t->sess[h].acc_uid, 0, sizeof(t->sess[h].acc_uid));
		} else {
			struct th_sess_op dummy = {.call_ns = 0};

			h = sess_new(t, file, client, &dummy, SK_HIST);
		}
		t->sess[h].attr_sig = t->files[file].sig;
	} else if (reuse != NIL) {
		sess_release(t, reuse);
	}
	s = &t->sess[h];
	if (uid != UINT32_MAX)
		acc_add(s, uid);
	if (is_write) {
		if (at > s->next_off)
			s->next_off = at;
	} else if (at > s->last_ns) {
		s->last_ns = at;
	}
	sess_touch(t, h);
}

/* Close an open (its record goes out) and keep the client's history of the file. */
static void
sess_close(struct th_sess_table *t, uint32_t i)
{
	struct sess *s = &t->sess[i];
	uint32_t file = s->file, saved = t->pin_file;

	sess_emit(t, s, false);
	if (s->flags & SF_IS_DIR) {
		sess_release(t, i);
		return;
	}
	/* The entry becomes (or updates) the history: the file must not go meanwhile. */
	t->pin_file = file;
	hist_note(t, file, s->client, s->kind == SK_WRITE, s->last_ns, i, s->uid);
	t->pin_file = saved;
}

static bool
in_window(uint64_t from_ns, uint64_t until_ns, uint64_t at)
{
	return until_ns != 0 && at >= from_ns && at <= until_ns;
}

/* Whether @p at falls in the client's listing window, or in the one before it: a
 * GETATTR waits confirm_ns to be decided, longer than a window may last. */
static bool
in_listing(const struct client *c, uint64_t at)
{
	return in_window(c->listing_from_ns, c->listing_until_ns, at) ||
	       in_window(c->listing_prev_from_ns, c->listing_prev_until_ns, at);
}

/* Whether @p client holds @p uid's access rights to @p file: an answer it saw, or an
 * open by that user (which had one) in the history or in progress. */
static bool
has_access(const struct th_sess_table *t, uint32_t file, uint32_t client, uint32_t uid)
{
	uint32_t h = sess_find(t, file, client, 0, SK_HIST);

	if (h != NIL && acc_has(&t->sess[h], uid))
		return true;
	return sess_find(t, file, client, uid, SK_READ) != NIL ||
	       sess_find(t, file, client, uid, SK_WRITE) != NIL;
}

/*
 * A pending entry is decided or becomes an open: it ends at its last op's reply
 * (an open's ACCESS after its GETATTR), and end_ns gives its place back to
 * next_off. A GETATTR it held is part of that open (the READs came) or was
 * taken apart before (pending_split()).
 */
static void
pending_end(struct sess *s)
{
	if (s->end_ns > s->last_ns)
		s->last_ns = s->end_ns;
	s->next_off = 0;
	s->held_ns = 0;
	s->held_end_ns = 0;
}

/*
 * No READ followed the GETATTR that the entry held: it was the next open's
 * close-to-open check after all (a Linux client revalidates once per open).
 * The GETATTR and ACCESS before it are one cache read, reported now (its
 * ACCESS says a user opened the file, which no phantom rule overrides); the
 * entry becomes the held GETATTR's own, decided by the rules as if it had
 * started one. It keeps the burst and write-settle marks, which describe the
 * ops of the last half second either way.
 * @return the end of the cache read reported.
 */
static uint64_t
pending_split(struct th_sess_table *t, struct sess *s)
{
	struct sess first = *s;

	first.ops--;
	first.last_ns = s->end_ns;
	sess_emit(t, &first, true);
	s->open_ns = s->held_ns;
	s->last_ns = s->held_end_ns;
	s->end_ns = s->held_end_ns;
	s->ops = 1;
	s->flags = (uint8_t)((s->flags & (SF_SETTLE | SF_BURST)) | SF_SAW_GETATTR);
	s->held_ns = 0;
	s->held_end_ns = 0;
	return first.last_ns;
}

/*
 * Why a pending entry that no READ confirmed is no cache read: the counter of
 * its phantom kind, NULL when it is one. @p is_opened: the client saw the user
 * open the file just before (a cache read split from this entry), so it holds
 * the user's access rights.
 */
static uint64_t *
pending_phantom(struct th_sess_table *t, const struct sess *s, bool is_opened)
{
	const struct client *c = &t->clients[s->client];

	if ((s->flags & (SF_SETTLE | SF_SAW_ACCESS)) == SF_SETTLE)
		return &t->ctr.phantoms_write_settle;
	if (!(s->flags & SF_SAW_ACCESS) && in_listing(c, s->open_ns))
		return &t->ctr.phantoms_listing;
	/* ls -l on a cached listing: lstat of every entry whose attributes expired, back to
	 * back; an open would have checked access (or been one of at most two). The entry
	 * carries its burst membership, because the client's window may already describe a
	 * later burst when this entry's confirm_ns is over. */
	if (!(s->flags & SF_SAW_ACCESS) &&
		((s->flags & SF_BURST) || (c->ga_until_ns != 0 && s->open_ns >= c->ga_from_ns &&
						  s->open_ns <= c->ga_until_ns)))
		return &t->ctr.phantoms_burst;
	/* An open asks ACCESS unless the client holds the user's answer; a GETATTR without
	 * one from a user it holds none for is stat, not open. */
	if (t->cfg.is_access_mirror && !(s->flags & SF_SAW_ACCESS) && !is_opened &&
		!has_access(t, s->file, s->client, s->uid))
		return &t->ctr.phantoms_no_access;
	return NULL;
}

/* A GETATTR/ACCESS waited long enough without a READ: decide it. */
static void
pending_decide(struct th_sess_table *t, uint32_t i)
{
	struct sess *s = &t->sess[i];
	uint32_t file = s->file, client = s->client, uid = s->uid, saved = t->pin_file;
	uint64_t opened_ns = 0, *phantom;

	if (s->held_ns != 0)
		opened_ns = pending_split(t, s);
	pending_end(s);
	phantom = pending_phantom(t, s, opened_ns != 0);
	if (phantom != NULL) {
		(*phantom)++;
		if (opened_ns == 0) {
			sess_release(t, i);
			return;
		}
		/* The cache read split off before still restarts the client's window. */
	} else {
		sess_emit(t, s, true);
		/* The client has the file in its cache now: its window restarts. */
		opened_ns = s->last_ns;
	}
	t->pin_file = file;
	hist_note(t, file, client, false, opened_ns, i, uid);
	t->pin_file = saved;
}

void
th_sess_tick(struct th_sess_table *t, uint64_t now_ns)
{
	if (now_ns > t->now_ns)
		t->now_ns = now_ns;
	/* Pending entries are in arrival order, which is deadline order. */
	while (t->pending.tail != NIL &&
		now_ns >= t->sess[t->pending.tail].last_ns + t->cfg.confirm_ns)
		pending_decide(t, t->pending.tail);
	while (t->active.tail != NIL && now_ns >= t->sess[t->active.tail].last_ns + t->cfg.idle_ns)
		sess_close(t, t->active.tail);
	while (t->hist.tail != NIL) {
		const struct sess *h = &t->sess[t->hist.tail];
		uint64_t last = h->last_ns > h->next_off ? h->last_ns : h->next_off;

		if (now_ns < last + t->cfg.cache_window_ns)
			break;
		sess_release(t, t->hist.tail);
	}
}

/*
 * The capture's clock went back to @p now_ns. The pending and active lists
 * are in time order, and their oldest entries, stamped before the step, would
 * hold every later one back until the clock passed them again: they are
 * decided and closed as at the end. What stays (the clients' read and write
 * histories, their listing and burst windows) moves back with the clock, so
 * that it keeps its age: left ahead of it, a write before the step read as
 * one after every later GETATTR (6 cache reads of 38 lost to "right after the
 * client's own write" for a 100 s step). The names still valid move back too.
 */
static void
clock_back(struct th_sess_table *t, uint64_t now_ns)
{
	uint64_t back_ns;
	uint32_t i;

	t->ctr.clock_back++;
	while (t->pending.tail != NIL)
		pending_decide(t, t->pending.tail);
	while (t->active.tail != NIL)
		sess_close(t, t->active.tail);
	back_ns = t->now_ns > now_ns ? t->now_ns - now_ns : 0;
	for (i = t->hist.head; i != NIL; i = t->sess[i].next) {
		t->sess[i].last_ns = earlier(t->sess[i].last_ns, back_ns);
		t->sess[i].next_off = earlier(t->sess[i].next_off, back_ns);
	}
	for (i = 0; i < t->cfg.clients; i++) {
		struct client *c = &t->clients[i];

		if (!c->is_used)
			continue;
		c->listing_from_ns = earlier(c->listing_from_ns, back_ns);
		c->listing_until_ns = earlier(c->listing_until_ns, back_ns);
		c->listing_prev_from_ns = earlier(c->listing_prev_from_ns, back_ns);
		c->listing_prev_until_ns = earlier(c->listing_prev_until_ns, back_ns);
		c->burst_start_ns = earlier(c->burst_start_ns, back_ns);
		c->burst_last_ns = earlier(c->burst_last_ns, back_ns);
		c->ga_start_ns = earlier(c->ga_start_ns, back_ns);
		c->ga_last_ns = earlier(c->ga_last_ns, back_ns);
		c->ga_from_ns = earlier(c->ga_from_ns, back_ns);
		c->ga_until_ns = earlier(c->ga_until_ns, back_ns);
	}
	/* A name bound before the step must still name its file after it: left ahead of the
	 * clock, it was valid at no time after the step (export looks names up at an open's
	 * time), a repeated LOOKUP did not rebind it, and an end after the step came before
	 * its start. */
	names_clock_back(t, back_ns);
	t->now_ns = now_ns;
}

void
th_sess_flush(struct th_sess_table *t)
{
	while (t->pending.tail != NIL)
		pending_decide(t, t->pending.tail);
	while (t->active.tail != NIL)
		sess_close(t, t->active.tail);
	names_flush(t);
}

/* ---- input ---- */

static bool
is_bad(const struct th_sess_op *op)
{
	const uint64_t limit = 1ull << 63;

	/* A reply a day after its call is a bad stamp: its open would never age out. */
	if (op->call_ns == 0 || (op->reply_ns != 0 && (op->reply_ns < op->call_ns ||
							      op->reply_ns - op->call_ns > DAY_NS)))
		return true;
	if (op->fh_len > TH_SESS_FH_MAX || op->fh2_len > TH_SESS_FH_MAX)
		return true;
	if (op->fh_len == 0 && op->kind != TH_SESS_MNT)
		return true;
	if (op->name_len > TH_SESS_NAME_MAX || op->name2_len > TH_SESS_NAME_MAX)
		return true;
	switch (op->kind) {
	case TH_SESS_READ:
		/* A READ that succeeded short of the end moved at least one byte. */
		if ((op->flags & TH_SESS_F_OK) && op->count == 0 && !(op->flags & TH_SESS_F_EOF))
			return true;
		/* fall through */
	case TH_SESS_WRITE:
	case TH_SESS_COMMIT:
		if (op->offset >= limit || op->offset + op->count >= limit)
			return true;
		break;
	default:
		break;
	}
	return false;
}

static bool
owns(const struct th_sess_table *t, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len)
{
	return t->cfg.cores <= 1 ||
	       th_sess_fh_owner(server, fh, fh_len, t->cfg.cores) == t->cfg.core_index;
}

static uint64_t
op_end(const struct th_sess_op *op)
{
	return op->reply_ns != 0 ? op->reply_ns : op->call_ns;
}

/* Attributes after the call: the file's size, checked for an impossible shrink. */
static void
note_size(struct th_sess_table *t, uint32_t file, const struct th_sess_op *op)
{
	struct file *f = &t->files[file];

	if (!(op->flags & TH_SESS_F_HAS_SIZE))
		return;
	/* Sizes only shrink by a truncate; one we did not see (lost, or from a client on
	 * another path) is counted, and the new size believed. */
	if (op->size < f->size && !(op->flags & TH_SESS_F_TRUNCATE))
		t->ctr.bad_ops++;
	f->size = op->size;
}

/* Add a non-data op (COMMIT, SETATTR, CREATE) to an open; data ops end here too. */
static void
sess_add_meta(struct th_sess_table *t, uint32_t i, const struct th_sess_op *op)
{
	struct sess *s = &t->sess[i];

	if (op->flags & TH_SESS_F_HAS_SIZE)
		s->size = op->size;
	s->ops++;
	if (op_end(op) > s->last_ns)
		s->last_ns = op_end(op);
	sess_touch(t, i);
}

/* Add a data op (READ/WRITE/READDIR) to an open. */
static void
sess_add_data(struct th_sess_table *t, uint32_t i, const struct th_sess_op *op)
{
	struct sess *s = &t->sess[i];
	/* A READDIR's count is the entries its reply carried, not bytes; the decoded op
	 * keeps no reply size, so a directory read says 0. */
	uint64_t count =
		op->kind == TH_SESS_READDIR || op->kind == TH_SESS_READDIRPLUS ? 0 : op->count;

	if (op->offset == s->next_off || (s->ops == 0 && op->offset == 0))
		s->seq_bytes += count;
	s->transferred += count;
	s->next_off = op->offset + count;
	if (op->offset == 0)
		s->flags |= SF_SAW_ZERO;
	sess_add_meta(t, i, op);
}

/* The user's open in @p kind's direction, closed first when it went idle. */
static uint32_t
open_find(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op,
	uint8_t kind)
{
	uint32_t i = sess_find(t, file, client, op->uid, kind);

	if (i != NIL && op->call_ns >= t->sess[i].last_ns + t->cfg.idle_ns) {
		sess_close(t, i);
		i = NIL;
	}
	return i;
}

/*
 * A READ a little past where the open's previous READ ended: the READs between
 * were lost (at the tap, or in a TCP gap the flow decoder resynced over), not a
 * new open. A new open starts at 0, or, partly cached, at its first uncached
 * block, which is rarely within two READ sizes of where the last open stopped.
 */
static bool
is_gap(const struct sess *s, const struct th_sess_op *op)
{
	uint64_t span = 2 * (uint64_t)(op->count != 0 ? op->count : 65536);

	return s->next_off != 0 && op->offset > s->next_off && op->offset - s->next_off <= span;
}

static uint32_t write_open(struct th_sess_table *t, uint32_t i, uint32_t p, uint32_t file,
	uint32_t client, const struct th_sess_op *op);

static void
do_data(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op,
	uint8_t kind, bool is_dir)
{
	uint32_t i = open_find(t, file, client, op, kind);
	uint32_t p = NIL;

	if (kind == SK_READ && !is_dir) {
		p = sess_find(t, file, client, op->uid, SK_PENDING);
		if (p != NIL && op->call_ns >= t->sess[p].last_ns + t->cfg.confirm_ns) {
			/* Too late to be that GETATTR's read: the GETATTR stands alone. */
			pending_decide(t, p);
			p = NIL;
			i = open_find(t, file, client, op, kind);
		}
	}
	if (p != NIL) {
		t->ctr.cache_reads_confirmed++;
		/* READs after a GETATTR: a continuing open ignores it; otherwise that GETATTR
		 * was a close-to-open check and the open began there. */
		if (i != NIL && op->offset != 0 && op->offset == t->sess[i].next_off) {
			sess_release(t, p);
		} else if (i != NIL && is_gap(&t->sess[i], op)) {
			t->ctr.read_gaps_joined++;
			sess_release(t, p);
		} else {
			if (i != NIL)
				sess_close(t, i);
			pending_end(&t->sess[p]);
			sess_rekey(t, p, op->uid, SK_READ);
			t->sess[p].flags = 0;
			i = p;
		}
	} else if (i != NIL && op->offset == 0 && (t->sess[i].flags & SF_SAW_ZERO)) {
		/* From the start again: a new open. */
		sess_close(t, i);
		i = NIL;
	} else if (i == NIL && kind == SK_WRITE && !is_dir &&
		   (p = sess_find(t, file, client, op->uid, SK_PENDING)) != NIL &&
		   op->call_ns < t->sess[p].last_ns + t->cfg.confirm_ns) {
		/* The user's GETATTR, then WRITEs with no truncate or touch between: the
		 * SETATTR was lost, or open(O_WRONLY) without O_TRUNC. Either way the open
		 * began at the GETATTR, which was no cache read. */
		t->ctr.write_from_getattr++;
		i = write_open(t, NIL, p, file, client, op);
	}
	if (i == NIL) {
		i = sess_new(t, file, client, op, kind);
		if (is_dir)
			t->sess[i].flags |= SF_IS_DIR;
	}
	sess_add_data(t, i, op);
}

/*
 * An open that a truncate, CREATE or touch cannot join: it moved data, or it
 * was truncated or touched already. One open() truncates once (O_TRUNC) and
 * touch never truncates, so a second one is the next command's open, even
 * when the first moved no data (cp of an empty file).
 */
static bool
is_write_done(const struct sess *s)
{
	return (s->flags & (SF_SAW_ZERO | SF_TOUCHED | SF_TRUNCATED)) != 0 || s->transferred != 0;
}

/*
 * The write open @p i (NIL: none) that a truncate, touch or WRITE joins or starts.
 * The user's GETATTR/ACCESS waiting to become a cache read, @p p (NIL: none), was
 * the close-to-open check of this open (open(O_WRONLY | O_TRUNC) of an existing
 * file sends GETATTR, maybe ACCESS, then SETATTR size 0; touch, GETATTR then
 * SETATTR of times): with no open to join, it becomes the open, which began
 * there; otherwise it goes.
 */
static uint32_t
write_open(struct th_sess_table *t, uint32_t i, uint32_t p, uint32_t file, uint32_t client,
	const struct th_sess_op *op)
{
	if (p != NIL && i == NIL) {
		pending_end(&t->sess[p]);
		sess_rekey(t, p, op->uid, SK_WRITE);
		t->sess[p].flags = 0;
		t->sess[p].transferred = 0;
		t->sess[p].seq_bytes = 0;
		return p;
	}
	if (p != NIL)
		sess_release(t, p);
	return i != NIL ? i : sess_new(t, file, client, op, SK_WRITE);
}

/*
 * The write open a SETATTR-truncate, CREATE or touch belongs to: one that
 * moved no data yet, else a new one (an earlier write was its own open).
 */
static uint32_t
write_join(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op)
{
	uint32_t i = open_find(t, file, client, op, SK_WRITE);

	if (i != NIL && is_write_done(&t->sess[i])) {
		sess_close(t, i);
		i = NIL;
	}
	return write_open(t, i, sess_find(t, file, client, op->uid, SK_PENDING), file, client, op);
}

/*
 * SETATTR-truncate or CREATE: joins a write open that moved no data and was not
 * truncated or touched yet, else opens.
 */
static void
do_write_start(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op)
{
	uint32_t i = write_join(t, file, client, op);

	if (op->kind == TH_SESS_SETATTR)
		t->sess[i].flags |= SF_TRUNCATED;
	sess_add_meta(t, i, op);
}

/* The op's attributes say the object is an empty regular file. */
static bool
is_empty(const struct th_sess_op *op)
{
	return (op->flags & (TH_SESS_F_HAS_SIZE | TH_SESS_F_IS_DIR)) == TH_SESS_F_HAS_SIZE &&
	       op->size == 0;
}

/* GETATTR or ACCESS: maybe the open of a cached file (@p is_burst: one of an ls -l burst). */
static bool
do_getattr(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op,
	bool is_burst)
{
	bool is_access = op->kind == TH_SESS_ACCESS;
	uint64_t last_read = 0, last_write = 0;
	uint8_t flags = 0;
	uint32_t i;

	if (op->flags & TH_SESS_F_IS_DIR)
		return false;
	i = sess_find(t, file, client, op->uid, SK_PENDING);
	if (i != NIL && !is_access && (t->sess[i].flags & SF_SAW_GETATTR)) {
		struct sess *s = &t->sess[i];

		/* An open revalidates once (a GETATTR, or the LOOKUP that stands for it);
		 * the fstat() after it finds fresh attributes. A second GETATTR is the
		 * next open: the first one waited for no READ, it stands alone. Except
		 * that libnfs, which caches nothing, opens with LOOKUP and ACCESS and
		 * then asks GETATTR for the size (nfs-cat's fstat) before its READs: one
		 * GETATTR after the entry's ACCESS, within its confirm_ns, is held, and
		 * READs that follow it make all of them one uncached open. With none it
		 * is the next open still (pending_split()). It waits its own confirm_ns,
		 * from the head of the pending list (deadline order). */
		if (op->kind == TH_SESS_GETATTR && !is_burst && (s->flags & SF_SAW_ACCESS) &&
			s->held_ns == 0 && op->call_ns < s->last_ns + t->cfg.confirm_ns) {
			s->held_ns = op->call_ns;
			s->held_end_ns = op_end(op);
			s->last_ns = op_end(op);
			s->ops++;
			sess_touch(t, i);
			return true;
		}
		pending_decide(t, i);
		i = NIL;
	}
	if (i != NIL) {
		/* The same open's GETATTR and ACCESS. The open ends at the later reply; the
		 * wait for its READs still runs from the first (the pending list stays in
		 * deadline order). */
		t->sess[i].flags |= is_access ? SF_SAW_ACCESS : SF_SAW_GETATTR;
		if (is_burst)
			t->sess[i].flags |= SF_BURST;
		t->sess[i].ops++;
		if (op_end(op) > t->sess[i].end_ns)
			t->sess[i].end_ns = op_end(op);
		return true;
	}
	i = sess_find(t, file, client, 0, SK_HIST);
	if (i != NIL) {
		last_read = t->sess[i].last_ns;
		last_write = t->sess[i].next_off;
	}
	/* Opens in progress at this client count too, whoever's: the pages one user reads
	 * or writes are in the client's cache for every user. No GETATTR belongs to a
	 * read in progress by itself: Linux revalidates a file it is reading
	 * (nfs_revalidate_mapping) right before the READ that continues where the read
	 * stopped, which then drops the pending entry (do_data()); a GETATTR that no such
	 * READ follows is the next open's. */
	for (i = t->files[file].sess_head; i != NIL && is_data(t->sess[i].kind);
		i = t->sess[i].fnext) {
		const struct sess *s = &t->sess[i];

		if (s->client != client)
			continue;
		if (s->kind == SK_READ && s->last_ns > last_read)
			last_read = s->last_ns;
		else if (s->kind == SK_WRITE && s->last_ns > last_write)
			last_write = s->last_ns;
	}
	/* Opening an empty file reads nothing, so no read history can say it was opened
	 * before: its open is a cache read (0 bytes) whatever the history, once the
	 * rules below (and pending_decide()'s) let it through. */
	if (last_read == 0 && last_write == 0 && !is_empty(op)) {
		if (!is_access)
			t->ctr.getattr_no_history++;
		return false;
	}
	if (last_write > last_read) {
		/* Right after its own write a client may revalidate (an editor's fstat after
		 * saving): a phantom, unless an ACCESS says a user opened the file. */
		if (op->call_ns < last_write + t->cfg.write_settle_ns)
			flags = SF_SETTLE;
		else if (op->call_ns >= last_write + t->cfg.cache_window_ns)
			return false;
	} else if (last_read != 0 && op->call_ns >= last_read + t->cfg.cache_window_ns) {
		return false;
	}
	i = sess_new(t, file, client, op, SK_PENDING);
	if (is_burst)
		flags |= SF_BURST;
	t->sess[i].flags |= flags | (is_access ? SF_SAW_ACCESS : SF_SAW_GETATTR);
	t->sess[i].ops = 1;
	t->sess[i].last_ns = op_end(op);
	t->sess[i].end_ns = op_end(op);
	return true;
}

/*
 * A client listing a directory without the entries' attributes: what follows is
 * ls -l's lstat of each entry, not opens. That is a READDIR (NFSv2, or a v3
 * client not using READDIRPLUS), or a burst of LOOKUPs in one directory (lstat of
 * entries the client has no dentry for). READDIRPLUS brings every entry's handle
 * and attributes, which Linux puts in its caches (nfs_prime_dcache), so ls -l
 * sends nothing per entry after it: a GETATTR then is an open's, not a phantom.
 * LOOKUPs each in the directory the previous one found are a path walk, also no
 * listing.
 */
static void
note_listing(struct th_sess_table *t, uint32_t client, const struct th_sess_op *op)
{
	struct client *c = &t->clients[client];
	uint64_t until = op_end(op) + t->cfg.listing_ns;

	if (op->kind == TH_SESS_READDIRPLUS)
		return;
	if (op->kind == TH_SESS_LOOKUP) {
		uint32_t dir = th_sat_fmix64(th_sat_hash_step(0, op->fh, op->fh_len));

		if (c->burst_count == 0 || dir != c->burst_dir ||
			op->call_ns > c->burst_last_ns + t->cfg.lookup_burst_ns) {
			c->burst_start_ns = op->call_ns;
			c->burst_count = 0;
			c->burst_dir = dir;
		}
		c->burst_last_ns = op->call_ns;
		if (++c->burst_count < t->cfg.lookup_burst)
			return;
	}
	if (!in_window(c->listing_from_ns, c->listing_until_ns, op->call_ns)) {
		c->listing_prev_from_ns = c->listing_from_ns;
		c->listing_prev_until_ns = c->listing_until_ns;
		c->listing_from_ns = op->kind == TH_SESS_LOOKUP ? c->burst_start_ns : op->call_ns;
	}
	if (until > c->listing_until_ns)
		c->listing_until_ns = until;
}

/*
 * ls -l stats the entries one after another, each right after the previous reply: a
 * GETATTR inside the listing's window carries it on for listing_ns more, so that the
 * window follows the run of lstats, however long the directory, and ends soon after
 * it, before the next command's opens.
 */
static void
note_listing_stat(struct th_sess_table *t, uint32_t client, const struct th_sess_op *op)
{
	struct client *c = &t->clients[client];
	uint64_t until = op_end(op) + t->cfg.listing_ns;

	if (in_window(c->listing_from_ns, c->listing_until_ns, op->call_ns) &&
		until > c->listing_until_ns)
		c->listing_until_ns = until;
}

static void
do_names(struct th_sess_table *t, const struct th_sess_op *op)
{
	bool is_ok = (op->flags & TH_SESS_F_OK) != 0;
	uint8_t fh[TH_SESS_FH_MAX];
	uint32_t mode = 0;
	unsigned int n;

	switch (op->kind) {
	case TH_SESS_LOOKUP:
		if (is_ok && op->fh2_len != 0)
			names_add(t, &op->server, op->fh, op->fh_len, op->name, op->name_len,
				op->fh2, op->fh2_len, op->mode, op->call_ns);
		else if (op->reply_ns != 0 && !is_ok)
			/* The name does not resolve any more (NOENT): its meaning ended. */
			names_end(t, &op->server, op->fh, op->fh_len, op->name, op->name_len,
				op->call_ns, NULL, NULL);
		break;
	case TH_SESS_CREATE:
	case TH_SESS_MKDIR:
	case TH_SESS_SYMLINK:
	case TH_SESS_MKNOD:
	case TH_SESS_MNT:
		if (is_ok && op->fh2_len != 0)
			names_add(t, &op->server, op->fh, op->fh_len, op->name, op->name_len,
				op->fh2, op->fh2_len, op->mode, op->call_ns);
		break;
	case TH_SESS_LINK:
		/* A hard link: a second name for fh, in directory fh2. */
		if (is_ok && op->fh2_len != 0)
			names_add(t, &op->server, op->fh2, op->fh2_len, op->name, op->name_len,
				op->fh, op->fh_len, op->mode, op->call_ns);
		break;
	case TH_SESS_REMOVE:
	case TH_SESS_RMDIR:
		if (is_ok)
			names_end(t, &op->server, op->fh, op->fh_len, op->name, op->name_len,
				op_end(op), NULL, NULL);
		break;
	case TH_SESS_RENAME:
		if (!is_ok || op->fh2_len == 0)
			break;
		n = names_end(t, &op->server, op->fh, op->fh_len, op->name, op->name_len,
			op_end(op), fh, &mode);
		/* The target name, if it existed, now means the renamed file. */
		names_end(t, &op->server, op->fh2, op->fh2_len, op->name2, op->name2_len,
			op_end(op), NULL, NULL);
		if (n != 0)
			names_add(t, &op->server, op->fh2, op->fh2_len, op->name2, op->name2_len,
				fh, n, mode, op_end(op));
		break;
	default:
		break;
	}
}

/*
 * A READDIRPLUS entry: its name means its handle from the listing's call on,
 * exactly as if the client had looked the name up (ls -l lists with it, and
 * Linux then opens the entries with no LOOKUP). Not an operation: it opens
 * nothing, moves no time and is not counted in ops.
 */
static void
do_dirent(struct th_sess_table *t, const struct th_sess_op *op)
{
	t->ctr.dirents++;
	if (is_bad(op) || op->fh2_len == 0) {
		t->ctr.bad_ops++;
		return;
	}
	if (t->names != NULL && owns(t, &op->server, op->fh, op->fh_len))
		names_add(t, &op->server, op->fh, op->fh_len, op->name, op->name_len, op->fh2,
			op->fh2_len, op->mode, op->call_ns);
}

/* A directory write (MKDIR) with directory detail: one record, at once. */
static void
do_mkdir(struct th_sess_table *t, uint32_t client, const struct th_sess_op *op)
{
	const uint8_t *fh = op->fh2_len != 0 ? op->fh2 : op->fh;
	unsigned int fh_len = op->fh2_len != 0 ? op->fh2_len : op->fh_len;
	uint32_t file, i;

	if (!owns(t, &op->server, fh, fh_len))
		return;
	file = file_get(t, &op->server, fh, fh_len);
	if (file == NIL)
		return;
	t->pin_file = file;
	note_size(t, file, op);
	i = sess_new(t, file, client, op, SK_WRITE);
	t->sess[i].flags |= SF_IS_DIR;
	sess_add_meta(t, i, op);
	sess_emit(t, &t->sess[i], false);
	t->pin_file = NIL;
	sess_release(t, i);
}

/*
 * Mark the user's GETATTRs still waiting as a cache read since the run began:
 * they were the burst's first entries, counted before it was one. Pending
 * entries are in arrival order, so the walk stops at the run's start and
 * visits only what arrived during the run (a few ms).
 */
static void
burst_mark(struct th_sess_table *t, uint32_t client, const struct client *c)
{
	for (uint32_t i = t->pending.head; i != NIL; i = t->sess[i].next) {
		struct sess *s = &t->sess[i];

		/* An entry holding a GETATTR took its place in the list then. */
		if ((s->held_ns != 0 ? s->held_ns : s->open_ns) < c->ga_start_ns)
			break;
		if (s->client == client && s->uid == c->ga_uid)
			s->flags |= SF_BURST;
	}
}

/*
 * ls -l on a listing the client still has: one GETATTR per entry whose
 * attributes expired, back to back, by one user, on different files, with no
 * ACCESS between (lstat checks no permission on the file). Directories among
 * the entries keep the run going but do not count.
 * @return true when @p op is one of a burst (its pending entry is a phantom).
 */
static bool
note_burst(struct th_sess_table *t, uint32_t client, const struct th_sess_op *op)
{
	struct client *c = &t->clients[client];
	bool is_next = c->ga_count != 0 && op->uid == c->ga_uid &&
		       op->call_ns <= c->ga_last_ns + t->cfg.getattr_burst_ns;

	if (t->cfg.getattr_burst == 0 || !(op->flags & TH_SESS_F_HAS_SIZE))
		return false;
	/* ls -l sends each lstat when the previous one's reply is in: the gap runs from that
	 * reply, so a reply the network delayed (a TCP retransmission) does not split the
	 * burst in two. */
	if (op->flags & TH_SESS_F_IS_DIR) {
		if (is_next)
			c->ga_last_ns = op_end(op);
		return false;
	}
	if (is_next && op->fileid == c->ga_fileid)
		return false; /* the same file again: an open's revalidation, not a listing */
	if (!is_next) {
		c->ga_start_ns = op->call_ns;
		c->ga_count = 0;
		c->ga_uid = op->uid;
	}
	c->ga_last_ns = op_end(op);
	c->ga_fileid = op->fileid;
	if (++c->ga_count < t->cfg.getattr_burst)
		return false;
	if (c->ga_count == t->cfg.getattr_burst)
		burst_mark(t, client, c);
	if (c->ga_until_ns == 0 || c->ga_start_ns > c->ga_until_ns)
		c->ga_from_ns = c->ga_start_ns;
	c->ga_until_ns = op->call_ns;
	return true;
}

/* An ACCESS by the burst's user is an open's: the run of lstats is over. */
static void
note_burst_access(struct th_sess_table *t, uint32_t client, const struct th_sess_op *op)
{
	struct client *c = &t->clients[client];

	if (c->ga_count != 0 && op->uid == c->ga_uid && !(op->flags & TH_SESS_F_IS_DIR))
		c->ga_count = 0;
}

/* A SETATTR of the times only: what touch sends after it opened the file. */
static bool
is_touch(const struct th_sess_table *t, const struct th_sess_op *op)
{
	return t->cfg.is_touch_open && op->kind == TH_SESS_SETATTR &&
	       !(op->flags & (TH_SESS_F_TRUNCATE | TH_SESS_F_SET_MODE | TH_SESS_F_IS_DIR));
}

/*
 * touch: open(O_WRONLY | O_CREAT) and futimens, a write open that moves no data.
 * Its open's GETATTR (or LOOKUP) and ACCESS wait as a possible cache read: they
 * are this open's start instead. A CREATE before it already opened it.
 */
static void
do_touch(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op)
{
	uint32_t i;

	t->ctr.touch_opens++;
	/* Only the CREATE of this touch is joined. */
	i = write_join(t, file, client, op);
	/* touch closes the file at once: a later truncate or touch is another open. */
	t->sess[i].flags |= SF_TOUCHED;
	sess_add_meta(t, i, op);
}

/*
 * The client's view of the file's attributes. Attributes that changed by
 * someone else's hand (not this client's WRITE, SETATTR, COMMIT or CREATE)
 * make a Linux client drop the file's cached pages and access answers: its
 * history of the file ends there, and the next open reads from the server.
 * An ACCESS answer is kept for its user.
 */
static void
note_attrs(struct th_sess_table *t, uint32_t file, uint32_t client, const struct th_sess_op *op,
	uint8_t kind)
{
	bool is_own = kind == TH_SESS_WRITE || kind == TH_SESS_SETATTR || kind == TH_SESS_COMMIT ||
		      kind == TH_SESS_CREATE;
	uint32_t h, sig;

	if (!(op->flags & TH_SESS_F_HAS_SIZE) || (op->flags & TH_SESS_F_IS_DIR))
		return;
	sig = attr_sig(op);
	t->files[file].sig = sig;
	h = sess_find(t, file, client, 0, SK_HIST);
	if (h == NIL)
		return;
	if (!is_own && t->sess[h].attr_sig != 0 && t->sess[h].attr_sig != sig) {
		t->ctr.history_changed++;
		sess_release(t, h);
		return;
	}
	t->sess[h].attr_sig = sig;
	if (kind == TH_SESS_ACCESS && (op->flags & TH_SESS_F_OK))
		acc_add(&t->sess[h], op->uid);
}

/*
 * A call whose reply the capture never saw (a frame lost at the tap, a TCP gap
 * the flow decoder resynced over). It reaches us when the XID table gives up
 * on it, long after the ops around it: the decisions it could have changed are
 * made. It is evidence of what the client did, not of what the server
 * answered, so it starts an open only when nothing else explains it:
 *   - a GETATTR or ACCESS brings no attributes: nothing tells a phantom (ls -l,
 *     stat) from an open's check, and phantoms are ten times more frequent;
 *   - a READ or WRITE joins the user's open in progress without moving its
 *     sequential position (the READs after it went on already);
 *   - one at most confirm_ns after the client's last recorded read or write of
 *     the file belongs to the open already reported (a cache read that was the
 *     start of this uncached one, or a read the idle timeout closed);
 *   - a READDIR page joins the listing in progress (do_data(), no entries
 *     counted) or is dropped: a listing keeps no history;
 *   - otherwise it goes the normal way (its open's other RPCs were lost too).
 * @return true when the op is dealt with here.
 */
static bool
do_no_reply(struct th_sess_table *t, const struct th_sess_op *op)
{
	uint8_t kind = op->kind == TH_SESS_WRITE || op->kind == TH_SESS_COMMIT ||
				       op->kind == TH_SESS_SETATTR
			       ? SK_WRITE
			       : SK_READ;
	bool is_dir = op->kind == TH_SESS_READDIR || op->kind == TH_SESS_READDIRPLUS;
	uint32_t i = NIL, file, client;
	uint64_t last;

	switch (op->kind) {
	case TH_SESS_GETATTR:
	case TH_SESS_ACCESS:
		t->ctr.no_reply_attrs++;
		t->ctr.ops_ignored++;
		return true;
	case TH_SESS_READDIR:
	case TH_SESS_READDIRPLUS:
	case TH_SESS_READ:
	case TH_SESS_WRITE:
	case TH_SESS_COMMIT:
	case TH_SESS_SETATTR:
		break;
	default:
		return false;
	}
	file = file_find(t, &op->server, op->fh, op->fh_len);
	client = client_find(t, &op->client);
	if (file != NIL && client != NIL)
		i = sess_find(t, file, client, op->uid, kind);
	if (i != NIL && op->call_ns < t->sess[i].last_ns + t->cfg.idle_ns) {
		struct sess *s = &t->sess[i];

		/* Not sess_add_*(): the open's position and last use stay those of the RPCs
		 * seen whole. A WRITE's call carried its bytes past the tap. */
		s->ops++;
		if (op->kind == TH_SESS_WRITE)
			s->transferred += op->count;
		t->ctr.no_reply_joined++;
		if (is_dir)
			t->ctr.ops_ignored++;
		return true;
	}
	if (is_dir) {
		t->ctr.no_reply_dirs++;
		t->ctr.ops_ignored++;
		return true;
	}
	if (file != NIL && client != NIL && (i = sess_find(t, file, client, 0, SK_HIST)) != NIL) {
		last = kind == SK_WRITE ? t->sess[i].next_off : t->sess[i].last_ns;
		if (last != 0 && op->call_ns <= last + t->cfg.confirm_ns) {
			t->ctr.no_reply_reported++;
			t->ctr.ops_ignored++;
			return true;
		}
	}
	if (op->kind == TH_SESS_READ || op->kind == TH_SESS_WRITE)
		t->ctr.no_reply_opens++;
	return false;
}

void
th_sess_input(struct th_sess_table *t, const struct th_sess_op *op)
{
	bool is_ok = (op->flags & TH_SESS_F_OK) != 0;
	bool is_used = false, is_burst = false, is_meta;
	uint8_t kind = op->kind;
	const uint8_t *fh = op->fh;
	unsigned int fh_len = op->fh_len;
	uint32_t client = NIL, file = NIL;

	if (op->kind == TH_SESS_DIRENT) {
		do_dirent(t, op);
		return;
	}
	if (op->kind == TH_SESS_CLOCK_BACK) {
		clock_back(t, op->call_ns);
		return;
	}
	t->ctr.ops++;
	if (is_bad(op)) {
		t->ctr.bad_ops++;
		return;
	}
	/* Capture time moves with the ops (a pcap replays an hour in a second of the
	 * caller's ticks): GETATTRs that waited their confirm_ns out are decided, idle
	 * opens closed and old histories forgotten before this op is taken. */
	th_sess_tick(t, op->call_ns);
	/* Failed operations moved nothing and opened nothing (a NOENT LOOKUP still ends a
	 * name). Ops without a reply happened; they count with what the call says. */
	if (!is_ok && !(op->flags & TH_SESS_F_NO_REPLY)) {
		if (t->names != NULL && op->kind == TH_SESS_LOOKUP &&
			owns(t, &op->server, op->fh, op->fh_len))
			do_names(t, op);
		t->ctr.ops_ignored++;
		return;
	}
	if (op_end(op) > t->now_ns)
		t->now_ns = op_end(op);
	if ((op->flags & TH_SESS_F_NO_REPLY) && do_no_reply(t, op))
		return;

	switch (op->kind) {
	case TH_SESS_READ:
	case TH_SESS_WRITE:
	case TH_SESS_COMMIT:
	case TH_SESS_SETATTR:
	case TH_SESS_GETATTR:
	case TH_SESS_ACCESS:
		break;
	case TH_SESS_CREATE:
		/* The open is on the new file. */
		if (t->names != NULL && owns(t, &op->server, op->fh, op->fh_len))
			do_names(t, op);
		if (op->fh2_len == 0 || !owns(t, &op->server, op->fh2, op->fh2_len)) {
			t->ctr.ops_ignored++;
			return;
		}
		fh = op->fh2;
		fh_len = op->fh2_len;
		break;
	case TH_SESS_READDIR:
	case TH_SESS_READDIRPLUS:
	case TH_SESS_LOOKUP:
		client = client_get(t, &op->client);
		if (client != NIL)
			note_listing(t, client, op);
		if (t->names != NULL && owns(t, &op->server, op->fh, op->fh_len))
			do_names(t, op);
		/* A LOOKUP of a regular file is how open() revalidates a name it has to look
		 * up again: the attributes come with it, so it stands for the GETATTR. */
		if (op->kind == TH_SESS_LOOKUP && client != NIL && op->fh2_len != 0 &&
			(op->flags & TH_SESS_F_HAS_SIZE) && !(op->flags & TH_SESS_F_IS_DIR) &&
			owns(t, &op->server, op->fh2, op->fh2_len)) {
			fh = op->fh2;
			fh_len = op->fh2_len;
			kind = TH_SESS_GETATTR;
			break;
		}
		if (op->kind == TH_SESS_LOOKUP || t->cfg.detail != TH_SESS_OPENS_DIRS ||
			!owns(t, &op->server, op->fh, op->fh_len) || client == NIL) {
			t->ctr.ops_ignored++;
			return;
		}
		break;
	case TH_SESS_MKDIR:
		if (t->names != NULL && owns(t, &op->server, op->fh, op->fh_len))
			do_names(t, op);
		if (t->cfg.detail == TH_SESS_OPENS_DIRS &&
			(client = client_get(t, &op->client)) != NIL)
			do_mkdir(t, client, op);
		else
			t->ctr.ops_ignored++;
		return;
	default:
		if (t->names != NULL)
			do_names(t, op);
		t->ctr.ops_ignored++;
		return;
	}

	/* The listing case above may have looked the client up. */
	if (client == NIL)
		client = client_get(t, &op->client);
	if (client == NIL)
		return;
	if (op->kind == TH_SESS_GETATTR) {
		is_burst = note_burst(t, client, op);
		note_listing_stat(t, client, op);
	} else if (op->kind == TH_SESS_ACCESS)
		note_burst_access(t, client, op);
	/* GETATTR/ACCESS/COMMIT/SETATTR on a file without state change nothing: do not make
	 * an entry for them (most GETATTRs are of this kind), unless do_getattr() may make
	 * one (an empty file). */
	is_meta =
		kind == TH_SESS_GETATTR || kind == TH_SESS_ACCESS || kind == TH_SESS_COMMIT ||
		(kind == TH_SESS_SETATTR && !(op->flags & TH_SESS_F_TRUNCATE) && !is_touch(t, op));
	file = file_find(t, &op->server, fh, fh_len);
	if (file != NIL)
		file_use(t, file);
	else if (!is_meta || ((kind == TH_SESS_GETATTR || kind == TH_SESS_ACCESS) && is_empty(op)))
		file = file_add(t, &op->server, fh, fh_len);
	if (file == NIL) {
		if (kind == TH_SESS_GETATTR && !(op->flags & TH_SESS_F_IS_DIR))
			t->ctr.getattr_no_history++;
		t->ctr.ops_ignored++;
		return;
	}
	t->pin_file = file;
	note_attrs(t, file, client, op, kind);

	switch (kind) {
	case TH_SESS_READ:
		do_data(t, file, client, op, SK_READ, false);
		is_used = true;
		break;
	case TH_SESS_WRITE:
		do_data(t, file, client, op, SK_WRITE, false);
		is_used = true;
		break;
	case TH_SESS_READDIR:
	case TH_SESS_READDIRPLUS:
		do_data(t, file, client, op, SK_READ, true);
		is_used = true;
		break;
	case TH_SESS_COMMIT: {
		uint32_t i = open_find(t, file, client, op, SK_WRITE);

		if (i != NIL) {
			sess_add_meta(t, i, op);
			is_used = true;
		}
		break;
	}
	case TH_SESS_SETATTR:
		if (op->flags & TH_SESS_F_TRUNCATE) {
			do_write_start(t, file, client, op);
			is_used = true;
		} else if (is_touch(t, op)) {
			do_touch(t, file, client, op);
			is_used = true;
		}
		break;
	case TH_SESS_CREATE:
		do_write_start(t, file, client, op);
		is_used = true;
		break;
	case TH_SESS_GETATTR:
	case TH_SESS_ACCESS:
		if (!t->cfg.is_access_open && kind == TH_SESS_ACCESS)
			break;
		is_used = do_getattr(t, file, client, op, is_burst);
		break;
	default:
		break;
	}
	/* After the op: an open it closed reports the size it had at its close. */
	note_size(t, file, op);
	t->pin_file = NIL;
	if (t->files[file].sess_head == NIL)
		file_release(t, file);
	if (!is_used)
		t->ctr.ops_ignored++;
}
