/* IPoIB multicast groups (ipoib.h, ipoib_core.h): joins through the
 * tracker, AVs from the join answers, send queues, send-only groups.
 * The group's state table is at the top of ipoib.c, with the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/mcmr.h"
#include "ipoib/ipoib_core.h"
#include "util/bytes.h"

/* ---- groups ---- */

static void grp_cb(void *arg, struct imc_mcast_member *m,
		   const struct imc_mcast_event *ev);
static void grp_timer_fire(struct imc_timer *t);

static bool grp_eq(const struct imc_hnode *n, const void *mgid)
{
	return imc_gid_equal(&imc_container_of(n, struct group, hn)->mgid,
			     mgid);
}

struct group *ipo_grp_find(const struct imc_ipoib *ifc,
			   const struct imc_gid *mgid)
{
	struct imc_hnode *n = imc_htab_find(&ifc->groups,
					    ipo_gid_hash(ifc, mgid),
					    grp_eq, mgid);

	return n ? imc_container_of(n, struct group, hn) : NULL;
}

struct group *ipo_grp_new(struct imc_ipoib *ifc,
			  const struct imc_gid *mgid,
			  const struct imc_ip_addr *ip)
{
	struct group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ifc = ifc;
	g->state = GRP_IDLE;
	g->mgid = *mgid;
	if (ip)
		g->ip = *ip;
	imc_timer_init(&g->timer, grp_timer_fire);
	imc_htab_insert(&ifc->groups, &g->hn, ipo_gid_hash(ifc, mgid));
	imc_list_add_tail(&ifc->group_list, &g->all);
	ifc->st.groups++;
	return g;
}

void ipo_grp_leave_members(struct group *g)
{
	if (g->old) {
		imc_mcast_leave(g->old);
		g->old = NULL;
	}
	if (g->m) {
		if (g->join_state & (IMC_JOIN_SENDONLY_FULL |
				     IMC_JOIN_SENDONLY_NON))
			g->ifc->st.sendonly_leaves++;
		imc_mcast_leave(g->m);
		g->m = NULL;
	}
	g->join_state = 0;
}

void ipo_grp_free(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	ipo_grp_leave_members(g);
	imc_timer_cancel(ifc->loop, &g->timer);
	ipo_q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_FLUSHED);
	imc_list_del(&g->all);
	imc_htab_remove(&ifc->groups, &g->hn);
	ifc->st.groups--;
	if (ifc->bcast == g)
		ifc->bcast = NULL;
	free(g);
}

bool ipo_grp_wants_full(const struct group *g)
{
	return g->bcast || g->listeners > 0;
}

/* The join of a group. The broadcast group is joined by MGID alone (the
 * SM creates it); any other group is created, when missing, with the
 * broadcast group's parameters (RFC 4391 4; the components Linux sends). */
int ipo_grp_join(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;
	struct imc_mcast_join_req req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.rec.mgid = g->mgid;
	req.rec.port_gid = ifc->cfg.port_gid;
	req.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
			UMAD_SA_MCM_COMP_MASK_PORT_GID |
			UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	if (!g->bcast) {
		/* The MTU and rate exactly the broadcast group's; its
		 * HopLimit travels in the record without its component. */
		const uint64_t from_bcast =
			UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_MTU |
			UMAD_SA_MCM_COMP_MASK_TCLASS |
			UMAD_SA_MCM_COMP_MASK_PKEY | UMAD_SA_MCM_COMP_MASK_RATE |
			UMAD_SA_MCM_COMP_MASK_SL |
			UMAD_SA_MCM_COMP_MASK_FLOW_LABEL;

		imc_mcmr_copy(&req.rec, &ifc->brec,
			      from_bcast | UMAD_SA_MCM_COMP_MASK_HOP_LIMIT);
		req.rec.mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
		req.rec.rate_sel = UMAD_SA_SELECTOR_EXACTLY;
		req.comp_mask |= from_bcast | UMAD_SA_MCM_COMP_MASK_MTU_SEL |
				 UMAD_SA_MCM_COMP_MASK_RATE_SEL;
	}
	if (ipo_grp_wants_full(g))
		req.join_state = IMC_JOIN_FULL;
	else if (ifc->cfg.sa_sendonly_full)
		req.join_state = IMC_JOIN_SENDONLY_FULL;
	else
		/* As Linux: without SendOnlyFullMember support, a sender
		 * joins as SendOnlyNonMember (it cannot create the group). */
		req.join_state = IMC_JOIN_SENDONLY_NON;
	req.qp = req.join_state & IMC_JOIN_FULL ? ifc->qp : NULL;
	rc = imc_mcast_join(ifc->mcast, &req, grp_cb, g, &g->m);
	if (rc < 0) {
		g->m = NULL;
		ifc->st.join_errors++;
		return rc;
	}
	g->join_state = req.join_state;
	ifc->st.joins++;
	if (!(req.join_state & IMC_JOIN_FULL))
		ifc->st.sendonly_joins++;
	ipo_grp_set_state(g, GRP_JOINING);
	return 0;
}

void ipo_grp_retry(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	g->backoff = g->backoff ? g->backoff * 2 : ifc->cfg.join_retry;
	if (g->backoff > ifc->cfg.join_retry_max)
		g->backoff = ifc->cfg.join_retry_max;
	ipo_grp_set_state(g, GRP_BACKOFF);
	imc_timer_arm(ifc->loop, &g->timer,
		      imc_loop_now(ifc->loop) + g->backoff);
}

static void grp_flush(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;
	struct ipo_pkt *p;

	while (g->state == GRP_JOINED && ifc->state == IMC_IPOIB_UP &&
	       (p = ipo_q_pop(ifc, &g->q))) {
		ipo_tx(ifc, &g->av, QPN_GROUP, g->qkey, p->data, p->len,
		       (enum pkt_kind)p->kind);
		free(p);
	}
}

static void grp_arm_idle(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	if (g->join_state & IMC_JOIN_FULL)
		return;
	imc_timer_arm(ifc->loop, &g->timer,
		      g->last_send + ifc->cfg.sendonly_idle);
}

/* A group the interface wants joined, when it can be: after the
 * broadcast group (whose parameters the others take). */
static void grp_kick(struct group *g)
{
	if (g->state != GRP_IDLE || g->bcast ||
	    g->ifc->state != IMC_IPOIB_UP)
		return;
	if (!ipo_grp_wants_full(g) && !g->q.n)
		return;
	if (ipo_grp_join(g) < 0) {
		if (ipo_grp_wants_full(g)) {
			ipo_grp_set_state(g, GRP_JOINING);
			ipo_grp_retry(g);
		} else {
			ipo_q_drop_all(g->ifc, &g->q, IMC_IPOIB_DROP_JOIN_FAILED);
			ipo_grp_free(g);
		}
	}
}

void ipo_announce(struct imc_ipoib *ifc);

static void bcast_joined(struct imc_ipoib *ifc, const struct imc_mcmr *rec)
{
	unsigned mtu;

	ifc->brec = *rec;
	mtu = ipo_mtu_bytes(rec->mtu);
	if (!mtu || mtu > ipo_mtu_bytes(ifc->cfg.port_mtu))
		mtu = ipo_mtu_bytes(ifc->cfg.port_mtu);
	ifc->mtu = mtu - IMC_IPOIB_HDR_LEN;
	if (ifc->state != IMC_IPOIB_UP)
		ipo_ifc_set_state(ifc, IMC_IPOIB_UP);
	for (struct imc_list *l = ifc->ep_list.next; l != &ifc->ep_list;
	     l = l->next)
		ipo_ep_fabricate(imc_container_of(l, struct ep, all));
	/* Other groups join in the order they were made; queues flush
	 * after, in the order packets started waiting. A group whose
	 * re-join was answered before the broadcast group's (the tracker
	 * paces re-joins in any order) could not send then: it does now. */
	for (struct imc_list *l = ifc->group_list.next, *n;
	     l != &ifc->group_list; l = n) {
		n = l->next;
		grp_kick(imc_container_of(l, struct group, all));
	}
	grp_flush(ifc->bcast);
	for (struct imc_list *l = ifc->group_list.next; l != &ifc->group_list;
	     l = l->next)
		grp_flush(imc_container_of(l, struct group, all));
	ipo_flush_waiting(ifc);
	if (ifc->announce_due) {
		ifc->announce_due = false;
		ipo_announce(ifc);
	}
}

/* The broadcast group failed: every other group goes back to IDLE (their
 * parameters came from it) until it is joined again. */
static void bcast_lost(struct imc_ipoib *ifc)
{
	for (struct imc_list *l = ifc->group_list.next, *n;
	     l != &ifc->group_list; l = n) {
		struct group *g = imc_container_of(l, struct group, all);

		n = l->next;
		if (g->bcast)
			continue;
		ipo_grp_leave_members(g);
		imc_timer_cancel(ifc->loop, &g->timer);
		ipo_grp_set_state(g, GRP_IDLE);
		if (!ipo_grp_wants_full(g) && !g->q.n)
			ipo_grp_free(g);
	}
}

/* The broadcast join failed, or its answer could not be used: leave,
 * retry after the backoff, and take the other groups down with it. */
static void bcast_failed(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	ifc->st.join_errors++;
	ipo_grp_leave_members(g);
	ipo_grp_retry(g);
	if (ifc->state != IMC_IPOIB_BACKOFF)
		ipo_ifc_set_state(ifc, IMC_IPOIB_BACKOFF);
	bcast_lost(ifc);
}

static void grp_cb(void *arg, struct imc_mcast_member *m,
		   const struct imc_mcast_event *ev)
{
	struct group *g = arg;
	struct imc_ipoib *ifc = g->ifc;

	if (m == g->old) {
		/* The replaced send-only membership: only its end matters. */
		if (ev->type != IMC_MCAST_EV_JOINED) {
			imc_mcast_leave(g->old);
			g->old = NULL;
		}
		return;
	}
	if (m != g->m)
		return;
	switch (ev->type) {
	case IMC_MCAST_EV_JOINED: {
		const struct imc_mcmr *r = ev->rec;

		/* The QP takes the partition's Q_Key before any send or
		 * answer relies on it (RFC 4391 4). */
		if (g->bcast && ifc->ops.set_qkey &&
		    ifc->ops.set_qkey(ifc->ops.ctx, r->qkey) < 0) {
			bcast_failed(g);
			break;
		}
		g->backoff = 0;
		ipo_av_from(&g->av, ifc, r, r->mlid, &g->mgid);
		g->qkey = r->qkey;
		ipo_grp_set_state(g, GRP_JOINED);
		g->has_av = true;
		if (g->old) {
			imc_mcast_leave(g->old);
			g->old = NULL;
			ifc->st.sendonly_leaves++;
		}
		if (g->bcast) {
			bcast_joined(ifc, r);
		} else {
			if (!g->last_send)
				g->last_send = imc_loop_now(ifc->loop);
			grp_flush(g);
			grp_arm_idle(g);
		}
		break;
	}
	case IMC_MCAST_EV_REJOINING:
	case IMC_MCAST_EV_WAITING:
		ipo_grp_set_state(g, GRP_JOINING);
		if (g->bcast && ifc->state == IMC_IPOIB_UP)
			ipo_ifc_set_state(ifc, IMC_IPOIB_JOINING);
		break;
	case IMC_MCAST_EV_ERROR:
		if (g->bcast) {
			bcast_failed(g);
			break;
		}
		ifc->st.join_errors++;
		ipo_grp_leave_members(g);
		if (ipo_grp_wants_full(g)) {
			ipo_q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_JOIN_FAILED);
			ipo_grp_retry(g);
		} else {
			ipo_q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_JOIN_FAILED);
			ipo_grp_free(g);
		}
		break;
	}
}

static void grp_timer_fire(struct imc_timer *t)
{
	struct group *g = imc_container_of(t, struct group, timer);
	struct imc_ipoib *ifc = g->ifc;
	imc_time_t now = imc_loop_now(ifc->loop);

	switch (g->state) {
	case GRP_BACKOFF:
		if (g->bcast) {
			if (ipo_grp_join(g) < 0) {
				ipo_grp_set_state(g, GRP_JOINING);
				ipo_grp_retry(g);
				return;
			}
			ipo_ifc_set_state(ifc, IMC_IPOIB_JOINING);
			return;
		}
		ipo_grp_set_state(g, GRP_IDLE);
		grp_kick(g);
		return;
	case GRP_JOINED:
		/* Send-only idle check (RFC 4391 leaves it to the
		 * implementation; Linux leaves send-only groups on a
		 * timer too). */
		if (ipo_grp_wants_full(g))
			return;
		if (g->last_send + ifc->cfg.sendonly_idle > now) {
			grp_arm_idle(g);
			return;
		}
		ipo_grp_free(g);
		return;
	default:
		return;
	}
}

/* The group of an MGID, made if missing (send-only until listened). */
struct group *ipo_grp_get(struct imc_ipoib *ifc, const struct imc_gid *mgid,
			  const struct imc_ip_addr *ip)
{
	struct group *g = ipo_grp_find(ifc, mgid);

	if (g)
		return g;
	g = ipo_grp_new(ifc, mgid, ip);
	if (!g)
		ipo_drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
	return g;
}

int ipo_grp_send(struct imc_ipoib *ifc, struct group *g,
		 const uint8_t *data, size_t len, enum pkt_kind kind)
{
	int rc;

	g->last_send = imc_loop_now(ifc->loop);
	if (ifc->state == IMC_IPOIB_UP && g->state == GRP_JOINED && !g->q.n)
		return ipo_tx(ifc, &g->av, QPN_GROUP, g->qkey, data, len, kind);
	rc = ipo_q_push(ifc, &g->q, ifc->cfg.queue_group,
			IMC_IPOIB_DROP_QUEUE_GROUP, data, len, kind);
	if (rc == 0)
		grp_kick(g);
	return rc;
}

int ipo_grp_listen(struct imc_ipoib *ifc, const struct imc_gid *mgid,
		   const struct imc_ip_addr *ip)
{
	struct group *g = ipo_grp_get(ifc, mgid, ip);

	if (!g)
		return -ENOMEM;
	if (g->listeners++)
		return 0;
	if (g->state == GRP_IDLE) {
		grp_kick(g);
		return 0;
	}
	if (g->state == GRP_BACKOFF || (g->join_state & IMC_JOIN_FULL))
		return 0;
	/* Send-only so far: join FullMember; while that is pending, a
	 * joined send-only membership keeps carrying what is sent. */
	if (g->state == GRP_JOINED && !g->old) {
		struct imc_mcast_member *so = g->m;
		struct imc_ipoib_av av = g->av;

		imc_timer_cancel(ifc->loop, &g->timer);
		g->m = NULL;
		if (ipo_grp_join(g) < 0) {
			g->m = so;
			g->listeners--;
			return -ENOMEM;
		}
		g->old = so;
		ipo_grp_set_state(g, GRP_JOINED);
		g->has_av = true;
		g->av = av;
		return 0;
	}
	ipo_grp_leave_members(g);
	if (ipo_grp_join(g) < 0) {
		g->listeners--;
		ipo_grp_set_state(g, GRP_IDLE);
		grp_kick(g);
		return -ENOMEM;
	}
	return 0;
}

void ipo_grp_unlisten(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	if (--g->listeners)
		return;
	if (g->bcast)
		return;
	/* No reader left: give the FullMember bit back. Anything still
	 * waiting goes out through a send-only join. */
	ipo_grp_leave_members(g);
	imc_timer_cancel(ifc->loop, &g->timer);
	ipo_grp_set_state(g, GRP_IDLE);
	if (!g->q.n) {
		ipo_grp_free(g);
		return;
	}
	grp_kick(g);
}

