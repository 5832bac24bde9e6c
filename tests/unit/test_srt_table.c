/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The response-time table: every procedure finds its own row again however
 * their hashes collide, the 65th procedure is counted rather than kept,
 * adding tables up keeps every value, a reply before its call is counted,
 * and rows print by program, version and procedure as the RPC log names them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_srt.h"

static struct th_srt *
new_table(void)
{
	struct th_srt *s = malloc(sizeof(*s));

	assert_non_null(s);
	th_srt_init(s);
	return s;
}

static void
test_rows_found_again(void **state)
{
	struct th_srt *s = new_table();
	struct th_srt_proc p;
	uint32_t i, r;

	(void)state;
	/* 70 procedures of one program: many share a first slot. */
	for (i = 0; i < 70; i++) {
		p = (struct th_srt_proc){100003, 3, i};
		th_srt_record(s, &p, 1000, 1000 + 100 * (i + 1));
		th_srt_record(s, &p, 5000, 5000 + 100 * (i + 1) + 7);
	}
	assert_int_equal(atomic_load(&s->rows), TH_SRT_ROWS);
	assert_int_equal(s->untimed_rows, 2 * (70 - TH_SRT_ROWS));
	for (r = 0; r < TH_SRT_ROWS; r++) {
		assert_int_equal(s->id[r].proc, r);
		assert_int_equal(s->row[r].count, 2);
		assert_int_equal(s->row[r].min, 100 * (r + 1));
		assert_int_equal(s->row[r].max, 100 * (r + 1) + 7);
	}
	/* A reply stamped before its call: counted, not timed. */
	p = (struct th_srt_proc){100003, 3, 1};
	th_srt_record(s, &p, 2000, 1999);
	assert_int_equal(s->untimed_clock, 1);
	assert_int_equal(s->row[1].count, 2);
	free(s);
}

static void
test_add_and_percentiles(void **state)
{
	struct th_srt *a = new_table(), *b = new_table(), *sum = new_table();
	struct th_srt_proc getattr = {100003, 3, 1}, read = {100003, 3, 6}, other = {400000, 1, 9};
	uint32_t i;

	(void)state;
	/* a: GETATTR 1..1000 us; b: READ first, then GETATTR 1001..2000 us, another program. */
	for (i = 1; i <= 1000; i++)
		th_srt_record(a, &getattr, 0, i * 1000ull);
	th_srt_record(b, &read, 0, 5);
	for (i = 1001; i <= 2000; i++)
		th_srt_record(b, &getattr, 0, i * 1000ull);
	th_srt_record(b, &other, 10, 20);
	th_srt_add(sum, a);
	th_srt_add(sum, b);
	assert_int_equal(atomic_load(&sum->rows), 3);
	assert_int_equal(sum->id[0].proc, 1);
	assert_int_equal(sum->row[0].count, 2000);
	assert_int_equal(sum->row[0].min, 1000);
	assert_int_equal(sum->row[0].max, 2000000);
	assert_true(sum->row[0].sum_ns == 2001000.0 * 1000);
	for (i = 1; i < 100; i++) {
		/* Nearest rank over 1..2000 us: ceil(i% of 2000) us, within 1/64. */
		uint64_t want = (uint64_t)((i * 2000 + 99) / 100) * 1000,
			 got = th_srt_percentile(sum, 0, (double)i);

		assert_true(got + want / 64 >= want && got <= want + want / 64);
	}
	free(a);
	free(b);
	free(sum);
}

/* th_srt_print()'s text (free it), or with @p is_rows the CSV and JSON rows after it. */
static char *
printed(const struct th_srt *s, const char *what, bool is_rows)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	if (is_rows) {
		th_srt_write_rows(out, s, false);
		th_srt_write_rows(out, s, true);
	} else {
		th_srt_print(out, s, what);
	}
	fclose(out);
	assert_non_null(text);
	return text;
}

static void
test_print(void **state)
{
	struct th_srt *s = new_table();
	struct th_srt_proc later = {400000, 1, 9}, mnt = {100005, 3, 1}, lookup = {100003, 3, 3};
	char *text;

	(void)state;
	th_srt_record(s, &later, 0, 10000);
	th_srt_record(s, &mnt, 0, 20000);
	th_srt_record(s, &lookup, 0, 30000);
	text = printed(s, "what is timed", false);
	assert_non_null(strstr(text, "microseconds (what is timed)\n"));
	assert_non_null(strstr(text, "\n  NFS3 LOOKUP                       1      30.000 "));
	assert_non_null(strstr(text, "\n  MOUNT3 MNT                        1      20.000 "));
	assert_non_null(strstr(text, "\n  400000.1 9                        1      10.000 "));
	assert_true(strstr(text, "NFS3 LOOKUP") < strstr(text, "MOUNT3 MNT"));
	assert_true(strstr(text, "MOUNT3 MNT") < strstr(text, "400000.1 9"));
	free(text);
	text = printed(s, NULL, true);
	assert_string_equal(text,
		"program,version,procedure,rpcs,min_us,p50_us,p90_us,p99_us,p999_us,max_us,mean_"
		"us\n"
		"NFS,3,LOOKUP,1,30.000,30.000,30.000,30.000,30.000,30.000,30.000\n"
		"MOUNT,3,MNT,1,20.000,20.000,20.000,20.000,20.000,20.000,20.000\n"
		"400000,1,9,1,10.000,10.000,10.000,10.000,10.000,10.000,10.000\n"
		"{\"program\":\"NFS\",\"version\":3,\"procedure\":\"LOOKUP\",\"rpcs\":1,"
		"\"min_us\":30.000,\"p50_us\":30.000,\"p90_us\":30.000,\"p99_us\":30.000,"
		"\"p999_us\":30.000,\"max_us\":30.000,\"mean_us\":30.000}\n"
		"{\"program\":\"MOUNT\",\"version\":3,\"procedure\":\"MNT\",\"rpcs\":1,"
		"\"min_us\":20.000,\"p50_us\":20.000,\"p90_us\":20.000,\"p99_us\":20.000,"
		"\"p999_us\":20.000,\"max_us\":20.000,\"mean_us\":20.000}\n"
		"{\"program\":400000,\"version\":1,\"procedure\":9,\"rpcs\":1,"
		"\"min_us\":10.000,\"p50_us\":10.000,\"p90_us\":10.000,\"p99_us\":10.000,"
		"\"p999_us\":10.000,\"max_us\":10.000,\"mean_us\":10.000}\n");
	free(text);
	free(s);
}

/* A long label (an unnamed program's numbers) widens the column; the rows stay aligned. */
static void
test_print_wide_label(void **state)
{
	struct th_srt *s = new_table();
	struct th_srt_proc wide = {4294967295u, 4294967295u, 4294967295u}, nfs = {100003, 3, 1};
	char *text, *header, *row, *other;

	(void)state;
	th_srt_record(s, &wide, 0, 1000);
	th_srt_record(s, &nfs, 0, 1000);
	text = printed(s, "t", false);
	header = strstr(text, "  procedure");
	row = strstr(text, "  4294967295.4294967295 4294967295 ");
	other = strstr(text, "  NFS3 GETATTR ");
	assert_non_null(header);
	assert_non_null(row);
	assert_non_null(other);
	/* "rpcs" ends where each row's count ends. */
	assert_int_equal(strstr(header, "rpcs") + 4 - header, strstr(row, " 1 ") + 2 - row);
	assert_int_equal(strstr(header, "rpcs") + 4 - header, strstr(other, " 1 ") + 2 - other);
	free(text);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_found_again),
		cmocka_unit_test(test_add_and_percentiles),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_print_wide_label),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
