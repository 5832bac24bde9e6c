/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SEARCH_H
#define TH_SEARCH_H

/**
 * @file
 * RDMA anomaly search (seed 002, Collie section 5 and Algorithm 1): drive a
 * workload engine (struct th_backend) through the workload space to find the
 * points that make the subsystem pause or fall short of its limits, and the
 * minimal feature set (MFS) of each. Simulated annealing as the paper's
 * Algorithm 1, with two ablations (performance counters only; no MFS), and
 * the paper's baselines in the same harness and budget: random search and
 * Bayesian optimisation (a Gaussian process with expected improvement).
 *
 * Time is testbed time: every experiment, MFS experiments included, costs
 * what backend->cost_s() says, and a search stops before the experiment that
 * would overrun its budget. The search never calls a backend with a point
 * th_wl_check() rejects. The same configuration and seed (and a
 * deterministic backend) give the same sequence of experiments.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "th_anomaly.h"
#include "th_backend.h"
#include "th_space.h"

/** Algorithms: id, name on the command line, one-line description. */
#define TH_SEARCH_ALGO_LIST(X)                                                                     \
	X(ANNEAL, "anneal", "simulated annealing, performance + diagnostic counters, MFS")         \
	X(ANNEAL_PERF, "anneal-perf", "simulated annealing, performance counters only, MFS")       \
	X(ANNEAL_NOMFS, "anneal-nomfs", "simulated annealing, both counter kinds, no MFS")         \
	X(RANDOM, "random", "uniform random points, MFS")                                          \
	X(RANDOM_SHAPED, "random-shaped", "random points shaped as annealing's restarts, MFS")     \
	X(BO, "bo", "Bayesian optimisation of diagnostic counters (GP + EI), MFS")

enum th_search_algo {
#define TH_SEARCH_ALGO_ENUM(id, name, desc) TH_SEARCH_##id,
	TH_SEARCH_ALGO_LIST(TH_SEARCH_ALGO_ENUM)
#undef TH_SEARCH_ALGO_ENUM
		TH_SEARCH__COUNT,
};

/** "anneal", ...; NULL for an unknown value. */
const char *th_search_algo_name(enum th_search_algo a);
/** One-line description. */
const char *th_search_algo_desc(enum th_search_algo a);
/** The algorithm named @p name. @return its value, or -EINVAL. */
int th_search_algo_parse(const char *name);

/** Whether the algorithm keeps MFS (skips covered points, extracts on finding). */
bool th_search_algo_uses_mfs(enum th_search_algo a);
/** Whether @p a walks by simulated annealing (temperature, decay, stall). */
bool th_search_algo_anneals(enum th_search_algo a);

/** One finished experiment, as the search hands it to its observer. */
struct th_search_exp {
	unsigned index;        /**< 0, 1, ... over the whole search, MFS runs included */
	double t_s;            /**< testbed seconds spent when it ended */
	bool is_mfs;           /**< run by MFS extraction, not chosen by the search */
	int rc;                /**< 0, or the backend's negative errno (setup failed) */
	const char *err;       /**< the backend's reason when rc < 0, else "" */
	struct th_wl wl;       /**< the point */
	struct th_sample mean; /**< per-second counters averaged over the samples */
	struct th_verdict v;   /**< the monitor's verdict (zeroed when rc < 0) */
	int anomaly;           /**< id of the anomaly this run recorded (the last confirming
				    run, or the trigger with confirm_runs 0), else -1 */
	/** The samples themselves, valid during the on_exp call only (NULL when rc < 0). */
	const struct th_sample *samples;
	/** How many (the monitor's samples per experiment). */
	unsigned n_samples;
};

/**
 * Called after each experiment (for logs). It may read the search through
 * the const accessors (anomalies, stats) but must not run or free it.
 */
typedef void (*th_search_exp_cb)(void *arg, const struct th_search_exp *e);

struct th_search;

/** What a search does and how long. */
struct th_search_cfg {
	enum th_search_algo algo;
	uint64_t seed;             /**< the search's own choices (not the backend's noise) */
	double budget_s;           /**< testbed seconds (default 10 h) */
	struct th_monitor_cfg mon; /**< anomaly thresholds and samples per experiment */
	double temp;               /**< annealing: temperature at each (re)start (default 1.0) */
	double decay;              /**< annealing: temperature factor per step (default 0.97) */
	double temp_min;           /**< annealing: the temperature never drops below (0.05) */
	unsigned stall_steps;      /**< annealing: restart at a random point after this many
					experiments without a new anomaly (default 10;
					0: never): a walk settled where the
					caches thrash without an anomaly stays */
	unsigned bo_window;        /**< BO: latest experiments the GP fits (default 48) */
	unsigned bo_candidates;    /**< BO: points scored by EI per step (default 96) */
	unsigned skip_max;         /**< covered points in a row before a random restart (200) */
	unsigned anomalies_max;    /**< stop recording (not searching) past this many (4096) */
	unsigned confirm_runs;     /**< runs of a new anomaly's trigger that must show its
					symptom again before it is recorded (default 1; 0:
					none): near a threshold the noise fakes single hits,
					and an MFS extracted from such a point is noise */
	th_search_exp_cb on_exp;   /**< observer, or NULL */
	void *arg;                 /**< its argument */
	/**
	 * Annealing: the energy change of a move from @p a to @p b, in place of
	 * the counters' (NULL: the counters'). For studies of the search itself:
	 * tests/rdma/search_bounds gives it a judge that knows the profile's
	 * documented anomalies.
	 */
	double (*energy)(
		void *arg, const struct th_search *s, const struct th_wl *a, const struct th_wl *b);
	void *energy_arg; /**< its argument */
	/** A signal handler's flag, or NULL: once nonzero, the search runs no
	    further experiment and ends as if out of budget (is_interrupted). */
	const volatile sig_atomic_t *stop;
};

/** Defaults: annealing, seed 1, 10 testbed hours, the paper's monitor. */
void th_search_cfg_default(struct th_search_cfg *c);

/** One anomaly the search found. */
struct th_search_anomaly {
	unsigned id;          /**< 0, 1, ... in order of finding */
	uint8_t symptom;      /**< enum th_symptom */
	struct th_wl trigger; /**< the point that showed it */
	struct th_verdict v;  /**< its verdict */
	double t_found_s;     /**< testbed seconds spent when the trigger run ended */
	bool has_mfs;         /**< MFS extracted (not with MFS off, nor when the budget
				   ran out during extraction) */
	struct th_mfs mfs;    /**< the conditions, when has_mfs */
	struct th_wl base;    /**< when has_mfs: a point inside them that triggered with
				   every other feature benign (th_mfs_extract()'s reduced
				   point), free of causes the trigger met besides */
	unsigned mfs_runs;    /**< experiments the extraction ran */
	bool is_refined;      /**< th_search_refine() bounded its free features */
	int same_as;          /**< the earlier anomaly whose cause this trigger showed
				   again (its MFS was widened to cover it), or -1 */
	int met_in;           /**< the anomaly whose MFS extraction met this one (a
				   neighbouring cause, th_mfs_side), or -1 */
};

/** Counts over one search. */
struct th_search_stats {
	unsigned runs;         /**< experiments chosen by the search (confirmations too) */
	unsigned confirm_runs; /**< runs of a new anomaly's trigger again (cfg.confirm_runs) */
	unsigned mfs_runs;   /**< experiments run by MFS extraction */
	unsigned refine_runs; /**< experiments run by th_search_refine() (in mfs_runs too) */
	double refine_s;      /**< testbed seconds th_search_refine() spent (in t_s too) */
	unsigned failed;     /**< backend runs that returned an error */
	unsigned skipped;    /**< points not run because an MFS covers them */
	unsigned rejected;   /**< points th_wl_check refused (never sent to the backend) */
	unsigned restarts;   /**< annealing restarts at a random point */
	unsigned accepted;   /**< annealing moves accepted */
	unsigned duplicates; /**< anomalous points not recorded: same symptom as a known one */
	unsigned unconfirmed; /**< anomalous points not recorded: a confirming run showed
				   another verdict or failed to set up (a confirmation the
				   budget cut short is not counted) */
	double t_s;          /**< testbed seconds spent */
	bool is_interrupted; /**< ended by cfg.stop, not by the budget */
};

/**
 * A search of @p b (which must outlive it) as @p c says.
 * @return the search, or NULL with errno EINVAL (bad configuration) or ENOMEM.
 */
struct th_search *th_search_create(const struct th_search_cfg *c, const struct th_backend *b);

void th_search_free(struct th_search *s);

/**
 * Search until the budget is spent. @return 0, or -ENOMEM. Backend
 * failures are counted, not returned.
 */
int th_search_run(struct th_search *s);

/**
 * After th_search_run(): bound the numeric features each extracted MFS leaves
 * free where its anomaly stops along them (th_mfs_refine() at the MFS's
 * reduced point), in at most @p extra_s more testbed seconds. These are the
 * conditions a benign value meets, which extraction cannot see: H#17's
 * "wqe_batch<=16" and "wq_depth>=128". MFS precision for the report, not for
 * the search (the search done in the same time finds a little less with it,
 * docs/search-findings.md). Each MFS still holds its trigger (widened to it,
 * as extraction does); one the budget cuts short keeps what it had.
 * @return 0, or -EINVAL (@p extra_s negative).
 */
int th_search_refine(struct th_search *s, double extra_s);

/**
 * Before th_search_run(): treat anomaly @p m as found already. Algorithms
 * with MFS skip every point it covers and record no anomaly of its symptom
 * inside it: an earlier run's MFS (DIR/mfs.txt of th_search_write_anomalies()),
 * or a cause known from elsewhere. Ignored without MFS. @return 0, -EINVAL
 * (bad symptom) or -ENOMEM.
 */
int th_search_add_given(struct th_search *s, const struct th_mfs *m);

unsigned th_search_anomaly_count(const struct th_search *s);
const struct th_search_anomaly *th_search_anomaly_get(const struct th_search *s, unsigned i);
void th_search_get_stats(const struct th_search *s, struct th_search_stats *st);

/**
 * One experiment outside a search (replay): check @p wl against the
 * backend's limits, run it for mon->samples seconds, average and judge.
 * @return 0; -EINVAL when the space rejects @p wl (reason in @p err, nothing
 * run); the backend's negative errno when it fails (reason in @p err).
 */
int th_search_run_one(const struct th_backend *b, const struct th_monitor_cfg *mon,
	const struct th_wl *wl, struct th_sample *mean, struct th_verdict *v, char *err,
	size_t err_size);

/**
 * The paper's relative energy change from point A to point B: performance
 * counters driven down (throughput: (B - A) / A; the pause ratio, which
 * should rise: (A - B) / B) and, unless @p diag_max is NULL, every
 * diagnostic counter driven up ((A - B) / B, both hosts summed, B taken as
 * at least @p floor_share of diag_max[counter]: a share of 0 gives the raw
 * relative change; the walk passes the largest values it has seen, so noise
 * creeping up is not a doubling). Each term is bounded to [-1, 1] so one counter leaving zero
 * cannot swamp the rest. Negative is better (closer to an anomaly).
 */
double th_search_energy_delta(const struct th_sample *a, const struct th_verdict *va,
	const struct th_sample *b, const struct th_verdict *vb,
	const double diag_max[TH_CTR__COUNT], double floor_share);

/** The floor share the annealing walk passes to th_search_energy_delta(). */
#define TH_SEARCH_DIAG_FLOOR 0.05

/**
 * Raise @p max (per counter, both hosts summed) to @p mean's values: the
 * largest seen, which th_search_energy_delta()'s floor is a share of.
 */
void th_search_diag_track(double max[TH_CTR__COUNT], const struct th_sample *mean);

/* ---- results (results.c) ---- */

/**
 * Write @p e as one JSON line: algorithm, seed, index, testbed time, MFS
 * flag, workload (th_wl_format text), verdict, counter means per host.
 * @return 0, or -EIO.
 */
int th_search_log_exp(FILE *f, const char *algo, uint64_t seed, const struct th_search_exp *e);

/**
 * The anomaly list: for each anomaly, DIR/anomaly-<id>.ini (its trigger as
 * a workload file) and one entry in DIR/anomalies.txt with symptom, time,
 * MFS text and the command that reproduces it (`tracehound search --profile
 * @p profile --replay DIR/anomaly-<id>.ini`); and DIR/mfs.txt, every MFS the
 * search holds (given ones first) one per line, which a later search takes
 * with th_search_add_given(). @p dir must exist. @return 0, or a negative
 * errno.
 */
int th_search_write_anomalies(const struct th_search *s, const char *dir, const char *profile);

/**
 * A summary of @p s to @p f: with @p has_table, a line per anomaly (time,
 * MFS); always the counts of runs and causes, and whether it was stopped.
 */
void th_search_print_summary(const struct th_search *s, FILE *f, bool has_table);

/** A documented anomaly to score a search against (th_sim_known's essentials). */
struct th_search_known {
	const char *id;           /**< "F#3" */
	const struct th_mfs *mfs; /**< its conditions and symptom */
};

/**
 * Score @p s against @p known: an anomaly the search found matches a known
 * one when the known MFS covers its trigger and the symptoms agree; each
 * found anomaly is credited to at most one known anomaly not yet credited
 * (the one whose constrained features resemble the found MFS most, then the
 * first in table order), so overlapping conditions do not count twice.
 * @p first_s[i] gets the testbed time known anomaly i was first found, or
 * a negative value. @return how many found anomalies match no known one.
 */
unsigned th_search_score(const struct th_search *s, const struct th_search_known *known,
	unsigned known_count, double *first_s);

/**
 * An SVG line chart of anomalies found versus testbed hours (the paper's
 * Figures 4 and 5): one panel per profile, one line per algorithm.
 * @p count[(p * algo_count + a) * point_count + k] is the mean count of
 * panel p, algorithm a at hour hours * k / (point_count - 1); @p known[p]
 * the panel's number of known anomalies (a dashed line).
 * @return 0, or a negative errno.
 */
int th_search_write_chart(const char *path, unsigned panel_count, const char *const *panel_name,
	const unsigned *known, unsigned algo_count, const char *const *algo_name,
	unsigned point_count, double hours, const double *count);

#endif /* TH_SEARCH_H */
