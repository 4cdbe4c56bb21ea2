/* The MCMemberRecord table of ibmcast/mcmr.h: rate encodings and their
 * order, the field table against the wire layout, every matching rule
 * (equality, P_Key, selectors over MTU, rate and lifetime, member fields
 * ignored), the text and JSON printers byte for byte, and a create
 * filled by imc_mcmr_fill_create() accepted by the SA engine. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ibmcast/mcmr.h"
#include "test_sa_fixture.h"

enum { GT = 0, LT = 1, EQ = 2, BEST = 3 };

static void test_rates(void **state)
{
	(void)state;
	assert_false(imc_rate_valid(0));
	assert_false(imc_rate_valid(1));
	assert_false(imc_rate_valid(23));
	assert_int_equal(imc_rate_mbps(2), 2500);
	assert_int_equal(imc_rate_mbps(3), 10000);
	assert_int_equal(imc_rate_mbps(5), 5000);
	assert_int_equal(imc_rate_mbps(7), 40000);
	assert_int_equal(imc_rate_mbps(11), 14000);
	assert_int_equal(imc_rate_mbps(22), 600000);
	assert_int_equal(imc_rate_mbps(23), 0);
	/* Codes are not in bandwidth order: 4 (30) > 5 (5) > 2 (2.5). */
	assert_int_equal(imc_rate_cmp(4, 5), 1);
	assert_int_equal(imc_rate_cmp(5, 3), -1);
	assert_int_equal(imc_rate_cmp(7, 7), 0);
	assert_int_equal(imc_rate_cmp(0, 2), -1);
	assert_int_equal(imc_rate_step(3, 1), 11);    /* 10 -> 14 */
	assert_int_equal(imc_rate_step(3, -1), 5);    /* 10 -> 5 */
	assert_int_equal(imc_rate_step(2, -1), 0);
	assert_int_equal(imc_rate_step(22, 1), 0);
	assert_int_equal(imc_rate_step(21, 1), 22);
	/* Every defined code has a distinct bandwidth. */
	for (unsigned a = IMC_RATE_MIN; a <= IMC_RATE_MAX; a++)
		for (unsigned b = a + 1; b <= IMC_RATE_MAX; b++)
			assert_int_not_equal(imc_rate_mbps(a),
					     imc_rate_mbps(b));
}

/* Each field's bits set in turn: packed, only its bits change, and its
 * ComponentMask bit is its own (IBA 15.2.5.17: bits in field order). */
static void test_table(void **state)
{
	uint64_t seen = 0;

	(void)state;
	assert_null(imc_mcmr_field_at(18));
	for (size_t i = 0; i < 18; i++) {
		const struct imc_mcmr_field *f = imc_mcmr_field_at(i);
		struct imc_mcmr r;

		assert_int_equal(f->comp, 1ull << i);
		seen |= f->comp;
		assert_ptr_equal(imc_mcmr_field_find(f->name, false), f);
		if (f->key)
			assert_ptr_equal(imc_mcmr_field_find(f->key, true), f);
		memset(&r, 0, sizeof(r));
		if (f->kind == IMC_MCMR_F_GID) {
			assert_int_equal(imc_mcmr_field_set(&r, f, 1), -EINVAL);
			continue;
		}
		assert_int_equal(imc_mcmr_field_set(&r, f, f->max + 1),
				 -ERANGE);
		assert_int_equal(imc_mcmr_field_set(&r, f, f->max), 0);
		assert_true(imc_mcmr_field_get(&r, f) == f->max);
		/* The record packs: the maximum fits the wire bits. */
		{
			uint8_t b[IMC_MCMR_SIZE];

			assert_int_equal(imc_mcmr_pack(&r, b, sizeof(b)),
					 IMC_MCMR_SIZE);
		}
	}
	assert_true(seen == (1ull << 18) - 1);
	assert_null(imc_mcmr_field_find("nope", false));
	assert_null(imc_mcmr_field_find("flow_label", true));
	assert_ptr_equal(imc_mcmr_field_find("flow", true),
			 imc_mcmr_field_find("flow_label", false));
}

static struct imc_mcmr group(void)
{
	struct imc_mcmr g;

	memset(&g, 0, sizeof(g));
	g.mgid = fx_mgid("ff12:401b::1");
	g.qkey = 0x11;
	g.mlid = 0xc001;
	g.mtu = 4;
	g.pkey = 0xffff;
	g.rate = 3;          /* 10 Gb/s */
	g.life = 10;
	g.sl = 1;
	g.flow_label = 7;
	g.hop_limit = 2;
	g.scope = 2;
	g.mtu_sel = g.rate_sel = g.life_sel = EQ;
	return g;
}

static void test_match_eq(void **state)
{
	struct imc_mcmr g = group(), r = group();

	(void)state;
	assert_true(imc_mcmr_match(&g, &r, ~0ull));
	assert_true(imc_mcmr_match(&g, &r, 0));
	r.qkey = 0x12;
	assert_false(imc_mcmr_match(&g, &r, CM(QKEY)));
	assert_true(imc_mcmr_match(&g, &r, ~CM(QKEY)));
	r = group();
	r.mgid = fx_mgid("ff12:401b::2");
	assert_false(imc_mcmr_match(&g, &r, CM(MGID)));
	r = group();
	r.sl = 2;
	assert_false(imc_mcmr_match(&g, &r, CM(SL)));
	r = group();
	r.scope = 5;
	assert_false(imc_mcmr_match(&g, &r, CM(SCOPE)));
	/* A member's fields are not the group's. */
	r = group();
	r.port_gid = fx_gid(9);
	r.join_state = 4;
	r.proxy_join = true;
	assert_true(imc_mcmr_match(&g, &r, ~0ull));
}

static void test_match_pkey(void **state)
{
	struct imc_mcmr g = group(), r = group();

	(void)state;
	r.pkey = 0x7fff;        /* limited asks full: matches */
	assert_true(imc_mcmr_match(&g, &r, CM(PKEY)));
	g.pkey = 0x7fff;        /* both limited: not */
	assert_false(imc_mcmr_match(&g, &r, CM(PKEY)));
	g.pkey = 0x8001;
	r.pkey = 0x8002;        /* another partition */
	assert_false(imc_mcmr_match(&g, &r, CM(PKEY)));
}

static void test_match_selectors(void **state)
{
	struct imc_mcmr g = group(), r = group();

	(void)state;
	/* MTU 4 against asks of 3, 4, 5 with each selector. */
	r.mtu = 3;
	r.mtu_sel = GT;
	assert_true(imc_mcmr_match(&g, &r, CM(MTU_SEL) | CM(MTU)));
	r.mtu_sel = LT;
	assert_false(imc_mcmr_match(&g, &r, CM(MTU_SEL) | CM(MTU)));
	r.mtu_sel = EQ;
	assert_false(imc_mcmr_match(&g, &r, CM(MTU_SEL) | CM(MTU)));
	r.mtu_sel = BEST;
	assert_true(imc_mcmr_match(&g, &r, CM(MTU_SEL) | CM(MTU)));
	/* Without its selector, the value compares equal. */
	assert_false(imc_mcmr_match(&g, &r, CM(MTU)));
	/* The selector applies even without the value's own bit. */
	r.mtu_sel = LT;
	assert_false(imc_mcmr_match(&g, &r, CM(MTU_SEL)));

	/* Rate by bandwidth: the group's 10 Gb/s (3) is greater than
	 * 5 Gb/s (5) though 3 < 5 as codes. */
	r = group();
	r.rate = 5;
	r.rate_sel = GT;
	assert_true(imc_mcmr_match(&g, &r, CM(RATE_SEL) | CM(RATE)));
	r.rate_sel = LT;
	assert_false(imc_mcmr_match(&g, &r, CM(RATE_SEL) | CM(RATE)));
	r.rate = 4;             /* 30 Gb/s */
	assert_true(imc_mcmr_match(&g, &r, CM(RATE_SEL) | CM(RATE)));

	/* Lifetime in its own order. */
	r = group();
	r.life = 11;
	r.life_sel = LT;
	assert_true(imc_mcmr_match(&g, &r, CM(LIFE_TIME_SEL)));
	r.life_sel = GT;
	assert_false(imc_mcmr_match(&g, &r, CM(LIFE_TIME_SEL)));
	assert_false(imc_mcmr_match(&g, &r, CM(LIFE_TIME)));
	assert_true(imc_mcmr_match(&g, &r, CM(MTU)));
}

static char *print(const struct imc_mcmr *r, uint64_t mask, bool json)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	struct imc_json j;

	assert_non_null(f);
	if (json) {
		imc_json_init(&j, f, 0, 0);
		assert_int_equal(imc_mcmr_print_json(&j, r, mask), 0);
		assert_int_equal(imc_json_finish(&j), 0);
	} else {
		assert_int_equal(imc_mcmr_print_text(f, r, mask), 0);
	}
	assert_int_equal(fclose(f), 0);
	return s;
}

static void test_print(void **state)
{
	struct imc_mcmr r = group();
	char *s;

	(void)state;
	r.port_gid = fx_gid(3);
	r.join_state = 1;
	r.proxy_join = true;
	s = print(&r, ~0ull, false);
	assert_string_equal(s, " mgid=ff12:401b::1 port_gid=fe80::10:3"
			       " qkey=0x00000011 mlid=0xc001 mtu_sel=2 mtu=4"
			       " tclass=0 pkey=0xffff rate_sel=2 rate=3"
			       " life_sel=2 life=10 sl=1 flow_label=0x00007"
			       " hop_limit=2 scope=2 join_state=0x1"
			       " proxy_join=1");
	free(s);
	s = print(&r, CM(QKEY) | CM(PKEY), false);
	assert_string_equal(s, " qkey=0x00000011 pkey=0xffff");
	free(s);
	s = print(&r, CM(MGID) | CM(QKEY) | CM(PROXY_JOIN), true);
	assert_string_equal(s, "{\"mgid\":\"ff12:401b::1\",\"qkey\":17,"
			       "\"proxy_join\":true}");
	free(s);
}

/* The listed keys come in the order given, typed as the record printer
 * types them; a name that is no field is refused. */
static void test_print_keys(void **state)
{
	static const char *const keys[] = { "scope", "mgid", "proxy_join",
					    "qkey", NULL };
	static const char *const bad[] = { "qkey", "nope", NULL };
	struct imc_mcmr r = group();
	struct imc_json j;
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	(void)state;
	assert_non_null(f);
	imc_json_init(&j, f, 0, 0);
	assert_int_equal(imc_json_object_begin(&j), 0);
	assert_int_equal(imc_mcmr_print_json_keys(&j, &r, keys), 0);
	assert_int_equal(imc_mcmr_print_json_keys(&j, &r, bad), -EINVAL);
	assert_int_equal(imc_json_object_end(&j), 0);
	assert_int_equal(imc_json_finish(&j), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(s, "{\"scope\":2,\"mgid\":\"ff12:401b::1\","
			       "\"proxy_join\":false,\"qkey\":17,"
			       "\"qkey\":17}");
	free(s);
}

/* Exactly the fields of the mask are copied, as they are: a GID, a
 * boolean, a 20-bit field holding more than its bits. */
static void test_copy(void **state)
{
	struct imc_mcmr src = group(), dst;

	(void)state;
	src.port_gid = fx_gid(3);
	src.proxy_join = true;
	src.flow_label = 0x1fffff;
	memset(&dst, 0, sizeof(dst));
	imc_mcmr_copy(&dst, &src, CM(PORT_GID) | CM(PROXY_JOIN) |
					  CM(FLOW_LABEL) | CM(QKEY));
	assert_memory_equal(&dst.port_gid, &src.port_gid, sizeof(dst.port_gid));
	assert_true(dst.proxy_join);
	assert_int_equal(dst.flow_label, 0x1fffff);
	assert_int_equal(dst.qkey, src.qkey);
	assert_true(imc_gid_is_zero(&dst.mgid));
	assert_int_equal(dst.mlid, 0);
	assert_int_equal(dst.sl, 0);
	assert_int_equal(dst.mtu, 0);
}

/* The components fill_create sets are those the SA engine requires:
 * it answers the create with the group, and refuses the same request
 * missing any one of them (IBA 15.2.5.17 o15-0.2.3). */
static void test_fill_create(void **state)
{
	struct imc_mcmr_create c = { .qkey = 0x80010000, .sl = 0, .mtu = 4,
				     .rate = 3 };
	struct imc_mcmr r, got;
	struct imc_sa_mad a;
	uint64_t mask = 0;
	struct fx f;

	(void)state;
	c.mgid = fx_mgid("ff12:1234::5");
	c.port_gid = fx_gid(1);
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), 0);
	assert_true((mask & CREATE_MASK) == CREATE_MASK);
	assert_int_equal(r.pkey, 0xffff);
	assert_int_equal(r.join_state, 1);

	fx_init(&f);
	fx_start(&f);
	for (size_t i = 0; imc_mcmr_field_at(i); i++) {
		uint64_t bit = imc_mcmr_field_at(i)->comp;

		if (!(bit & IMC_MCMR_CREATE_COMPS) || bit == CM(MGID))
			continue;
		assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, mask & ~bit,
					&r, &a),
				 ST_INSUF_COMPS);
	}
	assert_int_equal(fx_req(&f, 1, UMAD_METHOD_SET, mask, &r, &a), 0);
	got = fx_rec(&a);
	assert_gid_eq(&got.mgid, "ff12:1234::5");
	assert_int_equal(got.qkey, 0x80010000);
	assert_int_equal(got.mtu, 4);
	assert_int_equal(got.rate, 3);
	assert_true(imc_mcmr_match(&got, &r, mask));
	fx_fini(&f);

	/* Values that do not fit, and a create by a non-member. */
	c.sl = 16;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), -EINVAL);
	c.sl = 0;
	c.rate = 1;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), -EINVAL);
	c.rate = 0;
	c.mtu = 6;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), -EINVAL);
	c.mtu = 0;
	c.join_state = 2;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), -EINVAL);
	c.join_state = 8;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), 0);
	assert_false(mask & (CM(MTU) | CM(RATE) | CM(HOP_LIMIT)));
	c.pkey = 0x8000;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), -EINVAL);
	c.pkey = 0;
	c.flow_label = 0x100000;
	assert_int_equal(imc_mcmr_fill_create(&r, &mask, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_match_eq),
		cmocka_unit_test(test_match_pkey),
		cmocka_unit_test(test_match_selectors),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_print_keys),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_fill_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
