/* Internals of the SA multicast engine, shared by its files only
 * (sa.c, sa_mcmr.c, sa_notice.c, sa_rmpp.c, sa_store.c).
 * Nothing here is exported: the names carry the sae_ prefix and
 * the library's version script hides them. */
#ifndef IMC_SA_INT_H
#define IMC_SA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibmcast/loop.h"
#include "ibmcast/mad.h"
#include "ibmcast/rmpp.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "util/hash.h"
#include "util/list.h"
#include "util/mix.h"

/* Keyed lookups are util/hash.h probes: the hashes mix cfg.hash_seed in
 * (sae_mix), so that keys chosen by a peer cannot share buckets. */
static inline uint64_t sae_mix(uint64_t a, uint64_t b)
{
	return imc_mix64((a ^ b) + IMC_MIX_GOLDEN);
}

/* ------------------------------------------------------------------ */
/* Groups, members, ports, MLIDs. */

struct sae_group {
	struct imc_hnode node;       /* sa->groups, by MGID */
	struct imc_mcmr rec;        /* parameters; port fields 0, selectors 2 */
	struct imc_list members;     /* struct sae_member.in_group */
	struct sae_group *mlid_next; /* other groups on the same MLID */
	uint32_t n_members;
	uint32_t n_full;            /* FullMember or SendOnlyFullMember */
	bool persistent;
};

struct sae_pent {
	struct imc_hnode node;       /* sa->ports, by GID */
	struct imc_gid gid;
	struct imc_list members;     /* struct sae_member.in_port */
	uint32_t n;
};

struct sae_member {
	struct imc_hnode node;       /* sa->members, by (group, PortGID) */
	struct imc_list in_group;
	struct imc_list in_port;
	struct sae_group *group;
	struct sae_pent *port;
	struct imc_gid gid;         /* = port->gid, kept here for lookups */
	uint8_t join_state;
	bool proxy;
	uint16_t lid;
	uint32_t node_id;
	uint8_t port_num;
	bool switch_port0;
};

/* Reference count of a port on a shared MLID's tree. */
struct sae_mref {
	struct imc_hnode node;
	uint16_t mlid;
	struct imc_gid gid;
	uint32_t count;
};

struct sae_mlids {
	uint16_t first;
	uint32_t n;                 /* MLIDs in the pool */
	uint64_t *used;             /* bit per MLID; tail bits set */
	uint64_t *full;             /* bit per used[] word that is full */
	size_t nwords, nsum;
	uint32_t in_use;
	uint32_t cursor;            /* next MLID to share, as an index */
	struct sae_group **head;     /* groups on each MLID */
};

/* ------------------------------------------------------------------ */
/* Deferred work, Reports, subscriptions, transfers, queue. */

enum sae_work_kind {
	SA_WORK_MFT,
	SA_WORK_NOTICE,
};

struct sae_work {
	struct imc_list link;
	imc_time_t due;
	enum sae_work_kind kind;
	struct imc_sa_member_change chg;      /* SA_WORK_MFT */
	uint16_t trap;                        /* SA_WORK_NOTICE */
	uint16_t pkey;
};

enum sae_report_state {
	SA_REPORT_WAITING,          /* sent, no ReportResp yet */
	SA_REPORT_ACKED,            /* ReportResp came: freed */
	SA_REPORT_FAILED,           /* retries used up: freed */
};

struct sae_report {
	struct imc_hnode node;       /* sa->reports, by TID */
	struct imc_list link;
	struct imc_timer timer;
	struct imc_sa *sa;
	enum sae_report_state state;
	uint32_t tid;
	unsigned resends;
	struct imc_sa_dest dest;
	uint8_t mad[IMC_MAD_SIZE];
};

struct sae_sub {
	struct imc_hnode node;       /* sa->subs, by subscription key */
	struct imc_list link;        /* in arrival order: Report order */
	struct imc_inform_info ii;  /* as set, QPN = the requester's */
	struct imc_gid subscriber;
	struct imc_sa_dest dest;
};

struct sae_xfer {
	struct imc_hnode node;       /* sa->xfers, by (LID, TID) */
	struct imc_list link;
	struct imc_timer timer;
	struct imc_sa *sa;
	struct imc_rmpp_sender *snd;
	struct imc_sa_mad tmpl;
	uint8_t *payload;
	size_t len;
	struct imc_sa_dest dest;
	uint16_t slid;
	bool kick;                  /* timer armed to send, not to time out */
	bool abort_due;             /* a bad ACK: send our ABORT */
};

struct sae_req {
	struct imc_sa_src src;
	uint8_t mad[IMC_MAD_SIZE];
};

struct imc_sa {
	struct imc_loop *loop;
	struct imc_sa_config cfg;
	struct imc_sa_bcast *bcast;
	struct imc_sa_ops ops;
	void *ctx;

	struct imc_htab groups, members, ports, mrefs;
	struct sae_mlids mlids;
	uint32_t mgid_counter;
	uint64_t members_total;

	struct sae_req *q;
	uint32_t qcap, qhead, qlen;
	struct imc_timer serve_timer;
	imc_time_t serve_next;

	struct imc_list work;
	struct imc_timer work_timer;
	uint32_t work_len;

	struct imc_htab reports, subs, xfers;
	struct imc_list report_list, sub_list, xfer_list;
	uint32_t report_tid;

	struct imc_sa_stats st;
};

/* One request being served. */
struct sae_ctx {
	struct imc_sa *sa;
	const struct imc_sa_src *src;
	const uint8_t *raw;
	struct imc_sa_mad req;
	bool trusted;
};

/* sa_store.c */
int sae_store_init(struct imc_sa *sa);
void sae_store_free(struct imc_sa *sa);
struct sae_group *sae_group_find(const struct imc_sa *sa,
			       const struct imc_gid *mgid);
struct sae_group *sae_group_by_mlid(const struct imc_sa *sa, uint16_t mlid);
int sae_mlid_alloc(struct imc_sa *sa, uint16_t want, uint16_t *out);
struct sae_group *sae_group_new(struct imc_sa *sa, const struct imc_mcmr *rec,
			      bool persistent);
void sae_group_free(struct imc_sa *sa, struct sae_group *g);
struct sae_member *sae_member_find(const struct imc_sa *sa,
				 const struct sae_group *g,
				 const struct imc_gid *port_gid);
struct sae_member *sae_member_add(struct imc_sa *sa, struct sae_group *g,
				const struct imc_sa_port *port,
				uint8_t join_state, bool proxy);
void sae_member_set_state(struct imc_sa *sa, struct sae_member *m,
			 uint8_t join_state);
void sae_member_del(struct imc_sa *sa, struct sae_member *m);
struct sae_pent *sae_port_find(const struct imc_sa *sa,
			     const struct imc_gid *gid);
bool sae_tree_ref(struct imc_sa *sa, uint16_t mlid, const struct imc_gid *gid,
		 bool add);
int sae_groups_sorted(const struct imc_sa *sa, struct sae_group ***out,
		     size_t *n);
int sae_members_sorted(const struct sae_group *g, struct sae_member ***out);
void sae_prefetch(const struct imc_sa *sa, const uint8_t *mad, int stage);

static inline bool sae_join_full(uint8_t join_state)
{
	return join_state & (UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER |
			     UMAD_SA_MCM_JOIN_STATE_SEND_ONLY_FULL_MEMBER);
}

/* sa.c */
void sae_dest_reply(const struct imc_sa_src *src, struct imc_sa_dest *d);
void sae_send(struct imc_sa *sa, const struct imc_sa_dest *d,
	     const uint8_t *mad);
void sae_answer_error(struct sae_ctx *c, uint16_t status);
void sae_answer_error_data(struct sae_ctx *c, uint16_t status,
			  const uint8_t *data, size_t len);
void sae_answer_one(struct sae_ctx *c, const uint8_t *rec, size_t size);
void sae_answer_table(struct sae_ctx *c, uint8_t *payload, size_t count,
		     size_t size);
int sae_mft_change(struct imc_sa *sa, const struct sae_member *m, bool add,
		  bool sync);
void sae_work_notice(struct imc_sa *sa, uint16_t trap,
		    const struct imc_gid *mgid, uint16_t pkey);
bool sae_pkey_has(const struct imc_sa_port *p, uint16_t pkey);
bool sae_pkey_share(const struct imc_sa_port *a, const struct imc_sa_port *b);

/* sa_mcmr.c */
void sae_mcmr_serve(struct sae_ctx *c);
int sae_leave(struct imc_sa *sa, struct sae_member *m, uint8_t bits, bool sync,
	     uint8_t *left);

/* sa_notice.c */
void sae_inform_serve(struct sae_ctx *c);
void sae_notice_send(struct imc_sa *sa, uint16_t trap,
		    const struct imc_gid *mgid, uint16_t pkey);
int sae_report_ack(struct imc_sa *sa, const uint8_t *mad);
int sae_subs_drop_port(struct imc_sa *sa, const struct imc_gid *gid);
void sae_notice_free(struct imc_sa *sa);

/* sa_rmpp.c */
int sae_xfer_start(struct imc_sa *sa, const struct imc_sa_src *src,
		  const struct imc_sa_mad *tmpl, uint8_t *payload, size_t len);
bool sae_xfer_busy(const struct imc_sa *sa, uint16_t slid, uint64_t tid);
int sae_xfer_control(struct imc_sa *sa, const struct imc_sa_src *src,
		    const uint8_t *mad);
void sae_xfer_free_all(struct imc_sa *sa);

#endif
