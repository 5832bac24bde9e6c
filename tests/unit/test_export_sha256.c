/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * SHA-256 against FIPS 180-4 examples (NIST CSRC) and HMAC-SHA-256 against
 * RFC 4231 §4, with each block function this CPU has; where it has SHA-NI,
 * both also hash the same random messages and must agree.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "th_export.h"

static void
hex(const uint8_t *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static void
check_sha(const void *data, size_t size, const char *want)
{
	uint8_t md[32];
	char got[65];

	th_export_sha256(data, size, md);
	hex(md, sizeof(md), got);
	assert_string_equal(got, want);
}

static void
test_sha256_vectors(void **state)
{
	(void)state;
	check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check_sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
		  "qklmnopqrlmnopqrsmnopqrstnopqrstu",
		112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/* One million 'a's fed in uneven pieces: block boundaries fall everywhere. */
static void
test_sha256_million_a(void **state)
{
	struct th_export_sha256 s;
	uint8_t buf[997], md[32];
	char got[65];
	size_t left = 1000000;

	(void)state;
	memset(buf, 'a', sizeof(buf));
	th_export_sha256_init(&s);
	for (size_t piece = 1; left > 0; piece = piece % (sizeof(buf) - 7) + 7) {
		size_t n = piece < left ? piece : left;

		th_export_sha256_update(&s, buf, n);
		left -= n;
	}
	th_export_sha256_final(&s, md);
	hex(md, sizeof(md), got);
	assert_string_equal(
		got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static size_t
unhex(const char *s, uint8_t *out)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void
check_hmac(const char *key_hex, const char *data_hex, const char *want, size_t want_bytes)
{
	uint8_t key[256], data[256], mac[32];
	size_t key_size = unhex(key_hex, key), data_size = unhex(data_hex, data);
	char got[65];

	th_export_hmac_sha256(key, key_size, data, data_size, mac);
	hex(mac, want_bytes, got);
	assert_string_equal(got, want);
}

static void
test_hmac_rfc4231(void **state)
{
	char key[2 * 131 + 1];

	(void)state;
	/* Test case 1 */
	check_hmac("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
		"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32);
	/* Test case 2: a key shorter than the output */
	check_hmac("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32);
	/* Test case 3 */
	check_hmac("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
		"dddddddddddddddddddddddd",
		"773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32);
	/* Test case 4 */
	check_hmac("0102030405060708090a0b0c0d0e0f10111213141516171819",
		"cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
		"cdcdcdcdcdcdcdcdcdcdcdcd",
		"82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32);
	/* Test case 5: output truncated to 128 bits */
	check_hmac("0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c",
		"546573742057697468205472756e636174696f6e", "a3b6167473100ee06e0c796c2955552b", 16);
	/* Test cases 6 and 7: keys longer than a block are hashed first. */
	memset(key, 'a', 2 * 131);
	key[2 * 131] = '\0';
	check_hmac(key,
		"54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048"
		"617368204b6579204669727374",
		"60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32);
	check_hmac(key,
		"5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d"
		"73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174"
		"612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e"
		"6720757365642062792074686520484d414320616c676f726974686d2e",
		"9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32);
}

/* hmac2(a, b) is the HMAC of a||b, however the message is split. */
static void
test_hmac_split(void **state)
{
	struct th_export_hmac_key k;
	uint8_t one[32], two[32];
	const char msg[] = "what do ya want for nothing?";

	(void)state;
	th_export_hmac_init(&k, "Jefe", 4);
	th_export_hmac2(&k, msg, 10, msg + 10, sizeof(msg) - 1 - 10, two);
	th_export_hmac_sha256("Jefe", 4, msg, sizeof(msg) - 1, one);
	assert_memory_equal(one, two, 32);
}

/* Messages of every length up to four blocks and more, with random bytes: both engines agree. */
static void
test_engines_agree(void **state)
{
	uint8_t msg[300], a[32], b[32];
	uint64_t x = 88172645463325252u;
	size_t len, i;

	(void)state;
	for (len = 0; len < sizeof(msg); len++) {
		for (i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			msg[i] = (uint8_t)x;
		}
		assert_int_equal(th_export_sha256_set_engine("portable"), 0);
		th_export_sha256(msg, len, a);
		assert_int_equal(th_export_sha256_set_engine("sha-ni"), 0);
		th_export_sha256(msg, len, b);
		assert_memory_equal(a, b, sizeof(a));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_million_a),
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_hmac_split),
	};
	const struct CMUnitTest both[] = {
		cmocka_unit_test(test_engines_agree),
	};
	int rc;

	assert_int_equal(th_export_sha256_set_engine("md5"), -EINVAL);
	assert_int_equal(th_export_sha256_set_engine("portable"), 0);
	assert_string_equal(th_export_sha256_engine(), "portable");
	rc = cmocka_run_group_tests_name("portable", tests, NULL, NULL);
	if (th_export_sha256_set_engine("sha-ni") != 0) {
		printf("this CPU has no SHA extensions: the portable engine only\n");
		return rc;
	}
	assert_string_equal(th_export_sha256_engine(), "sha-ni");
	rc |= cmocka_run_group_tests_name("sha-ni", tests, NULL, NULL);
	rc |= cmocka_run_group_tests_name("both", both, NULL, NULL);
	return rc;
}
