/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handle-to-name map: (server, directory handle, name) -> handle, each
 * with the time it became valid. Ending a name emits it with its interval.
 * Hard links are separate (directory, name) keys for one handle, so every
 * name of a file is kept. Each name carries the file's mode as the reply
 * that bound it showed it; a later reply showing another mode (a chmod)
 * ends the name's interval and starts one with the new mode. Bounded: the
 * oldest name is pushed out (emitted as still valid, counted) when the map
 * is full.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session_private.h"

struct name_ent {
	uint64_t from_ns;
	uint32_t hnext; /* hash chain */
	uint32_t prev;  /* age list (head: newest) or free list */
	uint32_t next;
	uint32_t hash;
	uint32_t mode; /* st_mode-style; 0 unknown */
	struct th_addr server;
	uint8_t dir_len; /* 0 with fh_len 0: free */
	uint8_t fh_len;
	uint16_t name_len;
	uint8_t is_used;
	uint8_t dir[TH_SESS_FH_MAX];
	uint8_t fh[TH_SESS_FH_MAX];
	char name[TH_SESS_NAME_MAX + 1];
};

struct names {
	struct name_ent *e;
	uint32_t *bucket;
	uint32_t n;
	uint32_t free;
	uint32_t head, tail;
};

struct names *
names_create(uint32_t entries, size_t *memory)
{
	struct names *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->n = entries;
	n->e = calloc(entries, sizeof(*n->e));
	n->bucket = malloc(sizeof(*n->bucket) * entries);
	if (n->e == NULL || n->bucket == NULL) {
		names_free(n);
		return NULL;
	}
	for (uint32_t i = 0; i < entries; i++) {
		n->bucket[i] = NIL;
		n->e[i].next = i + 1 < entries ? i + 1 : NIL;
	}
	n->free = 0;
	n->head = n->tail = NIL;
	*memory += sizeof(*n) + (sizeof(*n->e) + sizeof(*n->bucket)) * (size_t)entries;
	return n;
}

void
names_free(struct names *n)
{
	if (n == NULL)
		return;
	free(n->e);
	free(n->bucket);
	free(n);
}

static uint32_t
key_hash(const struct th_addr *server, const uint8_t *dir, unsigned int dir_len, const char *name,
	unsigned int name_len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint8_t l = (uint8_t)dir_len;

	h = th_sat_hash_step(h, server->b, sizeof(server->b));
	h = th_sat_hash_step(h, &l, 1);
	h = th_sat_hash_step(h, dir, dir_len);
	h = th_sat_hash_step(h, name, name_len);
	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t
slot(const struct names *n, uint32_t hash)
{
	return (uint32_t)(((uint64_t)hash * n->n) >> 32);
}

static uint32_t
find(const struct names *n, uint32_t hash, const struct th_addr *server, const uint8_t *dir,
	unsigned int dir_len, const char *name, unsigned int name_len)
{
	for (uint32_t i = n->bucket[slot(n, hash)]; i != NIL; i = n->e[i].hnext) {
		const struct name_ent *e = &n->e[i];

		if (e->hash == hash && e->dir_len == dir_len && e->name_len == name_len &&
			memcmp(&e->server, server, sizeof(*server)) == 0 &&
			memcmp(e->dir, dir, dir_len) == 0 && memcmp(e->name, name, name_len) == 0)
			return i;
	}
	return NIL;
}

static void
emit(struct th_sess_table *t, const struct name_ent *e, uint64_t to_ns)
{
	struct th_sess_name out;

	t->ctr.names++;
	if (t->name_cb == NULL)
		return;
	out.server = e->server;
	out.dir_fh_len = e->dir_len;
	memcpy(out.dir_fh, e->dir, e->dir_len);
	out.fh_len = e->fh_len;
	memcpy(out.fh, e->fh, e->fh_len);
	out.from_ns = e->from_ns;
	out.to_ns = to_ns;
	out.mode = e->mode;
	out.name_len = e->name_len;
	memcpy(out.name, e->name, e->name_len);
	out.name[e->name_len] = '\0';
	t->name_cb(t->ctx, &out);
}

/* Unlink entry i from its chain and the age list, and free it. */
static void
drop(struct names *n, uint32_t i)
{
	struct name_ent *e = &n->e[i];
	uint32_t *p = &n->bucket[slot(n, e->hash)];

	while (*p != i)
		p = &n->e[*p].hnext;
	*p = e->hnext;
	if (e->prev != NIL)
		n->e[e->prev].next = e->next;
	else
		n->head = e->next;
	if (e->next != NIL)
		n->e[e->next].prev = e->prev;
	else
		n->tail = e->prev;
	e->is_used = 0;
	e->next = n->free;
	n->free = i;
}

void
names_add(struct th_sess_table *t, const struct th_addr *server, const uint8_t *dir,
	unsigned int dir_len, const char *name, unsigned int name_len, const uint8_t *fh,
	unsigned int fh_len, uint32_t mode, uint64_t at)
{
	struct names *n = t->names;
	uint32_t hash, i;
	struct name_ent *e;

	/* A LOOKUP of "." or ".." answers with the directory or its parent: not a name of it
	 * in that directory. */
	if (n == NULL || n->n == 0 || fh_len == 0 || !is_component(name, name_len))
		return;
	hash = key_hash(server, dir, dir_len, name, name_len);
	i = find(n, hash, server, dir, dir_len, name, name_len);
	if (i != NIL) {
		e = &n->e[i];
		/* The same name for the same handle: nothing changed (a repeated LOOKUP), unless
		 * this reply shows a mode the entry lacked (filled in) or another one. */
		if (e->fh_len == fh_len && memcmp(e->fh, fh, fh_len) == 0) {
			if (mode == 0 || mode == e->mode)
				return;
			if (e->mode == 0) {
				e->mode = mode;
				return;
			}
			/* A reply to a call from before the entry began (ops come in reply
			 * order) shows an older mode than the one that bound it. */
			if (at < e->from_ns)
				return;
		} else if (at < e->from_ns) {
			/* A reply to an older call names another file: what the name meant
			 * until the entry began, which stays. */
			struct name_ent old = *e;

			old.fh_len = (uint8_t)fh_len;
			memcpy(old.fh, fh, fh_len);
			old.mode = mode;
			old.from_ns = at;
			emit(t, &old, e->from_ns);
			return;
		}
		/* The name now means another file, or the file another mode: the old
		 * meaning ended. */
		emit(t, e, at);
		drop(n, i);
	}
	if (n->free == NIL) {
		i = n->tail;
		t->ctr.names_evicted++;
		emit(t, &n->e[i], 0);
		drop(n, i);
	}
	i = n->free;
	e = &n->e[i];
	n->free = e->next;
	e->from_ns = at;
	e->hash = hash;
	e->mode = mode;
	e->server = *server;
	e->dir_len = (uint8_t)dir_len;
	memcpy(e->dir, dir, dir_len);
	e->fh_len = (uint8_t)fh_len;
	memcpy(e->fh, fh, fh_len);
	e->name_len = (uint16_t)name_len;
	memcpy(e->name, name, name_len);
	e->name[name_len] = '\0';
	e->is_used = 1;
	e->hnext = n->bucket[slot(n, hash)];
	n->bucket[slot(n, hash)] = i;
	e->prev = NIL;
	e->next = n->head;
	if (n->head != NIL)
		n->e[n->head].prev = i;
	else
		n->tail = i;
	n->head = i;
}

unsigned int
names_end(struct th_sess_table *t, const struct th_addr *server, const uint8_t *dir,
	unsigned int dir_len, const char *name, unsigned int name_len, uint64_t at, uint8_t *fh,
	uint32_t *mode)
{
	struct names *n = t->names;
	unsigned int fh_len;
	uint32_t i;

	if (n == NULL || n->n == 0 || name_len == 0)
		return 0;
	i = find(n, key_hash(server, dir, dir_len, name, name_len), server, dir, dir_len, name,
		name_len);
	if (i == NIL)
		return 0;
	fh_len = n->e[i].fh_len;
	if (fh != NULL)
		memcpy(fh, n->e[i].fh, fh_len);
	if (mode != NULL)
		*mode = n->e[i].mode;
	emit(t, &n->e[i], at);
	drop(n, i);
	return fh_len;
}

void
names_clock_back(struct th_sess_table *t, uint64_t back_ns)
{
	struct names *n = t->names;

	if (n == NULL)
		return;
	for (uint32_t i = n->head; i != NIL; i = n->e[i].next)
		n->e[i].from_ns = earlier(n->e[i].from_ns, back_ns);
}

void
names_flush(struct th_sess_table *t)
{
	struct names *n = t->names;

	if (n == NULL)
		return;
	while (n->tail != NIL) {
		uint32_t i = n->tail;

		emit(t, &n->e[i], 0);
		drop(n, i);
	}
}
