/* Scenarios: values and words, every verb and expectation form through
 * the canonical print, every parse error with FILE:LINE, the extension
 * tables, and runs on small fabrics (results, failures, determinism,
 * seed and until overrides, capture). */
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

#include "ibmcast/pcap.h"
#include "ibmcast/scenario.h"

#define SCENARIO_FIXTURE_OWN_PARSE
#include "scenario_fixture.h"

/* Two leaves (L-0001, L-0002), two spines (S-0001, S-0002), two hosts per
 * leaf: H-000001/2 on L-0001 ports 1-2, H-000003/4 on L-0002; leaf port
 * 2+s goes to spine s, spine port l to leaf l. */
static struct imc_topo *topo;

static int group_setup(void **state)
{
	char err[256];

	return imc_topo_generate("fat-tree:leaves=2,hosts=2,spines=2", &topo,
				 err, sizeof(err));
}

static int group_teardown(void **state)
{
	imc_topo_destroy(topo);
	return 0;
}

static struct imc_scenario *parse_with(const char *text,
				       const struct imc_scn_lang *lang)
{
	struct imc_scenario_parse_opts o = { .lang = lang, .topo = topo };

	return scn_fx_parse(text, &o);
}

static struct imc_scenario *parse(const char *text)
{
	return parse_with(text, NULL);
}

/* Parses text (with or without the fixed topology) and checks that it
 * fails with exactly the message want. */
static void expect_error(const char *text, bool with_topo, const char *want)
{
	struct imc_scenario_parse_opts o = { .topo = with_topo ? topo : NULL };

	scn_fx_expect_error(text, &o, want);
}

static void test_time_values(void **state)
{
	static const struct {
		const char *word;
		int rc;
		imc_time_t t;
	} cases[] = {
		{ "0", 0, 0 },
		{ "0ns", 0, 0 },
		{ "5ns", 0, 5 },
		{ "10us", 0, 10000 },
		{ "3ms", 0, 3000000 },
		{ "2s", 0, 2000000000 },
		{ "1.5ms", 0, 1500000 },
		{ "0.25s", 0, 250000000 },
		{ "1.000001ms", 0, 1000001 },
		/* IMC_TIME_LIMIT, 2^62 ns, and one past it. */
		{ "4611686018427387904ns", 0, 1ull << 62 },
		{ "4611686018.427387904s", 0, 1ull << 62 },
		{ "4611686018427387905ns", -ERANGE, 0 },
		{ "4611686019s", -ERANGE, 0 },
		/* Past 64 bits: no wrap to a small time. */
		{ "18446744073709551615ns", -ERANGE, 0 },
		{ "18446744073.709551615s", -ERANGE, 0 },
		{ "18446744073709551616ns", -ERANGE, 0 },
		{ "18446744073709551617ns", -ERANGE, 0 },
		{ "18446744074s", -ERANGE, 0 },
		{ "99999999999999999999999s", -ERANGE, 0 },
		{ "1.5ns", -EINVAL, 0 },
		{ "0.0000000001s", -EINVAL, 0 },
		{ "5", -EINVAL, 0 },
		{ "ms", -EINVAL, 0 },
		{ "1.ms", -EINVAL, 0 },
		{ ".5ms", -EINVAL, 0 },
		{ "-1ms", -EINVAL, 0 },
		{ "1msx", -EINVAL, 0 },
		{ "1Ms", -EINVAL, 0 },
		{ "0x10ms", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		imc_time_t t = 12345;
		int rc = imc_scn_parse_time(NULL, "t", cases[i].word, &t);

		if (rc != cases[i].rc)
			fail_msg("'%s': rc %d, want %d", cases[i].word, rc,
				 cases[i].rc);
		assert_int_equal(t, rc ? 12345 : cases[i].t);
	}
}

static void test_time_format(void **state)
{
	static const struct {
		imc_time_t t;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 7, "7ns" }, { 1000, "1us" }, { 1500, "1500ns" },
		{ 1500000, "1500us" }, { 2000000, "2ms" },
		{ 2000000000, "2s" }, { 90000000000ull, "90s" },
		{ 1ull << 62, "4611686018427387904ns" },
	};
	char buf[32];

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		imc_time_t back;

		imc_scn_format_time(cases[i].t, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
		assert_int_equal(imc_scn_parse_time(NULL, "t", buf, &back), 0);
		assert_int_equal(back, cases[i].t);
	}
}

static void test_number_values(void **state)
{
	uint64_t v = 0;
	double p = -1;

	assert_int_equal(imc_scn_parse_uint(NULL, "n", "10", 100, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "0xC001", 0xffff, &v), 0);
	assert_int_equal(v, 0xc001);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "18446744073709551615",
					    UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "18446744073709551616",
					    UINT64_MAX, &v), -ERANGE);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "0x10000000000000000",
					    UINT64_MAX, &v), -ERANGE);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "101", 100, &v), -ERANGE);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "0x", 100, &v), -EINVAL);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "1e3", 10000, &v), -EINVAL);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "+1", 10, &v), -EINVAL);
	assert_int_equal(imc_scn_parse_uint(NULL, "n", "", 10, &v), -EINVAL);

	assert_int_equal(imc_scn_parse_prob(NULL, "p", "5%", &p), 0);
	assert_true(p == 0.05);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.25", &p), 0);
	assert_true(p == 0.25);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "1", &p), 0);
	assert_true(p == 1.0);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "100%", &p), 0);
	assert_true(p == 1.0);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.123456789", &p), 0);
	assert_true(p == 0.123456789);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.000000001", &p), 0);
	assert_true(p == 1e-9);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.0000001%", &p), 0);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.0000000009", &p),
			 -ERANGE);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.00000001%", &p),
			 -ERANGE);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "0.", &p), -EINVAL);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "1.5", &p), -ERANGE);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "101%", &p), -ERANGE);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "-0.1", &p), -EINVAL);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "1e-3", &p), -EINVAL);
	assert_int_equal(imc_scn_parse_prob(NULL, "p", "%", &p), -EINVAL);

	assert_int_equal(imc_scn_parse_bps(NULL, "b", "40Gbps", &v), 0);
	assert_int_equal(v, 40000000000ull);
	assert_int_equal(imc_scn_parse_bps(NULL, "b", "2.5Gbps", &v), 0);
	assert_int_equal(v, 2500000000ull);
	assert_int_equal(imc_scn_parse_bps(NULL, "b", "100", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(imc_scn_parse_bps(NULL, "b", "1Tbps", &v), 0);
	assert_int_equal(v, 1000000000000ull);
	assert_int_equal(imc_scn_parse_bps(NULL, "b", "1.5bps", &v), -EINVAL);
	assert_int_equal(imc_scn_parse_bps(NULL, "b", "40G", &v), -EINVAL);
	assert_int_equal(imc_scn_parse_bps(NULL, "b", "20000000Tbps", &v),
			 -ERANGE);
}

static void test_kv(void **state)
{
	const char *v = NULL;

	assert_true(imc_scn_kv("count=10", "count", &v));
	assert_string_equal(v, "10");
	assert_true(imc_scn_kv("count=", "count", &v));
	assert_string_equal(v, "");
	assert_false(imc_scn_kv("counts=1", "count", &v));
	assert_false(imc_scn_kv("count", "count", &v));
	assert_false(imc_scn_kv("size=1", "count", &v));
}

/* ---- the canonical form: every verb and expectation form ---- */

static const char every_form[] =
	"# every verb\n"
	"topology fat-tree:leaves=2,hosts=2,spines=2   # comment\n"
	"seed 0x10\n"
	"stop 1.5s\n"
	"fabric mtu=4096 rate=7 rq=64 sweep=250us prefix=0xfec0000000000000\n"
	"links latency=1us bandwidth=2.5Gbps loss=0.1% dup=0 reorder=1% reorder-delay=3us\n"
	"\n"
	"fault L-0001:3 loss=5% dup=0.5\n"
	"at 0 group 0xc001 ff12:601b::1 H-000001 \"H-000002\":1 pkey=0xffff qkey=0x11\n"
	"group 0xC002 FF12:A01B::2 all\n"
	"send H-000001 H-000003 count=10 size=100 interval=2ms grh pkey=0x8001 qkey=7 sl=15\n"
	"at 10us mcast H-000002 0xc001 count=3\n"
	"\tmcast   H-000002 0xc002 qkey=0x1234\n"
	"at 1ms link down S-0001:1\n"
	"at 1ms link up S-0001:1\n"
	"at 2ms sm move H-000004\n"
	"reregister all\n"
	"reregister H-000003:1\n"
	"lid H-000003 0x40\n"
	"lid H-000002 65\n"
	"pkeys H-000004 0xffff 0x8001 0x0002\n"
	"at 3ms expect state H-000001 == ACTIVE\n"
	"at 3ms expect drops link_down S-0001:1 in 0..5\n"
	"at end expect lid H-000003 != 0x40\n"
	"expect delivered H-000001 >= sent H-000002 + 2 - drops all\n"
	"expect hops < 100\n"
	"expect smlid H-000001 <= lid H-000004\n"
	"expect dups > 0\n"
	"expect send-errors H-000001 == 0\n"
	"expect lost L-0001:3 in 1..2\n"
	"expect duplicated L-0001:3 == 0\n"
	"expect reordered L-0001:3 == 0\n"
	"expect packets L-0001:3 == 0\n"
	"expect tx H-000001 == rx H-000003\n"
	"expect drops pkey == 0\n"
	"expect sent == 0\n"
	"expect delivered == 0\n"
	"expect state S-0001:2 in down..active\n";

static const char every_form_printed[] =
	"topology fat-tree:leaves=2,hosts=2,spines=2\n"
	"seed 16\n"
	"stop 1500ms\n"
	"fabric mtu=4096 rate=7 rq=64 sweep=250us prefix=0xfec0000000000000\n"
	"links latency=1us bandwidth=2500000000bps loss=0.001 dup=0 reorder=0.01 reorder-delay=3us\n"
	"at 0 fault L-0001:3 loss=0.05 dup=0.5\n"
	"at 0 group 0xc001 ff12:601b::1 H-000001:1 H-000002:1 pkey=0xffff qkey=0x00000011\n"
	"at 0 group 0xc002 ff12:a01b::2 all pkey=0xffff qkey=0x00001234\n"
	"at 0 send H-000001:1 H-000003:1 count=10 size=100 interval=2ms sl=15 pkey=0x8001 qkey=0x00000007 grh\n"
	"at 10us mcast H-000002:1 0xc001 count=3 size=64 interval=1us sl=0\n"
	"at 10us mcast H-000002:1 0xc002 count=1 size=64 interval=1us sl=0 qkey=0x00001234\n"
	"at 1ms link down S-0001:1\n"
	"at 1ms link up S-0001:1\n"
	"at 2ms sm move H-000004:1\n"
	"at 2ms reregister all\n"
	"at 2ms reregister H-000003:1\n"
	"at 2ms lid H-000003:1 0x0040\n"
	"at 2ms lid H-000002:1 0x0041\n"
	"at 2ms pkeys H-000004:1 0xffff 0x8001 0x0002\n"
	"at 3ms expect state H-000001:1 == active\n"
	"at 3ms expect drops link-down S-0001:1 in 0..5\n"
	"expect lid H-000003:1 != 0x0040\n"
	"expect delivered H-000001:1 >= sent H-000002:1 + 2 - drops all\n"
	"expect hops < 100\n"
	"expect smlid H-000001:1 <= lid H-000004:1\n"
	"expect dups > 0\n"
	"expect send-errors H-000001:1 == 0\n"
	"expect lost L-0001:3 in 1..2\n"
	"expect duplicated L-0001:3 == 0\n"
	"expect reordered L-0001:3 == 0\n"
	"expect packets L-0001:3 == 0\n"
	"expect tx H-000001:1 == rx H-000003:1\n"
	"expect drops pkey == 0\n"
	"expect sent == 0\n"
	"expect delivered == 0\n"
	"expect state S-0001:2 in down..active\n";

static void test_every_form(void **state)
{
	struct imc_scenario *s = parse(every_form), *s2;
	struct imc_fabric_config c;
	char *out, *out2;

	assert_int_equal(imc_scenario_seed(s), 16);
	assert_int_equal(imc_scenario_stop(s), 1500000000ull);
	assert_int_equal(imc_scenario_nactions(s), 14);
	assert_int_equal(imc_scenario_nexpects(s), 17);
	assert_string_equal(imc_scenario_topo_desc(s),
			    "fat-tree:leaves=2,hosts=2,spines=2");
	assert_ptr_equal(imc_scenario_topo(s), topo);
	imc_scenario_config(s, &c);
	assert_int_equal(c.seed, 16);
	assert_int_equal(c.mtu, 5);
	assert_int_equal(c.rate, 7);
	assert_int_equal(c.rq_depth, 64);
	assert_int_equal(c.sm_sweep_delay, 250000);
	assert_int_equal(c.subnet_prefix, 0xfec0000000000000ull);
	assert_int_equal(c.link.latency, 1000);
	assert_int_equal(c.link.bits_per_sec, 2500000000ull);
	assert_true(c.link.loss == 0.001);
	assert_true(c.link.dup == 0);
	assert_true(c.link.reorder == 0.01);
	assert_int_equal(c.link.reorder_delay, 3000);

	out = print(s);
	assert_string_equal(out, every_form_printed);
	/* The canonical form parses to a scenario that prints the same. */
	s2 = parse(out);
	out2 = print(s2);
	assert_string_equal(out2, out);
	free(out);
	free(out2);
	imc_scenario_destroy(s2);
	imc_scenario_destroy(s);
}

/* Untimed actions run at the time of the line before; defaults. */
static void test_current_time(void **state)
{
	struct imc_scenario *s = parse(
		"stop 10ms\n"
		"send H-000001 H-000002\n"
		"at 5ms link down L-0001:3\n"
		"link up L-0001:3\n"
		"at 6ms expect state L-0001:3 == active\n"
		"reregister all\n");
	char *out = print(s);

	assert_string_equal(out,
		"seed 1\n"
		"stop 10ms\n"
		"fabric mtu=2048 rate=7 rq=512 sweep=1ms prefix=0xfe80000000000000\n"
		"links latency=100ns bandwidth=auto loss=0 dup=0 reorder=0 reorder-delay=0\n"
		"at 0 send H-000001:1 H-000002:1 count=1 size=64 interval=1us sl=0 pkey=0xffff qkey=0x00001234\n"
		"at 5ms link down L-0001:3\n"
		"at 5ms link up L-0001:3\n"
		"at 6ms expect state L-0001:3 == active\n"
		"at 6ms reregister all\n");
	free(out);
	imc_scenario_destroy(s);

	s = parse("send H-000001 H-000002\n");
	assert_int_equal(imc_scenario_stop(s), IMC_SCN_STOP_DEFAULT);
	assert_int_equal(imc_scenario_seed(s), 1);
	imc_scenario_destroy(s);
}

/* Names with blanks and ':' survive quoting and the canonical print. */
static void test_quoted_names(void **state)
{
	static const char net[] =
		"Switch 8 \"core sw:1\"\n"
		"[1] \"host #1\"[1]\n"
		"[2] \"h2\"[1]\n"
		"\n"
		"Hca 1 \"host #1\"\n"
		"[1] \"core sw:1\"[1]\n"
		"\n"
		"Hca 1 \"h2\"\n"
		"[1] \"core sw:1\"[2]\n";
	static const char text[] =
		"at 0 send \"host #1\" h2 count=2\n"
		"at 1us link down \"core sw:1\":2\n"
		"expect delivered h2 == 2 # the two\n";
	struct imc_scenario_parse_opts o = { 0 };
	struct imc_scenario *s = NULL, *s2 = NULL;
	struct imc_topo *t;
	char err[256], *out, *out2;

	assert_int_equal(imc_topo_parse_string(net, "q.net", &t, err,
					       sizeof(err)), 0);
	o.topo = t;
	assert_int_equal(imc_scenario_parse(text, strlen(text), "q.scn", &o,
					    &s, err, sizeof(err)), 0);
	out = print(s);
	assert_non_null(strstr(out,
		"at 0 send \"host #1\":1 h2:1 count=2 size=64"));
	assert_non_null(strstr(out, "at 1us link down \"core sw:1\":2\n"));
	assert_non_null(strstr(out, "expect delivered h2:1 == 2\n"));
	assert_int_equal(imc_scenario_parse(out, strlen(out), "q2.scn", &o,
					    &s2, err, sizeof(err)), 0);
	out2 = print(s2);
	assert_string_equal(out2, out);
	free(out);
	free(out2);
	imc_scenario_destroy(s);
	imc_scenario_destroy(s2);
	imc_topo_destroy(t);
}

/* ---- parse errors ---- */

static void test_errors_lines(void **state)
{
	expect_error("at 0 send H-000001 H-000002\nfrob 1\n", true,
		     "t.scn:2: unknown verb 'frob'");
	expect_error("\n\nat 1ms link down L-0001:3\nat 500us link up L-0001:3\n",
		     true,
		     "t.scn:4: time goes backwards: 500us is before 1ms (line 3)");
	expect_error("at 5 send H-000001 H-000002\n", true,
		     "t.scn:1: at: expected a time with a unit (ns, us, ms, s), got '5'");
	expect_error("at 99999999999s send H-000001 H-000002\n", true,
		     "t.scn:1: at: time 99999999999s is out of range (at most 4611686018427387904ns, 2^62 ns or about 146 years)");
	expect_error("at 1.5ns send H-000001 H-000002\n", true,
		     "t.scn:1: at: expected a whole number of nanoseconds, got '1.5ns'");
	expect_error("at 2s send H-000001 H-000002\n", true,
		     "t.scn:1: time 2s is after the stop time 1s (the default; add a stop line)");
	expect_error("stop 1ms\nexpect sent == 0\nat 2ms expect sent == 0\n",
		     true, "t.scn:3: time 2ms is after the stop time 1ms");
	expect_error("at 1ms\n", true, "t.scn:1: expected a verb after 'at 1ms'");
	expect_error("at\n", true, "t.scn:1: expected 'at TIME VERB ...'");
	expect_error("at 1ms seed 4\n", true,
		     "t.scn:1: 'seed' is a setting: it takes no time");
	expect_error("at end send H-000001 H-000002\n", true,
		     "t.scn:1: only expectations can be 'at end'");
	expect_error("send H-000001 H-000002\nsend a \"b\n", true,
		     "t.scn:2: unterminated quote");
	expect_error("send H-000001 H-000002\x01\n", true,
		     "t.scn:1: unexpected control character");
	{
		static const char nul[] = "seed 1\nsend H-000001\0H-000002\n";
		struct imc_scenario_parse_opts o = { .topo = topo };
		struct imc_scenario *s = NULL;
		char err[128];

		assert_int_equal(imc_scenario_parse(nul, sizeof(nul) - 1, "n.scn",
						    &o, &s, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, "n.scn:2: unexpected control character");
	}
	expect_error("send H-000001 H-000002\n", false,
		     "t.scn:1: expected a topology line (topology GENERATOR or topology file PATH)");
	expect_error("topology switch:hosts=2\ntopology switch:hosts=3\n", false,
		     "t.scn:2: topology already given on line 1");
	expect_error("topology\n", false,
		     "t.scn:1: expected 'topology GENERATOR' (e.g. fat-tree:leaves=2,hosts=2,spines=1) or 'topology file PATH'");
	expect_error("seed\n", true, "t.scn:1: expected 'seed NUMBER'");
	expect_error("seed 18446744073709551616\n", true,
		     "t.scn:1: seed: 18446744073709551616 is out of range (at most 18446744073709551615)");
	expect_error("stop soon\n", true,
		     "t.scn:1: stop: expected a time with a unit (ns, us, ms, s), got 'soon'");
	expect_error("fabric mtu=3000\n", true,
		     "t.scn:1: mtu: expected 256, 512, 1024, 2048 or 4096, got '3000'");
	expect_error("fabric rate=1\n", true,
		     "t.scn:1: rate: expected an SA rate code 2..63, got '1'");
	expect_error("fabric colour=blue\n", true,
		     "t.scn:1: expected mtu=, rate=, rq=, sweep= or prefix=, got 'colour=blue'");
	expect_error("links loss=2\n", true,
		     "t.scn:1: loss: probability 2 is above 1");
	expect_error("links jitter=1us\n", true,
		     "t.scn:1: expected latency=, bandwidth=, loss=, dup=, reorder= or reorder-delay=, got 'jitter=1us'");
}

static void test_errors_names(void **state)
{
	expect_error("send H-000001 H-000009\n", true,
		     "t.scn:1: send: unknown node 'H-000009'");
	expect_error("send H-000001 L-0001\n", true,
		     "t.scn:1: send: 'L-0001' is a switch; expected a host (HCA)");
	expect_error("send H-000001:2 H-000002\n", true,
		     "t.scn:1: send: 'H-000001' has ports 1..1, not '2'");
	expect_error("send H-000001:0 H-000002\n", true,
		     "t.scn:1: send: 'H-000001' is an HCA: ports 1..1, not 0");
	expect_error("link down L-0001:9\n", true,
		     "t.scn:1: link: port L-0001:9 is not cabled");
	expect_error("link down L-0001\n", true,
		     "t.scn:1: link: port L-0001:0 is not cabled");
	expect_error("link sideways L-0001:3\n", true,
		     "t.scn:1: link: expected 'link down PORT' or 'link up PORT'");
	expect_error("fault L-0001:3\n", true,
		     "t.scn:1: fault: expected 'fault PORT' and loss=, dup=, reorder=, reorder-delay=, latency= or bandwidth=");
	expect_error("sm move L-0001\n", true,
		     "t.scn:1: sm: 'L-0001' is a switch; expected a host (HCA)");
	expect_error("sm jump H-000001\n", true, "t.scn:1: sm: expected 'sm move HOST'");
	expect_error("reregister\n", true,
		     "t.scn:1: reregister: expected 'reregister HOST' or 'reregister all'");
	expect_error("lid H-000001 0xc000\n", true,
		     "t.scn:1: lid: LID: 0xc000 is out of range (at most 49151)");
	expect_error("lid L-0001 0x40\n", true,
		     "t.scn:1: lid: 'L-0001' is a switch; expected a host (HCA)");
	expect_error("lid H-000001 0\n", true,
		     "t.scn:1: lid: LID: expected a unicast LID 1..0xbfff, got '0'");
	expect_error("pkeys H-000001 0x10000\n", true,
		     "t.scn:1: pkeys: P_Key: 0x10000 is out of range (at most 65535)");
	expect_error("group 0xbfff ff12::1 H-000001\n", true,
		     "t.scn:1: group: MLID: expected a multicast LID 0xc000..0xfffe, got '0xbfff'");
	expect_error("group 0xc001 fe80::1 H-000001\n", true,
		     "t.scn:1: group: MGID: expected a multicast GID (ff..), got 'fe80::1'");
	expect_error("group 0xc001 ff12::1 H-000001 H-000001:1\n", true,
		     "t.scn:1: group: member H-000001:1 listed twice");
	expect_error("group 0xc001 ff12::1 all H-000002\n", true,
		     "t.scn:1: group: 'all' stands for every host: no other member");
	expect_error("group 0xc001 ff12::1 pkey=0x8001\n", true,
		     "t.scn:1: group: a group needs at least one member");
	expect_error("group 0xc001 ff12::1 H-000001\ngroup 0xc001 ff12::2 H-000002\n",
		     true,
		     "t.scn:2: group: group 0xc001 is already defined on line 1");
	expect_error("mcast H-000001 0xc001\ngroup 0xc001 ff12::1 H-000002\n",
		     true,
		     "t.scn:1: mcast: no group 0xc001 defined on an earlier line");
	expect_error("group 0xc001 ff12::1 H-000002\nmcast H-000001 0xc001 grh\n",
		     true,
		     "t.scn:2: mcast: expected count=, size=, interval=, sl= or qkey=, got 'grh'");
	expect_error("send H-000001 H-000002 count=0\n", true,
		     "t.scn:1: send: count: expected at least 1");
	expect_error("send H-000001 H-000002 size=4097\n", true,
		     "t.scn:1: send: size: 4097 is out of range (at most 4096)");
	expect_error("send H-000001 H-000002 sl=16\n", true,
		     "t.scn:1: send: sl: 16 is out of range (at most 15)");
	expect_error("send H-000001 H-000002 count=4294967296\n", true,
		     "t.scn:1: send: count: 4294967296 is out of range (at most 4294967295)");
	expect_error("send H-000001 H-000002 fast\n", true,
		     "t.scn:1: send: expected count=, size=, interval=, sl=, pkey=, qkey= or grh, got 'fast'");
}

static void test_errors_expect(void **state)
{
	expect_error("expect\n", true,
		     "t.scn:1: expected 'expect SUBJECT ... OP VALUE'");
	expect_error("expect delivered H-000001\n", true,
		     "t.scn:1: expected an operator (== != < <= > >= in) after 'delivered'");
	expect_error("expect delivered H-000001 ==\n", true,
		     "t.scn:1: expected a value after '=='");
	expect_error("expect frobs == 1\n", true, "t.scn:1: unknown subject 'frobs'");
	expect_error("expect delivered H-000001 == frobs 2\n", true,
		     "t.scn:1: value: expected a number, got 'frobs'");
	expect_error("expect delivered H-000001 == 1 + 2 * 3\n", true,
		     "t.scn:1: expected '+' or '-' after '2', got '*'");
	expect_error("expect delivered H-000001 == 1 +\n", true,
		     "t.scn:1: expected a value or a subject after '+'");
	expect_error("expect delivered H-000001 == + 1\n", true,
		     "t.scn:1: expected a value or a subject after the operator");
	expect_error("expect delivered H-000001 in 5..1\n", true,
		     "t.scn:1: empty range 5..1");
	expect_error("expect delivered H-000001 in 5\n", true,
		     "t.scn:1: expected a range A..B after 'in'");
	expect_error("expect delivered H-000001 in 1..x\n", true,
		     "t.scn:1: value: expected a number, got 'x'");
	expect_error("expect state H-000001 == asleep\n", true,
		     "t.scn:1: value: expected a number, got 'asleep'");
	expect_error("expect delivered L-0001 == 1\n", true,
		     "t.scn:1: delivered: 'L-0001' is a switch; expected a host (HCA)");
	expect_error("expect delivered H-000001 H-000002 == 1\n", true,
		     "t.scn:1: delivered: expected at most one host");
	expect_error("expect drops lost == 1\n", true,
		     "t.scn:1: drops: expected a reason (link-down, loss, no-route, no-mft, port-state, dlid, pkey, qkey, no-qp, rq-full, mtu, all), got 'lost'");
	expect_error("expect lost L-0001:9 == 1\n", true,
		     "t.scn:1: lost: port L-0001:9 is not cabled");
	expect_error("expect hops H-000001 == 1\n", true,
		     "t.scn:1: hops: takes no argument, got 'H-000001'");
	expect_error("expect sent == sent H-000009\n", true,
		     "t.scn:1: sent: unknown node 'H-000009'");
}

/* Net files resolve against the scenario's directory. */
static void test_topology_file(void **state)
{
	static const char text[] =
		"topology file ibsim-2sw.net\n"
		"send Hca1 Hca4\n";
	struct imc_scenario_parse_opts o = { .dir = IMC_SOURCE_DIR "/examples" };
	struct imc_scenario *s = NULL;
	uint32_t hcas, sws, cables;
	char err[512];
	int rc;

	rc = imc_scenario_parse(text, strlen(text), "x.scn", &o, &s, err,
				sizeof(err));
	if (rc) {
		print_message("examples/ibsim-2sw.net: %s\n", err);
		skip();
	}
	assert_string_equal(imc_scenario_topo_desc(s), "file ibsim-2sw.net");
	imc_topo_counts(imc_scenario_topo(s), &hcas, &sws, &cables);
	assert_int_equal(hcas, 4);
	assert_int_equal(sws, 2);
	assert_int_equal(cables, 6);
	imc_scenario_destroy(s);

	o.dir = "/nonexistent-dir";
	rc = imc_scenario_parse(text, strlen(text), "x.scn", &o, &s, err,
				sizeof(err));
	assert_true(rc < 0);
	assert_true(!strncmp(err, "x.scn:1: topology: ", 19));

	rc = imc_scenario_parse("topology fat-tree:leaves=0\n", 27, "g.scn",
				NULL, &s, err, sizeof(err));
	assert_true(rc < 0);
	assert_true(!strncmp(err, "g.scn:1: topology: ", 19));

	rc = imc_scenario_parse_file("/nonexistent-dir/x.scn", NULL, &s, err,
				     sizeof(err));
	assert_int_equal(rc, -ENOENT);
	assert_string_equal(err, "/nonexistent-dir/x.scn: No such file or directory");
}

/* ---- extensions ---- */

struct probe {
	imc_time_t ran_at[4];
	unsigned nran;
	uint64_t value;
	char freed[4];      /* 'a' the first state, 'b' the second */
	unsigned nfreed;
	char second;        /* key of the second state */
};

static struct probe probe;

static int probe_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	uint64_t *v;

	if (argc != 1)
		return imc_scn_parse_error(p, "expected 'probe N'");
	v = malloc(sizeof(*v));
	if (!v)
		return -ENOMEM;
	*data = v;
	return imc_scn_parse_uint(p, "N", argv[0], 1000, v);
}

static void probe_print(FILE *f, const struct imc_topo *t, const void *data)
{
	fprintf(f, " %" PRIu64, *(const uint64_t *)data);
}

static void probe_state_free(void *d)
{
	probe.value += 1000;
	if (probe.nfreed < 3)
		probe.freed[probe.nfreed++] = 'a';
	free(d);
}

static void probe_second_free(void *d)
{
	(void)d;
	if (probe.nfreed < 3)
		probe.freed[probe.nfreed++] = 'b';
}

static int probe_run(struct imc_scn_ctx *c, void *data)
{
	uint64_t *n = data;
	int *st = imc_scn_data(c, &probe);

	if (probe.nran < 4)
		probe.ran_at[probe.nran] = imc_loop_now(imc_scn_loop(c));
	probe.nran++;
	if (!st) {
		st = calloc(1, sizeof(*st));
		assert_int_equal(imc_scn_data_set(c, &probe, st,
						  probe_state_free), 0);
		assert_int_equal(imc_scn_data_set(c, &probe, st, NULL),
				 -EEXIST);
	}
	(*st)++;
	if (*n == 7)
		assert_int_equal(imc_scn_data_set(c, &probe.second, NULL,
						  probe_second_free), 0);
	probe.value += *n;
	if (*n == 999)
		return imc_scn_fail(c, -EIO, "probe %d refused", *st);
	return 0;
}

static int probe_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	*v = probe.value + *(const uint64_t *)data;
	return 0;
}

static const struct imc_scn_verb probe_verb = {
	.name = "probe", .kind = IMC_SCN_ACTION, .parse = probe_parse,
	.print = probe_print, .run = probe_run, .free = free,
};

static const struct imc_scn_subject probe_subject = {
	.name = "probed", .parse = probe_parse, .print = probe_print,
	.observe = probe_observe, .free = free,
};

static void test_extension(void **state)
{
	static const struct imc_scn_verb bad_reserved = {
		.name = "expect", .kind = IMC_SCN_ACTION, .parse = probe_parse,
		.print = probe_print, .run = probe_run,
	};
	static const struct imc_scn_verb bad_name = {
		.name = "Probe", .kind = IMC_SCN_ACTION, .parse = probe_parse,
		.print = probe_print, .run = probe_run,
	};
	static const struct imc_scn_verb no_run = {
		.name = "norun", .kind = IMC_SCN_ACTION, .parse = probe_parse,
		.print = probe_print,
	};
	static const struct imc_scn_verb send_again = {
		.name = "send", .kind = IMC_SCN_ACTION, .parse = probe_parse,
		.print = probe_print, .run = probe_run,
	};
	static const struct imc_scn_subject bad_subject = {
		.name = "in", .parse = probe_parse, .print = probe_print,
		.observe = probe_observe,
	};
	struct imc_scn_lang *lang;
	struct imc_scenario *s;
	struct imc_scenario_result r;
	char err[256], *out;

	assert_int_equal(imc_scn_lang_create(&lang), 0);
	assert_non_null(imc_scn_lang_verb(lang, "send"));
	assert_non_null(imc_scn_lang_subject(lang, "delivered"));
	assert_null(imc_scn_lang_verb(lang, "probe"));
	assert_int_equal(imc_scn_lang_add_verb(lang, &bad_reserved), -EINVAL);
	assert_int_equal(imc_scn_lang_add_verb(lang, &bad_name), -EINVAL);
	assert_int_equal(imc_scn_lang_add_verb(lang, &no_run), -EINVAL);
	assert_int_equal(imc_scn_lang_add_verb(lang, &send_again), -EEXIST);
	assert_int_equal(imc_scn_lang_add_subject(lang, &bad_subject), -EINVAL);
	assert_int_equal(imc_scn_lang_add_verb(lang, &probe_verb), 0);
	assert_int_equal(imc_scn_lang_add_verb(lang, &probe_verb), -EEXIST);
	assert_int_equal(imc_scn_lang_add_subject(lang, &probe_subject), 0);
	assert_ptr_equal(imc_scn_lang_verb(lang, "probe"), &probe_verb);
	assert_ptr_equal(imc_scn_lang_subject(lang, "probed"), &probe_subject);

	s = parse_with("stop 1ms\n"
		       "at 10us probe 5\n"
		       "at 20us probe 7\n"
		       "at 20us expect probed 0 == 12\n"
		       "expect probed 1 == 13\n",
		       lang);
	out = print(s);
	assert_non_null(strstr(out, "at 10us probe 5\nat 20us probe 7\n"
				    "at 20us expect probed 0 == 12\n"
				    "expect probed 1 == 13\n"));
	free(out);
	memset(&probe, 0, sizeof(probe));
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(probe.nran, 2);
	assert_int_equal(probe.ran_at[0], 10000);
	assert_int_equal(probe.ran_at[1], 20000);
	/* The state was freed when the run ended, after the checks, the
	 * state set last first. */
	assert_int_equal(probe.value, 1012);
	assert_string_equal(probe.freed, "ba");
	assert_int_equal(r.npassed, 2);
	assert_int_equal(r.nfailed, 0);
	assert_int_equal(r.checks[0].observed, 12);
	assert_int_equal(r.checks[0].at, 20000);
	assert_int_equal(r.checks[1].observed, 13);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);

	/* Without the language the verb is unknown. */
	expect_error("probe 5\n", true, "t.scn:1: unknown verb 'probe'");

	/* A failing action stops the run with FILE:LINE and its message. */
	s = parse_with("stop 1ms\nat 10us probe 1\nat 30us probe 999\n", lang);
	memset(&probe, 0, sizeof(probe));
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)), -EIO);
	assert_string_equal(err, "t.scn:3: probe: probe 2 refused");
	assert_int_equal(r.nchecks, 0);
	assert_null(r.checks);
	assert_int_equal(probe.nran, 2);
	imc_scenario_destroy(s);
	imc_scn_lang_destroy(lang);
}

/* ---- runs ---- */

static struct imc_scenario_check *check_at_line(struct imc_scenario_result *r,
						unsigned line)
{
	for (unsigned i = 0; i < r->nchecks; i++)
		if (r->checks[i].line == line)
			return &r->checks[i];
	fail_msg("no check for line %u", line);
	return NULL;
}

static void test_run_basic(void **state)
{
	struct imc_scenario *s = parse(
		"stop 1ms\n"                                           /* 1 */
		"at 0 send H-000001 H-000003 count=100 interval=5us\n" /* 2 */
		"send H-000002 H-000001 count=10 interval=1us grh\n"   /* 3 */
		"at 50us expect sent H-000001 == 11\n"                 /* 4 */
		"at 50us expect delivered H-000003 < 11\n"             /* 5 */
		"expect delivered H-000003 == 100\n"                   /* 6 */
		"expect delivered H-000001 == sent H-000002\n"         /* 7 */
		"expect delivered H-000003 == 99\n"                    /* 8 */
		"expect state H-000002 == down\n"                      /* 9 */
		"expect hops == 400 + 20 - 0\n"                        /* 10 */
		"expect lid H-000001 != 0\n");                         /* 11 */
	struct imc_scenario_result r;
	struct imc_scenario_check *c;

	run_ok(s, NULL, &r);
	assert_int_equal(r.seed, 1);
	assert_int_equal(r.end, 1000000);
	assert_true(r.events > 110);
	assert_int_equal(r.totals.sent, 110);
	assert_int_equal(r.totals.delivered, 110);
	/* Across the leaves 4 cables, within one leaf 2. */
	assert_int_equal(r.totals.hops, 420);
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		assert_int_equal(r.totals.drops[d], 0);
	assert_int_equal(r.nhosts, 3);
	assert_string_equal(r.hosts[0].name, "H-000001");
	assert_int_equal(r.hosts[0].port, 1);
	assert_int_equal(r.hosts[0].sent, 100);
	assert_int_equal(r.hosts[0].delivered, 10);
	assert_string_equal(r.hosts[1].name, "H-000002");
	assert_int_equal(r.hosts[1].sent, 10);
	assert_int_equal(r.hosts[1].delivered, 0);
	assert_string_equal(r.hosts[2].name, "H-000003");
	assert_int_equal(r.hosts[2].delivered, 100);
	assert_int_equal(r.hosts[2].dups, 0);
	assert_int_equal(r.hosts[2].send_errors, 0);

	assert_int_equal(r.nchecks, 8);
	assert_int_equal(r.npassed, 6);
	assert_int_equal(r.nfailed, 2);
	assert_int_equal(r.nskipped, 0);
	/* Sends at 0, 5, ..., 50 us: 11 by 50 us. */
	c = check_at_line(&r, 4);
	assert_int_equal(c->state, IMC_SCN_CHECK_PASS);
	assert_int_equal(c->observed, 11);
	assert_int_equal(c->at, 50000);
	assert_false(c->at_end);
	assert_string_equal(c->text, "sent H-000001 == 11");
	c = check_at_line(&r, 5);
	assert_int_equal(c->state, IMC_SCN_CHECK_PASS);
	assert_true(c->observed >= 10 && c->observed <= 11);
	c = check_at_line(&r, 7);
	assert_int_equal(c->state, IMC_SCN_CHECK_PASS);
	assert_string_equal(c->observed_str, "10 vs 10");
	/* The deliberately false ones, with what was seen. */
	c = check_at_line(&r, 8);
	assert_int_equal(c->state, IMC_SCN_CHECK_FAIL);
	assert_int_equal(c->observed, 100);
	assert_string_equal(c->observed_str, "100");
	assert_int_equal(c->at, 1000000);
	assert_true(c->at_end);
	assert_string_equal(c->text, "delivered H-000003 == 99");
	c = check_at_line(&r, 9);
	assert_int_equal(c->state, IMC_SCN_CHECK_FAIL);
	assert_string_equal(c->observed_str, "active");
	c = check_at_line(&r, 10);
	assert_int_equal(c->state, IMC_SCN_CHECK_PASS);
	assert_int_equal(c->observed, 420);
	assert_string_equal(c->observed_str, "420");
	c = check_at_line(&r, 11);
	assert_int_equal(c->state, IMC_SCN_CHECK_PASS);
	assert_string_equal(c->observed_str, "0x0001");
	imc_scenario_result_free(&r);
	assert_null(r.checks);
	imc_scenario_destroy(s);
}

static const char lossy[] =
	"seed 5\n"
	"stop 20ms\n"
	"fault H-000001 loss=10% dup=2%\n"
	"at 0 send H-000001 H-000004 count=1000 interval=10us\n"
	"expect lost H-000001 in 50..150\n"
	"expect delivered H-000004 == sent H-000001 - lost H-000001 + duplicated H-000001\n"
	"expect dups H-000004 == duplicated H-000001\n"
	"expect drops loss == lost H-000001\n";

static void same_result(const struct imc_scenario_result *a,
			const struct imc_scenario_result *b)
{
	assert_int_equal(a->trace_hash, b->trace_hash);
	assert_int_equal(a->events, b->events);
	assert_int_equal(a->end, b->end);
	assert_memory_equal(&a->totals, &b->totals, sizeof(a->totals));
	assert_int_equal(a->nhosts, b->nhosts);
	for (unsigned i = 0; i < a->nhosts; i++) {
		assert_int_equal(a->hosts[i].node, b->hosts[i].node);
		assert_int_equal(a->hosts[i].port, b->hosts[i].port);
		assert_string_equal(a->hosts[i].name, b->hosts[i].name);
		assert_int_equal(a->hosts[i].sent, b->hosts[i].sent);
		assert_int_equal(a->hosts[i].send_errors,
				 b->hosts[i].send_errors);
		assert_int_equal(a->hosts[i].delivered, b->hosts[i].delivered);
		assert_int_equal(a->hosts[i].dups, b->hosts[i].dups);
	}
	assert_int_equal(a->nchecks, b->nchecks);
	for (unsigned i = 0; i < a->nchecks; i++) {
		assert_int_equal(a->checks[i].state, b->checks[i].state);
		assert_int_equal(a->checks[i].observed, b->checks[i].observed);
	}
}

static void test_run_determinism(void **state)
{
	struct imc_scenario *s = parse(lossy);
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r1, r2, r3, r4;

	run_ok(s, NULL, &r1);
	run_ok(s, NULL, &r2);
	same_result(&r1, &r2);
	assert_int_equal(r1.seed, 5);
	assert_int_equal(r1.nfailed, 0);
	assert_int_equal(r1.npassed, 4);
	assert_true(r1.checks[0].observed > 0);
	assert_true(r1.totals.drops[IMC_DROP_LOSS] > 0);

	/* The file's seed given explicitly is the same run. */
	o.seed_set = true;
	o.seed = 5;
	run_ok(s, &o, &r3);
	same_result(&r1, &r3);
	imc_scenario_result_free(&r3);

	/* Another seed loses other packets. */
	o.seed = 6;
	run_ok(s, &o, &r3);
	run_ok(s, &o, &r4);
	assert_int_equal(r3.seed, 6);
	assert_true(r3.trace_hash != r1.trace_hash);
	same_result(&r3, &r4);
	assert_int_equal(r3.nfailed, 0);
	imc_scenario_result_free(&r1);
	imc_scenario_result_free(&r2);
	imc_scenario_result_free(&r3);
	imc_scenario_result_free(&r4);
	imc_scenario_destroy(s);
}

static uint64_t fake_clock(void *ctx)
{
	uint64_t *t = ctx;

	return *t += 1000;
}

struct progress_log {
	uint64_t wall;
	unsigned calls;
	imc_time_t last_now;
	uint64_t last_events;
};

static void on_progress(void *ctx, imc_time_t now, uint64_t events)
{
	struct progress_log *pl = ctx;

	assert_true(now >= pl->last_now);
	assert_true(events >= pl->last_events);
	pl->calls++;
	pl->last_now = now;
	pl->last_events = events;
}

static void test_run_until(void **state)
{
	struct imc_scenario *s = parse(
		"stop 10ms\n"
		"at 0 send H-000001 H-000002 count=1000 interval=5us\n"
		"at 1ms expect delivered H-000002 >= 200\n"
		"at 3ms link down L-0001:1\n"
		"at 7ms expect delivered H-000002 == 1000\n"
		"expect delivered H-000002 > 0\n");
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct progress_log pl = { 0 };

	o.until_set = true;
	o.until = 2 * 1000000;
	o.progress = on_progress;
	o.wall_clock = fake_clock;
	o.ctx = &pl;
	run_ok(s, &o, &r);
	assert_int_equal(r.end, 2000000);
	assert_int_equal(r.npassed, 2);
	assert_int_equal(r.nskipped, 1);
	assert_int_equal(r.nfailed, 0);
	assert_int_equal(r.checks[1].state, IMC_SCN_CHECK_SKIPPED);
	/* At the end of the shortened run: sends at 0..2ms every 5 us. */
	assert_int_equal(r.checks[2].at, 2000000);
	assert_true(r.checks[2].observed >= 400 && r.checks[2].observed <= 401);
	/* The link-down at 3 ms never ran. */
	assert_int_equal(r.totals.drops[IMC_DROP_LINK_DOWN], 0);
	assert_true(pl.calls >= 2);
	assert_int_equal(pl.last_now, 2000000);
	assert_int_equal(pl.last_events, r.events);
	/* Two clock reads: before and after. */
	assert_int_equal(r.wall_ns, 1000);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static void test_run_multicast(void **state)
{
	struct imc_scenario *s = parse(
		"stop 2ms\n"
		"group 0xc001 ff12:601b::7 all\n"
		"group 0xc002 ff12:601b::8 H-000002 H-000004 qkey=0x99\n"
		"at 10us mcast H-000001 0xc001 count=20 size=12\n"
		"mcast H-000004 0xc002 count=5 size=11\n"
		"mcast H-000003 0xc002 count=3 qkey=0x98\n"
		"expect delivered H-000001 == 0\n"
		"expect delivered H-000002 == 20 + 5\n"
		"expect delivered H-000003 == 20\n"
		"expect delivered H-000004 == 20\n"
		"expect drops qkey == 6\n"
		"expect dups == 0\n");
	struct imc_scenario_result r;

	run_ok(s, NULL, &r);
	assert_int_equal(r.nfailed, 0);
	assert_int_equal(r.npassed, 6);
	assert_int_equal(r.totals.sent, 28);
	assert_int_equal(r.totals.delivered, 65);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* Every duplicated packet is seen as a repeat of its flow and sequence. */
static void test_run_dups(void **state)
{
	struct imc_scenario *s = parse(
		"stop 2ms\n"
		"fault H-000001 dup=1\n"
		"at 0 send H-000001 H-000002 count=50 interval=10us\n"
		"send H-000001 H-000003 count=7 size=8\n"
		"expect duplicated H-000001 == 57\n"
		"expect delivered H-000002 == 100\n"
		"expect dups H-000002 == 50\n"
		"expect delivered H-000003 == 14\n"
		"expect dups H-000003 == 0\n");
	struct imc_scenario_result r;

	run_ok(s, NULL, &r);
	for (unsigned i = 0; i < r.nchecks; i++)
		if (r.checks[i].state != IMC_SCN_CHECK_PASS)
			fail_msg("line %u: %s: observed %s", r.checks[i].line,
				 r.checks[i].text, r.checks[i].observed_str);
	assert_int_equal(r.hosts[1].dups, 50);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* Runtime failures name the line; the result is left empty. */
static void test_run_errors(void **state)
{
	struct imc_scenario *s = parse(
		"stop 1ms\nat 10us lid H-000002 0x40\nat 20us lid H-000003 0x40\n");
	struct imc_scenario_result r;
	char err[256];

	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -EBUSY);
	assert_string_equal(err, "t.scn:3: lid: LID 0x0040 is taken");
	assert_int_equal(r.nhosts, 0);
	imc_scenario_destroy(s);

	s = parse("stop 1ms\npkeys H-000001 0x8001\nat 1us send H-000001 H-000002\n");
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err,
		"t.scn:3: send: H-000001 has no P_Key 0xffff in its table");
	imc_scenario_destroy(s);
}

/* Sends refused by a port that is down count as send errors. */
static void test_run_send_errors(void **state)
{
	struct imc_scenario *s = parse(
		"stop 1ms\n"
		"fabric sweep=10ms\n"
		"at 0 send H-000001 H-000002 count=10 interval=10us\n"
		"at 45us link down H-000001\n"
		"expect sent H-000001 == 5\n"
		"expect send-errors H-000001 == 5\n"
		"expect send-errors == 5\n"
		"expect delivered H-000002 == 5\n");
	struct imc_scenario_result r;

	run_ok(s, NULL, &r);
	for (unsigned i = 0; i < r.nchecks; i++)
		if (r.checks[i].state != IMC_SCN_CHECK_PASS)
			fail_msg("line %u: %s: observed %s", r.checks[i].line,
				 r.checks[i].text, r.checks[i].observed_str);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static void test_run_capture(void **state)
{
	struct imc_scenario *s = parse(
		"stop 1ms\nat 0 send H-000001 H-000003 count=3 size=100\n");
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_pcap *pc;
	char *buf = NULL;
	size_t len = 0, off, n = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(imc_pcap_open_stream(f, IMC_PCAP_LINKTYPE_USER0, &pc), 0);
	o.pcap = pc;
	run_ok(s, &o, &r);
	assert_int_equal(imc_pcap_close(pc), 0);
	fclose(f);
	/* One record per packet leaving a port: 3 datagrams x 4 cables. */
	for (off = IMC_PCAP_FILE_HDR_SIZE; off + IMC_PCAP_REC_HDR_SIZE <= len; n++) {
		uint32_t incl = (uint32_t)(uint8_t)buf[off + 8] |
				(uint32_t)(uint8_t)buf[off + 9] << 8 |
				(uint32_t)(uint8_t)buf[off + 10] << 16 |
				(uint32_t)(uint8_t)buf[off + 11] << 24;

		off += IMC_PCAP_REC_HDR_SIZE + incl;
	}
	assert_int_equal(off, len);
	assert_int_equal(n, r.totals.hops);
	assert_int_equal(n, 12);
	imc_scenario_result_free(&r);
	free(buf);
	imc_scenario_destroy(s);
}

/* Every example passes through the library as through the command. */
static void test_examples(void **state)
{
	static const char *const names[] = {
		"unicast-basic", "link-flap", "lossy-link", "partitions",
		"multicast-static", "sm-events",
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512], err[512], *out;
		struct imc_scenario *s, *s2;
		struct imc_scenario_parse_opts o = {
			.dir = IMC_SOURCE_DIR "/examples",
		};
		struct imc_scenario_result r;
		int rc;

		snprintf(path, sizeof(path), "%s/examples/%s.scn",
			 IMC_SOURCE_DIR, names[i]);
		rc = imc_scenario_parse_file(path, NULL, &s, err, sizeof(err));
		if (rc)
			fail_msg("%s", err);
		run_ok(s, NULL, &r);
		if (r.nfailed)
			fail_msg("%s: %u expectations failed", names[i],
				 r.nfailed);
		assert_int_equal(r.nchecks, imc_scenario_nexpects(s));
		/* Its canonical form is the same scenario: same run. */
		out = print(s);
		rc = imc_scenario_parse(out, strlen(out), names[i], &o, &s2,
					err, sizeof(err));
		if (rc)
			fail_msg("%s reprinted: %s", names[i], err);
		{
			struct imc_scenario_result r2;

			run_ok(s2, NULL, &r2);
			same_result(&r, &r2);
			imc_scenario_result_free(&r2);
		}
		free(out);
		imc_scenario_result_free(&r);
		imc_scenario_destroy(s2);
		imc_scenario_destroy(s);
	}
}

/* Plugins hear of the run through hooks: start in ascending order,
 * links_changed after each link line, teardown in descending order, and
 * a start hook's error fails the run. */
static char plug_log[128];
static int plug_links, plug_fail;

static void plug_note(const char *what)
{
	size_t n = strlen(plug_log);

	snprintf(plug_log + n, sizeof(plug_log) - n, "%s ", what);
}

static int plug_a_start(struct imc_scn_ctx *c)
{
	(void)c;
	plug_note("start-a");
	return plug_fail;
}

static int plug_b_start(struct imc_scn_ctx *c)
{
	(void)c;
	plug_note("start-b");
	return 0;
}

static void plug_a_down(struct imc_scn_ctx *c)
{
	(void)c;
	plug_note("down-a");
}

static void plug_b_down(struct imc_scn_ctx *c)
{
	(void)c;
	plug_note("down-b");
}

static void plug_links_changed(struct imc_scn_ctx *c)
{
	(void)c;
	plug_links++;
}

static void test_plugins(void **state)
{
	static const struct imc_scn_plugin late = {
		.name = "late", .order = 9000, .start = plug_b_start,
		.teardown = plug_b_down,
	};
	static const struct imc_scn_plugin early = {
		.name = "early", .order = 10, .start = plug_a_start,
		.links_changed = plug_links_changed, .teardown = plug_a_down,
	};
	static const struct imc_scn_plugin bad = { .name = "Bad" };
	struct imc_scn_lang *lang;
	struct imc_scenario *s;
	struct imc_scenario_result r;
	char err[256];

	(void)state;
	assert_int_equal(imc_scn_lang_create(&lang), 0);
	assert_int_equal(imc_scn_lang_add_plugin(lang, &late), 0);
	assert_int_equal(imc_scn_lang_add_plugin(lang, &early), 0);
	assert_int_equal(imc_scn_lang_add_plugin(lang, &early), -EEXIST);
	assert_int_equal(imc_scn_lang_add_plugin(lang, &bad), -EINVAL);
	s = parse_with("stop 1ms\n"
		       "at 10us link down H-000001:1\n"
		       "at 20us link up H-000001:1\n",
		       lang);
	plug_log[0] = '\0';
	plug_links = 0;
	plug_fail = 0;
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)), 0);
	imc_scenario_result_free(&r);
	assert_int_equal(plug_links, 2);
	assert_string_equal(plug_log, "start-a start-b down-b down-a ");

	/* A start hook fails: the run fails, every plugin is torn down. */
	plug_log[0] = '\0';
	plug_fail = -EIO;
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -EIO);
	imc_scenario_result_free(&r);
	assert_string_equal(plug_log, "start-a down-b down-a ");
	imc_scenario_destroy(s);
	imc_scn_lang_destroy(lang);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_values),
		cmocka_unit_test(test_time_format),
		cmocka_unit_test(test_number_values),
		cmocka_unit_test(test_kv),
		cmocka_unit_test(test_every_form),
		cmocka_unit_test(test_current_time),
		cmocka_unit_test(test_quoted_names),
		cmocka_unit_test(test_errors_lines),
		cmocka_unit_test(test_errors_names),
		cmocka_unit_test(test_errors_expect),
		cmocka_unit_test(test_topology_file),
		cmocka_unit_test(test_extension),
		cmocka_unit_test(test_run_basic),
		cmocka_unit_test(test_run_determinism),
		cmocka_unit_test(test_run_until),
		cmocka_unit_test(test_run_multicast),
		cmocka_unit_test(test_run_dups),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_run_send_errors),
		cmocka_unit_test(test_run_capture),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_plugins),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
