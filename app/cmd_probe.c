/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound probe: random-read latency of a disk at queue depth 1, every
 * sample kept (seeker-style, one per line), with a summary, a histogram and
 * JSON. The library (lib/probe) does the I/O and the timing.
 */

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "th_cmd.h"
#include "th_conf.h"
#include "th_probe.h"

/* Where samples go and which columns they get. */
struct out {
	FILE *f;           /* sample stream, NULL: none */
	bool is_offset;    /* add the byte offset column */
	bool is_timestamp; /* add the start time column (s since the probe started) */
	bool is_response;  /* add the response time column (µs from the intended start) */
	char header[512];  /* the '#' line, printed with the first sample: none when the probe
			      cannot start */
};

static volatile int stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tracehound probe [options] TARGET\n"
		"\n"
		"Measure random-access latency of TARGET (a block device, a file, or a directory,\n"
		"in which a temporary file of --size bytes is written, probed and removed): one\n"
		"block at a time at random aligned offsets, O_DIRECT, timing only the read call.\n"
		"Samples go to stdout, one latency in microseconds per line (warm-up samples as\n"
		"'# warmup' comments, flagged ones with a '# high'/'# low' comment); the summary\n"
		"and histogram go to stderr.\n"
		"\n"
		"options:\n"
		"  -b, --block-size N     bytes per read, a multiple of the direct-I/O alignment\n"
		"                         (default 4k; suffixes k, m, g)\n"
		"  -n, --count N          measured samples (default 1000; 0: until --duration)\n"
		"  -d, --duration S       stop after S seconds of measuring (with -n: first wins)\n"
		"  -w, --warmup N         samples taken first and discarded (default 0)\n"
		"  -r, --rate IOPS        cycle time 1/IOPS between starts, so the probe can run\n"
		"                         beside production (default: back to back)\n"
		"      --cycle-us US      the same as a cycle time in microseconds\n"
		"  -q, --iodepth N        reads in flight; N > 1 uses io_uring (default 1: pread)\n"
		"      --engine E         psync or io_uring (default psync; io_uring for N > 1)\n"
		"      --offset N         start of the probed range (default 0)\n"
		"      --length N         length of the range (default: to the end)\n"
		"  -s, --size N           size of the temporary file for a directory (default 1g;\n"
		"                         refused for a file or a device)\n"
		"      --buffered         no O_DIRECT (for filesystems that refuse it): the block "
		"is\n"
		"                         dropped from the page cache before each read (each\n"
		"                         write synced, RWF_DSYNC)\n"
		"      --write            write instead of read: DESTROYS the data in the range;\n"
		"                         refused on a mounted or otherwise used block device\n"
		"  -o, --output FILE      samples to FILE instead of stdout (not the target)\n"
		"      --no-samples       print no samples, only the summary\n"
		"      --offsets          add a column: byte offset of each read\n"
		"      --timestamps       add a column: start time, s since the probe started\n"
		"      --response         add a column: response time (from the intended start)\n"
		"  -j, --json FILE        the summary as JSON (- for stdout, with -o or\n"
		"                         --no-samples)\n"
		"      --flag-high X      flag samples above X times the running average\n"
		"                         (default 10; 0: off)\n"
		"      --flag-low X       flag samples below X times it (default 0.1; 0: off)\n"
		"      --hist-rows N      histogram rows (default 20; 0: none)\n"
		"      --seed N           offset sequence seed (default: from the clock)\n"
		"  -h, --help             this text\n"
		"\n"
		"Byte sizes (-b, -s, --offset, --length) take suffixes k, m, g, t, powers of\n"
		"1024; counts (-n, -w, -q, --hist-rows, --seed) are decimal digits: 1000, not 1k.\n"
		"Exit status: 0 done, 1 failed, 2 usage error or refused.\n");
}

enum {
	OPT_CYCLE = 256,
	OPT_ENGINE,
	OPT_OFFSET,
	OPT_LENGTH,
	OPT_BUFFERED,
	OPT_WRITE,
	OPT_NO_SAMPLES,
	OPT_OFFSETS,
	OPT_TIMESTAMPS,
	OPT_RESPONSE,
	OPT_FLAG_HIGH,
	OPT_FLAG_LOW,
	OPT_HIST_ROWS,
	OPT_SEED,
};

static const struct option options[] = {
	{"block-size", required_argument, NULL, 'b'},
	{"count", required_argument, NULL, 'n'},
	{"duration", required_argument, NULL, 'd'},
	{"warmup", required_argument, NULL, 'w'},
	{"rate", required_argument, NULL, 'r'},
	{"cycle-us", required_argument, NULL, OPT_CYCLE},
	{"iodepth", required_argument, NULL, 'q'},
	{"engine", required_argument, NULL, OPT_ENGINE},
	{"offset", required_argument, NULL, OPT_OFFSET},
	{"length", required_argument, NULL, OPT_LENGTH},
	{"size", required_argument, NULL, 's'},
	{"buffered", no_argument, NULL, OPT_BUFFERED},
	{"write", no_argument, NULL, OPT_WRITE},
	{"output", required_argument, NULL, 'o'},
	{"no-samples", no_argument, NULL, OPT_NO_SAMPLES},
	{"offsets", no_argument, NULL, OPT_OFFSETS},
	{"timestamps", no_argument, NULL, OPT_TIMESTAMPS},
	{"response", no_argument, NULL, OPT_RESPONSE},
	{"json", required_argument, NULL, 'j'},
	{"flag-high", required_argument, NULL, OPT_FLAG_HIGH},
	{"flag-low", required_argument, NULL, OPT_FLAG_LOW},
	{"hist-rows", required_argument, NULL, OPT_HIST_ROWS},
	{"seed", required_argument, NULL, OPT_SEED},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* A byte count with an optional binary suffix (k, m, g, t). */
static int
parse_size(const char *s, uint64_t *v)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (!isdigit((unsigned char)s[0])) /* strtoull would take a sign, white space */
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0' || (shift != 0 && n > (UINT64_MAX >> shift)))
		return -EINVAL;
	*v = (uint64_t)n << shift;
	return 0;
}

/*
 * A count (samples, rows, reads in flight, a seed): decimal digits only, as
 * every command's whole numbers. A suffix is refused rather than read: k is
 * 1024 for the byte sizes above, a user counting samples means 1000, and
 * either reading would surprise half of them.
 */
static int
parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	return th_conf_parse_u64(s, min, max, false, v);
}

/* Said after a bad count: why "10k" is not one. */
#define COUNT_HINT " (suffixes k, m, g are for byte sizes only)"

static int
parse_double(const char *s, double *v)
{
	return th_conf_parse_double(s, 0, DBL_MAX, v);
}

static void
on_sample(void *arg, const struct th_probe_sample *s)
{
	struct out *o = arg;

	if (o->f == NULL)
		return;
	if (o->header[0] != '\0') {
		fputs(o->header, o->f);
		o->header[0] = '\0';
	}
	if (s->is_warmup)
		fputs("# warmup ", o->f);
	fprintf(o->f, "%.3f", (double)s->service_ns / 1000.0);
	if (o->is_offset)
		fprintf(o->f, " %" PRIu64, s->offset);
	if (o->is_timestamp)
		fprintf(o->f, " %.9f", (double)s->start_ns / 1e9);
	if (o->is_response)
		fprintf(o->f, " %.3f", (double)s->response_ns / 1000.0);
	if (s->flag == TH_PROBE_FLAG_HIGH)
		fputs(" # high", o->f);
	else if (s->flag == TH_PROBE_FLAG_LOW)
		fputs(" # low", o->f);
	fputc('\n', o->f);
}

/*
 * Whether an output (@p what @p path) would be written over the target or
 * the other output: opening it for writing would empty the file to be
 * probed (or read back) before the probe starts. @return true after saying so.
 */
static bool
output_clashes(const char *what, const char *path, const char *target, const char *other_what,
	const char *other)
{
	if (th_cmd_same_file(path, target)) {
		fprintf(stderr,
			"tracehound probe: %s %s is the probe target %s: writing it would "
			"destroy what is probed; give another file\n",
			what, path, target);
		return true;
	}
	if (other != NULL && th_cmd_same_file(path, other)) {
		fprintf(stderr, "tracehound probe: %s and %s both write %s\n", what, other_what,
			path);
		return true;
	}
	return false;
}

#define BAD(...)                                                                                   \
	do {                                                                                       \
		fprintf(stderr, "tracehound probe: " __VA_ARGS__);                                 \
		fputc('\n', stderr);                                                               \
		goto out_usage;                                                                    \
	} while (0)

int
th_cmd_probe(int argc, char **argv)
{
	static struct th_probe_result res; /* ~120 KiB of histograms: not on the stack */
	const char *output = NULL, *json = NULL;
	struct th_probe_config c;
	struct out o = {0};
	struct timespec ts;
	bool is_count_set = false, is_seed_set = false, is_engine_set = false, is_size_set = false;
	enum th_probe_kind kind;
	char why[sizeof(res.error)];
	bool is_samples = true, is_json_stdout;
	unsigned int hist_rows = 20;
	uint64_t v;
	double d;
	int opt, err, status = 1;
	FILE *jf = NULL;

	th_probe_config_init(&c);
	c.temp_size = UINT64_C(1) << 30;
	c.stop = &stop_flag;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:n:d:w:r:q:s:o:j:h", options, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (parse_size(optarg, &v) != 0 || v == 0 || v > UINT32_MAX)
				BAD("--block-size '%s': give a byte count such as 4096 or 4k",
					optarg);
			c.block_size = (uint32_t)v;
			break;
		case 'n':
			if (parse_count(optarg, 0, UINT64_MAX, &v) != 0)
				BAD("--count '%s': give a number of samples in digits, such as "
				    "1000" COUNT_HINT,
					optarg);
			c.count = v;
			is_count_set = true;
			break;
		case 'd':
			if (parse_double(optarg, &d) != 0 || d < 1e-6 || d > 1e7)
				BAD("--duration '%s': give seconds from 0.000001, e.g. 2 or 0.5",
					optarg);
			c.duration_ns = (uint64_t)(d * 1e9);
			break;
		case 'w':
			if (parse_count(optarg, 0, UINT64_MAX, &v) != 0)
				BAD("--warmup '%s': give a number of samples in digits, such as "
				    "100" COUNT_HINT,
					optarg);
			c.warmup = v;
			break;
		case 'r':
			if (parse_double(optarg, &d) != 0 || d < 0.001 || d > 1e8)
				BAD("--rate '%s': give IOPS, 0.001 to 1e8", optarg);
			c.cycle_ns = (uint64_t)(1e9 / d + 0.5);
			break;
		case OPT_CYCLE:
			if (parse_double(optarg, &d) != 0 || d < 0.01 || d > 1e12)
				BAD("--cycle-us '%s': give microseconds between starts", optarg);
			c.cycle_ns = (uint64_t)(d * 1000.0 + 0.5);
			break;
		case 'q':
			if (parse_count(optarg, 1, 1024, &v) != 0)
				BAD("--iodepth '%s': give 1 to 1024", optarg);
			c.iodepth = (uint32_t)v;
			break;
		case OPT_ENGINE:
			if (strcmp(optarg, "psync") == 0)
				c.engine = TH_PROBE_ENGINE_PSYNC;
			else if (strcmp(optarg, "io_uring") == 0 || strcmp(optarg, "uring") == 0)
				c.engine = TH_PROBE_ENGINE_URING;
			else
				BAD("--engine '%s': psync or io_uring", optarg);
			is_engine_set = true;
			break;
		case OPT_OFFSET:
			if (parse_size(optarg, &c.offset) != 0)
				BAD("--offset '%s': give a byte offset", optarg);
			break;
		case OPT_LENGTH:
			if (parse_size(optarg, &c.length) != 0 || c.length == 0)
				BAD("--length '%s': give a byte count above 0", optarg);
			break;
		case 's':
			if (parse_size(optarg, &c.temp_size) != 0 || c.temp_size == 0)
				BAD("--size '%s': give a byte count such as 256m", optarg);
			is_size_set = true;
			break;
		case OPT_BUFFERED:
			c.is_buffered = true;
			break;
		case OPT_WRITE:
			c.is_write = true;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_NO_SAMPLES:
			is_samples = false;
			break;
		case OPT_OFFSETS:
			o.is_offset = true;
			break;
		case OPT_TIMESTAMPS:
			o.is_timestamp = true;
			break;
		case OPT_RESPONSE:
			o.is_response = true;
			break;
		case 'j':
			json = optarg;
			break;
		case OPT_FLAG_HIGH:
			if (parse_double(optarg, &c.flag_high) != 0 ||
				(c.flag_high > 0 && c.flag_high < 1))
				BAD("--flag-high '%s': a factor >= 1, or 0 for off", optarg);
			break;
		case OPT_FLAG_LOW:
			if (parse_double(optarg, &c.flag_low) != 0 || c.flag_low >= 1)
				BAD("--flag-low '%s': a factor below 1, or 0 for off", optarg);
			break;
		case OPT_HIST_ROWS:
			if (parse_count(optarg, 0, 1000, &v) != 0)
				BAD("--hist-rows '%s': 0 to 1000", optarg);
			hist_rows = (unsigned int)v;
			break;
		case OPT_SEED:
			if (parse_count(optarg, 0, UINT64_MAX, &c.seed) != 0)
				BAD("--seed '%s': give a number in digits", optarg);
			is_seed_set = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto out_usage;
		}
	}
	if (optind != argc - 1)
		BAD("give exactly one TARGET (a block device, a file or a directory)");
	c.target = argv[optind];
	if (!is_count_set && c.duration_ns != 0)
		c.count = 0;
	if (c.count == 0 && c.duration_ns == 0)
		BAD("--count 0 needs --duration, or the probe would never stop");
	if (c.iodepth > 1 && !is_engine_set)
		c.engine = TH_PROBE_ENGINE_URING;
	if (!is_seed_set) {
		clock_gettime(CLOCK_REALTIME, &ts);
		c.seed = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}

	/* Everything that can refuse the run is checked before a file is opened for writing. */
	if (!is_samples || (output != NULL && strcmp(output, "-") == 0))
		output = NULL;
	is_json_stdout = json != NULL && strcmp(json, "-") == 0;
	if ((output != NULL && output_clashes("-o", output, c.target, "-j", json)) ||
		(json != NULL && !is_json_stdout &&
			output_clashes("-j", json, c.target, NULL, NULL)))
		return 2;
	/* Sample lines with a JSON object after them: neither could be read back. */
	if (is_samples && output == NULL && json != NULL &&
		(is_json_stdout || strcmp(json, "/dev/stdout") == 0 ||
			th_cmd_same_file(json, "/dev/stdout")))
		BAD("-j %s and the samples both write standard output; give -o FILE for the "
		    "samples, or --no-samples",
			json);
	err = th_probe_check_target(c.target, c.is_write, &kind, why, sizeof(why));
	if (err != 0) {
		fprintf(stderr, "tracehound probe: %s\n", why);
		return err == -EINVAL || err == -ENOENT || err == -EROFS ? 2 : 1;
	}
	if (is_size_set && kind != TH_PROBE_KIND_TEMP)
		BAD("--size is the size of the temporary file made in a directory target; %s is a "
		    "%s, probed as it is (--offset and --length choose a range of it)",
			c.target, th_probe_kind_name(kind));
	if (is_json_stdout) {
		jf = stdout;
	} else if (json != NULL) {
		jf = fopen(json, "w");
		if (jf == NULL) {
			fprintf(stderr, "tracehound probe: cannot write %s: %s\n", json,
				strerror(errno));
			return 1;
		}
	}
	if (is_samples) {
		o.f = stdout;
		if (output != NULL) {
			o.f = fopen(output, "w");
			if (o.f == NULL) {
				fprintf(stderr, "tracehound probe: cannot write %s: %s\n", output,
					strerror(errno));
				goto close_json;
			}
		}
		snprintf(o.header, sizeof(o.header),
			"# tracehound probe %s: %s %u-byte blocks at random offsets, %s, "
			"latency_us%s%s%s\n",
			c.target, c.is_write ? "write" : "read", c.block_size,
			!c.is_buffered ? "O_DIRECT"
			: c.is_write   ? "BUFFERED (each write synced, RWF_DSYNC)"
				       : "BUFFERED (cache dropped before each read)",
			o.is_offset ? " offset" : "", o.is_timestamp ? " start_s" : "",
			o.is_response ? " response_us" : "");
	}
	c.on_sample = on_sample;
	c.sample_arg = &o;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (c.is_buffered && c.is_write)
		fprintf(stderr, "tracehound probe: buffered mode: each write is synced to the "
				"device (RWF_DSYNC) instead of O_DIRECT\n");
	else if (c.is_buffered)
		fprintf(stderr, "tracehound probe: buffered mode: the page cache range is dropped "
				"(posix_fadvise DONTNEED) before each read instead of O_DIRECT\n");
	if (c.is_write)
		fprintf(stderr, "tracehound probe: --write: overwriting random blocks of %s\n",
			c.target);
	err = th_probe_run(&c, &res);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (o.f != NULL && o.f != stdout && fclose(o.f) != 0 && err == 0) {
		/* The samples are the run's output: losing them is a failure. */
		fprintf(stderr, "tracehound probe: samples: %s\n", strerror(errno));
		goto close_json;
	}
	if (err != 0) {
		fprintf(stderr, "tracehound probe: %s\n", res.error);
		/* A refusal or a bad parameter is the user's to fix: same status as usage. */
		status = err == -EINVAL || err == -ENOENT || err == -EBUSY || err == -EROFS ? 2 : 1;
		goto close_json;
	}
	th_probe_print_summary(stderr, &res, hist_rows);
	status = 0;
	if (jf != NULL) {
		bool is_written = th_probe_write_json(jf, &res) == 0;

		/* Standard output is flushed and checked by main(). */
		if ((jf != stdout && fclose(jf) != 0) || !is_written) {
			fprintf(stderr, "tracehound probe: cannot write %s: %s\n", json,
				strerror(errno));
			status = 1;
		}
		jf = NULL;
	}
close_json:
	if (jf != NULL && jf != stdout)
		fclose(jf);
	return status;

out_usage:
	fprintf(stderr, "'tracehound probe --help' lists the options.\n");
	return 2;
}
