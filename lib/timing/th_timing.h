/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_TIMING_H
#define TH_TIMING_H

/**
 * @file
 * Benchmark driver timing (Faban-style): every tracehound driver (disk probe,
 * RDMA engine, trace replay) times only the critical sections of its
 * operations, not data preparation nor response validation.
 *
 * One driver object per thread, no shared state, no global state:
 *
 * @code
 *	struct th_timing_clock clk;
 *	struct th_timing_driver *d;
 *
 *	th_timing_clock_init_real(&clk);
 *	d = th_timing_driver_create(&cfg, &clk, thread_id);
 *	th_timing_driver_start(d, t0);          // same t0 for all threads
 *	while (th_timing_driver_is_running(d)) {
 *		int op = th_timing_op_begin(d);  // mix picks the operation
 *		prepare(op);                     // not timed
 *		th_timing_record_time(d);        // waits for the intended start
 *		send_and_receive();              // critical section
 *		th_timing_record_time(d);
 *		ok = validate();                 // not timed
 *		th_timing_op_end(d, ok, NULL);
 *	}
 *	th_timing_stats_merge(total, th_timing_driver_stats(d));  // after join
 * @endcode
 *
 * Times are nanoseconds of a caller-chosen clock (struct th_timing_clock):
 * CLOCK_MONOTONIC for real runs, a scripted fake clock for tests.
 *
 * Schedule. Each operation has an intended start time:
 * - TH_TIMING_DELAY_CYCLE: t0 + the sum of all cycle delays drawn so far, so
 *   the schedule never drifts when an operation runs long;
 * - TH_TIMING_DELAY_THINK: the end of the previous operation's last critical
 *   section + a think delay;
 * - TH_TIMING_DELAY_NONE: the actual start (closed loop, nothing to be late for).
 * The first critical section of an operation starts no earlier than its
 * intended start. Two histograms per operation type: service time (from the
 * actual start) and response time (from the intended start), so a late start
 * (coordinated omission) shows in the response time instead of vanishing.
 * Both exclude pauses: time = end - start - paused.
 *
 * Phases. Ramp-up, steady state and ramp-down each end when their duration
 * has passed or their operation count is reached, whichever comes first (a
 * zero means "no limit of that kind"). An operation belongs to the phase that
 * holds its intended start; only steady-state operations enter the histograms.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "th_rng.h"

#include "th_hist.h"

/** Most operation types per driver. */
#define TH_TIMING_MAX_OPS 16
/** Most percentile limits per configuration. */
#define TH_TIMING_MAX_LIMITS 32
/** Most criteria in one verdict: every limit, one mix check per op, cycle, Little. */
#define TH_TIMING_MAX_CHECKS (TH_TIMING_MAX_LIMITS + TH_TIMING_MAX_OPS + 2)
/** Negative-exponential delays are clamped at this many times the mean unless max is set. */
#define TH_TIMING_NEGEXP_CLAMP 5
/** The real clock busy-waits this long before a deadline (see th_timing_clock_init_real()). */
#define TH_TIMING_SPIN_NS 100000ull
/** Default slack before a start counts as late (struct th_timing_op_stats::late). */
#define TH_TIMING_LATE_NS 1000000ull
/** A tolerance with this value disables its criterion. */
#define TH_TIMING_CHECK_OFF (-1.0)
/** Passed to th_timing_op_begin_as(): use the configured delay schedule. */
#define TH_TIMING_SCHEDULE 0ull

/* ------------------------------------------------------------------------ */
/** @name Clock */

struct th_timing_clock;

/** Current time in ns; must never go backwards. */
typedef uint64_t (*th_timing_now_fn)(struct th_timing_clock *c);
/** Return no earlier than @p deadline_ns (immediately when it has passed). */
typedef void (*th_timing_sleep_fn)(struct th_timing_clock *c, uint64_t deadline_ns);

/**
 * A clock: two callbacks and their state. Fill now/sleep_until/arg yourself
 * for a custom (scripted) clock, or use one of the initialisers below.
 */
struct th_timing_clock {
	th_timing_now_fn now;           /**< read the time */
	th_timing_sleep_fn sleep_until; /**< wait for an absolute time */
	void *arg;                      /**< caller state for custom clocks */
	uint64_t spin_ns;               /**< real clock: busy-wait this long before a deadline */
	uint64_t fake_ns;               /**< fake clock: the current time */
	uint64_t slept_ns;              /**< fake clock: total time advanced by sleep_until */
};

/**
 * CLOCK_MONOTONIC; sleep_until sleeps with clock_nanosleep(TIMER_ABSTIME)
 * until TH_TIMING_SPIN_NS before the deadline, then polls the clock. Why:
 * measured on the Debian 12 dev VM (2000 sleeps of 0.5 ms), a plain absolute
 * sleep woke 75 us late at the median (timer slack + wake-up latency), which
 * would be measured as lateness in every response time and delay every
 * start; spinning the last 50 us still left 25 us, the last 100 us left
 * 60 ns (p99 70 ns). Rare multi-ms outliers are preemption and stay
 * visible. Set spin_ns to 0 afterwards to never spin (less CPU, later
 * starts), or larger on a noisier host.
 */
void th_timing_clock_init_real(struct th_timing_clock *c);

/**
 * A fake clock for tests: now() returns c->fake_ns, sleep_until() jumps it
 * forward to the deadline. Simulate work with th_timing_clock_advance().
 */
void th_timing_clock_init_fake(struct th_timing_clock *c, uint64_t start_ns);

/** Fake clock: let @p ns pass (the driver's "work"). */
void th_timing_clock_advance(struct th_timing_clock *c, uint64_t ns);

/** Shorthands for c->now(c) and c->sleep_until(c, deadline_ns). */
uint64_t th_timing_clock_now(struct th_timing_clock *c);
void th_timing_clock_sleep_until(struct th_timing_clock *c, uint64_t deadline_ns);

/* ------------------------------------------------------------------------ */
/** @name Seeded pseudo-random numbers: struct th_rng (th_rng.h) */

/* ------------------------------------------------------------------------ */
/** @name Delay distributions */

#define TH_TIMING_DIST_KINDS(X)                                                                    \
	X(FIXED, "fixed")                                                                          \
	X(UNIFORM, "uniform")                                                                      \
	X(NEGEXP, "negexp")

enum th_timing_dist_kind {
#define X(e, s) TH_TIMING_DIST_##e,
	TH_TIMING_DIST_KINDS(X)
#undef X
		TH_TIMING_DIST_KIND_COUNT
};

/** "fixed", "uniform", "negexp", or "?" for an unknown value. */
const char *th_timing_dist_kind_name(enum th_timing_dist_kind kind);

/** A delay distribution; set it with th_timing_dist_set(). */
struct th_timing_dist {
	enum th_timing_dist_kind kind; /**< shape */
	uint64_t mean_ns;              /**< mean of the draws */
	uint64_t min_ns;               /**< smallest draw */
	uint64_t max_ns;               /**< largest draw */
	double scale_ns;               /**< negexp: exponential scale that keeps the
					    clamped mean at mean_ns (computed) */
};

/**
 * Set and validate a distribution.
 * - FIXED: every draw is @p mean_ns (min and max are ignored).
 * - UNIFORM: integers uniform in [@p min_ns, @p max_ns]; the mean is their midpoint
 *   (@p mean_ns is ignored).
 * - NEGEXP: min + an exponential, truncated at @p max_ns (0: TH_TIMING_NEGEXP_CLAMP ×
 *   mean). The exponential's scale is solved so that the truncated draws still
 *   average @p mean_ns (a plain clamp at 5× mean would fall 0.7% short).
 * @return 0, or -EINVAL when min > max, or for NEGEXP when not min < mean < max.
 */
int th_timing_dist_set(struct th_timing_dist *d, enum th_timing_dist_kind kind, uint64_t mean_ns,
	uint64_t min_ns, uint64_t max_ns);

/** One draw from @p d (0 for an unset distribution). */
uint64_t th_timing_dist_draw(const struct th_timing_dist *d, struct th_rng *r);

/* ------------------------------------------------------------------------ */
/** @name Configuration */

/** How an operation's critical sections are stamped. */
enum th_timing_mode {
	TH_TIMING_MANUAL, /**< the driver calls th_timing_record_time()/th_timing_pause_time() */
	TH_TIMING_AUTO,   /**< the library times a callback: th_timing_op_run() */
};

#define TH_TIMING_DELAY_KINDS(X)                                                                   \
	X(NONE, "none")                                                                            \
	X(THINK, "think")                                                                          \
	X(CYCLE, "cycle")

enum th_timing_delay_kind {
#define X(e, s) TH_TIMING_DELAY_##e,
	TH_TIMING_DELAY_KINDS(X)
#undef X
		TH_TIMING_DELAY_KIND_COUNT
};

const char *th_timing_delay_kind_name(enum th_timing_delay_kind kind);

enum th_timing_mix_kind {
	TH_TIMING_MIX_FLAT,   /**< each operation drawn with probability weight / sum */
	TH_TIMING_MIX_MARKOV, /**< next operation drawn from the current one's matrix row */
};

#define TH_TIMING_PHASES(X)                                                                        \
	X(RAMPUP, "ramp-up")                                                                       \
	X(STEADY, "steady")                                                                        \
	X(RAMPDOWN, "ramp-down")                                                                   \
	X(DONE, "done")

enum th_timing_phase {
#define X(e, s) TH_TIMING_PHASE_##e,
	TH_TIMING_PHASES(X)
#undef X
		TH_TIMING_PHASE_COUNT
};

const char *th_timing_phase_name(enum th_timing_phase phase);

/** Which of an operation's histograms a percentile limit applies to. */
enum th_timing_hist_kind {
	TH_TIMING_HIST_RESPONSE, /**< from the intended start */
	TH_TIMING_HIST_SERVICE,  /**< from the actual start */
};

/** "p<percentile> of <op>'s <hist> <= limit_ns". */
struct th_timing_limit {
	int op;                        /**< operation index, or -1 for all operations'
					    samples together */
	double percentile;             /**< 0 to 100, e.g. 99.0 */
	uint64_t limit_ns;             /**< largest acceptable value */
	enum th_timing_hist_kind hist; /**< response (default) or service */
};

struct th_timing_op_def {
	const char *name;         /**< shown in summaries; not copied, must outlive the driver */
	enum th_timing_mode mode; /**< manual or auto timing */
};

/**
 * What a driver runs. Fill it with th_timing_config_init() then the helpers
 * below or by hand; the driver keeps a pointer, so keep it alive and unchanged.
 */
struct th_timing_config {
	uint32_t op_count;                              /**< operation types in use */
	struct th_timing_op_def ops[TH_TIMING_MAX_OPS]; /**< operation types */

	enum th_timing_mix_kind mix;       /**< how the next operation is chosen */
	double weights[TH_TIMING_MAX_OPS]; /**< flat mix: relative weights (>= 0) */
	double matrix[TH_TIMING_MAX_OPS][TH_TIMING_MAX_OPS]; /**< Markov: [from][to] weights;
								  rows need not sum to 1 */
	uint32_t markov_first;                               /**< Markov: the first operation */

	enum th_timing_delay_kind delay;  /**< think time, cycle time or none */
	struct th_timing_dist delay_dist; /**< its distribution */

	uint64_t rampup_ns, steady_ns, rampdown_ns; /**< phase durations (0: no time limit) */
	uint64_t rampup_count, steady_count, rampdown_count; /**< phase op counts (0: none) */

	uint64_t seed;    /**< PRNG seed; thread i uses seed + i */
	uint64_t late_ns; /**< a start this much after its intended
			       start counts as late */

	uint32_t limit_count;                                /**< percentile limits in use */
	struct th_timing_limit limits[TH_TIMING_MAX_LIMITS]; /**< percentile limits */
	double mix_tolerance_pct;    /**< |observed - configured share| in percentage points */
	double cycle_tolerance_pct;  /**< |achieved - configured mean delay| in % of configured */
	double little_tolerance_pct; /**< |X·(R+Z) / threads - 1| in % (see th_timing_evaluate) */
};

/**
 * Defaults: no operations, flat mix, no delay, no phase limits, seed 1,
 * late_ns = TH_TIMING_LATE_NS, every criterion off (TH_TIMING_CHECK_OFF).
 */
void th_timing_config_init(struct th_timing_config *cfg);

/**
 * Append an operation type with flat weight @p weight.
 * @return its index, -ENOSPC when TH_TIMING_MAX_OPS are in use, -EINVAL for a NULL name
 * or a negative weight.
 */
int th_timing_config_add_op(
	struct th_timing_config *cfg, const char *name, enum th_timing_mode mode, double weight);

/**
 * Append a percentile limit.
 * @return 0, -ENOSPC when full, -EINVAL for a bad op index or a percentile outside [0, 100].
 */
int th_timing_config_add_limit(struct th_timing_config *cfg, int op, double percentile,
	uint64_t limit_ns, enum th_timing_hist_kind hist);

/**
 * Check a configuration before a run: at least one operation, a mix whose
 * weights (or every reachable Markov row) sum to more than 0, a set delay
 * distribution when a delay is chosen, a steady phase with a time or count
 * limit. The first problem goes to @p err (may be NULL).
 * @return 0 or -EINVAL.
 */
int th_timing_config_check(const struct th_timing_config *cfg, char *err, size_t err_size);

/**
 * The configured long-run share of each operation (sums to 1): normalised
 * weights for a flat mix, the stationary distribution of the matrix for a
 * Markov mix (power iteration from markov_first).
 * @return 0, or -EINVAL when the configuration does not check.
 */
int th_timing_mix_shares(const struct th_timing_config *cfg, double shares[TH_TIMING_MAX_OPS]);

/* ------------------------------------------------------------------------ */
/** @name Statistics (per driver, mergeable) */

struct th_timing_op_stats {
	uint64_t count;          /**< steady-state operations that succeeded */
	uint64_t errors;         /**< steady-state operations that failed (not in histograms) */
	uint64_t late;           /**< of count: started more than late_ns after intended */
	uint64_t outside;        /**< operations in ramp-up or ramp-down (not in histograms) */
	struct th_hist service;  /**< end - actual start - paused */
	struct th_hist response; /**< end - intended start - paused */
};

struct th_timing_stats {
	uint32_t threads;         /**< drivers merged in (1 for one driver) */
	uint32_t op_count;        /**< operation types */
	uint64_t steady_begin_ns; /**< earliest steady-state start (UINT64_MAX: none) */
	uint64_t steady_end_ns;   /**< latest steady-state end */
	uint64_t delay_count;     /**< achieved delays measured in steady state */
	double delay_sum_ns;      /**< their sum: start-to-start (cycle) or
				       end-to-start (think) */
	struct th_timing_op_stats ops[TH_TIMING_MAX_OPS]; /**< per operation type */
};

/** An empty statistics object for merging (about 2 MB). NULL and errno=ENOMEM on failure. */
struct th_timing_stats *th_timing_stats_create(void);
void th_timing_stats_free(struct th_timing_stats *s);

/** Empty @p s (threads = 0). */
void th_timing_stats_reset(struct th_timing_stats *s);

/** dst += src: counts, histograms, steady window union, threads add up. */
void th_timing_stats_merge(struct th_timing_stats *dst, const struct th_timing_stats *src);

/** Steady-state throughput of all threads together, ops per second (0 if no window). */
double th_timing_stats_throughput(const struct th_timing_stats *s);

/* ------------------------------------------------------------------------ */
/** @name Driver (one per thread) */

struct th_timing_driver;

/** Callback that performs an AUTO operation's critical section: 0 or -errno. */
typedef int (*th_timing_section_fn)(void *arg);

/** What happened to one operation, from th_timing_op_end(). */
struct th_timing_op_info {
	uint32_t op;                /**< operation index */
	uint64_t seq;               /**< 0-based operation number in this driver */
	enum th_timing_phase phase; /**< phase of the intended start */
	bool is_ok;                 /**< the driver reported success */
	bool is_counted;            /**< entered the histograms (steady and ok) */
	uint64_t intended_ns;       /**< when it should have started */
	uint64_t start_ns;          /**< first critical section began */
	uint64_t end_ns;            /**< last critical section ended */
	uint64_t paused_ns;         /**< excluded time between critical sections */
	uint64_t service_ns;        /**< end - start - paused */
	uint64_t response_ns;       /**< end - intended - paused */
};

/**
 * A driver for one thread. @p cfg and @p clock must outlive it. Its PRNG is
 * seeded with cfg->seed + @p thread_id.
 * @return the driver, or NULL with errno EINVAL (bad configuration) or ENOMEM.
 */
struct th_timing_driver *th_timing_driver_create(
	const struct th_timing_config *cfg, struct th_timing_clock *clock, uint32_t thread_id);

void th_timing_driver_free(struct th_timing_driver *d);

/**
 * Start the run at @p t0_ns (0: now): ramp-up begins, and with cycle time
 * the first intended start is t0. Give every thread the same t0 so their
 * phases line up.
 * @return 0, or -EALREADY when already started.
 */
int th_timing_driver_start(struct th_timing_driver *d, uint64_t t0_ns);

/**
 * True while the next operation would still fall in ramp-up, steady state or
 * ramp-down (by its due time or count); false before start and after.
 */
bool th_timing_driver_is_running(struct th_timing_driver *d);

/**
 * The phase the next operation will belong to: by when it is due (its
 * intended start; the clock without a delay) and the counts so far.
 */
enum th_timing_phase th_timing_driver_phase(struct th_timing_driver *d);

/**
 * Begin the next operation, chosen by the mix, and compute its intended
 * start. Call it right after the previous operation ended: preparation runs
 * while the think or cycle time passes.
 * @return the operation index, -EINPROGRESS when an operation is still open,
 * -ENOTCONN before th_timing_driver_start().
 */
int th_timing_op_begin(struct th_timing_driver *d);

/**
 * Same, for a chosen operation @p op (trace replay, a single-op probe).
 * @p intended_ns other than TH_TIMING_SCHEDULE overrides the schedule (a
 * replayed trace's own timestamps); the cycle schedule then continues from it.
 * @return @p op, -EINVAL for an index out of range, or as th_timing_op_begin().
 */
int th_timing_op_begin_as(struct th_timing_driver *d, uint32_t op, uint64_t intended_ns);

/**
 * MANUAL timing. Called right before and right after each critical section;
 * the library tells which. The first call of an operation sleeps until its
 * intended start and stamps the start; the next stamps the end of the
 * section; a call after th_timing_pause_time() resumes the clock. A call
 * after an end without a pause opens another section and the gap counts.
 * @return 0, -EPERM for an AUTO operation, -ENOENT when no operation is open.
 */
int th_timing_record_time(struct th_timing_driver *d);

/**
 * MANUAL timing: stop the clock until the next th_timing_record_time(), so
 * client work between two critical sections is excluded. Called after a
 * section's closing th_timing_record_time() the pause starts at that end;
 * called inside a section it ends the section and pauses at once.
 * @return 0, -EPERM for an AUTO operation, -ENOENT when no operation is
 * open, -EINVAL before the first critical section.
 */
int th_timing_pause_time(struct th_timing_driver *d);

/**
 * AUTO timing: wait for the intended start (first call of an operation),
 * stamp, run @p fn(@p arg) as the critical section, stamp. Calling it again
 * in the same operation adds another critical section; the time in between
 * is paused automatically. A negative return from @p fn marks the operation
 * failed (th_timing_op_end() still decides ok/failed with its own flag and
 * failed wins).
 * @return what @p fn returned, or -EPERM for a MANUAL operation, -ENOENT when
 * no operation is open.
 */
int th_timing_op_run(struct th_timing_driver *d, th_timing_section_fn fn, void *arg);

/**
 * End the open operation and account it: steady-state and @p is_ok (and no
 * failed AUTO section) go to the histograms, failures to errors, others to
 * outside. A section still open is closed now. @p info (may be NULL)
 * receives the operation's times, for drivers that print every sample.
 * @return 0, -ENOENT when no operation is open, -EINVAL when no critical
 * section was ever opened (the operation is dropped, counted as an error).
 */
int th_timing_op_end(struct th_timing_driver *d, bool is_ok, struct th_timing_op_info *info);

/** This driver's statistics so far (merge them into a total after the run). */
const struct th_timing_stats *th_timing_driver_stats(const struct th_timing_driver *d);

/* ------------------------------------------------------------------------ */
/** @name Pass/fail criteria and summaries */

#define TH_TIMING_CHECK_KINDS(X)                                                                   \
	X(PERCENTILE, "percentile")                                                                \
	X(MIX, "mix")                                                                              \
	X(CYCLE, "cycle")                                                                          \
	X(LITTLE, "little")

enum th_timing_check_kind {
#define X(e, s) TH_TIMING_CHECK_##e,
	TH_TIMING_CHECK_KINDS(X)
#undef X
		TH_TIMING_CHECK_KIND_COUNT
};

const char *th_timing_check_kind_name(enum th_timing_check_kind kind);

/** One criterion's outcome. */
struct th_timing_check {
	enum th_timing_check_kind kind; /**< what was checked */
	int op;                         /**< operation, or -1 for the whole run */
	double measured;                /**< percentile: ns; mix: observed %; cycle: achieved mean
					     delay ns; little: X·(R+Z) */
	double target;                  /**< percentile: limit ns; mix: configured %; cycle:
					     configured mean ns; little: threads */
	double tolerance;               /**< percentile: the percentile; others: tolerance % */
	bool is_passed;                 /**< within the limit */
};

struct th_timing_verdict {
	bool is_passed; /**< every check passed (true with no checks) */
	uint32_t count; /**< checks in use */
	struct th_timing_check checks[TH_TIMING_MAX_CHECKS]; /**< in order: limits, mix, cycle,
								 little */
};

/**
 * Apply the configured criteria to (merged) statistics:
 * - percentile: p(percentile) of the histogram <= limit_ns (an operation with
 *   no samples fails: nothing proves the limit held);
 * - mix: each operation's share of steady-state operations within
 *   ±mix_tolerance_pct percentage points of th_timing_mix_shares();
 * - cycle: achieved mean delay (start-to-start for cycle time, previous end
 *   to start for think time) within ±cycle_tolerance_pct % of the configured
 *   mean (skipped without a delay);
 * - little: Little's law L = X·W with L = threads (each thread always holds
 *   one operation, in flight or thinking), X = steady throughput, and
 *   W = R + Z: mean response time plus mean think time (think), or the
 *   configured mean cycle time in place of R + Z (cycle). A miss means the
 *   driver spent time neither measured nor scheduled (slow preparation or
 *   validation, a saturated client) or fell behind its cycle schedule.
 * @return 0, -EINVAL when cfg and stats disagree on op_count.
 */
int th_timing_evaluate(const struct th_timing_config *cfg, const struct th_timing_stats *s,
	struct th_timing_verdict *v);

/**
 * The run summary as one JSON object. Keys (times in ns):
 * "passed" (bool), "threads", "throughput_ops_s", "steady_ns",
 * "delay": {"kind", "dist", "mean_ns", "min_ns", "max_ns", "achieved_mean_ns"},
 * "ops": [{"name", "count", "errors", "late", "outside", "share_pct",
 *          "service": H, "response": H}],
 * "checks": [{"kind", "op" (name or null), "measured", "target", "tolerance", "passed"}],
 * with H = {"count", "min", "mean", "stddev", "max", "p50", "p90", "p99", "p99_9"}.
 * @p v may be NULL (then "passed" is null and "checks" empty).
 * @return 0, or -EIO when writing failed.
 */
int th_timing_summary_json(FILE *out, const struct th_timing_config *cfg,
	const struct th_timing_stats *s, const struct th_timing_verdict *v);

/** The same summary as a human-readable table (microseconds). @return 0 or -EIO. */
int th_timing_summary_text(FILE *out, const struct th_timing_config *cfg,
	const struct th_timing_stats *s, const struct th_timing_verdict *v);

#endif /* TH_TIMING_H */
