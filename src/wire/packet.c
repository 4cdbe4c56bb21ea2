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
#include "wire/bytes.h"

enum {
	CRCS = IMC_ICRC_SIZE + IMC_VCRC_SIZE,
	HDR_MAX = IMC_LRH_SIZE + IMC_GRH_SIZE + IMC_BTH_SIZE + IMC_DETH_SIZE +
		  IMC_IMMDT_SIZE,
};

int imc_lrh_pack(const struct imc_lrh *h, uint8_t *buf, size_t len)
{
	if (h->vl > 0xf || h->lver > 0xf || h->sl > 0xf || h->resv2 > 0x3 ||
	    h->lnh > 0x3 || h->resv5 > 0x1f || h->pkt_len > IMC_LRH_PKTLEN_MAX)
		return -EINVAL;
	if (len < IMC_LRH_SIZE)
		return -ENOSPC;
	buf[0] = (uint8_t)(h->vl << 4 | h->lver);
	buf[1] = (uint8_t)(h->sl << 4 | h->resv2 << 2 | h->lnh);
	imc_put16(buf + 2, h->dlid);
	imc_put16(buf + 4, (uint16_t)(h->resv5 << 11 | h->pkt_len));
	imc_put16(buf + 6, h->slid);
	return IMC_LRH_SIZE;
}

int imc_lrh_unpack(struct imc_lrh *h, const uint8_t *buf, size_t len)
{
	uint16_t w;

	if (len < IMC_LRH_SIZE)
		return -EMSGSIZE;
	h->vl = buf[0] >> 4;
	h->lver = buf[0] & 0xf;
	h->sl = buf[1] >> 4;
	h->resv2 = (buf[1] >> 2) & 0x3;
	h->lnh = buf[1] & 0x3;
	h->dlid = imc_get16(buf + 2);
	w = imc_get16(buf + 4);
	h->resv5 = (uint8_t)(w >> 11);
	h->pkt_len = w & IMC_LRH_PKTLEN_MAX;
	h->slid = imc_get16(buf + 6);
	return IMC_LRH_SIZE;
}

int imc_grh_pack(const struct imc_grh *h, uint8_t *buf, size_t len)
{
	if (h->ipver > 0xf || h->flow_label > 0xfffff)
		return -EINVAL;
	if (len < IMC_GRH_SIZE)
		return -ENOSPC;
	imc_put32(buf, (uint32_t)h->ipver << 28 | (uint32_t)h->tclass << 20 |
		       h->flow_label);
	imc_put16(buf + 4, h->pay_len);
	buf[6] = h->next_hdr;
	buf[7] = h->hop_limit;
	memcpy(buf + 8, h->sgid.raw, 16);
	memcpy(buf + 24, h->dgid.raw, 16);
	return IMC_GRH_SIZE;
}

int imc_grh_unpack(struct imc_grh *h, const uint8_t *buf, size_t len)
{
	uint32_t w;

	if (len < IMC_GRH_SIZE)
		return -EMSGSIZE;
	w = imc_get32(buf);
	h->ipver = (uint8_t)(w >> 28);
	h->tclass = (uint8_t)(w >> 20);
	h->flow_label = w & 0xfffff;
	h->pay_len = imc_get16(buf + 4);
	h->next_hdr = buf[6];
	h->hop_limit = buf[7];
	memcpy(h->sgid.raw, buf + 8, 16);
	memcpy(h->dgid.raw, buf + 24, 16);
	return IMC_GRH_SIZE;
}

int imc_bth_pack(const struct imc_bth *h, uint8_t *buf, size_t len)
{
	if (h->pad_cnt > 0x3 || h->tver > 0xf || h->dest_qp > IMC_QPN_MAX ||
	    h->resv7 > 0x7f || h->psn > 0xffffff)
		return -EINVAL;
	if (len < IMC_BTH_SIZE)
		return -ENOSPC;
	buf[0] = h->opcode;
	buf[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->migreq ? 0x40 : 0) |
			   h->pad_cnt << 4 | h->tver);
	imc_put16(buf + 2, h->pkey);
	imc_put32(buf + 4, (uint32_t)h->resv8a << 24 | h->dest_qp);
	imc_put32(buf + 8, (h->ack_req ? 0x80000000u : 0) |
			   (uint32_t)h->resv7 << 24 | h->psn);
	return IMC_BTH_SIZE;
}

int imc_bth_unpack(struct imc_bth *h, const uint8_t *buf, size_t len)
{
	uint32_t w;

	if (len < IMC_BTH_SIZE)
		return -EMSGSIZE;
	h->opcode = buf[0];
	h->se = buf[1] & 0x80;
	h->migreq = buf[1] & 0x40;
	h->pad_cnt = (buf[1] >> 4) & 0x3;
	h->tver = buf[1] & 0xf;
	h->pkey = imc_get16(buf + 2);
	w = imc_get32(buf + 4);
	h->resv8a = (uint8_t)(w >> 24);
	h->dest_qp = w & IMC_QPN_MAX;
	w = imc_get32(buf + 8);
	h->ack_req = w & 0x80000000u;
	h->resv7 = (uint8_t)(w >> 24) & 0x7f;
	h->psn = w & 0xffffff;
	return IMC_BTH_SIZE;
}

int imc_deth_pack(const struct imc_deth *h, uint8_t *buf, size_t len)
{
	if (h->src_qp > IMC_QPN_MAX)
		return -EINVAL;
	if (len < IMC_DETH_SIZE)
		return -ENOSPC;
	imc_put32(buf, h->qkey);
	imc_put32(buf + 4, (uint32_t)h->resv8 << 24 | h->src_qp);
	return IMC_DETH_SIZE;
}

int imc_deth_unpack(struct imc_deth *h, const uint8_t *buf, size_t len)
{
	uint32_t w;

	if (len < IMC_DETH_SIZE)
		return -EMSGSIZE;
	h->qkey = imc_get32(buf);
	w = imc_get32(buf + 4);
	h->resv8 = (uint8_t)(w >> 24);
	h->src_qp = w & IMC_QPN_MAX;
	return IMC_DETH_SIZE;
}

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
