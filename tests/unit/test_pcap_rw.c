/* SPDX-License-Identifier: BSD-3-Clause */

/* pcap reading and writing: round trips, both magics, both byte orders, bad files. */

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

#include "th_pcap.h"

static char path[64];

static int
setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_pcap_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* Byte writer for hand-made files in either byte order. */
struct hand {
	uint8_t buf[4096];
	size_t len;
	bool is_big;
};

static void
h32(struct hand *h, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		h->buf[h->len + i] = (uint8_t)(h->is_big ? v >> (24 - 8 * i) : v >> (8 * i));
	h->len += 4;
}

static void
h16(struct hand *h, uint16_t v)
{
	h->buf[h->len] = (uint8_t)(h->is_big ? v >> 8 : v);
	h->buf[h->len + 1] = (uint8_t)(h->is_big ? v : v >> 8);
	h->len += 2;
}

static void
hand_header(struct hand *h, uint32_t magic, uint32_t snaplen, uint32_t linktype)
{
	h32(h, magic);
	h16(h, 2);
	h16(h, 4);
	h32(h, 0);
	h32(h, 0);
	h32(h, snaplen);
	h32(h, linktype);
}

static void
hand_record(struct hand *h, uint32_t sec, uint32_t sub, uint32_t caplen, uint32_t wirelen,
	uint8_t fill, uint32_t present)
{
	h32(h, sec);
	h32(h, sub);
	h32(h, caplen);
	h32(h, wirelen);
	memset(h->buf + h->len, fill, present);
	h->len += present;
}

static void
save(const struct hand *h)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(h->buf, 1, h->len, f), h->len);
	fclose(f);
}

static void
test_round_trip(void **state)
{
	static const uint8_t a[] = {1, 2, 3, 4, 5}, b[100] = {9};
	struct th_pcap_writer *w;
	struct th_pcap_reader *r;
	struct th_pcap_rec rec;

	(void)state;
	w = th_pcap_writer_open(path, 1, 64);
	assert_non_null(w);
	assert_int_equal(th_pcap_write(w, 1700000000123456789ull, a, sizeof(a), 60), 0);
	/* Longer than the snap length: stored cut, with the wire length kept. */
	assert_int_equal(th_pcap_write(w, 1700000001000000001ull, b, sizeof(b), 100), 0);
	assert_int_equal(th_pcap_write(w, 5, a, 5, 4), -EINVAL);
	/* Past the 32-bit seconds: refused, not written wrapped to 1970; the writer goes on. */
	assert_int_equal(th_pcap_write(w, (UINT32_MAX + 1ull) * 1000000000ull, a, 5, 5), -ERANGE);
	assert_int_equal(th_pcap_writer_count(w), 2);
	assert_int_equal(th_pcap_writer_close(w), 0);

	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_int_equal(th_pcap_reader_linktype(r), 1);
	assert_int_equal(th_pcap_reader_snaplen(r), 64);
	assert_true(th_pcap_reader_is_nsec(r));
	assert_false(th_pcap_reader_is_swapped(r));
	assert_int_equal(th_pcap_read(r, &rec), 1);
	assert_int_equal(rec.ts_ns, 1700000000123456789ull);
	assert_int_equal(rec.caplen, 5);
	assert_int_equal(rec.wirelen, 60);
	assert_memory_equal(rec.data, a, 5);
	assert_int_equal(th_pcap_read(r, &rec), 1);
	assert_int_equal(rec.ts_ns, 1700000001000000001ull);
	assert_int_equal(rec.caplen, 64);
	assert_int_equal(rec.wirelen, 100);
	assert_memory_equal(rec.data, b, 64);
	assert_int_equal(th_pcap_read(r, &rec), 0);
	assert_int_equal(th_pcap_read(r, &rec), 0);
	assert_string_equal(th_pcap_reader_error(r), "");
	th_pcap_reader_close(r);
}

/* Microsecond and nanosecond files, little and big endian, made by hand. */
static void
check_hand_file(bool is_big, uint32_t magic)
{
	struct hand h = {.is_big = is_big};
	struct th_pcap_reader *r;
	struct th_pcap_rec rec;
	bool is_nsec = magic == TH_PCAP_MAGIC_NSEC;

	hand_header(&h, magic, 65535, 113);
	hand_record(&h, 1000, 999999, 10, 1514, 0xab, 10);
	hand_record(&h, 1001, 1, 0, 0, 0, 0);
	save(&h);
	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_int_equal(th_pcap_reader_linktype(r), 113);
	assert_int_equal(th_pcap_reader_snaplen(r), 65535);
	assert_int_equal(th_pcap_reader_is_nsec(r), is_nsec);
	assert_int_equal(th_pcap_read(r, &rec), 1);
	assert_int_equal(rec.ts_ns, 1000000000000ull + (is_nsec ? 999999ull : 999999000ull));
	assert_int_equal(rec.caplen, 10);
	assert_int_equal(rec.wirelen, 1514);
	assert_int_equal(rec.data[9], 0xab);
	assert_int_equal(th_pcap_read(r, &rec), 1);
	assert_int_equal(rec.ts_ns, 1001000000000ull + (is_nsec ? 1 : 1000));
	assert_int_equal(rec.caplen, 0);
	assert_int_equal(th_pcap_read(r, &rec), 0);
	th_pcap_reader_close(r);
}

static void
test_magics_and_orders(void **state)
{
	(void)state;
	check_hand_file(false, TH_PCAP_MAGIC_USEC);
	check_hand_file(false, TH_PCAP_MAGIC_NSEC);
	check_hand_file(true, TH_PCAP_MAGIC_USEC);
	check_hand_file(true, TH_PCAP_MAGIC_NSEC);
}

static void
test_swapped_flag(void **state)
{
	uint16_t one = 1;
	bool host_is_big = *(uint8_t *)&one == 0;
	struct hand h = {.is_big = !host_is_big};
	struct th_pcap_reader *r;

	(void)state;
	hand_header(&h, TH_PCAP_MAGIC_USEC, 100, 1);
	save(&h);
	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_true(th_pcap_reader_is_swapped(r));
	th_pcap_reader_close(r);
}

static void
test_truncated_last_record(void **state)
{
	struct hand h = {0};
	struct th_pcap_reader *r;
	struct th_pcap_rec rec;

	(void)state;
	hand_header(&h, TH_PCAP_MAGIC_NSEC, 65535, 1);
	hand_record(&h, 1, 0, 60, 60, 1, 60);
	hand_record(&h, 2, 0, 60, 60, 2, 30); /* the file ends 30 bytes early */
	save(&h);
	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_int_equal(th_pcap_read(r, &rec), 1);
	assert_int_equal(th_pcap_read(r, &rec), -EBADMSG);
	assert_non_null(strstr(th_pcap_reader_error(r), "record 2"));
	/* The error sticks: a caller looping until <= 0 stops. */
	assert_int_equal(th_pcap_read(r, &rec), -EBADMSG);
	th_pcap_reader_close(r);
	errno = 0;
	assert_null(th_pcap_load(path, NULL, 0));
	assert_int_equal(errno, EBADMSG);

	/* A file cut inside a record header. */
	h.len = 24 + 16 + 60 + 7;
	save(&h);
	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_int_equal(th_pcap_read(r, &rec), 1);
	assert_int_equal(th_pcap_read(r, &rec), -EBADMSG);
	th_pcap_reader_close(r);
}

static void
test_oversized_records(void **state)
{
	struct hand h = {0};
	struct th_pcap_reader *r;
	struct th_pcap_rec rec;

	(void)state;
	hand_header(&h, TH_PCAP_MAGIC_NSEC, 100, 1);
	hand_record(&h, 1, 0, 101, 101, 0, 101);
	save(&h);
	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_int_equal(th_pcap_read(r, &rec), -EBADMSG);
	assert_non_null(strstr(th_pcap_reader_error(r), "snap length"));
	th_pcap_reader_close(r);

	/* A snap length of 0 does not let a record claim gigabytes. */
	h.len = 0;
	hand_header(&h, TH_PCAP_MAGIC_NSEC, 0, 1);
	hand_record(&h, 1, 0, 0x7fffffff, 0x7fffffff, 0, 8);
	save(&h);
	r = th_pcap_reader_open(path);
	assert_non_null(r);
	assert_int_equal(th_pcap_read(r, &rec), -EBADMSG);
	th_pcap_reader_close(r);
}

/* The first record longer than the header's snap length, in either byte order, within max. */
static void
test_over_snaplen(void **state)
{
	struct th_pcap_scan sc;
	struct hand h = {0};

	(void)state;
	for (int big = 0; big < 2; big++) {
		h.len = 0;
		h.is_big = big;
		hand_header(&h, TH_PCAP_MAGIC_USEC, 100, 1);
		hand_record(&h, 1, 0, 60, 60, 1, 60);
		hand_record(&h, 1, 1, 100, 120, 2, 100); /* cut at the snap length: fine */
		hand_record(&h, 1, 2, 118, 118, 3, 118);
		save(&h);
		assert_int_equal(th_pcap_scan_records(path, 10, &sc), 0);
		assert_int_equal(sc.over_snaplen, 3);
		assert_int_equal(sc.snaplen, 100);
		assert_int_equal(sc.over_caplen, 118);
		assert_int_equal(sc.past_2038, 0);
		assert_int_equal(th_pcap_scan_records(path, 2, &sc), 0);
		assert_int_equal(sc.over_snaplen, 0);
	}
	/* A snap length of 0 is no limit; a file that is no pcap has no records to name. */
	h.len = 0;
	h.is_big = false;
	hand_header(&h, TH_PCAP_MAGIC_NSEC, 0, 1);
	hand_record(&h, 1, 0, 118, 118, 3, 118);
	save(&h);
	assert_int_equal(th_pcap_scan_records(path, 10, &sc), 0);
	assert_int_equal(sc.over_snaplen, 0);
	assert_int_equal(th_pcap_scan_records("/nonexistent/x.pcap", 10, &sc), -ENOENT);
}

/* Seconds past 2^31 - 1, which libpcap reads as before 1970: the first such record named. */
static void
test_past_2038(void **state)
{
	struct th_pcap_scan sc;
	struct hand h = {0};

	(void)state;
	for (int big = 0; big < 2; big++) {
		h.len = 0;
		h.is_big = big;
		hand_header(&h, TH_PCAP_MAGIC_NSEC, 65535, 1);
		hand_record(&h, 2147483647, 0, 60, 60, 1, 60); /* 2038-01-19 03:14:07: fine */
		hand_record(&h, 2147483648u, 0, 60, 60, 2, 60);
		hand_record(&h, 3000000000u, 0, 60, 60, 3, 60);
		save(&h);
		assert_int_equal(th_pcap_scan_records(path, 10, &sc), 0);
		assert_int_equal(sc.past_2038, 2);
		assert_int_equal(sc.past_secs, 2147483648u);
		assert_int_equal(sc.over_snaplen, 0);
	}
}

static void
test_not_pcap(void **state)
{
	struct hand h = {0};

	(void)state;
	save(&h);
	errno = 0;
	assert_null(th_pcap_reader_open(path));
	assert_int_equal(errno, EBADMSG);

	hand_header(&h, 0x0a0d0d0a, 0, 0);
	save(&h);
	assert_null(th_pcap_reader_open(path));
	assert_int_equal(errno, EPROTONOSUPPORT);

	h.len = 0;
	hand_header(&h, 0x12345678, 65535, 1);
	save(&h);
	assert_null(th_pcap_reader_open(path));
	assert_int_equal(errno, EBADMSG);

	assert_null(th_pcap_reader_open("/nonexistent/x.pcap"));
	assert_int_equal(errno, ENOENT);
	assert_null(th_pcap_writer_open(path, 1, 0));
	assert_int_equal(errno, EINVAL);
}

static void
test_load(void **state)
{
	struct th_pcap_writer *w;
	struct th_pcap_file *pf;
	uint8_t frame[300];
	char err[128];
	unsigned int i;

	(void)state;
	w = th_pcap_writer_open(path, 1, 65535);
	assert_non_null(w);
	for (i = 0; i < 5000; i++) {
		memset(frame, (int)i, sizeof(frame));
		assert_int_equal(th_pcap_write(w, 1000 + i, frame, 60 + i % 200, 60 + i % 200), 0);
	}
	assert_int_equal(th_pcap_writer_close(w), 0);
	pf = th_pcap_load(path, err, sizeof(err));
	assert_non_null(pf);
	assert_int_equal(pf->count, 5000);
	assert_int_equal(pf->linktype, 1);
	for (i = 0; i < 5000; i++) {
		assert_int_equal(pf->recs[i].ts_ns, 1000 + i);
		assert_int_equal(pf->recs[i].caplen, 60 + i % 200);
		assert_int_equal(pf->recs[i].data[0], (uint8_t)i);
		assert_int_equal(pf->recs[i].data[pf->recs[i].caplen - 1], (uint8_t)i);
	}
	th_pcap_file_free(pf);
	assert_null(th_pcap_load("/nonexistent/x.pcap", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/x.pcap"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_magics_and_orders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swapped_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_last_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_over_snaplen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_past_2038, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_pcap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
