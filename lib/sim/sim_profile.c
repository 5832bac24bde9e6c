/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Profile loader: an INI file (config/rdma/<name>.ini) describes one subsystem.
 * Every number is range-checked with file:line, unknown keys and sections are
 * rejected, quirk predicates and documented anomalies are parsed with the MFS
 * and workload grammars of lib/anomaly and lib/space.
 */

#include "th_sim.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_private.h"
#include "th_conf.h"

/* One required number of the profile and where it lands. */
struct num_key {
	const char *section;
	const char *key;
	double min, max;
	size_t off;    /* into struct sim_params */
	bool is_whole; /* a count: no fraction */
};

#define P(f) offsetof(struct sim_params, f)

static const struct num_key num_keys[] = {
	{"link", "gbps", 1, 1600, P(link_gbps)},
	{"link", "hdr_bytes", 0, 256, P(hdr_bytes)},
	{"link", "pps_mpps", 0.1, 10000, P(pps_mpps)},
	{"link", "tx_mpps", 0.1, 10000, P(tx_mpps)},
	{"link", "rx_mpps", 0.1, 10000, P(rx_mpps)},
	{"link", "loopback_gbps", 0, 1600, P(loopback_gbps)},
	{"link", "loopback_msg_ns", 0, 1e7, P(loopback_msg_ns)},
	{"link", "ack_every", 1, 1024, P(ack_every), true},
	{"nic", "pu_count", 1, 1024, P(pu_count), true},
	{"nic", "pipeline_depth", 1, 1024, P(pipeline_depth), true},
	{"nic", "qpc_entries", 1, 1e7, P(qpc_entries), true},
	{"nic", "mtt_entries", 1, 1e8, P(mtt_entries), true},
	{"nic", "rwqe_entries", 1, 1e8, P(rwqe_entries), true},
	{"nic", "miss_expose", 0, 1, P(miss_expose)},
	{"nic", "rwqe_lead", 0.01, 1e6, P(rwqe_lead)},
	{"nic", "rwqe_window", 0.01, 1e7, P(rwqe_window)},
	{"nic", "rwqe_slots", 0.01, 1e7, P(rwqe_slots)},
	{"nic", "rwqe_inflight", 0.01, 1e4, P(rwqe_inflight)},
	{"nic", "rd_lead", 0.01, 1e6, P(rd_lead)},
	{"nic", "rd_slots", 0.01, 1e7, P(rd_slots)},
	{"nic", "rd_inflight", 0.01, 1e4, P(rd_inflight)},
	{"nic", "wqe_ns", 0, 1e5, P(wqe_ns)},
	{"nic", "sge_ns", 0, 1e5, P(sge_ns)},
	{"nic", "doorbell_ns", 0, 1e5, P(doorbell_ns)},
	{"nic", "rxbuf_kb", 1, 1e6, P(rxbuf_kb)},
	{"nic", "xoff_kb", 0, 1e6, P(xoff_kb)},
	{"nic", "xon_kb", 0, 1e6, P(xon_kb)},
	{"pcie", "gen", 1, 6, P(pcie_gen), true},
	{"pcie", "lanes", 1, 32, P(pcie_lanes), true},
	{"pcie", "mps", 64, 4096, P(pcie_mps), true},
	{"pcie", "mrrs", 64, 4096, P(pcie_mrrs), true},
	{"pcie", "rtt_ns", 1, 1e6, P(pcie_rtt_ns)},
	{"pcie", "tags", 1, 65536, P(pcie_tags), true},
	{"pcie", "tlp_bytes", 0, 256, P(pcie_tlp_bytes)},
	{"pcie", "desc_bytes", 0, 4096, P(desc_bytes)},
	{"pcie", "cqe_bytes", 0, 4096, P(cqe_bytes)},
	{"host", "remote_gbps", 1, 1e5, P(remote_gbps)},
	{"host", "remote_ns", 0, 1e6, P(remote_ns)},
	{"host", "gpu_gbps", 1, 1e5, P(gpu_gbps)},
	{"host", "gpu_ns", 0, 1e6, P(gpu_ns)},
	{"noise", "ratio", 0, 0.2, P(noise)},
	{"cost", "base_s", 0, 3600, P(cost_base_s)},
	{"cost", "qp_ms", 0, 1000, P(cost_qp_ms)},
	{"cost", "mr_ms", 0, 1000, P(cost_mr_ms)},
	{"cost", "setup_s", 0, 3600, P(cost_setup_s)},
};

#undef P

static int
missing(const struct th_conf *c, const char *section, const char *key, char *err, size_t err_size)
{
	return th_conf_missing(c, section, key, "(see config/rdma/README)", err, err_size);
}

/* "file:line: @p why" at section.key. @return -EINVAL. */
static int
refuse(const struct th_conf *c, const char *section, const char *key, const char *why, char *err,
	size_t err_size)
{
	char where[256];

	th_conf_where(c, section, key, where, sizeof(where));
	snprintf(err, err_size, "%s: %s", where, why);
	return -EINVAL;
}

/*
 * "file:line: nic.@p key = @p v @p how nic.@p other = @p ov (file:line): need ..." at @p key,
 * naming where the other of the pair is: the RX buffer's XON and XOFF levels and its size.
 */
static int
refuse_pair(const struct th_conf *c, const char *key, double v, const char *how, const char *other,
	double ov, char *err, size_t err_size)
{
	char where[256], there[256];

	th_conf_where(c, "nic", key, where, sizeof(where));
	th_conf_where(c, "nic", other, there, sizeof(there));
	snprintf(err, err_size,
		"%s: nic.%s = %g %s nic.%s = %g (%s): need xon_kb < xoff_kb <= rxbuf_kb "
		"(hysteresis)",
		where, key, v, how, other, ov, there);
	return -EINVAL;
}

static int
read_numbers(const struct th_conf *c, struct sim_params *p, char *err, size_t err_size)
{
	size_t i;

	for (i = 0; i < sizeof(num_keys) / sizeof(num_keys[0]); i++) {
		const struct num_key *k = &num_keys[i];
		double *dst = (double *)((char *)p + k->off);

		if (th_conf_get(c, k->section, k->key) == NULL)
			return missing(c, k->section, k->key, err, err_size);
		if (th_conf_get_double(c, k->section, k->key, k->min, k->max, dst, err, err_size) <
			0)
			return -EINVAL;
		if (k->is_whole && *dst != floor(*dst)) {
			char where[256];

			th_conf_where(c, k->section, k->key, where, sizeof(where));
			snprintf(err, err_size, "%s: %s.%s = %g: expected a whole number", where,
				k->section, k->key, *dst);
			return -EINVAL;
		}
	}
	if (p->xon_kb >= p->xoff_kb)
		return refuse_pair(c, "xon_kb", p->xon_kb, "is not below", "xoff_kb", p->xoff_kb,
			err, err_size);
	if (p->xoff_kb > p->rxbuf_kb)
		return refuse_pair(c, "rxbuf_kb", p->rxbuf_kb, "is below", "xoff_kb", p->xoff_kb,
			err, err_size);
	/* setup_s is the share of base_s a kept setup saves. */
	if (p->cost_setup_s > p->cost_base_s)
		return refuse(c, "cost", "setup_s", "need setup_s <= base_s", err, err_size);
	return 0;
}

static int
get_bool(const struct th_conf *c, const char *section, const char *key, bool *out, char *err,
	size_t err_size)
{
	const char *v = th_conf_get(c, section, key);

	if (v == NULL)
		return missing(c, section, key, err, err_size);
	if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0) {
		*out = true;
	} else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
		*out = false;
	} else {
		char where[256], shown[64];

		th_conf_where(c, section, key, where, sizeof(where));
		snprintf(err, err_size, "%s: %s.%s = '%s': expected yes or no", where, section, key,
			th_conf_printable(v, shown, sizeof(shown)));
		return -EINVAL;
	}
	return 0;
}

static int
get_u64(const struct th_conf *c, const char *key, uint64_t min, uint64_t max, uint64_t *out,
	char *err, size_t err_size)
{
	if (th_conf_get(c, "limits", key) == NULL)
		return missing(c, "limits", key, err, err_size);
	return th_conf_get_u64(c, "limits", key, min, max, out, err, err_size);
}

static int
read_limits(const struct th_conf *c, struct th_limits *l, char *err, size_t err_size)
{
	uint64_t v[8];

	if (get_u64(c, "max_qp", 1, 1u << 24, &v[0], err, err_size) < 0 ||
		get_u64(c, "max_mr", 1, 1u << 24, &v[1], err, err_size) < 0 ||
		get_u64(c, "max_wq_depth", 1, 1u << 20, &v[2], err, err_size) < 0 ||
		get_u64(c, "max_sge", 1, 1024, &v[3], err, err_size) < 0 ||
		get_u64(c, "max_wqe_batch", 1, 4096, &v[4], err, err_size) < 0 ||
		get_u64(c, "max_mr_size", 4096, UINT64_C(1) << 44, &v[5], err, err_size) < 0 ||
		get_u64(c, "max_pinned", 4096, UINT64_C(1) << 50, &v[6], err, err_size) < 0 ||
		get_u64(c, "max_msg", 1, UINT32_MAX, &v[7], err, err_size) < 0 ||
		get_bool(c, "limits", "has_gpu", &l->has_gpu, err, err_size) < 0 ||
		get_bool(c, "limits", "has_remote", &l->has_remote, err, err_size) < 0)
		return -EINVAL;
	l->max_qp = (uint32_t)v[0];
	l->max_mr = (uint32_t)v[1];
	l->max_wq_depth = (uint32_t)v[2];
	l->max_sge = (uint16_t)v[3];
	l->max_wqe_batch = (uint16_t)v[4];
	l->max_mr_size = v[5];
	l->max_pinned = v[6];
	l->max_msg = (uint32_t)v[7];
	return 0;
}

/* MFS text for a predicate: the symptom prefix is optional in quirk predicates. */
static int
parse_mfs(const struct th_conf *c, const char *section, const char *key, bool need_symptom,
	struct th_mfs *m, char *err, size_t err_size)
{
	const char *v = th_conf_get(c, section, key);
	char text[512], why[256], where[256];

	if (v == NULL)
		return missing(c, section, key, err, err_size);
	if (strchr(v, ':') != NULL || need_symptom)
		snprintf(text, sizeof(text), "%s", v);
	else
		snprintf(text, sizeof(text), "pause: %s", v);
	why[0] = '\0';
	if (strlen(v) >= sizeof(text) - 8 || th_mfs_parse(text, m, why, sizeof(why)) < 0) {
		th_conf_where(c, section, key, where, sizeof(where));
		snprintf(err, err_size, "%s: %s.%s: bad MFS text: %s", where, section, key,
			why[0] ? why : "too long");
		return -EINVAL;
	}
	if (m->feats == 0) {
		th_conf_where(c, section, key, where, sizeof(where));
		snprintf(err, err_size,
			"%s: %s.%s: no conditions: it would hold for every workload", where,
			section, key);
		return -EINVAL;
	}
	return 0;
}

static int
parse_quirk(const struct th_conf *c, const char *section, struct sim_quirk *q, char *err,
	size_t err_size)
{
	struct {
		const char *key;
		double *dst;
		double min, max;
	} eff[] = {
		{"tx_scale", &q->tx_scale, 0.001, 10},
		{"drain_scale", &q->drain_scale, 0.001, 10},
		{"qpc_expose", &q->qpc_expose, 0, 1},
		{"mtt_expose", &q->mtt_expose, 0, 1},
		{"rwqe_expose", &q->rwqe_expose, 0, 1},
		{"rwqe_sync", &q->rwqe_sync, 0.01, 1e6},
	};
	unsigned i, n = 0;

	snprintf(q->name, sizeof(q->name), "%s", section + strlen("quirk."));
	q->tx_scale = q->drain_scale = 1;
	if (parse_mfs(c, section, "when", false, &q->when, err, err_size) < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(eff) / sizeof(eff[0]); i++) {
		if (th_conf_get(c, section, eff[i].key) == NULL)
			continue;
		n++;
		if (th_conf_get_double(c, section, eff[i].key, eff[i].min, eff[i].max, eff[i].dst,
			    err, err_size) < 0)
			return -EINVAL;
	}
	/* A quirk documents itself; the text is for people, the model ignores it. */
	if (th_conf_get(c, section, "note") == NULL)
		return missing(c, section, "note", err, err_size);
	if (n == 0) {
		char where[256];

		th_conf_where(c, section, "when", where, sizeof(where));
		snprintf(err, err_size,
			"%s: [%s] has no effect; set tx_scale, drain_scale, qpc_expose, "
			"mtt_expose, rwqe_expose or rwqe_sync",
			where, section);
		return -EINVAL;
	}
	return 0;
}

/* "mem=local qp_type=RC ..." as th_wl_format() writes it, within the profile's limits. */
static int
parse_trigger(const struct th_conf *c, const char *section, const struct th_limits *l,
	struct th_wl *wl, char *err, size_t err_size)
{
	const char *v = th_conf_get(c, section, "trigger");
	char why[256], where[256];

	if (v == NULL)
		return missing(c, section, "trigger", err, err_size);
	why[0] = '\0';
	if (th_wl_parse(v, wl, why, sizeof(why)) < 0 || th_wl_check(wl, l, why, sizeof(why)) < 0) {
		th_conf_where(c, section, "trigger", where, sizeof(where));
		snprintf(err, err_size, "%s: %s.trigger: %s", where, section, why);
		return -EINVAL;
	}
	return 0;
}

static int
parse_known(
	const struct th_conf *c, const char *section, struct th_sim *s, char *err, size_t err_size)
{
	struct th_sim_known *k = &s->known[s->known_count];
	const char *num = section + strlen("known."), *note;
	char where[256], shown[64];

	/*
	 * N is the anomaly's number in the paper's Table 2, and the id ("F#3") is how a
	 * search's results, --known's file names (F-3.ini) and the tests name it: a word
	 * there is not one of those, and "03" would be a second id for anomaly 3.
	 */
	th_conf_where(c, section, NULL, where, sizeof(where));
	if (strspn(num, "0123456789") != strlen(num) || num[0] < '1' || num[0] > '9' ||
		strlen(s->name) + 1 + strlen(num) >= sizeof(k->id)) {
		snprintf(err, err_size,
			"%s: [%s]: expected [known.N], N the anomaly's number (1, 2, ...), at "
			"most %zu digits",
			where, th_conf_printable(section, shown, sizeof(shown)),
			sizeof(k->id) - 2 - strlen(s->name));
		return -EINVAL;
	}
	{
		char id[sizeof(k->id) + SIM_NAME_MAX];

		snprintf(id, sizeof(id), "%s#%s", s->name, num);
		memcpy(k->id, id, sizeof(k->id) - 1);
		k->id[sizeof(k->id) - 1] = '\0';
	}
	if (parse_mfs(c, section, "conditions", true, &k->mfs, err, err_size) < 0 ||
		parse_trigger(c, section, &s->limits, &k->trigger, err, err_size) < 0)
		return -EINVAL;
	if (!th_mfs_covers(&k->mfs, &k->trigger)) {
		th_conf_where(c, section, "trigger", where, sizeof(where));
		snprintf(err, err_size, "%s: %s.trigger does not meet its own conditions", where,
			section);
		return -EINVAL;
	}
	note = th_conf_get(c, section, "note");
	if (note == NULL)
		return missing(c, section, "note", err, err_size);
	k->note = strdup(note);
	if (k->note == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	s->known_count++;
	return 0;
}

/*
 * The [quirk.NAME] and [known.N] sections. The fixed ones were read by name;
 * th_conf_check_unused() reports the first key of any other section (a typo).
 */
static int
read_sections(const struct th_conf *c, struct th_sim *s, char *err, size_t err_size)
{
	const char *sec;
	char where[256];
	unsigned i;

	for (i = 0; (sec = th_conf_section(c, i)) != NULL; i++) {
		if (strncmp(sec, "quirk.", 6) == 0) {
			if (s->quirk_count == SIM_QUIRKS_MAX || strlen(sec + 6) == 0 ||
				strlen(sec + 6) >= SIM_NAME_MAX) {
				th_conf_where(c, sec, NULL, where, sizeof(where));
				snprintf(err, err_size,
					"%s: [%s]: quirk names are 1 to %d characters, at most %d "
					"quirks",
					where, sec, SIM_NAME_MAX - 1, SIM_QUIRKS_MAX);
				return -EINVAL;
			}
			if (parse_quirk(c, sec, &s->quirk[s->quirk_count], err, err_size) < 0)
				return -EINVAL;
			s->quirk_count++;
			continue;
		}
		if (strncmp(sec, "known.", 6) == 0) {
			if (s->known_count == SIM_KNOWN_MAX) {
				th_conf_where(c, sec, "conditions", where, sizeof(where));
				snprintf(err, err_size, "%s: more than %d [known.N] sections",
					where, SIM_KNOWN_MAX);
				return -EINVAL;
			}
			if (parse_known(c, sec, s, err, err_size) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

/* The subsystem @p c describes; frees @p c, which may be NULL (its parse failed). */
static struct th_sim *
build(struct th_conf *c, const char *name, uint64_t seed, char *err, size_t err_size)
{
	struct th_sim *s;
	const char *v;

	if (c == NULL)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, err_size, "%s: out of memory", name);
		th_conf_free(c);
		errno = ENOMEM;
		return NULL;
	}
	v = th_conf_get(c, "profile", "name");
	if (v == NULL || *v == '\0' || strlen(v) >= 8) {
		if (v == NULL)
			missing(c, "profile", "name", err, err_size);
		else {
			char where[256];

			th_conf_where(c, "profile", "name", where, sizeof(where));
			snprintf(err, err_size, "%s: profile.name: 1 to 7 characters", where);
		}
		goto invalid;
	}
	snprintf(s->name, sizeof(s->name), "%s", v);
	snprintf(s->backend_name, sizeof(s->backend_name), "sim:%s", v);
	(void)th_conf_get(c, "profile", "description");
	if (read_numbers(c, &s->p, err, err_size) < 0 ||
		read_limits(c, &s->limits, err, err_size) < 0 ||
		read_sections(c, s, err, err_size) < 0)
		goto invalid;
	if (th_conf_check_unused(c, err, err_size) < 0) {
		size_t n = strnlen(err, err_size);

		snprintf(err + n, err_size - n, " (profile keys: config/rdma/README)");
		goto invalid;
	}
	th_conf_free(c);
	sim_prepare(s);
	th_sim_reset(s, seed);
	return s;

invalid:
	th_sim_free(s);
	th_conf_free(c);
	errno = EINVAL;
	return NULL;
}

struct th_sim *
th_sim_parse(const char *text, const char *name, uint64_t seed, char *err, size_t err_size)
{
	return build(th_conf_parse(text, name, err, err_size), name, seed, err, err_size);
}

struct th_sim *
th_sim_load(const char *path, uint64_t seed, char *err, size_t err_size)
{
	return build(th_conf_load(path, err, err_size), path, seed, err, err_size);
}

void
th_sim_free(struct th_sim *s)
{
	unsigned i;

	if (s == NULL)
		return;
	for (i = 0; i < s->known_count; i++)
		free((char *)s->known[i].note);
	free(s);
}

const char *
th_sim_name(const struct th_sim *s)
{
	return s->name;
}

unsigned
th_sim_known_count(const struct th_sim *s)
{
	return s->known_count;
}

const struct th_sim_known *
th_sim_known_get(const struct th_sim *s, unsigned i)
{
	return i < s->known_count ? &s->known[i] : NULL;
}

const struct th_sim_known *
th_sim_known_find(const struct th_sim *s, const char *id)
{
	unsigned i;

	for (i = 0; id != NULL && i < s->known_count; i++)
		if (strcmp(s->known[i].id, id) == 0)
			return &s->known[i];
	return NULL;
}

void
th_sim_backend(struct th_sim *s, struct th_backend *b)
{
	memset(b, 0, sizeof(*b));
	b->name = s->backend_name;
	b->limits = &s->limits;
	b->ctx = s;
	b->run = sim_run;
	b->expect = sim_expect;
	b->cost_s = sim_cost_s;
}

void
th_sim_reset(struct th_sim *s, uint64_t seed)
{
	th_rng_seed(&s->rng, seed);
	s->has_last = false;
}
