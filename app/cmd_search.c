/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tracehound search: RDMA anomaly search against a subsystem profile (the
 * simulated subsystem today; real verbs later through the same backend
 * table), replay of one workload file, and the evaluation that runs every
 * algorithm on every profile over several seeds and compares them with the
 * profile's documented anomalies (the paper's Figures 4 and 5).
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "th_cmd.h"
#include "th_conf.h"
#include "th_rng.h"
#include "th_search.h"
#include "th_sim.h"

#define PROFILES_MAX 16
/* Points of the anomalies-vs-time series (one every 1/60 of the budget). */
#define SERIES_POINTS 61
/* Points drawn inside each found MFS to tell how much of it shows the symptom. */
#define MFS_CHECK_POINTS 50
/* --skip-mfs files at most. */
#define SKIP_FILES_MAX 16

struct opts {
	struct th_search_cfg cfg;
	const char *profile[PROFILES_MAX];
	unsigned profile_count;
	const char *log_path;
	const char *out_dir;
	const char *replay;
	const char *chart;
	const char *series;
	const char *known_dir;
	const char *skip[SKIP_FILES_MAX];
	unsigned skip_count;
	unsigned seeds;
	unsigned repeat; /* --replay runs (0: --repeat not given, one run) */
	double refine_s; /* --refine: testbed seconds for th_search_refine() (0: none) */
	bool is_eval;
	bool is_quiet;
	bool is_temp_min_given; /* --temp-min on the command line */
};

static void
usage(FILE *out)
{
	struct th_search_cfg d;
	int a;

	th_search_cfg_default(&d);
	fprintf(out,
		"usage: tracehound search --profile FILE [options]\n"
		"       tracehound search --profile FILE --replay WORKLOAD.ini [options]\n"
		"       tracehound search --eval [--profile FILE]... [options]\n"
		"\n"
		"Search an RDMA subsystem for workloads that make it send PFC pauses or fall\n"
		"short of its line rate (Collie, NSDI'22), with the minimal feature set (MFS)\n"
		"of each. The subsystem is a simulated one described by a profile\n"
		"(config/rdma/*.ini); time is testbed time (each experiment costs what a real\n"
		"setup and measurement would). Prints the anomalies found, their MFS and which\n"
		"of the profile's documented anomalies they match.\n"
		"\n"
		"options:\n"
		"  -p, --profile FILE     subsystem profile (--eval: repeatable; default all of\n"
		"                         config/rdma/*.ini)\n"
		"  -a, --algo NAME        search algorithm (default %s):\n",
		th_search_algo_name(d.algo));
	for (a = 0; a < TH_SEARCH__COUNT; a++)
		fprintf(out, "                           %-13s %s\n",
			th_search_algo_name((enum th_search_algo)a),
			th_search_algo_desc((enum th_search_algo)a));
	fprintf(out,
		"  -H, --hours H          testbed-hour budget, more than 0 and enough for one\n"
		"                         experiment (default %g)\n"
		"  -s, --seed N           seed of the search and the simulator's noise (default "
		"%llu)\n"
		"  -n, --samples N        one-second counter samples per experiment (default %u)\n"
		"      --pause-ratio R    pause anomaly at pause time / time >= R (default %g)\n"
		"      --shortfall F      throughput anomaly below (1 - F) of both limits\n"
		"                         (default %g)\n"
		"      --confirm N        run a new anomaly's trigger N more times; it is\n"
		"                         recorded only if each shows the symptom (default %u)\n"
		"      --temp T           annealing temperature at each (re)start (default %g)\n"
		"      --decay D          annealing temperature factor per step (default %g)\n"
		"      --temp-min T       annealing temperature floor (default %g)\n"
		"      --stall N          annealing: restart after N experiments without an\n"
		"                         anomaly (default %u; 0: never)\n"
		"  -l, --log FILE         every experiment as JSON Lines\n"
		"  -o, --out DIR          write DIR/anomalies.txt, DIR/anomaly-<id>.ini (the\n"
		"                         trigger workloads, replayable with --replay) and\n"
		"                         DIR/mfs.txt (every MFS, one per line)\n"
		"      --refine H         after the search, up to H more testbed hours bounding\n"
		"                         the numeric features each MFS leaves free where its\n"
		"                         anomaly stops along them (conditions a benign value\n"
		"                         meets: H#17's wqe_batch<=16); default 0, none\n"
		"      --skip-mfs FILE    MFS known already, one per line as in DIR/mfs.txt\n"
		"                         ('#' comments): their points are not run (repeatable;\n"
		"                         algorithms with MFS)\n"
		"  -r, --replay FILE      run the [workload] of FILE once and print the verdict\n"
		"                         and the documented anomalies it matches\n"
		"      --repeat N         with --replay: run it N times (the noise differs) and\n"
		"                         say in how many it showed each symptom\n"
		"  -k, --known DIR        write the profile's documented anomalies' triggers as\n"
		"                         DIR/<id>.ini (F#3: F-3.ini) and list them\n"
		"  -e, --eval             every algorithm x profile x seed: anomalies found\n"
		"                         (mean +- sd), time to find them, targets\n"
		"      --seeds N          seeds per algorithm and profile with --eval (default 5)\n"
		"      --chart FILE       with --eval: SVG chart of anomalies vs testbed hours\n"
		"      --series FILE      with --eval: the chart's numbers as CSV\n"
		"  -q, --quiet            no per-anomaly table (the counts and totals stay)\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 done, 1 failed, 2 usage error, bad profile or workload file, or "
		"an\n"
		"impossible workload.\n",
		d.budget_s / 3600, (unsigned long long)d.seed, d.mon.samples, d.mon.pause_ratio,
		d.mon.shortfall, d.confirm_runs, d.temp, d.decay, d.temp_min, d.stall_steps);
}

enum {
	OPT_PAUSE = 256,
	OPT_SHORTFALL,
	OPT_TEMP,
	OPT_DECAY,
	OPT_TEMP_MIN,
	OPT_STALL,
	OPT_SEEDS,
	OPT_CHART,
	OPT_SERIES,
	OPT_SKIP_MFS,
	OPT_REPEAT,
	OPT_CONFIRM,
	OPT_REFINE,
};

static const struct option options[] = {
	{"profile", required_argument, NULL, 'p'},
	{"algo", required_argument, NULL, 'a'},
	{"hours", required_argument, NULL, 'H'},
	{"seed", required_argument, NULL, 's'},
	{"samples", required_argument, NULL, 'n'},
	{"pause-ratio", required_argument, NULL, OPT_PAUSE},
	{"shortfall", required_argument, NULL, OPT_SHORTFALL},
	{"temp", required_argument, NULL, OPT_TEMP},
	{"decay", required_argument, NULL, OPT_DECAY},
	{"temp-min", required_argument, NULL, OPT_TEMP_MIN},
	{"stall", required_argument, NULL, OPT_STALL},
	{"log", required_argument, NULL, 'l'},
	{"out", required_argument, NULL, 'o'},
	{"replay", required_argument, NULL, 'r'},
	{"eval", no_argument, NULL, 'e'},
	{"known", required_argument, NULL, 'k'},
	{"seeds", required_argument, NULL, OPT_SEEDS},
	{"chart", required_argument, NULL, OPT_CHART},
	{"skip-mfs", required_argument, NULL, OPT_SKIP_MFS},
	{"repeat", required_argument, NULL, OPT_REPEAT},
	{"confirm", required_argument, NULL, OPT_CONFIRM},
	{"refine", required_argument, NULL, OPT_REFINE},
	{"series", required_argument, NULL, OPT_SERIES},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int
parse_double(const char *opt, const char *s, double min, double max, double *v)
{
	if (th_conf_parse_double(s, min, max, v) != 0) {
		fprintf(stderr, "tracehound search: --%s wants a number in [%g, %g], not '%s'\n",
			opt, min, max, s);
		return -EINVAL;
	}
	return 0;
}

static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	if (th_conf_parse_u64(s, min, max, false, v) != 0) {
		fprintf(stderr,
			"tracehound search: --%s wants an integer in [%llu, %llu], not '%s'\n", opt,
			(unsigned long long)min, (unsigned long long)max, s);
		return -EINVAL;
	}
	return 0;
}

/* Append @p v to @p arr (*@p n of @p max used); -EINVAL when full. */
static int
push(const char **arr, unsigned *n, unsigned max, const char *opt, const char *v)
{
	if (*n == max) {
		fprintf(stderr, "tracehound search: %s at most %u times\n", opt, max);
		return -EINVAL;
	}
	arr[(*n)++] = v;
	return 0;
}

/* What a command line asks for: one of these, by --eval, --replay or --known. */
enum mode {
	M_SEARCH = 1,
	M_REPLAY = 2,
	M_EVAL = 4,
	M_KNOWN = 8,
};

static const char *const mode_names[] = {"a search", "--replay", "--eval", "--known"};

/* The modes each option does something in; an option not listed, in all. */
static const struct {
	int val;
	unsigned modes;
} applies[] = {
	{'a', M_SEARCH},
	{'H', M_SEARCH | M_EVAL},
	{'s', M_SEARCH | M_REPLAY},
	{'n', M_SEARCH | M_REPLAY | M_EVAL},
	{OPT_PAUSE, M_SEARCH | M_REPLAY | M_EVAL},
	{OPT_SHORTFALL, M_SEARCH | M_REPLAY | M_EVAL},
	{OPT_CONFIRM, M_SEARCH | M_EVAL},
	{OPT_TEMP, M_SEARCH | M_EVAL},
	{OPT_DECAY, M_SEARCH | M_EVAL},
	{OPT_TEMP_MIN, M_SEARCH | M_EVAL},
	{OPT_STALL, M_SEARCH | M_EVAL},
	{'l', M_SEARCH},
	{'o', M_SEARCH},
	{OPT_REFINE, M_SEARCH},
	{OPT_SKIP_MFS, M_SEARCH},
	{'q', M_SEARCH},
	{'r', M_REPLAY},
	{OPT_REPEAT, M_REPLAY},
	{'e', M_EVAL},
	{OPT_SEEDS, M_EVAL},
	{OPT_CHART, M_EVAL},
	{OPT_SERIES, M_EVAL},
	{'k', M_KNOWN},
};

/*
 * Refuse an option given where it would do nothing: a search's options with
 * --replay, --seeds without --eval, --temp with random search. @p given
 * holds the options seen, by applies[] index. @return 0 or -EINVAL.
 */
static int
check_modes(const struct opts *o, const bool *given)
{
	enum mode m = M_SEARCH;
	size_t i;

	if (o->is_eval)
		m = M_EVAL;
	else if (o->replay != NULL)
		m = M_REPLAY;
	else if (o->known_dir != NULL)
		m = M_KNOWN;
	for (i = 0; i < sizeof(applies) / sizeof(applies[0]); i++) {
		int v = applies[i].val;
		unsigned b, n = 0;

		if (!given[i] || (applies[i].modes & m) != 0)
			continue;
		if (v == 'e' || v == 'r' || v == 'k') {
			fprintf(stderr, "tracehound search: --%s and %s do not go together\n",
				th_cmd_opt_name(options, v), mode_names[__builtin_ctz(m)]);
			return -EINVAL;
		}
		fprintf(stderr, "tracehound search: --%s goes with ", th_cmd_opt_name(options, v));
		for (b = 0; b < 4; b++)
			if (applies[i].modes & (1u << b))
				fprintf(stderr, "%s%s", n++ ? " or " : "", mode_names[b]);
		fprintf(stderr, ", not with %s\n", mode_names[__builtin_ctz(m)]);
		return -EINVAL;
	}
	if (m != M_SEARCH)
		return 0;
	for (i = 0; i < sizeof(applies) / sizeof(applies[0]); i++) {
		int v = applies[i].val;
		bool is_anneal_opt =
			v == OPT_TEMP || v == OPT_DECAY || v == OPT_TEMP_MIN || v == OPT_STALL;
		bool is_mfs_opt = v == OPT_REFINE || v == OPT_SKIP_MFS;

		if (given[i] && ((is_anneal_opt && !th_search_algo_anneals(o->cfg.algo)) ||
					(is_mfs_opt && !th_search_algo_uses_mfs(o->cfg.algo)))) {
			fprintf(stderr, "tracehound search: --%s does nothing with --algo %s\n",
				th_cmd_opt_name(options, v), th_search_algo_name(o->cfg.algo));
			return -EINVAL;
		}
	}
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	bool given[sizeof(applies) / sizeof(applies[0])] = {false};
	uint64_t u;
	double d;
	int c, rc = 0;
	size_t i;

	memset(o, 0, sizeof(*o));
	th_search_cfg_default(&o->cfg);
	o->seeds = 5;
	optind = 1;
	while (rc == 0 &&
		(c = getopt_long(argc, argv, "p:a:H:s:n:l:o:r:k:eqh", options, NULL)) != -1) {
		for (i = 0; i < sizeof(applies) / sizeof(applies[0]); i++)
			given[i] |= applies[i].val == c;
		switch (c) {
		case 'p':
			for (i = 0; i < o->profile_count; i++)
				if (th_cmd_same_file(o->profile[i], optarg)) {
					fprintf(stderr,
						"tracehound search: --profile %s is given twice\n",
						optarg);
					return -EINVAL;
				}
			rc = push(o->profile, &o->profile_count, PROFILES_MAX, "--profile", optarg);
			break;
		case 'a':
			rc = th_search_algo_parse(optarg);
			if (rc < 0)
				fprintf(stderr,
					"tracehound search: unknown algorithm '%s' (see "
					"--help)\n",
					optarg);
			else
				o->cfg.algo = (enum th_search_algo)rc;
			rc = rc < 0 ? rc : 0;
			break;
		case 'H':
			/* A budget of none runs no experiment: the search or evaluation would
			 * print an empty result as if it had looked. */
			if (th_conf_parse_double(optarg, 0, 10000, &d) != 0 || d == 0) {
				fprintf(stderr,
					"tracehound search: --hours wants a number in (0, 10000], "
					"not '%s'\n",
					optarg);
				rc = -EINVAL;
			}
			o->cfg.budget_s = d * 3600;
			break;
		case 's':
			rc = parse_u64("seed", optarg, 0, UINT64_MAX, &o->cfg.seed);
			break;
		case 'n':
			rc = parse_u64("samples", optarg, 1, 3600, &u);
			o->cfg.mon.samples = (unsigned)u;
			break;
		case OPT_PAUSE:
			rc = parse_double("pause-ratio", optarg, 1e-9, 1, &o->cfg.mon.pause_ratio);
			break;
		case OPT_SHORTFALL:
			rc = parse_double("shortfall", optarg, 1e-6, 0.999, &o->cfg.mon.shortfall);
			break;
		case OPT_TEMP:
			rc = parse_double("temp", optarg, 1e-6, 1e6, &o->cfg.temp);
			break;
		case OPT_DECAY:
			rc = parse_double("decay", optarg, 1e-6, 1, &o->cfg.decay);
			break;
		case OPT_TEMP_MIN:
			rc = parse_double("temp-min", optarg, 1e-9, 1e6, &o->cfg.temp_min);
			o->is_temp_min_given = true;
			break;
		case OPT_STALL:
			rc = parse_u64("stall", optarg, 0, 1000000, &u);
			o->cfg.stall_steps = (unsigned)u;
			break;
		case 'l':
			o->log_path = optarg;
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 'r':
			o->replay = optarg;
			break;
		case 'e':
			o->is_eval = true;
			break;
		case 'k':
			o->known_dir = optarg;
			break;
		case OPT_SEEDS:
			rc = parse_u64("seeds", optarg, 1, 1000, &u);
			o->seeds = (unsigned)u;
			break;
		case OPT_CHART:
			o->chart = optarg;
			break;
		case OPT_SERIES:
			o->series = optarg;
			break;
		case OPT_CONFIRM:
			rc = parse_u64("confirm", optarg, 0, 10, &u);
			o->cfg.confirm_runs = (unsigned)u;
			break;
		case OPT_REFINE:
			rc = parse_double("refine", optarg, 0, 10000, &d);
			o->refine_s = d * 3600;
			break;
		case OPT_REPEAT:
			rc = parse_u64("repeat", optarg, 1, 1000, &u);
			o->repeat = (unsigned)u;
			break;
		case OPT_SKIP_MFS:
			rc = push(o->skip, &o->skip_count, SKIP_FILES_MAX, "--skip-mfs", optarg);
			break;
		case 'q':
			o->is_quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (rc < 0)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "tracehound search: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->is_eval && o->profile_count != 1) {
		fprintf(stderr, "tracehound search: give one --profile (see --help)\n");
		return -EINVAL;
	}
	if (check_modes(o, given) != 0)
		return -EINVAL;
	/* The floor is where the temperature stops falling: above the start, it would rise. */
	if (o->cfg.temp_min > o->cfg.temp) {
		if (o->is_temp_min_given) {
			fprintf(stderr,
				"tracehound search: --temp-min %g is above the starting --temp "
				"%g\n",
				o->cfg.temp_min, o->cfg.temp);
			return -EINVAL;
		}
		o->cfg.temp_min = o->cfg.temp;
	}
	return 0;
}

/*
 * Give @p s the MFS of @p path, one per line ('#' comments, blank lines).
 * @return 0, or -EINVAL after "path:line: reason" on stderr.
 */
static int
load_skips(struct th_search *s, const struct th_limits *l, const char *profile, const char *path)
{
	struct th_rng rng;
	struct th_wl inside;

	char *line = NULL, err[256];
	size_t cap = 0;
	unsigned no = 0;
	ssize_t n;
	FILE *f;
	int rc = 0;

	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "tracehound search: %s: %s\n", path, strerror(errno));
		return -EINVAL;
	}
	while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
		struct th_mfs m;
		char *p = line;

		no++;
		/* th_mfs_parse() skips white space itself; this only finds blank lines. */
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		if (th_mfs_parse(p, &m, err, sizeof(err)) != 0) {
			fprintf(stderr, "tracehound search: %s:%u: %s\n", path, no, err);
			rc = -EINVAL;
		} else if (m.feats == 0) {
			fprintf(stderr,
				"tracehound search: %s:%u: no conditions: it would cover every "
				"workload\n",
				path, no);
			rc = -EINVAL;
		} else if (th_search_add_given(s, &m) != 0) {
			fprintf(stderr, "tracehound search: %s:%u: out of memory\n", path, no);
			rc = -EINVAL;
		} else {
			/* Harmless (an MFS of another subsystem), but it skips nothing here. */
			th_rng_seed(&rng, no);
			if (th_mfs_draw(&m, l, &rng, &inside) == -ENOENT)
				fprintf(stderr,
					"tracehound search: %s:%u: note: no workload %s allows "
					"meets it\n",
					path, no, profile);
		}
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "tracehound search: %s: read failed: %s\n", path, strerror(errno));
		rc = -EINVAL;
	}
	free(line);
	fclose(f);
	return rc;
}

/* The profile's documented anomalies, as th_search_score() wants them. */
static struct th_search_known *
known_list(const struct th_sim *sim, unsigned *count)
{
	struct th_search_known *k;
	unsigned i, n = th_sim_known_count(sim);

	*count = n;
	k = calloc(n != 0 ? n : 1, sizeof(*k));
	for (i = 0; k != NULL && i < n; i++) {
		const struct th_sim_known *sk = th_sim_known_get(sim, i);

		k[i].id = sk->id;
		k[i].mfs = &sk->mfs;
	}
	return k;
}

static struct th_sim *
load_profile(const char *path, uint64_t seed)
{
	struct th_sim *sim;
	char err[512];

	sim = th_sim_load(path, seed, err, sizeof(err));
	if (sim == NULL)
		fprintf(stderr, "tracehound search: %s\n", err);
	return sim;
}

/*
 * What one experiment costs on @p sim, freshly loaded (a search's first run
 * sets up from scratch): from th_wl_default()'s one QP and one MR to the
 * limits' most QPs and MRs, in testbed seconds.
 */
static void
exp_cost_range(const struct opts *o, struct th_sim *sim, double *lo, double *hi)
{
	struct th_backend b;
	struct th_wl wl;

	th_sim_backend(sim, &b);
	th_wl_default(&wl);
	*lo = b.cost_s(b.ctx, &wl, o->cfg.mon.samples);
	wl.qp_count = b.limits->max_qp;
	wl.mr_count = b.limits->max_mr;
	*hi = b.cost_s(b.ctx, &wl, o->cfg.mon.samples);
}

/* @p cost_s in testbed hours, rounded up to the next 0.0001 h so a budget of it runs it. */
static double
hours_for(double cost_s)
{
	double hours = ceil(cost_s / 3600 * 1e4) / 1e4;

	while (hours * 3600 < cost_s)
		hours += 1e-4;
	return hours;
}

/*
 * Whether the budget runs no experiment on @p sim, freshly loaded: even the
 * cheapest costs more. The search would stop before it and print an empty
 * result as if it had looked. @return true after saying so, with the budget
 * that is sure to run one (the costliest setup's).
 */
static bool
is_budget_short(const struct opts *o, struct th_sim *sim)
{
	double lo, hi;

	exp_cost_range(o, sim, &lo, &hi);
	if (!(o->cfg.budget_s < lo))
		return false;
	fprintf(stderr,
		"tracehound search: --hours %g (%.1f testbed seconds) runs no experiment on %s: "
		"one costs %.1f to %.1f s (setup by QPs and MRs, and %u one-second samples); "
		"--hours %g or more runs one, whatever the point\n",
		o->cfg.budget_s / 3600, o->cfg.budget_s, th_sim_name(sim), lo, hi,
		o->cfg.mon.samples, hours_for(hi));
	return true;
}

static void
print_verdict(FILE *f, const struct th_verdict *v)
{
	fprintf(f,
		"verdict: %s%s%s (pause ratio %.4f%%, %.1f%% of bits/s limit, %.1f%% of "
		"packets/s limit)\n",
		v->pause ? "pause" : "", v->pause && v->low_tput ? " + " : "",
		v->low_tput ? "low_tput" : (v->pause ? "" : "normal"), v->pause_ratio * 100,
		v->bps_frac * 100, v->pps_frac * 100);
}

/*
 * Run --replay's workload --repeat times. Each run draws new noise, so a
 * point near a threshold (a pause ratio about 0.1%) shows its symptom in
 * some runs only: the count says how firmly it holds.
 */
static int
cmd_replay(const struct opts *o)
{
	struct th_sample mean;
	struct th_verdict v;
	struct th_backend b;
	struct th_sim *sim;
	struct th_wl wl;
	char err[512], text[1024];
	unsigned i, r, shown[TH_SYM__COUNT] = {0}, any = 0, matches = 0;
	int rc;

	sim = load_profile(o->profile[0], o->cfg.seed);
	if (sim == NULL)
		return 2;
	th_sim_backend(sim, &b);
	rc = th_wl_load(o->replay, b.limits, &wl, err, sizeof(err));
	if (rc < 0) {
		if (rc == -ERANGE) /* past the profile's limits */
			fprintf(stderr, "tracehound search: %s (impossible workload on %s)\n", err,
				th_sim_name(sim));
		else
			fprintf(stderr, "tracehound search: %s\n", err);
		th_sim_free(sim);
		return 2;
	}
	for (r = 0; r < (o->repeat != 0 ? o->repeat : 1); r++) {
		rc = th_search_run_one(&b, &o->cfg.mon, &wl, &mean, &v, err, sizeof(err));
		if (rc == -EINVAL) {
			fprintf(stderr, "tracehound search: %s: impossible workload on %s: %s\n",
				o->replay, th_sim_name(sim), err);
			th_sim_free(sim);
			return 2;
		}
		if (rc < 0) {
			fprintf(stderr, "tracehound search: %s: the run failed: %s\n", o->replay,
				err);
			th_sim_free(sim);
			return 1;
		}
		if (r == 0 && th_wl_format(&wl, text, sizeof(text)) >= 0)
			printf("workload: %s\n", text);
		print_verdict(stdout, &v);
		for (i = 0; i < TH_SYM__COUNT; i++)
			shown[i] += th_verdict_has(&v, (enum th_symptom)i);
		any += th_verdict_is_anomalous(&v);
	}
	if (o->repeat > 1)
		printf("shown in %u of %u runs (pause %u, low_tput %u)\n", any, o->repeat,
			shown[TH_SYM_PAUSE], shown[TH_SYM_LOW_TPUT]);
	for (i = 0; i < th_sim_known_count(sim); i++) {
		const struct th_sim_known *k = th_sim_known_get(sim, i);

		if (shown[k->mfs.symptom] == 0 || !th_mfs_covers(&k->mfs, &wl))
			continue;
		th_mfs_format(&k->mfs, text, sizeof(text));
		printf("matches documented anomaly %s: %s\n", k->id, text);
		matches++;
	}
	if (any != 0 && matches == 0)
		printf("matches no documented anomaly of profile %s\n", th_sim_name(sim));
	th_sim_free(sim);
	return 0;
}

/* --@p opt DIR: made if absent, and a directory we can write to. @return 0 or -1 (said). */
static int
prepare_out_dir(const char *opt, const char *dir)
{
	struct stat st;
	int err = 0;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		err = errno;
	else if (stat(dir, &st) < 0)
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (access(dir, W_OK | X_OK) < 0)
		err = errno;
	if (err != 0)
		fprintf(stderr, "tracehound search: --%s %s: %s\n", opt, dir, strerror(err));
	return err != 0 ? -1 : 0;
}

static int
cmd_known(const struct opts *o)
{
	struct th_sim *sim;
	char path[4096], text[1024];
	unsigned i;
	int status = 0;

	sim = load_profile(o->profile[0], o->cfg.seed);
	if (sim == NULL)
		return 2;
	if (prepare_out_dir("known", o->known_dir) != 0) {
		th_sim_free(sim);
		return 1;
	}
	for (i = 0; i < th_sim_known_count(sim); i++) {
		const struct th_sim_known *k = th_sim_known_get(sim, i);
		char id[sizeof(k->id)];
		size_t j;
		int rc;

		/* '#' starts a comment in shells and INI files: F#3 becomes F-3. */
		for (j = 0; j < sizeof(id); j++)
			id[j] = k->id[j] == '#' ? '-' : k->id[j];
		id[sizeof(id) - 1] = '\0';
		snprintf(path, sizeof(path), "%s/%s.ini", o->known_dir, id);
		rc = th_wl_write(&k->trigger, path);
		if (rc < 0) {
			fprintf(stderr, "tracehound search: %s: %s\n", path, strerror(-rc));
			status = 1;
			break;
		}
		th_mfs_format(&k->mfs, text, sizeof(text));
		printf("%-6s %s\n       %s\n       %s\n", k->id, path, text,
			k->note != NULL ? k->note : "");
	}
	th_sim_free(sim);
	return status;
}

/* Files a search writes in its --out DIR. */
static const char *const out_names[] = {"anomalies.txt", "mfs.txt"};

/* Whether @p path would be one of the files a search writes in --out @p dir. */
static bool
is_out_file(const char *path, const char *dir)
{
	const char *base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	char other[4096];
	size_t i, digits = strspn(base + (strncmp(base, "anomaly-", 8) == 0 ? 8 : 0), "0123456789");

	for (i = 0; i < sizeof(out_names) / sizeof(out_names[0]); i++) {
		snprintf(other, sizeof(other), "%s/%s", dir, out_names[i]);
		if (th_cmd_same_file(path, other))
			return true;
	}
	/* anomaly-<id>.ini: written, or removed as an earlier search's. */
	if (strncmp(base, "anomaly-", 8) != 0 || digits == 0 ||
		strcmp(base + 8 + digits, ".ini") != 0)
		return false;
	snprintf(other, sizeof(other), "%s/%s", dir, base);
	return th_cmd_same_file(path, other);
}

/*
 * Whether output @p what @p path would be written over a file the command
 * reads (a profile, a --skip-mfs file) or another output: it would be
 * emptied before it is read, or the two would write one file. @p other_what
 * and @p other: a second output to compare with (NULL: none). @return true
 * after saying so.
 */
static bool
output_clashes(const struct opts *o, const char *what, const char *path, const char *other_what,
	const char *other)
{
	unsigned i;

	if (path == NULL)
		return false;
	for (i = 0; i < o->profile_count; i++)
		if (th_cmd_same_file(path, o->profile[i])) {
			fprintf(stderr,
				"tracehound search: %s %s is the profile %s: writing it would "
				"destroy it; give another file\n",
				what, path, o->profile[i]);
			return true;
		}
	for (i = 0; i < o->skip_count; i++)
		if (th_cmd_same_file(path, o->skip[i])) {
			fprintf(stderr,
				"tracehound search: %s %s is the --skip-mfs file %s: writing it "
				"would destroy it before it is read; give another file\n",
				what, path, o->skip[i]);
			return true;
		}
	if (other != NULL && th_cmd_same_file(path, other)) {
		fprintf(stderr, "tracehound search: %s and %s both write %s\n", what, other_what,
			path);
		return true;
	}
	if (o->out_dir != NULL && is_out_file(path, o->out_dir)) {
		fprintf(stderr,
			"tracehound search: %s %s is a file --out %s writes (anomalies.txt, "
			"mfs.txt, anomaly-<id>.ini); give another file\n",
			what, path, o->out_dir);
		return true;
	}
	return false;
}

/* SIGINT or SIGTERM during a search: stop it, keep what it found. */
static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
}

struct logger {
	FILE *f;
	const char *algo;
	uint64_t seed;
	int rc;
};

static void
log_exp(void *arg, const struct th_search_exp *e)
{
	struct logger *l = arg;

	if (l->rc == 0)
		l->rc = th_search_log_exp(l->f, l->algo, l->seed, e);
}

/*
 * Remove DIR/anomaly-<id>.ini files of an earlier search that found more
 * than @p count anomalies, so every trigger there is this search's.
 * @return 0 or -errno.
 */
static int
remove_stale(const char *dir, unsigned count)
{
	char path[4096], tail;
	struct dirent *e;
	unsigned id;
	DIR *d = opendir(dir);
	int rc = 0;

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (sscanf(e->d_name, "anomaly-%u.ini%c", &id, &tail) != 1 || id < count ||
			strspn(e->d_name + 8, "0123456789") + 12 != strlen(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) < 0 && rc == 0)
			rc = -errno;
	}
	closedir(d);
	return rc;
}

static int
cmd_one(struct opts *o)
{
	struct th_search_known *known = NULL;
	struct logger lg = {NULL, NULL, 0, 0};
	struct th_search_stats st;
	struct th_search *s = NULL;
	struct th_sim *sim;
	struct th_backend b;
	unsigned kc = 0, k, unknown, found = 0;
	double *first = NULL;
	int status = 1, rc;

	/* Before anything is read: a log over an input would empty it first. */
	if (output_clashes(o, "--log", o->log_path, NULL, NULL))
		return 2;
	sim = load_profile(o->profile[0], o->cfg.seed);
	if (sim == NULL)
		return 2;
	if (is_budget_short(o, sim)) {
		status = 2;
		goto free_sim;
	}
	th_sim_backend(sim, &b);
	if (o->log_path != NULL) {
		lg.algo = th_search_algo_name(o->cfg.algo);
		lg.seed = o->cfg.seed;
		o->cfg.on_exp = log_exp;
		o->cfg.arg = &lg;
	}
	o->cfg.stop = &got_signal;
	s = th_search_create(&o->cfg, &b);
	if (s == NULL) {
		fprintf(stderr, "tracehound search: bad settings: %s\n", strerror(errno));
		status = 2;
		goto free_sim;
	}
	/* Every input read and every output ready before testbed time is spent. */
	for (k = 0; k < o->skip_count; k++) {
		if (load_skips(s, b.limits, th_sim_name(sim), o->skip[k]) != 0) {
			status = 2;
			goto free_search;
		}
	}
	if (o->out_dir != NULL && prepare_out_dir("out", o->out_dir) != 0)
		goto free_search;
	if (o->log_path != NULL) {
		lg.f = fopen(o->log_path, "w");
		if (lg.f == NULL) {
			fprintf(stderr, "tracehound search: %s: %s\n", o->log_path,
				strerror(errno));
			goto free_search;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rc = th_search_run(s);
	if (rc == 0 && o->refine_s > 0)
		rc = th_search_refine(s, o->refine_s);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (rc < 0) {
		fprintf(stderr, "tracehound search: %s\n", strerror(-rc));
		goto free_search;
	}
	if (got_signal != 0)
		fprintf(stderr, "tracehound search: %s; what was found so far follows\n",
			got_signal == SIGINT ? "interrupted" : "terminated");
	if (lg.rc < 0) {
		fprintf(stderr, "tracehound search: %s: write failed\n", o->log_path);
		goto free_search;
	}
	th_search_get_stats(s, &st);
	if (got_signal == 0 && st.runs + st.mfs_runs + st.failed == 0) {
		/* Above the cheapest experiment, the first point chosen cost more: an empty
		 * result would read as a search that looked and found nothing. */
		double lo, hi;

		exp_cost_range(o, sim, &lo, &hi);
		fprintf(stderr,
			"tracehound search: --hours %g (%.1f testbed seconds) ran no experiment on "
			"%s: the first point the search chose costs more (one costs %.1f to %.1f "
			"s); --hours %g or more runs one, whatever the point\n",
			o->cfg.budget_s / 3600, o->cfg.budget_s, th_sim_name(sim), lo, hi,
			hours_for(hi));
		status = 2;
		goto free_search;
	}
	printf("%s on %s, seed %llu, %.2f testbed hours", th_search_algo_name(o->cfg.algo),
		th_sim_name(sim), (unsigned long long)o->cfg.seed, o->cfg.budget_s / 3600);
	if (o->refine_s > 0)
		printf(" + up to %.2f refining MFS", o->refine_s / 3600);
	putchar('\n');
	th_search_print_summary(s, stdout, !o->is_quiet);
	known = known_list(sim, &kc);
	first = calloc(kc != 0 ? kc : 1, sizeof(*first));
	if (known == NULL || first == NULL)
		goto free_search;
	unknown = th_search_score(s, known, kc, first);
	printf("documented anomalies found:");
	for (k = 0; k < kc; k++) {
		if (first[k] < 0)
			continue;
		printf(" %s (%.2f h)", known[k].id, first[k] / 3600);
		found++;
	}
	printf("\n%u of %u documented; %u found anomalies match none\n", found, kc, unknown);
	if (o->out_dir != NULL) {
		/* Reproduce commands that run from anywhere: the paths made absolute. */
		char *dir = realpath(o->out_dir, NULL), *prof = realpath(o->profile[0], NULL);

		rc = th_search_write_anomalies(
			s, dir != NULL ? dir : o->out_dir, prof != NULL ? prof : o->profile[0]);
		free(dir);
		free(prof);
		if (rc == 0)
			rc = remove_stale(o->out_dir, th_search_anomaly_count(s));
		if (rc < 0) {
			fprintf(stderr, "tracehound search: %s: %s\n", o->out_dir, strerror(-rc));
			goto free_search;
		}
		printf("anomaly list: %s/anomalies.txt\n", o->out_dir);
	}
	status = 0;
free_search:
	free(first);
	free(known);
	th_search_free(s);
	if (lg.f != NULL && fclose(lg.f) != 0 && status == 0) {
		fprintf(stderr, "tracehound search: %s: write failed\n", o->log_path);
		status = 1;
	}
free_sim:
	th_sim_free(sim);
	return status;
}

/* Per algorithm and profile, over seeds. */
struct cell {
	double found_sum, found_sq; /* distinct documented anomalies per run */
	double unknown_sum;         /* found anomalies matching no documented one */
	double hidden_sum;          /* documented ones missed whose trigger a found MFS covers */
	double tfind_sum;           /* sum over runs and found anomalies of time found */
	unsigned tfind_n;
	double runs_sum, mfs_sum;
	double again_sum; /* MFS experiments on triggers inside a documented anomaly met before */
	double held_sum; /* over found MFS: share of points inside that show the symptom */
	unsigned held_n;
	unsigned *hits; /* per documented anomaly: runs that found it */
	double *series; /* SERIES_POINTS: sum over seeds of count found by then */
	double *kth;    /* per k (1..known): sum over runs of time the k-th was
			   found (the budget when never) */
};

static double
mean_of(double sum, unsigned n)
{
	return n != 0 ? sum / n : 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * MFS experiments @p s spent on anomalies whose trigger lies in a documented
 * anomaly an earlier trigger of the run lay in already: the search takes a
 * cause whose region its MFS covers only in part for new each time (the
 * model's F#12 pauses at 4 KiB MTU and long requests but not at 2 KiB, so a
 * 2 KiB trigger with many SGEs gets an MFS of its own).
 */
static double
mfs_again(const struct th_search *s, const struct th_search_known *known, unsigned kc)
{
	bool *seen = calloc(kc + 1, sizeof(*seen));
	double again = 0;
	unsigned i, k;

	for (i = 0; seen != NULL && i < th_search_anomaly_count(s); i++) {
		const struct th_search_anomaly *an = th_search_anomaly_get(s, i);
		bool is_again = false;

		for (k = 0; k < kc; k++) {
			if (known[k].mfs->symptom != an->symptom ||
				!th_mfs_covers(known[k].mfs, &an->trigger))
				continue;
			is_again |= seen[k];
			seen[k] = true;
		}
		if (is_again)
			again += an->mfs_runs;
	}
	free(seen);
	return again;
}

/*
 * How much of each MFS @p s found holds: the share of random points inside it
 * (th_mfs_draw()) that show its symptom, run on the simulator after the search
 * and charged to no budget. An MFS broader than its cause scores low, and
 * hides what lies in the healthy part from the search, which skips it.
 */
static void
score_mfs(const struct th_search *s, const struct th_backend *b, const struct th_monitor_cfg *mon,
	uint64_t seed, struct cell *cell)
{
	struct th_rng rng;
	unsigned i, k;

	th_rng_seed(&rng, seed);
	for (i = 0; i < th_search_anomaly_count(s); i++) {
		const struct th_search_anomaly *an = th_search_anomaly_get(s, i);
		unsigned n = 0, shown = 0;

		if (!an->has_mfs)
			continue;
		for (k = 0; k < MFS_CHECK_POINTS; k++) {
			struct th_sample mean;
			struct th_verdict v;
			struct th_wl wl;
			char err[256];

			if (th_mfs_draw(&an->mfs, b->limits, &rng, &wl) != 0 ||
				th_search_run_one(b, mon, &wl, &mean, &v, err, sizeof(err)) != 0)
				continue;
			n++;
			shown += th_verdict_has(&v, (enum th_symptom)an->symptom);
		}
		if (n != 0) {
			cell->held_sum += (double)shown / n;
			cell->held_n++;
		}
	}
}

static int
eval_run(const struct opts *o, struct th_sim *sim, enum th_search_algo algo, uint64_t seed,
	const struct th_search_known *known, unsigned kc, struct cell *cell, double *first)
{
	struct th_search_stats st;
	struct th_search_cfg cfg = o->cfg;
	struct th_search *s;
	struct th_backend b;
	unsigned k, t, found = 0;

	th_sim_reset(sim, seed);
	th_sim_backend(sim, &b);
	cfg.algo = algo;
	cfg.seed = seed;
	cfg.on_exp = NULL;
	s = th_search_create(&cfg, &b);
	if (s == NULL || th_search_run(s) < 0) {
		th_search_free(s);
		return -ENOMEM;
	}
	cell->unknown_sum += th_search_score(s, known, kc, first);
	th_search_get_stats(s, &st);
	cell->runs_sum += st.runs;
	cell->mfs_sum += st.mfs_runs;
	cell->again_sum += mfs_again(s, known, kc);
	for (k = 0; k < kc; k++) {
		if (first[k] < 0) {
			unsigned i;

			for (i = 0; i < th_search_anomaly_count(s); i++) {
				const struct th_search_anomaly *an = th_search_anomaly_get(s, i);

				if (an->has_mfs && th_mfs_covers(&an->mfs,
							   &th_sim_known_get(sim, k)->trigger)) {
					cell->hidden_sum++;
					break;
				}
			}
			continue;
		}
		found++;
		cell->hits[k]++;
		cell->tfind_sum += first[k];
		cell->tfind_n++;
		for (t = 0; t < SERIES_POINTS; t++)
			if (first[k] <= cfg.budget_s * t / (SERIES_POINTS - 1))
				cell->series[t]++;
	}
	cell->found_sum += found;
	cell->found_sq += (double)found * found;
	qsort(first, kc, sizeof(*first), cmp_double);
	/* first[] sorted: the k-th found is the k-th non-negative entry. */
	for (k = 0, t = 0; k < kc; k++) {
		while (t < kc && first[t] < 0)
			t++;
		cell->kth[k] += t < kc ? first[t] : cfg.budget_s;
		if (t < kc)
			t++;
	}
	score_mfs(s, &b, &cfg.mon, seed, cell);
	th_search_free(s);
	return 0;
}

/* Mean testbed hours for a run of @c to reach @k documented anomalies (k >= 1). */
static double
hours_to(const struct cell *c, unsigned k, unsigned seeds)
{
	return k == 0 ? 0 : c->kth[k - 1] / seeds / 3600;
}

/*
 * @p x as a multiple of @p base ("1.10x"); a baseline that found nothing
 * (a short budget, few seeds) gives "-", not a ratio of billions.
 */
static void
put_ratio(double x, double base)
{
	if (base > 0)
		printf("%.2fx", x / base);
	else
		printf("-");
}

/*
 * Whether two --eval profiles share a [profile] name: the table, the chart
 * and the series label their rows by it, so the two could not be told
 * apart. A profile that does not load is left for the evaluation to report.
 * @return true after saying so.
 */
static bool
names_clash(const struct opts *o)
{
	char *names[PROFILES_MAX] = {NULL};
	unsigned p, q;
	bool is_clash = false;

	for (p = 0; p < o->profile_count && !is_clash; p++) {
		char err[512];
		struct th_sim *sim = th_sim_load(o->profile[p], 1, err, sizeof(err));

		if (sim == NULL)
			continue;
		names[p] = strdup(th_sim_name(sim));
		th_sim_free(sim);
		for (q = 0; names[p] != NULL && q < p; q++)
			if (names[q] != NULL && strcmp(names[q], names[p]) == 0) {
				fprintf(stderr,
					"tracehound search: profiles %s and %s are both named "
					"'%s' ([profile] name): the evaluation's rows could not be "
					"told apart; give one a name of its own\n",
					o->profile[q], o->profile[p], names[p]);
				is_clash = true;
				break;
			}
	}
	for (p = 0; p < o->profile_count; p++)
		free(names[p]);
	return is_clash;
}

/* Whether @p path can be opened for writing (it is, and left empty); false said. */
static bool
can_write(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "tracehound search: %s: %s\n", path, strerror(errno));
		return false;
	}
	fclose(f);
	return true;
}

static int
cmd_eval(struct opts *o)
{
	const unsigned na = TH_SEARCH__COUNT;
	const char *names[PROFILES_MAX];
	const char *algo_names[TH_SEARCH__COUNT];
	unsigned known_n[PROFILES_MAX];
	double *chart = NULL;
	glob_t g;
	bool is_glob = false;
	unsigned p, a, k, t;
	int status = 1;

	memset(&g, 0, sizeof(g));
	if (o->profile_count == 0) {
		if (glob("config/rdma/*.ini", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
			fprintf(stderr, "tracehound search: no config/rdma/*.ini here; give "
					"--profile\n");
			globfree(&g);
			return 2;
		}
		is_glob = true;
		for (p = 0; p < g.gl_pathc && p < PROFILES_MAX; p++)
			o->profile[o->profile_count++] = g.gl_pathv[p];
	}
	/* An output over a profile would empty it before it is read. */
	if (output_clashes(o, "--chart", o->chart, "--series", o->series) ||
		output_clashes(o, "--series", o->series, NULL, NULL) || names_clash(o)) {
		status = 2;
		goto out;
	}
	/* A budget below a profile's cheapest experiment would give it a table of zeroes. */
	for (p = 0; p < o->profile_count; p++) {
		char err[512];
		struct th_sim *sim = th_sim_load(o->profile[p], 1, err, sizeof(err));
		bool is_short;

		if (sim == NULL) /* left for the evaluation to report */
			continue;
		is_short = is_budget_short(o, sim);
		th_sim_free(sim);
		if (is_short) {
			status = 2;
			goto out;
		}
	}
	/* The outputs can be written: found out now, not after the evaluation. */
	if ((o->chart != NULL && !can_write(o->chart)) ||
		(o->series != NULL && !can_write(o->series)))
		goto out;
	chart = calloc((size_t)o->profile_count * na * SERIES_POINTS, sizeof(*chart));
	if (chart == NULL)
		goto out;
	for (a = 0; a < na; a++)
		algo_names[a] = th_search_algo_name((enum th_search_algo)a);
	printf("evaluation: %u seed%s x %.3g testbed hours per algorithm and profile\n", o->seeds,
		o->seeds == 1 ? "" : "s", o->cfg.budget_s / 3600);
	for (p = 0; p < o->profile_count; p++) {
		struct th_search_known *known;
		struct cell cells[TH_SEARCH__COUNT];
		struct th_sim *sim;
		double *first;
		unsigned kc;
		bool is_ok = true;

		sim = load_profile(o->profile[p], 1);
		if (sim == NULL) {
			status = 2;
			o->profile_count = p;
			goto free_names;
		}
		known = known_list(sim, &kc);
		first = calloc(kc + 1, sizeof(*first));
		memset(cells, 0, sizeof(cells));
		for (a = 0; a < na; a++) {
			cells[a].hits = calloc(kc + 1, sizeof(unsigned));
			cells[a].series = calloc(SERIES_POINTS, sizeof(double));
			cells[a].kth = calloc(kc + 1, sizeof(double));
			is_ok &= cells[a].hits != NULL && cells[a].series != NULL &&
				 cells[a].kth != NULL;
		}
		names[p] = th_sim_name(sim);
		known_n[p] = kc;
		for (a = 0; is_ok && known != NULL && first != NULL && a < na; a++) {
			uint64_t seed;

			for (seed = 1; is_ok && seed <= o->seeds; seed++)
				is_ok = eval_run(o, sim, (enum th_search_algo)a, seed, known, kc,
						&cells[a], first) == 0;
		}
		if (is_ok && known != NULL && first != NULL) {
			const struct cell *an = &cells[TH_SEARCH_ANNEAL];
			const struct cell *nm = &cells[TH_SEARCH_ANNEAL_NOMFS];
			double fa = mean_of(an->found_sum, o->seeds), fr, fb;
			unsigned kmfs;

			printf("\nprofile %s (%s): %u documented anomalies\n", names[p],
				o->profile[p], kc);
			printf("%-13s %13s %7s %8s %7s %10s %8s %8s %9s %8s\n", "algorithm",
				"found", "of doc", "unknown", "hidden", "t_find_h", "runs",
				"mfs_runs", "mfs_again", "mfs_held");
			for (a = 0; a < na; a++) {
				const struct cell *c = &cells[a];
				double m = mean_of(c->found_sum, o->seeds);
				double var = mean_of(c->found_sq, o->seeds) - m * m;

				printf("%-13s %6.1f ± %4.1f %6.0f%% %8.1f %7.1f %10.2f %8.0f "
				       "%8.0f %9.0f",
					algo_names[a], m, sqrt(fmax(var, 0)),
					kc != 0 ? 100 * m / kc : 0,
					mean_of(c->unknown_sum, o->seeds),
					mean_of(c->hidden_sum, o->seeds),
					mean_of(c->tfind_sum, c->tfind_n) / 3600,
					mean_of(c->runs_sum, o->seeds),
					mean_of(c->mfs_sum, o->seeds),
					mean_of(c->again_sum, o->seeds));
				if (c->held_n != 0)
					printf(" %7.0f%%\n", 100 * c->held_sum / c->held_n);
				else
					printf(" %8s\n", "-");
				for (t = 0; t < SERIES_POINTS; t++)
					chart[((size_t)p * na + a) * SERIES_POINTS + t] =
						c->series[t] / o->seeds;
			}
			if (kc == 0) {
				/* No ground truth: shares, ratios and targets would be 0/0. */
				printf("no documented anomalies ([known.N]) in %s: "
				       "nothing to score against; every anomaly found "
				       "counts as unknown\n",
					o->profile[p]);
				goto next_profile;
			}
			printf("found per documented anomaly (runs out of %u):\n%-13s", o->seeds,
				"");
			for (k = 0; k < kc; k++)
				printf(" %5s", known[k].id);
			printf("\n");
			for (a = 0; a < na; a++) {
				printf("%-13s", algo_names[a]);
				for (k = 0; k < kc; k++)
					printf(" %5u", cells[a].hits[k]);
				printf("\n");
			}
			fr = mean_of(cells[TH_SEARCH_RANDOM].found_sum, o->seeds);
			fb = mean_of(cells[TH_SEARCH_BO].found_sum, o->seeds);
			printf("targets: anneal finds %.0f%% of documented (>= 90%%); "
			       "anneal/random ",
				100 * fa / kc);
			put_ratio(fa, fr);
			printf(", anneal/bo ");
			put_ratio(fa, fb);
			printf(" (>= 1.6x)\n");
			/* What no search can beat: every documented anomaly found. */
			printf("ceiling: all %u documented would be ", kc);
			put_ratio(kc, fr);
			printf(" random, ");
			put_ratio(kc, fb);
			printf(" bo\n");
			if (fr <= 0 || fb <= 0)
				printf("(-: %s found no documented anomaly, so no ratio to it)\n",
					fr <= 0 && fb <= 0 ? "random and bo"
					: fr <= 0          ? "random"
							   : "bo");
			kmfs = (unsigned)floor(mean_of(nm->found_sum, o->seeds));
			if (kmfs > 0) {
				double with = hours_to(an, kmfs, o->seeds);
				double without = hours_to(nm, kmfs, o->seeds);
				double speedup = without / fmax(with, 1e-9);

				printf("MFS: %u anomalies (what anneal-nomfs reaches) in %.2f h "
				       "with "
				       "MFS, %.2f h without (%.2fx %s; target: 2x faster)\n",
					kmfs, with, without, speedup >= 1 ? speedup : 1 / speedup,
					speedup >= 1 ? "faster" : "slower");
			}
			if (kmfs < kc)
				printf("MFS: anneal-nomfs reaches %.1f, anneal %.1f of %u "
				       "documented in the budget\n",
					mean_of(nm->found_sum, o->seeds), fa, kc);
		}
	next_profile:
		for (a = 0; a < na; a++) {
			free(cells[a].hits);
			free(cells[a].series);
			free(cells[a].kth);
		}
		free(first);
		free(known);
		/* The name is printed above; keep a copy for the chart before freeing. */
		names[p] = strdup(names[p]);
		th_sim_free(sim);
		if (!is_ok || names[p] == NULL) {
			fprintf(stderr, "tracehound search: evaluation of %s failed\n",
				o->profile[p]);
			o->profile_count = p + (names[p] != NULL);
			goto free_names;
		}
	}
	status = 0;
	if (o->chart != NULL) {
		int rc = th_search_write_chart(o->chart, o->profile_count, names, known_n, na,
			algo_names, SERIES_POINTS, o->cfg.budget_s / 3600, chart);

		if (rc < 0) {
			fprintf(stderr, "tracehound search: %s: %s\n", o->chart, strerror(-rc));
			status = 1;
		} else {
			printf("\nchart: %s\n", o->chart);
		}
	}
	if (o->series != NULL) {
		FILE *f = fopen(o->series, "w");

		if (f == NULL) {
			fprintf(stderr, "tracehound search: %s: %s\n", o->series, strerror(errno));
			status = 1;
		} else {
			fprintf(f, "profile,algorithm,hours,mean_found\n");
			for (p = 0; p < o->profile_count; p++)
				for (a = 0; a < na; a++)
					for (t = 0; t < SERIES_POINTS; t++)
						fprintf(f, "%s,%s,%.4f,%.3f\n", names[p],
							algo_names[a],
							o->cfg.budget_s / 3600 * t /
								(SERIES_POINTS - 1),
							chart[((size_t)p * na + a) * SERIES_POINTS +
								t]);
			if (fclose(f) != 0) {
				fprintf(stderr, "tracehound search: %s: write failed\n", o->series);
				status = 1;
			}
		}
	}
free_names:
	for (p = 0; p < o->profile_count; p++)
		free((char *)names[p]);
out:
	free(chart);
	if (is_glob)
		globfree(&g);
	return status;
}

int
th_cmd_search(int argc, char **argv)
{
	struct opts o;
	int rc;

	rc = parse_opts(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (o.is_eval)
		return cmd_eval(&o);
	if (o.replay != NULL)
		return cmd_replay(&o);
	if (o.known_dir != NULL)
		return cmd_known(&o);
	return cmd_one(&o);
}
