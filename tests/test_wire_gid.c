/* GID text form, accessors, ordering, hashing and MGID rules. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"

static struct imc_gid gid_hex(const char *hex)
{
	struct imc_gid g;
	unsigned i, v;

	assert_int_equal(strlen(hex), 32);
	for (i = 0; i < 16; i++) {
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		g.raw[i] = (uint8_t)v;
	}
	return g;
}

struct text_case {
	const char *in;
	const char *raw;       /* 32 hex digits */
	const char *canonical; /* what format() must print */
};

static const struct text_case text_cases[] = {
	/* A port GID as `ibstat`/saquery show it, full and compressed. */
	{ "fe80:0000:0000:0000:0002:c903:000a:0b0c",
	  "fe800000000000000002c903000a0b0c", "fe80::2:c903:a:b0c" },
	{ "FE80::2:C903:A:B0C",
	  "fe800000000000000002c903000a0b0c", "fe80::2:c903:a:b0c" },
	/* The MGID OpenSM 3.3.23 assigned in tests/vectors/opensm-mcmr.txt. */
	{ "ff12:a01b:fe80::", "ff12a01bfe8000000000000000000000",
	  "ff12:a01b:fe80::" },
	{ "ff12:401b:ffff::ffff:ffff", "ff12401bffff000000000000ffffffff",
	  "ff12:401b:ffff::ffff:ffff" },
	{ "::", "00000000000000000000000000000000", "::" },
	{ "::1", "00000000000000000000000000000001", "::1" },
	{ "0:0:0:0:0:0:0:0", "00000000000000000000000000000000", "::" },
	{ "1:2:3:4:5:6:7:8", "00010002000300040005000600070008",
	  "1:2:3:4:5:6:7:8" },
	/* RFC 5952 4.2.3: the longest zero run is compressed... */
	{ "1:0:0:1:0:0:0:1", "00010000000000010000000000000001", "1:0:0:1::1" },
	/* ...the first one on a tie... */
	{ "1:0:0:2:0:0:3:4", "00010000000000020000000000030004", "1::2:0:0:3:4" },
	/* ...and never a single zero group (4.2.2). */
	{ "1:0:2:3:4:5:6:7", "00010000000200030004000500060007",
	  "1:0:2:3:4:5:6:7" },
	{ "1::", "00010000000000000000000000000000", "1::" },
	{ "ff02::1:ff00:1234", "ff0200000000000000000001ff001234",
	  "ff02::1:ff00:1234" },
	/* Leading zeros in a group and a mixed-case group. */
	{ "00ff:0Ab::", "00ff00ab000000000000000000000000", "ff:ab::" },
};

static void test_parse_format(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(text_cases); i++) {
		const struct text_case *c = &text_cases[i];
		struct imc_gid g, want = gid_hex(c->raw), back;
		char buf[IMC_GID_STRLEN];
		int n;

		assert_int_equal(imc_gid_parse(c->in, &g), 0);
		assert_memory_equal(g.raw, want.raw, 16);
		n = imc_gid_format(&g, buf);
		assert_string_equal(buf, c->canonical);
		assert_int_equal(n, (int)strlen(c->canonical));
		assert_int_equal(imc_gid_parse(buf, &back), 0);
		assert_true(imc_gid_equal(&g, &back));
	}
}

/* inet_ntop would print these as dotted quads; format() must not, so that
 * parse() (which refuses dotted quads) reads every output back. */
static void test_format_never_dotted(void **state)
{
	static const struct {
		const char *raw, *text;
	} cases[] = {
		{ "00000000000000000000ffff01020304", "::ffff:102:304" },
		{ "00000000000000000000000001020304", "::102:304" },
		{ "00000000000000000000ffff00000005", "::ffff:0:5" },
		{ "000000000000000000000000ff000000", "::ff00:0" },
		{ "0000000000000000000000000000ffff", "::ffff" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		struct imc_gid g = gid_hex(cases[i].raw), back;
		char buf[IMC_GID_STRLEN];

		imc_gid_format(&g, buf);
		assert_string_equal(buf, cases[i].text);
		assert_null(strchr(buf, '.'));
		assert_int_equal(imc_gid_parse(buf, &back), 0);
		assert_memory_equal(back.raw, g.raw, 16);
	}
}

static void test_parse_rejects(void **state)
{
	static const char *bad[] = {
		"",
		" ::1",
		"::1 ",
		"::1\n",
		"\t::1",
		"fe80::1%ib0",
		"[::1]",
		"fe80::/64",
		"::ffff:1.2.3.4",
		"::1.2.3.4",
		"1.2.3.4",
		"1:2:3:4:5:6:7:8:9",
		"1:2:3:4:5:6:7",
		"12345::",
		"g::",
		"1::2::3",
		":1::",
		"1:::2",
		":",
		":::",
		"0x1::",
		"fe80:0000:0000:0000:0002:c903:000a:0b0c0",
		"fe80:0000:0000:0000:0002:c903:000a:0b0c:0000",
		"-1::",
		"ff12 :401b::",
	};
	struct imc_gid g, untouched;
	size_t i;

	(void)state;
	memset(untouched.raw, 0xA5, sizeof(untouched.raw));
	for (i = 0; i < IMC_ARRAY_SIZE(bad); i++) {
		g = untouched;
		if (imc_gid_parse(bad[i], &g) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_memory_equal(g.raw, untouched.raw, 16);
	}
	assert_int_equal(imc_gid_parse(NULL, &g), -EINVAL);
	assert_int_equal(imc_gid_parse("::1", NULL), -EINVAL);
}

static void test_parse_long_input(void **state)
{
	char s[200];
	struct imc_gid g;

	(void)state;
	/* Far longer than any GID text. */
	memset(s, '0', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	assert_int_equal(imc_gid_parse(s, &g), -EINVAL);
	/* 39 characters is the longest valid text. */
	assert_int_equal(imc_gid_parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
				       &g), 0);
	assert_int_equal(imc_gid_guid(&g), UINT64_MAX);
}

static void test_halves(void **state)
{
	struct imc_gid g, want = gid_hex("fe800000000000000002c903000a0b0c");

	(void)state;
	imc_gid_set(&g, 0xfe80000000000000ULL, 0x0002c903000a0b0cULL);
	assert_memory_equal(g.raw, want.raw, 16);
	assert_int_equal(imc_gid_prefix(&g), 0xfe80000000000000ULL);
	assert_int_equal(imc_gid_guid(&g), 0x0002c903000a0b0cULL);
	assert_false(imc_gid_is_zero(&g));
	imc_gid_set(&g, 0, 0);
	assert_true(imc_gid_is_zero(&g));
	imc_gid_set(&g, 0, 1);
	assert_false(imc_gid_is_zero(&g));
	imc_gid_set(&g, 1ULL << 63, 0);
	assert_false(imc_gid_is_zero(&g));
	assert_int_equal(g.raw[0], 0x80);
}

static void test_equal_cmp(void **state)
{
	struct imc_gid a = gid_hex("fe800000000000000002c903000a0b0c");
	struct imc_gid b = a, c = a, d = a;

	(void)state;
	assert_true(imc_gid_equal(&a, &b));
	assert_int_equal(imc_gid_cmp(&a, &b), 0);
	c.raw[15]++;                    /* last byte larger */
	assert_false(imc_gid_equal(&a, &c));
	assert_int_equal(imc_gid_cmp(&a, &c), -1);
	assert_int_equal(imc_gid_cmp(&c, &a), 1);
	d.raw[0] = 0x01;                /* first byte smaller wins over the rest */
	d.raw[15] = 0xFF;
	assert_int_equal(imc_gid_cmp(&d, &a), -1);
	/* Order is that of the 128-bit numbers: prefix first, then GUID. */
	imc_gid_set(&a, 1, UINT64_MAX);
	imc_gid_set(&b, 2, 0);
	assert_int_equal(imc_gid_cmp(&a, &b), -1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* n keys into 256 buckets by the low byte and by the high byte: 16 per
 * bucket expected with n = 4096; an identity-like or weak mix of
 * sequential keys leaves buckets empty and piles others. */
static void assert_spread(const uint64_t *h, size_t n)
{
	unsigned lo[256] = { 0 }, hi[256] = { 0 }, maxlo = 0, maxhi = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		lo[h[i] & 0xFF]++;
		hi[h[i] >> 56]++;
	}
	for (i = 0; i < 256; i++) {
		maxlo = lo[i] > maxlo ? lo[i] : maxlo;
		maxhi = hi[i] > maxhi ? hi[i] : maxhi;
	}
	if (maxlo > 40 || maxhi > 40)
		fail_msg("bucket piles: low byte %u, high byte %u", maxlo, maxhi);
}

static void test_hash(void **state)
{
	enum { N = 4096 };
	uint64_t *h = calloc(N, sizeof(*h));
	struct imc_gid g, g2;
	size_t i;

	(void)state;
	assert_non_null(h);
	/* Sequential GUIDs on one subnet: no collisions (the hash is a
	 * bijection of the GUID for a fixed prefix), low and high bits both
	 * usable as bucket index. */
	for (i = 0; i < N; i++) {
		imc_gid_set(&g, 0xfe80000000000000ULL, 0x0002c90300000000ULL + i);
		h[i] = imc_gid_hash(&g, 0);
	}
	assert_spread(h, N);
	qsort(h, N, sizeof(*h), cmp_u64);
	for (i = 1; i < N; i++)
		assert_true(h[i] != h[i - 1]);

	/* Broadcast MGIDs of 4096 partitions differ only in bytes 4-5 (the
	 * P_Key, in the prefix half). */
	for (i = 0; i < N; i++) {
		g = gid_hex("ff12401b8000000000000000ffffffff");
		g.raw[4] = (uint8_t)(0x80 | (i >> 8));
		g.raw[5] = (uint8_t)i;
		h[i] = imc_gid_hash(&g, 0);
	}
	assert_spread(h, N);
	qsort(h, N, sizeof(*h), cmp_u64);
	for (i = 1; i < N; i++)
		assert_true(h[i] != h[i - 1]);
	free(h);

	/* Equal GIDs hash equal; seed and either half change the value. */
	g = gid_hex("fe800000000000000002c903000a0b0c");
	g2 = g;
	assert_true(imc_gid_hash(&g, 7) == imc_gid_hash(&g2, 7));
	assert_true(imc_gid_hash(&g, 0) != imc_gid_hash(&g, 1));
	g2.raw[0] ^= 1;
	assert_true(imc_gid_hash(&g, 0) != imc_gid_hash(&g2, 0));
	g2 = g;
	g2.raw[15] ^= 1;
	assert_true(imc_gid_hash(&g, 0) != imc_gid_hash(&g2, 0));
	/* Swapping the halves must not give the same value. */
	imc_gid_set(&g, 1, 2);
	imc_gid_set(&g2, 2, 1);
	assert_true(imc_gid_hash(&g, 0) != imc_gid_hash(&g2, 0));
}

static void test_mgid_fields(void **state)
{
	struct imc_gid g;

	(void)state;
	g = gid_hex("ff12401bffff000000000000ffffffff");
	assert_true(imc_gid_is_multicast(&g));
	assert_int_equal(imc_mgid_flags(&g), 1);
	assert_int_equal(imc_mgid_scope(&g), 2);
	assert_int_equal(imc_mgid_sigword(&g), 0x401B);
	assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_IPV4);

	g = gid_hex("ff15601b8001000000000001ff001234");
	assert_int_equal(imc_mgid_scope(&g), 5);
	assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_IPV6);

	g = gid_hex("ff1ea01bfe8000000000000000000007");
	assert_int_equal(imc_mgid_scope(&g), 0xE);
	assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_SA);

	/* ff02::1, the all-nodes group: well-known, no signature. */
	g = gid_hex("ff020000000000000000000000000001");
	assert_int_equal(imc_mgid_flags(&g), 0);
	assert_int_equal(imc_mgid_scope(&g), 2);
	assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_OTHER);

	/* Neither OpenSM nor RFC 4391 gives 0x4001 a meaning. */
	g = gid_hex("ff124001ffff000000000000ffffffff");
	assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_OTHER);

	/* A port GID carrying 401b in bytes 2-3 is still not multicast. */
	g = gid_hex("fe12401bffff000000000000ffffffff");
	assert_false(imc_gid_is_multicast(&g));
	assert_int_equal(imc_mgid_signature(&g), IMC_MGID_SIG_NONE);
}

static void test_scope_valid(void **state)
{
	unsigned s;

	(void)state;
	for (s = 0; s < 32; s++)
		assert_int_equal(imc_mgid_scope_valid(s),
				 s == 2 || s == 5 || s == 8 || s == 0xE);
}

static void test_mgid_check(void **state)
{
	static const char *good[] = {
		"ff12401bffff000000000000ffffffff",
		"ff020000000000000000000000000001",
		"ff15a01bfe8000000000000000000001",
		"ff18601b8001000000000001ff001234",
		"ff1e1234000000000000000000000000",
		"ff0e0000000000000000000000000101",
		/* Groups OpenSM created, from tests/vectors/opensm-mcmr.txt. */
		"ff121234003d00000000000000000000",
	};
	struct imc_gid g;
	unsigned bit, s;
	size_t i;

	(void)state;
	for (i = 0; i < IMC_ARRAY_SIZE(good); i++) {
		g = gid_hex(good[i]);
		if (imc_mgid_check(&g) != 0)
			fail_msg("rejected %s", good[i]);
		assert_int_equal(imc_mgid_check_create(&g), 0);
	}

	/* Each reserved flag bit on its own, with T clear and set. */
	for (bit = 0x2; bit <= 0x8; bit <<= 1) {
		g = gid_hex("ff12a01cfe8000000000000012345678");
		g.raw[1] = (uint8_t)(bit << 4 | 0x2);
		assert_int_equal(imc_mgid_check(&g), -EPROTO);
		assert_int_equal(imc_mgid_check_create(&g), -EPROTO);
		g.raw[1] |= 0x10;
		assert_int_equal(imc_mgid_check(&g), -EPROTO);
		assert_int_equal(imc_mgid_check_create(&g), -EPROTO);
	}

	/* Every scope: four valid, the rest -EDOM (OpenSM accepts them). */
	for (s = 0; s < 16; s++) {
		g = gid_hex("ff10a01cfe8000000000000012345678");
		g.raw[1] |= (uint8_t)s;
		assert_int_equal(imc_mgid_check(&g),
				 imc_mgid_scope_valid(s) ? 0 : -EDOM);
		assert_int_equal(imc_mgid_check_create(&g), 0);
	}

	/* Not 0xFF at the start. */
	for (i = 0; i < 0xFF; i++) {
		g = gid_hex("ff12401bffff000000000000ffffffff");
		g.raw[0] = (uint8_t)i;
		assert_int_equal(imc_mgid_check(&g), -EINVAL);
		assert_int_equal(imc_mgid_check_create(&g), -EINVAL);
	}
	assert_int_equal(imc_mgid_check(NULL), -EINVAL);
	assert_int_equal(imc_mgid_check_create(NULL), -EINVAL);

	/* 0xA01B with link-local scope: the SA's own space (OpenSM ERR 1B24,
	 * osmtest "BAD MGID=0xFF12A01B"). Other scopes are fine. */
	g = gid_hex("ff12a01bfe8000000000000012345678");
	assert_int_equal(imc_mgid_check(&g), -EPERM);
	assert_int_equal(imc_mgid_check_create(&g), -EPERM);
	g.raw[1] = 0x02;
	assert_int_equal(imc_mgid_check(&g), -EPERM);
	g.raw[1] = 0x15;
	assert_int_equal(imc_mgid_check(&g), 0);
	/* Flags are judged before the signature, as OpenSM does. */
	g.raw[1] = 0x32;
	assert_int_equal(imc_mgid_check(&g), -EPROTO);
	assert_int_equal(imc_mgid_check_create(&g), -EPROTO);
}

/* The create check skips everything after the prefix for IPoIB-signed
 * MGIDs, as OpenSM does; the full check does not. */
static void test_mgid_check_create_ipoib(void **state)
{
	struct imc_gid g;
	unsigned s;

	(void)state;
	g = gid_hex("ff32401bffff000000000000ffffffff");
	assert_int_equal(imc_mgid_check_create(&g), 0);
	assert_int_equal(imc_mgid_check(&g), -EPROTO);
	g = gid_hex("fff0601bffff000000000001ff001234");
	assert_int_equal(imc_mgid_check_create(&g), 0);
	assert_int_equal(imc_mgid_check(&g), -EPROTO);
	for (s = 0; s < 16; s++) {
		g = gid_hex("ff10401bffff000000000000ffffffff");
		g.raw[1] |= (uint8_t)s;
		assert_int_equal(imc_mgid_check_create(&g), 0);
	}
	/* Still must be multicast. */
	g = gid_hex("fe12401bffff000000000000ffffffff");
	assert_int_equal(imc_mgid_check_create(&g), -EINVAL);
}

/* Every MGID the full check accepts, the create check accepts too. */
static void test_mgid_check_implies_create(void **state)
{
	struct imc_gid g;
	unsigned b1, sig;

	(void)state;
	for (b1 = 0; b1 < 256; b1++) {
		for (sig = 0; sig < 4; sig++) {
			static const uint16_t sigs[] = { 0x401B, 0x601B, 0xA01B, 0x4001 };

			g = gid_hex("ff000000fe8000000000000000000001");
			g.raw[1] = (uint8_t)b1;
			g.raw[2] = (uint8_t)(sigs[sig] >> 8);
			g.raw[3] = (uint8_t)sigs[sig];
			if (imc_mgid_check(&g) == 0)
				assert_int_equal(imc_mgid_check_create(&g), 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_format_never_dotted),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_parse_long_input),
		cmocka_unit_test(test_halves),
		cmocka_unit_test(test_equal_cmp),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_mgid_fields),
		cmocka_unit_test(test_scope_valid),
		cmocka_unit_test(test_mgid_check),
		cmocka_unit_test(test_mgid_check_create_ipoib),
		cmocka_unit_test(test_mgid_check_implies_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
