/* The server's listing (`ibmcast mcast show` through the daemon) and its
 * clean shutdown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mcastd/server_int.h"

struct show_walk {
	struct conn *c;
	struct port *p;
	uint32_t id;
};

static void on_group(void *arg, const struct imc_mcast_group_info *g)
{
	struct show_walk *w = arg;
	struct mcd_msg m = { .type = MCD_SHOW_GROUP };
	struct imc_mcastd_show_group *o = &m.u.show_group.g;

	m.u.show_group.id = w->id;
	o->port_gid = w->p->desc.gid;
	o->mgid = g->rec.mgid;
	o->mlid = g->rec.mlid;
	o->join_state = g->join_state;
	o->wanted = g->wanted;
	o->members = g->members;
	o->joined = g->joined;
	srv_send(w->c, &m);
}

static int show_client(struct conn *asker, struct conn *c, uint32_t id)
{
	struct mcd_msg m = { .type = MCD_SHOW_CLIENT };
	struct imc_mcastd_show_client *o = &m.u.show_client.cl;
	struct imc_mcastd_show_member *ms = NULL;
	size_t n = 0;

	if (c->members) {
		ms = calloc(c->members, sizeof(*ms));
		if (!ms)
			return -ENOMEM;
	}
	for (struct imc_list *l = c->mlist.next; l != &c->mlist;
	     l = l->next, n++) {
		struct member *x = srv_member_of(l);

		ms[n].handle = x->handle;
		ms[n].port_gid = x->port_gid;
		ms[n].mgid = x->mgid;
		ms[n].join_state = x->join_state;
		ms[n].state = x->state;
		ms[n].status = x->status;
	}
	m.u.show_client.id = id;
	o->pid = c->cr.pid;
	o->uid = c->cr.uid;
	o->gid = c->cr.gid;
	memcpy(o->comm, c->comm, sizeof(o->comm));
	o->self = c == asker;
	o->n_members = n;
	o->members = ms;
	srv_send(asker, &m);
	free(ms);
	return 0;
}

int srv_show(struct conn *asker, uint32_t id)
{
	struct imc_mcastd_server *s = asker->s;
	struct mcd_msg end = { .type = MCD_SHOW_END };
	int r = 0;

	for (struct port *p = s->ports; p; p = p->next) {
		struct mcd_msg m = { .type = MCD_SHOW_PORT };

		m.u.show_port.id = id;
		m.u.show_port.port.gid = p->desc.gid;
		memcpy(m.u.show_port.port.device, p->desc.device,
		       sizeof(p->desc.device));
		m.u.show_port.port.port_num = p->desc.port_num;
		srv_send(asker, &m);
	}
	for (struct imc_list *l = s->conns.next; l != &s->conns && !r;
	     l = l->next)
		r = show_client(asker, srv_conn_of(l), id);
	for (struct port *p = s->ports; p && !r; p = p->next) {
		struct show_walk w = { .c = asker, .p = p, .id = id };

		r = imc_mcast_foreach_group(p->t, on_group, &w);
	}
	end.u.show.id = id;
	end.u.show.status = r;
	srv_send(asker, &end);
	return 0;
}

/* ---- shutdown ---- */

static bool trackers_idle(struct imc_mcastd_server *s)
{
	for (struct port *p = s->ports; p; p = p->next) {
		struct imc_mcast_stats st;

		imc_mcast_get_stats(p->t, &st);
		if (st.members || st.groups || st.in_flight)
			return false;
	}
	return true;
}

void srv_on_shut_timer(struct imc_timer *t)
{
	struct imc_mcastd_server *s =
		imc_container_of(t, struct imc_mcastd_server, shut_timer);
	imc_time_t now = imc_loop_now(s->loop);
	int status;

	if (s->shut_done)
		return;
	if (!s->members && trackers_idle(s))
		status = 0;
	else if (now >= s->shut_deadline)
		status = -ETIMEDOUT;
	else {
		/* The SA's answers to the Deletes reach the trackers, not
		 * us: look again shortly. */
		(void)imc_timer_arm_in(s->loop, &s->shut_timer,
				       IMC_NSEC_PER_MSEC);
		return;
	}
	s->shut_done = true;
	srv_log(s, status ? IMC_MCASTD_LOG_WARN : IMC_MCASTD_LOG_INFO,
		"shutdown: %s", status ? "timed out with memberships left"
				       : "every member left, SA answered");
	s->done(s->done_arg, status);
}

void srv_check_shutdown(struct imc_mcastd_server *s)
{
	if (!s->shutting || s->shut_done || imc_timer_armed(&s->shut_timer))
		return;
	(void)imc_timer_arm(s->loop, &s->shut_timer, imc_loop_now(s->loop));
}

int imc_mcastd_server_shutdown(struct imc_mcastd_server *s,
			       void (*done)(void *arg, int status), void *arg)
{
	struct imc_list *cl, *ml;

	if (!s || !done)
		return -EINVAL;
	if (s->shutting)
		return -EALREADY;
	s->shutting = true;
	s->done = done;
	s->done_arg = arg;
	s->shut_deadline = imc_loop_now(s->loop) + s->cfg.shutdown_timeout;
	/* Bits held for a restart's grace period go with the rest. */
	for (struct port *p = s->ports; p; p = p->next)
		srv_audit_release(p);
	imc_list_foreach(cl, &s->conns) {
		struct conn *c = srv_conn_of(cl);

		imc_list_foreach(ml, &c->mlist)
			srv_revoke(srv_member_of(ml), -ESHUTDOWN);
	}
	srv_check_shutdown(s);
	return 0;
}
