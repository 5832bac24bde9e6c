/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What the annealing search finds with a perfect energy. Each run goes twice
 * through the real search (MFS extraction, skipping, restarts, testbed time):
 * once with the counters' energy, once with a judge that knows the profile's
 * documented anomalies. The judge's energy of a point is how many conditions
 * of the nearest documented anomaly not yet found it misses; a move's change
 * in it is the energy change. No counter-based energy can lead better, so the
 * second column bounds what any energy does with this move set, space and
 * budget. Walk length (--stall) matters more to the judge than to the
 * counters: a perfect energy wants long walks.
 * A report, not a test: it never fails on the numbers.
 *
 * usage: search_bounds [--seeds N] [--hours H] [profile.ini ...]
 *        (default 10 seeds, 10 hours, F and H; walks of 10, 100 and 300 steps)
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_search.h"
#include "report.h"
#include "th_sim.h"

struct judge {
	const struct th_search_known *known;
	unsigned count;
};

/* Conditions of the nearest documented anomaly @p s has not found that @p wl misses. */
static unsigned
unmet(const struct judge *j, const struct th_search *s, const struct th_wl *wl)
{
	unsigned k, i, best = TH_F__COUNT + 1;

	for (k = 0; k < j->count; k++) {
		const struct th_mfs *m = j->known[k].mfs;
		bool is_found = false;
		unsigned u;

		for (i = 0; i < th_search_anomaly_count(s) && !is_found; i++) {
			const struct th_search_anomaly *a = th_search_anomaly_get(s, i);

			is_found = a->symptom == m->symptom && th_mfs_covers(m, &a->trigger);
		}
		u = (unsigned)__builtin_popcount(th_mfs_failing(m, wl));
		if (!is_found && u < best)
			best = u;
	}
	return best;
}

static double
judge_energy(void *arg, const struct th_search *s, const struct th_wl *a, const struct th_wl *b)
{
	return (double)unmet(arg, s, b) - (double)unmet(arg, s, a);
}

/* Mean and sd of documented anomalies found over @p seeds runs. */
static int
runs(struct th_sim *sim, const struct judge *j, enum th_search_algo algo, unsigned stall,
	bool use_judge, unsigned seeds, double hours, double *mean, double *sd)
{
	double sum = 0, sq = 0, *first = calloc(j->count + 1, sizeof(*first));
	unsigned seed, k;

	if (first == NULL)
		return -1;
	for (seed = 1; seed <= seeds; seed++) {
		struct th_search_cfg c;
		struct th_backend b;
		struct th_search *s;
		unsigned found = 0;

		th_sim_reset(sim, seed);
		th_sim_backend(sim, &b);
		th_search_cfg_default(&c);
		c.algo = algo;
		c.seed = seed;
		c.budget_s = hours * 3600;
		c.stall_steps = stall;
		if (use_judge) {
			c.energy = judge_energy;
			c.energy_arg = (void *)j;
		}
		s = th_search_create(&c, &b);
		if (s == NULL || th_search_run(s) < 0) {
			th_search_free(s);
			free(first);
			return -1;
		}
		th_search_score(s, j->known, j->count, first);
		for (k = 0; k < j->count; k++)
			found += first[k] >= 0;
		sum += found;
		sq += (double)found * found;
		th_search_free(s);
	}
	*mean = sum / seeds;
	*sd = sqrt(fmax(sq / seeds - *mean * *mean, 0));
	free(first);
	return 0;
}

static int
bounds(const char *path, unsigned seeds, double hours)
{
	static const unsigned stalls[] = {10, 100, 300};
	static const enum th_search_algo algos[] = {TH_SEARCH_ANNEAL, TH_SEARCH_ANNEAL_NOMFS};
	struct th_search_known *known;
	struct judge j;
	struct th_sim *sim;
	char err[512];
	unsigned i, a, t;
	int rc = 0;

	sim = th_sim_load(path, 1, err, sizeof(err));
	if (sim == NULL) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	j.count = th_sim_known_count(sim);
	known = calloc(j.count + 1, sizeof(*known));
	if (known == NULL) {
		th_sim_free(sim);
		return -1;
	}
	for (i = 0; i < j.count; i++) {
		known[i].id = th_sim_known_get(sim, i)->id;
		known[i].mfs = &th_sim_known_get(sim, i)->mfs;
	}
	j.known = known;
	printf("profile %s: %u documented anomalies, %u seeds x %.3g testbed hours\n",
		th_sim_name(sim), j.count, seeds, hours);
	printf("  %-13s %6s %17s %17s\n", "algorithm", "stall", "counters", "perfect judge");
	for (a = 0; a < sizeof(algos) / sizeof(algos[0]) && rc == 0; a++) {
		for (t = 0; t < sizeof(stalls) / sizeof(stalls[0]) && rc == 0; t++) {
			double m[2], sd[2];

			rc |= runs(
				sim, &j, algos[a], stalls[t], false, seeds, hours, &m[0], &sd[0]);
			rc |= runs(sim, &j, algos[a], stalls[t], true, seeds, hours, &m[1], &sd[1]);
			if (rc == 0)
				printf("  %-13s %6u %9.1f ± %4.1f %9.1f ± %4.1f\n",
					th_search_algo_name(algos[a]), stalls[t], m[0], sd[0], m[1],
					sd[1]);
		}
	}
	free(known);
	th_sim_free(sim);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned seeds = 10;
	double hours = 10;
	const char *const *paths;
	int i = 1, n, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "--seeds") == 0)
			seeds = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--hours") == 0)
			hours = strtod(argv[i + 1], NULL);
		else
			break;
	}
	if (seeds == 0 || !(hours > 0)) {
		fprintf(stderr, "usage: search_bounds [--seeds N] [--hours H] [profile.ini ...]\n");
		return 2;
	}
	paths = report_profiles(argc, argv, i, &n);
	for (i = 0; i < n; i++)
		rc |= bounds(paths[i], seeds, hours);
	return rc ? 1 : 0;
}
