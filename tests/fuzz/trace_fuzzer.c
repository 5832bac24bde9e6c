/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Trace record decoding on arbitrary bytes: walk the input as a record
 * stream, as the segment reader does. A record that decodes must encode back
 * to exactly the bytes it came from (the layout has one spelling per value),
 * and a decoder that claims more bytes than it was given is a bug.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "th_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct th_trace_open o;
	struct th_trace_name nm;
	struct th_trace_rpc r;
	uint8_t again[TH_TRACE_RECORD_MAX];

	while (size > 0) {
		size_t used = 0, n = 0;
		int type = th_trace_decode(data, size, &used, &o, &nm, &r);

		if (used > size)
			abort();
		if (type < 0) {
			if (used == 0)
				break;
			data += used;
			size -= used;
			continue;
		}
		if (type == TH_TRACE_OPEN)
			n = th_trace_encode_open(&o, again, sizeof(again));
		else if (type == TH_TRACE_NAME)
			n = th_trace_encode_name(&nm, again, sizeof(again));
		else if (type == TH_TRACE_RPC)
			n = th_trace_encode_rpc(&r, again, sizeof(again));
		else
			abort();
		if (n != used || memcmp(again, data, n) != 0)
			abort();
		if (type == TH_TRACE_NAME && strlen(nm.name) > nm.name_len)
			abort();
		data += used;
		size -= used;
	}
	return 0;
}
