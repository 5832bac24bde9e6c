/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_CMD_H
#define TH_CMD_H

#include <stdbool.h>

/**
 * @file
 * Subcommands of the tracehound binary. Each takes the arguments after its
 * name (argv[0] is the subcommand name) and returns the process exit status:
 * 0 success, 1 runtime failure, 2 usage error.
 */

int th_cmd_capture(int argc, char **argv);
int th_cmd_gen(int argc, char **argv);
int th_cmd_probe(int argc, char **argv);
int th_cmd_export(int argc, char **argv);
/** tracehound search: RDMA anomaly search, replay and evaluation. */
int th_cmd_search(int argc, char **argv);

/**
 * Whether two paths a command writes (or writes and reads) are one file: the
 * same file or pipe under any name (links, /dev/stdout), or, while neither
 * exists, the same name in the same directory however spelt ("x", "./x",
 * "d/../x", a link to x), also in a directory not made yet ("n/../n/x" and
 * "n/x"). /dev/null given twice is not one file.
 */
bool th_cmd_same_file(const char *a, const char *b);

struct option;

/** The long name of option @p val in getopt_long()'s table @p opts, or "?". */
const char *th_cmd_opt_name(const struct option *opts, int val);

#endif /* TH_CMD_H */
