/* IBA packet headers and whole UD packets.
 *
 * Wire layouts (big-endian, bit 7 of a byte first):
 *   LRH  (IBA 7.7)   VL:4 LVer:4 | SL:4 resv:2 LNH:2 | DLID:16 |
 *                    resv:5 PktLen:11 | SLID:16
 *   GRH  (IBA 8.3)   IPVer:4 TClass:8 FlowLabel:20 | PayLen:16 NxtHdr:8
 *                    HopLmt:8 | SGID:128 | DGID:128
 *   BTH  (IBA 9.2)   OpCode:8 | SE:1 M:1 PadCnt:2 TVer:4 | P_Key:16 |
 *                    resv8a:8 DestQP:24 | A:1 resv7:7 PSN:24
 *   DETH (IBA 9.3.3) Q_Key:32 | resv:8 SrcQP:24
 * The same layouts as Linux's drivers/infiniband/core/ud_header.c.
 */
#include <errno.h>
#include <string.h>

#include "ibmcast/packet.h"
#include "util/bytes.h"
#include "wire/fields.h"

enum {
	CRCS = IMC_ICRC_SIZE + IMC_VCRC_SIZE,
	HDR_MAX = IMC_LRH_SIZE + IMC_GRH_SIZE + IMC_BTH_SIZE + IMC_DETH_SIZE +
		  IMC_IMMDT_SIZE,
};

/* LRH, IBA 7.7. */
#define F(m, bit, bits) IMC_FIELD(struct imc_lrh, m, bit, bits)
static const struct imc_field lrh_fields[] = {
	F(vl, 0, 4), F(lver, 4, 4), F(sl, 8, 4), F(resv2, 12, 2), F(lnh, 14, 2),
	F(dlid, 16, 16),
	F(resv5, 32, 5), F(pkt_len, 37, 11), F(slid, 48, 16),
};
#undef F

/* GRH, IBA 8.3. */
#define F(m, bit, bits) IMC_FIELD(struct imc_grh, m, bit, bits)
#define R(m, bit) IMC_FIELD_RAW(struct imc_grh, m, bit)
static const struct imc_field grh_fields[] = {
	F(ipver, 0, 4), F(tclass, 4, 8), F(flow_label, 12, 20),
	F(pay_len, 32, 16), F(next_hdr, 48, 8), F(hop_limit, 56, 8),
	R(sgid, 64),
	R(dgid, 192),
};
#undef F
#undef R

/* BTH, IBA 9.2. */
#define F(m, bit, bits) IMC_FIELD(struct imc_bth, m, bit, bits)
static const struct imc_field bth_fields[] = {
	F(opcode, 0, 8), F(se, 8, 1), F(migreq, 9, 1), F(pad_cnt, 10, 2),
	F(tver, 12, 4), F(pkey, 16, 16),
	F(resv8a, 32, 8), F(dest_qp, 40, 24),
	F(ack_req, 64, 1), F(resv7, 65, 7), F(psn, 72, 24),
};
#undef F

/* DETH, IBA 9.3.3. */
#define F(m, bit, bits) IMC_FIELD(struct imc_deth, m, bit, bits)
static const struct imc_field deth_fields[] = {
	F(qkey, 0, 32),
	F(resv8, 32, 8), F(src_qp, 40, 24),
};
#undef F

/* Headers report a bad value before a short buffer. */
IMC_FIELDS_INLINE int hdr_pack(const struct imc_field *f, size_t n,
			       const void *h, uint8_t *buf, size_t len,
			       size_t size)
{
	if (!imc_fields_fit(f, n, h))
		return -EINVAL;
	return imc_fields_pack(f, n, h, buf, len, size);
}

IMC_FIELDS_CODEC_WITH(lrh, IMC_LRH_SIZE, hdr_pack)
IMC_FIELDS_CODEC_WITH(grh, IMC_GRH_SIZE, hdr_pack)
IMC_FIELDS_CODEC_WITH(bth, IMC_BTH_SIZE, hdr_pack)
IMC_FIELDS_CODEC_WITH(deth, IMC_DETH_SIZE, hdr_pack)

static size_t hdr_size(bool grh, uint8_t opcode)
{
	return IMC_LRH_SIZE + (grh ? IMC_GRH_SIZE : 0) + IMC_BTH_SIZE +
	       IMC_DETH_SIZE +
	       (opcode == IMC_BTH_OP_UD_SEND_ONLY_IMM ? IMC_IMMDT_SIZE : 0);
}

static unsigned int pad_of(size_t payload_len)
{
	return (unsigned int)(-payload_len & 3);
}

size_t imc_ud_packet_size(const struct imc_ud_packet *p)
{
	return hdr_size(p->has_grh, p->bth.opcode) + p->payload_len +
	       pad_of(p->payload_len) + CRCS;
}

int imc_ud_packet_build(struct imc_ud_packet *p, uint8_t *buf, size_t len)
{
	uint8_t hdr[HDR_MAX];
	size_t hlen, words, total, off;
	int rc;

	if (p->bth.opcode != IMC_BTH_OP_UD_SEND_ONLY &&
	    p->bth.opcode != IMC_BTH_OP_UD_SEND_ONLY_IMM)
		return -EINVAL;
	if (!p->payload && p->payload_len)
		return -EINVAL;
	hlen = hdr_size(p->has_grh, p->bth.opcode);
	if (p->payload_len > (size_t)IMC_LRH_PKTLEN_MAX * 4)
		return -EMSGSIZE;
	/* IBA 7.7: PktLen counts 4-byte words from the LRH through the
	 * ICRC; the payload is padded to a word (IBA 9.2 PadCnt). */
	words = (hlen + p->payload_len + pad_of(p->payload_len) +
		 IMC_ICRC_SIZE) / 4;
	if (words > IMC_LRH_PKTLEN_MAX)
		return -EMSGSIZE;
	total = words * 4 + IMC_VCRC_SIZE;

	p->lrh.lnh = p->has_grh ? IMC_LNH_IBA_GLOBAL : IMC_LNH_IBA_LOCAL;
	p->lrh.pkt_len = (uint16_t)words;
	p->bth.pad_cnt = (uint8_t)pad_of(p->payload_len);
	if (p->has_grh) {
		/* IBA 8.3: PayLen counts from after the GRH through ICRC. */
		p->grh.ipver = IMC_GRH_IPVER;
		p->grh.next_hdr = IMC_GRH_NEXT_HDR_IBA;
		p->grh.pay_len = (uint16_t)(words * 4 - IMC_LRH_SIZE -
					    IMC_GRH_SIZE);
	}

	/* Pack into scratch first, so a bad field leaves buf untouched. */
	off = 0;
	rc = imc_lrh_pack(&p->lrh, hdr, sizeof(hdr));
	if (rc < 0)
		return rc;
	off += (size_t)rc;
	if (p->has_grh) {
		rc = imc_grh_pack(&p->grh, hdr + off, sizeof(hdr) - off);
		if (rc < 0)
			return rc;
		off += (size_t)rc;
	}
	rc = imc_bth_pack(&p->bth, hdr + off, sizeof(hdr) - off);
	if (rc < 0)
		return rc;
	off += (size_t)rc;
	rc = imc_deth_pack(&p->deth, hdr + off, sizeof(hdr) - off);
	if (rc < 0)
		return rc;
	off += (size_t)rc;
	if (p->bth.opcode == IMC_BTH_OP_UD_SEND_ONLY_IMM) {
		imc_put32(hdr + off, p->imm_data);
		off += IMC_IMMDT_SIZE;
	}

	if (len < total)
		return -ENOSPC;
	memcpy(buf, hdr, hlen);
	if (p->payload_len)
		memcpy(buf + hlen, p->payload, p->payload_len);
	memset(buf + hlen + p->payload_len, 0, pad_of(p->payload_len));
	rc = imc_packet_crc_fill(buf, total);
	if (rc < 0)
		return rc;
	return (int)total;
}

int imc_ud_packet_parse(struct imc_ud_packet *p, const uint8_t *buf,
			size_t len)
{
	size_t off, need, area;
	uint32_t icrc;
	int rc;

	if (len < IMC_LRH_SIZE + CRCS)
		return -EMSGSIZE;
	memset(p, 0, sizeof(*p));
	imc_lrh_unpack(&p->lrh, buf, len);
	/* As a receiving port does: the link layer's length, VCRC and LRH
	 * checks first, the transport's last. */
	if ((size_t)p->lrh.pkt_len * 4 + IMC_VCRC_SIZE != len)
		return -ERANGE;
	if (imc_vcrc_compute(buf, len - IMC_VCRC_SIZE) !=
	    (uint16_t)(buf[len - 2] | buf[len - 1] << 8))
		return -EILSEQ;
	if (p->lrh.lver != 0)
		return -EPROTONOSUPPORT;
	if (p->lrh.lnh == IMC_LNH_IBA_GLOBAL)
		p->has_grh = true;
	else if (p->lrh.lnh != IMC_LNH_IBA_LOCAL)
		return -EPROTONOSUPPORT;

	off = IMC_LRH_SIZE;
	if (p->has_grh) {
		if (len < off + IMC_GRH_SIZE + CRCS)
			return -EMSGSIZE;
		off += (size_t)imc_grh_unpack(&p->grh, buf + off, len - off);
		if (p->grh.ipver != IMC_GRH_IPVER ||
		    p->grh.next_hdr != IMC_GRH_NEXT_HDR_IBA)
			return -EPROTO;
		if ((size_t)p->grh.pay_len != len - IMC_VCRC_SIZE - off)
			return -ERANGE;
	}
	if (len < off + IMC_BTH_SIZE + CRCS)
		return -EMSGSIZE;
	off += (size_t)imc_bth_unpack(&p->bth, buf + off, len - off);
	if ((p->bth.opcode != IMC_BTH_OP_UD_SEND_ONLY &&
	     p->bth.opcode != IMC_BTH_OP_UD_SEND_ONLY_IMM) || p->bth.tver != 0)
		return -EOPNOTSUPP;
	need = hdr_size(p->has_grh, p->bth.opcode);
	if (len < need + CRCS)
		return -EMSGSIZE;
	off += (size_t)imc_deth_unpack(&p->deth, buf + off, len - off);
	if (p->bth.opcode == IMC_BTH_OP_UD_SEND_ONLY_IMM) {
		p->imm_data = imc_get32(buf + off);
		off += IMC_IMMDT_SIZE;
	}
	area = len - CRCS - off;
	if (p->bth.pad_cnt > area)
		return -EINVAL;
	rc = imc_icrc_compute(buf, len - CRCS, &icrc);
	if (rc < 0)
		return rc;
	if (icrc != ((uint32_t)buf[len - 6] | (uint32_t)buf[len - 5] << 8 |
		     (uint32_t)buf[len - 4] << 16 | (uint32_t)buf[len - 3] << 24))
		return -EBADMSG;
	p->payload = buf + off;
	p->payload_len = area - p->bth.pad_cnt;
	return (int)len;
}
