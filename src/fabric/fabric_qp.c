/* UD QPs on the embedded fabric: create and destroy, send, multicast
 * attach and detach (IBA 10.5.2.5), and the GMPs of the SMAs.
 *
 * A QP sits in f->qps by (port, QPN) and on f's list in creation order;
 * its attachments hang on their group (struct mgrp, f->grps by (port,
 * MLID, MGID)) in attach order, and on the QP. A group goes with its
 * last attachment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

/* ---- QPs ---- */

int imc_qp_create(struct imc_fabric *f, uint32_t node, unsigned port,
		  uint32_t qpn, uint32_t qkey, uint16_t pkey,
		  imc_qp_recv_fn *recv, void *ctx, struct imc_qp **out)
{
	struct hport *h = fab_hca_port(f, node, port);
	struct imc_qp *qp;
	unsigned i;

	*out = NULL;
	if (!h || !recv || qpn >= IMC_MCAST_QPN)
		return -EINVAL;
	for (i = 0; i < h->npkeys && h->pkeys[i] != pkey; i++)
		;
	if (i == h->npkeys)
		return -EINVAL;
	if (qpn == 0) {
		/* From 2 up; wraps below the multicast QPN. */
		for (uint32_t tries = 0;; tries++) {
			if (tries >= IMC_MCAST_QPN - 2)
				return -ENOSPC;
			qpn = h->next_qpn;
			h->next_qpn = qpn + 1 < IMC_MCAST_QPN ? qpn + 1 : 2;
			if (!fab_qp_find(f, h->port, qpn))
				break;
		}
	} else if (fab_qp_find(f, h->port, qpn)) {
		return -EBUSY;
	}
	qp = fab_zalloc64(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->f = f;
	qp->rq = qp->rq_inline;
	qp->rq_cap = RQ_INLINE;
	qp->port = h->port;
	qp->qpn = qpn;
	/* IBA 13.5: the GSI's Q_Key is fixed. */
	qp->qkey = qpn == IMC_QP1 ? IMC_QP1_QKEY : qkey;
	qp->pkey = pkey;
	qp->recv = recv;
	qp->ctx = ctx;
	imc_timer_init(&qp->done, fab_done_fire);
	imc_htab_insert(&f->qps, &qp->hl, fab_qp_hash(h->port, qpn));
	imc_list_init(&qp->atts);
	imc_list_add_tail(&f->qp_list, &qp->link);
	*out = qp;
	return 0;
}

/* Takes a off its group and its QP; the group goes with its last. */
static void att_del(struct imc_fabric *f, struct att *a)
{
	struct mgrp *g = a->g;

	g->port->mc_qp = NULL;
	imc_list_del(&a->glink);
	imc_list_del(&a->qlink);
	if (imc_list_empty(&g->atts)) {
		imc_htab_remove(&f->grps, &g->hl);
		free(g);
	}
	free(a);
}

/* Frees qp and what it holds; received datagrams whose callback has not
 * run count as NO_QP drops, as those still in flight will. */
void fab_qp_free(struct imc_qp *qp)
{
	struct imc_fabric *f = qp->f;

	if (f->cur_qp == qp)
		f->cur_qp = NULL;
	imc_timer_cancel(f->loop, &qp->done);
	fab_rq_flush(qp);
	if (qp->rq != qp->rq_inline)
		free(qp->rq);
	while (!imc_list_empty(&qp->atts))
		att_del(f, imc_list_entry(qp->atts.next, struct att, qlink));
	imc_htab_remove(&f->qps, &qp->hl);
	imc_list_del(&qp->link);
	free(qp);
}

void imc_qp_destroy(struct imc_qp *qp)
{
	if (qp)
		fab_qp_free(qp);
}

uint32_t imc_qp_num(const struct imc_qp *qp)
{
	return qp->qpn;
}

void imc_qp_set_recv_delay(struct imc_qp *qp, imc_time_t delay)
{
	qp->recv_delay = delay;
}

int imc_qp_set_qkey(struct imc_qp *qp, uint32_t qkey)
{
	if (qp->qpn == IMC_QP1)
		return -EINVAL;
	qp->qkey = qkey;
	return 0;
}

uint32_t imc_qp_qkey(const struct imc_qp *qp)
{
	return qp->qkey;
}

static void count_send(struct imc_fabric *f, const struct pkt *p,
		       const struct port *po, imc_time_t now)
{
	f->tot.sent++;
	f->tot.mad_sent += p->dqpn <= IMC_QP1;
	fab_trace_at(f, now, TR_SEND, po, p->serial);
}

static uint32_t wire_size(bool grh, size_t len)
{
	return (uint32_t)(IMC_LRH_SIZE + (grh ? IMC_GRH_SIZE : 0) +
			  IMC_BTH_SIZE + IMC_DETH_SIZE + ((len + 3) & ~(size_t)3) +
			  IMC_ICRC_SIZE + IMC_VCRC_SIZE);
}

/* A new datagram of len bytes of data, numbered; the caller fills in
 * the headers. */
static struct pkt *pkt_with(struct imc_fabric *f, const void *data,
			    size_t len, bool grh)
{
	struct pkt *p = fab_pkt_new(f, len);

	if (!p)
		return NULL;
	if (len)
		memcpy(p->data, data, len);
	p->serial = ++f->serial;
	p->len = (uint32_t)len;
	p->wire = (uint16_t)wire_size(grh, len);
	return p;
}

/* The GRH fields of a datagram sent without one. */
static void no_grh(struct pkt *p)
{
	p->tclass = 0;
	p->hop_limit = 0;
	p->flow_label = 0;
	memset(&p->sgid, 0, sizeof(p->sgid));
	memset(&p->dgid, 0, sizeof(p->dgid));
}

int imc_qp_send(struct imc_qp *qp, const struct imc_ah *ah,
		uint32_t remote_qpn, uint32_t remote_qkey, const void *data,
		size_t len)
{
	struct imc_fabric *f = qp->f;
	struct port *po = qp->port;
	bool mcast;
	struct pkt *p;
	imc_time_t now;

	if (!ah || (len && !data) || ah->dlid == 0 ||
	    ah->dlid == IMC_LID_PERMISSIVE || ah->sl > 15 ||
	    remote_qpn > IMC_QPN_MAX ||
	    (ah->has_grh && ah->flow_label > 0xfffff))
		return -EINVAL;
	mcast = imc_lid_is_mcast(ah->dlid);
	/* IBA 10.5: multicast needs a GRH and DestQP 0xFFFFFF; unicast
	 * never goes to 0xFFFFFF. */
	if (mcast ? !ah->has_grh || remote_qpn != IMC_MCAST_QPN :
		    remote_qpn == IMC_MCAST_QPN)
		return -EINVAL;
	if (po->state != IMC_PORT_ACTIVE)
		return -ENETDOWN;
	if (len > po->mtu_bytes) {
		fab_count_drop(f, po, IMC_DROP_MTU, f->serial);
		return -EMSGSIZE;
	}
	p = pkt_with(f, data, len, ah->has_grh);
	if (!p)
		return -ENOMEM;
	p->dqpn = remote_qpn;
	p->sqpn = qp->qpn;
	p->qkey = remote_qkey;
	p->psn = qp->psn;
	qp->psn = (qp->psn + 1) & 0xffffff;
	p->dlid = ah->dlid;
	p->slid = po->lid;
	p->pkey = qp->pkey;
	p->sl = ah->sl;
	p->has_grh = ah->has_grh;
	if (ah->has_grh) {
		p->tclass = ah->tclass;
		p->hop_limit = ah->hop_limit;
		p->flow_label = ah->flow_label;
		fab_port_gid(f, po, &p->sgid);
		p->dgid = ah->dgid;
	} else {
		no_grh(p);
	}
	now = imc_loop_now(f->loop);
	if (!mcast && ah->dlid == po->lid) {
		/* Loopback: to our own LID, no cable crossed. */
		if (fab_loop_back(f, p, po, now))
			return -ENOMEM;
		count_send(f, p, po, now);
		return 0;
	}
	count_send(f, p, po, now);
	/* A multicast sender's own port gets no copy back: the fabric never
	 * sends a packet out of the port it came in on (IBA 18.2.4.4). */
	fab_xmit(f, p, po, now);
	return 0;
}

static int attach_args(struct imc_qp *qp, const struct imc_gid *mgid,
		       uint16_t mlid)
{
	if (!qp || !mgid || !imc_lid_is_mcast(mlid) || mgid->raw[0] != 0xff)
		return -EINVAL;
	return 0;
}

int imc_qp_attach(struct imc_qp *qp, const struct imc_gid *mgid,
		  uint16_t mlid)
{
	struct imc_fabric *f;
	struct mgrp *g;
	struct att *a;
	struct imc_list *l;
	int err = attach_args(qp, mgid, mlid);

	if (err)
		return err;
	f = qp->f;
	g = fab_grp_find(f, qp->port, mlid, mgid);
	if (g) {
		imc_list_foreach(l, &g->atts)
			if (imc_list_entry(l, struct att, glink)->qp == qp)
				return -EEXIST;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g) {
			free(a);
			return -ENOMEM;
		}
		g->port = qp->port;
		g->mlid = mlid;
		g->mgid = *mgid;
		imc_list_init(&g->atts);
		imc_htab_insert(&f->grps, &g->hl,
				fab_grp_hash(qp->port, mlid, mgid));
	}
	qp->port->mc_qp = NULL;
	a->g = g;
	a->qp = qp;
	imc_list_add_tail(&g->atts, &a->glink);
	imc_list_add_head(&qp->atts, &a->qlink);
	return 0;
}

int imc_qp_detach(struct imc_qp *qp, const struct imc_gid *mgid,
		  uint16_t mlid)
{
	struct imc_list *l;
	int err = attach_args(qp, mgid, mlid);

	if (err)
		return err;
	imc_list_foreach(l, &qp->atts) {
		struct att *a = imc_list_entry(l, struct att, qlink);

		if (a->g->mlid == mlid &&
		    !memcmp(&a->g->mgid, mgid, sizeof(*mgid))) {
			att_del(qp->f, a);
			return 0;
		}
	}
	return -ENOENT;
}

/* A GMP from node:port: an HCA port sends it out of itself, a switch's
 * port 0 by its LFT; to its own LID it loops back. */
int fab_gmp_send(struct imc_fabric *f, uint32_t node, unsigned port,
		 const struct imc_fabric_mad_addr *to, const uint8_t *mad,
		 size_t len)
{
	struct port *po = fab_port_at(f, node, port);
	struct port *out = po;
	imc_time_t now = imc_loop_now(f->loop);
	struct pkt *p;

	if (!po || !to || to->dlid == 0 || imc_lid_is_mcast(to->dlid) ||
	    to->dlid == IMC_LID_PERMISSIVE || to->dqp > IMC_QP1 ||
	    len > BUF_LARGE)
		return -EINVAL;
	if (po->node->type == IMC_NODE_SWITCH && to->dlid != po->lid) {
		unsigned o = to->dlid < po->node->lft_len ?
			     po->node->lft[to->dlid] : IMC_PORT_NONE;

		if (o == 0 || o > po->node->nports)
			return -ENETDOWN;
		out = &po->node->port[o];
	}
	if (out->state != IMC_PORT_ACTIVE || !po->lid)
		return -ENETDOWN;
	if (len > out->mtu_bytes)
		return -EMSGSIZE;
	p = pkt_with(f, mad, len, false);
	if (!p)
		return -ENOMEM;
	p->dqpn = to->dqp;
	p->sqpn = IMC_QP1;
	p->qkey = to->qkey ? to->qkey : IMC_QP1_QKEY;
	p->psn = 0;
	p->dlid = to->dlid;
	p->slid = to->slid ? to->slid : po->lid;
	p->pkey = to->pkey ? to->pkey : IMC_PKEY_DEFAULT;
	p->sl = to->sl & 15;
	p->has_grh = false;
	no_grh(p);
	count_send(f, p, po, now);
	if (to->dlid == po->lid)
		return fab_loop_back(f, p, po, now);
	fab_egress(f, p, out, now);
	return 0;
}
