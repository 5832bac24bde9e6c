/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * MFS extraction (Collie section 5.2). Every experiment costs testbed minutes,
 * so each feature is probed against the trigger alone: enumerated features
 * try each other legal value (2 experiments at most), numeric ones test the
 * far ends of their grid and bisect only the side where the anomaly stops
 * (about log2 of the grid per side), the message pattern probes its smallest
 * and its largest request the same way. A condition is kept only when
 * breaking it made the anomaly go away; it is narrowed to the values that
 * still triggered. Finally the reduced point (unconstrained features moved to
 * th_wl_default()'s values) is run once to verify the conjunction.
 *
 * No candidate reaches the oracle without passing th_wl_check(): a point the
 * hardware cannot run is skipped, never counted as "does not trigger".
 */

#include "th_anomaly.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "anomaly_private.h"

/* Points already run (the trigger first): a repeated candidate costs nothing. */
#define CACHE_SIZE 128

struct extract {
	const struct th_limits *l;
	th_mfs_oracle oracle;
	void *ctx;
	enum th_symptom s;
	int runs;                  /* oracle calls, failed ones included */
	unsigned cached;           /* entries written to cache[], ring after CACHE_SIZE */
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

static void
set_enum(struct th_wl *wl, enum th_feat f, unsigned i)
{
	th_wl_set(wl, f, f == TH_F_MTU ? 1024u << i : i);
}

static unsigned
enum_count(enum th_feat f)
{
	unsigned n = 0;

	while (th_feat_value_name(f, n) != NULL)
		n++;
	return n;
}

/*
 * Try every other value of enumerated feature @p f. An alternative the point
 * cannot carry as it is (UD with a READ, UD with 64 KiB messages) is tried
 * with its dependents moved (opcode SEND, messages cut to the MTU). When that
 * misses, one more run tells whether the moved dependents alone explain it
 * (then the alternative proves nothing) or the feature does.
 */
static void
probe_enum(struct extract *x, const struct th_wl *base, enum th_feat f, struct th_mfs *out,
	uint32_t *hits)
{
	unsigned cur = th_mfs__enum_index(base, f), n = enum_count(f), i;
	uint32_t set = 1u << cur;
	bool missed = false;

	for (i = 0; i < n; i++) {
		struct th_wl w = *base, deps;
		bool repaired = false;
		int r;

		if (i == cur)
			continue;
		set_enum(&w, f, i);
		if (th_wl_check(&w, x->l, NULL, 0) != 0) {
			if (th_wl_repair(&w, f, x->l) != 0)
				continue;
			repaired = true;
		}
		r = try(x, &w);
		if (r == TRY_HIT) {
			set |= 1u << i;
			continue;
		}
		if (repaired) {
			deps = w;
			set_enum(&deps, f, cur);
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
	uint64_t lo, hi;      /* grid values; 0 / UINT64_MAX when unbounded */
	unsigned lo_i, hi_i;  /* indexes of the lowest and highest points seen to trigger */
};

/*
 * The interval of @p vals (ascending, @p cur_i the base's own) where the
 * anomaly still shows: test each far end, bisect the side where it stops.
 */
static void
bisect(struct extract *x, const struct th_wl *pts, unsigned n, unsigned cur_i, const uint64_t *vals,
	struct interval *iv)
{
	unsigned a, b, m;

	iv->lo = 0;
	iv->hi = UINT64_MAX;
	iv->lo_i = iv->hi_i = cur_i;
	if (n == 0)
		return;
	if (cur_i > 0 && try(x, &pts[0]) == TRY_HIT) {
		iv->lo_i = 0;
	} else if (cur_i > 0) {
		/* pts[a] misses, pts[b] hits: the lower boundary lies between them. */
		for (a = 0, b = cur_i; b - a > 1;) {
			m = a + (b - a) / 2;
			if (try(x, &pts[m]) == TRY_HIT)
				b = m;
			else
				a = m;
		}
		iv->lo = vals[b];
		iv->lo_i = b;
	}
	if (cur_i + 1 < n && try(x, &pts[n - 1]) == TRY_HIT) {
		iv->hi_i = n - 1;
	} else if (cur_i + 1 < n) {
		for (a = cur_i, b = n - 1; b - a > 1;) {
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
move_base(struct th_wl *base, const struct th_wl *pts, const struct interval *iv,
	enum move mv)
{
	if (mv == MOVE_LOW)
		*base = pts[iv->lo_i];
	else if (mv == MOVE_HIGH)
		*base = pts[iv->hi_i];
}

static void
probe_num(struct extract *x, struct th_wl *base, enum th_feat f, enum move mv,
	struct th_mfs *out)
{
	uint64_t g[TH_WL_GRID_MAX + 1], vals[TH_WL_GRID_MAX + 1];
	struct th_wl pts[TH_WL_GRID_MAX + 1];
	unsigned n = th_wl_grid(f, base, x->l, g, TH_WL_GRID_MAX), k = 0, cur_i = 0, i;
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
		vals[k] = g[i];
		pts[k++] = w;
	}
	bisect(x, pts, k, cur_i, vals, &iv);
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
		bisect(x, pts, k, cur_i, vals, &iv);
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

/* Pin feature @p f of @p out to @p trig's exact value. */
static void
pin(struct th_mfs *out, const struct th_wl *trig, enum th_feat f)
{
	out->feats |= 1u << f;
	if (f == TH_F_MSG) {
		out->msg_min.lo = out->msg_min.hi = th_wl_msg_min(trig);
		out->msg_max.lo = out->msg_max.hi = th_wl_msg_max(trig);
	} else if (th_feat_is_enum(f)) {
		out->set[f] = 1u << th_mfs__enum_index(trig, f);
	} else {
		out->range[f].lo = out->range[f].hi = th_wl_get(trig, f);
	}
}

static void
copy_feat(struct th_wl *dst, const struct th_wl *src, enum th_feat f)
{
	if (f == TH_F_MSG) {
		memcpy(dst->msg, src->msg, sizeof(dst->msg));
		dst->n_msgs = src->n_msgs;
	} else {
		th_wl_set(dst, f, th_wl_get(src, f));
	}
}

/*
 * Run the trigger with every unconstrained feature at its default. When the
 * features interact and it no longer triggers, put the trigger's values back
 * one feature at a time until it does, move back those it still triggers
 * without, and pin the rest to the trigger's values.
 */
static void
verify(struct extract *x, const struct th_wl *trig, struct th_mfs *out)
{
	struct th_wl red = *trig, def;
	uint32_t moved = 0, restored = 0;
	unsigned f, g;

	th_wl_default(&def);
	for (f = 0; f < TH_F__COUNT; f++) {
		struct th_wl w = red;

		if (out->feats & (1u << f))
			continue;
		copy_feat(&w, &def, (enum th_feat)f);
		if (th_wl_equal(&w, &red) || th_wl_check(&w, x->l, NULL, 0) != 0)
			continue;
		red = w;
		moved |= 1u << f;
	}
	if (moved == 0 || try(x, &red) == TRY_HIT)
		return;
	for (f = 0; f < TH_F__COUNT; f++) {
		struct th_wl w = red;

		if (!(moved & (1u << f)))
			continue;
		copy_feat(&w, trig, (enum th_feat)f);
		if (th_wl_check(&w, x->l, NULL, 0) != 0)
			continue;
		red = w;
		restored |= 1u << f;
		if (try(x, &red) == TRY_HIT)
			break;
	}
	/* The last one restored was needed; the earlier ones may not be: drop each that is not. */
	for (g = 0; g < f && g < TH_F__COUNT; g++) {
		struct th_wl w = red;

		if (!(restored & (1u << g)))
			continue;
		copy_feat(&w, &def, (enum th_feat)g);
		if (th_wl_check(&w, x->l, NULL, 0) == 0 && try(x, &w) == TRY_HIT) {
			red = w;
			restored &= ~(1u << g);
		}
	}
	for (g = 0; g < TH_F__COUNT; g++)
		if (restored & (1u << g))
			pin(out, trig, (enum th_feat)g);
}

static const enum th_feat enum_feats[] = {TH_F_MEM, TH_F_QP_TYPE, TH_F_OPCODE, TH_F_DIR,
	TH_F_MTU};
int
th_mfs_extract(const struct th_wl *trigger, enum th_symptom s, const struct th_limits *l,
	th_mfs_oracle oracle, void *ctx, struct th_mfs *out)
{
	struct extract *x;
	struct th_wl base;
	uint32_t hits;
	unsigned i;
	int runs;

	if (trigger == NULL || l == NULL || oracle == NULL || out == NULL ||
		(unsigned)s >= TH_SYM__COUNT || th_wl_check(trigger, l, NULL, 0) != 0)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->l = l;
	x->oracle = oracle;
	x->ctx = ctx;
	x->s = s;
	memset(out, 0, sizeof(*out));
	out->symptom = (uint8_t)s;
	base = *trigger;
	/* The caller saw the trigger show the symptom: it costs no experiment. */
	remember(x, trigger, true);

	for (i = 0; i < sizeof(enum_feats) / sizeof(enum_feats[0]); i++) {
		probe_enum(x, &base, enum_feats[i], out, &hits);
		/*
		 * A UD trigger leaves no other opcode to try and caps messages at
		 * the MTU. When RC shows the anomaly just as well, probe the rest
		 * on RC so those features are measured too.
		 */
		if (enum_feats[i] == TH_F_QP_TYPE && base.qp_type == TH_QP_UD &&
			!(out->feats & (1u << TH_F_QP_TYPE)) && (hits & (1u << TH_QP_RC))) {
			struct th_wl w = base;

			w.qp_type = TH_QP_RC;
			if (th_wl_check(&w, l, NULL, 0) == 0)
				base = w;
		}
	}
	/*
	 * Each numeric probe starts from the base, a point seen to trigger, and
	 * leaves it at the end of the feature's interval that gives the next
	 * features the most room: a small wqe_batch lets wq_depth go low, many
	 * SGEs and then small messages let mr_size go low, a small mr_size lets
	 * mr_count go high. Each step changes one feature of a triggering point.
	 */
	probe_num(x, &base, TH_F_WQE_BATCH, MOVE_LOW, out);
	probe_num(x, &base, TH_F_WQ_DEPTH, MOVE_NONE, out);
	probe_num(x, &base, TH_F_QP_COUNT, MOVE_NONE, out);
	probe_num(x, &base, TH_F_SGE, MOVE_HIGH, out);
	probe_msg(x, &base, out);
	probe_num(x, &base, TH_F_MR_SIZE, MOVE_LOW, out);
	probe_num(x, &base, TH_F_MR_COUNT, MOVE_NONE, out);
	verify(x, trigger, out);
	runs = x->runs;
	free(x);
	return runs;
}
