/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_XDR_H
#define TH_XDR_H

/**
 * @file
 * XDR (RFC 4506) reading over a bounded buffer.
 *
 * A cursor never reads past its end. Every getter returns false once the
 * buffer is exhausted and leaves the cursor "short", so a decoder can read a
 * run of fields and check th_xdr_ok() once. Records captured on the wire are
 * often cut (snap length, a record prefix that skipped payload), so "short"
 * is an expected outcome, distinct from "malformed" (a value out of range).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "th_bytes.h"

struct th_xdr {
	const uint8_t *p;   /**< next byte to read */
	const uint8_t *end; /**< one past the last readable byte */
	bool is_short;      /**< a read ran past end */
};

static inline void
th_xdr_init(struct th_xdr *x, const void *buf, size_t size)
{
	x->p = buf;
	x->end = x->p + size;
	x->is_short = false;
}

static inline bool
th_xdr_ok(const struct th_xdr *x)
{
	return !x->is_short;
}

static inline size_t
th_xdr_left(const struct th_xdr *x)
{
	return (size_t)(x->end - x->p);
}

static inline bool
th_xdr_u32(struct th_xdr *x, uint32_t *v)
{
	if (th_xdr_left(x) < 4) {
		x->is_short = true;
		x->p = x->end;
		return false;
	}
	*v = th_be_get32(x->p);
	x->p += 4;
	return true;
}

static inline bool
th_xdr_u64(struct th_xdr *x, uint64_t *v)
{
	uint32_t hi, lo;

	if (!th_xdr_u32(x, &hi) || !th_xdr_u32(x, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/** Skip @p size bytes plus XDR padding to a multiple of four. */
static inline bool
th_xdr_skip(struct th_xdr *x, size_t size)
{
	size_t padded = (size + 3) & ~(size_t)3;

	if (size > SIZE_MAX - 3 || th_xdr_left(x) < padded) {
		x->is_short = true;
		x->p = x->end;
		return false;
	}
	x->p += padded;
	return true;
}

/**
 * Read variable-length opaque data (length word, bytes, padding).
 * @p data points into the buffer; lengths above @p max are malformed and
 * set *len to UINT32_MAX so the caller can tell them from a short read.
 */
static inline bool
th_xdr_opaque(struct th_xdr *x, uint32_t max, const uint8_t **data, uint32_t *len)
{
	if (!th_xdr_u32(x, len))
		return false;
	if (*len > max) {
		*len = UINT32_MAX;
		return false;
	}
	*data = x->p;
	return th_xdr_skip(x, *len);
}

#endif /* TH_XDR_H */
