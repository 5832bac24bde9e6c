/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Open/close inference (lib/session): each heuristic's edge, as a user of
 * the trace would notice it — how many opens come out, when they open and
 * close, how many bytes they moved, and whether they were cache reads.
 */

#include "test_session_common.h"

/* A table of small_config(); a test that changes the config calls rebuild(). */
struct fixture {
	struct th_sess_config c;
	struct out o;
	struct th_sess_table *t;
};

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fx == NULL)
		return -1;
	small_config(&fx->c);
	fx->t = th_sess_create(&fx->c, on_record, on_name, &fx->o);
	if (fx->t == NULL) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	th_sess_free(fx->t);
	free(fx);
	return 0;
}

/* A new table for the fixture's config as the test changed it; the old one goes. */
static struct th_sess_table *
rebuild(struct fixture *fx)
{
	th_sess_free(fx->t);
	fx->t = NULL;
	fx->t = table_new(&fx->c, &fx->o);
	return fx->t;
}

/* Reading from offset 0 again is a new open; an out-of-order 0 is not. */
static void
test_reread_from_zero(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 65536));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0 + 10 * MS, 65536, 65536));
	assert_int_equal(o->n_records, 0);
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0 + 20 * MS, 0, 65536));
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].open_ns, T0);
	assert_int_equal(o->records[0].close_ns, T0 + 11 * MS);
	assert_int_equal(o->records[0].transferred, 131072);
	assert_int_equal(o->records[0].seq_bytes, 131072);
	assert_int_equal(o->records[0].ops, 2);
	assert_int_equal(o->records[0].dir, TH_SESS_DIR_READ);
	assert_false(o->records[0].is_cache_hit);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].open_ns, T0 + 20 * MS);
	assert_int_equal(o->records[1].transferred, 65536);

	/* Read-ahead replies out of order: offset 0 after 64 KiB is still the first open. */
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + 1 * SEC, 65536, 65536));
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + 1 * SEC + 1 * MS, 0, 65536));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 3);
	assert_int_equal(o->records[2].ops, 2);
	assert_int_equal(o->records[2].transferred, 131072);
	assert_int_equal(o->records[2].rand_bytes, 131072);
}

/* Idle timeout: an op (or a tick) just before idle_ns keeps the open; at and after closes. */
static void
test_idle_boundary(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	const struct th_sess_config *c = &fx->c;
	uint64_t last;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 4096));
	last = T0 + 1 * MS;
	th_sess_tick(t, last + c->idle_ns - 1);
	assert_int_equal(o->n_records, 0);
	th_sess_tick(t, last + c->idle_ns);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].close_ns, last);
	th_sess_tick(t, last + c->idle_ns + 1);
	assert_int_equal(o->n_records, 1);

	/* The same boundary when the next op arrives before any tick. */
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0, 0, 4096));
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, last + c->idle_ns - 1, 4096, 4096));
	assert_int_equal(o->n_records, 1); /* just before: the same open */
	last = last + c->idle_ns - 1 + 1 * MS;
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, last + c->idle_ns, 8192, 4096));
	assert_int_equal(o->n_records, 2); /* exactly at: a new open */
	assert_int_equal(o->records[1].ops, 2);
	assert_int_equal(o->records[1].transferred, 8192);
	last = last + c->idle_ns + 1 * MS;
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, last + c->idle_ns + 1, 12288, 4096));
	assert_int_equal(o->n_records, 3); /* after: a new open */
	th_sess_flush(t);
	assert_int_equal(o->n_records, 4);
}

/* Two users reading one file at one client: two opens, neither closes the other. */
static void
test_interleaved_users(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1001, T0, 0, 4096));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1002, T0 + 1 * MS, 0, 4096));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1001, T0 + 2 * MS, 4096, 4096));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1002, T0 + 3 * MS, 4096, 4096));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1001, T0 + 4 * MS, 8192, 4096));
	/* Another client, same uid: also its own open. */
	input(t, mk_rw(TH_SESS_READ, 1, 4, 1001, T0 + 5 * MS, 0, 4096));
	assert_int_equal(o->n_records, 0);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 3);
	for (unsigned int i = 0; i < 3; i++) {
		const struct th_sess_record *r = &o->records[i];

		if (r->uid == 1001 && r->client.b[15] == 3) {
			assert_int_equal(r->transferred, 12288);
			assert_int_equal(r->ops, 3);
		} else if (r->uid == 1002) {
			assert_int_equal(r->transferred, 8192);
		} else {
			assert_int_equal(r->client.b[15], 4);
			assert_int_equal(r->transferred, 4096);
		}
	}
}

/* SETATTR size 0, WRITEs and COMMIT are one write open; the next save is another. */
static void
test_truncate_in_write_session(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;

	op = mk(TH_SESS_SETATTR, 1, 3, 1000, T0);
	op.flags |= TH_SESS_F_TRUNCATE | TH_SESS_F_HAS_SIZE;
	op.set_size = 0;
	op.size = 0;
	input(t, op);
	op = mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0 + 10 * MS, 0, 4096);
	op.flags |= TH_SESS_F_HAS_SIZE;
	op.size = 4096;
	input(t, op);
	op = mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0 + 20 * MS, 4096, 4096);
	op.flags |= TH_SESS_F_HAS_SIZE;
	op.size = 8192;
	input(t, op);
	input(t, mk(TH_SESS_COMMIT, 1, 3, 1000, T0 + 30 * MS));
	assert_int_equal(o->n_records, 0);

	/* The editor saves again: truncate to 0 starts the next write open. */
	op = mk(TH_SESS_SETATTR, 1, 3, 1000, T0 + 5 * SEC);
	op.flags |= TH_SESS_F_TRUNCATE | TH_SESS_F_HAS_SIZE;
	op.size = 0;
	input(t, op);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].dir, TH_SESS_DIR_WRITE);
	assert_int_equal(o->records[0].open_ns, T0);
	assert_int_equal(o->records[0].close_ns, T0 + 31 * MS);
	assert_int_equal(o->records[0].ops, 4);
	assert_int_equal(o->records[0].transferred, 8192);
	assert_int_equal(o->records[0].size, 8192);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].transferred, 0);
	assert_int_equal(o->records[1].size, 0);
	assert_int_equal(th_sess_counters(t)->bad_ops, 0); /* a shrink by truncate is fine */
}

/* Read a file, let the open close. */
static void
read_and_close(struct th_sess_table *t, unsigned int file, uint64_t at)
{
	struct th_sess_op op = mk_rw(TH_SESS_READ, file, 3, 1000, at, 0, 100);

	op.flags |= TH_SESS_F_EOF | TH_SESS_F_HAS_SIZE;
	op.size = 100;
	th_sess_input(t, &op);
	th_sess_tick(t, at + 60 * SEC);
}

/* A GETATTR within the window is a cache read, decided after confirm_ns; after it, none. */
static void
test_cache_read_window(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	const struct th_sess_config *c = &fx->c;
	struct th_sess_op op;
	uint64_t at = T0 + 3600 * SEC;

	read_and_close(t, 1, T0);
	read_and_close(t, 2, T0);
	assert_int_equal(o->n_records, 2);

	op = mk(TH_SESS_GETATTR, 1, 3, 1000, at);
	op.flags |= TH_SESS_F_HAS_SIZE;
	op.size = 100;
	input(t, op);
	th_sess_tick(t, at + 1 * MS + c->confirm_ns - 1);
	assert_int_equal(o->n_records, 2); /* lazily: a READ could still follow */
	th_sess_tick(t, at + 1 * MS + c->confirm_ns);
	assert_int_equal(o->n_records, 3);
	assert_true(o->records[2].is_cache_hit);
	assert_int_equal(o->records[2].transferred, 0);
	assert_int_equal(o->records[2].open_ns, at);
	assert_int_equal(o->records[2].close_ns, at + 1 * MS); /* the GETATTR's latency */
	assert_int_equal(o->records[2].size, 100);
	assert_int_equal(o->records[2].dir, TH_SESS_DIR_READ);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 1);

	/* File 2 was last read at T0 + 1 ms: at the window's end the GETATTR is ignored. */
	input(t, mk(TH_SESS_GETATTR, 2, 3, 1000, T0 + 1 * MS + c->cache_window_ns - 1));
	th_sess_tick(t, T0 + c->cache_window_ns + 10 * SEC);
	assert_int_equal(o->n_records, 4);
	assert_true(o->records[3].is_cache_hit);
	/* Its cache read refreshed the window; a different client never read it. */
	input(t, mk(TH_SESS_GETATTR, 2, 4, 1000, T0 + c->cache_window_ns + 11 * SEC));
	/* File 1's window ran out (refreshed at `at`). */
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at + 1 * MS + c->cache_window_ns));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 4);
}

/* Close-to-open: GETATTR (and ACCESS) then READs is an uncached open that began at the
 * GETATTR, not a cache read. */
static void
test_close_to_open_getattr(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	uint64_t at = T0 + 600 * SEC;

	read_and_close(t, 1, T0);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at));
	input(t, mk(TH_SESS_ACCESS, 1, 3, 1000, at + 2 * MS));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, at + 4 * MS, 0, 100));
	th_sess_tick(t, at + 10 * SEC);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	assert_false(o->records[1].is_cache_hit);
	assert_int_equal(o->records[1].open_ns, at);
	assert_int_equal(o->records[1].transferred, 100);
	assert_int_equal(o->records[1].ops, 3);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);
	assert_int_equal(th_sess_counters(t)->cache_reads_confirmed, 1);

	/* A partial read: the READ comes mid-file, still the same open. */
	at += 3600 * SEC;
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, at + 3 * MS, 8192, 4096));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 3);
	assert_false(o->records[2].is_cache_hit);
	assert_int_equal(o->records[2].open_ns, at);
	assert_int_equal(o->records[2].transferred, 4096);
}

/*
 * The capture's clock goes back 190 s (captures end to end, a clock step):
 * the open in progress ends at the step, and a GETATTR after it is a cache
 * read of the file the client wrote (with the user's access rights) before
 * it. Without the event the open begun before the step held every later one
 * back until the clock passed it again; with the write's history left ahead
 * of the clock, the GETATTR read as the client revalidating its own write
 * (dropped).
 */
static void
test_clock_back(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	const struct th_sess_config *c = &fx->c;
	struct th_sess_op op = mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0 + 100 * SEC, 0, 100);

	input(t, mk(TH_SESS_ACCESS, 1, 3, 1000, T0 + 100 * SEC - 2 * MS));
	input(t, op);
	th_sess_tick(t, T0 + 200 * SEC);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].dir, TH_SESS_DIR_WRITE);
	/* A read of file 2 in progress. */
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + 199 * SEC, 0, 100));

	memset(&op, 0, sizeof(op));
	op.kind = TH_SESS_CLOCK_BACK;
	op.call_ns = T0 + 10 * SEC;
	input(t, op);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].open_ns, T0 + 199 * SEC);
	assert_int_equal(o->records[1].transferred, 100);
	assert_int_equal(th_sess_counters(t)->clock_back, 1);

	/* The client holds the user's access rights: a GETATTR alone is an open. */
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 20 * SEC));
	/* Ops of a later open, past the confirm time: the GETATTR is decided. */
	input(t, mk_rw(TH_SESS_READ, 3, 4, 1000, T0 + 20 * SEC + c->confirm_ns + 10 * MS, 0, 10));
	assert_int_equal(o->n_records, 3);
	assert_true(o->records[2].is_cache_hit);
	assert_int_equal(o->records[2].open_ns, T0 + 20 * SEC);
	assert_int_equal(th_sess_counters(t)->phantoms_write_settle, 0);
}

/* ls -l: READDIR (or a LOOKUP burst in one directory) then GETATTRs on read files: no cache
 * reads. The same GETATTRs after a READDIRPLUS (which brought every entry's attributes, so
 * ls -l stats nothing) or after a path walk, or without a listing, are cache reads: the
 * rule, not luck, removes them. */
static void
test_ls_burst_no_cache_reads(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;
	uint64_t at = T0 + 600 * SEC;
	static const char *const names[] = {"a", "b", "c", "d"};

	for (unsigned int f = 1; f <= 3; f++)
		read_and_close(t, f, T0);
	assert_int_equal(o->n_records, 3);

	op = mk(TH_SESS_READDIR, 0, 3, 1000, at);
	op.fh_len = (uint8_t)snprintf((char *)op.fh, sizeof(op.fh), "D1");
	input(t, op);
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + (2 + f) * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 3);
	assert_int_equal(th_sess_counters(t)->phantoms_listing, 3);

	/* After READDIRPLUS, GETATTRs inside the listing window (not a burst) are opens. */
	at += 60 * SEC;
	op.kind = TH_SESS_READDIRPLUS;
	op.call_ns = at;
	op.reply_ns = at + MS;
	input(t, op);
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + f * 300 * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 6);
	assert_int_equal(th_sess_counters(t)->phantoms_listing, 3);

	/* READ-less LOOKUP burst in one directory (ls -l on NFSv2, or without READDIRPLUS). */
	at += 3600 * SEC;
	for (unsigned int i = 0; i < 4; i++)
		input(t, mk_name(TH_SESS_LOOKUP, 1, names[i], (int)i + 1, at + i * MS));
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + (10 + f) * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 6);
	assert_int_equal(th_sess_counters(t)->phantoms_listing, 6);

	/* LOOKUPs each in another directory are a path walk, not a listing. */
	at += 60 * SEC;
	for (unsigned int i = 0; i < 4; i++)
		input(t, mk_name(TH_SESS_LOOKUP, i + 1, names[i], (int)i + 1, at + i * MS));
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at + 10 * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 7);
	assert_true(o->records[6].is_cache_hit);

	/* An ACCESS with the GETATTR is open evidence even during a listing. */
	at += 60 * SEC;
	op.kind = TH_SESS_READDIR;
	op.call_ns = at;
	op.reply_ns = at + MS;
	input(t, op);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at + 2 * MS));
	input(t, mk(TH_SESS_ACCESS, 1, 3, 1000, at + 3 * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 8);
	assert_true(o->records[7].is_cache_hit);

	/* Control: the same GETATTRs with no listing around them. */
	at += 60 * SEC;
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + f * 2 * SEC));
	th_sess_tick(t, at + 60 * SEC);
	assert_int_equal(o->n_records, 11);
}

/* ls -l with nordirplus: READDIR, then an lstat of each entry, a reply apart. The window
 * follows the run of lstats, however long, and ends soon after it: the user's next command
 * (cat of a file the client holds) is a cache read even when it comes within a second of
 * the listing. A new listing does not end the old window for the GETATTRs still waiting. */
static void
test_ls_nordirplus_run(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;
	uint64_t at = T0 + 600 * SEC;

	for (unsigned int f = 1; f <= 31; f++)
		read_and_close(t, f, T0);
	assert_int_equal(o->n_records, 31);

	/* A directory of 30 files on a slow server: 40 ms an lstat, 1.2 s in all. */
	op = mk(TH_SESS_READDIR, 0, 3, 1000, at);
	op.fh_len = (uint8_t)snprintf((char *)op.fh, sizeof(op.fh), "D1");
	input(t, op);
	for (unsigned int f = 1; f <= 30; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + f * 40 * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 31);
	assert_int_equal(th_sess_counters(t)->phantoms_listing, 30);

	/* A short listing, then the user's cat 400 ms after its last lstat. */
	at += 60 * SEC;
	op.call_ns = at;
	op.reply_ns = at + MS;
	input(t, op);
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + f * 10 * MS));
	input(t, mk(TH_SESS_GETATTR, 31, 3, 1000, at + 430 * MS));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 32);
	assert_true(o->records[31].is_cache_hit);
	assert_int_equal(o->records[31].open_ns, at + 430 * MS);
	assert_int_equal(th_sess_counters(t)->phantoms_listing, 33);

	/* Another listing 200 ms after the first, before its GETATTRs are decided. */
	at += 60 * SEC;
	op.call_ns = at;
	op.reply_ns = at + MS;
	input(t, op);
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk(TH_SESS_GETATTR, f, 3, 1000, at + f * 10 * MS));
	op.call_ns = at + 200 * MS;
	op.reply_ns = at + 201 * MS;
	op.fh_len = (uint8_t)snprintf((char *)op.fh, sizeof(op.fh), "D2");
	input(t, op);
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 32);
	assert_int_equal(th_sess_counters(t)->phantoms_listing, 36);
}

/* stat: LOOKUP then a lone GETATTR on a file the client never read: nothing. */
static void
test_stat_alone(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_name(TH_SESS_LOOKUP, 1, "notes.txt", 5, T0));
	input(t, mk(TH_SESS_GETATTR, 5, 3, 1000, T0 + 2 * MS));
	th_sess_tick(t, T0 + 3600 * SEC);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 0);
	assert_int_equal(th_sess_counters(t)->getattr_no_history, 1);
}

/* Reading back what the client wrote: a GETATTR after the write is a cache read of the
 * written data (Linux sends none of its own after writing). With write_settle set, one
 * sooner than that is revalidation, unless an ACCESS says a user opened the file. */
static void
test_write_then_read_back(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_config *c = &fx->c;

	input(t, mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0, 0, 4096));
	input(t, mk(TH_SESS_COMMIT, 1, 3, 1000, T0 + 10 * MS));
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 500 * MS));
	th_sess_tick(t, T0 + 60 * SEC);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[0].dir, TH_SESS_DIR_READ);
	assert_true(o->records[0].is_cache_hit);
	assert_int_equal(o->records[1].dir, TH_SESS_DIR_WRITE);
	assert_int_equal(o->records[1].ops, 2);
	assert_int_equal(th_sess_counters(t)->phantoms_write_settle, 0);

	c->write_settle_ns = 2 * SEC;
	t = rebuild(fx);
	input(t, mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0, 0, 4096));
	input(t, mk(TH_SESS_COMMIT, 1, 3, 1000, T0 + 10 * MS));
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 500 * MS));
	th_sess_tick(t, T0 + 60 * SEC);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].dir, TH_SESS_DIR_WRITE);
	assert_int_equal(th_sess_counters(t)->phantoms_write_settle, 1);
	/* The same with an ACCESS: another user's open (cat right after touch). */
	input(t, mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0 + 100 * SEC, 0, 4096));
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1001, T0 + 100 * SEC + 500 * MS));
	input(t, mk(TH_SESS_ACCESS, 1, 3, 1001, T0 + 100 * SEC + 501 * MS));
	th_sess_tick(t, T0 + 160 * SEC);
	assert_int_equal(o->n_records, 3);
	assert_true(o->records[1].is_cache_hit);
	assert_int_equal(o->records[1].uid, 1001);
	/* Later, a cache read of the written data either way. */
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 220 * SEC));
	th_sess_tick(t, T0 + 230 * SEC);
	assert_int_equal(o->n_records, 4);
	assert_true(o->records[3].is_cache_hit);
}

/* CREATE starts the write open of the new file; the user's WRITEs join it. */
static void
test_create_then_write(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_name(TH_SESS_CREATE, 1, "new.c", 7, T0));
	input(t, mk_rw(TH_SESS_WRITE, 7, 3, 1000, T0 + 5 * MS, 0, 300));
	/* touch: a CREATE alone is a write open of 0 bytes. */
	input(t, mk_name(TH_SESS_CREATE, 1, "empty", 8, T0 + 6 * MS));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	for (unsigned int i = 0; i < 2; i++) {
		assert_int_equal(o->records[i].dir, TH_SESS_DIR_WRITE);
		if (o->records[i].fh[1] == '7') {
			assert_int_equal(o->records[i].open_ns, T0);
			assert_int_equal(o->records[i].transferred, 300);
			assert_int_equal(o->records[i].ops, 2);
		} else {
			assert_int_equal(o->records[i].fh[1], '8');
			assert_int_equal(o->records[i].transferred, 0);
		}
	}
}

/* A full table closes its least recently used opens early, counted, and never grows. */
static void
test_eviction_counted(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t;
	struct out *o = &fx->o;
	struct th_sess_config *c = &fx->c;
	size_t mem;

	c->sessions = 4;
	c->files = 64;
	t = rebuild(fx);
	mem = th_sess_memory(t);
	for (unsigned int f = 1; f <= 6; f++)
		input(t, mk_rw(TH_SESS_READ, f, 3, 1000, T0 + f * MS, 0, 10));
	assert_int_equal(th_sess_counters(t)->sessions_evicted, 2);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[0].fh[1], '1'); /* least recently used first */
	assert_int_equal(o->records[1].fh[1], '2');
	assert_int_equal(th_sess_memory(t), mem);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 6);

	small_config(c);
	c->files = 2;
	t = rebuild(fx);
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk_rw(TH_SESS_READ, f, 3, 1000, T0 + f * MS, 0, 10));
	assert_int_equal(th_sess_counters(t)->files_evicted, 1);
	assert_int_equal(o->n_records, 1);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 3);
}

/* Impossible values are counted and skipped; a size that shrinks is counted and believed. */
static void
test_bad_ops(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 1ull << 63, 10));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, (1ull << 63) - 5, 10));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 0)); /* no data, no eof */
	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 10);
	op.fh_len = 0;
	input(t, op);
	op.fh_len = 65;
	input(t, op);
	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 10);
	op.reply_ns = T0 - 1;
	input(t, op);
	/* A reply stamped a day and more after its call: its open would never age out. */
	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 10);
	op.reply_ns = T0 + 86400 * SEC + 1;
	input(t, op);
	op = mk(TH_SESS_LOOKUP, 1, 3, 1000, T0);
	op.name_len = 300;
	input(t, op);
	assert_int_equal(th_sess_counters(t)->bad_ops, 8);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 0);

	/* An empty READ at the end of the file is normal. */
	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 0);
	op.flags |= TH_SESS_F_EOF | TH_SESS_F_HAS_SIZE;
	op.size = 1000;
	input(t, op);
	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0 + 1 * MS, 0, 10);
	op.flags |= TH_SESS_F_HAS_SIZE;
	op.size = 10;
	input(t, op);
	assert_int_equal(th_sess_counters(t)->bad_ops, 9);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].size, 10);
}

/* Directory detail: READDIR pages are one directory read, MKDIR a directory write. Off by
 * default. */
static void
test_directory_detail(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t;
	struct out *o = &fx->o;
	struct th_sess_config *c = &fx->c;
	struct th_sess_op op;

	for (int detail = 0; detail < 2; detail++) {
		small_config(c);
		c->detail = detail ? TH_SESS_OPENS_DIRS : TH_SESS_OPENS;
		t = rebuild(fx);
		op = mk(TH_SESS_READDIRPLUS, 9, 3, 1000, T0);
		op.offset = 0;
		input(t, op);
		op = mk(TH_SESS_READDIRPLUS, 9, 3, 1000, T0 + 2 * MS);
		op.offset = 77;
		input(t, op);
		op = mk_name(TH_SESS_MKDIR, 9, "sub", 10, T0 + 5 * MS);
		op.flags |= TH_SESS_F_IS_DIR;
		input(t, op);
		th_sess_flush(t);
		if (!detail) {
			assert_int_equal(o->n_records, 0);
		} else {
			assert_int_equal(o->n_records, 2);
			assert_true(o->records[0].is_directory);
			assert_int_equal(o->records[0].dir, TH_SESS_DIR_WRITE); /* MKDIR, at once */
			assert_int_equal(o->records[0].fh[0], 'F');
			assert_true(o->records[1].is_directory);
			assert_int_equal(o->records[1].dir, TH_SESS_DIR_READ);
			assert_int_equal(o->records[1].ops, 2);
			assert_int_equal(o->records[1].close_ns, T0 + 3 * MS);
		}
	}
}

/* With two tables, a broadcast CREATE opens the new file only on its owner. */
static void
test_two_tables_owner(void **state)
{
	struct th_sess_config c;
	struct out o[2];
	struct th_sess_table *t[2];
	struct th_sess_op op = mk_name(TH_SESS_CREATE, 1, "x", 7, T0);
	unsigned int owner;

	(void)state;
	assert_true(th_sess_op_is_broadcast(&op));
	owner = th_sess_fh_owner(&op.server, op.fh2, op.fh2_len, 2);
	for (unsigned int i = 0; i < 2; i++) {
		small_config(&c);
		c.cores = 2;
		c.core_index = i;
		t[i] = table_new(&c, &o[i]);
		th_sess_input(t[i], &op);
		th_sess_flush(t[i]);
	}
	assert_int_equal(o[owner].n_records, 1);
	assert_int_equal(o[1 - owner].n_records, 0);
	for (unsigned int i = 0; i < 2; i++)
		th_sess_free(t[i]);
	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 1);
	assert_int_equal(
		th_sess_op_owner(&op, 2), th_sess_fh_owner(&op.server, op.fh, op.fh_len, 2));
	assert_int_equal(th_sess_op_owner(&op, 1), 0);
}

/* Random ops of every kind, random values, into tiny tables: every entry is accounted for
 * (records out equal opens evicted or closed), and nothing grows. ASan builds check memory. */
static void
test_random_ops_bounded(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t;
	struct out *o = &fx->o;
	struct th_sess_config *c = &fx->c;
	uint64_t x = 88172645463325252ull, at = T0;
	size_t mem;

	c->sessions = 8;
	c->files = 4;
	c->clients = 2;
	c->names = 2;
	c->detail = TH_SESS_OPENS_DIRS;
	t = rebuild(fx);
	mem = th_sess_memory(t);
	for (unsigned int i = 0; i < 200000; i++) {
		struct th_sess_op op;
		uint64_t r;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		r = x;
		at += (r >> 40) % (2 * SEC);
		op = mk_rw((enum th_sess_kind)(r % 19), (unsigned int)(r >> 8) % 7,
			(uint8_t)((r >> 12) % 4), 1000 + (uint32_t)((r >> 16) % 3), at,
			((r >> 20) % 4) * 4096, (uint32_t)((r >> 24) % 3) * 4096);
		op.flags = (uint8_t)(r >> 28);
		if ((r >> 36) % 50 == 0)
			op.fh_len = (uint8_t)(r >> 44);
		if ((r >> 36) % 3 == 0) {
			op.fh2_len = (uint8_t)snprintf(
				(char *)op.fh2, sizeof(op.fh2), "F%u", (unsigned int)(r >> 50) % 7);
			op.name_len = 1 + (uint16_t)((r >> 52) % 3);
			memcpy(op.name, "abc", op.name_len);
			op.name2_len = 1;
			op.name2[0] = 'z';
		}
		if ((r >> 56) % 64 == 0)
			op.reply_ns = 0;
		th_sess_input(t, &op);
		if ((r >> 58) % 8 == 0)
			th_sess_tick(t, at);
	}
	th_sess_flush(t);
	assert_int_equal(th_sess_memory(t), mem);
	assert_int_equal(th_sess_counters(t)->records, o->n_records);
	assert_true(o->n_records > 1000);
	assert_true(th_sess_counters(t)->bad_ops > 0);
}

/* Bad configurations are refused with EINVAL. */
static void
test_config_invalid(void **state)
{
	struct th_sess_config c;
	struct out o;

	(void)state;
	small_config(&c);
	c.sessions = 0;
	errno = 0;
	assert_null(th_sess_create(&c, on_record, on_name, &o));
	assert_int_equal(errno, EINVAL);
	small_config(&c);
	c.core_index = 1;
	assert_null(th_sess_create(&c, on_record, on_name, &o));
	assert_null(th_sess_create(NULL, on_record, on_name, &o));
}

/* A re-open of a file just read in full: its close-to-open GETATTR is a cache read, not
 * part of the read before; a GETATTR then READs going on where the read stopped are a slow
 * reader's revalidation, no cache read. */
static void
test_getattr_after_read(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;

	op = mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 100);
	op.flags |= TH_SESS_F_EOF;
	input(t, op);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 200 * MS));
	th_sess_tick(t, T0 + 60 * SEC);
	assert_int_equal(o->n_records, 2);
	assert_true(o->records[0].is_cache_hit);
	assert_int_equal(o->records[0].open_ns, T0 + 200 * MS);
	assert_int_equal(o->records[1].transferred, 100);

	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + 100 * SEC, 0, 4096));
	input(t, mk(TH_SESS_GETATTR, 2, 3, 1000, T0 + 110 * SEC));
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + 110 * SEC + 2 * MS, 4096, 4096));
	th_sess_tick(t, T0 + 200 * SEC);
	assert_int_equal(o->n_records, 3);
	assert_false(o->records[2].is_cache_hit);
	assert_int_equal(o->records[2].transferred, 8192);
}

/* A cache read with an ACCESS: the open runs from its GETATTR's call to the ACCESS's reply
 * (cat: open() revalidates, then checks access), whichever came first. */
static void
test_cache_read_with_access(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	uint64_t at = T0 + 100 * SEC;

	read_and_close(t, 1, T0);
	read_and_close(t, 2, T0);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at));
	input(t, mk(TH_SESS_ACCESS, 1, 3, 1000, at + 2 * MS));
	/* The other order: the ACCESS first, the GETATTR's reply last. */
	input(t, mk(TH_SESS_ACCESS, 2, 3, 1000, at + 10 * MS));
	input(t, mk(TH_SESS_GETATTR, 2, 3, 1000, at + 10 * MS + 100));
	th_sess_tick(t, at + 60 * SEC);
	assert_int_equal(o->n_records, 4);
	assert_true(o->records[2].is_cache_hit);
	assert_int_equal(o->records[2].ops, 2);
	assert_int_equal(o->records[2].open_ns, at);
	assert_int_equal(o->records[2].close_ns, at + 3 * MS);
	assert_true(o->records[3].is_cache_hit);
	assert_int_equal(o->records[3].open_ns, at + 10 * MS);
	assert_int_equal(o->records[3].close_ns, at + 11 * MS + 100);
}

/* An open revalidates once: two GETATTRs of one file by one user, both without READs, are
 * two cache reads, however close together. */
static void
test_two_getattrs_two_opens(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	read_and_close(t, 1, T0);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 100 * SEC));
	input(t, mk(TH_SESS_ACCESS, 1, 3, 1000, T0 + 100 * SEC + MS));
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 100 * SEC + 200 * MS));
	th_sess_tick(t, T0 + 200 * SEC);
	assert_int_equal(o->n_records, 3);
	assert_true(o->records[1].is_cache_hit);
	assert_int_equal(o->records[1].ops, 2);
	assert_true(o->records[2].is_cache_hit);
	assert_int_equal(o->records[2].open_ns, T0 + 100 * SEC + 200 * MS);
}

/* libnfs's open (nfs-cat after nfs-cp): LOOKUP, ACCESS, then GETATTR for the size and the
 * READs. One uncached read open from the LOOKUP on, no cache read beside it. The same three
 * without READs are two opens of the cached file, as Linux's cat twice sends them (the
 * first looks the name up again, the second revalidates by GETATTR). */
static void
test_libnfs_open_getattr_after_access(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;
	uint64_t at = T0 + 10 * SEC;

	op = mk_rw(TH_SESS_WRITE, 5, 3, 1000, T0, 0, 5000);
	op.flags |= TH_SESS_F_HAS_SIZE;
	op.size = 5000;
	input(t, op);
	th_sess_tick(t, T0 + 5 * SEC);
	assert_int_equal(o->n_records, 0);

	for (unsigned int pass = 0; pass < 2; pass++) {
		bool has_read = pass == 0;
		unsigned int n = o->n_records;

		op = mk_name(TH_SESS_LOOKUP, 1, "f5k", 5, at);
		op.flags |= TH_SESS_F_HAS_SIZE;
		op.size = 5000;
		input(t, op);
		input(t, mk(TH_SESS_ACCESS, 5, 3, 1000, at + 2 * MS));
		op = mk(TH_SESS_GETATTR, 5, 3, 1000, at + 4 * MS);
		op.flags |= TH_SESS_F_HAS_SIZE;
		op.size = 5000;
		op.fileid = 105;
		input(t, op);
		if (has_read) {
			op = mk_rw(TH_SESS_READ, 5, 3, 1000, at + 6 * MS, 0, 5000);
			op.flags |= TH_SESS_F_EOF;
			input(t, op);
		}
		th_sess_tick(t, at + 60 * SEC);
		/* The write open closed in the first pass too. */
		if (has_read) {
			assert_int_equal(o->n_records, n + 2);
			assert_int_equal(o->records[n].dir, TH_SESS_DIR_WRITE);
			n++;
			assert_false(o->records[n].is_cache_hit);
			assert_int_equal(o->records[n].dir, TH_SESS_DIR_READ);
			assert_int_equal(o->records[n].open_ns, at);
			assert_int_equal(o->records[n].close_ns, at + 7 * MS);
			assert_int_equal(o->records[n].ops, 4);
			assert_int_equal(o->records[n].transferred, 5000);
			assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);
		} else {
			assert_int_equal(o->n_records, n + 2);
			assert_true(o->records[n].is_cache_hit);
			assert_int_equal(o->records[n].open_ns, at);
			assert_int_equal(o->records[n].close_ns, at + 3 * MS);
			assert_int_equal(o->records[n].ops, 2);
			assert_true(o->records[n + 1].is_cache_hit);
			assert_int_equal(o->records[n + 1].open_ns, at + 4 * MS);
			assert_int_equal(o->records[n + 1].close_ns, at + 5 * MS);
			assert_int_equal(o->records[n + 1].ops, 1);
		}
		at += 100 * SEC;
	}
}

/* cp over a file the client holds: GETATTR (its open), then SETATTR size 0 and WRITEs. One
 * write open from the GETATTR on, no cache read. touch then a truncate: two write opens. */
static void
test_write_open_takes_its_getattr(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;
	uint64_t at = T0 + 100 * SEC;

	read_and_close(t, 1, T0);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, at));
	op = mk(TH_SESS_SETATTR, 1, 3, 1000, at + MS);
	op.flags |= TH_SESS_F_TRUNCATE;
	input(t, op);
	input(t, mk_rw(TH_SESS_WRITE, 1, 3, 1000, at + 2 * MS, 0, 500));
	th_sess_tick(t, at + 60 * SEC);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].dir, TH_SESS_DIR_WRITE);
	assert_false(o->records[1].is_cache_hit);
	assert_int_equal(o->records[1].open_ns, at);
	assert_int_equal(o->records[1].transferred, 500);

	at += 100 * SEC;
	input(t, mk(TH_SESS_SETATTR, 1, 3, 1000, at)); /* touch */
	op = mk(TH_SESS_SETATTR, 1, 3, 1000, at + 5 * SEC);
	op.flags |= TH_SESS_F_TRUNCATE;
	input(t, op);
	th_sess_tick(t, at + 60 * SEC);
	assert_int_equal(o->n_records, 4);
	assert_int_equal(o->records[2].dir, TH_SESS_DIR_WRITE);
	assert_int_equal(o->records[2].open_ns, at);
	assert_int_equal(o->records[3].open_ns, at + 5 * SEC);
}

/* cp of an empty file over an existing one: a truncate and nothing else, an open of its
 * own. A touch of the file 15 s later (well within the idle time) is the next write open,
 * not part of the truncate's: touch opens the file without O_TRUNC. A second truncate is
 * another open too. */
static void
test_truncate_only_then_touch(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;
	uint64_t at = T0 + 100 * SEC;

	op = mk(TH_SESS_SETATTR, 1, 3, 1000, at);
	op.flags |= TH_SESS_F_TRUNCATE | TH_SESS_F_HAS_SIZE;
	input(t, op);
	input(t, mk(TH_SESS_SETATTR, 1, 3, 1000, at + 15 * SEC)); /* touch */
	op = mk(TH_SESS_SETATTR, 1, 3, 1000, at + 20 * SEC);
	op.flags |= TH_SESS_F_TRUNCATE | TH_SESS_F_HAS_SIZE;
	input(t, op);
	th_sess_flush(t);
	assert_int_equal(o->n_records, 3);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(o->records[i].dir, TH_SESS_DIR_WRITE);
		assert_int_equal(o->records[i].ops, 1);
		assert_int_equal(o->records[i].transferred, 0);
	}
	assert_int_equal(o->records[0].open_ns, at);
	assert_int_equal(o->records[0].close_ns, at + 1 * MS); /* the truncate's latency */
	assert_int_equal(o->records[1].open_ns, at + 15 * SEC);
	assert_int_equal(o->records[1].close_ns, at + 15 * SEC + 1 * MS);
	assert_int_equal(o->records[2].open_ns, at + 20 * SEC);
}

/* Opening an empty file reads nothing: with an ACCESS it is a 0-byte cache read even with
 * no read history; a lone GETATTR (stat) of it from a user with no access rights cached is
 * not. Another user's open in progress at the client counts as history. */
static void
test_empty_file_and_other_users(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	struct th_sess_op op;

	op = mk(TH_SESS_GETATTR, 7, 3, 1000, T0);
	op.flags |= TH_SESS_F_HAS_SIZE;
	input(t, op);
	op = mk(TH_SESS_ACCESS, 7, 3, 1000, T0 + MS);
	op.flags |= TH_SESS_F_HAS_SIZE;
	input(t, op);
	op = mk(TH_SESS_GETATTR, 7, 3, 1001, T0 + 10 * SEC);
	op.flags |= TH_SESS_F_HAS_SIZE;
	input(t, op);
	th_sess_tick(t, T0 + 60 * SEC);
	assert_int_equal(o->n_records, 1);
	assert_true(o->records[0].is_cache_hit);
	assert_int_equal(o->records[0].uid, 1000);
	assert_int_equal(o->records[0].size, 0);
	assert_int_equal(th_sess_counters(t)->phantoms_no_access, 1);

	/* User 1000 is writing file 8 (open for 30 s more); user 1001 opens it meanwhile. */
	input(t, mk_rw(TH_SESS_WRITE, 8, 3, 1000, T0 + 100 * SEC, 0, 4096));
	input(t, mk(TH_SESS_GETATTR, 8, 3, 1001, T0 + 104 * SEC));
	input(t, mk(TH_SESS_ACCESS, 8, 3, 1001, T0 + 104 * SEC + MS));
	th_sess_tick(t, T0 + 200 * SEC);
	assert_int_equal(o->n_records, 3);
	assert_true(o->records[1].is_cache_hit);
	assert_int_equal(o->records[1].uid, 1001);
	assert_int_equal(o->records[2].dir, TH_SESS_DIR_WRITE);
}

/* ls -l's lstat of a file (attributes of a regular file of 100 bytes, inode 100 + file). */
static struct th_sess_op
mk_lstat(unsigned int file, uint32_t uid, uint64_t at, uint64_t reply_after)
{
	struct th_sess_op op = mk(TH_SESS_GETATTR, file, 3, uid, at);

	op.reply_ns = at + reply_after;
	op.flags |= TH_SESS_F_HAS_SIZE;
	op.size = 100;
	op.fileid = 100 + file;
	return op;
}

/* A reply the network delayed (TCP resends a lost segment 200 ms later) holds ls -l's next
 * lstat back: the burst goes on from that reply, and none of its GETATTRs is a cache read. */
static void
test_burst_delayed_reply(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	uint64_t at = T0 + 600 * SEC;

	for (unsigned int f = 1; f <= 4; f++)
		read_and_close(t, f, T0);
	assert_int_equal(o->n_records, 4);
	input(t, mk_lstat(1, 1000, at, 50000));
	input(t, mk_lstat(2, 1000, at + 100000, 200 * MS));
	input(t, mk_lstat(3, 1000, at + 200 * MS + 150000, 50000));
	input(t, mk_lstat(4, 1000, at + 200 * MS + 250000, 50000));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 4);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);
	assert_int_equal(th_sess_counters(t)->phantoms_burst, 4);
}

/* A second user's ls -l on the client before the first burst's GETATTRs were decided: the
 * first burst's entries stay phantoms (their membership is theirs, not the client's latest
 * window's). */
static void
test_burst_then_other_burst(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;
	uint64_t at = T0 + 600 * SEC;

	for (unsigned int f = 1; f <= 3; f++)
		read_and_close(t, f, T0);
	for (unsigned int f = 1; f <= 3; f++)
		input(t, mk_lstat(f, 1000, at + f * 100000, 50000));
	for (unsigned int f = 4; f <= 6; f++)
		input(t, mk_lstat(f, 1001, at + 100 * MS + f * 100000, 50000));
	th_sess_tick(t, at + 10 * SEC);
	assert_int_equal(o->n_records, 3);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);
	assert_int_equal(th_sess_counters(t)->phantoms_burst, 3);
	/* A lone GETATTR by the first user later is an open of the cached file again. */
	input(t, mk_lstat(2, 1000, at + 20 * SEC, 50000));
	th_sess_tick(t, at + 30 * SEC);
	assert_int_equal(o->n_records, 4);
	assert_true(o->records[3].is_cache_hit);
}

/* A call whose reply the tap missed, as the decoder hands it over: no reply, no results. */
static struct th_sess_op
mk_no_reply(struct th_sess_op op)
{
	op.reply_ns = 0;
	op.flags = TH_SESS_F_NO_REPLY;
	op.count = 0;
	return op;
}

/* A GETATTR without its reply brings no attributes: no cache read, counted by reason. */
static void
test_tap_getattr_no_reply(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 4096));
	th_sess_tick(t, T0 + 40 * SEC);
	assert_int_equal(o->n_records, 1);
	input(t, mk_no_reply(mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 60 * SEC)));
	input(t, mk_no_reply(mk(TH_SESS_ACCESS, 1, 3, 1000, T0 + 60 * SEC + MS)));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);
	assert_int_equal(th_sess_counters(t)->no_reply_attrs, 2);
}

/* A READ whose reply was lost reaches inference after its open was reported: dropped,
 * not a second open of 0 bytes (which would read as a cache read). */
static void
test_tap_read_no_reply_late(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 65536));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0 + 3 * MS, 131072, 65536));
	th_sess_tick(t, T0 + 40 * SEC);
	assert_int_equal(o->n_records, 1);
	/* The XID table gives up on the call a minute later. */
	input(t, mk_no_reply(mk_rw(TH_SESS_READ, 1, 3, 1000, T0 + 2 * MS, 65536, 65536)));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].transferred, 131072);
	assert_int_equal(th_sess_counters(t)->no_reply_reported, 1);
	/* With no open to explain it, a READ call alone is still an open (a READ means
	 * the file was opened), counted as one whose bytes were not seen. */
	input(t, mk_no_reply(mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + 50 * SEC, 0, 65536)));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].transferred, 0);
	assert_false(o->records[1].is_cache_hit);
	assert_int_equal(th_sess_counters(t)->no_reply_opens, 1);
}

/* A READ lost in the middle of a sequential read, then the revalidating GETATTR and the
 * next READ: one open, not two; far past the end it is the next open. */
static void
test_tap_read_gap_one_open(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 65536));
	/* READ at 65536 lost */
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 5 * MS));
	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0 + 6 * MS, 131072, 65536));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 1);
	assert_int_equal(o->records[0].ops, 2);
	assert_int_equal(o->records[0].transferred, 131072);
	assert_int_equal(th_sess_counters(t)->read_gaps_joined, 1);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);

	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + SEC, 0, 65536));
	input(t, mk(TH_SESS_GETATTR, 2, 3, 1000, T0 + SEC + 5 * MS));
	input(t, mk_rw(TH_SESS_READ, 2, 3, 1000, T0 + SEC + 6 * MS, 1048576, 65536));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 3);
}

/* GETATTR then WRITEs with the truncating SETATTR lost: one write open, from the GETATTR;
 * the GETATTR is no cache read. */
static void
test_tap_write_without_setattr(void **state)
{
	struct fixture *fx = *state;
	struct th_sess_table *t = fx->t;
	struct out *o = &fx->o;

	input(t, mk_rw(TH_SESS_READ, 1, 3, 1000, T0, 0, 4096));
	th_sess_tick(t, T0 + 40 * SEC);
	assert_int_equal(o->n_records, 1);
	input(t, mk(TH_SESS_GETATTR, 1, 3, 1000, T0 + 100 * SEC));
	/* SETATTR size 0 lost */
	input(t, mk_rw(TH_SESS_WRITE, 1, 3, 1000, T0 + 100 * SEC + 2 * MS, 0, 8192));
	th_sess_flush(t);
	assert_int_equal(o->n_records, 2);
	assert_int_equal(o->records[1].dir, TH_SESS_DIR_WRITE);
	assert_int_equal(o->records[1].open_ns, T0 + 100 * SEC);
	assert_int_equal(o->records[1].transferred, 8192);
	assert_int_equal(th_sess_counters(t)->records_cache_hit, 0);
	assert_int_equal(th_sess_counters(t)->write_from_getattr, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reread_from_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_boundary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interleaved_users, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_in_write_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_read_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_to_open_getattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ls_burst_no_cache_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ls_nordirplus_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stat_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_then_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_then_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eviction_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_detail, setup, teardown),
		cmocka_unit_test(test_two_tables_owner),
		cmocka_unit_test(test_config_invalid),
		cmocka_unit_test_setup_teardown(test_random_ops_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getattr_after_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_read_with_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_getattrs_two_opens, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_libnfs_open_getattr_after_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_open_takes_its_getattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_only_then_touch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_and_other_users, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst_delayed_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst_then_other_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tap_getattr_no_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tap_read_no_reply_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tap_read_gap_one_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tap_write_without_setattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_back, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
