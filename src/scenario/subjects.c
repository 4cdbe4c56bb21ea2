/* Built-in expectation subjects.
 *
 *   sent|delivered|dups|send-errors [HOSTS]  scenario traffic of a host or
 *                                            a set of hosts (summed), or
 *                                            in total without HOSTS
 *   hops                                     cable traversals in total
 *   drops REASON|all [PORT]                  fabric drops, total or at a port
 *   lost|duplicated|reordered|packets PORT   the cable direction leaving PORT
 *   tx|rx PORT                               packets through a port
 *   state|lid|smlid PORT                     PortInfo values now
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scenario/scn.h"

#define DROP_ALL (-1)

struct subj_arg {
	uint32_t node;     /* IMC_TOPO_NONE: in total */
	unsigned port;
	int drop;          /* enum imc_drop or DROP_ALL */
	struct imc_scn_hosts set;   /* a host subject's set, else n 0 */
};

static struct subj_arg *new_arg(void **data)
{
	struct subj_arg *a = calloc(1, sizeof(*a));

	if (a)
		a->node = IMC_TOPO_NONE;
	*data = a;
	return a;
}

static void print_arg_port(FILE *f, const struct imc_topo *t,
			   const struct subj_arg *a)
{
	if (a->node != IMC_TOPO_NONE) {
		fputc(' ', f);
		imc_scn_print_port(f, t, a->node, a->port);
	}
}

/* ---- per-host traffic counters ---- */

static int host_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	struct subj_arg *a;
	int rc;

	if (argc > 1)
		return imc_scn_parse_error(p, "expected at most one host");
	a = new_arg(data);
	if (!a)
		return -ENOMEM;
	if (argc == 0)
		return 0;
	rc = imc_scn_parse_hosts(p, argv[0], &a->set);
	if (!rc && a->set.form == IMC_SCN_HOSTS_ONE) {
		a->node = a->set.h[0].node;
		a->port = a->set.h[0].port;
		imc_scn_hosts_free(&a->set);
	}
	return rc;
}

static void host_free(void *data)
{
	struct subj_arg *a = data;

	if (a)
		imc_scn_hosts_free(&a->set);
	free(a);
}

static void port_print(FILE *f, const struct imc_topo *t, const void *data)
{
	print_arg_port(f, t, data);
}

static void host_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct subj_arg *a = data;

	if (a->set.n)
		imc_scn_print_hosts(f, t, &a->set);
	else
		print_arg_port(f, t, a);
}

/* The counters of a's host, or the sum over its set. */
static void host_stats(struct imc_scn_ctx *c, const struct subj_arg *a,
		       struct scn_host_stats *st)
{
	struct scn_host_stats one;

	if (!a->set.n) {
		scn_host_stats(c, a->node, a->port, st);
		return;
	}
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < a->set.n; i++) {
		scn_host_stats(c, a->set.h[i].node, a->set.h[i].port, &one);
		st->sent += one.sent;
		st->send_errors += one.send_errors;
		st->delivered += one.delivered;
		st->dups += one.dups;
	}
}

static bool in_total(const struct subj_arg *a)
{
	return a->node == IMC_TOPO_NONE && !a->set.n;
}

static int sent_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	const struct subj_arg *a = data;
	struct scn_host_stats st;

	if (in_total(a)) {
		struct imc_fabric_totals tot;

		imc_fabric_totals(imc_scn_fabric(c), &tot);
		*v = tot.sent;
		return 0;
	}
	host_stats(c, a, &st);
	*v = st.sent;
	return 0;
}

static int delivered_observe(struct imc_scn_ctx *c, const void *data,
			     uint64_t *v)
{
	const struct subj_arg *a = data;
	struct scn_host_stats st;

	if (in_total(a)) {
		struct imc_fabric_totals tot;

		imc_fabric_totals(imc_scn_fabric(c), &tot);
		*v = tot.delivered;
		return 0;
	}
	host_stats(c, a, &st);
	*v = st.delivered;
	return 0;
}

static int dups_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	const struct subj_arg *a = data;
	struct scn_host_stats st;

	host_stats(c, a, &st);
	*v = st.dups;
	return 0;
}

static int errors_observe(struct imc_scn_ctx *c, const void *data,
			  uint64_t *v)
{
	const struct subj_arg *a = data;
	struct scn_host_stats st;

	host_stats(c, a, &st);
	*v = st.send_errors;
	return 0;
}

static const struct imc_scn_subject subj_sent = {
	.name = "sent", .parse = host_parse, .print = host_print,
	.observe = sent_observe, .free = host_free,
};
static const struct imc_scn_subject subj_delivered = {
	.name = "delivered", .parse = host_parse, .print = host_print,
	.observe = delivered_observe, .free = host_free,
};
static const struct imc_scn_subject subj_dups = {
	.name = "dups", .parse = host_parse, .print = host_print,
	.observe = dups_observe, .free = host_free,
};
static const struct imc_scn_subject subj_errors = {
	.name = "send-errors", .parse = host_parse, .print = host_print,
	.observe = errors_observe, .free = host_free,
};

/* ---- hops ---- */

static int none_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	if (argc)
		return imc_scn_parse_error(p, "takes no argument, got '%s'",
					   argv[0]);
	return new_arg(data) ? 0 : -ENOMEM;
}

static int hops_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_fabric_totals tot;

	imc_fabric_totals(imc_scn_fabric(c), &tot);
	*v = tot.hops;
	return 0;
}

static const struct imc_scn_subject subj_hops = {
	.name = "hops", .parse = none_parse, .print = port_print,
	.observe = hops_observe, .free = free,
};

/* ---- drops REASON [PORT] ---- */

/* Reason names as imc_drop_str() spells them; '_' reads as '-'. */
static int drop_parse_name(const char *word)
{
	char buf[32];
	size_t n = strlen(word);

	if (!strcmp(word, "all"))
		return DROP_ALL;
	if (n >= sizeof(buf))
		return -2;
	for (size_t i = 0; i <= n; i++)
		buf[i] = word[i] == '_' ? '-' : word[i];
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		if (!strcmp(buf, imc_drop_str((enum imc_drop)d)))
			return d;
	return -2;
}

static int drops_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	struct subj_arg *a;

	if (argc < 1 || argc > 2)
		return imc_scn_parse_error(p, "expected 'drops REASON [PORT]'");
	a = new_arg(data);
	if (!a)
		return -ENOMEM;
	a->drop = drop_parse_name(argv[0]);
	if (a->drop < DROP_ALL) {
		char names[256];
		size_t o = 0;

		for (int d = 0; d < IMC_DROP__COUNT && o < sizeof(names); d++)
			o += (size_t)snprintf(names + o, sizeof(names) - o,
					      "%s, ", imc_drop_str((enum imc_drop)d));
		return imc_scn_parse_error(p,
			"expected a reason (%sall), got '%s'", names, argv[0]);
	}
	if (argc == 2)
		return imc_scn_parse_port(p, argv[1], false, &a->node,
					  &a->port);
	return 0;
}

static void drops_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct subj_arg *a = data;

	fprintf(f, " %s", a->drop == DROP_ALL ? "all" :
		imc_drop_str((enum imc_drop)a->drop));
	print_arg_port(f, t, a);
}

static int drops_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	const struct subj_arg *a = data;
	const uint64_t *drops;
	struct imc_fabric_totals tot;
	struct imc_port_counters pc;
	int rc;

	if (a->node == IMC_TOPO_NONE) {
		imc_fabric_totals(imc_scn_fabric(c), &tot);
		drops = tot.drops;
	} else {
		rc = imc_fabric_port_counters(imc_scn_fabric(c), a->node,
					      a->port, &pc);
		if (rc)
			return rc;
		drops = pc.drops;
	}
	if (a->drop == DROP_ALL) {
		*v = 0;
		for (int d = 0; d < IMC_DROP__COUNT; d++)
			*v += drops[d];
	} else {
		*v = drops[a->drop];
	}
	return 0;
}

static const struct imc_scn_subject subj_drops = {
	.name = "drops", .parse = drops_parse, .print = drops_print,
	.observe = drops_observe, .free = free,
};

/* ---- cable and port counters ---- */

static int port_parse_common(struct imc_scn_parser *p, unsigned argc,
			     const char *const *argv, void **data,
			     bool cabled)
{
	struct subj_arg *a;

	if (argc != 1)
		return imc_scn_parse_error(p, "expected one port (NODE:PORT)");
	a = new_arg(data);
	if (!a)
		return -ENOMEM;
	return imc_scn_parse_port(p, argv[0], cabled, &a->node, &a->port);
}

static int cable_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	return port_parse_common(p, argc, argv, data, true);
}

static int port_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	return port_parse_common(p, argc, argv, data, false);
}

static int link_counters(struct imc_scn_ctx *c, const void *data,
			 struct imc_link_counters *lc)
{
	const struct subj_arg *a = data;

	return imc_fabric_link_counters(imc_scn_fabric(c), a->node, a->port,
					lc);
}

static int lost_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_link_counters lc;
	int rc = link_counters(c, data, &lc);

	*v = lc.lost;
	return rc;
}

static int duplicated_observe(struct imc_scn_ctx *c, const void *data,
			      uint64_t *v)
{
	struct imc_link_counters lc;
	int rc = link_counters(c, data, &lc);

	*v = lc.duplicated;
	return rc;
}

static int reordered_observe(struct imc_scn_ctx *c, const void *data,
			     uint64_t *v)
{
	struct imc_link_counters lc;
	int rc = link_counters(c, data, &lc);

	*v = lc.reordered;
	return rc;
}

static int packets_observe(struct imc_scn_ctx *c, const void *data,
			   uint64_t *v)
{
	struct imc_link_counters lc;
	int rc = link_counters(c, data, &lc);

	*v = lc.packets;
	return rc;
}

static int port_counters(struct imc_scn_ctx *c, const void *data,
			 struct imc_port_counters *pc)
{
	const struct subj_arg *a = data;

	memset(pc, 0, sizeof(*pc));
	return imc_fabric_port_counters(imc_scn_fabric(c), a->node, a->port,
					pc);
}

static int tx_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_port_counters pc;
	int rc = port_counters(c, data, &pc);

	*v = pc.tx_packets;
	return rc;
}

static int rx_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_port_counters pc;
	int rc = port_counters(c, data, &pc);

	*v = pc.rx_packets;
	return rc;
}

static const struct imc_scn_subject subj_lost = {
	.name = "lost", .parse = cable_parse, .print = port_print,
	.observe = lost_observe, .free = free,
};
static const struct imc_scn_subject subj_duplicated = {
	.name = "duplicated", .parse = cable_parse, .print = port_print,
	.observe = duplicated_observe, .free = free,
};
static const struct imc_scn_subject subj_reordered = {
	.name = "reordered", .parse = cable_parse, .print = port_print,
	.observe = reordered_observe, .free = free,
};
static const struct imc_scn_subject subj_packets = {
	.name = "packets", .parse = cable_parse, .print = port_print,
	.observe = packets_observe, .free = free,
};
static const struct imc_scn_subject subj_tx = {
	.name = "tx", .parse = port_parse, .print = port_print,
	.observe = tx_observe, .free = free,
};
static const struct imc_scn_subject subj_rx = {
	.name = "rx", .parse = port_parse, .print = port_print,
	.observe = rx_observe, .free = free,
};

/* ---- PortInfo ---- */

static int attr(struct imc_scn_ctx *c, const void *data,
		struct imc_port_attr *pa)
{
	const struct subj_arg *a = data;

	memset(pa, 0, sizeof(*pa));
	return imc_fabric_port_attr(imc_scn_fabric(c), a->node, a->port, pa);
}

static int state_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_port_attr pa;
	int rc = attr(c, data, &pa);

	*v = (uint64_t)pa.state;
	return rc;
}

static int lid_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_port_attr pa;
	int rc = attr(c, data, &pa);

	*v = pa.lid;
	return rc;
}

static int smlid_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_port_attr pa;
	int rc = attr(c, data, &pa);

	*v = pa.sm_lid;
	return rc;
}

/* IBA 14.2.5.6 PortState values, any case. */
static const char *const state_names[] = {
	[IMC_PORT_DOWN] = "down", [IMC_PORT_INIT] = "init",
	[IMC_PORT_ARMED] = "armed", [IMC_PORT_ACTIVE] = "active",
};

static int state_value_parse(const char *word, uint64_t *v)
{
	for (unsigned i = IMC_PORT_DOWN; i <= IMC_PORT_ACTIVE; i++) {
		if (!strcasecmp(word, state_names[i])) {
			*v = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void state_value_format(uint64_t v, char *buf, size_t len)
{
	if (v >= IMC_PORT_DOWN && v <= IMC_PORT_ACTIVE)
		snprintf(buf, len, "%s", state_names[v]);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static void lid_value_format(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "0x%04" PRIx64, v);
}

static const struct imc_scn_subject subj_state = {
	.name = "state", .parse = port_parse, .print = port_print,
	.observe = state_observe, .value_parse = state_value_parse,
	.value_format = state_value_format, .free = free,
};
static const struct imc_scn_subject subj_lid = {
	.name = "lid", .parse = port_parse, .print = port_print,
	.observe = lid_observe, .value_format = lid_value_format,
	.free = free,
};
static const struct imc_scn_subject subj_smlid = {
	.name = "smlid", .parse = port_parse, .print = port_print,
	.observe = smlid_observe, .value_format = lid_value_format,
	.free = free,
};

const struct imc_scn_subject *const scn_builtin_subjects[] = {
	&subj_sent, &subj_delivered, &subj_dups, &subj_errors, &subj_hops,
	&subj_drops, &subj_lost, &subj_duplicated, &subj_reordered,
	&subj_packets, &subj_tx, &subj_rx, &subj_state, &subj_lid,
	&subj_smlid,
};
const unsigned scn_builtin_nsubjects = IMC_ARRAY_SIZE(scn_builtin_subjects);
