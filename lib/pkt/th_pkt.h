/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TH_PKT_H
#define TH_PKT_H

/**
 * @file
 * L2–L4 parsing of one captured frame: Ethernet II, 802.1Q/802.1ad (QinQ),
 * Linux cooked capture (SLL, SLL2), raw IP; IPv4 with options and fragments,
 * IPv6 with extension headers and fragments; UDP and TCP.
 *
 * The parser never copies and never allocates: it fills a th_pkt_meta with
 * offsets and header fields and returns a status. A frame it cannot use is
 * not an error of the program; the status says why, and the caller counts it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** Link types, numbered as pcap's LINKTYPE_* values. */
enum th_pkt_link {
	TH_PKT_LINK_ETHERNET = 1,
	TH_PKT_LINK_RAW = 101, /**< raw IPv4/IPv6, version from the first nibble */
	TH_PKT_LINK_LINUX_SLL = 113,
	TH_PKT_LINK_LINUX_SLL2 = 276,
};

/**
 * Parse outcomes. X-macro: name and a short text used in statistics.
 * TH_PKT_OK is the only outcome with a usable L4 payload.
 */
#define TH_PKT_STATUS_LIST(X)                                                                      \
	X(OK, "ok")                                                                                \
	X(TRUNC_L2, "truncated link header")                                                       \
	X(TRUNC_L3, "truncated IP header")                                                         \
	X(TRUNC_L4, "truncated TCP/UDP header")                                                    \
	X(BAD_L3, "malformed IP header")                                                           \
	X(BAD_L4, "malformed TCP/UDP header")                                                      \
	X(NOT_IP, "not IP (ARP, LLDP, ...)")                                                       \
	X(NOT_TCP_UDP, "IP but not TCP/UDP (ICMP, ...)")                                           \
	X(FRAG_LATER, "IP fragment after the first")                                               \
	X(BAD_LINK, "unsupported link type")

enum th_pkt_status {
#define TH_PKT_X(name, text) TH_PKT_##name,
	TH_PKT_STATUS_LIST(TH_PKT_X)
#undef TH_PKT_X
		TH_PKT__STATUS_COUNT
};

/** Short description of a status, for statistics. */
const char *th_pkt_status_str(enum th_pkt_status status);

/** An IPv4 or IPv6 address; IPv4 is stored as ::ffff:a.b.c.d (IPv4-mapped). */
struct th_addr {
	uint8_t b[16];
};

enum th_pkt_l4 {
	TH_PKT_L4_UDP = 17,
	TH_PKT_L4_TCP = 6,
};

/** TCP flag bits as on the wire. */
enum {
	TH_TCP_FIN = 0x01,
	TH_TCP_SYN = 0x02,
	TH_TCP_RST = 0x04,
	TH_TCP_PSH = 0x08,
	TH_TCP_ACK = 0x10,
};

/** What the parser found in one frame. Only valid when the status is TH_PKT_OK. */
struct th_pkt_meta {
	struct th_addr src;        /**< IP source */
	struct th_addr dst;        /**< IP destination */
	uint16_t sport;            /**< L4 source port, host order */
	uint16_t dport;            /**< L4 destination port, host order */
	uint8_t l4;                /**< enum th_pkt_l4 */
	uint8_t ip_version;        /**< 4 or 6 */
	uint8_t tcp_flags;         /**< TH_TCP_* (TCP only) */
	uint8_t vlan_count;        /**< 802.1Q/802.1ad tags seen (0, 1, 2, ...) */
	uint16_t vlan_outer;       /**< outermost VLAN id, 0 if none */
	uint16_t vlan_inner;       /**< innermost VLAN id, 0 if none */
	bool is_fragment;          /**< first fragment of a fragmented IP datagram */
	uint32_t tcp_seq;          /**< TCP sequence number, host order */
	uint32_t tcp_ack;          /**< TCP acknowledgement number, host order */
	uint16_t l3_offset;        /**< IP header offset in the frame */
	uint16_t l4_offset;        /**< TCP/UDP header offset in the frame; a later IP
				      fragment's first data byte (TH_PKT_FRAG_LATER) */
	uint16_t payload_offset;   /**< first payload byte in the frame */
	uint32_t payload_len;      /**< payload bytes present in the frame (after capture cut) */
	uint32_t payload_wire_len; /**< payload bytes the IP/UDP lengths claim */
	uint32_t frag_id;          /**< IP identification of a fragment (first or later) */
	uint16_t frag_offset;      /**< a later fragment's offset in its datagram, bytes */
	bool is_last_frag;         /**< a fragment with no more after it (TH_PKT_FRAG_LATER) */
	bool is_cut;               /**< the capture kept fewer bytes than the IP packet had */
};

/**
 * Parse a frame.
 *
 * @param frame  first captured byte
 * @param caplen bytes captured
 * @param link   enum th_pkt_link of the capture
 * @param m      filled on TH_PKT_OK; partly filled otherwise
 * @return TH_PKT_OK, or why the frame carries no usable TCP/UDP payload.
 *
 * For a fragmented IPv4/IPv6 datagram, the first fragment parses with
 * is_fragment set and payload_len covering what this fragment carries;
 * later fragments return TH_PKT_FRAG_LATER with addresses, l4, frag_id,
 * frag_offset, is_last_frag and l4_offset (its data) set, so a caller can
 * follow a datagram. Ethernet padding and a
 * captured length beyond the IP total length are trimmed off the payload.
 * A payload cut by the capture (caplen) is not an error: payload_len is
 * smaller than payload_wire_len.
 */
enum th_pkt_status th_pkt_parse(
	const uint8_t *frame, uint32_t caplen, enum th_pkt_link link, struct th_pkt_meta *m);

/** The first 12 bytes of an IPv4-mapped address (::ffff:a.b.c.d, RFC 4291 2.5.5.2). */
extern const uint8_t th_addr_v4_prefix[12];

/** True when @p a is an IPv4-mapped address (inline: export asks per record and host). */
static inline bool
th_addr_is_v4(const struct th_addr *a)
{
	return memcmp(a->b, th_addr_v4_prefix, sizeof(th_addr_v4_prefix)) == 0;
}

/** Make @p a the IPv4-mapped form of the 4 bytes at @p ip. */
static inline void
th_addr_set_v4(struct th_addr *a, const uint8_t *ip)
{
	memcpy(a->b, th_addr_v4_prefix, sizeof(th_addr_v4_prefix));
	memcpy(a->b + 12, ip, 4);
}

extern const uint32_t th_addr_octets[256];

/**
 * Write IPv4-mapped @p a as a dotted quad at @p p, which must have 16 bytes
 * of room (three digit bytes are stored for every octet, whatever its
 * length). @return the end of the text; no NUL is written.
 */
static inline char *
th_addr_put_v4(char *p, const struct th_addr *a)
{
	for (int i = 12; i < 16; i++) {
		uint32_t e = th_addr_octets[a->b[i]];

		p[0] = (char)e;
		p[1] = (char)(e >> 8);
		p[2] = (char)(e >> 16);
		p += e >> 24;
		*p++ = '.';
	}
	return p - 1;
}

/**
 * Write @p a as text (dotted quad for IPv4-mapped, RFC 5952 for IPv6).
 * @return characters written (without the NUL), as snprintf.
 */
int th_addr_format(const struct th_addr *a, char *buf, size_t size);

/**
 * Parse an address written as text: an IPv4 dotted quad (stored IPv4-mapped)
 * or IPv6 (RFC 4291 text, "::ffff:a.b.c.d" included). No zone ("%eth0"), no
 * prefix length, no surrounding space.
 * @return 4 when the text was IPv4, 6 when it was IPv6; -EINVAL when it is
 *   neither (@p out is then undefined).
 */
int th_addr_parse(const char *s, struct th_addr *out);

/**
 * Hash of the flow a frame belongs to, the same in both directions:
 * hash(a,b) == hash(b,a). Used to pick the decode lcore in software
 * dispatch and the flow table bucket.
 */
uint32_t th_pkt_flow_hash(const struct th_pkt_meta *m);

#endif /* TH_PKT_H */
