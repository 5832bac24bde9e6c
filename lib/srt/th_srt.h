/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SRT_H
#define TH_SRT_H

/**
 * @file
 * Server response times by RPC procedure: a bounded table of rows, one per
 * (program, version, procedure) in the order first seen, each with the exact
 * count, min, max and sum and coarse log-linear buckets for percentiles.
 * A decode lcore fills one as it matches replies (capture's final table and
 * its telemetry); export fills one from RPC records.
 *
 * One writer. Rows are published after they are set up, so another thread
 * may add a table up (th_srt_add()) while it grows; figures within a row may
 * then lag each other by a value.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "th_hist.h"

/** Procedures a table times; values of procedures beyond them are counted. */
#define TH_SRT_ROWS 64
/** Sub-buckets per power of two: 2^5, percentiles within 1.6%. */
#define TH_SRT_BITS 5
#define TH_SRT_BUCKETS TH_HIST_BUCKETS_AT(TH_SRT_BITS)
/** Hash slots over the rows (a power of two, twice the rows). */
#define TH_SRT_SLOTS (2 * TH_SRT_ROWS)

/** A procedure: program, version, number. */
struct th_srt_proc {
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
};

/**
 * One procedure's response times: exact count, min, max and sum, in ns. The
 * writer stores the count last (release): a reader that loads it (acquire)
 * sees min, max, sum and buckets of at least that many values, and skips a
 * row whose count is still 0.
 */
struct th_srt_row {
	_Atomic uint64_t count;
	uint64_t min;
	uint64_t max;
	double sum_ns;
};

struct th_srt {
	/** Rows in use, counted once set up. */
	_Atomic uint32_t rows;
	/** Each row's procedure. */
	struct th_srt_proc id[TH_SRT_ROWS];
	/** Row + 1 by hash of the procedure (linear probing); 0: empty. */
	uint8_t slot[TH_SRT_SLOTS];
	/** Values not kept: every row was taken. */
	uint64_t untimed_rows;
	/** Values not kept: the answer is stamped before the question ended. */
	uint64_t untimed_clock;
	struct th_srt_row row[TH_SRT_ROWS];
	/** Each row's buckets. */
	uint64_t buckets[TH_SRT_ROWS][TH_SRT_BUCKETS];
};

/** An empty table (rows are emptied as they are taken: unused ones are never touched). */
void th_srt_init(struct th_srt *s);

/** @p p's row, taken now if it has none; -1 when every row is taken. */
int32_t th_srt_row_of(struct th_srt *s, const struct th_srt_proc *p);

static inline uint32_t
th_srt_hash(const struct th_srt_proc *p)
{
	uint32_t h = (p->prog * 0x9e3779b1u) ^ (p->vers * 0x85ebca77u) ^ (p->proc * 0xc2b2ae3du);

	return (h ^ (h >> 15)) & (TH_SRT_SLOTS - 1);
}

/** Record the time from @p from_ns to @p to_ns for procedure @p p. */
static inline void
th_srt_record(struct th_srt *s, const struct th_srt_proc *p, uint64_t from_ns, uint64_t to_ns)
{
	uint32_t i = th_srt_hash(p), r = s->slot[i] - 1u;
	uint64_t ns = to_ns - from_ns;
	struct th_srt_row *w;
	int32_t got;

	if (to_ns < from_ns) {
		s->untimed_clock++;
		return;
	}
	/* The common case in one look: the first slot holds the procedure. */
	if (s->slot[i] == 0 || s->id[r].prog != p->prog || s->id[r].vers != p->vers ||
		s->id[r].proc != p->proc) {
		got = th_srt_row_of(s, p);
		if (got < 0) {
			s->untimed_rows++;
			return;
		}
		r = (uint32_t)got;
	}
	w = &s->row[r];
	if (ns < w->min)
		w->min = ns;
	if (ns > w->max)
		w->max = ns;
	w->sum_ns += (double)ns;
	s->buckets[r][th_hist_bucket_at(ns, TH_SRT_BITS)]++;
	/* Last, so that a reader adding the table up never counts a value it cannot see. */
	atomic_store_explicit(&w->count, atomic_load_explicit(&w->count, memory_order_relaxed) + 1,
		memory_order_release);
}

/** sum += s, procedure by procedure (sum takes rows as it needs them, counting what does not fit).
 */
void th_srt_add(struct th_srt *sum, const struct th_srt *s);

/** Row @p r's value at percentile @p p (nearest rank, within 1.6%). */
uint64_t th_srt_percentile(const struct th_srt *s, uint32_t r, double p);

/** "NFS3 GETATTR", "100024.1 0": PROGRAM PROC as the RPC log line spells them. */
void th_srt_label(const struct th_srt_proc *p, char *label, size_t size);

/**
 * Print the table: a title line naming @p what is timed, then one row per
 * procedure ordered by program, version and procedure number, with RPCs,
 * min, p50, p90, p99, p99.9, max and mean in microseconds, then the RPCs not
 * timed by reason.
 */
void th_srt_print(FILE *out, const struct th_srt *s, const char *what);

/**
 * The same rows for a program to read: CSV with a header (@p is_json false)
 * or JSON Lines, one per procedure in the same order, with program (its
 * name, or number), version, procedure (name or number), rpcs and min_us,
 * p50_us, p90_us, p99_us, p999_us, max_us, mean_us. The not-timed counts are
 * the caller's to say.
 */
void th_srt_write_rows(FILE *out, const struct th_srt *s, bool is_json);

#endif /* TH_SRT_H */
