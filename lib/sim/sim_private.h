/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_PRIVATE_H
#define SIM_PRIVATE_H

/*
 * Inside the simulated subsystem: the profile's numbers (what the model reads)
 * and the documented anomalies (what only tests and the evaluation read).
 */

#include <stdbool.h>
#include <stdint.h>

#include "th_anomaly.h"
#include "th_rng.h"
#include "th_sim.h"

#define SIM_QUIRKS_MAX 32
#define SIM_KNOWN_MAX 32
#define SIM_NAME_MAX 32

/*
 * A firmware quirk: when a workload meets the predicate, the effects change
 * mechanism parameters; the symptom still has to come out of the model.
 * Scales are 1 and exposures/sync 0 when a quirk does not set them.
 */
struct sim_quirk {
	char name[SIM_NAME_MAX]; /* [quirk.NAME] */
	struct th_mfs when;      /* predicate; its symptom field is unused */
	double tx_scale;         /* TX engine capacity (packets and DMA reads) */
	double drain_scale;      /* RX drain capacity (PCIe writes and RX packets) */
	double qpc_expose;       /* fraction of a QPC miss's PCIe read on the critical path */
	double mtt_expose;       /* same for MTT/MPT misses */
	double rwqe_expose;      /* same for receive WQE misses (SEND receivers) */
	double rwqe_sync;        /* >0: receive WQEs fetched on demand, this many in flight */
};

/* The subsystem's numbers, as the profile gives them (units in the names). */
struct sim_params {
	/* link */
	double link_gbps;       /* port rate, wire bits */
	double hdr_bytes;       /* per-packet RoCEv2 overhead: Eth+IP+UDP+BTH+ICRC+FCS */
	double pps_mpps;        /* the vendor's packets/s spec: what expect() promises */
	double tx_mpps;         /* TX engine packets/s with no per-WQE work */
	double rx_mpps;         /* RX engine packets/s cap */
	double loopback_gbps;   /* internal loopback (eSwitch) rate cap */
	double loopback_msg_ns; /* hairpin turnaround per loop message (serial) */
	double ack_every;       /* RC: data packets per coalesced ACK */
	/* nic */
	double pu_count;        /* processing units working in parallel */
	double pipeline_depth;  /* stages per PU: requests each PU overlaps */
	double qpc_entries;     /* QP context cache capacity (QPs) */
	double mtt_entries;     /* MTT/MPT cache capacity (MRs) */
	double rwqe_entries;    /* receive WQE cache capacity (WQEs) */
	double miss_expose;     /* fraction of miss latency prefetching fails to hide */
	double rwqe_lead;       /* receive WQEs the prefetcher fetches ahead of a burst, per QP */
	double rwqe_window;     /* receive ring entries per QP the prefetcher keeps cached */
	double rwqe_slots;      /* receive queues the prefetcher tracks at once */
	double rwqe_inflight;   /* on-demand receive WQE fetches in flight (UD) */
	double rd_lead;         /* READ responses per QP the in-order tracker holds on chip */
	double rd_slots;        /* QPs whose READ response order the tracker holds at once */
	double rd_inflight;     /* spilled tracker lookups in flight (PCIe reads) */
	double wqe_ns;          /* engine time per WQE (descriptor parse) */
	double sge_ns;          /* engine time per SG element */
	double doorbell_ns;     /* engine time per doorbell (one per posted batch) */
	double rxbuf_kb;        /* RX packet buffer */
	double xoff_kb;         /* occupancy that sends XOFF */
	double xon_kb;          /* occupancy that sends XON */
	/* pcie */
	double pcie_gen;        /* 3, 4 or 5 */
	double pcie_lanes;
	double pcie_mps;        /* max payload per write TLP, bytes */
	double pcie_mrrs;       /* max read request, bytes */
	double pcie_rtt_ns;     /* read round trip to local memory */
	double pcie_tags;       /* outstanding read requests */
	double pcie_tlp_bytes;  /* header+framing per TLP */
	double desc_bytes;      /* WQE descriptor size without SGEs */
	double cqe_bytes;       /* completion entry written per message */
	/* host */
	double remote_gbps;     /* SMP interconnect bandwidth for DMA, both directions */
	double remote_ns;       /* extra latency to the other socket's memory */
	double gpu_gbps;        /* GPU P2P path bandwidth, reads and writes together */
	double gpu_ns;          /* extra latency to GPU memory */
	/* noise and cost */
	double noise;           /* relative spread of capacities per sample */
	double cost_base_s;     /* per experiment: connect, warm-up, teardown */
	double cost_qp_ms;      /* per QP set up */
	double cost_mr_ms;      /* per MR registered */
	double cost_setup_s;    /* share of cost_base_s a reused setup skips (connect, teardown) */
};

/* What follows from the profile's numbers alone (sim_prepare()), in bytes/s. */
struct sim_caps {
	double link;   /* port rate for frames (the interframe gap is not counted) */
	double rd_cap; /* PCIe read bandwidth per direction, raw */
	double wr_cap; /* PCIe posted-write payload bandwidth, MPS TLP overhead taken off */
};

struct th_sim {
	char name[SIM_NAME_MAX];
	char backend_name[SIM_NAME_MAX + 8]; /* "sim:F" */
	struct sim_params p;
	struct sim_caps caps; /* derived from p */
	struct th_limits limits;
	struct th_rng rng;      /* noise; advances with every sample */
	unsigned quirk_count;
	struct sim_quirk quirk[SIM_QUIRKS_MAX];
	unsigned known_count;
	struct th_sim_known known[SIM_KNOWN_MAX]; /* each note strdup'ed, th_sim_free() frees it */
	struct th_wl last;      /* the setup of the last run, for cost_s's reuse */
	bool has_last;          /* last is valid */
};

/* The model (sim.c). */
void sim_prepare(struct th_sim *s); /* fill s->caps once s->p is read */
int sim_run(void *ctx, const struct th_wl *wl, unsigned n, struct th_sample *out, char *err,
	size_t err_size);
void sim_expect(void *ctx, const struct th_wl *wl, struct th_expect *e);
double sim_cost_s(void *ctx, const struct th_wl *wl, unsigned n);

#endif /* SIM_PRIVATE_H */
