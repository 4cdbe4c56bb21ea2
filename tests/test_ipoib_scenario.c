/* IPoIB in scenarios (scenario_ipoib.h): the ipoib setting, the ipoib-*,
 * ping and ipoib-send verbs and the subjects through the canonical print,
 * their parse errors, run-time failures, exact results of small runs, the
 * sa setting's partitions= and bcast-qkey=, and determinism.
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
#include "scenario_fixture.h"

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"

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
	"sa partitions=0x8001,0x0002 bcast-qkey=0xb1b\n"
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
	"ping-all interval=20us\n"
	"expect ipoib-carrier H-000002 == up\n"
	"expect ipoib-state H-000003 pkey=0x8001 == down\n"
	"expect ipoib-received H-000004 239.1.2.3 == 0\n"
	"expect ipoib-received H-000004 pkey=0xffff == 0\n"
	"expect ping-replies H-000002 == 0\n"
	"expect ping-answered H-000004 == 0\n"
	"expect ipoib-counter H-000002 drops_queue_endpoint == 0\n"
	"expect ipoib-counter H-000002 tx-packets >= 0\n"
	"expect ping-all-pairs == ping-all-unanswered\n"
	"expect ipoib-cross-partition == 0\n"
	"expect ipoib-cross-partition H-000002 == 0\n"
	"expect ipoib-max-queued group <= 64\n";

static const char every_form_printed[] =
	"sa partitions=0x8001,0x8002 bcast-qkey=0x00000b1b\n"
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
	"at 1s ping-all interval=20us size=56\n"
	"expect ipoib-carrier H-000002:1 pkey=0xffff == up\n"
	"expect ipoib-state H-000003:1 pkey=0x8001 == down\n"
	"expect ipoib-received H-000004:1 239.1.2.3 pkey=0xffff == 0\n"
	"expect ipoib-received H-000004:1 pkey=0xffff == 0\n"
	"expect ipoib-counter H-000002:1 drops-queue-endpoint pkey=0xffff == 0\n"
	"expect ipoib-counter H-000002:1 tx-packets pkey=0xffff >= 0\n"
	"expect ping-all-pairs == ping-all-unanswered\n"
	"expect ipoib-cross-partition == 0\n"
	"expect ipoib-cross-partition H-000002:1 pkey=0xffff == 0\n"
	"expect ipoib-max-queued group <= 64\n";

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
	expect_error(TOPO "ipoib-addr H-000001 10.0.0.1/24 pkey=0x8001 x\n",
		     "t.scn:2: ipoib-addr: expected pkey=, got 'x'");
	expect_error(TOPO "expect ipoib-counter H-000001 == 1\n",
		     "t.scn:2: ipoib-counter: expected a counter (tx-packets, rx-packets, drops, drops-REASON, ...)");
	expect_error(TOPO "expect ipoib-carrier H-000001 pkey=0x8001 x == 1\n",
		     "t.scn:2: ipoib-carrier: expected pkey=, got 'x'");
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

/* QP1 is one per port: IPoIB, sa-* requests and mcast-* trackers share
 * it on any host, the SM's included, and each gets its own answers. */
static void test_qp1_shared(void **state)
{
	struct imc_scenario *s;

	(void)state;
	s = parse(TOPO "stop 1s\nsa\n"
		  "at 1ms ipoib-up H-000001 10.0.0.1/24\n"
		  "ipoib-up H-000003 10.0.0.3/24\n"
		  "sa-join H-000001 ff15::a create\n"
		  "sa-join H-000003 ff15::a create\n"
		  "mcast-join H-000001 ff15::b create as=a1\n"
		  "mcast-join H-000003 ff15::b create as=a3\n"
		  "at 20ms ping H-000003 10.0.0.1 count=2\n"
		  "sa-get H-000003 ff15::b\n"
		  "at 40ms ipoib-send H-000001 239.1.1.1 count=1\n"
		  "expect ipoib-carrier H-000001 == up\n"
		  "expect ipoib-carrier H-000003 == up\n"
		  "expect sa-status H-000001 ff15::a == success\n"
		  "expect sa-status H-000003 ff15::a == success\n"
		  "expect sa-status H-000003 ff15::b == success\n"
		  "expect mcast-state a1 == joined\n"
		  "expect mcast-state a3 == joined\n"
		  "expect ping-replies H-000003 == 2\n"
		  "expect sa-members ff15::a == 2\n"
		  "expect sa-members ff15::b == 2\n"
		  "expect sa-timeouts == 0\n"
		  "expect mcast-timeouts == 0\n");
	run_pass(s);
	imc_scenario_destroy(s);
}

/* One tracker per port: an application joining the broadcast group on
 * a host whose interface is in it holds no membership of its own at the
 * SA, and its leave leaves the interface's in place. */
static void test_tracker_shared(void **state)
{
	struct imc_scenario *s;

	(void)state;
	s = parse(TOPO "stop 1s\nsa\n"
		  "at 1ms ipoib-up H-000002 10.0.0.2/24\n"
		  "ipoib-up H-000003 10.0.0.3/24\n"
		  "at 10ms mcast-join H-000003 ff12:401b:ffff::ffff:ffff "
		  "qkey=0x0b1b as=app\n"
		  "at 11ms expect mcast-state app == joined\n"
		  "at 20ms mcast-leave app\n"
		  "at 30ms ping H-000002 10.0.0.3 count=3\n"
		  "expect mcast-local H-000003 == 1\n"
		  "expect mcast-held H-000003 ff12:401b:ffff::ffff:ffff == 1\n"
		  "expect sa-members ff12:401b:ffff::ffff:ffff == 2\n"
		  "expect ipoib-carrier H-000003 == up\n"
		  "expect ping-replies H-000002 == 3\n");
	run_pass(s);
	imc_scenario_destroy(s);
}

/* What the whole-system sweep observes: ping-all pings every pair that
 * can talk (not across partitions, not two limited members, not between
 * prefixes), and every reply comes; a delivery from an interface of
 * another partition is counted (here made by moving the sender's address
 * to its other partition while its datagram is on the way); the largest
 * queue of each kind. */
static void test_sweep_subjects(void **state)
{
	struct imc_scenario *s;

	(void)state;
	s = parse("topology fat-tree:leaves=2,hosts=3,spines=2\n"
		  "stop 3s\n"
		  "sa partitions=0x8001\n"
		  "ipoib queue=2\n"
		  "pkeys H-000002 0xffff 0x8001\n"
		  "pkeys H-000003 0xffff 0x8001\n"
		  "pkeys H-000004 0xffff 0x0001\n"
		  "at 1ms ipoib-up H-000001 10.0.0.1/16 fd00::1/64\n"
		  "ipoib-up H-000002 10.0.0.2/16 10.0.0.22/16\n"
		  "ipoib-up H-000002 10.1.0.2/16 pkey=0x8001\n"
		  "ipoib-up H-000003 10.1.0.3/16 pkey=0x8001\n"
		  "ipoib-up H-000004 10.1.0.4/16 pkey=0x0001\n"
		  "ipoib-up H-000005 10.0.0.5/16 fd00::5/64\n"
		  "ipoib-up H-000006 10.1.0.6/16\n"
		  "at 100ms ping H-000002 10.0.0.5\n"
		  "ping H-000006 10.1.0.2 count=2\n"
		  "ipoib-send H-000001 10.0.0.77 count=5\n"
		  "at 200ms ipoib-send H-000002 10.0.0.5\n"
		  "ipoib-addr H-000002 del 10.0.0.2\n"
		  "ipoib-addr H-000002 10.0.0.2/16 pkey=0x8001\n"
		  "at 300ms ipoib-addr H-000002 del 10.0.0.2 pkey=0x8001\n"
		  "ipoib-addr H-000002 10.0.0.2/16\n"
		  "at 1s ping-all\n"
		  /* default: 1->2 (two addresses), 1->5 (v4, v6), 2->1,
		   * 2->5, 5->1 (v4, v6), 5->2 (two); 0x8001: 2<->3, 2<->4,
		   * 3<->4 */
		  "at 2s expect ping-all-pairs == 16\n"
		  "expect ping-all-unanswered == 0\n"
		  "at 2100ms ping-all size=0 interval=1us\n"
		  "expect ping-all-pairs == 32\n"
		  "expect ping-all-unanswered == 0\n"
		  "expect ping-replies H-000006 == 0\n"
		  "expect ipoib-cross-partition H-000005 == 1\n"
		  "expect ipoib-cross-partition == 1\n"
		  "expect ipoib-cross-partition H-000003 pkey=0x8001 == 0\n"
		  "expect ipoib-max-queued endpoint == 2\n"
		  "expect ipoib-counter H-000001 queued-max-endpoint == 2\n"
		  "expect ipoib-counter H-000001 drops-queue-endpoint == 3\n"
		  "expect ipoib-max-queued group <= 64\n"
		  "expect ipoib-max-queued total >= 2\n");
	run_pass(s);
	imc_scenario_destroy(s);
	/* Two limited members of a partition cannot talk: no pair. */
	s = parse("topology fat-tree:leaves=2,hosts=3,spines=2\n"
		  "stop 2s\n"
		  "sa partitions=0x8001\n"
		  "pkeys H-000003 0xffff 0x0001\n"
		  "pkeys H-000004 0xffff 0x0001\n"
		  "at 1ms ipoib-up H-000003 10.1.0.3/16 pkey=0x0001\n"
		  "ipoib-up H-000004 10.1.0.4/16 pkey=0x0001\n"
		  "at 1s ping-all\n"
		  "expect ping-all-pairs == 0\n"
		  "expect ipoib-carrier H-000003 pkey=0x0001 == up\n");
	run_pass(s);
	imc_scenario_destroy(s);
}

/* The SA gives the broadcast groups a Q_Key of its own: the interfaces'
 * QPs take it from the join answers, and pings (ARP, ND, the SM's own
 * host) cross without a Q_Key drop. */
static void test_bcast_qkey(void **state)
{
	struct imc_scenario *s;

	(void)state;
	s = parse(TOPO "stop 1s\nsa bcast-qkey=0x00C0FFEE\n"
		  "at 1ms ipoib-up H-000001 10.0.0.1/24\n"
		  "ipoib-up H-000002 10.0.0.2/24 fd00::2/64\n"
		  "ipoib-up H-000004 10.0.0.4/24 fd00::4/64\n"
		  "at 10ms ping H-000002 10.0.0.4 count=3\n"
		  "ping H-000004 fd00::2 count=2\n"
		  "ping H-000001 10.0.0.2 count=2\n"
		  "expect ping-replies H-000002 == 3\n"
		  "expect ping-replies H-000004 == 2\n"
		  "expect ping-replies H-000001 == 2\n"
		  "expect drops qkey == 0\n"
		  "expect ipoib-counter H-000002 drops == 0\n");
	run_pass(s);
	imc_scenario_destroy(s);
	expect_error(TOPO "sa bcast-qkey=0x100000000\n",
		     "t.scn:2: sa: bcast-qkey: 0x100000000 is out of range (at most 4294967295)");
}

/* One QP1 a port: on hosts other than the SM's, sa-join requests and
 * the IPoIB interface's join tracker share it (the answers to each find
 * their client by TID), as on the SM's own host, where both share the
 * SA's QP1. */
static void test_sa_join_beside_ipoib(void **state)
{
	struct imc_scenario *s;

	(void)state;
	s = parse(TOPO "stop 1s\nsa\n"
		  "at 1ms ipoib-up H-000002 10.0.0.2/24\n"
		  "sa-join H-000002 ff15::1 create\n"
		  "ipoib-up H-000003 10.0.0.3/24\n"
		  "ipoib-up H-000001 10.0.0.1/24\n"
		  "at 2ms sa-join H-000003 ff15::1\n"
		  "sa-join H-000004 ff15::1\n"
		  "sa-join H-000001 ff15::1\n"
		  "ipoib-listen H-000003 239.1.1.1\n"
		  "at 5ms ping H-000002 10.0.0.3 count=3\n"
		  "ping H-000001 10.0.0.2 count=2\n"
		  "ipoib-send H-000002 239.1.1.1 count=2\n"
		  "sa-mcast H-000002 ff15::1 count=4 interval=10us\n"
		  "sa-get H-000003 ff15::1\n"
		  "at 10ms sa-leave H-000003 ff15::1\n"
		  "expect sa-status H-000002 ff15::1 == success\n"
		  "expect sa-status H-000003 ff15::1 == success\n"
		  "expect sa-status H-000001 ff15::1 == success\n"
		  "expect sa-answers H-000003 == 3\n"
		  "expect sa-members ff15::1 == 3\n"
		  "expect sa-timeouts == 0\n"
		  "expect delivered H-000003 == 4\n"
		  "expect delivered H-000004 == 4\n"
		  "expect delivered H-000001 == 4\n"
		  "expect ping-replies H-000002 == 3\n"
		  "expect ping-replies H-000001 == 2\n"
		  "expect ipoib-received H-000003 239.1.1.1 == 2\n"
		  "expect ipoib-counter H-000002 join-errors == 0\n"
		  "expect ipoib-counter H-000003 join-errors == 0\n"
		  "expect ipoib-carrier H-000003 == up\n");
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
		cmocka_unit_test(test_bcast_qkey),
		cmocka_unit_test(test_sa_join_beside_ipoib),
		cmocka_unit_test(test_qp1_shared),
		cmocka_unit_test(test_tracker_shared),
		cmocka_unit_test(test_sweep_subjects),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
