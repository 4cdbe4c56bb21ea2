/* The IPoIB interface (ipoib.h): RFC 4391 datagram mode without
 * PathRecord queries.
 *
 * The interface (one per port and P_Key):
 *
 *   state     event                                  next
 *   DOWN      imc_ipoib_up()                         JOINING
 *   JOINING   broadcast member JOINED                UP (carrier on)
 *   JOINING   broadcast member ERROR                 BACKOFF
 *   UP        broadcast member REJOINING or WAITING  JOINING (carrier off)
 *   UP        broadcast member ERROR                 BACKOFF (carrier off)
 *   BACKOFF   retry timer                            JOINING
 *   any       imc_ipoib_down()                       DOWN
 *
 * A multicast group (the broadcast group is one):
 *
 *   state     event                                  next
 *   IDLE      interface UP and wanted (a listener,   JOINING
 *             something queued); broadcast: up()
 *   JOINING   member JOINED (AV from the answer)     JOINED
 *   JOINED    member REJOINING or WAITING            JOINING
 *   JOINING,  member ERROR: listened or broadcast    BACKOFF
 *   JOINED    member ERROR: send-only                freed
 *   BACKOFF   retry timer                            JOINING
 *   any       broadcast lost (ERROR), interface down IDLE (members left)
 *
 * A unicast endpoint (keyed by GID):
 *
 *   state     event                                  next
 *   NOAV      the broadcast record is known          READY (AV fabricated)
 *   READY     the broadcast record changes           READY (fabricated again)
 *   READY     port reregister or SM change           STALE
 *   STALE     a send (interface UP)                  PROBING (unicast probe)
 *   STALE,    a packet from the endpoint's GID       READY (queue flushed)
 *   PROBING
 *   PROBING   no answer after resolve_timeout        PROBING (multicast
 *                                                    solicitation)
 *   PROBING   no answer after the retries            STALE (queue dropped)
 *
 * Every received packet with a GRH refreshes its endpoint's LID (the LRH
 * SLID) and QPN, so that a peer that took a new LID is found again by
 * the first packet it sends; a port whose own LID changed sends one
 * (gratuitous ARP, unsolicited NA), and after a reregister or an SM
 * change (IBA 14.4.11: the SM may have given other LIDs) no fabricated
 * AV is trusted until the peer answered or spoke.
 *
 * A neighbour (IPv4 or IPv6 address):
 *
 *   state       event                                next
 *   INCOMPLETE  ARP reply / NA / packet from it      REACHABLE
 *   INCOMPLETE  no answer after the retries          freed (drops)
 *   REACHABLE   not confirmed for neigh_expiry       freed
 *
 * Nothing is sent while the interface is not UP: a unicast AV needs the
 * broadcast group's SL, rate, TClass, FlowLabel and HopLimit (AVs are
 * fabricated from it), and a multicast AV exists only once its
 * join has been answered. Until then packets wait in bounded queues: on
 * a neighbour (unresolved), an endpoint (no AV yet) or a group (not
 * joined). Endpoints with packets waiting sit on a list in the order
 * they started waiting, which is the order they are flushed in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ipoib/ipoib_core.h"
#include "util/vec.h"
#include "util/bytes.h"


static const char *const state_names[] = {
	[IMC_IPOIB_DOWN] = "down",
	[IMC_IPOIB_JOINING] = "joining",
	[IMC_IPOIB_UP] = "up",
	[IMC_IPOIB_BACKOFF] = "backoff",
};

const char *imc_ipoib_state_str(enum imc_ipoib_state s)
{
	if ((unsigned)s < IMC_ARRAY_SIZE(state_names))
		return state_names[s];
	return "?";
}

static const char *const drop_names[IMC_IPOIB_DROP__COUNT] = {
	[IMC_IPOIB_DROP_DOWN] = "down",
	[IMC_IPOIB_DROP_MALFORMED] = "malformed",
	[IMC_IPOIB_DROP_ETHERTYPE] = "ethertype",
	[IMC_IPOIB_DROP_MTU] = "mtu",
	[IMC_IPOIB_DROP_PKEY] = "pkey",
	[IMC_IPOIB_DROP_NO_ROUTE] = "no_route",
	[IMC_IPOIB_DROP_UNRESOLVED] = "unresolved",
	[IMC_IPOIB_DROP_JOIN_FAILED] = "join_failed",
	[IMC_IPOIB_DROP_QUEUE_ENDPOINT] = "queue_endpoint",
	[IMC_IPOIB_DROP_QUEUE_GROUP] = "queue_group",
	[IMC_IPOIB_DROP_QUEUE_TOTAL] = "queue_total",
	[IMC_IPOIB_DROP_SEND] = "send",
	[IMC_IPOIB_DROP_NOT_LISTENING] = "not_listening",
	[IMC_IPOIB_DROP_LOOPBACK] = "loopback",
	[IMC_IPOIB_DROP_FLUSHED] = "flushed",
	[IMC_IPOIB_DROP_NO_MEMORY] = "no_memory",
};

const char *imc_ipoib_drop_str(enum imc_ipoib_drop d)
{
	if ((unsigned)d < IMC_IPOIB_DROP__COUNT)
		return drop_names[d];
	return "?";
}

void imc_ipoib_config_init(struct imc_ipoib_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pkey = 0xFFFF;
	cfg->scope = IMC_IPOIB_DEFAULT_SCOPE;
	cfg->port_mtu = 4;  /* 2048 */
	cfg->queue_endpoint = 16;
	cfg->queue_group = 64;
	cfg->queue_total = 4096;
	cfg->resolve_timeout = IMC_NSEC_PER_SEC;
	cfg->resolve_retries = 3;
	cfg->neigh_expiry = 60 * IMC_NSEC_PER_SEC;
	cfg->sendonly_idle = 10 * IMC_NSEC_PER_SEC;
	cfg->sa_sendonly_full = true;
	cfg->join_retry = IMC_NSEC_PER_SEC;
	cfg->join_retry_max = 16 * IMC_NSEC_PER_SEC;
}

/* IBA 14.2.5.6 MTU codes 1..5: 256..4096 bytes. */
unsigned ipo_mtu_bytes(unsigned code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

void ipo_drop(struct imc_ipoib *ifc, enum imc_ipoib_drop why)
{
	ifc->st.drops[why]++;
}

/* ---- queues ---- */

static void q_account(struct imc_ipoib *ifc, size_t add, size_t sub)
{
	ifc->st.queued += add;
	ifc->st.queued -= sub;
	if (ifc->st.queued > ifc->st.queued_max)
		ifc->st.queued_max = ifc->st.queued;
}

/* Copies a datagram to the tail of q, or counts why it cannot. */
int ipo_q_push(struct imc_ipoib *ifc, struct ipo_queue *q, size_t bound,
	       enum imc_ipoib_drop full, const uint8_t *data, size_t len,
	       enum pkt_kind kind)
{
	struct ipo_pkt *p;

	if (q->n >= bound) {
		ipo_drop(ifc, full);
		return -ENOBUFS;
	}
	if (ifc->st.queued >= ifc->cfg.queue_total) {
		ipo_drop(ifc, IMC_IPOIB_DROP_QUEUE_TOTAL);
		return -ENOBUFS;
	}
	p = malloc(sizeof(*p) + len);
	if (!p) {
		ipo_drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return -ENOMEM;
	}
	p->next = NULL;
	p->len = len;
	p->kind = (uint8_t)kind;
	memcpy(p->data, data, len);
	if (q->tail)
		q->tail->next = p;
	else
		q->head = p;
	q->tail = p;
	q->n++;
	q_account(ifc, 1, 0);
	if (full == IMC_IPOIB_DROP_QUEUE_GROUP) {
		if (q->n > ifc->st.queued_max_group)
			ifc->st.queued_max_group = q->n;
	} else if (q->n > ifc->st.queued_max_endpoint) {
		ifc->st.queued_max_endpoint = q->n;
	}
	return 0;
}

struct ipo_pkt *ipo_q_pop(struct imc_ipoib *ifc, struct ipo_queue *q)
{
	struct ipo_pkt *p = q->head;

	if (!p)
		return NULL;
	q->head = p->next;
	if (!q->head)
		q->tail = NULL;
	q->n--;
	q_account(ifc, 0, 1);
	return p;
}

void ipo_q_drop_all(struct imc_ipoib *ifc, struct ipo_queue *q,
		    enum imc_ipoib_drop why)
{
	struct ipo_pkt *p;

	while ((p = ipo_q_pop(ifc, q))) {
		ipo_drop(ifc, why);
		free(p);
	}
}

/* ---- sending ---- */

static void count_tx(struct imc_ipoib *ifc, enum pkt_kind kind, size_t len,
		     bool mcast)
{
	switch (kind) {
	case K_IP:
		ifc->st.tx_packets++;
		ifc->st.tx_bytes += len - IMC_IPOIB_HDR_LEN;
		if (mcast)
			ifc->st.tx_mcast++;
		break;
	case K_ARP:
		ifc->st.arp_tx++;
		break;
	case K_ND:
		ifc->st.nd_tx++;
		break;
	}
}

int ipo_tx(struct imc_ipoib *ifc, const struct imc_ipoib_av *av,
	   uint32_t qpn, uint32_t qkey, const uint8_t *data, size_t len,
	   enum pkt_kind kind)
{
	int rc = ifc->ops.send(ifc->ops.ctx, av, qpn, qkey, data, len);

	if (rc < 0) {
		ipo_drop(ifc, IMC_IPOIB_DROP_SEND);
		return rc;
	}
	count_tx(ifc, kind, len, qpn == QPN_GROUP);
	return 0;
}

/* ---- state changes ---- */

static void carrier_fire(struct imc_timer *t)
{
	struct imc_ipoib *ifc = imc_container_of(t, struct imc_ipoib,
						 carrier_timer);

	if (ifc->carrier == ifc->carrier_reported)
		return;
	ifc->carrier_reported = ifc->carrier;
	if (ifc->ops.carrier)
		ifc->ops.carrier(ifc->ops.ctx, ifc->carrier);
}

static bool ifc_transition_ok(enum imc_ipoib_state from,
			      enum imc_ipoib_state to)
{
	switch (to) {
	case IMC_IPOIB_DOWN:
		return from != IMC_IPOIB_DOWN;
	case IMC_IPOIB_JOINING:
		return from == IMC_IPOIB_DOWN || from == IMC_IPOIB_UP ||
		       from == IMC_IPOIB_BACKOFF;
	case IMC_IPOIB_UP:
		return from == IMC_IPOIB_JOINING;
	case IMC_IPOIB_BACKOFF:
		return from == IMC_IPOIB_JOINING || from == IMC_IPOIB_UP;
	}
	return false;
}

/* The one place the interface's state changes; carrier follows it and
 * is reported from the loop (never inside an API call). */
void ipo_ifc_set_state(struct imc_ipoib *ifc, enum imc_ipoib_state to)
{
	bool carrier = to == IMC_IPOIB_UP;

	if (!ifc_transition_ok(ifc->state, to))
		abort();
	ifc->state = to;
	if (carrier != ifc->carrier) {
		ifc->carrier = carrier;
		ifc->st.carrier_changes++;
		if (!imc_timer_armed(&ifc->carrier_timer))
			imc_timer_arm(ifc->loop, &ifc->carrier_timer,
				      imc_loop_now(ifc->loop));
	}
}

static bool grp_transition_ok(enum grp_state from, enum grp_state to)
{
	switch (to) {
	case GRP_IDLE:
		return true;
	case GRP_JOINING:
		return from == GRP_IDLE || from == GRP_JOINED ||
		       from == GRP_BACKOFF || from == GRP_JOINING;
	case GRP_JOINED:
		return from == GRP_JOINING || from == GRP_JOINED;
	case GRP_BACKOFF:
		return from == GRP_JOINING || from == GRP_JOINED;
	}
	return false;
}

void ipo_grp_set_state(struct group *g, enum grp_state to)
{
	if (!grp_transition_ok(g->state, to))
		abort();
	g->state = to;
	if (to != GRP_JOINED)
		g->has_av = false;
}

static bool ep_transition_ok(enum ep_state from, enum ep_state to)
{
	switch (to) {
	case EP_NOAV:
		return false;
	case EP_READY:
		return true;
	case EP_STALE:
		return from == EP_READY || from == EP_PROBING;
	case EP_PROBING:
		return from == EP_STALE;
	}
	return false;
}

/* An AV, once made, is never taken back; it is only made stale. */
void ipo_ep_set_state(struct ep *e, enum ep_state to)
{
	if (!ep_transition_ok(e->state, to))
		abort();
	e->state = to;
}

/* ---- endpoints ---- */

uint64_t ipo_gid_hash(const struct imc_ipoib *ifc, const struct imc_gid *g)
{
	return imc_gid_hash(g, ifc->cfg.hash_seed);
}

static bool ep_eq(const struct imc_hnode *n, const void *gid)
{
	return imc_gid_equal(&imc_container_of(n, struct ep, hn)->gid, gid);
}

struct ep *ipo_ep_find(const struct imc_ipoib *ifc,
		       const struct imc_gid *gid)
{
	struct imc_hnode *n = imc_htab_find(&ifc->eps, ipo_gid_hash(ifc, gid),
					    ep_eq, gid);

	return n ? imc_container_of(n, struct ep, hn) : NULL;
}

/* The unicast AV of an endpoint, made from what the interface knows: the
 * endpoint's GID, LID and QPN, and the broadcast group's SL, rate,
 * TClass, FlowLabel and HopLimit (RFC 4391 4: the broadcast group's
 * parameters are the link's). The GRH always goes with it, so that the
 * peer finds us by GID. Only ever for a unicast GID. */
void ipo_av_from(struct imc_ipoib_av *av, const struct imc_ipoib *ifc,
		 const struct imc_mcmr *r, uint16_t dlid,
		 const struct imc_gid *dgid)
{
	memset(av, 0, sizeof(*av));
	av->dlid = dlid;
	av->sl = r->sl;
	av->rate = r->rate;
	av->dgid = *dgid;
	av->sgid_index = ifc->cfg.sgid_index;
	av->tclass = r->tclass;
	av->flow_label = r->flow_label;
	av->hop_limit = r->hop_limit;
}

void ipo_ep_fabricate(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;

	if (imc_gid_is_multicast(&e->gid))
		abort();
	ipo_av_from(&e->av, ifc, &ifc->brec, e->lid, &e->gid);
	ifc->st.avs_fabricated++;
	/* A stale AV made again from a new broadcast record is still to be
	 * re-validated: the record says nothing of the peer's LID. */
	if (e->state == EP_NOAV)
		ipo_ep_set_state(e, EP_READY);
}

static void ep_expiry_fire(struct imc_timer *t);
void ipo_ep_probe_fire(struct imc_timer *t);
void ipo_ep_probe(struct ep *e);
void ipo_ep_flush(struct imc_ipoib *ifc, struct ep *e);

/* The endpoint spoke (any packet from its GID, the answer to a probe):
 * what it says is its current LID and QPN, so a stale AV is good again
 * and what waited for it goes out. */
static void ep_confirm(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;

	if (e->state != EP_STALE && e->state != EP_PROBING)
		return;
	imc_timer_cancel(ifc->loop, &e->probe);
	ipo_ep_set_state(e, EP_READY);
	ifc->st.revalidated++;
	if (ifc->state == IMC_IPOIB_UP)
		ipo_ep_flush(ifc, e);
}

static void ep_free(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;

	imc_timer_cancel(ifc->loop, &e->expiry);
	imc_timer_cancel(ifc->loop, &e->probe);
	ipo_q_drop_all(ifc, &e->q, IMC_IPOIB_DROP_FLUSHED);
	if (imc_list_linked(&e->wait))
		imc_list_del(&e->wait);
	imc_list_del(&e->all);
	imc_htab_remove(&ifc->eps, &e->hn);
	ifc->st.endpoints--;
	free(e);
}

/* The endpoint of a port GID, created or updated from what a packet
 * says: its sender's LID (the LRH SLID) and QPN. Never for a multicast
 * or zero GID. */
struct ep *ipo_ep_learn(struct imc_ipoib *ifc, const struct imc_gid *gid,
			uint16_t lid, uint32_t qpn)
{
	struct ep *e;

	if (imc_gid_is_multicast(gid) || imc_gid_is_zero(gid) || lid == 0 ||
	    lid >= 0xC000 || qpn == 0 || qpn > 0xFFFFFF || qpn == QPN_GROUP)
		return NULL;
	e = ipo_ep_find(ifc, gid);
	if (e) {
		e->used = imc_loop_now(ifc->loop);
		if (e->lid != lid || e->qpn != qpn) {
			/* The port moved (new LID after a sweep) or the peer
			 * made a new QP: the packet is the latest word. */
			e->lid = lid;
			e->qpn = qpn;
			if (e->state != EP_NOAV)
				ipo_ep_fabricate(e);
		}
		ep_confirm(e);
		return e;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		ipo_drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return NULL;
	}
	e->ifc = ifc;
	e->state = EP_NOAV;
	e->gid = *gid;
	e->lid = lid;
	e->qpn = qpn;
	e->used = imc_loop_now(ifc->loop);
	imc_list_init(&e->wait);
	imc_timer_init(&e->expiry, ep_expiry_fire);
	imc_timer_init(&e->probe, ipo_ep_probe_fire);
	imc_htab_insert(&ifc->eps, &e->hn, ipo_gid_hash(ifc, gid));
	imc_list_add_tail(&ifc->ep_list, &e->all);
	ifc->st.endpoints++;
	ifc->st.endpoints_from_rx++;
	if (ifc->state == IMC_IPOIB_UP)
		ipo_ep_fabricate(e);
	imc_timer_arm(ifc->loop, &e->expiry,
		      e->used + ifc->cfg.neigh_expiry);
	return e;
}

bool ipo_expiry_rearm(struct imc_ipoib *ifc, struct imc_timer *t,
		      imc_time_t last, imc_time_t now)
{
	imc_time_t at = last + ifc->cfg.neigh_expiry;

	if (at <= now)
		return false;
	imc_timer_arm(ifc->loop, t, at);
	return true;
}

static void ep_expiry_fire(struct imc_timer *t)
{
	struct ep *e = imc_container_of(t, struct ep, expiry);
	struct imc_ipoib *ifc = e->ifc;
	imc_time_t now = imc_loop_now(ifc->loop);

	if (e->nrefs || e->q.n) {
		imc_timer_arm(ifc->loop, &e->expiry, now + ifc->cfg.neigh_expiry);
		return;
	}
	if (ipo_expiry_rearm(ifc, &e->expiry, e->used, now))
		return;
	ifc->st.expired++;
	ep_free(e);
}

/* A datagram for an endpoint: now, or once the broadcast AV is there. */
int ipo_ep_send(struct imc_ipoib *ifc, struct ep *e, const uint8_t *data,
		size_t len, enum pkt_kind kind)
{
	int rc;

	e->used = imc_loop_now(ifc->loop);
	if (ifc->state == IMC_IPOIB_UP && e->state == EP_READY && !e->q.n)
		return ipo_tx(ifc, &e->av, e->qpn, ifc->brec.qkey, data, len,
			      kind);
	rc = ipo_q_push(ifc, &e->q, ifc->cfg.queue_endpoint,
			IMC_IPOIB_DROP_QUEUE_ENDPOINT, data, len, kind);
	if (rc < 0)
		return rc;
	ifc->st.deferred++;
	if (!imc_list_linked(&e->wait))
		imc_list_add_tail(&ifc->waiting, &e->wait);
	/* data may be ifc->buf, which the probe reuses: it is copied. */
	if (ifc->state == IMC_IPOIB_UP && e->state == EP_STALE)
		ipo_ep_probe(e);
	return 0;
}

void ipo_ep_flush(struct imc_ipoib *ifc, struct ep *e)
{
	struct ipo_pkt *p;

	if (imc_list_linked(&e->wait))
		imc_list_del(&e->wait);
	while ((p = ipo_q_pop(ifc, &e->q))) {
		ipo_tx(ifc, &e->av, e->qpn, ifc->brec.qkey, p->data, p->len,
		       (enum pkt_kind)p->kind);
		free(p);
	}
}

/* Every endpoint that waited, in the order it started waiting; a stale
 * one is probed and keeps its packets until it answers. */
void ipo_flush_waiting(struct imc_ipoib *ifc)
{
	for (struct imc_list *l = ifc->waiting.next, *n;
	     ifc->state == IMC_IPOIB_UP && l != &ifc->waiting; l = n) {
		struct ep *e = imc_container_of(l, struct ep, wait);

		n = l->next;
		if (e->state == EP_READY)
			ipo_ep_flush(ifc, e);
		else if (e->state == EP_STALE)
			ipo_ep_probe(e);
	}
}

/* ---- own addresses ---- */

static int own_cmp(const void *key, const void *e)
{
	return imc_ip_addr_cmp(key, &((const struct own_addr *)e)->a);
}

/* Index of a in ifc->addrs, or -(insertion point) - 1. */
static long addr_index(const struct imc_ipoib *ifc,
		       const struct imc_ip_addr *a)
{
	return imc_vec_bsearch(ifc->addrs, ifc->naddrs, sizeof(*ifc->addrs),
			       a, own_cmp);
}

bool ipo_is_own(const struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	return addr_index(ifc, a) >= 0;
}

static bool prefix_match(const struct imc_ip_addr *a,
			 const struct own_addr *o)
{
	if (a->family != o->a.family)
		return false;
	if (a->family == IMC_IPV4) {
		uint32_t mask = o->plen ? ~0u << (32 - o->plen) : 0;

		return ((a->v4 ^ o->a.v4) & mask) == 0;
	}
	for (unsigned i = 0; i < o->plen; i += 8) {
		unsigned bits = o->plen - i >= 8 ? 8 : o->plen - i;
		uint8_t mask = (uint8_t)(0xFF00u >> bits);

		if ((a->v6[i / 8] ^ o->a.v6[i / 8]) & mask)
			return false;
	}
	return true;
}

static bool v6_link_local(const uint8_t a[16])
{
	return a[0] == 0xFE && (a[1] & 0xC0) == 0x80;
}

/* The own address a packet to dst should come from (same prefix first),
 * or NULL. */
const struct own_addr *ipo_own_for(const struct imc_ipoib *ifc,
				   const struct imc_ip_addr *dst)
{
	const struct own_addr *any = NULL;

	for (size_t i = 0; i < ifc->naddrs; i++) {
		const struct own_addr *o = &ifc->addrs[i];

		if (o->a.family != dst->family)
			continue;
		if (prefix_match(dst, o))
			return o;
		if (!any)
			any = o;
	}
	return any;
}

/* On the link: in one of the interface's prefixes, or IPv6 link-local
 * (RFC 4861 5.2: fe80::/10 is always on-link) once it has an IPv6
 * address. */
bool ipo_on_link(const struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	for (size_t i = 0; i < ifc->naddrs; i++)
		if (prefix_match(a, &ifc->addrs[i]))
			return true;
	return a->family == IMC_IPV6 && ifc->v6_addrs && v6_link_local(a->v6);
}

/* IPv4 limited broadcast, or the directed broadcast of an own prefix. */
bool ipo_v4_broadcast(const struct imc_ipoib *ifc, uint32_t a)
{
	if (a == 0xFFFFFFFFu)
		return true;
	for (size_t i = 0; i < ifc->naddrs; i++) {
		const struct own_addr *o = &ifc->addrs[i];
		uint32_t host;

		if (o->a.family != IMC_IPV4 || o->plen >= 31)
			continue;
		host = ~0u >> o->plen;
		if (prefix_match(&(struct imc_ip_addr){ .family = IMC_IPV4,
							.v4 = a }, o) &&
		    (a & host) == host)
			return true;
	}
	return false;
}

/* ---- transmit ---- */

int imc_ipoib_xmit(struct imc_ipoib *ifc, const void *pkt, size_t len)
{
	struct imc_ipoib_hdr h;
	struct imc_ip_hdr ip;
	struct imc_gid mgid;
	struct group *g;

	if (ifc->state == IMC_IPOIB_DOWN) {
		ipo_drop(ifc, IMC_IPOIB_DROP_DOWN);
		return -ENETDOWN;
	}
	if (len > ifc->mtu) {
		ipo_drop(ifc, IMC_IPOIB_DROP_MTU);
		return -EMSGSIZE;
	}
	if (!pkt || imc_ip_parse(pkt, len, &ip) < 0) {
		ipo_drop(ifc, IMC_IPOIB_DROP_MALFORMED);
		return -EINVAL;
	}
	h.type = ip.family == IMC_IPV4 ? IMC_ETHERTYPE_IPV4 :
					 IMC_ETHERTYPE_IPV6;
	imc_ipoib_hdr_pack(&h, ifc->buf, IMC_IPOIB_HDR_LEN);
	memcpy(ifc->buf + IMC_IPOIB_HDR_LEN, pkt, ip.len);
	len = IMC_IPOIB_HDR_LEN + ip.len;
	if (imc_ip_addr_is_multicast(&ip.dst)) {
		int rc = ip.family == IMC_IPV4 ?
			imc_ipoib_mgid_from_ipv4(ip.dst.v4, ifc->cfg.pkey,
						 ifc->cfg.scope, &mgid) :
			imc_ipoib_mgid_from_ipv6(ip.dst.v6, ifc->cfg.pkey,
						 ifc->cfg.scope, &mgid);

		if (rc < 0) {
			ipo_drop(ifc, IMC_IPOIB_DROP_MALFORMED);
			return -EINVAL;
		}
		g = ipo_grp_get(ifc, &mgid, &ip.dst);
		if (!g)
			return -ENOMEM;
		return ipo_grp_send(ifc, g, ifc->buf, len, K_IP);
	}
	if (ip.family == IMC_IPV4 && ipo_v4_broadcast(ifc, ip.dst.v4))
		return ipo_grp_send(ifc, ifc->bcast, ifc->buf, len, K_IP);
	if (!ipo_on_link(ifc, &ip.dst)) {
		ipo_drop(ifc, IMC_IPOIB_DROP_NO_ROUTE);
		return -EHOSTUNREACH;
	}
	return ipo_neigh_send(ifc, &ip.dst, ifc->buf, len);
}

/* ---- addresses and listening ---- */

static int ip_group_mgid(const struct imc_ipoib *ifc,
			 const struct imc_ip_addr *a, struct imc_gid *mgid)
{
	if (a->family == IMC_IPV4)
		return imc_ipoib_mgid_from_ipv4(a->v4, ifc->cfg.pkey,
						ifc->cfg.scope, mgid);
	if (a->family == IMC_IPV6)
		return imc_ipoib_mgid_from_ipv6(a->v6, ifc->cfg.pkey,
						ifc->cfg.scope, mgid);
	return -EINVAL;
}

static int listen_ip(struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	struct imc_gid mgid;

	if (ip_group_mgid(ifc, a, &mgid) < 0)
		return -EINVAL;
	return ipo_grp_listen(ifc, &mgid, a);
}

static int unlisten_ip(struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	struct imc_gid mgid;
	struct group *g;

	if (ip_group_mgid(ifc, a, &mgid) < 0)
		return -EINVAL;
	g = ipo_grp_find(ifc, &mgid);
	if (!g || !g->listeners)
		return -ENOENT;
	ipo_grp_unlisten(g);
	return 0;
}

int imc_ipoib_mcast_listen(struct imc_ipoib *ifc,
			   const struct imc_ip_addr *group)
{
	if (!ifc || !group || !imc_ip_addr_is_multicast(group))
		return -EINVAL;
	return listen_ip(ifc, group);
}

int imc_ipoib_mcast_unlisten(struct imc_ipoib *ifc,
			     const struct imc_ip_addr *group)
{
	if (!ifc || !group || !imc_ip_addr_is_multicast(group))
		return -EINVAL;
	return unlisten_ip(ifc, group);
}

int imc_ipoib_mcast_mgid(const struct imc_ipoib *ifc,
			 const struct imc_ip_addr *group, struct imc_gid *mgid)
{
	if (!ifc || !group || !mgid || !imc_ip_addr_is_multicast(group))
		return -EINVAL;
	return ip_group_mgid(ifc, group, mgid) < 0 ? -EINVAL : 0;
}

static const uint8_t all_nodes_addr[16] = { 0xff, 0x02, [15] = 1 };

int imc_ipoib_addr_add(struct imc_ipoib *ifc, const struct imc_ip_addr *a,
		       unsigned prefix_len)
{
	struct imc_ip_addr key, snm, all;
	long i;
	int rc;

	if (!ifc || !a)
		return -EINVAL;
	if (a->family == IMC_IPV4) {
		if (prefix_len > 32 || a->v4 == 0 ||
		    imc_ip_addr_is_multicast(a) || a->v4 == 0xFFFFFFFFu)
			return -EINVAL;
		imc_ip_addr_v4(a->v4, &key);
	} else if (a->family == IMC_IPV6) {
		static const uint8_t zero[16];

		if (prefix_len > 128 || !memcmp(a->v6, zero, 16) ||
		    imc_ip_addr_is_multicast(a))
			return -EINVAL;
		imc_ip_addr_v6(a->v6, &key);
	} else {
		return -EINVAL;
	}
	i = addr_index(ifc, &key);
	if (i >= 0)
		return -EEXIST;
	if (key.family == IMC_IPV6) {
		/* RFC 4861 7.2.1 / RFC 4291 2.8: listen on the address's
		 * solicited-node group and on all-nodes. */
		uint8_t s[16];

		imc_ipv6_solicited_node(key.v6, s);
		imc_ip_addr_v6(s, &snm);
		imc_ip_addr_v6(all_nodes_addr, &all);
		rc = listen_ip(ifc, &snm);
		if (rc < 0)
			return rc;
		if (!ifc->v6_addrs) {
			rc = listen_ip(ifc, &all);
			if (rc < 0) {
				unlisten_ip(ifc, &snm);
				return rc;
			}
		}
	}
	if (IMC_VEC_RESERVE(&ifc->addrs, &ifc->addr_cap, ifc->naddrs + 1)) {
		if (key.family == IMC_IPV6) {
			unlisten_ip(ifc, &snm);
			if (!ifc->v6_addrs)
				unlisten_ip(ifc, &all);
		}
		return -ENOMEM;
	}
	i = -i - 1;
	memmove(&ifc->addrs[i + 1], &ifc->addrs[i],
		(ifc->naddrs - (size_t)i) * sizeof(*ifc->addrs));
	ifc->addrs[i].a = key;
	ifc->addrs[i].plen = prefix_len;
	ifc->naddrs++;
	if (key.family == IMC_IPV6)
		ifc->v6_addrs++;
	return 0;
}

int imc_ipoib_addr_del(struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	struct imc_ip_addr key;
	long i;

	if (!ifc || !a)
		return -EINVAL;
	if (a->family == IMC_IPV4)
		imc_ip_addr_v4(a->v4, &key);
	else if (a->family == IMC_IPV6)
		imc_ip_addr_v6(a->v6, &key);
	else
		return -EINVAL;
	i = addr_index(ifc, &key);
	if (i < 0)
		return -ENOENT;
	memmove(&ifc->addrs[i], &ifc->addrs[i + 1],
		(ifc->naddrs - (size_t)i - 1) * sizeof(*ifc->addrs));
	ifc->naddrs--;
	if (key.family == IMC_IPV6) {
		struct imc_ip_addr snm, all;
		uint8_t s[16];

		imc_ipv6_solicited_node(key.v6, s);
		imc_ip_addr_v6(s, &snm);
		unlisten_ip(ifc, &snm);
		if (--ifc->v6_addrs == 0) {
			imc_ip_addr_v6(all_nodes_addr, &all);
			unlisten_ip(ifc, &all);
		}
	}
	return 0;
}

/* ---- life cycle ---- */

int imc_ipoib_create(struct imc_loop *loop, struct imc_mcast *mcast, void *qp,
		     const struct imc_ipoib_config *cfg,
		     const struct imc_ipoib_ops *ops, struct imc_ipoib **out)
{
	struct imc_ipoib *ifc;
	struct imc_gid bmgid;

	if (!loop || !mcast || !cfg || !ops || !out || !ops->send ||
	    !ops->deliver)
		return -EINVAL;
	if (imc_ipoib_bcast_mgid(cfg->pkey, cfg->scope, &bmgid) < 0 ||
	    !ipo_mtu_bytes(cfg->port_mtu) || cfg->qpn == 0 ||
	    cfg->qpn >= QPN_GROUP || !cfg->queue_endpoint ||
	    !cfg->queue_group || !cfg->queue_total ||
	    imc_gid_is_multicast(&cfg->port_gid) ||
	    imc_gid_is_zero(&cfg->port_gid) || !cfg->join_retry ||
	    cfg->join_retry_max < cfg->join_retry)
		return -EINVAL;
	ifc = calloc(1, sizeof(*ifc));
	if (!ifc)
		return -ENOMEM;
	ifc->loop = loop;
	ifc->mcast = mcast;
	ifc->qp = qp;
	ifc->cfg = *cfg;
	ifc->ops = *ops;
	ifc->state = IMC_IPOIB_DOWN;
	ifc->hw.flags = cfg->hw_flags;
	ifc->hw.qpn = cfg->qpn;
	ifc->hw.gid = cfg->port_gid;
	ifc->mtu = ipo_mtu_bytes(cfg->port_mtu) - IMC_IPOIB_HDR_LEN;
	imc_list_init(&ifc->ep_list);
	imc_list_init(&ifc->group_list);
	imc_list_init(&ifc->waiting);
	imc_timer_init(&ifc->carrier_timer, carrier_fire);
	if (imc_htab_init(&ifc->eps, 16) < 0 ||
	    imc_htab_init(&ifc->neighs, 16) < 0 ||
	    imc_htab_init(&ifc->groups, 16) < 0)
		goto fail;
	ifc->bcast = ipo_grp_new(ifc, &bmgid, NULL);
	if (!ifc->bcast)
		goto fail;
	ifc->bcast->bcast = true;
	ifc->bcast_mgid = bmgid;
	*out = ifc;
	return 0;
fail:
	imc_htab_fini(&ifc->eps);
	imc_htab_fini(&ifc->neighs);
	imc_htab_fini(&ifc->groups);
	free(ifc);
	return -ENOMEM;
}

int imc_ipoib_up(struct imc_ipoib *ifc)
{
	int rc;

	if (ifc->state != IMC_IPOIB_DOWN)
		return -EALREADY;
	ipo_ifc_set_state(ifc, IMC_IPOIB_JOINING);
	ifc->bcast->backoff = 0;
	rc = ipo_grp_join(ifc->bcast);
	if (rc < 0) {
		ipo_grp_set_state(ifc->bcast, GRP_JOINING);
		ipo_grp_retry(ifc->bcast);
		ipo_ifc_set_state(ifc, IMC_IPOIB_BACKOFF);
	}
	return 0;
}

static void free_neighs(struct imc_ipoib *ifc)
{
	struct imc_hnode *n;
	size_t pos = 0;

	/* take never resizes; the free's own remove finds nothing */
	while ((n = imc_htab_take(&ifc->neighs, &pos)))
		ipo_neigh_free(imc_container_of(n, struct neigh, hn),
			       IMC_IPOIB_DROP_FLUSHED);
}

void imc_ipoib_down(struct imc_ipoib *ifc)
{
	if (!ifc || ifc->state == IMC_IPOIB_DOWN)
		return;
	ipo_ifc_set_state(ifc, IMC_IPOIB_DOWN);
	for (struct imc_list *l = ifc->group_list.next, *n;
	     l != &ifc->group_list; l = n) {
		struct group *g = imc_container_of(l, struct group, all);

		n = l->next;
		ipo_grp_leave_members(g);
		imc_timer_cancel(ifc->loop, &g->timer);
		ipo_q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_FLUSHED);
		ipo_grp_set_state(g, GRP_IDLE);
		g->backoff = 0;
		g->last_send = 0;
		if (!ipo_grp_wants_full(g))
			ipo_grp_free(g);
	}
	free_neighs(ifc);
	while (!imc_list_empty(&ifc->ep_list))
		ep_free(imc_container_of(ifc->ep_list.next, struct ep, all));
	ifc->mtu = ipo_mtu_bytes(ifc->cfg.port_mtu) - IMC_IPOIB_HDR_LEN;
}

void imc_ipoib_destroy(struct imc_ipoib *ifc)
{
	if (!ifc)
		return;
	imc_ipoib_down(ifc);
	while (!imc_list_empty(&ifc->group_list))
		ipo_grp_free(imc_container_of(ifc->group_list.next, struct group,
					  all));
	imc_timer_cancel(ifc->loop, &ifc->carrier_timer);
	imc_htab_fini(&ifc->eps);
	imc_htab_fini(&ifc->neighs);
	imc_htab_fini(&ifc->groups);
	free(ifc->addrs);
	free(ifc);
}

enum imc_ipoib_state imc_ipoib_state(const struct imc_ipoib *ifc)
{
	return ifc->state;
}

bool imc_ipoib_carrier(const struct imc_ipoib *ifc)
{
	return ifc->carrier;
}

void imc_ipoib_hwaddr(const struct imc_ipoib *ifc,
		      struct imc_ipoib_hwaddr *out)
{
	*out = ifc->hw;
}

unsigned imc_ipoib_mtu(const struct imc_ipoib *ifc)
{
	return ifc->mtu;
}

void imc_ipoib_get_stats(const struct imc_ipoib *ifc,
			 struct imc_ipoib_stats *st)
{
	*st = ifc->st;
}

/* ---- listings ---- */

static void ep_info(const struct ep *e, struct imc_ipoib_endpoint_info *o)
{
	memset(o, 0, sizeof(*o));
	o->gid = e->gid;
	o->has_av = e->state != EP_NOAV;
	o->stale = e->state == EP_STALE || e->state == EP_PROBING;
	if (o->has_av)
		o->av = e->av;
	o->qpn = e->qpn;
	o->queued = e->q.n;
}

static void grp_info(const struct group *g,
		     struct imc_ipoib_endpoint_info *o)
{
	memset(o, 0, sizeof(*o));
	o->gid = g->mgid;
	o->multicast = true;
	o->has_av = g->has_av;
	if (g->has_av)
		o->av = g->av;
	o->qpn = QPN_GROUP;
	o->queued = g->q.n;
	o->listeners = g->listeners;
	o->sendonly = g->m && !(g->join_state & IMC_JOIN_FULL);
}

static int info_cmp(const void *a, const void *b)
{
	const struct imc_ipoib_endpoint_info *x = a, *y = b;

	return imc_gid_cmp(&x->gid, &y->gid);
}

void imc_ipoib_foreach_endpoint(const struct imc_ipoib *ifc,
				void (*fn)(void *arg,
					   const struct imc_ipoib_endpoint_info *e),
				void *arg)
{
	size_t n = ifc->st.endpoints + ifc->st.groups, i = 0;
	struct imc_ipoib_endpoint_info *v;

	if (!n)
		return;
	v = calloc(n, sizeof(*v));
	if (!v)
		return;
	for (const struct imc_list *l = ifc->ep_list.next; l != &ifc->ep_list;
	     l = l->next)
		ep_info(imc_container_of(l, const struct ep, all), &v[i++]);
	for (const struct imc_list *l = ifc->group_list.next;
	     l != &ifc->group_list; l = l->next)
		grp_info(imc_container_of(l, const struct group, all),
			 &v[i++]);
	qsort(v, i, sizeof(*v), info_cmp);
	for (size_t k = 0; k < i; k++)
		fn(arg, &v[k]);
	free(v);
}

int imc_ipoib_endpoint_get(const struct imc_ipoib *ifc,
			   const struct imc_gid *gid,
			   struct imc_ipoib_endpoint_info *out)
{
	const struct ep *e = ipo_ep_find(ifc, gid);
	const struct group *g;

	if (e) {
		ep_info(e, out);
		return 0;
	}
	g = ipo_grp_find(ifc, gid);
	if (g) {
		grp_info(g, out);
		return 0;
	}
	return -ENOENT;
}

static int neigh_cmp(const void *a, const void *b)
{
	const struct imc_ipoib_neigh_info *x = a, *y = b;

	return imc_ip_addr_cmp(&x->addr, &y->addr);
}

void imc_ipoib_foreach_neigh(const struct imc_ipoib *ifc,
			     void (*fn)(void *arg,
					const struct imc_ipoib_neigh_info *n),
			     void *arg)
{
	size_t n = ifc->st.neighbours, k = 0, pos;
	struct imc_ipoib_neigh_info *v;
	struct imc_hnode *h;

	if (!n)
		return;
	v = calloc(n, sizeof(*v));
	if (!v)
		return;
	imc_htab_foreach(h, pos, &ifc->neighs) {
		const struct neigh *nb = imc_container_of(h, const struct neigh,
							  hn);

		v[k].addr = nb->addr;
		v[k].state = nb->state;
		if (nb->ep) {
			v[k].hw.flags = 0;
			v[k].hw.qpn = nb->ep->qpn;
			v[k].hw.gid = nb->ep->gid;
		}
		v[k].queued = nb->q.n;
		k++;
	}
	qsort(v, k, sizeof(*v), neigh_cmp);
	for (size_t i = 0; i < k; i++)
		fn(arg, &v[i]);
	free(v);
}
