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
 *    members share (scn_mcast.h): its SA client sends through the
 *    port's QP1 to the SM's LID (the SA of the `sa` line answers);
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
#include "scenario/scn.h"
#include "scenario/scn_mcast.h"
#include "wire/bytes.h"

#define ADDRS_MAX 16

static const char run_key;   /* imc_scn_data key of struct ipr */
static const char cfg_key;   /* of the ipoib setting */

/* ------------------------------------------------------------------ */
/* Parse data */

enum {
	C_QUEUE = 1u << 0,
	C_QUEUE_GROUP = 1u << 1,
	C_QUEUE_TOTAL = 1u << 2,
	C_RESOLVE_TIMEOUT = 1u << 3,
	C_RESOLVE_RETRIES = 1u << 4,
	C_EXPIRY = 1u << 5,
	C_IDLE = 1u << 6,
	C_SENDONLY_FULL = 1u << 7,
};

struct ipoib_cfg {
	unsigned mask;
	struct imc_ipoib_config c;   /* the fields mask names */
};

struct if_arg {
	uint32_t node;
	unsigned port;
	uint16_t pkey;
};

/* HOSTS: one, or a set whose k-th host (from 0) gets each address plus
 * k. */
struct up_arg {
	struct imc_scn_hosts hosts;
	uint16_t pkey;
	unsigned naddrs;
	struct imc_ip_addr addr[ADDRS_MAX];
	unsigned plen[ADDRS_MAX];
};

struct addr_arg {
	struct if_arg at;
	bool del;
	struct imc_ip_addr addr;
	unsigned plen;
};

struct listen_arg {
	struct if_arg at;
	struct imc_ip_addr group;
};

struct flow_arg {
	struct if_arg at;
	bool ping;
	struct imc_ip_addr dst;
	uint32_t count;
	uint32_t size;
	imc_time_t interval;
};

/* ------------------------------------------------------------------ */
/* Run state */

struct ipr;

struct iface {
	struct iface *next;          /* of its port */
	struct pstate *ps;
	uint16_t pkey;
	/* the interface, its host model, a caller's tap (ipoib_fabric.h) */
	struct imc_ipoib_fabric_host *fh;
	uint64_t cross;              /* from an interface of another
				      * partition */
};

struct pstate {
	struct ipr *r;
	uint32_t node;
	unsigned port;
	struct imc_mcast *mc;        /* the port's (scn_mcast.h) */
	struct iface *ifs;
};

/* One echo request of a ping-all line: from an interface's address to
 * an address of another interface it can reach. */
struct pair {
	struct iface *src;
	struct imc_ip_addr from, to;
	bool answered;
};

/* A ping-all line that ran: its pairs are sent one every interval;
 * requests carry the line's flow number as ICMP identifier and the
 * pair's number + 1 as sequence number, which find the pair again. */
struct round {
	struct round *next;
	uint16_t id;
	uint32_t size;
	imc_time_t interval;
	struct pair *p;
	size_t n, sent;
	struct imc_timer t;
};

struct flow {
	struct flow *next;
	struct iface *i;
	const struct flow_arg *a;
	struct imc_ip_addr src;
	uint16_t id;
	uint32_t sent;
	struct imc_timer t;
};

struct ipr {
	struct imc_scn_ctx *c;
	struct imc_fabric *f;
	struct imc_loop *loop;
	const struct imc_topo *t;
	uint32_t *pbase;             /* first port slot of each node */
	struct pstate **ports;       /* by slot, NULL until used */
	struct flow *flows;
	struct round *rounds;        /* of ping-all lines, newest first */
};

/* ------------------------------------------------------------------ */
/* Helpers */

/* The host model (NULL once stopped) and the interface of i. */
static struct imc_ip_host *host_of(const struct iface *i)
{
	return imc_ipoib_fabric_host_ip(i->fh);
}

static struct imc_ipoib *ifc_of(const struct iface *i)
{
	return imc_ipoib_fabric_host_ipoib(i->fh);
}

static int pkey_kv(struct imc_scn_parser *p, const char *word, uint16_t *pkey,
		   bool *matched)
{
	const char *v;
	uint64_t x;
	int rc;

	*matched = imc_scn_kv(word, "pkey", &v);
	if (!*matched)
		return 0;
	rc = imc_scn_parse_uint(p, "pkey", v, 0xFFFF, &x);
	if (!rc && !(x & 0x7FFF))
		rc = imc_scn_parse_error(p, "pkey: 0x%04" PRIx64 " is invalid",
					 x);
	*pkey = (uint16_t)x;
	return rc;
}

static void print_if(FILE *f, const struct imc_topo *t, const struct if_arg *a)
{
	fputc(' ', f);
	imc_scn_print_port(f, t, a->node, a->port);
}

static void print_pkey(FILE *f, const struct if_arg *a)
{
	fprintf(f, " pkey=0x%04x", a->pkey);
}

static void print_addr(FILE *f, const struct imc_ip_addr *a, int plen)
{
	char buf[IMC_IP_ADDR_STRLEN];

	imc_ip_addr_format(a, buf);
	fprintf(f, " %s", buf);
	if (plen >= 0)
		fprintf(f, "/%d", plen);
}

static int host_arg(struct imc_scn_parser *p, const char *word,
		    struct if_arg *a)
{
	a->pkey = IMC_PKEY_DEFAULT;
	return imc_scn_parse_host(p, word, &a->node, &a->port);
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

static int cfg_parse(struct imc_scn_parser *p, unsigned argc,
		     const char *const *argv, void **data)
{
	unsigned line = scn_setting_line(p->s, "ipoib");
	struct ipoib_cfg *a;
	uint64_t given = 0;
	int rc;

	if (line)
		return imc_scn_parse_error(p, "IPoIB is set already on line %u",
					   line);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	imc_ipoib_config_init(&a->c);
	rc = scn_opts_parse(p, &cfg_set, argc, argv, a, &given);
	a->mask = (unsigned)given;
	if (!rc && (a->mask & (C_QUEUE | C_QUEUE_GROUP | C_QUEUE_TOTAL)) &&
	    (!a->c.queue_endpoint || !a->c.queue_group || !a->c.queue_total))
		return imc_scn_parse_error(p, "queues: at least 1");
	return rc;
}

static void cfg_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct ipoib_cfg *a = data;

	(void)t;
	scn_opts_print(f, &cfg_set, a, a->mask);
}

static int cfg_run(struct imc_scn_ctx *c, void *data)
{
	return imc_scn_data_set(c, &cfg_key, data, NULL);
}

static const struct imc_scn_verb verb_ipoib = {
	.name = "ipoib", .kind = IMC_SCN_SETTING, .parse = cfg_parse,
	.print = cfg_print, .run = cfg_run, .free = free,
};

/* ------------------------------------------------------------------ */
/* Host model */

/* The interface that sent from address a on the port of GID gid (the
 * packet's GRH), or NULL. */
static const struct iface *sender_of(const struct ipr *r,
				     const struct imc_gid *gid,
				     const struct imc_ip_addr *a)
{
	const struct pstate *ps;
	uint32_t node;
	unsigned port;

	if (imc_fabric_port_by_gid(r->f, gid, &node, &port))
		return NULL;
	ps = r->ports[r->pbase[node] + port];
	for (const struct iface *s = ps ? ps->ifs : NULL; s; s = s->next)
		if (imc_ip_host_owns(host_of(s), a))
			return s;
	return NULL;
}

/* An echo reply: the pair of a ping-all round it answers, if any. */
static void host_echo_reply(void *ctx, const struct imc_ip_view *v,
			    uint16_t id, uint16_t seq)
{
	struct iface *i = ctx;

	(void)v;
	for (struct round *rd = i->ps->r->rounds; rd; rd = rd->next)
		if (rd->id == id) {
			if (seq >= 1 && seq <= rd->n && rd->p[seq - 1].src == i)
				rd->p[seq - 1].answered = true;
			return;
		}
}

/* IBA 10.9: a partition's members talk only among themselves; an IP
 * packet from an interface of another partition got through. */
static void host_packet(void *ctx, const struct imc_ipoib_packet *p,
			const struct imc_ip_view *v)
{
	struct iface *i = ctx;
	const struct iface *from;
	struct imc_ip_addr src;

	if (v->version == 4)
		imc_ip_addr_v4(imc_get32(v->src), &src);
	else
		imc_ip_addr_v6(v->src, &src);
	from = sender_of(i->ps->r, &p->src_gid, &src);
	if (from && ((from->pkey ^ i->pkey) & 0x7FFF))
		i->cross++;
}

/* ------------------------------------------------------------------ */
/* Ports: the port's join tracker (scn_mcast.h) */

/* Interfaces stop (leaving their groups through the port's tracker,
 * which lives on), the tracker lets go of their QPs at once, then the QPs
 * go: the trackers' state is freed after this (scn_mcast.h). */
static void port_free(struct pstate *ps)
{
	if (!ps)
		return;
	while (ps->ifs) {
		struct iface *i = ps->ifs;

		ps->ifs = i->next;
		imc_ipoib_fabric_host_destroy(i->fh);
		free(i);
	}
	free(ps);
}

static int port_get(struct ipr *r, uint32_t node, unsigned port,
		    struct pstate **out)
{
	uint32_t slot = r->pbase[node] + port;
	struct pstate *ps = r->ports[slot];
	int rc;

	if (ps) {
		*out = ps;
		return 0;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->r = r;
	ps->node = node;
	ps->port = port;
	/* The port's one tracker: the interfaces' groups and the mcast-*
	 * members' are one membership per group at the SA. */
	rc = scn_mcast_tracker(r->c, node, port, &ps->mc);
	if (rc) {
		free(ps);
		return rc;
	}
	r->ports[slot] = ps;
	*out = ps;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Interfaces */

static struct iface *iface_find(const struct ipr *r, const struct if_arg *a)
{
	const struct pstate *ps = r->ports[r->pbase[a->node] + a->port];

	if (!ps)
		return NULL;
	for (struct iface *i = ps->ifs; i; i = i->next)
		if (!((i->pkey ^ a->pkey) & 0x7FFF))
			return i;
	return NULL;
}

/* The interface goes; its QP stays until the tracker let go of it. */
/* The counts of the host model, with what went to a tap. */
static void iface_stats(const struct iface *i, struct imc_ip_host_stats *st)
{
	const struct imc_ip_host *h = host_of(i);

	if (h)
		imc_ip_host_stats(h, st);
	else
		memset(st, 0, sizeof(*st));
	st->received += imc_ipoib_fabric_host_tapped(i->fh);
}

static int iface_get(struct ipr *r, const struct if_arg *a,
		     struct iface **out)
{
	const struct ipoib_cfg *k0 = imc_scn_data(r->c, &cfg_key);
	struct iface *i = iface_find(r, a);
	struct imc_ipoib_config cfg;
	struct imc_ip_host_ops host = {
		.packet = host_packet, .echo_reply = host_echo_reply,
	};
	struct pstate *ps = NULL;
	int rc;

	if (i) {
		*out = i;
		return 0;
	}
	rc = port_get(r, a->node, a->port, &ps);
	if (rc)
		return rc;
	i = calloc(1, sizeof(*i));
	if (!i)
		return -ENOMEM;
	i->ps = ps;
	i->pkey = a->pkey;
	imc_ipoib_config_init(&cfg);
	if (k0) {
		const struct imc_ipoib_config *k = &k0->c;

		cfg.queue_endpoint = k->queue_endpoint;
		cfg.queue_group = k->queue_group;
		cfg.queue_total = k->queue_total;
		cfg.resolve_timeout = k->resolve_timeout;
		cfg.resolve_retries = k->resolve_retries;
		cfg.neigh_expiry = k->neigh_expiry;
		cfg.sendonly_idle = k->sendonly_idle;
		cfg.sa_sendonly_full = k->sa_sendonly_full;
	}
	cfg.pkey = a->pkey;
	cfg.hash_seed = imc_scn_config(r->c)->seed;
	host.ctx = i;
	rc = imc_ipoib_fabric_host_create(r->f, a->node, a->port, ps->mc,
					  NULL, &cfg, &host, &i->fh);
	if (rc) {
		free(i);
		if (rc == -EINVAL)
			return imc_scn_fail(r->c, rc,
				"%s:%u has no P_Key 0x%04x in its table",
				r->t->node[a->node].name, a->port, a->pkey);
		return rc;
	}
	i->next = ps->ifs;
	ps->ifs = i;
	*out = i;
	return 0;
}

static void flow_free_all(struct ipr *r)
{
	struct flow *fl;

	while ((fl = r->flows)) {
		r->flows = fl->next;
		imc_timer_cancel(r->loop, &fl->t);
		free(fl);
	}
}

static void run_free(void *data)
{
	struct ipr *r = data;
	uint32_t n = r->pbase[r->t->nnodes];

	scn_mcast_end(r->c);
	flow_free_all(r);
	while (r->rounds) {
		struct round *rd = r->rounds;

		r->rounds = rd->next;
		imc_timer_cancel(r->loop, &rd->t);
		free(rd->p);
		free(rd);
	}
	for (uint32_t s = 0; s < n; s++) {
		struct pstate *ps = r->ports[s];

		if (ps)
			port_free(ps);
	}
	free(r->ports);
	free(r->pbase);
	free(r);
}

static int run_get(struct imc_scn_ctx *c, struct ipr **out)
{
	struct ipr *r = imc_scn_data(c, &run_key);
	const struct imc_topo *t = imc_scn_topo(c);
	uint32_t n = 0;
	int rc;

	if (r) {
		*out = r;
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->f = imc_scn_fabric(c);
	r->loop = imc_scn_loop(c);
	r->t = t;
	r->pbase = calloc((size_t)t->nnodes + 1, sizeof(*r->pbase));
	if (!r->pbase) {
		free(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		r->pbase[i] = n;
		n += t->node[i].nports + 1u;
	}
	r->pbase[t->nnodes] = n;
	r->ports = calloc(n ? n : 1, sizeof(*r->ports));
	/* The trackers' state first: ours is freed before it. */
	rc = r->ports ? scn_mcast_prepare(c) : -ENOMEM;
	if (rc) {
		free(r->ports);
		free(r->pbase);
		free(r);
		return rc;
	}
	rc = imc_scn_data_set(c, &run_key, r, run_free);
	if (rc) {
		free(r->ports);
		free(r->pbase);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void scn_ipoib_foreach(struct imc_scn_ctx *c,
		       void (*fn)(void *arg, const struct scn_ipoib_if *i),
		       void *arg)
{
	struct ipr *r = imc_scn_data(c, &run_key);
	uint32_t n = r ? r->pbase[r->t->nnodes] : 0;

	for (uint32_t s = 0; s < n; s++) {
		const struct pstate *ps = r->ports[s];
		const struct iface *prev = NULL, *next;

		/* A port's interfaces (a few) by P_Key: each time the
		 * smallest above the one before. */
		for (; ps; prev = next) {
			struct scn_ipoib_if x;
			struct imc_ip_host_stats st;

			next = NULL;
			for (const struct iface *i = ps->ifs; i; i = i->next)
				if ((!prev || i->pkey > prev->pkey) &&
				    (!next || i->pkey < next->pkey))
					next = i;
			if (!next)
				break;
			x.node = ps->node;
			x.port = ps->port;
			x.pkey = next->pkey;
			x.ifc = ifc_of(next);
			iface_stats(next, &st);
			x.received = st.received;
			x.received_mcast = st.received_mcast;
			x.ping_replies = st.ping_replies;
			x.ping_answered = st.ping_answered;
			fn(arg, &x);
		}
	}
}

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

static int up_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	struct up_arg *a;
	int rc;

	if (argc < 1)
		return imc_scn_parse_error(p,
			"expected 'ipoib-up HOSTS [pkey=P] [ADDR/LEN]...'");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->pkey = IMC_PKEY_DEFAULT;
	rc = imc_scn_parse_hosts(p, argv[0], &a->hosts);
	for (unsigned i = 1; !rc && i < argc; i++) {
		bool m;

		rc = pkey_kv(p, argv[i], &a->pkey, &m);
		if (rc || m)
			continue;
		if (a->naddrs == ADDRS_MAX)
			return imc_scn_parse_error(p,
				"at most %d addresses", ADDRS_MAX);
		rc = addr_word(p, argv[i], &a->addr[a->naddrs],
			       &a->plen[a->naddrs]);
		if (!rc && a->hosts.n > 1 &&
		    !addr_room(&a->addr[a->naddrs], a->plen[a->naddrs],
			       a->hosts.n))
			rc = imc_scn_parse_error(p,
				"%s: %" PRIu32 " hosts from there leave the prefix or take its broadcast address",
				argv[i], a->hosts.n);
		a->naddrs++;
	}
	return rc;
}

static void up_free(void *data)
{
	struct up_arg *a = data;

	if (a)
		imc_scn_hosts_free(&a->hosts);
	free(a);
}

static void up_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct up_arg *a = data;

	imc_scn_print_hosts(f, t, &a->hosts);
	fprintf(f, " pkey=0x%04x", a->pkey);
	for (unsigned i = 0; i < a->naddrs; i++)
		print_addr(f, &a->addr[i], (int)a->plen[i]);
}

static int addr_add(struct ipr *r, struct iface *i,
		    const struct imc_ip_addr *a, unsigned plen)
{
	char buf[IMC_IP_ADDR_STRLEN];
	int rc;

	rc = imc_ip_host_addr_add(host_of(i), a, plen);
	if (rc == -EEXIST)
		return 0;
	if (rc == -ENOSPC)
		return imc_scn_fail(r->c, -ENOSPC, "at most %d addresses",
				    IMC_IP_HOST_ADDRS_MAX);
	if (rc) {
		imc_ip_addr_format(a, buf);
		return imc_scn_fail(r->c, rc, "cannot add %s: %s", buf,
				    strerror(-rc));
	}
	return 0;
}

static int up_run(struct imc_scn_ctx *c, void *data)
{
	const struct up_arg *a = data;
	struct ipr *r;
	int rc = run_get(c, &r);

	for (uint32_t h = 0; !rc && h < a->hosts.n; h++) {
		struct if_arg at = { a->hosts.h[h].node, a->hosts.h[h].port,
				     a->pkey };
		struct iface *i;

		rc = iface_get(r, &at, &i);
		for (unsigned k = 0; !rc && k < a->naddrs; k++) {
			struct imc_ip_addr x;

			addr_plus(&a->addr[k], h, &x);
			rc = addr_add(r, i, &x, a->plen[k]);
		}
		if (!rc) {
			rc = imc_ipoib_up(ifc_of(i));
			rc = rc == -EALREADY ? 0 : rc;
		}
	}
	return rc;
}

static const struct imc_scn_verb verb_up = {
	.name = "ipoib-up", .kind = IMC_SCN_ACTION, .parse = up_parse,
	.print = up_print, .run = up_run, .free = up_free,
};

static int if_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	struct if_arg *a;
	int rc;

	if (argc < 1 || argc > 2)
		return imc_scn_parse_error(p, "expected HOST [pkey=P]");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = host_arg(p, argv[0], a);
	if (!rc && argc == 2) {
		bool m;

		rc = pkey_kv(p, argv[1], &a->pkey, &m);
		if (!rc && !m)
			rc = imc_scn_parse_error(p, "expected pkey=, got '%s'",
						 argv[1]);
	}
	return rc;
}

static void if_print(FILE *f, const struct imc_topo *t, const void *data)
{
	print_if(f, t, data);
	print_pkey(f, data);
}

static int iface_need(struct imc_scn_ctx *c, const struct if_arg *a,
		      struct iface **out)
{
	struct ipr *r;
	int rc = run_get(c, &r);

	if (rc)
		return rc;
	*out = iface_find(r, a);
	if (!*out)
		return imc_scn_fail(c, -ENOENT,
			"%s:%u has no IPoIB interface for P_Key 0x%04x (ipoib-up)",
			imc_scn_topo(c)->node[a->node].name, a->port,
			a->pkey);
	return 0;
}

static int down_run(struct imc_scn_ctx *c, void *data)
{
	struct iface *i;
	int rc = iface_need(c, data, &i);

	if (!rc)
		imc_ipoib_down(ifc_of(i));
	return rc;
}

static const struct imc_scn_verb verb_down = {
	.name = "ipoib-down", .kind = IMC_SCN_ACTION, .parse = if_parse,
	.print = if_print, .run = down_run, .free = free,
};

static int addr_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	struct addr_arg *a;
	unsigned k = 1;
	int rc;
	bool m = false;

	if (argc < 2 || argc > 4)
		return imc_scn_parse_error(p,
			"expected 'ipoib-addr HOST [del] ADDR[/LEN] [pkey=P]'");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = host_arg(p, argv[0], &a->at);
	if (!rc && !strcmp(argv[k], "del")) {
		a->del = true;
		k++;
	}
	if (!rc && k >= argc)
		rc = imc_scn_parse_error(p, "expected an address");
	if (!rc)
		rc = addr_word(p, argv[k++], &a->addr, &a->plen);
	if (!rc && k < argc) {
		rc = pkey_kv(p, argv[k++], &a->at.pkey, &m);
		if (!rc && !m)
			rc = imc_scn_parse_error(p, "expected pkey=, got '%s'",
						 argv[k - 1]);
	}
	if (!rc && k < argc)
		rc = imc_scn_parse_error(p, "unexpected '%s'", argv[k]);
	return rc;
}

static void addr_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct addr_arg *a = data;

	print_if(f, t, &a->at);
	if (a->del)
		fputs(" del", f);
	print_addr(f, &a->addr, (int)a->plen);
	print_pkey(f, &a->at);
}

static int addr_run(struct imc_scn_ctx *c, void *data)
{
	const struct addr_arg *a = data;
	struct ipr *r;
	struct iface *i;
	int rc = run_get(c, &r);

	if (!rc)
		rc = iface_get(r, &a->at, &i);
	if (rc)
		return rc;
	if (!a->del)
		return addr_add(r, i, &a->addr, a->plen);
	rc = imc_ip_host_addr_del(host_of(i), &a->addr);
	if (rc)
		return imc_scn_fail(c, rc, "no such address");
	return 0;
}

static const struct imc_scn_verb verb_addr = {
	.name = "ipoib-addr", .kind = IMC_SCN_ACTION, .parse = addr_parse,
	.print = addr_print, .run = addr_run, .free = free,
};

/* ------------------------------------------------------------------ */
/* ipoib-listen, ipoib-unlisten */

static int listen_parse(struct imc_scn_parser *p, unsigned argc,
			const char *const *argv, void **data)
{
	struct listen_arg *a;
	int rc;

	if (argc < 2 || argc > 3)
		return imc_scn_parse_error(p, "expected HOST GROUP [pkey=P]");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	rc = host_arg(p, argv[0], &a->at);
	if (!rc && (imc_ip_addr_parse(argv[1], &a->group, NULL) < 0 ||
		    !imc_ip_addr_is_multicast(&a->group)))
		rc = imc_scn_parse_error(p,
			"expected an IPv4 or IPv6 multicast group, got '%s'",
			argv[1]);
	if (!rc && argc == 3) {
		bool m;

		rc = pkey_kv(p, argv[2], &a->at.pkey, &m);
		if (!rc && !m)
			rc = imc_scn_parse_error(p, "expected pkey=, got '%s'",
						 argv[2]);
	}
	return rc;
}

static void listen_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct listen_arg *a = data;

	print_if(f, t, &a->at);
	print_addr(f, &a->group, -1);
	print_pkey(f, &a->at);
}

static int listen_run(struct imc_scn_ctx *c, void *data)
{
	const struct listen_arg *a = data;
	struct ipr *r;
	struct iface *i;
	int rc = run_get(c, &r);

	if (!rc)
		rc = iface_get(r, &a->at, &i);
	if (!rc)
		rc = imc_ipoib_mcast_listen(ifc_of(i),
					    &a->group);
	return rc;
}

static int unlisten_run(struct imc_scn_ctx *c, void *data)
{
	const struct listen_arg *a = data;
	struct iface *i;
	int rc = iface_need(c, &a->at, &i);

	if (!rc)
		rc = imc_ipoib_mcast_unlisten(ifc_of(i),
					      &a->group);
	if (rc == -ENOENT)
		return imc_scn_fail(c, rc, "the group is not listened to");
	return rc;
}

static const struct imc_scn_verb verb_listen = {
	.name = "ipoib-listen", .kind = IMC_SCN_ACTION, .parse = listen_parse,
	.print = listen_print, .run = listen_run, .free = free,
};

static const struct imc_scn_verb verb_unlisten = {
	.name = "ipoib-unlisten", .kind = IMC_SCN_ACTION,
	.parse = listen_parse, .print = listen_print, .run = unlisten_run,
	.free = free,
};

/* ------------------------------------------------------------------ */
/* ping, ipoib-send */

static int flow_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data, bool ping)
{
	struct flow_arg *a;
	int rc;

	if (argc < 2)
		return imc_scn_parse_error(p,
			"expected HOST DEST [count=N] [interval=TIME] [size=N] [pkey=P]");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->ping = ping;
	a->count = 1;
	a->size = ping ? 56 : 64;
	a->interval = ping ? IMC_NSEC_PER_MSEC : IMC_NSEC_PER_USEC;
	rc = host_arg(p, argv[0], &a->at);
	if (!rc && imc_ip_addr_parse(argv[1], &a->dst, NULL) < 0)
		rc = imc_scn_parse_error(p,
			"expected an IPv4 or IPv6 destination, got '%s'",
			argv[1]);
	for (unsigned i = 2; !rc && i < argc; i++) {
		bool m;

		rc = pkey_kv(p, argv[i], &a->at.pkey, &m);
		if (!rc && !m)
			rc = scn_flow_kv(p, argv[i], &a->count, &a->size,
					 &a->interval, &m);
		if (!rc && !m)
			rc = imc_scn_parse_error(p,
				"expected count=, size=, interval= or pkey=, got '%s'",
				argv[i]);
	}
	if (!rc && ping && imc_ip_addr_is_multicast(&a->dst))
		rc = imc_scn_parse_error(p, "ping: a unicast destination");
	return rc;
}

static int ping_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	return flow_parse(p, argc, argv, data, true);
}

static int send_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data)
{
	return flow_parse(p, argc, argv, data, false);
}

static void flow_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct flow_arg *a = data;

	print_if(f, t, &a->at);
	print_addr(f, &a->dst, -1);
	scn_flow_print(f, a->count, a->size, a->interval);
	print_pkey(f, &a->at);
}

/* The flow's next packet: an ICMP(v6) echo request with `size` bytes of
 * data (RFC 792, RFC 4443 4.1), or a UDP datagram to the discard port
 * (RFC 863) with `size` bytes of payload. */
static void flow_fire(struct imc_timer *t)
{
	struct flow *fl = imc_container_of(t, struct flow, t);
	struct ipr *r = fl->i->ps->r;
	const struct flow_arg *a = fl->a;

	if (a->ping)
		(void)imc_ip_host_ping(host_of(fl->i), &fl->src, &a->dst, fl->id,
				       (uint16_t)(fl->sent + 1), a->size);
	else
		(void)imc_ip_host_udp(host_of(fl->i), &fl->src, &a->dst,
				      (uint16_t)(33000 + fl->id), 9, NULL,
				      a->size);
	if (++fl->sent < a->count)
		imc_timer_arm(r->loop, &fl->t,
			      imc_loop_now(r->loop) + a->interval);
}

static int flow_run(struct imc_scn_ctx *c, void *data)
{
	const struct flow_arg *a = data;
	const struct imc_ip_addr *src;
	struct ipr *r;
	struct iface *i;
	struct flow *fl;
	int rc = iface_need(c, &a->at, &i);

	if (rc)
		return rc;
	r = i->ps->r;
	src = imc_ip_host_src_for(host_of(i), &a->dst);
	if (!src)
		return imc_scn_fail(c, -EADDRNOTAVAIL,
			"the interface has no IPv%u address to send from",
			a->dst.family);
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	fl->i = i;
	fl->a = a;
	fl->src = *src;
	fl->id = (uint16_t)scn_flow_id(c);
	imc_timer_init(&fl->t, flow_fire);
	fl->next = r->flows;
	r->flows = fl;
	return imc_timer_arm(r->loop, &fl->t, imc_loop_now(r->loop));
}

static const struct imc_scn_verb verb_ping = {
	.name = "ping", .kind = IMC_SCN_ACTION, .parse = ping_parse,
	.print = flow_print, .run = flow_run, .free = free,
};

static const struct imc_scn_verb verb_send = {
	.name = "ipoib-send", .kind = IMC_SCN_ACTION, .parse = send_parse,
	.print = flow_print, .run = flow_run, .free = free,
};

/* ------------------------------------------------------------------ */
/* ping-all */

#define PAIRS_MAX 0xFFFFu   /* sequence numbers 1..65535 */

struct pa_arg {
	imc_time_t interval;
	uint32_t size;
};

static int pa_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	struct pa_arg *a = calloc(1, sizeof(*a));
	int rc = 0;

	if (!a)
		return -ENOMEM;
	*data = a;
	a->interval = 10 * IMC_NSEC_PER_USEC;
	a->size = 56;
	for (unsigned i = 0; i < argc && !rc; i++) {
		bool m;

		rc = scn_flow_kv(p, argv[i], NULL, &a->size, &a->interval, &m);
		if (!rc && !m)
			rc = imc_scn_parse_error(p,
				"expected interval= or size=, got '%s'",
				argv[i]);
	}
	return rc;
}

static void pa_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct pa_arg *a = data;

	(void)t;
	fprintf(f, " interval=");
	imc_scn_print_time(f, a->interval);
	fprintf(f, " size=%" PRIu32, a->size);
}

static int pa_add(struct round *rd, size_t *cap, struct iface *src,
		  const struct imc_ip_addr *from, const struct imc_ip_addr *to)
{
	if (rd->n == PAIRS_MAX)
		return -E2BIG;
	if (rd->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct pair *np = realloc(rd->p, nc * sizeof(*np));

		if (!np)
			return -ENOMEM;
		rd->p = np;
		*cap = nc;
	}
	rd->p[rd->n++] = (struct pair){ src, *from, *to, false };
	return 0;
}

/* Every address of b on a prefix of a's, from the first such of a's. */
static int pa_pair(struct round *rd, size_t *cap, struct iface *a,
		   const struct iface *b)
{
	const struct imc_ip_addr *aa, *ba;
	const unsigned *ap;
	unsigned na = imc_ip_host_addrs(host_of(a), &aa, &ap);
	unsigned nb = imc_ip_host_addrs(host_of(b), &ba, NULL);
	int rc = 0;

	for (unsigned k = 0; k < nb && !rc; k++)
		for (unsigned j = 0; j < na; j++)
			if (imc_ip_addr_on_prefix(&aa[j], ap[j], &ba[k])) {
				rc = pa_add(rd, cap, a, &aa[j], &ba[k]);
				break;
			}
	return rc;
}

/* Every ordered pair of interfaces that can reach each other, and every
 * address of the second on a prefix of the first's, in port order. */
static int pa_pairs(struct ipr *r, struct round *rd)
{
	uint32_t nslots = r->pbase[r->t->nnodes];
	size_t cap = 0;
	int rc = 0;

	for (uint32_t s = 0; s < nslots && !rc; s++) {
		struct pstate *ps = r->ports[s];

		for (struct iface *a = ps ? ps->ifs : NULL; a && !rc;
		     a = a->next)
			for (uint32_t t = 0; t < nslots && !rc; t++) {
				struct pstate *pt = r->ports[t];

				for (struct iface *b = pt ? pt->ifs : NULL;
				     b && !rc; b = b->next) {
					if (!imc_ipoib_fabric_host_reaches(a->fh,
									   b->fh))
						continue;
					rc = pa_pair(rd, &cap, a, b);
				}
			}
	}
	return rc;
}

static void pa_fire(struct imc_timer *t)
{
	struct round *rd = imc_container_of(t, struct round, t);
	const struct pair *pr = &rd->p[rd->sent];
	struct ipr *r = pr->src->ps->r;

	(void)imc_ip_host_ping(host_of(pr->src), &pr->from, &pr->to, rd->id,
			       (uint16_t)(rd->sent + 1), rd->size);
	if (++rd->sent < rd->n)
		imc_timer_arm(r->loop, &rd->t,
			      imc_loop_now(r->loop) + rd->interval);
}

static int pa_run(struct imc_scn_ctx *c, void *data)
{
	const struct pa_arg *a = data;
	struct round *rd;
	struct ipr *r;
	int rc = run_get(c, &r);

	if (rc)
		return rc;
	rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	rd->id = (uint16_t)scn_flow_id(c);
	rd->size = a->size;
	rd->interval = a->interval;
	imc_timer_init(&rd->t, pa_fire);
	rc = pa_pairs(r, rd);
	if (rc) {
		free(rd->p);
		free(rd);
		return rc == -E2BIG ? imc_scn_fail(c, rc,
			"more than %u pairs to ping", PAIRS_MAX) : rc;
	}
	rd->next = r->rounds;
	r->rounds = rd;
	return rd->n ? imc_timer_arm(r->loop, &rd->t, imc_loop_now(r->loop)) :
		       0;
}

static const struct imc_scn_verb verb_ping_all = {
	.name = "ping-all", .kind = IMC_SCN_ACTION, .parse = pa_parse,
	.print = pa_print, .run = pa_run, .free = free,
};

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

static bool word_eq(const char *a, const char *b)
{
	/* '_' may stand for '-', as in the drops subject. */
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '_' && *b == '-') ||
				  (*a == '-' && *b == '_')))
			return false;
	return *a == *b;
}

static int counter_parse(const char *w, unsigned *out)
{
	for (unsigned k = 0; k < K_DROPS; k++)
		if (word_eq(w, counters[k].name)) {
			*out = k;
			return 0;
		}
	if (word_eq(w, "drops")) {
		*out = K_DROPS;
		return 0;
	}
	if (!strncmp(w, "drops-", 6) || !strncmp(w, "drops_", 6)) {
		for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
			if (word_eq(w + 6, imc_ipoib_drop_str(d))) {
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

static int subj_parse(struct imc_scn_parser *p, unsigned argc,
		      const char *const *argv, void **data,
		      enum subj_kind kind)
{
	struct subj_arg *a;
	unsigned k = 1;
	int rc;

	if (argc < 1)
		return imc_scn_parse_error(p, "expected a host");
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->kind = kind;
	a->at.pkey = IMC_PKEY_DEFAULT;
	rc = imc_scn_parse_hosts(p, argv[0], &a->hosts);
	if (!rc && kind == S_STATE && a->hosts.form != IMC_SCN_HOSTS_ONE)
		rc = imc_scn_parse_error(p, "ipoib-state: one host");
	if (!rc && kind == S_COUNTER) {
		if (argc < 2 || counter_parse(argv[1], &a->counter) < 0)
			return imc_scn_parse_error(p,
				"expected a counter (tx-packets, rx-packets, drops, drops-REASON, ...), got '%s'",
				argc < 2 ? "" : argv[1]);
		k = 2;
	}
	if (!rc && kind == S_RECEIVED && argc > k &&
	    strncmp(argv[k], "pkey=", 5)) {
		if (imc_ip_addr_parse(argv[k], &a->group, NULL) < 0 ||
		    !imc_ip_addr_is_multicast(&a->group))
			return imc_scn_parse_error(p,
				"expected a multicast group or pkey=, got '%s'",
				argv[k]);
		a->has_group = true;
		k++;
	}
	if (!rc && k < argc) {
		bool m;

		rc = pkey_kv(p, argv[k], &a->at.pkey, &m);
		if (!rc && !m)
			rc = imc_scn_parse_error(p, "expected pkey=, got '%s'",
						 argv[k]);
		k++;
	}
	if (!rc && k < argc)
		rc = imc_scn_parse_error(p, "unexpected '%s'", argv[k]);
	return rc;
}

#define SUBJ_PARSE(name, kind)                                              \
	static int name(struct imc_scn_parser *p, unsigned argc,            \
			const char *const *argv, void **data)               \
	{                                                                   \
		return subj_parse(p, argc, argv, data, kind);               \
	}

SUBJ_PARSE(carrier_parse, S_CARRIER)
SUBJ_PARSE(state_parse, S_STATE)
SUBJ_PARSE(received_parse, S_RECEIVED)
SUBJ_PARSE(replies_parse, S_REPLIES)
SUBJ_PARSE(answered_parse, S_ANSWERED)
SUBJ_PARSE(counter_subj_parse, S_COUNTER)

static int cross_parse(struct imc_scn_parser *p, unsigned argc,
		       const char *const *argv, void **data)
{
	struct subj_arg *a;

	if (argc)
		return subj_parse(p, argc, argv, data, S_CROSS);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	*data = a;
	a->kind = S_CROSS;
	a->every = true;
	return 0;
}

static void subj_free(void *data)
{
	struct subj_arg *a = data;

	if (a)
		imc_scn_hosts_free(&a->hosts);
	free(a);
}

static void subj_print(FILE *f, const struct imc_topo *t, const void *data)
{
	const struct subj_arg *a = data;

	if (a->every)
		return;
	imc_scn_print_hosts(f, t, &a->hosts);
	if (a->kind == S_COUNTER)
		counter_print(f, a->counter);
	if (a->has_group)
		print_addr(f, &a->group, -1);
	print_pkey(f, &a->at);
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
	iface_stats(i, &hs);
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
	struct ipr *r = imc_scn_data(c, &run_key);

	*value = a->kind == S_CARRIER ? 1 : 0;
	if (a->every) {
		uint32_t n = r ? r->pbase[r->t->nnodes] : 0;

		for (uint32_t k = 0; k < n; k++)
			for (const struct iface *j = r->ports[k] ?
			     r->ports[k]->ifs : NULL; j; j = j->next)
				*value += observe_one(a, (struct iface *)j);
		return 0;
	}
	for (uint32_t k = 0; k < a->hosts.n; k++) {
		struct if_arg at = { a->hosts.h[k].node, a->hosts.h[k].port,
				     a->at.pkey };
		uint64_t v = observe_one(a, r ? iface_find(r, &at) : NULL);

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

static const char *const mq_words[] = { "endpoint", "group", "total" };

static int mq_parse(struct imc_scn_parser *p, unsigned argc,
		    const char *const *argv, void **data)
{
	unsigned *k;

	for (unsigned w = 0; argc == 1 && w < IMC_ARRAY_SIZE(mq_words); w++)
		if (!strcmp(argv[0], mq_words[w])) {
			k = malloc(sizeof(*k));
			if (!k)
				return -ENOMEM;
			*k = w;
			*data = k;
			return 0;
		}
	return imc_scn_parse_error(p, "expected endpoint, group or total");
}

static void mq_print(FILE *f, const struct imc_topo *t, const void *data)
{
	(void)t;
	fprintf(f, " %s", mq_words[*(const unsigned *)data]);
}

/* The most packets one queue of the kind held at once, over every
 * interface of the run. */
static int mq_observe(struct imc_scn_ctx *c, const void *data,
		      uint64_t *value)
{
	static const unsigned counter[] = {
		K_QUEUED_MAX_ENDPOINT, K_QUEUED_MAX_GROUP, K_QUEUED_MAX,
	};
	const struct ipr *r = imc_scn_data(c, &run_key);
	uint32_t n = r ? r->pbase[r->t->nnodes] : 0;
	unsigned k = counter[*(const unsigned *)data];

	*value = 0;
	for (uint32_t s = 0; s < n; s++)
		for (const struct iface *i = r->ports[s] ?
		     r->ports[s]->ifs : NULL; i; i = i->next) {
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

static int pa_subj_parse(struct imc_scn_parser *p, unsigned argc,
			 const char *const *argv, void **data)
{
	(void)argv;
	*data = NULL;
	return argc ? imc_scn_parse_error(p, "expected no argument") : 0;
}

static void pa_subj_print(FILE *f, const struct imc_topo *t,
			  const void *data)
{
	(void)f;
	(void)t;
	(void)data;
}

static uint64_t pa_count(struct imc_scn_ctx *c, bool unanswered)
{
	const struct ipr *r = imc_scn_data(c, &run_key);
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

static int carrier_value_parse(const char *w, uint64_t *v)
{
	if (!strcmp(w, "up"))
		*v = 1;
	else if (!strcmp(w, "down"))
		*v = 0;
	else
		return -EINVAL;
	return 0;
}

static void carrier_value_format(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", v ? "up" : "down");
}

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

static const struct imc_scn_subject subj_carrier = {
	.name = "ipoib-carrier", .parse = carrier_parse, .print = subj_print,
	.observe = subj_observe, .value_parse = carrier_value_parse,
	.value_format = carrier_value_format, .free = subj_free,
};

static const struct imc_scn_subject subj_state = {
	.name = "ipoib-state", .parse = state_parse, .print = subj_print,
	.observe = subj_observe, .value_parse = state_value_parse,
	.value_format = state_value_format, .free = subj_free,
};

static const struct imc_scn_subject subj_received = {
	.name = "ipoib-received", .parse = received_parse,
	.print = subj_print, .observe = subj_observe, .free = subj_free,
};

static const struct imc_scn_subject subj_replies = {
	.name = "ping-replies", .parse = replies_parse, .print = subj_print,
	.observe = subj_observe, .free = subj_free,
};

static const struct imc_scn_subject subj_answered = {
	.name = "ping-answered", .parse = answered_parse, .print = subj_print,
	.observe = subj_observe, .free = subj_free,
};

static const struct imc_scn_subject subj_counter = {
	.name = "ipoib-counter", .parse = counter_subj_parse,
	.print = subj_print, .observe = subj_observe, .free = subj_free,
};

static const struct imc_scn_subject subj_cross = {
	.name = "ipoib-cross-partition", .parse = cross_parse,
	.print = subj_print, .observe = subj_observe, .free = subj_free,
};

static const struct imc_scn_subject subj_max_queued = {
	.name = "ipoib-max-queued", .parse = mq_parse, .print = mq_print,
	.observe = mq_observe, .free = free,
};

static const struct imc_scn_subject subj_pa_pairs = {
	.name = "ping-all-pairs", .parse = pa_subj_parse,
	.print = pa_subj_print, .observe = pa_pairs_observe,
};

static const struct imc_scn_subject subj_pa_unanswered = {
	.name = "ping-all-unanswered", .parse = pa_subj_parse,
	.print = pa_subj_print, .observe = pa_unanswered_observe,
};

/* ------------------------------------------------------------------ */

int imc_scn_ipoib_tap(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      uint16_t pkey, const struct imc_ipoib_host_ops *tap,
		      struct imc_scn_ipoib_iface *out)
{
	struct if_arg a = { .node = node, .port = port, .pkey = pkey };
	struct ipr *r = imc_scn_data(c, &run_key);
	struct iface *i;

	if (tap && !tap->deliver)
		return -EINVAL;
	i = r && node < r->t->nnodes &&
		    port <= r->t->node[node].nports ? iface_find(r, &a) : NULL;
	if (!i)
		return -ENOENT;
	(void)imc_ipoib_fabric_host_tap(i->fh, tap);
	if (out) {
		out->ifc = ifc_of(i);
		out->naddrs = imc_ip_host_addrs(host_of(i), &out->addr,
						&out->plen);
	}
	return 0;
}

int imc_scn_lang_add_ipoib(struct imc_scn_lang *l)
{
	static const struct imc_scn_verb *const verbs[] = {
		&verb_ipoib, &verb_up, &verb_down, &verb_addr, &verb_listen,
		&verb_unlisten, &verb_ping, &verb_send, &verb_ping_all,
	};
	static const struct imc_scn_subject *const subjects[] = {
		&subj_carrier, &subj_state, &subj_received, &subj_replies,
		&subj_answered, &subj_counter, &subj_cross, &subj_max_queued,
		&subj_pa_pairs, &subj_pa_unanswered,
	};
	int rc = 0;

	for (unsigned i = 0; i < IMC_ARRAY_SIZE(verbs) && !rc; i++)
		rc = imc_scn_lang_add_verb(l, verbs[i]);
	for (unsigned i = 0; i < IMC_ARRAY_SIZE(subjects) && !rc; i++)
		rc = imc_scn_lang_add_subject(l, subjects[i]);
	if (!rc)
		rc = imc_scn_lang_add_section(l, &scn_section_ipoib);
	return rc;
}
