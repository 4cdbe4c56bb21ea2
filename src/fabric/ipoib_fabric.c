/* An IPoIB interface on a port of the embedded fabric (ipoib_fabric.h):
 * the interface's send op becomes imc_qp_send() with the GRH always set,
 * its set_qkey op imc_qp_set_qkey(), the QP's receive callback
 * imc_ipoib_recv(), and the port's events imc_ipoib_port_event(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib_fabric.h"

struct imc_ipoib_fabric {
	struct imc_fabric *f;
	struct imc_port_watch watch;
	struct imc_qp *qp;
	struct imc_ipoib *ifc;
	struct imc_ipoib_host_ops host;
	uint64_t send_errors;
};

static int fab_send(void *ctx, const struct imc_ipoib_av *av,
		    uint32_t remote_qpn, uint32_t qkey, const uint8_t *data,
		    size_t len)
{
	struct imc_ipoib_fabric *x = ctx;
	struct imc_ah ah;
	int rc;

	memset(&ah, 0, sizeof(ah));
	ah.dlid = av->dlid;
	ah.sl = av->sl;
	ah.static_rate = av->rate;
	ah.has_grh = true;
	ah.dgid = av->dgid;
	ah.flow_label = av->flow_label;
	ah.hop_limit = av->hop_limit;
	ah.tclass = av->tclass;
	rc = imc_qp_send(x->qp, &ah, remote_qpn, qkey, data, len);
	if (rc < 0)
		x->send_errors++;
	return rc;
}

static void fab_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct imc_ipoib_fabric *x = ctx;

	x->host.deliver(x->host.ctx, p);
}

static void fab_carrier(void *ctx, bool up)
{
	struct imc_ipoib_fabric *x = ctx;

	if (x->host.carrier)
		x->host.carrier(x->host.ctx, up);
}

static int fab_set_qkey(void *ctx, uint32_t qkey)
{
	struct imc_ipoib_fabric *x = ctx;

	return imc_qp_set_qkey(x->qp, qkey);
}

static void fab_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
		     void *ctx)
{
	struct imc_ipoib_fabric *x = ctx;
	struct imc_ipoib_rx rx;

	(void)qp;
	if (!x->ifc)
		return;
	rx.src_qp = r->src_qp;
	rx.slid = r->slid;
	rx.sl = r->sl;
	rx.pkey = r->pkey;
	rx.has_grh = r->has_grh;
	rx.sgid = r->sgid;
	rx.dgid = r->dgid;
	rx.data = r->data;
	rx.len = r->len;
	imc_ipoib_recv(x->ifc, &rx);
}

/* The port's events reach the interface as its tracker hears them (a LID
 * change, a reregister, a new SM): the interface follows the port's and
 * its peers' LIDs (ipoib.h). */
static void fab_port(struct imc_port_watch *w, enum imc_port_event ev)
{
	struct imc_ipoib_fabric *x =
		imc_container_of(w, struct imc_ipoib_fabric, watch);
	static const enum imc_mcast_port_event map[] = {
		[IMC_PORT_EV_ACTIVE] = IMC_MCAST_PORT_ACTIVE,
		[IMC_PORT_EV_DOWN] = IMC_MCAST_PORT_DOWN,
		[IMC_PORT_EV_LID_CHANGE] = IMC_MCAST_PORT_LID_CHANGE,
		[IMC_PORT_EV_SM_CHANGE] = IMC_MCAST_PORT_SM_CHANGE,
		[IMC_PORT_EV_CLIENT_REREGISTER] = IMC_MCAST_PORT_REREGISTER,
		[IMC_PORT_EV_PKEY_CHANGE] = IMC_MCAST_PORT_PKEY_CHANGE,
	};

	if (x->ifc && (unsigned)ev < IMC_ARRAY_SIZE(map))
		imc_ipoib_port_event(x->ifc, map[ev]);
}

int imc_ipoib_fabric_create(struct imc_fabric *f, uint32_t node,
			    unsigned port, struct imc_mcast *mcast,
			    const struct imc_ipoib_config *cfg, uint32_t qkey,
			    const struct imc_ipoib_host_ops *host,
			    struct imc_ipoib_fabric **out)
{
	struct imc_ipoib_fabric *x;
	struct imc_port_attr pa;
	struct imc_ipoib_config c, def;
	struct imc_ipoib_ops ops;
	int rc;

	if (!cfg) {
		imc_ipoib_config_init(&def);
		cfg = &def;
	}
	if (!f || !mcast || !host || !host->deliver || !out)
		return -EINVAL;
	rc = imc_fabric_port_attr(f, node, port, &pa);
	if (rc < 0)
		return rc;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->host = *host;
	rc = imc_qp_create(f, node, port, 0, qkey, cfg->pkey, fab_recv, x,
			   &x->qp);
	if (rc < 0) {
		free(x);
		return rc;
	}
	c = *cfg;
	c.port_gid = pa.gid;
	c.qpn = imc_qp_num(x->qp);
	c.port_mtu = pa.mtu;
	memset(&ops, 0, sizeof(ops));
	ops.send = fab_send;
	ops.deliver = fab_deliver;
	ops.carrier = fab_carrier;
	ops.set_qkey = fab_set_qkey;
	ops.ctx = x;
	rc = imc_ipoib_create(imc_fabric_loop(f), mcast, x->qp, &c, &ops,
			      &x->ifc);
	if (rc == 0)
		rc = imc_fabric_port_watch(f, node, port, &x->watch, fab_port);
	if (rc < 0) {
		imc_ipoib_destroy(x->ifc);
		imc_qp_destroy(x->qp);
		free(x);
		return rc;
	}
	x->f = f;
	*out = x;
	return 0;
}

void imc_ipoib_fabric_stop(struct imc_ipoib_fabric *x)
{
	if (!x || !x->ifc)
		return;
	imc_fabric_port_unwatch(x->f, &x->watch);
	imc_ipoib_destroy(x->ifc);
	x->ifc = NULL;
}

void imc_ipoib_fabric_destroy(struct imc_ipoib_fabric *x)
{
	if (!x)
		return;
	imc_ipoib_fabric_stop(x);
	imc_qp_destroy(x->qp);
	free(x);
}

struct imc_ipoib *imc_ipoib_fabric_ipoib(const struct imc_ipoib_fabric *x)
{
	return x->ifc;
}

struct imc_qp *imc_ipoib_fabric_qp(const struct imc_ipoib_fabric *x)
{
	return x->qp;
}

uint64_t imc_ipoib_fabric_send_errors(const struct imc_ipoib_fabric *x)
{
	return x->send_errors;
}
