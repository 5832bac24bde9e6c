/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Walk statistics of the simulated subsystem profiles: how well the annealing
 * energy leads to each documented anomaly. Two measures per anomaly, both
 * with greedy walks (a move is kept when th_search_energy_delta() says it is
 * downhill; diagnostic counters floored at 5% of the largest value seen, as
 * the search does), one random feature mutated per step:
 *
 *   back: from the trigger with one (then two) of its conditions moved off by
 *         a mutation, the share of walks that show the anomaly again within
 *         a walk's length. A perfect energy brings nearly all back.
 *   find: from random healthy points, experiments per find of this one;
 *         compare 1 / p of sim_stats for random search.
 *   ideal: the same walks judged by an oracle instead of the energy: a move
 *         is kept when it leaves no more of this anomaly's conditions unmet.
 *         No counter-based energy leads better, so this is what the move set
 *         (one feature per step) costs at best.
 *
 * Both skip points that any other documented anomaly's conditions cover, as a
 * search that knows those anomalies' MFS would: without that most walks end
 * in a neighbouring anomaly (one mutation reaches dir=bidi or loopback).
 *
 * A report, not a test: it never fails on the numbers.
 *
 * usage: walk_stats [--steps N] [walks] [profile.ini ...]
 *        (default 100 experiments per walk, 100 walks, F and H)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_rng.h"
#include "th_search.h"
#include "report.h"
#include "th_sim.h"

#define STEPS_DEFAULT 100
/* Random draws for one healthy start point no other anomaly covers. */
#define DRAWS_MAX 10000

struct walker {
	struct th_sim *s;
	struct th_backend b;
	struct th_monitor_cfg mon;
	struct th_rng rng;
	double diag_max[TH_CTR__COUNT];
	unsigned long exps;
	unsigned steps; /* experiments per walk at most */
};

/* One experiment; false when the point cannot run. */
static bool
run(struct walker *w, const struct th_wl *wl, struct th_sample *m, struct th_verdict *v)
{
	char err[256];

	if (th_search_run_one(&w->b, &w->mon, wl, m, v, err, sizeof(err)) != 0)
		return false;
	w->exps++;
	th_search_diag_track(w->diag_max, m);
	return true;
}

/* How many of @p m's conditions @p wl fails. */
static unsigned
unmet(const struct th_mfs *m, const struct th_wl *wl)
{
	return (unsigned)__builtin_popcount(th_mfs_failing(m, wl));
}

static bool
shows(const struct th_sim_known *k, const struct th_wl *wl, const struct th_verdict *v)
{
	return th_mfs_covers(&k->mfs, wl) && th_verdict_has(v, k->mfs.symptom);
}

/* Whether a documented anomaly other than @p target covers @p wl. */
static bool
skipped(const struct walker *w, unsigned target, const struct th_wl *wl)
{
	unsigned i;

	for (i = 0; i < th_sim_known_count(w->s); i++)
		if (i != target && th_mfs_covers(&th_sim_known_get(w->s, i)->mfs, wl))
			return true;
	return false;
}

/*
 * Greedy walk from @p wl (measured as @p m, @p v) for w->steps experiments at
 * most; true when it shows anomaly @p target. Points another documented
 * anomaly covers are not run. @p is_ideal: the oracle judges the moves.
 */
static bool
walk(struct walker *w, unsigned target, struct th_wl wl, struct th_sample m, struct th_verdict v,
	bool is_ideal)
{
	const struct th_sim_known *k = th_sim_known_get(w->s, target);
	unsigned long start = w->exps;

	while (w->exps - start < w->steps) {
		enum th_feat f = (enum th_feat)th_rng_below(&w->rng, TH_F__COUNT);
		struct th_wl next = wl;
		struct th_sample m2;
		struct th_verdict v2;

		if (th_wl_mutate(&next, f, w->b.limits, &w->rng) != 0 || skipped(w, target, &next))
			continue;
		if (!run(w, &next, &m2, &v2))
			continue;
		if (shows(k, &next, &v2))
			return true;
		if (th_verdict_is_anomalous(&v2))
			return false; /* another anomaly: a search restarts here */
		if (is_ideal ? unmet(&k->mfs, &next) <= unmet(&k->mfs, &wl)
			     : th_search_energy_delta(
				       &m, &v, &m2, &v2, w->diag_max, TH_SEARCH_DIAG_FLOOR) < 0) {
			wl = next;
			m = m2;
			v = v2;
		}
	}
	return false;
}

/* Share of walks back to @p target from its trigger with @p off conditions moved off. */
static double
back(struct walker *w, unsigned target, unsigned off, unsigned walks)
{
	const struct th_sim_known *k = th_sim_known_get(w->s, target);
	unsigned i, ok = 0, tries;

	for (i = 0; i < walks; i++) {
		struct th_wl wl = k->trigger;
		struct th_sample m;
		struct th_verdict v;
		unsigned moved = 0;

		for (tries = 0; tries < 100 && moved < off; tries++) {
			enum th_feat f = (enum th_feat)th_rng_below(&w->rng, TH_F__COUNT);
			struct th_wl next = wl;

			if ((k->mfs.feats & (1u << f)) &&
				th_wl_mutate(&next, f, w->b.limits, &w->rng) == 0) {
				wl = next;
				moved++;
			}
		}
		if (!run(w, &wl, &m, &v))
			continue;
		if (shows(k, &wl, &v) || walk(w, target, wl, m, v, false))
			ok++;
	}
	return (double)ok / walks;
}

/* Experiments per find of @p target from random healthy points (0: none found). */
static double
find(struct walker *w, unsigned target, unsigned walks, bool is_ideal)
{
	unsigned long start = w->exps;
	unsigned i, d, found = 0;

	for (i = 0; i < walks; i++) {
		struct th_wl wl;
		struct th_sample m;
		struct th_verdict v;

		for (d = 0; d < DRAWS_MAX; d++) {
			th_wl_random(&wl, w->b.limits, &w->rng);
			if (!skipped(w, target, &wl) && run(w, &wl, &m, &v) &&
				!th_verdict_is_anomalous(&v))
				break;
		}
		if (d == DRAWS_MAX)
			break; /* a profile that is anomalous almost everywhere */
		found += walk(w, target, wl, m, v, is_ideal);
	}
	return found ? (double)(w->exps - start) / found : 0;
}

static void
print_cost(double exps, int width)
{
	if (exps > 0)
		printf("%*.0f", width, exps);
	else
		printf("%*s", width, "none");
}

static int
stats(const char *path, unsigned walks, unsigned steps)
{
	struct walker w;
	char err[512];
	unsigned k;

	memset(&w, 0, sizeof(w));
	w.s = th_sim_load(path, 1, err, sizeof(err));
	if (w.s == NULL) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	th_sim_backend(w.s, &w.b);
	th_monitor_cfg_default(&w.mon);
	th_rng_seed(&w.rng, 4242);
	w.steps = steps;
	printf("profile %s: %u greedy walks of at most %u experiments per measure\n",
		th_sim_name(w.s), walks, steps);
	printf("  %-6s %7s %7s %14s %7s\n", "", "back-1", "back-2", "find (exp/hit)", "ideal");
	for (k = 0; k < th_sim_known_count(w.s); k++) {
		double b1 = back(&w, k, 1, walks), b2 = back(&w, k, 2, walks);
		double f = find(&w, k, walks, false), fi = find(&w, k, walks, true);

		printf("  %-6s %6.0f%% %6.0f%% ", th_sim_known_get(w.s, k)->id, 100 * b1, 100 * b2);
		print_cost(f, 14);
		print_cost(fi, 8);
		printf("\n");
	}
	th_sim_free(w.s);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned walks = 100, steps = STEPS_DEFAULT;
	const char *const *paths;
	int i = 1, n, rc = 0;

	if (argc > 2 && strcmp(argv[1], "--steps") == 0) {
		steps = (unsigned)strtoul(argv[2], NULL, 10);
		i = 3;
	}
	if (i < argc)
		walks = (unsigned)strtoul(argv[i++], NULL, 10);
	if (walks == 0)
		walks = 1;
	if (steps == 0)
		steps = 1;
	paths = report_profiles(argc, argv, i, &n);
	for (i = 0; i < n; i++)
		rc |= stats(paths[i], walks, steps);
	return rc ? 1 : 0;
}
