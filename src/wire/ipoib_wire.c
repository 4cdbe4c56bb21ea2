/* IPoIB (RFC 4391): multicast mappings and wire formats. */
#include <errno.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/ipoib_wire.h"
#include "util/text.h"
#include "util/bytes.h"
#include "wire/fields.h"

/* ff1S:ssss:PPPP with the rest zero: the part every IPoIB MGID shares. */
static int mgid_head(uint16_t sig, uint16_t pkey, unsigned scope,
		     struct imc_gid *out)
{
	/* IBA 10.9.1.2: a P_Key with base 0 is invalid. */
	if (scope > 0xF || (pkey & 0x7FFF) == 0)
		return -EINVAL;
	memset(out->raw, 0, sizeof(out->raw));
	out->raw[0] = 0xFF;
	out->raw[1] = (uint8_t)(IMC_MGID_FLAG_T << 4 | scope);
	imc_put16(out->raw + 2, sig);
	/* RFC 4391 4: the full-membership bit is always set here. */
	imc_put16(out->raw + 4, pkey | IMC_PKEY_FULL_MEMBER);
	return 0;
}

int imc_ipoib_bcast_mgid(uint16_t pkey, unsigned scope, struct imc_gid *out)
{
	struct imc_gid g;
	int rc = mgid_head(IMC_MGID_SIGNATURE_IPV4, pkey, scope, &g);

	if (rc)
		return rc;
	imc_put32(g.raw + 12, 0xFFFFFFFF);
	*out = g;
	return 0;
}

int imc_ipoib_mgid_from_ipv4(uint32_t group, uint16_t pkey, unsigned scope,
			     struct imc_gid *out)
{
	struct imc_gid g;
	int rc;

	if ((group >> 28) != 0xE)
		return -EINVAL;
	rc = mgid_head(IMC_MGID_SIGNATURE_IPV4, pkey, scope, &g);
	if (rc)
		return rc;
	imc_put32(g.raw + 12, group & 0x0FFFFFFF);
	*out = g;
	return 0;
}

int imc_ipoib_mgid_from_ipv6(const uint8_t group[16], uint16_t pkey,
			     unsigned scope, struct imc_gid *out)
{
	struct imc_gid g;
	int rc;

	if (group[0] != 0xFF)
		return -EINVAL;
	rc = mgid_head(IMC_MGID_SIGNATURE_IPV6, pkey, scope, &g);
	if (rc)
		return rc;
	memcpy(g.raw + 6, group + 6, 10);
	*out = g;
	return 0;
}

static bool ipoib_signed(const struct imc_gid *mgid)
{
	enum imc_mgid_sig sig = imc_mgid_signature(mgid);

	return sig == IMC_MGID_SIG_IPV4 || sig == IMC_MGID_SIG_IPV6;
}

int imc_ipoib_mgid_pkey(const struct imc_gid *mgid, uint16_t *pkey)
{
	if (!ipoib_signed(mgid))
		return -EINVAL;
	*pkey = imc_get16(mgid->raw + 4);
	return 0;
}

bool imc_ipoib_mgid_is_bcast(const struct imc_gid *mgid)
{
	static const uint8_t tail[10] = { 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF };

	return imc_gid_is_multicast(mgid) &&
	       imc_mgid_flags(mgid) == IMC_MGID_FLAG_T &&
	       imc_mgid_sigword(mgid) == IMC_MGID_SIGNATURE_IPV4 &&
	       memcmp(mgid->raw + 6, tail, sizeof(tail)) == 0;
}

int imc_ipoib_bcast_of(const struct imc_gid *mgid, struct imc_gid *bcast)
{
	struct imc_gid g;

	if (!ipoib_signed(mgid))
		return -EINVAL;
	memset(g.raw, 0, sizeof(g.raw));
	g.raw[0] = 0xFF;
	g.raw[1] = (uint8_t)(IMC_MGID_FLAG_T << 4 | imc_mgid_scope(mgid));
	imc_put16(g.raw + 2, IMC_MGID_SIGNATURE_IPV4);
	memcpy(g.raw + 4, mgid->raw + 4, 2);
	imc_put32(g.raw + 12, 0xFFFFFFFF);
	*bcast = g;
	return 0;
}

int imc_ipv6_solicited_node(const uint8_t addr[16], uint8_t out[16])
{
	static const uint8_t zero[16];
	uint8_t a[16];

	if (addr[0] == 0xFF || memcmp(addr, zero, sizeof(zero)) == 0)
		return -EINVAL;
	memset(a, 0, sizeof(a));
	a[0] = 0xFF;
	a[1] = 0x02;
	a[11] = 0x01;
	a[12] = 0xFF;
	memcpy(a + 13, addr + 13, 3);
	memcpy(out, a, sizeof(a));
	return 0;
}

int imc_ipoib_hdr_pack(const struct imc_ipoib_hdr *h, uint8_t *buf, size_t len)
{
	if (len < IMC_IPOIB_HDR_LEN)
		return -ENOSPC;
	imc_put16(buf, h->type);
	imc_put16(buf + 2, 0);
	return IMC_IPOIB_HDR_LEN;
}

int imc_ipoib_hdr_unpack(struct imc_ipoib_hdr *h, const uint8_t *buf, size_t len)
{
	if (len < IMC_IPOIB_HDR_LEN)
		return -EMSGSIZE;
	/* RFC 4391 6: the reserved field is ignored on receive. */
	h->type = imc_get16(buf);
	return IMC_IPOIB_HDR_LEN;
}

/* The 20-byte link address, RFC 4391 9.1.1: flags, QPN, port GID. */
#define F(m, bit, bits) IMC_FIELD(struct imc_ipoib_hwaddr, m, bit, bits)
static const struct imc_field ipoib_hwaddr_fields[] = {
	F(flags, 0, 8), F(qpn, 8, 24),
	IMC_FIELD_RAW(struct imc_ipoib_hwaddr, gid, 32),
};
#undef F

/* Callers have checked the length and the QPN width. */
static void hw_put(uint8_t *p, const struct imc_ipoib_hwaddr *a)
{
	imc_fields_put(IMC_FIELDS(ipoib_hwaddr_fields), a, p);
}

static void hw_get(struct imc_ipoib_hwaddr *a, const uint8_t *p)
{
	imc_fields_get(IMC_FIELDS(ipoib_hwaddr_fields), a, p);
}

static bool qpn_ok(const struct imc_ipoib_hwaddr *a)
{
	return imc_fields_fit(IMC_FIELDS(ipoib_hwaddr_fields), a);
}

IMC_FIELDS_CODEC(ipoib_hwaddr, IMC_IPOIB_HWADDR_LEN)

void imc_ipoib_hwaddr_mcast(const struct imc_gid *mgid,
			    struct imc_ipoib_hwaddr *out)
{
	out->flags = 0;
	out->qpn = IMC_IPOIB_QPN_MULTICAST;
	out->gid = *mgid;
}

int imc_ipoib_hwaddr_format(const struct imc_ipoib_hwaddr *a,
			    char buf[IMC_IPOIB_HWADDR_STRLEN])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[IMC_IPOIB_HWADDR_LEN];
	char *p = buf;
	int i;

	if (!qpn_ok(a))
		return -EINVAL;
	hw_put(b, a);
	for (i = 0; i < IMC_IPOIB_HWADDR_LEN; i++) {
		if (i)
			*p++ = ':';
		*p++ = hex[b[i] >> 4];
		*p++ = hex[b[i] & 0xF];
	}
	*p = '\0';
	return (int)(p - buf);
}


int imc_ipoib_hwaddr_parse(const char *s, struct imc_ipoib_hwaddr *out)
{
	uint8_t b[IMC_IPOIB_HWADDR_LEN];
	int i;

	if (!s || !out)
		return -EINVAL;
	for (i = 0; i < IMC_IPOIB_HWADDR_LEN; i++) {
		int hi, lo;

		/* Each step reads at most up to the NUL it stops at. */
		hi = imc_hexval(s[0]);
		if (hi < 0)
			return -EINVAL;
		lo = imc_hexval(s[1]);
		if (lo < 0)
			return -EINVAL;
		b[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i < IMC_IPOIB_HWADDR_LEN - 1) {
			if (*s != ':')
				return -EINVAL;
			s++;
		}
	}
	if (*s != '\0')
		return -EINVAL;
	hw_get(out, b);
	return 0;
}

enum {
	ARP_PTYPE_IPV4 = IMC_ETHERTYPE_IPV4,
	ARP_PLEN_IPV4 = 4,
};

int imc_ipoib_arp_pack(const struct imc_ipoib_arp *p, uint8_t *buf, size_t len)
{
	if (len < IMC_IPOIB_ARP_LEN)
		return -ENOSPC;
	if (!qpn_ok(&p->sha) || !qpn_ok(&p->tha))
		return -EINVAL;
	imc_put16(buf, IMC_ARP_HTYPE_INFINIBAND);
	imc_put16(buf + 2, ARP_PTYPE_IPV4);
	buf[4] = IMC_IPOIB_HWADDR_LEN;
	buf[5] = ARP_PLEN_IPV4;
	imc_put16(buf + 6, p->op);
	hw_put(buf + 8, &p->sha);
	imc_put32(buf + 28, p->spa);
	hw_put(buf + 32, &p->tha);
	imc_put32(buf + 52, p->tpa);
	return IMC_IPOIB_ARP_LEN;
}

int imc_ipoib_arp_unpack(struct imc_ipoib_arp *p, const uint8_t *buf, size_t len)
{
	struct imc_ipoib_arp a;

	if (len < IMC_IPOIB_ARP_LEN)
		return -EMSGSIZE;
	if (imc_get16(buf) != IMC_ARP_HTYPE_INFINIBAND ||
	    imc_get16(buf + 2) != ARP_PTYPE_IPV4 ||
	    buf[4] != IMC_IPOIB_HWADDR_LEN || buf[5] != ARP_PLEN_IPV4)
		return -EINVAL;
	a.op = imc_get16(buf + 6);
	hw_get(&a.sha, buf + 8);
	a.spa = imc_get32(buf + 28);
	hw_get(&a.tha, buf + 32);
	a.tpa = imc_get32(buf + 52);
	*p = a;
	return IMC_IPOIB_ARP_LEN;
}

static bool nd_type_ok(uint8_t type)
{
	return type == IMC_ND_OPT_SOURCE_LLADDR ||
	       type == IMC_ND_OPT_TARGET_LLADDR;
}

int imc_ipoib_nd_opt_pack(const struct imc_ipoib_nd_opt *o, uint8_t *buf,
			  size_t len)
{
	if (len < IMC_IPOIB_ND_OPT_LEN)
		return -ENOSPC;
	if (!nd_type_ok(o->type) || !qpn_ok(&o->addr))
		return -EINVAL;
	buf[0] = o->type;
	buf[1] = IMC_IPOIB_ND_OPT_LEN / 8;
	buf[2] = 0;
	buf[3] = 0;
	hw_put(buf + 4, &o->addr);
	return IMC_IPOIB_ND_OPT_LEN;
}

int imc_ipoib_nd_opt_unpack(struct imc_ipoib_nd_opt *o, const uint8_t *buf,
			    size_t len)
{
	if (len < 2)
		return -EMSGSIZE;
	/* RFC 4861 4.6: the Length byte counts 8-byte units; RFC 4391 fixes
	 * it at 3 for IPoIB. A zero length must not be skipped over. */
	if (!nd_type_ok(buf[0]) || buf[1] != IMC_IPOIB_ND_OPT_LEN / 8)
		return -EINVAL;
	if (len < IMC_IPOIB_ND_OPT_LEN)
		return -EMSGSIZE;
	o->type = buf[0];
	hw_get(&o->addr, buf + 4);
	return IMC_IPOIB_ND_OPT_LEN;
}
