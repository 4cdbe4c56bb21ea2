/* Table-driven record packing (wire/fields.h): fields across byte
 * boundaries, a 64-bit field, raw bytes, booleans, the width check that
 * leaves the buffer untouched, short buffers, and bits no field covers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "wire/fields.h"

struct rec {
	uint8_t a;      /* 3 bits */
	uint32_t b;     /* 20 bits, across three bytes */
	bool c;
	uint64_t d;
	uint8_t raw[3];
	uint16_t e;     /* 12 bits */
	uint8_t f;      /* 4 bits */
};

#define F(m, bit, bits) IMC_FIELD(struct rec, m, bit, bits)
static const struct imc_field rec_fields[] = {
	F(a, 0, 3), F(b, 3, 20), F(c, 23, 1),
	F(d, 24, 64),
	IMC_FIELD_RAW(struct rec, raw, 88),
	F(e, 112, 12), F(f, 124, 4),
};
/* The same record with b left out: its bits belong to no field. */
static const struct imc_field gap_fields[] = {
	F(a, 0, 3), F(c, 23, 1),
};
#undef F

static const struct rec sample = {
	.a = 5, .b = 0xabcde, .c = true, .d = 0x0102030405060708ull,
	.raw = { 0xaa, 0xbb, 0xcc }, .e = 0xfed, .f = 9,
};

/* Worked by hand from the bit offsets above. */
static const uint8_t sample_bytes[16] = {
	0xb5, 0x79, 0xbd, 0x01, 0x02, 0x03, 0x04, 0x05,
	0x06, 0x07, 0x08, 0xaa, 0xbb, 0xcc, 0xfe, 0xd9,
};

static void test_fields_pack_unpack(void **state)
{
	uint8_t buf[16];
	struct rec r;

	(void)state;
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(imc_fields_pack(IMC_FIELDS(rec_fields), &sample, buf,
					 sizeof(buf), sizeof(buf)), 16);
	assert_memory_equal(buf, sample_bytes, sizeof(buf));
	memset(&r, 0, sizeof(r));
	assert_int_equal(imc_fields_unpack(IMC_FIELDS(rec_fields), &r, buf,
					   sizeof(buf), sizeof(buf)), 16);
	assert_int_equal(r.a, sample.a);
	assert_int_equal(r.b, sample.b);
	assert_true(r.c);
	assert_true(r.d == sample.d);
	assert_memory_equal(r.raw, sample.raw, sizeof(r.raw));
	assert_int_equal(r.e, sample.e);
	assert_int_equal(r.f, sample.f);
}

static void test_fields_too_wide(void **state)
{
	uint8_t buf[16], before[16];
	struct rec r = sample;

	(void)state;
	memset(buf, 0x5a, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	r.b = 0x100000;         /* 21 bits */
	assert_false(imc_fields_fit(IMC_FIELDS(rec_fields), &r));
	assert_int_equal(imc_fields_pack(IMC_FIELDS(rec_fields), &r, buf,
					 sizeof(buf), sizeof(buf)), -EINVAL);
	assert_memory_equal(buf, before, sizeof(buf));
	r = sample;
	r.e = 0x1000;           /* 13 bits */
	assert_int_equal(imc_fields_pack(IMC_FIELDS(rec_fields), &r, buf,
					 sizeof(buf), sizeof(buf)), -EINVAL);
	r = sample;
	r.d = ~0ull;            /* a full-width field never overflows */
	assert_true(imc_fields_fit(IMC_FIELDS(rec_fields), &r));
}

static void test_fields_short(void **state)
{
	uint8_t buf[16];
	struct rec r;

	(void)state;
	assert_int_equal(imc_fields_pack(IMC_FIELDS(rec_fields), &sample, buf,
					 15, sizeof(buf)), -ENOSPC);
	assert_int_equal(imc_fields_unpack(IMC_FIELDS(rec_fields), &r,
					   sample_bytes, 15, 16), -EMSGSIZE);
}

static void test_fields_gap_kept(void **state)
{
	uint8_t buf[16];
	struct rec r;

	(void)state;
	memcpy(buf, sample_bytes, sizeof(buf));
	memset(&r, 0, sizeof(r));       /* a = 0, c = false */
	imc_fields_put(IMC_FIELDS(gap_fields), &r, buf);
	/* a's 3 bits and c's bit cleared, b's 20 bits as they were. */
	assert_int_equal(buf[0], sample_bytes[0] & 0x1f);
	assert_int_equal(buf[1], sample_bytes[1]);
	assert_int_equal(buf[2], sample_bytes[2] & 0xfe);
	assert_memory_equal(buf + 3, sample_bytes + 3, 13);
	r.b = 7;
	imc_fields_get(IMC_FIELDS(gap_fields), &r, sample_bytes);
	assert_int_equal(r.b, 7);       /* no field, so left alone */
	assert_int_equal(r.a, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_pack_unpack),
		cmocka_unit_test(test_fields_too_wide),
		cmocka_unit_test(test_fields_short),
		cmocka_unit_test(test_fields_gap_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
