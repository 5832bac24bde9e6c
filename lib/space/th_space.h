/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SPACE_H
#define TH_SPACE_H

/**
 * @file
 * The RDMA workload space (seed 002, Collie section 4): one point is an
 * application workload as the verbs API can express it, in the paper's four
 * dimensions (host topology, memory, transport, message pattern) plus the
 * traffic direction. The space knows each feature's legal values, rejects
 * impossible points (more QPs than the device allows, an opcode the QP type
 * cannot carry) before any backend sees them, mutates one feature at a time,
 * encodes a point as a vector for Bayesian optimisation, and reads and writes
 * workload files (INI, errors with file:line).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct th_conf;
struct th_rng;

/** Where the buffers live (dimension 1). */
enum th_mem {
	TH_MEM_LOCAL,  /**< DRAM on the RNIC's socket */
	TH_MEM_REMOTE, /**< DRAM on the other socket: crosses the SMP interconnect */
	TH_MEM_GPU,    /**< GPU memory (GPUDirect RDMA) */
	TH_MEM__COUNT,
};

enum th_qp_type { TH_QP_RC, TH_QP_UC, TH_QP_UD, TH_QP__COUNT };

/** Opcodes; RC carries all three, UC SEND and WRITE, UD SEND only. */
enum th_opcode { TH_OPC_SEND, TH_OPC_WRITE, TH_OPC_READ, TH_OPC__COUNT };

enum th_dir {
	TH_DIR_ONEWAY,   /**< host A sends to host B */
	TH_DIR_BIDI,     /**< both hosts send to each other */
	TH_DIR_LOOPBACK, /**< A sends to itself (loop traffic) while receiving from B */
	TH_DIR__COUNT,
};

/** The message pattern is a vector of this many request sizes at most (PUs x stages). */
#define TH_WL_MSGS_MAX 16

/** One point of the space: what the workload engine sets up and runs. */
struct th_wl {
	uint8_t mem;            /**< enum th_mem, both hosts */
	uint8_t qp_type;        /**< enum th_qp_type */
	uint8_t opcode;         /**< enum th_opcode */
	uint8_t dir;            /**< enum th_dir */
	uint16_t mtu;           /**< 1024, 2048 or 4096 */
	uint16_t wqe_batch;     /**< WQEs per ibv_post_send (1 = no batching) */
	uint16_t sge;           /**< SG elements per WQE */
	uint16_t n_msgs;        /**< entries used in msg[] (1..TH_WL_MSGS_MAX) */
	uint32_t qp_count;      /**< connections (QPs) per host, 1..20K */
	uint32_t wq_depth;      /**< send and receive queue depth in WQEs */
	uint32_t mr_count;      /**< registered memory regions, 1..200K */
	uint64_t mr_size;       /**< bytes per MR */
	uint32_t msg[TH_WL_MSGS_MAX]; /**< request sizes in bytes, posted round robin */
};

/**
 * The features one mutation step or one MFS condition is about. The message
 * pattern is one feature (its sizes move together under the MTU/burst grid).
 */
enum th_feat {
	TH_F_MEM,
	TH_F_QP_TYPE,
	TH_F_OPCODE,
	TH_F_DIR,
	TH_F_MTU,
	TH_F_WQE_BATCH,
	TH_F_SGE,
	TH_F_WQ_DEPTH,
	TH_F_QP_COUNT,
	TH_F_MR_COUNT,
	TH_F_MR_SIZE,
	TH_F_MSG,
	TH_F__COUNT,
};

/** Feature names as workload files and MFS text spell them ("qp_count"). */
const char *th_feat_name(enum th_feat f);

/** What the device and hosts allow; a profile fills it, the space enforces it. */
struct th_limits {
	uint32_t max_qp;       /**< QPs per host (paper's search range: 20K) */
	uint32_t max_mr;       /**< MRs per host (200K) */
	uint32_t max_wq_depth; /**< WQEs per queue */
	uint16_t max_sge;      /**< SG elements per WQE */
	uint16_t max_wqe_batch;
	uint64_t max_mr_size;  /**< bytes per MR */
	uint64_t max_pinned;   /**< mr_count * mr_size may not exceed this */
	uint32_t max_msg;      /**< largest request (RC/UC); UD is capped at the MTU */
	bool has_gpu;          /**< TH_MEM_GPU allowed */
	bool has_remote;       /**< a second socket exists */
};

/** The paper's full ranges (20K QPs, 200K MRs, ...), for tests and defaults. */
void th_limits_default(struct th_limits *l);

/**
 * Whether @p wl is a workload the hardware can run. @return 0, or -EINVAL
 * with the reason (naming the feature) in @p err.
 */
int th_wl_check(const struct th_wl *wl, const struct th_limits *l, char *err, size_t err_size);

/** A uniformly drawn valid point. */
void th_wl_random(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng);

/**
 * Change feature @p f of @p wl to another legal value (a neighbour on its
 * grid, sometimes a jump), fixing dependent features so the result stays
 * valid (e.g. opcode after a QP type change). @return 0, or -EINVAL when the
 * feature has no other legal value.
 */
int th_wl_mutate(struct th_wl *wl, enum th_feat f, const struct th_limits *l,
	struct th_rng *rng);

/** Largest and smallest request of the pattern; total bytes per round. */
uint32_t th_wl_msg_max(const struct th_wl *wl);
uint32_t th_wl_msg_min(const struct th_wl *wl);

/** Dimensions of th_wl_encode()'s vector. */
#define TH_WL_DIMS 14

/** Point as numbers in [0, 1] (log scales for counts and sizes), for BO kernels. */
void th_wl_encode(const struct th_wl *wl, const struct th_limits *l, double x[TH_WL_DIMS]);

/** One-line text form: "mem=local qp=RC op=WRITE dir=bidi mtu=1024 ... msg=1024,65536". */
int th_wl_format(const struct th_wl *wl, char *buf, size_t size);

/**
 * Read the [workload] section of @p c (keys as th_wl_format() spells them,
 * all required). @return 0, or -EINVAL with "file:line: ..." in @p err.
 */
int th_wl_from_conf(const struct th_conf *c, const char *section, struct th_wl *wl, char *err,
	size_t err_size);

/** Write @p wl as an INI [workload] section that th_wl_from_conf() reads back. */
int th_wl_write(const struct th_wl *wl, const char *path);

#endif /* TH_SPACE_H */
