/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Malformed profiles are reported with file:line and never crash: bad
 * numbers, unknown keys and sections, bad MFS text, bad triggers, missing
 * sections and keys, quirks without an effect, broken hysteresis.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_sim.h"

static char *
read_profile(const char *name)
{
	char path[512];
	FILE *f;
	char *buf = calloc(1, 1 << 16);
	size_t n;

	snprintf(path, sizeof(path), "%s/config/rdma/%s.ini", TH_SOURCE_ROOT, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* F.ini with the first line starting @p from replaced by @p to. */
static char *
edit(const char *from, const char *to)
{
	char *text = read_profile("F"), *out = calloc(1, 1 << 17), *at;
	size_t pre;

	assert_non_null(out);
	at = strstr(text, from);
	assert_non_null(at);
	pre = (size_t)(at - text);
	memcpy(out, text, pre);
	strcpy(out + pre, to);
	strcat(out, strchr(at, '\n'));
	free(text);
	return out;
}

/* Load @p text; it must fail with "prof.ini:<line>: " and @p needle in the message. */
static void
expect_error(const char *text, unsigned line, const char *needle)
{
	char err[512], want[32];
	struct th_sim *s;

	err[0] = '\0';
	s = th_sim_parse(text, "prof.ini", 1, err, sizeof(err));
	if (s != NULL)
		fail_msg("loaded; wanted an error about '%s'", needle);
	if (line > 0) {
		snprintf(want, sizeof(want), "prof.ini:%u: ", line);
		if (strncmp(err, want, strlen(want)) != 0)
			fail_msg("'%s' does not start with '%s'", err, want);
	} else if (strncmp(err, "prof.ini", 8) != 0) {
		fail_msg("'%s' does not name the file", err);
	}
	if (strstr(err, needle) == NULL)
		fail_msg("'%s' does not mention '%s'", err, needle);
}

/* Load @p text; it must load. */
static void
expect_no_error(const char *text)
{
	char err[512] = "";
	struct th_sim *s = th_sim_parse(text, "prof.ini", 1, err, sizeof(err));

	if (s == NULL)
		fail_msg("refused: %s", err);
	th_sim_free(s);
}

/* The line number of the first line of F.ini that starts with @p prefix. */
static unsigned
line_of(const char *prefix)
{
	char *text = read_profile("F"), *l = text;
	unsigned n = 1;

	while (l != NULL) {
		if (strncmp(l, prefix, strlen(prefix)) == 0)
			break;
		l = strchr(l, '\n');
		if (l != NULL)
			l++;
		n++;
	}
	free(text);
	assert_non_null(l);
	return n;
}

static void
test_shipped_load(void **state)
{
	char *text = read_profile("H");
	char err[256];
	struct th_sim *s = th_sim_parse(text, "H.ini", 1, err, sizeof(err));
	struct th_backend b;

	(void)state;
	assert_non_null(s);
	assert_string_equal(th_sim_name(s), "H");
	th_sim_backend(s, &b);
	assert_string_equal(b.name, "sim:H");
	assert_false(b.limits->has_gpu);
	assert_int_equal(b.limits->max_qp, 20000);
	assert_null(th_sim_known_get(s, th_sim_known_count(s)));
	assert_string_equal(th_sim_known_get(s, 0)->id, "H#14");
	th_sim_free(s);
	free(text);
}

static void
test_bad_number(void **state)
{
	char *t = edit("gbps = 200", "gbps = fast");

	(void)state;
	expect_error(t, line_of("gbps = 200"), "link.gbps");
	free(t);
	t = edit("qpc_entries = 420", "qpc_entries = -5");
	expect_error(t, line_of("qpc_entries"), "qpc_entries");
	free(t);
	t = edit("max_qp = 20000", "max_qp = 1e99");
	expect_error(t, line_of("max_qp"), "max_qp");
	free(t);
	t = edit("has_gpu = yes", "has_gpu = maybe");
	expect_error(t, line_of("has_gpu"), "yes or no");
	free(t);
	/* Numbers are written without a plus sign, decimal (whole numbers may be hex). */
	t = edit("max_qp = 20000", "max_qp = +20000");
	expect_error(t, line_of("max_qp"), "limits.max_qp = '+20000': expected a whole number");
	free(t);
	t = edit("gbps = 200", "gbps = +200");
	expect_error(t, line_of("gbps = 200"), "link.gbps = '+200': expected a number");
	free(t);
	t = edit("gbps = 200", "gbps = 0xc8");
	expect_error(t, line_of("gbps = 200"), "link.gbps = '0xc8': expected a number");
	free(t);
	t = edit("max_qp = 20000", "max_qp = 0x4e20");
	expect_no_error(t);
	free(t);
}

static void
test_unknown_key(void **state)
{
	char *t = edit("gbps = 200", "gbsp = 200");

	(void)state;
	/* The typo is reported where it is, the missing key where its section is not. */
	expect_error(t, 0, "gbps");
	free(t);
	t = edit("rwqe_sync = 2", "rwqe_sync = 2\nrwqe_snyc = 3");
	expect_error(t, line_of("rwqe_sync = 2") + 1, "unknown key 'quirk.rc_send_rwqe_1k.rwqe_snyc'");
	free(t);
	t = edit("[cost]", "[cots]");
	expect_error(t, 0, "cost");
	free(t);
	/* A section no profile has is named at its header, with keys or without. */
	t = edit("[noise]", "[extra]\nfoo = 1\n[noise]");
	expect_error(t, line_of("[noise]"), "unknown section [extra]");
	free(t);
	t = edit("[noise]", "[extra]\n[noise]");
	expect_error(t, line_of("[noise]"), "unknown section [extra]");
	free(t);
	/* An empty quirk is a quirk without its keys, said at its header. */
	t = edit("[noise]", "[quirk.empty]\n[noise]");
	expect_error(t, line_of("[noise]"), "[quirk.empty] needs 'when'");
	free(t);
	/* A count with a fraction is not cut to its whole part. */
	t = edit("gen = 4", "gen = 3.5");
	expect_error(t, line_of("gen = 4"), "pcie.gen = 3.5: expected a whole number");
	free(t);
}

static void
test_bad_mfs(void **state)
{
	char *t = edit("when = qp_type=RC opcode=SEND mtu=1024 wqe_batch>=64",
		"when = qp_type=XX opcode=SEND mtu=1024 wqe_batch>=64");

	(void)state;
	expect_error(t, line_of("when = qp_type=RC opcode=SEND mtu=1024 wqe_batch>=64"), "bad MFS text");
	free(t);
	t = edit("conditions = pause: dir=loopback", "conditions = dir=loopback");
	expect_error(t, line_of("conditions = pause: dir=loopback"), "conditions");
	free(t);
	t = edit("conditions = pause: dir=loopback", "conditions = pause: colour=blue");
	expect_error(t, line_of("conditions = pause: dir=loopback"), "bad MFS text");
	free(t);
	/* A quirk with no conditions would fire on every workload. */
	t = edit("when = qp_type=RC opcode=SEND mtu=1024 wqe_batch>=64", "when =");
	expect_error(t, line_of("when = qp_type=RC opcode=SEND mtu=1024 wqe_batch>=64"),
		"no conditions");
	free(t);
}

static void
test_bad_trigger(void **state)
{
	const char *orig = "trigger = mem=local qp_type=RC opcode=WRITE dir=loopback";
	unsigned line = line_of(orig);
	char *t = edit(orig, "trigger = mem=local qp_type=RC opcode=WRITE dir=sideways");

	(void)state;
	expect_error(t, line, "trigger");
	free(t);
	/* A trigger outside its own conditions documents nothing. */
	t = edit(orig, "trigger = mem=local qp_type=RC opcode=WRITE dir=oneway mtu=4096 "
		       "wqe_batch=1 sge=1 wq_depth=128 qp_count=1 mr_count=1 mr_size=1048576 "
		       "msg=65536");
	expect_error(t, line, "does not meet its own conditions");
	free(t);
	/* Over the device's limits. */
	t = edit(orig, "trigger = mem=local qp_type=RC opcode=WRITE dir=loopback mtu=4096 "
		       "wqe_batch=1 sge=1 wq_depth=128 qp_count=99999 mr_count=1 "
		       "mr_size=1048576 msg=65536");
	expect_error(t, line, "trigger");
	free(t);
	t = edit(orig, "trigger = mem=local junk");
	expect_error(t, line, "trigger");
	free(t);
}

static void
test_missing(void **state)
{
	char *t = edit("[link]", "[lank]");

	(void)state;
	expect_error(t, 0, "no [link] section (line ");
	free(t);
	t = edit("note = quirk: multi-packet SENDs at 1K MTU", "# no note");
	expect_error(t, 0, "needs 'note'");
	free(t);
	t = edit("rwqe_sync = 2", "# no effect");
	expect_error(t, line_of("when = qp_type=RC opcode=SEND mtu=1024 wqe_batch>=64"), "no effect");
	free(t);
	expect_error("", 0, "no [profile] section");
	expect_error("[profile]\nname = X\n", 0, "no [link] section");
}

/* A section written twice is refused at its second header: no block adds to another. */
static void
test_repeated_section(void **state)
{
	char *t = edit("[noise]", "[link]\nfoo = 1\n[noise]");
	char want[64];

	(void)state;
	snprintf(want, sizeof(want), "[link] already begun on line %u", line_of("[link]"));
	expect_error(t, line_of("[noise]"), want);
	free(t);
	t = edit("[known.2]", "[known.1]");
	snprintf(want, sizeof(want), "[known.1] already begun on line %u", line_of("[known.1]"));
	expect_error(t, line_of("[known.2]"), want);
	free(t);
}

/*
 * [known.N] is the paper's anomaly N: its id F#N names it in results, in
 * --known's file names and in tests. Anything but a number is refused at the
 * header, where it used to become an id like F#abc; a quirk's NAME is free.
 */
static void
test_known_names(void **state)
{
	static const char *const bad[] = {
		"[known.abc]",
		"[known.03]",
		"[known.0]",
		"[known.]",
		"[known.1a]",
		"[known.-1]",
		"[known.+1]",
		"[known. 1]",
		"[known.1 2]",
		"[known.12345678901234]",
	};
	unsigned line = line_of("[known.2]");
	char *t;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = edit("[known.2]", bad[i]);
		expect_error(t, line, "expected [known.N], N the anomaly's number (1, 2, ...)");
		free(t);
	}
	/* Without keys too: the name is what is wrong. */
	t = edit("[noise]", "[known.abc]\n[noise]");
	expect_error(t, line_of("[noise]"), "[known.abc]: expected [known.N]");
	free(t);
	/* The longest number that fits F's ids, and a number no row of the paper has. */
	t = edit("[known.2]", "[known.1234567890123]");
	expect_no_error(t);
	free(t);
	t = edit("[known.2]", "[known.99]");
	expect_no_error(t);
	free(t);
	t = edit("[quirk.ud_sq_refetch]", "[quirk.any name-at_all.7]");
	expect_no_error(t);
	free(t);
	t = edit("[quirk.ud_sq_refetch]", "[quirk.]");
	expect_error(t, line_of("[quirk.ud_sq_refetch]"), "quirk names are 1 to");
	free(t);
}

static void
test_hysteresis(void **state)
{
	char *t = edit("xon_kb = 256", "xon_kb = 400");

	(void)state;
	/* Each refusal is at the key that breaks the order, and names where the other is. */
	expect_error(t, line_of("xon_kb"), "nic.xon_kb = 400 is not below nic.xoff_kb = 384");
	free(t);
	t = edit("rxbuf_kb = 512", "rxbuf_kb = 1");
	expect_error(t, line_of("rxbuf_kb"), "nic.rxbuf_kb = 1 is below nic.xoff_kb = 384");
	free(t);
}

static void
test_load_path(void **state)
{
	char err[256];

	(void)state;
	assert_null(th_sim_load("/nonexistent/F.ini", 1, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/F.ini"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_load),
		cmocka_unit_test(test_bad_number),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_bad_mfs),
		cmocka_unit_test(test_bad_trigger),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_repeated_section),
		cmocka_unit_test(test_known_names),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_load_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
