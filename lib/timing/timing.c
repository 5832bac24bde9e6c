/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Driver timing: operation state machine, schedule (think/cycle time with
 * intended starts), phases, mixes, distributions and statistics.
 */

#include "th_timing.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Where the open operation stands. */
enum op_state {
	OP_NONE,   /* no operation begun */
	OP_READY,  /* begun, no critical section yet */
	OP_OPEN,   /* inside a critical section */
	OP_CLOSED, /* after a section, clock running (a gap counts) */
	OP_PAUSED, /* after a section, clock stopped */
};

/* Where the run stands in ramp-up, steady state, ramp-down. */
struct phase_state {
	enum th_timing_phase phase; /* current phase */
	uint64_t begin_ns;          /* when it began */
	uint64_t ops;               /* operations begun in it */
};

struct th_timing_driver {
	const struct th_timing_config *cfg; /* what to run */
	struct th_timing_clock *clock;      /* time source */
	struct th_rng rng;           /* mix and delay draws */
	bool is_started;                    /* th_timing_driver_start() was called */

	struct phase_state ph; /* phase of the latest scheduled start */

	/* Schedule across operations. */
	uint64_t seq;              /* operations begun */
	uint64_t prev_intended_ns; /* intended start of the previous operation */
	uint64_t prev_start_ns;    /* its actual start */
	uint64_t prev_end_ns;      /* end of its last critical section */
	bool has_prev;             /* a previous operation ran a critical section */
	uint32_t prev_op;          /* previous operation (Markov row) */
	bool has_next_delay;       /* next_delay_ns is drawn and not yet used */
	uint64_t next_delay_ns;    /* the next think/cycle delay, drawn ahead so the
				      next due time is known before the op begins */

	/* The open operation. */
	enum op_state state;           /* see enum op_state */
	uint32_t op;                   /* its type */
	enum th_timing_phase op_phase; /* phase of its intended start */
	bool is_scheduled;             /* it has an intended start to wait for */
	bool is_failed;                /* an AUTO section returned an error */
	uint64_t intended_ns;          /* intended start */
	uint64_t start_ns;             /* first section began */
	uint64_t end_ns;               /* latest section ended */
	uint64_t paused_ns;            /* excluded so far */
	uint64_t pause_begin_ns;       /* when the current pause began */

	struct th_timing_stats stats; /* this thread's results (large, keep last) */
};

static const char *const dist_names[] = {
#define X(e, s) s,
	TH_TIMING_DIST_KINDS(X)
#undef X
};

static const char *const delay_names[] = {
#define X(e, s) s,
	TH_TIMING_DELAY_KINDS(X)
#undef X
};

static const char *const phase_names[] = {
#define X(e, s) s,
	TH_TIMING_PHASES(X)
#undef X
};

static const char *const check_names[] = {
#define X(e, s) s,
	TH_TIMING_CHECK_KINDS(X)
#undef X
};

const char *
th_timing_dist_kind_name(enum th_timing_dist_kind kind)
{
	return (unsigned int)kind < TH_TIMING_DIST_KIND_COUNT ? dist_names[kind] : "?";
}

const char *
th_timing_delay_kind_name(enum th_timing_delay_kind kind)
{
	return (unsigned int)kind < TH_TIMING_DELAY_KIND_COUNT ? delay_names[kind] : "?";
}

const char *
th_timing_phase_name(enum th_timing_phase phase)
{
	return (unsigned int)phase < TH_TIMING_PHASE_COUNT ? phase_names[phase] : "?";
}

const char *
th_timing_check_kind_name(enum th_timing_check_kind kind)
{
	return (unsigned int)kind < TH_TIMING_CHECK_KIND_COUNT ? check_names[kind] : "?";
}

/* ---- distributions ---- */

/* Mean of min(Exp(theta), range): theta (1 - e^(-range/theta)). */
static double
clamped_exp_mean(double theta, double range)
{
	return theta * -expm1(-range / theta);
}

int
th_timing_dist_set(struct th_timing_dist *d, enum th_timing_dist_kind kind, uint64_t mean_ns,
	uint64_t min_ns, uint64_t max_ns)
{
	struct th_timing_dist n = {.kind = kind};

	switch (kind) {
	case TH_TIMING_DIST_FIXED:
		n.mean_ns = n.min_ns = n.max_ns = mean_ns;
		break;
	case TH_TIMING_DIST_UNIFORM:
		if (min_ns > max_ns)
			return -EINVAL;
		n.min_ns = min_ns;
		n.max_ns = max_ns;
		n.mean_ns = min_ns + (max_ns - min_ns) / 2;
		break;
	case TH_TIMING_DIST_NEGEXP: {
		double m, range, lo, hi;
		int i;

		if (max_ns == 0) {
			if (mean_ns > UINT64_MAX / TH_TIMING_NEGEXP_CLAMP)
				return -EINVAL;
			max_ns = mean_ns * TH_TIMING_NEGEXP_CLAMP;
		}
		if (!(min_ns < mean_ns && mean_ns < max_ns))
			return -EINVAL;
		n.mean_ns = mean_ns;
		n.min_ns = min_ns;
		n.max_ns = max_ns;
		/*
		 * Draws are min + Exp(theta) clamped at max. The clamp removes
		 * mass from the tail, so solve for the theta that keeps the
		 * configured mean; the mean of the clamped draw grows with theta,
		 * and theta = range^2 / (2 (range - m)) is already large enough.
		 */
		m = (double)(mean_ns - min_ns);
		range = (double)(max_ns - min_ns);
		lo = m;
		hi = range * range / (2.0 * (range - m));
		for (i = 0; i < 200; i++) {
			double mid = (lo + hi) / 2;

			if (clamped_exp_mean(mid, range) < m)
				lo = mid;
			else
				hi = mid;
		}
		n.scale_ns = (lo + hi) / 2;
		break;
	}
	default:
		return -EINVAL;
	}
	*d = n;
	return 0;
}

uint64_t
th_timing_dist_draw(const struct th_timing_dist *d, struct th_rng *r)
{
	uint64_t span;
	double x;

	switch (d->kind) {
	case TH_TIMING_DIST_FIXED:
		return d->mean_ns;
	case TH_TIMING_DIST_UNIFORM:
		span = d->max_ns - d->min_ns + 1;
		/* span 0 means the whole 64-bit range; the modulo bias is < span / 2^64. */
		return d->min_ns +
		       (span == 0 ? th_rng_u64(r) : th_rng_u64(r) % span);
	case TH_TIMING_DIST_NEGEXP:
		if (d->scale_ns <= 0.0)
			return d->mean_ns;
		/* 1 - u lies in (0, 1], so the log is finite. */
		x = (double)d->min_ns - d->scale_ns * log(1.0 - th_rng_unit(r));
		if (!(x < (double)d->max_ns))
			return d->max_ns;
		return (uint64_t)(x + 0.5);
	default:
		return 0;
	}
}

/* ---- configuration ---- */

void
th_timing_config_init(struct th_timing_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mix = TH_TIMING_MIX_FLAT;
	cfg->delay = TH_TIMING_DELAY_NONE;
	cfg->seed = 1;
	cfg->late_ns = TH_TIMING_LATE_NS;
	cfg->mix_tolerance_pct = TH_TIMING_CHECK_OFF;
	cfg->cycle_tolerance_pct = TH_TIMING_CHECK_OFF;
	cfg->little_tolerance_pct = TH_TIMING_CHECK_OFF;
}

int
th_timing_config_add_op(
	struct th_timing_config *cfg, const char *name, enum th_timing_mode mode, double weight)
{
	uint32_t i;

	if (name == NULL || !(weight >= 0.0) ||
		(mode != TH_TIMING_MANUAL && mode != TH_TIMING_AUTO))
		return -EINVAL;
	if (cfg->op_count >= TH_TIMING_MAX_OPS)
		return -ENOSPC;
	i = cfg->op_count++;
	cfg->ops[i].name = name;
	cfg->ops[i].mode = mode;
	cfg->weights[i] = weight;
	return (int)i;
}

int
th_timing_config_add_limit(struct th_timing_config *cfg, int op, double percentile,
	uint64_t limit_ns, enum th_timing_hist_kind hist)
{
	struct th_timing_limit *l;

	if (op < -1 || op >= (int)cfg->op_count || !(percentile >= 0.0 && percentile <= 100.0) ||
		(hist != TH_TIMING_HIST_RESPONSE && hist != TH_TIMING_HIST_SERVICE))
		return -EINVAL;
	if (cfg->limit_count >= TH_TIMING_MAX_LIMITS)
		return -ENOSPC;
	l = &cfg->limits[cfg->limit_count++];
	l->op = op;
	l->percentile = percentile;
	l->limit_ns = limit_ns;
	l->hist = hist;
	return 0;
}

static void
say(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err_size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

static double
row_sum(const struct th_timing_config *cfg, uint32_t from)
{
	double sum = 0.0;
	uint32_t j;

	for (j = 0; j < cfg->op_count; j++)
		sum += cfg->matrix[from][j];
	return sum;
}

int
th_timing_config_check(const struct th_timing_config *cfg, char *err, size_t err_size)
{
	uint32_t i, j;
	double sum = 0.0;

	if (cfg->op_count == 0 || cfg->op_count > TH_TIMING_MAX_OPS) {
		say(err, err_size, "timing: %u operation types; give 1 to %d", cfg->op_count,
			TH_TIMING_MAX_OPS);
		return -EINVAL;
	}
	for (i = 0; i < cfg->op_count; i++) {
		if (cfg->ops[i].name == NULL) {
			say(err, err_size, "timing: operation %u has no name", i);
			return -EINVAL;
		}
		if (cfg->ops[i].mode != TH_TIMING_MANUAL && cfg->ops[i].mode != TH_TIMING_AUTO) {
			say(err, err_size, "timing: operation '%s' has an unknown timing mode",
				cfg->ops[i].name);
			return -EINVAL;
		}
	}
	if (cfg->mix == TH_TIMING_MIX_FLAT) {
		for (i = 0; i < cfg->op_count; i++) {
			if (!(cfg->weights[i] >= 0.0) || isinf(cfg->weights[i])) {
				say(err, err_size,
					"timing: weight of '%s' must be a finite number >= 0",
					cfg->ops[i].name);
				return -EINVAL;
			}
			sum += cfg->weights[i];
		}
		if (!(sum > 0.0)) {
			say(err, err_size, "timing: flat mix weights sum to 0; give one a weight");
			return -EINVAL;
		}
	} else if (cfg->mix == TH_TIMING_MIX_MARKOV) {
		bool reach[TH_TIMING_MAX_OPS] = {false};
		bool is_grown = true;

		if (cfg->markov_first >= cfg->op_count) {
			say(err, err_size, "timing: markov_first %u is not an operation",
				cfg->markov_first);
			return -EINVAL;
		}
		for (i = 0; i < cfg->op_count; i++)
			for (j = 0; j < cfg->op_count; j++)
				if (!(cfg->matrix[i][j] >= 0.0) || isinf(cfg->matrix[i][j])) {
					say(err, err_size,
						"timing: matrix[%s][%s] must be a finite number >= "
						"0",
						cfg->ops[i].name, cfg->ops[j].name);
					return -EINVAL;
				}
		/* Every row the chain can reach needs a way out. */
		reach[cfg->markov_first] = true;
		while (is_grown) {
			is_grown = false;
			for (i = 0; i < cfg->op_count; i++)
				for (j = 0; reach[i] && j < cfg->op_count; j++)
					if (cfg->matrix[i][j] > 0.0 && !reach[j])
						reach[j] = is_grown = true;
		}
		for (i = 0; i < cfg->op_count; i++)
			if (reach[i] && !(row_sum(cfg, i) > 0.0)) {
				say(err, err_size,
					"timing: matrix row of '%s' sums to 0; the chain would "
					"stop there",
					cfg->ops[i].name);
				return -EINVAL;
			}
	} else {
		say(err, err_size, "timing: unknown mix kind %d", (int)cfg->mix);
		return -EINVAL;
	}
	if ((unsigned int)cfg->delay >= TH_TIMING_DELAY_KIND_COUNT) {
		say(err, err_size, "timing: unknown delay kind %d", (int)cfg->delay);
		return -EINVAL;
	}
	if (cfg->delay != TH_TIMING_DELAY_NONE &&
		((unsigned int)cfg->delay_dist.kind >= TH_TIMING_DIST_KIND_COUNT ||
			cfg->delay_dist.min_ns > cfg->delay_dist.max_ns ||
			(cfg->delay_dist.kind == TH_TIMING_DIST_NEGEXP &&
				!(cfg->delay_dist.scale_ns > 0.0)))) {
		say(err, err_size,
			"timing: %s time distribution is not set; use th_timing_dist_set()",
			th_timing_delay_kind_name(cfg->delay));
		return -EINVAL;
	}
	if (cfg->steady_ns == 0 && cfg->steady_count == 0) {
		say(err, err_size,
			"timing: the steady state needs a duration or an operation count");
		return -EINVAL;
	}
	if (cfg->limit_count > TH_TIMING_MAX_LIMITS) {
		say(err, err_size, "timing: %u percentile limits; at most %d", cfg->limit_count,
			TH_TIMING_MAX_LIMITS);
		return -EINVAL;
	}
	for (i = 0; i < cfg->limit_count; i++) {
		const struct th_timing_limit *l = &cfg->limits[i];

		if (l->op < -1 || l->op >= (int)cfg->op_count ||
			!(l->percentile >= 0.0 && l->percentile <= 100.0)) {
			say(err, err_size,
				"timing: percentile limit %u names a bad operation or "
				"percentile",
				i);
			return -EINVAL;
		}
	}
	return 0;
}

int
th_timing_mix_shares(const struct th_timing_config *cfg, double shares[TH_TIMING_MAX_OPS])
{
	double p[TH_TIMING_MAX_OPS][TH_TIMING_MAX_OPS], pi[TH_TIMING_MAX_OPS],
		nx[TH_TIMING_MAX_OPS];
	uint32_t n = cfg->op_count, i, j, it;
	double sum = 0.0;

	if (th_timing_config_check(cfg, NULL, 0) != 0)
		return -EINVAL;
	memset(shares, 0, sizeof(double) * TH_TIMING_MAX_OPS);
	if (cfg->mix == TH_TIMING_MIX_FLAT) {
		for (i = 0; i < n; i++)
			sum += cfg->weights[i];
		for (i = 0; i < n; i++)
			shares[i] = cfg->weights[i] / sum;
		return 0;
	}
	/*
	 * The lazy chain (P + I) / 2 has the same stationary distribution as P
	 * but is aperiodic, so power iteration converges even for a strict
	 * A -> B -> A cycle. Rows never reached stay irrelevant: mass starts
	 * on markov_first and cannot flow into them.
	 */
	for (i = 0; i < n; i++) {
		double rs = row_sum(cfg, i);

		for (j = 0; j < n; j++)
			p[i][j] = (rs > 0.0 ? cfg->matrix[i][j] / rs : (i == j)) / 2.0 +
				  (i == j ? 0.5 : 0.0);
		pi[i] = i == cfg->markov_first;
	}
	for (it = 0; it < 100000; it++) {
		double change = 0.0;

		for (j = 0; j < n; j++) {
			nx[j] = 0.0;
			for (i = 0; i < n; i++)
				nx[j] += pi[i] * p[i][j];
		}
		for (j = 0; j < n; j++) {
			change += fabs(nx[j] - pi[j]);
			pi[j] = nx[j];
		}
		if (change < 1e-14)
			break;
	}
	for (i = 0; i < n; i++)
		shares[i] = pi[i];
	return 0;
}

/* ---- statistics ---- */

void
th_timing_stats_reset(struct th_timing_stats *s)
{
	uint32_t i;

	memset(s, 0, offsetof(struct th_timing_stats, ops));
	s->steady_begin_ns = UINT64_MAX;
	for (i = 0; i < TH_TIMING_MAX_OPS; i++) {
		struct th_timing_op_stats *o = &s->ops[i];

		o->count = o->errors = o->late = o->outside = 0;
		th_hist_init(&o->service);
		th_hist_init(&o->response);
	}
}

struct th_timing_stats *
th_timing_stats_create(void)
{
	struct th_timing_stats *s = malloc(sizeof(*s));

	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	th_timing_stats_reset(s);
	return s;
}

void
th_timing_stats_free(struct th_timing_stats *s)
{
	free(s);
}

void
th_timing_stats_merge(struct th_timing_stats *dst, const struct th_timing_stats *src)
{
	uint32_t i;

	dst->threads += src->threads;
	if (src->op_count > dst->op_count)
		dst->op_count = src->op_count;
	if (src->steady_begin_ns < dst->steady_begin_ns)
		dst->steady_begin_ns = src->steady_begin_ns;
	if (src->steady_end_ns > dst->steady_end_ns)
		dst->steady_end_ns = src->steady_end_ns;
	dst->delay_count += src->delay_count;
	dst->delay_sum_ns += src->delay_sum_ns;
	for (i = 0; i < TH_TIMING_MAX_OPS; i++) {
		struct th_timing_op_stats *d = &dst->ops[i];
		const struct th_timing_op_stats *o = &src->ops[i];

		d->count += o->count;
		d->errors += o->errors;
		d->late += o->late;
		d->outside += o->outside;
		th_hist_merge(&d->service, &o->service);
		th_hist_merge(&d->response, &o->response);
	}
}

double
th_timing_stats_throughput(const struct th_timing_stats *s)
{
	uint64_t total = 0;
	uint32_t i;

	if (s->steady_begin_ns == UINT64_MAX || s->steady_end_ns <= s->steady_begin_ns)
		return 0.0;
	for (i = 0; i < TH_TIMING_MAX_OPS; i++)
		total += s->ops[i].count;
	return (double)total * 1e9 / (double)(s->steady_end_ns - s->steady_begin_ns);
}

/* ---- driver ---- */

struct th_timing_driver *
th_timing_driver_create(
	const struct th_timing_config *cfg, struct th_timing_clock *clock, uint32_t thread_id)
{
	struct th_timing_driver *d;

	if (cfg == NULL || clock == NULL || clock->now == NULL || clock->sleep_until == NULL ||
		th_timing_config_check(cfg, NULL, 0) != 0) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	d->cfg = cfg;
	d->clock = clock;
	th_rng_seed(&d->rng, cfg->seed + thread_id);
	th_timing_stats_reset(&d->stats);
	d->stats.threads = 1;
	d->stats.op_count = cfg->op_count;
	d->prev_op = cfg->markov_first;
	return d;
}

void
th_timing_driver_free(struct th_timing_driver *d)
{
	free(d);
}

int
th_timing_driver_start(struct th_timing_driver *d, uint64_t t0_ns)
{
	if (d->is_started)
		return -EALREADY;
	if (t0_ns == 0)
		t0_ns = th_timing_clock_now(d->clock);
	d->is_started = true;
	d->ph.phase = TH_TIMING_PHASE_RAMPUP;
	d->ph.begin_ns = t0_ns;
	d->ph.ops = 0;
	/* The first cycle-time start is t0 itself: t0 + the empty sum of delays. */
	d->prev_intended_ns = t0_ns;
	return 0;
}

static uint64_t
phase_ns(const struct th_timing_config *cfg, enum th_timing_phase p)
{
	return p == TH_TIMING_PHASE_RAMPUP     ? cfg->rampup_ns
	       : p == TH_TIMING_PHASE_STEADY   ? cfg->steady_ns
	       : p == TH_TIMING_PHASE_RAMPDOWN ? cfg->rampdown_ns
					       : 0;
}

static uint64_t
phase_count(const struct th_timing_config *cfg, enum th_timing_phase p)
{
	return p == TH_TIMING_PHASE_RAMPUP     ? cfg->rampup_count
	       : p == TH_TIMING_PHASE_STEADY   ? cfg->steady_count
	       : p == TH_TIMING_PHASE_RAMPDOWN ? cfg->rampdown_count
					       : 0;
}

/*
 * Move the phase forward to the one holding time @t. A phase ends when its
 * duration has passed (the next begins exactly at the boundary, so threads
 * sharing t0 agree) or its count is reached (the next begins at @t); a phase
 * with neither limit is empty. With @stats, the steady window is recorded
 * here so a time-limited steady state ends exactly at its boundary.
 */
static void
advance_phase(const struct th_timing_config *cfg, struct phase_state *ph, uint64_t t,
	struct th_timing_stats *stats)
{
	while (ph->phase < TH_TIMING_PHASE_DONE) {
		uint64_t dur = phase_ns(cfg, ph->phase), cnt = phase_count(cfg, ph->phase);
		bool is_timed_out = dur != 0 && t >= ph->begin_ns && t - ph->begin_ns >= dur;
		bool is_counted_out = cnt != 0 && ph->ops >= cnt;
		uint64_t next_begin;

		if (!is_timed_out && !is_counted_out && (dur != 0 || cnt != 0))
			break;
		if (is_timed_out)
			next_begin = ph->begin_ns + dur;
		else if (is_counted_out)
			next_begin = t > ph->begin_ns ? t : ph->begin_ns;
		else
			next_begin = ph->begin_ns;
		if (stats != NULL && ph->phase == TH_TIMING_PHASE_STEADY && is_timed_out)
			stats->steady_end_ns = next_begin;
		ph->phase++;
		ph->begin_ns = next_begin;
		ph->ops = 0;
		if (stats != NULL && ph->phase == TH_TIMING_PHASE_STEADY &&
			stats->steady_begin_ns == UINT64_MAX)
			stats->steady_begin_ns = next_begin;
	}
}

/*
 * When the next scheduled operation is due, drawing its delay if needed.
 * Sets *is_scheduled to false in closed loop (no delay): it is due now.
 */
static uint64_t
due_time(struct th_timing_driver *d, bool *is_scheduled)
{
	const struct th_timing_config *cfg = d->cfg;
	uint64_t base;

	*is_scheduled = true;
	if (cfg->delay == TH_TIMING_DELAY_CYCLE && d->seq > 0) {
		/* Never from the actual start: a long operation must not shift the plan. */
		base = d->prev_intended_ns;
	} else if (cfg->delay == TH_TIMING_DELAY_THINK && d->has_prev) {
		base = d->prev_end_ns;
	} else if (cfg->delay != TH_TIMING_DELAY_NONE) {
		/* The first operation is due at t0: t0 plus the empty sum of delays. */
		return d->prev_intended_ns;
	} else {
		*is_scheduled = false;
		return th_timing_clock_now(d->clock);
	}
	if (!d->has_next_delay) {
		d->next_delay_ns = th_timing_dist_draw(&cfg->delay_dist, &d->rng);
		d->has_next_delay = true;
	}
	return base + d->next_delay_ns;
}

enum th_timing_phase
th_timing_driver_phase(struct th_timing_driver *d)
{
	struct phase_state probe = d->ph;
	bool is_scheduled;
	uint64_t t;

	if (!d->is_started)
		return TH_TIMING_PHASE_RAMPUP;
	/*
	 * Look ahead on a copy: asking must not move the run. With a schedule
	 * the next operation belongs where it is due, even if the clock is
	 * behind (waiting) or ahead (late).
	 */
	t = due_time(d, &is_scheduled);
	advance_phase(d->cfg, &probe, t, NULL);
	return probe.phase;
}

bool
th_timing_driver_is_running(struct th_timing_driver *d)
{
	if (!d->is_started || d->ph.phase == TH_TIMING_PHASE_DONE)
		return false;
	if (th_timing_driver_phase(d) != TH_TIMING_PHASE_DONE)
		return true;
	/*
	 * The run is over: commit the phase change between operations so a
	 * time-limited steady window closes at its boundary.
	 */
	if (d->state == OP_NONE) {
		bool is_scheduled;

		advance_phase(d->cfg, &d->ph, due_time(d, &is_scheduled), &d->stats);
	}
	return false;
}

static uint32_t
draw_op(struct th_timing_driver *d)
{
	const struct th_timing_config *cfg = d->cfg;
	const double *w = cfg->mix == TH_TIMING_MIX_MARKOV
				  ? (d->seq == 0 ? NULL : cfg->matrix[d->prev_op])
				  : cfg->weights;
	double sum = 0.0, x;
	uint32_t i, last = 0;

	if (w == NULL)
		return cfg->markov_first;
	for (i = 0; i < cfg->op_count; i++)
		sum += w[i];
	x = th_rng_unit(&d->rng) * sum;
	for (i = 0; i < cfg->op_count; i++) {
		if (w[i] <= 0.0)
			continue;
		last = i;
		if (x < w[i])
			return i;
		x -= w[i];
	}
	/* Rounding left x at the very top: the last op with weight takes it. */
	return last;
}

int
th_timing_op_begin_as(struct th_timing_driver *d, uint32_t op, uint64_t intended_ns)
{
	const struct th_timing_config *cfg = d->cfg;
	uint64_t t;

	if (!d->is_started)
		return -ENOTCONN;
	if (d->state != OP_NONE)
		return -EINPROGRESS;
	if (op >= cfg->op_count)
		return -EINVAL;

	if (intended_ns != TH_TIMING_SCHEDULE) {
		d->is_scheduled = true;
		d->intended_ns = t = intended_ns;
	} else {
		t = due_time(d, &d->is_scheduled);
		/* Closed loop: the operation is due when its section starts. */
		d->intended_ns = d->is_scheduled ? t : 0;
		d->has_next_delay = false;
	}
	advance_phase(cfg, &d->ph, t, &d->stats);
	d->ph.ops++;
	d->op_phase = d->ph.phase;
	d->op = op;
	d->state = OP_READY;
	d->is_failed = false;
	d->start_ns = d->end_ns = d->paused_ns = d->pause_begin_ns = 0;
	if (d->is_scheduled)
		d->prev_intended_ns = d->intended_ns;
	d->prev_op = op;
	return (int)op;
}

int
th_timing_op_begin(struct th_timing_driver *d)
{
	if (!d->is_started)
		return -ENOTCONN;
	if (d->state != OP_NONE)
		return -EINPROGRESS;
	return th_timing_op_begin_as(d, draw_op(d), TH_TIMING_SCHEDULE);
}

/* Open a critical section from any state but OP_OPEN. */
static void
open_section(struct th_timing_driver *d)
{
	uint64_t now;

	switch (d->state) {
	case OP_READY:
		if (d->is_scheduled)
			th_timing_clock_sleep_until(d->clock, d->intended_ns);
		now = th_timing_clock_now(d->clock);
		d->start_ns = now;
		if (!d->is_scheduled)
			d->intended_ns = now;
		break;
	case OP_PAUSED:
		now = th_timing_clock_now(d->clock);
		if (now > d->pause_begin_ns)
			d->paused_ns += now - d->pause_begin_ns;
		break;
	default:
		break;
	}
	d->state = OP_OPEN;
}

int
th_timing_record_time(struct th_timing_driver *d)
{
	if (d->state == OP_NONE)
		return -ENOENT;
	if (d->cfg->ops[d->op].mode != TH_TIMING_MANUAL)
		return -EPERM;
	if (d->state == OP_OPEN) {
		d->end_ns = th_timing_clock_now(d->clock);
		d->state = OP_CLOSED;
	} else {
		open_section(d);
	}
	return 0;
}

int
th_timing_pause_time(struct th_timing_driver *d)
{
	if (d->state == OP_NONE)
		return -ENOENT;
	if (d->cfg->ops[d->op].mode != TH_TIMING_MANUAL)
		return -EPERM;
	switch (d->state) {
	case OP_READY:
		return -EINVAL;
	case OP_OPEN:
		d->end_ns = th_timing_clock_now(d->clock);
		/* fall through */
	case OP_CLOSED:
		d->pause_begin_ns = d->end_ns;
		d->state = OP_PAUSED;
		break;
	default:
		break;
	}
	return 0;
}

int
th_timing_op_run(struct th_timing_driver *d, th_timing_section_fn fn, void *arg)
{
	int rc;

	if (d->state == OP_NONE)
		return -ENOENT;
	if (d->cfg->ops[d->op].mode != TH_TIMING_AUTO)
		return -EPERM;
	/* Between two AUTO sections the client's own time is paused, as a transport would. */
	if (d->state == OP_CLOSED) {
		d->pause_begin_ns = d->end_ns;
		d->state = OP_PAUSED;
	}
	open_section(d);
	rc = fn != NULL ? fn(arg) : 0;
	d->end_ns = th_timing_clock_now(d->clock);
	d->state = OP_CLOSED;
	if (rc < 0)
		d->is_failed = true;
	return rc;
}

int
th_timing_op_end(struct th_timing_driver *d, bool is_ok, struct th_timing_op_info *info)
{
	struct th_timing_op_stats *o;
	struct th_timing_op_info oi;
	uint64_t span;

	if (d->state == OP_NONE)
		return -ENOENT;
	o = &d->stats.ops[d->op];
	memset(&oi, 0, sizeof(oi));
	oi.op = d->op;
	oi.seq = d->seq++;
	oi.phase = d->op_phase;
	if (d->state == OP_READY) {
		/* Nothing was timed: count it so it is not lost, but keep it out of every time. */
		if (d->op_phase == TH_TIMING_PHASE_STEADY)
			o->errors++;
		else
			o->outside++;
		oi.intended_ns = d->intended_ns;
		d->state = OP_NONE;
		if (info != NULL)
			*info = oi;
		return -EINVAL;
	}
	if (d->state == OP_OPEN)
		d->end_ns = th_timing_clock_now(d->clock);
	d->state = OP_NONE;

	oi.is_ok = is_ok && !d->is_failed;
	oi.intended_ns = d->intended_ns;
	oi.start_ns = d->start_ns;
	oi.end_ns = d->end_ns;
	oi.paused_ns = d->paused_ns;
	span = d->end_ns > d->start_ns ? d->end_ns - d->start_ns : 0;
	oi.service_ns = span > d->paused_ns ? span - d->paused_ns : 0;
	span = d->end_ns > d->intended_ns ? d->end_ns - d->intended_ns : 0;
	oi.response_ns = span > d->paused_ns ? span - d->paused_ns : 0;

	if (d->op_phase == TH_TIMING_PHASE_STEADY) {
		if (d->has_prev && d->cfg->delay != TH_TIMING_DELAY_NONE) {
			uint64_t from = d->cfg->delay == TH_TIMING_DELAY_CYCLE ? d->prev_start_ns
									       : d->prev_end_ns;

			d->stats.delay_count++;
			d->stats.delay_sum_ns +=
				d->start_ns > from ? (double)(d->start_ns - from) : 0;
		}
		if (oi.is_ok) {
			oi.is_counted = true;
			o->count++;
			if (d->start_ns > d->intended_ns &&
				d->start_ns - d->intended_ns > d->cfg->late_ns)
				o->late++;
			th_hist_record(&o->service, oi.service_ns);
			th_hist_record(&o->response, oi.response_ns);
		} else {
			o->errors++;
		}
		/* Without a time limit the steady window closes with its last operation. */
		if (d->end_ns > d->stats.steady_end_ns)
			d->stats.steady_end_ns = d->end_ns;
	} else {
		o->outside++;
	}
	d->has_prev = true;
	d->prev_start_ns = d->start_ns;
	d->prev_end_ns = d->end_ns;
	if (info != NULL)
		*info = oi;
	return 0;
}

const struct th_timing_stats *
th_timing_driver_stats(const struct th_timing_driver *d)
{
	return &d->stats;
}

/* ---- criteria ---- */

static void
add_check(struct th_timing_verdict *v, enum th_timing_check_kind kind, int op, double measured,
	double target, double tolerance, bool is_passed)
{
	struct th_timing_check *c;

	if (v->count >= TH_TIMING_MAX_CHECKS)
		return;
	c = &v->checks[v->count++];
	c->kind = kind;
	c->op = op;
	c->measured = measured;
	c->target = target;
	c->tolerance = tolerance;
	c->is_passed = is_passed;
	if (!is_passed)
		v->is_passed = false;
}

int
th_timing_evaluate(const struct th_timing_config *cfg, const struct th_timing_stats *s,
	struct th_timing_verdict *v)
{
	uint64_t total = 0, n;
	double rsum = 0.0;
	uint32_t i, k;

	memset(v, 0, sizeof(*v));
	v->is_passed = true;
	if (cfg->op_count != s->op_count || cfg->op_count > TH_TIMING_MAX_OPS)
		return -EINVAL;
	for (i = 0; i < cfg->op_count; i++) {
		total += s->ops[i].count;
		rsum += s->ops[i].response.mean * (double)s->ops[i].count;
	}

	for (k = 0; k < cfg->limit_count && k < TH_TIMING_MAX_LIMITS; k++) {
		const struct th_timing_limit *l = &cfg->limits[k];
		struct th_hist *all = NULL;
		const struct th_hist *h;
		uint64_t pv;

		if (l->op >= 0 && l->op < (int)cfg->op_count) {
			h = l->hist == TH_TIMING_HIST_SERVICE ? &s->ops[l->op].service
							      : &s->ops[l->op].response;
		} else {
			/* All operations together: merge into a scratch histogram. */
			all = malloc(sizeof(*all));
			if (all == NULL)
				return -ENOMEM;
			th_hist_init(all);
			for (i = 0; i < cfg->op_count; i++)
				th_hist_merge(all, l->hist == TH_TIMING_HIST_SERVICE
							   ? &s->ops[i].service
							   : &s->ops[i].response);
			h = all;
		}
		pv = th_hist_percentile(h, l->percentile);
		add_check(v, TH_TIMING_CHECK_PERCENTILE, l->op, (double)pv, (double)l->limit_ns,
			l->percentile, h->count > 0 && pv <= l->limit_ns);
		free(all);
	}

	if (cfg->mix_tolerance_pct >= 0.0) {
		double shares[TH_TIMING_MAX_OPS];

		if (th_timing_mix_shares(cfg, shares) != 0)
			return -EINVAL;
		for (i = 0; i < cfg->op_count; i++) {
			double obs = total ? 100.0 * (double)s->ops[i].count / (double)total : 0.0;
			double want = 100.0 * shares[i];

			add_check(v, TH_TIMING_CHECK_MIX, (int)i, obs, want, cfg->mix_tolerance_pct,
				total > 0 && fabs(obs - want) <= cfg->mix_tolerance_pct);
		}
	}

	if (cfg->cycle_tolerance_pct >= 0.0 && cfg->delay != TH_TIMING_DELAY_NONE) {
		double want = (double)cfg->delay_dist.mean_ns;
		double got = s->delay_count ? s->delay_sum_ns / (double)s->delay_count : 0.0;

		add_check(v, TH_TIMING_CHECK_CYCLE, -1, got, want, cfg->cycle_tolerance_pct,
			s->delay_count > 0 &&
				fabs(got - want) <= cfg->cycle_tolerance_pct / 100.0 * want);
	}

	if (cfg->little_tolerance_pct >= 0.0) {
		double x = th_timing_stats_throughput(s), w, l;

		n = s->threads;
		if (cfg->delay == TH_TIMING_DELAY_CYCLE)
			w = (double)cfg->delay_dist.mean_ns;
		else
			w = (total ? rsum / (double)total : 0.0) +
			    (cfg->delay == TH_TIMING_DELAY_THINK ? (double)cfg->delay_dist.mean_ns
								 : 0.0);
		l = x * w / 1e9;
		add_check(v, TH_TIMING_CHECK_LITTLE, -1, l, (double)n, cfg->little_tolerance_pct,
			n > 0 && total > 0 &&
				fabs(l / (double)n - 1.0) * 100.0 <= cfg->little_tolerance_pct);
	}
	return 0;
}
