/* The join tracker against the real SA engine on one virtual loop, through
 * SA clients whose transport injects faults (drop, duplicate, delay).
 *
 * Every test ends in finish(): every handle left, the loop run dry, then
 * the trackers hold nothing, no query is alive, the SA holds no membership
 * of any test port, and no timer is left armed. The SA's memberships are
 * compared with the union of the live handles' bits (check_union()) at the
 * points where each test has settled.
 *
 * The random sweep (rule 2) runs seeds 1 to 40 here; a longer run:
 *   cc -O2 -DSWEEP_FIRST=1 -DSWEEP_LAST=30000 -D_GNU_SOURCE \
 *      -DIMC_SOURCE_DIR='"."' -DIMC_BINARY_DIR='"build"' -Iinclude -Isrc \
 *      -Itests tests/test_mcast.c build/libibmcast.a -lcmocka -libumad -lm \
 *      -o /tmp/sweep && /tmp/sweep
 * (15 s). A failing seed is printed; SWEEP_FIRST=SWEEP_LAST=N replays it. */
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
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/rng.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_client.h"
#include "test_sa_fixture.h"
#include "wire/bytes.h"

#define MS IMC_NSEC_PER_MSEC
#define US IMC_NSEC_PER_USEC
#define MAX_NODES 8
#define MAX_HANDLES 2048
#define MAX_LOG 65536
#ifndef SWEEP_FIRST
#define SWEEP_FIRST 1
#define SWEEP_LAST 40
#endif

/* Rule 5: a callback returns void. */
_Static_assert(__builtin_types_compatible_p(
		       imc_mcast_cb,
		       void (*)(void *, struct imc_mcast_member *,
				const struct imc_mcast_event *)),
	       "imc_mcast_cb returns void");

/* ---- the world: SA, ports, fault-injecting transport ---- */

struct node {
	bool used;
	uint16_t lid;
	struct imc_sa_client *c;
	struct imc_mcast *t;
	bool down;                  /* the transport drops everything */
	int attach_result;
	unsigned sets_out;          /* Sets sent and not answered */
	unsigned sets_out_max;
	uint32_t set_tids[4096];
	unsigned n_set_tids;
};

enum lkind {
	L_SEND,      /* client sent a MAD (first send or retry) */
	L_ANSWER,    /* an SA answer reached a client */
	L_ATTACH,
	L_DETACH,
	L_CB,
};

struct logent {
	enum lkind kind;
	uint16_t lid;
	uint8_t method;
	uint16_t attr;
	uint8_t join_state;
	uint16_t status;
	uint32_t tid;
	struct imc_gid mgid;
	void *qp;
	uint16_t mlid;
	int ev;
	imc_time_t at;
};

struct flight {
	struct imc_timer timer;
	struct flight *next, *prev;
	struct node *n;
	bool to_sa;
	uint8_t mad[IMC_MAD_SIZE];
};

struct w {
	struct fx f;                /* first: the SA's ops get &w as ctx */
	struct node nodes[MAX_NODES];
	struct imc_rng rng;
	double drop, dup;
	imc_time_t delay_min, delay_max;
	bool (*drop_fn)(struct node *n, bool to_sa, const uint8_t *mad);
	struct flight flights;      /* list head */
	struct logent log[MAX_LOG];
	size_t nlog;
	bool in_api;
	bool in_destroy;
};

static struct w *W;
static uint64_t sweep_seed;     /* printed with a failure, to replay */

static void logit(const struct logent *e)
{
	assert_true(W->nlog < MAX_LOG);
	W->log[W->nlog] = *e;
	W->log[W->nlog].at = imc_loop_now(W->f.loop);
	W->nlog++;
}

static void mad_fields(const uint8_t *mad, struct logent *e)
{
	struct imc_sa_mad m;
	struct imc_mcmr r;

	assert_int_equal(imc_sa_mad_unpack(&m, mad, IMC_MAD_SIZE),
			 IMC_MAD_SIZE);
	e->method = m.mad.method;
	e->attr = m.mad.attr_id;
	e->status = m.mad.status;
	e->tid = (uint32_t)m.mad.tid;
	if (m.mad.attr_id == UMAD_SA_ATTR_MCMEMBER_REC &&
	    imc_mcmr_unpack(&r, m.data, sizeof(m.data)) > 0) {
		e->join_state = r.join_state;
		e->mgid = r.mgid;
	}
}

static void flight_deliver(struct imc_timer *t)
{
	struct flight *fl = imc_container_of(t, struct flight, timer);
	struct node *n = fl->n;

	fl->prev->next = fl->next;
	fl->next->prev = fl->prev;
	if (fl->to_sa) {
		struct imc_sa_src src = fx_src(n->lid);

		if (W->f.sa && !n->down)
			(void)imc_sa_recv(W->f.sa, &src, fl->mad, IMC_MAD_SIZE);
	} else if (n->c && !n->down) {
		struct logent e = { .kind = L_ANSWER, .lid = n->lid };

		mad_fields(fl->mad, &e);
		if (e.method == UMAD_METHOD_GET_RESP) {
			for (unsigned i = 0; i < n->n_set_tids; i++)
				if (n->set_tids[i] == e.tid) {
					n->set_tids[i] =
						n->set_tids[--n->n_set_tids];
					n->sets_out--;
					break;
				}
		}
		logit(&e);
		(void)imc_sa_client_recv(n->c, fl->mad, IMC_MAD_SIZE);
	}
	free(fl);
}

static void flight_add(struct node *n, bool to_sa, const uint8_t *mad)
{
	struct flight *fl = calloc(1, sizeof(*fl));
	imc_time_t d = W->delay_min;

	assert_non_null(fl);
	if (W->delay_max > W->delay_min)
		d += imc_rng_below(&W->rng, W->delay_max - W->delay_min + 1);
	fl->n = n;
	fl->to_sa = to_sa;
	memcpy(fl->mad, mad, IMC_MAD_SIZE);
	imc_timer_init(&fl->timer, flight_deliver);
	fl->next = &W->flights;
	fl->prev = W->flights.prev;
	W->flights.prev->next = fl;
	W->flights.prev = fl;
	assert_int_equal(imc_timer_arm_in(W->f.loop, &fl->timer, d), 0);
}

/* Drops and duplicates draw from the world's stream whatever the
 * outcome, so that a seed replays. */
static void wire(struct node *n, bool to_sa, const uint8_t *mad)
{
	bool drop = imc_rng_chance(&W->rng, W->drop);
	bool dup = imc_rng_chance(&W->rng, W->dup);

	if (n->down || drop || (W->drop_fn && W->drop_fn(n, to_sa, mad)))
		return;
	flight_add(n, to_sa, mad);
	if (dup)
		flight_add(n, to_sa, mad);
}

/* The port's link goes down or comes back: MADs on it are lost. */
static void link_set(struct node *n, bool down)
{
	struct flight *fl = W->flights.next;

	n->down = down;
	while (down && fl != &W->flights) {
		struct flight *next = fl->next;

		if (fl->n == n) {
			imc_timer_cancel(W->f.loop, &fl->timer);
			fl->prev->next = fl->next;
			fl->next->prev = fl->prev;
			free(fl);
		}
		fl = next;
	}
}

static int tr_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct node *n = ctx;
	struct logent e = { .kind = L_SEND, .lid = n->lid };

	assert_int_equal(len, IMC_MAD_SIZE);
	mad_fields(mad, &e);
	if (e.method == UMAD_METHOD_SET) {
		bool seen = false;

		for (unsigned i = 0; i < n->n_set_tids; i++)
			seen |= n->set_tids[i] == e.tid;
		if (!seen) {
			assert_true(n->n_set_tids < 4096);
			n->set_tids[n->n_set_tids++] = e.tid;
			if (++n->sets_out > n->sets_out_max)
				n->sets_out_max = n->sets_out;
		}
	}
	logit(&e);
	wire(n, true, mad);
	return 0;
}

static void sa_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	struct w *w = ctx;

	assert_int_equal(len, IMC_MAD_SIZE);
	for (unsigned i = 0; i < MAX_NODES; i++)
		if (w->nodes[i].used && w->nodes[i].lid == to->dlid)
			wire(&w->nodes[i], false, mad);
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

static int op_attach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	struct node *n = ctx;
	struct logent e = { .kind = L_ATTACH, .lid = n->lid, .qp = qp,
			    .mgid = *mgid, .mlid = mlid };

	assert_false(W->in_api);
	logit(&e);
	return n->attach_result;
}

static int op_detach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	struct node *n = ctx;
	struct logent e = { .kind = L_DETACH, .lid = n->lid, .qp = qp,
			    .mgid = *mgid, .mlid = mlid };

	/* Only destroy detaches inside an API call. */
	assert_true(!W->in_api || W->in_destroy);
	logit(&e);
	return 0;
}

static struct imc_sa_client_config client_cfg(uint16_t lid)
{
	struct imc_sa_client_config cc;

	imc_sa_client_config_init(&cc);
	cc.timeout = 100 * MS;
	cc.max_timeout = 400 * MS;
	cc.retries = 2;
	cc.seed = 1000 + lid;
	return cc;
}

static struct imc_mcast_config tracker_cfg(uint16_t lid)
{
	struct imc_mcast_config cfg;

	imc_mcast_config_init(&cfg);
	cfg.port_gid = fx_gid(lid);
	cfg.seed = 77 + lid;
	return cfg;
}

static struct node *node_cfg(uint16_t lid, const struct imc_mcast_config *mc,
			     const struct imc_sa_client_config *cc)
{
	struct node *n = NULL;
	struct imc_sa_transport tr;
	struct imc_mcast_ops ops = { op_attach, op_detach, NULL };

	for (unsigned i = 0; i < MAX_NODES && !n; i++)
		if (!W->nodes[i].used)
			n = &W->nodes[i];
	assert_non_null(n);
	memset(n, 0, sizeof(*n));
	n->used = true;
	n->lid = lid;
	tr.send = tr_send;
	tr.ctx = n;
	ops.ctx = n;
	assert_int_equal(imc_sa_client_create(W->f.loop, &tr, cc, &n->c), 0);
	assert_int_equal(imc_mcast_create(W->f.loop, n->c, mc, &ops, &n->t),
			 0);
	return n;
}

static struct node *node(uint16_t lid)
{
	struct imc_mcast_config mc = tracker_cfg(lid);
	struct imc_sa_client_config cc = client_cfg(lid);

	return node_cfg(lid, &mc, &cc);
}

/* ---- handles and callbacks ---- */

enum action {
	ACT_NONE,
	ACT_LEAVE_SELF,
	ACT_LEAVE_OTHER,
	ACT_DESTROY,
};

struct h {
	struct node *n;
	struct imc_mcast_member *m;
	struct imc_gid mgid;
	uint8_t js;
	void *qp;
	bool live;
	int ncb;
	int ncompl;                 /* JOINED or ERROR events */
	int nerr;                   /* ERROR events: at most one, last */
	int ev[32];
	int st[32];
	struct imc_mcmr rec;        /* of the last JOINED */
	enum action act;
	struct h *other;
};

static struct h H[MAX_HANDLES];
static size_t nh;

static void on_cb(void *arg, struct imc_mcast_member *m,
		  const struct imc_mcast_event *ev)
{
	struct h *h = arg;
	struct logent e = { .kind = L_CB };

	/* Rule 1: from the loop only. Rule 3: never after leave. Rule 2:
	 * the first JOINED or ERROR completes the join; an ERROR is final,
	 * nothing follows it. */
	assert_false(W->in_api);
	assert_true(h->live);
	assert_int_equal(h->nerr, 0);
	h->nerr += ev->type == IMC_MCAST_EV_ERROR;
	assert_ptr_equal(h->m, m);
	e.lid = h->n->lid;
	e.ev = ev->type;
	e.status = (uint16_t)ev->status;
	e.mgid = h->mgid;
	logit(&e);
	if (h->ncb < 32) {
		h->ev[h->ncb] = ev->type;
		h->st[h->ncb] = ev->status;
	}
	h->ncb++;
	if (ev->type == IMC_MCAST_EV_JOINED) {
		assert_non_null(ev->rec);
		assert_int_equal(ev->status, 0);
		h->rec = *ev->rec;
		assert_true(imc_mcast_member_state(m) == IMC_MCAST_JOINED);
	}
	if (ev->type == IMC_MCAST_EV_ERROR)
		assert_true(imc_mcast_member_state(m) == IMC_MCAST_FAILED);
	if ((ev->type == IMC_MCAST_EV_JOINED ||
	     ev->type == IMC_MCAST_EV_ERROR) && h->ncompl++ == 0 &&
	    h->act != ACT_NONE) {
		struct node *n = h->n;

		switch (h->act) {
		case ACT_LEAVE_SELF:
			h->live = false;
			imc_mcast_leave(m);
			break;
		case ACT_LEAVE_OTHER:
			h->other->live = false;
			imc_mcast_leave(h->other->m);
			break;
		case ACT_DESTROY:
			for (size_t i = 0; i < nh; i++)
				if (H[i].n == n)
					H[i].live = false;
			imc_mcast_destroy(n->t);
			n->t = NULL;
			break;
		case ACT_NONE:
			break;
		}
	}
}

static struct h *join_req(struct node *n, const struct imc_mcast_join_req *r)
{
	struct h *h = &H[nh++];

	assert_true(nh <= MAX_HANDLES);
	memset(h, 0, sizeof(*h));
	h->n = n;
	h->mgid = r->rec.mgid;
	h->js = r->join_state;
	h->qp = r->qp;
	W->in_api = true;
	assert_int_equal(imc_mcast_join(n->t, r, on_cb, h, &h->m), 0);
	W->in_api = false;
	h->live = true;
	return h;
}

/* A create template (Q_Key, P_Key, TClass, SL, FlowLabel given). */
static struct imc_mcast_join_req create_req(const char *mgid, uint8_t js,
					    void *qp)
{
	struct imc_mcast_join_req r;

	memset(&r, 0, sizeof(r));
	if (mgid)
		r.rec.mgid = fx_mgid(mgid);
	r.rec.qkey = 0x1234;
	r.rec.pkey = 0xffff;
	r.comp_mask = CREATE_MASK;
	r.join_state = js;
	r.qp = qp;
	return r;
}

static struct h *join(struct node *n, const char *mgid, uint8_t js, void *qp)
{
	struct imc_mcast_join_req r = create_req(mgid, js, qp);

	return join_req(n, &r);
}

static void leave(struct h *h)
{
	assert_true(h->live);
	h->live = false;
	W->in_api = true;
	imc_mcast_leave(h->m);
	W->in_api = false;
}

static void port_event(struct node *n, enum imc_mcast_port_event ev)
{
	W->in_api = true;
	imc_mcast_port_event(n->t, ev);
	W->in_api = false;
}

static void destroy(struct node *n)
{
	W->in_api = true;
	W->in_destroy = true;
	imc_mcast_destroy(n->t);
	W->in_destroy = false;
	W->in_api = false;
	n->t = NULL;
	for (size_t i = 0; i < nh; i++)
		if (H[i].n == n)
			H[i].live = false;
}

static void run(void)
{
	assert_int_equal(imc_loop_run(W->f.loop), 0);
}

static void run_for(imc_time_t d)
{
	assert_int_equal(imc_loop_run_until(W->f.loop,
					    imc_loop_now(W->f.loop) + d), 0);
}

/* Runs the rounds due now: sends go out, nothing comes back yet (the
 * wire takes at least delay_min). */
static void run_now(void)
{
	run_for(0);
}

static struct imc_mcast_stats stats(const struct node *n)
{
	struct imc_mcast_stats st;

	imc_mcast_get_stats(n->t, &st);
	return st;
}

/* MADs of a method sent by lid (all of them, retries too) since log
 * position from. */
static unsigned sent(uint16_t lid, uint8_t method, size_t from)
{
	unsigned k = 0;

	for (size_t i = from; i < W->nlog; i++)
		if (W->log[i].kind == L_SEND && W->log[i].lid == lid &&
		    W->log[i].method == method &&
		    W->log[i].attr == UMAD_SA_ATTR_MCMEMBER_REC)
			k++;
	return k;
}

/* InformInfo Sets (subscriptions) sent by lid since from. */
static unsigned subscriptions(uint16_t lid, size_t from)
{
	unsigned k = 0;

	for (size_t i = from; i < W->nlog; i++)
		if (W->log[i].kind == L_SEND && W->log[i].lid == lid &&
		    W->log[i].method == UMAD_METHOD_SET &&
		    W->log[i].attr == UMAD_ATTR_INFORM_INFO)
			k++;
	return k;
}

static const struct logent *find_log(enum lkind kind, uint16_t lid,
				     uint8_t method, size_t from, size_t *at)
{
	for (size_t i = from; i < W->nlog; i++)
		if (W->log[i].kind == kind && W->log[i].lid == lid &&
		    (kind == L_ATTACH || kind == L_DETACH || kind == L_CB ||
		     W->log[i].method == method)) {
			if (at)
				*at = i;
			return &W->log[i];
		}
	return NULL;
}

/* ---- SA state ---- */

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

/* JoinState of port lid in mgid at the SA (0: none). */
static uint8_t sa_js(uint16_t lid, const struct imc_gid *mgid)
{
	struct js_find f = { fx_gid(lid), 0 };

	(void)imc_sa_foreach_member(W->f.sa, mgid, js_cb, &f);
	return f.js;
}

struct un_ctx {
	struct node *n;
	unsigned bad;
};

static uint8_t live_union(const struct node *n, const struct imc_gid *mgid)
{
	uint8_t u = 0;

	for (size_t i = 0; i < nh; i++)
		if (H[i].live && H[i].n == n &&
		    imc_gid_equal(&H[i].mgid, mgid) &&
		    imc_mcast_member_state(H[i].m) != IMC_MCAST_FAILED)
			u |= H[i].js;
	return u;
}

static void print_group(void *arg, const struct imc_mcast_group_info *g)
{
	const struct imc_gid *mgid = arg;

	if (imc_gid_equal(&g->rec.mgid, mgid))
		fprintf(stderr, "  tracker: held %#x wanted %#x members %u "
			"joined %d\n", g->join_state, g->wanted, g->members,
			g->joined);
}

static int union_group(void *arg, const struct imc_sa_group_info *g)
{
	struct un_ctx *u = arg;
	uint8_t want = live_union(u->n, &g->rec.mgid);
	uint8_t have = sa_js(u->n->lid, &g->rec.mgid);

	if (want != have) {
		char s[IMC_GID_STRLEN];

		imc_gid_format(&g->rec.mgid, s);
		fprintf(stderr, "lid %u %s: SA %#x, handles %#x (seed %llu)\n",
			u->n->lid, s, have, want,
			(unsigned long long)sweep_seed);
		if (u->n->t)
			imc_mcast_foreach_group(u->n->t, print_group,
						(void *)&g->rec.mgid);
		for (size_t i = 0; i < nh; i++)
			if (H[i].live && H[i].n == u->n &&
			    imc_gid_equal(&H[i].mgid, &g->rec.mgid))
				fprintf(stderr, "  handle %zu: bits %#x %s\n",
					i, H[i].js,
					imc_mcast_state_str(
						imc_mcast_member_state(
							H[i].m)));
		u->bad++;
	}
	return 0;
}

/* The SA's memberships of every port equal the union of its live,
 * not failed handles (by MGID; MGID 0 creates by the MGID they got). */
static void check_union(void)
{
	for (unsigned i = 0; i < MAX_NODES; i++) {
		struct node *n = &W->nodes[i];
		struct un_ctx u = { n, 0 };

		if (!n->used)
			continue;
		assert_int_equal(imc_sa_foreach_group(W->f.sa, union_group,
						      &u), 0);
		assert_int_equal(u.bad, 0);
		/* and every wanted group exists at the SA */
		for (size_t k = 0; k < nh; k++) {
			struct imc_sa_group_info gi;

			/* WAITING members may wait for their group */
			if (!H[k].live || H[k].n != n ||
			    imc_mcast_member_state(H[k].m) ==
				    IMC_MCAST_FAILED ||
			    imc_mcast_member_state(H[k].m) ==
				    IMC_MCAST_WAITING ||
			    imc_gid_is_zero(&H[k].mgid))
				continue;
			assert_int_equal(imc_sa_group_get(W->f.sa, &H[k].mgid,
							  &gi), 0);
		}
	}
}

/* ---- set-up and the end of every test ---- */

static int setup(void **state)
{
	W = calloc(1, sizeof(*W));
	if (!W)
		return -1;
	fx_init(&W->f);
	imc_rng_seed(&W->rng, 1);
	W->delay_min = 5 * US;
	W->delay_max = 5 * US;
	W->flights.next = W->flights.prev = &W->flights;
	sa_start();
	nh = 0;
	return 0;
}

/* Leaves every live handle, lets the Deletes through, and checks that
 * nothing is left: no member, group or query in any tracker or client,
 * no membership of a test port at the SA, no timer. */
static void finish(void)
{
	W->drop = W->dup = 0;
	W->drop_fn = NULL;
	for (unsigned i = 0; i < MAX_NODES; i++)
		W->nodes[i].down = false;
	for (size_t i = 0; i < nh; i++)
		if (H[i].live)
			leave(&H[i]);
	run();
	for (unsigned i = 0; i < MAX_NODES; i++) {
		struct node *n = &W->nodes[i];
		struct imc_sa_client_stats cs;

		if (!n->used)
			continue;
		if (n->t) {
			struct imc_mcast_stats st = stats(n);

			assert_int_equal(st.members, 0);
			assert_int_equal(st.groups, 0);
			assert_int_equal(st.in_flight, 0);
			destroy(n);
		}
		imc_sa_client_get_stats(n->c, &cs);
		assert_int_equal(cs.alive, 0);
		imc_sa_client_destroy(n->c);
		n->c = NULL;
	}
	check_union();
}

static int teardown(void **state)
{
	while (W->flights.next != &W->flights) {
		struct flight *fl = W->flights.next;

		imc_timer_cancel(W->f.loop, &fl->timer);
		W->flights.next = fl->next;
		free(fl);
	}
	for (unsigned i = 0; i < MAX_NODES; i++) {
		imc_mcast_destroy(W->nodes[i].t);
		imc_sa_client_destroy(W->nodes[i].c);
	}
	fx_fini(&W->f);
	free(W);
	W = NULL;
	return 0;
}

static const char *G1 = "ff12:1234::1";
static const char *G2 = "ff12:1234::2";
static const char *G3 = "ff12:1234::3";

static int QP1, QP2;

/* ------------------------------------------------------------------ */
/* Joins and leaves. */

static void test_join_leave_basic(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *h = join(n, G1, IMC_JOIN_FULL, &QP1);
	struct imc_mcast_stats st;
	const struct logent *e;
	size_t mark;

	/* Rule 1: nothing inside join, not even the Set. */
	assert_int_equal(h->ncb, 0);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 0);
	run();
	assert_int_equal(h->ncb, 1);
	assert_int_equal(h->ev[0], IMC_MCAST_EV_JOINED);
	assert_true(h->rec.mlid >= 0xC000);
	assert_int_equal(h->rec.qkey, 0x1234);
	assert_true(imc_gid_equal(&h->rec.mgid, &g1));
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	e = find_log(L_SEND, 2, UMAD_METHOD_SET, 0, NULL);
	assert_int_equal(e->join_state, IMC_JOIN_FULL);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_FULL);
	e = find_log(L_ATTACH, 2, 0, 0, NULL);
	assert_non_null(e);
	assert_ptr_equal(e->qp, &QP1);
	assert_int_equal(e->mlid, h->rec.mlid);
	check_union();

	assert_int_equal(subscriptions(2, 0), 0);
	st = stats(n);
	assert_int_equal(st.joins, 1);
	assert_int_equal(st.joins_local, 0);
	assert_int_equal(st.mads_sent, 1);
	assert_int_equal(st.groups, 1);
	assert_int_equal(st.members, 1);

	mark = W->nlog;
	leave(h);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 0);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_int_equal(e->join_state, IMC_JOIN_FULL);
	assert_int_equal(sa_js(2, &g1), 0);
	st = stats(n);
	assert_int_equal(st.leaves, 1);
	assert_int_equal(st.mads_sent, 2);
	assert_int_equal(st.groups, 0);
	finish();
}

/* A join whose bits are held and whose template matches sends nothing. */
static void test_local_join_no_mad(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1);
	struct imc_mcast_join_req r;
	struct h *b, *c;
	size_t mark;

	run();
	mark = W->nlog;
	/* same bits, a subset of the template */
	memset(&r, 0, sizeof(r));
	r.rec.mgid = fx_mgid(G1);
	r.rec.qkey = 0x1234;
	r.comp_mask = JOIN_MASK | CM(QKEY);
	r.join_state = IMC_JOIN_FULL;
	b = join_req(n, &r);
	c = join(n, G1, IMC_JOIN_FULL, &QP1);
	assert_int_equal(b->ncb + c->ncb, 0);
	run();
	assert_int_equal(b->ncb, 1);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_true(imc_gid_equal(&b->rec.mgid, &a->rec.mgid));
	assert_int_equal(b->rec.mlid, a->rec.mlid);
	assert_int_equal(W->nlog - mark, 2u); /* two callbacks, no MAD */
	assert_int_equal(stats(n).joins_local, 2);
	assert_int_equal(stats(n).mads_sent, 1);
	/* and leaving them sends nothing either */
	mark = W->nlog;
	leave(b);
	leave(c);
	run();
	assert_int_equal(W->nlog, mark);
	finish();
}

/* Joins in the same round share one Set; a join that arrives while it is
 * in flight is answered from it. */
static void test_queued_joins_one_mad(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c, *d;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	c = join(n, G1, IMC_JOIN_FULL, NULL);
	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	assert_int_equal(stats(n).in_flight, 1);
	d = join(n, G1, IMC_JOIN_FULL, &QP2);
	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(d->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncb + b->ncb + c->ncb + d->ncb, 4);
	assert_int_equal(stats(n).joins_local, 0);
	check_union();
	finish();
}

/* A template that does not match the group's record fails that member
 * alone with -EINVAL: locally, and when queued behind a Set. */
static void test_mismatch_fails_alone(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c, *d;
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	r.rec.qkey = 0x9999;
	b = join_req(n, &r);        /* queued behind a's Set */
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(b->st[0], -EINVAL);
	assert_true(imc_mcast_member_state(b->m) == IMC_MCAST_FAILED);

	mark = W->nlog;
	c = join_req(n, &r);        /* local: bits held, no MAD */
	d = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(c->st[0], -EINVAL);
	assert_int_equal(d->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncb, 1); /* a heard nothing more */
	assert_int_equal(stats(n).errors, 2);
	assert_int_equal(sa_js(2, &a->rec.mgid), IMC_JOIN_FULL);
	check_union();
	finish();
}

struct selcase {
	uint64_t mask;
	uint8_t mtu_sel, mtu, rate_sel, rate, life_sel, life;
	bool ok;
};

/* Selectors: the group has MTU 4 (2048), rate 3 (10 Gb/s), lifetime 10.
 * Rate codes are not in bandwidth order: code 5 (5 Gb/s) is slower than
 * code 3, code 4 (30 Gb/s) faster. */
static void test_selectors(void **state)
{
	static const struct selcase cases[] = {
		{ CM(MTU_SEL) | CM(MTU), 0, 3, 0, 0, 0, 0, true },
		{ CM(MTU_SEL) | CM(MTU), 0, 4, 0, 0, 0, 0, false },
		{ CM(MTU_SEL) | CM(MTU), 1, 5, 0, 0, 0, 0, true },
		{ CM(MTU_SEL) | CM(MTU), 1, 4, 0, 0, 0, 0, false },
		{ CM(MTU_SEL) | CM(MTU), 2, 4, 0, 0, 0, 0, true },
		{ CM(MTU_SEL) | CM(MTU), 2, 3, 0, 0, 0, 0, false },
		{ CM(MTU_SEL) | CM(MTU), 3, 1, 0, 0, 0, 0, true },
		{ CM(MTU), 0, 4, 0, 0, 0, 0, true },
		{ CM(MTU), 0, 5, 0, 0, 0, 0, false },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 0, 5, 0, 0, true },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 0, 4, 0, 0, false },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 1, 4, 0, 0, true },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 1, 5, 0, 0, false },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 2, 3, 0, 0, true },
		{ CM(RATE_SEL) | CM(RATE), 0, 0, 3, 2, 0, 0, true },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 0, 9, true },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 0, 10, false },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 1, 11, true },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 2, 11, false },
		{ CM(LIFE_TIME_SEL) | CM(LIFE_TIME), 0, 0, 0, 0, 3, 0, true },
	};
	struct node *n = node(2);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *hs[IMC_ARRAY_SIZE(cases)];
	size_t mark;

	r.rec.life = 10;
	r.comp_mask |= CM(LIFE_TIME);
	join_req(n, &r);
	run();
	assert_int_equal(H[0].rec.mtu, 4);
	assert_int_equal(H[0].rec.rate, 3);
	assert_int_equal(H[0].rec.life, 10);
	mark = W->nlog;
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		memset(&r, 0, sizeof(r));
		r.rec.mgid = fx_mgid(G1);
		r.comp_mask = JOIN_MASK | cases[i].mask;
		r.rec.mtu_sel = cases[i].mtu_sel;
		r.rec.mtu = cases[i].mtu;
		r.rec.rate_sel = cases[i].rate_sel;
		r.rec.rate = cases[i].rate;
		r.rec.life_sel = cases[i].life_sel;
		r.rec.life = cases[i].life;
		r.join_state = IMC_JOIN_FULL;
		hs[i] = join_req(n, &r);
	}
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	for (size_t i = 0; i < IMC_ARRAY_SIZE(cases); i++) {
		if (hs[i]->ev[0] != (cases[i].ok ? IMC_MCAST_EV_JOINED :
						   IMC_MCAST_EV_ERROR))
			fail_msg("selector case %zu", i);
		if (!cases[i].ok)
			assert_int_equal(hs[i]->st[0], -EINVAL);
	}
	finish();
}

/* SA statuses reach the member as they are. */
static void test_sa_status_passed_through(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r;
	struct h *a, *b, *c;

	/* INSUF_COMPS: a create without the create components */
	memset(&r, 0, sizeof(r));
	r.rec.mgid = fx_mgid(G1);
	r.comp_mask = JOIN_MASK;
	r.join_state = IMC_JOIN_FULL;
	a = join_req(n, &r);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], ST_INSUF_COMPS);

	/* REQ_INVALID: a group of a partition port 2 is not in */
	fx_pkeys(&W->f, 3, 0xffff, 0x8001);
	r = create_req(G2, IMC_JOIN_FULL, NULL);
	r.rec.pkey = 0x8001;
	b = join_req(n3, &r);
	run();
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	c = join_req(n, &r);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(c->st[0], ST_REQ_INVALID);
	assert_int_equal(stats(n).errors, 2);
	assert_int_equal(stats(n).errors_by_status[6], 1);
	assert_int_equal(stats(n).errors_by_status[2], 1);
	/* a failed member holds nothing; the group waits for its leave */
	assert_int_equal(stats(n).groups, 2);
	check_union();
	finish();
}

/* When the SA refuses the template a Set carried, only that member fails;
 * the member queued with it is asked for again and joins. */
static void test_refusal_fails_trigger_only(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a, *b;

	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	r.rec.qkey = 0x4321;  /* not the group's: REQ_INVALID at the SA */
	a = join_req(n, &r);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], ST_REQ_INVALID);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 2);
	assert_int_equal(sa_js(2, &b->rec.mgid), IMC_JOIN_FULL);
	check_union();
	finish();
}

/* A Delete carries exactly the bits no remaining member holds. */
static void test_delete_exact_bits(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *full1, *non, *sof, *full2;
	const struct logent *e;
	size_t mark;

	full1 = join(n, G1, IMC_JOIN_FULL, &QP1);
	non = join(n, G1, IMC_JOIN_NON, &QP2);
	sof = join(n, G1, IMC_JOIN_SENDONLY_FULL, NULL);
	full2 = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	e = find_log(L_SEND, 2, UMAD_METHOD_SET, 0, NULL);
	assert_int_equal(e->join_state, 0xB);
	assert_int_equal(sa_js(2, &g1), 0xB);

	mark = W->nlog;
	leave(non);
	run();
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_non_null(e);
	assert_int_equal(e->join_state, IMC_JOIN_NON);
	assert_int_equal(sa_js(2, &g1), 0x9);

	mark = W->nlog;
	leave(full1);   /* full2 still holds FullMember */
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 0);

	leave(full2);
	run();
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_non_null(e);
	assert_int_equal(e->join_state, IMC_JOIN_FULL);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_SENDONLY_FULL);
	check_union();

	mark = W->nlog;
	leave(sof);
	run();
	e = find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark, NULL);
	assert_int_equal(e->join_state, IMC_JOIN_SENDONLY_FULL);
	assert_int_equal(sa_js(2, &g1), 0);
	finish();
}

/* SendOnlyNonMember and NonMember join an existing group like full
 * members; only NonMember attaches. */
static void test_nonmember_states(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;
	size_t mark;

	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	mark = W->nlog;
	a = join(n, G1, IMC_JOIN_SENDONLY_NON, &QP1);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_null(find_log(L_ATTACH, 2, 0, mark, NULL));
	b = join(n, G1, IMC_JOIN_NON, &QP1);
	run();
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_non_null(find_log(L_ATTACH, 2, 0, mark, NULL));
	assert_int_equal(sa_js(2, &g1), 0x6);
	check_union();
	finish();
}

/* ------------------------------------------------------------------ */
/* Timeouts and retries. */

static bool drop_all(struct node *n, bool to_sa, const uint8_t *mad)
{
	return true;
}

static void test_timeout_after_retries(void **state)
{
	struct node *n = node(2);
	struct h *a, *b;
	struct imc_mcast_stats st;

	W->drop_fn = drop_all;
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	/* 100 + 200 + 400 ms with up to 25% jitter */
	run_for(900 * MS);
	/* one Set, sent 1 + retries times, then both covered members */
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 3);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], -ETIMEDOUT);
	assert_int_equal(b->st[0], -ETIMEDOUT);
	assert_int_equal(a->ncb, 1);
	st = stats(n);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.retries, 2);
	assert_int_equal(st.mads_sent, 2); /* the Set, then a Delete */
	assert_int_equal(st.errors, 2);
	/* The SA may have taken the Set: a Delete settles it, and is
	 * sent again until answered. */
	assert_int_equal(st.in_flight, 1);
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, 0, NULL));
	run_for(2000 * MS);
	assert_true(sent(2, UMAD_SA_METHOD_DELETE, 0) > 3);
	W->drop_fn = NULL;
	run();
	assert_non_null(find_log(L_ANSWER, 2, UMAD_SA_METHOD_DELETE_RESP, 0,
				 NULL));
	assert_int_equal(stats(n).in_flight, 0);
	finish();
}

static unsigned deletes_to_drop;

static bool drop_deletes(struct node *n, bool to_sa, const uint8_t *mad)
{
	if (to_sa && mad[3] == UMAD_SA_METHOD_DELETE && deletes_to_drop) {
		deletes_to_drop--;
		return true;
	}
	return false;
}

/* A Delete is sent again after the client's retries, until answered. */
static void test_delete_retried_until_answered(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	run();
	mark = W->nlog;
	deletes_to_drop = 7;  /* two whole queries and one more attempt */
	W->drop_fn = drop_deletes;
	leave(a);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 8);
	assert_int_equal(stats(n).timeouts, 2);
	assert_int_equal(stats(n).mads_sent, 4); /* Set + 3 Deletes */
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* An unanswered Delete stops when the port goes down. The bit stays in
 * doubt (an SM whose sweep missed the flap keeps the port's memberships)
 * and is deleted again once the port is back. */
static void test_delete_stops_at_port_down(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	run();
	mark = W->nlog;
	W->drop_fn = drop_all;
	leave(a);
	run_for(1000 * MS);
	assert_true(sent(2, UMAD_SA_METHOD_DELETE, mark) >= 4);
	port_event(n, IMC_MCAST_PORT_DOWN);
	assert_int_equal(stats(n).in_flight, 0);
	mark = W->nlog;
	run();
	assert_int_equal(W->nlog, mark);
	assert_int_equal(stats(n).groups, 1);
	assert_int_equal(sa_js(2, &g1), 0x1);
	W->drop_fn = NULL;
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* The port flaps and members leave meanwhile. When the SM dropped the
 * port, the Delete at port up is refused and settles the doubt; when the
 * flap was shorter than the SM's sweep, the SA still holds the
 * membership and the Delete gives it up (the tracker used to forget it
 * at port down, and the SA kept it for good). A member that stays is
 * joined again with its bits only. */
static void test_flap_leave_while_down(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1), g2 = fx_mgid(G2);
	struct h *a, *b, *c;
	size_t mark;

	/* a FullMember elsewhere keeps G2 alive for the NonMember */
	join(n3, G2, IMC_JOIN_FULL, NULL);
	for (int dropped = 0; dropped < 2; dropped++) {
		a = join(n, G1, IMC_JOIN_FULL, &QP1);
		b = join(n, G2, IMC_JOIN_FULL, NULL);
		c = join(n, G2, IMC_JOIN_NON, NULL);
		run();
		assert_int_equal(sa_js(2, &g1), 0x1);
		assert_int_equal(sa_js(2, &g2), 0x3);
		link_set(n, true);
		port_event(n, IMC_MCAST_PORT_DOWN);
		if (dropped)
			assert_int_equal(imc_sa_port_gone(
						 W->f.sa, &W->f.ports[2].p.gid),
					 2);
		leave(a);
		leave(b);
		run();
		/* kept while down: the SA may hold them */
		assert_int_equal(stats(n).groups, 2);
		mark = W->nlog;
		link_set(n, false);
		port_event(n, IMC_MCAST_PORT_ACTIVE);
		run();
		assert_int_equal(c->ev[1], IMC_MCAST_EV_WAITING);
		assert_int_equal(c->ev[2], IMC_MCAST_EV_REJOINING);
		assert_int_equal(c->ev[3], IMC_MCAST_EV_JOINED);
		assert_int_equal(sa_js(2, &g1), 0);
		assert_int_equal(sa_js(2, &g2), 0x2);
		assert_int_equal(stats(n).groups, 1);
		/* One Delete for G1's bit in doubt, one for G2's FullMember
		 * bit, each answered (held) or refused (dropped). */
		assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 2);
		assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 1);
		check_union();
		leave(c);
		run();
		assert_int_equal(sa_js(2, &g2), 0);
	}
	finish();
}

/* A reregister puts what the port held in doubt: a join that comes while
 * the re-join is on its way is not answered from a bit the SA lost (the
 * re-join asked for fewer bits than the port held before). */
static void test_rejoin_doubts_held_bits(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *b, *c;
	size_t mark;

	join(n3, G1, IMC_JOIN_FULL, NULL); /* keeps G1 for NonMembers */
	join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_NON, NULL);
	run();
	assert_int_equal(sa_js(2, &g1), 0x3);
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(n3, IMC_MCAST_PORT_REREGISTER);
	run();
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	leave(b);
	while (!sent(2, UMAD_METHOD_SET, mark))
		assert_true(imc_loop_run_once(W->f.loop) > 0);
	c = join(n, G1, IMC_JOIN_NON, NULL);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 2);
	assert_int_equal(sa_js(2, &g1), 0x3);
	check_union();
	finish();
}

static bool drop_delete_answers(struct node *n, bool to_sa,
				const uint8_t *mad)
{
	return !to_sa && mad[3] == UMAD_SA_METHOD_DELETE_RESP;
}

/* A Delete whose answers are all lost may have been taken: a join that
 * wants its bits back asks the SA for them. */
static void test_delete_unanswered_then_join(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	W->drop_fn = drop_delete_answers;
	leave(a);
	run_now();
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	mark = W->nlog;
	run();
	assert_int_equal(stats(n).timeouts, 1);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 1);
	assert_int_equal(sa_js(2, &g1), 0x1);
	check_union();
	finish();
}

/* Drops the first answer to a Set and takes the second partition from
 * port 2 at that moment: the retry is refused. */
static bool drop_set_answer_take_pkey(struct node *n, bool to_sa,
				      const uint8_t *mad)
{
	static bool done;

	if (!n) {
		done = false;
		return false;
	}
	if (to_sa || done || mad[3] != UMAD_METHOD_GET_RESP)
		return false;
	done = true;
	fx_pkeys(&W->f, 2, 0xffff, 0);
	return true;
}

/* The SA took a Set whose answer was lost and refused its retry (the
 * port left the partition meanwhile; the SA does not deduplicate): the
 * bits are in doubt, and nobody wants them, so a Delete settles them. */
static void test_retry_refused_after_taken(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a;

	fx_pkeys(&W->f, 2, 0xffff, 0x8001);
	r.rec.pkey = 0x8001;
	drop_set_answer_take_pkey(NULL, false, NULL);
	W->drop_fn = drop_set_answer_take_pkey;
	a = join_req(n, &r);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], UMAD_SA_STATUS_REQ_INVALID << 8);
	assert_true(sent(2, UMAD_METHOD_SET, 0) == 2);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, 0), 1);
	assert_int_equal(sa_js(2, &g1), 0);
	finish();
}

/* A REJOINING member that the re-join's answer fails (its group came back
 * with another record: a create of the same port, to which the new SA
 * gave the group's MGID) has its QP detached, though nothing else happens
 * in the group afterwards. */
static void test_rejoin_mismatch_detaches(void **state)
{
	struct node *n = node(2);
	struct imc_mcast_join_req r;
	const struct logent *e;
	struct h *a, *b;
	size_t mark, at;

	a = join(n, NULL, IMC_JOIN_FULL, &QP1);
	run();
	a->mgid = a->rec.mgid;
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	r = create_req(NULL, IMC_JOIN_FULL, &QP2);
	r.rec.qkey = 0x5678;
	b = join_req(n, &r);
	mark = W->nlog;
	run();
	assert_true(imc_gid_equal(&b->rec.mgid, &a->mgid));
	b->mgid = b->rec.mgid;
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[2], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[2], -ENETRESET);
	e = find_log(L_DETACH, 2, 0, mark, &at);
	assert_non_null(e);
	assert_ptr_equal(e->qp, &QP1);
	assert_null(find_log(L_DETACH, 2, 0, at + 1, NULL));
	check_union();
	finish();
}

/* A re-join left unanswered after the retries fails nobody: it is paced
 * again (the SA may only be too busy) until the SA answers; a join that
 * comes meanwhile waits for it. */
static void test_rejoin_unanswered_paced_again(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	W->drop_fn = drop_all;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run_for(10000 * MS);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	run_for(10000 * MS);
	assert_true(stats(n).timeouts >= 2);
	assert_int_equal(stats(n).errors, 0);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_true(imc_mcast_member_state(a->m) == IMC_MCAST_REJOINING);
	assert_int_equal(b->ncb, 0);
	W->drop_fn = NULL;
	run();
	assert_int_equal(a->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(stats(n).errors, 0);
	assert_int_equal(sa_js(2, &g1), 0x1);
	check_union();
	finish();
}

/* ------------------------------------------------------------------ */
/* QP attach and detach order. */

static void test_attach_detach_order(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *s, *c;
	size_t i_ans = 0, i_att = 0, i_cb = 0, i_det = 0, i_del = 0, mark;
	int natt = 0;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	/* Set sent, answered, then attach, then the callback */
	assert_non_null(find_log(L_ANSWER, 2, UMAD_METHOD_GET_RESP, 0,
				 &i_ans));
	assert_non_null(find_log(L_ATTACH, 2, 0, 0, &i_att));
	assert_non_null(find_log(L_CB, 2, 0, 0, &i_cb));
	assert_true(i_ans < i_att);
	assert_true(i_att < i_cb);

	/* the same QP again: attached once; send-only: never */
	mark = W->nlog;
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	s = join(n, G1, IMC_JOIN_SENDONLY_FULL, &QP2);
	run();
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(s->ev[0], IMC_MCAST_EV_JOINED);
	assert_null(find_log(L_ATTACH, 2, 0, mark, NULL));
	c = join(n, G2, IMC_JOIN_FULL, &QP1);
	run();
	for (size_t i = 0; i < W->nlog; i++)
		natt += W->log[i].kind == L_ATTACH;
	assert_int_equal(natt, 2); /* QP1 on G1 and on G2 */

	/* the first leave keeps the QP (b uses it) */
	mark = W->nlog;
	leave(a);
	run();
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	/* the last one detaches, before the Delete of FullMember */
	leave(b);
	run();
	assert_non_null(find_log(L_DETACH, 2, 0, mark, &i_det));
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark,
				 &i_del));
	assert_true(i_det < i_del);
	assert_ptr_equal(W->log[i_det].qp, &QP1);
	assert_int_equal(W->log[i_det].mlid, a->rec.mlid);
	assert_int_equal(W->log[i_del].join_state, IMC_JOIN_FULL);
	/* the send-only member leaves: a Delete, nothing to detach */
	mark = W->nlog;
	leave(s);
	run();
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	(void)c;
	finish();
}

/* A failed attach fails the member and gives its bits back. */
static void test_attach_failure(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a;
	size_t mark;

	n->attach_result = -ENOSPC;
	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], -ENOSPC);
	assert_int_equal(stats(n).attach_errors, 1);
	/* bits given back: the Set's FullMember is deleted again */
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, 0, NULL));
	assert_int_equal(sa_js(2, &g1), 0);
	n->attach_result = 0;
	mark = W->nlog;
	leave(a);
	run();
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	finish();
}

/* A QP that goes while the tracker lives on: released at once once its
 * members left, refused while one still uses it; no detach of it after. */
static void test_release_qp(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c;
	size_t mark;
	int ndet = 0;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G2, IMC_JOIN_FULL, &QP1);
	c = join(n, G1, IMC_JOIN_FULL, &QP2);
	run();
	assert_int_equal(stats(n).joined, 3);
	mark = W->nlog;
	assert_int_equal(imc_mcast_release_qp(n->t, &QP1), -EBUSY);
	leave(a);
	assert_int_equal(stats(n).joined, 2);
	assert_int_equal(imc_mcast_release_qp(n->t, &QP1), -EBUSY);
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	leave(b);
	assert_int_equal(imc_mcast_release_qp(n->t, &QP1), 0);
	for (size_t i = mark; i < W->nlog; i++)
		if (W->log[i].kind == L_DETACH) {
			assert_ptr_equal(W->log[i].qp, &QP1);
			ndet++;
		}
	assert_int_equal(ndet, 2);
	mark = W->nlog;
	run();
	/* the Deletes go; QP2 stays attached and QP1 is not touched */
	assert_null(find_log(L_DETACH, 2, 0, mark, NULL));
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	assert_int_equal(stats(n).joined, 1);
	assert_int_equal(imc_mcast_release_qp(n->t, NULL), -EINVAL);
	(void)c;
	finish();
}

/* ------------------------------------------------------------------ */
/* Port events. */

static void test_port_down_up(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b, *c;
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	b = join(n, G1, IMC_JOIN_NON, NULL);
	run_now();                  /* b's Set in flight */
	assert_int_equal(stats(n).in_flight, 1);
	port_event(n, IMC_MCAST_PORT_DOWN);
	assert_int_equal(stats(n).in_flight, 0);
	link_set(n, true);
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 1);
	c = join(n, G2, IMC_JOIN_FULL, NULL); /* while down */
	mark = W->nlog;
	run();
	/* nothing sent while down (the transport would show it) */
	assert_null(find_log(L_SEND, 2, UMAD_METHOD_SET, mark, NULL));
	assert_int_equal(a->ev[1], IMC_MCAST_EV_WAITING);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(c->ev[0], IMC_MCAST_EV_WAITING);
	assert_true(imc_mcast_member_state(b->m) == IMC_MCAST_WAITING);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(stats(n).groups, 2);

	link_set(n, false);
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	assert_int_equal(a->ncb, 2);
	run();
	/* a: REJOINING then JOINED; b and c: their first completion */
	assert_int_equal(a->ev[2], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncb, 4);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ncompl, 1);
	assert_int_equal(c->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(sa_js(2, &g1), 0x3);
	assert_int_equal(stats(n).rejoins, 2);
	assert_int_equal(stats(n).port_events[IMC_MCAST_PORT_DOWN], 1);
	check_union();
	finish();
}

/* The SA restarts empty; a client reregister (or an SM change) brings
 * every membership back without an error. */
static void rejoin_after_restart(enum imc_mcast_port_event ev)
{
	struct node *n = node(2), *n3 = node(3);
	struct h *a, *b, *c;
	struct imc_gid g1 = fx_mgid(G1);
	uint16_t mlid;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G1, IMC_JOIN_SENDONLY_FULL, NULL);
	c = join(n3, G1, IMC_JOIN_FULL, &QP1);
	run();
	mlid = a->rec.mlid;
	imc_sa_destroy(W->f.sa);
	sa_start();
	assert_int_equal(sa_js(2, &g1), 0);
	port_event(n, ev);
	port_event(n3, ev);
	run();
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(c->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncompl, 2);
	assert_int_equal(a->rec.qkey, 0x1234);
	assert_int_equal(a->rec.mlid, mlid);
	assert_int_equal(sa_js(2, &g1), 0x9);
	assert_int_equal(sa_js(3, &g1), 0x1);
	assert_int_equal(stats(n).rejoins, 1);
	check_union();
	finish();
}

static void test_reregister_rejoins(void **state)
{
	rejoin_after_restart(IMC_MCAST_PORT_REREGISTER);
}

static void test_sm_change_rejoins(void **state)
{
	rejoin_after_restart(IMC_MCAST_PORT_SM_CHANGE);
}

/* A re-join that brings a new MLID moves the QP's attachment. */
static void test_rejoin_new_mlid(void **state)
{
	struct node *n = node(2);
	struct h *a, *x;
	size_t mark, i = 0;
	uint16_t old;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	old = a->rec.mlid;
	imc_sa_destroy(W->f.sa);
	sa_start();
	/* another port takes the old MLID in the new SA first */
	x = join(node(3), G2, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(x->rec.mlid, old);
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run();
	assert_int_equal(a->ev[2], IMC_MCAST_EV_JOINED);
	assert_true(a->rec.mlid != old);
	assert_non_null(find_log(L_DETACH, 2, 0, mark, &i));
	assert_int_equal(W->log[i].mlid, old);
	assert_non_null(find_log(L_ATTACH, 2, 0, mark, &i));
	assert_int_equal(W->log[i].mlid, a->rec.mlid);
	check_union();
	finish();
}

/* A re-join that fails reports ERROR to every member of its group, and
 * what was held is given back. */
static void test_rejoin_failure_fails_group(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a, *b, *c;

	fx_pkeys(&W->f, 2, 0xffff, 0x8001);
	fx_pkeys(&W->f, 3, 0xffff, 0x8001);
	r.rec.pkey = 0x8001;
	a = join_req(n, &r);
	b = join_req(n, &r);
	c = join_req(n3, &r);
	join(n, G2, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	/* port 2 leaves the partition */
	fx_pkeys(&W->f, 2, 0xffff, 0);
	port_event(n, IMC_MCAST_PORT_PKEY_CHANGE);
	run();
	assert_int_equal(a->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(a->ev[2], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[2], ST_REQ_INVALID);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->ncompl, 2);
	assert_int_equal(c->ncb, 1); /* the other port is not concerned */
	assert_int_equal(H[3].ev[2], IMC_MCAST_EV_JOINED); /* G2 fine */
	/* the failed group's membership was given back */
	check_union();
	finish();
}

/* The SA deletes a group when its last full member leaves, from another
 * port here: the port that holds NonMember hears it from trap 67 (it
 * subscribed when it joined without a full bit), its member re-joins, is
 * refused, and waits for the group (its QP stays attached); a full
 * member of the port creates the group again and the NonMember is back.
 * The trap 66 subscription goes with the last member that waits. */
static void test_group_deleted_trap67(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *full, *non, *again;
	size_t mark;

	full = join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(subscriptions(3, 0), 0); /* full: not needed */
	non = join(n, G1, IMC_JOIN_NON, &QP1);
	run();
	assert_int_equal(non->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(subscriptions(2, 0), 1);
	assert_int_equal(fx_stats(&W->f).subscriptions, 1);
	mark = W->nlog;
	leave(full);
	run_for(900 * MS);
	assert_int_equal(stats(n).traps, 1);
	assert_int_equal(stats(n).groups_lost, 1);
	assert_int_equal(non->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(non->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(non->st[2], -ENOENT);
	assert_int_equal(non->ncb, 3);
	assert_int_equal(imc_mcast_member_state(non->m), IMC_MCAST_WAITING);
	assert_int_equal(stats(n).waits, 1);
	assert_non_null(find_log(L_DETACH, 2, 0, mark, NULL));
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(fx_stats(&W->f).subscriptions, 2); /* 67 and 66 */
	/* a full member of the port creates the group again */
	again = join(n, G1, IMC_JOIN_FULL, &QP1);
	run_for(100 * MS);
	assert_int_equal(again->ev[0], IMC_MCAST_EV_JOINED);
	/* the tries of a member that waits are not events */
	assert_int_equal(non->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(non->ncb, 4);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_FULL | IMC_JOIN_NON);
	assert_int_equal(fx_stats(&W->f).subscriptions, 1); /* 66 ended */
	/* after a reregister the port subscribes again */
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run();
	assert_int_equal(subscriptions(2, mark), 1);
	check_union();
	finish();
}

/* A trap 67 Report can come late (sent again after a lost ReportResp,
 * IBA 13.4.8.2) and tell of a deletion older than the port's last join:
 * the tracker gives up nothing the SA may still hold. Here it comes while
 * the Delete of one member's bit is on its way and the other member has
 * left too: its bit is deleted after (it used to stay at the SA). */
static void test_trap67_late(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1), sa_gid = fx_gid(1);
	struct imc_sa_mad rep;
	struct imc_notice no;
	struct h *a, *b;
	size_t mark;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_SENDONLY_FULL, NULL);
	run();
	assert_int_equal(sa_js(2, &g1), 0x9);
	mark = W->nlog;
	leave(a);
	run_now();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	leave(b);
	memset(&rep, 0, sizeof(rep));
	rep.mad.method = UMAD_METHOD_REPORT;
	rep.mad.attr_id = UMAD_ATTR_NOTICE;
	assert_int_equal(imc_notice_mcast_init(&no, IMC_TRAP_MCAST_GROUP_DELETED,
					       &g1, 1, &sa_gid), 0);
	assert_true(imc_notice_pack(&no, rep.data, sizeof(rep.data)) > 0);
	W->in_api = true;
	imc_mcast_report(n->t, &rep);
	W->in_api = false;
	run();
	assert_int_equal(stats(n).groups_lost, 1);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 2);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* The port's own Delete of its last full bit deletes the group, with the
 * port's other bits (no other port is a full member): the Delete's answer
 * says what is left (nothing), and the member that stays is told, as by
 * trap 67: it re-joins, is refused and waits for the group. */
static void test_delete_takes_group(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_SENDONLY_NON, &QP1);
	run();
	assert_int_equal(sa_js(2, &g1), 0x5);
	leave(a);
	run_for(900 * MS);
	assert_int_equal(stats(n).groups_lost, 1);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(b->st[2], -ENOENT);
	assert_int_equal(sa_js(2, &g1), 0);
	check_union();
	finish();
}

/* A Delete that leaves the port without a full bit subscribes to trap 67
 * first, as a join without one does: when another port's full member
 * leaves later, the port hears that the group is gone. */
static void test_delete_subscribes(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b, *other;
	size_t mark;

	other = join(n3, G1, IMC_JOIN_FULL, NULL);
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_NON, NULL);
	run();
	assert_int_equal(subscriptions(2, 0), 0);
	mark = W->nlog;
	leave(a);
	run();
	assert_int_equal(subscriptions(2, mark), 1);
	assert_int_equal(sa_js(2, &g1), 0x2);
	leave(other);
	run_for(900 * MS);
	assert_int_equal(stats(n).traps, 1);
	assert_int_equal(b->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(b->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(sa_js(2, &g1), 0);
	check_union();
	finish();
}

/* ------------------------------------------------------------------ */
/* Members that are not full members wait for their group. */

/* A join with no full bit to a group the SA does not have: refused with
 * REQ_INVALID, the probe (Get by MGID) answers NO_RECORDS, and the member
 * WAITs (-ENOENT) instead of failing. Another port's full member creates
 * the group: trap 66 tells, and the member joins within a quarter of the
 * re-join spread (250 ms), before the fallback could have asked (1 s
 * after the refusal at the earliest). */
static void nonfull_waits(uint8_t js, void *qp)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	const struct logent *e;
	struct h *a;
	imc_time_t created;
	size_t mark;

	a = join(n, G1, js, qp);
	run_for(100 * MS);
	assert_int_equal(a->ncb, 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(a->st[0], -ENOENT);
	assert_int_equal(a->ncompl, 0);
	assert_int_equal(imc_mcast_member_state(a->m), IMC_MCAST_WAITING);
	assert_int_equal(stats(n).waits, 1);
	assert_int_equal(stats(n).errors, 0);
	assert_int_equal(sent(2, UMAD_METHOD_GET, 0), 1);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(subscriptions(2, 0), 2); /* traps 67 and 66 */
	assert_int_equal(fx_stats(&W->f).subscriptions, 2);
	mark = W->nlog;
	created = imc_loop_now(W->f.loop);
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run_for(300 * MS);
	assert_int_equal(stats(n).traps_created, 1);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(a->ncompl, 1);
	assert_int_equal(sa_js(2, &g1), js);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 1);
	e = find_log(L_CB, 2, 0, mark, NULL);
	assert_non_null(e);
	assert_true(e->at - created < 260 * MS);
	/* nobody waits: the trap 66 subscription ends */
	assert_int_equal(fx_stats(&W->f).subscriptions, 1);
	check_union();
	finish();
}

static void test_nonmember_waits_for_creation(void **state)
{
	nonfull_waits(IMC_JOIN_NON, &QP1);
}

static void test_sendonly_nonmember_waits_for_creation(void **state)
{
	nonfull_waits(IMC_JOIN_SENDONLY_NON, NULL);
}

static bool drop_reports_to_2(struct node *n, bool to_sa, const uint8_t *mad)
{
	return !to_sa && n->lid == 2 && mad[3] == UMAD_METHOD_REPORT;
}

/* Every trap 66 Report lost: the fallback asks again, 1 s after the
 * refusal and then doubling (plus up to 2 s of jitter and pacing), so
 * five times in the first minute, and joins once the group exists. */
static void test_lost_report_fallback(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a;
	size_t mark;

	W->drop_fn = drop_reports_to_2;
	a = join(n, G1, IMC_JOIN_NON, &QP1);
	run_for(100 * MS);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_WAITING);
	mark = W->nlog;
	run_for(60 * IMC_NSEC_PER_SEC);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 5);
	assert_int_equal(sent(2, UMAD_METHOD_GET, mark), 5);
	assert_int_equal(a->ncb, 1); /* told once */
	assert_int_equal(stats(n).waits, 6);
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run_for(20 * IMC_NSEC_PER_SEC);
	assert_int_equal(stats(n).traps_created, 0);
	assert_int_equal(a->ncb, 2);
	assert_int_equal(a->ev[1], IMC_MCAST_EV_JOINED);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_NON);
	check_union();
	finish();
}

/* Members that wait may leave: no callback after, and the trap 66
 * subscription goes with the last of them; a creation afterwards leaves
 * the port alone. */
static void test_leave_while_waiting(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *b;
	size_t mark;

	a = join(n, G1, IMC_JOIN_NON, &QP1);
	b = join(n, G1, IMC_JOIN_SENDONLY_NON, NULL);
	run_for(100 * MS);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_WAITING);
	assert_int_equal(fx_stats(&W->f).subscriptions, 2);
	leave(a);
	run_for(100 * MS);
	assert_int_equal(fx_stats(&W->f).subscriptions, 2);
	assert_int_equal(stats(n).groups, 1);
	leave(b);
	run_for(100 * MS);
	assert_int_equal(fx_stats(&W->f).subscriptions, 1);
	assert_int_equal(stats(n).groups, 0);
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 1);
	mark = W->nlog;
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(sa_js(2, &g1), 0);
	finish();
}

/* The SA restarts empty and the NonMember's re-join reaches it before the
 * full member re-created the group: it waits, then joins when the full
 * member's port re-joins (trap 66 to its new subscription). */
static void test_restart_nonfull_waits(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *non, *so, *full;

	full = join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	non = join(n, G1, IMC_JOIN_NON, &QP1);
	so = join(n, G1, IMC_JOIN_SENDONLY_NON, NULL);
	run();
	assert_int_equal(sa_js(2, &g1), 0x6);
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run_for(1500 * MS);
	assert_int_equal(non->ev[1], IMC_MCAST_EV_REJOINING);
	assert_int_equal(non->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(non->st[2], -ENOENT);
	assert_int_equal(so->ev[2], IMC_MCAST_EV_WAITING);
	assert_int_equal(sa_js(2, &g1), 0);
	port_event(n3, IMC_MCAST_PORT_REREGISTER);
	run_for(2100 * MS);
	assert_int_equal(full->ev[2], IMC_MCAST_EV_JOINED);
	assert_int_equal(stats(n).traps_created, 1);
	assert_int_equal(non->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(so->ev[3], IMC_MCAST_EV_JOINED);
	assert_int_equal(non->ncb, 4);
	assert_int_equal(non->nerr + so->nerr, 0);
	assert_int_equal(sa_js(2, &g1), 0x6);
	check_union();
	finish();
}

/* The SA dropped the port (its sweep found it gone) and the group went
 * with another port's last full member: no trap 67 reaches a port that
 * is no member. The port's FullMember leaves; the Delete is refused
 * (REQ_INVALID), and what the port keeps has no full bit: a Get of the
 * group finds it gone, and the NonMember waits instead of staying JOINED
 * to a group the SA does not have. */
static void test_refused_delete_verifies(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a, *c, *other;
	size_t mark;

	other = join(n3, G1, IMC_JOIN_FULL, NULL);
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	c = join(n, G1, IMC_JOIN_NON, &QP1);
	run();
	assert_int_equal(sa_js(2, &g1), 0x3);
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 1);
	leave(other);
	run();
	mark = W->nlog;
	leave(a);
	run_for(100 * MS);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	assert_int_equal(sent(2, UMAD_METHOD_GET, mark), 1);
	assert_int_equal(c->ev[1], IMC_MCAST_EV_WAITING);
	assert_int_equal(c->st[1], -ENOENT);
	assert_non_null(find_log(L_DETACH, 2, 0, mark, NULL));
	finish();
}

/* A non-full join refused by an existing group (a Q_Key that differs)
 * does not wait: the probe finds the group, the Set goes once more (the
 * group may have been created meanwhile), and the refusal stands. */
static void test_nonfull_mismatch_fails(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_NON, NULL);
	struct h *a;

	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	r.rec.qkey = 0x9999;
	a = join_req(n, &r);
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(a->ev[0], IMC_MCAST_EV_ERROR);
	assert_int_equal(a->st[0], ST_REQ_INVALID);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 2);
	assert_int_equal(sent(2, UMAD_METHOD_GET, 0), 2);
	assert_int_equal(stats(n).waits, 0);
	finish();
}

/* The SA holds a bit of the port that the tracker never knew of (a
 * create of the port whose answers were all lost leaves such bits): the
 * Delete's answer names the port's JoinState left, and the tracker gives
 * that bit up too. */
static void test_delete_answer_names_what_is_left(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_gid g1 = fx_mgid(G1);
	uint8_t mad[IMC_MAD_SIZE];
	struct imc_mcmr r;
	struct h *a;
	size_t mark;

	join(n3, G1, IMC_JOIN_FULL, NULL); /* keeps G1 for the NonMember */
	a = join(n, G1, IMC_JOIN_FULL, NULL);
	run();
	/* NonMember for port 2, from port 2 with a TID of nobody's */
	memset(&r, 0, sizeof(r));
	r.mgid = g1;
	r.port_gid = fx_gid(2);
	r.join_state = IMC_JOIN_NON;
	fx_mcmr_mad(mad, UMAD_METHOD_SET, 0x7e57, 0, JOIN_MASK, &r);
	assert_int_equal(fx_recv(&W->f, 2, mad, sizeof(mad)), 0);
	run();
	assert_int_equal(sa_js(2, &g1), 0x3);
	mark = W->nlog;
	leave(a);
	run();
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 2);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(stats(n).groups, 0);
	finish();
}

/* LID change: nothing at the SA. */
static void test_lid_change(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL);
	size_t mark;

	run();
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_LID_CHANGE);
	run();
	assert_int_equal(W->nlog, mark);
	assert_int_equal(a->ncb, 1);
	assert_int_equal(stats(n).port_events[IMC_MCAST_PORT_LID_CHANGE], 1);
	finish();
}

/* Re-joins after a reregister (of an SA that lost everything). */
struct rj {
	imc_time_t t0, first, last;
	unsigned sets, at_first;
	struct node *n;
};

static void reregister_many(struct rj *o, enum imc_mcast_rejoin policy,
			    imc_time_t spread, unsigned window,
			    imc_time_t delay)
{
	struct imc_mcast_config mc = tracker_cfg(2);
	struct imc_sa_client_config cc = client_cfg(2);
	char mg[64];
	size_t mark;

	mc.rejoin = policy;
	mc.rejoin_window = window;
	mc.rejoin_spread = spread;
	cc.window = 64;
	o->n = node_cfg(2, &mc, &cc);
	W->delay_min = W->delay_max = delay;
	for (int i = 0; i < 100; i++) {
		snprintf(mg, sizeof(mg), "ff12:1234::%x", 0x100 + i);
		join(o->n, mg, IMC_JOIN_FULL, NULL);
	}
	run();
	o->n->sets_out_max = 0;
	mark = W->nlog;
	o->t0 = imc_loop_now(W->f.loop);
	imc_sa_destroy(W->f.sa);
	sa_start();
	port_event(o->n, IMC_MCAST_PORT_REREGISTER);
	run();
	o->first = IMC_TIME_MAX;
	o->last = 0;
	o->sets = 0;
	for (size_t i = mark; i < W->nlog; i++) {
		if (W->log[i].kind != L_SEND ||
		    W->log[i].method != UMAD_METHOD_SET)
			continue;
		o->sets++;
		if (W->log[i].at < o->first)
			o->first = W->log[i].at;
		if (W->log[i].at > o->last)
			o->last = W->log[i].at;
	}
	o->at_first = 0;
	for (size_t i = mark; i < W->nlog; i++)
		o->at_first += W->log[i].kind == L_SEND &&
			       W->log[i].method == UMAD_METHOD_SET &&
			       W->log[i].at == o->first;
	assert_int_equal(o->sets, 100);
	for (size_t i = 0; i < nh; i++) {
		assert_int_equal(H[i].ncb, 3);
		assert_int_equal(H[i].ev[1], IMC_MCAST_EV_REJOINING);
		assert_int_equal(H[i].ev[2], IMC_MCAST_EV_JOINED);
	}
	assert_int_equal(stats(o->n).rejoins, 100);
	check_union();
}

/* Paced: never more than the window in flight (and the window is used
 * when the re-joins crowd). */
static void test_rejoin_paced_window(void **state)
{
	struct rj o;

	reregister_many(&o, IMC_MCAST_REJOIN_PACED, 5 * MS, 4, 1 * MS);
	assert_int_equal(o.n->sets_out_max, 4);
	assert_true(o.first >= o.t0);
	finish();
}

/* Paced: the re-joins start spread over [0, rejoin_spread). */
static void test_rejoin_paced_spread(void **state)
{
	struct rj o;

	reregister_many(&o, IMC_MCAST_REJOIN_PACED, 50 * MS, 1000, 10 * US);
	assert_true(o.first >= o.t0);
	assert_true(o.last < o.t0 + 50 * MS);
	assert_true(o.last - o.first > 40 * MS);
	assert_true(o.at_first < 3);
	assert_true(o.n->sets_out_max < 10);
	finish();
}

/* Immediate, as Linux consumers do: every re-join at once, up to the
 * client's window. */
static void test_rejoin_immediate(void **state)
{
	struct rj o;

	reregister_many(&o, IMC_MCAST_REJOIN_IMMEDIATE, 50 * MS, 4, 1 * MS);
	assert_int_equal(o.first, o.t0);
	assert_int_equal(o.at_first, 64);
	assert_int_equal(o.n->sets_out_max, 64);
	finish();
}

/* ------------------------------------------------------------------ */
/* The observer: how long joins and re-joins take. */

struct obs {
	unsigned n;
	const struct imc_mcast_member *m[16];
	int type[16];
	bool first[16];
	imc_time_t elapsed[16];
	int ncb[16];                /* callbacks the handle had by then */
};

static struct obs OBS;

static void on_obs(void *ctx, const struct imc_mcast_member *m,
		   const struct imc_mcast_event *ev, bool first,
		   imc_time_t elapsed)
{
	struct obs *o = ctx;

	assert_ptr_equal(o, &OBS);
	assert_false(W->in_api);
	assert_true(o->n < 16);
	o->m[o->n] = m;
	o->type[o->n] = ev->type;
	o->first[o->n] = first;
	o->elapsed[o->n] = elapsed;
	o->ncb[o->n] = -1;
	for (size_t i = 0; i < nh; i++)
		if (H[i].live && H[i].m == m)
			o->ncb[o->n] = H[i].ncb;
	o->n++;
}

/* Loop time of the callback of h with event ev after log position from. */
static imc_time_t cb_at(const struct h *h, int ev, size_t from)
{
	for (size_t i = from; i < W->nlog; i++)
		if (W->log[i].kind == L_CB && W->log[i].lid == h->n->lid &&
		    W->log[i].ev == ev && imc_gid_equal(&W->log[i].mgid,
							&h->mgid))
			return W->log[i].at;
	fail_msg("no callback %d", ev);
	return 0;
}

static void test_observer(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct imc_mcast_observer o = { on_obs, &OBS };
	struct imc_mcast_join_req bad = create_req(G1, IMC_JOIN_FULL, NULL);
	struct h *a, *b, *c, *d, *e;
	imc_time_t t0, t1;
	size_t mark;

	memset(&OBS, 0, sizeof(OBS));
	imc_mcast_set_observer(n->t, &o);
	/* A Set there and back, 5 us each way; told before the callback. */
	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(OBS.n, 1);
	assert_ptr_equal(OBS.m[0], a->m);
	assert_int_equal(OBS.type[0], IMC_MCAST_EV_JOINED);
	assert_true(OBS.first[0]);
	assert_int_equal(OBS.elapsed[0], 10 * US);
	assert_int_equal(OBS.ncb[0], 0);
	assert_int_equal(a->ncb, 1);
	/* Answered without a MAD: no time at all; a mismatch fails alone,
	 * at once too. n3 has no observer. */
	run_for(1 * MS);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	bad.rec.qkey = 0x9999;
	c = join_req(n, &bad);
	join(n3, G1, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(OBS.n, 3);
	assert_ptr_equal(OBS.m[1], b->m);
	assert_true(OBS.first[1]);
	assert_int_equal(OBS.elapsed[1], 0);
	assert_ptr_equal(OBS.m[2], c->m);
	assert_int_equal(OBS.type[2], IMC_MCAST_EV_ERROR);
	assert_true(OBS.first[2]);
	assert_int_equal(OBS.elapsed[2], 0);

	/* A reregister: re-joins, timed from the event. */
	run_for(1 * MS);
	t0 = imc_loop_now(W->f.loop);
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	run();
	assert_int_equal(OBS.n, 5);
	for (unsigned i = 3; i < 5; i++) {
		const struct h *x = OBS.m[i] == a->m ? a : b;

		assert_true(OBS.m[i] == a->m || OBS.m[i] == b->m);
		assert_false(OBS.first[i]);
		assert_int_equal(OBS.type[i], IMC_MCAST_EV_JOINED);
		assert_int_equal(OBS.elapsed[i],
				 cb_at(x, IMC_MCAST_EV_JOINED, mark) - t0);
		assert_true(OBS.elapsed[i] >= 10 * US);
	}

	/* A flap: a re-joins, timed from port up; d, joined while the
	 * port was down, completes its request, timed from its join. */
	port_event(n, IMC_MCAST_PORT_DOWN);
	link_set(n, true);
	run();
	assert_int_equal(OBS.n, 5);        /* WAITING is not observed */
	t0 = imc_loop_now(W->f.loop);
	d = join(n, G2, IMC_JOIN_FULL, NULL);
	run_for(3 * MS);
	link_set(n, false);
	t1 = imc_loop_now(W->f.loop);
	mark = W->nlog;
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	run();
	assert_int_equal(OBS.n, 8);
	for (unsigned i = 5; i < 8; i++) {
		if (OBS.m[i] == d->m) {
			assert_true(OBS.first[i]);
			assert_int_equal(OBS.elapsed[i],
					 cb_at(d, IMC_MCAST_EV_JOINED, mark) -
					 t0);
			assert_true(OBS.elapsed[i] > 3 * MS);
		} else {
			const struct h *x = OBS.m[i] == a->m ? a : b;

			assert_true(OBS.m[i] == a->m || OBS.m[i] == b->m);
			assert_false(OBS.first[i]);
			assert_int_equal(OBS.elapsed[i],
					 cb_at(x, IMC_MCAST_EV_JOINED, mark) -
					 t1);
		}
	}

	/* Cleared: nothing more. */
	imc_mcast_set_observer(n->t, NULL);
	e = join(n, G3, IMC_JOIN_FULL, NULL);
	run();
	assert_int_equal(e->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(OBS.n, 8);
	finish();
}

/* ------------------------------------------------------------------ */
/* MGID 0, sequencing, duplicates, validation, listing. */

static void test_create_mgid_zero(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c;
	struct imc_mcast_join_req r;
	size_t mark;

	a = join(n, NULL, IMC_JOIN_FULL, &QP1);
	b = join(n, NULL, IMC_JOIN_FULL, &QP1);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_false(imc_gid_equal(&a->rec.mgid, &b->rec.mgid));
	assert_int_equal(imc_mgid_sigword(&a->rec.mgid), 0xA01B);
	assert_int_equal(stats(n).groups, 2);
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 2);
	/* keyed by the answered MGID: a join of it is local */
	mark = W->nlog;
	r = create_req(NULL, IMC_JOIN_FULL, NULL);
	r.rec.mgid = a->rec.mgid;
	c = join_req(n, &r);
	run();
	assert_int_equal(c->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(sa_js(2, &a->rec.mgid), IMC_JOIN_FULL);
	a->mgid = a->rec.mgid;
	b->mgid = b->rec.mgid;
	check_union();
	finish();
}

/* A create is answered with an MGID the port already has a group for
 * (its own join of that MGID queued behind the create): the create's
 * member moves to that group, which holds what the create brought. */
static void test_create_merges_into_known_mgid(void **state)
{
	struct node *n = node(2), *n3 = node(3);
	struct h *probe, *a, *b;
	struct imc_mcast_join_req r;
	struct imc_gid next;
	uint32_t c;

	/* The SA numbers the MGIDs it assigns: learn the next one. */
	probe = join(n3, NULL, IMC_JOIN_FULL, NULL);
	run();
	next = probe->rec.mgid;
	leave(probe);
	run();
	c = (uint32_t)next.raw[10] | (uint32_t)next.raw[11] << 8 |
	    (uint32_t)next.raw[12] << 16 | (uint32_t)next.raw[13] << 24;
	c++;
	next.raw[10] = (uint8_t)c;
	next.raw[11] = (uint8_t)(c >> 8);
	next.raw[12] = (uint8_t)(c >> 16);
	next.raw[13] = (uint8_t)(c >> 24);
	/* the create goes out first and gets that MGID; the join of it,
	 * sent right after, joins the group the create made */
	a = join(n, NULL, IMC_JOIN_FULL, &QP1);
	r = create_req(NULL, IMC_JOIN_FULL, &QP1);
	r.rec.mgid = next;
	b = join_req(n, &r);
	run();
	assert_int_equal(a->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_true(imc_gid_equal(&a->rec.mgid, &next));
	assert_int_equal(stats(n).groups, 1);
	assert_int_equal(sa_js(2, &next), IMC_JOIN_FULL);
	a->mgid = next;
	check_union();
	leave(a);
	run();
	assert_int_equal(sa_js(2, &next), IMC_JOIN_FULL);
	leave(b);
	run();
	assert_int_equal(sa_js(2, &next), 0);
	finish();
}

/* The last member leaves (a Delete goes out) and a new one joins the same
 * MGID at once: the Set waits for the Delete's answer. */
static void test_delete_then_join_sequenced(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1), *b;
	size_t mark, i_del = 0, i_ans = 0, i_set = 0;

	run();
	mark = W->nlog;
	leave(a);
	run_now();                  /* Delete in flight */
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, mark), 1);
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, mark), 0);
	assert_int_equal(stats(n).groups, 1);
	run();
	assert_non_null(find_log(L_SEND, 2, UMAD_SA_METHOD_DELETE, mark,
				 &i_del));
	assert_non_null(find_log(L_ANSWER, 2, UMAD_SA_METHOD_DELETE_RESP,
				 mark, &i_ans));
	assert_non_null(find_log(L_SEND, 2, UMAD_METHOD_SET, mark, &i_set));
	assert_true(i_del < i_ans && i_ans < i_set);
	assert_int_equal(b->ev[0], IMC_MCAST_EV_JOINED);
	assert_int_equal(sa_js(2, &g1), IMC_JOIN_FULL);
	assert_int_equal(stats(n).groups, 1);
	check_union();
	finish();
}

/* Every MAD duplicated, and delayed at random (reordered): one callback
 * per event all the same. */
static void test_duplicates_and_reordering(void **state)
{
	struct node *n = node(2);
	char mg[64];

	W->dup = 1.0;
	W->delay_min = 1 * US;
	W->delay_max = 3 * MS;
	for (int i = 0; i < 20; i++) {
		snprintf(mg, sizeof(mg), "ff12:1234::%x", i % 5 + 1);
		join(n, mg, i % 3 ? IMC_JOIN_FULL : IMC_JOIN_NON, NULL);
	}
	run();
	for (size_t i = 0; i < nh; i++) {
		assert_int_equal(H[i].ncb, 1);
		assert_int_equal(H[i].ev[0], IMC_MCAST_EV_JOINED);
	}
	check_union();
	for (size_t i = 0; i < nh; i += 2)
		leave(&H[i]);
	run();
	check_union();
	finish();
}

static void test_join_invalid(void **state)
{
	struct node *n = node(2);
	struct imc_mcast_join_req r = create_req(G1, IMC_JOIN_FULL, NULL);
	struct imc_mcast_member *m = NULL;

	r.join_state = 0;
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	r.join_state = 0x10;
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	r.join_state = 1;
	assert_int_equal(imc_mcast_join(n->t, &r, NULL, NULL, &m), -EINVAL);
	r.rec.mgid = fx_gid(5); /* unicast */
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	r = create_req(G1, IMC_JOIN_FULL, NULL);
	r.rec.sl = 16;          /* does not fit its 4 bits */
	assert_int_equal(imc_mcast_join(n->t, &r, on_cb, NULL, &m), -EINVAL);
	assert_null(m);
	run();
	assert_int_equal(stats(n).joins, 0);
	assert_int_equal(stats(n).groups, 0);
	assert_int_equal(W->nlog, 0);
	finish();
}

struct listing {
	struct imc_gid mgid[8];
	uint8_t js[8], wanted[8];
	unsigned members[8];
	bool joined[8];
	int n;
};

static void list_cb(void *arg, const struct imc_mcast_group_info *g)
{
	struct listing *l = arg;

	assert_true(l->n < 8);
	l->mgid[l->n] = g->rec.mgid;
	l->js[l->n] = g->join_state;
	l->wanted[l->n] = g->wanted;
	l->members[l->n] = g->members;
	l->joined[l->n] = g->joined;
	l->n++;
}

static void test_foreach_group_order(void **state)
{
	struct node *n = node(2);
	struct listing l;

	join(n, G3, IMC_JOIN_FULL, NULL);
	join(n, G1, IMC_JOIN_FULL, NULL);
	join(n, G1, IMC_JOIN_NON, NULL);
	join(n, G2, IMC_JOIN_SENDONLY_FULL, NULL);
	join(n, NULL, IMC_JOIN_FULL, NULL); /* not listed until answered */
	memset(&l, 0, sizeof(l));
	assert_int_equal(imc_mcast_foreach_group(n->t, list_cb, &l), 0);
	assert_int_equal(l.n, 3);
	assert_false(l.joined[0]);
	assert_int_equal(l.js[0], 0);
	assert_int_equal(l.wanted[0], 0x3);
	run();
	memset(&l, 0, sizeof(l));
	assert_int_equal(imc_mcast_foreach_group(n->t, list_cb, &l), 0);
	assert_int_equal(l.n, 4);
	for (int i = 1; i < l.n; i++)
		assert_true(imc_gid_cmp(&l.mgid[i - 1], &l.mgid[i]) < 0);
	assert_true(imc_gid_equal(&l.mgid[0], &H[1].mgid));
	assert_int_equal(l.js[0], 0x3);
	assert_int_equal(l.members[0], 2);
	assert_true(l.joined[0]);
	H[4].mgid = H[4].rec.mgid;
	finish();
}

/* ------------------------------------------------------------------ */
/* The callback contract, rule by rule. */

/* Rule 1: never inside join, leave, port_event or destroy (on_cb and
 * the ops assert it in every test); here the calls that could call back
 * at once are made with events pending. */
static void test_rule1_never_inside_api(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL), *b;

	run();
	b = join(n, G1, IMC_JOIN_FULL, NULL);   /* local: still deferred */
	port_event(n, IMC_MCAST_PORT_DOWN);     /* WAITING: deferred */
	assert_int_equal(b->ncb, 0);
	assert_int_equal(a->ncb, 1);
	port_event(n, IMC_MCAST_PORT_ACTIVE);
	port_event(n, IMC_MCAST_PORT_REREGISTER);
	assert_int_equal(a->ncb, 1);
	run();
	assert_true(a->ncb >= 2);
	assert_int_equal(b->ncompl, 1);
	finish();
}

/* Rule 2: each join completes exactly once, whatever happens: a short
 * random sweep with loss, duplicates, delays, flaps and reregisters. */
static void test_rule2_exactly_once_sweep(void **state)
{
	static const char *mg[] = { "ff12:1234::1", "ff12:1234::2",
				    "ff12:1234::3", "ff12:1234::4" };
	static const uint8_t bits[] = { 1, 2, 8, 1, 4 };

	for (uint64_t seed = SWEEP_FIRST; seed <= SWEEP_LAST; seed++) {
		struct node *ns[3];
		struct imc_rng r;

		sweep_seed = seed;
		imc_rng_seed(&r, seed);
		imc_rng_seed(&W->rng, seed);
		/* Loss and duplicates; the wire keeps its order (a copy
		 * of a Set overtaking a later Delete would make the SA
		 * hold what nobody asked for any more). */
		W->drop = 0.3;
		W->dup = 0.1;
		W->delay_min = W->delay_max = 1 * MS;
		for (int i = 0; i < 3; i++) {
			struct imc_mcast_config mc = tracker_cfg(2 + i);
			struct imc_sa_client_config cc = client_cfg(2 + i);

			mc.seed = seed * 10 + i;
			cc.seed = seed * 100 + i;
			/* The anchors' port never gives up: were every full
			 * member of a group to fail, the SA would delete the
			 * group with the others' memberships, and nobody
			 * tells their trackers (o15-0.1.9). */
			cc.retries = i == 0 ? 30 : 2;
			ns[i] = node_cfg(2 + i, &mc, &cc);
		}
		/* a full member on each group first, so that non-full
		 * joins have a group */
		for (unsigned g = 0; g < 4; g++)
			join(ns[0], mg[g], IMC_JOIN_FULL, &QP1);
		for (int step = 0; step < 300; step++) {
			struct node *n = ns[imc_rng_below(&r, 3)];
			unsigned what = (unsigned)imc_rng_below(&r, 20);

			if (what < 9) {
				/* one draw per statement: the order of
				 * arguments is the compiler's */
				const char *g = mg[imc_rng_below(&r, 4)];
				uint8_t js = bits[imc_rng_below(&r, 5)];
				bool q1 = imc_rng_chance(&r, 0.5);

				join(n, g, js, q1 ? &QP1 : &QP2);
			} else if (what < 17) {
				size_t k = (size_t)imc_rng_below(&r, nh);

				if (H[k].live && k >= 4)
					leave(&H[k]);
			} else if (what == 17) {
				port_event(n, IMC_MCAST_PORT_REREGISTER);
			} else if (what == 18 && n != ns[0]) {
				port_event(n, IMC_MCAST_PORT_DOWN);
				link_set(n, true);
				run_for(imc_rng_below(&r, 50 * MS));
				(void)imc_sa_port_gone(
					W->f.sa, &W->f.ports[n->lid].p.gid);
				link_set(n, false);
				port_event(n, IMC_MCAST_PORT_ACTIVE);
			}
			run_for(imc_rng_below(&r, 20 * MS));
		}
		/* quiesce without faults */
		W->drop = W->dup = 0;
		run();
		for (size_t i = 0; i < nh; i++)
			if (H[i].live && H[i].ncompl < 1)
				fail_msg("handle %zu never completed (seed %llu)",
					 i, (unsigned long long)seed);
		check_union();
		finish();
		memset(W->nodes, 0, sizeof(W->nodes));
		nh = 0;
		W->nlog = 0;
		sweep_seed = 0;
	}
}

/* Rule 3: no callback after leave returns, even with the answer in
 * flight; the membership the answer brought is given back. */
static void test_rule3_leave_with_answer_in_flight(void **state)
{
	struct node *n = node(2);
	struct imc_gid g1 = fx_mgid(G1);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1);

	run_now();
	assert_int_equal(sent(2, UMAD_METHOD_SET, 0), 1);
	leave(a);                   /* on_cb asserts a->live */
	run();
	assert_int_equal(a->ncb, 0);
	assert_int_equal(sa_js(2, &g1), 0);
	assert_int_equal(sent(2, UMAD_SA_METHOD_DELETE, 0), 1);
	assert_null(find_log(L_ATTACH, 2, 0, 0, NULL));
	finish();
}

/* Rule 3 for destroy: an answer in flight, events queued. */
static void test_rule3_destroy_with_answer_in_flight(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, NULL), *b;

	run();
	b = join(n, G2, IMC_JOIN_FULL, NULL);
	run_now();
	port_event(n, IMC_MCAST_PORT_REREGISTER); /* REJOINING queued */
	destroy(n);
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 0);
	/* destroy tells the SA nothing: the SM would drop the port */
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 2);
	finish();
}

/* Rule 4: a callback may leave its own member, leave another member
 * whose event is due in the same round, or destroy the tracker. */
static void test_rule4_leave_self_in_callback(void **state)
{
	struct node *n = node(2);
	struct h *a = join(n, G1, IMC_JOIN_FULL, &QP1), *b;

	a->act = ACT_LEAVE_SELF;
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	b->act = ACT_LEAVE_SELF;
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 1);
	assert_false(a->live);
	assert_int_equal(stats(n).members, 0);
	assert_int_equal(stats(n).groups, 0);
	assert_non_null(find_log(L_DETACH, 2, 0, 0, NULL));
	finish();
}

static void test_rule4_leave_other_in_callback(void **state)
{
	struct node *n = node(2);
	struct h *a, *b, *c;

	a = join(n, G1, IMC_JOIN_FULL, NULL);
	b = join(n, G1, IMC_JOIN_FULL, NULL);
	c = join(n, G1, IMC_JOIN_FULL, NULL);
	a->act = ACT_LEAVE_OTHER;
	a->other = b;               /* b's JOINED is due in the same round */
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 0);
	assert_int_equal(c->ncb, 1);
	assert_int_equal(stats(n).members, 2);
	finish();
}

static void test_rule4_destroy_in_callback(void **state)
{
	struct node *n = node(2);
	struct h *a, *b;

	a = join(n, G1, IMC_JOIN_FULL, &QP1);
	b = join(n, G1, IMC_JOIN_FULL, &QP1);
	a->act = ACT_DESTROY;
	run();
	assert_int_equal(a->ncb, 1);
	assert_int_equal(b->ncb, 0);
	assert_null(n->t);
	/* the SM drops the port the tracker left behind */
	assert_int_equal(imc_sa_port_gone(W->f.sa, &W->f.ports[2].p.gid), 1);
	finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)
		T(test_join_leave_basic),
		T(test_local_join_no_mad),
		T(test_queued_joins_one_mad),
		T(test_mismatch_fails_alone),
		T(test_selectors),
		T(test_sa_status_passed_through),
		T(test_refusal_fails_trigger_only),
		T(test_delete_exact_bits),
		T(test_nonmember_states),
		T(test_timeout_after_retries),
		T(test_delete_retried_until_answered),
		T(test_delete_stops_at_port_down),
		T(test_flap_leave_while_down),
		T(test_rejoin_doubts_held_bits),
		T(test_delete_unanswered_then_join),
		T(test_retry_refused_after_taken),
		T(test_rejoin_mismatch_detaches),
		T(test_rejoin_unanswered_paced_again),
		T(test_attach_detach_order),
		T(test_attach_failure),
		T(test_release_qp),
		T(test_port_down_up),
		T(test_reregister_rejoins),
		T(test_sm_change_rejoins),
		T(test_rejoin_new_mlid),
		T(test_rejoin_failure_fails_group),
		T(test_group_deleted_trap67),
		T(test_trap67_late),
		T(test_delete_takes_group),
		T(test_delete_subscribes),
		T(test_nonmember_waits_for_creation),
		T(test_sendonly_nonmember_waits_for_creation),
		T(test_lost_report_fallback),
		T(test_leave_while_waiting),
		T(test_restart_nonfull_waits),
		T(test_nonfull_mismatch_fails),
		T(test_refused_delete_verifies),
		T(test_delete_answer_names_what_is_left),
		T(test_lid_change),
		T(test_rejoin_paced_window),
		T(test_rejoin_paced_spread),
		T(test_rejoin_immediate),
		T(test_observer),
		T(test_create_mgid_zero),
		T(test_create_merges_into_known_mgid),
		T(test_delete_then_join_sequenced),
		T(test_duplicates_and_reordering),
		T(test_join_invalid),
		T(test_foreach_group_order),
		T(test_rule1_never_inside_api),
		T(test_rule2_exactly_once_sweep),
		T(test_rule3_leave_with_answer_in_flight),
		T(test_rule3_destroy_with_answer_in_flight),
		T(test_rule4_leave_self_in_callback),
		T(test_rule4_leave_other_in_callback),
		T(test_rule4_destroy_in_callback),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
