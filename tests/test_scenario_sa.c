/* The SA in scenarios (scenario_sa.h): the sa setting and the sa-* verbs
 * and subjects through the canonical print, their parse errors, runs on
 * small fabrics with exact results (groups, members, statuses, MGID
 * assignment, deliveries over the SA's trees, pruning on leave), the
 * MFT order race (answer-first loses what program-first delivers), a
 * join storm against a small queue with and without retries, the
 * --sa-show recorder, determinism, and the example scenarios.
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
#include "ibmcast/scenario_sa.h"
#include "scenario_fixture.h"

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"

static const struct imc_scenario_check *
check_at(const struct imc_scenario_result *r, unsigned line)
{
	for (unsigned i = 0; i < r->nchecks; i++)
		if (r->checks[i].line == line)
			return &r->checks[i];
	fail_msg("no check for line %u", line);
	return NULL;
}

static const struct imc_scenario_host *
host(const struct imc_scenario_result *r, const char *name)
{
	for (unsigned i = 0; i < r->nhosts; i++)
		if (!strcmp(r->hosts[i].name, name))
			return &r->hosts[i];
	return NULL;
}

static uint64_t delivered(const struct imc_scenario_result *r,
			  const char *name)
{
	const struct imc_scenario_host *h = host(r, name);

	return h ? h->delivered : 0;
}

static char *show_text(const struct imc_scn_sa_show *sh, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(imc_scn_sa_show_print(sh, f, json), 0);
	fclose(f);
	return buf;
}

/* ---- language ---- */

static void test_lang(void **state)
{
	static const char *const verbs[] = {
		"sa", "sa-join", "sa-leave", "sa-get", "sa-mcast", "sa-show",
		"sa-restart",
	};
	static const char *const subjects[] = {
		"sa-status", "sa-groups", "sa-members", "sa-mlid",
		"sa-requests", "sa-answers", "sa-dropped", "sa-timeouts",
		"sa-errors",
	};
	struct imc_scn_lang *l;

	(void)state;
	assert_int_equal(imc_scn_lang_create(&l), 0);
	for (unsigned i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		assert_non_null(imc_scn_lang_verb(l, verbs[i]));
	assert_int_equal(imc_scn_lang_verb(l, "sa")->kind, IMC_SCN_SETTING);
	assert_int_equal(imc_scn_lang_verb(l, "sa-join")->kind,
			 IMC_SCN_ACTION);
	for (unsigned i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++)
		assert_non_null(imc_scn_lang_subject(l, subjects[i]));
	/* The built-in language has them already. */
	assert_int_equal(imc_scn_lang_add_sa(l), -EEXIST);
	imc_scn_lang_destroy(l);
}

/* ---- parse and print ---- */

static const char every_form[] =
	TOPO
	"stop 1ms\n"
	"sa rate=500 queue=8 order=answer-first mft-delay=5us mlids=64\n"
	"at 10us sa-join H-000002 0 create as=g state=full+sendonly-full "
	"qkey=0x11 pkey=0x7fff tclass=3 sl=2 flow=0x12345 hop=4 scope=5 "
	"mtu=gt:3 rate=max:6 life=min:7 mlid=0xc005 send=5 size=128 "
	"interval=2us retries=3 timeout=1ms\n"
	"sa-join H-000003 @g proxy=H-000004 state=nonmember\n"
	"sa-join H-000004 ff15::1 mtu=4 state=0x6\n"
	"sa-leave H-000003 @g\n"
	"at 20us sa-leave H-000004:1 ff15::1 state=0 proxy=H-000003 retries=1\n"
	"sa-get H-000001 ff15::1 timeout=50us\n"
	"sa-mcast H-000001 @g count=3 size=12 interval=1us sl=1\n"
	"sa-mcast H-000002 ff15::1\n"
	"sa-show\n"
	"at 30us expect sa-status H-000002 @g == success\n"
	"expect sa-status H-000002 0 != timeout\n"
	"expect sa-status H-000003 ff15::1 == 0x0300\n"
	"expect sa-status H-000003 ff15::2 in success..req-invalid\n"
	"expect sa-groups == 2\n"
	"expect sa-members @g in 1..3\n"
	"expect sa-mlid ff15::1 == 0xc005\n"
	"expect sa-requests H-000003 == sa-answers H-000003\n"
	"expect sa-requests == sa-answers + sa-dropped\n"
	"expect sa-timeouts == 0\n";

static const char every_form_printed[] =
	"sa rate=500/s queue=8 order=answer-first mft-delay=5us mlids=64\n"
	"at 10us sa-join H-000002:1 0 state=full+sendonly-full qkey=0x00000011 "
	"pkey=0x7fff tclass=3 sl=2 flow=0x12345 hop=4 scope=5 mtu=gt:3 "
	"rate=max:6 life=min:7 mlid=0xc005 create as=g send=5 size=128 "
	"interval=2us retries=3 timeout=1ms\n"
	"at 10us sa-join H-000003:1 @g state=nonmember proxy=H-000004:1\n"
	"at 10us sa-join H-000004:1 ff15::1 state=nonmember+sendonly mtu=eq:4\n"
	"at 10us sa-leave H-000003:1 @g\n"
	"at 20us sa-leave H-000004:1 ff15::1 state=0 proxy=H-000003:1 "
	"retries=1\n"
	"at 20us sa-get H-000001:1 ff15::1 timeout=50us\n"
	"at 20us sa-mcast H-000001:1 @g count=3 size=12 interval=1us sl=1\n"
	"at 20us sa-mcast H-000002:1 ff15::1 count=1 size=64 interval=1us "
	"sl=0\n"
	"at 20us sa-show\n"
	"at 30us expect sa-status H-000002:1 @g == success\n"
	"expect sa-status H-000002:1 0 != timeout\n"
	"expect sa-status H-000003:1 ff15::1 == no-records\n"
	"expect sa-status H-000003:1 ff15::2 in success..req-invalid\n"
	"expect sa-groups == 2\n"
	"expect sa-members @g in 1..3\n"
	"expect sa-mlid ff15::1 == 0xc005\n"
	"expect sa-requests H-000003:1 == sa-answers H-000003:1\n"
	"expect sa-requests == sa-answers + sa-dropped\n"
	"expect sa-timeouts == 0\n";

static void test_print(void **state)
{
	struct imc_scenario *s, *s2;
	char *out, *out2;

	(void)state;
	s = parse(every_form);
	assert_int_equal(imc_scenario_nactions(s), 9);
	assert_int_equal(imc_scenario_nexpects(s), 10);
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

	/* Defaults print nothing; an sa line alone prints as "sa". */
	s = parse(TOPO "sa\nsa-join H-000001 ff15::1\n");
	out = print(s);
	has(out, "\nsa\nat 0 sa-join H-000001:1 ff15::1\n");
	free(out);
	imc_scenario_destroy(s);

	/* A flow's size= and interval= print with send=N, N > 0, only (with
	 * their defaults then); retries=0 is the default and prints
	 * nothing. */
	s = parse(TOPO "sa\nsa-join H-000001 ff15::1 send=0 size=100 "
		  "interval=3us retries=0\nsa-join H-000002 ff15::1 send=2\n");
	out = print(s);
	has(out, "\nat 0 sa-join H-000001:1 ff15::1\n"
		 "at 0 sa-join H-000002:1 ff15::1 send=2 size=64 interval=1us\n");
	free(out);
	imc_scenario_destroy(s);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error(TOPO "sa\nsa queue=2\n",
		     "t.scn:3: sa: the SA is set already on line 2");
	expect_error(TOPO "sa rate=fast\n",
		     "t.scn:2: sa: rate: expected a number, got 'fast'");
	expect_error(TOPO "sa rate=10/ms\n",
		     "t.scn:2: sa: rate: expected requests per second (1000 or 1000/s), got '10/ms'");
	expect_error(TOPO "sa queue=0\n", "t.scn:2: sa: queue: at least 1");
	expect_error(TOPO "sa order=random\n",
		     "t.scn:2: sa: order: expected program-first or answer-first, got 'random'");
	expect_error(TOPO "sa mft-delay=5us\n",
		     "t.scn:2: sa: mft-delay= is the delay of order=answer-first");
	expect_error(TOPO "sa mlids=16384\n",
		     "t.scn:2: sa: mlids: 16384 is out of range (at most 16383)");
	expect_error(TOPO "sa colour=red\n",
		     "t.scn:2: sa: expected rate=, queue=, order=, mft-delay=, mlids=, partitions= or bcast-qkey=, got 'colour=red'");
	expect_error(TOPO "at 0 sa queue=1\n",
		     "t.scn:2: 'sa' is a setting: it takes no time");
	expect_error(TOPO "sa-join H-000001\n",
		     "t.scn:2: sa-join: expected 'sa-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [as=NAME] [proxy=HOST] [send=N size= interval=] [retries= timeout=]'");
	expect_error(TOPO "sa-join S-0001 ff15::1\n",
		     "t.scn:2: sa-join: 'S-0001' is a switch; expected a host (HCA)");
	expect_error(TOPO "sa-join H-000001 ff15:::1\n",
		     "t.scn:2: sa-join: MGID: expected a GID (ff12:...), 0 or @NAME, got 'ff15:::1'");
	expect_error(TOPO "sa-join H-000001 @nope\n",
		     "t.scn:2: sa-join: @nope: no sa-join ... as=nope on an earlier line");
	expect_error(TOPO "sa-join H-000001 0 create as=a\n"
		     "sa-join H-000002 0 create as=a\n",
		     "t.scn:3: sa-join: as=a: an earlier line has that name");
	expect_error(TOPO "sa-join H-000001 0 as=a/b\n",
		     "t.scn:2: sa-join: as: expected a name of letters, digits, '_', '-' or '.' (at most 32), got 'a/b'");
	expect_error(TOPO "sa-join H-000001 ff15::1 state=full+\n",
		     "t.scn:2: sa-join: state: expected full, nonmember, sendonly, sendonly-full (joined by +) or 0..15, got 'full+'");
	expect_error(TOPO "sa-join H-000001 ff15::1 state=owner\n",
		     "t.scn:2: sa-join: state: expected full, nonmember, sendonly, sendonly-full (joined by +) or 0..15, got 'owner'");
	expect_error(TOPO "sa-join H-000001 ff15::1 state=16\n",
		     "t.scn:2: sa-join: state: 16 is out of range (at most 15)");
	expect_error(TOPO "sa-join H-000001 ff15::1 mtu=ge:4\n",
		     "t.scn:2: sa-join: mtu: expected gt, lt, eq, max or min before ':', got 'ge:4'");
	expect_error(TOPO "sa-join H-000001 ff15::1 rate=eq:64\n",
		     "t.scn:2: sa-join: rate: 64 is out of range (at most 63)");
	expect_error(TOPO "sa-join H-000001 ff15::1 flow=0x100000\n",
		     "t.scn:2: sa-join: flow: 0x100000 is out of range (at most 1048575)");
	expect_error(TOPO "sa-join H-000001 ff15::1 timeout=0\n",
		     "t.scn:2: sa-join: timeout: longer than 0");
	expect_error(TOPO "sa-join H-000001 ff15::1 retries=1001\n",
		     "t.scn:2: sa-join: retries: 1001 is out of range (at most 1000)");
	expect_error(TOPO "sa-join H-000001 ff15::1 create create\n",
		     "t.scn:2: sa-join: create given twice on this line");
	expect_error(TOPO "sa-join H-000001 ff15::1 noqp\n",
		     "t.scn:2: sa-join: unknown option 'noqp'; expected 'sa-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [as=NAME] [proxy=HOST] [send=N size= interval=] [retries= timeout=]'");
	/* Options of sa-join only. */
	expect_error(TOPO "sa-leave H-000001 ff15::1 create\n",
		     "t.scn:2: sa-leave: unknown option 'create'; expected 'sa-leave HOST MGID|@NAME [state=...] [proxy=HOST] [retries= timeout=]'");
	expect_error(TOPO "sa-get H-000001 ff15::1 state=full\n",
		     "t.scn:2: sa-get: unknown option 'state=full'; expected 'sa-get HOST MGID|@NAME [retries= timeout=]'");
	expect_error(TOPO "sa-mcast H-000001 ff15::1 count=0\n",
		     "t.scn:2: sa-mcast: count: expected at least 1");
	expect_error(TOPO "sa-mcast H-000001 ff15::1 pkey=1\n",
		     "t.scn:2: sa-mcast: expected count=, size=, interval= or sl=, got 'pkey=1'");
	expect_error(TOPO "sa-show now\n",
		     "t.scn:2: sa-show: expected 'sa-show' alone");
	expect_error(TOPO "expect sa-status H-000001 == success\n",
		     "t.scn:2: sa-status: expected HOST and an MGID, 0 or @NAME");
	expect_error(TOPO "expect sa-status H-000001 ff15::1 == joined\n",
		     "t.scn:2: value: expected a number, got 'joined'");
	expect_error(TOPO "expect sa-groups ff15::1 == 1\n",
		     "t.scn:2: sa-groups: expected no argument");
	expect_error(TOPO "expect sa-members == 1\n",
		     "t.scn:2: sa-members: expected an MGID or @NAME");
	expect_error(TOPO "expect sa-requests H-000001 H-000002 == 1\n",
		     "t.scn:2: sa-requests: expected at most one host");
	/* A label is defined by an earlier line only. */
	expect_error(TOPO "expect sa-mlid @later == 0\n"
		     "sa-join H-000001 0 create as=later\n",
		     "t.scn:2: sa-mlid: @later: no sa-join ... as=later on an earlier line");
}

/* ---- runs ---- */

static void test_run_groups(void **state)
{
	struct imc_scenario *s = parse(
		TOPO                                                   /* 1 */
		"stop 1ms\n"                                           /* 2 */
		"sa\n"                                                 /* 3 */
		"at 10us sa-join H-000002 ff15::7 create mlid=0xc007 qkey=0x77\n" /* 4 */
		"sa-join H-000003 0 create as=auto\n"                  /* 5 */
		"at 20us sa-join H-000004 ff15::7\n"                   /* 6 */
		"sa-join H-000001 @auto\n"                             /* 7 */
		"sa-join H-000003 ff15::8\n"                           /* 8 */
		"sa-join H-000003 ff15::7 qkey=0x78\n"                 /* 9 */
		"sa-get H-000002 ff15::9\n"                            /* 10 */
		"at 50us mcast H-000004 0xc007 count=4\n"              /* 11 */
		"sa-mcast H-000001 @auto count=3\n"                    /* 12 */
		"at 60us expect sa-members ff15::7 == 2\n"             /* 13 */
		"at 60us expect sa-members @auto == 2\n"               /* 14 */
		"at 100us sa-leave H-000004 ff15::7\n"                 /* 15 */
		"at 150us mcast H-000002 0xc007 count=2\n"             /* 16 */
		"expect sa-status H-000002 ff15::7 == success\n"       /* 17 */
		"expect sa-status H-000003 0 == success\n"             /* 18 */
		"expect sa-status H-000003 @auto == success\n"         /* 19 */
		"expect sa-status H-000001 @auto == success\n"         /* 20 */
		"expect sa-status H-000003 ff15::8 == insuf-comps\n"   /* 21 */
		"expect sa-status H-000003 ff15::7 == req-invalid\n"   /* 22 */
		"expect sa-status H-000002 ff15::9 == no-records\n"    /* 23 */
		"expect sa-status H-000004 ff15::7 == success\n"       /* 24 */
		"expect sa-status H-000001 ff15::7 == none\n"          /* 25 */
		"expect sa-groups == 3\n"                              /* 26 */
		"expect sa-members ff15::7 == 1\n"                     /* 27 */
		"expect sa-mlid ff15::7 == 0xc007\n"                   /* 28 */
		"expect sa-mlid @auto == 0xc001\n"                     /* 29 */
		"expect sa-mlid ff15::8 == 0\n"                        /* 30 */
		"expect sa-requests == 8\n"                            /* 31 */
		"expect sa-answers == 8\n"                             /* 32 */
		"expect sa-requests H-000003 == 3\n"                   /* 33 */
		"expect sa-dropped == 0\n"                             /* 34 */
		"expect sa-timeouts == 0\n");                          /* 35 */
	struct imc_scenario_result r;
	struct imc_scn_sa_show *sh;
	char *txt;

	(void)state;
	assert_int_equal(imc_scn_sa_show_create(s, &sh), 0);
	run_ok(s, NULL, &r);
	all_pass(&r);
	assert_int_equal(check_at(&r, 24)->observed, 0);
	assert_string_equal(check_at(&r, 21)->observed_str, "insuf-comps");
	assert_int_equal(check_at(&r, 21)->observed, 0x0600);
	assert_int_equal(check_at(&r, 22)->observed, 0x0200);
	assert_int_equal(check_at(&r, 23)->observed, 0x0300);
	assert_string_equal(check_at(&r, 28)->observed_str, "0xc007");
	/* The group by MLID (built-in mcast): H-000002 gets H-000004's 4;
	 * after H-000004 left, its 2 reach nobody. @auto: H-000001 sends,
	 * H-000003 gets them. */
	assert_int_equal(delivered(&r, "H-000002"), 4);
	assert_int_equal(delivered(&r, "H-000004"), 0);
	assert_int_equal(delivered(&r, "H-000003"), 3);
	assert_int_equal(delivered(&r, "H-000001"), 0);
	assert_int_equal(r.totals.drops[IMC_DROP_NO_MFT], 0);
	/* H-000004's port left the tree: nothing reached it, no drop. */
	assert_int_equal(r.totals.drops[IMC_DROP_NO_QP], 0);
	assert_int_equal(host(&r, "H-000004")->sent, 4);
	assert_int_equal(host(&r, "H-000002")->sent, 2);

	/* The recorder: the end of the run, groups and members. */
	assert_int_equal(imc_scn_sa_show_count(sh), 1);
	txt = show_text(sh, false);
	has(txt, "SA at the end of the run (1ms): 3 groups, 3 members, "
		 "3 of 16383 MLIDs in use, ");
	has(txt, "MCMemberRecord group dump:\n"
		 "\t\tMGID....................ff12:a01b:fe80::\n"
		 "\t\tMlid....................0xC001\n"
		 "\t\tQkey....................0x00001234\n"
		 "\t\tMtu.....................0x4\n"
		 "\t\tRate....................0x7\n"
		 "\t\tpkey....................0xFFFF\n"
		 "\t\tSL......................0x0\n");
	has(txt, "\t\tMGID....................ff15::7\n"
		 "\t\tMlid....................0xC007\n"
		 "\t\tQkey....................0x00000077\n");
	has(txt, "\t\tMembers.................0 (0 full), persistent\n");
	has(txt, "MCMemberRecord member dump:\n"
		 "\t\tMGID....................ff15::7\n"
		 "\t\tMlid....................0xC007\n"
		 "\t\tPortGid.................fe80::2:c903:0:5\n"
		 "\t\tJoinState...............0x1 (Full)\n"
		 "\t\tProxyJoin...............0x0\n"
		 "\t\tNodeDescription.........H-000002:1\n");
	has(txt, "\t\tNodeDescription.........H-000001:1\n");
	has(txt, "\t\tNodeDescription.........H-000003:1\n");
	assert_int_equal(count_of(txt, "MCMemberRecord group dump:"), 3);
	assert_int_equal(count_of(txt, "MCMemberRecord member dump:"), 3);
	free(txt);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	/* The recorder outlives its scenario and keeps its copies. */
	assert_int_equal(imc_scn_sa_show_count(sh), 1);
	txt = show_text(sh, false);
	has(txt, "H-000003:1");
	free(txt);
	imc_scn_sa_show_destroy(sh);
}

/* Proxy joins, send-only members, JoinState arithmetic on leave, and
 * sa-show snapshots at their times. */
static void test_run_states(void **state)
{
	struct imc_scenario *s = parse(
		TOPO                                                   /* 1 */
		"stop 1ms\n"                                           /* 2 */
		"sa\n"                                                 /* 3 */
		"at 10us sa-join H-000002 ff15::1 create\n"            /* 4 */
		"at 20us sa-join H-000003 ff15::1 state=full+sendonly-full\n" /* 5 */
		"sa-join H-000002 ff15::1 proxy=H-000004 state=nonmember\n" /* 6 */
		"sa-join H-000001 ff15::1 state=sendonly\n"            /* 7 */
		"at 40us sa-show\n"                                    /* 8 */
		"at 50us sa-mcast H-000001 ff15::1 count=6\n"          /* 9 */
		/* Leaving Full keeps SendOnlyFullMember: no more receiving. */
		"at 100us sa-leave H-000003 ff15::1 state=full\n"      /* 10 */
		/* A proxy-made record: any port of the partition may end it. */
		"sa-leave H-000001 ff15::1 proxy=H-000004\n"           /* 11 */
		"at 150us sa-mcast H-000001 ff15::1 count=2\n"         /* 12 */
		"at 200us sa-show\n"                                   /* 13 */
		"expect sa-members ff15::1 == 3\n"                     /* 14 */
		"expect sa-status H-000001 ff15::1 == success\n");     /* 15 */
	struct imc_scenario_result r;
	struct imc_scn_sa_show *sh, *sh2;
	char *txt, *first;

	(void)state;
	assert_int_equal(imc_scn_sa_show_create(s, &sh), 0);
	assert_int_equal(imc_scn_sa_show_create(s, &sh2), -EBUSY);
	assert_null(sh2);
	run_ok(s, NULL, &r);
	all_pass(&r);
	/* Six to H-000002, H-000003 and H-000004; the send-only H-000001
	 * sends. Then two to H-000002 alone; H-000003 (send-only now) is
	 * still on the tree and drops them with no QP attached. */
	assert_int_equal(delivered(&r, "H-000002"), 8);
	assert_int_equal(delivered(&r, "H-000003"), 6);
	assert_int_equal(delivered(&r, "H-000004"), 6);
	assert_int_equal(r.totals.drops[IMC_DROP_NO_QP], 2);
	assert_int_equal(r.totals.drops[IMC_DROP_NO_MFT], 0);

	assert_int_equal(imc_scn_sa_show_count(sh), 3);
	txt = show_text(sh, false);
	first = strstr(txt, "SA at 40us (sa-show, line 8): 2 groups, 4 members");
	assert_non_null(first);
	has(txt, "SA at 200us (sa-show, line 13): 2 groups, 3 members");
	has(txt, "SA at the end of the run (1ms): 2 groups, 3 members");
	has(first, "\t\tJoinState...............0x9 (Full+SendOnlyFullMember)\n");
	has(first, "\t\tJoinState...............0x4 (SendOnlyNonMember)\n");
	has(first, "\t\tJoinState...............0x2 (NonMember)\n"
		   "\t\tProxyJoin...............0x1\n"
		   "\t\tNodeDescription.........H-000004:1\n");
	has(strstr(txt, "SA at 200us"),
	    "\t\tJoinState...............0x8 (SendOnlyFullMember)\n");
	free(txt);

	/* JSON: one array, an object per snapshot. */
	txt = show_text(sh, true);
	assert_int_equal(txt[0], '[');
	assert_int_equal(txt[strlen(txt) - 1], ']');
	assert_int_equal(count_of(txt, "\"at_ns\": "), 3);
	has(txt, "{\"at_ns\": 40000, \"at\": \"40us\", \"line\": 8, ");
	has(txt, "{\"at_ns\": 1000000, \"at\": \"1ms\", \"end\": true, ");
	has(txt, "\"join_state\": 2, \"proxy_join\": true, \"node\": \"H-000004:1\"}");
	has(txt, "{\"mgid\": \"ff15::1\", \"mlid\": 49153, \"qkey\": 4660, ");
	free(txt);

	/* A second run replaces what the first recorded. */
	imc_scenario_result_free(&r);
	run_ok(s, NULL, &r);
	assert_int_equal(imc_scn_sa_show_count(sh), 3);
	imc_scn_sa_show_destroy(sh);
	/* Detached: runs record nothing, and a new recorder may attach. */
	imc_scenario_result_free(&r);
	run_ok(s, NULL, &r);
	assert_int_equal(imc_scn_sa_show_create(s, &sh), 0);
	assert_int_equal(imc_scn_sa_show_count(sh), 0);
	txt = show_text(sh, true);
	assert_string_equal(txt, "[]");
	free(txt);
	imc_scn_sa_show_destroy(sh);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* ---- the MFT order race ---- */

/* H-000002 creates the group, H-000001 joins after it (both on L-0001;
 * at the same time the SM host's own request, looped back, would come
 * first and find no group); at 100us
 * H-000004 on L-0002 joins and sends 20 datagrams 1us apart from the
 * moment its answer arrives. Returns the scenario (free it after r) and
 * the run; the no-mft drops and deliveries tell what was lost. */
static struct imc_scenario *mft_run(const char *sa_line,
				    struct imc_scenario_result *r)
{
	char text[1024];
	struct imc_scenario *s;

	snprintf(text, sizeof(text),
		 TOPO
		 "stop 1ms\n"
		 "%s\n"
		 "at 0 sa-join H-000002 ff15::1 create\n"
		 "at 10us sa-join H-000001 ff15::1\n"
		 "at 100us sa-join H-000004 ff15::1 send=20 interval=1us\n"
		 "expect sa-status H-000004 ff15::1 == success\n",
		 sa_line);
	s = parse(text);
	run_ok(s, NULL, r);
	all_pass(r);
	assert_int_equal(host(r, "H-000004")->sent, 20);
	assert_int_equal(host(r, "H-000004")->send_errors, 0);
	return s;
}

static void test_mft_order(void **state)
{
	struct imc_scenario_result r;
	struct imc_scenario *s;
	uint64_t lost[3];
	static const char *const delays[] = { "5us", "10us", "20us" };

	(void)state;
	/* Program first: the branch exists before the answer leaves. */
	s = mft_run("sa order=program-first", &r);
	assert_int_equal(r.totals.drops[IMC_DROP_NO_MFT], 0);
	assert_int_equal(delivered(&r, "H-000002"), 20);
	assert_int_equal(delivered(&r, "H-000001"), 20);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	/* The default is program-first too. */
	s = mft_run("sa", &r);
	assert_int_equal(r.totals.drops[IMC_DROP_NO_MFT], 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);

	/* Answer first: what is sent before the entries are written dies at
	 * L-0002 (no MFT entry); the rest reaches both members. The longer
	 * the delay, the more is lost, one datagram a microsecond. */
	for (unsigned i = 0; i < 3; i++) {
		char line[64];

		snprintf(line, sizeof(line),
			 "sa order=answer-first mft-delay=%s", delays[i]);
		s = mft_run(line, &r);
		lost[i] = r.totals.drops[IMC_DROP_NO_MFT];
		assert_int_equal(delivered(&r, "H-000002"), 20 - lost[i]);
		assert_int_equal(delivered(&r, "H-000001"), 20 - lost[i]);
		for (int d = 0; d < IMC_DROP__COUNT; d++)
			if (d != IMC_DROP_NO_MFT)
				assert_int_equal(r.totals.drops[d], 0);
		imc_scenario_result_free(&r);
		imc_scenario_destroy(s);
	}
	assert_int_equal(lost[0], 5);
	assert_int_equal(lost[1], 10);
	assert_int_equal(lost[2], 20);
}

/* ---- storms ---- */

static void test_storm(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;

	(void)state;
	/* No retries: eight joins at once against a queue of two; the
	 * dropped ones time out (100ms) and say so. */
	s = parse("topology switch:hosts=9\n"
		  "stop 300ms\n"
		  "sa rate=1000 queue=2\n"
		  "at 0 sa-join H-000002 ff15::5 create\n"
		  "sa-join H-000003 ff15::5 create\n"
		  "sa-join H-000004 ff15::5 create\n"
		  "sa-join H-000005 ff15::5 create\n"
		  "sa-join H-000006 ff15::5 create\n"
		  "sa-join H-000007 ff15::5 create\n"
		  "sa-join H-000008 ff15::5 create\n"
		  "sa-join H-000009 ff15::5 create\n"
		  "at 50ms expect sa-timeouts == 0\n"                   /* 12 */
		  "at 50ms expect sa-status H-000009 ff15::5 == pending\n" /* 13 */
		  "expect sa-requests == 8\n"                           /* 14 */
		  "expect sa-answers >= 0\n"                            /* 15 */
		  "expect sa-dropped >= 0\n"                            /* 16 */
		  "expect sa-timeouts == sa-dropped\n"                  /* 17 */
		  "expect sa-requests == sa-answers + sa-dropped\n"     /* 18 */
		  "expect sa-members ff15::5 == sa-answers\n"           /* 19 */
		  "expect sa-status H-000009 ff15::5 == timeout\n"      /* 20 */
		  "expect sa-status H-000002 ff15::5 == success\n");    /* 21 */
	run_ok(s, NULL, &r);
	all_pass(&r);
	/* One served at once, two queued: three members, five dropped. */
	assert_int_equal(check_at(&r, 15)->observed, 3);
	assert_int_equal(check_at(&r, 16)->observed, 5);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);

	/* Retries every 5ms: every host gets in, the drops add requests. */
	s = parse("topology switch:hosts=9\n"
		  "stop 300ms\n"
		  "sa rate=1000 queue=2\n"
		  "at 0 sa-join H-000002 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000003 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000004 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000005 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000006 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000007 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000008 ff15::5 create retries=5 timeout=5ms\n"
		  "sa-join H-000009 ff15::5 create retries=5 timeout=5ms\n"
		  "expect sa-members ff15::5 == 8\n"                    /* 12 */
		  "expect sa-answers == 8\n"                            /* 13 */
		  "expect sa-dropped > 0\n"                             /* 14 */
		  "expect sa-requests == sa-answers + sa-dropped\n"     /* 15 */
		  "expect sa-timeouts == 0\n"                           /* 16 */
		  "expect sa-status H-000009 ff15::5 == success\n");    /* 17 */
	run_ok(s, NULL, &r);
	all_pass(&r);
	/* 5 dropped at 0; 3 more by then served; 2 dropped at 5ms. */
	assert_int_equal(check_at(&r, 14)->observed, 7);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* ---- failures and determinism ---- */

/* A cable between switches goes down and up: the SA's trees follow it
 * (sa_fabric.h: only HCA cables give port events). Here a host's cable
 * makes the SA sweep while leaf 2 is cut off, so its tree leaves leaf 2
 * out; the spine cable comes back and the SA must sweep again. */
static void test_switch_link(void **state)
{
	struct imc_scenario_result r;
	struct imc_scenario *s;

	(void)state;
	s = parse("topology fat-tree:leaves=2,hosts=2,spines=1\n"
		  "stop 50ms\n"
		  "sa\n"
		  "at 1ms sa-join H-000001 ff15::1 create\n"
		  "sa-join H-000003 ff15::1\n"
		  "at 5ms link down S-0001:2\n"
		  "at 6ms link down H-000002\n"
		  "at 20ms link up S-0001:2\n"
		  "at 30ms sa-mcast H-000001 ff15::1 count=5\n"
		  "expect sa-members ff15::1 == 2\n");
	run_ok(s, NULL, &r);
	all_pass(&r);
	assert_int_equal(delivered(&r, "H-000003"), 5);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static void test_run_errors(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;
	struct imc_scn_sa_show *sh = (struct imc_scn_sa_show *)&sh;
	char err[512];

	(void)state;
	/* An SA verb without an sa line: the run stops at that line. */
	s = parse(TOPO "stop 1ms\nat 10us sa-join H-000002 ff15::1 create\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.scn:3: sa-join: no SA runs: the scenario has no 'sa' line");
	assert_int_equal(imc_scn_sa_show_create(s, &sh), -ENOENT);
	assert_null(sh);
	assert_int_equal(imc_scn_sa_show_create(NULL, &sh), -EINVAL);
	imc_scenario_destroy(s);

	/* A subject too. */
	s = parse(TOPO "stop 1ms\nexpect sa-groups == 1\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.scn:3: expect: no SA runs: the scenario has no 'sa' line");
	imc_scenario_destroy(s);

	/* A label whose join failed has no MGID to send to. */
	s = parse(TOPO "stop 1ms\nsa\n"
		  "at 10us sa-join H-000002 0 as=x\n"
		  "at 50us sa-mcast H-000003 @x\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.scn:5: sa-mcast: @x has no MGID yet: its sa-join has not succeeded");
	imc_scenario_destroy(s);

	/* sa-mcast to a group the SA does not have. */
	s = parse(TOPO "stop 1ms\nsa\nat 10us sa-mcast H-000003 ff15::4\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "t.scn:4: sa-mcast: the SA has no group ff15::4");
	imc_scenario_destroy(s);

	/* Until the run ends, an unanswered request is pending; the MLID
	 * pool of one is taken by the broadcast group: NO_RESOURCES. */
	s = parse(TOPO "stop 1ms\nsa mlids=1\n"
		  "at 10us sa-join H-000002 ff15::1 create\n"
		  "at 10us expect sa-status H-000002 ff15::1 == pending\n"
		  "expect sa-status H-000002 ff15::1 == no-resources\n");
	run_ok(s, NULL, &r);
	all_pass(&r);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);

	/* A host whose cable is down cannot send: an error, then the
	 * request times out. A request lost on a cable that went down is
	 * sent again after its timeout (100us), once the port is back
	 * (10us after the cable, the SM's sweep), and answered. */
	s = parse(TOPO "stop 1ms\nsa\nfabric sweep=10us\n"
		  "at 10us link down H-000002\n"
		  "at 20us sa-join H-000002 ff15::1 create timeout=100us\n"
		  "sa-join H-000003 ff15::2 create timeout=100us retries=2\n"
		  "link down H-000003\n"
		  "at 50us expect sa-status H-000002 ff15::1 == pending\n"
		  "at 60us link up H-000003\n"
		  "expect sa-errors == 1\n"
		  "expect sa-requests == 2\n"
		  "expect sa-answers == 1\n"
		  "expect sa-timeouts == 1\n"
		  "expect sa-status H-000002 ff15::1 == timeout\n"
		  "expect sa-status H-000003 ff15::2 == success\n");
	run_ok(s, NULL, &r);
	all_pass(&r);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);

	assert_int_equal(imc_scn_sa_show_print(NULL, stdout, false), -EINVAL);
	assert_int_equal(imc_scn_sa_show_count(NULL), 0);
	imc_scn_sa_show_destroy(NULL);
}

static void test_determinism(void **state)
{
	char path[512], err[512];
	struct imc_scenario *s;
	struct imc_scenario_result r1, r2, r3;
	struct imc_scenario_run_opts o = { .seed_set = true, .seed = 77 };
	struct imc_scn_sa_show *sh;
	char *t1, *t2;

	(void)state;
	snprintf(path, sizeof(path), "%s/examples/sa-groups.scn",
		 IMC_SOURCE_DIR);
	assert_int_equal(imc_scenario_parse_file(path, NULL, &s, err,
						 sizeof(err)), 0);
	assert_int_equal(imc_scn_sa_show_create(s, &sh), 0);
	run_ok(s, NULL, &r1);
	t1 = show_text(sh, true);
	run_ok(s, NULL, &r2);
	t2 = show_text(sh, true);
	assert_int_equal(r1.trace_hash, r2.trace_hash);
	assert_int_equal(r1.events, r2.events);
	assert_memory_equal(&r1.totals, &r2.totals, sizeof(r1.totals));
	assert_string_equal(t1, t2);
	free(t2);
	/* Another seed: the same SA state (nothing here is random). */
	run_ok(s, &o, &r3);
	assert_int_equal(r3.seed, 77);
	t2 = show_text(sh, true);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	imc_scenario_result_free(&r1);
	imc_scenario_result_free(&r2);
	imc_scenario_result_free(&r3);
	imc_scn_sa_show_destroy(sh);
	imc_scenario_destroy(s);
}

static void test_examples(void **state)
{
	static const char *const names[] = {
		"sa-groups", "sa-mft-program-first", "sa-mft-answer-first",
		"sa-join-storm",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512], err[512], *out;
		struct imc_scenario *s, *s2;
		struct imc_scenario_parse_opts o = {
			.dir = IMC_SOURCE_DIR "/examples",
		};
		struct imc_scenario_result r, r2;

		snprintf(path, sizeof(path), "%s/examples/%s.scn",
			 IMC_SOURCE_DIR, names[i]);
		if (imc_scenario_parse_file(path, NULL, &s, err, sizeof(err)))
			fail_msg("%s", err);
		run_ok(s, NULL, &r);
		all_pass(&r);
		assert_true(r.nchecks >= 6);
		/* The canonical form runs the same. */
		out = print(s);
		if (imc_scenario_parse(out, strlen(out), names[i], &o, &s2,
				       err, sizeof(err)))
			fail_msg("%s reprinted: %s", names[i], err);
		run_ok(s2, NULL, &r2);
		all_pass(&r2);
		assert_int_equal(r.trace_hash, r2.trace_hash);
		assert_int_equal(r.events, r2.events);
		free(out);
		imc_scenario_result_free(&r);
		imc_scenario_result_free(&r2);
		imc_scenario_destroy(s2);
		imc_scenario_destroy(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lang),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_run_groups),
		cmocka_unit_test(test_run_states),
		cmocka_unit_test(test_mft_order),
		cmocka_unit_test(test_storm),
		cmocka_unit_test(test_switch_link),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
