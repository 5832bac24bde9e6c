/* SPDX-License-Identifier: BSD-3-Clause */

#include "th_space.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "th_backend.h"
#include "th_rng.h"
#include "space_private.h"

/* Smallest MR the grid offers: one page. */
#define MR_SIZE_MIN 4096
/* Smallest request the grid offers: below this every size costs the same packet. */
#define MSG_GRID_MIN 64

static const char *const feat_names[TH_F__COUNT] = {
	[TH_F_MEM] = "mem",
	[TH_F_QP_TYPE] = "qp_type",
	[TH_F_OPCODE] = "opcode",
	[TH_F_DIR] = "dir",
	[TH_F_MTU] = "mtu",
	[TH_F_WQE_BATCH] = "wqe_batch",
	[TH_F_SGE] = "sge",
	[TH_F_WQ_DEPTH] = "wq_depth",
	[TH_F_QP_COUNT] = "qp_count",
	[TH_F_MR_COUNT] = "mr_count",
	[TH_F_MR_SIZE] = "mr_size",
	[TH_F_MSG] = "msg",
};

static const char *const mem_names[] = {"local", "remote", "gpu"};
static const char *const qp_names[] = {"RC", "UC", "UD"};
static const char *const opc_names[] = {"SEND", "WRITE", "READ"};
static const char *const dir_names[] = {"oneway", "bidi", "loopback"};
static const char *const mtu_names[] = {"1024", "2048", "4096"};

static const struct {
	const char *const *names;
	unsigned count;
} enum_words[TH_F__COUNT] = {
	[TH_F_MEM] = {mem_names, TH_MEM__COUNT},
	[TH_F_QP_TYPE] = {qp_names, TH_QP__COUNT},
	[TH_F_OPCODE] = {opc_names, TH_OPC__COUNT},
	[TH_F_DIR] = {dir_names, TH_DIR__COUNT},
	[TH_F_MTU] = {mtu_names, 3},
};

static const char *const ctr_names[TH_CTR__COUNT] = {
#define TH_CTR_NAME(id, name, diag) [TH_CTR_##id] = name,
	TH_CTR_LIST(TH_CTR_NAME)
#undef TH_CTR_NAME
};

static const int ctr_diag[TH_CTR__COUNT] = {
#define TH_CTR_DIAG(id, name, diag) [TH_CTR_##id] = diag,
	TH_CTR_LIST(TH_CTR_DIAG)
#undef TH_CTR_DIAG
};

const char *
th_ctr_name(enum th_ctr c)
{
	return (unsigned)c < TH_CTR__COUNT ? ctr_names[c] : "?";
}

int
th_ctr_is_diag(enum th_ctr c)
{
	return (unsigned)c < TH_CTR__COUNT ? ctr_diag[c] : 0;
}

const char *
th_feat_name(enum th_feat f)
{
	return (unsigned)f < TH_F__COUNT ? feat_names[f] : "?";
}

bool
th_feat_is_enum(enum th_feat f)
{
	return (unsigned)f < TH_F__COUNT && enum_words[f].names != NULL;
}

uint32_t
th_feat_enum_mask(void)
{
	uint32_t m = 0;
	unsigned f;

	for (f = 0; f < TH_F__COUNT; f++)
		if (th_feat_is_enum((enum th_feat)f))
			m |= 1u << f;
	return m;
}

const char *
th_feat_value_name(enum th_feat f, unsigned v)
{
	if (!th_feat_is_enum(f) || v >= enum_words[f].count)
		return NULL;
	return enum_words[f].names[v];
}

unsigned
th_feat_value_count(enum th_feat f)
{
	return th_feat_is_enum(f) ? enum_words[f].count : 0;
}

int
th_feat_parse_value(enum th_feat f, const char *word)
{
	unsigned i;

	if (!th_feat_is_enum(f) || word == NULL)
		return -EINVAL;
	for (i = 0; i < enum_words[f].count; i++)
		if (strcasecmp(word, enum_words[f].names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

void
th_limits_default(struct th_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_qp = 20000;
	l->max_mr = 200000;
	l->max_wq_depth = 32768;
	l->max_sge = 32;
	l->max_wqe_batch = 256;
	l->max_mr_size = UINT64_C(1) << 30;
	l->max_pinned = UINT64_C(64) << 30;
	l->max_msg = 1u << 20;
	l->has_gpu = true;
	l->has_remote = true;
}

void
th_wl_default(struct th_wl *wl)
{
	memset(wl, 0, sizeof(*wl));
	wl->mem = TH_MEM_LOCAL;
	wl->qp_type = TH_QP_RC;
	wl->opcode = TH_OPC_WRITE;
	wl->dir = TH_DIR_ONEWAY;
	wl->mtu = 4096;
	wl->wqe_batch = 1;
	wl->sge = 1;
	wl->wq_depth = 128;
	wl->qp_count = 1;
	wl->mr_count = 1;
	wl->mr_size = 1u << 20;
	wl->n_msgs = 1;
	wl->msg[0] = 65536;
}

uint32_t
th_wl_msg_max(const struct th_wl *wl)
{
	uint32_t m = 0;
	unsigned i;

	for (i = 0; i < wl->n_msgs && i < TH_WL_MSGS_MAX; i++)
		if (wl->msg[i] > m)
			m = wl->msg[i];
	return m;
}

uint32_t
th_wl_msg_min(const struct th_wl *wl)
{
	uint32_t m = UINT32_MAX;
	unsigned i;

	if (wl->n_msgs == 0)
		return 0;
	for (i = 0; i < wl->n_msgs && i < TH_WL_MSGS_MAX; i++)
		if (wl->msg[i] < m)
			m = wl->msg[i];
	return m;
}

bool
th_wl_equal(const struct th_wl *a, const struct th_wl *b)
{
	unsigned n = a->n_msgs < TH_WL_MSGS_MAX ? a->n_msgs : TH_WL_MSGS_MAX;

	return a->mem == b->mem && a->qp_type == b->qp_type && a->opcode == b->opcode &&
		a->dir == b->dir && a->mtu == b->mtu && a->wqe_batch == b->wqe_batch &&
		a->sge == b->sge && a->n_msgs == b->n_msgs && a->qp_count == b->qp_count &&
		a->wq_depth == b->wq_depth && a->mr_count == b->mr_count &&
		a->mr_size == b->mr_size && memcmp(a->msg, b->msg, n * sizeof(a->msg[0])) == 0;
}

static unsigned
mtu_index(uint16_t mtu)
{
	return mtu == 1024 ? 0 : mtu == 2048 ? 1 : mtu == 4096 ? 2 : 3;
}

unsigned
th_wl_enum_index(const struct th_wl *wl, enum th_feat f)
{
	return f == TH_F_MTU ? mtu_index(wl->mtu) : (unsigned)th_wl_get(wl, f);
}

void
th_wl_set_enum_index(struct th_wl *wl, enum th_feat f, unsigned i)
{
	th_wl_set(wl, f, f == TH_F_MTU ? 1024u << i : i);
}

uint64_t
th_wl_get(const struct th_wl *wl, enum th_feat f)
{
	switch (f) {
	case TH_F_MEM: return wl->mem;
	case TH_F_QP_TYPE: return wl->qp_type;
	case TH_F_OPCODE: return wl->opcode;
	case TH_F_DIR: return wl->dir;
	case TH_F_MTU: return wl->mtu;
	case TH_F_WQE_BATCH: return wl->wqe_batch;
	case TH_F_SGE: return wl->sge;
	case TH_F_WQ_DEPTH: return wl->wq_depth;
	case TH_F_QP_COUNT: return wl->qp_count;
	case TH_F_MR_COUNT: return wl->mr_count;
	case TH_F_MR_SIZE: return wl->mr_size;
	case TH_F_MSG: return th_wl_msg_max(wl);
	default: return 0;
	}
}

static uint32_t
sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint16_t
sat16(uint64_t v)
{
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

void
th_wl_set(struct th_wl *wl, enum th_feat f, uint64_t v)
{
	switch (f) {
	case TH_F_MEM: wl->mem = (uint8_t)(v > UINT8_MAX ? UINT8_MAX : v); break;
	case TH_F_QP_TYPE: wl->qp_type = (uint8_t)(v > UINT8_MAX ? UINT8_MAX : v); break;
	case TH_F_OPCODE: wl->opcode = (uint8_t)(v > UINT8_MAX ? UINT8_MAX : v); break;
	case TH_F_DIR: wl->dir = (uint8_t)(v > UINT8_MAX ? UINT8_MAX : v); break;
	case TH_F_MTU: wl->mtu = sat16(v); break;
	case TH_F_WQE_BATCH: wl->wqe_batch = sat16(v); break;
	case TH_F_SGE: wl->sge = sat16(v); break;
	case TH_F_WQ_DEPTH: wl->wq_depth = sat32(v); break;
	case TH_F_QP_COUNT: wl->qp_count = sat32(v); break;
	case TH_F_MR_COUNT: wl->mr_count = sat32(v); break;
	case TH_F_MR_SIZE: wl->mr_size = v; break;
	case TH_F_MSG:
		memset(wl->msg, 0, sizeof(wl->msg));
		wl->n_msgs = 1;
		wl->msg[0] = sat32(v);
		break;
	default: break;
	}
}

void
th_wl_copy_feat(struct th_wl *dst, const struct th_wl *src, enum th_feat f)
{
	if (f == TH_F_MSG) {
		memcpy(dst->msg, src->msg, sizeof(dst->msg));
		dst->n_msgs = src->n_msgs;
	} else {
		th_wl_set(dst, f, th_wl_get(src, f));
	}
}

/* Largest request @p wl may carry: UD fits in one MTU, an SGE fits in one MR. */
static uint64_t
msg_cap(const struct th_wl *wl, const struct th_limits *l)
{
	uint64_t cap = l->max_msg;

	if (wl->qp_type == TH_QP_UD && wl->mtu < cap)
		cap = wl->mtu;
	if (wl->sge > 0 && wl->mr_size <= UINT64_MAX / wl->sge && wl->mr_size * wl->sge < cap)
		cap = wl->mr_size * wl->sge;
	return cap;
}

static bool
opcode_valid(unsigned qp_type, unsigned opcode)
{
	switch (qp_type) {
	case TH_QP_RC: return opcode < TH_OPC__COUNT;
	case TH_QP_UC: return opcode == TH_OPC_SEND || opcode == TH_OPC_WRITE;
	case TH_QP_UD: return opcode == TH_OPC_SEND;
	default: return false;
	}
}

/* The check itself; returns the feature at fault, or -1 when @p wl is valid. */
static int
check(const struct th_wl *wl, const struct th_limits *l, char *err, size_t err_size)
{
	uint64_t cap;
	unsigned i;

	if (wl->mem >= TH_MEM__COUNT) {
		snprintf(err, err_size, "mem=%u: not local, remote or gpu", wl->mem);
		return TH_F_MEM;
	}
	if (wl->mem == TH_MEM_GPU && !l->has_gpu) {
		snprintf(err, err_size, "mem=gpu: this subsystem has no GPU (has_gpu is off)");
		return TH_F_MEM;
	}
	if (wl->mem == TH_MEM_REMOTE && !l->has_remote) {
		snprintf(err, err_size, "mem=remote: this host has one socket (has_remote is off)");
		return TH_F_MEM;
	}
	if (wl->qp_type >= TH_QP__COUNT) {
		snprintf(err, err_size, "qp_type=%u: not RC, UC or UD", wl->qp_type);
		return TH_F_QP_TYPE;
	}
	if (wl->opcode >= TH_OPC__COUNT) {
		snprintf(err, err_size, "opcode=%u: not SEND, WRITE or READ", wl->opcode);
		return TH_F_OPCODE;
	}
	if (!opcode_valid(wl->qp_type, wl->opcode)) {
		snprintf(err, err_size, "opcode=%s: %s", opc_names[wl->opcode],
			wl->opcode == TH_OPC_READ ? "READ needs an RC QP (qp_type=RC)"
			: "UD QPs carry SEND only");
		return TH_F_OPCODE;
	}
	if (wl->dir >= TH_DIR__COUNT) {
		snprintf(err, err_size, "dir=%u: not oneway, bidi or loopback", wl->dir);
		return TH_F_DIR;
	}
	if (mtu_index(wl->mtu) > 2) {
		snprintf(err, err_size, "mtu=%u: RoCE MTU must be 1024, 2048 or 4096", wl->mtu);
		return TH_F_MTU;
	}
	if (wl->wqe_batch == 0 || wl->wqe_batch > l->max_wqe_batch) {
		snprintf(err, err_size, "wqe_batch=%u: must be 1 to %u (max_wqe_batch)",
			wl->wqe_batch, l->max_wqe_batch);
		return TH_F_WQE_BATCH;
	}
	if (wl->sge == 0 || wl->sge > l->max_sge) {
		snprintf(err, err_size, "sge=%u: must be 1 to %u SG elements per WQE (max_sge)",
			wl->sge, l->max_sge);
		return TH_F_SGE;
	}
	if (wl->wq_depth == 0 || wl->wq_depth > l->max_wq_depth) {
		snprintf(err, err_size, "wq_depth=%" PRIu32 ": must be 1 to %" PRIu32
			" WQEs (max_wq_depth)", wl->wq_depth, l->max_wq_depth);
		return TH_F_WQ_DEPTH;
	}
	if (wl->wq_depth < wl->wqe_batch) {
		snprintf(err, err_size, "wq_depth=%" PRIu32 " is smaller than wqe_batch=%u: "
			"a batch must fit in the queue", wl->wq_depth, wl->wqe_batch);
		return TH_F_WQ_DEPTH;
	}
	if (wl->qp_count == 0 || wl->qp_count > l->max_qp) {
		snprintf(err, err_size, "qp_count=%" PRIu32 ": must be 1 to %" PRIu32
			" QPs per host (max_qp)", wl->qp_count, l->max_qp);
		return TH_F_QP_COUNT;
	}
	if (wl->mr_count == 0 || wl->mr_count > l->max_mr) {
		snprintf(err, err_size, "mr_count=%" PRIu32 ": must be 1 to %" PRIu32
			" MRs per host (max_mr)", wl->mr_count, l->max_mr);
		return TH_F_MR_COUNT;
	}
	if (wl->mr_size == 0 || wl->mr_size > l->max_mr_size) {
		snprintf(err, err_size, "mr_size=%" PRIu64 ": must be 1 to %" PRIu64
			" bytes (max_mr_size)", wl->mr_size, l->max_mr_size);
		return TH_F_MR_SIZE;
	}
	/* UINT64_MAX: no device's limit yet (a file read before its profile's check). */
	if (l->max_pinned != UINT64_MAX && wl->mr_size > l->max_pinned / wl->mr_count) {
		snprintf(err, err_size, "mr_count=%" PRIu32 " x mr_size=%" PRIu64
			" pins more than %" PRIu64 " bytes (max_pinned)", wl->mr_count,
			wl->mr_size, l->max_pinned);
		return TH_F_MR_COUNT;
	}
	if (wl->n_msgs == 0 || wl->n_msgs > TH_WL_MSGS_MAX) {
		snprintf(err, err_size, "msg: %u requests in the pattern, must be 1 to %d",
			wl->n_msgs, TH_WL_MSGS_MAX);
		return TH_F_MSG;
	}
	for (i = 0; i < wl->n_msgs; i++) {
		uint32_t m = wl->msg[i];

		if (m == 0 || m > l->max_msg) {
			snprintf(err, err_size, "msg[%u]=%" PRIu32 ": must be 1 to %" PRIu32
				" bytes (max_msg)", i, m, l->max_msg);
			return TH_F_MSG;
		}
		if (wl->qp_type == TH_QP_UD && m > wl->mtu) {
			snprintf(err, err_size, "msg[%u]=%" PRIu32 ": a UD message must fit in "
				"one MTU (%u)", i, m, wl->mtu);
			return TH_F_MSG;
		}
		if (m < wl->sge) {
			snprintf(err, err_size, "msg[%u]=%" PRIu32 " is smaller than sge=%u: "
				"every SG element carries at least one byte", i, m, wl->sge);
			return TH_F_MSG;
		}
	}
	cap = msg_cap(wl, l);
	if (th_wl_msg_max(wl) > cap) {
		snprintf(err, err_size, "msg max %" PRIu32 " in sge=%u pieces: a piece does not "
			"fit in one mr_size=%" PRIu64 " MR", th_wl_msg_max(wl), wl->sge,
			wl->mr_size);
		return TH_F_MSG;
	}
	return -1;
}

int
th_wl_check(const struct th_wl *wl, const struct th_limits *l, char *err, size_t err_size)
{
	char dummy[8];

	if (err == NULL || err_size == 0) {
		err = dummy;
		err_size = sizeof(dummy);
	}
	return check(wl, l, err, err_size) < 0 ? 0 : -EINVAL;
}

int
th_wl__check_feat(const struct th_wl *wl, const struct th_limits *l, char *err, size_t err_size)
{
	return check(wl, l, err, err_size);
}

/* Powers of two from @p lo up to @p hi, then @p hi itself when it is off the grid. */
static unsigned
grid_pow2(uint64_t lo, uint64_t hi, uint64_t *v, unsigned max)
{
	unsigned n = 0;
	uint64_t x;

	if (hi == 0 || max == 0)
		return 0;
	if (hi < lo) {
		v[n++] = hi;
		return n;
	}
	for (x = lo; x <= hi && n < max; x *= 2) {
		v[n++] = x;
		if (x > UINT64_MAX / 2)
			break;
	}
	if (n > 0 && v[n - 1] != hi && n < max)
		v[n++] = hi;
	return n;
}

/*
 * 1, 2, 3, 4, 6, 8, 12, ... (2^k and 3 x 2^(k-1)) times @p unit, up to
 * @p hi, then @p hi: twice as fine as powers of two where counts matter
 * ("about 12K MRs" lands on 12288).
 */
static unsigned
grid_15(uint64_t unit, uint64_t hi, uint64_t *v, unsigned max)
{
	unsigned n = 0;
	uint64_t x;

	if (hi == 0 || max == 0 || unit == 0)
		return 0;
	for (x = 1; n < max; x *= 2) {
		if (x > hi / unit)
			break;
		v[n++] = x * unit;
		if (x >= 2 && n < max && x / 2 * 3 <= hi / unit && x / 2 * 3 > x)
			v[n++] = x / 2 * 3 * unit;
		if (x > UINT64_MAX / 4)
			break;
	}
	/* The 3 x 2^(k-1) step lands between 2^k and 2^(k+1): keep the order. */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	if (n > 0 && v[n - 1] != hi && n < max)
		v[n++] = hi;
	if (n == 0)
		v[n++] = hi;
	return n;
}

unsigned
th_wl_grid(enum th_feat f, const struct th_wl *wl, const struct th_limits *l, uint64_t *vals,
	unsigned max)
{
	unsigned n = 0, i, k;
	uint64_t mtu;

	switch (f) {
	case TH_F_MEM:
	case TH_F_QP_TYPE:
	case TH_F_OPCODE:
	case TH_F_DIR:
		for (i = 0; i < enum_words[f].count && n < max; i++)
			vals[n++] = i;
		return n;
	case TH_F_MTU:
		for (i = 0; i < 3 && n < max; i++)
			vals[n++] = 1024u << i;
		return n;
	case TH_F_WQE_BATCH: return grid_pow2(1, l->max_wqe_batch, vals, max);
	case TH_F_SGE: return grid_pow2(1, l->max_sge, vals, max);
	case TH_F_WQ_DEPTH: return grid_pow2(1, l->max_wq_depth, vals, max);
	case TH_F_QP_COUNT: return grid_15(1, l->max_qp, vals, max);
	case TH_F_MR_COUNT: return grid_15(1, l->max_mr, vals, max);
	case TH_F_MR_SIZE: return grid_pow2(MR_SIZE_MIN, l->max_mr_size, vals, max);
	case TH_F_MSG:
		/* Below the MTU a request is one packet: powers of two are enough. */
		mtu = mtu_index(wl->mtu) <= 2 ? wl->mtu : 4096;
		n = grid_pow2(MSG_GRID_MIN, mtu < l->max_msg ? mtu : l->max_msg, vals, max);
		if (n == 0 || vals[n - 1] < mtu)
			return n;
		/* Above it, whole bursts of MTU-sized packets: MTU x 2, 3, 4, 6, 8, ... */
		k = grid_15(mtu, l->max_msg, vals + n, max - n);
		/* grid_15 starts at 1 x MTU, already the last power of two. */
		if (k > 0) {
			memmove(vals + n, vals + n + 1, (k - 1) * sizeof(*vals));
			n += k - 1;
		}
		return n;
	default: return 0;
	}
}

uint32_t
th_wl_feat_deps(enum th_feat f)
{
	switch (f) {
	case TH_F_QP_TYPE: return 1u << TH_F_OPCODE | 1u << TH_F_MSG;
	case TH_F_MTU: return 1u << TH_F_MSG;
	case TH_F_WQE_BATCH: return 1u << TH_F_WQ_DEPTH;
	case TH_F_WQ_DEPTH: return 1u << TH_F_WQE_BATCH;
	case TH_F_SGE: return 1u << TH_F_MSG;
	case TH_F_MR_COUNT: return 1u << TH_F_MR_SIZE | 1u << TH_F_MSG;
	case TH_F_MR_SIZE: return 1u << TH_F_MR_COUNT | 1u << TH_F_MSG;
	default: return 0;
	}
}

/* Grid values of a feature within [lo, hi], to draw from uniformly with pick(). */
struct pool {
	uint64_t v[TH_WL_GRID_MAX];
	unsigned n;
	uint64_t none; /* what pick() gives when no value fits (odd limits) */
};

static void
pool_fill(struct pool *p, enum th_feat f, const struct th_wl *wl, const struct th_limits *l,
	uint64_t lo, uint64_t hi)
{
	uint64_t g[TH_WL_GRID_MAX];
	unsigned n = th_wl_grid(f, wl, l, g, TH_WL_GRID_MAX), i;

	p->n = 0;
	for (i = 0; i < n; i++)
		if (g[i] >= lo && g[i] <= hi)
			p->v[p->n++] = g[i];
	p->none = lo <= hi || n == 0 ? lo : g[0];
}

static uint64_t
pick(const struct pool *p, struct th_rng *rng)
{
	return p->n != 0 ? p->v[th_rng_below(rng, p->n)] : p->none;
}

/* A uniformly drawn grid value of @p f within [lo, hi]. */
static uint64_t
draw(enum th_feat f, const struct th_wl *wl, const struct th_limits *l, uint64_t lo, uint64_t hi,
	struct th_rng *rng)
{
	struct pool p;

	pool_fill(&p, f, wl, l, lo, hi);
	return pick(&p, rng);
}

bool
th_wl_grid_pick(enum th_feat f, const struct th_wl *wl, const struct th_limits *l, uint64_t lo,
	uint64_t hi, struct th_rng *rng, uint64_t *v)
{
	struct pool p;

	pool_fill(&p, f, wl, l, lo, hi);
	if (p.n == 0)
		return false;
	*v = pick(&p, rng);
	return true;
}

static uint64_t
msg_floor(const struct th_wl *wl)
{
	return wl->sge > 0 ? wl->sge : 1;
}

static void
draw_msgs(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng)
{
	struct pool p;
	unsigned i;

	pool_fill(&p, TH_F_MSG, wl, l, msg_floor(wl), msg_cap(wl, l));
	memset(wl->msg, 0, sizeof(wl->msg));
	wl->n_msgs = TH_WL_MSGS_MAX;
	for (i = 0; i < wl->n_msgs; i++)
		wl->msg[i] = sat32(pick(&p, rng));
}

void
th_wl_random(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng)
{
	uint64_t pinned_cap;

	th_wl_default(wl);
	do
		wl->mem = (uint8_t)th_rng_below(rng, TH_MEM__COUNT);
	while ((wl->mem == TH_MEM_GPU && !l->has_gpu) ||
		(wl->mem == TH_MEM_REMOTE && !l->has_remote));
	wl->qp_type = (uint8_t)th_rng_below(rng, TH_QP__COUNT);
	do
		wl->opcode = (uint8_t)th_rng_below(rng, TH_OPC__COUNT);
	while (!opcode_valid(wl->qp_type, wl->opcode));
	wl->dir = (uint8_t)th_rng_below(rng, TH_DIR__COUNT);
	wl->mtu = (uint16_t)(1024u << th_rng_below(rng, 3));
	wl->qp_count = sat32(draw(TH_F_QP_COUNT, wl, l, 1, UINT64_MAX, rng));
	wl->wqe_batch = sat16(draw(TH_F_WQE_BATCH, wl, l, 1, UINT64_MAX, rng));
	wl->wq_depth = sat32(draw(TH_F_WQ_DEPTH, wl, l, wl->wqe_batch, UINT64_MAX, rng));
	wl->sge = sat16(draw(TH_F_SGE, wl, l, 1, UINT64_MAX, rng));
	wl->mr_count = sat32(draw(TH_F_MR_COUNT, wl, l, 1, UINT64_MAX, rng));
	pinned_cap = l->max_pinned / (wl->mr_count ? wl->mr_count : 1);
	wl->mr_size = draw(TH_F_MR_SIZE, wl, l, 1, pinned_cap, rng);
	draw_msgs(wl, l, rng);
}

void
th_wl_random_shaped(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng)
{
	unsigned shape, a, b, i;
	uint32_t size[2];

	th_wl_random(wl, l, rng);
	shape = th_rng_below(rng, 4);
	if (shape == 3)
		return;
	a = th_rng_below(rng, wl->n_msgs);
	b = th_rng_below(rng, wl->n_msgs);
	size[0] = wl->msg[a];
	size[1] = wl->msg[b];
	for (i = 0; i < wl->n_msgs; i++)
		wl->msg[i] = size[shape == 2 ? th_rng_below(rng, 2) : 0];
}

/* Largest grid value of @p f at most @p hi (at least the grid's first). */
static uint64_t
grid_floor(enum th_feat f, const struct th_wl *wl, const struct th_limits *l, uint64_t hi)
{
	uint64_t g[TH_WL_GRID_MAX];
	unsigned n = th_wl_grid(f, wl, l, g, TH_WL_GRID_MAX), i;
	uint64_t best = n > 0 ? g[0] : 1;

	for (i = 0; i < n; i++)
		if (g[i] <= hi)
			best = g[i];
	return best;
}

/* Smallest grid value of @p f at least @p lo (the grid's last when none is). */
static uint64_t
grid_ceil(enum th_feat f, const struct th_wl *wl, const struct th_limits *l, uint64_t lo)
{
	uint64_t g[TH_WL_GRID_MAX];
	unsigned n = th_wl_grid(f, wl, l, g, TH_WL_GRID_MAX), i;

	for (i = 0; i < n; i++)
		if (g[i] >= lo)
			return g[i];
	return n > 0 ? g[n - 1] : lo;
}

/* Bring the features @p f leads back into range after @p f changed; @p f itself stays. */
static void
repair(struct th_wl *wl, enum th_feat f, const struct th_limits *l)
{
	uint64_t cap, lo;
	unsigned i;

	if (f != TH_F_OPCODE && !opcode_valid(wl->qp_type, wl->opcode))
		wl->opcode = TH_OPC_SEND;
	if (wl->wq_depth < wl->wqe_batch) {
		if (f == TH_F_WQ_DEPTH)
			wl->wqe_batch = sat16(grid_floor(TH_F_WQE_BATCH, wl, l, wl->wq_depth));
		else
			wl->wq_depth = sat32(grid_ceil(TH_F_WQ_DEPTH, wl, l, wl->wqe_batch));
	}
	if (wl->mr_count > 0 && wl->mr_size > l->max_pinned / wl->mr_count) {
		if (f == TH_F_MR_SIZE)
			wl->mr_count = sat32(grid_floor(TH_F_MR_COUNT, wl, l,
				l->max_pinned / wl->mr_size));
		else
			wl->mr_size = grid_floor(TH_F_MR_SIZE, wl, l,
				l->max_pinned / wl->mr_count);
	}
	if (f == TH_F_MSG)
		return;
	cap = msg_cap(wl, l);
	lo = msg_floor(wl);
	for (i = 0; i < wl->n_msgs && i < TH_WL_MSGS_MAX; i++) {
		if (wl->msg[i] > cap)
			wl->msg[i] = sat32(cap);
		if (wl->msg[i] < lo)
			wl->msg[i] = sat32(lo);
	}
}

int
th_wl_repair(struct th_wl *wl, enum th_feat f, const struct th_limits *l)
{
	if ((unsigned)f >= TH_F__COUNT)
		return -EINVAL;
	repair(wl, f, l);
	return th_wl_check(wl, l, NULL, 0);
}

/* The value of @p ok (ascending, @p k entries) next to @p v upward or downward; @p v at an end. */
static uint64_t
grid_step(const uint64_t *ok, unsigned k, uint64_t v, bool up)
{
	unsigned j;

	for (j = 0; j < k && ok[j] < v; j++)
		;
	/* ok[j] is the first value >= v. */
	if (up)
		return j < k && ok[j] == v ? (j + 1 < k ? ok[j + 1] : v) : (j < k ? ok[j] : v);
	return j > 0 ? ok[j - 1] : v;
}

/*
 * A new message pattern one step away: one size moved or redrawn, one added or
 * dropped, the whole pattern a grid step up or down, one of its sizes alone, or
 * all redrawn. The last three move every request at once: a walk could not
 * bring sixteen independent sizes under a threshold one at a time.
 */
static void
mutate_msgs(struct th_wl *wl, const struct th_limits *l, struct th_rng *rng)
{
	uint64_t g[TH_WL_GRID_MAX], ok[TH_WL_GRID_MAX], cap = msg_cap(wl, l), lo = msg_floor(wl);
	unsigned n = th_wl_grid(TH_F_MSG, wl, l, g, TH_WL_GRID_MAX), k = 0, i, j, op;

	for (i = 0; i < n; i++)
		if (g[i] >= lo && g[i] <= cap)
			ok[k++] = g[i];
	if (k == 0)
		ok[k++] = cap;
	op = th_rng_below(rng, 100);
	i = th_rng_below(rng, wl->n_msgs);
	if (op < 25) {
		/* Neighbour: the grid value next to entry i, up or down. */
		wl->msg[i] = sat32(grid_step(ok, k, wl->msg[i], th_rng_below(rng, 2) == 0));
	} else if (op < 40) {
		wl->msg[i] = sat32(ok[th_rng_below(rng, k)]);
	} else if (op < 55) {
		if (wl->n_msgs < TH_WL_MSGS_MAX && (wl->n_msgs == 1 || th_rng_below(rng, 2))) {
			wl->msg[wl->n_msgs++] = sat32(ok[th_rng_below(rng, k)]);
		} else {
			memmove(wl->msg + i, wl->msg + i + 1,
				(wl->n_msgs - i - 1) * sizeof(wl->msg[0]));
			wl->msg[--wl->n_msgs] = 0;
		}
	} else if (op < 70) {
		/* The whole pattern one grid step up or down. */
		bool up = th_rng_below(rng, 2) == 0;

		for (j = 0; j < wl->n_msgs; j++)
			wl->msg[j] = sat32(grid_step(ok, k, wl->msg[j], up));
	} else if (op < 85) {
		/* One of its sizes alone. */
		wl->msg[0] = wl->msg[i];
		memset(wl->msg + 1, 0, sizeof(wl->msg) - sizeof(wl->msg[0]));
		wl->n_msgs = 1;
	} else {
		draw_msgs(wl, l, rng);
	}
}

int
th_wl_mutate(struct th_wl *wl, enum th_feat f, const struct th_limits *l, struct th_rng *rng)
{
	uint64_t g[TH_WL_GRID_MAX], order[TH_WL_GRID_MAX], cur;
	unsigned n, k = 0, i, lo_i, tries;
	struct th_wl w;

	if ((unsigned)f >= TH_F__COUNT || th_wl_check(wl, l, NULL, 0) != 0)
		return -EINVAL;
	if (f == TH_F_MSG) {
		for (tries = 0; tries < 64; tries++) {
			w = *wl;
			mutate_msgs(&w, l, rng);
			if (!th_wl_equal(&w, wl) && th_wl_check(&w, l, NULL, 0) == 0) {
				*wl = w;
				return 0;
			}
		}
		return -EINVAL;
	}
	cur = th_wl_get(wl, f);
	n = th_wl_grid(f, wl, l, g, TH_WL_GRID_MAX);
	/* Candidates other than the current value, neighbours first most of the time. */
	for (lo_i = 0; lo_i < n && g[lo_i] < cur; lo_i++)
		;
	if (!th_feat_is_enum(f) || f == TH_F_MTU) {
		if (th_rng_below(rng, 10) < 7) {
			unsigned up = lo_i < n && g[lo_i] == cur ? lo_i + 1 : lo_i;
			bool down_first = th_rng_below(rng, 2) == 0;

			if (down_first && lo_i > 0)
				order[k++] = g[lo_i - 1];
			if (up < n)
				order[k++] = g[up];
			if (!down_first && lo_i > 0)
				order[k++] = g[lo_i - 1];
		}
	}
	/* Then the rest in random order (a jump). */
	{
		uint64_t rest[TH_WL_GRID_MAX];
		unsigned r = 0;

		for (i = 0; i < n; i++) {
			unsigned j;

			if (g[i] == cur)
				continue;
			for (j = 0; j < k && order[j] != g[i]; j++)
				;
			if (j == k)
				rest[r++] = g[i];
		}
		while (r > 0) {
			unsigned pick = th_rng_below(rng, r);

			order[k++] = rest[pick];
			rest[pick] = rest[--r];
		}
	}
	for (i = 0; i < k; i++) {
		w = *wl;
		th_wl_set(&w, f, order[i]);
		repair(&w, f, l);
		if (th_wl_check(&w, l, NULL, 0) == 0) {
			*wl = w;
			return 0;
		}
	}
	return -EINVAL;
}

/* log(v / lo) / log(hi / lo), clamped to [0, 1]; 0 when the range is one value. */
static double
logpos(double v, double lo, double hi)
{
	double x;

	if (!(hi > lo) || !(v > lo))
		return 0;
	x = log(v / lo) / log(hi / lo);
	return x > 1 ? 1 : x < 0 ? 0 : x;
}

void
th_wl_encode(const struct th_wl *wl, const struct th_limits *l, double x[TH_WL_DIMS])
{
	unsigned mi = mtu_index(wl->mtu);
	int i;

	x[0] = wl->mem < TH_MEM__COUNT ? wl->mem / 2.0 : 1;
	x[1] = wl->qp_type < TH_QP__COUNT ? wl->qp_type / 2.0 : 1;
	x[2] = wl->opcode < TH_OPC__COUNT ? wl->opcode / 2.0 : 1;
	x[3] = wl->dir < TH_DIR__COUNT ? wl->dir / 2.0 : 1;
	x[4] = mi <= 2 ? mi / 2.0 : 1;
	x[5] = logpos(wl->wqe_batch, 1, l->max_wqe_batch);
	x[6] = logpos(wl->sge, 1, l->max_sge);
	x[7] = logpos(wl->wq_depth, 1, l->max_wq_depth);
	x[8] = logpos(wl->qp_count, 1, l->max_qp);
	x[9] = logpos(wl->mr_count, 1, l->max_mr);
	x[10] = logpos((double)wl->mr_size, MR_SIZE_MIN, (double)l->max_mr_size);
	x[11] = logpos(th_wl_msg_min(wl), MSG_GRID_MIN, l->max_msg);
	x[12] = logpos(th_wl_msg_max(wl), MSG_GRID_MIN, l->max_msg);
	x[13] = wl->n_msgs >= 1 ? (wl->n_msgs - 1) / (double)(TH_WL_MSGS_MAX - 1) : 0;
	for (i = 0; i < TH_WL_DIMS; i++)
		if (!(x[i] >= 0))
			x[i] = 0;
		else if (x[i] > 1)
			x[i] = 1;
}
