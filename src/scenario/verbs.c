/* Built-in scenario verbs: link, fault, sm, reregister, lid, pkeys,
 * group, send and mcast. Each is a parse/print/run/free quadruple, the
 * same interface verbs from other modules use. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/desc.h"
#include "scenario/scn.h"
#include "util/vec.h"

#define MCAST_QPN 0xFFFFFFu   /* multicast DestQP, IBA 10.5.2.5 */
#define DEFAULT_PKEY 0xFFFF   /* default partition, full member (IBA 10.9) */

/* ---- link params, shared with the links setting ---- */

/* The fabric's link model (not IBA's): the links line sets every
 * cable, a fault line one cable direction. */
static const struct scn_opt link_opts[] = {
	SCN_O_TIME("latency", struct imc_link_params, latency),
	SCN_O_BPS("bandwidth", struct imc_link_params, bits_per_sec),
	SCN_O_PROB("loss", struct imc_link_params, loss),
	SCN_O_PROB("dup", struct imc_link_params, dup),
	SCN_O_PROB("reorder", struct imc_link_params, reorder),
	SCN_O_TIME("reorder-delay", struct imc_link_params, reorder_delay),
};
const struct scn_optset scn_link_optset = SCN_OPTSET(link_opts);

/* ---- link down|up PORT ---- */

struct link_arg {
	struct scn_port_arg at;
	bool up;
};

static const char *const link_words[] = { "down", "up", NULL };
static const struct scn_arg link_args[] = {
	SCN_A_WORD(struct link_arg, up, link_words, 0),
	SCN_A_PORT(struct link_arg, at, SCN_ARG_CABLED),
};
static const struct scn_desc link_desc = {
	.usage = "expected 'link down PORT' or 'link up PORT'",
	.min = 2, .max = 2, SCN_ARGS(link_args),	.size = sizeof(struct link_arg),
};

static int link_run(struct imc_scn_ctx *c, void *data)
{
	struct link_arg *a = data;
	int rc = imc_fabric_link_set(imc_scn_fabric(c), a->at.node,
				     a->at.port, a->up);

	/* An SA hears of HCA cables through port events, not of cables
	 * between switches (sa_fabric.h): its trees must follow both. */
	if (!rc)
		imc_scn_links_changed(c);
	return rc;
}

SCN_DESC_VERB(link, "link", IMC_SCN_ACTION, link_desc, link_run);

/* ---- fault PORT key=value... ---- */

struct fault_arg {
	struct scn_port_arg at;
	struct imc_link_params lp;
	uint64_t given;   /* by link_opts index */
};

static const struct scn_arg fault_args[] = {
	SCN_A_PORT(struct fault_arg, at, SCN_ARG_CABLED),
};
static const struct scn_desc fault_desc = {
	.usage = "expected 'fault PORT' and loss=, dup=, reorder=, reorder-delay=, latency= or bandwidth=",
	.min = 2, SCN_ARGS(fault_args), .opts = &scn_link_optset,
	.opts_off = offsetof(struct fault_arg, lp),
	.keep = SCN_KEEP_GIVEN, .given_off = offsetof(struct fault_arg, given),
	.size = sizeof(struct fault_arg),
};

/* Keys not given keep the values of the links line. */
static int fault_run(struct imc_scn_ctx *c, void *data)
{
	struct fault_arg *a = data;
	struct imc_link_params lp = imc_scn_config(c)->link;

	scn_opts_copy(&scn_link_optset, &lp, &a->lp, a->given);
	return imc_fabric_link_params_set(imc_scn_fabric(c), a->at.node,
					  a->at.port, &lp);
}

SCN_DESC_VERB(fault, "fault", IMC_SCN_ACTION, fault_desc, fault_run);

/* ---- sm move PORT ---- */

static const char *const sm_words[] = { "move", NULL };
static const struct scn_arg sm_args[] = {
	{ .kind = SCN_ARG_WORD, .names = sm_words },
	SCN_A_HOST(struct scn_port_arg, node),
};
static const struct scn_desc sm_desc = {
	.usage = "expected 'sm move HOST'", .min = 2, .max = 2,
	SCN_ARGS(sm_args), .size = sizeof(struct scn_port_arg),
};

static int sm_run(struct imc_scn_ctx *c, void *data)
{
	const struct scn_port_arg *a = data;

	return imc_fabric_sm_move(imc_scn_fabric(c), a->node, a->port);
}

SCN_DESC_VERB(sm, "sm", IMC_SCN_ACTION, sm_desc, sm_run);

/* ---- reregister HOST|all ---- */

static const struct scn_arg rereg_args[] = {
	{ .kind = SCN_ARG_HOST_ALL },
};
static const struct scn_desc rereg_desc = {
	.usage = "expected 'reregister HOST' or 'reregister all'",
	.min = 1, .max = 1, SCN_ARGS(rereg_args),	.size = sizeof(struct scn_port_arg),
};

static int rereg_run(struct imc_scn_ctx *c, void *data)
{
	const struct scn_port_arg *a = data;

	return imc_fabric_client_reregister(imc_scn_fabric(c), a->node,
					    a->port);
}

SCN_DESC_VERB(rereg, "reregister", IMC_SCN_ACTION, rereg_desc, rereg_run);

/* ---- lid HOST LID ---- */

struct lid_arg {
	struct scn_port_arg at;
	uint16_t lid;
};

/* IBA 4.1.3: unicast LIDs are 0x0001..0xBFFF. */
static const struct scn_arg lid_args[] = {
	SCN_A_HOST(struct lid_arg, at),
	{ .kind = SCN_ARG_UINT, .size = 2, .flags = SCN_ARG_HEX,
	  .offset = offsetof(struct lid_arg, lid), .what = "LID",
	  .min = 1, .max = 0xBFFF, .help = "expected a unicast LID 1..0xbfff" },
};
static const struct scn_desc lid_desc = {
	.usage = "expected 'lid HOST LID'", .min = 2, .max = 2,
	SCN_ARGS(lid_args), .size = sizeof(struct lid_arg),
};

static int lid_run(struct imc_scn_ctx *c, void *data)
{
	const struct lid_arg *a = data;
	int rc = imc_fabric_lid_change(imc_scn_fabric(c), a->at.node,
				       a->at.port, a->lid);

	if (rc == -EBUSY)
		return imc_scn_fail(c, rc, "LID 0x%04x is taken", a->lid);
	return rc;
}

SCN_DESC_VERB(lid, "lid", IMC_SCN_ACTION, lid_desc, lid_run);

/* ---- pkeys HOST PKEY... ---- */

struct pkeys_arg {
	struct scn_port_arg at;
	unsigned n;
	uint16_t pkeys[IMC_PKEY_TABLE_MAX];
};

static const struct scn_arg pkeys_args[] = {
	SCN_A_HOST(struct pkeys_arg, at),
	{ .kind = SCN_ARG_UINT, .size = 2, .flags = SCN_ARG_HEX | SCN_ARG_REST,
	  .offset = offsetof(struct pkeys_arg, pkeys), .what = "P_Key",
	  .max = IMC_PKEY_TABLE_MAX, .help = "P_Keys",
	  .count_off = offsetof(struct pkeys_arg, n) },
};
static const struct scn_desc pkeys_desc = {
	.usage = "expected 'pkeys HOST PKEY...'", .min = 1,
	SCN_ARGS(pkeys_args),	.size = sizeof(struct pkeys_arg),
};

static int pkeys_run(struct imc_scn_ctx *c, void *data)
{
	const struct pkeys_arg *a = data;

	return imc_fabric_pkey_set(imc_scn_fabric(c), a->at.node, a->at.port,
				   a->pkeys, a->n);
}

SCN_DESC_VERB(pkeys, "pkeys", IMC_SCN_ACTION, pkeys_desc, pkeys_run);

/* ---- group MLID MGID HOST...|all [pkey=P] [qkey=Q] ---- */

struct group_arg {
	struct scn_group g;
	bool all;
	unsigned n;
	size_t capn, capp;
	uint32_t *nodes;
	unsigned *ports;
};

static void group_members_free(const struct scn_arg *arg, void *data)
{
	struct group_arg *a = data;

	free(a->nodes);
	free(a->ports);
}

static int append(struct group_arg *a, uint32_t node, unsigned port)
{
	if (IMC_VEC_RESERVE(&a->nodes, &a->capn, a->n + 1) ||
	    IMC_VEC_RESERVE(&a->ports, &a->capp, a->n + 1))
		return -ENOMEM;
	a->nodes[a->n] = node;
	a->ports[a->n++] = port;
	return 0;
}

/* A new group's MLID. */
static int group_mlid_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
			    const char *word, void *base)
{
	struct group_arg *a = base;
	const struct scn_group *old;
	int rc = scn_mlid_parse(p, word, &a->g.mlid);

	old = rc ? NULL : scn_group_find(p->s, a->g.mlid);
	if (old)
		return imc_scn_parse_error(p, "group 0x%04x is already defined on line %u",
					   a->g.mlid, old->line);
	return rc;
}

/* The MLID of the struct scn_group at the argument's offset. */
static void group_mlid_print(FILE *f, const struct imc_topo *t,
			     const struct scn_arg *arg, const void *base)
{
	const struct scn_group *g = scn_arg_cat(base, arg);

	fprintf(f, " 0x%04x", g->mlid);
}

static int group_member_parse(struct imc_scn_parser *p,
			      const struct scn_arg *arg, const char *word,
			      void *base)
{
	struct group_arg *a = base;
	uint32_t node;
	unsigned port;
	int rc;

	if (a->all || (a->n && !strcmp(word, "all")))
		return imc_scn_parse_error(p,
			"'all' stands for every host: no other member");
	if (!strcmp(word, "all")) {
		a->all = true;
		return 0;
	}
	rc = imc_scn_parse_host(p, word, &node, &port);
	for (unsigned i = 0; !rc && i < a->n; i++)
		if (a->nodes[i] == node && a->ports[i] == port)
			return imc_scn_parse_error(p, "member %s:%u listed twice",
				imc_scn_parser_topo(p)->node[node].name, port);
	return rc ? rc : append(a, node, port);
}

static void group_members_print(FILE *f, const struct imc_topo *t,
				const struct scn_arg *arg, const void *base)
{
	const struct group_arg *a = base;

	if (a->all)
		fputs(" all", f);
	for (unsigned i = 0; !a->all && i < a->n; i++) {
		fputc(' ', f);
		imc_scn_print_port(f, t, a->nodes[i], a->ports[i]);
	}
}

/* "all": each HCA by its first cabled port. */
static int group_done(struct imc_scn_parser *p, void *data)
{
	const struct imc_topo *t = imc_scn_parser_topo(p);
	struct group_arg *a = data;
	int rc = 0;

	a->g.line = p->line;
	for (uint32_t i = 0; a->all && !rc && i < t->nnodes; i++) {
		const struct imc_topo_node *nd = &t->node[i];
		unsigned pn = 0;

		for (unsigned k = 1; k <= nd->nports && !pn; k++)
			if (nd->port[k].peer != IMC_TOPO_NONE)
				pn = k;
		if (nd->type == IMC_NODE_HCA && pn)
			rc = append(a, i, pn);
	}
	if (!rc && !a->n)
		return imc_scn_parse_error(p, "a group needs at least one member");
	return rc ? rc : scn_group_add(p->s, &a->g);
}

static const struct scn_opt group_opts[] = {
	SCN_O_HEX("pkey", struct group_arg, g.pkey, 0),
	SCN_O_HEX("qkey", struct group_arg, g.qkey, 0),
};
static const struct scn_optset group_set = SCN_OPTSET(group_opts);

static const struct scn_arg group_args[] = {
	SCN_A_CUSTOM(struct group_arg, g, "an MLID", group_mlid_parse,
		     group_mlid_print, 0),
	{ .kind = SCN_ARG_MGID, .offset = offsetof(struct group_arg, g.mgid) },
	{ .kind = SCN_ARG_CUSTOM, .flags = SCN_ARG_REST,
	  .parse = group_member_parse, .print = group_members_print,
	  .free = group_members_free },
};
static const struct scn_desc group_desc = {
	.usage = "expected 'group MLID MGID HOST...' or 'group MLID MGID all'",
	.min = 3, SCN_ARGS(group_args), .opts = &group_set,
	.print_always = ~0ull,	.size = sizeof(struct group_arg),
	.defaults = &(const struct group_arg){
		.g = { .pkey = DEFAULT_PKEY, .qkey = IMC_SCN_QKEY } },
	.done = group_done,
};

static int group_run(struct imc_scn_ctx *c, void *data)
{
	const struct group_arg *a = data;
	const struct imc_topo *t = imc_scn_topo(c);
	int rc;

	rc = imc_fabric_mft_program_tree(imc_scn_fabric(c), a->g.mlid,
					 a->nodes, a->ports, a->n);
	if (rc < 0)
		return imc_scn_fail(c, rc, "cannot program the tree of 0x%04x",
				    a->g.mlid);
	for (unsigned i = 0; i < a->n; i++) {
		struct imc_qp *qp;

		rc = imc_scn_qp(c, a->nodes[i], a->ports[i], a->g.pkey,
				a->g.qkey, &qp);
		if (rc == -EINVAL)
			return imc_scn_fail(c, rc,
				"%s has no P_Key 0x%04x in its table",
				t->node[a->nodes[i]].name, a->g.pkey);
		if (!rc)
			rc = imc_qp_attach(qp, &a->g.mgid, a->g.mlid);
		if (rc)
			return imc_scn_fail(c, rc, "cannot attach %s:%u",
					    t->node[a->nodes[i]].name,
					    a->ports[i]);
	}
	return 0;
}

SCN_DESC_VERB(group, "group", IMC_SCN_ACTION, group_desc, group_run);

/* ---- send SRC DST ... and mcast SRC MLID ... ---- */

struct traffic_arg {
	struct scn_port_arg src;
	struct scn_port_arg dst;       /* send */
	struct scn_group g;        /* mcast: the group, copied */
	bool mcast;
	bool grh;
	uint32_t count;
	uint32_t size;
	imc_time_t interval;
	uint16_t pkey;
	uint32_t qkey;
	uint8_t sl;
	uint64_t given;    /* mcast: the options given */
};

#define TRAFFIC_OPTS SCN_O_FLOW_SL(struct traffic_arg)

static const struct scn_opt send_opts[] = {
	TRAFFIC_OPTS,
	SCN_O_HEX("pkey", struct traffic_arg, pkey, 0),
	SCN_O_HEX("qkey", struct traffic_arg, qkey, 0),
	SCN_O_FLAG("grh", struct traffic_arg, grh),
};
static const struct scn_optset send_set = SCN_OPTSET(send_opts);

/* mcast takes the P_Key of its group and always a GRH (IBA 8.4). */
static const struct scn_opt mcast_opts[] = {
	TRAFFIC_OPTS,
	SCN_O_HEX("qkey", struct traffic_arg, qkey, 0),
};
static const struct scn_optset mcast_set = SCN_OPTSET(mcast_opts);

#define TRAFFIC_DEFAULTS \
	SCN_FLOW_DEFAULTS, \
	.pkey = DEFAULT_PKEY, .qkey = IMC_SCN_QKEY

static const struct scn_arg send_args[] = {
	SCN_A_HOST(struct traffic_arg, src),
	SCN_A_HOST(struct traffic_arg, dst),
};
static const struct scn_desc send_desc = {
	.usage = "expected 'send FROM TO [count=N] [size=BYTES] [interval=TIME] [grh] [pkey=P] [qkey=Q] [sl=N]'",
	.min = 2, SCN_ARGS(send_args), .opts = &send_set,
	.print_always = ~0ull,	.size = sizeof(struct traffic_arg),
	.defaults = &(const struct traffic_arg){ TRAFFIC_DEFAULTS },
};

/* The MLID of a group an earlier line defined: its MGID, P_Key and
 * Q_Key with it. */
static int mcast_group_parse(struct imc_scn_parser *p,
			     const struct scn_arg *arg, const char *word,
			     void *base)
{
	struct traffic_arg *a = base;
	const struct scn_group *g;
	uint16_t mlid = 0;
	int rc = scn_mlid_parse(p, word, &mlid);

	if (rc)
		return rc;
	g = scn_group_find(p->s, mlid);
	if (!g)
		return imc_scn_parse_error(p,
			"no group 0x%04x defined on an earlier line", mlid);
	a->g = *g;
	a->pkey = g->pkey;
	a->qkey = g->qkey;
	return 0;
}

static const struct scn_arg mcast_args[] = {
	SCN_A_HOST(struct traffic_arg, src),
	SCN_A_CUSTOM(struct traffic_arg, g, "an MLID", mcast_group_parse,
		     group_mlid_print, 0),
};
/* count= .. sl= always, qkey= when given */
static const struct scn_desc mcast_desc = {
	.usage = "expected 'mcast FROM MLID [count=N] [size=BYTES] [interval=TIME] [sl=N] [qkey=Q]'",
	.min = 2, SCN_ARGS(mcast_args), .opts = &mcast_set,
	.print_always = 0xf, .keep = SCN_KEEP_GIVEN,
	.given_off = offsetof(struct traffic_arg, given),
	.size = sizeof(struct traffic_arg),
	.defaults = &(const struct traffic_arg){ TRAFFIC_DEFAULTS,
		.mcast = true, .grh = true },
};

/* The destination QP: the host's QP for the same P_Key; when its table
 * lacks that exact P_Key, its QP for the partition's other membership
 * (0x8002 for 0x0002: full and limited members may talk), else its first
 * QP, so that the datagrams still reach the port (and are dropped there,
 * as IBA 10.9.3 says). */
static int dest_qpn(struct imc_scn_ctx *c, const struct traffic_arg *a,
		    uint32_t *qpn)
{
	struct imc_port_attr pa;
	struct imc_qp *qp;
	int rc;

	rc = imc_scn_qp(c, a->dst.node, a->dst.port, a->pkey, IMC_SCN_QKEY,
			&qp);
	if (rc == -EINVAL) {
		rc = imc_fabric_port_attr(imc_scn_fabric(c), a->dst.node,
					  a->dst.port, &pa);
		if (rc)
			return rc;
		uint16_t pkey;

		if (!pa.npkeys) {
			*qpn = 2;
			return 0;
		}
		pkey = pa.pkeys[0];
		for (unsigned i = 0; i < pa.npkeys; i++)
			if ((pa.pkeys[i] & 0x7fff) == (a->pkey & 0x7fff))
				pkey = pa.pkeys[i];
		rc = imc_scn_qp(c, a->dst.node, a->dst.port, pkey,
				IMC_SCN_QKEY, &qp);
	}
	if (rc)
		return rc;
	*qpn = imc_qp_num(qp);
	return 0;
}

static int traffic_run(struct imc_scn_ctx *c, void *data)
{
	const struct traffic_arg *a = data;
	const struct imc_topo *t = imc_scn_topo(c);
	struct scn_flow f = {
		.from = a->src, .follow = !a->mcast, .to = a->dst,
		.qkey = a->qkey, .count = a->count, .size = a->size,
		.interval = a->interval, .id = scn_flow_id(c),
		.ah = { .sl = a->sl, .has_grh = a->grh, .hop_limit = 0xFF },
	};
	int rc;

	/* A member sends from the QP it has attached. */
	rc = imc_scn_qp(c, a->src.node, a->src.port, a->pkey,
			a->mcast ? a->g.qkey : IMC_SCN_QKEY, &f.qp);
	if (rc == -EINVAL)
		return imc_scn_fail(c, rc, "%s has no P_Key 0x%04x in its table",
				    t->node[a->src.node].name, a->pkey);
	if (rc)
		return rc;
	if (a->mcast) {
		f.dqpn = MCAST_QPN;
		f.ah.dlid = a->g.mlid;
		f.ah.dgid = a->g.mgid;
	} else if ((rc = dest_qpn(c, a, &f.dqpn))) {
		return rc;
	}
	return scn_flow_start(c, &f);
}

SCN_DESC_VERB(send, "send", IMC_SCN_ACTION, send_desc, traffic_run);

SCN_DESC_VERB(mcast, "mcast", IMC_SCN_ACTION, mcast_desc, traffic_run);

const struct imc_scn_verb *const scn_builtin_verbs[] = {
	&link_verb, &fault_verb, &sm_verb, &rereg_verb, &lid_verb,
	&pkeys_verb, &group_verb, &send_verb, &mcast_verb,
};
const unsigned scn_builtin_nverbs = IMC_ARRAY_SIZE(scn_builtin_verbs);
