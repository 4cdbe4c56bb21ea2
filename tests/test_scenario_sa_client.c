/* The sa-join/leave/get requests go through the library's SA client
 * (sa_client.h): a request nobody answers is sent 1 + retries= times,
 * each attempt waiting timeout= and at most a quarter more (the client's
 * jitter, drawn from the run's seed), then ends with status "timeout";
 * the counters follow the sends and the end. Checked over many seeds,
 * and a seed replays the same run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ibmcast/scenario.h"
#include "scenario_fixture.h"

/* H-000002's cable loses every datagram from 500us on: its Set leaves
 * at 1ms, again in [2ms, 2.25ms] and in [3ms, 3.5ms], and times out in
 * [4ms, 4.75ms]. H-000003's join is answered. */
static const char text[] =
	"topology switch:hosts=3\n"
	"stop 10ms\n"
	"sa\n"
	"at 500us fault H-000002 loss=1\n"
	"at 1ms sa-join H-000002 ff15::7 create retries=2 timeout=1ms\n"
	"sa-join H-000003 ff15::7 create\n"
	"at 1999us expect sa-requests H-000002 == 1\n"
	"at 1999us expect sa-status H-000002 ff15::7 == pending\n"
	"at 2251us expect sa-requests H-000002 == 2\n"
	"at 2999us expect sa-requests H-000002 == 2\n"
	"at 3501us expect sa-requests H-000002 == 3\n"
	"at 3999us expect sa-status H-000002 ff15::7 == pending\n"
	"at 4751us expect sa-status H-000002 ff15::7 == timeout\n"
	"expect sa-timeouts == 1\n"
	"expect sa-answers H-000002 == 0\n"
	"expect sa-requests H-000002 == 3\n"
	"expect sa-answers H-000003 == 1\n"
	"expect sa-status H-000003 ff15::7 == success\n"
	"expect sa-members ff15::7 == 1\n"
	"expect sa-errors == 0\n";

static void test_retries_over_seeds(void **state)
{
	struct imc_scenario *s = parse(text);

	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct imc_scenario_run_opts o = { .seed_set = true,
						   .seed = seed };
		struct imc_scenario_result r;

		run_ok(s, &o, &r);
		if (r.nfailed)
			print_error("seed %llu\n", (unsigned long long)seed);
		all_pass(&r);
		imc_scenario_result_free(&r);
	}
	imc_scenario_destroy(s);
}

static void test_seed_replays(void **state)
{
	struct imc_scenario *s = parse(text);
	struct imc_scenario_run_opts o = { .seed_set = true, .seed = 7 };
	struct imc_scenario_result a, b;

	(void)state;
	run_ok(s, &o, &a);
	run_ok(s, &o, &b);
	assert_int_equal(a.trace_hash, b.trace_hash);
	assert_int_equal(a.events, b.events);
	imc_scenario_result_free(&a);
	imc_scenario_result_free(&b);
	imc_scenario_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retries_over_seeds),
		cmocka_unit_test(test_seed_replays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
