/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Call/reply matching (lib/xid): keys, duplicates, aging, a full set,
 * flush, removal and the counters a user reads in the statistics block.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "addr_build.h"

#include "th_xid.h"

#define SEC 1000000000ull
#define PROG 100003 /* NFS */
#define VERS 3
#define MAX_EMITTED 4096

/* What the emit callback saw, in order. */
struct sink {
	unsigned count;
	struct th_op ops[MAX_EMITTED];
};

static void
on_emit(void *ctx, struct th_op *op)
{
	struct sink *s = ctx;

	assert_true(s->count < MAX_EMITTED);
	s->ops[s->count++] = *op;
}

static struct sink *
sink_new(void)
{
	struct sink *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

/* Client 10.0.0.<host>:<port> to 10.0.0.100:2049 over TCP. */
static struct th_xid_key
key_of(uint8_t host, uint16_t port, uint32_t xid)
{
	struct th_xid_key k;

	memset(&k, 0, sizeof(k));
	set_v4(&k.client, 10, 0, 0, host);
	set_v4(&k.server, 10, 0, 0, 100);
	k.client_port = port;
	k.server_port = 2049;
	k.xid = xid;
	k.transport = TH_PKT_L4_TCP;
	return k;
}

/* Enter a call, its procedure a mark so the test can tell which call it is. */
static struct th_op *
enter(struct th_xid_table *t, const struct th_xid_key *k, uint64_t now, uint32_t mark)
{
	struct th_op *op = th_xid_call(t, k, PROG, VERS, mark, now);

	assert_non_null(op);
	assert_int_equal(op->dup_calls, 0);
	assert_int_equal(op->prog, PROG);
	assert_int_equal(op->vers, VERS);
	assert_int_equal(op->proc, mark);
	op->xid = k->xid;
	op->call_first_ns = now;
	return op;
}

static void
test_create_invalid(void **state)
{
	struct sink *s = sink_new();

	(void)state;
	errno = 0;
	assert_null(th_xid_table_create(0, SEC, on_emit, s));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(th_xid_table_create(64, SEC, NULL, s));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(th_xid_table_create((1u << 26) + 1, SEC, on_emit, s));
	assert_int_equal(errno, EINVAL);
	free(s);
}

static void
test_same_xid_two_clients(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(1024, 60 * SEC, on_emit, s);
	struct th_xid_key a = key_of(1, 800, 0x1000);
	struct th_xid_key b = key_of(2, 800, 0x1000);  /* other client, same port and XID */
	struct th_xid_key a2 = key_of(1, 801, 0x1000); /* other process on client 1 */
	struct th_op *oa, *ob, *oa2;

	(void)state;
	assert_non_null(t);
	oa = enter(t, &a, 1, 1);
	ob = enter(t, &b, 2, 2);
	oa2 = enter(t, &a2, 3, 3);
	assert_ptr_not_equal(oa, ob);
	assert_ptr_not_equal(oa, oa2);
	assert_int_equal(th_xid_table_count(t), 3);
	assert_int_equal(th_xid_table_counters(t)->calls, 3);
	assert_int_equal(th_xid_table_counters(t)->calls_dup, 0);

	assert_ptr_equal(th_xid_find(t, &a), oa);
	assert_ptr_equal(th_xid_find(t, &b), ob);
	assert_ptr_equal(th_xid_find(t, &a2), oa2);
	assert_int_equal(th_xid_find(t, &b)->proc, 2);
	assert_int_equal(s->count, 0);
	th_xid_table_free(t);
	free(s);
}

static void
test_find_needs_exact_key(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(256, 60 * SEC, on_emit, s);
	struct th_xid_key k = key_of(1, 800, 0xabcd), q;
	struct th_op *op;

	(void)state;
	assert_non_null(t);
	op = enter(t, &k, 10, 7);

	q = k;
	q.transport = TH_PKT_L4_UDP;
	assert_null(th_xid_find(t, &q));
	q = k;
	q.server_port = 2050;
	assert_null(th_xid_find(t, &q));
	q = k;
	q.client_port = 799;
	assert_null(th_xid_find(t, &q));
	q = k;
	set_v4(&q.server, 10, 0, 0, 101);
	assert_null(th_xid_find(t, &q));
	q = k;
	set_v4(&q.client, 10, 0, 0, 2);
	assert_null(th_xid_find(t, &q));
	q = k;
	q.xid = 0xabce;
	assert_null(th_xid_find(t, &q));
	/* Client and server swapped is another exchange. */
	q = k;
	q.client = k.server;
	q.server = k.client;
	q.client_port = k.server_port;
	q.server_port = k.client_port;
	assert_null(th_xid_find(t, &q));

	assert_ptr_equal(th_xid_find(t, &k), op);
	/* Finding leaves the call waiting. */
	assert_ptr_equal(th_xid_find(t, &k), op);
	assert_int_equal(th_xid_table_count(t), 1);
	th_xid_table_free(t);
	free(s);
}

static void
test_duplicate_call(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(256, 60 * SEC, on_emit, s);
	struct th_xid_key k = key_of(1, 800, 42);
	struct th_op *op;

	(void)state;
	assert_non_null(t);
	op = enter(t, &k, 100, 9);
	assert_null(th_xid_call(t, &k, PROG, VERS, 9, 200));
	assert_int_equal(op->dup_calls, 1);
	assert_null(th_xid_call(t, &k, PROG, VERS, 9, 300));
	assert_int_equal(op->dup_calls, 2);
	/* Nothing else changed: the first call's fields and time stay. */
	assert_int_equal(op->proc, 9);
	assert_int_equal(op->call_first_ns, 100);
	assert_int_equal(th_xid_table_count(t), 1);
	assert_int_equal(th_xid_table_counters(t)->calls, 1);
	assert_int_equal(th_xid_table_counters(t)->calls_dup, 2);
	assert_int_equal(s->count, 0);

	/* The duplicates do not restart the clock: the call ages from its first copy. */
	assert_int_equal(th_xid_table_age(t, 100 + 60 * SEC), 1);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].dup_calls, 2);
	th_xid_table_free(t);
	free(s);
}

/*
 * A client that sends another procedure under the XID of a call still waiting has given that
 * call up (a new process, an XID counter that wrapped): the new call is no retransmission. The
 * old one leaves unmatched, counted by its own reason, and the reply answers the new one.
 */
static void
test_xid_reused_by_other_proc(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(256, 60 * SEC, on_emit, s);
	struct th_xid_key k = key_of(1, 800, 42);
	const struct th_xid_counters *c;
	struct th_op *op;

	(void)state;
	assert_non_null(t);
	enter(t, &k, 100, 1);                        /* GETATTR */
	op = th_xid_call(t, &k, PROG, VERS, 4, 200); /* ACCESS under its XID */
	assert_non_null(op);
	assert_int_equal(op->proc, 4);
	assert_int_equal(op->dup_calls, 0);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].kind, TH_OP_CALL_ONLY);
	assert_int_equal(s->ops[0].proc, 1);
	assert_int_equal(s->ops[0].call_first_ns, 100);
	assert_ptr_equal(th_xid_find(t, &k), op);
	assert_int_equal(th_xid_table_count(t), 1);

	/* Another version of the program is another call too; the same one again is a dup. */
	op->call_first_ns = 200;
	op = th_xid_call(t, &k, PROG, 4, 4, 300);
	assert_non_null(op);
	assert_int_equal(s->count, 2);
	assert_null(th_xid_call(t, &k, PROG, 4, 4, 400));
	assert_int_equal(op->dup_calls, 1);

	c = th_xid_table_counters(t);
	assert_int_equal(c->calls, 3);
	assert_int_equal(c->calls_reused, 2);
	assert_int_equal(c->calls_dup, 1);
	assert_int_equal(c->unmatched_calls, 2);
	th_xid_remove(t, op);
	assert_int_equal(c->matched + c->unmatched_calls, c->calls);
	assert_int_equal(th_xid_table_count(t), 0);
	th_xid_table_free(t);
	free(s);
}

static void
test_aging(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(1024, 2 * SEC, on_emit, s);
	struct th_xid_key k1 = key_of(1, 800, 1), k2 = key_of(1, 800, 2);
	uint64_t t0 = 1000 * SEC;

	(void)state;
	assert_non_null(t);
	enter(t, &k1, t0, 1);
	enter(t, &k2, t0 + SEC, 2);

	assert_int_equal(th_xid_table_age(t, t0), 0);
	assert_int_equal(th_xid_table_age(t, t0 + 2 * SEC - 1), 0);
	assert_int_equal(s->count, 0);
	assert_int_equal(th_xid_table_count(t), 2);

	assert_int_equal(th_xid_table_age(t, t0 + 2 * SEC), 1);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].kind, TH_OP_CALL_ONLY);
	assert_int_equal(s->ops[0].xid, 1);
	assert_int_equal(s->ops[0].proc, 1);
	assert_null(th_xid_find(t, &k1));
	assert_non_null(th_xid_find(t, &k2));

	/* A clock that steps back ages nothing. */
	assert_int_equal(th_xid_table_age(t, t0 - SEC), 0);

	assert_int_equal(th_xid_table_age(t, t0 + 3 * SEC), 1);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->ops[1].xid, 2);
	assert_int_equal(s->ops[1].kind, TH_OP_CALL_ONLY);
	assert_int_equal(th_xid_table_count(t), 0);
	assert_int_equal(th_xid_table_counters(t)->unmatched_calls, 2);
	assert_int_equal(th_xid_table_counters(t)->table_full, 0);
	th_xid_table_free(t);
	free(s);
}

/* A big table is aged a slice at a time, but repeated calls cover all of it. */
static void
test_aging_large_table(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(65536, SEC, on_emit, s);
	uint32_t i, total = 0;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < 2000; i++) {
		struct th_xid_key k = key_of((uint8_t)(i % 200), (uint16_t)(700 + i / 200), i);

		enter(t, &k, 5, i);
	}
	assert_int_equal(th_xid_table_count(t), 2000);
	for (i = 0; i < 64 && total < 2000; i++)
		total += th_xid_table_age(t, 5 + SEC);
	assert_int_equal(total, 2000);
	assert_int_equal(s->count, 2000);
	assert_int_equal(th_xid_table_count(t), 0);
	th_xid_table_free(t);
	free(s);
}

/*
 * Reply bytes of a connection were lost: its calls sent before the gap
 * leave after the gap timeout, counted by that reason; calls sent after
 * the gap and calls of other connections wait the full timeout.
 */
static void
test_gap_expires_calls_before_it(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(1024, 60 * SEC, on_emit, s);
	struct th_xid_key before = key_of(1, 800, 1), after = key_of(1, 800, 2);
	struct th_xid_key other = key_of(2, 800, 3), flow = key_of(1, 800, 0xdead);
	uint64_t t0 = 1000 * SEC;

	(void)state;
	assert_non_null(t);
	th_xid_table_set_gap_timeout(t, 2 * SEC);
	enter(t, &before, t0, 1);
	enter(t, &other, t0, 3);
	th_xid_reply_gap(t, &flow, t0 + SEC); /* the xid of the flow key does not matter */
	enter(t, &after, t0 + SEC + 1, 2);

	assert_int_equal(th_xid_table_age(t, t0 + 2 * SEC - 1), 0);
	assert_int_equal(s->count, 0);
	assert_int_equal(th_xid_table_age(t, t0 + 2 * SEC), 1);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].kind, TH_OP_CALL_ONLY);
	assert_int_equal(s->ops[0].proc, 1);
	assert_null(th_xid_find(t, &before));
	assert_int_equal(th_xid_table_counters(t)->gap_expired, 1);
	assert_int_equal(th_xid_table_counters(t)->unmatched_calls, 1);

	/* Long past the gap timeout, the others still wait for their replies. */
	assert_int_equal(th_xid_table_age(t, t0 + 30 * SEC), 0);
	assert_non_null(th_xid_find(t, &after));
	assert_non_null(th_xid_find(t, &other));

	/* ... until the full timeout, which is not counted as a gap. */
	assert_int_equal(th_xid_table_age(t, t0 + 62 * SEC), 2);
	assert_int_equal(th_xid_table_counters(t)->gap_expired, 1);
	assert_int_equal(th_xid_table_counters(t)->unmatched_calls, 3);
	th_xid_table_free(t);
	free(s);
}

/* Without a gap timeout (the table's default) a gap changes nothing. */
static void
test_gap_timeout_off(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(1024, 60 * SEC, on_emit, s);
	struct th_xid_key k = key_of(1, 800, 1);

	(void)state;
	assert_non_null(t);
	enter(t, &k, SEC, 1);
	th_xid_reply_gap(t, &k, 2 * SEC);
	assert_int_equal(th_xid_table_age(t, 30 * SEC), 0);
	assert_non_null(th_xid_find(t, &k));
	assert_int_equal(th_xid_table_counters(t)->gap_expired, 0);
	th_xid_table_free(t);
	free(s);
}

/* A replayed file moves the clock by seconds between agings: one call then covers the table. */
static void
test_aging_clock_step(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(65536, SEC, on_emit, s);
	uint32_t i;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < 2000; i++) {
		struct th_xid_key k = key_of((uint8_t)(i % 200), (uint16_t)(700 + i / 200), i);

		enter(t, &k, 5, i);
	}
	assert_int_equal(th_xid_table_age(t, 6), 0);
	assert_int_equal(th_xid_table_age(t, 6 + 2 * SEC), 2000);
	assert_int_equal(s->count, 2000);
	th_xid_table_free(t);
	free(s);
}

/* A table of 8 calls is one set of 8 ways: the 9th call pushes out the oldest. */
static void
test_full_set_pushes_oldest(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(8, 60 * SEC, on_emit, s);
	struct th_xid_key k;
	uint32_t i;

	(void)state;
	assert_non_null(t);
	/* Enter out of time order so "oldest" is not "first entered". */
	for (i = 0; i < 8; i++) {
		k = key_of(1, 800, 100 + i);
		enter(t, &k, 1000 - i, i);
	}
	assert_int_equal(th_xid_table_count(t), 8);
	assert_int_equal(s->count, 0);

	k = key_of(1, 800, 200);
	enter(t, &k, 2000, 99);
	assert_int_equal(th_xid_table_count(t), 8);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ops[0].kind, TH_OP_CALL_ONLY);
	assert_int_equal(s->ops[0].xid, 107); /* entered at 993, the oldest */
	assert_int_equal(th_xid_table_counters(t)->table_full, 1);
	assert_int_equal(th_xid_table_counters(t)->unmatched_calls, 1);
	k = key_of(1, 800, 107);
	assert_null(th_xid_find(t, &k));
	k = key_of(1, 800, 200);
	assert_int_equal(th_xid_find(t, &k)->proc, 99);

	/* Then 106 (994), 105 (995), ... */
	for (i = 0; i < 7; i++) {
		k = key_of(2, 800, 300 + i);
		enter(t, &k, 3000 + i, 300 + i);
		assert_int_equal(th_xid_table_count(t), 8);
		assert_int_equal(s->ops[s->count - 1].xid, 106 - i);
	}
	assert_int_equal(th_xid_table_counters(t)->table_full, 8);
	th_xid_table_free(t);
	free(s);
}

static void
test_never_holds_more_than_size(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(100, 60 * SEC, on_emit, s);
	const struct th_xid_counters *c;
	uint32_t i, max = 0;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < 2000; i++) {
		struct th_xid_key k = key_of((uint8_t)(i % 250), 900, i * 7919u);

		enter(t, &k, i + 1, i);
		if (th_xid_table_count(t) > max)
			max = th_xid_table_count(t);
	}
	/* 100 rounds up to 128. */
	assert_true(max <= 128);
	assert_true(max >= 100);
	c = th_xid_table_counters(t);
	assert_int_equal(c->calls, 2000);
	assert_int_equal(c->table_full, s->count);
	assert_int_equal(s->count + th_xid_table_count(t), 2000);
	assert_true(th_xid_table_memory(t) >= 128 * sizeof(struct th_op));
	th_xid_table_free(t);
	free(s);
}

static void
test_flush(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(64, 60 * SEC, on_emit, s);
	uint32_t i, seen = 0;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < 5; i++) {
		struct th_xid_key k = key_of(1, 800, 10 + i);

		enter(t, &k, 1, i);
	}
	assert_int_equal(th_xid_table_flush(t), 5);
	assert_int_equal(s->count, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(s->ops[i].kind, TH_OP_CALL_ONLY);
		seen |= 1u << s->ops[i].proc;
	}
	assert_int_equal(seen, 0x1f);
	assert_int_equal(th_xid_table_count(t), 0);
	assert_int_equal(th_xid_table_counters(t)->unmatched_calls, 5);
	assert_int_equal(th_xid_table_flush(t), 0);
	assert_int_equal(s->count, 5);
	th_xid_table_free(t);
	free(s);
}

static void
test_remove_frees_slot(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(8, 60 * SEC, on_emit, s);
	struct th_xid_key k;
	struct th_op *op;
	uint32_t i;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < 8; i++) {
		k = key_of(1, 800, i);
		enter(t, &k, 10 + i, i);
	}
	k = key_of(1, 800, 3);
	op = th_xid_find(t, &k);
	assert_non_null(op);
	th_xid_remove(t, op);
	assert_null(th_xid_find(t, &k));
	assert_int_equal(th_xid_table_count(t), 7);
	assert_int_equal(th_xid_table_counters(t)->matched, 1);

	/* The freed way takes a new call without pushing anyone out. */
	k = key_of(1, 800, 50);
	enter(t, &k, 100, 50);
	assert_int_equal(s->count, 0);
	assert_int_equal(th_xid_table_counters(t)->table_full, 0);
	assert_int_equal(th_xid_table_count(t), 8);

	/* The same call entered again after removal is new, not a duplicate. */
	k = key_of(2, 800, 60);
	op = enter(t, &k, 200, 60);
	th_xid_remove(t, op);
	op = enter(t, &k, 300, 61);
	assert_int_equal(th_xid_table_counters(t)->calls_dup, 0);
	th_xid_table_free(t);
	free(s);
}

/*
 * The op a match frees is the next one a call gets: a table with a few
 * calls waiting keeps writing the same few ops, which stay in the caches.
 */
static void
test_freed_op_reused_first(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(65536, 60 * SEC, on_emit, s);
	struct th_xid_key k;
	struct th_op *op, *again;
	uint32_t i;

	(void)state;
	assert_non_null(t);
	k = key_of(1, 800, 1);
	op = enter(t, &k, 1, 1);
	for (i = 2; i < 1000; i++) {
		th_xid_remove(t, op);
		k = key_of((uint8_t)i, 800, i);
		again = enter(t, &k, i, i);
		assert_ptr_equal(again, op);
		assert_ptr_equal(th_xid_find(t, &k), op);
	}
	th_xid_table_free(t);
	free(s);
}

/*
 * Random calls, matches, ageing and a final flush on a small table, checked
 * against a list of what should be waiting: every call is found with its own
 * op until it is matched, pushed out or aged out, and leaves exactly once.
 */
static void
test_random_calls_keep_their_ops(void **state)
{
	enum { N = 3000, KEYS = 200 };
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(64, 50, on_emit, s);
	static uint8_t waiting[N];
	uint32_t i, j, x = 12345, left = 0, matched = 0;

	(void)state;
	assert_non_null(t);
	memset(waiting, 0, sizeof(waiting));
	for (i = 0; i < N; i++) {
		struct th_xid_key k = key_of((uint8_t)(i % KEYS), 800, i);
		uint32_t e;

		x = x * 1103515245u + 12345u;
		enter(t, &k, i, i);
		waiting[i] = 1;
		if ((x >> 16) % 3 == 0 && i > 0) {
			/* A reply to one of the last 80 calls, some of them gone. */
			j = i - 1 - (x >> 8) % (i < 80 ? i : 80);
			k = key_of((uint8_t)(j % KEYS), 800, j);
			if (waiting[j]) {
				struct th_op *op = th_xid_find(t, &k);

				/* Pushed out or aged: then it was emitted, and is not found. */
				if (op != NULL) {
					assert_int_equal(op->xid, j);
					assert_int_equal(op->proc, j);
					th_xid_remove(t, op);
					waiting[j] = 0;
					matched++;
				}
			} else {
				assert_null(th_xid_find(t, &k));
			}
		}
		if (i % 16 == 0)
			th_xid_table_age(t, i);
		/* What left so far was emitted once each, with its own fields. */
		for (e = left; e < s->count; e++) {
			assert_int_equal(s->ops[e].kind, TH_OP_CALL_ONLY);
			assert_int_equal(s->ops[e].xid, s->ops[e].proc);
			assert_int_equal(waiting[s->ops[e].xid], 1);
			waiting[s->ops[e].xid] = 0;
		}
		s->count = left = 0;
	}
	th_xid_table_flush(t);
	for (i = 0; i < s->count; i++) {
		assert_int_equal(waiting[s->ops[i].xid], 1);
		waiting[s->ops[i].xid] = 0;
	}
	for (i = 0; i < N; i++)
		assert_int_equal(waiting[i], 0);
	assert_int_equal(th_xid_table_count(t), 0);
	assert_int_equal(th_xid_table_counters(t)->matched, matched);
	/* Each way out was taken: matched, pushed out of a full set, aged. */
	assert_true(matched > 100);
	assert_true(th_xid_table_counters(t)->table_full > 0);
	assert_true(
		th_xid_table_counters(t)->unmatched_calls > th_xid_table_counters(t)->table_full);
	th_xid_table_free(t);
	free(s);
}

/* A mixed run: every call ends up matched, unmatched or still waiting. */
static void
test_counters_add_up(void **state)
{
	struct sink *s = sink_new();
	struct th_xid_table *t = th_xid_table_create(512, 10 * SEC, on_emit, s);
	const struct th_xid_counters *c;
	uint32_t i;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < 300; i++) {
		struct th_xid_key k = key_of((uint8_t)(i % 50), 700, i);
		struct th_op *op;

		enter(t, &k, (uint64_t)i * SEC / 10, i);
		if (i % 3 == 0) {
			op = th_xid_find(t, &k);
			assert_non_null(op);
			th_xid_remove(t, op);
		} else if (i % 3 == 1) {
			assert_null(th_xid_call(t, &k, PROG, VERS, i, (uint64_t)i * SEC / 10 + 1));
		}
	}
	for (i = 0; i < 7; i++)
		th_xid_count_unmatched_reply(t);
	th_xid_table_age(t, 25 * SEC);
	c = th_xid_table_counters(t);
	assert_int_equal(c->calls, 300);
	assert_int_equal(c->matched, 100);
	assert_int_equal(c->calls_dup, 100);
	assert_int_equal(c->unmatched_replies, 7);
	assert_int_equal(c->unmatched_calls, s->count);
	assert_true(s->count > 0);
	assert_int_equal(c->matched + c->unmatched_calls + th_xid_table_count(t), c->calls);
	th_xid_table_flush(t);
	assert_int_equal(c->matched + c->unmatched_calls, c->calls);
	assert_int_equal(th_xid_table_count(t), 0);
	th_xid_table_free(t);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_invalid),
		cmocka_unit_test(test_same_xid_two_clients),
		cmocka_unit_test(test_find_needs_exact_key),
		cmocka_unit_test(test_duplicate_call),
		cmocka_unit_test(test_xid_reused_by_other_proc),
		cmocka_unit_test(test_aging),
		cmocka_unit_test(test_aging_large_table),
		cmocka_unit_test(test_gap_expires_calls_before_it),
		cmocka_unit_test(test_gap_timeout_off),
		cmocka_unit_test(test_aging_clock_step),
		cmocka_unit_test(test_full_set_pushes_oldest),
		cmocka_unit_test(test_never_holds_more_than_size),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_remove_frees_slot),
		cmocka_unit_test(test_freed_op_reused_first),
		cmocka_unit_test(test_random_calls_keep_their_ops),
		cmocka_unit_test(test_counters_add_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
