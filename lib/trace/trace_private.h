/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TRACE_PRIVATE_H
#define TRACE_PRIVATE_H

/*
 * Byte order, varint and bounded-cursor helpers shared by the record codec
 * (trace.c) and the chunk codec (chunk.c).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "th_trace.h"

#define VARINT_MAX 10

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline uint8_t *
put_var(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline bool
is_v4(const struct th_addr *a)
{
	return memcmp(a->b, v4_prefix, sizeof(v4_prefix)) == 0;
}

/* A bounded cursor over one record body: every read checks what is left. */
struct cur {
	const uint8_t *p;
	const uint8_t *end;
};

static inline bool
has(const struct cur *c, size_t n)
{
	return (size_t)(c->end - c->p) >= n;
}

/*
 * One varint no wider than @max. Refused: running out of bytes, more than
 * ten bytes, bits beyond @max, and a last group of zero after the first (an
 * overlong spelling of a shorter value).
 */
static inline int
get_var(struct cur *c, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (c->p == c->end)
			return -EBADMSG;
		b = *c->p++;
		if (shift == 63 && b > 1)
			return -EBADMSG;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (b == 0 && shift != 0)
				return -EBADMSG;
			if (x > max)
				return -EBADMSG;
			*v = x;
			return 0;
		}
	}
	return -EBADMSG;
}

static inline int
get_var32(struct cur *c, uint32_t *v)
{
	uint64_t x = 0;
	int ret = get_var(c, UINT32_MAX, &x);

	*v = (uint32_t)x;
	return ret;
}

static inline int
get_var16(struct cur *c, uint16_t *v)
{
	uint64_t x = 0;
	int ret = get_var(c, UINT16_MAX, &x);

	*v = (uint16_t)x;
	return ret;
}

/* An address in 4 or 16 bytes; 16 bytes that are IPv4-mapped are a second spelling. */
static inline int
get_addr(struct cur *c, bool v4, struct th_addr *a)
{
	if (v4) {
		if (!has(c, 4))
			return -EBADMSG;
		memcpy(a->b, v4_prefix, sizeof(v4_prefix));
		memcpy(a->b + 12, c->p, 4);
		c->p += 4;
		return 0;
	}
	if (!has(c, 16))
		return -EBADMSG;
	memcpy(a->b, c->p, 16);
	c->p += 16;
	return is_v4(a) ? -EBADMSG : 0;
}

#endif /* TRACE_PRIVATE_H */
