/* The join tracker on a port of the embedded fabric (see
 * ibmcast/mcast_fabric.h): a GSI agent feeding an SA client, a transport
 * to the SM's current LID, a port watch and the QP attach ops. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/mcast_fabric.h"
#include "util/config.h"

struct imc_mcast_fabric {
	struct imc_fabric *f;
	uint32_t node;
	unsigned port;
	struct imc_gsi *gsi;
	bool own_gsi;
	struct imc_gsi_agent agent;
	struct imc_sa_client *client;
	struct imc_mcast *t;
	struct imc_port_watch watch;
};

void imc_mcast_fabric_config_init(struct imc_mcast_fabric_config *cfg)
{
	imc_mcast_config_init(&cfg->mcast);
	imc_sa_client_config_init(&cfg->client);
}

/* To QP1 of the SM as the port knows it now (PortInfo:MasterSMLID). */
static int to_sm(void *ctx, const uint8_t *mad, size_t len)
{
	struct imc_mcast_fabric *mf = ctx;
	struct imc_port_attr pa;

	/* A shared GSI its owner destroyed first has forgotten our agent
	 * (gsi.h): nothing more can go out. */
	if (!mf->agent.gsi)
		return -ENETDOWN;
	if (imc_fabric_port_attr(mf->f, mf->node, mf->port, &pa) ||
	    pa.state != IMC_PORT_ACTIVE)
		return -ENETDOWN;
	return imc_gsi_send(mf->gsi, pa.sm_lid, mad, len);
}

static int agent_recv(struct imc_gsi_agent *a, const struct imc_ud_recv *r)
{
	struct imc_mcast_fabric *mf =
		imc_container_of(a, struct imc_mcast_fabric, agent);

	return imc_sa_client_recv(mf->client, r->data, r->len);
}

static int qp_attach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	return imc_qp_attach(qp, mgid, mlid);
}

static int qp_detach(void *ctx, void *qp, const struct imc_gid *mgid,
		     uint16_t mlid)
{
	return imc_qp_detach(qp, mgid, mlid);
}

int imc_mcast_fabric_send(struct imc_qp *qp, const struct imc_mcast_av *av,
			  const void *data, size_t len)
{
	struct imc_ah ah;

	if (!qp || !av)
		return -EINVAL;
	memset(&ah, 0, sizeof(ah));
	ah.dlid = av->dlid;
	ah.sl = av->sl;
	ah.static_rate = av->rate;
	ah.has_grh = av->grh;
	ah.dgid = av->dgid;
	ah.flow_label = av->flow_label;
	ah.hop_limit = av->hop_limit;
	ah.tclass = av->tclass;
	return imc_qp_send(qp, &ah, av->remote_qpn, av->qkey, data, len);
}

int imc_mcast_fabric_port_event(enum imc_port_event ev,
				enum imc_mcast_port_event *out)
{
	/* IBA 14.4.11: a reregister asks for every join again; the others
	 * are changes of the port itself. */
	static const enum imc_mcast_port_event map[] = {
		[IMC_PORT_EV_ACTIVE] = IMC_MCAST_PORT_ACTIVE,
		[IMC_PORT_EV_DOWN] = IMC_MCAST_PORT_DOWN,
		[IMC_PORT_EV_LID_CHANGE] = IMC_MCAST_PORT_LID_CHANGE,
		[IMC_PORT_EV_SM_CHANGE] = IMC_MCAST_PORT_SM_CHANGE,
		[IMC_PORT_EV_CLIENT_REREGISTER] = IMC_MCAST_PORT_REREGISTER,
		[IMC_PORT_EV_PKEY_CHANGE] = IMC_MCAST_PORT_PKEY_CHANGE,
	};

	if ((unsigned)ev >= IMC_ARRAY_SIZE(map) ||
	    (ev != IMC_PORT_EV_ACTIVE && !map[ev]))
		return -ENOENT;
	*out = map[ev];
	return 0;
}

static void on_port(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct imc_mcast_fabric *mf =
		imc_container_of(w, struct imc_mcast_fabric, watch);
	enum imc_mcast_port_event e;

	if (!imc_mcast_fabric_port_event(ev, &e))
		imc_mcast_port_event(mf->t, e);
}

int imc_mcast_fabric_create(struct imc_fabric *f, uint32_t node,
			    unsigned port, struct imc_gsi *gsi,
			    const struct imc_mcast_fabric_config *cfg,
			    struct imc_mcast_fabric **out)
{
	const struct imc_topo *t;
	struct imc_mcast_fabric_config def;
	struct imc_mcast_config mc;
	struct imc_sa_transport tr;
	struct imc_mcast_ops ops = { qp_attach, qp_detach, NULL };
	struct imc_port_attr pa;
	struct imc_mcast_fabric *mf;
	int rc;

	if (!f || !out)
		return -EINVAL;
	t = imc_fabric_topo(f);
	if (node >= t->nnodes || t->node[node].type != IMC_NODE_HCA ||
	    imc_fabric_port_attr(f, node, port, &pa))
		return -EINVAL;
	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_mcast_fabric_config_init);
	mf = calloc(1, sizeof(*mf));
	if (!mf)
		return -ENOMEM;
	mf->f = f;
	mf->node = node;
	mf->port = port;
	if (gsi) {
		mf->gsi = gsi;
	} else {
		rc = imc_gsi_create(f, node, port, &mf->gsi);
		if (rc < 0)
			goto fail;
		mf->own_gsi = true;
	}
	tr.send = to_sm;
	tr.ctx = mf;
	rc = imc_sa_client_create(imc_fabric_loop(f), &tr, &cfg->client,
				  &mf->client);
	if (rc < 0)
		goto fail;
	mc = cfg->mcast;
	mc.port_gid = pa.gid;
	ops.ctx = mf;
	rc = imc_mcast_create(imc_fabric_loop(f), mf->client, &mc, &ops,
			      &mf->t);
	if (rc < 0)
		goto fail;
	if (pa.state != IMC_PORT_ACTIVE)
		imc_mcast_port_event(mf->t, IMC_MCAST_PORT_DOWN);
	rc = imc_fabric_port_watch(f, node, port, &mf->watch, on_port);
	if (rc < 0)
		goto fail;
	mf->agent.recv = agent_recv;
	imc_gsi_add(mf->gsi, &mf->agent);
	*out = mf;
	return 0;
fail:
	imc_mcast_destroy(mf->t);
	imc_sa_client_destroy(mf->client);
	if (mf->own_gsi)
		imc_gsi_destroy(mf->gsi);
	free(mf);
	return rc;
}

void imc_mcast_fabric_destroy(struct imc_mcast_fabric *mf)
{
	if (!mf)
		return;
	imc_gsi_remove(&mf->agent);
	imc_fabric_port_unwatch(mf->f, &mf->watch);
	imc_mcast_destroy(mf->t);
	imc_sa_client_destroy(mf->client);
	if (mf->own_gsi)
		imc_gsi_destroy(mf->gsi);
	free(mf);
}

struct imc_mcast *imc_mcast_fabric_tracker(const struct imc_mcast_fabric *mf)
{
	return mf->t;
}

struct imc_sa_client *imc_mcast_fabric_client(
	const struct imc_mcast_fabric *mf)
{
	return mf->client;
}

struct imc_gsi *imc_mcast_fabric_gsi(const struct imc_mcast_fabric *mf)
{
	return mf->gsi;
}

/* ---- one tracker per port ---- */

struct imc_mcast_fabric_set {
	struct imc_fabric *f;
	uint32_t nnodes;
	uint32_t *base;                  /* first slot of each node */
	struct imc_mcast_fabric **mf;    /* by slot */
};

int imc_mcast_fabric_set_create(struct imc_fabric *f,
				struct imc_mcast_fabric_set **out)
{
	const struct imc_topo *t;
	struct imc_mcast_fabric_set *s;
	uint32_t n = 0;

	if (!f || !out)
		return -EINVAL;
	t = imc_fabric_topo(f);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->f = f;
	s->nnodes = t->nnodes;
	s->base = calloc((size_t)t->nnodes + 1, sizeof(*s->base));
	if (!s->base) {
		free(s);
		return -ENOMEM;
	}
	/* Ports 0..nports of each node: a slot array indexed directly. */
	for (uint32_t i = 0; i < t->nnodes; i++) {
		s->base[i] = n;
		n += t->node[i].nports + 1u;
	}
	s->base[t->nnodes] = n;
	s->mf = calloc(n ? n : 1, sizeof(*s->mf));
	if (!s->mf) {
		free(s->base);
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void imc_mcast_fabric_set_destroy(struct imc_mcast_fabric_set *s)
{
	if (!s)
		return;
	for (uint32_t k = 0; k < s->base[s->nnodes]; k++)
		imc_mcast_fabric_destroy(s->mf[k]);
	free(s->mf);
	free(s->base);
	free(s);
}

long imc_mcast_fabric_set_slot(const struct imc_mcast_fabric_set *s,
			       uint32_t node, unsigned port)
{
	if (!s || node >= s->nnodes ||
	    port >= s->base[node + 1] - s->base[node])
		return -EINVAL;
	return (long)(s->base[node] + port);
}

size_t imc_mcast_fabric_set_slots(const struct imc_mcast_fabric_set *s)
{
	return s ? s->base[s->nnodes] : 0;
}

struct imc_mcast_fabric *imc_mcast_fabric_set_at(
	const struct imc_mcast_fabric_set *s, size_t slot)
{
	return slot < imc_mcast_fabric_set_slots(s) ? s->mf[slot] : NULL;
}

struct imc_mcast_fabric *imc_mcast_fabric_set_find(
	const struct imc_mcast_fabric_set *s, uint32_t node, unsigned port)
{
	long k = imc_mcast_fabric_set_slot(s, node, port);

	return k < 0 ? NULL : s->mf[k];
}

int imc_mcast_fabric_set_get(struct imc_mcast_fabric_set *s, uint32_t node,
			     unsigned port, struct imc_gsi *gsi,
			     const struct imc_mcast_fabric_config *cfg,
			     struct imc_mcast_fabric **out)
{
	long k = imc_mcast_fabric_set_slot(s, node, port);
	int rc;

	if (k < 0 || !out)
		return -EINVAL;
	if (!s->mf[k]) {
		rc = imc_mcast_fabric_create(s->f, node, port, gsi, cfg,
					     &s->mf[k]);
		if (rc < 0)
			return rc;
	}
	*out = s->mf[k];
	return 0;
}

void imc_mcast_fabric_set_totals(const struct imc_mcast_fabric_set *s,
				 struct imc_mcast_fabric_totals *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < imc_mcast_fabric_set_slots(s); k++) {
		struct imc_sa_client_stats cs;
		struct imc_mcast_stats st;

		if (!s->mf[k])
			continue;
		imc_sa_client_get_stats(s->mf[k]->client, &cs);
		imc_mcast_get_stats(s->mf[k]->t, &st);
		out->trackers++;
		out->sa_sent += cs.sent;
		out->sa_resent += cs.resent;
		out->timeouts += st.timeouts;
		out->rejoins += st.rejoins;
		out->errors += st.errors;
		out->members += st.members;
		out->joined += st.joined;
	}
}
