/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound capture's statistics: the lcores' and ports' counters added up,
 * the progress lines, the final block with its summary line, and the same
 * counters over telemetry while the capture runs.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_rwlock.h>
#include <rte_telemetry.h>

#include "capture.h"
#include "capture_input.h"
#include "capture_kdrops.h"
#include "th_hist.h"
#include "th_srt.h"

static void
sum_stats(struct th_decode_stats *sum, uint64_t *ops_dropped)
{
	struct th_decode_stats s;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	*ops_dropped = 0;
	for (i = 0; i < cap.n_decode; i++) {
		th_decode_get_stats(cap.dl[i].dec, &s);
		th_decode_stats_add(sum, &s);
		*ops_dropped += cap.dl[i].out.dropped;
	}
}

/* The ports' receive counters added up (those a port cannot read count 0). */
static void
sum_ports(struct rte_eth_stats *sum)
{
	struct rte_eth_stats es;

	memset(sum, 0, sizeof(*sum));
	for (unsigned int i = 0; i < cap.n_ports; i++) {
		if (rte_eth_stats_get(cap.ports[i], &es) != 0)
			continue;
		sum->ipackets += es.ipackets;
		sum->imissed += es.imissed;
		sum->rx_nombuf += es.rx_nombuf;
		sum->ierrors += es.ierrors;
	}
}

/* Every trace stream's counters (sessions' and decode lcores' RPCs) once closed, added up. */
static void
sum_trace(struct th_segment_counters *t)
{
	unsigned int i, k;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < cap.n_session + cap.n_decode; i++) {
		const struct th_segment_counters *c =
			i < cap.n_session ? &cap.sl[i].seg_ctr : &cap.dl[i - cap.n_session].rpc_ctr;

		t->records += c->records;
		t->segments += c->segments;
		t->file_bytes += c->file_bytes;
		t->raw_bytes += c->raw_bytes;
		for (k = 0; k < TH_SEGMENT_LOSS_MAX; k++)
			t->lost[k] += c->lost[k];
	}
}

uint64_t
th_stats_trace_lost(void)
{
	struct th_segment_counters t;
	uint64_t n = 0;

	sum_trace(&t);
	for (unsigned int k = 0; k < TH_SEGMENT_LOSS_MAX; k++)
		n += t.lost[k];
	return n;
}

/* Open/close inference, every session lcore added up, and what it lost on the way. */
struct sess_sum {
	struct th_sess_counters c;
	uint64_t not_used;   /* ops inference does not use */
	uint64_t ring_full;  /* ops lost: a session ring was full */
	uint64_t pool_empty; /* ops lost: no free event */
	uint64_t copies;     /* directory ops copied for the other session lcores */
	uint64_t early;      /* ops taken before their turn: merge queues full */
	uint64_t dropped;    /* records dropped: output buffers full */
};

static void
sum_sessions(struct sess_sum *sum)
{
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < cap.n_session; i++) {
		const struct th_sess_counters *c = th_sess_counters(cap.sl[i].t);

#define TH_SUM_X(name, text) sum->c.name += c->name;
		TH_SESS_COUNTER_LIST(TH_SUM_X)
#undef TH_SUM_X
		sum->dropped += cap.sl[i].records.dropped + cap.sl[i].names.dropped;
		sum->early += cap.sl[i].merge_early;
	}
	for (i = 0; i < cap.n_decode; i++) {
		sum->not_used += cap.dl[i].sess_not_used;
		sum->pool_empty += cap.dl[i].sess_pool_empty;
		sum->ring_full += cap.dl[i].sess_ring_full;
		sum->copies += cap.dl[i].sess_copies;
	}
}

static void
print_session_stats(FILE *out)
{
	struct sess_sum sum;

	sum_sessions(&sum);
	fprintf(out, "open/close inference (%u session lcore%s%s)\n", cap.n_session,
		cap.n_session == 1 ? "" : "s",
		cap.is_inline_session ? ", inline on the decode lcore" : "");
#define TH_PRINT_X(name, text) fprintf(out, "  %-14" PRIu64 " %s\n", sum.c.name, text);
	TH_SESS_COUNTER_LIST(TH_PRINT_X)
#undef TH_PRINT_X
	fprintf(out, "  %-14" PRIu64 " %s\n", sum.not_used,
		"ops inference does not use (other procedures, RPC errors, no call seen)");
	fprintf(out, "  %-14" PRIu64 " %s\n", sum.ring_full,
		"ops lost to inference: session ring full");
	fprintf(out, "  %-14" PRIu64 " %s\n", sum.pool_empty,
		"ops lost to inference: no free event");
	if (cap.n_session > 1)
		fprintf(out, "  %-14" PRIu64 " %s\n", sum.copies,
			"copies of directory ops for the other session lcores (in the rows above)");
	if (cap.is_merged)
		fprintf(out, "  %-14" PRIu64 " %s\n", sum.early,
			"ops taken out of frame order: merge queues full");
	fprintf(out, "  %-14" PRIu64 " %s\n", sum.dropped, "records dropped: output buffers full");
	if (cap.set.trace_dir == NULL)
		return;
	{
		struct th_segment_counters t;
		unsigned int k;

		sum_trace(&t);
		fprintf(out, "trace segments (%s)\n", cap.set.trace_dir);
		fprintf(out, "  %-14" PRIu64 " records written\n", t.records);
		fprintf(out, "  %-14" PRIu64 " segments written (closed and renamed)\n",
			t.segments);
		fprintf(out, "  %-14" PRIu64 " bytes on disk (%" PRIu64 " before compression)\n",
			t.file_bytes, t.raw_bytes);
		for (k = 0; k < TH_SEGMENT_LOSS_MAX; k++)
			fprintf(out, "  %-14" PRIu64 " records lost: %s\n", t.lost[k],
				th_segment_loss_name(k));
	}
}

/* Every decode lcore's response times added up (free it), or NULL without memory. */
static struct th_srt *
srt_sum(void)
{
	struct th_srt *sum = malloc(sizeof(*sum));

	if (sum == NULL)
		return NULL;
	th_srt_init(sum);
	for (unsigned int i = 0; i < cap.n_decode; i++)
		th_srt_add(sum, th_decode_get_srt(cap.dl[i].dec));
	return sum;
}

/* Response times by procedure at the end (the decode lcores have stopped). */
static void
print_srt(FILE *out)
{
	struct th_srt *sum = srt_sum();

	if (sum == NULL) {
		fprintf(out,
			"server response time by procedure: no memory to add the lcores' up\n");
		return;
	}
	th_srt_print(out, sum, "matched RPCs, the call's last segment to the reply's first");
	free(sum);
}

/*
 * The RPCs matched since the last progress line, per second, and their response
 * times, all procedures together: each lcore's buckets only grow, so the interval's
 * are today's sums less the last line's. The interval's least and greatest values
 * are known to their buckets only: the bounds the percentiles are clamped to, and
 * "max" is the top bucket's upper end. " | N RPCs/s p50 X p99 Y max Z us".
 */
static void
put_interval(FILE *out, double interval_s, uint64_t matched)
{
	static uint64_t prev[TH_SRT_BUCKETS], prev_matched;
	uint64_t cur[TH_SRT_BUCKETS] = {0}, n = 0, lo, hi, bottom_lo, unused;
	uint32_t b, r, bottom = UINT32_MAX, top = 0;
	unsigned int i;

	for (i = 0; i < cap.n_decode; i++) {
		const struct th_srt *t = th_decode_get_srt(cap.dl[i].dec);
		uint32_t rows = atomic_load_explicit(&t->rows, memory_order_acquire);

		for (r = 0; r < rows; r++)
			for (b = 0; b < TH_SRT_BUCKETS; b++)
				cur[b] += t->buckets[r][b];
	}
	for (b = 0; b < TH_SRT_BUCKETS; b++) {
		uint64_t d = cur[b] - prev[b];

		prev[b] = cur[b];
		cur[b] = d; /* now the interval's */
		n += d;
		if (d != 0) {
			bottom = bottom == UINT32_MAX ? b : bottom;
			top = b;
		}
	}
	/* The rate counts every RPC matched (timed or not: past 64 procedures, clock). */
	if (interval_s > 0)
		fprintf(out, " | %.0f RPCs/s", (double)(matched - prev_matched) / interval_s);
	prev_matched = matched;
	if (n == 0 || !(interval_s > 0))
		return;
	th_hist_bucket_range_at(bottom, TH_SRT_BITS, &bottom_lo, &unused);
	th_hist_bucket_range_at(top, TH_SRT_BITS, &lo, &hi);
	fprintf(out, " p50 %.1f p99 %.1f max %.1f us",
		(double)th_hist_percentile_at(cur, TH_SRT_BITS, n, bottom_lo, hi, 50) / 1e3,
		(double)th_hist_percentile_at(cur, TH_SRT_BITS, n, bottom_lo, hi, 99) / 1e3,
		(double)hi / 1e3);
}

/* Frames lost before decoding: NIC missed, no mbuf, dispatch ring full, kernel drops. */
static uint64_t
frames_lost(const struct rte_eth_stats *es, uint64_t kernel_drops)
{
	return es->imissed + es->rx_nombuf + cap.disp.ring_full + kernel_drops;
}

void
th_stats_progress(uint64_t start_tsc)
{
	static double last_s;
	struct th_decode_stats s;
	struct rte_eth_stats es;
	uint64_t dropped, lost;
	double secs = (double)(rte_rdtsc() - start_tsc) / (double)rte_get_tsc_hz();

	sum_stats(&s, &dropped);
	sum_ports(&es);
	/* As the summary counts them: every frame lost before decoding, every TCP gap. */
	lost = frames_lost(&es, cap.n_packet_sockets > 0 ? th_kdrops_read() : 0);
	fprintf(stderr,
		"capture: %.1fs frames %" PRIu64 " rpcs %" PRIu64 " unmatched %" PRIu64
		" gaps %" PRIu64 " lost-frames %" PRIu64 " out-dropped %" PRIu64,
		secs, s.frames, s.ops_matched, s.ops_call_only + s.ops_reply_only,
		s.flow.gaps_lost + s.flow.gaps_payload, lost, dropped);
	put_interval(stderr, secs - last_s, s.ops_matched);
	last_s = secs;
	fputc('\n', stderr);
}

/* What the input files' checks found, for the summary. */
struct inputs_sum {
	unsigned int n_damaged;  /* files cut short or damaged */
	uint64_t records_unread; /* records no port read (nor dropped, counted) */
	unsigned int n_stopped;  /* files whose replay was stopped before their end */
};

static bool print_inputs(FILE *out, struct inputs_sum *in);

/* What each output destination's lines are (enum th_out_dest). */
static const char *const out_lines[TH_OUT__DEST_COUNT] = {
	"RPC lines", "open record lines", "name record lines"};

/* Adds ", N things" (one, @p what; more, @p whats) to a summary line when N is not 0. */
static void
put_loss(FILE *out, bool *is_first, uint64_t n, const char *what, const char *whats)
{
	if (n == 0)
		return;
	fprintf(out, "%s%" PRIu64 " %s", *is_first ? " " : ", ", n, n == 1 ? what : whats);
	*is_first = false;
}

/* Frames of a replay whose stamp was a stray, taken at the clock's time (stamp_release()). */
static uint64_t
stray_stamps(void)
{
	uint64_t n = cap.disp.strays;

	for (unsigned int i = 0; i < cap.n_decode; i++)
		n += cap.dl[i].strays;
	return n;
}

/*
 * The block's last line says whether the capture saw and kept everything:
 * each kind of loss counted above, added up, or that there was none. A reader
 * who looks at one line looks at this one.
 */
static void
print_summary(FILE *out, const struct th_decode_stats *s, const struct rte_eth_stats *es,
	uint64_t ops_dropped, uint64_t kernel_drops, const struct inputs_sum *in)
{
	struct sess_sum sess;
	uint64_t out_lost = ops_dropped + th_stats_trace_lost();
	bool is_first = true;

	sum_sessions(&sess);
	out_lost += sess.dropped;
	for (unsigned int i = 0; i < TH_OUT__DEST_COUNT; i++)
		out_lost += cap.out_totals.lines_lost[i];
	fputs("summary:", out);
	put_loss(out, &is_first, in->n_stopped, "input file not read to its end (stopped)",
		"input files not read to their end (stopped)");
	put_loss(out, &is_first, in->n_damaged, "input file cut short or damaged",
		"input files cut short or damaged");
	put_loss(out, &is_first, in->records_unread, "input record not read",
		"input records not read");
	put_loss(out, &is_first, frames_lost(es, kernel_drops), "frame lost before decoding",
		"frames lost before decoding");
	put_loss(out, &is_first, atomic_load(&cap.files_out_of_order),
		"file frame read out of time order", "file frames read out of time order");
	put_loss(out, &is_first, stray_stamps(), "frame with a stray time stamp",
		"frames with a stray time stamp");
	put_loss(out, &is_first, sess.early, "op taken out of frame order",
		"ops taken out of frame order");
	/* Cut inside their headers (their own rows) or inside their payload. */
	put_loss(out, &is_first,
		s->frames_cut + s->pkt[TH_PKT_TRUNC_L2] + s->pkt[TH_PKT_TRUNC_L3] +
			s->pkt[TH_PKT_TRUNC_L4],
		"frame cut short", "frames cut short");
	put_loss(out, &is_first, s->pkt[TH_PKT_BAD_L3] + s->pkt[TH_PKT_BAD_L4],
		"frame with a malformed IP or TCP/UDP header",
		"frames with malformed IP or TCP/UDP headers");
	put_loss(out, &is_first, s->flow.gaps_lost + s->flow.gaps_payload, "TCP gap", "TCP gaps");
	put_loss(out, &is_first, s->flow.hunt_segments,
		"TCP segment skipped hunting a record start",
		"TCP segments skipped hunting a record start");
	put_loss(out, &is_first,
		s->flow.records_lost_gap + s->flow.records_lost_idle + s->flow.records_unfinished,
		"RPC record lost whole", "RPC records lost whole");
	/* A call cut inside its header counts among the arguments cut too. */
	put_loss(out, &is_first, s->args_short + s->results_short,
		"call or reply decoded in part (cut=)", "calls or replies decoded in part (cut=)");
	/*
	 * Their ops are whole (eof is read from the record's end) but for the entries past
	 * the cut: not counted (the count is flagged partial), and with names on not named.
	 */
	put_loss(out, &is_first,
		s->flow.whole_cut_size + s->flow.whole_cut_busy + s->flow.whole_cut_gap,
		"listing cut (entries past the cut not counted or named)",
		"listings cut (entries past the cut not counted or named)");
	put_loss(out, &is_first, s->ops_call_only + s->ops_reply_only,
		"RPC without its call or reply", "RPCs without their call or reply");
	put_loss(out, &is_first, sess.ring_full + sess.pool_empty, "op lost to inference",
		"ops lost to inference (a session lcore fell behind)");
	put_loss(out, &is_first, out_lost, "line or record not written",
		"lines or records not written");
	/* Not a loss of traffic, but a watch that did not happen: a reader of this line
	 * must not take the disk for fine. */
	put_loss(out, &is_first, cap.probe_failures, "disk probe failed", "disk probes failed");
	if (cap.n_session > 0)
		put_loss(out, &is_first,
			sess.c.sessions_evicted + sess.c.files_evicted + sess.c.history_evicted +
				sess.c.clients_full,
			"inference step cut short by a full table",
			"inference steps cut short by a full table");
	fputs(is_first ? " nothing lost: every frame decoded, every call met its reply\n" : "\n",
		out);
}

/* @return true when an input file had records that were not read (print_inputs()). */
bool
th_stats_final(FILE *out, double secs)
{
	struct th_decode_stats s;
	struct rte_eth_stats es;
	struct inputs_sum in = {0};
	uint64_t dropped, kernel_drops = cap.n_packet_sockets > 0 ? th_kdrops_read() : 0;
	unsigned int i, n_files = 0;
	bool has_unread = false;

	sum_stats(&s, &dropped);
	sum_ports(&es);
	for (i = 0; i < cap.n_ports; i++)
		n_files += cap.is_file_port[cap.ports[i]];
	fprintf(out, "\n--- tracehound capture statistics (%.3f s, %u decode lcore%s%s) ---\n",
		secs, cap.n_decode, cap.n_decode == 1 ? "" : "s",
		cap.has_dispatcher ? ", software dispatch" : "");
	/* Files read to where their ports ended (not stopped early) are checked. */
	if (!atomic_load(&cap.stop_rx))
		has_unread = print_inputs(out, &in);
	else
		for (i = 0; i < cap.n_ports; i++)
			in.n_stopped += cap.is_file_port[cap.ports[i]];
	th_decode_stats_print(out, &s);
	fprintf(out, "  %-14" PRIu64 " %s\n", es.ipackets, "NIC: frames delivered (ipackets)");
	fprintf(out, "  %-14" PRIu64 " %s\n", es.imissed, "NIC: frames missed (imissed)");
	fprintf(out, "  %-14" PRIu64 " %s\n", es.rx_nombuf, "NIC: no mbuf (rx_nombuf)");
	fprintf(out, "  %-14" PRIu64 " %s\n", es.ierrors, "NIC: receive errors");
	if (cap.n_packet_sockets > 0)
		fprintf(out, "  %-14" PRIu64 " %s\n", kernel_drops,
			"NIC: frames the kernel dropped (net_af_packet ring full)");
	fprintf(out, "  %-14" PRIu64 " %s\n", cap.disp.ring_full, "dispatch ring full");
	if (n_files > 1)
		fprintf(out, "  %-14" PRIu64 " %s\n", atomic_load(&cap.files_out_of_order),
			"file frames read out of time order (too few mbufs)");
	if (!cap.has_live_port)
		fprintf(out, "  %-14" PRIu64 " %s\n", stray_stamps(),
			"frames with a stray time stamp, taken at the clock's time");
	fprintf(out, "  %-14" PRIu64 " %s\n", dropped, "ops dropped: output buffers full");
	if (cap.has_live_port)
		fprintf(out, "  %-14" PRId64 " %s\n", cap.clock_error_ns / 1000,
			"us the host-stamped frame times were off the wall clock, last second");
	print_srt(out);
	if (cap.n_session > 0)
		print_session_stats(out);
	fprintf(out, "output\n  %-14" PRIu64 " %s\n", cap.out_totals.bytes[TH_OUT_RPC],
		"bytes of RPC lines written");
	if (cap.n_session > 0)
		fprintf(out, "  %-14" PRIu64 " %s\n  %-14" PRIu64 " %s\n",
			cap.out_totals.bytes[TH_OUT_RECORDS], "bytes of open records written",
			cap.out_totals.bytes[TH_OUT_NAMES], "bytes of name records written");
	for (i = 0; i < TH_OUT__DEST_COUNT; i++)
		if (cap.out_totals.is_broken && cap.out_fds[i] >= 0)
			fprintf(out, "  %-14" PRIu64 " %s lost: the output failed\n",
				cap.out_totals.lines_lost[i], out_lines[i]);
	if (cap.set.probe_target != NULL)
		fprintf(out,
			"disk probes (%s)\n  %-14" PRIu64 " runs\n  %-14" PRIu64
			" alarms\n  %-14" PRIu64 " failures\n",
			cap.set.probe_target, cap.probe_runs, cap.probe_alarms, cap.probe_failures);
	print_summary(out, &s, &es, dropped, kernel_drops, &in);
	return has_unread;
}

int
th_stats_telemetry(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const pkt_keys[] = {
#define TH_TEL_X(name, text) "pkt_" #name,
		TH_PKT_STATUS_LIST(TH_TEL_X)
#undef TH_TEL_X
	};
	struct th_decode_stats s;
	struct rte_eth_stats es;
	struct sess_sum sess;
	uint64_t dropped, kernel_drops;
	char key[64];

	(void)cmd;
	(void)params;
	rte_rwlock_read_lock(&cap.tel_lock);
	if (cap.is_tel_off) {
		rte_rwlock_read_unlock(&cap.tel_lock);
		return -ENODEV; /* stopping: the tables are going */
	}
	sum_stats(&s, &dropped);
	sum_sessions(&sess);
	sum_ports(&es);
	kernel_drops = cap.n_packet_sockets > 0 ? th_kdrops_read() : 0; /* sockets still open */
	rte_rwlock_read_unlock(&cap.tel_lock);
	rte_tel_data_start_dict(d);
#define TH_TEL_X(name, text) rte_tel_data_add_dict_u64(d, #name, s.name);
	TH_DECODE_COUNTER_LIST(TH_TEL_X)
#undef TH_TEL_X
	/* Every loss the final block names: frames by parse outcome (pkt_not_ip, ...), TCP
	 * streams, matching, the NICs, and inference when it runs. */
	for (int i = 1; i < TH_PKT__STATUS_COUNT; i++) {
		size_t k;

		for (k = 0; pkt_keys[i][k] != '\0' && k + 1 < sizeof(key); k++)
			key[k] = (char)tolower((unsigned char)pkt_keys[i][k]);
		key[k] = '\0';
		rte_tel_data_add_dict_u64(d, key, s.pkt[i]);
	}
#define TH_TEL_X(name, text) rte_tel_data_add_dict_u64(d, "flow_" #name, s.flow.name);
	TH_FLOW_COUNTER_LIST(TH_TEL_X)
#undef TH_TEL_X
#define TH_TEL_X(name, text) rte_tel_data_add_dict_u64(d, "xid_" #name, s.xid.name);
	TH_XID_COUNTER_LIST(TH_TEL_X)
#undef TH_TEL_X
	rte_tel_data_add_dict_u64(d, "nic_ipackets", es.ipackets);
	rte_tel_data_add_dict_u64(d, "nic_imissed", es.imissed);
	rte_tel_data_add_dict_u64(d, "nic_rx_nombuf", es.rx_nombuf);
	rte_tel_data_add_dict_u64(d, "nic_ierrors", es.ierrors);
	if (cap.n_packet_sockets > 0)
		rte_tel_data_add_dict_u64(d, "nic_kernel_drops", kernel_drops);
	rte_tel_data_add_dict_u64(d, "ring_full", cap.disp.ring_full);
	rte_tel_data_add_dict_u64(d, "files_out_of_order", atomic_load(&cap.files_out_of_order));
	rte_tel_data_add_dict_u64(d, "ops_dropped_output", dropped);
	if (cap.n_session > 0) {
#define TH_TEL_X(name, text) rte_tel_data_add_dict_u64(d, "sess_" #name, sess.c.name);
		TH_SESS_COUNTER_LIST(TH_TEL_X)
#undef TH_TEL_X
		rte_tel_data_add_dict_u64(d, "sess_ops_not_used", sess.not_used);
		rte_tel_data_add_dict_u64(d, "sess_op_copies", sess.copies);
		rte_tel_data_add_dict_u64(d, "sess_ring_full", sess.ring_full);
		rte_tel_data_add_dict_u64(d, "sess_pool_empty", sess.pool_empty);
		rte_tel_data_add_dict_u64(d, "sess_out_of_order", sess.early);
		rte_tel_data_add_dict_u64(d, "sess_records_dropped_output", sess.dropped);
	}
	return 0;
}

/*
 * /tracehound/srt: response times by procedure since the start, every decode
 * lcore's added up as they run: one dict per procedure (PROGRAM_PROC, as the
 * RPC log spells them with '_' for the space), nanoseconds.
 */
int
th_stats_telemetry_srt(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const struct {
		const char *name;
		double p;
	} pct[] = {{"p50_ns", 50}, {"p90_ns", 90}, {"p99_ns", 99}, {"p999_ns", 99.9}};
	struct th_srt *sum = NULL;
	uint32_t r, rows;
	bool is_off;

	(void)cmd;
	(void)params;
	rte_rwlock_read_lock(&cap.tel_lock);
	is_off = cap.is_tel_off;
	if (!is_off)
		sum = srt_sum();
	rte_rwlock_read_unlock(&cap.tel_lock);
	if (is_off)
		return -ENODEV; /* stopping: the tables are going */
	if (sum == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "untimed_clock", sum->untimed_clock);
	rte_tel_data_add_dict_u64(d, "untimed_rows", sum->untimed_rows);
	rows = atomic_load_explicit(&sum->rows, memory_order_relaxed);
	for (r = 0; r < rows; r++) {
		const struct th_srt_row *w = &sum->row[r];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char label[64];
		size_t k;

		if (c == NULL)
			break;
		th_srt_label(&sum->id[r], label, sizeof(label));
		/* Telemetry takes letters, digits, '_' and '/' in names: "100024.1 0" is
		 * 100024_1_0. */
		for (char *q = label; *q != '\0'; q++)
			if (!isalnum((unsigned char)*q) && *q != '/')
				*q = '_';
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "rpcs", w->count);
		rte_tel_data_add_dict_u64(c, "min_ns", w->min);
		for (k = 0; k < sizeof(pct) / sizeof(pct[0]); k++)
			rte_tel_data_add_dict_u64(
				c, pct[k].name, th_srt_percentile(sum, r, pct[k].p));
		rte_tel_data_add_dict_u64(c, "max_ns", w->max);
		rte_tel_data_add_dict_u64(c, "mean_ns", (uint64_t)(w->sum_ns / (double)w->count));
		if (rte_tel_data_add_dict_container(d, label, c, 0) != 0)
			rte_tel_data_free(c);
	}
	free(sum);
	return 0;
}

/*
 * Each pcap file port's file, read again after the port ended with receive
 * errors: whether libpcap (and so net_pcap) stopped before the file's end. Say
 * so and how many records the port could deliver; @p in adds up what it found.
 * @return true when records went unread (a file damaged before its last bytes,
 * a port that ended early); a file cut short in its last record is only said.
 */
static bool
print_inputs(FILE *out, struct inputs_sum *in)
{
	struct th_input_check c;
	struct rte_eth_stats es;
	char path[PATH_MAX];
	bool has_unread = false, has_header = false;

	for (unsigned int i = 0; i < cap.n_ports; i++) {
		if (!cap.is_file_port[cap.ports[i]] ||
			!th_capture_port_pcap_path(cap.ports[i], path, sizeof(path)))
			continue;
		if (!has_header)
			fprintf(out, "inputs\n");
		has_header = true;
		/*
		 * net_pcap counts a receive error for each libpcap error (and a frame too big
		 * for its mbufs), and each record it dropped for want of an mbuf: without
		 * either the port delivered its file whole.
		 */
		if (rte_eth_stats_get(cap.ports[i], &es) == 0 && es.ierrors == 0 &&
			es.rx_nombuf == 0) {
			fprintf(out, "  %-14" PRIu64 " records in %s\n", es.ipackets, path);
			continue;
		}
		if (th_input_check(path, &c) != 0) {
			fprintf(out, "  %s: cannot read it again: %s\n", path, c.error);
			continue;
		}
		fprintf(out, "  %-14" PRIu64 " records in %s", c.records, path);
		if (es.ipackets != c.records)
			fprintf(out, " (port %u delivered %" PRIu64 ")", cap.ports[i], es.ipackets);
		if (!c.is_damaged)
			fprintf(out, "\n");
		else if (c.unread == 0)
			fprintf(out, ", then cut short in its last record (libpcap: %s)\n",
				c.error);
		else
			fprintf(out,
				", then damaged: %" PRIu64
				" bytes after it not read (libpcap: %s)\n",
				c.unread, c.error);
		/* Records neither delivered nor dropped (counted as no mbuf) were not read. */
		if (c.records > es.ipackets + es.rx_nombuf)
			in->records_unread += c.records - es.ipackets - es.rx_nombuf;
		in->n_damaged += c.is_damaged;
		has_unread |=
			(c.is_damaged && c.unread > 0) || c.records > es.ipackets + es.rx_nombuf;
	}
	return has_unread;
}