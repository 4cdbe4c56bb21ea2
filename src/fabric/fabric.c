/* The embedded fabric: create and destroy, the built-in SM (its sweep
 * brings the ports up), the events and faults an SM or a test causes
 * (cables, LIDs, the SM's port, P_Keys), counters and the trace hash.
 * The runtime's objects and the split of its files: fabric_int.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "util/config.h"

/* ---- names ---- */

unsigned imc_mtu_bytes(unsigned mtu_code)
{
	if (mtu_code < IMC_MTU_256 || mtu_code > IMC_MTU_4096)
		return 0;
	return 128u << mtu_code;
}

const char *imc_port_state_str(enum imc_port_state s)
{
	switch (s) {
	case IMC_PORT_DOWN:
		return "DOWN";
	case IMC_PORT_INIT:
		return "INIT";
	case IMC_PORT_ARMED:
		return "ARMED";
	case IMC_PORT_ACTIVE:
		return "ACTIVE";
	}
	return "?";
}

const char *imc_port_event_str(enum imc_port_event ev)
{
	switch (ev) {
	case IMC_PORT_EV_ACTIVE:
		return "active";
	case IMC_PORT_EV_DOWN:
		return "down";
	case IMC_PORT_EV_LID_CHANGE:
		return "lid-change";
	case IMC_PORT_EV_SM_CHANGE:
		return "sm-change";
	case IMC_PORT_EV_CLIENT_REREGISTER:
		return "client-reregister";
	case IMC_PORT_EV_PKEY_CHANGE:
		return "pkey-change";
	}
	return "?";
}

const char *imc_drop_str(enum imc_drop d)
{
	static const char *const names[IMC_DROP__COUNT] = {
		[IMC_DROP_LINK_DOWN] = "link-down",
		[IMC_DROP_LOSS] = "loss",
		[IMC_DROP_NO_ROUTE] = "no-route",
		[IMC_DROP_NO_MFT] = "no-mft",
		[IMC_DROP_PORT_STATE] = "port-state",
		[IMC_DROP_DLID] = "dlid",
		[IMC_DROP_PKEY] = "pkey",
		[IMC_DROP_QKEY] = "qkey",
		[IMC_DROP_NO_QP] = "no-qp",
		[IMC_DROP_RQ_FULL] = "rq-full",
		[IMC_DROP_MTU] = "mtu",
	};

	if ((unsigned)d >= IMC_DROP__COUNT)
		return "?";
	return names[d];
}

void imc_fabric_config_default(struct imc_fabric_config *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->link.latency = 100;
	c->link.bits_per_sec = 0;
	c->mtu = IMC_MTU_2048;
	c->rate = 7;                      /* 40 Gb/s, IBA 15.2.5.16 rate code */
	c->rq_depth = 512;
	c->subnet_prefix = 0xfe80000000000000ull;
	c->sm_sweep_delay = IMC_NSEC_PER_MSEC;
}

/* ---- the SM ---- */

/* Copies LIDs and LFTs from the subnet after it routed. */
static void sync_subnet(struct imc_fabric *f)
{
	f->sm_lid = imc_subnet_sm_lid(f->sn);
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct node *n = &f->nodes[i];

		if (n->type == IMC_NODE_SWITCH) {
			size_t len = 0;
			const uint8_t *lft = imc_subnet_lft_table(f->sn, i, &len);
			int lid = imc_subnet_lid(f->sn, i, 0);

			n->lid = lid > 0 ? (uint16_t)lid : 0;
			for (unsigned p = 0; p <= n->nports; p++)
				n->port[p].lid = n->lid;
			if (len > n->lft_len && fab_lft_grow(n, len))
				len = n->lft_len;
			if (lft && len)
				memcpy(n->lft, lft, len);
			n->lft_len = lft ? len : 0;
		} else {
			for (unsigned p = 1; p <= n->nports; p++) {
				int lid = imc_subnet_lid(f->sn, i, p);

				n->port[p].lid = lid > 0 ? (uint16_t)lid : 0;
			}
		}
	}
}

/* Brings up every port whose cable is up: the end of a sweep. An HCA
 * port needs a LID (the SM reached it). */
static void activate(struct imc_fabric *f)
{
	for (uint32_t i = 0; i < f->nports; i++) {
		struct port *p = &f->ports[i];

		if (p->num == 0 && p->node->type == IMC_NODE_SWITCH) {
			/* The management port is up once the SM knows it. */
			if (p->lid)
				fab_port_state(f, p, IMC_PORT_ACTIVE);
			continue;
		}
		if (!p->out || !p->out->up || p->state == IMC_PORT_ACTIVE)
			continue;
		if (p->h && !p->lid)
			continue;
		fab_port_state(f, p, IMC_PORT_ACTIVE);
	}
}

static void sweep_fire(struct imc_timer *t)
{
	struct imc_fabric *f = imc_container_of(t, struct imc_fabric, sweep);

	imc_subnet_sweep(f->sn);
	sync_subnet(f);
	activate(f);
}

/* External SM: a cable that is up trains to LinkUp, and its ports wait
 * in INIT for the SM (IBA 7.2); a switch's port 0 is INIT too. */
static void init_ports(struct imc_fabric *f)
{
	for (uint32_t i = 0; i < f->nports; i++) {
		struct port *p = &f->ports[i];

		if ((p->num == 0 && p->node->type == IMC_NODE_SWITCH) ||
		    (p->out && p->out->up))
			fab_port_state(f, p, IMC_PORT_INIT);
	}
}

int imc_fabric_bring_up(struct imc_fabric *f)
{
	int rc;

	if (f->cfg.external_sm) {
		init_ports(f);
		return 0;
	}
	rc = imc_subnet_sweep(f->sn);

	if (rc < 0 && rc != -ENOSPC)
		return rc;
	sync_subnet(f);
	activate(f);
	return rc < 0 ? rc : 0;
}

/* ---- create and destroy ---- */

static bool config_ok(const struct imc_fabric_config *c)
{
	return fab_params_ok(&c->link) && imc_mtu_bytes(c->mtu) && c->rate &&
	       c->rate <= 0x3f && c->rq_depth &&
	       c->sm_sweep_delay <= IMC_TIME_LIMIT;
}

void *fab_zalloc64(size_t n, size_t size)
{
	void *p;

	if (n > SIZE_MAX / size)
		return NULL;
	p = aligned_alloc(64, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

static int build(struct imc_fabric *f)
{
	const struct imc_topo *t = f->topo;
	uint32_t np = 0, nh = 0, nd = 0, gi = 0, hi = 0, di = 0;
	struct imc_rng root;
	int err;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		np += tn->nports + 1u;
		for (unsigned p = 1; p <= tn->nports; p++) {
			if (tn->port[p].peer != IMC_TOPO_NONE)
				nd++;
			if (tn->type == IMC_NODE_HCA)
				nh++;
		}
	}
	f->nnodes = t->nnodes;
	f->nodes = calloc(t->nnodes ? t->nnodes : 1, sizeof(*f->nodes));
	f->ports = fab_zalloc64(np ? np : 1, sizeof(*f->ports));
	f->dirs = fab_zalloc64(nd ? nd : 1, sizeof(*f->dirs));
	f->hports = calloc(nh ? nh : 1, sizeof(*f->hports));
	if (!f->nodes || !f->ports || !f->dirs || !f->hports)
		return -ENOMEM;
	f->nports = np;
	f->nhports = nh;
	err = imc_htab_init(&f->by_guid, 64);
	if (!err)
		err = imc_htab_init(&f->qps, 64);
	if (!err)
		err = imc_htab_init(&f->mft, 64);
	if (!err)
		err = imc_htab_init(&f->grps, 64);
	if (err)
		return err;

	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];
		struct node *n = &f->nodes[i];

		n->type = tn->type;
		n->idx = i;
		n->nports = tn->nports;
		n->port = &f->ports[gi];
		for (unsigned p = 0; p <= tn->nports; p++) {
			struct port *po = &f->ports[gi];

			po->node = n;
			po->gidx = gi++;
			po->num = (uint8_t)p;
			po->state = IMC_PORT_DOWN;
			po->mtu = (uint8_t)f->cfg.mtu;
			po->mtu_bytes = imc_mtu_bytes(f->cfg.mtu);
			po->rate = (uint8_t)f->cfg.rate;
			if (tn->type == IMC_NODE_HCA && p > 0) {
				struct hport *h = &f->hports[hi++];

				h->f = f;
				h->port = po;
				h->npkeys = 1;
				h->pkeys[0] = IMC_PKEY_DEFAULT;
				h->next_qpn = 2;
				imc_timer_init(&h->ev_timer, fab_ev_fire);
				po->h = h;
				imc_htab_insert(&f->by_guid, &h->gl,
						imc_mix64(tn->port[p].guid));
			}
		}
	}

	/* Streams split in a fixed order: by node index, then port. */
	imc_rng_seed(&root, f->cfg.seed);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct imc_topo_node *tn = &t->node[i];

		for (unsigned p = 1; p <= tn->nports; p++) {
			const struct imc_topo_port *tp = &tn->port[p];
			struct dir *d;

			if (tp->peer == IMC_TOPO_NONE)
				continue;
			if (tp->peer >= t->nnodes ||
			    tp->peer_port > t->node[tp->peer].nports)
				return -EINVAL;
			d = &f->dirs[di++];
			d->from = &f->nodes[i].port[p];
			d->to = &f->nodes[tp->peer].port[tp->peer_port];
			d->up = true;
			d->f = f;
			imc_list_init(&d->held);
			imc_timer_init(&d->t, fab_dir_fire);
			fab_dir_params(d, &f->cfg.link, tp->width);
			imc_rng_split(&root, &d->rng);
			d->from->out = d;
		}
	}
	return 0;
}

int imc_fabric_create(const struct imc_topo *topo, struct imc_loop *loop,
		      const struct imc_fabric_config *cfg,
		      struct imc_fabric **out)
{
	struct imc_fabric_config def;
	struct imc_fabric *f;
	int err;

	*out = NULL;
	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_fabric_config_default);
	if (!topo || !loop || !config_ok(cfg))
		return -EINVAL;
	if (topo->sm_node >= topo->nnodes && !cfg->external_sm)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	imc_list_init(&f->qp_list);
	imc_list_init(&f->free_pends);
	imc_list_init(&f->loops);
	f->topo = topo;
	f->loop = loop;
	f->cfg = *cfg;
	f->sm_node = topo->sm_node;
	f->sm_port = topo->sm_port;
	imc_timer_init(&f->sweep, sweep_fire);
	err = imc_subnet_create(topo, &f->sn);
	if (!err)
		err = build(f);
	if (!err) {
		f->frame = malloc(FRAME_MAX);
		if (!f->frame)
			err = -ENOMEM;
	}
	if (!err && cfg->external_sm) {
		f->lid_port = calloc(IMC_LID_UNICAST_MAX + 1,
				     sizeof(*f->lid_port));
		if (!f->lid_port)
			err = -ENOMEM;
	}
	if (!err)
		err = fab_mad_create(f, &f->mad);
	if (err) {
		imc_fabric_destroy(f);
		return err;
	}
	/* The seed acts on the trace only through the fault streams. */
	f->hash = 0xcbf29ce484222325ull;
	*out = f;
	return 0;
}

void imc_fabric_destroy(struct imc_fabric *f)
{
	if (!f)
		return;
	fab_mad_destroy(f->mad);
	f->mad = NULL;
	free(f->lid_port);
	imc_timer_cancel(f->loop, &f->sweep);
	for (uint32_t i = 0; f->ports && i < f->nports; i++)
		if (f->ports[i].out)
			imc_timer_cancel(f->loop, &f->ports[i].out->t);
	while (!imc_list_empty(&f->qp_list))
		fab_qp_free(imc_list_entry(f->qp_list.next, struct imc_qp,
					   link));
	for (uint32_t i = 0; f->hports && i < f->nhports; i++) {
		struct hport *h = &f->hports[i];

		imc_timer_cancel(f->loop, &h->ev_timer);
		free(h->evq);
		for (struct imc_port_watch *w = h->w_head, *next; w; w = next) {
			next = w->next;
			w->next = w->prev = NULL;
			w->node = IMC_TOPO_NONE;
		}
	}
	fab_path_free(f);
	for (uint32_t i = 0; f->nodes && i < f->nnodes; i++)
		free(f->nodes[i].lft);
	imc_htab_fini(&f->qps);
	imc_htab_fini(&f->grps);
	imc_htab_fini(&f->by_guid);
	free(f->frame);
	free(f->nodes);
	free(f->ports);
	free(f->dirs);
	free(f->hports);
	imc_subnet_destroy(f->sn);
	free(f);
}

const struct imc_topo *imc_fabric_topo(const struct imc_fabric *f)
{
	return f->topo;
}

struct imc_loop *imc_fabric_loop(const struct imc_fabric *f)
{
	return f->loop;
}

/* ---- SM-side events and faults ---- */

int imc_fabric_link_set(struct imc_fabric *f, uint32_t node, unsigned port,
			bool up)
{
	struct port *p = fab_port_at(f, node, port);
	struct dir *d, *back;
	int err;

	if (!p || port == 0 || !p->out)
		return -EINVAL;
	d = p->out;
	back = d->to->out;
	if (d->up == up)
		return 0;
	err = imc_subnet_link_set(f->sn, node, port, up);
	if (err)
		return err;
	/* The PortStateChange a trap reports needs the new link state. */
	d->up = back->up = up;
	if (up) {
		fab_port_state(f, d->from, IMC_PORT_INIT);
		fab_port_state(f, d->to, IMC_PORT_INIT);
	} else {
		fab_port_state(f, d->from, IMC_PORT_DOWN);
		fab_port_state(f, d->to, IMC_PORT_DOWN);
		fab_dir_flush(f, d);
		fab_dir_flush(f, back);
	}
	/* An external SM hears of it by Trap 128 (fab_mad_port_changed). */
	if (f->cfg.external_sm)
		return 0;
	/* Changes within one sweep delay share a sweep: the SM reacts to
	 * the last trap, as a debounced heavy sweep. */
	imc_timer_arm(f->loop, &f->sweep,
		      imc_loop_now(f->loop) + f->cfg.sm_sweep_delay);
	return 0;
}

bool imc_fabric_link_up(const struct imc_fabric *f, uint32_t node,
			unsigned port)
{
	const struct port *p = fab_port_at(f, node, port);

	return p && port && p->out && p->out->up;
}

int imc_fabric_link_params_set(struct imc_fabric *f, uint32_t node,
			       unsigned port, const struct imc_link_params *lp)
{
	struct port *p = fab_port_at(f, node, port);
	const struct imc_topo_port *tp;

	if (!p || port == 0 || !p->out || !lp || !fab_params_ok(lp))
		return -EINVAL;
	tp = &f->topo->node[node].port[port];
	fab_dir_params(p->out, lp, tp->width);
	fab_dir_params(p->out->to->out, lp, tp->width);
	return 0;
}

static void post_all_active(struct imc_fabric *f, enum imc_port_event ev)
{
	for (uint32_t i = 0; i < f->nhports; i++) {
		struct hport *h = &f->hports[i];

		if (h->port->state == IMC_PORT_ACTIVE)
			fab_post(f, h, ev);
	}
}

static void sm_lid_changed(struct imc_fabric *f)
{
	for (uint32_t i = 0; i < f->nports; i++)
		if (f->ports[i].state == IMC_PORT_ACTIVE)
			f->ports[i].sm_lid = f->sm_lid;
	post_all_active(f, IMC_PORT_EV_SM_CHANGE);
}

int imc_fabric_sm_move(struct imc_fabric *f, uint32_t node, unsigned port)
{
	struct hport *h = fab_hca_port(f, node, port);
	int err;

	if (f->cfg.external_sm)
		return -EOPNOTSUPP;
	if (!h || !h->port->lid)
		return -EINVAL;
	if (node == f->sm_node && port == f->sm_port)
		return 0;
	err = imc_subnet_sm_set(f->sn, node, port);
	if (err)
		return err;
	f->sm_node = node;
	f->sm_port = port;
	f->sm_lid = h->port->lid;
	sm_lid_changed(f);
	return 0;
}

int imc_fabric_sm_port(const struct imc_fabric *f, uint32_t *node,
		       unsigned *port)
{
	*node = f->sm_node;
	*port = f->sm_port;
	return 0;
}

int imc_fabric_client_reregister(struct imc_fabric *f, uint32_t node,
				 unsigned port)
{
	struct hport *h;

	if (node == IMC_TOPO_NONE) {
		post_all_active(f, IMC_PORT_EV_CLIENT_REREGISTER);
		return 0;
	}
	h = fab_hca_port(f, node, port);
	if (!h)
		return -EINVAL;
	if (h->port->state != IMC_PORT_ACTIVE)
		return -ENETDOWN;
	fab_post(f, h, IMC_PORT_EV_CLIENT_REREGISTER);
	return 0;
}

int imc_fabric_lid_change(struct imc_fabric *f, uint32_t node, unsigned port,
			  uint16_t lid)
{
	struct hport *h = fab_hca_port(f, node, port);
	uint16_t old_sm = f->sm_lid;
	int err;

	if (f->cfg.external_sm)
		return -EOPNOTSUPP;
	if (!h || lid == 0 || lid > IMC_LID_UNICAST_MAX)
		return -EINVAL;
	if (h->port->lid == lid)
		return 0;
	err = imc_subnet_lid_set(f->sn, node, port, lid);
	if (err)
		return err;
	err = imc_subnet_route(f->sn);
	sync_subnet(f);
	if (h->port->state == IMC_PORT_ACTIVE)
		fab_post(f, h, IMC_PORT_EV_LID_CHANGE);
	if (f->sm_lid != old_sm)
		sm_lid_changed(f);
	return err;
}

int imc_fabric_pkey_set(struct imc_fabric *f, uint32_t node, unsigned port,
			const uint16_t *pkeys, unsigned n)
{
	struct hport *h = fab_hca_port(f, node, port);

	if (!h || n > IMC_PKEY_TABLE_MAX || (n && !pkeys))
		return -EINVAL;
	if (n)
		memcpy(h->pkeys, pkeys, n * sizeof(pkeys[0]));
	h->npkeys = n;
	fab_post(f, h, IMC_PORT_EV_PKEY_CHANGE);
	return 0;
}

/* ---- counters, capture, determinism ---- */

int imc_fabric_port_counters(const struct imc_fabric *f, uint32_t node,
			     unsigned port, struct imc_port_counters *out)
{
	const struct port *p = fab_port_at(f, node, port);

	if (!p || (port == 0 && f->nodes[node].type == IMC_NODE_HCA))
		return -EINVAL;
	*out = p->c;
	return 0;
}

int imc_fabric_link_counters(const struct imc_fabric *f, uint32_t node,
			     unsigned port, struct imc_link_counters *out)
{
	const struct port *p = fab_port_at(f, node, port);

	if (!p || port == 0 || !p->out)
		return -EINVAL;
	*out = p->out->c;
	return 0;
}

void imc_fabric_totals(const struct imc_fabric *f,
		       struct imc_fabric_totals *out)
{
	*out = f->tot;
}

int imc_fabric_capture(struct imc_fabric *f, struct imc_pcap *p,
		       uint32_t node, unsigned port)
{
	if (p && node != IMC_TOPO_NONE &&
	    (!fab_port_at(f, node, port) || port == 0))
		return -EINVAL;
	if (p && f->cap)
		return -EBUSY;
	f->cap = p;
	f->cap_node = node;
	f->cap_port = port;
	return 0;
}

uint64_t imc_fabric_trace_hash(const struct imc_fabric *f)
{
	return f->hash;
}
