/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Simulated annealing as Collie's Algorithm 1: from a random point, mutate
 * one feature per step, skip points an MFS already explains, accept a move
 * that lowers the energy and a worse one with probability exp(-dE / T), and
 * after each anomaly restart at a random point. The temperature is relaxed
 * (high start, slow decay, a floor) because the goal is many distinct
 * anomalies, not one global optimum: escaping a basin matters more than
 * settling in it. Restart points have one or two request sizes most of the
 * time (th_wl_random_shaped()): many anomalies need every request small,
 * large or in a band, which a walk from sixteen random sizes rarely reaches.
 */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "search_private.h"

/* Bounds of a feature's mutation weight. */
#define W_MIN 0.25
#define W_MAX 16.0

/* The current point of the walk and what it measured. */
struct walk {
	struct th_wl wl;
	struct th_sample mean;
	struct th_verdict v;
	double temp;
	unsigned stall;           /* experiments since the last restart or anomaly */
	bool is_valid;            /* wl has been measured */
	double w[TH_F__COUNT];    /* how often each feature is chosen for mutation */
};

/*
 * Which feature to mutate. Uniform choice wastes most steps on features the
 * counters do not respond to (a dozen features, a few matter for any one
 * bottleneck), so a feature whose last mutations went downhill is chosen
 * more often and one that changed nothing less, within [W_MIN, W_MAX]: every
 * feature stays reachable.
 */
static enum th_feat
pick_feature(struct th_search *s, const struct walk *w)
{
	double sum = 0, x;
	unsigned f;

	for (f = 0; f < TH_F__COUNT; f++)
		sum += w->w[f];
	x = th_rng_unit(&s->rng) * sum;
	for (f = 0; f + 1 < TH_F__COUNT; f++) {
		if (x < w->w[f])
			break;
		x -= w->w[f];
	}
	return (enum th_feat)f;
}

static void
reward(struct walk *w, enum th_feat f, double de)
{
	double x = w->w[f] * (de < 0 ? 2.0 : de > 0 ? 0.7 : 0.85);

	w->w[f] = fmin(W_MAX, fmax(W_MIN, x));
}

/* A neighbour of @cur differing in feature *@f; false when none was found. */
static bool
neighbour(struct th_search *s, const struct walk *w, struct th_wl *out, enum th_feat *f)
{
	unsigned tries;

	for (tries = 0; tries < 4 * TH_F__COUNT; tries++) {
		*f = pick_feature(s, w);
		*out = w->wl;
		if (th_wl_mutate(out, *f, s->b->limits, &s->rng) == 0)
			return true;
	}
	return false;
}

static void
restart(struct th_search *s, struct walk *w, bool is_counted)
{
	unsigned f;

	/* What mattered near the last anomaly matters less for the next one. */
	for (f = 0; f < TH_F__COUNT; f++)
		w->w[f] = sqrt(w->w[f]);
	search__random_point(s, &w->wl, true);
	w->temp = s->cfg.temp;
	w->stall = 0;
	w->is_valid = false;
	if (is_counted)
		s->st.restarts++;
}

int
search__anneal(struct th_search *s)
{
	struct th_search_exp e;
	struct walk w;
	unsigned idle = 0, f;
	int rc;

	memset(&w, 0, sizeof(w));
	for (f = 0; f < TH_F__COUNT; f++)
		w.w[f] = 1;
	restart(s, &w, false);
	while (!s->is_out_of_budget) {
		enum th_feat feat = TH_F_MEM;
		struct th_wl next;
		double de;

		if (!w.is_valid) {
			/* A restart point: measure it before walking from it. */
			next = w.wl;
		} else if (!neighbour(s, &w, &next, &feat) || !search__runnable(s, &next)) {
			/* Skips cost no testbed time, but a walk boxed in by MFS moves on. */
			if (++idle >= s->cfg.skip_max) {
				idle = 0;
				restart(s, &w, true);
			}
			continue;
		}
		idle = 0;
		rc = search__exp(s, &next, &e);
		if (rc == -ETIME)
			break;
		if (rc == -EINVAL) {
			restart(s, &w, true);
			continue;
		}
		if (rc < 0)
			return rc;
		if (e.rc < 0) {
			/* Setup failed: not a place to walk to. */
			if (!w.is_valid)
				restart(s, &w, true);
			continue;
		}
		if (th_verdict_is_anomalous(&e.v)) {
			restart(s, &w, true);
			continue;
		}
		w.stall++;
		if (!w.is_valid) {
			w.wl = next;
			w.mean = e.mean;
			w.v = e.v;
			w.is_valid = true;
			continue;
		}
		if (s->cfg.energy != NULL)
			de = s->cfg.energy(s->cfg.energy_arg, s, &w.wl, &next);
		else
			de = search__energy_delta(s, &w.mean, &w.v, &e.mean, &e.v);
		reward(&w, feat, de);
		if (de < 0 || th_rng_unit(&s->rng) < exp(-de / w.temp)) {
			w.wl = next;
			w.mean = e.mean;
			w.v = e.v;
			s->st.accepted++;
		}
		w.temp = fmax(w.temp * s->cfg.decay, s->cfg.temp_min);
		if (s->cfg.stall_steps != 0 && w.stall >= s->cfg.stall_steps)
			restart(s, &w, true);
	}
	return 0;
}
