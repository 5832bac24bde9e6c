/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * MFS extraction (Collie section 5.2). Every experiment costs testbed minutes.
 *
 * 1. Reduce (delta debugging): move the trigger's features one at a time to
 *    a benign value (th_wl_default()'s, or the nearest one the point can
 *    carry) and keep each move that still triggers. What cannot move is kept;
 *    because every kept move leaves a triggering point, the kept features
 *    form one consistent sufficient cause even where documented anomalies
 *    overlap (probing each feature against the trigger alone keeps only what
 *    every overlapping anomaly needs, i.e. their union: "dir=bidi mix" for a
 *    point inside both "dir=bidi sge>=3 mix" and "dir=bidi wqe_batch>=64 mix
 *    qp_count>=320").
 * 2. Bound each kept feature in the reduced context: other values of an
 *    enumerated one (a value that triggers joins the set only if it needs
 *    the same other conditions and triggers at the trigger's own values
 *    too), the interval of a numeric one by bisection between the benign
 *    value and the far end of the grid, the message pattern on its smallest
 *    and largest request. Bounding may free a feature validity held
 *    (wq_depth >= wqe_batch): reduce again.
 * 3. Benign values can be causes too (RC WRITE): one run per unconstrained
 *    enumerated feature at another value.
 * 4. Verify: the reduced point triggered when last moved; a few random points
 *    inside the MFS must trigger too. One that does not names a missing
 *    condition: walk from the reduced point toward it one feature at a time;
 *    the step that stops the anomaly is the feature to bound and add.
 * 5. Split: an enumerated condition with several values holds one cause
 *    only if no value needs less than the reduced point's (split_causes()).
 * 6. A reduction move of an enumerated feature can cross into a neighbouring
 *    cause (UD SEND moved to RC, where another anomaly fires): the MFS then
 *    excludes the trigger's own value. That MFS goes to the caller as a
 *    second cause, and 1-5 run again with the crossed feature kept and the
 *    other cause's values left out.
 *
 * About 30-50 experiments per anomaly (reduce 9, bound 20, benign values 3,
 * verify 8 on F), 50-80 after a crossing. Repeated points come from a cache.
 * No candidate reaches the oracle without passing th_wl_check(): a point the
 * hardware cannot run is skipped, never counted as "does not trigger".
 */

#include "th_anomaly.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "th_rng.h"

/* Points already run (the trigger first): a repeated candidate costs nothing. */
#define CACHE_SIZE 128

struct extract {
	const struct th_limits *l;
	th_mfs_oracle oracle;
	void *ctx;
	enum th_symptom s;
	const struct th_wl *trigger; /* the point the extraction started from */
	struct th_mfs other;         /* a neighbouring cause met in the first pass */
	bool has_other;
	int runs;        /* oracle calls, failed ones included */
	unsigned cached; /* entries written to cache[], ring after CACHE_SIZE */
	struct th_wl cache[CACHE_SIZE];
	bool hit[CACHE_SIZE];
};

enum { TRY_INVALID = -1, TRY_MISS = 0, TRY_HIT = 1 };

static void
remember(struct extract *x, const struct th_wl *wl, bool hit)
{
	unsigned i = x->cached++ % CACHE_SIZE;

	x->cache[i] = *wl;
	x->hit[i] = hit;
}

/* Run @p wl once (or recall it): TRY_HIT, TRY_MISS, or TRY_INVALID without running it. */
static int
try(struct extract *x, const struct th_wl *wl)
{
	unsigned i, n = x->cached < CACHE_SIZE ? x->cached : CACHE_SIZE;
	int r;

	if (th_wl_check(wl, x->l, NULL, 0) != 0)
		return TRY_INVALID;
	for (i = 0; i < n; i++)
		if (th_wl_equal(&x->cache[i], wl))
			return x->hit[i] ? TRY_HIT : TRY_MISS;
	r = x->oracle(x->ctx, wl, x->s);
	x->runs++;
	remember(x, wl, r > 0);
	return r > 0 ? TRY_HIT : TRY_MISS;
}

/*
 * Try every other value of enumerated feature @p f. An alternative the point
 * cannot carry as it is (UD with a READ, UD with 64 KiB messages) is tried
 * with its dependents moved (opcode SEND, messages cut to the MTU). When that
 * misses, one more run tells whether the moved dependents alone explain it
 * (then the alternative proves nothing) or the feature does.
 *
 * An alternative that triggers joins the set only when it is the same cause:
 * each other condition in @p others must still be needed there (moving it to
 * its benign value stops the anomaly), and it must show the symptom at the
 * trigger's own values too (holds_at_trigger()). Loopback traffic that
 * pauses on its own does not widen "dir=bidi sge>=3 ..." to
 * "dir=bidi|loopback sge>=3 ...", which would cover (and hide from the
 * search) the loopback anomaly's points.
 */
static bool benign(
	const struct extract *x, const struct th_wl *r, enum th_feat f, struct th_wl *out);

static bool
is_same_cause(struct extract *x, const struct th_wl *w, uint32_t others)
{
	unsigned g;

	for (g = 0; g < TH_F__COUNT; g++) {
		struct th_wl b;

		if ((others & (1u << g)) && benign(x, w, (enum th_feat)g, &b) &&
			try(x, &b) == TRY_HIT)
			return false;
	}
	return true;
}

/*
 * @p r with enumerated feature @p f at value @p v, dependents repaired (then
 * *@p repaired, when not NULL, is set). False when no repair makes it valid.
 */
static bool
with_value(const struct extract *x, const struct th_wl *r, enum th_feat f, unsigned v,
	struct th_wl *w, bool *repaired)
{
	bool is_valid;

	*w = *r;
	th_wl_set_enum_index(w, f, v);
	is_valid = th_wl_check(w, x->l, NULL, 0) == 0;
	if (repaired != NULL)
		*repaired = !is_valid;
	return is_valid || th_wl_repair(w, f, x->l) == 0;
}

/*
 * Whether value @p i of @p f shows the symptom at the trigger's own values
 * too (a point it cannot carry says nothing: true). The reduced point has
 * every other feature benign, and a neighbouring cause may need just those
 * benign values: H#17's small RC SENDs fire at the reduced point of H#15's
 * UD trigger, whose own requests are large. Taking RC into H#15's MFS would
 * make the search skip H#17's region.
 */
static bool
holds_at_trigger(struct extract *x, enum th_feat f, unsigned i)
{
	struct th_wl w;

	if (th_wl_enum_index(x->trigger, f) == i || !with_value(x, x->trigger, f, i, &w, NULL))
		return true;
	return try(x, &w) != TRY_MISS;
}

static void
probe_enum(struct extract *x, const struct th_wl *base, enum th_feat f, uint32_t others,
	struct th_mfs *out, uint32_t *hits)
{
	unsigned cur = th_wl_enum_index(base, f), n = th_feat_value_count(f), i;
	uint32_t set = 1u << cur;
	bool missed = false;

	for (i = 0; i < n; i++) {
		struct th_wl w, deps;
		bool repaired;
		int r;

		if (i == cur || !with_value(x, base, f, i, &w, &repaired))
			continue;
		/* A point of the neighbouring cause met in the first pass proves nothing here. */
		if (x->has_other && th_mfs_covers(&x->other, &w)) {
			missed = true;
			continue;
		}
		r = try(x, &w);
		if (r == TRY_HIT && is_same_cause(x, &w, others & ~(1u << f)) &&
			holds_at_trigger(x, f, i)) {
			set |= 1u << i;
			continue;
		}
		if (r == TRY_HIT) {
			missed = true;
			continue;
		}
		if (repaired) {
			deps = w;
			th_wl_set_enum_index(&deps, f, cur);
			if (try(x, &deps) == TRY_MISS)
				continue;
		}
		missed = true;
	}
	*hits = set;
	if (missed) {
		out->feats |= 1u << f;
		out->set[f] = set;
	}
}

/* Where the anomaly shows along one feature: bounds, and the outermost points that hit. */
struct interval {
	uint64_t lo, hi;     /* grid values; 0 / UINT64_MAX when unbounded */
	unsigned lo_i, hi_i; /* indexes of the lowest and highest points seen to trigger */
};

/*
 * The interval of @p vals (ascending, @p cur_i the base's own) where the
 * anomaly still shows: test each far end, bisect the side where it stops.
 * @p miss_i, when below @p n, is a point known not to trigger (the benign
 * value the reduction tried): on its side the boundary lies between it and
 * the base, so that side needs no far-end run and a shorter bisection; the
 * values beyond it are taken to miss as well (a bound at worst too narrow).
 */
static void
bisect(struct extract *x, const struct th_wl *pts, unsigned n, unsigned cur_i, const uint64_t *vals,
	unsigned miss_i, struct interval *iv)
{
	unsigned a, b, m;

	iv->lo = 0;
	iv->hi = UINT64_MAX;
	iv->lo_i = iv->hi_i = cur_i;
	if (n == 0)
		return;
	if (cur_i > 0 && miss_i >= cur_i && try(x, &pts[0]) == TRY_HIT) {
		iv->lo_i = 0;
	} else if (cur_i > 0) {
		/* pts[a] misses, pts[b] hits: the lower boundary lies between them. */
		for (a = miss_i < cur_i ? miss_i : 0, b = cur_i; b - a > 1;) {
			m = a + (b - a) / 2;
			if (try(x, &pts[m]) == TRY_HIT)
				b = m;
			else
				a = m;
		}
		iv->lo = vals[b];
		iv->lo_i = b;
	}
	if (cur_i + 1 < n && !(miss_i > cur_i && miss_i < n) && try(x, &pts[n - 1]) == TRY_HIT) {
		iv->hi_i = n - 1;
	} else if (cur_i + 1 < n) {
		for (a = cur_i, b = miss_i > cur_i && miss_i < n ? miss_i : n - 1; b - a > 1;) {
			m = a + (b - a) / 2;
			if (try(x, &pts[m]) == TRY_HIT)
				a = m;
			else
				b = m;
		}
		iv->hi = vals[a];
		iv->hi_i = a;
	}
}

/* Insert @p cur into ascending @p g (n values, room for one more); return its index. */
static unsigned
insert_cur(uint64_t *g, unsigned *n, uint64_t cur)
{
	unsigned i;

	for (i = 0; i < *n && g[i] < cur; i++)
		;
	if (i < *n && g[i] == cur)
		return i;
	memmove(g + i + 1, g + i, (*n - i) * sizeof(*g));
	g[i] = cur;
	(*n)++;
	return i;
}

/* After probing a feature, where the base moves: see th_mfs_extract(). */
enum move { MOVE_NONE, MOVE_LOW, MOVE_HIGH };

static void
move_base(struct th_wl *base, const struct th_wl *pts, const struct interval *iv, enum move mv)
{
	if (mv == MOVE_LOW)
		*base = pts[iv->lo_i];
	else if (mv == MOVE_HIGH)
		*base = pts[iv->hi_i];
}

/* Sentinel of probe_num()'s @p miss_v: no value known to miss. */
#define NO_MISS UINT64_MAX

static void
probe_num(struct extract *x, struct th_wl *base, enum th_feat f, enum move mv, uint64_t miss_v,
	struct th_mfs *out)
{
	uint64_t g[TH_WL_GRID_MAX + 1], vals[TH_WL_GRID_MAX + 1];
	struct th_wl pts[TH_WL_GRID_MAX + 1];
	unsigned n = th_wl_grid(f, base, x->l, g, TH_WL_GRID_MAX), k = 0, cur_i = 0, i;
	unsigned miss_i = UINT_MAX;
	uint64_t cur = th_wl_get(base, f);
	struct interval iv;

	insert_cur(g, &n, cur);
	for (i = 0; i < n; i++) {
		struct th_wl w = *base;

		th_wl_set(&w, f, g[i]);
		if (th_wl_check(&w, x->l, NULL, 0) != 0)
			continue;
		if (g[i] == cur)
			cur_i = k;
		if (g[i] == miss_v && miss_v != cur)
			miss_i = k;
		vals[k] = g[i];
		pts[k++] = w;
	}
	bisect(x, pts, k, cur_i, vals, miss_i, &iv);
	if (iv.lo != 0 || iv.hi != UINT64_MAX) {
		out->feats |= 1u << f;
		out->range[f].lo = iv.lo;
		out->range[f].hi = iv.hi;
	}
	if (k > 0)
		move_base(base, pts, &iv, mv);
}

/*
 * The trigger's pattern with its smallest request set to @p a and its largest
 * to @p b, the others clamped between them: moves one end of the pattern
 * while keeping its shape (a one-request pattern grows a second request).
 */
static void
make_pattern(const struct th_wl *base, uint64_t a, uint64_t b, struct th_wl *w)
{
	uint32_t mn = th_wl_msg_min(base), mx = th_wl_msg_max(base);
	unsigned i, imin = 0, imax = TH_WL_MSGS_MAX, n = base->n_msgs;

	*w = *base;
	for (i = 0; i < n; i++)
		if (base->msg[i] == mn) {
			imin = i;
			break;
		}
	for (i = 0; i < n; i++)
		if (base->msg[i] == mx && i != imin) {
			imax = i;
			break;
		}
	for (i = 0; i < n; i++)
		w->msg[i] = (uint32_t)(base->msg[i] < a ? a : base->msg[i] > b ? b : base->msg[i]);
	w->msg[imin] = (uint32_t)a;
	if (imax < TH_WL_MSGS_MAX)
		w->msg[imax] = (uint32_t)b;
	else if (a != b && n < TH_WL_MSGS_MAX)
		w->msg[w->n_msgs++] = (uint32_t)b;
}

/*
 * The message pattern as two numeric features: its smallest request (moved
 * between the grid's smallest and the largest request, "large only" at the
 * top) and its largest (moved between the smallest request, "small only", and
 * the largest the point can carry). The base then moves to the smallest
 * largest request that still triggered, which lets mr_size go lower.
 */
static void
probe_msg(struct extract *x, struct th_wl *base, struct th_mfs *out)
{
	uint64_t g[TH_WL_GRID_MAX + 1], vals[TH_WL_GRID_MAX + 1];
	uint64_t mn = th_wl_msg_min(base), mx = th_wl_msg_max(base);
	struct th_range r[2];
	struct th_wl pts[TH_WL_GRID_MAX + 1];
	struct interval iv = {0, UINT64_MAX, 0, 0};
	unsigned n, k = 0, cur_i, i, side;

	for (side = 0; side < 2; side++) {
		n = th_wl_grid(TH_F_MSG, base, x->l, g, TH_WL_GRID_MAX);
		insert_cur(g, &n, side == 0 ? mn : mx);
		for (i = 0, k = 0, cur_i = 0; i < n; i++) {
			struct th_wl w;

			if (side == 0 ? g[i] > mx : g[i] < mn)
				continue;
			make_pattern(base, side == 0 ? g[i] : mn, side == 0 ? mx : g[i], &w);
			if (g[i] == (side == 0 ? mn : mx)) {
				cur_i = k;
				w = *base;
			}
			if (th_wl_check(&w, x->l, NULL, 0) != 0)
				continue;
			vals[k] = g[i];
			pts[k++] = w;
		}
		bisect(x, pts, k, cur_i, vals, UINT_MAX, &iv);
		r[side].lo = iv.lo;
		r[side].hi = iv.hi;
	}
	if (r[0].lo != 0 || r[0].hi != UINT64_MAX || r[1].lo != 0 || r[1].hi != UINT64_MAX) {
		out->feats |= 1u << TH_F_MSG;
		out->msg_min = r[0];
		out->msg_max = r[1];
	}
	if (k > 0)
		move_base(base, pts, &iv, MOVE_LOW);
}

/*
 * Order of the reduction: a feature that bounds another's legal values goes
 * first (wqe_batch before wq_depth, sge before the pattern, mr_count before
 * mr_size), so the later one can reach its benign value.
 */
static const enum th_feat reduce_order[] = {
	TH_F_MEM,
	TH_F_DIR,
	TH_F_QP_TYPE,
	TH_F_OPCODE,
	TH_F_MTU,
	TH_F_WQE_BATCH,
	TH_F_WQ_DEPTH,
	TH_F_SGE,
	TH_F_QP_COUNT,
	TH_F_MR_COUNT,
	TH_F_MR_SIZE,
	TH_F_MSG,
};

#define REDUCE_COUNT (sizeof(reduce_order) / sizeof(reduce_order[0]))

/* How far apart two sizes are on a log scale, as a ratio >= 1 (no libm needed). */
static double
ratio(uint64_t a, uint64_t b)
{
	double x = a != 0 ? (double)a : 0.5, y = b != 0 ? (double)b : 0.5;

	return x > y ? x / y : y / x;
}

/*
 * @p r with feature @p f at its benign value: th_wl_default()'s, or, when
 * the rest of @p r cannot carry that (wq_depth below a kept wqe_batch, a
 * 64 KiB request on UD), the legal grid value nearest to it; the pattern
 * becomes one request. False when there is nothing to move: @p r is benign
 * in @p f already, or validity fixes @p f (UD leaves only SEND).
 */
static bool
benign(const struct extract *x, const struct th_wl *r, enum th_feat f, struct th_wl *out)
{
	uint64_t g[TH_WL_GRID_MAX], d;
	double best = 0;
	struct th_wl def;
	unsigned n, i;

	th_wl_default(&def);
	*out = *r;
	th_wl_copy_feat(out, &def, f);
	if (th_wl_check(out, x->l, NULL, 0) == 0)
		return !th_wl_equal(out, r);
	if (th_feat_is_enum(f))
		return false;
	d = th_wl_get(&def, f);
	n = th_wl_grid(f, r, x->l, g, TH_WL_GRID_MAX);
	for (i = 0; i < n; i++) {
		struct th_wl w = *r;

		th_wl_set(&w, f, g[i]);
		if ((best == 0 || ratio(g[i], d) < best) && th_wl_check(&w, x->l, NULL, 0) == 0) {
			best = ratio(g[i], d);
			*out = w;
		}
	}
	return best != 0 && !th_wl_equal(out, r);
}

/*
 * Delta-debugging reduction: move the features of @p r to their benign
 * values one at a time and keep every move that still triggers. Each kept
 * move leaves a triggering point, so what survives is one consistent
 * sufficient cause: when the trigger lies where two anomalies overlap, the
 * first move that breaks one of them is kept (the other still fires) and the
 * result is the other one exactly, never the union of both (testing each
 * feature against the trigger alone drops every feature either of them
 * covers). Features in @p skip stay. @return the features that could not
 * move (bit per enum th_feat).
 */
static uint32_t
reduce(struct extract *x, struct th_wl *r, uint32_t skip)
{
	uint32_t kept = 0;
	unsigned i;

	for (i = 0; i < REDUCE_COUNT; i++) {
		enum th_feat f = reduce_order[i];
		struct th_wl w;

		if ((skip & (1u << f)) || !benign(x, r, f, &w))
			continue;
		if (try(x, &w) == TRY_HIT)
			*r = w;
		else
			kept |= 1u << f;
	}
	return kept;
}

/*
 * The condition of each kept feature, measured in the reduced context (every
 * other feature benign or kept): the other values of an enumerated one, the
 * interval of a numeric one by bisection. Each probe starts from @p r, a
 * triggering point, and may leave it at the end of the feature's interval
 * that gives the next features the most room: a small wqe_batch lets
 * wq_depth go low, many SGEs and then small requests let mr_size go low.
 */
static void
bound(struct extract *x, struct th_wl *r, uint32_t kept, uint32_t all, struct th_mfs *out)
{
	static const struct {
		enum th_feat f;
		enum move mv;
	} nums[] = {
		{TH_F_WQE_BATCH, MOVE_LOW},
		{TH_F_WQ_DEPTH, MOVE_NONE},
		{TH_F_QP_COUNT, MOVE_NONE},
		{TH_F_SGE, MOVE_HIGH},
		{TH_F_MSG, MOVE_LOW},
		{TH_F_MR_SIZE, MOVE_LOW},
		{TH_F_MR_COUNT, MOVE_NONE},
	};
	struct th_wl w;
	uint32_t hits;
	unsigned i;

	for (i = 0; i < TH_F__COUNT; i++)
		if (th_feat_is_enum((enum th_feat)i) && (kept & (1u << i)))
			probe_enum(x, r, (enum th_feat)i, all, out, &hits);
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (!(kept & (1u << nums[i].f)))
			continue;
		if (nums[i].f == TH_F_MSG)
			probe_msg(x, r, out);
		else if (benign(x, r, nums[i].f, &w))
			probe_num(x, r, nums[i].f, nums[i].mv, th_wl_get(&w, nums[i].f), out);
		else
			probe_num(x, r, nums[i].f, nums[i].mv, NO_MISS, out);
	}
}

/*
 * A cause may include a benign value (RC WRITE, 4 KiB MTU: the paper's #7,
 * #8 and #10 need WRITE), which the reduction cannot see because it never
 * moves a feature away from its benign value. One run per unconstrained
 * enumerated feature settles it: the first other value the point can carry;
 * when that stops the anomaly, the feature gets its set like a kept one.
 */
static void
check_benign_enums(struct extract *x, const struct th_wl *r, uint32_t kept, struct th_mfs *out)
{
	uint32_t hits;
	unsigned i, v, n;

	for (i = 0; i < TH_F__COUNT; i++) {
		enum th_feat f = (enum th_feat)i;
		unsigned cur = th_wl_enum_index(r, f);

		if (!th_feat_is_enum(f) || ((kept | out->feats) & (1u << f)))
			continue;
		for (v = 0, n = th_feat_value_count(f); v < n; v++) {
			struct th_wl w = *r;

			if (v == cur)
				continue;
			th_wl_set_enum_index(&w, f, v);
			if (th_wl_check(&w, x->l, NULL, 0) != 0)
				continue;
			if (try(x, &w) == TRY_MISS)
				probe_enum(x, r, f, kept, out, &hits);
			break;
		}
	}
}

/* Pin feature @p f of @p out to @p w's exact value. */
static void
pin(struct th_mfs *out, const struct th_wl *w, enum th_feat f)
{
	out->feats |= 1u << f;
	if (f == TH_F_MSG) {
		out->msg_min.lo = out->msg_min.hi = th_wl_msg_min(w);
		out->msg_max.lo = out->msg_max.hi = th_wl_msg_max(w);
	} else if (th_feat_is_enum(f)) {
		out->set[f] = 1u << th_wl_enum_index(w, f);
	} else {
		out->range[f].lo = out->range[f].hi = th_wl_get(w, f);
	}
}

static void
intersect(struct th_range *a, const struct th_range *b)
{
	if (b->lo > a->lo)
		a->lo = b->lo;
	if (b->hi < a->hi)
		a->hi = b->hi;
}

/*
 * The interval of numeric feature @p f where the anomaly shows, measured at
 * @p q (a triggering point) by bisection. False when it shows across the
 * whole grid: no bound.
 */
static bool
measure_num(struct extract *x, const struct th_wl *q, enum th_feat f, struct th_range *r)
{
	struct th_wl w = *q;
	struct th_mfs t;

	memset(&t, 0, sizeof(t));
	probe_num(x, &w, f, MOVE_NONE, NO_MISS, &t);
	*r = t.range[f];
	return (t.feats & (1u << f)) != 0;
}

/*
 * Add a condition on @p f measured at @p q (a triggering point) to @p m, or
 * narrow the one @p m has: the measured one contains @p q's value, which @p m's
 * contains too, so the result is never empty.
 */
static void
add_condition(struct extract *x, const struct th_wl *q, enum th_feat f, struct th_mfs *m)
{
	bool had = m->feats & (1u << f);
	struct th_wl w = *q;
	struct th_mfs t;
	uint32_t hits;

	memset(&t, 0, sizeof(t));
	if (th_feat_is_enum(f)) {
		probe_enum(x, &w, f, 0, &t, &hits);
		m->set[f] = had ? m->set[f] & hits : hits;
	} else if (f == TH_F_MSG) {
		probe_msg(x, &w, &t);
		if (!(t.feats & (1u << f)))
			pin(&t, q, f);
		if (had) {
			intersect(&m->msg_min, &t.msg_min);
			intersect(&m->msg_max, &t.msg_max);
		} else {
			m->msg_min = t.msg_min;
			m->msg_max = t.msg_max;
		}
	} else {
		struct th_range r;

		if (!measure_num(x, q, f, &r))
			r.lo = r.hi = th_wl_get(q, f);
		if (had)
			intersect(&m->range[f], &r);
		else
			m->range[f] = r;
	}
	m->feats |= 1u << f;
}

/* Let @p m's condition on @p f admit @p w's value too. */
void
th_mfs_widen(struct th_mfs *m, const struct th_wl *w, enum th_feat f)
{
	uint64_t v = th_wl_get(w, f), mn = th_wl_msg_min(w), mx = th_wl_msg_max(w);

	if (!(m->feats & (1u << f)))
		return;
	if (th_feat_is_enum(f)) {
		m->set[f] |= 1u << th_wl_enum_index(w, f);
	} else if (f == TH_F_MSG) {
		m->msg_min.lo = mn < m->msg_min.lo ? mn : m->msg_min.lo;
		m->msg_min.hi = mn > m->msg_min.hi ? mn : m->msg_min.hi;
		m->msg_max.lo = mx < m->msg_max.lo ? mx : m->msg_max.lo;
		m->msg_max.hi = mx > m->msg_max.hi ? mx : m->msg_max.hi;
	} else {
		m->range[f].lo = v < m->range[f].lo ? v : m->range[f].lo;
		m->range[f].hi = v > m->range[f].hi ? v : m->range[f].hi;
	}
}

void
th_mfs_widen_to(struct th_mfs *m, const struct th_wl *w, const struct th_limits *l)
{
	uint32_t failing = th_mfs_failing(m, w);
	unsigned f;

	for (f = 0; f < TH_F__COUNT; f++)
		if (failing & (1u << f))
			th_mfs_widen(m, w, (enum th_feat)f);
	th_mfs_drop_void(m, l);
}

/*
 * @p p lies inside @p m but did not trigger, so @p m lacks a condition. Walk
 * from the reduced point @p r toward @p p one feature at a time, keeping each
 * step that still triggers; the first step that does not names the feature,
 * which gets a condition measured where it mattered. The trigger @p trig
 * stays covered (it showed the anomaly, whatever the walk found) unless an
 * enumerated condition excludes it already: @p m then describes a
 * neighbouring cause (th_mfs_extract()), which the trigger's values would
 * only widen over points of neither.
 */
static void
tighten(struct extract *x, const struct th_wl *r, const struct th_wl *p, const struct th_wl *trig,
	struct th_mfs *m)
{
	struct th_wl q = *r;
	unsigned pass, i;

	/* A step the point cannot carry yet may fit after later ones: two passes. */
	for (pass = 0; pass < 2; pass++) {
		bool is_moved = false;

		for (i = 0; i < REDUCE_COUNT; i++) {
			enum th_feat f = reduce_order[i];
			struct th_wl w = q;

			th_wl_copy_feat(&w, p, f);
			if (th_wl_equal(&w, &q) || th_wl_check(&w, x->l, NULL, 0) != 0)
				continue;
			if (try(x, &w) == TRY_HIT) {
				q = w;
				is_moved = true;
				continue;
			}
			add_condition(x, &q, f, m);
			if (!(th_mfs_failing(m, trig) & ~(1u << f) & th_feat_enum_mask()))
				th_mfs_widen(m, trig, f);
			return;
		}
		if (!is_moved)
			return;
	}
}

/* Random points inside the MFS run to verify it, and tightening rounds at most. */
#define VERIFY_POINTS 3
#define TIGHTEN_MAX 2
/* Draws (free: nothing runs) to find one valid point inside the MFS. */
#define DRAWS_MAX 64

/* A value of feature @p f that @p m allows, drawn at random, written into @p p. */
static void
draw_allowed(const struct th_limits *l, const struct th_mfs *m, enum th_feat f, struct th_rng *rng,
	struct th_wl *p)
{
	uint64_t g[32], v;
	unsigned n = 0, i;

	if (th_feat_is_enum(f)) {
		for (i = 0; i < 32; i++)
			if (m->set[f] & (1u << i))
				g[n++] = i;
		if (n != 0)
			th_wl_set_enum_index(p, f, (unsigned)g[th_rng_below(rng, n)]);
		return;
	}
	if (th_wl_grid_pick(f, p, l, m->range[f].lo, m->range[f].hi, rng, &v))
		th_wl_set(p, f, v);
}

/*
 * Whether @p p, once the features @p m constrains are repaired where it is
 * invalid, is a valid point inside @p m.
 */
static bool
fits(const struct th_limits *l, const struct th_mfs *m, struct th_wl *p)
{
	unsigned f;

	if (th_wl_check(p, l, NULL, 0) != 0)
		for (f = 0; f < TH_F__COUNT; f++)
			if (m->feats & (1u << f))
				th_wl_repair(p, (enum th_feat)f, l);
	return th_wl_check(p, l, NULL, 0) == 0 && th_mfs_covers(m, p);
}

/*
 * A random pattern inside @p m's message bounds on @p p's grid: 1-16
 * requests, the smallest drawn inside msg_min's interval, the largest inside
 * msg_max's, the rest between them. Unchanged when the bounds admit none.
 */
static void
draw_pattern(const struct th_limits *l, const struct th_mfs *m, struct th_rng *rng, struct th_wl *p)
{
	uint64_t mn, mx, v;
	unsigned i;

	if (!th_wl_grid_pick(TH_F_MSG, p, l, m->msg_min.lo, m->msg_min.hi, rng, &mn) ||
		!th_wl_grid_pick(TH_F_MSG, p, l, m->msg_max.lo, m->msg_max.hi, rng, &mx) || mn > mx)
		return;
	memset(p->msg, 0, sizeof(p->msg));
	p->n_msgs = (uint8_t)(1 + th_rng_below(rng, TH_WL_MSGS_MAX));
	if (p->n_msgs == 1 && mn != mx)
		p->n_msgs = 2;
	p->msg[0] = (uint32_t)mn;
	p->msg[p->n_msgs - 1] = (uint32_t)mx;
	for (i = 1; i + 1 < p->n_msgs; i++) {
		v = mn;
		th_wl_grid_pick(TH_F_MSG, p, l, mn, mx, rng, &v);
		p->msg[i] = (uint32_t)v;
	}
}

/* Draws th_mfs_draw() makes: enough for four enumerated conditions of one value each. */
#define DRAW_TRIES 4096

int
th_mfs_draw(
	const struct th_mfs *m, const struct th_limits *l, struct th_rng *rng, struct th_wl *out)
{
	unsigned d, f;

	if (m == NULL || l == NULL || rng == NULL || out == NULL)
		return -EINVAL;
	for (d = 0; d < DRAW_TRIES; d++) {
		/*
		 * Enumerated conditions by rejection, so that the features they
		 * shape (UD caps the pattern at the MTU) come as a random point
		 * has them; numeric ones are then drawn inside their bounds.
		 */
		th_wl_random(out, l, rng);
		if (th_mfs_failing(m, out) & th_feat_enum_mask())
			continue;
		for (f = 0; f < TH_F__COUNT; f++) {
			if (!(m->feats & (1u << f)) || th_feat_is_enum((enum th_feat)f))
				continue;
			if (f == TH_F_MSG)
				draw_pattern(l, m, rng, out);
			else
				draw_allowed(l, m, (enum th_feat)f, rng, out);
		}
		if (fits(l, m, out))
			return 0;
	}
	return -ENOENT;
}

/*
 * A random valid point inside @p m other than @p r: every unconstrained
 * feature drawn anew, each constrained one either @p r's value or another
 * value the condition allows (the pattern: @p r's, or a random one that
 * happens to satisfy it). False when no draw fitted.
 */
static bool
draw_inside(struct extract *x, const struct th_wl *r, const struct th_mfs *m, struct th_rng *rng,
	struct th_wl *p)
{
	unsigned d, f;

	for (d = 0; d < DRAWS_MAX; d++) {
		th_wl_random(p, x->l, rng);
		for (f = 0; f < TH_F__COUNT; f++) {
			if (!(m->feats & (1u << f)))
				continue;
			if (th_rng_below(rng, 2) == 0)
				th_wl_copy_feat(p, r, (enum th_feat)f);
			else if (f != TH_F_MSG)
				draw_allowed(x->l, m, (enum th_feat)f, rng, p);
		}
		if (fits(x->l, m, p) && !th_wl_equal(p, r))
			return true;
	}
	return false;
}

/* A seed from the trigger, so that extraction stays deterministic. */
static uint64_t
seed_of(const struct th_wl *wl)
{
	char text[512];
	uint64_t h = UINT64_C(1469598103934665603);
	int i, n = th_wl_format(wl, text, sizeof(text));

	for (i = 0; i < n && i < (int)sizeof(text) - 1; i++)
		h = (h ^ (unsigned char)text[i]) * UINT64_C(1099511628211);
	return h;
}

/*
 * The reduced point triggered when the reduction last moved it (or is the
 * trigger), so it needs no second run; what is left to check is that the
 * conditions suffice elsewhere: a few random points inside them must trigger.
 */
static void
verify(struct extract *x, const struct th_wl *r, const struct th_wl *trig, struct th_mfs *m)
{
	struct th_rng rng;
	unsigned i, tightened = 0;

	th_rng_seed(&rng, seed_of(trig));
	for (i = 0; i < VERIFY_POINTS; i++) {
		struct th_wl p;

		if (!draw_inside(x, r, m, &rng, &p) || try(x, &p) == TRY_HIT)
			continue;
		if (tightened++ == TIGHTEN_MAX)
			break;
		tighten(x, r, &p, trig, m);
	}
}

/* Ways to break a numeric condition: above or below its range; four for the pattern. */
static unsigned
side_count(enum th_feat g)
{
	return g == TH_F_MSG ? 4 : 2;
}

/*
 * @p w with numeric condition @p g of @p m broken on side @p sd (below
 * side_count(g)): the nearest grid value past the bound when @p is_far is
 * false, the farthest otherwise. The pattern's sides: its largest request
 * past msg_max, its smallest below msg_min, its largest below msg_max (all
 * small), its smallest past msg_min (all large), so a mixed pattern's
 * "msg_min<=1024 msg_max>=65536" breaks too. False when no valid point
 * lies on that side.
 */
static bool
outside(const struct extract *x, const struct th_wl *w, const struct th_mfs *m, enum th_feat g,
	unsigned sd, bool is_far, struct th_wl *out)
{
	const struct th_range *r = &m->range[g];
	bool is_above = sd == 0 || sd == 3, moves_max = sd == 0 || sd == 2;
	uint64_t v[TH_WL_GRID_MAX];
	unsigned n = th_wl_grid(g, w, x->l, v, TH_WL_GRID_MAX), i;

	if (g == TH_F_MSG)
		r = moves_max ? &m->msg_max : &m->msg_min;
	for (i = 0; i < n; i++) {
		/* nearest first: up from a bound above, down from one below */
		uint64_t u = v[is_above != is_far ? i : n - 1 - i];
		uint64_t lo = th_wl_msg_min(w), hi = th_wl_msg_max(w);

		if (is_above ? u <= r->hi : u >= r->lo)
			continue;
		if (g == TH_F_MSG) {
			if (moves_max) {
				hi = u;
				lo = lo < u ? lo : u;
			} else {
				lo = u;
				hi = hi > u ? hi : u;
			}
			make_pattern(w, lo, hi, out);
		} else {
			*out = *w;
			th_wl_set(out, g, u);
		}
		if (th_wl_check(out, x->l, NULL, 0) == 0)
			return true;
	}
	return false;
}

/* @p w with numeric feature @p g at the end of its grid farther (log scale) from @p w's value. */
static bool
far_end(const struct extract *x, const struct th_wl *w, enum th_feat g, struct th_wl *out)
{
	uint64_t v[TH_WL_GRID_MAX], cur = th_wl_get(w, g);
	unsigned n = th_wl_grid(g, w, x->l, v, TH_WL_GRID_MAX);

	if (n == 0)
		return false;
	*out = *w;
	th_wl_set(out, g, ratio(cur, v[0]) > ratio(cur, v[n - 1]) ? v[0] : v[n - 1]);
	if (th_wl_check(out, x->l, NULL, 0) != 0 && th_wl_repair(out, g, x->l) != 0)
		return false;
	return !th_wl_equal(out, w);
}

/* Numeric features other than the pattern that @p m leaves free. */
static bool
is_free_num(const struct th_mfs *m, unsigned g)
{
	return !th_feat_is_enum((enum th_feat)g) && g != TH_F_MSG && !(m->feats & (1u << g));
}

/*
 * Whether value @p v of @p f shows the symptom with one of @p m's numeric
 * conditions broken, near its bound and far from it, where @p r (another
 * value) stops just past the bound: then @p v needs less than @p r's value
 * does, a cause of its own. A bound @p r does not stop at (one widened to
 * the trigger, or pinned) says nothing.
 */
static bool
needs_less(struct extract *x, const struct th_wl *r, const struct th_mfs *m, enum th_feat f,
	unsigned v)
{
	struct th_wl w, near, far, r_near;
	unsigned g, sd;

	if (!with_value(x, r, f, v, &w, NULL))
		return false;
	for (g = 0; g < TH_F__COUNT; g++) {
		if (th_feat_is_enum((enum th_feat)g) || !(m->feats & (1u << g)))
			continue;
		for (sd = 0; sd < side_count((enum th_feat)g); sd++)
			if (outside(x, &w, m, (enum th_feat)g, sd, false, &near) &&
				outside(x, &w, m, (enum th_feat)g, sd, true, &far) &&
				outside(x, r, m, (enum th_feat)g, sd, false, &r_near) &&
				try(x, &near) == TRY_HIT && try(x, &far) == TRY_HIT &&
				try(x, &r_near) == TRY_MISS)
				return true;
	}
	return false;
}

/*
 * The reduced point's value may need a condition the MFS lacks because a
 * benign value meets it (H#17's small batches: the reduction moved
 * wqe_batch to 1 and kept it there). The trigger's own value @p v, when it
 * differs, is checked against each such free feature: one run with all of
 * them at their far ends settles most MFS; otherwise, per feature, where
 * the reduced point misses at the far end (moved dependents still inside
 * the MFS), @p v still shows the symptom there, and a bound on the feature
 * is measured at @p r, @p v leaves the set and the bound joins the MFS.
 */
static void
split_free(struct extract *x, const struct th_wl *r, struct th_mfs *m, enum th_feat f, unsigned v)
{
	struct th_wl all = *r, far, w, wf;
	struct th_range bound;
	unsigned g;

	for (g = 0; g < TH_F__COUNT; g++)
		if (is_free_num(m, g) && far_end(x, &all, (enum th_feat)g, &far))
			all = far;
	if ((!th_wl_equal(&all, r) && try(x, &all) == TRY_HIT) || !with_value(x, r, f, v, &w, NULL))
		return;
	for (g = 0; g < TH_F__COUNT; g++) {
		if (!is_free_num(m, g) || !far_end(x, r, (enum th_feat)g, &far) ||
			th_mfs_failing(m, &far) != 0 || try(x, &far) != TRY_MISS ||
			!far_end(x, &w, (enum th_feat)g, &wf) || try(x, &wf) != TRY_HIT)
			continue;
		if (!measure_num(x, r, (enum th_feat)g, &bound))
			continue;
		m->set[f] &= ~(1u << v);
		m->feats |= 1u << g;
		m->range[g] = bound;
		return;
	}
}

/*
 * An enumerated condition that admits several values claims one cause for
 * all of them, but what probe_enum() checked was measured before later
 * rounds, tightening and the benign-value runs added conditions, at the
 * reduced point's value only. A value that needs less than that value
 * (H#15's UD SENDs pause in batches of any size, H#17's RC SENDs only in
 * small ones) is a cause of its own and leaves the set: one MFS for both
 * would cover, and hide from the search, the points of the cause that needs
 * more. When the trigger's own value leaves, th_mfs_extract() reports the
 * rest as a second cause and extracts the trigger's own; in that second
 * pass (@p keep_own) the trigger's value stays, since the MFS is widened to
 * the trigger anyway. Runs only for conditions with several values.
 */
static void
split_causes(struct extract *x, const struct th_wl *r, bool keep_own, struct th_mfs *m)
{
	unsigned f, v;

	for (f = 0; f < TH_F__COUNT; f++) {
		unsigned cur = th_wl_enum_index(r, (enum th_feat)f);
		unsigned own = th_wl_enum_index(x->trigger, (enum th_feat)f);

		if (!th_feat_is_enum((enum th_feat)f) || !(m->feats & (1u << f)) ||
			__builtin_popcount(m->set[f]) < 2)
			continue;
		if (own != cur && (m->set[f] & (1u << own)) && !keep_own)
			split_free(x, r, m, (enum th_feat)f, own);
		for (v = 0; v < th_feat_value_count((enum th_feat)f); v++)
			if (v != cur && (m->set[f] & (1u << v)) && !(keep_own && v == own) &&
				needs_less(x, r, m, (enum th_feat)f, v))
				m->set[f] &= ~(1u << v);
	}
}

/*
 * One extraction from @p trigger into @p out; @p red gets the reduced point
 * (it triggered when last moved). Features in @p pinned never move to a
 * benign value: they are kept and bounded like any feature that could not.
 */
static void
extract_pass(struct extract *x, const struct th_wl *trigger, uint32_t pinned, struct th_mfs *out,
	struct th_wl *red)
{
	uint32_t kept = 0, fresh;
	unsigned round;

	memset(out, 0, sizeof(*out));
	out->symptom = (uint8_t)x->s;
	*red = *trigger;
	/*
	 * Bounding may move the reduced point (a kept wqe_batch down to its
	 * lowest triggering value), which can free a feature validity held
	 * away from its benign value (wq_depth >= wqe_batch): reduce again
	 * until nothing new is kept, so that no condition hides behind another.
	 */
	for (round = 0; round < 3; round++) {
		fresh = reduce(x, red, kept | pinned);
		if (round == 0)
			fresh |= pinned;
		if (fresh == 0)
			break;
		bound(x, red, fresh, kept | fresh, out);
		kept |= fresh;
	}
	check_benign_enums(x, red, kept, out);
	/* Verification draws from one cause, and may add a condition a second split needs. */
	split_causes(x, red, pinned != 0, out);
	verify(x, red, trigger, out);
	split_causes(x, red, pinned != 0, out);
}

/*
 * The state of one extraction (or refinement) from @p trigger, which the
 * caller saw show the symptom (it costs no experiment); NULL without memory.
 */
static struct extract *
extract_new(const struct th_wl *trigger, enum th_symptom s, const struct th_limits *l,
	th_mfs_oracle oracle, void *ctx)
{
	struct extract *x = malloc(sizeof(*x));

	if (x == NULL)
		return NULL;
	*x = (struct extract){.l = l, .oracle = oracle, .ctx = ctx, .s = s, .trigger = trigger};
	remember(x, trigger, true);
	return x;
}

int
th_mfs_refine(struct th_mfs *m, const struct th_wl *base, enum th_symptom s,
	const struct th_limits *l, th_mfs_oracle oracle, void *ctx)
{
	struct extract *x;
	unsigned g;
	int runs;

	if (m == NULL || base == NULL || l == NULL || oracle == NULL ||
		(unsigned)s >= TH_SYM__COUNT || th_wl_check(base, l, NULL, 0) != 0 ||
		!th_mfs_covers(m, base))
		return -EINVAL;
	x = extract_new(base, s, l, oracle, ctx);
	if (x == NULL)
		return -ENOMEM;
	for (g = 0; g < TH_F__COUNT; g++) {
		struct th_range r;

		if (is_free_num(m, g) && measure_num(x, base, (enum th_feat)g, &r)) {
			m->feats |= 1u << g;
			m->range[g] = r;
		}
	}
	runs = x->runs;
	free(x);
	return runs;
}

int
th_mfs_extract(const struct th_wl *trigger, enum th_symptom s, const struct th_limits *l,
	th_mfs_oracle oracle, void *ctx, struct th_mfs *out, struct th_mfs_side *side,
	struct th_wl *reduced)
{
	struct extract *x;
	struct th_wl red;
	uint32_t crossed;
	int runs;

	if (side != NULL)
		memset(side, 0, sizeof(*side));
	if (trigger == NULL || l == NULL || oracle == NULL || out == NULL ||
		(unsigned)s >= TH_SYM__COUNT || th_wl_check(trigger, l, NULL, 0) != 0)
		return -EINVAL;
	x = extract_new(trigger, s, l, oracle, ctx);
	if (x == NULL)
		return -ENOMEM;
	extract_pass(x, trigger, 0, out, &red);
	/*
	 * A reduction move that changed an enumerated feature can leave the
	 * trigger's cause for a neighbouring one that also fires there (UD
	 * SEND moved to RC, where Table 2's #6 holds beside #2): the MFS then
	 * excludes the trigger's own value. That MFS is a second cause, met at
	 * the reduced point; the trigger's own comes from a second pass that
	 * keeps those features where the trigger has them. Widening the first
	 * MFS to the trigger instead would join both causes into one that
	 * holds for neither (and hide #6 behind #2's trigger). The second pass
	 * never takes a value in on a point inside the first cause's MFS: the
	 * symptom there is that cause's (H#17's RC beside H#15's UD trigger).
	 */
	crossed = th_mfs_failing(out, trigger) & th_feat_enum_mask();
	if (crossed != 0) {
		if (th_mfs_covers(out, &red)) {
			if (side != NULL) {
				side->mfs = *out;
				th_mfs_drop_void(&side->mfs, l);
				side->at = red;
				side->is_set = true;
			}
			x->other = *out;
			x->has_other = true;
		}
		extract_pass(x, trigger, crossed, out, &red);
	}
	/*
	 * Conditions measured in the reduced context may exclude the trigger's
	 * own value of a feature (4 KiB MTU needed with one 64 KiB request, the
	 * trigger ran 2 KiB with its own pattern). The trigger showed the
	 * anomaly, so its values belong in: otherwise the search meets the
	 * same point again and records it as new.
	 */
	th_mfs_widen_to(out, trigger, l);
	if (reduced != NULL)
		*reduced = red;
	runs = x->runs;
	free(x);
	return runs;
}
