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

#include "scenario/desc.h"
#include "scenario/scn.h"

#define DROP_ALL (-1)

struct counter;

struct subj_arg {
	struct scn_port_arg at;     /* IMC_TOPO_NONE: in total */
	int drop;                   /* enum imc_drop or DROP_ALL */
	const struct counter *k;
	struct imc_scn_hosts set;   /* a host counter's hosts, else n 0 */
};

static const struct subj_arg no_host = { .at.node = IMC_TOPO_NONE };

/* ---- per-host traffic counters: [HOSTS] ---- */

static const struct scn_arg host_args[] = {
	{ .kind = SCN_ARG_HOSTS, .flags = SCN_ARG_OPTIONAL,
	  .offset = offsetof(struct subj_arg, set) },
};
static const struct scn_desc host_desc = {
	.usage = "expected at most one host", .max = 1, SCN_ARGS(host_args),
	.keep = SCN_KEEP_ARG, .arg_off = offsetof(struct subj_arg, k),
	.size = sizeof(struct subj_arg), .defaults = &no_host,
};
SCN_DESC_FUNCS(host, host_desc)

/* ---- hops ---- */

static const struct scn_desc none_desc = {
	.usage = "takes no argument", .keep = SCN_KEEP_GOT,
	.size = sizeof(struct subj_arg), .defaults = &no_host,
};
SCN_DESC_FUNCS(none, none_desc)

static int hops_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	struct imc_fabric_totals tot;

	imc_fabric_totals(imc_scn_fabric(c), &tot);
	*v = tot.hops;
	return 0;
}

/* ---- drops REASON [PORT] ---- */

/* Reason names as imc_drop_str() spells them. */
static int drop_parse_name(const char *word)
{
	if (!strcmp(word, "all"))
		return DROP_ALL;
	for (int d = 0; d < IMC_DROP__COUNT; d++)
		if (scn_word_eq(word, imc_drop_str((enum imc_drop)d)))
			return d;
	return -2;
}

static int reason_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
			const char *word, void *base)
{
	struct subj_arg *a = base;
	char names[256];
	size_t o = 0;

	a->drop = drop_parse_name(word);
	if (a->drop >= DROP_ALL)
		return 0;
	for (int d = 0; d < IMC_DROP__COUNT && o < sizeof(names); d++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s, ",
				      imc_drop_str((enum imc_drop)d));
	return imc_scn_parse_error(p, "expected a reason (%sall), got '%s'",
				   names, word);
}

static void reason_print(FILE *f, const struct imc_topo *t,
			 const struct scn_arg *arg, const void *base)
{
	const struct subj_arg *a = base;

	fprintf(f, " %s", a->drop == DROP_ALL ? "all" :
		imc_drop_str((enum imc_drop)a->drop));
}

static const struct scn_arg drops_args[] = {
	SCN_A_CUSTOM(struct subj_arg, drop, "a reason", reason_parse,
		     reason_print, 0),
	SCN_A_PORT(struct subj_arg, at, SCN_ARG_OPTIONAL),
};
static const struct scn_desc drops_desc = {
	.usage = "expected 'drops REASON [PORT]'", .min = 1, .max = 2,
	SCN_ARGS(drops_args), .size = sizeof(struct subj_arg),
	.defaults = &no_host,
};
SCN_DESC_FUNCS(drops, drops_desc)

static int drops_observe(struct imc_scn_ctx *c, const void *data, uint64_t *v)
{
	const struct subj_arg *a = data;
	const uint64_t *drops;
	struct imc_fabric_totals tot;
	struct imc_port_counters pc;
	int rc;

	if (a->at.node == IMC_TOPO_NONE) {
		imc_fabric_totals(imc_scn_fabric(c), &tot);
		drops = tot.drops;
	} else {
		rc = imc_fabric_port_counters(imc_scn_fabric(c), a->at.node,
					      a->at.port, &pc);
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

/* ---- cable and port counters ---- */

/* ---- PORT counters: cabled (a cable direction's) or any port ---- */

static const struct scn_arg cable_args[] = {
	SCN_A_PORT(struct subj_arg, at, SCN_ARG_CABLED),
};
static const struct scn_arg port_args[] = {
	SCN_A_PORT(struct subj_arg, at, 0),
};

#define PORT_DESC(tab) \
	.usage = "expected one port (NODE:PORT)", .min = 1, .max = 1, \
	SCN_ARGS(tab), .keep = SCN_KEEP_ARG, \
	.arg_off = offsetof(struct subj_arg, k), \
	.size = sizeof(struct subj_arg), .defaults = &no_host

static const struct scn_desc cable_desc = { PORT_DESC(cable_args) };
static const struct scn_desc port_desc = { PORT_DESC(port_args) };
SCN_DESC_FUNCS(cable, cable_desc)
SCN_DESC_FUNCS(port, port_desc)

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

/* ---- counters read at an offset ---- */

/* Where a counter subject's value lives: the struct read for its host or
 * port, and the field in it (offset, width). The subject carries it in
 * .arg and its parsed argument keeps it for observe. */
enum src {
	SRC_HOST,          /* struct scn_host_stats of HOST (optional) */
	SRC_LINK,          /* struct imc_link_counters of a cabled PORT */
	SRC_PORT,          /* struct imc_port_counters of PORT */
	SRC_ATTR,          /* struct imc_port_attr of PORT */
};

struct counter {
	enum src src;
	size_t off, size;
	/* SRC_HOST without a host: the field in struct imc_fabric_totals,
	 * or -1 for the sum over the hosts. */
	long total;
};

static int counter_observe(struct imc_scn_ctx *c, const void *data,
			   uint64_t *v)
{
	const struct subj_arg *a = data;
	const struct counter *k = a->k;
	struct imc_fabric *f = imc_scn_fabric(c);
	union {
		struct scn_host_stats host;
		struct imc_fabric_totals tot;
		struct imc_link_counters link;
		struct imc_port_counters port;
		struct imc_port_attr attr;
	} u;
	size_t off = k->off, size = k->size;
	int rc = 0;

	memset(&u, 0, sizeof(u));
	switch (k->src) {
	case SRC_HOST:
		if (a->set.n) {
			/* A set: the field summed over its hosts. */
			uint64_t sum = 0;

			for (uint32_t i = 0; i < a->set.n; i++) {
				scn_host_stats(c, a->set.h[i].node,
					       a->set.h[i].port, &u.host);
				sum += scn_field_at(&u, off, size);
			}
			*v = sum;
			return 0;
		}
		if (a->at.node == IMC_TOPO_NONE && k->total >= 0) {
			imc_fabric_totals(f, &u.tot);
			off = (size_t)k->total;
			size = sizeof(uint64_t);
		} else {
			scn_host_stats(c, a->at.node, a->at.port, &u.host);
		}
		break;
	case SRC_LINK:
		rc = imc_fabric_link_counters(f, a->at.node, a->at.port,
					      &u.link);
		break;
	case SRC_PORT:
		rc = imc_fabric_port_counters(f, a->at.node, a->at.port,
					      &u.port);
		break;
	case SRC_ATTR:
		rc = imc_fabric_port_attr(f, a->at.node, a->at.port, &u.attr);
		break;
	}
	*v = scn_field_at(&u, off, size);
	return rc;
}

#define COUNTER(pre, src, type, f, total) \
	.parse = pre##_parse, .print = pre##_print, \
	.observe = counter_observe, .free = pre##_free, \
	.arg = &(const struct counter){ src, SCN_FIELD(type, f), total }
#define HOST(f, total) \
	COUNTER(host, SRC_HOST, struct scn_host_stats, f, total)
#define TOTAL(f) (long)offsetof(struct imc_fabric_totals, f)

const struct imc_scn_subject scn_builtin_subjects[] = {
	{ .name = "sent", HOST(sent, TOTAL(sent)) },
	{ .name = "delivered", HOST(delivered, TOTAL(delivered)) },
	{ .name = "dups", HOST(dups, -1) },
	{ .name = "send-errors", HOST(send_errors, -1) },
	SCN_DESC_SUBJECT("hops", none, hops_observe),
	SCN_DESC_SUBJECT("drops", drops, drops_observe),
	{ .name = "lost",
	  COUNTER(cable, SRC_LINK, struct imc_link_counters, lost, -1) },
	{ .name = "duplicated",
	  COUNTER(cable, SRC_LINK, struct imc_link_counters, duplicated, -1) },
	{ .name = "reordered",
	  COUNTER(cable, SRC_LINK, struct imc_link_counters, reordered, -1) },
	{ .name = "packets",
	  COUNTER(cable, SRC_LINK, struct imc_link_counters, packets, -1) },
	{ .name = "tx",
	  COUNTER(port, SRC_PORT, struct imc_port_counters, tx_packets, -1) },
	{ .name = "rx",
	  COUNTER(port, SRC_PORT, struct imc_port_counters, rx_packets, -1) },
	{ .name = "state", .value_parse = state_value_parse,
	  .value_format = state_value_format,
	  COUNTER(port, SRC_ATTR, struct imc_port_attr, state, -1) },
	{ .name = "lid", .value_format = scn_lid_format,
	  COUNTER(port, SRC_ATTR, struct imc_port_attr, lid, -1) },
	{ .name = "smlid", .value_format = scn_lid_format,
	  COUNTER(port, SRC_ATTR, struct imc_port_attr, sm_lid, -1) },
};

const unsigned scn_builtin_nsubjects = IMC_ARRAY_SIZE(scn_builtin_subjects);
