/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_PROBE_H
#define TH_PROBE_H

/**
 * @file
 * Disk latency probe: reads (or, when asked, writes) one block at a time at
 * random aligned offsets of a block device, a file, or a temporary file in a
 * directory, and times only the system call (pread/pwrite, or io_uring
 * submit-to-completion). Offset choice, rate pacing, cache dropping and
 * sample output all happen outside the timed section, so the overhead per
 * sample is two clock reads.
 *
 * Two latencies per sample (Faban's distinction): service time, from the
 * actual start of the I/O, and response time, from its intended start on the
 * cycle-time schedule (--rate). When the probe falls behind, the lateness
 * shows in response time and not in service time.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "th_hist.h"
#include "th_timing.h"

/** What TARGET turned out to be. X-macro: enum value, name. */
#define TH_PROBE_KIND_LIST(X)                                                                      \
	X(TH_PROBE_KIND_NONE, "none")                                                              \
	X(TH_PROBE_KIND_BLOCK, "block-device")                                                     \
	X(TH_PROBE_KIND_FILE, "file")                                                              \
	X(TH_PROBE_KIND_TEMP, "temporary-file")

enum th_probe_kind {
#define TH_PROBE_X(e, name) e,
	TH_PROBE_KIND_LIST(TH_PROBE_X)
#undef TH_PROBE_X
};

/** How I/O is issued. */
#define TH_PROBE_ENGINE_LIST(X)                                                                    \
	X(TH_PROBE_ENGINE_PSYNC, "psync")                                                          \
	X(TH_PROBE_ENGINE_URING, "io_uring")

enum th_probe_engine {
#define TH_PROBE_X(e, name) e,
	TH_PROBE_ENGINE_LIST(TH_PROBE_X)
#undef TH_PROBE_X
};

/** A sample's mark against the running average of the samples before it. */
enum th_probe_flag {
	TH_PROBE_FLAG_NONE = 0, /**< within [avg * low, avg * high] */
	TH_PROBE_FLAG_HIGH,     /**< above avg * flag_high */
	TH_PROBE_FLAG_LOW,      /**< below avg * flag_low */
};

/** One measured I/O, handed to th_probe_config.on_sample after it completed. */
struct th_probe_sample {
	uint64_t index;          /**< 0-based, warm-up samples first */
	uint64_t offset;         /**< byte offset in the target */
	uint64_t start_ns;       /**< actual start, ns since the probe started */
	uint64_t service_ns;     /**< completion - actual start: the critical section */
	uint64_t response_ns;    /**< completion - intended start (== service without --rate) */
	bool is_warmup;          /**< discarded from the statistics */
	enum th_probe_flag flag; /**< far above or below the running average */
};

/** Per-sample callback, called outside the timed section. */
typedef void (*th_probe_sample_fn)(void *arg, const struct th_probe_sample *s);

/** What to probe and how. th_probe_config_init() fills the defaults. */
struct th_probe_config {
	const char *target;            /**< block device, file or directory */
	uint64_t temp_size;            /**< size of the temporary file for a directory target */
	uint64_t offset;               /**< start of the probed range, bytes */
	uint64_t length;               /**< length of the range; 0: to the end of the target */
	uint32_t block_size;           /**< bytes per I/O (default 4096) */
	uint32_t iodepth;              /**< I/Os in flight; > 1 needs io_uring (default 1) */
	enum th_probe_engine engine;   /**< psync (default) or io_uring */
	bool is_buffered;              /**< no O_DIRECT; drop cache before a read, sync a write */
	bool is_write;                 /**< write instead of read (the explicit opt-in) */
	uint64_t count;                /**< measured samples; 0: only --duration limits */
	uint64_t duration_ns;          /**< stop after this long; 0: only count limits */
	uint64_t warmup;               /**< samples before the measured ones, discarded */
	uint64_t cycle_ns;             /**< intended time between starts; 0: back to back */
	double flag_high;              /**< flag a sample above running avg * this (0: off) */
	double flag_low;               /**< flag a sample below running avg * this (0: off) */
	uint64_t flag_after;           /**< measured samples needed before flagging starts */
	uint64_t seed;                 /**< offset PRNG seed */
	th_probe_sample_fn on_sample;  /**< optional per-sample callback */
	void *sample_arg;              /**< its argument */
	struct th_timing_clock *clock; /**< NULL: CLOCK_MONOTONIC (tests pass a fake one) */
	const volatile int *stop;      /**< optional: stop early when *stop != 0 (SIGINT) */
};

/** What a run measured. */
struct th_probe_result {
	enum th_probe_kind kind;     /**< what the target was */
	enum th_probe_engine engine; /**< engine used */
	bool is_direct;              /**< O_DIRECT was in effect */
	const char *memory_fs;       /**< "tmpfs" or "ramfs": target in memory; else NULL */
	bool is_buffered;            /**< buffered: cache drop before each read, write synced */
	bool is_write;               /**< the probe wrote */
	uint64_t target_size;        /**< bytes in the target */
	uint64_t range_offset;       /**< probed range start */
	uint64_t range_length;       /**< probed range length */
	uint32_t block_size;         /**< bytes per I/O */
	uint32_t iodepth;            /**< I/Os in flight */
	uint32_t dio_align;          /**< the target's direct-I/O offset alignment, bytes */
	uint64_t cycle_ns;           /**< cycle time asked for (0: none) */
	uint64_t seed;               /**< offset PRNG seed: the same seed repeats the offsets */
	uint64_t warmup;             /**< warm-up samples taken and discarded */
	uint64_t samples;            /**< measured samples */
	uint64_t flagged_high;       /**< measured samples flagged high */
	uint64_t flagged_low;        /**< measured samples flagged low */
	uint64_t late;           /**< measured samples that started after their intended start */
	uint64_t wall_ns;        /**< wall time of the measured phase */
	bool is_stopped;         /**< stopped early through config.stop */
	struct th_hist service;  /**< service times, ns */
	struct th_hist response; /**< response times (from intended start), ns */
	char error[320];         /**< what went wrong and what to do, when a call fails */
};

/** Fill @p c with the defaults (4 KiB blocks, depth 1, O_DIRECT, 1000 samples). */
void th_probe_config_init(struct th_probe_config *c);

/**
 * Run a probe. Fills @p r (r->error says what went wrong, where, and what
 * to do, when the return value is negative). Nothing is ever written unless
 * c->is_write is set, and then only inside the range.
 *
 * Timing goes through the timing library (th_timing.h): one MANUAL
 * operation per sample, cycle time = c->cycle_ns (fixed), ramp-up =
 * c->warmup samples, steady state = c->count samples and/or c->duration_ns.
 *
 * @return 0, or
 *   -ENOENT target missing; -EINVAL bad parameter (unaligned block size,
 *   range outside the target, block larger than the range, zero-sized
 *   target, a hole in a file's range, O_DIRECT refused: the message names
 *   --buffered); -EINTR stopped through c->stop before a sample was
 *   measured (filling a temporary file, or in the warm-up); -EBUSY a write
 *   to a mounted, swapped-on or held device; -EROFS a write to a read-only
 *   device or filesystem; -ENOSYS, -EPERM io_uring
 *   unavailable; -EIO and other errno values from the I/O itself; -ENOMEM.
 */
int th_probe_run(const struct th_probe_config *c, struct th_probe_result *r);

/**
 * Whether @p target can be probed, without opening it: it exists, is a block
 * device, a file that is not empty, or a directory, and may be read (written
 * too with @p is_write; a directory: a temporary file made in it). For
 * callers that check before they start (a capture's config, a command line
 * whose outputs depend on it). *@p kind says what it is (none on -ENOENT).
 *
 * @return 0, or -ENOENT missing, -EINVAL not a device, file or directory, or
 *   an empty file, -EACCES or another errno from stat()/access(), with
 *   @p why saying which.
 */
int th_probe_check_target(
	const char *target, bool is_write, enum th_probe_kind *kind, char *why, size_t why_size);

/** IOPS from latency (1 / mean service time) and from wall time; 0 when unknown. */
double th_probe_iops_latency(const struct th_probe_result *r);
double th_probe_iops_wall(const struct th_probe_result *r);

/**
 * Text summary: target, mode (O_DIRECT or buffered with cache drop), counts,
 * min/p50/p90/p99/p99.9/max/mean/stddev in µs for service (and response
 * when a cycle time was set), IOPS, flags, and a histogram of @p hist_rows.
 */
void th_probe_print_summary(FILE *out, const struct th_probe_result *r, unsigned int hist_rows);

/** The same as one JSON object. @return 0 or -errno from the stream. */
int th_probe_write_json(FILE *out, const struct th_probe_result *r);

const char *th_probe_kind_name(enum th_probe_kind k);
const char *th_probe_engine_name(enum th_probe_engine e);

/**
 * Scheduled probes for the appliance's control lcore: every interval_ns,
 * run the configured probe (its duration_ns and cycle_ns say for how long
 * and at what rate), and raise an alarm when the service-time percentile
 * passes the threshold.
 */
struct th_probe_schedule {
	struct th_probe_config config; /**< the probe to run each time */
	uint64_t interval_ns;          /**< time between probe starts */
	double percentile;             /**< which percentile to watch, 0..100 */
	uint64_t threshold_ns;         /**< alarm when it is above this */
	uint64_t next_ns;              /**< when the next probe is due */
	uint64_t runs;                 /**< probes run */
	uint64_t alarms;               /**< probes that raised an alarm */
	uint64_t failures;             /**< probes that failed to run */
	uint64_t skipped;              /**< due times missed because a poll came late */
	uint64_t last_value_ns;        /**< the watched percentile of the last probe */
};

/**
 * Set up @p s: the first probe is due at @p now_ns.
 * @return 0, or -EINVAL (interval 0, percentile outside 0..100).
 */
int th_probe_schedule_init(struct th_probe_schedule *s, const struct th_probe_config *c,
	uint64_t interval_ns, double percentile, uint64_t threshold_ns, uint64_t now_ns);

/**
 * Call often (each housekeeping pass). When a probe is due at @p now_ns, run
 * it into @p r and set *@p is_alarm.
 * @return 0 nothing due, 1 a probe ran, or the negative errno of a failed
 * probe (r->error says why; the schedule still moves on).
 */
int th_probe_schedule_poll(
	struct th_probe_schedule *s, uint64_t now_ns, struct th_probe_result *r, bool *is_alarm);

/** True when the watched percentile of @p r passes the threshold. */
bool th_probe_is_alarm(const struct th_probe_result *r, double percentile, uint64_t threshold_ns);

#endif /* TH_PROBE_H */
