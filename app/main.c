/* SPDX-License-Identifier: BSD-3-Clause */

/* tracehound: one binary, git-style subcommands. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "th_cmd.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

#ifndef TH_HAVE_CAPTURE
/* This build has no DPDK: say so rather than "not a command". */
static int
no_capture(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "tracehound: capture is not in this build: it was built without DPDK "
			"(-Dcapture=disabled, or libdpdk-dev missing)\n");
	return 2;
}
#define th_cmd_capture no_capture
#define CAPTURE_SUMMARY "(not in this build: it was built without DPDK)"
#else
#define CAPTURE_SUMMARY "decode NFS/RPC traffic from DPDK ports into a per-RPC log"
#endif

static const struct command commands[] = {
	{"capture", th_cmd_capture, CAPTURE_SUMMARY},
	{"gen", th_cmd_gen, "write a pcap of synthetic NFS traffic and its ground truth"},
	{"probe", th_cmd_probe, "measure disk random-read latency at queue depth 1"},
	{"export", th_cmd_export, "merge, filter, anonymise trace segments: text, CSV, JSON"},
	{"search", th_cmd_search, "find RDMA workloads that cause pauses or low throughput"},
};

/* Drop the last component of absolute path @p s ("/a/b" -> "/a", "/a" -> "/"). */
static void
pop_name(char *s)
{
	char *slash = strrchr(s, '/');

	if (slash != NULL)
		slash[slash == s ? 1 : 0] = '\0';
}

/*
 * Where a file that does not exist yet would be made, into @p out: the real
 * path of its deepest existing ancestor, then the rest of @p path with "."
 * and ".." worked out by name. Below that ancestor nothing exists, so no link
 * can send a ".." elsewhere: "d/../d/x", "./d/x" and "d/x" are one file while
 * d is missing, as they will be once d is made. false when a path is too long
 * or the working directory cannot be resolved.
 */
static bool
would_be(const char *path, char *out, size_t size)
{
	char prefix[PATH_MAX], real[PATH_MAX];
	size_t n = strlen(path), used;
	const char *p;

	if (n >= sizeof(prefix))
		return false;
	memcpy(prefix, path, n + 1);
	/* The longest prefix that ends at a '/' and exists; "." or "/" at the least. */
	while (realpath(prefix, real) == NULL) {
		char *slash = strrchr(prefix, '/');

		if (slash == NULL || slash == prefix) {
			if (realpath(slash == NULL ? "." : "/", real) == NULL)
				return false;
			prefix[slash == NULL ? 0 : 1] = '\0';
			break;
		}
		*slash = '\0';
	}
	used = strlen(real);
	for (p = path + strlen(prefix); *p != '\0';) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			pop_name(real);
			used = strlen(real);
		} else if (len > 0 && !(len == 1 && p[0] == '.')) {
			bool is_root = used == 1;

			if (used + !is_root + len >= sizeof(real))
				return false;
			if (!is_root)
				real[used++] = '/';
			memcpy(real + used, p, len);
			used += len;
			real[used] = '\0';
		}
		p += len + (p[len] == '/');
	}
	return snprintf(out, size, "%s", real) < (int)size;
}

/*
 * A symbolic link whose target does not exist yet, followed to that target
 * (relative targets from the link's directory) into @p out: writing the link
 * makes it. @p path itself when it is not such a link.
 */
static void
follow_dangling(const char *path, char *out, size_t size)
{
	char target[PATH_MAX], next[PATH_MAX];
	struct stat st;
	ssize_t n;

	snprintf(out, size, "%s", path);
	for (int hops = 0; hops < 8 && lstat(out, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
		const char *slash = strrchr(out, '/');

		n = readlink(out, target, sizeof(target) - 1);
		if (n <= 0)
			return;
		target[n] = '\0';
		if (target[0] == '/' || slash == NULL)
			n = snprintf(next, sizeof(next), "%s", target);
		else
			n = snprintf(
				next, sizeof(next), "%.*s/%s", (int)(slash - out), out, target);
		if (n < 0 || (size_t)n >= sizeof(next) || (size_t)n >= size)
			return;
		memcpy(out, next, (size_t)n + 1);
	}
}

const char *
th_cmd_opt_name(const struct option *opts, int val)
{
	for (; opts->name != NULL; opts++)
		if (opts->val == val)
			return opts->name;
	return "?";
}

bool
th_cmd_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
	char la[PATH_MAX], lb[PATH_MAX], wa[PATH_MAX], wb[PATH_MAX];

	/* One file or pipe; a character device (/dev/null, a terminal) is no clash. */
	if (has_a && has_b)
		return !S_ISCHR(sa.st_mode) && !S_ISDIR(sa.st_mode) && sa.st_dev == sb.st_dev &&
		       sa.st_ino == sb.st_ino;
	if (has_a || has_b)
		return false;
	/* Neither exists yet: "x", "./x", "d/../x" and a link to x would all make one file. */
	follow_dangling(a, la, sizeof(la));
	follow_dangling(b, lb, sizeof(lb));
	if (would_be(la, wa, sizeof(wa)) && would_be(lb, wb, sizeof(wb)))
		return strcmp(wa, wb) == 0;
	return strcmp(la, lb) == 0;
}

static void
usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: tracehound <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'tracehound <command> --help' describes a command.\n");
}

int
main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
		strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("tracehound %s\n", TH_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		int status;

		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		status = commands[i].run(argc - 1, argv + 1);
		/* What went to standard output must have arrived (a full disk, a closed pipe);
		 * when only the error flag says so, the write that set it is long gone: EIO. */
		errno = 0;
		if ((fflush(stdout) != 0 || ferror(stdout)) && status == 0) {
			fprintf(stderr, "tracehound %s: standard output: %s\n", argv[1],
				strerror(errno != 0 ? errno : EIO));
			status = 1;
		}
		return status;
	}
	fprintf(stderr, "tracehound: '%s' is not a command\n", argv[1]);
	usage(stderr);
	return 2;
}
