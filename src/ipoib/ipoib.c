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
 * broadcast group's SL, rate, TClass, FlowLabel and HopLimit (the seed's
 * "fabricate AVs as needed"), and a multicast AV exists only once its
 * join has been answered. Until then packets wait in bounded queues: on
 * a neighbour (unresolved), an endpoint (no AV yet) or a group (not
 * joined). Endpoints with packets waiting sit on a list in the order
 * they started waiting, which is the order they are flushed in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ipoib/ipoib_int.h"
#include "wire/bytes.h"

enum {
	BUF_MAX = IMC_IPOIB_HDR_LEN + 4096,
	QPN_GROUP = IMC_IPOIB_QPN_MULTICAST,
};

enum pkt_kind { K_IP, K_ARP, K_ND };

enum ep_state { EP_NOAV, EP_READY, EP_STALE, EP_PROBING };

enum grp_state { GRP_IDLE, GRP_JOINING, GRP_JOINED, GRP_BACKOFF };

struct ep {
	struct ipo_hnode hn;        /* ifc->eps, by GID */
	struct ipo_list all;        /* ifc->ep_list, creation order */
	struct ipo_list wait;       /* ifc->waiting while packets wait */
	struct imc_ipoib *ifc;
	enum ep_state state;
	struct imc_gid gid;
	uint16_t lid;
	uint32_t qpn;
	struct imc_ipoib_av av;
	struct ipo_queue q;
	unsigned nrefs;             /* neighbours mapped here */
	imc_time_t used;            /* last send or receive */
	struct imc_timer expiry;
	struct imc_ip_addr addr;    /* last neighbour mapped here: what a
				     * probe asks for (zero family: none) */
	unsigned tries;             /* multicast solicitations of a probe */
	struct imc_timer probe;     /* PROBING: answer awaited until */
};

struct neigh {
	struct ipo_hnode hn;        /* ifc->neighs, by address */
	struct imc_ipoib *ifc;
	enum imc_ipoib_neigh_state state;
	struct imc_ip_addr addr;
	struct ep *ep;              /* REACHABLE */
	struct ipo_queue q;         /* INCOMPLETE */
	unsigned tries;
	imc_time_t confirmed;
	struct imc_timer timer;     /* retransmit, then expiry */
};

struct group {
	struct ipo_hnode hn;        /* ifc->groups, by MGID */
	struct ipo_list all;        /* ifc->group_list, creation order */
	struct imc_ipoib *ifc;
	enum grp_state state;
	struct imc_gid mgid;
	struct imc_ip_addr ip;      /* zero family for the broadcast group */
	bool bcast;
	unsigned listeners;         /* host listens and the interface's own */
	struct imc_mcast_member *m;
	uint8_t join_state;
	/* A send-only membership kept until the FullMember join that
	 * replaces it is answered, so that sending goes on meanwhile. */
	struct imc_mcast_member *old;
	bool has_av;
	struct imc_ipoib_av av;
	uint32_t qkey;
	struct ipo_queue q;
	imc_time_t last_send;
	imc_time_t backoff;
	struct imc_timer timer;     /* send-only idle, or join retry */
};

struct own_addr {
	struct imc_ip_addr a;
	unsigned plen;
};

/* The first cache line holds what a receive checks first: in a
 * broadcast storm every interface of the partition hears every ARP
 * request, and most are dropped after these checks. */
struct imc_ipoib {
	enum imc_ipoib_state state;
	struct group *bcast;
	struct imc_gid bcast_mgid;  /* bcast's, for the receive path */
	struct imc_ipoib_config cfg;
	struct imc_loop *loop;
	struct imc_mcast *mcast;
	void *qp;
	struct imc_ipoib_ops ops;
	struct imc_ipoib_hwaddr hw;
	struct imc_mcmr brec;       /* broadcast record, valid when UP */
	unsigned mtu;               /* IP MTU */
	struct ipo_htab eps, neighs, groups;
	struct ipo_list ep_list, group_list, waiting;
	/* Own addresses, sorted: exact lookups bisect; prefix matching
	 * walks them (an interface has a handful). */
	struct own_addr *addrs;
	size_t naddrs, addr_cap;
	unsigned v6_addrs;
	struct imc_timer carrier_timer;
	bool carrier, carrier_reported;
	/* The port's LID changed while the interface was DOWN: announce it
	 * once up (peers still hold the old one). */
	bool announce_due;
	struct imc_ipoib_stats st;
	uint8_t buf[BUF_MAX];
};

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
static unsigned mtu_bytes(unsigned code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

static void drop(struct imc_ipoib *ifc, enum imc_ipoib_drop why)
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
static int q_push(struct imc_ipoib *ifc, struct ipo_queue *q, size_t bound,
		  enum imc_ipoib_drop full, const uint8_t *data, size_t len,
		  enum pkt_kind kind)
{
	struct ipo_pkt *p;

	if (q->n >= bound) {
		drop(ifc, full);
		return -ENOBUFS;
	}
	if (ifc->st.queued >= ifc->cfg.queue_total) {
		drop(ifc, IMC_IPOIB_DROP_QUEUE_TOTAL);
		return -ENOBUFS;
	}
	p = malloc(sizeof(*p) + len);
	if (!p) {
		drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
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

static struct ipo_pkt *q_pop(struct imc_ipoib *ifc, struct ipo_queue *q)
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

static void q_drop_all(struct imc_ipoib *ifc, struct ipo_queue *q,
		       enum imc_ipoib_drop why)
{
	struct ipo_pkt *p;

	while ((p = q_pop(ifc, q))) {
		drop(ifc, why);
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

static int tx(struct imc_ipoib *ifc, const struct imc_ipoib_av *av,
	      uint32_t qpn, uint32_t qkey, const uint8_t *data, size_t len,
	      enum pkt_kind kind)
{
	int rc = ifc->ops.send(ifc->ops.ctx, av, qpn, qkey, data, len);

	if (rc < 0) {
		drop(ifc, IMC_IPOIB_DROP_SEND);
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
static void ifc_set_state(struct imc_ipoib *ifc, enum imc_ipoib_state to)
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

static void grp_set_state(struct group *g, enum grp_state to)
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
static void ep_set_state(struct ep *e, enum ep_state to)
{
	if (!ep_transition_ok(e->state, to))
		abort();
	e->state = to;
}

/* ---- endpoints ---- */

static uint64_t gid_hash(const struct imc_ipoib *ifc, const struct imc_gid *g)
{
	return imc_gid_hash(g, ifc->cfg.hash_seed);
}

static struct ep *ep_find(const struct imc_ipoib *ifc,
			  const struct imc_gid *gid)
{
	uint64_t h = gid_hash(ifc, gid);

	for (struct ipo_hnode *n = ipo_ht_bucket(&ifc->eps, h); n;
	     n = n->next) {
		struct ep *e = imc_container_of(n, struct ep, hn);

		if (n->hash == h && imc_gid_equal(&e->gid, gid))
			return e;
	}
	return NULL;
}

/* The unicast AV of an endpoint, made from what the interface knows: the
 * endpoint's GID, LID and QPN, and the broadcast group's SL, rate,
 * TClass, FlowLabel and HopLimit (RFC 4391 4: the broadcast group's
 * parameters are the link's). The GRH always goes with it, so that the
 * peer finds us by GID. Only ever for a unicast GID. */
static void ep_fabricate(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;
	const struct imc_mcmr *r = &ifc->brec;

	if (imc_gid_is_multicast(&e->gid))
		abort();
	memset(&e->av, 0, sizeof(e->av));
	e->av.dlid = e->lid;
	e->av.sl = r->sl;
	e->av.rate = r->rate;
	e->av.dgid = e->gid;
	e->av.sgid_index = ifc->cfg.sgid_index;
	e->av.tclass = r->tclass;
	e->av.flow_label = r->flow_label;
	e->av.hop_limit = r->hop_limit;
	ifc->st.avs_fabricated++;
	/* A stale AV made again from a new broadcast record is still to be
	 * re-validated: the record says nothing of the peer's LID. */
	if (e->state == EP_NOAV)
		ep_set_state(e, EP_READY);
}

static void ep_expiry_fire(struct imc_timer *t);
static void ep_probe_fire(struct imc_timer *t);
static void ep_probe(struct ep *e);
static void ep_flush(struct imc_ipoib *ifc, struct ep *e);

/* The endpoint spoke (any packet from its GID, the answer to a probe):
 * what it says is its current LID and QPN, so a stale AV is good again
 * and what waited for it goes out. */
static void ep_confirm(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;

	if (e->state != EP_STALE && e->state != EP_PROBING)
		return;
	imc_timer_cancel(ifc->loop, &e->probe);
	ep_set_state(e, EP_READY);
	ifc->st.revalidated++;
	if (ifc->state == IMC_IPOIB_UP)
		ep_flush(ifc, e);
}

static void ep_free(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;

	imc_timer_cancel(ifc->loop, &e->expiry);
	imc_timer_cancel(ifc->loop, &e->probe);
	q_drop_all(ifc, &e->q, IMC_IPOIB_DROP_FLUSHED);
	if (ipo_list_linked(&e->wait))
		ipo_list_del(&e->wait);
	ipo_list_del(&e->all);
	ipo_ht_remove(&ifc->eps, &e->hn);
	ifc->st.endpoints--;
	free(e);
}

/* The endpoint of a port GID, created or updated from what a packet
 * says: its sender's LID (the LRH SLID) and QPN. Never for a multicast
 * or zero GID. */
static struct ep *ep_learn(struct imc_ipoib *ifc, const struct imc_gid *gid,
			   uint16_t lid, uint32_t qpn)
{
	struct ep *e;

	if (imc_gid_is_multicast(gid) || imc_gid_is_zero(gid) || lid == 0 ||
	    lid >= 0xC000 || qpn == 0 || qpn > 0xFFFFFF || qpn == QPN_GROUP)
		return NULL;
	e = ep_find(ifc, gid);
	if (e) {
		e->used = imc_loop_now(ifc->loop);
		if (e->lid != lid || e->qpn != qpn) {
			/* The port moved (new LID after a sweep) or the peer
			 * made a new QP: the packet is the latest word. */
			e->lid = lid;
			e->qpn = qpn;
			if (e->state != EP_NOAV)
				ep_fabricate(e);
		}
		ep_confirm(e);
		return e;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return NULL;
	}
	e->ifc = ifc;
	e->state = EP_NOAV;
	e->gid = *gid;
	e->lid = lid;
	e->qpn = qpn;
	e->used = imc_loop_now(ifc->loop);
	ipo_list_init(&e->wait);
	imc_timer_init(&e->expiry, ep_expiry_fire);
	imc_timer_init(&e->probe, ep_probe_fire);
	if (ipo_ht_insert(&ifc->eps, &e->hn, gid_hash(ifc, gid)) < 0) {
		free(e);
		drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return NULL;
	}
	ipo_list_add_tail(&ifc->ep_list, &e->all);
	ifc->st.endpoints++;
	ifc->st.endpoints_from_rx++;
	if (ifc->state == IMC_IPOIB_UP)
		ep_fabricate(e);
	imc_timer_arm(ifc->loop, &e->expiry,
		      e->used + ifc->cfg.neigh_expiry);
	return e;
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
	if (e->used + ifc->cfg.neigh_expiry > now) {
		imc_timer_arm(ifc->loop, &e->expiry,
			      e->used + ifc->cfg.neigh_expiry);
		return;
	}
	ifc->st.expired++;
	ep_free(e);
}

/* A datagram for an endpoint: now, or once the broadcast AV is there. */
static int ep_send(struct imc_ipoib *ifc, struct ep *e, const uint8_t *data,
		   size_t len, enum pkt_kind kind)
{
	int rc;

	e->used = imc_loop_now(ifc->loop);
	if (ifc->state == IMC_IPOIB_UP && e->state == EP_READY && !e->q.n)
		return tx(ifc, &e->av, e->qpn, ifc->brec.qkey, data, len,
			  kind);
	rc = q_push(ifc, &e->q, ifc->cfg.queue_endpoint,
		    IMC_IPOIB_DROP_QUEUE_ENDPOINT, data, len, kind);
	if (rc < 0)
		return rc;
	ifc->st.deferred++;
	if (!ipo_list_linked(&e->wait))
		ipo_list_add_tail(&ifc->waiting, &e->wait);
	/* data may be ifc->buf, which the probe reuses: it is copied. */
	if (ifc->state == IMC_IPOIB_UP && e->state == EP_STALE)
		ep_probe(e);
	return 0;
}

static void ep_flush(struct imc_ipoib *ifc, struct ep *e)
{
	struct ipo_pkt *p;

	if (ipo_list_linked(&e->wait))
		ipo_list_del(&e->wait);
	while ((p = q_pop(ifc, &e->q))) {
		tx(ifc, &e->av, e->qpn, ifc->brec.qkey, p->data, p->len,
		   (enum pkt_kind)p->kind);
		free(p);
	}
}

/* Every endpoint that waited, in the order it started waiting; a stale
 * one is probed and keeps its packets until it answers. */
static void flush_waiting(struct imc_ipoib *ifc)
{
	for (struct ipo_list *l = ifc->waiting.next, *n;
	     ifc->state == IMC_IPOIB_UP && l != &ifc->waiting; l = n) {
		struct ep *e = imc_container_of(l, struct ep, wait);

		n = l->next;
		if (e->state == EP_READY)
			ep_flush(ifc, e);
		else if (e->state == EP_STALE)
			ep_probe(e);
	}
}

/* ---- own addresses ---- */

static int addr_cmp(const struct imc_ip_addr *a, const struct imc_ip_addr *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->family == IMC_IPV4)
		return a->v4 < b->v4 ? -1 : a->v4 > b->v4;
	return memcmp(a->v6, b->v6, 16);
}

/* Index of a in ifc->addrs, or -(insertion point) - 1. */
static long addr_index(const struct imc_ipoib *ifc,
		       const struct imc_ip_addr *a)
{
	size_t lo = 0, hi = ifc->naddrs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = addr_cmp(&ifc->addrs[mid].a, a);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

static bool is_own(const struct imc_ipoib *ifc, const struct imc_ip_addr *a)
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
static const struct own_addr *own_for(const struct imc_ipoib *ifc,
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
static bool on_link(const struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	for (size_t i = 0; i < ifc->naddrs; i++)
		if (prefix_match(a, &ifc->addrs[i]))
			return true;
	return a->family == IMC_IPV6 && ifc->v6_addrs && v6_link_local(a->v6);
}

/* IPv4 limited broadcast, or the directed broadcast of an own prefix. */
static bool v4_broadcast(const struct imc_ipoib *ifc, uint32_t a)
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

/* ---- groups ---- */

static void grp_cb(void *arg, struct imc_mcast_member *m,
		   const struct imc_mcast_event *ev);
static void grp_timer_fire(struct imc_timer *t);

static struct group *grp_find(const struct imc_ipoib *ifc,
			      const struct imc_gid *mgid)
{
	uint64_t h = gid_hash(ifc, mgid);

	for (struct ipo_hnode *n = ipo_ht_bucket(&ifc->groups, h); n;
	     n = n->next) {
		struct group *g = imc_container_of(n, struct group, hn);

		if (n->hash == h && imc_gid_equal(&g->mgid, mgid))
			return g;
	}
	return NULL;
}

static struct group *grp_new(struct imc_ipoib *ifc,
			     const struct imc_gid *mgid,
			     const struct imc_ip_addr *ip)
{
	struct group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ifc = ifc;
	g->state = GRP_IDLE;
	g->mgid = *mgid;
	if (ip)
		g->ip = *ip;
	imc_timer_init(&g->timer, grp_timer_fire);
	if (ipo_ht_insert(&ifc->groups, &g->hn, gid_hash(ifc, mgid)) < 0) {
		free(g);
		return NULL;
	}
	ipo_list_add_tail(&ifc->group_list, &g->all);
	ifc->st.groups++;
	return g;
}

static void grp_leave_members(struct group *g)
{
	if (g->old) {
		imc_mcast_leave(g->old);
		g->old = NULL;
	}
	if (g->m) {
		if (g->join_state & (IMC_JOIN_SENDONLY_FULL |
				     IMC_JOIN_SENDONLY_NON))
			g->ifc->st.sendonly_leaves++;
		imc_mcast_leave(g->m);
		g->m = NULL;
	}
	g->join_state = 0;
}

static void grp_free(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	grp_leave_members(g);
	imc_timer_cancel(ifc->loop, &g->timer);
	q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_FLUSHED);
	ipo_list_del(&g->all);
	ipo_ht_remove(&ifc->groups, &g->hn);
	ifc->st.groups--;
	if (ifc->bcast == g)
		ifc->bcast = NULL;
	free(g);
}

static bool grp_wants_full(const struct group *g)
{
	return g->bcast || g->listeners > 0;
}

/* The join of a group. The broadcast group is joined by MGID alone (the
 * SM creates it); any other group is created, when missing, with the
 * broadcast group's parameters (RFC 4391 4; the components Linux sends). */
static int grp_join(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;
	struct imc_mcast_join_req req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.rec.mgid = g->mgid;
	req.rec.port_gid = ifc->cfg.port_gid;
	req.comp_mask = UMAD_SA_MCM_COMP_MASK_MGID |
			UMAD_SA_MCM_COMP_MASK_PORT_GID |
			UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
	if (!g->bcast) {
		const struct imc_mcmr *b = &ifc->brec;

		req.rec.qkey = b->qkey;
		req.rec.mtu_sel = UMAD_SA_SELECTOR_EXACTLY;
		req.rec.mtu = b->mtu;
		req.rec.tclass = b->tclass;
		req.rec.pkey = b->pkey;
		req.rec.rate_sel = UMAD_SA_SELECTOR_EXACTLY;
		req.rec.rate = b->rate;
		req.rec.sl = b->sl;
		req.rec.flow_label = b->flow_label;
		req.rec.hop_limit = b->hop_limit;
		req.comp_mask |= UMAD_SA_MCM_COMP_MASK_QKEY |
				 UMAD_SA_MCM_COMP_MASK_MTU_SEL |
				 UMAD_SA_MCM_COMP_MASK_MTU |
				 UMAD_SA_MCM_COMP_MASK_TCLASS |
				 UMAD_SA_MCM_COMP_MASK_PKEY |
				 UMAD_SA_MCM_COMP_MASK_RATE_SEL |
				 UMAD_SA_MCM_COMP_MASK_RATE |
				 UMAD_SA_MCM_COMP_MASK_SL |
				 UMAD_SA_MCM_COMP_MASK_FLOW_LABEL;
	}
	if (grp_wants_full(g))
		req.join_state = IMC_JOIN_FULL;
	else if (ifc->cfg.sa_sendonly_full)
		req.join_state = IMC_JOIN_SENDONLY_FULL;
	else
		/* As Linux: without SendOnlyFullMember support, a sender
		 * joins as SendOnlyNonMember (it cannot create the group). */
		req.join_state = IMC_JOIN_SENDONLY_NON;
	req.qp = req.join_state & IMC_JOIN_FULL ? ifc->qp : NULL;
	rc = imc_mcast_join(ifc->mcast, &req, grp_cb, g, &g->m);
	if (rc < 0) {
		g->m = NULL;
		ifc->st.join_errors++;
		return rc;
	}
	g->join_state = req.join_state;
	ifc->st.joins++;
	if (!(req.join_state & IMC_JOIN_FULL))
		ifc->st.sendonly_joins++;
	grp_set_state(g, GRP_JOINING);
	return 0;
}

static void grp_retry(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	g->backoff = g->backoff ? g->backoff * 2 : ifc->cfg.join_retry;
	if (g->backoff > ifc->cfg.join_retry_max)
		g->backoff = ifc->cfg.join_retry_max;
	grp_set_state(g, GRP_BACKOFF);
	imc_timer_arm(ifc->loop, &g->timer,
		      imc_loop_now(ifc->loop) + g->backoff);
}

static void grp_flush(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;
	struct ipo_pkt *p;

	while (g->state == GRP_JOINED && ifc->state == IMC_IPOIB_UP &&
	       (p = q_pop(ifc, &g->q))) {
		tx(ifc, &g->av, QPN_GROUP, g->qkey, p->data, p->len,
		   (enum pkt_kind)p->kind);
		free(p);
	}
}

static void grp_arm_idle(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	if (g->join_state & IMC_JOIN_FULL)
		return;
	imc_timer_arm(ifc->loop, &g->timer,
		      g->last_send + ifc->cfg.sendonly_idle);
}

/* A group the interface wants joined, when it can be: after the
 * broadcast group (whose parameters the others take). */
static void grp_kick(struct group *g)
{
	if (g->state != GRP_IDLE || g->bcast ||
	    g->ifc->state != IMC_IPOIB_UP)
		return;
	if (!grp_wants_full(g) && !g->q.n)
		return;
	if (grp_join(g) < 0) {
		if (grp_wants_full(g)) {
			grp_set_state(g, GRP_JOINING);
			grp_retry(g);
		} else {
			q_drop_all(g->ifc, &g->q, IMC_IPOIB_DROP_JOIN_FAILED);
			grp_free(g);
		}
	}
}

static void announce(struct imc_ipoib *ifc);

static void bcast_joined(struct imc_ipoib *ifc, const struct imc_mcmr *rec)
{
	unsigned mtu;

	ifc->brec = *rec;
	mtu = mtu_bytes(rec->mtu);
	if (!mtu || mtu > mtu_bytes(ifc->cfg.port_mtu))
		mtu = mtu_bytes(ifc->cfg.port_mtu);
	ifc->mtu = mtu - IMC_IPOIB_HDR_LEN;
	if (ifc->state != IMC_IPOIB_UP)
		ifc_set_state(ifc, IMC_IPOIB_UP);
	for (struct ipo_list *l = ifc->ep_list.next; l != &ifc->ep_list;
	     l = l->next)
		ep_fabricate(imc_container_of(l, struct ep, all));
	/* Other groups join in the order they were made; queues flush
	 * after, in the order packets started waiting. A group whose
	 * re-join was answered before the broadcast group's (the tracker
	 * paces re-joins in any order) could not send then: it does now. */
	for (struct ipo_list *l = ifc->group_list.next, *n;
	     l != &ifc->group_list; l = n) {
		n = l->next;
		grp_kick(imc_container_of(l, struct group, all));
	}
	grp_flush(ifc->bcast);
	for (struct ipo_list *l = ifc->group_list.next; l != &ifc->group_list;
	     l = l->next)
		grp_flush(imc_container_of(l, struct group, all));
	flush_waiting(ifc);
	if (ifc->announce_due) {
		ifc->announce_due = false;
		announce(ifc);
	}
}

/* The broadcast group failed: every other group goes back to IDLE (their
 * parameters came from it) until it is joined again. */
static void bcast_lost(struct imc_ipoib *ifc)
{
	for (struct ipo_list *l = ifc->group_list.next, *n;
	     l != &ifc->group_list; l = n) {
		struct group *g = imc_container_of(l, struct group, all);

		n = l->next;
		if (g->bcast)
			continue;
		grp_leave_members(g);
		imc_timer_cancel(ifc->loop, &g->timer);
		grp_set_state(g, GRP_IDLE);
		if (!grp_wants_full(g) && !g->q.n)
			grp_free(g);
	}
}

/* The broadcast join failed, or its answer could not be used: leave,
 * retry after the backoff, and take the other groups down with it. */
static void bcast_failed(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	ifc->st.join_errors++;
	grp_leave_members(g);
	grp_retry(g);
	if (ifc->state != IMC_IPOIB_BACKOFF)
		ifc_set_state(ifc, IMC_IPOIB_BACKOFF);
	bcast_lost(ifc);
}

static void grp_cb(void *arg, struct imc_mcast_member *m,
		   const struct imc_mcast_event *ev)
{
	struct group *g = arg;
	struct imc_ipoib *ifc = g->ifc;

	if (m == g->old) {
		/* The replaced send-only membership: only its end matters. */
		if (ev->type != IMC_MCAST_EV_JOINED) {
			imc_mcast_leave(g->old);
			g->old = NULL;
		}
		return;
	}
	if (m != g->m)
		return;
	switch (ev->type) {
	case IMC_MCAST_EV_JOINED: {
		const struct imc_mcmr *r = ev->rec;

		/* The QP takes the partition's Q_Key before any send or
		 * answer relies on it (RFC 4391 4). */
		if (g->bcast && ifc->ops.set_qkey &&
		    ifc->ops.set_qkey(ifc->ops.ctx, r->qkey) < 0) {
			bcast_failed(g);
			break;
		}
		g->backoff = 0;
		memset(&g->av, 0, sizeof(g->av));
		g->av.dlid = r->mlid;
		g->av.sl = r->sl;
		g->av.rate = r->rate;
		g->av.dgid = g->mgid;
		g->av.sgid_index = ifc->cfg.sgid_index;
		g->av.tclass = r->tclass;
		g->av.flow_label = r->flow_label;
		g->av.hop_limit = r->hop_limit;
		g->qkey = r->qkey;
		grp_set_state(g, GRP_JOINED);
		g->has_av = true;
		if (g->old) {
			imc_mcast_leave(g->old);
			g->old = NULL;
			ifc->st.sendonly_leaves++;
		}
		if (g->bcast) {
			bcast_joined(ifc, r);
		} else {
			if (!g->last_send)
				g->last_send = imc_loop_now(ifc->loop);
			grp_flush(g);
			grp_arm_idle(g);
		}
		break;
	}
	case IMC_MCAST_EV_REJOINING:
	case IMC_MCAST_EV_WAITING:
		grp_set_state(g, GRP_JOINING);
		if (g->bcast && ifc->state == IMC_IPOIB_UP)
			ifc_set_state(ifc, IMC_IPOIB_JOINING);
		break;
	case IMC_MCAST_EV_ERROR:
		if (g->bcast) {
			bcast_failed(g);
			break;
		}
		ifc->st.join_errors++;
		grp_leave_members(g);
		if (grp_wants_full(g)) {
			q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_JOIN_FAILED);
			grp_retry(g);
		} else {
			q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_JOIN_FAILED);
			grp_free(g);
		}
		break;
	}
}

static void grp_timer_fire(struct imc_timer *t)
{
	struct group *g = imc_container_of(t, struct group, timer);
	struct imc_ipoib *ifc = g->ifc;
	imc_time_t now = imc_loop_now(ifc->loop);

	switch (g->state) {
	case GRP_BACKOFF:
		if (g->bcast) {
			if (grp_join(g) < 0) {
				grp_set_state(g, GRP_JOINING);
				grp_retry(g);
				return;
			}
			ifc_set_state(ifc, IMC_IPOIB_JOINING);
			return;
		}
		grp_set_state(g, GRP_IDLE);
		grp_kick(g);
		return;
	case GRP_JOINED:
		/* Send-only idle check (RFC 4391 leaves it to the
		 * implementation; Linux leaves send-only groups on a
		 * timer too). */
		if (grp_wants_full(g))
			return;
		if (g->last_send + ifc->cfg.sendonly_idle > now) {
			grp_arm_idle(g);
			return;
		}
		grp_free(g);
		return;
	default:
		return;
	}
}

/* The group of an MGID, made if missing (send-only until listened). */
static struct group *grp_get(struct imc_ipoib *ifc, const struct imc_gid *mgid,
			     const struct imc_ip_addr *ip)
{
	struct group *g = grp_find(ifc, mgid);

	if (g)
		return g;
	g = grp_new(ifc, mgid, ip);
	if (!g)
		drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
	return g;
}

static int grp_send(struct imc_ipoib *ifc, struct group *g,
		    const uint8_t *data, size_t len, enum pkt_kind kind)
{
	int rc;

	g->last_send = imc_loop_now(ifc->loop);
	if (ifc->state == IMC_IPOIB_UP && g->state == GRP_JOINED && !g->q.n)
		return tx(ifc, &g->av, QPN_GROUP, g->qkey, data, len, kind);
	rc = q_push(ifc, &g->q, ifc->cfg.queue_group,
		    IMC_IPOIB_DROP_QUEUE_GROUP, data, len, kind);
	if (rc == 0)
		grp_kick(g);
	return rc;
}

static int grp_listen(struct imc_ipoib *ifc, const struct imc_gid *mgid,
		      const struct imc_ip_addr *ip)
{
	struct group *g = grp_get(ifc, mgid, ip);

	if (!g)
		return -ENOMEM;
	if (g->listeners++)
		return 0;
	if (g->state == GRP_IDLE) {
		grp_kick(g);
		return 0;
	}
	if (g->state == GRP_BACKOFF || (g->join_state & IMC_JOIN_FULL))
		return 0;
	/* Send-only so far: join FullMember; while that is pending, a
	 * joined send-only membership keeps carrying what is sent. */
	if (g->state == GRP_JOINED && !g->old) {
		struct imc_mcast_member *so = g->m;
		struct imc_ipoib_av av = g->av;

		imc_timer_cancel(ifc->loop, &g->timer);
		g->m = NULL;
		if (grp_join(g) < 0) {
			g->m = so;
			g->listeners--;
			return -ENOMEM;
		}
		g->old = so;
		grp_set_state(g, GRP_JOINED);
		g->has_av = true;
		g->av = av;
		return 0;
	}
	grp_leave_members(g);
	if (grp_join(g) < 0) {
		g->listeners--;
		grp_set_state(g, GRP_IDLE);
		grp_kick(g);
		return -ENOMEM;
	}
	return 0;
}

static void grp_unlisten(struct group *g)
{
	struct imc_ipoib *ifc = g->ifc;

	if (--g->listeners)
		return;
	if (g->bcast)
		return;
	/* No reader left: give the FullMember bit back. Anything still
	 * waiting goes out through a send-only join. */
	grp_leave_members(g);
	imc_timer_cancel(ifc->loop, &g->timer);
	grp_set_state(g, GRP_IDLE);
	if (!g->q.n) {
		grp_free(g);
		return;
	}
	grp_kick(g);
}

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

static struct neigh *neigh_find(const struct imc_ipoib *ifc,
				const struct imc_ip_addr *a)
{
	uint64_t h = addr_hash(ifc, a);

	for (struct ipo_hnode *n = ipo_ht_bucket(&ifc->neighs, h); n;
	     n = n->next) {
		struct neigh *nb = imc_container_of(n, struct neigh, hn);

		if (n->hash == h && addr_cmp(&nb->addr, a) == 0)
			return nb;
	}
	return NULL;
}

static void neigh_timer_fire(struct imc_timer *t);

static void neigh_free(struct neigh *nb, enum imc_ipoib_drop why)
{
	struct imc_ipoib *ifc = nb->ifc;

	imc_timer_cancel(ifc->loop, &nb->timer);
	q_drop_all(ifc, &nb->q, why);
	if (nb->ep)
		nb->ep->nrefs--;
	ipo_ht_remove(&ifc->neighs, &nb->hn);
	ifc->st.neighbours--;
	free(nb);
}

static struct neigh *neigh_new(struct imc_ipoib *ifc,
			       const struct imc_ip_addr *a)
{
	struct neigh *nb = calloc(1, sizeof(*nb));

	if (!nb) {
		drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return NULL;
	}
	nb->ifc = ifc;
	nb->state = IMC_IPOIB_NEIGH_INCOMPLETE;
	nb->addr = *a;
	imc_timer_init(&nb->timer, neigh_timer_fire);
	if (ipo_ht_insert(&ifc->neighs, &nb->hn, addr_hash(ifc, a)) < 0) {
		free(nb);
		drop(ifc, IMC_IPOIB_DROP_NO_MEMORY);
		return NULL;
	}
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
	return grp_get(ifc, &mgid, &ip);
}

/* One ARP request or NS for a into ifc->buf: the NS to the target's
 * solicited-node group (RFC 4861 7.2.2), or, for a unicast probe of a
 * known neighbour, to the target itself (RFC 4861 7.3.3 PROBE). Returns
 * the length, or 0 when there is no own address to ask from. */
static size_t solicit_build(struct imc_ipoib *ifc, const struct imc_ip_addr *a,
			    bool unicast, uint8_t ns_dst[16])
{
	const struct own_addr *src = own_for(ifc, a);
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
		grp_send(ifc, ifc->bcast, ifc->buf, len, K_ARP);
		return;
	}
	g = v6_group(ifc, dst);
	if (g)
		grp_send(ifc, g, ifc->buf, len, K_ND);
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
		neigh_free(nb, IMC_IPOIB_DROP_UNRESOLVED);
		return;
	}
	if (nb->confirmed + ifc->cfg.neigh_expiry > now) {
		imc_timer_arm(ifc->loop, &nb->timer,
			      nb->confirmed + ifc->cfg.neigh_expiry);
		return;
	}
	ifc->st.expired++;
	neigh_free(nb, IMC_IPOIB_DROP_FLUSHED);
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
		while ((p = q_pop(ifc, &nb->q))) {
			ep_send(ifc, e, p->data, p->len,
				(enum pkt_kind)p->kind);
			free(p);
		}
	}
	if (!imc_timer_armed(&nb->timer))
		imc_timer_arm(ifc->loop, &nb->timer,
			      nb->confirmed + ifc->cfg.neigh_expiry);
}

/* A unicast packet for an IP neighbour. */
static int neigh_send(struct imc_ipoib *ifc, const struct imc_ip_addr *dst,
		      const uint8_t *data, size_t len)
{
	struct neigh *nb = neigh_find(ifc, dst);
	int rc;

	if (nb && nb->state == IMC_IPOIB_NEIGH_REACHABLE)
		return ep_send(ifc, nb->ep, data, len, K_IP);
	if (!nb) {
		nb = neigh_new(ifc, dst);
		if (!nb)
			return -ENOMEM;
		rc = q_push(ifc, &nb->q, ifc->cfg.queue_endpoint,
			    IMC_IPOIB_DROP_QUEUE_ENDPOINT, data, len, K_IP);
		if (rc < 0) {
			neigh_free(nb, IMC_IPOIB_DROP_FLUSHED);
			return rc;
		}
		neigh_solicit(nb);
		imc_timer_arm(ifc->loop, &nb->timer,
			      imc_loop_now(ifc->loop) +
				      ifc->cfg.resolve_timeout);
		return 0;
	}
	return q_push(ifc, &nb->q, ifc->cfg.queue_endpoint,
		      IMC_IPOIB_DROP_QUEUE_ENDPOINT, data, len, K_IP);
}

/* ---- stale endpoints and LID changes ---- */

/* A stale endpoint that has packets to send: ask its last known address
 * at the AV we have (RFC 4861 7.3.3 PROBE; RFC 1122 2.3.2.1 for ARP). The
 * answer, or any packet from the peer, makes it READY; an endpoint no
 * address maps to cannot be asked and is trusted as it is. Only when UP
 * (the AV needs the broadcast record). */
static void ep_probe(struct ep *e)
{
	struct imc_ipoib *ifc = e->ifc;
	uint8_t dst[16];
	size_t len;

	if (!e->addr.family || !(len = solicit_build(ifc, &e->addr, true,
						     dst))) {
		ep_set_state(e, EP_READY);
		ep_flush(ifc, e);
		return;
	}
	ep_set_state(e, EP_PROBING);
	e->tries = 0;
	ifc->st.probes++;
	tx(ifc, &e->av, e->qpn, ifc->brec.qkey, ifc->buf, len,
	   e->addr.family == IMC_IPV4 ? K_ARP : K_ND);
	imc_timer_arm(ifc->loop, &e->probe,
		      imc_loop_now(ifc->loop) + ifc->cfg.resolve_timeout);
}

/* No answer at the old AV: the peer may have moved and missed nothing we
 * could hear, so ask the link (a peer that moved answers from its new
 * LID), as an unresolved neighbour is asked. */
static void ep_probe_fire(struct imc_timer *t)
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
	q_drop_all(ifc, &e->q, IMC_IPOIB_DROP_UNRESOLVED);
	if (ipo_list_linked(&e->wait))
		ipo_list_del(&e->wait);
	ep_set_state(e, EP_STALE);
}

/* After a client reregister or an SM change the LIDs of the subnet may
 * be new (IBA 14.4.11; a new SM assigns them again): no unicast AV is
 * used again before its peer answered a probe or sent a packet. */
static void eps_make_stale(struct imc_ipoib *ifc)
{
	for (struct ipo_list *l = ifc->ep_list.next; l != &ifc->ep_list;
	     l = l->next) {
		struct ep *e = imc_container_of(l, struct ep, all);

		if (e->state == EP_READY) {
			ep_set_state(e, EP_STALE);
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
static void announce(struct imc_ipoib *ifc)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };

	for (size_t i = 0; i < ifc->naddrs; i++) {
		const struct imc_ip_addr *a = &ifc->addrs[i].a;

		ifc->st.announces++;
		if (a->family == IMC_IPV4) {
			size_t len = arp_build(ifc, IMC_ARP_OP_REQUEST, a->v4,
					       NULL, a->v4);

			grp_send(ifc, ifc->bcast, ifc->buf, len, K_ARP);
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
				grp_send(ifc, g, ifc->buf, (size_t)len, K_ND);
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
		announce(ifc);
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

/* Learns the sender of an IP packet (the seed: endpoints are made on the
 * fly from the GRH, so traffic flows where ARP never ran), and maps its
 * source address to that endpoint when the address is on the link. */
static void glean(struct imc_ipoib *ifc, struct ep *e,
		  const struct imc_ip_addr *src)
{
	if (!e || imc_ip_addr_is_multicast(src) || is_own(ifc, src) ||
	    !on_link(ifc, src))
		return;
	if (src->family == IMC_IPV4 &&
	    (src->v4 == 0 || v4_broadcast(ifc, src->v4)))
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
		drop(ifc, IMC_IPOIB_DROP_MALFORMED);
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
	if (!nb && !is_own(ifc, &tpa)) {
		if (ep_find(ifc, &a.sha.gid))
			ep_learn(ifc, &a.sha.gid, rx->slid, a.sha.qpn);
		return;
	}
	e = ep_learn(ifc, &a.sha.gid, rx->slid, a.sha.qpn);
	if (!e)
		return;
	if (nb) {
		neigh_confirm(ifc, nb, &spa, e);
		merged = true;
	}
	if (!is_own(ifc, &tpa))
		return;
	if (!merged && a.spa != 0 && on_link(ifc, &spa))
		neigh_confirm(ifc, NULL, &spa, e);
	if (a.op == IMC_ARP_OP_REQUEST) {
		size_t n = arp_build(ifc, IMC_ARP_OP_REPLY, a.tpa, &a.sha,
				     a.spa);

		ep_send(ifc, e, ifc->buf, n, K_ARP);
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
			    ep_find(ifc, &nd->lladdr.gid))
				ep_learn(ifc, &nd->lladdr.gid, rx->slid,
					 nd->lladdr.qpn);
			return;
		}
	} else if (!is_own(ifc, &target)) {
		return;
	}
	if (nd->has_lladdr) {
		if (!imc_gid_equal(&nd->lladdr.gid, &rx->sgid))
			return;
		e = ep_learn(ifc, &nd->lladdr.gid, rx->slid, nd->lladdr.qpn);
	} else {
		e = ep_learn(ifc, &rx->sgid, rx->slid, rx->src_qp);
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
			grp_send(ifc, g, ifc->buf, (size_t)n, K_ND);
	} else {
		ep_send(ifc, e, ifc->buf, (size_t)n, K_ND);
	}
}

void imc_ipoib_recv(struct imc_ipoib *ifc, const struct imc_ipoib_rx *rx)
{
	struct imc_ipoib_hdr h;
	struct ipo_iphdr ip;
	struct imc_ipoib_packet pk;
	const uint8_t *p;
	size_t len;
	bool mcast = false;
	struct ep *e = NULL;

	if (ifc->state == IMC_IPOIB_DOWN) {
		drop(ifc, IMC_IPOIB_DROP_DOWN);
		return;
	}
	/* IBA 10.9: a partition is the P_Key's low 15 bits. */
	if ((rx->pkey ^ ifc->cfg.pkey) & 0x7FFF) {
		drop(ifc, IMC_IPOIB_DROP_PKEY);
		return;
	}
	if (imc_ipoib_hdr_unpack(&h, rx->data, rx->len) < 0) {
		drop(ifc, IMC_IPOIB_DROP_MALFORMED);
		return;
	}
	p = rx->data + IMC_IPOIB_HDR_LEN;
	len = rx->len - IMC_IPOIB_HDR_LEN;
	if (rx->has_grh) {
		if (imc_gid_equal(&rx->sgid, &ifc->cfg.port_gid) &&
		    rx->src_qp == ifc->cfg.qpn) {
			drop(ifc, IMC_IPOIB_DROP_LOOPBACK);
			return;
		}
		if (imc_gid_is_multicast(&rx->dgid)) {
			bool bc = ifc->bcast &&
				  imc_gid_equal(&rx->dgid, &ifc->bcast_mgid);
			struct group *g = bc ? ifc->bcast :
					       grp_find(ifc, &rx->dgid);

			/* Also in the seed's window: the QP is attached and
			 * receives before the join callback has run. The
			 * broadcast group is always wanted. */
			if (!g || (!bc && !grp_wants_full(g))) {
				drop(ifc, IMC_IPOIB_DROP_NOT_LISTENING);
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
		drop(ifc, IMC_IPOIB_DROP_ETHERTYPE);
		return;
	}
	if (ipo_ip_parse(p, len, &ip) < 0 ||
	    (ip.family == IMC_IPV4) != (h.type == IMC_ETHERTYPE_IPV4)) {
		drop(ifc, IMC_IPOIB_DROP_MALFORMED);
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
			drop(ifc, IMC_IPOIB_DROP_MALFORMED);
			return;
		}
	}
	if (rx->has_grh)
		e = ep_learn(ifc, &rx->sgid, rx->slid, rx->src_qp);
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

/* ---- transmit ---- */

int imc_ipoib_xmit(struct imc_ipoib *ifc, const void *pkt, size_t len)
{
	struct imc_ipoib_hdr h;
	struct ipo_iphdr ip;
	struct imc_gid mgid;
	struct group *g;

	if (ifc->state == IMC_IPOIB_DOWN) {
		drop(ifc, IMC_IPOIB_DROP_DOWN);
		return -ENETDOWN;
	}
	if (len > ifc->mtu) {
		drop(ifc, IMC_IPOIB_DROP_MTU);
		return -EMSGSIZE;
	}
	if (!pkt || ipo_ip_parse(pkt, len, &ip) < 0) {
		drop(ifc, IMC_IPOIB_DROP_MALFORMED);
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
			drop(ifc, IMC_IPOIB_DROP_MALFORMED);
			return -EINVAL;
		}
		g = grp_get(ifc, &mgid, &ip.dst);
		if (!g)
			return -ENOMEM;
		return grp_send(ifc, g, ifc->buf, len, K_IP);
	}
	if (ip.family == IMC_IPV4 && v4_broadcast(ifc, ip.dst.v4))
		return grp_send(ifc, ifc->bcast, ifc->buf, len, K_IP);
	if (!on_link(ifc, &ip.dst)) {
		drop(ifc, IMC_IPOIB_DROP_NO_ROUTE);
		return -EHOSTUNREACH;
	}
	return neigh_send(ifc, &ip.dst, ifc->buf, len);
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
	return grp_listen(ifc, &mgid, a);
}

static int unlisten_ip(struct imc_ipoib *ifc, const struct imc_ip_addr *a)
{
	struct imc_gid mgid;
	struct group *g;

	if (ip_group_mgid(ifc, a, &mgid) < 0)
		return -EINVAL;
	g = grp_find(ifc, &mgid);
	if (!g || !g->listeners)
		return -ENOENT;
	grp_unlisten(g);
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
	if (ifc->naddrs == ifc->addr_cap) {
		size_t cap = ifc->addr_cap ? ifc->addr_cap * 2 : 4;
		struct own_addr *na = realloc(ifc->addrs, cap * sizeof(*na));

		if (!na) {
			if (key.family == IMC_IPV6) {
				unlisten_ip(ifc, &snm);
				if (!ifc->v6_addrs)
					unlisten_ip(ifc, &all);
			}
			return -ENOMEM;
		}
		ifc->addrs = na;
		ifc->addr_cap = cap;
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
	    !mtu_bytes(cfg->port_mtu) || cfg->qpn == 0 ||
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
	ifc->mtu = mtu_bytes(cfg->port_mtu) - IMC_IPOIB_HDR_LEN;
	ipo_list_init(&ifc->ep_list);
	ipo_list_init(&ifc->group_list);
	ipo_list_init(&ifc->waiting);
	imc_timer_init(&ifc->carrier_timer, carrier_fire);
	if (ipo_ht_init(&ifc->eps) < 0 || ipo_ht_init(&ifc->neighs) < 0 ||
	    ipo_ht_init(&ifc->groups) < 0)
		goto fail;
	ifc->bcast = grp_new(ifc, &bmgid, NULL);
	if (!ifc->bcast)
		goto fail;
	ifc->bcast->bcast = true;
	ifc->bcast_mgid = bmgid;
	*out = ifc;
	return 0;
fail:
	ipo_ht_fini(&ifc->eps);
	ipo_ht_fini(&ifc->neighs);
	ipo_ht_fini(&ifc->groups);
	free(ifc);
	return -ENOMEM;
}

int imc_ipoib_up(struct imc_ipoib *ifc)
{
	int rc;

	if (ifc->state != IMC_IPOIB_DOWN)
		return -EALREADY;
	ifc_set_state(ifc, IMC_IPOIB_JOINING);
	ifc->bcast->backoff = 0;
	rc = grp_join(ifc->bcast);
	if (rc < 0) {
		grp_set_state(ifc->bcast, GRP_JOINING);
		grp_retry(ifc->bcast);
		ifc_set_state(ifc, IMC_IPOIB_BACKOFF);
	}
	return 0;
}

static void free_neighs(struct imc_ipoib *ifc)
{
	for (size_t i = 0; i <= ifc->neighs.mask; i++) {
		while (ifc->neighs.b[i]) {
			struct neigh *nb = imc_container_of(
				ifc->neighs.b[i], struct neigh, hn);

			neigh_free(nb, IMC_IPOIB_DROP_FLUSHED);
		}
	}
}

void imc_ipoib_down(struct imc_ipoib *ifc)
{
	if (!ifc || ifc->state == IMC_IPOIB_DOWN)
		return;
	ifc_set_state(ifc, IMC_IPOIB_DOWN);
	for (struct ipo_list *l = ifc->group_list.next, *n;
	     l != &ifc->group_list; l = n) {
		struct group *g = imc_container_of(l, struct group, all);

		n = l->next;
		grp_leave_members(g);
		imc_timer_cancel(ifc->loop, &g->timer);
		q_drop_all(ifc, &g->q, IMC_IPOIB_DROP_FLUSHED);
		grp_set_state(g, GRP_IDLE);
		g->backoff = 0;
		g->last_send = 0;
		if (!grp_wants_full(g))
			grp_free(g);
	}
	free_neighs(ifc);
	while (!ipo_list_empty(&ifc->ep_list))
		ep_free(imc_container_of(ifc->ep_list.next, struct ep, all));
	ifc->mtu = mtu_bytes(ifc->cfg.port_mtu) - IMC_IPOIB_HDR_LEN;
}

void imc_ipoib_destroy(struct imc_ipoib *ifc)
{
	if (!ifc)
		return;
	imc_ipoib_down(ifc);
	while (!ipo_list_empty(&ifc->group_list))
		grp_free(imc_container_of(ifc->group_list.next, struct group,
					  all));
	imc_timer_cancel(ifc->loop, &ifc->carrier_timer);
	ipo_ht_fini(&ifc->eps);
	ipo_ht_fini(&ifc->neighs);
	ipo_ht_fini(&ifc->groups);
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
	for (const struct ipo_list *l = ifc->ep_list.next; l != &ifc->ep_list;
	     l = l->next)
		ep_info(imc_container_of(l, const struct ep, all), &v[i++]);
	for (const struct ipo_list *l = ifc->group_list.next;
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
	const struct ep *e = ep_find(ifc, gid);
	const struct group *g;

	if (e) {
		ep_info(e, out);
		return 0;
	}
	g = grp_find(ifc, gid);
	if (g) {
		grp_info(g, out);
		return 0;
	}
	return -ENOENT;
}

static int neigh_cmp(const void *a, const void *b)
{
	const struct imc_ipoib_neigh_info *x = a, *y = b;

	return addr_cmp(&x->addr, &y->addr);
}

void imc_ipoib_foreach_neigh(const struct imc_ipoib *ifc,
			     void (*fn)(void *arg,
					const struct imc_ipoib_neigh_info *n),
			     void *arg)
{
	size_t n = ifc->st.neighbours, k = 0;
	struct imc_ipoib_neigh_info *v;

	if (!n)
		return;
	v = calloc(n, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i <= ifc->neighs.mask; i++) {
		for (const struct ipo_hnode *h = ifc->neighs.b[i]; h;
		     h = h->next) {
			const struct neigh *nb = imc_container_of(
				h, const struct neigh, hn);

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
	}
	qsort(v, k, sizeof(*v), neigh_cmp);
	for (size_t i = 0; i < k; i++)
		fn(arg, &v[i]);
	free(v);
}
