/* The embedded fabric's ports: state, events and watches, attributes,
 * and what the SMA reads and sets (fabric_int.h).
 *
 * Port state (IBA 14.2.5.6), changed only by fab_port_state():
 *
 *   from \ to   DOWN          INIT          ARMED        ACTIVE
 *   DOWN        -             cable up      -            SM sweep
 *   INIT        cable down    -             SubnSet      SM sweep
 *   ARMED       cable down,   -             -            SubnSet
 *               SubnSet
 *   ACTIVE      cable down,   -             -            -
 *               SubnSet
 *
 * The built-in SM arms and activates in one step; an external SM goes
 * through ARMED with SubnSet(PortInfo) (IBA 14.2.5.6, fab_port_state_set).
 * Watches of an HCA port hear DOWN when it leaves ACTIVE and ACTIVE when
 * it enters it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "ibmcast/gid.h"
#include "util/vec.h"

/* ---- ports and events ---- */

void fab_post(struct imc_fabric *f, struct hport *h, enum imc_port_event ev)
{
	if (h->ev_len == h->ev_cap) {
		unsigned cap = h->ev_cap ? h->ev_cap * 2 : 4;

		if (imc_ring_grow(&h->evq, sizeof(*h->evq), h->ev_head,
				  h->ev_len, h->ev_cap, cap))
			return;
		h->ev_cap = cap;
		h->ev_head = 0;
	}
	h->evq[(h->ev_head + h->ev_len) % h->ev_cap] =
		(struct evq_ent){ ev, f->watch_seq };
	h->ev_len++;
	if (!imc_timer_armed(&h->ev_timer))
		imc_timer_arm(f->loop, &h->ev_timer, imc_loop_now(f->loop));
}

/* Runs the events queued before this firing; events posted by the
 * callbacks wait for the next one. A callback may unwatch any watch:
 * imc_fabric_port_unwatch moves w_iter past the one it removes. */
void fab_ev_fire(struct imc_timer *t)
{
	struct hport *h = imc_container_of(t, struct hport, ev_timer);
	unsigned n = h->ev_len;

	while (n-- && h->ev_len) {
		struct evq_ent e = h->evq[h->ev_head];
		struct imc_port_watch *w;

		h->ev_head = (h->ev_head + 1) % h->ev_cap;
		h->ev_len--;
		for (w = h->w_head; w; w = h->w_iter) {
			h->w_iter = w->next;
			if (w->seq <= e.seq)
				w->cb(w, e.ev);
		}
	}
}

static bool port_can(enum imc_port_state from, enum imc_port_state to)
{
	switch (to) {
	case IMC_PORT_DOWN:
		return from != IMC_PORT_DOWN;
	case IMC_PORT_INIT:
		return from == IMC_PORT_DOWN;
	case IMC_PORT_ARMED:
		return from == IMC_PORT_INIT;
	case IMC_PORT_ACTIVE:
		return from != IMC_PORT_ACTIVE;
	}
	return false;
}

void fab_port_state(struct imc_fabric *f, struct port *p,
		    enum imc_port_state s)
{
	enum imc_port_state old = p->state;

	if (!port_can(old, s))
		return;
	p->state = s;
	if (s == IMC_PORT_ACTIVE && !f->cfg.external_sm)
		p->sm_lid = f->sm_lid;
	if (f->mad)
		fab_mad_port_changed(f->mad, p->node->idx, p->num, old, s);
	if (!p->h)
		return;
	if (s == IMC_PORT_ACTIVE)
		fab_post(f, p->h, IMC_PORT_EV_ACTIVE);
	else if (old == IMC_PORT_ACTIVE)
		fab_post(f, p->h, IMC_PORT_EV_DOWN);
}

/* ---- ports ---- */

void fab_port_gid(const struct imc_fabric *f, const struct port *p,
		  struct imc_gid *gid)
{
	imc_put64(gid->raw, f->cfg.subnet_prefix);
	imc_put64(gid->raw + 8,
		  f->topo->node[p->node->idx].port[p->h ? p->num : 0].guid);
}

int imc_fabric_port_attr(const struct imc_fabric *f, uint32_t node,
			 unsigned port, struct imc_port_attr *out)
{
	const struct port *p = fab_port_at(f, node, port);
	const struct imc_topo_node *tn;

	if (!p || (p->node->type == IMC_NODE_HCA && port == 0))
		return -EINVAL;
	tn = &f->topo->node[node];
	memset(out, 0, sizeof(*out));
	out->state = p->state;
	out->lid = p->lid;
	out->sm_lid = p->sm_lid;
	/* A switch's ports share the GUID of its port 0. */
	out->guid = tn->port[p->h ? port : 0].guid;
	if (!out->guid)
		out->guid = tn->guid;
	imc_gid_set(&out->gid, f->cfg.subnet_prefix, out->guid);
	out->mtu = p->mtu;
	out->rate = p->rate;
	if (p->h) {
		out->npkeys = p->h->npkeys;
		memcpy(out->pkeys, p->h->pkeys,
		       p->h->npkeys * sizeof(out->pkeys[0]));
	} else {
		out->npkeys = 1;
		out->pkeys[0] = IMC_PKEY_DEFAULT;
	}
	return 0;
}

int imc_fabric_port_by_gid(const struct imc_fabric *f,
			   const struct imc_gid *gid, uint32_t *node,
			   unsigned *port)
{
	uint64_t guid = imc_get64(gid->raw + 8), h = imc_mix64(guid);

	if (imc_get64(gid->raw) != f->cfg.subnet_prefix)
		return -ENOENT;
	for (struct imc_hnode *l = imc_htab_bucket(&f->by_guid, h); l;
	     l = l->next) {
		struct hport *hp = imc_container_of(l, struct hport, gl);
		const struct port *p = hp->port;

		if (l->hash == h &&
		    f->topo->node[p->node->idx].port[p->num].guid == guid) {
			*node = p->node->idx;
			*port = p->num;
			return 0;
		}
	}
	return -ENOENT;
}

int imc_fabric_port_by_lid(const struct imc_fabric *f, uint16_t lid,
			   uint32_t *node, unsigned *port)
{
	uint32_t n;
	unsigned p;

	if (lid == 0 || lid > IMC_LID_UNICAST_MAX)
		return -ENOENT;
	if (f->lid_port) {
		const struct port *po;

		if (!f->lid_port[lid])
			return -ENOENT;
		po = &f->ports[f->lid_port[lid] - 1];
		n = po->node->idx;
		p = po->num;
	} else if (imc_subnet_lid_owner(f->sn, lid, &n, &p)) {
		return -ENOENT;
	}
	if (f->nodes[n].type != IMC_NODE_HCA)
		return -ENOENT;
	*node = n;
	*port = p;
	return 0;
}

int imc_fabric_port_mtu_set(struct imc_fabric *f, uint32_t node,
			    unsigned port, unsigned mtu)
{
	struct port *p = fab_port_at(f, node, port);

	if (!p || port == 0 || !imc_mtu_bytes(mtu))
		return -EINVAL;
	p->mtu = (uint8_t)mtu;
	p->mtu_bytes = imc_mtu_bytes(mtu);
	return 0;
}

int imc_fabric_port_watch(struct imc_fabric *f, uint32_t node, unsigned port,
			  struct imc_port_watch *w,
			  void (*cb)(struct imc_port_watch *w,
				     enum imc_port_event ev))
{
	struct hport *h = fab_hca_port(f, node, port);

	if (!h || !cb)
		return -EINVAL;
	w->cb = cb;
	w->node = node;
	w->port = (uint8_t)port;
	w->seq = ++f->watch_seq;
	w->next = NULL;
	w->prev = h->w_tail;
	if (h->w_tail)
		h->w_tail->next = w;
	else
		h->w_head = w;
	h->w_tail = w;
	return 0;
}

void imc_fabric_port_unwatch(struct imc_fabric *f, struct imc_port_watch *w)
{
	struct hport *h = fab_hca_port(f, w->node, w->port);

	if (!h || (!w->prev && h->w_head != w))
		return;
	if (h->w_iter == w)
		h->w_iter = w->next;
	if (w->prev)
		w->prev->next = w->next;
	else
		h->w_head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		h->w_tail = w->prev;
	w->next = w->prev = NULL;
	w->node = IMC_TOPO_NONE;
}

/* ---- for the SMA and SMP transport (fabric_int.h) ---- */

int fab_port_view(const struct imc_fabric *f, uint32_t node, unsigned port,
		  struct fab_port_view *v)
{
	const struct port *p = fab_port_at(f, node, port);
	const struct imc_topo_port *tp;

	if (!p)
		return -EINVAL;
	tp = &f->topo->node[node].port[port];
	v->type = p->node->type;
	v->nports = p->node->nports;
	v->gidx = p->gidx;
	v->state = p->state;
	v->lid = p->lid;
	v->sm_lid = p->sm_lid;
	v->mtu = p->mtu;
	v->width = tp->width ? tp->width : 4;
	v->cabled = p->out != NULL;
	v->link_up = p->out && p->out->up;
	v->peer_node = p->out ? p->out->to->node->idx : IMC_TOPO_NONE;
	v->peer_port = p->out ? p->out->to->num : 0;
	v->latency = p->out ? p->out->latency : 0;
	return 0;
}

uint32_t fab_nports_total(const struct imc_fabric *f)
{
	return f->nports;
}

struct fab_mad *fab_mad_of(const struct imc_fabric *f)
{
	return f->mad;
}

bool fab_external_sm(const struct imc_fabric *f)
{
	return f->cfg.external_sm;
}

int fab_port_state_set(struct imc_fabric *f, uint32_t node, unsigned port,
		       enum imc_port_state s)
{
	struct port *p = fab_port_at(f, node, port);

	if (!p)
		return -EINVAL;
	if (s == IMC_PORT_DOWN) {
		/* The link goes down and trains again (IBA 14.2.5.6: a Set
		 * to Down): both ends pass through DOWN back to INIT while
		 * the cable is up. */
		struct port *peer = p->out ? p->out->to : NULL;

		fab_port_state(f, p, IMC_PORT_DOWN);
		if (peer)
			fab_port_state(f, peer, IMC_PORT_DOWN);
		if ((p->out && p->out->up) || port == 0)
			fab_port_state(f, p, IMC_PORT_INIT);
		if (peer && p->out->up)
			fab_port_state(f, peer, IMC_PORT_INIT);
		return 0;
	}
	if (p->state == s)
		return 0;
	if ((s == IMC_PORT_ARMED && p->state != IMC_PORT_INIT) ||
	    (s == IMC_PORT_ACTIVE && p->state != IMC_PORT_ARMED) ||
	    s == IMC_PORT_INIT)
		return -EINVAL;
	fab_port_state(f, p, s);
	return 0;
}

int fab_port_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
		     uint16_t lid)
{
	struct port *p = fab_port_at(f, node, port);
	struct node *n;
	uint16_t old;

	if (!p || lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	n = p->node;
	if (n->type == IMC_NODE_SWITCH)
		p = &n->port[0];
	old = p->lid;
	if (old == lid)
		return 0;
	if (f->lid_port) {
		/* An SMA cannot know whether another port holds lid (an SM
		 * swapping two LIDs sets one before the other): the LID
		 * lookup names the port set last. */
		if (old && f->lid_port[old] == p->gidx + 1)
			f->lid_port[old] = 0;
		if (lid)
			f->lid_port[lid] = p->gidx + 1;
	}
	if (n->type == IMC_NODE_SWITCH) {
		n->lid = lid;
		for (unsigned i = 0; i <= n->nports; i++)
			n->port[i].lid = lid;
		/* The management port is up once the SM knows it. */
		if (lid)
			fab_port_state(f, &n->port[0], IMC_PORT_ACTIVE);
		return 0;
	}
	p->lid = lid;
	if (p->state == IMC_PORT_ACTIVE)
		fab_post(f, p->h, IMC_PORT_EV_LID_CHANGE);
	return 0;
}

int fab_port_sm_lid_set(struct imc_fabric *f, uint32_t node, unsigned port,
			uint16_t sm_lid)
{
	struct port *p = fab_port_at(f, node, port);

	if (!p)
		return -EINVAL;
	if (p->sm_lid == sm_lid)
		return 0;
	p->sm_lid = sm_lid;
	if (p->h && p->state == IMC_PORT_ACTIVE)
		fab_post(f, p->h, IMC_PORT_EV_SM_CHANGE);
	return 0;
}

void fab_port_post(struct imc_fabric *f, uint32_t node, unsigned port,
		   enum imc_port_event ev)
{
	struct hport *h = fab_hca_port(f, node, port);

	if (h)
		fab_post(f, h, ev);
}

int fab_port_pkeys(const struct imc_fabric *f, uint32_t node, unsigned port,
		   uint16_t *pkeys, unsigned *n)
{
	const struct hport *h = fab_hca_port(f, node, port);

	if (!h) {
		pkeys[0] = IMC_PKEY_DEFAULT;
		*n = 1;
		return 0;
	}
	memcpy(pkeys, h->pkeys, h->npkeys * sizeof(pkeys[0]));
	*n = h->npkeys;
	return 0;
}

int fab_lft_block_get(const struct imc_fabric *f, uint32_t sw, unsigned block,
		      uint8_t out[64])
{
	const struct node *n;
	size_t base = (size_t)block * IMC_LFT_BLOCK;

	if (sw >= f->nnodes || f->nodes[sw].type != IMC_NODE_SWITCH)
		return -EINVAL;
	n = &f->nodes[sw];
	for (unsigned i = 0; i < IMC_LFT_BLOCK; i++)
		out[i] = base + i < n->lft_len ? n->lft[base + i] :
						 IMC_PORT_NONE;
	return 0;
}

int fab_lft_grow(struct node *n, size_t len)
{
	uint8_t *nl = realloc(n->lft, len);

	if (!nl)
		return -ENOMEM;
	memset(nl + n->lft_len, IMC_PORT_NONE, len - n->lft_len);
	n->lft = nl;
	n->lft_len = len;
	return 0;
}

int fab_lft_block_set(struct imc_fabric *f, uint32_t sw, unsigned block,
		      const uint8_t in[64])
{
	struct node *n;
	size_t base = (size_t)block * IMC_LFT_BLOCK;

	if (sw >= f->nnodes || f->nodes[sw].type != IMC_NODE_SWITCH ||
	    base + IMC_LFT_BLOCK > IMC_LID_UNICAST_MAX + 1)
		return -EINVAL;
	n = &f->nodes[sw];
	if (base + IMC_LFT_BLOCK > n->lft_len &&
	    fab_lft_grow(n, base + IMC_LFT_BLOCK))
		return -ENOMEM;
	memcpy(n->lft + base, in, IMC_LFT_BLOCK);
	return 0;
}

void fab_trace(struct imc_fabric *f, unsigned ev, uint32_t gidx,
	       uint64_t serial)
{
	fab_trace_at(f, imc_loop_now(f->loop), ev, &f->ports[gidx], serial);
}

