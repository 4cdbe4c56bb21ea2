/* IPoIB in scenarios (ibmcast/scenario_ipoib.h).
 *
 *   ipoib [queue=N] [queue-group=N] [queue-total=N] [resolve-timeout=TIME]
 *         [resolve-retries=N] [expiry=TIME] [idle=TIME]
 *         [sendonly-full=yes|no]                         setting
 *   ipoib-up HOST [pkey=P] [ADDR/LEN]...                 interface up
 *   ipoib-down HOST [pkey=P]
 *   ipoib-addr HOST [del] ADDR[/LEN] [pkey=P]
 *   ipoib-listen HOST GROUP [pkey=P], ipoib-unlisten HOST GROUP [pkey=P]
 *   ping HOST DEST [count=N] [interval=TIME] [size=N] [pkey=P]
 *   ipoib-send HOST DEST [count=N] [interval=TIME] [size=N] [pkey=P]
 *   ping-all [interval=TIME] [size=N]       every pair that can talk
 *
 * Subjects: ipoib-carrier, ipoib-state, ping-replies, ping-answered,
 * ipoib-received (optionally of one group) and ipoib-counter NAME, each
 * of HOST [pkey=P]; ipoib-cross-partition [HOST [pkey=P]];
 * ipoib-max-queued endpoint|group|total; ping-all-pairs,
 * ping-all-unanswered.
 *
 * One run's state (struct ipr, found by run_key):
 *  - per HCA port used, the port's one join tracker, which mcast-*
 *    members share (the port tracker service, scn.h): its SA client
 *    sends through the port's QP1 to the SM's LID (the SA of the `sa`
 *    line answers);
 *  - per (port, P_Key), an IP host on the port (ipoib_fabric.h,
 *    imc_ipoib_fabric_host) on the port's tracker: the interface and the
 *    host model of ip_host.h, which answers ICMP and ICMPv6 echo
 *    requests to its addresses and counts what it receives; the run
 *    adds what crosses partitions and which ping-all pairs answered;
 *  - flows of ping and ipoib-send lines.
 *
 * A caller of the run (ibmcast up) may tap an interface
 * (imc_scn_ipoib_tap): its deliveries and carrier changes then go to the
 * tap instead of the host model, so that a real IP stack stands behind
 * the interface.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ibmcast/fabric.h"
#include "ibmcast/gid.h"
#include "ibmcast/ip_host.h"
#include "ibmcast/ipoib.h"
#include "ibmcast/ipoib_fabric.h"
#include "ibmcast/mcast.h"
#include "ibmcast/packet.h"
#include "ibmcast/scenario_ipoib.h"
#include "scenario/desc.h"
#include "scenario/scn.h"
#include "util/bytes.h"
#include "scenario/ipoib_run.h"

/* ------------------------------------------------------------------ */
/* Helpers */

/* IBA 10.9.1: a P_Key's low 15 bits 0 are no partition. */
static int pkey_opt_parse(struct imc_scn_parser *p, const struct scn_opt *o,
			  const char *v, void *field)
{
	uint64_t x;
	int rc = imc_scn_parse_uint(p, o->key, v, 0xFFFF, &x);

	if (!rc && !(x & 0x7FFF))
		rc = imc_scn_parse_error(p, "pkey: 0x%04" PRIx64 " is invalid",
					 x);
	if (!rc)
		memcpy(field, &(uint16_t){ (uint16_t)x }, sizeof(uint16_t));
	return rc;
}

static void pkey_opt_print(FILE *f, const struct scn_opt *o, const void *field)
{
	uint16_t v;

	(void)o;
	memcpy(&v, field, sizeof(v));
	fprintf(f, "0x%04x", v);
}

#define PKEY_OPT(T, f) \
	{ .key = "pkey", .type = SCN_OPT_CUSTOM, .offset = offsetof(T, f), \
	  .parse = pkey_opt_parse, .print = pkey_opt_print }

static const struct scn_opt if_opts[] = { PKEY_OPT(struct if_arg, pkey) };
static const struct scn_optset if_set = SCN_OPTSET(if_opts);

static void print_addr(FILE *f, const struct imc_ip_addr *a, int plen)
{
	char buf[IMC_IP_ADDR_STRLEN];

	imc_ip_addr_format(a, buf);
	fprintf(f, " %s", buf);
	if (plen >= 0)
		fprintf(f, "/%d", plen);
}

/* An address without a prefix: a multicast group (listen, min 1) or a
 * destination (ping, ipoib-send); help names it in the error. */
static int dest_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
		      const char *w, void *base)
{
	struct imc_ip_addr *a = scn_arg_at(base, arg);

	if (imc_ip_addr_parse(w, a, NULL) < 0 ||
	    (arg->min && !imc_ip_addr_is_multicast(a)))
		return imc_scn_parse_error(p,
			"expected an IPv4 or IPv6 %s, got '%s'", arg->help, w);
	return 0;
}

static void dest_print(FILE *f, const struct imc_topo *t,
		       const struct scn_arg *arg, const void *base)
{
	print_addr(f, scn_arg_cat(base, arg), -1);
}

/* ------------------------------------------------------------------ */
/* The ipoib setting */

/* By C_* bit. */
static const struct scn_opt cfg_opts[] = {
	SCN_O_UINT("queue", struct ipoib_cfg, c.queue_endpoint, 0, 1u << 20),
	SCN_O_UINT("queue-group", struct ipoib_cfg, c.queue_group, 0,
		   1u << 20),
	SCN_O_UINT("queue-total", struct ipoib_cfg, c.queue_total, 0,
		   1u << 24),
	SCN_O_TIME_H("resolve-timeout", struct ipoib_cfg, c.resolve_timeout,
		     1, "more than 0"),
	SCN_O_UINT("resolve-retries", struct ipoib_cfg, c.resolve_retries, 0,
		   100),
	SCN_O_TIME("expiry", struct ipoib_cfg, c.neigh_expiry),
	SCN_O_TIME("idle", struct ipoib_cfg, c.sendonly_idle),
	SCN_O_BOOL("sendonly-full", struct ipoib_cfg, c.sa_sendonly_full),
};
static const struct scn_optset cfg_set = SCN_OPTSET(cfg_opts);

static void cfg_init(void *data)
{
	imc_ipoib_config_init(&((struct ipoib_cfg *)data)->c);
}

static int cfg_done(struct imc_scn_parser *p, void *data)
{
	const struct ipoib_cfg *a = data;

	if ((a->mask & (C_QUEUE | C_QUEUE_GROUP | C_QUEUE_TOTAL)) &&
	    (!a->c.queue_endpoint || !a->c.queue_group || !a->c.queue_total))
		return imc_scn_parse_error(p, "queues: at least 1");
	return 0;
}

static const struct scn_desc cfg_desc = {
	.once = "IPoIB is set already", .opts = &cfg_set,
	.keep = SCN_KEEP_GIVEN, .given_off = offsetof(struct ipoib_cfg, mask),
	.given_size = sizeof(unsigned), .size = sizeof(struct ipoib_cfg),
	.init = cfg_init, .done = cfg_done,
};

static int cfg_run(struct imc_scn_ctx *c, void *data)
{
	return imc_scn_data_set(c, &scn_ipoib_cfg_key, data, NULL);
}

SCN_DESC_VERB(cfg, "ipoib", IMC_SCN_SETTING, cfg_desc, cfg_run);

/* ------------------------------------------------------------------ */
/* ipoib-up, ipoib-down, ipoib-addr */

static int addr_word(struct imc_scn_parser *p, const char *w,
		     struct imc_ip_addr *a, unsigned *plen)
{
	if (imc_ip_addr_parse(w, a, plen) < 0)
		return imc_scn_parse_error(p,
			"expected an IPv4 or IPv6 address with /LEN, got '%s'",
			w);
	if (imc_ip_addr_is_multicast(a))
		return imc_scn_parse_error(p,
			"%s is a multicast address", w);
	return 0;
}

/* a + k, in the address's own width (IPv6: 128 bits, big-endian). */
static void addr_plus(const struct imc_ip_addr *a, uint32_t k,
		      struct imc_ip_addr *out)
{
	uint32_t carry = k;

	*out = *a;
	if (a->family == IMC_IPV4) {
		out->v4 = a->v4 + k;
		return;
	}
	for (int i = 15; i >= 0 && carry; i--) {
		uint32_t v = out->v6[i] + (carry & 0xFF);

		out->v6[i] = (uint8_t)v;
		carry = (carry >> 8) + (v >> 8);
	}
}

/* The addresses base .. base + n - 1 stay on base's prefix, off its
 * first address and, for IPv4, off its broadcast address (RFC 919). */
static bool addr_room(const struct imc_ip_addr *base, unsigned plen,
		      uint32_t n)
{
	struct imc_ip_addr last;

	addr_plus(base, n - 1, &last);
	if (base->family == IMC_IPV4) {
		uint32_t mask = plen ? ~0u << (32 - plen) : 0;

		if (last.v4 < base->v4 || (last.v4 & mask) != (base->v4 & mask))
			return false;
		return plen >= 31 || ((base->v4 & ~mask) &&
				      (last.v4 & ~mask) != ~mask);
	}
	for (unsigned b = 0; b < plen; b++)
		if ((base->v6[b / 8] ^ last.v6[b / 8]) & (0x80 >> (b % 8)))
			return false;
	/* No wrap past the top: the last is above the base. */
	return memcmp(last.v6, base->v6, 16) >= 0;
}

/* One more ADDR/LEN of ipoib-up: the k-th host of the set gets it + k. */
static int up_addr_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
			 const char *w, void *base)
{
	struct up_arg *a = base;
	int rc;

	if (a->naddrs == ADDRS_MAX)
		return imc_scn_parse_error(p, "at most %d addresses", ADDRS_MAX);
	rc = addr_word(p, w, &a->addr[a->naddrs], &a->plen[a->naddrs]);
	if (!rc && a->hosts.n > 1 &&
	    !addr_room(&a->addr[a->naddrs], a->plen[a->naddrs], a->hosts.n))
		return imc_scn_parse_error(p,
			"%s: %" PRIu32 " hosts from there leave the prefix or take its broadcast address",
			w, a->hosts.n);
	a->naddrs += !rc;
	return rc;
}

static void up_addrs_print(FILE *f, const struct imc_topo *t,
			   const struct scn_arg *arg, const void *base)
{
	const struct up_arg *a = base;

	for (unsigned i = 0; i < a->naddrs; i++)
		print_addr(f, &a->addr[i], (int)a->plen[i]);
}

static const struct scn_opt up_opts[] = { PKEY_OPT(struct up_arg, pkey) };
static const struct scn_optset up_set = SCN_OPTSET(up_opts);
static const struct scn_arg up_args[] = {
	SCN_A_HOSTS(struct up_arg, hosts),
	{ .kind = SCN_ARG_CUSTOM, .flags = SCN_ARG_REST,
	  .parse = up_addr_parse, .print = up_addrs_print },
};
static const struct scn_desc up_desc = {
	.usage = "expected 'ipoib-up HOSTS [pkey=P] [ADDR/LEN]...'",
	.min = 1, SCN_ARGS(up_args), .opts = &up_set, .opts_first = true,
	.print_always = ~0ull, .size = sizeof(struct up_arg),
	.defaults = &(const struct up_arg){ .pkey = IMC_PKEY_DEFAULT },
};

static int addr_add(struct imc_scn_ctx *c, struct iface *i,
		    const struct imc_ip_addr *a, unsigned plen)
{
	char buf[IMC_IP_ADDR_STRLEN];
	int rc;

	rc = imc_ip_host_addr_add(host_of(i), a, plen);
	if (rc == -EEXIST)
		return 0;
	if (rc == -ENOSPC)
		return imc_scn_fail(c, -ENOSPC, "at most %d addresses",
				    IMC_IP_HOST_ADDRS_MAX);
	if (rc) {
		imc_ip_addr_format(a, buf);
		return imc_scn_fail(c, rc, "cannot add %s: %s", buf,
				    strerror(-rc));
	}
	return 0;
}

static int up_run(struct imc_scn_ctx *c, void *data)
{
	const struct up_arg *a = data;
	int rc = 0;

	for (uint32_t h = 0; !rc && h < a->hosts.n; h++) {
		struct if_arg at = { a->hosts.h[h].node, a->hosts.h[h].port,
				     a->pkey };
		struct iface *i;

		rc = scn_ipoib_iface_get(c, &at, &i);
		for (unsigned k = 0; !rc && k < a->naddrs; k++) {
			struct imc_ip_addr x;

			addr_plus(&a->addr[k], h, &x);
			rc = addr_add(c, i, &x, a->plen[k]);
		}
		if (!rc) {
			rc = imc_ipoib_up(ifc_of(i));
			rc = rc == -EALREADY ? 0 : rc;
		}
	}
	return rc;
}

SCN_DESC_VERB(up, "ipoib-up", IMC_SCN_ACTION, up_desc, up_run);

static const struct scn_arg if_args[] = { SCN_A_HOST(struct if_arg, node) };
static const struct scn_desc if_desc = {
	.usage = "expected HOST [pkey=P]", .min = 1, .max = 2,
	SCN_ARGS(if_args), .opts = &if_set, .print_always = ~0ull,
	 .size = sizeof(struct if_arg),
	.defaults = &(const struct if_arg){ .pkey = IMC_PKEY_DEFAULT },
};

static int down_run(struct imc_scn_ctx *c, void *data)
{
	struct iface *i;
	int rc = scn_ipoib_iface_need(c, data, &i);

	if (!rc)
		imc_ipoib_down(ifc_of(i));
	return rc;
}

SCN_DESC_VERB(down, "ipoib-down", IMC_SCN_ACTION, if_desc, down_run);

static int ifaddr_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
		      const char *w, void *base)
{
	struct addr_arg *a = base;

	return addr_word(p, w, &a->addr, &a->plen);
}

static void ifaddr_print(FILE *f, const struct imc_topo *t,
		       const struct scn_arg *arg, const void *base)
{
	const struct addr_arg *a = base;

	print_addr(f, &a->addr, (int)a->plen);
}

static const char *const del_word[] = { "del", NULL };
static const struct scn_arg addr_args[] = {
	SCN_A_HOST(struct addr_arg, at.node),
	SCN_A_WORD(struct addr_arg, del, del_word, SCN_ARG_OPTIONAL),
	SCN_A_CUSTOM(struct addr_arg, addr, "an address", ifaddr_parse,
		     ifaddr_print, 0),
};
static const struct scn_desc addr_desc = {
	.usage = "expected 'ipoib-addr HOST [del] ADDR[/LEN] [pkey=P]'",
	.min = 2, .max = 4, SCN_ARGS(addr_args), .opts = &if_set,
	.opts_off = offsetof(struct addr_arg, at), .print_always = ~0ull,
	 .size = sizeof(struct addr_arg),
	.defaults = &(const struct addr_arg){ .at.pkey = IMC_PKEY_DEFAULT },
};

static int addr_run(struct imc_scn_ctx *c, void *data)
{
	const struct addr_arg *a = data;
	struct iface *i;
	int rc = scn_ipoib_iface_get(c, &a->at, &i);

	if (rc)
		return rc;
	if (!a->del)
		return addr_add(c, i, &a->addr, a->plen);
	rc = imc_ip_host_addr_del(host_of(i), &a->addr);
	if (rc)
		return imc_scn_fail(c, rc, "no such address");
	return 0;
}

SCN_DESC_VERB(addr, "ipoib-addr", IMC_SCN_ACTION, addr_desc, addr_run);

/* ------------------------------------------------------------------ */
/* ipoib-listen, ipoib-unlisten */

static const struct scn_arg listen_args[] = {
	SCN_A_HOST(struct listen_arg, at.node),
	{ .kind = SCN_ARG_CUSTOM, .offset = offsetof(struct listen_arg, group),
	  .what = "a group", .min = 1, .help = "multicast group",
	  .parse = dest_parse, .print = dest_print },
};
static const struct scn_desc listen_desc = {
	.usage = "expected HOST GROUP [pkey=P]", .min = 2, .max = 3,
	SCN_ARGS(listen_args), .opts = &if_set,
	.opts_off = offsetof(struct listen_arg, at), .print_always = ~0ull,
	 .size = sizeof(struct listen_arg),
	.defaults = &(const struct listen_arg){ .at.pkey = IMC_PKEY_DEFAULT },
};

static int listen_run(struct imc_scn_ctx *c, void *data)
{
	const struct listen_arg *a = data;
	struct iface *i;
	int rc = scn_ipoib_iface_get(c, &a->at, &i);

	if (!rc)
		rc = imc_ipoib_mcast_listen(ifc_of(i),
					    &a->group);
	return rc;
}

static int unlisten_run(struct imc_scn_ctx *c, void *data)
{
	const struct listen_arg *a = data;
	struct iface *i;
	int rc = scn_ipoib_iface_need(c, &a->at, &i);

	if (!rc)
		rc = imc_ipoib_mcast_unlisten(ifc_of(i),
					      &a->group);
	if (rc == -ENOENT)
		return imc_scn_fail(c, rc, "the group is not listened to");
	return rc;
}

SCN_DESC_VERB(listen, "ipoib-listen", IMC_SCN_ACTION, listen_desc,
	      listen_run);
SCN_DESC_VERB(unlisten, "ipoib-unlisten", IMC_SCN_ACTION, listen_desc,
	      unlisten_run);

/* ------------------------------------------------------------------ */
/* ping, ipoib-send */

static int ping_done(struct imc_scn_parser *p, void *data)
{
	const struct flow_arg *a = data;

	if (imc_ip_addr_is_multicast(&a->dst))
		return imc_scn_parse_error(p, "ping: a unicast destination");
	return 0;
}

static const struct scn_opt flow_opts[] = {
	SCN_O_FLOW(struct flow_arg),
	PKEY_OPT(struct flow_arg, at.pkey),
};
static const struct scn_optset flow_set = SCN_OPTSET(flow_opts);
static const struct scn_arg flow_args[] = {
	SCN_A_HOST(struct flow_arg, at.node),
	{ .kind = SCN_ARG_CUSTOM, .offset = offsetof(struct flow_arg, dst),
	  .what = "a destination", .help = "destination",
	  .parse = dest_parse, .print = dest_print },
};

#define FLOW_DESC \
	.usage = "expected HOST DEST [count=N] [interval=TIME] [size=N] [pkey=P]", \
	.min = 2, SCN_ARGS(flow_args), .opts = &flow_set, \
	.print_always = ~0ull, .size = sizeof(struct flow_arg)

static const struct scn_desc ping_desc = {
	FLOW_DESC, .done = ping_done,
	.defaults = &(const struct flow_arg){ .ping = true, .count = 1,
		.size = 56, .interval = IMC_NSEC_PER_MSEC,
		.at.pkey = IMC_PKEY_DEFAULT },
};
static const struct scn_desc send_desc = {
	FLOW_DESC,
	.defaults = &(const struct flow_arg){ SCN_FLOW_DEFAULTS,
		.at.pkey = IMC_PKEY_DEFAULT },
};

SCN_DESC_VERB(ping, "ping", IMC_SCN_ACTION, ping_desc, scn_ipoib_flow_run);
SCN_DESC_VERB(send, "ipoib-send", IMC_SCN_ACTION, send_desc,
	      scn_ipoib_flow_run);

/* ------------------------------------------------------------------ */
/* ping-all */

static const struct scn_opt pa_opts[] = {
	SCN_O_TIME("interval", struct pa_arg, interval),
	SCN_O_UINT("size", struct pa_arg, size, 0, SCN_FLOW_SIZE_MAX),
};
static const struct scn_optset pa_set = SCN_OPTSET(pa_opts);
static const struct scn_desc pa_desc = {
	.opts = &pa_set, .print_always = ~0ull,	.size = sizeof(struct pa_arg),
	.defaults = &(const struct pa_arg){ .interval = 10 * IMC_NSEC_PER_USEC,
					    .size = 56 },
};

SCN_DESC_VERB(pa, "ping-all", IMC_SCN_ACTION, pa_desc, scn_ipoib_pa_run);

/* ------------------------------------------------------------------ */
/* Subjects */

/* The counters of struct imc_ipoib_stats a subject names, by their field
 * ('_' spelled '-'); then "drops" (their sum) and drops-REASON. */
struct counter {
	const char *name;
	size_t off, size;
};

#define K(f) { #f, SCN_FIELD(struct imc_ipoib_stats, f) }
/* The maxima first: max-queued reads them by these indices. */
enum { K_QUEUED_MAX, K_QUEUED_MAX_ENDPOINT, K_QUEUED_MAX_GROUP };
static const struct counter counters[] = {
	K(queued_max),
	K(queued_max_endpoint),
	K(queued_max_group),
	K(tx_packets),
	K(tx_bytes),
	K(rx_packets),
	K(rx_bytes),
	K(tx_mcast),
	K(rx_mcast),
	K(arp_tx),
	K(arp_rx),
	K(nd_tx),
	K(nd_rx),
	K(resolved),
	K(resolve_retries),
	K(resolve_failures),
	K(expired),
	K(endpoints_from_rx),
	K(avs_fabricated),
	K(deferred),
	K(joins),
	K(join_errors),
	K(sendonly_joins),
	K(sendonly_leaves),
	K(carrier_changes),
	K(endpoints),
	K(neighbours),
	K(groups),
	K(queued),
	K(announces),
	K(made_stale),
	K(probes),
	K(revalidated),
};

#define K_DROPS IMC_ARRAY_SIZE(counters)
#define K_DROP_FIRST (K_DROPS + 1)

enum subj_kind { S_CARRIER, S_STATE, S_RECEIVED, S_REPLIES, S_ANSWERED,
		 S_COUNTER, S_CROSS };

/* Over a set of hosts, numbers add up and the carrier is up when every
 * interface's is. */
struct subj_arg {
	enum subj_kind kind;
	bool every;                      /* no host: every interface */
	struct imc_scn_hosts hosts;
	struct if_arg at;                /* the P_Key */
	bool has_group;
	struct imc_ip_addr group;
	unsigned counter;            /* counters[], K_DROPS or K_DROP_FIRST + d */
};

static int counter_parse(const char *w, unsigned *out)
{
	for (unsigned k = 0; k < K_DROPS; k++)
		if (scn_word_eq(w, counters[k].name)) {
			*out = k;
			return 0;
		}
	if (scn_word_eq(w, "drops")) {
		*out = K_DROPS;
		return 0;
	}
	if (!strncmp(w, "drops-", 6) || !strncmp(w, "drops_", 6)) {
		for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
			if (scn_word_eq(w + 6, imc_ipoib_drop_str(d))) {
				*out = K_DROP_FIRST + d;
				return 0;
			}
	}
	return -EINVAL;
}

static void counter_print(FILE *f, unsigned k)
{
	const char *s = k < K_DROPS ? counters[k].name :
			k == K_DROPS ? "drops" : imc_ipoib_drop_str(k - K_DROP_FIRST);

	fputs(k > K_DROPS ? " drops-" : " ", f);
	for (; *s; s++)
		fputc(*s == '_' ? '-' : *s, f);
}

static int ctr_word_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
			  const char *w, void *base)
{
	struct subj_arg *a = base;

	if (counter_parse(w, &a->counter) < 0)
		return imc_scn_parse_error(p,
			"expected a counter (tx-packets, rx-packets, drops, drops-REASON, ...), got '%s'",
			w);
	return 0;
}

static void ctr_word_print(FILE *f, const struct imc_topo *t,
			   const struct scn_arg *arg, const void *base)
{
	counter_print(f, ((const struct subj_arg *)base)->counter);
}

static int rx_group_parse(struct imc_scn_parser *p, const struct scn_arg *arg,
			  const char *w, void *base)
{
	struct subj_arg *a = base;

	if (imc_ip_addr_parse(w, &a->group, NULL) < 0 ||
	    !imc_ip_addr_is_multicast(&a->group))
		return imc_scn_parse_error(p,
			"expected a multicast group or pkey=, got '%s'", w);
	a->has_group = true;
	return 0;
}

static void rx_group_print(FILE *f, const struct imc_topo *t,
			   const struct scn_arg *arg, const void *base)
{
	const struct subj_arg *a = base;

	if (a->has_group)
		print_addr(f, &a->group, -1);
}

static int one_host(struct imc_scn_parser *p, void *data)
{
	const struct subj_arg *a = data;

	if (a->hosts.form != IMC_SCN_HOSTS_ONE)
		return imc_scn_parse_error(p, "ipoib-state: one host");
	return 0;
}

/* A set of hosts, every interface without one (cross-partition). */
static int every_host(struct imc_scn_parser *p, void *data)
{
	struct subj_arg *a = data;

	a->every = !a->hosts.n;
	return 0;
}

static const struct scn_arg hosts_arg[] = {
	SCN_A_HOSTS(struct subj_arg, hosts),
};
static const struct scn_arg rx_args[] = {
	SCN_A_HOSTS(struct subj_arg, hosts),
	SCN_A_CUSTOM(struct subj_arg, group, "a group", rx_group_parse,
		     rx_group_print, SCN_ARG_OPTIONAL),
};
static const struct scn_arg ctr_args[] = {
	SCN_A_HOSTS(struct subj_arg, hosts),
	SCN_A_CUSTOM(struct subj_arg, counter,
		     "a counter (tx-packets, rx-packets, drops, drops-REASON, ...)",
		     ctr_word_parse, ctr_word_print, 0),
};
static const struct scn_arg cross_args[] = {
	{ .kind = SCN_ARG_HOSTS, .flags = SCN_ARG_OPTIONAL,
	  .offset = offsetof(struct subj_arg, hosts) },
};

/* HOSTS and more of tab, then [pkey=P]: a subject of kind k. */
#define SUBJ_DESC(pre, k, tab, n, dn) \
	static const struct scn_desc pre##_desc = { \
		.usage = "expected a host", .min = (n), SCN_ARGS(tab), \
		.opts = &if_set, .opts_off = offsetof(struct subj_arg, at), \
		.print_always = ~0ull, .size = sizeof(struct subj_arg), \
		.defaults = &(const struct subj_arg){ .kind = (k), \
			.at.pkey = IMC_PKEY_DEFAULT }, .done = (dn), \
	}; \
	SCN_DESC_FUNCS(pre, pre##_desc)

SUBJ_DESC(carrier, S_CARRIER, hosts_arg, 1, NULL)
SUBJ_DESC(state, S_STATE, hosts_arg, 1, one_host)
SUBJ_DESC(received, S_RECEIVED, rx_args, 1, NULL)
SUBJ_DESC(replies, S_REPLIES, hosts_arg, 1, NULL)
SUBJ_DESC(answered, S_ANSWERED, hosts_arg, 1, NULL)
SUBJ_DESC(ctr, S_COUNTER, ctr_args, 1, NULL)
SUBJ_DESC(cross, S_CROSS, cross_args, 0, every_host)

/* Nothing at all for every interface. */
static void cross_all_print(FILE *f, const struct imc_topo *t,
			    const void *data)
{
	if (!((const struct subj_arg *)data)->every)
		cross_print(f, t, data);
}

static uint64_t counter_value(const struct imc_ipoib_stats *st, unsigned k)
{
	uint64_t sum = 0;

	if (k < K_DROPS)
		return scn_field_at(st, counters[k].off, counters[k].size);
	if (k > K_DROPS)
		return st->drops[k - K_DROP_FIRST];
	for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
		sum += st->drops[d];
	return sum;
}

static uint64_t observe_one(const struct subj_arg *a, struct iface *i)
{
	const struct imc_ipoib *ifc;
	struct imc_ipoib_stats st;
	struct imc_ip_host_stats hs;

	if (!i) {
		/* No interface: down, nothing counted. */
		return 0;
	}
	ifc = ifc_of(i);
	scn_ipoib_iface_stats(i, &hs);
	switch (a->kind) {
	case S_CARRIER:
		return imc_ipoib_carrier(ifc);
	case S_STATE:
		return imc_ipoib_state(ifc);
	case S_RECEIVED:
		if (a->has_group)
			return imc_ip_host_group_received(host_of(i),
							  &a->group);
		return hs.received;
	case S_REPLIES:
		return hs.ping_replies;
	case S_ANSWERED:
		return hs.ping_answered;
	case S_COUNTER:
		imc_ipoib_get_stats(ifc, &st);
		return counter_value(&st, a->counter);
	case S_CROSS:
		return i->cross;
	}
	return 0;
}

static int subj_observe(struct imc_scn_ctx *c, const void *data,
			uint64_t *value)
{
	const struct subj_arg *a = data;
	struct ipr *r = imc_scn_data(c, &scn_ipoib_run_key);

	*value = a->kind == S_CARRIER ? 1 : 0;
	if (a->every) {
		for (struct iface *j = r ? scn_ipoib_iface_next(r, NULL) : NULL;
		     j; j = scn_ipoib_iface_next(r, j))
			*value += observe_one(a, j);
		return 0;
	}
	for (uint32_t k = 0; k < a->hosts.n; k++) {
		struct if_arg at = { a->hosts.h[k].node, a->hosts.h[k].port,
				     a->at.pkey };
		uint64_t v = observe_one(a, r ? scn_ipoib_iface_find(r, &at) : NULL);

		if (a->kind == S_CARRIER)
			*value &= v;
		else if (a->kind == S_STATE)
			*value = v;
		else
			*value += v;
	}
	return 0;
}

/* ---- ipoib-max-queued endpoint|group|total ---- */

static const char *const mq_words[] = { "endpoint", "group", "total",
					NULL };

static const struct scn_arg mq_args[] = {
	{ .kind = SCN_ARG_WORD, .size = sizeof(unsigned), .names = mq_words },
};
static const struct scn_desc mq_desc = {
	.usage = "expected endpoint, group or total", .min = 1,
	SCN_ARGS(mq_args), .size = sizeof(unsigned),
};
SCN_DESC_FUNCS(mq, mq_desc)

/* The most packets one queue of the kind held at once, over every
 * interface of the run. */
static int mq_observe(struct imc_scn_ctx *c, const void *data,
		      uint64_t *value)
{
	static const unsigned counter[] = {
		K_QUEUED_MAX_ENDPOINT, K_QUEUED_MAX_GROUP, K_QUEUED_MAX,
	};
	const struct ipr *r = imc_scn_data(c, &scn_ipoib_run_key);
	unsigned k = counter[*(const unsigned *)data];

	*value = 0;
	for (const struct iface *i = r ? scn_ipoib_iface_next(r, NULL) : NULL;
	     i; i = scn_ipoib_iface_next(r, i)) {
		struct imc_ipoib_stats st;
		uint64_t v;

		imc_ipoib_get_stats(ifc_of(i), &st);
		v = counter_value(&st, k);
		if (v > *value)
			*value = v;
	}
	return 0;
}

/* ---- ping-all-pairs, ping-all-unanswered ---- */

static uint64_t pa_count(struct imc_scn_ctx *c, bool unanswered)
{
	const struct ipr *r = imc_scn_data(c, &scn_ipoib_run_key);
	uint64_t n = 0;

	for (const struct round *rd = r ? r->rounds : NULL; rd; rd = rd->next)
		for (size_t k = 0; k < rd->n; k++)
			n += !unanswered || !rd->p[k].answered;
	return n;
}

static int pa_pairs_observe(struct imc_scn_ctx *c, const void *data,
			    uint64_t *value)
{
	(void)data;
	*value = pa_count(c, false);
	return 0;
}

static int pa_unanswered_observe(struct imc_scn_ctx *c, const void *data,
				 uint64_t *value)
{
	(void)data;
	*value = pa_count(c, true);
	return 0;
}

static const struct scn_named carrier_names[] = {
	{ "down", 0 }, { "up", 1 },
};

SCN_NAMED_FUNCS(carrier, carrier_names, false)

static int state_value_parse(const char *w, uint64_t *v)
{
	for (unsigned s = IMC_IPOIB_DOWN; s <= IMC_IPOIB_BACKOFF; s++)
		if (!strcmp(w, imc_ipoib_state_str(s))) {
			*v = s;
			return 0;
		}
	return -EINVAL;
}

static void state_value_format(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", imc_ipoib_state_str((enum imc_ipoib_state)v));
}

static const struct imc_scn_subject subjects[] = {
	SCN_NAMED_SUBJECT("ipoib-carrier", carrier, subj_observe, carrier),
	SCN_NAMED_SUBJECT("ipoib-state", state, subj_observe, state),
	SCN_DESC_SUBJECT("ipoib-received", received, subj_observe),
	SCN_DESC_SUBJECT("ping-replies", replies, subj_observe),
	SCN_DESC_SUBJECT("ping-answered", answered, subj_observe),
	SCN_DESC_SUBJECT("ipoib-counter", ctr, subj_observe),
	{ .name = "ipoib-cross-partition", .parse = cross_parse,
	  .print = cross_all_print, .observe = subj_observe,
	  .free = cross_free },
	SCN_DESC_SUBJECT("ipoib-max-queued", mq, mq_observe),
	SCN_DESC_SUBJECT("ping-all-pairs", scn_bare, pa_pairs_observe),
	SCN_DESC_SUBJECT("ping-all-unanswered", scn_bare,
			 pa_unanswered_observe),
};

static const struct scn_parts ipoib_parts = {
	SCN_LIST(verbs, const struct imc_scn_verb *, &cfg_verb, &up_verb,
		 &down_verb, &addr_verb, &listen_verb, &unlisten_verb,
		 &ping_verb, &send_verb, &pa_verb),
	SCN_PARTS(subjects, subjects),
	SCN_LIST(sections, const struct imc_scn_section *, &scn_section_ipoib),
};

int imc_scn_lang_add_ipoib(struct imc_scn_lang *l)
{
	return scn_lang_add_parts(l, &ipoib_parts);
}
