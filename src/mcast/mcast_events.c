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
	struct imc_list done, *l;

	/* fn moves members between the two lists: walk a snapshot. */
	imc_list_init(&done);
	imc_list_splice(&done, &g->pending);
	imc_list_splice(&done, &g->members);
	while (!imc_list_empty(&done)) {
		struct imc_mcast_member *m;

		l = done.next;
		m = imc_container_of(l, struct imc_mcast_member, link);
		imc_list_del(l);
		if (m->state == IMC_MCAST_PENDING ||
		    m->state == IMC_MCAST_REJOINING)
			imc_list_add_tail(&g->pending, l);
		else
			imc_list_add_tail(&g->members, l);
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

static void g_down(struct group *g)
{
	/* The SA drops a port that goes away once the SM's sweep finds it
	 * gone (IBA 15.2.5.17); a flap shorter than the sweep leaves its
	 * memberships there, and a Set in flight may have been taken. So
	 * what the SA may hold stays, in doubt: at port up the wanted bits
	 * are joined again and the others deleted one by one (o15-0.1.14
	 * refuses the Delete of a bit not held, which settles it too).
	 * Nothing is sent until then. */
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

static void g_up(struct group *g)
{
	each_member(g, m_up);
	if (want(g)) {
		mct_pace(g);
	} else {
		mct_gstate(g, G_IDLE);
		mct_mark_dirty(g);
	}
}

/* Reregister (IBA 14.4.11), a new SM, a new P_Key table: the SA may have
 * lost or changed our memberships; every group is joined again with its
 * union of bits. */
static void g_rejoin(struct group *g)
{
	/* The SA may have lost anything: what is held is in doubt until
	 * the re-join's answer names the port's JoinState (a join that
	 * arrives meanwhile must not be answered from a bit the SA no
	 * longer has). */
	g->doubt = g->held;
	g->trigger = NULL;
	each_member(g, m_rejoin);
	if (g->state == G_ABSENT) {
		/* The SA the port has now may have the group (no trap 66
		 * tells of a group that exists). */
		mct_absent_retry(g, g->t->cfg.rejoin_spread);
		return;
	}
	if (g->state != G_IDLE)
		return;
	if (want(g))
		mct_pace(g);
	else
		mct_mark_dirty(g);
}

/* Every group through fn; a group fn marks dirty is freed later, at the
 * dirty list's turn, so the walk goes on from it. */
static void each_group(struct imc_mcast *t, void (*fn)(struct group *g))
{
	for (struct imc_list *l = t->all.next; l != &t->all; l = l->next)
		fn(imc_container_of(l, struct group, all));
}

/* The port goes down or up: subscriptions start over (the SA forgets
 * them with the port) and every group follows. */
static void port_to(struct imc_mcast *t, enum pstate p,
		    void (*fn)(struct group *g))
{
	t->port = p;
	mct_sub_reset(t);
	each_group(t, fn);
}

void imc_mcast_port_event(struct imc_mcast *t, enum imc_mcast_port_event ev)
{
	if (!t || (unsigned)ev >= IMC_ARRAY_SIZE(t->st.port_events))
		return;
	t->st.port_events[ev]++;
	switch (ev) {
	case IMC_MCAST_PORT_DOWN:
		if (t->port != P_DOWN)
			port_to(t, P_DOWN, g_down);
		break;
	case IMC_MCAST_PORT_ACTIVE:
		if (t->port == P_DOWN)
			port_to(t, P_ACTIVE, g_up);
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
		if (t->port == P_ACTIVE) {
			/* Requests in flight carry on (their retries reach
			 * the SM the transport follows); the epoch tells
			 * their answers that a re-join must follow. Groups
			 * already paced keep their turn. */
			t->epoch++;
			each_group(t, g_rejoin);
		}
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Subscriptions: trap 67, the SA deleted a group (IBA 15.2.5.17: when
 * its last full member left, whichever port that was); trap 66, the SA
 * created one (IBA 13.4.8, o13-17.1.1). One InformInfo for every group
 * of each trap: OpenSM compares a non-zero InformInfo GID with the
 * Notice's IssuerGID (the SM's port), never with the MGID the Notice
 * carries (osm_inform.c), so a subscription per MGID would hear
 * nothing. */

static void sub_move(struct sub *s, enum sstate to)
{
	static const unsigned allowed[] = {
		[S_OFF] = 1u << S_SENDING,
		[S_SENDING] = 1u << S_ON | 1u << S_OFF,
		[S_ON] = 1u << S_OFF | 1u << S_CANCELING,
		[S_CANCELING] = 1u << S_OFF,
	};

	if (!(allowed[s->state] & 1u << to))
		abort();
	s->state = to;
}

static bool sub_needed(const struct sub *s)
{
	const struct imc_mcast *t = s->t;

	if (s->trap == IMC_TRAP_MCAST_GROUP_DELETED)
		return t->sub_needed;
	return t->n_absent > 0;
}

/* Subscribed to trap 67 after a join without a full bit was answered
 * (the InformInfo Set went first but was retried, or the SA changed): a
 * deletion before the subscription went unheard, so such groups re-join
 * and learn what the SA holds. */
static void check_unheard(struct imc_mcast *t)
{
	for (struct imc_list *l = t->all.next; l != &t->all; l = l->next) {
		struct group *g = imc_container_of(l, struct group, all);

		if (g->state == G_IDLE && sure(g) && !(g->held & FULL_BITS)) {
			t->st.groups_lost++;
			mct_group_lost(g);
		}
	}
}

static void on_sub(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct sub *s = arg;
	struct imc_mcast *t = s->t;

	s->q = NULL;
	mct_count_answer(t, err, ans);
	if (s->state == S_CANCELING) {
		sub_move(s, S_OFF);
		mct_sub_kick(s); /* needed again meanwhile? */
		return;
	}
	if (!err && !ans->status) {
		sub_move(s, S_ON);
		if (s->trap == IMC_TRAP_MCAST_GROUP_DELETED)
			check_unheard(t);
		mct_sub_kick(s); /* not needed any more meanwhile? */
		return;
	}
	sub_move(s, S_OFF);
	(void)imc_timer_arm_in(t->loop, &s->timer, IMC_NSEC_PER_SEC);
}

/* InformInfo Set (IBA 13.4.8.3): generic trap s->trap from any issuer,
 * to this port's QP1 (the SA takes the requester's address); Subscribe 0
 * with the same fields ends it. */
static int sub_send(struct sub *s, bool subscribe)
{
	struct imc_mcast *t = s->t;
	struct imc_inform_info ii;
	struct imc_sa_mad m;

	memset(&ii, 0, sizeof(ii));
	ii.lid_range_begin = 0xffff;
	ii.is_generic = 1;
	ii.subscribe = subscribe;
	ii.type = 0xffff;
	ii.trap_number_or_device_id = s->trap;
	ii.qpn = 1;
	ii.producer_type_or_vendor_id = 0xffffff;
	memset(&m, 0, sizeof(m));
	m.mad.method = UMAD_METHOD_SET;
	m.mad.attr_id = UMAD_ATTR_INFORM_INFO;
	if (imc_inform_info_pack(&ii, m.data, sizeof(m.data)) < 0 ||
	    imc_sa_query_start(t->sa, &m, on_sub, s, &s->q) < 0)
		return -ENOMEM;
	imc_timer_cancel(t->loop, &s->timer);
	t->st.mads_sent++;
	t->st.in_flight++;
	return 0;
}

/* Subscribes when needed and off, ends a trap 66 subscription nobody
 * needs; otherwise waits for the request in flight. */
void mct_sub_kick(struct sub *s)
{
	struct imc_mcast *t = s->t;
	bool need = sub_needed(s);

	if (t->port != P_ACTIVE || !t->cfg.subscribe)
		return;
	if (need && s->state == S_OFF) {
		if (sub_send(s, true) < 0)
			(void)imc_timer_arm_in(t->loop, &s->timer,
					       IMC_NSEC_PER_SEC);
		else
			sub_move(s, S_SENDING);
	} else if (!need && s->state == S_ON &&
		   s->trap == IMC_TRAP_MCAST_GROUP_CREATED) {
		if (sub_send(s, false) < 0)
			sub_move(s, S_OFF); /* the SA keeps it: harmless */
		else
			sub_move(s, S_CANCELING);
	}
}

static void on_sub_timer(struct imc_timer *tm)
{
	mct_sub_kick(imc_container_of(tm, struct sub, timer));
}

void mct_subs_init(struct imc_mcast *t)
{
	struct sub *v[2] = { &t->deleted, &t->created };

	t->deleted.trap = IMC_TRAP_MCAST_GROUP_DELETED;
	t->created.trap = IMC_TRAP_MCAST_GROUP_CREATED;
	for (unsigned i = 0; i < 2; i++) {
		v[i]->t = t;
		v[i]->state = S_OFF;
		imc_timer_init(&v[i]->timer, on_sub_timer);
	}
}

static void sub_stop(struct sub *s)
{
	struct imc_mcast *t = s->t;

	if (s->q) {
		imc_sa_query_cancel(s->q);
		s->q = NULL;
		t->st.in_flight--;
	}
	imc_timer_cancel(t->loop, &s->timer);
	if (s->state != S_OFF)
		sub_move(s, S_OFF);
}

void mct_subs_stop(struct imc_mcast *t)
{
	sub_stop(&t->deleted);
	sub_stop(&t->created);
}

/* The SA forgot the subscriptions, or will: subscribe again (from the
 * loop) when the port is up. */
void mct_sub_reset(struct imc_mcast *t)
{
	mct_subs_stop(t);
	if (t->port != P_ACTIVE)
		return;
	if (sub_needed(&t->deleted))
		(void)imc_timer_arm(t->loop, &t->deleted.timer,
				    imc_loop_now(t->loop));
	if (sub_needed(&t->created))
		(void)imc_timer_arm(t->loop, &t->created.timer,
				    imc_loop_now(t->loop));
}

/* Trap 66: the SA created the group. Members waiting for it join now
 * (paced: every port that waits hears it at once). A port that holds
 * only non-full bits there had lost them (the group was gone before it
 * was created: a trap 67 went unheard): it re-joins. A late Report (sent again after a lost ReportResp, IBA
 * 13.4.8.2) costs a re-join. */
static void group_created(struct group *g)
{
	switch (g->state) {
	case G_ABSENT:
		/* Every port that waits for this group hears the Report at
		 * once: paced, over a quarter of the spread. The spread is
		 * sized for a reregister, every group of every port (three
		 * per port in the join storm study, docs/performance.md);
		 * a Report moves one group's waiters, and a quarter keeps
		 * 10,000 of them at the study's SA rate (40,000/s). */
		mct_absent_retry(g, g->t->cfg.rejoin_spread / 4);
		break;
	case G_PROBE:
		g->epoch = STALE; /* its answer may predate the creation */
		break;
	case G_IDLE:
		if (sure(g) && !(g->held & FULL_BITS)) {
			g->t->st.groups_lost++;
			mct_group_lost(g);
		}
		break;
	default:
		break;
	}
}

void imc_mcast_report(struct imc_mcast *t, const struct imc_sa_mad *report)
{
	struct imc_notice n;
	struct imc_gid mgid;
	struct group *g;
	uint16_t trap;

	if (!t || !report || report->mad.attr_id != UMAD_ATTR_NOTICE ||
	    imc_notice_unpack(&n, report->data, sizeof(report->data)) < 0 ||
	    imc_notice_mcast_mgid(&n, &mgid) < 0)
		return;
	trap = n.trap_number_or_device_id;
	if (trap == IMC_TRAP_MCAST_GROUP_CREATED) {
		t->st.traps_created++;
		g = mct_group_find(t, &mgid);
		if (t->port == P_ACTIVE && g)
			group_created(g);
		return;
	}
	if (trap != IMC_TRAP_MCAST_GROUP_DELETED)
		return;
	t->st.traps++;
	g = mct_group_find(t, &mgid);
	if (t->port != P_ACTIVE || !g || g->state == G_ABSENT ||
	    (!g->held && g->state == G_IDLE))
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
	case G_PROBE:
		g->epoch = STALE;
		break;
	case G_PACE:
	case G_WINDOW:
	case G_DOWN:
	case G_ABSENT:
		break;
	}
}

void mct_on_report(void *arg, const struct imc_sa_mad *report)
{
	imc_mcast_report(arg, report);
}


/* ------------------------------------------------------------------ */
/* Groups the SA does not have. A Set with no full bit (neither
 * FullMember nor SendOnlyFullMember) does not create a group (IBA
 * 15.2.5.17, o15-0.1.9): to a group that is gone, OpenSM and the SA
 * engine answer REQ_INVALID (0x0200), the status of a template that does
 * not fit as well. A Get of the MGID tells them apart: NO_RECORDS
 * (0x0300) says the group is gone, and its members wait (WAITING,
 * -ENOENT) for trap 66 or the fallback timer instead of failing. */

/* Fallback for a lost trap 66: 1 s, doubled per try to 32 s, plus up to
 * a rejoin_spread of jitter, so ports that wait for one group do not ask
 * in step. */
#define ABSENT_RETRY_BASE IMC_NSEC_PER_SEC
#define ABSENT_BACKOFF_MAX 5
/* A probe that finds the group lets the Set go again once (the group may
 * have been created between the refusal and the Get); found again, the
 * refusal stands. */
#define PROBE_FOUND_MAX 1

static void absent_enter(struct group *g);

static void on_probe(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct group *g = arg;
	struct imc_mcast *t = g->t;
	bool stale = g->epoch != t->epoch;
	struct imc_mcmr rec;
	uint16_t st = ans ? ans->status : 0;

	g->q = NULL;
	mct_count_answer(t, err, ans);
	mct_gstate(g, G_IDLE);
	if (stale) {
		/* Sent before a reregister, an SM change or a creation:
		 * ask the SA the port has now. */
	} else if (!err && imc_sa_status_code(st) == UMAD_SA_STATUS_NO_RECORDS) {
		g->trigger = NULL;
		absent_enter(g);
		return;
	} else if (g->probe_verify) {
		/* The group exists (or no answer: the audit, a trap or a
		 * re-join will tell): what is held stays. */
		mct_reconcile(g, true);
		return;
	} else if (!err && !st && g->probe_found < PROBE_FOUND_MAX &&
		   imc_mcmr_unpack(&rec, ans->data, ans->len) >= 0 &&
		   imc_gid_equal(&rec.mgid, &g->mgid)) {
		g->probe_found++;
	} else if (err && g->probe_rejoin) {
		/* Unanswered: as an unanswered re-join, paced again. */
	} else {
		mct_refused(g, g->probe_status, g->probe_by_rec);
		g->trigger = NULL;
		mct_reconcile(g, true);
		return;
	}
	g->trigger = NULL;
	if (g->probe_rejoin && want(g))
		mct_pace(g);
	else
		mct_reconcile(g, true);
}

/* Get(MCMemberRecord) by MGID, as a port that is not trusted asks it
 * (no PortGID: the group's record, IBA 15.2.5.17). */
static int probe_send(struct group *g)
{
	struct imc_mcmr rec;

	memset(&rec, 0, sizeof(rec));
	rec.mgid = g->mgid;
	if (mct_send_mcmr(g, UMAD_METHOD_GET, &rec, CM(MGID), on_probe) < 0)
		return -EAGAIN;
	mct_gstate(g, G_PROBE);
	return 0;
}

/* After the refusal of a Set (status), when the refusal may mean that
 * the group is gone: the Get. Returns 0 when it went out (the group is
 * PROBE), else -EAGAIN (the refusal stands). */
int mct_probe(struct group *g, uint16_t status, bool rejoin, bool by_rec)
{
	if (imc_sa_status_code(status) != UMAD_SA_STATUS_REQ_INVALID ||
	    (g->req_bits & FULL_BITS) || imc_gid_is_zero(&g->mgid) ||
	    (!by_rec && !g->trigger) || g->state != G_IDLE)
		return -EAGAIN;
	g->probe_status = status;
	g->probe_rejoin = rejoin;
	g->probe_by_rec = by_rec;
	g->probe_verify = false;
	return probe_send(g);
}

/* A Delete refused: does the group still exist? The same Get; when it
 * does, nothing changes. Returns 0 when it went out (PROBE). */
int mct_verify(struct group *g)
{
	if (imc_gid_is_zero(&g->mgid) || g->state != G_IDLE)
		return -EAGAIN;
	g->probe_verify = true;
	g->probe_rejoin = false;
	g->probe_by_rec = false;
	g->probe_status = 0;
	return probe_send(g);
}

static void m_absent(struct imc_mcast_member *m)
{
	if (m->state == IMC_MCAST_PENDING || m->state == IMC_MCAST_JOINED ||
	    m->state == IMC_MCAST_REJOINING) {
		m->g->t->st.waits++;
		mct_mstate(m, IMC_MCAST_WAITING, -ENOENT);
	}
}

/* The SA has no group of g's MGID: nothing is held there; its members
 * wait. A member that joined meanwhile with a full bit creates it. */
static void absent_enter(struct group *g)
{
	struct imc_mcast *t = g->t;
	imc_time_t delay;

	g->held = g->doubt = 0;
	g->probe_found = 0;
	if (want(g) & FULL_BITS) {
		mct_reconcile(g, true);
		return;
	}
	each_member(g, m_absent);
	if (!want(g)) {
		mct_reconcile(g, true);
		return;
	}
	if (!g->absent_tries++)
		t->n_absent++;
	else if (g->absent_tries > ABSENT_BACKOFF_MAX + 1)
		g->absent_tries = ABSENT_BACKOFF_MAX + 1;
	mct_gstate(g, G_ABSENT);
	delay = ABSENT_RETRY_BASE << (g->absent_tries - 1);
	if (t->cfg.rejoin_spread)
		delay += imc_rng_below(&t->rng, t->cfg.rejoin_spread);
	(void)imc_timer_arm_in(t->loop, &g->timer, delay);
	mct_sub_kick(&t->created);
	mct_mark_dirty(g); /* detaches the QPs of the members that wait */
}

/* ABSENT -> IDLE: the waiting members resume (PENDING, or REJOINING
 * when they had joined). The caller sends what follows. */
void mct_absent_wake(struct group *g)
{
	imc_timer_cancel(g->t->loop, &g->timer);
	mct_gstate(g, G_IDLE);
	each_member(g, m_up);
}

/* Trap 66 or the fallback timer: ask again, paced over spread. */
void mct_absent_retry(struct group *g, imc_time_t spread)
{
	mct_absent_wake(g);
	if (want(g))
		mct_pace_over(g, spread);
	else
		mct_mark_dirty(g);
}

/* g joined, or goes: it waits for no creation any more. */
void mct_absent_end(struct group *g)
{
	struct imc_mcast *t = g->t;

	if (!g->absent_tries)
		return;
	g->absent_tries = 0;
	if (--t->n_absent == 0 && t->created.state == S_ON)
		/* from the loop: this may run inside an API call */
		(void)imc_timer_arm(t->loop, &t->created.timer,
				    imc_loop_now(t->loop));
}
