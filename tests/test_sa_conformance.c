/* Statements of docs/conformance.md that neither the other SA engine
 * tests nor the side-by-side run against OpenSM assert: the methods of
 * ClassPortInfo and GetTraceTable (13.4.7), ProxyJoin as a query
 * component (15.2.5.17), the bounds on a table and on the subscriptions
 * (NO_RESOURCES, 15.2.1.1), requests from a port the directory does not
 * know, and the MLID component of a create. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_sa_fixture.h"
#include "util/bytes.h"

/* The answer to one MAD of method and attribute from lid: its status and
 * method, or -1 when nothing was sent. */
static int ask(struct fx *f, uint16_t lid, uint8_t method, uint16_t attr,
	       uint8_t *resp_method)
{
	uint8_t buf[IMC_MAD_SIZE];
	uint64_t tid = ++f->tid;
	const struct fx_sent *s;

	fx_mad(buf, method, attr, tid, 0, 0, NULL, 0);
	assert_int_equal(fx_recv(f, lid, buf, sizeof(buf)), 0);
	fx_run(f);
	s = fx_answer(f, lid, tid);
	if (!s)
		return -1;
	*resp_method = s->mad[3];
	return imc_get16(s->mad + 4);
}

/* 13.4.7: a method the attribute does not support is answered 0x000C
 * (ClassPortInfo has Get and Set; GetTraceTable is TraceRecord's). */
static void class_port_info_methods(void **state)
{
	struct fx f;
	uint8_t m = 0;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(ask(&f, 2, UMAD_SA_METHOD_DELETE,
			     UMAD_ATTR_CLASS_PORT_INFO, &m), 0x000c);
	assert_int_equal(m, UMAD_SA_METHOD_DELETE_RESP);
	assert_int_equal(ask(&f, 2, UMAD_SA_METHOD_GET_TABLE,
			     UMAD_ATTR_CLASS_PORT_INFO, &m), 0x000c);
	assert_int_equal(m, UMAD_SA_METHOD_GET_TABLE_RESP);
	assert_int_equal(ask(&f, 2, UMAD_SA_METHOD_GET_TRACE_TABLE,
			     UMAD_SA_ATTR_MCMEMBER_REC, &m), 0x000c);
	assert_int_equal(m, UMAD_SA_METHOD_GET_TRACE_TABLE | 0x80);
	assert_int_equal(ask(&f, 2, UMAD_METHOD_GET,
			     UMAD_ATTR_CLASS_PORT_INFO, &m), 0);
	assert_int_equal(m, UMAD_METHOD_GET_RESP);
	fx_fini(&f);
}

/* 15.2.5.17: a trusted query with the ProxyJoin component matches the
 * memberships whose ProxyJoin is the value given. */
static void query_by_proxy_join(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr q, r;
	struct fx f;
	uint16_t st, off;
	uint8_t *p;
	size_t n;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);   /* own */
	assert_int_equal(fx_join(&f, 2, &g, 3, 1, NULL), 0);   /* proxy */
	memset(&q, 0, sizeof(q));
	q.mgid = g;
	for (int proxy = 0; proxy < 2; proxy++) {
		q.proxy_join = proxy;
		p = fx_table(&f, 2, 1, CM(MGID) | CM(PROXY_JOIN), &q, &n, &st,
			     &off);
		assert_int_equal(st, 0);
		assert_int_equal(n, 1);
		r = fx_table_rec(p, 0);
		assert_int_equal(r.proxy_join, proxy);
		assert_memory_equal(r.port_gid.raw, fx_gid(proxy ? 3 : 2).raw,
				    16);
		free(p);
	}
	fx_fini(&f);
}

/* 15.2.1.1: a GetTable answer larger than cfg.max_records is
 * NO_RESOURCES; one of exactly that size is served. */
static void table_bound(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr q;
	struct fx f;
	uint16_t st, off;
	uint8_t *p;
	size_t n;

	fx_init(&f);
	f.cfg.max_records = 2;
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);
	assert_int_equal(fx_join(&f, 3, &g, 3, 1, NULL), 0);
	memset(&q, 0, sizeof(q));
	q.mgid = g;
	p = fx_table(&f, 2, 1, CM(MGID), &q, &n, &st, &off);
	assert_int_equal(st, 0);
	assert_int_equal(n, 2);
	free(p);
	assert_int_equal(fx_join(&f, 4, &g, 4, 1, NULL), 0);
	p = fx_table(&f, 2, 1, CM(MGID), &q, &n, &st, &off);
	assert_null(p);
	assert_int_equal(st, ST_NO_RESOURCES);
	fx_fini(&f);
}

/* A port the directory does not know (by SLID): Set, Get and GetTable
 * are dropped, as OpenSM drops them; Delete is REQ_INVALID. */
static void unknown_requester_methods(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1");
	struct imc_mcmr r;
	struct fx f;
	char *before, *after;
	size_t sent;

	fx_init(&f);
	fx_start(&f);
	assert_int_equal(fx_join(&f, 2, &g, 2, 1, NULL), 0);
	memset(&r, 0, sizeof(r));
	r.mgid = g;
	sent = f.nsent;
	assert_int_equal(fx_req(&f, 40, UMAD_METHOD_GET, CM(MGID), &r, NULL),
			 -1);
	assert_int_equal(fx_req(&f, 40, UMAD_SA_METHOD_GET_TABLE, CM(MGID),
				&r, NULL), -1);
	assert_int_equal(f.nsent, sent);
	before = fx_dump(&f);
	assert_int_equal(fx_leave(&f, 40, &g, 2, 1, NULL), ST_REQ_INVALID);
	after = fx_dump(&f);
	assert_string_equal(before, after);
	free(before);
	free(after);
	fx_fini(&f);
}

/* 15.2.1.1: the MLID of a record is a wildcard unless its component is
 * in the mask: without it, the lowest free MLID. */
static void mlid_needs_its_component(void **state)
{
	struct imc_gid g = fx_mgid("ff12:1234::1"), h = fx_mgid("ff12:1234::2");
	struct imc_mcmr r = fx_create_rec(&g, 2, 1);
	struct imc_sa_mad a;
	struct fx f;

	fx_init(&f);
	fx_start(&f);
	r.mlid = 0xc010;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK, &r, &a),
			 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc001);
	r = fx_create_rec(&h, 2, 1);
	r.mlid = 0xc010;
	assert_int_equal(fx_req(&f, 2, UMAD_METHOD_SET, CREATE_MASK | CM(MLID),
				&r, &a), 0);
	assert_int_equal(fx_rec(&a).mlid, 0xc010);
	fx_fini(&f);
}

static int subscribe(struct fx *f, uint16_t lid, uint16_t trap)
{
	struct imc_inform_info ii;
	uint8_t rec[IMC_INFORM_INFO_SIZE], buf[IMC_MAD_SIZE];
	uint64_t tid = ++f->tid;
	const struct fx_sent *s;

	memset(&ii, 0, sizeof(ii));
	ii.lid_range_begin = 0xffff;
	ii.is_generic = 1;
	ii.subscribe = 1;
	ii.type = 0xffff;
	ii.trap_number_or_device_id = trap;
	ii.producer_type_or_vendor_id = 0xffffff;
	assert_int_equal(imc_inform_info_pack(&ii, rec, sizeof(rec)),
			 IMC_INFORM_INFO_SIZE);
	fx_mad(buf, UMAD_METHOD_SET, UMAD_ATTR_INFORM_INFO, tid, 0, 0, rec,
	       sizeof(rec));
	assert_int_equal(fx_recv(f, lid, buf, sizeof(buf)), 0);
	fx_run(f);
	s = fx_answer(f, lid, tid);
	assert_non_null(s);
	return imc_get16(s->mad + 4);
}

/* 15.2.1.1: subscriptions beyond cfg.max_subscriptions are NO_RESOURCES;
 * the ones before stay. */
static void subscription_bound(void **state)
{
	struct fx f;

	fx_init(&f);
	f.cfg.max_subscriptions = 2;
	fx_start(&f);
	assert_int_equal(subscribe(&f, 2, 66), 0);
	assert_int_equal(subscribe(&f, 3, 67), 0);
	assert_int_equal(subscribe(&f, 4, 66), ST_NO_RESOURCES);
	assert_int_equal(fx_stats(&f).subscriptions, 2);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(class_port_info_methods),
		cmocka_unit_test(query_by_proxy_join),
		cmocka_unit_test(table_bound),
		cmocka_unit_test(subscription_bound),
		cmocka_unit_test(unknown_requester_methods),
		cmocka_unit_test(mlid_needs_its_component),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
