/* The IP side of the IPoIB interface: IP header parsing, ND messages
 * (RFC 4861) with the IPoIB link-layer address option (RFC 4391 9.1.1),
 * the ICMPv6 checksum and IP address text. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipoib/ipoib_int.h"
#include "util/bytes.h"

/* ---- IP addresses ---- */

void imc_ip_addr_v4(uint32_t addr, struct imc_ip_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->family = IMC_IPV4;
	out->v4 = addr;
}

void imc_ip_addr_v6(const uint8_t addr[16], struct imc_ip_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->family = IMC_IPV6;
	memcpy(out->v6, addr, 16);
}

int imc_ip_addr_cmp(const struct imc_ip_addr *a, const struct imc_ip_addr *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->family == IMC_IPV4)
		return a->v4 < b->v4 ? -1 : a->v4 > b->v4;
	return memcmp(a->v6, b->v6, 16);
}

bool imc_ip_addr_is_multicast(const struct imc_ip_addr *a)
{
	if (a->family == IMC_IPV4)
		return (a->v4 >> 28) == 0xE;
	if (a->family == IMC_IPV6)
		return a->v6[0] == 0xFF;
	return false;
}

int imc_ip_addr_parse(const char *s, struct imc_ip_addr *out,
		      unsigned *prefix_len)
{
	char buf[IMC_IP_ADDR_STRLEN];
	const char *slash;
	size_t n;
	struct imc_ip_addr a;
	unsigned plen;
	uint8_t raw[16];

	if (!s || !out)
		return -EINVAL;
	slash = strchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, raw) == 1)
		imc_ip_addr_v4(imc_get32(raw), &a);
	else if (inet_pton(AF_INET6, buf, raw) == 1)
		imc_ip_addr_v6(raw, &a);
	else
		return -EINVAL;
	plen = a.family == IMC_IPV4 ? 32 : 128;
	if (slash) {
		const char *p = slash + 1;
		unsigned v = 0;

		if (!prefix_len || !*p || strlen(p) > 3)
			return -EINVAL;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -EINVAL;
			v = v * 10 + (unsigned)(*p - '0');
		}
		if (v > plen)
			return -EINVAL;
		plen = v;
	}
	if (prefix_len)
		*prefix_len = plen;
	*out = a;
	return 0;
}

int imc_ip_addr_format(const struct imc_ip_addr *a,
		       char buf[IMC_IP_ADDR_STRLEN])
{
	uint8_t raw[4];

	if (a->family == IMC_IPV4) {
		imc_put32(raw, a->v4);
		if (!inet_ntop(AF_INET, raw, buf, IMC_IP_ADDR_STRLEN))
			return -EINVAL;
	} else if (a->family == IMC_IPV6) {
		if (!inet_ntop(AF_INET6, a->v6, buf, IMC_IP_ADDR_STRLEN))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return (int)strlen(buf);
}

/* ---- IP headers ---- */

int imc_ip_parse(const uint8_t *pkt, size_t len, struct imc_ip_hdr *out)
{
	struct imc_ip_hdr h;

	memset(&h, 0, sizeof(h));
	if (len < 1)
		return -EINVAL;
	switch (pkt[0] >> 4) {
	case 4: {
		size_t ihl = (size_t)(pkt[0] & 0xF) * 4;

		if (len < IPO_IP4_HDR_LEN || ihl < IPO_IP4_HDR_LEN)
			return -EINVAL;
		h.len = imc_get16(pkt + 2);
		if (h.len < ihl || h.len > len)
			return -EINVAL;
		h.family = IMC_IPV4;
		h.proto = pkt[9];
		imc_ip_addr_v4(imc_get32(pkt + 12), &h.src);
		imc_ip_addr_v4(imc_get32(pkt + 16), &h.dst);
		break;
	}
	case 6:
		if (len < IPO_IP6_HDR_LEN)
			return -EINVAL;
		/* A payload length of 0 means a jumbogram (RFC 2675), which
		 * no IPoIB MTU carries. */
		h.len = (size_t)imc_get16(pkt + 4) + IPO_IP6_HDR_LEN;
		if (h.len > len)
			return -EINVAL;
		h.family = IMC_IPV6;
		h.proto = pkt[6];
		imc_ip_addr_v6(pkt + 8, &h.src);
		imc_ip_addr_v6(pkt + 24, &h.dst);
		break;
	default:
		return -EINVAL;
	}
	*out = h;
	return 0;
}

/* ---- ICMPv6 and ND ---- */

static uint32_t sum16(uint32_t acc, const uint8_t *p, size_t len)
{
	for (; len >= 2; p += 2, len -= 2)
		acc += (uint32_t)p[0] << 8 | p[1];
	if (len)
		acc += (uint32_t)p[0] << 8;
	return acc;
}

uint16_t imc_icmp6_csum(const uint8_t src[16], const uint8_t dst[16],
			const uint8_t *msg, size_t len)
{
	uint8_t ph[8];
	uint32_t acc = 0;

	imc_put32(ph, (uint32_t)len);
	ph[4] = ph[5] = ph[6] = 0;
	ph[7] = IPO_PROTO_ICMP6;
	acc = sum16(acc, src, 16);
	acc = sum16(acc, dst, 16);
	acc = sum16(acc, ph, sizeof(ph));
	acc = sum16(acc, msg, len);
	while (acc >> 16)
		acc = (acc & 0xFFFF) + (acc >> 16);
	return (uint16_t)~acc;
}

static bool is_unspec(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

/* ff02::1:ffXX:XXXX (RFC 4291 2.7.1). */
static bool is_solicited_node(const uint8_t a[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
					 0, 0, 0, 0x01, 0xff };

	return memcmp(a, pfx, sizeof(pfx)) == 0;
}

int ipo_nd_parse(const uint8_t *pkt, size_t len, struct ipo_nd *out)
{
	struct ipo_nd nd;
	const uint8_t *icmp, *opt;
	size_t plen, left;

	if (len < IPO_IP6_HDR_LEN || (pkt[0] >> 4) != 6)
		return -EINVAL;
	plen = imc_get16(pkt + 4);
	if (plen + IPO_IP6_HDR_LEN > len)
		return -EINVAL;
	/* ND messages carry no extension headers; anything else is some
	 * other packet for the host. */
	if (pkt[6] != IPO_PROTO_ICMP6 || plen < 1)
		return -ENOENT;
	icmp = pkt + IPO_IP6_HDR_LEN;
	if (icmp[0] != IPO_ICMP6_NS && icmp[0] != IPO_ICMP6_NA)
		return -ENOENT;
	memset(&nd, 0, sizeof(nd));
	nd.type = icmp[0];
	memcpy(nd.src, pkt + 8, 16);
	memcpy(nd.dst, pkt + 24, 16);
	/* RFC 4861 7.1.1/7.1.2: hop limit 255 (not forwarded), ICMP code 0,
	 * length 24 or more, valid checksum, target not multicast. */
	if (pkt[7] != 255 || plen < IPO_NS_LEN || icmp[1] != 0)
		return -EINVAL;
	if (imc_icmp6_csum(nd.src, nd.dst, icmp, plen) != 0)
		return -EINVAL;
	memcpy(nd.target, icmp + 8, 16);
	if (nd.target[0] == 0xFF)
		return -EINVAL;
	if (nd.type == IPO_ICMP6_NA)
		nd.flags = icmp[4] & (IPO_NA_ROUTER | IPO_NA_SOLICITED |
				      IPO_NA_OVERRIDE);
	opt = icmp + IPO_NS_LEN;
	left = plen - IPO_NS_LEN;
	while (left) {
		size_t olen;

		if (left < 2 || opt[1] == 0)
			return -EINVAL;
		olen = (size_t)opt[1] * 8;
		if (olen > left)
			return -EINVAL;
		if ((nd.type == IPO_ICMP6_NS &&
		     opt[0] == IMC_ND_OPT_SOURCE_LLADDR) ||
		    (nd.type == IPO_ICMP6_NA &&
		     opt[0] == IMC_ND_OPT_TARGET_LLADDR)) {
			struct imc_ipoib_nd_opt o;

			/* Another link layer's length: not ours to read
			 * (RFC 4861 4.6.1 leaves the format to the link). */
			if (imc_ipoib_nd_opt_unpack(&o, opt, olen) > 0) {
				nd.has_lladdr = true;
				nd.lladdr = o.addr;
			}
		}
		opt += olen;
		left -= olen;
	}
	if (nd.type == IPO_ICMP6_NS && is_unspec(nd.src) &&
	    (!is_solicited_node(nd.dst) || nd.has_lladdr))
		return -EINVAL;
	if (nd.type == IPO_ICMP6_NA && nd.dst[0] == 0xFF &&
	    (nd.flags & IPO_NA_SOLICITED))
		return -EINVAL;
	*out = nd;
	return 0;
}

int ipo_nd_build(const struct ipo_nd *nd, uint8_t *buf, size_t len)
{
	size_t plen = IPO_NS_LEN + (nd->has_lladdr ? IMC_IPOIB_ND_OPT_LEN : 0);
	uint8_t *icmp = buf + IPO_IP6_HDR_LEN;
	uint16_t csum;

	if (len < IPO_IP6_HDR_LEN + plen)
		return -ENOSPC;
	memset(buf, 0, IPO_IP6_HDR_LEN + plen);
	buf[0] = 0x60;
	imc_put16(buf + 4, (uint16_t)plen);
	buf[6] = IPO_PROTO_ICMP6;
	buf[7] = 255;
	memcpy(buf + 8, nd->src, 16);
	memcpy(buf + 24, nd->dst, 16);
	icmp[0] = nd->type;
	if (nd->type == IPO_ICMP6_NA)
		icmp[4] = nd->flags;
	memcpy(icmp + 8, nd->target, 16);
	if (nd->has_lladdr) {
		struct imc_ipoib_nd_opt o = {
			.type = nd->type == IPO_ICMP6_NS ?
				IMC_ND_OPT_SOURCE_LLADDR :
				IMC_ND_OPT_TARGET_LLADDR,
			.addr = nd->lladdr,
		};

		if (imc_ipoib_nd_opt_pack(&o, icmp + IPO_NS_LEN,
					  IMC_IPOIB_ND_OPT_LEN) < 0)
			return -ENOSPC;
	}
	csum = imc_icmp6_csum(nd->src, nd->dst, icmp, plen);
	imc_put16(icmp + 2, csum);
	return (int)(IPO_IP6_HDR_LEN + plen);
}
