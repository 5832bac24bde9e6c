/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_BACKEND_H
#define TH_BACKEND_H

/**
 * @file
 * What the search drives: a workload engine that sets up a point of the space
 * on two hosts, runs it, and returns per-second counter samples from both
 * RNICs. The simulated subsystem (lib/sim) implements it today; the verbs
 * engine on a real testbed will implement the same table.
 */

#include <stddef.h>
#include <stdint.h>

#include "th_space.h"

/**
 * Counters each host reports once a second, named as mlx5/bnxt tools spell
 * their nearest kin. The first group are performance counters (the search
 * drives throughput down and pause up); the rest are diagnostic counters
 * (driven up).
 */
#define TH_CTR_LIST(X)                                                                        \
	X(TX_BYTES, "port_xmit_data", 0)          /* wire bytes sent, headers included */      \
	X(TX_PKTS, "port_xmit_packets", 0)                                                     \
	X(RX_BYTES, "port_rcv_data", 0)                                                        \
	X(RX_PKTS, "port_rcv_packets", 0)                                                      \
	X(PAUSE_US, "tx_pause_duration_us", 0)    /* time this host held its peer paused */    \
	X(PAUSE_FRAMES, "tx_pause_frames", 0)                                                  \
	X(QPC_MISS, "qpc_cache_miss", 1)          /* QP context fetched over PCIe */           \
	X(MTT_MISS, "mtt_cache_miss", 1)          /* MTT/MPT translation fetched over PCIe */  \
	X(RWQE_MISS, "rx_wqe_cache_miss", 1)      /* receive WQE fetched late */                \
	X(PCIE_BP, "pci_backpressure_cycles", 1)  /* PCIe posted-write credits exhausted */    \
	X(RXBUF_FULL, "rx_buffer_full", 1)        /* RX buffer above XOFF threshold, events */ \
	X(PU_BUSY, "rx_pu_busy_ns", 1)            /* receive processing units saturated */

enum th_ctr {
#define TH_CTR_ENUM(id, name, diag) TH_CTR_##id,
	TH_CTR_LIST(TH_CTR_ENUM)
#undef TH_CTR_ENUM
	TH_CTR__COUNT,
};

/** The counter's vendor-like name. */
const char *th_ctr_name(enum th_ctr c);
/** Whether it is a diagnostic counter (else a performance counter). */
int th_ctr_is_diag(enum th_ctr c);

/** Host A (requester side of one-way traffic) and host B. */
#define TH_HOSTS 2

/** One second of both hosts' counters (deltas over that second). */
struct th_sample {
	double v[TH_HOSTS][TH_CTR__COUNT];
};

/** The rates a workload should reach on this subsystem, per sending host. */
struct th_expect {
	double bps; /**< link bits/s (wire bits, headers included) */
	double pps; /**< packets/s limit for this workload's packet sizes */
	unsigned senders; /**< bit i set: host i sends (1 one-way, 3 bidirectional) */
};

/** A workload engine. */
struct th_backend {
	const char *name;             /**< "sim:F", "verbs:mlx5_0" */
	const struct th_limits *limits;
	void *ctx;
	/**
	 * Set up @p wl (already checked against limits), run it, and fill
	 * @p n one-second samples. @return 0, or a negative errno with a reason
	 * in @p err (setup failed: not an anomaly, not a crash).
	 */
	int (*run)(void *ctx, const struct th_wl *wl, unsigned n, struct th_sample *out,
		char *err, size_t err_size);
	/** What @p wl should reach on this subsystem. */
	void (*expect)(void *ctx, const struct th_wl *wl, struct th_expect *e);
	/** Testbed seconds one run of @p n samples costs (setup + warm-up + n). */
	double (*cost_s)(void *ctx, const struct th_wl *wl, unsigned n);
};

#endif /* TH_BACKEND_H */
