/* ibmcastd's policy (src/mcastd/policy.c): first match wins, a join no
 * rule matches is refused, JoinState bits and P_Keys narrow a rule, the
 * default lets root and one group do everything, and every error names
 * FILE:LINE and the fault. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcastd_policy.h"

static int lookup(void *ctx, const char *name, uint32_t *id)
{
	if (!strcmp(name, "alice")) {
		*id = 1001;
		return 0;
	}
	if (!strcmp(name, "ibmcast")) {
		*id = 500;
		return 0;
	}
	return -ENOENT;
}

static const struct imc_mcastd_policy_resolver names = {
	.user = lookup, .group = lookup,
};

static int shipped_lookup(void *ctx, const char *name, uint32_t *id)
{
	if (!strcmp(name, "root")) {
		*id = 0;
		return 0;
	}
	return lookup(ctx, name, id);
}

static const struct imc_mcastd_policy_resolver shipped_names = {
	.user = shipped_lookup, .group = shipped_lookup,
};

static const char text[] =
	"# example\n"
	"allow user:0\n"
	"\n"
	"deny user:alice mgid ff12:401b::/32 state full\n"     /* line 4 */
	"allow group:ibmcast mgid ff12:401b::/32,ff15::1-ff15::ff "
	"state full,sendonly pkey 0xffff,0x8001-0x80ff\n"     /* line 5 */
	"allow * mgid 0,ff1e::5 state nonmember  # trailing comment\n";

static struct imc_mcastd_policy *parse_ok(const char *t)
{
	struct imc_mcastd_policy *p = NULL;
	char err[256];

	assert_int_equal(imc_mcastd_policy_parse(t, strlen(t), "p.conf",
						 &names, &p, err,
						 sizeof(err)), 0);
	assert_non_null(p);
	return p;
}

static int ask(const struct imc_mcastd_policy *p, uint32_t uid,
	       uint32_t gid, uint32_t sup, const char *mgid, uint8_t js,
	       int pkey, unsigned *line)
{
	struct imc_mcastd_policy_peer peer = { uid, gid, &sup, sup ? 1 : 0 };
	struct imc_mcastd_policy_query q = { .join_state = js };

	if (strcmp(mgid, "0"))
		assert_int_equal(imc_gid_parse(mgid, &q.mgid), 0);
	if (pkey >= 0) {
		q.has_pkey = true;
		q.pkey = (uint16_t)pkey;
	}
	return imc_mcastd_policy_check(p, &peer, &q, line);
}

static void test_first_match(void **state)
{
	struct imc_mcastd_policy *p = parse_ok(text);
	unsigned line;

	assert_int_equal(imc_mcastd_policy_rules(p), 4);
	/* root: everything, by line 2 */
	assert_int_equal(ask(p, 0, 0, 0, "ff12:401b::9", 0xf, -1, &line), 0);
	assert_int_equal(line, 2);
	/* alice in group ibmcast: the deny of line 4 comes first for full */
	assert_int_equal(ask(p, 1001, 100, 500, "ff12:401b::9", 1, 0xffff,
			     &line), -EACCES);
	assert_int_equal(line, 4);
	/* ... but not for sendonly (SendOnlyNonMember, 0x4): line 5 allows it */
	assert_int_equal(ask(p, 1001, 100, 500, "ff12:401b::9", 4, 0xffff,
			     &line), 0);
	assert_int_equal(line, 5);
	/* the group as supplementary or primary group */
	assert_int_equal(ask(p, 2000, 500, 0, "ff15::80", 1, 0x8010, &line), 0);
	assert_int_equal(ask(p, 2000, 100, 500, "ff15::80", 1, 0x8010, &line),
			 0);
	/* outside the range, the prefix, the P_Keys, the JoinStates */
	assert_int_equal(ask(p, 2000, 500, 0, "ff15::100", 1, 0xffff, &line),
			 -EACCES);
	assert_int_equal(ask(p, 2000, 500, 0, "ff12:401c::1", 1, 0xffff,
			     &line), -EACCES);
	assert_int_equal(ask(p, 2000, 500, 0, "ff15::1", 1, 0x8100, &line),
			 -EACCES);
	assert_int_equal(ask(p, 2000, 500, 0, "ff15::1", 2, 0xffff, &line),
			 -EACCES);
	/* a P_Key list matches only a join that names its P_Key */
	assert_int_equal(ask(p, 2000, 500, 0, "ff15::1", 1, -1, &line),
			 -EACCES);
	/* anyone: NonMember of ff1e::5 and of SA-chosen MGIDs, nothing else */
	assert_int_equal(ask(p, 3000, 3000, 0, "ff1e::5", 2, -1, &line), 0);
	assert_int_equal(line, 6);
	assert_int_equal(ask(p, 3000, 3000, 0, "0", 2, 0x1234, &line), 0);
	assert_int_equal(ask(p, 3000, 3000, 0, "ff1e::5", 3, -1, &line),
			 -EACCES);
	assert_int_equal(line, 0);
	assert_int_equal(ask(p, 3000, 3000, 0, "ff1e::6", 2, -1, &line),
			 -EACCES);
	imc_mcastd_policy_destroy(p);
}

static void test_default(void **state)
{
	struct imc_mcastd_policy *p = NULL;
	unsigned line;

	assert_int_equal(imc_mcastd_policy_default(true, 77, &p), 0);
	assert_int_equal(ask(p, 0, 0, 0, "ff12::1", 0xf, -1, &line), 0);
	assert_int_equal(ask(p, 1000, 77, 0, "ff12::1", 1, 5, &line), 0);
	assert_int_equal(ask(p, 1000, 1, 77, "0", 8, -1, &line), 0);
	assert_int_equal(ask(p, 1000, 1, 78, "ff12::1", 1, -1, &line),
			 -EACCES);
	imc_mcastd_policy_destroy(p);
	assert_int_equal(imc_mcastd_policy_default(false, 0, &p), 0);
	assert_int_equal(ask(p, 1000, 0, 0, "ff12::1", 1, -1, &line),
			 -EACCES);
	assert_int_equal(ask(p, 0, 0, 0, "ff12::1", 1, -1, &line), 0);
	imc_mcastd_policy_destroy(p);
}

static void expect_error(const char *t, int rc, const char *msg)
{
	struct imc_mcastd_policy *p = NULL;
	char err[256];

	assert_int_equal(imc_mcastd_policy_parse(t, strlen(t), "p.conf",
						 &names, &p, err,
						 sizeof(err)), rc);
	assert_null(p);
	if (!strstr(err, msg))
		fail_msg("'%s' lacks '%s'", err, msg);
}

static void test_errors(void **state)
{
	expect_error("allow user:0\npermit *\n", -EINVAL,
		     "p.conf:2: expected allow or deny, not 'permit'");
	expect_error("\n\nallow user:bob\n", -EINVAL,
		     "p.conf:3: unknown user 'bob'");
	expect_error("allow group:nogroup\n", -EINVAL,
		     "p.conf:1: unknown group 'nogroup'");
	expect_error("allow\n", -EINVAL, "p.conf:1: expected user:NAME");
	expect_error("allow * mgid fe80::1\n", -EINVAL,
		     "p.conf:1: 'fe80::1' is not a multicast GID");
	expect_error("allow * mgid ff15::9-ff15::1\n", -EINVAL,
		     "ends before it starts");
	expect_error("allow * mgid ff12::/4\n", -EINVAL,
		     "prefix /4 reaches beyond ff00::/8");
	expect_error("allow * mgid ff12::/129\n", -EINVAL,
		     "bad prefix length '129'");
	expect_error("allow * state 16\n", -EINVAL, "bad JoinState '16'");
	expect_error("allow * state full state full\n", -EINVAL,
		     "p.conf:1: state given twice");
	expect_error("allow * pkey 0x10000\n", -EINVAL, "bad P_Key");
	expect_error("allow * pkey\n", -EINVAL, "pkey needs a value");
	expect_error("allow * qkey 5\n", -EINVAL, "unknown word 'qkey'");
	expect_error("allow * mgid ,\n", -EINVAL, "empty mgid list");
	{
		char big[IMC_POLICY_MAX_LINE + 16];

		memset(big, ' ', sizeof(big));
		memcpy(big, "allow *", 7);
		big[sizeof(big) - 1] = '\0';
		expect_error(big, -EINVAL, "p.conf:1: line longer than");
	}
}

static void test_print_round_trip(void **state)
{
	struct imc_mcastd_policy *p = parse_ok(text), *q;
	char *a, *b;
	size_t la, lb;

	assert_int_equal(imc_mcastd_policy_print(p, &a, &la), 0);
	assert_non_null(strstr(a, "deny user:1001 mgid "
			       "ff12:401b::-ff12:401b:ffff:ffff:ffff:ffff:"
			       "ffff:ffff state 1\n"));
	assert_non_null(strstr(a, "allow * mgid 0,ff1e::5 state 2\n"));
	q = parse_ok(a);
	assert_int_equal(imc_mcastd_policy_print(q, &b, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	imc_mcastd_policy_destroy(p);
	imc_mcastd_policy_destroy(q);
}

static void test_load(void **state)
{
	char path[] = "/tmp/imc-policy-XXXXXX", err[256];
	struct imc_mcastd_policy *p = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	assert_int_equal(imc_mcastd_policy_load(path, &names, &p, err,
						sizeof(err)), 0);
	assert_int_equal(imc_mcastd_policy_rules(p), 4);
	imc_mcastd_policy_destroy(p);
	unlink(path);
	p = NULL;
	assert_int_equal(imc_mcastd_policy_load(path, &names, &p, err,
						sizeof(err)), -ENOENT);
	assert_null(p);
	assert_non_null(strstr(err, "No such file"));
}

/* The policy shipped in dist/ parses and says what its comments say. */
static void test_shipped(void **state)
{
	struct imc_mcastd_policy *p = NULL;
	char err[256];
	unsigned line;

	if (imc_mcastd_policy_load(IMC_SOURCE_DIR "/dist/ibmcastd.policy",
				   &shipped_names, &p, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(imc_mcastd_policy_rules(p), 3);
	assert_int_equal(ask(p, 0, 0, 0, "ff1e::1", 0xf, -1, &line), 0);
	assert_int_equal(ask(p, 1000, 1000, 500, "ff12:401b::1", 1, -1,
			     &line), 0);
	assert_int_equal(ask(p, 1000, 1000, 0, "ff15::10", 1, -1, &line),
			 -EACCES);
	assert_int_equal(ask(p, 1000, 1000, 0, "ff15::10", 8, -1, &line), 0);
	imc_mcastd_policy_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_match),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_print_round_trip),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_shipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
