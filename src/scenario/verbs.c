/* Built-in scenario verbs: link, fault, sm, reregister, lid, pkeys,
 * group, send and mcast. Each is a parse/print/run/free quadruple, the
 * same interface verbs from other modules use. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scn.h"
#include "util/bytes.h"

#define MCAST_QPN 0xFFFFFFu   /* multicast DestQP, IBA 10.5.2.5 */
#define DEFAULT_PKEY 0xFFFF   /* default partition, full member (IBA 10.9) */

static void *alloc_data(size_t n)
{
	return calloc(1, n);
}

/* ---- link params, shared with the links setting ---- */

/* By SCN_LP_* bit (IBA-independent link model of the fabric). */
static const struct scn_opt link_opts[] = {
	SCN_O_TIME("latency", struct imc_link_params, latency),
	SCN_O_BPS("bandwidth", struct imc_link_params, bits_per_sec),
	SCN_O_PROB("loss", struct imc_link_params, loss),
	SCN_O_PROB("dup", struct imc_link_params, dup),
	SCN_O_PROB("reorder", struct imc_link_params, reorder),
	SCN_O_TIME("reorder-delay", struct imc_link_params, reorder_delay),
};
const struct scn_optset scn_link_optset = SCN_OPTSET(link_opts);

int scn_link_params_parse(struct imc_scn_parser *p, unsigned argc,
			  const char *const *argv, struct imc_link_params *lp,
			  unsigned *mask)
{
	uint64_t given = 0;
	int rc = scn_opts_parse(p, &scn_link_optset, argc, argv, lp, &given);

	*mask = (unsigned)given;
	return rc;
}

/* ---- a flow's count=, size=, interval= and sl=, shared by the senders ---- */

struct flow_opts {
	uint32_t count, size;
	imc_time_t interval;
	uint8_t sl;
};

#define FLOW_OPTS(T) \
	SCN_O_UINT("count", T, count, 1, 0), \
	SCN_O_UINT("size", T, size, 0, SCN_FLOW_SIZE_MAX), \
	SCN_O_TIME("interval", T, interval)

/* IBA 7.6.5: service levels are 4 bits. */
static const struct scn_opt flow_opts[] = {
	FLOW_OPTS(struct flow_opts),
	SCN_O_UINT("sl", struct flow_opts, sl, 0, 15),
};
static const struct scn_optset mcast_flow_set = SCN_OPTSET(flow_opts);
/* count= through interval=, and size= and interval= alone */
static const struct scn_optset flow_set = { flow_opts, 3, NULL };
static const struct scn_optset flow_nocount_set = { flow_opts + 1, 2, NULL };

int scn_flow_kv(struct imc_scn_parser *p, const char *word, uint32_t *count,
		uint32_t *size, imc_time_t *interval, bool *matched)
{
	struct flow_opts fo = { count ? *count : 1, *size, *interval, 0 };
	uint64_t given = 0;
	int rc = scn_opt_word(p, count ? &flow_set : &flow_nocount_set, word,
			      &fo, &given, matched);

	if (count)
		*count = fo.count;
	*size = fo.size;
	*interval = fo.interval;
	return rc;
}

void scn_flow_print(FILE *f, uint32_t count, uint32_t size,
		    imc_time_t interval)
{
	struct flow_opts fo = { count, size, interval, 0 };

	scn_opts_print(f, &flow_set, &fo, ~0ull);
}

int scn_mcast_flow_opts(struct imc_scn_parser *p, unsigned argc,
			const char *const *argv, uint32_t *count, uint32_t *size,
			imc_time_t *interval, uint8_t *sl)
{
	struct flow_opts fo = { *count, *size, *interval, *sl };
	int rc = scn_opts_parse(p, &mcast_flow_set, argc, argv, &fo, NULL);

	*count = fo.count;
	*size = fo.size;
	*interval = fo.interval;
	*sl = fo.sl;
	return rc;
}

void scn_mcast_flow_print(FILE *f, uint32_t count, uint32_t size,
			  imc_time_t interval, uint8_t sl)
{
	struct flow_opts fo = { count, size, interval, sl };

	scn_opts_print(f, &mcast_flow_set, &fo, ~0ull);
}

void scn_link_params_print(FILE *f, const struct imc_link_params *lp,
			   unsigned mask)
{
	scn_opts_print(f, &scn_link_optset, lp, mask);
}

/* ---- link down|up PORT ---- */

struct link_arg {
	struct scn_port_arg at;
	bool up;
};

static int link_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	struct link_arg *a;

	if (argc != 2 || (strcmp(argv[0], "down") && strcmp(argv[0], "up")))
		return imc_scn_parse_error(p, "expected 'link down PORT' or 'link up PORT'");
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->up = !strcmp(argv[0], "up");
	return imc_scn_parse_port(p, argv[1], true, &a->at.node, &a->at.port);
}

static void link_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct link_arg *a = data;

	fputs(a->up ? " up" : " down", f);
	scn_print_port_arg(f, t, &a->at);
}

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

static const struct imc_scn_verb verb_link = {
	.name = "link", .kind = IMC_SCN_ACTION, .parse = link_parse,
	.print = link_print, .run = link_run, .free = free,
};

/* ---- fault PORT key=value... ---- */

struct fault_arg {
	struct scn_port_arg at;
	struct imc_link_params lp;
	unsigned mask;
};

static int fault_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	struct fault_arg *a;
	int rc;

	if (argc < 2)
		return imc_scn_parse_error(p,
			"expected 'fault PORT' and loss=, dup=, reorder=, reorder-delay=, latency= or bandwidth=");
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = imc_scn_parse_port(p, argv[0], true, &a->at.node, &a->at.port);
	if (rc)
		return rc;
	return scn_link_params_parse(p, argc - 1, argv + 1, &a->lp, &a->mask);
}

static void fault_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct fault_arg *a = data;

	scn_print_port_arg(f, t, &a->at);
	scn_link_params_print(f, &a->lp, a->mask);
}

/* Keys not given keep the values of the links line. */
static int fault_run(struct imc_scn_ctx *c, void *data)
{
	struct fault_arg *a = data;
	struct imc_link_params lp = imc_scn_config(c)->link;

	if (a->mask & SCN_LP_LATENCY)
		lp.latency = a->lp.latency;
	if (a->mask & SCN_LP_BANDWIDTH)
		lp.bits_per_sec = a->lp.bits_per_sec;
	if (a->mask & SCN_LP_LOSS)
		lp.loss = a->lp.loss;
	if (a->mask & SCN_LP_DUP)
		lp.dup = a->lp.dup;
	if (a->mask & SCN_LP_REORDER)
		lp.reorder = a->lp.reorder;
	if (a->mask & SCN_LP_REORDER_DELAY)
		lp.reorder_delay = a->lp.reorder_delay;
	return imc_fabric_link_params_set(imc_scn_fabric(c), a->at.node,
					  a->at.port, &lp);
}

static const struct imc_scn_verb verb_fault = {
	.name = "fault", .kind = IMC_SCN_ACTION, .parse = fault_parse,
	.print = fault_print, .run = fault_run, .free = free,
};

/* ---- sm move PORT ---- */

static int sm_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	struct scn_port_arg *a;

	if (argc != 2 || strcmp(argv[0], "move"))
		return imc_scn_parse_error(p, "expected 'sm move HOST'");
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	return imc_scn_parse_host(p, argv[1], &a->node, &a->port);
}

static void sm_print(FILE *f, const struct imc_topo *t, const void *data)
{
	fputs(" move", f);
	scn_print_port_arg(f, t, data);
}

static int sm_run(struct imc_scn_ctx *c, void *data)
{
	const struct scn_port_arg *a = data;

	return imc_fabric_sm_move(imc_scn_fabric(c), a->node, a->port);
}

static const struct imc_scn_verb verb_sm = {
	.name = "sm", .kind = IMC_SCN_ACTION, .parse = sm_parse,
	.print = sm_print, .run = sm_run, .free = free,
};

/* ---- reregister HOST|all ---- */

static int rereg_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	struct scn_port_arg *a;

	if (argc != 1)
		return imc_scn_parse_error(p, "expected 'reregister HOST' or 'reregister all'");
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	if (!strcmp(argv[0], "all")) {
		a->node = IMC_TOPO_NONE;
		return 0;
	}
	return imc_scn_parse_host(p, argv[0], &a->node, &a->port);
}

static void rereg_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct scn_port_arg *a = data;

	if (a->node == IMC_TOPO_NONE)
		fputs(" all", f);
	else
		scn_print_port_arg(f, t, a);
}

static int rereg_run(struct imc_scn_ctx *c, void *data)
{
	const struct scn_port_arg *a = data;

	return imc_fabric_client_reregister(imc_scn_fabric(c), a->node,
					    a->port);
}

static const struct imc_scn_verb verb_rereg = {
	.name = "reregister", .kind = IMC_SCN_ACTION, .parse = rereg_parse,
	.print = rereg_print, .run = rereg_run, .free = free,
};

/* ---- lid HOST LID ---- */

struct lid_arg {
	struct scn_port_arg at;
	uint16_t lid;
};

static int lid_parse(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data)
{
	struct lid_arg *a;
	uint64_t v;
	int rc;

	if (argc != 2)
		return imc_scn_parse_error(p, "expected 'lid HOST LID'");
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = imc_scn_parse_host(p, argv[0], &a->at.node, &a->at.port);
	if (rc)
		return rc;
	/* IBA 4.1.3: unicast LIDs are 0x0001..0xBFFF. */
	rc = imc_scn_parse_uint(p, "LID", argv[1], 0xBFFF, &v);
	if (rc)
		return rc;
	if (v == 0)
		return imc_scn_parse_error(p, "LID: expected a unicast LID 1..0xbfff, got '%s'",
					   argv[1]);
	a->lid = (uint16_t)v;
	return 0;
}

static void lid_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct lid_arg *a = data;

	scn_print_port_arg(f, t, &a->at);
	fprintf(f, " 0x%04x", a->lid);
}

static int lid_run(struct imc_scn_ctx *c, void *data)
{
	const struct lid_arg *a = data;
	int rc = imc_fabric_lid_change(imc_scn_fabric(c), a->at.node,
				       a->at.port, a->lid);

	if (rc == -EBUSY)
		return imc_scn_fail(c, rc, "LID 0x%04x is taken", a->lid);
	return rc;
}

static const struct imc_scn_verb verb_lid = {
	.name = "lid", .kind = IMC_SCN_ACTION, .parse = lid_parse,
	.print = lid_print, .run = lid_run, .free = free,
};

/* ---- pkeys HOST PKEY... ---- */

struct pkeys_arg {
	struct scn_port_arg at;
	unsigned n;
	uint16_t pkeys[IMC_PKEY_TABLE_MAX];
};

static int pkeys_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	struct pkeys_arg *a;
	int rc;

	if (argc < 1)
		return imc_scn_parse_error(p, "expected 'pkeys HOST PKEY...'");
	if (argc - 1 > IMC_PKEY_TABLE_MAX)
		return imc_scn_parse_error(p, "at most %u P_Keys",
					   IMC_PKEY_TABLE_MAX);
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = imc_scn_parse_host(p, argv[0], &a->at.node, &a->at.port);
	for (unsigned i = 1; !rc && i < argc; i++) {
		uint64_t v;

		rc = imc_scn_parse_uint(p, "P_Key", argv[i], 0xFFFF, &v);
		a->pkeys[a->n++] = (uint16_t)v;
	}
	return rc;
}

static void pkeys_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct pkeys_arg *a = data;

	scn_print_port_arg(f, t, &a->at);
	for (unsigned i = 0; i < a->n; i++)
		fprintf(f, " 0x%04x", a->pkeys[i]);
}

static int pkeys_run(struct imc_scn_ctx *c, void *data)
{
	const struct pkeys_arg *a = data;

	return imc_fabric_pkey_set(imc_scn_fabric(c), a->at.node, a->at.port,
				   a->pkeys, a->n);
}

static const struct imc_scn_verb verb_pkeys = {
	.name = "pkeys", .kind = IMC_SCN_ACTION, .parse = pkeys_parse,
	.print = pkeys_print, .run = pkeys_run, .free = free,
};

/* ---- group MLID MGID HOST...|all [pkey=P] [qkey=Q] ---- */

struct group_arg {
	struct scn_group g;
	bool all;
	unsigned n;
	uint32_t *nodes;
	unsigned *ports;
};

static void group_free(void *data)
{
	struct group_arg *a = data;

	if (!a)
		return;
	free(a->nodes);
	free(a->ports);
	free(a);
}

static int parse_mlid(struct imc_scn_parser *p, const char *word,
		      uint16_t *mlid)
{
	uint64_t v;
	int rc = imc_scn_parse_uint(p, "MLID", word, 0xFFFF, &v);

	if (rc)
		return rc;
	if (v < SCN_MLID_MIN || v > SCN_MLID_MAX)
		return imc_scn_parse_error(p,
			"MLID: expected a multicast LID 0xc000..0xfffe, got '%s'",
			word);
	*mlid = (uint16_t)v;
	return 0;
}

static int add_member(struct imc_scn_parser *p, struct group_arg *a,
		      uint32_t node, unsigned port)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->nodes[i] == node && a->ports[i] == port)
			return imc_scn_parse_error(p, "member %s:%u listed twice",
				imc_scn_parser_topo(p)->node[node].name, port);
	a->nodes[a->n] = node;
	a->ports[a->n] = port;
	a->n++;
	return 0;
}

static const struct scn_opt group_opts[] = {
	SCN_O_HEX("pkey", struct scn_group, pkey, 0),
	SCN_O_HEX("qkey", struct scn_group, qkey, 0),
};
static const struct scn_optset group_set = SCN_OPTSET(group_opts);

static int group_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	const struct imc_topo *t = imc_scn_parser_topo(p);
	struct imc_scenario *s = p->s;
	struct group_arg *a;
	uint64_t given = 0;
	size_t cap;
	int rc;

	if (argc < 3)
		return imc_scn_parse_error(p,
			"expected 'group MLID MGID HOST...' or 'group MLID MGID all'");
	a = alloc_data(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->g.line = p->line;
	a->g.pkey = DEFAULT_PKEY;
	a->g.qkey = IMC_SCN_QKEY;
	rc = parse_mlid(p, argv[0], &a->g.mlid);
	if (rc)
		return rc;
	if (scn_group_find(s, a->g.mlid))
		return imc_scn_parse_error(p, "group 0x%04x is already defined on line %u",
			a->g.mlid, scn_group_find(s, a->g.mlid)->line);
	if (imc_gid_parse(argv[1], &a->g.mgid) ||
	    !imc_gid_is_multicast(&a->g.mgid))
		return imc_scn_parse_error(p,
			"MGID: expected a multicast GID (ff..), got '%s'",
			argv[1]);
	cap = t->nnodes < argc ? t->nnodes : argc;
	a->nodes = calloc(cap + 1, sizeof(*a->nodes));
	a->ports = calloc(cap + 1, sizeof(*a->ports));
	if (!a->nodes || !a->ports)
		return -ENOMEM;
	for (unsigned i = 2; i < argc; i++) {
		bool m;

		rc = scn_opt_word(p, &group_set, argv[i], &a->g, &given, &m);
		if (rc || m) {
			if (rc)
				return rc;
		} else if (!strcmp(argv[i], "all")) {
			if (a->all || a->n)
				return imc_scn_parse_error(p,
					"'all' stands for every host: no other member");
			a->all = true;
		} else {
			uint32_t node;
			unsigned port;

			if (a->all)
				return imc_scn_parse_error(p,
					"'all' stands for every host: no other member");
			rc = imc_scn_parse_host(p, argv[i], &node, &port);
			if (!rc)
				rc = add_member(p, a, node, port);
		}
		if (rc)
			return rc;
	}
	if (a->all) {
		uint32_t n = 0;

		free(a->nodes);
		free(a->ports);
		for (uint32_t i = 0; i < t->nnodes; i++)
			n += t->node[i].type == IMC_NODE_HCA;
		a->nodes = calloc(n + 1, sizeof(*a->nodes));
		a->ports = calloc(n + 1, sizeof(*a->ports));
		if (!a->nodes || !a->ports)
			return -ENOMEM;
		for (uint32_t i = 0; i < t->nnodes; i++) {
			const struct imc_topo_node *nd = &t->node[i];
			unsigned pn = 0;

			if (nd->type != IMC_NODE_HCA)
				continue;
			for (unsigned k = 1; k <= nd->nports && !pn; k++)
				if (nd->port[k].peer != IMC_TOPO_NONE)
					pn = k;
			if (!pn)
				continue;
			a->nodes[a->n] = i;
			a->ports[a->n++] = pn;
		}
	}
	if (!a->n)
		return imc_scn_parse_error(p, "a group needs at least one member");
	return scn_group_add(s, &a->g);
}

static void group_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct group_arg *a = data;
	char mgid[IMC_GID_STRLEN];

	imc_gid_format(&a->g.mgid, mgid);
	fprintf(f, " 0x%04x %s", a->g.mlid, mgid);
	if (a->all) {
		fputs(" all", f);
	} else {
		for (unsigned i = 0; i < a->n; i++) {
			fputc(' ', f);
			imc_scn_print_port(f, t, a->nodes[i], a->ports[i]);
		}
	}
	scn_opts_print(f, &group_set, &a->g, ~0ull);
}

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

static const struct imc_scn_verb verb_group = {
	.name = "group", .kind = IMC_SCN_ACTION, .parse = group_parse,
	.print = group_print, .run = group_run, .free = group_free,
};

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
	bool qkey_set;
};

#define TRAFFIC_OPTS \
	FLOW_OPTS(struct traffic_arg), \
	SCN_O_UINT("sl", struct traffic_arg, sl, 0, 15)

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

static int traffic_opts(struct imc_scn_parser *p, unsigned argc,
			const char *const *argv, struct traffic_arg *a)
{
	const struct scn_optset *set = a->mcast ? &mcast_set : &send_set;
	uint64_t given = 0;
	int rc = scn_opts_parse(p, set, argc, argv, a, &given);

	a->qkey_set = scn_opt_given(set, given, "qkey");
	return rc;
}

static struct traffic_arg *traffic_new(void)
{
	struct traffic_arg *a = alloc_data(sizeof(*a));

	if (a) {
		a->count = 1;
		a->size = 64;
		a->interval = IMC_NSEC_PER_USEC;
		a->pkey = DEFAULT_PKEY;
		a->qkey = IMC_SCN_QKEY;
	}
	return a;
}

static int send_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	struct traffic_arg *a;
	int rc;

	if (argc < 2)
		return imc_scn_parse_error(p,
			"expected 'send FROM TO [count=N] [size=BYTES] [interval=TIME] [grh] [pkey=P] [qkey=Q] [sl=N]'");
	a = traffic_new();
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = imc_scn_parse_host(p, argv[0], &a->src.node, &a->src.port);
	if (!rc)
		rc = imc_scn_parse_host(p, argv[1], &a->dst.node, &a->dst.port);
	if (!rc)
		rc = traffic_opts(p, argc - 2, argv + 2, a);
	return rc;
}

static int mcast_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	const struct scn_group *g;
	struct traffic_arg *a;
	uint16_t mlid = 0;
	int rc;

	if (argc < 2)
		return imc_scn_parse_error(p,
			"expected 'mcast FROM MLID [count=N] [size=BYTES] [interval=TIME] [sl=N] [qkey=Q]'");
	a = traffic_new();
	if (!a)
		return -ENOMEM;
	*data = a;
	a->mcast = true;
	a->grh = true;
	rc = imc_scn_parse_host(p, argv[0], &a->src.node, &a->src.port);
	if (!rc)
		rc = parse_mlid(p, argv[1], &mlid);
	if (rc)
		return rc;
	g = scn_group_find(p->s, mlid);
	if (!g)
		return imc_scn_parse_error(p,
			"no group 0x%04x defined on an earlier line", mlid);
	a->g = *g;
	a->pkey = g->pkey;
	a->qkey = g->qkey;
	return traffic_opts(p, argc - 2, argv + 2, a);
}

static void traffic_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct traffic_arg *a = data;

	scn_print_port_arg(f, t, &a->src);
	if (a->mcast)
		fprintf(f, " 0x%04x", a->g.mlid);
	else
		scn_print_port_arg(f, t, &a->dst);
	if (a->mcast)
		scn_opts_print(f, &mcast_set, a, a->qkey_set ? 0x1f : 0xf);
	else
		scn_opts_print(f, &send_set, a, ~0ull);
}

/* One flow per send or mcast line, for the length of a run. */
struct flow {
	struct imc_timer timer;
	struct imc_scn_ctx *c;
	const struct traffic_arg *a;
	struct imc_qp *qp;
	uint32_t dqpn;
	uint32_t seq;
	uint8_t *buf;
};

static void flow_free(void *data)
{
	struct flow *fl = data;

	imc_timer_cancel(imc_scn_loop(fl->c), &fl->timer);
	free(fl->buf);
	free(fl);
}

static void flow_fire(struct imc_timer *t)
{
	struct flow *fl = imc_container_of(t, struct flow, timer);
	const struct traffic_arg *a = fl->a;
	struct imc_scn_ctx *c = fl->c;
	struct imc_ah ah;
	int rc;

	memset(&ah, 0, sizeof(ah));
	ah.sl = a->sl;
	ah.has_grh = a->grh;
	ah.hop_limit = 0xFF;
	if (a->mcast) {
		ah.dlid = a->g.mlid;
		ah.dgid = a->g.mgid;
	} else {
		struct imc_port_attr pa;

		/* The LID as it is now: a LID change is followed. */
		if (!imc_fabric_port_attr(imc_scn_fabric(c), a->dst.node,
					  a->dst.port, &pa)) {
			ah.dlid = pa.lid;
			ah.dgid = pa.gid;
		}
	}
	if (a->size >= IMC_SCN_HDR_SIZE)
		imc_put32(fl->buf + 8, fl->seq);
	rc = imc_qp_send(fl->qp, &ah, fl->dqpn, a->qkey, fl->buf, a->size);
	imc_scn_count_send(c, a->src.node, a->src.port, rc);
	if (++fl->seq < a->count)
		imc_timer_arm_in(imc_scn_loop(c), &fl->timer, a->interval);
}

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
	struct flow *fl;
	int rc;

	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	fl->buf = calloc(1, a->size ? a->size : 1);
	if (!fl->buf) {
		free(fl);
		return -ENOMEM;
	}
	fl->c = c;
	fl->a = a;
	imc_timer_init(&fl->timer, flow_fire);
	rc = imc_scn_data_set(c, a, fl, flow_free);
	if (rc) {
		free(fl->buf);
		free(fl);
		return rc;
	}
	/* A member sends from the QP it has attached. */
	rc = imc_scn_qp(c, a->src.node, a->src.port, a->pkey,
			a->mcast ? a->g.qkey : IMC_SCN_QKEY, &fl->qp);
	if (rc == -EINVAL)
		return imc_scn_fail(c, rc, "%s has no P_Key 0x%04x in its table",
				    t->node[a->src.node].name, a->pkey);
	if (rc)
		return rc;
	if (a->mcast)
		fl->dqpn = MCAST_QPN;
	else if ((rc = dest_qpn(c, a, &fl->dqpn)))
		return rc;
	for (uint32_t i = 0; i < a->size; i++)
		fl->buf[i] = (uint8_t)i;
	if (a->size >= IMC_SCN_HDR_SIZE) {
		imc_put32(fl->buf, IMC_SCN_MAGIC);
		imc_put32(fl->buf + 4, scn_flow_id(c));
	}
	/* The first datagram leaves now, from the loop. */
	return imc_timer_arm_in(imc_scn_loop(c), &fl->timer, 0);
}

static const struct imc_scn_verb verb_send = {
	.name = "send", .kind = IMC_SCN_ACTION, .parse = send_parse,
	.print = traffic_print, .run = traffic_run, .free = free,
};

static const struct imc_scn_verb verb_mcast = {
	.name = "mcast", .kind = IMC_SCN_ACTION, .parse = mcast_parse,
	.print = traffic_print, .run = traffic_run, .free = free,
};

const struct imc_scn_verb *const scn_builtin_verbs[] = {
	&verb_link, &verb_fault, &verb_sm, &verb_rereg, &verb_lid,
	&verb_pkeys, &verb_group, &verb_send, &verb_mcast,
};
const unsigned scn_builtin_nverbs = IMC_ARRAY_SIZE(scn_builtin_verbs);
