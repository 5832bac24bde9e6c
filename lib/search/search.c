/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The search harness: configuration, the budgeted experiment every algorithm
 * runs through, anomaly bookkeeping with MFS extraction, and the energy of
 * the paper's Algorithm 1.
 */

#include "th_search.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_private.h"

static const char *const algo_names[] = {
#define TH_SEARCH_ALGO_NAME(id, name, desc) [TH_SEARCH_##id] = name,
	TH_SEARCH_ALGO_LIST(TH_SEARCH_ALGO_NAME)
#undef TH_SEARCH_ALGO_NAME
};

static const char *const algo_descs[] = {
#define TH_SEARCH_ALGO_DESC(id, name, desc) [TH_SEARCH_##id] = desc,
	TH_SEARCH_ALGO_LIST(TH_SEARCH_ALGO_DESC)
#undef TH_SEARCH_ALGO_DESC
};

const char *
th_search_algo_name(enum th_search_algo a)
{
	return (unsigned)a < TH_SEARCH__COUNT ? algo_names[a] : NULL;
}

const char *
th_search_algo_desc(enum th_search_algo a)
{
	return (unsigned)a < TH_SEARCH__COUNT ? algo_descs[a] : NULL;
}

int
th_search_algo_parse(const char *name)
{
	int i;

	for (i = 0; i < TH_SEARCH__COUNT; i++)
		if (name != NULL && strcmp(name, algo_names[i]) == 0)
			return i;
	return -EINVAL;
}

bool
th_search_algo_uses_mfs(enum th_search_algo a)
{
	return a != TH_SEARCH_ANNEAL_NOMFS;
}

bool
th_search_algo_anneals(enum th_search_algo a)
{
	return a == TH_SEARCH_ANNEAL || a == TH_SEARCH_ANNEAL_PERF || a == TH_SEARCH_ANNEAL_NOMFS;
}

void
th_search_cfg_default(struct th_search_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->algo = TH_SEARCH_ANNEAL;
	c->seed = 1;
	c->budget_s = 10 * 3600.0;
	th_monitor_cfg_default(&c->mon);
	c->temp = 1.0;
	c->decay = 0.97;
	c->temp_min = 0.05;
	c->stall_steps = 10;
	c->bo_window = 48;
	c->bo_candidates = 96;
	c->skip_max = 200;
	c->anomalies_max = 4096;
	c->confirm_runs = 1;
}

struct th_search *
th_search_create(const struct th_search_cfg *c, const struct th_backend *b)
{
	struct th_search *s;

	if (c == NULL || b == NULL || b->run == NULL || b->expect == NULL || b->cost_s == NULL ||
		b->limits == NULL || (unsigned)c->algo >= TH_SEARCH__COUNT || !(c->budget_s >= 0) ||
		c->mon.samples == 0 || c->mon.samples > 3600 || !(c->temp > 0) ||
		!(c->decay > 0 && c->decay <= 1) || !(c->temp_min > 0) || c->bo_window < 2 ||
		c->bo_window > 1024 || c->bo_candidates == 0 || c->skip_max == 0 ||
		c->confirm_runs > 10) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto fail;
	s->samples = calloc(c->mon.samples, sizeof(*s->samples));
	if (s->samples == NULL)
		goto free_s;
	s->cfg = *c;
	s->b = b;
	th_rng_seed(&s->rng, c->seed);
	s->use_mfs = th_search_algo_uses_mfs(c->algo);
	s->use_diag = c->algo != TH_SEARCH_ANNEAL_PERF;
	return s;

free_s:
	free(s);
fail:
	errno = ENOMEM;
	return NULL;
}

void
th_search_free(struct th_search *s)
{
	if (s == NULL)
		return;
	free(s->samples);
	free(s->anom);
	free(s->given);
	free(s);
}

/* @p arr with room for one more of its @p count elements of @p size (NULL: out of memory). */
static void *
grown(void *arr, unsigned count, unsigned *cap, size_t size)
{
	unsigned n = *cap != 0 ? *cap * 2 : 16;
	void *p;

	if (count < *cap)
		return arr;
	p = realloc(arr, n * size);
	if (p != NULL)
		*cap = n;
	return p;
}

int
th_search_add_given(struct th_search *s, const struct th_mfs *m)
{
	struct th_mfs *g;

	if (s == NULL || m == NULL || m->symptom >= TH_SYM__COUNT)
		return -EINVAL;
	g = grown(s->given, s->given_count, &s->given_cap, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	s->given = g;
	s->given[s->given_count++] = *m;
	return 0;
}

int
th_search_run(struct th_search *s)
{
	switch (s->cfg.algo) {
	case TH_SEARCH_RANDOM:
	case TH_SEARCH_RANDOM_SHAPED:
		return search__random(s);
	case TH_SEARCH_BO:
		return search__bo(s);
	default:
		return search__anneal(s);
	}
}

unsigned
th_search_anomaly_count(const struct th_search *s)
{
	return s->anom_count;
}

const struct th_search_anomaly *
th_search_anomaly_get(const struct th_search *s, unsigned i)
{
	return i < s->anom_count ? &s->anom[i] : NULL;
}

void
th_search_get_stats(const struct th_search *s, struct th_search_stats *st)
{
	*st = s->st;
}

/* Run and judge one checked point; the backend's status. */
static int
run_judge(const struct th_backend *b, const struct th_monitor_cfg *mon, const struct th_wl *wl,
	struct th_sample *buf, struct th_sample *mean, struct th_verdict *v, char *err,
	size_t err_size)
{
	struct th_expect ex;
	int rc;

	memset(v, 0, sizeof(*v));
	memset(mean, 0, sizeof(*mean));
	memset(buf, 0, mon->samples * sizeof(*buf));
	err[0] = '\0';
	rc = b->run(b->ctx, wl, mon->samples, buf, err, err_size);
	if (rc < 0)
		return rc;
	b->expect(b->ctx, wl, &ex);
	th_sample_mean(buf, mon->samples, mean);
	th_monitor_judge_mean(mon, &ex, mean, v);
	return 0;
}

int
th_search_run_one(const struct th_backend *b, const struct th_monitor_cfg *mon,
	const struct th_wl *wl, struct th_sample *mean, struct th_verdict *v, char *err,
	size_t err_size)
{
	struct th_sample *buf;
	int rc;

	if (mon->samples == 0 || mon->samples > 3600) {
		snprintf(err, err_size, "samples must be 1..3600");
		return -EINVAL;
	}
	rc = th_wl_check(wl, b->limits, err, err_size);
	if (rc < 0)
		return rc;
	buf = calloc(mon->samples, sizeof(*buf));
	if (buf == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	rc = run_judge(b, mon, wl, buf, mean, v, err, err_size);
	free(buf);
	return rc;
}

bool
search__covered(const struct th_search *s, const struct th_wl *wl)
{
	unsigned i;

	for (i = 0; i < s->anom_count; i++)
		if (s->anom[i].has_mfs && th_mfs_covers(&s->anom[i].mfs, wl))
			return true;
	for (i = 0; i < s->given_count; i++)
		if (th_mfs_covers(&s->given[i], wl))
			return true;
	return false;
}

bool
search__runnable(struct th_search *s, const struct th_wl *wl)
{
	char err[128];

	if (th_wl_check(wl, s->b->limits, err, sizeof(err)) < 0) {
		s->st.rejected++;
		return false;
	}
	if (s->use_mfs && search__covered(s, wl)) {
		s->st.skipped++;
		return false;
	}
	return true;
}

void
search__random_point(struct th_search *s, struct th_wl *wl, bool is_shaped)
{
	unsigned i;

	for (i = 0; i < s->cfg.skip_max; i++) {
		if (is_shaped)
			th_wl_random_shaped(wl, s->b->limits, &s->rng);
		else
			th_wl_random(wl, s->b->limits, &s->rng);
		if (search__runnable(s, wl))
			return;
	}
}

/*
 * Whether symptom @sym at @wl is an anomaly the search already has: with MFS,
 * one whose MFS (same symptom) covers the point, or a given MFS does;
 * without (or before its MFS exists), one whose trigger is this very point.
 */
static bool
is_known(const struct th_search *s, const struct th_wl *wl, enum th_symptom sym)
{
	unsigned i;

	for (i = 0; s->use_mfs && i < s->given_count; i++)
		if (s->given[i].symptom == sym && th_mfs_covers(&s->given[i], wl))
			return true;
	for (i = 0; i < s->anom_count; i++) {
		const struct th_search_anomaly *a = &s->anom[i];

		if (a->symptom != sym)
			continue;
		if (a->has_mfs ? th_mfs_covers(&a->mfs, wl) : th_wl_equal(&a->trigger, wl))
			return true;
	}
	return false;
}

static int
add_anomaly(struct th_search *s, const struct th_search_exp *e, enum th_symptom sym)
{
	struct th_search_anomaly *a;

	a = grown(s->anom, s->anom_count, &s->anom_cap, sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	s->anom = a;
	a = &s->anom[s->anom_count];
	memset(a, 0, sizeof(*a));
	a->id = s->anom_count;
	a->symptom = sym;
	a->trigger = e->wl;
	a->v = e->v;
	a->t_found_s = e->t_s;
	a->same_as = -1;
	a->met_in = -1;
	return (int)s->anom_count++;
}

void
th_search_diag_track(double max[TH_CTR__COUNT], const struct th_sample *mean)
{
	unsigned c, h;

	for (c = 0; c < TH_CTR__COUNT; c++) {
		double v = 0;

		for (h = 0; h < TH_HOSTS; h++)
			v += mean->v[h][c];
		if (v > max[c])
			max[c] = v;
	}
}

/*
 * Reserve the budget for @wl and run it. -EINVAL for a point the device
 * cannot run (counted rejected, never sent to the backend); -ETIME when it
 * does not fit: the search is over. Neither spends anything.
 */
static int
budgeted_run(struct th_search *s, const struct th_wl *wl, bool is_mfs, struct th_search_exp *e,
	char *err, size_t err_size)
{
	double cost;

	if (th_wl_check(wl, s->b->limits, err, err_size) < 0) {
		s->st.rejected++;
		return -EINVAL;
	}
	cost = s->b->cost_s(s->b->ctx, wl, s->cfg.mon.samples);
	if (!(cost >= 0))
		cost = 0;
	if (s->cfg.stop != NULL && *s->cfg.stop != 0)
		s->st.is_interrupted = true;
	if (s->is_out_of_budget || s->st.is_interrupted || s->st.t_s + cost > s->cfg.budget_s) {
		s->is_out_of_budget = true;
		return -ETIME;
	}
	memset(e, 0, sizeof(*e));
	e->wl = *wl;
	e->is_mfs = is_mfs;
	e->anomaly = -1;
	e->rc = run_judge(s->b, &s->cfg.mon, wl, s->samples, &e->mean, &e->v, err, err_size);
	e->err = err;
	if (e->rc == 0) {
		e->samples = s->samples;
		e->n_samples = s->cfg.mon.samples;
	}
	s->st.t_s += cost;
	e->t_s = s->st.t_s;
	e->index = s->exp_index++;
	if (e->rc < 0)
		s->st.failed++;
	else
		th_search_diag_track(s->diag_max, &e->mean);
	if (is_mfs)
		s->st.mfs_runs++;
	else
		s->st.runs++;
	return 0;
}

static void
publish(struct th_search *s, const struct th_search_exp *e)
{
	if (s->cfg.on_exp != NULL)
		s->cfg.on_exp(s->cfg.arg, e);
}

/* Numeric conditions @p w fails, at most; an enumerated one it fails is another cause. */
#define NEAR_MAX 2

/*
 * Whether @p w misses @p m only on a few numeric bounds. A failed enumerated
 * condition (another memory, QP type, opcode, direction or MTU) is how
 * Table 2's rows differ from each other, so widening one would let an MFS
 * cover, and the search skip, a different anomaly.
 */
static bool
is_near(const struct th_mfs *m, const struct th_wl *w)
{
	uint32_t failing = th_mfs_failing(m, w);

	return !(failing & th_feat_enum_mask()) && __builtin_popcount(failing) <= NEAR_MAX;
}

/* th_mfs_oracle: one MFS experiment, charged to the budget and published. */
static int
mfs_oracle(void *ctx, const struct th_wl *wl, enum th_symptom sym)
{
	struct th_search *s = ctx;
	struct th_search_exp e;
	char err[256];
	int rc;

	rc = budgeted_run(s, wl, true, &e, err, sizeof(err));
	if (rc < 0) {
		if (rc == -ETIME)
			s->is_mfs_aborted = true;
		return rc;
	}
	publish(s, &e);
	if (e.rc < 0)
		return e.rc;
	if (!th_verdict_has(&e.v, sym))
		return 0;
	return 1;
}

/*
 * An earlier anomaly whose cause reaches @p id's trigger, found with one
 * experiment per candidate, or -1. A candidate's MFS misses the trigger on a
 * few numeric bounds only (is_near()); its reduced point, moved to the new
 * trigger's values on those features, is run. If it still shows the symptom,
 * the earlier cause holds at those values and its MFS was narrower than the
 * cause: the new trigger is a re-find, not worth an extraction (about 45
 * experiments). Probing the new trigger moved into the earlier MFS instead
 * would prove nothing: F#8's trigger given F#7's MR count shows F#7. Nor
 * would the earlier trigger: it may carry a second cause its MFS left out
 * (GPU memory under "dir=bidi sge>=3 mix"), which then shows at any values
 * of the probed features and widens that MFS over the whole region.
 */
static int
find_merge(struct th_search *s, unsigned id)
{
	const struct th_search_anomaly *a = &s->anom[id];
	unsigned i, f;

	for (i = 0; i < id; i++) {
		const struct th_search_anomaly *k = &s->anom[i];
		struct th_wl p = k->base;
		uint32_t failing;
		int rc;

		if (!k->has_mfs || k->symptom != a->symptom || !is_near(&k->mfs, &a->trigger))
			continue;
		failing = th_mfs_failing(&k->mfs, &a->trigger);
		for (f = 0; f < TH_F__COUNT; f++)
			if (failing & (1u << f))
				th_wl_copy_feat(&p, &a->trigger, (enum th_feat)f);
		rc = mfs_oracle(s, &p, (enum th_symptom)a->symptom);
		if (rc < 0 && rc != -EINVAL)
			return -1;
		if (rc == 1)
			return (int)i;
	}
	return -1;
}

/*
 * The neighbouring cause an extraction met (th_mfs_side), unless the search
 * knows it already: one more run at the point that showed it confirms it
 * (noise can fake a single hit) and gives it a verdict and a time of its own.
 */
static void
add_side(struct th_search *s, unsigned from, struct th_mfs_side *side, enum th_symptom sym)
{
	struct th_search_exp e;
	char err[256];
	int id;

	if (is_known(s, &side->at, sym) || s->anom_count >= s->cfg.anomalies_max)
		return;
	if (budgeted_run(s, &side->at, true, &e, err, sizeof(err)) < 0)
		return;
	if (e.rc < 0 || !th_verdict_has(&e.v, sym)) {
		publish(s, &e);
		return;
	}
	id = add_anomaly(s, &e, sym);
	if (id >= 0) {
		side->mfs.symptom = (uint8_t)sym;
		s->anom[id].mfs = side->mfs;
		s->anom[id].base = side->at;
		s->anom[id].has_mfs = true;
		s->anom[id].mfs_runs = 1;
		s->anom[id].met_in = (int)from;
		e.anomaly = id;
	}
	publish(s, &e);
}

static void
extract(struct th_search *s, unsigned id)
{
	struct th_search_anomaly a = s->anom[id];
	struct th_mfs_side side;
	struct th_wl base;
	struct th_mfs m;
	unsigned before = s->st.mfs_runs;
	int rc;

	s->is_mfs_aborted = false;
	memset(&m, 0, sizeof(m));
	rc = find_merge(s, id);
	if (s->is_mfs_aborted)
		return;
	if (rc >= 0) {
		s->anom[id].mfs_runs = s->st.mfs_runs - before;
		th_mfs_widen_to(&s->anom[rc].mfs, &a.trigger, s->b->limits);
		s->anom[id].same_as = rc;
		return;
	}
	rc = th_mfs_extract(&a.trigger, (enum th_symptom)a.symptom, s->b->limits, mfs_oracle, s, &m,
		&side, &base);
	s->anom[id].mfs_runs = s->st.mfs_runs - before;
	if (rc < 0 || s->is_mfs_aborted)
		return;
	m.symptom = a.symptom;
	s->anom[id].mfs = m;
	s->anom[id].base = base;
	s->anom[id].has_mfs = true;
	if (side.is_set)
		add_side(s, id, &side, (enum th_symptom)a.symptom);
}

/* th_mfs_oracle of th_search_refine(): an MFS experiment, counted as refining too. */
static int
refine_oracle(void *ctx, const struct th_wl *wl, enum th_symptom sym)
{
	struct th_search *s = ctx;
	double t0 = s->st.t_s;
	unsigned runs = s->st.mfs_runs;
	int rc = mfs_oracle(s, wl, sym);

	s->st.refine_runs += s->st.mfs_runs - runs;
	s->st.refine_s += s->st.t_s - t0;
	return rc;
}

int
th_search_refine(struct th_search *s, double extra_s)
{
	unsigned i;

	if (!(extra_s >= 0))
		return -EINVAL;
	s->cfg.budget_s = s->st.t_s + extra_s;
	s->is_out_of_budget = false;
	for (i = 0; i < s->anom_count && !s->is_out_of_budget && !s->st.is_interrupted; i++) {
		struct th_search_anomaly *a = &s->anom[i];
		struct th_mfs m = a->mfs;

		if (!a->has_mfs || a->same_as >= 0 || a->is_refined)
			continue;
		s->is_mfs_aborted = false;
		if (th_mfs_refine(&m, &a->base, (enum th_symptom)a->symptom, s->b->limits,
			    refine_oracle, s) < 0 ||
			s->is_mfs_aborted)
			continue;
		/* A bound measured at the reduced point may stop short of the trigger's
		 * value; the trigger showed the anomaly, so, as th_mfs_extract() does, its
		 * values stay in. */
		th_mfs_widen_to(&m, &a->trigger, s->b->limits);
		a->mfs = m;
		a->is_refined = true;
	}
	return 0;
}

/*
 * The symptom verdict @p v stands for. Pauses throttle the sender, so a
 * paused point is usually short of its rate too: that shortfall is the
 * pause's, not a second anomaly.
 */
static int
symptom_of(const struct th_verdict *v)
{
	return v->pause ? TH_SYM_PAUSE : v->low_tput ? TH_SYM_LOW_TPUT : -1;
}

/* The symptom of @p e that is a new anomaly, or -1 (a known one is counted). */
static int
new_symptom(struct th_search *s, const struct th_search_exp *e)
{
	int sym = e->rc == 0 ? symptom_of(&e->v) : -1;

	if (sym < 0)
		return -1;
	if (is_known(s, &e->wl, (enum th_symptom)sym) || s->anom_count >= s->cfg.anomalies_max) {
		s->st.duplicates++;
		return -1;
	}
	return sym;
}

/*
 * Run @p wl again cfg.confirm_runs times: 1 when every run shows @p sym (as
 * new_symptom() reads a verdict), 0 when one does not or fails to set up
 * (counted as not confirmed), or the budget's -ETIME (then neither). They
 * are the search's runs (the point it chose, once more); the last one stands
 * in @p last, its reason text in @p err.
 */
static int
confirm(struct th_search *s, const struct th_wl *wl, int sym, struct th_search_exp *last, char *err,
	size_t err_size)
{
	unsigned i;
	int rc;

	for (i = 0; i < s->cfg.confirm_runs; i++) {
		rc = budgeted_run(s, wl, false, last, err, err_size);
		if (rc < 0)
			return rc;
		s->st.confirm_runs++;
		if (last->rc != 0 || symptom_of(&last->v) != sym) {
			publish(s, last);
			s->st.unconfirmed++;
			return 0;
		}
		if (i + 1 < s->cfg.confirm_runs)
			publish(s, last);
	}
	return 1;
}

int
search__exp(struct th_search *s, const struct th_wl *wl, struct th_search_exp *e)
{
	struct th_search_exp c, *at = e;
	char err[256], c_err[256];
	int rc, sym, id;

	rc = budgeted_run(s, wl, false, e, err, sizeof(err));
	if (rc < 0)
		return rc;
	sym = new_symptom(s, e);
	if (sym >= 0 && s->cfg.confirm_runs > 0) {
		/* The trigger is logged first: the confirming runs reuse its samples' buffer. */
		publish(s, e);
		rc = confirm(s, wl, sym, &c, c_err, sizeof(c_err));
		if (rc <= 0)
			return rc;
		at = &c;
	}
	if (sym >= 0) {
		id = add_anomaly(s, at, (enum th_symptom)sym);
		if (id < 0)
			return id;
		at->anomaly = id;
		e->anomaly = id;
	}
	/* The run that recorded the anomaly goes to the log before the MFS experiments. */
	publish(s, at);
	if (sym >= 0 && s->use_mfs)
		extract(s, (unsigned)e->anomaly);
	return 0;
}

/* Bounded relative change: the paper's (x - y) / y, y at least @p floor, the result in [-1, 1]. */
static double
rel(double x, double y, double floor)
{
	if (x == y)
		return 0;
	return fmin(1.0, fmax(-1.0, (x - y) / fmax(fmax(fabs(y), floor), 1e-12)));
}

static double
throughput_frac(const struct th_verdict *v)
{
	return fmax(v->bps_frac, v->pps_frac);
}

double
th_search_energy_delta(const struct th_sample *a, const struct th_verdict *va,
	const struct th_sample *b, const struct th_verdict *vb,
	const double diag_max[TH_CTR__COUNT], double floor_share)
{
	double de = 0;
	unsigned c, h;

	/* Throughput driven down: (B - A) / A. */
	de += rel(throughput_frac(vb), throughput_frac(va), 0);
	/* Pause time driven up: (A - B) / B. */
	de += rel(va->pause_ratio, vb->pause_ratio, 0);
	for (c = 0; diag_max != NULL && c < TH_CTR__COUNT; c++) {
		double x = 0, y = 0;

		if (!th_ctr_is_diag((enum th_ctr)c))
			continue;
		for (h = 0; h < TH_HOSTS; h++) {
			x += a->v[h][c];
			y += b->v[h][c];
		}
		/* Diagnostic counters driven up: (A - B) / B. */
		de += rel(x, y, floor_share * diag_max[c]);
	}
	return de;
}

double
search__energy_delta(const struct th_search *s, const struct th_sample *a,
	const struct th_verdict *va, const struct th_sample *b, const struct th_verdict *vb)
{
	return th_search_energy_delta(
		a, va, b, vb, s->use_diag ? s->diag_max : NULL, TH_SEARCH_DIAG_FLOOR);
}
