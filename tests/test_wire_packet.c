/* LRH, GRH, BTH, DETH and whole UD packets: golden bytes laid out by hand
 * from the IBA figures, round trips at zero and maximum values, every
 * truncated length, field widths, the builder/parser round trip for
 * payloads of 0..300 bytes, and each validation failure with its errno. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/packet.h"

#include "wire_check.h"

/* pack(obj) == golden, unpack(golden) == obj field by field (via pack of
 * the unpacked struct, and the caller's field checks). */
#define CHECK_GOLDEN(type, packfn, unpackfn, obj, golden)                    \
	do {                                                                 \
		uint8_t b_[sizeof(golden)];                                  \
		type o_;                                                     \
		assert_int_equal(packfn((obj), b_, sizeof(b_)),              \
				 (int)sizeof(golden));                       \
		assert_memory_equal(b_, (golden), sizeof(golden));           \
		memset(&o_, 0x5a, sizeof(o_));                               \
		assert_int_equal(unpackfn(&o_, (golden), sizeof(golden)),    \
				 (int)sizeof(golden));                       \
		assert_int_equal(packfn(&o_, b_, sizeof(b_)),                \
				 (int)sizeof(golden));                       \
		assert_memory_equal(b_, (golden), sizeof(golden));           \
	} while (0)

static void assert_lrh_equal(const struct imc_lrh *a, const struct imc_lrh *b)
{
	assert_int_equal(a->vl, b->vl);
	assert_int_equal(a->lver, b->lver);
	assert_int_equal(a->sl, b->sl);
	assert_int_equal(a->resv2, b->resv2);
	assert_int_equal(a->lnh, b->lnh);
	assert_int_equal(a->dlid, b->dlid);
	assert_int_equal(a->resv5, b->resv5);
	assert_int_equal(a->pkt_len, b->pkt_len);
	assert_int_equal(a->slid, b->slid);
}

static void assert_grh_equal(const struct imc_grh *a, const struct imc_grh *b)
{
	assert_int_equal(a->ipver, b->ipver);
	assert_int_equal(a->tclass, b->tclass);
	assert_int_equal(a->flow_label, b->flow_label);
	assert_int_equal(a->pay_len, b->pay_len);
	assert_int_equal(a->next_hdr, b->next_hdr);
	assert_int_equal(a->hop_limit, b->hop_limit);
	assert_memory_equal(a->sgid.raw, b->sgid.raw, 16);
	assert_memory_equal(a->dgid.raw, b->dgid.raw, 16);
}

static void assert_bth_equal(const struct imc_bth *a, const struct imc_bth *b)
{
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->se, b->se);
	assert_int_equal(a->migreq, b->migreq);
	assert_int_equal(a->pad_cnt, b->pad_cnt);
	assert_int_equal(a->tver, b->tver);
	assert_int_equal(a->pkey, b->pkey);
	assert_int_equal(a->resv8a, b->resv8a);
	assert_int_equal(a->dest_qp, b->dest_qp);
	assert_int_equal(a->ack_req, b->ack_req);
	assert_int_equal(a->resv7, b->resv7);
	assert_int_equal(a->psn, b->psn);
}

static void assert_deth_equal(const struct imc_deth *a,
			      const struct imc_deth *b)
{
	assert_int_equal(a->qkey, b->qkey);
	assert_int_equal(a->resv8, b->resv8);
	assert_int_equal(a->src_qp, b->src_qp);
}

/* ---- LRH (IBA 7.7) ---- */

/* VL 15 | LVer 1 ; SL 9 | resv 2 | LNH 3 ; DLID C001 ;
 * resv 0x15 | PktLen 0x5A3 ; SLID 1234 */
static const struct imc_lrh lrh_a = {
	.vl = 0xf, .lver = 1, .sl = 9, .resv2 = 2, .lnh = 3, .dlid = 0xc001,
	.resv5 = 0x15, .pkt_len = 0x5a3, .slid = 0x1234,
};
static const uint8_t lrh_a_wire[] = {
	0xf1,             /* 1111 0001 */
	0x9b,             /* 1001 10 11 */
	0xc0, 0x01,
	0xad, 0xa3,       /* 10101 101 1010 0011 */
	0x12, 0x34,
};

/* A QP1 MAD to the SM: VL 0, SL 0, LNH IBA local, DLID 1, PktLen 72
 * words (8 + 12 + 8 + 256 + 4 bytes), SLID 2. */
static const struct imc_lrh lrh_mad = {
	.lnh = IMC_LNH_IBA_LOCAL, .dlid = 1, .pkt_len = 72, .slid = 2,
};
static const uint8_t lrh_mad_wire[] = {
	0x00, 0x02, 0x00, 0x01, 0x00, 0x48, 0x00, 0x02,
};

static void test_lrh_golden(void **state)
{
	struct imc_lrh h;

	(void)state;
	CHECK_GOLDEN(struct imc_lrh, imc_lrh_pack, imc_lrh_unpack, &lrh_a,
		     lrh_a_wire);
	CHECK_GOLDEN(struct imc_lrh, imc_lrh_pack, imc_lrh_unpack, &lrh_mad,
		     lrh_mad_wire);
	assert_int_equal(imc_lrh_unpack(&h, lrh_a_wire, sizeof(lrh_a_wire)),
			 8);
	assert_lrh_equal(&h, &lrh_a);
	assert_int_equal(imc_lrh_unpack(&h, lrh_mad_wire, 8), 8);
	assert_lrh_equal(&h, &lrh_mad);
}

static void test_lrh_extremes(void **state)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zeros[8];
	const struct imc_lrh max = {
		.vl = 15, .lver = 15, .sl = 15, .resv2 = 3, .lnh = 3,
		.dlid = 0xffff, .resv5 = 31, .pkt_len = 2047, .slid = 0xffff,
	};
	const struct imc_lrh zero = { 0 };
	struct imc_lrh bad;
	uint8_t b[8];

	(void)state;
	CHECK_GOLDEN(struct imc_lrh, imc_lrh_pack, imc_lrh_unpack, &max, ones);
	CHECK_GOLDEN(struct imc_lrh, imc_lrh_pack, imc_lrh_unpack, &zero,
		     zeros);
	CHECK_LENGTHS(struct imc_lrh, imc_lrh_pack, imc_lrh_unpack, &lrh_a,
		      IMC_LRH_SIZE);
	/* One past each field's width is refused, nothing written. */
	memset(b, CANARY, sizeof(b));
	bad = max; bad.vl = 16;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	bad = max; bad.lver = 16;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	bad = max; bad.sl = 16;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	bad = max; bad.resv2 = 4;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	bad = max; bad.lnh = 4;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	bad = max; bad.resv5 = 32;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	bad = max; bad.pkt_len = 2048;
	assert_int_equal(imc_lrh_pack(&bad, b, 8), -EINVAL);
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], CANARY);
}

/* ---- GRH (IBA 8.3) ---- */

static const struct imc_grh grh_a = {
	.ipver = 6, .tclass = 0xa5, .flow_label = 0x3c7e1, .pay_len = 0x0124,
	.next_hdr = 0x1b, .hop_limit = 0x40,
	.sgid = { { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		    0x00, 0x02, 0xc9, 0x03, 0x00, 0x10, 0x02, 0xd8 } },
	.dgid = { { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		    0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff } },
};
static const uint8_t grh_a_wire[] = {
	0x6a, 0x53, 0xc7, 0xe1, /* 0110 | 1010 0101 | 0011 1100 0111 1110 0001 */
	0x01, 0x24, 0x1b, 0x40,
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x10,
	0x02, 0xd8,
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	0xff, 0xff,
};

static void test_grh(void **state)
{
	uint8_t ones[IMC_GRH_SIZE], zeros[IMC_GRH_SIZE], b[IMC_GRH_SIZE];
	struct imc_grh max, zero, h;

	(void)state;
	CHECK_GOLDEN(struct imc_grh, imc_grh_pack, imc_grh_unpack, &grh_a,
		     grh_a_wire);
	assert_int_equal(imc_grh_unpack(&h, grh_a_wire, sizeof(grh_a_wire)),
			 IMC_GRH_SIZE);
	assert_grh_equal(&h, &grh_a);

	memset(ones, 0xff, sizeof(ones));
	memset(zeros, 0, sizeof(zeros));
	memset(&max, 0, sizeof(max));
	max.ipver = 15;
	max.tclass = 255;
	max.flow_label = 0xfffff;
	max.pay_len = 0xffff;
	max.next_hdr = 255;
	max.hop_limit = 255;
	memset(max.sgid.raw, 0xff, 16);
	memset(max.dgid.raw, 0xff, 16);
	memset(&zero, 0, sizeof(zero));
	CHECK_GOLDEN(struct imc_grh, imc_grh_pack, imc_grh_unpack, &max, ones);
	CHECK_GOLDEN(struct imc_grh, imc_grh_pack, imc_grh_unpack, &zero,
		     zeros);
	assert_int_equal(imc_grh_unpack(&h, ones, sizeof(ones)), IMC_GRH_SIZE);
	assert_grh_equal(&h, &max);
	CHECK_LENGTHS(struct imc_grh, imc_grh_pack, imc_grh_unpack, &grh_a,
		      IMC_GRH_SIZE);
	memset(b, CANARY, sizeof(b));
	h = max; h.ipver = 16;
	assert_int_equal(imc_grh_pack(&h, b, sizeof(b)), -EINVAL);
	h = max; h.flow_label = 0x100000;
	assert_int_equal(imc_grh_pack(&h, b, sizeof(b)), -EINVAL);
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], CANARY);
}

/* ---- BTH (IBA 9.2) ---- */

/* UD SEND ONLY to the multicast QP: SE, PadCnt 2, P_Key 0x8001, resv8a
 * 0x40, DestQP FFFFFF, AckReq, resv7 0x15, PSN 0xABCDEF. */
static const struct imc_bth bth_a = {
	.opcode = IMC_BTH_OP_UD_SEND_ONLY, .se = true, .migreq = false,
	.pad_cnt = 2, .tver = 0, .pkey = 0x8001, .resv8a = 0x40,
	.dest_qp = IMC_MCAST_QPN, .ack_req = true, .resv7 = 0x15,
	.psn = 0xabcdef,
};
static const uint8_t bth_a_wire[] = {
	0x64,
	0xa0,             /* 1 0 10 0000 */
	0x80, 0x01,
	0x40, 0xff, 0xff, 0xff,
	0x95, 0xab, 0xcd, 0xef, /* 1 0010101 */
};

static void test_bth(void **state)
{
	uint8_t ones[IMC_BTH_SIZE], zeros[IMC_BTH_SIZE], b[IMC_BTH_SIZE];
	const struct imc_bth max = {
		.opcode = 255, .se = true, .migreq = true, .pad_cnt = 3,
		.tver = 15, .pkey = 0xffff, .resv8a = 255, .dest_qp = 0xffffff,
		.ack_req = true, .resv7 = 127, .psn = 0xffffff,
	};
	const struct imc_bth zero = { 0 };
	struct imc_bth h;

	(void)state;
	CHECK_GOLDEN(struct imc_bth, imc_bth_pack, imc_bth_unpack, &bth_a,
		     bth_a_wire);
	assert_int_equal(imc_bth_unpack(&h, bth_a_wire, sizeof(bth_a_wire)),
			 IMC_BTH_SIZE);
	assert_bth_equal(&h, &bth_a);
	memset(ones, 0xff, sizeof(ones));
	memset(zeros, 0, sizeof(zeros));
	CHECK_GOLDEN(struct imc_bth, imc_bth_pack, imc_bth_unpack, &max, ones);
	CHECK_GOLDEN(struct imc_bth, imc_bth_pack, imc_bth_unpack, &zero,
		     zeros);
	assert_int_equal(imc_bth_unpack(&h, ones, sizeof(ones)), IMC_BTH_SIZE);
	assert_bth_equal(&h, &max);
	/* MigReq alone lands in bit 6 of byte 1. */
	h = zero;
	h.migreq = true;
	assert_int_equal(imc_bth_pack(&h, b, sizeof(b)), IMC_BTH_SIZE);
	assert_int_equal(b[1], 0x40);
	CHECK_LENGTHS(struct imc_bth, imc_bth_pack, imc_bth_unpack, &bth_a,
		      IMC_BTH_SIZE);
	memset(b, CANARY, sizeof(b));
	h = max; h.pad_cnt = 4;
	assert_int_equal(imc_bth_pack(&h, b, sizeof(b)), -EINVAL);
	h = max; h.tver = 16;
	assert_int_equal(imc_bth_pack(&h, b, sizeof(b)), -EINVAL);
	h = max; h.dest_qp = 0x1000000;
	assert_int_equal(imc_bth_pack(&h, b, sizeof(b)), -EINVAL);
	h = max; h.resv7 = 128;
	assert_int_equal(imc_bth_pack(&h, b, sizeof(b)), -EINVAL);
	h = max; h.psn = 0x1000000;
	assert_int_equal(imc_bth_pack(&h, b, sizeof(b)), -EINVAL);
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], CANARY);
}

/* ---- DETH (IBA 9.3.3) ---- */

static const struct imc_deth deth_qp1 = {
	.qkey = IMC_QP1_QKEY, .resv8 = 0, .src_qp = IMC_QP1,
};
static const uint8_t deth_qp1_wire[] = {
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};
static const struct imc_deth deth_a = {
	.qkey = 0x0b1b, .resv8 = 0x7e, .src_qp = 0xabcdef,
};
static const uint8_t deth_a_wire[] = {
	0x00, 0x00, 0x0b, 0x1b, 0x7e, 0xab, 0xcd, 0xef,
};

static void test_deth(void **state)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	const struct imc_deth max = { .qkey = 0xffffffff, .resv8 = 255,
				      .src_qp = 0xffffff };
	struct imc_deth h;
	uint8_t b[8];

	(void)state;
	CHECK_GOLDEN(struct imc_deth, imc_deth_pack, imc_deth_unpack,
		     &deth_qp1, deth_qp1_wire);
	CHECK_GOLDEN(struct imc_deth, imc_deth_pack, imc_deth_unpack, &deth_a,
		     deth_a_wire);
	CHECK_GOLDEN(struct imc_deth, imc_deth_pack, imc_deth_unpack, &max,
		     ones);
	assert_int_equal(imc_deth_unpack(&h, deth_a_wire, 8), 8);
	assert_deth_equal(&h, &deth_a);
	assert_int_equal(imc_deth_unpack(&h, ones, 8), 8);
	assert_deth_equal(&h, &max);
	CHECK_LENGTHS(struct imc_deth, imc_deth_pack, imc_deth_unpack, &deth_a,
		      IMC_DETH_SIZE);
	memset(b, CANARY, sizeof(b));
	h = max;
	h.src_qp = 0x1000000;
	assert_int_equal(imc_deth_pack(&h, b, sizeof(b)), -EINVAL);
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], CANARY);
}

static void test_constants(void **state)
{
	(void)state;
	assert_false(imc_lid_is_mcast(0xbfff));
	assert_true(imc_lid_is_mcast(0xc000));
	assert_true(imc_lid_is_mcast(0xfffe));
	assert_false(imc_lid_is_mcast(IMC_LID_PERMISSIVE));
	assert_int_equal(IMC_MCAST_QPN, 0xffffff);
	assert_int_equal(IMC_QP1_QKEY, 0x80010000u);
}

/* ---- whole UD packets ---- */

static uint8_t payload[8192];

static void init_payload(void)
{
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
}

static void fill(struct imc_ud_packet *p, bool grh, bool imm, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->lrh = (struct imc_lrh){ .vl = 2, .sl = 7, .dlid = 0xc00e,
				   .slid = 0x0021 };
	p->has_grh = grh;
	p->grh = grh_a;
	p->grh.pay_len = 0;
	p->grh.next_hdr = 0;
	p->bth = (struct imc_bth){
		.opcode = imm ? IMC_BTH_OP_UD_SEND_ONLY_IMM
			      : IMC_BTH_OP_UD_SEND_ONLY,
		.se = imm, .pkey = 0xffff, .dest_qp = IMC_MCAST_QPN,
		.psn = 0x000abc + (uint32_t)n,
	};
	p->deth = (struct imc_deth){ .qkey = 0x0b1b, .src_qp = 0x48 };
	p->imm_data = 0xdeadbeef;
	p->payload = payload;
	p->payload_len = n;
}

static void test_ud_round_trip(void **state)
{
	static uint8_t buf[512];

	(void)state;
	init_payload();
	for (int v = 0; v < 4; v++) {
		bool grh = v & 1, imm = v & 2;

		for (size_t n = 0; n <= 300; n++) {
			struct imc_ud_packet p, q;
			size_t hlen = 8 + (grh ? 40 : 0) + 12 + 8 + (imm ? 4 : 0);
			size_t pad = (4 - n % 4) % 4;
			size_t total = hlen + n + pad + 6;
			int rc;

			fill(&p, grh, imm, n);
			assert_int_equal(imc_ud_packet_size(&p), total);
			memset(buf, CANARY, sizeof(buf));
			rc = imc_ud_packet_build(&p, buf, sizeof(buf));
			assert_int_equal(rc, (int)total);
			assert_int_equal(buf[total], CANARY);
			/* The length fields the builder filled in. */
			assert_int_equal(p.lrh.lnh, grh ? 3 : 2);
			assert_int_equal(p.lrh.pkt_len, (total - 2) / 4);
			assert_int_equal(p.bth.pad_cnt, pad);
			if (grh) {
				assert_int_equal(p.grh.pay_len,
						 total - 2 - 8 - 40);
				assert_int_equal(p.grh.next_hdr, 0x1b);
				assert_int_equal(p.grh.ipver, 6);
			}
			for (size_t i = 0; i < pad; i++)
				assert_int_equal(buf[hlen + n + i], 0);
			assert_memory_equal(buf + hlen, payload, n);

			assert_int_equal(imc_ud_packet_parse(&q, buf, total),
					 (int)total);
			assert_lrh_equal(&q.lrh, &p.lrh);
			assert_int_equal(q.has_grh, grh);
			if (grh)
				assert_grh_equal(&q.grh, &p.grh);
			assert_bth_equal(&q.bth, &p.bth);
			assert_deth_equal(&q.deth, &p.deth);
			assert_int_equal(q.imm_data, imm ? 0xdeadbeef : 0);
			assert_ptr_equal(q.payload, buf + hlen);
			assert_int_equal(q.payload_len, n);
			assert_int_equal(imc_packet_crc_check(buf, total), 0);
			/* Every truncation, and one byte more, is refused:
			 * PktLen no longer matches the buffer. */
			for (size_t l = 0; l < total; l++)
				assert_int_equal(imc_ud_packet_parse(&q, buf, l),
						 l < 14 ? -EMSGSIZE : -ERANGE);
			assert_int_equal(imc_ud_packet_parse(&q, buf, total + 1),
					 -ERANGE);
		}
	}
}

/* Builds a packet into buf and returns its length. */
static size_t make(uint8_t *buf, size_t cap, bool grh, bool imm, size_t n)
{
	struct imc_ud_packet p;
	int rc;

	fill(&p, grh, imm, n);
	rc = imc_ud_packet_build(&p, buf, cap);
	assert_true(rc > 0);
	return (size_t)rc;
}

/* Rewrites the CRCs after a header edit, as a sender of the bad packet
 * would, so that the check under test is the one that fails. */
static int reparse(uint8_t *buf, size_t len)
{
	struct imc_ud_packet q;

	assert_int_equal(imc_packet_crc_fill(buf, len), 0);
	return imc_ud_packet_parse(&q, buf, len);
}

static void test_parse_bad_lnh_lver(void **state)
{
	uint8_t buf[512];
	size_t len;

	(void)state;
	init_payload();
	for (uint8_t lnh = 0; lnh < 2; lnh++) {
		len = make(buf, sizeof(buf), false, false, 13);
		buf[1] = (uint8_t)((buf[1] & 0xfc) | lnh);
		assert_int_equal(reparse(buf, len), -EPROTONOSUPPORT);
	}
	len = make(buf, sizeof(buf), true, false, 13);
	buf[0] |= 0x01;                                 /* LVer 1 */
	assert_int_equal(reparse(buf, len), -EPROTONOSUPPORT);

	/* LNH disagreeing with the headers present: a global packet read
	 * as local finds the GRH where the BTH should be (opcode 0x6A)... */
	len = make(buf, sizeof(buf), true, false, 13);
	buf[1] = (uint8_t)((buf[1] & 0xfc) | IMC_LNH_IBA_LOCAL);
	assert_int_equal(reparse(buf, len), -EOPNOTSUPP);
	/* ...and a local packet read as global finds no GRH: NxtHdr would
	 * be a DestQP byte. */
	len = make(buf, sizeof(buf), false, false, 100);
	buf[1] = (uint8_t)((buf[1] & 0xfc) | IMC_LNH_IBA_GLOBAL);
	assert_int_equal(reparse(buf, len), -EPROTO);
}

static void test_parse_bad_grh(void **state)
{
	uint8_t buf[512];
	size_t len;

	(void)state;
	init_payload();
	len = make(buf, sizeof(buf), true, false, 13);
	assert_int_equal(buf[8 + 6], 0x1b);
	buf[8 + 6] = 0x1a;                              /* NxtHdr */
	assert_int_equal(reparse(buf, len), -EPROTO);
	buf[8 + 6] = 0x11;                              /* UDP */
	assert_int_equal(reparse(buf, len), -EPROTO);
	buf[8 + 6] = 0x1b;
	assert_int_equal(reparse(buf, len), (int)len);
	buf[8] = (uint8_t)((buf[8] & 0x0f) | 0x40);     /* IPVer 4 */
	assert_int_equal(reparse(buf, len), -EPROTO);
}

static void test_parse_bad_lengths(void **state)
{
	uint8_t buf[512];
	struct imc_ud_packet q;
	size_t len;
	uint16_t w, v;

	(void)state;
	init_payload();
	/* PktLen one word off either way. */
	for (int d = -1; d <= 1; d += 2) {
		len = make(buf, sizeof(buf), false, false, 40);
		w = (uint16_t)(buf[4] << 8 | buf[5]);
		w = (uint16_t)(w + d);
		buf[4] = (uint8_t)(w >> 8);
		buf[5] = (uint8_t)w;
		assert_int_equal(reparse(buf, len), -ERANGE);
	}
	/* GRH PayLen off by one word. */
	len = make(buf, sizeof(buf), true, false, 40);
	buf[8 + 5] += 4;
	assert_int_equal(reparse(buf, len), -ERANGE);
	buf[8 + 5] -= 8;
	assert_int_equal(reparse(buf, len), -ERANGE);

	/* Consistent PktLen, but too short for the headers it announces. */
	len = make(buf, sizeof(buf), false, false, 0);
	buf[5] = (8 + 12 + 4) / 4;                 /* LRH BTH ICRC: no DETH */
	assert_int_equal(reparse(buf, 8 + 12 + 6), -EMSGSIZE);
	len = make(buf, sizeof(buf), true, false, 0);
	buf[5] = (8 + 40 + 4) / 4;                 /* no BTH */
	buf[8 + 4] = 0;
	buf[8 + 5] = 4;
	/* No BTH, so no ICRC to compute: only the VCRC can be made good. */
	assert_int_equal(imc_packet_crc_fill(buf, 8 + 40 + 6), -EMSGSIZE);
	v = imc_vcrc_compute(buf, 8 + 40 + 4);
	buf[8 + 40 + 4] = (uint8_t)v;
	buf[8 + 40 + 5] = (uint8_t)(v >> 8);
	assert_int_equal(imc_ud_packet_parse(&q, buf, 8 + 40 + 6), -EMSGSIZE);
	len = make(buf, sizeof(buf), false, true, 0);
	buf[5] = (8 + 12 + 8 + 4) / 4;             /* no ImmDt */
	assert_int_equal(reparse(buf, 8 + 12 + 8 + 6), -EMSGSIZE);
	(void)len;
}

static void test_parse_bad_bth(void **state)
{
	uint8_t buf[512];
	struct imc_ud_packet q;
	size_t len;

	(void)state;
	init_payload();
	len = make(buf, sizeof(buf), false, false, 13);
	buf[8] = 0x04;                                  /* RC SEND ONLY */
	assert_int_equal(reparse(buf, len), -EOPNOTSUPP);
	buf[8] = IMC_BTH_OP_UD_SEND_ONLY;
	buf[9] |= 0x01;                                 /* TVer 1 */
	assert_int_equal(reparse(buf, len), -EOPNOTSUPP);

	/* PadCnt beyond the payload area. */
	len = make(buf, sizeof(buf), false, false, 0);
	buf[9] |= 0x30;                                 /* PadCnt 3 */
	assert_int_equal(reparse(buf, len), -EINVAL);
	/* Within it, PadCnt just shortens the payload. */
	len = make(buf, sizeof(buf), false, false, 4);
	buf[9] |= 0x30;
	assert_int_equal(reparse(buf, len), (int)len);
	assert_int_equal(imc_ud_packet_parse(&q, buf, len), (int)len);
	assert_int_equal(q.payload_len, 1);
}

static void test_parse_crc_errors(void **state)
{
	uint8_t buf[512];
	struct imc_ud_packet q;
	size_t len;
	uint16_t v;

	(void)state;
	init_payload();
	for (int grh = 0; grh < 2; grh++) {
		len = make(buf, sizeof(buf), grh, false, 57);
		/* Any flipped byte: the VCRC catches it first. */
		for (size_t i = 0; i < len; i++) {
			buf[i] ^= 0x10;
			assert_int_equal(imc_ud_packet_parse(&q, buf, len),
					 i == 5 ? -ERANGE : -EILSEQ);
			buf[i] ^= 0x10;
		}
		/* A payload byte changed by a link that then recomputed
		 * only the VCRC: the ICRC catches it end to end. */
		buf[len - 10] ^= 0x01;
		v = imc_vcrc_compute(buf, len - 2);
		buf[len - 2] = (uint8_t)v;
		buf[len - 1] = (uint8_t)(v >> 8);
		assert_int_equal(imc_ud_packet_parse(&q, buf, len), -EBADMSG);
		buf[len - 10] ^= 0x01;
		/* A switch changing the VL does just that, legitimately. */
		buf[0] = (uint8_t)((buf[0] & 0x0f) | 0x70);
		v = imc_vcrc_compute(buf, len - 2);
		buf[len - 2] = (uint8_t)v;
		buf[len - 1] = (uint8_t)(v >> 8);
		assert_int_equal(imc_ud_packet_parse(&q, buf, len), (int)len);
		assert_int_equal(q.lrh.vl, 7);
	}
}

static void test_build_errors(void **state)
{
	uint8_t buf[8300];
	struct imc_ud_packet p;
	size_t total;

	(void)state;
	init_payload();
	fill(&p, false, false, 10);
	p.bth.opcode = 0x04;
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), -EINVAL);
	fill(&p, false, false, 10);
	p.payload = NULL;
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), -EINVAL);
	fill(&p, false, false, 0);
	p.payload = NULL;
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), 34);

	/* A field too wide for its header: nothing written. */
	fill(&p, true, false, 10);
	p.grh.flow_label = 0x100000;
	memset(buf, CANARY, 100);
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), -EINVAL);
	fill(&p, false, false, 10);
	p.deth.src_qp = 0x1000000;
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), -EINVAL);
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(buf[i], CANARY);

	/* Every short buffer: -ENOSPC, untouched. */
	fill(&p, true, true, 23);
	total = imc_ud_packet_size(&p);
	for (size_t l = 0; l < total; l++) {
		memset(buf, CANARY, total);
		assert_int_equal(imc_ud_packet_build(&p, buf, l), -ENOSPC);
		for (size_t i = 0; i < total; i++)
			assert_int_equal(buf[i], CANARY);
	}

	/* The largest payload PktLen can describe: 2047 words. */
	fill(&p, false, false, 2047 * 4 - 32);
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)),
			 2047 * 4 + 2);
	assert_int_equal(p.lrh.pkt_len, 2047);
	fill(&p, false, false, 2047 * 4 - 32 + 1);
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), -EMSGSIZE);
	fill(&p, true, false, 2047 * 4 - 72);
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)),
			 2047 * 4 + 2);
	assert_int_equal(p.grh.pay_len, 2047 * 4 - 48);
	fill(&p, true, false, 2047 * 4 - 72 + 1);
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), -EMSGSIZE);
}

/* A whole packet laid out by hand: a 5-byte send to multicast group
 * LID 0xC00E over the local route, headers from the figures, pad, and
 * the CRCs at the end in wire order. */
static void test_ud_golden(void **state)
{
	static const uint8_t hello[5] = { 'h', 'e', 'l', 'l', 'o' };
	static const uint8_t want[] = {
		0x20, 0x72, 0xc0, 0x0e, 0x00, 0x0a, 0x00, 0x21, /* LRH */
		0x64, 0x30, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, /* BTH */
		0x00, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x0b, 0x1b, 0x00, 0x00, 0x00, 0x48, /* DETH */
		'h', 'e', 'l', 'l', 'o', 0, 0, 0,               /* pad 3 */
	};
	struct imc_ud_packet p;
	uint8_t buf[64];
	uint32_t icrc;
	uint16_t vcrc;

	(void)state;
	fill(&p, false, false, 5);
	p.payload = hello;
	/* VL 2, SL 7, LNH 2, PktLen (28 + 5 + 3 + 4) / 4 = 10, PSN 5 */
	p.bth.psn = 5;
	assert_int_equal(imc_ud_packet_build(&p, buf, sizeof(buf)), 42);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(imc_icrc_compute(buf, 36, &icrc), 0);
	assert_int_equal(buf[36] | buf[37] << 8 | buf[38] << 16 |
			 (uint32_t)buf[39] << 24, icrc);
	vcrc = imc_crc16(0, buf, 40);
	assert_int_equal(buf[40] | buf[41] << 8, vcrc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lrh_golden),
		cmocka_unit_test(test_lrh_extremes),
		cmocka_unit_test(test_grh),
		cmocka_unit_test(test_bth),
		cmocka_unit_test(test_deth),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_ud_round_trip),
		cmocka_unit_test(test_parse_bad_lnh_lver),
		cmocka_unit_test(test_parse_bad_grh),
		cmocka_unit_test(test_parse_bad_lengths),
		cmocka_unit_test(test_parse_bad_bth),
		cmocka_unit_test(test_parse_crc_errors),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_ud_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
