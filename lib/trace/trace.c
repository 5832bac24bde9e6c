/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every trace record layout shares: the time a record is ordered by.
 * The layout itself, chunk coding, is in chunk.c.
 */

#include "th_trace.h"

uint64_t
th_trace_open_time(const struct th_trace_open *r)
{
	return r->open_ns;
}

uint64_t
th_trace_rpc_time(const struct th_trace_rpc *r)
{
	return r->call_ns != 0 ? r->call_ns : r->reply_ns;
}
