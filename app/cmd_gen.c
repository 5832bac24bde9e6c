/* SPDX-License-Identifier: BSD-3-Clause */

/* tracehound gen: write a pcap of synthetic NFSv3 traffic and its ground truth. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "th_cmd.h"
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
		"  -o, --output FILE       pcap to write (required)\n"
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
		"      --no-handshake      TCP flows start mid-stream, without SYN\n"
		"      --ts-resolution NS  round frame and truth times down to NS ns\n"
		"                          (default %u: what DPDK's net_pcap delivers)\n"
		"  -h, --help              this text\n"
		"\n"
		"A one-line summary goes to stderr.\n"
		"Exit status: 0 done, 1 failed, 2 usage error.\n",
		d->udp_share, d->ipv6_share, d->vlan_tags, d->mtu, d->pipeline_share,
		d->rm_frag_share, d->think_us, d->ts_resolution_ns);
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
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int
parse_u64(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max) {
		fprintf(stderr, "tracehound gen: --%s: '%s' is not a number from 0 to %llu\n", opt,
			s, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
parse_share(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0 && v <= 1.0)) {
		fprintf(stderr, "tracehound gen: --%s: '%s' is not a fraction from 0 to 1\n", opt,
			s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int
th_cmd_gen(int argc, char **argv)
{
	const char *out = NULL, *truth = NULL;
	struct th_gen_config cfg, defaults;
	struct th_gen_stats st;
	struct timespec t0, t1;
	char err[256];
	uint64_t v;
	int opt, rc = 0;
	double secs;

	th_gen_config_init(&cfg);
	defaults = cfg;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:t:s:c:S:n:m:h", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 't':
			truth = optarg;
			break;
		case 's':
			rc = parse_u64("seed", optarg, UINT64_MAX, &cfg.seed);
			break;
		case 'c':
			rc = parse_u64("clients", optarg, 65535, &v);
			cfg.clients = (uint32_t)v;
			break;
		case 'S':
			rc = parse_u64("servers", optarg, 255, &v);
			cfg.servers = (uint32_t)v;
			break;
		case 'n':
			rc = parse_u64("ops", optarg, UINT64_MAX, &cfg.ops);
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
			break;
		case OPT_IPV6_SHARE:
			rc = parse_share("ipv6-share", optarg, &cfg.ipv6_share);
			break;
		case OPT_VLAN:
			rc = parse_u64("vlan", optarg, 2, &v);
			cfg.vlan_tags = (uint32_t)v;
			break;
		case OPT_MTU:
			rc = parse_u64("mtu", optarg, 9000, &v);
			cfg.mtu = (uint32_t)v;
			break;
		case OPT_PIPELINE:
			rc = parse_share("pipeline", optarg, &cfg.pipeline_share);
			break;
		case OPT_RM_FRAGS:
			rc = parse_share("rm-frags", optarg, &cfg.rm_frag_share);
			break;
		case OPT_THINK:
			rc = parse_u64("think-us", optarg, 60000000, &v);
			cfg.think_us = (uint32_t)v;
			break;
		case OPT_START:
			rc = parse_u64("start", optarg, 4000000000u, &v);
			cfg.start_ns = v * 1000000000u;
			break;
		case OPT_NO_HANDSHAKE:
			cfg.handshake = false;
			break;
		case OPT_TS_RES:
			rc = parse_u64("ts-resolution", optarg, 1000000000u, &v);
			if (rc == 0 && v == 0) {
				fprintf(stderr, "tracehound gen: --ts-resolution: 1 ns at least\n");
				rc = -EINVAL;
			}
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
	}
	if (optind < argc) {
		fprintf(stderr, "tracehound gen: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (out == NULL) {
		fprintf(stderr, "tracehound gen: no output file: give -o OUT.pcap\n");
		return 2;
	}
	if (th_gen_config_check(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "tracehound gen: %s\n", err);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = th_gen_write(&cfg, out, truth, &st, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != 0) {
		fprintf(stderr, "tracehound gen: %s\n", err);
		return 1;
	}
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr,
		"tracehound gen: %s: %llu packets, %llu RPCs, %llu bytes, %.3f s of traffic, "
		"generated in %.2f s\n",
		out, (unsigned long long)st.packets, (unsigned long long)st.rpcs,
		(unsigned long long)st.bytes,
		st.packets ? (double)(st.last_ns - st.first_ns) / 1e9 : 0.0, secs);
	return 0;
}
