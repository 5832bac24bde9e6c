/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SIM_H
#define TH_SIM_H

/**
 * @file
 * A simulated RDMA subsystem: two hosts, each an RNIC (link bits/s and
 * packets/s limits, processing units and pipelines, QP context / MTT / receive
 * WQE caches with LRU-like misses by working set, an RX buffer that sends PFC
 * pauses with XOFF/XON hysteresis) on PCIe (TLP, descriptor and doorbell
 * overheads, read latency, ordering) in a host topology (local and remote
 * socket DRAM, a GPU path). A mechanistic model: anomalies come out of the
 * mechanisms, not from a table of answers; where a real subsystem's anomaly
 * has no mechanism here, the profile declares a firmware quirk (predicate ->
 * effect) and says so. Profiles are INI files in config/rdma/. Noise is seeded:
 * the same seed gives the same samples.
 */

#include <stddef.h>
#include <stdint.h>

#include "th_anomaly.h"
#include "th_backend.h"
#include "th_space.h"

struct th_sim;

/**
 * Load the profile at @p path; @p seed drives the counter noise.
 * @return the subsystem, or NULL with errno set and "file:line: ..." in @p err.
 */
struct th_sim *th_sim_load(const char *path, uint64_t seed, char *err, size_t err_size);

/**
 * Same from profile text held in memory; @p name stands for the file in
 * messages (fuzzing, tests). Errors as th_sim_load(): NULL, errno EINVAL or
 * ENOMEM, "name:line: ..." in @p err.
 */
struct th_sim *th_sim_parse(
	const char *text, const char *name, uint64_t seed, char *err, size_t err_size);

void th_sim_free(struct th_sim *s);

/**
 * Start over as a freshly loaded profile with @p seed would: the noise
 * restarts and no earlier setup is kept. Runs of an evaluation reuse one
 * loaded profile this way.
 */
void th_sim_reset(struct th_sim *s, uint64_t seed);

/** The backend table that runs workloads on @p s (valid while @p s lives). */
void th_sim_backend(struct th_sim *s, struct th_backend *b);

/** The profile's name ("F"). */
const char *th_sim_name(const struct th_sim *s);

/**
 * The anomalies the profile documents (the paper's Table 2 rows for it):
 * their conditions as an MFS and a workload that triggers each. Tests and the
 * evaluation score a search against them; the model never reads them.
 */
struct th_sim_known {
	char id[16];          /**< "F#3" */
	struct th_mfs mfs;    /**< the paper's conditions */
	struct th_wl trigger; /**< a point inside them that shows the symptom */
	const char *note;     /**< mechanism, or "quirk: ..." */
};

unsigned th_sim_known_count(const struct th_sim *s);
const struct th_sim_known *th_sim_known_get(const struct th_sim *s, unsigned i);
/** The documented anomaly named @p id ("F#3"), or NULL. */
const struct th_sim_known *th_sim_known_find(const struct th_sim *s, const char *id);

#endif /* TH_SIM_H */
