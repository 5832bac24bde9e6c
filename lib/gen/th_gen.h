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

/** Workloads: enum value, name on the command line, description. */
#define TH_GEN_WORKLOAD_LIST(X)                                                                    \
	X(OPS, "ops", "a fixed number of RPCs drawn from --mix, the default")                      \
	X(USERS, "users",                                                                          \
		"users running ls -l and --user-mix's commands on Linux-like NFS clients "         \
		"with attribute and data caches, for --hours")

enum th_gen_workload {
#define TH_GEN_X(e, name, text) TH_GEN_WORKLOAD_##e,
	TH_GEN_WORKLOAD_LIST(TH_GEN_X)
#undef TH_GEN_X
		TH_GEN__WORKLOAD_COUNT
};

/**
 * Command mixes of the users workload: enum value, name on the command line,
 * description. The seed's mix is what its authors scored nfstrace with (seed
 * 000 §4) and programs, whose demand paging leaves files partly cached; the
 * full mix adds commands whose RPCs a cached open can repeat exactly (stat
 * sends the GETATTR a fully cached cat sends).
 */
#define TH_GEN_USER_MIX_LIST(X)                                                                    \
	X(SEED, "seed",                                                                            \
		"ls -l, touch, cp, wc and cat as in the seed's test, and programs (demand "        \
		"paging), the default")                                                            \
	X(FULL, "full", "also stat, edit-and-save, mkdir and rm")

enum th_gen_user_mix {
#define TH_GEN_X(e, name, text) TH_GEN_USER_MIX_##e,
	TH_GEN_USER_MIX_LIST(TH_GEN_X)
#undef TH_GEN_X
		TH_GEN__USER_MIX_COUNT
};

/**
 * Classes of user-level opens in the users workload's ground truth:
 * enum value, name in the opens file, meaning.
 */
#define TH_GEN_OPEN_CLASS_LIST(X)                                                                  \
	X(WRITE, "write", "a file opened for writing (created, truncated, or touched)")            \
	X(UNCACHED_READ, "uncached-read", "every byte the user read came over the wire")           \
	X(CACHED_READ, "cached-read", "every byte came from the client cache: transferred 0")      \
	X(PARTIAL_READ, "partial-read", "some blocks from the cache, the rest over the wire")      \
	X(DIR_READ, "dir-read", "a directory listed (ls -l)")                                      \
	X(DIR_WRITE, "dir-write", "a directory made (mkdir)")

enum th_gen_open_class {
#define TH_GEN_X(e, name, text) TH_GEN_OPEN_##e,
	TH_GEN_OPEN_CLASS_LIST(TH_GEN_X)
#undef TH_GEN_X
		TH_GEN__OPEN_CLASS_COUNT
};

/**
 * One user-level open (users workload): what the simulated user did, as
 * the seed's nfstrace record would describe it, and its class.
 */
struct th_gen_open {
	uint64_t open_ns;      /**< the open: call of its first RPC on the object */
	uint64_t close_ns;     /**< reply of the last RPC the open caused (open_ns if none) */
	struct th_addr server; /**< server address the client used */
	struct th_addr client; /**< client address */
	uint32_t uid;          /**< the user */
	uint32_t gid;          /**< the user's group */
	uint8_t fh_len;        /**< bytes in fh */
	uint8_t fh[64];        /**< the object's handle */
	uint8_t cls;           /**< enum th_gen_open_class */
	bool is_write;         /**< direction: write (WRITE, DIR_WRITE) or read */
	bool is_directory;     /**< DIR_READ, DIR_WRITE */
	uint32_t ops;          /**< RPCs the open caused (0: served without the wire) */
	uint64_t transferred;  /**< bytes moved over the wire by the open */
	uint64_t touched;      /**< bytes the user read or wrote */
	uint64_t size;         /**< object size at close */
};

/** What to generate. Fill with th_gen_config_init(), then change fields. */
/**
 * The last second a frame may carry: 2038-01-19 03:14:07 UTC. libpcap reads a
 * record's 32-bit seconds as signed, so it (and DPDK's net_pcap, tcpdump) would
 * take later ones for times before 1970.
 */
#define TH_GEN_TIME_MAX_S 2147483647ull

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
	uint64_t start_ns;         /**< timestamp of the first frame, ns since the epoch;
				      at most TH_GEN_TIME_MAX_S s, and so is the last */
	uint32_t ts_resolution_ns; /**< th_gen_write() rounds frame and truth times down to
				      this (default 1000: DPDK 22.11's net_pcap delivers
				      microseconds, so truth made for capture must too) */
	uint32_t think_us;         /**< mean client pause between calls, microseconds */
	enum th_gen_workload workload; /**< ops (the mixes) or users */
	/* Users workload only. */
	double hours;                  /**< simulated time; commands start before its end */
	uint32_t users_per_client;     /**< users on each client, each with its own uid */
	double ls_share;               /**< share of user commands that are ls -l */
	enum th_gen_user_mix user_mix; /**< the other commands users run */
	bool is_nordirplus;            /**< ls -l lists with READDIR and stats each entry
					  (LOOKUP, GETATTR), as a Linux mount with
					  nordirplus does; else READDIRPLUS */
	uint32_t cache_mb;             /**< each client's data cache */
	uint32_t acregmin_s;           /**< attribute cache timeouts, as the Linux mount options */
	uint32_t acregmax_s;
	uint32_t acdirmin_s;
	uint32_t acdirmax_s;
	uint32_t rsize;      /**< READ size, bytes (4 KiB multiple; UDP caps at 32 KiB) */
	uint32_t wsize;      /**< WRITE size, bytes */
	double user_think_s; /**< mean pause of a user between commands, seconds */
	double loss;         /**< chance a data frame or datagram is lost (and resent) */
	double tap_loss;     /**< chance a frame the hosts exchanged is missing from the
				capture (SPAN oversubscription, ring overrun): nobody resends
				it; drawn from its own PRNG, so the traffic stays the same */
	double tap_reorder;  /**< chance a TCP frame reaches the capture after the next frame
				of the other direction of its connection (a SPAN port merging
				the two directions): each keeps the time it crossed the wire,
				nothing is lost; its own PRNG, so the traffic stays the same */
	double tap_dup;      /**< chance a frame the capture sees is in it twice, the copy
				byte for byte the same and a few microseconds later (a SPAN
				session of both ends' ports, or of a port's rx and tx); its
				own PRNG, so the traffic stays the same */
};

/** What was generated. */
struct th_gen_stats {
	uint64_t packets;      /**< frames written */
	uint64_t bytes;        /**< frame bytes written */
	uint64_t rpcs;         /**< RPCs (call and reply pairs) */
	uint64_t rpc_messages; /**< RPC calls plus replies, what tshark counts */
	uint64_t first_ns;     /**< first frame's timestamp */
	uint64_t last_ns;      /**< last frame's timestamp */
	/* Users workload. */
	uint64_t commands;                        /**< user commands run */
	uint64_t opens[TH_GEN__OPEN_CLASS_COUNT]; /**< ground-truth opens by class */
	uint64_t phantom_getattrs; /**< GETATTRs that belong to no open (ls -l, stat, path
				      walks) */
	uint64_t phantom_lookups;  /**< LOOKUPs that belong to no open (stat of a name not
				      cached, ls -l after a plain READDIR) */
	uint64_t lost_frames;      /**< frames lost (not in the pcap) and sent again */
	uint64_t udp_retrans;      /**< UDP calls sent again after a timeout */
	uint64_t tap_lost;         /**< frames left out of the capture (--tap-loss) */
	uint64_t tap_damaged_rpcs; /**< RPCs with a call or reply frame left out */
	uint64_t tap_reordered;    /**< frames written after the next frame of the other
				      direction (--tap-reorder) */
	uint64_t tap_copies;       /**< frames written a second time (--tap-dup), counted in
				      packets and bytes too */
};

/**
 * Receivers of the output. frame() gets every frame in timestamp order;
 * op() gets the ground truth of every RPC in order of the call's first
 * segment (may be NULL). A non-zero return stops the generator, which
 * returns that value.
 */
struct th_gen_sink {
	int (*frame)(void *ctx, uint64_t ts_ns, const uint8_t *frame, uint32_t size);
	/**
	 * Each RPC with what the capture misses of it (--tap-loss):
	 * TH_GEN_TAP_CALL and/or TH_GEN_TAP_REPLY, 0 when it saw all (may be NULL).
	 */
	int (*op)(void *ctx, const struct th_op *op, unsigned int tap_lost);
	void *ctx; /**< passed to all */
	/** Users workload: each user-level open, when it closed (may be NULL). */
	int (*open)(void *ctx, const struct th_gen_open *o);
};

/** th_gen_sink.op's tap_lost bits. */
enum {
	TH_GEN_TAP_CALL = 1 << 0,  /**< a frame of the call is missing from the capture */
	TH_GEN_TAP_REPLY = 1 << 1, /**< a frame of the reply is missing */
};

/**
 * How much later than its original a --tap-dup copy is stamped, drawn uniformly in
 * nanoseconds: 1 to 50 us, what a second mirror session or a port's rx and tx copies add.
 * With the default 1 us time resolution the pcap shows 1 to 50 us.
 */
enum {
	TH_GEN_TAP_DUP_DELAY_MIN_NS = 1000,
	TH_GEN_TAP_DUP_DELAY_MAX_NS = 50000,
};

/**
 * Defaults: seed 1, 8 clients, 2 servers, 10000 ops, mixed, MTU 1500, handshakes;
 * users workload: 1 hour, 2 users per client, ls -l 30%, the seed's command mix, 64 MB
 * cache, Linux's acregmin/acregmax/acdirmin/acdirmax 3/60/30/60 s, rsize and wsize 1 MiB,
 * no loss.
 */
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

/** Name of a users command mix ("seed"), or NULL when out of range. */
const char *th_gen_user_mix_name(enum th_gen_user_mix mix);

/** Parse a users command mix name. @return 0, or -EINVAL for an unknown name. */
int th_gen_user_mix_parse(const char *name, enum th_gen_user_mix *mix);

/** Name of a workload ("users"), or NULL when out of range. */
const char *th_gen_workload_name(enum th_gen_workload wl);

/** Parse a workload name. @return 0, or -EINVAL for an unknown name. */
int th_gen_workload_parse(const char *name, enum th_gen_workload *wl);

/** Name of an open class ("cached-read"), or NULL when out of range. */
const char *th_gen_open_class_name(enum th_gen_open_class cls);

/**
 * Format an open as one line: the seed's record
 *   timestamp | command-time | direction | file-id | client | transferred | size
 * (as th_sess_record_format() writes it), then " | " and the class, and a newline.
 * @return as snprintf.
 */
int th_gen_open_format(const struct th_gen_open *o, char *buf, size_t size);

/**
 * Generate into a sink.
 * @return 0, -EINVAL for a bad configuration, -ENOMEM, or what a sink
 *         callback returned.
 */
int th_gen_run(const struct th_gen_config *cfg, const struct th_gen_sink *sink,
	struct th_gen_stats *stats);

/**
 * Generate a pcap file (Ethernet, nanosecond timestamps) and optionally the
 * ground truth, one th_op_format() line per RPC. With tap_loss, an RPC with a
 * frame of its call or reply left out of the pcap keeps its line, with
 * " tap=call", " tap=reply" or " tap=both" added before the newline: the
 * capture cannot see it whole (on TCP the decoder may also lose the records
 * after it in the stream until it finds a record boundary again).
 * @param truth_path NULL for no truth file
 * @param err a sentence on failure (file and reason)
 * @return 0, -EINVAL, -ENOMEM, -ERANGE a frame later than TH_GEN_TIME_MAX_S
 *   (the rest of the traffic is not written), or -errno of a failed open or write.
 */
int th_gen_write(const struct th_gen_config *cfg, const char *pcap_path, const char *truth_path,
	struct th_gen_stats *stats, char *err, size_t err_size);

/** Output files of th_gen_write_files(); NULL: not written. */
struct th_gen_files {
	const char *pcap;  /**< the capture (required) */
	const char *truth; /**< one th_op_format() line per RPC */
	const char *opens; /**< users workload: one th_gen_open_format() line per open */
};

/** th_gen_write() with the opens file too. Same returns. */
int th_gen_write_files(const struct th_gen_config *cfg, const struct th_gen_files *files,
	struct th_gen_stats *stats, char *err, size_t err_size);

#endif /* TH_GEN_H */
