/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_BYTES_H
#define TH_BYTES_H

/**
 * @file
 * Byte-order loads and stores, byte by byte: big-endian for what arrives
 * on the wire (Ethernet, IP, XDR, record marks) and what SHA-256 and HMAC
 * define, little-endian for the trace and segment layouts. Nothing depends on
 * the host's byte order or on a pointer's alignment; compilers turn each into
 * one load or store and a byte swap. Header only.
 */

#include <stdint.h>

static inline uint16_t
th_be_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
th_be_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
th_be_get64(const uint8_t *p)
{
	return (uint64_t)th_be_get32(p) << 32 | th_be_get32(p + 4);
}

static inline void
th_be_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
th_be_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

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

#endif /* TH_BYTES_H */
