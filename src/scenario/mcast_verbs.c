/* The join tracker in scenarios (ibmcast/scenario_mcast.h).
 *
 *   mcast-tracker [rejoin=paced|immediate] [spread=TIME] [window=N]
 *                 [timeout=TIME] [retries=N]               setting
 *   mcast-join HOST MGID|0|@NAME [state=] [qkey= pkey= tclass= sl= flow=
 *              hop= scope= mtu= rate= life= mlid=] [create] [noqp]
 *              [retry=TIME] [as=NAME]                      imc_mcast_join()
 *   mcast-leave NAME                                       imc_mcast_leave()
 *   mcast-send FROM MGID|@NAME [count= size= interval= sl=] datagrams
 *   mcast-show                                             snapshot
 *
 * Subjects: mcast-state NAME, mcast-status NAME, mcast-callbacks NAME
 * [EVENT], mcast-groups [HOST], mcast-members HOST MGID|@NAME, mcast-held
 * HOST MGID|@NAME, mcast-joined [HOST], mcast-handles [HOST], and the
 * tracker counters mcast-joins, mcast-leaves, mcast-local, mcast-mads,
 * mcast-retries, mcast-timeouts, mcast-rejoins, mcast-errors, mcast-traps,
 * mcast-lost, mcast-unjoined [HOST], mcast-max-in-flight [HOST], and the
 * comparison of the SA's memberships with the trackers: mcast-consistent,
 * mcast-orphans.
 *
 * One run's state (struct mc_run, found by run_key) is made by the first
 * mcast-* line that runs, or by another verb that needs a tracker:
 *  - a tracker per host port used (struct mc_port, by slot), made on
 *    first use through mcast_fabric.h on the port's GSI (the port GSI
 *    service, scn.h): the scenario's sa line is needed. It is the
 *    port's one tracker: IPoIB interfaces join through it too (the port
 *    tracker service);
 *  - a member per mcast-join line that ran (struct mc_member), found by
 *    the line's parse data (imc_scn_data), in join order on a list: its
 *    handle, what its callbacks said, its group's MGID once joined.
 * A member's QP is the host's scenario QP for the join's P_Key and Q_Key
 * (imc_scn_qp()), so datagrams to the group count as delivered to it.
 *
 * The recorder of --mcast-show hangs on the file's first mcast-join line
 * (every mcast-join, mcast-leave and mcast-show line points to it), and
 * the run takes it from there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/json.h"
#include "ibmcast/mcast.h"
#include "ibmcast/mcast_fabric.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa.h"
#include "ibmcast/scenario_mcast.h"
#include "scenario/desc.h"
#include "scenario/scn.h"
#include "util/text.h"
#include "util/vec.h"
#include "scenario/mcast_run.h"

/* imc_scn_data key of the mcast-tracker setting */
const char scn_mcast_cfg_key;

/* ------------------------------------------------------------------ */
/* Small helpers */

/* The namespace of mcast-join's as= names in the scenario's name index;
 * the empty name (never an as= name) keys the file's first mcast-join. */
static const char label_space;

/* The file's first mcast-join line, or NULL. */
struct mc_join *scn_mcast_head_lookup(const struct imc_scenario *s)
{
	return (struct mc_join *)scn_name_find(s, &label_space, "");
}

/* The as=NAME of an earlier mcast-join, @ optional, into the
 * const struct mc_join * at the argument's offset. */
static int name_word_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
			   const char *w, void *base)
{
	const struct mc_join **out = scn_arg_at(base, arg);

	*out = scn_label_find(p, &label_space, "mcast-join", w + (w[0] == '@'));
	return *out ? 0 : -EINVAL;
}

static void name_word_print(FILE *f, const struct imc_topo *t,
			    const struct scn_arg *arg, const void *base)
{
	const struct mc_join *const *label = scn_arg_cat(base, arg);

	fprintf(f, " %s", (*label)->name);
}

/* ------------------------------------------------------------------ */
/* mcast-tracker */

static const char *const rejoin_names[] = { "paced", "immediate", NULL };

/* Into the tracker's configuration (C_TIMEOUT: timeout= is the fourth);
 * the names by enum imc_mcast_rejoin. */
static const struct scn_opt cfg_opts[] = {
	SCN_O_ENUM("rejoin", struct mc_cfg, fc.mcast.rejoin, rejoin_names),
	SCN_O_TIME("spread", struct mc_cfg, fc.mcast.rejoin_spread),
	SCN_O_UINT_H("window", struct mc_cfg, fc.mcast.rejoin_window, 1,
		     WINDOW_MAX, "at least 1"),
	SCN_O_TIME_H("timeout", struct mc_cfg, fc.client.timeout, 1,
		     "longer than 0"),
	SCN_O_UINT("retries", struct mc_cfg, fc.client.retries, 0,
		   RETRIES_MAX),
};
static const struct scn_optset cfg_set = SCN_OPTSET(cfg_opts);

static void cfg_init(void *data)
{
	imc_mcast_fabric_config_init(&((struct mc_cfg *)data)->fc);
}

static const struct scn_desc cfg_desc = {
	.once = "the trackers are set already", .opts = &cfg_set,
	.keep = SCN_KEEP_GIVEN, .given_off = offsetof(struct mc_cfg, mask),
	.size = sizeof(struct mc_cfg), .init = cfg_init,
};

/* Settings run before every action: the trackers, made later, read it
 * from the run. */
static int cfg_run(struct imc_scn_ctx *c, void *data)
{
	return imc_scn_data_set(c, &scn_mcast_cfg_key, data, NULL);
}

SCN_DESC_VERB(cfg, "mcast-tracker", IMC_SCN_SETTING, cfg_desc, cfg_run);

/* ------------------------------------------------------------------ */
/* mcast-join */

/* What the line's options hold; the recorder keeps no pointer to it. */
static void join_rest_free(const struct scn_arg *arg, void *base)
{
	struct mc_join *a = base;

	(void)arg;
	if (a->show)
		a->show->head = NULL;
	free(a->name);
}

/* as=NAME: the name index keys the line by it. */
static int as_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			const char *v, void *field)
{
	struct mc_join *a = imc_container_of(field, struct mc_join, name);
	int rc = scn_as_opt_parse(p, o, v, field);

	if (rc)
		return rc;
	rc = scn_name_add(p->s, &label_space, v, a);
	if (rc == -EEXIST)
		return imc_scn_parse_error(p,
			"as=%s: an earlier mcast-join has that name", v);
	return rc;
}

/* In the order they print. state= names at least one JoinState bit: a
 * join of none is no join (IBA 15.2.5.17). */
static const struct scn_opt join_opts[] = {
	SCN_O_JOIN_STATE(struct mc_join, state, 1),
	SCN_O_MCMR_COMPS(struct mc_join, rec),
	SCN_O_FLAG("create", struct mc_join, create),
	SCN_O_FLAG("noqp", struct mc_join, noqp),
	SCN_O_TIME_H("retry", struct mc_join, retry, 1,
		     "expected a time above 0"),
	{ .key = "as", .type = SCN_OPT_CUSTOM,
	  .offset = offsetof(struct mc_join, name),
	  .parse = as_opt_parse, .print = scn_as_opt_print },
};
static const struct scn_optset join_set = SCN_OPTSET(join_opts);

static const char join_usage[] =
	"expected 'mcast-join HOST MGID|0|@NAME [state=...] [qkey= pkey= tclass= sl= flow= hop= scope= mtu= rate= life= mlid=] [create] [noqp] [retry=TIME] [as=NAME]'";

static const struct scn_arg join_args[] = {
	SCN_A_HOST(struct mc_join, host),
	SCN_A_MGID(struct mc_join, mgid, &label_space, "mcast-join",
		   SCN_MGID_MCAST | SCN_MGID_ZERO),
	SCN_A_UNKNOWN(join_usage, join_rest_free),
};

/* The file's first mcast-join keys the show recorder (head). */
static int join_done(struct imc_scn_parser *p, void *data)
{
	struct mc_join *a = data;

	a->state_set = a->given & 1;
	a->mask = scn_mcmr_comp_mask(&join_set, a->given);
	a->head = scn_mcast_head_lookup(p->s);
	if (a->head)
		return 0;
	a->head = a;
	return scn_name_add(p->s, &label_space, "", a);
}

static const struct scn_desc join_desc = {
	.usage = join_usage, .min = 2, SCN_ARGS(join_args), .opts = &join_set,
	.keep = SCN_KEEP_GIVEN, .given_off = offsetof(struct mc_join, given),
	.given_size = sizeof(uint32_t), .size = sizeof(struct mc_join),
	.done = join_done,
};

SCN_DESC_VERB(join, "mcast-join", IMC_SCN_ACTION, join_desc,
	      scn_mcast_join_run);

/* ------------------------------------------------------------------ */
/* mcast-leave NAME */

static const struct scn_arg leave_args[] = {
	SCN_A_CUSTOM(struct mc_leave, label, "NAME", name_word_parse,
		     name_word_print, 0),
};
static const struct scn_desc leave_desc = {
	.usage = "expected 'mcast-leave NAME' (an mcast-join's as=NAME)",
	.min = 1, SCN_ARGS(leave_args), .size = sizeof(struct mc_leave),
};

static int leave_run(struct imc_scn_ctx *c, void *data)
{
	const struct mc_leave *a = data;
	struct mc_member *x = scn_mcast_member_of(c, a->label);

	if (!x)
		return imc_scn_fail(c, -ENOENT,
				    "%s has not joined: its mcast-join has not run",
				    a->label->name);
	if (!x->m)
		return imc_scn_fail(c, -EALREADY, "%s has left already",
				    a->label->name);
	imc_timer_cancel(imc_scn_loop(c), &x->retry);
	imc_mcast_leave(x->m);
	x->m = NULL;
	return 0;
}

SCN_DESC_VERB(leave, "mcast-leave", IMC_SCN_ACTION, leave_desc, leave_run);


/* ------------------------------------------------------------------ */
/* mcast-show */

static int show_done(struct imc_scn_parser *p, void *data)
{
	struct mc_show_arg *a = data;

	a->line = p->line;
	a->head = scn_mcast_head_lookup(p->s);
	if (!a->head)
		return imc_scn_parse_error(p,
			"no mcast-join line before: nothing to show");
	return 0;
}

static const struct scn_desc show_desc = {
	.usage = "expected 'mcast-show' alone",
	.size = sizeof(struct mc_show_arg), .done = show_done,
};

static int show_run(struct imc_scn_ctx *c, void *data)
{
	const struct mc_show_arg *a = data;
	struct mc_run *r;
	int rc = scn_mcast_run_get(c, true, &r);

	if (!rc && r->show)
		scn_mcast_show_snapshot(r, a->line);
	return rc;
}

SCN_DESC_VERB(show, "mcast-show", IMC_SCN_ACTION, show_desc, show_run);

/* ------------------------------------------------------------------ */
/* Subjects */

/* What a counter subject reads: a field of the tracker's stats, or a
 * count over the members, or the SA client's in-flight maximum. */
enum counter_how { FROM_STATS, K_JOINED, K_HANDLES, K_UNJOINED,
		   K_MAX_IN_FLIGHT };

struct counter {
	enum counter_how how;
	size_t off, size;          /* FROM_STATS: in struct imc_mcast_stats */
};

struct subj_arg {
	const struct mc_join *label;  /* NAME subjects */
	int event;                    /* mcast-callbacks: -1 all */
	struct scn_port_arg host;     /* node IMC_TOPO_NONE: none given */
	struct scn_mgid mgid;
	const struct counter *k;
};

static const char *const event_words[] = {
	[IMC_MCAST_EV_JOINED] = "joined",
	[IMC_MCAST_EV_ERROR] = "error",
	[IMC_MCAST_EV_REJOINING] = "rejoining",
	[IMC_MCAST_EV_WAITING] = "waiting",
};

static int event_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
		       const char *w, void *base)
{
	struct subj_arg *a = base;

	for (unsigned i = 0; i < IMC_ARRAY_SIZE(event_words); i++)
		if (!strcmp(w, event_words[i]))
			a->event = (int)i;
	if (a->event < 0)
		return imc_scn_parse_error(p,
			"expected joined, error, rejoining or waiting, got '%s'",
			w);
	return 0;
}

static void event_print(FILE *f, const struct imc_topo *t,
			const struct scn_arg *arg, const void *base)
{
	const struct subj_arg *a = base;

	if (a->event >= 0)
		fprintf(f, " %s", event_words[a->event]);
}

static const struct subj_arg no_host = { .event = -1,
					 .host.node = IMC_TOPO_NONE };

static const struct scn_arg name_args[] = {
	SCN_A_CUSTOM(struct subj_arg, label, "NAME", name_word_parse,
		     name_word_print, 0),
	SCN_A_CUSTOM(struct subj_arg, event, "an event", event_parse,
		     event_print, SCN_ARG_OPTIONAL),
};
static const struct scn_arg host_args[] = {
	{ .kind = SCN_ARG_HOST, .flags = SCN_ARG_OPTIONAL,
	  .offset = offsetof(struct subj_arg, host) },
};
static const struct scn_arg host_mgid_args[] = {
	SCN_A_HOST(struct subj_arg, host),
	SCN_A_MGID(struct subj_arg, mgid, &label_space, "mcast-join",
		   SCN_MGID_MCAST),
};

#define SUBJ_DESC(tab, n, u, lo, hi) \
	.usage = (u), .min = (lo), .max = (hi), .arg = (tab), .narg = (n), \
	.keep = SCN_KEEP_ARG, .arg_off = offsetof(struct subj_arg, k), \
	.size = sizeof(struct subj_arg), .defaults = &no_host

static const struct scn_desc name_desc = {
	SUBJ_DESC(name_args, 1, "expected NAME (an mcast-join's as=NAME)", 1, 1),
};
static const struct scn_desc callbacks_desc = {
	SUBJ_DESC(name_args, 2, "expected NAME [joined|error|rejoining|waiting]",
		  1, 2),
};
/* A counter's: [HOST], its struct counter kept (.arg) */
static const struct scn_desc host_desc = {
	SUBJ_DESC(host_args, 1, "expected at most one host", 0, 1),
};
static const struct scn_desc host_mgid_desc = {
	SUBJ_DESC(host_mgid_args, 2, "expected HOST and MGID|@NAME", 2, 2),
};
SCN_DESC_FUNCS(name, name_desc)
SCN_DESC_FUNCS(callbacks, callbacks_desc)
SCN_DESC_FUNCS(host, host_desc)
SCN_DESC_FUNCS(host_mgid, host_mgid_desc)

/* ---- mcast-state NAME ---- */

static const struct scn_named state_names[] = {
	{ "none", ST_NONE },
	{ "pending", IMC_MCAST_PENDING + 1 },
	{ "joined", IMC_MCAST_JOINED + 1 },
	{ "rejoining", IMC_MCAST_REJOINING + 1 },
	{ "waiting", IMC_MCAST_WAITING + 1 },
	{ "failed", IMC_MCAST_FAILED + 1 },
	{ "left", ST_LEFT },
};

SCN_NAMED_FUNCS(state, state_names, false)

static int state_observe(struct imc_scn_ctx *c, const void *data,
			 uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct mc_member *x = scn_mcast_member_of(c, a->label);

	if (!x)
		*v = ST_NONE;
	else if (!x->m)
		*v = ST_LEFT;
	else
		*v = (uint64_t)imc_mcast_member_state(x->m) + 1;
	return 0;
}

/* ---- mcast-status NAME ---- */

/* A status of a negative errno, ERRNO_BASE + errno, by name. */
static const struct scn_named errno_names[] = {
	{ "timeout", ERRNO_BASE + ETIMEDOUT },
	{ "canceled", ERRNO_BASE + ECANCELED },
	{ "reset", ERRNO_BASE + ENETRESET },
	{ "mismatch", ERRNO_BASE + EINVAL },
};

static int status_value_parse(const char *word, uint64_t *v)
{
	if (!scn_named_parse(errno_names, IMC_ARRAY_SIZE(errno_names), word,
			     v))
		return 0;
	return scn_mad_status_parse(word, v);
}

static void status_value_format(uint64_t v, char *buf, size_t len)
{
	const char *name = v >= ERRNO_BASE ?
		scn_named_str(errno_names, IMC_ARRAY_SIZE(errno_names), v) :
		scn_mad_status_name(v);

	if (name)
		snprintf(buf, len, "%s", name);
	else if (v >= ERRNO_BASE)
		snprintf(buf, len, "errno %" PRIu64, v - ERRNO_BASE);
	else
		snprintf(buf, len, "0x%04" PRIx64, v);
}

static int status_observe(struct imc_scn_ctx *c, const void *data,
			  uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct mc_member *x = scn_mcast_member_of(c, a->label);

	*v = 0;
	if (x && x->status < 0)
		*v = ERRNO_BASE + (uint64_t)-x->status;
	else if (x)
		*v = (uint64_t)x->status;
	return 0;
}

/* ---- mcast-callbacks NAME [EVENT] ---- */

static int callbacks_observe(struct imc_scn_ctx *c, const void *data,
			     uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct mc_member *x = scn_mcast_member_of(c, a->label);

	*v = !x ? 0 : a->event < 0 ? x->callbacks : x->by_event[a->event];
	return 0;
}

/* ---- per host ---- */

static uint64_t counter_of(const struct mc_run *r, const struct mc_port *p,
			   const struct counter *k)
{
	struct imc_mcast_stats st;
	struct imc_sa_client_stats cs;
	uint64_t n = 0;

	if (k->how == K_JOINED || k->how == K_HANDLES) {
		for (const struct mc_member *x = r->members; x; x = x->next)
			if (x->m && (!p || x->p == p) &&
			    (k->how == K_HANDLES ||
			     imc_mcast_member_state(x->m) == IMC_MCAST_JOINED))
				n++;
		return n;
	}
	if (k->how == K_MAX_IN_FLIGHT) {
		imc_sa_client_get_stats(imc_mcast_fabric_client(p->mf), &cs);
		return cs.max_in_flight;
	}
	imc_mcast_get_stats(imc_mcast_fabric_tracker(p->mf), &st);
	if (k->how == K_UNJOINED)
		return st.members - st.joined;
	return scn_field_at(&st, k->off, k->size);
}

static int counter_observe(struct imc_scn_ctx *c, const void *data,
			   uint64_t *v)
{
	const struct subj_arg *a = data;
	struct mc_run *r;
	size_t nslots;

	*v = 0;
	scn_mcast_run_get(c, false, &r);
	if (!r)
		return 0;
	if (a->host.node != IMC_TOPO_NONE) {
		const struct mc_port *p = scn_mcast_port_find(r, a->host.node,
						    a->host.port);

		if (p)
			*v = counter_of(r, p, a->k);
		return 0;
	}
	if (a->k->how == K_JOINED || a->k->how == K_HANDLES) {
		*v = counter_of(r, NULL, a->k);
		return 0;
	}
	nslots = r->ports.n;
	for (size_t i = 0; i < nslots; i++) {
		uint64_t x;

		if (!r->ports.slot[i])
			continue;
		x = counter_of(r, r->ports.slot[i], a->k);
		if (a->k->how != K_MAX_IN_FLIGHT)
			*v += x;
		else if (x > *v)
			*v = x;
	}
	return 0;
}

/* ---- mcast-consistent, mcast-orphans ---- */


/* The SA's memberships against the trackers' groups (IBA 15.2.5.17: the
 * SA keeps one JoinState per port and group). */
struct cons {
	struct mc_run *r;
	struct snap_port *pg;       /* by slot: the tracker's groups, in MGID
				     * order (imc_mcast_foreach_group) */
	const struct imc_sa *sa;
	struct imc_gid mgid;        /* the SA group being walked */
	bool assigned;              /* ... has an MGID the SA assigned */
	uint64_t bad, orphans;
	uint64_t owed;              /* owed() groups the SA has not shown */
};

/* A tracker's group the SA should have the port's membership of: one it
 * wants or holds (but a group its members wait for, holding nothing).
 * The SA has one membership per port and group, so each is met at most
 * once. */
static bool owed(const struct imc_mcast_group_info *g)
{
	return (g->wanted || g->join_state) && !(g->waiting && !g->join_state);
}

static int mgid_cmp(const void *mgid, const void *g)
{
	return memcmp(mgid, ((const struct imc_mcast_group_info *)g)->rec.mgid.raw,
		      16);
}

/* The index of mgid's group in sp, or < 0. */
static long pg_find(const struct snap_port *sp, const struct imc_gid *mgid)
{
	return imc_vec_bsearch(sp->g, sp->ng, sizeof(*sp->g), mgid->raw,
			       mgid_cmp);
}

/* An MGID the SA assigned to a create (o15-0.1.5: signature 0xA01B). */
static bool sa_assigned(const struct imc_gid *mgid)
{
	return mgid->raw[2] == 0xa0 && mgid->raw[3] == 0x1b;
}

static int cons_member(void *arg, const struct imc_sa_member_info *m)
{
	struct cons *k = arg;
	const struct mc_run *r = k->r;
	uint32_t node;
	unsigned port;
	long gi = -1;
	size_t slot = 0;

	if (r && !imc_fabric_port_by_gid(r->f, &m->port_gid, &node, &port)) {
		slot = scn_ports_idx(&r->ports, node, port);
		if (r->ports.slot[slot])
			gi = pg_find(&k->pg[slot], &k->mgid);
	}
	if (gi < 0) {
		/* A membership the port's tracker does not hold. In a group
		 * the SA assigned the MGID of, a port that does not know the
		 * MGID can only be there by a create whose answer it never
		 * had (lost, or a second copy taken): an orphan. The MGID
		 * may be known to others: an SA that restarted gives the
		 * same MGIDs again. */
		if (k->assigned && m->join_state == IMC_JOIN_FULL)
			k->orphans++;
		else
			k->bad++;
		return 0;
	}
	{
		const struct imc_mcast_group_info *g = &k->pg[slot].g[gi];

		k->owed -= owed(g);
		if (m->join_state != g->wanted || g->join_state != g->wanted ||
		    !g->joined)
			k->bad++;
	}
	return 0;
}

static int cons_group(void *arg, const struct imc_sa_group_info *g)
{
	struct cons *k = arg;

	k->mgid = g->rec.mgid;
	k->assigned = sa_assigned(&g->rec.mgid);
	return imc_sa_foreach_member(k->sa, &g->rec.mgid, cons_member, k);
}

static int cons_run(struct imc_scn_ctx *c, struct cons *k)
{
	size_t nslots;
	int rc = 0;

	memset(k, 0, sizeof(*k));
	scn_mcast_run_get(c, false, &k->r);
	k->sa = scn_svc_sa_engine(c);
	if (!k->r)   /* no tracker: every membership is a discrepancy */
		return k->sa ? imc_sa_foreach_group(k->sa, cons_group, k) : 0;
	nslots = k->r->ports.n;
	k->pg = calloc(nslots ? nslots : 1, sizeof(*k->pg));
	if (!k->pg)
		return -ENOMEM;
	for (size_t i = 0; i < nslots && !rc; i++) {
		const struct mc_port *p = k->r->ports.slot[i];

		if (!p)
			continue;
		rc = imc_mcast_foreach_group(imc_mcast_fabric_tracker(p->mf),
					     scn_mcast_group_cb, &k->pg[i]);
		for (size_t j = 0; j < k->pg[i].ng; j++)
			k->owed += owed(&k->pg[i].g[j]);
	}
	if (!rc && k->sa)
		rc = imc_sa_foreach_group(k->sa, cons_group, k);
	/* What a tracker wants or holds and the SA does not have. */
	k->bad += k->owed;
	return rc;
}

static void cons_fini(struct cons *k)
{
	size_t nslots = k->r ? k->r->ports.n : 0;

	for (size_t i = 0; i < nslots && k->pg; i++)
		free(k->pg[i].g);
	free(k->pg);
}

/* mcast-consistent's count (bad) or mcast-orphans' from one comparison
 * of the trackers and the SA (cons_run). */
static int cons_observe(struct imc_scn_ctx *c, bool orphans, uint64_t *v)
{
	struct cons k;
	int rc = cons_run(c, &k);

	*v = rc ? 0 : orphans ? k.orphans : k.bad;
	cons_fini(&k);
	return rc;
}

static int consistent_observe(struct imc_scn_ctx *c, const void *data,
			      uint64_t *v)
{
	(void)data;
	return cons_observe(c, false, v);
}

static int orphans_observe(struct imc_scn_ctx *c, const void *data,
			   uint64_t *v)
{
	(void)data;
	return cons_observe(c, true, v);
}

/* ---- mcast-members HOST MGID, mcast-held HOST MGID ---- */

struct find_group {
	struct imc_gid mgid;
	bool found;
	struct imc_mcast_group_info g;
};

static void find_group_cb(void *arg, const struct imc_mcast_group_info *g)
{
	struct find_group *fg = arg;

	if (imc_gid_equal(&g->rec.mgid, &fg->mgid)) {
		fg->found = true;
		fg->g = *g;
	}
}

static int group_of(struct imc_scn_ctx *c, const struct subj_arg *a,
		    struct find_group *fg)
{
	const struct mc_port *p;
	struct mc_run *r;

	memset(fg, 0, sizeof(*fg));
	scn_mcast_run_get(c, false, &r);
	p = scn_mcast_port_find(r, a->host.node, a->host.port);
	if (!p || scn_mcast_mgid_resolve(c, &a->mgid, &fg->mgid))
		return 0;
	return imc_mcast_foreach_group(imc_mcast_fabric_tracker(p->mf),
				       find_group_cb, fg);
}

static int members_observe(struct imc_scn_ctx *c, const void *data,
			   uint64_t *v)
{
	struct find_group fg;
	int rc = group_of(c, data, &fg);

	*v = fg.found ? fg.g.members : 0;
	return rc;
}

static int held_observe(struct imc_scn_ctx *c, const void *data,
			uint64_t *v)
{
	struct find_group fg;
	int rc = group_of(c, data, &fg);

	*v = fg.found ? fg.g.join_state : 0;
	return rc;
}

static void hex_format(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%" PRIx64, v);
}

#define COUNTER(how, off, size) \
	.parse = host_parse, .print = host_print, \
	.observe = counter_observe, .free = host_free, \
	.arg = &(const struct counter){ how, off, size }
#define STAT(f) COUNTER(FROM_STATS, offsetof(struct imc_mcast_stats, f), \
			sizeof(((struct imc_mcast_stats *)0)->f))
#define COUNT(how) COUNTER(how, 0, 0)

static const struct imc_scn_subject subjects[] = {
	SCN_NAMED_SUBJECT("mcast-state", name, state_observe, state),
	SCN_NAMED_SUBJECT("mcast-status", name, status_observe, status),
	SCN_DESC_SUBJECT("mcast-callbacks", callbacks, callbacks_observe),
	SCN_DESC_SUBJECT("mcast-members", host_mgid, members_observe),
	{ .name = "mcast-held", .parse = host_mgid_parse,
	  .print = host_mgid_print, .observe = held_observe,
	  .value_format = hex_format, .free = host_mgid_free },
	SCN_DESC_SUBJECT("mcast-consistent", scn_bare, consistent_observe),
	SCN_DESC_SUBJECT("mcast-orphans", scn_bare, orphans_observe),
	{ .name = "mcast-groups", STAT(groups) },
	{ .name = "mcast-joined", COUNT(K_JOINED) },
	{ .name = "mcast-handles", COUNT(K_HANDLES) },
	{ .name = "mcast-joins", STAT(joins) },
	{ .name = "mcast-leaves", STAT(leaves) },
	{ .name = "mcast-local", STAT(joins_local) },
	{ .name = "mcast-mads", STAT(mads_sent) },
	{ .name = "mcast-retries", STAT(retries) },
	{ .name = "mcast-timeouts", STAT(timeouts) },
	{ .name = "mcast-rejoins", STAT(rejoins) },
	{ .name = "mcast-errors", STAT(errors) },
	{ .name = "mcast-traps", STAT(traps) },
	{ .name = "mcast-lost", STAT(groups_lost) },
	{ .name = "mcast-unjoined", COUNT(K_UNJOINED) },
	{ .name = "mcast-max-in-flight", COUNT(K_MAX_IN_FLIGHT) },
};

static const struct scn_parts mcast_parts = {
	SCN_LIST(verbs, const struct imc_scn_verb *, &cfg_verb, &join_verb,
		 &leave_verb, &scn_verb_mcast_send, &show_verb),
	SCN_PARTS(subjects, subjects),
	SCN_LIST(sections, const struct imc_scn_section *,
		 &(const struct imc_scn_section){ .name = "mcast", .rank = 150,
			.report = scn_mcast_report }),
	SCN_LIST(services, struct scn_svc_entry,
		 { SCN_SVC_NAME_MCAST, &(const struct scn_svc_ops){
			.space = &label_space, .what = "mcast-join",
			.mgid_flags = SCN_MGID_MCAST,
			.resolve = scn_mcast_mgid_resolve_or_fail } },
		 { SCN_SVC_PORT_TRACKER, &scn_mcast_trackers }),
	.plugin = &scn_mcast_plugin,
};

int imc_scn_lang_add_mcast(struct imc_scn_lang *l)
{
	return scn_lang_add_parts(l, &mcast_parts);
}
