/* The load generator of `ibmcast storm` (src/sa_client/storm.c) against the SA
 * engine on a virtual loop: an imc_sa_client whose MADs reach the SA
 * (and come back) after a fixed delay, or are lost. Checked: the
 * operations' statuses and latencies, the window, pacing, the order of
 * one group's operations, the SA-chosen MGIDs of creates, the teardown,
 * stop and abort, and that nothing is left alive. */
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
#include "ibmcast/mad.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_client.h"
#include "test_sa_fixture.h"

#include "ibmcast/storm.h"

#define CLIENT_LID 2
#define DELAY (50 * IMC_NSEC_PER_USEC)     /* one way */

/* A MAD on its way, delivered by its own timer. */
struct msg {
	struct imc_timer t;
	struct net *n;
	bool to_sa;
	uint8_t mad[IMC_MAD_SIZE];
};

/* One sent request as the SA got it. */
struct seen {
	imc_time_t at;
	uint8_t method;
	struct imc_mcmr rec;
	uint64_t mask;
};

struct net {
	struct fx f;                /* first: the SA's ops get &net->f */
	struct imc_sa_client *c;
	struct imc_storm *s;
	unsigned lose;              /* requests to lose, from now on */
	unsigned on_way;            /* requests sent, not yet answered */
	unsigned max_on_way;
	struct seen *seen;
	size_t nseen, capseen;
	unsigned done_calls;
	bool destroy_in_done;
	uint32_t base_groups;
};

static void deliver(struct imc_timer *t)
{
	struct msg *m = imc_container_of(t, struct msg, t);
	struct net *n = m->n;

	if (m->to_sa) {
		struct imc_sa_src src = fx_src(CLIENT_LID);
		struct imc_sa_mad d;

		assert_int_equal(imc_sa_mad_unpack(&d, m->mad, IMC_MAD_SIZE),
				 IMC_MAD_SIZE);
		if (n->nseen == n->capseen) {
			n->capseen = n->capseen ? 2 * n->capseen : 256;
			n->seen = realloc(n->seen,
					  n->capseen * sizeof(*n->seen));
			assert_non_null(n->seen);
		}
		n->seen[n->nseen].at = imc_loop_now(n->f.loop);
		n->seen[n->nseen].method = d.mad.method;
		n->seen[n->nseen].mask = d.sa.comp_mask;
		imc_mcmr_unpack(&n->seen[n->nseen].rec, d.data, sizeof(d.data));
		n->nseen++;
		assert_int_equal(imc_sa_recv(n->f.sa, &src, m->mad,
					     IMC_MAD_SIZE), 0);
	} else {
		n->on_way--;
		imc_sa_client_recv(n->c, m->mad, IMC_MAD_SIZE);
	}
	free(m);
}

static void post(struct net *n, bool to_sa, const uint8_t *mad, size_t len)
{
	struct msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->n = n;
	m->to_sa = to_sa;
	memcpy(m->mad, mad, len < IMC_MAD_SIZE ? len : IMC_MAD_SIZE);
	imc_timer_init(&m->t, deliver);
	assert_int_equal(imc_timer_arm_in(n->f.loop, &m->t, DELAY), 0);
}

/* The client's transport. */
static int client_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct net *n = ctx;

	if (n->lose) {
		n->lose--;
		return 0;
	}
	if (++n->on_way > n->max_on_way)
		n->max_on_way = n->on_way;
	post(n, true, mad, len);
	return 0;
}

/* The SA's way out. */
static void sa_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	struct net *n = imc_container_of(ctx, struct net, f);

	assert_int_equal(to->dlid, CLIENT_LID);
	post(n, false, mad, len);
}

static const struct imc_sa_ops net_ops = {
	.port_by_gid = fx_by_gid,
	.port_by_lid = fx_by_lid,
	.send = sa_send,
};

static uint32_t sa_groups(const struct net *n);

static struct net *net_up(unsigned window, imc_time_t timeout,
			  unsigned retries)
{
	struct net *n = calloc(1, sizeof(*n));
	struct imc_sa_client_config cc;
	struct imc_sa_transport tr = { client_send, NULL };

	assert_non_null(n);
	fx_init(&n->f);
	assert_int_equal(imc_sa_create(n->f.loop, &n->f.cfg, &net_ops, &n->f,
				       &n->f.sa), 0);
	imc_sa_client_config_init(&cc);
	cc.window = window;
	cc.timeout = timeout;
	cc.max_timeout = timeout;
	cc.retries = retries;
	cc.seed = 7;
	tr.ctx = n;
	assert_int_equal(imc_sa_client_create(n->f.loop, &tr, &cc, &n->c), 0);
	n->base_groups = sa_groups(n);
	return n;
}

/* Frees everything; the loop must hold nothing and no query be alive. */
static void net_down(struct net *n)
{
	struct imc_sa_client_stats cs;

	imc_storm_destroy(n->s);
	/* Let the MADs still on their way arrive (and be ignored). */
	assert_int_equal(imc_loop_run(n->f.loop), 0);
	imc_sa_client_get_stats(n->c, &cs);
	assert_int_equal(cs.alive, 0);
	imc_sa_client_destroy(n->c);
	fx_fini(&n->f);
	free(n->seen);
	free(n);
}

static void run_done(void *arg, struct imc_storm *s)
{
	struct net *n = arg;

	assert_ptr_equal(s, n->s);
	n->done_calls++;
	if (n->destroy_in_done) {
		imc_storm_destroy(s);
		n->s = NULL;
	}
}

static struct imc_storm_config config(const char *ops, uint64_t count,
				  uint32_t groups, unsigned inflight)
{
	struct imc_storm_config cfg;
	int k;

	imc_storm_config_init(&cfg);
	k = imc_storm_parse_ops(ops, cfg.cycle);
	assert_true(k > 0);
	cfg.cycle_len = (unsigned)k;
	cfg.count = count;
	cfg.groups = groups;
	cfg.inflight = inflight;
	cfg.port_gid = fx_gid(CLIENT_LID);
	return cfg;
}

static void start(struct net *n, const struct imc_storm_config *cfg)
{
	assert_int_equal(imc_storm_create(n->f.loop, n->c, cfg, run_done, n, &n->s),
			 0);
	imc_storm_start(n->s);
	/* Nothing happens inside the call. */
	assert_int_equal(n->nseen, 0);
	assert_int_equal(n->done_calls, 0);
}

/* A whole run: start, loop until idle, done called once. */
static const struct imc_storm_report *run(struct net *n,
				      const struct imc_storm_config *cfg)
{
	start(n, cfg);
	assert_int_equal(imc_loop_run(n->f.loop), 0);
	assert_int_equal(n->done_calls, 1);
	return imc_storm_get_report(n->s);
}

/* The groups at the SA beside those it had when it started (its IPoIB
 * broadcast group). */
static uint32_t sa_groups(const struct net *n)
{
	struct imc_sa_stats st;

	imc_sa_get_stats(n->f.sa, &st);
	return st.groups - n->base_groups;
}

static uint64_t status_count(const struct imc_storm_tally *t, uint16_t status)
{
	for (unsigned i = 0; i < t->n_statuses; i++)
		if (t->statuses[i].status == status)
			return t->statuses[i].count;
	return 0;
}

/* ---- parsing ---- */

static void test_parse_ops(void **state)
{
	enum imc_storm_op c[IMC_STORM_MAX_CYCLE];

	(void)state;
	assert_int_equal(imc_storm_parse_ops("join,rejoin,leave,create", c), 4);
	assert_int_equal(c[0], IMC_STORM_JOIN);
	assert_int_equal(c[1], IMC_STORM_REJOIN);
	assert_int_equal(c[2], IMC_STORM_LEAVE);
	assert_int_equal(c[3], IMC_STORM_CREATE);
	assert_int_equal(imc_storm_parse_ops("leave", c), 1);
	assert_int_equal(c[0], IMC_STORM_LEAVE);
	assert_int_equal(imc_storm_parse_ops("", c), -EINVAL);
	assert_int_equal(imc_storm_parse_ops("join,", c), -EINVAL);
	assert_int_equal(imc_storm_parse_ops(",join", c), -EINVAL);
	assert_int_equal(imc_storm_parse_ops("join,,leave", c), -EINVAL);
	assert_int_equal(imc_storm_parse_ops("joins", c), -EINVAL);
	assert_int_equal(imc_storm_parse_ops("joi", c), -EINVAL);
	assert_int_equal(imc_storm_parse_ops("join,leave,join,leave,join,leave,"
					 "join,leave", c), 8);
	assert_int_equal(imc_storm_parse_ops("join,leave,join,leave,join,leave,"
					 "join,leave,join", c), -EINVAL);
	assert_string_equal(imc_storm_op_name(IMC_STORM_REJOIN), "rejoin");
	assert_null(imc_storm_op_name(IMC_STORM_OPS));
}

static void test_cycle_repeats(void **state)
{
	enum imc_storm_op c[IMC_STORM_MAX_CYCLE];
	static const struct { const char *ops; int want; } cases[] = {
		{ "join", 1 }, { "join,leave", 1 }, { "rejoin", 1 },
		{ "leave", 1 }, { "create,leave", 1 },
		{ "create,rejoin,leave", 1 }, { "leave,create", 1 },
		{ "create", 0 }, { "create,rejoin", 0 }, { "leave,create,join", 1 },
		{ "join,create", 0 },
		{ "create,create", -EINVAL }, { "create,join,create", -EINVAL },
		{ "create,leave,create", 0 }, { "create,leave,create,leave", 1 },
	};

	(void)state;
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		int k = imc_storm_parse_ops(cases[i].ops, c);

		assert_true(k > 0);
		if (imc_storm_cycle_repeats(c, (unsigned)k) != cases[i].want)
			fail_msg("%s: %d, want %d", cases[i].ops,
				 imc_storm_cycle_repeats(c, (unsigned)k),
				 cases[i].want);
	}
}

/* ---- histogram ---- */

static void test_hist(void **state)
{
	struct imc_storm_hist *h = calloc(1, sizeof(*h));
	uint64_t p;

	(void)state;
	assert_non_null(h);
	assert_int_equal(imc_storm_hist_quantile(h, 0.5), 0);
	/* Below 128 every value has its own bucket. */
	for (uint64_t v = 1; v <= 100; v++)
		imc_storm_hist_add(h, v);
	assert_int_equal(imc_storm_hist_quantile(h, 0.5), 50);
	assert_int_equal(imc_storm_hist_quantile(h, 0.9), 90);
	assert_int_equal(imc_storm_hist_quantile(h, 0.99), 99);
	assert_int_equal(imc_storm_hist_quantile(h, 1.0), 100);
	assert_int_equal(imc_storm_hist_quantile(h, 0.0), 1);
	memset(h, 0, sizeof(*h));
	/* 1..100000 us in ns: within 1/64 above the true rank's value. */
	for (uint64_t v = 1; v <= 100000; v++)
		imc_storm_hist_add(h, v * 1000);
	p = imc_storm_hist_quantile(h, 0.5);
	assert_true(p >= 50000000 && p <= 50000000 + 50000000 / 64);
	p = imc_storm_hist_quantile(h, 0.99);
	assert_true(p >= 99000000 && p <= 99000000 + 99000000 / 64);
	assert_int_equal(imc_storm_hist_quantile(h, 1.0), 100000000);
	assert_int_equal(h->max, 100000000);
	/* The extremes of the range. */
	memset(h, 0, sizeof(*h));
	imc_storm_hist_add(h, UINT64_MAX);
	imc_storm_hist_add(h, 0);
	assert_int_equal(imc_storm_hist_quantile(h, 0.5), 0);
	assert_true(imc_storm_hist_quantile(h, 1.0) == UINT64_MAX);
	free(h);
}

/* ---- runs ---- */

static void test_join_leave(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join,leave", 200, 200, 8);
	const struct imc_storm_report *r;
	struct imc_sa_stats st;

	(void)state;
	r = run(n, &cfg);
	assert_true(r->done);
	assert_int_equal(r->cycles_started, 200);
	assert_int_equal(r->cycles_done, 200);
	assert_int_equal(r->op[IMC_STORM_JOIN].sent, 200);
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 200);
	assert_int_equal(r->op[IMC_STORM_LEAVE].sent, 200);
	assert_int_equal(r->op[IMC_STORM_LEAVE].success, 200);
	assert_int_equal(status_count(&r->op[IMC_STORM_LEAVE], 0), 200);
	assert_int_equal(r->op[IMC_STORM_REJOIN].sent, 0);
	assert_int_equal(r->teardown.sent, 0);
	assert_int_equal(r->held, 0);
	/* The window is full and never more. */
	assert_int_equal(r->max_in_flight, 8);
	assert_int_equal(n->max_on_way, 8);
	/* Every answer takes exactly one round trip of the virtual wire. */
	assert_int_equal(imc_storm_hist_quantile(&r->op[IMC_STORM_JOIN].latency, 0.5),
			 2 * DELAY);
	assert_int_equal(r->op[IMC_STORM_LEAVE].latency.max, 2 * DELAY);
	assert_int_equal(r->op[IMC_STORM_JOIN].latency.n, 200);
	/* 400 requests, 8 at a time, one round trip each. */
	assert_int_equal(r->run_time, 400 / 8 * 2 * DELAY);
	/* The SA created 200 groups and deleted them. */
	imc_sa_get_stats(n->f.sa, &st);
	assert_int_equal(st.groups_created, 200);
	assert_int_equal(st.groups_deleted, 200);
	assert_int_equal(sa_groups(n), 0);
	/* The joins carried the creation components, the leaves not. */
	assert_int_equal(n->seen[0].method, UMAD_METHOD_SET);
	assert_int_equal(n->seen[0].mask, CREATE_MASK);
	assert_true(imc_gid_equal(&n->seen[0].rec.mgid,
				  &(struct imc_gid){ .raw = { 0xff, 0x15, 0x12,
				  0x34, 0, 1, [15] = 1 } }));
	assert_true(imc_gid_equal(&n->seen[0].rec.port_gid,
				  &cfg.port_gid));
	assert_int_equal(n->seen[0].rec.qkey, 0x1234);
	assert_int_equal(n->seen[0].rec.join_state, 1);
	for (size_t i = 0; i < n->nseen; i++)
		if (n->seen[i].method == UMAD_SA_METHOD_DELETE)
			assert_int_equal(n->seen[i].mask, JOIN_MASK);
	net_down(n);
}

/* With fewer groups than the window, a group's operations still go one
 * after the other: a leave never overtakes its join. */
static void test_slot_order(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join,rejoin,leave", 30, 2, 8);
	const struct imc_storm_report *r;
	unsigned next[2] = { 0, 0 };
	static const uint8_t want[3] = { UMAD_METHOD_SET, UMAD_METHOD_SET,
					 UMAD_SA_METHOD_DELETE };

	(void)state;
	r = run(n, &cfg);
	assert_int_equal(r->cycles_done, 30);
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 30);
	assert_int_equal(r->op[IMC_STORM_REJOIN].success, 30);
	assert_int_equal(r->op[IMC_STORM_LEAVE].success, 30);
	assert_int_equal(r->max_in_flight, 2);
	assert_int_equal(n->nseen, 90);
	for (size_t i = 0; i < n->nseen; i++) {
		unsigned g = n->seen[i].rec.mgid.raw[15] - 1;

		assert_true(g < 2);
		assert_int_equal(n->seen[i].method, want[next[g] % 3]);
		assert_int_equal(n->seen[i].mask, next[g] % 3 == 0 ?
				 CREATE_MASK : JOIN_MASK);
		next[g]++;
	}
	assert_int_equal(next[0], 45);
	assert_int_equal(sa_groups(n), 0);
	net_down(n);
}

/* Creates: the SA picks the MGIDs, later operations use them. */
static void test_create(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("create,rejoin,leave", 50, 50, 16);
	const struct imc_storm_report *r;
	struct imc_sa_stats st;

	(void)state;
	r = run(n, &cfg);
	assert_int_equal(r->op[IMC_STORM_CREATE].success, 50);
	assert_int_equal(r->op[IMC_STORM_REJOIN].success, 50);
	assert_int_equal(r->op[IMC_STORM_LEAVE].success, 50);
	assert_int_equal(r->unnamed, 0);
	assert_int_equal(r->held, 0);
	imc_sa_get_stats(n->f.sa, &st);
	assert_int_equal(st.groups_created, 50);
	assert_int_equal(sa_groups(n), 0);
	for (size_t i = 0; i < n->nseen; i++) {
		const struct imc_gid *g = &n->seen[i].rec.mgid;

		if (n->seen[i].mask == CREATE_MASK) {
			assert_true(imc_gid_is_zero(g));
		} else {
			/* an SA-assigned MGID, not the slot's own */
			assert_int_equal(g->raw[0], 0xff);
			assert_false(g->raw[1] == 0x15 && g->raw[2] == 0x12);
		}
	}
	net_down(n);
}

/* Re-joins of groups that do not exist: the SA's status, by name. */
static void test_rejoin_absent(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("rejoin", 40, 10, 32);
	const struct imc_storm_report *r;

	(void)state;
	r = run(n, &cfg);
	assert_int_equal(r->op[IMC_STORM_REJOIN].sent, 40);
	assert_int_equal(r->op[IMC_STORM_REJOIN].answered, 40);
	assert_int_equal(r->op[IMC_STORM_REJOIN].success, 0);
	assert_int_equal(r->op[IMC_STORM_REJOIN].n_statuses, 1);
	assert_int_equal(status_count(&r->op[IMC_STORM_REJOIN], ST_INSUF_COMPS),
			 40);
	assert_string_equal(imc_mad_status_str(
		r->op[IMC_STORM_REJOIN].statuses[0].status), "INSUF_COMPS");
	assert_int_equal(r->max_in_flight, 10);
	assert_int_equal(r->held, 0);
	assert_int_equal(r->teardown.sent, 0);
	net_down(n);
}

/* keep: the groups stay; without it the teardown leaves them. */
static void test_keep_and_teardown(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join", 100, 60, 32);
	const struct imc_storm_report *r;

	(void)state;
	cfg.keep = true;
	r = run(n, &cfg);
	/* 100 joins on 60 groups: 40 of them joined twice */
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 100);
	assert_int_equal(r->held, 60);
	assert_int_equal(r->teardown.sent, 0);
	assert_int_equal(sa_groups(n), 60);
	imc_storm_destroy(n->s);
	n->s = NULL;
	n->nseen = 0;
	n->done_calls = 0;

	/* The same groups, teardown on: each left once. */
	cfg.keep = false;
	cfg.count = 10;
	r = run(n, &cfg);
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 10);
	assert_int_equal(r->teardown.sent, 10);
	assert_int_equal(r->teardown.success, 10);
	assert_int_equal(r->held, 0);
	/* the run took 10 groups; the 50 others are the first run's */
	assert_int_equal(sa_groups(n), 50);
	net_down(n);
}

struct stopper {
	struct imc_timer t;
	struct net *n;
	bool abort;
};

static void on_stopper(struct imc_timer *t)
{
	struct stopper *sp = imc_container_of(t, struct stopper, t);

	if (sp->abort)
		imc_storm_abort(sp->n->s);
	else
		imc_storm_stop(sp->n->s);
	/* done comes later, from the loop */
	assert_int_equal(sp->n->done_calls, 0);
}

/* Until stopped: the answers due arrive, the teardown leaves what the
 * run holds, done runs once (and may destroy the storm). */
static void test_stop(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join,rejoin,leave", 0, 100, 32);
	struct stopper sp = { .n = n };
	const struct imc_storm_report *r;

	(void)state;
	start(n, &cfg);
	imc_timer_init(&sp.t, on_stopper);
	imc_timer_arm(n->f.loop, &sp.t, 10 * IMC_NSEC_PER_MSEC + DELAY);
	assert_int_equal(imc_loop_run_until(n->f.loop, 10 * IMC_NSEC_PER_MSEC +
					    DELAY), 0);
	r = imc_storm_get_report(n->s);
	assert_true(r->held > 0);
	assert_true(r->cycles_started > 100);
	assert_int_equal(imc_loop_run(n->f.loop), 0);
	assert_int_equal(n->done_calls, 1);
	r = imc_storm_get_report(n->s);
	assert_true(r->cycles_done < r->cycles_started);
	assert_true(r->teardown.sent > 0);
	assert_int_equal(r->teardown.success, r->teardown.sent);
	assert_int_equal(r->held, 0);
	assert_int_equal(sa_groups(n), 0);
	/* Every request started was answered. */
	for (unsigned i = 0; i < IMC_STORM_OPS; i++)
		assert_int_equal(r->op[i].sent, r->op[i].success);
	assert_int_equal(r->run_time, 10 * IMC_NSEC_PER_MSEC + 2 * DELAY);
	assert_int_equal(r->teardown_time, 2 * DELAY);
	net_down(n);
}

/* Stopped before it started: nothing is sent, done still comes. */
static void test_stop_idle(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join,leave", 10, 10, 4);

	(void)state;
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n,
				      &n->s), 0);
	n->destroy_in_done = true;
	imc_storm_stop(n->s);
	assert_int_equal(n->done_calls, 0);
	assert_int_equal(imc_loop_run(n->f.loop), 0);
	assert_int_equal(n->done_calls, 1);
	assert_null(n->s);
	assert_int_equal(n->nseen, 0);
	net_down(n);
}

/* The SA does not answer: every attempt times out, the memberships are
 * in doubt and the teardown tries to leave them. */
static void test_timeouts(void **state)
{
	struct net *n = net_up(32, 10 * IMC_NSEC_PER_MSEC, 1);
	struct imc_storm_config cfg = config("join", 5, 5, 4);
	const struct imc_storm_report *r;

	(void)state;
	n->lose = 1000;
	r = run(n, &cfg);
	assert_int_equal(r->op[IMC_STORM_JOIN].sent, 5);
	assert_int_equal(r->op[IMC_STORM_JOIN].timeouts, 5);
	assert_int_equal(r->op[IMC_STORM_JOIN].answered, 0);
	assert_int_equal(r->op[IMC_STORM_JOIN].latency.n, 0);
	assert_int_equal(r->teardown.sent, 5);
	assert_int_equal(r->teardown.timeouts, 5);
	assert_int_equal(r->held, 5);
	assert_int_equal(n->lose, 1000 - 2 * 10);  /* 10 requests, 2 sends */
	assert_int_equal(n->done_calls, 1);
	net_down(n);
}

/* A lost first attempt is retried: answered, one retry counted. */
static void test_retry(void **state)
{
	struct net *n = net_up(32, 10 * IMC_NSEC_PER_MSEC, 2);
	struct imc_storm_config cfg = config("join,leave", 3, 3, 1);
	const struct imc_storm_report *r;

	(void)state;
	n->lose = 1;
	r = run(n, &cfg);
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 3);
	assert_int_equal(r->op[IMC_STORM_JOIN].retries, 1);
	assert_int_equal(r->op[IMC_STORM_LEAVE].retries, 0);
	assert_true(r->op[IMC_STORM_JOIN].latency.max >= 10 * IMC_NSEC_PER_MSEC);
	assert_int_equal(r->held, 0);
	net_down(n);
}

/* abort: what is in flight is cancelled, no teardown, done from the
 * loop; the SA's late answers are ignored. */
static void test_abort(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join", 0, 64, 16);
	struct stopper sp = { .n = n, .abort = true };
	const struct imc_storm_report *r;

	(void)state;
	start(n, &cfg);
	imc_timer_init(&sp.t, on_stopper);
	/* Mid-flight: the second window's requests are on their way. */
	imc_timer_arm(n->f.loop, &sp.t, 3 * DELAY);
	assert_int_equal(imc_loop_run(n->f.loop), 0);
	assert_int_equal(n->done_calls, 1);
	r = imc_storm_get_report(n->s);
	assert_int_equal(r->op[IMC_STORM_JOIN].sent, 32);
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 16);
	assert_int_equal(r->op[IMC_STORM_JOIN].errors, 16);
	assert_int_equal(r->teardown.sent, 0);
	/* 16 taken, 16 in doubt */
	assert_int_equal(r->held, 32);
	assert_int_equal(sa_groups(n), 32);
	net_down(n);
}

/* --rate: requests start at most rate per second, evenly. */
static void test_rate(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg = config("join,leave", 50, 50, 32);
	const struct imc_storm_report *r;

	(void)state;
	cfg.rate = 1000;
	r = run(n, &cfg);
	assert_int_equal(r->op[IMC_STORM_JOIN].success, 50);
	assert_int_equal(r->op[IMC_STORM_LEAVE].success, 50);
	assert_int_equal(n->nseen, 100);
	for (size_t i = 1; i < n->nseen; i++)
		assert_int_equal(n->seen[i].at - n->seen[i - 1].at,
				 IMC_NSEC_PER_MSEC);
	/* a round trip is far below the step: one in flight at a time */
	assert_int_equal(r->max_in_flight, 1);
	assert_int_equal(r->run_time, 99 * IMC_NSEC_PER_MSEC + 2 * DELAY);
	net_down(n);
}

static void test_create_bad_config(void **state)
{
	struct net *n = net_up(32, 100 * IMC_NSEC_PER_MSEC, 3);
	struct imc_storm_config cfg;
	struct imc_storm *s = (struct imc_storm *)1;

	(void)state;
	cfg = config("join", 1, 1, 33);
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	assert_null(s);
	cfg = config("join", 1, 1, 0);
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	cfg = config("join", 1, 0, 1);
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	/* a create without a leave runs once per group */
	cfg = config("create", 11, 10, 1);
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	cfg = config("create,create", 1, 10, 1);
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	cfg = config("join", 1, 1, 1);
	cfg.join_state = 0;
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	cfg = config("join", 1, 1, 1);
	cfg.rate = -1;
	assert_int_equal(imc_storm_create(n->f.loop, n->c, &cfg, run_done, n, &s),
			 -EINVAL);
	/* Until stopped, a create-only cycle ends when each group ran it. */
	cfg = config("create", 0, 10, 4);
	start(n, &cfg);
	assert_int_equal(imc_loop_run(n->f.loop), 0);
	assert_int_equal(imc_storm_get_report(n->s)->op[IMC_STORM_CREATE].success, 10);
	assert_int_equal(imc_storm_get_report(n->s)->teardown.success, 10);
	assert_int_equal(sa_groups(n), 0);
	net_down(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ops),
		cmocka_unit_test(test_cycle_repeats),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_join_leave),
		cmocka_unit_test(test_slot_order),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_rejoin_absent),
		cmocka_unit_test(test_keep_and_teardown),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_stop_idle),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_create_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
