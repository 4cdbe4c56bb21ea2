/* The report of a run (scenario.h, "the report"): the values each
 * section writes for a small scenario whose counts can be derived by
 * hand, sections left out when their module was not used, the order of
 * sections, errors of a section failing the run, and the text and JSON
 * forms.
 *
 * The scenario (switch:hosts=5, every cable 10 us; the SM and the SA on
 * H-000001):
 *  - IPoIB (IPv4 only) on H-000002..H-000004: three broadcast joins, each
 *    a Set over two cables and back (40 us and the serialization);
 *  - through the join tracker: H-000001 creates ff15::1 (its Set loops
 *    back on its own port), H-000002 joins as a NonMember and H-000003
 *    as a SendOnlyNonMember (each subscribes to trap 67, having no full
 *    bit: two InformInfo Sets), and a second member on H-000001 is
 *    answered without a MAD;
 *  - 7 datagrams into a cable that loses everything, 4 to the group.
 */
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

/* Reports are read from open_memstream(&buf, ...); gcc 12 at -O3 cannot
 * tell the stream's buffer from &buf itself and warns that pointers into
 * the report may dangle. It is heap memory. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif

#define US 1000ull

static const char scn[] =
	"topology switch:hosts=5\n"
	"seed 3\n"
	"stop 50ms\n"
	"links latency=10us\n"
	"sa\n"
	"fault H-000005 loss=100%\n"
	"at 1ms ipoib-up H-000002..H-000004 10.0.0.2/24\n"
	"at 2ms mcast-join H-000001 ff15::1 create as=a\n"
	"mcast-join H-000002 ff15::1 state=nonmember as=b\n"
	"mcast-join H-000003 ff15::1 state=sendonly as=c\n"
	"at 3ms mcast-join H-000001 ff15::1 as=a2\n"
	"at 5ms send H-000004 H-000005 count=7\n"
	"at 10ms mcast-send H-000003 ff15::1 count=4\n"
	"expect delivered H-000001 == 4\n"
	"expect delivered H-000002 == 4\n"
	"expect sa-members ff15::1 == 3\n"
	"expect delivered H-000004 == 1\n";    /* fails: nothing came */

static struct imc_scenario *parse_with(const char *text,
				       const struct imc_scn_lang *l)
{
	struct imc_scenario_parse_opts o = { .lang = l };
	struct imc_scenario *s = NULL;
	char err[512];
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", &o, &s, err,
				    sizeof(err));

	if (rc)
		fail_msg("parse failed (%d): %s", rc, err);
	return s;
}

static void run(const struct imc_scenario *s, struct imc_scenario_result *r)
{
	char err[512];
	int rc = imc_scenario_run(s, NULL, r, err, sizeof(err));

	if (rc)
		fail_msg("run failed (%d): %s", rc, err);
	assert_int_equal(r->leftover, 0);
}

static uint64_t u(const struct imc_scenario_result *r, const char *path)
{
	uint64_t v = 0;
	int rc = imc_scenario_report_u64(r, path, &v);

	if (rc)
		fail_msg("%s: %d", path, rc);
	return v;
}

static char *printed(const struct imc_scenario_result *r, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(imc_scenario_report_print(r, f, json), 0);
	fclose(f);
	return buf;
}

static void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

static void test_values(void **state)
{
	struct imc_scenario *s = parse_with(scn, NULL);
	struct imc_scenario_result r;
	const char *mgid;

	(void)state;
	run(s, &r);
	assert_int_equal(r.npassed, 3);
	assert_int_equal(r.nfailed, 1);

	/* sa: the broadcast group (3 full) and ff15::1 (one of each). */
	assert_int_equal(u(&r, "sa.groups"), 2);
	assert_int_equal(u(&r, "sa.members"), 6);
	assert_int_equal(u(&r, "sa.full"), 4);
	assert_int_equal(u(&r, "sa.nonmember"), 1);
	assert_int_equal(u(&r, "sa.sendonly"), 1);
	assert_int_equal(imc_scenario_report_len(&r, "sa.list"), 2);
	/* In MGID order: ff12:401b:... before ff15::1. */
	assert_string_equal(imc_scenario_report_str(&r, "sa.list.0.mgid"),
			    "ff12:401b:ffff::ffff:ffff");
	assert_string_equal(imc_scenario_report_str(&r, "sa.list.0.ip"),
			    "IPv4 broadcast");
	assert_int_equal(u(&r, "sa.list.0.mlid"), 0xC000);
	mgid = imc_scenario_report_str(&r, "sa.list.1.mgid");
	assert_non_null(mgid);
	assert_string_equal(mgid, "ff15::1");
	assert_int_equal(u(&r, "sa.list.1.members"), 3);
	assert_int_equal(u(&r, "sa.list.1.nonmember"), 1);
	assert_int_equal(u(&r, "sa.list.1.qkey"), 0x1234);
	assert_null(imc_scenario_report_str(&r, "sa.list.1.ip"));
	/* 3 + 3 joins, 2 subscriptions; nothing refused or lost. */
	assert_int_equal(u(&r, "sa.requests.served"), 8);
	assert_int_equal(u(&r, "sa.requests.set"), 8);
	assert_int_equal(u(&r, "sa.requests.delete"), 0);
	assert_int_equal(u(&r, "sa.requests.success"), 8);
	assert_int_equal(u(&r, "sa.requests.refused"), 0);
	assert_int_equal(u(&r, "sa.mads_lost.queue_full"), 0);
	assert_int_equal(u(&r, "sa.mads_lost.fabric"), 0);

	/* mcast: four members on three ports, one answered locally; the
	 * trackers are one per port, the interfaces' too (H-000002..4):
	 * four, whose MADs are the 3 + 3 joins and the 2 subscriptions. */
	assert_int_equal(u(&r, "mcast.trackers"), 4);
	assert_int_equal(u(&r, "mcast.members"), 4);
	assert_int_equal(u(&r, "mcast.joined"), 4);
	assert_int_equal(u(&r, "mcast.left"), 0);
	assert_int_equal(u(&r, "mcast.callbacks.joined"), 4);
	assert_int_equal(u(&r, "mcast.callbacks.error"), 0);
	assert_int_equal(u(&r, "mcast.joins_local"), 1);
	assert_int_equal(u(&r, "mcast.mads"), 8);

	/* joins: 3 IPoIB + 4 application joins on 4 trackers. Five went
	 * over two cables and back; H-000001's own loops back and the
	 * local one takes no time: the median is a remote one. */
	assert_int_equal(u(&r, "joins.trackers"), 4);
	assert_int_equal(u(&r, "joins.first.joined"), 7);
	assert_int_equal(u(&r, "joins.first.failed"), 0);
	assert_int_equal(u(&r, "joins.rejoin.joined"), 0);
	assert_int_equal(imc_scenario_report_u64(&r, "joins.rejoin.p50_ns",
						 &(uint64_t){ 0 }), -ENOENT);
	assert_in_range(u(&r, "joins.first.p50_ns"), 40 * US, 41 * US);
	assert_in_range(u(&r, "joins.first.max_ns"), 40 * US, 41 * US);
	assert_true(u(&r, "joins.first.p50_ns") <=
		    u(&r, "joins.first.p90_ns"));
	assert_true(u(&r, "joins.first.p90_ns") <=
		    u(&r, "joins.first.p99_ns"));
	assert_true(u(&r, "joins.first.p99_ns") <=
		    u(&r, "joins.first.max_ns"));

	/* packets: the fabric's totals, the 7 lost. */
	assert_int_equal(u(&r, "packets.sent"), r.totals.sent);
	assert_int_equal(u(&r, "packets.delivered"), r.totals.delivered);
	assert_int_equal(u(&r, "packets.dropped"), 7);
	assert_int_equal(u(&r, "packets.drops.loss"), 7);
	assert_int_equal(u(&r, "packets.drops.link_down"), 0);
	assert_int_equal(u(&r, "packets.mads_dropped"), 0);
	assert_true(u(&r, "packets.mads_sent") >= 16);  /* 8 asked, 8 told */
	assert_int_equal(u(&r, "packets.mads_sent"),
			 u(&r, "packets.mads_delivered"));

	/* ipoib: three interfaces up, one join each, nothing sent. */
	assert_int_equal(u(&r, "ipoib.interfaces"), 3);
	assert_int_equal(u(&r, "ipoib.carrier"), 3);
	assert_int_equal(u(&r, "ipoib.joins"), 3);
	assert_int_equal(u(&r, "ipoib.tx_packets"), 0);
	assert_int_equal(u(&r, "ipoib.dropped"), 0);

	/* expectations: lines 14-16 held, 17 failed. */
	assert_int_equal(u(&r, "expectations.held"), 3);
	assert_int_equal(u(&r, "expectations.failed"), 1);
	assert_int_equal(imc_scenario_report_len(&r,
						 "expectations.held_lines"), 3);
	assert_int_equal(u(&r, "expectations.held_lines.0"), 14);
	assert_int_equal(u(&r, "expectations.held_lines.2"), 16);

	/* Paths that are not there. */
	assert_int_equal(imc_scenario_report_u64(&r, "sa.nothing",
						 &(uint64_t){ 0 }), -ENOENT);
	assert_int_equal(imc_scenario_report_u64(&r, "sa.list",
						 &(uint64_t){ 0 }), -EINVAL);
	assert_int_equal(imc_scenario_report_u64(&r, "sa.list.2.mgid",
						 &(uint64_t){ 0 }), -ENOENT);
	assert_int_equal(imc_scenario_report_u64(&r, "sa.list.x",
						 &(uint64_t){ 0 }), -ENOENT);
	assert_int_equal(imc_scenario_report_u64(&r, "sa.groups.0",
						 &(uint64_t){ 0 }), -ENOENT);
	assert_null(imc_scenario_report_str(&r, "sa.groups"));
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static void test_text_and_json(void **state)
{
	struct imc_scenario *s = parse_with(scn, NULL);
	struct imc_scenario_result r;
	char *t, *j;
	const char *order[] = { "\n  sa ", "\n  mcast ", "\n  joins ",
				"\n  packets ", "\n  ipoib ",
				"\n  expectations " };
	const char *at = NULL;

	(void)state;
	run(s, &r);
	t = printed(&r, false);
	has(t, "report\n");
	has(t, "2 groups, 6 members at the end: 4 full, 1 non-member, 1 send-only");
	has(t, "0xc000 ff12:401b:ffff::ffff:ffff  IPv4 broadcast");
	has(t, "8 requests served (8 Set, 0 Delete, 0 Get/GetTable): 8 success, 0 refused");
	has(t, "requests  7 joined, 0 failed; latency p50 40.");
	has(t, "7 dropped: loss 7");
	has(t, "3 interfaces, 3 with carrier at the end");
	has(t, "3 of 4 held");
	has(t, "FAILED line 17: delivered H-000004 == 1");
	/* Sections in rank order; re-joins only when there were any. */
	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *p = strstr(t, order[i]);

		if (!p || p < at)
			fail_msg("'%s' missing or out of order:\n%s",
				 order[i], t);
		at = p;
	}
	assert_null(strstr(t, "re-joins  "));

	j = printed(&r, true);
	has(j, "{\n    \"sa\": {\n      \"groups\": 2,");
	has(j, "\"requests\": {\"served\": 8, \"get\": 0, \"set\": 8,");
	has(j, "\"held_lines\": [14, 15, 16]");
	has(j, "\"drops\": {\"link_down\": 0, \"loss\": 7,");
	assert_int_equal(j[strlen(j) - 1], '}');
	free(t);
	free(j);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* No SA, no IPoIB, no tracker: those sections are left out. */
static void test_unused_left_out(void **state)
{
	static const char plain[] =
		"topology switch:hosts=2\n"
		"stop 1ms\n"
		"at 0 send H-000001 H-000002 count=3\n"
		"expect delivered H-000002 == 3\n";
	struct imc_scenario *s = parse_with(plain, NULL);
	struct imc_scenario_result r;
	char *t;

	(void)state;
	run(s, &r);
	assert_int_equal(imc_scenario_report_len(&r, "sa"), 0);
	assert_int_equal(imc_scenario_report_len(&r, "mcast"), 0);
	assert_int_equal(imc_scenario_report_len(&r, "joins"), 0);
	assert_int_equal(imc_scenario_report_len(&r, "ipoib"), 0);
	assert_int_equal(u(&r, "packets.sent"), 3);
	assert_int_equal(u(&r, "packets.delivered"), 3);
	assert_int_equal(u(&r, "packets.mads_sent"), 0);
	assert_int_equal(u(&r, "expectations.held"), 1);
	t = printed(&r, false);
	assert_null(strstr(t, "\n  sa "));
	assert_null(strstr(t, "\n  joins "));
	has(t, "\n  packets      3 datagrams sent, 3 delivered");
	free(t);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* ---- sections of another module ---- */

static int calls;

static int first_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	(void)c;
	calls++;
	imc_scn_report_u64(rep, "n", 1);
	imc_scn_report_list(rep, "l");
	imc_scn_report_str(rep, NULL, "x");
	imc_scn_report_object(rep, NULL);
	imc_scn_report_u64(rep, "k", 2);
	imc_scn_report_end(rep);
	imc_scn_report_end(rep);
	imc_scn_report_line(rep, "first line");
	return 0;
}

static int empty_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	(void)c;
	(void)rep;
	calls++;
	return 0;
}

static int dup_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	(void)c;
	imc_scn_report_u64(rep, "a", 1);
	imc_scn_report_u64(rep, "a", 2);
	return 0;
}

static int badkey_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	(void)c;
	imc_scn_report_u64(rep, "Bad-Key", 1);
	return 0;
}

static int open_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	(void)c;
	imc_scn_report_object(rep, "o");
	return 0;
}

static int fail_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	imc_scn_report_u64(rep, "a", 1);
	return imc_scn_fail(c, -EIO, "the counters are gone");
}

static const struct imc_scn_section sec_first = {
	.name = "aaa-first", .rank = 10, .report = first_report,
};
static const struct imc_scn_section sec_empty = {
	.name = "empty", .rank = 20, .report = empty_report,
};
static const struct imc_scn_section sec_last = {
	.name = "zz-late", .rank = 1000, .report = first_report,
};

static void test_custom_sections(void **state)
{
	static const char plain[] =
		"topology switch:hosts=2\n"
		"stop 1ms\n";
	struct imc_scn_lang *l;
	struct imc_scenario *s;
	struct imc_scenario_result r;
	char *t, *j;

	(void)state;
	assert_int_equal(imc_scn_lang_create(&l), 0);
	assert_int_equal(imc_scn_lang_add_section(l, &sec_last), 0);
	assert_int_equal(imc_scn_lang_add_section(l, &sec_empty), 0);
	assert_int_equal(imc_scn_lang_add_section(l, &sec_first), 0);
	assert_int_equal(imc_scn_lang_add_section(l, &sec_first), -EEXIST);
	assert_int_equal(imc_scn_lang_add_section(l, &(struct imc_scn_section){
		.name = "packets", .report = empty_report }), -EEXIST);
	assert_int_equal(imc_scn_lang_add_section(l, &(struct imc_scn_section){
		.name = "Bad", .report = empty_report }), -EINVAL);
	assert_int_equal(imc_scn_lang_add_section(l, &(struct imc_scn_section){
		.name = "noreport" }), -EINVAL);
	s = parse_with(plain, l);
	calls = 0;
	run(s, &r);
	assert_int_equal(calls, 3);
	assert_int_equal(u(&r, "aaa-first.n"), 1);
	assert_string_equal(imc_scenario_report_str(&r, "aaa-first.l.0"), "x");
	assert_int_equal(u(&r, "aaa-first.l.1.k"), 2);
	assert_int_equal(imc_scenario_report_len(&r, "aaa-first.l"), 2);
	assert_int_equal(imc_scenario_report_len(&r, "aaa-first"), 2);
	assert_int_equal(imc_scenario_report_len(&r, "empty"), 0);
	t = printed(&r, false);
	/* rank 10 first, 1000 after the built-ins, the expectations last */
	assert_true(strstr(t, "aaa-first") < strstr(t, "packets"));
	assert_true(strstr(t, "packets") < strstr(t, "zz-late"));
	assert_true(strstr(t, "zz-late") < strstr(t, "expectations"));
	has(t, "  aaa-first    first line\n");
	assert_null(strstr(t, "empty"));
	j = printed(&r, true);
	has(j, "\"aaa-first\": {\n      \"n\": 1,\n      \"l\": [\n        \"x\",\n        {\"k\": 2}\n      ]\n    },");
	free(t);
	free(j);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	imc_scn_lang_destroy(l);
}

/* A section that fails, or writes what the report cannot hold, fails
 * the run with a message naming it. */
static void expect_run_error(const struct imc_scn_section *sec,
			     const char *want)
{
	static const char plain[] = "topology switch:hosts=2\nstop 1ms\n";
	struct imc_scn_lang *l;
	struct imc_scenario *s;
	struct imc_scenario_result r;
	char err[512];

	assert_int_equal(imc_scn_lang_create(&l), 0);
	assert_int_equal(imc_scn_lang_add_section(l, sec), 0);
	s = parse_with(plain, l);
	assert_true(imc_scenario_run(s, NULL, &r, err, sizeof(err)) < 0);
	if (strcmp(err, want))
		fail_msg("error\n  got  '%s'\n  want '%s'", err, want);
	assert_null(r.report);
	imc_scenario_destroy(s);
	imc_scn_lang_destroy(l);
}

static void test_section_errors(void **state)
{
	(void)state;
	expect_run_error(&(struct imc_scn_section){ .name = "dup",
						    .report = dup_report },
			 "t.scn: report: section dup: File exists");
	expect_run_error(&(struct imc_scn_section){ .name = "badkey",
						    .report = badkey_report },
			 "t.scn: report: section badkey: Invalid argument");
	expect_run_error(&(struct imc_scn_section){ .name = "open",
						    .report = open_report },
			 "t.scn: report: section open: Invalid argument");
	expect_run_error(&(struct imc_scn_section){ .name = "broken",
						    .report = fail_report },
			 "t.scn: report: section broken: the counters are gone");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_text_and_json),
		cmocka_unit_test(test_unused_left_out),
		cmocka_unit_test(test_custom_sections),
		cmocka_unit_test(test_section_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
