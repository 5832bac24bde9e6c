/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * th_pkt_parse on hand-built frames: every encapsulation, every status,
 * IPv4 options, IPv6 extension headers, fragments, Ethernet padding and
 * capture cuts, plus the flow hash and address formatting and parsing.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_pkt.h"

/* A frame under construction. Lengths are patched in once the payload is known. */
struct fb {
	uint8_t d[8192];
	uint32_t len;
};

static const uint8_t ip4_a[4] = {10, 1, 2, 3};
static const uint8_t ip4_b[4] = {192, 168, 200, 7};
static const uint8_t ip6_a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
static const uint8_t ip6_b[16] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};

static void
put(struct fb *b, const void *p, size_t n)
{
	memcpy(b->d + b->len, p, n);
	b->len += (uint32_t)n;
}

static void
put8(struct fb *b, uint8_t v)
{
	b->d[b->len++] = v;
}

static void
put16(struct fb *b, uint16_t v)
{
	put8(b, (uint8_t)(v >> 8));
	put8(b, (uint8_t)v);
}

static void
put32(struct fb *b, uint32_t v)
{
	put16(b, (uint16_t)(v >> 16));
	put16(b, (uint16_t)v);
}

static void
patch16(struct fb *b, uint32_t at, uint16_t v)
{
	b->d[at] = (uint8_t)(v >> 8);
	b->d[at + 1] = (uint8_t)v;
}

static void
fill(struct fb *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		put8(b, (uint8_t)(0x30 + i % 64));
}

static void
eth(struct fb *b, uint16_t type)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02};

	b->len = 0;
	put(b, macs, sizeof(macs));
	put16(b, type);
}

/* A VLAN tag: TCI with the given id (priority 5 to prove it is masked off), then the next type. */
static void
vlan(struct fb *b, uint16_t vid, uint16_t next)
{
	put16(b, (uint16_t)(0xa000 | vid));
	put16(b, next);
}

/* Linux cooked header v1: packet type, ARPHRD, address length, 8 address bytes, protocol. */
static void
sll(struct fb *b, uint16_t proto)
{
	b->len = 0;
	put16(b, 0); /* to us */
	put16(b, 1); /* ARPHRD_ETHER */
	put16(b, 6);
	fill(b, 8);
	put16(b, proto);
}

/* Linux cooked header v2: protocol first, then reserved, ifindex, ARPHRD, type, addr. */
static void
sll2(struct fb *b, uint16_t proto)
{
	b->len = 0;
	put16(b, proto);
	put16(b, 0);
	put32(b, 3);
	put16(b, 1);
	put8(b, 4); /* outgoing */
	put8(b, 6);
	fill(b, 8);
}

/* IPv4 header with optlen bytes of options (NOPs); total length patched by ip4_end(). */
static uint32_t
ip4(struct fb *b, uint8_t proto, uint16_t frag, uint32_t optlen)
{
	uint32_t at = b->len, i;

	put8(b, (uint8_t)(0x40 | (5 + optlen / 4)));
	put8(b, 0);
	put16(b, 0);
	put16(b, 0x1234);
	put16(b, frag);
	put8(b, 64);
	put8(b, proto);
	put16(b, 0);
	put(b, ip4_a, 4);
	put(b, ip4_b, 4);
	for (i = 0; i < optlen; i++)
		put8(b, 1);
	return at;
}

static void
ip4_end(struct fb *b, uint32_t at)
{
	patch16(b, at + 2, (uint16_t)(b->len - at));
}

static uint32_t
ip6(struct fb *b, uint8_t nh)
{
	uint32_t at = b->len;

	put32(b, 0x60000000);
	put16(b, 0);
	put8(b, nh);
	put8(b, 64);
	put(b, ip6_a, 16);
	put(b, ip6_b, 16);
	return at;
}

static void
ip6_end(struct fb *b, uint32_t at)
{
	patch16(b, at + 4, (uint16_t)(b->len - at - 40));
}

/* Hop-by-hop, routing or destination options header of 8 * (1 + units) bytes. */
static void
ext6(struct fb *b, uint8_t next, uint8_t units)
{
	put8(b, next);
	put8(b, units);
	fill(b, 6 + 8u * units);
}

static void
frag6(struct fb *b, uint8_t next, uint16_t offset8, bool more)
{
	put8(b, next);
	put8(b, 0);
	put16(b, (uint16_t)(offset8 << 3 | (more ? 1 : 0)));
	put32(b, 0xabcdef01);
}

static void
ah6(struct fb *b, uint8_t next)
{
	put8(b, next);
	put8(b, 4); /* (4 + 2) * 4 = 24 bytes */
	put16(b, 0);
	fill(b, 20);
}

static void
tcp(struct fb *b, uint16_t sport, uint16_t dport, uint8_t flags, uint32_t optlen)
{
	uint32_t i;

	put16(b, sport);
	put16(b, dport);
	put32(b, 0x11223344);
	put32(b, 0xaabbccdd);
	put8(b, (uint8_t)((5 + optlen / 4) << 4));
	put8(b, flags);
	put16(b, 65535);
	put16(b, 0);
	put16(b, 0);
	for (i = 0; i < optlen; i++)
		put8(b, 1);
}

static uint32_t
udp(struct fb *b, uint16_t sport, uint16_t dport)
{
	uint32_t at = b->len;

	put16(b, sport);
	put16(b, dport);
	put16(b, 0);
	put16(b, 0);
	return at;
}

static void
udp_end(struct fb *b, uint32_t at)
{
	patch16(b, at + 4, (uint16_t)(b->len - at));
}

/*
 * IPv4 / UDP from @p sport to @p dport with @p n payload bytes, after the
 * link header; @return where the UDP header starts.
 */
static uint32_t
ip4_udp(struct fb *b, uint16_t sport, uint16_t dport, uint32_t n)
{
	uint32_t ip = ip4(b, 17, 0, 0), u = udp(b, sport, dport);

	fill(b, n);
	udp_end(b, u);
	ip4_end(b, ip);
	return u;
}

/* Ethernet / IPv4 / TCP with @p n payload bytes, the most common frame. */
static void
eth_ip4_tcp(struct fb *b, uint32_t n)
{
	uint32_t ip;

	eth(b, 0x0800);
	ip = ip4(b, 6, 0, 0);
	tcp(b, 40000, 2049, TH_TCP_ACK | TH_TCP_PSH, 0);
	fill(b, n);
	ip4_end(b, ip);
}

/*
 * Parse from a heap copy of exactly caplen bytes, so a read past caplen is
 * a heap overflow under ASan, and from a meta full of garbage, so a field
 * the parser forgets to set shows.
 */
static enum th_pkt_status
parse(const struct fb *b, uint32_t caplen, enum th_pkt_link link, struct th_pkt_meta *m)
{
	uint8_t *copy = malloc(caplen ? caplen : 1);
	enum th_pkt_status st;

	assert_non_null(copy);
	memcpy(copy, b->d, caplen);
	memset(m, 0xa5, sizeof(*m));
	st = th_pkt_parse(copy, caplen, link, m);
	free(copy);
	return st;
}

static void
assert_v4(const struct th_addr *a, const uint8_t *v4)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	assert_memory_equal(a->b, prefix, 12);
	assert_memory_equal(a->b + 12, v4, 4);
	assert_true(th_addr_is_v4(a));
}

static void
test_eth_ipv4_tcp(void **state)
{
	struct th_pkt_meta m;
	struct fb b;

	(void)state;
	eth_ip4_tcp(&b, 100);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.ip_version, 4);
	assert_v4(&m.src, ip4_a);
	assert_v4(&m.dst, ip4_b);
	assert_int_equal(m.l4, TH_PKT_L4_TCP);
	assert_int_equal(m.sport, 40000);
	assert_int_equal(m.dport, 2049);
	assert_int_equal(m.tcp_seq, 0x11223344);
	assert_int_equal(m.tcp_ack, 0xaabbccdd);
	assert_int_equal(m.tcp_flags, TH_TCP_ACK | TH_TCP_PSH);
	assert_int_equal(m.vlan_count, 0);
	assert_int_equal(m.vlan_outer, 0);
	assert_int_equal(m.vlan_inner, 0);
	assert_false(m.is_fragment);
	assert_int_equal(m.l3_offset, 14);
	assert_int_equal(m.l4_offset, 34);
	assert_int_equal(m.payload_offset, 54);
	assert_int_equal(m.payload_len, 100);
	assert_int_equal(m.payload_wire_len, 100);
}

static void
test_eth_ipv4_udp(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip, u;

	(void)state;
	eth(&b, 0x0800);
	ip = ip4(&b, 17, 0x4000 /* DF is not a fragment */, 0);
	u = udp(&b, 800, 2049);
	fill(&b, 33);
	udp_end(&b, u);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.l4, TH_PKT_L4_UDP);
	assert_int_equal(m.sport, 800);
	assert_int_equal(m.dport, 2049);
	assert_int_equal(m.tcp_flags, 0);
	assert_int_equal(m.tcp_seq, 0);
	assert_int_equal(m.tcp_ack, 0);
	assert_false(m.is_fragment);
	assert_int_equal(m.l4_offset, 34);
	assert_int_equal(m.payload_offset, 42);
	assert_int_equal(m.payload_len, 33);
	assert_int_equal(m.payload_wire_len, 33);
}

static void
test_vlan(void **state)
{
	static const uint16_t tpids[] = {0x8100, 0x88a8, 0x9100};
	struct th_pkt_meta m;
	struct fb b;
	unsigned int i;
	uint32_t ip;

	(void)state;
	/* One tag of each TPID. */
	for (i = 0; i < 3; i++) {
		eth(&b, tpids[i]);
		vlan(&b, 100 + i, 0x0800);
		ip = ip4(&b, 6, 0, 0);
		tcp(&b, 1, 2, TH_TCP_SYN, 0);
		ip4_end(&b, ip);
		assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
		assert_int_equal(m.vlan_count, 1);
		assert_int_equal(m.vlan_outer, 100 + i);
		assert_int_equal(m.vlan_inner, 100 + i);
		assert_int_equal(m.l3_offset, 18);
		assert_int_equal(m.payload_offset, 58);
		assert_int_equal(m.payload_len, 0);
	}

	/* QinQ: 802.1ad outer, 802.1Q inner, IPv6 inside. */
	eth(&b, 0x88a8);
	vlan(&b, 4000, 0x8100);
	vlan(&b, 3007, 0x86dd);
	ip = ip6(&b, 6);
	tcp(&b, 1, 2, TH_TCP_SYN, 0);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.vlan_count, 2);
	assert_int_equal(m.vlan_outer, 4000);
	assert_int_equal(m.vlan_inner, 3007);
	assert_int_equal(m.l3_offset, 22);
	assert_int_equal(m.ip_version, 6);

	/* Old-style 0x9100 outer over 0x8100 over 0x8100. */
	eth(&b, 0x9100);
	vlan(&b, 1, 0x8100);
	vlan(&b, 2, 0x8100);
	vlan(&b, 3, 0x0800);
	ip = ip4(&b, 6, 0, 0);
	tcp(&b, 1, 2, TH_TCP_SYN, 0);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.vlan_count, 3);
	assert_int_equal(m.vlan_outer, 1);
	assert_int_equal(m.vlan_inner, 3);
}

/* Eight stacked tags still parse; a ninth is refused rather than walked forever. */
static void
test_vlan_depth_limit(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	unsigned int depth, i;
	uint32_t ip;

	(void)state;
	for (depth = 8; depth <= 9; depth++) {
		eth(&b, 0x8100);
		for (i = 0; i < depth; i++)
			vlan(&b, (uint16_t)(i + 1), i + 1 < depth ? 0x8100 : 0x0800);
		ip = ip4(&b, 17, 0, 0);
		udp_end(&b, udp(&b, 1, 2));
		ip4_end(&b, ip);
		if (depth == 8) {
			assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
			assert_int_equal(m.vlan_count, 8);
			assert_int_equal(m.vlan_inner, 8);
		} else {
			assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_IP);
		}
	}
}

static void
test_cooked_and_raw(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip, u;

	(void)state;
	sll(&b, 0x0800);
	ip = ip4(&b, 6, 0, 0);
	tcp(&b, 5, 6, TH_TCP_ACK, 0);
	fill(&b, 9);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_LINUX_SLL, &m), TH_PKT_OK);
	assert_int_equal(m.l3_offset, 16);
	assert_int_equal(m.payload_offset, 56);
	assert_int_equal(m.payload_len, 9);

	/* libpcap puts a stripped VLAN tag back after the cooked header. */
	sll(&b, 0x8100);
	vlan(&b, 55, 0x86dd);
	ip = ip6(&b, 17);
	u = udp(&b, 5, 6);
	fill(&b, 3);
	udp_end(&b, u);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_LINUX_SLL, &m), TH_PKT_OK);
	assert_int_equal(m.vlan_count, 1);
	assert_int_equal(m.vlan_outer, 55);
	assert_int_equal(m.l3_offset, 20);
	assert_int_equal(m.payload_len, 3);

	sll2(&b, 0x86dd);
	ip = ip6(&b, 6);
	tcp(&b, 5, 6, TH_TCP_ACK, 0);
	fill(&b, 11);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_LINUX_SLL2, &m), TH_PKT_OK);
	assert_int_equal(m.l3_offset, 20);
	assert_int_equal(m.l4_offset, 60);
	assert_int_equal(m.payload_len, 11);
	assert_memory_equal(m.src.b, ip6_a, 16);
	assert_memory_equal(m.dst.b, ip6_b, 16);
	assert_false(th_addr_is_v4(&m.src));

	/* ARP under both cooked formats. */
	sll(&b, 0x0806);
	fill(&b, 28);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_LINUX_SLL, &m), TH_PKT_NOT_IP);
	sll2(&b, 0x0806);
	fill(&b, 28);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_LINUX_SLL2, &m), TH_PKT_NOT_IP);

	/* Raw IP: the version nibble decides. */
	b.len = 0;
	ip = ip4(&b, 6, 0, 0);
	tcp(&b, 5, 6, TH_TCP_ACK, 0);
	fill(&b, 4);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_RAW, &m), TH_PKT_OK);
	assert_int_equal(m.l3_offset, 0);
	assert_int_equal(m.payload_offset, 40);
	assert_int_equal(m.payload_len, 4);
	b.len = 0;
	ip = ip6(&b, 17);
	udp_end(&b, udp(&b, 1, 2));
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_RAW, &m), TH_PKT_OK);
	assert_int_equal(m.ip_version, 6);
	b.d[0] = 0x50;
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_RAW, &m), TH_PKT_BAD_L3);
	assert_int_equal(parse(&b, 0, TH_PKT_LINK_RAW, &m), TH_PKT_TRUNC_L3);

	/* A link type we do not know. */
	assert_int_equal(parse(&b, b.len, (enum th_pkt_link)105, &m), TH_PKT_BAD_LINK);
}

static void
test_not_ip(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip;

	(void)state;
	eth(&b, 0x0806);
	fill(&b, 46);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_IP);
	/* 802.3 with a length field (LLC, spanning tree). */
	eth(&b, 0x0026);
	fill(&b, 46);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_IP);
	/* LLDP behind a tag. */
	eth(&b, 0x8100);
	vlan(&b, 3, 0x88cc);
	fill(&b, 46);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_IP);
	/* An EtherType that says IPv4 over bytes that say IPv6 is malformed. */
	eth(&b, 0x0800);
	ip = ip6(&b, 6);
	tcp(&b, 1, 2, 0, 0);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	eth(&b, 0x86dd);
	ip = ip4(&b, 6, 0, 0);
	tcp(&b, 1, 2, 0, 0);
	fill(&b, 40);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	/* ICMP. */
	eth(&b, 0x0800);
	ip = ip4(&b, 1, 0, 0);
	fill(&b, 8);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_TCP_UDP);
}

static void
test_ipv4_options_and_bad_headers(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t opt, ip;

	(void)state;
	for (opt = 4; opt <= 40; opt += 4) {
		eth(&b, 0x0800);
		ip = ip4(&b, 6, 0, opt);
		tcp(&b, 1, 2, 0, 0);
		fill(&b, 7);
		ip4_end(&b, ip);
		assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
		assert_int_equal(m.l4_offset, 34 + opt);
		assert_int_equal(m.payload_offset, 54 + opt);
		assert_int_equal(m.payload_len, 7);
	}

	eth_ip4_tcp(&b, 10);
	b.d[14] = 0x44; /* IHL 4 */
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	eth_ip4_tcp(&b, 10);
	b.d[14] = 0x65; /* version 6 behind EtherType IPv4 */
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	eth_ip4_tcp(&b, 10);
	patch16(&b, 16, 19); /* total length shorter than the header */
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	eth_ip4_tcp(&b, 10);
	patch16(&b, 16, 30); /* room for the IP header, not for TCP */
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L4);
	/* Total length 0: captured before TCP segmentation offload, the frame's rest... */
	eth_ip4_tcp(&b, 100);
	patch16(&b, 16, 0);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_offset, 54);
	assert_int_equal(m.payload_len, 100);
	/* ... but not in a frame of 64 bytes or less, whose rest may be padding... */
	eth_ip4_tcp(&b, 6);
	patch16(&b, 16, 0);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	/* ... nor on UDP, whose own length says. */
	eth(&b, 0x0800);
	ip4_udp(&b, 800, 2049, 100);
	patch16(&b, 16, 0);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	/* IHL 15 with only 40 bytes captured after Ethernet: header cut. */
	eth_ip4_tcp(&b, 0);
	b.d[14] = 0x4f;
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_TRUNC_L3);
}

static void
test_padding_and_capture_cut(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip;

	(void)state;
	/* A bare ACK is 54 bytes; the NIC pads it to 60 and the padding is not payload. */
	eth_ip4_tcp(&b, 0);
	fill(&b, 6);
	assert_int_equal(b.len, 60);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_len, 0);
	assert_int_equal(m.payload_wire_len, 0);

	eth(&b, 0x0800);
	ip4_udp(&b, 1, 2, 4);
	fill(&b, 60 - b.len);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_len, 4);

	/* IPv6 padding too. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 6);
	tcp(&b, 1, 2, 0, 0);
	fill(&b, 2);
	ip6_end(&b, ip);
	fill(&b, 20);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_len, 2);

	/* Snap length 96: the payload is cut, which is not an error. */
	eth_ip4_tcp(&b, 1400);
	assert_int_equal(parse(&b, 96, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_len, 96 - 54);
	assert_int_equal(m.payload_wire_len, 1400);
}

static void
test_ipv4_fragments(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip, u;

	(void)state;
	/* First fragment of a 4000-byte UDP datagram: 1480 bytes of it here. */
	eth(&b, 0x0800);
	ip = ip4(&b, 17, 0x2000, 0);
	u = udp(&b, 700, 2049);
	fill(&b, 1472);
	ip4_end(&b, ip);
	patch16(&b, u + 4, 4008);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_true(m.is_fragment);
	assert_int_equal(m.payload_len, 1472);
	assert_int_equal(m.payload_wire_len, 4000);
	/* The same, cut by a snap length: payload_len still bounded by caplen. */
	assert_int_equal(parse(&b, 200, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_true(m.is_fragment);
	assert_int_equal(m.payload_len, 200 - 42);
	assert_int_equal(m.payload_wire_len, 4000);

	/* Middle fragment (MF, offset 185 * 8) and last fragment (offset only). */
	eth(&b, 0x0800);
	ip = ip4(&b, 17, 0x2000 | 185, 0);
	fill(&b, 1480);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_FRAG_LATER);
	assert_int_equal(m.frag_offset, 185 * 8);
	assert_int_equal(m.l4_offset, 14 + 20); /* its data */
	eth(&b, 0x0800);
	ip = ip4(&b, 17, 370, 0);
	fill(&b, 1048);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_FRAG_LATER);
	/* The highest offset bit alone (offset 4096 * 8) still makes a later fragment. */
	patch16(&b, ip + 6, 0x1000);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_FRAG_LATER);
	/* A later fragment of ICMP is counted as what it is, not as a lost UDP piece. */
	eth(&b, 0x0800);
	ip = ip4(&b, 1, 370, 0);
	fill(&b, 100);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_TCP_UDP);
	/* A first fragment too short to hold the TCP header is malformed. */
	eth(&b, 0x0800);
	ip = ip4(&b, 6, 0x2000, 0);
	fill(&b, 8);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L4);
}

static void
test_ipv6_extension_headers(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip, u, l4;

	(void)state;
	/* Hop-by-hop (8), routing (24), destination options (16), AH (24), then UDP. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 0);
	ext6(&b, 43, 0);
	ext6(&b, 60, 2);
	ext6(&b, 51, 1);
	ah6(&b, 17);
	l4 = b.len;
	u = udp(&b, 111, 2049);
	fill(&b, 20);
	udp_end(&b, u);
	ip6_end(&b, ip);
	assert_int_equal(l4, 14 + 40 + 8 + 24 + 16 + 24);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.l4, TH_PKT_L4_UDP);
	assert_int_equal(m.l4_offset, l4);
	assert_int_equal(m.payload_offset, l4 + 8);
	assert_int_equal(m.payload_len, 20);
	assert_false(m.is_fragment);

	/* No next header after a destination options header. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 60);
	ext6(&b, 59, 0);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_TCP_UDP);
	/* ICMPv6 and ESP. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 58);
	fill(&b, 8);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_TCP_UDP);
	b.d[14 + 6] = 50;
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_NOT_TCP_UDP);

	/* An extension header that runs past the payload length is malformed. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 0);
	ext6(&b, 6, 3);
	tcp(&b, 1, 2, 0, 0);
	ip6_end(&b, ip);
	patch16(&b, ip + 4, 16);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
	/* ... and one cut by the capture is truncated. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 0);
	ext6(&b, 6, 3);
	tcp(&b, 1, 2, 0, 0);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, 14 + 40 + 20, TH_PKT_LINK_ETHERNET, &m), TH_PKT_TRUNC_L3);

	/* A long chain of options headers is refused, not walked to the end. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 60);
	for (u = 0; u < 20; u++)
		ext6(&b, 60, 0);
	ext6(&b, 6, 0);
	tcp(&b, 1, 2, 0, 0);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L3);
}

static void
test_ipv6_fragments(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip, u;

	(void)state;
	/* First fragment after a hop-by-hop header. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 0);
	ext6(&b, 44, 0);
	frag6(&b, 17, 0, true);
	u = udp(&b, 2049, 900);
	fill(&b, 1000);
	ip6_end(&b, ip);
	patch16(&b, u + 4, 3008);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_true(m.is_fragment);
	assert_int_equal(m.l4_offset, 14 + 40 + 8 + 8);
	assert_int_equal(m.payload_len, 1000);
	assert_int_equal(m.payload_wire_len, 3000);

	/* Later fragments, with and without M. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 44);
	frag6(&b, 17, 126, true);
	fill(&b, 1000);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_FRAG_LATER);
	assert_int_equal(m.frag_offset, 126 * 8);
	assert_int_equal(m.l4_offset, 14 + 40 + 8);
	eth(&b, 0x86dd);
	ip = ip6(&b, 44);
	frag6(&b, 6, 252, false);
	fill(&b, 100);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_FRAG_LATER);

	/* Atomic fragment (RFC 6946): offset 0 and no M is a whole datagram. */
	eth(&b, 0x86dd);
	ip = ip6(&b, 44);
	frag6(&b, 6, 0, false);
	tcp(&b, 1, 2, TH_TCP_ACK, 0);
	fill(&b, 5);
	ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_false(m.is_fragment);
	assert_int_equal(m.payload_len, 5);
}

static void
test_tcp_header(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip;

	(void)state;
	/* Data offset 8: 12 bytes of options (timestamps). */
	eth(&b, 0x0800);
	ip = ip4(&b, 6, 0, 0);
	tcp(&b, 1, 2, TH_TCP_ACK, 12);
	fill(&b, 30);
	ip4_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_offset, 54 + 12);
	assert_int_equal(m.payload_len, 30);
	/* Options cut by the capture. */
	assert_int_equal(parse(&b, 60, TH_PKT_LINK_ETHERNET, &m), TH_PKT_TRUNC_L4);

	eth_ip4_tcp(&b, 40);
	b.d[46] = 0x40; /* data offset 4 */
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L4);
	eth_ip4_tcp(&b, 0);
	b.d[46] = 0xf0; /* 60-byte header in a 20-byte IP payload */
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L4);
	/* Every flag comes through as on the wire. */
	eth_ip4_tcp(&b, 0);
	b.d[47] = TH_TCP_FIN | TH_TCP_SYN | TH_TCP_RST;
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.tcp_flags, TH_TCP_FIN | TH_TCP_SYN | TH_TCP_RST);
}

static void
test_udp_length(void **state)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t u;

	(void)state;
	eth(&b, 0x0800);
	u = ip4_udp(&b, 1, 2, 100);

	/* UDP length below its own header. */
	patch16(&b, u + 4, 7);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_BAD_L4);
	/* UDP claims more than IP carries: trust IP. */
	patch16(&b, u + 4, 5000);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_len, 100);
	assert_int_equal(m.payload_wire_len, 100);
	/* UDP claims less: the rest is not payload. */
	patch16(&b, u + 4, 8 + 60);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	assert_int_equal(m.payload_len, 60);
	assert_int_equal(m.payload_wire_len, 60);
	/* UDP header cut by the capture; IP header cut by the capture. */
	assert_int_equal(parse(&b, 40, TH_PKT_LINK_ETHERNET, &m), TH_PKT_TRUNC_L4);
	assert_int_equal(parse(&b, 30, TH_PKT_LINK_ETHERNET, &m), TH_PKT_TRUNC_L3);
	assert_int_equal(parse(&b, 13, TH_PKT_LINK_ETHERNET, &m), TH_PKT_TRUNC_L2);
}

/*
 * Cut each valid frame at every length from 0 to its end. Below the
 * payload the status must be a truncation one, at or past it the frame
 * parses with exactly the captured payload. The heap copy in parse() makes
 * any read past caplen an ASan error.
 */
static void
check_every_cut(const struct fb *b, enum th_pkt_link link, uint32_t l3_offset)
{
	struct th_pkt_meta full, m;
	uint32_t cut;

	assert_int_equal(parse(b, b->len, link, &full), TH_PKT_OK);
	for (cut = 0; cut <= b->len; cut++) {
		enum th_pkt_status st = parse(b, cut, link, &m);

		if (cut < full.payload_offset) {
			if (cut < l3_offset)
				assert_int_equal(st, TH_PKT_TRUNC_L2);
			else if (cut < full.l4_offset)
				assert_int_equal(st, TH_PKT_TRUNC_L3);
			else
				assert_int_equal(st, TH_PKT_TRUNC_L4);
			continue;
		}
		assert_int_equal(st, TH_PKT_OK);
		assert_int_equal(m.payload_offset, full.payload_offset);
		assert_int_equal(m.payload_wire_len, full.payload_wire_len);
		assert_int_equal(m.payload_len, cut - m.payload_offset < full.payload_len
							? cut - m.payload_offset
							: full.payload_len);
	}
}

static void
test_truncation_everywhere(void **state)
{
	struct fb b;
	uint32_t ip, u;

	(void)state;
	eth(&b, 0x0800);
	ip = ip4(&b, 6, 0, 8);
	tcp(&b, 1, 2, TH_TCP_ACK, 12);
	fill(&b, 20);
	ip4_end(&b, ip);
	fill(&b, 4); /* padding */
	check_every_cut(&b, TH_PKT_LINK_ETHERNET, 14);

	eth(&b, 0x88a8);
	vlan(&b, 10, 0x8100);
	vlan(&b, 20, 0x86dd);
	ip = ip6(&b, 0);
	ext6(&b, 43, 1);
	ext6(&b, 44, 0);
	frag6(&b, 51, 0, true);
	ah6(&b, 60);
	ext6(&b, 17, 0);
	u = udp(&b, 3, 4);
	fill(&b, 10);
	udp_end(&b, u);
	ip6_end(&b, ip);
	check_every_cut(&b, TH_PKT_LINK_ETHERNET, 22);

	sll(&b, 0x8100);
	vlan(&b, 9, 0x0800);
	ip4_udp(&b, 3, 4, 10);
	check_every_cut(&b, TH_PKT_LINK_LINUX_SLL, 20);

	sll2(&b, 0x86dd);
	ip = ip6(&b, 6);
	tcp(&b, 3, 4, 0, 40);
	fill(&b, 3);
	ip6_end(&b, ip);
	check_every_cut(&b, TH_PKT_LINK_LINUX_SLL2, 20);

	b.len = 0;
	ip = ip4(&b, 6, 0, 40);
	tcp(&b, 3, 4, 0, 0);
	fill(&b, 3);
	ip4_end(&b, ip);
	/* Raw IP has no link header: an empty frame is a truncated IP header. */
	check_every_cut(&b, TH_PKT_LINK_RAW, 0);
}

/* Build the same flow in either direction and hash what the parser saw. */
static uint32_t
hash_of(int version, bool reverse, uint16_t sport, uint16_t dport, uint8_t proto)
{
	struct th_pkt_meta m;
	struct fb b;
	uint32_t ip;

	eth(&b, version == 4 ? 0x0800 : 0x86dd);
	ip = version == 4 ? ip4(&b, proto, 0, 0) : ip6(&b, proto);
	if (reverse) {
		uint32_t sz = version == 4 ? 4 : 16, off = version == 4 ? 12 : 8;
		uint8_t t[16];

		memcpy(t, b.d + ip + off, sz);
		memcpy(b.d + ip + off, b.d + ip + off + sz, sz);
		memcpy(b.d + ip + off + sz, t, sz);
	}
	if (proto == 6)
		tcp(&b, reverse ? dport : sport, reverse ? sport : dport, 0, 0);
	else
		udp_end(&b, udp(&b, reverse ? dport : sport, reverse ? sport : dport));
	if (version == 4)
		ip4_end(&b, ip);
	else
		ip6_end(&b, ip);
	assert_int_equal(parse(&b, b.len, TH_PKT_LINK_ETHERNET, &m), TH_PKT_OK);
	return th_pkt_flow_hash(&m);
}

static void
test_flow_hash_symmetric(void **state)
{
	int v;

	(void)state;
	for (v = 4; v <= 6; v += 2) {
		assert_int_equal(hash_of(v, false, 800, 2049, 6), hash_of(v, true, 800, 2049, 6));
		assert_int_equal(hash_of(v, false, 800, 2049, 17), hash_of(v, true, 800, 2049, 17));
		/* Each of port, proto and direction-independent pairing matters. */
		assert_int_not_equal(
			hash_of(v, false, 800, 2049, 6), hash_of(v, false, 801, 2049, 6));
		assert_int_not_equal(
			hash_of(v, false, 800, 2049, 6), hash_of(v, false, 800, 2049, 17));
		/* Swapping ports but not addresses is another flow. */
		assert_int_not_equal(
			hash_of(v, false, 800, 2049, 6), hash_of(v, false, 2049, 800, 6));
	}
}

/*
 * Many clients talking to one server port, the shape of NFS traffic: the
 * buckets must fill evenly, in the low bits (table index) and the high
 * bits (lcore choice by multiplication) alike.
 */
static void
test_flow_hash_spread(void **state)
{
	enum { BUCKETS = 1024, FLOWS = 64 * BUCKETS };
	static uint32_t lo[BUCKETS], hi[BUCKETS];
	struct th_pkt_meta m;
	uint32_t i, max_lo = 0, max_hi = 0;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.l4 = TH_PKT_L4_TCP;
	m.dport = 2049;
	m.src.b[10] = m.src.b[11] = m.dst.b[10] = m.dst.b[11] = 0xff;
	m.dst.b[12] = 10;
	m.dst.b[15] = 1;
	for (i = 0; i < FLOWS; i++) {
		uint32_t h;

		/* 256 clients in 10.0.x.y, each with 256 consecutive source ports. */
		m.src.b[12] = 10;
		m.src.b[14] = 0;
		m.src.b[15] = (uint8_t)(i >> 8);
		m.sport = (uint16_t)(700 + (i & 0xff));
		h = th_pkt_flow_hash(&m);
		lo[h % BUCKETS]++;
		hi[h >> 22]++;
	}
	for (i = 0; i < BUCKETS; i++) {
		max_lo = lo[i] > max_lo ? lo[i] : max_lo;
		max_hi = hi[i] > max_hi ? hi[i] : max_hi;
	}
	/* Mean 64; a random hash stays well under 2x on 1024 buckets. */
	assert_true(max_lo < 110);
	assert_true(max_hi < 110);
}

static void
check_format(const uint8_t *bytes, const char *want)
{
	struct th_addr a;
	char buf[64];

	memcpy(a.b, bytes, 16);
	assert_int_equal(th_addr_format(&a, buf, sizeof(buf)), (int)strlen(want));
	assert_string_equal(buf, want);
}

static void
test_addr_format(void **state)
{
	static const struct {
		uint8_t b[16];
		const char *text;
	} cases[] = {
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3}, "10.1.2.3"},
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 255, 255, 255, 255}, "255.255.255.255"},
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0}, "0.0.0.0"},
		{{0}, "::"},
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "::1"},
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "2001:db8::1"},
		{{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "fe80::"},
		/* A single zero group is not compressed (RFC 5952 4.2.2). */
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
			"2001:db8:0:1:1:1:1:1"},
		/* The longest run wins ... */
		{{0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, "2001:0:0:1::1"},
		/* ... and the first on a tie. */
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}, "2001:db8::1:0:0:1"},
		/* Lower case, no leading zeros. */
		{{0x0a, 0xbc, 0x00, 0x0f, 0xff, 0xff, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0x00, 0x01},
			"abc:f:ffff:1000::1"},
		{{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}, "1:2:3:4:5:6:7:8"},
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "::1"},
		/* IPv4-compatible (deprecated) is plain IPv6, not a dotted quad. */
		{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1}, "::a00:1"},
	};
	struct th_addr a;
	char small[6];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_format(cases[i].b, cases[i].text);

	/* Like snprintf: the full length comes back, the buffer holds a NUL-ended prefix. */
	memcpy(a.b, cases[5].b, 16);
	assert_int_equal(th_addr_format(&a, small, sizeof(small)), 11);
	assert_string_equal(small, "2001:");
	memcpy(a.b, cases[0].b, 16);
	assert_int_equal(th_addr_format(&a, small, sizeof(small)), 8);
	assert_string_equal(small, "10.1.");
	assert_int_equal(th_addr_format(&a, NULL, 0), 8);
}

/* Every octet value in every position writes as printf writes it, within 16 bytes. */
static void
test_addr_format_every_octet(void **state)
{
	struct th_addr a;
	char want[32], got[64];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.b[10] = a.b[11] = 0xff;
	for (unsigned int v = 0; v < 256; v++) {
		for (unsigned int k = 0; k < 4; k++) {
			const uint8_t q[4][4] = {
				{(uint8_t)v, (uint8_t)(v + 1), (uint8_t)(v + 2), (uint8_t)(v + 3)},
				{(uint8_t)v, 0, 9, (uint8_t)v}, {255, 255, 255, (uint8_t)v},
				{1, 10, 100, (uint8_t)v}};
			char *end;

			memcpy(a.b + 12, q[k], 4);
			snprintf(want, sizeof(want), "%u.%u.%u.%u", q[k][0], q[k][1], q[k][2],
				q[k][3]);
			assert_int_equal(th_addr_format(&a, got, sizeof(got)), (int)strlen(want));
			assert_string_equal(got, want);
			memset(got, 0x5a, sizeof(got));
			end = th_addr_put_v4(got, &a);
			assert_int_equal(end - got, (long)strlen(want));
			assert_memory_equal(got, want, strlen(want));
			for (size_t i = 16; i < sizeof(got); i++)
				assert_int_equal(got[i], 0x5a);
		}
	}
}

/* Text to address: IPv4 comes back IPv4-mapped, and the family of the text is returned. */
static void
test_addr_parse(void **state)
{
	static const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
	static const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	static const char *const bad[] = {"", "10.1.2", "10.1.2.300", "10.1.2.3 ", " 10.1.2.3",
		"10.1.2.3/24", "fe80::1%eth0", "2001:db8::1::2", "filer1", "::fffff:1"};
	struct th_addr a;
	char buf[64];

	(void)state;
	assert_int_equal(th_addr_parse("10.1.2.3", &a), 4);
	assert_memory_equal(a.b, v4, 16);
	assert_true(th_addr_is_v4(&a));
	assert_int_equal(th_addr_parse("2001:db8::1", &a), 6);
	assert_memory_equal(a.b, v6, 16);
	assert_false(th_addr_is_v4(&a));
	/* The IPv6 text of a mapped address is the same address, written as IPv6. */
	assert_int_equal(th_addr_parse("::ffff:10.1.2.3", &a), 6);
	assert_memory_equal(a.b, v4, 16);
	/* Parse and format are inverses on the canonical text. */
	assert_int_equal(th_addr_parse("fe80::211:22ff:fe33:4455", &a), 6);
	assert_memory_equal(a.b, ip6_b, 16);
	th_addr_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "fe80::211:22ff:fe33:4455");
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(th_addr_parse(bad[i], &a), -EINVAL);
}

static void
test_status_names(void **state)
{
	unsigned int i, j;

	(void)state;
	for (i = 0; i < TH_PKT__STATUS_COUNT; i++) {
		const char *s = th_pkt_status_str((enum th_pkt_status)i);

		assert_non_null(s);
		assert_true(strlen(s) > 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(s, th_pkt_status_str((enum th_pkt_status)j));
	}
	assert_string_equal(th_pkt_status_str(TH_PKT_OK), "ok");
	assert_non_null(th_pkt_status_str(TH_PKT__STATUS_COUNT));
	assert_non_null(th_pkt_status_str((enum th_pkt_status) - 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eth_ipv4_tcp),
		cmocka_unit_test(test_eth_ipv4_udp),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_vlan_depth_limit),
		cmocka_unit_test(test_cooked_and_raw),
		cmocka_unit_test(test_not_ip),
		cmocka_unit_test(test_ipv4_options_and_bad_headers),
		cmocka_unit_test(test_padding_and_capture_cut),
		cmocka_unit_test(test_ipv4_fragments),
		cmocka_unit_test(test_ipv6_extension_headers),
		cmocka_unit_test(test_ipv6_fragments),
		cmocka_unit_test(test_tcp_header),
		cmocka_unit_test(test_udp_length),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_flow_hash_symmetric),
		cmocka_unit_test(test_flow_hash_spread),
		cmocka_unit_test(test_addr_format),
		cmocka_unit_test(test_addr_format_every_octet),
		cmocka_unit_test(test_addr_parse),
		cmocka_unit_test(test_status_names),
	};

	return cmocka_run_group_tests_name("pkt_parse", tests, NULL, NULL);
}
