/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The segment reader on arbitrary files: what export does with a segment
 * from another box, whole, cut or damaged. The first byte chooses how the
 * rest becomes the file:
 * - bit 0 clear: the rest is the file, as it is (LZ4 frame errors, cuts);
 * - bit 0 set: the rest is what the frame holds (header, chunk and trailer
 *   frames, records), compressed here into a sound LZ4 frame as the writer
 *   makes them (bit 1: 64 KiB blocks instead of 256 KiB; bit 2: no block
 *   checksums). Such a file can fail only on what it holds: the reader must
 *   never call it corrupt, truncated or unreadable.
 * Either way reading ends (one record at a time, a stop that repeats), the
 * counts agree with what was returned, a complete segment's trailer agrees
 * with them, and the reader describes itself by the path it was given.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <lz4frame.h>

#include "th_segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INPUT_MAX (1024 * 1024)

/* The rest of the input as an LZ4 frame like the writer's; NULL when out of memory. */
static uint8_t *
frame(const uint8_t *data, size_t size, uint8_t mode, size_t *out_len)
{
	LZ4F_preferences_t prefs;
	size_t cap, n;
	uint8_t *out;

	memset(&prefs, 0, sizeof(prefs));
	prefs.frameInfo.blockSizeID = mode & 2 ? LZ4F_max64KB : LZ4F_max256KB;
	prefs.frameInfo.blockMode = LZ4F_blockLinked;
	prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	prefs.frameInfo.blockChecksumFlag =
		mode & 4 ? LZ4F_noBlockChecksum : LZ4F_blockChecksumEnabled;
	cap = LZ4F_compressFrameBound(size, &prefs);
	out = malloc(cap);
	if (out == NULL)
		return NULL;
	n = LZ4F_compressFrame(out, cap, data, size, &prefs);
	if (LZ4F_isError(n))
		abort(); /* a bound liblz4 gave itself */
	*out_len = n;
	return out;
}

static void
read_all(const char *path, bool is_sound)
{
	struct th_segment_reader *r = th_segment_reader_open(path);
	uint64_t by_type[4] = {0}, returned = 0;
	const struct th_segment_trailer *t;
	enum th_segment_read_state st;
	struct th_trace_open o;
	struct th_trace_name nm;
	struct th_trace_rpc rpc;
	const char *line;
	int ret;

	if (r == NULL) {
		/* Only the reasons th_segment_reader_open() documents. */
		if (errno != EBADMSG && errno != EPROTONOSUPPORT && errno != ENODATA &&
			errno != ENOEXEC && errno != ENOMEM)
			abort();
		return;
	}
	while ((ret = th_segment_reader_next(r, &o, &nm, &rpc)) > 0) {
		if (ret > TH_TRACE_RPC)
			abort();
		by_type[ret]++;
		returned++;
		if (th_segment_reader_count(r) != returned)
			abort();
		if (ret == TH_TRACE_NAME && memchr(nm.name, '\0', sizeof(nm.name)) == NULL)
			abort();
	}
	/* A stop repeats, and says what the return said. */
	if (th_segment_reader_next(r, &o, &nm, &rpc) != ret)
		abort();
	st = th_segment_reader_state(r);
	if ((ret == 0) != (st == TH_SEGMENT_READ_COMPLETE) ||
		(ret == -ENODATA) != (st == TH_SEGMENT_READ_TRUNCATED) ||
		(ret == -EIO) != (st == TH_SEGMENT_READ_IO_ERROR))
		abort();
	if (is_sound && (st == TH_SEGMENT_READ_CORRUPT || st == TH_SEGMENT_READ_TRUNCATED ||
				st == TH_SEGMENT_READ_IO_ERROR))
		abort();
	t = th_segment_reader_trailer(r);
	if (st == TH_SEGMENT_READ_COMPLETE &&
		(t == NULL || t->by_type[TH_TRACE_OPEN] != by_type[TH_TRACE_OPEN] ||
			t->by_type[TH_TRACE_NAME] != by_type[TH_TRACE_NAME] ||
			t->by_type[TH_TRACE_RPC] != by_type[TH_TRACE_RPC] || t->records < returned))
		abort();
	line = th_segment_reader_describe(r);
	if (strncmp(line, path, strlen(path)) != 0)
		abort();
	th_segment_reader_close(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *body = data + 1;
	uint8_t *framed = NULL;
	size_t len = size - 1;
	char path[64];
	int fd;

	if (size == 0 || size > INPUT_MAX)
		return 0;
	if (data[0] & 1) {
		framed = frame(body, len, data[0], &len);
		if (framed == NULL)
			return 0;
		body = framed;
	}
	fd = memfd_create("segment", MFD_CLOEXEC);
	if (fd < 0 || write(fd, body, len) != (ssize_t)len)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	read_all(path, data[0] & 1);
	close(fd);
	free(framed);
	return 0;
}
