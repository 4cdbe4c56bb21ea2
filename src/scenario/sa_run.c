/* The run half of the SA verbs (sa_verbs.c): one run's hosts and
 * entries, snapshots, the GSI plumbing, requests, multicast flows, the
 * answers and the sa-show recorder. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/gsi.h"
#include "ibmcast/json.h"
#include "ibmcast/mad.h"
#include "ibmcast/mcmr.h"
#include "ibmcast/packet.h"
#include "ibmcast/sa.h"
#include "ibmcast/sa_attr.h"
#include "ibmcast/sa_fabric.h"
#include "ibmcast/scenario_sa.h"
#include "scenario/scn.h"
#include "util/bytes.h"
#include "util/text.h"
#include "util/vec.h"
#include "scenario/sa_run.h"

static const char run_key;   /* imc_scn_data key of struct sa_run */

/* ------------------------------------------------------------------ */
/* Hosts and entries */

static struct sa_host *host_get(struct sa_run *r, uint32_t node,
				unsigned port)
{
	uint32_t idx = scn_ports_idx(&r->hosts, node, port);
	struct sa_host *h = r->hosts.slot[idx];

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->r = r;
	h->idx = idx;
	h->node = node;
	h->port = port;
	r->hosts.slot[idx] = h;
	return h;
}

struct sa_host *scn_sa_host_find(struct sa_run *r, uint32_t node,
				 unsigned port)
{
	return *scn_ports_at(&r->hosts, node, port);
}

static uint64_t ent_hash(uint32_t host, const struct imc_gid *mgid)
{
	return imc_gid_hash(mgid, host);
}

struct sa_ent *scn_sa_ent_find(struct sa_run *r, uint32_t host,
			       const struct imc_gid *mgid)
{
	uint64_t hash = ent_hash(host, mgid);

	for (struct imc_hnode *n = imc_htab_bucket(&r->ents, hash); n;
	     n = n->next) {
		struct sa_ent *e = imc_container_of(n, struct sa_ent, node);

		if (n->hash == hash && e->host == host &&
		    imc_gid_equal(&e->mgid, mgid))
			return e;
	}
	return NULL;
}

/* The entry of (host, mgid), created when absent. */
static struct sa_ent *ent_get(struct sa_run *r, uint32_t host,
			      const struct imc_gid *mgid)
{
	struct sa_ent *e = scn_sa_ent_find(r, host, mgid);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->host = host;
	e->mgid = *mgid;
	e->status = ST_NONE;
	imc_htab_insert(&r->ents, &e->node, ent_hash(host, mgid));
	return e;
}


static void set_status(struct sa_run *r, uint32_t host,
		       const struct imc_gid *mgid, uint32_t status)
{
	struct sa_ent *e = ent_get(r, host, mgid);

	if (e)
		e->status = status;
}

bool scn_sa_mgid_resolve(struct sa_run *r, const struct scn_mgid *m,
			 struct imc_gid *out)
{
	const struct label_slot *ls;

	if (!m->line) {
		*out = m->gid;
		return true;
	}
	ls = imc_scn_data(r->c, &((const struct req_arg *)m->line)->label);
	if (!ls)
		return false;
	*out = ls->mgid;
	return true;
}

/* ------------------------------------------------------------------ */
/* Snapshots */

static int group_cb(void *arg, const struct imc_sa_group_info *g)
{
	struct snap *s = arg;

	if (IMC_VEC_RESERVE(&s->g, &s->cap, s->ng + 1))
		return -ENOMEM;
	memset(&s->g[s->ng], 0, sizeof(s->g[s->ng]));
	s->g[s->ng++].g = *g;
	return 0;
}

static int member_cb(void *arg, const struct imc_sa_member_info *m)
{
	struct snap_group *g = arg;

	if (IMC_VEC_RESERVE(&g->m, &g->cap, g->nm + 1))
		return -ENOMEM;
	g->m[g->nm++] = *m;
	return 0;
}

void scn_sa_snap_fini(void *snap)
{
	struct snap *s = snap;

	for (size_t i = 0; i < s->ng; i++) {
		for (size_t k = 0; s->g[i].node && k < s->g[i].nm; k++)
			free(s->g[i].node[k]);
		free(s->g[i].node);
		free(s->g[i].m);
	}
	free(s->g);
	free(s->dot);
	memset(s, 0, sizeof(*s));
}

/* The asked-for group's forwarding as the switches hold it now. */
static int snap_tree(struct sa_run *r, const struct imc_scn_sa_show *sh,
		     struct snap *s)
{
	char title[IMC_GID_STRLEN];
	size_t len = 0;
	FILE *f;
	int rc;

	for (size_t i = 0; i < s->ng; i++) {
		const struct imc_mcmr *g = &s->g[i].g.rec;

		if (!imc_gid_equal(&g->mgid, &sh->tree_mgid))
			continue;
		imc_gid_format(&g->mgid, title);
		f = open_memstream(&s->dot, &len);
		if (!f)
			return -ENOMEM;
		rc = imc_fabric_mft_dot(r->f, g->mlid, title, f);
		if (fclose(f) && !rc)
			rc = -ENOMEM;
		return rc;
	}
	return 0;
}

int scn_sa_groups_collect(const struct imc_sa *sa, struct snap *s)
{
	int rc = imc_sa_foreach_group(sa, group_cb, s);

	for (size_t i = 0; !rc && i < s->ng; i++)
		rc = imc_sa_foreach_member(sa, &s->g[i].g.rec.mgid, member_cb,
					   &s->g[i]);
	return rc;
}

/* The port each member of g is ("H-000002:1"). */
static int snap_names(struct sa_run *r, struct snap_group *g)
{
	int rc = 0;

	g->node = calloc(g->nm ? g->nm : 1, sizeof(*g->node));
	if (!g->node)
		rc = -ENOMEM;
	for (size_t k = 0; !rc && k < g->nm; k++) {
		uint32_t node;
		unsigned port;

		if (imc_fabric_port_by_gid(r->f, &g->m[k].port_gid, &node,
					   &port))
			continue;
		g->node[k] = scn_port_name(r->t, node, port);
		if (!g->node[k])
			rc = -ENOMEM;
	}
	return rc;
}

int scn_sa_snapshot(struct sa_run *r, unsigned line)
{
	struct imc_scn_sa_show *sh = r->cfg->show;
	const struct imc_sa *sa = imc_sa_fabric_sa(r->sf);
	struct snap s;
	int rc;

	if (!sh)
		return 0;
	memset(&s, 0, sizeof(s));
	s.at = imc_scn_now(r->c);
	s.line = line;
	imc_sa_get_stats(sa, &s.st);
	rc = scn_sa_groups_collect(sa, &s);
	for (size_t i = 0; !rc && i < s.ng; i++)
		rc = snap_names(r, &s.g[i]);
	if (!rc && sh->want_tree)
		rc = snap_tree(r, sh, &s);
	if (!rc)
		rc = scn_snaps_add(&sh->snaps, &s);
	if (rc)
		scn_sa_snap_fini(&s);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The run: start, clients, answers */

/* The GSI's agent of these requests: it claims the run's TID high word
 * (agent_add()), so the GSI gives it the responses (IBA 13.4.5: the R bit)
 * to these requests alone. Each client takes its own TIDs; an answer
 * none has (to a retry of an answered request) is counted only. */
static int host_agent_recv(struct imc_gsi_agent *a,
			   const struct imc_ud_recv *rv)
{
	struct sa_host *h = imc_container_of(a, struct sa_host, agent);

	h->r->answers++;
	h->answers++;
	for (struct sa_cl *cl = h->cl; cl; cl = cl->next)
		if (imc_sa_client_recv(cl->client, rv->data, rv->len) != -ESRCH)
			break;
	return 0;
}

/* h's GSI, the port's (the run's); its agent takes our answers. */
static void agent_add(struct sa_host *h, struct imc_gsi *gsi)
{
	if (h->gsi)
		return;
	h->gsi = gsi;
	h->agent.recv = host_agent_recv;
	/* The answers to these requests come to this agent alone: another
	 * client of the port (a tracker's) matches on the TID's low word
	 * only and could take one whose low word it also uses. */
	h->agent.tid_high = IMC_SCN_MAGIC;
	imc_gsi_add(h->gsi, &h->agent);
}

int scn_sa_start(struct sa_run *r)
{
	struct imc_sa_fabric_config fc;
	const struct sa_cfg *a = r->cfg;
	struct sa_host *h;
	uint32_t node;
	unsigned port;
	struct imc_sa_bcast bc[PARTITIONS_MAX + 1];
	struct imc_gsi *gsi;

	imc_sa_fabric_config_init(&fc);
	if (a->npart || (a->mask & SA_BCAST_QKEY)) {
		/* The default group as configured, then one per partition
		 * with its parameters; the Q_Key of every one as
		 * partitions.conf's qkey= gives it. */
		bc[0] = fc.sa.bcast[0];
		if (a->mask & SA_BCAST_QKEY)
			bc[0].qkey = a->bcast_qkey;
		for (unsigned i = 0; i < a->npart; i++) {
			bc[i + 1] = bc[0];
			bc[i + 1].pkey = a->part[i];
			bc[i + 1].mlid = 0;
		}
		fc.sa.bcast = bc;
		fc.sa.n_bcast = a->npart + 1u;
	}
	if (a->mask & SA_RATE)
		fc.sa.service_rate = a->rate;
	if (a->mask & SA_QUEUE)
		fc.sa.queue_max = a->queue;
	if (a->mask & SA_ORDER)
		fc.sa.mft_order = a->order;
	if (a->mask & SA_DELAY)
		fc.sa.mft_delay = a->mft_delay;
	if (a->mask & SA_MLIDS)
		fc.sa.mlid_last = (uint16_t)(fc.sa.mlid_first + a->mlids - 1);
	if (r->external) {
		/* Every port's GSI gets a QP1 of the run's. */
		r->sa_node = UINT32_MAX;
		return 0;
	}
	r->start_err = imc_fabric_sm_port(r->f, &node, &port);
	h = r->start_err ? NULL : host_get(r, node, port);
	if (!r->start_err && (!h || scn_port_qp1_lend(r->c, node, port, &gsi)))
		r->start_err = -ENOMEM;
	if (r->start_err)
		return r->start_err;
	/* The SA takes the port's QP1 and hands the GSI the rest. */
	agent_add(h, gsi);
	fc.other_mad = imc_gsi_input;
	fc.other_ctx = h->gsi;
	r->start_err = imc_sa_fabric_create(r->f, &fc, &r->sf);
	if (r->start_err)
		return r->start_err;
	imc_gsi_set_qp(h->gsi, imc_sa_fabric_qp(r->sf));
	r->sa_node = node;
	r->sa_port = port;
	return 0;
}

/* Stops the SA; its port's GSI gets a QP1 of the run's unless the SA
 * comes back there (keep). */
int scn_sa_stop(struct sa_run *r, bool keep)
{
	struct sa_host *h = scn_sa_host_find(r, r->sa_node, r->sa_port);

	struct imc_sa_stats st;

	imc_sa_get_stats(imc_sa_fabric_sa(r->sf), &st);
	if (st.queue_max_seen > r->queue_max)
		r->queue_max = st.queue_max_seen;
	imc_gsi_set_qp(h->gsi, NULL);
	imc_sa_fabric_destroy(r->sf);
	r->sf = NULL;
	return keep ? 0 : scn_port_qp1_return(r->c, h->node, h->port);
}

static void start_fire(struct imc_timer *t)
{
	scn_sa_start(imc_container_of(t, struct sa_run, start));
}

/* The run's SA state with the SA running, or a failure naming why. */
int scn_sa_run_get(struct imc_scn_ctx *c, struct sa_run **out)
{
	struct sa_run *r = imc_scn_data(c, &run_key);

	/* Callers test rc; set *out anyway, as the compiler cannot see that
	 * imc_scn_fail() never returns 0. */
	*out = NULL;
	if (!r)
		return imc_scn_fail(c, -ENOENT,
				    "no SA runs: the scenario has no 'sa' line");
	if (!r->sf && !r->start_err && !r->external) {
		imc_timer_cancel(r->loop, &r->start);
		scn_sa_start(r);
	}
	if (!r->sf && !r->external)
		return imc_scn_fail(c, r->start_err,
				    "the SA cannot start on the SM's port: %s",
				    strerror(-r->start_err));
	*out = r;
	return 0;
}

/* scn_sa_run_get() for what reads or drives the built-in engine itself. */
int scn_sa_engine_get(struct imc_scn_ctx *c, struct sa_run **out)
{
	int rc = scn_sa_run_get(c, out);

	if (!rc && (*out)->external) {
		*out = NULL;
		return imc_scn_fail(c, -EOPNOTSUPP,
			"the SA is the external SM's (opensm line): its "
			"groups are not read here; use sa-get or saquery");
	}
	return rc;
}

const struct imc_sa *scn_sa_engine(struct imc_scn_ctx *c)
{
	struct sa_run *r = imc_scn_data(c, &run_key);

	return r && r->sf ? imc_sa_fabric_sa(r->sf) : NULL;
}

/* h's GSI with a QP1: the run's, or the SA's on its port. */
static int qp1_get(struct sa_run *r, struct sa_host *h)
{
	struct imc_gsi *gsi;
	int rc = scn_port_gsi(r->c, h->node, h->port, &gsi);

	if (!rc)
		agent_add(h, gsi);
	return rc;
}

void scn_sa_links_changed(struct imc_scn_ctx *c)
{
	struct sa_run *r = imc_scn_data(c, &run_key);

	if (r && r->sf)
		imc_sa_fabric_links_changed(r->sf);
}

int scn_sa_gsi(struct imc_scn_ctx *c, uint32_t node, unsigned port,
	       bool optional, struct imc_gsi **out)
{
	struct sa_run *r;
	struct sa_host *h;
	int rc;

	if (optional && !imc_scn_data(c, &run_key))
		return -ENOENT;
	rc = scn_sa_run_get(c, &r);
	if (rc)
		return rc;
	h = host_get(r, node, port);
	if (!h)
		return -ENOMEM;
	rc = qp1_get(r, h);
	if (rc)
		return imc_scn_fail(c, rc, "%s has no QP1 for SA MADs: %s",
				    r->t->node[node].name, strerror(-rc));
	*out = h->gsi;
	return 0;
}

/* The clients' transport: to the SA's port as it is now (a LID change is
 * followed); an external SM's SA is at the SM LID the sender's PortInfo
 * names (IBA 15.4.1: the SA is found through the SM LID). The TID's high
 * word is the run's, as an OS MAD layer gives each agent its own (the
 * client leaves it 0 and matches on the low word). */
static int cl_send(void *ctx, const uint8_t *mad, size_t len)
{
	struct sa_cl *cl = ctx;
	struct sa_host *h = cl->h;
	struct sa_run *r = h->r;
	struct imc_port_attr pa;
	uint8_t buf[IMC_MAD_SIZE];
	uint16_t dlid = 0;
	int rc;

	if (len > sizeof(buf))
		return -EMSGSIZE;
	if (r->external) {
		if (!imc_fabric_port_attr(r->f, h->node, h->port, &pa) &&
		    pa.state == IMC_PORT_ACTIVE)
			dlid = pa.sm_lid;
	} else if (!imc_fabric_port_attr(r->f, r->sa_node, r->sa_port, &pa)) {
		dlid = pa.lid;
	}
	memcpy(buf, mad, len);
	imc_put32(buf + 8, IMC_SCN_MAGIC);
	rc = dlid ? imc_gsi_send(h->gsi, dlid, buf, len) : -ENETDOWN;
	if (rc) {
		r->errors++;
	} else {
		r->requests++;
		h->requests++;
	}
	return rc;
}

/* h's client for a's timeout= and retries=, made on first use. Each
 * attempt waits timeout= (the backoff capped there) and its jitter. */
static struct sa_cl *cl_get(struct sa_run *r, struct sa_host *h,
			    const struct req_arg *a)
{
	struct imc_sa_transport tr = { .send = cl_send };
	struct imc_sa_client_config cfg;
	struct sa_cl *cl;

	for (cl = h->cl; cl; cl = cl->next)
		if (cl->timeout == a->timeout && cl->retries == a->retries)
			return cl;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return NULL;
	imc_sa_client_config_init(&cfg);
	cfg.timeout = a->timeout;
	cfg.max_timeout = a->timeout;
	cfg.retries = a->retries;
	/* Jitter and TIDs from the run's seed, the port and the client: a
	 * seed replays. */
	cfg.seed = (imc_scn_config(r->c)->seed * 0x10000 + h->idx) ^
		   ((uint64_t)r->nclients << 48) ^ 0x5ca5ca00ull;
	tr.ctx = cl;
	if (imc_sa_client_create(r->loop, &tr, &cfg, &cl->client)) {
		free(cl);
		return NULL;
	}
	r->nclients++;
	cl->h = h;
	cl->timeout = a->timeout;
	cl->retries = a->retries;
	cl->next = h->cl;
	h->cl = cl;
	return cl;
}

static void done(struct sa_run *r, struct req *q, uint16_t status,
		 const struct imc_mcmr *rec);

/* The query's end: the answer, whatever its status, or every attempt
 * unanswered (the client neither cancels nor flushes these). */
static void req_done(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct req *q = arg;
	struct sa_run *r = q->r;
	struct imc_mcmr rec;

	imc_list_del(&q->link);
	if (err) {
		r->timeouts++;
		set_status(r, q->sender, &q->mgid, ST_TIMEOUT);
	} else {
		if (imc_mcmr_unpack(&rec, ans->data, ans->len) < 0)
			memset(&rec, 0, sizeof(rec));
		done(r, q, ans->status, &rec);
	}
	free(q);
}

static int req_build(struct sa_run *r, const struct req *q, uint8_t state,
		     struct imc_sa_mad *m)
{
	const struct req_arg *a = q->a;
	struct imc_mcmr rec = a->rec;
	struct imc_port_attr pa;
	uint64_t mask = a->mask | CM(MGID);

	memset(m, 0, sizeof(*m));
	m->mad.method = a->kind == REQ_JOIN ? UMAD_METHOD_SET :
			a->kind == REQ_LEAVE ? UMAD_SA_METHOD_DELETE :
					       UMAD_METHOD_GET;
	m->mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	rec.mgid = q->mgid;
	if (a->kind != REQ_GET) {
		/* o15-0.2.3, o15-0.1.14: MGID, PortGID, JoinState. */
		if (imc_fabric_port_attr(r->f, a->member.node, a->member.port,
					 &pa))
			return -EINVAL;
		rec.port_gid = pa.gid;
		rec.join_state = state;
		mask |= CM(PORT_GID) | CM(JOIN_STATE);
	}
	if (a->create)
		mask = scn_mcmr_create(&rec, mask);
	m->sa.comp_mask = mask;
	return imc_mcmr_pack(&rec, m->data, sizeof(m->data)) < 0 ? -EINVAL : 0;
}

int scn_sa_req_start(struct imc_scn_ctx *c, const struct req_arg *a)
{
	const struct imc_topo *t = imc_scn_topo(c);
	struct sa_run *r;
	struct sa_host *h, *mh;
	struct sa_ent *e;
	struct sa_cl *cl;
	struct req *q;
	struct imc_sa_mad m;
	struct imc_gid mgid;
	uint8_t state;
	int rc = scn_sa_run_get(c, &r);

	if (rc)
		return rc;
	if (!scn_sa_mgid_resolve(r, &a->mgid, &mgid))
		return imc_scn_fail(c, -ENOENT,
			"@%s has no MGID yet: its sa-join has not succeeded",
			a->mgid.label);
	h = host_get(r, a->host.node, a->host.port);
	mh = host_get(r, a->member.node, a->member.port);
	if (!h || !mh)
		return -ENOMEM;
	rc = qp1_get(r, h);
	if (rc)
		return imc_scn_fail(c, rc, "%s has no QP1 for SA requests: %s",
				    t->node[h->node].name, strerror(-rc));
	state = a->state_set ? a->state : JS_FULL;
	if (a->kind == REQ_LEAVE && !a->state_set) {
		/* Leave with every bit the member holds. */
		e = scn_sa_ent_find(r, mh->idx, &mgid);
		if (e && e->join_state)
			state = e->join_state;
	}
	cl = cl_get(r, h, a);
	q = cl ? calloc(1, sizeof(*q)) : NULL;
	if (!q)
		return -ENOMEM;
	q->r = r;
	q->a = a;
	q->sender = h->idx;
	q->member = mh->idx;
	q->mgid = mgid;
	q->flow = scn_flow_id(c);
	rc = req_build(r, q, state, &m);
	if (!rc)
		rc = imc_sa_query_start(cl->client, &m, req_done, q, NULL);
	if (rc) {
		free(q);
		return imc_scn_fail(c, rc, "cannot start the request: %s",
				    strerror(-rc));
	}
	imc_list_add_tail(&r->reqs, &q->link);
	set_status(r, h->idx, &mgid, ST_PENDING);
	return 0;
}

/* ---- multicast flows ---- */

int scn_sa_flow_start(struct sa_run *r, uint32_t node, unsigned port,
		      const struct imc_mcmr *g, uint32_t count, uint32_t size,
		      imc_time_t interval, uint8_t sl, uint32_t flow)
{
	const struct scn_group grp = { .mlid = g->mlid, .mgid = g->mgid,
				       .pkey = g->pkey, .qkey = g->qkey };
	const struct scn_flow f = {
		.from = { node, port }, .ah = { .sl = sl }, .count = count,
		.size = size, .interval = interval, .id = flow,
	};

	return scn_flow_to_group(r->c, &f, &grp);
}

/* ---- group sends to an external SM's SA ---- */

/* A send waiting for the SA's record of its group. */
struct gsend {
	struct imc_list link;       /* r->sends */
	struct sa_run *r;
	uint32_t node;
	unsigned port;
	struct imc_gid mgid;
	uint32_t count, size;
	imc_time_t interval;
	uint8_t sl;
	uint32_t flow;              /* the line's */
};

/* The query's client: the SA client's defaults, as the line has no
 * timeout= or retries=. */
static const struct req_arg gsend_client = {
	.timeout = IMC_SA_DEFAULT_TIMEOUT, .retries = IMC_SA_DEFAULT_RETRIES,
};

/* The record of g's group among the answer's. A requester without an
 * SM_Key is not trusted: its records have PortGID, JoinState and
 * ProxyJoin zero (IBA 15.2.5.17), and OpenSM gives it one record per
 * group. */
static bool gsend_record(const struct gsend *g,
			 const struct imc_sa_answer *ans, struct imc_mcmr *rec)
{
	size_t step = ans->rec_size ? ans->rec_size : IMC_MCMR_SIZE;

	for (size_t i = 0, off = 0; i < ans->count && off < ans->len;
	     i++, off += step) {
		size_t n = ans->len - off < step ? ans->len - off : step;

		if (imc_mcmr_unpack(rec, ans->data + off, n) >= 0 &&
		    imc_gid_equal(&rec->mgid, &g->mgid))
			return true;
	}
	return false;
}

/* The answer: the flow starts with the group's MLID, Q_Key and P_Key,
 * or the line fails naming the MGID and what the SA said. */
static void gsend_done(void *arg, int err, const struct imc_sa_answer *ans)
{
	struct gsend *g = arg;
	struct sa_run *r = g->r;
	struct imc_scn_ctx *c = r->c;
	char gid[IMC_GID_STRLEN];
	const char *name;
	struct imc_mcmr rec;
	int rc;

	imc_list_del(&g->link);
	imc_gid_format(&g->mgid, gid);
	if (err == -ETIMEDOUT) {
		r->timeouts++;
		scn_fail_line(c, g->flow, err, "the SA did not answer the "
			      "GetTable of MCMemberRecord %s (%u attempts): %s",
			      gid, gsend_client.retries + 1, strerror(-err));
	} else if (err) {
		scn_fail_line(c, g->flow, err, "the GetTable of MCMemberRecord "
			      "%s failed: %s", gid, strerror(-err));
	} else if (ans->status) {
		name = scn_mad_status_name(ans->status);
		scn_fail_line(c, g->flow, -EIO, "the SA answered the GetTable "
			      "of MCMemberRecord %s with status 0x%04x (%s)",
			      gid, ans->status, name ? name : "unknown");
	} else if (!gsend_record(g, ans, &rec)) {
		/* OpenSM also leaves out a group of a partition the
		 * requester's port is not in. */
		scn_fail_line(c, g->flow, -ENOENT, "the SA has no group %s: "
			      "its GetTable of MCMemberRecord by MGID answered "
			      "success with no record (none, or of a partition "
			      "%s is not in)", gid, r->t->node[g->node].name);
	} else {
		rc = scn_sa_flow_start(r, g->node, g->port, &rec, g->count,
				       g->size, g->interval, g->sl, g->flow);
		if (rc == -EINVAL)
			scn_fail_line(c, g->flow, rc,
				      "%s has no P_Key 0x%04x in its table",
				      r->t->node[g->node].name, rec.pkey);
		else if (rc)
			scn_fail_line(c, g->flow, rc, "cannot send to %s: %s",
				      gid, strerror(-rc));
	}
	free(g);
}

int scn_sa_ext_send(struct sa_run *r, uint32_t node, unsigned port,
		    const struct imc_gid *mgid, uint32_t count, uint32_t size,
		    imc_time_t interval, uint8_t sl, uint32_t flow)
{
	const struct imc_mcmr rec = { .mgid = *mgid };
	struct sa_host *h = host_get(r, node, port);
	struct imc_sa_mad m;
	struct sa_cl *cl;
	struct gsend *g;
	int rc;

	if (!h)
		return -ENOMEM;
	rc = qp1_get(r, h);
	if (rc)
		return imc_scn_fail(r->c, rc, "%s has no QP1 for SA requests: "
				    "%s", r->t->node[node].name, strerror(-rc));
	cl = cl_get(r, h, &gsend_client);
	g = cl ? calloc(1, sizeof(*g)) : NULL;
	if (!g)
		return -ENOMEM;
	*g = (struct gsend){ .r = r, .node = node, .port = port,
			     .mgid = *mgid, .count = count, .size = size,
			     .interval = interval, .sl = sl, .flow = flow };
	/* A host learns a group's MLID, Q_Key and P_Key from the SA: the
	 * MGID component alone selects the group (IBA 15.2.5.17). */
	memset(&m, 0, sizeof(m));
	m.mad.method = UMAD_SA_METHOD_GET_TABLE;
	m.mad.attr_id = UMAD_SA_ATTR_MCMEMBER_REC;
	m.sa.comp_mask = CM(MGID);
	rc = imc_mcmr_pack(&rec, m.data, sizeof(m.data)) < 0 ? -EINVAL :
	     imc_sa_query_start(cl->client, &m, gsend_done, g, NULL);
	if (rc) {
		free(g);
		return imc_scn_fail(r->c, rc, "cannot start the request: %s",
				    strerror(-rc));
	}
	imc_list_add_tail(&r->sends, &g->link);
	return 0;
}

/* ---- answers ---- */

static void member_joined(struct sa_run *r, uint32_t member,
			  const struct imc_mcmr *rec)
{
	const struct sa_host *mh = r->hosts.slot[member];
	struct sa_ent *e = ent_get(r, member, &rec->mgid);
	struct imc_qp *qp;
	int rc;

	if (!e)
		return;
	e->join_state = rec->join_state;
	if (e->qp && (e->mlid != rec->mlid ||
		      !(rec->join_state & JS_RECEIVES))) {
		imc_qp_detach(e->qp, &rec->mgid, e->mlid);
		e->qp = NULL;
	}
	if (e->qp || !(rec->join_state & JS_RECEIVES))
		return;
	/* The member's QP for the group's P_Key and Q_Key gets its
	 * datagrams (IBA 10.5.2.5: attach to MGID and MLID). */
	rc = imc_scn_qp(r->c, mh->node, mh->port,
			scn_local_pkey(r->f, mh->node, mh->port, rec->pkey),
			rec->qkey, &qp);
	if (!rc) {
		rc = imc_qp_attach(qp, &rec->mgid, rec->mlid);
		if (rc == -EEXIST)
			rc = 0;
	}
	if (rc) {
		r->errors++;
		return;
	}
	e->qp = qp;
	e->mlid = rec->mlid;
}

static void member_left(struct sa_run *r, uint32_t member,
			const struct imc_gid *mgid, uint8_t remaining)
{
	struct sa_ent *e = scn_sa_ent_find(r, member, mgid);

	if (!e)
		return;
	e->join_state = remaining;
	if (e->qp && !(remaining & JS_RECEIVES)) {
		imc_qp_detach(e->qp, mgid, e->mlid);
		e->qp = NULL;
	}
}

static void done(struct sa_run *r, struct req *q, uint16_t status,
		 const struct imc_mcmr *rec)
{
	const struct req_arg *a = q->a;

	set_status(r, q->sender, &q->mgid, status);
	if (status != 0)
		return;
	if (a->kind == REQ_JOIN) {
		if (!imc_gid_equal(&rec->mgid, &q->mgid))
			set_status(r, q->sender, &rec->mgid, status);
		if (a->label) {
			struct label_slot *ls = imc_scn_data(r->c, &a->label);

			if (!ls) {
				ls = calloc(1, sizeof(*ls));
				if (ls && imc_scn_data_set(r->c, &a->label, ls,
							   free)) {
					free(ls);
					ls = NULL;
				}
			}
			if (ls)
				ls->mgid = rec->mgid;
		}
		member_joined(r, q->member, rec);
		if (a->send_count &&
		    scn_sa_flow_start(r, a->member.node, a->member.port, rec,
			       a->send_count, a->send_size, a->send_interval,
			       rec->sl, q->flow))
			r->errors++;
	} else if (a->kind == REQ_LEAVE) {
		member_left(r, q->member, &q->mgid, rec->join_state);
	}
}

/* The GSI is the run's and outlives the host (no SA QP on it). */
static void host_free(void *data)
{
	struct sa_host *h = data;
	struct sa_run *r = h->r;

	if (h->gsi) {
		if (r->sf && h->node == r->sa_node && h->port == r->sa_port)
			imc_gsi_set_qp(h->gsi, NULL);
		imc_gsi_remove(&h->agent);
	}
	free(h);
}

static void run_free(void *data)
{
	struct sa_run *r = data;

	if (r->sf)
		scn_sa_snapshot(r, 0);
	imc_timer_cancel(r->loop, &r->start);
	/* The clients first: they free their queries without callbacks, and
	 * the requests in flight are then ours to free. */
	for (size_t i = 0; i < r->hosts.n; i++) {
		struct sa_host *h = r->hosts.slot[i];

		while (h && h->cl) {
			struct sa_cl *cl = h->cl;

			h->cl = cl->next;
			imc_sa_client_destroy(cl->client);
			free(cl);
		}
	}
	while (!imc_list_empty(&r->reqs)) {
		struct req *q = imc_list_entry(r->reqs.next, struct req, link);

		imc_list_del(&q->link);
		free(q);
	}
	while (!imc_list_empty(&r->sends)) {
		struct gsend *g = imc_list_entry(r->sends.next, struct gsend,
						 link);

		imc_list_del(&g->link);
		free(g);
	}
	scn_ports_fini(&r->hosts, host_free);
	imc_sa_fabric_destroy(r->sf);
	for (size_t pos = 0; r->ents.b;) {
		struct imc_hnode *n = imc_htab_take(&r->ents, &pos);

		if (!n)
			break;
		free(imc_container_of(n, struct sa_ent, node));
	}
	imc_htab_fini(&r->ents);
	free(r);
}

int scn_sa_run(struct imc_scn_ctx *c, void *data)
{
	struct sa_cfg *a = data;
	const struct imc_topo *t = imc_scn_topo(c);
	struct sa_run *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	if (imc_scn_config(c)->external_sm && a->mask) {
		free(r);
		return imc_scn_fail(c, -EINVAL, "the options configure the "
				    "built-in SA; with an opensm line the SA "
				    "is OpenSM's: 'sa' alone");
	}
	r->c = c;
	r->cfg = a;
	imc_list_init(&r->reqs);
	imc_list_init(&r->sends);
	r->f = imc_scn_fabric(c);
	r->loop = imc_scn_loop(c);
	r->t = t;
	r->external = imc_scn_config(c)->external_sm;
	r->sa_node = r->external ? UINT32_MAX : 0;
	imc_timer_init(&r->start, start_fire);
	rc = scn_ports_init(&r->hosts, t);
	if (!rc && imc_htab_init(&r->ents, 64))
		rc = -ENOMEM;
	if (!rc)
		rc = imc_scn_data_set(c, &run_key, r, run_free);
	if (rc) {
		imc_htab_fini(&r->ents);
		scn_ports_fini(&r->hosts, NULL);
		free(r);
		return rc;
	}
	if (a->show)
		scn_snaps_clear(&a->show->snaps);
	/* Settings run before the SM's first sweep; the SA needs its port's
	 * LID, so it starts from the loop at time 0, before any action. */
	return imc_timer_arm_in(r->loop, &r->start, 0);
}

/* ------------------------------------------------------------------ */
/* The recorder */

static const struct scn_snaps_kind snap_kind;

int imc_scn_sa_show_create(struct imc_scenario *s,
			   struct imc_scn_sa_show **out)
{
	struct imc_scn_sa_show *sh;
	struct sa_cfg *cfg = NULL;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s)
		return -EINVAL;
	for (unsigned i = 0; i < s->nsettings && !cfg; i++)
		if (s->settings[i].verb == &scn_sa_verb)
			cfg = s->settings[i].data;
	if (!cfg)
		return -ENOENT;
	if (cfg->show)
		return -EBUSY;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	sh->cfg = cfg;
	cfg->show = sh;
	sh->snaps.k = &snap_kind;
	*out = sh;
	return 0;
}

int imc_scn_sa_show_tree(struct imc_scn_sa_show *sh,
			 const struct imc_gid *mgid)
{
	if (!sh || !mgid)
		return -EINVAL;
	sh->want_tree = true;
	sh->tree_mgid = *mgid;
	return 0;
}

int imc_scn_sa_show_dot(const struct imc_scn_sa_show *sh, FILE *f)
{
	const struct snap *last;

	if (!sh || !f)
		return -EINVAL;
	last = scn_snaps_last(&sh->snaps);
	if (!last || !last->dot)
		return -ENOENT;
	fputs(last->dot, f);
	return ferror(f) ? -EIO : 0;
}

void imc_scn_sa_show_destroy(struct imc_scn_sa_show *sh)
{
	if (!sh)
		return;
	if (sh->cfg)
		sh->cfg->show = NULL;
	scn_snaps_fini(&sh->snaps);
	free(sh);
}

unsigned imc_scn_sa_show_count(const struct imc_scn_sa_show *sh)
{
	return sh ? (unsigned)sh->snaps.n : 0;
}

static void print_text(FILE *f, const void *snap)
{
	const struct snap *s = snap;

	scn_snap_text_head(f, "SA", "sa-show", s->at, s->line);
	fprintf(f, " %" PRIu32 " groups, %" PRIu64 " members, %" PRIu32
		" of %" PRIu32 " MLIDs in use, %" PRIu64
		" MADs received, %" PRIu64 " dropped (queue full)\n",
		s->st.groups, s->st.members, s->st.mlids_in_use,
		s->st.mlids_total, s->st.received, s->st.drop_queue_full);
	/* As saquery -g: one dump per group; then as saquery -m: one dump
	 * per member, groups in MGID order. */
	for (size_t i = 0; i < s->ng; i++)
		imc_sa_group_print_text(f, &s->g[i].g);
	for (size_t i = 0; i < s->ng; i++)
		for (size_t k = 0; k < s->g[i].nm; k++)
			imc_sa_member_print_text(f, &s->g[i].g, &s->g[i].m[k],
						 s->g[i].node[k]);
}

/* One snapshot: its time and statistics on the first line, a group a
 * line, a member a line. */
static void snap_json(struct imc_json *j, const void *snap)
{
	const struct snap *s = snap;

	scn_snap_json_head(j, s->at, s->line);
	imc_json_key(j, "stats");
	imc_sa_stats_print_json(j, &s->st);
	imc_json_key(j, "groups");
	imc_json_array_begin_lines(j);
	for (size_t i = 0; i < s->ng; i++)
		imc_sa_group_print_json(j, &s->g[i].g, s->g[i].m,
					(const char *const *)s->g[i].node,
					s->g[i].nm);
	imc_json_array_end(j);
	imc_json_object_end(j);
}

static const struct scn_snaps_kind snap_kind = {
	.size = sizeof(struct snap), .fini = scn_sa_snap_fini, .text = print_text,
	.to_json = snap_json,
};

int imc_scn_sa_show_print(const struct imc_scn_sa_show *sh, FILE *f,
			  bool json)
{
	return sh && f ? scn_snaps_write(&sh->snaps, f, json) : -EINVAL;
}

int imc_scn_sa_show_print_last(const struct imc_scn_sa_show *sh, FILE *f,
			       bool json)
{
	const void *last;
	struct imc_json j;
	int rc;

	if (!sh || !f)
		return -EINVAL;
	last = scn_snaps_last(&sh->snaps);
	if (!last)
		return -ENOENT;
	if (!json) {
		print_text(f, last);
		return ferror(f) ? -EIO : 0;
	}
	imc_json_init(&j, f, 2, 0);
	snap_json(&j, last);
	rc = imc_json_finish(&j);
	fputc('\n', f);
	return rc ? rc : (ferror(f) ? -EIO : 0);
}
