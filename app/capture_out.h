/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_CAPTURE_OUT_H
#define TH_CAPTURE_OUT_H

/*
 * Text output from data-plane lcores without blocking them: each producer
 * (a decode or session lcore) fills fixed buffers of its own and hands full
 * ones to the control lcore through one shared ring; the control lcore
 * writes them to their destination and gives them back. When a producer has
 * no free buffer (the disk or pipe is slower than the traffic), lines are
 * dropped and counted, never waited for.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ring.h>

#define TH_OUT_BUF_SIZE (256 * 1024)
#define TH_OUT_ROOM 8192 /* the longest line fits in this */

/* Where a buffer's lines go. */
enum th_out_dest {
	TH_OUT_RPC = 0, /* one line per RPC */
	TH_OUT_RECORDS, /* one line per inferred open */
	TH_OUT_NAMES,   /* handle-to-name map */
	TH_OUT__DEST_COUNT
};

struct th_outbuf {
	struct rte_ring *home; /* the producer's free ring */
	uint32_t dest;         /* enum th_out_dest */
	uint32_t len;          /* bytes used */
	char data[TH_OUT_BUF_SIZE];
};

/* One producer's stream; only its lcore touches it (the control lcore reads dropped). */
struct th_out {
	struct th_outbuf *cur;  /* filling, or NULL when none was free */
	struct rte_ring *free;  /* this stream's empty buffers */
	struct rte_ring *full;  /* shared with every producer: to the control lcore */
	uint32_t dest;          /* enum th_out_dest */
	uint64_t dropped;       /* lines lost: no free buffer */
	uint64_t last_pass_tsc; /* when cur last went out */
};

/* @return 0 or -ENOMEM. */
int th_out_init(struct th_out *o, const char *name, uint32_t dest, unsigned int bufs,
	struct rte_ring *full);
void th_out_fini(struct th_out *o);

/* Room for one line (TH_OUT_ROOM bytes), or NULL when none is free (counted as dropped). */
char *th_out_reserve(struct th_out *o);
/* The line just written at th_out_reserve()'s pointer is @p n bytes long. */
void th_out_commit(struct th_out *o, size_t n);
/* Hand the current buffer over if it holds anything and @p period_tsc passed since the last. */
void th_out_tick(struct th_out *o, uint64_t now_tsc, uint64_t period_tsc);
/* Hand over whatever the current buffer holds (at the end). */
void th_out_pass(struct th_out *o);

enum { OUT_FILE = 1, OUT_STREAM = 2 }; /* th_out_totals.kind: a regular file or not */

/* What the control lcore made of the buffers, per destination. */
struct th_out_totals {
	uint64_t bytes[TH_OUT__DEST_COUNT];      /* written */
	uint64_t lines_lost[TH_OUT__DEST_COUNT]; /* not written, whole or in part: it failed */
	bool is_broken;                          /* a write failed: the rest is discarded */
	uint8_t kind[TH_OUT__DEST_COUNT];        /* 0 not asked yet, OUT_FILE, OUT_STREAM */
	const volatile sig_atomic_t *stop;       /* set once the run is stopped (a signal) */
};

/* Once stopped, a reader that takes nothing for this long is given up (a stuck pipe). */
#define TH_OUT_STALL_MS 2000
/* A pipe is waited on in slices this long, so that a stop is seen within one. */
#define TH_OUT_POLL_MS 100

/*
 * Control lcore: write every full buffer to fds[dest] (negative: discard)
 * and give it back. A failed write sets t->is_broken and the rest is
 * discarded, its lines counted. Once *t->stop is set (however it was set:
 * no signal need interrupt the write), a write that cannot go on for
 * TH_OUT_STALL_MS fails so. @return buffers handled.
 */
unsigned int th_out_drain(
	struct rte_ring *full, const int fds[TH_OUT__DEST_COUNT], struct th_out_totals *t);

#endif /* TH_CAPTURE_OUT_H */
