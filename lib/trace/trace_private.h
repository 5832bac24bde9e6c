/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TRACE_PRIVATE_H
#define TRACE_PRIVATE_H

/*
 * Varint, address and bounded-cursor helpers of the chunk codec (chunk.c).
 * Byte order is th_bytes.h (little-endian).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "th_bytes.h"
#include "th_pkt.h"
#include "th_trace.h"

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

/* A bounded cursor over what is left of a chunk: every read checks the bytes remain. */
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
		th_addr_set_v4(a, c->p);
		c->p += 4;
		return 0;
	}
	if (!has(c, 16))
		return -EBADMSG;
	memcpy(a->b, c->p, 16);
	c->p += 16;
	return th_addr_is_v4(a) ? -EBADMSG : 0;
}

#endif /* TRACE_PRIVATE_H */
