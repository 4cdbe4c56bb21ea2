/* Server core of ibmcastd (mcastd_server.h): connections, their handles
 * and members in the ports' trackers, limits, authorization, revocation
 * and clean shutdown. The restart audit is in audit.c.
 *
 * A connection (one function changes its state, conn_set_state()):
 *
 *   state     event                                  next
 *   HELLO     HELLO with IMC_MCASTD_PROTO_VERSION     OPEN
 *   HELLO     other version                          GONE (REFUSE sent)
 *   any       malformed, oversized, EOF, error       GONE
 *   OPEN      revoke a member (shutdown, policy)     DRAINING
 *   DRAINING  every revoke acknowledged              OPEN
 *   DRAINING  ack timeout                            GONE
 *
 * GONE leaves the connection's tracker members at once, closes the
 * socket and frees the connection. Handles are slots in a per-connection
 * array (proto.h), so a client names only its own members and a lookup
 * is O(1); the array never grows past the member limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ibmcast/gid.h"
#include "mcastd/server_int.h"
#include "util/config.h"

/* A client that reads nothing gets closed once this much waits for it. */
#define OUT_MAX (16u << 20)
/* Bytes read per readiness callback, so that one client cannot starve
 * the others. */
#define READ_BUDGET (256u << 10)
/* One read: about 120 JOIN frames. */
#define READ_CHUNK 16384u

static void conn_close(struct conn *c, const char *why);

void srv_log(struct imc_mcastd_server *s, enum imc_mcastd_log_level lvl,
	     const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!s->cfg.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->cfg.log(s->cfg.ctx, lvl, line);
}

const char *imc_mcastd_log_level_str(enum imc_mcastd_log_level l)
{
	static const char *const n[] = { "error", "warning", "info",
					 "debug" };

	return (unsigned)l < IMC_ARRAY_SIZE(n) ? n[l] : "?";
}

void imc_mcastd_server_config_init(struct imc_mcastd_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->limits.members = 4096;
	cfg->limits.in_flight = 256;
	cfg->limits.max_msg = 4096;
	cfg->limits.conns_per_uid = 64;
	cfg->limits.conns = 1024;
	cfg->grace = 5 * IMC_NSEC_PER_SEC;
	cfg->ack_timeout = 2 * IMC_NSEC_PER_SEC;
	cfg->shutdown_timeout = 5 * IMC_NSEC_PER_SEC;
}

/* ---- connections per uid: a tree (search.h) of counters ---- */

struct uidcount {
	uint32_t uid;
	unsigned n;
};

static int uid_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct uidcount *)a)->uid;
	uint32_t y = ((const struct uidcount *)b)->uid;

	return x < y ? -1 : x > y;
}

static struct uidcount *uid_get(struct imc_mcastd_server *s, uint32_t uid,
				bool add)
{
	struct uidcount key = { .uid = uid }, *u, **p;

	p = tfind(&key, &s->uids, uid_cmp);
	if (p || !add)
		return p ? *p : NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	p = tsearch(u, &s->uids, uid_cmp);
	if (!p) {
		free(u);
		return NULL;
	}
	return u;
}

static void uid_put(struct imc_mcastd_server *s, uint32_t uid)
{
	struct uidcount key = { .uid = uid }, *u;
	struct uidcount **p = tfind(&key, &s->uids, uid_cmp);

	if (!p)
		return;
	u = *p;
	if (--u->n == 0) {
		tdelete(&key, &s->uids, uid_cmp);
		free(u);
	}
}

/* ---- output ---- */

static void flush_later(struct conn *c)
{
	struct imc_mcastd_server *s = c->s;

	if (c->flush_queued || !mcd_buf_used(&c->out))
		return;
	c->flush_queued = true;
	c->flush_next = s->flush_head;
	s->flush_head = c;
	if (!imc_timer_armed(&s->flush_timer))
		(void)imc_timer_arm(s->loop, &s->flush_timer,
				    imc_loop_now(s->loop));
}

void srv_send(struct conn *c, const struct mcd_msg *m)
{
	if (c->state == CONN_GONE)
		return;
	if (mcd_buf_used(&c->out) > OUT_MAX || mcd_buf_put(&c->out, m)) {
		c->broken = true;   /* closed by the next flush */
	} else {
		c->s->st.msgs_out++;
	}
	flush_later(c);
	if (c->broken && !c->flush_queued) {
		c->flush_queued = true;
		c->flush_next = c->s->flush_head;
		c->s->flush_head = c;
		(void)imc_timer_arm(c->s->loop, &c->s->flush_timer,
				    imc_loop_now(c->s->loop));
	}
}

static void want_write(struct conn *c, bool on)
{
	unsigned ev = IMC_EV_READ | (on ? IMC_EV_WRITE : 0);

	if (!imc_fd_watch_active(&c->w) || c->w.events == ev)
		return;
	(void)imc_loop_watch_fd(c->s->loop, &c->w, ev);
}

/* Writes what waits. Returns 0, or -EPIPE when the connection broke (the
 * caller closes it). */
static int flush(struct conn *c)
{
	int r;

	if (c->broken)
		return -EPIPE;
	r = mcd_buf_send(&c->out, c->fd);
	if (r < 0 && r != -EAGAIN)
		return -EPIPE;
	want_write(c, r == -EAGAIN);
	return 0;
}

static void on_flush_timer(struct imc_timer *t)
{
	struct imc_mcastd_server *s =
		imc_container_of(t, struct imc_mcastd_server, flush_timer);

	while (s->flush_head) {
		struct conn *c = s->flush_head;

		s->flush_head = c->flush_next;
		c->flush_queued = false;
		if (flush(c))
			conn_close(c, "write failed");
	}
}

/* ---- connection state ---- */

static void conn_set_state(struct conn *c, enum conn_state to)
{
	static const unsigned ok[] = {
		[CONN_HELLO] = 1u << CONN_OPEN | 1u << CONN_GONE,
		[CONN_OPEN] = 1u << CONN_DRAINING | 1u << CONN_GONE,
		[CONN_DRAINING] = 1u << CONN_OPEN | 1u << CONN_GONE,
		[CONN_GONE] = 0,
	};

	if (!(ok[c->state] & 1u << to))
		abort();   /* a bug here, never input: table above */
	c->state = to;
}

static void member_unlink(struct member *m)
{
	struct conn *c = m->c;

	imc_list_del(&m->link);
	c->slots[m->slot] = NULL;
	c->members--;
}

/* The last revoked member of c is settled: c stops draining. */
static void revokes_done(struct conn *c)
{
	imc_timer_cancel(c->s->loop, &c->ack_timer);
	if (c->state == CONN_DRAINING)
		conn_set_state(c, CONN_OPEN);
}

/* Drops m: out of the tracker (the Delete follows when it held the
 * port's last copy of some bits) and freed. */
static void member_free(struct member *m)
{
	struct conn *c = m->c;

	if (m->tm) {
		/* Left before its acknowledgement came: settled too. */
		if (m->revoked && c->revokes && --c->revokes == 0 &&
		    c->state != CONN_GONE)
			revokes_done(c);
		imc_mcast_leave(m->tm);
		m->tm = NULL;
		c->s->st.leaves++;
		c->s->members--;
	}
	if (!m->answered && c->in_flight)
		c->in_flight--;
	member_unlink(m);
	free(m);
}

static void conn_close(struct conn *c, const char *why)
{
	struct imc_mcastd_server *s = c->s;

	if (c->state == CONN_GONE)
		return;
	srv_log(s, IMC_MCASTD_LOG_INFO,
		"client %u (pid %u uid %u %s): %s; leaving its %u members",
		c->id, c->cr.pid, c->cr.uid, c->comm, why, c->members);
	conn_set_state(c, CONN_GONE);
	while (!imc_list_empty(&c->mlist))
		member_free(srv_member_of(c->mlist.next));
	(void)imc_loop_unwatch_fd(s->loop, &c->w);
	imc_timer_cancel(s->loop, &c->ack_timer);
	close(c->fd);
	uid_put(s, c->cr.uid);
	imc_list_del(&c->link);
	s->nconns--;
	if (c->flush_queued) {
		struct conn **p = &s->flush_head;

		while (*p != c)
			p = &(*p)->flush_next;
		*p = c->flush_next;
	}
	mcd_buf_free(&c->in);
	mcd_buf_free(&c->out);
	free(c->slots);
	free(c);
	srv_check_shutdown(s);
}

static void on_ack_timer(struct imc_timer *t)
{
	struct conn *c = imc_container_of(t, struct conn, ack_timer);

	srv_log(c->s, IMC_MCASTD_LOG_WARN,
		"client %u (pid %u): %u revoked members not acknowledged",
		c->id, c->cr.pid, c->revokes);
	c->s->st.closed_error++;
	conn_close(c, "revocation not acknowledged in time");
}

/* ---- members ---- */

static void send_event(struct member *m, enum imc_mcast_event_type ev,
		       int status, const struct imc_mcmr *rec)
{
	struct mcd_msg msg = { .type = MCD_EVENT };

	msg.u.event.handle = m->handle;
	msg.u.event.ev = (uint8_t)ev;
	msg.u.event.state = (uint8_t)m->state;
	msg.u.event.status = status;
	if (rec)
		msg.u.event.rec = *rec;
	srv_send(m->c, &msg);
}

/* Completes m's join request when this event is its first answer. */
static void answered(struct member *m, enum imc_mcast_event_type ev)
{
	if (m->answered ||
	    (ev != IMC_MCAST_EV_JOINED && ev != IMC_MCAST_EV_ERROR))
		return;
	m->answered = true;
	m->c->in_flight--;
}

static void refuse(struct member *m, int status)
{
	m->state = IMC_MCAST_FAILED;
	m->status = status;
	answered(m, IMC_MCAST_EV_ERROR);
	send_event(m, IMC_MCAST_EV_ERROR, status, NULL);
}

static void on_tracker(void *arg, struct imc_mcast_member *tm,
		       const struct imc_mcast_event *ev)
{
	struct member *m = arg;

	if (m->revoked)
		return;   /* the client is detaching: it hears nothing more */
	m->state = imc_mcast_member_state(tm);
	if (ev->type == IMC_MCAST_EV_JOINED && ev->rec) {
		m->mgid = ev->rec->mgid;
		m->mlid = ev->rec->mlid;
	}
	if (ev->type == IMC_MCAST_EV_ERROR)
		m->status = ev->status;
	answered(m, ev->type);
	send_event(m, ev->type, ev->status, ev->rec);
}

static struct port *port_find(struct imc_mcastd_server *s,
			      const struct imc_mcastd_port *want)
{
	if (!imc_gid_is_zero(&want->gid)) {
		for (struct port *p = s->ports; p; p = p->next)
			if (imc_gid_equal(&p->desc.gid, &want->gid))
				return p;
		return NULL;
	}
	if (want->device[0]) {
		for (struct port *p = s->ports; p; p = p->next)
			if (!strcmp(p->desc.device, want->device) &&
			    p->desc.port_num == want->port_num)
				return p;
		return NULL;
	}
	return s->ports && !s->ports->next ? s->ports : NULL;
}

static int slot_make(struct conn *c, uint32_t slot)
{
	uint32_t n = c->nslots ? c->nslots : 16;
	struct member **p;

	if (slot < c->nslots)
		return 0;
	while (n <= slot)
		n *= 2;
	if (n > c->s->cfg.limits.members)
		n = c->s->cfg.limits.members;
	p = realloc(c->slots, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + c->nslots, 0, (n - c->nslots) * sizeof(*p));
	c->slots = p;
	c->nslots = n;
	return 0;
}

static const char *gid_str(const struct imc_gid *g, char buf[IMC_GID_STRLEN])
{
	imc_gid_format(g, buf);
	return buf;
}

/* Everything between a member in its slot and a tracker member. */
static void member_start(struct member *m, const struct imc_mcastd_port *pw,
			 struct imc_mcast_join_req *req)
{
	struct conn *c = m->c;
	struct imc_mcastd_server *s = c->s;
	char g[IMC_GID_STRLEN];
	int r;

	if (s->shutting)
		return refuse(m, -ESHUTDOWN);
	m->p = port_find(s, pw);
	if (!m->p)
		return refuse(m, -ENODEV);
	m->port_gid = m->p->desc.gid;
	if (c->in_flight > s->cfg.limits.in_flight) {
		s->st.limited++;
		srv_log(s, IMC_MCASTD_LOG_WARN,
			"client %u (pid %u uid %u): %u joins in flight, "
			"refusing more", c->id, c->cr.pid, c->cr.uid,
			s->cfg.limits.in_flight);
		return refuse(m, -EAGAIN);
	}
	if (s->cfg.authorize) {
		r = s->cfg.authorize(s->cfg.ctx, &c->cr, &m->p->desc, req);
		if (r) {
			s->st.denied++;
			srv_log(s, IMC_MCASTD_LOG_WARN,
				"client %u (pid %u uid %u %s): join of %s "
				"JoinState 0x%x refused: %s", c->id, c->cr.pid,
				c->cr.uid, c->comm,
				gid_str(&req->rec.mgid, g), req->join_state,
				strerror(r < 0 ? -r : EACCES));
			return refuse(m, r < 0 ? r : -EACCES);
		}
	}
	r = imc_mcast_join(m->p->t, req, on_tracker, m, &m->tm);
	if (r) {
		m->tm = NULL;
		return refuse(m, r);
	}
	s->st.joins++;
	s->members++;
}

static int on_join(struct conn *c, const struct mcd_msg *msg)
{
	struct imc_mcastd_server *s = c->s;
	uint32_t slot = (uint32_t)msg->u.join.handle;
	struct imc_mcast_join_req req = msg->u.join.req;
	struct member *m;

	if (slot >= s->cfg.limits.members) {
		struct member tmp = { .c = c, .handle = msg->u.join.handle,
				      .answered = true,
				      .state = IMC_MCAST_FAILED };

		s->st.limited++;
		srv_log(s, IMC_MCASTD_LOG_WARN,
			"client %u (pid %u uid %u): member limit %u reached",
			c->id, c->cr.pid, c->cr.uid, s->cfg.limits.members);
		send_event(&tmp, IMC_MCAST_EV_ERROR, -EDQUOT, NULL);
		return 0;
	}
	if (slot_make(c, slot))
		return -ENOMEM;
	if (c->slots[slot])
		return -EPROTO;   /* a live handle named twice */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->c = c;
	m->slot = slot;
	m->handle = msg->u.join.handle;
	m->mgid = req.rec.mgid;
	m->join_state = req.join_state;
	m->req_rec = req.rec;
	m->comp_mask = req.comp_mask;
	m->state = IMC_MCAST_PENDING;
	imc_list_add_tail(&c->mlist, &m->link);
	c->slots[slot] = m;
	c->members++;
	c->in_flight++;
	member_start(m, &msg->u.join.port, &req);
	return 0;
}

static struct member *member_get(struct conn *c, uint64_t handle)
{
	uint32_t slot = (uint32_t)handle;
	struct member *m = slot < c->nslots ? c->slots[slot] : NULL;

	return m && m->handle == handle ? m : NULL;
}

static void on_leave(struct conn *c, uint64_t handle)
{
	struct member *m = member_get(c, handle);

	/* A handle the daemon never kept (refused over the member limit)
	 * or already dropped: nothing of the client's to do. */
	if (m)
		member_free(m);
}

static void on_revoke_ack(struct conn *c, uint64_t handle)
{
	struct member *m = member_get(c, handle);

	if (!m || !m->revoked || !m->tm)
		return;
	/* The client detached: now the Delete may follow. */
	imc_mcast_leave(m->tm);
	m->tm = NULL;
	c->s->st.leaves++;
	c->s->members--;
	m->state = IMC_MCAST_FAILED;
	if (--c->revokes == 0)
		revokes_done(c);
	srv_check_shutdown(c->s);
}

void srv_revoke(struct member *m, int status)
{
	struct conn *c = m->c;
	struct mcd_msg msg = { .type = MCD_REVOKE };

	if (!m->tm || m->revoked)
		return;
	m->revoked = true;
	m->status = status;
	answered(m, IMC_MCAST_EV_ERROR);
	c->revokes++;
	c->s->st.revoked++;
	if (c->state == CONN_OPEN)
		conn_set_state(c, CONN_DRAINING);
	if (!imc_timer_armed(&c->ack_timer))
		(void)imc_timer_arm_in(c->s->loop, &c->ack_timer,
				       c->s->cfg.ack_timeout);
	msg.u.revoke.handle = m->handle;
	msg.u.revoke.status = status;
	srv_send(c, &msg);
}

/* ---- input ---- */

/* Returns 0, or -EPROTONOSUPPORT once REFUSE is on its way (the caller
 * closes the connection). */
static int on_hello(struct conn *c, const struct mcd_msg *msg)
{
	struct mcd_msg out = { .type = MCD_WELCOME };

	if (msg->u.hello.version != IMC_MCASTD_PROTO_VERSION) {
		struct mcd_msg r = { .type = MCD_REFUSE };

		r.u.refuse.status = -EPROTONOSUPPORT;
		r.u.refuse.version = IMC_MCASTD_PROTO_VERSION;
		snprintf(r.u.refuse.text, sizeof(r.u.refuse.text),
			 "protocol version %u is not supported: this daemon "
			 "speaks version %u", msg->u.hello.version,
			 IMC_MCASTD_PROTO_VERSION);
		srv_send(c, &r);
		(void)flush(c);
		srv_log(c->s, IMC_MCASTD_LOG_WARN, "client %u (pid %u): %s",
			c->id, c->cr.pid, r.u.refuse.text);
		return -EPROTONOSUPPORT;
	}
	if (!c->comm[0])
		memcpy(c->comm, msg->u.hello.comm, sizeof(c->comm));
	conn_set_state(c, CONN_OPEN);
	out.u.welcome.version = IMC_MCASTD_PROTO_VERSION;
	out.u.welcome.client_id = c->id;
	srv_send(c, &out);
	return 0;
}

/* Handles one decoded message. Returns 0, or a negative errno that
 * closes the connection (it is then still to be closed by the caller). */
static int handle(struct conn *c, const struct mcd_msg *msg)
{
	if (c->state == CONN_HELLO) {
		if (msg->type != MCD_HELLO)
			return -EPROTO;
		return on_hello(c, msg);
	}
	switch (msg->type) {
	case MCD_JOIN:
		return on_join(c, msg);
	case MCD_LEAVE:
		on_leave(c, msg->u.leave.handle);
		return 0;
	case MCD_REVOKE_ACK:
		on_revoke_ack(c, msg->u.leave.handle);
		return 0;
	case MCD_SHOW:
		return srv_show(c, msg->u.show.id);
	default:
		return -EPROTO;   /* HELLO again, or a daemon's message */
	}
}

/* Frames and handles what c->in holds. Returns the number of messages,
 * or -1 when c was closed. */
static int consume(struct conn *c)
{
	struct imc_mcastd_server *s = c->s;
	int done = 0;

	for (;;) {
		const uint8_t *p = c->in.p + c->in.off;
		struct mcd_msg msg;
		int n = mcd_frame(p, mcd_buf_used(&c->in),
				  s->cfg.limits.max_msg);
		int r;

		if (n == 0)
			return done;
		if (n > 0)
			n = (r = mcd_decode(&msg, p, (size_t)n)) ? r : n;
		if (n < 0) {
			s->st.closed_error++;
			srv_log(s, IMC_MCASTD_LOG_WARN,
				"client %u (pid %u uid %u): %s message; "
				"closing it", c->id, c->cr.pid, c->cr.uid,
				n == -EMSGSIZE ? "oversized" : "malformed");
			conn_close(c, n == -EMSGSIZE ? "oversized message"
						     : "malformed message");
			return -1;
		}
		mcd_buf_consume(&c->in, (size_t)n);
		s->st.msgs_in++;
		done++;
		r = handle(c, &msg);
		if (r == -EPROTONOSUPPORT) {
			s->st.closed_error++;
			conn_close(c, "unsupported protocol version");
			return -1;
		}
		if (r) {
			s->st.closed_error++;
			srv_log(s, IMC_MCASTD_LOG_WARN,
				"client %u (pid %u uid %u): bad %s: %s; "
				"closing it", c->id, c->cr.pid, c->cr.uid,
				mcd_type_str(msg.type), strerror(-r));
			conn_close(c, "protocol error");
			return -1;
		}
	}
}

/* Reads up to the budget. Returns the messages handled, or -1 when c was
 * closed. */
static int conn_read(struct conn *c)
{
	size_t got = 0;
	int done = 0;

	while (got < READ_BUDGET) {
		uint8_t *p = mcd_buf_reserve(&c->in, READ_CHUNK);
		ssize_t n;
		int r;

		if (!p) {
			conn_close(c, "out of memory");
			return -1;
		}
		n = recv(c->fd, p, READ_CHUNK, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->s->st.closed_eof++;
			conn_close(c, n == 0 ? "closed" : strerror(errno));
			return -1;
		}
		c->in.len += (size_t)n;
		got += (size_t)n;
		r = consume(c);
		if (r < 0)
			return -1;
		done += r;
	}
	return done;
}

static void on_fd(struct imc_fd_watch *w, unsigned events)
{
	struct conn *c = imc_container_of(w, struct conn, w);

	if (events & (IMC_EV_READ | IMC_EV_ERROR)) {
		if (conn_read(c) < 0)
			return;
	}
	if (flush(c))
		conn_close(c, "write failed");
}

int imc_mcastd_server_io(struct imc_mcastd_server *s)
{
	struct imc_list *l, *nx;
	int total = 0;

	imc_list_foreach_safe(l, nx, &s->conns) {
		struct conn *c = srv_conn_of(l);
		int r;

		r = conn_read(c);
		if (r < 0) {
			total++;
			continue;
		}
		total += r;
		if (mcd_buf_used(&c->out))
			total++;
		if (flush(c))
			conn_close(c, "write failed");
	}
	return total;
}

/* ---- server ---- */

int imc_mcastd_server_create(struct imc_loop *loop,
			     const struct imc_mcastd_server_config *cfg,
			     struct imc_mcastd_server **out)
{
	struct imc_mcastd_server_config def;
	struct imc_mcastd_server *s;

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_mcastd_server_config_init);
	if (!loop || !out || !cfg->limits.members ||
	    !cfg->limits.in_flight || !cfg->limits.conns ||
	    !cfg->limits.conns_per_uid ||
	    cfg->limits.max_msg < MCD_MAX_FROM_CLIENT_MIN)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->cfg = *cfg;
	imc_list_init(&s->conns);
	imc_timer_init(&s->flush_timer, on_flush_timer);
	imc_timer_init(&s->shut_timer, srv_on_shut_timer);
	*out = s;
	return 0;
}

void imc_mcastd_server_destroy(struct imc_mcastd_server *s)
{
	if (!s)
		return;
	while (!imc_list_empty(&s->conns))
		conn_close(srv_conn_of(s->conns.next), "daemon stopping");
	imc_timer_cancel(s->loop, &s->flush_timer);
	imc_timer_cancel(s->loop, &s->shut_timer);
	while (s->ports) {
		struct port *p = s->ports;

		s->ports = p->next;
		srv_audit_stop(p);
		free(p);
	}
	tdestroy(s->uids, free);
	free(s);
}

int imc_mcastd_server_add_port(struct imc_mcastd_server *s,
			       const struct imc_mcastd_port_desc *desc,
			       struct imc_mcast *t, struct imc_sa_client *sa)
{
	struct port *p, **tail = &s->ports;

	if (!s || !desc || !t || imc_gid_is_zero(&desc->gid) ||
	    memchr(desc->device, 0, sizeof(desc->device)) == NULL)
		return -EINVAL;
	for (; *tail; tail = &(*tail)->next)
		if (imc_gid_equal(&(*tail)->desc.gid, &desc->gid))
			return -EEXIST;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->s = s;
	p->desc = *desc;
	p->t = t;
	p->sa = sa;
	*tail = p;
	s->nports++;
	if (sa)
		srv_audit_start(p);
	return 0;
}

static void read_comm(uint32_t pid, char comm[IMC_MCASTD_COMMLEN])
{
	char path[64];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	if (!pid)
		return;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, IMC_MCASTD_COMMLEN - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	comm[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (comm[i] == '\n' || (unsigned char)comm[i] < 0x20 ||
		    (unsigned char)comm[i] > 0x7e)
			comm[i] = comm[i] == '\n' ? '\0' : '?';
}

/* Tells a connection refused at accept why, best effort (the socket is
 * new: its buffer takes one frame), before the caller closes it. */
static void refuse_conn(struct imc_mcastd_server *s, int fd,
			const struct imc_mcastd_cred *cr, const char *why)
{
	struct mcd_msg r = { .type = MCD_REFUSE };
	uint8_t buf[MCD_HDR + 8 + MCD_TEXT_MAX];
	size_t n;

	s->st.refused++;
	r.u.refuse.status = -EUSERS;
	r.u.refuse.version = IMC_MCASTD_PROTO_VERSION;
	snprintf(r.u.refuse.text, sizeof(r.u.refuse.text),
		 "connection refused: %s (uid %u)", why, cr->uid);
	n = mcd_encode(&r, buf);
	(void)!send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	srv_log(s, IMC_MCASTD_LOG_WARN, "pid %u: %s", cr->pid,
		r.u.refuse.text);
}

int imc_mcastd_server_accept(struct imc_mcastd_server *s, int fd,
			     const struct imc_mcastd_cred *cr,
			     struct imc_mcastd_conn **out)
{
	struct uidcount *u;
	struct conn *c;
	int fl;

	if (!s || fd < 0 || !cr)
		return -EINVAL;
	if (s->shutting)
		return -ESHUTDOWN;
	u = uid_get(s, cr->uid, false);
	if (s->nconns >= s->cfg.limits.conns ||
	    (u && u->n >= s->cfg.limits.conns_per_uid)) {
		refuse_conn(s, fd, cr, s->nconns >= s->cfg.limits.conns ?
			    "too many clients" :
			    "too many connections of this uid");
		return -EUSERS;
	}
	c = calloc(1, sizeof(*c));
	u = uid_get(s, cr->uid, true);
	if (!c || !u) {
		free(c);
		return -ENOMEM;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	u->n++;
	c->s = s;
	imc_list_init(&c->mlist);
	c->fd = fd;
	c->cr = *cr;
	if (c->cr.n_groups > IMC_MCASTD_MAX_GROUPS)
		c->cr.n_groups = IMC_MCASTD_MAX_GROUPS;
	c->id = ++s->next_id;
	c->state = CONN_HELLO;
	read_comm(cr->pid, c->comm);
	imc_timer_init(&c->ack_timer, on_ack_timer);
	imc_fd_watch_init(&c->w, fd, on_fd);
	if (!imc_loop_is_virtual(s->loop)) {
		int r = imc_loop_watch_fd(s->loop, &c->w, IMC_EV_READ);

		if (r < 0) {
			uid_put(s, cr->uid);
			free(c);
			return r;
		}
	}
	imc_list_add_tail(&s->conns, &c->link);
	s->nconns++;
	s->st.accepted++;
	srv_log(s, IMC_MCASTD_LOG_DEBUG, "client %u: pid %u uid %u gid %u",
		c->id, cr->pid, cr->uid, cr->gid);
	if (out)
		*out = (struct imc_mcastd_conn *)c;
	return 0;
}

unsigned imc_mcastd_server_reauthorize(struct imc_mcastd_server *s)
{
	struct imc_list *cl, *ml;
	unsigned n = 0;

	if (!s->cfg.authorize)
		return 0;
	imc_list_foreach(cl, &s->conns) {
		struct conn *c = srv_conn_of(cl);

		imc_list_foreach(ml, &c->mlist) {
			struct member *m = srv_member_of(ml);
			struct imc_mcast_join_req req = { 0 };
			char g[IMC_GID_STRLEN];
			int r;

			if (!m->tm || m->revoked)
				continue;
			req.rec = m->req_rec;
			req.comp_mask = m->comp_mask;
			req.join_state = m->join_state;
			r = s->cfg.authorize(s->cfg.ctx, &c->cr, &m->p->desc,
					     &req);
			if (!r)
				continue;
			srv_log(s, IMC_MCASTD_LOG_WARN,
				"client %u (pid %u uid %u): member of %s no "
				"longer allowed: revoking", c->id, c->cr.pid,
				c->cr.uid, gid_str(&m->mgid, g));
			srv_revoke(m, r < 0 ? r : -EACCES);
			n++;
		}
	}
	return n;
}

void imc_mcastd_server_get_stats(const struct imc_mcastd_server *s,
				 struct imc_mcastd_server_stats *st)
{
	*st = s->st;
	st->conns = s->nconns;
	st->members = s->members;
}
