/* MAD, RMPP and SA headers: golden bytes from the IBA layouts, round trips,
 * short buffers, and MAD status names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/mad.h"

#include "wire_check.h"

/* Field by field: the structs have padding that memcmp would read. */
static void assert_rmpp_equal(const struct imc_rmpp_hdr *a,
			      const struct imc_rmpp_hdr *b)
{
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->resp_time, b->resp_time);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->seg_num, b->seg_num);
	assert_int_equal(a->paylen_newwin, b->paylen_newwin);
}

static void assert_sa_hdr_equal(const struct imc_sa_hdr *a,
				const struct imc_sa_hdr *b)
{
	assert_true(a->sm_key == b->sm_key);
	assert_int_equal(a->attr_offset, b->attr_offset);
	assert_int_equal(a->reserved, b->reserved);
	assert_true(a->comp_mask == b->comp_mask);
}

/* No padding, so whole-struct comparison is exact. */
_Static_assert(sizeof(struct imc_mad_hdr) == 24, "imc_mad_hdr padding");

static const struct imc_mad_hdr golden_hdr = {
	.base_version = 1,
	.mgmt_class = UMAD_CLASS_SUBN_ADM,
	.class_version = UMAD_SA_CLASS_VERSION,
	.method = UMAD_SA_METHOD_GET_TABLE_RESP,
	.status = 0x0600,
	.class_specific = 0xabcd,
	.tid = 0x0102030405060708ULL,
	.attr_id = UMAD_SA_ATTR_MCMEMBER_REC,
	.resv = 0x1122,
	.attr_mod = 0xdeadbeef,
};

/* IBA 13.4.3: BaseVersion, MgmtClass, ClassVersion, R|Method, Status,
 * ClassSpecific, TransactionID, AttributeID, Reserved, AttributeModifier. */
static const uint8_t golden_hdr_bytes[IMC_MAD_HDR_SIZE] = {
	0x01, 0x03, 0x02, 0x92, 0x06, 0x00, 0xab, 0xcd,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0x00, 0x38, 0x11, 0x22, 0xde, 0xad, 0xbe, 0xef,
};

static void mad_hdr_golden(void **state)
{
	uint8_t buf[IMC_MAD_HDR_SIZE];
	struct imc_mad_hdr h;

	assert_int_equal(imc_mad_hdr_pack(&golden_hdr, buf, sizeof(buf)),
			 IMC_MAD_HDR_SIZE);
	assert_memory_equal(buf, golden_hdr_bytes, sizeof(buf));
	memset(&h, 0, sizeof(h));
	assert_int_equal(imc_mad_hdr_unpack(&h, golden_hdr_bytes,
					    sizeof(golden_hdr_bytes)),
			 IMC_MAD_HDR_SIZE);
	assert_int_equal(h.base_version, 1);
	assert_int_equal(h.mgmt_class, 0x03);
	assert_int_equal(h.class_version, 2);
	assert_int_equal(h.method, 0x92);
	assert_int_equal(h.status, 0x0600);
	assert_int_equal(h.class_specific, 0xabcd);
	assert_true(h.tid == 0x0102030405060708ULL);
	assert_int_equal(h.attr_id, 0x0038);
	assert_int_equal(h.resv, 0x1122);
	assert_int_equal(h.attr_mod, 0xdeadbeef);
}

static void mad_hdr_max_and_lengths(void **state)
{
	struct imc_mad_hdr h = {
		0xff, 0xff, 0xff, 0xff, 0xffff, 0xffff, UINT64_MAX,
		0xffff, 0xffff, 0xffffffff,
	};
	struct imc_mad_hdr o;
	uint8_t buf[IMC_MAD_HDR_SIZE];

	assert_int_equal(imc_mad_hdr_pack(&h, buf, sizeof(buf)), 24);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xff);
	assert_int_equal(imc_mad_hdr_unpack(&o, buf, sizeof(buf)), 24);
	assert_memory_equal(&o, &h, sizeof(h));
	/* A longer buffer is fine: unpack consumes only the header. */
	CHECK_LENGTHS(struct imc_mad_hdr, imc_mad_hdr_pack, imc_mad_hdr_unpack,
		      &golden_hdr, IMC_MAD_HDR_SIZE);
}

static void rmpp_hdr_golden(void **state)
{
	/* IBA 13.6.2.1: RMPPVersion, RMPPType, RRespTime(5):RMPPFlags(3),
	 * RMPPStatus, SegmentNumber, PayloadLength/NewWindowLast. */
	struct imc_rmpp_hdr h = {
		.version = UMAD_RMPP_VERSION,
		.type = IMC_RMPP_TYPE_DATA,
		.resp_time = 0x12,
		.flags = IMC_RMPP_FLAG_ACTIVE | IMC_RMPP_FLAG_FIRST,
		.status = 0x76,
		.seg_num = 0x00010203,
		.paylen_newwin = 0x0000040c,
	};
	static const uint8_t want[] = {
		0x01, 0x01, 0x93, 0x76, 0x00, 0x01, 0x02, 0x03,
		0x00, 0x00, 0x04, 0x0c,
	};
	uint8_t buf[IMC_RMPP_HDR_SIZE];
	struct imc_rmpp_hdr o;

	assert_int_equal(imc_rmpp_hdr_pack(&h, buf, sizeof(buf)), 12);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(imc_rmpp_hdr_unpack(&o, want, sizeof(want)), 12);
	assert_int_equal(o.version, 1);
	assert_int_equal(o.type, IMC_RMPP_TYPE_DATA);
	assert_int_equal(o.resp_time, 0x12);
	assert_int_equal(o.flags, 3);
	assert_int_equal(o.status, 0x76);
	assert_int_equal(o.seg_num, 0x00010203);
	assert_int_equal(o.paylen_newwin, 0x40c);
	CHECK_LENGTHS(struct imc_rmpp_hdr, imc_rmpp_hdr_pack,
		      imc_rmpp_hdr_unpack, &h, IMC_RMPP_HDR_SIZE);
}

static void rmpp_hdr_bitfields(void **state)
{
	struct imc_rmpp_hdr h = { 1, IMC_RMPP_TYPE_ABORT, 0x1f, 0x7, 0xff,
				  UINT32_MAX, UINT32_MAX };
	struct imc_rmpp_hdr o;
	uint8_t buf[IMC_RMPP_HDR_SIZE];

	assert_int_equal(imc_rmpp_hdr_pack(&h, buf, sizeof(buf)), 12);
	assert_int_equal(buf[2], 0xff);
	assert_int_equal(imc_rmpp_hdr_unpack(&o, buf, sizeof(buf)), 12);
	assert_rmpp_equal(&o, &h);

	/* Flags alone stay in the low bits, RRespTime alone in the high. */
	h.resp_time = 0;
	h.flags = IMC_RMPP_FLAG_LAST;
	assert_int_equal(imc_rmpp_hdr_pack(&h, buf, sizeof(buf)), 12);
	assert_int_equal(buf[2], 0x04);
	h.resp_time = 1;
	h.flags = 0;
	assert_int_equal(imc_rmpp_hdr_pack(&h, buf, sizeof(buf)), 12);
	assert_int_equal(buf[2], 0x08);

	/* Every byte value of byte 2 decodes and re-encodes to itself. */
	for (unsigned v = 0; v < 256; v++) {
		uint8_t in[IMC_RMPP_HDR_SIZE] = { 1, 1, (uint8_t)v };
		uint8_t out[IMC_RMPP_HDR_SIZE];

		assert_int_equal(imc_rmpp_hdr_unpack(&o, in, sizeof(in)), 12);
		assert_int_equal(o.resp_time, v >> 3);
		assert_int_equal(o.flags, v & 7);
		assert_int_equal(imc_rmpp_hdr_pack(&o, out, sizeof(out)), 12);
		assert_memory_equal(in, out, sizeof(in));
	}

	/* Values that do not fit their bits are refused, nothing written. */
	memset(buf, CANARY, sizeof(buf));
	h.resp_time = 0x20;
	assert_int_equal(imc_rmpp_hdr_pack(&h, buf, sizeof(buf)), -EINVAL);
	h.resp_time = 0;
	h.flags = 8;
	assert_int_equal(imc_rmpp_hdr_pack(&h, buf, sizeof(buf)), -EINVAL);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);
}

static void sa_hdr_golden(void **state)
{
	/* IBA 15.2.1.1: SM_Key, AttributeOffset, Reserved, ComponentMask. */
	struct imc_sa_hdr h = {
		.sm_key = 0x1122334455667788ULL,
		.attr_offset = 7,
		.reserved = 0xbeef,
		.comp_mask = 0x130c7,
	};
	static const uint8_t want[IMC_SA_HDR_SIZE] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x00, 0x07, 0xbe, 0xef,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x30, 0xc7,
	};
	uint8_t buf[IMC_SA_HDR_SIZE];
	struct imc_sa_hdr o;

	assert_int_equal(imc_sa_hdr_pack(&h, buf, sizeof(buf)), 20);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(imc_sa_hdr_unpack(&o, want, sizeof(want)), 20);
	assert_true(o.sm_key == 0x1122334455667788ULL);
	assert_int_equal(o.attr_offset, 7);
	assert_int_equal(o.reserved, 0xbeef);
	assert_true(o.comp_mask == 0x130c7);
	h.comp_mask = UINT64_MAX;
	assert_int_equal(imc_sa_hdr_pack(&h, buf, sizeof(buf)), 20);
	assert_int_equal(imc_sa_hdr_unpack(&o, buf, sizeof(buf)), 20);
	assert_true(o.comp_mask == UINT64_MAX);
	CHECK_LENGTHS(struct imc_sa_hdr, imc_sa_hdr_pack, imc_sa_hdr_unpack,
		      &h, IMC_SA_HDR_SIZE);
}

static void sa_mad_layout(void **state)
{
	struct imc_sa_mad m, o;
	uint8_t buf[IMC_MAD_SIZE + 8];

	memset(&m, 0, sizeof(m));
	m.mad = golden_hdr;
	m.rmpp = (struct imc_rmpp_hdr){ 1, 1, 0x1f, 7, 2, 3, 4 };
	m.sa = (struct imc_sa_hdr){ 0x0102030405060708ULL, 7, 0x0a0b,
				    0x8000000000000001ULL };
	for (unsigned i = 0; i < IMC_SA_DATA_SIZE; i++)
		m.data[i] = (uint8_t)(i * 7 + 1);

	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)), 256);
	assert_memory_equal(buf, golden_hdr_bytes, IMC_MAD_HDR_SIZE);
	assert_int_equal(buf[24], 1);
	assert_int_equal(buf[26], 0xff);
	assert_int_equal(buf[27], 2);
	assert_int_equal(buf[31], 3);
	assert_int_equal(buf[35], 4);
	assert_int_equal(buf[36], 0x01);
	assert_int_equal(buf[43], 0x08);
	assert_int_equal(buf[44], 0x00);
	assert_int_equal(buf[45], 0x07);
	assert_int_equal(buf[46], 0x0a);
	assert_int_equal(buf[47], 0x0b);
	assert_int_equal(buf[48], 0x80);
	assert_int_equal(buf[55], 0x01);
	assert_memory_equal(buf + 56, m.data, IMC_SA_DATA_SIZE);
	for (size_t i = IMC_MAD_SIZE; i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);

	memset(&o, 0, sizeof(o));
	assert_int_equal(imc_sa_mad_unpack(&o, buf, IMC_MAD_SIZE), 256);
	assert_memory_equal(&o.mad, &m.mad, sizeof(m.mad));
	assert_rmpp_equal(&o.rmpp, &m.rmpp);
	assert_sa_hdr_equal(&o.sa, &m.sa);
	assert_memory_equal(o.data, m.data, sizeof(m.data));

	/* Unpack needs exactly one MAD; pack needs room for one. */
	for (size_t l = 0; l < IMC_MAD_SIZE; l++) {
		uint8_t small[IMC_MAD_SIZE];

		assert_int_equal(imc_sa_mad_unpack(&o, buf, l), -EMSGSIZE);
		memset(small, CANARY, sizeof(small));
		assert_int_equal(imc_sa_mad_pack(&m, small, l), -ENOSPC);
		for (size_t k = 0; k < sizeof(small); k++)
			assert_int_equal(small[k], CANARY);
	}
	assert_int_equal(imc_sa_mad_unpack(&o, buf, IMC_MAD_SIZE + 1),
			 -EMSGSIZE);

	/* A bad RMPP field refuses the whole MAD and writes nothing. */
	m.rmpp.flags = 9;
	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(imc_sa_mad_pack(&m, buf, sizeof(buf)), -EINVAL);
	for (size_t k = 0; k < sizeof(buf); k++)
		assert_int_equal(buf[k], CANARY);
}

static void sa_mad_bytes_survive(void **state)
{
	uint8_t in[IMC_MAD_SIZE], out[IMC_MAD_SIZE];
	struct imc_sa_mad m;
	uint32_t x = 12345;

	/* Any 256 bytes decode and re-encode to themselves. */
	for (int round = 0; round < 64; round++) {
		for (size_t i = 0; i < sizeof(in); i++) {
			x = x * 1103515245u + 12345u;
			in[i] = (uint8_t)(x >> 16);
		}
		assert_int_equal(imc_sa_mad_unpack(&m, in, sizeof(in)), 256);
		assert_int_equal(imc_sa_mad_pack(&m, out, sizeof(out)), 256);
		assert_memory_equal(in, out, sizeof(in));
	}
}

static void status_helpers(void **state)
{
	assert_int_equal(imc_sa_status_code(0x0600),
			 UMAD_SA_STATUS_INSUF_COMPS);
	assert_int_equal(imc_sa_status_code(0x0300),
			 UMAD_SA_STATUS_NO_RECORDS);
	/* Bit 15 is not part of the SA code (IBA 15.2.1.1). */
	assert_int_equal(imc_sa_status_code(0x8200),
			 UMAD_SA_STATUS_REQ_INVALID);
	assert_int_equal(imc_sa_status_code(0x001c), 0);
	assert_int_equal(imc_sa_status(UMAD_SA_STATUS_REQ_DENIED), 0x0700);
	assert_int_equal(imc_sa_status(UMAD_SA_STATUS_PRI_SUGGESTED), 0x0800);
	assert_int_equal(imc_mad_status_field(0x001c), 7);
	assert_int_equal(imc_mad_status_field(0x000c), 3);
	assert_int_equal(imc_mad_status_field(0x0603), 0);

	assert_string_equal(imc_mad_status_str(0), "SUCCESS");
	assert_string_equal(imc_mad_status_str(0x0100), "NO_RESOURCES");
	assert_string_equal(imc_mad_status_str(0x0200), "REQ_INVALID");
	assert_string_equal(imc_mad_status_str(0x0300), "NO_RECORDS");
	assert_string_equal(imc_mad_status_str(0x0400), "TOO_MANY_RECORDS");
	assert_string_equal(imc_mad_status_str(0x0500), "INVALID_GID");
	assert_string_equal(imc_mad_status_str(0x0600), "INSUF_COMPS");
	assert_string_equal(imc_mad_status_str(0x0700), "REQ_DENIED");
	assert_string_equal(imc_mad_status_str(0x0800), "PRI_SUGGESTED");
	assert_string_equal(imc_mad_status_str(0x0900), "SA_UNKNOWN");
	assert_string_equal(imc_mad_status_str(0x7f00), "SA_UNKNOWN");
	assert_string_equal(imc_mad_status_str(0x0004), "BAD_VERSION");
	assert_string_equal(imc_mad_status_str(0x0008), "METHOD_UNSUPPORTED");
	assert_string_equal(imc_mad_status_str(0x000c),
			    "METHOD_ATTR_UNSUPPORTED");
	assert_string_equal(imc_mad_status_str(0x001c), "INVALID_ATTR_VALUE");
	assert_string_equal(imc_mad_status_str(0x0010),
			    "INVALID_FIELD_RESERVED");
	assert_string_equal(imc_mad_status_str(0x0001), "BUSY");
	assert_string_equal(imc_mad_status_str(0x0002), "REDIRECT");
	assert_string_equal(imc_mad_status_str(0x8000), "UNKNOWN");
	/* The SA code is more specific than the generic bits. */
	assert_string_equal(imc_mad_status_str(0x061c), "INSUF_COMPS");
	assert_string_equal(imc_mad_status_str(0x001d), "INVALID_ATTR_VALUE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mad_hdr_golden),
		cmocka_unit_test(mad_hdr_max_and_lengths),
		cmocka_unit_test(rmpp_hdr_golden),
		cmocka_unit_test(rmpp_hdr_bitfields),
		cmocka_unit_test(sa_hdr_golden),
		cmocka_unit_test(sa_mad_layout),
		cmocka_unit_test(sa_mad_bytes_survive),
		cmocka_unit_test(status_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
