/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_SEGMENT_H
#define TH_SEGMENT_H

/**
 * @file
 * Segment files: one stream of trace records (th_trace.h) per writer (one per
 * session lcore and kind), compressed as a single LZ4 frame per file so that
 * `lz4 -d SEGMENT` prints the raw stream. No lock is shared between writers.
 *
 * File: a standard LZ4 frame (liblz4 frame format, 256 KiB linked blocks,
 * block checksums and content checksum on). Its decompressed content is:
 *
 *   header (64 bytes, little-endian):
 *     0  magic "THSEGHDR" (8 bytes)
 *     8  u16 segment format version (TH_SEGMENT_VERSION)
 *     10 u16 header size (64; a reader skips what it does not know)
 *     12 u16 record format version (TH_TRACE_VERSION)
 *     14 u16 stream id (the session lcore index)
 *     16 u8  stream kind (enum th_segment_kind)
 *     17 u8[7] reserved, zero
 *     24 u64 box id
 *     32 u64 creation time, ns since the epoch (CLOCK_REALTIME)
 *     40 u64 segment number within this writer (0, 1, ...)
 *     48 u64 flush interval, ns (what a crash may lose)
 *     56 u64 reserved, zero
 *   chunks: each a frame u16 type TH_SEGMENT_CHUNK_TYPE, u16 length 4, u32
 *   n, followed by n bytes of chunk-coded records (th_trace_chunk_*) whose
 *   tables start empty in every chunk. The writer ends a chunk with every
 *   compressed block (a full 256 KiB stage, a flush, the close), so a chunk
 *   never spans blocks and a file cut after any block still decodes up to
 *   there. A reader skips a frame of a type it does not know, by its length.
 *   trailer, only in a closed segment, a frame u16 type
 *   TH_SEGMENT_TRAILER_TYPE, u16 length 64, followed by:
 *     0  magic "THSEGEND" (8 bytes)
 *     8  u64 earliest record time (ns; 0 without records)
 *     16 u64 latest record time
 *     24 u64 records in the segment
 *     32 u64 OPEN records, 40 u64 NAME records, 48 u64 RPC records
 *     56 u64 records this stream lost before the segment closed (all reasons)
 *   and nothing after the trailer.
 *
 * Record time is th_trace_open_time(), from_ns, or th_trace_rpc_time().
 * Records are in the order written, not in time order.
 *
 * Life of a segment: written as DIR/NAME.tmp, flushed (LZ4F_flush, write,
 * fdatasync) at least every flush interval so that a crash loses at most that
 * much; closed when it reaches its size or age (checkpoint interval) or at
 * th_segment_writer_close(): trailer, end of frame, fsync, rename to
 * DIR/NAME, fsync of DIR. NAME is PREFIX-BOX-STREAM-CREATIONNS.lz4 with
 * fixed-width decimal fields, so names of one stream sort in creation order.
 * A .tmp left behind was being written when the process died; the reader
 * recovers its flushed records.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "th_trace.h"

#define TH_SEGMENT_VERSION 1
#define TH_SEGMENT_HEADER_SIZE 64
#define TH_SEGMENT_TRAILER_TYPE 0xfff0
#define TH_SEGMENT_TRAILER_SIZE 64
#define TH_SEGMENT_CHUNK_TYPE 0xfff1
#define TH_SEGMENT_SUFFIX ".lz4"
#define TH_SEGMENT_TMP_SUFFIX ".tmp"

/** Stream kinds. X-macro: enum name, number, text name (default file prefix). */
#define TH_SEGMENT_KIND_LIST(X)                                                                    \
	X(OPENS, 1, "opens")                                                                       \
	X(NAMES, 2, "names")                                                                       \
	X(RPCS, 3, "rpcs")                                                                         \
	X(MIXED, 4, "mixed")

enum th_segment_kind {
#define TH_SEGMENT_X(name, num, text) TH_SEGMENT_KIND_##name = num,
	TH_SEGMENT_KIND_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
};

/** Why records were lost. X-macro: enum name, text name. */
#define TH_SEGMENT_LOSS_LIST(X)                                                                    \
	X(NOSPACE, "nospace") /* ENOSPC, EDQUOT: the disk or quota is full */                      \
	X(PERM, "perm")       /* EACCES, EPERM, EROFS: not allowed to create or write */           \
	X(IO, "io")           /* EIO and any other write, fsync or rename failure */               \
	X(NOMEM, "nomem")     /* could not allocate compression state for a new segment */         \
	X(INVALID, "invalid") /* record does not encode (handle > 64 bytes) or wrong kind */

enum th_segment_loss {
#define TH_SEGMENT_X(name, text) TH_SEGMENT_LOSS_##name,
	TH_SEGMENT_LOSS_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
		TH_SEGMENT_LOSS_MAX
};

/** @return the text name of a loss reason or kind ("?" when out of range). */
const char *th_segment_loss_name(unsigned int reason);
const char *th_segment_kind_name(unsigned int kind);

struct th_segment_config {
	const char *dir;           /**< directory for the segments (must exist) */
	const char *prefix;        /**< file name prefix; NULL: the kind's name */
	uint64_t box_id;           /**< this capture box (multi-box merges tell boxes apart) */
	uint16_t stream_id;        /**< session lcore index */
	enum th_segment_kind kind; /**< which records the stream accepts (MIXED: all) */
	uint64_t max_bytes;        /**< rotate when a segment's file reaches this; 0: 256 MiB */
	uint64_t rotate_ns;        /**< rotate a segment this old (checkpoint); 0: 3600 s */
	uint64_t flush_ns;         /**< flush the open segment this often; 0: 1 s */
	int level;                 /**< LZ4 level: 0 fast (default), < 0 faster, > 2 LZ4HC */
};

/** Per-writer counters; written by the owning lcore only, read by anyone (may lag). */
struct th_segment_counters {
	uint64_t records;    /**< records written or on their way (never in lost[]) */
	uint64_t by_type[4]; /**< records accepted, by enum th_trace_type (0 unused) */
	uint64_t raw_bytes;  /**< record bytes before compression */
	uint64_t file_bytes; /**< bytes written to segment files */
	uint64_t segments;   /**< segments closed and renamed */
	uint64_t flushes;    /**< flushes (LZ4F_flush + write + fdatasync) */
	uint64_t errors;     /**< times the stream stopped on an error */
	uint64_t lost[TH_SEGMENT_LOSS_MAX]; /**< records lost, by reason */
};

struct th_segment_writer;

/**
 * Create a writer and open its first segment. Never touches earlier segments.
 * @return NULL with errno: EINVAL (bad config), ENOMEM. A failure to create
 *   the first file is not fatal: the writer comes back in the error state
 *   (th_segment_writer_error()) and counts what is written as lost.
 */
struct th_segment_writer *th_segment_writer_create(const struct th_segment_config *c);

/**
 * Append one record. Never blocks longer than a write of one compressed
 * block (256 KiB) or a size rotation.
 * @return 0; -EINVAL (record does not encode or kind mismatch); or the
 *   stream's error (-ENOSPC, -EACCES, -EIO, ...) when it has stopped: in all
 *   failing cases the record is counted in lost[].
 */
int th_segment_write_open(struct th_segment_writer *w, const struct th_trace_open *r);
int th_segment_write_name(struct th_segment_writer *w, const struct th_trace_name *r);
int th_segment_write_rpc(struct th_segment_writer *w, const struct th_trace_rpc *r);

/**
 * Housekeeping: flush when the flush interval has passed, rotate when the
 * segment is older than rotate_ns. Call it from the lcore loop whenever a
 * deadline may have passed (every few ms), with a monotonic clock in ns
 * (th_segment_now_ns() or a TSC converted to ns; one clock per writer).
 * @return 0 or the stream's error (-errno).
 */
int th_segment_writer_tick(struct th_segment_writer *w, uint64_t now_ns);

/** Flush now (LZ4F_flush, write, fdatasync). @return 0 or -errno (the stream stops). */
int th_segment_writer_flush(struct th_segment_writer *w);

/** Close the open segment now and start a new one. @return 0 or -errno. */
int th_segment_writer_rotate(struct th_segment_writer *w);

/**
 * After an error (the operator freed space, fixed permissions): leave the
 * failed segment as it is (a .tmp the reader recovers) and start a new one.
 * @return 0, or -errno when the new segment could not be created either.
 */
int th_segment_writer_resume(struct th_segment_writer *w);

/**
 * 0 while the stream writes, or the -errno that stopped it. Safe to poll from
 * another thread (the control lcore raises its alarm on a nonzero value).
 */
int th_segment_writer_error(const struct th_segment_writer *w);

/** Human-readable state: "ok" or what failed, on which file, and what to do. */
const char *th_segment_writer_describe(const struct th_segment_writer *w);

/** Copy the counters (safe from another thread; values may lag by a few records). */
void th_segment_writer_counters(const struct th_segment_writer *w, struct th_segment_counters *c);

/**
 * Close the open segment (trailer, fsync, rename; an empty one is removed)
 * and free the writer. @p last, unless NULL, gets the counters once the
 * segment is closed: its bytes, and records lost if closing it failed.
 * @return 0 or the -errno that stopped the stream.
 */
int th_segment_writer_close(struct th_segment_writer *w, struct th_segment_counters *last);

/** CLOCK_MONOTONIC in ns. */
uint64_t th_segment_now_ns(void);

/** Segment header, as read back. */
struct th_segment_header {
	uint16_t version;       /**< TH_SEGMENT_VERSION */
	uint16_t trace_version; /**< TH_TRACE_VERSION */
	uint16_t stream_id;
	uint8_t kind; /**< enum th_segment_kind */
	uint64_t box_id;
	uint64_t created_ns;
	uint64_t seq; /**< segment number within its writer */
	uint64_t flush_ns;
};

/** Segment trailer, as read back (only for a closed segment). */
struct th_segment_trailer {
	uint64_t first_ns;
	uint64_t last_ns;
	uint64_t records;
	uint64_t by_type[4];
	uint64_t lost;
};

/** How reading a segment ended. X-macro: enum name, text. */
#define TH_SEGMENT_READ_LIST(X)                                                                    \
	X(READING, "reading")                                                                      \
	X(COMPLETE, "complete")            /* trailer and checksums verified */                    \
	X(TRUNCATED, "truncated")          /* ends before its trailer: a crash or a cut */         \
	X(CORRUPT, "corrupt")              /* a checksum or the frame structure failed */          \
	X(BAD_RECORD, "bad record")        /* a record did not decode */                           \
	X(BAD_HEADER, "bad header")        /* not a tracehound segment */                          \
	X(BAD_TRAILER, "trailer mismatch") /* trailer counts differ from what was read */          \
	X(IO_ERROR, "read error")

enum th_segment_read_state {
#define TH_SEGMENT_X(name, text) TH_SEGMENT_READ_##name,
	TH_SEGMENT_READ_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
};

struct th_segment_reader;

/**
 * Open a segment (closed or a crashed .tmp) and read its header.
 * @return NULL with errno: ENOENT, EACCES (open failed), ENOMEM, ENOEXEC (not
 *   a segment at all: not an LZ4 frame, or an LZ4 frame of something else),
 *   EBADMSG (its header block's checksum or frame failed), EPROTONOSUPPORT
 *   (another segment version than TH_SEGMENT_VERSION, or records of a
 *   version outside TH_TRACE_VERSION_MIN..TH_TRACE_VERSION), ENODATA (empty or cut inside its
 * header: a .tmp whose writer stopped before or during its first flush).
 */
struct th_segment_reader *th_segment_reader_open(const char *path);

/**
 * The segment format and record versions a segment's header gives, whether
 * this reader takes them or not (to say which a refused segment has).
 * @return 0, or -errno as th_segment_reader_open() sets it (not -EPROTONOSUPPORT).
 */
int th_segment_versions(const char *path, unsigned int *version, unsigned int *trace_version);

const struct th_segment_header *th_segment_reader_header(const struct th_segment_reader *r);

/**
 * Next record, decoded into the struct of its type (NULL pointers: skipped).
 * Records are returned only from blocks whose checksum verified.
 * @return the type (> 0); 0 at the end of a complete, verified segment;
 *   -ENODATA truncated (no trailer: crashed .tmp or a cut file); -EBADMSG
 *   corrupt (checksum, frame, record or trailer mismatch); -EIO read error.
 *   After a value <= 0 every later call returns the same.
 */
int th_segment_reader_next(struct th_segment_reader *r, struct th_trace_open *open,
	struct th_trace_name *name, struct th_trace_rpc *rpc);

/** Records returned so far. */
uint64_t th_segment_reader_count(const struct th_segment_reader *r);

enum th_segment_read_state th_segment_reader_state(const struct th_segment_reader *r);

/** The trailer, or NULL when the segment has none (yet). */
const struct th_segment_trailer *th_segment_reader_trailer(const struct th_segment_reader *r);

/**
 * One line for the user: "PATH: truncated after N records (no trailer: the
 * writer stopped or crashed)". Valid until the reader is freed.
 */
const char *th_segment_reader_describe(struct th_segment_reader *r);

const char *th_segment_read_state_name(unsigned int state);

void th_segment_reader_close(struct th_segment_reader *r);

#endif /* TH_SEGMENT_H */
