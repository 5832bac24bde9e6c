/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_SESSION_COMMON_H
#define TEST_SESSION_COMMON_H

/*
 * Helpers shared by the session tests: a table whose records and names are
 * collected into arrays, and builders for struct th_sess_op.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "addr_build.h"

#include "th_session.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)
#define MAX_OUT 256

struct out {
	unsigned int n_records;
	struct th_sess_record records[MAX_OUT];
	unsigned int n_names;
	struct th_sess_name names[MAX_OUT];
};

static inline void
on_record(void *ctx, const struct th_sess_record *r)
{
	struct out *o = ctx;

	if (o->n_records < MAX_OUT)
		o->records[o->n_records] = *r;
	o->n_records++;
}

static inline void
on_name(void *ctx, const struct th_sess_name *n)
{
	struct out *o = ctx;

	if (o->n_names < MAX_OUT)
		o->names[o->n_names] = *n;
	o->n_names++;
}

/* An op from client 10.1.0.<client>, uid, on server 10.0.0.1, handle "F<file>". The reply
 * comes 1 ms after the call. */
static inline struct th_sess_op
mk(enum th_sess_kind kind, unsigned int file, uint8_t client, uint32_t uid, uint64_t at)
{
	struct th_sess_op op;

	memset(&op, 0, sizeof(op));
	op.call_ns = at;
	op.reply_ns = at + 1 * MS;
	set_v4(&op.client, 10, 1, 0, client);
	set_v4(&op.server, 10, 0, 0, 1);
	op.uid = uid;
	op.gid = 100;
	op.kind = (uint8_t)kind;
	op.vers = 3;
	op.flags = TH_SESS_F_OK;
	op.fh_len = (uint8_t)snprintf((char *)op.fh, sizeof(op.fh), "F%u", file);
	return op;
}

static inline struct th_sess_op
mk_rw(enum th_sess_kind kind, unsigned int file, uint8_t client, uint32_t uid, uint64_t at,
	uint64_t offset, uint32_t count)
{
	struct th_sess_op op = mk(kind, file, client, uid, at);

	op.offset = offset;
	op.count = count;
	return op;
}

/* A name operation in directory "D<dir>". */
static inline struct th_sess_op
mk_name(enum th_sess_kind kind, unsigned int dir, const char *name, int result, uint64_t at)
{
	struct th_sess_op op = mk(kind, 0, 3, 1000, at);

	op.fh_len = (uint8_t)snprintf((char *)op.fh, sizeof(op.fh), "D%u", dir);
	op.name_len = (uint16_t)strlen(name);
	memcpy(op.name, name, op.name_len + 1);
	if (result >= 0)
		op.fh2_len = (uint8_t)snprintf((char *)op.fh2, sizeof(op.fh2), "F%d", result);
	return op;
}

static inline struct th_sess_table *
table_new(struct th_sess_config *c, struct out *o)
{
	struct th_sess_table *t;

	memset(o, 0, sizeof(*o));
	t = th_sess_create(c, on_record, on_name, o);
	assert_non_null(t);
	return t;
}

static inline void
small_config(struct th_sess_config *c)
{
	th_sess_config_defaults(c);
	c->files = 64;
	c->sessions = 64;
	c->clients = 16;
	c->names = 16;
}

static inline void
input(struct th_sess_table *t, struct th_sess_op op)
{
	th_sess_input(t, &op);
}

#endif /* TEST_SESSION_COMMON_H */
