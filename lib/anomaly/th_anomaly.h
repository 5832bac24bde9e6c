/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_ANOMALY_H
#define TH_ANOMALY_H

/**
 * @file
 * Anomalies (seed 002, Collie section 5): the monitor that decides from
 * counter samples whether a workload made the subsystem pause or fall short
 * of its limits, and minimal feature sets (MFS): the conditions a workload
 * must meet to trigger an anomaly, as predicates that test membership, with
 * the extraction that finds them by trying alternative values per feature.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_backend.h"
#include "th_space.h"

enum th_symptom { TH_SYM_PAUSE, TH_SYM_LOW_TPUT, TH_SYM__COUNT };

/** "pause" or "low_tput". */
const char *th_symptom_name(enum th_symptom s);

/** Monitor thresholds (defaults: the paper's). */
struct th_monitor_cfg {
	double pause_ratio; /**< pause duration / time at or above this: pause (0.001) */
	double shortfall;   /**< at or below (1 - this) of both bps and pps limits: low (0.20) */
	unsigned samples;   /**< one-second samples per test, averaged (4) */
};

void th_monitor_cfg_default(struct th_monitor_cfg *c);

struct th_verdict {
	bool pause;         /**< pause ratio at or over the threshold on either host */
	bool low_tput;      /**< some sending host under both limits by the shortfall */
	double pause_ratio; /**< the larger host's mean pause duration ratio */
	double bps_frac;    /**< worst sending host: mean bits/s over the limit */
	double pps_frac;    /**< same host: mean packets/s over the pps limit */
};

/**
 * Judge @p n samples (averaged per counter) against @p e. Pause ratio per host
 * is mean PAUSE_US / 1e6; pause when the larger host's ratio >= pause_ratio.
 * Low throughput when some sending host (bit in e->senders) has mean TX wire
 * bits/s <= (1 - shortfall) * bps AND mean TX packets/s <= (1 - shortfall) *
 * pps. Both boundaries are inclusive (exactly 0.1% is a pause, exactly 80% of
 * both limits is low); n == 0, no senders or zero limits judge nothing.
 */
void th_monitor_judge(const struct th_monitor_cfg *c, const struct th_expect *e,
	const struct th_sample *s, unsigned n, struct th_verdict *v);

/** Per host and counter, the mean of @p n samples (all zero when n is 0). */
void th_sample_mean(const struct th_sample *s, unsigned n, struct th_sample *mean);

/** th_monitor_judge() on samples already averaged by th_sample_mean(). */
void th_monitor_judge_mean(const struct th_monitor_cfg *c, const struct th_expect *e,
	const struct th_sample *mean, struct th_verdict *v);

/** Whether verdict @p v shows either symptom. */
bool th_verdict_is_anomalous(const struct th_verdict *v);

/** Whether verdict @p v shows symptom @p s. */
bool th_verdict_has(const struct th_verdict *v, enum th_symptom s);

/** An inclusive interval of a numeric feature. */
struct th_range {
	uint64_t lo, hi;
};

/**
 * A minimal feature set: the symptom and, per constrained feature, the values
 * that trigger it. Enumerated features (mem, qp_type, opcode, dir, mtu) hold a
 * bit set of allowed values (mtu: bit 0 = 1024, 1 = 2048, 2 = 4096); numeric
 * ones an interval; the message pattern intervals on its smallest and largest
 * request ("mix of <=1K and >=64K" is msg_min <= 1024 and msg_max >= 65536).
 */
struct th_mfs {
	uint8_t symptom;                    /**< enum th_symptom */
	uint32_t feats;                     /**< bit per enum th_feat constrained */
	uint32_t set[TH_F__COUNT];          /**< enumerated features: allowed values */
	struct th_range range[TH_F__COUNT]; /**< numeric features */
	struct th_range msg_min, msg_max;   /**< TH_F_MSG */
};

/** Whether @p wl meets every condition of @p m (any symptom). */
bool th_mfs_covers(const struct th_mfs *m, const struct th_wl *wl);

/** The conditions of @p m that @p wl fails: a bit per enum th_feat (0: covered). */
uint32_t th_mfs_failing(const struct th_mfs *m, const struct th_wl *wl);

/**
 * Whether every point @p a covers is one @p b covers, by their conditions
 * (same symptom; a feature @p b constrains must be constrained at least as
 * tightly by @p a). An anomaly whose MFS lies within another's is a special
 * case of it: the search met the same cause under narrower conditions.
 */
bool th_mfs_within(const struct th_mfs *a, const struct th_mfs *b);

/**
 * Text form, one condition per word: "pause: qp_type=UD opcode=SEND
 * wqe_batch>=64 wq_depth>=256", also "mtu=1024|2048", "qp_count=16..512",
 * "msg_max<=1024", "msg_min>=16384".
 */
int th_mfs_format(const struct th_mfs *m, char *buf, size_t size);

/** Parse th_mfs_format()'s text. @return 0, or -EINVAL with the bad word in @p err. */
int th_mfs_parse(const char *text, struct th_mfs *m, char *err, size_t err_size);

/**
 * Runs one experiment for MFS extraction: whether @p wl shows @p s. A
 * negative return is a failed run (setup error); extraction treats it as
 * "does not trigger" and counts it.
 */
typedef int (*th_mfs_oracle)(void *ctx, const struct th_wl *wl, enum th_symptom s);

/**
 * A second cause an extraction met: a reduction move that changed an
 * enumerated feature of the trigger still showed the symptom, under
 * conditions that exclude the trigger's own value (UD SEND moved to RC,
 * where an RC anomaly holds too). th_mfs_extract() then extracts the
 * trigger's own cause again with that feature kept, and reports this one.
 */
struct th_mfs_side {
	bool is_set;       /**< a second cause was met */
	struct th_wl at;   /**< a point that showed it, inside @ref mfs */
	struct th_mfs mfs; /**< its conditions */
};

/**
 * Find the MFS of @p trigger (which showed @p s) in three passes. Reduce:
 * move one feature at a time to a healthy default value and keep each move
 * that still triggers, so when two anomalies overlap the conditions left are
 * one consistent cause, never their union. Bound: bisect each kept numeric
 * condition in that reduced context to the grid value where the anomaly
 * stops (qp_count>=512, not >=385). Verify: the reduced point and a few
 * random points inside the MFS trigger, tightening when one does not; the MFS
 * always covers @p trigger. When the reduction crossed into a neighbouring
 * cause, that cause goes to @p side (may be NULL) and the trigger's own is
 * extracted again, with the crossed features kept (repeated points cost
 * nothing). @p reduced (may be NULL) gets the reduced point: a point that
 * triggered with every feature outside the MFS at a benign value, where no
 * other cause the trigger happened to meet still holds. About 30-50
 * experiments, 50-80 after a crossing; every candidate passes th_wl_check()
 * before the oracle sees it. Conditions that validity implies
 * are left out (opcode=READ, not also qp_type=RC); th_mfs_same() compares MFS
 * with them added. Deterministic.
 * @return experiments run (>= 0), or -EINVAL (bad arguments, invalid
 * trigger) or -ENOMEM.
 */
int th_mfs_extract(const struct th_wl *trigger, enum th_symptom s, const struct th_limits *l,
	th_mfs_oracle oracle, void *ctx, struct th_mfs *out, struct th_mfs_side *side,
	struct th_wl *reduced);

/**
 * Bound each numeric feature @p m leaves free (the pattern aside) where the
 * symptom stops along it at @p base, a point inside @p m that showed it (the
 * reduced point th_mfs_extract() gives): the conditions a benign value meets,
 * which the reduction cannot see because it never moves a feature past its
 * benign value (H#17's "wqe_batch<=16": the reduction left the batch at 1).
 * Each free feature costs its two grid ends, and a bisection where the
 * symptom stops. @return experiments run (>= 0), -EINVAL or -ENOMEM.
 */
int th_mfs_refine(struct th_mfs *m, const struct th_wl *base, enum th_symptom s,
	const struct th_limits *l, th_mfs_oracle oracle, void *ctx);

/**
 * A random valid point inside @p m: th_wl_random() points that meet its
 * enumerated conditions, each constrained numeric feature then moved to a
 * random value its condition allows (the message pattern: 1-16 requests, the
 * smallest and largest inside their bounds). Tells how much of an MFS's
 * region shows its symptom. @return 0, -ENOENT when 4096 draws found no
 * valid point inside, or -EINVAL.
 */
int th_mfs_draw(
	const struct th_mfs *m, const struct th_limits *l, struct th_rng *rng, struct th_wl *out);

/**
 * Add the conditions validity implies (opcode=READ implies qp_type=RC,
 * qp_type=UD implies opcode=SEND, ...), so that equivalent MFS compare equal.
 */
void th_mfs_normalize(struct th_mfs *m);

/**
 * Drop the conditions that admit every value a valid workload under @p l can
 * have ("sge=1..32" with 32 SGEs the most, "mtu=1024|2048|4096"): widening
 * and bisection can leave them, and they constrain nothing.
 */
void th_mfs_drop_void(struct th_mfs *m, const struct th_limits *l);

/** Whether @p a and @p b state the same conditions once normalized (symptom included). */
bool th_mfs_same(const struct th_mfs *a, const struct th_mfs *b);

/**
 * Let feature @p f's condition in @p m admit @p w's value: an enumerated set
 * gains it, an interval (for the pattern: on its smallest and largest request)
 * stretches to it. An unconstrained feature stays so.
 */
void th_mfs_widen(struct th_mfs *m, const struct th_wl *w, enum th_feat f);

/**
 * Let @p m admit @p w: th_mfs_widen() on every condition @p w fails, then
 * th_mfs_drop_void() under @p l.
 */
void th_mfs_widen_to(struct th_mfs *m, const struct th_wl *w, const struct th_limits *l);

#endif /* TH_ANOMALY_H */
