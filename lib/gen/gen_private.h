/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_GEN_PRIVATE_H
#define TH_GEN_PRIVATE_H

/*
 * Inside the generator. Four parts, each in its own file:
 *   gen_model.c  the world: servers, exports, files, clients, mounts; builds the
 *                th_op of each operation and applies its effect to the model
 *   gen_mix.c    client behaviour of the ops workload: which operation a client
 *                issues next, drawn from a mix
 *   gen_users.c  the users workload: user commands on Linux-like clients with
 *                attribute, access, name and data caches, and the truth of opens
 *   gen_rpc.c    XDR writer and the RPC/NFS/MOUNT/portmap encoders, from a th_op
 *   gen_wire.c   Ethernet/IP/TCP/UDP: segmentation, fragments, seq/ack, checksums
 *   gen.c        the driver: time, ordering of frames and truth, sinks, files
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_gen.h"
#include "th_nfs.h"
#include "th_op.h"
#include "th_pkt.h"
#include "th_rng.h"

/* ---- Random draws beyond th_rng.h's uniform ones ---- */

bool gen_rng_chance(struct th_rng *r, double p);
/** Exponential with the given mean. */
double gen_rng_exp(struct th_rng *r, double mean);
/** Log-normal with the given median and shape sigma. */
double gen_rng_lognormal(struct th_rng *r, double median, double sigma);

/* ---- XDR writer ---- */

struct gen_xdr {
	uint8_t *start; /**< buffer */
	uint8_t *p;     /**< next byte */
	uint8_t *end;   /**< one past the buffer */
	bool is_full;   /**< a put did not fit: the message is unusable */
};

void gen_xdr_init(struct gen_xdr *x, uint8_t *buf, size_t size);
void gen_xdr_u32(struct gen_xdr *x, uint32_t v);
void gen_xdr_u64(struct gen_xdr *x, uint64_t v);
void gen_xdr_bool(struct gen_xdr *x, bool v);
/** Fixed-length opaque, padded. */
void gen_xdr_fixed(struct gen_xdr *x, const void *data, size_t size);
/** Variable-length opaque or string: length then bytes, padded. */
void gen_xdr_opaque(struct gen_xdr *x, const void *data, size_t size);
/** Variable-length opaque of @p size filler bytes (READ/WRITE data). */
void gen_xdr_filler(struct gen_xdr *x, size_t size);
static inline size_t
gen_xdr_size(const struct gen_xdr *x)
{
	return (size_t)(x->p - x->start);
}

/* ---- model ---- */

/** A file or directory on an export. */
struct gen_node {
	uint64_t fileid;       /**< inode number */
	uint64_t size;         /**< bytes */
	uint64_t mtime_ns;     /**< last data change */
	uint64_t ctime_ns;     /**< last attribute change */
	uint32_t type;         /**< TH_NFS_REG or TH_NFS_DIR */
	uint32_t mode;         /**< permission bits */
	uint32_t uid;          /**< owner */
	uint32_t gid;          /**< group */
	uint32_t nlink;        /**< links */
	uint32_t parent;       /**< index of the parent directory (itself for the root) */
	uint32_t generation;   /**< handle generation, bumps when the fileid is reused */
	uint32_t pos;          /**< index in the export's files[] or dirs[] */
	uint32_t *children;    /**< directories: child node indices */
	uint32_t n_children;   /**< used entries in children */
	uint32_t cap_children; /**< allocated entries in children */
	bool is_live;          /**< false once removed */
	bool is_exec;          /**< users workload: a program, read by demand paging */
	uint8_t name_len;      /**< bytes in name */
	char name[24];         /**< component name, NUL-terminated */
};

/** One exported file system. */
struct gen_export {
	char path[48];          /**< MNT path */
	uint32_t fsid;          /**< goes into handles */
	uint8_t fh_len;         /**< handle length on this server */
	struct gen_node *nodes; /**< all nodes ever made; index 0 is the root */
	uint32_t n_nodes;       /**< used */
	uint32_t cap_nodes;     /**< allocated */
	uint32_t *files;        /**< live regular files, for picking */
	uint32_t n_files;
	uint32_t *dirs; /**< live directories, for picking */
	uint32_t n_dirs;
	uint32_t cap_files, cap_dirs;
	uint64_t next_fileid; /**< next inode number */
	uint32_t name_seq;    /**< for new names */
};

struct gen_server {
	struct th_addr addr4; /**< IPv4 address (mapped) */
	struct th_addr addr6; /**< IPv6 address */
	uint8_t mac[6];       /**< Ethernet address */
	uint16_t mountd_port; /**< what GETPORT answers for MOUNT */
	uint64_t write_verf;  /**< WRITE/COMMIT verifier */
	struct gen_export exports[2];
	uint32_t n_exports;
};

/** One direction of a flow. */
struct gen_half {
	uint32_t isn;           /**< initial sequence number */
	uint32_t snd_next;      /**< next seq to assign (generation time) */
	uint32_t emitted_end;   /**< seq after the last emitted frame (flush time) */
	uint32_t last_ack;      /**< ack field of the last emitted frame */
	bool has_sent_ack;      /**< last_ack is valid */
	uint16_t ip_id;         /**< IPv4 identification counter */
	uint64_t busy_until_ns; /**< the link is busy with our previous frames until then */
};

/** A transport conversation between a client port and a server port. */
struct gen_flow {
	struct gen_half half[2]; /**< [0] client to server, [1] server to client */
	uint32_t client_idx;     /**< owner */
	uint32_t server_idx;     /**< peer */
	uint16_t client_port;
	uint16_t server_port;
	uint8_t l4;     /**< TH_PKT_L4_TCP or TH_PKT_L4_UDP */
	bool is_open;   /**< TCP: handshake done (or skipped) */
	bool is_closed; /**< TCP: FIN exchanged */
	struct gen_frame *tap_late; /**< a frame the mirror holds back until the next frame of
				       the other direction (--tap-reorder), or NULL */
};

enum gen_mount_state {
	GEN_MOUNT_GETPORT = 0, /**< ask portmap for mountd's port */
	GEN_MOUNT_MNT,         /**< mount the export */
	GEN_MOUNT_FSINFO,      /**< first NFS call, as Linux does */
	GEN_MOUNT_READY,       /**< the op mix runs */
};

/** A client's mount of one export. */
struct gen_mount {
	uint32_t server_idx;
	uint32_t export_idx;
	uint32_t state;        /**< enum gen_mount_state */
	struct gen_flow pmap;  /**< to port 111 */
	struct gen_flow mount; /**< to mountd */
	struct gen_flow nfs;   /**< to 2049 */
};

struct gen_client {
	struct th_addr addr; /**< IPv4 (mapped) or IPv6 */
	uint8_t mac[6];
	bool is_v6;
	bool is_udp;
	uint16_t vlan[2];                    /**< outer, inner VLAN ids */
	uint32_t uid, gid;                   /**< AUTH_SYS identity */
	char machine[TH_OP_MACHINE_MAX + 1]; /**< AUTH_SYS machine name */
	uint32_t xid;                        /**< next xid */
	uint16_t next_port;                  /**< next local port to bind */
	uint64_t next_ns;                    /**< when the client acts next */
	struct gen_mount *mounts;
	uint32_t n_mounts;
	uint32_t heap_pos;     /**< unused when not in a heap */
	struct gen_uclient *u; /**< users workload: caches and users (gen_users.c) */
};

/** READDIRPLUS entries are encoded from these (th_op keeps only the count). */
#define GEN_DIRENT_MAX 32

/** One RPC being generated: the op plus what the wire needs and th_op does not keep. */
struct gen_rpc {
	struct th_op op;                  /**< what a perfect decoder reports */
	struct gen_flow *flow;            /**< the conversation it travels on */
	uint32_t latency_ns;              /**< server think time */
	uint32_t access_granted;          /**< ACCESS result mask */
	uint64_t verf;                    /**< WRITE/COMMIT verifier */
	uint32_t dir_cookie_base;         /**< READDIR(PLUS): cookie of the first entry */
	uint32_t n_entries;               /**< READDIR(PLUS) entries to encode */
	uint32_t entries[GEN_DIRENT_MAX]; /**< READDIRPLUS entries, node indices */
	uint32_t dir;                     /**< READDIR: the directory node whose children
					     from dir_cookie_base on are the entries (a
					     reply holds hundreds: encoded from the tree,
					     which does not change before the reply is) */
	const struct gen_export *exp;     /**< export of the objects, for fsid and handles */
	bool is_close_after;              /**< TCP: the client closes after the reply */
	bool is_set_times;                /**< SETATTR/CREATE: atime and mtime to server time
					     (touch) */
	uint8_t tap_lost;                 /**< bit 0: a call frame, bit 1: a reply frame is
					     missing from the capture (--tap-loss) */
};

struct gen_world {
	const struct th_gen_config *cfg;
	struct th_rng rng;
	struct gen_server *servers;
	uint32_t n_servers;
	struct gen_client *clients;
	uint32_t n_clients;
	/* Users workload. */
	struct th_gen_stats *stats; /**< opens and phantoms are counted here */
	int (*open_cb)(void *ctx, const struct th_gen_open *o); /**< truth of opens */
	void *open_ctx;
	uint64_t end_ns; /**< no command starts at or after this */
};

int gen_world_init(struct gen_world *w, const struct th_gen_config *cfg);
void gen_world_free(struct gen_world *w);

/** Handle of a node. */
void gen_model_fh(const struct gen_export *e, uint32_t node, struct th_nfs_fh *fh);
/** Attributes of a node as fattr3 carries them. */
void gen_model_attr(const struct gen_node *n, struct th_nfs_attr *a);

/**
 * Fill @p rpc with the next call of client @p c at time @p now (the
 * op's identity, arguments, results, and the model's change), choosing
 * with the client's behaviour. @p is_small_only asks for an op whose
 * records fit in a few hundred bytes (for pipelined bursts).
 */
void gen_mix_next(struct gen_world *w, struct gen_client *c, uint64_t now, bool is_small_only,
	struct gen_rpc *rpc);

/** True once every mount of @p c went through its session start. */
bool gen_mix_is_ready(const struct gen_client *c);

/** Model operations, used by behaviours: each fills rpc->op (and extras). */
void gen_model_begin(struct gen_world *w, struct gen_client *c, struct gen_flow *f, uint32_t prog,
	uint32_t vers, uint32_t proc, struct gen_rpc *rpc);
void gen_model_session(struct gen_world *w, struct gen_client *c, struct gen_mount *m, uint64_t now,
	struct gen_rpc *rpc);
void gen_model_nfs(struct gen_world *w, struct gen_client *c, struct gen_mount *m, uint32_t proc,
	uint64_t now, struct gen_rpc *rpc);

/* Model helpers shared with the users workload. */
int gen_model_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem);
void gen_model_pre_attr(const struct gen_node *n, struct th_nfs_pre_attr *p);
void gen_model_set_name(struct th_nfs_name *dst, const char *s);
void gen_model_make_name(
	struct gen_export *e, struct th_rng *rng, bool is_dir, char *out, size_t size);
/** Add a node under @p parent (UINT32_MAX: the root). @return its index, or -1 (ENOMEM). */
int64_t gen_model_node_add(struct gen_export *e, struct th_rng *rng, uint32_t parent, uint32_t type,
	const char *name, uint64_t now, uint32_t uid, uint32_t gid);
void gen_model_child_unlink(struct gen_export *e, uint32_t parent, uint32_t idx);
void gen_model_file_remove(struct gen_export *e, uint32_t idx);
void gen_model_touch_dir(struct gen_node *d, uint64_t now);
uint32_t gen_model_pick_file(struct th_rng *rng, const struct gen_export *e);
uint32_t gen_model_pick_dir(struct th_rng *rng, const struct gen_export *e);

/* ---- users workload (gen_users.c) ---- */

/** What a user runs. */
enum gen_user_cmd {
	GEN_CMD_LS,    /**< ls -l DIR */
	GEN_CMD_STAT,  /**< stat FILE */
	GEN_CMD_CAT,   /**< cat FILE */
	GEN_CMD_WC,    /**< wc FILE (reads it all, like cat) */
	GEN_CMD_TOUCH, /**< touch FILE (or a new name) */
	GEN_CMD_CP,    /**< cp FILE NEW-OR-OTHER */
	GEN_CMD_EDIT,  /**< read FILE, pause, write a temp file, rename it over FILE */
	GEN_CMD_EXEC,  /**< run a program: demand-paged reads */
	GEN_CMD_MKDIR, /**< mkdir in DIR */
	GEN_CMD_RM,    /**< rm FILE */
	GEN__CMD_COUNT,
};

/**
 * Tests: make @p user of @p c run @p cmd on @p node (a file, or the
 * directory for ls and mkdir) of mount @p mount at @p now, instead of a drawn
 * command (after any command in progress).
 */
void gen_users_force(struct gen_client *c, uint32_t user, enum gen_user_cmd cmd, uint32_t mount,
	uint32_t node, uint64_t now);
/** Tests: whether the user is in the middle of a command. */
bool gen_users_is_busy(const struct gen_client *c, uint32_t user);

/** Caches, users and executables. @return 0 or -ENOMEM. */
int gen_users_init(struct gen_world *w);
void gen_users_free(struct gen_world *w);
/**
 * Next RPC of client @p c at @p now. @return 1 with @p rpc filled; 0 when
 * none is due now (c->next_ns says when, UINT64_MAX once every user is done);
 * or a negative errno (a sink refused an open).
 */
int gen_users_next(struct gen_world *w, struct gen_client *c, uint64_t now, struct gen_rpc *rpc);
/**
 * The RPC from gen_users_next() went out: its op holds the wire times. Records
 * them in the open in progress and sets c->next_ns. @return 0 or a sink's error.
 */
int gen_users_done(struct gen_world *w, struct gen_client *c, const struct gen_rpc *rpc);

/* ---- RPC encoding ---- */

/** Encode the call message (RPC header and arguments). @return bytes, 0 if it did not fit. */
size_t gen_rpc_encode_call(const struct gen_rpc *rpc, uint8_t *buf, size_t size);
/** Encode the reply message. @return bytes, 0 if it did not fit. */
size_t gen_rpc_encode_reply(const struct gen_rpc *rpc, uint8_t *buf, size_t size);

/* ---- wire ---- */

/** A frame waiting for its turn in the output; TCP headers are finished at flush. */
struct gen_frame {
	uint64_t ts_ns;        /**< when it is on the wire */
	uint64_t order;        /**< tie-break: generation order */
	struct gen_flow *flow; /**< TCP: finish seq/ack at flush; NULL: frame is complete */
	uint8_t dir;           /**< 0 client to server, 1 server to client */
	uint8_t tcp_flags;     /**< TH_TCP_* */
	bool has_seq;          /**< data/SYN/FIN with its own seq; pure ACKs take it at flush */
	uint32_t seq;          /**< TCP sequence number */
	uint32_t size;         /**< bytes in data (with Ethernet padding) */
	uint16_t l3_offset;    /**< IP header offset in data */
	uint16_t l4_offset;    /**< TCP header offset in data */
	uint32_t l3_size;      /**< IP packet bytes (without padding) */
	bool is_tap_lost;      /**< the hosts exchange it, the capture misses it (--tap-loss) */
	bool is_tap_copy;      /**< the mirror's second copy of a frame written (--tap-dup) */
	uint8_t data[];        /**< the frame */
};

struct gen_wire;

struct gen_wire *gen_wire_new(struct gen_world *w);
void gen_wire_free(struct gen_wire *wi);

/**
 * Send records on a flow direction starting no earlier than @p t0.
 * TCP: each record gets record marking, all are written as one stream
 * (small ones share segments). UDP: one datagram per record, fragmented
 * above the MTU. first_ns/last_ns receive each record's first and last
 * frame times. @return 0 or -ENOMEM.
 */
int gen_wire_send(struct gen_wire *wi, struct gen_flow *f, int dir, uint64_t t0,
	const uint8_t *const *recs, const uint32_t *sizes, uint32_t n, uint64_t *first_ns,
	uint64_t *last_ns);
/** Close a TCP flow with FIN from the client. */
int gen_wire_close(struct gen_wire *wi, struct gen_flow *f, uint64_t t0);
/** Pop the earliest queued frame with ts_ns <= until, finished, or NULL. */
struct gen_frame *gen_wire_pop(struct gen_wire *wi, uint64_t until);
/** True when the last UDP datagram gen_wire_send() sent was lost before the tap. */
bool gen_wire_last_lost(const struct gen_wire *wi);
/**
 * Records of the last gen_wire_send() with a frame missing from the capture
 * (--tap-loss): bit i for recs[i].
 */
uint32_t gen_wire_tap_lost_mask(const struct gen_wire *wi);
/**
 * The capture saw frame @p fr, just written: with chance --tap-dup, queue a byte-identical
 * copy stamped a little later (TH_GEN_TAP_DUP_DELAY_MIN_NS..MAX_NS) that the next pops
 * return in time order. A copy is never copied again.
 * @return 0, or -ENOMEM.
 */
int gen_wire_tap_copy(struct gen_wire *wi, const struct gen_frame *fr);
/**
 * Into @p st: the frames lost so far (--loss), left out of the capture (--tap-loss), written
 * after the next frame of the other direction (--tap-reorder) and copies queued (--tap-dup;
 * every one is written by a flush to UINT64_MAX).
 */
void gen_wire_counts(const struct gen_wire *wi, struct th_gen_stats *st);
/** Give a popped frame back. */
void gen_wire_release(struct gen_wire *wi, struct gen_frame *fr);

/** Internet checksum helpers (RFC 1071), exposed for tests. */
uint32_t gen_csum_add(uint32_t sum, const void *data, size_t size);
uint16_t gen_csum_fold(uint32_t sum);

#endif /* TH_GEN_PRIVATE_H */
