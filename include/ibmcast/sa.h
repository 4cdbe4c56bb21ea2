/* The SA multicast engine: the server side of MCMemberRecord (IBA
 * 15.2.5.17) as OpenSM implements it, plus the ClassPortInfo (IBA
 * 13.4.8.1) and InformInfo (IBA 13.4.8.3) support a multicast client needs,
 * with traps 66 and 67 delivered as Report(Notice) (IBA 13.4.8.2,
 * 14.2.5.1).
 *
 * Sans-I/O. The engine never reads a clock or touches a socket: MADs come
 * in through imc_sa_recv(), answers and Reports leave through ops->send,
 * and everything that takes time runs from timers on the imc_loop given
 * at creation (the request service queue, RMPP and Report retransmission,
 * delayed MFT programming). Every answer, Report and ops callback other
 * than the port directory lookups is made from a loop callback, never from
 * inside an imc_sa_* call.
 *
 * Requests go into a bounded FIFO served at cfg.service_rate requests per
 * second; a full FIFO drops the request (counted), as a loaded SA would.
 * A rate of 0 serves every queued request in the next loop round.
 *
 * Where the engine departs from OpenSM it follows the IBA clause that
 * says otherwise; docs/conformance.md lists every such difference.
 */
#ifndef IBMCAST_SA_H
#define IBMCAST_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ibmcast/common.h"
#include "ibmcast/loop.h"
#include "ibmcast/sa_attr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The well-known QP1 (GSI) Q_Key (IBA 3.5.6); a macro, as ISO C
 * enumerators are ints. */
#define IMC_SA_QP1_QKEY 0x80010000u

enum {
	IMC_SA_MLID_FIRST = 0xC000,      /* IBA 4.1.3: multicast LIDs */
	IMC_SA_MLID_LAST = 0xFFFE,
	IMC_SA_IPOIB_QKEY = 0x0B1B,      /* OpenSM's IPoIB broadcast Q_Key */
	/* SA CapabilityMask2 bit 12 (IBA 1.3, Linux
	 * IB_SA_CAP_MASK2_SENDONLY_FULL_MEM_SUPPORT): SendOnlyFullMember
	 * joins supported; rdma-core's umad_sa.h stops at bit 11. */
	IMC_SA_CAP_MASK2_SENDONLY_FULL = 1 << 12,
};

/* A port as the SA's port directory knows it (from the SM, or from
 * PortInfoRecord and P_KeyTableRecord queries beside another SM). */
struct imc_sa_port {
	struct imc_gid gid;         /* port GID (subnet prefix + port GUID) */
	uint16_t lid;
	uint8_t mtu;                /* MTU code (IBA 14.2.5.6), 4 = 2048 */
	uint8_t rate;               /* PathRecord rate code, 3 = 10 Gb/s */
	bool switch_port0;          /* management port 0 of a switch */
	uint32_t node;              /* directory's node id, handed back in */
	uint8_t port_num;           /* struct imc_sa_member_change */
	const uint16_t *pkeys;      /* P_Key table, read during the call only */
	size_t n_pkeys;
};

/* Where a MAD came from: the fields of the receive completion and GRH. */
struct imc_sa_src {
	uint16_t slid;
	uint32_t sqpn;
	uint16_t pkey;              /* P_Key the MAD carried */
	uint8_t sl;
	bool has_grh;
	struct imc_gid sgid;        /* GRH source (the requester) */
	struct imc_gid dgid;        /* GRH destination (this SA's port) */
	uint32_t flow_label;
	uint8_t tclass;
	uint8_t hop_limit;
};

/* Where a MAD goes. Answers go back to the requester's LID and QP with the
 * request's P_Key and SL; the GRH, when the request had one, has the
 * request's GIDs swapped. */
struct imc_sa_dest {
	uint16_t dlid;
	uint32_t dqpn;
	uint32_t qkey;              /* IMC_SA_QP1_QKEY */
	uint16_t pkey;
	uint8_t sl;
	bool has_grh;
	struct imc_gid dgid;
	struct imc_gid sgid;
	uint32_t flow_label;
	uint8_t tclass;
	uint8_t hop_limit;
};

/* A port entering (add) or leaving the forwarding tree of an MLID. Every
 * member with any JoinState bit is on the tree, send-only members
 * included, as OpenSM programs its MFTs (osm_mcast_mgr.c). */
struct imc_sa_member_change {
	uint16_t mlid;
	bool add;
	struct imc_gid mgid;
	struct imc_gid port_gid;
	uint16_t lid;               /* as the directory gave it at join time */
	uint32_t node;
	uint8_t port_num;
	bool switch_port0;
	uint8_t join_state;         /* the port's JoinState after the change */
};

/* Every op is called from a loop callback of the SA. send and
 * mcast_members may call imc_sa_recv() (it only queues); no op may call
 * any other imc_sa_* function of the same SA. */
struct imc_sa_ops {
	/* The port directory. Return 0 and fill *out, or -ENOENT. */
	int (*port_by_gid)(void *ctx, const struct imc_gid *gid,
			   struct imc_sa_port *out);
	int (*port_by_lid)(void *ctx, uint16_t lid, struct imc_sa_port *out);
	/* A MAD to put on the wire (IMC_MAD_SIZE bytes, valid during the
	 * call). */
	void (*send)(void *ctx, const struct imc_sa_dest *to,
		     const uint8_t *mad, size_t len);
	/* Optional (NULL: no MFT programming): a member change of an MLID's
	 * tree. Returns 0 once programmed. With IMC_SA_MFT_PROGRAM_FIRST a
	 * failed add undoes the join, which is answered NO_RESOURCES. With
	 * a shared MLID (cfg.mlid_share) a port is added on its first group
	 * of that MLID and removed after its last. */
	int (*mcast_members)(void *ctx, uint16_t mlid,
			     const struct imc_sa_member_change *chg);
};

/* When a join's MFT entries are written relative to its answer. */
enum imc_sa_mft_order {
	/* Program the tree, then answer: a member may send as soon as it
	 * has its answer (OpenSM answers before its sweep reroutes; this
	 * is the safe order). */
	IMC_SA_MFT_PROGRAM_FIRST,
	/* Answer, then program cfg.mft_delay later: the race of a member
	 * that is attached before its tree exists. */
	IMC_SA_MFT_ANSWER_FIRST,
};

/* A group the SA creates at start and never deletes, like OpenSM's
 * partition IPoIB broadcast groups (partitions.conf "ipoib"). */
struct imc_sa_bcast {
	uint16_t pkey;              /* the partition; stored with bit 15 set */
	uint8_t scope;              /* 0 means 2, link-local */
	uint32_t qkey;
	uint8_t mtu;                /* MTU code */
	uint8_t rate;               /* rate code */
	uint8_t sl;
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t life;               /* PacketLifeTime; OpenSM: subnet_timeout */
	uint16_t mlid;              /* 0: the lowest free one */
};

struct imc_sa_config {
	uint64_t subnet_prefix;     /* PortGIDs outside it: INVALID_GID */
	uint64_t sm_key;            /* requests carrying it are trusted */
	uint16_t sa_lid;            /* issuer of trap 66/67 notices */
	struct imc_gid sa_gid;
	const struct imc_sa_bcast *bcast;  /* copied by imc_sa_create() */
	size_t n_bcast;
	uint16_t mlid_first;        /* MLID pool, within 0xC000..0xFFFE */
	uint16_t mlid_last;
	/* When the pool is empty, share MLIDs between groups (several MGIDs
	 * on one MLID, as OpenSM does for IPv6 solicited-node groups)
	 * instead of answering NO_RESOURCES. */
	bool mlid_share;
	uint32_t service_rate;      /* requests served per second, 0: all */
	uint32_t queue_max;         /* service FIFO bound (>= 1) */
	enum imc_sa_mft_order mft_order;
	imc_time_t mft_delay;       /* for IMC_SA_MFT_ANSWER_FIRST */
	imc_time_t report_timeout;  /* Report retransmission interval */
	unsigned report_retries;    /* retransmissions before giving up */
	imc_time_t rmpp_timeout;    /* RMPP sender ACK timeout */
	unsigned rmpp_retries;
	uint32_t max_transfers;     /* concurrent GetTable RMPP transfers */
	uint32_t max_records;       /* larger GetTable answers: NO_RESOURCES */
	uint32_t max_subscriptions; /* InformInfo subscriptions */
	uint8_t resp_time_value;    /* ClassPortInfo RespTimeValue */
	uint64_t hash_seed;         /* e.g. imc_rng_next(): keyed tables */
};

/* Defaults: prefix fe80::/64, SM_Key 1 (OpenSM's default sa_key), one
 * broadcast group ff12:401b:ffff::ffff:ffff (P_Key 0xffff, Q_Key 0x0B1B,
 * MTU 2048, 10 Gb/s, SL 0, life 18) as OpenSM's default partitions.conf
 * creates, the full MLID range, rate 0, queue 4096, program-first,
 * Reports every 200 ms up to 3 retries (OpenSM's transaction timeout and
 * retries), RMPP likewise, RespTimeValue 16 (268 ms), 64 transfers,
 * 1,048,576 records, 1024 subscriptions. */
void imc_sa_config_init(struct imc_sa_config *cfg);

struct imc_sa;

/* Creates an SA with cfg's broadcast groups (cfg NULL: the defaults of
 * imc_sa_config_init()). ops and cfg (and the
 * broadcast array) are copied; ctx is passed to ops; loop must outlive
 * the SA. Returns 0, -EINVAL (NULL argument, no send or directory op, a
 * bad MLID range or queue bound, an invalid broadcast group), -ENOSPC
 * (more broadcast groups than MLIDs) or -ENOMEM. Free with
 * imc_sa_destroy(). */
int imc_sa_create(struct imc_loop *loop, const struct imc_sa_config *cfg,
		  const struct imc_sa_ops *ops, void *ctx,
		  struct imc_sa **out);

/* Frees the SA, its groups, queued requests, transfers and pending
 * Reports, cancelling its timers; no op is called. NULL is a no-op. */
void imc_sa_destroy(struct imc_sa *sa);

/* A MAD for the SA. Requests are queued (copied) and answered from the
 * loop. Returns
 *  0             queued, or an RMPP ACK/STOP/ABORT or ReportResp taken
 *  -EINVAL       NULL argument
 *  -EMSGSIZE     len is not IMC_MAD_SIZE (every MAD is 256 bytes): dropped
 *  -EPROTONOSUPPORT  not the SA class: dropped
 *  -ENOMSG       a response, or an RMPP ACK/STOP/ABORT, that belongs to
 *                nothing the SA waits for: dropped (never answered)
 *  -ENOBUFS      the service FIFO is full: dropped
 * Nothing is sent from inside this call. */
int imc_sa_recv(struct imc_sa *sa, const struct imc_sa_src *from,
		const uint8_t *mad, size_t len);

/* The SM saw port_gid go away: its memberships end as if it had left
 * every group with every JoinState bit (groups left without a full member
 * are deleted, trap 67), and its InformInfo subscriptions end. The MFT
 * changes and Reports follow from the loop. Returns the number of
 * memberships dropped. */
int imc_sa_port_gone(struct imc_sa *sa, const struct imc_gid *port_gid);

/* ------------------------------------------------------------------ */
/* Introspection (for `ibmcast sa show` and tests). */

struct imc_sa_group_info {
	struct imc_mcmr rec;        /* group parameters; PortGID, JoinState
				     * and ProxyJoin are 0 */
	uint32_t members;
	uint32_t full_members;      /* FullMember or SendOnlyFullMember */
	bool persistent;            /* a configured broadcast group */
};

struct imc_sa_member_info {
	struct imc_gid port_gid;
	uint16_t lid;
	uint8_t join_state;
	bool proxy;                 /* joined by another port (o15-0.2.1) */
};

/* Calls cb for every group in increasing MGID order (memcmp of the wire
 * form), or every member of mgid in increasing PortGID order; a nonzero
 * return from cb stops and is returned. The SA must not be changed from
 * cb. imc_sa_foreach_member() returns -ENOENT for an unknown group, and
 * both -ENOMEM when the ordering buffer cannot be allocated. */
int imc_sa_foreach_group(const struct imc_sa *sa,
			 int (*cb)(void *arg,
				   const struct imc_sa_group_info *g),
			 void *arg);
int imc_sa_foreach_member(const struct imc_sa *sa, const struct imc_gid *mgid,
			  int (*cb)(void *arg,
				    const struct imc_sa_member_info *m),
			  void *arg);

/* One group by MGID (O(1)): 0 or -ENOENT. */
int imc_sa_group_get(const struct imc_sa *sa, const struct imc_gid *mgid,
		     struct imc_sa_group_info *out);

struct imc_json;

/* A group as saquery -g dumps an MCMemberRecord ("MCMemberRecord group
 * dump:", then MGID, Mlid, Qkey, Mtu, Rate, pkey, SL, TClass, FlowLabel
 * and Scope, names padded with dots to 24 columns) and a Members line
 * (count, full count, persistent). Returns 0, -EINVAL or -EIO. */
int imc_sa_group_print_text(FILE *f, const struct imc_sa_group_info *g);

/* A member of group g as saquery -m dumps it: MGID, Mlid, PortGid,
 * JoinState with its bits named (IBA 15.2.5.17), ProxyJoin and
 * NodeDescription (node, or "<unknown>" when NULL). Returns 0, -EINVAL
 * or -EIO. */
int imc_sa_member_print_text(FILE *f, const struct imc_sa_group_info *g,
			     const struct imc_sa_member_info *m,
			     const char *node);

/* A group as one JSON object on a line (ibmcast/json.h): mgid, mlid,
 * qkey, mtu, rate, pkey, sl, tclass, flow_label, scope, persistent,
 * full_members, then "members", the nm members m one a line (port_gid,
 * lid, join_state, proxy_join, and node: nodes[k] or null; no node key
 * when nodes is NULL). Returns 0, -EINVAL or the writer's error. */
int imc_sa_group_print_json(struct imc_json *j,
			    const struct imc_sa_group_info *g,
			    const struct imc_sa_member_info *m,
			    const char *const *nodes, size_t nm);

/* The whole state as text (groups in MGID order with their members in
 * PortGID order, MLID pool, subscriptions), snprintf-style: writes at most
 * len bytes with a NUL and returns the length the full text needs, or
 * -ENOMEM. Two SAs in the same state give the same text. */
int imc_sa_dump(const struct imc_sa *sa, char *buf, size_t len);

/* Counters. Request methods: Get, Set, GetTable, Delete, anything else.
 * Answers by status: by_sa_status[SA code 0..8] for answers with no
 * invalid-field code (0 = success), by_mad_status[invalid-field code 1..7]
 * (IBA 13.4.7: 1 bad version, 2 method, 3 method/attribute, 7 value). */
enum {
	IMC_SA_REQ_GET,
	IMC_SA_REQ_SET,
	IMC_SA_REQ_GET_TABLE,
	IMC_SA_REQ_DELETE,
	IMC_SA_REQ_OTHER,
	IMC_SA_REQ_KINDS,
};

struct imc_sa_stats {
	uint64_t received;          /* MADs given to imc_sa_recv() */
	uint64_t requests[IMC_SA_REQ_KINDS];
	uint64_t by_sa_status[9];
	uint64_t by_mad_status[8];
	uint64_t drop_queue_full;   /* service FIFO overflow */
	uint64_t drop_malformed;    /* wrong length, not the SA class */
	uint64_t drop_response;     /* unexpected response methods */
	uint64_t drop_sm_key;       /* SM_Key neither 0 nor ours (C15-0.1.5) */
	uint64_t drop_requester;    /* requester port unknown (as OpenSM) */
	uint64_t drop_duplicate;    /* GetTable while its transfer runs */
	uint64_t drop_no_answer;    /* methods that take no answer */
	uint32_t queue_len;
	uint32_t queue_max_seen;
	uint32_t groups;
	uint64_t members;
	uint32_t mlids_in_use;
	uint32_t mlids_total;
	uint64_t groups_created;
	uint64_t groups_deleted;
	uint64_t traps_66;          /* group created notices (per group) */
	uint64_t traps_67;
	uint32_t subscriptions;
	uint64_t reports_sent;      /* Report MADs, first sends */
	uint64_t reports_resent;
	uint64_t reports_acked;
	uint64_t reports_failed;    /* retries used up */
	uint32_t reports_pending;
	uint32_t transfers_active;
	uint64_t transfers_done;
	uint64_t transfers_failed;
	uint64_t rmpp_segments;     /* RMPP DATA segments sent, resends too */
	uint64_t mft_adds;
	uint64_t mft_removes;
	uint64_t mft_failures;
	uint32_t mft_pending;
};

void imc_sa_get_stats(const struct imc_sa *sa, struct imc_sa_stats *st);

/* The counters of groups, MLIDs, MADs received and dropped and MFT
 * changes (groups, members, mlids_in_use, mlids_total, received,
 * drop_queue_full, groups_created, groups_deleted, mft_adds, mft_removes)
 * as one JSON object on a line. Returns 0, -EINVAL or the writer's
 * error. */
int imc_sa_stats_print_json(struct imc_json *j, const struct imc_sa_stats *st);

#ifdef __cplusplus
}
#endif
#endif
