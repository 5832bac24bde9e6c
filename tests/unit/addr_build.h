/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_TEST_ADDR_BUILD_H
#define TH_TEST_ADDR_BUILD_H

/* Addresses in tests: a.b.c.d as tracehound stores it (IPv4-mapped IPv6). */

#include <stdint.h>
#include <string.h>

#include "th_pkt.h"

static inline void
set_v4(struct th_addr *a, uint8_t x, uint8_t y, uint8_t z, uint8_t w)
{
	memset(a, 0, sizeof(*a));
	a->b[10] = 0xff;
	a->b[11] = 0xff;
	a->b[12] = x;
	a->b[13] = y;
	a->b[14] = z;
	a->b[15] = w;
}

#endif /* TH_TEST_ADDR_BUILD_H */
