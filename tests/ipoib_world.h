/* A simulated fabric with the SA served at the SM's port and IPoIB
 * interfaces on its hosts, for the IPoIB simulation tests and benchmark.
 *
 * Each host's port gets a join tracker (mcast_fabric.h; on the SM's own
 * host it shares the SA's QP1 through a GSI fed by the SA's other_mad
 * hook) and interfaces (one per P_Key) with a small host model behind
 * each: it answers echo requests to its addresses from the loop
 * and counts what arrives. Functions return 0 or a negative errno; no
 * cmocka here, so that bench/ can use it too. */
#ifndef IMC_TESTS_IPOIB_WORLD_H
#define IMC_TESTS_IPOIB_WORLD_H

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/ipoib_fabric.h"
#include "ibmcast/loop.h"
#include "ibmcast/gsi.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/topo.h"
#include "ipoib/ipoib_int.h"
#include "util/bytes.h"

#define IW_MAX_IFS 4

struct iw;

struct iw_if {
	struct iw_host *h;
	uint16_t pkey;
	struct imc_ipoib_fabric *x;
	struct imc_ipoib *ifc;
	struct imc_ip_addr addr[4];
	unsigned naddrs;
	/* host model */
	uint64_t received, received_mcast, echo_replies, echo_answered;
	uint64_t carrier_ups, carrier_downs;
	imc_time_t last_up, last_down;
	struct iw_pkt *rq_head, *rq_tail;
	struct imc_timer reply;
	/* called for each delivered packet, after the model counted it */
	void (*on_deliver)(struct iw_if *i, const struct imc_ipoib_packet *p);
	void *user;
};

struct iw_pkt {
	struct iw_pkt *next;
	size_t len;
	uint8_t data[];
};

struct iw_host {
	struct iw *w;
	uint32_t node;
	unsigned port;
	/* With iw.movable_sm: the host's QP1 (NULL while the SA's is used)
	 * and the GSI on it, both the world's. */
	struct imc_gsi *gsi;
	struct imc_qp *qp1;
	struct imc_mcast_fabric *mf;
	struct imc_mcast *mc;
	struct iw_if ifs[IW_MAX_IFS];
	unsigned nifs;
};

struct iw {
	struct imc_topo *t;
	struct imc_loop *loop;
	struct imc_fabric *f;
	struct imc_sa_fabric *sf;
	struct imc_gsi *sm_gsi;     /* the SA's QP1, shared */
	struct iw_host **host;      /* by node, NULL until used */
	struct imc_ipoib_config cfg;  /* for interfaces made from now on */
	uint32_t sm_node;
	unsigned sm_port;
	/* Hosts made from now on share a QP1 of the world's with their
	 * tracker, so that the SM and its SA can move to them (iw_sm_move). */
	bool movable_sm;
	struct imc_sa_fabric_config sa_cfg;
};

/* ---- host model ---- */

static inline uint16_t iw_csum(const uint8_t *p, size_t len, uint32_t acc)
{
	for (; len >= 2; p += 2, len -= 2)
		acc += (uint32_t)p[0] << 8 | p[1];
	if (len)
		acc += (uint32_t)p[0] << 8;
	while (acc >> 16)
		acc = (acc & 0xFFFF) + (acc >> 16);
	return (uint16_t)~acc;
}

static inline void iw_reply_fire(struct imc_timer *t)
{
	struct iw_if *i = imc_container_of(t, struct iw_if, reply);
	struct iw_pkt *p;

	while ((p = i->rq_head)) {
		i->rq_head = p->next;
		if (!i->rq_head)
			i->rq_tail = NULL;
		imc_ipoib_xmit(i->ifc, p->data, p->len);
		free(p);
	}
}

static inline bool iw_own(const struct iw_if *i, const struct imc_ip_addr *a)
{
	for (unsigned k = 0; k < i->naddrs; k++)
		if (i->addr[k].family == a->family &&
		    (a->family == IMC_IPV4 ? i->addr[k].v4 == a->v4 :
		     !memcmp(i->addr[k].v6, a->v6, 16)))
			return true;
	return false;
}

static inline void iw_deliver(void *ctx, const struct imc_ipoib_packet *p)
{
	struct iw_if *i = ctx;
	struct imc_ip_hdr ip;
	size_t off;
	uint8_t type;

	i->received++;
	if (p->multicast)
		i->received_mcast++;
	if (imc_ip_parse(p->data, p->len, &ip) == 0 &&
	    !imc_ip_addr_is_multicast(&ip.dst)) {
		bool v4 = ip.family == IMC_IPV4;

		off = v4 ? (size_t)(p->data[0] & 0xF) * 4 : IPO_IP6_HDR_LEN;
		if (ip.proto == (v4 ? 1 : IPO_PROTO_ICMP6) &&
		    ip.len >= off + 8) {
			type = p->data[off];
			if (type == (v4 ? 0 : 129)) {
				i->echo_replies++;
			} else if (type == (v4 ? 8 : 128) &&
				   iw_own(i, &ip.dst)) {
				struct iw_pkt *r = malloc(sizeof(*r) + ip.len);

				if (r) {
					uint8_t *d = r->data, *icmp;

					memcpy(d, p->data, ip.len);
					r->len = ip.len;
					r->next = NULL;
					icmp = d + off;
					if (v4) {
						memcpy(d + 12, p->data + 16, 4);
						memcpy(d + 16, p->data + 12, 4);
						icmp[0] = 0;
						icmp[2] = icmp[3] = 0;
						imc_put16(icmp + 2,
							  iw_csum(icmp,
								  ip.len - off,
								  0));
					} else {
						memcpy(d + 8, p->data + 24, 16);
						memcpy(d + 24, p->data + 8, 16);
						icmp[0] = 129;
						icmp[2] = icmp[3] = 0;
						imc_put16(icmp + 2,
							  imc_icmp6_csum(
								  d + 8, d + 24,
								  icmp,
								  ip.len - off));
					}
					if (i->rq_tail)
						i->rq_tail->next = r;
					else
						i->rq_head = r;
					i->rq_tail = r;
					i->echo_answered++;
					if (!imc_timer_armed(&i->reply))
						imc_timer_arm(
							i->h->w->loop,
							&i->reply,
							imc_loop_now(
								i->h->w->loop));
				}
			}
		}
	}
	if (i->on_deliver)
		i->on_deliver(i, p);
}

static inline void iw_carrier(void *ctx, bool up)
{
	struct iw_if *i = ctx;
	imc_time_t now = imc_loop_now(i->h->w->loop);

	if (up) {
		i->carrier_ups++;
		i->last_up = now;
	} else {
		i->carrier_downs++;
		i->last_down = now;
	}
}

/* ---- ports ---- */

/* The fabric from spec, brought up, with the SA (sacfg NULL: defaults)
 * started on the SM's port. Every host of the topology may then get
 * interfaces. */
static inline int iw_create(struct iw *w, const char *spec,
			    const struct imc_fabric_config *fcfg,
			    const struct imc_sa_fabric_config *sacfg)
{
	struct imc_fabric_config fc;
	struct imc_sa_fabric_config sc;
	int rc;

	memset(w, 0, sizeof(*w));
	if (!fcfg) {
		imc_fabric_config_default(&fc);
		fcfg = &fc;
	}
	if (sacfg)
		sc = *sacfg;
	else
		imc_sa_fabric_config_init(&sc);
	w->sa_cfg = sc;
	imc_ipoib_config_init(&w->cfg);
	rc = imc_gsi_create_shared(NULL, &w->sm_gsi);
	sc.other_mad = imc_gsi_input;
	sc.other_ctx = w->sm_gsi;
	if (!rc)
		rc = imc_topo_generate(spec, &w->t, NULL, 0);
	if (!rc)
		rc = imc_loop_create_virtual(0, &w->loop);
	if (!rc)
		rc = imc_fabric_create(w->t, w->loop, fcfg, &w->f);
	if (!rc)
		rc = imc_fabric_bring_up(w->f);
	if (!rc)
		rc = imc_loop_run(w->loop);
	if (!rc)
		rc = imc_sa_fabric_create(w->f, &sc, &w->sf);
	if (!rc)
		rc = imc_fabric_sm_port(w->f, &w->sm_node, &w->sm_port);
	if (!rc)
		imc_gsi_set_qp(w->sm_gsi, imc_sa_fabric_qp(w->sf));
	if (!rc) {
		w->host = calloc(w->t->nnodes, sizeof(*w->host));
		if (!w->host)
			rc = -ENOMEM;
	}
	return rc;
}

/* The n-th HCA of the topology (0-based), or IMC_TOPO_NONE. */
static inline uint32_t iw_hca(const struct iw *w, uint32_t n)
{
	for (uint32_t i = 0; i < w->t->nnodes; i++)
		if (w->t->node[i].type == IMC_NODE_HCA && n-- == 0)
			return i;
	return IMC_TOPO_NONE;
}

static inline void iw_qp1_recv(struct imc_qp *qp, const struct imc_ud_recv *r,
			       void *ctx)
{
	(void)qp;
	imc_gsi_input(ctx, r);
}

/* A QP1 of the world's on host h, under its GSI. */
static inline int iw_own_qp1(struct iw_host *h)
{
	int rc = imc_qp_create(h->w->f, h->node, 1, IMC_QP1, IMC_QP1_QKEY,
			       0xFFFF, iw_qp1_recv, h->gsi, &h->qp1);

	if (!rc)
		imc_gsi_set_qp(h->gsi, h->qp1);
	return rc;
}

static inline int iw_host_get(struct iw *w, uint32_t node,
			      struct iw_host **out)
{
	struct iw_host *h = w->host[node];
	struct imc_mcast_fabric_config mc;
	bool sm = node == w->sm_node && w->sm_port == 1;
	int rc;

	if (h) {
		*out = h;
		return 0;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->w = w;
	h->node = node;
	h->port = 1;
	if (sm) {
		h->gsi = w->sm_gsi;
	} else if (w->movable_sm) {
		rc = imc_gsi_create_shared(NULL, &h->gsi);
		if (!rc)
			rc = iw_own_qp1(h);
		if (rc) {
			imc_gsi_destroy(h->gsi);
			free(h);
			return rc;
		}
	}
	imc_mcast_fabric_config_init(&mc);
	mc.mcast.seed = node;
	rc = imc_mcast_fabric_create(w->f, node, 1, h->gsi, &mc, &h->mf);
	if (rc) {
		if (!sm) {
			imc_gsi_destroy(h->gsi);
			imc_qp_destroy(h->qp1);
		}
		free(h);
		return rc;
	}
	h->mc = imc_mcast_fabric_tracker(h->mf);
	w->host[node] = h;
	*out = h;
	return 0;
}

/* An interface on host node (port 1) for pkey with the given addresses
 * ("10.0.0.1/24", ...; NULL ends the list), brought up. */
static inline int iw_if_up(struct iw *w, uint32_t node, uint16_t pkey,
			   struct iw_if **out, const char *addr, ...)
{
	struct iw_host *h;
	struct iw_if *i;
	struct imc_ipoib_config cfg = w->cfg;
	struct imc_ipoib_host_ops host;
	va_list ap;
	int rc = iw_host_get(w, node, &h);

	if (rc)
		return rc;
	if (h->nifs == IW_MAX_IFS)
		return -ENOSPC;
	i = &h->ifs[h->nifs];
	memset(i, 0, sizeof(*i));
	i->h = h;
	i->pkey = pkey;
	imc_timer_init(&i->reply, iw_reply_fire);
	cfg.pkey = pkey;
	host.deliver = iw_deliver;
	host.carrier = iw_carrier;
	host.ctx = i;
	rc = imc_ipoib_fabric_create(w->f, node, 1, h->mc, &cfg,
				     IMC_IPOIB_FABRIC_QKEY, &host, &i->x);
	if (rc)
		return rc;
	h->nifs++;
	i->ifc = imc_ipoib_fabric_ipoib(i->x);
	va_start(ap, addr);
	for (const char *s = addr; s && !rc; s = va_arg(ap, const char *)) {
		struct imc_ip_addr a;
		unsigned plen;

		rc = imc_ip_addr_parse(s, &a, &plen);
		if (!rc && i->naddrs < 4)
			i->addr[i->naddrs++] = a;
		if (!rc)
			rc = imc_ipoib_addr_add(i->ifc, &a, plen);
	}
	va_end(ap);
	if (!rc)
		rc = imc_ipoib_up(i->ifc);
	if (out)
		*out = i;
	return rc;
}

/* An ICMP echo request from i to dst (text), seq, `extra` data bytes. */
static inline int iw_ping(struct iw_if *i, const char *dst, uint16_t seq,
			  size_t extra)
{
	uint8_t p[4096];
	struct imc_ip_addr d;
	const struct imc_ip_addr *s = NULL;
	size_t len;

	if (imc_ip_addr_parse(dst, &d, NULL))
		return -EINVAL;
	for (unsigned k = 0; k < i->naddrs && !s; k++)
		if (i->addr[k].family == d.family)
			s = &i->addr[k];
	if (!s)
		return -EADDRNOTAVAIL;
	if (d.family == IMC_IPV4) {
		len = 28 + extra;
		memset(p, 0, len);
		p[0] = 0x45;
		imc_put16(p + 2, (uint16_t)len);
		p[8] = 64;
		p[9] = 1;
		imc_put32(p + 12, s->v4);
		imc_put32(p + 16, d.v4);
		imc_put16(p + 10, iw_csum(p, 20, 0));
		p[20] = 8;
		imc_put16(p + 26, seq);
		imc_put16(p + 22, iw_csum(p + 20, 8 + extra, 0));
	} else {
		len = 48 + extra;
		memset(p, 0, len);
		p[0] = 0x60;
		imc_put16(p + 4, (uint16_t)(8 + extra));
		p[6] = IPO_PROTO_ICMP6;
		p[7] = 64;
		memcpy(p + 8, s->v6, 16);
		memcpy(p + 24, d.v6, 16);
		p[40] = 128;
		imc_put16(p + 46, seq);
		imc_put16(p + 42, imc_icmp6_csum(p + 8, p + 24, p + 40,
						 8 + extra));
	}
	return imc_ipoib_xmit(i->ifc, p, len);
}

/* A UDP datagram from i (its first address of dst's family) to dst. */
static inline int iw_udp(struct iw_if *i, const char *dst, size_t payload)
{
	uint8_t p[4096];
	struct imc_ip_addr d;
	const struct imc_ip_addr *s = NULL;
	size_t len;

	if (imc_ip_addr_parse(dst, &d, NULL))
		return -EINVAL;
	for (unsigned k = 0; k < i->naddrs && !s; k++)
		if (i->addr[k].family == d.family)
			s = &i->addr[k];
	if (!s)
		return -EADDRNOTAVAIL;
	if (d.family == IMC_IPV4) {
		len = 28 + payload;
		memset(p, 0, len);
		p[0] = 0x45;
		imc_put16(p + 2, (uint16_t)len);
		p[8] = 64;
		p[9] = 17;
		imc_put32(p + 12, s->v4);
		imc_put32(p + 16, d.v4);
		imc_put16(p + 10, iw_csum(p, 20, 0));
		imc_put16(p + 20, 4000);
		imc_put16(p + 22, 9);
		imc_put16(p + 24, (uint16_t)(8 + payload));
	} else {
		len = 48 + payload;
		memset(p, 0, len);
		p[0] = 0x60;
		imc_put16(p + 4, (uint16_t)(8 + payload));
		p[6] = 17;
		p[7] = 64;
		memcpy(p + 8, s->v6, 16);
		memcpy(p + 24, d.v6, 16);
		imc_put16(p + 40, 4000);
		imc_put16(p + 42, 9);
		imc_put16(p + 44, (uint16_t)(8 + payload));
	}
	return imc_ipoib_xmit(i->ifc, p, len);
}

/* The SM and its SA move to host node (made with movable_sm), as a new
 * SM taking over: the old SA stops, the old SM port gets a QP1 of its
 * own for its tracker, the new SA starts on node's port, empty (but for
 * its broadcast groups), on that port's QP1, and every active port hears
 * an SM change (its tracker re-joins). */
static inline int iw_sm_move(struct iw *w, uint32_t node)
{
	struct iw_host *to = w->host[node], *from = w->host[w->sm_node];
	struct imc_sa_fabric_config sc = w->sa_cfg;
	int rc;

	if (!to || !to->qp1 || (from && from->gsi != w->sm_gsi))
		return -EINVAL;
	imc_gsi_set_qp(w->sm_gsi, NULL);
	imc_sa_fabric_destroy(w->sf);
	w->sf = NULL;
	/* The old SM's host keeps its tracker, now on a QP1 of its own. */
	rc = from ? iw_own_qp1(from) : 0;
	if (rc)
		return rc;
	imc_gsi_set_qp(to->gsi, NULL);
	imc_qp_destroy(to->qp1);
	to->qp1 = NULL;
	rc = imc_fabric_sm_move(w->f, node, 1);
	if (rc)
		return rc;
	w->sm_node = node;
	w->sm_port = 1;
	sc.other_mad = imc_gsi_input;
	sc.other_ctx = to->gsi;
	rc = imc_sa_fabric_create(w->f, &sc, &w->sf);
	if (!rc)
		imc_gsi_set_qp(to->gsi, imc_sa_fabric_qp(w->sf));
	return rc;
}

static inline void iw_run_for(struct iw *w, imc_time_t d)
{
	imc_loop_run_until(w->loop, imc_loop_now(w->loop) + d);
}

static inline struct imc_ipoib_stats iw_stats(const struct iw_if *i)
{
	struct imc_ipoib_stats st;

	imc_ipoib_get_stats(i->ifc, &st);
	return st;
}

/* Frees everything; returns the loop's leftover timers (0 unless
 * something leaked). */
static inline size_t iw_destroy(struct iw *w)
{
	size_t left;

	for (uint32_t n = 0; w->host && n < w->t->nnodes; n++) {
		struct iw_host *h = w->host[n];

		if (!h)
			continue;
		/* Interfaces leave, the tracker detaches their QPs, then the
		 * QPs go (ipoib_fabric.h). */
		for (unsigned k = 0; k < h->nifs; k++) {
			struct iw_if *i = &h->ifs[k];
			struct iw_pkt *p;

			imc_timer_cancel(w->loop, &i->reply);
			imc_ipoib_fabric_stop(i->x);
			while ((p = i->rq_head)) {
				i->rq_head = p->next;
				free(p);
			}
		}
		imc_mcast_fabric_destroy(h->mf);
		for (unsigned k = 0; k < h->nifs; k++)
			imc_ipoib_fabric_destroy(h->ifs[k].x);
		if (h->gsi == w->sm_gsi)
			imc_gsi_set_qp(h->gsi, NULL);
		else
			imc_gsi_destroy(h->gsi);
		imc_qp_destroy(h->qp1);
		free(h);
	}
	free(w->host);
	imc_sa_fabric_destroy(w->sf);
	imc_gsi_destroy(w->sm_gsi);
	imc_fabric_destroy(w->f);
	left = imc_loop_destroy(w->loop);
	imc_topo_destroy(w->t);
	return left;
}

#endif
