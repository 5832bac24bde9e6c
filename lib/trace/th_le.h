/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_LE_H
#define TH_LE_H

/**
 * @file
 * Little-endian stores and loads, byte by byte, for the trace and segment
 * layouts: what is on disk never depends on the host's byte order or on a
 * pointer's alignment. Header only.
 */

#include <stdint.h>

static inline void
th_le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
th_le_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void
th_le_put64(uint8_t *p, uint64_t v)
{
	th_le_put32(p, (uint32_t)v);
	th_le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t
th_le_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
th_le_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
th_le_get64(const uint8_t *p)
{
	return (uint64_t)th_le_get32(p) | (uint64_t)th_le_get32(p + 4) << 32;
}

#endif /* TH_LE_H */
