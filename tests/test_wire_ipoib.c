/* IPoIB multicast mappings and wire formats (RFC 4391). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib_wire.h"

static void from_hex(uint8_t *out, const char *hex, size_t n)
{
	unsigned v;
	size_t i;

	assert_int_equal(strlen(hex), 2 * n);
	for (i = 0; i < n; i++) {
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

static struct imc_gid gid_text(const char *s)
{
	struct imc_gid g;

	assert_int_equal(imc_gid_parse(s, &g), 0);
	return g;
}

static void assert_gid_text(const struct imc_gid *g, const char *want)
{
	char buf[IMC_GID_STRLEN];

	imc_gid_format(g, buf);
	assert_string_equal(buf, want);
}

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static void test_bcast_mgid(void **state)
{
	struct imc_gid g;

	(void)state;
	assert_int_equal(imc_ipoib_bcast_mgid(0xFFFF, 2, &g), 0);
	assert_gid_text(&g, "ff12:401b:ffff::ffff:ffff");
	/* What saquery -g shows for the default partition under OpenSM. */
	{
		static const uint8_t want[16] = {
			0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
			0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff
		};

		assert_memory_equal(g.raw, want, 16);
	}
	/* The limited-member P_Key names the same group: full bit set. */
	assert_int_equal(imc_ipoib_bcast_mgid(0x7FFF, 2, &g), 0);
	assert_gid_text(&g, "ff12:401b:ffff::ffff:ffff");
	assert_int_equal(imc_ipoib_bcast_mgid(0x8001, 2, &g), 0);
	assert_gid_text(&g, "ff12:401b:8001::ffff:ffff");
	assert_int_equal(imc_ipoib_bcast_mgid(0x0001, 2, &g), 0);
	assert_gid_text(&g, "ff12:401b:8001::ffff:ffff");
	assert_int_equal(imc_ipoib_bcast_mgid(0x1234, 5, &g), 0);
	assert_gid_text(&g, "ff15:401b:9234::ffff:ffff");
	assert_int_equal(imc_ipoib_bcast_mgid(0xFFFF, 0xE, &g), 0);
	assert_gid_text(&g, "ff1e:401b:ffff::ffff:ffff");
	assert_true(imc_ipoib_mgid_is_bcast(&g));
	assert_int_equal(imc_mgid_check(&g), 0);

	memset(&g, 0x5A, sizeof(g));
	assert_int_equal(imc_ipoib_bcast_mgid(0xFFFF, 16, &g), -EINVAL);
	assert_int_equal(imc_ipoib_bcast_mgid(0x0000, 2, &g), -EINVAL);
	assert_int_equal(imc_ipoib_bcast_mgid(0x8000, 2, &g), -EINVAL);
	assert_int_equal(g.raw[0], 0x5A);
}

static void test_mgid_from_ipv4(void **state)
{
	static const struct {
		uint32_t group;
		uint16_t pkey;
		unsigned scope;
		const char *mgid;
	} cases[] = {
		{ IP4(224, 0, 0, 1), 0xFFFF, 2, "ff12:401b:ffff::1" },
		{ IP4(224, 0, 0, 251), 0xFFFF, 2, "ff12:401b:ffff::fb" },
		/* SSDP: the top nibble 0xE goes, 0xFFFFFFA stays. */
		{ IP4(239, 255, 255, 250), 0xFFFF, 2, "ff12:401b:ffff::fff:fffa" },
		/* 232.1.2.3 = 0xE8010203: low 28 bits 0x8010203. */
		{ IP4(232, 1, 2, 3), 0x8001, 5, "ff15:401b:8001::801:203" },
		/* 225.0.0.1: bit 24 is below the dropped nibble and kept. */
		{ IP4(225, 0, 0, 1), 0x7FFF, 2, "ff12:401b:ffff::100:1" },
		{ IP4(224, 0, 0, 0), 0xFFFF, 0xE, "ff1e:401b:ffff::" },
	};
	struct imc_gid g;
	size_t i;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		uint16_t pkey;

		assert_int_equal(imc_ipoib_mgid_from_ipv4(cases[i].group,
							  cases[i].pkey,
							  cases[i].scope, &g), 0);
		assert_gid_text(&g, cases[i].mgid);
		assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_IPV4);
		assert_int_equal(imc_ipoib_mgid_pkey(&g, &pkey), 0);
		assert_int_equal(pkey, cases[i].pkey | 0x8000);
		assert_false(imc_ipoib_mgid_is_bcast(&g));
	}
	/* Byte positions exactly as Linux ip_ib_mc_map writes them. */
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(239, 255, 255, 250), 0xFFFF,
						  2, &g), 0);
	{
		uint8_t want[16];

		from_hex(want, "ff12401bffff0000000000000ffffffa", 16);
		assert_memory_equal(g.raw, want, 16);
	}

	memset(&g, 0x5A, sizeof(g));
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(10, 0, 0, 1), 0xFFFF, 2, &g),
			 -EINVAL);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(223, 255, 255, 255), 0xFFFF,
						  2, &g), -EINVAL);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(240, 0, 0, 1), 0xFFFF, 2, &g),
			 -EINVAL);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(0xFFFFFFFF, 0xFFFF, 2, &g),
			 -EINVAL);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(224, 0, 0, 1), 0x8000, 2, &g),
			 -EINVAL);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(224, 0, 0, 1), 0xFFFF, 16, &g),
			 -EINVAL);
	assert_int_equal(g.raw[0], 0x5A);
}

static void test_mgid_from_ipv6(void **state)
{
	static const struct {
		const char *group;
		uint16_t pkey;
		unsigned scope;
		const char *mgid;
	} cases[] = {
		{ "ff02::1", 0xFFFF, 2, "ff12:601b:ffff::1" },
		{ "ff02::2", 0xFFFF, 2, "ff12:601b:ffff::2" },
		{ "ff02::1:ff00:1234", 0xFFFF, 2, "ff12:601b:ffff::1:ff00:1234" },
		{ "ff05::1:3", 0x8001, 5, "ff15:601b:8001::1:3" },
		/* Bytes 2-5 of the group are dropped, 6-15 kept. */
		{ "ff0e:1234:5678:9abc:def0:1234:5678:9abc", 0x7FFF, 2,
		  "ff12:601b:ffff:9abc:def0:1234:5678:9abc" },
		/* The group's own scope nibble does not leak into the MGID. */
		{ "ff0e::1", 0xFFFF, 2, "ff12:601b:ffff::1" },
	};
	struct imc_gid g, grp;
	size_t i;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		grp = gid_text(cases[i].group);
		assert_int_equal(imc_ipoib_mgid_from_ipv6(grp.raw, cases[i].pkey,
							  cases[i].scope, &g), 0);
		assert_gid_text(&g, cases[i].mgid);
		assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_IPV6);
		assert_int_equal(imc_mgid_check(&g), 0);
	}
	memset(&g, 0x5A, sizeof(g));
	grp = gid_text("fe80::1");
	assert_int_equal(imc_ipoib_mgid_from_ipv6(grp.raw, 0xFFFF, 2, &g), -EINVAL);
	grp = gid_text("2001:db8::1");
	assert_int_equal(imc_ipoib_mgid_from_ipv6(grp.raw, 0xFFFF, 2, &g), -EINVAL);
	grp = gid_text("fe02::1");
	assert_int_equal(imc_ipoib_mgid_from_ipv6(grp.raw, 0xFFFF, 2, &g), -EINVAL);
	grp = gid_text("ff02::1");
	assert_int_equal(imc_ipoib_mgid_from_ipv6(grp.raw, 0, 2, &g), -EINVAL);
	assert_int_equal(imc_ipoib_mgid_from_ipv6(grp.raw, 0xFFFF, 99, &g), -EINVAL);
	assert_int_equal(g.raw[0], 0x5A);
}

static void test_solicited_node(void **state)
{
	static const struct {
		const char *addr, *snm, *mgid;
	} cases[] = {
		{ "fe80::2:c903:a:b0c", "ff02::1:ff0a:b0c",
		  "ff12:601b:ffff::1:ff0a:b0c" },
		{ "2001:db8::1234:5678", "ff02::1:ff34:5678",
		  "ff12:601b:ffff::1:ff34:5678" },
		{ "fe80::ff00:1234", "ff02::1:ff00:1234",
		  "ff12:601b:ffff::1:ff00:1234" },
		{ "::1", "ff02::1:ff00:1", "ff12:601b:ffff::1:ff00:1" },
	};
	struct imc_gid a, snm, mgid;
	size_t i;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		a = gid_text(cases[i].addr);
		assert_int_equal(imc_ipv6_solicited_node(a.raw, snm.raw), 0);
		assert_gid_text(&snm, cases[i].snm);
		assert_int_equal(imc_ipoib_mgid_from_ipv6(snm.raw, 0xFFFF, 2,
							  &mgid), 0);
		assert_gid_text(&mgid, cases[i].mgid);
	}
	memset(snm.raw, 0x5A, 16);
	a = gid_text("ff02::1");
	assert_int_equal(imc_ipv6_solicited_node(a.raw, snm.raw), -EINVAL);
	a = gid_text("::");
	assert_int_equal(imc_ipv6_solicited_node(a.raw, snm.raw), -EINVAL);
	assert_int_equal(snm.raw[0], 0x5A);
}

static void test_mgid_helpers(void **state)
{
	struct imc_gid g, b;
	uint16_t pkey = 0;

	(void)state;
	g = gid_text("ff15:601b:8001::1:ff00:1234");
	assert_int_equal(imc_ipoib_mgid_pkey(&g, &pkey), 0);
	assert_int_equal(pkey, 0x8001);
	assert_int_equal(imc_ipoib_bcast_of(&g, &b), 0);
	assert_gid_text(&b, "ff15:401b:8001::ffff:ffff");
	assert_true(imc_ipoib_mgid_is_bcast(&b));

	g = gid_text("ff12:401b:ffff::fb");
	assert_int_equal(imc_ipoib_bcast_of(&g, &b), 0);
	assert_gid_text(&b, "ff12:401b:ffff::ffff:ffff");
	/* The broadcast group is its own broadcast group. */
	assert_int_equal(imc_ipoib_bcast_of(&b, &g), 0);
	assert_true(imc_gid_equal(&b, &g));

	pkey = 0x1111;
	g = gid_text("ff12:a01b:fe80::1");
	assert_int_equal(imc_ipoib_mgid_pkey(&g, &pkey), -EINVAL);
	assert_int_equal(pkey, 0x1111);
	memset(&b, 0x5A, sizeof(b));
	assert_int_equal(imc_ipoib_bcast_of(&g, &b), -EINVAL);
	assert_int_equal(b.raw[0], 0x5A);
	g = gid_text("fe80:401b:ffff::ffff:ffff");
	assert_int_equal(imc_ipoib_mgid_pkey(&g, &pkey), -EINVAL);
	assert_false(imc_ipoib_mgid_is_bcast(&g));

	/* Not broadcast: wrong signature, a nonzero middle, a short tail,
	 * or the flags of a well-known group. */
	g = gid_text("ff12:601b:ffff::ffff:ffff");
	assert_false(imc_ipoib_mgid_is_bcast(&g));
	g = gid_text("ff12:401b:ffff:0:1:0:ffff:ffff");
	assert_false(imc_ipoib_mgid_is_bcast(&g));
	g = gid_text("ff12:401b:ffff::ffff:fffe");
	assert_false(imc_ipoib_mgid_is_bcast(&g));
	g = gid_text("ff02:401b:ffff::ffff:ffff");
	assert_false(imc_ipoib_mgid_is_bcast(&g));
}

static void test_hdr(void **state)
{
	static const struct {
		uint16_t type;
		uint8_t wire[4];
	} cases[] = {
		{ IMC_ETHERTYPE_IPV4, { 0x08, 0x00, 0, 0 } },
		{ IMC_ETHERTYPE_ARP, { 0x08, 0x06, 0, 0 } },
		{ IMC_ETHERTYPE_IPV6, { 0x86, 0xDD, 0, 0 } },
	};
	struct imc_ipoib_hdr h;
	uint8_t buf[8], in[4];
	size_t i, len;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		memset(buf, 0xEE, sizeof(buf));
		h.type = cases[i].type;
		assert_int_equal(imc_ipoib_hdr_pack(&h, buf, sizeof(buf)), 4);
		assert_memory_equal(buf, cases[i].wire, 4);
		assert_int_equal(buf[4], 0xEE);
		h.type = 0;
		assert_int_equal(imc_ipoib_hdr_unpack(&h, buf, sizeof(buf)), 4);
		assert_int_equal(h.type, cases[i].type);
	}
	/* RFC 4391 6: reserved bits are ignored on receive. */
	in[0] = 0x86;
	in[1] = 0xDD;
	in[2] = 0xAB;
	in[3] = 0xCD;
	assert_int_equal(imc_ipoib_hdr_unpack(&h, in, 4), 4);
	assert_int_equal(h.type, 0x86DD);
	assert_int_equal(imc_ipoib_hdr_pack(&h, buf, 4), 4);
	assert_int_equal(buf[2], 0);
	assert_int_equal(buf[3], 0);
	for (len = 0; len < 4; len++) {
		h.type = 0x1234;
		assert_int_equal(imc_ipoib_hdr_unpack(&h, in, len), -EMSGSIZE);
		assert_int_equal(h.type, 0x1234);
		assert_int_equal(imc_ipoib_hdr_pack(&h, buf, len), -ENOSPC);
	}
}

/* The example address used below: connected-mode capable, QPN 0x48, port
 * GID fe80::2:c903:a:b0c. */
static const char hw_hex[] = "80000048fe800000000000000002c903000a0b0c";
static const char hw_text[] =
	"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c";

static struct imc_ipoib_hwaddr hw_example(void)
{
	struct imc_ipoib_hwaddr a;

	a.flags = IMC_IPOIB_HW_RC;
	a.qpn = 0x48;
	a.gid = gid_text("fe80::2:c903:a:b0c");
	return a;
}

static void assert_hw_equal(const struct imc_ipoib_hwaddr *a,
			    const struct imc_ipoib_hwaddr *b)
{
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->qpn, b->qpn);
	assert_memory_equal(a->gid.raw, b->gid.raw, 16);
}

static void test_hwaddr_wire(void **state)
{
	struct imc_ipoib_hwaddr a = hw_example(), b;
	uint8_t want[20], buf[32];
	size_t len;

	(void)state;
	from_hex(want, hw_hex, 20);
	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(imc_ipoib_hwaddr_pack(&a, buf, sizeof(buf)), 20);
	assert_memory_equal(buf, want, 20);
	assert_int_equal(buf[20], 0xEE);
	assert_int_equal(imc_ipoib_hwaddr_unpack(&b, buf, 20), 20);
	assert_hw_equal(&a, &b);

	/* Reserved flag bits and the whole QPN range survive. */
	from_hex(want, "7fabcdefff12401bffff000000000000ffffffff", 20);
	assert_int_equal(imc_ipoib_hwaddr_unpack(&b, want, 20), 20);
	assert_int_equal(b.flags, 0x7F);
	assert_int_equal(b.qpn, 0xABCDEF);
	assert_int_equal(imc_ipoib_hwaddr_pack(&b, buf, 20), 20);
	assert_memory_equal(buf, want, 20);

	for (len = 0; len < 20; len++) {
		b.qpn = 7;
		assert_int_equal(imc_ipoib_hwaddr_unpack(&b, want, len), -EMSGSIZE);
		assert_int_equal(b.qpn, 7);
		assert_int_equal(imc_ipoib_hwaddr_pack(&a, buf, len), -ENOSPC);
	}
	a.qpn = 0x1000000;
	assert_int_equal(imc_ipoib_hwaddr_pack(&a, buf, sizeof(buf)), -EINVAL);

	/* A group address as Linux builds it for 224.0.0.1. */
	{
		struct imc_gid mgid;

		assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(224, 0, 0, 1),
							  0xFFFF, 2, &mgid), 0);
		imc_ipoib_hwaddr_mcast(&mgid, &b);
		assert_int_equal(imc_ipoib_hwaddr_pack(&b, buf, 20), 20);
		from_hex(want, "00ffffffff12401bffff00000000000000000001", 20);
		assert_memory_equal(buf, want, 20);
	}
}

static void test_hwaddr_text(void **state)
{
	static const char *bad[] = {
		"",
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b",
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c:",
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c:0d",
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:c",
		"8:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c",
		"80-00-00-48-fe-80-00-00-00-00-00-00-00-02-c9-03-00-0a-0b-0c",
		"8000:0048:fe80:0000:0000:0000:0002:c903:000a:0b0c",
		" 80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c",
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c ",
		"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0g",
		"80::00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c",
		"800000:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c",
	};
	struct imc_ipoib_hwaddr a = hw_example(), b, untouched;
	char buf[IMC_IPOIB_HWADDR_STRLEN];
	size_t i;

	(void)state;
	assert_int_equal(imc_ipoib_hwaddr_format(&a, buf), 59);
	assert_string_equal(buf, hw_text);
	assert_int_equal(imc_ipoib_hwaddr_parse(hw_text, &b), 0);
	assert_hw_equal(&a, &b);
	assert_int_equal(imc_ipoib_hwaddr_parse(
		"80:00:00:48:FE:80:00:00:00:00:00:00:00:02:C9:03:00:0A:0B:0C", &b), 0);
	assert_hw_equal(&a, &b);

	memset(&untouched, 0x5A, sizeof(untouched));
	for (i = 0; i < IMC_ARRAY_SIZE(bad); i++) {
		b = untouched;
		if (imc_ipoib_hwaddr_parse(bad[i], &b) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_hw_equal(&b, &untouched);
	}
	assert_int_equal(imc_ipoib_hwaddr_parse(NULL, &b), -EINVAL);
	a.qpn = 0x1000000;
	assert_int_equal(imc_ipoib_hwaddr_format(&a, buf), -EINVAL);
}

/* An ARP request from 192.168.1.1 (the example address) for 192.168.1.2.
 * tshark 4.0 decodes these bytes (in a Linux cooked capture) as: hardware
 * type InfiniBand (32), protocol IPv4, sizes 20 and 4, opcode request,
 * sender 80000048fe800000000000000002c903000a0b0c / 192.168.1.1, target
 * zeros / 192.168.1.2. */
static const char arp_hex[] =
	"0020080014040001"
	"80000048fe800000000000000002c903000a0b0c" "c0a80101"
	"0000000000000000000000000000000000000000" "c0a80102";

static void test_arp(void **state)
{
	struct imc_ipoib_arp p, q;
	uint8_t want[56], buf[64], bad[56];
	size_t len, i;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.op = IMC_ARP_OP_REQUEST;
	p.sha = hw_example();
	p.spa = IP4(192, 168, 1, 1);
	p.tpa = IP4(192, 168, 1, 2);
	from_hex(want, arp_hex, 56);
	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(imc_ipoib_arp_pack(&p, buf, sizeof(buf)), 56);
	assert_memory_equal(buf, want, 56);
	assert_int_equal(buf[56], 0xEE);

	assert_int_equal(imc_ipoib_arp_unpack(&q, want, 56), 56);
	assert_int_equal(q.op, 1);
	assert_hw_equal(&q.sha, &p.sha);
	assert_int_equal(q.spa, 0xC0A80101);
	assert_hw_equal(&q.tha, &p.tha);
	assert_int_equal(q.tpa, 0xC0A80102);
	/* Trailing bytes are not part of the packet and are left alone. */
	assert_int_equal(imc_ipoib_arp_unpack(&q, buf, sizeof(buf)), 56);

	/* The reply, with the target filled in. */
	p.op = IMC_ARP_OP_REPLY;
	p.tha.flags = 0;
	p.tha.qpn = 0xABCDEF;
	p.tha.gid = gid_text("fe80::2:c903:a:b0d");
	assert_int_equal(imc_ipoib_arp_pack(&p, buf, 56), 56);
	assert_int_equal(buf[7], 2);
	assert_int_equal(buf[32], 0x00);
	assert_int_equal(buf[33], 0xAB);
	assert_int_equal(buf[34], 0xCD);
	assert_int_equal(buf[35], 0xEF);
	assert_int_equal(imc_ipoib_arp_unpack(&q, buf, 56), 56);
	assert_int_equal(q.op, 2);
	assert_hw_equal(&q.tha, &p.tha);

	/* Truncated at every length. */
	for (len = 0; len < 56; len++) {
		q.op = 0x7777;
		assert_int_equal(imc_ipoib_arp_unpack(&q, want, len), -EMSGSIZE);
		assert_int_equal(q.op, 0x7777);
		assert_int_equal(imc_ipoib_arp_pack(&p, buf, len), -ENOSPC);
	}

	/* Wrong hardware type (Ethernet), protocol type (IPv6), hardware
	 * length (Ethernet's 6), protocol length (16). */
	{
		static const struct {
			size_t off;
			uint8_t v;
		} bads[] = { { 1, 0x01 }, { 0, 0x01 }, { 2, 0x86 }, { 3, 0x01 },
			     { 4, 6 }, { 4, 21 }, { 5, 16 }, { 5, 0 } };

		for (i = 0; i < IMC_ARRAY_SIZE(bads); i++) {
			memcpy(bad, want, 56);
			bad[bads[i].off] = bads[i].v;
			q.op = 0x7777;
			assert_int_equal(imc_ipoib_arp_unpack(&q, bad, 56), -EINVAL);
			assert_int_equal(q.op, 0x7777);
		}
	}
	/* Other opcodes are returned for the caller to judge. */
	memcpy(bad, want, 56);
	bad[7] = 8;
	assert_int_equal(imc_ipoib_arp_unpack(&q, bad, 56), 56);
	assert_int_equal(q.op, 8);

	p.sha.qpn = 0x1000000;
	assert_int_equal(imc_ipoib_arp_pack(&p, buf, 56), -EINVAL);
}

/* A source link-layer address option for the example address. tshark 4.0
 * shows it as Type 1, Length 3 (24 bytes) and, not knowing the IPoIB
 * padding, "link-layer address 0000" followed by the 20 address bytes;
 * Linux's ndisc pads IPoIB options the same way (2 bytes before). */
static const char nd_hex[] = "01030000" "80000048fe800000000000000002c903000a0b0c";

static void test_nd_opt(void **state)
{
	struct imc_ipoib_nd_opt o, q;
	uint8_t want[24], buf[32], bad[24];
	size_t len;
	unsigned v;

	(void)state;
	o.type = IMC_ND_OPT_SOURCE_LLADDR;
	o.addr = hw_example();
	from_hex(want, nd_hex, 24);
	memset(buf, 0xEE, sizeof(buf));
	assert_int_equal(imc_ipoib_nd_opt_pack(&o, buf, sizeof(buf)), 24);
	assert_memory_equal(buf, want, 24);
	assert_int_equal(buf[24], 0xEE);
	assert_int_equal(imc_ipoib_nd_opt_unpack(&q, want, 24), 24);
	assert_int_equal(q.type, 1);
	assert_hw_equal(&q.addr, &o.addr);
	/* Another option may follow. */
	assert_int_equal(imc_ipoib_nd_opt_unpack(&q, buf, sizeof(buf)), 24);

	o.type = IMC_ND_OPT_TARGET_LLADDR;
	assert_int_equal(imc_ipoib_nd_opt_pack(&o, buf, 24), 24);
	assert_int_equal(buf[0], 2);
	assert_int_equal(imc_ipoib_nd_opt_unpack(&q, buf, 24), 24);
	assert_int_equal(q.type, 2);

	/* Reserved bytes: ignored on receive, zero on send. */
	memcpy(bad, want, 24);
	bad[2] = 0xAA;
	bad[3] = 0x55;
	assert_int_equal(imc_ipoib_nd_opt_unpack(&q, bad, 24), 24);
	assert_int_equal(imc_ipoib_nd_opt_pack(&q, buf, 24), 24);
	assert_memory_equal(buf, want, 24);

	/* Every length byte but 3 (0 would loop an option walker). */
	for (v = 0; v < 256; v++) {
		if (v == 3)
			continue;
		memcpy(bad, want, 24);
		bad[1] = (uint8_t)v;
		q.type = 99;
		assert_int_equal(imc_ipoib_nd_opt_unpack(&q, bad, 24), -EINVAL);
		assert_int_equal(q.type, 99);
	}
	/* Every type but 1 and 2. */
	for (v = 0; v < 256; v++) {
		if (v == 1 || v == 2)
			continue;
		memcpy(bad, want, 24);
		bad[0] = (uint8_t)v;
		assert_int_equal(imc_ipoib_nd_opt_unpack(&q, bad, 24), -EINVAL);
		o.type = (uint8_t)v;
		assert_int_equal(imc_ipoib_nd_opt_pack(&o, buf, 24), -EINVAL);
	}
	o.type = 1;
	/* Truncated: the option claims 24 bytes the buffer lacks. */
	for (len = 0; len < 24; len++) {
		q.type = 99;
		assert_int_equal(imc_ipoib_nd_opt_unpack(&q, want, len), -EMSGSIZE);
		assert_int_equal(q.type, 99);
		assert_int_equal(imc_ipoib_nd_opt_pack(&o, buf, len), -ENOSPC);
	}
	o.addr.qpn = 0x1000000;
	assert_int_equal(imc_ipoib_nd_opt_pack(&o, buf, 24), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bcast_mgid),
		cmocka_unit_test(test_mgid_from_ipv4),
		cmocka_unit_test(test_mgid_from_ipv6),
		cmocka_unit_test(test_solicited_node),
		cmocka_unit_test(test_mgid_helpers),
		cmocka_unit_test(test_hdr),
		cmocka_unit_test(test_hwaddr_wire),
		cmocka_unit_test(test_hwaddr_text),
		cmocka_unit_test(test_arp),
		cmocka_unit_test(test_nd_opt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
