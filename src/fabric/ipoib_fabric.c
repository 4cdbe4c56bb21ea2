/* An IPoIB interface on a port of the embedded fabric (ipoib_fabric.h):
 * the interface's send op becomes imc_qp_send() with the GRH always set,
 * its set_qkey op imc_qp_set_qkey(), the QP's receive callback
 * imc_ipoib_recv(), and the port's events imc_ipoib_port_event(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/ipoib_fabric.h"
#include "util/config.h"

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
	enum imc_mcast_port_event e;

	if (x->ifc && !imc_mcast_fabric_port_event(ev, &e))
		imc_ipoib_port_event(x->ifc, e);
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

	cfg = IMC_CONFIG_OR_DEFAULT(cfg, def, imc_ipoib_config_init);
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

/* ---- an IP host on a fabric port ---- */

struct imc_ipoib_fabric_host {
	struct imc_fabric *f;
	uint32_t node;
	unsigned port;
	uint16_t pkey;
	struct imc_ipoib_fabric *x;
	struct imc_ip_host *ip;
	struct imc_mcast_fabric *own;    /* NULL: the tracker is shared */
	struct imc_mcast *mcast;
	struct imc_ipoib_host_ops tap;   /* deliver NULL: no tap */
	uint64_t tapped;
};

static void host_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct imc_ipoib_fabric_host *h = ctx;

	if (h->tap.deliver) {
		h->tapped++;
		h->tap.deliver(h->tap.ctx, p);
	} else if (h->ip) {
		imc_ip_host_deliver(h->ip, p);
	}
}

static void host_carrier(void *ctx, bool up)
{
	struct imc_ipoib_fabric_host *h = ctx;

	if (h->tap.deliver) {
		if (h->tap.carrier)
			h->tap.carrier(h->tap.ctx, up);
	} else if (h->ip) {
		imc_ip_host_carrier(h->ip, up);
	}
}

int imc_ipoib_fabric_host_create(struct imc_fabric *f, uint32_t node,
				 unsigned port, struct imc_mcast *mcast,
				 struct imc_gsi *gsi,
				 const struct imc_ipoib_config *cfg,
				 const struct imc_ip_host_ops *ops,
				 struct imc_ipoib_fabric_host **out)
{
	struct imc_ipoib_host_ops hops;
	struct imc_ipoib_fabric_host *h;
	struct imc_ipoib_config c;
	int rc;

	if (!f || !out)
		return -EINVAL;
	if (cfg) {
		c = *cfg;
	} else {
		imc_ipoib_config_init(&c);
		c.pkey = 0xFFFF;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->f = f;
	h->node = node;
	h->port = port;
	h->pkey = c.pkey;
	h->mcast = mcast;
	rc = imc_ip_host_create(imc_fabric_loop(f), NULL, ops, &h->ip);
	if (!rc && !mcast) {
		rc = imc_mcast_fabric_create(f, node, port, gsi, NULL, &h->own);
		h->mcast = rc ? NULL : imc_mcast_fabric_tracker(h->own);
	}
	hops = (struct imc_ipoib_host_ops){ host_deliver, host_carrier, h };
	if (!rc)
		rc = imc_ipoib_fabric_create(f, node, port, h->mcast, &c,
					     IMC_IPOIB_FABRIC_QKEY, &hops,
					     &h->x);
	if (rc) {
		imc_mcast_fabric_destroy(h->own);
		imc_ip_host_destroy(h->ip);
		free(h);
		return rc;
	}
	imc_ip_host_bind(h->ip, imc_ipoib_fabric_ipoib(h->x));
	*out = h;
	return 0;
}

int imc_ipoib_fabric_host_tap(struct imc_ipoib_fabric_host *x,
			      const struct imc_ipoib_host_ops *tap)
{
	if (!x || (tap && !tap->deliver))
		return -EINVAL;
	if (tap)
		x->tap = *tap;
	else
		memset(&x->tap, 0, sizeof(x->tap));
	return 0;
}

void imc_ipoib_fabric_host_stop(struct imc_ipoib_fabric_host *x)
{
	if (!x)
		return;
	imc_ipoib_fabric_stop(x->x);
	imc_ip_host_destroy(x->ip);
	x->ip = NULL;
}

/* ipoib_fabric.h's order: the interface stops, the tracker lets go of
 * the QP, then the QP goes. */
void imc_ipoib_fabric_host_destroy(struct imc_ipoib_fabric_host *x)
{
	if (!x)
		return;
	imc_ipoib_fabric_host_stop(x);
	if (x->own)
		imc_mcast_fabric_destroy(x->own);
	else
		(void)imc_mcast_release_qp(x->mcast,
					   imc_ipoib_fabric_qp(x->x));
	imc_ipoib_fabric_destroy(x->x);
	free(x);
}

struct imc_ip_host *imc_ipoib_fabric_host_ip(
	const struct imc_ipoib_fabric_host *x)
{
	return x->ip;
}

struct imc_ipoib *imc_ipoib_fabric_host_ipoib(
	const struct imc_ipoib_fabric_host *x)
{
	return imc_ipoib_fabric_ipoib(x->x);
}

struct imc_ipoib_fabric *imc_ipoib_fabric_host_fabric(
	const struct imc_ipoib_fabric_host *x)
{
	return x->x;
}

struct imc_mcast *imc_ipoib_fabric_host_tracker(
	const struct imc_ipoib_fabric_host *x)
{
	return x->mcast;
}

uint64_t imc_ipoib_fabric_host_tapped(const struct imc_ipoib_fabric_host *x)
{
	return x->tapped;
}

/* The entry of h's partition in its port's table now, 0 when it has none
 * or the port is not ACTIVE (IBA 10.9.1.2: the low 15 bits name the
 * partition, bit 15 is full membership). */
static uint16_t table_pkey(const struct imc_ipoib_fabric_host *h)
{
	struct imc_port_attr pa;
	uint16_t best = 0;

	if (imc_fabric_port_attr(h->f, h->node, h->port, &pa) ||
	    pa.state != IMC_PORT_ACTIVE)
		return 0;
	for (unsigned k = 0; k < pa.npkeys; k++)
		if (!((pa.pkeys[k] ^ h->pkey) & 0x7FFF) &&
		    (!best || (pa.pkeys[k] & 0x8000)))
			best = pa.pkeys[k];
	return best;
}

bool imc_ipoib_fabric_host_reaches(const struct imc_ipoib_fabric_host *a,
				   const struct imc_ipoib_fabric_host *b)
{
	const struct imc_ipoib *ia, *ib;
	uint16_t ka, kb;

	if (!a || !b || a == b || ((a->pkey ^ b->pkey) & 0x7FFF))
		return false;
	ia = imc_ipoib_fabric_ipoib(a->x);
	ib = imc_ipoib_fabric_ipoib(b->x);
	if (!ia || !ib || !imc_ipoib_carrier(ia) || !imc_ipoib_carrier(ib))
		return false;
	ka = table_pkey(a);
	kb = table_pkey(b);
	return ka && kb && ((ka | kb) & 0x8000);
}
