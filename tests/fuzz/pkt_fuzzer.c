/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * th_pkt_parse on arbitrary bytes, read as every link type in turn. Beyond
 * "no crash, no read past the end" (ASan), a frame that parses must
 * describe itself consistently: offsets in order and inside the capture,
 * the payload inside the capture. A violation aborts so the fuzzer keeps
 * the input.
 */

#include <stdint.h>
#include <stdlib.h>

#include "th_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const struct th_pkt_meta *m, uint32_t caplen)
{
	char text[64];

	if (m->l3_offset >= m->l4_offset || m->l4_offset >= m->payload_offset ||
		m->payload_offset > caplen || m->payload_len > caplen - m->payload_offset)
		abort();
	if (m->ip_version != 4 && m->ip_version != 6)
		abort();
	if (m->l4 != TH_PKT_L4_TCP && m->l4 != TH_PKT_L4_UDP)
		abort();
	if (m->payload_len > m->payload_wire_len)
		abort();
	/* IPv6 may carry an IPv4-mapped address; IPv4 must always give one. */
	if (m->ip_version == 4 && (!th_addr_is_v4(&m->src) || !th_addr_is_v4(&m->dst)))
		abort();
	if (th_addr_format(&m->src, text, sizeof(text)) >= (int)sizeof(text))
		abort();
	(void)th_pkt_flow_hash(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum th_pkt_link links[] = {
		TH_PKT_LINK_ETHERNET,
		TH_PKT_LINK_RAW,
		TH_PKT_LINK_LINUX_SLL,
		TH_PKT_LINK_LINUX_SLL2,
	};
	uint32_t caplen = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	unsigned int i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		struct th_pkt_meta m;
		enum th_pkt_status st = th_pkt_parse(data, caplen, links[i], &m);

		if ((unsigned int)st >= TH_PKT__STATUS_COUNT)
			abort();
		if (st == TH_PKT_OK)
			check(&m, caplen);
	}
	return 0;
}
