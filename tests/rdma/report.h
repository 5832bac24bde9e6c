/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef REPORT_H
#define REPORT_H

/* What the simulator reports (sim_stats, walk_stats, search_bounds) share. */

/* The profile paths argv[first..argc-1], or the shipped F and H when none is given: *n. */
static inline const char *const *
report_profiles(int argc, char **argv, int first, int *n)
{
	static const char *const shipped[] = {
		TH_SOURCE_ROOT "/config/rdma/F.ini",
		TH_SOURCE_ROOT "/config/rdma/H.ini",
	};

	if (first < argc) {
		*n = argc - first;
		return (const char *const *)(argv + first);
	}
	*n = 2;
	return shipped;
}

#endif /* REPORT_H */
