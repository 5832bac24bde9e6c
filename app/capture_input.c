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
