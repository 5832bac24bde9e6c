/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * SHA-256 (FIPS 180-4 §6.2) and HMAC-SHA-256 (RFC 2104), written from the
 * specifications. The block function is portable C, or on x86-64 CPUs with
 * the SHA extensions their two-rounds-per-instruction form (chosen at load
 * time; th_export_sha256_set_engine() overrides for tests and benchmarks).
 */

#include "th_export.h"

#include <errno.h>
#include <string.h>

#include "th_bytes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI 1
#endif

static const uint32_t k256[64] = {
	0x428a2f98,
	0x71374491,
	0xb5c0fbcf,
	0xe9b5dba5,
	0x3956c25b,
	0x59f111f1,
	0x923f82a4,
	0xab1c5ed5,
	0xd807aa98,
	0x12835b01,
	0x243185be,
	0x550c7dc3,
	0x72be5d74,
	0x80deb1fe,
	0x9bdc06a7,
	0xc19bf174,
	0xe49b69c1,
	0xefbe4786,
	0x0fc19dc6,
	0x240ca1cc,
	0x2de92c6f,
	0x4a7484aa,
	0x5cb0a9dc,
	0x76f988da,
	0x983e5152,
	0xa831c66d,
	0xb00327c8,
	0xbf597fc7,
	0xc6e00bf3,
	0xd5a79147,
	0x06ca6351,
	0x14292967,
	0x27b70a85,
	0x2e1b2138,
	0x4d2c6dfc,
	0x53380d13,
	0x650a7354,
	0x766a0abb,
	0x81c2c92e,
	0x92722c85,
	0xa2bfe8a1,
	0xa81a664b,
	0xc24b8b70,
	0xc76c51a3,
	0xd192e819,
	0xd6990624,
	0xf40e3585,
	0x106aa070,
	0x19a4c116,
	0x1e376c08,
	0x2748774c,
	0x34b0bcb5,
	0x391c0cb3,
	0x4ed8aa4a,
	0x5b9cca4f,
	0x682e6ff3,
	0x748f82ee,
	0x78a5636f,
	0x84c87814,
	0x8cc70208,
	0x90befffa,
	0xa4506ceb,
	0xbef9a3f7,
	0xc67178f2,
};

static inline uint32_t
ror(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static void
compress_portable(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = th_be_get32(p + 4 * i);
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
			      k256[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

#ifdef HAVE_SHA_NI
/*
 * The same 64 rounds with SHA-NI. sha256rnds2 runs two rounds on the state
 * held as {A,B,E,F} and {C,D,G,H} (A in the top lane) with W+K in the low two
 * lanes; sha256msg1/msg2 extend the schedule four words at a time:
 * W[t..t+3] = msg2(msg1(W[t-16..t-13], W[t-12..t-9]) + W[t-7..t-4], W[t-4..t-1]).
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void
compress_sha_ni(uint32_t h[8], const uint8_t *p)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i abef, cdgh, abef0, cdgh0, t, w[4], wk;
	unsigned g;

	/* {A,B,C,D} {E,F,G,H} (A in lane 0) to {F,E,B,A} {H,G,D,C}. */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xB1);
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1B);
	abef = _mm_alignr_epi8(t, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, t, 0xF0);
	abef0 = abef;
	cdgh0 = cdgh;
	for (g = 0; g < 16; g++) {
		if (g < 4) {
			w[g] = _mm_shuffle_epi8(
				_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
		} else {
			t = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
			t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
			w[g & 3] = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
		}
		wk = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)(k256 + 4 * g)));
		cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
		abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
	}
	abef = _mm_add_epi32(abef, abef0);
	cdgh = _mm_add_epi32(cdgh, cdgh0);
	/* Back to {A,B,C,D} {E,F,G,H}. */
	t = _mm_shuffle_epi32(abef, 0x1B);
	cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
	_mm_storeu_si128((__m128i *)h, _mm_blend_epi16(t, cdgh, 0xF0));
	_mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(cdgh, t, 8));
}

static bool
cpu_has_sha_ni(void)
{
	unsigned a, b, c, d;

	/* Leaf 1: SSSE3 (ECX bit 9), SSE4.1 (bit 19); leaf 7: SHA (EBX bit 29). */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & 1u << 9) || !(c & 1u << 19))
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & 1u << 29);
}
#endif

static void (*compress)(uint32_t h[8], const uint8_t *p) = compress_portable;

#ifdef HAVE_SHA_NI
__attribute__((constructor)) static void
pick_engine(void)
{
	if (cpu_has_sha_ni())
		compress = compress_sha_ni;
}
#endif

const char *
th_export_sha256_engine(void)
{
	return compress == compress_portable ? "portable" : "sha-ni";
}

int
th_export_sha256_set_engine(const char *name)
{
	if (name == NULL)
		return -EINVAL;
	if (strcmp(name, "portable") == 0) {
		compress = compress_portable;
		return 0;
	}
	if (strcmp(name, "sha-ni") != 0)
		return -EINVAL;
#ifdef HAVE_SHA_NI
	if (cpu_has_sha_ni()) {
		compress = compress_sha_ni;
		return 0;
	}
#endif
	return -ENOTSUP;
}

void
th_export_sha256_init(struct th_export_sha256 *s)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
		0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

	memcpy(s->h, iv, sizeof(iv));
	s->total = 0;
	s->buf_size = 0;
}

void
th_export_sha256_update(struct th_export_sha256 *s, const void *data, size_t size)
{
	const uint8_t *p = data;

	s->total += size;
	if (s->buf_size > 0) {
		size_t n = 64 - s->buf_size < size ? 64 - s->buf_size : size;

		memcpy(s->buf + s->buf_size, p, n);
		s->buf_size += n;
		p += n;
		size -= n;
		if (s->buf_size < 64)
			return;
		compress(s->h, s->buf);
		s->buf_size = 0;
	}
	for (; size >= 64; p += 64, size -= 64)
		compress(s->h, p);
	memcpy(s->buf, p, size);
	s->buf_size = size;
}

void
th_export_sha256_final(struct th_export_sha256 *s, uint8_t out[TH_EXPORT_SHA256_SIZE])
{
	uint64_t bits = s->total * 8;
	int i;

	/* Padding: 0x80, zeros to 56 mod 64, then the message length in bits, big-endian. */
	s->buf[s->buf_size++] = 0x80;
	if (s->buf_size > 56) {
		memset(s->buf + s->buf_size, 0, 64 - s->buf_size);
		compress(s->h, s->buf);
		s->buf_size = 0;
	}
	memset(s->buf + s->buf_size, 0, 56 - s->buf_size);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	compress(s->h, s->buf);
	for (i = 0; i < 8; i++)
		th_be_put32(out + 4 * i, s->h[i]);
}

void
th_export_sha256(const void *data, size_t size, uint8_t out[TH_EXPORT_SHA256_SIZE])
{
	struct th_export_sha256 s;

	th_export_sha256_init(&s);
	th_export_sha256_update(&s, data, size);
	th_export_sha256_final(&s, out);
}

void
th_export_hmac_init(struct th_export_hmac_key *k, const void *key, size_t key_size)
{
	uint8_t block[TH_EXPORT_SHA256_BLOCK], pad[TH_EXPORT_SHA256_BLOCK];
	int i;

	/* RFC 2104 §2: a key longer than the block is hashed first; shorter ones are zero-padded.
	 */
	memset(block, 0, sizeof(block));
	if (key_size > sizeof(block))
		th_export_sha256(key, key_size, block);
	else if (key_size > 0)
		memcpy(block, key, key_size);
	/* The padded key blocks are hashed once here; every HMAC starts from these states. */
	for (i = 0; i < TH_EXPORT_SHA256_BLOCK; i++)
		pad[i] = block[i] ^ 0x36;
	th_export_sha256_init(&k->inner);
	th_export_sha256_update(&k->inner, pad, sizeof(pad));
	for (i = 0; i < TH_EXPORT_SHA256_BLOCK; i++)
		pad[i] = block[i] ^ 0x5c;
	th_export_sha256_init(&k->outer);
	th_export_sha256_update(&k->outer, pad, sizeof(pad));
}

void
th_export_hmac2(const struct th_export_hmac_key *k, const void *a, size_t a_size, const void *b,
	size_t b_size, uint8_t out[TH_EXPORT_SHA256_SIZE])
{
	struct th_export_sha256 s = k->inner;
	uint8_t inner[TH_EXPORT_SHA256_SIZE];

	if (a_size > 0)
		th_export_sha256_update(&s, a, a_size);
	if (b_size > 0)
		th_export_sha256_update(&s, b, b_size);
	th_export_sha256_final(&s, inner);
	s = k->outer;
	th_export_sha256_update(&s, inner, sizeof(inner));
	th_export_sha256_final(&s, out);
}

void
th_export_hmac_sha256(const void *key, size_t key_size, const void *data, size_t size,
	uint8_t out[TH_EXPORT_SHA256_SIZE])
{
	struct th_export_hmac_key k;

	th_export_hmac_init(&k, key, key_size);
	th_export_hmac2(&k, data, size, NULL, 0, out);
}
