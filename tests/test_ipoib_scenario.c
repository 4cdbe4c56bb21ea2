/* IPoIB in scenarios (scenario_ipoib.h): the ipoib setting, the ipoib-*,
 * ping and ipoib-send verbs and the subjects through the canonical print,
 * their parse errors, run-time failures, exact results of small runs, the
 * sa setting's partitions=, and determinism.
 *
 * Fabric: fat-tree:leaves=2,hosts=2,spines=2: H-000001 and H-000002 on
 * L-0001, H-000003 and H-000004 on L-0002; the SM and the SA are on
 * H-000001. */
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

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"

static struct imc_scenario *parse(const char *text)
{
	struct imc_scenario *s = NULL;
	char err[512];
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", NULL, &s, err,
				    sizeof(err));

	if (rc)
		fail_msg("parse failed (%d): %s", rc, err);
	return s;
}

static char *print(const struct imc_scenario *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	imc_scenario_print(s, f);
	fclose(f);
	return buf;
}

static void expect_error(const char *text, const char *want)
{
	struct imc_scenario *s = NULL;
	char err[512];
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", NULL, &s, err,
				    sizeof(err));

	if (rc >= 0)
		fail_msg("parsed, expected error '%s' for:\n%s", want, text);
	assert_null(s);
	if (strcmp(err, want))
		fail_msg("error\n  got  '%s'\n  want '%s'", err, want);
}

static void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

/* Runs s; every expectation must hold and nothing may be left alive. */
static uint64_t run_pass(const struct imc_scenario *s)
{
	struct imc_scenario_result r;
	char err[512];
	uint64_t h;
	int rc = imc_scenario_run(s, NULL, &r, err, sizeof(err));

	if (rc)
		fail_msg("run failed (%d): %s", rc, err);
	for (unsigned i = 0; i < r.nchecks; i++)
		if (r.checks[i].state != IMC_SCN_CHECK_PASS)
			fail_msg("line %u: %s: observed %s", r.checks[i].line,
				 r.checks[i].text, r.checks[i].observed_str);
	assert_true(r.nchecks > 0);
	assert_int_equal(r.leftover, 0);
	h = r.trace_hash;
	imc_scenario_result_free(&r);
	return h;
}

static const char every_form[] =
	TOPO
	"stop 2s\n"
	"sa partitions=0x8001,0x0002\n"
	"ipoib queue=4 queue-group=8 queue-total=100 resolve-timeout=200ms "
	"resolve-retries=1 expiry=30s idle=500ms sendonly-full=no\n"
	"pkeys H-000003 0xffff 0x8001\n"
	"at 1ms ipoib-up H-000002 10.0.0.2/24 fd00::2/64\n"
	"ipoib-up H-000003 10.1.0.3/24 pkey=0x8001\n"
	"ipoib-addr H-000002 10.0.1.2/24\n"
	"ipoib-addr H-000002 del 10.0.1.2\n"
	"ipoib-listen H-000004 239.1.2.3\n"
	"ipoib-unlisten H-000004 239.1.2.3\n"
	"ping H-000002 10.0.0.4 count=3 interval=2ms size=100\n"
	"ipoib-send H-000002 ff12::9 count=2 size=10 interval=5us\n"
	"at 1s ipoib-down H-000003 pkey=0x8001\n"
	"expect ipoib-carrier H-000002 == up\n"
	"expect ipoib-state H-000003 pkey=0x8001 == down\n"
	"expect ipoib-received H-000004 239.1.2.3 == 0\n"
	"expect ipoib-received H-000004 pkey=0xffff == 0\n"
	"expect ping-replies H-000002 == 0\n"
	"expect ping-answered H-000004 == 0\n"
	"expect ipoib-counter H-000002 drops_queue_endpoint == 0\n"
	"expect ipoib-counter H-000002 tx-packets >= 0\n";

static const char every_form_printed[] =
	"sa partitions=0x8001,0x8002\n"
	"ipoib queue=4 queue-group=8 queue-total=100 resolve-timeout=200ms "
	"resolve-retries=1 expiry=30s idle=500ms sendonly-full=no\n"
	"pkeys H-000003:1 0xffff 0x8001\n"
	"at 1ms ipoib-up H-000002:1 pkey=0xffff 10.0.0.2/24 fd00::2/64\n"
	"at 1ms ipoib-up H-000003:1 pkey=0x8001 10.1.0.3/24\n"
	"at 1ms ipoib-addr H-000002:1 10.0.1.2/24 pkey=0xffff\n"
	"at 1ms ipoib-addr H-000002:1 del 10.0.1.2/32 pkey=0xffff\n"
	"at 1ms ipoib-listen H-000004:1 239.1.2.3 pkey=0xffff\n"
	"at 1ms ipoib-unlisten H-000004:1 239.1.2.3 pkey=0xffff\n"
	"at 1ms ping H-000002:1 10.0.0.4 count=3 size=100 interval=2ms pkey=0xffff\n"
	"at 1ms ipoib-send H-000002:1 ff12::9 count=2 size=10 interval=5us pkey=0xffff\n"
	"at 1s ipoib-down H-000003:1 pkey=0x8001\n"
	"expect ipoib-carrier H-000002:1 pkey=0xffff == up\n"
	"expect ipoib-state H-000003:1 pkey=0x8001 == down\n"
	"expect ipoib-received H-000004:1 239.1.2.3 pkey=0xffff == 0\n"
	"expect ipoib-received H-000004:1 pkey=0xffff == 0\n"
	"expect ipoib-counter H-000002:1 drops-queue-endpoint pkey=0xffff == 0\n";

static void test_print(void **state)
{
	struct imc_scenario *s, *s2;
	char *out, *out2;

	(void)state;
	s = parse(every_form);
	out = print(s);
	for (const char *l = every_form_printed; *l;) {
		const char *e = strchr(l, '\n');
		char line[256];

		assert_true(e - l < (long)sizeof(line));
		memcpy(line, l, (size_t)(e - l));
		line[e - l] = '\0';
		has(out, line);
		l = e + 1;
	}
	s2 = parse(out);
	out2 = print(s2);
	assert_string_equal(out, out2);
	free(out);
	free(out2);
	imc_scenario_destroy(s2);
	/* It runs, too. */
	run_pass(s);
	imc_scenario_destroy(s);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error(TOPO "ipoib\nipoib queue=2\n",
		     "t.scn:3: ipoib: IPoIB is set already on line 2");
	expect_error(TOPO "ipoib colour=red\n",
		     "t.scn:2: ipoib: expected queue=, queue-group=, queue-total=, resolve-timeout=, resolve-retries=, expiry=, idle= or sendonly-full=, got 'colour=red'");
	expect_error(TOPO "ipoib queue=0\n", "t.scn:2: ipoib: queues: at least 1");
	expect_error(TOPO "ipoib sendonly-full=maybe\n",
		     "t.scn:2: ipoib: sendonly-full: expected yes or no, got 'maybe'");
	expect_error(TOPO "ipoib resolve-timeout=0\n",
		     "t.scn:2: ipoib: resolve-timeout: more than 0");
	expect_error(TOPO "ipoib-up\n",
		     "t.scn:2: ipoib-up: expected 'ipoib-up HOSTS [pkey=P] [ADDR/LEN]...'");
	expect_error(TOPO "ipoib-up S-0001\n",
		     "t.scn:2: ipoib-up: 'S-0001' is a switch; expected a host (HCA)");
	expect_error(TOPO "ipoib-up H-000001 10.0.0.300/24\n",
		     "t.scn:2: ipoib-up: expected an IPv4 or IPv6 address with /LEN, got '10.0.0.300/24'");
	expect_error(TOPO "ipoib-up H-000001 224.0.0.1/24\n",
		     "t.scn:2: ipoib-up: 224.0.0.1/24 is a multicast address");
	expect_error(TOPO "ipoib-up H-000001 pkey=0x8000\n",
		     "t.scn:2: ipoib-up: pkey: 0x8000 is invalid");
	expect_error(TOPO "ipoib-down H-000001 10.0.0.1\n",
		     "t.scn:2: ipoib-down: expected pkey=, got '10.0.0.1'");
	expect_error(TOPO "ipoib-addr H-000001\n",
		     "t.scn:2: ipoib-addr: expected 'ipoib-addr HOST [del] ADDR[/LEN] [pkey=P]'");
	expect_error(TOPO "ipoib-addr H-000001 del\n",
		     "t.scn:2: ipoib-addr: expected an address");
	expect_error(TOPO "ipoib-listen H-000001 10.0.0.1\n",
		     "t.scn:2: ipoib-listen: expected an IPv4 or IPv6 multicast group, got '10.0.0.1'");
	expect_error(TOPO "ping H-000001 239.0.0.1\n",
		     "t.scn:2: ping: ping: a unicast destination");
	expect_error(TOPO "ping H-000001 10.0.0.2 count=0\n",
		     "t.scn:2: ping: count: expected at least 1");
	expect_error(TOPO "ipoib-send H-000001 10.0.0.2 size=5000\n",
		     "t.scn:2: ipoib-send: size: 5000 is out of range (at most 4096)");
	expect_error(TOPO "ipoib-send H-000001 10.0.0.2 ttl=3\n",
		     "t.scn:2: ipoib-send: expected count=, size=, interval= or pkey=, got 'ttl=3'");
	expect_error(TOPO "expect ipoib-counter H-000001 bogus == 1\n",
		     "t.scn:2: ipoib-counter: expected a counter (tx-packets, rx-packets, drops, drops-REASON, ...), got 'bogus'");
	expect_error(TOPO "expect ipoib-received H-000001 10.0.0.1 == 1\n",
		     "t.scn:2: ipoib-received: expected a multicast group or pkey=, got '10.0.0.1'");
	expect_error(TOPO "expect ipoib-carrier H-000001 == sideways\n",
		     "t.scn:2: value: expected a number, got 'sideways'");
	expect_error(TOPO "sa partitions=0x7fff\n",
		     "t.scn:2: sa: partitions: 0x7fff is not a partition of its own");
	expect_error(TOPO "sa partitions=0x8001,\n",
		     "t.scn:2: sa: partitions: expected P_Keys separated by ','");
	expect_error(TOPO "sa partitions=\n",
		     "t.scn:2: sa: partitions: expected P_Keys separated by ','");
}

static void test_run_errors(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;
	char err[512];

	(void)state;
	s = parse(TOPO "stop 10ms\nsa\nat 1ms ping H-000002 10.0.0.1\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.scn:4: ping: H-000002:1 has no IPoIB interface for P_Key 0xffff (ipoib-up)");
	imc_scenario_destroy(s);

	s = parse(TOPO "stop 10ms\nsa\nat 1ms ipoib-up H-000002 pkey=0x8001\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "t.scn:4: ipoib-up: H-000002:1 has no P_Key 0x8001 in its table");
	imc_scenario_destroy(s);

	s = parse(TOPO "stop 10ms\nsa\nat 1ms ipoib-up H-000002\n"
		  "ping H-000002 10.0.0.1\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -EADDRNOTAVAIL);
	assert_string_equal(err, "t.scn:5: ping: the interface has no IPv4 address to send from");
	imc_scenario_destroy(s);

	s = parse(TOPO "stop 10ms\nsa\nat 1ms ipoib-up H-000002\n"
		  "ipoib-unlisten H-000002 239.0.0.9\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.scn:5: ipoib-unlisten: the group is not listened to");
	imc_scenario_destroy(s);
}

/* Exact results on the small tree: pings both ways, the SM's own host,
 * a listener, down and up again. */
static void test_run(void **state)
{
	struct imc_scenario *s;

	(void)state;
	s = parse(TOPO "stop 2s\nsa\n"
		  "at 1ms ipoib-up H-000001 10.0.0.1/24\n"
		  "ipoib-up H-000002 10.0.0.2/24 fd00::2/64\n"
		  "ipoib-up H-000004 10.0.0.4/24 fd00::4/64\n"
		  "ipoib-listen H-000001 239.9.9.9\n"
		  "at 2ms expect ipoib-state H-000004 == up\n"
		  "at 10ms ping H-000002 10.0.0.4 count=4\n"
		  "ping H-000004 fd00::2 count=2\n"
		  "ping H-000001 10.0.0.2 count=2\n"
		  "ipoib-send H-000004 239.9.9.9 count=3\n"
		  "at 50ms ipoib-down H-000004\n"
		  "at 51ms expect ipoib-carrier H-000004 == down\n"
		  /* Down keeps what is listened to: the broadcast group,
		   * all-nodes and fd00::4's solicited-node group. */
		  "expect ipoib-counter H-000004 groups == 3\n"
		  "at 60ms ping H-000002 10.0.0.4 count=2\n"
		  "at 100ms ipoib-up H-000004\n"
		  "at 200ms ping H-000002 10.0.0.4 count=3\n"
		  "expect ping-replies H-000002 == 7\n"
		  "expect ping-answered H-000004 == 7\n"
		  "expect ping-replies H-000004 == 2\n"
		  "expect ping-replies H-000001 == 2\n"
		  "expect ipoib-received H-000001 239.9.9.9 == 3\n"
		  "expect ipoib-received H-000001 == 5\n"
		  "expect ipoib-counter H-000004 carrier-changes == 3\n"
		  /* 239.9.9.9, and fd00::2's solicited-node group (NS) */
		  "expect ipoib-counter H-000004 sendonly-joins == 2\n"
		  "expect ipoib-counter H-000002 resolve-failures == 0\n"
		  "expect ipoib-counter H-000002 drops == 0\n"
		  "expect ipoib-carrier H-000003 == down\n"
		  "expect sa-groups >= 4\n");
	run_pass(s);
	imc_scenario_destroy(s);
}

static void test_deterministic(void **state)
{
	char path[512];
	struct imc_scenario *s;
	char err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/examples/ipoib-ping.scn",
		 IMC_SOURCE_DIR);
	assert_int_equal(imc_scenario_parse_file(path, NULL, &s, err,
						 sizeof(err)), 0);
	assert_true(run_pass(s) == run_pass(s));
	imc_scenario_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
