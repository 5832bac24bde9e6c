/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound export: segments (files or directories, any lcores, any boxes)
 * merged into time order, filtered, and written as text, CSV or JSON Lines;
 * or, with --names, the name map they hold, one row per binding.
 * The merge, formats, join and pseudonyms live in lib/export; which segments,
 * in which order, and what was wrong with them, in export_segs.c. This file is
 * the command: its options, the progress bar, the run and its summary.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "export_segs.h"
#include "th_cmd.h"
#include "th_conf.h"
#include "th_export.h"
#include "th_srt.h"
#include "th_segment.h"

#define KEY_MAX 4096

/* The progress bar on stderr. */
struct progress {
	bool is_on;                 /* stderr is a terminal (or --progress) */
	const struct th_segs *segs; /* the segments the export reads */
	struct timespec start;      /* of the export */
	struct timespec last;       /* last redraw */
	bool is_drawn;              /* a bar is on the screen */
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tracehound export [options] SEGMENT|DIRECTORY...\n"
		"\n"
		"Merge trace segments (any number of lcores and boxes; directories are searched "
		"for\n"
		"*.lz4 segments and crashed *.lz4.tmp ones) into open-time order, filter them and\n"
		"write one line per inferred open; with --rpcs, one line per RPC of the segments\n"
		"a capture writes with trace.rpcs = 1, in call-time order; with --names, one line\n"
		"per name binding of the name map, in order of the start of its validity.\n"
		"\n"
		"output:\n"
		"  -f, --format F         text (default: the 7-field '|' record of the session\n"
		"                         log), csv (with a header), or json (JSON Lines)\n"
		"  -o, --output FILE      write to FILE (default: stdout); not a segment read,\n"
		"                         nor a name ending in .lz4 in a directory read\n"
		"      --rpcs             RPC records instead of opens: text as the capture's RPC\n"
		"                         log (LAT_LAST '-', fields the record keeps), csv, json\n"
		"      --srt              with --rpcs implied: instead of the records, a table of\n"
		"                         server response time by procedure over those the\n"
		"                         filters keep (count, min, percentiles, max, mean; -f\n"
		"                         csv or json: one row per procedure)\n"
		"      --names            the name map instead of opens: one line per binding (a\n"
		"                         handle named in a directory while valid), by its start,\n"
		"                         all held in --names-mb first; text: the capture's names\n"
		"                         file line and the path ('server | dir-handle | name |\n"
		"                         handle | valid-from | valid-to | mode | path', '-' for\n"
		"                         none, valid-to '-' if valid at the end), csv and json:\n"
		"                         valid_from, valid_to, server, dir_handle, name, handle,\n"
		"                         mode, path; not with --client, --uid, --direction,\n"
		"                         --rpcs or --srt\n"
		"      --no-names         no handle-to-name join: csv/json path and mode columns\n"
		"                         empty (--file still reads names to match paths)\n"
		"      --hosts FILE       host names from an /etc/hosts-style file (text escapes\n"
		"                         them as names: '|' is \\x7c)\n"
		"      --resolve          host names from reverse DNS (cached; off by default)\n"
		"      --anonymise KEY    keyed pseudonyms (HMAC-SHA-256 with the bytes of file "
		"KEY,\n"
		"                         at least 16) for addresses, uids, gids, handles and "
		"every\n"
		"                         path component; same key, same pseudonyms\n"
		"      --prefix-preserving  with --anonymise: addresses that share a prefix keep\n"
		"                         sharing it (IPv4 and IPv6)\n"
		"      --window S         how far out of time order one stream may be: at least\n"
		"                         session.idle + 30 (default 60 s); later records are\n"
		"                         written late, counted, and the summary says the window\n"
		"                         that would have held them (not with --names, which\n"
		"                         holds every record first, nor --srt, which holds none)\n"
		"      --window-mb MB     memory for the records the window holds back, all "
		"streams\n"
		"                         together (default 1024); a stream at its share lets its\n"
		"                         earliest go early, and the summary counts them\n"
		"      --names-mb MB      memory for the handle-to-name join (default 2048, about\n"
		"                         260 bytes a name); names past it are not kept, and the\n"
		"                         summary counts them (their files' paths stay empty;\n"
		"                         --names does not list them, says so even with -q, and\n"
		"                         exits 3)\n"
		"      --progress         force the progress bar (default: only on a terminal)\n"
		"  -q, --quiet            no progress bar, no summary line\n"
		"\n"
		"filters (a repeated option matches any of its values; different ones all apply):\n"
		"      --from T, --to T   records at or after T and before T: seconds since the "
		"epoch\n"
		"                         (with a fraction) or UTC "
		"YYYY-MM-DD[THH:MM[:SS[.frac]]];\n"
		"                         --names: bindings valid at some time in between\n"
		"      --server A[/LEN]   server address or prefix\n"
		"      --client A[/LEN]   client address or prefix (not --names)\n"
		"      --uid N            user id (not --names)\n"
		"      --direction D      read or write (opens)\n"
		"      --file F           handle (hex) equal to F, path containing F, or fh=CRC:\n"
		"                         the handle's CRC-32 as --rpcs text shows it (fh=)\n"
		"\n"
		"Exit status: 0; 1 runtime failure (no segment readable, output not written or\n"
		"not closed, whatever else went wrong); 2 usage error; 3 some segments were\n"
		"truncated or corrupt (their records up to the damage were exported), some\n"
		"files were not trace segments (skipped), some segments are missing from the\n"
		"middle of a stream, the capture lost records (its segments' trailers count\n"
		"them), directories more than 16 levels down (or paths over 4095 bytes) were\n"
		"not searched, or --names did not list every name (--names-mb reached); each\n"
		"is named on stderr.\n");
}

/* A size in megabytes, 1 to 2^30. @return 0, or -1 having said why. */
static int
parse_mb(const char *opt, const char *s, uint64_t *mb)
{
	if (th_conf_parse_u64(s, 1, 1ull << 30, false, mb) != 0) {
		fprintf(stderr, "tracehound export: %s '%s': expected megabytes, 1 to 1073741824\n",
			opt, s);
		return -1;
	}
	return 0;
}

enum {
	OPT_FROM = 256,
	OPT_TO,
	OPT_SERVER,
	OPT_CLIENT,
	OPT_UID,
	OPT_DIRECTION,
	OPT_FILE,
	OPT_HOSTS,
	OPT_RESOLVE,
	OPT_ANON,
	OPT_PREFIX,
	OPT_WINDOW,
	OPT_WINDOW_MB,
	OPT_NAMES_MB,
	OPT_NO_NAMES,
	OPT_RPCS,
	OPT_SRT,
	OPT_NAMES,
	OPT_PROGRESS,
};

static const struct option options[] = {
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_TO},
	{"server", required_argument, NULL, OPT_SERVER},
	{"client", required_argument, NULL, OPT_CLIENT},
	{"uid", required_argument, NULL, OPT_UID},
	{"direction", required_argument, NULL, OPT_DIRECTION},
	{"file", required_argument, NULL, OPT_FILE},
	{"hosts", required_argument, NULL, OPT_HOSTS},
	{"resolve", no_argument, NULL, OPT_RESOLVE},
	{"anonymise", required_argument, NULL, OPT_ANON},
	{"anonymize", required_argument, NULL, OPT_ANON},
	{"prefix-preserving", no_argument, NULL, OPT_PREFIX},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"window-mb", required_argument, NULL, OPT_WINDOW_MB},
	{"names-mb", required_argument, NULL, OPT_NAMES_MB},
	{"no-names", no_argument, NULL, OPT_NO_NAMES},
	{"rpcs", no_argument, NULL, OPT_RPCS},
	{"srt", no_argument, NULL, OPT_SRT},
	{"names", no_argument, NULL, OPT_NAMES},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{NULL, 0, NULL, 0},
};

/*
 * What the summary says of records written late: the window that would have
 * held them (a stream's records came up to max_disorder_ns after a later one
 * of its own) when a larger one would have, else the memory that let them go.
 */
static const char *
late_note(const struct th_export_config *c, const struct th_export_counters *ctr, char *buf,
	size_t size)
{
	double d = (double)ctr->max_disorder_ns / 1e9;

	buf[0] = '\0';
	if (ctr->out_of_order == 0)
		return buf;
	if (ctr->max_disorder_ns > c->window_ns)
		snprintf(buf, size,
			" (a stream's records came up to %.1f s out of order: --window %.0f would "
			"have held them)",
			d, ceil(d));
	else
		snprintf(buf, size, " (let go early for memory: raise --window-mb)");
	return buf;
}

/* ---- progress bar ---- */

static double
since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void
on_progress(void *ctx, uint64_t records)
{
	struct progress *p = ctx;
	struct timespec now;
	unsigned int done, segments;
	double elapsed, frac;
	char bar[31];
	int fill;

	if (!p->is_on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->is_drawn && since(&p->last, &now) < 0.2)
		return;
	p->last = now;
	th_segs_progress(p->segs, &done, &segments);
	elapsed = since(&p->start, &now);
	frac = segments > 0 ? (double)done / segments : 1.0;
	fill = (int)(frac * 30);
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '-', (size_t)(30 - fill));
	bar[30] = '\0';
	fprintf(stderr, "\rexport [%s] %u/%u segments, %" PRIu64 " records, %.1f M/s   ", bar, done,
		segments, records, elapsed > 0 ? (double)records / elapsed / 1e6 : 0.0);
	p->is_drawn = true;
}

/* ---- the command ---- */

/*
 * Finish the output: what stdio holds written, its error flag read (a write
 * that failed inside a print, though a later flush went through), and the
 * file closed, for the errors only close() reports (NFS writes back then, a
 * quota). Standard output stays open for main(), which flushes it again: a
 * duplicate is closed instead, which reports the same. @return 0 or -errno.
 */
static int
finish_out(FILE *out)
{
	int rc = 0, fd;

	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		rc = -(errno != 0 ? errno : EIO);
	errno = 0;
	if (out != stdout) {
		if (fclose(out) != 0 && rc == 0)
			rc = -(errno != 0 ? errno : EIO);
	} else if ((fd = dup(STDOUT_FILENO)) >= 0 && close(fd) != 0 && rc == 0) {
		rc = -(errno != 0 ? errno : EIO);
	}
	return rc;
}

/*
 * --names lists the name map: one listing at a time, and no filter on what a
 * binding does not have (it is no one's, and neither read nor written).
 * @return 0, or -1 having said which option does not go with it.
 */
static int
names_conflict(const struct th_export_config *c, bool is_srt)
{
	const char *opt = is_srt                 ? "--srt"
			  : c->is_rpcs           ? "--rpcs"
			  : c->clients_count > 0 ? "--client"
			  : c->uids_count > 0    ? "--uid"
			  : c->direction >= 0    ? "--direction"
						 : NULL;

	if (opt == NULL)
		return 0;
	if (c->is_rpcs)
		fprintf(stderr,
			"tracehound export: --names and %s are different listings: give one\n",
			opt);
	else
		fprintf(stderr,
			"tracehound export: %s does not go with --names: a name binding has no "
			"client, user or direction (filter names by --server, --from/--to, "
			"--file)\n",
			opt);
	return -1;
}

static int
add_net(struct th_export_net *v, unsigned int *count, const char *arg, const char *opt)
{
	if (*count >= TH_EXPORT_FILTER_MAX) {
		fprintf(stderr, "tracehound export: at most %d %s values\n", TH_EXPORT_FILTER_MAX,
			opt);
		return -1;
	}
	if (th_export_net_parse(arg, &v[*count]) < 0) {
		fprintf(stderr,
			"tracehound export: %s '%s': expected an IPv4 or IPv6 address, "
			"optionally /prefix-length\n",
			opt, arg);
		return -1;
	}
	(*count)++;
	return 0;
}

int
th_cmd_export(int argc, char **argv)
{
	struct th_export_config c;
	struct th_export_counters ctr;
	struct th_segs segs = {0};
	struct progress prog = {0};
	char note[128], late[160];
	const char *output = NULL, *hosts_path = NULL, *key_path = NULL, *window_opt = NULL;
	const char *written = "written"; /* what the summary says of the records out */
	bool is_resolve = false, is_prefix = false, is_quiet = false, is_force_progress = false;
	bool is_srt = false;
	FILE *out = stdout;
	uint8_t key[KEY_MAX];
	size_t key_size = 0;
	int opt, rc, rc2, status = 0;

	th_export_config_defaults(&c);
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "f:o:qh", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			rc = th_export_format_parse(optarg);
			if (rc < 0) {
				fprintf(stderr,
					"tracehound export: --format '%s': expected text, csv "
					"or json\n",
					optarg);
				return 2;
			}
			c.format = (enum th_export_format)rc;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			is_quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_FROM:
		case OPT_TO:
			if (th_export_time_parse(optarg, opt == OPT_FROM ? &c.from_ns : &c.to_ns) <
				0) {
				fprintf(stderr,
					"tracehound export: %s '%s': expected seconds since the "
					"epoch or UTC YYYY-MM-DD[THH:MM[:SS]], up to "
					"2554-07-21\n",
					opt == OPT_FROM ? "--from" : "--to", optarg);
				return 2;
			}
			/* 0 is "no bound" inside: --to the epoch itself asks for nothing. */
			if (opt == OPT_TO && c.to_ns == 0)
				c.to_ns = 1;
			break;
		case OPT_SERVER:
			if (add_net(c.servers, &c.servers_count, optarg, "--server") < 0)
				return 2;
			break;
		case OPT_CLIENT:
			if (add_net(c.clients, &c.clients_count, optarg, "--client") < 0)
				return 2;
			break;
		case OPT_UID: {
			uint64_t v;

			if (th_conf_parse_u64(optarg, 0, UINT32_MAX, false, &v) != 0 ||
				c.uids_count >= TH_EXPORT_FILTER_MAX) {
				fprintf(stderr,
					"tracehound export: --uid '%s': expected a number "
					"0-4294967295 (at most %d values)\n",
					optarg, TH_EXPORT_FILTER_MAX);
				return 2;
			}
			c.uids[c.uids_count++] = (uint32_t)v;
			break;
		}
		case OPT_DIRECTION:
			if (strcmp(optarg, "read") == 0) {
				c.direction = 0;
			} else if (strcmp(optarg, "write") == 0) {
				c.direction = 1;
			} else {
				fprintf(stderr,
					"tracehound export: --direction '%s': expected read or "
					"write\n",
					optarg);
				return 2;
			}
			break;
		case OPT_FILE:
			if (c.files_count >= TH_EXPORT_FILTER_MAX || optarg[0] == '\0') {
				fprintf(stderr,
					"tracehound export: --file: at most %d non-empty "
					"values\n",
					TH_EXPORT_FILTER_MAX);
				return 2;
			}
			/* What --rpcs text shows: fh= and the handle's CRC-32. */
			if (strncasecmp(optarg, "fh=", 3) == 0 &&
				(strlen(optarg) != 11 ||
					strspn(optarg + 3, "0123456789abcdefABCDEF") != 8)) {
				fprintf(stderr,
					"tracehound export: --file '%s': fh= takes the 8 hex "
					"digits of a handle's CRC-32, as --rpcs text writes it; "
					"--file also takes a handle in hex or part of a path\n",
					optarg);
				return 2;
			}
			c.files[c.files_count++] = optarg;
			break;
		case OPT_HOSTS:
			hosts_path = optarg;
			break;
		case OPT_RESOLVE:
			is_resolve = true;
			break;
		case OPT_ANON:
			key_path = optarg;
			break;
		case OPT_PREFIX:
			is_prefix = true;
			break;
		case OPT_WINDOW: {
			double s;

			if (th_conf_parse_double(optarg, 0, 1e7, &s) != 0) {
				fprintf(stderr,
					"tracehound export: --window '%s': expected seconds, "
					"0 to 10000000\n",
					optarg);
				return 2;
			}
			c.window_ns = (uint64_t)(s * 1e9);
			window_opt = "--window";
			break;
		}
		case OPT_WINDOW_MB:
		case OPT_NAMES_MB: {
			uint64_t mb;

			if (parse_mb(opt == OPT_WINDOW_MB ? "--window-mb" : "--names-mb", optarg,
				    &mb) < 0)
				return 2;
			if (opt == OPT_WINDOW_MB) {
				c.window_bytes = mb << 20;
				window_opt = "--window-mb";
			} else
				c.names_bytes = mb << 20;
			break;
		}
		case OPT_NO_NAMES:
			c.is_names_on = false;
			break;
		case OPT_RPCS:
			c.is_rpcs = true;
			break;
		case OPT_SRT:
			is_srt = true;
			c.is_rpcs = true;
			break;
		case OPT_NAMES:
			c.is_names = true;
			break;
		case OPT_PROGRESS:
			is_force_progress = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "tracehound export: no segments given (files or directories)\n");
		usage(stderr);
		return 2;
	}
	if (c.is_names && names_conflict(&c, is_srt) < 0)
		return 2;
	if (window_opt != NULL && (c.is_names || is_srt)) {
		/* A listing holds every name before writing, and a table cares for no order: a
		 * window would change nothing. */
		fprintf(stderr, "tracehound export: %s orders records as they are written; %s\n",
			window_opt,
			c.is_names ? "--names holds them all first (its memory is --names-mb)"
				   : "--srt holds none back: order does not matter to a table");
		return 2;
	}
	if (is_prefix && key_path == NULL) {
		fprintf(stderr,
			"tracehound export: --prefix-preserving needs --anonymise KEYFILE\n");
		return 2;
	}
	if (key_path != NULL && (hosts_path != NULL || is_resolve)) {
		fprintf(stderr, "tracehound export: --anonymise cannot be combined with --hosts or "
				"--resolve (host names would give the addresses away)\n");
		return 2;
	}
	if (c.to_ns != 0 && c.to_ns <= c.from_ns) {
		fprintf(stderr, "tracehound export: --to must be later than --from\n");
		return 2;
	}
	if (is_srt && (key_path != NULL || hosts_path != NULL || is_resolve)) {
		fprintf(stderr, "tracehound export: --srt prints one table of procedures: no "
				"--anonymise, --hosts or --resolve\n");
		return 2;
	}
	if (c.is_rpcs && c.direction >= 0) {
		fprintf(stderr, "tracehound export: --direction goes with opens, not --rpcs\n");
		return 2;
	}
	if (key_path != NULL) {
		rc = th_export_anon_load_key(key_path, key, sizeof(key), &key_size);
		if (rc < 0) {
			fprintf(stderr, "tracehound export: --anonymise %s: %s\n", key_path,
				rc == -EINVAL  ? "a key needs at least 16 bytes (e.g. head -c 32 "
						 "/dev/urandom > KEYFILE)"
				: rc == -EFBIG ? "longer than 4096 bytes: not a key file?"
					       : strerror(-rc));
			return 2;
		}
		c.anon = th_export_anon_create(key, key_size, is_prefix);
		memset(key, 0, sizeof(key));
		if (c.anon == NULL) {
			fprintf(stderr, "tracehound export: %s\n", strerror(errno));
			return 1;
		}
	}
	if (hosts_path != NULL || is_resolve) {
		unsigned int line = 0;

		c.hosts = th_export_hosts_create(is_resolve);
		if (c.hosts == NULL) {
			status = 1;
			goto free_all;
		}
		if (hosts_path != NULL &&
			(rc = th_export_hosts_load(c.hosts, hosts_path, &line)) < 0) {
			if (rc == -EINVAL)
				fprintf(stderr,
					"tracehound export: %s:%u: expected an address and a "
					"name\n",
					hosts_path, line);
			else
				fprintf(stderr, "tracehound export: --hosts %s: %s\n", hosts_path,
					strerror(-rc));
			status = 2;
			goto free_all;
		}
	}

	if (th_segs_find(&segs, argv + optind, argc - optind) < 0) {
		status = 1;
		goto free_all;
	}
	if (output != NULL && strcmp(output, "-") != 0) {
		const char *ins[] = {key_path, hosts_path}, *opts[] = {"--anonymise", "--hosts"};

		/* Opening the output truncates it: never a file the export reads. */
		if (th_segs_holds(&segs, output)) {
			fprintf(stderr, "tracehound export: -o %s is one of the segments to read\n",
				output);
			status = 2;
			goto free_all;
		}
		/* Written among the segments, it would be a foreign file to the next export. */
		if (th_segs_would_find(argv + optind, argc - optind, output)) {
			fprintf(stderr,
				"tracehound export: -o %s is named as a segment (*%s) in a "
				"directory given to read: the next export of it would read it; "
				"name it otherwise or write it elsewhere\n",
				output, TH_SEGMENT_SUFFIX);
			status = 2;
			goto free_all;
		}
		for (size_t i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
			if (ins[i] != NULL && th_cmd_same_file(output, ins[i])) {
				fprintf(stderr, "tracehound export: -o %s is the file %s reads\n",
					output, opts[i]);
				status = 2;
				goto free_all;
			}
		}
	}
	if (is_srt) {
		c.srt = malloc(sizeof(*c.srt));
		if (c.srt == NULL) {
			fprintf(stderr, "tracehound export: no memory for the --srt table\n");
			status = 1;
			goto free_all;
		}
		th_srt_init(c.srt);
		c.window_ns = 0; /* a table does not care about order: hold nothing back */
	}
	if (segs.count == 0) {
		fprintf(stderr, "tracehound export: no segments (*%s) found\n", TH_SEGMENT_SUFFIX);
		status = 1;
		goto free_all;
	}

	if (th_segs_group(&segs, &c) < 0) {
		status = 1;
		goto free_all;
	}

	if (output != NULL && strcmp(output, "-") != 0) {
		out = fopen(output, "w");
		if (out == NULL) {
			fprintf(stderr, "tracehound export: -o %s: %s\n", output, strerror(errno));
			status = 1;
			goto free_all;
		}
	}
	prog.is_on = !is_quiet && (is_force_progress || isatty(STDERR_FILENO));
	prog.segs = &segs;
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	c.progress = on_progress;
	c.progress_ctx = &prog;
	rc = th_export_run(&c, segs.sources, segs.sources_count, out, stderr, &ctr);
	if (prog.is_drawn)
		fputc('\n', stderr);
	if (rc >= 0 && c.srt != NULL) {
		uint64_t timed = 0, lone;

		for (uint32_t r = 0; r < atomic_load(&c.srt->rows); r++)
			timed += c.srt->row[r].count;
		lone = ctr.records_out - timed - c.srt->untimed_clock - c.srt->untimed_rows;
		if (c.format == TH_EXPORT_FORMAT_TEXT) {
			th_srt_print(out, c.srt,
				"RPC records that pass the filters, the call's first segment to "
				"the reply's first");
			fprintf(out,
				"  %-14" PRIu64
				" RPCs not timed: no reply or no call in the trace\n",
				lone);
		} else {
			/* Rows for a program; what was not timed goes with the summary. */
			th_srt_write_rows(out, c.srt, c.format == TH_EXPORT_FORMAT_JSON);
			if (!is_quiet)
				fprintf(stderr,
					"tracehound export: RPCs not timed: %" PRIu64
					" without a reply or a call, %" PRIu64
					" with a reply stamped first, %" PRIu64
					" past %d procedures\n",
					lone, c.srt->untimed_clock, c.srt->untimed_rows,
					TH_SRT_ROWS);
		}
	}
	/* Closed whether or not the run failed; a failure the run said comes first. */
	rc2 = finish_out(out);
	out = NULL;
	if (rc >= 0)
		rc = rc2;
	if (rc < 0) {
		fprintf(stderr, "tracehound export: %s: %s\n",
			output != NULL ? output : "standard output", strerror(-rc));
		status = 1;
		/* Records formatted into a buffer that could not be written are not written. */
		written = "formatted before it failed";
	}
	th_segs_report(&segs);
	if (segs.dmg.is_limited)
		status = 1;
	if (!is_quiet) {
		size_t n = segs.chained + segs.dmg.unread;

		fprintf(stderr, "tracehound export: %zu segment%s (%u damaged)%s, ", n,
			n == 1 ? "" : "s", segs.dmg.damaged,
			th_segs_note(&segs, note, sizeof(note)));
	}
	if (!is_quiet && c.is_names) /* a listing holds every name: nothing is late */
		fprintf(stderr,
			"%" PRIu64 " names read, %" PRIu64 " %s, %" PRIu64 " filtered out\n",
			ctr.names_in, ctr.records_out, written, ctr.filtered);
	else if (!is_quiet && c.srt != NULL) /* a table does not care about order */
		fprintf(stderr,
			"%" PRIu64 " RPCs read, %" PRIu64 " in the table, %" PRIu64
			" filtered out\n",
			ctr.records_in, ctr.records_out, ctr.filtered);
	else if (!is_quiet)
		fprintf(stderr,
			"%" PRIu64 " %s read, %" PRIu64 " %s, %" PRIu64 " filtered out, %" PRIu64
			" names, %" PRIu64 " late%s\n",
			ctr.records_in, c.is_rpcs ? "RPCs" : "opens", ctr.records_out, written,
			ctr.filtered, ctr.names_in, ctr.out_of_order,
			late_note(&c, &ctr, late, sizeof(late)));
	/* Rows missing from a listing are said even with -q: the output does not show them. */
	if (c.is_names && ctr.names_dropped > 0)
		fprintf(stderr,
			"tracehound export: %" PRIu64 " of %" PRIu64
			" names not kept, --names-mb %" PRIu64
			" reached: they are not listed, nor paths through them (raise it, or "
			"keep fewer servers with --server)\n",
			ctr.names_dropped, ctr.names_in, c.names_bytes >> 20);
	else if (!is_quiet && ctr.names_dropped > 0)
		fprintf(stderr,
			"tracehound export: %" PRIu64 " of %" PRIu64
			" names not kept, --names-mb %" PRIu64
			" reached: paths through them are empty (raise it)\n",
			ctr.names_dropped, ctr.names_in, c.names_bytes >> 20);
	if (!is_quiet && ctr.released_early > 0)
		fprintf(stderr,
			"tracehound export: %" PRIu64 " records left the reorder window before it "
			"had passed, their streams holding their share of --window-mb %" PRIu64
			" (raise it)\n",
			ctr.released_early, c.window_bytes >> 20);
	if (!is_quiet && c.anon != NULL) {
		struct th_export_anon_counters ac;

		th_export_anon_counters(c.anon, &ac);
		fprintf(stderr,
			"tracehound export: pseudonyms computed: %" PRIu64 " addresses, %" PRIu64
			" uids and gids, %" PRIu64 " handles; %" PRIu64
			" replaced in full tables (computed again when they return)\n",
			ac.addrs, ac.ids, ac.fhs, ac.replaced);
	}
	if (status == 0 && (segs.dmg.damaged > 0 || segs.dmg.foreign > 0 || segs.dmg.missing > 0 ||
				   segs.dmg.lost > 0 || segs.dmg.unsearched > 0))
		status = 3;
	/* A listing without some of its rows is incomplete output, as a damaged segment's is. */
	if (status == 0 && c.is_names && ctr.names_dropped > 0)
		status = 3;
free_all:
	/* Only where the run was not reached: nothing was written. */
	if (out != stdout && out != NULL)
		fclose(out);
	th_segs_free(&segs);
	th_export_hosts_free(c.hosts);
	th_export_anon_free(c.anon);
	free(c.srt);
	return status;
}
