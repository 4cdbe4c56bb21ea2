/* The world of the ibmcastd tests: the SA engine on a virtual loop, the
 * daemon's port (LID 2: an SA client, a join tracker, the server core)
 * and another port (LID 3: its own tracker, standing for another host's
 * port), MADs that fly with a delay, and client processes as
 * imc_mcastd connections over socketpairs whose other end the server
 * accepted. The daemon can be killed (as SIGKILL: its sockets close, its
 * SA memberships stay) and started again. Include after <cmocka.h>. */
#ifndef IMC_TESTS_MCASTD_WORLD_H
#define IMC_TESTS_MCASTD_WORLD_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ibmcast/gid.h"
#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/mcastd_server.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_client.h"
#include "test_sa_fixture.h"

#define MS IMC_NSEC_PER_MSEC
#define DLID 2        /* the daemon's port */
#define OLID 3        /* another port */
#define MAD_DELAY (50 * IMC_NSEC_PER_USEC)

struct wport {
	uint16_t lid;
	struct imc_sa_client *c;
	struct imc_mcast *t;
	bool mute;                  /* a killed daemon sends nothing more */
};

struct wflight {
	struct imc_timer timer;
	struct wflight *next;
	bool to_sa;
	uint16_t lid;
	uint8_t mad[IMC_MAD_SIZE];
};

struct wworld {
	struct fx f;
	struct wport ports[2];      /* [0] daemon's, [1] other */
	struct imc_mcastd_server *srv;
	struct imc_mcastd_server_config scfg;
	struct wflight *flights;
	struct imc_timer tick;
	unsigned uid;               /* credentials of the next accept */
	bool in_api;                /* inside a client API call */
	unsigned daemon_starts;
	char log[64][160];
	unsigned nlog;
	uint64_t audit_deletes;     /* of every daemon so far */
};

static struct wworld *WW;

static inline void w_unlink(struct wflight *fl)
{
	struct wflight **p = &WW->flights;

	while (*p != fl)
		p = &(*p)->next;
	*p = fl->next;
}

static inline struct wport *w_port(uint16_t lid)
{
	for (int i = 0; i < 2; i++)
		if (WW->ports[i].lid == lid)
			return &WW->ports[i];
	return NULL;
}

static inline void w_deliver(struct imc_timer *t)
{
	struct wflight *fl = imc_container_of(t, struct wflight, timer);
	struct imc_sa_src src = fx_src(fl->lid);
	struct wport *p = w_port(fl->lid);

	w_unlink(fl);
	if (fl->to_sa)
		(void)imc_sa_recv(WW->f.sa, &src, fl->mad, IMC_MAD_SIZE);
	else if (p && p->c)
		(void)imc_sa_client_recv(p->c, fl->mad, IMC_MAD_SIZE);
	free(fl);
}

static inline void w_fly(bool to_sa, uint16_t lid, const uint8_t *mad)
{
	struct wflight *fl = calloc(1, sizeof(*fl));

	assert_non_null(fl);
	fl->to_sa = to_sa;
	fl->lid = lid;
	memcpy(fl->mad, mad, IMC_MAD_SIZE);
	imc_timer_init(&fl->timer, w_deliver);
	fl->next = WW->flights;
	WW->flights = fl;
	assert_int_equal(imc_timer_arm_in(WW->f.loop, &fl->timer, MAD_DELAY),
			 0);
}

static inline int w_tr_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct wport *p = ctx;

	assert_int_equal(len, IMC_MAD_SIZE);
	if (!p->mute)
		w_fly(true, p->lid, mad);
	return 0;
}

static inline void w_sa_send(void *ctx, const struct imc_sa_dest *to,
		      const uint8_t *mad, size_t len)
{
	(void)ctx;
	(void)len;
	if (w_port(to->dlid))
		w_fly(false, to->dlid, mad);
}

static const struct imc_sa_ops w_sa_ops = {
	.port_by_gid = fx_by_gid,
	.port_by_lid = fx_by_lid,
	.send = w_sa_send,
};

static inline void w_port_up(struct wport *p, uint64_t seed)
{
	struct imc_sa_transport tr = { w_tr_send, p };
	struct imc_sa_client_config cc;
	struct imc_mcast_config mc;

	p->mute = false;
	imc_sa_client_config_init(&cc);
	cc.timeout = 100 * MS;
	cc.max_timeout = 400 * MS;
	cc.retries = 3;
	cc.seed = seed;
	assert_int_equal(imc_sa_client_create(WW->f.loop, &tr, &cc, &p->c), 0);
	imc_mcast_config_init(&mc);
	mc.port_gid = fx_gid(p->lid);
	mc.rejoin_spread = 10 * MS;
	mc.seed = seed + 1;
	assert_int_equal(imc_mcast_create(WW->f.loop, p->c, &mc, NULL, &p->t),
			 0);
}

static inline void w_port_down(struct wport *p)
{
	imc_mcast_destroy(p->t);
	imc_sa_client_destroy(p->c);
	p->t = NULL;
	p->c = NULL;
}

static inline void w_log(void *ctx, enum imc_mcastd_log_level lvl, const char *msg)
{
	(void)ctx;
	if (getenv("IMC_MCASTD_TRACE"))
		printf("  log %s: %s\n", imc_mcastd_log_level_str(lvl), msg);
	snprintf(WW->log[WW->nlog % 64], sizeof(WW->log[0]), "%s", msg);
	WW->nlog++;
}

/* True when a log line since line `from` contains s. */
static inline bool w_logged(unsigned from, const char *s)
{
	for (unsigned i = from; i < WW->nlog; i++)
		if (strstr(WW->log[i % 64], s))
			return true;
	return false;
}

static inline void daemon_start(void)
{
	struct imc_mcastd_port_desc d = { 0 };
	struct wport *p = &WW->ports[0];

	w_port_up(p, 100 + WW->daemon_starts++);
	assert_int_equal(imc_mcastd_server_create(WW->f.loop, &WW->scfg,
						  &WW->srv), 0);
	d.gid = fx_gid(DLID);
	strcpy(d.device, "sim0");
	d.port_num = 1;
	assert_int_equal(imc_mcastd_server_add_port(WW->srv, &d, p->t, p->c),
			 0);
}

static inline void daemon_stats_keep(void)
{
	struct imc_mcastd_server_stats st;

	imc_mcastd_server_get_stats(WW->srv, &st);
	WW->audit_deletes += st.audit_deletes;
}

/* SIGKILL: no MAD leaves any more, sockets close, the SA keeps what it
 * had. */
static inline void daemon_kill(void)
{
	struct wport *p = &WW->ports[0];

	daemon_stats_keep();
	p->mute = true;
	imc_mcastd_server_destroy(WW->srv);
	WW->srv = NULL;
	w_port_down(p);
}

static inline void w_world_init(void)
{
	WW = calloc(1, sizeof(*WW));
	assert_non_null(WW);
	fx_init(&WW->f);
	WW->f.cfg.sm_key = 1;   /* requests with SM_Key 1 are trusted */
	assert_int_equal(imc_sa_create(WW->f.loop, &WW->f.cfg, &w_sa_ops, WW,
				       &WW->f.sa), 0);
	WW->ports[0].lid = DLID;
	WW->ports[1].lid = OLID;
	imc_timer_init(&WW->tick, NULL);
	imc_mcastd_server_config_init(&WW->scfg);
	WW->scfg.grace = 500 * MS;
	WW->scfg.ack_timeout = 200 * MS;
	WW->scfg.shutdown_timeout = 2000 * MS;
	WW->scfg.log = w_log;
	WW->uid = 1000;
	w_port_up(&WW->ports[1], 7);
}

static inline void w_world_fini(void)
{
	if (WW->srv) {
		daemon_stats_keep();
		imc_mcastd_server_destroy(WW->srv);
		WW->srv = NULL;
	}
	if (WW->ports[0].t)
		w_port_down(&WW->ports[0]);
	w_port_down(&WW->ports[1]);
	while (WW->flights) {
		struct wflight *fl = WW->flights;

		imc_timer_cancel(WW->f.loop, &fl->timer);
		WW->flights = fl->next;
		free(fl);
	}
	imc_timer_cancel(WW->f.loop, &WW->tick);
	fx_fini(&WW->f);
	free(WW);
	WW = NULL;
}

/* ---- clients ---- */

static inline imc_time_t w_clock(void *ctx)
{
	(void)ctx;
	return imc_loop_now(WW->f.loop);
}

/* The connect hook: a socketpair whose other end the daemon accepts;
 * refused while no daemon runs. */
static inline int w_connect(void *ctx, const char *path)
{
	struct imc_mcastd_cred cr = { 0 };
	int sv[2], r;

	(void)path;
	cr.uid = ctx ? *(unsigned *)ctx : WW->uid;
	cr.gid = cr.uid;
	if (!WW->srv)
		return -ECONNREFUSED;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	r = imc_mcastd_server_accept(WW->srv, sv[1], &cr, NULL);
	if (r < 0) {
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	return sv[0];
}

struct wclient {
	struct imc_mcastd *c;
	unsigned uid;
	/* QP ops record */
	unsigned attaches, detaches;
	int attach_result;
	/* SA JoinState of the daemon's port for the MGID at the last
	 * attach and detach (checks the order against the SA) */
	int js_at_attach, js_at_detach;
};

static inline int w_sa_js(const struct imc_gid *mgid, uint16_t lid);

static inline int w_attach(void *ctx, void *qp, const struct imc_gid *mgid,
		    uint16_t mlid)
{
	struct wclient *wc = ctx;

	(void)qp;
	(void)mlid;
	wc->attaches++;
	wc->js_at_attach = w_sa_js(mgid, DLID);
	return wc->attach_result;
}

static inline int w_detach(void *ctx, void *qp, const struct imc_gid *mgid,
		    uint16_t mlid)
{
	struct wclient *wc = ctx;

	(void)qp;
	(void)mlid;
	wc->detaches++;
	wc->js_at_detach = w_sa_js(mgid, DLID);
	return 0;
}

static inline void w_client_new(struct wclient *wc, uint64_t seed, bool wait)
{
	struct imc_mcastd_config cfg;

	imc_mcastd_config_init(&cfg);
	cfg.path = "sim";
	cfg.comm = "wclient";
	cfg.seed = seed;
	cfg.wait = wait;
	cfg.clock = w_clock;
	cfg.connect = w_connect;
	if (!wc->uid)
		wc->uid = WW->uid;
	cfg.connect_ctx = &wc->uid;
	cfg.ops.attach = w_attach;
	cfg.ops.detach = w_detach;
	cfg.ops.ctx = wc;
	WW->in_api = true;
	assert_int_equal(imc_mcastd_create(&cfg, &wc->c), 0);
	WW->in_api = false;
}

static inline void w_client_destroy(struct wclient *wc)
{
	WW->in_api = true;
	imc_mcastd_destroy(wc->c);
	WW->in_api = false;
	wc->c = NULL;
}

/* ---- running ---- */

static struct wclient **W_CLIENTS;
static size_t W_NCLIENTS;

static inline void w_set_clients(struct wclient **v, size_t n)
{
	W_CLIENTS = v;
	W_NCLIENTS = n;
}

/* Moves bytes until nothing moves: the daemon's sockets, then every
 * client's process(). */
static inline void w_pump(void)
{
	for (int rounds = 0; rounds < 100000; rounds++) {
		uint64_t before = 0, after = 0;
		int moved = 0;

		for (size_t i = 0; i < W_NCLIENTS; i++) {
			struct imc_mcastd_stats st;

			if (!W_CLIENTS[i]->c)
				continue;
			imc_mcastd_get_stats(W_CLIENTS[i]->c, &st);
			before += st.msgs_in + st.msgs_out + st.connects +
				  st.disconnects;
		}
		if (WW->srv)
			moved = imc_mcastd_server_io(WW->srv);
		for (size_t i = 0; i < W_NCLIENTS; i++) {
			struct imc_mcastd_stats st;

			if (!W_CLIENTS[i]->c)
				continue;
			(void)imc_mcastd_process(W_CLIENTS[i]->c);
			if (!W_CLIENTS[i]->c)
				continue;
			imc_mcastd_get_stats(W_CLIENTS[i]->c, &st);
			after += st.msgs_in + st.msgs_out + st.connects +
				 st.disconnects;
		}
		if (!moved && before == after)
			return;
	}
	fail_msg("the pump never settled");
}

static inline void w_tick(struct imc_timer *t)
{
	(void)t;
}

/* Runs the world (loop timers, sockets, clients) for t of virtual time. */
static inline void w_run_for(imc_time_t t)
{
	imc_time_t target = imc_loop_now(WW->f.loop) + t;

	WW->tick.cb = w_tick;
	for (;;) {
		imc_time_t next = target;

		w_pump();
		if (imc_loop_now(WW->f.loop) >= target)
			break;
		for (size_t i = 0; i < W_NCLIENTS; i++) {
			imc_time_t d;

			if (!W_CLIENTS[i]->c)
				continue;
			d = imc_mcastd_next_deadline(W_CLIENTS[i]->c);
			if (d < next)
				next = d;
		}
		if (next <= imc_loop_now(WW->f.loop))
			next = imc_loop_now(WW->f.loop);
		assert_int_equal(imc_timer_arm(WW->f.loop, &WW->tick, next),
				 0);
		assert_true(imc_loop_run_once(WW->f.loop) >= 0);
	}
	imc_timer_cancel(WW->f.loop, &WW->tick);
}

/* ---- the SA's view ---- */

struct js_walk {
	struct imc_gid port;
	int js;
};

static inline int js_member(void *arg, const struct imc_sa_member_info *m)
{
	struct js_walk *w = arg;

	if (imc_gid_equal(&m->port_gid, &w->port))
		w->js = m->join_state;
	return 0;
}

/* The JoinState the SA holds for port lid in group mgid; 0 for none. */
static inline int w_sa_js(const struct imc_gid *mgid, uint16_t lid)
{
	struct js_walk w = { .port = fx_gid(lid), .js = 0 };

	if (imc_sa_foreach_member(WW->f.sa, mgid, js_member, &w) < 0)
		return 0;
	return w.js;
}

struct count_walk {
	struct imc_gid port;
	unsigned n;
	struct imc_gid mgid;
};

static inline int cnt_member(void *arg, const struct imc_sa_member_info *m)
{
	struct count_walk *w = arg;

	if (imc_gid_equal(&m->port_gid, &w->port))
		w->n++;
	return 0;
}

static inline int cnt_group(void *arg, const struct imc_sa_group_info *g)
{
	struct count_walk *w = arg;

	w->mgid = g->rec.mgid;
	return imc_sa_foreach_member(WW->f.sa, &g->rec.mgid, cnt_member, w);
}

/* Memberships of port lid at the SA, all groups. */
static inline unsigned w_sa_memberships(uint16_t lid)
{
	struct count_walk w = { .port = fx_gid(lid) };

	assert_int_equal(imc_sa_foreach_group(WW->f.sa, cnt_group, &w), 0);
	return w.n;
}

#endif
