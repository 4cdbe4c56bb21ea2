/* IP, UDP and ICMP headers (ibmcast/ip.h). */
#include <errno.h>
#include <string.h>

#include "ibmcast/ip.h"
#include "util/bytes.h"

enum { ICMP_ECHO_REPLY = 0, ICMP_ECHO = 8, ICMP6_ECHO = 128,
       ICMP6_ECHO_REPLY = 129 };

uint32_t imc_inet_sum(uint32_t acc, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (; len >= 2; b += 2, len -= 2) {
		acc += (uint32_t)b[0] << 8 | b[1];
		/* Fold early: acc never wraps, whatever the length. */
		acc = (acc & 0xFFFF) + (acc >> 16);
	}
	if (len)
		acc += (uint32_t)b[0] << 8;
	return acc;
}

uint16_t imc_inet_csum(uint32_t acc, const void *p, size_t len)
{
	acc = imc_inet_sum(acc, p, len);
	while (acc >> 16)
		acc = (acc & 0xFFFF) + (acc >> 16);
	return (uint16_t)~acc;
}

uint16_t imc_inet_l4_csum(unsigned version, const uint8_t *src,
			  const uint8_t *dst, uint8_t proto,
			  const void *msg, size_t len)
{
	size_t alen = version == 4 ? 4 : 16;
	uint8_t tail[8];
	uint32_t acc;

	acc = imc_inet_sum(0, src, alen);
	acc = imc_inet_sum(acc, dst, alen);
	if (version == 4) {
		/* zero, protocol, UDP length (RFC 768) */
		tail[0] = 0;
		tail[1] = proto;
		imc_put16(tail + 2, (uint16_t)len);
		acc = imc_inet_sum(acc, tail, 4);
	} else {
		/* upper-layer length (32 bits), zero, next header */
		imc_put32(tail, (uint32_t)len);
		tail[4] = tail[5] = tail[6] = 0;
		tail[7] = proto;
		acc = imc_inet_sum(acc, tail, 8);
	}
	return imc_inet_csum(acc, msg, len);
}

int imc_ip_view(const uint8_t *pkt, size_t len, struct imc_ip_view *out)
{
	struct imc_ip_view v;

	memset(&v, 0, sizeof(v));
	if (!pkt || len < 1)
		return -EINVAL;
	v.version = pkt[0] >> 4;
	if (v.version == 4) {
		v.hdr_len = (size_t)(pkt[0] & 0xF) * 4;
		if (len < IMC_IP4_HDR_LEN || v.hdr_len < IMC_IP4_HDR_LEN)
			return -EINVAL;
		v.len = imc_get16(pkt + 2);
		v.proto = pkt[9];
		v.src = pkt + 12;
		v.dst = pkt + 16;
	} else if (v.version == 6) {
		if (len < IMC_IP6_HDR_LEN)
			return -EINVAL;
		v.hdr_len = IMC_IP6_HDR_LEN;
		/* 0 would be a jumbogram (RFC 2675): no IPoIB MTU holds
		 * one, and the length check below refuses it. */
		v.len = (size_t)imc_get16(pkt + 4) + IMC_IP6_HDR_LEN;
		v.proto = pkt[6];
		v.src = pkt + 8;
		v.dst = pkt + 24;
	} else {
		return -EINVAL;
	}
	if (v.len < v.hdr_len || v.len > len)
		return -EINVAL;
	v.l4 = pkt + v.hdr_len;
	v.l4_len = v.len - v.hdr_len;
	*out = v;
	return 0;
}

/* The IP header for l4 bytes of payload; returns its length. */
static int ip_hdr(uint8_t *buf, size_t cap, const struct imc_ip_spec *s,
		  uint8_t proto, size_t l4)
{
	size_t hl;

	if (!buf || !s || !s->src || !s->dst ||
	    (s->version != 4 && s->version != 6))
		return -EINVAL;
	hl = s->version == 4 ? IMC_IP4_HDR_LEN : IMC_IP6_HDR_LEN;
	if (l4 > 0xFFFF - hl || hl + l4 > cap)
		return -ENOSPC;
	memset(buf, 0, hl);
	if (s->version == 4) {
		buf[0] = 0x45;
		imc_put16(buf + 2, (uint16_t)(hl + l4));
		imc_put16(buf + 4, s->id);
		buf[8] = IMC_IP_TTL;
		buf[9] = proto;
		memcpy(buf + 12, s->src, 4);
		memcpy(buf + 16, s->dst, 4);
		imc_put16(buf + 10, imc_inet_csum(0, buf, hl));
	} else {
		buf[0] = 0x60;
		imc_put16(buf + 4, (uint16_t)l4);
		buf[6] = proto;
		buf[7] = IMC_IP_TTL;
		memcpy(buf + 8, s->src, 16);
		memcpy(buf + 24, s->dst, 16);
	}
	return (int)hl;
}

static void fill(uint8_t *m, size_t len)
{
	for (size_t k = IMC_L4_HDR_LEN; k < len; k++)
		m[k] = (uint8_t)k;
}

int imc_ip_echo_build(uint8_t *buf, size_t cap, const struct imc_ip_spec *s,
		      bool reply, uint16_t id, uint16_t seq, size_t size)
{
	bool v4 = s && s->version == 4;
	uint8_t proto = v4 ? IMC_IPPROTO_ICMP : IMC_IPPROTO_ICMPV6;
	size_t l4 = IMC_L4_HDR_LEN + size;
	int hl = ip_hdr(buf, cap, s, proto, l4);
	uint8_t *m;

	if (hl < 0)
		return hl;
	m = buf + hl;
	memset(m, 0, IMC_L4_HDR_LEN);
	fill(m, l4);
	m[0] = v4 ? (reply ? ICMP_ECHO_REPLY : ICMP_ECHO) :
		    (reply ? ICMP6_ECHO_REPLY : ICMP6_ECHO);
	imc_put16(m + 4, id);
	imc_put16(m + 6, seq);
	/* ICMP sums the message alone (RFC 792); ICMPv6 adds the pseudo
	 * header (RFC 4443 2.3). */
	imc_put16(m + 2, v4 ? imc_inet_csum(0, m, l4) :
		  imc_inet_l4_csum(6, s->src, s->dst, proto, m, l4));
	return hl + (int)l4;
}

int imc_ip_udp_build(uint8_t *buf, size_t cap, const struct imc_ip_spec *s,
		     uint16_t sport, uint16_t dport, const void *payload,
		     size_t len)
{
	size_t l4 = IMC_L4_HDR_LEN + len;
	int hl = ip_hdr(buf, cap, s, IMC_IPPROTO_UDP, l4);
	uint16_t c;
	uint8_t *m;

	if (hl < 0)
		return hl;
	m = buf + hl;
	imc_put16(m, sport);
	imc_put16(m + 2, dport);
	imc_put16(m + 4, (uint16_t)l4);
	imc_put16(m + 6, 0);
	if (payload)
		memcpy(m + IMC_L4_HDR_LEN, payload, len);
	else
		fill(m, l4);
	c = imc_inet_l4_csum(s->version, s->src, s->dst, IMC_IPPROTO_UDP, m,
			     l4);
	/* A sum of 0 goes as all ones: 0 means "none" (RFC 768). */
	imc_put16(m + 6, c ? c : 0xFFFF);
	return hl + (int)l4;
}

int imc_ip_echo_read(const struct imc_ip_view *v, bool *request,
		     uint16_t *id, uint16_t *seq)
{
	uint8_t t;

	if (!v || v->l4_len < IMC_L4_HDR_LEN)
		return -ENOENT;
	t = v->l4[0];
	if (v->version == 4 ? v->proto != IMC_IPPROTO_ICMP ||
			      (t != ICMP_ECHO && t != ICMP_ECHO_REPLY) :
			      v->proto != IMC_IPPROTO_ICMPV6 ||
			      (t != ICMP6_ECHO && t != ICMP6_ECHO_REPLY))
		return -ENOENT;
	*request = t == ICMP_ECHO || t == ICMP6_ECHO;
	*id = imc_get16(v->l4 + 4);
	*seq = imc_get16(v->l4 + 6);
	return 0;
}

int imc_ip_echo_answer(uint8_t *pkt, size_t len)
{
	struct imc_ip_view v;
	uint8_t tmp[16], *m;
	size_t alen;
	uint16_t id, seq;
	bool req;

	if (imc_ip_view(pkt, len, &v) || imc_ip_echo_read(&v, &req, &id, &seq) ||
	    !req)
		return -EINVAL;
	alen = v.version == 4 ? 4 : 16;
	m = pkt + v.hdr_len;
	memcpy(tmp, v.src, alen);
	memcpy(pkt + (v.src - pkt), v.dst, alen);
	memcpy(pkt + (v.dst - pkt), tmp, alen);
	m[2] = m[3] = 0;
	if (v.version == 4) {
		pkt[8] = IMC_IP_TTL;
		pkt[10] = pkt[11] = 0;
		imc_put16(pkt + 10, imc_inet_csum(0, pkt, v.hdr_len));
		m[0] = ICMP_ECHO_REPLY;
		imc_put16(m + 2, imc_inet_csum(0, m, v.l4_len));
	} else {
		pkt[7] = IMC_IP_TTL;
		m[0] = ICMP6_ECHO_REPLY;
		imc_put16(m + 2, imc_inet_l4_csum(6, pkt + 8, pkt + 24,
						  IMC_IPPROTO_ICMPV6, m,
						  v.l4_len));
	}
	return 0;
}
