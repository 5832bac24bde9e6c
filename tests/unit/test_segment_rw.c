/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * lib/segment: what a writer puts in a segment comes back record for record;
 * the file is a plain LZ4 frame (`lz4 -d` reads it); segments rotate by size
 * and age and their names sort in the order they were written; a flushed but
 * unclosed segment (a crash) gives back everything flushed; every cut and
 * every bit flip is reported, never passed off as a complete segment; a
 * stream that cannot write counts its losses and keeps the process alive.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <lz4frame.h>

#include "th_segment.h"

#include "../segment/seg_records.h"

#define SEC 1000000000ull
#define MAX_FILES 256

struct files {
	unsigned int n;
	char name[MAX_FILES][512];
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Segment files in @p dir (suffix filter), sorted by name. */
static void
list(const char *dir, const char *suffix, struct files *f)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	f->n = 0;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL && f->n < MAX_FILES) {
		size_t l = strlen(e->d_name), s = strlen(suffix);

		if (l > s && strcmp(e->d_name + l - s, suffix) == 0)
			snprintf(f->name[f->n++], sizeof(f->name[0]), "%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(f->name, f->n, sizeof(f->name[0]), cmp_str);
}

static void
make_dir(char *dir)
{
	strcpy(dir, "/tmp/th_seg_XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void
remove_dir(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void
config(struct th_segment_config *c, const char *dir, enum th_segment_kind kind)
{
	memset(c, 0, sizeof(*c));
	c->dir = dir;
	c->box_id = 7;
	c->stream_id = 3;
	c->kind = kind;
}

/* Write record i of a mixed stream: opens, with a name every 7th and an rpc every 3rd. */
static void
write_mixed(struct th_segment_writer *w, uint64_t i)
{
	struct th_trace_open o;
	struct th_trace_name nm;
	struct th_trace_rpc r;

	if (i % 7 == 0) {
		seg_make_name(9, i, &nm);
		assert_int_equal(th_segment_write_name(w, &nm), 0);
	} else if (i % 3 == 0) {
		seg_make_rpc(9, i, &r);
		assert_int_equal(th_segment_write_rpc(w, &r), 0);
	} else {
		seg_make_open(9, i, &o);
		assert_int_equal(th_segment_write_open(w, &o), 0);
	}
}

/* Check the reader's next record is record i of write_mixed(). */
static int
check_mixed(struct th_segment_reader *rd, uint64_t i)
{
	struct th_trace_open o, o2;
	struct th_trace_name nm, nm2;
	struct th_trace_rpc r, r2;
	int type;

	memset(&o2, 0, sizeof(o2));
	memset(&nm2, 0, sizeof(nm2));
	memset(&r2, 0, sizeof(r2));
	type = th_segment_reader_next(rd, &o2, &nm2, &r2);
	if (type <= 0)
		return type;
	if (i % 7 == 0) {
		seg_make_name(9, i, &nm);
		assert_int_equal(type, TH_TRACE_NAME);
		assert_memory_equal(&nm, &nm2, sizeof(nm));
	} else if (i % 3 == 0) {
		seg_make_rpc(9, i, &r);
		assert_int_equal(type, TH_TRACE_RPC);
		assert_memory_equal(&r, &r2, sizeof(r));
	} else {
		seg_make_open(9, i, &o);
		assert_int_equal(type, TH_TRACE_OPEN);
		assert_memory_equal(&o, &o2, sizeof(o));
	}
	return type;
}

/* Read @p path, expecting records first.. in order; @return how many, state in *st. */
static uint64_t
read_all(const char *path, uint64_t first, int *ret)
{
	struct th_segment_reader *rd = th_segment_reader_open(path);
	uint64_t n = 0;
	int t;

	assert_non_null(rd);
	while ((t = check_mixed(rd, first + n)) > 0)
		n++;
	*ret = t;
	assert_int_equal(th_segment_reader_count(rd), n);
	th_segment_reader_close(rd);
	return n;
}

static void
test_write_read(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct th_segment_reader *rd;
	struct th_segment_counters ctr;
	const struct th_segment_header *h;
	const struct th_segment_trailer *t;
	struct files f;
	char dir[64], cmd[1200];
	uint64_t n = 50000;
	int ret;

	(void)state;
	make_dir(dir);
	config(&c, dir, TH_SEGMENT_KIND_MIXED);
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	for (uint64_t i = 0; i < n; i++)
		write_mixed(w, i);
	th_segment_writer_counters(w, &ctr);
	assert_int_equal(ctr.records, n);
	assert_int_equal(th_segment_writer_close(w, NULL), 0);

	list(dir, ".tmp", &f);
	assert_int_equal(f.n, 0);
	list(dir, ".lz4", &f);
	assert_int_equal(f.n, 1);
	assert_non_null(strstr(f.name[0], "/mixed-7-00003-"));
	assert_int_equal(read_all(f.name[0], 0, &ret), n);
	assert_int_equal(ret, 0);

	rd = th_segment_reader_open(f.name[0]);
	assert_non_null(rd);
	h = th_segment_reader_header(rd);
	assert_int_equal(h->box_id, 7);
	assert_int_equal(h->stream_id, 3);
	assert_int_equal(h->kind, TH_SEGMENT_KIND_MIXED);
	assert_int_equal(h->version, TH_SEGMENT_VERSION);
	assert_int_equal(h->seq, 0);
	assert_true(h->created_ns > 1600000000ull * SEC);
	while (th_segment_reader_next(rd, NULL, NULL, NULL) > 0)
		;
	assert_int_equal(th_segment_reader_state(rd), TH_SEGMENT_READ_COMPLETE);
	t = th_segment_reader_trailer(rd);
	assert_non_null(t);
	assert_int_equal(t->records, n);
	assert_int_equal(t->by_type[TH_TRACE_NAME], (n + 6) / 7);
	assert_int_equal(t->first_ns, SEG_T0);
	assert_true(t->last_ns >= SEG_T0 + (n - 2) * 200000);
	th_segment_reader_close(rd);

	/* The stock tool reads it: the raw stream starts with the header magic. */
	if (system("command -v lz4 >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd),
			"lz4 -q -d -c '%s' | head -c 8 | grep -q THSEGHDR && lz4 -q -t '%s'",
			f.name[0], f.name[0]);
		assert_int_equal(system(cmd), 0);
	}
	remove_dir(dir);
}

static void
test_rotation(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct th_segment_counters ctr;
	struct files f;
	char dir[64];
	uint64_t n = 200000, next = 0, now = 1000;
	int ret;

	(void)state;
	make_dir(dir);
	config(&c, dir, TH_SEGMENT_KIND_MIXED);
	c.max_bytes = 256 * 1024;
	c.rotate_ns = 10 * SEC;
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	for (uint64_t i = 0; i < n; i++) {
		write_mixed(w, i);
		/* 1 ms of clock per 100 records: 2 s in all, one age rotation at the end. */
		if (i % 100 == 0) {
			now += 1000000;
			assert_int_equal(th_segment_writer_tick(w, now), 0);
		}
	}
	assert_int_equal(th_segment_writer_tick(w, now + 11 * SEC), 0);
	th_segment_writer_counters(w, &ctr);
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	list(dir, ".lz4", &f);
	assert_true(f.n >= 3);
	assert_int_equal(f.n, ctr.segments + 0);
	/* In name order the segments continue each other. */
	for (unsigned int i = 0; i < f.n; i++) {
		struct stat st;

		assert_int_equal(stat(f.name[i], &st), 0);
		assert_true((uint64_t)st.st_size < c.max_bytes + 200 * 1024);
		next += read_all(f.name[i], next, &ret);
		assert_int_equal(ret, 0);
	}
	assert_int_equal(next, n);
	remove_dir(dir);
}

/* A flushed, never closed segment (the process died) gives back what was flushed. */
static void
test_flush_recovery(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct th_segment_reader *rd;
	struct files f;
	char dir[64];
	uint64_t n = 30000, now = 5 * SEC;
	int ret;

	(void)state;
	make_dir(dir);
	config(&c, dir, TH_SEGMENT_KIND_MIXED);
	c.flush_ns = SEC / 10;
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	assert_int_equal(th_segment_writer_tick(w, now), 0);
	for (uint64_t i = 0; i < n; i++)
		write_mixed(w, i);
	/* Not yet due: nothing forced out, only whole 256 KiB writes reached the file. */
	assert_int_equal(th_segment_writer_tick(w, now + SEC / 20), 0);
	list(dir, ".tmp", &f);
	assert_int_equal(f.n, 1);
	assert_true(read_all(f.name[0], 0, &ret) < n);
	assert_int_equal(ret, -ENODATA);

	assert_int_equal(th_segment_writer_tick(w, now + SEC / 10), 0);
	assert_int_equal(read_all(f.name[0], 0, &ret), n);
	assert_int_equal(ret, -ENODATA);
	rd = th_segment_reader_open(f.name[0]);
	while (th_segment_reader_next(rd, NULL, NULL, NULL) > 0)
		;
	assert_int_equal(th_segment_reader_state(rd), TH_SEGMENT_READ_TRUNCATED);
	assert_non_null(strstr(th_segment_reader_describe(rd), "truncated"));
	assert_non_null(strstr(th_segment_reader_describe(rd), "30000 records"));
	assert_null(th_segment_reader_trailer(rd));
	th_segment_reader_close(rd);
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	remove_dir(dir);
}

static uint8_t *
slurp(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size);
	assert_int_equal(read(fd, p, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return p;
}

static void
spit(const char *path, const uint8_t *p, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, size), (ssize_t)size);
	close(fd);
}

/* Every cut and every single bit flip of a closed segment is reported. */
static void
test_damage(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct files f;
	char dir[64], bad[600];
	uint8_t *orig;
	size_t size;
	uint64_t n = 3000, got;
	int ret;

	(void)state;
	make_dir(dir);
	config(&c, dir, TH_SEGMENT_KIND_MIXED);
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	for (uint64_t i = 0; i < n; i++) {
		write_mixed(w, i);
		/* Several blocks, so cuts and flips land in different ones. */
		if (i % 500 == 499)
			assert_int_equal(th_segment_writer_flush(w), 0);
	}
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	list(dir, ".lz4", &f);
	assert_int_equal(f.n, 1);
	orig = slurp(f.name[0], &size);
	snprintf(bad, sizeof(bad), "%s/bad", dir);

	for (size_t cut = 0; cut < size; cut += 1 + cut / 50) {
		struct th_segment_reader *rd;

		spit(bad, orig, cut);
		rd = th_segment_reader_open(bad);
		if (rd == NULL) {
			assert_true(errno == ENODATA || errno == EBADMSG);
			continue;
		}
		th_segment_reader_close(rd);
		got = read_all(bad, 0, &ret);
		assert_true(ret < 0);
		assert_true(got <= n);
	}

	srand(42);
	for (unsigned int k = 0; k < 3000; k++) {
		struct th_segment_reader *rd;
		size_t at = k < size ? k : (size_t)rand() % size;

		orig[at] ^= (uint8_t)(1u << (k % 8));
		spit(bad, orig, size);
		orig[at] ^= (uint8_t)(1u << (k % 8));
		rd = th_segment_reader_open(bad);
		if (rd == NULL)
			continue;
		while ((ret = th_segment_reader_next(rd, NULL, NULL, NULL)) > 0)
			;
		if (ret == 0)
			fail_msg("bit %u of byte %zu flipped, segment still reads as complete",
				k % 8, at);
		assert_int_not_equal(th_segment_reader_state(rd), TH_SEGMENT_READ_COMPLETE);
		th_segment_reader_close(rd);
	}
	free(orig);
	remove_dir(dir);
}

/*
 * A segment of another record format version (2: records coded one by one) is
 * refused by name, as are another segment version and files that are no
 * segment.
 */
static void
test_other_version(void **state)
{
	uint8_t raw[64], frame[1024];
	LZ4F_preferences_t prefs;
	struct th_segment_reader *rd;
	char dir[64], path[128];
	unsigned int v1, v2;
	size_t n;

	(void)state;
	make_dir(dir);
	memset(raw, 0, sizeof(raw));
	memcpy(raw, "THSEGHDR", 8);
	raw[8] = TH_SEGMENT_VERSION;
	raw[10] = TH_SEGMENT_HEADER_SIZE;
	raw[12] = TH_TRACE_VERSION_MIN - 1;
	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	n = LZ4F_compressFrame(frame, sizeof(frame), raw, sizeof(raw), &prefs);
	assert_false(LZ4F_isError(n));
	snprintf(path, sizeof(path), "%s/old.lz4", dir);
	spit(path, frame, n);
	errno = 0;
	assert_null(th_segment_reader_open(path));
	assert_int_equal(errno, EPROTONOSUPPORT);
	/* Which versions it has is still said (export names them). */
	assert_int_equal(th_segment_versions(path, &v1, &v2), 0);
	assert_int_equal(v1, TH_SEGMENT_VERSION);
	assert_int_equal(v2, TH_TRACE_VERSION_MIN - 1);
	/* Nor a newer one. */
	raw[12] = TH_TRACE_VERSION + 1;
	n = LZ4F_compressFrame(frame, sizeof(frame), raw, sizeof(raw), &prefs);
	spit(path, frame, n);
	errno = 0;
	assert_null(th_segment_reader_open(path));
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_int_equal(th_segment_versions(path, &v1, &v2), 0);
	assert_int_equal(v2, TH_TRACE_VERSION + 1);
	/* The same header with this version, or the oldest still read, opens. */
	for (unsigned int v = TH_TRACE_VERSION_MIN; v <= TH_TRACE_VERSION; v++) {
		raw[12] = (uint8_t)v;
		n = LZ4F_compressFrame(frame, sizeof(frame), raw, sizeof(raw), &prefs);
		spit(path, frame, n);
		rd = th_segment_reader_open(path);
		assert_non_null(rd);
		assert_int_equal(th_segment_reader_header(rd)->trace_version, v);
		th_segment_reader_close(rd);
	}
	/* Another segment version; then files that are no segment at all: ENOEXEC. */
	raw[8] = TH_SEGMENT_VERSION + 1;
	n = LZ4F_compressFrame(frame, sizeof(frame), raw, sizeof(raw), &prefs);
	spit(path, frame, n);
	errno = 0;
	assert_null(th_segment_reader_open(path));
	assert_int_equal(errno, EPROTONOSUPPORT);
	memcpy(raw, "THSEGEND", 8); /* an LZ4 frame of something else */
	n = LZ4F_compressFrame(frame, sizeof(frame), raw, sizeof(raw), &prefs);
	spit(path, frame, n);
	assert_int_equal(th_segment_versions(path, &v1, &v2), -ENOEXEC);
	errno = 0;
	assert_null(th_segment_reader_open(path));
	assert_int_equal(errno, ENOEXEC);
	spit(path, (const uint8_t *)"\xd4\xc3\xb2\xa1\x02\x00\x04\x00 a pcap", 16);
	errno = 0;
	assert_null(th_segment_reader_open(path));
	assert_int_equal(errno, ENOEXEC);
	spit(path, frame, 0);
	errno = 0;
	assert_null(th_segment_reader_open(path));
	assert_int_equal(errno, ENODATA);
	remove_dir(dir);
}

/*
 * Rewrite the closed segment @p src as @p dst with another record format
 * version in its header, everything else as the writer left it.
 */
static void
relabel(const char *src, const char *dst, unsigned int version)
{
	LZ4F_preferences_t prefs;
	LZ4F_dctx *dctx;
	size_t size, in_size, out_size = 1 << 20, n;
	uint8_t *in = slurp(src, &in_size), *raw = malloc(out_size), *frame;

	assert_non_null(raw);
	assert_false(LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)));
	size = in_size;
	n = LZ4F_decompress(dctx, raw, &out_size, in, &size, NULL);
	assert_int_equal(n, 0); /* the whole frame, its end mark and checksum */
	assert_int_equal(size, in_size);
	LZ4F_freeDecompressionContext(dctx);
	assert_memory_equal(raw, "THSEGHDR", 8);
	raw[12] = (uint8_t)version;
	raw[13] = 0;
	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.blockSizeID = LZ4F_max256KB;
	prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	frame = malloc(LZ4F_compressFrameBound(out_size, &prefs));
	assert_non_null(frame);
	n = LZ4F_compressFrame(
		frame, LZ4F_compressFrameBound(out_size, &prefs), raw, out_size, &prefs);
	assert_false(LZ4F_isError(n));
	spit(dst, frame, n);
	free(frame);
	free(raw);
	free(in);
}

/*
 * A NAME record's mode came with record format version 4. The same bytes
 * in a segment whose header says version 3 were never written by a
 * tracehound: they are damage, reported as a bad record after the records
 * before it, not a mode taken from whatever follows the name.
 */
static void
test_v3_name_mode(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct th_segment_reader *rd;
	struct th_trace_name nm, got;
	struct files f;
	char dir[64], old[600];
	int ret;

	(void)state;
	make_dir(dir);
	config(&c, dir, TH_SEGMENT_KIND_NAMES);
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	/* Two names without a mode, then one with. */
	for (uint64_t i = 0; i < 3; i++) {
		seg_make_name(5, i, &nm);
		nm.mode = i == 2 ? 0100644 : 0;
		assert_int_equal(th_segment_write_name(w, &nm), 0);
	}
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	list(dir, ".lz4", &f);
	assert_int_equal(f.n, 1);

	/* As written (version 4), all three read back, the mode with them. */
	rd = th_segment_reader_open(f.name[0]);
	assert_non_null(rd);
	assert_int_equal(th_segment_reader_header(rd)->trace_version, TH_TRACE_VERSION);
	for (int i = 0; i < 3; i++)
		assert_int_equal(th_segment_reader_next(rd, NULL, &got, NULL), TH_TRACE_NAME);
	assert_int_equal(got.mode, 0100644);
	assert_int_equal(th_segment_reader_next(rd, NULL, &got, NULL), 0);
	th_segment_reader_close(rd);

	/* Labelled version 3: the names before the mode read, the one with it is damage. */
	snprintf(old, sizeof(old), "%s/v3", dir);
	relabel(f.name[0], old, 3);
	rd = th_segment_reader_open(old);
	assert_non_null(rd);
	assert_int_equal(th_segment_reader_header(rd)->trace_version, 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(th_segment_reader_next(rd, NULL, &got, NULL), TH_TRACE_NAME);
		assert_int_equal(got.mode, 0);
	}
	ret = th_segment_reader_next(rd, NULL, &got, NULL);
	assert_int_equal(ret, -EBADMSG);
	assert_int_equal(th_segment_reader_state(rd), TH_SEGMENT_READ_BAD_RECORD);
	assert_int_equal(th_segment_reader_count(rd), 2);
	assert_non_null(strstr(th_segment_reader_describe(rd), "bad record"));
	th_segment_reader_close(rd);
	remove_dir(dir);
}

/* No directory to write in: the stream stops, counts, and resumes once it exists. */
static void
test_error_state(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct th_segment_counters ctr;
	struct th_trace_open o;
	struct th_trace_rpc r;
	struct files f;
	char dir[64], sub[128];

	(void)state;
	make_dir(dir);
	snprintf(sub, sizeof(sub), "%s/later", dir);
	config(&c, sub, TH_SEGMENT_KIND_OPENS);
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	assert_int_equal(th_segment_writer_error(w), -ENOENT);
	assert_non_null(strstr(th_segment_writer_describe(w), "later/opens-7-00003-"));
	seg_make_open(1, 1, &o);
	for (int i = 0; i < 10; i++)
		assert_int_equal(th_segment_write_open(w, &o), -ENOENT);
	assert_int_equal(th_segment_writer_tick(w, SEC), -ENOENT);
	th_segment_writer_counters(w, &ctr);
	assert_int_equal(ctr.lost[TH_SEGMENT_LOSS_IO], 10);
	assert_int_equal(ctr.records, 0);
	assert_int_equal(ctr.errors, 1);

	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(th_segment_writer_resume(w), 0);
	assert_int_equal(th_segment_writer_error(w), 0);
	assert_int_equal(th_segment_write_open(w, &o), 0);
	/* An opens stream takes no RPC records. */
	seg_make_rpc(1, 1, &r);
	assert_int_equal(th_segment_write_rpc(w, &r), -EINVAL);
	o.fh_len = 65;
	assert_int_equal(th_segment_write_open(w, &o), -EINVAL);
	th_segment_writer_counters(w, &ctr);
	assert_int_equal(ctr.lost[TH_SEGMENT_LOSS_INVALID], 2);
	assert_int_equal(ctr.records, 1);
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	list(sub, ".lz4", &f);
	assert_int_equal(f.n, 1);
	remove_dir(dir);
}

/* A writer that never got a record leaves no file behind. */
static void
test_empty(void **state)
{
	struct th_segment_config c;
	struct th_segment_writer *w;
	struct files f;
	char dir[64];

	(void)state;
	make_dir(dir);
	config(&c, dir, TH_SEGMENT_KIND_NAMES);
	w = th_segment_writer_create(&c);
	assert_non_null(w);
	assert_int_equal(th_segment_writer_tick(w, 1), 0);
	assert_int_equal(th_segment_writer_close(w, NULL), 0);
	list(dir, "", &f);
	assert_int_equal(f.n, 2); /* . and .. only */
	c.kind = 9;
	assert_null(th_segment_writer_create(&c));
	assert_int_equal(errno, EINVAL);
	remove_dir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_flush_recovery),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_other_version),
		cmocka_unit_test(test_v3_name_mode),
		cmocka_unit_test(test_error_state),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
