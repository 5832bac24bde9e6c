/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound capture's settings: the config file's keys with their defaults
 * and bounds (errors say file:line), the outputs checked against each other
 * and against the pcaps the ports read, and the EAL's arguments.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "th_cmd.h"
#include "th_conf.h"
#include "th_pcap.h"
#include "th_probe.h"

/* A number the config may set: where it lands, its bounds, and how it is read. */
struct num_key {
	const char *section, *key;
	bool is_seconds;    /* a time ("30", "0.5"), kept in ns; else a whole number */
	uint64_t min, max;  /* whole numbers: the range given */
	unsigned int shift; /* stored as value << shift (MiB to bytes: 20) */
	size_t off, width;  /* into struct settings; 8, 4 or 1 (bool) bytes */
};

#define AT(f) offsetof(struct settings, f), sizeof(((struct settings *)0)->f)
#define WHOLE(sec, key, lo, hi, f)                                                                 \
	{                                                                                          \
		sec, key, false, lo, hi, 0, AT(f)                                                  \
	}
#define SECONDS(sec, key, f)                                                                       \
	{                                                                                          \
		sec, key, true, 0, 0, 0, AT(f)                                                     \
	}

static const struct num_key num_keys[] = {
	WHOLE("capture", "decode_lcores", 1, MAX_DECODE, decode_lcores),
	SECONDS("capture", "stats_interval", stats_interval_ns),
	WHOLE("capture", "mbufs", 1023, 1u << 24, mbufs),
	WHOLE("capture", "burst", 1, 256, burst),
	WHOLE("capture", "ring_size", 64, 1u << 20, ring_size),
	WHOLE("capture", "rx_desc", 64, 16384, rx_desc),
	WHOLE("decode", "flows", 8, 1u << 24, dec.flows),
	WHOLE("decode", "calls", 8, 1u << 24, dec.calls),
	SECONDS("decode", "flow_idle", dec.flow_idle_ns),
	SECONDS("decode", "call_timeout", dec.call_timeout_ns),
	SECONDS("decode", "gap_call_timeout", dec.gap_call_timeout_ns),
	WHOLE("decode", "listings", 0, TH_FLOW_WHOLE_MAX, dec.listings),
	SECONDS("decode", "copy_window", dec.copy_window_ns),
	WHOLE("session", "lcores", 1, MAX_SESSION, session_lcores),
	WHOLE("session", "files", 8, 1u << 28, sess.files),
	WHOLE("session", "sessions", 8, 1u << 28, sess.sessions),
	SECONDS("session", "idle", sess.idle_ns),
	SECONDS("session", "cache_window", sess.cache_window_ns),
	SECONDS("session", "confirm", sess.confirm_ns),
	SECONDS("session", "listing", sess.listing_ns),
	SECONDS("session", "write_settle", sess.write_settle_ns),
	SECONDS("session", "getattr_burst_gap", sess.getattr_burst_ns),
	WHOLE("session", "getattr_burst", 0, 1000, sess.getattr_burst),
	WHOLE("session", "touch_open", 0, 1, sess.is_touch_open),
	WHOLE("session", "access_mirror", 0, 1, sess.is_access_mirror),
	WHOLE("trace", "box", 0, UINT32_MAX, box_id),
	{"trace", "rotate_mb", false, 1, 1u << 20, 20, AT(rotate_bytes)},
	SECONDS("trace", "rotate", rotate_ns),
	SECONDS("trace", "flush", flush_ns),
	WHOLE("trace", "rpcs", 0, 1, is_rpc_trace),
	SECONDS("probe", "every", probe_every_ns),
	SECONDS("probe", "seconds", probe_seconds_ns),
	WHOLE("probe", "rate", 1, 1000000, probe_rate),
	{"probe", "size_mb", false, 1, 1u << 20, 20, AT(probe_size)},
	WHOLE("probe", "percentile", 1, 100, probe_percentile),
	SECONDS("probe", "alarm", probe_alarm_ns),
};

#undef SECONDS
#undef WHOLE
#undef AT

/* Key @p k from @p c into @p s when the file sets it. @return 0 or -EINVAL. */
static int
read_num(
	const struct th_conf *c, const struct num_key *k, struct settings *s, char *err, size_t esz)
{
	char *dst = (char *)s + k->off;
	uint64_t v;
	int rc;

	if (th_conf_get(c, k->section, k->key) == NULL)
		return 0;
	rc = k->is_seconds ? th_conf_get_seconds(c, k->section, k->key, &v, err, esz)
			   : th_conf_get_u64(c, k->section, k->key, k->min, k->max, &v, err, esz);
	if (rc != 0)
		return rc;
	v <<= k->shift;
	if (k->width == sizeof(uint64_t)) {
		memcpy(dst, &v, sizeof(v));
	} else if (k->width == sizeof(uint32_t)) {
		uint32_t w = (uint32_t)v;

		memcpy(dst, &w, sizeof(w));
	} else {
		bool b = v != 0;

		memcpy(dst, &b, sizeof(b));
	}
	return 0;
}

/*
 * probe.target as the probe thread will find it, checked at the start: a
 * target it cannot probe would otherwise fail every probe, one stderr line
 * each, through a capture that exits 0. @return 0, or -EINVAL with
 * file:line in @p err.
 */
static int
check_probe_target(const struct th_conf *c, const char *target, char *err, size_t esz)
{
	char why[320], shown[320];
	enum th_probe_kind kind;

	if (th_probe_check_target(target, false, &kind, why, sizeof(why)) == 0) {
		if (kind == TH_PROBE_KIND_TEMP || th_conf_get(c, "probe", "size_mb") == NULL)
			return 0;
		/* The size of a temporary file in a directory; a file or device is read as is. */
		th_conf_where(c, "probe", "size_mb", err, esz);
		snprintf(err + strlen(err), esz - strlen(err),
			": probe.size_mb is the size of the temporary file made in a directory "
			"target; probe.target %s is a %s, probed as it is: remove the key",
			th_conf_printable(target, shown, sizeof(shown)), th_probe_kind_name(kind));
		return -EINVAL;
	}
	th_conf_where(c, "probe", "target", err, esz);
	snprintf(err + strlen(err), esz - strlen(err),
		": probe.target: %s (expected a block device, a file or a writable directory)",
		th_conf_printable(why, shown, sizeof(shown)));
	return -EINVAL;
}

/*
 * Whether a file can be made in directory @p dir: root passes access() for
 * any directory, /proc and read-only mounts included. @return 0 or an errno.
 */
static int
try_create(const char *dir)
{
	char path[PATH_MAX];
	int fd, e = 0;

	if (snprintf(path, sizeof(path), "%s/.tracehound-XXXXXX", dir) >= (int)sizeof(path))
		return ENAMETOOLONG;
	fd = mkstemp(path);
	if (fd < 0)
		return errno;
	if (unlink(path) != 0)
		e = errno;
	close(fd);
	return e;
}

int
th_settings_load(
	struct settings *s, const char *config, struct th_conf **conf_out, char *err, size_t esz)
{
	struct th_conf *c = NULL;
	const char *detail;
	size_t i;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->output = "-";
	s->mbufs = 32767;
	s->burst = 32;
	s->ring_size = 8192;
	s->rx_desc = 1024;
	th_decode_config_defaults(&s->dec);
	th_sess_config_defaults(&s->sess);
	s->rotate_bytes = 256ull << 20;
	s->rotate_ns = 3600ull * 1000000000ull;
	s->flush_ns = 1000000000ull;
	s->probe_every_ns = 600ull * 1000000000ull;
	s->probe_seconds_ns = 2ull * 1000000000ull;
	s->probe_rate = 50;
	s->probe_size = 64ull << 20;
	s->probe_percentile = 99;
	s->probe_alarm_ns = 20ull * 1000000ull;
	if (config != NULL) {
		c = th_conf_load(config, err, esz);
		if (c == NULL)
			return -EINVAL;
	}
	*conf_out = c;
	for (i = 0; rc == 0 && i < sizeof(num_keys) / sizeof(num_keys[0]); i++)
		rc = read_num(c, &num_keys[i], s, err, esz);
	if (th_conf_get(c, "capture", "output") != NULL)
		s->output = th_conf_get(c, "capture", "output");
	s->records = th_conf_get(c, "session", "records");
	s->names = th_conf_get(c, "session", "names");
	s->trace_dir = th_conf_get(c, "trace", "dir");
	s->probe_target = th_conf_get(c, "probe", "target");
	s->sess.is_names_on = s->names != NULL || s->trace_dir != NULL;
	detail = th_conf_get(c, "session", "detail");
	if (rc == 0 && detail != NULL) {
		if (strcmp(detail, "opens") == 0) {
			s->sess.detail = TH_SESS_OPENS;
		} else if (strcmp(detail, "dirs") == 0) {
			s->sess.detail = TH_SESS_OPENS_DIRS;
		} else {
			char shown[64];

			th_conf_where(c, "session", "detail", err, esz);
			snprintf(err + strlen(err), esz - strlen(err),
				": session.detail = '%s': expected opens or dirs",
				th_conf_printable(detail, shown, sizeof(shown)));
			rc = -EINVAL;
		}
	}
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
		else
			e = try_create(s->trace_dir);
		if (e != 0) {
			char shown[256];

			th_conf_where(c, "trace", "dir", err, esz);
			snprintf(err + strlen(err), esz - strlen(err),
				": trace.dir = '%s': %s (expected a writable directory)",
				th_conf_printable(s->trace_dir, shown, sizeof(shown)), strerror(e));
			rc = -EINVAL;
		}
	}
	if (rc == 0 && s->probe_target != NULL)
		rc = check_probe_target(c, s->probe_target, err, esz);
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

/*
 * Sections whose keys act only beside the one that turns their feature on
 * (session.records or trace.dir, trace.dir, probe.target): a key set alone
 * is a mistake, said rather than ignored.
 */
static const struct {
	const char *section, *needs;
} features[] = {
	{"session", "does nothing without session.records (or -r) or trace.dir: inference is off"},
	{"trace", "does nothing without trace.dir"},
	{"probe", "does nothing without probe.target (a block device, file or directory)"},
};

/* Such keys read as text; the numbers are num_keys[]. */
static const struct {
	const char *section, *key;
} text_keys[] = {{"session", "names"}, {"session", "detail"}};

/* Key @p section.@p key when the file sets it and its feature is off: -EINVAL, else 0. */
static int
check_feature_key(const struct th_conf *c, const bool *is_on, const char *section, const char *key,
	char *err, size_t esz)
{
	for (size_t f = 0; f < sizeof(features) / sizeof(features[0]); f++)
		if (!is_on[f] && strcmp(section, features[f].section) == 0 &&
			th_conf_get(c, section, key) != NULL)
			return refuse(c, section, key, features[f].needs, err, esz);
	return 0;
}

int
th_settings_check(const struct settings *s, const struct th_conf *c, char *err, size_t esz)
{
	/* In features[] order. */
	const bool is_on[] = {s->records != NULL || s->trace_dir != NULL, s->trace_dir != NULL,
		s->probe_target != NULL};
	/* Times that parse but cannot work, where the feature is on. */
	const struct {
		bool is_on;
		const char *section, *key;
		uint64_t ns;
		const char *why;
	} positive[] = {
		{true, "decode", "flow_idle", s->dec.flow_idle_ns,
			"= 0: every connection would be forgotten between two segments; "
			"expected seconds > 0"},
		{true, "decode", "call_timeout", s->dec.call_timeout_ns,
			"= 0: every call would be given up (a CALL line) before its reply; "
			"expected seconds > 0"},
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
	/* File names the command line may give too (probe.target: th_settings_load()). */
	const struct {
		const char *value, *section, *key, *option;
	} names[] = {{s->output, "capture", "output", "-o"},
		{s->records, "session", "records", "-r"}, {s->names, "session", "names", NULL}};
	size_t i;

	for (i = 0; i < sizeof(num_keys) / sizeof(num_keys[0]); i++)
		if (check_feature_key(c, is_on, num_keys[i].section, num_keys[i].key, err, esz))
			return -EINVAL;
	for (i = 0; i < sizeof(text_keys) / sizeof(text_keys[0]); i++)
		if (check_feature_key(c, is_on, text_keys[i].section, text_keys[i].key, err, esz))
			return -EINVAL;
	for (i = 0; i < sizeof(positive) / sizeof(positive[0]); i++)
		if (positive[i].is_on && positive[i].ns == 0)
			return refuse(
				c, positive[i].section, positive[i].key, positive[i].why, err, esz);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].value == NULL || names[i].value[0] != '\0')
			continue;
		/* The command line's value is its own string, the file's the one it holds. */
		if (names[i].value != th_conf_get(c, names[i].section, names[i].key)) {
			snprintf(err, esz, "%s '': an empty file name; give a path",
				names[i].option);
			return -EINVAL;
		}
		return refuse(c, names[i].section, names[i].key,
			"is empty: expected a file name (or remove the key)", err, esz);
	}
	if (s->stats_interval_ns != 0 && s->stats_interval_ns < 100000000ull) {
		char why[96];

		snprintf(why, sizeof(why),
			"= %.3g: expected 0 (off) or at least 0.1 s between progress lines",
			(double)s->stats_interval_ns / 1e9);
		if (s->is_interval_given) {
			snprintf(err, esz, "--stats-interval %s", why + 2);
			return -EINVAL;
		}
		return refuse(c, "capture", "stats_interval", why, err, esz);
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
					"capture: tx_pcap=%s is the pcap rx_pcap= reads: "
					"the driver would empty it first\n",
					tx);
				return true;
			}
		}
	}
	return false;
}

/*
 * Whether output @p path is standard output: "/dev/stdout" (what "-" stands
 * for), or, while standard output is a terminal, any name of that terminal
 * ("/proc/self/fd/1", "/dev/fd/1", its /dev/pts/N). th_cmd_same_file() lets
 * two names of one character device pass (/dev/null twice is fine), and a file
 * or a pipe on standard output it catches by inode.
 */
static bool
is_stdout(const char *path)
{
	struct stat sp, so;

	if (strcmp(path, "/dev/stdout") == 0)
		return true;
	return isatty(STDOUT_FILENO) && fstat(STDOUT_FILENO, &so) == 0 && stat(path, &sp) == 0 &&
	       S_ISCHR(sp.st_mode) && sp.st_rdev == so.st_rdev;
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
			if (outs[j] != NULL && is_stdout(outs[k]) && is_stdout(outs[j])) {
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

/* What a file of mode @p mode is, for a message. */
static const char *
file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a pipe";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/*
 * Whether file @p in is read by an rx_pcap= before the one at @p args of argv[@p at]: the same
 * file on two ports would show every frame twice.
 */
static bool
pcap_read_before(const char *in, int at, const char *args, char **argv)
{
	char other[PATH_MAX];

	for (int i = 0; i <= at; i++) {
		const char *a = argv[i];

		while (th_rx_pcap_next(&a, other, sizeof(other))) {
			if (i == at && a >= args)
				return false;
			if (th_cmd_same_file(in, other))
				return true;
		}
	}
	return false;
}

/*
 * Say so when file @p in holds, among its first 10000 records, ones libpcap (so net_pcap)
 * reads otherwise than tshark: longer than its header's snap length (cut there, the bytes cut
 * read as lost), or stamped past 2038-01-19 (seconds taken as signed: before 1970).
 */
static void
warn_records(const char *in)
{
	struct th_pcap_scan sc;

	if (th_pcap_scan_records(in, 10000, &sc) != 0)
		return;
	if (sc.over_snaplen != 0)
		fprintf(stderr,
			"capture: warning: rx_pcap=%s: record %" PRIu64 " holds %" PRIu32
			" bytes, more than the %" PRIu32 " of the snap length in the file's "
			"header: libpcap (net_pcap) cuts such records to %" PRIu32
			" bytes, and the bytes cut count as lost (\"frames cut short\"); write "
			"the file with a larger snap length in its header\n",
			in, sc.over_snaplen, sc.over_caplen, sc.snaplen, sc.snaplen);
	if (sc.past_2038 != 0)
		fprintf(stderr,
			"capture: warning: rx_pcap=%s: record %" PRIu64 " is stamped %" PRIu32
			" s, after 2038-01-19: libpcap (net_pcap) reads the pcap format's seconds "
			"as signed, so its time reads as %" PRId64
			" s, before 1970, and times and latencies across it come out wrong\n",
			in, sc.past_2038, sc.past_secs, (int64_t)(int32_t)sc.past_secs);
}

int
th_settings_inputs_check(int argc, char **argv)
{
	char in[PATH_MAX];
	struct stat st;

	/*
	 * Capture reads each file's header again (its link type) and its records at
	 * the end (the inputs check): a pipe's bytes would be taken from net_pcap's
	 * stream, or wait for a writer for ever, and a device or a directory is no
	 * capture. A missing file is the driver's to refuse (it names the vdev).
	 */
	for (int i = 0; i < argc; i++) {
		const char *args = argv[i];

		while (th_rx_pcap_next(&args, in, sizeof(in))) {
			if (pcap_read_before(in, i, args, argv)) {
				fprintf(stderr,
					"capture: rx_pcap=%s is read twice: every frame would be "
					"seen twice; give each file once\n",
					in);
				return -EINVAL;
			}
			if (stat(in, &st) != 0)
				continue;
			if (S_ISREG(st.st_mode)) {
				warn_records(in);
				continue;
			}
			fprintf(stderr,
				"capture: rx_pcap=%s: not a regular file (%s): give a pcap "
				"file; save a live capture to a file first, or read an "
				"interface with net_af_packet\n",
				in, file_kind(st.st_mode));
			return -EINVAL;
		}
	}
	return 0;
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
