/* The run half of the join tracker's verbs (mcast_verbs.c): the run's
 * trackers and members, mcast-join's run, the --mcast-show recorder and
 * the report's mcast section. */

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
#include "scenario/scn.h"
#include "util/text.h"
#include "util/vec.h"
#include "scenario/mcast_run.h"

static const char run_key;   /* imc_scn_data key of struct mc_run */

/* ------------------------------------------------------------------ */
/* The run */

static const struct scn_snaps_kind snap_kind;

static void run_free(void *data)
{
	struct mc_run *r = data;

	if (r->show && !r->ended)
		scn_mcast_show_snapshot(r, 0);
	/* Trackers first: no callback after, QPs detached. */
	imc_mcast_fabric_set_destroy(r->set);
	scn_ports_fini(&r->ports, free);
	while (r->members) {
		struct mc_member *m = r->members;

		r->members = m->next;
		imc_timer_cancel(imc_fabric_loop(r->f), &m->retry);
		free(m);
	}
	free(r);
}

/* The run's state, made on first use when make is set (else *out may be
 * NULL). The recorder of --mcast-show is the file's first mcast-join
 * line's. */
int scn_mcast_run_get(struct imc_scn_ctx *c, bool make, struct mc_run **out)
{
	struct mc_run *r = imc_scn_data(c, &run_key);
	const struct imc_topo *t = imc_scn_topo(c);
	const struct mc_join *head;
	int rc;

	*out = r;
	if (r || !make)
		return 0;
	head = scn_mcast_head_lookup(scn_scenario(c));
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->f = imc_scn_fabric(c);
	r->t = t;
	r->tail = &r->members;
	rc = scn_ports_init(&r->ports, t);
	if (!rc && imc_mcast_fabric_set_create(r->f, &r->set))
		rc = -ENOMEM;
	if (!rc)
		rc = imc_scn_data_set(c, &run_key, r, run_free);
	if (rc) {
		imc_mcast_fabric_set_destroy(r->set);
		scn_ports_fini(&r->ports, NULL);
		free(r);
		return rc;
	}
	/* This run's snapshots replace the last run's. */
	r->show = head ? head->show : NULL;
	if (r->show)
		scn_snaps_clear(&r->show->snaps);
	*out = r;
	return 0;
}

struct mc_port *scn_mcast_port_find(const struct mc_run *r, uint32_t node,
				    unsigned port)
{
	return r ? *scn_ports_at(&r->ports, node, port) : NULL;
}

/* The tracker of node:port, made on first use on the port's GSI. Without
 * an sa line that fails the run, unless sa_optional: the tracker then
 * has a QP1 of its own (its joins go unanswered). */
static int port_get(struct mc_run *r, uint32_t node, unsigned port,
		    bool sa_optional, struct mc_port **out)
{
	uint32_t idx = scn_ports_idx(&r->ports, node, port);
	const struct mc_cfg *cfg = imc_scn_data(r->c, &scn_mcast_cfg_key);
	struct imc_mcast_fabric_config fc;
	struct mc_port *p = r->ports.slot[idx];
	struct imc_gsi *gsi;
	int rc;

	*out = p;
	if (p)
		return 0;
	rc = scn_svc_gsi(r->c, node, port, sa_optional, &gsi);
	if (rc == -ENOENT && sa_optional) {
		gsi = NULL;
		rc = 0;
	}
	if (rc)
		return rc;
	if (cfg)
		fc = cfg->fc;
	else
		imc_mcast_fabric_config_init(&fc);
	/* timeout= is every attempt's: the backoff's cap at least. */
	if (cfg && (cfg->mask & C_TIMEOUT) &&
	    fc.client.max_timeout < fc.client.timeout)
		fc.client.max_timeout = fc.client.timeout;
	/* Jitter from the run's seed and the port: a seed replays. */
	fc.mcast.seed = imc_scn_config(r->c)->seed * 0x10000 + idx;
	fc.client.seed = fc.mcast.seed ^ 0x5eed5eedull;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->r = r;
	p->node = node;
	p->port = port;
	rc = imc_mcast_fabric_set_get(r->set, node, port, gsi, &fc, &p->mf);
	if (rc) {
		free(p);
		return imc_scn_fail(r->c, rc,
				    "no join tracker on %s:%u: %s",
				    r->t->node[node].name, port, strerror(-rc));
	}
	/* On failure the tracker stays in the set, unused, until the end
	 * of the run. */
	rc = scn_joins_watch(r->c, imc_mcast_fabric_tracker(p->mf));
	if (rc) {
		free(p);
		return rc;
	}
	r->ports.slot[idx] = p;
	*out = p;
	return 0;
}

/* The run ends: the trackers' end-of-run snapshot (--mcast-show) is
 * recorded now, before users of the trackers (of higher order) let go of
 * their members. */
static void mcast_teardown(struct imc_scn_ctx *c)
{
	struct mc_run *r;

	scn_mcast_run_get(c, false, &r);
	if (r && !r->ended) {
		if (r->show)
			scn_mcast_show_snapshot(r, 0);
		r->ended = true;
	}
}

static int trackers_prepare(struct imc_scn_ctx *c)
{
	struct mc_run *r;

	return scn_mcast_run_get(c, true, &r);
}

/* The port tracker service: ONE tracker per port, which mcast-* members
 * and every other user of the port (IPoIB interfaces) share, so the port
 * holds one membership per group at the SA, the union of all their
 * members' bits. Without an sa line it has a QP1 of its own and its
 * joins go unanswered. Users make their run state after
 * trackers_prepare(), leave their members and release their QPs
 * (imc_mcast_release_qp()) when it is freed. */
static int port_tracker(struct imc_scn_ctx *c, uint32_t node, unsigned port,
			struct imc_mcast **out)
{
	struct mc_port *p;
	struct mc_run *r;
	int rc = scn_mcast_run_get(c, true, &r);

	if (!rc)
		rc = port_get(r, node, port, true, &p);
	if (!rc)
		*out = imc_mcast_fabric_tracker(p->mf);
	return rc;
}

const struct scn_svc_ops scn_mcast_trackers = {
	.prepare = trackers_prepare, .tracker = port_tracker,
};

const struct imc_scn_plugin scn_mcast_plugin = {
	.name = "mcast", .order = 200, .teardown = mcast_teardown,
};

struct mc_member *scn_mcast_member_of(struct imc_scn_ctx *c,
				      const struct mc_join *line)
{
	return imc_scn_data(c, line);
}

/* The MGID m names now: a GID, or the group of a member that joined. */
int scn_mcast_mgid_resolve(struct imc_scn_ctx *c, const struct scn_mgid *m,
			   struct imc_gid *out)
{
	const struct mc_member *x;

	if (!m->line) {
		*out = m->gid;
		return 0;
	}
	x = scn_mcast_member_of(c, m->line);
	if (!x || !x->has_mgid)
		return -ENOENT;
	*out = x->mgid;
	return 0;
}

int scn_mcast_mgid_resolve_or_fail(struct imc_scn_ctx *c,
				   const struct scn_mgid *m, struct imc_gid *out)
{
	if (!scn_mcast_mgid_resolve(c, m, out))
		return 0;
	return imc_scn_fail(c, -ENOENT,
			    "@%s has no MGID yet: its mcast-join has not joined",
			    m->label);
}

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev);

/* retry=: the application lets go of the failed handle and joins again
 * with the same request (a create makes a new group). */
static void retry_fire(struct imc_timer *t)
{
	struct mc_member *x = imc_container_of(t, struct mc_member, retry);

	imc_mcast_leave(x->m);
	x->m = NULL;
	if (imc_gid_is_zero(&x->req.rec.mgid))
		x->has_mgid = false;
	if (imc_mcast_join(imc_mcast_fabric_tracker(x->p->mf), &x->req,
			   on_member, x, &x->m) < 0)
		x->m = NULL;   /* no memory: the application gives up */
}

static void on_member(void *arg, struct imc_mcast_member *m,
		      const struct imc_mcast_event *ev)
{
	struct mc_member *x = arg;

	(void)m;
	x->callbacks++;
	if ((unsigned)ev->type < IMC_ARRAY_SIZE(x->by_event))
		x->by_event[ev->type]++;
	if (ev->type == IMC_MCAST_EV_JOINED) {
		x->mgid = ev->rec->mgid;
		x->has_mgid = true;
	} else if (ev->type == IMC_MCAST_EV_ERROR) {
		x->status = ev->status;
		if (x->line->retry) {
			struct imc_loop *loop = imc_fabric_loop(x->r->f);

			(void)imc_timer_arm(loop, &x->retry,
					    imc_loop_now(loop) + x->line->retry);
		}
	}
}

int scn_mcast_join_run(struct imc_scn_ctx *c, void *data)
{
	const struct mc_join *a = data;
	const struct imc_topo *t = imc_scn_topo(c);
	struct imc_mcast_join_req req;
	struct mc_member *x;
	struct mc_port *p;
	struct mc_run *r;
	int rc = scn_mcast_run_get(c, true, &r);

	if (rc)
		return rc;
	rc = port_get(r, a->host.node, a->host.port, false, &p);
	if (rc)
		return rc;
	memset(&req, 0, sizeof(req));
	req.rec = a->rec;
	rc = scn_mcast_mgid_resolve_or_fail(c, &a->mgid, &req.rec.mgid);
	if (rc)
		return rc;
	req.comp_mask = a->mask | CM(MGID);
	if (a->create)
		req.comp_mask = scn_mcmr_create(&req.rec, req.comp_mask);
	req.join_state = a->state_set ? a->state : IMC_JOIN_FULL;
	if (!a->noqp && (req.join_state & RECV_BITS)) {
		uint16_t pkey = (req.comp_mask & CM(PKEY)) ? req.rec.pkey :
							     IMC_PKEY_DEFAULT;
		uint32_t qkey = (req.comp_mask & CM(QKEY)) ? req.rec.qkey :
							     IMC_SCN_QKEY;
		struct imc_qp *qp;

		rc = imc_scn_qp(c, a->host.node, a->host.port,
				scn_local_pkey(r->f, a->host.node,
					       a->host.port, pkey),
				qkey, &qp);
		if (rc)
			return imc_scn_fail(c, rc,
				"%s has no QP for P_Key 0x%04x: %s",
				t->node[a->host.node].name, pkey,
				strerror(-rc));
		req.qp = qp;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->r = r;
	x->line = a;
	x->p = p;
	x->req = req;
	imc_timer_init(&x->retry, retry_fire);
	if (!imc_gid_is_zero(&req.rec.mgid)) {
		x->mgid = req.rec.mgid;
		x->has_mgid = true;
	}
	rc = imc_scn_data_set(c, a, x, NULL);
	if (!rc)
		rc = imc_mcast_join(imc_mcast_fabric_tracker(p->mf), &req,
				    on_member, x, &x->m);
	if (rc) {
		free(x);
		return imc_scn_fail(c, rc, "the tracker refuses the join: %s",
				    strerror(-rc));
	}
	*r->tail = x;
	r->tail = &x->next;
	p->has_members = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The recorder */

void scn_mcast_group_cb(void *arg, const struct imc_mcast_group_info *g)
{
	struct snap_port *sp = arg;

	if (IMC_VEC_RESERVE(&sp->g, &sp->cap, sp->ng + 1))
		return; /* the listing is cut short */
	sp->g[sp->ng++] = *g;
}

static void snap_fini(void *snap)
{
	struct snap *s = snap;

	for (size_t i = 0; i < s->np; i++) {
		free(s->p[i].name);
		free(s->p[i].g);
	}
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* Records every tracker now, in topology order. Out of memory loses the
 * snapshot, not the run. */
void scn_mcast_show_snapshot(struct mc_run *r, unsigned line)
{
	struct imc_scn_mcast_show *sh = r->show;
	size_t nslots = r->ports.n, np = 0;
	struct snap s;

	memset(&s, 0, sizeof(s));
	s.at = imc_scn_now(r->c);
	s.line = line;
	for (size_t i = 0; i < nslots; i++)
		np += r->ports.slot[i] != NULL;
	s.p = calloc(np ? np : 1, sizeof(*s.p));
	if (!s.p)
		return;
	for (size_t i = 0; i < nslots; i++) {
		const struct mc_port *p = r->ports.slot[i];
		const struct imc_mcast *t;
		struct snap_port *sp;

		if (!p)
			continue;
		t = imc_mcast_fabric_tracker(p->mf);
		sp = &s.p[s.np++];
		sp->name = scn_port_name(r->t, p->node, p->port);
		imc_fabric_port_attr(r->f, p->node, p->port, &sp->pa);
		imc_mcast_get_stats(t, &sp->st);
		if (!sp->name || imc_mcast_foreach_group(t, scn_mcast_group_cb, sp)) {
			snap_fini(&s);
			return;
		}
	}
	if (scn_snaps_add(&sh->snaps, &s))
		snap_fini(&s);
}

int imc_scn_mcast_show_create(struct imc_scenario *s,
			      struct imc_scn_mcast_show **out)
{
	struct imc_scn_mcast_show *sh;
	struct mc_join *head;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s)
		return -EINVAL;
	head = scn_mcast_head_lookup(s);
	if (!head)
		return -ENOENT;
	if (head->show)
		return -EBUSY;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	sh->head = head;
	head->show = sh;
	sh->snaps.k = &snap_kind;
	*out = sh;
	return 0;
}

void imc_scn_mcast_show_destroy(struct imc_scn_mcast_show *sh)
{
	if (!sh)
		return;
	if (sh->head)
		sh->head->show = NULL;
	scn_snaps_fini(&sh->snaps);
	free(sh);
}

unsigned imc_scn_mcast_show_count(const struct imc_scn_mcast_show *sh)
{
	return sh ? (unsigned)sh->snaps.n : 0;
}

static void snap_counts(const struct snap *s, size_t *groups,
			uint64_t *members)
{
	*groups = 0;
	*members = 0;
	for (size_t i = 0; i < s->np; i++) {
		*groups += s->p[i].ng;
		*members += s->p[i].st.members;
	}
}

static void print_text(FILE *f, const void *snap)
{
	const struct snap *s = snap;
	char gid[IMC_GID_STRLEN];
	uint64_t members;
	size_t groups;

	snap_counts(s, &groups, &members);
	scn_snap_text_head(f, "mcast", "mcast-show", s->at, s->line);
	fprintf(f, " %zu ports, %zu groups, %" PRIu64 " members\n", s->np,
		groups, members);
	for (size_t i = 0; i < s->np; i++) {
		const struct snap_port *sp = &s->p[i];

		imc_gid_format(&sp->pa.gid, gid);
		fprintf(f, "port %s gid=%s lid=%u sm_lid=%u state=%s groups=%zu "
			"members=%zu mads=%" PRIu64 " retries=%" PRIu64
			" timeouts=%" PRIu64 " rejoins=%" PRIu64
			" errors=%" PRIu64 "\n", sp->name, gid, sp->pa.lid,
			sp->pa.sm_lid, imc_port_state_str(sp->pa.state), sp->ng,
			sp->st.members, sp->st.mads_sent, sp->st.retries,
			sp->st.timeouts, sp->st.rejoins, sp->st.errors);
		/* As `ibmcast mcast show` lists a port's groups. */
		for (size_t k = 0; k < sp->ng; k++) {
			fputs("  ", f);
			imc_mcast_group_info_print_text(f, &sp->g[k]);
		}
	}
}

/* One snapshot: its time on the first line, a port a line (its groups
 * one a line below it). */
static void snap_json(struct imc_json *j, const void *snap)
{
	const struct snap *s = snap;

	scn_snap_json_head(j, s->at, s->line);
	imc_json_key(j, "ports");
	imc_json_array_begin_lines(j);
	for (size_t i = 0; i < s->np; i++) {
		const struct snap_port *sp = &s->p[i];

		imc_json_object_begin_line(j);
		imc_json_kv_string(j, "host", sp->name);
		imc_json_kv_gid(j, "port_gid", &sp->pa.gid);
		imc_json_kv_u64(j, "lid", sp->pa.lid);
		imc_json_kv_u64(j, "sm_lid", sp->pa.sm_lid);
		imc_json_kv_string(j, "state",
				   imc_port_state_str(sp->pa.state));
		imc_json_key(j, "stats");
		imc_mcast_stats_print_json(j, &sp->st);
		imc_json_key(j, "groups");
		imc_json_array_begin_lines(j);
		for (size_t k = 0; k < sp->ng; k++)
			imc_mcast_group_info_json(j, &sp->g[k]);
		imc_json_array_end(j);
		imc_json_object_end(j);
	}
	imc_json_array_end(j);
	imc_json_object_end(j);
}

static const struct scn_snaps_kind snap_kind = {
	.size = sizeof(struct snap), .fini = snap_fini, .text = print_text,
	.to_json = snap_json,
};

int imc_scn_mcast_show_print(const struct imc_scn_mcast_show *sh, FILE *f,
			     bool json)
{
	return sh && f ? scn_snaps_write(&sh->snaps, f, json) : -EINVAL;
}

/* ------------------------------------------------------------------ */
/* The report's mcast section: the members of the mcast-join lines and
 * the counters of the ports' trackers, summed (a port's tracker is the
 * IPoIB interfaces' too: its counters count their joins). Left out when
 * no mcast-join line ran. */

int scn_mcast_report(struct imc_scn_ctx *c, struct imc_scn_report *rep)
{
	const struct mc_run *r = imc_scn_data(c, &run_key);
	uint64_t ports = 0, mports = 0, members = 0, left = 0;
	uint64_t by_state[5] = { 0 }, cb[4] = { 0 };
	struct imc_mcast_stats sum, st;

	if (!r || !r->members)
		return 0;
	memset(&sum, 0, sizeof(sum));
	for (uint32_t i = 0; i < r->ports.n; i++) {
		const struct mc_port *p = r->ports.slot[i];

		if (!p)
			continue;
		imc_mcast_get_stats(imc_mcast_fabric_tracker(p->mf), &st);
		ports++;
		mports += p->has_members;
		sum.joins += st.joins;
		sum.leaves += st.leaves;
		sum.joins_local += st.joins_local;
		sum.mads_sent += st.mads_sent;
		sum.retries += st.retries;
		sum.timeouts += st.timeouts;
		sum.rejoins += st.rejoins;
		sum.errors += st.errors;
		sum.groups += st.groups;
	}
	for (const struct mc_member *x = r->members; x; x = x->next) {
		members++;
		if (!x->m)
			left++;
		else
			by_state[imc_mcast_member_state(x->m)]++;
		for (unsigned k = 0; k < IMC_ARRAY_SIZE(cb); k++)
			cb[k] += x->by_event[k];
	}
	imc_scn_report_u64(rep, "trackers", ports);
	imc_scn_report_u64(rep, "ports", mports);
	imc_scn_report_u64(rep, "members", members);
	imc_scn_report_u64(rep, "joined", by_state[IMC_MCAST_JOINED]);
	imc_scn_report_u64(rep, "pending", by_state[IMC_MCAST_PENDING] +
			   by_state[IMC_MCAST_REJOINING] +
			   by_state[IMC_MCAST_WAITING]);
	imc_scn_report_u64(rep, "failed", by_state[IMC_MCAST_FAILED]);
	imc_scn_report_u64(rep, "left", left);
	imc_scn_report_object(rep, "callbacks");
	for (unsigned k = 0; k < IMC_ARRAY_SIZE(cb); k++)
		imc_scn_report_u64(rep, imc_mcast_event_str(k), cb[k]);
	imc_scn_report_end(rep);
	imc_scn_report_u64(rep, "groups", sum.groups);
	imc_scn_report_u64(rep, "joins_local", sum.joins_local);
	imc_scn_report_u64(rep, "mads", sum.mads_sent);
	imc_scn_report_u64(rep, "retries", sum.retries);
	imc_scn_report_u64(rep, "timeouts", sum.timeouts);
	imc_scn_report_u64(rep, "rejoins", sum.rejoins);
	imc_scn_report_line(rep,
		"%" PRIu64 " members on %" PRIu64 " ports at the end: %" PRIu64 " joined, %" PRIu64 " on their way, %" PRIu64 " failed, %" PRIu64 " left",
		members, mports, by_state[IMC_MCAST_JOINED],
		by_state[IMC_MCAST_PENDING] + by_state[IMC_MCAST_REJOINING] +
		by_state[IMC_MCAST_WAITING], by_state[IMC_MCAST_FAILED], left);
	imc_scn_report_line(rep,
		"callbacks: %" PRIu64 " joined, %" PRIu64 " rejoining, %" PRIu64 " waiting, %" PRIu64 " error",
		cb[IMC_MCAST_EV_JOINED], cb[IMC_MCAST_EV_REJOINING],
		cb[IMC_MCAST_EV_WAITING], cb[IMC_MCAST_EV_ERROR]);
	imc_scn_report_line(rep,
		"%" PRIu64 " trackers (IPoIB's joins too): %" PRIu64 " joins (%" PRIu64 " answered without a MAD), %" PRIu64 " SA requests (%" PRIu64 " retries, %" PRIu64 " timed out), %" PRIu64 " group re-joins",
		ports, sum.joins, sum.joins_local, sum.mads_sent, sum.retries,
		sum.timeouts, sum.rejoins);
	return 0;
}
