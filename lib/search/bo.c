/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Bayesian optimisation, the paper's second baseline: a Gaussian process over
 * th_wl_encode()'s vector models how loud the diagnostic counters get, and
 * each step runs the candidate with the largest expected improvement. Like
 * the paper's, it is helped by MFS (covered candidates are dropped, new
 * anomalies get their MFS). The GP fits only the latest bo_window
 * experiments so a step stays O(window^3) however long the search runs; the
 * candidates are random points and one- or two-feature mutations of the best
 * points seen, which is where EI usually wants to look.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_private.h"

/* Random points measured before the GP is trusted. */
#define BO_INIT 8
/* RBF length scale in encoded units (each dimension spans [0, 1]). */
#define BO_LENGTH 0.6
/* Observation noise relative to the standardised objective's variance. */
#define BO_NOISE 1e-2
/* EI exploration margin. */
#define BO_XI 0.01

struct obs {
	double x[TH_WL_DIMS];
	double y;
	struct th_wl wl;
};

struct gp {
	unsigned n;
	double *l;     /* n x n lower Cholesky factor of K + noise I */
	double *alpha; /* (K + noise I)^-1 y */
	double *tmp;   /* n scratch */
	double best;   /* best standardised y */
};

/* The quantity BO drives up: how loud the diagnostic counters are, on a log scale. */
static double
objective(const struct th_sample *m)
{
	double y = 0;
	unsigned c, h, n = 0;

	for (c = 0; c < TH_CTR__COUNT; c++) {
		double v = 0;

		if (!th_ctr_is_diag((enum th_ctr)c))
			continue;
		for (h = 0; h < TH_HOSTS; h++)
			v += m->v[h][c];
		y += log1p(fmax(v, 0));
		n++;
	}
	return n != 0 ? y / n : 0;
}

static double
kernel(const double *a, const double *b)
{
	double d2 = 0;
	unsigned i;

	for (i = 0; i < TH_WL_DIMS; i++)
		d2 += (a[i] - b[i]) * (a[i] - b[i]);
	return exp(-d2 / (2 * BO_LENGTH * BO_LENGTH));
}

/* Fit the GP to @n observations @o (standardised); false when K is not positive definite. */
static bool
gp_fit(struct gp *g, const struct obs *o, unsigned n, double *ys)
{
	double mean = 0, var = 0, sd;
	unsigned i, j, k;

	for (i = 0; i < n; i++)
		mean += o[i].y;
	mean /= n;
	for (i = 0; i < n; i++)
		var += (o[i].y - mean) * (o[i].y - mean);
	sd = sqrt(var / n);
	if (sd < 1e-9)
		sd = 1;
	g->best = -INFINITY;
	for (i = 0; i < n; i++) {
		ys[i] = (o[i].y - mean) / sd;
		g->best = fmax(g->best, ys[i]);
	}
	g->n = n;
	for (i = 0; i < n; i++) {
		for (j = 0; j <= i; j++) {
			double sum = kernel(o[i].x, o[j].x) + (i == j ? BO_NOISE : 0);

			for (k = 0; k < j; k++)
				sum -= g->l[i * n + k] * g->l[j * n + k];
			if (i == j) {
				if (!(sum > 0))
					return false;
				g->l[i * n + i] = sqrt(sum);
			} else {
				g->l[i * n + j] = sum / g->l[j * n + j];
			}
		}
	}
	/* alpha = L^-T L^-1 y */
	for (i = 0; i < n; i++) {
		double sum = ys[i];

		for (k = 0; k < i; k++)
			sum -= g->l[i * n + k] * g->tmp[k];
		g->tmp[i] = sum / g->l[i * n + i];
	}
	for (i = n; i-- > 0;) {
		double sum = g->tmp[i];

		for (k = i + 1; k < n; k++)
			sum -= g->l[k * n + i] * g->alpha[k];
		g->alpha[i] = sum / g->l[i * n + i];
	}
	return true;
}

static double
gp_ei(struct gp *g, const struct obs *o, const double *x)
{
	double mu = 0, var = 1, sd, z;
	unsigned i, k, n = g->n;

	for (i = 0; i < n; i++) {
		double kx = kernel(o[i].x, x), sum = kx;

		mu += kx * g->alpha[i];
		for (k = 0; k < i; k++)
			sum -= g->l[i * n + k] * g->tmp[k];
		g->tmp[i] = sum / g->l[i * n + i];
		var -= g->tmp[i] * g->tmp[i];
	}
	sd = sqrt(fmax(var, 1e-12));
	z = (mu - g->best - BO_XI) / sd;
	return (mu - g->best - BO_XI) * 0.5 * erfc(-z / M_SQRT2) +
		sd * exp(-0.5 * z * z) / sqrt(2 * M_PI);
}

/* A candidate worth scoring: valid and, with MFS, not explained already. */
static bool
is_candidate(const struct th_search *s, const struct th_wl *wl)
{
	char err[8];

	return th_wl_check(wl, s->b->limits, err, sizeof(err)) == 0 &&
		!(s->use_mfs && search__covered(s, wl));
}

/* Index into @o (@n of them) of one of the best few observations. */
static unsigned
pick_good(struct th_search *s, const struct obs *o, unsigned n)
{
	unsigned i, best = th_rng_below(&s->rng, n), tries;

	/* A 3-way tournament: good parents, not always the same one. */
	for (tries = 0; tries < 2; tries++) {
		i = th_rng_below(&s->rng, n);
		if (o[i].y > o[best].y)
			best = i;
	}
	return best;
}

/* Choose the next point by EI; false when no candidate survived (caller draws randomly). */
static bool
choose(struct th_search *s, struct gp *g, const struct obs *o, unsigned n, struct th_wl *out)
{
	double best_ei = -INFINITY;
	bool is_found = false;
	unsigned c;

	for (c = 0; c < s->cfg.bo_candidates; c++) {
		struct th_wl wl;
		double x[TH_WL_DIMS], ei;

		if (c % 2 == 0) {
			th_wl_random(&wl, s->b->limits, &s->rng);
		} else {
			unsigned m, muts = 1 + th_rng_below(&s->rng, 2);

			wl = o[pick_good(s, o, n)].wl;
			for (m = 0; m < muts; m++)
				th_wl_mutate(&wl, (enum th_feat)th_rng_below(&s->rng, TH_F__COUNT),
					s->b->limits, &s->rng);
		}
		if (!is_candidate(s, &wl))
			continue;
		th_wl_encode(&wl, s->b->limits, x);
		ei = gp_ei(g, o, x);
		if (ei > best_ei) {
			best_ei = ei;
			*out = wl;
			is_found = true;
		}
	}
	return is_found;
}

int
search__bo(struct th_search *s)
{
	unsigned win = s->cfg.bo_window, count = 0, n, i;
	struct obs *ring, *o;
	struct th_search_exp e;
	struct gp g;
	double *ys;
	int rc = -ENOMEM;

	ring = calloc(win, sizeof(*ring));
	o = calloc(win, sizeof(*o));
	ys = calloc(win, sizeof(*ys));
	g.l = calloc((size_t)win * win, sizeof(*g.l));
	g.alpha = calloc(win, sizeof(*g.alpha));
	g.tmp = calloc(win, sizeof(*g.tmp));
	if (ring == NULL || o == NULL || ys == NULL || g.l == NULL || g.alpha == NULL ||
		g.tmp == NULL)
		goto out;
	rc = 0;
	while (!s->is_out_of_budget) {
		struct th_wl wl;

		n = count < win ? count : win;
		for (i = 0; i < n; i++)
			o[i] = ring[(count - n + i) % win];
		if (n < BO_INIT || !gp_fit(&g, o, n, ys) || !choose(s, &g, o, n, &wl))
			search__random_point(s, &wl, false);
		rc = search__exp(s, &wl, &e);
		if (rc == -ETIME || rc == -EINVAL) {
			rc = 0;
			continue;
		}
		if (rc < 0)
			break;
		if (e.rc < 0)
			continue;
		th_wl_encode(&wl, s->b->limits, ring[count % win].x);
		ring[count % win].y = objective(&e.mean);
		ring[count % win].wl = wl;
		count++;
	}
out:
	free(g.tmp);
	free(g.alpha);
	free(g.l);
	free(ys);
	free(o);
	free(ring);
	return rc;
}
