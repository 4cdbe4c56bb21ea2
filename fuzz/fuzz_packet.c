/* Whole UD packet parser. The first input byte picks a mode: odd means
 * "rewrite the CRCs first", so that mutated headers get past the VCRC and
 * ICRC and reach the other checks. Properties:
 *   - the result is len or one of the documented errors;
 *   - an accepted packet has good CRCs, its payload lies inside it, and
 *     building the parsed struct again gives a packet that parses to the
 *     same fields; with zero pad bytes, the very same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAXPKT = IMC_LRH_PKTLEN_MAX * 4 + IMC_VCRC_SIZE };

static int same(const struct imc_ud_packet *a, const struct imc_ud_packet *b)
{
	const struct imc_lrh *l = &a->lrh, *m = &b->lrh;
	const struct imc_bth *t = &a->bth, *u = &b->bth;

	if (l->vl != m->vl || l->lver != m->lver || l->sl != m->sl ||
	    l->resv2 != m->resv2 || l->lnh != m->lnh || l->dlid != m->dlid ||
	    l->resv5 != m->resv5 || l->pkt_len != m->pkt_len ||
	    l->slid != m->slid || a->has_grh != b->has_grh)
		return 0;
	if (a->has_grh &&
	    (a->grh.ipver != b->grh.ipver || a->grh.tclass != b->grh.tclass ||
	     a->grh.flow_label != b->grh.flow_label ||
	     a->grh.pay_len != b->grh.pay_len ||
	     a->grh.next_hdr != b->grh.next_hdr ||
	     a->grh.hop_limit != b->grh.hop_limit ||
	     memcmp(a->grh.sgid.raw, b->grh.sgid.raw, 16) ||
	     memcmp(a->grh.dgid.raw, b->grh.dgid.raw, 16)))
		return 0;
	if (t->opcode != u->opcode || t->se != u->se ||
	    t->migreq != u->migreq || t->pad_cnt != u->pad_cnt ||
	    t->tver != u->tver || t->pkey != u->pkey ||
	    t->resv8a != u->resv8a || t->dest_qp != u->dest_qp ||
	    t->ack_req != u->ack_req || t->resv7 != u->resv7 ||
	    t->psn != u->psn)
		return 0;
	return a->deth.qkey == b->deth.qkey && a->deth.resv8 == b->deth.resv8 &&
	       a->deth.src_qp == b->deth.src_qp &&
	       a->imm_data == b->imm_data &&
	       a->payload_len == b->payload_len &&
	       !memcmp(a->payload, b->payload, a->payload_len);
}

static int known(int rc)
{
	return rc == -EMSGSIZE || rc == -ERANGE || rc == -EILSEQ ||
	       rc == -EPROTONOSUPPORT || rc == -EPROTO || rc == -EOPNOTSUPP ||
	       rc == -EINVAL || rc == -EBADMSG;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t fixed[MAXPKT], out[MAXPKT];
	struct imc_ud_packet p, q;
	const uint8_t *pkt;
	size_t len, pad_at;
	int rc;

	if (size < 1)
		return 0;
	pkt = data + 1;
	len = size - 1;
	if (data[0] & 1) {
		if (len > sizeof(fixed))
			return 0;
		memcpy(fixed, pkt, len);
		rc = imc_packet_crc_fill(fixed, len);
		if (rc < 0 && !known(rc))
			abort();
		pkt = fixed;
	}
	rc = imc_ud_packet_parse(&p, pkt, len);
	if (rc < 0) {
		if (!known(rc))
			abort();
		return 0;
	}
	if ((size_t)rc != len || imc_packet_crc_check(pkt, len) != 0)
		abort();
	if (p.payload < pkt || p.payload + p.payload_len + p.bth.pad_cnt +
				       IMC_ICRC_SIZE + IMC_VCRC_SIZE !=
				       pkt + len)
		abort();
	if (imc_ud_packet_size(&p) != len)
		abort();

	q = p;
	rc = imc_ud_packet_build(&q, out, sizeof(out));
	if (rc < 0 || (size_t)rc != len || !same(&p, &q))
		abort();
	pad_at = (size_t)(p.payload - pkt) + p.payload_len;
	/* Pad bytes are ours to choose (0); everything before them must be
	 * the same, and with zero pad the CRCs too. */
	if (memcmp(out, pkt, pad_at) != 0)
		abort();
	if (!memcmp(pkt + pad_at, "\0\0\0", p.bth.pad_cnt) &&
	    memcmp(out, pkt, len) != 0)
		abort();
	rc = imc_ud_packet_parse(&q, out, len);
	if (rc < 0 || (size_t)rc != len)
		abort();
	q.payload = p.payload; /* compare contents, not addresses */
	if (!same(&p, &q) || memcmp(out + pad_at - p.payload_len, p.payload,
				    p.payload_len) != 0)
		abort();
	return 0;
}
