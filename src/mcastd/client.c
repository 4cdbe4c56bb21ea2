/* Client of ibmcastd (mcastd.h).
 *
 * The connection:
 *
 *   state     event                                  next
 *   DOWN      backoff deadline, connect() works      HELLO (HELLO sent)
 *   DOWN      backoff deadline, connect() fails      DOWN (backoff doubled)
 *   HELLO     WELCOME                                UP (live joins sent)
 *   HELLO/UP  EOF, error, malformed message          DOWN (members told)
 *   HELLO     REFUSE                                 REFUSED (members fail)
 *
 * The fd the caller polls is an epoll instance holding the socket (and,
 * with the default clock, a timerfd for the backoff), so it stays the same
 * across reconnects. Handles are slots (lowest free first) plus a
 * generation per slot (proto.h).
 */
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcastd.h"
#include "ibmcast/rng.h"
#include "mcastd/proto.h"
#include "util/config.h"
#include "util/list.h"
#include "util/unix.h"
#include "util/vec.h"

enum cstate {
	C_DOWN,
	C_HELLO,
	C_UP,
	C_REFUSED,
};

struct attach {
	void *qp;
	struct imc_gid mgid;
	uint16_t mlid;
	unsigned refs;
};

struct imc_mcastd_member {
	struct imc_mcastd *c;
	uint32_t slot, gen;
	struct imc_mcastd_port port;
	struct imc_mcast_join_req req;
	imc_mcastd_cb cb;
	void *arg;
	enum imc_mcast_state state;
	bool sent;                 /* the daemon holds it on this connection */
	bool have_rec;
	struct imc_mcmr rec;
	struct attach *att;
};

struct show_req {
	uint32_t id;
	imc_mcastd_show_cb cb;
	void *arg;
	struct imc_list link;           /* c->shows, in the order asked */
	/* the answer, assembled */
	struct imc_mcastd_show_port *ports;
	struct imc_mcastd_show_client *clients;
	struct imc_mcastd_show_group *groups;
	size_t np, nc, ng;
	size_t np_cap, nc_cap, ng_cap;
};

struct imc_mcastd {
	struct imc_mcastd_config cfg;
	char *path, *comm;
	enum cstate state;
	int epfd, sock, tfd;
	struct mcd_buf in, out;
	struct imc_mcastd_member **slots;
	uint32_t *gens;
	uint32_t nslots, free_hint;
	size_t members;
	void *atts;                /* tsearch tree of struct attach */
	imc_time_t backoff, deadline;
	struct imc_rng rng;
	struct imc_list shows;          /* struct show_req, answered in order */
	uint32_t show_id;
	unsigned depth;            /* inside process() */
	bool dead;                 /* destroyed from a callback */
	int refusal;               /* REFUSED: the daemon's status */
	struct imc_loop *loop;
	struct imc_fd_watch w;
	struct imc_mcastd_stats st;
};

/* The one place the connection's state changes (table at the top). */
static void set_state(struct imc_mcastd *c, enum cstate to)
{
	static const unsigned ok[] = {
		[C_DOWN] = 1u << C_DOWN | 1u << C_HELLO,
		[C_HELLO] = 1u << C_UP | 1u << C_DOWN | 1u << C_REFUSED,
		[C_UP] = 1u << C_DOWN,
		[C_REFUSED] = 0,
	};

	if (!(ok[c->state] & 1u << to))
		abort();   /* a bug here, never input: table above */
	c->state = to;
}

void imc_mcastd_config_init(struct imc_mcastd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->backoff_min = 10 * IMC_NSEC_PER_MSEC;
	cfg->backoff_max = 2 * IMC_NSEC_PER_SEC;
}

static imc_time_t now(const struct imc_mcastd *c)
{
	struct timespec ts;

	if (c->cfg.clock)
		return c->cfg.clock(c->cfg.clock_ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (imc_time_t)ts.tv_sec * IMC_NSEC_PER_SEC +
	       (imc_time_t)ts.tv_nsec;
}

/* ---- attachments: one per (QP, MGID), counted by members ---- */

static int att_cmp(const void *a, const void *b)
{
	const struct attach *x = a, *y = b;

	if (x->qp != y->qp)
		return (uintptr_t)x->qp < (uintptr_t)y->qp ? -1 : 1;
	return imc_gid_cmp(&x->mgid, &y->mgid);
}

static void att_release(struct imc_mcastd_member *m)
{
	struct imc_mcastd *c = m->c;
	struct attach *a = m->att;

	if (!a)
		return;
	m->att = NULL;
	if (--a->refs)
		return;
	if (c->cfg.ops.detach &&
	    c->cfg.ops.detach(c->cfg.ops.ctx, a->qp, &a->mgid, a->mlid) < 0)
		c->st.detach_errors++;
	tdelete(a, &c->atts, att_cmp);
	free(a);
	c->st.attached--;
}

static bool receives(const struct imc_mcastd_member *m)
{
	/* IBA 15.2.5.17: only FullMember and NonMember receive. */
	return m->req.qp && (m->req.join_state & (IMC_JOIN_FULL | IMC_JOIN_NON));
}

/* Attaches m's QP to rec's group (once per QP and MGID), moving an
 * attachment to a new MLID. Returns 0 or the attach op's error. */
static int att_take(struct imc_mcastd_member *m, const struct imc_mcmr *rec)
{
	struct imc_mcastd *c = m->c;
	const struct imc_mcast_ops *ops = &c->cfg.ops;
	struct attach key = { .qp = m->req.qp, .mgid = rec->mgid }, *a, **p;
	int r;

	if (!receives(m))
		return 0;
	if (m->att && !imc_gid_equal(&m->att->mgid, &rec->mgid))
		att_release(m);
	p = tfind(&key, &c->atts, att_cmp);
	a = p ? *p : NULL;
	if (a && a->mlid != rec->mlid) {
		/* The group came back with a new MLID: the old one goes
		 * first, for every member sharing the attachment. */
		if (ops->detach &&
		    ops->detach(ops->ctx, a->qp, &a->mgid, a->mlid) < 0)
			c->st.detach_errors++;
		a->mlid = rec->mlid;
		r = ops->attach ? ops->attach(ops->ctx, a->qp, &a->mgid,
					      a->mlid) : 0;
		if (r < 0)
			c->st.attach_errors++;
	}
	if (m->att == a && a)
		return 0;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		*a = key;
		a->mlid = rec->mlid;
		r = ops->attach ? ops->attach(ops->ctx, a->qp, &a->mgid,
					      a->mlid) : 0;
		if (r < 0 || !tsearch(a, &c->atts, att_cmp)) {
			free(a);
			c->st.attach_errors++;
			return r < 0 ? r : -ENOMEM;
		}
		c->st.attached++;
	}
	a->refs++;
	m->att = a;
	return 0;
}

/* ---- output ---- */

static void sock_events(struct imc_mcastd *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (c->sock < 0)
		return;
	if (mcd_buf_used(&c->out))
		ev.events |= EPOLLOUT;
	ev.data.fd = c->sock;
	(void)epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->sock, &ev);
}

/* Writes what waits. Returns 0 or a negative errno (broken). */
static int flush(struct imc_mcastd *c)
{
	bool had = mcd_buf_used(&c->out);
	int r = had && c->sock >= 0 ? mcd_buf_send(&c->out, c->sock) : 0;

	if (r < 0 && r != -EAGAIN)
		return r;
	if (had)
		sock_events(c);
	return 0;
}

static void put(struct imc_mcastd *c, const struct mcd_msg *m)
{
	if (c->sock < 0)
		return;
	if (mcd_buf_put(&c->out, m) == 0)
		c->st.msgs_out++;
}

static uint64_t handle_of(const struct imc_mcastd_member *m)
{
	return (uint64_t)m->gen << 32 | m->slot;
}

static void send_join(struct imc_mcastd_member *m)
{
	struct mcd_msg msg = { .type = MCD_JOIN };

	msg.u.join.handle = handle_of(m);
	msg.u.join.port = m->port;
	msg.u.join.req = m->req;
	msg.u.join.req.qp = NULL;
	if (m->have_rec) {
		/* A re-join names the group the SA assigned. */
		msg.u.join.req.rec.mgid = m->rec.mgid;
	}
	put(m->c, &msg);
	m->sent = true;
	m->c->st.joins_sent++;
}

static void send_handle(struct imc_mcastd *c, uint16_t type, uint64_t h)
{
	struct mcd_msg msg = { .type = type };

	msg.u.leave.handle = h;
	put(c, &msg);
}

/* ---- connection ---- */

static void arm_backoff(struct imc_mcastd *c)
{
	imc_time_t d = c->backoff ? c->backoff : c->cfg.backoff_min;
	imc_time_t jitter = d / 4 ? imc_rng_next(&c->rng) % (d / 4) : 0;

	c->deadline = now(c) + d + jitter;
	c->backoff = d * 2 > c->cfg.backoff_max ? c->cfg.backoff_max : d * 2;
	if (c->tfd >= 0) {
		struct itimerspec its = { 0 };

		its.it_value.tv_sec = (time_t)(c->deadline / IMC_NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(c->deadline % IMC_NSEC_PER_SEC);
		(void)timerfd_settime(c->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	}
}

static int default_connect(const char *path)
{
	return imc_unix_connect(path, NULL);
}

static int try_connect(struct imc_mcastd *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct mcd_msg hello = { .type = MCD_HELLO };
	int fd;

	fd = c->cfg.connect ? c->cfg.connect(c->cfg.connect_ctx, c->path)
			    : default_connect(c->path);
	if (fd < 0)
		return fd;
	ev.data.fd = fd;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	c->sock = fd;
	set_state(c, C_HELLO);
	c->deadline = IMC_TIME_MAX;
	hello.u.hello.version = IMC_MCASTD_PROTO_VERSION;
	hello.u.hello.pid = (uint32_t)getpid();
	strncpy(hello.u.hello.comm, c->comm, IMC_MCASTD_COMMLEN - 1);
	put(c, &hello);
	/* A daemon that refused the connection may have closed it already:
	 * process() reads its REFUSE, or the EOF, and tells. */
	(void)flush(c);
	return 0;
}

static void close_sock(struct imc_mcastd *c)
{
	if (c->sock >= 0) {
		(void)epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->sock, NULL);
		close(c->sock);
	}
	c->sock = -1;
	c->in.off = c->in.len = 0;
	c->out.off = c->out.len = 0;
}

static void show_free(struct show_req *q)
{
	for (size_t i = 0; i < q->nc; i++)
		free((void *)q->clients[i].members);
	free(q->ports);
	free(q->clients);
	free(q->groups);
	free(q);
}

/* The oldest show request, taken off the queue; NULL when none. */
static struct show_req *show_take(struct imc_mcastd *c)
{
	struct show_req *q;

	if (imc_list_empty(&c->shows))
		return NULL;
	q = imc_list_entry(c->shows.next, struct show_req, link);
	imc_list_del(&q->link);
	return q;
}

/* Members of the lost daemon: JOINED ones are re-joining (their QPs stay
 * attached), every live one is sent again on reconnect. Returns false
 * when a callback destroyed c. */
static bool lost(struct imc_mcastd *c, int err)
{
	bool was_up = c->state == C_UP;

	close_sock(c);
	set_state(c, C_DOWN);
	c->st.disconnects++;
	arm_backoff(c);
	for (struct show_req *q; (q = show_take(c));) {
		q->cb(q->arg, -ECONNRESET, NULL);
		show_free(q);
		if (c->dead)
			return false;
	}
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct imc_mcastd_member *m = c->slots[i];
		struct imc_mcast_event ev = { .type = IMC_MCAST_EV_REJOINING };

		if (!m)
			continue;
		m->sent = false;
		if (m->state != IMC_MCAST_JOINED)
			continue;
		m->state = IMC_MCAST_REJOINING;
		m->cb(m->arg, m, &ev);
		if (c->dead)
			return false;
	}
	if (was_up && c->cfg.conn_cb) {
		c->cfg.conn_cb(c->cfg.conn_arg, false, err);
		if (c->dead)
			return false;
	}
	return true;
}

/* ---- input ---- */

static struct imc_mcastd_member *lookup(struct imc_mcastd *c, uint64_t h)
{
	uint32_t slot = (uint32_t)h;
	struct imc_mcastd_member *m = slot < c->nslots ? c->slots[slot] : NULL;

	return m && m->gen == (uint32_t)(h >> 32) ? m : NULL;
}

static void on_event(struct imc_mcastd *c, const struct mcd_msg *msg)
{
	struct imc_mcastd_member *m = lookup(c, msg->u.event.handle);
	struct imc_mcast_event ev = { .type = msg->u.event.ev,
				      .status = msg->u.event.status };

	if (!m || m->state == IMC_MCAST_FAILED)
		return;   /* left, or failed here first: stale */
	switch (ev.type) {
	case IMC_MCAST_EV_JOINED: {
		int r;

		m->rec = msg->u.event.rec;
		m->have_rec = true;
		r = att_take(m, &m->rec);
		if (r < 0) {
			/* The QP could not join: the member fails and the
			 * daemon gives its bits back (mcast.h, ops). */
			send_handle(c, MCD_LEAVE, handle_of(m));
			m->sent = false;
			ev.type = IMC_MCAST_EV_ERROR;
			ev.status = r;
			m->state = IMC_MCAST_FAILED;
			break;
		}
		m->state = IMC_MCAST_JOINED;
		ev.rec = &m->rec;
		break;
	}
	case IMC_MCAST_EV_ERROR:
		att_release(m);
		m->state = IMC_MCAST_FAILED;
		break;
	case IMC_MCAST_EV_REJOINING:
		m->state = IMC_MCAST_REJOINING;
		break;
	case IMC_MCAST_EV_WAITING:
		/* -ENOENT: the SA has no group, so no MLID to receive on;
		 * the daemon's tracker let the member's attachment go, and
		 * the QP, which is ours, must go too (mcast.h). A JOINED
		 * that follows the group's return attaches it again. Port
		 * down (0) keeps the QP attached. */
		if (ev.status == -ENOENT)
			att_release(m);
		m->state = IMC_MCAST_WAITING;
		break;
	}
	m->cb(m->arg, m, &ev);
}

static void on_revoke(struct imc_mcastd *c, const struct mcd_msg *msg)
{
	struct imc_mcastd_member *m = lookup(c, msg->u.revoke.handle);
	struct imc_mcast_event ev = { .type = IMC_MCAST_EV_ERROR,
				      .status = msg->u.revoke.status };
	bool was_failed;

	/* Detach first: the acknowledgement lets the Delete go. */
	if (m)
		att_release(m);
	send_handle(c, MCD_REVOKE_ACK, msg->u.revoke.handle);
	if (!m)
		return;
	was_failed = m->state == IMC_MCAST_FAILED;
	m->state = IMC_MCAST_FAILED;
	if (!was_failed)
		m->cb(m->arg, m, &ev);
}

static int show_add(struct show_req *q, const struct mcd_msg *msg)
{
	switch (msg->type) {
	case MCD_SHOW_PORT:
		if (IMC_VEC_RESERVE(&q->ports, &q->np_cap, q->np + 1))
			return -ENOMEM;
		q->ports[q->np++] = msg->u.show_port.port;
		return 0;
	case MCD_SHOW_GROUP:
		if (IMC_VEC_RESERVE(&q->groups, &q->ng_cap, q->ng + 1))
			return -ENOMEM;
		q->groups[q->ng++] = msg->u.show_group.g;
		return 0;
	default: {
		struct imc_mcastd_show_client cl = msg->u.show_client.cl;
		struct imc_mcastd_show_member *ms = NULL;

		if (IMC_VEC_RESERVE(&q->clients, &q->nc_cap, q->nc + 1))
			return -ENOMEM;
		if (cl.n_members) {
			ms = calloc(cl.n_members, sizeof(*ms));
			if (!ms)
				return -ENOMEM;
		}
		for (size_t i = 0; i < cl.n_members; i++)
			mcd_show_member(msg, i, &ms[i]);
		cl.members = ms;
		q->clients[q->nc++] = cl;
		return 0;
	}
	}
}

static int on_show(struct imc_mcastd *c, const struct mcd_msg *msg)
{
	struct show_req *q = imc_list_empty(&c->shows)
				     ? NULL
				     : imc_list_entry(c->shows.next,
						      struct show_req, link);
	struct imc_mcastd_show s;

	/* The daemon answers in order: parts of the head request only. */
	if (!q || msg->u.show.id != q->id)
		return -EPROTO;
	if (msg->type != MCD_SHOW_END)
		return show_add(q, msg);
	imc_list_del(&q->link);
	s.n_ports = q->np;
	s.ports = q->ports;
	s.n_clients = q->nc;
	s.clients = q->clients;
	s.n_groups = q->ng;
	s.groups = q->groups;
	q->cb(q->arg, msg->u.show.status, msg->u.show.status ? NULL : &s);
	show_free(q);
	return 0;
}

static void refused(struct imc_mcastd *c, const struct mcd_msg *msg)
{
	/* The daemon's reason as it gave it (a negative errno), or a
	 * protocol error for anything else. */
	c->refusal = msg->u.refuse.status < 0 && msg->u.refuse.status > -4096 ?
		     msg->u.refuse.status : -EPROTO;
	close_sock(c);
	set_state(c, C_REFUSED);
	c->deadline = IMC_TIME_MAX;
	for (uint32_t i = 0; i < c->nslots && !c->dead; i++) {
		struct imc_mcastd_member *m = c->slots[i];
		struct imc_mcast_event ev = { .type = IMC_MCAST_EV_ERROR,
					      .status = c->refusal };

		if (!m || m->state == IMC_MCAST_FAILED)
			continue;
		att_release(m);
		m->state = IMC_MCAST_FAILED;
		m->cb(m->arg, m, &ev);
	}
}

/* One message from the daemon. Returns 0 or -EPROTO (unexpected). */
static int dispatch(struct imc_mcastd *c, const struct mcd_msg *msg)
{
	if (c->state == C_HELLO && msg->type != MCD_WELCOME &&
	    msg->type != MCD_REFUSE)
		return -EPROTO;
	switch (msg->type) {
	case MCD_WELCOME:
		if (c->state != C_HELLO)
			return -EPROTO;
		set_state(c, C_UP);
		c->backoff = 0;
		c->st.connects++;
		for (uint32_t i = 0; i < c->nslots; i++)
			if (c->slots[i] &&
			    c->slots[i]->state != IMC_MCAST_FAILED)
				send_join(c->slots[i]);
		if (c->cfg.conn_cb)
			c->cfg.conn_cb(c->cfg.conn_arg, true, 0);
		return 0;
	case MCD_REFUSE:
		if (c->state != C_HELLO)
			return -EPROTO;   /* only an answer to the hello */
		refused(c, msg);
		return 0;
	case MCD_EVENT:
		on_event(c, msg);
		return 0;
	case MCD_REVOKE:
		on_revoke(c, msg);
		return 0;
	case MCD_SHOW_PORT:
	case MCD_SHOW_CLIENT:
	case MCD_SHOW_GROUP:
	case MCD_SHOW_END:
		return on_show(c, msg);
	default:
		return -EPROTO;
	}
}

/* Reads and dispatches until the socket would block. Returns 0, or a
 * negative errno when the connection broke. */
static int input(struct imc_mcastd *c)
{
	for (;;) {
		uint8_t *p = mcd_buf_reserve(&c->in, 65536);
		ssize_t n;

		if (!p)
			return -ENOMEM;
		n = recv(c->sock, p, 65536, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		c->in.len += (size_t)n;
		for (;;) {
			const uint8_t *b = c->in.p + c->in.off;
			struct mcd_msg msg;
			int f = mcd_frame(b, mcd_buf_used(&c->in),
					  MCD_MAX_FROM_DAEMON);

			if (f == 0)
				break;
			if (f < 0 || mcd_decode(&msg, b, (size_t)f) < 0)
				return -EPROTO;
			mcd_buf_consume(&c->in, (size_t)f);
			c->st.msgs_in++;
			if (dispatch(c, &msg) < 0)
				return -EPROTO;
			if (c->dead || c->sock < 0)
				return 0;
		}
	}
}

static void free_all(struct imc_mcastd *c);

int imc_mcastd_process(struct imc_mcastd *c)
{
	int r = 0;

	c->depth++;
	if (c->tfd >= 0) {
		uint64_t x;

		(void)!read(c->tfd, &x, sizeof(x));
	}
	if (c->state == C_DOWN && now(c) >= c->deadline) {
		r = try_connect(c);
		if (r < 0) {
			close_sock(c);
			set_state(c, C_DOWN);
			arm_backoff(c);
		}
	}
	if (c->sock >= 0) {
		r = input(c);
		if (!r && !c->dead)
			r = flush(c);
		if (r < 0 && !c->dead)
			(void)lost(c, r);
	}
	if (c->state == C_REFUSED)
		r = c->refusal;
	if (--c->depth == 0 && c->dead)
		free_all(c);
	return r;
}

imc_time_t imc_mcastd_next_deadline(const struct imc_mcastd *c)
{
	return c->state == C_DOWN ? c->deadline : IMC_TIME_MAX;
}

bool imc_mcastd_connected(const struct imc_mcastd *c)
{
	return c->state == C_UP;
}

int imc_mcastd_fd(const struct imc_mcastd *c)
{
	return c->epfd;
}

/* ---- create, destroy ---- */

static void read_self_comm(char *out)
{
	FILE *f = fopen("/proc/self/comm", "re");

	out[0] = '\0';
	if (f) {
		if (fgets(out, IMC_MCASTD_COMMLEN, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
	for (char *p = out; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

int imc_mcastd_create(const struct imc_mcastd_config *cfg,
		      struct imc_mcastd **out)
{
	struct imc_mcastd_config def;
	struct imc_mcastd *c;
	int r;

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_mcastd_config_init);
	if (!out || !cfg->backoff_min ||
	    cfg->backoff_max < cfg->backoff_min)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->sock = c->tfd = -1;
	imc_list_init(&c->shows);
	c->path = strdup(cfg->path ? cfg->path : IMC_MCASTD_SOCKET_DEFAULT);
	c->comm = calloc(1, IMC_MCASTD_COMMLEN);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!c->path || !c->comm || c->epfd < 0) {
		r = c->epfd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	if (cfg->comm)
		strncpy(c->comm, cfg->comm, IMC_MCASTD_COMMLEN - 1);
	else
		read_self_comm(c->comm);
	for (char *p = c->comm; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	imc_rng_seed(&c->rng, cfg->seed);
	if (!cfg->clock) {
		struct epoll_event ev = { .events = EPOLLIN };

		c->tfd = timerfd_create(CLOCK_MONOTONIC,
					TFD_NONBLOCK | TFD_CLOEXEC);
		if (c->tfd < 0) {
			r = -errno;
			goto fail;
		}
		ev.data.fd = c->tfd;
		if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->tfd, &ev) < 0) {
			r = -errno;
			goto fail;
		}
	}
	r = try_connect(c);
	if (r < 0) {
		close_sock(c);
		set_state(c, C_DOWN);
		if (!cfg->wait)
			goto fail;
		arm_backoff(c);
	}
	*out = c;
	return 0;
fail:
	if (c->tfd >= 0)
		close(c->tfd);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c->path);
	free(c->comm);
	free(c);
	return r;
}

static void free_all(struct imc_mcastd *c)
{
	imc_mcastd_loop_detach(c);
	for (struct show_req *q; (q = show_take(c));)
		show_free(q);
	close_sock(c);
	if (c->tfd >= 0)
		close(c->tfd);
	close(c->epfd);
	mcd_buf_free(&c->in);
	mcd_buf_free(&c->out);
	free(c->slots);
	free(c->gens);
	free(c->path);
	free(c->comm);
	free(c);
}

void imc_mcastd_destroy(struct imc_mcastd *c)
{
	if (!c || c->dead)
		return;
	/* QPs first: the daemon leaves the members when the socket
	 * closes, and its Deletes must find them detached. */
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct imc_mcastd_member *m = c->slots[i];

		if (!m)
			continue;
		att_release(m);
		c->slots[i] = NULL;
		free(m);
	}
	c->members = 0;
	close_sock(c);
	c->dead = true;
	if (!c->depth)
		free_all(c);
}

/* ---- members ---- */

static int slot_alloc(struct imc_mcastd *c, uint32_t *out)
{
	uint32_t i = c->free_hint;

	while (i < c->nslots && c->slots[i])
		i++;
	if (i == c->nslots) {
		uint32_t n = c->nslots ? 2 * c->nslots : 16;

		if (IMC_VEC_RESIZE(&c->slots, n) || IMC_VEC_RESIZE(&c->gens, n))
			return -ENOMEM;
		memset(c->slots + c->nslots, 0,
		       (n - c->nslots) * sizeof(*c->slots));
		memset(c->gens + c->nslots, 0,
		       (n - c->nslots) * sizeof(*c->gens));
		c->nslots = n;
	}
	c->free_hint = i + 1;
	*out = i;
	return 0;
}

int imc_mcastd_join(struct imc_mcastd *c, const struct imc_mcastd_port *port,
		    const struct imc_mcast_join_req *req, imc_mcastd_cb cb,
		    void *arg, struct imc_mcastd_member **out)
{
	struct imc_mcastd_member *m;
	uint32_t slot;

	if (!c || !req || !cb || !out || !req->join_state ||
	    req->join_state > 0xf ||
	    (!imc_gid_is_zero(&req->rec.mgid) &&
	     !imc_gid_is_multicast(&req->rec.mgid)) ||
	    (port && !memchr(port->device, 0, sizeof(port->device))))
		return -EINVAL;
	if (c->state == C_REFUSED)
		return c->refusal;
	m = calloc(1, sizeof(*m));
	if (!m || slot_alloc(c, &slot)) {
		free(m);
		return -ENOMEM;
	}
	m->c = c;
	m->slot = slot;
	m->gen = ++c->gens[slot];
	if (port)
		m->port = *port;
	m->req = *req;
	m->cb = cb;
	m->arg = arg;
	m->state = IMC_MCAST_PENDING;
	c->slots[slot] = m;
	c->members++;
	c->st.joins++;
	if (c->state == C_UP) {
		send_join(m);
		if (!c->depth && flush(c) < 0) {
			/* process() sees the broken socket and tells. */
		}
	}
	*out = m;
	return 0;
}

void imc_mcastd_leave(struct imc_mcastd_member *m)
{
	struct imc_mcastd *c;

	if (!m)
		return;
	c = m->c;
	/* Detach before the daemon hears of it: its Delete follows. */
	att_release(m);
	if (m->sent && c->state == C_UP) {
		send_handle(c, MCD_LEAVE, handle_of(m));
		if (!c->depth)
			(void)flush(c);
	}
	c->slots[m->slot] = NULL;
	if (m->slot < c->free_hint)
		c->free_hint = m->slot;
	c->members--;
	c->st.leaves++;
	free(m);
}

enum imc_mcast_state imc_mcastd_member_state(const struct imc_mcastd_member *m)
{
	return m->state;
}

const struct imc_mcmr *imc_mcastd_member_rec(const struct imc_mcastd_member *m)
{
	return m->have_rec ? &m->rec : NULL;
}

int imc_mcastd_show(struct imc_mcastd *c, imc_mcastd_show_cb cb, void *arg)
{
	struct mcd_msg msg = { .type = MCD_SHOW };
	struct show_req *q;

	if (!c || !cb)
		return -EINVAL;
	if (c->state != C_UP)
		return -ENOTCONN;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->id = ++c->show_id;
	q->cb = cb;
	q->arg = arg;
	imc_list_add_tail(&c->shows, &q->link);
	msg.u.show.id = q->id;
	put(c, &msg);
	if (!c->depth)
		(void)flush(c);
	return 0;
}

void imc_mcastd_get_stats(const struct imc_mcastd *c,
			  struct imc_mcastd_stats *st)
{
	*st = c->st;
	st->members = c->members;
}

/* ---- imc_loop ---- */

static void on_loop_fd(struct imc_fd_watch *w, unsigned events)
{
	struct imc_mcastd *c = imc_container_of(w, struct imc_mcastd, w);

	(void)events;
	(void)imc_mcastd_process(c);
}

int imc_mcastd_loop_attach(struct imc_mcastd *c, struct imc_loop *loop)
{
	int r;

	if (!c || !loop || c->loop)
		return -EINVAL;
	if (imc_loop_is_virtual(loop))
		return -EOPNOTSUPP;
	imc_fd_watch_init(&c->w, c->epfd, on_loop_fd);
	r = imc_loop_watch_fd(loop, &c->w, IMC_EV_READ);
	if (r < 0)
		return r;
	c->loop = loop;
	return 0;
}

void imc_mcastd_loop_detach(struct imc_mcastd *c)
{
	if (!c || !c->loop)
		return;
	(void)imc_loop_unwatch_fd(c->loop, &c->w);
	c->loop = NULL;
}
