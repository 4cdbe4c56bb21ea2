/* The SA on the embedded fabric's SM port (see ibmcast/sa_fabric.h).
 *
 * Sweep state, per watched HCA port: a DOWN event marks the port; the
 * sweep (one timer, pushed back by each change, as the fabric's SM
 * debounces) drops the marked ports whose cable is still down from the
 * SA and then brings the trees in line with the cables up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mad.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa_fabric.h"
#include "util/bytes.h"

struct pwatch {
	struct imc_port_watch w;
	struct imc_sa_fabric *sf;
	bool went_down;
};

struct imc_sa_fabric {
	struct imc_fabric *f;
	struct imc_loop *loop;
	struct imc_sa_fabric_config cfg;
	struct imc_sa *sa;
	struct imc_qp *qp;
	struct imc_mtree *mt;
	uint32_t sm_node;
	unsigned sm_port;
	struct pwatch *pw;
	size_t npw;
	struct imc_timer sweep;
	struct imc_port_attr attr;   /* directory scratch: P_Keys live here */
	struct imc_sa_fabric_stats st;
};

void imc_sa_fabric_config_init(struct imc_sa_fabric_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	imc_sa_config_init(&cfg->sa);
	cfg->sweep_delay = IMC_NSEC_PER_MSEC;
}

/* ---- port directory ---- */

static int dir_fill(struct imc_sa_fabric *sf, uint32_t node, unsigned port,
		    struct imc_sa_port *out)
{
	struct imc_port_attr *a = &sf->attr;

	if (imc_fabric_port_attr(sf->f, node, port, a) ||
	    a->state != IMC_PORT_ACTIVE || !a->lid)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->gid = a->gid;
	out->lid = a->lid;
	out->mtu = (uint8_t)a->mtu;
	out->rate = (uint8_t)a->rate;
	out->switch_port0 = false;
	out->node = node;
	out->port_num = (uint8_t)port;
	out->pkeys = a->pkeys;
	out->n_pkeys = a->npkeys;
	return 0;
}

static int dir_by_gid(void *ctx, const struct imc_gid *gid,
		      struct imc_sa_port *out)
{
	struct imc_sa_fabric *sf = ctx;
	uint32_t node;
	unsigned port;

	if (imc_fabric_port_by_gid(sf->f, gid, &node, &port))
		return -ENOENT;
	return dir_fill(sf, node, port, out);
}

static int dir_by_lid(void *ctx, uint16_t lid, struct imc_sa_port *out)
{
	struct imc_sa_fabric *sf = ctx;
	uint32_t node;
	unsigned port;

	if (imc_fabric_port_by_lid(sf->f, lid, &node, &port))
		return -ENOENT;
	return dir_fill(sf, node, port, out);
}

/* ---- MADs ---- */

static void sa_send(void *ctx, const struct imc_sa_dest *to,
		    const uint8_t *mad, size_t len)
{
	struct imc_sa_fabric *sf = ctx;
	struct imc_ah ah;

	memset(&ah, 0, sizeof(ah));
	ah.dlid = to->dlid;
	ah.sl = to->sl;
	ah.has_grh = to->has_grh;
	ah.dgid = to->dgid;
	ah.flow_label = to->flow_label;
	ah.hop_limit = to->hop_limit;
	ah.tclass = to->tclass;
	if (imc_qp_send(sf->qp, &ah, to->dqpn, to->qkey, mad, len))
		sf->st.send_errors++;
	else
		sf->st.mads_out++;
}

static void other(struct imc_sa_fabric *sf, const struct imc_ud_recv *r)
{
	sf->st.mads_other++;
	if (sf->cfg.other_mad)
		sf->cfg.other_mad(sf->cfg.other_ctx, r);
}

static void qp1_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		     void *ctx)
{
	struct imc_sa_fabric *sf = ctx;
	struct imc_sa_src src;
	int rc;

	(void)qp;
	sf->st.mads_in++;
	/* The SA sends Reports but never takes one (IBA 13.4.8.2): a Report
	 * here is for a client of this port. */
	if (r->len >= 4 && r->data[1] == UMAD_CLASS_SUBN_ADM &&
	    r->data[3] == UMAD_METHOD_REPORT) {
		other(sf, r);
		return;
	}
	memset(&src, 0, sizeof(src));
	src.slid = r->slid;
	src.sqpn = r->src_qp;
	src.pkey = r->pkey;
	src.sl = r->sl;
	src.has_grh = r->has_grh;
	src.sgid = r->sgid;
	src.dgid = r->dgid;
	src.flow_label = r->flow_label;
	src.tclass = r->tclass;
	src.hop_limit = r->hop_limit;
	rc = imc_sa_recv(sf->sa, &src, r->data, r->len);
	if (rc == -ENOMSG || rc == -EPROTONOSUPPORT)
		other(sf, r);
}

/* ---- multicast forwarding ---- */

static bool tree_link_up(void *ctx, uint32_t node, unsigned port)
{
	struct imc_sa_fabric *sf = ctx;

	return imc_fabric_link_up(sf->f, node, port);
}

static void tree_mft_set(void *ctx, uint32_t sw, uint16_t mlid,
			 const struct imc_mtree_mask *ports)
{
	struct imc_sa_fabric *sf = ctx;
	struct imc_portmask m;

	memcpy(m.bits, ports->bits, sizeof(m.bits));
	sf->st.mft_writes++;
	if (imc_fabric_mft_set(sf->f, sw, mlid, &m))
		sf->st.mft_errors++;
}

static int sa_members(void *ctx, uint16_t mlid,
		      const struct imc_sa_member_change *chg)
{
	struct imc_sa_fabric *sf = ctx;
	unsigned port = chg->switch_port0 ? 0 : chg->port_num;
	int rc;

	sf->st.member_changes++;
	if (chg->add)
		rc = imc_mtree_add(sf->mt, mlid, chg->node, port);
	else
		rc = imc_mtree_remove(sf->mt, mlid, chg->node, port);
	/* Already in the state asked for: nothing to undo. */
	if (rc == -EEXIST || rc == -ENOENT)
		rc = 0;
	if (rc < 0) {
		sf->st.member_errors++;
		return rc;
	}
	return 0;
}

/* ---- sweeps ---- */

static void sweep_fire(struct imc_timer *t)
{
	struct imc_sa_fabric *sf = imc_container_of(t, struct imc_sa_fabric,
						    sweep);
	int rc;

	sf->st.sweeps++;
	for (size_t i = 0; i < sf->npw; i++) {
		struct pwatch *p = &sf->pw[i];
		struct imc_port_attr a;

		if (!p->went_down)
			continue;
		p->went_down = false;
		if (imc_fabric_link_up(sf->f, p->w.node, p->w.port) ||
		    imc_fabric_port_attr(sf->f, p->w.node, p->w.port, &a))
			continue;
		imc_sa_port_gone(sf->sa, &a.gid);
		sf->st.ports_gone++;
	}
	rc = sf->cfg.full_rebuild ? imc_mtree_rebuild_all(sf->mt) :
				    imc_mtree_repair_all(sf->mt);
	if (rc >= 0)
		sf->st.sweep_entries += (uint64_t)rc;
	else
		imc_timer_arm_in(sf->loop, &sf->sweep, sf->cfg.sweep_delay);
}

void imc_sa_fabric_links_changed(struct imc_sa_fabric *sf)
{
	imc_timer_arm_in(sf->loop, &sf->sweep, sf->cfg.sweep_delay);
}

static void port_event(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct pwatch *p = imc_container_of(w, struct pwatch, w);

	if (ev == IMC_PORT_EV_DOWN)
		p->went_down = true;
	if (ev == IMC_PORT_EV_DOWN || ev == IMC_PORT_EV_ACTIVE)
		imc_sa_fabric_links_changed(p->sf);
}

int imc_sa_fabric_link_set(struct imc_sa_fabric *sf, uint32_t node,
			   unsigned port, bool up)
{
	int rc = imc_fabric_link_set(sf->f, node, port, up);

	if (!rc)
		imc_sa_fabric_links_changed(sf);
	return rc;
}

/* ---- life cycle ---- */

static int watch_all(struct imc_sa_fabric *sf)
{
	const struct imc_topo *t = imc_fabric_topo(sf->f);
	size_t n = 0;

	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->node[i].type == IMC_NODE_HCA)
			for (unsigned p = 1; p <= t->node[i].nports; p++)
				n += t->node[i].port[p].peer != IMC_TOPO_NONE;
	sf->pw = calloc(n ? n : 1, sizeof(*sf->pw));
	if (!sf->pw)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		if (t->node[i].type != IMC_NODE_HCA)
			continue;
		for (unsigned p = 1; p <= t->node[i].nports; p++) {
			struct pwatch *w = &sf->pw[sf->npw];
			int rc;

			if (t->node[i].port[p].peer == IMC_TOPO_NONE)
				continue;
			w->sf = sf;
			rc = imc_fabric_port_watch(sf->f, i, p, &w->w,
						   port_event);
			if (rc)
				return rc;
			sf->npw++;
		}
	}
	return 0;
}

int imc_sa_fabric_create(struct imc_fabric *f,
			 const struct imc_sa_fabric_config *cfg,
			 struct imc_sa_fabric **out)
{
	static const struct imc_mtree_ops tree_ops = {
		.link_up = tree_link_up,
		.mft_set = tree_mft_set,
	};
	const struct imc_sa_ops sa_ops = {
		.port_by_gid = dir_by_gid,
		.port_by_lid = dir_by_lid,
		.send = sa_send,
		.mcast_members = sa_members,
	};
	struct imc_sa_fabric_config def;
	struct imc_sa_fabric *sf;
	struct imc_sa_config sc;
	struct imc_port_attr a;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg) {
		imc_sa_fabric_config_init(&def);
		cfg = &def;
	}
	if (!f)
		return -EINVAL;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -ENOMEM;
	sf->f = f;
	sf->loop = imc_fabric_loop(f);
	sf->cfg = *cfg;
	imc_timer_init(&sf->sweep, sweep_fire);

	rc = imc_fabric_sm_port(f, &sf->sm_node, &sf->sm_port);
	if (!rc && imc_fabric_topo(f)->node[sf->sm_node].type != IMC_NODE_HCA)
		rc = -EINVAL;
	if (!rc)
		rc = imc_fabric_port_attr(f, sf->sm_node, sf->sm_port, &a);
	if (!rc && !a.lid)
		rc = -EAGAIN;
	if (rc)
		goto fail;
	sc = cfg->sa;
	sc.subnet_prefix = imc_get64(a.gid.raw);
	sc.sa_lid = a.lid;
	sc.sa_gid = a.gid;

	rc = imc_mtree_create(imc_fabric_topo(f), &tree_ops, sf, &sf->mt);
	if (!rc)
		rc = imc_sa_create(sf->loop, &sc, &sa_ops, sf, &sf->sa);
	if (!rc)
		rc = imc_qp_create(f, sf->sm_node, sf->sm_port, IMC_QP1,
				   IMC_QP1_QKEY, IMC_PKEY_DEFAULT, qp1_recv,
				   sf, &sf->qp);
	if (!rc)
		rc = watch_all(sf);
	if (rc)
		goto fail;
	*out = sf;
	return 0;
fail:
	imc_sa_fabric_destroy(sf);
	return rc;
}

void imc_sa_fabric_destroy(struct imc_sa_fabric *sf)
{
	if (!sf)
		return;
	imc_sa_destroy(sf->sa);
	imc_timer_cancel(sf->loop, &sf->sweep);
	for (size_t i = 0; i < sf->npw; i++)
		imc_fabric_port_unwatch(sf->f, &sf->pw[i].w);
	free(sf->pw);
	if (sf->qp)
		imc_qp_destroy(sf->qp);
	imc_mtree_destroy(sf->mt);
	free(sf);
}

struct imc_sa *imc_sa_fabric_sa(const struct imc_sa_fabric *sf)
{
	return sf->sa;
}

struct imc_qp *imc_sa_fabric_qp(const struct imc_sa_fabric *sf)
{
	return sf->qp;
}

const struct imc_mtree *imc_sa_fabric_mtree(const struct imc_sa_fabric *sf)
{
	return sf->mt;
}

void imc_sa_fabric_stats(const struct imc_sa_fabric *sf,
			 struct imc_sa_fabric_stats *out)
{
	*out = sf->st;
}
