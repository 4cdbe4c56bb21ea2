/* The join tracker's events from outside: port state changes and SA
 * Reports (traps 66 and 67), and the groups the SA does not have. The
 * state tables are at the top of mcast.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "mcast/mcast_int.h"

/* ------------------------------------------------------------------ */
/* Port events. */

static void each_member(struct group *g,
			void (*fn)(struct imc_mcast_member *m))
{
	struct link done, *l;

	/* fn moves members between the two lists: walk a snapshot. */
	list_init(&done);
	list_splice(&done, &g->pending);
	list_splice(&done, &g->members);
	while (!list_empty(&done)) {
		struct imc_mcast_member *m;

		l = done.next;
		m = imc_container_of(l, struct imc_mcast_member, link);
		list_del(l);
		if (m->state == IMC_MCAST_PENDING ||
		    m->state == IMC_MCAST_REJOINING)
			list_add_tail(&g->pending, l);
		else
			list_add_tail(&g->members, l);
		fn(m);
	}
}

static void m_down(struct imc_mcast_member *m)
{
	if (m->state != IMC_MCAST_FAILED && m->state != IMC_MCAST_WAITING)
		mct_mstate(m, IMC_MCAST_WAITING, 0);
}

static void m_up(struct imc_mcast_member *m)
{
	if (m->state == IMC_MCAST_WAITING)
		mct_mstate(m, m->resume, 0);
}

static void m_rejoin(struct imc_mcast_member *m)
{
	if (m->state == IMC_MCAST_JOINED)
		mct_mstate(m, IMC_MCAST_REJOINING, 0);
}

static void port_down(struct imc_mcast *t)
{
	struct link *l;

	t->port = P_DOWN;
	mct_sub_reset(t);
	for (l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		/* The SA drops a port that goes away once the SM's sweep
		 * finds it gone (IBA 15.2.5.17); a flap shorter than the
		 * sweep leaves its memberships there, and a Set in flight
		 * may have been taken. So what the SA may hold stays, in
		 * doubt: at port up the wanted bits are joined again and
		 * the others deleted one by one (o15-0.1.14 refuses the
		 * Delete of a bit not held, which settles it too). Nothing
		 * is sent until then. */
		if ((g->state == G_SET || g->state == G_REJOIN) &&
		    !imc_gid_is_zero(&g->mgid))
			g->held |= g->req_bits;
		g->doubt = g->held;
		mct_group_stop(g);
		g->trigger = NULL;
		mct_gstate(g, G_DOWN);
		each_member(g, m_down);
		mct_mark_dirty(g); /* frees groups with nobody and nothing */
	}
}

static void port_up(struct imc_mcast *t)
{
	struct link *l;

	t->port = P_ACTIVE;
	mct_sub_reset(t);
	for (l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		each_member(g, m_up);
		if (want(g)) {
			mct_pace(g);
		} else {
			mct_gstate(g, G_IDLE);
			mct_mark_dirty(g);
		}
	}
}

/* Reregister (IBA 14.4.11), a new SM, a new P_Key table: the SA may have
 * lost or changed our memberships; every group is joined again with its
 * union of bits. */
static void port_rejoin(struct imc_mcast *t)
{
	struct link *l;

	/* Requests in flight carry on (their retries reach the SM the
	 * transport follows); the epoch tells their answers that a re-join
	 * must follow. Groups already paced keep their turn. */
	t->epoch++;
	for (l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		/* The SA may have lost anything: what is held is in doubt
		 * until the re-join's answer names the port's JoinState
		 * (a join that arrives meanwhile must not be answered
		 * from a bit the SA no longer has). */
		g->doubt = g->held;
		g->trigger = NULL;
		each_member(g, m_rejoin);
		if (g->state != G_IDLE)
			continue;
		if (want(g))
			mct_pace(g);
		else
			mct_mark_dirty(g);
	}
}

void imc_mcast_port_event(struct imc_mcast *t, enum imc_mcast_port_event ev)
{
	if (!t || (unsigned)ev >= IMC_ARRAY_SIZE(t->st.port_events))
		return;
	t->st.port_events[ev]++;
	switch (ev) {
	case IMC_MCAST_PORT_DOWN:
		if (t->port != P_DOWN)
			port_down(t);
		break;
	case IMC_MCAST_PORT_ACTIVE:
		if (t->port == P_DOWN)
			port_up(t);
		break;
	case IMC_MCAST_PORT_LID_CHANGE:
		/* PortGID is unchanged: the SA keys memberships by it. */
		break;
	case IMC_MCAST_PORT_SM_CHANGE:
	case IMC_MCAST_PORT_REREGISTER:
		if (t->port == P_ACTIVE)
			mct_sub_reset(t);
		/* fall through */
	case IMC_MCAST_PORT_PKEY_CHANGE:
		if (t->port == P_ACTIVE)
			port_rejoin(t);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Trap 67: the SA deleted a group (IBA 15.2.5.17: when its last full
 * member left, whichever port that was). */

static void sub_move(struct imc_mcast *t, enum sstate to)
{
	static const unsigned allowed[] = {
		[S_OFF] = 1u << S_SENDING,
		[S_SENDING] = 1u << S_ON | 1u << S_OFF,
		[S_ON] = 1u << S_OFF,
	};

	if (!(allowed[t->sub] & 1u << to))
		abort();
	t->sub = to;
}

static void on_sub(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct imc_mcast *t = arg;

	t->sub_q = NULL;
	mct_count_answer(t, err, ans);
	if (!err && !ans->status) {
		sub_move(t, S_ON);
		return;
	}
	sub_move(t, S_OFF);
	(void)imc_timer_arm_in(t->loop, &t->sub_timer, IMC_NSEC_PER_SEC);
}

/* InformInfo Set (IBA 13.4.8.3): generic trap 67 from any issuer, to
 * this port's QP1 (the SA takes the requester's address). */
void mct_sub_kick(struct imc_mcast *t)
{
	struct imc_inform_info ii;
	struct imc_sa_mad m;

	if (!t->sub_needed || t->sub != S_OFF || t->port != P_ACTIVE)
		return;
	memset(&ii, 0, sizeof(ii));
	ii.lid_range_begin = 0xffff;
	ii.is_generic = 1;
	ii.subscribe = 1;
	ii.type = 0xffff;
	ii.trap_number_or_device_id = IMC_TRAP_MCAST_GROUP_DELETED;
	ii.qpn = 1;
	ii.producer_type_or_vendor_id = 0xffffff;
	memset(&m, 0, sizeof(m));
	m.mad.method = UMAD_METHOD_SET;
	m.mad.attr_id = UMAD_ATTR_INFORM_INFO;
	if (imc_inform_info_pack(&ii, m.data, sizeof(m.data)) < 0 ||
	    imc_sa_query_start(t->sa, &m, on_sub, t, &t->sub_q) < 0) {
		(void)imc_timer_arm_in(t->loop, &t->sub_timer,
				       IMC_NSEC_PER_SEC);
		return;
	}
	imc_timer_cancel(t->loop, &t->sub_timer);
	t->st.mads_sent++;
	t->st.in_flight++;
	sub_move(t, S_SENDING);
}

void mct_on_sub_timer(struct imc_timer *tm)
{
	mct_sub_kick(imc_container_of(tm, struct imc_mcast, sub_timer));
}

/* The SA forgot the subscription, or will: subscribe again (from the
 * loop) when the port is up. */
void mct_sub_reset(struct imc_mcast *t)
{
	if (t->sub_q) {
		imc_sa_query_cancel(t->sub_q);
		t->sub_q = NULL;
		t->st.in_flight--;
	}
	imc_timer_cancel(t->loop, &t->sub_timer);
	if (t->sub != S_OFF)
		sub_move(t, S_OFF);
	if (t->sub_needed && t->port == P_ACTIVE)
		(void)imc_timer_arm(t->loop, &t->sub_timer,
				    imc_loop_now(t->loop));
}

void imc_mcast_report(struct imc_mcast *t, const struct imc_sa_mad *report)
{
	struct imc_notice n;
	struct imc_gid mgid;
	struct group *g;

	if (!t || !report || report->mad.attr_id != UMAD_ATTR_NOTICE ||
	    imc_notice_unpack(&n, report->data, sizeof(report->data)) < 0 ||
	    imc_notice_mcast_mgid(&n, &mgid) < 0 ||
	    n.trap_number_or_device_id != IMC_TRAP_MCAST_GROUP_DELETED)
		return;
	t->st.traps++;
	g = mct_group_find(t, &mgid);
	if (t->port != P_ACTIVE || !g || (!g->held && g->state == G_IDLE))
		return;
	/* What the port held there may be gone: its members re-join (a
	 * full member creates the group again; others are refused). The
	 * bits are in doubt, not dropped: a Report may come late (sent
	 * again after a lost ReportResp, IBA 13.4.8.2) and tell of a
	 * deletion older than the port's last join; the re-join's answer,
	 * or a refused Delete, tells what the SA holds. A request in
	 * flight may predate the deletion: after its answer, the group
	 * re-joins. Duplicates of the Report cost a re-join. */
	t->st.groups_lost++;
	mct_group_lost(g);
}

/* The SA may have deleted g with what the port held there: its members
 * re-join (a full member creates the group again; others are refused);
 * what is held is in doubt until the answers tell. */
void mct_group_lost(struct group *g)
{
	g->doubt = g->held;
	each_member(g, m_rejoin);
	switch (g->state) {
	case G_IDLE:
		if (want(g))
			mct_pace(g);
		else
			mct_mark_dirty(g);
		break;
	case G_SET:
	case G_DELETE:
	case G_REJOIN:
		g->epoch = STALE;
		break;
	case G_PACE:
	case G_WINDOW:
	case G_DOWN:
		break;
	}
}

void mct_on_report(void *arg, const struct imc_sa_mad *report)
{
	imc_mcast_report(arg, report);
}

