/* The IPoIB interface core (ipoib.h), driven by events: a virtual loop, the
 * real join tracker over an SA client whose transport is a fake SA held
 * by the test (it answers MCMemberRecord Sets and Deletes when told), and
 * recorded ops. Peers are packets the test builds and hands to
 * imc_ipoib_recv() as a UD receive would give them. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipoib_fixture.h"

/* ------------------------------------------------------------------ */

static void test_bring_up(void **state)
{
	struct fx *f = *state;
	struct imc_gid bc = bcast_mgid();
	struct imc_ipoib_stats st;

	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_DOWN);
	assert_int_equal(imc_ipoib_mtu(f->ifc), 2044);
	up(f);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_JOINING);
	f->in_api = true;
	assert_int_equal(imc_ipoib_up(f->ifc), -EALREADY);
	f->in_api = false;
	f->hold = true;
	run_for(f, 10 * MS);
	/* One join, FullMember, of the broadcast group by MGID. */
	assert_int_equal(f->nreqs, 1);
	assert_int_equal(f->reqs[0].mad.mad.method, UMAD_METHOD_SET);
	assert_true(imc_gid_equal(&f->reqs[0].rec.mgid, &bc));
	assert_int_equal(f->reqs[0].rec.join_state, IMC_JOIN_FULL);
	assert_true(f->reqs[0].mad.sa.comp_mask & UMAD_SA_MCM_COMP_MASK_MGID);
	assert_true(imc_gid_equal(&f->reqs[0].rec.port_gid, &f->cfg.port_gid));
	/* No carrier before the answer. */
	assert_false(imc_ipoib_carrier(f->ifc));
	assert_int_equal(f->carrier_calls, 0);
	answer_all(f);
	run_for(f, MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_true(imc_ipoib_carrier(f->ifc));
	assert_int_equal(f->carrier_calls, 1);
	assert_int_equal(f->natt, 1);
	assert_true(f->att[0].attach);
	assert_true(imc_gid_equal(&f->att[0].mgid, &bc));
	assert_int_equal(f->att[0].mlid, BC_MLID);
	st = stats(f);
	assert_int_equal(st.joins, 1);
	assert_int_equal(st.carrier_changes, 1);
	assert_int_equal(st.groups, 1);
	/* The hardware address: flags, QPN, GID. */
	{
		struct imc_ipoib_hwaddr hw;

		imc_ipoib_hwaddr(f->ifc, &hw);
		assert_int_equal(hw.qpn, OUR_QPN);
		assert_true(imc_gid_equal(&hw.gid, &f->cfg.port_gid));
	}
}

static void test_arp_resolves_and_flushes_in_order(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(1);
	uint8_t pkt[128];
	struct imc_ipoib_arp a;
	struct imc_ipoib_stats st;
	size_t n;

	bring_up(f);
	for (uint16_t seq = 1; seq <= 3; seq++) {
		n = ping4(pkt, IP4(10, 0, 0, 1), p2.ip, 8, seq, 0);
		assert_int_equal(xmit(f, pkt, n), 0);
	}
	/* One ARP request, to the broadcast group, sent at once. */
	assert_int_equal(f->nsent, 1);
	assert_to_bcast(&f->sent[0]);
	parse_arp(&f->sent[0], &a);
	assert_int_equal(a.op, IMC_ARP_OP_REQUEST);
	assert_int_equal(a.spa, IP4(10, 0, 0, 1));
	assert_int_equal(a.tpa, p2.ip);
	assert_int_equal(a.sha.qpn, OUR_QPN);
	assert_true(imc_gid_equal(&a.sha.gid, &f->cfg.port_gid));
	st = stats(f);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.neighbours, 1);
	rx_arp(f, &p2, IMC_ARP_OP_REPLY, IP4(10, 0, 0, 1), false);
	/* The three pings, in order, on an AV made without a PathRecord. */
	assert_int_equal(f->nsent, 4);
	for (unsigned i = 1; i <= 3; i++) {
		assert_fabricated(&f->sent[i], &p2);
		assert_int_equal(imc_get16(f->sent[i].data),
				 IMC_ETHERTYPE_IPV4);
		assert_int_equal(imc_get16(f->sent[i].data + 4 + 26), i);
	}
	st = stats(f);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.queued_max, 3);
	assert_int_equal(st.queued_max_endpoint, 3);
	assert_int_equal(st.queued_max_group, 0);
	assert_int_equal(st.resolved, 1);
	assert_int_equal(st.tx_packets, 3);
	assert_int_equal(st.tx_bytes, 3 * 28);
	assert_int_equal(st.arp_tx, 1);
	assert_int_equal(st.arp_rx, 1);
	assert_int_equal(st.endpoints, 1);
	assert_int_equal(st.avs_fabricated, 1);
	/* Next packet goes straight out. */
	n = ping4(pkt, IP4(10, 0, 0, 1), p2.ip, 8, 4, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(f->nsent, 5);
	assert_fabricated(&f->sent[4], &p2);
	/* Every SA request was a join or a leave of a group: checked in
	 * sa_send() for each, no PathRecord. */
	assert_int_equal(f->nreqs, 1);
}

static void grab_neigh(void *arg, const struct imc_ipoib_neigh_info *n)
{
	*(struct imc_ipoib_neigh_info *)arg = *n;
}

static void test_answers_arp_request(void **state)
{
	struct fx *f = *state;
	struct peer p3 = peer(2);
	struct imc_ipoib_arp a;
	struct imc_ipoib_neigh_info ni;
	struct imc_ipoib_stats st;

	bring_up(f);
	/* Every port of the partition hears every request: one for another
	 * address from a stranger leaves nothing behind. */
	{
		struct peer p9 = peer(9);

		rx_arp(f, &p9, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 77), true);
		assert_int_equal(stats(f).endpoints, 0);
		assert_int_equal(stats(f).neighbours, 0);
		assert_int_equal(stats(f).arp_rx, 1);
	}
	rx_arp(f, &p3, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 1), true);
	assert_int_equal(f->nsent, 1);
	assert_fabricated(&f->sent[0], &p3);
	parse_arp(&f->sent[0], &a);
	assert_int_equal(a.op, IMC_ARP_OP_REPLY);
	assert_int_equal(a.spa, IP4(10, 0, 0, 1));
	assert_int_equal(a.sha.qpn, OUR_QPN);
	assert_int_equal(a.tpa, p3.ip);
	assert_int_equal(a.tha.qpn, p3.qpn);
	assert_true(imc_gid_equal(&a.tha.gid, &p3.gid));
	/* A request for another address: no answer, no neighbour. */
	rx_arp(f, &p3, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 77), true);
	assert_int_equal(f->nsent, 1);
	/* The requester became a neighbour (RFC 826), reachable at its
	 * hardware address. */
	imc_ipoib_foreach_neigh(f->ifc, grab_neigh, &ni);
	st = stats(f);
	assert_int_equal(st.neighbours, 1);
	assert_int_equal(ni.addr.v4, p3.ip);
	assert_int_equal(ni.state, IMC_IPOIB_NEIGH_REACHABLE);
	assert_int_equal(ni.hw.qpn, p3.qpn);
	assert_true(imc_gid_equal(&ni.hw.gid, &p3.gid));
	/* A packet to it needs no ARP. */
	{
		uint8_t pkt[64];
		size_t n = ping4(pkt, IP4(10, 0, 0, 1), p3.ip, 0, 9, 0);

		assert_int_equal(xmit(f, pkt, n), 0);
		assert_int_equal(f->nsent, 2);
		assert_fabricated(&f->sent[1], &p3);
		assert_int_equal(stats(f).arp_tx, 1);
	}
}

/* The receive-before-callback race: the tracker attaches the QP to the
 * broadcast group when the SA has answered, and only later runs the
 * member's callback that gives the interface the group's record. A
 * broadcast ARP request and a ping arriving in that window are answered
 * once the record is there: nothing sent before, nothing lost. */
static uint8_t race_ping[64];
static size_t race_ping_len;

static void race_window(struct fx *f, const struct imc_gid *mgid)
{
	struct peer p4 = peer(3);
	struct imc_gid bc = bcast_mgid();

	if (!imc_gid_equal(mgid, &bc))
		return;
	/* Attached, callback not yet run. */
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_JOINING);
	rx_arp(f, &p4, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 1), true);
	race_ping_len = ping4(race_ping, p4.ip, IP4(10, 0, 0, 1), 8, 7, 16);
	rx_from(f, &p4, &bc, IMC_ETHERTYPE_IPV4, race_ping, race_ping_len);
	/* The host answers the ping at once. */
	assert_int_equal(f->ndlv, 1);
	{
		uint8_t reply[64];
		size_t n = ping4(reply, IP4(10, 0, 0, 1), p4.ip, 0, 7, 16);

		assert_int_equal(imc_ipoib_xmit(f->ifc, reply, n), 0);
	}
	/* Nothing may go out without the broadcast record. */
	assert_int_equal(f->nsent, 0);
	f->on_attach = NULL;
}

static void test_race_answer_waits_for_av(void **state)
{
	struct fx *f = *state;
	struct peer p4 = peer(3);
	struct imc_ipoib_arp a;
	struct imc_ipoib_stats st;
	struct imc_ipoib_endpoint_info e;

	add_addr(f, "10.0.0.1/24");
	f->on_attach = race_window;
	up(f);
	run_for(f, 10 * MS);
	assert_null(f->on_attach);  /* the window was hit */
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	/* Both answers, in the order they were made, on the AV fabricated
	 * from the record the callback brought. */
	assert_int_equal(f->nsent, 2);
	parse_arp(&f->sent[0], &a);
	assert_int_equal(a.op, IMC_ARP_OP_REPLY);
	assert_int_equal(a.tpa, p4.ip);
	assert_fabricated(&f->sent[0], &p4);
	assert_fabricated(&f->sent[1], &p4);
	assert_int_equal(f->sent[1].data[4 + 20], 0);   /* echo reply */
	assert_int_equal(imc_get16(f->sent[1].data + 4 + 26), 7);
	st = stats(f);
	assert_int_equal(st.deferred, 2);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_NOT_LISTENING], 0);
	assert_int_equal(st.endpoints_from_rx, 1);
	assert_int_equal(st.rx_mcast, 1);
	assert_true(f->dlv[0].multicast);
	assert_memory_equal(f->dlv[0].data, race_ping, race_ping_len);
	assert_int_equal(imc_ipoib_endpoint_get(f->ifc, &p4.gid, &e), 0);
	assert_false(e.multicast);
	assert_true(e.has_av);
}

/* Traffic where ARP never ran: a packet from an unknown GID makes its
 * endpoint, and its source address maps to it, so the answer needs no
 * resolution. */
static void test_endpoint_from_receive(void **state)
{
	struct fx *f = *state;
	struct peer p5 = peer(4);
	uint8_t pkt[64];
	size_t n;
	struct imc_ipoib_stats st;

	bring_up(f);
	n = ping4(pkt, p5.ip, IP4(10, 0, 0, 1), 8, 1, 0);
	rx_from(f, &p5, NULL, IMC_ETHERTYPE_IPV4, pkt, n);
	assert_int_equal(f->ndlv, 1);
	assert_false(f->dlv[0].multicast);
	assert_true(imc_gid_equal(&f->dlv[0].src, &p5.gid));
	n = ping4(pkt, IP4(10, 0, 0, 1), p5.ip, 0, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(f->nsent, 1);
	assert_fabricated(&f->sent[0], &p5);
	st = stats(f);
	assert_int_equal(st.arp_tx, 0);
	assert_int_equal(st.endpoints_from_rx, 1);
	assert_int_equal(st.rx_packets, 1);
	assert_int_equal(st.rx_bytes, 28);
	/* The peer's LID changes (a new sweep): the next packet from it
	 * moves the endpoint. */
	p5.lid = 99;
	n = ping4(pkt, p5.ip, IP4(10, 0, 0, 1), 8, 2, 0);
	rx_from(f, &p5, NULL, IMC_ETHERTYPE_IPV4, pkt, n);
	n = ping4(pkt, IP4(10, 0, 0, 1), p5.ip, 0, 2, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_fabricated(&f->sent[1], &p5);
	/* An off-link source is not gleaned. */
	n = ping4(pkt, IP4(192, 168, 0, 9), IP4(10, 0, 0, 1), 8, 3, 0);
	rx_from(f, &p5, NULL, IMC_ETHERTYPE_IPV4, pkt, n);
	assert_int_equal(stats(f).neighbours, 1);
}

static void count_mcast_av(void *arg, const struct imc_ipoib_endpoint_info *e)
{
	unsigned *n = arg;

	if (e->multicast && e->has_av) {
		assert_int_equal(e->av.dlid, mlid_of(F, &e->gid));
		assert_true(imc_gid_equal(&e->av.dgid, &e->gid));
		(*n)++;
	}
	if (!e->multicast)
		assert_false(imc_gid_is_multicast(&e->gid));
}

static void test_never_fabricates_multicast_av(void **state)
{
	struct fx *f = *state;
	struct peer bad = peer(5);
	struct imc_gid bc = bcast_mgid();
	struct imc_ipoib_endpoint_info e;
	uint8_t pkt[64];
	size_t n;
	unsigned with_av = 0;

	add_addr(f, "10.0.0.1/24");
	up(f);
	f->hold = true;
	run_for(f, 10 * MS);
	/* The broadcast group exists but has no AV until its answer. */
	assert_int_equal(imc_ipoib_endpoint_get(f->ifc, &bc, &e), 0);
	assert_true(e.multicast);
	assert_false(e.has_av);
	/* A packet claiming a multicast source GID makes no endpoint. */
	bad.gid = bc;
	n = ping4(pkt, bad.ip, IP4(10, 0, 0, 1), 8, 1, 0);
	rx_from(f, &bad, NULL, IMC_ETHERTYPE_IPV4, pkt, n);
	assert_int_equal(stats(f).endpoints, 0);
	/* A multicast send waits for the join. */
	n = ping4(pkt, IP4(10, 0, 0, 1), IP4(239, 1, 2, 3), 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(f->nsent, 0);
	answer_all(f);
	run_for(f, 10 * MS);
	answer_all(f);
	run_for(f, 10 * MS);
	/* Sent on the AV of the join answer (checked in op_send). */
	assert_int_equal(f->nsent, 1);
	imc_ipoib_foreach_endpoint(f->ifc, count_mcast_av, &with_av);
	assert_int_equal(with_av, 2);
}

static void tweak_fast_arp(struct imc_ipoib_config *c)
{
	c->resolve_timeout = 100 * MS;
	c->resolve_retries = 2;
	c->queue_endpoint = 2;
}

static int setup_fast_arp(void **state)
{
	return setup_cfg(state, tweak_fast_arp);
}

static void test_arp_timeout_and_queue_bound(void **state)
{
	struct fx *f = *state;
	uint8_t pkt[64];
	size_t n;
	struct imc_ipoib_stats st;

	bring_up(f);
	for (uint16_t i = 0; i < 3; i++) {
		n = ping4(pkt, IP4(10, 0, 0, 1), IP4(10, 0, 0, 99), 8, i, 0);
		assert_int_equal(xmit(f, pkt, n), i < 2 ? 0 : -ENOBUFS);
	}
	st = stats(f);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_QUEUE_ENDPOINT], 1);
	assert_int_equal(st.queued, 2);
	run_for(f, 250 * MS);
	/* First try and two retries. */
	assert_int_equal(stats(f).arp_tx, 3);
	assert_int_equal(stats(f).neighbours, 1);
	run_for(f, 100 * MS);
	st = stats(f);
	assert_int_equal(st.resolve_retries, 2);
	assert_int_equal(st.resolve_failures, 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_UNRESOLVED], 2);
	assert_int_equal(st.neighbours, 0);
	assert_int_equal(st.queued, 0);
	/* Off-link: no route. */
	n = ping4(pkt, IP4(10, 0, 0, 1), IP4(192, 168, 1, 1), 8, 0, 0);
	assert_int_equal(xmit(f, pkt, n), -EHOSTUNREACH);
	assert_int_equal(stats(f).drops[IMC_IPOIB_DROP_NO_ROUTE], 1);
}

static void tweak_total(struct imc_ipoib_config *c)
{
	c->queue_total = 3;
	c->queue_group = 2;
}

static int setup_total(void **state)
{
	return setup_cfg(state, tweak_total);
}

static void test_group_and_total_bounds(void **state)
{
	struct fx *f = *state;
	uint8_t pkt[64];
	size_t n;
	struct imc_ipoib_stats st;

	add_addr(f, "10.0.0.1/24");
	up(f);
	f->hold = true;
	/* Not up yet: everything waits. 3 to one group: the third is over
	 * the group's bound. */
	for (int i = 0; i < 3; i++) {
		n = ping4(pkt, IP4(10, 0, 0, 1), IP4(239, 0, 0, 1), 8,
			  (uint16_t)i, 0);
		assert_int_equal(xmit(f, pkt, n), i < 2 ? 0 : -ENOBUFS);
	}
	/* A second group: one fits the total of 3, the next does not. */
	for (int i = 0; i < 2; i++) {
		n = ping4(pkt, IP4(10, 0, 0, 1), IP4(239, 0, 0, 2), 8,
			  (uint16_t)i, 0);
		assert_int_equal(xmit(f, pkt, n), i < 1 ? 0 : -ENOBUFS);
	}
	st = stats(f);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_QUEUE_GROUP], 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_QUEUE_TOTAL], 1);
	assert_int_equal(st.queued, 3);
	assert_int_equal(st.queued_max, 3);
	assert_int_equal(st.queued_max_group, 2);
	/* Join everything; all three go out. */
	for (int k = 0; k < 4; k++) {
		run_for(f, 10 * MS);
		answer_all(f);
	}
	run_for(f, 10 * MS);
	assert_int_equal(f->nsent, 3);
	assert_int_equal(stats(f).tx_mcast, 3);
	assert_int_equal(stats(f).queued, 0);
}

static bool has_req(struct fx *f, unsigned from, uint8_t method,
		    const struct imc_gid *mgid, uint8_t js, uint64_t mask)
{
	for (unsigned i = from; i < f->nreqs; i++)
		if (f->reqs[i].mad.mad.method == method &&
		    imc_gid_equal(&f->reqs[i].rec.mgid, mgid) &&
		    f->reqs[i].rec.join_state == js &&
		    (f->reqs[i].mad.sa.comp_mask & mask) == mask)
			return true;
	return false;
}

#define CREATE_MASK (UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_PKEY | \
		     UMAD_SA_MCM_COMP_MASK_TCLASS | UMAD_SA_MCM_COMP_MASK_SL | \
		     UMAD_SA_MCM_COMP_MASK_FLOW_LABEL)

static void test_listen_joins_full_member(void **state)
{
	struct fx *f = *state;
	struct imc_ip_addr g;
	struct imc_gid mgid;
	struct peer p6 = peer(6);
	uint8_t pkt[64];
	size_t n;
	unsigned r0;

	bring_up(f);
	r0 = f->nreqs;
	assert_int_equal(imc_ip_addr_parse("239.1.1.1", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(g.v4, 0xFFFF, 2, &mgid), 0);
	/* Before the listen, the group's packets are not ours. */
	n = ping4(pkt, p6.ip, g.v4, 8, 1, 0);
	rx_from(f, &p6, &mgid, IMC_ETHERTYPE_IPV4, pkt, n);
	assert_int_equal(f->ndlv, 0);
	assert_int_equal(stats(f).drops[IMC_IPOIB_DROP_NOT_LISTENING], 1);
	f->in_api = true;
	assert_int_equal(imc_ipoib_mcast_listen(f->ifc, &g), 0);
	assert_int_equal(imc_ipoib_mcast_listen(f->ifc, &g), 0);
	f->in_api = false;
	run_for(f, 10 * MS);
	/* One FullMember join with the broadcast group's parameters. */
	assert_int_equal(f->nreqs, r0 + 1);
	assert_true(has_req(f, r0, UMAD_METHOD_SET, &mgid, IMC_JOIN_FULL,
			    CREATE_MASK));
	assert_int_equal(f->reqs[r0].rec.qkey, QKEY);
	assert_int_equal(f->reqs[r0].rec.sl, BC_SL);
	assert_int_equal(f->reqs[r0].rec.flow_label, BC_FLOW);
	assert_int_equal(f->reqs[r0].rec.tclass, BC_TCLASS);
	assert_int_equal(f->att[f->natt - 1].mlid, mlid_of(f, &mgid));
	rx_from(f, &p6, &mgid, IMC_ETHERTYPE_IPV4, pkt, n);
	assert_int_equal(f->ndlv, 1);
	assert_true(f->dlv[0].multicast);
	/* Two listens, two unlistens; the second leaves. */
	f->in_api = true;
	assert_int_equal(imc_ipoib_mcast_unlisten(f->ifc, &g), 0);
	f->in_api = false;
	run_for(f, 10 * MS);
	assert_int_equal(f->nreqs, r0 + 1);
	f->in_api = true;
	assert_int_equal(imc_ipoib_mcast_unlisten(f->ifc, &g), 0);
	assert_int_equal(imc_ipoib_mcast_unlisten(f->ifc, &g), -ENOENT);
	f->in_api = false;
	run_for(f, 10 * MS);
	assert_true(has_req(f, r0 + 1, UMAD_SA_METHOD_DELETE, &mgid,
			    IMC_JOIN_FULL, 0));
	assert_false(f->att[f->natt - 1].attach);
	assert_int_equal(stats(f).groups, 1);
	/* Not a multicast address. */
	assert_int_equal(imc_ip_addr_parse("10.0.0.9", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mcast_listen(f->ifc, &g), -EINVAL);
}

static void test_sendonly_join_and_idle_leave(void **state)
{
	struct fx *f = *state;
	struct imc_gid mgid;
	uint8_t pkt[64];
	size_t n;
	unsigned r0, a0;
	struct imc_ipoib_stats st;

	bring_up(f);
	r0 = f->nreqs;
	a0 = f->natt;
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(239, 9, 9, 9), 0xFFFF, 2,
						  &mgid), 0);
	n = ping4(pkt, IP4(10, 0, 0, 1), IP4(239, 9, 9, 9), 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(f->nsent, 0);
	run_for(f, 10 * MS);
	/* SendOnlyFullMember; no QP attached for it. */
	assert_true(has_req(f, r0, UMAD_METHOD_SET, &mgid,
			    IMC_JOIN_SENDONLY_FULL, CREATE_MASK));
	assert_int_equal(f->natt, a0);
	assert_int_equal(f->nsent, 1);
	assert_int_equal(f->sent[0].qpn, 0xFFFFFF);
	assert_int_equal(f->sent[0].av.dlid, mlid_of(f, &mgid));
	/* Sending keeps it; 10 s after the last send it is left. */
	run_for(f, 5 * SEC);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(f->nsent, 2);
	run_for(f, 9 * SEC);
	assert_int_equal(stats(f).groups, 2);
	run_for(f, 2 * SEC);
	st = stats(f);
	assert_int_equal(st.groups, 1);
	assert_int_equal(st.sendonly_joins, 1);
	assert_int_equal(st.sendonly_leaves, 1);
	assert_true(has_req(f, r0 + 1, UMAD_SA_METHOD_DELETE, &mgid,
			    IMC_JOIN_SENDONLY_FULL, 0));
}

static void tweak_no_sendonly_full(struct imc_ipoib_config *c)
{
	c->sa_sendonly_full = false;
}

static int setup_no_sof(void **state)
{
	return setup_cfg(state, tweak_no_sendonly_full);
}

static void test_sendonly_without_sa_capability(void **state)
{
	struct fx *f = *state;
	struct imc_gid mgid;
	uint8_t pkt[64];
	size_t n;
	unsigned r0;

	bring_up(f);
	r0 = f->nreqs;
	assert_int_equal(imc_ipoib_mgid_from_ipv4(IP4(239, 9, 9, 8), 0xFFFF, 2,
						  &mgid), 0);
	n = ping4(pkt, IP4(10, 0, 0, 1), IP4(239, 9, 9, 8), 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	run_for(f, 10 * MS);
	assert_true(has_req(f, r0, UMAD_METHOD_SET, &mgid,
			    IMC_JOIN_SENDONLY_NON, 0));
	assert_int_equal(f->nsent, 1);
	/* The tracker subscribed to trap 67 for it: a SendOnlyNonMember
	 * does not keep the group alive. */
	assert_int_equal(f->subscriptions, 1);
}

static void test_join_error_drops_and_retries(void **state)
{
	struct fx *f = *state;
	uint8_t pkt[64];
	size_t n;
	struct imc_ip_addr g;

	bring_up(f);
	/* A send-only join refused: what waited is dropped, counted. */
	f->status_for_next = 0x0200;
	n = ping4(pkt, IP4(10, 0, 0, 1), IP4(239, 7, 7, 7), 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	run_for(f, 10 * MS);
	assert_int_equal(stats(f).drops[IMC_IPOIB_DROP_JOIN_FAILED], 1);
	assert_int_equal(stats(f).join_errors, 1);
	assert_int_equal(stats(f).groups, 1);
	/* A listened group refused: retried after 1 s. */
	f->status_for_next = 0x0200;
	imc_ip_addr_v4(IP4(239, 7, 7, 8), &g);
	assert_int_equal(imc_ipoib_mcast_listen(f->ifc, &g), 0);
	run_for(f, 10 * MS);
	assert_int_equal(stats(f).join_errors, 2);
	{
		unsigned r = f->nreqs;

		run_for(f, 1100 * MS);
		assert_true(f->nreqs > r);
	}
	assert_int_equal(stats(f).join_errors, 2);
	assert_int_equal(f->att[f->natt - 1].attach, true);
}

static void test_bcast_failure_backs_off(void **state)
{
	struct fx *f = *state;

	add_addr(f, "10.0.0.1/24");
	f->status_for_next = 0x0300;
	up(f);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_BACKOFF);
	assert_false(f->carrier);
	run_for(f, 900 * MS);
	assert_int_equal(f->nreqs, 1);
	run_for(f, 200 * MS);
	assert_int_equal(f->nreqs, 2);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_true(f->carrier);
	assert_int_equal(stats(f).join_errors, 1);
}

/* RFC 4391 4: the QP takes the broadcast group's Q_Key when the join is
 * answered, before carrier, and every datagram carries it: the other
 * groups are created with it too. */
static void test_qkey_from_broadcast_record(void **state)
{
	struct fx *f = *state;
	struct imc_ip_addr g;

	f->qkey_answer = 0x2A2B2C2D;
	add_addr(f, "10.0.0.1/24");
	up(f);
	assert_int_equal(f->set_qkey_calls, 0);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_int_equal(f->set_qkey_calls, 1);
	assert_int_equal(f->qp_qkey, 0x2A2B2C2D);
	/* An ARP request to the broadcast group and a listen's join. */
	assert_int_equal(imc_ip_addr_parse("239.1.1.1", &g, NULL), 0);
	f->in_api = true;
	assert_int_equal(imc_ipoib_mcast_listen(f->ifc, &g), 0);
	f->in_api = false;
	{
		uint8_t pkt[64];
		size_t n = ping4(pkt, IP4(10, 0, 0, 1), IP4(10, 0, 0, 9), 8,
				 1, 0);

		assert_int_equal(xmit(f, pkt, n), 0);
	}
	run_for(f, 10 * MS);
	assert_true(f->nsent >= 1);
	assert_int_equal(f->sent[0].qkey, 0x2A2B2C2D);
	assert_int_equal(f->reqs[f->nreqs - 1].rec.qkey, 0x2A2B2C2D);
	/* Only the broadcast join sets it. */
	assert_int_equal(f->set_qkey_calls, 1);
}

/* A Q_Key the QP refuses fails the broadcast join like an SA error:
 * left, no carrier, retried after the backoff. */
static void test_qkey_refused_backs_off(void **state)
{
	struct fx *f = *state;

	f->set_qkey_rc = -EIO;
	add_addr(f, "10.0.0.1/24");
	up(f);
	run_for(f, 10 * MS);
	assert_int_equal(f->set_qkey_calls, 1);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_BACKOFF);
	assert_false(f->carrier);
	assert_int_equal(f->carrier_calls, 0);
	assert_int_equal(stats(f).join_errors, 1);
	/* The membership went back to the SA, the QP off the group. */
	assert_int_equal(f->reqs[f->nreqs - 1].mad.mad.method,
			 UMAD_SA_METHOD_DELETE);
	assert_false(f->att[f->natt - 1].attach);
	f->set_qkey_rc = 0;
	run_for(f, 1100 * MS);
	assert_int_equal(f->set_qkey_calls, 2);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_true(f->carrier);
	assert_int_equal(f->qp_qkey, QKEY);
}

static void test_reregister_carrier_down_up(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(1);
	uint8_t pkt[64];
	size_t n;

	bring_up(f);
	rx_arp(f, &p2, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 1), true);
	assert_int_equal(f->nsent, 1);
	f->hold = true;
	imc_mcast_port_event(f->mc, IMC_MCAST_PORT_REREGISTER);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_JOINING);
	assert_false(f->carrier);
	assert_int_equal(f->carrier_calls, 2);
	/* Sent meanwhile: waits for the re-join. */
	n = ping4(pkt, IP4(10, 0, 0, 1), p2.ip, 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(f->nsent, 1);
	answer_all(f);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_true(f->carrier);
	assert_int_equal(f->carrier_calls, 3);
	assert_int_equal(f->nsent, 2);
	assert_fabricated(&f->sent[1], &p2);
	/* Port down and up: WAITING, then re-joined. */
	imc_mcast_port_event(f->mc, IMC_MCAST_PORT_DOWN);
	run_for(f, 10 * MS);
	assert_false(f->carrier);
	imc_mcast_port_event(f->mc, IMC_MCAST_PORT_ACTIVE);
	run_for(f, 10 * MS);
	answer_all(f);
	run_for(f, 10 * MS);
	assert_true(f->carrier);
	assert_int_equal(stats(f).carrier_changes, 5);
}

/* The unanswered Set of mgid from request from on, or -1. */
static int set_of(struct fx *f, unsigned from, const struct imc_gid *mgid)
{
	for (unsigned i = from; i < f->nreqs; i++)
		if (!f->reqs[i].answered &&
		    f->reqs[i].mad.mad.method == UMAD_METHOD_SET &&
		    imc_gid_equal(&f->reqs[i].rec.mgid, mgid))
			return (int)i;
	return -1;
}

/* After a reregister, a listened group's re-join may be answered before
 * the broadcast group's: what waited in its queue goes once the
 * interface is up again. */
static void test_group_rejoined_before_bcast(void **state)
{
	struct fx *f = *state;
	struct imc_ip_addr g;
	struct imc_gid mgid, bc = bcast_mgid();
	uint8_t pkt[64];
	unsigned r0, tx0;
	size_t n;
	int i;

	bring_up(f);
	assert_int_equal(imc_ip_addr_parse("239.1.1.1", &g, NULL), 0);
	assert_int_equal(imc_ipoib_mgid_from_ipv4(g.v4, 0xFFFF, 2, &mgid), 0);
	f->in_api = true;
	assert_int_equal(imc_ipoib_mcast_listen(f->ifc, &g), 0);
	f->in_api = false;
	run_for(f, 10 * MS);
	assert_int_equal(stats(f).tx_mcast, 0);
	f->hold = true;
	r0 = f->nreqs;
	imc_mcast_port_event(f->mc, IMC_MCAST_PORT_REREGISTER);
	run_for(f, 200 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_JOINING);
	n = ping4(pkt, IP4(10, 0, 0, 1), g.v4, 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	assert_int_equal(stats(f).queued, 1);
	tx0 = f->nsent;
	i = set_of(f, r0, &mgid);
	assert_true(i >= 0);
	answer(f, (unsigned)i);
	run_for(f, 10 * MS);
	assert_int_equal(f->nsent, tx0);     /* the interface is not up */
	i = set_of(f, r0, &bc);
	assert_true(i >= 0);
	answer(f, (unsigned)i);
	run_for(f, 10 * MS);
	assert_int_equal(imc_ipoib_state(f->ifc), IMC_IPOIB_UP);
	assert_int_equal(stats(f).queued, 0);
	assert_int_equal(stats(f).tx_mcast, 1);
	assert_int_equal(f->nsent, tx0 + 1);
	assert_int_equal(f->sent[tx0].qpn, 0xFFFFFF);
	assert_int_equal(f->sent[tx0].av.dlid, mlid_of(f, &mgid));
}

static void test_down_flushes_and_leaves(void **state)
{
	struct fx *f = *state;
	uint8_t pkt[64];
	size_t n;
	struct imc_ipoib_stats st;
	struct imc_gid bc = bcast_mgid();
	unsigned r0;

	bring_up(f);
	n = ping4(pkt, IP4(10, 0, 0, 1), IP4(10, 0, 0, 50), 8, 1, 0);
	assert_int_equal(xmit(f, pkt, n), 0);
	r0 = f->nreqs;
	f->in_api = true;
	imc_ipoib_down(f->ifc);
	f->in_api = false;
	st = stats(f);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_FLUSHED], 1);
	assert_int_equal(st.neighbours, 0);
	assert_int_equal(st.queued, 0);
	assert_false(imc_ipoib_carrier(f->ifc));
	run_for(f, 10 * MS);
	assert_int_equal(f->carrier_calls, 2);
	assert_true(has_req(f, r0, UMAD_SA_METHOD_DELETE, &bc, IMC_JOIN_FULL,
			    0));
	assert_int_equal(xmit(f, pkt, n), -ENETDOWN);
	assert_int_equal(stats(f).drops[IMC_IPOIB_DROP_DOWN], 1);
	/* Up again with the same address. */
	up(f);
	run_for(f, 10 * MS);
	assert_true(f->carrier);
}

static void test_receive_checks(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(1);
	uint8_t pkt[64], buf[64];
	size_t n;
	struct imc_ipoib_rx rx;
	struct imc_ipoib_stats st;

	bring_up(f);
	n = ping4(pkt, p2.ip, IP4(10, 0, 0, 1), 8, 1, 0);
	imc_put16(buf, IMC_ETHERTYPE_IPV4);
	imc_put16(buf + 2, 0);
	memcpy(buf + 4, pkt, n);
	memset(&rx, 0, sizeof(rx));
	rx.src_qp = p2.qpn;
	rx.slid = p2.lid;
	rx.has_grh = true;
	rx.sgid = p2.gid;
	rx.dgid = f->cfg.port_gid;
	rx.data = buf;
	rx.len = n + 4;
	/* Another partition (IBA 10.9). */
	rx.pkey = 0x8001;
	imc_ipoib_recv(f->ifc, &rx);
	/* Limited membership of the same partition is the same link. */
	rx.pkey = 0x7FFF;
	imc_ipoib_recv(f->ifc, &rx);
	rx.pkey = 0xFFFF;
	/* Our own multicast, looped back. */
	rx.sgid = f->cfg.port_gid;
	rx.src_qp = OUR_QPN;
	imc_ipoib_recv(f->ifc, &rx);
	rx.sgid = p2.gid;
	rx.src_qp = p2.qpn;
	/* Short, unknown EtherType, bad IP, IPv6 EtherType with IPv4. */
	rx.len = 3;
	imc_ipoib_recv(f->ifc, &rx);
	rx.len = n + 4;
	imc_put16(buf, 0x1234);
	imc_ipoib_recv(f->ifc, &rx);
	imc_put16(buf, IMC_ETHERTYPE_IPV6);
	imc_ipoib_recv(f->ifc, &rx);
	imc_put16(buf, IMC_ETHERTYPE_IPV4);
	rx.len = 4 + 10;
	imc_ipoib_recv(f->ifc, &rx);
	st = stats(f);
	assert_int_equal(f->ndlv, 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_PKEY], 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_LOOPBACK], 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_MALFORMED], 3);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_ETHERTYPE], 1);
	/* Transmit checks: above the MTU, not IP. */
	{
		static uint8_t big[2100];
		size_t bn = ping4(big, IP4(10, 0, 0, 1), p2.ip, 8, 1, 2045 - 28);

		assert_int_equal(xmit(f, big, bn), -EMSGSIZE);
		bn = ping4(big, IP4(10, 0, 0, 1), p2.ip, 8, 1, 2044 - 28);
		assert_int_equal(xmit(f, big, bn), 0);
		big[0] = 0x35;
		assert_int_equal(xmit(f, big, 20), -EINVAL);
	}
	st = stats(f);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_MTU], 1);
	assert_int_equal(st.drops[IMC_IPOIB_DROP_MALFORMED], 4);
}

/* ---- IPv6 ---- */

static void rx_nd(struct fx *f, const struct peer *pr, const struct ipo_nd *nd,
		  const struct imc_gid *dgid)
{
	uint8_t buf[128];
	int n = ipo_nd_build(nd, buf, sizeof(buf));

	assert_true(n > 0);
	rx_from(f, pr, dgid, IMC_ETHERTYPE_IPV6, buf, (size_t)n);
}

static void v6(const char *s, uint8_t out[16])
{
	struct imc_ip_addr a;

	assert_int_equal(imc_ip_addr_parse(s, &a, NULL), 0);
	memcpy(out, a.v6, 16);
}

static void test_ipv6_nd(void **state)
{
	struct fx *f = *state;
	struct peer p7 = peer(7);
	uint8_t pkt[128], snm[16], all[16];
	struct imc_gid snm_mgid, own_snm, all_mgid;
	struct ipo_nd nd, got;
	size_t n;
	unsigned r0;

	add_addr(f, "fd00::1/64");
	bring_up(f);
	run_for(f, 10 * MS);
	/* All-nodes and our solicited-node group, FullMember. */
	v6("ff02::1", all);
	imc_ipoib_mgid_from_ipv6(all, 0xFFFF, 2, &all_mgid);
	v6("ff02::1:ff00:1", snm);
	imc_ipoib_mgid_from_ipv6(snm, 0xFFFF, 2, &own_snm);
	assert_true(has_req(f, 0, UMAD_METHOD_SET, &all_mgid, IMC_JOIN_FULL,
			    CREATE_MASK));
	assert_true(has_req(f, 0, UMAD_METHOD_SET, &own_snm, IMC_JOIN_FULL,
			    CREATE_MASK));
	r0 = f->nreqs;
	/* A packet to fd00::7: an NS to its solicited-node group, through
	 * a send-only join. */
	n = udp6(pkt, "fd00::1", "fd00::7", 10);
	assert_int_equal(xmit(f, pkt, n), 0);
	run_for(f, 10 * MS);
	v6("ff02::1:ff00:7", snm);
	imc_ipoib_mgid_from_ipv6(snm, 0xFFFF, 2, &snm_mgid);
	assert_true(has_req(f, r0, UMAD_METHOD_SET, &snm_mgid,
			    IMC_JOIN_SENDONLY_FULL, 0));
	assert_int_equal(f->nsent, 1);
	assert_int_equal(f->sent[0].qpn, 0xFFFFFF);
	assert_true(imc_gid_equal(&f->sent[0].av.dgid, &snm_mgid));
	assert_int_equal(ipo_nd_parse(f->sent[0].data + 4,
				      f->sent[0].len - 4, &got), 0);
	assert_int_equal(got.type, IPO_ICMP6_NS);
	assert_memory_equal(got.dst, snm, 16);
	assert_true(got.has_lladdr);
	assert_int_equal(got.lladdr.qpn, OUR_QPN);
	assert_int_equal(stats(f).nd_tx, 1);
	/* The NA: the packet goes out on a fabricated AV. */
	memset(&nd, 0, sizeof(nd));
	nd.type = IPO_ICMP6_NA;
	nd.flags = IPO_NA_SOLICITED | IPO_NA_OVERRIDE;
	v6("fd00::7", nd.src);
	v6("fd00::1", nd.dst);
	v6("fd00::7", nd.target);
	nd.has_lladdr = true;
	nd.lladdr.qpn = p7.qpn;
	nd.lladdr.gid = p7.gid;
	rx_nd(f, &p7, &nd, NULL);
	assert_int_equal(f->nsent, 2);
	assert_fabricated(&f->sent[1], &p7);
	assert_int_equal(imc_get16(f->sent[1].data), IMC_ETHERTYPE_IPV6);
	assert_int_equal(f->ndlv, 0);
	/* An NS for our address: an NA, unicast, with our option. */
	memset(&nd, 0, sizeof(nd));
	nd.type = IPO_ICMP6_NS;
	v6("fd00::8", nd.src);
	v6("ff02::1:ff00:1", nd.dst);
	v6("fd00::1", nd.target);
	nd.has_lladdr = true;
	struct peer p8 = peer(8);
	nd.lladdr.qpn = p8.qpn;
	nd.lladdr.gid = p8.gid;
	rx_nd(f, &p8, &nd, &own_snm);
	assert_int_equal(f->nsent, 3);
	assert_fabricated(&f->sent[2], &p8);
	assert_int_equal(ipo_nd_parse(f->sent[2].data + 4,
				      f->sent[2].len - 4, &got), 0);
	assert_int_equal(got.type, IPO_ICMP6_NA);
	assert_int_equal(got.flags, IPO_NA_SOLICITED | IPO_NA_OVERRIDE);
	v6("fd00::1", nd.target);
	assert_memory_equal(got.target, nd.target, 16);
	assert_int_equal(got.lladdr.qpn, OUR_QPN);
	/* A multicast IPv6 packet for all-nodes reaches the host. */
	n = udp6(pkt, "fd00::8", "ff02::1", 4);
	rx_from(f, &p8, &all_mgid, IMC_ETHERTYPE_IPV6, pkt, n);
	assert_int_equal(f->ndlv, 1);
	assert_int_equal(stats(f).nd_rx, 2);
	/* Removing the address leaves its groups. */
	{
		struct imc_ip_addr a;

		assert_int_equal(imc_ip_addr_parse("fd00::1", &a, NULL), 0);
		r0 = f->nreqs;
		assert_int_equal(imc_ipoib_addr_del(f->ifc, &a), 0);
		assert_int_equal(imc_ipoib_addr_del(f->ifc, &a), -ENOENT);
		run_for(f, 10 * MS);
		assert_true(has_req(f, r0, UMAD_SA_METHOD_DELETE, &own_snm,
				    IMC_JOIN_FULL, 0));
		assert_true(has_req(f, r0, UMAD_SA_METHOD_DELETE, &all_mgid,
				    IMC_JOIN_FULL, 0));
	}
}

static void tweak_short_expiry(struct imc_ipoib_config *c)
{
	c->neigh_expiry = 5 * SEC;
}

static int setup_expiry(void **state)
{
	return setup_cfg(state, tweak_short_expiry);
}

static void test_expiry(void **state)
{
	struct fx *f = *state;
	struct peer p2 = peer(1);
	struct imc_ipoib_stats st;

	bring_up(f);
	rx_arp(f, &p2, IMC_ARP_OP_REQUEST, IP4(10, 0, 0, 1), true);
	st = stats(f);
	assert_int_equal(st.neighbours, 1);
	assert_int_equal(st.endpoints, 1);
	run_for(f, 4 * SEC);
	assert_int_equal(stats(f).neighbours, 1);
	run_for(f, 2 * SEC);
	st = stats(f);
	assert_int_equal(st.neighbours, 0);
	run_for(f, 10 * SEC);
	st = stats(f);
	assert_int_equal(st.endpoints, 0);
	assert_int_equal(st.expired, 2);
}

static void test_create_checks(void **state)
{
	struct fx *f = *state;
	struct imc_ipoib_config c = f->cfg;
	struct imc_ipoib_ops ops = { .send = op_send, .deliver = op_deliver };
	struct imc_ipoib *x = NULL;
	struct imc_ip_addr a;

	assert_int_equal(imc_ipoib_create(f->loop, f->mc, NULL, &c, NULL, &x),
			 -EINVAL);
	c.pkey = 0x8000;
	assert_int_equal(imc_ipoib_create(f->loop, f->mc, NULL, &c, &ops, &x),
			 -EINVAL);
	c = f->cfg;
	c.qpn = 0xFFFFFF;
	assert_int_equal(imc_ipoib_create(f->loop, f->mc, NULL, &c, &ops, &x),
			 -EINVAL);
	c = f->cfg;
	c.port_mtu = 9;
	assert_int_equal(imc_ipoib_create(f->loop, f->mc, NULL, &c, &ops, &x),
			 -EINVAL);
	assert_null(x);
	/* Addresses: duplicates, multicast, unspecified. */
	assert_int_equal(imc_ip_addr_parse("10.0.0.1", &a, NULL), 0);
	assert_int_equal(imc_ipoib_addr_add(f->ifc, &a, 24), 0);
	assert_int_equal(imc_ipoib_addr_add(f->ifc, &a, 24), -EEXIST);
	assert_int_equal(imc_ipoib_addr_add(f->ifc, &a, 33), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("224.0.0.1", &a, NULL), 0);
	assert_int_equal(imc_ipoib_addr_add(f->ifc, &a, 24), -EINVAL);
	assert_int_equal(imc_ip_addr_parse("::", &a, NULL), 0);
	assert_int_equal(imc_ipoib_addr_add(f->ifc, &a, 64), -EINVAL);
	assert_string_equal(imc_ipoib_state_str(IMC_IPOIB_UP), "up");
	assert_string_equal(imc_ipoib_drop_str(IMC_IPOIB_DROP_PKEY), "pkey");
}

/* After destroy returns, no op runs, even with answers in flight. */
static void test_destroy_with_requests_in_flight(void **state)
{
	struct fx *f = *state;
	unsigned calls;

	up(f);
	f->hold = true;
	run_for(f, 10 * MS);
	imc_ipoib_destroy(f->ifc);
	f->ifc = NULL;
	calls = f->carrier_calls;
	answer_all(f);
	run_for(f, 100 * MS);
	assert_int_equal(f->carrier_calls, calls);
	assert_int_equal(f->nsent, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bring_up, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_arp_resolves_and_flushes_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answers_arp_request,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_race_answer_waits_for_av,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_endpoint_from_receive,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_never_fabricates_multicast_av, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_arp_timeout_and_queue_bound, setup_fast_arp,
			teardown),
		cmocka_unit_test_setup_teardown(test_group_and_total_bounds,
						setup_total, teardown),
		cmocka_unit_test_setup_teardown(test_listen_joins_full_member,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sendonly_join_and_idle_leave, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sendonly_without_sa_capability, setup_no_sof,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_join_error_drops_and_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bcast_failure_backs_off,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_qkey_from_broadcast_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qkey_refused_backs_off,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_reregister_carrier_down_up, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_group_rejoined_before_bcast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_down_flushes_and_leaves,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_receive_checks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_nd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expiry, setup_expiry,
						teardown),
		cmocka_unit_test_setup_teardown(test_create_checks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_destroy_with_requests_in_flight, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
