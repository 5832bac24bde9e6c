/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Keyed pseudonyms. Every kind of value has its own domain tag in the HMAC
 * input, so a uid and a gid (or an address and a handle) with the same bytes
 * get unrelated pseudonyms.
 */

#include "th_export.h"
#include "export_private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "th_bytes.h"
#include "th_sat.h"

/*
 * A pseudonym costs an HMAC (a prefix-preserving address one per bit: 128 for IPv6) and a
 * trace repeats its addresses, users and handles, so each pseudonym is kept once computed.
 * One bounded set-associative table (lib/sat) per kind of value, allocated at its full size
 * with the key and never grown, its pages mapped in as they fill: a value whose set is full
 * replaces the set's oldest entry, and the replacement is counted. A replaced pseudonym is
 * computed again when its value comes back: slower, never different.
 */
#define ADDR_ENTRIES 262144 /* addresses: 10 MB */
#define ID_ENTRIES 4096     /* uids and gids: 57 KB */
#define FH_ENTRIES 262144   /* handles: 22 MB */
#define ID_KEY_SIZE 5       /* kind tag, value (little-endian) */

/*
 * An entry: key length, key (key_max bytes), pseudonym (out_size). A full set
 * gives up the entry made first (th_sat_claim_turn()).
 */
struct cache {
	struct th_sat t;
	uint16_t key_max;  /**< key bytes at most */
	uint16_t out_size; /**< pseudonym bytes */
	uint64_t made;     /**< entries made so far */
	uint64_t replaced; /**< entries given up for newer values */
};

/*
 * uids and gids repeat on nearly every record and are few: a direct-mapped
 * memo of their pseudonyms (8 KB) answers before the table, whose lookup
 * (hash, key copy, compare) cost two of a record's five.
 */
#define ID_MEMO 512

struct id_memo {
	uint64_t key; /* 1 << 40 | kind << 32 | value; 0: empty */
	uint32_t out; /* the pseudonym */
};

struct th_export_anon {
	struct th_export_hmac_key key; /**< prepared HMAC key */
	bool is_prefix_preserving;     /**< Crypto-PAn-like addresses */
	struct cache addrs;            /**< address -> address pseudonym */
	struct cache ids;              /**< ('u' or 'g', value) -> 32-bit pseudonym */
	struct cache fhs;              /**< handle -> TH_EXPORT_ANON_FH_SIZE bytes */
	struct id_memo id_memo[ID_MEMO]; /**< recent ids, in front of ids */
};

static int
cache_init(struct cache *c, uint32_t entries, unsigned int key_max, unsigned int out_size)
{
	c->key_max = (uint16_t)key_max;
	c->out_size = (uint16_t)out_size;
	return th_sat_init_lazy(&c->t, entries, 1 + key_max + out_size);
}

/*
 * Where the pseudonym of @p key (@p len bytes, at most the table's key_max) is kept.
 * *is_new says it was not there: the entry is then the key's, and the caller writes the
 * pseudonym into it.
 */
static uint8_t *
cache_get(struct cache *c, const uint8_t *key, size_t len, bool *is_new)
{
	uint8_t k[1 + TH_TRACE_FH_MAX], *e;
	uint32_t h = th_sat_hash(key, len);
	bool evicted;

	k[0] = (uint8_t)len;
	memcpy(k + 1, key, len);
	e = th_sat_find(&c->t, h, k, 1 + len);
	*is_new = e == NULL;
	if (e == NULL) {
		e = th_sat_claim_turn(&c->t, h, &evicted);
		c->replaced += evicted;
		memcpy(e, k, 1 + len);
		c->made++;
	}
	return e + 1 + c->key_max;
}

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
	if (cache_init(&a->addrs, ADDR_ENTRIES, sizeof(struct th_addr), sizeof(struct th_addr)) <
			0 ||
		cache_init(&a->ids, ID_ENTRIES, ID_KEY_SIZE, sizeof(uint32_t)) < 0 ||
		cache_init(&a->fhs, FH_ENTRIES, TH_TRACE_FH_MAX, TH_EXPORT_ANON_FH_SIZE) < 0) {
		th_export_anon_free(a);
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
	th_sat_fini(&a->addrs.t);
	th_sat_fini(&a->ids.t);
	th_sat_fini(&a->fhs.t);
	/* The key states let anyone recompute pseudonyms: do not leave them in freed memory. */
	memset(&a->key, 0, sizeof(a->key));
	free(a);
}

void
th_export_anon_counters(const struct th_export_anon *a, struct th_export_anon_counters *c)
{
	c->addrs = a->addrs.made;
	c->ids = a->ids.made;
	c->fhs = a->fhs.made;
	c->replaced = a->addrs.replaced + a->ids.replaced + a->fhs.replaced;
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

/* @p out: an address of the input's family made of the first bytes of @p bytes. */
static void
put_pseudonym(bool is_v4, const uint8_t *bytes, struct th_addr *out)
{
	if (is_v4) {
		th_addr_set_v4(out, bytes);
		return;
	}
	memcpy(out->b, bytes, 16);
	/* An IPv6 pseudonym that happens to look IPv4-mapped would change the family. */
	if (th_addr_is_v4(out))
		out->b[0] = 0x20;
}

static void
prefix_preserving(const struct th_export_anon *a, const struct th_addr *in, struct th_addr *out)
{
	bool is_v4 = th_addr_is_v4(in);
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
	put_pseudonym(is_v4, res, out);
}

static void
flat(const struct th_export_anon *a, const struct th_addr *in, struct th_addr *out)
{
	bool is_v4 = th_addr_is_v4(in);
	uint8_t tag[2] = {'a', is_v4 ? 4 : 6}, mac[TH_EXPORT_SHA256_SIZE];

	th_export_hmac2(&a->key, tag, sizeof(tag), in->b, sizeof(in->b), mac);
	put_pseudonym(is_v4, mac, out);
}

void
th_export_anon_addr(struct th_export_anon *a, const struct th_addr *in, struct th_addr *out)
{
	bool is_new;
	uint8_t *p = cache_get(&a->addrs, in->b, sizeof(in->b), &is_new);

	if (is_new) {
		struct th_addr pseudo;

		if (a->is_prefix_preserving)
			prefix_preserving(a, in, &pseudo);
		else
			flat(a, in, &pseudo);
		memcpy(p, pseudo.b, sizeof(pseudo.b));
	}
	memcpy(out->b, p, sizeof(out->b));
}

static uint32_t
anon_u32(struct th_export_anon *a, char kind, uint32_t v)
{
	uint8_t key[ID_KEY_SIZE] = {(uint8_t)kind}, mac[TH_EXPORT_SHA256_SIZE], *p;
	uint64_t tagged = 1ull << 40 | (uint64_t)(uint8_t)kind << 32 | v;
	struct id_memo *m = &a->id_memo[(uint32_t)(tagged * 0x9e3779b97f4a7c15ull >> 32) % ID_MEMO];
	bool is_new;
	uint32_t out;

	if (m->key == tagged)
		return m->out;
	th_le_put32(key + 1, v);
	p = cache_get(&a->ids, key, sizeof(key), &is_new);
	if (!is_new) {
		memcpy(&out, p, sizeof(out));
	} else {
		/* The HMAC of the tag, then the value's 4 bytes (the key, in that order). */
		th_export_hmac2(&a->key, key, 1, key + 1, sizeof(key) - 1, mac);
		out = th_be_get32(mac);
		memcpy(p, &out, sizeof(out));
	}
	m->key = tagged;
	m->out = out;
	return out;
}

uint32_t
th_export_anon_uid(struct th_export_anon *a, uint32_t uid)
{
	return anon_u32(a, 'u', uid);
}

uint32_t
th_export_anon_gid(struct th_export_anon *a, uint32_t gid)
{
	return anon_u32(a, 'g', gid);
}

void
th_export_anon_fh(struct th_export_anon *a, const uint8_t *fh, unsigned int fh_len,
	uint8_t out[TH_EXPORT_ANON_FH_SIZE])
{
	uint8_t tag[1] = {'f'}, mac[TH_EXPORT_SHA256_SIZE], *p = NULL;
	bool is_new = true;

	/* A handle longer than any NFS version allows is not kept (nor seen in a trace). */
	if (fh_len <= TH_TRACE_FH_MAX)
		p = cache_get(&a->fhs, fh, fh_len, &is_new);
	if (!is_new) {
		memcpy(out, p, TH_EXPORT_ANON_FH_SIZE);
		return;
	}
	th_export_hmac2(&a->key, tag, sizeof(tag), fh, fh_len, mac);
	memcpy(out, mac, TH_EXPORT_ANON_FH_SIZE);
	if (p != NULL)
		memcpy(p, mac, TH_EXPORT_ANON_FH_SIZE);
}

void
th_export__anon_hashes(const struct th_addr *client, const struct th_addr *server,
	const uint8_t *fh, unsigned int fh_len, uint32_t h[3])
{
	h[0] = th_sat_hash(client->b, sizeof(client->b));
	h[1] = th_sat_hash(server->b, sizeof(server->b));
	h[2] = th_sat_hash(fh, fh_len);
}

void
th_export__anon_prefetch(const struct th_export_anon *a, const uint32_t h[3], bool is_entries)
{
	if (is_entries) {
		th_sat_prefetch_entries(&a->addrs.t, h[0]);
		th_sat_prefetch_entries(&a->addrs.t, h[1]);
		th_sat_prefetch_entries(&a->fhs.t, h[2]);
	} else {
		th_sat_prefetch(&a->addrs.t, h[0]);
		th_sat_prefetch(&a->addrs.t, h[1]);
		th_sat_prefetch(&a->fhs.t, h[2]);
	}
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
