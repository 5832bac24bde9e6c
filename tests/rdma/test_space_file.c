/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Workload files and the one-line form: a reported anomaly's workload is
 * written, read back to the same point, and every mistake in a hand-edited
 * file is reported at its file:line.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "th_conf.h"
#include "th_rng.h"
#include "th_space.h"

static const char good_text[] = "# replay of anomaly 3\n"
				"[workload]\n"
				"mem = remote\n"
				"qp_type = UC\n"
				"opcode = WRITE\n"
				"dir = bidi\n"
				"mtu = 2048\n"
				"wqe_batch = 64\n"
				"sge = 2\n"
				"wq_depth = 256\n"
				"qp_count = 512\n"
				"mr_count = 12288\n"
				"mr_size = 65536\n"
				"msg = 512, 65536,1024\n";

static int
parse(const char *text, struct th_wl *wl, char *err, size_t err_size)
{
	struct th_conf *c = th_conf_parse(text, "w.ini", err, err_size);
	int r;

	if (c == NULL)
		return -EINVAL;
	r = th_wl_from_conf(c, "workload", wl, err, err_size);
	th_conf_free(c);
	return r;
}

/* good_text with line @p line (1-based) replaced by @p repl ("" drops it). */
static int
parse_edited(unsigned line, const char *repl, struct th_wl *wl, char *err, size_t err_size)
{
	char text[1024];
	const char *s = good_text;
	size_t off = 0;
	unsigned n = 1;

	while (*s != '\0') {
		const char *nl = strchr(s, '\n');
		size_t len = (size_t)(nl - s) + 1;

		if (n == line)
			off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s", repl,
				*repl ? "\n" : "");
		else
			off += (size_t)snprintf(text + off, sizeof(text) - off, "%.*s",
				(int)len, s);
		s += len;
		n++;
	}
	return parse(text, wl, err, err_size);
}

static void
test_good_file(void **state)
{
	struct th_wl wl;
	char err[256] = "", line[512];

	(void)state;
	assert_int_equal(parse(good_text, &wl, err, sizeof(err)), 0);
	assert_int_equal(wl.mem, TH_MEM_REMOTE);
	assert_int_equal(wl.qp_type, TH_QP_UC);
	assert_int_equal(wl.opcode, TH_OPC_WRITE);
	assert_int_equal(wl.dir, TH_DIR_BIDI);
	assert_int_equal(wl.mtu, 2048);
	assert_int_equal(wl.wqe_batch, 64);
	assert_int_equal(wl.sge, 2);
	assert_int_equal(wl.wq_depth, 256);
	assert_int_equal(wl.qp_count, 512);
	assert_int_equal(wl.mr_count, 12288);
	assert_int_equal(wl.mr_size, 65536);
	assert_int_equal(wl.n_msgs, 3);
	assert_int_equal(wl.msg[0], 512);
	assert_int_equal(wl.msg[1], 65536);
	assert_int_equal(wl.msg[2], 1024);
	th_wl_format(&wl, line, sizeof(line));
	assert_string_equal(line, "mem=remote qp_type=UC opcode=WRITE dir=bidi mtu=2048 "
				  "wqe_batch=64 sge=2 wq_depth=256 qp_count=512 mr_count=12288 "
				  "mr_size=65536 msg=512,65536,1024");
}

static void
test_format_truncates_safely(void **state)
{
	struct th_wl wl;
	char small[16];
	int need;

	(void)state;
	th_wl_default(&wl);
	need = th_wl_format(&wl, small, sizeof(small));
	assert_true(need > (int)sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(th_wl_format(&wl, NULL, 0), need);
}

static void
test_write_read_round_trip(void **state)
{
	char path[] = "/tmp/th_wl_XXXXXX", err[256] = "";
	struct th_limits lim;
	struct th_rng rng;
	struct th_wl wl, back;
	unsigned i;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	th_limits_default(&lim);
	th_rng_seed(&rng, 99);
	for (i = 0; i < 300; i++) {
		th_wl_random(&wl, &lim, &rng);
		assert_int_equal(th_wl_write(&wl, path), 0);
		memset(&back, 0xa5, sizeof(back));
		if (th_wl_load(path, NULL, &back, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		assert_true(th_wl_equal(&wl, &back));
	}
	unlink(path);
	assert_int_equal(th_wl_write(&wl, "/nonexistent-dir/x.ini"), -ENOENT);
	assert_int_equal(
		th_wl_load("/nonexistent-dir/x.ini", NULL, &back, err, sizeof(err)), -ENOENT);
}

/* The one-line form reads back to the same point; a bad word is named by its position. */
static void
test_line_round_trip(void **state)
{
	static const struct {
		const char *line;
		const char *expect; /* in the message */
	} bad[] = {
		{"mem=local qp_type=RC opcode=WRITE dir=both", "word 4: dir = 'both': expected"},
		{"mem=local  qp_type=RC junk", "word 3: expected 'key = value', got 'junk'"},
		{"mem=local qp_type=RC opcode=WRITE dir=bidi mtu=1500", "word 5: mtu = 1500"},
		{"mem=local qp_type=RC opcode=WRITE", "missing 'dir='"},
		{"", "missing 'mem='"},
	};
	static const char spaced[] = " mem=gpu\tqp_type=UD opcode=SEND  dir=loopback mtu=2048 "
				     "wqe_batch=4 sge=1 wq_depth=64 qp_count=2 mr_count=3 "
				     "mr_size=4096 msg=512,2048 ";
	char line[512], err[256] = "";
	struct th_limits lim;
	struct th_rng rng;
	struct th_wl wl, back;
	unsigned i;

	(void)state;
	th_limits_default(&lim);
	th_rng_seed(&rng, 7);
	for (i = 0; i < 300; i++) {
		th_wl_random(&wl, &lim, &rng);
		assert_true(th_wl_format(&wl, line, sizeof(line)) < (int)sizeof(line));
		memset(&back, 0xa5, sizeof(back));
		if (th_wl_parse(line, &back, err, sizeof(err)) != 0)
			fail_msg("%s: %s", line, err);
		assert_true(th_wl_equal(&wl, &back));
	}
	/* Tabs and runs of blanks separate words too; an unknown word is a typo. */
	assert_int_equal(th_wl_parse(spaced, &wl, err, sizeof(err)), 0);
	th_wl_format(&wl, line, sizeof(line));
	assert_string_equal(line, "mem=gpu qp_type=UD opcode=SEND dir=loopback mtu=2048 "
				  "wqe_batch=4 sge=1 wq_depth=64 qp_count=2 mr_count=3 "
				  "mr_size=4096 msg=512,2048");
	strcat(line, " colour=blue");
	back = wl;
	assert_int_equal(th_wl_parse(line, &back, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "word 13: unknown key 'colour'"));
	assert_true(th_wl_equal(&wl, &back));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (th_wl_parse(bad[i].line, &back, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad[i].line);
		if (strstr(err, bad[i].expect) == NULL)
			fail_msg("'%s': '%s' lacks '%s'", bad[i].line, err, bad[i].expect);
	}
}

static void
test_unknown_key_in_file(void **state)
{
	char path[] = "/tmp/th_wl_XXXXXX", err[256] = "";
	struct th_wl wl;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "%sqp_cuont = 4\n", good_text);
	fclose(f);
	assert_int_equal(th_wl_load(path, NULL, &wl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":15: unknown key"));
	assert_non_null(strstr(err, "qp_cuont"));
	unlink(path);
}

/*
 * A workload file is its [workload] section: any other section is named at
 * its header, with keys or without, where it used to pass unseen when empty.
 */
static void
test_other_section_in_file(void **state)
{
	static const char *const extra[] = {
		"[known.abc]\n", "\n[notes]\n# why\n", "[extra]\nmem = gpu\n"};
	char path[] = "/tmp/th_wl_XXXXXX", err[256] = "";
	struct th_wl wl;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		int fd = mkstemp(path);
		FILE *f;

		assert_true(fd >= 0);
		f = fdopen(fd, "w");
		assert_non_null(f);
		fprintf(f, "%s%s", good_text, extra[i]);
		fclose(f);
		err[0] = '\0';
		assert_int_equal(th_wl_load(path, NULL, &wl, err, sizeof(err)), -EINVAL);
		if (strstr(err, i == 1 ? ":16: unknown section [notes]"
				       : ":15: unknown section [") == NULL)
			fail_msg("'%s' does not name the section's line", err);
		assert_non_null(strstr(err, path));
		unlink(path);
		strcpy(path, "/tmp/th_wl_XXXXXX");
	}
}

static void
test_malformed_files(void **state)
{
	static const struct {
		unsigned line;
		const char *repl;
		const char *expect; /* in the message, after "w.ini" */
	} cases[] = {
		{3, "mem = numa7", "w.ini:3: mem = 'numa7': expected local, remote or gpu"},
		{4, "qp_type = XRC", "w.ini:4: qp_type"},
		{5, "opcode = ATOMIC", "w.ini:5: opcode"},
		{6, "dir = both", "w.ini:6: dir"},
		{7, "mtu = 1500", "w.ini:7: mtu"},
		{7, "mtu = big", "w.ini:7: workload.mtu"},
		{8, "wqe_batch = 0", "w.ini:8: workload.wqe_batch"},
		{8, "wqe_batch = 70000", "w.ini:8: workload.wqe_batch"},
		{9, "sge = -1", "w.ini:9: workload.sge"},
		{10, "wq_depth = 32", "w.ini:10: wq_depth=32 is smaller than wqe_batch=64"},
		{11, "qp_count = 5000000000", "w.ini:11: workload.qp_count"},
		{11, "qp_count = +5",
			"w.ini:11: workload.qp_count = '+5': expected a whole number"},
		{11, "qp_count = 0x+5", "w.ini:11: workload.qp_count"},
		{12, "mr_count = 0x", "w.ini:12: workload.mr_count"},
		{13, "mr_size = 1e6", "w.ini:13: workload.mr_size"},
		{14, "msg = ", "w.ini:14: msg"},
		{14, "msg = 1024,,2048", "w.ini:14: msg"},
		{14, "msg = 1024,", "w.ini:14: msg"},
		{14, "msg = 0", "w.ini:14: msg"},
		{14, "msg = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "w.ini:14: msg"},
		{14, "msg = 4294967296", "w.ini:14: msg"},
		{14, "msg = 1 2", "w.ini:14: msg"},
		{14, "msg = 1", "w.ini:14: msg[0]=1 is smaller than sge=2"},
		/* Combinations no device runs, at the line of the feature at fault. */
		{4, "qp_type = UD", "w.ini:5: opcode=WRITE: UD QPs carry SEND only"},
		{5, "opcode = READ", "w.ini:5: opcode=READ: READ needs an RC QP"},
		{3, "", "w.ini:2: [workload] needs 'mem'"},
		{14, "", "w.ini:2: [workload] needs 'msg'"},
		{2, "[workload2]", "w.ini: no [workload] section (line 3 is in [workload2])"},
		/* A second block is refused at its header, whether or not its keys clash. */
		{8, "wqe_batch = 64\n[workload]", "w.ini:9: [workload] already begun on line 2"},
		{14, "msg = 512\n[workload]\nmsg = 1024",
			"w.ini:15: [workload] already begun on line 2"},
		{9, "sgee = 2", "w.ini:9: unknown key 'workload.sgee' ([workload] needs 'sge')"},
		{9, "sge 2", "w.ini:9: expected 'key = value'"},
	};
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct th_wl wl;
		char err[256] = "";

		if (parse_edited(cases[i].line, cases[i].repl, &wl, err, sizeof(err)) != -EINVAL)
			fail_msg("case %u (%s) accepted", i, cases[i].repl);
		if (strstr(err, cases[i].expect) == NULL)
			fail_msg("case %u: '%s' lacks '%s'", i, err, cases[i].expect);
	}
}

static void
test_ud_message_over_mtu(void **state)
{
	static const char text[] = "[workload]\nmem=local\nqp_type=UD\nopcode=SEND\ndir=oneway\n"
				   "mtu=1024\nwqe_batch=1\nsge=1\nwq_depth=1\nqp_count=1\n"
				   "mr_count=1\nmr_size=4096\nmsg=1024,2048\n";
	struct th_wl wl;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse(text, &wl, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "w.ini:13: msg[1]=2048: a UD message must fit in one MTU"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_format_truncates_safely),
		cmocka_unit_test(test_write_read_round_trip),
		cmocka_unit_test(test_line_round_trip),
		cmocka_unit_test(test_unknown_key_in_file),
		cmocka_unit_test(test_other_section_in_file),
		cmocka_unit_test(test_malformed_files),
		cmocka_unit_test(test_ud_message_over_mtu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
