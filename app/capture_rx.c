/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound capture's reading of ports: live ports as fast as they come,
 * pcap file ports paced by the free mbufs (net_pcap drops a record it has no
 * mbuf for), ended at their end or libpcap's first error, and several files
 * on one lcore read in the order of their records' times.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "capture.h"
#include "th_bytes.h"
#include "th_pkt.h"

#define EOF_EMPTY_POLLS 64 /* empty bursts that mean a pcap file has ended */

/* Frames of file port @p port the free mbufs hold now, at most @p burst. */
static unsigned int
file_fit(uint16_t port, unsigned int burst)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(cap.pool, rte_lcore_id());
	/* The pool's own count (its ring), without rte_mempool_avail_count()'s walk
	 * over every lcore's cache; this lcore's cache is what it takes from first. */
	unsigned int n = rte_mempool_get_ops(cap.pool->ops_index)->get_count(cap.pool);
	unsigned int frames = (n + (c != NULL ? c->len : 0)) / cap.file_segs[port];

	return frames < burst ? frames : burst;
}

/*
 * Whether the dispatcher's decode lcores still hold frames it handed them, in
 * their rings or being decoded (not all freed yet): their mbufs come back to
 * the pool.
 */
static bool
decode_busy(void)
{
	for (unsigned int i = 0; i < cap.n_decode; i++)
		if (cap.dl[i].in != NULL && atomic_load_explicit(&cap.dl[i].freed,
						    memory_order_acquire) != cap.disp.handed[i])
			return true;
	return false;
}

/*
 * Frames of file port @p port the free mbufs hold, at most @p burst; 0 with
 * *@p is_busy while the decode lcores still hold mbufs that come back.
 * Without frames on their way, no more come back: a second look is exact.
 */
static unsigned int
file_room(uint16_t port, unsigned int burst, bool *is_busy)
{
	unsigned int frames = file_fit(port, burst);

	*is_busy = false;
	if (frames > 0)
		return frames;
	if (decode_busy()) {
		*is_busy = true;
		return 0;
	}
	return file_fit(port, burst);
}

/*
 * Frames a file port may be asked for now. net_pcap reads a record before it
 * takes its mbufs (one per data room of the record: a jumbo frame takes
 * several) and drops the record when the pool runs out; the pool runs out
 * when the decode lcores still hold what the dispatcher handed them, so a
 * replay waits for them (a file has no line rate to keep up with): 0. With
 * nothing on its way (mbufs held elsewhere), one frame anyway.
 */
static unsigned int
file_burst(uint16_t port, unsigned int burst)
{
	bool is_busy;
	unsigned int frames = file_room(port, burst, &is_busy);

	return frames > 0 || is_busy ? frames : 1;
}

enum file_state { FILE_READING, FILE_FAILED, FILE_NO_MBUF };

/*
 * What a short burst from file port @p port means. net_pcap counts a receive
 * error when libpcap fails (a record cut short or damaged) and would go on
 * reading the bytes after it as records: a file port is read to its first
 * error, where the statistics' inputs section says it stopped. A record it
 * dropped for want of an mbuf is no sign of the file's end.
 */
static enum file_state
file_state(uint16_t port)
{
	struct rte_eth_stats es;

	if (rte_eth_stats_get(port, &es) != 0)
		return FILE_READING;
	if (es.ierrors > 0)
		return FILE_FAILED;
	if (es.rx_nombuf > cap.file_nombuf[port]) {
		cap.file_nombuf[port] = es.rx_nombuf;
		return FILE_NO_MBUF;
	}
	return FILE_READING;
}

void
th_rx_poll_init(struct rx_poll *p, struct rxq *q, unsigned int n_q)
{
	unsigned int files = 0, i;

	memset(p, 0, sizeof(*p));
	p->q = q;
	p->n_q = n_q;
	for (i = 0; i < n_q; i++)
		files += cap.is_file_port[q[i].port];
	/* net_pcap stamps every frame with its record's time (setup_port()). */
	p->is_merge = files > 1 && cap.ts_offset >= 0;
	/* Held frames must leave mbufs for every file's next frame: a file that cannot
	 * read its next would let the others' go on out of order. */
	for (i = 0; p->is_merge && i < n_q; i++) {
		unsigned int share;

		if (!cap.is_file_port[q[i].port])
			continue; /* a live port beside the files: not held */
		share = (unsigned int)(cap.set.mbufs / 2 / files) / cap.file_segs[q[i].port];
		p->hold[i].max = share < 1 ? 1 : share > FILE_HOLD ? FILE_HOLD : share;
	}
}

static bool
file_ended(const struct rx_poll *p, unsigned int i)
{
	return p->empty[i] >= EOF_EMPTY_POLLS;
}

/* Up to @p want frames from file queue @p i; a short burst may end the file. */
static unsigned int
read_file(struct rx_poll *p, unsigned int i, struct rte_mbuf **pkts, unsigned int want)
{
	unsigned int nb = rte_eth_rx_burst(p->q[i].port, p->q[i].queue, pkts, (uint16_t)want);

	/* A short burst from a file: its end, libpcap's first error, or no mbuf. */
	if (nb < want) {
		switch (file_state(p->q[i].port)) {
		case FILE_FAILED:
			p->empty[i] = EOF_EMPTY_POLLS;
			break;
		case FILE_NO_MBUF:
			p->empty[i] = 0;
			break;
		default:
			p->empty[i] += nb == 0;
		}
	}
	if (nb > 0 && !file_ended(p, i))
		p->empty[i] = 0;
	return nb;
}

/*
 * Whether frame @p m carries an ONC RPC reply. Files stamped coarsely (old
 * captures: 10 ms) give a call and its reply one time; no reply comes before
 * its call. A TCP segment is read as starting a record (marker, XID, type):
 * one in the middle of a record may be misread, which costs only a tie's order.
 */
static bool
is_rpc_reply(const struct rte_mbuf *m)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), at;
	struct th_pkt_meta pm;

	if (th_pkt_parse(frame, len, cap.link[m->port], &pm) != TH_PKT_OK)
		return false;
	at = pm.payload_offset + (pm.l4 == TH_PKT_L4_TCP ? 8u : 4u); /* msg_type */
	return at + 4 <= len && at + 4 <= pm.payload_offset + pm.payload_len &&
	       th_be_get32(frame + at) == 1; /* REPLY */
}

/*
 * Hand on held frames, earliest first, up to @p burst: until a file that has
 * not ended runs out of held frames (its next may be earlier than the rest),
 * or, with @p is_draining, until none are held.
 */
static unsigned int
take_held(struct rx_poll *p, struct rte_mbuf **pkts, unsigned int burst, bool is_draining,
	unsigned int *got_from)
{
	unsigned int n = 0, i, best;

	while (n < burst && p->n_held > 0) {
		uint64_t best_ns = UINT64_MAX;
		int best_reply = -1; /* whether the best is a reply: not asked yet */

		best = 0;
		for (i = 0; i < p->n_q; i++) {
			const struct file_hold *h = &p->hold[i];
			uint64_t ns;

			if (h->n == 0)
				continue;
			ns = mbuf_time(h->m[h->head], 0);
			if (ns < best_ns) {
				best_ns = ns;
				best = i;
				best_reply = -1;
			} else if (ns == best_ns) {
				/* A tie: the call first, wherever its file is. */
				if (best_reply < 0)
					best_reply =
						is_rpc_reply(p->hold[best].m[p->hold[best].head]);
				if (best_reply && !is_rpc_reply(h->m[h->head])) {
					best = i;
					best_reply = 0;
				}
			}
		}
		pkts[n++] = p->hold[best].m[p->hold[best].head++];
		p->hold[best].n--;
		p->n_held--;
		*got_from = best;
		if (p->hold[best].n == 0 && !is_draining && !file_ended(p, best))
			break;
	}
	return n;
}

/*
 * Read the file queues by time: refill each file's held frames when it has
 * none left, then hand on frames while every file that has not ended holds
 * one. A file whose next frames no free mbuf can hold, while nothing waits in
 * the decode rings, would wait for ever: the held frames go on without it.
 */
static unsigned int
merge_files(struct rx_poll *p, struct rte_mbuf **pkts, unsigned int burst, bool *all_eof,
	unsigned int *got_from)
{
	bool is_waiting = false, is_short = false, is_busy;
	unsigned int i, want, n;

	for (i = 0; i < p->n_q; i++) {
		struct file_hold *h = &p->hold[i];

		if (!cap.is_file_port[p->q[i].port] || h->n > 0 || file_ended(p, i))
			continue;
		want = file_room(p->q[i].port, h->max, &is_busy);
		if (want == 0) {
			if (is_busy) {
				is_waiting = true; /* their mbufs come back */
				continue;
			}
			if (p->n_held > 0) {
				is_short = true; /* the held frames' mbufs come back once decoded */
				continue;
			}
			want = 1;
		}
		h->head = 0;
		h->n = read_file(p, i, h->m, want);
		p->n_held += h->n;
		if (h->n == 0 && !file_ended(p, i))
			is_waiting = true;
	}
	if (is_waiting || p->n_held == 0) {
		*all_eof = !is_waiting && p->n_held == 0;
		return 0;
	}
	*all_eof = false;
	n = take_held(p, pkts, burst, false, got_from);
	if (is_short)
		atomic_fetch_add_explicit(&cap.files_out_of_order, n, memory_order_relaxed);
	return n;
}

/*
 * Poll the queues once, from the one after the last that gave frames, the
 * merged files taking one turn among them (a busy live port does not starve
 * the files beside it): frames received; *all_eof when every port is a file
 * that ended.
 */
static unsigned int
rx_poll(struct rx_poll *p, struct rte_mbuf **pkts, unsigned int burst, bool *all_eof,
	unsigned int *got_from)
{
	unsigned int turns = p->n_q + p->is_merge, k, i, nb, want;
	bool is_file, files_eof;

	*all_eof = true;
	for (k = 0; k < turns; k++) {
		i = (p->next + k) % turns;
		if (i == p->n_q) {
			nb = merge_files(p, pkts, burst, &files_eof, got_from);
			*all_eof = *all_eof && files_eof;
		} else {
			is_file = cap.is_file_port[p->q[i].port];
			if (is_file && (p->is_merge || file_ended(p, i)))
				continue; /* merged, or ended */
			if (!is_file) {
				*all_eof = false;
				nb = rte_eth_rx_burst(
					p->q[i].port, p->q[i].queue, pkts, (uint16_t)burst);
			} else {
				want = file_burst(p->q[i].port, burst);
				nb = want > 0 ? read_file(p, i, pkts, want) : 0;
				if (!file_ended(p, i))
					*all_eof = false;
			}
			if (nb > 0)
				*got_from = i;
		}
		if (nb > 0) {
			*all_eof = false;
			p->next = i + 1;
			return nb;
		}
	}
	return 0;
}

unsigned int
th_rx_next(struct rx_poll *p, struct rte_mbuf **pkts, unsigned int burst, unsigned int *got_from,
	bool *is_over)
{
	bool all_eof = false;
	unsigned int nb;

	/* After a stop, the frames still held: they were delivered, so they are decoded. */
	if (atomic_load(&cap.stop_rx)) {
		nb = take_held(p, pkts, burst, true, got_from);
		*is_over = nb == 0;
		return nb;
	}
	nb = rx_poll(p, pkts, burst, &all_eof, got_from);
	*is_over = nb == 0 && all_eof;
	return nb;
}
