/* IPoIB neighbours (ipoib.h, ipoib_core.h): ARP and ND, stale AVs and
 * LID changes, and the receive path. The state tables of neighbours and
 * endpoints are at the top of ipoib.c, with the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ipoib/ipoib_core.h"
#include "util/bytes.h"

/* ---- neighbours ---- */

static uint64_t addr_hash(const struct imc_ipoib *ifc,
			  const struct imc_ip_addr *a)
{
	struct imc_gid key;

	/* An IPv4 address as an IPv4-mapped IPv6 one (RFC 4291 2.5.5.2):
	 * distinct from every IPv6 address a neighbour can have. */
	memset(&key, 0, sizeof(key));
	if (a->family == IMC_IPV4) {
		key.raw[10] = key.raw[11] = 0xFF;
		imc_put32(key.raw + 12, a->v4);
	} else {
		memcpy(key.raw, a->v6, 16);
	}
	return imc_gid_hash(&key, ifc->cfg.hash_seed ^ a->family);
}

static bool neigh_eq(const struct imc_hnode *n, const void *a)
{
	return !imc_ip_addr_cmp(&imc_container_of(n, struct neigh, hn)->addr,
				a);
}

static struct neigh *neigh_find(const struct imc_ipoib *ifc,
				const struct imc_ip_addr *a)
{
	struct imc_hnode *n = imc_htab_find(&ifc->neighs, addr_hash(ifc, a),
					    neigh_eq, a);

	return n ? imc_container_of(n, struct neigh, hn) : NULL;
}

static void neigh_timer_fire(struct imc_timer *t);

void ipo_neigh_free(struct neigh *nb, enum imc_ipoib_drop why)
{
	struct imc_ipoib *ifc = nb->ifc;

	imc_timer_cancel(ifc->loop, &nb->timer);
	ipo_q_drop_all(ifc, &nb->q, why);
	if (nb->ep)
		nb->ep->nrefs--;
	imc_htab_remove(&ifc->neighs, &nb->hn);
	ifc->st.neighbours--;
	free(nb);
}

static struct neigh *neigh_new(struct imc_ipoib *ifc,
			       const struct imc_ip_addr *a)
{
	struct neigh *nb = calloc(1, sizeof(*nb));

	if (!nb) {
		ipo_drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return NULL;
	}
	nb->ifc = ifc;
	nb->state = IMC_IPOIB_NEIGH_INCOMPLETE;
	nb->addr = *a;
	imc_timer_init(&nb->timer, neigh_timer_fire);
	imc_htab_insert(&ifc->neighs, &nb->hn, addr_hash(ifc, a));
	ifc->st.neighbours++;
	return nb;
}

static void neigh_set_state(struct neigh *nb,
			    enum imc_ipoib_neigh_state to)
{
	/* INCOMPLETE -> REACHABLE only; an entry that fails is freed. */
	if (to != IMC_IPOIB_NEIGH_REACHABLE)
		abort();
	nb->state = to;
}

/* Builds an ARP request or reply (RFC 826; RFC 4391 9: hardware type
 * 32, 20-byte hardware addresses) into ifc->buf; returns its length. */
static size_t arp_build(struct imc_ipoib *ifc, uint16_t op, uint32_t spa,
			const struct imc_ipoib_hwaddr *tha, uint32_t tpa)
{
	struct imc_ipoib_hdr h = { .type = IMC_ETHERTYPE_ARP };
	struct imc_ipoib_arp a;

	memset(&a, 0, sizeof(a));
	a.op = op;
	a.sha = ifc->hw;
	a.spa = spa;
	if (tha)
		a.tha = *tha;
	a.tpa = tpa;
	imc_ipoib_hdr_pack(&h, ifc->buf, IMC_IPOIB_HDR_LEN);
	imc_ipoib_arp_pack(&a, ifc->buf + IMC_IPOIB_HDR_LEN,
			   IMC_IPOIB_ARP_LEN);
	return IMC_IPOIB_HDR_LEN + IMC_IPOIB_ARP_LEN;
}

/* An ND message into ifc->buf, behind the IPoIB header. */
static int nd_build(struct imc_ipoib *ifc, const struct ipo_nd *nd)
{
	struct imc_ipoib_hdr h = { .type = IMC_ETHERTYPE_IPV6 };
	int n;

	imc_ipoib_hdr_pack(&h, ifc->buf, IMC_IPOIB_HDR_LEN);
	n = ipo_nd_build(nd, ifc->buf + IMC_IPOIB_HDR_LEN,
			 sizeof(ifc->buf) - IMC_IPOIB_HDR_LEN);
	return n < 0 ? n : n + IMC_IPOIB_HDR_LEN;
}

static struct group *v6_group(struct imc_ipoib *ifc, const uint8_t a[16])
{
	struct imc_gid mgid;
	struct imc_ip_addr ip;

	if (imc_ipoib_mgid_from_ipv6(a, ifc->cfg.pkey, ifc->cfg.scope,
				     &mgid) < 0)
		return NULL;
	imc_ip_addr_v6(a, &ip);
	return ipo_grp_get(ifc, &mgid, &ip);
}

/* One ARP request or NS for a into ifc->buf: the NS to the target's
 * solicited-node group (RFC 4861 7.2.2), or, for a unicast probe of a
 * known neighbour, to the target itself (RFC 4861 7.3.3 PROBE). Returns
 * the length, or 0 when there is no own address to ask from. */
static size_t solicit_build(struct imc_ipoib *ifc, const struct imc_ip_addr *a,
			    bool unicast, uint8_t ns_dst[16])
{
	const struct own_addr *src = ipo_own_for(ifc, a);
	struct ipo_nd nd;
	int len;

	if (a->family == IMC_IPV4)
		return arp_build(ifc, IMC_ARP_OP_REQUEST, src ? src->a.v4 : 0,
				 NULL, a->v4);
	/* Without an own address there is no source to solicit from: the
	 * retries run out. */
	if (!src)
		return 0;
	memset(&nd, 0, sizeof(nd));
	nd.type = IPO_ICMP6_NS;
	memcpy(nd.src, src->a.v6, 16);
	if (unicast)
		memcpy(nd.dst, a->v6, 16);
	else if (imc_ipv6_solicited_node(a->v6, nd.dst) < 0)
		return 0;
	memcpy(nd.target, a->v6, 16);
	nd.has_lladdr = true;
	nd.lladdr = ifc->hw;
	memcpy(ns_dst, nd.dst, 16);
	len = nd_build(ifc, &nd);
	return len > 0 ? (size_t)len : 0;
}

/* One ARP request (to the broadcast group) or NS (to the target's
 * solicited-node group) for a. */
static void solicit(struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	uint8_t dst[16];
	size_t len = solicit_build(ifc, a, false, dst);
	struct group *g;

	if (!len)
		return;
	if (a->family == IMC_IPV4) {
		ipo_grp_send(ifc, ifc->bcast, ifc->buf, len, K_ARP);
		return;
	}
	g = v6_group(ifc, dst);
	if (g)
		ipo_grp_send(ifc, g, ifc->buf, len, K_ND);
}

static void neigh_solicit(struct neigh *nb)
{
	solicit(nb->ifc, &nb->addr);
}

static void neigh_timer_fire(struct imc_timer *t)
{
	struct neigh *nb = imc_container_of(t, struct neigh, timer);
	struct imc_ipoib *ifc = nb->ifc;
	imc_time_t now = imc_loop_now(ifc->loop);

	if (nb->state == IMC_IPOIB_NEIGH_INCOMPLETE) {
		if (nb->tries < ifc->cfg.resolve_retries) {
			nb->tries++;
			ifc->st.resolve_retries++;
			neigh_solicit(nb);
			imc_timer_arm(ifc->loop, &nb->timer,
				      now + ifc->cfg.resolve_timeout);
			return;
		}
		ifc->st.resolve_failures++;
		ipo_neigh_free(nb, IMC_IPOIB_DROP_UNRESOLVED);
		return;
	}
	if (ipo_expiry_rearm(ifc, &nb->timer, nb->confirmed, now))
		return;
	ifc->st.expired++;
	ipo_neigh_free(nb, IMC_IPOIB_DROP_FLUSHED);
}

/* The neighbour a is at endpoint e (an answer, or a packet from it):
 * made REACHABLE, and what waited for it goes to the endpoint in order. */
static void neigh_confirm(struct imc_ipoib *ifc, struct neigh *nb,
			  const struct imc_ip_addr *a, struct ep *e)
{
	struct ipo_pkt *p;
	bool asked = nb != NULL;

	if (!nb) {
		nb = neigh_new(ifc, a);
		if (!nb)
			return;
	}
	if (nb->ep != e) {
		if (nb->ep)
			nb->ep->nrefs--;
		nb->ep = e;
		e->nrefs++;
	}
	e->addr = *a;
	nb->confirmed = imc_loop_now(ifc->loop);
	if (nb->state == IMC_IPOIB_NEIGH_INCOMPLETE) {
		neigh_set_state(nb, IMC_IPOIB_NEIGH_REACHABLE);
		if (asked)
			ifc->st.resolved++;
		imc_timer_cancel(ifc->loop, &nb->timer);
		while ((p = ipo_q_pop(ifc, &nb->q))) {
			ipo_ep_send(ifc, e, p->data, p->len,
				    (enum pkt_kind)p->kind);
			free(p);
		}
	}
	if (!imc_timer_armed(&nb->timer))
		imc_timer_arm(ifc->loop, &nb->timer,
			      nb->confirmed + ifc->cfg.neigh_expiry);
}

/* A unicast packet for an IP neighbour. */
int ipo_neigh_send(struct imc_ipoib *ifc, const struct imc_ip_addr *dst,
		   const uint8_t *data, size_t len)
{
	struct neigh *nb = neigh_find(ifc, dst);
	int rc;

	if (nb && nb->state == IMC_IPOIB_NEIGH_REACHABLE)
		return ipo_ep_send(ifc, nb->ep, data, len, K_IP);
	if (!nb) {
		nb = neigh_new(ifc, dst);
		if (!nb)
			return -ENOMEM;
		rc = ipo_q_push(ifc, &nb->q, ifc->cfg.queue_endpoint,
				IMC_IPOIB_DROP_QUEUE_ENDPOINT, data, len, K_IP);
		if (rc < 0) {
			ipo_neigh_free(nb, IMC_IPOIB_DROP_FLUSHED);
			return rc;
		}
		neigh_solicit(nb);
		imc_timer_arm(ifc->loop, &nb->timer,
			      imc_loop_now(ifc->loop) +
				      ifc->cfg.resolve_timeout);
		return 0;
	}
	return ipo_q_push(ifc, &nb->q, ifc->cfg.queue_endpoint,
			  IMC_IPOIB_DROP_QUEUE_ENDPOINT, data, len, K_IP);
}

/* ---- stale endpoints and LID changes ---- */

/* A stale endpoint that has packets to send: ask its last known address
 * at the AV we have (RFC 4861 7.3.3 PROBE; RFC 1122 2.3.2.1 for ARP). The
 * answer, or any packet from the peer, makes it READY; an endpoint no
 * address maps to cannot be asked and is trusted as it is. Only when UP
 * (the AV needs the broadcast record). */
void ipo_ep_probe(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;
	uint8_t dst[16];
	size_t len;

	if (!e->addr.family || !(len = solicit_build(ifc, &e->addr, true,
						     dst))) {
		ipo_ep_set_state(e, EP_READY);
		ipo_ep_flush(ifc, e);
		return;
	}
	ipo_ep_set_state(e, EP_PROBING);
	e->tries = 0;
	ifc->st.probes++;
	ipo_tx(ifc, &e->av, e->qpn, ifc->brec.qkey, ifc->buf, len,
	       e->addr.family == IMC_IPV4 ? K_ARP : K_ND);
	imc_timer_arm(ifc->loop, &e->probe,
		      imc_loop_now(ifc->loop) + ifc->cfg.resolve_timeout);
}

/* No answer at the old AV: the peer may have moved and missed nothing we
 * could hear, so ask the link (a peer that moved answers from its new
 * LID), as an unresolved neighbour is asked. */
void ipo_ep_probe_fire(struct imc_timer *t)
{
	struct ep *e = imc_container_of(t, struct ep, probe);
	struct imc_ipoib *ifc = e->ifc;

	if (e->state != EP_PROBING)
		return;
	if (e->tries < ifc->cfg.resolve_retries) {
		e->tries++;
		ifc->st.resolve_retries++;
		solicit(ifc, &e->addr);
		imc_timer_arm(ifc->loop, &e->probe,
			      imc_loop_now(ifc->loop) +
				      ifc->cfg.resolve_timeout);
		return;
	}
	ifc->st.resolve_failures++;
	ipo_q_drop_all(ifc, &e->q, IMC_IPOIB_DROP_UNRESOLVED);
	if (imc_list_linked(&e->wait))
		imc_list_del(&e->wait);
	ipo_ep_set_state(e, EP_STALE);
}

/* After a client reregister or an SM change the LIDs of the subnet may
 * be new (IBA 14.4.11; a new SM assigns them again): no unicast AV is
 * used again before its peer answered a probe or sent a packet. */
static void eps_make_stale(struct imc_ipoib *ifc)
{
	for (struct imc_list *l = ifc->ep_list.next; l != &ifc->ep_list;
	     l = l->next) {
		struct ep *e = imc_container_of(l, struct ep, all);

		if (e->state == EP_READY) {
			ipo_ep_set_state(e, EP_STALE);
			ifc->st.made_stale++;
		}
	}
}

/* The port took a new LID: every peer still sends to the old one. Tell
 * the link, for each own address: a gratuitous ARP request (RFC 5227 3,
 * sender and target address ours) on the broadcast group, an unsolicited
 * Neighbor Advertisement with the Override flag and the IPoIB link-layer
 * address (RFC 4861 7.2.6, RFC 4391 9.1.1) to all-nodes. Peers learn the
 * new LID from the LRH of either. While the interface is not UP the
 * announcements wait in the groups' queues. */
void ipo_announce(struct imc_ipoib *ifc)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };

	for (size_t i = 0; i < ifc->naddrs; i++) {
		const struct imc_ip_addr *a = &ifc->addrs[i].a;

		ifc->st.announces++;
		if (a->family == IMC_IPV4) {
			size_t len = arp_build(ifc, IMC_ARP_OP_REQUEST, a->v4,
					       NULL, a->v4);

			ipo_grp_send(ifc, ifc->bcast, ifc->buf, len, K_ARP);
		} else {
			struct group *g = v6_group(ifc, all_nodes);
			struct ipo_nd na;
			int len;

			memset(&na, 0, sizeof(na));
			na.type = IPO_ICMP6_NA;
			na.flags = IPO_NA_OVERRIDE;
			memcpy(na.src, a->v6, 16);
			memcpy(na.dst, all_nodes, 16);
			memcpy(na.target, a->v6, 16);
			na.has_lladdr = true;
			na.lladdr = ifc->hw;
			len = nd_build(ifc, &na);
			if (g && len > 0)
				ipo_grp_send(ifc, g, ifc->buf, (size_t)len, K_ND);
		}
	}
}

void imc_ipoib_port_event(struct imc_ipoib *ifc, enum imc_mcast_port_event ev)
{
	if (!ifc)
		return;
	if (ifc->state == IMC_IPOIB_DOWN) {
		/* Nothing to make stale: down forgot every endpoint. */
		if (ev == IMC_MCAST_PORT_LID_CHANGE)
			ifc->announce_due = true;
		return;
	}
	switch (ev) {
	case IMC_MCAST_PORT_LID_CHANGE:
		ipo_announce(ifc);
		break;
	case IMC_MCAST_PORT_SM_CHANGE:
	case IMC_MCAST_PORT_REREGISTER:
		eps_make_stale(ifc);
		break;
	default:
		break;
	}
}

/* ---- receive ---- */

/* Learns the sender of an IP packet (endpoints are made on the fly from
 * the GRH, so traffic flows where ARP never ran), and maps its
 * source address to that endpoint when the address is on the link. */
static void glean(struct imc_ipoib *ifc, struct ep *e,
		  const struct imc_ip_addr *src)
{
	if (!e || imc_ip_addr_is_multicast(src) || ipo_is_own(ifc, src) ||
	    !ipo_on_link(ifc, src))
		return;
	if (src->family == IMC_IPV4 &&
	    (src->v4 == 0 || ipo_v4_broadcast(ifc, src->v4)))
		return;
	if (src->family == IMC_IPV6) {
		static const uint8_t zero[16];

		if (!memcmp(src->v6, zero, 16))
			return;
	}
	neigh_confirm(ifc, neigh_find(ifc, src), src, e);
}

/* RFC 826 "Packet Reception", with RFC 4391's hardware addresses: the
 * sender's LID is the packet's SLID, trusted only when the hardware
 * address is the GRH's source GID. */
static void arp_input(struct imc_ipoib *ifc, const struct imc_ipoib_rx *rx,
		      const uint8_t *p, size_t len)
{
	struct imc_ipoib_arp a;
	struct imc_ip_addr spa, tpa;
	struct neigh *nb;
	struct ep *e;
	bool merged = false;

	if (imc_ipoib_arp_unpack(&a, p, len) < 0) {
		ipo_drop(ifc, IMC_IPOIB_DROP_MALFORMED);
		return;
	}
	ifc->st.arp_rx++;
	if (a.op != IMC_ARP_OP_REQUEST && a.op != IMC_ARP_OP_REPLY)
		return;
	if (!rx->has_grh || !imc_gid_equal(&a.sha.gid, &rx->sgid))
		return;
	imc_ip_addr_v4(a.spa, &spa);
	imc_ip_addr_v4(a.tpa, &tpa);
	nb = a.spa ? neigh_find(ifc, &spa) : NULL;
	/* Only a sender we know or one that asks us is worth an endpoint:
	 * every port of the partition hears every request. A known endpoint
	 * learns the LID the packet came from (a gratuitous ARP after a LID
	 * change). */
	if (!nb && !ipo_is_own(ifc, &tpa)) {
		if (ipo_ep_find(ifc, &a.sha.gid))
			ipo_ep_learn(ifc, &a.sha.gid, rx->slid, a.sha.qpn);
		return;
	}
	e = ipo_ep_learn(ifc, &a.sha.gid, rx->slid, a.sha.qpn);
	if (!e)
		return;
	if (nb) {
		neigh_confirm(ifc, nb, &spa, e);
		merged = true;
	}
	if (!ipo_is_own(ifc, &tpa))
		return;
	if (!merged && a.spa != 0 && ipo_on_link(ifc, &spa))
		neigh_confirm(ifc, NULL, &spa, e);
	if (a.op == IMC_ARP_OP_REQUEST) {
		size_t n = arp_build(ifc, IMC_ARP_OP_REPLY, a.tpa, &a.sha,
				     a.spa);

		ipo_ep_send(ifc, e, ifc->buf, n, K_ARP);
	}
}

/* RFC 4861 7.2.3-7.2.5 for the IPoIB link. */
static void nd_input(struct imc_ipoib *ifc, const struct imc_ipoib_rx *rx,
		     const struct ipo_nd *nd)
{
	static const uint8_t zero[16];
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
	struct imc_ip_addr target, src;
	struct neigh *nb = NULL;
	struct ipo_nd na;
	struct ep *e;
	bool dad;
	int n;

	ifc->st.nd_rx++;
	if (!rx->has_grh)
		return;
	imc_ip_addr_v6(nd->target, &target);
	imc_ip_addr_v6(nd->src, &src);
	/* An NA matters for a neighbour being resolved or known, an NS for
	 * an own address; others share our solicited-node group. */
	if (nd->type == IPO_ICMP6_NA) {
		nb = neigh_find(ifc, &target);
		/* An unsolicited NA (RFC 4861 7.2.6) still tells a known
		 * endpoint its new LID. */
		if (!nb) {
			if (nd->has_lladdr &&
			    imc_gid_equal(&nd->lladdr.gid, &rx->sgid) &&
			    ipo_ep_find(ifc, &nd->lladdr.gid))
				ipo_ep_learn(ifc, &nd->lladdr.gid, rx->slid,
					     nd->lladdr.qpn);
			return;
		}
	} else if (!ipo_is_own(ifc, &target)) {
		return;
	}
	if (nd->has_lladdr) {
		if (!imc_gid_equal(&nd->lladdr.gid, &rx->sgid))
			return;
		e = ipo_ep_learn(ifc, &nd->lladdr.gid, rx->slid, nd->lladdr.qpn);
	} else {
		e = ipo_ep_learn(ifc, &rx->sgid, rx->slid, rx->src_qp);
	}
	if (!e)
		return;
	if (nd->type == IPO_ICMP6_NA) {
		neigh_confirm(ifc, nb, &target, e);
		return;
	}
	dad = !memcmp(nd->src, zero, 16);
	if (!dad)
		neigh_confirm(ifc, neigh_find(ifc, &src), &src, e);
	memset(&na, 0, sizeof(na));
	na.type = IPO_ICMP6_NA;
	/* RFC 4861 7.2.4: Solicited unless answering DAD (then to
	 * all-nodes), Override for a unicast address. */
	na.flags = IPO_NA_OVERRIDE | (dad ? 0 : IPO_NA_SOLICITED);
	memcpy(na.src, nd->target, 16);
	memcpy(na.dst, dad ? all_nodes : nd->src, 16);
	memcpy(na.target, nd->target, 16);
	na.has_lladdr = true;
	na.lladdr = ifc->hw;
	n = nd_build(ifc, &na);
	if (n < 0)
		return;
	if (dad) {
		struct group *g = v6_group(ifc, all_nodes);

		if (g)
			ipo_grp_send(ifc, g, ifc->buf, (size_t)n, K_ND);
	} else {
		ipo_ep_send(ifc, e, ifc->buf, (size_t)n, K_ND);
	}
}

void imc_ipoib_recv(struct imc_ipoib *ifc, const struct imc_ipoib_rx *rx)
{
	struct imc_ipoib_hdr h;
	struct imc_ip_hdr ip;
	struct imc_ipoib_packet pk;
	const uint8_t *p;
	size_t len;
	bool mcast = false;
	struct ep *e = NULL;

	if (ifc->state == IMC_IPOIB_DOWN) {
		ipo_drop(ifc, IMC_IPOIB_DROP_DOWN);
		return;
	}
	/* IBA 10.9: a partition is the P_Key's low 15 bits. */
	if ((rx->pkey ^ ifc->cfg.pkey) & 0x7FFF) {
		ipo_drop(ifc, IMC_IPOIB_DROP_PKEY);
		return;
	}
	if (imc_ipoib_hdr_unpack(&h, rx->data, rx->len) < 0) {
		ipo_drop(ifc, IMC_IPOIB_DROP_MALFORMED);
		return;
	}
	p = rx->data + IMC_IPOIB_HDR_LEN;
	len = rx->len - IMC_IPOIB_HDR_LEN;
	if (rx->has_grh) {
		if (imc_gid_equal(&rx->sgid, &ifc->cfg.port_gid) &&
		    rx->src_qp == ifc->cfg.qpn) {
			ipo_drop(ifc, IMC_IPOIB_DROP_LOOPBACK);
			return;
		}
		if (imc_gid_is_multicast(&rx->dgid)) {
			bool bc = ifc->bcast &&
				  imc_gid_equal(&rx->dgid, &ifc->bcast_mgid);
			struct group *g = bc ? ifc->bcast :
					       ipo_grp_find(ifc, &rx->dgid);

			/* Also in the attach window: the QP is attached and
			 * receives before the join callback has run. The
			 * broadcast group is always wanted. */
			if (!g || (!bc && !ipo_grp_wants_full(g))) {
				ipo_drop(ifc, IMC_IPOIB_DROP_NOT_LISTENING);
				return;
			}
			mcast = true;
		}
	}
	switch (h.type) {
	case IMC_ETHERTYPE_ARP:
		arp_input(ifc, rx, p, len);
		return;
	case IMC_ETHERTYPE_IPV4:
	case IMC_ETHERTYPE_IPV6:
		break;
	default:
		ipo_drop(ifc, IMC_IPOIB_DROP_ETHERTYPE);
		return;
	}
	if (imc_ip_parse(p, len, &ip) < 0 ||
	    (ip.family == IMC_IPV4) != (h.type == IMC_ETHERTYPE_IPV4)) {
		ipo_drop(ifc, IMC_IPOIB_DROP_MALFORMED);
		return;
	}
	if (ip.family == IMC_IPV6 && ip.proto == IPO_PROTO_ICMP6) {
		struct ipo_nd nd;
		int rc = ipo_nd_parse(p, len, &nd);

		if (rc == 0) {
			nd_input(ifc, rx, &nd);
			return;
		}
		if (rc != -ENOENT) {
			ipo_drop(ifc, IMC_IPOIB_DROP_MALFORMED);
			return;
		}
	}
	if (rx->has_grh)
		e = ipo_ep_learn(ifc, &rx->sgid, rx->slid, rx->src_qp);
	glean(ifc, e, &ip.src);
	memset(&pk, 0, sizeof(pk));
	pk.ethertype = h.type;
	pk.data = p;
	pk.len = ip.len;
	pk.multicast = mcast;
	if (rx->has_grh)
		pk.src_gid = rx->sgid;
	ifc->st.rx_packets++;
	ifc->st.rx_bytes += ip.len;
	if (mcast)
		ifc->st.rx_mcast++;
	ifc->ops.deliver(ifc->ops.ctx, &pk);
}

