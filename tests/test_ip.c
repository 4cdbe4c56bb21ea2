/* IP, UDP and ICMP headers (ibmcast/ip.h): checksums against known
 * values, built packets read back, echo answers in place. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ibmcast/ip.h"

static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
static const uint8_t a6[16] = { 0xfe, 0x80, [15] = 1 };
static const uint8_t b6[16] = { 0xfe, 0x80, [15] = 2 };

/* RFC 1071 2(B)'s example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
static void test_sum_rfc1071(void **state)
{
	static const uint8_t d[] = { 0x00, 0x01, 0xf2, 0x03,
				     0xf4, 0xf5, 0xf6, 0xf7 };
	uint32_t s = imc_inet_sum(0, d, sizeof(d));

	(void)state;
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	assert_int_equal(s, 0xddf2);
	assert_int_equal(imc_inet_csum(0, d, sizeof(d)), 0x220d);
	/* An odd length pads with zero. */
	assert_int_equal(imc_inet_csum(0, d, 3), (uint16_t)~0xf201);
}

/* A classic IPv4 header whose checksum is b861. */
static void test_ip4_header_csum(void **state)
{
	uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00,
			  0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01,
			  0xc0, 0xa8, 0x00, 0xc7 };

	(void)state;
	assert_int_equal(imc_inet_csum(0, h, 20), 0xb861);
	h[10] = 0xb8;
	h[11] = 0x61;
	assert_int_equal(imc_inet_csum(0, h, 20), 0);
}

static void test_echo_build_view(void **state)
{
	struct imc_ip_spec s4 = { 4, a4, b4, 7 }, s6 = { 6, a6, b6, 0 };
	struct imc_ip_view v;
	uint8_t p[256];
	uint16_t id, seq;
	bool req;
	int n;

	(void)state;
	n = imc_ip_echo_build(p, sizeof(p), &s4, false, 0x1b1b, 3, 56);
	assert_int_equal(n, 20 + 8 + 56);
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), 0);
	assert_int_equal(v.version, 4);
	assert_int_equal(v.proto, IMC_IPPROTO_ICMP);
	assert_int_equal(v.len, (size_t)n);
	assert_memory_equal(v.src, a4, 4);
	assert_memory_equal(v.dst, b4, 4);
	assert_int_equal(p[4] << 8 | p[5], 7);
	assert_int_equal(imc_inet_csum(0, p, 20), 0);
	assert_int_equal(imc_inet_csum(0, v.l4, v.l4_len), 0);
	assert_int_equal(v.l4[8], 8);
	assert_int_equal(v.l4[63], 63);
	assert_int_equal(imc_ip_echo_read(&v, &req, &id, &seq), 0);
	assert_true(req);
	assert_int_equal(id, 0x1b1b);
	assert_int_equal(seq, 3);

	n = imc_ip_echo_build(p, sizeof(p), &s6, true, 9, 65535, 0);
	assert_int_equal(n, 48);
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), 0);
	assert_int_equal(v.version, 6);
	assert_int_equal(v.proto, IMC_IPPROTO_ICMPV6);
	assert_int_equal(v.l4[0], 129);
	assert_int_equal(imc_inet_l4_csum(6, v.src, v.dst, 58, v.l4, 8), 0);
	assert_int_equal(imc_ip_echo_read(&v, &req, &id, &seq), 0);
	assert_false(req);
	assert_int_equal(seq, 65535);

	assert_int_equal(imc_ip_echo_build(p, 47, &s6, true, 9, 1, 0),
			 -ENOSPC);
	s6.version = 5;
	assert_int_equal(imc_ip_echo_build(p, sizeof(p), &s6, true, 9, 1, 0),
			 -EINVAL);
}

static void test_udp_build(void **state)
{
	struct imc_ip_spec s4 = { 4, a4, b4, 0 }, s6 = { 6, a6, b6, 0 };
	struct imc_ip_view v;
	uint8_t p[128];
	bool req;
	uint16_t id, seq;
	int n;

	(void)state;
	n = imc_ip_udp_build(p, sizeof(p), &s4, 4000, 4000, "imc!", 4);
	assert_int_equal(n, 32);
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), 0);
	assert_int_equal(v.proto, IMC_IPPROTO_UDP);
	assert_int_equal(v.l4[4] << 8 | v.l4[5], 12);
	assert_memory_equal(v.l4 + 8, "imc!", 4);
	assert_int_not_equal(v.l4[6] << 8 | v.l4[7], 0);
	assert_int_equal(imc_inet_l4_csum(4, v.src, v.dst, 17, v.l4, 12), 0);
	assert_int_equal(imc_ip_echo_read(&v, &req, &id, &seq), -ENOENT);

	n = imc_ip_udp_build(p, sizeof(p), &s6, 33000, 9, NULL, 20);
	assert_int_equal(n, 40 + 28);
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), 0);
	assert_int_equal(v.l4[27], 27);
	assert_int_equal(imc_inet_l4_csum(6, v.src, v.dst, 17, v.l4, 28), 0);
}

static void test_echo_answer(void **state)
{
	struct imc_ip_spec s4 = { 4, a4, b4, 0 }, s6 = { 6, a6, b6, 0 };
	struct imc_ip_view v;
	uint8_t p[128];
	uint16_t id, seq;
	bool req;
	int n;

	(void)state;
	n = imc_ip_echo_build(p, sizeof(p), &s4, false, 5, 6, 10);
	p[8] = 3;   /* arrived with its TTL spent */
	assert_int_equal(imc_ip_echo_answer(p, (size_t)n), 0);
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), 0);
	assert_memory_equal(v.src, b4, 4);
	assert_memory_equal(v.dst, a4, 4);
	assert_int_equal(p[8], IMC_IP_TTL);
	assert_int_equal(imc_inet_csum(0, p, 20), 0);
	assert_int_equal(imc_inet_csum(0, v.l4, v.l4_len), 0);
	assert_int_equal(imc_ip_echo_read(&v, &req, &id, &seq), 0);
	assert_false(req);
	assert_int_equal(id, 5);
	assert_int_equal(seq, 6);
	/* A reply is not answered. */
	assert_int_equal(imc_ip_echo_answer(p, (size_t)n), -EINVAL);

	n = imc_ip_echo_build(p, sizeof(p), &s6, false, 5, 6, 10);
	assert_int_equal(imc_ip_echo_answer(p, (size_t)n), 0);
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), 0);
	assert_memory_equal(v.src, b6, 16);
	assert_int_equal(v.l4[0], 129);
	assert_int_equal(imc_inet_l4_csum(6, v.src, v.dst, 58, v.l4,
					  v.l4_len), 0);
}

static void test_view_rejects(void **state)
{
	struct imc_ip_spec s4 = { 4, a4, b4, 0 };
	struct imc_ip_view v;
	uint8_t p[64] = { 0 };
	int n;

	(void)state;
	assert_int_equal(imc_ip_view(p, 0, &v), -EINVAL);
	n = imc_ip_echo_build(p, sizeof(p), &s4, false, 1, 1, 0);
	assert_int_equal(imc_ip_view(p, (size_t)n - 1, &v), -EINVAL);
	p[0] = 0x44;   /* IHL below 5 */
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), -EINVAL);
	p[0] = 0x55;
	assert_int_equal(imc_ip_view(p, (size_t)n, &v), -EINVAL);
	memset(p, 0, 40);
	p[0] = 0x60;
	p[5] = 1;      /* payload beyond the packet */
	assert_int_equal(imc_ip_view(p, 40, &v), -EINVAL);
	p[5] = 0;
	assert_int_equal(imc_ip_view(p, 40, &v), 0);
	assert_int_equal(v.l4_len, 0);
	assert_int_equal(imc_ip_view(p, 39, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum_rfc1071),
		cmocka_unit_test(test_ip4_header_csum),
		cmocka_unit_test(test_echo_build_view),
		cmocka_unit_test(test_udp_build),
		cmocka_unit_test(test_echo_answer),
		cmocka_unit_test(test_view_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
