/* The IP side of the IPoIB interface: ND messages with the IPoIB
 * link-layer option (RFC 4861, RFC 4391 9.1.1), IP header parsing and
 * IP address text. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ipoib/ipoib_int.h"

static size_t from_hex(uint8_t *out, const char *hex)
{
	size_t n = strlen(hex) / 2;
	unsigned v;

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void v6(const char *s, uint8_t out[16])
{
	struct imc_ip_addr a;

	assert_int_equal(imc_ip_addr_parse(s, &a, NULL), 0);
	assert_int_equal(a.family, IMC_IPV6);
	memcpy(out, a.v6, 16);
}

/* An NS from fd00::1 for fd00::2 with the source option of QPN 0x48,
 * GID fe80::2:c903:0:1. The bytes were made independently and tshark
 * reads them as a Neighbor Solicitation with "Checksum: 0xb7b6
 * [correct]" and a 24-byte source link-layer address option. */
static const char ns_hex[] =
	"6000000000303afffd000000000000000000000000000001ff02000000000000"
	"00000001ff0000028700b7b600000000fd000000000000000000000000000002"
	"0103000000000048fe800000000000000002c90300000001";

static void ns_struct(struct ipo_nd *nd)
{
	memset(nd, 0, sizeof(*nd));
	nd->type = IPO_ICMP6_NS;
	v6("fd00::1", nd->src);
	v6("ff02::1:ff00:2", nd->dst);
	v6("fd00::2", nd->target);
	nd->has_lladdr = true;
	nd->lladdr.qpn = 0x48;
	assert_int_equal(imc_gid_parse("fe80::2:c903:0:1", &nd->lladdr.gid), 0);
}

static void test_ns_build_matches_vector(void **state)
{
	uint8_t want[128], buf[128];
	size_t n = from_hex(want, ns_hex);
	struct ipo_nd nd;

	(void)state;
	ns_struct(&nd);
	assert_int_equal(ipo_nd_build(&nd, buf, sizeof(buf)), (int)n);
	assert_memory_equal(buf, want, n);
	assert_int_equal(ipo_nd_build(&nd, buf, n - 1), -ENOSPC);
}

static void test_ns_parse(void **state)
{
	uint8_t pkt[128];
	size_t n = from_hex(pkt, ns_hex);
	struct ipo_nd nd, want;

	(void)state;
	ns_struct(&want);
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), 0);
	assert_int_equal(nd.type, IPO_ICMP6_NS);
	assert_memory_equal(nd.src, want.src, 16);
	assert_memory_equal(nd.dst, want.dst, 16);
	assert_memory_equal(nd.target, want.target, 16);
	assert_true(nd.has_lladdr);
	assert_int_equal(nd.lladdr.qpn, 0x48);
	assert_true(imc_gid_equal(&nd.lladdr.gid, &want.lladdr.gid));
	/* Truncated anywhere: refused, never read past the end. */
	for (size_t l = 0; l < n; l++)
		assert_int_equal(ipo_nd_parse(pkt, l, &nd), -EINVAL);
}

static void test_na_round_trip(void **state)
{
	uint8_t buf[128];
	struct ipo_nd na, got;
	int n;

	(void)state;
	memset(&na, 0, sizeof(na));
	na.type = IPO_ICMP6_NA;
	na.flags = IPO_NA_SOLICITED | IPO_NA_OVERRIDE;
	v6("fd00::2", na.src);
	v6("fd00::1", na.dst);
	v6("fd00::2", na.target);
	na.has_lladdr = true;
	na.lladdr.flags = 0x80;
	na.lladdr.qpn = 0x123456;
	assert_int_equal(imc_gid_parse("fe80::9", &na.lladdr.gid), 0);
	n = ipo_nd_build(&na, buf, sizeof(buf));
	assert_int_equal(n, 40 + 24 + 24);
	assert_int_equal(imc_icmp6_csum(na.src, na.dst, buf + 40, 48), 0);
	assert_int_equal(ipo_nd_parse(buf, (size_t)n, &got), 0);
	assert_int_equal(got.type, IPO_ICMP6_NA);
	assert_int_equal(got.flags, IPO_NA_SOLICITED | IPO_NA_OVERRIDE);
	assert_int_equal(got.lladdr.flags, 0x80);
	assert_int_equal(got.lladdr.qpn, 0x123456);
	/* Without the option. */
	na.has_lladdr = false;
	n = ipo_nd_build(&na, buf, sizeof(buf));
	assert_int_equal(n, 40 + 24);
	assert_int_equal(ipo_nd_parse(buf, (size_t)n, &got), 0);
	assert_false(got.has_lladdr);
}

/* Fixes the checksum after an edit of the ICMPv6 part. */
static void refix(uint8_t *pkt, size_t n)
{
	uint16_t c;

	pkt[42] = pkt[43] = 0;
	c = imc_icmp6_csum(pkt + 8, pkt + 24, pkt + 40, n - 40);
	pkt[42] = (uint8_t)(c >> 8);
	pkt[43] = (uint8_t)c;
}

static void test_nd_validation(void **state)
{
	uint8_t pkt[128], orig[128];
	size_t n = from_hex(orig, ns_hex);
	struct ipo_nd nd;

	(void)state;
	/* RFC 4861 7.1.1: hop limit 255. */
	memcpy(pkt, orig, n);
	pkt[7] = 254;
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -EINVAL);
	/* Bad checksum. */
	memcpy(pkt, orig, n);
	pkt[43] ^= 1;
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -EINVAL);
	/* Code not 0. */
	memcpy(pkt, orig, n);
	pkt[41] = 1;
	refix(pkt, n);
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -EINVAL);
	/* Multicast target. */
	memcpy(pkt, orig, n);
	pkt[48] = 0xFF;
	refix(pkt, n);
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -EINVAL);
	/* An option of length 0. */
	memcpy(pkt, orig, n);
	pkt[65] = 0;
	refix(pkt, n);
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -EINVAL);
	/* DAD (source ::) must not carry a source option. */
	memcpy(pkt, orig, n);
	memset(pkt + 8, 0, 16);
	refix(pkt, n);
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -EINVAL);
	/* ... and without it, it is valid and says DAD. */
	memcpy(pkt, orig, 64);
	memset(pkt + 8, 0, 16);
	pkt[5] = 24;
	refix(pkt, 64);
	assert_int_equal(ipo_nd_parse(pkt, 64, &nd), 0);
	assert_false(nd.has_lladdr);
	/* An Ethernet-sized option (length 1) is another link's: skipped. */
	memcpy(pkt, orig, 64);
	pkt[64] = 1;
	pkt[65] = 1;
	memset(pkt + 66, 0xAB, 6);
	pkt[5] = 32;
	refix(pkt, 72);
	assert_int_equal(ipo_nd_parse(pkt, 72, &nd), 0);
	assert_false(nd.has_lladdr);
	/* Not ND: an echo request is for the host. */
	memcpy(pkt, orig, n);
	pkt[40] = 128;
	refix(pkt, n);
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -ENOENT);
	memcpy(pkt, orig, n);
	pkt[6] = 17;
	assert_int_equal(ipo_nd_parse(pkt, n, &nd), -ENOENT);
}

static void test_na_to_group_not_solicited(void **state)
{
	uint8_t buf[128];
	struct ipo_nd na, got;
	int n;

	(void)state;
	memset(&na, 0, sizeof(na));
	na.type = IPO_ICMP6_NA;
	na.flags = IPO_NA_SOLICITED;
	v6("fd00::2", na.src);
	v6("ff02::1", na.dst);
	v6("fd00::2", na.target);
	n = ipo_nd_build(&na, buf, sizeof(buf));
	assert_true(n > 0);
	/* RFC 4861 7.1.2: to a group, the Solicited flag must be 0. */
	assert_int_equal(ipo_nd_parse(buf, (size_t)n, &got), -EINVAL);
	na.flags = IPO_NA_OVERRIDE;
	n = ipo_nd_build(&na, buf, sizeof(buf));
	assert_int_equal(ipo_nd_parse(buf, (size_t)n, &got), 0);
}

static void test_ip_parse(void **state)
{
	uint8_t p[64];
	struct imc_ip_hdr h;

	(void)state;
	memset(p, 0, sizeof(p));
	p[0] = 0x45;
	p[3] = 28;
	p[9] = 1;
	p[12] = 10, p[15] = 1;
	p[16] = 224, p[19] = 5;
	assert_int_equal(imc_ip_parse(p, 40, &h), 0);
	assert_int_equal(h.family, IMC_IPV4);
	assert_int_equal(h.len, 28);
	assert_int_equal(h.proto, 1);
	assert_int_equal(h.src.v4, 0x0A000001);
	assert_int_equal(h.dst.v4, 0xE0000005);
	assert_true(imc_ip_addr_is_multicast(&h.dst));
	/* Total length beyond the buffer, header length below 20. */
	assert_int_equal(imc_ip_parse(p, 27, &h), -EINVAL);
	p[0] = 0x44;
	assert_int_equal(imc_ip_parse(p, 40, &h), -EINVAL);
	p[0] = 0x75;
	assert_int_equal(imc_ip_parse(p, 40, &h), -EINVAL);
	assert_int_equal(imc_ip_parse(p, 0, &h), -EINVAL);
	/* IPv6: payload length + 40 within the buffer. */
	memset(p, 0, sizeof(p));
	p[0] = 0x60;
	p[5] = 8;
	p[6] = 17;
	p[24] = 0xFF;
	assert_int_equal(imc_ip_parse(p, 48, &h), 0);
	assert_int_equal(h.family, IMC_IPV6);
	assert_int_equal(h.len, 48);
	assert_int_equal(h.proto, 17);
	assert_true(imc_ip_addr_is_multicast(&h.dst));
	assert_int_equal(imc_ip_parse(p, 47, &h), -EINVAL);
	assert_int_equal(imc_ip_parse(p, 39, &h), -EINVAL);
}

static void test_ip_addr_text(void **state)
{
	struct imc_ip_addr a;
	unsigned plen = 99;
	char buf[IMC_IP_ADDR_STRLEN];

	(void)state;
	assert_int_equal(imc_ip_addr_parse("10.1.2.3/24", &a, &plen), 0);
	assert_int_equal(a.family, IMC_IPV4);
	assert_int_equal(a.v4, 0x0A010203);
	assert_int_equal(plen, 24);
	assert_int_equal(imc_ip_addr_format(&a, buf), 8);
	assert_string_equal(buf, "10.1.2.3");
	assert_int_equal(imc_ip_addr_parse("10.1.2.3", &a, &plen), 0);
	assert_int_equal(plen, 32);
	assert_int_equal(imc_ip_addr_parse("FD00:0::1/64", &a, &plen), 0);
	assert_int_equal(a.family, IMC_IPV6);
	assert_int_equal(plen, 64);
	assert_int_equal(imc_ip_addr_format(&a, buf), 7);
	assert_string_equal(buf, "fd00::1");
	/* Refusals leave *out alone. */
	memset(&a, 0x5A, sizeof(a));
	assert_int_equal(imc_ip_addr_parse("10.1.2.3/33", &a, &plen), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("10.1.2.3/24", &a, NULL), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("fd00::1/129", &a, &plen), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("10.1.2", &a, &plen), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("10.1.2.3/", &a, &plen), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("10.1.2.3/2x", &a, &plen), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("", &a, &plen), -EINVAL);
	assert_int_equal(a.family, 0x5A);
	imc_ip_addr_v4(0xE0000001, &a);
	assert_true(imc_ip_addr_is_multicast(&a));
	imc_ip_addr_v4(0xDF000001, &a);
	assert_false(imc_ip_addr_is_multicast(&a));
	a.family = 5;
	assert_int_equal(imc_ip_addr_format(&a, buf), -EINVAL);
}

/* The one order of IP addresses: IPv4 before IPv6, IPv4 by value (host
 * order, so 9.x before 10.x), IPv6 by bytes; equal is 0 both ways. */
static void test_ip_addr_cmp(void **state)
{
	struct imc_ip_addr a, b, c;

	(void)state;
	assert_int_equal(imc_ip_addr_parse("9.255.255.255", &a, NULL), 0);
	assert_int_equal(imc_ip_addr_parse("10.0.0.0", &b, NULL), 0);
	assert_int_equal(imc_ip_addr_parse("::1", &c, NULL), 0);
	assert_true(imc_ip_addr_cmp(&a, &b) < 0);
	assert_true(imc_ip_addr_cmp(&b, &a) > 0);
	assert_true(imc_ip_addr_cmp(&b, &c) < 0);
	assert_true(imc_ip_addr_cmp(&c, &a) > 0);
	assert_int_equal(imc_ip_addr_cmp(&a, &a), 0);
	assert_int_equal(imc_ip_addr_parse("fe80::2", &a, NULL), 0);
	assert_int_equal(imc_ip_addr_parse("fe80::10", &b, NULL), 0);
	assert_true(imc_ip_addr_cmp(&a, &b) < 0);
	assert_true(imc_ip_addr_cmp(&b, &a) > 0);
	assert_int_equal(imc_ip_addr_parse("FE80::10", &c, NULL), 0);
	assert_int_equal(imc_ip_addr_cmp(&b, &c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ns_build_matches_vector),
		cmocka_unit_test(test_ns_parse),
		cmocka_unit_test(test_na_round_trip),
		cmocka_unit_test(test_nd_validation),
		cmocka_unit_test(test_na_to_group_not_solicited),
		cmocka_unit_test(test_ip_parse),
		cmocka_unit_test(test_ip_addr_text),
		cmocka_unit_test(test_ip_addr_cmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
