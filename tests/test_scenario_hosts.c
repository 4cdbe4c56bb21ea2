/* Sets of hosts in scenarios (imc_scn_parse_hosts()): "all" and
 * "FIRST..LAST" in ipoib-up (each host gets each address plus its place
 * in the set) and in the traffic and IPoIB subjects (summed; a carrier
 * up when every one is), their canonical print, their parse errors, and
 * exact results of a small run.
 *
 * Fabric: switch:hosts=6, the SM and the SA on H-000001. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/scenario.h"
#include "scenario_fixture.h"

#define TOPO "topology switch:hosts=6\n"

static const char every_set[] =
	TOPO
	"stop 5s\n"
	"sa\n"
	/* H-000004 gets fd00::100: the carry into the next byte */
	"at 1ms ipoib-up H-000002..H-000006 10.0.0.2/24 fd00::fe/64\n"
	"at 5ms expect ipoib-carrier H-000002..H-000006 == up\n"
	"at 5ms expect ipoib-carrier all == down\n"
	"at 10ms ping H-000002 10.0.0.6 count=2\n"
	"ping H-000002 fd00::100 count=3\n"
	"ping H-000003 10.0.0.7 count=1\n"
	"send H-000001 H-000003 count=4\n"
	"send H-000001 H-000005 count=2\n"
	"expect ping-replies H-000002 == 5\n"
	"expect ping-answered H-000006 == 2\n"
	"expect ping-answered H-000004 == 3\n"
	"expect ping-answered all == 5\n"
	"expect ping-replies H-000003 == 0\n"
	/* each: broadcast, all-nodes, its solicited-node group; and
	 * H-000002's send-only join of H-000004's for ND */
	"expect ipoib-counter H-000002..H-000006 joins == 15 + 1\n"
	"expect delivered H-000002..H-000004 == 4\n"
	"expect delivered all == 6\n"
	"expect sent all == 6\n"
	"expect dups all == 0\n"
	"expect send-errors H-000001..H-000002 == 0\n";

static void test_run(void **state)
{
	struct imc_scenario *s = parse(every_set);
	struct imc_scenario_result r;
	char err[512];
	int rc;

	(void)state;
	rc = imc_scenario_run(s, NULL, &r, err, sizeof(err));
	if (rc)
		fail_msg("run failed (%d): %s", rc, err);
	for (unsigned i = 0; i < r.nchecks; i++)
		if (r.checks[i].state != IMC_SCN_CHECK_PASS)
			fail_msg("line %u: %s: observed %s", r.checks[i].line,
				 r.checks[i].text, r.checks[i].observed_str);
	assert_int_equal(r.nchecks, 13);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static void test_print(void **state)
{
	struct imc_scenario *s = parse(every_set), *s2;
	char *out, *out2;

	(void)state;
	out = print(s);
	has(out, "at 1ms ipoib-up H-000002..H-000006 pkey=0xffff 10.0.0.2/24 fd00::fe/64\n");
	has(out, "at 5ms expect ipoib-carrier H-000002..H-000006 pkey=0xffff == up\n");
	has(out, "at 5ms expect ipoib-carrier all pkey=0xffff == down\n");
	has(out, "expect delivered H-000002..H-000004 == 4\n");
	has(out, "expect delivered all == 6\n");
	/* one host stays a port */
	has(out, "expect ping-replies H-000002:1 pkey=0xffff == 5\n");
	s2 = parse(out);
	out2 = print(s2);
	assert_string_equal(out, out2);
	free(out);
	free(out2);
	imc_scenario_destroy(s2);
	imc_scenario_destroy(s);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(TOPO "ipoib-up H-000004..H-000002\n",
		     "t.scn:2: ipoib-up: 'H-000004..H-000002': H-000004 comes after H-000002");
	expect_error(TOPO "ipoib-up H-000001..L-0001\n",
		     "t.scn:2: ipoib-up: 'H-000001..L-0001': a range runs from a host to a host");
	expect_error(TOPO "ipoib-up H-000001..H-000009\n",
		     "t.scn:2: ipoib-up: expected FIRST..LAST with two host names, got 'H-000001..H-000009'");
	expect_error(TOPO "ipoib-up H-000001.. 10.0.0.1/24\n",
		     "t.scn:2: ipoib-up: expected FIRST..LAST with two host names, got 'H-000001..'");
	/* 10.0.0.250 + 5 is the broadcast address of 10.0.0.0/24. */
	expect_error(TOPO "ipoib-up all 10.0.0.250/24\n",
		     "t.scn:2: ipoib-up: 10.0.0.250/24: 6 hosts from there leave the prefix or take its broadcast address");
	expect_error(TOPO "ipoib-up all 10.0.0.0/24\n",
		     "t.scn:2: ipoib-up: 10.0.0.0/24: 6 hosts from there leave the prefix or take its broadcast address");
	expect_error(TOPO "ipoib-up all fd00::ffff:ffff:ffff:fffc/64\n",
		     "t.scn:2: ipoib-up: fd00::ffff:ffff:ffff:fffc/64: 6 hosts from there leave the prefix or take its broadcast address");
	expect_error(TOPO "expect ipoib-state all == up\n",
		     "t.scn:2: ipoib-state: ipoib-state: one host");
	expect_error(TOPO "expect delivered H-000001..S-0001 == 0\n",
		     "t.scn:2: delivered: expected FIRST..LAST with two host names, got 'H-000001..S-0001'");
	/* One host keeps its old rules: any address. */
	imc_scenario_destroy(parse(TOPO "ipoib-up H-000001 10.0.0.0/24\n"));
}

/* The last addresses of a prefix still fit. */
static void test_edges(void **state)
{
	struct imc_scenario *s;
	char *out;

	(void)state;
	s = parse(TOPO "ipoib-up all 10.0.0.249/24 fd00::ffff:ffff:ffff:fffa/64\n");
	out = print(s);
	has(out, "ipoib-up all pkey=0xffff 10.0.0.249/24 fd00::ffff:ffff:ffff:fffa/64\n");
	free(out);
	imc_scenario_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
