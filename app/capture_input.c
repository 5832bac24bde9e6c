/* SPDX-License-Identifier: BSD-3-Clause */

#include "capture_input.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

uint32_t
th_input_snaplen(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, errbuf);
	int snaplen;

	if (p == NULL)
		return 0;
	snaplen = pcap_snapshot(p);
	pcap_close(p);
	return snaplen > 0 ? (uint32_t)snaplen : 0;
}

/* A 32-bit field of a pcap header, in the file's byte order. */
static uint32_t
field32(const uint8_t *b, bool is_swapped)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return is_swapped ? __builtin_bswap32(v) : v;
}

uint64_t
th_input_over_snaplen(const char *path, uint64_t max, uint32_t *snaplen, uint32_t *caplen)
{
	uint8_t hdr[24], rec[16];
	uint64_t n = 0, found = 0;
	bool is_swapped;
	uint32_t magic;
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return 0;
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr))
		goto done;
	memcpy(&magic, hdr, sizeof(magic));
	if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du)
		is_swapped = false;
	else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u)
		is_swapped = true;
	else
		goto done; /* pcapng keeps a snap length per interface: libpcap's to check */
	*snaplen = field32(hdr + 16, is_swapped);
	if (*snaplen == 0)
		goto done; /* libpcap takes 0 as "no limit" */
	while (n < max && fread(rec, 1, sizeof(rec), f) == sizeof(rec)) {
		n++;
		*caplen = field32(rec + 8, is_swapped);
		if (*caplen > *snaplen) {
			found = n;
			break;
		}
		if (fseeko(f, (off_t)*caplen, SEEK_CUR) != 0)
			break;
	}
done:
	fclose(f);
	return found;
}

int
th_input_check(const char *path, struct th_input_check *c)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	struct stat st;
	pcap_t *p;
	off_t at;
	int rc;

	memset(c, 0, sizeof(*c));
	p = pcap_open_offline(path, errbuf);
	if (p == NULL) {
		snprintf(c->error, sizeof(c->error), "%s", errbuf);
		return -1;
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1)
		c->records++;
	if (rc != PCAP_ERROR_BREAK) {
		c->is_damaged = true;
		snprintf(c->error, sizeof(c->error), "%s", pcap_geterr(p));
		/* Where it stopped: a file cut short stops at its last byte. */
		at = ftello(pcap_file(p));
		if (at >= 0 && fstat(fileno(pcap_file(p)), &st) == 0 && st.st_size > at)
			c->unread = (uint64_t)(st.st_size - at);
	}
	pcap_close(p);
	return 0;
}
