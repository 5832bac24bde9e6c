/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Which segment files tracehound export reads (app/export_segs.c), on files the
 * real writer made, changed between the steps of an export as a capture still
 * running changes them.
 */

#include <dirent.h>
#include <sys/stat.h>
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

#include "export_segs.h"
#include "th_export.h"
#include "th_segment.h"

#define S 1000000000ull
#define OPENS 5

struct fixture {
	char dir[64];   /* a fresh directory */
	char path[320]; /* the closed segment written there */
	char tmp[328];  /* the name it had while open */
	struct th_segs segs;
	struct th_export_config c;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct th_segment_config sc = {.box_id = 5, .kind = TH_SEGMENT_KIND_OPENS};
	struct th_segment_writer *w;
	struct dirent *de;
	DIR *d;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_export_segs.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	sc.dir = f->dir;
	w = th_segment_writer_create(&sc);
	assert_non_null(w);
	for (unsigned int i = 0; i < OPENS; i++) {
		struct th_trace_open o = {.open_ns = (1700000000 + i) * S,
			.close_ns = (1700000000 + i) * S + 1000,
			.fh_len = 1,
			.fh = {(uint8_t)i}};

		assert_int_equal(th_segment_write_open(w, &o), 0);
	}
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	d = opendir(f->dir);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, de->d_name);
	closedir(d);
	assert_true(f->path[0] != '\0');
	snprintf(f->tmp, sizeof(f->tmp), "%s%s", f->path, TH_SEGMENT_TMP_SUFFIX);
	th_export_config_defaults(&f->c);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	th_segs_free(&f->segs);
	unlink(f->path);
	unlink(f->tmp);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Export what was found; @return the records written, with the damage reported. */
static uint64_t
run(struct fixture *f)
{
	struct th_export_counters ctr;
	FILE *out = fopen("/dev/null", "w");

	assert_non_null(out);
	assert_int_equal(
		th_export_run(&f->c, f->segs.sources, f->segs.sources_count, out, stderr, &ctr), 0);
	fclose(out);
	th_segs_report(&f->segs);
	return ctr.records_out;
}

/*
 * The search's stat(): with close_at_stat set, a NAME.tmp is renamed NAME just before it is
 * looked at, as a capture closing it between the listing and the stat() would (linked with
 * --wrap=stat64).
 */
int __real_stat64(const char *path, struct stat *st);
int __wrap_stat64(const char *path, struct stat *st);

static const struct fixture *close_at_stat;

int
__wrap_stat64(const char *path, struct stat *st)
{
	if (close_at_stat != NULL && strcmp(path, close_at_stat->tmp) == 0) {
		assert_int_equal(rename(close_at_stat->tmp, close_at_stat->path), 0);
		close_at_stat = NULL;
	}
	return __real_stat64(path, st);
}

/* Closed between the directory's listing and its stat(): found under its closed name. */
static void
closed_while_listed(void **state)
{
	struct fixture *f = *state;
	char *dirs[] = {f->dir};

	assert_int_equal(rename(f->path, f->tmp), 0);
	close_at_stat = f;
	assert_int_equal(th_segs_find(&f->segs, dirs, 1), 0);
	assert_null(close_at_stat);
	assert_int_equal(th_segs_group(&f->segs, &f->c), 0);
	assert_int_equal(run(f), OPENS);
	assert_int_equal(f->segs.dmg.damaged, 0);
}

/* The segment was NAME.tmp when the directory was searched, and closed before its header was
 * read: the closed file is read, whole, and nothing is damaged. */
static void
closed_after_find(void **state)
{
	struct fixture *f = *state;
	char *dirs[] = {f->dir};

	assert_int_equal(rename(f->path, f->tmp), 0);
	assert_int_equal(th_segs_find(&f->segs, dirs, 1), 0);
	assert_int_equal(rename(f->tmp, f->path), 0);
	assert_int_equal(th_segs_group(&f->segs, &f->c), 0);
	assert_int_equal(run(f), OPENS);
	assert_int_equal(f->segs.dmg.damaged, 0);
}

/* Closed after its header was read, before its stream got to its records: the same. */
static void
closed_while_grouped(void **state)
{
	struct fixture *f = *state;
	char *dirs[] = {f->dir};

	assert_int_equal(rename(f->path, f->tmp), 0);
	assert_int_equal(th_segs_find(&f->segs, dirs, 1), 0);
	assert_int_equal(th_segs_group(&f->segs, &f->c), 0);
	assert_int_equal(rename(f->tmp, f->path), 0);
	assert_int_equal(run(f), OPENS);
	assert_int_equal(f->segs.dmg.damaged, 0);
}

/* Gone without a closed file in its place: unreadable, and said to be. */
static void
gone(void **state)
{
	struct fixture *f = *state;
	char *dirs[] = {f->dir};

	assert_int_equal(rename(f->path, f->tmp), 0);
	assert_int_equal(th_segs_find(&f->segs, dirs, 1), 0);
	assert_int_equal(th_segs_group(&f->segs, &f->c), 0);
	assert_int_equal(unlink(f->tmp), 0);
	assert_int_equal(run(f), 0);
	assert_int_equal(f->segs.dmg.damaged, 1);
}

/* A link NAME.tmp whose file is gone, beside the closed NAME: the link is named as unreadable,
 * not read as NAME again (which would then be "a copy of" itself). */
static void
dangling_tmp_link(void **state)
{
	struct fixture *f = *state;
	char *dirs[] = {f->dir};

	assert_int_equal(symlink("/nonexistent/segment.lz4.tmp", f->tmp), 0);
	assert_int_equal(th_segs_find(&f->segs, dirs, 1), 0);
	assert_int_equal(th_segs_group(&f->segs, &f->c), 0);
	assert_int_equal(f->segs.copies, 0);
	assert_int_equal(run(f), OPENS);
	assert_int_equal(f->segs.dmg.damaged, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(closed_while_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(closed_after_find, setup, teardown),
		cmocka_unit_test_setup_teardown(closed_while_grouped, setup, teardown),
		cmocka_unit_test_setup_teardown(gone, setup, teardown),
		cmocka_unit_test_setup_teardown(dangling_tmp_link, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
