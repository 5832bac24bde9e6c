/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Minimal feature sets as predicates and their text form. The text is what
 * anomaly reports print and what users paste back to skip known anomalies,
 * so parsing says exactly which word it could not read.
 */

#include "th_anomaly.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_conf.h"

static bool
in_range(const struct th_range *r, uint64_t v)
{
	return v >= r->lo && v <= r->hi;
}

/* Whether @p wl meets @p m's condition on feature @p f (constrained or not). */
static bool
meets(const struct th_mfs *m, const struct th_wl *wl, enum th_feat f)
{
	unsigned i;

	if (!(m->feats & (1u << f)))
		return true;
	if (f == TH_F_MSG)
		return in_range(&m->msg_min, th_wl_msg_min(wl)) &&
		       in_range(&m->msg_max, th_wl_msg_max(wl));
	if (!th_feat_is_enum(f))
		return in_range(&m->range[f], th_wl_get(wl, f));
	i = th_wl_enum_index(wl, f);
	return i < 32 && (m->set[f] & (1u << i));
}

uint32_t
th_mfs_failing(const struct th_mfs *m, const struct th_wl *wl)
{
	uint32_t out = 0;
	unsigned f;

	for (f = 0; f < TH_F__COUNT; f++)
		if (!meets(m, wl, (enum th_feat)f))
			out |= 1u << f;
	return out;
}

bool
th_mfs_covers(const struct th_mfs *m, const struct th_wl *wl)
{
	unsigned f;

	for (f = 0; f < TH_F__COUNT; f++)
		if (!meets(m, wl, (enum th_feat)f))
			return false;
	return true;
}

/* Append with snprintf semantics: @p off grows by what was needed, even past @p size. */
static void put(char *buf, size_t size, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
put(char *buf, size_t size, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*off < size ? buf + *off : NULL, *off < size ? size - *off : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

static bool
range_full(const struct th_range *r)
{
	return r->lo == 0 && r->hi == UINT64_MAX;
}

static void
put_range(char *buf, size_t size, size_t *off, const char *name, const struct th_range *r)
{
	if (r->lo == 0 && r->hi == UINT64_MAX)
		put(buf, size, off, " %s>=0", name);
	else if (r->lo == r->hi)
		put(buf, size, off, " %s=%" PRIu64, name, r->lo);
	else if (r->lo == 0)
		put(buf, size, off, " %s<=%" PRIu64, name, r->hi);
	else if (r->hi == UINT64_MAX)
		put(buf, size, off, " %s>=%" PRIu64, name, r->lo);
	else
		put(buf, size, off, " %s=%" PRIu64 "..%" PRIu64, name, r->lo, r->hi);
}

int
th_mfs_format(const struct th_mfs *m, char *buf, size_t size)
{
	size_t off = 0;
	unsigned f, i;

	if (size > 0)
		buf[0] = '\0';
	put(buf, size, &off, "%s:", th_symptom_name((enum th_symptom)m->symptom));
	for (f = 0; f < TH_F__COUNT; f++) {
		const char *name = th_feat_name((enum th_feat)f);

		if (!(m->feats & (1u << f)))
			continue;
		if (f == TH_F_MSG) {
			if (!range_full(&m->msg_min))
				put_range(buf, size, &off, "msg_min", &m->msg_min);
			if (!range_full(&m->msg_max) || range_full(&m->msg_min))
				put_range(buf, size, &off, "msg_max", &m->msg_max);
		} else if (th_feat_is_enum((enum th_feat)f)) {
			bool first = true;

			put(buf, size, &off, " %s=", name);
			for (i = 0; th_feat_value_name((enum th_feat)f, i) != NULL; i++)
				if (m->set[f] & (1u << i)) {
					put(buf, size, &off, "%s%s", first ? "" : "|",
						th_feat_value_name((enum th_feat)f, i));
					first = false;
				}
			if (first)
				put(buf, size, &off, "none");
		} else {
			put_range(buf, size, &off, name, &m->range[f]);
		}
	}
	return off > INT32_MAX ? INT32_MAX : (int)off;
}

static int
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 20)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* A word's feature: a th_feat, or TH_F__COUNT + 0/1 for msg_min/msg_max. */
static int
word_feat(const char *s, size_t len)
{
	unsigned f;

	if (len == 7 && memcmp(s, "msg_min", 7) == 0)
		return TH_F__COUNT;
	if (len == 7 && memcmp(s, "msg_max", 7) == 0)
		return TH_F__COUNT + 1;
	for (f = 0; f < TH_F__COUNT; f++)
		if (f != TH_F_MSG && strlen(th_feat_name((enum th_feat)f)) == len &&
			memcmp(th_feat_name((enum th_feat)f), s, len) == 0)
			return (int)f;
	return -1;
}

static int
bad(char *err, size_t err_size, const char *w, size_t wlen, const char *why)
{
	char word[201], shown[201];

	snprintf(word, sizeof(word), "%.*s", (int)(wlen > 200 ? 200 : wlen), w);
	snprintf(
		err, err_size, "mfs: '%s': %s", th_conf_printable(word, shown, sizeof(shown)), why);
	return -EINVAL;
}

static int
parse_enum(enum th_feat f, const char *v, size_t vlen, uint32_t *set)
{
	char one[16];

	*set = 0;
	if (vlen == 4 && memcmp(v, "none", 4) == 0)
		return 0;
	while (vlen > 0) {
		const char *bar = memchr(v, '|', vlen);
		size_t n = bar != NULL ? (size_t)(bar - v) : vlen;
		int i;

		if (n == 0 || n >= sizeof(one))
			return -EINVAL;
		memcpy(one, v, n);
		one[n] = '\0';
		i = th_feat_parse_value(f, one);
		if (i < 0)
			return -EINVAL;
		*set |= 1u << i;
		if (bar == NULL)
			break;
		v += n + 1;
		vlen -= n + 1;
		if (vlen == 0)
			return -EINVAL;
	}
	return 0;
}

static int
parse_word(const char *w, size_t len, struct th_mfs *m, char *err, size_t err_size)
{
	const char *op = w, *v;
	struct th_range r = {0, UINT64_MAX}, *dst;
	enum th_feat f;
	size_t nlen, vlen;
	int fi, kind;
	char why[192];

	while (op < w + len && *op != '=' && *op != '<' && *op != '>')
		op++;
	nlen = (size_t)(op - w);
	if (op == w + len)
		return bad(
			err, err_size, w, len, "expected feature=value, feature>=N or feature<=N");
	fi = word_feat(w, nlen);
	if (fi < 0) {
		snprintf(why, sizeof(why),
			"unknown feature '%.*s' (mem, qp_type, opcode, dir, "
			"mtu, wqe_batch, sge, wq_depth, qp_count, mr_count, mr_size, msg_min, "
			"msg_max)",
			(int)(nlen > 40 ? 40 : nlen), w);
		return bad(err, err_size, w, len, why);
	}
	/* kind: 0 '=', 1 '>=', 2 '<='. */
	if (*op == '=') {
		kind = 0;
		v = op + 1;
	} else if (op + 1 < w + len && op[1] == '=') {
		kind = *op == '>' ? 1 : 2;
		v = op + 2;
	} else {
		return bad(err, err_size, w, len, "use >= or <= (bounds are inclusive)");
	}
	vlen = (size_t)(w + len - v);
	if (vlen == 0)
		return bad(err, err_size, w, len, "missing value");
	f = fi >= TH_F__COUNT ? TH_F_MSG : (enum th_feat)fi;
	if (th_feat_is_enum(f)) {
		uint32_t set;

		if (kind != 0)
			return bad(err, err_size, w, len,
				"an enumerated feature takes '=' with values joined by '|'");
		if (parse_enum(f, v, vlen, &set) != 0) {
			snprintf(why, sizeof(why), "expected %s|%s|%s (one or more, joined by '|')",
				th_feat_value_name(f, 0), th_feat_value_name(f, 1),
				th_feat_value_name(f, 2));
			return bad(err, err_size, w, len, why);
		}
		m->set[f] = (m->feats & (1u << f)) ? m->set[f] & set : set;
		/* As for bounds below: qp_type=UD qp_type=RC is a contradiction, refused (an
		 * empty set is written 'none'). */
		if (m->set[f] == 0 && set != 0)
			return bad(
				err, err_size, w, len, "no value meets this and the earlier one");
		m->feats |= 1u << f;
		return 0;
	}
	if (kind == 1 || kind == 2) {
		uint64_t x;

		if (parse_u64(v, vlen, &x) != 0)
			return bad(err, err_size, w, len, "expected a whole number");
		if (kind == 1)
			r.lo = x;
		else
			r.hi = x;
	} else {
		const char *dots = NULL;
		size_t i;

		for (i = 0; i + 1 < vlen; i++)
			if (v[i] == '.' && v[i + 1] == '.') {
				dots = v + i;
				break;
			}
		if (dots == NULL) {
			if (parse_u64(v, vlen, &r.lo) != 0)
				return bad(err, err_size, w, len, "expected N or LO..HI");
			r.hi = r.lo;
		} else if (parse_u64(v, (size_t)(dots - v), &r.lo) != 0 ||
			   parse_u64(dots + 2, vlen - (size_t)(dots - v) - 2, &r.hi) != 0 ||
			   r.lo > r.hi) {
			return bad(err, err_size, w, len, "expected LO..HI with LO <= HI");
		}
	}
	if (f == TH_F_MSG) {
		if (!(m->feats & (1u << TH_F_MSG))) {
			m->msg_min = (struct th_range){0, UINT64_MAX};
			m->msg_max = (struct th_range){0, UINT64_MAX};
		}
		dst = fi == TH_F__COUNT ? &m->msg_min : &m->msg_max;
	} else {
		if (!(m->feats & (1u << f)))
			m->range[f] = (struct th_range){0, UINT64_MAX};
		dst = &m->range[f];
	}
	/* Several words on one feature narrow it: qp_count>=16 qp_count<=512. */
	if (r.lo > dst->lo)
		dst->lo = r.lo;
	if (r.hi < dst->hi)
		dst->hi = r.hi;
	if (dst->lo > dst->hi)
		return bad(err, err_size, w, len, "no value meets this and the earlier bound");
	m->feats |= 1u << f;
	return 0;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int
th_mfs_parse(const char *text, struct th_mfs *m, char *err, size_t err_size)
{
	const char *s = text, *colon, *w;
	char dummy[8];
	unsigned i;
	int r;

	if (err == NULL || err_size == 0) {
		err = dummy;
		err_size = sizeof(dummy);
	}
	memset(m, 0, sizeof(*m));
	if (text == NULL)
		return bad(err, err_size, "", 0, "no text");
	while (is_space(*s))
		s++;
	colon = strchr(s, ':');
	for (i = 0; colon != NULL && i < TH_SYM__COUNT; i++) {
		const char *name = th_symptom_name((enum th_symptom)i);

		if (strlen(name) == (size_t)(colon - s) && memcmp(s, name, strlen(name)) == 0)
			break;
	}
	if (colon == NULL || i == TH_SYM__COUNT) {
		size_t n = 0;

		while (s[n] != '\0' && !is_space(s[n]))
			n++;
		return bad(err, err_size, s, n, "expected 'pause:' or 'low_tput:' first");
	}
	m->symptom = (uint8_t)i;
	s = colon + 1;
	for (;;) {
		while (is_space(*s))
			s++;
		if (*s == '\0')
			break;
		w = s;
		while (*s != '\0' && !is_space(*s))
			s++;
		r = parse_word(w, (size_t)(s - w), m, err, err_size);
		if (r != 0) {
			memset(m, 0, sizeof(*m));
			return r;
		}
	}
	return 0;
}

/* QP types that carry each opcode, opcodes each QP type carries (bits). */
static const uint32_t types_of_opcode[TH_OPC__COUNT] = {
	[TH_OPC_SEND] = 1u << TH_QP_RC | 1u << TH_QP_UC | 1u << TH_QP_UD,
	[TH_OPC_WRITE] = 1u << TH_QP_RC | 1u << TH_QP_UC,
	[TH_OPC_READ] = 1u << TH_QP_RC,
};
static const uint32_t opcodes_of_type[TH_QP__COUNT] = {
	[TH_QP_RC] = 1u << TH_OPC_SEND | 1u << TH_OPC_WRITE | 1u << TH_OPC_READ,
	[TH_QP_UC] = 1u << TH_OPC_SEND | 1u << TH_OPC_WRITE,
	[TH_QP_UD] = 1u << TH_OPC_SEND,
};

/* Narrow enumerated feature @p f to @p allowed; no condition when that is everything. */
static void
narrow(struct th_mfs *m, enum th_feat f, uint32_t allowed, uint32_t all)
{
	if (m->feats & (1u << f)) {
		m->set[f] &= allowed;
	} else if ((allowed & all) != all) {
		m->feats |= 1u << f;
		m->set[f] = allowed & all;
	}
}

void
th_mfs_normalize(struct th_mfs *m)
{
	uint32_t types = 0, opcodes = 0;
	unsigned i;

	if (m->feats & (1u << TH_F_OPCODE)) {
		for (i = 0; i < TH_OPC__COUNT; i++)
			if (m->set[TH_F_OPCODE] & (1u << i))
				types |= types_of_opcode[i];
		narrow(m, TH_F_QP_TYPE, types, (1u << TH_QP__COUNT) - 1);
	}
	if (m->feats & (1u << TH_F_QP_TYPE)) {
		for (i = 0; i < TH_QP__COUNT; i++)
			if (m->set[TH_F_QP_TYPE] & (1u << i))
				opcodes |= opcodes_of_type[i];
		narrow(m, TH_F_OPCODE, opcodes, (1u << TH_OPC__COUNT) - 1);
	}
}

/* Every value of enumerated feature @p f, a bit each. */
static uint32_t
all_values(enum th_feat f)
{
	return (1u << th_feat_value_count(f)) - 1;
}

/* @p m's condition on @p f: a set (enumerated) or ranges; all values where unconstrained. */
static void
condition(const struct th_mfs *m, enum th_feat f, uint32_t *set, struct th_range r[2])
{
	static const struct th_range any = {0, UINT64_MAX};
	bool is_set = (m->feats & (1u << f)) != 0;

	*set = is_set ? m->set[f] : all_values(f);
	r[0] = !is_set ? any : f == TH_F_MSG ? m->msg_min : m->range[f];
	r[1] = !is_set || f != TH_F_MSG ? any : m->msg_max;
}

static bool
range_within(const struct th_range *a, const struct th_range *b)
{
	return a->lo >= b->lo && a->hi <= b->hi;
}

bool
th_mfs_within(const struct th_mfs *a, const struct th_mfs *b)
{
	struct th_mfs x = *a, y = *b;
	struct th_range rx[2], ry[2];
	uint32_t sx, sy;
	unsigned f;

	if (a->symptom != b->symptom)
		return false;
	th_mfs_normalize(&x);
	th_mfs_normalize(&y);
	for (f = 0; f < TH_F__COUNT; f++) {
		if (!(y.feats & (1u << f)))
			continue;
		condition(&x, (enum th_feat)f, &sx, rx);
		condition(&y, (enum th_feat)f, &sy, ry);
		if (th_feat_is_enum((enum th_feat)f) ? (sx & ~sy) != 0
						     : !range_within(&rx[0], &ry[0]))
			return false;
		if (!range_within(&rx[1], &ry[1]))
			return false;
	}
	return true;
}

/* Whether @p r admits every value a valid workload may give a numeric feature (1 to @p max). */
static bool
admits_all(const struct th_range *r, uint64_t max)
{
	return r->lo <= 1 && r->hi >= max;
}

void
th_mfs_drop_void(struct th_mfs *m, const struct th_limits *l)
{
	static const struct th_range any = {0, UINT64_MAX};
	uint64_t g[TH_WL_GRID_MAX];
	struct th_wl def;
	unsigned f, n;
	bool is_void;

	th_wl_default(&def);
	for (f = 0; f < TH_F__COUNT; f++) {
		if (!(m->feats & (1u << f)))
			continue;
		if (th_feat_is_enum((enum th_feat)f)) {
			uint32_t all = all_values((enum th_feat)f);

			is_void = (m->set[f] & all) == all;
		} else {
			/* The grid ends at the limit: the largest value a workload may have. */
			n = th_wl_grid((enum th_feat)f, &def, l, g, TH_WL_GRID_MAX);
			if (n == 0)
				continue;
			if (f != TH_F_MSG) {
				is_void = admits_all(&m->range[f], g[n - 1]);
			} else {
				/* Each pattern bound on its own; the feature with both. */
				if (admits_all(&m->msg_min, g[n - 1]))
					m->msg_min = any;
				if (admits_all(&m->msg_max, g[n - 1]))
					m->msg_max = any;
				is_void = range_full(&m->msg_min) && range_full(&m->msg_max);
			}
		}
		if (is_void)
			m->feats &= ~(1u << f);
	}
}

bool
th_mfs_same(const struct th_mfs *a, const struct th_mfs *b)
{
	struct th_mfs x = *a, y = *b;
	char tx[512], ty[512];

	th_mfs_normalize(&x);
	th_mfs_normalize(&y);
	/* The text form is canonical: it ignores whatever unconstrained fields hold. */
	th_mfs_format(&x, tx, sizeof(tx));
	th_mfs_format(&y, ty, sizeof(ty));
	return strcmp(tx, ty) == 0;
}
