/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The anomaly monitor (Collie section 5.1): a workload is anomalous when its
 * RNIC holds the peer paused for at least 0.1% of the time, or when a sending
 * host falls at least 20% short of both its bits/s and its packets/s limit
 * (short of only one is the other limit at work, not an anomaly).
 */

#include "th_anomaly.h"

#include <string.h>

/*
 * Averages of per-second counters are sums divided by n: the relative slack
 * absorbs their rounding so that a value exactly at a threshold is judged at
 * the threshold, while anything 1e-9 away is judged on its side.
 */
#define BOUNDARY_SLACK 1e-12

static const char *const symptom_names[TH_SYM__COUNT] = {
	[TH_SYM_PAUSE] = "pause",
	[TH_SYM_LOW_TPUT] = "low_tput",
};

const char *
th_symptom_name(enum th_symptom s)
{
	return (unsigned)s < TH_SYM__COUNT ? symptom_names[s] : "?";
}

void
th_monitor_cfg_default(struct th_monitor_cfg *c)
{
	c->pause_ratio = 0.001;
	c->shortfall = 0.20;
	c->samples = 4;
}

void
th_sample_mean(const struct th_sample *s, unsigned n, struct th_sample *mean)
{
	unsigned h, k, i;

	memset(mean, 0, sizeof(*mean));
	if (n == 0 || s == NULL)
		return;
	for (i = 0; i < n; i++)
		for (h = 0; h < TH_HOSTS; h++)
			for (k = 0; k < TH_CTR__COUNT; k++)
				mean->v[h][k] += s[i].v[h][k];
	for (h = 0; h < TH_HOSTS; h++)
		for (k = 0; k < TH_CTR__COUNT; k++)
			mean->v[h][k] /= n;
}

void
th_monitor_judge_mean(const struct th_monitor_cfg *c, const struct th_expect *e,
	const struct th_sample *mean, struct th_verdict *v)
{
	double worst = -1, floor_frac = 1 - c->shortfall;
	unsigned h;

	memset(v, 0, sizeof(*v));
	v->bps_frac = 1;
	v->pps_frac = 1;
	for (h = 0; h < TH_HOSTS; h++) {
		double ratio = mean->v[h][TH_CTR_PAUSE_US] / 1e6;

		if (ratio > v->pause_ratio)
			v->pause_ratio = ratio;
	}
	v->pause = v->pause_ratio >= c->pause_ratio * (1 - BOUNDARY_SLACK);

	for (h = 0; h < TH_HOSTS; h++) {
		double bits = mean->v[h][TH_CTR_TX_BYTES] * 8, pkts = mean->v[h][TH_CTR_TX_PKTS];
		double bf, pf, closer;
		bool low;

		if (!(e->senders & (1u << h)) || !(e->bps > 0) || !(e->pps > 0))
			continue;
		bf = bits / e->bps;
		pf = pkts / e->pps;
		low = bits <= floor_frac * e->bps * (1 + BOUNDARY_SLACK) &&
		      pkts <= floor_frac * e->pps * (1 + BOUNDARY_SLACK);
		/*
		 * The worst host is the one furthest under the nearer of its two
		 * limits: a low host always is, since low means both are under.
		 */
		closer = bf > pf ? bf : pf;
		if (worst < 0 || closer < worst) {
			worst = closer;
			v->bps_frac = bf;
			v->pps_frac = pf;
		}
		if (low)
			v->low_tput = true;
	}
}

void
th_monitor_judge(const struct th_monitor_cfg *c, const struct th_expect *e,
	const struct th_sample *s, unsigned n, struct th_verdict *v)
{
	struct th_sample mean;

	if (n == 0 || s == NULL) {
		memset(v, 0, sizeof(*v));
		v->bps_frac = 1;
		v->pps_frac = 1;
		return;
	}
	th_sample_mean(s, n, &mean);
	th_monitor_judge_mean(c, e, &mean, v);
}

bool
th_verdict_is_anomalous(const struct th_verdict *v)
{
	return v->pause || v->low_tput;
}

bool
th_verdict_has(const struct th_verdict *v, enum th_symptom s)
{
	switch (s) {
	case TH_SYM_PAUSE: return v->pause;
	case TH_SYM_LOW_TPUT: return v->low_tput;
	default: return false;
	}
}
