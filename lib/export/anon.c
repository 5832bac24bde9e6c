/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Keyed pseudonyms. Every kind of value has its own domain tag in the HMAC
 * input, so a uid and a gid (or an address and a handle) with the same bytes
 * get unrelated pseudonyms.
 */

#include "th_export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prefix-preserving pseudonyms cost one HMAC per address bit (128 for IPv6); addresses repeat
 * in a trace, so each is computed once and cached. */
struct cache_ent {
	struct th_addr in;
	struct th_addr out;
	bool is_used;
};

struct th_export_anon {
	struct th_export_hmac_key key; /**< prepared HMAC key */
	bool is_prefix_preserving;     /**< Crypto-PAn-like addresses */
	struct cache_ent *cache;       /**< open addressing, power-of-two size */
	size_t cache_size;             /**< slots */
	size_t cache_used;             /**< slots in use */
};

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

struct th_export_anon *
th_export_anon_create(const void *key, size_t key_size, bool is_prefix_preserving)
{
	struct th_export_anon *a;

	if (key == NULL || key_size == 0) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	th_export_hmac_init(&a->key, key, key_size);
	a->is_prefix_preserving = is_prefix_preserving;
	a->cache_size = 1024;
	a->cache = calloc(a->cache_size, sizeof(*a->cache));
	if (a->cache == NULL) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

void
th_export_anon_free(struct th_export_anon *a)
{
	if (a == NULL)
		return;
	free(a->cache);
	/* The key states let anyone recompute pseudonyms: do not leave them in freed memory. */
	memset(&a->key, 0, sizeof(a->key));
	free(a);
}

int
th_export_anon_load_key(const char *path, uint8_t *key, size_t size, size_t *key_size)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (;;) {
		if (n == size) {
			uint8_t extra;

			r = read(fd, &extra, 1);
			if (r > 0) {
				close(fd);
				return -EFBIG;
			}
			break;
		}
		r = read(fd, key + n, size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n < 16)
		return -EINVAL;
	*key_size = n;
	return 0;
}

static uint64_t
addr_hash(const struct th_addr *a)
{
	uint64_t x, y;

	memcpy(&x, a->b, 8);
	memcpy(&y, a->b + 8, 8);
	x ^= y * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 32);
}

static void
prefix_preserving(const struct th_export_anon *a, const struct th_addr *in, struct th_addr *out)
{
	bool is_v4 = memcmp(in->b, v4_mapped, sizeof(v4_mapped)) == 0;
	const uint8_t *src = is_v4 ? in->b + 12 : in->b;
	unsigned int bits = is_v4 ? 32 : 128, i;
	uint8_t prefix[16], res[16], tag[2] = {'p', is_v4 ? 4 : 6}, mac[TH_EXPORT_SHA256_SIZE];

	memset(prefix, 0, sizeof(prefix));
	memset(res, 0, sizeof(res));
	for (i = 0; i < bits; i++) {
		uint8_t in_bit = (uint8_t)(src[i / 8] >> (7 - i % 8) & 1);
		uint8_t msg[17];

		/* Bit i is flipped by a function of bits 0..i-1 only: equal prefixes stay equal. */
		msg[0] = (uint8_t)i;
		memcpy(msg + 1, prefix, 16);
		th_export_hmac2(&a->key, tag, sizeof(tag), msg, sizeof(msg), mac);
		res[i / 8] |= (uint8_t)((in_bit ^ (mac[0] >> 7)) << (7 - i % 8));
		prefix[i / 8] |= (uint8_t)(in_bit << (7 - i % 8));
	}
	if (is_v4) {
		memcpy(out->b, v4_mapped, sizeof(v4_mapped));
		memcpy(out->b + 12, res, 4);
	} else {
		memcpy(out->b, res, 16);
		/* An IPv6 pseudonym that happens to look IPv4-mapped would change the family. */
		if (memcmp(out->b, v4_mapped, sizeof(v4_mapped)) == 0)
			out->b[0] = 0x20;
	}
}

static void
flat(const struct th_export_anon *a, const struct th_addr *in, struct th_addr *out)
{
	bool is_v4 = memcmp(in->b, v4_mapped, sizeof(v4_mapped)) == 0;
	uint8_t tag[2] = {'a', is_v4 ? 4 : 6}, mac[TH_EXPORT_SHA256_SIZE];

	th_export_hmac2(&a->key, tag, sizeof(tag), in->b, sizeof(in->b), mac);
	if (is_v4) {
		memcpy(out->b, v4_mapped, sizeof(v4_mapped));
		memcpy(out->b + 12, mac, 4);
	} else {
		memcpy(out->b, mac, 16);
		if (memcmp(out->b, v4_mapped, sizeof(v4_mapped)) == 0)
			out->b[0] = 0x20;
	}
}

static void
cache_grow(struct th_export_anon *a)
{
	size_t size = a->cache_size * 2, i;
	struct cache_ent *c = calloc(size, sizeof(*c));

	/* Without memory the cache stays as it is: pseudonyms are recomputed, never wrong. */
	if (c == NULL)
		return;
	for (i = 0; i < a->cache_size; i++) {
		size_t j;

		if (!a->cache[i].is_used)
			continue;
		for (j = addr_hash(&a->cache[i].in) & (size - 1); c[j].is_used;
			j = (j + 1) & (size - 1))
			;
		c[j] = a->cache[i];
	}
	free(a->cache);
	a->cache = c;
	a->cache_size = size;
}

void
th_export_anon_addr(struct th_export_anon *a, const struct th_addr *in, struct th_addr *out)
{
	size_t mask = a->cache_size - 1, j;

	for (j = addr_hash(in) & mask; a->cache[j].is_used; j = (j + 1) & mask) {
		if (memcmp(&a->cache[j].in, in, sizeof(*in)) == 0) {
			*out = a->cache[j].out;
			return;
		}
	}
	if (a->is_prefix_preserving)
		prefix_preserving(a, in, out);
	else
		flat(a, in, out);
	if (a->cache_used * 2 >= a->cache_size) {
		cache_grow(a);
		mask = a->cache_size - 1;
		for (j = addr_hash(in) & mask; a->cache[j].is_used; j = (j + 1) & mask)
			;
		/* Still half full: the cache could not grow, so this address is not kept. */
		if (a->cache_used * 2 >= a->cache_size)
			return;
	}
	a->cache[j].in = *in;
	a->cache[j].out = *out;
	a->cache[j].is_used = true;
	a->cache_used++;
}

static uint32_t
anon_u32(const struct th_export_anon *a, char kind, uint32_t v)
{
	uint8_t tag[1] = {(uint8_t)kind}, msg[4], mac[TH_EXPORT_SHA256_SIZE];

	msg[0] = (uint8_t)v, msg[1] = (uint8_t)(v >> 8), msg[2] = (uint8_t)(v >> 16);
	msg[3] = (uint8_t)(v >> 24);
	th_export_hmac2(&a->key, tag, sizeof(tag), msg, sizeof(msg), mac);
	return (uint32_t)mac[0] << 24 | (uint32_t)mac[1] << 16 | (uint32_t)mac[2] << 8 | mac[3];
}

uint32_t
th_export_anon_uid(const struct th_export_anon *a, uint32_t uid)
{
	return anon_u32(a, 'u', uid);
}

uint32_t
th_export_anon_gid(const struct th_export_anon *a, uint32_t gid)
{
	return anon_u32(a, 'g', gid);
}

void
th_export_anon_fh(const struct th_export_anon *a, const uint8_t *fh, unsigned int fh_len,
	uint8_t out[TH_EXPORT_ANON_FH_SIZE])
{
	uint8_t tag[1] = {'f'}, mac[TH_EXPORT_SHA256_SIZE];

	th_export_hmac2(&a->key, tag, sizeof(tag), fh, fh_len, mac);
	memcpy(out, mac, TH_EXPORT_ANON_FH_SIZE);
}

size_t
th_export_anon_path(
	const struct th_export_anon *a, const char *path, size_t path_len, char *out, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t tag[1] = {'n'}, mac[TH_EXPORT_SHA256_SIZE];
	size_t i = 0, o = 0;

	if (size == 0)
		return 0;
	while (i < path_len) {
		size_t j = i;

		if (path[i] == '/') {
			if (o + 1 < size)
				out[o++] = '/';
			i++;
			continue;
		}
		while (j < path_len && path[j] != '/')
			j++;
		th_export_hmac2(&a->key, tag, sizeof(tag), path + i, j - i, mac);
		for (unsigned int k = 0; k < 8 && o + 2 < size; k++) {
			out[o++] = digits[mac[k] >> 4];
			out[o++] = digits[mac[k] & 15];
		}
		i = j;
	}
	out[o] = '\0';
	return o;
}
