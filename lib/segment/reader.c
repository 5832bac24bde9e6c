/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segment reader. The LZ4 frame is walked block by block here (the format is
 * four bytes of size, the data, four bytes of checksum) and each whole block
 * is handed to LZ4F_decompress in one call: its output is used only when that
 * call verified the block checksum, so a damaged block never yields records.
 * A file that ends inside a block or before the end mark is truncated (a
 * crashed writer's .tmp); a checksum or structure failure is corruption.
 */

#include "th_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>

#include "segment_private.h"

#define READ_SIZE (64 * 1024)

struct th_segment_reader {
	int fd;
	char path[4096];
	LZ4F_dctx *dctx;
	uint8_t *in;   /**< file bytes */
	size_t in_off; /**< first unused byte */
	size_t in_len; /**< bytes held */
	size_t in_cap;
	bool is_eof;
	uint64_t file_off; /**< file offset of in[0] */
	uint8_t *out;      /**< decompressed bytes */
	size_t out_off;
	size_t out_len;
	size_t out_cap;
	size_t block_max; /**< largest block the frame header allows */
	bool has_block_checksum;
	bool has_content_checksum;
	struct th_segment_header hdr;
	struct th_segment_trailer trl;
	bool has_trailer;
	struct th_trace_chunk *chunk; /**< tables of the chunk being read */
	size_t chunk_left;            /**< bytes of the current chunk not yet decoded */
	uint64_t skipped;             /**< records of a type this version does not know */
	uint64_t by_type[4];          /**< records returned, by enum th_trace_type (0 unused) */
	enum th_segment_read_state state;
	int ret;          /**< what next() returns once it has stopped */
	char detail[160]; /**< why it stopped */
	char msg[4096 + 320];
};

static const char *const state_names[] = {
#define TH_SEGMENT_X(name, text) [TH_SEGMENT_READ_##name] = text,
	TH_SEGMENT_READ_LIST(TH_SEGMENT_X)
#undef TH_SEGMENT_X
};

const char *
th_segment_read_state_name(unsigned int state)
{
	return state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state] : "?";
}

static int
stop(struct th_segment_reader *r, enum th_segment_read_state state, const char *detail)
{
	static const int rets[] = {
		[TH_SEGMENT_READ_COMPLETE] = 0,
		[TH_SEGMENT_READ_TRUNCATED] = -ENODATA,
		[TH_SEGMENT_READ_CORRUPT] = -EBADMSG,
		[TH_SEGMENT_READ_BAD_RECORD] = -EBADMSG,
		[TH_SEGMENT_READ_BAD_HEADER] = -EBADMSG,
		[TH_SEGMENT_READ_BAD_TRAILER] = -EBADMSG,
		[TH_SEGMENT_READ_IO_ERROR] = -EIO,
	};

	r->state = state;
	r->ret = rets[state];
	snprintf(r->detail, sizeof(r->detail), "%s", detail);
	return r->ret;
}

/* Make at least @p n bytes available at in + in_off. @return bytes available, or -EIO. */
static ssize_t
fill(struct th_segment_reader *r, size_t n)
{
	while (r->in_len - r->in_off < n && !r->is_eof) {
		ssize_t got;

		if (r->in_off > 0) {
			memmove(r->in, r->in + r->in_off, r->in_len - r->in_off);
			r->file_off += r->in_off;
			r->in_len -= r->in_off;
			r->in_off = 0;
		}
		got = read(r->fd, r->in + r->in_len, r->in_cap - r->in_len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -EIO;
		if (got == 0)
			r->is_eof = true;
		r->in_len += (size_t)got;
	}
	return (ssize_t)(r->in_len - r->in_off);
}

/* Feed exactly @p n input bytes to liblz4, appending output at out + out_len. */
static int
feed(struct th_segment_reader *r, size_t n, size_t *lz4_ret)
{
	size_t used = 0;

	while (used < n) {
		size_t src = n - used, dst = r->out_cap - r->out_len;
		size_t ret = LZ4F_decompress(
			r->dctx, r->out + r->out_len, &dst, r->in + r->in_off + used, &src, NULL);

		if (LZ4F_isError(ret)) {
			snprintf(r->detail, sizeof(r->detail), "%s at byte %" PRIu64,
				LZ4F_getErrorName(ret), r->file_off + r->in_off);
			return -EBADMSG;
		}
		if (src == 0 && dst == 0)
			return -EBADMSG;
		used += src;
		r->out_len += dst;
		*lz4_ret = ret;
	}
	r->in_off += n;
	return 0;
}

/*
 * Decompress the next block. @return 1 with output appended, 0 at a verified
 * end of frame, or the reader's stop value.
 */
static int
next_block(struct th_segment_reader *r)
{
	size_t size, total, lz4_ret = 1;
	ssize_t avail;
	char why[160];

	avail = fill(r, 4);
	if (avail < 0)
		return stop(r, TH_SEGMENT_READ_IO_ERROR, strerror(EIO));
	if (avail < 4)
		return stop(r, TH_SEGMENT_READ_TRUNCATED, "ends inside the LZ4 frame");
	size = th_le_get32(r->in + r->in_off);
	if (size == 0) {
		total = 4 + (r->has_content_checksum ? 4 : 0);
		if (fill(r, total) < (ssize_t)total)
			return stop(r, TH_SEGMENT_READ_TRUNCATED, "ends inside the end mark");
		if (feed(r, total, &lz4_ret) < 0 || lz4_ret != 0)
			return stop(r, TH_SEGMENT_READ_CORRUPT, "content checksum failed");
		return 0;
	}
	size &= 0x7fffffffu;
	if (size > r->block_max) {
		snprintf(why, sizeof(why),
			"block size %zu at byte %" PRIu64 " over the frame's %zu", size,
			r->file_off + r->in_off, r->block_max);
		return stop(r, TH_SEGMENT_READ_CORRUPT, why);
	}
	total = 4 + size + (r->has_block_checksum ? 4 : 0);
	avail = fill(r, total);
	if (avail < 0)
		return stop(r, TH_SEGMENT_READ_IO_ERROR, strerror(EIO));
	if ((size_t)avail < total)
		return stop(r, TH_SEGMENT_READ_TRUNCATED, "ends inside a block");
	if (feed(r, total, &lz4_ret) < 0) {
		snprintf(why, sizeof(why), "%s", r->detail);
		return stop(r, TH_SEGMENT_READ_CORRUPT, why);
	}
	return 1;
}

/* Make at least @p n decompressed bytes available. @return 1, 0 (end of frame), or stop. */
static int
want(struct th_segment_reader *r, size_t n)
{
	while (r->out_len - r->out_off < n) {
		int ret;

		if (r->out_off > 0) {
			memmove(r->out, r->out + r->out_off, r->out_len - r->out_off);
			r->out_len -= r->out_off;
			r->out_off = 0;
		}
		ret = next_block(r);
		if (ret <= 0)
			return ret;
	}
	return 1;
}

static int
parse_header(struct th_segment_reader *r)
{
	const uint8_t *p;
	size_t size;
	int ret = want(r, 8);

	/* An LZ4 frame of something else is told apart by its first bytes. */
	if (ret > 0 && memcmp(r->out + r->out_off, SEG_HEADER_MAGIC, 8) != 0)
		return -ENOEXEC;
	if (ret > 0)
		ret = want(r, TH_SEGMENT_HEADER_SIZE);
	if (ret <= 0)
		return ret < 0 ? ret : -ENODATA; /* cut (-ENODATA) or corrupt (-EBADMSG) */
	p = r->out + r->out_off;
	size = th_le_get16(p + 10);
	if (th_le_get16(p + 8) != TH_SEGMENT_VERSION)
		return -EPROTONOSUPPORT;
	if (size < TH_SEGMENT_HEADER_SIZE)
		return -EBADMSG;
	r->hdr.version = th_le_get16(p + 8);
	r->hdr.trace_version = th_le_get16(p + 12);
	/* Records of another layout would decode as garbage: say which version it is. */
	if (r->hdr.trace_version < TH_TRACE_VERSION_MIN || r->hdr.trace_version > TH_TRACE_VERSION)
		return -EPROTONOSUPPORT;
	r->hdr.stream_id = th_le_get16(p + 14);
	r->hdr.kind = p[16];
	r->hdr.box_id = th_le_get64(p + 24);
	r->hdr.created_ns = th_le_get64(p + 32);
	r->hdr.seq = th_le_get64(p + 40);
	r->hdr.flush_ns = th_le_get64(p + 48);
	/* A later version may grow the header: skip what this one does not know. */
	ret = want(r, size);
	if (ret <= 0)
		return ret < 0 ? ret : -ENODATA;
	r->out_off += size;
	return 0;
}

/*
 * A reader of @p path's LZ4 frame, before its segment header: NULL with
 * errno set, as th_segment_reader_open() says.
 */
static struct th_segment_reader *
open_frame(const char *path)
{
	struct th_segment_reader *r = calloc(1, sizeof(*r));
	LZ4F_frameInfo_t info;
	size_t hsize, used;
	uint8_t *tmp;
	ssize_t avail;
	int err = ENOMEM;

	if (r == NULL)
		goto fail_alloc;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->in_cap = READ_SIZE;
	r->in = malloc(r->in_cap);
	r->chunk = th_trace_chunk_create_reader();
	if (r->in == NULL || r->chunk == NULL ||
		LZ4F_isError(LZ4F_createDecompressionContext(&r->dctx, LZ4F_VERSION)))
		goto fail_buffers;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = errno;
		goto fail_open;
	}
	avail = fill(r, LZ4F_HEADER_SIZE_MAX);
	err = avail < 0 ? EIO : ENODATA;
	if (avail >= 4 && th_le_get32(r->in) != LZ4F_MAGICNUMBER)
		err = ENOEXEC; /* no LZ4 frame: not a segment at all */
	if (avail < 7 || err == ENOEXEC)
		goto fail_header;
	err = EBADMSG;
	hsize = LZ4F_headerSize(r->in, (size_t)avail);
	if (LZ4F_isError(hsize) || hsize > (size_t)avail)
		goto fail_header;
	used = hsize;
	if (LZ4F_isError(LZ4F_getFrameInfo(r->dctx, &info, r->in, &used)) || used != hsize)
		goto fail_header;
	r->in_off = hsize;
	switch (info.blockSizeID) {
	case LZ4F_max64KB:
		r->block_max = 64 * 1024;
		break;
	case LZ4F_max256KB:
		r->block_max = 256 * 1024;
		break;
	case LZ4F_max1MB:
		r->block_max = 1024 * 1024;
		break;
	case LZ4F_max4MB:
		r->block_max = 4 * 1024 * 1024;
		break;
	default:
		goto fail_header;
	}
	/* A whole block must fit after a partial read is moved to the front. */
	r->in_cap = READ_SIZE + r->block_max + 16;
	tmp = realloc(r->in, r->in_cap);
	err = ENOMEM;
	if (tmp == NULL)
		goto fail_header;
	r->in = tmp;
	r->has_block_checksum = info.blockChecksumFlag == LZ4F_blockChecksumEnabled;
	r->has_content_checksum = info.contentChecksumFlag == LZ4F_contentChecksumEnabled;
	/* Room for a whole block after a partial record carried over from the last one. */
	r->out_cap = r->block_max + 2 * TH_TRACE_RECORD_MAX + TH_SEGMENT_HEADER_SIZE + 64 * 1024;
	r->out = malloc(r->out_cap);
	if (r->out == NULL)
		goto fail_header;
	return r;

fail_header:
	close(r->fd);
fail_open:
fail_buffers:
	th_trace_chunk_free(r->chunk);
	free(r->out);
	free(r->in);
	LZ4F_freeDecompressionContext(r->dctx);
	free(r);
fail_alloc:
	errno = err;
	return NULL;
}

struct th_segment_reader *
th_segment_reader_open(const char *path)
{
	struct th_segment_reader *r = open_frame(path);
	int err;

	if (r == NULL)
		return NULL;
	err = parse_header(r);
	if (err < 0) {
		th_segment_reader_close(r);
		errno = -err;
		return NULL;
	}
	/* Records decode by the layout of their version: one that uses what only a later
	 * version defines is damage. parse_header() has checked the version is one taken. */
	th_trace_chunk_set_version(r->chunk, r->hdr.trace_version);
	r->state = TH_SEGMENT_READ_READING;
	return r;
}

int
th_segment_versions(const char *path, unsigned int *version, unsigned int *trace_version)
{
	struct th_segment_reader *r = open_frame(path);
	int ret;

	if (r == NULL)
		return -errno;
	ret = want(r, 14);
	if (ret > 0 && memcmp(r->out + r->out_off, SEG_HEADER_MAGIC, 8) == 0) {
		*version = th_le_get16(r->out + r->out_off + 8);
		*trace_version = th_le_get16(r->out + r->out_off + 12);
		ret = 0;
	} else {
		ret = ret > 0 ? -ENOEXEC : ret < 0 ? ret : -ENODATA;
	}
	th_segment_reader_close(r);
	return ret;
}

const struct th_segment_header *
th_segment_reader_header(const struct th_segment_reader *r)
{
	return &r->hdr;
}

static int
read_trailer(struct th_segment_reader *r, size_t len)
{
	const uint8_t *p = r->out + r->out_off + 4;
	int ret;

	if (len < TH_SEGMENT_TRAILER_SIZE || memcmp(p, SEG_TRAILER_MAGIC, 8) != 0)
		return stop(r, TH_SEGMENT_READ_BAD_TRAILER, "trailer malformed");
	r->trl.first_ns = th_le_get64(p + 8);
	r->trl.last_ns = th_le_get64(p + 16);
	r->trl.records = th_le_get64(p + 24);
	r->trl.by_type[TH_TRACE_OPEN] = th_le_get64(p + 32);
	r->trl.by_type[TH_TRACE_NAME] = th_le_get64(p + 40);
	r->trl.by_type[TH_TRACE_RPC] = th_le_get64(p + 48);
	r->trl.lost = th_le_get64(p + 56);
	r->has_trailer = true;
	r->out_off += 4 + len;
	/* Nothing may follow the trailer but the end of the frame. */
	if (r->out_off != r->out_len)
		return stop(r, TH_SEGMENT_READ_BAD_TRAILER, "data after the trailer");
	ret = next_block(r);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return stop(r, TH_SEGMENT_READ_BAD_TRAILER, "data after the trailer");
	/* Equal counts by type also make their sum the records read. */
	if (r->trl.records != th_segment_reader_count(r) + r->skipped ||
		r->trl.by_type[TH_TRACE_OPEN] != r->by_type[TH_TRACE_OPEN] ||
		r->trl.by_type[TH_TRACE_NAME] != r->by_type[TH_TRACE_NAME] ||
		r->trl.by_type[TH_TRACE_RPC] != r->by_type[TH_TRACE_RPC])
		return stop(
			r, TH_SEGMENT_READ_BAD_TRAILER, "trailer counts differ from the records");
	return stop(r, TH_SEGMENT_READ_COMPLETE, "");
}

int
th_segment_reader_next(struct th_segment_reader *r, struct th_trace_open *open,
	struct th_trace_name *name, struct th_trace_rpc *rpc)
{
	for (;;) {
		const uint8_t *p;
		size_t len, used, chunk;
		int ret;

		if (r->state != TH_SEGMENT_READ_READING)
			return r->ret;
		if (r->chunk_left > 0) {
			/* The whole chunk is in out[] already: want() ran for all of it. */
			ret = th_trace_chunk_decode(r->chunk, r->out + r->out_off, r->chunk_left,
				&used, open, name, rpc);
			if (ret == -ENOMEM)
				return stop(r, TH_SEGMENT_READ_IO_ERROR, "out of memory");
			if (ret <= 0)
				return stop(
					r, TH_SEGMENT_READ_BAD_RECORD, "a record does not decode");
			r->out_off += used;
			r->chunk_left -= used;
			r->by_type[ret]++;
			return ret;
		}
		ret = want(r, 4);
		if (ret == 0)
			return stop(r, TH_SEGMENT_READ_BAD_TRAILER, "frame ends without a trailer");
		if (ret < 0)
			return ret;
		p = r->out + r->out_off;
		len = th_le_get16(p + 2);
		ret = want(r, 4 + len);
		if (ret == 0)
			return stop(r, TH_SEGMENT_READ_BAD_RECORD, "frame ends inside a record");
		if (ret < 0)
			return ret;
		p = r->out + r->out_off;
		switch (th_le_get16(p)) {
		case TH_SEGMENT_TRAILER_TYPE:
			return read_trailer(r, len);
		case TH_SEGMENT_CHUNK_TYPE:
			if (len != 4)
				return stop(r, TH_SEGMENT_READ_BAD_RECORD, "chunk frame malformed");
			chunk = th_le_get32(p + 4);
			/* A chunk is one block at most: longer cannot be from a writer. */
			if (chunk > r->block_max)
				return stop(
					r, TH_SEGMENT_READ_BAD_RECORD, "chunk longer than a block");
			ret = want(r, SEG_CHUNK_HDR + chunk);
			if (ret == 0)
				return stop(
					r, TH_SEGMENT_READ_BAD_RECORD, "frame ends inside a chunk");
			if (ret < 0)
				return ret;
			th_trace_chunk_reset(r->chunk);
			r->out_off += SEG_CHUNK_HDR;
			r->chunk_left = chunk;
			continue;
		default:
			/* A frame type from a newer version, its length intact: skip it. */
			r->out_off += 4 + len;
			r->skipped++;
			continue;
		}
	}
}

uint64_t
th_segment_reader_count(const struct th_segment_reader *r)
{
	return r->by_type[TH_TRACE_OPEN] + r->by_type[TH_TRACE_NAME] + r->by_type[TH_TRACE_RPC];
}

enum th_segment_read_state
th_segment_reader_state(const struct th_segment_reader *r)
{
	return r->state;
}

const struct th_segment_trailer *
th_segment_reader_trailer(const struct th_segment_reader *r)
{
	return r->has_trailer ? &r->trl : NULL;
}

const char *
th_segment_reader_describe(struct th_segment_reader *r)
{
	switch (r->state) {
	case TH_SEGMENT_READ_READING:
		snprintf(r->msg, sizeof(r->msg), "%s: %" PRIu64 " records read so far", r->path,
			th_segment_reader_count(r));
		break;
	case TH_SEGMENT_READ_COMPLETE:
		snprintf(r->msg, sizeof(r->msg), "%s: complete, %" PRIu64 " records", r->path,
			th_segment_reader_count(r));
		break;
	case TH_SEGMENT_READ_TRUNCATED:
		snprintf(r->msg, sizeof(r->msg),
			"%s: truncated (%s) after %" PRIu64
			" records: no trailer, the writer crashed or stopped or the file was cut",
			r->path, r->detail, th_segment_reader_count(r));
		break;
	default:
		snprintf(r->msg, sizeof(r->msg),
			"%s: %s (%s): %" PRIu64
			" records recovered, the rest of the segment is lost",
			r->path, th_segment_read_state_name(r->state), r->detail,
			th_segment_reader_count(r));
		break;
	}
	return r->msg;
}

void
th_segment_reader_close(struct th_segment_reader *r)
{
	if (r == NULL)
		return;
	close(r->fd);
	LZ4F_freeDecompressionContext(r->dctx);
	th_trace_chunk_free(r->chunk);
	free(r->in);
	free(r->out);
	free(r);
}
