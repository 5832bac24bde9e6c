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

/**
 * A random valid point: each feature uniform over its grid (log or
 * power-of-two grids for counts and sizes; messages from 64 B in powers of two
 * up to the MTU, then MTU x 2, 3, 4, 6, 8, 12, ... up to max_msg; the pattern
 * is the whole vector of TH_WL_MSGS_MAX requests, each drawn alone, so a
 * random pattern all but never has all its requests small or large), drawn in
 * feature order, each restricted to the values the features drawn before it
 * allow (opcode by QP type, wq_depth >= wqe_batch, mr_size by the pinned
 * limit, messages by UD's MTU and the MR size). Uniform per feature, not over
 * whole points: a whole-point measure would all but never draw UD.
 */
void th_wl_random(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng);

/**
 * A random valid point as th_wl_random() draws it, its pattern then reshaped:
 * every request one of the drawn sizes (half the draws), every request one of
 * two of them (a quarter), or the drawn vector as it is (a quarter). A
 * pattern of sixteen independent sizes all but never has every request small,
 * large or in one band, which a third of the documented anomalies need; one
 * or two sizes, the way benchmark traffic is shaped, often do, and mutations
 * add variety from there. The vector stays TH_WL_MSGS_MAX long.
 */
void th_wl_random_shaped(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng);

/**
 * Change feature @p f of @p wl to another legal value (a neighbour on its
 * grid, sometimes a jump; the message pattern: one request moved, added or
 * dropped, or all of them a grid step up or down, one of its sizes alone, or
 * all redrawn), fixing dependent features so the result stays valid (e.g.
 * opcode after a QP type change). @return 0, or -EINVAL when the
 * feature has no other legal value.
 */
int th_wl_mutate(struct th_wl *wl, enum th_feat f, const struct th_limits *l,
	struct th_rng *rng);

/** Largest and smallest request of the pattern (0 for an empty pattern). */
uint32_t th_wl_msg_max(const struct th_wl *wl);
uint32_t th_wl_msg_min(const struct th_wl *wl);

/** Dimensions of th_wl_encode()'s vector. */
#define TH_WL_DIMS 14

/** Point as numbers in [0, 1] (log scales for counts and sizes), for BO kernels. */
void th_wl_encode(const struct th_wl *wl, const struct th_limits *l, double x[TH_WL_DIMS]);

/**
 * One-line text form, keys as th_feat_name() spells them and enum values as
 * words: "mem=local qp_type=RC opcode=WRITE dir=bidi mtu=1024 wqe_batch=1
 * sge=1 wq_depth=128 qp_count=1 mr_count=1 mr_size=1048576 msg=1024,65536".
 * @return what snprintf returns (the length it needed).
 */
int th_wl_format(const struct th_wl *wl, char *buf, size_t size);

/**
 * Read section @p section of @p c (keys as th_wl_format() spells them, all
 * required; msg is a comma list; enum values as words, case-insensitive).
 * Checks what needs no limits (opcode for the QP type, UD messages within the
 * MTU, wq_depth >= wqe_batch, ...); the caller checks limits with
 * th_wl_check(). @return 0, or -EINVAL with "file:line: ..." in @p err.
 */
int th_wl_from_conf(const struct th_conf *c, const char *section, struct th_wl *wl, char *err,
	size_t err_size);

/**
 * Read the one-line form th_wl_format() writes ("mem=local qp_type=RC ...":
 * key=value words separated by spaces or tabs, every feature once, values as
 * th_wl_from_conf() reads them). Checks what th_wl_from_conf() checks; the
 * caller checks limits with th_wl_check(). @p wl is set only on success.
 * @return 0; -EINVAL with "word N: ..." (or what is missing) in @p err;
 * -ENOMEM.
 */
int th_wl_parse(const char *line, struct th_wl *wl, char *err, size_t err_size);

/**
 * Write @p wl as an INI [workload] section that th_wl_from_conf() reads back.
 * @return 0 or -errno (open or write failed).
 */
int th_wl_write(const struct th_wl *wl, const char *path);

/*
 * Additions for the search, the simulator and MFS extraction.
 */

/**
 * Load a workload file: section [workload], no other keys allowed, within
 * limits @p l (NULL: what any device could run). @return 0 or -errno, with
 * "file:line: ..." in @p err for a value at fault: -ERANGE for one past @p l.
 */
int th_wl_load(
	const char *path, const struct th_limits *l, struct th_wl *wl, char *err, size_t err_size);

/**
 * A plain point most subsystems run at line rate: local memory, RC WRITE
 * one-way, MTU 4096, no batching, 1 SGE, wq_depth 128, 1 QP, 1 MR of 1 MiB,
 * one 64 KiB message. MFS extraction moves unconstrained features here.
 */
void th_wl_default(struct th_wl *wl);

/** Enumerated features (a bit set in struct th_mfs) vs numeric ones (an interval). */
bool th_feat_is_enum(enum th_feat f);

/** The enumerated features, a bit per enum th_feat. */
uint32_t th_feat_enum_mask(void);

/**
 * Feature @p f of @p wl as a number: the enum value, the MTU in bytes, the
 * count or size; TH_F_MSG reads the largest request.
 */
uint64_t th_wl_get(const struct th_wl *wl, enum th_feat f);

/**
 * Enumerated feature @p f of @p wl as the index of its value among
 * th_feat_value_name()'s (MTU 2048: 1); th_feat_value_count() or more when the
 * value is none of them.
 */
unsigned th_wl_enum_index(const struct th_wl *wl, enum th_feat f);

/** Set enumerated feature @p f to its @p i-th value (th_wl_enum_index()'s inverse). */
void th_wl_set_enum_index(struct th_wl *wl, enum th_feat f, unsigned i);

/** Set feature @p f; TH_F_MSG sets a one-request pattern. Nothing else changes. */
void th_wl_set(struct th_wl *wl, enum th_feat f, uint64_t v);

/** Give @p dst @p src's value of feature @p f (TH_F_MSG: the whole pattern). */
void th_wl_copy_feat(struct th_wl *dst, const struct th_wl *src, enum th_feat f);

/** Most values th_wl_grid() returns. */
#define TH_WL_GRID_MAX 80

/**
 * The grid of feature @p f in ascending order (all values the limits allow;
 * enum values 0..n-1, MTUs in bytes, message sizes for @p wl's MTU).
 * @return how many values were written to @p vals (at most @p max).
 */
unsigned th_wl_grid(enum th_feat f, const struct th_wl *wl, const struct th_limits *l,
	uint64_t *vals, unsigned max);

/**
 * A value of @p f's grid (for @p wl) within [@p lo, @p hi], drawn uniformly,
 * in *@p v. @return false, @p v untouched, when no grid value lies there.
 */
bool th_wl_grid_pick(enum th_feat f, const struct th_wl *wl, const struct th_limits *l, uint64_t lo,
	uint64_t hi, struct th_rng *rng, uint64_t *v);

/**
 * Features th_wl_mutate() may change besides @p f to keep the point valid, as
 * a bit set over enum th_feat (qp_type: opcode and msg; wqe_batch: wq_depth;
 * mr_size: mr_count and msg; ...).
 */
uint32_t th_wl_feat_deps(enum th_feat f);

/**
 * After feature @p f of @p wl was set by hand, move the features it leads
 * (th_wl_feat_deps()) back into range, as th_wl_mutate() does; @p f itself
 * stays. @return 0 when @p wl is valid afterwards, else -EINVAL.
 */
int th_wl_repair(struct th_wl *wl, enum th_feat f, const struct th_limits *l);

/** Whether two points are the same workload (unused msg[] entries ignored). */
bool th_wl_equal(const struct th_wl *a, const struct th_wl *b);

/**
 * Parse an enum feature's word ("UD", "bidi", "gpu", "2048"; case-insensitive).
 * @return the value's index (the enum value; MTU: 0 = 1024, 1 = 2048,
 * 2 = 4096, as struct th_mfs counts bits), or -EINVAL.
 */
int th_feat_parse_value(enum th_feat f, const char *word);

/** The word of enum feature @p f's value index @p v ("UD"); NULL when out of range. */
const char *th_feat_value_name(enum th_feat f, unsigned v);

/** How many values enumerated feature @p f has (0 for a numeric one). */
unsigned th_feat_value_count(enum th_feat f);

#endif /* TH_SPACE_H */
