/* The run half of the IPoIB verbs (ipoib_verbs.c): the host model's
 * callbacks, the ports' trackers, interfaces, the run's state, flows of
 * ping and ipoib-send, ping-all rounds and the tap of ibmcast up. */

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
#include "util/bytes.h"
#include "util/vec.h"
#include "scenario/ipoib_run.h"

const char scn_ipoib_run_key;   /* imc_scn_data key of struct ipr */
const char scn_ipoib_cfg_key;   /* of the ipoib setting */

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
	ps = *scn_ports_at(&r->ports, node, port);
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
/* Ports: the port's join tracker (the port tracker service, scn.h) */

/* Interfaces stop (leaving their groups through the port's tracker,
 * which lives on), the tracker lets go of their QPs at once, then the QPs
 * go: the trackers' state is freed after this (scn_svc_tracker_prepare()). */
static void port_free(void *data)
{
	struct pstate *ps = data;

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
	void **slot = scn_ports_at(&r->ports, node, port);
	struct pstate *ps = *slot;
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
	rc = scn_svc_tracker(r->c, node, port, &ps->mc);
	if (rc) {
		free(ps);
		return rc;
	}
	*slot = ps;
	*out = ps;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Interfaces */

struct iface *scn_ipoib_iface_find(const struct ipr *r,
				   const struct if_arg *a)
{
	const struct pstate *ps = *scn_ports_at(&r->ports, a->node, a->port);

	if (!ps)
		return NULL;
	for (struct iface *i = ps->ifs; i; i = i->next)
		if (!((i->pkey ^ a->pkey) & 0x7FFF))
			return i;
	return NULL;
}

struct iface *scn_ipoib_iface_next(const struct ipr *r,
				   const struct iface *i)
{
	uint32_t s = 0;

	if (i && i->next)
		return i->next;
	if (i)
		s = scn_ports_idx(&r->ports, i->ps->node, i->ps->port) + 1;
	for (; s < r->ports.n; s++) {
		const struct pstate *ps = r->ports.slot[s];

		if (ps && ps->ifs)
			return ps->ifs;
	}
	return NULL;
}

/* The counts of the host model, with what went to a tap. */
void scn_ipoib_iface_stats(const struct iface *i,
			   struct imc_ip_host_stats *st)
{
	const struct imc_ip_host *h = host_of(i);

	if (h)
		imc_ip_host_stats(h, st);
	else
		memset(st, 0, sizeof(*st));
	st->received += imc_ipoib_fabric_host_tapped(i->fh);
}

int scn_ipoib_iface_get(struct imc_scn_ctx *c, const struct if_arg *a,
			struct iface **out)
{
	const struct ipoib_cfg *k0 = imc_scn_data(c, &scn_ipoib_cfg_key);
	struct imc_ipoib_config cfg;
	struct imc_ip_host_ops host = {
		.packet = host_packet, .echo_reply = host_echo_reply,
	};
	struct pstate *ps = NULL;
	struct iface *i;
	struct ipr *r;
	int rc = scn_ipoib_run_get(c, &r);

	if (rc)
		return rc;
	i = scn_ipoib_iface_find(r, a);
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
	/* The ipoib setting's configuration: the defaults and its options. */
	if (k0)
		cfg = k0->c;
	else
		imc_ipoib_config_init(&cfg);
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

static void rounds_free(struct ipr *r, struct round **list)
{
	struct round *rd;

	while ((rd = *list)) {
		*list = rd->next;
		imc_timer_cancel(r->loop, &rd->t);
		free(rd->p);
		free(rd);
	}
}

static void run_free(void *data)
{
	struct ipr *r = data;

	rounds_free(r, &r->flows);
	rounds_free(r, &r->rounds);
	scn_ports_fini(&r->ports, port_free);
	free(r);
}

int scn_ipoib_run_get(struct imc_scn_ctx *c, struct ipr **out)
{
	struct ipr *r = imc_scn_data(c, &scn_ipoib_run_key);
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
	r->t = imc_scn_topo(c);
	rc = scn_ports_init(&r->ports, r->t);
	/* The trackers' state first: ours is freed before it. */
	if (!rc)
		rc = scn_svc_tracker_prepare(c);
	if (!rc)
		rc = imc_scn_data_set(c, &scn_ipoib_run_key, r, run_free);
	if (rc) {
		scn_ports_fini(&r->ports, NULL);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int scn_ipoib_iface_need(struct imc_scn_ctx *c, const struct if_arg *a,
			 struct iface **out)
{
	struct ipr *r;
	int rc = scn_ipoib_run_get(c, &r);

	if (rc)
		return rc;
	*out = scn_ipoib_iface_find(r, a);
	if (!*out)
		return imc_scn_fail(c, -ENOENT,
			"%s:%u has no IPoIB interface for P_Key 0x%04x (ipoib-up)",
			imc_scn_topo(c)->node[a->node].name, a->port,
			a->pkey);
	return 0;
}

/* The next packet: an ICMP(v6) echo request with `size` bytes of data
 * (RFC 792, RFC 4443 4.1), or a UDP datagram to the discard port (RFC
 * 863) with `size` bytes of payload. */
static void round_fire(struct imc_timer *t)
{
	struct round *rd = imc_container_of(t, struct round, t);
	const struct pair *pr = &rd->p[rd->sent % rd->n];
	struct ipr *r = pr->src->ps->r;

	if (rd->udp)
		(void)imc_ip_host_udp(host_of(pr->src), &pr->from, &pr->to,
				      (uint16_t)(33000 + rd->id), 9, NULL,
				      rd->size);
	else
		(void)imc_ip_host_ping(host_of(pr->src), &pr->from, &pr->to,
				       rd->id, (uint16_t)(rd->sent + 1),
				       rd->size);
	if (++rd->sent < rd->count)
		imc_timer_arm(r->loop, &rd->t,
			      imc_loop_now(r->loop) + rd->interval);
}

/* A round of the line running now, of the size= and interval= given. */
static struct round *round_new(struct imc_scn_ctx *c, uint32_t size,
			       imc_time_t interval)
{
	struct round *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return NULL;
	rd->id = (uint16_t)scn_flow_id(c);
	rd->size = size;
	rd->interval = interval;
	imc_timer_init(&rd->t, round_fire);
	return rd;
}

int scn_ipoib_flow_run(struct imc_scn_ctx *c, void *data)
{
	const struct flow_arg *a = data;
	const struct imc_ip_addr *src;
	struct ipr *r;
	struct iface *i;
	struct round *rd;
	int rc = scn_ipoib_iface_need(c, &a->at, &i);

	if (rc)
		return rc;
	r = i->ps->r;
	src = imc_ip_host_src_for(host_of(i), &a->dst);
	if (!src)
		return imc_scn_fail(c, -EADDRNOTAVAIL,
			"the interface has no IPv%u address to send from",
			a->dst.family);
	rd = round_new(c, a->size, a->interval);
	if (!rd || !(rd->p = malloc(sizeof(*rd->p)))) {
		free(rd);
		return -ENOMEM;
	}
	rd->p[0] = (struct pair){ i, *src, a->dst, false };
	rd->n = 1;
	rd->udp = !a->ping;
	rd->count = a->count;
	rd->next = r->flows;
	r->flows = rd;
	return imc_timer_arm(r->loop, &rd->t, imc_loop_now(r->loop));
}

static int pa_add(struct round *rd, size_t *cap, struct iface *src,
		  const struct imc_ip_addr *from, const struct imc_ip_addr *to)
{
	if (rd->n == PAIRS_MAX)
		return -E2BIG;
	if (IMC_VEC_RESERVE(&rd->p, cap, rd->n + 1))
		return -ENOMEM;
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
	size_t cap = 0;
	int rc = 0;

	for (struct iface *a = scn_ipoib_iface_next(r, NULL); a && !rc;
	     a = scn_ipoib_iface_next(r, a))
		for (struct iface *b = scn_ipoib_iface_next(r, NULL); b && !rc;
		     b = scn_ipoib_iface_next(r, b))
			if (imc_ipoib_fabric_host_reaches(a->fh, b->fh))
				rc = pa_pair(rd, &cap, a, b);
	return rc;
}

int scn_ipoib_pa_run(struct imc_scn_ctx *c, void *data)
{
	const struct pa_arg *a = data;
	struct round *rd;
	struct ipr *r;
	int rc = scn_ipoib_run_get(c, &r);

	if (rc)
		return rc;
	rd = round_new(c, a->size, a->interval);
	if (!rd)
		return -ENOMEM;
	rc = pa_pairs(r, rd);
	if (rc) {
		free(rd->p);
		free(rd);
		return rc == -E2BIG ? imc_scn_fail(c, rc,
			"more than %u pairs to ping", PAIRS_MAX) : rc;
	}
	rd->count = (uint32_t)rd->n;
	rd->next = r->rounds;
	r->rounds = rd;
	return rd->n ? imc_timer_arm(r->loop, &rd->t, imc_loop_now(r->loop)) :
		       0;
}

/* ------------------------------------------------------------------ */

int imc_scn_ipoib_tap(struct imc_scn_ctx *c, uint32_t node, unsigned port,
		      uint16_t pkey, const struct imc_ipoib_host_ops *tap,
		      struct imc_scn_ipoib_iface *out)
{
	struct if_arg a = { .node = node, .port = port, .pkey = pkey };
	struct ipr *r = imc_scn_data(c, &scn_ipoib_run_key);
	struct iface *i;

	if (tap && !tap->deliver)
		return -EINVAL;
	i = r && node < r->t->nnodes &&
		    port <= r->t->node[node].nports ? scn_ipoib_iface_find(r, &a) : NULL;
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

