/* The join tracker's test world, shared by test_mcast.c and
 * test_mcast_wait.c: the real SA engine on one virtual loop, SA clients
 * whose transport injects faults (drop, duplicate, delay), handles that
 * check the callback rules, and finish(), which ends every test: every
 * handle left, the loop run dry, then the trackers hold nothing, no query
 * is alive, the SA holds no membership of any test port, and no timer is
 * left armed. The SA's memberships are compared with the union of the
 * live handles' bits (check_union()) where a test has settled. */
#ifndef IMC_TEST_MCAST_FIXTURE_H
#define IMC_TEST_MCAST_FIXTURE_H

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
#include "util/bytes.h"

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

static inline void logit(const struct logent *e)
{
	assert_true(W->nlog < MAX_LOG);
	W->log[W->nlog] = *e;
	W->log[W->nlog].at = imc_loop_now(W->f.loop);
	W->nlog++;
}

static inline void mad_fields(const uint8_t *mad, struct logent *e)
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

static inline void flight_deliver(struct imc_timer *t)
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

static inline void flight_add(struct node *n, bool to_sa, const uint8_t *mad)
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
static inline void wire(struct node *n, bool to_sa, const uint8_t *mad)
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
static inline void link_set(struct node *n, bool down)
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

static inline int tr_send(void *ctx, const uint8_t *mad, size_t len)
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

static inline void sa_send(void *ctx, const struct imc_sa_dest *to,
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

static inline void sa_start(void)
{
	assert_int_equal(imc_sa_create(W->f.loop, &W->f.cfg, &sa_ops, W,
				       &W->f.sa), 0);
}

static inline int op_attach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	struct node *n = ctx;
	struct logent e = { .kind = L_ATTACH, .lid = n->lid, .qp = qp,
			    .mgid = *mgid, .mlid = mlid };

	assert_false(W->in_api);
	logit(&e);
	return n->attach_result;
}

static inline int op_detach(void *ctx, void *qp, const struct imc_gid *mgid,
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

static inline struct imc_sa_client_config client_cfg(uint16_t lid)
{
	struct imc_sa_client_config cc;

	imc_sa_client_config_init(&cc);
	cc.timeout = 100 * MS;
	cc.max_timeout = 400 * MS;
	cc.retries = 2;
	cc.seed = 1000 + lid;
	return cc;
}

static inline struct imc_mcast_config tracker_cfg(uint16_t lid)
{
	struct imc_mcast_config cfg;

	imc_mcast_config_init(&cfg);
	cfg.port_gid = fx_gid(lid);
	cfg.seed = 77 + lid;
	return cfg;
}

static inline struct node *node_cfg(uint16_t lid, const struct imc_mcast_config *mc,
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

static inline struct node *node(uint16_t lid)
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

static inline void on_cb(void *arg, struct imc_mcast_member *m,
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

static inline struct h *join_req(struct node *n, const struct imc_mcast_join_req *r)
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
static inline struct imc_mcast_join_req create_req(const char *mgid, uint8_t js,
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

static inline struct h *join(struct node *n, const char *mgid, uint8_t js, void *qp)
{
	struct imc_mcast_join_req r = create_req(mgid, js, qp);

	return join_req(n, &r);
}

static inline void leave(struct h *h)
{
	assert_true(h->live);
	h->live = false;
	W->in_api = true;
	imc_mcast_leave(h->m);
	W->in_api = false;
}

static inline void port_event(struct node *n, enum imc_mcast_port_event ev)
{
	W->in_api = true;
	imc_mcast_port_event(n->t, ev);
	W->in_api = false;
}

static inline void destroy(struct node *n)
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

static inline void run(void)
{
	assert_int_equal(imc_loop_run(W->f.loop), 0);
}

static inline void run_for(imc_time_t d)
{
	assert_int_equal(imc_loop_run_until(W->f.loop,
					    imc_loop_now(W->f.loop) + d), 0);
}

/* Runs the rounds due now: sends go out, nothing comes back yet (the
 * wire takes at least delay_min). */
static inline void run_now(void)
{
	run_for(0);
}

static inline struct imc_mcast_stats stats(const struct node *n)
{
	struct imc_mcast_stats st;

	imc_mcast_get_stats(n->t, &st);
	return st;
}

/* MADs of a method sent by lid (all of them, retries too) since log
 * position from. */
static inline unsigned sent(uint16_t lid, uint8_t method, size_t from)
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
static inline unsigned subscriptions(uint16_t lid, size_t from)
{
	unsigned k = 0;

	for (size_t i = from; i < W->nlog; i++)
		if (W->log[i].kind == L_SEND && W->log[i].lid == lid &&
		    W->log[i].method == UMAD_METHOD_SET &&
		    W->log[i].attr == UMAD_ATTR_INFORM_INFO)
			k++;
	return k;
}

static inline const struct logent *find_log(enum lkind kind, uint16_t lid,
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

static inline int js_cb(void *arg, const struct imc_sa_member_info *m)
{
	struct js_find *f = arg;

	if (imc_gid_equal(&m->port_gid, &f->gid))
		f->js = m->join_state;
	return 0;
}

/* JoinState of port lid in mgid at the SA (0: none). */
static inline uint8_t sa_js(uint16_t lid, const struct imc_gid *mgid)
{
	struct js_find f = { fx_gid(lid), 0 };

	(void)imc_sa_foreach_member(W->f.sa, mgid, js_cb, &f);
	return f.js;
}

struct un_ctx {
	struct node *n;
	unsigned bad;
};

static inline uint8_t live_union(const struct node *n, const struct imc_gid *mgid)
{
	uint8_t u = 0;

	for (size_t i = 0; i < nh; i++)
		if (H[i].live && H[i].n == n &&
		    imc_gid_equal(&H[i].mgid, mgid) &&
		    imc_mcast_member_state(H[i].m) != IMC_MCAST_FAILED)
			u |= H[i].js;
	return u;
}

static inline void print_group(void *arg, const struct imc_mcast_group_info *g)
{
	const struct imc_gid *mgid = arg;

	if (imc_gid_equal(&g->rec.mgid, mgid))
		fprintf(stderr, "  tracker: held %#x wanted %#x members %u "
			"joined %d\n", g->join_state, g->wanted, g->members,
			g->joined);
}

static inline int union_group(void *arg, const struct imc_sa_group_info *g)
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
static inline void check_union(void)
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

static inline int setup(void **state)
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
static inline void finish(void)
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

static inline int teardown(void **state)
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

#endif
