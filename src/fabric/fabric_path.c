/* The embedded fabric's datagram path: cables, switches, the checks at
 * an HCA port and the receive queues of its QPs.
 *
 * A datagram (struct pkt) is written once, by imc_qp_send() or
 * fab_gmp_send() (fabric_qp.c), and only read afterwards: the copies a
 * switch or an HCA port makes of a multicast datagram, and the copy of
 * the duplication fault, are references to it, counted, and it is freed
 * with the last. A broadcast reaching every port of a subnet is thus one
 * datagram that stays in the cache while its copies are delivered, not
 * one cold copy per port.
 * A reference sits in one place at a time:
 *
 *   a cable direction's ring    on the wire, with its arrival time
 *   a pend, state HELD          held back (reorder fault) on a timer of
 *                               its own, so that later datagrams pass it
 *   a pend, state LOOP          unicast to the sender's own LID; its
 *                               timer delivers it
 *   a QP's receive ring         until the QP's completion timer runs recv
 *
 * and moves from one to the next (a switch forwards it into another
 * cable), or is dropped. Pend state, changed only by pend_state():
 *
 *   FREE -> HELD | LOOP -> FREE   (the timer fired, or a flush)
 *
 * One event per hop: a datagram on a cable direction arrives at
 * max(now, busy_until) + size * 8 / bps + latency, and busy_until moves to
 * the end of its serialization, so datagrams queue FIFO behind each other.
 * Arrival times on a direction therefore never decrease, and each
 * direction has one timer, armed for the arrival of its first datagram:
 * the loop holds one timer per busy cable instead of one per datagram,
 * and a direction's queue is a ring of (arrival time, datagram), so that
 * queueing and arriving read the ring, not the datagrams.
 *
 * Lookups on the packet path are O(1): LFTs are arrays indexed by LID,
 * MFT entries, QPs and multicast attachments sit in chained hash tables
 * keyed by (switch, MLID), (port, QPN) and (port, MLID, MGID). Nothing
 * that reaches events iterates a hash table: MFT masks go by port number,
 * attachments in attach order, ports and nodes by index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

/* ---- datagrams and pends ---- */

/* A datagram with room for len payload bytes, one reference. */
struct pkt *fab_pkt_new(struct imc_fabric *f, size_t len)
{
	unsigned large = len > BUF_SMALL;
	struct pkt *p = f->free_pkts[large];

	if (p) {
		f->free_pkts[large] = p->next;
	} else {
		p = aligned_alloc(64, sizeof(*p) +
				      (large ? BUF_LARGE : BUF_SMALL));
		if (!p)
			return NULL;
		p->large = (uint8_t)large;
	}
	p->refs = 1;
	return p;
}

static void pend_fire(struct imc_timer *t);

static void pend_state(struct pend *e, enum pend_state s)
{
	e->state = s;
}

static struct pend *pend_get(struct imc_fabric *f)
{
	struct pend *e;

	if (!imc_list_empty(&f->free_pends)) {
		e = imc_list_entry(f->free_pends.next, struct pend, link);
		imc_list_del(&e->link);
		return e;
	}
	e = malloc(sizeof(*e));
	if (e) {
		e->f = f;
		imc_timer_init(&e->t, pend_fire);
		e->state = PEND_FREE;
	}
	return e;
}

/* Back to the free list; its timer is not armed any more. */
static void pend_put(struct imc_fabric *f, struct pend *e)
{
	pend_state(e, PEND_FREE);
	e->p = NULL;
	imc_list_add_head(&f->free_pends, &e->link);
}

int fab_loop_back(struct imc_fabric *f, struct pkt *p, struct port *po,
		  imc_time_t now)
{
	struct pend *e = pend_get(f);

	if (!e || imc_timer_arm(f->loop, &e->t, now)) {
		if (e)
			pend_put(f, e);
		fab_pkt_unref(f, p);
		return -ENOMEM;
	}
	e->p = p;
	e->to = po;
	e->dir = NULL;
	pend_state(e, PEND_LOOP);
	imc_list_add_head(&f->loops, &e->link);
	return 0;
}

/* ---- cables ---- */

void fab_dir_params(struct dir *d, const struct imc_link_params *lp,
		    unsigned width)
{
	uint64_t bps = lp->bits_per_sec;

	d->p = *lp;
	if (!bps)
		bps = (uint64_t)(width ? width : 4) * QDR_LANE_BPS * 1000000ull;
	d->p.bits_per_sec = bps;
	d->latency = lp->latency;
	d->ps_per_byte = (8000000000000ull + bps - 1) / bps;
	d->faulty = lp->loss > 0 || lp->dup > 0 || lp->reorder > 0;
}

bool fab_params_ok(const struct imc_link_params *p)
{
	/* Written so that NaN fails every test. Delays past
	 * IMC_TIME_LIMIT would wrap the 64-bit sums of arrival times. */
	return p->loss >= 0 && p->loss <= 1 && p->dup >= 0 && p->dup <= 1 &&
	       p->reorder >= 0 && p->reorder <= 1 &&
	       p->latency <= IMC_TIME_LIMIT &&
	       p->reorder_delay <= IMC_TIME_LIMIT;
}

/* Doubles d's ring (RING_MIN at first), keeping the order. */
static int ring_grow(struct dir *d)
{
	uint32_t cap = d->ring ? (d->rmask + 1) * 2 : RING_MIN;
	struct hop *r;

	if (!cap)
		return -ENOMEM;
	r = malloc((size_t)cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->rlen; i++)
		r[i] = d->ring[(d->rhead + i) & d->rmask];
	free(d->ring);
	d->ring = r;
	d->rhead = 0;
	d->rmask = cap - 1;
	return 0;
}

/* Puts p (a reference the caller gives) on d to arrive at time at, on
 * the direction's ring or, held back, on a timer of its own. Returns
 * false (p dropped) when there is no room for it. */
static bool launch(struct imc_fabric *f, struct pkt *p, struct dir *d,
		   imc_time_t at, bool held)
{
	if (held) {
		struct pend *e = pend_get(f);

		if (!e || imc_timer_arm(f->loop, &e->t, at)) {
			if (e)
				pend_put(f, e);
			fab_drop(f, p, d->from, IMC_DROP_LOSS);
			return false;
		}
		e->p = p;
		e->dir = d;
		e->to = d->to;
		pend_state(e, PEND_HELD);
		imc_list_add_head(&d->held, &e->link);
		return true;
	}
	/* Nothing overtakes on a wire, even when the latency just fell. */
	if (d->rlen) {
		imc_time_t last = d->ring[(d->rhead + d->rlen - 1) &
					  d->rmask].at;

		if (at < last)
			at = last;
	}
	if ((!d->ring || d->rlen > d->rmask) && ring_grow(d)) {
		fab_drop(f, p, d->from, IMC_DROP_LOSS);
		return false;
	}
	if (!d->rlen && imc_timer_arm(f->loop, &d->t, at)) {
		fab_drop(f, p, d->from, IMC_DROP_LOSS);
		return false;
	}
	d->ring[(d->rhead + d->rlen++) & d->rmask] = (struct hop){ at, p };
	return true;
}

static void capture(struct imc_fabric *f, const struct pkt *p,
		    imc_time_t now)
{
	struct imc_ud_packet u;
	int n;

	memset(&u, 0, sizeof(u));
	u.lrh.sl = p->sl;
	u.lrh.dlid = p->dlid;
	u.lrh.slid = p->slid;
	u.has_grh = p->has_grh;
	u.grh.tclass = p->tclass;
	u.grh.flow_label = p->flow_label;
	u.grh.hop_limit = p->hop_limit;
	u.grh.sgid = p->sgid;
	u.grh.dgid = p->dgid;
	u.bth.opcode = IMC_BTH_OP_UD_SEND_ONLY;
	u.bth.pkey = p->pkey;
	u.bth.dest_qp = p->dqpn;
	u.bth.psn = p->psn;
	u.deth.qkey = p->qkey;
	u.deth.src_qp = p->sqpn;
	u.payload = p->data;
	u.payload_len = p->len;
	n = imc_ud_packet_build(&u, f->frame, FRAME_MAX);
	if (n > 0)
		imc_pcap_write(f->cap, now, f->frame, (size_t)n);
}

/* Sends p out of port out, whose cable is up and state ACTIVE. Consumes
 * the reference: on the wire, or dropped by the loss fault. */
void fab_xmit(struct imc_fabric *f, struct pkt *p, struct port *out,
	      imc_time_t now)
{
	struct dir *d = out->out;
	imc_time_t start = d->busy_until > now ? d->busy_until : now;
	imc_time_t end = start + (p->wire * d->ps_per_byte + 999) / 1000;
	imc_time_t at = end + d->latency;

	d->busy_until = end;
	d->c.packets++;
	d->c.bytes += p->wire;
	out->c.tx_packets++;
	out->c.tx_bytes += p->wire;
	if (f->cap && (f->cap_node == IMC_TOPO_NONE ||
		       (f->cap_node == out->node->idx && f->cap_port == out->num)))
		capture(f, p, now);
	if (d->faulty) {
		/* One draw each, whatever the outcome, so that a stream's
		 * position depends only on the packets sent into it. */
		bool lost = imc_rng_chance(&d->rng, d->p.loss);
		bool dup = imc_rng_chance(&d->rng, d->p.dup);
		bool late = imc_rng_chance(&d->rng, d->p.reorder);
		struct pkt *q = NULL;

		if (lost) {
			d->c.lost++;
			fab_drop(f, p, out, IMC_DROP_LOSS);
			return;
		}
		if (dup)
			q = fab_pkt_ref(p);
		if (late) {
			d->c.reordered++;
			at += d->p.reorder_delay;
		}
		/* A held packet's copy is held with it. */
		if (!launch(f, p, d, at, late)) {
			if (q)
				fab_pkt_unref(f, q);
			return;
		}
		if (q) {
			/* The copy lands right behind the original. */
			d->c.duplicated++;
			launch(f, q, d, at, late);
		}
		return;
	}
	launch(f, p, d, at, false);
}

/* The egress checks of a port, then xmit. Consumes p. */
void fab_egress(struct imc_fabric *f, struct pkt *p, struct port *out,
		imc_time_t now)
{
	if (!out->out || !out->out->up) {
		fab_drop(f, p, out, IMC_DROP_LINK_DOWN);
		return;
	}
	if (out->state != IMC_PORT_ACTIVE) {
		fab_drop(f, p, out, IMC_DROP_PORT_STATE);
		return;
	}
	if (p->len > out->mtu_bytes) {
		fab_drop(f, p, out, IMC_DROP_MTU);
		return;
	}
	fab_xmit(f, p, out, now);
}

/* ---- switches ---- */

static uint64_t mft_hash(uint32_t sw, uint16_t mlid)
{
	return imc_mix64((uint64_t)sw << 16 | mlid);
}

static struct mft_ent *mft_find(const struct imc_fabric *f, uint32_t sw,
				uint16_t mlid)
{
	uint64_t h = mft_hash(sw, mlid);

	for (struct imc_hnode *l = imc_htab_bucket(&f->mft, h); l;
	     l = l->next) {
		struct mft_ent *e = imc_container_of(l, struct mft_ent, hl);

		if (l->hash == h && e->sw == sw && e->mlid == mlid)
			return e;
	}
	return NULL;
}

/* IBA 18.2.4.4: a multicast packet leaves by every port of the MFT entry
 * except the one it came in on. */
static void forward_mcast(struct imc_fabric *f, struct pkt *p,
			  struct port *in, imc_time_t now)
{
	struct node *sw = in->node;
	struct mft_ent *e = mft_find(f, sw->idx, p->dlid);
	struct port *prev = NULL;

	if (!e) {
		fab_drop(f, p, in, IMC_DROP_NO_MFT);
		return;
	}
	for (unsigned w = 0; w < 4; w++) {
		uint64_t bits = e->mask.bits[w];

		while (bits) {
			unsigned b = w * 64 + (unsigned)__builtin_ctzll(bits);
			struct port *o;

			bits &= bits - 1;
			if (b == in->num || b == 0 || b > sw->nports)
				continue;
			o = &sw->port[b];
			if (prev)
				fab_egress(f, fab_pkt_ref(p), prev, now);
			prev = o;
		}
	}
	if (prev)
		fab_egress(f, p, prev, now);
	else
		fab_pkt_unref(f, p);
}

static void recv_of(const struct pkt *p, struct imc_ud_recv *r);

/* A datagram for QP0/QP1 at port to, offered to the port's MAD agents
 * and PMA first (fabric_mad.h). Consumes p and returns true when one of
 * them took it. */
static bool mad_in(struct imc_fabric *f, struct pkt *p, struct port *to)
{
	struct imc_ud_recv r;

	if (!f->mad || p->dqpn > IMC_QP1)
		return false;
	recv_of(p, &r);
	if (!fab_mad_gmp_in(f->mad, to->node->idx, to->num, &r, p->dqpn))
		return false;
	f->tot.delivered++;
	f->tot.mad_delivered++;
	fab_trace_at(f, imc_loop_now(f->loop), TR_DELIVER, to, p->serial);
	fab_pkt_unref(f, p);
	return true;
}

static void forward(struct imc_fabric *f, struct pkt *p, struct port *in,
		    imc_time_t now)
{
	struct node *sw = in->node;
	unsigned out;

	if (imc_lid_is_mcast(p->dlid)) {
		forward_mcast(f, p, in, now);
		return;
	}
	out = p->dlid < sw->lft_len ? sw->lft[p->dlid] : IMC_PORT_NONE;
	if (out == IMC_PORT_NONE || out > sw->nports) {
		fab_drop(f, p, in, IMC_DROP_NO_ROUTE);
		return;
	}
	if (out == 0) {
		/* For the switch itself: its PMA or an agent on port 0. */
		if (!mad_in(f, p, &sw->port[0]))
			fab_drop(f, p, in, IMC_DROP_NO_QP);
		return;
	}
	fab_egress(f, p, &sw->port[out], now);
}

/* ---- MFT ---- */

static bool mask_empty(const struct imc_portmask *m)
{
	return !(m->bits[0] | m->bits[1] | m->bits[2] | m->bits[3]);
}

int imc_fabric_mft_set(struct imc_fabric *f, uint32_t switch_node,
		       uint16_t mlid, const struct imc_portmask *ports)
{
	struct mft_ent *e;

	if (switch_node >= f->nnodes ||
	    f->nodes[switch_node].type != IMC_NODE_SWITCH ||
	    !imc_lid_is_mcast(mlid) || !ports)
		return -EINVAL;
	e = mft_find(f, switch_node, mlid);
	if (mask_empty(ports)) {
		if (e) {
			imc_htab_remove(&f->mft, &e->hl);
			free(e);
		}
		return 0;
	}
	if (!e) {
		e = malloc(sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->sw = switch_node;
		e->mlid = mlid;
		imc_htab_insert(&f->mft, &e->hl,
				mft_hash(switch_node, mlid));
	}
	e->mask = *ports;
	return 0;
}

int imc_fabric_mft_get(const struct imc_fabric *f, uint32_t switch_node,
		       uint16_t mlid, struct imc_portmask *ports)
{
	const struct mft_ent *e;

	if (switch_node >= f->nnodes ||
	    f->nodes[switch_node].type != IMC_NODE_SWITCH ||
	    !imc_lid_is_mcast(mlid))
		return -EINVAL;
	e = mft_find(f, switch_node, mlid);
	if (e)
		*ports = e->mask;
	else
		memset(ports, 0, sizeof(*ports));
	return 0;
}

/* ---- HCA ports ---- */

/* IBA 10.9.3: P_Keys match when their low 15 bits are equal (and not 0)
 * and at least one of the two has the full membership bit. */
static bool pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fff) == (b & 0x7fff) && (a & 0x7fff) &&
	       ((a | b) & 0x8000);
}

static bool pkey_in_table(const struct hport *h, uint16_t pkey)
{
	for (unsigned i = 0; i < h->npkeys; i++)
		if (pkey_match(h->pkeys[i], pkey))
			return true;
	return false;
}

uint64_t fab_qp_hash(const struct port *p, uint32_t qpn)
{
	return imc_mix64((uint64_t)p->gidx << 24 | qpn);
}

struct imc_qp *fab_qp_find(const struct imc_fabric *f,
			   const struct port *p, uint32_t qpn)
{
	uint64_t h = fab_qp_hash(p, qpn);

	for (struct imc_hnode *l = imc_htab_bucket(&f->qps, h); l;
	     l = l->next) {
		struct imc_qp *qp = imc_container_of(l, struct imc_qp, hl);

		if (l->hash == h && qp->port == p && qp->qpn == qpn)
			return qp;
	}
	return NULL;
}

uint64_t fab_grp_hash(const struct port *p, uint16_t mlid,
		      const struct imc_gid *mgid)
{
	uint64_t h = imc_mix64((uint64_t)p->gidx << 16 | mlid);

	h = imc_mix64(h ^ imc_get64(mgid->raw));
	return imc_mix64(h ^ imc_get64(mgid->raw + 8));
}

struct mgrp *fab_grp_find(const struct imc_fabric *f, const struct port *p,
			  uint16_t mlid, const struct imc_gid *mgid)
{
	uint64_t h = fab_grp_hash(p, mlid, mgid);

	for (struct imc_hnode *l = imc_htab_bucket(&f->grps, h); l;
	     l = l->next) {
		struct mgrp *g = imc_container_of(l, struct mgrp, hl);

		if (l->hash == h && g->port == p && g->mlid == mlid &&
		    !memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	}
	return NULL;
}

/* Grows qp's receive ring out of the QP (RING_MIN), then doubles it,
 * keeping the order. */
static int rq_grow(struct imc_qp *qp)
{
	unsigned cap = qp->rq_cap < RING_MIN ? RING_MIN : qp->rq_cap * 2;
	struct pkt **r = malloc(cap * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (unsigned i = 0; i < qp->rq_len; i++)
		r[i] = qp->rq[(qp->rq_head + i) & (qp->rq_cap - 1)];
	if (qp->rq != qp->rq_inline)
		free(qp->rq);
	qp->rq = r;
	qp->rq_head = 0;
	qp->rq_cap = cap;
	return 0;
}

static struct pkt *rq_pop(struct imc_qp *qp)
{
	struct pkt *p = qp->rq[qp->rq_head];

	qp->rq_head = (qp->rq_head + 1) & (qp->rq_cap - 1);
	qp->rq_len--;
	return p;
}

void fab_rq_flush(struct imc_qp *qp)
{
	while (qp->rq_len)
		fab_drop(qp->f, rq_pop(qp), qp->port, IMC_DROP_NO_QP);
}

/* The QP-level checks (IBA 10.9.3 P_Key of the QP, 10.2.5 Q_Key), then
 * the receive queue. Consumes p. */
static void qp_rx(struct imc_fabric *f, struct imc_qp *qp, struct pkt *p,
		  imc_time_t now)
{
	struct port *in = qp->port;

	/* The GSI takes any P_Key of the port's table (IBA 13.5). */
	if (qp->qpn != IMC_QP1 && !pkey_match(qp->pkey, p->pkey)) {
		fab_drop(f, p, in, IMC_DROP_PKEY);
		return;
	}
	if (p->qkey != qp->qkey) {
		fab_drop(f, p, in, IMC_DROP_QKEY);
		return;
	}
	if (qp->rq_len >= f->cfg.rq_depth) {
		fab_drop(f, p, in, IMC_DROP_RQ_FULL);
		return;
	}
	if (qp->rq_len == qp->rq_cap && rq_grow(qp)) {
		fab_drop(f, p, in, IMC_DROP_RQ_FULL);
		return;
	}
	qp->rq[(qp->rq_head + qp->rq_len++) & (qp->rq_cap - 1)] = p;
	if (!imc_timer_armed(&qp->done))
		imc_timer_arm(f->loop, &qp->done, now + qp->recv_delay);
}

/* Checks at an HCA port in the order of the layers: link (port state,
 * DLID, length against the MTU), then transport (P_Key, QPN, Q_Key). */
static void deliver(struct imc_fabric *f, struct pkt *p, struct port *in,
		    imc_time_t now)
{
	bool mcast = imc_lid_is_mcast(p->dlid);
	struct imc_qp *qp;
	struct mgrp *g;
	struct imc_list *l;

	if (!mcast && p->dlid != in->lid) {
		fab_drop(f, p, in, IMC_DROP_DLID);
		return;
	}
	if (p->len > in->mtu_bytes) {
		fab_drop(f, p, in, IMC_DROP_MTU);
		return;
	}
	if (!pkey_in_table(in->h, p->pkey)) {
		fab_drop(f, p, in, IMC_DROP_PKEY);
		return;
	}
	if (!mcast) {
		if (p->dqpn <= IMC_QP1 && mad_in(f, p, in))
			return;
		qp = fab_qp_find(f, in, p->dqpn);
		if (!qp) {
			fab_drop(f, p, in, IMC_DROP_NO_QP);
			return;
		}
		qp_rx(f, qp, p, now);
		return;
	}
	/* IBA 10.5.2.5: every QP of the port attached to the group gets a
	 * copy; the group is (MLID, GRH DGID), so multicast needs the GRH
	 * and DestQP 0xFFFFFF. The port remembers the last group with one
	 * QP, which spares the lookup when the same group comes again. */
	if (!p->has_grh || p->dqpn != IMC_MCAST_QPN) {
		fab_drop(f, p, in, IMC_DROP_NO_QP);
		return;
	}
	if (in->mc_qp && in->mc_mlid == p->dlid &&
	    !memcmp(&in->mc_mgid, &p->dgid, sizeof(p->dgid))) {
		qp_rx(f, in->mc_qp, p, now);
		return;
	}
	g = fab_grp_find(f, in, p->dlid, &p->dgid);
	if (!g || imc_list_empty(&g->atts)) {
		fab_drop(f, p, in, IMC_DROP_NO_QP);
		return;
	}
	l = g->atts.next;
	if (l->next == &g->atts) {
		in->mc_qp = imc_list_entry(l, struct att, glink)->qp;
		in->mc_mlid = g->mlid;
		in->mc_mgid = g->mgid;
	}
	for (; l->next != &g->atts; l = l->next)
		qp_rx(f, imc_list_entry(l, struct att, glink)->qp,
		      fab_pkt_ref(p), now);
	qp_rx(f, imc_list_entry(l, struct att, glink)->qp, p, now);
}

/* p reached in: the far end of a cable (hop), or its own port, looped
 * back. */
static void arrive(struct imc_fabric *f, struct pkt *p, struct port *in,
		   imc_time_t now, bool hop)
{
	if (hop) {
		f->tot.hops++;
		in->c.rx_packets++;
		in->c.rx_bytes += p->wire;
		fab_trace_at(f, now, TR_HOP, in, p->serial);
	}
	if (in->state != IMC_PORT_ACTIVE) {
		fab_drop(f, p, in, IMC_DROP_PORT_STATE);
		return;
	}
	/* Only HCA ports have h: no need to read the node. */
	if (!in->h)
		forward(f, p, in, now);
	else
		deliver(f, p, in, now);
}

/* A direction's timer: its first datagrams arrived. Forwarding never
 * sends into the direction a datagram came by, so d's ring only shrinks
 * here. */
void fab_dir_fire(struct imc_timer *t)
{
	struct dir *d = imc_container_of(t, struct dir, t);
	struct imc_fabric *f = d->f;
	imc_time_t now = imc_loop_now(f->loop);

	while (d->rlen && d->ring[d->rhead].at <= now) {
		struct pkt *p = d->ring[d->rhead].p;

		d->rhead = (d->rhead + 1) & d->rmask;
		d->rlen--;
		arrive(f, p, d->to, now, true);
	}
	if (d->rlen)
		imc_timer_arm(f->loop, &d->t, d->ring[d->rhead].at);
}

/* A pend's timer: held back on a cable, or looped back. */
static void pend_fire(struct imc_timer *t)
{
	struct pend *e = imc_container_of(t, struct pend, t);
	struct imc_fabric *f = e->f;
	struct pkt *p = e->p;
	struct port *to = e->to;
	bool hop = e->state == PEND_HELD;

	imc_list_del(&e->link);
	pend_put(f, e);
	arrive(f, p, to, imc_loop_now(f->loop), hop);
}

/* Drops what is in flight on d: the cable went down under it. */
void fab_dir_flush(struct imc_fabric *f, struct dir *d)
{
	imc_timer_cancel(f->loop, &d->t);
	while (d->rlen) {
		struct pkt *p = d->ring[d->rhead].p;

		d->rhead = (d->rhead + 1) & d->rmask;
		d->rlen--;
		fab_drop(f, p, d->from, IMC_DROP_LINK_DOWN);
	}
	while (!imc_list_empty(&d->held)) {
		struct pend *e = imc_list_entry(d->held.next, struct pend, link);
		struct pkt *p = e->p;

		imc_list_del(&e->link);
		imc_timer_cancel(f->loop, &e->t);
		pend_put(f, e);
		fab_drop(f, p, d->from, IMC_DROP_LINK_DOWN);
	}
	d->busy_until = 0;
}

static void recv_of(const struct pkt *p, struct imc_ud_recv *r)
{
	r->src_qp = p->sqpn;
	r->slid = p->slid;
	r->dlid = p->dlid;
	r->sl = p->sl;
	r->pkey = p->pkey;
	r->has_grh = p->has_grh;
	if (p->has_grh) {
		r->sgid = p->sgid;
		r->dgid = p->dgid;
	} else {
		memset(&r->sgid, 0, sizeof(r->sgid));
		memset(&r->dgid, 0, sizeof(r->dgid));
	}
	r->flow_label = p->has_grh ? p->flow_label : 0;
	r->tclass = p->has_grh ? p->tclass : 0;
	r->hop_limit = p->has_grh ? p->hop_limit : 0;
	r->data = p->data;
	r->len = p->len;
}

/* The completion timer: runs recv for every datagram queued. A callback
 * may destroy its own QP; fab_qp_free then clears f->cur_qp and the loop
 * stops without touching qp again. */
void fab_done_fire(struct imc_timer *t)
{
	struct imc_qp *qp = imc_container_of(t, struct imc_qp, done);
	struct imc_fabric *f = qp->f;

	while (qp->rq_len) {
		struct pkt *p = rq_pop(qp);
		struct imc_ud_recv r;
		bool gone;

		recv_of(p, &r);
		f->tot.delivered++;
		if (p->dqpn <= 1)
			f->tot.mad_delivered++;
		fab_trace_at(f, imc_loop_now(f->loop), TR_DELIVER, qp->port,
			     p->serial);
		f->cur_qp = qp;
		qp->recv(qp, &r, qp->ctx);
		gone = f->cur_qp != qp;
		f->cur_qp = NULL;
		fab_pkt_unref(f, p);
		if (gone)
			return;
	}
}

/* What is still in flight goes back to the free lists, then all of them
 * are freed; the MFT entries with them. */
void fab_path_free(struct imc_fabric *f)
{
	struct imc_hnode *l;

	for (uint32_t i = 0; f->ports && i < f->nports; i++) {
		struct dir *d = f->ports[i].out;

		if (!d)
			continue;
		for (; d->rlen; d->rlen--, d->rhead = (d->rhead + 1) & d->rmask)
			fab_pkt_unref(f, d->ring[d->rhead].p);
		free(d->ring);
		while (!imc_list_empty(&d->held)) {
			struct pend *e = imc_list_entry(d->held.next,
							struct pend, link);

			imc_list_del(&e->link);
			imc_timer_cancel(f->loop, &e->t);
			fab_pkt_unref(f, e->p);
			pend_put(f, e);
		}
	}
	while (!imc_list_empty(&f->loops)) {
		struct pend *e = imc_list_entry(f->loops.next, struct pend, link);

		imc_list_del(&e->link);
		imc_timer_cancel(f->loop, &e->t);
		fab_pkt_unref(f, e->p);
		pend_put(f, e);
	}
	while (!imc_list_empty(&f->free_pends)) {
		struct pend *e = imc_list_entry(f->free_pends.next, struct pend,
						link);

		imc_list_del(&e->link);
		free(e);
	}
	for (int c = 0; c < 2; c++) {
		while (f->free_pkts[c]) {
			struct pkt *p = f->free_pkts[c];

			f->free_pkts[c] = p->next;
			free(p);
		}
	}
	for (size_t pos = 0; (l = imc_htab_take(&f->mft, &pos));)
		free(imc_container_of(l, struct mft_ent, hl));
	imc_htab_fini(&f->mft);
}
