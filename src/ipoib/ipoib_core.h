/* The IPoIB interface's own types and the helpers its files share
 * (ipoib.c: life cycle, endpoints, queues, transmit, listings;
 * ipoib_group.c: multicast groups; ipoib_neigh.c: neighbours, ARP and
 * ND, LID changes, receive). Included by those files only. */
#ifndef IMC_IPOIB_CORE_H
#define IMC_IPOIB_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/loop.h"
#include "ibmcast/mcast.h"
#include "ipoib/ipoib_int.h"

enum {
	BUF_MAX = IMC_IPOIB_HDR_LEN + 4096,
	QPN_GROUP = IMC_IPOIB_QPN_MULTICAST,
};

enum pkt_kind { K_IP, K_ARP, K_ND };

enum ep_state { EP_NOAV, EP_READY, EP_STALE, EP_PROBING };

enum grp_state { GRP_IDLE, GRP_JOINING, GRP_JOINED, GRP_BACKOFF };

struct ep {
	struct imc_hnode hn;        /* ifc->eps, by GID */
	struct imc_list all;        /* ifc->ep_list, creation order */
	struct imc_list wait;       /* ifc->waiting while packets wait */
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
	struct imc_hnode hn;        /* ifc->neighs, by address */
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
	struct imc_hnode hn;        /* ifc->groups, by MGID */
	struct imc_list all;        /* ifc->group_list, creation order */
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
	struct imc_htab eps, neighs, groups;
	struct imc_list ep_list, group_list, waiting;
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

/* ---- shared helpers (each file's comments say what they do) ---- */

/* ipoib.c */

void ipo_drop(struct imc_ipoib *ifc, enum imc_ipoib_drop why);
/* An endpoint or neighbour last used or confirmed at last expires
 * neigh_expiry later: if that is still to come, t is armed for it and
 * true returned (the one expiry rule of both). */
bool ipo_expiry_rearm(struct imc_ipoib *ifc, struct imc_timer *t,
		      imc_time_t last, imc_time_t now);

void ipo_ep_fabricate(struct ep *e);

/* av to dlid and dgid with the path parameters of record r (the
 * broadcast group's for an endpoint, the group's own for a group) and
 * the interface's SGID index. */
void ipo_av_from(struct imc_ipoib_av *av, const struct imc_ipoib *ifc,
		 const struct imc_mcmr *r, uint16_t dlid,
		 const struct imc_gid *dgid);

struct ep *ipo_ep_find(const struct imc_ipoib *ifc,
		       const struct imc_gid *gid);

void ipo_ep_flush(struct imc_ipoib *ifc, struct ep *e);

struct ep *ipo_ep_learn(struct imc_ipoib *ifc, const struct imc_gid *gid,
			uint16_t lid, uint32_t qpn);

int ipo_ep_send(struct imc_ipoib *ifc, struct ep *e, const uint8_t *data,
		size_t len, enum pkt_kind kind);

void ipo_ep_set_state(struct ep *e, enum ep_state to);

void ipo_flush_waiting(struct imc_ipoib *ifc);

uint64_t ipo_gid_hash(const struct imc_ipoib *ifc, const struct imc_gid *g);

void ipo_grp_set_state(struct group *g, enum grp_state to);

void ipo_ifc_set_state(struct imc_ipoib *ifc, enum imc_ipoib_state to);

bool ipo_is_own(const struct imc_ipoib *ifc, const struct imc_ip_addr *a);

unsigned ipo_mtu_bytes(unsigned code);

bool ipo_on_link(const struct imc_ipoib *ifc, const struct imc_ip_addr *a);

const struct own_addr *ipo_own_for(const struct imc_ipoib *ifc,
				   const struct imc_ip_addr *dst);

void ipo_q_drop_all(struct imc_ipoib *ifc, struct ipo_queue *q,
		    enum imc_ipoib_drop why);

struct ipo_pkt *ipo_q_pop(struct imc_ipoib *ifc, struct ipo_queue *q);

int ipo_q_push(struct imc_ipoib *ifc, struct ipo_queue *q, size_t bound,
	       enum imc_ipoib_drop full, const uint8_t *data, size_t len,
	       enum pkt_kind kind);

int ipo_tx(struct imc_ipoib *ifc, const struct imc_ipoib_av *av,
	   uint32_t qpn, uint32_t qkey, const uint8_t *data, size_t len,
	   enum pkt_kind kind);

bool ipo_v4_broadcast(const struct imc_ipoib *ifc, uint32_t a);

/* ipoib_group.c */

struct group *ipo_grp_find(const struct imc_ipoib *ifc,
			   const struct imc_gid *mgid);

void ipo_grp_free(struct group *g);

struct group *ipo_grp_get(struct imc_ipoib *ifc, const struct imc_gid *mgid,
			  const struct imc_ip_addr *ip);

int ipo_grp_join(struct group *g);

void ipo_grp_leave_members(struct group *g);

int ipo_grp_listen(struct imc_ipoib *ifc, const struct imc_gid *mgid,
		   const struct imc_ip_addr *ip);

struct group *ipo_grp_new(struct imc_ipoib *ifc,
			  const struct imc_gid *mgid,
			  const struct imc_ip_addr *ip);

void ipo_grp_retry(struct group *g);

int ipo_grp_send(struct imc_ipoib *ifc, struct group *g,
		 const uint8_t *data, size_t len, enum pkt_kind kind);

void ipo_grp_unlisten(struct group *g);

bool ipo_grp_wants_full(const struct group *g);

/* ipoib_neigh.c */

void ipo_announce(struct imc_ipoib *ifc);

void ipo_ep_probe(struct ep *e);

void ipo_ep_probe_fire(struct imc_timer *t);

void ipo_neigh_free(struct neigh *nb, enum imc_ipoib_drop why);

int ipo_neigh_send(struct imc_ipoib *ifc, const struct imc_ip_addr *dst,
		   const uint8_t *data, size_t len);

#endif
