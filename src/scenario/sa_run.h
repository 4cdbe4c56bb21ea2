/* The state the SA verbs share between their language half (sa_verbs.c:
 * settings, verbs, subjects) and their run half (sa_run.c: hosts,
 * requests, flows, snapshots, the recorder). Private to the library. */
#ifndef IMC_SCENARIO_SA_RUN_H
#define IMC_SCENARIO_SA_RUN_H

#include "ibmcast/gsi.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_client.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/scenario_sa.h"
#include "scenario/runner.h"
#include "scenario/scn.h"
#include "scenario/snaps.h"
#include "util/hash.h"
#include "util/list.h"

#define CM(x) UMAD_SA_MCM_COMP_MASK_##x
#define JS_FULL UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER
#define JS_NON UMAD_SA_MCM_JOIN_STATE_NON_MEMBER
/* Member states that receive: FullMember and NonMember (IBA 15.2.5.17);
 * send-only members never attach their QP. */
#define JS_RECEIVES (JS_FULL | JS_NON)

#define DEFAULT_TIMEOUT (100 * IMC_NSEC_PER_MSEC)
#define RETRIES_MAX 1000

/* sa-status values past the 16-bit MAD status. */
#define ST_NONE 0x10000u
#define ST_PENDING 0x10001u
#define ST_TIMEOUT 0x10002u

/* ------------------------------------------------------------------ */
/* Parse data */

enum {
	SA_RATE = 1u << 0,
	SA_QUEUE = 1u << 1,
	SA_ORDER = 1u << 2,
	SA_DELAY = 1u << 3,
	SA_MLIDS = 1u << 4,
	SA_BCAST_QKEY = 1u << 6,    /* partitions= is bit 5 */
};

/* IPoIB partitions of the SA beyond the default one (partitions.conf
 * "ipoib" lines): each gets a broadcast group. */
#define PARTITIONS_MAX 16

struct sa_cfg {
	unsigned mask;
	uint32_t rate;
	uint32_t queue;
	enum imc_sa_mft_order order;
	imc_time_t mft_delay;
	uint32_t mlids;
	unsigned npart;
	uint16_t part[PARTITIONS_MAX];
	uint32_t bcast_qkey;
	struct imc_scn_sa_show *show;
};

enum req_kind { REQ_JOIN, REQ_LEAVE, REQ_GET };

struct req_arg {
	enum req_kind kind;
	struct scn_port_arg host;       /* sends the request */
	struct scn_port_arg member;     /* its PortGID: host, or proxy= */
	bool proxy;
	struct scn_mgid mgid;
	bool state_set;
	uint8_t state;
	uint64_t mask;              /* components the options give */
	struct imc_mcmr rec;        /* their values */
	bool create;
	char *label;                /* as=NAME; &label keys its run slot */
	uint32_t send_count;
	uint32_t send_size;
	imc_time_t send_interval;
	uint32_t retries;
	uint32_t given;             /* options given, by index in the verb's table */
	bool timeout_set;
	imc_time_t timeout;
};

struct show_arg {
	unsigned line;
};

/* ------------------------------------------------------------------ */
/* Snapshots for --sa-show */

struct snap_group {
	struct imc_sa_group_info g;
	struct imc_sa_member_info *m;
	char **node;                /* "H-000002:1" of each; NULL: no port */
	size_t nm, cap;
};

struct snap {
	imc_time_t at;
	unsigned line;              /* the sa-show line; 0: end of run */
	struct imc_sa_stats st;
	struct snap_group *g;
	size_t ng, cap;
	char *dot;                  /* the tree asked for, as DOT; or NULL */
};

struct imc_scn_sa_show {
	struct sa_cfg *cfg;         /* NULL once the scenario is gone */
	bool want_tree;             /* record tree_mgid's MFTs as DOT */
	struct imc_gid tree_mgid;
	struct scn_snaps snaps;     /* struct snap */
};

/* ------------------------------------------------------------------ */
/* Run state */

struct sa_run;
struct sa_host;

/* An SA client of a host for the requests of one timeout= and retries=
 * (a client's attempts all follow its one configuration): a host has one
 * per pair its lines use, most often one. */
struct sa_cl {
	struct sa_cl *next;
	struct sa_host *h;
	imc_time_t timeout;
	unsigned retries;
	struct imc_sa_client *client;
};

struct sa_host {
	struct sa_run *r;
	uint32_t idx;               /* its slot in r->hosts */
	uint32_t node;
	unsigned port;
	struct imc_gsi *gsi;        /* the port's (the run's), our agent on it */
	struct imc_gsi_agent agent; /* takes the answers to these requests */
	struct sa_cl *cl;           /* its SA clients */
	uint64_t requests, answers;
};

struct sa_ent {
	struct imc_hnode node;      /* r->ents, by host and MGID */
	uint32_t host;
	struct imc_gid mgid;
	uint32_t status;            /* last answer to host as sender */
	uint8_t join_state;         /* as member, from the last answer */
	uint16_t mlid;              /* of the attachment */
	struct imc_qp *qp;          /* attached scenario QP, or NULL */
};

/* A request in flight: its client's query calls back with it. */
struct req {
	struct imc_list link;       /* r->reqs */
	struct sa_run *r;
	const struct req_arg *a;
	uint32_t sender, member;    /* host slots */
	struct imc_gid mgid;        /* as sent */
	uint32_t flow;              /* scenario flow number of the line */
};

struct label_slot {
	struct imc_gid mgid;
};

struct sa_run {
	struct imc_scn_ctx *c;
	struct sa_cfg *cfg;
	struct imc_fabric *f;
	struct imc_loop *loop;
	const struct imc_topo *t;
	struct imc_sa_fabric *sf;
	/* The fabric's SM is external (an `opensm` line): the SA is the
	 * external SM's, reached at each sender port's PortInfo:MasterSMLID
	 * (IBA 14.2.5.6), and there is no engine here to start or read. */
	bool external;
	int start_err;
	struct imc_timer start;
	uint32_t sa_node;
	unsigned sa_port;

	struct scn_ports hosts;     /* struct sa_host, made on first use */

	struct imc_htab ents;       /* struct sa_ent */

	struct imc_list reqs;       /* struct req, not yet answered */
	struct imc_list sends;      /* group sends asking an external SA */
	unsigned nclients;          /* SA clients made, for their seeds */


	uint64_t requests, answers, timeouts;
	uint64_t errors;            /* sends refused, attaches failed */
	uint32_t queue_max;         /* most queued, of the SAs stopped */
};

/* ------------------------------------------------------------------ */
/* The setting verb "sa" (sa_verbs.c): its data is the run's struct sa_cfg. */
extern const struct imc_scn_verb scn_sa_verb;

/* The run's SA state, created by the sa setting; -ENOENT (run failed)
 * without one. scn_sa_engine_get() also wants the SA started. */
int scn_sa_run_get(struct imc_scn_ctx *c, struct sa_run **out);
int scn_sa_engine_get(struct imc_scn_ctx *c, struct sa_run **out);

/* The port GSI service (scn.h): the run's GSI of node:port
 * (scn_port_gsi()) with the SA started first, so that on the SA's port
 * the QP1 is the SA's own (lent, scn_port_qp1_lend()); when the SA moves
 * (sa-restart after sm move) the GSI stays and its QP changes. Fails the
 * run (imc_scn_fail()) when the scenario has no sa line (with optional:
 * -ENOENT, the run going on) or the SA cannot start. */
int scn_sa_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
	       bool optional, struct imc_gsi **out);
/* The SA engine service: the engine running now, or NULL (no sa line,
 * it did not start, or the SA is an external SM's). */
const struct imc_sa *scn_sa_engine(struct imc_scn_ctx *c);
/* A cable went down or up: the SA running now, if any, sweeps
 * (imc_sa_fabric_links_changed()), so its multicast trees follow cables
 * between switches too. */
void scn_sa_links_changed(struct imc_scn_ctx *c);

/* The run of the sa setting: creates struct sa_run, starts the SA at 0. */
int scn_sa_run(struct imc_scn_ctx *c, void *data);

/* Start the SA on the SM's port; stop it (keep: its QP1 stays, for a
 * restart). */
int scn_sa_start(struct sa_run *r);
int scn_sa_stop(struct sa_run *r, bool keep);

/* The client host node:port, or NULL before its first request. */
struct sa_host *scn_sa_host_find(struct sa_run *r, uint32_t node,
				 unsigned port);
/* The entry of (host, MGID), or NULL. */
struct sa_ent *scn_sa_ent_find(struct sa_run *r, uint32_t host,
			       const struct imc_gid *mgid);
/* The MGID of m (literal or the group a label named); false when the
 * labelled join has had no answer yet. */
bool scn_sa_mgid_resolve(struct sa_run *r, const struct scn_mgid *m,
			 struct imc_gid *out);
/* The SA's groups in MGID order, each with its members in PortGID
 * order (no port names); free with scn_sa_snap_fini(). */
int scn_sa_groups_collect(const struct imc_sa *sa, struct snap *s);
void scn_sa_snap_fini(void *snap);
/* A snapshot of the SA's groups for sa-show at scenario line line. */
int scn_sa_snapshot(struct sa_run *r, unsigned line);
/* Send the request of an sa-join/sa-leave/sa-get line. */
int scn_sa_req_start(struct imc_scn_ctx *c, const struct req_arg *a);
/* A group send with an external SM's SA (r->external): node:port asks
 * the SA for the group's record (GetTable of MCMemberRecord by MGID,
 * IBA 15.2.5.17) and the flow starts with the answer; no group, an error
 * status or no answer fails the line of flow (scn_fail_line()). 0 when
 * the query is sent, else the run fails now. */
int scn_sa_ext_send(struct sa_run *r, uint32_t node, unsigned port,
		    const struct imc_gid *mgid, uint32_t count, uint32_t size,
		    imc_time_t interval, uint8_t sl, uint32_t flow);
/* A multicast flow to group g (count datagrams, interval apart). */
int scn_sa_flow_start(struct sa_run *r, uint32_t node, unsigned port,
		      const struct imc_mcmr *g, uint32_t count, uint32_t size,
		      imc_time_t interval, uint8_t sl, uint32_t flow);

#endif
