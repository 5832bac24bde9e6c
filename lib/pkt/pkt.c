/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * L2-L4 frame parser. This runs once per received packet on every decode
 * lcore, so it is written as straight-line code over byte loads: no
 * allocation, no memset of the result, no unaligned word access (frames sit
 * at any alignment in pcap buffers and mbufs).
 *
 * Bounds: every read is checked against caplen before it happens. Offsets
 * are kept in uint32_t and only grow by bounded amounts (a VLAN tag, an IP
 * header of at most 60 bytes, at most PKT_MAX_EXT IPv6 extension headers of
 * at most 2048 bytes each, a TCP header of at most 60 bytes), so no sum can
 * wrap and every offset stored in the uint16_t members of th_pkt_meta fits.
 */

#include "th_pkt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "th_bytes.h"

/* Stacked VLAN tags accepted before giving up; real networks use one or two. */
#define PKT_MAX_VLAN 8
/* IPv6 extension headers walked before calling the chain malformed. */
#define PKT_MAX_EXT 8

enum {
	ETH_HLEN = 14,
	SLL_HLEN = 16,
	SLL2_HLEN = 20,
	VLAN_HLEN = 4,
	IPV4_HLEN = 20,
	IPV6_HLEN = 40,
	TCP_HLEN = 20,
	UDP_HLEN = 8,
};

enum {
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86dd,
	ETHERTYPE_VLAN = 0x8100,     /* 802.1Q */
	ETHERTYPE_QINQ = 0x88a8,     /* 802.1ad service tag */
	ETHERTYPE_QINQ_OLD = 0x9100, /* pre-standard QinQ */
};

enum {
	IPPROTO_HOPOPTS_ = 0,
	IPPROTO_ROUTING_ = 43,
	IPPROTO_FRAGMENT_ = 44,
	IPPROTO_AH_ = 51,
	IPPROTO_NONE_ = 59,
	IPPROTO_DSTOPTS_ = 60,
};

static const char *const status_names[] = {
#define TH_PKT_X(name, text) [TH_PKT_##name] = text,
	TH_PKT_STATUS_LIST(TH_PKT_X)
#undef TH_PKT_X
};

const uint8_t th_addr_v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

const char *
th_pkt_status_str(enum th_pkt_status status)
{
	if ((unsigned int)status >= TH_PKT__STATUS_COUNT)
		return "unknown status";
	return status_names[status];
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * TCP or UDP header at l4 inside an IP payload that ends at ip_end (what
 * the IP header claims, trimmed of Ethernet padding). A header that does
 * not fit in ip_end is malformed; one that fits there but not in caplen was
 * cut by the capture. is_fragment says the datagram continues in later
 * fragments, so the UDP length may legitimately exceed this fragment.
 */
static inline enum th_pkt_status
parse_l4(const uint8_t *f, uint32_t caplen, uint32_t l4, uint32_t ip_end, uint8_t proto,
	bool is_fragment, struct th_pkt_meta *m)
{
	const uint8_t *h = f + l4;
	uint32_t pay, end;

	m->l4 = proto;
	m->l4_offset = (uint16_t)l4;
	m->is_fragment = is_fragment;
	m->is_cut = caplen < ip_end;
	if (proto == TH_PKT_L4_TCP) {
		uint32_t hlen;

		if (ip_end - l4 < TCP_HLEN)
			return TH_PKT_BAD_L4;
		if (caplen - l4 < TCP_HLEN)
			return TH_PKT_TRUNC_L4;
		hlen = (uint32_t)(h[12] >> 4) * 4;
		if (hlen < TCP_HLEN || hlen > ip_end - l4)
			return TH_PKT_BAD_L4;
		if (hlen > caplen - l4)
			return TH_PKT_TRUNC_L4;
		m->sport = th_be_get16(h);
		m->dport = th_be_get16(h + 2);
		m->tcp_seq = th_be_get32(h + 4);
		m->tcp_ack = th_be_get32(h + 8);
		m->tcp_flags = h[13];
		pay = l4 + hlen;
		end = ip_end;
		m->payload_wire_len = end - pay;
	} else {
		uint32_t ulen;

		if (ip_end - l4 < UDP_HLEN)
			return TH_PKT_BAD_L4;
		if (caplen - l4 < UDP_HLEN)
			return TH_PKT_TRUNC_L4;
		ulen = th_be_get16(h + 4);
		if (ulen < UDP_HLEN)
			return TH_PKT_BAD_L4;
		m->sport = th_be_get16(h);
		m->dport = th_be_get16(h + 2);
		m->tcp_seq = 0;
		m->tcp_ack = 0;
		m->tcp_flags = 0;
		pay = l4 + UDP_HLEN;
		/*
		 * When the UDP and IP lengths disagree, the smaller one bounds
		 * what we hand on: the larger is either padding or a lie. A first
		 * fragment is the exception for the wire length: the UDP length
		 * then describes the whole datagram, which is what the RPC layer
		 * needs to know.
		 */
		end = min_u32(l4 + ulen, ip_end);
		m->payload_wire_len = is_fragment ? ulen - UDP_HLEN : end - pay;
	}
	m->payload_offset = (uint16_t)pay;
	m->payload_len = min_u32(end, caplen) - pay;
	return TH_PKT_OK;
}

static inline enum th_pkt_status
parse_ipv4(const uint8_t *f, uint32_t caplen, uint32_t l3, struct th_pkt_meta *m)
{
	const uint8_t *h = f + l3;
	uint32_t hlen, tot, frag;
	uint8_t proto;

	if (caplen - l3 < IPV4_HLEN)
		return TH_PKT_TRUNC_L3;
	hlen = (uint32_t)(h[0] & 0x0f) * 4;
	if ((h[0] >> 4) != 4 || hlen < IPV4_HLEN)
		return TH_PKT_BAD_L3;
	if (caplen - l3 < hlen)
		return TH_PKT_TRUNC_L3;
	tot = th_be_get16(h + 2);
	/* 0 on TCP: a sender's capture before segmentation offload filled it in, the
	 * packet the frame's rest (as Wireshark takes it). Not in a frame of 64 bytes
	 * or less, whose rest may be Ethernet's padding. */
	if (tot == 0 && h[9] == TH_PKT_L4_TCP && caplen > 64)
		tot = caplen - l3;
	if (tot < hlen)
		return TH_PKT_BAD_L3;
	m->ip_version = 4;
	m->l3_offset = (uint16_t)l3;
	th_addr_set_v4(&m->src, h + 12);
	th_addr_set_v4(&m->dst, h + 16);
	proto = h[9];
	m->l4 = proto;
	if (proto != TH_PKT_L4_TCP && proto != TH_PKT_L4_UDP)
		return TH_PKT_NOT_TCP_UDP;
	frag = th_be_get16(h + 6);
	if (frag & 0x3fff) {
		m->frag_id = th_be_get16(h + 4);
		m->is_last_frag = (frag & 0x2000) == 0;
	}
	if (frag & 0x1fff) {
		m->frag_offset = (uint16_t)((frag & 0x1fff) * 8);
		m->l4_offset = (uint16_t)(l3 + hlen);
		return TH_PKT_FRAG_LATER;
	}
	/* MF set with offset 0: the first fragment, which holds the L4 header. */
	return parse_l4(f, caplen, l3 + hlen, l3 + tot, proto, (frag & 0x2000) != 0, m);
}

static enum th_pkt_status
parse_ipv6(const uint8_t *f, uint32_t caplen, uint32_t l3, struct th_pkt_meta *m)
{
	const uint8_t *h = f + l3;
	uint32_t off, end, n;
	bool is_fragment = false;
	uint8_t nh;

	if (caplen - l3 < IPV6_HLEN)
		return TH_PKT_TRUNC_L3;
	if ((h[0] >> 4) != 6)
		return TH_PKT_BAD_L3;
	m->ip_version = 6;
	m->l3_offset = (uint16_t)l3;
	memcpy(m->src.b, h + 8, 16);
	memcpy(m->dst.b, h + 24, 16);
	off = l3 + IPV6_HLEN;
	end = off + th_be_get16(h + 4);
	nh = h[6];

	/*
	 * Walk the extension headers that can precede TCP/UDP. Each one must
	 * fit in the payload length the IPv6 header claims (else malformed)
	 * and in what was captured (else truncated).
	 */
	for (n = 0;; n++) {
		uint32_t len;

		if (nh == TH_PKT_L4_TCP || nh == TH_PKT_L4_UDP)
			break;
		if (nh != IPPROTO_HOPOPTS_ && nh != IPPROTO_ROUTING_ && nh != IPPROTO_DSTOPTS_ &&
			nh != IPPROTO_FRAGMENT_ && nh != IPPROTO_AH_) {
			/* No next header (59), ESP, ICMPv6, anything else. */
			m->l4 = nh;
			return TH_PKT_NOT_TCP_UDP;
		}
		if (n == PKT_MAX_EXT)
			return TH_PKT_BAD_L3;
		if (end - off < 8)
			return TH_PKT_BAD_L3;
		if (caplen - off < 8)
			return TH_PKT_TRUNC_L3;
		h = f + off;
		if (nh == IPPROTO_FRAGMENT_) {
			uint16_t fo = th_be_get16(h + 2);

			len = 8;
			m->frag_id = (uint32_t)th_be_get16(h + 4) << 16 | th_be_get16(h + 6);
			m->is_last_frag = (fo & 1) == 0;
			if (fo & 0xfff8) {
				/* Later fragment: say which protocol it belongs to if we can. */
				m->l4 = h[0];
				if (h[0] != TH_PKT_L4_TCP && h[0] != TH_PKT_L4_UDP)
					return TH_PKT_NOT_TCP_UDP;
				m->frag_offset = fo & 0xfff8;
				m->l4_offset = (uint16_t)(off + 8);
				return TH_PKT_FRAG_LATER;
			}
			/* An atomic fragment (offset 0, M clear) is a whole datagram. */
			is_fragment = (fo & 1) != 0;
		} else if (nh == IPPROTO_AH_) {
			len = ((uint32_t)h[1] + 2) * 4;
		} else {
			len = ((uint32_t)h[1] + 1) * 8;
		}
		if (len > end - off)
			return TH_PKT_BAD_L3;
		if (len > caplen - off)
			return TH_PKT_TRUNC_L3;
		nh = h[0];
		off += len;
	}
	return parse_l4(f, caplen, off, end, nh, is_fragment, m);
}

enum th_pkt_status
th_pkt_parse(const uint8_t *frame, uint32_t caplen, enum th_pkt_link link, struct th_pkt_meta *m)
{
	uint32_t off;
	uint16_t type;
	unsigned int n;

	m->vlan_count = 0;
	m->vlan_outer = 0;
	m->vlan_inner = 0;
	switch (link) {
	case TH_PKT_LINK_ETHERNET:
		if (caplen < ETH_HLEN)
			return TH_PKT_TRUNC_L2;
		type = th_be_get16(frame + 12);
		off = ETH_HLEN;
		break;
	case TH_PKT_LINK_LINUX_SLL:
		if (caplen < SLL_HLEN)
			return TH_PKT_TRUNC_L2;
		type = th_be_get16(frame + 14);
		off = SLL_HLEN;
		break;
	case TH_PKT_LINK_LINUX_SLL2:
		if (caplen < SLL2_HLEN)
			return TH_PKT_TRUNC_L2;
		type = th_be_get16(frame);
		off = SLL2_HLEN;
		break;
	case TH_PKT_LINK_RAW:
		if (caplen < 1)
			return TH_PKT_TRUNC_L3;
		if ((frame[0] >> 4) == 4)
			return parse_ipv4(frame, caplen, 0, m);
		if ((frame[0] >> 4) == 6)
			return parse_ipv6(frame, caplen, 0, m);
		return TH_PKT_BAD_L3;
	default:
		return TH_PKT_BAD_LINK;
	}

	/*
	 * VLAN tags, any of the three TPIDs at any position. libpcap also
	 * re-inserts stripped tags after a cooked (SLL) header, so the walk
	 * applies to every link type with an EtherType.
	 */
	for (n = 0; type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ || type == ETHERTYPE_QINQ_OLD;
		n++) {
		uint16_t vid;

		/* Deeper stacks are not a network anyone runs; we cannot find L3. */
		if (n == PKT_MAX_VLAN)
			return TH_PKT_NOT_IP;
		if (caplen - off < VLAN_HLEN)
			return TH_PKT_TRUNC_L2;
		vid = th_be_get16(frame + off) & 0x0fff;
		if (n == 0)
			m->vlan_outer = vid;
		m->vlan_inner = vid;
		type = th_be_get16(frame + off + 2);
		off += VLAN_HLEN;
	}
	m->vlan_count = (uint8_t)n;

	if (type == ETHERTYPE_IPV4)
		return parse_ipv4(frame, caplen, off, m);
	if (type == ETHERTYPE_IPV6)
		return parse_ipv6(frame, caplen, off, m);
	return TH_PKT_NOT_IP;
}

/* A group without leading zeros, as RFC 5952 wants; printf is too slow for per-op use. */
static char *
put_hex16(char *p, uint16_t v)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 12;

	while (shift > 0 && ((v >> shift) & 15) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 15];
	return p;
}

/*
 * Dotted-quad octets: each entry is the octet's digits in its low bytes and
 * their count in the top byte (see th_addr_put_v4()). Dividing each octet down
 * digit by digit was 9% of anonymised export, whose pseudonyms spread over all
 * 256 values of every octet; snprintf() cost more.
 */
#define OCT_D(v, k) ((uint32_t)('0' + (v)) << (8 * (k)))
#define OCT(v)                                                                                     \
	((v) >= 100 ? OCT_D((v) / 100, 0) | OCT_D((v) / 10 % 10, 1) | OCT_D((v) % 10, 2) |         \
				3u << 24                                                           \
		: (v) >= 10 ? OCT_D((v) / 10, 0) | OCT_D((v) % 10, 1) | 2u << 24                   \
			    : OCT_D(v, 0) | 1u << 24),
#define OCT_4(v) OCT(v) OCT((v) + 1) OCT((v) + 2) OCT((v) + 3)
#define OCT_16(v) OCT_4(v) OCT_4((v) + 4) OCT_4((v) + 8) OCT_4((v) + 12)
#define OCT_64(v) OCT_16(v) OCT_16((v) + 16) OCT_16((v) + 32) OCT_16((v) + 48)

const uint32_t th_addr_octets[256] = {OCT_64(0) OCT_64(64) OCT_64(128) OCT_64(192)};

int
th_addr_format(const struct th_addr *a, char *buf, size_t size)
{
	char tmp[48];
	char *p = tmp;
	uint16_t g[8];
	size_t n;
	int best = -1, best_len = 0, i;

	if (th_addr_is_v4(a)) {
		p = th_addr_put_v4(tmp, a);
		goto out;
	}
	for (i = 0; i < 8; i++)
		g[i] = th_be_get16(a->b + 2 * i);
	/* RFC 5952 4.2: compress the longest run of two or more zero groups, the first on a tie. */
	for (i = 0; i < 8;) {
		int j = i;

		while (j < 8 && g[j] == 0)
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	for (i = 0; i < 8; i++) {
		if (i == best) {
			*p++ = ':';
			if (i == 0)
				*p++ = ':';
			i += best_len - 1;
			continue;
		}
		p = put_hex16(p, g[i]);
		if (i < 7)
			*p++ = ':';
	}
out:
	*p = '\0';
	n = (size_t)(p - tmp);
	if (size > 0) {
		size_t c = n < size - 1 ? n : size - 1;

		memcpy(buf, tmp, c);
		buf[c] = '\0';
	}
	return (int)n;
}

int
th_addr_parse(const char *s, struct th_addr *out)
{
	uint8_t b4[4];

	if (inet_pton(AF_INET, s, b4) == 1) {
		th_addr_set_v4(out, b4);
		return 4;
	}
	if (inet_pton(AF_INET6, s, out->b) == 1)
		return 6;
	return -EINVAL;
}

static inline uint64_t
ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * One endpoint (address, port) to 64 well-mixed bits: the address halves
 * and the port are folded, then run through the murmur3 64-bit finaliser.
 * The port lands in bits 0-15 of the high half, which for IPv4-mapped
 * addresses are always zero, so nothing cancels there.
 */
static inline uint64_t
hash_endpoint(const struct th_addr *a, uint16_t port)
{
	uint64_t x = ld64(a->b) * 0x9e3779b97f4a7c15ULL + (ld64(a->b + 8) ^ port);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint32_t
th_pkt_flow_hash(const struct th_pkt_meta *m)
{
	/*
	 * Symmetry by a commutative sum of independently mixed endpoints: no
	 * compare-and-swap of 16-byte addresses (a data-dependent branch per
	 * packet), and since each endpoint is fully mixed the sum does not
	 * collide structurally (unlike a plain XOR, which maps every flow
	 * between equal endpoints to 0).
	 */
	uint64_t x = hash_endpoint(&m->src, m->sport) + hash_endpoint(&m->dst, m->dport);

	x = (x ^ m->l4) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(x >> 32);
}
