/* The state the join tracker's verbs share between their language half
 * (mcast_verbs.c: settings, verbs, subjects) and their run half
 * (mcast_run.c: trackers, members, the recorder, the report). Private to
 * the library. */
#ifndef IMC_SCENARIO_MCAST_RUN_H
#define IMC_SCENARIO_MCAST_RUN_H

#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/sa.h"
#include "ibmcast/scenario_mcast.h"
#include "scenario/runner.h"
#include "scenario/scn.h"
#include "scenario/snaps.h"

#define CM(x) ((uint64_t)UMAD_SA_MCM_COMP_MASK_##x)
#define RECV_BITS (IMC_JOIN_FULL | IMC_JOIN_NON)
#define RETRIES_MAX 1000
#define WINDOW_MAX 4096

/* mcast-state values: 0 before the line ran, then the member's state,
 * then "left". */
enum {
	ST_NONE = 0,
	ST_LEFT = IMC_MCAST_FAILED + 2,
};

/* mcast-status: an SA status as is, a negative errno as ERRNO_BASE +
 * errno. */
#define ERRNO_BASE 0x100000u

/* ------------------------------------------------------------------ */
/* Parse data */

/* The bit of timeout= in struct mc_cfg mask (its index in the options). */
#define C_TIMEOUT (1u << 3)

/* The trackers' configuration: the defaults, and the options given. */
struct mc_cfg {
	uint64_t mask;
	struct imc_mcast_fabric_config fc;
};

struct mc_join {
	struct scn_port_arg host;
	struct scn_mgid mgid;
	bool state_set;
	uint8_t state;
	uint64_t mask;              /* components the options give */
	struct imc_mcmr rec;
	bool create;
	bool noqp;
	imc_time_t retry;           /* retry=: join again this long after a
				     * failure; 0: never */
	char *name;                 /* as=NAME */
	uint32_t given;             /* options given, by index in its table */
	struct mc_join *head;       /* the file's first mcast-join line */
	struct imc_scn_mcast_show *show;   /* on head: the recorder */
};

struct mc_leave {
	const struct mc_join *label;
};

struct mc_show_arg {
	unsigned line;
	struct mc_join *head;
};

/* ------------------------------------------------------------------ */
/* Snapshots for --mcast-show */

struct snap_port {
	char *name;                 /* "H-000002:1" */
	struct imc_port_attr pa;
	struct imc_mcast_stats st;
	struct imc_mcast_group_info *g;
	size_t ng, cap;
};

struct snap {
	imc_time_t at;
	unsigned line;              /* the mcast-show line; 0: end of run */
	struct snap_port *p;
	size_t np;
};

struct imc_scn_mcast_show {
	struct mc_join *head;       /* NULL once the scenario is gone */
	struct scn_snaps snaps;     /* struct snap */
};

/* ------------------------------------------------------------------ */
/* Run state */

struct mc_run;

struct mc_port {
	struct mc_run *r;
	uint32_t node;
	unsigned port;
	struct imc_mcast_fabric *mf;
	bool has_members;           /* an mcast-join line joined here */
};

struct mc_member {
	struct mc_run *r;
	const struct mc_join *line;
	struct mc_port *p;
	struct imc_mcast_member *m; /* NULL once left */
	struct mc_member *next;     /* r->members, join order */
	bool has_mgid;
	struct imc_gid mgid;        /* asked for, or of its JOINED */
	int status;                 /* of its last ERROR */
	unsigned callbacks;
	unsigned by_event[4];       /* by enum imc_mcast_event_type */
	struct imc_mcast_join_req req; /* as first asked, for retry= */
	struct imc_timer retry;
};

struct mc_run {
	struct imc_scn_ctx *c;
	struct imc_fabric *f;
	const struct imc_topo *t;
	struct imc_scn_mcast_show *show;
	struct imc_mcast_fabric_set *set;  /* the ports' trackers */
	struct scn_ports ports;     /* struct mc_port, made on first use */
	struct mc_member *members, **tail;
	bool ended;                 /* the end-of-run snapshot is taken */
};

/* imc_scn_data key of the mcast-tracker setting's struct mc_cfg. */
extern const char scn_mcast_cfg_key;

/* The file's first mcast-join line, or NULL. */
struct mc_join *scn_mcast_head_lookup(const struct imc_scenario *s);

/* The run's state, made on first use when make is set (else *out may be
 * NULL). */
int scn_mcast_run_get(struct imc_scn_ctx *c, bool make, struct mc_run **out);
/* The tracker port of node:port, or NULL when none was made. */
struct mc_port *scn_mcast_port_find(const struct mc_run *r, uint32_t node,
				    unsigned port);
/* The member of an mcast-join line, or NULL before the line ran. */
struct mc_member *scn_mcast_member_of(struct imc_scn_ctx *c,
				      const struct mc_join *line);
/* The MGID m names now: a GID, or the group of a member that joined;
 * the _or_fail form fails the run when there is none. */
int scn_mcast_mgid_resolve(struct imc_scn_ctx *c, const struct scn_mgid *m,
			   struct imc_gid *out);
int scn_mcast_mgid_resolve_or_fail(struct imc_scn_ctx *c,
				   const struct scn_mgid *m, struct imc_gid *out);

/* The port tracker service (scn.h) and the plugin whose teardown takes
 * the trackers' end-of-run snapshot. */
extern const struct scn_svc_ops scn_mcast_trackers;
extern const struct imc_scn_plugin scn_mcast_plugin;

/* The run of an mcast-join line. */
int scn_mcast_join_run(struct imc_scn_ctx *c, void *data);

/* imc_mcast_foreach_group() callback: a group into struct snap_port. */
void scn_mcast_group_cb(void *arg, const struct imc_mcast_group_info *g);
/* Records every tracker now for --mcast-show (line: the mcast-show line,
 * 0 at the end). */
void scn_mcast_show_snapshot(struct mc_run *r, unsigned line);

/* The report's mcast section. */
int scn_mcast_report(struct imc_scn_ctx *c, struct imc_scn_report *rep);

#endif
