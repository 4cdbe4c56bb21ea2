/* The opensm setting (src/scenario/served.c) without OpenSM: its parse
 * and print, and each way a run ends before the scenario starts (no
 * opensm, no umad2sim, OpenSM exits, no SUBNET UP in time, a caller's
 * loop), each with its errno and a message that names the cause. The
 * runs with the real OpenSM are tests/opensm_fabric_scenario.sh. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "stand_in.h"

#include "ibmcast/scenario.h"

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"

static struct imc_scenario *parse_ok(const char *text)
{
	struct imc_scenario *s = NULL;
	char err[512] = "";
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", NULL, &s,
				    err, sizeof(err));

	if (rc)
		fail_msg("parse: %s", err);
	return s;
}

static void parse_err(const char *text, const char *want)
{
	struct imc_scenario *s = NULL;
	char err[512] = "";
	int rc = imc_scenario_parse(text, strlen(text), "t.scn", NULL, &s,
				    err, sizeof(err));

	assert_int_not_equal(rc, 0);
	assert_null(s);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
}

static char *print(const struct imc_scenario *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	imc_scenario_print(s, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_parse(void **state)
{
	struct imc_scenario *s;
	char *out;

	(void)state;
	s = parse_ok(TOPO "opensm wait=5s hold=1500ms node=H-000004\n");
	out = print(s);
	if (!strstr(out, "\nopensm wait=5s hold=1500ms node=H-000004\n"))
		fail_msg("printed:\n%s", out);
	free(out);
	imc_scenario_destroy(s);
	s = parse_ok(TOPO "opensm\n");
	out = print(s);
	assert_non_null(strstr(out, "\nopensm\n"));
	free(out);
	imc_scenario_destroy(s);

	parse_err(TOPO "opensm wait=5\n", "t.scn:2");
	parse_err(TOPO "opensm speed=5s\n", "unknown option 'speed=5s'");
	parse_err(TOPO "opensm node=H-999\n", "t.scn:2");
	parse_err(TOPO "opensm wait=1s wait=2s\n", "t.scn:2");
	parse_err(TOPO "opensm\nopensm hold=1s\n", "t.scn:3: opensm: a second opensm line");
	parse_err(TOPO "at 1ms opensm-restart now\n", "expected 'opensm-restart' alone");
}

/* With an opensm line, sa options (the built-in SA's) fail the run at
 * the sa line, before OpenSM is looked for. */
static void test_sa_options(void **state)
{
	struct imc_scenario *s = parse_ok(TOPO "opensm\nsa rate=100\n");
	struct imc_scenario_result r;
	char err[512] = "";

	(void)state;
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, "t.scn:3: sa: the options configure the built-in SA"))
		fail_msg("error '%s'", err);
	imc_scenario_destroy(s);
}

/* opensm-restart without an opensm line: the run fails at its line. */
static void test_restart_alone(void **state)
{
	struct imc_scenario *s = parse_ok(TOPO "stop 2ms\nat 1ms opensm-restart\n");
	struct imc_scenario_result r;
	char err[512] = "";

	(void)state;
	assert_int_equal(imc_scenario_run(s, NULL, &r, err, sizeof(err)),
			 -ENOENT);
	if (!strstr(err, "t.scn:3: opensm-restart: no OpenSM runs"))
		fail_msg("error '%s'", err);
	imc_scenario_destroy(s);
}

/* A run of an opensm scenario that must fail before its time 0. */
static void run_err(const struct imc_scenario_run_opts *o, int want_rc,
		    const char *want)
{
	struct imc_scenario *s = parse_ok(TOPO "stop 1ms\nopensm\n"
					  "at 0 send H-000002 H-000003\n");
	struct imc_scenario_result r;
	char err[512] = "";
	int rc = imc_scenario_run(s, o, &r, err, sizeof(err));

	assert_int_equal(rc, want_rc);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_null(r.checks);
	imc_scenario_destroy(s);
}

static char dir[64];

static void test_run_errors(void **state)
{
	struct imc_scenario_run_opts o = { 0 };
	struct imc_loop *loop;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_served.XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* umad2sim is only preloaded: any readable file does here. */
	setenv("IBMCAST_UMAD2SIM", "/dev/null", 1);

	setenv("IBMCAST_OPENSM", "/nonexistent/opensm", 1);
	run_err(&o, -ENOPKG, "opensm not found");

	setenv("IBMCAST_OPENSM", stand_in(dir, "ok", "exit 0"), 1);
	setenv("IBMCAST_UMAD2SIM", "/nonexistent/libumad2sim.so", 1);
	run_err(&o, -ENOPKG, "umad2sim not found at /nonexistent/libumad2sim.so");
	setenv("IBMCAST_UMAD2SIM", "/dev/null", 1);

	setenv("IBMCAST_OPENSM", stand_in(dir, "exits", "exit 3"), 1);
	run_err(&o, -ECHILD, "opensm exited (status 3");

	/* Never says SUBNET UP: the bound of the wait ends it, and the
	 * process is stopped (the run returns, so it was reaped). */
	setenv("IBMCAST_OPENSM", stand_in(dir, "silent", "exec sleep 60"), 1);
	o.sm_wait = 300 * IMC_NSEC_PER_MSEC;
	run_err(&o, -ETIMEDOUT, "did not bring the subnet up in 0.3 s");
	o.sm_wait = 0;

	/* A caller's loop: the run needs a real-time loop of its own. */
	assert_int_equal(imc_loop_create_virtual(0, &loop), 0);
	o.loop = loop;
	run_err(&o, -EINVAL, "runs on a loop of its own");
	imc_loop_destroy(loop);

	unlink(stand_in(dir, "ok", ""));
	unlink(stand_in(dir, "exits", ""));
	unlink(stand_in(dir, "silent", ""));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_restart_alone),
		cmocka_unit_test(test_sa_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
