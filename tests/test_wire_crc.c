/* ICRC and VCRC (IBA 7.8): the CRC cores against their check values and a
 * bit-serial reference, the ICRC against a RoCE packet captured from a
 * ConnectX-4 Lx adapter, and, bit by bit, which header bits the ICRC
 * ignores (exactly the variant fields) and that the VCRC ignores none. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/packet.h"

static const char check_input[] = "123456789";

/* Bit-serial references, one input bit at a time, least significant
 * first: the definitions the table-driven code must agree with. */
static uint32_t ref_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		for (int b = 0; b < 8; b++) {
			uint32_t in = (p[i] >> b) & 1;

			c = ((c ^ in) & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		}
	}
	return ~c;
}

static uint16_t ref_crc16(const uint8_t *p, size_t n)
{
	uint16_t c = 0xffff;

	for (size_t i = 0; i < n; i++) {
		for (int b = 0; b < 8; b++) {
			unsigned int in = (p[i] >> b) & 1;

			/* 0x100B = x^16 + x^12 + x^3 + x + 1, reflected */
			c = ((c ^ in) & 1) ? (uint16_t)((c >> 1) ^ 0xd008)
					   : (uint16_t)(c >> 1);
		}
	}
	return (uint16_t)~c;
}

static uint32_t rng = 12345;

static uint8_t rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return (uint8_t)(rng >> 16);
}

static void test_crc32_check_value(void **state)
{
	(void)state;
	assert_int_equal(imc_crc32(0, check_input, 9), 0xcbf43926u);
	assert_int_equal(imc_crc32(0, "", 0), 0);
	/* Chaining at every split point gives the same CRC. */
	for (size_t i = 0; i <= 9; i++)
		assert_int_equal(imc_crc32(imc_crc32(0, check_input, i),
					   check_input + i, 9 - i),
				 0xcbf43926u);
}

static void test_crc16_check_value(void **state)
{
	(void)state;
	/* CRC-16 with polynomial 0x100B, reflected in and out, init and
	 * xorout 0xFFFF: the IBA VCRC (IBA 7.8.2). Its check value. */
	assert_int_equal(imc_crc16(0, check_input, 9), 0x0a3d);
	assert_int_equal(ref_crc16((const uint8_t *)check_input, 9), 0x0a3d);
	assert_int_equal(imc_crc16(0, "", 0), 0);
	for (size_t i = 0; i <= 9; i++)
		assert_int_equal(imc_crc16(imc_crc16(0, check_input, i),
					   check_input + i, 9 - i),
				 0x0a3d);
}

static void test_crc_cores_match_bit_serial(void **state)
{
	uint8_t buf[300];

	(void)state;
	memset(buf, 0, sizeof(buf));
	for (size_t n = 0; n < sizeof(buf); n++) {
		for (size_t i = 0; i < n; i++)
			buf[i] = rnd();
		assert_int_equal(imc_crc32(0, buf, n), ref_crc32(buf, n));
		assert_int_equal(imc_crc16(0, buf, n), ref_crc16(buf, n));
	}
}

/* Linux rxe (drivers/infiniband/sw/rxe/rxe_icrc.c) starts the RoCE ICRC
 * from 0xDEBB20E3, "the result of computing a CRC with a seed of
 * 0xffffffff and 8 bytes of 0xff representing a masked LRH". */
static void test_rxe_masked_lrh_seed(void **state)
{
	static const uint8_t ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	(void)state;
	assert_int_equal(~imc_crc32(0, ones, sizeof(ones)), 0xdebb20e3u);
}

/* A RoCEv2 CNP captured on a Mellanox ConnectX-4 Lx: scapy's
 * test/contrib/roce.uts ("RoCE CNP captured on ConnectX-4 Lx"). Ethernet,
 * IPv4, UDP 4791, BTH (opcode 0x81, resv8a 0x40 = BECN), 16 bytes, ICRC.
 * The ICRC is the IBA one (RoCE Annex A17) over an all-ones LRH, the
 * IP/UDP header with its variant fields as ones, and the BTH with resv8a
 * as ones; it is sent least significant byte first. */
static const uint8_t cx4_cnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

static void test_icrc_connectx4_capture(void **state)
{
	uint8_t ps[8 + sizeof(cx4_cnp)];
	size_t ip = 14, udp = 34, bth = 42, end = sizeof(cx4_cnp) - 4;
	size_t n = 0;
	uint32_t icrc, wire;

	(void)state;
	memset(ps, 0xff, 8);
	n = 8;
	memcpy(ps + n, cx4_cnp + ip, end - ip);
	ps[n + 1] = 0xff;                       /* IPv4 TOS */
	ps[n + 8] = 0xff;                       /* TTL */
	ps[n + 10] = ps[n + 11] = 0xff;         /* header checksum */
	ps[n + (udp - ip) + 6] = 0xff;          /* UDP checksum */
	ps[n + (udp - ip) + 7] = 0xff;
	assert_int_equal(ps[n + (bth - ip) + 4], 0x40);
	ps[n + (bth - ip) + 4] = 0xff;          /* BTH resv8a */
	n += end - ip;
	icrc = imc_crc32(0, ps, n);
	wire = (uint32_t)cx4_cnp[end] | (uint32_t)cx4_cnp[end + 1] << 8 |
	       (uint32_t)cx4_cnp[end + 2] << 16 |
	       (uint32_t)cx4_cnp[end + 3] << 24;
	assert_int_equal(icrc, 0x2a00fd82u);
	assert_int_equal(icrc, wire);
	/* Without the resv8a mask it would not match: the mask matters. */
	ps[8 + (bth - ip) + 4] = 0x40;
	assert_int_not_equal(imc_crc32(0, ps, n), wire);
}

static size_t build(bool grh, uint8_t *buf, size_t len, size_t payload_len)
{
	static uint8_t payload[64];
	struct imc_ud_packet p;
	int rc;

	memset(&p, 0, sizeof(p));
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(0x30 + i);
	p.lrh = (struct imc_lrh){ .vl = 3, .sl = 5, .dlid = 0xc007,
				  .slid = 0x0042 };
	p.has_grh = grh;
	p.grh = (struct imc_grh){ .tclass = 0x5a, .flow_label = 0x12345,
				  .hop_limit = 63 };
	for (int i = 0; i < 16; i++) {
		p.grh.sgid.raw[i] = (uint8_t)(0xa0 + i);
		p.grh.dgid.raw[i] = (uint8_t)(0xc0 + i);
	}
	p.grh.dgid.raw[0] = 0xff;
	p.bth = (struct imc_bth){ .opcode = IMC_BTH_OP_UD_SEND_ONLY,
				  .pkey = 0xffff, .dest_qp = IMC_MCAST_QPN,
				  .psn = 0x123456 };
	p.deth = (struct imc_deth){ .qkey = 0x0b1b, .src_qp = 0x4711 };
	p.payload = payload;
	p.payload_len = payload_len;
	rc = imc_ud_packet_build(&p, buf, len);
	assert_true(rc > 0);
	return (size_t)rc;
}

/* Which bits of LRH, GRH and BTH the ICRC must ignore (IBA 7.8.1). */
static bool variant_bit(bool grh, size_t byte, int bit)
{
	size_t bth = grh ? IMC_LRH_SIZE + IMC_GRH_SIZE : IMC_LRH_SIZE;

	if (byte == bth + 4)
		return true;                     /* BTH resv8a */
	if (!grh)
		return byte == 0 && bit >= 4;    /* LRH VL */
	if (byte < IMC_LRH_SIZE)
		return true;                     /* whole LRH */
	byte -= IMC_LRH_SIZE;
	return (byte == 0 && bit < 4) ||         /* TClass, high nibble */
	       (byte >= 1 && byte <= 3) ||       /* TClass, FlowLabel */
	       byte == 7;                        /* HopLmt */
}

static void check_masks(bool grh)
{
	uint8_t pkt[256];
	size_t len = build(grh, pkt, sizeof(pkt), 13);
	size_t icrc_len = len - IMC_ICRC_SIZE - IMC_VCRC_SIZE;
	uint32_t base, icrc;
	uint16_t vbase = imc_vcrc_compute(pkt, len - IMC_VCRC_SIZE);
	size_t ignored = 0;

	assert_int_equal(imc_packet_crc_check(pkt, len), 0);
	assert_int_equal(imc_icrc_compute(pkt, icrc_len, &base), 0);
	/* Every bit of the packet before the VCRC, headers and payload. */
	for (size_t byte = 0; byte < len - IMC_VCRC_SIZE; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			bool lnh = byte == 1 && bit < 2;
			int rc;

			pkt[byte] ^= (uint8_t)(1u << bit);
			assert_int_not_equal(
				imc_vcrc_compute(pkt, len - IMC_VCRC_SIZE),
				vbase);
			if (byte < icrc_len) {
				rc = imc_icrc_compute(pkt, icrc_len, &icrc);
				if (lnh) {
					/* LNH says what follows: another
					 * layout, or no ICRC at all. */
					assert_true(rc < 0 || icrc != base);
				} else {
					assert_int_equal(rc, 0);
					if (variant_bit(grh, byte, bit)) {
						assert_int_equal(icrc, base);
						ignored++;
					} else {
						assert_int_not_equal(icrc,
								     base);
					}
				}
			}
			pkt[byte] ^= (uint8_t)(1u << bit);
		}
	}
	/* local: VL 4 + resv8a 8; global: LRH 64 - LNH 2, GRH 4+24+8, 8 */
	assert_int_equal(ignored, grh ? 62 + 36 + 8 : 4 + 8);
}

static void test_icrc_variant_bits_local(void **state)
{
	(void)state;
	check_masks(false);
}

static void test_icrc_variant_bits_global(void **state)
{
	(void)state;
	check_masks(true);
}

/* The ICRC of a global packet computed by hand from the rule, as rxe
 * does for RoCE: all-ones LRH, GRH with TClass/FlowLabel/HopLmt as ones,
 * BTH with resv8a as ones, then the rest as is. */
static void test_icrc_global_by_hand(void **state)
{
	uint8_t pkt[256], ps[256];
	size_t len = build(true, pkt, sizeof(pkt), 21);
	size_t n = len - IMC_ICRC_SIZE - IMC_VCRC_SIZE;
	uint32_t icrc;

	(void)state;
	memcpy(ps, pkt, n);
	memset(ps, 0xff, 8);
	ps[8] = 0x6f;
	ps[9] = ps[10] = ps[11] = 0xff;
	ps[15] = 0xff;
	ps[48 + 4] = 0xff;
	assert_int_equal(imc_icrc_compute(pkt, n, &icrc), 0);
	assert_int_equal(icrc, imc_crc32(0, ps, n));
	/* Least significant byte first on the wire, then the VCRC. */
	assert_int_equal(pkt[n], (uint8_t)icrc);
	assert_int_equal(pkt[n + 3], (uint8_t)(icrc >> 24));
	assert_int_equal(pkt[n + 4] | pkt[n + 5] << 8,
			 imc_crc16(0, pkt, n + 4));
}

static void test_icrc_local_by_hand(void **state)
{
	uint8_t pkt[256], ps[256];
	size_t len = build(false, pkt, sizeof(pkt), 0);
	size_t n = len - IMC_ICRC_SIZE - IMC_VCRC_SIZE;
	uint32_t icrc;

	(void)state;
	memcpy(ps, pkt, n);
	ps[0] |= 0xf0;
	ps[8 + 4] = 0xff;
	assert_int_equal(imc_icrc_compute(pkt, n, &icrc), 0);
	assert_int_equal(icrc, imc_crc32(0, ps, n));
}

static void test_crc_errors(void **state)
{
	uint8_t pkt[256];
	size_t len = build(true, pkt, sizeof(pkt), 8);
	uint32_t icrc;

	(void)state;
	/* Raw packets carry no ICRC (IBA 7.8.1). */
	pkt[1] &= 0xfc;
	assert_int_equal(imc_icrc_compute(pkt, len - 6, &icrc),
			 -EPROTONOSUPPORT);
	pkt[1] |= IMC_LNH_IP;
	assert_int_equal(imc_icrc_compute(pkt, len - 6, &icrc),
			 -EPROTONOSUPPORT);
	/* Raw: only the VCRC is written and checked. */
	assert_int_equal(imc_packet_crc_fill(pkt, len), 0);
	assert_int_equal(imc_packet_crc_check(pkt, len), 0);
	pkt[1] |= IMC_LNH_IBA_GLOBAL;
	assert_int_equal(imc_packet_crc_fill(pkt, len), 0);
	/* Too short for the headers LNH announces. */
	for (size_t n = 0; n < IMC_LRH_SIZE + IMC_GRH_SIZE + IMC_BTH_SIZE; n++)
		assert_int_equal(imc_icrc_compute(pkt, n, &icrc), -EMSGSIZE);
	for (size_t n = 0; n < IMC_LRH_SIZE + IMC_VCRC_SIZE; n++) {
		assert_int_equal(imc_packet_crc_fill(pkt, n), -EMSGSIZE);
		assert_int_equal(imc_packet_crc_check(pkt, n), -EMSGSIZE);
	}
	/* A bad VCRC is reported before the ICRC is looked at. */
	assert_int_equal(imc_packet_crc_check(pkt, len), 0);
	pkt[len - 1] ^= 1;
	assert_int_equal(imc_packet_crc_check(pkt, len), -EILSEQ);
	pkt[len - 1] ^= 1;
	pkt[len - 6] ^= 0x80;
	assert_int_equal(imc_packet_crc_check(pkt, len), -EILSEQ);
	pkt[len - 2] = (uint8_t)imc_vcrc_compute(pkt, len - 2);
	pkt[len - 1] = (uint8_t)(imc_vcrc_compute(pkt, len - 2) >> 8);
	assert_int_equal(imc_packet_crc_check(pkt, len), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_check_value),
		cmocka_unit_test(test_crc16_check_value),
		cmocka_unit_test(test_crc_cores_match_bit_serial),
		cmocka_unit_test(test_rxe_masked_lrh_seed),
		cmocka_unit_test(test_icrc_connectx4_capture),
		cmocka_unit_test(test_icrc_variant_bits_local),
		cmocka_unit_test(test_icrc_variant_bits_global),
		cmocka_unit_test(test_icrc_global_by_hand),
		cmocka_unit_test(test_icrc_local_by_hand),
		cmocka_unit_test(test_crc_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
