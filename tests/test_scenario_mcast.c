/* The join tracker in scenarios (scenario_mcast.h): the mcast-tracker
 * setting and the mcast-* verbs and subjects through the canonical print,
 * their parse errors, runs with exact results (local joins without a MAD,
 * the union at the SA, send-only members without a QP, deliveries,
 * Deletes only for the last holder), the SA restarted in place and on a
 * new SM's port, a flap, QP1 shared with sa-* requests, run errors, the
 * --mcast-show recorder, determinism and the example.
 *
 * Fabric of most runs: fat-tree:leaves=2,hosts=2,spines=2: H-000001 and
 * H-000002 on L-0001, H-000003 and H-000004 on L-0002; the SM, and so the
 * SA, is on H-000001.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/scenario.h"
#include "ibmcast/scenario_mcast.h"
#include "scenario_fixture.h"

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"

/* Parses, runs and checks that every expectation of text held. */
static void run_text(const char *text, unsigned min_checks)
{
	struct imc_scenario *s = parse(text);
	struct imc_scenario_result r;

	run_ok(s, NULL, &r);
	all_pass(&r);
	assert_true(r.nchecks >= min_checks);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static void run_error(const char *text, int want_rc, const char *want)
{
	struct imc_scenario *s = parse(text);
	struct imc_scenario_result r;
	char err[512];

	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 want_rc);
	assert_string_equal(err, want);
	imc_scenario_destroy(s);
}

static char *show_text(const struct imc_scn_mcast_show *sh, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(imc_scn_mcast_show_print(sh, f, json), 0);
	fclose(f);
	return buf;
}

/* ---- language ---- */

static void test_lang(void **state)
{
	static const char *const subjects[] = {
		"mcast-state", "mcast-status", "mcast-callbacks",
		"mcast-groups", "mcast-members", "mcast-held", "mcast-joined",
		"mcast-handles", "mcast-joins", "mcast-leaves", "mcast-local",
		"mcast-mads", "mcast-retries", "mcast-timeouts",
		"mcast-rejoins", "mcast-errors", "mcast-traps", "mcast-lost",
	};
	static const char *const actions[] = {
		"mcast-join", "mcast-leave", "mcast-send", "mcast-show",
		"sa-restart",
	};
	struct imc_scn_lang *l;

	(void)state;
	assert_int_equal(imc_scn_lang_create(&l), 0);
	assert_int_equal(imc_scn_lang_verb(l, "mcast-tracker")->kind,
			 IMC_SCN_SETTING);
	for (unsigned i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		assert_int_equal(imc_scn_lang_verb(l, actions[i])->kind,
				 IMC_SCN_ACTION);
	for (unsigned i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++)
		assert_non_null(imc_scn_lang_subject(l, subjects[i]));
	/* The built-in language has them already. */
	assert_int_equal(imc_scn_lang_add_mcast(l), -EEXIST);
	imc_scn_lang_destroy(l);
}

/* ---- parse and print ---- */

static const char every_form[] =
	TOPO
	"stop 1ms\n"
	"sa\n"
	"mcast-tracker rejoin=immediate spread=2ms window=4 timeout=5ms "
	"retries=7\n"
	"at 10us mcast-join H-000002 0 create as=g state=full+sendonly-full "
	"qkey=0x11 pkey=0x7fff tclass=3 sl=2 flow=0x12345 hop=4 scope=5 "
	"mtu=gt:3 rate=max:6 life=min:7 mlid=0xc005\n"
	"mcast-join H-000003 @g state=nonmember noqp retry=3ms as=h\n"
	"mcast-join H-000004:1 ff15::1\n"
	"mcast-send H-000001 @g count=3 size=12 interval=1us sl=1\n"
	"mcast-send H-000002 ff15::1\n"
	"mcast-show\n"
	"at 20us mcast-leave h\n"
	"sa-restart\n"
	"at 30us expect mcast-state g == joined\n"
	"expect mcast-state h in pending..left\n"
	"expect mcast-status g == success\n"
	"expect mcast-status h != timeout\n"
	"expect mcast-callbacks g == 1\n"
	"expect mcast-callbacks h rejoining == 0\n"
	"expect mcast-groups == mcast-groups H-000002 + 2\n"
	"expect mcast-members H-000004 ff15::1 == 1\n"
	"expect mcast-held H-000002 @g == 0x9\n"
	"expect mcast-joined H-000002 <= mcast-handles\n"
	"expect mcast-joins >= mcast-leaves + mcast-local\n"
	"expect mcast-mads H-000003 >= mcast-retries + mcast-timeouts\n"
	"expect mcast-rejoins <= mcast-errors H-000001 + 10\n"
	"expect mcast-unjoined H-000002 <= mcast-max-in-flight\n"
	"expect mcast-consistent == mcast-orphans\n";

static const char every_form_printed[] =
	"mcast-tracker rejoin=immediate spread=2ms window=4 timeout=5ms "
	"retries=7\n"
	"at 10us mcast-join H-000002:1 0 state=full+sendonly-full "
	"qkey=0x00000011 pkey=0x7fff tclass=3 sl=2 flow=0x12345 hop=4 scope=5 "
	"mtu=gt:3 rate=max:6 life=min:7 mlid=0xc005 create as=g\n"
	"at 10us mcast-join H-000003:1 @g state=nonmember noqp retry=3ms as=h\n"
	"at 10us mcast-join H-000004:1 ff15::1\n"
	"at 10us mcast-send H-000001:1 @g count=3 size=12 interval=1us sl=1\n"
	"at 10us mcast-send H-000002:1 ff15::1 count=1 size=64 interval=1us "
	"sl=0\n"
	"at 10us mcast-show\n"
	"at 20us mcast-leave h\n"
	"at 20us sa-restart\n"
	"at 30us expect mcast-state g == joined\n"
	"expect mcast-state h in pending..left\n"
	"expect mcast-status g == success\n"
	"expect mcast-status h != timeout\n"
	"expect mcast-callbacks g == 1\n"
	"expect mcast-callbacks h rejoining == 0\n"
	"expect mcast-groups == mcast-groups H-000002:1 + 2\n"
	"expect mcast-members H-000004:1 ff15::1 == 1\n"
	"expect mcast-held H-000002:1 @g == 0x9\n"
	"expect mcast-joined H-000002:1 <= mcast-handles\n"
	"expect mcast-joins >= mcast-leaves + mcast-local\n"
	"expect mcast-mads H-000003:1 >= mcast-retries + mcast-timeouts\n"
	"expect mcast-rejoins <= mcast-errors H-000001:1 + 10\n"
	"expect mcast-unjoined H-000002:1 <= mcast-max-in-flight\n"
	"expect mcast-consistent == mcast-orphans\n";

static void test_print(void **state)
{
	struct imc_scenario *s, *s2;
	char *out, *out2;

	(void)state;
	s = parse(every_form);
	assert_int_equal(imc_scenario_nactions(s), 8);
	assert_int_equal(imc_scenario_nexpects(s), 15);
	out = print(s);
	has(out, every_form_printed);
	/* The canonical form parses to a scenario that prints the same. */
	s2 = parse(out);
	out2 = print(s2);
	assert_string_equal(out, out2);
	free(out);
	free(out2);
	imc_scenario_destroy(s2);
	imc_scenario_destroy(s);

	/* Defaults print nothing. */
	s = parse(TOPO "sa\nmcast-tracker\nmcast-join H-000001 ff15::1\n");
	out = print(s);
	has(out, "\nsa\nmcast-tracker\nat 0 mcast-join H-000001:1 ff15::1\n");
	free(out);
	imc_scenario_destroy(s);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error(TOPO "mcast-tracker\nmcast-tracker window=2\n",
		     "t.scn:3: mcast-tracker: the trackers are set already on line 2");
	expect_error(TOPO "mcast-tracker rejoin=later\n",
		     "t.scn:2: mcast-tracker: rejoin: expected paced or immediate, got 'later'");
	expect_error(TOPO "mcast-tracker window=0\n",
		     "t.scn:2: mcast-tracker: window: at least 1");
	expect_error(TOPO "mcast-tracker timeout=0\n",
		     "t.scn:2: mcast-tracker: timeout: longer than 0");
	expect_error(TOPO "mcast-tracker retries=1001\n",
		     "t.scn:2: mcast-tracker: retries: 1001 is out of range (at most 1000)");
	expect_error(TOPO "mcast-tracker colour=red\n",
		     "t.scn:2: mcast-tracker: expected rejoin=, spread=, window=, timeout= or retries=, got 'colour=red'");
	expect_error(TOPO "at 0 mcast-tracker\n",
		     "t.scn:2: 'mcast-tracker' is a setting: it takes no time");
	expect_error(TOPO "mcast-join H-000001\n",
		     "t.scn:2: mcast-join: expected 'mcast-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [noqp] [retry=TIME] [as=NAME]'");
	expect_error(TOPO "mcast-join S-0001 ff15::1\n",
		     "t.scn:2: mcast-join: 'S-0001' is a switch; expected a host (HCA)");
	expect_error(TOPO "mcast-join H-000001 fe80::1\n",
		     "t.scn:2: mcast-join: MGID: expected a multicast GID (ff12:...), 0 or @NAME, got 'fe80::1'");
	expect_error(TOPO "mcast-join H-000001 @nope\n",
		     "t.scn:2: mcast-join: @nope: no mcast-join ... as=nope on an earlier line");
	expect_error(TOPO "mcast-join H-000001 0 create as=a\n"
		     "mcast-join H-000002 0 create as=a\n",
		     "t.scn:3: mcast-join: as=a: an earlier mcast-join has that name");
	expect_error(TOPO "mcast-join H-000001 0 as=a/b\n",
		     "t.scn:2: mcast-join: as: expected a name of letters, digits, '_', '-' or '.' (at most 32), got 'a/b'");
	expect_error(TOPO "mcast-join H-000001 ff15::1 state=0\n",
		     "t.scn:2: mcast-join: state: at least one JoinState bit");
	/* An empty state= names no bit either. */
	expect_error(TOPO "mcast-join H-000001 ff15::1 state=\n",
		     "t.scn:2: mcast-join: state: at least one JoinState bit");
	expect_error(TOPO "mcast-join H-000001 ff15::1 state=owner\n",
		     "t.scn:2: mcast-join: state: expected full, nonmember, sendonly, sendonly-full (joined by +) or 0..15, got 'owner'");
	expect_error(TOPO "mcast-join H-000001 ff15::1 mtu=ge:4\n",
		     "t.scn:2: mcast-join: mtu: expected gt, lt, eq, max or min before ':', got 'ge:4'");
	expect_error(TOPO "mcast-join H-000001 ff15::1 noqp noqp\n",
		     "t.scn:2: mcast-join: noqp given twice on this line");
	expect_error(TOPO "mcast-join H-000001 ff15::1 retry=0\n",
		     "t.scn:2: mcast-join: retry: expected a time above 0");
	expect_error(TOPO "mcast-join H-000001 ff15::1 proxy=H-000002\n",
		     "t.scn:2: mcast-join: unknown option 'proxy=H-000002'; expected 'mcast-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [noqp] [retry=TIME] [as=NAME]'");
	expect_error(TOPO "mcast-leave\n",
		     "t.scn:2: mcast-leave: expected 'mcast-leave NAME' (an mcast-join's as=NAME)");
	expect_error(TOPO "mcast-leave x\n",
		     "t.scn:2: mcast-leave: @x: no mcast-join ... as=x on an earlier line");
	expect_error(TOPO "mcast-send H-000001 0\n",
		     "t.scn:2: mcast-send: MGID: expected a multicast GID (ff12:...) or @NAME, got '0'");
	expect_error(TOPO "mcast-send H-000001 ff15::1 count=0\n",
		     "t.scn:2: mcast-send: count: expected at least 1");
	expect_error(TOPO "mcast-send H-000001 ff15::1 pkey=1\n",
		     "t.scn:2: mcast-send: expected count=, size=, interval= or sl=, got 'pkey=1'");
	expect_error(TOPO "mcast-show\n",
		     "t.scn:2: mcast-show: no mcast-join line before: nothing to show");
	expect_error(TOPO "mcast-join H-000001 ff15::1\nmcast-show now\n",
		     "t.scn:3: mcast-show: expected 'mcast-show' alone");
	expect_error(TOPO "sa-restart now\n",
		     "t.scn:2: sa-restart: expected 'sa-restart' alone");
	expect_error(TOPO "expect mcast-state == joined\n",
		     "t.scn:2: mcast-state: expected NAME (an mcast-join's as=NAME)");
	expect_error(TOPO "mcast-join H-000001 ff15::1 as=a\n"
		     "expect mcast-state a == married\n",
		     "t.scn:3: value: expected a number, got 'married'");
	expect_error(TOPO "mcast-join H-000001 ff15::1 as=a\n"
		     "expect mcast-callbacks a left == 0\n",
		     "t.scn:3: mcast-callbacks: expected joined, error, rejoining or waiting, got 'left'");
	expect_error(TOPO "expect mcast-groups H-000001 H-000002 == 1\n",
		     "t.scn:2: mcast-groups: expected at most one host");
	expect_error(TOPO "expect mcast-held H-000001 == 1\n",
		     "t.scn:2: mcast-held: expected HOST and MGID|@NAME");
}

/* ---- runs ---- */

/* Local joins, the union at the SA, send-only members without a QP,
 * deliveries, Deletes only for the last holder of a bit. */
static void test_run_basic(void **state)
{
	(void)state;
	run_text(TOPO
		 "stop 5ms\n"
		 "sa\n"
		 "at 10us mcast-join H-000002 ff15::1 create as=a\n"
		 "at 20us mcast-join H-000002 ff15::1 as=a2\n"
		 "mcast-join H-000002 ff15::1 state=nonmember as=a3\n"
		 "mcast-join H-000003 ff15::1 as=b\n"
		 "mcast-join H-000004 ff15::1 state=sendonly-full as=c\n"
		 "mcast-join H-000001 ff15::1 state=sendonly as=d\n"
		 /* a2 is answered locally; a3 needs NonMember: one Set */
		 "at 30us expect mcast-mads H-000002 == 2\n"
		 "at 30us expect mcast-local H-000002 == 1\n"
		 "at 30us expect mcast-held H-000002 ff15::1 == 0x3\n"
		 "at 30us expect mcast-held H-000001 ff15::1 == 0x4\n"
		 "at 30us expect mcast-members H-000002 ff15::1 == 3\n"
		 "at 30us expect mcast-joined == 6\n"
		 "at 30us expect mcast-groups == 4\n"
		 "at 30us expect sa-members ff15::1 == 4\n"
		 "at 30us expect mcast-callbacks a2 joined == 1\n"
		 "at 40us mcast-send H-000004 ff15::1 count=5\n"
		 "mcast-send H-000001 ff15::1 count=2\n"
		 /* one QP for a, a2 and a3; none for c and d */
		 "at 100us expect delivered H-000002 == 7\n"
		 "at 100us expect delivered H-000003 == 7\n"
		 "at 100us expect delivered H-000004 == 0\n"
		 "at 100us expect delivered H-000001 == 0\n"
		 "at 100us expect drops no-qp == 7\n"
		 /* a and a2 leave: a3 keeps NonMember; one Delete of Full,
		  * after a subscription to trap 67 (no full bit left) */
		 "at 200us mcast-leave a\n"
		 "mcast-leave a2\n"
		 "at 300us expect mcast-mads H-000002 == 4\n"
		 "at 300us expect mcast-held H-000002 ff15::1 == 0x2\n"
		 "at 300us expect mcast-state a == left\n"
		 "at 400us mcast-leave a3\n"
		 "mcast-leave b\n"
		 "at 500us mcast-leave c\n"
		 "mcast-leave d\n"
		 "expect mcast-groups == 0\n"
		 "expect mcast-handles == 0\n"
		 "expect sa-members ff15::1 == 0\n"
		 "expect mcast-leaves == 6\n"
		 "expect mcast-joins == 6\n"
		 "expect mcast-timeouts == 0\n"
		 "expect mcast-errors == 0\n"
		 /* the last full member (c) leaving deletes the group: the
		  * two ports that subscribed (d's, a3's) hear it, after their
		  * members left (nothing lost) */
		 "expect mcast-traps == 2\n"
		 "expect mcast-lost == 0\n", 26);
}

/* The SA restarts in place, then on a new SM's port; a flap. Members see
 * REJOINING then JOINED, never an error; the SM's old host gets a QP1 of
 * its own back, the new one gives its QP1 up to the SA. sa-join and a
 * tracker share a host's QP1. */
static void test_run_events(void **state)
{
	(void)state;
	run_text(TOPO
		 "stop 200ms\n"
		 "sa\n"
		 "mcast-tracker spread=1ms timeout=5ms\n"
		 "at 10us mcast-join H-000001 ff15::1 create as=a\n"
		 "mcast-join H-000003 ff15::1 as=b\n"
		 "mcast-join H-000004 ff15::1 as=c\n"
		 "sa-join H-000003 ff15::2 create\n"
		 "at 1ms expect sa-status H-000003 ff15::2 == success\n"
		 "at 1ms expect sa-members ff15::1 == 3\n"
		 "at 2ms sa-restart\n"
		 "at 2500us expect sa-members ff15::1 == 0\n"
		 "at 2500us expect mcast-state a == joined\n"
		 "at 3ms reregister all\n"
		 "at 3ms expect mcast-state a == rejoining\n"
		 "at 10ms expect sa-members ff15::1 == 3\n"
		 "at 10ms expect mcast-callbacks a rejoining == 1\n"
		 "at 10ms expect mcast-callbacks a joined == 2\n"
		 /* the SM moves to H-000004 and its SA starts there: every
		  * port hears an SM change and follows the new SM LID */
		 "at 20ms sm move H-000004\n"
		 "sa-restart\n"
		 "at 30ms expect sa-members ff15::1 == 3\n"
		 "at 30ms expect mcast-callbacks c rejoining == 2\n"
		 "at 30ms expect mcast-state c == joined\n"
		 "at 30ms sa-join H-000001 ff15::3 create\n"
		 "at 31ms expect sa-status H-000001 ff15::3 == success\n"
		 "at 40ms link down H-000003\n"
		 "at 41ms expect mcast-state b == waiting\n"
		 "at 50ms link up H-000003\n"
		 "at 60ms expect mcast-state b == joined\n"
		 "at 70ms mcast-send H-000001 ff15::1 count=3\n"
		 "expect delivered H-000003 == 3\n"
		 "expect delivered H-000004 == 3\n"
		 "expect mcast-errors == 0\n"
		 "expect mcast-timeouts == 0\n"
		 "expect mcast-callbacks a error == 0\n"
		 "expect sa-errors == 0\n", 20);
}

/* Failures reach the member with the SA's status, or as the tracker's
 * own. */
static void test_run_failures(void **state)
{
	(void)state;
	run_text(TOPO
		 "stop 20ms\n"
		 "sa\n"
		 "mcast-tracker timeout=1ms retries=2\n"
		 "at 10us mcast-join H-000002 ff15::1 create as=a\n"
		 /* another Q_Key: the SA refuses; mismatch locally: -EINVAL */
		 "at 20us mcast-join H-000003 ff15::1 qkey=0x77 as=b\n"
		 "mcast-join H-000002 ff15::1 qkey=0x77 as=b2\n"
		 /* no group, no create components */
		 "mcast-join H-000004 ff15::9 as=c\n"
		 /* no SA answer: H-000004's cable is down */
		 "at 100us link down H-000004\n"
		 "at 200us mcast-join H-000004 ff15::1 as=d\n"
		 "at 1ms expect mcast-state b == failed\n"
		 "at 1ms expect mcast-status b == req-invalid\n"
		 "at 1ms expect mcast-status b2 == mismatch\n"
		 "at 1ms expect mcast-status c == insuf-comps\n"
		 "at 1ms expect mcast-state d == waiting\n"
		 "at 1ms expect mcast-status a == success\n"
		 "at 2ms mcast-leave b\n"
		 "mcast-leave b2\n"
		 "expect mcast-state b == left\n"
		 "expect mcast-callbacks c == 1\n"
		 "expect mcast-errors == 3\n"
		 "expect mcast-state d == waiting\n"
		 "expect mcast-mads H-000004 == 1\n", 11);
	/* retry=: the application joins again after a failure, until the
	 * group exists; a create after an SA restart makes a new group. */
	run_text(TOPO
		 "stop 400ms\n"
		 "sa\n"
		 "mcast-tracker spread=10ms\n"
		 "at 10us mcast-join H-000004 ff15::9 retry=2ms as=c\n"
		 "mcast-join H-000003 0 create retry=1ms as=m\n"
		 "at 1ms expect mcast-state c == failed\n"
		 "at 1ms expect mcast-state m == joined\n"
		 "at 5ms mcast-join H-000002 ff15::9 create as=creator\n"
		 "sa-restart\n"
		 "reregister all\n"
		 "at 300ms expect mcast-callbacks m rejoining == 1\n"
		 "expect mcast-state c == joined\n"
		 "expect mcast-callbacks c error in 2..3\n"
		 "expect mcast-callbacks m error == 1\n"
		 "expect mcast-callbacks m joined == 2\n"
		 "expect mcast-unjoined == 0\n"
		 "expect mcast-consistent == 0\n", 8);
}

/* The SA's memberships against the trackers' unions: equal, then a
 * membership no tracker holds (sa-join), an orphan create (an MGID the
 * SA assigned that no tracker knows), a membership a tracker counts on
 * but the SA dropped (sa-leave behind its back); members not JOINED of
 * every user of a tracker. */
static void test_run_consistency(void **state)
{
	(void)state;
	run_text(TOPO
		 "stop 20ms\n"
		 "sa\n"
		 "at 10us mcast-join H-000002 ff15::1 create as=a\n"
		 "mcast-join H-000003 ff15::1 as=b\n"
		 "mcast-join H-000003 0 create as=c\n"
		 "mcast-join H-000004 ff15::9 as=f\n"
		 "at 1ms expect mcast-consistent == 0\n"
		 "at 1ms expect mcast-orphans == 0\n"
		 "at 1ms expect mcast-unjoined == 1\n"
		 "at 1ms expect mcast-unjoined H-000004 == 1\n"
		 "at 1ms expect mcast-unjoined H-000003 == 0\n"
		 "at 1ms expect mcast-max-in-flight == 2\n"
		 "at 2ms sa-join H-000004 ff15::2 create\n"
		 "sa-join H-000001 0 create\n"
		 "at 3ms expect mcast-consistent == 1\n"
		 "at 3ms expect mcast-orphans == 1\n"
		 "at 4ms sa-leave H-000002 ff15::1 state=full\n"
		 "at 5ms expect mcast-consistent == 2\n"
		 "at 5ms expect sa-status H-000002 ff15::1 == success\n"
		 "at 6ms mcast-leave f\n"
		 "expect mcast-unjoined == 0\n"
		 "expect mcast-orphans == 1\n", 12);
	/* An SA that restarts assigns the same MGIDs again: a create's
	 * orphan may have an MGID another port's tracker knows. */
	run_text(TOPO
		 "stop 20ms\n"
		 "sa\n"
		 "at 10us mcast-join H-000002 0 create as=x\n"
		 "at 1ms sa-restart\n"
		 "at 2ms sa-join H-000003 0 create\n"
		 "at 3ms expect sa-members ff12:a01b:fe80:: == 1\n"
		 "at 3ms expect mcast-held H-000002 @x == 1\n"
		 "expect mcast-orphans == 1\n"
		 "expect mcast-consistent == 1\n", 4);
}

static void test_run_errors(void **state)
{
	struct imc_scenario *s;
	struct imc_scn_mcast_show *sh = (struct imc_scn_mcast_show *)&sh;

	(void)state;
	run_error(TOPO "stop 1ms\nat 10us mcast-join H-000002 ff15::1 create\n",
		  -ENOENT,
		  "t.scn:3: mcast-join: no SA runs: the scenario has no 'sa' line");
	run_error(TOPO "stop 1ms\nsa\nat 10us mcast-join H-000002 0 as=x\n"
		  "at 50us mcast-join H-000003 @x\n", -ENOENT,
		  "t.scn:5: mcast-join: @x has no MGID yet: its mcast-join has not joined");
	run_error(TOPO "stop 1ms\nsa\nat 10us mcast-join H-000002 0 as=x\n"
		  "at 50us mcast-send H-000003 @x\n", -ENOENT,
		  "t.scn:5: mcast-send: @x has no MGID yet: its mcast-join has not joined");
	run_error(TOPO "stop 1ms\nsa\nat 10us mcast-join H-000002 ff15::1 create as=x\n"
		  "at 50us mcast-leave x\nat 60us mcast-leave x\n", -EALREADY,
		  "t.scn:6: mcast-leave: x has left already");
	run_error(TOPO "stop 1ms\nsa\nat 10us mcast-send H-000003 ff15::4\n",
		  -ENOENT, "t.scn:4: mcast-send: the SA has no group ff15::4");
	run_error(TOPO "stop 1ms\nsa\n"
		  "at 10us mcast-join H-000002 ff15::1 create pkey=0x1234\n",
		  -EINVAL, "t.scn:4: mcast-join: H-000002 has no QP for P_Key 0x1234: Invalid argument");
	/* Subjects before any mcast-join observe nothing. */
	run_text(TOPO "stop 1ms\nsa\n"
		 "at 0 expect mcast-groups == 0\n"
		 "at 0 expect mcast-joined H-000001 == 0\n"
		 "at 1us mcast-join H-000001 ff15::1 create as=a\n"
		 "expect mcast-state a == joined\n", 3);

	s = parse(TOPO "stop 1ms\nsa\n");
	assert_int_equal(imc_scn_mcast_show_create(s, &sh), -ENOENT);
	assert_null(sh);
	assert_int_equal(imc_scn_mcast_show_create(NULL, &sh), -EINVAL);
	imc_scenario_destroy(s);
	assert_int_equal(imc_scn_mcast_show_print(NULL, stdout, false),
			 -EINVAL);
	assert_int_equal(imc_scn_mcast_show_count(NULL), 0);
	imc_scn_mcast_show_destroy(NULL);
}

/* ---- the recorder ---- */

static void test_show(void **state)
{
	struct imc_scenario *s = parse(
		TOPO
		"stop 2ms\n"
		"sa\n"
		"at 10us mcast-join H-000002 ff15::1 create as=a\n"
		"mcast-join H-000002 ff15::1 state=nonmember as=a2\n"
		"mcast-join H-000003 0 create mtu=4 as=n\n"
		"at 100us mcast-show\n"
		"at 200us mcast-leave a\n"
		"mcast-leave a2\n"
		"at 300us mcast-show\n");
	struct imc_scn_mcast_show *sh, *sh2;
	struct imc_scenario_result r;
	char *text, *json;

	(void)state;
	assert_int_equal(imc_scn_mcast_show_create(s, &sh), 0);
	assert_int_equal(imc_scn_mcast_show_create(s, &sh2), -EBUSY);
	run_ok(s, NULL, &r);
	imc_scenario_result_free(&r);
	assert_int_equal(imc_scn_mcast_show_count(sh), 3);
	text = show_text(sh, false);
	has(text, "mcast at 100us (mcast-show, line 7): 2 ports, 2 groups, 3 members\n"
		  "port H-000002:1 gid=fe80::2:c903:0:5 lid=3 sm_lid=1 state=ACTIVE groups=1 members=2 mads=1 retries=0 timeouts=0 rejoins=0 errors=0\n"
		  "  group ff15::1 mlid=0xc001 join_state=0x3 wanted=0x3 members=2 joined qkey=0x00001234 pkey=0xffff mtu=4 rate=7 sl=0 tclass=0 flow_label=0x00000 hop_limit=0 scope=0\n"
		  "port H-000003:1 gid=fe80::2:c903:0:7 lid=7 sm_lid=1 state=ACTIVE groups=1 members=1 mads=1 retries=0 timeouts=0 rejoins=0 errors=0\n"
		  "  group ff12:a01b:fe80:: mlid=0xc002 join_state=0x1 wanted=0x1 members=1 joined qkey=0x00001234 pkey=0xffff mtu=4 rate=7 sl=0 tclass=0 flow_label=0x00000 hop_limit=0 scope=0\n");
	has(text, "mcast at 300us (mcast-show, line 10): 2 ports, 1 groups, 1 members\n"
		  "port H-000002:1 gid=fe80::2:c903:0:5 lid=3 sm_lid=1 state=ACTIVE groups=0 members=0 mads=2");
	has(text, "mcast at the end of the run (2ms): 2 ports, 1 groups, 1 members\n");
	json = show_text(sh, true);
	assert_int_equal(json[0], '[');
	assert_int_equal(count_of(json, "\"at_ns\""), 3);
	assert_int_equal(count_of(json, "\"end\": true"), 1);
	has(json, "\"line\": 7, \"ports\": [\n      {\"host\": \"H-000002:1\", \"port_gid\": \"fe80::2:c903:0:5\", \"lid\": 3, \"sm_lid\": 1, \"state\": \"ACTIVE\",");
	has(json, "{\"mgid\": \"ff15::1\", \"mlid\": 49153, \"join_state\": 3, \"wanted\": 3, \"members\": 2, \"is_joined\": true, \"qkey\": 4660, \"pkey\": 65535, \"mtu\": 4, \"rate\": 7, \"sl\": 0, \"tclass\": 0, \"flow_label\": 0, \"hop_limit\": 0, \"scope\": 0}");
	free(text);
	free(json);
	/* A second run replaces the first's snapshots. */
	run_ok(s, NULL, &r);
	imc_scenario_result_free(&r);
	assert_int_equal(imc_scn_mcast_show_count(sh), 3);
	/* The recorder outlives the scenario. */
	imc_scenario_destroy(s);
	text = show_text(sh, false);
	assert_int_equal(count_of(text, "mcast at "), 3);
	free(text);
	imc_scn_mcast_show_destroy(sh);
}

/* ---- determinism and the example ---- */

static void test_example(void **state)
{
	char path[512], err[512], *out, *t1, *t2;
	struct imc_scenario *s, *s2;
	struct imc_scenario_parse_opts o = { .dir = IMC_SOURCE_DIR "/examples" };
	struct imc_scenario_result r, r2;
	struct imc_scn_mcast_show *sh;

	(void)state;
	snprintf(path, sizeof(path), "%s/examples/mcast-tracker.scn",
		 IMC_SOURCE_DIR);
	if (imc_scenario_parse_file(path, NULL, &s, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(imc_scn_mcast_show_create(s, &sh), 0);
	run_ok(s, NULL, &r);
	all_pass(&r);
	assert_true(r.nchecks >= 30);
	t1 = show_text(sh, true);
	/* The same seed: the same run. */
	run_ok(s, NULL, &r2);
	assert_int_equal(r.trace_hash, r2.trace_hash);
	assert_int_equal(r.events, r2.events);
	t2 = show_text(sh, true);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	imc_scenario_result_free(&r2);
	/* The canonical form runs the same. */
	out = print(s);
	if (imc_scenario_parse(out, strlen(out), "mcast-tracker", &o, &s2, err,
			       sizeof(err)))
		fail_msg("reprinted: %s", err);
	run_ok(s2, NULL, &r2);
	all_pass(&r2);
	assert_int_equal(r.trace_hash, r2.trace_hash);
	assert_int_equal(r.events, r2.events);
	free(out);
	imc_scenario_result_free(&r);
	imc_scenario_result_free(&r2);
	imc_scenario_destroy(s2);
	imc_scn_mcast_show_destroy(sh);
	imc_scenario_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lang),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_run_basic),
		cmocka_unit_test(test_run_events),
		cmocka_unit_test(test_run_failures),
		cmocka_unit_test(test_run_consistency),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_example),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
