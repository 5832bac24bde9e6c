/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Workload files and the one-line text form. A workload file is the [workload]
 * section of an INI file with one key per feature, so a user can replay the
 * exact point an anomaly report names.
 */

#include "th_space.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_conf.h"
#include "space_private.h"

static const char *
word(enum th_feat f, unsigned v)
{
	const char *w = th_feat_value_name(f, v);

	return w != NULL ? w : "?";
}

int
th_wl_format(const struct th_wl *wl, char *buf, size_t size)
{
	size_t off;
	unsigned i;
	int n;

	n = snprintf(buf, size,
		"mem=%s qp_type=%s opcode=%s dir=%s mtu=%u wqe_batch=%u sge=%u wq_depth=%" PRIu32
		" qp_count=%" PRIu32 " mr_count=%" PRIu32 " mr_size=%" PRIu64 " msg=",
		word(TH_F_MEM, wl->mem), word(TH_F_QP_TYPE, wl->qp_type),
		word(TH_F_OPCODE, wl->opcode), word(TH_F_DIR, wl->dir), wl->mtu, wl->wqe_batch,
		wl->sge, wl->wq_depth, wl->qp_count, wl->mr_count, wl->mr_size);
	if (n < 0)
		return n;
	off = (size_t)n;
	for (i = 0; i < wl->n_msgs && i < TH_WL_MSGS_MAX; i++) {
		n = snprintf(off < size ? buf + off : NULL, off < size ? size - off : 0,
			"%s%" PRIu32, i ? "," : "", wl->msg[i]);
		if (n < 0)
			return n;
		off += (size_t)n;
	}
	return off > INT32_MAX ? INT32_MAX : (int)off;
}

/* Limits wide enough that only what no hardware can run fails. */
static void
limits_open(struct th_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_qp = UINT32_MAX;
	l->max_mr = UINT32_MAX;
	l->max_wq_depth = UINT32_MAX;
	l->max_sge = UINT16_MAX;
	l->max_wqe_batch = UINT16_MAX;
	l->max_mr_size = UINT64_MAX;
	l->max_pinned = UINT64_MAX;
	l->max_msg = UINT32_MAX;
	l->has_gpu = true;
	l->has_remote = true;
}

static int
missing(const struct th_conf *c, const char *section, const char *key, char *err, size_t err_size)
{
	/* The one-line form (th_wl_parse()) is the section without a header. */
	if (section[0] == '\0') {
		snprintf(err, err_size, "missing '%s=' (a workload sets every feature)", key);
		return -EINVAL;
	}
	return th_conf_missing(
		c, section, key, "(workload files set every feature)", err, err_size);
}

static int
get_enum(const struct th_conf *c, const char *section, enum th_feat f, uint8_t *out, char *err,
	size_t err_size)
{
	const char *key = th_feat_name(f), *v = th_conf_get(c, section, key);
	char where[256];
	int r;

	if (v == NULL)
		return missing(c, section, key, err, err_size);
	r = th_feat_parse_value(f, v);
	if (r < 0) {
		char shown[64];

		th_conf_where(c, section, key, where, sizeof(where));
		snprintf(err, err_size, "%s: %s = '%s': expected %s, %s or %s", where, key,
			th_conf_printable(v, shown, sizeof(shown)), word(f, 0), word(f, 1),
			word(f, 2));
		return -EINVAL;
	}
	*out = (uint8_t)r;
	return 0;
}

static int
get_num(const struct th_conf *c, const char *section, enum th_feat f, uint64_t max, uint64_t *out,
	char *err, size_t err_size)
{
	const char *key = th_feat_name(f);

	if (th_conf_get(c, section, key) == NULL)
		return missing(c, section, key, err, err_size);
	return th_conf_get_u64(c, section, key, 1, max, out, err, err_size);
}

/* "1024, 65536,4096": up to TH_WL_MSGS_MAX sizes of 1..UINT32_MAX bytes. */
static int
parse_msgs(const char *s, struct th_wl *wl)
{
	unsigned n = 0;

	for (;;) {
		unsigned long long v;
		char *end;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9' || n == TH_WL_MSGS_MAX)
			return -EINVAL;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno != 0 || v == 0 || v > UINT32_MAX)
			return -EINVAL;
		wl->msg[n++] = (uint32_t)v;
		s = end;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		if (*s++ != ',')
			return -EINVAL;
	}
	wl->n_msgs = (uint16_t)n;
	return 0;
}

int
th_wl_from_conf(
	const struct th_conf *c, const char *section, struct th_wl *wl, char *err, size_t err_size)
{
	struct th_wl w;
	struct th_limits open;
	char where[256], why[256];
	const char *msg;
	uint64_t v;
	int r, bad;

	memset(&w, 0, sizeof(w));
	if ((r = get_enum(c, section, TH_F_MEM, &w.mem, err, err_size)) != 0 ||
		(r = get_enum(c, section, TH_F_QP_TYPE, &w.qp_type, err, err_size)) != 0 ||
		(r = get_enum(c, section, TH_F_OPCODE, &w.opcode, err, err_size)) != 0 ||
		(r = get_enum(c, section, TH_F_DIR, &w.dir, err, err_size)) != 0)
		return r;
	if ((r = get_num(c, section, TH_F_MTU, 4096, &v, err, err_size)) != 0)
		return r;
	w.mtu = (uint16_t)v;
	if (th_wl_enum_index(&w, TH_F_MTU) >= th_feat_value_count(TH_F_MTU)) {
		th_conf_where(c, section, "mtu", where, sizeof(where));
		snprintf(err, err_size, "%s: mtu = %u: expected 1024, 2048 or 4096", where, w.mtu);
		return -EINVAL;
	}
	if ((r = get_num(c, section, TH_F_WQE_BATCH, UINT16_MAX, &v, err, err_size)) != 0)
		return r;
	w.wqe_batch = (uint16_t)v;
	if ((r = get_num(c, section, TH_F_SGE, UINT16_MAX, &v, err, err_size)) != 0)
		return r;
	w.sge = (uint16_t)v;
	if ((r = get_num(c, section, TH_F_WQ_DEPTH, UINT32_MAX, &v, err, err_size)) != 0)
		return r;
	w.wq_depth = (uint32_t)v;
	if ((r = get_num(c, section, TH_F_QP_COUNT, UINT32_MAX, &v, err, err_size)) != 0)
		return r;
	w.qp_count = (uint32_t)v;
	if ((r = get_num(c, section, TH_F_MR_COUNT, UINT32_MAX, &v, err, err_size)) != 0)
		return r;
	w.mr_count = (uint32_t)v;
	if ((r = get_num(c, section, TH_F_MR_SIZE, UINT64_MAX, &v, err, err_size)) != 0)
		return r;
	w.mr_size = v;
	msg = th_conf_get(c, section, "msg");
	if (msg == NULL)
		return missing(c, section, "msg", err, err_size);
	if (parse_msgs(msg, &w) != 0) {
		char shown[128];

		th_conf_where(c, section, "msg", where, sizeof(where));
		snprintf(err, err_size,
			"%s: msg = '%s': expected 1 to %d request sizes in bytes "
			"(1 to 4294967295), separated by commas",
			where, th_conf_printable(msg, shown, sizeof(shown)), TH_WL_MSGS_MAX);
		return -EINVAL;
	}
	/* What no device can run, reported at the line of the feature at fault. */
	limits_open(&open);
	bad = th_wl__check_feat(&w, &open, why, sizeof(why));
	if (bad >= 0) {
		th_conf_where(c, section, th_feat_name((enum th_feat)bad), where, sizeof(where));
		snprintf(err, err_size, "%s: %s", where, why);
		return -EINVAL;
	}
	*wl = w;
	return 0;
}

int
th_wl_parse(const char *line, struct th_wl *wl, char *err, size_t err_size)
{
	struct th_conf *c;
	struct th_wl w;
	char *text, *t;
	const char *s;
	int r;

	/* One word per line before any [section]: line N of the INI text is word N. */
	text = malloc(strlen(line) + 1);
	if (text == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	for (s = line, t = text; *s != '\0'; s++) {
		if (*s != ' ' && *s != '\t')
			*t++ = *s;
		else if (t > text && t[-1] != '\n')
			*t++ = '\n';
	}
	*t = '\0';
	c = th_conf_parse(text, "word", err, err_size);
	free(text);
	if (c == NULL) {
		r = errno == ENOMEM ? -ENOMEM : -EINVAL;
	} else {
		r = th_wl_from_conf(c, "", &w, err, err_size);
		if (r == 0)
			r = th_conf_check_unused(c, err, err_size);
		th_conf_free(c);
	}
	if (r < 0) {
		/* "word:3: ..." as the INI reader writes it reads "word 3: ...". */
		if (err_size > 6 && strncmp(err, "word:", 5) == 0 && err[5] >= '0' && err[5] <= '9')
			err[4] = ' ';
		return r;
	}
	*wl = w;
	return 0;
}

int
th_wl_write(const struct th_wl *wl, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned i;
	int r = 0;

	if (f == NULL)
		return -errno;
	fprintf(f, "# tracehound workload (one point of the RDMA search space)\n[workload]\n");
	fprintf(f, "mem = %s\nqp_type = %s\nopcode = %s\ndir = %s\n", word(TH_F_MEM, wl->mem),
		word(TH_F_QP_TYPE, wl->qp_type), word(TH_F_OPCODE, wl->opcode),
		word(TH_F_DIR, wl->dir));
	fprintf(f, "mtu = %u\nwqe_batch = %u\nsge = %u\nwq_depth = %" PRIu32 "\n", wl->mtu,
		wl->wqe_batch, wl->sge, wl->wq_depth);
	fprintf(f, "qp_count = %" PRIu32 "\nmr_count = %" PRIu32 "\nmr_size = %" PRIu64 "\nmsg = ",
		wl->qp_count, wl->mr_count, wl->mr_size);
	for (i = 0; i < wl->n_msgs && i < TH_WL_MSGS_MAX; i++)
		fprintf(f, "%s%" PRIu32, i ? "," : "", wl->msg[i]);
	fprintf(f, "\n");
	if (ferror(f))
		r = -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

int
th_wl_load(
	const char *path, const struct th_limits *l, struct th_wl *wl, char *err, size_t err_size)
{
	struct th_conf *c = th_conf_load(path, err, err_size);
	char where[256], why[256];
	int r, bad;

	if (c == NULL)
		return errno ? -errno : -EINVAL;
	r = th_wl_from_conf(c, "workload", wl, err, err_size);
	if (r == 0 && (r = th_conf_check_unused(c, err, err_size)) < 0) {
		size_t n = strnlen(err, err_size);

		snprintf(err + n, err_size - n, " (workload keys: README, tracehound search)");
	}
	/* Past the device's limits: at the line of the feature at fault. */
	if (r == 0 && l != NULL && (bad = th_wl__check_feat(wl, l, why, sizeof(why))) >= 0) {
		th_conf_where(c, "workload", th_feat_name((enum th_feat)bad), where, sizeof(where));
		snprintf(err, err_size, "%s: %s", where, why);
		r = -ERANGE;
	}
	th_conf_free(c);
	return r;
}
