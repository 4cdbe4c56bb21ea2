/* A scenario on a loop the caller owns: scenario time counts from the
 * loop's time at the start of the run, the caller's hooks see the running
 * fabric after the actions of time 0 and before it is freed, exactly
 * once each, and interrupted() ends the run early with the expectations
 * at the end still checked. The loop is the caller's and is left empty.
 * Exact counts are checked on a virtual loop; on the real-time loop only
 * what does not depend on how fast the machine is. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ibmcast/scenario.h"

static const char text[] =
	"topology switch:hosts=2\n"
	"seed 3\n"
	"stop 30ms\n"
	"at 0 send H-000001 H-000002 count=5 interval=100us\n"
	"at 1ms expect delivered H-000002 == 5\n"
	"at 20ms send H-000002 H-000001 count=5 interval=100us\n"
	"expect delivered H-000001 == 5\n";

struct hooks {
	unsigned started, ending, asked;
	unsigned stop_after;           /* interrupted() true from this call */
	uint64_t sent_at_start;
	imc_time_t now_at_start;
	bool fabric_at_end;
};

static int on_started(void *ctx, struct imc_scn_ctx *c)
{
	struct hooks *h = ctx;
	struct imc_fabric_totals tot;

	h->started++;
	h->now_at_start = imc_scn_now(c);
	imc_fabric_totals(imc_scn_fabric(c), &tot);
	/* The flow of time 0 has started: its first datagram is out. */
	h->sent_at_start = tot.sent;
	return 0;
}

static void on_ending(void *ctx, struct imc_scn_ctx *c)
{
	struct hooks *h = ctx;

	h->ending++;
	h->fabric_at_end = imc_scn_fabric(c) != NULL;
}

static bool on_interrupted(void *ctx)
{
	struct hooks *h = ctx;

	return ++h->asked >= h->stop_after && h->stop_after;
}

static struct imc_scenario *parse(void)
{
	struct imc_scenario *s;
	char err[256];

	assert_int_equal(imc_scenario_parse(text, strlen(text), "t.scn", NULL,
					    &s, err, sizeof(err)), 0);
	return s;
}

static void test_realtime_full_run(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s = parse();
	struct hooks h = { 0 };
	struct imc_loop *loop;
	char err[256];

	(void)state;
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	o.loop = loop;
	o.started = on_started;
	o.ending = on_ending;
	o.interrupted = on_interrupted;
	o.ctx = &h;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)), 0);
	assert_int_equal(h.started, 1);
	assert_int_equal(h.ending, 1);
	assert_true(h.fabric_at_end);
	assert_int_equal(h.sent_at_start, 1);
	assert_true(h.asked > 0);
	/* Scenario time, not the monotonic clock's. */
	assert_true(r.end >= 30 * IMC_NSEC_PER_MSEC);
	assert_true(r.end < 3600 * IMC_NSEC_PER_SEC);
	assert_int_equal(r.nchecks, 2);
	assert_int_equal(r.nskipped, 0);
	assert_true(r.totals.sent >= 1);
	assert_true(r.totals.delivered <= r.totals.sent);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

static void test_virtual_offset(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s = parse();
	struct hooks h = { 0 };
	struct imc_loop *loop;
	char err[256];

	(void)state;
	assert_int_equal(imc_loop_create_virtual(5 * IMC_NSEC_PER_SEC, &loop),
			 0);
	o.loop = loop;
	o.started = on_started;
	o.ending = on_ending;
	o.ctx = &h;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)), 0);
	assert_int_equal(h.started, 1);
	assert_int_equal(h.ending, 1);
	assert_int_equal(h.now_at_start, 0);
	assert_int_equal(h.sent_at_start, 1);
	assert_int_equal(r.end, 30 * IMC_NSEC_PER_MSEC);
	assert_int_equal(r.checks[0].at, IMC_NSEC_PER_MSEC);
	assert_int_equal(r.npassed, 2);
	assert_int_equal(r.totals.delivered, 10);
	assert_int_equal(r.leftover, 0);
	assert_int_equal(imc_loop_now(loop), 5 * IMC_NSEC_PER_SEC +
			 30 * IMC_NSEC_PER_MSEC);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

static void test_interrupted_early(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s = parse();
	struct hooks h = { .stop_after = 1 };
	struct imc_loop *loop;
	char err[256];

	(void)state;
	assert_int_equal(imc_loop_create_realtime(&loop), 0);
	o.loop = loop;
	o.started = on_started;
	o.ending = on_ending;
	o.interrupted = on_interrupted;
	o.ctx = &h;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)), 0);
	/* Asked first while reaching time 0: no start, nothing more run,
	 * the timed expectation skipped, the one at the end checked (and
	 * failed: H-000001 got nothing). */
	assert_int_equal(h.asked, 1);
	assert_int_equal(h.started, 0);
	assert_int_equal(h.ending, 0);
	assert_int_equal(r.nskipped, 1);
	assert_int_equal(r.nfailed, 1);
	assert_int_equal(r.checks[1].observed, 0);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);

	/* Interrupted after the start: ending still comes. */
	memset(&h, 0, sizeof(h));
	h.stop_after = 3;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)), 0);
	assert_int_equal(h.started, 1);
	assert_int_equal(h.ending, 1);
	assert_int_equal(h.asked, 3);
	assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

static int failing_start(void *ctx, struct imc_scn_ctx *c)
{
	struct hooks *h = ctx;

	h->started++;
	return imc_scn_fail(c, -ENODEV, "no such thing");
}

static void test_start_fails(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_scenario_result r;
	struct imc_scenario *s = parse();
	struct hooks h = { 0 };
	struct imc_loop *loop;
	char err[256];

	(void)state;
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	o.loop = loop;
	o.started = failing_start;
	o.ctx = &h;
	/* ending is required with started. */
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)),
			 -EINVAL);
	o.ending = on_ending;
	assert_int_equal(imc_scenario_run(s, &o, &r, err, sizeof(err)),
			 -ENODEV);
	assert_non_null(strstr(err, "no such thing"));
	assert_int_equal(h.started, 1);
	assert_int_equal(h.ending, 0);
	assert_int_equal(r.nchecks, 0);
	imc_scenario_destroy(s);
	assert_int_equal(imc_loop_destroy(loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_realtime_full_run),
		cmocka_unit_test(test_virtual_offset),
		cmocka_unit_test(test_interrupted_early),
		cmocka_unit_test(test_start_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
