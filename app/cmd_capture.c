/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound capture: the appliance's data path.
 *
 *   port(s) --RSS (symmetric)--------------------------> decode lcores --> op lines
 *           \--or one dispatcher lcore, hash(flow)--> rings -/              |
 *   control lcore (main): writes op lines, prints and serves stats, stops cleanly
 *
 * Both directions of a flow reach the same decode lcore: with a symmetric
 * RSS key where the port spreads traffic over queues, otherwise by the
 * dispatcher's symmetric flow hash. Decode lcores never block: op lines go
 * into per-lcore buffers that the control lcore writes out; when no buffer
 * is free, ops are dropped and counted.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>
#include <rte_rwlock.h>
#include <rte_telemetry.h>

#include "capture.h"
#include "capture_input.h"
#include "capture_kdrops.h"
#include "capture_out.h"
#include "th_cmd.h"
#include "th_conf.h"
#include "th_decode.h"
#include "th_pcap.h"
#include "th_probe.h"
#include "th_segment.h"
#include "th_session.h"

#define OUTBUFS_PER_LCORE 16
#define FLUSH_NS (200ull * 1000 * 1000)
#define SEQ_STEP (1ull << 63)    /* in a frame's number: the clock went back to it */
/* Merge keys (is_merged): ops of ageing before frame s, then of frame s, then at the end. */
#define KEY_AGE(s) ((s) << 1)
#define KEY_FRAME(s) (((s) << 1) | 1)
#define KEY_END (UINT64_MAX - 1)

struct capture cap;

static volatile sig_atomic_t got_signal;

/*
 * SIGINT or SIGTERM: stop. Only the control thread takes them: every other
 * thread (EAL's lcores, its interrupt and telemetry threads, the probe
 * thread) blocks them from its start (stop_signals()), so the kernel hands
 * a signal sent to the process, or to any of its thread ids, to the control
 * thread. A signal taken by DPDK's telemetry listener ended its accept()
 * loop with EINTR and telemetry with it ("telemetry thread quitting").
 * Installed without SA_RESTART, so that a blocking call returns; the output
 * writer also reads the flag at least every TH_OUT_POLL_MS.
 */
static void
on_signal(int sig)
{
	got_signal = sig;
}

/* Block (SIG_BLOCK) or unblock (SIG_UNBLOCK) SIGINT and SIGTERM in the calling thread. */
static void
stop_signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(how, &set, NULL);
}

/* A TSC-to-wall-clock mapping, as one copy of cap.clock holds it. */
struct wallclock {
	uint64_t base_tsc;
	uint64_t base_ns;  /* wall clock at base_tsc */
	double ns_per_tsc; /* steered: the measured rate, corrected toward the wall clock */
};

/* @p tsc read on wall clock @p c (before its base too). */
static inline uint64_t
clock_read(const struct wallclock *c, uint64_t tsc)
{
	return c->base_ns +
	       (uint64_t)(int64_t)((double)(int64_t)(tsc - c->base_tsc) * c->ns_per_tsc);
}

/*
 * The wall clock in use, its three fields from one writing: a copy whose seq
 * was odd or moved while they were read (the reader stalled past the next
 * flip but one) is read again, from the slot then in use.
 */
static inline struct wallclock
clock_get(void)
{
	const struct wallclock_slot *w;
	struct wallclock c;
	unsigned int seq;

	for (;;) {
		w = &cap.clock[atomic_load_explicit(&cap.clock_slot, memory_order_acquire) & 1];
		seq = atomic_load_explicit(&w->seq, memory_order_acquire);
		c.base_tsc = atomic_load_explicit(&w->base_tsc, memory_order_relaxed);
		c.base_ns = atomic_load_explicit(&w->base_ns, memory_order_relaxed);
		c.ns_per_tsc = atomic_load_explicit(&w->ns_per_tsc, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if ((seq & 1) == 0 && atomic_load_explicit(&w->seq, memory_order_relaxed) == seq)
			return c;
		rte_pause();
	}
}

/* Control lcore: write copy @p w (not the one in use), its seq odd meanwhile. */
static void
clock_put(struct wallclock_slot *w, const struct wallclock *c)
{
	unsigned int seq = atomic_load_explicit(&w->seq, memory_order_relaxed);

	atomic_store_explicit(&w->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&w->base_tsc, c->base_tsc, memory_order_relaxed);
	atomic_store_explicit(&w->base_ns, c->base_ns, memory_order_relaxed);
	atomic_store_explicit(&w->ns_per_tsc, c->ns_per_tsc, memory_order_relaxed);
	atomic_store_explicit(&w->seq, seq + 2, memory_order_release);
}

/* A TSC reading as wall-clock ns (frames a live port does not stamp, idle ageing). */
static inline uint64_t
tsc_to_ns(uint64_t tsc)
{
	struct wallclock c = clock_get();

	return clock_read(&c, tsc);
}

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Start the TSC's wall clock at EAL's nominal rate. */
static void
clock_start(void)
{
	struct wallclock c;

	cap.ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	cap.clock_start_raw = clock_ns(CLOCK_MONOTONIC_RAW);
	c.base_tsc = cap.clock_start_tsc = rte_rdtsc();
	c.base_ns = clock_ns(CLOCK_REALTIME);
	c.ns_per_tsc = cap.ns_per_tsc;
	clock_put(&cap.clock[0], &c);
	atomic_store_explicit(&cap.clock_slot, 0, memory_order_release);
}

/*
 * Each second on the control lcore: keep frame times on the wall clock.
 * EAL's TSC rate is an estimate (2600000 kHz on a host whose kernel measured
 * 2596.122 MHz: 1.5 ms a second, 5 s an hour). The rate is measured against
 * CLOCK_MONOTONIC_RAW since the start, and the time the TSC reads now is
 * steered onto CLOCK_REALTIME over the next second, so it never jumps back;
 * a step of the wall clock of a second or more (set by hand) is taken at once.
 */
static void
clock_steer(void)
{
	unsigned int slot = atomic_load_explicit(&cap.clock_slot, memory_order_relaxed);
	struct wallclock c = clock_get(), n;
	uint64_t tsc = rte_rdtsc(), raw = clock_ns(CLOCK_MONOTONIC_RAW);
	uint64_t wall = clock_ns(CLOCK_REALTIME), reads, period_tsc;
	double rate = cap.ns_per_tsc;
	int64_t err;

	if (tsc - cap.clock_start_tsc > rte_get_tsc_hz() / 2)
		rate = (double)(raw - cap.clock_start_raw) / (double)(tsc - cap.clock_start_tsc);
	reads = clock_read(&c, tsc);
	err = (int64_t)(wall - reads);
	cap.clock_error_ns = err;
	n.base_tsc = tsc;
	if (err >= 1000000000 || err <= -1000000000) {
		n.base_ns = wall;
		n.ns_per_tsc = rate;
	} else {
		/* Reach the wall clock in a second: the TSC ticks of a second at this rate. */
		period_tsc = (uint64_t)(1e9 / rate);
		n.base_ns = reads;
		n.ns_per_tsc = (1e9 + (double)err) / (double)period_tsc;
	}
	clock_put(&cap.clock[(slot + 1) & 1], &n);
	atomic_store_explicit(&cap.clock_slot, slot + 1, memory_order_release);
}

/* ---- output ------------------------------------------------------------ */

static void
on_record(void *ctx, const struct th_sess_record *r)
{
	struct session_lcore *sl = ctx;
	char *line;

	if (sl->seg != NULL) {
		struct th_trace_open t = {
			.open_ns = r->open_ns,
			.close_ns = r->close_ns,
			.server = r->server,
			.client = r->client,
			.uid = r->uid,
			.gid = r->gid,
			.dir = r->dir,
			.vers = r->vers,
			.flags = (uint8_t)((r->is_cache_hit ? TH_TRACE_OPEN_CACHE_HIT : 0) |
					   (r->is_directory ? TH_TRACE_OPEN_DIRECTORY : 0)),
			.fh_len = r->fh_len,
			.ops = r->ops,
			.transferred = r->transferred,
			.seq_bytes = r->seq_bytes,
			.size = r->size,
		};

		memcpy(t.fh, r->fh, r->fh_len);
		th_segment_write_open(sl->seg, &t); /* a failure is counted by the writer */
	}
	if (cap.out_fds[TH_OUT_RECORDS] < 0)
		return;
	line = th_out_reserve(&sl->records);
	if (line != NULL)
		th_out_commit(&sl->records, (size_t)th_sess_record_format(r, line, TH_OUT_ROOM));
}

/* A name record: into the segments, and as a line (th_sess_name_format) into the names file. */
static void
on_name(void *ctx, const struct th_sess_name *n)
{
	struct session_lcore *sl = ctx;
	char *line;

	if (sl->seg != NULL) {
		struct th_trace_name t = {
			.from_ns = n->from_ns,
			.to_ns = n->to_ns,
			.server = n->server,
			.fh_len = n->fh_len,
			.dir_fh_len = n->dir_fh_len,
			.mode = n->mode,
			.name_len = n->name_len,
		};

		memcpy(t.fh, n->fh, n->fh_len);
		memcpy(t.dir_fh, n->dir_fh, n->dir_fh_len);
		memcpy(t.name, n->name, n->name_len);
		t.name[n->name_len] = '\0';
		th_segment_write_name(sl->seg, &t);
	}
	if (cap.out_fds[TH_OUT_NAMES] < 0)
		return;
	line = th_out_reserve(&sl->names);
	if (line != NULL)
		th_out_commit(&sl->names, (size_t)th_sess_name_format(n, line, TH_OUT_ROOM));
}

/*
 * Whether a decode lcore waits for room on the way to inference rather than
 * letting an op go: in a replay, until the run is stopped (a signal, a failed
 * output), when the ops left are counted as lost instead.
 */
static inline bool
replay_waits(void)
{
	return !cap.has_live_port && !atomic_load_explicit(&cap.stop_rx, memory_order_relaxed);
}

/*
 * Hand a burst of ops to their session lcore. On a live port what does not
 * fit is counted and let go; a replay's ops wait for room, as its frames do
 * for the decode rings: nothing is lost to a session lcore that was slow.
 */
static void
flush_pending(struct decode_lcore *dl, unsigned int s)
{
	unsigned int n = dl->n_pending[s], sent;

	if (n == 0)
		return;
	sent = rte_ring_mp_enqueue_burst(cap.sl[s].in, (void **)dl->pending[s], n, NULL);
	while (replay_waits() && sent < n) {
		rte_pause();
		sent += rte_ring_mp_enqueue_burst(
			cap.sl[s].in, (void **)dl->pending[s] + sent, n - sent, NULL);
	}
	if (sent < n) {
		dl->sess_ring_full += n - sent;
		rte_mempool_put_bulk(cap.sess_pool, (void **)(dl->pending[s] + sent), n - sent);
	}
	dl->n_pending[s] = 0;
}

static void
flush_all_pending(struct decode_lcore *dl)
{
	unsigned int s;

	for (s = 0; s < cap.n_session; s++)
		flush_pending(dl, s);
}

static void
queue_op(struct decode_lcore *dl, unsigned int s, struct th_sess_op *e)
{
	dl->pending[s][dl->n_pending[s]++] = e;
	if (dl->n_pending[s] == SESS_BURST)
		flush_pending(dl, s);
}

/*
 * A free event. A replay waits for one (the session lcores free them as they
 * go, and this lcore's queued events go out meanwhile) until the run is
 * stopped; a live port does not wait. NULL when there is none.
 */
static struct th_sess_op *
free_event(struct decode_lcore *dl)
{
	void *e;

	while (rte_mempool_get(cap.sess_pool, &e) != 0) {
		if (!replay_waits())
			return NULL;
		flush_all_pending(dl);
		rte_pause();
	}
	return e;
}

static void
to_inference(struct decode_lcore *dl, const struct th_op *op)
{
	struct th_sess_op *e;
	unsigned int s;

	if (cap.is_inline_session) {
		if (th_sess_op_from_op(op, &dl->inline_op))
			th_sess_input(cap.sl[0].t, &dl->inline_op);
		else
			dl->sess_not_used++;
		return;
	}
	e = free_event(dl);
	if (e == NULL) {
		/* Lost only if inference would have taken it (asked here, off the usual path). */
		if (th_sess_op_is_used(op))
			dl->sess_pool_empty++;
		else
			dl->sess_not_used++;
		return;
	}
	if (!th_sess_op_from_op(op, e)) {
		rte_mempool_put(cap.sess_pool, e);
		dl->sess_not_used++;
		return;
	}
	e->seq = dl->key;
	e->source = dl->index;
	if (cap.n_session > 1 && th_sess_op_is_broadcast(e)) {
		/* Directory scans and name creation matter to every table (listings, names). */
		dl->sess_copies += cap.n_session - 1;
		for (s = 1; s < cap.n_session; s++) {
			struct th_sess_op *copy = free_event(dl);

			if (copy == NULL) {
				dl->sess_pool_empty++;
				continue;
			}
			memcpy(copy, e, sizeof(*copy));
			queue_op(dl, s, copy);
		}
		queue_op(dl, 0, e);
		return;
	}
	queue_op(dl, th_sess_op_owner(e, cap.n_session), e);
}

/*
 * A READDIRPLUS entry's name binding, to the name map of the table that owns
 * the directory (where its LOOKUPs' names go). Sent ahead of the listing's own
 * op, on the same ring. A live port does not wait for a free event: a binding
 * lost then costs a path, never an open (decode "dirents" minus session
 * "dirents" counts them).
 */
static void
emit_dirent(void *ctx, const struct th_op *op, const struct th_nfs_dirent *ent)
{
	struct decode_lcore *dl = ctx;
	struct th_sess_op *e;

	if (cap.is_inline_session) {
		if (th_sess_op_from_dirent(op, ent, &dl->inline_op))
			th_sess_input(cap.sl[0].t, &dl->inline_op);
		return;
	}
	e = free_event(dl);
	if (e == NULL)
		return;
	if (!th_sess_op_from_dirent(op, ent, e)) {
		rte_mempool_put(cap.sess_pool, e);
		return;
	}
	e->seq = dl->key;
	e->source = dl->index;
	queue_op(dl, th_sess_op_owner(e, cap.n_session), e);
}

/* The per-call log as trace records: the same container as opens and names. */
static void
write_rpc_record(struct decode_lcore *dl, const struct th_op *op)
{
	struct th_trace_rpc r;

	th_op_rpc_record(op, &r);
	th_segment_write_rpc(dl->rpc_seg, &r); /* a failure is counted by the writer */
}

static void
emit_op(void *ctx, const struct th_op *op)
{
	struct decode_lcore *dl = ctx;
	char *line;

	if (cap.n_session > 0)
		to_inference(dl, op);
	if (dl->rpc_seg != NULL)
		write_rpc_record(dl, op);
	if (cap.out_fds[TH_OUT_RPC] < 0)
		return; /* RPC log off */
	line = th_out_reserve(&dl->out);
	if (line != NULL)
		th_out_commit(&dl->out, (size_t)th_op_format(op, line, TH_OUT_ROOM));
}

/* Control lcore: write whatever the data-plane lcores have handed over. */
static unsigned int
drain_output(void)
{
	unsigned int n = th_out_drain(cap.out_ring, cap.out_fds, &cap.out_totals);

	if (cap.out_totals.is_broken)
		atomic_store(&cap.stop_rx, true);
	return n;
}

/* ---- data path --------------------------------------------------------- */

static inline void
decode_mbuf(struct decode_lcore *dl, struct rte_mbuf *m, uint64_t ts_ns)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = mbuf_held(m);

	if (unlikely(m->nb_segs > 1)) {
		if (len > FRAME_MAX)
			len = FRAME_MAX;
		frame = rte_pktmbuf_read(m, 0, len, dl->scratch);
	}
	th_decode_frame(dl->dec, frame, len, rte_pktmbuf_pkt_len(m), cap.link[m->port], ts_ns);
}

/*
 * A session lcore's periodic work: output and segment flushes, and on a live
 * port inference's ageing by the host's clock, idle time included. A replay's
 * tables age with the ops' times as they come (th_sess_input()), so the same
 * file gives the same records every run, whenever these ticks fall.
 */
static void
session_tick(struct session_lcore *sl, uint64_t tsc, uint64_t period)
{
	if (cap.has_live_port)
		th_sess_tick(sl->t, tsc_to_ns(tsc));
	th_out_tick(&sl->records, tsc, period);
	th_out_tick(&sl->names, tsc, period);
	if (sl->seg != NULL)
		th_segment_writer_tick(sl->seg, tsc_to_ns(tsc));
}

/* A decode lcore's periodic work; a replay's tables age in decode_main(). */
static void
housekeep(struct decode_lcore *dl)
{
	uint64_t tsc = rte_rdtsc(), period = (uint64_t)(FLUSH_NS / cap.ns_per_tsc);

	if (cap.has_live_port) {
		/*
		 * What ageing lets go comes after every frame this lcore has said it is past,
		 * keyed just below that: at KEY_AGE() of the next frame it would wait for the
		 * turn to pass a frame that has yet to come, and a quiet link sends none (a
		 * call that timed out stayed off inference until the next frame).
		 */
		if (cap.is_merged) {
			uint64_t done =
				atomic_load_explicit(&dl->sess_done_key, memory_order_relaxed);

			if (done > 0 && done - 1 > dl->key)
				dl->key = done - 1;
		}
		th_decode_housekeep(dl->dec, tsc_to_ns(tsc));
	}
	th_out_tick(&dl->out, tsc, period);
	if (dl->rpc_seg != NULL)
		th_segment_writer_tick(dl->rpc_seg, tsc_to_ns(tsc));
	flush_all_pending(dl);
	if (cap.is_inline_session)
		session_tick(&cap.sl[0], tsc, period);
}

/*
 * Start stream @p stream_id of trace segments in the configured directory; @p what names
 * it. A failure to start is said now, and *ctr keeps its count so close does not repeat it.
 */
static struct th_segment_writer *
open_segments(uint16_t stream_id, enum th_segment_kind kind, const char *what,
	struct th_segment_counters *ctr)
{
	struct th_segment_config sc = {
		.dir = cap.set.trace_dir,
		.box_id = cap.set.box_id,
		.stream_id = stream_id,
		.kind = kind,
		.max_bytes = cap.set.rotate_bytes,
		.rotate_ns = cap.set.rotate_ns,
		.flush_ns = cap.set.flush_ns,
	};
	struct th_segment_writer *w = th_segment_writer_create(&sc);

	memset(ctr, 0, sizeof(*ctr));
	if (w != NULL && th_segment_writer_error(w) != 0) {
		fprintf(stderr, "capture: %s: %s\n", what, th_segment_writer_describe(w));
		th_segment_writer_counters(w, ctr);
	}
	return w;
}

/* Close a stream of trace segments (if open), keeping its counters; @p what names it. */
static void
close_segments(struct th_segment_writer **w, struct th_segment_counters *ctr, const char *what)
{
	struct th_segment_counters now;
	int was, rc;

	if (*w == NULL)
		return;
	was = th_segment_writer_error(*w);
	th_segment_writer_counters(*w, &now);
	if (was != 0 && now.errors > ctr->errors) /* not said when it started */
		fprintf(stderr, "capture: %s: %s\n", what, th_segment_writer_describe(*w));
	/* The counters once closed: the last segment's bytes, what closing it lost. */
	rc = th_segment_writer_close(*w, ctr);
	if (rc != 0 && was == 0)
		fprintf(stderr, "capture: %s: closing the last segment failed: %s\n", what,
			strerror(-rc));
	*w = NULL;
}

static void
finish_session(struct session_lcore *sl)
{
	th_sess_flush(sl->t);
	close_segments(&sl->seg, &sl->seg_ctr, "trace segments");
	th_out_pass(&sl->records);
	th_out_pass(&sl->names);
	atomic_store(&sl->is_done, true);
}

static void
finish_decode(struct decode_lcore *dl)
{
	dl->key = KEY_END;
	th_decode_flush(dl->dec); /* calls still waiting go out, to inference too */
	flush_all_pending(dl);
	th_out_pass(&dl->out);
	close_segments(&dl->rpc_seg, &dl->rpc_ctr, "RPC trace segments");
	if (cap.is_inline_session && dl->index == 0)
		finish_session(&cap.sl[0]);
	atomic_store_explicit(&dl->sess_done_key, UINT64_MAX, memory_order_release);
	atomic_store(&dl->is_done, true);
}

static bool
all_decode_done(void)
{
	unsigned int i;

	for (i = 0; i < cap.n_decode; i++)
		if (!atomic_load(&cap.dl[i].is_done))
			return false;
	return true;
}

/*
 * Behind the dispatcher, a session lcore takes the ops of several decode
 * lcores in the order of the frames they came from, as one decode lcore would
 * have given them: a replay gives the same records with any number of decode
 * lcores, every run. Ops wait in a queue per decode lcore (each lcore's
 * come in its order; a frame's ops all come from one) until every decode
 * lcore has put the ops of earlier frames on the ring (merge_turn()), then
 * the least frame number goes first (lib/merge). Queues that hold
 * cap.merge_max ops let the first go early, counted (merge_early).
 */
static uint64_t
merge_turn(void)
{
	uint64_t turn = UINT64_MAX, d;
	unsigned int i;

	for (i = 0; i < cap.n_decode; i++) {
		d = atomic_load_explicit(&cap.dl[i].sess_done_key, memory_order_acquire);
		if (d < turn)
			turn = d;
	}
	return turn;
}

static void
take_op(struct session_lcore *sl, struct th_sess_op *op)
{
	th_sess_input(sl->t, op);
	rte_mempool_put(cap.sess_pool, op);
}

/*
 * Move what the ring holds into the queues and take every op whose turn has
 * come. @return how many were taken.
 */
static unsigned int
merge_take(struct session_lcore *sl)
{
	/* Read first: the ops of frames before the turn are on the ring by now, among the
	 * first of what it holds after. */
	uint64_t turn = merge_turn();
	unsigned int left = rte_ring_count(sl->in), n, i, taken = 0;
	struct th_sess_op *ops[64];

	while (left > 0) {
		n = rte_ring_sc_dequeue_burst(sl->in, (void **)ops, left < 64 ? left : 64, NULL);
		if (n == 0)
			break;
		left -= n;
		for (i = 0; i < n; i++) {
			if (th_merge_is_full(&sl->merge)) {
				take_op(sl, th_merge_pop(&sl->merge));
				sl->merge_early++;
				taken++;
			}
			th_merge_push(&sl->merge, ops[i]->source, ops[i]->seq, ops[i]);
		}
	}
	while (th_merge_first_key(&sl->merge) < turn) {
		take_op(sl, th_merge_pop(&sl->merge));
		taken++;
	}
	return taken;
}

/* Session lcore: inference for its files, fed by every decode lcore. */
static int
session_main(void *arg)
{
	struct session_lcore *sl = arg;
	struct th_sess_op *ops[64];
	bool is_flushed = false; /* the event cache went back at the last empty poll */
	uint64_t next_hk = 0, hk_period = rte_get_tsc_hz() / 1000;
	uint64_t period = (uint64_t)(FLUSH_NS / cap.ns_per_tsc);
	unsigned int n, i;

	for (;;) {
		uint64_t tsc = rte_rdtsc();

		if (cap.is_merged) {
			n = merge_take(sl);
		} else {
			n = rte_ring_sc_dequeue_burst(sl->in, (void **)ops, 64, NULL);
			for (i = 0; i < n; i++) {
				if (i + 1 < n)
					rte_prefetch0(ops[i + 1]);
				th_sess_input(sl->t, ops[i]);
			}
			if (n > 0)
				rte_mempool_put_bulk(cap.sess_pool, (void **)ops, n);
		}
		if (n == 0 && !cap.has_live_port && !is_flushed) {
			/* A replay's decode lcores wait for free events: those this lcore's
			 * cache holds go back to the pool while it has nothing to do. */
			struct rte_mempool_cache *c =
				rte_mempool_default_cache(cap.sess_pool, rte_lcore_id());

			if (c != NULL)
				rte_mempool_cache_flush(c, cap.sess_pool);
		}
		is_flushed = n == 0;
		if (tsc >= next_hk) {
			next_hk = tsc + hk_period;
			session_tick(sl, tsc, period);
		}
		/* Decode lcores flush before they say done: an empty ring after that is the end. */
		if (n == 0 && all_decode_done() && rte_ring_empty(sl->in) && sl->merge.n == 0)
			break;
	}
	finish_session(sl);
	return 0;
}

/*
 * Count @p nb frames from the ring as done. A replay's reader waits for the
 * mbufs of frames still on their way (file_burst()); freed mbufs stay in this
 * lcore's mempool cache, where it cannot take them, so with the ring empty
 * they go back to the pool first. A live port is not held up: they stay.
 */
static inline void
give_back_mbufs(struct decode_lcore *dl, unsigned int nb)
{
	if (!cap.has_live_port && rte_ring_empty(dl->in)) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(cap.pool, rte_lcore_id());

		if (c != NULL)
			rte_mempool_cache_flush(c, cap.pool);
	}
	/* Only this lcore writes it: a store, not a locked add. */
	atomic_store_explicit(&dl->freed,
		atomic_load_explicit(&dl->freed, memory_order_relaxed) + nb, memory_order_release);
}

/*
 * A replay's clock went back (captures end to end, a clock step on the host
 * that captured): inference ages its tables in time order, and opens begun
 * before the step would hold every later one back until the clock passed them
 * again (a 100 s step halfway through a 222-record capture lost 6 records).
 * Each session lcore is told, in line with this lcore's ops, and closes what
 * is open there (th_sess_input(), TH_SESS_CLOCK_BACK). Behind the dispatcher,
 * which sees every frame, the dispatcher finds the step and marks its frame
 * (SEQ_STEP), and the decode lcore that takes it tells them: once.
 */
static void
clock_back(struct decode_lcore *dl, uint64_t ns)
{
	struct th_sess_op *e;
	unsigned int s;

	memset(&dl->inline_op, 0, sizeof(dl->inline_op));
	dl->inline_op.kind = TH_SESS_CLOCK_BACK;
	dl->inline_op.call_ns = ns;
	dl->inline_op.seq = dl->key;
	dl->inline_op.source = dl->index;
	if (cap.is_inline_session) {
		th_sess_input(cap.sl[0].t, &dl->inline_op);
		return;
	}
	for (s = 0; s < cap.n_session; s++) {
		e = free_event(dl);
		if (e == NULL)
			continue;
		*e = dl->inline_op;
		queue_op(dl, s, e);
	}
}

/*
 * Several decode lcores feed the session lcores, each in its own time: in a
 * replay one can be seconds of capture time ahead of another. The session
 * lcores take ops in frame order (merge_take()), so each decode lcore says how
 * far it has got: its ops keyed below @p key are on the session rings.
 */
static inline void
sess_done(struct decode_lcore *dl, uint64_t key)
{
	flush_all_pending(dl);
	atomic_store_explicit(&dl->sess_done_key, key, memory_order_release);
}

/* The dispatcher's number of frame @p m. */
static inline uint64_t
frame_seq(const struct rte_mbuf *m)
{
	return *RTE_MBUF_DYNFIELD(m, cap.seq_offset, const uint64_t *);
}

/*
 * Behind the dispatcher, a replay's tables age at the dispatcher's points
 * (dispatch_age()), not at this lcore's own frames: every decode lcore at
 * the same frames, those one decode lcore would have aged at, so calls whose
 * reply never came go to inference in the same place. Age at every point
 * before frame @p limit.
 */
static void
age_until(struct decode_lcore *dl, uint64_t limit)
{
	uint64_t n = atomic_load_explicit(&cap.disp.n_age, memory_order_acquire);
	uint64_t aged = atomic_load_explicit(&dl->aged, memory_order_relaxed);

	for (; aged < n; aged++) {
		const struct age_point *p = &cap.disp.age[aged % AGE_POINTS];

		if (p->seq >= limit)
			break;
		dl->key = KEY_AGE(p->seq);
		th_decode_housekeep(dl->dec, p->ns);
		atomic_store_explicit(&dl->aged, aged + 1, memory_order_release);
	}
}

/* The dispatcher's time of frame @p m, stray stamps set right (is_merged). */
static inline uint64_t
frame_ns(const struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, cap.seq_offset, const uint64_t *)[1];
}

/* Decode frame @p m at @p ts_ns, after what a replay does before it. */
static inline void
take_frame(struct decode_lcore *dl, struct rte_mbuf *m, uint64_t ts_ns, struct replay_clock *clock,
	uint64_t *next_age_ns, bool is_replay)
{
	if (cap.is_merged) {
		uint64_t seq = frame_seq(m);

		if (is_replay)
			age_until(dl, (seq & ~SEQ_STEP) + 1);
		dl->key = KEY_FRAME(seq & ~SEQ_STEP);
		if (seq & SEQ_STEP)
			clock_back(dl, ts_ns);
	} else if (is_replay) {
		bool is_back = replay_clock_take(clock, ts_ns);

		if (replay_age_due(clock, ts_ns, next_age_ns))
			th_decode_housekeep(dl->dec, ts_ns);
		if (is_back && cap.n_session > 0)
			clock_back(dl, ts_ns);
	}
	decode_mbuf(dl, m, ts_ns);
}

/* A replay's held frames (stamp_release()) before frame @p ts_ns. @return frames freed. */
static inline unsigned int
take_held(
	struct decode_lcore *dl, struct replay_clock *clock, uint64_t ts_ns, uint64_t *next_age_ns)
{
	unsigned int n = 0;
	uint64_t held_ns;
	struct rte_mbuf *h;

	while ((h = stamp_release(clock, ts_ns, &held_ns, &dl->strays)) != NULL) {
		take_frame(dl, h, held_ns, clock, next_age_ns, true);
		rte_pktmbuf_free(h);
		n++;
	}
	return n;
}

static int
decode_main(void *arg)
{
	struct decode_lcore *dl = arg;
	struct rte_mbuf *pkts[256];
	struct rx_poll poll;
	unsigned int burst = (unsigned int)cap.set.burst, nb, i, from, freed;
	uint64_t next_hk = 0, hk_period = rte_get_tsc_hz() / 1000, next_age_ns = 0;
	struct replay_clock clock = {0};
	bool is_over, is_replay = !cap.has_live_port;
	/* Behind the dispatcher with inference, the dispatcher sets stray stamps right. */
	bool is_holding = is_replay && !cap.is_merged;

	th_rx_poll_init(&poll, dl->rxq, dl->n_rxq);
	for (;;) {
		uint64_t tsc = rte_rdtsc(), burst_ns;

		if (dl->in != NULL) {
			/* Read before the ring: what the dispatcher handed up to it is on the ring.
			 */
			uint64_t handed =
				atomic_load_explicit(&cap.disp.handed_seq, memory_order_acquire);

			nb = rte_ring_sc_dequeue_burst(dl->in, (void **)pkts, burst, NULL);
			if (nb == 0 && atomic_load(&cap.is_rx_done) && rte_ring_empty(dl->in))
				break;
			if (nb == 0 && cap.is_merged) {
				if (is_replay)
					age_until(dl, handed);
				sess_done(dl, KEY_AGE(handed));
			}
		} else {
			nb = th_rx_next(&poll, pkts, burst, &from, &is_over);
			if (is_over)
				break;
		}
		if (tsc >= next_hk) {
			next_hk = tsc + hk_period;
			housekeep(dl);
		}
		if (nb == 0)
			continue;
		burst_ns = tsc_to_ns(tsc);
		freed = nb;
		for (i = 0; i < nb; i++) {
			uint64_t ts_ns =
				cap.is_merged ? frame_ns(pkts[i]) : mbuf_time(pkts[i], burst_ns);

			if (i + 2 < nb)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 2], void *));
			if (is_holding) {
				freed += take_held(dl, &clock, ts_ns, &next_age_ns);
				if (stamp_hold(&clock, pkts[i], ts_ns)) {
					pkts[i] = NULL; /* freed when taken */
					freed--;
					continue;
				}
			}
			take_frame(dl, pkts[i], ts_ns, &clock, &next_age_ns, is_replay);
		}
		if (cap.is_merged)
			sess_done(dl, KEY_AGE((dl->key >> 1) + 1));
		rte_pktmbuf_free_bulk(pkts, nb);
		if (dl->in != NULL)
			give_back_mbufs(dl, freed);
	}
	freed = is_holding ? take_held(dl, &clock, UINT64_MAX, &next_age_ns) : 0;
	if (freed > 0 && dl->in != NULL)
		give_back_mbufs(dl, freed);
	if (cap.is_merged && is_replay)
		age_until(dl, UINT64_MAX); /* the points at other lcores' last frames */
	finish_decode(dl);
	return 0;
}

/*
 * Which decode lcore owns a frame: the symmetric flow hash the decoder's own
 * tables use. UDP is hashed on addresses alone, because later IP fragments
 * carry no ports and must reach the lcore that decoded the first one. The
 * headers of a frame in several mbufs are copied to @p scratch (FRAME_MAX
 * bytes): the first 512 bytes, or all of it when its headers run on past
 * them (IPv6 extension headers).
 */
static inline unsigned int
pick_lcore(struct rte_mbuf *m, uint8_t *scratch)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t held = mbuf_held(m), len = held;
	enum th_pkt_status st;
	struct th_pkt_meta meta;

	if (m->nb_segs > 1) {
		len = held < 512 ? held : 512;
		frame = rte_pktmbuf_read(m, 0, len, scratch);
	}
	meta.ip_version = 0;
	meta.l4 = 0;
	st = th_pkt_parse(frame, len, cap.link[m->port], &meta);
	if (unlikely(len < held && (st == TH_PKT_TRUNC_L3 || st == TH_PKT_TRUNC_L4))) {
		len = held < FRAME_MAX ? held : FRAME_MAX;
		frame = rte_pktmbuf_read(m, 0, len, scratch);
		meta.ip_version = 0;
		meta.l4 = 0;
		st = th_pkt_parse(frame, len, cap.link[m->port], &meta);
	}
	/* Not IP: decode lcore 0 takes it and counts it by its parse outcome. */
	if (meta.ip_version == 0)
		return 0;
	if (st != TH_PKT_OK || meta.l4 != TH_PKT_L4_TCP)
		meta.sport = meta.dport = 0;
	return th_pkt_flow_hash(&meta) % cap.n_decode;
}

/*
 * A replay's ageing points behind the dispatcher: at the frame that passes
 * each second of the file's clock (replay_age_due(), as on one decode lcore),
 * published before the frame is handed on. A point waits for room while the
 * slowest decode lcore still has AGE_POINTS to age at.
 */
static void
dispatch_age(struct dispatch_lcore *dp, const struct replay_clock *c, uint64_t seq, uint64_t ts_ns)
{
	uint64_t n = atomic_load_explicit(&dp->n_age, memory_order_relaxed);
	unsigned int i;

	if (!replay_age_due(c, ts_ns, &dp->next_age_ns))
		return;
	for (i = 0; i < cap.n_decode; i++)
		while (n - atomic_load_explicit(&cap.dl[i].aged, memory_order_acquire) >=
				AGE_POINTS &&
			!atomic_load(&cap.dl[i].is_done))
			rte_pause();
	dp->age[n % AGE_POINTS] = (struct age_point){seq, ts_ns};
	atomic_store_explicit(&dp->n_age, n + 1, memory_order_release);
}

/* Frames a dispatcher round hands each decode lcore: a burst, and frames held from before. */
struct dispatch_round {
	struct rte_mbuf *per[MAX_DECODE][256 + STAMP_HOLD_MAX];
	unsigned int counts[MAX_DECODE];
};

/* Number frame @p m, at @p ts_ns, and give it to its decode lcore's share of @p r. */
static inline void
dispatch_frame(struct dispatch_lcore *dp, struct dispatch_round *r, struct replay_clock *clock,
	struct rte_mbuf *m, uint64_t ts_ns, bool is_replay)
{
	unsigned int l = pick_lcore(m, dp->scratch);

	if (cap.is_merged) {
		uint64_t *f = RTE_MBUF_DYNFIELD(m, cap.seq_offset, uint64_t *);
		uint64_t seq = dp->next_seq++;

		/* One place sees every frame: it finds a step of the clock and where the
		 * tables age. */
		if (is_replay) {
			if (replay_clock_take(clock, ts_ns))
				seq |= SEQ_STEP;
			dispatch_age(dp, clock, seq & ~SEQ_STEP, ts_ns);
		}
		f[0] = seq;
		f[1] = ts_ns;
	}
	r->per[l][r->counts[l]++] = m;
}

/* Frames the stamps held (stamp_release()) before frame @p ts_ns, numbered into @p r. */
static inline void
dispatch_held(struct dispatch_lcore *dp, struct dispatch_round *r, struct replay_clock *clock,
	uint64_t ts_ns)
{
	uint64_t held_ns;
	struct rte_mbuf *m;

	while ((m = stamp_release(clock, ts_ns, &held_ns, &dp->strays)) != NULL)
		dispatch_frame(dp, r, clock, m, held_ns, true);
}

/* Put a round's frames on the decode rings. */
static void
dispatch_hand(struct dispatch_lcore *dp, struct dispatch_round *r, bool is_file)
{
	unsigned int i, sent;

	for (i = 0; i < cap.n_decode; i++) {
		if (r->counts[i] == 0)
			continue;
		sent = rte_ring_sp_enqueue_burst(
			cap.dl[i].in, (void **)r->per[i], r->counts[i], NULL);
		/* A file's frames wait for room while their decode lcore runs, a stop included:
		 * frames delivered are decoded. */
		while (is_file && sent < r->counts[i] && !atomic_load(&cap.dl[i].is_done)) {
			rte_pause();
			sent += rte_ring_sp_enqueue_burst(
				cap.dl[i].in, (void **)r->per[i] + sent, r->counts[i] - sent, NULL);
		}
		dp->handed[i] += sent;
		if (sent < r->counts[i]) {
			dp->ring_full += r->counts[i] - sent;
			rte_pktmbuf_free_bulk(r->per[i] + sent, r->counts[i] - sent);
		}
		r->counts[i] = 0;
	}
	/* After the frames: a decode lcore that reads it and then finds its ring empty has
	 * had every frame of its share numbered below it. */
	if (cap.is_merged)
		atomic_store_explicit(&dp->handed_seq, dp->next_seq, memory_order_release);
}

static int
dispatch_main(void *arg)
{
	struct dispatch_lcore *dp = arg;
	static struct dispatch_round round; /* one dispatcher */
	struct rte_mbuf *pkts[256];
	struct rx_poll poll;
	unsigned int burst = (unsigned int)cap.set.burst, nb, i, from;
	struct replay_clock clock = {0};
	uint64_t burst_ns;
	bool is_over, is_replay = !cap.has_live_port;
	/* With inference, stray stamps are set right here, where every frame passes. */
	bool is_holding = is_replay && cap.is_merged;

	th_rx_poll_init(&poll, dp->rxq, dp->n_rxq);
	for (;;) {
		nb = th_rx_next(&poll, pkts, burst, &from, &is_over);
		if (is_over)
			break;
		if (nb == 0)
			continue;
		burst_ns = cap.is_merged ? tsc_to_ns(rte_rdtsc()) : 0;
		for (i = 0; i < nb; i++) {
			uint64_t ts_ns = cap.is_merged ? mbuf_time(pkts[i], burst_ns) : 0;

			if (is_holding) {
				dispatch_held(dp, &round, &clock, ts_ns);
				if (stamp_hold(&clock, pkts[i], ts_ns))
					continue;
			}
			dispatch_frame(dp, &round, &clock, pkts[i], ts_ns, is_replay);
		}
		/* A file alone has no line rate to keep up with; beside a live port it would
		 * hold the live port's frames up. */
		dispatch_hand(
			dp, &round, cap.is_file_port[dp->rxq[from].port] && !cap.has_live_port);
	}
	if (is_holding && clock.n_held > 0) {
		dispatch_held(dp, &round, &clock, UINT64_MAX);
		dispatch_hand(dp, &round, true);
	}
	atomic_store(&cap.is_rx_done, true);
	return 0;
}

/* ---- set-up -------------------------------------------------------------- */

/*
 * EAL leaves its runtime directory (and the telemetry socket, unlinked only
 * at exit) behind; runs with unique file prefixes would pile them up.
 */
static void
remove_runtime_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tracehound capture [options] [-- | --eal] EAL-ARGS...\n"
		"\n"
		"Decode NFS/ONC-RPC traffic from every DPDK port and write one line per RPC\n"
		"(format: README, 'Output: RPC log'). Stops at the end of pcap file ports,\n"
		"or on SIGINT/SIGTERM, and prints statistics to stderr.\n"
		"\n"
		"options:\n"
		"  -c, --config FILE        INI config: [capture] [decode] [session] [trace]\n"
		"                           [probe] [eal] (README, 'Configuration')\n"
		"  -o, --output FILE        RPC log destination, - for stdout (default -),\n"
		"                           none: no RPC lines\n"
		"  -r, --records FILE       infer opens and write their records here\n"
		"  -n, --decode-lcores N    decode lcores (default: all worker lcores)\n"
		"  -s, --stats-interval S   print progress every S seconds (default 0: off)\n"
		"  -h, --help               this text\n"
		"\n"
		"examples:\n"
		"  tracehound capture -o rpcs.txt -- --no-huge -m 512 --no-pci -l 0-1 \\\n"
		"      --vdev=net_pcap0,rx_pcap=traffic.pcap\n"
		"  # two taps, one direction each: the files are read together, by time\n"
		"  tracehound capture -o rpcs.txt -- --no-huge -m 512 --no-pci -l 0-1 \\\n"
		"      --vdev=net_pcap0,rx_pcap=tap-a.pcap --vdev=net_pcap1,rx_pcap=tap-b.pcap\n");
}

/* A net_pcap port's vdev arguments ("rx_pcap=F,..."), or NULL for any other port. */
static const char *
pcap_devargs(uint16_t port)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.driver_name == NULL ||
		strstr(info.driver_name, "pcap") == NULL || info.device == NULL)
		return NULL;
	da = rte_dev_devargs(info.device);
	return da != NULL ? da->args : NULL;
}

/* The file a net_pcap port reads (its first rx_pcap=) into @p path; false for other ports. */
bool
th_capture_port_pcap_path(uint16_t port, char *path, size_t size)
{
	const char *args = pcap_devargs(port);

	return args != NULL && th_rx_pcap_next(&args, path, size);
}

static bool
port_is_pcap_file(uint16_t port)
{
	const char *args = pcap_devargs(port);

	return args != NULL && strstr(args, "rx_pcap=") != NULL &&
	       strstr(args, "infinite_rx=1") == NULL;
}

/*
 * Mbufs net_pcap may take for one record of file port @p port: one per data
 * room of the file's snap length, or of the most a record fills (FRAME_MAX),
 * whichever is less.
 */
static unsigned int
file_segs(uint16_t port)
{
	const unsigned int room = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM;
	char path[PATH_MAX];
	uint32_t snaplen = 0;

	if (th_capture_port_pcap_path(port, path, sizeof(path)))
		snaplen = th_input_snaplen(path);
	if (snaplen == 0 || snaplen > FRAME_MAX)
		snaplen = FRAME_MAX;
	return (snaplen + room - 1) / room;
}

/*
 * What a port's frames start with. net_pcap hands over a file's records as they
 * are, in its link type (Linux cooked captures, raw IP; pcapng's first
 * interface), and libpcap's "any" interface cooks them too; the rest is
 * Ethernet. @return 0, or -EINVAL after saying why the port cannot be decoded.
 */
static int
port_link(uint16_t port, enum th_pkt_link *link)
{
	const char *devargs = pcap_devargs(port), *args = devargs;
	char path[PATH_MAX], again[PATH_MAX];
	uint32_t type;
	int rc;

	*link = TH_PKT_LINK_ETHERNET;
	if (devargs == NULL)
		return 0;
	/* libpcap's "any" device (rx_iface=, rx_iface_in=, iface=) cooks what it hands over. */
	if (strstr(devargs, "iface=any") != NULL || strstr(devargs, "iface_in=any") != NULL)
		*link = TH_PKT_LINK_LINUX_SLL;
	if (!th_rx_pcap_next(&args, path, sizeof(path)))
		return 0;
	if (th_rx_pcap_next(&args, again, sizeof(again))) {
		/* Each file is a queue of its own, and a port is polled on queue 0. */
		fprintf(stderr,
			"capture: %s and %s in one --vdev: give each pcap a --vdev of its "
			"own (net_pcap0, net_pcap1, ...)\n",
			path, again);
		return -EINVAL;
	}
	/* A file that is not a regular one was refused before EAL (th_settings_inputs_check()). */
	rc = th_pcap_file_linktype(path, &type);
	if (rc == -EPROTO) {
		fprintf(stderr,
			"capture: %s: interfaces of two link types; libpcap stops at the "
			"first packet of the second (split it with editcap)\n",
			path);
		return -EINVAL;
	}
	if (rc != 0) {
		fprintf(stderr, "capture: %s: cannot tell its link type: %s\n", path,
			strerror(-rc));
		return -EINVAL;
	}
	if (type != TH_PKT_LINK_ETHERNET && type != TH_PKT_LINK_RAW &&
		type != TH_PKT_LINK_LINUX_SLL && type != TH_PKT_LINK_LINUX_SLL2) {
		fprintf(stderr,
			"capture: %s: link type %" PRIu32
			" is not decoded (Ethernet 1, raw IP 101, "
			"Linux cooked 113 and 276 are)\n",
			path, type);
		return -EINVAL;
	}
	*link = (enum th_pkt_link)type;
	return 0;
}

static int
setup_port(uint16_t port, uint16_t nb_rxq, bool use_rss)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_rxconf rxconf;
	/* Repeating 0x6d5a makes Toeplitz RSS symmetric: both directions, one queue. */
	static uint8_t sym_key[52];
	uint16_t q, nb_desc = (uint16_t)cap.set.rx_desc;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	/*
	 * Timestamp units are the driver's. net_pcap always stamps mbufs with
	 * the file's time in microseconds (DPDK 22.11, without advertising the
	 * offload), which is what replay needs. A NIC's clock would need
	 * rte_eth_read_clock() calibration, so other ports are stamped with the
	 * host clock at receive time.
	 */
	if (info.driver_name != NULL && strcmp(info.driver_name, "net_pcap") == 0)
		cap.ts_mult[port] = 1000;
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	if (use_rss) {
		for (q = 0; q < sizeof(sym_key); q += 2) {
			sym_key[q] = 0x6d;
			sym_key[q + 1] = 0x5a;
		}
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = sym_key;
		conf.rx_adv_conf.rss_conf.rss_key_len =
			info.hash_key_size ? info.hash_key_size : 40;
		/* UDP by addresses only: IP fragments after the first have no ports. */
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP) & info.flow_type_rss_offloads;
	}
	rc = rte_eth_dev_configure(port, nb_rxq, 0, &conf);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_desc, NULL);
	if (rc != 0)
		return rc;
	rxconf = info.default_rxconf;
	rxconf.offloads = conf.rxmode.offloads;
	for (q = 0; q < nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_desc,
			(unsigned int)rte_eth_dev_socket_id(port), &rxconf, cap.pool);
		if (rc != 0)
			return rc;
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		return rc;
	rte_eth_promiscuous_enable(port); /* a mirror port sees traffic for other MACs */
	return 0;
}

static bool
ports_have_rss(uint16_t queues)
{
	struct rte_eth_dev_info info;
	unsigned int i;

	for (i = 0; i < cap.n_ports; i++) {
		if (rte_eth_dev_info_get(cap.ports[i], &info) != 0 || info.max_rx_queues < queues ||
			(info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP)) == 0)
			return false;
	}
	return true;
}

/* A decode or dispatch lcore on another socket than its port pays a QPI/UPI hop per packet. */
static void
warn_remote_numa(void)
{
	unsigned int i, p, lcore;

	for (i = 0; i < cap.n_decode + cap.has_dispatcher; i++) {
		lcore = i < cap.n_decode ? cap.dl[i].lcore_id : cap.disp.lcore_id;
		if (i < cap.n_decode && cap.has_dispatcher)
			continue; /* fed by the dispatcher's ring, not by a port */
		for (p = 0; p < cap.n_ports; p++) {
			int sock = rte_eth_dev_socket_id(cap.ports[p]);

			if (sock >= 0 && (unsigned int)sock != rte_lcore_to_socket_id(lcore))
				fprintf(stderr,
					"capture: warning: lcore %u is on socket %u, port %u on "
					"socket %d; pick lcores local to the NIC (-l)\n",
					lcore, rte_lcore_to_socket_id(lcore), cap.ports[p], sock);
		}
	}
}

static int
setup_sessions(void)
{
	char name[64];
	unsigned int i;

	if (cap.n_session == 0)
		return 0;
	if (!cap.is_inline_session) {
		/* Events in flight: every ring full, plus each decode lcore's pending bursts, plus
		 * what the session lcores hold for their turn. */
		unsigned int n = cap.n_session * (unsigned int)cap.set.ring_size +
				 cap.n_decode * MAX_SESSION * SESS_BURST + 1024;

		if (cap.is_merged) {
			static const struct rte_mbuf_dynfield seq_field = {
				.name = "tracehound_frame", /* the frame's number and time */
				.size = 2 * sizeof(uint64_t),
				.align = __alignof__(uint64_t),
			};

			cap.seq_offset = rte_mbuf_dynfield_register(&seq_field);
			if (cap.seq_offset < 0) {
				fprintf(stderr, "capture: cannot number frames: %s\n",
					rte_strerror(rte_errno));
				return -ENOMEM;
			}
			/* What waits for the slowest decode lcore: the frames on its ring and in
			 * its burst, and as many of every other lcore's. */
			cap.merge_max =
				cap.n_decode * (unsigned int)(cap.set.ring_size + cap.set.burst);
			n += cap.n_session * cap.merge_max;
		}

		cap.sess_pool = rte_mempool_create("th_sess_ops", n, sizeof(struct th_sess_op), 256,
			0, NULL, NULL, NULL, NULL, (int)rte_socket_id(), 0);
		if (cap.sess_pool == NULL) {
			fprintf(stderr,
				"capture: cannot allocate %u inference events: %s (raise EAL -m)\n",
				n, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	for (i = 0; i < cap.n_session; i++) {
		struct session_lcore *sl = &cap.sl[i];
		struct th_sess_config cfg = cap.set.sess;

		errno = 0; /* what a failure below says, not what an earlier call left */
		sl->lcore_id = UINT32_MAX;
		cfg.cores = cap.n_session;
		cfg.core_index = i;
		sl->t = th_sess_create(
			&cfg, on_record, cap.set.names || cap.set.trace_dir ? on_name : NULL, sl);
		snprintf(name, sizeof(name), "th_rec%u", i);
		if (sl->t == NULL || th_out_init(&sl->records, name, TH_OUT_RECORDS,
					     OUTBUFS_PER_LCORE, cap.out_ring))
			goto no_memory;
		snprintf(name, sizeof(name), "th_names%u", i);
		if (th_out_init(&sl->names, name, TH_OUT_NAMES, OUTBUFS_PER_LCORE, cap.out_ring))
			goto no_memory;
		if (cap.set.trace_dir != NULL) {
			sl->seg = open_segments(
				(uint16_t)i, TH_SEGMENT_KIND_MIXED, "trace segments", &sl->seg_ctr);
			if (sl->seg == NULL)
				goto no_memory;
		}
		if (cap.is_inline_session)
			continue;
		snprintf(name, sizeof(name), "th_sess%u", i);
		sl->in = rte_ring_create(name, rte_align32pow2((unsigned int)cap.set.ring_size),
			(int)rte_socket_id(), RING_F_SC_DEQ);
		if (sl->in == NULL)
			goto no_memory;
		if (cap.is_merged && th_merge_init(&sl->merge, cap.n_decode, cap.merge_max) != 0)
			goto no_memory;
	}
	return 0;

no_memory:
	/* Mostly memory; a value the libraries refuse says EINVAL. */
	fprintf(stderr, "capture: session lcore: cannot set up: %s (files %u, sessions %u)\n",
		strerror(errno != 0 ? errno : ENOMEM), cap.set.sess.files, cap.set.sess.sessions);
	return -ENOMEM;
}

#define MAX_VDEVS 64

/* The --vdev arguments of the EAL's command line, as given. */
struct vdev_args {
	const char *arg[MAX_VDEVS];
	unsigned int n;
};

static void
vdev_args_find(struct vdev_args *v, int argc, char **argv)
{
	v->n = 0;
	for (int i = 0; i < argc && v->n < MAX_VDEVS; i++) {
		if (strncmp(argv[i], "--vdev=", 7) == 0)
			v->arg[v->n++] = argv[i] + 7;
		else if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc)
			v->arg[v->n++] = argv[++i];
	}
}

/* Whether vdev argument @p arg names an ethdev (net_ or its older alias eth_). */
static bool
vdev_is_port(const char *arg)
{
	/* The netvsc helper makes ports under other names. */
	return (strncmp(arg, "net_", 4) == 0 || strncmp(arg, "eth_", 4) == 0) &&
	       strncmp(arg, "net_vdev_netvsc", 15) != 0;
}

/*
 * Every network --vdev of @p v must have become a port, each under a name of
 * its own: EAL only logs a driver's refusal (a file that is not a pcap, an
 * absent interface) or a second device of one name and goes on, and a capture
 * of the other ports would say nothing of the one missing.
 */
static int
vdevs_check(const struct vdev_args *v)
{
	char shown[256], name_shown[RTE_DEV_NAME_MAX_LEN];
	uint16_t port;
	int bad = 0;

	for (unsigned int i = 0; i < v->n; i++) {
		size_t len = strcspn(v->arg[i], ",");
		char name[RTE_DEV_NAME_MAX_LEN];
		unsigned int j;

		if (!vdev_is_port(v->arg[i]) || len >= sizeof(name))
			continue;
		memcpy(name, v->arg[i], len);
		name[len] = '\0';
		for (j = 0; j < i; j++)
			if (strncmp(v->arg[j], name, len) == 0 &&
				(v->arg[j][len] == ',' || v->arg[j][len] == '\0'))
				break;
		if (j < i) {
			fprintf(stderr,
				"capture: --vdev %s: %s is named twice (net_pcap0, "
				"net_pcap1, ...)\n",
				th_conf_printable(v->arg[i], shown, sizeof(shown)),
				th_conf_printable(name, name_shown, sizeof(name_shown)));
			bad++;
		} else if (rte_eth_dev_get_port_by_name(name, &port) != 0) {
			fprintf(stderr, "capture: --vdev %s did not come up (EAL's log says why)\n",
				th_conf_printable(v->arg[i], shown, sizeof(shown)));
			bad++;
		}
	}
	return bad > 0 ? -EIO : 0;
}

/* Fewer @p what lcores than asked for (0: not asked): said, with what gives more. */
static void
note_fewer(const char *what, uint64_t asked, unsigned int run, const char *how)
{
	if (asked != 0 && asked != run)
		fprintf(stderr,
			"capture: %" PRIu64 " %s lcores asked for, %u run%s (%u worker lcores; "
			"EAL -l gives more)\n",
			asked, what, run, how, rte_lcore_count() - 1);
}

/* @p vdevs: the EAL arguments' virtual devices, each of which must be a port. */
static int
setup_dataplane(const struct vdev_args *vdevs)
{
	unsigned int workers = rte_lcore_count() - 1, i, p, lcore, n_rxq;
	int pool_socket;
	bool use_rss;
	char name[64];
	uint16_t port;
	int rc;

	RTE_ETH_FOREACH_DEV(port)
	{
		if (cap.n_ports == MAX_PORTS) {
			fprintf(stderr,
				"capture: more than %u ports: merge pcap files by time first "
				"(mergecap) or read them in several runs\n",
				MAX_PORTS);
			return -EINVAL;
		}
		if (port_link(port, &cap.link[port]) != 0)
			return -EINVAL;
		cap.is_file_port[port] = port_is_pcap_file(port);
		if (!cap.is_file_port[port])
			cap.has_live_port = true;
		else
			cap.file_segs[port] = file_segs(port);
		cap.ports[cap.n_ports++] = port;
	}
	if (vdevs_check(vdevs) != 0)
		return -EIO;
	if (cap.n_ports == 0) {
		fprintf(stderr,
			"capture: no DPDK port; add one, e.g. --vdev=net_pcap0,rx_pcap=FILE "
			"or --vdev=net_af_packet0,iface=eth0\n");
		return -ENODEV;
	}
	if (workers == 0) {
		fprintf(stderr, "capture: needs at least two lcores (control + decode), "
				"e.g. EAL option -l 0-1\n");
		return -EINVAL;
	}
	/*
	 * Session lcores first (inference, when records are asked for): as
	 * configured, or one; with a single worker, inference runs inline on it.
	 */
	if (cap.set.records != NULL || cap.set.trace_dir != NULL) {
		unsigned int want =
			cap.set.session_lcores ? (unsigned int)cap.set.session_lcores : 1;

		if (workers == 1) {
			cap.is_inline_session = true;
			cap.n_session = 1;
		} else {
			cap.n_session = want < workers ? want : workers - 1;
			workers -= cap.n_session;
		}
	}
	/* With several workers and no RSS, one of them dispatches. */
	cap.n_decode = workers;
	if (cap.set.decode_lcores != 0 && cap.set.decode_lcores < cap.n_decode)
		cap.n_decode = (unsigned int)cap.set.decode_lcores;
	if (cap.n_decode > MAX_DECODE)
		cap.n_decode = MAX_DECODE;
	use_rss = cap.n_decode > 1 && ports_have_rss((uint16_t)cap.n_decode);
	if (cap.n_decode > 1 && !use_rss) {
		if (workers == cap.n_decode)
			cap.n_decode--;
		cap.has_dispatcher = cap.n_decode > 1;
		if (!cap.has_dispatcher)
			cap.n_decode = 1;
	}
	n_rxq = use_rss ? cap.n_decode : 1;
	cap.is_merged = cap.has_dispatcher && cap.n_session > 0 && !cap.is_inline_session;
	note_fewer("decode", cap.set.decode_lcores, cap.n_decode,
		cap.has_dispatcher ? " behind a dispatcher" : "");
	if (cap.n_session != 0)
		note_fewer("session", cap.set.session_lcores, cap.n_session,
			cap.is_inline_session ? " inline on the decode lcore" : "");

	/* mbufs live where the NIC writes them: the first port's socket. */
	pool_socket = rte_eth_dev_socket_id(cap.ports[0]);
	if (pool_socket < 0)
		pool_socket = (int)rte_socket_id();
	/*
	 * Decode lcores only free mbufs, so each keeps up to 1.5 caches of them that
	 * the lcore polling a port cannot take: caches small enough that a small pool
	 * is not held up in them.
	 */
	cap.pool = rte_pktmbuf_pool_create("th_mbufs", (unsigned int)cap.set.mbufs,
		RTE_MIN(256u, (unsigned int)cap.set.mbufs / (2 * rte_lcore_count())), 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, pool_socket);
	if (cap.pool == NULL) {
		fprintf(stderr, "capture: cannot allocate %" PRIu64 " mbufs: %s (raise EAL -m)\n",
			cap.set.mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (p = 0; p < cap.n_ports; p++) {
		rc = setup_port(cap.ports[p], (uint16_t)n_rxq, use_rss);
		if (rc != 0) {
			fprintf(stderr, "capture: port %u: setup failed: %s\n", cap.ports[p],
				rte_strerror(-rc));
			return -EIO; /* a runtime failure, whatever DPDK said */
		}
	}
	cap.ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	{
		int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

		cap.ts_flag = bit >= 0 ? 1ull << bit : 0;
		if (bit < 0)
			cap.ts_offset = -1;
	}

	/* Room for every output buffer of every producer, so handing one over never fails. */
	cap.out_ring = rte_ring_create("th_out",
		rte_align32pow2((cap.n_decode + 2 * cap.n_session) * OUTBUFS_PER_LCORE + 1),
		(int)rte_socket_id(), RING_F_SC_DEQ);
	if (cap.out_ring == NULL)
		return -ENOMEM;
	if (setup_sessions() != 0)
		return -ENOMEM;

	lcore = rte_get_next_lcore(-1, 1, 0);
	if (cap.has_dispatcher) {
		cap.disp.lcore_id = lcore;
		cap.disp.scratch = malloc(FRAME_MAX);
		if (cap.disp.scratch == NULL)
			return -ENOMEM;
		for (p = 0; p < cap.n_ports; p++)
			cap.disp.rxq[cap.disp.n_rxq++] = (struct rxq){cap.ports[p], 0};
		lcore = rte_get_next_lcore(lcore, 1, 0);
	}
	for (i = 0; i < cap.n_decode; i++, lcore = rte_get_next_lcore(lcore, 1, 0)) {
		struct decode_lcore *dl = &cap.dl[i];

		dl->lcore_id = lcore;
		dl->index = i;
		dl->dec = th_decode_create(&cap.set.dec, emit_op, dl);
		/* Listings name the files ls -l shows, which Linux then opens without a LOOKUP. */
		if (dl->dec != NULL && cap.n_session > 0 && cap.set.sess.is_names_on)
			th_decode_set_dirent_cb(dl->dec, emit_dirent);
		dl->scratch = malloc(FRAME_MAX);
		snprintf(name, sizeof(name), "th_rpc%u", i);
		if (dl->dec == NULL || dl->scratch == NULL ||
			th_out_init(&dl->out, name, TH_OUT_RPC, OUTBUFS_PER_LCORE, cap.out_ring) !=
				0) {
			fprintf(stderr,
				"capture: decode lcore %u: out of memory (flows %u, calls %u, "
				"decode.listings = %u of 64 KiB)\n",
				i, cap.set.dec.flows, cap.set.dec.calls, cap.set.dec.listings);
			return -ENOMEM;
		}
		if (cap.set.trace_dir != NULL && cap.set.is_rpc_trace) {
			/* Stream ids 256 and up: RPC streams of decode lcores, apart from
			 * sessions'. */
			dl->rpc_seg = open_segments((uint16_t)(256 + i), TH_SEGMENT_KIND_RPCS,
				"RPC trace segments", &dl->rpc_ctr);
			if (dl->rpc_seg == NULL)
				return -ENOMEM;
		}
		if (cap.has_dispatcher) {
			snprintf(name, sizeof(name), "th_in%u", i);
			dl->in = rte_ring_create(name,
				rte_align32pow2((unsigned int)cap.set.ring_size),
				(int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (dl->in == NULL)
				return -ENOMEM;
		} else {
			for (p = 0; p < cap.n_ports; p++)
				dl->rxq[dl->n_rxq++] =
					(struct rxq){cap.ports[p], (uint16_t)(use_rss ? i : 0)};
		}
	}
	for (i = 0; i < cap.n_session && !cap.is_inline_session; i++) {
		cap.sl[i].lcore_id = lcore;
		lcore = rte_get_next_lcore(lcore, 1, 0);
	}
	warn_remote_numa();
	fprintf(stderr, "capture: %u port%s, %u decode lcore%s (%s), %zu KiB of tables per lcore\n",
		cap.n_ports, cap.n_ports == 1 ? "" : "s", cap.n_decode,
		cap.n_decode == 1 ? "" : "s",
		use_rss              ? "symmetric RSS"
		: cap.has_dispatcher ? "software dispatch"
				     : "direct poll",
		th_decode_memory(cap.dl[0].dec) / 1024);
	if (cap.n_session > 0)
		fprintf(stderr, "capture: open/close inference on %u %s, %zu KiB of tables each\n",
			cap.n_session,
			cap.is_inline_session ? "decode lcore (inline)" : "session lcore(s)",
			th_sess_memory(cap.sl[0].t) / 1024);
	return 0;
}

static void
teardown(void)
{
	struct th_outbuf *b = NULL; /* set by each dequeue; GCC cannot tell */
	unsigned int i;

	rte_rwlock_write_lock(&cap.tel_lock);
	cap.is_tel_off = true;
	rte_rwlock_write_unlock(&cap.tel_lock);
	for (i = 0; i < cap.n_ports; i++) {
		rte_eth_dev_stop(cap.ports[i]);
		rte_eth_dev_close(cap.ports[i]);
	}
	/* Buffers still on their way belong back home before their streams free them. */
	if (cap.out_ring != NULL)
		while (rte_ring_sc_dequeue(cap.out_ring, (void **)&b) == 0)
			rte_ring_sp_enqueue(b->home, b);
	free(cap.disp.scratch);
	for (i = 0; i < cap.n_decode; i++) {
		th_decode_free(cap.dl[i].dec);
		free(cap.dl[i].scratch);
		th_out_fini(&cap.dl[i].out);
		rte_ring_free(cap.dl[i].in);
	}
	for (i = 0; i < cap.n_session; i++) {
		th_sess_free(cap.sl[i].t);
		th_out_fini(&cap.sl[i].records);
		th_out_fini(&cap.sl[i].names);
		rte_ring_free(cap.sl[i].in);
		th_merge_fini(&cap.sl[i].merge);
	}
	rte_mempool_free(cap.sess_pool);
	rte_ring_free(cap.out_ring);
	rte_mempool_free(cap.pool);
}

/*
 * Scheduled disk probes (the trace disks, typically) on a plain thread of
 * the control side: a probe blocks for seconds, which the control lcore,
 * draining the decode lcores' output, must not.
 */
static void *
probe_main(void *arg)
{
	static struct th_probe_result r;
	struct th_probe_schedule sched;
	struct th_probe_config c;
	bool is_alarm;
	int rc;

	(void)arg;
	th_probe_config_init(&c);
	c.target = cap.set.probe_target;
	c.temp_size = cap.set.probe_size;
	c.count = 0;
	c.duration_ns = cap.set.probe_seconds_ns;
	c.cycle_ns = 1000000000ull / cap.set.probe_rate;
	c.stop = &cap.probe_stop;
	if (th_probe_schedule_init(&sched, &c, cap.set.probe_every_ns,
		    (double)cap.set.probe_percentile, cap.set.probe_alarm_ns,
		    clock_ns(CLOCK_MONOTONIC)) != 0)
		return NULL;
	while (!cap.probe_stop) {
		rc = th_probe_schedule_poll(&sched, clock_ns(CLOCK_MONOTONIC), &r, &is_alarm);
		if (rc < 0) {
			cap.probe_failures++;
			fprintf(stderr, "capture: probe %s failed: %s\n", c.target, r.error);
		} else if (rc == 1 && !cap.probe_stop) {
			cap.probe_runs++;
			cap.probe_alarms += is_alarm;
			fprintf(stderr,
				"capture: probe %s: %" PRIu64 " reads, p50 %.1f us p%" PRIu64
				" %.1f us max %.1f us%s\n",
				c.target, r.samples, th_hist_percentile(&r.service, 50) / 1e3,
				cap.set.probe_percentile,
				th_hist_percentile(&r.service, (double)cap.set.probe_percentile) /
					1e3,
				r.service.max / 1e3,
				is_alarm ? "  ALARM: above the threshold" : "");
		}
		usleep(100000);
	}
	return NULL;
}

/* "-" is stdout, "none" writes nothing (the RPC log costs the decode lcore its formatting). */
static int
open_output(const char *path, int *fd)
{
	if (path == NULL || strcmp(path, "none") == 0) {
		*fd = -1;
		return 0;
	}
	if (strcmp(path, "-") == 0) {
		*fd = STDOUT_FILENO;
		return 0;
	}
	/* Not emptied yet: a run that stops before its ports are up (EAL refusing an
	 * argument, a --vdev whose file is missing) leaves the last run's output as it was. */
	*fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0) {
		fprintf(stderr, "capture: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Empty the outputs that are files, once the ports are up and the run is about to write. */
static int
empty_outputs(void)
{
	const char *paths[TH_OUT__DEST_COUNT] = {
		[TH_OUT_RPC] = cap.set.output,
		[TH_OUT_RECORDS] = cap.set.records,
		[TH_OUT_NAMES] = cap.set.names,
	};
	struct stat st;

	for (unsigned int i = 0; i < TH_OUT__DEST_COUNT; i++) {
		int fd = cap.out_fds[i];

		if (fd <= STDOUT_FILENO || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (ftruncate(fd, 0) != 0) {
			fprintf(stderr, "capture: cannot empty %s: %s\n", paths[i],
				strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int
open_outputs(void)
{
	int rc;

	rc = open_output(cap.set.output, &cap.out_fds[TH_OUT_RPC]);
	rc = rc ? rc : open_output(cap.set.records, &cap.out_fds[TH_OUT_RECORDS]);
	rc = rc ? rc : open_output(cap.set.names, &cap.out_fds[TH_OUT_NAMES]);
	return rc;
}

static int
run(void)
{
	uint64_t start_tsc = rte_rdtsc(), next_stats, hz = rte_get_tsc_hz(),
		 next_steer = start_tsc + hz;
	unsigned int i, done;
	bool signalled = false, has_unread;

	next_stats =
		cap.set.stats_interval_ns
			? start_tsc + (uint64_t)((double)cap.set.stats_interval_ns / cap.ns_per_tsc)
			: UINT64_MAX;
	if (cap.set.probe_target != NULL) {
		/* It inherits the mask: SIGINT and SIGTERM stay the control thread's. */
		stop_signals(SIG_BLOCK);
		cap.has_probe_thread =
			pthread_create(&cap.probe_thread, NULL, probe_main, NULL) == 0;
		stop_signals(SIG_UNBLOCK);
		if (!cap.has_probe_thread)
			fprintf(stderr, "capture: cannot start the probe thread; probes are off\n");
	}
	if (cap.has_dispatcher)
		rte_eal_remote_launch(dispatch_main, &cap.disp, cap.disp.lcore_id);
	for (i = 0; i < cap.n_session && !cap.is_inline_session; i++)
		rte_eal_remote_launch(session_main, &cap.sl[i], cap.sl[i].lcore_id);
	for (i = 0; i < cap.n_decode; i++)
		rte_eal_remote_launch(decode_main, &cap.dl[i], cap.dl[i].lcore_id);

	for (;;) {
		if (got_signal && !signalled) {
			signalled = true;
			fprintf(stderr, "capture: %s, stopping\n",
				got_signal == SIGINT ? "interrupted" : "terminated");
			atomic_store(&cap.stop_rx, true);
		}
		if (drain_output() == 0)
			rte_delay_us_sleep(1000);
		for (i = 0, done = 0; i < cap.n_decode; i++)
			done += atomic_load(&cap.dl[i].is_done);
		for (i = 0; i < cap.n_session; i++)
			done += atomic_load(&cap.sl[i].is_done);
		if (done == cap.n_decode + cap.n_session)
			break;
		if (rte_rdtsc() >= next_steer) {
			clock_steer();
			next_steer += hz;
		}
		if (rte_rdtsc() >= next_stats) {
			th_stats_progress(start_tsc);
			next_stats +=
				(uint64_t)((double)cap.set.stats_interval_ns / cap.ns_per_tsc);
		}
	}
	rte_eal_mp_wait_lcore();
	if (cap.has_probe_thread) {
		cap.probe_stop = 1;
		pthread_join(cap.probe_thread, NULL);
	}
	drain_output();
	/* Every lcore had finished: the signal cut nothing short, but it came and is said. */
	if (got_signal && !signalled)
		fprintf(stderr, "capture: %s after the capture ended; nothing was cut short\n",
			got_signal == SIGINT ? "interrupted" : "terminated");
	has_unread = th_stats_final(stderr, (double)(rte_rdtsc() - start_tsc) / (double)hz);
	return cap.out_totals.is_broken || has_unread ? 1 : 0;
}

int
th_cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"output", required_argument, NULL, 'o'},
		{"records", required_argument, NULL, 'r'},
		{"decode-lcores", required_argument, NULL, 'n'},
		{"stats-interval", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config = NULL, *output = NULL, *lcores = NULL, *interval = NULL,
		   *records = NULL;
	struct th_conf *conf = NULL;
	char err[512], **eal_argv = NULL, *eal_copy = NULL, runtime_dir[PATH_MAX];
	int eal_argc, eal_start = argc, opt, i, rc = 1, ret;
	struct vdev_args vdevs;

	/* Everything after "--" or "--eal" belongs to DPDK. */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0 || strcmp(argv[i], "--eal") == 0) {
			eal_start = i;
			break;
		}
	optind = 1;
	while ((opt = getopt_long(eal_start, argv, "c:o:r:n:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			/* One file is read: a second would silently drop every key of the first. */
			if (config != NULL) {
				fprintf(stderr,
					"capture: -c given twice (%s, then %s): one config file "
					"is read; put the keys in one file\n",
					config, optarg);
				return 2;
			}
			config = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'r':
			records = optarg;
			break;
		case 'n':
			lcores = optarg;
			break;
		case 's':
			interval = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < eal_start) {
		fprintf(stderr, "capture: unexpected argument '%s' (EAL options go after --)\n",
			argv[optind]);
		return 2;
	}
	if (th_settings_load(&cap.set, config, &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "capture: %s\n", err);
		th_conf_free(conf);
		return 2;
	}
	if (output != NULL)
		cap.set.output = output;
	if (records != NULL)
		cap.set.records = records;
	if (lcores != NULL) {
		uint64_t n;

		if (th_conf_parse_u64(lcores, 1, MAX_DECODE, false, &n) == 0)
			cap.set.decode_lcores = n;
		else {
			fprintf(stderr, "capture: --decode-lcores wants 1 to %d\n", MAX_DECODE);
			rc = 2;
			goto free_conf;
		}
	}
	if (interval != NULL) {
		double v;

		if (th_conf_parse_double(interval, 0, 1e6, &v) != 0) {
			fprintf(stderr, "capture: --stats-interval wants seconds, 0 to 1000000\n");
			rc = 2;
			goto free_conf;
		}
		cap.set.stats_interval_ns = (uint64_t)(v * 1e9);
		cap.set.is_interval_given = true;
	}
	if (th_settings_check(&cap.set, conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "capture: %s\n", err);
		rc = 2;
		goto free_conf;
	}
	eal_argc = th_settings_eal_argv(conf, argc - eal_start - (eal_start < argc),
		argv + eal_start + (eal_start < argc), &eal_argv, &eal_copy);
	if (eal_argc < 0) {
		fprintf(stderr, "capture: out of memory\n");
		goto free_conf;
	}
	if (th_conf_check_unused(conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "capture: %s (see README, Configuration)\n", err);
		rc = 2;
		goto free_conf;
	}

	if (th_settings_outputs_clash(&cap.set, eal_argc, eal_argv, config)) {
		rc = 2;
		goto free_conf;
	}
	/* EAL with no arguments would probe every PCI device on every core, with hugepages. */
	if (eal_argc <= 1) {
		fprintf(stderr,
			"capture: no EAL arguments, so no port: give them after -- (or [eal] "
			"args),\n"
			"  e.g. -- -l 0-1 --vdev=net_pcap0,rx_pcap=FILE, or a NIC with -a "
			"PCI-ADDRESS\n");
		rc = 2;
		goto free_conf;
	}
	if (th_settings_inputs_check(eal_argc, eal_argv) != 0) {
		rc = 2;
		goto free_conf;
	}
	if (open_outputs() != 0)
		goto close_out;
	vdev_args_find(&vdevs, eal_argc, eal_argv);
	/* EAL's threads inherit the mask: blocked there, the signals are the control
	 * thread's alone (on_signal()). One sent meanwhile waits for the handler. */
	stop_signals(SIG_BLOCK);
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		stop_signals(SIG_UNBLOCK);
		fprintf(stderr, "capture: DPDK EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		/* EAL says EINVAL for arguments it refuses: a usage error like ours. */
		rc = rte_errno == EINVAL ? 2 : 1;
		/* Its runtime directory, if it made one: only when empty (no other user). */
		if (rte_eal_get_runtime_dir()[0] != '\0')
			rmdir(rte_eal_get_runtime_dir());
		goto close_out;
	}
	{
		struct sigaction sa = {
			.sa_handler = on_signal}; /* no SA_RESTART: see on_signal() */

		sigemptyset(&sa.sa_mask);
		cap.out_totals.stop = &got_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		stop_signals(SIG_UNBLOCK);
	}
	signal(SIGPIPE, SIG_IGN);
	clock_start();

	ret = setup_dataplane(&vdevs);
	if (ret == 0 && empty_outputs() != 0)
		ret = -EIO;
	if (ret == 0) {
		uint64_t lost;

		cap.n_packet_sockets = th_kdrops_find();
		rte_telemetry_register_cmd("/tracehound/stats", th_stats_telemetry,
			"tracehound decode counters, summed over lcores");
		rte_telemetry_register_cmd("/tracehound/srt", th_stats_telemetry_srt,
			"server response time by procedure since the start, ns");
		rc = run();
		lost = th_stats_trace_lost();
		if (rc == 0 && lost > 0) {
			fprintf(stderr,
				"capture: %" PRIu64 " trace records were lost (statistics "
				"above, by reason): exit 1\n",
				lost);
			rc = 1;
		}
	} else if (ret == -ENODEV || ret == -EINVAL) {
		rc = 2; /* no port, or too few lcores: the command line's to mend */
	}
	teardown();
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	remove_runtime_dir(runtime_dir);
close_out:
	for (i = 0; i < TH_OUT__DEST_COUNT; i++)
		if (cap.out_fds[i] > STDOUT_FILENO)
			close(cap.out_fds[i]);
free_conf:
	free(eal_argv);
	free(eal_copy);
	th_conf_free(conf);
	return rc;
}
