/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SEARCH_PRIVATE_H
#define TH_SEARCH_PRIVATE_H

/*
 * What the algorithms (anneal.c, random.c, bo.c) share with the harness
 * (search.c): the run state, one experiment with budget, skip and anomaly
 * bookkeeping, and random restarts.
 */

#include "th_rng.h"
#include "th_search.h"

struct th_search {
	struct th_search_cfg cfg;
	const struct th_backend *b;
	struct th_rng rng;         /* the search's choices only */
	bool use_mfs;              /* skip covered points, extract MFS on finding */
	bool use_diag;             /* diagnostic counters in the energy */
	bool is_out_of_budget;     /* the next experiment did not fit: stop */
	bool is_mfs_aborted;       /* the budget ran out during an extraction */
	struct th_sample *samples; /* mon.samples per-second samples of one run */
	struct th_search_anomaly *anom;
	unsigned anom_count;
	unsigned anom_cap;
	struct th_mfs *given; /* MFS known before the search (th_search_add_given) */
	unsigned given_count;
	unsigned given_cap;
	unsigned exp_index;             /* experiments published so far */
	double diag_max[TH_CTR__COUNT]; /* largest value seen per counter (hosts summed) */
	struct th_search_stats st;
};

/*
 * Run @wl as one search experiment: refuse it when it does not fit the budget
 * (-ETIME, sets is_out_of_budget) or the space rejects it (-EINVAL, counted);
 * otherwise run, judge, record any new anomaly (extracting its MFS when the
 * algorithm uses MFS), publish, and return 0 with @e filled. A backend
 * failure is e->rc < 0, not an error here.
 */
int search__exp(struct th_search *s, const struct th_wl *wl, struct th_search_exp *e);

/* Whether an MFS the search holds or was given covers @wl (any symptom). */
bool search__covered(const struct th_search *s, const struct th_wl *wl);

/*
 * Whether @wl may be run next: valid for the limits (else counted rejected)
 * and, with MFS, not covered (else counted skipped).
 */
bool search__runnable(struct th_search *s, const struct th_wl *wl);

/*
 * A random valid point no MFS covers (after skip_max tries: the last one
 * drawn); with @is_shaped its pattern is one or two sizes most of the time
 * (th_wl_random_shaped()).
 */
void search__random_point(struct th_search *s, struct th_wl *wl, bool is_shaped);

/*
 * The energy change of Algorithm 1 as the annealing walk uses it:
 * th_search_energy_delta() with each diagnostic counter's floor at
 * TH_SEARCH_DIAG_FLOOR of the largest value the search has seen of it (the
 * paper compares counters normalised by their maximum), or with no
 * diagnostic terms for the performance-counter ablation.
 */
double search__energy_delta(const struct th_search *s, const struct th_sample *a,
	const struct th_verdict *va, const struct th_sample *b, const struct th_verdict *vb);

int search__anneal(struct th_search *s);
int search__random(struct th_search *s);
int search__bo(struct th_search *s);

#endif /* TH_SEARCH_PRIVATE_H */
