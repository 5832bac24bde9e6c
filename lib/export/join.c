/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Handle-to-name join. Every name record says "this handle was called NAME in
 * directory DIR from T1 to T2". The table is keyed by (server, handle); a
 * lookup takes the name valid at the record's time and walks up the directory
 * handles (at the same time) to build a path. A file's path is kept with its
 * entry for as long as every name on it stays the one valid, so a file opened
 * again costs one lookup, not one per directory. Entries, chains and names
 * stay within the memory given at creation: past it a name is refused (the
 * caller counts it) and a pseudonym is made the long way each time. A table
 * made for the listing (export --names) also lists its names in order of
 * their start, with a key per name that its budget counts from the first.
 */

#include "th_export.h"
#include "export_private.h"
#include "th_sat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define DEPTH_MAX 64 /* deeper trees are cut (and a loop in bad data ends here) */

struct name_ent {
	uint64_t from_ns;      /**< valid from ... */
	uint64_t to_ns;        /**< ... to (0: still valid when the trace ended) */
	struct th_addr server; /**< key: server ... */
	uint8_t fh_len;        /**< ... and handle */
	uint8_t dir_len;       /**< directory handle bytes */
	uint16_t name_len;     /**< bytes at name_off */
	uint32_t mode;         /**< the file's st_mode while the name held (0 unknown) */
	uint32_t hash;         /**< of the key */
	uint32_t next;         /**< chain in its bucket */
	uint64_t name_off;     /**< in the string arena */
	uint64_t anon_off;     /**< the name's pseudonym in the arena, once computed */
	uint64_t path_off;     /**< the path last joined for it, in the arena, then its
				    pseudonym (apath_len bytes, 0: not made) ... */
	uint64_t path_since;   /**< ... which hold from ... */
	uint64_t path_until;   /**< ... to (0: none kept) */
	uint16_t path_len;     /**< the path's bytes */
	uint16_t apath_len;    /**< the pseudonym's bytes */
	uint16_t anon_len;     /**< the pseudonym's bytes */
	bool is_anon;          /**< the pseudonym has been computed */
	bool is_dot;           /**< named "." or "..": listed, never a path's component */
	uint8_t fh[TH_TRACE_FH_MAX];
	uint8_t dir[TH_TRACE_FH_MAX];
};

/* A name's place in the listing: its start, then the order names were added in. */
struct order_key {
	uint64_t from_ns; /**< the name's start */
	uint32_t i;       /**< its entry */
};

struct th_export_names {
	struct name_ent *e; /**< entries */
	size_t count;       /**< entries used */
	size_t cap;         /**< entries allocated */
	uint32_t *bucket;   /**< chain heads; power-of-two count */
	size_t buckets;     /**< bucket count */
	char *arena;        /**< names, back to back */
	size_t arena_size;  /**< bytes used */
	size_t arena_cap;   /**< bytes allocated */
	uint64_t max_bytes; /**< entries, buckets and arena together at most */
	size_t ent_size;    /**< bytes an entry counts: its own, and its listing key if listed */
	struct order_key *order; /**< entries by start (th_export__names_sort()), or NULL */
};

struct th_export_names *
th_export_names_create(uint64_t max_bytes)
{
	struct th_export_names *n = calloc(1, sizeof(struct th_export_names));

	if (n != NULL) {
		n->max_bytes = max_bytes;
		n->ent_size = sizeof(struct name_ent);
	}
	return n;
}

struct th_export_names *
th_export__names_create_listing(uint64_t max_bytes)
{
	struct th_export_names *n = th_export_names_create(max_bytes);

	/* The keys are allocated only once every name is in, when the budget has gone to
	 * entries and names: each entry counts its key from the start. */
	if (n != NULL)
		n->ent_size += sizeof(struct order_key);
	return n;
}

/* Bytes allocated, less @p own (what a growing array has now), against the budget. */
static uint64_t
room(const struct th_export_names *n, uint64_t own)
{
	uint64_t used = (uint64_t)n->cap * n->ent_size + (uint64_t)n->buckets * sizeof(uint32_t) +
			n->arena_cap - own;

	return used < n->max_bytes ? n->max_bytes - used : 0;
}

void
th_export_names_free(struct th_export_names *n)
{
	if (n == NULL)
		return;
	free(n->order);
	free(n->e);
	free(n->bucket);
	free(n->arena);
	free(n);
}

/* Eight bytes a round (byte-wise FNV-1a here was most of a path walk's time). */
static uint32_t
key_hash(const struct th_addr *server, const uint8_t *fh, unsigned int fh_len)
{
	uint64_t h = th_sat_hash_step(
		(uint64_t)(fh_len + 1) * 0x9e3779b97f4a7c15ull, server->b, sizeof(server->b));

	return th_sat_hash_final(th_sat_hash_step(h, fh, fh_len));
}

static int
rehash(struct th_export_names *n, size_t buckets)
{
	uint32_t *b = malloc(buckets * sizeof(*b));

	if (b == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < buckets; i++)
		b[i] = NIL;
	for (size_t i = 0; i < n->count; i++) {
		uint32_t s = n->e[i].hash & (uint32_t)(buckets - 1);

		n->e[i].next = b[s];
		b[s] = (uint32_t)i;
	}
	free(n->bucket);
	n->bucket = b;
	n->buckets = buckets;
	return 0;
}

/* Room for @p size more bytes in the string arena. @return 0, -ENOSPC or -ENOMEM. */
static int
arena_reserve(struct th_export_names *n, size_t size)
{
	size_t cap = n->arena_cap != 0 ? n->arena_cap * 2 : 65536;
	uint64_t max = room(n, n->arena_cap);
	char *a;

	if (n->arena_size + size <= n->arena_cap)
		return 0;
	while (cap < n->arena_size + size)
		cap *= 2;
	if (cap > max)
		cap = (size_t)max;
	if (cap < n->arena_size + size)
		return -ENOSPC;
	a = realloc(n->arena, cap);
	if (a == NULL)
		return -ENOMEM;
	n->arena = a;
	n->arena_cap = cap;
	return 0;
}

int
th_export_names_add(struct th_export_names *n, const struct th_trace_name *r)
{
	struct name_ent *e;
	uint32_t s;
	int rc = 0;

	if (r->fh_len > TH_TRACE_FH_MAX || r->dir_fh_len > TH_TRACE_FH_MAX ||
		r->name_len > TH_TRACE_NAME_MAX)
		return -EINVAL;
	if (n->count >= NIL - 1)
		return -ENOMEM;
	if (n->count == n->cap) {
		size_t cap = n->cap != 0 ? n->cap * 2 : 1024;
		uint64_t max = room(n, (uint64_t)n->cap * n->ent_size) / n->ent_size;
		struct name_ent *e2;

		if (cap > max)
			cap = (size_t)max;
		if (cap <= n->count)
			return -ENOSPC;
		e2 = realloc(n->e, cap * sizeof(*e2));
		if (e2 == NULL)
			return -ENOMEM;
		n->e = e2;
		n->cap = cap;
	}
	/* A bucket per entry; past the budget, chains grow longer instead. */
	if (n->count >= n->buckets) {
		size_t b = n->buckets != 0 ? n->buckets * 4 : 4096;

		if ((b - n->buckets) * sizeof(uint32_t) <= room(n, 0))
			rc = rehash(n, b);
		else if (n->buckets == 0)
			rc = -ENOSPC;
		if (rc < 0)
			return rc;
	}
	rc = arena_reserve(n, r->name_len);
	if (rc < 0)
		return rc;
	e = &n->e[n->count];
	e->from_ns = r->from_ns;
	e->to_ns = r->to_ns;
	e->server = r->server;
	e->fh_len = r->fh_len;
	memcpy(e->fh, r->fh, r->fh_len);
	e->dir_len = r->dir_fh_len;
	memcpy(e->dir, r->dir_fh, r->dir_fh_len);
	e->name_len = r->name_len;
	e->mode = r->mode;
	e->name_off = n->arena_size;
	e->is_anon = false;
	e->is_dot =
		r->name[0] == '.' && (r->name_len == 1 || (r->name_len == 2 && r->name[1] == '.'));
	e->path_since = e->path_until = 0;
	memcpy(n->arena + n->arena_size, r->name, r->name_len);
	n->arena_size += r->name_len;
	e->hash = key_hash(&r->server, r->fh, r->fh_len);
	s = e->hash & (uint32_t)(n->buckets - 1);
	e->next = n->bucket[s];
	n->bucket[s] = (uint32_t)n->count;
	n->count++;
	return 0;
}

/*
 * The name valid at t; of several (hard links, a rename seen twice), the latest to start.
 * *until is lowered to where the answer may change: the name's end, or the start of
 * another name of the handle after t (until then no later-starting name is valid).
 */
static struct name_ent *
find(const struct th_export_names *n, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len, uint64_t t, uint64_t *until)
{
	struct name_ent *best = NULL;
	uint32_t h, i;

	if (n->buckets == 0)
		return NULL;
	h = key_hash(server, fh, fh_len);
	for (i = n->bucket[h & (uint32_t)(n->buckets - 1)]; i != NIL; i = n->e[i].next) {
		struct name_ent *e = &n->e[i];

		if (e->hash != h || e->fh_len != fh_len || memcmp(e->fh, fh, fh_len) != 0 ||
			memcmp(&e->server, server, sizeof(*server)) != 0)
			continue;
		/* A LOOKUP of "." or ".." (kept by captures before they were left out) names
		 * the directory itself or its parent from below: as the handle's name it would
		 * put the handle inside itself, and its path would go round to DEPTH_MAX. */
		if (e->is_dot)
			continue;
		if (e->from_ns > t) {
			if (e->from_ns < *until)
				*until = e->from_ns;
			continue;
		}
		if (e->to_ns != 0 && t >= e->to_ns)
			continue;
		if (best == NULL || e->from_ns > best->from_ns)
			best = e;
	}
	if (best != NULL && best->to_ns != 0 && best->to_ns < *until)
		*until = best->to_ns;
	return best;
}

/*
 * The chain's names (or their pseudonyms), outermost first, joined with '/'. @return the
 * length (NUL-terminated in out, size > 0); *is_cut when the path did not fit.
 */
static size_t
join(const struct th_export_names *n, const struct name_ent *const *chain, unsigned int depth,
	bool is_anon, char *out, size_t size, bool *is_cut)
{
	size_t o = 0;

	*is_cut = false;
	while (depth > 0) {
		const struct name_ent *e = chain[--depth];
		const char *name = n->arena + (is_anon ? e->anon_off : e->name_off);
		size_t len = is_anon ? e->anon_len : e->name_len;

		/* A mount path already starts with '/'; components are joined with one. */
		if (o > 0 && out[o - 1] != '/') {
			if (o + 1 < size)
				out[o++] = '/';
			else
				*is_cut = true;
		}
		if (o > 0 && len > 0 && name[0] == '/')
			name++, len--;
		if (len > size - 1 - o) {
			len = size - 1 - o;
			*is_cut = true;
		}
		memcpy(out + o, name, len);
		o += len;
	}
	out[o] = '\0';
	return o;
}

uint32_t
th_export__names_hash(const struct th_addr *server, const uint8_t *fh, unsigned int fh_len)
{
	return key_hash(server, fh, fh_len);
}

void
th_export__names_prefetch(const struct th_export_names *n, uint32_t h, bool is_entry)
{
	const uint32_t *b;
	const char *e;

	if (n->buckets == 0)
		return;
	b = &n->bucket[h & (uint32_t)(n->buckets - 1)];
	if (!is_entry) {
		__builtin_prefetch(b);
		return;
	}
	if (*b == NIL)
		return;
	e = (const char *)&n->e[*b];
	for (size_t off = 0; off < sizeof(struct name_ent); off += 64)
		__builtin_prefetch(e + off);
}

/*
 * @p e and the names of its directories valid at @p t, in @p chain from @p e up. @return the
 * depth; *until as find(), for all of them.
 */
static unsigned int
walk_up(const struct th_export_names *n, const struct th_addr *server, const struct name_ent *e,
	uint64_t t, const struct name_ent **chain, uint64_t *until)
{
	unsigned int depth = 0;

	while (e != NULL && depth < DEPTH_MAX) {
		chain[depth++] = e;
		e = e->dir_len > 0 ? find(n, server, e->dir, e->dir_len, t, until) : NULL;
		/* Names that go round (a directory renamed into its own subtree while the
		 * capture missed a step) end the walk where they come back. */
		for (unsigned int i = 0; e != NULL && i < depth; i++)
			if (chain[i] == e)
				e = NULL;
	}
	return depth;
}

/* Whether @p e keeps a path valid at @p t (with its pseudonym, if @p is_anon) that fits. */
static bool
is_kept(const struct name_ent *e, uint64_t t, bool is_anon, size_t size, size_t asize)
{
	return t >= e->path_since && t < e->path_until && e->path_len < size &&
	       (!is_anon || (e->apath_len > 0 && e->apath_len < asize));
}

/* Keep @p path (and @p apath, @p alen bytes, if any) with @p e for [@p t, @p until). */
static void
keep(struct th_export_names *n, struct name_ent *e, uint64_t t, uint64_t until, const char *path,
	size_t len, const char *apath, size_t alen)
{
	if (len > UINT16_MAX || alen > UINT16_MAX || arena_reserve(n, len + alen) != 0)
		return;
	memcpy(n->arena + n->arena_size, path, len);
	if (alen > 0)
		memcpy(n->arena + n->arena_size + len, apath, alen);
	e->path_off = n->arena_size;
	e->path_len = (uint16_t)len;
	e->apath_len = (uint16_t)alen;
	e->path_since = t;
	e->path_until = until;
	n->arena_size += len + alen;
}

static size_t
copy_kept(const struct th_export_names *n, uint64_t off, size_t len, char *out)
{
	memcpy(out, n->arena + off, len);
	out[len] = '\0';
	return len;
}

/* Every name of the chain has its pseudonym in the arena. @return 0 or -ENOMEM. */
static int
name_pseudonyms(struct th_export_names *n, const struct th_export_anon *a,
	const struct name_ent *const *chain, unsigned int depth)
{
	/* A component of one byte becomes 16 hex digits: at most 8.5 times the name. */
	char buf[17 * (TH_TRACE_NAME_MAX + 1) / 2 + 1];

	for (unsigned int i = 0; i < depth; i++) {
		struct name_ent *e = &n->e[chain[i] - n->e];
		size_t len;

		if (e->is_anon)
			continue;
		len = th_export_anon_path(a, n->arena + e->name_off, e->name_len, buf, sizeof(buf));
		if (arena_reserve(n, len) < 0)
			return -ENOMEM;
		memcpy(n->arena + n->arena_size, buf, len);
		e->anon_off = n->arena_size;
		e->anon_len = (uint16_t)len;
		e->is_anon = true;
		n->arena_size += len;
	}
	return 0;
}

/*
 * The path of @p e, the name valid at @p t (until @p until, as find() says), joined
 * through its directories' names then, or kept from the last time; with @p a, its
 * pseudonym too, in @p apath (*@p apath_len bytes). @return the path's length.
 */
static size_t
path_from(struct th_export_names *n, const struct th_export_anon *a, struct name_ent *e, uint64_t t,
	uint64_t until, char *path, size_t path_size, char *apath, size_t apath_size,
	size_t *apath_len)
{
	const struct name_ent *chain[DEPTH_MAX];
	unsigned int depth;
	size_t len;
	bool is_cut;

	if (is_kept(e, t, a != NULL, path_size, apath_size)) {
		if (a != NULL)
			*apath_len = copy_kept(n, e->path_off + e->path_len, e->apath_len, apath);
		return copy_kept(n, e->path_off, e->path_len, path);
	}
	depth = walk_up(n, &e->server, e, t, chain, &until);
	len = join(n, chain, depth, false, path, path_size, &is_cut);
	if (a == NULL) {
		/* A path cut short is joined again each time. */
		if (!is_cut)
			keep(n, e, t, until, path, len, NULL, 0);
		return len;
	}
	if (len == 0)
		return 0;
	/* th_export_anon_path() keeps every '/' and replaces each run between them, and joining
	 * only adds or drops a '/': the pseudonyms of the names, joined, are the pseudonym of the
	 * joined path. Not when the path was cut (a name cut short has a pseudonym of its own)
	 * or its pseudonym does not fit: those few are done the long way, each time. */
	if (!is_cut && name_pseudonyms(n, a, chain, depth) == 0) {
		*apath_len = join(n, chain, depth, true, apath, apath_size, &is_cut);
		if (!is_cut) {
			keep(n, e, t, until, path, len, apath, *apath_len);
			return len;
		}
	}
	*apath_len = th_export_anon_path(a, path, len, apath, apath_size);
	return len;
}

size_t
th_export_names_path(struct th_export_names *n, const struct th_addr *server, const uint8_t *fh,
	unsigned int fh_len, uint64_t t_ns, char *out, size_t size, uint32_t *mode)
{
	struct name_ent *e;
	uint64_t until = UINT64_MAX;

	if (mode != NULL)
		*mode = 0;
	if (size == 0)
		return 0;
	out[0] = '\0';
	/* The file's own name first: its kept path holds while every name on it does. */
	e = find(n, server, fh, fh_len, t_ns, &until);
	if (e == NULL)
		return 0;
	if (mode != NULL)
		*mode = e->mode;
	return path_from(n, NULL, e, t_ns, until, out, size, NULL, 0, NULL);
}

size_t
th_export__names_path_anon(struct th_export_names *n, const struct th_export_anon *a,
	const struct th_addr *server, const uint8_t *fh, unsigned int fh_len, uint64_t t_ns,
	char *path, size_t path_size, char *apath, size_t apath_size, size_t *apath_len,
	uint32_t *mode)
{
	struct name_ent *e;
	uint64_t until = UINT64_MAX;

	*apath_len = 0;
	*mode = 0;
	if (path_size == 0 || apath_size == 0)
		return 0;
	path[0] = apath[0] = '\0';
	e = find(n, server, fh, fh_len, t_ns, &until);
	if (e == NULL)
		return 0;
	*mode = e->mode;
	return path_from(n, a, e, t_ns, until, path, path_size, apath, apath_size, apath_len);
}

/* Keys before @p count in a max-heap by (start, entry), with the one at @p i sifted down. */
static void
sift_down(struct order_key *k, size_t i, size_t count)
{
	struct order_key v = k[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= count)
			break;
		if (c + 1 < count &&
			(k[c].from_ns < k[c + 1].from_ns ||
				(k[c].from_ns == k[c + 1].from_ns && k[c].i < k[c + 1].i)))
			c++;
		if (v.from_ns > k[c].from_ns || (v.from_ns == k[c].from_ns && v.i > k[c].i))
			break;
		k[i] = k[c];
		i = c;
	}
	k[i] = v;
}

long
th_export__names_sort(struct th_export_names *n)
{
	struct order_key *k;

	if (n->ent_size == sizeof(struct name_ent))
		return -EINVAL;
	free(n->order);
	n->order = NULL;
	if (n->count == 0)
		return 0;
	k = malloc(n->count * sizeof(*k));
	if (k == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n->count; i++)
		k[i] = (struct order_key){n->e[i].from_ns, (uint32_t)i};
	/* A heapsort, in place: qsort() may sort a copy, memory the budget did not count. */
	for (size_t i = n->count / 2; i-- > 0;)
		sift_down(k, i, n->count);
	for (size_t end = n->count; end-- > 1;) {
		struct order_key top = k[0];

		k[0] = k[end];
		k[end] = top;
		sift_down(k, 0, end);
	}
	n->order = k;
	return (long)n->count;
}

void
th_export__names_listed(const struct th_export_names *n, size_t i, struct th_trace_name *r)
{
	const struct name_ent *e = &n->e[n->order[i].i];

	r->from_ns = e->from_ns;
	r->to_ns = e->to_ns;
	r->server = e->server;
	r->fh_len = e->fh_len;
	memcpy(r->fh, e->fh, e->fh_len);
	r->dir_fh_len = e->dir_len;
	memcpy(r->dir_fh, e->dir, e->dir_len);
	r->mode = e->mode;
	r->name_len = e->name_len;
	memcpy(r->name, n->arena + e->name_off, e->name_len);
	r->name[e->name_len] = '\0';
}

void
th_export__names_listed_prefetch(const struct th_export_names *n, size_t i, bool is_dir)
{
	const struct name_ent *e = &n->e[n->order[i].i];

	if (!is_dir) {
		for (size_t off = 0; off < sizeof(*e); off += 64)
			__builtin_prefetch((const char *)e + off);
		return;
	}
	__builtin_prefetch(n->arena + e->name_off);
	if (e->dir_len > 0)
		th_export__names_prefetch(n, key_hash(&e->server, e->dir, e->dir_len), false);
}

size_t
th_export__names_listed_path(struct th_export_names *n, const struct th_export_anon *a, size_t i,
	char *path, size_t path_size, char *apath, size_t apath_size, size_t *apath_len)
{
	struct name_ent *e = &n->e[n->order[i].i];

	if (a != NULL)
		*apath_len = 0;
	if (path_size == 0 || (a != NULL && apath_size == 0))
		return 0;
	path[0] = '\0';
	if (a != NULL)
		apath[0] = '\0';
	/* Walked up from this name itself, not from whichever of its handle's names find()
	 * takes (two links made at once): each binding's row shows its own name. Its path
	 * holds until it ends, or a name of a directory on it does. */
	return path_from(n, a, e, e->from_ns, e->to_ns != 0 ? e->to_ns : UINT64_MAX, path,
		path_size, apath, apath_size, apath_len);
}
