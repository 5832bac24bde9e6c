/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_CAPTURE_INPUT_H
#define TH_CAPTURE_INPUT_H

/*
 * What a pcap file port's file held. net_pcap reads a file with libpcap and
 * counts a receive error at libpcap's first error without saying more (and
 * would go on reading the bytes after it as records: capture ends the port
 * there). Reading the file again with libpcap after the port ends tells a
 * file cut short (a capture killed mid-write) from one damaged in the middle
 * (a record length past the snap length), and how many records the port
 * could have delivered.
 */

#include <stdbool.h>
#include <stdint.h>

struct th_input_check {
	uint64_t records; /* records libpcap read before it stopped */
	uint64_t unread;  /* bytes of the file after the point it stopped */
	bool is_damaged;  /* libpcap stopped with an error, not at the end */
	char error[256];  /* libpcap's message, when damaged */
};

/** The snap length of pcap @p path as libpcap reads it (pcap or pcapng), or 0. */
uint32_t th_input_snaplen(const char *path);

/**
 * Read @p path to its end (or libpcap's first error) with libpcap.
 * @return 0 with @p c filled, or -1 when the file cannot be opened at all
 *         (c->error says why).
 */
int th_input_check(const char *path, struct th_input_check *c);

#endif
