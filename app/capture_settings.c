/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound capture's settings: the config file's keys with their defaults
 * and bounds (errors say file:line), the outputs checked against each other
 * and against the pcaps the ports read, and the EAL's arguments.
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "th_cmd.h"
#include "th_conf.h"

int
th_settings_load(
	struct settings *s, const char *config, struct th_conf **conf_out, char *err, size_t esz)
{
	struct th_conf *c = NULL;
	const char *v;
	int rc = 0;

	s->output = "-";
	s->decode_lcores = 0;
	s->stats_interval_ns = 0;
	s->mbufs = 32767;
	s->burst = 32;
	s->ring_size = 8192;
	s->rx_desc = 1024;
	th_decode_config_defaults(&s->dec);
	if (config != NULL) {
		c = th_conf_load(config, err, esz);
		if (c == NULL)
			return -EINVAL;
	}
	*conf_out = c;
	v = th_conf_get(c, "capture", "output");
	if (v != NULL)
		s->output = v;
	{
		uint64_t flows = s->dec.flows, calls = s->dec.calls;

		rc = rc ? rc
			: th_conf_get_u64(c, "capture", "decode_lcores", 1, MAX_DECODE,
				  &s->decode_lcores, err, esz);
		rc = rc ? rc
			: th_conf_get_seconds(
				  c, "capture", "stats_interval", &s->stats_interval_ns, err, esz);
		rc = rc ? rc
			: th_conf_get_u64(
				  c, "capture", "mbufs", 1023, 1u << 24, &s->mbufs, err, esz);
		rc = rc ? rc : th_conf_get_u64(c, "capture", "burst", 1, 256, &s->burst, err, esz);
		rc = rc ? rc
			: th_conf_get_u64(
				  c, "capture", "ring_size", 64, 1u << 20, &s->ring_size, err, esz);
		rc = rc ? rc
			: th_conf_get_u64(
				  c, "capture", "rx_desc", 64, 16384, &s->rx_desc, err, esz);
		rc = rc ? rc : th_conf_get_u64(c, "decode", "flows", 8, 1u << 24, &flows, err, esz);
		rc = rc ? rc : th_conf_get_u64(c, "decode", "calls", 8, 1u << 24, &calls, err, esz);
		rc = rc ? rc
			: th_conf_get_seconds(
				  c, "decode", "flow_idle", &s->dec.flow_idle_ns, err, esz);
		rc = rc ? rc
			: th_conf_get_seconds(
				  c, "decode", "call_timeout", &s->dec.call_timeout_ns, err, esz);
		rc = rc ? rc
			: th_conf_get_seconds(c, "decode", "gap_call_timeout",
				  &s->dec.gap_call_timeout_ns, err, esz);
		s->dec.flows = (uint32_t)flows;
		s->dec.calls = (uint32_t)calls;
	}
	th_sess_config_defaults(&s->sess);
	s->records = th_conf_get(c, "session", "records");
	s->names = th_conf_get(c, "session", "names");
	{
		uint64_t files = s->sess.files, sessions = s->sess.sessions;
		const char *detail = th_conf_get(c, "session", "detail");

		rc = rc ? rc
			: th_conf_get_u64(c, "session", "lcores", 1, MAX_SESSION,
				  &s->session_lcores, err, esz);
		rc = rc ? rc
			: th_conf_get_u64(c, "session", "files", 8, 1u << 28, &files, err, esz);
		rc = rc ? rc
			: th_conf_get_u64(
				  c, "session", "sessions", 8, 1u << 28, &sessions, err, esz);
		rc = rc ? rc
			: th_conf_get_seconds(c, "session", "idle", &s->sess.idle_ns, err, esz);
		rc = rc ? rc
			: th_conf_get_seconds(
				  c, "session", "cache_window", &s->sess.cache_window_ns, err, esz);
		{
			uint64_t burst = s->sess.getattr_burst, touch = s->sess.is_touch_open,
				 mirror = s->sess.is_access_mirror;

			rc = rc ? rc
				: th_conf_get_seconds(
					  c, "session", "confirm", &s->sess.confirm_ns, err, esz);
			rc = rc ? rc
				: th_conf_get_seconds(
					  c, "session", "listing", &s->sess.listing_ns, err, esz);
			rc = rc ? rc
				: th_conf_get_seconds(c, "session", "write_settle",
					  &s->sess.write_settle_ns, err, esz);
			rc = rc ? rc
				: th_conf_get_seconds(c, "session", "getattr_burst_gap",
					  &s->sess.getattr_burst_ns, err, esz);
			rc = rc ? rc
				: th_conf_get_u64(
					  c, "session", "getattr_burst", 0, 1000, &burst, err, esz);
			rc = rc ? rc
				: th_conf_get_u64(
					  c, "session", "touch_open", 0, 1, &touch, err, esz);
			rc = rc ? rc
				: th_conf_get_u64(
					  c, "session", "access_mirror", 0, 1, &mirror, err, esz);
			s->sess.getattr_burst = (uint32_t)burst;
			s->sess.is_touch_open = touch != 0;
			s->sess.is_access_mirror = mirror != 0;
		}
		s->sess.files = (uint32_t)files;
		s->sess.sessions = (uint32_t)sessions;
		if (rc == 0 && detail != NULL) {
			if (strcmp(detail, "opens") == 0) {
				s->sess.detail = TH_SESS_OPENS;
			} else if (strcmp(detail, "dirs") == 0) {
				s->sess.detail = TH_SESS_OPENS_DIRS;
			} else {
				th_conf_where(c, "session", "detail", err, esz);
				snprintf(err + strlen(err), esz - strlen(err),
					": session.detail = '%s': expected opens or dirs", detail);
				rc = -EINVAL;
			}
		}
		s->sess.is_names_on = s->names != NULL || th_conf_get(c, "trace", "dir") != NULL;
	}
	s->trace_dir = th_conf_get(c, "trace", "dir");
	if (rc == 0 && s->trace_dir != NULL) {
		struct stat st;
		int e = 0;

		if (s->trace_dir[0] == '\0')
			e = ENOENT;
		else if (stat(s->trace_dir, &st) != 0)
			e = errno;
		else if (!S_ISDIR(st.st_mode))
			e = ENOTDIR;
		else if (access(s->trace_dir, W_OK | X_OK) != 0)
			e = errno;
		if (e != 0) {
			th_conf_where(c, "trace", "dir", err, esz);
			snprintf(err + strlen(err), esz - strlen(err),
				": trace.dir = '%s': %s (expected a writable directory)",
				s->trace_dir, strerror(e));
			rc = -EINVAL;
		}
	}
	s->box_id = 0;
	s->rotate_bytes = 256;
	s->rotate_ns = 3600ull * 1000000000ull;
	s->flush_ns = 1000000000ull;
	rc = rc ? rc : th_conf_get_u64(c, "trace", "box", 0, UINT32_MAX, &s->box_id, err, esz);
	rc = rc ? rc
		: th_conf_get_u64(c, "trace", "rotate_mb", 1, 1u << 20, &s->rotate_bytes, err, esz);
	s->rotate_bytes <<= 20;
	rc = rc ? rc : th_conf_get_seconds(c, "trace", "rotate", &s->rotate_ns, err, esz);
	rc = rc ? rc : th_conf_get_seconds(c, "trace", "flush", &s->flush_ns, err, esz);
	rc = rc ? rc : th_conf_get_u64(c, "trace", "rpcs", 0, 1, &s->is_rpc_trace, err, esz);
	s->probe_target = th_conf_get(c, "probe", "target");
	s->probe_every_ns = 600ull * 1000000000ull;
	s->probe_seconds_ns = 2ull * 1000000000ull;
	s->probe_rate = 50;
	s->probe_size = 64ull << 20;
	s->probe_percentile = 99;
	s->probe_alarm_ns = 20ull * 1000000ull;
	rc = rc ? rc : th_conf_get_seconds(c, "probe", "every", &s->probe_every_ns, err, esz);
	rc = rc ? rc : th_conf_get_seconds(c, "probe", "seconds", &s->probe_seconds_ns, err, esz);
	rc = rc ? rc : th_conf_get_u64(c, "probe", "rate", 1, 1000000, &s->probe_rate, err, esz);
	rc = rc ? rc
		: th_conf_get_u64(c, "probe", "size_mb", 1, 1u << 20, &s->probe_size, err, esz);
	rc = rc ? rc
		: th_conf_get_u64(c, "probe", "percentile", 1, 100, &s->probe_percentile, err, esz);
	rc = rc ? rc : th_conf_get_seconds(c, "probe", "alarm", &s->probe_alarm_ns, err, esz);
	if (th_conf_get(c, "probe", "size_mb") != NULL)
		s->probe_size <<= 20;
	return rc;
}

/* Says "file:line: section.key" and @p why into @p err. @return -EINVAL. */
static int
refuse(const struct th_conf *c, const char *section, const char *key, const char *why, char *err,
	size_t esz)
{
	th_conf_where(c, section, key, err, esz);
	snprintf(err + strlen(err), esz - strlen(err), ": %s.%s %s", section, key, why);
	return -EINVAL;
}

/* Keys that act only beside another: one set alone is a mistake, said rather than ignored. */
static const struct {
	const char *section;
	const char *keys[16];
	const char *needs;
} dependents[] = {
	{"session",
		{"names", "lcores", "detail", "idle", "files", "sessions", "cache_window",
			"confirm", "listing", "write_settle", "getattr_burst_gap", "getattr_burst",
			"touch_open", "access_mirror", NULL},
		"does nothing without session.records (or -r) or trace.dir: inference is off"},
	{"trace", {"box", "rotate_mb", "rotate", "flush", "rpcs", NULL},
		"does nothing without trace.dir"},
	{"probe", {"every", "seconds", "rate", "size_mb", "percentile", "alarm", NULL},
		"does nothing without probe.target (a block device, file or directory)"},
};

int
th_settings_check(const struct settings *s, const struct th_conf *c, char *err, size_t esz)
{
	const bool is_on[] = {s->records != NULL || s->trace_dir != NULL, s->trace_dir != NULL,
		s->probe_target != NULL};
	/* Times that parse but cannot work, where the feature is on. */
	const struct {
		bool is_on;
		const char *section, *key;
		uint64_t ns;
		const char *why;
	} positive[] = {
		{is_on[0], "session", "idle", s->sess.idle_ns,
			"= 0: an open would close before its first operation; expected seconds > "
			"0"},
		{is_on[1], "trace", "rotate", s->rotate_ns,
			"= 0: a segment would close at once; expected seconds > 0"},
		{is_on[1], "trace", "flush", s->flush_ns,
			"= 0: expected seconds > 0 (what a crash may lose)"},
		{is_on[2], "probe", "every", s->probe_every_ns,
			"= 0: expected seconds > 0 between probe starts"},
		{is_on[2], "probe", "seconds", s->probe_seconds_ns,
			"= 0: a probe would take no samples; expected seconds > 0"},
	};
	const struct {
		const char *value, *what;
	} names[] = {{s->output, "-o or capture.output"}, {s->records, "-r or session.records"},
		{s->names, "session.names"}, {s->probe_target, "probe.target"}};
	size_t i, k;

	for (i = 0; i < sizeof(dependents) / sizeof(dependents[0]); i++)
		for (k = 0; !is_on[i] && dependents[i].keys[k] != NULL; k++)
			if (th_conf_get(c, dependents[i].section, dependents[i].keys[k]) != NULL)
				return refuse(c, dependents[i].section, dependents[i].keys[k],
					dependents[i].needs, err, esz);
	for (i = 0; i < sizeof(positive) / sizeof(positive[0]); i++)
		if (positive[i].is_on && positive[i].ns == 0)
			return refuse(
				c, positive[i].section, positive[i].key, positive[i].why, err, esz);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].value != NULL && names[i].value[0] == '\0') {
			snprintf(err, esz, "%s: an empty file name", names[i].what);
			return -EINVAL;
		}
	}
	if (s->stats_interval_ns != 0 && s->stats_interval_ns < 100000000ull) {
		snprintf(err, esz,
			"stats interval %.3g s: expected 0 (off) or at least 0.1 s between "
			"progress "
			"lines",
			(double)s->stats_interval_ns / 1e9);
		return -EINVAL;
	}
	return 0;
}

/*
 * The next file after @p key ("rx_pcap=", "tx_pcap=") in a net_pcap vdev's arguments,
 * from *@p args on (a vdev may name several), into @p path; *@p args moves past it.
 */
static bool
pcap_arg_next(const char **args, const char *key, char *path, size_t size)
{
	const char *p;
	size_t n;

	while ((p = strstr(*args, key)) != NULL) {
		p += strlen(key);
		n = strcspn(p, ",");
		*args = p + n;
		if (n < size) {
			memcpy(path, p, n);
			path[n] = '\0';
			return true;
		}
	}
	return false;
}

bool
th_rx_pcap_next(const char **args, char *path, size_t size)
{
	return pcap_arg_next(args, "rx_pcap=", path, size);
}

/*
 * Whether pcap @p in, which a port reads (rx_pcap=), is also written: by an output
 * (opened before it is read) or by a tx_pcap= (the driver opens it first).
 * @return true after saying which.
 */
static bool
pcap_is_written(const char *in, const char *const *outs, const char *const *names, size_t n,
	int argc, char **argv)
{
	char tx[PATH_MAX];

	for (size_t k = 0; k < n; k++) {
		if (outs[k] != NULL && th_cmd_same_file(outs[k], in)) {
			fprintf(stderr,
				"capture: %s %s is the pcap a port reads (rx_pcap=): writing it "
				"would empty it first\n",
				names[k], outs[k]);
			return true;
		}
	}
	for (int i = 0; i < argc; i++) {
		const char *args = argv[i];

		while (pcap_arg_next(&args, "tx_pcap=", tx, sizeof(tx))) {
			if (th_cmd_same_file(tx, in)) {
				fprintf(stderr,
					"capture: tx_pcap=%s is the pcap rx_pcap= reads: the "
					"driver "
					"would empty it first\n",
					tx);
				return true;
			}
		}
	}
	return false;
}

bool
th_settings_outputs_clash(const struct settings *s, int argc, char **argv, const char *config)
{
	const char *outs[3] = {NULL, NULL, NULL}, *names[] = {"-o", "-r", "session.names"};
	const char *given[] = {s->output, s->records, s->names};
	char in[PATH_MAX];
	size_t k, j;

	for (k = 0; k < 3; k++) /* "none" writes nothing, "-" standard output */
		if (given[k] != NULL && strcmp(given[k], "none") != 0)
			outs[k] = strcmp(given[k], "-") == 0 ? "/dev/stdout" : given[k];
	for (k = 0; k < 3; k++) {
		if (outs[k] == NULL)
			continue;
		/* Standard output twice, even a terminal: lines of two kinds interleaved. */
		for (j = k + 1; j < 3; j++) {
			if (outs[j] != NULL && strcmp(outs[k], "/dev/stdout") == 0 &&
				strcmp(outs[j], "/dev/stdout") == 0) {
				fprintf(stderr, "capture: %s and %s both write standard output\n",
					names[k], names[j]);
				return true;
			}
		}
		if (config != NULL && th_cmd_same_file(outs[k], config)) {
			fprintf(stderr, "capture: %s %s is the config file\n", names[k], outs[k]);
			return true;
		}
		for (j = k + 1; j < 3; j++) {
			if (outs[j] != NULL && th_cmd_same_file(outs[k], outs[j])) {
				fprintf(stderr, "capture: %s and %s both write %s\n", names[k],
					names[j], outs[k]);
				return true;
			}
		}
	}
	for (int i = 0; i < argc; i++) {
		const char *args = argv[i];

		while (th_rx_pcap_next(&args, in, sizeof(in)))
			if (pcap_is_written(in, outs, names, 3, argc, argv))
				return true;
	}
	return false;
}

int
th_settings_eal_argv(struct th_conf *c, int argc, char **argv, char ***out, char **copy_out)
{
	const char *cfg_args = th_conf_get(c, "eal", "args");
	char **v, *copy = NULL, *tok, *save;
	int n = 0, max = argc + 2;

	if (cfg_args != NULL) {
		copy = strdup(cfg_args);
		if (copy == NULL)
			return -ENOMEM;
		max += (int)strlen(cfg_args) / 2 + 1;
	}
	v = calloc((size_t)max, sizeof(*v));
	if (v == NULL) {
		free(copy);
		return -ENOMEM;
	}
	v[n++] = "tracehound";
	if (copy != NULL)
		for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			v[n++] = tok;
	for (int i = 0; i < argc; i++)
		v[n++] = argv[i];
	*out = v;
	*copy_out = copy;
	return n;
}
