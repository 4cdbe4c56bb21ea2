/* Scenario input at its edges: settings and options given twice, times
 * at and past the limit of virtual time (nothing wraps 64 bits), runs to
 * a distant stop, files that are not scenario text, and names defined
 * and found across many lines. */
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
#include <unistd.h>

#include "ibmcast/fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/scenario.h"

#define SCENARIO_FIXTURE_OWN_PARSE
#include "scenario_fixture.h"

#define TOPO "topology switch:hosts=4\n"

static struct imc_scenario *parse(const char *text)
{
	return scn_fx_parse(text, NULL);
}

static void expect_error(const char *text, const char *want)
{
	scn_fx_expect_error(text, NULL, want);
}

static void test_repeated_settings(void **state)
{
	(void)state;
	expect_error(TOPO "seed 1\nstop 1ms\nseed 2\n",
		     "t.scn:4: seed already given on line 2");
	expect_error(TOPO "stop 1ms\n\nstop 2ms\n",
		     "t.scn:4: stop already given on line 2");
	expect_error(TOPO "fabric mtu=2048\nfabric sweep=1ms mtu=4096\n",
		     "t.scn:3: fabric mtu= already given on line 2");
	expect_error(TOPO "links latency=1us\nlinks loss=1%\nlinks latency=2us\n",
		     "t.scn:4: links latency= already given on line 2");
	expect_error(TOPO "links reorder=1%\nlinks reorder-delay=1us reorder=2%\n",
		     "t.scn:3: links reorder= already given on line 2");
	/* Different keys on two lines are two settings, not a repeat. */
	{
		struct imc_scenario *s = parse(TOPO
			"fabric mtu=2048\nfabric sweep=2ms\n"
			"links latency=1us\nlinks reorder=1% reorder-delay=3us\n");
		struct imc_fabric_config c;

		imc_scenario_config(s, &c);
		assert_int_equal(c.sm_sweep_delay, 2 * IMC_NSEC_PER_MSEC);
		assert_int_equal(c.link.latency, 1000);
		assert_int_equal(c.link.reorder_delay, 3000);
		imc_scenario_destroy(s);
	}
}

static void test_repeated_options(void **state)
{
	(void)state;
	expect_error(TOPO "send H-000001 H-000002 count=1 count=2\n",
		     "t.scn:2: send: count= given twice on this line: 'count=1' and 'count=2'");
	expect_error(TOPO "send H-000001 H-000002 size=64 interval=1us size=64\n",
		     "t.scn:2: send: size= given twice on this line: 'size=64' and 'size=64'");
	expect_error(TOPO "fabric mtu=256 rq=4 mtu=512\n",
		     "t.scn:2: mtu= given twice on this line: 'mtu=256' and 'mtu=512'");
	expect_error(TOPO "links loss=1% loss=2%\n",
		     "t.scn:2: loss= given twice on this line: 'loss=1%' and 'loss=2%'");
	expect_error(TOPO "sa\nmcast-join H-000001 ff15::1 create as=a as=b\n",
		     "t.scn:3: mcast-join: as= given twice on this line: 'as=a' and 'as=b'");
	expect_error(TOPO "sa\nsa-join H-000001 ff15::1 create qkey=1 qkey=1\n",
		     "t.scn:3: sa-join: qkey= given twice on this line: 'qkey=1' and 'qkey=1'");
	expect_error(TOPO "ipoib\nexpect ipoib-state H-000001 pkey=0xffff pkey=0x8001 == up\n",
		     "t.scn:3: ipoib-state: pkey= given twice on this line: 'pkey=0xffff' and 'pkey=0x8001'");
	expect_error(TOPO "sa rate=10 queue=4 rate=20\n",
		     "t.scn:2: sa: rate= given twice on this line: 'rate=10' and 'rate=20'");
}

static void test_time_limit(void **state)
{
	(void)state;
	expect_error(TOPO "links latency=18446744073709551615ns\n",
		     "t.scn:2: latency: time 18446744073709551615ns is out of range (at most 4611686018427387904ns, 2^62 ns or about 146 years)");
	expect_error(TOPO "links reorder-delay=4611686018427387905ns\n",
		     "t.scn:2: reorder-delay: time 4611686018427387905ns is out of range (at most 4611686018427387904ns, 2^62 ns or about 146 years)");
	expect_error(TOPO "stop 5000000000s\n",
		     "t.scn:2: stop: time 5000000000s is out of range (at most 4611686018427387904ns, 2^62 ns or about 146 years)");
	expect_error(TOPO "send H-000001 H-000002 interval=4611686019s\n",
		     "t.scn:2: send: interval: time 4611686019s is out of range (at most 4611686018427387904ns, 2^62 ns or about 146 years)");
	expect_error(TOPO "fabric sweep=18446744074s\n",
		     "t.scn:2: sweep: time 18446744074s is out of range (at most 4611686018427387904ns, 2^62 ns or about 146 years)");
	expect_error(TOPO "send H-000001 H-000002 count=4294967296\n",
		     "t.scn:2: send: count: 4294967296 is out of range (at most 4294967295)");
}

struct slices {
	unsigned n;
	imc_time_t last;
};

static void on_progress(void *ctx, imc_time_t now, uint64_t events)
{
	struct slices *sl = ctx;

	(void)events;
	sl->n++;
	sl->last = now;
}

/* The longest latency there is: the datagram is still on the wire when
 * the run ends (a wrapped sum would deliver it at once). */
static void test_run_latency_at_limit(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;
	struct imc_scenario_run_opts o = { 0 };

	(void)state;
	s = parse(TOPO "stop 1s\nlinks latency=4611686018427387904ns\n"
		  "send H-000001 H-000002 count=3\n"
		  "expect sent H-000001 == 3\n"
		  "expect delivered H-000002 == 0\n");
	run_ok(s, &o, &r);
	all_pass(&r);
	assert_int_equal(r.end, IMC_NSEC_PER_SEC);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* An action at the end of virtual time runs at that time, not at once,
 * and the run gets there in few idle slices (counted, not timed). */
static void test_run_to_the_limit(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;
	struct slices sl = { 0 };
	struct imc_scenario_run_opts o = { .progress = on_progress,
					   .ctx = &sl };

	(void)state;
	s = parse(TOPO "stop 4611686018427387904ns\n"
		  "at 4611686018427387903ns expect sent H-000001 == 0\n"
		  "at 4611686018427387904ns send H-000001 H-000002 count=1\n"
		  "expect sent H-000001 == 1\n");
	run_ok(s, &o, &r);
	all_pass(&r);
	assert_int_equal(r.end, IMC_TIME_LIMIT);
	assert_int_equal(sl.last, IMC_TIME_LIMIT);
	/* Doubling idle slices: about 2 * 62 of them, not 2^62 / 10 s. */
	assert_in_range(sl.n, 1, 400);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

static char *tmp_file(const void *data, size_t len)
{
	char *path = strdup("/tmp/scn_input_XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_file_not_text(void **state)
{
	static const char nul[] = "topology switch:hosts=2\nseed 1\0\0\0\n";
	struct imc_scenario *s = NULL;
	char err[256], want[320];
	char *path = tmp_file(nul, sizeof(nul) - 1);

	(void)state;
	assert_int_equal(imc_scenario_parse_file(path, NULL, &s, err,
						 sizeof(err)), -EINVAL);
	assert_null(s);
	snprintf(want, sizeof(want), "%s:2: a NUL byte: not scenario text",
		 path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	assert_int_equal(imc_scenario_parse_file("/nonexistent/x.scn", NULL,
						 &s, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err,
			    "/nonexistent/x.scn: No such file or directory");
}

/* Names defined on many lines and found from far-away lines: each @NAME
 * finds its own as=NAME, and a name used again is refused wherever the
 * first one is. */
static void test_names_many(void **state)
{
	enum { N = 3000 };
	size_t cap = (size_t)N * 160 + 128, n = 0;
	char *t = malloc(cap);
	struct imc_scenario *s;
	char *out;

	(void)state;
	assert_non_null(t);
	n += (size_t)snprintf(t + n, cap - n, TOPO "sa\nstop 10s\n");
	for (unsigned i = 0; i < N; i++)
		n += (size_t)snprintf(t + n, cap - n,
			"sa-join H-000001 0 create as=g%u\n"
			"mcast-join H-000002 ff15::%x as=m%u\n", i, i + 1, i);
	for (unsigned i = 0; i < N; i++)
		n += (size_t)snprintf(t + n, cap - n,
			"sa-join H-000003 @g%u\n"
			"expect mcast-state m%u == joined\n", N - 1 - i,
			N - 1 - i);
	s = parse(t);
	assert_int_equal(imc_scenario_nactions(s), 3 * N);
	assert_int_equal(imc_scenario_nexpects(s), N);
	out = print(s);
	has(out, "sa-join H-000003:1 @g0\n");
	has(out, "expect mcast-state m2999 == joined\n");
	free(out);
	imc_scenario_destroy(s);

	n += (size_t)snprintf(t + n, cap - n, "sa-join H-000004 0 as=g17\n");
	{
		char err[256];
		unsigned line = 4 + 4 * N;
		char want[256];

		assert_int_equal(imc_scenario_parse(t, n, "t.scn", NULL, &s,
						    err, sizeof(err)),
				 -EINVAL);
		snprintf(want, sizeof(want),
			 "t.scn:%u: sa-join: as=g17: an earlier line has that name",
			 line);
		assert_string_equal(err, want);
	}
	free(t);
	expect_error(TOPO "sa\nsa-join H-000001 @nope\n",
		     "t.scn:3: sa-join: @nope: no sa-join ... as=nope on an earlier line");
	expect_error(TOPO "sa\nmcast-join H-000001 ff15::1 as=x\nmcast-join H-000002 ff15::1 as=x\n",
		     "t.scn:4: mcast-join: as=x: an earlier mcast-join has that name");
	/* The two verbs name in two spaces: one name may be in both. */
	s = parse(TOPO "sa\nsa-join H-000001 0 create as=x\n"
		  "mcast-join H-000002 ff15::1 as=x\n"
		  "sa-join H-000003 @x\nmcast-join H-000004 @x\n");
	imc_scenario_destroy(s);
}

/* The identities docs/scenarios.md states between the SA counters:
 * sa-requests and sa-answers count the MADs of sa-* lines; sa-dropped
 * counts every request the SA dropped, also those of join trackers. */
static void test_sa_counter_identities(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;
	struct imc_scenario_run_opts o = { 0 };
	char text[2048];
	size_t n = 0;

	(void)state;
	/* sa-* lines alone, a queue of 2: every request answered or
	 * dropped, retries included. */
	n += (size_t)snprintf(text + n, sizeof(text) - n, TOPO
			      "stop 200ms\nsa rate=1000/s queue=2\n");
	for (unsigned h = 1; h <= 4; h++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
			"sa-join H-%06u ff15::5 create retries=20 timeout=5ms\n",
			h);
	snprintf(text + n, sizeof(text) - n,
		 "expect sa-dropped > 0\n"
		 "expect sa-answers == 4\n"
		 "expect sa-requests == sa-answers + sa-dropped\n"
		 "expect sa-requests == sa-requests H-000001 + "
		 "sa-requests H-000002 + sa-requests H-000003 + "
		 "sa-requests H-000004\n"
		 "expect sa-members ff15::5 == 4\n");
	s = parse(text);
	run_ok(s, &o, &r);
	all_pass(&r);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);

	/* Join trackers alone: their requests are mcast-mads, not
	 * sa-requests, and the SA's drops of them count in sa-dropped. */
	n = (size_t)snprintf(text, sizeof(text), TOPO
			     "stop 2s\nsa rate=100/s queue=1\n"
			     "mcast-tracker timeout=20ms retries=8\n");
	for (unsigned h = 1; h <= 4; h++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
			"mcast-join H-%06u ff15::%u create as=m%u\n", h, h, h);
	snprintf(text + n, sizeof(text) - n,
		 "expect sa-requests == 0\n"
		 "expect sa-answers == 0\n"
		 "expect sa-dropped > 0\n"
		 "expect mcast-joined == 4\n"
		 "expect mcast-mads > sa-dropped\n");
	s = parse(text);
	run_ok(s, &o, &r);
	all_pass(&r);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

/* The totals docs/scenarios.md defines as sums hold in a run with drops
 * of several kinds: drops all is the sum of the reasons, and an
 * interface's drops are the sum of its drops-REASON counters. */
static void test_drop_identities(void **state)
{
	static const char *const fabric_reasons[] = {
		"link-down", "loss", "no-route", "no-mft", "port-state", "dlid",
		"pkey", "qkey", "no-qp", "rq-full", "mtu",
	};
	static const char *const ipoib_reasons[] = {
		"down", "malformed", "ethertype", "mtu", "pkey", "no-route",
		"unresolved", "join-failed", "queue-endpoint", "queue-group",
		"queue-total", "send", "not-listening", "loopback", "flushed",
		"no-memory",
	};
	struct imc_scenario *s;
	struct imc_scenario_result r;
	struct imc_scenario_run_opts o = { 0 };
	char *text = malloc(8192);
	size_t n = 0, cap = 8192;

	(void)state;
	assert_non_null(text);
	n += (size_t)snprintf(text + n, cap - n,
		"topology fat-tree:leaves=2,hosts=2,spines=2\n"
		"stop 3s\nsa\nlinks loss=2%%\n"
		"ipoib resolve-timeout=10ms resolve-retries=1\n"
		"pkeys H-000004 0x8001\n"
		"at 1ms ipoib-up H-000001 10.0.0.1/24\n"
		"ipoib-up H-000002 10.0.0.2/24\n"
		"at 10ms send H-000001 H-000003 count=300 interval=10us\n"
		"send H-000002 H-000004 count=20 interval=10us\n"
		"ping H-000001 10.0.0.2 count=50 interval=100us\n"
		"ping H-000001 10.0.0.9 count=3 interval=100us\n"
		"at 11ms link down S-0001:1\n"
		"at 12ms link up S-0001:1\n"
		"expect drops all > 0\nexpect drops all ==");
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(fabric_reasons); i++)
		n += (size_t)snprintf(text + n, cap - n, "%s drops %s",
				      i ? " +" : "", fabric_reasons[i]);
	n += (size_t)snprintf(text + n, cap - n,
		"\nexpect drops pkey > 0\nexpect drops loss > 0\n");
	for (unsigned h = 1; h <= 2; h++) {
		n += (size_t)snprintf(text + n, cap - n,
			"expect ipoib-counter H-%06u drops ==", h);
		for (unsigned i = 0; i < IMC_ARRAY_SIZE(ipoib_reasons); i++)
			n += (size_t)snprintf(text + n, cap - n,
				"%s ipoib-counter H-%06u drops-%s",
				i ? " +" : "", h, ipoib_reasons[i]);
		n += (size_t)snprintf(text + n, cap - n, "\n");
	}
	n += (size_t)snprintf(text + n, cap - n,
		"expect ipoib-counter H-000001 drops > 0\n");
	assert_true(n < cap);
	s = parse(text);
	run_ok(s, &o, &r);
	all_pass(&r);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	free(text);
}

/* The fabric's own API refuses what the parser refuses: a latency or a
 * delay whose sum with a time could wrap 64 bits. */
static void test_fabric_time_limit(void **state)
{
	struct imc_fabric_config c;
	struct imc_link_params lp;
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	char err[256];

	(void)state;
	assert_int_equal(imc_topo_generate("switch:hosts=2", &t, err,
					   sizeof(err)), 0);
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	imc_fabric_config_default(&c);
	c.link.latency = IMC_TIME_LIMIT + 1;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	c.link.latency = 100;
	c.sm_sweep_delay = UINT64_MAX;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), -EINVAL);
	c.sm_sweep_delay = IMC_TIME_LIMIT;
	c.link.latency = IMC_TIME_LIMIT;
	assert_int_equal(imc_fabric_create(t, loop, &c, &f), 0);
	lp = c.link;
	lp.reorder_delay = UINT64_MAX;
	assert_int_equal(imc_fabric_link_params_set(f, 0, 1, &lp), -EINVAL);
	lp.reorder_delay = IMC_TIME_LIMIT;
	assert_int_equal(imc_fabric_link_params_set(f, 0, 1, &lp), 0);
	imc_fabric_destroy(f);
	imc_loop_destroy(loop);
	imc_topo_destroy(t);
}

/* Both sides of an expectation are exact past 64 bits: no sum wraps or
 * saturates into a false verdict. */
static void test_expect_wide(void **state)
{
	struct imc_scenario *s;
	struct imc_scenario_result r;
	struct imc_scenario_run_opts o = { 0 };

	(void)state;
	s = parse(TOPO "stop 1ms\nsend H-000001 H-000002 count=5\n"
		  "expect sent H-000001 == 18446744073709551615 + 1 - "
		  "18446744073709551615 - 1 + 5\n"
		  "expect sent H-000001 < 18446744073709551615 + 18446744073709551615\n"
		  "expect sent H-000001 > 0 - 18446744073709551615 - 18446744073709551615\n"
		  "expect sent H-000001 != 18446744073709551615 + 6\n"
		  "expect sent H-000001 == 18446744073709551615 + 1\n"
		  "expect sent H-000001 == sent H-000001 + 18446744073709551615 + 1\n");
	run_ok(s, &o, &r);
	assert_int_equal(r.nchecks, 6);
	assert_int_equal(r.npassed, 4);
	assert_int_equal(r.nfailed, 2);
	/* With a subject on the right, its sum is shown, all 65 bits. */
	assert_string_equal(r.checks[5].observed_str,
			    "5 vs 18446744073709551621");
	assert_int_equal(r.checks[4].state, IMC_SCN_CHECK_FAIL);
	assert_string_equal(r.checks[4].observed_str, "5");
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated_settings),
		cmocka_unit_test(test_repeated_options),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_run_latency_at_limit),
		cmocka_unit_test(test_run_to_the_limit),
		cmocka_unit_test(test_file_not_text),
		cmocka_unit_test(test_names_many),
		cmocka_unit_test(test_sa_counter_identities),
		cmocka_unit_test(test_drop_identities),
		cmocka_unit_test(test_fabric_time_limit),
		cmocka_unit_test(test_expect_wide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
