/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The model behind the simulated subsystem. Each one-second sample is a fluid
 * steady state of message flows through these stages:
 *
 *   sender TX engine (PUs: per-packet, per-WQE, per-SGE, per-doorbell time,
 *   plus cache-miss stalls)  ->  PCIe reads (payload, descriptors, misses; TLP
 *   overhead; tags x latency)  ->  memory path (local, remote socket, GPU)  ->
 *   link (wire bytes with RoCEv2 headers, ACKs, READ requests)  ->  receiver
 *   RX buffer  ->  RX engine (per-packet time, receive-WQE and translation
 *   stalls)  ->  PCIe posted writes (payload, CQEs; MPS TLP overhead)  ->
 *   memory path (shared with that host's own TX reads).
 *
 * A flow runs as fast as its sender allows; when its receiver drains slower
 * than the arrival rate the RX buffer cycles between the XOFF and XON
 * thresholds and PFC pauses the sender for the deficit's share of the time.
 * Caches miss LRU-like by working set (QPs, MRs, QPs x WQ depth): a miss is a
 * PCIe read, mostly hidden by prefetch and pipelining, fully exposed where a
 * firmware quirk of the profile says so. Capacities carry seeded noise.
 */

#include "th_sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_private.h"

#define NS 1e-9

/* One stream of messages: data from src to dst, control (ACKs, READ requests) back. */
struct flow {
	int src, dst;      /* data direction (READ: responder to requester) */
	bool is_loop;      /* internal loopback: no wire, src == dst */
	bool is_send;      /* consumes receive WQEs at dst */
	double payload;    /* bytes per message */
	double pkts;       /* data packets per message */
	double wire;       /* wire bytes per message, headers included */
	double ctrl_pkts;  /* packets per message from dst back to src */
	double ctrl_wire;  /* their wire bytes */
	double reads;      /* PCIe read requests per message at src */
	double rd_bytes;   /* PCIe read bytes per message at src (data, descriptors, TLPs) */
};

/* What a workload does to the caches and engines, independent of rates. */
struct shape {
	double qpc_miss, mtt_miss, rwqe_miss; /* miss ratios by working set */
	double rwqe_late;                     /* receive WQEs the prefetcher did not have ready */
	double rwqe_scatter;                  /* continuation packets whose WQE context is gone */
	double sq_refetch;                    /* send WQEs whose descriptor is fetched again */
	double rd_late;                       /* READ continuations whose order state spilled */
	double tx_scale, drain_scale;         /* quirk effects, 1 when none */
	double e_qpc, e_mtt, e_rwqe;          /* exposed fraction of a miss (serial) */
	double rwqe_sync;                     /* on-demand receive WQE fetches in flight */
};

/* Raw PCIe bandwidth per direction in bits/s for a generation and width. */
static double
pcie_bps(const struct sim_params *p)
{
	static const double gts[] = { 0, 2.5, 5, 8, 16, 32, 64 };
	int g = (int)p->pcie_gen; /* the loader keeps it in 1..6 */
	double enc = g <= 2 ? 0.8 : 128.0 / 130.0;

	return gts[g] * 1e9 * p->pcie_lanes * enc;
}

/*
 * Miss ratio of a cache of @p cap entries under a working set of @p ws
 * touched round robin: LRU keeps nothing once the set is larger, so misses
 * grow as 1 - cap/ws; below capacity a few conflict misses warm up smoothly,
 * which is what lets a counter-guided search see the cliff coming.
 */
static double
miss_ratio(double ws, double cap)
{
	double r = ws / cap;

	/* Conflict misses of a set-associative cache grow with occupancy squared
	 * (two entries mapping to one full set); a lone entry has nothing to
	 * conflict with. Past capacity LRU thrashes. */
	if (r <= 1)
		return ws > 1 ? 0.02 * r * r * (1 - 1 / ws) : 0;
	return 0.02 + 0.98 * (1 - 1 / r);
}

/*
 * Share of a structure that has run past its capacity @p cap when it needs
 * @p x: a steep but smooth step (half at the capacity), the steeper the higher
 * @p steep. Smooth, so the counter it drives moves as a workload approaches
 * the limit, long before the symptom. Set-associative structures take 6; a
 * fully associative table (no set conflicts) holds every entry up to its size
 * and spills soon after: 12.
 */
static double
over(double x, double cap, double steep)
{
	double r = pow(x / cap, steep);

	return r / (1 + r);
}

/*
 * Conflict misses of a set-associative store holding @p cap of @p x entries
 * reused at random: the share of lookups whose entry another one evicted
 * grows smoothly with occupancy, x / (x + cap), long before the store is full.
 */
static double
soft(double x, double cap)
{
	return x > 0 ? x / (x + cap) : 0;
}

static double
unit_noise(struct th_sim *s)
{
	return 1 + s->p.noise * (2 * th_rng_unit(&s->rng) - 1);
}

static void
shape_of(const struct th_sim *s, const struct th_wl *wl, struct shape *sh)
{
	const struct sim_params *p = &s->p;
	unsigned i;

	memset(sh, 0, sizeof(*sh));
	sh->qpc_miss = miss_ratio((double)wl->qp_count, p->qpc_entries);
	sh->mtt_miss = miss_ratio((double)wl->mr_count, p->mtt_entries);
	sh->rwqe_miss = miss_ratio((double)wl->qp_count * wl->wq_depth, p->rwqe_entries);
	/*
	 * The receive-WQE prefetcher runs ahead of each tracked queue by a lead of
	 * WQEs and keeps a window of each ring cached. A WQE is late when a burst
	 * (one posted batch lands back to back on one QP) outruns the lead, the
	 * ring is longer than the window (prefetched entries are evicted before
	 * use), and more queues are active than it tracks, all at once: any one
	 * of them alone leaves it time to catch up.
	 */
	sh->rwqe_late = over(wl->wqe_batch, p->rwqe_lead, 6) *
			over(wl->wq_depth, p->rwqe_window, 6) *
			over(wl->qp_count, p->rwqe_slots, 6);
	/*
	 * Every packet of a SEND after the first scatters through its receive
	 * WQE's SG list again. The RX engine keeps the lists of the WQEs it
	 * prefetched, a lead per QP out of a window of the ring: the deeper the
	 * ring and the bigger the posted batch that lands at once, the more of
	 * them are evicted before their last packet (multi-packet messages only,
	 * so small MTUs and messages just above one MTU feed it most).
	 */
	sh->rwqe_scatter = soft(wl->wq_depth, p->rwqe_window) * soft(wl->wqe_batch, p->rwqe_lead);
	/*
	 * The TX scheduler visits the QPs round robin and keeps their posted send
	 * descriptors (desc_bytes + 16 per SGE) in the WQE cache it shares with
	 * receive rings; rings of many deep queues with long SG lists crowd it,
	 * and a descriptor evicted before its turn is read again.
	 */
	sh->sq_refetch = soft((double)wl->qp_count * wl->wq_depth * (p->desc_bytes + 16.0 * wl->sge) /
				      64, p->rwqe_entries);
	/*
	 * READ responses are placed in order: the first packet of a response (it
	 * carries the AETH) opens its slot, every later packet is placed by the
	 * QP's response-order state. The tracker keeps rd_lead outstanding
	 * responses for each of rd_slots QPs on chip; a posted batch of READs past
	 * the lead on more QPs than the slots spills that state to host memory,
	 * and each continuation packet then waits for a PCIe read of it. Either
	 * alone fits: few QPs keep deep state, shallow batches fit any QP.
	 */
	if (wl->opcode == TH_OPC_READ)
		sh->rd_late =
			over(wl->wqe_batch, p->rd_lead, 12) * over(wl->qp_count, p->rd_slots, 12);
	sh->tx_scale = sh->drain_scale = 1;
	for (i = 0; i < s->quirk_count; i++) {
		const struct sim_quirk *q = &s->quirk[i];

		if (!th_mfs_covers(&q->when, wl))
			continue;
		sh->tx_scale *= q->tx_scale;
		sh->drain_scale *= q->drain_scale;
		sh->e_qpc = fmax(sh->e_qpc, q->qpc_expose);
		sh->e_mtt = fmax(sh->e_mtt, q->mtt_expose);
		sh->e_rwqe = fmax(sh->e_rwqe, q->rwqe_expose);
		if (q->rwqe_sync > 0)
			sh->rwqe_sync = sh->rwqe_sync > 0 ? fmin(sh->rwqe_sync, q->rwqe_sync) :
							    q->rwqe_sync;
	}
}

/* Extra latency of a DMA to the workload's memory. */
static double
mem_ns(const struct sim_params *p, const struct th_wl *wl)
{
	if (wl->mem == TH_MEM_REMOTE)
		return p->remote_ns;
	if (wl->mem == TH_MEM_GPU)
		return p->gpu_ns;
	return 0;
}

/*
 * Per-message sizes: a WQE gathers sge consecutive requests of the pattern
 * into one wire message (the space's "sum of SGEs = messages"); the pattern
 * repeats after n / gcd(n, sge) WQEs, so averaging over that period is exact.
 */
static void
flow_sizes(const struct sim_params *p, const struct th_wl *wl, struct flow *f)
{
	unsigned n = wl->n_msgs, sge = wl->sge, a = n, b = sge, period, w, j, k = 0;
	double mtu = wl->mtu, payload = 0, pkts = 0, cpl = 0, req = 0;

	while (b != 0) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	period = n / a;
	for (w = 0; w < period; w++) {
		double m = 0, room = wl->qp_type == TH_QP_UD ? mtu : INFINITY;

		/* UD carries one MTU: the gather stops reading when the datagram is full. */
		for (j = 0; j < sge && room > 0; j++, k++) {
			double e = fmin((double)wl->msg[k % n], room);

			m += e;
			room -= e;
			cpl += ceil(e / 256);             /* read completions, 256 B each */
			req += e > 0 ? ceil(e / p->pcie_mrrs) : 1; /* read requests (tags) */
		}
		k += sge - j;
		payload += m;
		pkts += m > 0 ? ceil(m / mtu) : 1;
	}
	f->payload = payload / period;
	f->pkts = pkts / period;
	/* Descriptors of a posted batch are fetched together: one request per batch. */
	f->reads = req / period + 1.0 / wl->wqe_batch;
	f->rd_bytes = f->payload + cpl / period * p->pcie_tlp_bytes + p->desc_bytes + 16.0 * sge;
}

static void
flow_headers(const struct sim_params *p, const struct th_wl *wl, struct flow *f)
{
	double hdr = p->hdr_bytes + (wl->qp_type == TH_QP_UD ? 8 : 0); /* DETH */
	double ext = 0;

	if (wl->opcode == TH_OPC_WRITE)
		ext = 16; /* RETH on the first packet */
	else if (wl->opcode == TH_OPC_READ)
		ext = 4; /* AETH on the first and last response */
	f->wire = f->payload + f->pkts * hdr + ext;
	f->is_send = wl->opcode == TH_OPC_SEND;
	if (wl->opcode == TH_OPC_READ) {
		f->ctrl_pkts = 1; /* the request, with its RETH */
		f->ctrl_wire = p->hdr_bytes + 16;
	} else if (wl->qp_type == TH_QP_RC) {
		f->ctrl_pkts = ceil(f->pkts / p->ack_every);
		f->ctrl_wire = f->ctrl_pkts * (p->hdr_bytes + 4); /* AETH */
	} else {
		f->ctrl_pkts = 0;
		f->ctrl_wire = 0;
	}
}

/* Lay out the flows of a direction; returns how many. */
static unsigned
flows_of(const struct sim_params *p, const struct th_wl *wl, struct flow fl[2])
{
	unsigned n = 0, i;
	/* Data moves from the responder for READ, from the requester otherwise. */
	bool rd = wl->opcode == TH_OPC_READ;

	memset(fl, 0, 2 * sizeof(fl[0]));
	switch (wl->dir) {
	case TH_DIR_BIDI:
		fl[0].src = rd ? 1 : 0;
		fl[0].dst = rd ? 0 : 1;
		fl[1].src = rd ? 0 : 1;
		fl[1].dst = rd ? 1 : 0;
		n = 2;
		break;
	case TH_DIR_LOOPBACK:
		/* A loops to itself while B's traffic arrives at A. */
		fl[0].src = fl[0].dst = 0;
		fl[0].is_loop = true;
		fl[1].src = 1;
		fl[1].dst = 0;
		n = 2;
		break;
	default:
		fl[0].src = rd ? 1 : 0;
		fl[0].dst = rd ? 0 : 1;
		n = 1;
		break;
	}
	for (i = 0; i < n; i++) {
		flow_sizes(p, wl, &fl[i]);
		flow_headers(p, wl, &fl[i]);
	}
	return n;
}

/* Per-host capacities for one sample, noise applied. */
struct host_cap {
	double tx;    /* TX engine and DMA read scale (noise x quirk) */
	double drain; /* RX drain scale */
};

/* Engine seconds one message of @p f costs its sender. */
static double
tx_engine_s(const struct sim_params *p, const struct th_wl *wl, const struct shape *sh,
	const struct flow *f, double lat_ns)
{
	double per_wqe = p->wqe_ns + p->sge_ns * wl->sge + p->doorbell_ns / wl->wqe_batch;
	/* Prefetch hides all but miss_expose of a miss across the pipeline; a quirk
	 * that exposes a cache puts the whole read on one PU's critical path. */
	double hidden = (sh->qpc_miss + sh->mtt_miss) * p->miss_expose * lat_ns /
			(p->pu_count * p->pipeline_depth);
	double serial = (sh->qpc_miss * sh->e_qpc + sh->mtt_miss * sh->e_mtt) * lat_ns /
			p->pu_count;

	return f->pkts / (p->tx_mpps * 1e6) + (per_wqe / p->pu_count + hidden + serial) * NS;
}

static double
rx_engine_s(const struct sim_params *p, const struct shape *sh, const struct flow *f,
	double lat_ns)
{
	double rw = f->is_send ? sh->rwqe_miss : 0;
	double hidden = (sh->qpc_miss + sh->mtt_miss + rw) * p->miss_expose * lat_ns /
			(p->pu_count * p->pipeline_depth);
	double serial = (sh->qpc_miss * sh->e_qpc + rw * sh->e_rwqe) * lat_ns / p->pu_count;

	return f->pkts / (p->rx_mpps * 1e6) + (hidden + serial) * NS;
}

/* The memory path's bandwidth cap in bytes/s (0: local DRAM, not a bottleneck). */
static double
mem_cap(const struct sim_params *p, const struct th_wl *wl)
{
	if (wl->mem == TH_MEM_REMOTE)
		return p->remote_gbps * 1e9 / 8;
	if (wl->mem == TH_MEM_GPU)
		return p->gpu_gbps * 1e9 / 8;
	return 0;
}

struct host_out {
	double rho;         /* RX arrival over drain capacity */
	double pause;       /* fraction of time the peer is held paused */
	double drain_bytes; /* bytes/s drained while the flows run */
	double rx_util, tx_util, rd_util, wr_util;
	double arr_pkts, arr_msgs;
};

/* What every sample of one run shares: nothing here depends on the noise. */
struct run {
	const struct th_wl *wl;
	struct shape sh;
	struct flow fl[2];
	unsigned n;     /* flows in fl */
	double lat_ns;  /* DMA read round trip to the workload's memory */
	double mcap;    /* memory path cap, bytes/s (0: local DRAM) */
	double tx_s[2]; /* TX engine seconds per message of each flow */
	double rx_s[2]; /* RX engine seconds per message of each flow */
};

static void
run_of(const struct th_sim *s, const struct th_wl *wl, struct run *run)
{
	const struct sim_params *p = &s->p;
	unsigned i;

	run->wl = wl;
	shape_of(s, wl, &run->sh);
	run->n = flows_of(p, wl, run->fl);
	run->lat_ns = p->pcie_rtt_ns + mem_ns(p, wl);
	run->mcap = mem_cap(p, wl);
	for (i = 0; i < run->n; i++) {
		run->tx_s[i] = tx_engine_s(p, wl, &run->sh, &run->fl[i], run->lat_ns);
		run->rx_s[i] = rx_engine_s(p, &run->sh, &run->fl[i], run->lat_ns);
	}
}

void
sim_prepare(struct th_sim *s)
{
	const struct sim_params *p = &s->p;
	struct sim_caps *c = &s->caps;

	c->link = p->link_gbps * 1e9 / 8 * (1 - 0.002);
	c->rd_cap = pcie_bps(p) / 8;
	c->wr_cap = c->rd_cap * p->pcie_mps / (p->pcie_mps + p->pcie_tlp_bytes);
}

static void
model_sample(struct th_sim *s, const struct run *run, struct th_sample *out)
{
	const struct sim_params *p = &s->p;
	const struct th_wl *wl = run->wl;
	const struct shape *sh = &run->sh;
	const struct flow *fl = run->fl;
	struct host_out ho[TH_HOSTS];
	struct host_cap hc[TH_HOSTS];
	double rate[2]; /* messages/s each flow's sender offers */
	double got[2];  /* messages/s of it after the receiver's pauses */
	double lat_ns = run->lat_ns, mcap = run->mcap;
	double link = s->caps.link, rd_cap = s->caps.rd_cap, wr_cap = s->caps.wr_cap;
	unsigned n = run->n, i, h;

	for (h = 0; h < TH_HOSTS; h++) {
		hc[h].tx = unit_noise(s) * sh->tx_scale;
		hc[h].drain = unit_noise(s) * sh->drain_scale;
	}
	memset(ho, 0, sizeof(ho));

	/* Senders: each flow as fast as its TX engine, PCIe reads, memory and link allow. */
	for (i = 0; i < n; i++) {
		const struct flow *f = &fl[i];
		double r, lim, cap = hc[f->src].tx;

		r = cap / run->tx_s[i];
		lim = cap * rd_cap / f->rd_bytes;
		r = fmin(r, lim);
		lim = cap * p->pcie_tags / (lat_ns * NS) / f->reads;
		r = fmin(r, lim);
		if (mcap > 0)
			r = fmin(r, mcap / f->payload);
		if (f->is_loop) {
			/* The hairpin turns one loop message around at a time: only
			 * long messages make loop traffic bandwidth-heavy. */
			r = fmin(r, p->loopback_gbps * 1e9 / 8 / f->wire);
			if (p->loopback_msg_ns > 0)
				r = fmin(r, 1 / (p->loopback_msg_ns * NS));
		} else {
			/* The sender's port also carries ACKs for a flow coming the other way. */
			double back = 0;
			unsigned j;

			for (j = 0; j < n; j++)
				if (j != i && !fl[j].is_loop && fl[j].dst == f->src)
					back += fl[j].ctrl_wire;
			r = fmin(r, link / (f->wire + back));
		}
		rate[i] = r;
		ho[f->src].tx_util += r * run->tx_s[i] / cap;
		ho[f->src].rd_util += r * f->rd_bytes / (cap * rd_cap);
	}

	/* Receivers: drain while their own TX runs; a deficit is paused away. */
	for (h = 0; h < TH_HOSTS; h++) {
		struct host_out *o = &ho[h];
		double in_bytes = 0, eng = 0, send_msgs = 0, drain, own_rd = 0, ud_msgs = 0;
		double rd_cont = 0;

		for (i = 0; i < n; i++) {
			const struct flow *f = &fl[i];

			if (f->src == (int)h)
				own_rd += rate[i] * f->payload;
			if (f->dst != (int)h)
				continue;
			in_bytes += rate[i] * (f->payload + p->cqe_bytes);
			eng += rate[i] * run->rx_s[i];
			o->arr_pkts += rate[i] * f->pkts;
			o->arr_msgs += rate[i];
			if (f->is_send)
				send_msgs += rate[i];
			if (f->is_send && wl->qp_type == TH_QP_UD)
				ud_msgs += rate[i];
			if (wl->opcode == TH_OPC_READ && !f->is_loop)
				rd_cont += rate[i] * fmax(f->pkts - 1, 0);
		}
		if (o->arr_msgs == 0)
			continue;
		drain = wr_cap * hc[h].drain;
		/* Remote socket and GPU paths carry this host's reads and writes together;
		 * reads are served first, posted writes get what is left. */
		if (mcap > 0)
			drain = fmin(drain, fmax(mcap - own_rd, 0.05 * mcap) * hc[h].drain);
		o->drain_bytes = drain;
		o->wr_util = in_bytes / drain;
		o->rx_util = eng / hc[h].drain;
		o->rho = fmax(o->wr_util, o->rx_util);
		/* UD has no end-to-end credits: a late receive WQE holds its packet in
		 * the RX buffer while it is fetched, rwqe_inflight at a time. RC SENDs
		 * wait for credits at the sender instead, so there the fetch hides. */
		if (ud_msgs > 0 && sh->rwqe_late > 0)
			o->rho = fmax(o->rho, ud_msgs * sh->rwqe_late * lat_ns * NS /
						      (p->rwqe_inflight * hc[h].drain));
		/* Spilled READ order state: each continuation packet holds the RX
		 * path for a PCIe read, rd_inflight at a time. Smaller MTUs make more
		 * continuations per byte, so the line fills with them at 1K first.
		 * The state lives in the NIC's context memory, which the driver
		 * keeps local to the device whatever memory the workload uses. */
		if (rd_cont > 0 && sh->rd_late > 0)
			o->rho = fmax(o->rho, rd_cont * sh->rd_late * p->pcie_rtt_ns * NS /
						      (p->rd_inflight * hc[h].drain));
		if (sh->rwqe_sync > 0 && send_msgs > 0)
			o->rho = fmax(o->rho, send_msgs * lat_ns * NS / (sh->rwqe_sync * hc[h].drain));
		o->pause = o->rho > 1 ? 1 - 1 / o->rho : 0;
	}
	for (i = 0; i < n; i++)
		got[i] = rate[i] * (1 - ho[fl[i].dst].pause);

	/* Counters. */
	memset(out, 0, sizeof(*out));
	for (h = 0; h < TH_HOSTS; h++) {
		struct host_out *o = &ho[h];
		double *v = out->v[h], rx_msgs = 0, tx_msgs = 0, rx_send = 0, pkt_bytes = 0;
		double rx_cont = 0, desc_fetch = 0, rd_hold = 0, burst = 1, rd_spill = 0;

		for (i = 0; i < n; i++) {
			const struct flow *f = &fl[i];

			if (f->src == (int)h) {
				tx_msgs += got[i];
				/* One descriptor read per posted batch, again when evicted. */
				desc_fetch += got[i] * (1 + sh->sq_refetch) / wl->wqe_batch;
				/* A TX throttle quirk is a scheduler that refetches
				 * each send WQE: its lost engine time is those reads. */
				if (sh->tx_scale > 0 && sh->tx_scale < 1)
					desc_fetch += got[i] * (1 / sh->tx_scale - 1);
			}
			if (f->dst == (int)h) {
				rx_msgs += got[i];
				if (f->is_send) {
					rx_send += got[i];
					rx_cont += got[i] * fmax(f->pkts - 1, 0);
				}
				pkt_bytes = f->wire / f->pkts;
				/* A posted batch is scheduled back to back: its packets
				 * reach the RX buffer as one burst. */
				burst = fmax(burst, wl->wqe_batch * f->pkts);
				/* READ responses are written in order: the write path
				 * tracks a response's packets one per pipeline stage, and
				 * the packets of a longer response hold posted-write
				 * credits until the ones ahead are written (one MTU's
				 * worth of write time each). */
				if (wl->opcode == TH_OPC_READ && !f->is_loop) {
					rd_spill += got[i] * fmax(f->pkts - 1, 0) * sh->rd_late;
					rd_hold += got[i] * f->pkts *
						   soft(f->pkts, p->pipeline_depth) *
						   (f->wire / f->pkts) / (wr_cap * NS);
				}
			}
			if (f->is_loop)
				continue;
			if (f->src == (int)h) {
				v[TH_CTR_TX_BYTES] += got[i] * f->wire;
				v[TH_CTR_TX_PKTS] += got[i] * f->pkts;
				v[TH_CTR_RX_BYTES] += got[i] * f->ctrl_wire;
				v[TH_CTR_RX_PKTS] += got[i] * f->ctrl_pkts;
			}
			if (f->dst == (int)h) {
				v[TH_CTR_RX_BYTES] += got[i] * f->wire;
				v[TH_CTR_RX_PKTS] += got[i] * f->pkts;
				v[TH_CTR_TX_BYTES] += got[i] * f->ctrl_wire;
				v[TH_CTR_TX_PKTS] += got[i] * f->ctrl_pkts;
			}
		}
		if (o->pause > 0) {
			/* Hysteresis: fill from XON to XOFF at the excess, drain back at
			 * the drain rate; one XOFF per cycle, refreshed every half pause
			 * quantum (65535 x 512 bit times) while it lasts, then one XON. */
			double band = (p->xoff_kb - p->xon_kb) * 1024;
			double d = o->drain_bytes, fill = band / (d * (o->rho - 1)), empty = band / d;
			double refresh = 65535.0 * 512 / (p->link_gbps * 1e9) / 2;
			double cycles = 1 / (fill + empty);

			v[TH_CTR_PAUSE_US] = o->pause * 1e6;
			v[TH_CTR_PAUSE_FRAMES] = cycles * (2 + floor(empty / refresh));
			/* The buffer never leaves the XON..XOFF band: every packet the
			 * senders offer finds it past XON, admitted or held back by the
			 * pause. The queueing tail below meets this at rho = 1. */
			v[TH_CTR_RXBUF_FULL] = o->arr_pkts;
		} else if (o->rho > 0 && pkt_bytes > 0) {
			/* Queueing tail: packets that still find the buffer past
			 * XOFF. Batch arrivals decay per burst, not per packet. */
			v[TH_CTR_RXBUF_FULL] = o->arr_pkts *
					       pow(o->rho, p->xoff_kb * 1024 / (pkt_bytes * burst));
		}
		v[TH_CTR_QPC_MISS] = (tx_msgs + rx_msgs) * sh->qpc_miss;
		v[TH_CTR_MTT_MISS] = (tx_msgs + rx_msgs) * sh->mtt_miss;
		/* A first packet looks its WQE up; continuation packets look its
		 * scatter list up again. Fetched on demand, every lookup misses, and
		 * a packet held for its WQE is looked up again each time the engine
		 * comes back to it: rho times when the engine is behind by rho. */
		if (sh->rwqe_sync > 0)
			v[TH_CTR_RWQE_MISS] = (rx_send + rx_cont) * fmax(1, o->rho);
		else
			v[TH_CTR_RWQE_MISS] = rx_send * fmin(1, sh->rwqe_miss + sh->rwqe_late) +
					      rx_cont * sh->rwqe_scatter;
		v[TH_CTR_PCIE_BP] = fmin(1e9, 1e9 * pow(fmin(1, fmax(o->wr_util, o->rd_util)), 8) +
						 rd_hold);
		/* Saturated engines, plus PU time held while descriptors are read
		 * (one read round trip per fetch, overlapped across the pipeline).
		 * A receiver behind its arrivals (rho > 1, whatever holds it: write
		 * credits, receive WQEs, its engine) keeps every PU on a packet that
		 * waits: saturated too. In-order READ responses hold the PU that
		 * tracks them while the packets ahead are written. */
		v[TH_CTR_PU_BUSY] = 1e9 * pow(fmin(1, fmax(o->rho, o->tx_util)), 4) +
				    desc_fetch * lat_ns / p->pipeline_depth + rd_hold +
				    rd_spill * p->pcie_rtt_ns / p->rd_inflight;
		for (i = 0; i < TH_CTR__COUNT; i++)
			v[i] *= 1 + 0.25 * s->p.noise * (2 * th_rng_unit(&s->rng) - 1);
		/* Hardware counts whole events and nanoseconds. */
		for (i = 0; i < TH_CTR__COUNT; i++)
			if (th_ctr_is_diag((enum th_ctr)i))
				v[i] = floor(v[i]);
	}
}

int
sim_run(void *ctx, const struct th_wl *wl, unsigned n, struct th_sample *out, char *err,
	size_t err_size)
{
	struct th_sim *s = ctx;
	struct run run;
	char why[160];
	unsigned i;

	if (s == NULL || wl == NULL || (n > 0 && out == NULL)) {
		snprintf(err, err_size, "sim: missing argument");
		return -EINVAL;
	}
	/* The space checks points before a backend sees them; a real testbed would
	 * fail setup on an impossible one, so this backend does too. */
	if (th_wl_check(wl, &s->limits, why, sizeof(why)) < 0) {
		snprintf(err, err_size, "sim:%s: setup failed: %s", s->name, why);
		return -EINVAL;
	}
	run_of(s, wl, &run);
	for (i = 0; i < n; i++)
		model_sample(s, &run, &out[i]);
	s->last = *wl;
	s->has_last = true;
	return 0;
}

void
sim_expect(void *ctx, const struct th_wl *wl, struct th_expect *e)
{
	const struct th_sim *s = ctx;

	e->bps = s->p.link_gbps * 1e9;
	e->pps = s->p.pps_mpps * 1e6;
	if (wl->dir == TH_DIR_BIDI)
		e->senders = 3;
	else if (wl->dir == TH_DIR_LOOPBACK)
		e->senders = 2; /* only B's traffic crosses the wire */
	else
		e->senders = wl->opcode == TH_OPC_READ ? 2 : 1;
}

/*
 * Whether the verbs engine can keep the last run's QPs and MRs for @p wl: the
 * same memory, QP type, path MTU, QP count and capabilities (queue depth,
 * SGEs) and the same MRs. Opcode (access flags are set for all three),
 * batching, the message pattern and one-way vs bidirectional traffic change
 * only what is posted; loopback needs QPs connected to their own host.
 */
static bool
is_same_setup(const struct th_wl *a, const struct th_wl *b)
{
	return a->mem == b->mem && a->qp_type == b->qp_type && a->mtu == b->mtu &&
	       a->qp_count == b->qp_count && a->wq_depth == b->wq_depth && a->sge == b->sge &&
	       a->mr_count == b->mr_count && a->mr_size == b->mr_size &&
	       (a->dir == TH_DIR_LOOPBACK) == (b->dir == TH_DIR_LOOPBACK);
}

double
sim_cost_s(void *ctx, const struct th_wl *wl, unsigned n)
{
	const struct th_sim *s = ctx;

	/* A run that keeps the previous setup pays warm-up and samples only. */
	if (s->has_last && is_same_setup(&s->last, wl))
		return fmax(s->p.cost_base_s - s->p.cost_setup_s, 0) + (double)n;
	/* Both hosts set up in parallel: QPs (create, modify to RTS, exchange) and MR
	 * registrations dominate; then the samples themselves. */
	return s->p.cost_base_s + s->p.cost_qp_ms * 1e-3 * wl->qp_count +
	       s->p.cost_mr_ms * 1e-3 * wl->mr_count + (double)n;
}
