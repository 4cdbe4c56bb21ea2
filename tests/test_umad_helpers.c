/* The pure parts of the libibumad transport: method masks of the two
 * modes, which sends stay outstanding in the kernel, address decoding, and
 * the errors of imc_umad_open() that need no port. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/rmpp.h"
#include "ibmcast/umad.h"
#include "umad/umad_int.h"

static bool bit(const uint32_t m[4], unsigned method)
{
	return m[method / 32] >> (method % 32) & 1;
}

static void test_method_masks(void **state)
{
	uint32_t m[4];
	unsigned n = 0;

	/* Client: Report only (IBA 13.4.6.4); answers come by TID. */
	imc_umad_method_mask(IMC_UMAD_CLIENT, m);
	assert_int_equal(m[0], 1u << 6);
	assert_int_equal(m[1] | m[2] | m[3], 0);

	/* Server: the SA request methods of IBA 15.2.2. */
	imc_umad_method_mask(IMC_UMAD_SERVER, m);
	assert_true(bit(m, 0x01));
	assert_true(bit(m, 0x02));
	assert_true(bit(m, 0x12));
	assert_true(bit(m, 0x13));
	assert_true(bit(m, 0x14));
	assert_true(bit(m, 0x15));
	for (unsigned i = 0; i < 128; i++)
		n += bit(m, i);
	assert_int_equal(n, 6);
	assert_int_equal(m[0], 0x3c0006u);
	assert_int_equal(m[1] | m[2] | m[3], 0);
	assert_false(bit(m, UMAD_METHOD_REPORT));
}

static void test_send_timeout(void **state)
{
	uint8_t mad[IMC_MAD_SIZE] = { 1, UMAD_CLASS_SUBN_ADM, 2, 0 };
	struct imc_rmpp_hdr r = { 0 };

	/* A request waits for its answer in the kernel. */
	mad[3] = UMAD_METHOD_SET;
	assert_true(imc_umad_send_timeout(mad, sizeof(mad)) >= 1000);
	mad[3] = UMAD_SA_METHOD_GET_TABLE;
	assert_true(imc_umad_send_timeout(mad, sizeof(mad)) >= 1000);
	mad[3] = UMAD_METHOD_REPORT;
	assert_true(imc_umad_send_timeout(mad, sizeof(mad)) >= 1000);
	/* Answers do not. */
	mad[3] = UMAD_METHOD_GET_RESP;
	assert_int_equal(imc_umad_send_timeout(mad, sizeof(mad)), 0);
	mad[3] = UMAD_METHOD_REPORT_RESP;
	assert_int_equal(imc_umad_send_timeout(mad, sizeof(mad)), 0);
	/* An RMPP ACK has a request's method but no answer. */
	mad[3] = UMAD_SA_METHOD_GET_TABLE;
	r.version = 1;
	r.type = IMC_RMPP_TYPE_ACK;
	r.flags = IMC_RMPP_FLAG_ACTIVE;
	r.resp_time = IMC_RMPP_NO_RESP_TIME;
	assert_int_equal(imc_rmpp_hdr_pack(&r, mad + IMC_MAD_HDR_SIZE,
					   IMC_RMPP_HDR_SIZE), IMC_RMPP_HDR_SIZE);
	assert_int_equal(imc_umad_send_timeout(mad, sizeof(mad)), 0);
	r.type = IMC_RMPP_TYPE_ABORT;
	imc_rmpp_hdr_pack(&r, mad + IMC_MAD_HDR_SIZE, IMC_RMPP_HDR_SIZE);
	assert_int_equal(imc_umad_send_timeout(mad, sizeof(mad)), 0);
	/* ... but RMPP DATA of a request does. */
	r.type = IMC_RMPP_TYPE_DATA;
	imc_rmpp_hdr_pack(&r, mad + IMC_MAD_HDR_SIZE, IMC_RMPP_HDR_SIZE);
	assert_true(imc_umad_send_timeout(mad, sizeof(mad)) >= 1000);
	/* Too short to tell: nothing outstanding. */
	assert_int_equal(imc_umad_send_timeout(mad, 30), 0);
}

static void test_addr_from_raw(void **state)
{
	struct imc_umad_addr a;

	imc_umad_addr_from_raw(&a, htons(0x1234), htonl(0xff000001),
			       htonl(0x80010000), 3, 7);
	assert_int_equal(a.lid, 0x1234);
	assert_int_equal(a.qpn, 1); /* 24 bits */
	assert_int_equal(a.qkey, 0x80010000u);
	assert_int_equal(a.sl, 3);
	assert_int_equal(a.pkey_index, 7);
}

static void test_open_errors(void **state)
{
	struct imc_umad_config cfg = { .mode = IMC_UMAD_CLIENT };
	struct imc_loop *vl;
	struct imc_umad *u = NULL;

	assert_int_equal(imc_loop_create_virtual(0, &vl), 0);
	/* The transport needs real time and fds. */
	assert_int_equal(imc_umad_open(vl, &cfg, &u), -EINVAL);
	assert_int_equal(imc_umad_open(NULL, &cfg, &u), -EINVAL);
	cfg.mode = (enum imc_umad_mode)7;
	assert_int_equal(imc_umad_open(vl, &cfg, &u), -EINVAL);
	assert_null(u);
	assert_int_equal(imc_loop_destroy(vl), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_masks),
		cmocka_unit_test(test_send_timeout),
		cmocka_unit_test(test_addr_from_raw),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
