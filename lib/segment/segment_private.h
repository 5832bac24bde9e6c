/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SEGMENT_PRIVATE_H
#define TH_SEGMENT_PRIVATE_H

/* Byte order helpers and layout constants shared by the writer and the reader. */

#include <stdint.h>

#define SEG_HEADER_MAGIC "THSEGHDR"
#define SEG_TRAILER_MAGIC "THSEGEND"
#define SEG_REC_HDR 4
/* A chunk's frame: u16 TH_SEGMENT_CHUNK_TYPE, u16 4, u32 bytes of chunk records that follow. */
#define SEG_CHUNK_HDR 8

static inline void
seg_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void
seg_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
seg_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t
seg_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
seg_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
seg_get64(const uint8_t *p)
{
	return (uint64_t)seg_get32(p) | (uint64_t)seg_get32(p + 4) << 32;
}

#endif /* TH_SEGMENT_PRIVATE_H */
