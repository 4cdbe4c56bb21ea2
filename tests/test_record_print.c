/* The library's printers of the SA engine's groups, members and counters
 * (ibmcast/sa.h) and of a join tracker's group line and counters
 * (ibmcast/mcast.h): exact text and JSON of known records, NULL refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa.h"

struct buf {
	char *p;
	size_t len;
	FILE *f;
};

static void buf_open(struct buf *b)
{
	memset(b, 0, sizeof(*b));
	b->f = open_memstream(&b->p, &b->len);
	assert_non_null(b->f);
}

static char *buf_close(struct buf *b)
{
	assert_int_equal(fclose(b->f), 0);
	return b->p;
}

static struct imc_sa_group_info group(void)
{
	struct imc_sa_group_info g;

	memset(&g, 0, sizeof(g));
	assert_int_equal(imc_gid_parse("ff12:401b:ffff::1", &g.rec.mgid), 0);
	g.rec.mlid = 0xC001;
	g.rec.qkey = 0x1234;
	g.rec.mtu = 4;
	g.rec.rate = 3;
	g.rec.pkey = 0xFFFF;
	g.rec.sl = 2;
	g.rec.flow_label = 0x12345;
	g.rec.scope = 2;
	g.members = 2;
	g.full_members = 1;
	g.persistent = true;
	return g;
}

static void test_sa_text(void **state)
{
	struct imc_sa_group_info g = group();
	struct imc_sa_member_info m = { .lid = 7, .join_state = 0x9,
					.proxy = true };
	struct buf b;
	char *s;

	(void)state;
	assert_int_equal(imc_gid_parse("fe80::2", &m.port_gid), 0);
	buf_open(&b);
	assert_int_equal(imc_sa_group_print_text(b.f, &g), 0);
	assert_int_equal(imc_sa_member_print_text(b.f, &g, &m, "H-1:1"), 0);
	assert_int_equal(imc_sa_member_print_text(b.f, &g, &m, NULL), 0);
	s = buf_close(&b);
	assert_non_null(strstr(s, "MCMemberRecord group dump:\n"
		"\t\tMGID....................ff12:401b:ffff::1\n"
		"\t\tMlid....................0xC001\n"
		"\t\tQkey....................0x00001234\n"));
	assert_non_null(strstr(s, "\t\tFlowLabel...............0x12345\n"));
	assert_non_null(strstr(s, "\t\tMembers.................2 (1 full), "
				  "persistent\n"));
	/* IBA 15.2.5.17: bit 0 FullMember, bit 3 SendOnlyFullMember. */
	assert_non_null(strstr(s, "\t\tJoinState...............0x9 "
				  "(Full+SendOnlyFullMember)\n"
				  "\t\tProxyJoin...............0x1\n"
				  "\t\tNodeDescription.........H-1:1\n"));
	assert_non_null(strstr(s, "NodeDescription.........<unknown>\n"));
	free(s);
	assert_int_equal(imc_sa_group_print_text(NULL, &g), -EINVAL);
	assert_int_equal(imc_sa_group_print_text(stdout, NULL), -EINVAL);
	assert_int_equal(imc_sa_member_print_text(stdout, &g, NULL, NULL),
			 -EINVAL);
}

static void test_sa_json(void **state)
{
	struct imc_sa_group_info g = group();
	struct imc_sa_member_info m[2] = {
		{ .lid = 7, .join_state = 1 }, { .lid = 9, .join_state = 2 },
	};
	const char *nodes[2] = { "H-1:1", NULL };
	struct imc_sa_stats st;
	struct imc_json j;
	struct buf b;
	char *s;

	(void)state;
	memset(&st, 0, sizeof(st));
	st.groups = 3;
	st.mlids_total = 16384;
	st.mft_removes = 5;
	buf_open(&b);
	imc_json_init(&j, b.f, 0, 0);
	imc_json_array_begin(&j);
	assert_int_equal(imc_sa_group_print_json(&j, &g, m, nodes, 2), 0);
	assert_int_equal(imc_sa_group_print_json(&j, &g, m, NULL, 1), 0);
	assert_int_equal(imc_sa_stats_print_json(&j, &st), 0);
	imc_json_array_end(&j);
	assert_int_equal(imc_json_finish(&j), 0);
	s = buf_close(&b);
	assert_non_null(strstr(s, "\"mlid\":49153,\"qkey\":4660,\"mtu\":4,"
				  "\"rate\":3,\"pkey\":65535"));
	assert_non_null(strstr(s, "\"persistent\":true,\"full_members\":1"));
	assert_non_null(strstr(s, "\"lid\":7,\"join_state\":1,"
				  "\"proxy_join\":false,\"node\":\"H-1:1\""));
	assert_non_null(strstr(s, "\"join_state\":2,\"proxy_join\":false,"
				  "\"node\":null"));
	/* Without names, no node key. */
	assert_non_null(strstr(s, "\"lid\":7,\"join_state\":1,"
				  "\"proxy_join\":false}]"));
	assert_non_null(strstr(s, "{\"groups\":3,\"members\":0,"
				  "\"mlids_in_use\":0,\"mlids_total\":16384,"));
	assert_non_null(strstr(s, "\"mft_adds\":0,\"mft_removes\":5}"));
	free(s);
	assert_int_equal(imc_sa_group_print_json(&j, &g, NULL, NULL, 1),
			 -EINVAL);
	assert_int_equal(imc_sa_stats_print_json(NULL, &st), -EINVAL);
}

static void test_mcast(void **state)
{
	struct imc_mcast_group_info g;
	struct imc_mcast_stats st;
	struct imc_json j;
	struct buf b;
	char *s;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(&st, 0, sizeof(st));
	g.rec = group().rec;
	g.rec.hop_limit = 1;
	g.join_state = 1;
	g.wanted = 3;
	g.members = 2;
	st.joins = 4;
	st.members = 2;
	buf_open(&b);
	assert_int_equal(imc_mcast_group_info_print_text(b.f, &g), 0);
	g.joined = true;
	assert_int_equal(imc_mcast_group_info_print_text(b.f, &g), 0);
	imc_json_init(&j, b.f, 0, 0);
	assert_int_equal(imc_mcast_stats_print_json(&j, &st), 0);
	assert_int_equal(imc_json_finish(&j), 0);
	s = buf_close(&b);
	assert_string_equal(s,
		"group ff12:401b:ffff::1 mlid=0xc001 join_state=0x1 "
		"wanted=0x3 members=2 pending qkey=0x00001234 pkey=0xffff "
		"mtu=4 rate=3 sl=2 tclass=0 flow_label=0x12345 hop_limit=1 "
		"scope=2\n"
		"group ff12:401b:ffff::1 mlid=0xc001 join_state=0x1 "
		"wanted=0x3 members=2 joined qkey=0x00001234 pkey=0xffff "
		"mtu=4 rate=3 sl=2 tclass=0 flow_label=0x12345 hop_limit=1 "
		"scope=2\n"
		"{\"joins\":4,\"leaves\":0,\"joins_local\":0,\"mads_sent\":0,"
		"\"retries\":0,\"timeouts\":0,\"rejoins\":0,\"errors\":0,"
		"\"members\":2}");
	free(s);
	assert_int_equal(imc_mcast_group_info_print_text(NULL, &g), -EINVAL);
	assert_int_equal(imc_mcast_stats_print_json(NULL, &st), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sa_text),
		cmocka_unit_test(test_sa_json),
		cmocka_unit_test(test_mcast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
