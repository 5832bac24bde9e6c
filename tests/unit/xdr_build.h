/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_TEST_XDR_BUILD_H
#define TH_TEST_XDR_BUILD_H

/*
 * Building XDR messages in tests: big-endian words, opaque data padded to
 * four bytes. Include after <cmocka.h>: overflowing the buffer fails the test.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "th_bytes.h"

struct xb {
	uint8_t b[4096];
	size_t n;
};

static inline void
put32(struct xb *x, uint32_t v)
{
	assert_true(x->n + 4 <= sizeof(x->b));
	th_be_put32(x->b + x->n, v);
	x->n += 4;
}

static inline void
put64(struct xb *x, uint64_t v)
{
	put32(x, (uint32_t)(v >> 32));
	put32(x, (uint32_t)v);
}

/* Fixed-length opaque: the bytes and padding, no length word. */
static inline void
put_fixed(struct xb *x, const void *p, size_t size)
{
	assert_true(x->n + size + 3 <= sizeof(x->b));
	memcpy(x->b + x->n, p, size);
	x->n += size;
	while (x->n % 4)
		x->b[x->n++] = 0;
}

static inline void
put_opaque(struct xb *x, const void *p, uint32_t size)
{
	put32(x, size);
	put_fixed(x, p, size);
}

static inline void
put_str(struct xb *x, const char *s)
{
	put_opaque(x, s, (uint32_t)strlen(s));
}

#endif /* TH_TEST_XDR_BUILD_H */
