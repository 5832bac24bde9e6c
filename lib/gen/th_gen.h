/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_GEN_H
#define TH_GEN_H

/**
 * @file
 * Synthetic NFSv3 traffic with ground truth.
 *
 * A seeded model of servers (exports holding a directory tree of files),
 * clients (IPv4 or IPv6, TCP or UDP, VLAN tags, AUTH_SYS identity) and an
 * operation mix produces RPCs; each RPC is first filled in as the struct
 * th_op a perfect decoder would report, then encoded from it into real
 * wire bytes: Ethernet (802.1Q/QinQ), IPv4/IPv6, TCP with handshake, correct
 * seq/ack and MSS segmentation (several records per segment, records across
 * many segments, record-marking fragments) or UDP with IP fragments. Every
 * client starts with portmap GETPORT and MOUNT MNT before its NFS traffic.
 *
 * The same configuration and seed give the same bytes. Frames come out in
 * timestamp order and ground-truth ops in the order of their call's first
 * segment, so a decoder's output can be compared line by line.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_op.h"

/** Operation mixes: enum value, name on the command line, description. */
#define TH_GEN_MIX_LIST(X)                                                                         \
	X(MIXED, "mixed", "metadata and data operations, the default")                             \
	X(META, "meta", "GETATTR/LOOKUP/ACCESS heavy, small frames")                               \
	X(DATA, "data", "READ/WRITE of 32 KB to 1 MB (32 KB on UDP), COMMIT")

enum th_gen_mix {
#define TH_GEN_X(e, name, text) TH_GEN_MIX_##e,
	TH_GEN_MIX_LIST(TH_GEN_X)
#undef TH_GEN_X
		TH_GEN__MIX_COUNT
};

/** What to generate. Fill with th_gen_config_init(), then change fields. */
struct th_gen_config {
	uint64_t seed;             /**< PRNG seed: same seed, same bytes */
	uint32_t clients;          /**< client hosts (1..65535) */
	uint32_t servers;          /**< server hosts (1..255) */
	uint64_t ops;              /**< RPCs to generate, session start included */
	enum th_gen_mix mix;       /**< operation mix */
	double udp_share;          /**< fraction of clients on UDP (0..1) */
	double ipv6_share;         /**< fraction of clients on IPv6 (0..1) */
	uint32_t vlan_tags;        /**< 802.1Q tags on every frame: 0, 1 or 2 (QinQ) */
	uint32_t mtu;              /**< IP MTU, 576..9000: sets MSS and UDP fragment size */
	bool handshake;            /**< TCP flows open with SYN; false: they start mid-stream */
	double pipeline_share;     /**< chance a TCP client sends a burst of small calls at once */
	double rm_frag_share;      /**< chance a TCP record is split in record-marking fragments */
	uint64_t start_ns;         /**< timestamp of the first frame, ns since the epoch */
	uint32_t ts_resolution_ns; /**< th_gen_write() rounds frame and truth times down to
				      this (default 1000: DPDK 22.11's net_pcap delivers
				      microseconds, so truth made for capture must too) */
	uint32_t think_us;         /**< mean client pause between calls, microseconds */
};

/** What was generated. */
struct th_gen_stats {
	uint64_t packets;      /**< frames written */
	uint64_t bytes;        /**< frame bytes written */
	uint64_t rpcs;         /**< RPCs (call and reply pairs) */
	uint64_t rpc_messages; /**< RPC calls plus replies, what tshark counts */
	uint64_t first_ns;     /**< first frame's timestamp */
	uint64_t last_ns;      /**< last frame's timestamp */
};

/**
 * Receivers of the output. frame() gets every frame in timestamp order;
 * op() gets the ground truth of every RPC in order of the call's first
 * segment (may be NULL). A non-zero return stops the generator, which
 * returns that value.
 */
struct th_gen_sink {
	int (*frame)(void *ctx, uint64_t ts_ns, const uint8_t *frame, uint32_t size);
	int (*op)(void *ctx, const struct th_op *op);
	void *ctx; /**< passed to both */
};

/** Defaults: seed 1, 8 clients, 2 servers, 10000 ops, mixed, MTU 1500, handshakes. */
void th_gen_config_init(struct th_gen_config *cfg);

/**
 * Check a configuration.
 * @return 0, or -EINVAL with a sentence in @p err saying which value is wrong.
 */
int th_gen_config_check(const struct th_gen_config *cfg, char *err, size_t err_size);

/** Name of a mix ("meta"), or NULL when out of range. */
const char *th_gen_mix_name(enum th_gen_mix mix);

/** Parse a mix name. @return 0, or -EINVAL for an unknown name. */
int th_gen_mix_parse(const char *name, enum th_gen_mix *mix);

/**
 * Generate into a sink.
 * @return 0, -EINVAL for a bad configuration, -ENOMEM, or what a sink
 *         callback returned.
 */
int th_gen_run(const struct th_gen_config *cfg, const struct th_gen_sink *sink,
	struct th_gen_stats *stats);

/**
 * Generate a pcap file (Ethernet, nanosecond timestamps) and optionally the
 * ground truth, one th_op_format() line per RPC.
 * @param truth_path NULL for no truth file
 * @param err a sentence on failure (file and reason)
 * @return 0, -EINVAL, -ENOMEM, or -errno of a failed open or write.
 */
int th_gen_write(const struct th_gen_config *cfg, const char *pcap_path, const char *truth_path,
	struct th_gen_stats *stats, char *err, size_t err_size);

#endif /* TH_GEN_H */
