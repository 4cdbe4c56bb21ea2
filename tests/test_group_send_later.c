/* A group send whose outcome comes later (src/scenario/scn.h,
 * scn_fail_line()): the SA engine service starts it when the line runs
 * and a callback from the loop decides it, as the sa plugin does when it
 * asks an external SM's SA for the group. A failure then is reported for
 * the line that started the send (file, line, verb, message) and stops
 * the run: no later line runs. A send that succeeds, or a failure named
 * by a flow number of no line, leaves the run going. The provider here is
 * a fake: no SA, the outcome chosen by the MGID's last word. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/scenario.h"
#include "scenario/scn.h"
#include "scenario_fixture.h"

#define TOPO "topology fat-tree:leaves=2,hosts=2,spines=2\n"
#define PENDING_MAX 4

static char log_buf[512];

#define note(...) scn_fx_note(log_buf, sizeof(log_buf), __VA_ARGS__)

/* Sends waiting for their outcome, 5 us after their line. */
struct pending {
	struct imc_timer timer;
	struct imc_scn_ctx *c;
	struct imc_gid mgid;
	uint32_t flow;
};

struct fake_run {
	struct pending p[PENDING_MAX];
	unsigned n;
};

static const char run_key;

static void run_free(void *data)
{
	struct fake_run *r = data;

	for (unsigned i = 0; i < r->n; i++)
		imc_timer_cancel(imc_scn_loop(r->p[i].c), &r->p[i].timer);
	free(r);
}

/* ff15::N: N 1 succeeds, 2 fails its line, 3 fails with a flow number
 * of no line. */
static void outcome(struct imc_timer *t)
{
	struct pending *p = imc_container_of(t, struct pending, timer);
	char gid[IMC_GID_STRLEN];
	uint8_t last = p->mgid.raw[15];

	imc_gid_format(&p->mgid, gid);
	note("outcome(%s) ", gid);
	if (last == 2)
		scn_fail_line(p->c, p->flow, -EIO, "no answer for %s", gid);
	else if (last == 3)
		scn_fail_line(p->c, UINT32_MAX, -EIO, "no line");
}

static int fake_send(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		     const struct imc_gid *mgid, uint32_t count,
		     uint32_t size, imc_time_t interval, uint8_t sl)
{
	struct fake_run *r = imc_scn_data(c, &run_key);
	struct pending *p;

	(void)size;
	(void)interval;
	(void)sl;
	note("send(%u:%u,%u,flow %u) ", (unsigned)node, port,
	     (unsigned)count, (unsigned)scn_flow_id(c));
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r || imc_scn_data_set(c, &run_key, r, run_free)) {
			free(r);
			return -ENOMEM;
		}
	}
	if (r->n == PENDING_MAX)
		return -ENOSPC;
	p = &r->p[r->n++];
	*p = (struct pending){ .c = c, .mgid = *mgid,
			       .flow = scn_flow_id(c) };
	imc_timer_init(&p->timer, outcome);
	return imc_timer_arm_in(imc_scn_loop(c), &p->timer,
				5 * IMC_NSEC_PER_USEC);
}

static const struct imc_sa *fake_engine(struct imc_scn_ctx *c)
{
	(void)c;
	return NULL;
}

static int fake_resolve(struct imc_scn_ctx *c, const struct scn_mgid *m,
			struct imc_gid *out)
{
	(void)c;
	*out = m->gid;
	return 0;
}

static const char name_space;

static const struct scn_svc_ops engine_ops = {
	.engine = fake_engine, .send = fake_send,
};
static const struct scn_svc_ops name_ops = {
	.space = &name_space, .what = "fake-join",
	.mgid_flags = SCN_MGID_MCAST, .resolve = fake_resolve,
};

static struct imc_scn_lang *lang(void)
{
	struct imc_scn_lang *l;

	assert_int_equal(scn_lang_create_core(&l), 0);
	assert_int_equal(imc_scn_lang_add_verb(l, &scn_verb_mcast_send), 0);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_SA_ENGINE,
					      &engine_ops), 0);
	assert_int_equal(scn_lang_add_service(l, SCN_SVC_NAME_MCAST,
					      &name_ops), 0);
	return l;
}

static int run(const char *text, char *err, size_t errlen)
{
	struct imc_scn_lang *l = lang();
	struct imc_scenario_parse_opts o = { .lang = l };
	struct imc_scenario *s = scn_fx_parse(text, &o);
	struct imc_scenario_result r;
	int rc;

	log_buf[0] = '\0';
	rc = imc_scenario_run(s, NULL, &r, err, errlen);
	/* Nothing left alive: the pending timers went with the run. */
	if (!rc)
		assert_int_equal(r.leftover, 0);
	imc_scenario_result_free(&r);
	imc_scenario_destroy(s);
	imc_scn_lang_destroy(l);
	return rc;
}

static void test_later_failure_names_its_line(void **state)
{
	char err[256];

	(void)state;
	/* The second action (flow 1, line 4) fails 5 us after it ran; the
	 * line at 100 us never runs. */
	assert_int_equal(run(TOPO "stop 1ms\n"
			     "at 10us mcast-send H-000001 ff15::1 count=2\n"
			     "at 20us mcast-send H-000002 ff15::2\n"
			     "at 100us mcast-send H-000003 ff15::1\n",
			     err, sizeof(err)), -EIO);
	assert_string_equal(err, "t.scn:4: mcast-send: no answer for ff15::2");
	assert_string_equal(log_buf,
		"send(0:1,2,flow 0) outcome(ff15::1) "
		"send(1:1,1,flow 1) outcome(ff15::2) ");
}

static void test_later_success_goes_on(void **state)
{
	char err[256];

	(void)state;
	/* Succeeding sends, and a failure that names no line: the run goes
	 * to its end and every line runs. */
	assert_int_equal(run(TOPO "stop 1ms\n"
			     "at 10us mcast-send H-000001 ff15::1\n"
			     "at 20us mcast-send H-000002 ff15::3\n"
			     "at 100us mcast-send H-000003 ff15::1\n",
			     err, sizeof(err)), 0);
	assert_string_equal(log_buf,
		"send(0:1,1,flow 0) outcome(ff15::1) "
		"send(1:1,1,flow 1) outcome(ff15::3) "
		"send(2:1,1,flow 2) outcome(ff15::1) ");
}

static void test_pending_at_end(void **state)
{
	char err[256];

	(void)state;
	/* Still waiting when the run ends: no outcome, nothing left. */
	assert_int_equal(run(TOPO "stop 12us\n"
			     "at 10us mcast-send H-000001 ff15::2\n",
			     err, sizeof(err)), 0);
	assert_string_equal(log_buf, "send(0:1,1,flow 0) ");
}

/* The MGID word is the names service's: @NAME looks in its space and
 * says its what; its flags refuse a unicast GID. Without the service, a
 * line of the verb is refused. */
static void test_names_from_service(void **state)
{
	struct imc_scn_lang *l = lang();
	struct imc_scn_lang *bare;
	struct imc_scenario_parse_opts o = { .lang = l };

	(void)state;
	scn_fx_expect_error(TOPO "mcast-send H-000001 @g\n", &o,
		"t.scn:2: mcast-send: @g: no fake-join ... as=g on an earlier line");
	scn_fx_expect_error(TOPO "mcast-send H-000001 fe80::1\n", &o,
		"t.scn:2: mcast-send: MGID: expected a multicast GID (ff12:...) or @NAME, got 'fe80::1'");
	scn_fx_expect_error(TOPO "mcast-send H-000001\n", &o,
		"t.scn:2: mcast-send: expected 'mcast-send FROM MGID|@NAME [count=N] [size=BYTES] [interval=TIME] [sl=N]'");
	imc_scn_lang_destroy(l);
	assert_int_equal(scn_lang_create_core(&bare), 0);
	assert_int_equal(imc_scn_lang_add_verb(bare, &scn_verb_mcast_send), 0);
	o.lang = bare;
	scn_fx_expect_error(TOPO "mcast-send H-000001 ff15::1\n", &o,
		"t.scn:2: mcast-send: @NAME: no plugin names groups");
	imc_scn_lang_destroy(bare);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_later_failure_names_its_line),
		cmocka_unit_test(test_later_success_goes_on),
		cmocka_unit_test(test_pending_at_end),
		cmocka_unit_test(test_names_from_service),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
