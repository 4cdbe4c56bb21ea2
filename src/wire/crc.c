/* The two CRCs of an IBA packet (IBA 7.8).
 *
 * Both are reflected CRCs (each byte taken least significant bit first)
 * and both are sent least significant byte first:
 * the ICRC is the CRC-32 of IEEE 802.3, as Linux rxe and RoCE adapters
 * compute it (a ConnectX-4 Lx capture in tests/test_wire_crc.c checks
 * this), and the VCRC is the same construction with the 16-bit
 * polynomial 0x100B, as in Endace's InfiniBand capture code. The VCRC's
 * byte order follows the ICRC's; no capture checks it.
 *
 * Computed four bits at a time from 16-entry tables: small, and fast
 * enough for a simulator.
 */
#include <errno.h>
#include <string.h>

#include "ibmcast/packet.h"

/* Reflected 0x04C11DB7 (0xEDB88320) shifted through each nibble value. */
static const uint32_t crc32_nib[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
	0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
	0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
	0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

/* Reflected 0x100B (0xD008). */
static const uint16_t crc16_nib[16] = {
	0x0000, 0x1a01, 0x3402, 0x2e03, 0x6804, 0x7205, 0x5c06, 0x4607,
	0xd008, 0xca09, 0xe40a, 0xfe0b, 0xb80c, 0xa20d, 0x8c0e, 0x960f,
};

uint32_t imc_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = ~crc;

	while (len--) {
		c ^= *p++;
		c = (c >> 4) ^ crc32_nib[c & 0xf];
		c = (c >> 4) ^ crc32_nib[c & 0xf];
	}
	return ~c;
}

uint16_t imc_crc16(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint16_t c = (uint16_t)~crc;

	while (len--) {
		c ^= *p++;
		c = (uint16_t)((c >> 4) ^ crc16_nib[c & 0xf]);
		c = (uint16_t)((c >> 4) ^ crc16_nib[c & 0xf]);
	}
	return (uint16_t)~c;
}

int imc_icrc_compute(const uint8_t *pkt, size_t len, uint32_t *icrc)
{
	uint8_t hdr[IMC_LRH_SIZE + IMC_GRH_SIZE + IMC_BTH_SIZE];
	size_t hlen, bth;

	if (len < IMC_LRH_SIZE)
		return -EMSGSIZE;
	switch (pkt[1] & 0x3) {
	case IMC_LNH_IBA_LOCAL:
		bth = IMC_LRH_SIZE;
		break;
	case IMC_LNH_IBA_GLOBAL:
		bth = IMC_LRH_SIZE + IMC_GRH_SIZE;
		break;
	default:
		return -EPROTONOSUPPORT; /* IBA 7.8.1: raw packets have no ICRC */
	}
	hlen = bth + IMC_BTH_SIZE;
	if (len < hlen)
		return -EMSGSIZE;
	memcpy(hdr, pkt, hlen);
	/* IBA 7.8.1: variant fields count as ones. Within a subnet only a
	 * switch's VL changes; across subnets a router rewrites the whole
	 * LRH, so a global packet's ICRC covers none of it (RoCE sends the
	 * same ICRC and stands in eight 0xFF bytes for the LRH). */
	if (bth == IMC_LRH_SIZE) {
		hdr[0] |= 0xf0;
	} else {
		uint8_t *grh = hdr + IMC_LRH_SIZE;

		memset(hdr, 0xff, IMC_LRH_SIZE);
		grh[0] |= 0x0f;               /* TClass, high nibble */
		memset(grh + 1, 0xff, 3);     /* TClass low nibble, FlowLabel */
		grh[7] = 0xff;                /* HopLmt */
	}
	hdr[bth + 4] = 0xff;                  /* BTH resv8a */
	*icrc = imc_crc32(imc_crc32(0, hdr, hlen), pkt + hlen, len - hlen);
	return 0;
}

uint16_t imc_vcrc_compute(const uint8_t *pkt, size_t len)
{
	return imc_crc16(0, pkt, len);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static bool has_icrc(const uint8_t *pkt)
{
	return (pkt[1] & 0x3) >= IMC_LNH_IBA_LOCAL;
}

/* The ICRC of the packet whose VCRC starts at vcrc: it covers what comes
 * before the ICRC field (IBA 7.8.1). */
static int icrc_before(const uint8_t *pkt, size_t vcrc, uint32_t *icrc)
{
	if (vcrc < IMC_ICRC_SIZE)
		return -EMSGSIZE;
	return imc_icrc_compute(pkt, vcrc - IMC_ICRC_SIZE, icrc);
}

int imc_packet_crc_fill(uint8_t *pkt, size_t len)
{
	size_t vcrc;
	uint16_t v;

	if (len < IMC_LRH_SIZE + IMC_VCRC_SIZE)
		return -EMSGSIZE;
	vcrc = len - IMC_VCRC_SIZE;
	if (has_icrc(pkt)) {
		uint32_t icrc;
		int rc = icrc_before(pkt, vcrc, &icrc);

		if (rc < 0)
			return rc;
		put_le32(pkt + vcrc - IMC_ICRC_SIZE, icrc);
	}
	v = imc_vcrc_compute(pkt, vcrc);
	pkt[vcrc] = (uint8_t)v;
	pkt[vcrc + 1] = (uint8_t)(v >> 8);
	return 0;
}

int imc_packet_crc_check(const uint8_t *pkt, size_t len)
{
	size_t vcrc;
	uint16_t v;

	if (len < IMC_LRH_SIZE + IMC_VCRC_SIZE)
		return -EMSGSIZE;
	vcrc = len - IMC_VCRC_SIZE;
	v = imc_vcrc_compute(pkt, vcrc);
	if (pkt[vcrc] != (uint8_t)v || pkt[vcrc + 1] != (uint8_t)(v >> 8))
		return -EILSEQ;
	if (has_icrc(pkt)) {
		uint32_t icrc;
		int rc = icrc_before(pkt, vcrc, &icrc);

		if (rc < 0)
			return rc;
		if (get_le32(pkt + vcrc - IMC_ICRC_SIZE) != icrc)
			return -EBADMSG;
	}
	return 0;
}
