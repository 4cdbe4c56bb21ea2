/* IPoIB on the simulated fabric: interfaces on hosts of a fat tree, the
 * SA at the SM's port, join trackers talking to it over QP1, pings and
 * UDP between host models. Everything runs on a virtual loop, so every
 * figure below is exact. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ibmcast/gid.h"
#include "ibmcast/sa.h"
#include "ipoib_world.h"

#define MS IMC_NSEC_PER_MSEC
#define US IMC_NSEC_PER_USEC
#define SEC IMC_NSEC_PER_SEC
#define TREE "fat-tree:leaves=4,hosts=4,spines=2"

static uint64_t drops(const struct iw_if *i)
{
	struct imc_ipoib_stats st = iw_stats(i);
	uint64_t n = 0;

	for (unsigned d = 0; d < IMC_IPOIB_DROP__COUNT; d++)
		n += st.drops[d];
	return n;
}

/* No multicast datagram may leave with an AV a join did not give: a wrong
 * MLID or MGID would show as no-mft or no-qp drops in the fabric. */
static void assert_fabric_clean(struct iw *w)
{
	struct imc_fabric_totals t;

	imc_fabric_totals(w->f, &t);
	assert_int_equal(t.drops[IMC_DROP_NO_MFT], 0);
	assert_int_equal(t.drops[IMC_DROP_NO_ROUTE], 0);
	assert_int_equal(t.drops[IMC_DROP_QKEY], 0);
	assert_int_equal(t.drops[IMC_DROP_DLID], 0);
}

/* A pings B across the tree: A resolves B with ARP, B never asks: it
 * answers from the endpoint the request made. Then A and B over IPv6,
 * with ND. */
static void test_ping_across_fat_tree(void **state)
{
	struct iw w;
	struct iw_if *a, *b;
	struct imc_ipoib_stats sa, sb;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 1), 0xFFFF, &a, "10.0.0.2/24",
				  "fd00::2/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 14), 0xFFFF, &b,
				  "10.0.0.15/24", "fd00::15/64", NULL), 0);
	iw_run_for(&w, 10 * MS);
	assert_true(imc_ipoib_carrier(a->ifc));
	assert_true(imc_ipoib_carrier(b->ifc));
	for (uint16_t s = 1; s <= 5; s++)
		assert_int_equal(iw_ping(a, "10.0.0.15", s, 56), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(a->echo_replies, 5);
	assert_int_equal(b->echo_answered, 5);
	sa = iw_stats(a);
	sb = iw_stats(b);
	assert_int_equal(sa.arp_tx, 1);      /* the request */
	assert_int_equal(sa.resolved, 1);
	assert_int_equal(sb.arp_tx, 1);      /* the reply only */
	assert_int_equal(sb.resolved, 0);
	assert_int_equal(sb.endpoints_from_rx, 1);
	assert_int_equal(sa.tx_packets, 5);
	assert_int_equal(sb.tx_packets, 5);
	assert_int_equal(sb.rx_bytes, 5 * 84);
	/* IPv6: an NS to B's solicited-node group (a send-only join), an
	 * NA back, then the echo. */
	for (uint16_t s = 1; s <= 3; s++)
		assert_int_equal(iw_ping(a, "fd00::15", s, 56), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(a->echo_replies, 8);
	sa = iw_stats(a);
	sb = iw_stats(b);
	assert_int_equal(sa.nd_tx, 1);
	assert_int_equal(sb.nd_tx, 1);
	assert_int_equal(sa.sendonly_joins, 1);
	assert_int_equal(drops(a), 0);
	assert_int_equal(drops(b), 0);
	assert_fabric_clean(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* No ARP at all: D hears C on a group, which makes C's endpoint and maps
 * C's address to it; D's ping then goes straight out, and C answers from
 * the endpoint the ping made. */
static void test_traffic_where_arp_never_ran(void **state)
{
	struct iw w;
	struct iw_if *c, *d;
	struct imc_ip_addr g;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 4), 0xFFFF, &c, "10.0.0.5/24",
				  NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 9), 0xFFFF, &d,
				  "10.0.0.10/24", NULL), 0);
	assert_int_equal(imc_ip_addr_parse("239.2.2.2", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mcast_listen(d->ifc, &g), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(iw_udp(c, "239.2.2.2", 100), 0);
	iw_run_for(&w, 5 * MS);
	assert_int_equal(d->received_mcast, 1);
	assert_int_equal(iw_ping(d, "10.0.0.5", 1, 8), 0);
	iw_run_for(&w, 5 * MS);
	assert_int_equal(d->echo_replies, 1);
	assert_int_equal(iw_stats(c).arp_tx, 0);
	assert_int_equal(iw_stats(d).arp_tx, 0);
	assert_int_equal(iw_stats(c).arp_rx + iw_stats(d).arp_rx, 0);
	assert_int_equal(iw_stats(c).endpoints_from_rx, 1);
	assert_int_equal(iw_stats(d).endpoints_from_rx, 1);
	assert_fabric_clean(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* The receive-before-record window on the fabric: B's QP stays attached to
 * the broadcast group while its tracker re-joins after a client
 * reregister, so B receives A's broadcast ARP request before the join
 * callback has given B the group's record again. B's answer waits for that
 * record and goes out once B's carrier is back; A's pings, queued behind
 * the ARP, all get their replies. Nothing is dropped anywhere. */
static imc_time_t first_reply_at;

static void note_reply(struct iw_if *i, const struct imc_ipoib_packet *p)
{
	if (!first_reply_at && i->echo_replies == 1 && !p->multicast)
		first_reply_at = imc_loop_now(i->h->w->loop);
}

static void test_race_answer_after_rejoin(void **state)
{
	struct iw w;
	struct iw_if *a, *b;
	struct imc_ipoib_stats sb;
	uint32_t bn;

	(void)state;
	first_reply_at = 0;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	bn = iw_hca(&w, 11);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 2), 0xFFFF, &a, "10.0.0.3/24",
				  NULL), 0);
	assert_int_equal(iw_if_up(&w, bn, 0xFFFF, &b, "10.0.0.12/24", NULL),
			 0);
	a->on_deliver = note_reply;
	iw_run_for(&w, 10 * MS);
	assert_int_equal(b->carrier_ups, 1);
	assert_int_equal(imc_fabric_client_reregister(w.f, bn, 1), 0);
	iw_run_for(&w, 10 * US);
	/* B is in the window: attached, no broadcast record. */
	assert_false(imc_ipoib_carrier(b->ifc));
	assert_int_equal(b->carrier_downs, 1);
	for (uint16_t s = 1; s <= 4; s++)
		assert_int_equal(iw_ping(a, "10.0.0.12", s, 56), 0);
	iw_run_for(&w, 10 * US);
	sb = iw_stats(b);
	assert_int_equal(sb.arp_rx, 1);       /* heard in the window */
	assert_int_equal(sb.arp_tx, 0);       /* not answered yet */
	assert_int_equal(sb.deferred, 1);
	assert_int_equal(sb.queued, 1);
	iw_run_for(&w, 200 * MS);
	/* After the re-join: carrier up, the answer out, every ping back. */
	assert_int_equal(b->carrier_ups, 2);
	assert_int_equal(iw_stats(b).arp_tx, 1);
	assert_int_equal(a->echo_replies, 4);
	assert_true(first_reply_at >= b->last_up);
	assert_int_equal(drops(a), 0);
	assert_int_equal(drops(b), 0);
	assert_fabric_clean(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* The SA gives the broadcast group a Q_Key other than the one the QPs
 * start with: each QP takes it when its join is answered (RFC 4391 4),
 * and ARP, ND, pings and a multicast group (created with it) all work,
 * with no Q_Key drop anywhere. */
static void test_broadcast_qkey_from_sa(void **state)
{
	static const struct imc_sa_bcast bc[] = {
		{ .pkey = 0x7fff, .scope = 2, .qkey = 0x0C0FFEE0, .mtu = 4,
		  .rate = 3, .life = 18 },
	};
	struct imc_sa_fabric_config sc;
	struct imc_ip_addr g;
	struct iw w;
	struct iw_if *a, *b;

	(void)state;
	imc_sa_fabric_config_init(&sc);
	sc.sa.bcast = bc;
	sc.sa.n_bcast = 1;
	assert_int_equal(iw_create(&w, TREE, NULL, &sc), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 1), 0xFFFF, &a, "10.0.0.2/24",
				  "fd00::2/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 14), 0xFFFF, &b,
				  "10.0.0.15/24", "fd00::15/64", NULL), 0);
	assert_int_equal(imc_qp_qkey(imc_ipoib_fabric_qp(a->x)),
			 IMC_IPOIB_FABRIC_QKEY);
	assert_int_equal(imc_ip_addr_parse("239.1.2.3", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mcast_listen(b->ifc, &g), 0);
	iw_run_for(&w, 10 * MS);
	assert_true(imc_ipoib_carrier(a->ifc));
	assert_true(imc_ipoib_carrier(b->ifc));
	assert_int_equal(imc_qp_qkey(imc_ipoib_fabric_qp(a->x)), 0x0C0FFEE0);
	assert_int_equal(imc_qp_qkey(imc_ipoib_fabric_qp(b->x)), 0x0C0FFEE0);
	for (uint16_t s = 1; s <= 3; s++) {
		assert_int_equal(iw_ping(a, "10.0.0.15", s, 56), 0);
		assert_int_equal(iw_ping(b, "fd00::2", s, 8), 0);
	}
	assert_int_equal(iw_udp(a, "239.1.2.3", 100), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(a->echo_replies, 3);
	assert_int_equal(b->echo_replies, 3);
	assert_int_equal(b->received_mcast, 1);
	assert_int_equal(drops(a), 0);
	assert_int_equal(drops(b), 0);
	assert_fabric_clean(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* Partitions: the same subnet on P_Key 0x8001 and on the default
 * partition are two links; nothing crosses. */
static void test_pkey_isolation(void **state)
{
	static const struct imc_sa_bcast bc[] = {
		{ .pkey = 0x7fff, .scope = 2, .qkey = 0x0B1B, .mtu = 4,
		  .rate = 3, .life = 18 },
		{ .pkey = 0x8001, .scope = 2, .qkey = 0x0B1B, .mtu = 4,
		  .rate = 3, .life = 18 },
	};
	static const uint16_t both[] = { 0xFFFF, 0x8001 };
	struct imc_sa_fabric_config sc;
	struct iw w;
	struct iw_if *p, *q, *r;

	(void)state;
	imc_sa_fabric_config_init(&sc);
	sc.sa.bcast = bc;
	sc.sa.n_bcast = 2;
	assert_int_equal(iw_create(&w, TREE, NULL, &sc), 0);
	assert_int_equal(imc_fabric_pkey_set(w.f, iw_hca(&w, 2), 1, both, 2),
			 0);
	assert_int_equal(imc_fabric_pkey_set(w.f, iw_hca(&w, 7), 1, both, 2),
			 0);
	w.cfg.resolve_timeout = 100 * MS;
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 2), 0x8001, &p,
				  "10.9.0.2/24", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 7), 0x8001, &q,
				  "10.9.0.7/24", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 12), 0xFFFF, &r,
				  "10.9.0.12/24", NULL), 0);
	iw_run_for(&w, 10 * MS);
	assert_true(imc_ipoib_carrier(p->ifc));
	assert_true(imc_ipoib_carrier(r->ifc));
	assert_int_equal(iw_ping(p, "10.9.0.7", 1, 8), 0);
	assert_int_equal(iw_ping(r, "10.9.0.2", 1, 8), 0);
	assert_int_equal(iw_ping(r, "10.9.0.7", 1, 8), 0);
	iw_run_for(&w, SEC);
	assert_int_equal(p->echo_replies, 1);
	assert_int_equal(r->echo_replies, 0);
	assert_int_equal(iw_stats(r).resolve_failures, 2);
	assert_int_equal(iw_stats(r).drops[IMC_IPOIB_DROP_UNRESOLVED], 2);
	/* P and Q never heard R's requests. */
	assert_int_equal(iw_stats(p).arp_rx, 1);
	assert_int_equal(iw_stats(q).arp_rx, 1);
	assert_int_equal(p->received + q->received, 2);
	assert_int_equal(iw_destroy(&w), 0);
}

/* A reregister of every port: every carrier goes down and comes back,
 * and traffic flows again afterwards. */
static void test_reregister_all(void **state)
{
	struct iw w;
	struct iw_if *i[4];

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	for (unsigned k = 0; k < 4; k++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "10.0.0.%u/24", 20 + k);
		assert_int_equal(iw_if_up(&w, iw_hca(&w, 3 * k + 1), 0xFFFF,
					  &i[k], addr, NULL), 0);
	}
	iw_run_for(&w, 10 * MS);
	assert_int_equal(imc_fabric_client_reregister(w.f, IMC_TOPO_NONE, 0),
			 0);
	/* re-joins paced over the tracker's default spread, 1 s */
	iw_run_for(&w, 1200 * MS);
	for (unsigned k = 0; k < 4; k++) {
		assert_int_equal(i[k]->carrier_downs, 1);
		assert_int_equal(i[k]->carrier_ups, 2);
		assert_true(imc_ipoib_carrier(i[k]->ifc));
		assert_int_equal(iw_stats(&*i[k]).carrier_changes, 3);
	}
	assert_int_equal(iw_ping(i[0], "10.0.0.23", 1, 8), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(i[0]->echo_replies, 1);
	/* A port down and up: the same, through WAITING. */
	assert_int_equal(imc_fabric_link_set(w.f, i[1]->h->node, 1, false), 0);
	iw_run_for(&w, 10 * MS);
	assert_false(imc_ipoib_carrier(i[1]->ifc));
	assert_int_equal(imc_fabric_link_set(w.f, i[1]->h->node, 1, true), 0);
	iw_run_for(&w, 1200 * MS);
	assert_true(imc_ipoib_carrier(i[1]->ifc));
	assert_int_equal(i[1]->carrier_ups, 3);
	assert_int_equal(iw_destroy(&w), 0);
}

struct member_find {
	struct imc_gid gid;
	uint8_t js;
	bool found;
};

static int find_member(void *arg, const struct imc_sa_member_info *m)
{
	struct member_find *mf = arg;

	if (imc_gid_equal(&m->port_gid, &mf->gid)) {
		mf->found = true;
		mf->js = m->join_state;
	}
	return 0;
}

/* Sending to a group nobody here listens to joins SendOnlyFullMember at
 * the SA; the membership is given back after the idle time. */
static void test_sendonly_join_and_idle_leave(void **state)
{
	struct iw w;
	struct iw_if *s, *l;
	struct imc_ip_addr g;
	struct imc_gid mgid;
	struct imc_port_attr pa;
	struct member_find mf;
	const struct imc_sa *sa;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	w.cfg.sendonly_idle = SEC;
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 5), 0xFFFF, &s, "10.0.0.6/24",
				  NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 13), 0xFFFF, &l,
				  "10.0.0.14/24", NULL), 0);
	assert_int_equal(imc_ip_addr_parse("239.5.5.5", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mcast_listen(l->ifc, &g), 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(g.v4, 0xFFFF, 2, &mgid), 0);
	iw_run_for(&w, 10 * MS);
	for (int k = 0; k < 10; k++)
		assert_int_equal(iw_udp(s, "239.5.5.5", 200), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(l->received_mcast, 10);
	assert_int_equal(iw_stats(s).tx_mcast, 10);
	assert_int_equal(iw_stats(s).sendonly_joins, 1);
	sa = imc_sa_fabric_sa(w.sf);
	assert_int_equal(imc_fabric_port_attr(w.f, s->h->node, 1, &pa), 0);
	memset(&mf, 0, sizeof(mf));
	mf.gid = pa.gid;
	assert_int_equal(imc_sa_foreach_member(sa, &mgid, find_member, &mf), 0);
	assert_true(mf.found);
	assert_int_equal(mf.js, IMC_JOIN_SENDONLY_FULL);
	/* Idle: left after a second. */
	iw_run_for(&w, 1100 * MS);
	assert_int_equal(iw_stats(s).sendonly_leaves, 1);
	memset(&mf, 0, sizeof(mf));
	mf.gid = pa.gid;
	assert_int_equal(imc_sa_foreach_member(sa, &mgid, find_member, &mf), 0);
	assert_false(mf.found);
	/* Sending again joins again. */
	assert_int_equal(iw_udp(s, "239.5.5.5", 200), 0);
	iw_run_for(&w, 10 * MS);
	assert_int_equal(l->received_mcast, 11);
	assert_int_equal(iw_stats(s).sendonly_joins, 2);
	assert_fabric_clean(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* ---- a port that changes LID stays reachable ---- */

/* No PathRecord, nor any other query: the SA got only Sets (joins,
 * subscriptions) and Deletes (leaves). */
static void assert_no_sa_query(struct iw *w)
{
	struct imc_sa_stats st;

	imc_sa_get_stats(imc_sa_fabric_sa(w->sf), &st);
	assert_int_equal(st.requests[IMC_SA_REQ_GET], 0);
	assert_int_equal(st.requests[IMC_SA_REQ_GET_TABLE], 0);
	assert_true(st.requests[IMC_SA_REQ_SET] > 0);
}

/* When the first echo reply after the mark came. */
static uint64_t replies_at_mark;
static imc_time_t reply_after_mark;

static void note_reply_after_mark(struct iw_if *i,
				  const struct imc_ipoib_packet *p)
{
	(void)p;
	if (!reply_after_mark && i->echo_replies > replies_at_mark)
		reply_after_mark = imc_loop_now(i->h->w->loop);
}

/* The first reply came after t0: says when (virtual time, so exact). */
static void report_recovery(const char *what, imc_time_t t0)
{
	assert_true(reply_after_mark > t0);
	print_message("  %s: first echo reply %.3f ms after the change\n",
		      what, (double)(reply_after_mark - t0) / MS);
}

static void mark_replies(struct iw_if *a)
{
	replies_at_mark = a->echo_replies;
	reply_after_mark = 0;
	a->on_deliver = note_reply_after_mark;
}

/* A pings B (IPv4 and IPv6) every 10 ms for span, from now; a ping is
 * sent, queued, or refused with a full queue (counted by the interface).
 * Returns how many were refused. */
static unsigned ping_for(struct iw *w, struct iw_if *a, const char *v4,
			 const char *v6, uint16_t *seq, imc_time_t span)
{
	unsigned refused = 0;

	for (imc_time_t t = 0; t < span; t += 10 * MS) {
		for (int k = 0; k < (v6 ? 2 : 1); k++) {
			int rc = iw_ping(a, k ? v6 : v4, ++*seq, 56);

			if (rc == -ENOBUFS)
				refused++;
			else
				assert_int_equal(rc, 0);
		}
		iw_run_for(w, 10 * MS);
	}
	return refused;
}

static uint16_t lid_of(struct iw *w, uint32_t node)
{
	struct imc_port_attr pa;

	assert_int_equal(imc_fabric_port_attr(w->f, node, 1, &pa), 0);
	return pa.lid;
}

static struct imc_ipoib_endpoint_info endpoint_of(struct iw_if *from,
						  struct iw_if *to)
{
	struct imc_ipoib_endpoint_info e;
	struct imc_ipoib_hwaddr hw;

	imc_ipoib_hwaddr(to->ifc, &hw);
	assert_int_equal(imc_ipoib_endpoint_get(from->ifc, &hw.gid, &e), 0);
	return e;
}

#define NEW_LID 0x0400

/* B takes a new LID, no reregister follows. B announces itself (a
 * gratuitous ARP, an unsolicited NA) and A, which sent to B's old LID,
 * takes the new one from the announcement's LRH: A's pings, sent from
 * the moment of the change, are answered from the first round on. Only
 * the ping sent in the same instant as the change (before B's
 * announcement could arrive) dies at the old LID. */
static void test_lid_change_without_reregister(void **state)
{
	struct iw w;
	struct iw_if *a, *b, *c;
	struct imc_ipoib_stats sa, sb;
	struct imc_fabric_totals t;
	uint16_t seq = 0;
	uint32_t node, port;
	imc_time_t t0;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 2), 0xFFFF, &a, "10.0.0.3/24",
				  "fd00::3/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 11), 0xFFFF, &b,
				  "10.0.0.12/24", "fd00::12/64", NULL), 0);
	/* C knows B only by an endpoint a packet made, without a
	 * neighbour: B's multicast to C's group. */
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 6), 0xFFFF, &c, "10.0.0.7/24",
				  NULL), 0);
	iw_run_for(&w, 10 * MS);
	ping_for(&w, a, "10.0.0.12", "fd00::12", &seq, 10 * MS);
	assert_int_equal(a->echo_replies, 2);
	assert_int_equal(endpoint_of(a, b).av.dlid, lid_of(&w, b->h->node));
	{
		struct imc_ip_addr g;

		assert_int_equal(imc_ip_addr_parse("239.3.3.3", &g, NULL), 0);
		assert_int_equal(imc_ipoib_mcast_listen(c->ifc, &g), 0);
		iw_run_for(&w, 10 * MS);
		assert_int_equal(iw_udp(b, "239.3.3.3", 10), 0);
		iw_run_for(&w, 10 * MS);
		assert_int_equal(c->received_mcast, 1);
	}
	assert_int_equal(imc_fabric_port_by_lid(w.f, NEW_LID, &node, &port),
			 -ENOENT);
	t0 = imc_loop_now(w.loop);
	mark_replies(a);
	assert_int_equal(imc_fabric_lid_change(w.f, b->h->node, 1, NEW_LID),
			 0);
	ping_for(&w, a, "10.0.0.12", "fd00::12", &seq, SEC);
	/* 100 rounds of two pings; the first IPv4 and IPv6 ping went to
	 * the old LID. */
	assert_int_equal(a->echo_replies, 2 + 198);
	report_recovery("LID change alone", t0);
	assert_true(reply_after_mark - t0 <= 10 * MS + 10 * US);
	imc_fabric_totals(w.f, &t);
	assert_int_equal(t.drops[IMC_DROP_NO_ROUTE], 2);
	sb = iw_stats(b);
	sa = iw_stats(a);
	assert_int_equal(sb.announces, 2);
	assert_int_equal(endpoint_of(a, b).av.dlid, NEW_LID);
	assert_false(endpoint_of(a, b).stale);
	/* C, without a neighbour for B, took the new LID too. */
	assert_int_equal(endpoint_of(c, b).av.dlid, NEW_LID);
	/* No reregister: nothing went stale, nothing was probed. */
	assert_int_equal(sa.made_stale + sa.probes + sb.probes, 0);
	assert_int_equal(drops(a), 0);
	assert_int_equal(drops(b), 0);
	assert_no_sa_query(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* B takes a new LID and every port re-registers: A's AV of B is stale
 * (A also heard B's announcement, queued on B until B's broadcast group
 * is joined again). A's pings wait in their bounded queue until both
 * carriers are back and B confirmed itself; the first reply comes within
 * a second (the trackers pace re-joins over one). */
static void test_lid_change_and_reregister_all(void **state)
{
	struct iw w;
	struct iw_if *a, *b;
	struct imc_ipoib_stats sa;
	uint16_t seq = 0;
	uint64_t before;
	imc_time_t t0;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 3), 0xFFFF, &a, "10.0.0.4/24",
				  "fd00::4/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 13), 0xFFFF, &b,
				  "10.0.0.14/24", "fd00::14/64", NULL), 0);
	iw_run_for(&w, 10 * MS);
	ping_for(&w, a, "10.0.0.14", "fd00::14", &seq, 10 * MS);
	assert_int_equal(a->echo_replies, 2);
	t0 = imc_loop_now(w.loop);
	mark_replies(a);
	assert_int_equal(imc_fabric_lid_change(w.f, b->h->node, 1, NEW_LID),
			 0);
	assert_int_equal(imc_fabric_client_reregister(w.f, IMC_TOPO_NONE, 0),
			 0);
	ping_for(&w, a, "10.0.0.14", "fd00::14", &seq, 1500 * MS);
	report_recovery("LID change + reregister of every port", t0);
	assert_true(reply_after_mark - t0 < SEC);
	sa = iw_stats(a);
	assert_int_equal(iw_stats(b).announces, 2);
	assert_true(sa.made_stale >= 1);
	/* The bounds held: at most 16 per endpoint or neighbour, 4096 in
	 * all; what did not fit was counted. */
	assert_true(sa.queued_max_endpoint <= w.cfg.queue_endpoint);
	assert_true(sa.queued_max <= w.cfg.queue_total);
	assert_int_equal(sa.queued, 0);
	assert_int_equal(endpoint_of(a, b).av.dlid, NEW_LID);
	assert_false(endpoint_of(a, b).stale);
	/* From then on every ping is answered. */
	before = a->echo_replies;
	ping_for(&w, a, "10.0.0.14", "fd00::14", &seq, 100 * MS);
	assert_int_equal(a->echo_replies, before + 20);
	assert_int_equal(iw_stats(a).drops[IMC_IPOIB_DROP_UNRESOLVED], 0);
	assert_no_sa_query(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* The SM and its SA move to another host (an SM takeover): every port
 * hears an SM change and re-joins, every unicast AV is stale. The next
 * send to a peer probes it (a unicast ARP request or NS at the old AV),
 * the peer answers, and the pings flow within a second; then B takes a
 * new LID under the new SM, and A follows it at once. */
static void test_sm_move(void **state)
{
	struct iw w;
	struct iw_if *a, *b, *n;
	struct imc_ipoib_stats sa;
	uint16_t seq = 0;
	uint64_t before;
	imc_time_t t0;

	(void)state;
	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	w.movable_sm = true;
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 2), 0xFFFF, &a, "10.0.0.3/24",
				  "fd00::3/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 9), 0xFFFF, &b,
				  "10.0.0.10/24", "fd00::10/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 15), 0xFFFF, &n,
				  "10.0.0.16/24", NULL), 0);
	iw_run_for(&w, 10 * MS);
	ping_for(&w, a, "10.0.0.10", "fd00::10", &seq, 10 * MS);
	assert_int_equal(a->echo_replies, 2);
	t0 = imc_loop_now(w.loop);
	mark_replies(a);
	assert_int_equal(iw_sm_move(&w, n->h->node), 0);
	/* The ports hear the change (a ping sent before that would go out
	 * on the AV still trusted, and its answer would confirm B). */
	iw_run_for(&w, 1 * US);
	ping_for(&w, a, "10.0.0.10", "fd00::10", &seq, 1500 * MS);
	report_recovery("SM move (SA moves with it)", t0);
	assert_true(reply_after_mark - t0 < SEC);
	sa = iw_stats(a);
	assert_true(sa.made_stale >= 1);
	/* One probe per stale endpoint it sent to, answered: no multicast
	 * fallback was needed. */
	assert_int_equal(sa.probes, 1);
	assert_int_equal(sa.revalidated, 1);
	assert_int_equal(sa.resolve_failures, 0);
	assert_true(sa.queued_max_endpoint <= w.cfg.queue_endpoint);
	assert_true(imc_ipoib_carrier(a->ifc) && imc_ipoib_carrier(b->ifc));
	/* A LID change under the new SM. */
	t0 = imc_loop_now(w.loop);
	mark_replies(a);
	assert_int_equal(imc_fabric_lid_change(w.f, b->h->node, 1, NEW_LID),
			 0);
	before = a->echo_replies;
	ping_for(&w, a, "10.0.0.10", "fd00::10", &seq, 100 * MS);
	report_recovery("LID change under the new SM", t0);
	assert_true(reply_after_mark - t0 <= 10 * MS + 10 * US);
	assert_int_equal(a->echo_replies, before + 18);
	assert_int_equal(endpoint_of(a, b).av.dlid, NEW_LID);
	assert_no_sa_query(&w);
	assert_int_equal(iw_destroy(&w), 0);
}

/* The same inputs give the same run, event for event. */
static uint64_t one_run(void)
{
	struct iw w;
	struct iw_if *a, *b;
	uint64_t h;

	assert_int_equal(iw_create(&w, TREE, NULL, NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 1), 0xFFFF, &a, "10.0.0.2/24",
				  "fd00::2/64", NULL), 0);
	assert_int_equal(iw_if_up(&w, iw_hca(&w, 6), 0xFFFF, &b, "10.0.0.7/24",
				  "fd00::7/64", NULL), 0);
	iw_run_for(&w, 10 * MS);
	for (uint16_t s = 1; s <= 20; s++) {
		assert_int_equal(iw_ping(a, "10.0.0.7", s, 100), 0);
		assert_int_equal(iw_ping(b, "fd00::2", s, 100), 0);
		iw_run_for(&w, 100 * US);
	}
	assert_int_equal(imc_fabric_client_reregister(w.f, IMC_TOPO_NONE, 0),
			 0);
	iw_run_for(&w, 500 * MS);
	assert_int_equal(a->echo_replies, 20);
	assert_int_equal(b->echo_replies, 20);
	h = imc_fabric_trace_hash(w.f);
	assert_int_equal(iw_destroy(&w), 0);
	return h;
}

static void test_deterministic(void **state)
{
	(void)state;
	assert_true(one_run() == one_run());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_across_fat_tree),
		cmocka_unit_test(test_traffic_where_arp_never_ran),
		cmocka_unit_test(test_race_answer_after_rejoin),
		cmocka_unit_test(test_broadcast_qkey_from_sa),
		cmocka_unit_test(test_pkey_isolation),
		cmocka_unit_test(test_reregister_all),
		cmocka_unit_test(test_sendonly_join_and_idle_leave),
		cmocka_unit_test(test_lid_change_without_reregister),
		cmocka_unit_test(test_lid_change_and_reregister_all),
		cmocka_unit_test(test_sm_move),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
