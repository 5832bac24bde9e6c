/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * pcap reader on arbitrary bytes: every record it returns must lie inside its limits;
 * the link-type peek (classic pcap and pcapng) reads nothing past the bytes given.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "th_pcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct th_pcap_reader *r;
	struct th_pcap_rec rec;
	FILE *f;
	int rc;

	uint32_t linktype;

	if (size == 0)
		return 0;
	/* The link type capture reads before a port starts: pcap or pcapng, never past the end. */
	if (th_pcap_linktype_of(data, size, &linktype) == 0 && size >= 4 && data[0] == 0x0a &&
		linktype > 0xffff)
		abort(); /* pcapng's is 16 bits */
	f = fmemopen((void *)data, size, "rb");
	if (f == NULL)
		return 0;
	r = th_pcap_reader_fopen(f);
	if (r == NULL)
		return 0;
	while ((rc = th_pcap_read(r, &rec)) == 1) {
		volatile uint8_t sink = 0;

		if (rec.caplen > TH_PCAP_CAPLEN_MAX)
			abort();
		/* Touch every byte so ASan sees a read past the buffer. */
		for (uint32_t i = 0; i < rec.caplen; i++)
			sink ^= rec.data[i];
		(void)sink;
	}
	if (rc < 0 && th_pcap_reader_error(r)[0] == '\0')
		abort(); /* an error must say what and where */
	th_pcap_reader_close(r);
	return 0;
}
