/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SEGMENT_PRIVATE_H
#define TH_SEGMENT_PRIVATE_H

/* Layout constants shared by the writer and the reader; byte order is th_bytes.h. */

#include "th_bytes.h"

#define SEG_HEADER_MAGIC "THSEGHDR"
#define SEG_TRAILER_MAGIC "THSEGEND"
/* A frame's header (the trailer's, a chunk's): u16 type, u16 length of the body. */
#define SEG_REC_HDR 4
/* A chunk's frame: u16 TH_SEGMENT_CHUNK_TYPE, u16 4, u32 bytes of chunk records that follow. */
#define SEG_CHUNK_HDR 8

#endif /* TH_SEGMENT_PRIVATE_H */
