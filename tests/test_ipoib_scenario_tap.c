/* A tap on a scenario's IPoIB interface (imc_scn_ipoib_tap), as `ibmcast
 * up` uses it: once tapped, what the interface delivers and its carrier
 * changes go to the tap and the host model no longer answers pings; the
 * addresses are those of the ipoib-up line; hosts without an interface
 * give -ENOENT. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/scenario.h"
#include "ibmcast/scenario_ipoib.h"

static const char text[] =
	"topology switch:hosts=3\n"
	"seed 5\n"
	"stop 100ms\n"
	"sa\n"
	"at 0 ipoib-up H-000001 10.0.0.1/24\n"
	"ipoib-up H-000002 10.0.0.2/24 fd00::2/64\n"
	"at 10ms ping H-000001 10.0.0.2 count=3 interval=1ms\n"
	"expect ping-replies H-000001 == 0\n"
	"expect ping-answered H-000002 == 0\n";

struct tap {
	unsigned delivered, echo_requests;
	unsigned carrier_up, carrier_down;
	unsigned naddrs;
	char addr0[IMC_IP_ADDR_STRLEN], addr1[IMC_IP_ADDR_STRLEN];
	unsigned plen0, plen1;
	int enoent, einval;
	uint64_t tx_at_end;
};

static void tap_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct tap *t = ctx;

	t->delivered++;
	assert_int_equal(p->ethertype, IMC_ETHERTYPE_IPV4);
	/* ICMP echo request (RFC 792) from 10.0.0.1. */
	if (p->len >= 28 && p->data[9] == 1 && p->data[20] == 8 &&
	    p->data[15] == 1)
		t->echo_requests++;
}

static void tap_carrier(void *ctx, bool up)
{
	struct tap *t = ctx;

	if (up)
		t->carrier_up++;
	else
		t->carrier_down++;
}

static int on_started(void *ctx, struct imc_scn_ctx *c)
{
	struct imc_ipoib_host_ops ops = {
		.deliver = tap_deliver, .carrier = tap_carrier, .ctx = ctx,
	};
	struct imc_ipoib_host_ops bad = { .carrier = tap_carrier };
	struct imc_scn_ipoib_iface i;
	struct tap *t = ctx;
	int rc;

	/* H-000003 has no interface; nor has H-000002 on P_Key 0x8001. */
	t->enoent = imc_scn_ipoib_tap(c, 2, 1, 0xffff, &ops, &i);
	assert_int_equal(imc_scn_ipoib_tap(c, 1, 1, 0x8001, &ops, NULL),
			 -ENOENT);
	t->einval = imc_scn_ipoib_tap(c, 1, 1, 0xffff, &bad, NULL);
	/* 0x7fff names the default partition too. */
	rc = imc_scn_ipoib_tap(c, 1, 1, 0x7fff, &ops, &i);
	if (rc)
		return rc;
	t->naddrs = i.naddrs;
	imc_ip_addr_format(&i.addr[0], t->addr0);
	imc_ip_addr_format(&i.addr[1], t->addr1);
	t->plen0 = i.plen[0];
	t->plen1 = i.plen[1];
	assert_non_null(i.ifc);
	assert_false(imc_ipoib_carrier(i.ifc));
	return 0;
}

static void on_ending(void *ctx, struct imc_scn_ctx *c)
{
	struct tap *t = ctx;
	struct imc_scn_ipoib_iface i;
	struct imc_ipoib_stats st;

	assert_int_equal(imc_scn_ipoib_tap(c, 1, 1, 0xffff, NULL, &i), 0);
	imc_ipoib_get_stats(i.ifc, &st);
	t->tx_at_end = st.tx_packets;
}

static void test_tap(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s;
	struct tap t = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(imc_scenario_parse(text, strlen(text), "tap.scn",
					    NULL, &s, err, sizeof(err)), 0);
	o.started = on_started;
	o.ending = on_ending;
	o.ctx = &t;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)), 0);
	assert_int_equal(t.enoent, -ENOENT);
	assert_int_equal(t.einval, -EINVAL);
	assert_int_equal(t.naddrs, 2);
	assert_string_equal(t.addr0, "10.0.0.2");
	assert_int_equal(t.plen0, 24);
	assert_string_equal(t.addr1, "fd00::2");
	assert_int_equal(t.plen1, 64);
	/* The tap got the requests; nobody answered them. */
	assert_int_equal(t.echo_requests, 3);
	assert_int_equal(t.delivered, 3);
	assert_int_equal(t.carrier_up, 1);
	assert_int_equal(t.carrier_down, 0);
	/* H-000002 sent nothing but its ARP reply (not an IP packet). */
	assert_int_equal(t.tx_at_end, 0);
	assert_int_equal(r.npassed, 2);
	assert_int_equal(r.nfailed, 0);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
