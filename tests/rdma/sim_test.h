/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_TEST_H
#define SIM_TEST_H

/* Helpers the simulator tests share: loading a shipped profile, reading MFS conditions. */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "th_sim.h"

/* The shipped profile config/rdma/<name>.ini with noise seed @p seed; fails the test otherwise. */
static inline struct th_sim *
load_profile(const char *name, uint64_t seed)
{
	char path[512], err[512];
	struct th_sim *s;

	snprintf(path, sizeof(path), "%s/config/rdma/%s.ini", TH_SOURCE_ROOT, name);
	s = th_sim_load(path, seed, err, sizeof(err));
	if (s == NULL)
		fail_msg("%s", err);
	return s;
}

/* Whether @p m has condition @p f (TH_F__COUNT: msg_min, TH_F__COUNT + 1: msg_max). */
static inline bool
has_condition(const struct th_mfs *m, unsigned f)
{
	const struct th_range *r;

	if (f < TH_F__COUNT)
		return f != TH_F_MSG && (m->feats & (1u << f));
	if (!(m->feats & (1u << TH_F_MSG)))
		return false;
	r = f == TH_F__COUNT ? &m->msg_min : &m->msg_max;
	return r->lo != 0 || r->hi != UINT64_MAX;
}

/* Whether a documented anomaly other than @p self with symptom @p sy covers @p wl. */
static inline bool
other_covers(const struct th_sim *s, const struct th_sim_known *self, const struct th_wl *wl,
	enum th_symptom sy)
{
	unsigned i;

	for (i = 0; i < th_sim_known_count(s); i++) {
		const struct th_sim_known *k = th_sim_known_get(s, i);

		if (k != self && k->mfs.symptom == sy && th_mfs_covers(&k->mfs, wl))
			return true;
	}
	return false;
}

#endif /* SIM_TEST_H */
