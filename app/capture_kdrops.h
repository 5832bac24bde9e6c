/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_CAPTURE_KDROPS_H
#define TH_CAPTURE_KDROPS_H

/*
 * Frames the kernel dropped before net_af_packet's ring took them. The
 * driver receives through AF_PACKET sockets whose rings overflow when the
 * capture falls behind; the kernel counts those drops per socket
 * (PACKET_STATISTICS), but DPDK 22.11's net_af_packet does not report them:
 * its imissed stays 0. This finds the process's TPACKET_V2 sockets (the
 * driver's; libpcap's V3 ones under net_pcap's rx_iface= are reported by
 * net_pcap as imissed) and adds their drops up. Reading the kernel's counters
 * resets them, so every read goes through here (thread-safe).
 */

#include <stdint.h>

/** Find this process's packet sockets; call once the ports are started. @return how many. */
unsigned int th_kdrops_find(void);

/** Frames dropped at those sockets since they were made (when the driver probed). */
uint64_t th_kdrops_read(void);

#endif
