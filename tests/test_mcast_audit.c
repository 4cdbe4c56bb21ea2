/* The membership audit (src/umad/mcast_audit.c) of a join tracker, against
 * the SA engine on a virtual loop: rounds of Gets by MGID and PortGID, the
 * window, no alarm while the SA holds everything, a lost membership after
 * an SA restart (then the tracker re-joins and the SA holds the union
 * again), no alarm for a group left while its Get was on the way, none for
 * Gets unanswered, none while the port is down, and no callback after
 * destroy. Every test ends with nothing alive and no timer armed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_client.h"
#include "test_sa_fixture.h"
#include "umad/mcast_audit.h"

#define MS IMC_NSEC_PER_MSEC
#define LID 2
#define DELAY (50 * IMC_NSEC_PER_USEC)

/* ---- the world: the SA, one port's client, tracker and audit ---- */

struct flight {
	struct imc_timer timer;
	struct flight *next;
	bool to_sa;
	uint8_t mad[IMC_MAD_SIZE];
};

static struct world {
	struct fx f;
	struct imc_sa_client *c;
	struct imc_mcast *t;
	struct imc_mcast_audit *a;
	struct flight *flights;
	bool sa_down;              /* MADs to and from the SA are lost */
	imc_time_t get_delay;      /* extra delay of Gets on their way in */
	unsigned gets_sent;
	unsigned lost_calls;
	struct imc_gid lost_mgid;
	bool destroy_in_lost;
	unsigned events;
} *W;

static void unlink_flight(struct flight *fl)
{
	struct flight **p = &W->flights;

	while (*p != fl)
		p = &(*p)->next;
	*p = fl->next;
}

static void deliver(struct imc_timer *t)
{
	struct flight *fl = imc_container_of(t, struct flight, timer);
	struct imc_sa_src src = fx_src(LID);

	unlink_flight(fl);
	if (fl->to_sa && W->f.sa && !W->sa_down)
		(void)imc_sa_recv(W->f.sa, &src, fl->mad, IMC_MAD_SIZE);
	else if (!fl->to_sa && W->c)
		(void)imc_sa_client_recv(W->c, fl->mad, IMC_MAD_SIZE);
	free(fl);
}

static void fly(bool to_sa, const uint8_t *mad, imc_time_t delay)
{
	struct flight *fl = calloc(1, sizeof(*fl));

	assert_non_null(fl);
	fl->to_sa = to_sa;
	memcpy(fl->mad, mad, IMC_MAD_SIZE);
	imc_timer_init(&fl->timer, deliver);
	fl->next = W->flights;
	W->flights = fl;
	assert_int_equal(imc_timer_arm_in(W->f.loop, &fl->timer, delay), 0);
}

static int tr_send(void *ctx, const uint8_t *mad, size_t len)
{
	bool get = mad[3] == UMAD_METHOD_GET;

	assert_int_equal(len, IMC_MAD_SIZE);
	if (get)
		W->gets_sent++;
	if (!W->sa_down)
		fly(true, mad, DELAY + (get ? W->get_delay : 0));
	return 0;
}

static void sa_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	if (to->dlid == LID && !W->sa_down)
		fly(false, mad, DELAY);
}

static const struct imc_sa_ops sa_ops = {
	.port_by_gid = fx_by_gid,
	.port_by_lid = fx_by_lid,
	.send = sa_send,
};

static void sa_start(void)
{
	assert_int_equal(imc_sa_create(W->f.loop, &W->f.cfg, &sa_ops, W,
				       &W->f.sa), 0);
}

/* The SA restarts: a new one, with no group. */
static void sa_restart(void)
{
	imc_sa_destroy(W->f.sa);
	W->f.sa = NULL;
	sa_start();
}

static void on_lost(void *arg, const struct imc_gid *mgid)
{
	assert_ptr_equal(arg, W);
	W->lost_calls++;
	W->lost_mgid = *mgid;
	if (W->destroy_in_lost) {
		imc_mcast_audit_destroy(W->a);
		W->a = NULL;
		return;
	}
	imc_mcast_port_event(W->t, IMC_MCAST_PORT_REREGISTER);
}

static void audit_new(imc_time_t interval, unsigned window)
{
	struct imc_mcast_audit_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.interval = interval;
	cfg.window = window;
	cfg.port_gid = fx_gid(LID);
	cfg.lost = on_lost;
	cfg.arg = W;
	assert_int_equal(imc_mcast_audit_create(W->f.loop, W->c, W->t, &cfg,
						&W->a), 0);
}

static int setup(void **state)
{
	struct imc_sa_transport tr = { tr_send, NULL };
	struct imc_sa_client_config cc;
	struct imc_mcast_config mc;

	W = calloc(1, sizeof(*W));
	if (!W)
		return -1;
	fx_init(&W->f);
	sa_start();
	imc_sa_client_config_init(&cc);
	cc.timeout = 100 * MS;
	cc.max_timeout = 400 * MS;
	cc.retries = 2;
	cc.seed = 5;
	assert_int_equal(imc_sa_client_create(W->f.loop, &tr, &cc, &W->c), 0);
	imc_mcast_config_init(&mc);
	mc.port_gid = fx_gid(LID);
	mc.rejoin_spread = 10 * MS;
	mc.seed = 9;
	assert_int_equal(imc_mcast_create(W->f.loop, W->c, &mc, NULL, &W->t),
			 0);
	return 0;
}

static int teardown(void **state)
{
	while (W->flights) {
		struct flight *fl = W->flights;

		imc_timer_cancel(W->f.loop, &fl->timer);
		W->flights = fl->next;
		free(fl);
	}
	imc_mcast_audit_destroy(W->a);
	imc_mcast_destroy(W->t);
	imc_sa_client_destroy(W->c);
	fx_fini(&W->f);
	free(W);
	W = NULL;
	return 0;
}

/* ---- members ---- */

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	W->events++;
}

static struct imc_mcast_member *join(const char *mgid, uint8_t js)
{
	struct imc_mcast_join_req req;
	struct imc_mcast_member *m;

	memset(&req, 0, sizeof(req));
	req.rec = fx_create_rec(NULL, LID, js);
	req.rec.mgid = fx_mgid(mgid);
	req.comp_mask = CREATE_MASK;
	req.join_state = js;
	assert_int_equal(imc_mcast_join(W->t, &req, on_member, NULL, &m), 0);
	return m;
}

struct js_find {
	struct imc_gid gid;
	uint8_t js;
};

static int js_cb(void *arg, const struct imc_sa_member_info *m)
{
	struct js_find *f = arg;

	if (imc_gid_equal(&m->port_gid, &f->gid))
		f->js = m->join_state;
	return 0;
}

/* JoinState of the port in mgid at the SA (0: none). */
static uint8_t sa_js(const char *mgid)
{
	struct js_find f = { fx_gid(LID), 0 };
	struct imc_gid g = fx_mgid(mgid);

	(void)imc_sa_foreach_member(W->f.sa, &g, js_cb, &f);
	return f.js;
}

static struct imc_mcast_audit_stats astats(void)
{
	struct imc_mcast_audit_stats st;

	imc_mcast_audit_get_stats(W->a, &st);
	return st;
}

/* Leaves, lets the Deletes through, and checks nothing is left. */
static void finish(struct imc_mcast_member **m, size_t n)
{
	struct imc_mcast_stats st;
	struct imc_sa_client_stats cs;

	for (size_t i = 0; i < n; i++)
		imc_mcast_leave(m[i]);
	imc_mcast_audit_destroy(W->a);
	W->a = NULL;
	fx_run_for(&W->f, 10 * IMC_NSEC_PER_SEC);
	imc_mcast_get_stats(W->t, &st);
	assert_int_equal(st.groups, 0);
	assert_int_equal(st.members, 0);
	imc_sa_client_get_stats(W->c, &cs);
	assert_int_equal(cs.alive, 0);
	assert_null(W->flights);
}

static const char *G1 = "ff12:e001::1";
static const char *G2 = "ff12:e001::2";
static const char *G3 = "ff12:e001::3";

/* ---- tests ---- */

static void test_rounds_no_alarm(void **state)
{
	struct imc_mcast_member *m[3];
	struct imc_mcast_audit_stats st;

	m[0] = join(G1, IMC_JOIN_FULL);
	m[1] = join(G2, IMC_JOIN_FULL);
	m[2] = join(G3, IMC_JOIN_SENDONLY_FULL);
	fx_run_for(&W->f, 100 * MS);
	assert_int_equal(sa_js(G3), IMC_JOIN_SENDONLY_FULL);
	audit_new(1000 * MS, 2);
	/* No Get before the first interval. */
	fx_run_for(&W->f, 999 * MS);
	assert_int_equal(W->gets_sent, 0);
	fx_run_for(&W->f, 4500 * MS);
	st = astats();
	/* Rounds at about 1, 2, 3, 4 and 5 s: three Gets each, two at once. */
	assert_int_equal(st.rounds, 4 + (st.rounds > 4));
	assert_int_equal(st.gets, 3 * st.rounds);
	assert_int_equal(W->gets_sent, st.gets);
	assert_int_equal(st.max_in_flight, 2);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(W->lost_calls, 0);
	finish(m, 3);
}

static void test_restart_detected_and_rejoined(void **state)
{
	struct imc_mcast_member *m[3];
	struct imc_mcast_audit_stats st;
	struct imc_mcast_stats ts;
	unsigned ev;

	m[0] = join(G1, IMC_JOIN_FULL);
	m[1] = join(G2, IMC_JOIN_FULL);
	m[2] = join(G2, IMC_JOIN_NON);
	audit_new(1000 * MS, 4);
	fx_run_for(&W->f, 500 * MS);
	assert_int_equal(sa_js(G2), IMC_JOIN_FULL | IMC_JOIN_NON);
	ev = W->events;
	sa_restart();
	assert_int_equal(sa_js(G1), 0);
	fx_run_for(&W->f, 700 * MS);       /* the round at 1 s */
	st = astats();
	assert_int_equal(st.lost, 1);
	assert_int_equal(W->lost_calls, 1);
	/* The first Get sent (MGID order) found the loss. */
	assert_gid_eq(&W->lost_mgid, G1);
	/* The reregister re-joined both groups with their unions. */
	fx_run_for(&W->f, 300 * MS);
	assert_int_equal(sa_js(G1), IMC_JOIN_FULL);
	assert_int_equal(sa_js(G2), IMC_JOIN_FULL | IMC_JOIN_NON);
	/* Each member saw REJOINING then JOINED. */
	assert_int_equal(W->events - ev, 6);
	imc_mcast_get_stats(W->t, &ts);
	assert_int_equal(ts.rejoins, 2);
	/* Later rounds find everything. */
	fx_run_for(&W->f, 3000 * MS);
	st = astats();
	assert_int_equal(st.lost, 1);
	assert_true(st.rounds >= 3);
	finish(m, 3);
}

static void test_left_group_no_alarm(void **state)
{
	struct imc_mcast_member *m[2];
	struct imc_mcast_audit_stats st;

	m[0] = join(G1, IMC_JOIN_FULL);
	m[1] = join(G2, IMC_JOIN_FULL);
	audit_new(0, 1);
	fx_run_for(&W->f, 100 * MS);
	/* The Get of G1 reaches the SA after G1's Delete. */
	W->get_delay = 20 * MS;
	imc_mcast_audit_run(W->a);
	assert_int_equal(W->gets_sent, 1);
	imc_mcast_leave(m[0]);
	fx_run_for(&W->f, 100 * MS);
	assert_int_equal(sa_js(G1), 0);
	st = astats();
	assert_int_equal(st.gets, 2);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.lost, 0);
	assert_int_equal(W->lost_calls, 0);
	finish(&m[1], 1);
}

static void test_unanswered_no_alarm(void **state)
{
	struct imc_mcast_member *m[1];
	struct imc_mcast_audit_stats st;

	m[0] = join(G1, IMC_JOIN_FULL);
	audit_new(0, 4);
	fx_run_for(&W->f, 100 * MS);
	W->sa_down = true;
	imc_mcast_audit_run(W->a);
	fx_run_for(&W->f, 2000 * MS);
	st = astats();
	assert_int_equal(st.gets, 1);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.lost, 0);
	assert_int_equal(W->lost_calls, 0);
	W->sa_down = false;
	finish(m, 1);
}

static void test_port_down_no_gets(void **state)
{
	struct imc_mcast_member *m[1];

	m[0] = join(G1, IMC_JOIN_FULL);
	audit_new(500 * MS, 4);
	fx_run_for(&W->f, 100 * MS);
	imc_mcast_audit_set_active(W->a, false);
	fx_run_for(&W->f, 2000 * MS);
	assert_true(astats().rounds >= 3);
	assert_int_equal(W->gets_sent, 0);
	imc_mcast_audit_set_active(W->a, true);
	fx_run_for(&W->f, 600 * MS);
	assert_int_equal(W->gets_sent, 1);
	finish(m, 1);
}

static void test_destroy_in_flight_and_in_lost(void **state)
{
	struct imc_mcast_member *m[2];

	m[0] = join(G1, IMC_JOIN_FULL);
	m[1] = join(G2, IMC_JOIN_FULL);
	audit_new(0, 4);
	fx_run_for(&W->f, 100 * MS);
	/* Destroyed with two Gets in flight: no callback. */
	sa_restart();
	imc_mcast_audit_run(W->a);
	assert_int_equal(astats().in_flight, 2);
	imc_mcast_audit_destroy(W->a);
	W->a = NULL;
	fx_run_for(&W->f, 100 * MS);
	assert_int_equal(W->lost_calls, 0);
	/* lost() may destroy the audit. */
	audit_new(0, 4);
	W->destroy_in_lost = true;
	imc_mcast_audit_run(W->a);
	fx_run_for(&W->f, 100 * MS);
	assert_int_equal(W->lost_calls, 1);
	assert_null(W->a);
	imc_mcast_port_event(W->t, IMC_MCAST_PORT_REREGISTER);
	finish(m, 2);
}

static void test_bad_config(void **state)
{
	struct imc_mcast_audit_config cfg;
	struct imc_mcast_audit *a = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.window = 1;
	assert_int_equal(imc_mcast_audit_create(W->f.loop, W->c, W->t, &cfg,
						&a), -EINVAL);
	cfg.lost = on_lost;
	cfg.window = 0;
	assert_int_equal(imc_mcast_audit_create(W->f.loop, W->c, W->t, &cfg,
						&a), -EINVAL);
	assert_null(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rounds_no_alarm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restart_detected_and_rejoined,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_left_group_no_alarm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unanswered_no_alarm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_port_down_no_gets, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_destroy_in_flight_and_in_lost,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_config, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
