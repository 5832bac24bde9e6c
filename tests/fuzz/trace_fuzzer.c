/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Chunk decoding on arbitrary bytes: the input is read as one chunk
 * (th_trace_chunk_decode, what a segment stores), as the segment reader
 * does. A decoder that claims more bytes than it was given or leaves a name
 * without its NUL is a bug, and every record that decodes is coded again
 * into a fresh chunk, which must decode back to the same records.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "th_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHUNK_RECORDS 64

struct rec {
	int type;
	struct th_trace_open o;
	struct th_trace_name nm;
	struct th_trace_rpc r;
};

static int
chunk_next(struct th_trace_chunk *c, const uint8_t *p, size_t size, size_t *used, struct rec *x)
{
	memset(x, 0, sizeof(*x));
	x->type = th_trace_chunk_decode(c, p, size, used, &x->o, &x->nm, &x->r);
	if (x->type > 0 && (*used == 0 || *used > size))
		abort();
	/* A decoded name is NUL-terminated (th_trace.h). */
	if (x->type == TH_TRACE_NAME && memchr(x->nm.name, 0, (size_t)x->nm.name_len + 1) == NULL)
		abort();
	return x->type;
}

static void
chunk_walk(const uint8_t *data, size_t size)
{
	static struct rec got[CHUNK_RECORDS];
	static uint8_t again[CHUNK_RECORDS * TH_TRACE_RECORD_MAX];
	/* The encoder (over a MiB of tables) lives for the whole run, a reset starting
	 * each chunk; the decoder is a reader's, fresh each time, so its tables grow. */
	static struct th_trace_chunk *e;
	struct th_trace_chunk *c = th_trace_chunk_create_reader();
	size_t at = 0, used, n = 0, len = 0;
	struct rec x;

	if (e == NULL)
		e = th_trace_chunk_create();
	if (c == NULL || e == NULL)
		abort();
	th_trace_chunk_reset(e);
	while (n < CHUNK_RECORDS && at < size &&
		chunk_next(c, data + at, size - at, &used, &got[n]) > 0) {
		at += used;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (got[i].type == TH_TRACE_OPEN)
			k = th_trace_chunk_encode_open(
				e, &got[i].o, again + len, sizeof(again) - len);
		else if (got[i].type == TH_TRACE_NAME)
			k = th_trace_chunk_encode_name(
				e, &got[i].nm, again + len, sizeof(again) - len);
		else
			k = th_trace_chunk_encode_rpc(
				e, &got[i].r, again + len, sizeof(again) - len);
		if (k == 0)
			abort();
		len += k;
	}
	th_trace_chunk_reset(c);
	at = 0;
	for (size_t i = 0; i < n; i++) {
		if (chunk_next(c, again + at, len - at, &used, &x) != got[i].type ||
			memcmp(&x, &got[i], sizeof(x)) != 0)
			abort();
		at += used;
	}
	if (at != len)
		abort();
	th_trace_chunk_free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	chunk_walk(data, size);
	return 0;
}
