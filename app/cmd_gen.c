/* SPDX-License-Identifier: BSD-3-Clause */

/* tracehound gen: write a pcap of synthetic NFSv3 traffic and its ground truth. */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "th_cmd.h"
#include "th_conf.h"
#include "th_gen.h"

static void
usage(FILE *out, const struct th_gen_config *d)
{
	fprintf(out,
		"usage: tracehound gen -o OUT.pcap [options]\n"
		"\n"
		"Write a pcap of synthetic NFSv3 traffic (with portmap GETPORT and MOUNT MNT at\n"
		"each client's start) between simulated clients and servers, and optionally\n"
		"the ground truth: one line per RPC, in the format tracehound capture prints.\n"
		"The same options and seed always give the same bytes.\n"
		"\n"
		"options:\n"
		"  -o, --output FILE       pcap to write (required; - for standard output)\n"
		"  -t, --truth FILE        ground truth to write, one line per RPC\n"
		"  -s, --seed N            PRNG seed (default %llu)\n"
		"  -c, --clients N         client hosts, 1..65535 (default %u)\n"
		"  -S, --servers N         server hosts, 1..255 (default %u)\n"
		"  -n, --ops N             RPCs to generate, mount sequences included\n"
		"                          (default %llu)\n"
		"  -m, --mix NAME          operation mix (default %s):\n",
		(unsigned long long)d->seed, d->clients, d->servers, (unsigned long long)d->ops,
		th_gen_mix_name(d->mix));
#define TH_GEN_X(e, name, text) fprintf(out, "                            %-6s %s\n", name, text);
	TH_GEN_MIX_LIST(TH_GEN_X)
#undef TH_GEN_X
	fprintf(out,
		"      --udp-share F       fraction of clients on UDP, 0..1 (default %.2f)\n"
		"      --ipv6-share F      fraction of clients on IPv6, 0..1 (default %.2f)\n"
		"      --vlan N            802.1Q tags per frame: 0, 1 or 2 for QinQ (default %u)\n"
		"      --mtu N             IP MTU, 576..9000 (default %u)\n"
		"      --pipeline F        chance a TCP client pipelines a burst of small calls,\n"
		"                          which then share segments (default %.2f)\n"
		"      --rm-frags F        chance a TCP record is sent as several record-marking\n"
		"                          fragments (default %.2f; tshark needs\n"
		"                          -o rpc.defragment:TRUE to decode those)\n"
		"      --think-us N        mean client pause between calls, us (default %u)\n"
		"      --start SECONDS     timestamp of the first frame, s since the epoch\n"
		"                          (at most 2147483647, 2038-01-19: pcap readers\n"
		"                          take later seconds as negative)\n"
		"      --no-handshake      TCP flows start mid-stream, without SYN\n"
		"      --ts-resolution NS  round frame and truth times down to NS ns\n"
		"                          (default %u: what DPDK's net_pcap delivers)\n"
		"  -w, --workload NAME     what the clients do (default %s):\n",
		d->udp_share, d->ipv6_share, d->vlan_tags, d->mtu, d->pipeline_share,
		d->rm_frag_share, d->think_us, d->ts_resolution_ns,
		th_gen_workload_name(d->workload));
#define TH_GEN_X(e, name, text) fprintf(out, "                            %-6s %s\n", name, text);
	TH_GEN_WORKLOAD_LIST(TH_GEN_X)
#undef TH_GEN_X
	fprintf(out,
		"\n"
		"users workload (--ops, --mix, --pipeline and --think-us do not apply; UDP and\n"
		"IPv6 shares default to 0):\n"
		"      --hours H           simulated time; no command starts after it\n"
		"                          (default %g)\n"
		"      --users-per-client N  users at each client, 1..1000 (default %u)\n"
		"      --ls-share F        share of commands that are ls -l (default %.2f)\n"
		"      --user-mix NAME     the other commands (default %s):\n",
		d->hours, d->users_per_client, d->ls_share, th_gen_user_mix_name(d->user_mix));
#define TH_GEN_X(e, name, text) fprintf(out, "                            %-6s %s\n", name, text);
	TH_GEN_USER_MIX_LIST(TH_GEN_X)
#undef TH_GEN_X
	fprintf(out,
		"      --nordirplus        ls -l lists with READDIR, then LOOKUP of each name the\n"
		"                          client cannot verify and GETATTR of expired attributes\n"
		"                          (the Linux mount option; default READDIRPLUS)\n"
		"      --user-think S      mean pause of a user between commands, s (default %g)\n"
		"      --cache-mb N        each client's data cache, MB (default %u)\n"
		"      --acregmin S, --acregmax S, --acdirmin S, --acdirmax S\n"
		"                          attribute cache timeouts as the Linux mount options\n"
		"                          (default %u, %u, %u, %u)\n"
		"      --rsize N, --wsize N  READ and WRITE size in bytes, 4096..1048576 in 4 KiB\n"
		"                          steps (default %u, %u; UDP at most 32768)\n"
		"      --loss F            chance a TCP data segment or a UDP datagram is lost\n"
		"                          before the tap and sent again after a timeout, 0..0.5\n"
		"                          (default %g)\n"
		"      --tap-loss F        chance a frame the hosts exchanged is missing from the\n"
		"                          pcap (SPAN port or capture ring dropping it), 0..0.5;\n"
		"                          nobody resends it, --opens is unchanged and --truth\n"
		"                          marks RPCs hit with tap=call|reply|both (default %g)\n"
		"      --tap-reorder F     chance a TCP frame reaches the pcap after the next one\n"
		"                          of the other direction of its connection (a SPAN port\n"
		"                          merging the two: a reply before its call's end),\n"
		"                          0..0.5; each frame keeps the time it crossed the wire,\n"
		"                          nothing is lost: --truth and --opens are unchanged\n"
		"                          (default %g)\n"
		"      --tap-dup F         chance a frame is in the pcap twice (a SPAN session of\n"
		"                          both ends' ports, or a port's rx and tx), 0..0.5; the\n"
		"                          copy is byte for byte the same, 1 to 50 us later, in\n"
		"                          time order: --truth and --opens are unchanged\n"
		"                          (default %g)\n"
		"      --opens FILE        ground truth of user-level opens: the nfstrace record\n"
		"                          then ' | ' and the class (write, uncached-read,\n"
		"                          cached-read, partial-read, dir-read, dir-write)\n"
		"  -h, --help              this text\n"
		"\n"
		"A one-line summary goes to stderr (users workload: a second line with the\n"
		"commands, opens per class, phantom GETATTRs and LOOKUPs).\n"
		"Exit status: 0 done, 1 failed, 2 usage error.\n",
		d->user_think_s, d->cache_mb, d->acregmin_s, d->acregmax_s, d->acdirmin_s,
		d->acdirmax_s, d->rsize, d->wsize, d->loss, d->tap_loss, d->tap_reorder,
		d->tap_dup);
}

enum {
	OPT_UDP_SHARE = 256,
	OPT_IPV6_SHARE,
	OPT_VLAN,
	OPT_MTU,
	OPT_PIPELINE,
	OPT_RM_FRAGS,
	OPT_THINK,
	OPT_START,
	OPT_NO_HANDSHAKE,
	OPT_TS_RES,
	OPT_HOURS,
	OPT_USERS,
	OPT_LS_SHARE,
	OPT_USER_MIX,
	OPT_NORDIRPLUS,
	OPT_USER_THINK,
	OPT_CACHE_MB,
	OPT_ACREGMIN,
	OPT_ACREGMAX,
	OPT_ACDIRMIN,
	OPT_ACDIRMAX,
	OPT_RSIZE,
	OPT_WSIZE,
	OPT_LOSS,
	OPT_TAP_LOSS,
	OPT_TAP_REORDER,
	OPT_TAP_DUP,
	OPT_OPENS,
};

static const struct option options[] = {
	{"output", required_argument, NULL, 'o'},
	{"truth", required_argument, NULL, 't'},
	{"seed", required_argument, NULL, 's'},
	{"clients", required_argument, NULL, 'c'},
	{"servers", required_argument, NULL, 'S'},
	{"ops", required_argument, NULL, 'n'},
	{"mix", required_argument, NULL, 'm'},
	{"udp-share", required_argument, NULL, OPT_UDP_SHARE},
	{"ipv6-share", required_argument, NULL, OPT_IPV6_SHARE},
	{"vlan", required_argument, NULL, OPT_VLAN},
	{"mtu", required_argument, NULL, OPT_MTU},
	{"pipeline", required_argument, NULL, OPT_PIPELINE},
	{"rm-frags", required_argument, NULL, OPT_RM_FRAGS},
	{"think-us", required_argument, NULL, OPT_THINK},
	{"start", required_argument, NULL, OPT_START},
	{"no-handshake", no_argument, NULL, OPT_NO_HANDSHAKE},
	{"ts-resolution", required_argument, NULL, OPT_TS_RES},
	{"workload", required_argument, NULL, 'w'},
	{"hours", required_argument, NULL, OPT_HOURS},
	{"users-per-client", required_argument, NULL, OPT_USERS},
	{"ls-share", required_argument, NULL, OPT_LS_SHARE},
	{"user-mix", required_argument, NULL, OPT_USER_MIX},
	{"nordirplus", no_argument, NULL, OPT_NORDIRPLUS},
	{"user-think", required_argument, NULL, OPT_USER_THINK},
	{"cache-mb", required_argument, NULL, OPT_CACHE_MB},
	{"acregmin", required_argument, NULL, OPT_ACREGMIN},
	{"acregmax", required_argument, NULL, OPT_ACREGMAX},
	{"acdirmin", required_argument, NULL, OPT_ACDIRMIN},
	{"acdirmax", required_argument, NULL, OPT_ACDIRMAX},
	{"rsize", required_argument, NULL, OPT_RSIZE},
	{"wsize", required_argument, NULL, OPT_WSIZE},
	{"loss", required_argument, NULL, OPT_LOSS},
	{"tap-loss", required_argument, NULL, OPT_TAP_LOSS},
	{"tap-reorder", required_argument, NULL, OPT_TAP_REORDER},
	{"tap-dup", required_argument, NULL, OPT_TAP_DUP},
	{"opens", required_argument, NULL, OPT_OPENS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (th_conf_parse_u64(s, min, max, false, out) != 0) {
		fprintf(stderr, "tracehound gen: --%s: '%s' is not a number from %llu to %llu\n",
			opt, s, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

static int
parse_pos(const char *opt, const char *s, double max, double *out)
{
	double v;

	if (th_conf_parse_double(s, 0, max, &v) != 0 || !(v > 0.0)) {
		fprintf(stderr, "tracehound gen: --%s: '%s' is not a number above 0, at most %g\n",
			opt, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
parse_share(const char *opt, const char *s, double *out)
{
	double v;

	if (th_conf_parse_double(s, 0, 1, &v) != 0) {
		fprintf(stderr, "tracehound gen: --%s: '%s' is not a fraction from 0 to 1\n", opt,
			s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Options of one workload only. */
static const int users_only[] = {OPT_HOURS, OPT_USERS, OPT_LS_SHARE, OPT_USER_MIX, OPT_NORDIRPLUS,
	OPT_USER_THINK, OPT_CACHE_MB, OPT_ACREGMIN, OPT_ACREGMAX, OPT_ACDIRMIN, OPT_ACDIRMAX,
	OPT_RSIZE, OPT_WSIZE, OPT_LOSS, OPT_OPENS};
static const int ops_only[] = {'n', 'm', OPT_PIPELINE, OPT_THINK};

static bool
is_one_of(int opt, const int *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == opt)
			return true;
	return false;
}

int
th_cmd_gen(int argc, char **argv)
{
	const char *out = NULL, *truth = NULL, *opens = NULL;
	bool has_udp = false, has_ipv6 = false;
	struct th_gen_config cfg, defaults;
	struct th_gen_files files;
	struct th_gen_stats st;
	struct timespec t0, t1;
	char err[256];
	uint64_t v;
	int opt, rc = 0, users_opt = 0, ops_opt = 0;
	double secs;

	th_gen_config_init(&cfg);
	defaults = cfg;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:t:s:c:S:n:m:w:h", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 't':
			truth = optarg;
			break;
		case 's':
			rc = parse_u64("seed", optarg, 0, UINT64_MAX, &cfg.seed);
			break;
		case 'c':
			rc = parse_u64("clients", optarg, 1, 65535, &v);
			cfg.clients = (uint32_t)v;
			break;
		case 'S':
			rc = parse_u64("servers", optarg, 1, 255, &v);
			cfg.servers = (uint32_t)v;
			break;
		case 'n':
			rc = parse_u64("ops", optarg, 0, UINT64_MAX, &cfg.ops);
			break;
		case 'm':
			if (th_gen_mix_parse(optarg, &cfg.mix) != 0) {
				fprintf(stderr,
					"tracehound gen: --mix: '%s' is not a mix (meta, data, "
					"mixed)\n",
					optarg);
				rc = -EINVAL;
			}
			break;
		case OPT_UDP_SHARE:
			rc = parse_share("udp-share", optarg, &cfg.udp_share);
			has_udp = true;
			break;
		case OPT_IPV6_SHARE:
			rc = parse_share("ipv6-share", optarg, &cfg.ipv6_share);
			has_ipv6 = true;
			break;
		case 'w':
			if (th_gen_workload_parse(optarg, &cfg.workload) != 0) {
				fprintf(stderr,
					"tracehound gen: --workload: '%s' is not a workload (ops, "
					"users)\n",
					optarg);
				rc = -EINVAL;
			}
			break;
		case OPT_HOURS:
			rc = parse_pos("hours", optarg, 24 * 365, &cfg.hours);
			break;
		case OPT_USERS:
			rc = parse_u64("users-per-client", optarg, 1, 1000, &v);
			cfg.users_per_client = (uint32_t)v;
			break;
		case OPT_LS_SHARE:
			rc = parse_share("ls-share", optarg, &cfg.ls_share);
			break;
		case OPT_USER_MIX:
			if (th_gen_user_mix_parse(optarg, &cfg.user_mix) != 0) {
				fprintf(stderr,
					"tracehound gen: --user-mix: '%s' is not a command mix "
					"(seed, full)\n",
					optarg);
				rc = -EINVAL;
			}
			break;
		case OPT_NORDIRPLUS:
			cfg.is_nordirplus = true;
			break;
		case OPT_USER_THINK:
			rc = parse_pos("user-think", optarg, 86400, &cfg.user_think_s);
			break;
		case OPT_CACHE_MB:
			rc = parse_u64("cache-mb", optarg, 1, 1048576, &v);
			cfg.cache_mb = (uint32_t)v;
			break;
		case OPT_ACREGMIN:
			rc = parse_u64("acregmin", optarg, 0, 3600, &v);
			cfg.acregmin_s = (uint32_t)v;
			break;
		case OPT_ACREGMAX:
			rc = parse_u64("acregmax", optarg, 0, 3600, &v);
			cfg.acregmax_s = (uint32_t)v;
			break;
		case OPT_ACDIRMIN:
			rc = parse_u64("acdirmin", optarg, 0, 3600, &v);
			cfg.acdirmin_s = (uint32_t)v;
			break;
		case OPT_ACDIRMAX:
			rc = parse_u64("acdirmax", optarg, 0, 3600, &v);
			cfg.acdirmax_s = (uint32_t)v;
			break;
		case OPT_RSIZE:
			rc = parse_u64("rsize", optarg, 4096, 1048576, &v);
			cfg.rsize = (uint32_t)v;
			break;
		case OPT_WSIZE:
			rc = parse_u64("wsize", optarg, 4096, 1048576, &v);
			cfg.wsize = (uint32_t)v;
			break;
		case OPT_LOSS:
			rc = parse_share("loss", optarg, &cfg.loss);
			break;
		case OPT_TAP_LOSS:
			rc = parse_share("tap-loss", optarg, &cfg.tap_loss);
			break;
		case OPT_TAP_REORDER:
			rc = parse_share("tap-reorder", optarg, &cfg.tap_reorder);
			break;
		case OPT_TAP_DUP:
			rc = parse_share("tap-dup", optarg, &cfg.tap_dup);
			break;
		case OPT_OPENS:
			opens = optarg;
			break;
		case OPT_VLAN:
			rc = parse_u64("vlan", optarg, 0, 2, &v);
			cfg.vlan_tags = (uint32_t)v;
			break;
		case OPT_MTU:
			rc = parse_u64("mtu", optarg, 576, 9000, &v);
			cfg.mtu = (uint32_t)v;
			break;
		case OPT_PIPELINE:
			rc = parse_share("pipeline", optarg, &cfg.pipeline_share);
			break;
		case OPT_RM_FRAGS:
			rc = parse_share("rm-frags", optarg, &cfg.rm_frag_share);
			break;
		case OPT_THINK:
			rc = parse_u64("think-us", optarg, 0, 60000000, &v);
			cfg.think_us = (uint32_t)v;
			break;
		case OPT_START:
			/* Any time ns fit in; th_gen_config_check() says why past 2038 is not. */
			rc = parse_u64("start", optarg, 0, UINT64_MAX / 1000000000u, &v);
			cfg.start_ns = v * 1000000000u;
			break;
		case OPT_NO_HANDSHAKE:
			cfg.handshake = false;
			break;
		case OPT_TS_RES:
			rc = parse_u64("ts-resolution", optarg, 1, 1000000000u, &v);
			cfg.ts_resolution_ns = (uint32_t)v;
			break;
		case 'h':
			usage(stdout, &defaults);
			return 0;
		default:
			fprintf(stderr, "Try 'tracehound gen --help'.\n");
			return 2;
		}
		if (rc != 0)
			return 2;
		if (users_opt == 0 &&
			is_one_of(opt, users_only, sizeof(users_only) / sizeof(users_only[0])))
			users_opt = opt;
		if (ops_opt == 0 &&
			is_one_of(opt, ops_only, sizeof(ops_only) / sizeof(ops_only[0])))
			ops_opt = opt;
	}
	if (optind < argc) {
		fprintf(stderr, "tracehound gen: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (out == NULL) {
		fprintf(stderr, "tracehound gen: no output file: give -o OUT.pcap\n");
		return 2;
	}
	/* An option of the other workload would be dropped: say so instead. */
	if (cfg.workload == TH_GEN_WORKLOAD_USERS && ops_opt != 0) {
		fprintf(stderr, "tracehound gen: --%s does not apply to --workload users\n",
			th_cmd_opt_name(options, ops_opt));
		return 2;
	}
	if (cfg.workload != TH_GEN_WORKLOAD_USERS && users_opt != 0) {
		fprintf(stderr, "tracehound gen: --%s needs --workload users\n",
			th_cmd_opt_name(options, users_opt));
		return 2;
	}
	if (cfg.workload == TH_GEN_WORKLOAD_USERS) {
		/* The accuracy workload is TCP over IPv4 unless asked otherwise. */
		if (!has_udp)
			cfg.udp_share = 0;
		if (!has_ipv6)
			cfg.ipv6_share = 0;
	}
	{
		/* -o - is standard output: "-" is no file to compare with --truth /dev/stdout. */
		const char *paths[] = {strcmp(out, "-") == 0 ? "/dev/stdout" : out, truth, opens};

		for (size_t i = 0; i < 3; i++)
			for (size_t j = i + 1; j < 3; j++)
				if (paths[i] != NULL && paths[j] != NULL &&
					(th_cmd_same_file(paths[i], paths[j]) ||
						(strcmp(paths[i], "/dev/stdout") == 0 &&
							strcmp(paths[j], "/dev/stdout") == 0))) {
					fprintf(stderr, "tracehound gen: the pcap, --truth and "
							"--opens need a file each (-o - is "
							"standard output)\n");
					return 2;
				}
	}
	if (th_gen_config_check(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "tracehound gen: %s\n", err);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	files.pcap = strcmp(out, "-") == 0 ? "/dev/stdout" : out; /* tcpdump -w - */
	files.truth = truth;
	files.opens = opens;
	rc = th_gen_write_files(&cfg, &files, &st, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != 0) {
		fprintf(stderr, "tracehound gen: %s\n", err);
		return 1;
	}
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr,
		"tracehound gen: %s: %llu packets, %llu RPCs, %llu bytes, %.3f s of traffic, "
		"generated in %.2f s\n",
		strcmp(out, "-") == 0 ? "standard output" : out, (unsigned long long)st.packets,
		(unsigned long long)st.rpcs, (unsigned long long)st.bytes,
		st.packets ? (double)(st.last_ns - st.first_ns) / 1e9 : 0.0, secs);
	if (cfg.tap_loss > 0)
		fprintf(stderr,
			"tracehound gen: frames left out of the capture %llu, RPCs they hit %llu\n",
			(unsigned long long)st.tap_lost, (unsigned long long)st.tap_damaged_rpcs);
	if (cfg.tap_reorder > 0)
		fprintf(stderr,
			"tracehound gen: frames written after the other direction's next frame "
			"%llu\n",
			(unsigned long long)st.tap_reordered);
	if (cfg.tap_dup > 0)
		fprintf(stderr, "tracehound gen: frames the mirror wrote twice %llu\n",
			(unsigned long long)st.tap_copies);
	if (cfg.workload == TH_GEN_WORKLOAD_USERS) {
		unsigned int i;

		fprintf(stderr,
			"tracehound gen: %llu commands, opens:", (unsigned long long)st.commands);
		for (i = 0; i < TH_GEN__OPEN_CLASS_COUNT; i++)
			fprintf(stderr, " %s %llu", th_gen_open_class_name(i),
				(unsigned long long)st.opens[i]);
		fprintf(stderr,
			"; phantom GETATTRs %llu, LOOKUPs %llu; frames lost %llu, UDP calls "
			"resent %llu\n",
			(unsigned long long)st.phantom_getattrs,
			(unsigned long long)st.phantom_lookups, (unsigned long long)st.lost_frames,
			(unsigned long long)st.udp_retrans);
	}
	return 0;
}
