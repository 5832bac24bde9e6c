/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Random search, the paper's first baseline: uniformly drawn valid points,
 * helped by MFS like the others (covered points are not run, each new
 * anomaly gets its MFS), so the comparison isolates the choice of points.
 * Its shaped variant draws the points annealing restarts from: what those
 * draws find without a walk.
 */

#include <errno.h>

#include "search_private.h"

int
search__random(struct th_search *s)
{
	struct th_search_exp e;
	int rc;

	while (!s->is_out_of_budget) {
		struct th_wl wl;

		search__random_point(s, &wl, s->cfg.algo == TH_SEARCH_RANDOM_SHAPED);
		rc = search__exp(s, &wl, &e);
		if (rc == -ETIME)
			break;
		if (rc < 0 && rc != -EINVAL)
			return rc;
	}
	return 0;
}
