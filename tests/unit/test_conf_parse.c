/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * INI configuration (lib/conf): what a user writes, and the messages they
 * get back when it is wrong (file:line and what to fix).
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

static void
test_sections_and_comments(void **state)
{
	static const char text[] = "# tracehound demo\n"
				   "top = level\n"
				   "\n"
				   "[capture]\n"
				   "; a comment\n"
				   "   # an indented comment\n"
				   "port = 0\n"
				   "lcores = 1,2\n"
				   "[output]\n"
				   "file = /tmp/out.txt\n"
				   "port = 7\n";
	char err[256] = "";
	struct th_conf *c = th_conf_parse(text, "demo.ini", err, sizeof(err));

	(void)state;
	assert_non_null(c);
	assert_string_equal(th_conf_get(c, "", "top"), "level");
	assert_string_equal(th_conf_get(c, "capture", "port"), "0");
	assert_string_equal(th_conf_get(c, "capture", "lcores"), "1,2");
	assert_string_equal(th_conf_get(c, "output", "file"), "/tmp/out.txt");
	assert_string_equal(th_conf_get(c, "output", "port"), "7");
	assert_null(th_conf_get(c, "capture", "file"));
	assert_null(th_conf_get(c, "nosuch", "port"));
	assert_null(th_conf_get(c, "capture", "a comment"));
	assert_null(th_conf_get(NULL, "capture", "port"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), 0);
	th_conf_free(c);
}

static void
test_whitespace_trimmed(void **state)
{
	static const char text[] = "  [  capture\t]  \r\n"
				   " \t port\t =\t 2049 \t\r\n"
				   "name =   two words here  \n"
				   "empty =\n"
				   "eq = a=b\n";
	char err[256] = "";
	struct th_conf *c = th_conf_parse(text, "ws.ini", err, sizeof(err));

	(void)state;
	assert_non_null(c);
	assert_string_equal(th_conf_get(c, "capture", "port"), "2049");
	assert_string_equal(th_conf_get(c, "capture", "name"), "two words here");
	assert_string_equal(th_conf_get(c, "capture", "empty"), "");
	assert_string_equal(th_conf_get(c, "capture", "eq"), "a=b");
	th_conf_free(c);
}

static void
test_duplicate_rejected(void **state)
{
	static const char text[] = "[capture]\n"
				   "port = 1\n"
				   "\n"
				   "[output]\n"
				   "port = 2\n"
				   "  port = 3\n";
	char err[256] = "";

	(void)state;
	errno = 0;
	assert_null(th_conf_parse(text, "dup.ini", err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "dup.ini:6: output.port already set on line 5");
	assert_null(th_conf_parse("a = 1\na = 2\n", "dup.ini", err, sizeof(err)));
	assert_string_equal(err, "dup.ini:2: a already set on line 1");
}

/*
 * A section is one block: a second header of it (a pasted block, a second
 * [workload]) would add keys to the first out of its sight, so it is refused
 * at the second header, naming the first, whether or not keys clash.
 */
static void
test_section_repeated(void **state)
{
	static const char text[] = "# two blocks\n"
				   "[workload]\n"
				   "mem = local\n"
				   "[other]\n"
				   "x = 1\n"
				   "[workload]\n"
				   "mtu = 1024\n";
	char err[256] = "";
	struct th_conf *c;

	(void)state;
	errno = 0;
	assert_null(th_conf_parse(text, "w.ini", err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "w.ini:6: [workload] already begun on line 2");
	/* The same key twice is caught at the header already. */
	assert_null(th_conf_parse(
		"[capture]\nport = 1\n[capture]\nport = 3\n", "dup.ini", err, sizeof(err)));
	assert_string_equal(err, "dup.ini:3: [capture] already begun on line 1");
	/* Headers without keys, and names spelled with other blanks, are the same header. */
	assert_null(th_conf_parse("[a]\n\n[ a\t]\n", "e.ini", err, sizeof(err)));
	assert_string_equal(err, "e.ini:3: [a] already begun on line 1");
	/* Names are case-sensitive, as keys are: [A] is another section. */
	c = th_conf_parse("[a]\nx = 1\n[A]\nx = 2\n", "e.ini", err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(th_conf_get(c, "A", "x"), "2");
	th_conf_free(c);
	/* A header needs a name. */
	assert_null(th_conf_parse("x = 1\n[]\ny = 2\n", "e.ini", err, sizeof(err)));
	assert_string_equal(err, "e.ini:2: section header without a name");
	assert_null(th_conf_parse("[ \t ]\n", "e.ini", err, sizeof(err)));
	assert_string_equal(err, "e.ini:1: section header without a name");
}

/* A comment after a value would become part of it (a path, a name): refused. */
static void
test_inline_comment_rejected(void **state)
{
	char err[256] = "";
	struct th_conf *c;

	(void)state;
	assert_null(
		th_conf_parse("[capture]\noutput = o.txt # my log\n", "c.ini", err, sizeof(err)));
	assert_string_equal(
		err, "c.ini:2: output: a comment goes on a line of its own ('#' after the value)");
	assert_null(th_conf_parse("[eal]\nargs = -l 0-1\t; quiet\n", "c.ini", err, sizeof(err)));
	assert_non_null(strstr(err, "c.ini:2: args: a comment"));
	assert_null(
		th_conf_parse("[capture]\noutput = ; off for now\n", "c.ini", err, sizeof(err)));
	assert_non_null(strstr(err, "c.ini:2: output: a comment"));
	/* Keys and sections from the file are shown without their terminal escapes. */
	c = th_conf_parse("[cap\x1b[31mture]\n\x1b[31mmbufs = 5\n", "c.ini", err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "c.ini:1: unknown section [cap?[31mture]");
	assert_null(th_conf_get(c, "cap\x1b[31mture", "mbufs"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "c.ini:2: unknown key 'cap?[31mture.?[31mmbufs'");
	th_conf_free(c);
	/* '#' and ';' inside a value, not after a blank, stay. */
	c = th_conf_parse("[a]\nx = a#b;c\n", "c.ini", err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(th_conf_get(c, "a", "x"), "a#b;c");
	th_conf_free(c);
}

static void
test_missing_equals(void **state)
{
	char err[256] = "";

	(void)state;
	errno = 0;
	assert_null(th_conf_parse("[capture]\nport 2049\n", "eq.ini", err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "eq.ini:2: expected 'key = value', got 'port 2049'");

	assert_null(th_conf_parse("a = 1\n  = 2\n", "eq.ini", err, sizeof(err)));
	assert_string_equal(err, "eq.ini:2: missing key before '='");
}

/* A missing key names the typo that is there instead, or the section that is. */
static void
test_missing_key(void **state)
{
	struct th_conf *c;
	char err[256] = "";

	(void)state;
	c = th_conf_parse("[w]\nsgee = 4\nmsg = 8\nqp_cuont = 2\n", "w.ini", err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(th_conf_missing(c, "w", "sge", "(why)", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "w.ini:2: unknown key 'w.sgee' ([w] needs 'sge')");
	assert_int_equal(th_conf_missing(c, "w", "qp_count", "(why)", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "w.ini:4: unknown key 'w.qp_cuont' ([w] needs 'qp_count')");
	/* Two edits from a three-letter key is another key, not a typo; nor one in use. */
	assert_string_equal(th_conf_get(c, "w", "sgee"), "4");
	/* Otherwise the section lacks it: said at its header. */
	th_conf_missing(c, "w", "sge", "(why)", err, sizeof(err));
	assert_string_equal(err, "w.ini:1: [w] needs 'sge' (why)");
	th_conf_missing(c, "x", "sge", "(why)", err, sizeof(err));
	assert_string_equal(err, "w.ini: no [x] section (line 3 is in [w])");
	th_conf_free(c);
	/* A header without keys is a section that lacks the key, not a missing section. */
	c = th_conf_parse("[w]\nmsg = 8\n\n[x]\n", "w.ini", err, sizeof(err));
	assert_non_null(c);
	th_conf_missing(c, "x", "sge", "(why)", err, sizeof(err));
	assert_string_equal(err, "w.ini:4: [x] needs 'sge' (why)");
	th_conf_free(c);
	/* Keys before any header have no header line to show. */
	c = th_conf_parse("msg = 8\n", "w.ini", err, sizeof(err));
	assert_non_null(c);
	th_conf_missing(c, "", "sge", "(why)", err, sizeof(err));
	assert_string_equal(err, "w.ini: [] needs 'sge' (why)");
	th_conf_free(c);
	/* Only a header, misspelt, and no key: the missing section points at it. */
	c = th_conf_parse("# w\n[workloda]\n", "w.ini", err, sizeof(err));
	assert_non_null(c);
	th_conf_missing(c, "workload", "sge", "(why)", err, sizeof(err));
	assert_string_equal(err, "w.ini: no [workload] section (line 2 is [workloda])");
	th_conf_free(c);
}

static void
test_unclosed_section(void **state)
{
	char err[256] = "";

	(void)state;
	errno = 0;
	assert_null(th_conf_parse("a = 1\n\n[capture\nport = 1\n", "s.ini", err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "s.ini:3: section header needs a closing ']'");
	assert_null(th_conf_parse("[capture] port = 1\n", "s.ini", err, sizeof(err)));
	assert_string_equal(err, "s.ini:1: section header needs a closing ']'");
}

static void
test_get_u64(void **state)
{
	static const char text[] = "[q]\n"
				   "dec = 2049\n"
				   "hex = 0x10\n"
				   "big = 70000\n"
				   "neg = -1\n"
				   "junk = 12abc\n"
				   "none =\n"
				   "huge = 18446744073709551616\n"
				   "max = 18446744073709551615\n"
				   "plus = +5\n"
				   "plus_hex = +0x10\n"
				   "hex_plus = 0x+10\n"
				   "neg_zero = -0\n";
	char err[256] = "";
	struct th_conf *c = th_conf_parse(text, "n.ini", err, sizeof(err));
	uint64_t v;

	(void)state;
	assert_non_null(c);
	v = 0;
	assert_int_equal(th_conf_get_u64(c, "q", "dec", 1, 65535, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 2049);
	assert_int_equal(th_conf_get_u64(c, "q", "hex", 0, 100, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 16);
	assert_int_equal(th_conf_get_u64(c, "q", "max", 0, UINT64_MAX, &v, err, sizeof(err)), 0);
	assert_true(v == UINT64_MAX);

	/* Absent: nothing changes, no error. */
	v = 77;
	assert_int_equal(th_conf_get_u64(c, "q", "absent", 1, 2, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 77);

	v = 77;
	assert_int_equal(th_conf_get_u64(c, "q", "big", 1, 65535, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(v, 77);
	assert_string_equal(
		err, "n.ini:4: q.big = '70000': expected a whole number from 1 to 65535");
	assert_int_equal(th_conf_get_u64(c, "q", "dec", 4096, 8192, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(
		err, "n.ini:2: q.dec = '2049': expected a whole number from 4096 to 8192");
	assert_int_equal(
		th_conf_get_u64(c, "q", "neg", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:5: q.neg = '-1'"));
	assert_int_equal(
		th_conf_get_u64(c, "q", "junk", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:6: q.junk"));
	assert_int_equal(
		th_conf_get_u64(c, "q", "none", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:7: q.none"));
	assert_int_equal(
		th_conf_get_u64(c, "q", "huge", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:8: q.huge"));
	assert_int_equal(v, 77);
	/* A whole number is digits: strtoull would read a sign, or a blank, before them. */
	assert_int_equal(
		th_conf_get_u64(c, "q", "plus", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "n.ini:10: q.plus = '+5': expected a whole number from 0 to "
				 "18446744073709551615");
	assert_int_equal(
		th_conf_get_u64(c, "q", "plus_hex", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:11: q.plus_hex = '+0x10'"));
	assert_int_equal(
		th_conf_get_u64(c, "q", "hex_plus", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:12: q.hex_plus = '0x+10'"));
	assert_int_equal(
		th_conf_get_u64(c, "q", "neg_zero", 0, UINT64_MAX, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "n.ini:13: q.neg_zero = '-0'"));
	assert_int_equal(v, 77);
	th_conf_free(c);
}

static void
test_get_seconds(void **state)
{
	static const char text[] = "half = 0.5\n"
				   "whole = 30\n"
				   "zero = 0\n"
				   "ms = 1.5\n"
				   "abc = abc\n"
				   "neg = -1\n"
				   "tail = 5s\n"
				   "nan = nan\n"
				   "tiny = 1e-10\n"
				   "bytes = 1\x1b[2J\n";
	char err[256] = "";
	struct th_conf *c = th_conf_parse(text, "t.ini", err, sizeof(err));
	uint64_t ns;

	(void)state;
	assert_non_null(c);
	assert_int_equal(th_conf_get_seconds(c, "", "half", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 500000000);
	assert_int_equal(th_conf_get_seconds(c, "", "whole", &ns, err, sizeof(err)), 0);
	assert_true(ns == 30000000000ull);
	assert_int_equal(th_conf_get_seconds(c, "", "zero", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(th_conf_get_seconds(c, "", "ms", &ns, err, sizeof(err)), 0);

	ns = 123;
	assert_int_equal(th_conf_get_seconds(c, "", "abc", &ns, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.ini:5: "));
	assert_non_null(strstr(err, "abc = 'abc': expected seconds from 0 to 1e9 (e.g. 0.5, 30)"));
	assert_int_equal(th_conf_get_seconds(c, "", "neg", &ns, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.ini:6:"));
	assert_int_equal(th_conf_get_seconds(c, "", "tail", &ns, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.ini:7:"));
	assert_int_equal(th_conf_get_seconds(c, "", "nan", &ns, err, sizeof(err)), -EINVAL);
	assert_int_equal(ns, 123);

	/* Less than a nanosecond would be 0, which means "off" to some keys. */
	assert_int_equal(th_conf_get_seconds(c, "", "tiny", &ns, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.ini:9: tiny = '1e-10': expected seconds from 0.000000001"));
	/* A terminal escape in a value is not echoed to the terminal. */
	assert_int_equal(th_conf_get_seconds(c, "", "bytes", &ns, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bytes = '1?[2J'"));
	ns = 9;
	assert_int_equal(th_conf_get_seconds(c, "", "absent", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 9);
	th_conf_free(c);
}

/* Decimal seconds are exact in ns: 1.001 s is 1001000000 ns, not one less. */
static void
test_get_seconds_exact(void **state)
{
	static const char *const values[] = {"1.001", "0.003", "2.5", "4.35", "59.999"};
	static const uint64_t want[] = {1001000000, 3000000, 2500000000, 4350000000, 59999000000};
	uint64_t got[5] = {0};
	char err[256] = "", text[64];
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		struct th_conf *c;

		snprintf(text, sizeof(text), "t = %s\n", values[i]);
		c = th_conf_parse(text, "t.ini", err, sizeof(err));
		assert_non_null(c);
		if (th_conf_get_seconds(c, "", "t", &got[i], err, sizeof(err)) != 0)
			got[i] = UINT64_MAX;
		th_conf_free(c);
	}
	for (i = 0; i < 5; i++)
		if (got[i] != want[i])
			fail_msg("'%s' s read as %llu ns, want %llu", values[i],
				(unsigned long long)got[i], (unsigned long long)want[i]);
}

/* Decimal numbers as people write them; strtod's other spellings are not one of them. */
static void
test_get_double(void **state)
{
	static const struct {
		const char *value;
		double want;
	} good[] = {
		{"0.25", 0.25},
		{"-1", -1},
		{"-.5", -0.5},
		{".5", 0.5},
		{"5.", 5},
		{"1e-3", 1e-3},
		{"1E+2", 100},
		{"0", 0},
		{"010", 10},
	};
	static const char *const bad[] = {
		"+5",
		"+0.5",
		"0x10",
		"-0x1p-2",
		"0X1",
		"inf",
		"-inf",
		"nan",
		"infinity",
		"-",
		".",
		"+",
		"1e",
		"5 5",
		"e5",
	};
	char err[256] = "", text[64];
	struct th_conf *c;
	size_t i;
	double d;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "[s]\nd = %s\n", good[i].value);
		c = th_conf_parse(text, "d.ini", err, sizeof(err));
		assert_non_null(c);
		d = 42;
		if (th_conf_get_double(c, "s", "d", -1000, 1000, &d, err, sizeof(err)) != 0)
			fail_msg("'%s' refused: %s", good[i].value, err);
		assert_true(d == good[i].want);
		th_conf_free(c);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];

		snprintf(text, sizeof(text), "[s]\nd = %s\n", bad[i]);
		c = th_conf_parse(text, "d.ini", err, sizeof(err));
		assert_non_null(c);
		d = 42;
		if (th_conf_get_double(c, "s", "d", -1e300, 1e300, &d, err, sizeof(err)) == 0)
			fail_msg("'%s' read as %g", bad[i], d);
		snprintf(want, sizeof(want),
			"d.ini:2: s.d = '%s': expected a number from -1e+300 to 1e+300", bad[i]);
		assert_string_equal(err, want);
		assert_true(d == 42);
		/* A time is a decimal number too. */
		if (th_conf_get_seconds(c, "s", "d", &(uint64_t){0}, err, sizeof(err)) == 0)
			fail_msg("'%s' read as seconds", bad[i]);
		assert_non_null(strstr(err, "d.ini:2: s.d"));
		th_conf_free(c);
	}
	/* A minus sign where no number may be negative is a mistake, "-0" too: it is not read
	 * as the 0 the range allows. */
	assert_int_equal(th_conf_parse_double("-0", 0, 10, &d), -EINVAL);
	assert_int_equal(th_conf_parse_double("-0.0", 0, 10, &d), -EINVAL);
	assert_int_equal(th_conf_parse_double("-0", -1, 10, &d), 0);
	assert_true(d == 0);
	c = th_conf_parse("[s]\nd = -0\n", "d.ini", err, sizeof(err));
	assert_non_null(c);
	assert_int_not_equal(th_conf_get_seconds(c, "s", "d", &(uint64_t){0}, err, sizeof(err)), 0);
	th_conf_free(c);
}

static void
test_unused_key(void **state)
{
	static const char text[] = "[capture]\n"
				   "port = 0\n"
				   "\n"
				   "call_timout = 30\n"
				   "[output]\n"
				   "file = x\n";
	char err[256] = "";
	struct th_conf *c = th_conf_parse(text, "typo.ini", err, sizeof(err));
	uint64_t v;

	(void)state;
	assert_non_null(c);
	assert_int_equal(th_conf_get_u64(c, "capture", "port", 0, 10, &v, err, sizeof(err)), 0);
	assert_non_null(th_conf_get(c, "output", "file"));
	/* The program asks for the right name; the typo is never found. */
	assert_int_equal(
		th_conf_get_seconds(c, "capture", "call_timeout", &v, err, sizeof(err)), 0);
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "typo.ini:4: unknown key 'capture.call_timout'"));

	assert_int_equal(
		th_conf_get_u64(c, "capture", "call_timout", 0, 100, &v, err, sizeof(err)), 0);
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), 0);
	th_conf_free(c);
}

/*
 * A section the program never reads is named once, at its header, keys or
 * not: an empty [extra] would otherwise pass unseen. A section read for one
 * key it lacks is known; its other keys are unknown keys.
 */
static void
test_unknown_section(void **state)
{
	static const char text[] = "top = 1\n"
				   "[capture]\n"
				   "port = 0\n"
				   "[known.abc]\n"
				   "\n"
				   "[output]\n"
				   "file = x\n"
				   "[probe]\n";
	char err[256] = "";
	struct th_conf *c = th_conf_parse(text, "sec.ini", err, sizeof(err));
	uint64_t v;
	double d;

	(void)state;
	assert_non_null(c);
	/* Sections in file order, those without keys too. */
	assert_string_equal(th_conf_section(c, 0), "");
	assert_string_equal(th_conf_section(c, 1), "capture");
	assert_string_equal(th_conf_section(c, 2), "known.abc");
	assert_string_equal(th_conf_section(c, 3), "output");
	assert_string_equal(th_conf_section(c, 4), "probe");
	assert_null(th_conf_section(c, 5));
	/* A section's own line is its header's; keys before any header have none. */
	th_conf_where(c, "output", NULL, err, sizeof(err));
	assert_string_equal(err, "sec.ini:6");
	th_conf_where(c, "nosuch", NULL, err, sizeof(err));
	assert_string_equal(err, "sec.ini");
	th_conf_where(c, "", NULL, err, sizeof(err));
	assert_string_equal(err, "sec.ini");
	assert_non_null(th_conf_get(c, "", "top"));
	assert_int_equal(th_conf_get_u64(c, "capture", "port", 0, 10, &v, err, sizeof(err)), 0);
	/* Listing the sections reads none of them. */
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sec.ini:4: unknown section [known.abc]");
	/* Asking for a key it lacks makes a section known, even an empty one. */
	assert_null(th_conf_get(c, "known.abc", "note"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sec.ini:6: unknown section [output]");
	assert_int_equal(th_conf_get_seconds(c, "output", "every", &v, err, sizeof(err)), 0);
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sec.ini:7: unknown key 'output.file'");
	assert_non_null(th_conf_get(c, "output", "file"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sec.ini:8: unknown section [probe]");
	assert_int_equal(th_conf_get_double(c, "probe", "rate", 0, 1, &d, err, sizeof(err)), 0);
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), 0);
	th_conf_free(c);

	/* The first in the file: an unknown key before an unknown section. */
	c = th_conf_parse("[a]\nx = 1\ny = 2\n[b]\n", "sec.ini", err, sizeof(err));
	assert_non_null(c);
	assert_non_null(th_conf_get(c, "a", "x"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sec.ini:3: unknown key 'a.y'");
	th_conf_free(c);
}

static void
test_load_missing_file(void **state)
{
	char err[256] = "";

	(void)state;
	errno = 0;
	assert_null(th_conf_load("/nonexistent/tracehound.ini", err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err, "/nonexistent/tracehound.ini"));
	assert_non_null(strstr(err, strerror(ENOENT)));
}

static char *
write_temp(const void *data, size_t size)
{
	char *path = strdup("/tmp/test_conf_parse_XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	close(fd);
	return path;
}

static void
test_load_file(void **state)
{
	static const char text[] = "[capture]\nport = 3\nport = 4\n";
	char err[256] = "";
	char *path = write_temp(text, sizeof(text) - 1);
	char want[300];
	struct th_conf *c;

	(void)state;
	/* Messages name the file as given. */
	assert_null(th_conf_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:3: capture.port already set on line 2", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	path = write_temp("[a]\nb = c\n", 10);
	c = th_conf_load(path, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(th_conf_get(c, "a", "b"), "c");
	th_conf_free(c);
	unlink(path);
	free(path);
}

static void
test_load_nul_bytes(void **state)
{
	static const char text[] = "[capture]\nport = 1\0\nhidden = 2\n";
	char err[256] = "";
	char *path = write_temp(text, sizeof(text) - 1);

	(void)state;
	errno = 0;
	assert_null(th_conf_load(path, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "NUL"));
	unlink(path);
	free(path);
}

static void
test_byte_order_mark(void **state)
{
	static const char text[] = "\xef\xbb\xbf[eal]\nargs = -l 0-1\n";
	char err[256] = "";
	char *path = write_temp(text, sizeof(text) - 1);
	struct th_conf *c;

	(void)state;
	/* A leading UTF-8 byte-order mark (Windows editors) is no part of line 1. */
	c = th_conf_load(path, err, sizeof(err));
	assert_non_null(c);
	assert_string_equal(th_conf_get(c, "eal", "args"), "-l 0-1");
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), 0);
	th_conf_free(c);
	unlink(path);
	free(path);
	/* Lines are still counted from the first. */
	c = th_conf_parse("\xef\xbb\xbfkey = 1\n[a]\nb\n", "bom.ini", err, sizeof(err));
	assert_null(c);
	assert_string_equal(err, "bom.ini:3: expected 'key = value', got 'b'");
	/* Only at the start: elsewhere it is text like any other. */
	c = th_conf_parse("[a]\n\xef\xbb\xbf[b]\n", "bom.ini", err, sizeof(err));
	assert_null(c);
	assert_string_equal(err, "bom.ini:2: expected 'key = value', got '???[b]'");
}

static void
test_key_before_section(void **state)
{
	char err[256] = "";
	struct th_conf *c;

	(void)state;
	/* A reader of [sections] only: the key is misplaced, not misspelt. */
	c = th_conf_parse("mbufs=5\n[eal]\nargs=-l 0-1\n", "c.ini", err, sizeof(err));
	assert_non_null(c);
	assert_non_null(th_conf_get(c, "eal", "args"));
	assert_null(th_conf_get(c, "capture", "mbufs"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "c.ini:1: 'mbufs' is before any [section]");
	th_conf_free(c);
	/* So too in a file without headers. */
	c = th_conf_parse("# c\n\nmbufs = 5\n", "c.ini", err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "c.ini:3: 'mbufs' is before any [section]");
	th_conf_missing(c, "workload", "sge", "(why)", err, sizeof(err));
	assert_string_equal(err, "c.ini: no [workload] section (line 3 is before any [section])");
	th_conf_free(c);
	/* A reader of keys before any header: another such key is unknown. */
	c = th_conf_parse("mem = host\ncolour = red\n", "word", err, sizeof(err));
	assert_non_null(c);
	assert_non_null(th_conf_get(c, "", "mem"));
	assert_int_equal(th_conf_check_unused(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "word:2: unknown key 'colour'");
	th_conf_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections_and_comments),
		cmocka_unit_test(test_whitespace_trimmed),
		cmocka_unit_test(test_duplicate_rejected),
		cmocka_unit_test(test_section_repeated),
		cmocka_unit_test(test_inline_comment_rejected),
		cmocka_unit_test(test_missing_equals),
		cmocka_unit_test(test_missing_key),
		cmocka_unit_test(test_unclosed_section),
		cmocka_unit_test(test_get_u64),
		cmocka_unit_test(test_get_seconds),
		cmocka_unit_test(test_get_seconds_exact),
		cmocka_unit_test(test_get_double),
		cmocka_unit_test(test_unused_key),
		cmocka_unit_test(test_unknown_section),
		cmocka_unit_test(test_load_missing_file),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_nul_bytes),
		cmocka_unit_test(test_byte_order_mark),
		cmocka_unit_test(test_key_before_section),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
