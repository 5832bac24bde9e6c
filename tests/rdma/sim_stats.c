/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Random-point statistics of the simulated subsystem profiles: what a blind
 * random search meets. For each profile: the share of uniformly random valid
 * points (th_wl_random) that are healthy, each documented anomaly's p (share
 * of points its conditions cover AND that show its symptom), the share of
 * anomalous points outside every documented anomaly, and the time per run.
 * Then "inside": of random points inside each documented anomaly's
 * conditions (th_mfs_draw()), the share that shows it. Table 2's conditions
 * are what the paper found necessary; in a mechanistic model a point inside
 * them can still be too light a load to trip the mechanism (F#13's loop
 * traffic needs bandwidth), so this is the model's reading of "sufficient".
 * A report, not a test: it never fails on the numbers.
 *
 * usage: sim_stats [points] [profile.ini ...]  (default 100000, F and H)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "th_rng.h"
#include "report.h"
#include "th_sim.h"

#define SAMPLES 3
/* Points drawn inside each documented anomaly's conditions. */
#define INSIDE_POINTS 2000

static void
judge(const struct th_backend *b, const struct th_wl *wl, struct th_verdict *v)
{
	struct th_monitor_cfg c;
	struct th_expect e;
	struct th_sample smp[SAMPLES];
	char err[256];

	th_monitor_cfg_default(&c);
	memset(v, 0, sizeof(*v));
	if (b->run(b->ctx, wl, SAMPLES, smp, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	b->expect(b->ctx, wl, &e);
	th_monitor_judge(&c, &e, smp, SAMPLES, v);
}

/* Percent of random points inside @p m that show its symptom. */
static double
inside(const struct th_backend *b, const struct th_mfs *m, struct th_rng *rng)
{
	unsigned i, n = 0, shown = 0;

	for (i = 0; i < INSIDE_POINTS; i++) {
		struct th_verdict v;
		struct th_wl wl;

		if (th_mfs_draw(m, b->limits, rng, &wl) != 0)
			continue;
		judge(b, &wl, &v);
		n++;
		shown += th_verdict_has(&v, (enum th_symptom)m->symptom);
	}
	return n != 0 ? 100.0 * shown / n : 0;
}

static int
stats(const char *path, unsigned points)
{
	char err[512];
	struct th_sim *s = th_sim_load(path, 1, err, sizeof(err));
	struct th_backend b;
	struct th_rng rng;
	unsigned long healthy = 0, pause = 0, low = 0, outside = 0;
	unsigned long hit[64] = { 0 }, cov[64] = { 0 };
	unsigned nk, i, k;
	struct timespec t0, t1;
	double us;

	if (s == NULL) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	th_sim_backend(s, &b);
	nk = th_sim_known_count(s);
	if (nk > 64)
		nk = 64;
	th_rng_seed(&rng, 12345);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < points; i++) {
		struct th_wl wl;
		struct th_verdict v;
		int known_hit = 0;

		th_wl_random(&wl, b.limits, &rng);
		judge(&b, &wl, &v);
		if (!th_verdict_is_anomalous(&v)) {
			healthy++;
			continue;
		}
		pause += v.pause;
		low += v.low_tput;
		for (k = 0; k < nk; k++) {
			const struct th_sim_known *kn = th_sim_known_get(s, k);

			if (!th_mfs_covers(&kn->mfs, &wl))
				continue;
			cov[k]++;
			if (th_verdict_has(&v, kn->mfs.symptom)) {
				hit[k]++;
				known_hit = 1;
			}
		}
		if (!known_hit) {
			/* TH_SIM_STATS_OUTSIDE=n lists the first n such points: where
			 * a mechanism reaches past the documented conditions. */
			const char *env = getenv("TH_SIM_STATS_OUTSIDE");
			char text[512];

			if (env != NULL && outside < strtoul(env, NULL, 10)) {
				th_wl_format(&wl, text, sizeof(text));
				printf("  outside: %s%s\n", v.pause ? "pause " : "low_tput ", text);
			}
			outside++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 /
	     points;
	printf("profile %s: %u random points, %.1f us per run (%d samples)\n", th_sim_name(s),
		points, us, SAMPLES);
	printf("  healthy %.1f%%  pause %.1f%%  low_tput %.1f%%  anomalous outside every "
	       "known %.2f%%\n",
		100.0 * healthy / points, 100.0 * pause / points, 100.0 * low / points,
		100.0 * outside / points);
	for (k = 0; k < nk; k++) {
		const struct th_sim_known *kn = th_sim_known_get(s, k);
		double p = 100.0 * hit[k] / points;
		char text[256];

		th_mfs_format(&kn->mfs, text, sizeof(text));
		printf("  %-6s p=%7.3f%%  %-6s  inside %5.1f%%  %s\n", kn->id, p,
			p >= 0.5 ? "common" : p <= 0.03 ? "rare" : "mid",
			inside(&b, &kn->mfs, &rng), text);
	}
	th_sim_free(s);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned points = 100000;
	const char *const *paths;
	int i, n, rc = 0;

	if (argc > 1)
		points = (unsigned)strtoul(argv[1], NULL, 10);
	if (points == 0)
		points = 1;
	paths = report_profiles(argc, argv, 2, &n);
	for (i = 0; i < n; i++)
		rc |= stats(paths[i], points);
	return rc ? 1 : 0;
}
